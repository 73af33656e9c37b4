"""Tests of the exports (core.export): exact schema and privacy hygiene."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

import core
from builders import make_result
from core.mechanisms import BOTTOM, UNPROCESSED
from core.errors import DataError, ParameterError, SchemaError
from core.export import (
    FORBIDDEN_WORD_EXCEPTIONS,
    FORBIDDEN_WORDS,
    PUBLIC_PARAMETERS,
    REPORT_KEYS,
    labeled_frame,
    privacy_report,
    report_json,
)


LABELS = [2, BOTTOM, 0, 1, UNPROCESSED, UNPROCESSED]


@pytest.fixture
def public():
    return pd.DataFrame(
        {"height": [1.5, 1.7, 1.6, 1.8, 1.9, 1.4], "city": list("abcabc"), "n": np.arange(6)},
        index=np.arange(10, 16),
    )


def test_labeled_frame_columns_and_values(public):
    frame = labeled_frame(public, make_result(LABELS), ("cat", "dog", "bird"))
    assert list(frame.columns) == ["height", "city", "n", "label", "answered", "status"]
    pd.testing.assert_frame_equal(frame[public.columns], public)  # features as given
    assert list(frame["label"]) == ["bird", "", "cat", "dog", "", ""]
    assert frame["answered"].dtype == bool
    assert list(frame["answered"]) == [True, False, True, True, False, False]
    assert list(frame["status"]) == ["answered", "abstained", "answered", "answered", "not processed", "not processed"]
    assert public.columns.tolist() == ["height", "city", "n"]  # input untouched


def test_bottom_rows_are_empty_in_csv(public):
    frame = labeled_frame(public, make_result(LABELS), ("cat", "dog", "bird"))
    text = frame.to_csv(index=False)
    lines = text.strip().splitlines()
    assert lines[0] == "height,city,n,label,answered,status"
    assert lines[2] == "1.7,b,1,,False,abstained"
    assert lines[5] == "1.9,b,4,,False,not processed"


def test_soft_labels_write_the_released_score(public):
    labels = [1, BOTTOM, 1, 1, UNPROCESSED, 1]
    scores = [0.125, np.nan, 0.875, 0.5, np.nan, 0.375]
    frame = labeled_frame(public, make_result(labels, scores, mechanism="btt-soft"), None)
    assert list(frame["label"]) == [0.125, "", 0.875, 0.5, "", 0.375]
    assert frame.to_csv(index=False).splitlines()[2].split(",")[3] == ""


def test_class_ids_as_text_without_names(public):
    frame = labeled_frame(public, make_result(LABELS), None)
    assert list(frame["label"]) == ["2", "", "0", "1", "", ""]


def test_labeled_frame_errors(public):
    with pytest.raises(DataError, match="6 public rows"):
        labeled_frame(public, make_result(LABELS[:5]), ("a", "b", "c"))
    with pytest.raises(DataError, match="class names"):
        labeled_frame(public, make_result(LABELS), ("a", "b"))
    with pytest.raises(SchemaError, match="'label'"):  # names decided for another file
        labeled_frame(public.assign(label=1), make_result(LABELS), ("a", "b", "c"),
                      columns={"label": "label", "answered": "answered", "status": "status"})
    with pytest.raises(DataError, match="DataFrame"):
        labeled_frame(public.to_numpy(), make_result(LABELS), ("a", "b", "c"))
    with pytest.raises(ParameterError, match="LabelingResult"):
        labeled_frame(public, np.array(LABELS), ("a", "b", "c"))


PARAMS = {
    # public settings and quantities computed from them
    "epsilon_target": 4.0,
    "delta_target": 1e-5,
    "T": 10,
    "m": np.int64(6),
    "calibration": "tight",
    "noise_scale": np.float64(2.5),
    "threshold": 79.0,
    "composition": "pld",
    # never exported
    "seed": 1234,
    "rng": np.random.default_rng(0),
    "random_state": 7,
    "vote_counts": np.ones((6, 3)),
    "margins": np.arange(6),
    "teacher_accuracy": 0.93,
    "epsilon_data_dependent": 0.7,
    "distances": [1, 2],
    "something_new": 3,
}


def report(result=None, **kwargs):
    args = dict(n_private=1000, n_public=6, learner="logistic_regression", k=50, dataset="digits") | kwargs
    return privacy_report(result or make_result(LABELS, params=PARAMS, epsilon_data_dependent=0.5), **args)


def test_report_keys_are_exact():
    rep = report()
    assert tuple(rep) == REPORT_KEYS
    assert rep["library"] == "private-label-lab" and rep["version"] == core.__version__
    assert rep["mechanism"] == "btt" and rep["adjacency"] == "replace one private row"
    assert rep["guarantee"] == {"epsilon": 4.0, "delta": 1e-5, "accounting": "10 sparse-vector rounds composed by pld"}
    assert rep["counts"] == {"queries": 6, "answered": 3, "abstained": 1, "not_processed": 2, "public_rows": 6}
    assert rep["ensemble"] == {"learner": "logistic_regression", "k": 50, "n_private": 1000}
    assert rep["dataset"] == "digits"
    assert rep["parameters"] == {
        "T": 10,
        "calibration": "tight",
        "composition": "pld",
        "delta_target": 1e-5,
        "epsilon_target": 4.0,
        "m": 6,
        "noise_scale": 2.5,
        "threshold": 79.0,
    }


def _all_keys(value):
    if isinstance(value, dict):
        for key, inner in value.items():
            yield key
            yield from _all_keys(inner)


def test_report_has_no_forbidden_keys_or_values():
    rep = report()
    text = report_json(rep)
    for key in _all_keys(rep):
        if key in ("counts", "accounting"):  # outcome counts; how (ε, δ) was computed
            continue
        assert not any(word in key.lower() for word in FORBIDDEN_WORDS), key
    for word in ("seed", "1234", "random_state", "vote", "margin", "accuracy", "0.93", "data_dependent", "0.7", "0.5,"):
        assert word not in text, word
    assert "something_new" not in text  # not allow-listed: left out


def test_allow_list_survives_the_forbidden_words():
    for name in PUBLIC_PARAMETERS - FORBIDDEN_WORD_EXCEPTIONS:
        assert not any(word in name.lower() for word in FORBIDDEN_WORDS), name


def test_report_of_real_mechanism_params_is_json_and_drops_nothing_public():
    from core.mechanisms import btt_label, lnmax_label

    counts = np.tile([[45, 5]], (20, 1))
    for result in (btt_label(counts, epsilon=8.0, delta=1e-5, T=5, calibration="tight", rng=0), lnmax_label(counts, gamma=0.05, rng=0, delta=1e-5)):
        rep = privacy_report(result, n_private=500, n_public=20, learner=LogisticRegression(), k=50)
        assert set(rep["parameters"]) == {name for name in result.params if name in PUBLIC_PARAMETERS}
        assert json.loads(report_json(rep)) == rep
        assert "epsilon_data_dependent" not in report_json(rep)
        assert rep["ensemble"]["learner"] == "LogisticRegression"


def test_report_json_is_stable_and_strict():
    rep = report()
    text = report_json(rep)
    assert text.startswith('{\n  "library": "private-label-lab",\n  "version"')
    assert json.loads(text) == rep
    # the same report built in another key order gives the same text
    shuffled = {key: rep[key] for key in reversed(list(rep))}
    shuffled["counts"] = {key: rep["counts"][key] for key in reversed(list(rep["counts"]))}
    assert report_json(shuffled) == text
    keys = [line.split('"')[1] for line in text.splitlines() if line.startswith('  "')]
    assert keys == list(REPORT_KEYS)
    inf = report(make_result(LABELS, epsilon=float("inf")))
    assert json.loads(report_json(inf))["guarantee"]["epsilon"] == "inf"


def test_report_learner_descriptions():
    from core.ensemble.teachers import train_teachers

    gen = np.random.default_rng(0)
    X = gen.normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(int)
    ens = train_teachers(X, y, "logistic_regression", 4, rng=0)
    rep = report(learner=ens, k=4, n_private=60)
    assert rep["ensemble"]["learner"] == "Pipeline(StandardScaler → LogisticRegression)"


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_private": 0}, "n_private"),
        ({"n_public": 5}, "n_public"),
        ({"k": 1}, "at least 2"),
        ({"k": 600}, "fewer than two rows"),
        ({"learner": ""}, "learner"),
        ({"learner": 3}, "learner"),
        ({"dataset": 5}, "dataset"),
    ],
)
def test_report_argument_errors(kwargs, match):
    with pytest.raises(ParameterError, match=match):
        report(**kwargs)


def test_export_writes_nothing(tmp_path, monkeypatch, public):
    monkeypatch.chdir(tmp_path)
    labeled_frame(public, make_result(LABELS), ("a", "b", "c"))
    report_json(report())
    assert list(tmp_path.iterdir()) == []


def test_added_columns_never_clash_and_the_public_columns_pass_through(public):
    """A public file with its own 'status' (German credit) and 'label' columns: the export adds
    private_status / private_label, and the file's own columns keep their names and values."""
    from core.export import EXPORT_ROLES, export_columns

    names = export_columns(["status", "label", "private_label", "duration"])
    assert names == {"row": "row", "label": "private_label_2", "answered": "answered", "status": "private_status"}
    assert export_columns([]) == {r: r for r in EXPORT_ROLES}
    own = public.assign(status=["A11", "A12", "A14", "A11", "A13", "A12"], label=list("uvwxyz"))
    frame = labeled_frame(own, make_result(LABELS), ("a", "b", "c"))
    assert list(frame.columns) == list(own.columns) + ["private_label", "answered", "private_status"]
    assert list(frame["status"]) == list(own["status"]) and list(frame["label"]) == list("uvwxyz")
    assert list(frame["private_status"])[:2] == ["answered", "abstained"]
    # names decided at load time (from every column of the file) are used as given
    decided = export_columns(list(own.columns) + ["row"])
    again = labeled_frame(own[["height", "status"]], make_result(LABELS), ("a", "b", "c"), columns=decided)
    assert list(again.columns) == ["height", "status", "private_label", "answered", "private_status"]


def test_the_command_line_exports_a_public_file_with_a_status_column(tmp_path):
    """The credit table's real 'status' column: labeled and exported (exit 0), not refused."""
    import subprocess
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent / "data"))
    try:
        from real_like import credit_frames
    finally:
        sys.path.pop(0)
    private_frame, public_frame = credit_frames()
    private, public_path, out = tmp_path / "credit.csv", tmp_path / "public.csv", tmp_path / "labeled.csv"
    private_frame.to_csv(private, index=False)
    public_frame.to_csv(public_path, index=False)
    r = subprocess.run([sys.executable, "-m", "core", "label", "--private", str(private), "--public", str(public_path),
                        "--label-column", "risk", "--learner", "logistic_regression", "--k", "6",
                        "--mechanism", "lnmax", "--gamma", "0.2", "--delta", "1e-5", "--out", str(out)],
                       capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1], timeout=300)
    assert r.returncode == 0, r.stderr
    written = pd.read_csv(out, keep_default_na=False)
    assert list(written.columns) == list(public_frame.columns) + ["label", "answered", "private_status"]
    assert list(written["status"]) == list(public_frame["status"])


def test_a_slider_step_sum_is_written_as_the_step():
    """0.1 added 33 times is 3.2999999999999994 in floating point; the report writes 3.3."""
    eps = 0.0
    for _ in range(33):
        eps += 0.1
    assert eps != 3.3
    report = privacy_report(make_result(LABELS, epsilon=eps), n_private=100, n_public=6, learner="logistic_regression", k=5)
    assert report["guarantee"]["epsilon"] == 3.3
    assert '"epsilon": 3.3,' in report_json(report)


def test_cells_that_a_spreadsheet_would_read_as_formulas_are_written_exactly(public):
    # docs/guide/data-owner.md, "A real table, handled safely": an export is data for a program; no quote is added before
    # '=', '+', '-' or '@' (a class "-1" read back as "'-1" would be another label).
    import io

    classes = ("=1+1", "-1", "@SUM(A1)")
    frame = public.assign(city=["+cmd", "=HYPERLINK(\"x\")", "-2", "@a", "c", "b"])
    frame = frame.rename(columns={"n": "=n"})
    out = labeled_frame(frame, make_result([2, 0, 1, 2, BOTTOM, UNPROCESSED]), classes)
    back = pd.read_csv(io.StringIO(out.to_csv(index=False)), dtype=str, keep_default_na=False)
    assert list(back.columns) == ["height", "city", "=n", "label", "answered", "status"]
    assert list(back["label"]) == ["@SUM(A1)", "=1+1", "-1", "@SUM(A1)", "", ""]
    assert list(back["city"]) == ["+cmd", "=HYPERLINK(\"x\")", "-2", "@a", "c", "b"]


def test_join_keys_follow_the_rows_the_public_check_kept():
    """A key column left out of the features is written first, each row its own (rows dropped for a
    missing value leave gaps), so that the labels join back to the public file."""
    from core.data import check_public, load_table

    table = load_table(b"x,label\n1,a\n2,b\n3,a\n4,b\n", missing="drop")
    raw = pd.DataFrame({"id": ["r1", "r2", "r3"], "x": ["1", None, "3"]})
    public, rows = check_public(table, raw[["x"]], return_rows=True)
    keys = raw[["id"]].iloc[rows].reset_index(drop=True)
    assert keys["id"].tolist() == ["r1", "r3"]
    result = make_result([0, 1])
    frame = labeled_frame(public, result, table.class_names, keys=keys)
    assert list(frame.columns) == ["id", "x", "label", "answered", "status"]
    assert frame["id"].tolist() == ["r1", "r3"] and frame["label"].tolist() == ["a", "b"]


def test_join_keys_come_first_and_are_never_a_feature_twice(public):
    res = make_result([1, BOTTOM, 0, 1, 1, 0])
    keys = pd.DataFrame({"id": ["p-01", "p-02", "p-03", "p-04", "p-05", "p-06"], "label": [7, 8, 9, 10, 11, 12]})
    frame = labeled_frame(public, res, ["no", "yes"], keys=keys)
    # the keys first, as given; the added columns named around every other name (the keys' 'label' too)
    assert list(frame.columns[:2]) == ["id", "label"]
    assert list(frame.columns[2:2 + public.shape[1]]) == list(public.columns)
    assert list(frame.columns[-3:]) == ["private_label", "answered", "status"]
    assert frame["id"].tolist() == ["p-01", "p-02", "p-03", "p-04", "p-05", "p-06"]
    assert frame["private_label"].tolist() == ["yes", "", "no", "yes", "yes", "no"]
    assert list(frame.index) == list(public.index)
    with pytest.raises(SchemaError, match="features of the export already"):
        labeled_frame(public, res, ["no", "yes"], keys=public[[public.columns[0]]])
    with pytest.raises(DataError, match="one row per labeled row"):
        labeled_frame(public, res, ["no", "yes"], keys=keys.iloc[:3])
