"""The lesson's ledger on teaching data: prices before the click, how the total grows, demonstrations.

Teaching data (generated sets, bundled demo sets, uploads declared to hold nobody's data) run
live, and every run is charged to the session's own ledger (:mod:`app_pages._ledger`).  This
module makes that ledger teach composition:

* :class:`LessonLedger` remembers the total at the end of every view and composes a run into
  the total the cheaper of two valid ways: all runs together (the library's composition,
  docs/design.md §9), or the total before it plus the run's own guarantee (basic composition).
  So a run never adds more than its own ε, and :func:`growth_steps` can say, run by run, which
  rule made the total grow by how much.
* :func:`mechanism_prices` / :func:`price_caption`: what one run of a mechanism costs at the
  session's settings, said before the click; a mechanism whose ε is spent on each query says
  so ("ε 4 on each query × 2,000 queries = ε 8,000").
* :func:`lesson_price`: the price of a group of runs (e.g. opening Compare) before they run.
* **Demonstrations** (:func:`demonstration`, :func:`set_demonstration`): the lecturer may mark
  what is shown next as a demonstration that is not charged to the lesson.  Its runs go to a
  separate ledger, said on every page while it is on; teaching data only (on a real job
  :func:`app_pages._ledger.ledger` never looks at it).
* On screen: :mod:`app_pages._lesson_view` (the sidebar's line, the banner, the one-line summary)
  and :func:`app_pages._ledger.show_spent` (the page's ledger section).

Nothing here runs a mechanism; the real job's ledger and priced runs are in
:mod:`app_pages._ledger` and :mod:`app_pages._spend`.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from dataclasses import dataclass
from typing import Any, Sequence

import streamlit as st

from core.errors import BudgetExhausted, ParameterError
from core.ledger import PrivacyLedger, compose_entries
from core.ledger.state import within

DEMONSTRATION_KEY = "_demonstration"
"""Session-state flag: runs shown now are a demonstration, not charged to the lesson."""

KINDS = {
    "pure": "runs that spend a fixed ε at each step (BTT, Laplace noise, A_stab)",
    "rdp": "Gaussian-noise runs (the GNMax family), counted in Rényi privacy",
    "approx": "runs known only by their (ε, δ) (certified runs, DP training)",
}
"""A ledger entry's kind, in words (the groups of docs/design.md §9)."""

COMPOSITION_TEXT = (
    "How runs add up: every run on the private rows spends privacy, and the ledger adds the runs together. "
    "Two rules do it. (1) **Adding**: the total after a run is at most the total before it plus the run's own ε "
    "(and δ): the basic composition theorem. (2) **Composing together**: runs of one kind are composed as one "
    "long run, which costs less than adding their ε, because the noise of many runs does not line up against "
    "one person every time (optimal composition for fixed-ε steps, Rényi composition for Gaussian noise). "
    "The ledger keeps whichever of the two totals is smaller, so a run never adds more than its own ε; runs of "
    "different kinds are added. Showing a run again costs nothing: it is the same draw."
)


# --------------------------------------------------------------------------------------
# The ledger
# --------------------------------------------------------------------------------------


def _with(total, epsilon: float, delta: float):
    return dataclasses.replace(total, epsilon=float(epsilon), delta=min(1.0, float(delta)))


class LessonLedger(PrivacyLedger):
    """A session's ledger on teaching data: an in-memory :class:`core.ledger.PrivacyLedger`
    (never stored: a lesson is about one's own spending), with its totals kept per view.

    ``total()`` of the first ``n`` runs is the smaller in ε of (a) every run composed together
    (:meth:`PrivacyLedger.total`, docs/design.md §9) and (b) the last remembered total plus the
    runs since (their own guarantees added, or composed together: basic composition of valid
    guarantees), reported at the larger of the two δs (a larger δ only weakens a valid
    statement).  Each total is remembered by its number of runs, so a view that shows the
    total again composes nothing; the remembered points mark where each view ended
    (:func:`growth_steps`).

    Every run reads the whole teaching table (no privacy units).  Without a budget a charge
    checks nothing and composes nothing (the total is composed once, when it is shown): a
    view that makes many runs (Compare) does not compose the whole ledger once per run.
    With a budget, a run is accepted when either total fits it, so a refusal agrees with
    what is shown.  Neither reads a private value: the totals compose the runs' public maps.
    """

    def __init__(self, name: str = "lesson") -> None:
        super().__init__(name)  # in memory only
        self._totals: dict[int, Any] = {}
        self._totals_lock = threading.RLock()

    # -- totals --------------------------------------------------------------------------
    def _total_of(self, entries: list) -> Any:
        """The lesson's total of ``entries`` (a prefix of this ledger's, or it and more runs)."""
        n = len(entries)
        recorded = len(self)
        with self._totals_lock:
            hit = self._totals.get(n)
            if hit is not None and n <= recorded:
                return hit
            together = compose_entries(entries)
            known = [i for i in self._totals if i < n]
            if known:
                start = max(known)
                before = self._totals[start]
                new = entries[start:]
                # The total before plus the new runs' own guarantees (added), or composed together.
                added = [_alone(e) for e in new]
                eps = math.fsum(a.epsilon for a in added)
                dlt = math.fsum(a.delta for a in added)
                if len(new) > 1:
                    group = compose_entries(new)
                    if group.epsilon < eps:
                        eps, dlt = group.epsilon, max(group.delta, dlt)
                eps, dlt = before.epsilon + eps, before.delta + dlt
                together = _with(together, min(eps, together.epsilon), max(dlt, together.delta))
            if n <= recorded:
                self._totals[n] = together
            return together

    def total(self, *, delta: float | None = None, units: Any = None):
        """The lesson's total (class docstring); with ``delta`` the library's composition at that δ."""
        entries = self.entries
        if delta is not None or units is not None or not entries:
            return super().total(delta=delta, units=units)
        return self._total_of(list(entries))

    def total_at(self, n: int):
        """The lesson's total after its first ``n`` runs."""
        entries = list(self.entries[:n])
        return self._total_of(entries) if entries else super().total()

    def known_points(self) -> list[int]:
        """The run counts at which a total was shown (the ends of views), in order."""
        n = len(self)
        with self._totals_lock:
            return sorted(i for i in self._totals if i <= n)

    # -- charging ------------------------------------------------------------------------
    def _admit(self, state, entries: list, keys):
        """Without a budget: recorded, nothing composed (None is reported).  With one: accepted
        when the library's check or the lesson's total (class docstring) fits it."""
        if keys is not None:
            return super()._admit(state, entries, keys)
        after = state.after_all(entries, None)
        b = state.budget
        if b is None:
            return after, None
        try:
            new, theirs = super()._admit(state, entries, keys)
        except BudgetExhausted:
            ours = self._total_of(list(after.entries))
            if within(ours, b):
                return after, ours
            raise
        ours = self._total_of(list(after.entries))
        return new, (ours if ours.epsilon <= theirs.epsilon else theirs)

    def charge(self, entry, *, units: Any = None):
        """Record a run on the teaching table before it runs; checked against the budget when there is one.

        Without a budget nothing can refuse the run, so nothing is composed here (the total
        is composed when it is shown) and None is returned; with a budget as
        :meth:`PrivacyLedger.charge`.

        Raises
        ------
        ParameterError
            With ``units``: a lesson's runs read the whole teaching table.
        BudgetExhausted
        """
        if units is not None:
            raise ParameterError("a lesson's ledger charges every run to the whole teaching table (no units).")
        return super().charge(entry)


def _alone(entry):
    """A run's own guarantee (composed alone at its own δ), remembered on the entry."""

    hit = entry.__dict__.get("_lesson_alone")
    if hit is None:
        hit = compose_entries([entry])
        object.__setattr__(entry, "_lesson_alone", hit)
    return hit


def new_ledger(key: str) -> LessonLedger:
    """A fresh lesson ledger for the teaching table ``key`` (:func:`app_pages._ledger.lesson_key`)."""
    return LessonLedger()


# --------------------------------------------------------------------------------------
# Demonstrations: not charged to the lesson (teaching data only)
# --------------------------------------------------------------------------------------


def demonstration() -> bool:
    """Whether the lecturer marked what is shown now as a demonstration (not charged to the lesson)."""
    return bool(st.session_state.get(DEMONSTRATION_KEY, False))


def set_demonstration(on: bool) -> None:
    """Mark (or unmark) what is shown next as a demonstration; teaching data only (the pages offer it there)."""
    st.session_state[DEMONSTRATION_KEY] = bool(on)


def demonstration_ledger(fp: str) -> LessonLedger:
    """The ledger a demonstration's runs go to: kept apart from the lesson's, shown as "not charged"."""
    shown = st.session_state.setdefault("_demonstration_ledgers", {})
    if fp not in shown:
        shown[fp] = new_ledger(fp)
    return shown[fp]


DEMONSTRATION_TEXT = (
    "**Demonstration: not charged to the lesson.** The runs shown now go to a separate demonstration "
    "ledger, not to your lesson's total. This is possible on teaching data only: on a real job every run "
    "on the private rows counts, whoever looks and why."
)


# --------------------------------------------------------------------------------------
# Prices before the click
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunPrice:
    """What one run of a mechanism at the session's settings costs, known before it runs.

    Attributes
    ----------
    mechanism : str
    epsilon, delta : float
        The run's own guarantee on the m queries (its privacy map).
    asked : float or None
        The ε the controls show (None for a mechanism set without ε).
    per_query : bool
        True when the ε of the controls is spent on each query (the run costs about m times it).
    m : int
    """

    mechanism: str
    epsilon: float
    delta: float
    asked: float | None
    per_query: bool
    m: int

    def words(self) -> str:
        """"ε 4 on each query × 2,000 queries = ε 8,000 per run" or "ε 4 for all 2,000 queries"."""
        total = _eps(self.epsilon)
        if self.per_query and self.asked is not None:
            return f"ε {self.asked:g} on each query × {self.m:,} queries = ε {total} per run"
        return f"ε {total} for all {self.m:,} queries"


def _eps(x: float) -> str:
    return f"{x:,.0f}" if x >= 1000 else f"{x:.3g}"


def run_price(name: str, m: int, settings: dict[str, Any] | None = None) -> RunPrice | None:
    """The price of one run of ``name`` on ``m`` queries at the session's settings (None if refused)."""
    from core import pipeline
    from core.errors import PrivateLabelLabError
    from app_pages import _session as session

    asked = session.request(name, settings)
    try:
        g = pipeline.privacy_map(name, asked, max(int(m), 1))
    except PrivateLabelLabError:
        return None
    eps = asked.get("epsilon")
    per_query = eps is not None and g.epsilon > float(eps) * 1.5
    return RunPrice(name, float(g.epsilon), float(g.delta), None if eps is None else float(eps), per_query, int(m))


def mechanism_prices(names: Sequence[str], m: int) -> dict[str, RunPrice | None]:
    """:func:`run_price` of every mechanism in ``names``."""
    return {name: run_price(name, m) for name in names}


def option_captions(names: Sequence[str], m: int) -> list[str]:
    """A short price under each mechanism of a choice, shown before it is picked."""
    out = []
    for name, p in mechanism_prices(names, m).items():
        if p is None:
            out.append("cannot run at these settings")
        elif p.per_query and p.asked is not None:
            out.append(f"ε {p.asked:g} on each query × {p.m:,} queries = ε {_eps(p.epsilon)} per run")
        else:
            out.append(f"ε {_eps(p.epsilon)} per run")
    return out


def price_caption(name: str, m: int, *, teaching: bool = True) -> str | None:
    """One run's price in words for the controls (shown before the run), or None if it cannot run.

    A mechanism that spends its ε on each query says so, with the total.
    """
    p = run_price(name, m)
    if p is None:
        return None
    where = "on your lesson's ledger" if teaching else "on this data's ledger"
    text = f"One run costs {p.words()} {where}."
    if p.per_query:
        text = (f"**ε is spent on each query here.** {text} Each new setting is a new run, charged again.")
    return text


@dataclass(frozen=True)
class GroupPrice:
    """The price of a group of runs not yet made (e.g. opening Compare), before any of them runs.

    Attributes
    ----------
    runs : int
        How many runs the group makes.
    cost : LedgerTotal
        The runs composed together, alone.
    before, after : LedgerTotal
        The lesson's total now, and with the runs.
    fits : bool
        False when a budget is set and ``after`` passes it.
    """

    runs: int
    cost: Any
    before: Any
    after: Any
    fits: bool

    def words(self, what: str) -> str:
        """"Opening Compare makes 69 new runs: ε 470 together; your lesson's total would go from 13 to 483"."""
        return (f"{what} makes {self.runs} new run{'s' if self.runs != 1 else ''} on the private rows: "
                f"ε {_eps(self.cost.epsilon)} together (δ {self.cost.delta:.2g}); your lesson's total would go from "
                f"ε {_eps(self.before.epsilon)} to at most ε {_eps(self.after.epsilon)}.")


def lesson_price(led: LessonLedger, entries: Sequence[Any]) -> GroupPrice:
    """The price of ``entries`` (a-priori ledger entries) on the lesson's ledger, nothing charged.

    ``after`` is the total before plus the runs composed together: the lesson's total after
    them is at most that (:class:`LessonLedger`).
    """
    entries = list(entries)
    before = led.total()
    cost = compose_entries(entries) if entries else before
    after = before if not entries else _with(cost, before.epsilon + cost.epsilon, before.delta + cost.delta)
    b = led.budget
    fits = b is None or (after.epsilon <= b.epsilon * (1 + 1e-12) and after.delta <= b.delta * (1 + 1e-12))
    return GroupPrice(len(entries), cost, before, after, fits)


def ask_first() -> bool:
    """Whether a view that would make several runs shows its price and waits for a click (default yes).

    The Compare page's switch "Run comparisons without asking first" turns it off for the session
    (a lecturer who wants the comparison at once); the runs are still charged.
    """
    return not bool(st.session_state.get("lesson", {}).get("run_without_asking", False))


def fmt_eps(x: float) -> str:
    """An ε for the page: whole numbers with separators from 1,000 up, else 3 significant digits."""
    return _eps(x)


# --------------------------------------------------------------------------------------
# How the total grew
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GrowthStep:
    """One step of the ledger's history: a view's runs and how they moved the total.

    Attributes
    ----------
    first, last : int
        The runs of the step, numbered from 1.
    runs : tuple of str
        Each run in words.
    own : float
        The runs' own ε added up (what adding them would give).
    before, after : float
        The total's ε before and after the step.
    why : str
        The rule that ran, in words.
    """

    first: int
    last: int
    runs: tuple
    own: float
    before: float
    after: float
    why: str

    @property
    def growth(self) -> float:
        """How much the step added to the total."""
        return self.after - self.before


def run_words(entry) -> str:
    """A ledger entry in a few words: its mechanism's title and its ε setting."""
    from core.mechanisms import registry

    try:
        title = registry.get(entry.mechanism).title
    except Exception:  # an entry of something else (an estimate, a selection)
        title = entry.mechanism.replace("-", " ")
    p = entry.params or {}
    eps = p.get("epsilon", p.get("epsilon_target"))
    return title + (f" at ε {float(eps):g}" if isinstance(eps, (int, float)) else "")


def _why(entries: list, i0: int, i1: int, own: float, growth: float) -> str:
    new = entries[i0:i1]
    kinds = {e.kind for e in new}
    earlier = [e for e in entries[:i0] if e.kind in kinds]
    if i0 == 0 and len(new) == 1:
        return "Your first run: the total is its own ε."
    if not earlier and len(kinds) == 1 and len(new) == 1:
        return (f"The first of the {KINDS[next(iter(kinds))]}: runs of different kinds are added, so its ε is added in "
                "full (basic composition).")
    if growth < own - max(1e-6, 1e-3 * own):
        same = f"{len(earlier)} earlier run{'s' if len(earlier) != 1 else ''} of its kind" if len(new) == 1 else \
            "the earlier runs of their kinds"
        return (f"Less than {'its' if len(new) == 1 else 'their'} own ε: composed together with {same}, "
                "runs cost less than their ε added up (the noise of many runs does not line up against one person "
                "every time).")
    if new and new[0].kind == "approx" and len(kinds) == 1:
        return "Added in full: a run known only by its (ε, δ) can only be added (basic composition)."
    return "Added in full: composing it with the earlier runs found nothing cheaper than adding its ε (basic composition)."


def growth_steps(led: LessonLedger, *, last: int = 8) -> list[GrowthStep]:
    """The ledger's history, one step per view that made runs (the last ``last`` steps, newest first).

    A step of one run says what it cost alone and by how much it moved the total, and why
    (:data:`COMPOSITION_TEXT`); a step of many runs (Compare) says the same of the group.
    """
    n = len(led)
    if not n:
        return []
    points = [p for p in led.known_points() if 0 < p <= n]
    if not points or points[-1] != n:
        led.total()
        points = [p for p in led.known_points() if 0 < p <= n]
    bounds = [0] + points
    entries = list(led.entries)
    out = []
    for a, b in reversed(list(zip(bounds[:-1], bounds[1:]))):
        if len(out) >= last:
            break
        before = 0.0 if a == 0 else led.total_at(a).epsilon
        after = led.total_at(b).epsilon
        own = math.fsum(_alone(e).epsilon for e in entries[a:b])
        out.append(GrowthStep(a + 1, b, tuple(run_words(e) for e in entries[a:b]), own, before, after,
                              _why(entries, a, b, own, after - before)))
    return out


def step_line(step: GrowthStep) -> str:
    """A step in one line: "Run 4 · GNMax at ε 4.1: own ε 4.1 → total 13 (+4.1). Why…"."""
    if step.first == step.last:
        what = f"Run {step.first} · {step.runs[0]}: its own ε {_eps(step.own)}"
    else:
        shown = ", ".join(step.runs[:3]) + (f" and {len(step.runs) - 3} more" if len(step.runs) > 3 else "")
        what = f"Runs {step.first}–{step.last} ({len(step.runs)} runs in one view: {shown}): their own ε add up to {_eps(step.own)}"
    return f"{what} → total ε {_eps(step.after)} (+{_eps(step.growth)}). {step.why}"


