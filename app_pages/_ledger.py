"""The privacy ledger of the app's private data, priced runs, and the release (docs/design.md §9).

Whose ledger (:func:`ledger`) depends on the kind of data (:func:`app_pages._session.data_kind`):

* **Teaching data**: every session keeps its own ledger (in ``st.session_state``, one per
  private table): the lesson is about one's own spending, so one student's exploring never
  fills another's total.  A "new lesson" (:func:`new_lesson`) starts it again.
* **A real job**: the ledger of the data's **name**, given once by the user
  (:func:`set_job_name`, remembered for the session), in the store shared with the command
  line and the library (:func:`core.ledger.store_path`: ``PRIVATE_LABEL_LAB_LEDGER`` or the
  per-user default).  Whoever looks, the same name is the same ledger: two sessions, a
  restarted server and ``private-label-lab label --dataset NAME`` all add to one total, and
  its budget (:func:`set_job_budget`) is held by the ledger itself, set once for the data
  before its first run.  Nothing is inferred from the file's bytes or values.

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
    "moving a control or reading a prediction spends nothing. This total belongs to the data's name: every "
    "session, a restarted server and the command line (--dataset) charging that name add to it."
)
REAL_JOB_MEANING = (
    "On a real job this total would be what the published report must carry: every look at the private "
    "votes is a release of them, so a lesson's worth of looks would have been spent before anything was "
    "published. A real job therefore plans for free and spends only on the runs you ask for."
)


class BudgetNeeded(PrivateLabelLabError):
    """A real job has no total budget yet: no run on its private votes before one is set."""


JOB_NAMES = "_job_names"
"""Session-state section: the name this session gave each real job (by the loaded files)."""


def _job_identity() -> str:
    """What this session loaded (the uploaded files, or the bundled job), to remember its name by."""
    cfg = st.session_state.get("data_cfg") or {}
    ident = session._upload_identity(cfg)
    if ident is not None:
        return "upload:" + ":".join(ident)
    return f"{cfg.get('source', '')}:{cfg.get('name', '')}"


def suggested_name(ds: Dataset) -> str:
    """A name to offer for a real job: its private file's name without the extension."""
    import re

    title = str(getattr(ds, "title", "") or "my data")
    return re.sub(r"\.(csv|txt|tsv)$", "", title, flags=re.IGNORECASE).strip() or "my data"


def job_name(ds: Dataset | None = None) -> str | None:
    """The name this session gave the current real job, or None (not named yet)."""
    return (st.session_state.get(JOB_NAMES) or {}).get(_job_identity())


def set_job_name(ds: Dataset, name: str) -> None:
    """Name the current real job: its ledger is the store's ledger of that name from now on."""
    from core.ledger.store import check_name

    name = check_name(name)
    st.session_state.setdefault(JOB_NAMES, {})[_job_identity()] = name


def forget_job_name(ds: Dataset) -> None:
    """Ask for the current real job's name again."""
    (st.session_state.get(JOB_NAMES) or {}).pop(_job_identity(), None)


_STORES: dict[str, Any] = {}
_STORES_LOCK = threading.Lock()


def store():
    """The ledger store of this server (:func:`core.ledger.store_path`, read at each call)."""
    from core.ledger import LedgerStore, store_path

    path = str(store_path())
    with _STORES_LOCK:
        if path not in _STORES:
            _STORES[path] = LedgerStore(path)
        return _STORES[path]


def lesson_key(ds: Dataset) -> str:
    """The key of a teaching table's lesson ledger in this session: the loaded data's cache key
    (what was loaded and how it was split; no private value is read to make it)."""
    return ds.key


def lesson_ledger(key: str):
    """This session's lesson ledger on the teaching table ``key`` (:class:`app_pages._lesson_ledger.LessonLedger`)."""
    from app_pages import _lesson_ledger as lesson

    lessons = st.session_state.setdefault("_lesson_ledgers", {})
    if key not in lessons:
        lessons[key] = lesson.new_ledger(key)
    return lessons[key]


def ledger(ds: Dataset | None = None, *, ens: Any = None):
    """The privacy ledger of the current (or given) private data (module docstring: whose).

    ``ens`` is accepted for the callers that hold an ensemble; the ledger follows the
    dataset.  On teaching data the optional budget set on the Private labeling page is
    applied before every charge; on a real job the ledger is its name's in the store (an
    empty in-memory one, which nothing may charge, until the job is named), and with a
    privacy unit its part for the persons of the private rows (:meth:`PrivacyLedger.part`).
    """
    from core.ledger import PrivacyLedger

    ds = ds or dataset()
    if session.is_real_job(ds):
        name = job_name(ds)
        if name is None:
            return _unnamed_ledger()
        led = PrivacyLedger(name, store=store())
        # With a privacy unit, the runs read the training part's persons (the test hold-out
        # is split by person): each person one account, all of their rows together.
        units = ds.private.ledger_units
        return led if units is None else led.part(units)
    from app_pages import _lesson_ledger as lesson

    key = lesson_key(ds)
    led = lesson_ledger(key)
    # The first look at this ledger in a script run marks where this view's runs start.
    st.session_state.setdefault("_view_marks", {}).setdefault(key, len(led))
    if lesson.demonstration():  # marked by the lecturer: runs go to the demonstration's own ledger
        return lesson.demonstration_ledger(key)
    wanted = st.session_state.get(BUDGET_SECTION) or {}
    eps = wanted.get("epsilon")
    if eps is not None and float(eps) > 0:
        led.set_budget(epsilon=float(eps), delta=float(wanted.get("delta", DEFAULT_BUDGET_DELTA)))
    elif led.budget is not None:
        led.set_budget(epsilon=None)
    return led


def _unnamed_ledger():
    from core.ledger import PrivacyLedger

    return PrivacyLedger("not named yet")


def begin_view() -> None:
    """Called by ``app.py`` before a page runs: this view's runs are counted from here."""
    st.session_state["_view_marks"] = {}


def new_lesson(ds: Dataset) -> None:
    """Start this session's ledger on teaching data again, and forget the runs it paid for.

    The remembered runs are dropped too, so that showing them again is a new run of the
    new lesson (charged to it), never a free look at a draw the old ledger paid for.
    """
    from app_pages import _lesson_ledger as lesson

    key = lesson_key(ds)
    st.session_state.setdefault("_lesson_ledgers", {})[key] = lesson.new_ledger(key)
    st.session_state.get("_demonstration_ledgers", {}).pop(key, None)
    st.session_state.setdefault("_view_marks", {})[key] = 0
    st.session_state.get("_labelings", {}).clear()
    st.session_state.pop("_release", None)
    st.session_state.pop("_paid_compare", None)


def set_job_budget(ds: Dataset, epsilon: float, delta: float) -> None:
    """Set a real job's total budget (ε, δ) on its ledger (the data's, whoever looks)."""
    if not float(epsilon) > 0:
        raise PrivateLabelLabError("The total budget needs an ε above 0.")
    if job_name(ds) is None:
        raise BudgetNeeded("Name this data first: its budget is kept under its name.")
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
    if job_name(ds) is None:
        where.markdown("**Spent on this data so far: not known yet** — name this data (Private labeling page) "
                       "to open its ledger.")
        where.caption(REAL_JOB_EXPLANATION)
        return
    _show_total(where, ledger(ds))
    where.caption(REAL_JOB_EXPLANATION)


def _show_total(where, led):
    """Show the line "Spent on this data so far" (the ledger's total, runs and budget); return the total."""
    total = led.total()
    budget = led.budget
    of = "" if budget is None else f" of a budget (ε, δ) = ({budget.epsilon:.4g}, {budget.delta:.3g})"
    where.markdown(f"**Spent on this data so far: (ε, δ) = ({total.epsilon:.4g}, {total.delta:.3g})** "
                   f"over {len(led)} run{'s' if len(led) != 1 else ''}{of}.")
    return total


def _show_lesson_spent(where, ds: Dataset) -> None:
    """The lesson's total, this view's runs, and how the total grew (teaching data)."""
    from app_pages import _lesson_ledger as lesson

    fp = lesson_key(ds)
    led = lesson_ledger(fp)
    total = _show_total(where, led)
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
    from core.errors import BudgetExhausted
    from core.ledger import compose_entries

    led = ledger(ds)
    entries = list(entries)
    budget = led.budget
    refusal = None
    try:
        led.check(entries)
    except BudgetExhausted as exc:
        refusal = str(exc)
    after = led.total_with(entries)
    from core.ledger.state import quoted

    cost = quoted(lambda d: compose_entries(entries, delta=d), budget)  # at the budget's δ, as every total
    return {"entries": entries, "cost": cost, "after": after, "budget": budget,
            "fits": refusal is None, "refusal": refusal}


def price_line(p: dict[str, Any], what: str = "this run") -> str:
    """"this run: ε 1 · spent after it: 1 of 3": a price in one line."""
    after = p["after"]
    return (f"{what}: ε {p['cost'].epsilon:.4g} (δ {p['cost'].delta:.3g}) · spent after it: "
            f"{total_text(after, p['budget'])}" + ("" if p["budget"] is None else
                                                   f" (at the budget's δ {p['budget'].delta:.3g})"))


def require_budget(ds: Dataset) -> None:
    """Raise :class:`BudgetNeeded` on a real job that has no name or no total budget yet."""
    if session.is_real_job(ds) and job_name(ds) is None:
        raise BudgetNeeded("Name this data and set its total privacy budget (ε, δ) first (Private labeling page): "
                           "a real job spends nothing before both are set.")
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


def tune_price(ds: Dataset, candidates: Sequence[tuple[str, dict[str, Any]]], m: int, *,
               score_sigma: float | None = None) -> dict[str, Any]:
    """The price of a private selection over ``candidates`` (:func:`core.pipeline.tune_price`), before it runs.

    ``score_sigma``: the noise of a held-out score (None: judged by the number answered);
    the same value :func:`tune` is then given, so the price shown is the charge.
    """
    _, entry, _ = pipeline.tune_plan(list(candidates), int(m), score_sigma=score_sigma)
    out = price_entries(ds, [entry])
    out["guarantee"] = pipeline.tune_price(list(candidates), int(m), score_sigma=score_sigma)
    return out


def tune(ds: Dataset, ens: Any, candidates: Sequence[tuple[str, dict[str, Any]]], *,
         score_sigma: float | None = None, holdout: int | None = None, progress=None) -> Any:
    """"Tune privately": the best of ``candidates`` under one guarantee fixed first.

    Charged to the ledger before anything runs (refused past the budget, and on a real
    job before a budget is set).  Judged by the number answered (``score_sigma`` None) it
    runs on the ensemble's votes (:func:`core.pipeline.tune`).  Judged on ``holdout``
    held-out private rows, as a grid with a DP-training route must be, it is the command
    line's ``tune`` job (:func:`core.pipeline.tune_table`): the held-out rows split off, the
    teachers trained again on the rest (none of them may have seen a scoring row; the
    cached teachers have), each candidate scored by its student on the held-out rows.
    The selected run's labels become this session's release; their ``epsilon``/``delta``
    are the whole selection's.
    """
    require_budget(ds)
    rng = session.noise_rng(ds, "selection")
    cfg = st.session_state["ensemble_cfg"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        if score_sigma is None:
            sel = pipeline.tune(ens.votes, list(candidates), ledger=ledger(ds), rng=rng)
        else:
            sel = pipeline.tune_table(ds.private, ds.public_X, list(candidates), learner=cfg["learner"],
                                      params=dict(cfg["params"]), k=int(ens.teachers.k), holdout=holdout,
                                      score_sigma=float(score_sigma), ledger=ledger(ds), rng=rng,
                                      train_progress=progress)
    st.session_state["_release"] = {"result": sel.result, "mechanism": sel.mechanism, "asked": dict(sel.settings),
                                    "ens_key": ens.key, "ds_key": ds.key, "number": len(ledger(ds)),
                                    "selection": sel}
    return sel
