"""GNMax and Confident-GNMax (core.mechanisms.gaussian) and their audits (core.audit.gaussian).

How these tests can fail by chance
----------------------------------
* The replay tests compare the vectorized functions with plain per-query loops on the
  same random stream: they are exact, never statistical.
* Audits (``core.audit.audit``) run at ``confidence = 1 - 1e-6``: for a mechanism that
  truly is (ε, δ)-DP at the claim, ``ε_lb > ε`` has probability at most 1e-6 per audit
  (union of the four one-sided Clopper–Pearson bounds).  So each "real sampler passes"
  assertion fails by chance with probability ≤ 1e-6 (and the seeds are fixed).
* "Broken variant caught" assertions: with 1,000,000 trials per input (500,000 in the
  estimation half) the event {label = 1} (GNMax, halved noise) or {answered}
  (Confident-GNMax, threshold on the margin) has probabilities p (favoured input) and
  q (the other) computed in closed form next to each test.  Even with the estimation
  counts at their 1e-7 binomial tails (p's count low, q's count high) the audited bound
  exceeds the claim (values in the comments), so a failure to catch has probability at
  most 2e-7 plus the chance that the selection half picks another event, which needs a
  deviation of many standard deviations (far below 1e-7): ≤ 1e-6 in all.
"""

from __future__ import annotations


import numpy as np
import pytest

from core.accounting import rdp
from core.mechanisms import BOTTOM, UNPROCESSED, LabelingResult
from core.audit import audit, check_neighbouring_counts, neighbouring_pairs
from core.audit.gaussian import (
    BrokenThresholdConfidentGNMaxSampler,
    ConfidentGNMaxSampler,
    GNMaxSampler,
    HalvedNoiseGNMaxSampler,
)
from core.errors import DataError, ParameterError
import core.mechanisms.gaussian as gaussian
from core.mechanisms.gaussian import confident_gnmax_label, gnmax_label

CONF = 1 - 1e-6


def votes(m: int, k: int = 50, c: int = 4, seed: int = 0) -> np.ndarray:
    """Vote counts with a mix of confident queries and near-ties."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(c, 0.4), size=m)
    return np.stack([rng.multinomial(k, row) for row in p])


# ---------------------------------------------------------------------------- reference loops


def loop_argmax(row) -> int:
    best = 0
    for c in range(1, len(row)):
        if row[c] > row[best]:
            best = c
    return best


def loop_gnmax(counts, sigma, seed):
    gen = np.random.default_rng(seed)
    return np.array([loop_argmax(counts[i] + gen.normal(0.0, sigma, counts.shape[1])) for i in range(counts.shape[0])])


def loop_confident(counts, t, s1, s2, seed, *, c1=None, c2=None, budget=None, order=None):
    """Per-query Confident-GNMax; with ``budget`` a Rényi filter (charges c1 per processed
    query, c2 per answer, halt before a query whose worst case would exceed the budget)."""
    m, C = counts.shape
    gen = np.random.default_rng(seed)
    z1 = [gen.normal(0.0, s1) for _ in range(m)]  # all threshold noises first
    z2 = [gen.normal(0.0, s2, C) for _ in range(m)]  # then all answer noises
    labels = np.full(m, UNPROCESSED)
    n_proc = n_ans = 0
    last = halted = None
    for i in (range(m) if order is None else order):
        if budget is not None and not ((n_proc + 1) * c1 + (n_ans + 1) * c2 <= budget):
            halted = last
            break
        n_proc += 1
        last = i
        if max(counts[i]) + z1[i] >= t:
            labels[i] = loop_argmax(counts[i] + z2[i])
            n_ans += 1
        else:
            labels[i] = BOTTOM
    return labels, halted, n_proc, n_ans


# ---------------------------------------------------------------------------- GNMax


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_gnmax_replays_plain_loop(seed):
    counts = votes(300, seed=seed)
    r = gnmax_label(counts, sigma=3.0, delta=1e-5, rng=seed)
    np.testing.assert_array_equal(r.labels, loop_gnmax(counts, 3.0, seed))
    assert isinstance(r, LabelingResult) and r.mechanism == "gnmax"
    assert r.labels.dtype == np.int64 and r.labels.shape == (300,)
    assert r.n_answered == 300 and r.n_bottom == 0 and r.n_unprocessed == 0 and r.halted_at is None


def test_gnmax_replays_across_noise_blocks(monkeypatch):
    monkeypatch.setattr(gaussian, "_BLOCK_ROWS", 64)  # several blocks: same stream as one draw
    counts = votes(200, seed=3)
    np.testing.assert_array_equal(gnmax_label(counts, sigma=2.0, delta=1e-5, rng=5).labels,
                                  loop_gnmax(counts, 2.0, 5))


def test_gnmax_guarantee_and_params():
    counts = votes(100)
    r = gnmax_label(counts, sigma=40.0, delta=1e-5, rng=0)
    g = rdp.gnmax_guarantee(40.0, n_answers=100, delta=1e-5)
    assert r.epsilon == g.epsilon == pytest.approx(1.3565, abs=1e-3) and r.delta == 1e-5  # exact Gaussian (RDP: 1.478)
    assert r.accounting == g.detail
    assert r.params == {"sigma": 40.0, "delta_target": 1e-5, "m": 100, "k": 50, "n_classes": 4,
                        "order": 13.0, "rdp_at_order": pytest.approx(0.8125), "noise": "Gaussian"}


def test_gnmax_ties_go_to_smallest_index(monkeypatch):
    monkeypatch.setattr(gaussian.noise, "gaussian", lambda scale, size=None, rng=None: np.zeros(size))
    counts = np.array([[3, 3, 0], [0, 3, 3], [3, 0, 3], [2, 2, 2], [0, 1, 5]])
    np.testing.assert_array_equal(gnmax_label(counts, sigma=1.0, delta=1e-5, rng=0).labels, [0, 1, 0, 0, 2])
    r = confident_gnmax_label(counts, threshold=3, sigma1=1.0, sigma2=1.0, delta=1e-5, rng=0)
    np.testing.assert_array_equal(r.labels, [0, 1, 0, BOTTOM, 2])  # top count 3 >= 3 passes


def test_gnmax_low_noise_is_plurality():
    counts = votes(500, seed=2)
    r = gnmax_label(counts, sigma=1e-9, delta=1e-5, rng=0)
    top = counts.max(axis=1, keepdims=True)
    assert np.all(counts[np.arange(500), r.labels] == top[:, 0])


@pytest.mark.parametrize("kwargs, err, match", [
    (dict(sigma=0.0), ParameterError, "sigma"),
    (dict(sigma=-1.0), ParameterError, "sigma"),
    (dict(sigma=float("inf")), ParameterError, "sigma"),
    (dict(sigma="2"), ParameterError, "sigma"),
    (dict(sigma=1.0, delta=0.0), ParameterError, "delta"),
    (dict(sigma=1.0, delta=1.0), ParameterError, "delta"),
    (dict(sigma=1.0, rng="x"), ParameterError, "rng"),
])
def test_gnmax_validation(kwargs, err, match):
    kwargs = {"delta": 1e-5, **kwargs}
    with pytest.raises(err, match=match):
        gnmax_label(votes(5), **kwargs)


def test_counts_validation():
    with pytest.raises(DataError):
        gnmax_label(np.array([1, 2, 3]), sigma=1.0, delta=1e-5)
    with pytest.raises(DataError):
        gnmax_label(np.array([[1, 2], [1, 1]]), sigma=1.0, delta=1e-5)
    with pytest.raises(DataError):
        confident_gnmax_label(np.array([[1.5, 0.5]]), threshold=1, sigma1=1.0, sigma2=1.0, delta=1e-5)
    with pytest.raises(TypeError):
        gnmax_label(votes(5), 1.0, 1e-5)  # privacy parameters are keyword-only


# ---------------------------------------------------------------------------- Confident-GNMax


@pytest.mark.parametrize("seed", [0, 4])
def test_confident_fixed_replays_plain_loop(seed):
    counts = votes(400, seed=seed)
    r = confident_gnmax_label(counts, threshold=30, sigma1=6.0, sigma2=3.0, delta=1e-5, rng=seed)
    ref, halted, n_proc, n_ans = loop_confident(counts, 30, 6.0, 3.0, seed)
    np.testing.assert_array_equal(r.labels, ref)
    assert r.mechanism == "confident-gnmax" and r.halted_at is None and n_proc == 400
    assert r.n_answered == n_ans and 0 < r.n_answered < 400 and r.n_bottom == 400 - n_ans
    assert r.n_unprocessed == 0
    g = rdp.confident_gnmax_guarantee(6.0, 3.0, n_queries=400, delta=1e-5)
    assert (r.epsilon, r.delta, r.accounting) == (g.epsilon, g.delta, g.detail)
    p = r.params
    assert p["accounting"] == "fixed" and p["budget"] is None and p["rdp_spent"] is None
    assert (p["threshold"], p["sigma1"], p["sigma2"], p["m"], p["k"], p["noise"]) == (30.0, 6.0, 3.0, 400, 50, "Gaussian")
    assert p["order"] == g.parts["order"] and p["delta_target"] == 1e-5


def test_confident_with_an_ordering_and_fixed_accounting_is_unchanged():
    counts = votes(200, seed=1)
    order = np.random.default_rng(9).permutation(200)
    a = confident_gnmax_label(counts, threshold=30, sigma1=6.0, sigma2=3.0, delta=1e-5, rng=2)
    b = confident_gnmax_label(counts, threshold=30, sigma1=6.0, sigma2=3.0, delta=1e-5, rng=2, ordering=order)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert b.params["ordering"] == "given"


@pytest.mark.parametrize("seed, budget", [(0, 1.5), (1, 5.0), (2, 12.0)])
def test_filter_replays_loop_and_halts_exactly(seed, budget):
    counts = votes(1000, seed=seed)
    kw = dict(threshold=30, sigma1=6.0, sigma2=3.0, delta=1e-5, accounting="filter", order=8.0, budget=budget)
    r = confident_gnmax_label(counts, rng=seed, **kw)
    c1, c2 = r.params["charge_threshold"], r.params["charge_answer"]
    assert c1 == 8.0 / 72.0 and c2 == 8.0 / 9.0
    ref, halted, n_proc, n_ans = loop_confident(counts, 30, 6.0, 3.0, seed, c1=c1, c2=c2, budget=budget)
    np.testing.assert_array_equal(r.labels, ref)
    assert r.halted_at == halted is not None  # these budgets are too small for 1000 queries
    assert r.n_unprocessed == 1000 - n_proc and r.n_answered == n_ans
    assert np.all(r.labels[: r.halted_at + 1] != UNPROCESSED) and np.all(r.labels[r.halted_at + 1:] == UNPROCESSED)
    spent = r.params["rdp_spent"]
    assert spent == pytest.approx(n_proc * c1 + n_ans * c2) and spent <= budget  # never exceeds
    assert (n_proc + 1) * c1 + (n_ans + 1) * c2 > budget  # the next query could have exceeded it
    g = rdp.filter_guarantee(budget, order=8.0, delta=1e-5)
    assert r.epsilon == g.epsilon and r.params["budget"] == budget and r.params["accounting"] == "filter"
    assert "halted" in r.accounting


def test_filter_least_confident_first_ordering():
    counts = votes(600, seed=5)
    # a public ordering, e.g. from a student's confidence on the public queries
    student_confidence = np.random.default_rng(11).uniform(size=600)
    order = np.argsort(student_confidence, kind="stable")
    kw = dict(threshold=30, sigma1=6.0, sigma2=3.0, delta=1e-5, accounting="filter", order=8.0, budget=3.0)
    r = confident_gnmax_label(counts, rng=3, ordering=order, **kw)
    ref, halted, n_proc, n_ans = loop_confident(counts, 30, 6.0, 3.0, 3, c1=r.params["charge_threshold"],
                                                c2=r.params["charge_answer"], budget=3.0, order=order)
    np.testing.assert_array_equal(r.labels, ref)
    assert r.halted_at == halted == order[n_proc - 1]
    processed = np.flatnonzero(r.labels != UNPROCESSED)
    np.testing.assert_array_equal(np.sort(processed), np.sort(order[:n_proc]))  # a prefix of the order
    assert 0 < n_proc < 600


def test_filter_default_budget_never_halts_and_matches_fixed():
    counts = votes(500, seed=6)
    kw = dict(threshold=30, sigma1=6.0, sigma2=3.0, delta=1e-5, rng=8)
    fixed = confident_gnmax_label(counts, **kw)
    filt = confident_gnmax_label(counts, accounting="filter", **kw)
    np.testing.assert_array_equal(fixed.labels, filt.labels)
    assert filt.halted_at is None and filt.n_unprocessed == 0
    assert filt.params["order"] == fixed.params["order"]
    assert filt.params["budget"] == 500 * filt.params["charge_threshold"] + 500 * filt.params["charge_answer"]
    # the filter's RDP budget converts like the fixed run's RDP curve; the fixed run's own
    # guarantee is the exact Gaussian one, below it
    assert filt.epsilon == pytest.approx(rdp.confident_gnmax_guarantee(6.0, 3.0, n_queries=500, delta=1e-5).parts["epsilon_rdp"], rel=1e-12)
    assert fixed.epsilon < filt.epsilon
    assert filt.params["rdp_spent"] <= filt.params["budget"]


def test_filter_budget_from_target_epsilon():
    counts = votes(2000, seed=7)
    rho = rdp.filter_budget_for_epsilon(2.0, order=16.0, delta=1e-5)
    r = confident_gnmax_label(counts, threshold=30, sigma1=20.0, sigma2=8.0, delta=1e-5,
                              accounting="filter", order=16.0, budget=rho, rng=0)
    assert r.epsilon == pytest.approx(2.0, rel=1e-12) and r.params["rdp_spent"] <= rho


def test_confident_infeasible_threshold_is_flagged():
    r = confident_gnmax_label(votes(20), threshold=100, sigma1=5.0, sigma2=3.0, delta=1e-5, rng=0)
    assert not r.feasible and "threshold" in r.reason and r.n_answered <= 20


@pytest.mark.parametrize("kwargs, match", [
    (dict(threshold=float("nan")), "threshold"),
    (dict(sigma1=0.0), "sigma1"),
    (dict(sigma2=-3.0), "sigma2"),
    (dict(delta=2.0), "delta"),
    (dict(accounting="adaptive"), "accounting"),
    (dict(order=8.0), "filter"),
    (dict(budget=1.0), "filter"),
    (dict(accounting="filter", order=1.0), "order"),
    (dict(accounting="filter", budget=-1.0), "budget"),
    (dict(accounting="filter", order=8.0, budget=0.1), "charge of one query"),
    (dict(ordering=[0, 1, 2]), "ordering"),
    (dict(ordering=np.zeros(10, dtype=int)), "exactly once"),
    (dict(ordering=np.arange(10.0)), "ordering"),
])
def test_confident_validation(kwargs, match):
    base = dict(threshold=30, sigma1=6.0, sigma2=3.0, delta=1e-5)
    with pytest.raises(ParameterError, match=match):
        confident_gnmax_label(votes(10), **{**base, **kwargs})


# ---------------------------------------------------------------------------- audit samplers


def test_samplers_replay_the_real_functions():
    counts = votes(30, seed=2)
    for seed in range(3):
        real = gnmax_label(counts, sigma=2.0, delta=1e-5, rng=seed).labels
        np.testing.assert_array_equal(GNMaxSampler(2.0, 1e-5)(counts, 1, seed)[0], real)
        real = confident_gnmax_label(counts, threshold=30, sigma1=6.0, sigma2=3.0, delta=1e-5, rng=seed).labels
        np.testing.assert_array_equal(ConfidentGNMaxSampler(30, 6.0, 3.0, 1e-5)(counts, 1, seed)[0], real)
    assert GNMaxSampler(2.0, 1e-5).claim(counts) == (rdp.gnmax_guarantee(2.0, n_answers=30, delta=1e-5).epsilon, 1e-5)
    out = ConfidentGNMaxSampler(30, 6.0, 3.0, 1e-5)(counts, 7, 0)
    assert out.shape == (7, 30) and out.dtype == np.int64 and set(np.unique(out)) <= {BOTTOM, 0, 1, 2, 3}


def test_broken_threshold_statistics():
    counts = np.array([[13, 7, 0], [5, 5, 0]])
    s = BrokenThresholdConfidentGNMaxSampler(5, 1.0, 1.0, 1e-5)
    np.testing.assert_array_equal(s._tested(counts), [6, 0])
    s = BrokenThresholdConfidentGNMaxSampler(5, 1.0, 1.0, 1e-5, statistic="second_top")
    np.testing.assert_array_equal(s._tested(counts), [7, 5])
    with pytest.raises(ParameterError):
        BrokenThresholdConfidentGNMaxSampler(5, 1.0, 1.0, 1e-5, statistic="mean")


# The tail pair: one query, k = 20, two classes; the changed teacher moves from the top
# class to the runner-up (top 13 -> 12, margin 6 -> 4, count vector L2² = 2).
TAIL_A = np.array([[13, 7]])
TAIL_B = np.array([[12, 8]])


def answered(out):
    return (out >= 0).sum(axis=1)


def label_one(out):
    return (out == 1).sum(axis=1)


def test_real_gnmax_passes_the_audit():
    s = GNMaxSampler(2.5, 1e-5)
    check_neighbouring_counts(TAIL_A, TAIL_B)
    pairs = [(p.a, p.b) for p in neighbouring_pairs(20, distance=1, n_classes=3, n_queries=3)]
    for i, (a, b) in enumerate(pairs + [(TAIL_A, TAIL_B)]):
        eps, delta = s.claim(a)
        res = audit(s, a, b, claimed_epsilon=eps, claimed_delta=delta, n_trials=200_000,
                    confidence=CONF, rng=100 + i, name="gnmax")
        assert res.passed, res.summary()  # false failure <= 1e-6 (module docstring)


def test_halved_noise_gnmax_is_caught():
    # Claimed σ = 2.5 (one answer): ε = 2.288 at δ = 1e-5 (exact Gaussian; RDP: 2.485).  Noise used σ/2 = 1.25, so the
    # noisy difference top − runner-up has sd 1.25·√2: P[label 1] = Φ̄(6/1.768) = 3.4e-4 on
    # TAIL_A and Φ̄(4/1.768) = 0.0118 on TAIL_B.  Expected ε_lb ≈ 3.11; with both estimation
    # counts at their 1e-7 binomial tails ε_lb = 2.74 > 2.288 (miss probability <= 1e-6).
    s = HalvedNoiseGNMaxSampler(2.5, 1e-5)
    eps, delta = s.claim(TAIL_A)
    assert eps == pytest.approx(2.2884, abs=1e-3)
    res = audit(s, TAIL_A, TAIL_B, claimed_epsilon=eps, claimed_delta=delta, n_trials=1_000_000,
                confidence=CONF, rng=1, statistic=label_one, name="gnmax halved noise")
    assert not res.passed and res.epsilon_lower_bound > eps, res.summary()
    # the real mechanism on the same pair and trials: no violation (false failure <= 1e-6)
    real = GNMaxSampler(2.5, 1e-5)
    res = audit(real, TAIL_A, TAIL_B, claimed_epsilon=eps, claimed_delta=delta, n_trials=1_000_000,
                confidence=CONF, rng=1, statistic=label_one, name="gnmax")
    assert res.passed, res.summary()


def test_real_confident_gnmax_passes_the_audit():
    s = ConfidentGNMaxSampler(10, 1.75, 50.0, 1e-5)
    pairs = [(p.a, p.b) for p in neighbouring_pairs(20, distance=1, n_classes=3, n_queries=3)]
    for i, (a, b) in enumerate(pairs + [(TAIL_A, TAIL_B)]):
        eps, delta = s.claim(a)
        res = audit(s, a, b, claimed_epsilon=eps, claimed_delta=delta, n_trials=200_000,
                    confidence=CONF, rng=200 + i, name="confident-gnmax")
        assert res.passed, res.summary()  # false failure <= 1e-6 each
    eps, delta = s.claim(TAIL_A)
    res = audit(s, TAIL_A, TAIL_B, claimed_epsilon=eps, claimed_delta=delta, n_trials=1_000_000,
                confidence=CONF, rng=3, statistic=answered, name="confident-gnmax")
    assert res.passed, res.summary()


def test_threshold_on_the_margin_is_caught():
    # Claimed (σ1 = 1.75, σ2 = 50, t = 10, one query): ε = 2.318 at δ = 1e-5 (exact Gaussian).  The broken
    # test reads the margin (6 on TAIL_A, 4 on TAIL_B; sensitivity 2):
    # P[answered] = Φ̄((10 − 6)/1.75) = 0.0111 on A and Φ̄(6/1.75) = 3.0e-4 on B.
    # Expected ε_lb ≈ 3.15; with the estimation counts at their 1e-7 binomial tails
    # ε_lb = 2.77 > 2.318 (miss probability <= 1e-6).
    s = BrokenThresholdConfidentGNMaxSampler(10, 1.75, 50.0, 1e-5, statistic="margin")
    eps, delta = s.claim(TAIL_A)
    assert eps == pytest.approx(2.3177, abs=1e-3)
    res = audit(s, TAIL_A, TAIL_B, claimed_epsilon=eps, claimed_delta=delta, n_trials=1_000_000,
                confidence=CONF, rng=4, statistic=answered, name="threshold on margin")
    assert not res.passed and res.epsilon_lower_bound > eps, res.summary()


def test_threshold_on_the_second_top_count_is_not_a_privacy_bug():
    # The runner-up count moves by at most 1 when one teacher changes its vote (every
    # order statistic does), so this variant keeps the claimed α/(2σ1²): it is a utility
    # bug, not a privacy bug, and the audit must not flag it (false failure <= 1e-6).
    s = BrokenThresholdConfidentGNMaxSampler(5, 1.75, 50.0, 1e-5, statistic="second_top")
    a, b = np.array([[12, 8]]), np.array([[11, 9]])
    eps, delta = s.claim(a)
    res = audit(s, a, b, claimed_epsilon=eps, claimed_delta=delta, n_trials=1_000_000,
                confidence=CONF, rng=5, statistic=answered, name="threshold on second top")
    assert res.passed, res.summary()
