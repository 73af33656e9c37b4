"""Tests of the learner registry (core.ensemble.learners)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone, is_classifier

from core.errors import ParameterError
from core.ensemble.learners import LEARNERS, Hyperparameter, learner_names, make_learner, parse_assignments

EXPECTED = {
    "logistic_regression",
    "linear_svm",
    "random_forest",
    "gradient_boosting",
    "knn",
    "gaussian_nb",
    "decision_tree",
    "mlp",
}


def small_task(n_rows: int, n_classes: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A tiny, separable task: class c is centred at 3c on every feature."""
    gen = np.random.default_rng(seed)
    y = np.arange(n_rows) % n_classes
    X = 3.0 * y[:, None] + gen.normal(size=(n_rows, 4))
    return X, y


def test_registry_names():
    assert set(LEARNERS) == EXPECTED
    assert learner_names() == list(LEARNERS)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_spec_is_complete_and_defaults_are_valid(name):
    spec = LEARNERS[name]
    assert spec.name == name and spec.label and spec.description
    assert spec.hyperparameters, "the app needs at least one control per learner"
    for h in spec.hyperparameters:
        assert isinstance(h, Hyperparameter) and h.help
        assert h.type in (int, float, str, bool)
        # the default passes its own check unchanged
        assert h.convert(h.default, name) == h.default
        if h.type is str:
            assert h.choices and h.default in h.choices
        if h.type in (int, float) and h.default is not None:
            assert h.min is None or h.default >= h.min
            assert h.max is None or h.default <= h.max


@pytest.mark.parametrize("name", sorted(EXPECTED))
@pytest.mark.parametrize("n_classes", [2, 3])
def test_every_learner_fits_a_ten_row_chunk(name, n_classes):
    X, y = small_task(10, n_classes)
    model = make_learner(name)
    assert is_classifier(model)
    clone(model).fit(X, y)  # clones cleanly (scikit-learn conventions)
    model.fit(X, y)
    pred = model.predict(X)
    assert pred.shape == (10,) and set(np.unique(pred)) <= set(range(n_classes))
    assert hasattr(model, "predict_proba") == LEARNERS[name].has_predict_proba
    if LEARNERS[name].has_predict_proba:
        proba = model.predict_proba(X)
        assert proba.shape == (10, n_classes)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_linear_svm_documents_missing_probabilities():
    assert LEARNERS["linear_svm"].has_predict_proba is False
    assert all(spec.has_predict_proba for n, spec in LEARNERS.items() if n != "linear_svm")


def test_text_values_are_converted():
    model = make_learner("random_forest", n_estimators="7", max_depth="none", min_samples_leaf="2")
    assert model.get_params()["n_estimators"] == 7
    assert model.get_params()["max_depth"] is None
    model = make_learner("logistic_regression", C="1e-2", standardize="false", max_iter="300.0")
    assert model.get_params()["C"] == pytest.approx(0.01)
    assert model.get_params()["max_iter"] == 300
    assert not hasattr(model, "steps")  # no scaler pipeline when standardize is false
    model = make_learner("mlp", hidden_units="8", hidden_layers="2", solver="adam")
    assert model.get_params()["mlpclassifier__hidden_layer_sizes"] == (8, 8)
    assert model.get_params()["mlpclassifier__solver"] == "adam"


def test_parse_assignments():
    params = parse_assignments("knn", ["n_neighbors=5", " weights = distance", "standardize=no"])
    assert params == {"n_neighbors": 5, "weights": "distance", "standardize": False}
    assert parse_assignments("knn", None) == {}
    assert parse_assignments("knn", {"n_neighbors": "4"}) == {"n_neighbors": 4}
    with pytest.raises(ParameterError, match="key=value"):
        parse_assignments("knn", ["n_neighbors"])
    with pytest.raises(ParameterError, match="twice"):
        parse_assignments("knn", ["n_neighbors=3", "n_neighbors=4"])


@pytest.mark.parametrize(
    "name, params, match",
    [
        ("svm", {}, "Unknown learner"),
        ("random_forest", {"n_estimators": 0}, "n_estimators"),
        ("random_forest", {"n_estimators": "2.5"}, "whole number"),
        ("random_forest", {"n_estimators": True}, "n_estimators"),
        ("random_forest", {"bogus": 1}, "no hyperparameter 'bogus'"),
        ("knn", {"weights": "closest"}, "one of uniform, distance"),
        ("logistic_regression", {"C": "abc"}, "C must be"),
        ("logistic_regression", {"C": "inf"}, "finite"),
        ("logistic_regression", {"C": -1}, "C must be"),
        ("logistic_regression", {"standardize": "maybe"}, "true or false"),
        ("gaussian_nb", {"var_smoothing": None}, "None is not allowed"),
    ],
)
def test_bad_values_raise_parameter_error(name, params, match):
    with pytest.raises(ParameterError, match=match):
        make_learner(name, **params)
