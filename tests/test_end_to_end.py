"""End to end (issue 3): private halfspaces → teachers → BTT (tight) / LNMax → student.

Fixed seeds; the thresholds leave wide margins over what these seeds give (noted beside
each), and each quantity is a sum of thousands of nearly independent events, so a
different seed would fail with probability far below 1e-6 (Hoeffding: e.g. the 2,000
public labels at 95%+ accuracy when the ensemble's plurality is ~99.5% correct).
"""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from core import btt_label, lnmax_label, train_student, train_teachers
from core.data import halfspaces

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def task():
    X, y = halfspaces(200_000 + 2_000 + 10_000, 20, rng=20261123)
    return {
        "X_priv": X[:200_000], "y_priv": y[:200_000],
        "X_pub": X[200_000:202_000], "y_pub": y[200_000:202_000],
        "X_test": X[202_000:], "y_test": y[202_000:],
    }


def test_btt_tight_end_to_end(task):
    teachers = train_teachers(task["X_priv"], task["y_priv"], LogisticRegression(), k=2000, rng=1)
    votes = teachers.vote_counts(task["X_pub"])
    res = btt_label(votes, epsilon=8.0, delta=1e-5, T=50, calibration="tight", rng=2)
    assert res.epsilon <= 8.0 and res.delta <= 1e-5
    assert res.n_answered >= 150
    answered = res.answered
    error = np.mean(res.labels[answered] != task["y_pub"][answered])
    assert error < 0.02
    student = train_student(task["X_pub"], res, LogisticRegression(), bottom="drop")
    acc = np.mean(student.model.predict(task["X_test"]) == task["y_test"])
    assert acc >= 0.90
    assert (student.epsilon, student.delta) == (res.epsilon, res.delta)


def test_lnmax_end_to_end(task):
    teachers = train_teachers(task["X_priv"], task["y_priv"], LogisticRegression(), k=250, rng=3)
    votes = teachers.vote_counts(task["X_pub"])
    res = lnmax_label(votes, gamma=0.05, delta=1e-5, rng=4)
    assert res.n_answered == 2000
    assert np.mean(res.labels == task["y_pub"]) >= 0.95
    assert res.epsilon_data_dependent is not None and 0 < res.epsilon_data_dependent < res.epsilon
