"""A one-file job (an upload without a public file) draws its public queries from the private
file itself, so nothing charged, stored or reported may count its rows after a drop.

Under ``missing="drop"`` the public part would hold only the rows left of its share of the
file: a neighbouring file in which ONE of those (private) rows has a missing cell would give
``m`` one smaller, and with ``m`` the per-query noise, the price, the ledger entry's stored
``m`` and description and the report's count of public rows.  The app refuses the drop on a
one-file job (``core.data.check_one_file_queries``), before anything is charged, and whatever
the rows hold; with ``impute`` (the way it offers instead) all of these are equal on the two
neighbours.  Everything compared is exact: the tests fail on any difference.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from app_pages._datasets import _uploaded_dataset
from core import pipeline
from core.data import ONE_FILE_DROP, load_table, split_public
from core.errors import BudgetExhausted, DataError
from core.export import privacy_report
from core.ledger import PrivacyLedger

N, PUBLIC, TEST, SEED = 80, 0.25, 0.125, 7
RUNS = (("gnmax", {"epsilon": 1.0, "delta": 1e-5}), ("btt", {"epsilon": 1.0, "delta": 1e-5, "T": 3}))


def _csv(missing_at: int | None = None) -> bytes:
    """``x0, x1, label`` rows; data row ``missing_at`` (0-based) has an empty ``x1``."""
    rng = np.random.default_rng(0)
    lines = ["x0,x1,label"]
    for i, (a, b) in enumerate(rng.normal(size=(N, 2)).round(3)):
        lines.append(f"{a},{'' if i == missing_at else b},{'yes' if a + b > 0 else 'no'}")
    return ("\n".join(lines) + "\n").encode()


def _load(data: bytes, missing: str):
    return _uploaded_dataset(hashlib.sha256(data).hexdigest(), data, "people.csv", "label", missing, (), None,
                             None, PUBLIC, TEST, SEED)


def _app_split(data: bytes, missing: str):
    """The public part of the app's split of ``data`` (held-out test rows first, as ``_split_dataset``)."""
    table = load_table(data, label_column="label", missing=missing)
    rng = np.random.default_rng(SEED)
    rest, _ = split_public(table, round(N * TEST), rng=rng)
    return split_public(rest, round(N * PUBLIC), rng=rng)[1]


def _neighbours() -> tuple[bytes, bytes]:
    """The file, and the file with one cell missing in a row of the public part (a private row of a
    one-file job) under either option."""
    both = set(_app_split(_csv(), "drop").rows.tolist()) & set(_app_split(_csv(), "impute").rows.tolist())
    assert both
    return _csv(), _csv(min(both) - 1)  # file row numbers start at 1


def _entry_fields(entry) -> dict:
    return {k: v for k, v in entry.to_dict().items() if k != "timestamp"}


def test_a_one_file_job_refuses_the_drop_alike_on_both_neighbours():
    messages = []
    for data in _neighbours():
        with pytest.raises(DataError) as caught:
            _load(data, "drop")
        messages.append(str(caught.value))
    assert messages[0] == messages[1] and ONE_FILE_DROP in messages[0] and "people.csv" in messages[0]
    assert "impute" in ONE_FILE_DROP and "separate public file" in ONE_FILE_DROP


def test_what_the_drop_would_have_moved():
    # Why the refusal: the app's split after a drop gives the neighbours m and m - 1 public rows.
    assert [_app_split(data, "drop").n_rows for data in _neighbours()] == [round(N * PUBLIC), round(N * PUBLIC) - 1]


def test_m_price_ledger_entry_and_report_are_equal_on_neighbours_when_imputed(tmp_path):
    seen = []
    for i, data in enumerate(_neighbours()):
        ds = _load(data, "impute")
        m = ds.n_public
        entries = [pipeline.ledger_entry(name, settings, m) for name, settings in RUNS]
        led = PrivacyLedger("clinic", store=tmp_path / f"ledger{i}.sqlite")
        led.set_budget(epsilon=1.5, delta=1e-4)
        price = led.total_with(entries)
        with pytest.raises(BudgetExhausted) as refused:
            led.check(entries)
        led.charge(entries[0])
        stored = PrivacyLedger("clinic", store=tmp_path / f"ledger{i}.sqlite").entries
        teachers = pipeline.train(ds.private, "logistic_regression", {}, 4, rng=0)
        votes = pipeline.mechanism_inputs("gnmax", teachers, ds.private, ds.public_X)
        result = pipeline.label(votes, *RUNS[0], rng=0)
        report = privacy_report(result, n_private=ds.n_private, n_public=m, learner="logistic_regression", k=4)
        seen.append({
            "m": m, "price": (price.epsilon, price.delta), "refusal": str(refused.value),
            "entries": [_entry_fields(e) for e in entries], "stored": [_entry_fields(e) for e in stored],
            "public_rows": report["counts"]["public_rows"], "queries": report["counts"]["queries"],
        })
    assert seen[0] == seen[1]
    assert seen[0]["m"] == seen[0]["public_rows"] == seen[0]["queries"] == round(N * PUBLIC)
    assert seen[0]["stored"] == seen[0]["entries"][:1]


def _persons_csv(more_rows_for: int | None = None) -> bytes:
    """``pid, x0, x1, label``: 40 persons of 2 rows each; person ``more_rows_for`` has 5 rows."""
    rng = np.random.default_rng(1)
    lines = ["pid,x0,x1,label"]
    for p in range(40):
        for _ in range(5 if p == more_rows_for else 2):
            a, b = rng.normal(size=2).round(3)
            lines.append(f"P{p},{a},{b},{'yes' if a + b > 0 else 'no'}")
    return ("\n".join(lines) + "\n").encode()


def test_a_one_file_job_with_a_privacy_unit_asks_one_query_per_public_person():
    # How many rows a person has is private (§1.2: only the number of persons is public): a
    # neighbour in which one person of the public part has 5 rows instead of 2 must give the same m.
    def load(data):
        return _uploaded_dataset(hashlib.sha256(data).hexdigest(), data, "people.csv", "label", "impute", (), None,
                                 None, PUBLIC, TEST, SEED, privacy_unit="pid")

    base = load(_persons_csv())
    first_public = int(base.public_rows[0])  # file row numbers start at 1, two rows per person
    neighbour = load(_persons_csv((first_public - 1) // 2))
    persons = round(40 * PUBLIC)
    assert base.n_public == neighbour.n_public == persons
    assert len(base.public_y) == len(base.public_rows) == persons
    assert len({(r - 1) // 2 for r in base.public_rows}) == persons  # one row of each public person


def test_the_plan_of_a_one_file_job_reads_none_of_its_queries():
    # The plan is free and says so ("nothing here reads the private rows"): on a one-file job the
    # DP-training routes' public rows are a stand-in, the same on both neighbours.
    from app_pages import _plan

    rows = [_plan.public_rows(_load(data, "impute"))[0] for data in _neighbours()]
    assert np.array_equal(rows[0].X, rows[1].X) and rows[0].data_norm == rows[1].data_norm
    assert "stand-in" in rows[0].source and rows[0].m == round(N * PUBLIC)
