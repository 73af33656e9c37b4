"""The privacy ledger of the app's private data, priced runs, and the release (docs/design.md §9).

Whose ledger (:func:`ledger`) depends on the kind of data (:func:`app_pages._session.data_kind`):

* **Teaching data**: every session keeps its own ledger (in ``st.session_state``, one per
  private table): the lesson is about one's own spending, so one student's exploring never
  fills another's total.  A "new lesson" (:func:`new_lesson`) starts it again.
* **A real job**: one ledger per private table for the whole process
  (:func:`core.accounting.ledger_for`), whoever looks: two sessions on the same private rows
  add to the same total, and its budget (:func:`set_job_budget`) is held by the ledger
  itself, set once for the data before its first run.

A **priced run** (:func:`price`, :func:`spend`) is a run on the private votes whose cost and
the total after it are shown before it runs; a **release** (:func:`release`) is a fresh run at
settings fixed before it is shown, the only run the Student & export page lets the user
download.  On a real job every priced run is a release (its settings were fixed, and its
price shown, before anything was drawn).

This module imports nothing from :mod:`app_pages._cache` (the cache imports it): an ensemble is
read through its ``inputs``, ``key`` and ``votes`` only.
"""

from __future__ import annotations

import math
import threading
import warnings
from typing import Any, Sequence

import numpy as np
import streamlit as st

from core import pipeline
from core.errors import PrivacyWarning, PrivateLabelLabError
from app_pages import _session as session
from app_pages._datasets import Dataset, dataset

BUDGET_SECTION = "ledger_budget"
"""Session-state section of the teaching data's optional budget: ``{"epsilon": 0 (none) or ε, "delta": δ}``."""

DEFAULT_BUDGET_DELTA = 1e-4
"""The budget's δ offered first (the runs' δs and composition slacks add up to the total δ)."""

SPENT_EXPLANATION = (
    "Every labeling run the app made on these private rows counts, including runs only looked at "
    "(each new setting, every Compare row and curve point, each release); they compose into this "
    "total. Showing a run again costs nothing: it is the same draw."
)
REAL_JOB_EXPLANATION = (
    "Only the runs you asked for count here (each one a button that showed its price first); opening a page, "
    "moving a control or reading a prediction spends nothing. This total belongs to the private data: every "
    "session on the same rows adds to it."
)
REAL_JOB_MEANING = (
    "On a real job this total would be what the published report must carry: every look at the private "
    "votes is a release of them, so a lesson's worth of looks would have been spent before anything was "
    "published. A real job therefore plans for free and spends only on the runs you ask for."
)


class BudgetNeeded(PrivateLabelLabError):
    """A real job has no total budget yet: no run on its private votes before one is set."""


def fingerprint(table) -> str:
    """The ledger key of a private table: :func:`core.accounting.dataset_fingerprint` of
    its features and labels (the private rows as split, not the file they came from).

    A SHA-256 of a canonical serialisation: equal private rows give the same ledger,
    and the hash reveals nothing about the rows beyond equality (someone who could
    guess the whole table could confirm the guess; it is never shown or exported).
    Computed once per table and kept beside it.
    """
    from core.accounting import dataset_fingerprint

    with _FINGERPRINT_LOCK:
        hit = _FINGERPRINTS.get(id(table))
        if hit is not None and hit[0] is table:
            return hit[1]
    fp = dataset_fingerprint(table.features, table.labels)
    with _FINGERPRINT_LOCK:
        _FINGERPRINTS[id(table)] = (table, fp)
        while len(_FINGERPRINTS) > 32:
            _FINGERPRINTS.pop(next(iter(_FINGERPRINTS)))
    return fp


def job_fingerprint(ds: Dataset) -> str:
    """The ledger key of a real job: the uploaded private file's rows, as a set.

    The app holds some private rows out for testing, drawn at random in each session, so
    the rows the teachers see differ from session to session; every one of them is a row of
    the uploaded file.  Keying the job's ledger by the file's rows (the held-out rows
    included, in any order: a SHA-256 of the sorted per-row fingerprints of
    :func:`core.accounting.rows.row_fingerprints`) makes every session on the same file
    charge one ledger: a reload, a new split or a reordered copy of the file cannot start a
    fresh account.  Charging a run on a subset of the rows to the whole file's account only
    over-counts (safe).
    """
    import hashlib

    from core.accounting.rows import row_fingerprints

    key = ("job", id(ds.private), id(ds.test))
    with _FINGERPRINT_LOCK:
        hit = _FINGERPRINTS.get(key)
        if hit is not None and hit[0] is ds.private:
            return hit[1]
    parts = [row_fingerprints(ds.private.features, ds.private.labels)]
    if ds.test is not None and ds.test.n_rows:
        parts.append(row_fingerprints(ds.test.features, ds.test.labels))
    rows = np.sort(np.concatenate(parts))
    fp = "job:" + hashlib.sha256("\n".join(rows.tolist()).encode()).hexdigest()
    with _FINGERPRINT_LOCK:
        _FINGERPRINTS[key] = (ds.private, fp)
        while len(_FINGERPRINTS) > 32:
            _FINGERPRINTS.pop(next(iter(_FINGERPRINTS)))
    return fp


_FINGERPRINTS: dict[Any, tuple] = {}
_FINGERPRINT_LOCK = threading.Lock()


def lesson_ledger(fp: str):
    """This session's lesson ledger on the teaching table ``fp`` (:class:`app_pages._lesson_ledger.LessonLedger`)."""
    from app_pages import _lesson_ledger as lesson

    lessons = st.session_state.setdefault("_lesson_ledgers", {})
    if fp not in lessons:
        lessons[fp] = lesson.new_ledger(fp)
    return lessons[fp]


def ledger(ds: Dataset | None = None, *, ens: Any = None):
    """The privacy ledger of the current (or given) private data (module docstring: whose).

    ``ens`` is accepted for the callers that hold an ensemble; the ledger follows the
    dataset.  On teaching data the optional budget set on the Private labeling page is
    applied before every charge; on a real job the budget is the ledger's own.
    """
    from core.accounting import ledger_for

    ds = ds or dataset()
    if session.is_real_job(ds):
        return ledger_for(job_fingerprint(ds))
    from app_pages import _lesson_ledger as lesson

    fp = fingerprint(ds.private)
    led = lesson_ledger(fp)
    # The first look at this ledger in a script run marks where this view's runs start.
    st.session_state.setdefault("_view_marks", {}).setdefault(fp, len(led))
    if lesson.demonstration():  # marked by the lecturer: runs go to the demonstration's own ledger
        return lesson.demonstration_ledger(fp)
    wanted = st.session_state.get(BUDGET_SECTION) or {}
    eps = wanted.get("epsilon")
    if eps is not None and float(eps) > 0:
        led.set_budget(epsilon=float(eps), delta=float(wanted.get("delta", DEFAULT_BUDGET_DELTA)))
    elif led.budget is not None:
        led.set_budget(epsilon=None)
    return led


def begin_view() -> None:
    """Called by ``app.py`` before a page runs: this view's runs are counted from here."""
    st.session_state["_view_marks"] = {}


def new_lesson(ds: Dataset) -> None:
    """Start this session's ledger on teaching data again, and forget the runs it paid for.

    The remembered runs are dropped too, so that showing them again is a new run of the
    new lesson (charged to it), never a free look at a draw the old ledger paid for.
    """
    from app_pages import _lesson_ledger as lesson

    fp = fingerprint(ds.private)
    st.session_state.setdefault("_lesson_ledgers", {})[fp] = lesson.new_ledger(fp)
    st.session_state.get("_demonstration_ledgers", {}).pop(fp, None)
    st.session_state.setdefault("_view_marks", {})[fp] = 0
    st.session_state.get("_labelings", {}).clear()
    st.session_state.pop("_release", None)
    st.session_state.pop("_paid_compare", None)


def set_job_budget(ds: Dataset, epsilon: float, delta: float) -> None:
    """Set a real job's total budget (ε, δ) on its ledger (the data's, whoever looks)."""
    if not float(epsilon) > 0:
        raise PrivateLabelLabError("The total budget needs an ε above 0.")
    ledger(ds).set_budget(epsilon=float(epsilon), delta=float(delta))


def total_text(total, budget=None) -> str:
    """"1.5 of 3" or "1.5" (ε only): the short form of a total against a budget."""
    if budget is None:
        return f"{total.epsilon:.4g}"
    return f"{total.epsilon:.4g} of {budget.epsilon:.4g}"


def show_spent(where=None, ds: Dataset | None = None, *, ens: Any = None) -> None:
    """Show "Spent on this data so far: (ε, δ)" with what it means for this kind of data.

    On teaching data also the cost of this view next to the running total, and a sentence
    on what such a total would mean on a real job.
    """
    where = where if where is not None else st
    ds = ds or dataset()
    if not session.is_real_job(ds):
        _show_lesson_spent(where, ds)
        return
    led = ledger(ds)
    total = led.total()
    budget = led.budget
    of = "" if budget is None else f" of a budget (ε, δ) = ({budget.epsilon:.4g}, {budget.delta:.3g})"
    where.markdown(f"**Spent on this data so far: (ε, δ) = ({total.epsilon:.4g}, {total.delta:.3g})** "
                   f"over {len(led)} run{'s' if len(led) != 1 else ''}{of}.")
    where.caption(REAL_JOB_EXPLANATION)


def _show_lesson_spent(where, ds: Dataset) -> None:
    """The lesson's total, this view's runs, and how the total grew (teaching data)."""
    from app_pages import _lesson_ledger as lesson

    fp = fingerprint(ds.private)
    led = lesson_ledger(fp)
    total = led.total()
    budget = led.budget
    of = "" if budget is None else f" of a budget (ε, δ) = ({budget.epsilon:.4g}, {budget.delta:.3g})"
    where.markdown(f"**Spent on this data so far: (ε, δ) = ({total.epsilon:.4g}, {total.delta:.3g})** "
                   f"over {len(led)} run{'s' if len(led) != 1 else ''}{of}.")
    start = st.session_state.get("_view_marks", {}).get(fp, len(led))
    runs = len(led) - start
    if runs <= 0:
        view = "no new run (every result shown was drawn before)"
    else:
        grew = total.epsilon - (led.total_at(start).epsilon if start else 0.0)
        own = math.fsum(lesson._alone(e).epsilon for e in led.entries[start:])
        view = (f"{runs} new run{'s' if runs != 1 else ''}, ε {lesson._eps(own)} on {'its' if runs == 1 else 'their'} own; "
                f"the total grew by {lesson._eps(grew)}")
    where.markdown("This view: " + view + f" · spent in this lesson: ε {total.epsilon:.4g}.")
    if lesson.demonstration():
        shown = lesson.demonstration_ledger(fp)
        where.warning(lesson.DEMONSTRATION_TEXT + f" Not charged so far: {len(shown)} run{'s' if len(shown) != 1 else ''}, "
                      f"ε {lesson._eps(shown.total().epsilon) if len(shown) else 0}.")
    steps = lesson.growth_steps(led, last=8)
    if steps:
        with where.expander("How your total grew, run by run"):
            st.markdown(lesson.COMPOSITION_TEXT)
            for step in steps:
                st.markdown("- " + lesson.step_line(step))
            if steps[-1].first > 1:
                st.caption(f"Newest first; the {steps[-1].first - 1} earlier run{'s' if steps[-1].first > 2 else ''} "
                           "are in the total above.")
    where.caption(SPENT_EXPLANATION + " " + REAL_JOB_MEANING)



# --------------------------------------------------------------------------------------
# Priced runs (a real job's only way to the private votes)
# --------------------------------------------------------------------------------------


def price(ds: Dataset, runs: Sequence[tuple[str, dict[str, Any]]], m: int) -> dict[str, Any]:
    """What ``runs`` (``(mechanism, settings)`` pairs) would cost on ``m`` queries, before anything runs.

    Returns
    -------
    dict
        ``entries`` (each run's a-priori ledger entry), ``cost`` (their composition alone),
        ``after`` (the ledger's total with them), ``budget`` (or None), ``fits`` (whether
        the budget allows them) and ``refusal`` (the ledger's words when it does not).
    """
    entries = [pipeline.ledger_entry(name, settings, m) for name, settings in runs]
    return price_entries(ds, entries)


def price_entries(ds: Dataset, entries: Sequence[Any]) -> dict[str, Any]:
    """:func:`price` for ledger entries given as they are (e.g. a private selection's one entry)."""
    from core.accounting import PrivacyLedger
    from core.accounting.ledger_compose import compose_entries
    from core.errors import BudgetExhausted

    led = ledger(ds)
    entries = list(entries)
    trial = PrivacyLedger(led.fingerprint, entries=led.entries)
    budget = led.budget
    if budget is not None:
        trial.set_budget(epsilon=budget.epsilon, delta=budget.delta)
    refusal = None
    try:
        for entry in entries:
            trial.charge(entry)
    except BudgetExhausted as exc:
        refusal = str(exc)
    after = compose_entries(list(led.entries) + entries)
    if refusal is not None and len(entries) > 1:
        # The trial ledger charged these runs one by one; its words would count the first of
        # them as "recorded so far". Say it of the whole group instead: nothing has run.
        refusal = (f"these {len(entries)} runs would take the total spent on this data from ε {led.total().epsilon:.4g} "
                   f"over {len(led)} recorded run{'s' if len(led) != 1 else ''} to (ε {after.epsilon:.4g}, "
                   f"δ {after.delta:.3g}), past its budget (ε {budget.epsilon:.4g}, δ {budget.delta:.3g}); "
                   "nothing has run.")
    return {"entries": entries, "cost": compose_entries(entries), "after": after, "budget": budget,
            "fits": refusal is None, "refusal": refusal}


def price_line(p: dict[str, Any], what: str = "this run") -> str:
    """"this run: ε 1 · spent after it: 1 of 3": a price in one line."""
    after = p["after"]
    return (f"{what}: ε {p['cost'].epsilon:.4g} (δ {p['cost'].delta:.3g}) · spent after it: "
            f"{total_text(after, p['budget'])}" + ("" if p["budget"] is None else
                                                   f" (δ {after.delta:.3g} of {p['budget'].delta:.3g})"))


def require_budget(ds: Dataset) -> None:
    """Raise :class:`BudgetNeeded` on a real job that has no total budget yet."""
    if session.is_real_job(ds) and ledger(ds).budget is None:
        raise BudgetNeeded("Set a total privacy budget (ε, δ) for this data first (Private labeling page): "
                           "a real job spends nothing before its budget is set.")


def spend(ds: Dataset, ens: Any, runs: Sequence[tuple[str, dict[str, Any]]], *, keep_going: bool = False) -> list:
    """Run ``runs`` on the private votes, each charged to the ledger before it runs.

    All of them fit in the budget or none runs (:func:`price` first); on a real job a
    budget must be set (:class:`BudgetNeeded`).  Fresh noise every time: from the operating
    system on a real job, whatever the demo toggle (:func:`app_pages._session.noise_rng`); on
    teaching data in demo mode a fixed seed other than the exploring runs'.  With ``keep_going`` a run its mechanism
    refuses leaves the others: its place holds the error (it stays counted, as charged).

    Returns
    -------
    list of LabelingResult (or PrivateLabelLabError with ``keep_going``)
    """
    from core.errors import BudgetExhausted

    require_budget(ds)
    m = int(ens.votes.shape[0])
    p = price(ds, runs, m)
    if not p["fits"]:
        raise BudgetExhausted(p["refusal"])
    led = ledger(ds)
    out = []
    for i, (name, settings) in enumerate(runs):
        rng = session.noise_rng(ds, "release", offset=i)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyWarning)
            try:
                out.append(pipeline.label(ens.inputs(name), name, dict(settings), rng=rng, ledger=led))
            except PrivateLabelLabError as exc:
                if not keep_going:
                    raise
                out.append(exc)
    return out


def release(ds: Dataset, ens: Any, mechanism: str, asked: dict[str, Any]) -> dict[str, Any]:
    """A **release**: a fresh run at ``(mechanism, asked)``, fixed before it is shown.

    Never taken from the memo of :func:`app_pages._cache.labeling`: a new draw of the noise
    (operating-system entropy on a real job; on teaching data in demo mode a fixed seed other
    than the exploring runs' one, so the release is still a new draw and still repeats), charged to the ledger before it runs
    (BudgetExhausted past the budget, BudgetNeeded on a real job without a budget:
    nothing runs and the previous release, if any, stays).  Stored in this session as
    the one run the downloads export.
    """
    result = spend(ds, ens, [(mechanism, dict(asked))])[0]
    st.session_state["_release"] = {"result": result, "mechanism": mechanism, "asked": dict(asked),
                                    "ens_key": ens.key, "ds_key": ds.key, "number": len(ledger(ds))}
    return st.session_state["_release"]


def current_release(ds: Dataset, ens: Any) -> dict[str, Any] | None:
    """This session's release on the current data and ensemble, or None."""
    rel = st.session_state.get("_release")
    if rel is None or rel["ens_key"] != ens.key or rel["ds_key"] != ds.key:
        return None
    return rel


def tune_price(ds: Dataset, candidates: Sequence[tuple[str, dict[str, Any]]], m: int) -> dict[str, Any]:
    """The price of a private selection over ``candidates`` (:func:`core.pipeline.tune_price`), before it runs."""
    _, entry, _ = pipeline.tune_plan(list(candidates), int(m))
    out = price_entries(ds, [entry])
    out["guarantee"] = pipeline.tune_price(list(candidates), int(m))
    return out


def tune(ds: Dataset, ens: Any, candidates: Sequence[tuple[str, dict[str, Any]]]) -> Any:
    """"Tune privately": the best of ``candidates`` on the private votes under one guarantee fixed first.

    Charged to the ledger before anything runs (:func:`core.pipeline.tune`; refused past
    the budget, and on a real job before a budget is set).  The selected run's labels
    become this session's release; their ``epsilon``/``delta`` are the whole selection's.
    """
    require_budget(ds)
    rng = session.noise_rng(ds, "selection")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        sel = pipeline.tune(ens.votes, list(candidates), ledger=ledger(ds), rng=rng)
    st.session_state["_release"] = {"result": sel.result, "mechanism": sel.mechanism, "asked": dict(sel.settings),
                                    "ens_key": ens.key, "ds_key": ds.key, "number": len(ledger(ds)),
                                    "selection": sel}
    return sel
