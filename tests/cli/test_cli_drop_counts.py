"""The privacy report's counts do not read which rows were dropped for a missing value.

Under replace-one-person adjacency the number of persons is public (neighbours have the same
persons), but with ``--missing drop`` the report counts the persons left after the drop: a
person whose every row misses its label would not be counted, and the exported report's exact
count would move by one with that person's (private) label.  The report states the counts of
the file before the drop (its rows, its persons), which are public, and so does the console's
summary line; the console's count of the rows dropped reads the private rows and is marked a
NON-PRIVATE diagnostic.
"""

from __future__ import annotations

import json

import pytest

from core.cli import EXIT_OK, main


def _run(tmp_path, name: str, x_label: str, *, unit: bool = True) -> tuple[dict, str, str]:
    """The report, stdout and stderr of ``label`` on a file whose person X (two rows; with ``unit``
    False, two rows of their own) has the label ``x_label``."""
    import contextlib
    import io

    private = tmp_path / f"{name}.csv"
    rows = "".join(f"X,{i}.0,{x_label}\n" for i in range(2))
    rows += "".join(f"Q{i},{i % 7}.5,{'yes' if i % 2 else 'no'}\n" for i in range(40))
    private.write_text("id,x,label\n" + rows)
    public = tmp_path / "public.csv"
    public.write_text("x\n" + "".join(f"{i}.25\n" for i in range(10)))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["label", "--private", str(private), "--public", str(public),
                   *(["--privacy-unit", "id"] if unit else ["--drop", "id"]),
                   "--missing", "drop", "--learner", "gaussian_nb", "--k", "4", "--mechanism", "gnmax",
                   "--epsilon", "2", "--delta", "1e-6", "--out", str(tmp_path / f"{name}.out.csv"),
                   "--report", str(tmp_path / f"{name}.json"), "--seed", "0", "--no-progress", "--overwrite"])
    assert rc == EXIT_OK, err.getvalue()
    return json.loads((tmp_path / f"{name}.json").read_text()), out.getvalue(), err.getvalue()


def _report(tmp_path, name: str, x_label: str) -> dict:
    return _run(tmp_path, name, x_label)[0]


def test_the_reported_number_of_persons_does_not_depend_on_a_missing_label(tmp_path):
    present, missing = _report(tmp_path, "present", "yes"), _report(tmp_path, "missing", "")
    assert present["privacy_unit"]["units"] == missing["privacy_unit"]["units"]
    assert present["ensemble"]["n_private"] == missing["ensemble"]["n_private"]


@pytest.mark.parametrize("unit", [False, True], ids=["per-row", "per-person"])
def test_the_console_states_the_files_count_and_marks_the_dropped_count(tmp_path, unit):
    (rep_a, out_a, err_a), (rep_b, out_b, err_b) = (_run(tmp_path, name, label, unit=unit)
                                                    for name, label in (("present", "yes"), ("missing", "")))
    what = "private rows" if not unit else "persons"
    said = [line.split("; privacy unit")[0] for line in (out_a + out_b).splitlines() if line.startswith("Labeled ")]
    assert len(said) == 2 and said[0] == said[1], (out_a, out_b)  # not the rows left: the same on both files
    n = rep_a["ensemble"]["n_private"]
    assert f"on {n} {what}, the file's count before the drop" in said[0] and n == rep_b["ensemble"]["n_private"]
    assert n == (42 if not unit else 41)
    # The count of rows dropped reads the private rows: said for the owner, marked NON-PRIVATE.
    dropped = [line for line in err_b.splitlines() if "missing values: private file:" in line]
    assert len(dropped) == 1 and "(2 dropped)" in dropped[0] and "NON-PRIVATE diagnostic" in dropped[0], err_b
    assert "missing values: private file:" not in err_a
