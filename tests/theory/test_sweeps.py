"""Sweeps against the bounds: the plan's engine over ε, T, k and m, with each mechanism's bounds.

The expected-value bounds (GNMax's Proposition 7, LNMax's Theorem 3) bound the mean over
draws of a share of m = 400 queries; over 10 draws the mean deviates from its expectation by
more than 3·√(1/(4·4000)) < 0.024 with probability ≤ 2e-4 (Hoeffding, per point) — the test
allows 0.05 (≤ 1e-9).
"""

from __future__ import annotations

import numpy as np
import pytest

from core.errors import ParameterError
from core.plan import TeacherQuality, simulate_votes
from core.plan.sweeps import sweep_against_bounds

Q = TeacherQuality(accuracy=0.85, hard_share=0.3, hard_accuracy=0.5)


@pytest.fixture(scope="module")
def votes():
    sim = simulate_votes(m=400, k=100, n_classes=3, quality=Q, rng=0)
    return sim.counts, sim.truth


def test_epsilon_sweep_of_gnmax_stays_below_proposition_7(votes):
    counts, truth = votes
    points = sweep_against_bounds("gnmax", {"delta": 1e-5}, vary="epsilon", values=[0.5, 2, 8],
                                  counts=counts, truth=truth, draws=10, rng=1)
    assert [p.value for p in points] == [0.5, 2.0, 8.0]
    for p in points:
        assert p.feasible and p.answered == 1.0 and p.bottom == 0.0
        assert p.wrong <= p.bounds["wrong"] + 0.05
        assert abs(p.epsilon - p.value) < 1e-6 * p.value + 1e-9
    assert points[0].wrong > points[-1].wrong  # more noise, more wrong labels
    assert points[0].bounds["wrong"] > points[-1].bounds["wrong"]
    assert points[0].wrong_sd > 0


def test_t_sweep_of_btt_keeps_bottoms_below_t(votes):
    counts, truth = votes
    points = sweep_against_bounds("btt", {"epsilon": 8.0, "delta": 1e-5, "calibration": "tight"}, vary="T",
                                  values=[1, 5, 20], counts=counts * 10, truth=truth,  # k = 1,000
                                  draws=4, rng=2)
    for p in points:
        assert p.bottom <= p.bounds["⊥"] + 1e-12
        # Theorem 3.2 needs two classes and far more teachers: no error bound, and the sentence says why
        assert "wrong" not in p.bounds
        assert "two classes" in p.bound_note and "number of teachers k: it needs k ≥" in p.bound_note


def test_btt_error_bound_only_where_theorem_3_2_holds():
    """Two classes, 20,000 teachers, one query of 400 with a dissenting vote (worst error ≤ 1/400):
    the theorem's cutoff is 3(1 + √(log(400/0.05)/2)) ≈ 9.36, so T = 1 and 5 fall short, T = 20 meets it
    (and 20,000 teachers reach Algorithm 2's k ≈ 10,900 at T = 20, ε = 8, δ = 1e-5): the bound T/m is
    drawn there only."""
    truth = np.arange(400) % 2
    counts = np.zeros((400, 2), dtype=np.int64)
    counts[np.arange(400), truth] = 20_000
    counts[0] = (19_999, 1)
    points = sweep_against_bounds("btt", {"epsilon": 8.0, "delta": 1e-5, "calibration": "tight"}, vary="T",
                                  values=[1, 5, 20], counts=counts, truth=truth, draws=2, rng=2)
    assert ["wrong" in p.bounds for p in points] == [False, False, True]
    assert points[2].bounds["wrong"] == 20 / 400 and points[2].bound_note is None
    assert "cutoff T: it needs T ≥ 9.36" in points[0].bound_note and "number of teachers" not in points[0].bound_note


def test_k_and_m_sweeps(votes):
    counts, truth = votes
    ks = sweep_against_bounds("lnmax", {"epsilon": 4.0, "delta": 1e-5}, vary="k", values=[20, 200],
                              counts=counts, truth=truth, draws=5, rng=3, quality=Q)
    assert ks[1].wrong < ks[0].wrong  # more teachers, larger gaps, fewer flips
    ms = sweep_against_bounds("a-stab", {"epsilon": 1.0, "delta": 1e-5}, vary="m", values=[100, 400],
                              counts=counts, truth=truth, draws=5, rng=4)
    assert all(p.bottom <= p.bounds["⊥"] + 0.1 for p in ms)
    with pytest.raises(ParameterError, match="TeacherQuality"):
        sweep_against_bounds("lnmax", {"epsilon": 4.0}, vary="k", values=[10], counts=counts, truth=truth)
    with pytest.raises(ParameterError, match="vary"):
        sweep_against_bounds("lnmax", {"epsilon": 4.0}, vary="beta", values=[10], counts=counts, truth=truth)


def test_refused_settings_give_a_reason(votes):
    counts, truth = votes
    points = sweep_against_bounds("btt", {"epsilon": 4.0, "delta": 1e-5}, vary="T", values=[0], counts=counts,
                                  truth=truth, draws=2, rng=5)
    assert not points[0].feasible and points[0].reason


def test_certified_has_no_bound(votes):
    counts, truth = votes
    p = sweep_against_bounds("certified-gnmax", {"epsilon": 4.0, "delta": 1e-5}, vary="epsilon", values=[4.0],
                             counts=counts, truth=truth, draws=2, rng=6)[0]
    assert p.bounds is None


def test_delta_sweep(votes):
    counts, truth = votes
    points = sweep_against_bounds("gnmax", {"epsilon": 2.0}, vary="delta", values=[1e-3, 1e-8], counts=counts,
                                  truth=truth, draws=5, rng=7)
    assert [p.value for p in points] == [1e-3, 1e-8]
    assert all(p.delta <= p.value * (1 + 1e-9) for p in points)
    assert points[1].wrong >= points[0].wrong  # a smaller δ buys more noise at the same ε


def test_measured_quality_recovers_the_teachers_that_voted():
    """Votes simulated from a known quality: the measured quality is that quality.

    m = 4,000 queries of k = 200 teachers: each estimate is a mean over hundreds of queries or
    more (standard errors below 0.005); the tolerances are above 6 standard errors.
    """
    from core.plan.sweeps import measured_quality

    truth_quality = TeacherQuality(accuracy=0.95, hard_share=0.1, hard_accuracy=0.6, hard_spread=0.1)
    sim = simulate_votes(m=4000, k=200, n_classes=3, quality=truth_quality, rng=11)
    q = measured_quality(sim.counts, sim.truth, rows_per_teacher=40)
    assert q.accuracy == pytest.approx(0.95, abs=0.01) and q.hard_share == pytest.approx(0.1, abs=0.02)
    assert q.hard_accuracy == pytest.approx(0.6, abs=0.03) and q.hard_spread == pytest.approx(0.1, abs=0.03)
    assert q.rows == 40 and sum(q.class_shares) == pytest.approx(1.0)
    with pytest.raises(ParameterError):
        measured_quality(sim.counts, sim.truth[:10])


def test_a_model_trained_on_the_rows_sweeps_epsilon_delta_and_m():
    from sklearn.datasets import load_breast_cancer

    from core.mechanisms.dp_training import rows_from_arrays

    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    rows = rows_from_arrays(X[:450], y[:450], X[450:], n_classes=2, data_norm=float(np.sqrt(X.shape[1])))
    truth = y[450:]
    eps = sweep_against_bounds("dp-logistic", {"delta": 1e-5}, vary="epsilon", values=[0.1, 50.0], counts=None,
                               truth=truth, draws=6, rng=1, rows=rows)
    for p in eps:
        assert p.feasible and p.answered == 1.0 and p.bottom == 0.0 and p.bounds is None
        assert p.epsilon == pytest.approx(p.value)
    assert eps[1].wrong < eps[0].wrong  # a large ε trains an accurate model; a tiny one barely better than chance
    ms = sweep_against_bounds("dp-naive-bayes", {"epsilon": 2.0, "delta": 1e-5}, vary="m", values=[30, 119],
                              counts=None, truth=truth, draws=3, rng=2, rows=rows)
    assert [p.value for p in ms] == [30.0, 119.0] and all(p.answered == 1.0 for p in ms)
    deltas = sweep_against_bounds("dp-logistic", {"epsilon": 2.0}, vary="delta", values=[1e-4, 1e-8], counts=None,
                                  truth=truth, draws=2, rng=3, rows=rows)
    assert [p.delta for p in deltas] == pytest.approx([1e-4, 1e-8])
    for vary in ("k", "T"):
        with pytest.raises(ParameterError, match="no teachers and no cutoff"):
            sweep_against_bounds("dp-logistic", {"epsilon": 2.0}, vary=vary, values=[3], counts=None, truth=truth,
                                 rows=rows)
    with pytest.raises(ParameterError, match="rows="):
        sweep_against_bounds("dp-logistic", {"epsilon": 2.0}, vary="epsilon", values=[1.0], counts=None,
                             truth=truth)
