"""The published student: one object for the app and the command line, in joblib and skops' format."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from builders import make_result

from core import pipeline
from core.data import generate, split_public
from core.ensemble.student import PublishedStudent
from core.errors import DataError
from core.export import privacy_report

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def published():
    table = generate("two_gaussians", 600, rng=0, d=2, separation=3.0)
    named = dataclasses.replace(table, class_names=("bad", "good"))
    private, public = split_public(named, 200, rng=1)
    result = make_result(np.where(np.arange(200) % 7 == 0, -1, public.labels), mechanism="lnmax", epsilon=2.0)
    student = pipeline.student(public.features, result, "random_forest", None, named, rng=0)
    report = privacy_report(result, n_private=400, n_public=200, learner="logistic_regression", k=10,
                            ledger_total={"epsilon": 3.0, "delta": 2e-5, "runs": 2})
    return PublishedStudent.from_student(student, named.class_names, report=report), public


def test_predicts_class_names_and_carries_the_release(published):
    model, public = published
    assert set(model.predict(public.features)) <= {"bad", "good"}
    assert (model.epsilon, model.delta, model.mechanism) == (2.0, 1e-5, "lnmax")
    assert model.release["release"]["epsilon"] == 2.0 and model.release["ledger"]["runs"] == 2


def test_skops_round_trip_runs_no_code_and_keeps_everything(published):
    import skops.io as sio

    model, public = published
    data = model.to_skops()
    # only scikit-learn's own types need trusting (a random forest's Tree); nothing of ours
    assert all(t.startswith("sklearn.") for t in sio.get_untrusted_types(data=data))
    back = PublishedStudent.from_skops(data)
    assert list(back.predict(public.features)) == list(model.predict(public.features))
    assert (back.epsilon, back.delta, back.mechanism, list(back.classes_)) == (2.0, 1e-5, "lnmax", ["bad", "good"])
    assert back.report == model.report


def test_skops_refuses_a_type_it_does_not_know():
    import skops.io as sio

    data = sio.dumps({"format": "x", "model": pd.Timedelta(1)})
    with pytest.raises(DataError, match="not scikit-learn's"):
        PublishedStudent.from_skops(data)


def test_joblib_bytes_load_to_the_same_student(published):
    import io

    import joblib

    model, public = published
    back = joblib.load(io.BytesIO(model.to_joblib()))  # a pickle: this runs code from the bytes
    assert isinstance(back, PublishedStudent) and back.report == model.report
    assert list(back.predict(public.features)) == list(model.predict(public.features))


def test_the_command_line_writes_skops_for_a_skops_name(tmp_path):
    table = generate("two_gaussians", 400, rng=0, d=2, separation=3.0)
    frame = table.features.assign(label=np.where(table.labels == 1, "yes", "no"))
    frame.iloc[:300].to_csv(tmp_path / "private.csv", index=False)
    frame.iloc[300:].drop(columns=["label"]).to_csv(tmp_path / "public.csv", index=False)
    r = subprocess.run([sys.executable, "-m", "core", "label", "--private", str(tmp_path / "private.csv"),
                        "--public", str(tmp_path / "public.csv"), "--learner", "logistic_regression", "--k", "6",
                        "--mechanism", "lnmax", "--gamma", "0.2", "--delta", "1e-5", "--out", str(tmp_path / "o.csv"),
                        "--student", str(tmp_path / "student.skops")],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    student = PublishedStudent.from_skops((tmp_path / "student.skops").read_bytes())
    assert set(student.predict(frame.drop(columns=["label"]).iloc[300:])) <= {"no", "yes"}
    assert json.dumps(student.report["guarantee"]) and student.report["ensemble"]["k"] == 6


def _guide_loading_code() -> str:
    """The loading code of the data owner's guide ("A real table, handled safely")."""
    text = (ROOT / "docs" / "guide" / "data-owner.md").read_text(encoding="utf-8")
    after = text.split("In a fresh Python:", 1)[1]
    return after.split("```python\n", 1)[1].split("```", 1)[0]


def _load_in_a_fresh_interpreter(folder: Path, rows: pd.DataFrame) -> list[str]:
    """Run the data owner's guide's loading code in a new Python process on ``rows`` (saved as new_rows.csv)."""
    rows.to_csv(folder / "new_rows.csv", index=False)
    code = _guide_loading_code().replace("print(student.predict(rows), student.epsilon, student.delta)",
                                          "print('\\n'.join(student.predict(rows)))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=folder, timeout=300,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def _two_extra_columns_reordered(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.assign(note="x", row_id=np.arange(len(frame)))
    return out[list(out.columns[::-1])]


def test_a_command_line_student_loads_as_the_guide_shows_and_picks_its_columns(tmp_path):
    """A student published by the command line from a table with missing cells (a fitted imputer
    holds a numpy.dtype) loads in a fresh interpreter with the data owner's guide's code, and predicts on a
    frame with two extra columns in another order."""
    rng = np.random.default_rng(3)
    n = 700
    frame = pd.DataFrame({"age": rng.integers(18, 80, n).astype(float), "job": rng.choice(["a", "b", "c"], n)})
    frame["label"] = np.where(frame["age"] / 60 + (frame["job"] == "a") + rng.normal(0, 0.3, n) > 1, "yes", "no")
    frame.loc[rng.choice(n, 40, replace=False), "age"] = np.nan
    frame.iloc[:500].to_csv(tmp_path / "private.csv", index=False)
    public = frame.iloc[500:].drop(columns=["label"])
    public.to_csv(tmp_path / "public.csv", index=False)
    r = subprocess.run([sys.executable, "-m", "core", "label", "--private", str(tmp_path / "private.csv"),
                        "--public", str(tmp_path / "public.csv"), "--label-column", "label", "--missing", "impute",
                        "--learner", "logistic_regression", "--k", "5", "--mechanism", "dp-logistic",
                        "--epsilon", "2", "--delta", "1e-5", "--out", str(tmp_path / "o.csv"),
                        "--student", str(tmp_path / "student.skops"), "--no-progress"],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    import skops.io as sio

    assert "numpy.dtype" in sio.get_untrusted_types(data=(tmp_path / "student.skops").read_bytes())
    got = _load_in_a_fresh_interpreter(tmp_path, _two_extra_columns_reordered(public))
    here = PublishedStudent.from_skops((tmp_path / "student.skops").read_bytes()).predict(public)
    assert got == list(here) and set(got) <= {"yes", "no"}


def test_an_app_student_loads_as_the_guide_shows_and_picks_its_columns(tmp_path):
    """The app's student (core.pipeline.student on the public frame, published as the Student &
    export page does) of a numeric table: a bare scikit-learn model fitted on named columns."""
    table = generate("two_gaussians", 600, rng=0, d=3, separation=3.0)
    private, public = split_public(dataclasses.replace(table, class_names=("bad", "good")), 200, rng=1)
    result = make_result(public.labels, mechanism="dp-naive-bayes", epsilon=1.0)
    student = pipeline.student(public.features, result, "gaussian_nb", None, private, rng=0)
    report = privacy_report(result, n_private=400, n_public=200, learner="gaussian_nb", k=None)
    published = PublishedStudent.from_student(student, private.class_names, report=report)
    (tmp_path / "student.skops").write_bytes(published.to_skops())
    got = _load_in_a_fresh_interpreter(tmp_path, _two_extra_columns_reordered(public.features))
    assert got == list(published.predict(public.features))
    with pytest.raises(DataError, match="no column 'x0'"):
        published.predict(public.features.drop(columns=["x0"]))
