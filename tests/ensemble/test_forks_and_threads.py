"""Every answer counted when the estimator's run is shared without a copy: a forked child
holding the live object, and threads answering one run together (docs/design.md §13)."""

from __future__ import annotations

import multiprocessing as mp
import threading
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from core import PrivateEnsembleClassifier
from core import ledger as L
from core.data import halfspaces
from core.errors import LedgerUnreachable

M = 40

fork_only = pytest.mark.skipif("fork" not in mp.get_all_start_methods(), reason="needs the fork start method")


@pytest.fixture(scope="module")
def data():
    X, y = halfspaces(200, 3, rng=5)
    return X[:150], y[:150], X[150:150 + M]


def _est(ledger):
    return PrivateEnsembleClassifier(LogisticRegression(), k=5, mechanism="gnmax", epsilon=1.0, delta=1e-5,
                                     max_queries=M, rng=0, ledger=ledger)


def _in_fork(fn):
    """Run ``fn()`` in a forked child (which holds the parent's live objects, nothing
    unpickled) and return what it returned, or the name of what it raised."""
    ctx = mp.get_context("fork")
    q = ctx.Queue()

    def child():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                q.put(("ok", fn()))
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            q.put(("raised", type(exc).__name__))

    p = ctx.Process(target=child)
    p.start()
    out = q.get(timeout=60)
    p.join(timeout=60)
    return out


@fork_only
def test_a_forked_child_answering_a_stored_ledgers_run_charges_a_new_run(data, tmp_path):
    X, y, Xq = data
    led = L.PrivacyLedger("forked", store=tmp_path / "ledger.sqlite")
    clf = _est(led).fit(X, y)
    assert len(led) == 1
    got = _in_fork(lambda: int(clf.n_queries_ if clf.predict(Xq) is not None else -1))
    assert got == ("ok", M)  # the child answered its max_queries ...
    assert len(led) == 2  # ... as a new run charged to the store, not from its copy of the parent's state
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.predict(Xq)  # the parent's own run is untouched by the child
    assert clf.n_queries_ == M and len(led) == 2


@fork_only
def test_a_forked_childs_fit_with_the_default_ledger_is_refused(data):
    X, y, _ = data
    L.forget_ledgers()
    clf = _est(None)  # the default ledger of this process, which no run has touched yet
    assert _in_fork(lambda: clf.fit(X, y) and len(L.default_ledger())) == ("raised", "LedgerUnreachable")
    assert len(L.default_ledger()) == 0


def test_two_threads_answering_one_run_share_its_max_queries(data):
    X, y, Xq = data
    led = L.PrivacyLedger("threads")
    clf = _est(led).fit(X, y)
    session = clf.session_
    answer, meet = session._answer, threading.Barrier(2)

    def answer_after_both_arrive(counts):  # both threads inside one batch at once, if they can be
        try:
            meet.wait(timeout=1.0)
        except threading.BrokenBarrierError:
            pass
        return answer(counts)

    session._answer = answer_after_both_arrive
    out = []
    threads = [threading.Thread(target=lambda: out.append(clf.predict(Xq))) for _ in range(2)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert session.n_processed == M and len(led) == 1
    assert sum(int(np.count_nonzero(o != clf.abstain)) for o in out) <= M


@pytest.mark.parametrize("there", ["no store", "another store"])
def test_a_copy_whose_store_path_holds_another_file_is_refused(data, tmp_path, there):
    """A Dask worker on another machine unpickles the estimator: the store's path there holds
    no file, or that machine's own store; its fit must not be charged there."""
    import gc
    import pickle

    X, y, _ = data
    path = tmp_path / "ledger.sqlite"
    sent = pickle.dumps(_est(L.PrivacyLedger("machine", store=path)))
    gc.collect()  # the original ledger object is gone, as in another process
    for f in tmp_path.glob("ledger.sqlite*"):  # the owner's store (and its WAL) is not at this path "there"
        f.rename(tmp_path / f.name.replace("ledger", "owner"))
    if there == "another store":
        L.PrivacyLedger("machine", store=path).charge(L.PureDPEntry.uniform(eps_step=0.1, n_steps=1))
    with pytest.raises(LedgerUnreachable, match="another machine"):
        pickle.loads(sent).fit(X, y)
    owner = L.PrivacyLedger("machine", store=tmp_path / "owner.sqlite")
    assert len(owner) == 0
    if there == "no store":
        assert not path.exists()  # not created: a charge there would be lost with it
    else:
        assert len(L.PrivacyLedger("machine", store=path)) == 1  # that machine's store untouched


def test_a_copy_elsewhere_answers_with_the_mechanism_its_charge_is_for(data, tmp_path):
    """set_params after fit cannot make a copy in another process charge one mechanism's map
    and run another (GNMax's RDP curve charged, a-stab's (ε, δ) run answering)."""
    import gc
    import pickle

    X, y, Xq = data
    sent = pickle.dumps(_est(L.PrivacyLedger("mech", store=tmp_path / "ledger.sqlite")).fit(X, y))
    gc.collect()  # the original ledger object is gone, as in another process
    copy = pickle.loads(sent).set_params(mechanism="a-stab")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        copy.predict(Xq)
    led = copy.ledger_
    assert len(led) == 2 and led.entries[1] == led.entries[0]  # the fit's map, charged again
    assert copy.session_.mechanism.name == "gnmax"  # and the run it was charged for
