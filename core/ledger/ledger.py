"""The privacy ledger of one private dataset (docs/design.md §9).

Every run that touches a private dataset spends its budget, including runs that are only
looked at.  A :class:`PrivacyLedger` records each run's a-priori guarantee as a *privacy
map* (:mod:`core.ledger.entries`) **before** the run, composes them into the dataset's
(ε, δ) (:mod:`core.ledger.compose`), and refuses a run that would take the total past the
budget (:class:`core.errors.BudgetExhausted`: nothing is recorded and the run must not
happen).

Identity is declared.  A ledger belongs to a dataset **name** chosen by the data owner
(``PrivacyLedger("credit", store=path)``), kept in the shared store
(:mod:`core.ledger.store`) that the app, the command line and the library all use; the
same rows re-saved, re-encoded or reordered are the same dataset because the owner names
them so.  Without a store the ledger lives in memory (a lesson, a notebook's scratch).

Privacy units.  ``charge(entry, units=ids)`` charges a run to the privacy units whose
rows it reads (a person, declared by an ID column): each unit's own runs compose, and the
data's total is the largest unit's, so disjoint folds compose in parallel.  Without
``units`` a run counts against the whole dataset: every unit, present and future, so a
copy, a transformation, a subset or a bootstrap sample of the data can never be
under-counted.  The IDs are kept only as keyed hashes (:mod:`core.ledger.units`), grouped
by the runs that read them (:mod:`core.ledger.classes`).  No charge, refusal or total reads
a private value.

References
----------
.. [KOV15] P. Kairouz, S. Oh, P. Viswanath, "The composition theorem for differential
   privacy", ICML 2015.
.. [M17] I. Mironov, "Rényi differential privacy", CSF 2017.
.. [DR14] C. Dwork, A. Roth, "The algorithmic foundations of differential privacy",
   2014 (basic composition Thm 3.16; parallel composition of disjoint data).
"""

from __future__ import annotations

import os
import secrets
import threading
import uuid
import weakref
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from core.errors import LedgerUnreachable, ParameterError
from core.ledger.compose import LedgerTotal
from core.ledger.entries import ApproxDPEntry, LedgerEntry, PureDPEntry, RDPEntry
from core.ledger.state import BUDGET_TOLERANCE, Budget, LedgerState
from core.ledger.store import LedgerStore, check_name
from core.ledger.units import unit_keys

__all__ = ["BUDGET_TOLERANCE", "Budget", "LedgerPart", "PrivacyLedger", "default_ledger", "forget_ledgers", "process_id"]

_IN_MEMORY = "in memory"


def _entries_of(entry: LedgerEntry | Sequence[LedgerEntry]) -> list:
    if isinstance(entry, (PureDPEntry, RDPEntry, ApproxDPEntry)):
        return [entry]
    if isinstance(entry, (list, tuple)):
        out = list(entry)
        for e in out:
            if not isinstance(e, (PureDPEntry, RDPEntry, ApproxDPEntry)):
                raise ParameterError(f"a ledger entry must be a PureDPEntry, RDPEntry or ApproxDPEntry, got {type(e).__name__}.")
        return out
    raise ParameterError(f"a ledger entry must be a PureDPEntry, RDPEntry or ApproxDPEntry, got {type(entry).__name__}.")


class PrivacyLedger:
    """The privacy ledger of one private dataset (module docstring; docs/design.md §9).

    Parameters
    ----------
    dataset : str, default "in memory"
        The dataset's name: the key of its ledger in the store (any text the data owner
        chooses; use the same name for every copy of the same data).
    store : path, LedgerStore or None (keyword-only)
        The ledger store shared with the app and the command line (a path, e.g.
        :func:`core.ledger.store_path` for the configured one); None keeps the ledger
        in this process's memory only.
    budget_epsilon, budget_delta : float, optional (keyword-only)
        Set the total budget (both or neither).  On a stored dataset this sets the
        stored budget (as :meth:`set_budget`).
    entries : iterable of entries, optional (keyword-only)
        Runs to record on the whole dataset (no budget check).

    Notes
    -----
    **One ledger, never copied.**  ``copy.copy``/``copy.deepcopy`` (hence
    scikit-learn's ``clone``) return the ledger itself.  A pickled ledger comes back as
    the same object in the process that holds it; elsewhere a stored ledger comes back as
    a reference to the same store and dataset (its charges land in the same place), and
    an in-memory one as a read-only copy of its state at pickling time (below).

    **Streaming state.**  A streaming run's state (:meth:`open_session`) is kept here,
    in this process: an estimator holds only its key, so a copy of the estimator cannot
    restart spending.  It never leaves the process (it holds the run's secret noise):
    a stored ledger pickled to another process comes back without it, and an in-memory
    one as a read-only snapshot.

    **Other processes.**  A stored ledger charges the same store from every process (a
    worker of scikit-learn's ``n_jobs``, a Dask worker, another Python).  An in-memory
    ledger exists once: a copy unpickled anywhere but where the original lives (or a
    forked child's inherited object) refuses every charge and every new run with
    :class:`core.errors.LedgerUnreachable` (:meth:`require_here`), since the original
    would never see them.

    Thread-safe; a stored ledger is also safe across processes (the store's transactions).

    Examples
    --------
    >>> from core.ledger import PrivacyLedger, PureDPEntry
    >>> led = PrivacyLedger(budget_epsilon=1.0, budget_delta=0.0)
    >>> led.charge(PureDPEntry.uniform(eps_step=0.5, n_steps=1)).epsilon
    0.5
    """

    def __init__(self, dataset: str = _IN_MEMORY, *, store: str | os.PathLike | LedgerStore | None = None,
                 budget_epsilon: float | None = None, budget_delta: float | None = None,
                 entries: Iterable[LedgerEntry] = ()) -> None:
        self.dataset = check_name(dataset)
        if store is None or isinstance(store, LedgerStore):
            self._store = store
        else:
            self._store = LedgerStore(store)
        self.ledger_id = uuid.uuid4().hex
        self._lock = threading.RLock()
        self._state = LedgerState()
        self._secret = secrets.token_bytes(32) if self._store is None else None
        self._sessions: dict[str, Any] = {}
        self._session_homes: dict[str, str] = {}  # the process each run's state was opened in
        self._home = process_id()
        self._snapshot = False
        with _LIVE_LOCK:
            _LIVE[self.ledger_id] = self
        if (budget_epsilon is None) != (budget_delta is None):
            raise ParameterError("a budget needs both epsilon and delta.")
        if budget_epsilon is not None:
            self.set_budget(epsilon=budget_epsilon, delta=budget_delta)
        for e in entries:
            self.record(e)

    # -- identity --------------------------------------------------------------------------

    @property
    def store(self) -> Path | None:
        """The store's file, or None for an in-memory ledger."""
        return None if self._store is None else self._store.path

    def __repr__(self) -> str:
        where = "in memory" if self._store is None else f"store={str(self._store.path)!r}"
        units = f", {self.n_units} units" if self.n_units else ""
        return f"PrivacyLedger({self.dataset!r}, {where}, {len(self)} runs{units}, budget={self.budget})"

    def __copy__(self) -> PrivacyLedger:
        return self

    def __deepcopy__(self, memo: dict) -> PrivacyLedger:
        return self

    def __reduce__(self):
        with self._lock:
            if self._store is not None:  # the streaming state stays in this process
                state = {"dataset": self.dataset, "store": self._store}  # its path and identity (LedgerStore)
            else:
                state = {"dataset": self.dataset, "store": None, "state": self._state, "secret": self._secret,
                         "sessions": dict(self._sessions), "home": self._home}
        return (_restore_ledger, (self.ledger_id, state))

    # -- where it can be charged -------------------------------------------------------------

    @property
    def reachable(self) -> bool:
        """Whether a run charged here reaches the dataset's ledger: always for a stored ledger;
        for an in-memory one only in the process that made it, on the object itself (not a
        copy unpickled elsewhere, nor a forked child's inherited object)."""
        return self._store is not None or (not self._snapshot and self._home == process_id())

    def require_here(self, what: str = "this run") -> None:
        """Refuse (before any private row is read) a run that could not reach this ledger.

        Parameters
        ----------
        what : str
            How to name the run in the refusal.

        Raises
        ------
        LedgerUnreachable
            On a copy of an in-memory ledger (:attr:`reachable` is False).
        """
        if not self.reachable:
            raise LedgerUnreachable(
                f"{what} cannot be charged: its ledger ({self.dataset!r}) lives in the memory of another process "
                "(this is a copy of it: a worker of scikit-learn's n_jobs, a Dask worker, an unpickled copy "
                "elsewhere), which would never see the charge. Nothing was run. Give it a ledger store, "
                "PrivacyLedger(\"name\", store=path), whose charges reach the same file from every process, or run "
                "it in the process that holds the ledger (n_jobs=1).")

    # -- the state -------------------------------------------------------------------------

    def _read(self) -> LedgerState:
        if self._store is None:
            return self._state
        return self._store.read(self.dataset)

    def _keys(self, units: Any, secret) -> np.ndarray | None:
        """The units' keys for a look (nothing created): a store that never kept units has
        no secret yet, and then no unit has an account (any fresh secret finds none)."""
        if units is None:
            return None
        return unit_keys(units, secret=secret(False) or secrets.token_bytes(32), dataset=self.dataset)

    def _write_keys(self, units: Any) -> np.ndarray | None:
        """The units' keys for a charge, hashed before the store's write transaction begins
        (a million IDs take a second or more: other writers need not wait for it)."""
        if units is None:
            return None
        secret = self._secret if self._store is None else self._store.units_secret()
        return unit_keys(units, secret=secret, dataset=self.dataset)

    def _change(self, fn):
        """Apply ``fn(state, secret) -> (new_state, result)`` atomically; return the result."""
        self.require_here("a change to this ledger")
        if self._store is None:
            with self._lock:
                new, result = fn(self._state, lambda create: self._secret)
                self._state = new
                return result
        with self._lock:
            return self._store.update(self.dataset, fn)

    def _look(self, fn):
        """``fn(state, secret)`` on the current state, writing nothing."""
        if self._store is None:
            with self._lock:
                return fn(self._state, lambda create: self._secret)
        return self._store.look(self.dataset, fn)

    # -- reading ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._read().runs)

    @property
    def entries(self) -> tuple:
        """The recorded runs' entries, oldest first.

        Returns
        -------
        tuple of LedgerEntry
        """
        return self._read().entries

    @property
    def budget(self) -> Budget | None:
        """The total budget, or None.

        Returns
        -------
        Budget or None
        """
        return self._read().budget

    @property
    def n_units(self) -> int:
        """Number of distinct privacy units charged by ID so far (0 when every run read the whole dataset)."""
        return self._read().classes.n_units

    def set_budget(self, *, epsilon: float | None, delta: float | None = None) -> None:
        """Set (or with ``epsilon=None`` clear) the total budget.

        A budget below what is already spent is allowed; every later charge is then
        refused.

        Parameters
        ----------
        epsilon : float or None
            Total ε of the budget; ``None`` clears the budget.
        delta : float, optional
            Total δ of the budget (``None``: 0).
        """
        budget = None if epsilon is None else Budget(epsilon, delta if delta is not None else 0.0)

        def change(state, secret):
            if state.budget == budget:
                return state, None
            return LedgerState(state.runs, state.kinds, state.kind_index, state.common, state.classes, budget), None

        self._change(change)

    def total(self, *, delta: float | None = None, units: Any = None) -> LedgerTotal:
        """The composition of every recorded run: the largest privacy unit's (docs/design.md §9).

        Parameters
        ----------
        delta : float, optional
            Total δ at which to report the composition; None: at the budget's δ when a
            budget of δ > 0 is set (the smaller valid ε, :func:`core.ledger.state.quoted`:
            every interface quotes a total this one way), else at the runs' own δs.
        units : 1-D array-like, optional
            Only these units (their IDs): the largest of their totals.  Units never
            charged by ID have spent what the whole-data runs spent.

        Returns
        -------
        LedgerTotal
        """
        from core.ledger.state import quoted

        def at(state, keys):
            if delta is not None:
                return state.total(delta=delta, keys=keys)
            return quoted(lambda d: state.total(delta=d, keys=keys), state.budget)

        def look(state, secret):
            return at(state, self._keys(units, secret))

        if units is None:
            return at(self._read(), None)
        return self._look(look)

    def total_with(self, entry: LedgerEntry | Sequence[LedgerEntry], *, delta: float | None = None,
                   units: Any = None) -> LedgerTotal:
        """The total if ``entry`` were recorded too (nothing is recorded).

        Parameters
        ----------
        entry : LedgerEntry or sequence of LedgerEntry
            A planned run's privacy map (or several runs planned together, each reading
            the same units).
        delta : float, optional
            As for :meth:`total`.
        units : 1-D array-like, optional
            The privacy-unit IDs of the rows the run reads (None: the whole dataset).

        Returns
        -------
        LedgerTotal
        """
        entries = _entries_of(entry)

        from core.ledger.state import quoted

        def look(state, secret):
            after = state.after_all(entries, self._keys(units, secret))
            if delta is not None:
                return after.total(delta=delta)
            return quoted(lambda d: after.total(delta=d), state.budget)

        return self._look(look)

    def check(self, entry: LedgerEntry | Sequence[LedgerEntry], *, units: Any = None) -> LedgerTotal:
        """Check, before a run, that its a-priori privacy map fits in the budget (records nothing).

        Every privacy unit the run reads must stay within the budget by some valid
        composition (its own-δ total, or its total at the budget's δ).

        Parameters
        ----------
        entry : LedgerEntry or sequence of LedgerEntry
            The planned run's privacy map (e.g. :func:`core.ledger.planned_entry`), or
            several runs planned together, each reading the same units.
        units : 1-D array-like, optional
            The privacy-unit IDs of the rows the run reads (any hashable values, repeats
            allowed); None: the run reads the whole dataset.

        Returns
        -------
        LedgerTotal
            The total including the run, over the units it reads.

        Raises
        ------
        BudgetExhausted
            When a unit the run reads would pass the budget.
        """
        entries = _entries_of(entry)

        def look(state, secret):
            return self._admit(state, entries, self._keys(units, secret))[1]

        return self._look(look)

    def _admit(self, state: LedgerState, entries: list, keys: np.ndarray | None) -> tuple[LedgerState, LedgerTotal]:
        """The budget check of :meth:`check` and :meth:`charge`: the state after ``entries``
        (each reading the units ``keys``; None: the whole dataset) and the total they report,
        or :class:`BudgetExhausted`.  :meth:`LedgerState.check` here; a subclass may accept
        a run by another valid composition of the same runs (never by reading a value)."""
        return state.check(entries, keys, what=entries[0].mechanism)

    def charge(self, entry: LedgerEntry | Sequence[LedgerEntry], *, units: Any = None) -> LedgerTotal:
        """Check ``entry`` against the budget and record it, in one transaction.

        Call it **before** the run with the run's a-priori privacy map; on refusal
        (:class:`BudgetExhausted`) nothing is recorded and the run must not happen.  On a
        stored ledger the charge is committed to the store when this returns.

        Parameters
        ----------
        entry : LedgerEntry or sequence of LedgerEntry
            The run's a-priori privacy map (or several runs charged together).
        units : 1-D array-like, optional
            As for :meth:`check`.

        Returns
        -------
        LedgerTotal
            As :meth:`check`.
        """
        entries = _entries_of(entry)
        keys = self._write_keys(units)

        def change(state, secret):
            if keys is not None:
                secret(True)  # the secret the keys were made with is still the store's
            return state.check(entries, keys, what=entries[0].mechanism)

        return self._change(change)

    def record(self, entry: LedgerEntry, *, units: Any = None) -> LedgerTotal:
        """Record a run that has happened, without a budget check (it was spent anyway).

        Parameters
        ----------
        entry : LedgerEntry
            The run's privacy map.
        units : 1-D array-like, optional
            The privacy-unit IDs of the rows it read (None: the whole dataset).

        Returns
        -------
        LedgerTotal
            The total of every recorded run, this one included.
        """
        entries = _entries_of(entry)
        keys = self._write_keys(units)

        def change(state, secret):
            if keys is not None:
                secret(True)
            new = state.after_all(entries, keys)
            return new, new

        return self._change(change).total()

    def extend(self, entries: Iterable[LedgerEntry]) -> None:
        """Record several runs on the whole dataset (no budget check).

        Parameters
        ----------
        entries : iterable of LedgerEntry
        """
        for e in entries:
            self.record(e)

    # -- streaming state (estimators) ---------------------------------------------------------

    def open_session(self, session: Any) -> str:
        """Keep a streaming run's state (e.g. a sparse vector's rounds) here; returns its key.

        Parameters
        ----------
        session : object
            The run's state (:func:`core.pipeline.session`).

        Returns
        -------
        str
            The key for :meth:`session`.
        """
        self.require_here("a new run")
        with self._lock:
            key = uuid.uuid4().hex
            self._sessions[key] = session
            self._session_homes[key] = process_id()
            return key

    def local_session(self, key: str) -> Any:
        """The streaming state kept under ``key`` in this process, for answering; None when
        it is not kept here (a stored ledger's run opened in another process, or opened in
        the parent of a forked child: the child holds a copy of its state, and answering
        from that copy would spend the run's budget once more, uncharged).

        Raises
        ------
        LedgerUnreachable
            On a copy of an in-memory ledger: its state is a snapshot, and answering from
            it would spend a budget the original does not see.
        """
        self.require_here("answering a query")
        with self._lock:
            if self._session_homes.get(key) != process_id():  # a forked child's inherited copy of the run's
                return None                                   # state: answering from it would spend it twice
            return self._sessions.get(key)

    def session(self, key: str) -> Any:
        """The streaming state kept under ``key`` (:meth:`open_session`).

        Raises
        ------
        ParameterError
            When this ledger keeps no such state.
        """
        with self._lock:
            try:
                return self._sessions[key]
            except KeyError:
                raise ParameterError("this ledger keeps no such session in this process; fit the estimator again.") from None


    # -- a part of the dataset -----------------------------------------------------------------

    def part(self, units: Any) -> LedgerPart:
        """This ledger, charging every run to the privacy units ``units`` unless told otherwise.

        For a caller whose runs all read one part of the dataset (the app's training part of
        a table split by person): its charges, checks and planned totals name these units
        (:meth:`charge` with ``units=``), while its totals, budget and runs stay the
        dataset's.  The IDs stay in memory, in the returned object only.

        Parameters
        ----------
        units : 1-D array-like
            The privacy-unit IDs of the part's rows (repeats allowed).

        Returns
        -------
        LedgerPart
        """
        return LedgerPart(self, units)


class LedgerPart:
    """A :class:`PrivacyLedger` whose runs read one part of its dataset (:meth:`PrivacyLedger.part`).

    ``charge``, ``check``, ``total_with`` and ``record`` default to the part's units;
    everything else (``total``, ``budget``, ``set_budget``, ``entries``, ``len``, the
    streaming state) is the dataset's ledger's.  Never pickled with its IDs: a pickled part
    comes back as its ledger (every later run then reads the whole dataset: over-counted,
    never under-counted).
    """

    def __init__(self, ledger: PrivacyLedger, units: Any) -> None:
        if units is None:
            raise ParameterError("a ledger's part needs the privacy-unit IDs of its rows.")
        self.ledger = ledger
        self._units = units

    def _units_or(self, units: Any) -> Any:
        return self._units if units is None else units

    def charge(self, entry: LedgerEntry | Sequence[LedgerEntry], *, units: Any = None) -> LedgerTotal:
        """:meth:`PrivacyLedger.charge` on the part's units (or on ``units``)."""
        return self.ledger.charge(entry, units=self._units_or(units))

    def check(self, entry: LedgerEntry | Sequence[LedgerEntry], *, units: Any = None) -> LedgerTotal:
        """:meth:`PrivacyLedger.check` on the part's units (or on ``units``)."""
        return self.ledger.check(entry, units=self._units_or(units))

    def total_with(self, entry: LedgerEntry | Sequence[LedgerEntry], *, delta: float | None = None,
                   units: Any = None) -> LedgerTotal:
        """:meth:`PrivacyLedger.total_with` on the part's units (or on ``units``): the dataset's total then."""
        return self.ledger.total_with(entry, delta=delta, units=self._units_or(units))

    def record(self, entry: LedgerEntry, *, units: Any = None) -> LedgerTotal:
        """:meth:`PrivacyLedger.record` on the part's units (or on ``units``)."""
        return self.ledger.record(entry, units=self._units_or(units))

    def __len__(self) -> int:
        return len(self.ledger)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("ledger", "_units"):
            raise AttributeError(name)
        return getattr(self.ledger, name)

    def __reduce__(self):
        return (_identity, (self.ledger,))

    def __repr__(self) -> str:
        return f"{self.ledger!r}.part(...)"


def _identity(x: Any) -> Any:
    return x


# -- one object per ledger in a process ------------------------------------------------------

_PROCESS_TOKEN = uuid.uuid4().hex


def process_id() -> str:
    """This process's identity: a random token drawn at import with the process ID (a
    forked child inherits the token but not the ID; a spawned one draws its own token).

    Returns
    -------
    str
    """
    return f"{_PROCESS_TOKEN}-{os.getpid()}"


_LIVE: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_LIVE_LOCK = threading.Lock()


def _restore_ledger(ledger_id: str, state: dict) -> PrivacyLedger:
    """Unpickle a ledger: the live one with this id in this process, else a reference to the
    same store and dataset (a stored ledger) or a copy of its state (an in-memory one)."""
    with _LIVE_LOCK:
        led = _LIVE.get(ledger_id)
    if led is not None:
        return led
    led = PrivacyLedger(state["dataset"], store=state["store"])
    with _LIVE_LOCK:
        existing = _LIVE.get(ledger_id)
        if existing is not None:
            return existing
        del _LIVE[led.ledger_id]
        led.ledger_id = ledger_id
        _LIVE[ledger_id] = led
    if state["store"] is None:  # a snapshot of a ledger that lives elsewhere: read-only (require_here)
        led._state = state["state"]
        led._secret = state["secret"]
        led._sessions.update(state["sessions"])
        led._home = state["home"]
        led._snapshot = True
    return led


# -- the process's default ledger --------------------------------------------------------------

_DEFAULT_LOCK = threading.Lock()


def default_ledger() -> PrivacyLedger:
    """The process's in-memory ledger (the estimator's when it is given none).

    Every run charged to it without units counts against all of it; set a budget with
    :meth:`PrivacyLedger.set_budget`, or give the estimator a named, stored ledger.

    Returns
    -------
    PrivacyLedger
    """
    with _DEFAULT_LOCK:
        return _DEFAULT


def forget_ledgers() -> None:
    """Start the process's default ledger again (tests; a new session)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        _DEFAULT = PrivacyLedger("ledger of this process")


# Made at import, not on first use: a child forked later inherits this object, whose home is
# the parent, so a fit there with ledger=None is refused (LedgerUnreachable) instead of being
# charged to a fresh ledger of the child that the parent never sees.
_DEFAULT: PrivacyLedger = PrivacyLedger("ledger of this process")
