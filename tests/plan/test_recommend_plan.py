"""recommend_settings checked by the plan: useful settings, a switch, or a plain "none is useful"."""

from __future__ import annotations

import pytest

from core.errors import ParameterError
from core.plan import TeacherQuality
from core.recommend import quality_from, recommend_settings


def test_credit_job_is_not_called_recommended():
    # 700 private rows (476 / 224 per class), 300 public rows, ε = 2: labels near a coin flip.
    # the majority share is private: without majority_share the plan assumes balanced classes, never
    # the private counts' 68 %; the data owner who knows the share gives it
    free = recommend_settings(n_private=700, class_counts=[476, 224], epsilon=2.0, delta=1e-5, m=300,
                              quality=TeacherQuality(accuracy=0.75))
    assert free.prediction.majority_share == pytest.approx(0.5)
    rec = recommend_settings(n_private=700, class_counts=[476, 224], epsilon=2.0, delta=1e-5, m=300,
                             quality=TeacherQuality(accuracy=0.75), majority_share=0.68)
    assert not rec.useful and rec.advice and rec.prediction is not None
    assert rec.prediction.label_accuracy < 0.68 and rec.prediction.majority_share == pytest.approx(0.68)
    assert any(r.startswith("No setting is useful") for r in rec.reasons)
    assert any("predicted, no privacy spent" in r for r in rec.reasons)
    assert not any("no private data used" in r for r in rec.reasons)  # recommend may read the private file


def test_large_job_stays_recommended_with_its_prediction():
    rec = recommend_settings(n_private=32_561, class_counts=[24_720, 7_841], epsilon=2.0, delta=1e-5, m=2000)
    assert rec.useful and rec.advice is None and rec.prediction.useful
    assert rec.prediction.mechanism == rec.mechanism and rec.prediction.k == rec.k


def test_majority_share_assumption_and_quality_from_agreement():
    rec = recommend_settings(n_private=700, class_counts=[350, 350], epsilon=2.0, delta=1e-5, m=300,
                             majority_share=0.9, quality=TeacherQuality(accuracy=0.8))
    assert rec.prediction.majority_share == pytest.approx(0.9) and not rec.useful
    with pytest.raises(ParameterError):
        recommend_settings(n_private=700, class_counts=[350, 350], epsilon=2.0, delta=1e-5, m=300, majority_share=0.2)
    q = quality_from([0.95, 0.97, 0.6, 0.7], (0.5, 0.5))
    assert q.hard_share == 0.5 and q.accuracy == pytest.approx(0.96) and q.hard_accuracy == pytest.approx(0.65)
    assert quality_from(0.9).hard_share == 0.0 and quality_from(None).accuracy == TeacherQuality().accuracy


def test_when_nothing_is_useful_the_least_bad_counts_every_route():
    """No route useful (a 90 % majority class): the least bad is the prediction with the most right labels
    among the ensemble's and the DP-training routes, said in the reasons (a trial found Confident-GNMax at
    53 % named least bad beside a DP logistic regression at 68 %)."""
    from core.plan import PublicRows

    public = PublicRows.standin(300, 5)
    rec = recommend_settings(n_private=400, class_counts=[200, 200], epsilon=1.0, delta=1e-5, m=300,
                             majority_share=0.9, public=public, model_accuracy=0.8)
    assert not rec.useful and rec.prediction is not None
    plans = [r for r in rec.reasons if r.startswith("Plan of ")]
    assert len(plans) == 2
    assert rec.mechanism.startswith("dp-") and any(r.startswith(f"Least bad: {rec.mechanism}") for r in rec.reasons)
