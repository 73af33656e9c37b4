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
        assert "wrong" in p.bounds


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
