"""The one column check (core.data.check_file / check_columns) on tables that look like real ones.

The criminal-justice table (tests/data/real_like.py) holds people's names (``name``, and
``first``/``last`` apart), birth and screening dates, case numbers, a repeated header, an
empty column, re-offence columns missing for most rows, and two follow-up outcomes beside
the label ``two_year_recid``: ``is_recid`` (agrees on about 97 % of rows) and ``event``
(about 89 %).  Every one must be found in ONE check, each with its fix.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from real_like import contacts_csv, credit_frames, criminal_justice_csv

from core.data import check_columns, check_file, generate, load_bundled, load_table
from core.data.standins import stand_in, uncertainty_coefficient

ROOT = Path(__file__).resolve().parents[2]

# Column -> the kinds of problem the check must report for it, and nothing else.
CRIMINAL_JUSTICE_FLAGS = {
    "priors_count": ["duplicate_header"],
    "violent_recid": ["empty_column"],
    "days_b_screening_arrest": ["missing_values"],
    "r_case_number": ["missing_values", "identifier", "label_stand_in"],  # filled in exactly for re-offenders
    "r_charge_degree": ["missing_values", "label_stand_in"],
    "id": ["identifier"],
    "name": ["identifier"],
    "first": ["identifier"],
    "last": ["identifier"],
    "c_case_number": ["identifier"],
    "compas_screening_date": ["date"],
    "dob": ["date"],
    "c_jail_in": ["date"],
    "is_recid": ["label_stand_in"],
    "event": ["label_stand_in"],
}


@pytest.fixture(scope="module")
def compas_check():
    return check_file(criminal_justice_csv(), label_column="two_year_recid")


def test_one_check_lists_every_problem_of_the_criminal_justice_table(compas_check):
    assert compas_check.flagged() == CRIMINAL_JUSTICE_FLAGS
    blocking = {p.kind for p in compas_check.blocking}
    assert blocking == {"duplicate_header", "empty_column", "missing_values"}  # the three former round trips
    fixes = {f.flag for p in compas_check.problems for f in p.fixes}
    assert {"--rename-duplicates", "--drop-empty-columns", "--missing drop", "--missing impute",
            "--keep first", "--keep is_recid", "--keep event", "--drop dob"} <= fixes
    # real features are not flagged
    assert not set(compas_check.flagged()) & {"age", "sex", "race", "priors_count.2", "decile_score",
                                              "c_charge_desc", "c_charge_degree", "juv_fel_count", "age_cat"}


def test_stand_ins_are_said_with_their_agreement_and_marked_non_private(compas_check):
    by_column = {p.column: p for p in compas_check.problems if p.kind == "label_stand_in"}
    assert "agrees with the label 'two_year_recid' on 97%" in by_column["is_recid"].sentence
    assert "on 89%" in by_column["event"].sentence or "on 88%" in by_column["event"].sentence
    for p in by_column.values():
        assert p.non_private and "NON-PRIVATE" in p.sentence and "never exported" in p.sentence
        assert "the label the label" not in p.sentence and "--" not in p.sentence
    assert not any(p.non_private for p in compas_check.problems if p.kind != "label_stand_in")


def test_the_sentences_name_no_flag_and_the_summary_only_vouches_for_checks_made(compas_check):
    for p in compas_check.problems:
        assert "--" not in p.sentence and "drop_empty" not in p.sentence
    assert compas_check.summary().startswith(f"{len(compas_check.problems)} problem(s) found.")
    unlabeled = check_file(criminal_justice_csv(n=200))
    assert unlabeled.label_column is None and unlabeled.suggested_label is None
    assert "label_stand_in" not in unlabeled.made and "label_stand_in" in unlabeled.not_made
    summary = unlabeled.summary()
    assert "Not checked: label stand-ins" in summary and "it needs the label column" in summary


def test_fixes_applied_leave_the_warnings_and_the_file_loads():
    data = criminal_justice_csv()
    check = check_file(data, label_column="two_year_recid", rename_duplicates=True, drop_empty_columns=True,
                       missing="impute")
    assert not check.blocking
    table = load_table(data, label_column="two_year_recid", rename_duplicates=True, drop_empty_columns=True,
                       missing="impute")
    assert table.dropped_columns == ("violent_recid",)
    flagged = [c for c in check.flagged() if c in table.feature_names]
    rest = check_file(data, label_column="two_year_recid", rename_duplicates=True, drop_empty_columns=True,
                      missing="impute", drop_columns=flagged)
    assert rest.problems == () and rest.summary().startswith("No problem found by these checks:")
    assert "Not checked" not in rest.summary()


def test_identifiers_by_content_emails_phones_postcodes_names_and_free_text():
    check = check_file(contacts_csv(), label_column="churned")
    reasons = {p.column: (p.kind, p.sentence) for p in check.problems}
    assert reasons["customer"][0] == "identifier" and "people's names" in reasons["customer"][1]
    assert "e-mail addresses" in reasons["contact"][1]
    assert "phone numbers" in reasons["mobile_no"][1]
    assert "postcodes" in reasons["area"][1]
    assert reasons["note"][0] == "free_text"
    assert set(reasons) == {"customer", "contact", "mobile_no", "area", "note"}


def test_the_label_column_is_never_guessed_from_its_position():
    private, _ = credit_frames()
    check = check_file(private.to_csv(index=False).encode())
    label = [p for p in check.problems if p.kind == "label"]
    assert len(label) == 1 and label[0].blocking and "never guessed" in label[0].sentence
    assert check.suggested_label is None and check.label_column is None
    named = check_file(private.rename(columns={"risk": "target"}).to_csv(index=False).encode())
    assert named.suggested_label == "target"
    assert "suggested by its name" in next(p.sentence for p in named.problems if p.kind == "label")
    ok = check_file(private.to_csv(index=False).encode(), label_column="risk")
    assert ok.problems == ()  # 'status' and 'foreign_worker' are real features


def test_stand_in_statistics_against_hand_computed_values():
    # A column equal to the label on 9 of 10 rows in each class: U = 1 - H(0.1)/H(0.5).
    y = np.repeat([0, 1], 500)
    x = y.copy()
    x[::10] = 1 - x[::10]
    h = lambda p: -(p * np.log2(p) + (1 - p) * np.log2(1 - p))  # noqa: E731
    assert uncertainty_coefficient(pd.Series(x), y) == pytest.approx(1 - h(0.1), abs=1e-12)
    s = stand_in(pd.Series(x), y)
    assert s.discrete and s.flagged and abs(s.agreement - 0.9) < 0.05
    noise = np.random.default_rng(0).integers(0, 2, 1000)
    assert not stand_in(pd.Series(noise), y).flagged


@pytest.mark.parametrize("name", ["adult", "breast_cancer", "iris", "wine"])
def test_bundled_real_tables_raise_no_false_alarm(name):
    table = load_bundled(name)
    if table.n_rows > 5000:
        table = dataclasses.replace(table, features=table.features.head(5000), labels=table.labels[:5000],
                                    rows=table.rows[:5000])
    problems = check_columns(table).problems
    # Adult and iris hold true exact copies (a NON-PRIVATE note, with its group figure): not a false alarm.
    # Adult's census weight is its other finding: a survey weight, not a trait of the row's person.
    expected = {"adult": [("duplicate_rows", None), ("survey_weight", "fnlwgt")], "iris": [("duplicate_rows", None)]}
    assert sorted((p.kind, p.column if p.kind != "duplicate_rows" else None) for p in problems) == expected.get(name, [])
    assert all(p.non_private for p in problems if p.kind == "duplicate_rows")


def test_generated_data_says_the_stand_in_check_was_not_made():
    table = generate("two_gaussians", 600, rng=0, d=2, separation=6.0)
    assert [p.column for p in check_columns(table).problems] == ["x0"]  # by design, x0 gives the label
    check = check_columns(table, stand_ins_reason="generated data: the label is computed from the features")
    assert check.problems == () and "label_stand_in" in check.not_made
    assert "Not checked: label stand-ins" in check.summary()


def test_command_line_lists_every_problem_at_once_with_its_flag(tmp_path):
    private = tmp_path / "people.csv"
    private.write_bytes(criminal_justice_csv(n=400))
    public = tmp_path / "public.csv"
    pd.read_csv(private).head(50).drop(columns=["two_year_recid"]).to_csv(public, index=False)
    base = [sys.executable, "-m", "core", "label", "--private", str(private), "--public", str(public),
            "--label-column", "two_year_recid", "--learner", "logistic_regression", "--k", "4",
            "--mechanism", "lnmax", "--gamma", "0.1", "--delta", "1e-5", "--out", str(tmp_path / "o.csv")]
    r = subprocess.run(base, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 2, r.stderr
    error = r.stderr.splitlines()[-1]
    assert "3 problem(s)" in error
    for flag in ("--rename-duplicates", "--drop-empty-columns", "--missing drop"):
        assert flag in error
    warnings = [line for line in r.stderr.splitlines() if ": warning: " in line]
    for column in ("first", "last", "is_recid", "event", "c_case_number"):  # left out unless kept
        assert any(f"to use it anyway: --keep {column}." in line for line in warnings), column
    assert any("Fix: --drop dob." in line for line in warnings)
    assert not (tmp_path / "o.csv").exists()


def test_command_line_refuses_to_guess_the_label_column(tmp_path):
    private_frame, public_frame = credit_frames()
    private, public = tmp_path / "credit.csv", tmp_path / "public.csv"
    private_frame.to_csv(private, index=False)
    public_frame.to_csv(public, index=False)
    r = subprocess.run([sys.executable, "-m", "core", "label", "--private", str(private), "--public", str(public),
                        "--learner", "logistic_regression", "--k", "4", "--mechanism", "lnmax", "--gamma", "0.1",
                        "--delta", "1e-5", "--out", str(tmp_path / "o.csv")],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 2 and "never guessed" in r.stderr and "--label-column NAME" in r.stderr


def test_a_number_column_with_text_is_listed_and_can_be_left_out_before_loading():
    from core.data.problems import without_columns

    rows = ["a,b,label"] + [f"{i},{'seven' if i == 7 else i * 2},{'yes' if i % 3 else 'no'}" for i in range(40)]
    data = ("\n".join(rows) + "\n").encode()
    check = check_file(data, label_column="label")
    problem = next(p for p in check.problems if p.kind == "not_numbers")
    assert problem.blocking and problem.columns == ("b",) and "'seven'" in problem.sentence
    assert [f.flag for f in problem.fixes] == ["--drop b"] and problem.fixes[0].title == "Drop 'b'"
    table = load_table(without_columns(data, ["b"]), label_column="label")
    assert table.feature_names == ("a",) and table.n_rows == 40
