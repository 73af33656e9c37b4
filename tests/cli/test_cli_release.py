"""Tests of the label command's release discipline and real-job helpers: the dataset's ledger
(--dataset, --ledger and the budget; one budget whatever the file's bytes), --features/--drop, column warnings, missing values said in place, exit code 5,
the published student, integers kept in exports, and the recommend command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
from builders import compas_like

from core.cli import EXIT_ERROR, EXIT_OK, EXIT_STUDENT_FAILED, main
from core.data import halfspaces

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("release")
    X, y = halfspaces(830, 3, rng=7)
    frame = pd.DataFrame(X, columns=["x0", "x1", "x2"])
    frame["age"] = np.random.default_rng(1).integers(18, 90, len(frame))  # whole numbers
    frame["label"] = np.where(y == 1, "yes", "no")
    compas = compas_like(600)
    paths = {n: folder / f"{n}.csv" for n in ("private", "public", "one_row", "compas", "compas_public", "adultish", "adultish_public")}
    frame.iloc[:800].to_csv(paths["private"], index=False)
    frame.iloc[800:].drop(columns=["label"]).to_csv(paths["public"], index=False)
    frame.iloc[800:801].drop(columns=["label"]).to_csv(paths["one_row"], index=False)
    compas.iloc[:500].to_csv(paths["compas"], index=False)
    compas.iloc[500:].drop(columns=["two_year_recid"]).to_csv(paths["compas_public"], index=False)
    adult = frame.iloc[:800].copy().astype({"x0": object})
    adult["work"] = np.where(np.arange(800) % 7 == 0, "?", "private")
    adult.to_csv(paths["adultish"], index=False)
    adult_public = frame.iloc[800:].drop(columns=["label"]).copy()
    adult_public["work"] = "private"
    adult_public.to_csv(paths["adultish_public"], index=False)
    return paths


def argv(data, out: Path, *extra: str, private="private", public="public") -> list[str]:
    return ["label", "--private", str(data[private]), "--public", str(data[public]), "--label-column", "label",
            "--learner", "gaussian_nb", "--k", "20", "--mechanism", "lnmax", "--gamma", "0.5", "--delta", "1e-5",
            "--out", str(out / "labeled.csv"), "--overwrite", "--seed", "3", *extra]


def test_ledger_grows_by_one_run_per_run_and_a_refusal_leaves_it(data, tmp_path, capsys):
    from core.ledger import PrivacyLedger

    store = tmp_path / "ledger.sqlite"
    assert main(argv(data, tmp_path, "--ledger", str(store), "--dataset", "halfspaces",
                     "--report", str(tmp_path / "r.json"))) == EXIT_OK
    out = capsys.readouterr().out
    assert f"Ledger {store}, dataset 'halfspaces': 1 run(s)" in out
    led = PrivacyLedger("halfspaces", store=store)
    assert len(led) == 1 and led.entries[0].mechanism == "lnmax"
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["dataset"] == "halfspaces"  # the data's name (--dataset), never a path
    assert report["ledger"]["epsilon"] == pytest.approx(led.total().epsilon)  # privacy_report(ledger_total=...)
    assert main(argv(data, tmp_path, "--ledger", str(store), "--dataset", "halfspaces")) == EXIT_OK
    assert len(led) == 2
    capsys.readouterr()
    rc = main(argv(data, tmp_path, "--ledger", str(store), "--dataset", "halfspaces", "--budget-epsilon", "0.001",
                   "--budget-delta", "1e-4"))
    err = capsys.readouterr().err
    assert rc == EXIT_ERROR and len(led) == 2  # refused before anything ran: nothing recorded
    last = err.strip().splitlines()[-1]
    assert last.startswith("private-label-lab: error: Privacy budget exhausted") and "budget" in last
    assert "spent" in last and "cost" in last
    assert led.budget.epsilon == 0.001  # the budget, once set, is the dataset's
    # another dataset goes into the same store under its own name
    assert main(argv(data, tmp_path, "--ledger", str(store), "--dataset", "adultish",
                     private="adultish", public="adultish_public")) == EXIT_OK
    assert len(PrivacyLedger("adultish", store=store)) == 1 and len(led) == 2


def test_without_a_name_the_file_name_is_the_dataset_and_the_store_is_the_configured_one(data, tmp_path, capsys):
    import os

    from core.ledger import PrivacyLedger, store_path

    assert main(argv(data, tmp_path)) == EXIT_OK
    captured = capsys.readouterr()
    configured = store_path()
    assert str(configured) == os.environ["PRIVATE_LABEL_LAB_LEDGER"]  # the test's own store, never ~/.local
    assert (f"Ledger {configured}, dataset 'private' (named after the file: give --dataset NAME to keep one budget "
            "for every copy of this data): 1 run(s)") in captured.out
    assert len(PrivacyLedger("private", store=configured)) == 1


def _credit(n: int = 700, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"income": rng.normal(50, 10, n).round(2), "debt": rng.normal(20, 5, n).round(2),
                          "age": rng.integers(18, 80, n)})
    frame["label"] = np.where(frame["income"] - frame["debt"] + rng.normal(0, 5, n) > 30, "good", "bad")
    return frame


def test_the_same_rows_resaved_crlf_bom_or_reordered_are_one_budget(tmp_path, capsys):
    """A data owner's file saved three ways (CRLF line endings, a byte-order mark, columns and
    rows reordered) is one dataset by its name: two GNMax runs at ε 1 fit a budget of 1.5
    (composed: 1.40), the third is refused, whichever file it reads."""
    from core.ledger import PrivacyLedger

    frame = _credit()
    text = frame.to_csv(index=False)
    files = {
        "crlf": (tmp_path / "credit_crlf.csv", text.replace("\n", "\r\n").encode()),
        "bom": (tmp_path / "credit_bom.csv", b"\xef\xbb\xbf" + text.encode()),
        "reordered": (tmp_path / "credit_reordered.csv",
                      frame[["label", "age", "debt", "income"]].iloc[::-1].to_csv(index=False).encode()),
    }
    for path, raw in files.values():
        path.write_bytes(raw)
    public = tmp_path / "public.csv"
    _credit(200, seed=9).drop(columns=["label"]).to_csv(public, index=False)
    store = tmp_path / "ledger.sqlite"

    def run(which: str, *extra: str) -> int:
        return main(["label", "--private", str(files[which][0]), "--public", str(public), "--label-column", "label",
                     "--learner", "gaussian_nb", "--k", "20", "--mechanism", "gnmax", "--epsilon", "1",
                     "--delta", "1e-6", "--out", str(tmp_path / f"{which}.csv"), "--ledger", str(store),
                     "--dataset", "credit", *extra])

    assert run("crlf", "--budget-epsilon", "1.5", "--budget-delta", "1e-5") == EXIT_OK
    assert run("bom") == EXIT_OK
    led = PrivacyLedger("credit", store=store)
    assert len(led) == 2 and 1.2 < led.total().epsilon < 1.5  # two runs of ε 1 at δ 1e-6, quoted at the budget δ 1e-5
    capsys.readouterr()
    assert run("reordered") == EXIT_ERROR
    assert "Privacy budget exhausted for this dataset: the 2 runs recorded so far" in capsys.readouterr().err
    assert not (tmp_path / "reordered.csv").exists()  # refused before any private row was read
    for which in ("crlf", "bom"):
        assert run(which) == EXIT_ERROR
    assert len(led) == 2 and led.total().epsilon < 1.5


def test_features_and_drop(data, tmp_path, capsys):
    assert main(argv(data, tmp_path, "--features", "x0,x1")) == EXIT_OK
    assert list(pd.read_csv(tmp_path / "labeled.csv").columns) == ["x0", "x1", "label", "answered", "status"]
    assert main(argv(data, tmp_path, "--drop", "age")) == EXIT_OK
    # A dropped column leaves the features only: the public file's 'age' is the export's join key, first.
    labeled = pd.read_csv(tmp_path / "labeled.csv")
    assert list(labeled.columns) == ["age", "x0", "x1", "x2", "label", "answered", "status"]
    public = pd.read_csv(data["public"])
    assert labeled["age"].tolist() == public["age"].tolist()
    capsys.readouterr()
    assert main(argv(data, tmp_path, "--drop", "agee,x9")) == EXIT_ERROR
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("private-label-lab: error: --drop") and "'agee'" in err and "'x9'" in err and "'x0', 'x1', 'x2', 'age', 'label'" in err


def test_compas_like_columns_warn_and_never_fail(data, tmp_path, capsys):
    base = ["label", "--private", str(data["compas"]), "--public", str(data["compas_public"]),
            "--label-column", "two_year_recid", "--learner", "gaussian_nb", "--k", "10", "--mechanism",
            "lnmax", "--gamma", "0.5", "--delta", "1e-5", "--out", str(tmp_path / "l.csv"), "--seed", "1",
            "--overwrite"]
    assert main(base) == EXIT_OK
    err = capsys.readouterr().err
    lines = [l for l in err.splitlines() if l.startswith("private-label-lab: warning: Column")]
    for column in ("'id'", "'name'", "'dob'", "'c_charge_desc'", "'is_recid'"):
        assert any(column in l for l in lines), (column, err)
    assert any("NON-PRIVATE" in l for l in lines)
    assert main(base + ["--drop", "id,name,dob,c_charge_desc,is_recid"]) == EXIT_OK
    assert "warning: Column" not in capsys.readouterr().err


def test_missing_values_said_in_place_and_marker_suggested(data, tmp_path, capsys):
    assert main(argv(data, tmp_path, private="adultish", public="adultish_public")) == EXIT_OK
    err = capsys.readouterr().err
    assert "--missing-marker '?'" in err and "'work'" in err
    assert main(argv(data, tmp_path, "--missing", "drop", "--missing-marker", "?", private="adultish", public="adultish_public")) == EXIT_OK
    err = capsys.readouterr().err
    assert "missing values: private file: 115 row(s) with a missing value (115 dropped)" in err
    assert "'work' 115" in err and "--missing-marker '?'" not in err


def test_integers_stay_integers_in_the_export(data, tmp_path):
    assert main(argv(data, tmp_path)) == EXIT_OK
    lines = (tmp_path / "labeled.csv").read_text().splitlines()
    age = [row.split(",")[3] for row in lines[1:]]
    assert all(a.isdigit() for a in age), age[:5]


def test_published_student_round_trip(data, tmp_path):
    path = tmp_path / "student.joblib"
    assert main(argv(data, tmp_path, "--student", str(path))) == EXIT_OK
    student = joblib.load(path)
    from core.ensemble.student import PublishedStudent

    assert isinstance(student, PublishedStudent)
    assert list(student.classes_) == ["no", "yes"] and student.mechanism == "lnmax"
    assert student.epsilon > 0 and student.delta == pytest.approx(1e-5, rel=1) and student.report["mechanism"] == "lnmax"
    public = pd.read_csv(data["public"]).astype(float)
    assert set(student.predict(public)) <= {"no", "yes"}
    assert student.predict_proba(public).shape == (len(public), 2)
    assert "seed" not in json.dumps(student.report).lower()


def test_student_failure_after_labels_exits_5_in_a_subprocess(data, tmp_path):
    # One public row: the labels are written, but a student needs two classes.
    args = argv(data, tmp_path, "--student", str(tmp_path / "s.joblib"), public="one_row")
    proc = subprocess.run([sys.executable, "-m", "core", *args], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == EXIT_STUDENT_FAILED == 5, proc.stderr
    assert (tmp_path / "labeled.csv").exists() and not (tmp_path / "s.joblib").exists()
    assert "The labels were written but the student was not (exit code 5)" in proc.stderr
    help_text = subprocess.run([sys.executable, "-m", "core", "label", "--help"], capture_output=True, text=True,
                               cwd=ROOT, timeout=120).stdout
    assert "  5  label: the labels and the report were written" in help_text


def test_recommend_command(data, capsys):
    rc = main(["recommend", "--private", str(data["private"]), "--label-column", "label", "--epsilon", "2",
               "--delta", "1e-5", "--m", "30"])
    out = capsys.readouterr().out
    assert rc == EXIT_OK and "Recommended:" in out and "--mechanism" in out and "btt_min_teachers" in out
    rc = main(["recommend", "--private", str(data["private"]), "--label-column", "label", "--epsilon", "2",
               "--delta", "1e-5", "--m", "30", "--measure-agreement", "--learner", "gaussian_nb", "--k", "20",
               "--holdout", "100", "--seed", "0"])
    out = capsys.readouterr().out
    assert rc == EXIT_OK and "NON-PRIVATE measurement" in out
