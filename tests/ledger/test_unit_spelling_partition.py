"""The persons the mechanisms protect are the persons the ledger charges.

A re-spelled ID ("P001" and "p001", "007" and 7, "1,000" and 1000) is one account in the
ledger (core.ledger.units); the rows must then be one person in the partition too
(core.data.units: one chunk, one side of a split, at most r rows kept).  Otherwise the
person's rows sit in two teachers (two votes per query: twice the ε of one person) while
the ledger charges them once.  And spellings that a re-save or another tool produces
(spaces inside, a number format with decimals, variation selectors, dashes) are one account.
"""

import io

import numpy as np
import pytest

from core.data import load_table
from core.data.units import bound_rows, privacy_unit, split_units, unit_chunks
from core.errors import BudgetExhausted
from core.ledger import PrivacyLedger, PureDPEntry
from core.ledger.units import canonical_id, unit_keys

SPELLINGS = [("P001", "p001"), ("007", "7"), ("1,000", "1000"), ("José", "Jose\u0301"), ("\ufeffP9", "P9"),
             ("P\u200b5", "P5"), ("Ｐ7", "P7"), ("P 001", "P001"), ("P001\ufe0f", "P001")]


@pytest.mark.parametrize("a, b", SPELLINGS)
def test_a_person_the_ledger_merges_is_one_person_of_the_partition(a, b):
    unit = privacy_unit(np.array([a, b, "Q1", "Q2"], dtype=object), "id")
    keys = unit_keys(unit.ids[unit.codes], secret=b"s" * 32, dataset="d")
    assert unit.n_units == keys.size == 3
    assert unit.codes[0] == unit.codes[1]


def test_a_respelled_persons_rows_share_one_teacher_and_one_side():
    rows = "".join(f"{('P001', 'p001', ' P001', 'P 001')[i % 4]},{i},{i % 2}\n" for i in range(8))
    rows += "".join(f"Q{i},{i},{i % 2}\n" for i in range(30))
    table = load_table(io.StringIO("id,x,y\n" + rows), label_column="y", privacy_unit="id")
    assert table.unit.n_units == unit_keys(table.ledger_units, secret=b"s" * 32, dataset="d").size == 31
    person = np.arange(8)
    for seed in range(20):  # a chance split of the 8 rows over 10 chunks would show in 20 keys w.p. 1 - 1e-20
        assert np.unique(unit_chunks(table.unit, 10, rng=seed)[person]).size == 1
        rest, out = split_units(table.unit, 15, rng=seed)
        assert np.isin(person, out).all() or np.isin(person, rest).all()
        assert np.isin(person, bound_rows(table.unit, 2, rng=seed)).sum() == 2


@pytest.mark.parametrize("a, b", [("P 001", "P001"), ("P\u3000001", "P001"), ("1,000.0", 1000), ("1.000.000", 1000000),
                                  ("1.000,5", 1000.5), ("P001\ufe0f", "P001"), ("P\u034f001", "P001"),
                                  ("P001\u3164", "P001"), ("P–001", "P-001"), ("P‐001", "p-001"), ("−7", -7)],
                         ids=["space-inside", "ideographic-space", "decimals", "dot-grouping", "dot-grouping-decimal",
                              "variation-selector", "grapheme-joiner", "hangul-filler", "en-dash", "hyphen", "minus"])
def test_respelled_id_opens_no_fresh_account(tmp_path, a, b):
    assert canonical_id(a) == canonical_id(b)
    led = PrivacyLedger("panel", store=tmp_path / "ledger.sqlite")
    led.set_budget(epsilon=1.5, delta=0.0)
    run = PureDPEntry.uniform(eps_step=1.0, n_steps=1)
    led.charge(run, units=[b, "Q1"])
    with pytest.raises(BudgetExhausted):
        led.charge(run, units=[a])


def test_distinct_ids_stay_distinct_after_folding():
    ids = ["P1", "P2", "Q1", "1", "1.5", "1000", "P-1", "P1-", "Р1"]  # the last: Cyrillic Р, another script
    assert len({canonical_id(x) for x in ids}) == len(ids)


def test_a_decimal_comma_file_groups_thousands_with_a_dot():
    """A spreadsheet with a decimal comma saves the ID 12345, formatted, as 12.345: the same person
    as 12345 (or 12,345) in a file written with a decimal point."""
    from core.data import CsvFormat

    def keys(text, fmt=None):
        table = load_table(io.StringIO(text), label_column="y", privacy_unit="id", csv_format=fmt)
        return set(unit_keys(table.ledger_units, secret=b"s" * 32, dataset="d").tolist())

    plain = "id,x,y\n" + "".join(f"{i}2345,{i}.5,{i % 2}\n" for i in range(1, 9))
    comma = "id;x;y\n" + "".join(f"{i}2.345;{i},5;{i % 2}\n" for i in range(1, 9))
    assert keys(comma, CsvFormat(decimal=",")) == keys(plain)


def test_a_decimal_comma_file_with_columns_left_out_keeps_its_ids():
    """The app leaves columns out by rewriting the file as plain CSV first: the IDs read the same."""
    from core.data import CsvFormat
    from core.data.problems import without_columns

    comma = ("id;x;z;y\n" + "".join(f"{i}2.345;{i},5;q;{i % 2}\n" for i in range(1, 9))).encode()
    direct = load_table(comma, label_column="y", privacy_unit="id", csv_format=CsvFormat(decimal=","))
    plain = without_columns(comma, ["z"], csv_format=CsvFormat(decimal=","), privacy_unit="id")
    rewritten = load_table(plain, label_column="y", privacy_unit="id")
    key = dict(secret=b"s" * 32, dataset="d")
    assert set(unit_keys(rewritten.ledger_units, **key).tolist()) == set(unit_keys(direct.ledger_units, **key).tolist())
    assert set(unit_keys(direct.ledger_units, **key).tolist()) == set(unit_keys([f"{i}2345" for i in range(1, 9)], **key).tolist())


def test_the_command_lines_column_choice_keeps_a_decimal_comma_files_ids(tmp_path):
    from core.cli.checks import raw_frame, select_columns
    from core.data import CsvFormat

    path = tmp_path / "private.csv"
    path.write_text("id;x;z;y\n" + "".join(f"{i}2.345;{i},5;q;{i % 2}\n" for i in range(1, 9)))
    public = tmp_path / "public.csv"
    public.write_text("x;z\n1,5;q\n")
    fmt = CsvFormat(decimal=",")
    private_bytes, _ = select_columns(raw_frame(str(path), csv_format=fmt), raw_frame(str(public), csv_format=fmt),
                                      label_column="y", features=[], drop=["z"], unit="id")
    table = load_table(private_bytes, label_column="y", privacy_unit="id")
    key = dict(secret=b"s" * 32, dataset="d")
    assert set(unit_keys(table.ledger_units, **key).tolist()) == set(unit_keys([f"{i}2345" for i in range(1, 9)], **key).tolist())
