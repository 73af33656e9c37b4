"""The plan of a real job: predictions from public quantities only (:mod:`core.plan`), cached.

A prediction reads n (private rows), m (public queries), k (teachers), the number of
classes, the mechanism and its settings, and an **assumed** teacher quality (a public
assumption the user sets: a teacher's accuracy on easy queries and the share of hard
queries on which teachers split); the DP-training routes read the public rows' encoding
and an assumed accuracy of a non-private logistic regression instead of the teachers
(:mod:`core.plan.trained`).  It simulates votes under that assumption and runs the
registered mechanisms on them: zero privacy cost, nothing private is read.

Predictions are cached on their inputs for the whole process (``st.cache_data``).  How
quickly one comes back says whether another session asked the same before, so the inputs
are shared only while they are public: per row (no privacy unit declared) n is public under
the lab's adjacency (docs/design.md §1), and every session shares the predictions; with a
declared privacy unit the number of rows is not public (only the number of persons is,
§1.2), and the predictions of that data are cached under the session's own key
(:func:`cache_scope`).  The simulation's seed is a fixed public one (a prediction is a
public computation; the same inputs always give the same numbers).
"""

from __future__ import annotations

import secrets
from typing import Any, Mapping

import streamlit as st

from app_pages import _session as session

PREDICTED = "predicted — no private data used"
"""The mark every predicted number carries."""

QUALITY_SECTION = "plan_quality"
DEFAULT_QUALITY = {"accuracy": 0.85, "hard_share": 0.2, "majority": 0.5}
MODEL_ACCURACY = "model_accuracy"
"""The assumed accuracy of a non-private logistic regression on all private rows (DP-training routes); set on
first view to the teachers' noise-free plurality (:func:`core.plan.trained.trained_accuracy_default`)."""
ROUTE_ACCURACY = "route_accuracy"
"""Optional: the assumed accuracy of each DP-training route's own model without its noise (``{route: A}``;
:func:`core.plan.predict`'s ``route_accuracy``); a route named here is predicted from it."""
ROUTES = ("gnmax", "confident-gnmax", "dp-logistic", "dp-naive-bayes")
"""The routes the plan's choice is made among on the labeling page (:func:`core.plan.best`)."""
PLAN_SEED = 0
"""The public seed of the simulated votes (predictions are public computations)."""
DRAWS = 20
"""Draws of the noise per prediction (mean and spread)."""
TABLE_DRAWS = 8
"""Draws per row of a predicted table (many rows: fewer draws each)."""
CURVE_DRAWS = 3
"""Draws per point of a predicted curve (many points: fewer draws each)."""
SLOW_TO_SIMULATE = ("certified-gnmax", "btt-soft")
"""Mechanisms left off the predicted curves (slow to simulate at every ε: a private test, or teacher scores; their
table row is predicted)."""


def cache_scope(ds) -> str:
    """The key that separates this session's cached predictions from other sessions'.

    "" (shared by every session) when ``ds`` has no declared privacy unit: its number of rows
    is public then.  With a unit the number of rows is not public, and a cache shared across
    sessions would let one session time whether another loaded data of some row count: the
    session's own random key keeps its entries apart.
    """
    if getattr(ds.private, "unit", None) is None:
        return ""
    return st.session_state.setdefault("_plan_cache_scope", secrets.token_hex(16))


def quality() -> tuple[float, float, float]:
    """The assumed teacher quality of this session: (accuracy, share of hard queries, majority share)."""
    ss = st.session_state
    q = ss.setdefault(QUALITY_SECTION, dict(DEFAULT_QUALITY))
    for name, value in DEFAULT_QUALITY.items():
        q.setdefault(name, value)
    return float(q["accuracy"]), float(q["hard_share"]), float(q["majority"])


def quality_controls(where=None) -> tuple[float, float, float]:
    """The assumed-teacher-quality control, labelled as an assumption; returns the values."""
    where = where if where is not None else st
    quality()
    where.markdown("**Assumed teacher quality** (an assumption you make, not measured on the private data)")
    c = [where, where, where]  # one under the other: the labels stay whole at 1024 px
    acc = c[0].slider("Assumed teacher accuracy (easy queries)", 0.5, 1.0, step=0.01,
                      key=session.widget_key(QUALITY_SECTION, "accuracy"),
                      help="An assumption: the chance that one teacher gives the true class on an easy query. "
                      "Nothing private is read to set it.")
    hard = c[1].slider("Assumed share of hard queries", 0.0, 1.0, step=0.05,
                       key=session.widget_key(QUALITY_SECTION, "hard_share"),
                       help="An assumption: the share of public queries on which the teachers split "
                       "(about as many vote for the runner-up as for the true class).")
    major = c[2].slider("Assumed share of the most common class", 0.0, 1.0, step=0.01,
                        key=session.widget_key(QUALITY_SECTION, "majority"),
                        help="An assumption: the share of public queries in the most common class (the rest "
                        "split evenly). Always answering that class is right this often: a useful labeling "
                        "must beat it.")
    for name, value in (("accuracy", acc), ("hard_share", hard), ("majority", major)):
        session.remember(QUALITY_SECTION, name, float(value))
    q = st.session_state[QUALITY_SECTION]
    if q.get(MODEL_ACCURACY) is None:  # first view: the teachers' noise-free plurality, one assumption for both
        from core.plan.trained import trained_accuracy_default

        q[MODEL_ACCURACY] = round(trained_accuracy_default(teacher_quality(acc, hard, major, 2), 2), 2)
    model = c[0].slider("Assumed accuracy of a non-private logistic regression (DP-training routes)", 0.5, 1.0,
                        step=0.01, key=session.widget_key(QUALITY_SECTION, MODEL_ACCURACY),
                        help="An assumption: how often a logistic regression trained on all private rows WITHOUT "
                        "privacy would be right. The DP logistic regression and the DP naive Bayes are predicted "
                        "from it, the public rows' encoding, n and ε. Nothing private is read to set it.")
    session.remember(QUALITY_SECTION, MODEL_ACCURACY, float(model))
    route_controls(where)
    return quality()


def route_controls(where) -> dict[str, float]:
    """Optional per-route assumptions: each DP-training route's own model without its noise."""
    from core.mechanisms import registry

    q = st.session_state[QUALITY_SECTION]
    given = dict(q.get(ROUTE_ACCURACY) or {})
    box = where.expander("DP-training routes: each route's own accuracy without noise (optional)",
                         expanded=bool(given))
    box.caption("An assumption, if you know it (from a similar public table, say): how often the route's own "
                "model, trained on all private rows WITHOUT its noise (at its regularization for ε = 1), would be "
                "right. Given, that route is predicted from it: what privacy costs, and nothing of the route's gap to "
                "a plain logistic regression, which depends on how the label lies (design §10.7). Empty: the "
                "logistic-regression assumption above.")
    for route in ("dp-logistic", "dp-naive-bayes"):
        key = f"w_{QUALITY_SECTION}_{ROUTE_ACCURACY}_{route}"
        if key not in st.session_state:
            st.session_state[key] = given.get(route)
        value = box.number_input(f"{registry.get(route).title} without its noise", min_value=0.01, max_value=1.0,
                                 step=0.01, value=None, key=key, placeholder="not assumed")
        if value is None:
            given.pop(route, None)
        else:
            given[route] = float(value)
    q[ROUTE_ACCURACY] = given
    return given


def route_accuracy() -> dict[str, float]:
    """The session's assumed accuracies of the DP-training routes' own models without noise (may be empty)."""
    return dict(st.session_state.get(QUALITY_SECTION, {}).get(ROUTE_ACCURACY) or {})


def model_accuracy() -> float | None:
    """The session's assumed accuracy of a non-private logistic regression (None: not set yet, the plan's default)."""
    value = st.session_state.get(QUALITY_SECTION, {}).get(MODEL_ACCURACY)
    return None if value is None else float(value)


def public_rows(ds):
    """The public rows of ``ds`` as the DP-training routes encode them (:class:`core.plan.PublicRows`), kept
    per dataset in the session (public data: no private row is read).

    An upload without a public file (a one-file job) has no public rows: its queries are rows of the
    private file, so the plan reads none of them and predicts on a stand-in of as many uniform columns
    as the file has features (:meth:`core.plan.PublicRows.standin`, as ``recommend`` without
    ``--public``): its numbers are functions of m and the header only, equal on neighbouring files."""
    from core.plan import PublicRows

    store = st.session_state.setdefault("_plan_public_rows", {})
    key = (ds.key, ds.n_public, tuple(map(str, ds.public_X.columns)))
    if key not in store:
        store.clear()
        if ds.source == "upload" and not ds.extra.get("two_file"):  # the queries are private rows
            store[key] = PublicRows.standin(ds.n_public, max(1, ds.public_X.shape[1]))
        else:
            store[key] = PublicRows.from_frame(ds.public_X)
    return store[key], repr(key)


def set_quality(name: str, value: float) -> None:
    """Set one assumed number (e.g. from a priced private estimate); its slider follows."""
    quality()
    st.session_state[QUALITY_SECTION][name] = float(value)
    st.session_state.pop(f"w_{QUALITY_SECTION}_{name}", None)


@st.cache_data(max_entries=2048, show_spinner=False)
def _predict(mechanism: str, settings: tuple, n: int, m: int, k: int, n_classes: int,
             accuracy: float, hard_share: float, majority: float, draws: int, advise: bool,
             model: float | None = None, public_key: str | None = None, scope: str = "", _public=None,
             routes: tuple = ()):
    # scope: only a part of the cache key (cache_scope)
    from core.plan import predict

    return predict(mechanism, dict(settings), n=n, m=m, k=k, n_classes=n_classes,
                   quality=teacher_quality(accuracy, hard_share, majority, n_classes), draws=draws, rng=PLAN_SEED,
                   advise=advise, public=_public, model_accuracy=model, route_accuracy=dict(routes))


def teacher_quality(accuracy: float, hard_share: float, majority: float, n_classes: int):
    """The :class:`core.plan.TeacherQuality` of the three assumed numbers (the majority share is
    raised to at least 1/classes; the other classes share the rest evenly)."""
    from core.plan import TeacherQuality

    c = int(n_classes)
    top = min(1.0, max(float(majority), 1.0 / c))
    shares = (top,) + ((1.0 - top) / (c - 1),) * (c - 1)
    return TeacherQuality(accuracy=accuracy, hard_share=hard_share, class_shares=shares)


def predict(mechanism: str, settings: Mapping[str, Any], *, n: int, m: int, k: int, n_classes: int,
            draws: int = DRAWS, advise: bool = True, public=None, scope: str = ""):
    """:func:`core.plan.predict` at the session's assumed quality (cached on every input and ``scope``,
    :func:`cache_scope`).

    ``public``: ``(PublicRows, key)`` of :func:`public_rows`, for the DP-training routes."""
    acc, hard, major = quality()
    rows, key = public if public is not None else (None, None)
    return _predict(mechanism, tuple(sorted(dict(settings).items())), int(n), int(m), int(k), int(n_classes),
                    acc, hard, major, int(draws), bool(advise), model_accuracy(), key, str(scope), _public=rows,
                    routes=tuple(sorted(route_accuracy().items())))


def predict_for(ds, k: int, mechanism: str, settings: Mapping[str, Any] | None = None, *, draws: int = DRAWS,
                advise: bool = True):
    """The prediction for ``mechanism`` at the session's request (plus ``settings``) on ``ds`` with k teachers."""
    from core.mechanisms import registry

    public = public_rows(ds) if registry.get(mechanism).inputs == "rows" else None
    return predict(mechanism, session.request(mechanism, dict(settings or {})), n=ds.n_private, m=ds.n_public, k=k,
                   n_classes=ds.n_classes, draws=draws, advise=advise, public=public, scope=cache_scope(ds))


def choice_for(ds, k: int):
    """The plan's choice among :data:`ROUTES` at the session's ε (:func:`core.plan.best`), and every prediction."""
    from core.plan import best

    preds = [predict_for(ds, k, name, draws=TABLE_DRAWS, advise=False) for name in ROUTES]
    return best(preds), preds


def routes_table(where, preds) -> None:
    """The plan's routes side by side (:func:`choice_for`): answered, right, the DP-training routes' range."""
    import pandas as pd

    from core.mechanisms import registry

    rows = []
    for p in preds:
        right = "—" if p.answered == 0 else f"{p.label_accuracy:.0%}"
        span = ("—" if p.accuracy_range is None else
                f"{p.accuracy_range[0]:.0%}–{p.accuracy_range[1]:.0%}")
        rows.append({"route": registry.get(p.mechanism).title, "answered (plan)": pm(p.answered, p.answered_sd),
                     "right (plan)": right, "right, over the label's directions": span,
                     "useful (plan)": "yes" if p.useful else "no"})
    where.dataframe(pd.DataFrame(rows), hide_index=True)
    if any(p.accuracy_range is not None for p in preds):
        where.caption(f"All {PREDICTED}, at the assumed qualities. A DP-training route's 'right' also rests on how the "
                      "label lies among the columns, which the public rows cannot tell: the range is the least and "
                      "the most over the ways the plan tries (a random direction, the public rows' leading or "
                      "trailing principal directions, either class on either side; design §10.7).")
    grounded = [p for p in preds if p.route_accuracy is not None]
    if grounded:
        from core.mechanisms import registry

        where.caption("Predicted from the assumed accuracy of the route's own model without its noise: "
                      + ", ".join(f"{registry.get(p.mechanism).title} ({p.route_accuracy:.0%})" for p in grounded)
                      + ". Their 'right' is that less what privacy costs.")


def pm(mean: float, sd: float | None) -> str:
    """"1,234 ± 12": a predicted count with its spread over the draws."""
    if sd is None or sd != sd:
        return f"{mean:,.0f}"
    return f"{mean:,.0f} ± {sd:,.0f}"


def advice_text(pred) -> str:
    """The plan's advice with the mechanism named by its registered title (no code name on a page)."""
    from core.mechanisms import registry

    text = pred.advice or ""
    return text.replace(f"Not useful: {pred.mechanism} ", f"Not useful: {registry.get(pred.mechanism).title} ", 1)


def show_prediction(where, pred, *, m: int) -> None:
    """The predicted counts as metrics, each marked predicted, and what the plan advises."""
    c = where.columns(2) + where.columns(2)  # two by two: the values stay whole at 1024 px
    # Short labels and no help icons: they stay whole at 1024 px; the caption below says what they are.
    c[0].metric("Answered (plan)", pm(pred.answered, pred.answered_sd))
    c[1].metric("Correct (plan)", pm(pred.correct, pred.correct_sd))
    c[2].metric("⊥ (plan)", pm(pred.bottom, pred.bottom_sd))
    c[3].metric("Not processed (plan)", pm(pred.not_processed, pred.not_processed_sd))
    if pred.trained:
        ground = (f"the assumed non-private logistic regression's ({pred.model_accuracy:.0%}) less the drop the "
                  "route's noise causes" if pred.route_accuracy is None else
                  f"the assumed accuracy of this route's own model without its noise ({pred.route_accuracy:.0%}) "
                  "less what privacy costs it"
                  + ("" if not pred.route_unreached else
                     f" (the stand-in task could not make that model right {pred.route_accuracy:.0%} of the time: it "
                     f"stops at {pred.route_reached:.0%}, so the noise's cost is taken there)"))
        where.caption(f"All four are {PREDICTED} (mean ± spread over {pred.draws} draws of the noise): one model "
                      "trained with DP on all private rows labels every public row, so all are answered; its "
                      f"accuracy is {ground} on a stand-in task built "
                      f"from the public rows (m = {m:,}, n = {pred.n:,}); no teachers are used."
                      + ("" if pred.accuracy_range is None else
                         f" How the label lies among the columns, which the public rows cannot tell, moves it "
                         f"between {pred.accuracy_range[0]:.0%} and {pred.accuracy_range[1]:.0%} right."))
    else:
        where.caption(f"All four are {PREDICTED} (mean ± spread over the draws): votes simulated from n, m, k, the number of classes and the "
                      f"assumed teacher quality, run through the same mechanism {pred.draws} times "
                      f"(m = {m:,} queries).")
    if not pred.feasible and pred.reason:
        where.error("Predicted: these settings can answer (almost) nothing. " + pred.reason)
    elif not pred.useful:
        where.warning("**No useful result predicted**: at these settings the labels would be no better than "
                      "always answering the majority class. " + advice_text(pred))
    below = pred.useful_below
    if below == below:  # where the verdict turns: the majority share is assumed, never read (design.md §10.9)
        where.caption(f"Useful only while the most common class holds under **{max(0.0, below):.0%}** of the rows. "
                      f"Its share is an assumption ({pred.majority_share:.0%}, the slider *Assumed share of the most "
                      "common class*): the real share is private and is not read. On a skewed table set it, or buy "
                      "a private estimate below.")
