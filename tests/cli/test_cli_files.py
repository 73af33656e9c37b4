"""The command line on the files a hurried data owner has: a spreadsheet's semicolon export with
decimal commas in Latin-1, an identifier column to keep for the join, a second run into the
same file names."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from builders import euro_frames

from core.cli import EXIT_ERROR, EXIT_OK, main

N_PRIVATE, N_PUBLIC = 1200, 60


@pytest.fixture(scope="module")
def euro(tmp_path_factory) -> dict[str, Path]:
    """Private and public files written as a European spreadsheet writes them: ';', decimal ',',
    Latin-1 (accented city names); a row number 'rownum' and, in the public file, a few missing cells."""
    folder = tmp_path_factory.mktemp("euro")
    rng = np.random.default_rng(3)

    private, public = euro_frames(rng, N_PRIVATE, N_PUBLIC, 50_000)
    public.loc[[3, 17], "x2"] = np.nan  # two public rows with a missing cell: dropped with --missing drop
    paths = {"private": folder / "private.csv", "public": folder / "public.csv", "truth": public}
    private.to_csv(paths["private"], sep=";", decimal=",", index=False, encoding="latin-1")
    public.to_csv(paths["public"], sep=";", decimal=",", index=False, encoding="latin-1")
    return paths


def label(euro, out: Path, *extra: str, mechanism: str = "gnmax") -> list[str]:
    return ["label", "--private", str(euro["private"]), "--public", str(euro["public"]), "--learner",
            "logistic_regression", "--k", "20", "--mechanism", mechanism, "--epsilon", "2", "--delta", "1e-5",
            "--out", str(out), "--seed", "0", "--missing", "drop", *extra]


def test_a_latin1_file_is_refused_naming_the_file_and_the_flag(euro, tmp_path, capsys):
    assert main(label(euro, tmp_path / "out.csv")) == EXIT_ERROR
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and f"'{euro['private']}'" in err and "--encoding latin-1" in err
    assert "encoding=" not in err  # the command line's words, not the library's
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize("mechanism", ["gnmax", "dp-logistic"])  # in chunks, and the whole file at once
def test_a_semicolon_decimal_comma_file_labels_and_the_dropped_key_stays_in_the_export(euro, tmp_path, capsys,
                                                                                     mechanism):
    out = tmp_path / "out.csv"
    code = main(label(euro, out, "--encoding", "latin-1", "--drop", "rownum", "--report", str(tmp_path / "r.json"),
                      mechanism=mechanism))
    assert code == EXIT_OK, capsys.readouterr().err
    labeled = pd.read_csv(out, dtype={"city": str})
    truth = euro["truth"].drop(index=[3, 17]).reset_index(drop=True)
    # The dropped identifier is the export's first column, each row's own: the labels join back by it.
    assert list(labeled.columns) == ["rownum", "x1", "x2", "city", "label", "answered", "status"]
    np.testing.assert_array_equal(labeled["rownum"], truth["rownum"])
    np.testing.assert_allclose(labeled["x1"], truth["x1"])  # decimal commas read as numbers
    assert labeled["city"].tolist() == truth["city"].tolist()  # Latin-1 letters read as written
    joined = labeled.merge(truth, on="rownum", suffixes=("", "_file"))
    np.testing.assert_allclose(joined["x1"], joined["x1_file"])
    report = json.loads((tmp_path / "r.json").read_text())
    assert "rownum" not in json.dumps(report.get("columns", report))  # never a feature


def test_key_names_the_join_column_and_keeps_it_out_of_the_features(euro, tmp_path, capsys):
    out = tmp_path / "out.csv"
    code = main(label(euro, out, "--encoding", "latin-1", "--key", "rownum", "--student", str(tmp_path / "s.joblib"),
                      mechanism="dp-logistic"))
    assert code == EXIT_OK, capsys.readouterr().err
    labeled = pd.read_csv(out)
    assert labeled.columns[0] == "rownum" and labeled["rownum"].is_unique
    import joblib

    student = joblib.load(tmp_path / "s.joblib")
    assert "rownum" not in list(student.feature_names_in_)  # the key is never a feature
    assert main(label(euro, tmp_path / "o2.csv", "--encoding", "latin-1", "--key", "nope")) == EXIT_ERROR
    err = capsys.readouterr().err
    assert "--key names column(s) 'nope' that the public file does not have" in err


def test_a_second_run_never_overwrites_the_first_runs_files(euro, tmp_path, capsys):
    out, report = tmp_path / "out.csv", tmp_path / "report.json"
    args = label(euro, out, "--encoding", "latin-1", "--drop", "rownum", "--report", str(report))
    assert main(args) == EXIT_OK
    first = out.read_bytes(), report.read_bytes()
    capsys.readouterr()
    assert main(args) == EXIT_ERROR
    err = capsys.readouterr().err
    assert f"--out '{out}' exists already" in err and "--overwrite" in err and "nothing was run or spent" in err
    assert (out.read_bytes(), report.read_bytes()) == first
    assert main([*args[:-2], "--report", str(tmp_path / "new.json")]) == EXIT_ERROR  # --out still there
    assert main([*args, "--overwrite"]) == EXIT_OK


def test_given_separator_and_decimal_flags(euro, tmp_path, capsys):
    # Told the files are comma-separated, the reader says what it found, in flags.
    assert main(label(euro, tmp_path / "o.csv", "--encoding", "latin-1", "--sep", ",")) == EXIT_ERROR
    err = capsys.readouterr().err
    assert "The file looks semicolon-separated: read it with --sep ';'" in err
    assert "sep=" not in err.replace("--sep", "")


def test_plan_reads_a_semicolon_latin1_file(euro, capsys):
    code = main(["plan", "--private", str(euro["private"]), "--public", str(euro["public"]), "--encoding", "latin-1",
                 "--epsilon", "1", "--mechanism", "gnmax", "--draws", "2"])
    out = capsys.readouterr().out
    assert code == EXIT_OK and f"its number of rows ({N_PRIVATE})" in out and "(2 classes)" in out
