"""Private labeling: turn the cached teacher votes into differentially private labels."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from core.mechanisms.stability import distance_to_instability
from pages import _state as state

state.run_through_app()
state.init()
ss = st.session_state

st.title("Private labeling")
st.markdown(
    "The teachers' votes depend on the private data, so they cannot be published. A private "
    "mechanism releases a label only when it is safe: every mechanism here is $(\\varepsilon, \\delta)$-"
    "differentially private, meaning that replacing any one private row changes the probability of "
    "any output by at most a factor $e^{\\varepsilon}$ (plus a small $\\delta$)."
)
st.latex(r"\Pr[\mathcal{M}(D) \in S] \le e^{\varepsilon}\,\Pr[\mathcal{M}(D') \in S] + \delta")

ETAS = [0.5, 0.25, 0.2, 0.1, 0.05]

controls, results = st.columns([2, 3], gap="large")

with controls:
    mechanism = st.radio("Mechanism", list(state.MECHANISMS), format_func=state.MECHANISMS.get,
                         key=state.widget_key("privacy", "mechanism"))
    state.remember("privacy", "mechanism", mechanism)

    if mechanism in ("btt", "btt-soft"):
        st.markdown(
            "**BTT** answers a query only when the vote is *stable*: its distance to instability "
            "(how many private rows must change before the answer can flip) passes a noisy "
            "threshold. Each failed test (an abstention, ⊥) costs budget; after $T$ of them the "
            "mechanism stops. Stable answers cost nothing (the *sparse vector* technique)."
        )
        st.latex(r"\text{test: } \mathrm{dist}_i + \mathrm{Lap}(2\lambda) > w + \mathrm{Lap}(\lambda)")
        st.latex(r"\text{pass} \Rightarrow \hat y_i = \arg\max_c n_c(x_i), \qquad \text{fail} \Rightarrow \bot")
    elif mechanism == "lnmax":
        st.markdown(
            "**PATE's noisy max** adds Laplace noise to every vote count and releases the class "
            "with the largest noisy count. Every query is answered, and every answer costs "
            "budget, so $\\varepsilon$ grows with the number of queries $m$."
        )
        st.latex(r"\hat y_i = \arg\max_c \big(n_c(x_i) + \mathrm{Lap}(1/\gamma)\big)")
        st.latex(r"\varepsilon = 4m\gamma^2 + 2\gamma\sqrt{2m\log(1/\delta)}")
    else:
        st.markdown(
            "**The baseline** answers every query on its own with the one-query stability "
            "mechanism $A_{\\mathrm{stab}}$ at a small per-query budget $\\varepsilon_0$, and adds up the "
            "cost with the advanced composition theorem. BTT improves on it by paying only for ⊥."
        )
        st.latex(r"\varepsilon = \sqrt{2m\log(1/\delta')}\,\varepsilon_0 + m\,\varepsilon_0\,(e^{\varepsilon_0}-1)")

    if mechanism != "lnmax":
        eps = st.slider("ε (privacy budget)", 0.1, 20.0, step=0.1, key=state.widget_key("privacy", "epsilon"),
                        help="Smaller ε means stronger privacy and fewer answers.")
        state.remember("privacy", "epsilon", float(eps))
    else:
        gamma = st.slider("γ (inverse noise scale)", 0.005, 1.0, step=0.005, key=state.widget_key("privacy", "gamma"),
                          help="Noise Lap(1/γ) on each count: larger γ means less noise and a larger ε.")
        state.remember("privacy", "gamma", float(gamma))
    delta = st.select_slider("δ", state.DELTAS, format_func=lambda d: f"{d:.0e}", key=state.widget_key("privacy", "delta"),
                             help="The small probability with which the ε bound may fail; keep it well below 1/n.")
    state.remember("privacy", "delta", float(delta))
    with state.shown_errors():
        n_private = state.dataset().n_private
        st.caption(f"δ is the small chance that the ε bound fails. Keep it far below 1/n = {1 / n_private:.1e} "
                   f"(n = {n_private:,} private rows): publishing one private row picked at random, in full, "
                   "already satisfies δ = 1/n with ε = 0.")
    if mechanism in ("btt", "btt-soft"):
        T = st.number_input("T (maximum number of ⊥)", min_value=1, max_value=5000, step=1,
                            key=state.widget_key("privacy", "T"),
                            help="The mechanism stops after T abstentions; a larger T costs more noise.")
        state.remember("privacy", "T", int(T))
        beta = st.slider("β (failure probability)", 0.01, 0.5, step=0.01, key=state.widget_key("privacy", "beta"),
                         help="Used for BTT's recommended number of teachers (it does not change the noise).")
        state.remember("privacy", "beta", float(beta))
        calibration = st.radio(
            "Calibration", ["tight", "paper"], horizontal=True, key=state.widget_key("privacy", "calibration"),
            help="paper: λ and w exactly as printed by BTT; tight: the smallest λ and w whose exact "
            "accounting still meets (ε, δ). Same mechanism, same guarantee, more answers.",
        )
        state.remember("privacy", "calibration", calibration)
        st.latex(r"\lambda_{\text{paper}} = \frac{\sqrt{32\,T\log(2/\delta)}}{\varepsilon}")
        st.latex(r"w_{\text{paper}} = 2\lambda\log(2m/\delta)")
    if mechanism == "btt-soft":
        eta = st.select_slider("η (precision of a soft label)", ETAS, key=state.widget_key("privacy", "eta"),
                               help="Scores are binned into 1/η bins; the released soft label is a bin midpoint.")
        state.remember("privacy", "eta", float(eta))

with results:
    with state.shown_errors():
        ds = state.dataset()
        ens = state.ensemble()
        result, privacy_warnings = state.labeling()
        for text in privacy_warnings:
            st.warning(text)

        st.subheader("Result")
        c = st.columns(3)
        c[0].metric("Answered", result.n_answered, help="Queries that received a private label.")
        c[1].metric("Abstained (⊥)", result.n_bottom, help="Queries the mechanism refused to label.")
        c[2].metric("Not processed", result.n_unprocessed,
                    help="Queries after the mechanism halted (T abstentions reached): not the same as ⊥.")
        g = st.columns(2)
        g[0].metric("Guarantee ε", state.fmt(result.epsilon, 4))
        g[1].metric("Guarantee δ", f"{result.delta:.3g}")
        st.markdown(
            f"**(ε, δ) = ({result.epsilon:.4g}, {result.delta:.3g})** under replace-one adjacency "
            f"(neighbouring private datasets differ in one row). How it was computed: {result.accounting}"
        )
        if result.halted_at is not None:
            st.caption(f"The mechanism halted at query {result.halted_at + 1} of {result.m} after {result.n_bottom} abstentions.")

        if not result.feasible:
            st.error("These settings can answer (almost) nothing. " + (result.reason or ""))
            k_needed = state.min_teachers(result)
            if k_needed is not None:
                st.info(f"Teachers needed for a unanimous vote to pass the test half the time "
                        f"(core.theory.btt_min_teachers): **k ≥ {k_needed:,}**; you have k = {ens.teachers.k}.")
        elif result.mechanism in ("btt", "btt-soft") and result.n_answered == 0:
            st.warning("No query was answered before the mechanism halted: the vote margins are small "
                       "compared with the threshold. Raise ε, lower T, use more teachers or more data.")

        st.markdown("**Timeline over the queries** (in the order they were processed)")
        fig = go.Figure()
        for name, idx, color in state.timeline(result):
            fig.add_trace(go.Scatter(x=idx, y=[name] * len(idx), mode="markers", name=name,
                                     marker=dict(size=7, color=color, symbol="line-ns-open")))
        if result.halted_at is not None:
            fig.add_vline(x=result.halted_at, line_dash="dash", annotation_text="halted")
        fig.update_layout(height=220, xaxis_title="query index", margin=dict(l=10, r=10, t=10, b=10),
                          showlegend=False)
        st.plotly_chart(fig, key="timeline")

        with st.expander("All parameters of this run"):
            st.json(state.public_params(result))

st.divider()
st.subheader("Non-private diagnostics")
st.caption(
    "Everything below compares the private labels with the public queries' held-out true labels or "
    "looks at the raw votes. It is for understanding only: not private, never exported."
)
with state.shown_errors():
    ds = state.dataset()
    ens = state.ensemble()
    result, _ = state.labeling()
    left, right = st.columns(2)
    with left:
        acc = state.answered_accuracy(result, ds)
        if ds.public_y is None:
            st.info("The public queries came from an unlabeled file: their accuracy cannot be measured.")
        elif result.scores is not None:
            st.metric("Mean absolute error of the released scores", state.fmt(state.soft_error(result, ds, ens)))
        else:
            err = None if acc is None else 1.0 - acc
            bound = state.theorem_32(result, ens, ds)
            cols = st.columns(2)
            cols[0].metric("Misclassification on answered", state.fmt(err),
                           help="Share of answered queries whose private label differs from the true label.")
            if bound is not None:
                cols[1].metric("Theorem 3.2 bound T/m",
                               state.fmt(bound["bound"]) if bound["bound"] < 1 else "≥ 1 (vacuous)",
                               help="BTT Theorem 3.2 with the teachers' measured error as γ + α. "
                               "A bound of 1 or more says nothing: m is too small for these teachers.")
                st.caption(
                    f"Theorem 3.2: with teachers of error γ + α ≈ {state.fmt(bound['error'])} (measured), "
                    f"T = 3((γ+α)m + √((γ+α)m log(m/β)/2)) ≈ {state.fmt(bound['T'])} for m = {result.m} and "
                    f"β = {ss['privacy']['beta']:g}, so at most T/m of the queries are misclassified "
                    "(with probability ≥ 1 − 2β)."
                )
            st.latex(r"\text{misclassification} \le \frac{T}{m}")
            st.latex(r"T = 3\Big((\gamma+\alpha)m + \sqrt{(\gamma+\alpha)\,m\log(m/\beta)/2}\Big)")
        if result.epsilon_data_dependent is not None:
            st.metric("PATE data-dependent ε (not a guarantee)", state.fmt(result.epsilon_data_dependent, 4),
                      help="The moments accountant's ε depends on the private votes: a diagnostic only.")
    with right:
        if result.mechanism in ("btt", "baseline") and "threshold" in result.params:
            st.markdown("**Distance to instability** of each query, with the threshold w")
            fig = go.Figure(go.Histogram(x=distance_to_instability(ens.votes), nbinsx=40, marker_color="#82b366"))
            fig.add_vline(x=result.params["threshold"], line_dash="dash", line_color="#b85450",
                          annotation_text=f"w = {result.params['threshold']:.1f}")
            fig.update_layout(height=260, xaxis_title="distance to instability", yaxis_title="queries",
                              margin=dict(l=10, r=10, t=10, b=10))
            st.plotly_chart(fig, key="distances")
            st.caption("Queries to the right of w are answered most of the time; each one to the left "
                       "is likely a ⊥ and spends one of the T rounds.")
