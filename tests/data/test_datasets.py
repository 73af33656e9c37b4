"""Tests of core.data: bundled CSV files and the teaching generators.

Statistical checks use fixed seeds and Hoeffding bounds: for the mean of n independent
variables with range R, P[|mean - expectation| >= t] <= 2 exp(-2 n t^2 / R^2).  Each
tolerance below is the t that makes this bound 1e-6, so each check fails with
probability at most 1e-6 even if the seed were random.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm

from core.data import Table
from core.data import (
    BUNDLED,
    DATASETS_DIR,
    GENERATORS,
    bundled_names,
    generate,
    halfspaces,
    load_bundled,
    thresholds,
    two_gaussians,
    two_gaussians_posterior,
    vc_dimension,
)
from core.errors import DataError, ParameterError

FAILURE = 1e-6


def hoeffding_t(n: int, value_range: float = 1.0, failure: float = FAILURE) -> float:
    """t with 2 exp(-2 n t^2 / R^2) = failure."""
    return value_range * math.sqrt(math.log(2.0 / failure) / (2.0 * n))


# --------------------------------------------------------------------------------------
# Bundled datasets
# --------------------------------------------------------------------------------------

EXPECTED = {
    "digits": (1797, 64, 10),
    "breast_cancer": (569, 30, 2),
    "wine": (178, 13, 3),
    "iris": (150, 4, 3),
}


def test_bundled_names():
    names = bundled_names()
    assert names == sorted(names)
    assert set(EXPECTED) <= set(names)
    assert set(BUNDLED) <= set(names)  # every description has its file


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bundled_shapes_and_values_match_scikit_learn(name):
    from sklearn import datasets as skd

    rows, n_features, n_classes = EXPECTED[name]
    table = load_bundled(name)
    assert isinstance(table, Table)
    assert table.name == name
    assert (table.n_rows, len(table.feature_names), table.n_classes) == (rows, n_features, n_classes)
    assert table.label_column == "label"
    assert table.categorical_columns == ()
    bunch = getattr(skd, f"load_{name}")()
    assert table.feature_names == tuple(bunch.feature_names)
    np.testing.assert_array_equal(table.features.to_numpy(), bunch.data)  # exact values
    sk_names = np.asarray(bunch.target_names).astype(str)[bunch.target]
    np.testing.assert_array_equal(np.asarray(table.class_names)[table.labels], sk_names)


def test_bundled_class_names():
    assert load_bundled("breast_cancer").class_names == ("benign", "malignant")
    assert load_bundled("wine").class_names == ("class_0", "class_1", "class_2")
    assert load_bundled("digits").class_names == tuple(str(d) for d in range(10))
    assert load_bundled("iris").class_names == ("setosa", "versicolor", "virginica")


def test_unknown_bundled_name_lists_the_names():
    with pytest.raises(DataError) as info:
        load_bundled("mnist_full")
    for name in EXPECTED:
        assert name in str(info.value)


def test_datasets_dir_is_the_repository_folder():
    assert DATASETS_DIR == Path(__file__).resolve().parents[2] / "datasets"
    assert (DATASETS_DIR / "README.md").is_file()


def test_readme_names_every_file_and_a_license():
    readme = (DATASETS_DIR / "README.md").read_text(encoding="utf-8")
    files = sorted(DATASETS_DIR.glob("*.csv")) + sorted(DATASETS_DIR.glob("*.csv.gz"))
    assert files
    for path in files:
        assert f"`{path.name}`" in readme
    for name in bundled_names():
        assert f"`{name}" in readme
    assert "BSD" in readme and "CC BY 4.0" in readme


def test_make_datasets_reproduces_the_files_exactly():
    spec = importlib.util.spec_from_file_location("make_datasets", DATASETS_DIR / "make_datasets.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for stem, (loader, as_int) in module.SOURCES.items():
        text = module.build_frame(loader, as_int).to_csv(index=False, lineterminator="\n")
        assert text == (DATASETS_DIR / f"{stem}.csv").read_text(encoding="utf-8"), stem


# --------------------------------------------------------------------------------------
# Halfspaces
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("d", [1, 2, 5, 30])
def test_halfspaces_shapes_and_realizability(d):
    X, y, w = halfspaces(2000, d, rng=d, return_normal=True)
    assert X.shape == (2000, d) and X.dtype == np.float64
    assert y.shape == (2000,) and y.dtype == np.int64
    assert set(np.unique(y)) == {0, 1}
    assert w.shape == (d,) and math.isclose(np.linalg.norm(w), 1.0, rel_tol=1e-12)
    # noise = 0: the true normal separates the data exactly
    margins = X @ w
    assert np.all(margins[y == 1] > 0)
    assert np.all(margins[y == 0] <= 0)


def test_halfspaces_without_normal_returns_pair():
    out = halfspaces(10, 3, rng=0)
    assert len(out) == 2
    X, y = out
    X2, y2, _ = halfspaces(10, 3, rng=0, return_normal=True)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)


def test_halfspaces_balance():
    # A homogeneous halfspace through a symmetric distribution labels each point 1 with
    # probability 1/2 (Hoeffding bound, failure <= 1e-6).
    n = 20000
    _, y = halfspaces(n, 4, rng=11)
    assert abs(y.mean() - 0.5) < hoeffding_t(n)


@pytest.mark.parametrize("gamma", [0.05, 0.2, 0.4])
def test_halfspaces_noise_rate(gamma):
    n = 20000
    X, y, w = halfspaces(n, 3, noise=gamma, rng=23, return_normal=True)
    clean = (X @ w > 0).astype(int)
    flipped = y != clean
    # The flips are i.i.d. Bernoulli(gamma): Hoeffding bound with failure <= 1e-6.
    assert abs(flipped.mean() - gamma) < hoeffding_t(n)
    # ...and independent of the clean label (each side's rate also within its own bound).
    for side in (0, 1):
        mask = clean == side
        assert abs(flipped[mask].mean() - gamma) < hoeffding_t(int(mask.sum()))


def test_halfspaces_same_seed_same_data_other_seed_other_normal():
    a = halfspaces(50, 4, noise=0.1, rng=3, return_normal=True)
    b = halfspaces(50, 4, noise=0.1, rng=np.random.default_rng(3), return_normal=True)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    c = halfspaces(50, 4, rng=4, return_normal=True)
    assert not np.allclose(a[2], c[2])


@pytest.mark.parametrize(
    "kwargs",
    [dict(n=0, d=2), dict(n=10, d=0), dict(n=2.5, d=2), dict(n=10, d=2, noise=0.5),
     dict(n=10, d=2, noise=-0.1), dict(n=10, d=2, noise=float("nan")), dict(n=True, d=2)],
)
def test_halfspaces_bad_parameters(kwargs):
    n, d = kwargs.pop("n"), kwargs.pop("d")
    with pytest.raises(ParameterError):
        halfspaces(n, d, **kwargs)


# --------------------------------------------------------------------------------------
# Thresholds
# --------------------------------------------------------------------------------------


def test_thresholds_realizable():
    X, y = thresholds(5000, rng=1)
    assert X.shape == (5000, 1) and y.shape == (5000,)
    assert X.min() >= 0.0 and X.max() <= 1.0
    np.testing.assert_array_equal(y, (X[:, 0] > 0.5).astype(int))
    X, y = thresholds(500, theta=0.8, rng=2)
    np.testing.assert_array_equal(y, (X[:, 0] > 0.8).astype(int))


def test_thresholds_random_theta_is_consistent():
    X, y = thresholds(3000, theta=None, rng=5)
    # some threshold in [0.25, 0.75] separates the data exactly
    top_zero = X[y == 0, 0].max()
    low_one = X[y == 1, 0].min()
    assert top_zero < low_one
    assert 0.25 - 1e-2 < low_one and top_zero < 0.75 + 1e-2


def test_thresholds_noise_rate():
    n = 20000
    X, y = thresholds(n, noise=0.15, rng=9)
    flipped = y != (X[:, 0] > 0.5)
    assert abs(flipped.mean() - 0.15) < hoeffding_t(n)  # failure <= 1e-6


@pytest.mark.parametrize("theta", [0.0, 1.0, 1.5, -0.2])
def test_thresholds_bad_theta(theta):
    with pytest.raises(ParameterError):
        thresholds(10, theta=theta, rng=0)


# --------------------------------------------------------------------------------------
# Two Gaussians
# --------------------------------------------------------------------------------------


def test_two_gaussians_shapes_and_class_means():
    n, s = 20000, 4.0
    X, y = two_gaussians(n, d=3, separation=s, rng=2)
    assert X.shape == (n, 3) and y.shape == (n,) and y.dtype == np.int64
    assert abs(y.mean() - 0.5) < hoeffding_t(n)  # fair labels; failure <= 1e-6
    # Class means on the first axis are -s/2 and +s/2, unit variance.  Gaussian tail:
    # P[|mean - mu| >= t] <= 2 exp(-m t^2 / 2) = 1e-6 for t = sqrt(2 log(2e6) / m).
    for cls, mu in ((0, -s / 2), (1, s / 2)):
        m = int((y == cls).sum())
        t = math.sqrt(2 * math.log(2 / FAILURE) / m)
        assert abs(X[y == cls, 0].mean() - mu) < t
        for j in (1, 2):
            assert abs(X[y == cls, j].mean()) < t


def test_two_gaussians_bayes_error_and_confident_posterior():
    n, s = 20000, 4.0
    X, y = two_gaussians(n, separation=s, rng=3)
    bayes = (X[:, 0] > 0).astype(int)
    # Error of the Bayes classifier is Phi(-s/2) (Hoeffding, failure <= 1e-6).
    assert abs((bayes != y).mean() - norm.cdf(-s / 2)) < hoeffding_t(n)
    post = two_gaussians_posterior(X, s)
    assert np.all((post >= 0) & (post <= 1))
    np.testing.assert_allclose(post, 1 / (1 + np.exp(-s * X[:, 0])), rtol=1e-12, atol=1e-300)
    # Away from the boundary the posterior is near 0 or 1: |x0| > 1 -> within 1 - sigmoid(4).
    far = np.abs(X[:, 0]) > 1
    assert np.all(np.minimum(post[far], 1 - post[far]) < 1 / (1 + math.exp(4)))
    # Calibration: mean of y - posterior is 0 (range 2, Hoeffding, failure <= 1e-6).
    assert abs(np.mean(y - post)) < hoeffding_t(n, value_range=2.0)


def test_two_gaussians_zero_separation_is_pure_noise():
    X, y = two_gaussians(100, separation=0.0, rng=0)
    np.testing.assert_array_equal(two_gaussians_posterior(X, 0.0), np.full(100, 0.5))


def test_two_gaussians_bad_parameters():
    with pytest.raises(ParameterError):
        two_gaussians(10, separation=-1.0)
    with pytest.raises(ParameterError):
        two_gaussians(10, d=0)
    with pytest.raises(DataError):
        two_gaussians_posterior(np.ones(3))


# --------------------------------------------------------------------------------------
# GENERATORS and generate()
# --------------------------------------------------------------------------------------


def test_generator_specs_are_well_formed():
    assert set(GENERATORS) == {"halfspaces", "noisy_halfspaces", "thresholds", "two_gaussians"}
    for name, spec in GENERATORS.items():
        for key in ("label", "description", "vc_dimension", "noise_model", "n", "params"):
            assert key in spec, (name, key)
        for pname, p in [("n", spec["n"])] + list(spec["params"].items()):
            assert p["type"] in ("int", "float"), (name, pname)
            assert p["min"] <= p["default"] <= p["max"], (name, pname)
            assert isinstance(p["label"], str) and p["label"]


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_generate_defaults_and_extremes(name):
    spec = GENERATORS[name]
    for choice in ("default", "min", "max"):
        params = {k: p[choice] for k, p in spec["params"].items()}
        table = generate(name, 200, rng=1, **params)
        assert isinstance(table, Table)
        d = params.get("d", 1)
        assert table.n_rows == 200
        assert table.feature_names == tuple(f"x{j}" for j in range(d))
        assert table.label_column == "label"
        assert table.class_names == ("0", "1")
        assert table.numeric_columns == table.feature_names
        assert set(np.unique(table.labels)) <= {0, 1}
        assert all(table.features[c].dtype == np.float64 for c in table.feature_names)
        assert name in table.name


def test_generate_matches_the_generator_functions():
    t = generate("noisy_halfspaces", 300, rng=5, d=4, noise=0.2)
    X, y = halfspaces(300, 4, noise=0.2, rng=5)
    np.testing.assert_array_equal(t.features.to_numpy(), X)
    np.testing.assert_array_equal(t.labels, y)
    t = generate("two_gaussians", 100, rng=6, d=3, separation=2.0)
    X, y = two_gaussians(100, d=3, separation=2.0, rng=6)
    np.testing.assert_array_equal(t.features.to_numpy(), X)
    t = generate("thresholds", 100, rng=7, theta=0.3)
    X, y = thresholds(100, theta=0.3, rng=7)
    np.testing.assert_array_equal(t.labels, y)


def test_generate_is_reproducible_with_a_seed():
    a = generate("halfspaces", 100, rng=3, d=2)
    b = generate("halfspaces", 100, rng=3, d=2)
    np.testing.assert_array_equal(a.features.to_numpy(), b.features.to_numpy())
    c = generate("halfspaces", 100, rng=4, d=2)
    assert not np.array_equal(a.features.to_numpy(), c.features.to_numpy())


@pytest.mark.parametrize(
    "name, n, params, fragment",
    [
        ("circles", 100, {}, "halfspaces"),
        ("halfspaces", 100, {"noise": 0.1}, "no parameter noise"),
        ("halfspaces", 5, {}, "n must be at least"),
        ("halfspaces", 100, {"d": 0}, "d must be at least"),
        ("halfspaces", 100, {"d": 1000}, "at most"),
        ("noisy_halfspaces", 100, {"noise": 0.6}, "noise"),
        ("two_gaussians", 100, {"separation": 20.0}, "separation"),
        ("thresholds", 100, {"theta": "half"}, "theta"),
    ],
)
def test_generate_refuses_bad_parameters(name, n, params, fragment):
    with pytest.raises(ParameterError, match=fragment):
        generate(name, n, rng=0, **params)


def test_generate_accepts_whole_floats_for_integers():
    assert generate("halfspaces", 50.0, rng=0, d=3.0).feature_names == ("x0", "x1", "x2")


def test_vc_dimensions():
    assert vc_dimension("halfspaces", d=7) == 8
    assert vc_dimension("noisy_halfspaces") == GENERATORS["noisy_halfspaces"]["params"]["d"]["default"] + 1
    assert vc_dimension("two_gaussians", d=2) == 3
    assert vc_dimension("thresholds") == 1
