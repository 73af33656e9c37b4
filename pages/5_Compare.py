"""Compare: every mechanism on the same cached votes at equal (ε, δ)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from pages import _state as state

state.run_through_app()
state.init()
ss = st.session_state

st.title("Compare the mechanisms")
st.markdown(
    "All mechanisms below label the **same** public queries from the **same** teacher votes, at the "
    "same privacy budget $(\\varepsilon, \\delta)$. BTT pays only for abstentions (⊥) and stops after $T$ "
    "of them; PATE's noisy max pays for every answer; the baseline splits $\\varepsilon$ evenly over all "
    "$m$ queries. For LNMax, γ is chosen so that its guarantee on $m$ answers equals ε."
)
st.latex(r"\text{BTT: } \varepsilon \approx \frac{2T}{\lambda}\ \text{(composed over } T \text{ rounds)},\qquad "
         r"\text{LNMax: } \varepsilon = 4m\gamma^2 + 2\gamma\sqrt{2m\log(1/\delta)}")

EPS_GRID = [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0]

c1, c2, c3 = st.columns(3)
eps = c1.slider("ε (privacy budget)", 0.1, 20.0, step=0.1, key=state.widget_key("privacy", "epsilon"))
state.remember("privacy", "epsilon", float(eps))
delta = c2.select_slider("δ", state.DELTAS, format_func=lambda d: f"{d:.0e}", key=state.widget_key("privacy", "delta"))
state.remember("privacy", "delta", float(delta))
T = c3.number_input("T for BTT (maximum number of ⊥)", min_value=1, max_value=5000, step=1,
                    key=state.widget_key("privacy", "T"))
state.remember("privacy", "T", int(T))

with state.shown_errors():
    ds = state.dataset()
    ens = state.ensemble()
    variants = state.available_variants(ens)
    runs = {v: state.compare_run(v, float(eps), ens)[0] for v in variants}

    st.subheader(f"At ε = {eps:g}, δ = {delta:.0e} on {ens.votes.shape[0]} queries")
    table = pd.DataFrame(
        [
            {
                "mechanism": state.COMPARED_LABELS[v],
                "answered": r.n_answered,
                "⊥": r.n_bottom,
                "not processed": r.n_unprocessed,
                "ε spent": round(r.epsilon, 4),
                "δ spent": float(f"{r.delta:.3g}"),
            }
            for v, r in runs.items()
        ]
    )
    st.dataframe(table, hide_index=True)
    if "btt-soft" not in variants:
        st.caption(f"Soft labels are not compared: {ens.scores_error}")
    st.caption("ε spent is each mechanism's own data-independent guarantee; it is at most the target ε.")

    st.subheader("Privacy–utility curve")
    st.caption("Each point is one run on the cached votes (one random draw of the noise).")
    # A fixed grid of budgets: computed once per ensemble and session, then remembered.
    bar = st.progress(0.0, text="Running every mechanism at each budget…")
    curve = {v: [] for v in variants}
    for i, e in enumerate(EPS_GRID):
        for v in variants:
            curve[v].append(state.compare_run(v, e, ens)[0])
        bar.progress((i + 1) / len(EPS_GRID), text=f"ε = {e:g} done ({i + 1} of {len(EPS_GRID)} budgets)")
    bar.empty()
    fig = go.Figure()
    for v, results in curve.items():
        fig.add_trace(go.Scatter(x=EPS_GRID, y=[r.n_answered for r in results], mode="lines+markers",
                                 name=state.COMPARED_LABELS[v]))
    fig.update_layout(xaxis=dict(type="log", tickvals=EPS_GRID, ticktext=[f"{e:g}" for e in EPS_GRID]), xaxis_title="ε", yaxis_title="answered queries", height=380,
                      margin=dict(l=10, r=10, t=10, b=10), legend=dict(orientation="h", y=-0.25))
    st.plotly_chart(fig, key="utility_curve")

    st.divider()
    st.subheader("Non-private diagnostics")
    st.caption("Accuracy against the public queries' held-out true labels: for understanding only, never exported.")
    if ds.public_y is None:
        st.info("The public queries came from an unlabeled file: accuracy cannot be measured.")
    else:
        acc_table = pd.DataFrame(
            [
                {
                    "mechanism": state.COMPARED_LABELS[v],
                    "accuracy on answered": state.fmt(state.answered_accuracy(r, ds)),
                    "correct labels": state.correct_count(r, ds),
                    "PATE data-dependent ε (not a guarantee)": state.fmt(r.epsilon_data_dependent, 4),
                }
                for v, r in runs.items()
            ]
        )
        st.dataframe(acc_table, hide_index=True)
        fig = go.Figure()
        for v, results in curve.items():
            fig.add_trace(go.Scatter(x=EPS_GRID, y=[state.correct_count(r, ds) for r in results],
                                     mode="lines+markers", name=state.COMPARED_LABELS[v]))
        fig.update_layout(xaxis=dict(type="log", tickvals=EPS_GRID, ticktext=[f"{e:g}" for e in EPS_GRID]), xaxis_title="ε", yaxis_title="correctly labeled queries", height=340,
                          margin=dict(l=10, r=10, t=10, b=10), legend=dict(orientation="h", y=-0.25))
        st.plotly_chart(fig, key="correct_curve")
