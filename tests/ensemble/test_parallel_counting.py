"""Every fit counted wherever it runs: loky workers, unpickled copies in other processes.

The estimator inside scikit-learn's model selection: the plain route warned, stratified
folds refused, a refusal stops the search (docs/design.md §13).
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.exceptions import FitFailedWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import (GridSearchCV, KFold, RandomizedSearchCV, StratifiedShuffleSplit, cross_val_score,
                                     cross_validate)

from core import PrivateEnsembleClassifier, pipeline
from core import ledger as L
from core.data import halfspaces
from core.errors import BudgetExhausted, LedgerUnreachable, ParameterError, PrivacyWarning, SearchStopped

ROOT = Path(__file__).resolve().parents[2]
EPS, DELTA, M = 1.0, 1e-5, 200


@pytest.fixture(scope="module")
def data():
    X, y = halfspaces(360, 3, rng=11)
    return X[:240], y[:240], X[240:]


def _est(ledger, **kw):
    settings = {"k": 5, "mechanism": "gnmax", "epsilon": EPS, "delta": DELTA, "max_queries": M, "rng": 0, **kw}
    return PrivateEnsembleClassifier(LogisticRegression(), ledger=ledger, **settings)


def _run(route, est, X, y, n_jobs):
    cv = KFold(2, shuffle=True, random_state=0)
    grid = {"k": [4, 6]}
    if route == "cross_val_score":
        cross_val_score(est, X, y, cv=cv, n_jobs=n_jobs)
    elif route == "cross_validate":
        cross_validate(est, X, y, cv=cv, n_jobs=n_jobs)
    elif route == "GridSearchCV":
        GridSearchCV(est, grid, cv=cv, n_jobs=n_jobs).fit(X, y)
    else:
        RandomizedSearchCV(est, grid, n_iter=2, cv=cv, n_jobs=n_jobs, random_state=0).fit(X, y)


RUNS = {"cross_val_score": 2, "cross_validate": 2, "GridSearchCV": 5, "RandomizedSearchCV": 5}


@pytest.mark.slow
@pytest.mark.parametrize("route", list(RUNS))
def test_two_loky_workers_charge_the_stored_ledger_as_the_sequential_run_does(data, tmp_path, route):
    X, y, _ = data
    totals = {}
    for n_jobs in (1, 2):
        led = L.PrivacyLedger(route, store=tmp_path / f"ledger{n_jobs}.sqlite")
        with pytest.warns(PrivacyWarning, match="NOT covered"):
            _run(route, _est(led), X, y, n_jobs)
        totals[n_jobs] = (len(led), led.total().epsilon, led.total().delta)
    one = pipeline.ledger_entry("gnmax", {"epsilon": EPS, "delta": DELTA}, M)
    expected = L.PrivacyLedger(entries=[one] * RUNS[route]).total()
    assert totals[1][0] == totals[2][0] == RUNS[route]  # every fold's fit (and the refit) on the ledger
    assert totals[2][1] == pytest.approx(totals[1][1], rel=1e-12) == pytest.approx(expected.epsilon, rel=1e-12)
    assert totals[2][2] == pytest.approx(totals[1][2], rel=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("given", ["default", "in memory"])
def test_an_in_memory_ledger_refuses_the_workers_fits_and_stops_the_search(data, given):
    X, y, _ = data
    led = None if given == "default" else L.PrivacyLedger()
    before = len(L.default_ledger())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        with pytest.raises(SearchStopped, match="ledger store") as err:
            cross_val_score(_est(led), X, y, cv=KFold(2, shuffle=True, random_state=0), n_jobs=2)
    assert "n_jobs=1" in str(err.value)
    assert len(led if led is not None else L.default_ledger()) == (0 if led is not None else before)


def test_a_refusal_inside_a_search_stops_it_unless_the_estimator_asks_otherwise(data):
    X, y, _ = data
    one = pipeline.ledger_entry("gnmax", {"epsilon": EPS, "delta": DELTA}, M)
    room = L.PrivacyLedger(entries=[one] * 2).total()  # a budget for two fits of the four
    cv = KFold(2, shuffle=True, random_state=0)
    led = L.PrivacyLedger(budget_epsilon=room.epsilon, budget_delta=room.delta)
    search = GridSearchCV(_est(led), {"k": [4, 6]}, cv=cv)  # error_score=np.nan: sklearn catches Exception
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        with pytest.raises(SearchStopped) as err:
            search.fit(X, y)
    assert isinstance(err.value.refusal, BudgetExhausted) and len(led) == 2
    assert not hasattr(search, "cv_results_")
    # asked otherwise: the plain refusal, which the numeric error_score records as a failed fit
    led2 = L.PrivacyLedger(budget_epsilon=room.epsilon, budget_delta=room.delta)
    search = GridSearchCV(_est(led2, on_refusal="raise"), {"k": [4, 6]}, cv=cv, error_score=0.0, refit=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        with pytest.warns(FitFailedWarning, match="BudgetExhausted"):
            search.fit(X, y)
    assert len(led2) == 2
    scores = search.cv_results_["mean_test_score"]
    assert scores[0] > 0.5 and scores[1] == 0.0  # the refused candidate scored as error_score, the search went on
    # outside model selection a refusal is the plain exception either way
    with pytest.raises(BudgetExhausted):
        _est(led).fit(X, y)
    with pytest.raises(ParameterError, match="on_refusal"):
        _est(L.PrivacyLedger(), on_refusal="carry on").fit(X, y)


def test_stratified_folds_are_refused_with_the_reason_and_the_plain_route_warns(data):
    X, y, _ = data
    led = L.PrivacyLedger()
    for cv in (2, StratifiedShuffleSplit(2, random_state=0)):  # cv=2 on a classifier: StratifiedKFold
        with pytest.raises(ParameterError, match="reading the private labels") as err:
            GridSearchCV(_est(led), {"k": [4, 6]}, cv=cv).fit(X, y)
        assert "§13" in str(err.value) and "KFold(n_splits, shuffle=True)" in str(err.value)
        with pytest.raises(ParameterError, match="one changed label moves other rows"):
            cross_val_score(_est(led), X, y, cv=cv)
    assert len(led) == 0  # refused before any fit
    with pytest.warns(PrivacyWarning, match="best_params_ are computed from private labels"):
        GridSearchCV(_est(led), {"k": [4, 6]}, cv=KFold(2, shuffle=True, random_state=0)).fit(X, y)
    assert len(led) == 5
    with warnings.catch_warnings():  # a plain fit and predict outside model selection: no such warning
        warnings.simplefilter("error", PrivacyWarning)
        _est(led, classes=np.unique(y)).fit(X, y).predict(X[:5])  # declared classes: no warning of them either


_CHILD = """
import pickle, sys, warnings
warnings.simplefilter("ignore")
from core.errors import BudgetExhausted, LedgerUnreachable
est = pickle.load(open(sys.argv[1], "rb"))
Xq = pickle.load(open(sys.argv[2], "rb"))
try:
    out = est.predict(Xq)
    print("answered", int((out != -1).sum()), est.n_queries_)
except (BudgetExhausted, LedgerUnreachable) as exc:
    print("refused", type(exc).__name__)
"""


@pytest.mark.slow
def test_two_processes_sharing_a_pickled_estimator_are_charged_for_what_they_answer(data, tmp_path):
    X, y, Xq = data
    one = pipeline.ledger_entry("gnmax", {"epsilon": EPS, "delta": DELTA}, M)
    room = L.PrivacyLedger(entries=[one] * 2).total()  # the fit's run and one more
    led = L.PrivacyLedger("shared", store=tmp_path / "ledger.sqlite", budget_epsilon=room.epsilon,
                          budget_delta=room.delta)
    stored = _est(led).fit(X, y)
    memory = _est(L.PrivacyLedger()).fit(X, y)
    paths = {}
    for name, obj in (("stored", stored), ("memory", memory), ("queries", np.tile(Xq, (2, 1))[:M])):
        paths[name] = tmp_path / f"{name}.pkl"
        paths[name].write_bytes(pickle.dumps(obj))
    procs = [subprocess.Popen([sys.executable, "-c", _CHILD, str(paths[w]), str(paths["queries"])], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for w in ("stored", "stored", "memory")]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-2000:] for o in outs]
    stored_outs = sorted(o[0].split()[0] for o in outs[:2])
    # one copy's first answer charged a second run; the other copy was refused: at most M answers per charged run
    assert stored_outs == ["answered", "refused"], outs
    answered = [o[0].split() for o in outs[:2] if o[0].startswith("answered")][0]
    assert int(answered[2]) == M and int(answered[1]) <= M
    assert outs[2][0].split() == ["refused", "LedgerUnreachable"]  # an in-memory ledger's copy never answers
    assert len(led) == 2
    assert led.total().epsilon == pytest.approx(room.epsilon, rel=1e-12)
    # the parent's own run is untouched: it still answers its M queries under the fit's charge
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        stored.predict(Xq)
    assert stored.n_queries_ == len(Xq) and len(led) == 2


def test_an_in_memory_ledgers_copy_refuses_to_charge_and_to_answer_where_its_original_is_gone(data):
    X, y, Xq = data
    led = L.PrivacyLedger()
    est = _est(led).fit(X, y)
    blob = pickle.dumps(est)
    twin = pickle.loads(blob)
    assert twin.ledger_ is led  # the same process, the original alive: the same ledger, the same run
    del est, twin, led
    import gc

    gc.collect()
    copy = pickle.loads(blob)  # the original is gone: a read-only snapshot
    assert not copy.ledger_.reachable and copy.n_queries_ == 0
    with pytest.raises(LedgerUnreachable, match="ledger store"):
        copy.predict(Xq[:3])
    with pytest.raises(LedgerUnreachable):
        copy.ledger_.charge(pipeline.ledger_entry("gnmax", {"epsilon": EPS, "delta": DELTA}, M))
    with pytest.raises(LedgerUnreachable):
        copy.fit(X, y)


def _fit_in_worker(est, X, y):
    est.fit(X, y)
    return len(est.ledger_)


@pytest.mark.slow
def test_a_dask_worker_process_charges_the_stored_ledger_and_refuses_an_in_memory_one(data, tmp_path):
    dask = pytest.importorskip("dask")
    X, y, _ = data
    led = L.PrivacyLedger("dask", store=tmp_path / "ledger.sqlite")
    memory = L.PrivacyLedger()
    with dask.config.set(scheduler="processes", num_workers=1):
        assert dask.delayed(_fit_in_worker)(_est(led), X, y).compute() == 1  # charged from the worker's process
        with pytest.raises(LedgerUnreachable, match="ledger store"):
            dask.delayed(_fit_in_worker)(_est(memory), X, y).compute()
    assert len(led) == 1 and len(memory) == 0


def test_a_test_fold_larger_than_the_queries_left_stops_the_search_before_answering(data):
    X, y, _ = data
    led = L.PrivacyLedger()
    small = _est(led, max_queries=50)  # test folds of 120 rows
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        with pytest.raises(SearchStopped, match="only 50 of its max_queries = 50 queries are left") as err:
            cross_val_score(small, X, y, cv=KFold(2, shuffle=True, random_state=0))
    assert isinstance(err.value.refusal, BudgetExhausted)
    with pytest.warns(PrivacyWarning, match="budget ran out"):  # outside model selection: answered up to the budget
        out = small.fit(X, y).predict(X[:120])
    assert int(np.sum(out != -1)) <= 50
