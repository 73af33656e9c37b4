"""The privacy ledger of the app's private data, and the release (docs/design.md §9).

Every labeling run on the private data is charged to that data's ledger (:func:`ledger`,
one per private dataset, process-wide) before it runs; a **release** (:func:`release`) is a
fresh run at settings fixed before it is shown, and the only run the Student & export page
lets the user download.
"""

from __future__ import annotations

import threading
import warnings
from typing import TYPE_CHECKING, Any

import streamlit as st

from core import pipeline
from core.errors import PrivacyWarning
from pages import _session as session
from pages._datasets import Dataset, dataset

if TYPE_CHECKING:  # annotations only: the ensemble cache imports this module
    from pages._cache import Ensemble

# --------------------------------------------------------------------------------------
# The privacy ledger of the private data, and the release (docs/design.md §9)
# --------------------------------------------------------------------------------------

BUDGET_SECTION = "ledger_budget"
"""Session-state section of the optional total budget: ``{"epsilon": 0 (none) or ε, "delta": δ}``."""

DEFAULT_BUDGET_DELTA = 1e-4
"""The budget's δ offered first (the runs' δs and composition slacks add up to the total δ)."""

SPENT_EXPLANATION = (
    "Every labeling run the app made on these private rows counts, including runs only looked at "
    "(each new setting, every Compare row and curve point, each release); they compose into this "
    "total. Showing a run again costs nothing: it is the same draw."
)


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


_FINGERPRINTS: dict[int, tuple] = {}
_FINGERPRINT_LOCK = threading.Lock()


def ledger(ds: Dataset | None = None, *, ens: Ensemble | None = None):
    """The privacy ledger of the current (or given) private data, with this session's budget.

    One ledger per private dataset for the whole process
    (:func:`core.accounting.ledger_for` on :func:`fingerprint`): two sessions on the same
    private rows add to the same total.  The optional budget set on the Private labeling
    page is applied to it here, before every charge (the last budget set for this data
    applies).
    """
    from core.accounting import ledger_for

    table = ens._table if ens is not None else (ds or dataset()).private
    led = ledger_for(fingerprint(table))
    wanted = st.session_state.get(BUDGET_SECTION) or {}
    eps = wanted.get("epsilon")
    if eps is not None and float(eps) > 0:
        led.set_budget(epsilon=float(eps), delta=float(wanted.get("delta", DEFAULT_BUDGET_DELTA)))
    elif led.budget is not None:
        led.set_budget(epsilon=None)
    return led


def show_spent(where=None, ds: Dataset | None = None, *, ens: Ensemble | None = None) -> None:
    """Show "Spent on this data so far: (ε, δ)" with its one-line explanation."""
    where = where if where is not None else st
    led = ledger(ds, ens=ens)
    total = led.total()
    budget = led.budget
    of = "" if budget is None else f" of a budget (ε, δ) = ({budget.epsilon:.4g}, {budget.delta:.3g})"
    where.markdown(f"**Spent on this data so far: (ε, δ) = ({total.epsilon:.4g}, {total.delta:.3g})** "
                   f"over {len(led)} run{'s' if len(led) != 1 else ''}{of}.")
    where.caption(SPENT_EXPLANATION)


def release(ds: Dataset, ens: Ensemble, mechanism: str, asked: dict[str, Any]) -> dict[str, Any]:
    """A **release**: a fresh run at ``(mechanism, asked)``, fixed before it is shown.

    Never taken from the memo of :func:`labeling`: a new draw of the noise (in demo
    mode a fixed seed other than the exploring runs' one, so the release is still a new
    draw and still repeats), charged to the ledger before it runs (BudgetExhausted past
    the budget: nothing runs and the previous release, if any, stays).  Stored in this
    session as the one run the downloads export.
    """
    led = ledger(ds, ens=ens)
    rng = session.DEMO_SEED + 1 if session.demo_mode() else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        result = pipeline.label(ens.inputs(mechanism), mechanism, dict(asked), rng=rng, ledger=led)
    st.session_state["_release"] = {"result": result, "mechanism": mechanism, "asked": dict(asked),
                                    "ens_key": ens.key, "ds_key": ds.key, "number": len(led)}
    return st.session_state["_release"]


def current_release(ds: Dataset, ens: Ensemble) -> dict[str, Any] | None:
    """This session's release on the current data and ensemble, or None."""
    rel = st.session_state.get("_release")
    if rel is None or rel["ens_key"] != ens.key or rel["ds_key"] != ds.key:
        return None
    return rel
