"""Tests of the command line (core.cli): label, bounds and audit, exit codes and messages.

Most tests call ``main([...])`` in-process; a few run the real ``python -m core`` and the
installed ``private-label-lab`` script in a subprocess.  The data are small CSV files
written into a temporary folder: halfspaces in three dimensions with text class names
("no"/"yes"), and a three-class table cut from the bundled iris set.
"""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.pipeline import make_pipeline

from core import mechanisms as agg
from core import pipeline
from core.mechanisms import registry
from core import audit as A
from core import theory as B
from core.accounting import a_stab_threshold, calibrate_btt, composition_baseline_parameters, pate_simple_epsilon
from core.cli import EXIT_ERROR, EXIT_HALTED, EXIT_OK, EXIT_VIOLATION, ProgressBar, main
from core.data import load_table, read_public
from core.data import DATASETS_DIR, halfspaces
from core.export import RELEASE_KEYS, REPORT_KEYS, labeled_frame, privacy_report, report_json
from core.ensemble.learners import make_learner
from core.ensemble.teachers import train_teachers

ROOT = Path(__file__).resolve().parents[2]
N_PRIVATE, N_PUBLIC = 1600, 30
FEATURES = ["x0", "x1", "x2"]


# ------------------------------------------------------------------------------ data


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """CSV files: private/public halfspaces, an iris split, and broken variants."""
    folder = tmp_path_factory.mktemp("cli")
    X, y = halfspaces(N_PRIVATE + N_PUBLIC, 3, rng=7)
    frame = pd.DataFrame(X, columns=FEATURES)
    frame["label"] = np.where(y == 1, "yes", "no")
    paths = {
        "private": folder / "private.csv",
        "public": folder / "public.csv",
        "iris_private": folder / "iris_private.csv",
        "iris_public": folder / "iris_public.csv",
        "text_private": folder / "text_private.csv",
        "text_public": folder / "text_public.csv",
    }
    frame.iloc[:N_PRIVATE].to_csv(paths["private"], index=False)
    frame.iloc[N_PRIVATE:].drop(columns=["label"]).to_csv(paths["public"], index=False)
    iris = pd.read_csv(DATASETS_DIR / "iris.csv")
    iris.iloc[::2].to_csv(paths["iris_private"], index=False)
    iris.iloc[1::2].drop(columns=["label"]).head(20).to_csv(paths["iris_public"], index=False)
    # one word among numbers: a column that is numeric except for a typo
    bad = frame.iloc[:N_PRIVATE].copy().astype({"x1": object})
    bad.loc[5, "x1"] = "abc"
    bad.to_csv(paths["text_private"], index=False)
    bad_public = frame.iloc[N_PRIVATE:].drop(columns=["label"]).astype({"x0": object}).reset_index(drop=True)
    bad_public["x0"] = "high"
    bad_public.to_csv(paths["text_public"], index=False)
    return paths


def label_args(files, out_dir: Path, *extra: str, mechanism=("btt", "--epsilon", "50", "--T", "30"),
               k: int = 160, learner: str = "gaussian_nb") -> list[str]:
    return [
        "label",
        "--private", str(files["private"]),
        "--label-column", "label",
        "--public", str(files["public"]),
        "--learner", learner,
        "--k", str(k),
        "--mechanism", *mechanism,
        "--delta", "1e-5",
        "--out", str(out_dir / "labeled.csv"),
        "--report", str(out_dir / "report.json"),
        *extra,
    ]


def read_labeled(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, keep_default_na=False, dtype={"label": str})


def check_outputs(out_dir: Path, mechanism: str) -> tuple[pd.DataFrame, dict]:
    labeled = read_labeled(out_dir / "labeled.csv")
    report = json.loads((out_dir / "report.json").read_text(encoding="utf-8"))
    assert list(labeled.columns) == FEATURES + ["label", "answered", "status"]
    assert len(labeled) == N_PUBLIC
    assert tuple(report) == REPORT_KEYS + RELEASE_KEYS  # every run is charged: the report carries the ledger
    assert report["mechanism"] == mechanism
    assert report["counts"]["queries"] == report["counts"]["public_rows"] == N_PUBLIC
    assert report["ensemble"] == {"learner": "gaussian_nb", "k": 160, "n_private": N_PRIVATE}
    answered = labeled["answered"].astype(str) == "True"
    assert answered.sum() == report["counts"]["answered"]
    assert (labeled["label"][~answered] == "").all()
    assert set(labeled["status"][answered]) <= {"answered"}
    assert (labeled["status"] == "abstained").sum() == report["counts"]["abstained"]
    assert (labeled["status"] == "not processed").sum() == report["counts"]["not_processed"]
    text = (out_dir / "labeled.csv").read_text() + json.dumps(report)
    assert "seed" not in text.lower() and "vote" not in text.lower()
    return labeled, report


# ------------------------------------------------------------------------------ label: each mechanism


def _library_features(files):
    """The run's features as the library chooses them: the public file's columns decide the identifiers."""
    from core.data import check_file, check_public_columns, default_features

    check = check_file(files["private"], label_column="label")
    return default_features(check, public=check_public_columns(files["public"], features=check.features))


def test_label_btt_matches_the_library_exactly(files, tmp_path, capsys):
    # T = m = 30: the run halts only at its 30th abstention, i.e. never before the last
    # row, so every row is processed and the exit code is 0 whatever the noise.
    rc = main(label_args(files, tmp_path, "--seed", "11", "--student", str(tmp_path / "student.joblib")))
    captured = capsys.readouterr()
    assert rc == EXIT_OK, captured.err
    labeled, report = check_outputs(tmp_path, "btt")
    assert set(labeled["label"][labeled["answered"].astype(str) == "True"]) <= {"no", "yes"}
    assert report["parameters"]["calibration"] == "tight" and report["parameters"]["T"] == 30
    assert "Labeled 30 public rows with btt" in captured.out

    # The same run through the library, as the app wires it, gives the very same files.
    rng = np.random.default_rng(11)
    table = load_table(files["private"], label_column="label")
    public = read_public(files["public"], table)
    teachers = pipeline.train(table, "gaussian_nb", {}, 160, rng=rng)
    counts = pipeline.mechanism_inputs("btt", teachers, table, public)
    result = pipeline.label(counts, "btt", {"epsilon": 50.0, "delta": 1e-5, "T": 30}, rng=rng)
    assert (tmp_path / "labeled.csv").read_bytes() == pipeline.labeled_csv(public, result, table.class_names)
    from core.ledger import PrivacyLedger, store_path

    charged = PrivacyLedger("private", store=store_path())  # the run, charged to the file's name before it ran
    assert len(charged) == 1
    expected_report = pipeline.report(result, n_private=N_PRIVATE, n_public=N_PUBLIC,
                                      learner="gaussian_nb", k=160, dataset="private", ledger_total=charged.total(),
                                      classes=table.class_names, classes_declared=False,
                                      features=_library_features(files))
    assert (tmp_path / "report.json").read_text(encoding="utf-8") == expected_report
    # ... and the same as the labeling function called by hand on the teachers of the
    # app's full pipeline (preprocessor + learner on the DataFrame): the plain-numeric
    # shortcut changes nothing.
    rng = np.random.default_rng(11)
    model = make_pipeline(table.preprocessor(), make_learner("gaussian_nb"))
    ensemble = train_teachers(table.features, table.labels, model, 160, n_classes=2, rng=rng)
    by_hand = agg.btt_label(ensemble.vote_counts(public), epsilon=50.0, delta=1e-5, T=30, calibration="tight",
                            beta=0.05, rng=rng)
    assert (tmp_path / "labeled.csv").read_text(encoding="utf-8") == labeled_frame(
        public, by_hand, table.class_names).to_csv(index=False)
    assert expected_report == report_json(privacy_report(by_hand, n_private=N_PRIVATE, n_public=N_PUBLIC,
                                                         learner="gaussian_nb", k=160, dataset="private",
                                                         ledger_total=charged.total(), classes=("no", "yes"),
                                                         features=_library_features(files)))
    student = joblib.load(tmp_path / "student.joblib")
    assert set(np.unique(student.predict(public))) <= {"no", "yes"}
    assert list(student.classes_) == ["no", "yes"] and student.mechanism == "btt"
    assert student.epsilon == report["guarantee"]["epsilon"] and student.report["dataset"] == "private"


def test_label_btt_soft(files, tmp_path, capsys):
    # T = m: at most 2T = 2m failed tests, two per query, so the run never halts early.
    rc = main(label_args(files, tmp_path, mechanism=("btt-soft", "--epsilon", "50", "--T", "30", "--eta", "0.25")))
    assert rc == EXIT_OK, capsys.readouterr().err
    labeled, report = check_outputs(tmp_path, "btt-soft")
    answered = labeled["answered"].astype(str) == "True"
    scores = labeled["label"][answered].astype(float)
    # released scores are bin midpoints of P_eta (k/8) or of the shifted bins (k/4)
    assert all(0 < s < 1 and (8 * s) == round(8 * s) for s in scores)
    assert report["parameters"]["eta"] == 0.25 and report["parameters"]["rounds"] == 60


def test_label_lnmax_answers_every_row_with_class_names(files, tmp_path, capsys):
    rc = main(label_args(files, tmp_path, mechanism=("lnmax", "--gamma", "0.1")))
    assert rc == EXIT_OK, capsys.readouterr().err
    labeled, report = check_outputs(tmp_path, "lnmax")
    assert report["counts"]["answered"] == N_PUBLIC
    assert set(labeled["label"]) <= {"no", "yes"} and labeled["label"].ne("").all()
    assert report["guarantee"]["epsilon"] <= pate_simple_epsilon(0.1, n_answers=N_PUBLIC, delta=1e-5) + 1e-12
    assert report["parameters"]["gamma"] == 0.1


def test_label_lnmax_at_a_target_epsilon(files, tmp_path, capsys):
    # gamma is the registry's choice (the app's): the largest whose exact bound on all
    # public rows is epsilon, not PATE's simpler (looser) data-independent bound.
    from core.accounting import lnmax_gamma_for_epsilon, pate_gamma_for_epsilon

    rc = main(label_args(files, tmp_path, mechanism=("lnmax", "--epsilon", "3")))
    assert rc == EXIT_OK, capsys.readouterr().err
    _, report = check_outputs(tmp_path, "lnmax")
    assert report["parameters"]["gamma"] == lnmax_gamma_for_epsilon(3.0, n_answers=N_PUBLIC, delta=1e-5)
    assert report["parameters"]["gamma"] > pate_gamma_for_epsilon(3.0, n_answers=N_PUBLIC, delta=1e-5)
    assert report["guarantee"]["epsilon"] == pytest.approx(3.0, abs=1e-6)
    assert report["guarantee"]["epsilon"] <= 3.0 + 1e-9


def test_label_baseline(files, tmp_path, capsys):
    rc = main(label_args(files, tmp_path, mechanism=("baseline", "--epsilon", "20")))
    assert rc == EXIT_OK, capsys.readouterr().err
    _, report = check_outputs(tmp_path, "baseline")
    assert report["counts"]["not_processed"] == 0
    expected = composition_baseline_parameters(20.0, delta=1e-5, m=N_PUBLIC)
    assert report["parameters"]["eps0"] == expected.eps0


# ------------------------------------------------------------------------------ label: halting


def halting_settings() -> dict:
    """Settings under which BTT's first query is ⊥ with probability > 1 - 1e-6.

    k = 4 teachers give a distance to instability of at most ceil(4/2) - 1 = 1.  The first
    query passes only if 1 + DLap(2λ) > w + DLap(λ), whose probability (for any data and
    any seed) is ``btt_pass_probability(1, λ, w)``, checked below to be under 1e-6 (about
    1e-8).  With T = 1 that ⊥ halts the run at row 1, leaving 29 rows unprocessed, so the
    exit code is 3 except with probability < 1e-6; the fixed seed makes it deterministic.
    """
    settings = {"epsilon": 1.0, "delta": 1e-6, "T": 1, "k": 4}
    cal = calibrate_btt(settings["epsilon"], delta=settings["delta"], T=1, m=N_PUBLIC, calibration="tight")
    assert float(B.btt_pass_probability(1, cal.noise_scale, cal.threshold)) < 1e-6
    return settings


def test_label_halts_with_exit_3_and_still_writes(files, tmp_path, capsys):
    s = halting_settings()
    argv = label_args(files, tmp_path, "--seed", "5", k=s["k"],
                      mechanism=("btt", "--epsilon", str(s["epsilon"]), "--T", "1"))
    argv[argv.index("--delta") + 1] = str(s["delta"])
    rc = main(argv)
    captured = capsys.readouterr()
    assert rc == EXIT_HALTED
    assert "budget exhausted" in captured.err and "Traceback" not in captured.err
    labeled = read_labeled(tmp_path / "labeled.csv")
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["counts"]["not_processed"] == N_PUBLIC - 1
    assert list(labeled["status"]) == ["abstained"] + ["not processed"] * (N_PUBLIC - 1)
    assert (labeled["label"] == "").all()


def test_student_that_cannot_be_trained_is_an_error_after_the_labels(files, tmp_path, capsys):
    # The halting run answers nothing (see halting_settings), and a student needs two classes.
    # The exit code keeps the labeling's outcome: 3 (halted), not 2.
    s = halting_settings()
    argv = label_args(files, tmp_path, "--student", str(tmp_path / "student.joblib"), k=s["k"],
                      mechanism=("btt", "--epsilon", str(s["epsilon"]), "--T", "1"))
    argv[argv.index("--delta") + 1] = str(s["delta"])
    assert main(argv) == EXIT_HALTED
    err = capsys.readouterr().err
    assert "budget exhausted" in err
    assert err.splitlines()[-1].startswith("private-label-lab: error: The labels were written but the student was not")
    assert (tmp_path / "labeled.csv").exists() and (tmp_path / "report.json").exists()
    assert not (tmp_path / "student.joblib").exists()


def test_delta_of_order_one_over_n_warns_in_one_line(files, tmp_path, capsys):
    argv = _replace(label_args(files, tmp_path, "--class-names", "no,yes", k=20, mechanism=("lnmax", "--gamma", "0.1")),
                    "--delta", "1e-3")  # declared classes: no note on the class list (design §1.3)
    assert main(argv) == EXIT_OK
    err = capsys.readouterr().err
    assert err.startswith("private-label-lab: warning: delta = 0.001 is at least 1/n = 0.000625") and err.count("\n") == 1


def test_installed_script_exits_3_when_halted(files, tmp_path):
    script = Path(sys.executable).with_name("private-label-lab")
    assert script.exists(), "run `pip install -e .` to install the console script"
    s = halting_settings()
    argv = label_args(files, tmp_path, k=s["k"], mechanism=("btt", "--epsilon", str(s["epsilon"]), "--T", "1"))
    argv[argv.index("--delta") + 1] = str(s["delta"])
    proc = subprocess.run([str(script), *argv], capture_output=True, text=True, timeout=120)
    assert proc.returncode == EXIT_HALTED, proc.stderr
    assert "budget exhausted" in proc.stderr and "Traceback" not in proc.stderr
    assert len(read_labeled(tmp_path / "labeled.csv")) == N_PUBLIC


def test_python_m_core_label(files, tmp_path):
    argv = label_args(files, tmp_path, "--class-names", "no,yes", k=20, mechanism=("lnmax", "--gamma", "0.1"))
    proc = subprocess.run([sys.executable, "-m", "core", *argv], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert proc.returncode == EXIT_OK, proc.stderr
    assert proc.stderr == ""  # no progress bar when stderr is not a terminal, no warnings (the classes declared)
    assert "Labeled 30 public rows with lnmax" in proc.stdout
    assert "Classes declared (public): no, yes.\n" in proc.stdout
    assert read_labeled(tmp_path / "labeled.csv")["answered"].astype(str).eq("True").all()


def test_python_m_core_bad_input_is_one_line(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "core", "label", "--private", str(tmp_path / "absent.csv"), "--public",
         str(tmp_path / "absent2.csv"), "--learner", "gaussian_nb", "--k", "10", "--mechanism", "lnmax",
         "--gamma", "0.1", "--delta", "1e-6", "--out", str(tmp_path / "o.csv")],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )
    assert proc.returncode == EXIT_ERROR
    assert proc.stderr.startswith("private-label-lab: error: No file at") and proc.stderr.count("\n") == 1
    assert not (tmp_path / "o.csv").exists()


# ------------------------------------------------------------------------------ label: bad input


def _replace(argv: list[str], flag: str, value: str | None) -> list[str]:
    argv = list(argv)
    i = argv.index(flag)
    if value is None:
        del argv[i : i + 2]
    else:
        argv[i + 1] = value
    return argv


BAD = {
    "missing file": (lambda a, f, t: _replace(a, "--private", str(t / "nope.csv")), "No file at"),
    "unknown label column": (lambda a, f, t: _replace(a, "--label-column", "target"), "label column 'target'"),
    "unknown learner": (lambda a, f, t: _replace(a, "--learner", "deep_forest"), "Unknown learner 'deep_forest'"),
    "bad learner value": (lambda a, f, t: a + ["--learner-param", "var_smoothing=abc"], "var_smoothing must be"),
    "unknown learner param": (lambda a, f, t: a + ["--learner-param", "depth=3"], "no hyperparameter 'depth'"),
    "learner param without =": (lambda a, f, t: a + ["--learner-param", "var_smoothing"], "key=value"),
    "epsilon zero": (lambda a, f, t: _replace(a, "--epsilon", "0"), "epsilon must be a finite number greater than 0"),
    "epsilon negative": (lambda a, f, t: _replace(a, "--epsilon", "-1"), "epsilon must be"),
    "delta zero": (lambda a, f, t: _replace(a, "--delta", "0"), "delta must lie strictly between 0 and 1"),
    "delta one": (lambda a, f, t: _replace(a, "--delta", "1"), "delta must lie strictly between 0 and 1"),
    "delta above one": (lambda a, f, t: _replace(a, "--delta", "1.5"), "delta must lie strictly between 0 and 1"),
    "T zero": (lambda a, f, t: _replace(a, "--T", "0"), "T (the maximum number of abstentions) must be at least 1"),
    "k above rows": (lambda a, f, t: _replace(a, "--k", str(N_PRIVATE + 1)), "more than the 1600 private rows"),
    "k one": (lambda a, f, t: _replace(a, "--k", "1"), "must be at least 2"),
    "text in numeric column": (lambda a, f, t: _replace(a, "--private", str(f["text_private"])), "'x1' holds numbers except"),
    "text in public column": (lambda a, f, t: _replace(a, "--public", str(f["text_public"])), "Column 'x0' of the public table holds text"),
    "eta not 1/integer": (lambda a, f, t: _replace(a, "--mechanism", "btt-soft") + ["--eta", "0.3"], "1/eta must be a whole number"),
    "eta for btt": (lambda a, f, t: a + ["--eta", "0.25"], "--eta does not apply to --mechanism btt"),
    "T for lnmax": (lambda a, f, t: _replace(_replace(a, "--mechanism", "lnmax"), "--epsilon", None) + ["--gamma", "0.1"],
                    "--T does not apply to --mechanism lnmax"),
    "lnmax with gamma and epsilon": (lambda a, f, t: _replace(_replace(a, "--mechanism", "lnmax"), "--T", None)
                                     + ["--gamma", "0.1"], "lnmax takes either epsilon or gamma"),
    "lnmax without gamma or epsilon": (lambda a, f, t: _replace(_replace(_replace(a, "--mechanism", "lnmax"), "--T", None),
                                                                "--epsilon", None), "--mechanism lnmax needs --epsilon or --gamma"),
    "btt without epsilon": (lambda a, f, t: _replace(a, "--epsilon", None), "--mechanism btt needs --epsilon"),
    "btt without delta": (lambda a, f, t: _replace(a, "--delta", None), "--mechanism btt needs --delta"),
    "soft on three classes": (lambda a, f, t: _replace(_replace(_replace(a, "--private", str(f["iris_private"])), "--public",
                              str(f["iris_public"])), "--mechanism", "btt-soft") , "needs a binary task"),
    "soft without probabilities": (lambda a, f, t: _replace(_replace(a, "--mechanism", "btt-soft"), "--learner", "linear_svm"),
                                   "needs class probabilities"),
    "out folder missing": (lambda a, f, t: _replace(a, "--out", str(t / "no" / "such" / "x.csv")), "does not exist"),
    "out overwrites input": (lambda a, f, t: _replace(a, "--out", str(f["private"])), "is one of the input files"),
    "unknown backend": (lambda a, f, t: a + ["--backend", "carrier-pigeon"], "Unknown parallel backend"),
    "dask without scheduler": (lambda a, f, t: a + ["--backend", "dask"], "needs the address of a running Dask scheduler"),
    "dask scheduler unreachable": (lambda a, f, t: a + ["--backend", "dask", "--scheduler", "tcp://127.0.0.1:1",
                                                        "--scheduler-timeout", "1"], "Could not reach the Dask scheduler"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_label_bad_input_exits_2_with_one_line(case, files, tmp_path, capsys):
    edit, message = BAD[case]
    argv = edit(label_args(files, tmp_path, k=20), files, tmp_path)
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == EXIT_ERROR
    assert err.startswith("private-label-lab: error: ") and err.endswith("\n")
    assert err.count("\n") == 1, err
    assert message in err
    assert "Traceback" not in err
    assert not (tmp_path / "labeled.csv").exists()


def test_usage_errors_exit_2(files, tmp_path, capsys):
    assert main(["label", "--private", str(files["private"])]) == EXIT_ERROR
    assert "the following arguments are required" in capsys.readouterr().err
    assert main(label_args(files, tmp_path, mechanism=("pate",))) == EXIT_ERROR
    assert "invalid choice: 'pate'" in capsys.readouterr().err
    assert main(["label", "--k", "ten"]) == EXIT_ERROR
    assert main([]) == EXIT_ERROR
    # the generated flags convert with the registry's parameter types
    assert main(_replace(label_args(files, tmp_path), "--T", "2.5")) == EXIT_ERROR
    assert "argument --T: T must be a whole number, got '2.5'" in capsys.readouterr().err
    assert main(label_args(files, tmp_path, "--calibration", "loose")) == EXIT_ERROR
    assert "argument --calibration: invalid choice: 'loose'" in capsys.readouterr().err


def test_help_lists_learners_and_exit_codes(capsys):
    assert main(["label", "--help"]) == EXIT_OK
    out = capsys.readouterr().out
    flat = " ".join(out.split())
    for name in registry.names():  # every mechanism, its description and its flags
        mech = registry.get(name)
        assert f" {name} " in flat and " ".join(mech.description.split()) in flat
        for p in mech.parameters:
            assert f"--{p.name} " in flat
    assert "--epsilon E (sets gamma) or --gamma G" in flat
    assert "logistic_regression" in out and "n_estimators=20" in out
    assert "exit codes:" in out and "budget ran out" in out
    assert main(["--version"]) == EXIT_OK
    assert "private-label-lab 0.1.0" in capsys.readouterr().out


# ------------------------------------------------------------------------------ progress bar


def test_progress_bar_when_asked_and_not_otherwise(files, tmp_path, capsys):
    argv = label_args(files, tmp_path, k=20, mechanism=("lnmax", "--gamma", "0.1"))
    assert main(argv + ["--progress"]) == EXIT_OK
    err = capsys.readouterr().err
    assert "\rTraining 20 teachers [" in err and " 20/20\n" in err
    # a mechanism answering query by query labels the file as a stream: rows, rows/s, time left
    assert "\rLabeling [" + "#" * 24 + f"] {N_PUBLIC}/{N_PUBLIC} rows  " in err and " rows/s  0:00 left \n" in err
    assert main(argv + ["--overwrite"]) == EXIT_OK  # captured stderr is not a terminal: no bar
    assert "\r" not in capsys.readouterr().err


def test_progress_bar_drawing():
    class Terminal:
        def __init__(self):
            self.text = ""

        def write(self, s):
            self.text += s

        def flush(self):
            pass

    term = Terminal()
    bar = ProgressBar(term, enabled=True, width=10)
    step = bar.task("Work")
    step(1, 4)
    bar.break_line()
    step(4, 4)
    assert term.text == "\rWork [##--------] 1/4\n\rWork [##########] 4/4\n"
    assert ProgressBar(term, enabled=False).task("Work") is None


# ------------------------------------------------------------------------------ bounds


BOUNDS_ARGS = ["bounds", "--epsilon", "1", "--delta", "1e-5", "--T", "10", "--m", "1000", "--calibration", "paper",
               "--alpha", "0.01", "--k", "5000", "--n", "1e10", "--vc", "10", "--lnmax-gamma", "0.05"]


def test_bounds_json_equals_the_library(capsys):
    assert main(BOUNDS_ARGS + ["--json"]) == EXIT_OK
    data = json.loads(capsys.readouterr().out)
    cal = calibrate_btt(1.0, delta=1e-5, T=10, m=1000, calibration="paper")
    btt = data["btt"]
    assert btt["noise_scale"] == cal.noise_scale and btt["threshold"] == cal.threshold
    assert btt["epsilon"] == cal.guarantee.epsilon and btt["delta"] == cal.guarantee.delta
    assert btt["k_recommended"] == float(B.btt_num_teachers(cal.noise_scale, 1000, 10, 1e-5, 0.05))
    assert btt["k_min_unanimous"] == B.btt_min_teachers(1.0, 1e-5, 10, 1000, "paper") == 4781  # docstring value
    assert math.isclose(btt["k_recommended"], 66_441, rel_tol=1e-4)  # core.theory docstring example
    assert data["a-stab"]["threshold"] == a_stab_threshold(1.0, delta=1e-5)
    base = composition_baseline_parameters(1.0, delta=1e-5, m=1000)
    assert data["baseline"]["eps0"] == base.eps0 and data["baseline"]["epsilon"] == base.guarantee.epsilon
    assert data["lnmax"]["epsilon_pate_simple"] == pate_simple_epsilon(0.05, n_answers=1000, delta=1e-5)
    from core.accounting import lnmax_guarantee

    assert data["lnmax"]["epsilon"] == lnmax_guarantee(0.05, n_answers=1000, delta=1e-5).epsilon
    assert data["lnmax"]["epsilon"] == data["lnmax"]["epsilon_laplace_pld"] < data["lnmax"]["epsilon_composition"]
    thm = data["theorem_3_2"]
    assert thm["cutoff_T"] == float(B.cutoff_T(0.0, 0.01, 1000, 0.05))
    assert thm["expected_answers_btt"] == float(B.expected_answers_btt(5000, 0.01, 1.0, 1e-5, 10, 1000, "paper"))
    loop = B.solve_btt_parameters(1e10, 10, 1.0, 1e-5, 0.05, 1000, calibration="paper")
    assert data["loop_solver"]["feasible"] is True
    assert data["loop_solver"]["k"] == loop.k and data["loop_solver"]["T"] == loop.T
    assert math.isclose(loop.k, 192_769, rel_tol=1e-4)  # core.theory docstring example


def test_bounds_table_shows_the_json_values(capsys):
    assert main(BOUNDS_ARGS) == EXIT_OK
    table = capsys.readouterr().out
    assert main(BOUNDS_ARGS + ["--json"]) == EXIT_OK
    data = json.loads(capsys.readouterr().out)
    rows = [line.split(None, 2) for line in table.splitlines() if line.startswith("  ")]
    expected = [(k, v) for section in data.values() for k, v in section.items() if k != "reason"]
    assert [r[0] for r in rows] == [k for k, _ in expected]
    for (key, shown, *_), (_, value) in zip(rows, expected):
        if isinstance(value, bool):
            assert shown == ("yes" if value else "no"), key
        elif isinstance(value, (int, float)):
            assert math.isclose(float(shown), value, rel_tol=1e-5), key
        elif value is not None:
            assert shown == str(value).split()[0], key
    # aligned: keys left-aligned in one column, values right-aligned in the next
    lines = [line for line in table.splitlines() if line.startswith("  ")]
    end = 2 + max(len(r[0]) for r in rows) + 2 + max(len(r[1]) for r in rows)
    for line, (key, shown, *_) in zip(lines, rows):
        assert line.startswith("  " + key + " ") and line[end - len(shown) : end] == shown, line


def test_bounds_soft_and_bad_values(capsys):
    assert main(["bounds", "--epsilon", "2", "--delta", "1e-6", "--T", "3", "--m", "100", "--soft", "--json"]) == EXIT_OK
    data = json.loads(capsys.readouterr().out)
    cal = calibrate_btt(2.0, delta=1e-6, T=3, m=100, calibration="tight", soft=True)
    assert data["btt"]["rounds"] == 6 and data["btt"]["noise_scale"] == cal.noise_scale
    assert data["btt"]["k_recommended"] == float(B.btt_soft_num_teachers(cal.noise_scale, 100, 3, 1e-6, 0.05))
    assert main(["bounds", "--epsilon", "-1", "--delta", "1e-6", "--T", "3", "--m", "100"]) == EXIT_ERROR
    assert capsys.readouterr().err.startswith("private-label-lab: error: epsilon must be")
    assert main(["bounds", "--epsilon", "1", "--delta", "1e-6", "--T", "3", "--m", "100", "--n", "1e6"]) == EXIT_ERROR
    assert "needs both --n" in capsys.readouterr().err


# ------------------------------------------------------------------------------ audit


def test_audit_prints_claim_and_lower_bound_of_the_library(capsys):
    argv = ["audit", "--mechanism", "btt", "--trials", "4000", "--seed", "3"]
    rc = main(argv + ["--json"])
    data = json.loads(capsys.readouterr().out)
    scn = A.scenario("btt", epsilon=1.0, delta=1e-2, T=1, calibration="tight")
    expected = A.run_scenario(scn, n_trials=4000, confidence=0.99, rng=3, chunk_size=1000)
    assert data["claimed_epsilon"] == expected.claimed_epsilon == scn.claimed_epsilon
    assert data["epsilon_lower_bound"] == expected.epsilon_lower_bound
    assert data["passed"] is expected.passed and rc == (EXIT_OK if expected.passed else EXIT_VIOLATION)
    assert data["pair"] == "answered_then_bottom" and data["n_trials"] == 4000
    assert main(argv) == rc
    table = capsys.readouterr().out
    assert f"claimed epsilon     {expected.claimed_epsilon:.4f}" in table
    assert f"audited epsilon >=  {expected.epsilon_lower_bound:.4f}" in table


def test_audit_catches_the_teaching_leak_with_exit_4(capsys):
    # The printed distance moves by 2, so the true epsilon on this pair is 2 against a
    # claim of 1 (event probabilities ~0.10 vs ~0.015, see tests/audit/test_audit.py).  With
    # 10,000 estimation trials per input the Clopper-Pearson bounds are within about
    # 0.01 and 0.004 of them, giving a lower bound near 1.5; falling to the claim would
    # need deviations of more than 5 standard errors (probability < 1e-6 for any seed).
    rc = main(["audit", "--mechanism", "printed-distance-a-stab", "--trials", "20000", "--seed", "2", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == EXIT_VIOLATION
    assert data["teaching"] is True and data["epsilon_lower_bound"] > data["claimed_epsilon"] == 1.0


def test_audit_bad_settings(capsys):
    assert main(["audit", "--mechanism", "lnmax", "--epsilon", "1", "--trials", "100"]) == EXIT_ERROR
    assert "--epsilon does not apply to --mechanism lnmax" in capsys.readouterr().err
    assert main(["audit", "--mechanism", "btt", "--pair", "bin_edge", "--trials", "100"]) == EXIT_ERROR
    assert "is not offered for btt" in capsys.readouterr().err
    assert main(["audit", "--mechanism", "btt", "--trials", "5"]) == EXIT_ERROR
    assert "n_trials must be a whole number of at least 20" in capsys.readouterr().err


# ------------------------------------------------------------------------------ generated from the registry


def test_mechanism_choices_and_flags_come_from_the_registry(capsys):
    from core.cli import build_parser

    label = build_parser()._subparsers._group_actions[0].choices["label"]
    mechanism = next(a for a in label._actions if a.dest == "mechanism")
    assert list(mechanism.choices) == [*registry.names(), "auto"]  # auto: chosen by core.auto
    flags = {s for a in label._actions for s in a.option_strings}
    for name in registry.names():
        assert {f"--{p}" for p in registry.get(name).parameter_names} <= flags
    audit = build_parser()._subparsers._group_actions[0].choices["audit"]
    mechanism = next(a for a in audit._actions if a.dest == "mechanism")
    assert list(mechanism.choices) == list(A.audit_mechanisms()) + list(A.TEACHING_MECHANISMS)
    assert "btt_soft" not in mechanism.choices and "a-stab" in mechanism.choices


def _toy_mechanism():
    """A toy Laplace noisy max with a public parameter of its own, ``spread``."""
    from core.accounting import PrivacyGuarantee
    from core.mechanisms import LabelingResult, Mechanism, Parameter

    def privacy_map(m, *, epsilon, delta, spread=1.0):
        return PrivacyGuarantee(float(epsilon), float(delta), "toy", f"toy-max on {m} queries")

    def label(counts, *, epsilon, delta, spread=1.0, rng=None):
        counts = np.asarray(counts, dtype=float)
        gen = np.random.default_rng(rng)
        labels = np.argmax(counts + gen.laplace(scale=spread / epsilon, size=counts.shape), axis=1).astype(np.int64)
        m = len(labels)
        return LabelingResult("toy-max", labels, None, m, 0, 0, None, float(epsilon), float(delta),
                              params={"spread": spread, "m": m}, accounting="toy")

    return Mechanism(
        name="toy-max",
        title="Toy noisy max",
        description="A toy noisy max registered by a test; never use it.",
        parameters=(registry.PARAMETERS["epsilon"], registry.PARAMETERS["delta"],
                    Parameter("spread", "float", 1.0, "spread", "Width of the toy noise, in units of 1/epsilon.",
                              metavar="W")),
        label=label,
        privacy_map=privacy_map,
    )


@pytest.fixture
def toy_mechanism():
    registry.names()  # the built-in mechanisms first
    registry.register(_toy_mechanism())
    try:
        yield "toy-max"
    finally:
        registry.unregister("toy-max")


def test_a_registered_mechanism_is_on_the_command_line_with_no_other_edit(toy_mechanism, files, tmp_path, capsys):
    assert main(["label", "--help"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "toy-max" in out.split("--mechanism", 2)[1]  # among the choices
    flat = " ".join(out.split())
    assert "toy-max Toy noisy max. A toy noisy max registered by a test; never use it." in flat
    assert "--epsilon E --delta D [--spread W, default 1]" in flat
    assert "--spread W Width of the toy noise, in units of 1/epsilon (toy-max; default 1)" in flat

    argv = label_args(files, tmp_path, "--seed", "3", "--spread", "0.5", k=20,
                      mechanism=("toy-max", "--epsilon", "2"))
    assert main(argv) == EXIT_OK, capsys.readouterr().err
    # the flag reached the labeling function (same seed and noise: same labels as the library)
    table = load_table(files["private"], label_column="label")
    public = read_public(files["public"], table)
    rng = np.random.default_rng(3)
    votes = pipeline.mechanism_inputs("toy-max", pipeline.train(table, "gaussian_nb", {}, 20, rng=rng), table, public)
    expected = pipeline.label(votes, "toy-max", {"epsilon": 2.0, "delta": 1e-5, "spread": 0.5}, rng=rng)
    assert (tmp_path / "labeled.csv").read_bytes() == pipeline.labeled_csv(public, expected, table.class_names)
    labeled = read_labeled(tmp_path / "labeled.csv")
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["mechanism"] == "toy-max"
    assert report["guarantee"]["epsilon"] == 2.0 and report["counts"]["answered"] == N_PUBLIC
    assert set(labeled["label"]) <= {"no", "yes"}
    # its flag is refused by the others, and the others' by it
    assert main(label_args(files, tmp_path, "--spread", "0.5", k=20)) == EXIT_ERROR
    assert "--spread does not apply to --mechanism btt" in capsys.readouterr().err
    assert main(label_args(files, tmp_path, k=20, mechanism=("toy-max", "--epsilon", "2", "--T", "3"))) == EXIT_ERROR
    assert "--T does not apply to --mechanism toy-max, which takes --epsilon, --delta, --spread." in capsys.readouterr().err
    # and it is gone again once unregistered
    registry.unregister("toy-max")
    assert main(argv) == EXIT_ERROR
    assert "invalid choice: 'toy-max'" in capsys.readouterr().err


def _request(name: str) -> dict:
    """A request for a mechanism: a budget, and its other settings left to their defaults."""
    mech = registry.get(name)
    request = {}
    if mech.takes_epsilon:
        request["epsilon"] = 40.0
    if "delta" in mech.parameter_names:
        request["delta"] = 1e-5
    for p in mech.parameters:
        if p.name not in request and p.name not in mech.derived and p.default is None and not getattr(p, "optional", False):
            request[p.name] = p.low if p.low is not None else 1.0
    return request


@pytest.mark.parametrize("name", registry.names())
def test_cli_and_library_spend_the_same_epsilon_and_choose_the_same_parameters(name, files, tmp_path, capsys):
    request = _request(name)
    flags = [x for key, value in request.items() for x in (f"--{key}", repr(value))]
    argv = _replace(label_args(files, tmp_path, k=40, mechanism=(name, *flags)), "--delta", None)
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc in (EXIT_OK, EXIT_HALTED), err
    report = json.loads((tmp_path / "report.json").read_text())
    guarantee = pipeline.privacy_map(name, request, N_PUBLIC)
    assert report["guarantee"]["epsilon"] == pytest.approx(guarantee.epsilon, rel=1e-12)
    assert report["guarantee"]["delta"] == pytest.approx(guarantee.delta, rel=1e-12)
    # every parameter the report publishes is the library's choice (the budget as *_target)
    chosen = pipeline.resolve(name, request, N_PUBLIC)
    published = report["parameters"]
    chosen = {k: v for k, v in chosen.items() if v is not None}  # None: the mechanism's own public choice
    names = {k: k if k in published else f"{k}_target" for k in chosen}
    shared = {k: v for k, v in chosen.items() if names[k] in published and not isinstance(v, str)}
    assert {k: published[names[k]] for k in shared} == pytest.approx(shared)
    assert all(published[names[k]] == v for k, v in chosen.items() if names[k] in published and isinstance(v, str))
    from core.export import PUBLIC_PARAMETERS

    for key in registry.get(name).derived:  # the noise that epsilon decides, where the export publishes it
        if key in PUBLIC_PARAMETERS:
            assert published[key] == pytest.approx(chosen[key], rel=1e-12)
    assert report["mechanism"] == name


def test_audit_settings_are_the_registry_defaults_overridden_by_flags(capsys):
    mech = registry.get("btt-soft")
    argv = ["audit", "--mechanism", "btt-soft", "--trials", "200", "--seed", "1", "--json"]
    assert main(argv + ["--eta", "0.5"]) in (EXIT_OK, EXIT_VIOLATION)
    data = json.loads(capsys.readouterr().out)
    assert data["mechanism"] == "btt-soft"
    assert data["settings"] == {**mech.audit_defaults, "eta": 0.5}
    assert main(["audit", "--mechanism", "btt", "--gamma", "0.1", "--trials", "200"]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert "--gamma does not apply to --mechanism btt, which takes " in err and err.count("\n") == 1


# ------------------------------------------------------------------------------ label: streaming


@pytest.mark.parametrize("mechanism", [
    ("btt", "--epsilon", "50", "--T", "30"),
    ("confident-gnmax", "--epsilon", "20", "--accounting", "filter"),
    ("gnmax", "--epsilon", "20"),
])
def test_label_in_chunks_equals_one_chunk(files, tmp_path, mechanism):
    outputs = []
    for rows in ("7", "1000"):
        folder = tmp_path / rows
        folder.mkdir()
        argv = label_args(files, folder, "--seed", "5", "--chunk-rows", rows, "--dataset", "run", "--ledger",
                          str(folder / "ledger.sqlite"), mechanism=mechanism, k=100)  # each run the first in its store
        assert main(argv) in (EXIT_OK, EXIT_HALTED)
        outputs.append(((folder / "labeled.csv").read_bytes(), (folder / "report.json").read_text()))
        assert not list(folder.glob("*.part"))
    assert outputs[0] == outputs[1]
    labeled = pd.read_csv(io.BytesIO(outputs[0][0]), keep_default_na=False)
    assert len(labeled) == N_PUBLIC and list(labeled.columns[-3:]) == ["label", "answered", "status"]


def test_a_bad_row_in_a_later_chunk_leaves_no_labeled_file(files, tmp_path, capsys):
    public = pd.read_csv(files["public"]).astype({"x1": object})
    public.loc[25, "x1"] = "oops"
    bad = tmp_path / "late_bad.csv"
    public.to_csv(bad, index=False)
    argv = label_args(files, tmp_path, "--chunk-rows", "10", k=20, mechanism=("lnmax", "--gamma", "0.1"))
    argv[argv.index("--public") + 1] = str(bad)
    assert main(argv) == EXIT_ERROR
    assert "oops" in capsys.readouterr().err
    assert not (tmp_path / "labeled.csv").exists() and not list(tmp_path.glob("*.part"))


def test_count_rows(tmp_path):
    import gzip

    from core.cli.stream import count_rows

    cases = {
        "plain.csv": (b"a,b\n1,2\n3,4\n", 2),
        "no_last_break.csv": (b"a,b\n1,2\n3,4", 2),
        "blank_lines.csv": (b"a,b\n1,2\n\n3,4\r\n\r\n5,6\n", 3),
        "quoted.csv": (b'a,b\n1,"x\ny"\n3,4\n', 2),
        "header_only.csv": (b"a,b\n", 0),
    }
    for name, (data, rows) in cases.items():
        (tmp_path / name).write_bytes(data)
        assert count_rows(tmp_path / name) == rows, name
        assert count_rows(tmp_path / name) == len(pd.read_csv(tmp_path / name)), name
    with gzip.open(tmp_path / "z.csv.gz", "wb") as handle:
        handle.write(b"a,b\n1,2\n3,4\n")
    assert count_rows(tmp_path / "z.csv.gz") == 2


def test_streaming_drop_skips_rows_and_whole_chunks_with_missing_cells(tmp_path, capsys):
    train = pd.read_csv(DATASETS_DIR / "adult_train.csv.gz", dtype=str, keep_default_na=False)
    test = pd.read_csv(DATASETS_DIR / "adult_test.csv.gz", dtype=str, keep_default_na=False)
    train.iloc[:1500].to_csv(tmp_path / "private.csv", index=False)
    public = test.iloc[:60].drop(columns=["income"]).copy()
    public.iloc[10:20, 1] = "?"  # a whole chunk of 10 rows with a missing cell
    public.iloc[33, 3] = " ? "
    public.to_csv(tmp_path / "public.csv", index=False)
    complete = ~(public.apply(lambda c: c.str.strip()) == "?").any(axis=1)
    argv = ["label", "--private", str(tmp_path / "private.csv"), "--label-column", "income",
            "--public", str(tmp_path / "public.csv"), "--missing", "drop", "--missing-marker", "?",
            "--learner", "logistic_regression", "--k", "20", "--mechanism", "gnmax", "--epsilon", "5",
            "--delta", "1e-5", "--chunk-rows", "10", "--seed", "1", "--out", str(tmp_path / "labeled.csv")]
    assert main(argv) == EXIT_OK, capsys.readouterr().err
    labeled = pd.read_csv(tmp_path / "labeled.csv", keep_default_na=False)
    assert len(labeled) == int(complete.sum())
    assert labeled["age"].astype(str).tolist() == public.loc[complete, "age"].tolist()
