"""Mechanisms of core.mechanisms: vectorized code vs plain reference loops on the same
random stream, cutoff behaviour, soft-label tests, LNMax and the baseline (docs/design.md §3)."""


import numpy as np
import pytest
from scipy import stats

from builders import reference_btt, reference_soft
from core import accounting
from core.mechanisms import (
    BOTTOM,
    UNPROCESSED,
    a_stab_label,
    btt_label,
    btt_soft_label,
    composition_baseline_label,
    lnmax_label,
    soft_bin_histograms,
)
from core.errors import DataError, ParameterError
from core.mechanisms.stability import plurality


def _votes(rng, m, k, n_classes, p_right):
    """Vote counts where each teacher is right (class 0 rotated per query) w.p. p_right."""
    truth = rng.integers(n_classes, size=m)
    right = rng.binomial(k, p_right, size=m)
    counts = np.zeros((m, n_classes), dtype=np.int64)
    counts[np.arange(m), truth] = right
    others = (truth + 1) % n_classes
    counts[np.arange(m), others] += k - right
    return counts


# ---------------------------------------------------------------------------
# Reference loops: the algorithms exactly as printed, one query at a time.
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("calibration", ["paper", "tight"])
def test_btt_matches_reference_loop(seed, calibration):
    rng = np.random.default_rng(100 + seed)
    m, k, c = 400, 1600, 2 + seed % 3
    counts = _votes(rng, m, k, c, p_right=rng.uniform(0.7, 0.97))
    res = btt_label(counts, epsilon=4.0, delta=1e-5, T=8 + seed, calibration=calibration, rng=np.random.default_rng(seed))
    ref = reference_btt(counts, 4.0, 1e-5, 8 + seed, calibration, seed)
    np.testing.assert_array_equal(res.labels, ref)
    assert res.n_answered + res.n_bottom + res.n_unprocessed == m


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("calibration", ["paper", "tight"])
def test_soft_matches_reference_loop(seed, calibration):
    rng = np.random.default_rng(200 + seed)
    m, k = 150, 3000
    centre = rng.uniform(0, 1, size=(m, 1))
    spread = rng.choice([0.01, 0.05, 0.3], size=(m, 1))
    scores = np.clip(centre + spread * rng.standard_normal((m, k)), 0, 1)
    res = btt_soft_label(scores, epsilon=6.0, delta=1e-5, T=6, eta=0.1, calibration=calibration, rng=np.random.default_rng(seed))
    lab, out = reference_soft(scores, 6.0, 1e-5, 6, 0.1, calibration, seed)
    np.testing.assert_array_equal(res.labels, lab)
    np.testing.assert_allclose(res.scores, out, equal_nan=True)


@pytest.mark.parametrize("seed", range(4))
def test_cutoff_and_not_processed(seed):
    rng = np.random.default_rng(seed)
    counts = _votes(rng, 3000, 800, 3, p_right=0.75)
    T = 5
    res = btt_label(counts, epsilon=2.0, delta=1e-5, T=T, calibration="tight", rng=rng)
    assert res.n_bottom <= T
    if res.halted_at is not None:
        assert res.n_bottom == T
        assert res.labels[res.halted_at] == BOTTOM
        assert np.all(res.labels[res.halted_at + 1 :] == UNPROCESSED)
        assert np.all(res.labels[: res.halted_at + 1] != UNPROCESSED)
    else:
        assert res.n_unprocessed == 0


def test_soft_never_more_than_2T_failed_tests():
    rng = np.random.default_rng(7)
    m, k, T = 400, 1000, 4
    scores = rng.uniform(0, 1, (m, k))  # spread scores: every test fails
    res = btt_soft_label(scores, epsilon=2.0, delta=1e-5, T=T, eta=0.25, calibration="tight", rng=rng)
    n_test2 = int(np.sum(np.isclose((res.scores * 4) % 1.0, 0.0)))  # test-2 midpoints are multiples of η
    failed = n_test2 + 2 * res.n_bottom
    assert failed <= 2 * T
    assert res.halted_at is not None and np.all(res.labels[res.halted_at + 1 :] == UNPROCESSED)


def test_unanimous_votes_with_enough_teachers_are_all_answered():
    m, T = 1000, 5
    cal = accounting.calibrate_btt(2.0, delta=1e-5, T=T, m=m, calibration="tight")
    # dist - w = 100λ: a query fails only if Z_q − Z_t <= −100λ, probability
    # <= e^{-25} + e^{-50} < 1.4e-11 per query, < 1.4e-8 over the 1000 queries.
    k = 2 * int(cal.threshold + 100 * cal.noise_scale) + 4
    counts = np.zeros((m, 4), dtype=np.int64)
    counts[np.arange(m), np.arange(m) % 4] = k
    res = btt_label(counts, epsilon=2.0, delta=1e-5, T=T, calibration="tight", rng=np.random.default_rng(3))
    assert res.n_answered == m and res.feasible
    np.testing.assert_array_equal(res.labels, np.arange(m) % 4)


@pytest.mark.slow
def test_tie_released_only_with_probability_below_release_delta():
    """Runs whose queries are all ties: the fraction of runs releasing any label stays
    below δ_release.  Settings with a large δ make δ_release measurable (≈ 0.05)."""
    eps, delta, T, m = 1.0, 0.1, 2, 8
    cal = accounting.calibrate_btt(eps, delta=delta, T=T, m=m, calibration="tight")
    bound = cal.guarantee.parts["delta_release"]
    assert 1e-3 < bound < 0.1
    counts = np.tile([7, 7], (m, 1))
    n_runs = 5_000  # the (1 − 1e-7) quantile below keeps the false-failure rate at 1e-7 for any n; at 5,000
    # runs a leak 1.55 times the bound (0.072 against 0.046) still exceeds it with probability > 0.99
    rng = np.random.default_rng(2024)
    released = sum(btt_label(counts, epsilon=eps, delta=delta, T=T, calibration="tight", rng=rng).n_answered > 0 for _ in range(n_runs))
    # If the true probability is <= bound, exceeding the (1 − 1e-7) binomial quantile
    # happens with probability <= 1e-7.
    assert released <= stats.binom.isf(1e-7, n_runs, bound)
    assert released > 0  # the leak path exists: the bound is not vacuous


def test_tight_answers_at_least_as_many_as_paper():
    rng = np.random.default_rng(11)
    m, T = 600, 20
    paper = accounting.calibrate_btt(4.0, delta=1e-5, T=T, m=m, calibration="paper")
    tight = accounting.calibrate_btt(4.0, delta=1e-5, T=T, m=m, calibration="tight")
    k = 2 * int(0.5 * (paper.threshold + tight.threshold)) + 2  # between the two thresholds
    counts = np.zeros((m, 2), dtype=np.int64)
    counts[:, 0] = k
    for seed in range(5):
        a = btt_label(counts, epsilon=4.0, delta=1e-5, T=T, calibration="paper", rng=seed)
        b = btt_label(counts, epsilon=4.0, delta=1e-5, T=T, calibration="tight", rng=seed)
        assert b.n_answered >= a.n_answered
    assert not a.feasible and "teachers are needed" in a.reason
    assert b.feasible and b.n_answered > 100


def test_infeasible_reason_names_teachers_needed():
    counts = np.tile([10, 0], (50, 1))
    res = btt_label(counts, epsilon=1.0, delta=1e-5, T=10, rng=0)
    assert not res.feasible
    assert "k = 10 teachers" in res.reason and "needed" in res.reason
    assert res.n_answered == 0


def test_soft_bins():
    scores = np.array([[0.0, 0.05, 0.1, 0.3, 0.99, 1.0]])
    h, s = soft_bin_histograms(scores, 0.1)
    assert h.shape == (1, 10) and s.shape == (1, 9)
    assert h[0].tolist() == [2, 1, 0, 1, 0, 0, 0, 0, 0, 2]
    # shifted bins [0.05,0.15),[0.15,0.25),...,[0.85,0.95): 0.05→0, 0.1→0, 0.3→2; 0, .99, 1 dropped
    assert s[0].tolist() == [2, 0, 1, 0, 0, 0, 0, 0, 0]


def test_soft_outer_bin_answered_by_test1_for_free():
    rng = np.random.default_rng(5)
    m, k, T = 300, 4000, 3
    scores = np.where(rng.uniform(size=(m, 1)) < 0.5, 0.0, 1.0) + rng.uniform(0, 0.04, (m, k)) * np.where(rng.uniform(size=(m, 1)) < 0.5, 1, 1)
    scores = np.clip(np.where(scores > 1, 2 - scores, scores), 0, 1)
    res = btt_soft_label(scores, epsilon=4.0, delta=1e-5, T=T, eta=0.1, calibration="tight", rng=rng)
    assert res.n_answered == m and res.n_bottom == 0
    assert set(np.round(res.scores, 6)) <= {0.05, 0.95}  # test-1 midpoints of the outer bins


def test_soft_straddling_edge_answered_by_test2():
    rng = np.random.default_rng(6)
    m, k, T = 60, 4000, 40
    # half the teachers in [0.27, 0.3), half in [0.3, 0.33): a tie on P_η, one bin of P̃_η
    scores = np.concatenate([rng.uniform(0.27, 0.2999, (m, k // 2)), rng.uniform(0.3, 0.33, (m, k // 2))], axis=1)
    res = btt_soft_label(scores, epsilon=4.0, delta=1e-5, T=T, eta=0.1, calibration="tight", rng=rng)
    answered = res.scores[~np.isnan(res.scores)]
    assert answered.size >= m // 2
    np.testing.assert_allclose(answered, 0.3)  # midpoint of the shifted bin [0.25, 0.35)


def test_lnmax():
    rng = np.random.default_rng(8)
    counts = _votes(rng, 2000, 250, 10, p_right=0.9)
    res = lnmax_label(counts, gamma=0.05, delta=1e-5, rng=rng)
    assert res.n_answered == 2000 and res.n_bottom == 0
    assert np.mean(res.labels == plurality(counts)) > 0.99
    simple = accounting.pate_simple_epsilon(0.05, n_answers=2000, delta=1e-5)
    assert res.epsilon <= simple + 1e-12
    assert res.params["epsilon_pate_simple"] == pytest.approx(simple)
    assert res.epsilon_data_dependent is not None and res.epsilon_data_dependent < res.epsilon


def test_lnmax_noise_level():
    """With a tie between two classes, LNMax picks each about half the time."""
    counts = np.tile([5, 5], (40_000, 1))
    res = lnmax_label(counts, gamma=1.0, rng=np.random.default_rng(9), delta=1e-5)
    n0 = int(np.sum(res.labels == 0))
    # two-sided binomial acceptance region, false-failure probability 2e-7
    assert stats.binom.ppf(1e-7, 40_000, 0.5) <= n0 <= stats.binom.isf(1e-7, 40_000, 0.5)
    assert res.params["epsilon_pate_simple"] > 1000  # meaningless ε: reported, and computed quickly


def test_composition_baseline_and_a_stab():
    rng = np.random.default_rng(10)
    m = 200
    par = accounting.composition_baseline_parameters(4.0, delta=1e-5, m=m)
    k_big = 2 * int(par.threshold + 60 / par.eps0) + 4   # margin 60/ε0 above Γ
    counts = np.zeros((m, 3), dtype=np.int64)
    counts[: m // 2, 1] = k_big                       # unanimous: answered
    counts[m // 2 :, 0] = k_big // 2                  # ties: ⊥ unless noise > Γ (prob < δ0)
    counts[m // 2 :, 2] = k_big - k_big // 2
    res = composition_baseline_label(counts, epsilon=4.0, delta=1e-5, rng=rng)
    # P[a unanimous query fails] <= e^{-60}; P[a tie passes] <= δ0 = 2.5e-8 (both negligible)
    assert np.all(res.labels[: m // 2] == 1)
    assert np.all(res.labels[m // 2 :] == BOTTOM)
    assert res.epsilon <= 4.0 + 1e-9 and res.delta <= 1e-5 * (1 + 1e-12)
    one = a_stab_label(counts[:1], epsilon=1.0, delta=1e-6, rng=rng)
    assert one.epsilon == 1.0 and one.delta == 1e-6 and one.labels[0] == 1


def test_parameter_errors():
    counts = np.tile([3, 1], (5, 1))
    with pytest.raises(ParameterError):
        btt_label(counts, epsilon=0, delta=1e-5, T=3)
    with pytest.raises(ParameterError):
        btt_label(counts, epsilon=1.0, delta=0.0, T=3)
    with pytest.raises(ParameterError):
        btt_label(counts, epsilon=1.0, delta=1e-5, T=0)
    with pytest.raises(ParameterError):
        btt_soft_label(np.full((3, 4), 0.5), epsilon=1.0, delta=1e-5, T=3, eta=0.3)
    with pytest.raises(ParameterError):
        lnmax_label(counts, gamma=-1.0, delta=1e-5)
    with pytest.raises(DataError):
        btt_label(np.array([[3, 1], [2, 1]]), epsilon=1.0, delta=1e-5, T=3)  # unequal vote totals


# ---------------------------------------------------------------------------
# The sparse-vector scan itself against the plain loop, on arbitrary inputs
# ---------------------------------------------------------------------------

def _scan_loop(values, thresholds, max_failures):
    status = np.full(len(values), -1, dtype=np.int8)
    failures, halted_at = 0, None
    for i, v in enumerate(values):
        if failures >= max_failures:
            break
        if v > thresholds[failures]:
            status[i] = 1
        else:
            status[i] = 0
            failures += 1
            if failures == max_failures:
                halted_at = i
    return status, halted_at


@pytest.mark.parametrize("seed", range(40))
def test_sparse_vector_scan_matches_loop(seed):
    from core.mechanisms import sparse_vector_scan

    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 400))
    T = int(rng.integers(1, 12))
    # integer values and float thresholds with ties possible (value == threshold fails)
    values = rng.integers(-5, 15, size=m)
    thresholds = rng.integers(-3, 12, size=T + int(rng.integers(0, 3))).astype(float)
    if seed % 3 == 0:
        thresholds += 0.5
    status, halted = sparse_vector_scan(values, thresholds, T)
    ref_status, ref_halted = _scan_loop(values, thresholds, T)
    np.testing.assert_array_equal(status, ref_status)
    assert halted == ref_halted


def test_infeasible_reason_gives_advice_that_fits_the_mechanism():
    unanimous = np.array([[4, 0]] * 50)
    paper = btt_label(unanimous, epsilon=1.0, delta=1e-5, T=5, calibration="paper", rng=0)
    tight = btt_label(unanimous, epsilon=1.0, delta=1e-5, T=5, calibration="tight", rng=0)
    base = composition_baseline_label(unanimous, epsilon=1.0, delta=1e-5, rng=0)
    assert not paper.feasible and "use the tight calibration" in paper.reason
    assert not tight.feasible and "use the tight calibration" not in tight.reason and "lower T" in tight.reason
    assert not base.feasible and "lower T" not in base.reason and "fewer queries" in base.reason


def test_the_recommended_number_of_teachers_is_the_formula_at_every_run():
    """k_recommended is memoised on its public numbers: each run, the first or a repeat, at one
    setting or another, reports what btt_num_teachers computes afresh."""
    from core.accounting.btt import btt_num_teachers

    counts = np.array([[30, 10], [20, 20], [40, 0]])
    for eps, delta, T, beta in [(1.0, 1e-5, 2, 0.05), (0.5, 1e-6, 1, 0.1), (1.0, 1e-5, 2, 0.05), (1.0, 1e-5, 2, 0.2)]:
        for calibration in ("tight", "paper"):
            r = btt_label(counts, epsilon=eps, delta=delta, T=T, calibration=calibration, beta=beta, rng=1)
            cal = accounting.calibrate_btt(eps, delta=delta, T=T, m=3, calibration=calibration)
            assert r.params["k_recommended"] == float(btt_num_teachers(cal.noise_scale, 3, T, delta, beta))
