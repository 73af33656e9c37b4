"""Bounds: BTT's theory calculators (core.theory) as curves, with the user's run overlaid."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core import nonprivate, theory
from core.errors import PrivateLabelLabError
from app_pages import _session as session
from app_pages import _cache as cache
from app_pages import _datasets as datasets
from app_pages import _ledger as ledgers
from app_pages import _plan as plan
from app_pages import _widgets as widgets
from app_pages import _charts as charts
from app_pages import _style as style
from app_pages._text import literal

session.init()
ss = st.session_state


def round_3(x: float) -> float:
    """Three significant digits (a crossover read off a curve of shapes is no more precise)."""
    return float(f"{float(x):.3g}")

st.title("Bounds: what the theory predicts")
st.markdown(
    "BTT's theorems say how many queries can be labeled, how often the labels are wrong and how much "
    "private data is needed, for a class of hypotheses of VC dimension $V$ (a measure of how flexible "
    "the learner is: $V = d + 1$ for linear classifiers in $d$ dimensions). The rate curves are "
    "**shapes up to constants and logarithmic factors**; the loop solver and the model of answered "
    "queries use the explicit constants."
)

with session.shown_errors():
    ds = datasets.dataset()
    ss.setdefault("bounds_ui", {})
    ui = ss["bounds_ui"]
    defaults = charts.bounds_defaults(ds, ss["data_cfg"])
    if ui.get("_for") != ds.key:  # new data: start from its sizes
        ui.update(defaults, _for=ds.key)
        for name in defaults:
            ss.pop(f"w_bounds_ui_{name}", None)

    st.subheader("Settings")
    c = st.columns(4)
    setting = c[0].radio("Setting", ["realizable", "agnostic"], key=session.widget_key("bounds_ui", "setting"),
                         help="realizable: some hypothesis of the class is always right; agnostic: the best one "
                         "errs on a fraction γ of the points.")
    V = c[1].number_input("VC dimension V", min_value=1, max_value=100_000, step=1,
                          key=session.widget_key("bounds_ui", "V"), help=defaults["V_note"])
    n = c[2].number_input("Private rows n", min_value=2, max_value=10**12, step=100,
                          key=session.widget_key("bounds_ui", "n"))
    m = c[3].number_input("Queries m", min_value=1, max_value=10**9, step=100, key=session.widget_key("bounds_ui", "m"))
    c = st.columns(4)
    eps = widgets.shared_widget(c[0], "epsilon")
    delta = widgets.shared_widget(c[1], "delta")
    beta = widgets.shared_widget(c[2], "beta")
    gamma = c[3].slider("Best error of the class (agnostic)", 0.0, 0.4, step=0.01,
                        key=session.widget_key("bounds_ui", "gamma"), disabled=setting == "realizable")
    for section, name, value in (("bounds_ui", "setting", setting), ("bounds_ui", "V", int(V)),
                                 ("bounds_ui", "n", int(n)), ("bounds_ui", "m", int(m)),
                                 ("bounds_ui", "gamma", float(gamma))):
        session.remember(section, name, value)
    g = 0.0 if setting == "realizable" else float(gamma)

    # ------------------------------------------------------------------ misclassification vs m
    st.subheader("Misclassification vs number of queries")
    st.markdown(
        "Answering each query separately (advanced composition) costs $\\sqrt{m}$ in the budget, so its "
        "error grows like $\\sqrt{m}$. BTT pays only for ⊥ and keeps the *non-private* rate "
        "$V/(\\varepsilon n)$ up to about $m \\approx \\varepsilon n / V$ queries."
    )
    st.latex(r"\text{BTT: } \frac{V}{\varepsilon n}\ \text{ for } m \lesssim \frac{\varepsilon n}{V},\ "
             r"\text{ then } \frac{m V^2}{\varepsilon^2 n^2};\qquad \text{composition: } \frac{\sqrt{m}\,V}{\varepsilon n}")
    curves = theory.rate_curves(int(V), float(eps), int(n), setting, g, int(m))
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=curves["m"], y=curves["btt"], name="BTT", mode="lines", **style.line("btt")))
    fig.add_trace(go.Scatter(x=curves["m"], y=curves["composition"], name="advanced composition", mode="lines",
                             **style.line("baseline")))
    # Vertical markers as line traces: plotly's add_vline takes log10 units on a log axis.
    lo, hi = charts.value_range(curves["btt"], curves["composition"])
    fig.add_trace(go.Scatter(x=[curves["crossover"]] * 2, y=[lo, hi], mode="lines", line=dict(dash="dash", color="#444"),
                             name=f"crossover M ≈ {charts.number(round_3(curves['crossover']))}"))
    fig.add_trace(go.Scatter(x=[int(m)] * 2, y=[lo, hi], mode="lines", line=dict(dash="dot", color="#999"),
                             name=f"your m = {int(m)}"))
    style.finish(fig, x_title="number of queries m", y_title="misclassification rate (shape)", xaxis_type="log", xaxis_dtick=1,
                 yaxis_type="log", yaxis_dtick=1)
    st.plotly_chart(fig, key="rates")

    # ------------------------------------------------------------------ sample complexity vs alpha
    st.subheader("Private rows needed for a target error α")
    st.latex(r"n_{\text{private}} \approx \frac{V^{3/2}}{\varepsilon\,\alpha^{3/2}}\ \text{(Thm 4.2)},\quad "
             r"\frac{V^{3/2}}{\varepsilon\,\alpha^{5/2}}\ \text{(Thm 4.3)},")
    st.latex(r"\frac{V^{3/2}}{\varepsilon\,\alpha}\ \text{(Remark 2)},\quad \frac{V^{2}}{\varepsilon\,\alpha}\ "
             r"\text{(Remark 3)}")
    st.latex(r"n_{\text{non-private}} \approx \frac{V}{\alpha}\ \text{(realizable)},\qquad "
             r"\frac{V}{\alpha^2}\ \text{(agnostic)}")
    sc = theory.sample_complexity_curves(int(V), float(eps))
    fig = go.Figure()
    for i, (name, values) in enumerate(sc["curves"].items()):
        fig.add_trace(go.Scatter(x=sc["alpha"], y=values, name=name, mode="lines", **style.series(i)))
    fig.add_trace(go.Scatter(x=[sc["alpha"][0], sc["alpha"][-1]], y=[int(n)] * 2, mode="lines",
                             line=dict(dash="dash", color="#888"), name=f"your n = {int(n):,}"))
    style.finish(fig, x_title="target error α", y_title="private rows n (shape)", xaxis_type="log", xaxis_dtick=1, yaxis_type="log", yaxis_dtick=1)
    st.plotly_chart(fig, key="sample_complexity")

    # ------------------------------------------------------------------ loop solver
    st.subheader("Teachers k and cutoff T from the loop T → α → k → T")
    st.markdown(
        "Theorem 3.2 needs teachers of error α at $n/k$ rows; α fixes the cutoff $T$; $T$ fixes the noise λ; "
        "λ fixes how many teachers BTT asks for; and $k$ in turn changes α. The solver finds the smallest "
        "consistent $k$ with explicit VC bounds (Blumer et al. 1989 for realizable, Vapnik for agnostic), "
        "with the paper's calibration."
    )
    st.latex(r"T = 3\Big((\gamma+\alpha)m + \sqrt{(\gamma+\alpha)m\log(m/\beta)/2}\Big)")
    st.latex(r"\lambda = \frac{\sqrt{32T\log(2/\delta)}}{\varepsilon},\qquad "
             r"k = 34\sqrt{2}\,\lambda\log\frac{4mT}{\min(\delta,\beta/2)}")
    st.caption("T: the cutoff (the most ⊥ the run pays for); α: a teacher's error; γ: the best error of the class; "
               "λ: the scale of the Laplace noise; k: the number of teachers; β: the failure probability.")
    sol = cache.solve_loop(float(n), float(V), float(eps), float(delta), float(beta), int(m), g, setting,
                           plan.cache_scope(ds))
    if sol.feasible:
        s = st.columns(4)
        s[0].metric("Teachers k", f"{sol.k:,.0f}")
        s[1].metric("Cutoff T (Theorem 3.2 bound)", f"{sol.T:,.1f}")
        s[2].metric("Teacher error α", session.fmt(sol.alpha))
        s[3].metric("Misclassification bound T/m", session.fmt(sol.misclassification))
    else:
        st.warning((sol.reason or "").replace("k_req", "the k it asks for"))
        st.caption(
            "The loop uses the paper's constants (the 34√2 factor in k and explicit VC bounds), which are "
            "very conservative. In practice far fewer teachers suffice: the model below and your own run "
            "(Private labeling page) show how many queries BTT answers with the teachers you have."
        )
    real = session.is_real_job(ds)
    if real:  # a real job: nothing is trained or run by opening a page; the overlays are predicted
        ens = cache.cached_ensemble(ds)
        k_job = int(ss["ensemble_cfg"]["k"]) if ens is None else int(ens.teachers.k)
        btt_pred = plan.predict_for(ds, k_job, "btt", advise=False)
        btt_paid = None if ens is None else cache.paid_run("btt", ens=ens)
        st.caption(f"Your job: k = {k_job} teachers, T = {ss['privacy']['T']}, m = {ds.n_public}. The overlays "
                   f"below are {plan.PREDICTED} (assumed teacher quality: Private labeling or Compare page), "
                   "plus your BTT run on the private votes if you asked for one.")
        ledgers.show_spent(st, ds)
    else:
        try:
            ens = cache.ensemble()  # trained now (with a progress bar) if this data has none yet
        except PrivateLabelLabError as exc:
            ens = None
            st.info(f"No ensemble to compare with: {literal(exc)}")
        if ens is not None:
            st.caption(f"Your run: k = {ens.teachers.k} teachers, T = {ss['privacy']['T']}, m = {ens.votes.shape[0]}.")

    # ------------------------------------------------------------------ expected answers vs k
    st.subheader("How many queries BTT answers, by number of teachers")
    st.markdown(
        "A simple model: every teacher errs independently with probability α, so a query's votes are "
        "binomial; it passes the noisy test with a probability set by λ and w, and the run stops at the "
        "T-th ⊥. The model uses your ε, δ, T, m and calibration; your measured count is overlaid."
    )
    alpha_model = st.slider("Teacher error α for the model", 0.0, 0.5, step=0.01,
                            key=session.widget_key_for("bounds_ui", "alpha_model", 0.1))
    session.remember("bounds_ui", "alpha_model", float(alpha_model))
    if real:
        asked = session.request("btt")
        model = theory.answers_model(float(alpha_model), k_job, float(asked["epsilon"]), float(asked["delta"]),
                                     int(asked["T"]), ds.n_public, calibration=asked["calibration"])
        fig = go.Figure()
        fig.add_trace(go.Scatter(x=model["k"], y=model["answered"], mode="lines", name="model: expected answered"))
        fig.add_trace(go.Scatter(x=[k_job], y=[btt_pred.answered], mode="markers",
                                 name=f"your job (BTT), {plan.PREDICTED}",
                                 error_y=dict(type="data", array=[btt_pred.answered_sd]),
                                 marker=dict(size=12, symbol="circle-open", color="#1565c0")))
        if btt_paid is not None:
            fig.add_trace(go.Scatter(x=[k_job], y=[btt_paid.n_answered], mode="markers",
                                     name="your run on the private votes (BTT)",
                                     marker=dict(size=12, symbol="x", color="#c62828")))
    elif ens is not None:
        result, _ = cache.labeling("btt")
        p = result.params
        model = theory.answers_model(float(alpha_model), ens.teachers.k, p["epsilon_target"], p["delta_target"],
                                     int(p["T"]), int(p["m"]), calibration=p["calibration"])
        fig = go.Figure()
        fig.add_trace(go.Scatter(x=model["k"], y=model["answered"], mode="lines", name="model: expected answered"))
        fig.add_trace(go.Scatter(x=[ens.teachers.k], y=[result.n_answered], mode="markers", name="your run (BTT)",
                                 marker=dict(size=12, symbol="x", color="#c62828")))
    if real or ens is not None:
        style.finish(fig, x_title="teachers k", y_title="answered queries", xaxis_type="log", xaxis_dtick=1)
        st.plotly_chart(fig, key="answers_model")
        st.caption(f"BTT's fewest teachers for which a unanimous vote passes half the time at these settings: "
                   f"k ≥ {model['k_min']:,}.")
        if not real:  # the overlay is a run on the private votes: said, and counted on this lesson's ledger
            st.caption("Your run is BTT at your settings, whichever mechanism Private labeling shows: the theory "
                       "on this page is BTT's. It is a run on the private rows, counted below.")
            ledgers.show_spent(st, ds, ens=ens)
    else:
        st.info("Train an ensemble this data allows (Ensemble page) to overlay your run.")

    # ------------------------------------------------------------------ measured points
    # No measured or predicted point is drawn over the rate curves above: their constants are
    # arbitrary ("shape"). A measured rate is set beside Theorem 3.2 only, with its real
    # constants, and only where the theorem's conditions hold for the run.
    if real:
        st.subheader("Predicted misclassification")
        st.caption(f"BTT on your job, {plan.PREDICTED}: {plan.pm(btt_pred.answered, btt_pred.answered_sd)} answered, "
                   f"{plan.pm(btt_pred.wrong, btt_pred.wrong_sd)} of them wrong. It is not drawn over the rate curves "
                   "above: those are shapes whose constants are left out, so a point beside them says nothing.")
    else:
        st.divider()
        st.subheader("Non-private diagnostics")
        st.caption("Your measured misclassification (against the public queries' held-out true labels) next to "
                   "Theorem 3.2's bound, where the theorem's conditions hold for your run. Not private; never exported.")
        if ens is None:
            st.info("Train an ensemble this data allows (Ensemble page) to measure your run.")
        elif ds.public_y is None:
            st.info("The public queries came from an unlabeled file: misclassification cannot be measured.")
        else:
            result, _ = cache.labeling("btt")
            acc = nonprivate.answered_accuracy(result.labels, ds.public_y)
            check = nonprivate.theorem_32_check(ens.predictions, ds.public_y, result, beta=float(ss["privacy"]["beta"]),
                                                n_classes=ds.n_classes, n_private=ds.n_private)
            st.metric("Measured misclassification on answered (BTT)", session.fmt(None if acc is None else 1.0 - acc),
                      help=f"On the {result.n_answered} answered queries of your BTT run.")
            if not check.holds:
                st.warning(check.sentence())
            else:
                ms = np.geomspace(max(10, check.m / 100), check.m * 100, 80)
                fig = go.Figure()
                bound_style = style.bound_line("btt")  # the one bound style, in BTT's colour
                fig.add_trace(go.Scatter(x=ms, y=theory.misclassification_bound(check.error, 0.0, ms, check.beta),
                                         mode="lines", name=f"Theorem 3.2 bound T(m)/m, teachers' error {check.error:.3g}",
                                         line=bound_style["line"]))
                fig.add_trace(go.Scatter(x=[check.m], y=[check.bound], mode="markers", name="bound for your run (T/m)",
                                         marker=bound_style["marker"]))
                if acc is not None:  # measured: BTT's own filled marker
                    measured = style.line("btt")["marker"]
                    fig.add_trace(go.Scatter(x=[check.m], y=[max(1.0 - acc, 1e-4)], mode="markers",
                                             name="your run: measured",
                                             marker={**measured, "size": style.sizes().rare_marker}))
                style.finish(fig, x_title="number of queries m", y_title="misclassification rate", xaxis_type="log", xaxis_dtick=1,
                             yaxis_type="log", yaxis_dtick=1)
                st.plotly_chart(fig, key="measured")
                st.caption(check.sentence() + " The curve is the theorem's bound with its real constants, for a "
                           "cutoff set as the theorem asks at each m (a measured 0 is drawn at 1e-4).")
