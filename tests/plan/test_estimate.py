"""The private estimate of teacher agreement (core.plan.estimate).

Checks: the sensitivity claim on random neighbouring vote matrices (one teacher's votes
replaced on every query), the estimate's accuracy (fixed seed, 6 standard deviations),
the ledger charge, and the empirical audit of the released statistic on a pair at
sensitivity m (confidence 0.99, fixed seed).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from core import noise
from core.ledger import PrivacyLedger
from core.ledger import compose_entries
from core.audit import audit
from core.errors import BudgetExhausted
from core.plan import TeacherQuality, estimate_price, estimate_quality, simulate_votes


def _counts(votes: np.ndarray, c: int) -> np.ndarray:
    return np.stack([np.bincount(row, minlength=c) for row in votes])


def test_sum_of_top_counts_moves_by_at_most_m():
    gen = np.random.default_rng(0)
    for _ in range(300):
        m, k, c = int(gen.integers(1, 8)), int(gen.integers(1, 9)), int(gen.integers(2, 5))
        votes = gen.integers(0, c, size=(m, k))
        other = votes.copy()
        other[:, gen.integers(k)] = gen.integers(0, c, size=m)  # one teacher (one chunk) changes everywhere
        a, b = _counts(votes, c).max(axis=1).sum(), _counts(other, c).max(axis=1).sum()
        assert abs(int(a) - int(b)) <= m


def test_estimate_is_close_and_sets_the_easy_accuracy():
    q = TeacherQuality(accuracy=0.9, hard_share=0.2, hard_accuracy=0.6)
    sv = simulate_votes(m=2000, k=250, n_classes=2, quality=q, rng=1)
    true = float(sv.counts.max(axis=1).mean() / 250)
    est = estimate_quality(sv.counts, epsilon=0.5, assumed=TeacherQuality(hard_share=0.2, hard_accuracy=0.6), rng=2)
    assert est.noise_sd == pytest.approx(math.sqrt(2) / (250 * 0.5))
    assert abs(est.agreement - true) < 6 * est.noise_sd
    assert abs(est.quality.accuracy - 0.9) < 0.03  # agreement ≈ accuracy when most pluralities are right
    assert est.quality.hard_share == 0.2 and est.epsilon == 0.5


def test_estimate_is_charged_before_it_runs():
    sv = simulate_votes(m=100, k=20, n_classes=2, quality=TeacherQuality(), rng=0)
    ledger = PrivacyLedger("test", budget_epsilon=1.0, budget_delta=1e-6)
    estimate_quality(sv.counts, epsilon=0.6, ledger=ledger, rng=0)
    assert ledger.total().epsilon == pytest.approx(0.6, rel=1e-4)  # quoted at the budget δ
    with pytest.raises(BudgetExhausted):
        estimate_quality(sv.counts, epsilon=0.6, ledger=ledger, rng=0)
    assert len(ledger) == 1
    assert compose_entries([estimate_price(epsilon=0.6, m=100, k=20)]).epsilon == pytest.approx(0.6)


def test_released_statistic_passes_the_audit():
    m, eps = 3, 1.0
    scale = Fraction(m) / Fraction(eps)

    def sampler(total, n_trials, rng):
        return int(total) + noise.discrete_laplace(scale, size=int(n_trials), rng=rng)

    result = audit(sampler, 0, m, claimed_epsilon=eps, claimed_delta=0.0, n_trials=100_000, rng=3)
    assert result.passed and result.epsilon_lower_bound > 0.5 * eps


def test_class_shares_are_counted_privately_and_charged():
    from core.plan import estimate_class_shares

    y = np.array([0] * 680 + [1] * 320)
    ledger = PrivacyLedger("test", budget_epsilon=2.0, budget_delta=1e-6)
    shares = estimate_class_shares(y, n_classes=2, epsilon=1.0, ledger=ledger, rng=0)
    # each count's noise has sd 2·√2/ε ≈ 2.8 rows: 6 sd of 1,000 rows is under 2 points
    assert abs(shares[0] - 0.68) < 0.02 and shares.sum() == pytest.approx(1.0)
    assert ledger.total().epsilon == pytest.approx(1.0, rel=1e-4)  # quoted at the budget δ
    # replace-one moves the histogram by 2 in L1 (the sensitivity the noise is scaled to)
    z = y.copy()
    z[0] = 1
    assert np.abs(np.bincount(y, minlength=2) - np.bincount(z, minlength=2)).sum() == 2
