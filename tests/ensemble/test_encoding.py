"""Encode once: the shared-encoding votes equal the per-teacher path's (fixed seeds)."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest

from core import pipeline
from core.data import load_bundled
from core.ensemble.encoding import SharedEncoder
from core.ensemble.voter import EncodedVoter


@pytest.fixture(scope="module")
def adult():
    out = {}
    for missing in ("impute", "drop"):
        private = load_bundled("adult_train", missing=missing)
        private = dataclasses.replace(private, features=private.features.iloc[:2000].reset_index(drop=True),
                                      labels=private.labels[:2000], rows=private.rows[:2000])
        public = load_bundled("adult_test", missing=missing).features.iloc[:800].reset_index(drop=True)
        out[missing] = private, public
    return out


def both_paths(ensemble, X, what, block_size=None):
    ensemble.encode_once = False
    slow = getattr(ensemble, what)(X, block_size=block_size)
    ensemble.encode_once = True
    fast = getattr(ensemble, what)(X, block_size=block_size)
    return slow, fast


CASES = [
    ("logistic_regression", None, True),
    ("linear_svm", None, True),
    ("gaussian_nb", None, True),
    ("logistic_regression", {"standardize": False, "C": 0.3}, True),
    ("knn", None, False),
    ("random_forest", {"n_estimators": 3}, False),
    ("decision_tree", {"max_depth": 4}, False),
]


@pytest.mark.parametrize("missing, learner, params, linear",
                         [("impute", *case) for case in CASES] + [("drop", *CASES[0]), ("drop", *CASES[2])])
def test_votes_equal_the_per_teacher_path_on_adult(adult, missing, learner, params, linear):
    private, public = adult[missing]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ensemble = pipeline.train(private, learner, params, 25, rng=3)
    slow, fast = both_paths(ensemble, public, "predictions", block_size=300)  # the vocabulary grows per block
    assert np.array_equal(slow, fast)
    slow_counts, fast_counts = both_paths(ensemble, public, "vote_counts")
    assert np.array_equal(slow_counts, fast_counts)
    voter = ensemble.voter(public)
    assert voter is not None and (voter.n_linear == 25) == linear
    if missing == "impute":  # public rows with missing cells took every teacher's own imputation
        assert public.isna().any(axis=1).sum() > 10


@pytest.mark.parametrize("missing", ["impute", "drop"])
def test_naive_bayes_behind_standardized_numbers_folds_its_quadratic(adult, missing):
    """Gaussian naive Bayes behind ``preprocessor(standardize=True)``: the scaling folded into
    its squares (q·z² with z = (v − μ)/s), stacked, and the same votes as each teacher's own."""
    from sklearn.naive_bayes import GaussianNB
    from sklearn.pipeline import make_pipeline

    from core.ensemble.teachers import train_teachers

    private, public = adult[missing]
    model = make_pipeline(private.preprocessor(standardize=True), GaussianNB())
    ensemble = train_teachers(private.features, private.labels, model, 20, n_classes=2, rng=5)
    slow, fast = both_paths(ensemble, public, "predictions", block_size=300)
    assert np.array_equal(slow, fast)
    assert ensemble.voter(public).n_linear == 20


def test_scores_equal_the_per_teacher_path(adult):
    private, public = adult["impute"]
    ensemble = pipeline.train(private, "logistic_regression", None, 20, rng=1)
    slow, fast = both_paths(ensemble, public, "scores")
    np.testing.assert_allclose(slow, fast, rtol=0, atol=1e-6)  # float32 output either way


def test_a_public_category_no_teacher_saw_encodes_as_zeros(adult):
    private, public = adult["drop"]
    public = public.copy()
    public.loc[:99, "occupation"] = "Astronaut"
    public.loc[100:199, "native-country"] = "Atlantis"
    ensemble = pipeline.train(private, "logistic_regression", None, 30, rng=2)
    slow, fast = both_paths(ensemble, public, "predictions")
    assert np.array_equal(slow, fast)
    assert "Astronaut" in list(ensemble.voter(public).encoder.vocabulary(
        ensemble.voter(public).encoder.categorical.index("occupation")))


@pytest.mark.parametrize("learner", ["logistic_regression", "gaussian_nb", "linear_svm", "knn"])
def test_multiclass_and_plain_numeric_tables(learner):
    table = load_bundled("wine")
    gen = np.random.default_rng(0)
    order = gen.permutation(table.n_rows)
    private = dataclasses.replace(table, features=table.features.iloc[order[:120]].reset_index(drop=True),
                                  labels=table.labels[order[:120]], rows=table.rows[order[:120]])
    public = table.features.iloc[order[120:]].reset_index(drop=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ensemble = pipeline.train(private, learner, None, 12, rng=4)
    X = pipeline.model_input(private, public)
    assert isinstance(X, np.ndarray) and pipeline.plain_numeric(private)
    slow, fast = both_paths(ensemble, X, "predictions")
    assert np.array_equal(slow, fast)
    assert len(np.unique(slow)) == 3


def test_cells_a_teacher_must_refuse_still_reach_the_teacher():
    from core.errors import DataError

    table = load_bundled("wine")
    ensemble = pipeline.train(table, "logistic_regression", None, 5, rng=0)
    X = pipeline.model_input(table, table.features.iloc[:20]).copy()
    X[3, 2] = np.inf
    with pytest.raises(DataError, match="could not predict"):
        ensemble.vote_counts(X)


def test_shared_encoder_codes_are_stable_and_public():
    enc = SharedEncoder(["x"], ["c"])
    first = enc.encode(pd.DataFrame({"x": [1.0, 2.0], "c": pd.Series(["b", None], dtype=object)}))
    second = enc.encode(pd.DataFrame({"x": [3.0, np.nan], "c": ["a", "b"]}))
    assert first.codes[:, 0].tolist() == [0, -1]
    assert second.codes[:, 0].tolist() == [1, 0]  # 'b' keeps its code; 'a' is new
    assert list(enc.vocabulary(0)) == ["b", "a"]
    assert np.isnan(second.numeric[1, 0])


def test_custom_pipelines_use_the_per_teacher_path():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import PolynomialFeatures
    from sklearn.linear_model import LogisticRegression

    from core.ensemble.teachers import train_teachers

    gen = np.random.default_rng(0)
    X = gen.normal(size=(400, 3))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    ensemble = train_teachers(X, y, make_pipeline(PolynomialFeatures(2), LogisticRegression()), 8, rng=0)
    voter = ensemble.voter(X)
    assert voter is not None and voter.n_linear == 0  # a polynomial step: predicted by each teacher
    slow, fast = both_paths(ensemble, X, "predictions")
    assert np.array_equal(slow, fast)
    assert EncodedVoter.build(ensemble.teachers, [np.array([0, 1])] * 8, 2, "x", pd.DataFrame(X)) is None


@pytest.mark.parametrize("learner", ["logistic_regression", "gaussian_nb"])
def test_a_table_of_categorical_columns_only_votes_on_both_paths(learner):
    """Two classes and no numeric column (e.g. the only numeric column left out as a label
    stand-in): the stacked binary votes' rounding bound has no numeric part; it crashed with
    an IndexError after the run was charged (label, tune)."""
    import io

    from core.data import load_table

    gen = np.random.default_rng(0)
    c, d = gen.choice(["r", "g", "b"], 200), gen.choice(["x", "y"], 200)
    frame = pd.DataFrame({"c": c, "d": d, "label": np.where((c == "r") ^ (gen.random(200) < 0.1), "yes", "no")})
    private = load_table(io.StringIO(frame.iloc[:150].to_csv(index=False)), label_column="label")
    public = frame.iloc[150:, :2].reset_index(drop=True)
    assert private.numeric_columns == ()
    ensemble = pipeline.train(private, learner, None, 6, rng=1)
    slow, fast = both_paths(ensemble, pipeline.model_input(private, public), "vote_counts")
    assert np.array_equal(slow, fast) and slow.sum() == 6 * 50
