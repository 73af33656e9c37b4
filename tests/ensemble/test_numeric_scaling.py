"""A learner that standardizes scales a table's numeric columns only; one-hot columns stay 0/1.

Every fit here is deterministic (lbfgs, fixed seeds), so no test below can fail by chance.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest

from core import pipeline
from core.accounting.guarantee import PrivacyGuarantee
from core.data import load_bundled, table_from_arrays
from core.ensemble.learners import LEARNERS, make_learner, standardizes
from core.mechanisms.result import make_result


def _rare_table(n: int = 300):
    """A numeric column on a large scale and a categorical column with a category in one row."""
    gen = np.random.default_rng(0)
    size = gen.normal(50.0, 20.0, n)
    colour = gen.choice(["red", "green", "blue"], n).astype(object)
    colour[7] = "violet"  # seen in one row only
    y = (size + 15.0 * (colour == "red") + gen.normal(0.0, 10.0, n) > 55.0).astype(np.int64)
    frame = pd.DataFrame({"size": size, "colour": colour, "label": y})
    from core.data import load_table

    return load_table(frame.to_csv(index=False).encode(), label_column="label")


def test_standardizes_reads_the_learners_setting():
    assert standardizes("logistic_regression", {}) is True
    assert standardizes("logistic_regression", {"standardize": False}) is False
    assert standardizes("random_forest", {}) is False  # no such hyperparameter
    for name in ("logistic_regression", "linear_svm"):
        assert "category columns left 0/1" in LEARNERS[name].description
        assert "one-hot" in LEARNERS[name].hyperparameter("standardize").help


@pytest.mark.parametrize("learner", ["logistic_regression", "linear_svm", "knn", "mlp"])
def test_the_numbers_are_standardized_and_the_one_hot_columns_left_0_1(learner):
    table = _rare_table()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the MLP's ConvergenceWarning on 300 rows
        model = pipeline.teacher_model(table, learner, {"max_iter": 50} if learner == "mlp" else None)
        model.fit(table.features, table.labels)
    assert len(model.steps) == 2  # the preprocessor, then the learner itself: no scaler after the one-hot
    Z = model[:-1].transform(table.features)
    assert Z.shape[1] == 1 + 4
    np.testing.assert_allclose([Z[:, 0].mean(), Z[:, 0].std()], [0.0, 1.0], atol=1e-12)
    assert set(np.unique(Z[:, 1:])) == {0.0, 1.0}
    assert Z[:, 1:].max() == 1.0  # the one-row category is a 1, not the ±17 of a standardized column


def test_standardize_false_and_learners_without_it_get_the_plain_preprocessor():
    table = _rare_table()
    for learner, params in (("logistic_regression", {"standardize": "false"}), ("random_forest", {"n_estimators": 2})):
        model = pipeline.teacher_model(table, learner, params).fit(table.features, table.labels)
        Z = model[:-1].transform(table.features)
        np.testing.assert_array_equal(Z[:, 0], table.features["size"].to_numpy())


def test_a_plain_numeric_table_still_standardizes_every_column():
    gen = np.random.default_rng(1)
    X = gen.normal(size=(80, 3)) * [1.0, 10.0, 100.0]
    table = table_from_arrays(X, (X[:, 0] > 0).astype(int))
    model = pipeline.teacher_model(table, "logistic_regression")
    assert [type(s).__name__ for _, s in model.steps] == ["StandardScaler", "LogisticRegression"]


def test_imputed_numbers_are_imputed_then_standardized_per_teacher():
    table = _rare_table()
    features = table.features.copy()
    features.loc[:9, "size"] = np.nan
    imputed = dataclasses.replace(table, features=features, missing="impute")
    model = pipeline.teacher_model(imputed, "logistic_regression").fit(imputed.features, imputed.labels)
    numeric = model[0].named_transformers_["numeric"]
    assert [name for name, _ in numeric.steps] == ["impute", "scale"]
    Z = model[:-1].transform(imputed.features)
    assert np.isfinite(Z).all() and Z[:, 0].std() == pytest.approx(1.0)


def test_a_published_student_holds_scikit_learn_types_only():
    from core.ensemble.student import PublishedStudent

    table = _rare_table()
    public = table.features.iloc[:200]
    result = make_result("true labels", table.labels[:200], None, None,
                         PrivacyGuarantee(1.0, 0.0, "test", "labels for the test"), {})
    student = pipeline.student(public, result, "logistic_regression", None, table)
    published = PublishedStudent.from_student(student, table.class_names)
    loaded = PublishedStudent.from_skops(published.to_skops())  # refuses any type outside sklearn.*
    np.testing.assert_array_equal(loaded.model.predict(public), student.model.predict(public))


@pytest.mark.slow
def test_adult_student_on_true_labels_matches_a_numbers_only_scikit_learn_pipeline():
    """The student pipeline against scikit-learn's own numbers-only pipeline, on Adult.

    A logistic-regression student of the first 1,500 rows of ``adult_test`` with their
    TRUE labels, evaluated on the other 14,781: the library's pipeline within 0.002 of
    ``ColumnTransformer(median imputer + StandardScaler on the numbers, most-frequent
    imputer + OneHotEncoder on the categories)`` + ``LogisticRegression``, and at least
    0.84 (standardizing the one-hot columns too gave 0.836).
    """
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    train = load_bundled("adult_train", missing="impute")
    test = load_bundled("adult_test", missing="impute")
    public, y_public = test.features.iloc[:1500], test.labels[:1500]
    X_eval, y_eval = test.features.iloc[1500:], test.labels[1500:]
    result = make_result("true labels", y_public, None, None,
                         PrivacyGuarantee(1.0, 0.0, "test", "the true labels (a non-private reference)"), {})
    student = pipeline.student(public, result, "logistic_regression", None, train)
    ours = float(np.mean(student.model.predict(X_eval) == y_eval))

    plain = make_pipeline(
        ColumnTransformer([
            ("numbers", make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), list(train.numeric_columns)),
            ("categories", make_pipeline(SimpleImputer(strategy="most_frequent"), OneHotEncoder(handle_unknown="ignore")),
             list(train.categorical_columns)),
        ]),
        LogisticRegression(max_iter=200),
    ).fit(public, y_public)
    reference = float(np.mean(plain.predict(X_eval) == y_eval))
    assert abs(ours - reference) <= 0.002, (ours, reference)
    assert ours >= 0.84, ours
