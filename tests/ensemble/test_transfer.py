"""Tests of the student (core.ensemble.student), on LabelingResult objects built by hand."""

from __future__ import annotations

import builders
import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.semi_supervised import LabelSpreading, SelfTrainingClassifier
from sklearn.svm import LinearSVC

from core.ensemble.learners import make_learner
from core.ensemble.student import Student, least_confident_first, train_student
from core.errors import DataError, ParameterError
from core.mechanisms import BOTTOM, UNPROCESSED


class Recorder(ClassifierMixin, BaseEstimator):
    """Remembers its training rows (column 0 holds the row id) and labels."""

    def fit(self, X, y):
        self.rows_ = np.asarray(X)[:, 0].astype(int).copy()
        self.y_ = np.asarray(y).copy()
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])


def make_result(labels, scores=None, mechanism="btt", epsilon=2.0, delta=1e-5):
    return builders.make_result(labels, scores, mechanism, {"epsilon": epsilon, "delta": delta}, epsilon, delta,
                                accounting="by hand")


def two_blobs(m, seed=0):
    gen = np.random.default_rng(seed)
    truth = np.arange(m) % 2
    X = np.column_stack([np.arange(m), 4.0 * truth + gen.normal(size=m), gen.normal(size=m)])
    return X, truth


LABELS = [0, 1, BOTTOM, 2, 1, BOTTOM, 0, UNPROCESSED, UNPROCESSED, 2]


def test_drop_uses_only_answered_rows():
    X, _ = two_blobs(10)
    student = train_student(X, make_result(LABELS), Recorder(), bottom="drop", rng=0)
    answered = np.flatnonzero(np.asarray(LABELS) >= 0)
    assert np.array_equal(student.model.rows_, answered)
    assert np.array_equal(student.model.y_, np.asarray(LABELS)[answered])
    assert student.n_labeled == answered.size and student.n_random == 0 and student.n_unlabeled == 0
    assert student.bottom == "drop" and student.n_classes == 3


def test_random_labels_bottom_rows_and_skips_unprocessed():
    gen = np.random.default_rng(1)
    labels = gen.choice([0, 1, 2, BOTTOM, UNPROCESSED], size=1500)
    X = np.column_stack([np.arange(1500), gen.normal(size=1500)])
    student = train_student(X, make_result(labels), Recorder(), bottom="random", rng=0)
    used = np.flatnonzero(labels != UNPROCESSED)
    assert np.array_equal(student.model.rows_, used)
    given = student.model.y_
    kept = labels[used]
    assert np.array_equal(given[kept >= 0], kept[kept >= 0])  # answers untouched
    noisy = given[kept == BOTTOM]
    assert noisy.size == student.n_random == int((labels == BOTTOM).sum())
    assert set(np.unique(noisy)) == {0, 1, 2}  # all classes drawn: P(miss) <= 3 (2/3)^250 < 1e-40
    # roughly uniform: each class within 0.33 +- 0.12 of ~300 draws (Hoeffding, P < 1e-6 each)
    shares = np.bincount(noisy, minlength=3) / noisy.size
    assert np.all(np.abs(shares - 1 / 3) < 0.12)
    assert student.n_labeled == int((labels >= 0).sum()) + noisy.size
    again = train_student(X, make_result(labels), Recorder(), bottom="random", rng=0)
    assert np.array_equal(again.model.y_, given)


def test_random_uses_n_classes_for_missing_classes():
    X, _ = two_blobs(400)
    labels = np.full(400, BOTTOM)
    labels[:10] = [0, 1] * 5
    student = train_student(X, make_result(labels), Recorder(), bottom="random", n_classes=4, rng=0)
    assert set(np.unique(student.model.y_)) == {0, 1, 2, 3}  # P(a class missing) <= 4 (3/4)^390
    with pytest.raises(ParameterError, match="n_classes"):
        train_student(X, make_result(labels), Recorder(), bottom="random", n_classes=1)


def test_semi_self_training_uses_unlabeled_rows():
    X, truth = two_blobs(300, seed=2)
    labels = truth.copy()
    labels[30:280] = BOTTOM
    labels[280:] = UNPROCESSED
    student = train_student(X[:, 1:], make_result(labels), LogisticRegression(), bottom="semi", rng=0)
    assert isinstance(student.model, SelfTrainingClassifier)
    assert student.n_labeled == 30 and student.n_unlabeled == 270
    assert student.model.transduction_.shape == (300,)
    assert np.array_equal(student.model.transduction_[:30], truth[:30])
    assert (student.predict(X[:, 1:]) == truth).mean() > 0.9


def test_semi_falls_back_to_label_spreading_without_probabilities():
    X, truth = two_blobs(200, seed=3)
    labels = np.where(np.arange(200) < 40, truth, BOTTOM)
    student = train_student(X[:, 1:], make_result(labels), make_learner("linear_svm"), bottom="semi", rng=0)
    assert isinstance(student.model.steps[-1][1], LabelSpreading)
    assert (student.predict(X[:, 1:]) == truth).mean() > 0.9
    bare = train_student(X[:, 1:], make_result(labels), LinearSVC(), bottom="semi", rng=0)
    assert isinstance(bare.model, LabelSpreading)


def test_semi_without_abstentions_trains_the_learner_itself():
    X, truth = two_blobs(50)
    student = train_student(X[:, 1:], make_result(truth), LogisticRegression(), bottom="semi")
    assert isinstance(student.model, LogisticRegression) and student.n_unlabeled == 0


def test_soft_labels_are_thresholded_at_one_half():
    X, _ = two_blobs(6)
    labels = [1, 1, 1, BOTTOM, UNPROCESSED, 1]
    scores = [0.25, 0.5, 0.75, np.nan, np.nan, 0.45]
    student = train_student(X, make_result(labels, scores, mechanism="btt-soft"), Recorder(), rng=0)
    assert np.array_equal(student.model.rows_, [0, 1, 2, 5])
    assert np.array_equal(student.model.y_, [0, 1, 1, 0])
    assert student.n_classes == 2 and student.mechanism == "btt-soft"


def test_student_carries_the_labeling_guarantee():
    X, truth = two_blobs(40)
    student = train_student(X, make_result(truth, mechanism="lnmax", epsilon=3.5, delta=1e-6), "logistic_regression")
    assert isinstance(student, Student)
    assert (student.epsilon, student.delta, student.mechanism) == (3.5, 1e-6, "lnmax")


def test_dataframe_public_points():
    X, truth = two_blobs(60)
    frame = pd.DataFrame(X[:, 1:], columns=["a", "b"], index=np.arange(100, 160))
    labels = np.where(np.arange(60) % 3 == 0, BOTTOM, truth)
    student = train_student(frame, make_result(labels), "logistic_regression", rng=0)
    assert student.model.predict(frame).shape == (60,)


@pytest.mark.parametrize("bottom", ["drop", "random", "semi"])
def test_fewer_than_two_answered_classes(bottom):
    X, _ = two_blobs(20)
    labels = np.full(20, BOTTOM)
    labels[:5] = 1
    with pytest.raises(DataError, match="at least two classes"):
        train_student(X, make_result(labels), LogisticRegression(), bottom=bottom)


def test_bad_arguments():
    X, truth = two_blobs(20)
    with pytest.raises(ParameterError, match="bottom"):
        train_student(X, make_result(truth), LogisticRegression(), bottom="ignore")
    with pytest.raises(DataError, match="same points"):
        train_student(X[:19], make_result(truth), LogisticRegression())
    with pytest.raises(ParameterError, match="LabelingResult"):
        train_student(X, truth, LogisticRegression())
    with pytest.raises(DataError, match="label values"):
        train_student(X, make_result(np.r_[truth[:-1], -5]), LogisticRegression())


def test_least_confident_first_orders_by_max_probability():
    gen = np.random.default_rng(4)
    X = gen.normal(size=(200, 1))
    y = (X[:, 0] > 0).astype(int)
    model = LogisticRegression().fit(X, y)
    queries = np.array([[3.0], [0.05], [-1.0], [0.5], [-0.01], [2.0]])
    order = least_confident_first(model, queries)
    assert order.dtype == np.int64 and sorted(order) == list(range(6))
    confidence = model.predict_proba(queries).max(axis=1)
    assert np.all(np.diff(confidence[order]) >= 0)
    assert set(order[:2]) == {1, 4} and order[-1] == 0  # nearest the boundary first


def test_least_confident_first_fallbacks():
    gen = np.random.default_rng(5)
    X = gen.normal(size=(300, 2))
    y = np.digitize(X[:, 0], [-0.5, 0.5])
    svm = LinearSVC().fit(X, y)
    order = least_confident_first(svm, X[:50])
    d = np.sort(svm.decision_function(X[:50]), axis=1)
    margin = d[:, -1] - d[:, -2]
    assert np.all(np.diff(margin[order]) >= 0)
    binary = LinearSVC().fit(X, (y > 0).astype(int))
    order = least_confident_first(binary, X[:50])
    assert np.all(np.diff(np.abs(binary.decision_function(X[:50]))[order]) >= 0)
    with pytest.raises(ParameterError, match="confidence"):
        least_confident_first(Recorder().fit(np.c_[np.arange(4), np.ones(4)], [0, 1, 0, 1]), X[:3])
    assert least_confident_first(svm, np.zeros((0, 2))).shape == (0,)
