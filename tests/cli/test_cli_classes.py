"""The class list on the command line (docs/design.md §1.3): ``--class-names`` declares it, and two
neighbouring private files -- one holds a row of a class no other row holds -- then give the same
class list to the labels, the report and the published student; without it the list is read from
the file, the report and the console say so in capitals, and the neighbours' lists differ."""

from __future__ import annotations

import json

import joblib
import pytest

from core.cli import EXIT_ERROR, EXIT_OK, main
from core.data import CLASSES_READ_NOTE


def _files(folder, rare: bool):
    folder.mkdir(exist_ok=True)
    rows = "".join(f"{i % 9}.5,{(i * 7) % 5}.0,{'yes' if i % 9 > 4 else 'no'}\n" for i in range(60))
    if rare:
        rows += "4.0,2.0,maybe\n"  # one person's class
    (folder / "private.csv").write_text("x0,x1,label\n" + rows)
    (folder / "public.csv").write_text("x0,x1\n" + "".join(f"{i % 9}.25,{i % 5}.0\n" for i in range(12)))
    return folder


def _label(folder, *extra: str, k: int = 4) -> list[str]:
    return ["label", "--private", str(folder / "private.csv"), "--public", str(folder / "public.csv"),
            "--learner", "gaussian_nb", "--k", str(k), "--mechanism", "gnmax", "--epsilon", "2", "--delta", "1e-6",
            "--out", str(folder / "labeled.csv"), "--report", str(folder / "report.json"),
            "--student", str(folder / "student.joblib"), "--seed", "0", "--no-progress", "--overwrite", *extra]


def _run(folder, capsys, *extra: str, k: int = 4):
    assert main(_label(folder, *extra, k=k)) == EXIT_OK
    out, err = capsys.readouterr()
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    student = joblib.load(folder / "student.joblib")
    return report, list(student.classes_), out, err


@pytest.mark.parametrize("missing", ["refuse", "drop"])
def test_neighbours_release_the_same_declared_class_list(tmp_path, capsys, missing):
    # Declared with the rare class: both neighbours keep it (one with no row, one with a row too few for
    # k = 4: not refused); declared without it (drop): the rare row is a row without a label, dropped.
    declared = "maybe,no,yes" if missing == "refuse" else "no,yes"
    runs = [_run(_files(tmp_path / name, rare), capsys, "--class-names", declared, "--missing", missing)
            for name, rare in (("without", False), ("with", True))]
    (report_a, student_a, out_a, err_a), (report_b, student_b, out_b, err_b) = runs
    names = declared.split(",")
    assert report_a["classes"] == report_b["classes"] == {
        "names": names, "declared": True, "statement": "classes declared (public): " + ", ".join(names)}
    assert student_a == student_b == names
    assert out_a.count("Classes declared (public): " + ", ".join(names) + ".") == 1
    assert "CLASS LIST" not in err_a + err_b


def test_without_declaration_the_neighbours_lists_differ_and_the_release_says_so(tmp_path, capsys):
    (report_a, student_a, _, err_a), (report_b, student_b, _, err_b) = (
        _run(_files(tmp_path / name, rare), capsys, k=2)  # k = 2: one row of a class read from the rows is enough
        for name, rare in (("without", False), ("with", True)))
    assert student_a == ["no", "yes"] and student_b == ["maybe", "no", "yes"]  # documented: read, then released
    assert report_a["classes"]["names"] != report_b["classes"]["names"]
    assert report_a["classes"]["declared"] is False
    assert report_a["classes"]["statement"] == report_b["classes"]["statement"] == CLASSES_READ_NOTE
    assert "note: CLASS LIST READ FROM THE PRIVATE FILE, treated as public" in err_a


def test_an_undeclared_label_is_refused_without_drop(tmp_path, capsys):
    folder = _files(tmp_path / "with", True)
    assert main(_label(folder, "--class-names", "no,yes")) == EXIT_ERROR
    err = capsys.readouterr().err
    assert "not among the declared classes (no, yes): 'maybe'" in err and "missing" in err
    assert not (folder / "labeled.csv").exists()
    assert main(_label(folder, "--class-names", "no,,yes")) == EXIT_ERROR
    assert "--class-names 'no,,yes' has an empty name" in capsys.readouterr().err


def test_recommend_takes_the_declared_classes(tmp_path, capsys):
    folder = _files(tmp_path / "without", False)
    argv = ["recommend", "--private", str(folder / "private.csv"), "--m", "12", "--epsilon", "2", "--delta", "1e-6"]
    assert main([*argv, "--class-names", "no,yes,maybe"]) == EXIT_OK  # a declared class with no row: planned without it
    assert "Recommended:" in capsys.readouterr().out
    assert main([*argv, "--class-names", "no,maybe"]) == EXIT_ERROR  # 'yes' rows are refused without --missing drop
    assert "not among the declared classes (no, maybe): 'yes'" in capsys.readouterr().err


def test_recommend_with_declared_classes_reads_no_class_count(tmp_path, capsys):
    # Two neighbouring files: one person's row holds the declared class 'maybe' in one and 'no' in the other.  With
    # the classes declared, the rows' class counts decide nothing recommend says (k, the plan, the shares).
    outs = []
    for rare in (False, True):
        folder = _files(tmp_path / str(rare), rare)
        if not rare:
            with open(folder / "private.csv", "a") as f:
                f.write("4.0,2.0,no\n")
        argv = ["recommend", "--private", str(folder / "private.csv"), "--m", "12", "--epsilon", "2", "--delta",
                "1e-6", "--class-names", "no,yes,maybe"]
        assert main(argv) == EXIT_OK
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1]
    assert "the private rows' class counts are not read" in outs[0] and "smallest class 20 rows" in outs[0]
    assert main(argv[:-2]) == EXIT_OK  # read from the rows: the counts limit k, said as a NON-PRIVATE diagnostic
    err = capsys.readouterr().err
    assert "class counts were read from the private rows" in err and "NON-PRIVATE diagnostic" in err
