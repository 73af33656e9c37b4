"""core.plan: simulated votes, the outcome engine, predictions, sweeps and advice.

Statistical checks use fixed seeds; each threshold is at least 6 standard deviations
of its estimate (false-failure rate below 1e-8 for a random seed).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from core.errors import ParameterError
from core.plan import TeacherQuality, outcomes, predict, predict_many, simulate_votes, sweep
from core.plan.advice import alternatives


def test_simulated_votes_follow_the_assumption():
    q = TeacherQuality(accuracy=0.9, hard_share=0.3, hard_accuracy=0.6, class_shares=(0.7, 0.2, 0.1))
    sv = simulate_votes(m=20000, k=50, n_classes=3, quality=q, rng=3)
    assert sv.counts.shape == (20000, 3) and sv.truth.shape == (20000,)
    assert np.all(sv.counts.sum(axis=1) == 50) and sv.counts.min() >= 0
    shares = np.bincount(sv.truth, minlength=3) / 20000
    assert np.allclose(shares, [0.7, 0.2, 0.1], atol=6 * math.sqrt(0.25 / 20000))
    right = sv.counts[np.arange(20000), sv.truth] / 50
    expected = 0.7 * 0.9 + 0.3 * 0.6
    assert abs(right.mean() - expected) < 6 * math.sqrt(0.25 / 20000)
    assert abs(sv.hard.mean() - 0.3) < 6 * math.sqrt(0.25 / 20000)
    assert abs(right[sv.hard].mean() - 0.6) < 0.01 and abs(right[~sv.hard].mean() - 0.9) < 0.01
    # Wrong votes spread over the other classes evenly.
    wrong = sv.counts.sum() - sv.counts[np.arange(20000), sv.truth].sum()
    other = sv.counts[sv.truth == 0][:, 1:].sum(axis=0)
    assert wrong > 0 and abs(other[0] / other.sum() - 0.5) < 0.01


def test_draws_axis_and_scores():
    sv = simulate_votes(m=40, k=9, n_classes=2, quality=TeacherQuality(), rng=0, draws=3)
    assert sv.counts.shape == (3, 40, 2) and sv.truth.shape == (3, 40)
    sc = sv.scores()
    assert sc.shape == (3, 40, 9) and np.array_equal(sc.sum(axis=-1), sv.counts[..., 1])


def test_quality_checks_and_learning_rate():
    with pytest.raises(ParameterError):
        TeacherQuality(accuracy=1.5)
    with pytest.raises(ParameterError):
        TeacherQuality(class_shares=(0.5, 0.6))
    with pytest.raises(ParameterError):
        TeacherQuality(class_shares=(0.5, 0.5)).shares(3)
    q = TeacherQuality(accuracy=0.8, hard_accuracy=0.6, rows=100)
    assert q.at(100).accuracy == pytest.approx(0.8)
    assert q.at(400).accuracy == pytest.approx(0.9)  # error 0.2 × sqrt(100/400)
    assert q.at(25).accuracy == pytest.approx(0.6)
    assert q.at(1).hard_accuracy == 0.5  # clipped at chance
    assert TeacherQuality(accuracy=0.8).at(5).accuracy == 0.8  # no rows: independent of k


def test_outcomes_gnmax_matches_the_binary_formula():
    # Binary GNMax is right exactly when the noise difference N(0, 2σ²) does not beat the margin.
    k, sigma, m = 20, 4.0, 2000
    counts = np.tile([14, 6], (m, 1))
    truth = np.zeros(m, dtype=int)
    out = outcomes(counts, truth, "gnmax", {"sigma": sigma, "delta": 1e-5}, draws=10, rng=1)
    p = stats.norm.cdf(8 / (sigma * math.sqrt(2)))
    assert np.all(out.answered == m) and np.all(out.bottom == 0)
    assert np.array_equal(out.correct + out.wrong, out.answered)
    assert abs(out.correct.sum() / (10 * m) - p) < 6 * math.sqrt(p * (1 - p) / (10 * m))
    assert out.epsilon > 0 and out.m == m and out.draws == 10


def test_outcomes_confident_threshold_and_btt_halting():
    counts = np.tile([10, 0], (50, 1))
    truth = np.zeros(50, dtype=int)
    none = outcomes(counts, truth, "confident-gnmax", {"threshold": 1000.0, "sigma1": 1.0, "sigma2": 1.0, "delta": 1e-5},
                    draws=4, rng=0)
    assert np.all(none.bottom == 50) and np.all(none.answered == 0)
    btt = outcomes(counts, truth, "btt", {"epsilon": 1.0, "delta": 1e-5, "T": 3, "calibration": "tight"}, draws=4, rng=0)
    # 10 teachers are far too few for BTT here: it stops after T = 3 abstentions.
    assert np.all(btt.bottom == 3) and np.all(btt.not_processed == 47) and not btt.feasible
    assert btt.mean()["bottom"] == 3 and btt.sd()["bottom"] == 0


def test_outcomes_per_draw_votes_and_shape_checks():
    sv = simulate_votes(m=30, k=11, n_classes=2, quality=TeacherQuality(accuracy=1.0, hard_share=0.0), rng=0, draws=5)
    out = outcomes(sv.counts, sv.truth, "gnmax", {"sigma": 0.01, "delta": 1e-5}, rng=0)
    assert out.draws == 5 and np.all(out.correct == 30)
    with pytest.raises(ParameterError):
        outcomes(sv.counts, sv.truth[:, :10], "gnmax", {"sigma": 1.0, "delta": 1e-5})
    with pytest.raises(ParameterError):
        outcomes(sv.counts, sv.truth, "no-such-mechanism", {})


def test_prediction_is_reproducible_and_useful_on_a_large_job():
    kw = dict(n=30000, m=2000, k=250, n_classes=2, quality=TeacherQuality(), draws=10)
    a = predict("gnmax", {"epsilon": 4.0, "delta": 1e-5}, **kw)
    b = predict("gnmax", {"epsilon": 4.0, "delta": 1e-5}, **kw)
    assert a == b
    assert a.useful and a.advice is None and a.feasible
    assert a.epsilon == pytest.approx(4.0, rel=1e-6) and a.answered == 2000
    assert a.correct + a.wrong == pytest.approx(a.answered)
    assert "predicted — no private data used" in a.summary()


def test_credit_job_is_called_not_useful_with_advice():
    # 700 private rows, 300 public, 35 teachers of 75% accuracy; 68% of rows in the majority class.
    q = TeacherQuality(accuracy=0.75, class_shares=(0.68, 0.32))
    p = predict("gnmax", {"epsilon": 2.0, "delta": 1e-5}, n=700, m=300, k=35, n_classes=2, quality=q)
    assert not p.useful
    assert p.label_accuracy < 0.68 and p.majority_share == pytest.approx(0.68)
    assert p.advice.startswith("Not useful") and "majority class" in p.advice
    assert "larger ε" in p.advice  # ε = 8 is predicted to be enough under this assumption


def test_refused_settings_are_a_prediction_not_an_error():
    p = predict("gnmax", {"delta": 1e-5}, n=1000, m=100, k=10, n_classes=2, advise=False)
    assert not p.feasible and "epsilon" in p.reason and math.isnan(p.epsilon)
    with pytest.raises(ParameterError):
        predict("gnmax", {"epsilon": 1.0, "delta": 1e-5}, n=5, m=100, k=10, n_classes=2)


def test_btt_advice_names_the_teachers_it_needs():
    p = predict("btt", {"epsilon": 2.0, "delta": 1e-5, "T": 10}, n=700, m=300, k=35, n_classes=2, draws=4)
    assert not p.useful and p.answered == 0
    assert "teachers" in p.advice


def test_sweep_and_predict_many():
    kw = dict(n=5000, m=500, k=100, n_classes=2, quality=TeacherQuality(accuracy=0.7), draws=6)
    curve = sweep("gnmax", {"delta": 1e-5}, vary="epsilon", values=[0.25, 1.0, 8.0], **kw)
    assert [c.settings["epsilon"] for c in curve] == [0.25, 1.0, 8.0]
    assert curve[0].correct < curve[2].correct
    ks = sweep("confident-gnmax", {"epsilon": 2.0, "delta": 1e-5}, vary="k", values=[20, 100], **kw)
    assert [c.k for c in ks] == [20, 100]
    many = predict_many([("gnmax", {"epsilon": 2.0, "delta": 1e-5}), ("btt", {"epsilon": 2.0, "delta": 1e-5, "T": 5})], **kw)
    assert [p.mechanism for p in many] == ["gnmax", "btt"]


def test_alternatives_cover_the_four_directions():
    p = predict("gnmax", {"epsilon": 1.0, "delta": 1e-5}, n=700, m=300, k=35, n_classes=2, draws=2, advise=False,
                quality=TeacherQuality(rows=20))
    words = " ".join(w for w, _, _ in alternatives(p))
    for part in ("larger ε", "fewer public rows", "more private rows", "fewer teachers", "the same k"):
        assert part in words
