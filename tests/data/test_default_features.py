"""The default features (core.data.default_features): identifiers, survey weights and label
stand-ins are left out unless kept, with their reasons; the stand-in check tests every
column (rare values grouped, missingness, one threshold); the command line follows it and
carries a left-out column into --out as a join key (--key).

The tables are generated here from fixed seeds: a medical-like table whose label ``death``
has a cause column filled in exactly for the deaths (hundreds of distinct texts), a
follow-up time that ends at the outcome, a lab value that splits the label at one
threshold, row numbers, a person id repeated across rows, and a survey weight.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from core.cli import EXIT_OK, main
from core.data import check_file, default_features, load_table
from core.data.standins import stand_in

CAUSES = ["cardiac arrest", "sepsis", "stroke", "renal failure", "pneumonia", "haemorrhage", "embolism"]


def medical_frame(n: int = 900, seed: int = 0) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    age = g.integers(40, 95, n)
    ejection = g.normal(38, 10, n).round(1)
    risk = 1 / (1 + np.exp(-(0.05 * (age - 65) - 0.06 * (ejection - 38) - 0.8)))
    death = (g.random(n) < risk).astype(int)
    # many distinct texts (70), filled in only for the deaths
    cause = np.where(death == 1, [f"{g.choice(CAUSES)}, stage {g.integers(1, 11)}" for _ in range(n)], "")
    followup = np.where(death == 1, g.integers(4, 120, n), g.integers(60, 285, n))  # ends at the outcome
    lab = np.where(death == 1, g.uniform(2.1, 4.0, n), g.uniform(0.5, 1.9, n)).round(3)  # one threshold: 2.0
    person = np.repeat(np.arange(1000, 1000 + n // 3), 3)[:n]  # three rows per person
    return pd.DataFrame({
        "row": np.arange(1, n + 1),
        "patient_id": person,
        "age": age,
        "ejection_fraction": ejection,
        "anaemia": g.integers(0, 2, n),
        "cause_of_death": cause,
        "time": followup,
        "creatinine_lab": lab,
        "perwt": g.uniform(50, 900, n).round(2),
        "death": np.where(death == 1, "yes", "no"),
    })


def csv_bytes(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


@pytest.fixture(scope="module")
def medical_check():
    return check_file(csv_bytes(medical_frame()), label_column="death")


def test_every_kind_of_stand_in_is_flagged_and_left_out_by_default(medical_check):
    found = {p.column: p for p in medical_check.problems if p.kind == "label_stand_in"}
    assert set(found) == {"cause_of_death", "time", "creatinine_lab"}, sorted(found)
    assert "whether it is missing agrees with the label on 100%" in found["cause_of_death"].sentence
    assert "a single threshold" in found["creatinine_lab"].sentence
    assert "measured up to the outcome" in found["time"].sentence
    kinds = {p.column: p.kind for p in medical_check.problems if p.kind in ("person_key", "identifier", "survey_weight")}
    assert kinds == {"row": "identifier", "patient_id": "person_key", "perwt": "survey_weight"}, kinds
    # a person's id: the unit offered first, then Keep (it is left out by default); never a Drop
    key = next(p for p in medical_check.problems if p.kind == "person_key")
    assert [f.flag for f in key.fixes] == ["--privacy-unit patient_id", "--keep patient_id"]
    choice = default_features(medical_check)
    assert choice.features == ("age", "ejection_fraction", "anaemia")
    assert set(choice.dropped) == {"row", "patient_id", "cause_of_death", "time", "creatinine_lab", "perwt"}
    reasons = {c.column: c.reason for c in choice.left_out}
    assert reasons["row"].startswith("identifier: row numbers")
    assert reasons["patient_id"].startswith("person key")  # an id repeated across rows: still no feature
    assert reasons["perwt"].startswith("survey weight")
    assert "NON-PRIVATE" in reasons["cause_of_death"]
    assert "Left out of the features: 'row' (identifier" in choice.sentence()
    kept = default_features(medical_check, keep=["time"])
    assert "time" in kept.features and [c.column for c in kept.kept] == ["time"]
    with pytest.raises(Exception, match="Cannot keep 'nope'"):
        default_features(medical_check, keep=["nope"])


def test_the_stand_in_tests_group_rare_values_and_read_missingness():
    frame = medical_frame()
    labels = frame["death"].to_numpy()
    cause = stand_in(frame["cause_of_death"].replace("", np.nan), labels, name="cause_of_death")
    assert cause.flagged and cause.test == "missingness" and cause.agreement == 1.0
    # the values test alone, with missing as a value of its own and the rare codes grouped, also sees it
    filled = stand_in(frame["cause_of_death"].replace("", "none"), labels)
    assert filled.flagged and filled.test == "values" and filled.grouped > 12 and filled.agreement == 1.0
    # a random many-valued text is not flagged
    noise = pd.Series([f"code {i}" for i in np.random.default_rng(1).integers(0, 5000, len(frame))])
    assert not stand_in(noise, labels).flagged
    # the follow-up time: a strong threshold (about 0.8 to 0.9) flagged because of its name only
    by_name = stand_in(frame["time"], labels, name="time")
    anonymous = stand_in(frame["time"], labels, name="x7")
    assert by_name.flagged and by_name.test == "outcome time"
    assert not anonymous.flagged and anonymous.agreement == by_name.agreement < 0.98


def test_an_ordinary_strong_feature_is_not_left_out():
    g = np.random.default_rng(4)
    x = g.normal(size=2000)
    y = (x + g.normal(scale=0.6, size=2000) > 0).astype(int)  # one threshold: about 80 % right
    frame = pd.DataFrame({"tumour_size": x, "other": g.normal(size=2000), "label": y})
    check = check_file(csv_bytes(frame), label_column="label")
    assert check.problems == () and default_features(check).features == ("tumour_size", "other")


def _run(tmp_path, *extra, frame=None, public=None):
    frame = medical_frame() if frame is None else frame
    priv, pub, out = tmp_path / "private.csv", tmp_path / "public.csv", tmp_path / "labeled.csv"
    frame.iloc[:750].to_csv(priv, index=False)
    (frame.iloc[750:].drop(columns=["death"]) if public is None else public).to_csv(pub, index=False)
    code = main(["label", "--private", str(priv), "--public", str(pub), "--label-column", "death",
                 "--learner", "logistic_regression", "--k", "5", "--mechanism", "lnmax", "--epsilon", "5",
                 "--delta", "1e-5", "--out", str(out), "--overwrite", *extra])
    return code, out


def test_a_default_command_line_run_leaves_the_flagged_columns_out(tmp_path, capsys):
    code, out = _run(tmp_path)
    err = capsys.readouterr().err
    assert code == EXIT_OK, err
    labeled = pd.read_csv(out)
    features = [c for c in labeled.columns if c not in ("label", "answered", "status")]
    assert features == ["age", "ejection_fraction", "anaemia"]  # the export writes the run's features
    assert ("note: left out of the features: row, patient_id, cause_of_death, time, creatinine_lab, perwt "
            "(the warnings above say why; --keep NAME keeps one)") in err
    for column in ("row", "patient_id", "cause_of_death", "time", "creatinine_lab", "perwt"):
        assert f"Left out of the features; to use it anyway: --keep {column}." in err, column


def test_keep_uses_a_flagged_column_and_features_alone_cannot(tmp_path, capsys):
    code, out = _run(tmp_path, "--keep", "time,anaemia")
    err = capsys.readouterr().err
    assert code == EXIT_OK, err
    assert "time" in pd.read_csv(out).columns and "'time' is kept as a feature on request" in err
    code, _ = _run(tmp_path, "--features", "age,creatinine_lab")
    err = capsys.readouterr().err
    assert code != EXIT_OK and "--features names 'creatinine_lab'" in err and "--keep creatinine_lab" in err
    code, _ = _run(tmp_path, "--keep", "nope")
    assert code != EXIT_OK and "Cannot keep 'nope'" in capsys.readouterr().err


@pytest.mark.parametrize("mechanism", ["dp-naive-bayes", "gnmax"])  # the whole file at once, and in chunks
def test_a_left_out_column_is_carried_into_the_export_as_a_join_key(tmp_path, capsys, mechanism):
    frame = medical_frame()
    public = frame.iloc[750:].drop(columns=["death"]).reset_index(drop=True)
    public.loc[[3, 10], "age"] = np.nan  # two public rows dropped for a missing value: the keys follow the rows
    extra = ["--missing", "drop", "--key", "row,patient_id", "--chunk-rows", "40"]
    extra = ["--mechanism", mechanism, *extra]
    code, out = _run(tmp_path, *extra, public=public)
    err = capsys.readouterr().err
    assert code == EXIT_OK, err
    labeled = pd.read_csv(out)
    assert list(labeled.columns[:2]) == ["row", "patient_id"] and "age" in labeled.columns
    expected = public.drop(index=[3, 10]).reset_index(drop=True)
    assert len(labeled) == len(expected)
    assert (labeled["row"].to_numpy() == expected["row"].to_numpy()).all()
    assert (labeled["patient_id"].to_numpy() == expected["patient_id"].to_numpy()).all()
    assert (labeled["age"].to_numpy() == expected["age"].to_numpy()).all()


def test_a_key_that_is_a_feature_is_refused(tmp_path, capsys):
    code, _ = _run(tmp_path, "--key", "age")
    assert code != EXIT_OK and "--key 'age': a feature is in --out already" in capsys.readouterr().err


def test_the_library_loads_the_default_features_like_the_command_line():
    """A notebook reaches the same features: check, choose, load only those columns."""
    frame = medical_frame()
    check = check_file(csv_bytes(frame), label_column="death")
    choice = default_features(check)
    table = load_table(io.BytesIO(csv_bytes(frame[[*choice.features, "death"]])), label_column="death")
    assert table.feature_names == choice.features
