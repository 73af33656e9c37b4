"""The lesson's ledger on screen: the sidebar's line, a demonstration's banner, and the one-line summary.

Above :mod:`app_pages._ledger` (whose ledgers it shows) and :mod:`app_pages._lesson_ledger`
(the lesson's ledger and its words): ``app.py`` draws :func:`sidebar` and :func:`banner`;
:func:`ledger_summary` gives the ledger in one line for a projector banner.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from app_pages import _ledger as ledgers
from app_pages._lesson_ledger import (
    DEMONSTRATION_KEY,
    DEMONSTRATION_TEXT,
    _eps,
    demonstration,
)


# --------------------------------------------------------------------------------------
# The ledger in one line (sidebar, projector banner)
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LedgerSummary:
    """The lesson's ledger in one line, for the sidebar and a projector banner.

    Attributes
    ----------
    epsilon, delta : float
        The lesson's total.
    runs : int
    view_runs : int
        Runs made by the view just shown.
    view_growth : float
        How much they moved the total.
    demonstration : bool
        Whether runs are marked as a demonstration now.
    demonstration_runs : int
    demonstration_epsilon : float
        What the demonstration ledger holds (not charged to the lesson).
    text : str
        Everything above in one short line.
    """

    epsilon: float
    delta: float
    runs: int
    view_runs: int
    view_growth: float
    demonstration: bool
    demonstration_runs: int
    demonstration_epsilon: float
    text: str


def ledger_summary(ds=None) -> LedgerSummary | None:
    """The lesson's ledger in one line (None on a real job or without data): for the banner and the sidebar."""
    from app_pages import _session as session
    from app_pages._datasets import dataset
    from core.errors import PrivateLabelLabError

    try:
        ds = ds or dataset()
    except PrivateLabelLabError:
        return None
    if session.is_real_job(ds):
        return None
    fp = ledgers.lesson_key(ds)
    led = ledgers.lesson_ledger(fp)
    total = led.total()
    start = st.session_state.get("_view_marks", {}).get(fp, len(led))
    view_runs = max(0, len(led) - start)
    growth = total.epsilon - (led.total_at(start).epsilon if start else 0.0) if view_runs else 0.0
    demo = demonstration()
    shown = st.session_state.get("_demonstration_ledgers", {}).get(fp)
    d_runs = 0 if shown is None else len(shown)
    d_eps = 0.0 if not d_runs else shown.total().epsilon
    text = f"Lesson ledger: ε {_eps(total.epsilon)} over {len(led)} run{'s' if len(led) != 1 else ''}"
    if view_runs:
        text += f" · this view +{_eps(growth)} ({view_runs} run{'s' if view_runs != 1 else ''})"
    if demo:
        text += " · demonstration on: not charged"
    if d_runs:
        text += f" · not charged: {d_runs} run{'s' if d_runs != 1 else ''}, ε {_eps(d_eps)}"
    return LedgerSummary(float(total.epsilon), float(total.delta), len(led), view_runs, float(growth), demo, d_runs,
                         float(d_eps), text)


def sidebar(ds, where) -> None:
    """The lesson's ledger at the top of the sidebar: the total, this view, a demonstration switch, a new lesson."""
    fp = ledgers.lesson_key(ds)
    led = ledgers.lesson_ledger(fp)
    summary = ledger_summary(ds)
    where.markdown(f"**Your lesson's ledger: ε {led.total().epsilon:.4g} over {len(led)} "
                   f"run{'s' if len(led) != 1 else ''}.**")
    if summary is not None and summary.view_runs:
        where.caption(f"This view: {summary.view_runs} new run{'s' if summary.view_runs != 1 else ''}, "
                      f"the total grew by {_eps(summary.view_growth)} (how: the page's ledger section).")
    if st.session_state.pop("_new_lesson_shown", False):
        note = "**New lesson**: your ledger started again at zero."
        if len(led):
            runs = "its run is" if len(led) == 1 else f"those {len(led)} runs are"
            note += f" Then this page drew what it shows again: {runs} the first of the new lesson."
        where.info(note)
    on = where.toggle("Demonstration: don't charge my lesson", key=DEMONSTRATION_KEY,
                      help="For a lecturer showing something that is not part of the lesson's spending: while this is "
                      "on, runs go to a separate demonstration ledger, and every page says so. Teaching data only: "
                      "on a real job every run counts.")
    if on and summary is not None and summary.demonstration_runs:
        where.caption(f"Not charged to the lesson so far: {summary.demonstration_runs} run"
                      f"{'s' if summary.demonstration_runs != 1 else ''}, ε {_eps(summary.demonstration_epsilon)}.")
    if where.button("New lesson (reset my ledger)", key="new_lesson",
                    help="Starts your ledger on this data again at zero. Teaching data only: on a real job the ledger "
                    "belongs to the private data and is never reset."):
        ledgers.new_lesson(ds)
        st.session_state["_new_lesson_shown"] = True
        st.rerun()


def banner() -> None:
    """Above every page while a demonstration is marked: its runs are not charged to the lesson (teaching data only)."""
    if not demonstration():
        return
    from app_pages import _session as session
    from app_pages._datasets import dataset
    from core.errors import PrivateLabelLabError

    try:
        real = session.is_real_job(dataset())
    except PrivateLabelLabError:
        return
    if real:  # never on a real job: there every run counts (app_pages._ledger.ledger ignores the mark)
        st.session_state[DEMONSTRATION_KEY] = False
        return
    st.warning(DEMONSTRATION_TEXT)
