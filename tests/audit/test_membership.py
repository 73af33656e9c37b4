"""The loss-threshold membership attack: a leak on an overfit model, none on the student at ε = 1.

False-failure rates.  ``null_tolerance`` is exceeded by a model that reveals nothing with
probability ≤ 1e-6 (DKW with Massart's constant on each side, module docstring of
core.audit.membership).  So ``test_student_at_epsilon_1_shows_no_leak`` fails with probability
≤ 1e-6 when the student's losses on private and on held-out rows have the same distribution
(the student never saw either; it sees private rows only through labels released at ε = 1).
``test_overfit_model_leaks`` asserts the advantage is above that tolerance: on 1,000 members
and 1,000 non-members with 30 % of labels flipped, an unpruned tree's advantage is about
0.3 above zero (its expected value, the share of held-out rows it gets wrong), against a
tolerance of 0.17; the seeds are fixed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from core import pipeline
from core.audit.membership import dp_advantage_bound, leak_story, membership_attack, null_tolerance
from core.data.table import table_from_arrays


def noisy_table(n: int, seed: int, flip: float = 0.3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    y = np.where(rng.random(n) < flip, 1 - y, y)
    return table_from_arrays(X, y, name=f"noisy-{seed}")


def test_null_tolerance_and_dp_bound_formulas():
    assert math.isclose(null_tolerance(1000, 1000, 1e-6), 2 * math.sqrt(math.log(4e6) / 2000))
    assert math.isclose(dp_advantage_bound(1.0), (math.e - 1) / (math.e + 1))
    assert dp_advantage_bound(0.0) == 0.0 and dp_advantage_bound(1000.0) == 1.0


def test_overfit_model_leaks():
    members, outside = noisy_table(1000, 1), noisy_table(1000, 2)
    model = pipeline.teacher_model(members, "decision_tree", {"max_depth": None, "min_samples_leaf": 1}).fit(
        members.features, members.labels)
    attack = membership_attack(model, (members.features, members.labels), (outside.features, outside.labels), rng=0)
    assert attack.tolerance < 0.18
    assert attack.advantage > attack.tolerance + 0.05 and attack.leaks
    assert attack.auc > 0.6 and attack.member_loss < attack.nonmember_loss
    assert attack.fpr[0] == 0.0 and attack.tpr[-1] == 1.0 and attack.fpr[-1] == 1.0


def test_student_at_epsilon_1_shows_no_leak():
    private, public, outside = noisy_table(3000, 3, flip=0.1), noisy_table(1000, 4, flip=0.1), noisy_table(1000, 5, flip=0.1)
    teachers = pipeline.train(private, "logistic_regression", None, 50, rng=0)
    votes, _ = pipeline.votes_and_predictions(teachers, private, public.features)
    result = pipeline.label(votes, "gnmax", {"epsilon": 1.0, "delta": 1e-5}, rng=1)
    assert result.epsilon <= 1.0 + 1e-9 and result.n_answered > 500
    student = pipeline.student(public.features, result, "decision_tree", None, private, rng=2)
    story = leak_story(private, outside, learner="decision_tree", params={"max_depth": None}, k=50,
                       student=student.model, rng=6)
    assert story.student.advantage <= story.student.tolerance, (story.student.advantage, story.student.tolerance)
    assert story.student.advantage < dp_advantage_bound(1.0, 1e-5)
    # The same attack on a non-private model fitted to the same rows does leak.
    assert story.nonprivate.leaks
    assert story.chunk == 60 and story.teacher.n_members == 60


def test_attack_needs_rows_on_both_sides():
    from core.errors import ParameterError

    t = noisy_table(50, 7)
    model = pipeline.teacher_model(t, "decision_tree", None).fit(t.features, t.labels)
    with pytest.raises(ParameterError):
        membership_attack(model, (t.features, t.labels), (t.features.iloc[:0], t.labels[:0]))
