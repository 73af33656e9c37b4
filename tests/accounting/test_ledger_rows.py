"""The per-row ledger: histories, budgets per row, persistence, and one ledger never copied."""

from __future__ import annotations

import copy
import json
import pickle

import numpy as np
import pytest

from core import accounting as L
from core.errors import BudgetExhausted, DataError


def pure(eps, n=1):
    return L.PureDPEntry.uniform(eps_step=eps, n_steps=n)


def test_runs_without_rows_touch_every_row_and_keep_the_dataset_total():
    led = L.PrivacyLedger("sha256:x")
    led.record(pure(0.5))
    led.record(pure(0.25), rows=["a"])
    assert led.rows_total(["a"]).epsilon == pytest.approx(0.75)
    assert led.rows_total(["never-seen"]).epsilon == pytest.approx(0.5)  # only the all-rows run
    assert led.total().epsilon == pytest.approx(0.75)
    plain = L.PrivacyLedger("sha256:y", entries=[pure(0.5), pure(0.25)])
    assert plain.n_rows == 0 and plain.total().epsilon == pytest.approx(0.75)
    assert "rows" not in plain.to_dict()  # dataset-level ledgers keep their file format


def test_a_budget_is_per_row_and_checked_on_the_rows_a_run_touches():
    led = L.PrivacyLedger(budget_epsilon=1.0, budget_delta=0.0)
    led.charge(pure(0.6), rows=["a", "b"])
    led.charge(pure(0.4), rows=["b", "c"])  # b reaches 1.0 exactly: accepted
    with pytest.raises(BudgetExhausted, match="this row"):
        led.charge(pure(0.1), rows=["b"])
    led.charge(pure(0.4), rows=["a", "d"])  # other rows still have room
    with pytest.raises(BudgetExhausted):
        led.charge(pure(0.1))  # every row, b among them
    assert len(led) == 3 and led.total().epsilon == pytest.approx(1.0)


def test_histories_compose_each_row_only_over_its_runs():
    rng = np.random.default_rng(0)
    rows = [f"r{i}" for i in range(40)]
    led = L.PrivacyLedger()
    touched = []
    for j in range(6):
        pick = [r for r in rows if rng.random() < 0.5]
        touched.append(set(pick))
        led.record(pure(0.1 * (j + 1)), rows=pick)
    worst = 0.0
    for r in rows:  # slow loop: each row's own basic composition
        own = sum(0.1 * (j + 1) for j in range(6) if r in touched[j])
        assert led.rows_total([r]).epsilon == pytest.approx(own)
        worst = max(worst, own)
    assert led.total().epsilon == pytest.approx(worst)


def test_per_row_ledgers_persist_to_json_and_files(tmp_path):
    led = L.PrivacyLedger("per-row", budget_epsilon=3.0, budget_delta=1e-5)
    led.record(pure(0.5), rows=["a", "b"])
    led.record(pure(0.7), rows=["b"])
    led.record(pure(0.1))
    back = L.PrivacyLedger.from_json(led.to_json())
    assert back.n_rows == 2 and back.rows_total(["b"]).epsilon == pytest.approx(1.3)
    assert back.budget == led.budget
    path = tmp_path / "ledger.json"
    led.save(path)
    again = L.load_ledgers(path)["per-row"]
    assert again.total().epsilon == pytest.approx(1.3)
    bad = json.loads(led.to_json())
    bad["entry_rows"] = bad["entry_rows"][:1]
    with pytest.raises(DataError, match="one item per entry"):
        L.PrivacyLedger.from_dict(bad)


def test_a_ledger_is_never_copied():
    led = L.PrivacyLedger()
    led.record(pure(0.5), rows=["a"])
    assert copy.copy(led) is led and copy.deepcopy(led) is led and copy.deepcopy({"x": led})["x"] is led
    assert pickle.loads(pickle.dumps(led)) is led
    key = led.open_session({"state": 1})
    twin = pickle.loads(pickle.dumps(led))
    assert twin.session(key) is led.session(key)


def test_an_unpickled_ledger_without_its_original_is_rebuilt_once():
    led = L.PrivacyLedger(budget_epsilon=2.0, budget_delta=1e-6)
    led.record(pure(0.5), rows=["a", "b"])
    key = led.open_session([1, 2, 3])
    blob = pickle.dumps(led)
    ledger_id = led.ledger_id
    del led
    import gc

    gc.collect()
    first = pickle.loads(blob)
    second = pickle.loads(blob)
    assert first is second and first.ledger_id == ledger_id
    assert first.rows_total(["a"]).epsilon == pytest.approx(0.5) and first.session(key) == [1, 2, 3]
    assert first.budget == L.Budget(2.0, 1e-6)


def test_gaussian_entries_compose_exactly_and_check_their_curve():
    e = L.planned_entry("gnmax", sigma=40.0, delta=1e-5, m=100)
    assert e.gaussian_mu_sq == pytest.approx(200 / 1600)
    two = L.PrivacyLedger(entries=[e, e]).total(delta=1e-5)
    assert two.epsilon == pytest.approx(L.gaussian_epsilon(2 * 200 / 1600, delta=1e-5), rel=1e-9)
    assert "gaussian" in two.method
    with pytest.raises(Exception, match="gaussian_mu_sq is for a Gaussian run only"):
        L.RDPEntry(orders=(2.0, 3.0), rho=(1.0, 1.0), delta_conversion=1e-5, gaussian_mu_sq=1.0)
    mixed = L.PrivacyLedger(entries=[e, L.RDPEntry(orders=tuple(L.ORDERS), rho=tuple(L.ORDERS * 0.01),
                                                   delta_conversion=1e-5)]).total()
    assert "rdp:rdp" in mixed.method  # a non-Gaussian RDP run: composed by RDP
    back = L.entry_from_dict(e.to_dict())
    assert back.gaussian_mu_sq == e.gaussian_mu_sq


def test_no_import_circle_between_the_ledger_modules():
    import ast
    from pathlib import Path

    root = Path(L.__file__).parent

    def imports(name):
        tree = ast.parse((root / f"{name}.py").read_text(encoding="utf-8"))
        out = set()
        for node in ast.walk(tree):  # function-level imports count too
            if isinstance(node, ast.ImportFrom) and node.module:
                out.add(node.module)
                out.update(f"{node.module}.{a.name}" for a in node.names)
        return {m.rsplit(".", 1)[-1] for m in out if m.startswith("core.accounting") or m == "core"}

    assert "ledger_compose" not in imports("ledger_entries") and "accounting" not in imports("ledger_compose")
    assert "ledger" not in imports("ledger_files") and "ledger" not in imports("ledger_rows")
