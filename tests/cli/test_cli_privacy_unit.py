"""--privacy-unit on the command line: label, tune, plan and recommend read the persons, every
output states the unit, and the column check offers the flag that declares it."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from core.cli import EXIT_OK, main
from core.data import panel


@pytest.fixture(scope="module")
def panel_files(tmp_path_factory):
    """A generated panel (persons with 1 to 5 rows) as a private file with an ``id`` column, and public rows."""
    root = tmp_path_factory.mktemp("panel")
    table = panel(400, d=3, rng=1)
    frame = table.features.copy()
    frame.insert(0, "id", table.unit.ids[table.unit.codes])
    frame["label"] = np.where(table.labels == 1, "yes", "no")
    frame.to_csv(root / "private.csv", index=False)
    public = panel(40, d=3, rng=2)
    pub = public.features.copy()
    pub.insert(0, "id", [f"q{i}" for i in range(len(pub))])  # the public rows' own IDs: dropped like the unit
    pub.to_csv(root / "public.csv", index=False)
    return {"private": root / "private.csv", "public": root / "public.csv", "root": root, "persons": 400,
            "largest": int(table.unit.largest)}


def _label(files, *extra, out="labeled.csv", report="report.json"):
    root = files["root"]
    return main(["label", "--private", str(files["private"]), "--public", str(files["public"]),
                 "--learner", "logistic_regression", "--k", "20", "--epsilon", "2", "--delta", "1e-6",
                 "--out", str(root / out), "--report", str(root / report), "--seed", "0", "--no-progress", "--overwrite",
                 *extra])


def test_label_per_person_states_the_unit_everywhere(panel_files, capsys):
    assert _label(panel_files, "--mechanism", "gnmax", "--privacy-unit", "id") == EXIT_OK
    out = capsys.readouterr()
    assert (f"per person (column id): 400 persons, at most {panel_files['largest']} rows each (the rows-per-person "
            "figure is a NON-PRIVATE diagnostic" in out.out)
    assert "(replace all rows of one person (column id))" in out.out
    assert "repeats its values like a person key" not in out.err  # declared: no warning
    report = json.loads((panel_files["root"] / "report.json").read_text())
    assert report["adjacency"] == "replace all rows of one person (column id)"
    assert report["privacy_unit"] == {"unit": "person", "column": "id", "units": 400,
                                      "description": "per person (column id): 400 persons"}
    assert report["ensemble"]["n_private"] == 400
    text = (panel_files["root"] / "report.json").read_text()
    assert '"p1"' not in text and "p17" not in text and "at most" not in text  # no ID, no person's row count
    labeled = pd.read_csv(panel_files["root"] / "labeled.csv")
    assert "id" not in labeled.columns  # the IDs are not a feature and never exported


def test_without_the_flag_the_check_offers_it_and_says_the_group_figure(panel_files, capsys):
    assert _label(panel_files, "--mechanism", "gnmax", report="flat.json", out="flat.csv") == EXIT_OK
    err = capsys.readouterr().err
    assert "Column 'id' repeats its values like a person key" in err and "Fix: --privacy-unit id." in err
    # a person's ID is no feature by default either: left out, with the Keep that would use it
    assert "Left out of the features; to use it anyway: --keep id." in err
    assert "left out of the features: id " in err and "id" not in pd.read_csv(panel_files["root"] / "flat.csv").columns
    assert "group privacy" in err and "NON-PRIVATE" in err
    report = json.loads((panel_files["root"] / "flat.json").read_text())
    assert report["privacy_unit"]["description"] == "per row" and report["adjacency"] == "replace one private row"


def test_dp_training_per_person_reports_its_row_bound(panel_files, capsys):
    assert _label(panel_files, "--mechanism", "dp-logistic", "--privacy-unit", "id", "--rows-per-unit", "2",
                  report="dp.json", out="dp.csv") == EXIT_OK
    report = json.loads((panel_files["root"] / "dp.json").read_text())
    assert report["privacy_unit"]["description"] == "per person (column id): 400 persons; at most 2 rows of each person used"
    assert report["parameters"]["rows_per_unit"] == 2


def test_the_unit_is_refused_as_a_feature(panel_files, capsys):
    code = _label(panel_files, "--mechanism", "gnmax", "--privacy-unit", "id", "--features", "id,x0")
    assert code != EXIT_OK and "privacy unit column" in capsys.readouterr().err


def test_tune_plan_and_recommend_take_the_unit(panel_files, capsys):
    root = panel_files["root"]
    code = main(["tune", "--private", str(panel_files["private"]), "--public", str(panel_files["public"]),
                 "--privacy-unit", "id", "--learner", "logistic_regression", "--k", "10", "--mechanism", "gnmax",
                 "--epsilon", "1", "--epsilon", "2",
                 "--delta", "1e-6", "--holdout", "50", "--out", str(root / "tuned.csv"), "--report",
                 str(root / "tuned.json"), "--seed", "0", "--no-progress"])
    out = capsys.readouterr()
    assert code == EXIT_OK, out.err
    report = json.loads((root / "tuned.json").read_text())
    assert report["privacy_unit"]["units"] == 400 and report["selection"]["holdout_rows"] == 50
    assert main(["plan", "--private", str(panel_files["private"]), "--privacy-unit", "id", "--m", "40",
                 "--epsilon", "1", "--delta", "1e-6"]) == EXIT_OK
    assert "400 persons" in capsys.readouterr().out
    assert main(["recommend", "--private", str(panel_files["private"]), "--privacy-unit", "id", "--epsilon", "2",
                 "--delta", "1e-6", "--m", "40"]) == EXIT_OK
    assert "per person (column id): 400 persons" in capsys.readouterr().out


def test_with_the_unit_each_person_is_one_account_in_the_named_ledger(panel_files, tmp_path, capsys):
    """Two files holding disjoint persons of one named dataset compose in parallel; a third
    holding the first file's persons again (CRLF, rows shuffled) composes with the first; the
    next run on those persons is refused, while the second file's persons still have room.
    The store keeps keyed hashes only: no person's ID appears in its bytes."""
    from core.cli import EXIT_ERROR
    from core.ledger import PrivacyLedger

    frame = pd.read_csv(panel_files["private"])
    frame["id"] = frame["id"].map(lambda p: f"person-{int(p[1:]):06d}")  # IDs long enough to search the bytes for
    ids = frame["id"].unique()
    first, second = frame[frame["id"].isin(ids[:200])], frame[frame["id"].isin(ids[200:])]
    files = {"a": tmp_path / "a.csv", "b": tmp_path / "b.csv", "a_again": tmp_path / "a_again.csv"}
    first.to_csv(files["a"], index=False)
    second.to_csv(files["b"], index=False)
    files["a_again"].write_bytes(first.sample(frac=1.0, random_state=0).to_csv(index=False).replace("\n", "\r\n").encode())
    store = tmp_path / "ledger.sqlite"

    def run(which: str, *extra: str) -> int:
        return main(["label", "--private", str(files[which]), "--public", str(panel_files["public"]),
                     "--privacy-unit", "id", "--learner", "logistic_regression", "--k", "10", "--mechanism", "gnmax",
                     "--epsilon", "1", "--delta", "1e-6", "--out", str(tmp_path / f"out_{which}.csv"), "--seed", "0",
                     "--no-progress", "--ledger", str(store), "--dataset", "panel", "--overwrite", *extra])

    assert run("a", "--budget-epsilon", "1.5", "--budget-delta", "1e-5") == EXIT_OK
    led = PrivacyLedger("panel", store=store)
    one = led.total().epsilon
    assert run("b") == EXIT_OK
    assert led.n_units == 400 and led.total().epsilon == pytest.approx(one, rel=1e-12)  # in parallel
    assert run("a_again") == EXIT_OK
    two = led.total().epsilon
    assert 1.2 < two < 1.5 and led.total(units=ids[200:]).epsilon == pytest.approx(one, rel=1e-12)
    capsys.readouterr()
    assert run("a") == EXIT_ERROR
    assert "for a privacy unit this run reads" in capsys.readouterr().err and len(led) == 3
    assert run("b") == EXIT_OK  # the other persons' accounts still have room
    assert len(led) == 4 and led.total().epsilon == pytest.approx(two, rel=1e-12)
    raw = store.read_bytes() + b"".join(p.read_bytes() for p in tmp_path.glob("ledger.sqlite*"))
    assert all(str(person).encode() not in raw for person in ids)
