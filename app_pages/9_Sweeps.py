"""Sweeps against the bounds: answered, ⊥ and wrong labels against ε, T, k or m, per mechanism."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.errors import PrivateLabelLabError
from core.mechanisms import registry
from core.plan import TeacherQuality, simulate_votes
from core.plan.sweeps import sweep_against_bounds
from app_pages import _session as session
from app_pages import _cache as cache
from app_pages import _datasets as datasets
from app_pages import _charts as charts
from app_pages import _widgets as widgets
from app_pages import _lessons as lessons
from app_pages._text import literal

session.init()
ss = st.session_state

st.title("Sweeps against the bounds")
st.markdown(
    "Each point is the mean over repeated draws of the noise on the same votes, with a bar of one "
    "standard deviation; each thin dotted line with bar markers is that mechanism's own explicit bound, "
    "with its constants, at the same settings."
)

VALUES = {
    "epsilon": [0.5, 1.0, 2.0, 4.0, 8.0, 16.0],
    "T": [1, 2, 5, 10, 20, 50],
    "k": [25, 50, 100, 200, 400, 800],
}
AXES = {"epsilon": "ε", "T": "cutoff T (BTT's family)", "k": "teachers k", "m": "queries m"}


@st.cache_data(max_entries=32, show_spinner="Drawing the noise…")
def _sweep(name, settings, vary, values, counts, truth, draws, seed, quality):
    q = None if quality is None else TeacherQuality(*quality)
    return sweep_against_bounds(name, dict(settings), vary=vary, values=list(values), counts=counts, truth=truth,
                                draws=draws, rng=seed, quality=q)


with session.shown_errors():
    ds = datasets.dataset()
    count_mechanisms = [n for n in registry.names() if registry.get(n).inputs == "counts"]
    default = [n for n in ("btt", "lnmax", "gnmax", "confident-gnmax") if n in count_mechanisms]
    chosen = st.multiselect("Mechanisms", count_mechanisms, default=default, format_func=widgets.mechanism_title,
                            key="w_sweep_mechanisms")
    top = st.columns(3)
    vary = top[0].selectbox("Sweep", list(AXES), format_func=AXES.get, key="w_sweep_vary")
    if vary == "T":
        chosen = [n for n in chosen if "T" in registry.get(n).parameter_names]
    draws = top[1].slider("Draws of the noise per point", 5, 50, 10, step=5, key="w_sweep_draws")
    epsilon = top[2].number_input("ε (when ε is not swept)", 0.1, 50.0, float(session.privacy().get("epsilon", 4.0)),
                                  key="w_sweep_epsilon")
    controls = st.container()
    charts_col = st.container()
    with controls:
        delta = float(session.privacy().get("delta", 1e-5))
        teaching = ds.teaching_split and not session.is_real_job(ds) and ds.public_y is not None
        if vary == "k" or not teaching:
            st.caption("Votes simulated from an assumed teacher quality (public, costs nothing):")
            q = st.columns(2)
            acc = q[0].slider("A teacher's accuracy on an easy query", 0.5, 1.0, 0.85, 0.05, key="w_sweep_acc")
            hard = q[1].slider("Share of hard queries", 0.0, 0.9, 0.2, 0.05, key="w_sweep_hard")
            quality = (float(acc), float(hard), 1.0 / max(ds.n_classes, 2) + 0.05)
        else:
            quality = None

    if teaching and vary != "k":
        ens = cache.ensemble()
        counts, truth = np.asarray(ens.votes), np.asarray(ds.public_y, dtype=np.int64)
        source = ("the teaching data's votes (NON-PRIVATE teaching view: the same votes, noise drawn again and "
                  "again; never exported, and not counted on your ledger: a view of the raw votes has no "
                  "privacy left to spend; on a real job the sweep uses simulated votes)")
    else:
        k = int(ss["ensemble_cfg"]["k"])
        sim = simulate_votes(m=max(ds.n_public, 50), k=k, n_classes=max(ds.n_classes, 2),
                             quality=TeacherQuality(*quality), rng=session.seed())
        counts, truth = sim.counts, sim.truth
        source = "votes simulated from the assumed teacher quality above (public; costs no privacy)"
    m = counts.shape[0]
    values = VALUES.get(vary) or sorted({max(10, int(m * f)) for f in (0.1, 0.25, 0.5, 1.0)})
    points = {}
    skipped = []
    for name in chosen:
        settings = {"epsilon": float(epsilon), "delta": delta}
        if "T" in registry.get(name).parameter_names:
            settings["T"] = int(session.privacy().get("T", 5))
        try:
            points[name] = _sweep(name, tuple(sorted(settings.items())), vary, tuple(values), counts, truth,
                                  int(draws), session.seed(), quality)
        except PrivateLabelLabError as exc:
            skipped.append(f"{widgets.mechanism_title(name)}: {literal(exc)}")

    with charts_col:
        st.caption(f"On {source}: m = {m:,} queries.")
        if not points:
            st.info("Choose at least one mechanism" + (" with a cutoff T" if vary == "T" else "") + ".")
        else:
            t1, t2, t3 = st.tabs(["Answered", "⊥", "Wrong labels"])
            t1.plotly_chart(charts.sweep_figure(points, vary, "answered"), key="sweep_answered")
            t2.plotly_chart(charts.sweep_figure(points, vary, "bottom"), key="sweep_bottom")
            t3.plotly_chart(charts.sweep_figure(points, vary, "wrong"), key="sweep_wrong")
        for text in skipped:
            st.caption(f"Not drawn: {text}")
        refused = [f"{widgets.mechanism_title(n)} at {AXES[vary]} = {p.value:g}" for n, pts in points.items()
                   for p in pts if not p.feasible and not np.isfinite(p.answered)]
        if refused:
            st.caption("Refused settings (no point): " + "; ".join(refused) + ".")

    st.subheader("The bounds drawn, with their constants")
    for name in points:
        pic = registry.get(name).picture
        if pic is None:
            continue
        drawn = "thin dotted line with bar markers" if pic.bound_rates is not None else "nothing drawn"
        st.markdown(f"**{widgets.mechanism_title(name)}** ({drawn}): {pic.bound}")
    if "confident-gnmax" in points and vary == "epsilon":
        st.info(lessons.CONFIDENT_NOTE)
    st.caption("Only explicit bounds with their constants are drawn here; the Bounds page keeps BTT's rates "
               "'up to constants' (shape only).")
