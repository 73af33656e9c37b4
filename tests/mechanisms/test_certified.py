"""Certified Confident-GNMax (core.mechanisms.certified): guarantee arithmetic, the five steps,
the failure probability of the test, and an audit of the whole pipeline."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon
from scipy import stats

from core.mechanisms import certified as cert
from core.mechanisms import certified_params as cert_params
from core.mechanisms import BOTTOM, UNPROCESSED
from core.audit import audit
from core.errors import ParameterError


def confident_counts(m=20, k=250, n_classes=10, shaky=5):
    c = np.zeros((m, n_classes), dtype=np.int64)
    c[:, 0] = k
    c[:shaky, 0] = k - 10
    c[:shaky, 1] = 10
    return c


SMALL = {"threshold": 14.0, "sigma1": 3.0, "sigma2": 4.0, "order": 3.0, "beta": 0.1, "sigma_s": 3.0,
         "sigma_l": 0.5, "delta_prime": 0.01, "delta_dprime": 0.01, "delta_conversion": 0.01}


# ----------------------------------------------------------------------------- parameters


def test_parameters_validate():
    with pytest.raises(ParameterError, match="1/\\(2β\\)"):
        cert_params.CertifiedParameters(**{**SMALL, "beta": 0.2}, budget=1.0)  # λ = 3 ≥ 1/(2β) = 2.5
    with pytest.raises(ParameterError):
        cert_params.CertifiedParameters(**{**SMALL, "sigma_s": 0.0}, budget=1.0)
    with pytest.raises(ParameterError):
        cert_params.CertifiedParameters(**SMALL, budget=1.0, composition="best")
    with pytest.raises(ParameterError):
        cert_params.certified_parameters(epsilon=0.05, delta=1e-5, m=100, k=250, n_classes=10)


def test_guarantee_basic_is_the_design_formula():
    p = cert_params.CertifiedParameters(**SMALL, budget=1.0)
    g = p.guarantee()
    lam, beta = 3.0, 0.1
    orders = np.array([o for o in np.concatenate([np.arange(2.0, 64.0), np.geomspace(64, 512, 40),
                                                  (1 / (2 * beta)) * np.array([0.9, 0.95, 0.98, 0.99])])
                       if 1.01 < o < 1 / (2 * beta)])
    gnss = orders * math.exp(2 * beta) / 3.0**2 + (beta * orders - 0.5 * np.log(1 - 2 * orders * beta)) / (orders - 1)
    log_s = orders * beta**2 / (2 * 0.5**2)
    eps_test, _ = compute_epsilon(orders, gnss + log_s, 0.005)
    eps_b, _ = compute_epsilon([lam], [1.0], 0.005)
    assert g.epsilon == pytest.approx(eps_test + eps_b, rel=1e-12)
    assert g.delta == pytest.approx(0.005 + 0.005 + 0.01 + 0.01)
    rdp = cert_params.CertifiedParameters(**SMALL, budget=1.0, composition="rdp").guarantee()
    want, _ = compute_epsilon([lam], [float(gnss[orders == lam][0] + log_s[orders == lam][0]) + 1.0], 0.01)
    assert rdp.epsilon == pytest.approx(want, rel=1e-12) and rdp.delta == g.delta


@pytest.mark.parametrize("composition", cert_params.COMPOSITIONS)
@pytest.mark.parametrize("epsilon", [1.0, 2.0, 8.0])
def test_certified_parameters_meet_the_target(epsilon, composition):
    p = cert_params.certified_parameters(epsilon=epsilon, delta=1e-5, m=1000, k=250, n_classes=10, composition=composition)
    g = p.guarantee()
    assert g.epsilon <= epsilon + 1e-9 and g.epsilon >= 0.999 * epsilon
    assert g.delta == pytest.approx(1e-5)
    assert p.order < 1 / (2 * p.beta) and p.budget > 0
    assert (p.threshold, p.sigma1, p.sigma2) == (200.0, 150.0, 40.0)


# ----------------------------------------------------------------------------- the mechanism


def test_pass_releases_confident_gnmax_labels():
    from core.mechanisms.gaussian import confident_gnmax_label

    counts = confident_counts()
    p = cert_params.certified_parameters(epsilon=8.0, delta=1e-5, m=20, k=250, n_classes=10)
    r = cert.certified_confident_gnmax_label(counts, params=p, rng=123)
    assert r.mechanism == "certified-gnmax" and r.feasible and r.params["passed"]
    # replay the stream: two test normals, then Confident-GNMax's own draws
    gen = np.random.default_rng(123)
    gen.standard_normal(None), gen.standard_normal(None)
    ref = confident_gnmax_label(counts, threshold=p.threshold, sigma1=p.sigma1, sigma2=p.sigma2,
                                delta=r.delta, rng=gen)
    assert np.array_equal(r.labels, ref.labels)
    assert (r.epsilon, r.delta) == (p.guarantee().epsilon, p.guarantee().delta)
    assert r.epsilon_data_dependent is not None and r.epsilon_data_dependent > 0


def test_the_votes_analysis_is_done_once_per_votes_and_parameters(monkeypatch):
    """E(D) and S(D) are deterministic: a run asked again reads them, its noise is drawn afresh."""
    counts = confident_counts(m=21)  # a vote table no other test uses
    p = cert_params.certified_parameters(epsilon=8.0, delta=1e-5, m=21, k=250, n_classes=10)
    analyses = []
    real = cert.certified_diagnostics
    monkeypatch.setattr(cert, "certified_diagnostics", lambda c, q: analyses.append(1) or real(c, q))
    first = cert.certified_confident_gnmax_label(counts, params=p, rng=7)
    again = cert.certified_confident_gnmax_label(counts.copy(), params=p, rng=7)  # equal votes, another array
    other = cert.certified_confident_gnmax_label(counts, params=p, rng=8)
    assert len(analyses) == 1
    assert np.array_equal(first.labels, again.labels) and first.params == again.params
    assert not np.array_equal(first.labels, other.labels)  # a new draw each run
    d = real(counts, p)
    assert cert._e_and_s(counts, p) == (d.rdp_data_dependent, d.smooth_sensitivity)
    changed = counts.copy()
    changed[0, :2] = [239, 11]  # one teacher moved: another analysis
    cert.certified_confident_gnmax_label(changed, params=p, rng=7)
    sampler = cert.CertifiedSampler(p)
    sampler(counts, 3, 0)  # the audit's sampler reads the same memo
    assert len(analyses) == 2


def test_same_result_from_epsilon_and_from_params():
    counts = confident_counts()
    p = cert_params.certified_parameters(epsilon=8.0, delta=1e-5, m=20, k=250, n_classes=10)
    a = cert.certified_confident_gnmax_label(counts, epsilon=8.0, delta=1e-5, rng=5)
    b = cert.certified_confident_gnmax_label(counts, params=p, rng=5)
    assert np.array_equal(a.labels, b.labels) and a.params == b.params
    with pytest.raises(ParameterError):
        cert.certified_confident_gnmax_label(counts, params=p, epsilon=8.0, rng=5)
    with pytest.raises(ParameterError):
        cert.certified_confident_gnmax_label(counts, params=p, sigma2=1.0, rng=5)
    with pytest.raises(ParameterError):
        cert.certified_confident_gnmax_label(counts, rng=5)


def test_fail_releases_nothing_and_says_so():
    counts = confident_counts()
    p = cert_params.CertifiedParameters(threshold=200, sigma1=150, sigma2=40, order=7.0, budget=1e-4, beta=0.4 / 7,
                                 sigma_s=8.0, sigma_l=0.2, delta_prime=1e-6, delta_dprime=1e-6, delta_conversion=1e-6)
    r = cert.certified_confident_gnmax_label(counts, params=p, rng=0)
    assert not r.feasible and not r.params["passed"]
    assert np.all(r.labels == UNPROCESSED) and r.n_unprocessed == counts.shape[0] and r.n_answered == 0
    assert "test failed" in r.reason and "ε_test" in r.reason
    assert r.epsilon == p.guarantee().epsilon and r.epsilon_data_dependent is None


def test_params_hold_only_public_and_released_values():
    counts = confident_counts()
    p = cert_params.certified_parameters(epsilon=8.0, delta=1e-5, m=20, k=250, n_classes=10)
    r = cert.certified_confident_gnmax_label(counts, params=p, rng=1)
    # the test's outcome and its noisy value (a function of the released ℓ and Ẽ, charged in ε_test)
    released = {"passed", "test_value"}
    public = set(p.public_dict()) | {"epsilon_test", "epsilon_data_independent", "delta_target", "m", "k", "n_classes", "noise"}
    assert set(r.params) == released | public
    diag = cert.certified_diagnostics(counts, p)
    private = {diag.rdp_data_dependent, diag.smooth_sensitivity}
    assert not private & {v for v in r.params.values() if isinstance(v, float)}
    assert r.params["passed"] == (r.params["test_value"] <= p.budget)


# ----------------------------------------------------------------------------- failure probability


@pytest.mark.parametrize("shape", ["small", "pate"])
def test_pass_rate_when_budget_exceeded_is_below_delta_prime_plus_dprime(shape):
    """Histograms with E(D) > B: the test passes with probability ≤ δ′ + δ″ = 0.1.

    20,000 runs of steps 3–5 (the sampler uses the mechanism's own `_test`); the
    assertion fails by chance (if the true rate is 0.1) with probability ≤ 1e-6 by the
    binomial tail."""
    if shape == "small":
        counts = np.array([[16, 4], [12, 8], [19, 1]])
        base = {**SMALL, "delta_prime": 0.05, "delta_dprime": 0.05}
    else:
        counts = confident_counts(m=50, shaky=25)
        base = {"threshold": 200.0, "sigma1": 150.0, "sigma2": 40.0, "order": 7.0, "beta": 0.4 / 7,
                "sigma_s": 2.0, "sigma_l": 0.3, "delta_prime": 0.05, "delta_dprime": 0.05,
                "delta_conversion": 1e-6}
    probe = cert_params.CertifiedParameters(**base, budget=1.0)
    diag = cert.certified_diagnostics(counts, probe)
    assert diag.smooth_sensitivity > 0
    budget = diag.rdp_data_dependent * (1 - 1e-9)  # E(D) just above B: the hardest case
    p = cert_params.CertifiedParameters(**base, budget=budget)
    n = 20_000
    out = cert.CertifiedSampler(p)(counts, n, np.random.default_rng(2024))
    passes = int(np.count_nonzero(out[:, 0] != UNPROCESSED))
    limit = int(stats.binom.isf(1e-6, n, 0.1))  # P[Bin(n, 0.1) > limit] ≤ 1e-6
    assert passes <= limit, (passes, limit)
    # and the real function agrees with the sampler's decision rule on a few runs
    for seed in range(5):
        r = cert.certified_confident_gnmax_label(counts, params=p, rng=seed)
        g = np.random.default_rng(seed)
        passed, *_ = cert._test(diag.rdp_data_dependent, diag.smooth_sensitivity, p, g)
        assert r.params["passed"] == bool(passed)


def test_sampler_matches_real_function_marginals():
    counts = np.array([[16, 4], [12, 8], [19, 1]])
    p = cert_params.CertifiedParameters(**SMALL, budget=6.0)
    s = cert.CertifiedSampler(p)
    fast = s(counts, 4000, np.random.default_rng(0))
    real = np.array([cert.certified_confident_gnmax_label(counts, params=p, rng=i).labels for i in range(400)])
    for col in range(counts.shape[0]):
        for value in (UNPROCESSED, BOTTOM, 0, 1):
            a, b = np.mean(fast[:, col] == value), np.mean(real[:, col] == value)
            assert abs(a - b) < 0.1, (col, value, a, b)
    assert s.claim(counts) == (p.guarantee().epsilon, p.guarantee().delta)


# ----------------------------------------------------------------------------- audit


def test_audit_finds_no_violation():
    d = np.array([[16, 4], [12, 8], [15, 5]])
    d2 = d.copy()
    d2[:, 0] -= 1  # one teacher switches its vote from class 0 to class 1 on every query
    d2[:, 1] += 1
    p = cert_params.CertifiedParameters(**SMALL, budget=6.0)
    sampler = cert.CertifiedSampler(p)
    rates = [np.mean(sampler(x, 20_000, np.random.default_rng(1))[:, 0] != UNPROCESSED) for x in (d, d2)]
    assert 0.05 < min(rates) and max(rates) < 0.95  # the test passes sometimes on both inputs
    eps, delta = sampler.claim(d)
    res = audit(sampler, d, d2, claimed_epsilon=eps, claimed_delta=delta, n_trials=200_000, rng=7,
                name="certified-gnmax")
    assert res.passed, res.summary()


# ----------------------------------------------------------------------------- the test, for teaching


def test_pass_probability_matches_the_drawn_test():
    """The quadrature's P[pass] against 20,000 draws of the test (6 binomial standard deviations: false failure
    below 1e-8), on votes where the test passes about half the time and where it always passes."""
    counts = confident_counts(m=200, k=250, shaky=60)
    for eps in (4.0, 8.0, 16.0):
        p = cert_params.certified_parameters(epsilon=eps, delta=1e-5, m=200, k=250, n_classes=10)
        pic = cert.certified_test_picture(counts, p, draws=20_000, rng=7)
        measured = float(np.mean(pic.values <= pic.budget))
        sd = math.sqrt(max(pic.p_pass * (1 - pic.p_pass), 1e-12) / 20_000)
        assert abs(measured - pic.p_pass) <= 6 * sd + 1e-4, (eps, measured, pic.p_pass)
        diag = cert.certified_diagnostics(counts, p)
        assert pic.cost == pytest.approx(diag.rdp_data_dependent) and pic.budget == p.budget


def test_a_run_says_why_it_released_or_not_in_plain_words():
    counts = confident_counts()
    passed = cert.certified_confident_gnmax_label(counts, epsilon=8.0, delta=1e-5, rng=1)
    p = cert_params.CertifiedParameters(threshold=200, sigma1=150, sigma2=40, order=7.0, budget=1e-4, beta=0.4 / 7,
                                        sigma_s=8.0, sigma_l=0.2, delta_prime=1e-6, delta_dprime=1e-6,
                                        delta_conversion=1e-6)
    failed = cert.certified_confident_gnmax_label(counts, params=p, rng=0)
    assert passed.params["passed"] and not failed.params["passed"]
    yes, no = cert.certified_outcome_words(passed), cert.certified_outcome_words(failed)
    assert yes.startswith("**Released.**") and f"{passed.params['test_value']:.3g}" in yes
    assert no.startswith("**Nothing released.**") and "raise ε" in no
    for text in (yes, no):  # student words: no code names, orders or section numbers
        assert not any(w in text for w in ("GNSS", "RDP", "order", "§", "σ_s", "log-S"))
