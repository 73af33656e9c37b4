"""Tests of the teacher ensemble (core.ensemble.teachers)."""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest
from joblib import parallel_config
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.compose import ColumnTransformer
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.validation import check_is_fitted

from core.errors import DataError, ParameterError
from core.ensemble.learners import make_learner
from core.ensemble.inputs import seed_estimator
from core.ensemble.teacher_ensemble import ConstantClassifier, TeacherEnsemble, default_block_size
from core.ensemble.teachers import train_teachers


class RowRecorder(ClassifierMixin, BaseEstimator):
    """Remembers which rows it was fitted on (column 0 holds the row id); predicts class 0."""

    def fit(self, X, y):
        X = np.asarray(X)
        self.rows_ = X[:, 0].astype(int).copy()
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])


class Failing(ClassifierMixin, BaseEstimator):
    def fit(self, X, y):
        raise ValueError("this learner refuses to fit")

    def predict(self, X):  # pragma: no cover - never fitted
        return np.zeros(len(X), dtype=int)


class Warns(ClassifierMixin, BaseEstimator):
    def fit(self, X, y):
        warnings.warn("tiny chunk, results may be poor", RuntimeWarning)
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])


def gaussian_task(n, n_classes=3, d=5, seed=0):
    gen = np.random.default_rng(seed)
    y = gen.integers(n_classes, size=n)
    X = 2.0 * y[:, None] + gen.normal(size=(n, d))
    return X, y


def balanced_ids(n, seed=0):
    """Row ids in column 0 and balanced random binary labels."""
    gen = np.random.default_rng(seed)
    X = np.column_stack([np.arange(n), gen.normal(size=n)])
    y = gen.permutation(np.arange(n) % 2)
    return X, y


# --------------------------------------------------------------------------- the split


@pytest.mark.parametrize("n, k", [(1000, 10), (1003, 7), (64, 32)])
def test_chunks_are_disjoint_cover_every_row_once_and_near_equal(n, k):
    # 64 rows / 32 teachers gives 2-row chunks, many of them single-class: only the
    # non-constant ones record their rows, so check coverage only when all are recorders.
    X, y = balanced_ids(n)
    ens = train_teachers(X, y, RowRecorder(), k, rng=3)
    assert ens.k == k and len(ens) == k and ens.n_rows == n
    sizes = ens.chunk_sizes
    assert sizes.sum() == n and sizes.max() - sizes.min() <= 1
    assert set(sizes) <= {n // k, -(-n // k)}
    recorded = [t.rows_ for t in ens.teachers if isinstance(t, RowRecorder)]
    for teacher, size in zip(ens.teachers, sizes):
        if isinstance(teacher, RowRecorder):
            assert teacher.rows_.size == size
    if len(recorded) == k:
        rows = np.concatenate(recorded)
        assert rows.size == n and np.array_equal(np.sort(rows), np.arange(n))
    else:
        rows = np.concatenate(recorded)
        assert np.unique(rows).size == rows.size  # still disjoint


def test_split_is_data_independent_and_random():
    # Same n and seed, different data values: identical chunks.  (Chunks with 500 rows
    # of balanced labels are never single-class: probability 2 * 2**-500.)
    X1, y1 = balanced_ids(1000, seed=1)
    X2, y2 = balanced_ids(1000, seed=2)
    X2[:, 1] *= 100.0
    a = train_teachers(X1, y1, RowRecorder(), 2, rng=11)
    b = train_teachers(X2, y2, RowRecorder(), 2, rng=11)
    for ta, tb in zip(a.teachers, b.teachers):
        assert np.array_equal(ta.rows_, tb.rows_)
    # a random permutation, not consecutive blocks of the input order
    assert not np.array_equal(a.teachers[0].rows_, np.arange(500))
    c = train_teachers(X1, y1, RowRecorder(), 2, rng=12)
    assert not np.array_equal(a.teachers[0].rows_, c.teachers[0].rows_)


def test_teachers_are_independent_clones_and_template_untouched():
    X, y = gaussian_task(600)
    template = LogisticRegression(max_iter=300)
    ens = train_teachers(X, y, template, 6, rng=0)
    with pytest.raises(NotFittedError):
        check_is_fitted(template)
    teachers = ens.teachers
    assert len({id(t) for t in teachers}) == 6 and all(t is not template for t in teachers)
    coefs = [t.coef_ for t in teachers]
    assert not np.allclose(coefs[0], coefs[1])  # fitted on different chunks
    with pytest.raises(NotFittedError):
        check_is_fitted(ens.learner)


# --------------------------------------------------------------------------- outputs


@pytest.fixture(scope="module")
def tree_ensemble():
    X, y = gaussian_task(900, n_classes=4, seed=5)
    ens = train_teachers(X, y, DecisionTreeClassifier(max_depth=3), 30, rng=1)
    Q, _ = gaussian_task(257, n_classes=4, seed=6)
    return ens, Q


def test_vote_counts_sum_to_k_and_match_direct_count(tree_ensemble):
    ens, Q = tree_ensemble
    counts = ens.vote_counts(Q)
    assert counts.shape == (257, 4) and counts.dtype == np.int32
    assert np.all(counts.sum(axis=1) == ens.k)
    direct = np.zeros((257, 4), dtype=int)
    for teacher in ens.teachers:
        pred = teacher.predict(Q)
        for i, c in enumerate(pred):
            direct[i, c] += 1
    assert np.array_equal(counts, direct)
    preds = ens.predictions(Q)
    assert preds.shape == (257, ens.k)
    assert np.array_equal(preds[:, 3], ens.teachers[3].predict(Q))
    from_preds = np.stack([(preds == c).sum(axis=1) for c in range(4)], axis=1)
    assert np.array_equal(counts, from_preds)


@pytest.mark.parametrize("block_size", [5, 64, 256, 257, 10_000])
def test_blocked_equals_unblocked(tree_ensemble, block_size):
    ens, Q = tree_ensemble
    whole = ens.vote_counts(Q, block_size=10**6)
    assert np.array_equal(ens.vote_counts(Q, block_size=block_size), whole)
    assert np.array_equal(ens.predictions(Q, block_size=block_size), ens.predictions(Q, block_size=10**6))


def test_threaded_prediction_equals_sequential(tree_ensemble):
    ens, Q = tree_ensemble
    expected = ens.vote_counts(Q)
    ens.n_jobs = 2
    try:
        assert np.array_equal(ens.vote_counts(Q, block_size=50), expected)
    finally:
        ens.n_jobs = None


def test_default_block_size_bounds_the_block_bytes():
    assert default_block_size(10) == 65_536  # capped
    assert default_block_size(784) == 32 * 2**20 // (8 * 784)
    assert default_block_size(10**6) == 1_024  # floor
    assert default_block_size(0) == 65_536


def test_ensemble_block_size_attribute(tree_ensemble):
    ens, Q = tree_ensemble
    expected = ens.vote_counts(Q)
    ens.block_size = 10
    try:
        assert np.array_equal(ens.vote_counts(Q), expected)
    finally:
        ens.block_size = None


def test_bad_block_size(tree_ensemble):
    ens, Q = tree_ensemble
    with pytest.raises(ParameterError, match="block_size"):
        ens.vote_counts(Q, block_size=0)


def test_vote_counts_memory_is_bounded():
    # 20,000 queries x 200 teachers: an m x k int32 matrix would take 16 MB.  Blocked
    # counting keeps the peak near the (m, C) result plus one block.
    X, y = gaussian_task(2000, n_classes=2, d=2, seed=2)
    ens = train_teachers(X, y, DecisionTreeClassifier(max_depth=1), 200, rng=0)
    Q, _ = gaussian_task(20_000, n_classes=2, d=2, seed=3)
    tracemalloc.start()
    try:
        counts = ens.vote_counts(Q, block_size=2000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert counts.sum() == 20_000 * 200
    assert peak < 20_000 * 200 * 4 / 8


def test_missing_classes_map_onto_global_list():
    # labels use classes 0 and 2 of 3: teachers never see class 1
    X, y = gaussian_task(300, n_classes=2, seed=4)
    y = 2 * y
    ens = train_teachers(X, y, LogisticRegression(), 5, n_classes=3, rng=0)
    assert ens.n_classes == 3
    counts = ens.vote_counts(X)
    assert counts.shape == (300, 3) and np.all(counts[:, 1] == 0)
    assert set(np.unique(ens.predictions(X))) <= {0, 2}


def test_single_class_chunks_become_constant_teachers():
    # 3 rows of class 1 among 40; 20 chunks of 2 rows: at least 17 chunks are all class 0
    X, y = gaussian_task(40, n_classes=2, seed=0)
    y = np.zeros(40, dtype=int)
    y[:3] = 1
    ens = train_teachers(X, y, LogisticRegression(), 20, rng=0)
    assert ens.n_constant >= 17
    constants = [t for t in ens.teachers if isinstance(t, ConstantClassifier)]
    assert all(t.constant_ == 0 for t in constants if np.array_equal(t.classes_, [0]))
    counts = ens.vote_counts(X)
    assert np.all(counts.sum(axis=1) == 20) and np.all(counts[:, 0] >= ens.n_constant - 3)
    scores = ens.scores(X)
    for j, teacher in enumerate(ens.teachers):
        if isinstance(teacher, ConstantClassifier):
            assert np.all(scores[:, j] == float(teacher.constant_ == 1))


def test_constant_classifier_conventions():
    model = ConstantClassifier().fit(np.zeros((3, 2)), [4, 4, 4])
    assert list(model.classes_) == [4] and model.n_features_in_ == 2
    assert np.array_equal(model.predict(np.zeros((2, 2))), [4, 4])
    assert np.array_equal(model.predict_proba(np.zeros((2, 2))), [[1.0], [1.0]])
    assert model.score(np.zeros((2, 2)), [4, 4]) == 1.0


def test_dataframe_input_with_pipeline():
    gen = np.random.default_rng(0)
    n = 400
    colour = gen.choice(["red", "green", "blue"], size=n)
    size = gen.normal(size=n)
    y = ((colour == "red") | (size > 1)).astype(int)
    frame = pd.DataFrame({"colour": colour, "size": size}, index=np.arange(1000, 1000 + n))
    pipeline = make_pipeline(
        ColumnTransformer(
            [("cat", OneHotEncoder(handle_unknown="ignore"), ["colour"]), ("num", StandardScaler(), ["size"])]
        ),
        LogisticRegression(),
    )
    ens = train_teachers(frame, pd.Series(y), pipeline, 8, rng=0)
    counts = ens.vote_counts(frame.iloc[:50], block_size=16)
    assert counts.shape == (50, 2) and np.all(counts.sum(axis=1) == 8)
    assert (counts.argmax(axis=1) == y[:50]).mean() > 0.8
    scores = ens.scores(frame.iloc[:50])
    assert scores.shape == (50, 8) and scores.dtype == np.float32


def test_progress_is_called_k_times_ending_at_k():
    X, y = gaussian_task(200)
    calls = []
    train_teachers(X, y, DecisionTreeClassifier(), 9, rng=0, progress=lambda d, t: calls.append((d, t)))
    assert calls == [(d, 9) for d in range(1, 10)]


def test_progress_with_a_backend_without_result_generators():
    # multiprocessing cannot stream results; training falls back to batches
    X, y = gaussian_task(200)
    calls = []
    with parallel_config(backend="multiprocessing", n_jobs=2):
        ens = train_teachers(X, y, DecisionTreeClassifier(), 9, rng=0, progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (9, 9) and all(t == 9 for _, t in calls)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert ens.k == 9


def test_fixed_seed_is_reproducible_and_independent_of_n_jobs():
    X, y = gaussian_task(600, seed=1)
    Q, _ = gaussian_task(100, seed=2)
    learner = make_learner("random_forest", n_estimators=5)
    a = train_teachers(X, y, learner, 6, rng=42, n_jobs=1)
    b = train_teachers(X, y, learner, 6, rng=42, n_jobs=2)
    c = train_teachers(X, y, learner, 6, rng=43, n_jobs=1)
    pa, pb, pc = a.predictions(Q), b.predictions(Q), c.predictions(Q)
    assert np.array_equal(pa, pb)
    np.testing.assert_array_equal(a.vote_counts(Q), b.vote_counts(Q))
    assert not np.array_equal(pa, pc)
    # teachers got distinct seeds
    states = {t.random_state for t in a.teachers}
    assert len(states) == 6


def test_seed_estimator_sets_nested_random_states():
    pipe = make_pipeline(StandardScaler(), DecisionTreeClassifier())
    seed_estimator(pipe, 7)
    assert isinstance(pipe.get_params()["decisiontreeclassifier__random_state"], int)


def test_scores_shape_range_and_errors():
    X, y = gaussian_task(300, n_classes=2)
    ens = train_teachers(X, y, "logistic_regression", 5, rng=0)
    s = ens.scores(X[:40])
    assert s.shape == (40, 5) and s.dtype == np.float32
    assert np.all((s >= 0) & (s <= 1))
    direct = ens.teachers[2].predict_proba(X[:40])[:, 1]
    np.testing.assert_allclose(s[:, 2], direct, rtol=1e-6)
    multi = train_teachers(*gaussian_task(300, n_classes=3), "gaussian_nb", 5, rng=0)
    with pytest.raises(ParameterError, match="binary"):
        multi.scores(X[:5])
    svm = train_teachers(X, y, "linear_svm", 5, rng=0)
    with pytest.raises(ParameterError, match="predict_proba"):
        svm.scores(X[:5])


def test_learner_failure_names_the_teacher():
    X, y = gaussian_task(100, n_classes=2)
    with pytest.raises(DataError, match=r"Teacher \d+ \(Failing\).*refuses to fit"):
        train_teachers(X, y, Failing(), 4, rng=0)


def test_fit_warnings_are_summarised_once():
    X, y = gaussian_task(200, n_classes=2)
    with pytest.warns(RuntimeWarning, match=r"^\d+ of 10 teachers warned while fitting: tiny chunk") as record:
        train_teachers(X, y, Warns(), 10, rng=0)
    assert len([w for w in record if issubclass(w.category, RuntimeWarning)]) == 1


def test_query_rows_with_wrong_columns():
    X, y = gaussian_task(200, n_classes=2, d=5)
    ens = train_teachers(X, y, LogisticRegression(), 4, rng=0)
    with pytest.raises(DataError, match="could not predict"):
        ens.vote_counts(np.zeros((3, 4)))
    with pytest.raises(DataError, match="no query rows"):
        ens.vote_counts(np.zeros((0, 5)))


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"k": 1}, ParameterError, "at least 2"),
        ({"k": 150}, ParameterError, "fewer than two rows"),
        ({"y": np.zeros(199, dtype=int)}, DataError, "one label per row"),
        ({"y": np.array(["a", "b"] * 100), "n_classes": 2}, DataError, "encode"),  # ids of a declared list
        ({"y": -np.ones(200, dtype=int), "n_classes": 2}, DataError, "negative"),
        ({"y": np.array([0.0, np.nan] * 100)}, DataError, "no missing values"),
        ({"y": np.array([1, "a"] * 100, dtype=object)}, DataError, "cannot be ordered"),
        ({"y": np.zeros(200, dtype=int)}, DataError, "single class"),
        ({"n_classes": 1}, ParameterError, "n_classes"),
        ({"n_jobs": 0}, ParameterError, "n_jobs"),
        ({"learner": object()}, ParameterError, "scikit-learn classifier"),
        ({"learner": "svm"}, ParameterError, "Unknown learner"),
        ({"X": np.zeros(200)}, DataError, "2-D"),
    ],
)
def test_bad_arguments(kwargs, error, match):
    X, y = gaussian_task(200, n_classes=2)
    args = {"X": X, "y": y, "learner": LogisticRegression(), "k": 4} | kwargs
    with pytest.raises(error, match=match):
        train_teachers(args.pop("X"), args.pop("y"), args.pop("learner"), args.pop("k"), rng=0, **args)


@pytest.mark.slow
def test_dask_backend():
    distributed = pytest.importorskip("distributed")
    X, y = gaussian_task(300)
    calls = []
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None):
        with parallel_config(backend="dask"):
            ens = train_teachers(
                X, y, DecisionTreeClassifier(), 6, rng=0, progress=lambda d, t: calls.append((d, t))
            )
    local = train_teachers(X, y, DecisionTreeClassifier(), 6, rng=0)
    assert calls[-1] == (6, 6) and len(calls) == 6
    assert np.array_equal(ens.predictions(X), local.predictions(X))


def test_ensemble_repr_has_no_data():
    X, y = gaussian_task(100, n_classes=2)
    ens = train_teachers(X, y, LogisticRegression(), 4, rng=0)
    assert isinstance(ens, TeacherEnsemble)
    assert repr(ens) == "TeacherEnsemble(k=4, n_classes=2, learner=LogisticRegression, chunk sizes 25-25)"


def test_votes_and_predictions_from_one_pass_equal_the_two_passes():
    from sklearn.linear_model import LogisticRegression

    from core.data import halfspaces

    X, y = halfspaces(3000, 3, rng=1)
    t = train_teachers(X[:2500], y[:2500], LogisticRegression(), 25, n_classes=2, rng=0)
    counts, preds = t.votes_and_predictions(X[2500:], block_size=64)
    assert np.array_equal(counts, t.vote_counts(X[2500:]))
    assert np.array_equal(preds, t.predictions(X[2500:]))
    assert counts.dtype == np.int32 and (counts.sum(axis=1) == 25).all()
