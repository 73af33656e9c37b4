"""Accounting: hand-computed values, an independent closed form for optimal composition,
and the calibrations' guarantees (docs/design.md §3)."""

import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln

from core import accounting as A
from core.accounting import btt as accounting_btt, composition
from core import noise
from core.errors import ParameterError


def test_paper_calibration_hand_values():
    # λ = sqrt(32·10·ln(2/1e-5)) / 1 = sqrt(320·ln(2e5)) = sqrt(320·12.206) = 62.498
    lam = float(A.btt_noise_scale(10, 1.0, 1e-5))
    assert lam == pytest.approx(math.sqrt(320 * math.log(2e5)), rel=1e-12)
    assert lam == pytest.approx(62.50, abs=0.01)
    # w = 2λ·ln(2·1000/1e-5) = 2·62.498·ln(2e8) = 124.995·19.114 = 2389.1
    w = float(A.btt_threshold(lam, 1000, 1e-5))
    assert w == pytest.approx(2389.1, abs=0.1)
    cal = A.calibrate_btt(1.0, delta=1e-5, T=10, m=1000, calibration="paper")
    assert cal.noise_scale == pytest.approx(lam) and cal.threshold == pytest.approx(w)
    # With the paper's constants the exact guarantee is below the target.
    assert cal.epsilon < 1.0 and cal.delta <= 1e-5 * (1 + 1e-12)


def test_vectorized_paper_formulas():
    lam = A.btt_noise_scale(np.array([10, 20]), np.array([1.0, 2.0]), 1e-5)
    assert lam.shape == (2,)
    assert lam[1] == pytest.approx(lam[0] * math.sqrt(2) / 2)


def test_pate_simple_hand_values():
    # 4·100·0.05² + 2·0.05·sqrt(2·100·ln(1e5)) = 1 + 0.1·sqrt(2302.585) = 1 + 4.7985 = 5.7985
    assert A.pate_simple_epsilon(0.05, n_answers=100, delta=1e-5) == pytest.approx(5.7985, abs=1e-4)
    # 4·1000·0.0025 + 0.1·sqrt(2000·ln(1e6)) = 10 + 0.1·166.22 = 26.62
    assert A.pate_simple_epsilon(0.05, n_answers=1000, delta=1e-6) == pytest.approx(26.62, abs=0.01)


def test_pate_gamma_for_epsilon_inverts_the_simple_bound():
    # Hand value: ε = 5.7985 at T = 100, δ = 1e-5 is reached at γ = 0.05 (see above).
    assert A.pate_gamma_for_epsilon(5.798526, n_answers=100, delta=1e-5) == pytest.approx(0.05, rel=1e-6)
    for eps, T, delta in [(1e-6, 10, 0.1), (0.5, 1, 1e-5), (8.0, 2000, 1e-6), (200.0, 5, 1e-3)]:
        gamma = A.pate_gamma_for_epsilon(eps, n_answers=T, delta=delta)
        assert A.pate_simple_epsilon(gamma, n_answers=T, delta=delta) == pytest.approx(eps, rel=1e-9)
    grid = A.pate_gamma_for_epsilon(np.array([0.5, 1.0, 2.0]), n_answers=100, delta=1e-5)
    assert np.all(np.diff(grid) > 0)
    with pytest.raises(ParameterError, match="epsilon"):
        A.pate_gamma_for_epsilon(0.0, n_answers=100, delta=1e-5)
    # lnmax_label at that γ reports a guarantee within the target
    from core.mechanisms import lnmax_label

    counts = np.tile([30, 10, 10], (100, 1))
    res = lnmax_label(counts, gamma=A.pate_gamma_for_epsilon(2.0, n_answers=100, delta=1e-5), delta=1e-5, rng=0)
    assert res.epsilon <= 2.0 + 1e-9


def test_lnmax_guarantee_is_the_smaller_accountant():
    # γ = 0.05, m = 100, δ = 1e-5: PATE's bound 5.7985 (hand value above); pure 0.1-DP steps
    # composed: basic 10, advanced sqrt(200·ln(1e5))·0.1 + 100·0.1·(e^0.1 − 1) = 4.799 + 1.052 = 5.851.
    g = A.lnmax_guarantee(0.05, n_answers=100, delta=1e-5)
    assert g.parts["pate_simple"] == pytest.approx(5.7985, abs=1e-4)
    assert g.parts["advanced"] == pytest.approx(5.851, abs=1e-3)
    assert g.epsilon == pytest.approx(min(g.parts.values()))
    # two Laplace coordinates per answer, composed by their loss distributions (design.md §3.4)
    assert g.epsilon == g.parts["laplace_pld"] < g.parts["exact"] <= 5.7985 and g.method == "lnmax/laplace-pld"


@pytest.mark.parametrize("epsilon, m, delta", [(0.5, 10, 1e-5), (1.0, 100, 1e-5), (4.0, 2000, 1e-6), (200.0, 50, 1e-6)])
def test_lnmax_gamma_for_epsilon_spends_the_budget(epsilon, m, delta):
    gamma = A.lnmax_gamma_for_epsilon(epsilon, n_answers=m, delta=delta)
    spent = A.lnmax_guarantee(gamma, n_answers=m, delta=delta).epsilon
    assert spent <= epsilon
    # within 3% of the target (the PLD accountant's discretization costs a little), and
    # never less than PATE's bound alone would allow
    assert spent >= 0.97 * epsilon
    assert gamma >= A.pate_gamma_for_epsilon(epsilon, n_answers=m, delta=delta)
    # a slightly larger γ overspends: it is (about) the largest
    assert A.lnmax_guarantee(gamma * 1.05, n_answers=m, delta=delta).epsilon > epsilon


def test_optimal_composition_delta_matches_the_reference():
    for eps0, k, eps in [(0.05, 50, 1.0), (0.5, 5, 1.2), (0.01, 1000, 0.5)]:
        assert composition.optimal_composition_delta(eps0, k, eps) == pytest.approx(_optimal_delta(eps0, k, eps), rel=1e-9)


def test_advanced_composition_hand_values_and_inverse():
    # sqrt(2·100·ln(1e5))·0.05 + 100·0.05·(e^0.05 − 1) = 2.3993 + 0.2564 = 2.656
    assert float(A.advanced_composition_epsilon(0.05, 100, 1e-5)) == pytest.approx(2.656, abs=1e-3)
    # sqrt(2000·11.513)·0.05 + 1000·0.05·0.05127 = 7.587 + 2.564 = 10.15
    assert float(A.advanced_composition_epsilon(0.05, 1000, 1e-5)) == pytest.approx(10.15, abs=0.01)
    for eps0 in [1e-3, 0.05, 0.5, 2.0]:
        for k in [1, 7, 100, 1000]:
            total = float(A.advanced_composition_epsilon(eps0, k, 1e-5))
            assert A.advanced_composition_eps0(total, k, 1e-5) == pytest.approx(eps0, rel=1e-9)


def _optimal_delta(eps0, k, eps):
    """Exact optimal composition of k pure eps0-DP steps (Kairouz–Oh–Viswanath):
    the privacy loss of k-fold randomized response is eps0·(k − 2i), i ~ Bin(k, 1/(1+e^eps0))."""
    i = np.arange(k + 1)
    logc = gammaln(k + 1) - gammaln(i + 1) - gammaln(k - i + 1)
    logp = logc + (k - i) * (eps0 - np.log1p(np.exp(eps0))) - i * np.log1p(np.exp(eps0))
    loss = eps0 * (k - 2 * i)
    mask = loss > eps
    return float(np.sum(np.exp(logp[mask]) * -np.expm1(eps - loss[mask])))


def _optimal_epsilon(eps0, k, delta):
    lo, hi = 0.0, eps0 * k
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _optimal_delta(eps0, k, mid) > delta else (lo, mid)
    return hi


@pytest.mark.parametrize("eps0,k,delta", [(0.032, 10, 1e-6), (0.05, 50, 1e-5), (0.02, 200, 1e-6), (0.5, 5, 1e-3), (0.01, 1000, 1e-6)])
def test_pld_matches_closed_form_optimal_composition(eps0, k, delta):
    pld = A.optimal_composition_epsilon(eps0, k, delta)
    exact = _optimal_epsilon(eps0, k, delta)
    # PLD is pessimistic (an upper bound), within its 1e-4 discretization of the truth.
    assert pld >= exact - 1e-8  # numerical noise of the two computations
    assert pld == pytest.approx(exact, abs=1e-3)


@pytest.mark.parametrize("eps0,k,delta", [(0.032, 10, 1e-6), (0.05, 50, 1e-5), (0.02, 200, 1e-6), (0.5, 5, 1e-3), (0.01, 1000, 1e-6), (0.0183, 2000, 1e-6)])
def test_exact_composition_matches_the_reference_and_the_pld(eps0, k, delta):
    exact = A.exact_composition_epsilon(eps0, k, delta)
    assert exact == pytest.approx(_optimal_epsilon(eps0, k, delta), rel=1e-9)
    # valid: the δ at the returned ε is within the slack
    assert composition.optimal_composition_delta(eps0, k, exact) <= delta
    # Google's PLD accountant computes the same optimum, pessimistically discretized
    assert A.optimal_composition_epsilon(eps0, k, delta) == pytest.approx(exact, abs=1e-3)
    g = A.compose_pure_dp(eps0, k, delta, method="best")
    assert g.epsilon <= min(g.parts["basic"], g.parts["advanced"]) and g.parts["exact"] == exact


def test_exact_composition_hand_value():
    # One round: a pure eps0-DP step is (eps, δ)-DP with δ = (1 − e^(eps − eps0))·e^eps0/(1 + e^eps0)
    # for eps < eps0.  eps0 = 1, δ = 0.1: 0.1 = (1 − e^(ε−1))·0.731059 → ε = 1 + ln(1 − 0.136788) = 0.85291.
    assert A.exact_composition_epsilon(1.0, 1, 0.1) == pytest.approx(0.85291, abs=1e-5)
    assert A.exact_composition_epsilon(1.0, 1, 0.99) == 0.0


def test_best_composition_is_minimum():
    g = A.compose_pure_dp(0.05, 50, 1e-5, method="best")
    assert g.epsilon == pytest.approx(min(g.parts.values()))
    assert g.parts["basic"] == pytest.approx(2.5)
    with pytest.raises(ParameterError):
        A.compose_pure_dp(0.05, 50, 1e-5, method="magic")


def test_release_delta_continuous_closed_form():
    lam, w, m = 62.5, 2389.1, 1000
    b1, b2 = 2 * lam, lam
    p = (b1**2 * math.exp(-w / b1) - b2**2 * math.exp(-w / b2)) / (2 * (b1**2 - b2**2))
    # (4·e^(−19.113) − e^(−38.23))/6 ≈ 3.34e-9 per test; × 1000 tests
    assert m * p == pytest.approx(3.3368e-6, rel=1e-3)
    assert A.release_delta(lam, w, m, 10, discrete=False) == pytest.approx(m * p, rel=1e-9)


def test_release_delta_discrete_single_test_matches_simulation():
    """With one test and one round the release term is exactly P[Z_q − Z_t > w]."""
    lam, w = 2.0, 3.0
    p = A.release_delta(lam, w, 1, 1)
    rng = np.random.default_rng(12345)
    n = 2_000_000
    hits = int(np.count_nonzero(noise.discrete_laplace(2 * lam, n, rng) - noise.discrete_laplace(lam, n, rng) > w))
    # Two-sided binomial acceptance region with false-failure probability 2e-7.
    lo, hi = stats.binom.ppf(1e-7, n, p), stats.binom.isf(1e-7, n, p)
    assert lo <= hits <= hi


def test_release_delta_is_at_least_design_formula_and_decreasing():
    lam = 10.0
    vals = [A.release_delta(lam, w, 500, 20) for w in (150.0, 200.0, 300.0, 400.0)]
    assert all(a > b for a, b in zip(vals, vals[1:]))
    z, pmf, _ = accounting_btt._dlap_pmf_support(lam)
    single = float(np.sum(pmf * noise.discrete_laplace_tail(2 * lam, 100.0 + z)))
    assert A.release_delta(lam, 100.0, 500, 20) >= min(1.0, 500 * single) * (1 - 1e-9)


@pytest.mark.parametrize("eps,delta,T,m", [(1.0, 1e-5, 10, 1000), (8.0, 1e-5, 50, 2000), (0.5, 1e-6, 5, 300)])
def test_tight_calibration_meets_target_and_beats_paper(eps, delta, T, m):
    tight = A.calibrate_btt(eps, delta=delta, T=T, m=m, calibration="tight")
    paper = A.calibrate_btt(eps, delta=delta, T=T, m=m, calibration="paper")
    assert tight.epsilon <= eps * (1 + 1e-9)
    assert tight.delta <= delta * (1 + 1e-9)
    # recompute the guarantee from scratch with the accountant
    g = A.btt_guarantee(tight.noise_scale, tight.threshold, T, m, tight.guarantee.parts["delta_svt"])
    assert g.epsilon <= eps * (1 + 1e-9) and g.delta <= delta * (1 + 1e-9)
    assert tight.noise_scale < paper.noise_scale
    assert tight.threshold < paper.threshold


def test_soft_calibration_uses_2T_rounds_and_2m_tests():
    cal = A.calibrate_btt(2.0, delta=1e-5, T=10, m=100, calibration="paper", soft=True)
    assert cal.rounds == 20 and cal.tests == 200
    assert cal.noise_scale == pytest.approx(float(A.btt_noise_scale(20, 2.0, 1e-5)))
    assert cal.threshold == pytest.approx(float(A.btt_threshold(cal.noise_scale, 200, 1e-5)))


def test_composition_baseline_parameters():
    par = A.composition_baseline_parameters(2.0, delta=1e-5, m=100)
    assert par.delta0 * 100 + par.delta_prime == pytest.approx(1e-5)
    assert float(A.advanced_composition_epsilon(par.eps0, 100, par.delta_prime)) == pytest.approx(2.0, rel=1e-9)
    assert par.threshold == pytest.approx(math.log(1 / par.delta0) / par.eps0)
    assert par.guarantee.epsilon <= 2.0 + 1e-9 and par.guarantee.delta <= 1e-5 * (1 + 1e-12)
    # few queries: basic composition spends the whole budget and gives the lower threshold
    small = A.composition_baseline_parameters(1.0, delta=0.01, m=2)
    assert small.composition == "basic" and small.eps0 == pytest.approx(0.5)
    assert small.guarantee.epsilon == pytest.approx(1.0) and small.guarantee.delta == pytest.approx(0.01)


def test_moments_accountant_ties_use_data_independent_bound():
    # Ties: q = min(1, (2 + 0)/4) = 0.5 >= 1/(e^0.1 + 1), so α(l) = min(2γl, 2γ²l(l+1)).
    gamma, delta, m = 0.05, 1e-5, 100
    counts = np.tile([5, 5], (m, 1))
    expected = min((m * min(2 * gamma * l, 2 * gamma**2 * l * (l + 1)) + math.log(1 / delta)) / l for l in range(1, 9))
    assert A.pate_moments_epsilon(counts, gamma=gamma, delta=delta) == pytest.approx(expected, rel=1e-12)


def test_moments_accountant_hand_value_large_gap():
    # One query, votes (250, 0), γ = 0.05: Δ = 250, q = (2 + 12.5)/(4·e^12.5) = 1.3509e-5.
    gamma, delta = 0.05, 1e-5
    q = 14.5 / (4 * math.exp(12.5))
    assert q == pytest.approx(1.3509e-5, rel=1e-3)
    def alpha(l):
        dd = math.log((1 - q) * ((1 - q) / (1 - math.exp(2 * gamma) * q)) ** l + q * math.exp(2 * gamma * l))
        return min(2 * gamma * l, 2 * gamma**2 * l * (l + 1), dd)
    expected = min((alpha(l) + math.log(1 / delta)) / l for l in range(1, 9))
    assert A.pate_moments_epsilon(np.array([[250, 0]]), gamma=gamma, delta=delta) == pytest.approx(expected, rel=1e-12)
    # unanimous votes cost far less than the data-independent bound
    counts = np.tile([250, 0], (1000, 1))
    assert A.pate_moments_epsilon(counts, gamma=gamma, delta=delta) < A.pate_simple_epsilon(gamma, n_answers=1000, delta=delta) / 2


def test_bad_parameters():
    with pytest.raises(ParameterError):
        A.calibrate_btt(0.0, delta=1e-5, T=10, m=100)
    with pytest.raises(ParameterError):
        A.calibrate_btt(1.0, delta=1.5, T=10, m=100)
    with pytest.raises(ParameterError):
        A.calibrate_btt(1.0, delta=1e-5, T=0, m=100)
    with pytest.raises(ParameterError):
        A.calibrate_btt(1.0, delta=1e-5, T=10, m=100, calibration="loose")
    with pytest.raises(ParameterError):
        A.pate_simple_epsilon(0.0, n_answers=10, delta=1e-5)
