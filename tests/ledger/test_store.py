"""The ledger store (core.ledger.store): one SQLite file per user, shared by every process.

Durable (a charge is committed when ``charge`` returns; a process killed inside its
transaction leaves nothing, one killed after it leaves its run), safe under concurrent
writers (processes and threads charging one dataset never pass its budget), located once
(path, ``PRIVATE_LABEL_LAB_LEDGER``, the per-user default), and holding no private value:
a dictionary attack on a saved store of a small-domain table recovers no row.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import pickle
import signal
import sqlite3
import stat
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from core import ledger as L
from core.errors import BudgetExhausted, DataError
from core.ledger.store import LedgerStore, default_store_path, store_path

ROOT = Path(__file__).resolve().parents[2]


def pure(eps, n=1):
    return L.PureDPEntry.uniform(eps_step=eps, n_steps=n, mechanism="test")


def python(code: str, env_extra: dict | None = None, **kw) -> subprocess.Popen:
    env = dict(os.environ, **(env_extra or {}))
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


# ----------------------------------------------------------------------------- where it is


def test_the_store_is_located_once_and_never_in_the_real_home_under_test(tmp_path, monkeypatch):
    assert str(store_path()) == os.environ["PRIVATE_LABEL_LAB_LEDGER"]
    assert str(store_path(tmp_path / "x.sqlite")) == str((tmp_path / "x.sqlite").absolute())
    assert not str(store_path()).startswith(str(Path.home() / ".local"))
    monkeypatch.delenv("PRIVATE_LABEL_LAB_LEDGER")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert store_path() == tmp_path / "data" / "private-label-lab" / "ledger.sqlite" == default_store_path()
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_store_path() == Path.home() / ".local" / "share" / "private-label-lab" / "ledger.sqlite"


def test_a_dataset_is_its_name_in_the_store(tmp_path):
    path = tmp_path / "ledger.sqlite"
    a = L.PrivacyLedger("credit", store=path, budget_epsilon=2.0, budget_delta=1e-5)
    a.charge(pure(0.5))
    b = L.PrivacyLedger("credit", store=path)  # another object, the same ledger
    assert len(b) == 1 and b.budget == L.Budget(2.0, 1e-5) and b.total().epsilon == pytest.approx(0.5, rel=1e-4)
    b.charge(pure(0.25))
    assert len(a) == 2 and a.total().epsilon == pytest.approx(0.75, rel=1e-4)
    assert len(L.PrivacyLedger(" credit ", store=path)) == 2  # surrounding spaces are not part of a name
    assert len(L.PrivacyLedger("Credit", store=path)) == 0  # another name: another dataset
    assert LedgerStore(path).datasets() == ["credit"]  # reading an unknown name creates nothing
    with pytest.raises(Exception, match="name"):
        L.PrivacyLedger("  ", store=path)


def test_a_file_that_is_not_a_store_is_refused(tmp_path):
    bad = tmp_path / "ledger.json"
    bad.write_text('{"format": "private-label-lab-ledger", "version": 1, "ledgers": {}}')
    with pytest.raises(DataError, match="not a Private Label Lab ledger store"):
        len(L.PrivacyLedger("x", store=bad))
    other = tmp_path / "other.sqlite"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    con.execute("INSERT INTO meta VALUES ('format', 'someone-else')")
    con.commit()
    con.close()
    with pytest.raises(DataError, match="not a Private Label Lab ledger store"):
        len(L.PrivacyLedger("x", store=other))


# ----------------------------------------------------------------------------- durable


def test_a_charge_is_committed_when_charge_returns_and_survives_a_killed_process(tmp_path):
    path = tmp_path / "ledger.sqlite"
    proc = python(f"""
        import sys, time
        from core import ledger as L
        led = L.PrivacyLedger("credit", store={str(path)!r})
        led.charge(L.PureDPEntry.uniform(eps_step=0.5, n_steps=1), units=[1, 2, 3])
        print("charged", flush=True)
        time.sleep(600)
    """)
    assert proc.stdout.readline().strip() == "charged"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    led = L.PrivacyLedger("credit", store=path)
    assert len(led) == 1 and led.n_units == 3 and led.total(units=[2]).epsilon == pytest.approx(0.5)


def test_a_process_killed_inside_its_transaction_leaves_nothing_and_holds_no_lock(tmp_path):
    path = tmp_path / "ledger.sqlite"
    L.PrivacyLedger("credit", store=path).charge(pure(0.1))
    proc = python(f"""
        import time
        from core.ledger.store import LedgerStore
        from core import ledger as L

        def change(state, secret):
            new = state.after(L.PureDPEntry.uniform(eps_step=0.5, n_steps=1), None)
            print("inside", flush=True)
            time.sleep(600)  # killed here: checked, not yet committed
            return new, None

        LedgerStore({str(path)!r}).update("credit", change)
    """)
    assert proc.stdout.readline().strip() == "inside"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    led = L.PrivacyLedger("credit", store=path)
    assert len(led) == 1  # the killed charge left nothing
    led.charge(pure(0.1))  # and the store is not locked
    assert len(led) == 2


# ----------------------------------------------------------------------------- concurrent writers


CHARGER = """
import sys
from core import ledger as L
from core.errors import BudgetExhausted
led = L.PrivacyLedger("shared", store=sys.argv[1])
ok = refused = 0
for i in range(int(sys.argv[2])):
    try:
        led.charge(L.PureDPEntry.uniform(eps_step=1.0, n_steps=1, mechanism="proc"), units=None if i % 2 else [i, i + 1])
        ok += 1
    except BudgetExhausted:
        refused += 1
print(ok, refused)
"""


def test_processes_and_threads_charging_one_dataset_never_pass_its_budget(tmp_path):
    path = tmp_path / "ledger.sqlite"
    L.PrivacyLedger("shared", store=path, budget_epsilon=12.0, budget_delta=0.0)
    procs = [subprocess.Popen([sys.executable, "-c", CHARGER, str(path), "10"], cwd=ROOT, stdout=subprocess.PIPE,
                              text=True) for _ in range(2)]
    here = L.PrivacyLedger("shared", store=path)
    ok_here = []

    def work():
        for _ in range(5):
            try:
                here.charge(pure(1.0))
                ok_here.append(1)
            except BudgetExhausted:
                pass

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    counts = [tuple(map(int, p.communicate(timeout=300)[0].split())) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    accepted = sum(c[0] for c in counts) + len(ok_here)
    refused = sum(c[1] for c in counts) + (10 - len(ok_here))
    assert accepted + refused == 30 and refused > 0
    assert accepted == len(here)  # every accepted charge is recorded, and only those
    assert here.total().epsilon <= 12.0 * (1 + 1e-9)  # never past the budget
    assert here.total().epsilon == pytest.approx(12.0)  # filled up: the last refusals had no room



def test_a_stored_ledger_pickles_as_a_reference_to_the_same_store(tmp_path):
    path = tmp_path / "ledger.sqlite"
    led = L.PrivacyLedger("credit", store=path)
    led.charge(pure(0.5))
    key = led.open_session({"rounds": 3})
    blob = pickle.dumps(led)
    assert pickle.loads(blob) is led  # in this process: the same object, its streaming state with it
    assert b"rounds" not in blob  # a run's state (its secret noise) never leaves its process
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        import pickle, sys
        from core import ledger as L
        led = pickle.loads(sys.stdin.buffer.read())
        assert led.store is not None and led.dataset == "credit" and led.reachable
        print(led.local_session({key!r}), len(led))
        led.charge(L.PureDPEntry.uniform(eps_step=0.25, n_steps=1))
    """)], input=blob, cwd=ROOT, capture_output=True, check=True)
    assert proc.stdout.decode().split() == ["None", "1"]
    assert len(led) == 2 and led.total().epsilon == pytest.approx(0.75)  # the copy charged the same store


# ----------------------------------------------------------------------------- the units' secret


def test_the_units_secret_sits_beside_the_store_readable_by_its_owner_only(tmp_path):
    path = tmp_path / "ledger.sqlite"
    led = L.PrivacyLedger("credit", store=path)
    led.charge(pure(0.5))
    assert not Path(str(path) + ".key").exists()  # no unit yet: no secret
    led.charge(pure(0.5), units=["ann", "bob"])
    key_file = Path(str(path) + ".key")
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    secret = bytes.fromhex(key_file.read_text().strip())
    assert len(secret) == 32 and secret not in path.read_bytes()
    # another secret would open fresh accounts for every unit: refused, nothing charged
    key_file.write_text(os.urandom(32).hex())
    other = L.PrivacyLedger("credit", store=path)
    with pytest.raises(DataError, match="not the one its privacy units were hashed with"):
        other.charge(pure(0.5), units=["ann"])
    key_file.unlink()
    with pytest.raises(DataError, match="key file .* is missing"):
        L.PrivacyLedger("credit", store=path).charge(pure(0.5), units=["ann"])
    assert len(L.PrivacyLedger("credit", store=path)) == 2
    key_file.write_text(secret.hex())
    assert L.PrivacyLedger("credit", store=path).total(units=["ann"]).epsilon == pytest.approx(1.0)


def test_the_secret_may_come_from_the_environment(tmp_path, monkeypatch):
    path = tmp_path / "ledger.sqlite"
    monkeypatch.setenv("PRIVATE_LABEL_LAB_LEDGER_KEY", "ab" * 32)
    L.PrivacyLedger("credit", store=path).charge(pure(0.5), units=["ann"])
    assert not Path(str(path) + ".key").exists()
    assert L.PrivacyLedger("credit", store=path).total(units=["ann"]).epsilon == pytest.approx(0.5)
    monkeypatch.setenv("PRIVATE_LABEL_LAB_LEDGER_KEY", "cd" * 32)
    with pytest.raises(DataError, match="not the one"):
        L.PrivacyLedger("credit", store=path).charge(pure(0.5), units=["ann"])


# ----------------------------------------------------------------------------- nothing private stored


def _old_row_fingerprint(values) -> str:
    """The per-row fingerprint an earlier ledger file stored (unkeyed BLAKE2b-128 of the
    row's canonical values), reimplemented here as the attack's dictionary."""
    num = np.asarray([float(np.float32(v)) for v in values], dtype="<f8")
    layout = (",".join(f"{j}n" for j in range(len(values))) + ";").encode()
    h = hashlib.blake2b(b"private-label-lab/row/v1\x00" + layout + b"\x00", digest_size=16)
    h.update(num.tobytes())
    return h.hexdigest()


def test_a_dictionary_attack_on_a_saved_store_recovers_no_row(tmp_path):
    """Three small-domain columns and a label (60 possible rows, 40 of them present): every
    possible row, hashed every way the attacker knows, and every small ID hashed under a
    guessed secret, is looked for in the saved store's bytes; nothing is found.  The same
    search finds the old per-row fingerprints in a file that holds them, and with the real
    secret it finds the IDs' keys: the attack works where there is something to find."""
    from sklearn.linear_model import LogisticRegression

    from core.pipeline import PrivateEnsembleClassifier
    from core.ledger.units import unit_keys

    domain = list(itertools.product(range(3), range(5), range(2), range(2)))  # a, b, c, label: 60 rows
    rng = np.random.default_rng(0)
    present = [domain[i] for i in rng.choice(len(domain), 40, replace=False)]
    rows = np.asarray([present[i] for i in rng.integers(0, 40, 400)], dtype=float)
    X, y = rows[:, :3], rows[:, 3].astype(int)
    path = tmp_path / "ledger.sqlite"
    led = L.PrivacyLedger("small", store=path)
    est = PrivateEnsembleClassifier(LogisticRegression(), k=5, mechanism="gnmax", epsilon=1.0, delta=1e-5, max_queries=20, rng=0,
                                    ledger=led)
    est.fit(X, y)  # the whole dataset
    ids = np.arange(400)  # and, with IDs, each row its own unit
    est.fit(X[:200], y[:200], groups=ids[:200])
    saved = path.read_bytes() + b"".join(p.read_bytes() for p in tmp_path.glob("ledger.sqlite-*"))
    con = sqlite3.connect(path)
    text = json.dumps([list(map(str, r)) for t in ("meta", "datasets", "runs") for r in con.execute(f"SELECT * FROM {t}")])
    con.close()

    def found(needles) -> list:
        return [n for n in needles if n in saved or (isinstance(n, str) and n in text)]

    dictionary = []
    for row in domain:
        dictionary.append(_old_row_fingerprint(row).encode())
        dictionary.append(bytes.fromhex(_old_row_fingerprint(row)))
        dictionary.append(hashlib.sha256(",".join(map(str, row)).encode()).digest())
        dictionary.append(hashlib.sha256(",".join(map(str, row)).encode()).hexdigest().encode())
    assert found(dictionary) == []
    guessed = [unit_keys([i], secret=s, dataset="small").tobytes() for i in range(400) for s in (b"\0" * 32, b"small" * 4)]
    assert found(guessed) == []
    # controls: the search finds what is there
    real = bytes.fromhex(Path(str(path) + ".key").read_text().strip())
    assert len(found([unit_keys([i], secret=real, dataset="small").tobytes() for i in range(200)])) == 200
    old_file = json.dumps({"rows": [_old_row_fingerprint(r) for r in present]}).encode()
    assert sum(_old_row_fingerprint(r).encode() in old_file for r in domain) == 40
    # and no value of the table is written (the runs hold public parameters only)
    assert "epsilon_data_dependent" not in text and "labels" not in text


def test_nothing_in_the_store_depends_on_the_rows_values(tmp_path):
    """Two datasets differing in every value, charged the same runs with the same IDs, leave the
    same store (up to timestamps and the units' secret)."""
    def dump(path: Path, X: np.ndarray) -> list:
        led = L.PrivacyLedger("d", store=path, budget_epsilon=10.0, budget_delta=1e-4)
        from sklearn.linear_model import LogisticRegression

        from core.pipeline import PrivateEnsembleClassifier

        est = PrivateEnsembleClassifier(LogisticRegression(), k=5, mechanism="lnmax", epsilon=1.0, delta=1e-5, max_queries=10,
                                        rng=0, ledger=led)
        est.fit(X, (X[:, 0] > 0).astype(int) if X[:, 0].std() else np.arange(len(X)) % 2)
        est.fit(X[:50], np.arange(50) % 2, groups=np.arange(50))
        con = sqlite3.connect(path)
        runs = [json.loads(e) for (e,) in con.execute("SELECT entry FROM runs ORDER BY seq")]
        for r in runs:
            r.pop("timestamp")
        units = con.execute("SELECT class_of, vectors FROM units").fetchall()
        con.close()
        return [runs, units]

    rng = np.random.default_rng(1)
    assert dump(tmp_path / "a.sqlite", rng.normal(size=(100, 3))) == dump(tmp_path / "b.sqlite",
                                                                          rng.normal(size=(100, 3)) * 100)


def test_waiting_for_another_writer_is_patient(tmp_path):
    path = tmp_path / "ledger.sqlite"
    L.PrivacyLedger("x", store=path).charge(pure(0.1))
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("BEGIN IMMEDIATE")  # another process holds the write lock for a while
    done = []
    t = threading.Thread(target=lambda: done.append(L.PrivacyLedger("x", store=path).charge(pure(0.1))))
    t.start()
    time.sleep(1.0)
    assert not done  # waiting, not failing
    con.execute("ROLLBACK")
    con.close()
    t.join(timeout=60)
    assert done and len(L.PrivacyLedger("x", store=path)) == 2
