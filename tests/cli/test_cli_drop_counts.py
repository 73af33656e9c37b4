"""The privacy report's counts do not read which rows were dropped for a missing value.

Under replace-one-person adjacency the number of persons is public (neighbours have the same
persons), but with ``--missing drop`` the report counts the persons left after the drop: a
person whose every row misses its label would not be counted, and the exported report's exact
count would move by one with that person's (private) label.  The report states the counts of
the file before the drop (its rows, its persons), which are public.
"""

from __future__ import annotations

import json

from core.cli import EXIT_OK, main


def _report(tmp_path, name: str, x_label: str) -> dict:
    private = tmp_path / f"{name}.csv"
    rows = "".join(f"X,{i}.0,{x_label}\n" for i in range(2))
    rows += "".join(f"Q{i},{i % 7}.5,{'yes' if i % 2 else 'no'}\n" for i in range(40))
    private.write_text("id,x,label\n" + rows)
    public = tmp_path / "public.csv"
    public.write_text("x\n" + "".join(f"{i}.25\n" for i in range(10)))
    assert main(["label", "--private", str(private), "--public", str(public), "--privacy-unit", "id",
                 "--missing", "drop", "--learner", "gaussian_nb", "--k", "4", "--mechanism", "gnmax",
                 "--epsilon", "2", "--delta", "1e-6", "--out", str(tmp_path / f"{name}.out.csv"),
                 "--report", str(tmp_path / f"{name}.json"), "--seed", "0", "--no-progress", "--overwrite"]) == EXIT_OK
    return json.loads((tmp_path / f"{name}.json").read_text())


def test_the_reported_number_of_persons_does_not_depend_on_a_missing_label(tmp_path):
    present, missing = _report(tmp_path, "present", "yes"), _report(tmp_path, "missing", "")
    assert present["privacy_unit"]["units"] == missing["privacy_unit"]["units"]
    assert present["ensemble"]["n_private"] == missing["ensemble"]["n_private"]
