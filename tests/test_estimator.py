"""PrivateEnsembleClassifier: fit/predict, budget spent across calls, BudgetExhausted."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from core import PrivateEnsembleClassifier
from core.data import halfspaces
from core.errors import BudgetExhausted, NotFittedError, ParameterError


@pytest.fixture(scope="module")
def data():
    X, y = halfspaces(24_000, 5, rng=3)
    return X[:20_000], y[:20_000], X[20_000:], y[20_000:]


def test_budget_spent_across_calls_then_exhausted(data):
    X, y, Xq, yq = data
    clf = PrivateEnsembleClassifier(LogisticRegression(), k=1000, mechanism="btt", epsilon=4.0, delta=1e-5,
                                    T=10, max_queries=300, calibration="tight", rng=1)
    clf.fit(X, y)
    assert clf.privacy_spent_ == (0.0, 0.0)
    spent, outs = [], []
    with pytest.raises(BudgetExhausted, match="budget is spent"):
        for start in range(0, 4000, 50):  # the budget (300 queries or 10 abstentions) ends first
            outs.append(clf.predict(Xq[start : start + 50]))
            spent.append(clf.privacy_spent_)
    assert 1 <= len(outs) <= 6
    assert clf.n_queries_ <= 300 and clf.n_bottom_ <= 10
    eps, dlt = zip(*spent)
    assert all(a <= b for a, b in zip(eps, eps[1:])) and all(a <= b for a, b in zip(dlt, dlt[1:]))
    assert 0 < eps[-1] <= 4.0 and 0 < dlt[-1] <= 1e-5
    out = np.concatenate(outs)
    answered = out != -1
    assert answered.sum() >= 40
    assert np.mean(out[answered] == yq[: out.size][answered]) > 0.9


def test_halts_at_cutoff_with_weak_teachers():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((4000, 3))
    y = rng.integers(2, size=4000)  # labels independent of features: ties everywhere
    clf = PrivateEnsembleClassifier(LogisticRegression(), k=100, mechanism="btt", epsilon=1.0, T=3,
                                    max_queries=1000, calibration="tight", rng=2).fit(X, y)
    out = clf.predict(rng.standard_normal((500, 3)))
    assert clf.n_bottom_ == 3 and clf.halted_
    assert np.all(out == -1)
    with pytest.raises(BudgetExhausted):
        clf.predict(rng.standard_normal((5, 3)))


@pytest.mark.parametrize("mechanism", ["lnmax", "baseline"])
def test_other_mechanisms(data, mechanism):
    X, y, Xq, yq = data
    clf = PrivateEnsembleClassifier(LogisticRegression(), k=500, mechanism=mechanism, epsilon=8.0,
                                    max_queries=200, gamma=0.05, rng=4).fit(X, y)
    out = clf.predict(Xq[:200])
    answered = out != -1
    assert answered.sum() > 0
    assert np.mean(out[answered] == yq[:200][answered]) > 0.9
    eps, delta = clf.privacy_spent_
    assert eps > 0
    with pytest.raises(BudgetExhausted):
        clf.predict(Xq[:1])


def test_string_classes_and_errors(data):
    X, y, Xq, _ = data
    names = np.array(["neg", "pos"])[y]
    clf = PrivateEnsembleClassifier(LogisticRegression(), k=50, mechanism="lnmax", max_queries=10, rng=5)
    with pytest.raises(NotFittedError):
        clf.predict(Xq[:3])
    clf.fit(X, names)
    assert set(clf.predict(Xq[:10])) <= {"neg", "pos", -1}
    with pytest.raises(ParameterError):
        PrivateEnsembleClassifier(LogisticRegression(), mechanism="magic").fit(X, y)
