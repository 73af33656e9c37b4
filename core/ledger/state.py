"""What one dataset's ledger holds, and what a run does to it (docs/design.md §9).

:class:`LedgerState` is immutable: the runs recorded (each entry, and whether it read the
whole dataset or the units it names), the distinct privacy maps among them, the count of
whole-data runs per map, the units by class (:class:`core.ledger.classes.UnitClasses`)
and the budget.  :meth:`LedgerState.after` returns the state after a run; the totals and
the budget check read a state and decide nothing else.  The in-memory ledger keeps one
state; the store (:mod:`core.ledger.store`) writes each new state inside the transaction
that checked it.

Nothing here reads a private value: a run's map comes from public parameters, and which
units it reads is declared by the caller (their IDs, already keyed hashes here).

References
----------
.. [KOV15] P. Kairouz, S. Oh, P. Viswanath, "The composition theorem for differential
   privacy", ICML 2015.
.. [M17] I. Mironov, "Rényi differential privacy", CSF 2017.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from core.accounting.guarantee import PrivacyGuarantee
from core.errors import BudgetExhausted, ParameterError
from core.ledger.classes import UnitClasses
from core.ledger.compose import LedgerTotal, alone_upper, compose_counts
from core.ledger.entries import ApproxDPEntry, LedgerEntry, PureDPEntry, RDPEntry, delta_value, map_key, nonnegative_value
from core.ledger.largest import upper_bounds, worst_total

__all__ = ["BUDGET_TOLERANCE", "Budget", "LedgerState", "Run", "quoted"]

BUDGET_TOLERANCE = 1e-9
"""Relative rounding tolerance of the budget check."""


@dataclass(frozen=True)
class Budget:
    """A total privacy budget (ε, δ) for one dataset (for each of its privacy units)."""

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", nonnegative_value(self.epsilon, "budget epsilon"))
        object.__setattr__(self, "delta", delta_value(self.delta, "budget delta"))


def within(total: PrivacyGuarantee, budget: Budget) -> bool:
    """Whether ``total`` fits in ``budget`` (up to the relative tolerance :data:`BUDGET_TOLERANCE`).

    Parameters
    ----------
    total : PrivacyGuarantee
    budget : Budget

    Returns
    -------
    bool
    """
    tol = 1.0 + BUDGET_TOLERANCE
    return total.epsilon <= budget.epsilon * tol + 1e-15 and total.delta <= budget.delta * tol + 1e-300


QUOTE_DIGITS = 4
"""Significant digits of the grid a total composed at the budget's δ is rounded UP to (:func:`quoted`):
the precision every interface shows a total at."""


def _ceil_significant(x: float, digits: int = QUOTE_DIGITS) -> float:
    """The smallest number of ``digits`` significant digits that is at least ``x`` (``x ≥ 0``)."""
    if not np.isfinite(x) or x <= 0:
        return float(x)
    c = float(f"{x:.{digits - 1}e}")  # the nearest such number
    if c < x:  # one step of the last digit up
        exponent = int(np.floor(np.log10(c)))
        c = float(f"{c + 10.0 ** (exponent - digits + 1):.{digits - 1}e}")
    return c


def quoted(compose, budget: Budget | None):
    """A total as every interface quotes it: at the budget's δ (docs/design.md §9.1).

    The ledger knows two valid compositions of the same runs: at the runs' own δs, and at
    the budget's δ (the runs' ε read off at that δ).  A total quoted now one way, now the
    other, reads as if it fell after a paid run, or as if a run cost more than the total it
    brings.  So with a budget of δ > 0 a total is always stated as ``(ε, δ_budget)``, with
    ε the smallest of three upper bounds, each valid at ``δ_budget`` and each growing with
    every run added, so the quote is a valid guarantee and never falls after a run:

    - the own-δ composition, while its δ fits (an ``(ε, δ')``-DP guarantee with
      ``δ' ≤ δ_budget`` is also ``(ε, δ_budget)``-DP; it drops out for good once its δ
      passes, since δ' only grows);
    - the composition at the budget's δ, **rounded up** to :data:`QUOTE_DIGITS` significant
      digits, the precision every interface shows (rounding up keeps it an upper bound, and
      is monotone);
    - the larger of that composition (unrounded) and the budget's ε, so that a total the
      budget check accepted is never quoted above the budget by the rounding.

    Why the rounding: at δ > 0 even ONE pure ε-DP run is ``(ε', δ)``-DP with
    ``ε' = ε + ln(1 − δ(1 + e^{−ε})) < ε`` (the optimal trade of [KOV15]), so the plain
    minimum would quote a single pure run asked at ε = 0.9 under a budget δ of 1e-6 as
    0.8999986 — valid, but it reads as if the run cost less than asked, and a report or
    the library would print those digits.  A trade smaller than the last digit shown is no
    saving worth a number below the pure runs' plain sum: with the rounding up, the sum
    (the own-δ total) is quoted whenever composing at the budget's δ saves less than one
    unit of the fourth significant digit; a real saving (many runs composed, or a large
    budget δ) is still quoted, at most one unit of that digit above the exact composition.
    Rounding down, or to the nearest, could state less than a valid bound; rounding only
    where a number is printed would let the screens, the reports and the library disagree.
    Without a budget (or with δ = 0) the quote is the own-δ composition, exact.

    Parameters
    ----------
    compose : callable
        ``compose(delta) -> LedgerTotal``: the composition at the runs' own δs (``None``)
        or at a total δ (may raise :class:`ParameterError` where that δ is too small).
    budget : Budget or None

    Returns
    -------
    LedgerTotal
    """
    own = compose(None)
    if budget is None or budget.delta <= 0 or own.n_entries == 0:  # nothing spent: (0, 0)
        return own
    tol = 1.0 + BUDGET_TOLERANCE
    options = []  # (ε, the total it is read from, what the quote adds to its words)
    if own.delta <= budget.delta * tol:
        options.append((float(own.epsilon), own, ""))
    with contextlib.suppress(ParameterError):
        at = compose(budget.delta)
        if at.delta <= budget.delta * tol:
            up = _ceil_significant(float(at.epsilon))
            options.append((up, at, f" Quoted as ε = {up:.{QUOTE_DIGITS}g}: rounded up to the "
                                    f"{QUOTE_DIGITS} significant digits every total is shown at."))
            options.append((max(float(at.epsilon), float(budget.epsilon)), at,
                            f" Quoted as ε = {float(budget.epsilon):.{QUOTE_DIGITS}g}, the budget's: rounded up "
                            "to it, not past it."))
    if not options:  # no composition fits the budget's δ: the own-δ total, which says so by its δ
        return own
    epsilon, best, words = min(options, key=lambda o: o[0])
    detail = best.detail + (words if epsilon != float(best.epsilon) else "")
    return dataclasses.replace(best, epsilon=epsilon, delta=float(budget.delta), detail=detail)


class Run:
    """One recorded run: its privacy map and which units it read.

    Attributes
    ----------
    entry : LedgerEntry
        The run's entry (read from the store's JSON on first use).
    whole : bool
        True: the run read the whole dataset (every unit, present and future).
    kind : int
        Its privacy map's index among the ledger's distinct maps.
    """

    __slots__ = ("_entry", "_text", "whole", "kind")

    def __init__(self, entry: LedgerEntry | None, whole: bool, kind: int, *, text: str | None = None) -> None:
        if entry is None and text is None:
            raise ParameterError("a run needs its entry.")
        self._entry, self._text, self.whole, self.kind = entry, text, bool(whole), int(kind)

    @property
    def entry(self) -> LedgerEntry:
        if self._entry is None:
            import json

            from core.ledger.entries import entry_from_dict

            self._entry = entry_from_dict(json.loads(self._text))
        return self._entry

    def text(self) -> str:
        """The entry as the store's JSON."""
        if self._text is None:
            import json

            self._text = json.dumps(self._entry.to_dict(), allow_nan=False, ensure_ascii=False)
        return self._text

    def __repr__(self) -> str:
        return f"Run(kind={self.kind}, whole={self.whole})"


def _check_entry(entry) -> None:
    if not isinstance(entry, (PureDPEntry, RDPEntry, ApproxDPEntry)):
        raise ParameterError(f"a ledger entry must be a PureDPEntry, RDPEntry or ApproxDPEntry, got {type(entry).__name__}.")


@dataclass(frozen=True)
class LedgerState:
    """One dataset's ledger (module docstring)."""

    runs: tuple = ()
    kinds: tuple = ()
    kind_index: dict = field(default_factory=dict)
    common: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    classes: UnitClasses = field(default_factory=UnitClasses.empty)
    budget: Budget | None = None

    # -- building -----------------------------------------------------------------------

    @classmethod
    def from_runs(cls, runs: Sequence[Run], classes: UnitClasses | None, budget: Budget | None) -> LedgerState:
        """A state from its recorded runs (in order) and its unit classes (as stored).

        Parameters
        ----------
        runs : sequence of Run
        classes : UnitClasses or None
        budget : Budget or None

        Returns
        -------
        LedgerState
        """
        kinds: list = []
        index: dict = {}
        for r in runs:
            if r.kind == len(kinds):
                kinds.append(r.entry)
                index[map_key(r.entry)] = r.kind
            elif r.kind > len(kinds):
                raise ParameterError("the ledger's runs name a privacy map before its first run.")
        common = np.zeros(len(kinds), dtype=np.int64)
        for r in runs:
            if r.whole:
                common[r.kind] += 1
        classes = (classes or UnitClasses.empty()).widened(len(kinds))
        return cls(tuple(runs), tuple(kinds), index, common, classes, budget)

    def kind_of(self, entry: LedgerEntry) -> int:
        """The index of ``entry``'s privacy map (a new one is numbered after the others).

        Parameters
        ----------
        entry : LedgerEntry
            A run; only its privacy map (:func:`core.ledger.entries.map_key`) is read.

        Returns
        -------
        int
        """
        return self.kind_index.get(map_key(entry), len(self.kinds))

    def after(self, entry: LedgerEntry, keys: np.ndarray | None) -> LedgerState:
        """The state after a run of ``entry`` that read the units ``keys`` (None: the whole dataset).

        Parameters
        ----------
        entry : LedgerEntry
        keys : numpy.ndarray of uint64 or None

        Returns
        -------
        LedgerState
        """
        _check_entry(entry)
        kind = self.kind_of(entry)
        kinds, index, common = self.kinds, self.kind_index, self.common
        if kind == len(kinds):
            kinds = kinds + (entry,)
            index = dict(index)
            index[map_key(entry)] = kind
            common = np.concatenate([common, [0]])
        else:
            common = common.copy()
        if keys is None:
            common[kind] += 1
            classes = self.classes.widened(len(kinds))
        else:
            classes = self.classes.after_run(kind, keys)
        return dataclasses.replace(self, runs=self.runs + (Run(entry, keys is None, kind),), kinds=kinds,
                                   kind_index=index, common=common, classes=classes)

    def after_all(self, entries: Sequence[LedgerEntry], keys: np.ndarray | None) -> LedgerState:
        """:meth:`after` for several runs, each reading the same units."""
        state = self
        for e in entries:
            state = state.after(e, keys)
        return state

    # -- reading ------------------------------------------------------------------------

    @property
    def entries(self) -> tuple:
        """Every recorded run's entry, oldest first."""
        return tuple(r.entry for r in self.runs)

    def class_vectors(self, keys: np.ndarray | None = None) -> np.ndarray:
        """The count vectors (without the whole-data runs) of every class, or of the classes of ``keys``.

        Parameters
        ----------
        keys : numpy.ndarray of uint64, optional

        Returns
        -------
        numpy.ndarray, shape (n, n_kinds)
        """
        v = self.classes.vectors
        return v if keys is None else v[self.classes.classes_of(keys)]

    def total(self, *, delta: float | None = None, keys: np.ndarray | None = None) -> LedgerTotal:
        """The largest unit's total (of every unit, or of the units ``keys``).

        Parameters
        ----------
        delta : float, optional
        keys : numpy.ndarray of uint64, optional

        Returns
        -------
        LedgerTotal
        """
        if keys is not None:
            return worst_total(self.kinds, self.class_vectors(keys), self.common, delta=delta)
        # A state never changes (a run makes a new one): its totals are remembered on it.
        cache = self.__dict__.setdefault("_totals", {})
        if delta not in cache:
            cache[delta] = worst_total(self.kinds, self.class_vectors(), self.common, delta=delta)
        return cache[delta]

    def _best(self, v: np.ndarray) -> LedgerTotal:
        """The smaller of the full vector ``v``'s own-δ composition and its composition at the budget's δ."""
        counts = np.asarray(v, dtype=np.int64).tolist()
        candidates = [compose_counts(self.kinds, counts)]
        b = self.budget
        if b is not None and b.delta > 0:
            with contextlib.suppress(ParameterError):
                candidates.append(compose_counts(self.kinds, counts, delta=b.delta))
        inside = [c for c in candidates if b is None or within(c, b)]
        return min(inside or candidates, key=lambda c: (c.epsilon, c.delta))

    def check(self, entries: Sequence[LedgerEntry], keys: np.ndarray | None, *, what: str) -> tuple[LedgerState, LedgerTotal]:
        """Check that the runs ``entries`` (each reading ``keys``; None: everything) fit the budget.

        Every unit the runs read must keep some valid composition within the budget: its
        own-δ total, or its total at the budget's δ.  The largest own-δ total of those units
        (:func:`core.ledger.largest.worst_total`) within the budget accepts at once, and so
        does the largest total at the budget's δ; otherwise each class is looked at, those
        whose bounds already fit being accepted without composing them.

        Parameters
        ----------
        entries : sequence of LedgerEntry
        keys : numpy.ndarray of uint64 or None
        what : str
            How to name the run in a refusal (its mechanism).

        Returns
        -------
        (LedgerState, LedgerTotal)
            The state after the runs, and the total of the units they read.

        Raises
        ------
        BudgetExhausted
            When a unit the runs read would pass the budget.
        """
        after = self.after_all(entries, keys)
        C = after.class_vectors(keys)
        b = self.budget
        if C.shape[0] == 1:
            full = np.asarray(C[0], dtype=np.int64) + after.common
            total = after._best(full)
            if b is not None and not within(total, b):
                raise self._refusal(after, full, entries, total, keys is None, what)
            return after, total
        own = after.total(keys=keys)
        if b is None or within(own, b):
            return after, own
        if b.delta > 0:
            with contextlib.suppress(ParameterError):
                at_budget = after.total(delta=b.delta, keys=keys)
                if within(at_budget, b):
                    return after, at_budget
        # Some units fit one way, some the other (rare): each class whose own-δ bounds do not fit.
        tol = 1.0 + BUDGET_TOLERANCE
        ub_e, ub_d = upper_bounds(after.kinds, C, after.common)
        ub_e = np.maximum(ub_e, max((alone_upper(k) for k in after.kinds), default=0.0))  # the floor, bounded
        doubtful = np.flatnonzero(~((ub_e <= b.epsilon * tol + 1e-15) & (ub_d <= b.delta * tol + 1e-300)))
        for i in doubtful[np.argsort(-ub_e[doubtful], kind="stable")]:
            full = np.asarray(C[i], dtype=np.int64) + after.common
            best = after._best(full)
            if not within(best, b):
                raise self._refusal(after, full, entries, best, keys is None, what)
        return after, own

    def _refusal(self, after: LedgerState, v: np.ndarray, entries: Sequence[LedgerEntry], total: LedgerTotal,
                 whole: bool, what: str) -> BudgetExhausted:
        before = v.astype(np.int64).copy()
        for e in entries:
            before[after.kind_of(e)] -= 1
        b = self.budget
        # every number of the refusal at the budget's δ, as every total is quoted (quoted)
        spent = quoted(lambda d: compose_counts(after.kinds, before.tolist(), delta=d), b)
        own = quoted(lambda d: compose_counts(after.kinds, (v - before).tolist(), delta=d), b)
        total = quoted(lambda d: compose_counts(after.kinds, v.astype(np.int64).tolist(), delta=d), b)
        n_before = int(before.sum())
        plural = "s" if len(entries) != 1 else ""
        # the mechanism's name in brackets: a name is no adjective ("this a run", "this  run")
        named = f" ({what})" if str(what).strip() else ""
        cost = f"this run{named} would cost" if len(entries) == 1 else f"these {len(entries)} runs would cost"
        with contextlib.suppress(ParameterError):  # the guarantee as asked (the runs' own δ), named apart
            alone = compose_counts(after.kinds, (v - before).tolist(), delta=None)
            if b.delta > 0 and abs(alone.delta - own.delta) > 1e-300 + 1e-12 * own.delta:
                cost = (f"{cost[:-len(' would cost')]}, asked at ε = {alone.epsilon:.4g} and δ = {alone.delta:.3g}, "
                        f"would cost at the budget's δ")
        whose = ("for this dataset: the" if whole else
                 "for a privacy unit this run reads: the most-charged such unit has")
        return BudgetExhausted(
            f"Privacy budget exhausted {whose} {n_before} run{'s' if n_before != 1 else ''} recorded so far, which spent "
            f"(ε = {spent.epsilon:.4g}, δ = {spent.delta:.3g}); {cost} (ε = {own.epsilon:.4g}, δ = {own.delta:.3g}) "
            f"on {'its' if len(entries) == 1 else 'their'} own, bringing the total to (ε = {total.epsilon:.4g}, "
            f"δ = {total.delta:.3g}), over the budget (ε = {b.epsilon:.4g}, δ = {b.delta:.3g}). The run{plural} "
            f"{'was' if len(entries) == 1 else 'were'} not started: lower its ε, its number of queries or rounds, or label "
            "with fresh private data (raising the budget weakens the promised guarantee).")
