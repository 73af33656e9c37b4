"""The command line pairs the private and the public file through the library's one check
(:func:`core.data.check_pair`, :func:`core.data.check_public`, :func:`core.data.copied_rows`):
the private file given as ``--public`` is refused before anything is trained or charged, in the
command line's words; public rows copying private rows are a marked NON-PRIVATE warning; a
public file lacking a feature column names ``--drop``; a mistyped flag names the right one."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from core.cli import EXIT_ERROR, EXIT_OK, main
from core.data import DATASETS_DIR


@pytest.fixture(scope="module")
def iris(tmp_path_factory) -> dict[str, Path]:
    """Iris: even rows private (with the label), odd rows public (without), and the mistaken files."""
    folder = tmp_path_factory.mktemp("pairing")
    frame = pd.read_csv(DATASETS_DIR / "iris.csv")
    paths = {name: folder / f"{name}.csv" for name in ("private", "public", "copy", "labeled", "copied", "lacks")}
    frame.iloc[::2].to_csv(paths["private"], index=False)
    frame.iloc[1::2].drop(columns=["label"]).to_csv(paths["public"], index=False)
    shutil.copyfile(paths["private"], paths["copy"])  # the same bytes under another name
    frame.iloc[1::2].to_csv(paths["labeled"], index=False)  # public rows that kept their label
    frame.iloc[::2].drop(columns=["label"]).head(30).to_csv(paths["copied"], index=False)  # private rows, unlabeled
    frame.iloc[1::2].drop(columns=["label", "petal width (cm)"]).to_csv(paths["lacks"], index=False)
    return paths


def label(private: Path, public: Path, out: Path, *extra: str) -> list[str]:
    return ["label", "--private", str(private), "--label-column", "label", "--public", str(public),
            "--mechanism", "dp-logistic", "--epsilon", "1", "--delta", "1e-5", "--out", str(out), "--no-progress",
            *extra]


def refused(capsys, argv: list[str], out: Path) -> str:
    """Run ``argv``: refused (exit 2), one error line, no file written, nothing charged."""
    ledger = Path(os.environ["PRIVATE_LABEL_LAB_LEDGER"])
    assert main(argv) == EXIT_ERROR
    err = capsys.readouterr().err
    assert err.count("error:") == 1, err
    assert not out.exists()
    assert not ledger.exists()  # refused before the ledger was opened: nothing charged
    return err


@pytest.mark.parametrize("public", ["private", "copy", "link"])
def test_the_private_file_given_as_public_is_refused(iris, tmp_path, capsys, public):
    path = iris[public] if public != "link" else tmp_path / "link.csv"
    if public == "link":
        path.symlink_to(iris["private"])
    out = tmp_path / "same.csv"
    err = refused(capsys, label(iris["private"], path, out), out)
    assert "The same file is given to --private and to --public" in err and "Give --public the rows to label" in err
    assert "given as the" not in err  # the command line's words


@pytest.mark.parametrize("command", ["tune", "recommend", "plan"])
def test_tune_recommend_and_plan_refuse_it_too(iris, tmp_path, capsys, command):
    argv = [command, "--private", str(iris["private"]), "--label-column", "label", "--public", str(iris["copy"]),
            "--epsilon", "1", "--delta", "1e-5"]
    if command == "tune":
        argv += ["--mechanism", "dp-logistic", "--score", "answered", "--out", str(tmp_path / "t.csv")]
    elif command == "plan":
        argv += ["--mechanism", "gnmax", "--k", "10"]
    else:
        argv += ["--model-accuracy", "0.9"]
    err = refused(capsys, argv, tmp_path / "t.csv")
    assert "same file is given to --private and to --public" in err


@pytest.mark.parametrize("mechanism", ["dp-logistic", "gnmax"])  # the whole file, and in chunks
def test_a_public_file_with_the_label_column_is_refused(iris, tmp_path, capsys, mechanism):
    out = tmp_path / "l.csv"
    argv = label(iris["private"], iris["labeled"], out)
    argv[argv.index("dp-logistic")] = mechanism
    if mechanism == "gnmax":
        argv += ["--learner", "gaussian_nb", "--k", "6"]
    err = refused(capsys, argv, out)
    assert "holds the label column 'label'" in err and "Remove that column" in err
    assert "the private file given to --public (likely)" in err


def test_public_rows_copying_private_rows_warn_as_a_non_private_diagnostic(iris, tmp_path, capsys):
    out = tmp_path / "c.csv"
    assert main(label(iris["private"], iris["copied"], out, "--report", str(tmp_path / "r.json"))) == EXIT_OK
    err = capsys.readouterr().err
    warning = [line for line in err.splitlines() if "exact copies" in line]
    assert len(warning) == 1 and "warning: 30 of the 30 public rows (100%)" in warning[0], err
    assert "NON-PRIVATE diagnostic counted on the private rows: for the data's owner only, never exported" in warning[0]
    assert "exact copies" not in out.read_text() + (tmp_path / "r.json").read_text()  # never exported
    assert main(label(iris["private"], iris["public"], tmp_path / "p.csv")) == EXIT_OK
    assert "exact copies" not in capsys.readouterr().err  # iris's odd rows: 1 of 75 copies an even row


def test_a_missing_public_column_names_both_fixes_and_drop_works(iris, tmp_path, capsys):
    out = tmp_path / "d.csv"
    err = refused(capsys, label(iris["private"], iris["lacks"], out), out)
    assert "lacks 1 feature column(s)" in err and "'petal width (cm)'. Add them" in err
    # quoted for the shell: the flag as it is typed
    assert "or leave them out of the features (--drop 'petal width (cm)')" in err and "drop_columns" not in err
    assert main(label(iris["private"], iris["lacks"], out, "--drop", "petal width (cm)")) == EXIT_OK, \
        capsys.readouterr().err


@pytest.mark.parametrize("argv, hint", [
    (["label", "--epsilion", "0.1"], "unrecognized arguments: --epsilion 0.1 (--epsilion: did you mean --epsilon?)"),
    (["label", "--delat=1e-5", "--bogus"], "(--delat: did you mean --delta?)"),
    (["bounds", "--epsilion", "1"], "required: --epsilon, --delta, --T, --m (--epsilion: did you mean --epsilon?)"),
])
def test_a_mistyped_flag_names_the_closest_one(iris, tmp_path, capsys, argv, hint):
    full = [argv[0]] + (["--private", str(iris["private"]), "--label-column", "label", "--public",
                          str(iris["public"]), "--mechanism", "dp-logistic", "--out", str(tmp_path / "x.csv")]
                         if argv[0] == "label" else []) + argv[1:]
    assert main(full) == EXIT_ERROR
    err = capsys.readouterr().err
    assert hint in err, err
    assert "--bogus:" not in err  # nothing close: no guess
