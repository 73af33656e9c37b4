"""Privacy ledger: one per private dataset, composing every run on it (docs/design.md §9).

Every labeling run on the same private data spends privacy budget, including runs that
are only looked at.  A :class:`PrivacyLedger` records each run's guarantee as a
*privacy map* and composes them into one (ε, δ) for the dataset; a budget can be set,
and a run whose a-priori privacy map would take the composition past it is refused
**before** it runs (:meth:`PrivacyLedger.charge` raises
:class:`core.errors.BudgetExhausted`).

Privacy maps (entry kinds)
--------------------------
:class:`PureDPEntry`
    Adaptive pure-DP steps ``((eps_step, n_steps), ...)`` (possibly of several sizes),
    a composition slack ``delta_composition`` (the δ at which this run's own guarantee
    converts its steps) and an additive ``delta_additive``.  BTT: ``T`` rounds of
    ``2/λ`` plus ``δ_release``; LNMax: ``m`` steps of ``2γ``; A_stab / the composition
    baseline: ``m`` steps of ``ε0`` plus ``m·δ0``.
:class:`RDPEntry`
    A Rényi curve ``(orders, rho)``, a conversion δ ``delta_conversion`` and an
    additive δ.  Gaussian mechanisms; a Rényi-filter run records its budget ``ρ*`` at
    its single order (``+inf`` elsewhere, see :meth:`RDPEntry.filter`).
:class:`ApproxDPEntry`
    An (ε, δ) only (e.g. a certified propose–test–release run).

Composition rules (:meth:`PrivacyLedger.total`)
-----------------------------------------------
Entries are split into three groups by kind; each group is composed as tightly as its
kind allows, then the groups by basic composition.

* **Pure group.**  All steps of all pure entries form one adaptive sequence of pure
  ε_j-DP steps.  Equal steps (one distinct ``eps_step``): the optimal composition in
  closed form (Kairouz–Oh–Viswanath, :func:`core.accounting.exact_composition_epsilon`);
  heterogeneous steps: the optimal composition computed by dp-accounting's
  privacy-loss distribution (PLD) with pessimistic discretization.  Either is taken only
  when smaller than basic composition ``Σ n_j ε_j`` (which needs no slack).  The
  group's δ is its slack (when used) plus the sum of the entries' additive δs.
* **RDP group.**  Curves are added order by order on the union of the entries'
  orders (an order an entry lacks is filled with its value at the next larger order
  it has, ``+inf`` if none: Rényi divergence is non-decreasing in the order), then
  converted with ``dp_accounting.rdp.rdp_privacy_accountant.compute_epsilon`` at the
  group's slack.  δ: slack plus additive δs.
* **Approximate group.**  Basic composition: ``Σ ε_i``, ``Σ δ_i``.
* **Groups.**  Basic composition of the groups' (ε, δ).  δ is capped at 1.

δ split rule
    ``total()`` (no δ given): every entry keeps its own δ target; a group's slack is
    the **sum** of its entries' slacks (``delta_composition`` / ``delta_conversion``).
    A ledger holding one run therefore reproduces that run's own guarantee (or a
    smaller ε where the ledger's composition is tighter).  Since the summed slack is
    larger than any one run's, the composed ε can come out below a single run's own ε
    (at a larger δ); the total's ε is then raised to the largest single-run ε, so the
    total is never below any run it contains in either coordinate (valid: a larger ε
    at the same δ is a weaker guarantee).  ``total(delta=δ)``: the
    additive δs and the approximate entries' δs are taken off δ first; what remains is
    split **equally** between the non-empty pure and RDP groups and used as their
    slack, so the returned δ is at most the δ asked for.

Why the composition is valid (proof sketch)
-------------------------------------------
1. An (ε0, δ0)-DP step (in particular a pure step with an additive δ) composes like a
   pure ε0-DP step plus δ0: the optimal adaptive composition of (ε_j, δ_j)-DP steps is
   ``(ε, 1 − (1 − δ_pure(ε)) Π(1 − δ_j))`` ≤ ``(ε, δ_pure(ε) + Σ δ_j)``, where
   ``δ_pure(ε)`` is the optimal composition of the pure ε_j-DP steps, whose worst case
   is (a product of) randomized responses (Kairouz–Oh–Viswanath 2015, Thm 3.3 for
   equal steps; Murtagh–Vadhan 2016 for heterogeneous ones).  dp-accounting's PLD of
   randomized response, composed with pessimistic discretization, upper-bounds
   ``δ_pure``; the closed form computes it exactly.  BTT's δ_release is the probability
   of the only event on which a run's output is not a post-processing of its pure
   sparse-vector rounds, and composes the same way (union bound over the runs' bad
   events).
2. RDP composes additively order by order under adaptive composition (Mironov 2017,
   Prop. 1), and ``compute_epsilon`` is a valid RDP → (ε, δ) conversion (Balle et al.
   2020, Prop. 12).  Rényi divergence is non-decreasing in the order, which justifies
   the monotone fill of missing orders.
3. The three groups are composed by basic composition, ``(Σ ε_g, Σ δ_g)`` (Dwork–Roth
   2014, Thm 3.16).  Runs of different groups interleave in time (a pure run, then an
   RDP run, then a pure run chosen after seeing both): each group is then one
   interactive mechanism whose queries may depend on the other groups' outputs, and the
   concurrent-composition theorems (Vadhan–Wang 2021 for (ε, δ)-DP; Lyu 2022 and
   Vadhan–Zhang 2023 for RDP and f-DP) show that each group's bound still holds against
   such adaptivity and that the groups' (ε, δ) guarantees add.
4. Any slack δ gives a valid (ε(δ), δ) for a group, so the choice of slack (the sum
   rule, the equal split) is a parametrization, not an assumption; raising ε at a
   fixed δ (the floor) only weakens a valid guarantee.

The budget check accepts a run when some valid composition including it (the own-δ
total, or the total at the budget's δ) is within the budget up to a relative rounding
tolerance of 1e-9 (a run calibrated to spend exactly the rest of the budget is
accepted).

Persistence
-----------
JSON, strict (no NaN / Infinity: an infinite Rényi value is written as ``null``).  A
ledger file holds several ledgers keyed by dataset fingerprint::

    {"format": "private-label-lab-ledger", "version": 1,
     "ledgers": {"<fingerprint>": {"fingerprint": ..., "budget": {...} | null,
                                   "entries": [...]}}}

The file holds no private value: fingerprints, public parameters and guarantees only
(:func:`entry_from_result` drops any parameter whose name says it is data-dependent).

References
----------
.. [KOV15] P. Kairouz, S. Oh, P. Viswanath, "The composition theorem for differential
   privacy", ICML 2015.
.. [MV16] J. Murtagh, S. Vadhan, "The complexity of computing the optimal composition
   of differential privacy", TCC 2016.
.. [M17] I. Mironov, "Rényi differential privacy", CSF 2017.
.. [BBGHS20] B. Balle, G. Barthe, M. Gaboardi, J. Hsu, T. Sato, "Hypothesis testing
   interpretations and Rényi differential privacy", AISTATS 2020.
.. [PS22] N. Papernot, T. Steinke, "Hyperparameter tuning with Rényi differential
   privacy", ICLR 2022.
.. [DR14] C. Dwork, A. Roth, "The algorithmic foundations of differential privacy",
   2014 (basic composition, Thm 3.16).
.. [VW21] S. Vadhan, T. Wang, "Concurrent composition of differential privacy", TCC 2021.
.. [L22] X. Lyu, "Composition theorems for interactive differential privacy",
   NeurIPS 2022.
.. [VZ23] S. Vadhan, W. Zhang, "Concurrent composition theorems for differential
   privacy", STOC 2023.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import threading
import uuid
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.accounting.guarantee import PrivacyGuarantee
from core.errors import BudgetExhausted, DataError, ParameterError
from core.accounting.ledger_compose import LedgerTotal, compose_entries
from core.accounting.ledger_entries import ApproxDPEntry, LedgerEntry, PureDPEntry, RDPEntry, delta_value, nonnegative_value, entry_from_dict
from core.accounting.ledger_files import FILE_FORMAT, FILE_VERSION, _file_lock, _read_file, _write_file
from core.accounting.ledger_rows import RowIndex, histories, worst_total

__all__ = [
    "BUDGET_TOLERANCE",
    "FILE_FORMAT",
    "FILE_VERSION",
    "Budget",
    "PrivacyLedger",
    "append_to_file",
    "load",
    "load_ledgers",
]

BUDGET_TOLERANCE = 1e-9
"""Relative rounding tolerance of the budget check."""


# ---------------------------------------------------------------------------
# The ledger
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Budget:
    """A total privacy budget (ε, δ) for one dataset."""

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        e = nonnegative_value(self.epsilon, "budget epsilon")
        d = delta_value(self.delta, "budget delta")
        object.__setattr__(self, "epsilon", e)
        object.__setattr__(self, "delta", d)


def _within(total: PrivacyGuarantee, budget: Budget) -> bool:
    tol = 1.0 + BUDGET_TOLERANCE
    return total.epsilon <= budget.epsilon * tol + 1e-15 and total.delta <= budget.delta * tol + 1e-300


class PrivacyLedger:
    """The privacy ledger of private data, per row (docs/design.md §9, §13).

    A run is charged either to every row of the data (``rows=None``: the dataset-level
    ledger of one file, keyed by its :func:`dataset_fingerprint`), or to the rows it
    touched (``rows=`` their :func:`core.accounting.row_fingerprints`): each row's own
    spending is then the composition of every run that touched it, and the data's
    guarantee (:meth:`total`) is the largest row's.  Cross-validation folds, refits on
    subsets, reordered copies and DataFrame/array twins of the same rows are therefore
    counted right, on one ledger.

    The ledger also keeps the state that bounds a streaming run's budget
    (:meth:`open_session`): an estimator holds only a key, so a copy of the estimator
    cannot restart spending.  A ledger is never copied: ``copy.copy``/``copy.deepcopy``
    (hence scikit-learn's ``clone``) return the ledger itself, and a pickled ledger comes
    back as the same object in the process that holds it (elsewhere, as a copy of its
    state at pickling time).

    Thread-safe: every method holds the ledger's lock.

    Parameters
    ----------
    fingerprint : str, default "per-row"
        :func:`dataset_fingerprint` of the private data, or any name for a per-row ledger.
    budget_epsilon, budget_delta : float, optional (keyword-only)
        A total budget (for every row); both or neither.
    entries : iterable of entries, optional (keyword-only)
        Runs charged to every row.
    """

    def __init__(self, fingerprint: str = "per-row", *, budget_epsilon: float | None = None, budget_delta: float | None = None,
                 entries: Iterable[LedgerEntry] = ()) -> None:
        if not isinstance(fingerprint, str) or not fingerprint:
            raise ParameterError("a ledger needs the dataset's fingerprint (a non-empty string from dataset_fingerprint).")
        self.fingerprint = fingerprint
        self.ledger_id = uuid.uuid4().hex
        self._lock = threading.RLock()
        self._entries: list[LedgerEntry] = []
        self._entry_rows: list = []
        self._rows = RowIndex()
        self._sessions: dict[str, Any] = {}
        self._budget: Budget | None = None
        with _LIVE_LOCK:
            _LIVE[self.ledger_id] = self
        if (budget_epsilon is None) != (budget_delta is None):
            raise ParameterError("a budget needs both epsilon and delta.")
        if budget_epsilon is not None:
            self._budget = Budget(budget_epsilon, budget_delta)
        for e in entries:
            self.record(e)

    def __repr__(self) -> str:
        rows = f", {len(self._rows)} rows" if len(self._rows) else ""
        return f"PrivacyLedger({self.fingerprint[:19]}..., {len(self)} runs{rows}, budget={self._budget})"

    # -- one ledger, never copied -------------------------------------------

    def __copy__(self) -> PrivacyLedger:
        return self

    def __deepcopy__(self, memo: dict) -> PrivacyLedger:
        return self

    def __reduce__(self):
        with self._lock:
            state = {"fingerprint": self.fingerprint, "budget": self._budget, "entries": list(self._entries),
                     "entry_rows": list(self._entry_rows), "rows": self._rows.fingerprints,
                     "sessions": dict(self._sessions)}
        return (_restore_ledger, (self.ledger_id, state))

    # -- per-row accounting ---------------------------------------------------

    @property
    def n_rows(self) -> int:
        """Number of distinct private rows charged by row (0 for a dataset-level ledger)."""
        with self._lock:
            return len(self._rows)

    def _histories(self, extra: LedgerEntry | None = None, rows=None, *, touched_only: bool = False) -> list[list]:
        entries, entry_rows = list(self._entries), list(self._entry_rows)
        idx = None
        n = len(self._rows)
        if extra is not None:
            idx = None if rows is None else self._rows.lookup(rows, add=False)
            if idx is not None and idx.size:
                n = max(n, int(idx.max()) + 1)
            entries.append(extra)
            entry_rows.append(idx)
        only = idx if (touched_only and idx is not None) else None
        return histories(entries, entry_rows, n, only)

    def rows_total(self, rows, *, delta: float | None = None) -> LedgerTotal:
        """The guarantee of the given rows: the largest of their own totals.

        Parameters
        ----------
        rows : sequence of str
            Row fingerprints (:func:`core.accounting.row_fingerprints`); rows never
            charged have spent only what was charged to every row.
        delta : float, optional
            As for :meth:`total`.

        Returns
        -------
        LedgerTotal
        """
        with self._lock:
            idx = self._rows.lookup(rows, add=False)
            entries, entry_rows = list(self._entries), list(self._entry_rows)
            n = max(len(self._rows), int(idx.max()) + 1 if idx.size else 0)
            return worst_total(histories(entries, entry_rows, n, idx), delta=delta)

    # -- streaming state (estimators) ---------------------------------------

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
        with self._lock:
            key = uuid.uuid4().hex
            self._sessions[key] = session
            return key

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
                raise ParameterError("this ledger keeps no such session; fit the estimator again.") from None

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    @property
    def entries(self) -> tuple:
        """The recorded runs, oldest first (a copy).

        Returns
        -------
        tuple of LedgerEntry
        """
        with self._lock:
            return tuple(self._entries)

    @property
    def budget(self) -> Budget | None:
        """The total budget, or None.

        Returns
        -------
        Budget or None
        """
        with self._lock:
            return self._budget

    def set_budget(self, *, epsilon: float | None, delta: float | None = None) -> None:
        """Set (or with ``epsilon=None`` clear) the total budget.

        A budget below what is already spent is allowed; every later charge is refused.

        Parameters
        ----------
        epsilon : float or None
            Total ε of the budget; ``None`` clears the budget.
        delta : float, optional
            Total δ of the budget (``None``: 0).
        """
        with self._lock:
            self._budget = None if epsilon is None else Budget(epsilon, delta if delta is not None else 0.0)

    def total(self, *, delta: float | None = None) -> LedgerTotal:
        """The composition of every recorded run (rules and δ split: module docstring).

        Parameters
        ----------
        delta : float, optional
            Total δ at which to report the composition; ``None`` uses the entries' own δ
            (module docstring).

        Returns
        -------
        LedgerTotal
            The composed (ε, δ) of all recorded runs.

        References
        ----------
        P. Kairouz, S. Oh, P. Viswanath, "The Composition Theorem for Differential Privacy", ICML 2015.
        I. Mironov, "Rényi Differential Privacy", IEEE CSF 2017.
        B. Balle, G. Barthe, M. Gaboardi, J. Hsu, T. Sato, "Hypothesis Testing
        Interpretations and Rényi Differential Privacy", AISTATS 2020.
        docs/design.md §9.
        """
        with self._lock:
            if not len(self._rows):
                return compose_entries(self._entries, delta=delta)
            return worst_total(self._histories(), delta=delta)

    def total_with(self, entry: LedgerEntry, *, delta: float | None = None, rows=None) -> LedgerTotal:
        """The total if ``entry`` were recorded too (nothing is recorded).

        Parameters
        ----------
        entry : LedgerEntry
            The hypothetical run's privacy map.
        delta : float, optional
            Total δ at which to report the composition; ``None`` uses the entries' own δ
            (module docstring).

        Returns
        -------
        LedgerTotal
            The composed (ε, δ) of the recorded runs and ``entry``.

        References
        ----------
        P. Kairouz, S. Oh, P. Viswanath, "The Composition Theorem for Differential Privacy", ICML 2015.
        I. Mironov, "Rényi Differential Privacy", IEEE CSF 2017.
        B. Balle, G. Barthe, M. Gaboardi, J. Hsu, T. Sato, "Hypothesis Testing
        Interpretations and Rényi Differential Privacy", AISTATS 2020.
        docs/design.md §9.
        """
        with self._lock:
            if not len(self._rows) and rows is None:
                return compose_entries(self._entries + [entry], delta=delta)
            return worst_total(self._histories(entry, rows), delta=delta)

    def _best_total(self, entries: list) -> LedgerTotal:
        candidates = [compose_entries(entries)]
        if self._budget is not None and self._budget.delta > 0:
            with contextlib.suppress(ParameterError):
                candidates.append(compose_entries(entries, delta=self._budget.delta))
        inside = [c for c in candidates if self._budget is None or _within(c, self._budget)]
        return min(inside or candidates, key=lambda c: (c.epsilon, c.delta))

    def check(self, entry: LedgerEntry, *, rows=None) -> LedgerTotal:
        """Check, before a run, that its a-priori privacy map fits in the budget.

        Returns the total including the run (the smaller of the own-δ total and the
        total at the budget's δ).  Records nothing.

        Parameters
        ----------
        entry : LedgerEntry
            The planned run's a-priori privacy map (e.g. from :func:`planned_entry`).
        rows : sequence of str, optional
            The fingerprints of the rows the run touches (every row when None); each
            touched row must stay within the budget.

        Returns
        -------
        LedgerTotal
            The total including the run (of the touched rows' largest).

        Raises
        ------
        BudgetExhausted
            When no valid composition including the run is within the budget.

        References
        ----------
        P. Kairouz, S. Oh, P. Viswanath, "The Composition Theorem for Differential Privacy", ICML 2015.
        I. Mironov, "Rényi Differential Privacy", IEEE CSF 2017.
        B. Balle, G. Barthe, M. Gaboardi, J. Hsu, T. Sato, "Hypothesis Testing
        Interpretations and Rényi Differential Privacy", AISTATS 2020.
        docs/design.md §9.
        """
        with self._lock:
            lists = self._histories(entry, rows, touched_only=True)
            bests = [self._best_total(lst) for lst in lists]
            b = self._budget
            total = bests[0] if len(bests) == 1 else worst_total(lists)
            over = [i for i, t in enumerate(bests) if b is not None and not _within(t, b)]
            if not over and len(bests) > 1:
                total = dataclasses.replace(total, epsilon=max(t.epsilon for t in bests),
                                            delta=max(t.delta for t in bests))
            if over:
                worst = lists[over[0]]
                total = bests[over[0]]
                spent = compose_entries(worst[:-1])
                own = compose_entries([entry])
                n_before = len(worst) - 1
                raise BudgetExhausted(
                    f"Privacy budget exhausted for this {'dataset' if rows is None else 'row'}: the {n_before} run(s) recorded so far spent "
                    f"(ε = {spent.epsilon:.4g}, δ = {spent.delta:.3g}); this {entry.mechanism} run would cost "
                    f"(ε = {own.epsilon:.4g}, δ = {own.delta:.3g}) on its own, bringing the total to "
                    f"(ε = {total.epsilon:.4g}, δ = {total.delta:.3g}), over the budget "
                    f"(ε = {b.epsilon:.4g}, δ = {b.delta:.3g}). The run was not started: lower its ε, its number of "
                    f"queries or rounds, or label with fresh private data (raising the budget weakens the promised guarantee).")
            return total

    def charge(self, entry: LedgerEntry, *, rows=None) -> LedgerTotal:
        """Check ``entry`` against the budget and record it, atomically.

        Call it before the run with the run's a-priori privacy map; on refusal
        (:class:`BudgetExhausted`) nothing is recorded and the run must not happen.

        Parameters
        ----------
        entry : LedgerEntry
            The run's a-priori privacy map.
        rows : sequence of str, optional
            The fingerprints of the rows the run touches (every row when None).

        Returns
        -------
        LedgerTotal
            The total including the run (as :meth:`check`).
        """
        with self._lock:
            total = self.check(entry, rows=rows)
            self._append(entry, rows)
            return total

    def _append(self, entry: LedgerEntry, rows) -> None:
        self._entries.append(entry)
        self._entry_rows.append(None if rows is None else self._rows.lookup(rows, add=True))

    def record(self, entry: LedgerEntry, *, rows=None) -> LedgerTotal:
        """Record a run that has happened, without a budget check (it was spent anyway).

        Parameters
        ----------
        entry : PureDPEntry, RDPEntry or ApproxDPEntry
            The run's privacy map.
        rows : sequence of str, optional
            The fingerprints of the rows the run touched (every row when None).

        Returns
        -------
        LedgerTotal
            The composition of every recorded run, this one included.
        """
        if not isinstance(entry, (PureDPEntry, RDPEntry, ApproxDPEntry)):
            raise ParameterError(f"a ledger entry must be a PureDPEntry, RDPEntry or ApproxDPEntry, got {type(entry).__name__}.")
        with self._lock:
            self._append(entry, rows)
            return self.total()

    def extend(self, entries: Iterable[LedgerEntry]) -> None:
        """Record several runs (no budget check).

        Parameters
        ----------
        entries : iterable of LedgerEntry
            The runs' privacy maps, recorded in order.
        """
        with self._lock:
            for e in entries:
                self.record(e)

    # -- persistence -------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """This ledger as a JSON-ready dict (see :meth:`from_dict`).

        Returns
        -------
        dict
            ``{"fingerprint": str, "budget": {"epsilon", "delta"} or None, "entries": [dict, ...]}``.
        """
        with self._lock:
            out = {"fingerprint": self.fingerprint,
                   "budget": None if self._budget is None else {"epsilon": self._budget.epsilon, "delta": self._budget.delta},
                   "entries": [e.to_dict() for e in self._entries]}
            if len(self._rows):  # per-row runs: the rows' fingerprints and which runs touched them
                out["rows"] = self._rows.fingerprints
                out["entry_rows"] = [None if r is None else [int(i) for i in r] for r in self._entry_rows]
            return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PrivacyLedger:
        """Rebuild a ledger from :meth:`to_dict` output.

        Parameters
        ----------
        d : mapping
            A dict with ``fingerprint``, optional ``budget`` and ``entries``.

        Returns
        -------
        PrivacyLedger

        Raises
        ------
        DataError
            If ``d`` is not a privacy ledger.
        """
        try:
            b = d.get("budget")
            led = cls(d["fingerprint"], budget_epsilon=None if b is None else b["epsilon"],
                      budget_delta=None if b is None else b["delta"])
            entries = [entry_from_dict(e) for e in d.get("entries", [])]
            fps = list(d.get("rows") or [])
            entry_rows = d.get("entry_rows") or [None] * len(entries)
            if len(entry_rows) != len(entries):
                raise DataError("not a privacy ledger: entry_rows must have one item per entry.")
            for e, r in zip(entries, entry_rows):
                led.record(e, rows=None if r is None else [fps[int(i)] for i in r])
            return led
        except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:
            raise DataError(f"not a privacy ledger: {exc!r}.") from None

    def to_json(self, *, indent: int | None = 2) -> str:
        """This ledger as strict JSON (see :meth:`from_json`).

        Parameters
        ----------
        indent : int or None, default 2
            Indentation passed to :func:`json.dumps`.

        Returns
        -------
        str
            The JSON text (no NaN or infinity; non-ASCII kept).
        """
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> PrivacyLedger:
        """Rebuild a ledger from :meth:`to_json` text.

        Parameters
        ----------
        text : str
            The JSON text.

        Returns
        -------
        PrivacyLedger

        Raises
        ------
        DataError
            If the text is not valid JSON or not a privacy ledger.
        """
        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(f"the ledger is not valid JSON ({exc.msg} at line {exc.lineno}).") from None
        return cls.from_dict(d)

    def save(self, path: str | os.PathLike) -> None:
        """Write this ledger into the file at ``path``, keeping other datasets' ledgers there.

        Parameters
        ----------
        path : str or os.PathLike
            The ledger file (JSON, one ledger per dataset fingerprint); written atomically
            under a file lock.
        """
        path = Path(path)
        with _file_lock(path):
            ledgers = _read_file(path)
            ledgers[self.fingerprint] = self.to_dict()
            _write_file(path, ledgers)


def load_ledgers(path: str | os.PathLike) -> dict[str, PrivacyLedger]:
    """Every ledger in the file at ``path``, by fingerprint (empty when there is no file).

    Parameters
    ----------
    path : str or os.PathLike
        The ledger file.

    Returns
    -------
    dict of str to PrivacyLedger
        The ledgers keyed by dataset fingerprint.
    """
    path = Path(path)
    with _file_lock(path):
        raw = _read_file(path)
    return {fp: PrivacyLedger.from_dict(d) for fp, d in raw.items()}


def load(path: str | os.PathLike, fingerprint: str) -> PrivacyLedger:
    """The ledger of dataset ``fingerprint`` in the file at ``path`` (empty if absent).

    Parameters
    ----------
    path : str or os.PathLike
        The ledger file.
    fingerprint : str
        The dataset's fingerprint.

    Returns
    -------
    PrivacyLedger
        The stored ledger, or a new empty one.
    """
    return load_ledgers(path).get(fingerprint) or PrivacyLedger(fingerprint)


def append_to_file(path: str | os.PathLike, entry: LedgerEntry, *, fingerprint: str, check_budget: bool = False) -> PrivacyLedger:
    """Add one run to dataset ``fingerprint``'s ledger in the file at ``path``.

    Read, append and write happen under a file lock (safe for concurrent CLI runs); the
    file is replaced atomically.  ``check_budget=True`` charges the entry (refusing with
    :class:`BudgetExhausted` and writing nothing when it would exceed the file's
    budget); the default records it, for a run that already happened.  Returns the
    updated ledger.

    Parameters
    ----------
    path : str or os.PathLike
        The ledger file.
    entry : LedgerEntry
        The run's privacy map.
    fingerprint : str
        The dataset's fingerprint.
    check_budget : bool, default False
        Charge the entry against the stored budget instead of just recording it.

    Returns
    -------
    PrivacyLedger
        The updated ledger of ``fingerprint``.
    """
    path = Path(path)
    with _file_lock(path):
        raw = _read_file(path)
        ledger = PrivacyLedger.from_dict(raw[fingerprint]) if fingerprint in raw else PrivacyLedger(fingerprint)
        (ledger.charge if check_budget else ledger.record)(entry)
        raw[fingerprint] = ledger.to_dict()
        _write_file(path, raw)
    return ledger


# -- process-wide registry ----------------------------------------------------

_LIVE: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_LIVE_LOCK = threading.Lock()


def _restore_ledger(ledger_id: str, state: dict) -> PrivacyLedger:
    """Unpickle a ledger: the live one with this id in this process, else a copy of its state."""
    with _LIVE_LOCK:
        led = _LIVE.get(ledger_id)
    if led is not None:
        return led
    led = PrivacyLedger(state["fingerprint"])
    with _LIVE_LOCK:
        existing = _LIVE.get(ledger_id)
        if existing is not None:
            return existing
        del _LIVE[led.ledger_id]
        led.ledger_id = ledger_id
        _LIVE[ledger_id] = led
    led._budget = state["budget"]
    fps = state["rows"]
    for e, r in zip(state["entries"], state["entry_rows"]):
        led._append(e, None if r is None else [fps[int(i)] for i in r])
    led._sessions.update(state["sessions"])
    return led
