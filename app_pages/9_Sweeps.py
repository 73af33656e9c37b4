"""Sweeps against the bounds: answered, ⊥ and wrong labels against ε, δ, T, k or m, per mechanism."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.errors import PrivateLabelLabError
from core.mechanisms import registry
from core.plan import TeacherQuality, simulate_votes
from core.plan.sweeps import ROWS_VARY, measured_quality, sweep_against_bounds
from app_pages import _session as session
from app_pages import _cache as cache
from app_pages import _datasets as datasets
from app_pages import _charts as charts
from app_pages import _style as style
from app_pages import _lessons as lessons
from app_pages._text import literal

session.init()
ss = st.session_state

st.title("Sweeps against the bounds")
st.markdown(
    "Each point is the mean over repeated draws of the noise on the same votes, with a bar of one "
    "standard deviation. Measured lines are thick, one style per mechanism; each bound is drawn in the one "
    "bound style (a thin dotted line with bar markers, in its mechanism's colour), with its constants, at the "
    "same settings."
)

VALUES = {
    "epsilon": [0.5, 1.0, 2.0, 4.0, 8.0, 16.0],
    "delta": [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8],
    "T": [1, 2, 5, 10, 20, 50],
    "k": [25, 50, 100, 200, 400, 800],
}
ROW_DRAWS = 3  # trainings per point of a model trained on the private rows (seconds each on MNIST)
AXES = {"epsilon": "ε", "delta": "δ", "T": "cutoff T (BTT's family)", "k": "teachers k", "m": "queries m"}


@st.cache_data(max_entries=32, show_spinner="Drawing the noise…")
def _sweep(name, settings, vary, values, counts, truth, draws, seed, quality, n, rows_key, _rows=None):
    q = None if quality is None else TeacherQuality(**dict(quality))
    return sweep_against_bounds(name, dict(settings), vary=vary, values=list(values), counts=counts, truth=truth,
                                draws=draws, rng=seed, quality=q, n=n, rows=_rows)


def _quality_key(q: TeacherQuality) -> tuple:
    return tuple(sorted((k, v) for k, v in q.__dict__.items()))


with session.shown_errors():
    ds = datasets.dataset()
    teaching = ds.teaching_split and not session.is_real_job(ds) and ds.public_y is not None
    ens = cache.ensemble() if teaching else None
    # Every mechanism that takes ε and whose inputs this data has: votes, scores (two classes), or
    # the private rows themselves (a model trained with DP; teaching data only: a real job's sweep reads
    # no private data).
    offered = [n for n in registry.names() if registry.get(n).takes_epsilon
               and (registry.get(n).inputs == "counts"
                    or (registry.get(n).inputs == "scores" and ds.n_classes == 2)
                    or (registry.get(n).inputs == "rows" and teaching))]
    left_out = [style.short_title(n) for n in registry.names() if n not in offered and registry.get(n).takes_epsilon]
    default = [n for n in ("btt", "lnmax", "gnmax", "confident-gnmax") if n in offered]
    chosen = st.multiselect("Mechanisms", offered, default=default, format_func=style.short_title,
                            key="w_sweep_mechanisms")
    if left_out:
        st.caption(f"Not offered here: {', '.join(left_out)} "
                   + ("(they read teacher scores, which are for two classes, or are trained on the private rows, "
                      "which a sweep on a real job never reads)." if not teaching
                      else "(they read teacher scores, which are for two classes)."))
    top = st.columns(3)
    vary = top[0].selectbox("Sweep", list(AXES), format_func=AXES.get, key="w_sweep_vary")
    draws = top[1].slider("Draws of the noise per point", 5, 50, 10, step=5, key="w_sweep_draws")
    epsilon = top[2].number_input("ε (when ε is not swept)", 0.1, 50.0, float(session.privacy().get("epsilon", 4.0)),
                                  key="w_sweep_epsilon")
    not_drawn = []
    if vary == "T":
        not_drawn += [f"{style.short_title(n)}: it has no cutoff T" for n in chosen
                      if "T" not in registry.get(n).parameter_names]
        chosen = [n for n in chosen if "T" in registry.get(n).parameter_names]
    if vary not in ROWS_VARY:
        not_drawn += [f"{style.short_title(n)}: trained on the private rows, it has no teachers and no cutoff"
                      for n in chosen if registry.get(n).inputs == "rows"]
        chosen = [n for n in chosen if registry.get(n).inputs != "rows"]
    delta = float(session.privacy().get("delta", 1e-5))
    n_private = int(ds.n_private)
    k_now = int(ss["ensemble_cfg"]["k"]) if ens is None else int(ens.teachers.k)
    quality, assumption = None, None
    if teaching and vary == "k":
        # The real teachers' quality (NON-PRIVATE teaching view), at their rows per teacher: with k
        # teachers each has n/k rows, and the simulated accuracy moves with it.
        q = measured_quality(ens.votes, ds.public_y, rows_per_teacher=max(n_private // k_now, 1))
        quality = q
        assumption = (f"Votes of k teachers are simulated with the quality measured from your {k_now:,} real teachers "
                      f"(NON-PRIVATE: read from their votes and the true labels): {q.describe()}. With k teachers "
                      f"each is trained on {n_private:,}/k rows, and a teacher's error moves with the rows it has "
                      "(error × √(rows now / rows then)).")
    elif not teaching:
        st.caption("Votes simulated from an assumed teacher quality (public, costs nothing; a real job's sweep reads "
                   "no private data):")
        q = st.columns(2)
        acc = q[0].slider("Assumed: a teacher's accuracy on an easy query", 0.5, 1.0, 0.85, 0.05, key="w_sweep_acc")
        hard = q[1].slider("Assumed: share of hard queries", 0.0, 0.9, 0.2, 0.05, key="w_sweep_hard")
        quality = TeacherQuality(accuracy=float(acc), hard_share=float(hard),
                                 hard_accuracy=1.0 / max(ds.n_classes, 2) + 0.05)
        assumption = f"Assumed teacher quality: {quality.describe()}."

    rows_key, rows = None, None
    if teaching and vary != "k":
        counts, truth = np.asarray(ens.votes), np.asarray(ds.public_y, dtype=np.int64)
        source = ("the teaching data's votes (NON-PRIVATE teaching view: the same votes, noise drawn again and "
                  "again; a model trained on the rows is trained again for every draw; never exported, and not "
                  "counted on your ledger: a view of the raw votes has no privacy left to spend; on a real job the "
                  "sweep uses simulated votes)")
        if any(registry.get(n).inputs == "rows" for n in chosen):
            rows_key = ds.key
            rows = ens.inputs(next(n for n in chosen if registry.get(n).inputs == "rows"))
    else:
        sim = simulate_votes(m=max(ds.n_public, 50), k=k_now, n_classes=max(ds.n_classes, 2), quality=quality,
                             rng=session.seed(), n=n_private if quality.rows is not None else None)
        counts, truth = sim.counts, sim.truth
        source = ("votes simulated from the teacher quality below (public; costs no privacy)" if teaching else
                  "votes simulated from the assumed teacher quality above (public; costs no privacy)")
    m = counts.shape[0]
    values = VALUES.get(vary) or sorted({max(10, int(m * f)) for f in (0.1, 0.25, 0.5, 1.0)})
    points = {}
    skipped = []
    for name in chosen:
        settings = {"epsilon": float(epsilon), "delta": delta}
        if "T" in registry.get(name).parameter_names:
            settings["T"] = int(session.privacy().get("T", 5))
        is_rows = registry.get(name).inputs == "rows"
        try:
            points[name] = _sweep(name, tuple(sorted(settings.items())), vary, tuple(values), counts, truth,
                                  min(int(draws), ROW_DRAWS) if is_rows else int(draws), session.seed(),
                                  None if quality is None else _quality_key(quality),
                                  n_private if quality is not None and quality.rows is not None else None,
                                  rows_key if is_rows else None, _rows=rows if is_rows else None)
        except PrivateLabelLabError as exc:
            skipped.append(f"{style.short_title(name)}: {literal(exc)}")

    st.caption(f"On {source}: m = {m:,} queries."
               + (f" A model trained on the private rows is trained {min(int(draws), ROW_DRAWS)} times per point "
                  "(each training takes seconds on large data)."
                  if any(registry.get(n).inputs == "rows" for n in points) else ""))
    if assumption:
        st.info(assumption)
    if not points:
        st.info("Choose at least one mechanism" + (" with a cutoff T" if vary == "T" else "") + ".")
    else:
        tabs = st.tabs(["Answered", "⊥", "Wrong labels", "Not processed"])
        for tab, rate in zip(tabs, ("answered", "bottom", "wrong", "unprocessed")):
            tab.plotly_chart(charts.sweep_figure(points, vary, rate), key=f"sweep_{rate}")
            for text in charts.sweep_overlaps(points, rate):
                tab.caption(f"**{text}** The lines underneath are hidden by the one on top.")
        # Where a run halts, the queries after it are neither answered nor ⊥: said in words, with the share.
        halted = {n: max(p.unprocessed for p in pts if np.isfinite(p.unprocessed))
                  for n, pts in points.items() if any(np.isfinite(p.unprocessed) for p in pts)}
        halted = {n: u for n, u in halted.items() if u > 0}
        if halted:
            st.caption("Answered, ⊥ and wrong do not add up to all queries where a run stops early: "
                       + "; ".join(f"{style.short_title(n)} leaves up to {u:.0%} of the queries **not processed**"
                                   for n, u in halted.items())
                       + ". BTT stops after T ⊥ (a certified run whose test fails labels none): the queries after "
                       "that get no label and are not ⊥ (the Not processed tab).")
    for name, pts in points.items():
        # A bound that holds only under conditions (BTT's Theorem 3.2) is drawn only where they hold.
        failed = [p for p in pts if p.bound_note]
        if failed:
            at = ", ".join(f"{p.value:g}" for p in failed)
            where = "at any point" if len(failed) == len(pts) else f"at {AXES[vary]} = {at}"
            shown = min(failed, key=lambda p: abs(np.log(p.value / float(epsilon))) if vary == "epsilon" else 0.0)
            st.caption(f"{style.short_title(name)}: Theorem 3.2's error bound is not drawn {where}, because its "
                       f"conditions fail there. At {AXES[vary]} = {shown.value:g}: {shown.bound_note}")
    for text in not_drawn + skipped:
        st.caption(f"Not drawn: {text}.".replace("..", "."))
    refused = [f"{style.short_title(n)} at {AXES[vary]} = {p.value:g}" for n, pts in points.items()
               for p in pts if not p.feasible and not np.isfinite(p.answered)]
    if refused:
        st.caption("Refused settings (no point): " + "; ".join(refused) + ".")

    st.subheader("The bounds drawn, with their constants")
    for name in points:
        pic = registry.get(name).picture
        if pic is None:
            st.markdown(f"**{style.short_title(name)}**: no explicit bound is drawn for a model trained on the "
                        "private rows; its measured line stands alone.")
            continue
        drawn = "thin dotted line with bar markers" if pic.bound_rates is not None else "nothing drawn"
        st.markdown(f"**{style.short_title(name)}** ({drawn}): {pic.bound}")
    if "confident-gnmax" in points and vary == "epsilon":
        st.info(lessons.CONFIDENT_NOTE)
    st.caption("Only explicit bounds with their constants are drawn here; the Bounds page keeps BTT's rates "
               "'up to constants' (shape only).")
