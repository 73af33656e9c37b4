"""Compare: every mechanism on the same cached votes at equal (ε, δ)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core import nonprivate
from core.errors import PrivateLabelLabError
from pages import _session as session
from pages import _cache as cache
from pages import _datasets as datasets
from pages import _ledger as ledgers
from pages import _widgets as widgets

session.run_through_app()
session.init()
ss = st.session_state

st.title("Compare the mechanisms")
st.markdown(
    "Every registered mechanism below labels the **same** public queries from the **same** teacher votes, "
    "at the same privacy budget $(\\varepsilon, \\delta)$: each one's own settings are chosen for that ε by "
    "the one pipeline (`core.pipeline.resolve`), as on the command line. BTT pays only for abstentions (⊥) "
    "and stops after $T$ of them; PATE's noisy max pays for every answer (its noise γ follows from ε); the "
    "baseline splits $\\varepsilon$ over all $m$ queries."
)
st.latex(r"\text{BTT: } \varepsilon \approx \frac{2T}{\lambda}\ \text{(composed over } T \text{ rounds)},\qquad "
         r"\text{LNMax: } \varepsilon = 4m\gamma^2 + 2\gamma\sqrt{2m\log(1/\delta)}")

EPS_GRID = [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0]
EXTRA_ROWS = (("btt", {"calibration": "paper"}),)
"""Second rows of a mechanism at other settings: BTT with the paper's printed calibration."""

c1, c2, c3 = st.columns(3)
eps = widgets.shared_widget(c1, "epsilon")
delta = widgets.shared_widget(c2, "delta")
T = widgets.shared_widget(c3, "T")

with session.shown_errors():
    ds = datasets.dataset()
    ens = cache.ensemble()
    m = int(ens.votes.shape[0])
    rows, skipped = cache.compare_rows(ens, float(eps), m, EXTRA_ROWS)
    runs = {}
    table_bar = st.progress(0.0, text=f"Running {len(rows)} mechanisms at ε = {float(eps):g}…")
    for i, (label, (name, settings)) in enumerate(rows.items()):
        try:
            runs[label] = cache.labeling(name, settings, ens)[0]
        except PrivateLabelLabError as exc:  # one mechanism refusing this data leaves the others
            skipped.append(f"{label} did not run: {exc}")
        table_bar.progress((i + 1) / max(len(rows), 1), text=f"{label} done ({i + 1} of {len(rows)} mechanisms)")
    table_bar.empty()

    st.subheader(f"At ε = {eps:g}, δ = {delta:.0e} on {m} queries")
    table = pd.DataFrame(
        [
            {
                "mechanism": label,
                "answered": r.n_answered,
                "⊥": r.n_bottom,
                "not processed": r.n_unprocessed,
                "ε spent": round(r.epsilon, 4),
                "δ spent": float(f"{r.delta:.3g}"),
            }
            for label, r in runs.items()
        ]
    )
    st.dataframe(table, hide_index=True)
    for text in skipped:
        st.caption(text)
    st.caption("ε spent is each mechanism's own data-independent guarantee; it is at most the target ε.")
    spent_box = st.container()  # filled after the curve below: its runs count too

    st.subheader("Privacy–utility curve")
    st.caption("Each point is one run on the cached votes (one random draw of the noise).")
    # A fixed grid of budgets: computed once per ensemble and session, then remembered.
    bar = st.progress(0.0, text="Running every mechanism at each budget…")
    curve = {label: [] for label in runs}
    for i, e in enumerate(EPS_GRID):
        at_e, _ = cache.compare_rows(ens, e, m, EXTRA_ROWS)
        for label in runs:
            try:
                curve[label].append(cache.labeling(*at_e[label], ens)[0] if label in at_e else None)
            except PrivateLabelLabError:
                curve[label].append(None)
        bar.progress((i + 1) / len(EPS_GRID), text=f"ε = {e:g} done ({i + 1} of {len(EPS_GRID)} budgets)")
    bar.empty()
    ledgers.show_spent(spent_box, ds, ens=ens)
    spent_box.caption("Each row above and each point of the curve below is one run on the private data: "
                      "comparing many settings costs their composition, not the chosen one's ε.")
    fig = go.Figure()
    for label, results in curve.items():
        fig.add_trace(go.Scatter(x=EPS_GRID, y=[None if r is None else r.n_answered for r in results],
                                 mode="lines+markers", name=label))
    fig.update_layout(xaxis=dict(type="log", tickvals=EPS_GRID, ticktext=[f"{e:g}" for e in EPS_GRID]), xaxis_title="ε", yaxis_title="answered queries", height=380,
                      margin=dict(l=10, r=10, t=10, b=10), legend=dict(orientation="h", y=-0.25))
    st.plotly_chart(fig, key="utility_curve")

    st.divider()
    st.subheader("Non-private diagnostics")
    st.caption("Accuracy against the public queries' held-out true labels: for understanding only, never exported.")
    if ds.public_y is None:
        st.info("The public queries came from an unlabeled file: accuracy cannot be measured.")
    else:
        def hard(r, measure):
            return None if r is None or r.scores is not None else measure(r.labels, ds.public_y)

        acc_table = pd.DataFrame(
            [
                {
                    "mechanism": label,
                    "accuracy on answered": session.fmt(hard(r, nonprivate.answered_accuracy)),
                    "correct labels": hard(r, nonprivate.correct_count),
                    "wrong labels": None if hard(r, nonprivate.correct_count) is None
                    else r.n_answered - hard(r, nonprivate.correct_count),
                    "data-dependent ε (NON-PRIVATE, not a guarantee)": session.fmt(
                        None if r is None or r.scores is not None else nonprivate.data_dependent_epsilon(ens.votes, r), 4),
                }
                for label, r in runs.items()
            ]
        )
        st.dataframe(acc_table, hide_index=True)
        plurality = nonprivate.plurality_accuracy(ens.votes, ds.public_y)
        st.markdown(f"Non-private reference points: always answering the majority class "
                    f"**{session.fmt(nonprivate.majority_rate(ds.public_y))}**; the teachers' plurality vote "
                    f"without noise **{session.fmt(plurality)}**.")
        for label, r in runs.items():
            line = nonprivate.reference_line(f"{label} labels", hard(r, nonprivate.answered_accuracy), ds.public_y,
                                             plurality=plurality)
            if line:
                st.caption(line)
        fig = go.Figure()
        for label, results in curve.items():
            fig.add_trace(go.Scatter(x=EPS_GRID, y=[hard(r, nonprivate.correct_count) for r in results],
                                     mode="lines+markers", name=label))
        fig.update_layout(xaxis=dict(type="log", tickvals=EPS_GRID, ticktext=[f"{e:g}" for e in EPS_GRID]), xaxis_title="ε", yaxis_title="correctly labeled queries", height=340,
                          margin=dict(l=10, r=10, t=10, b=10), legend=dict(orientation="h", y=-0.25))
        st.plotly_chart(fig, key="correct_curve")
