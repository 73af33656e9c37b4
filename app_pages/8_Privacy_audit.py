"""Privacy audit: test a mechanism's claimed ε empirically on worst-case neighbouring inputs."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from core import audit as A
from core.mechanisms import registry
from app_pages import _session as session
from app_pages import _style as style
from app_pages import _widgets as widgets

session.init()
ss = st.session_state

st.title("Privacy audit")
st.markdown(
    "A privacy proof is only as good as the code that implements it. This page **tests** a "
    "mechanism's claim empirically, in the style of StatDP and DP-Sniper: it runs the mechanism many "
    "times on two *neighbouring* inputs (teacher votes that differ by one teacher, i.e. one private "
    "row), picks on half of the runs the output event whose probability differs most between the two, "
    "and measures that event on the other half. The result is a **lower bound** on the true ε that holds "
    "with the chosen confidence:"
)
st.latex(r"\varepsilon \;\ge\; \varepsilon_{\mathrm{lb}} = \log\frac{\underline{p}_a - \delta}{\overline{p}_b}"
         r"\qquad (\text{Clopper–Pearson bounds } \underline{p}_a,\ \overline{p}_b)")
st.markdown(
    "If the audited lower bound exceeds the claimed ε, the implementation leaks more than it claims. "
    "Below the claim, no violation was found (an audit can never *prove* privacy). The inputs here are "
    "synthetic vote counts placed where each mechanism's threshold makes it leak most; no data of "
    "this session is used."
)

TRIALS = [20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000]
CONFIDENCES = [0.95, 0.99, 0.999]
OFFERED = {**A.audit_mechanisms(), **A.TEACHING_MECHANISMS}
# The registry's mechanisms with an audit, then the teaching variants.
CHOICES = list(OFFERED)


def _label(key: str) -> str:
    return OFFERED[key]["label"]


# The audit's neighbouring pairs in words (a pair not listed reads as its name).
PAIR_WORDS = {
    "tie": "A tied vote",
    "top_loses_vote": "Top class loses a vote",
    "all_queries_move": "Every query moves",
    "mixed_directions": "Queries move both ways",
    "answered_then_bottom": "Answered on a, ⊥ on b",
    "adjacent_bins": "Scores in adjacent bins",
    "bin_edge": "A score at a bin edge",
    "outer_half_bin": "Score in outer half bin",
    "label_flips": "One label flips",
    "row_moves": "One row moves",
    "class_changes": "One row changes class",
}


def _pair_label(name: str) -> str:
    """A neighbouring pair's name in words ("answered_then_bottom" -> "Answered on a, ⊥ on b"): short enough
    for the select box at 1024 px; the pair's description follows below it."""
    return PAIR_WORDS.get(name, name.replace("_", " ").capitalize())


def _audit_parameter(name: str):
    """The registry's description of an audit setting (the first mechanism that has it)."""
    for mech_name in registry.names():
        mech = registry.get(mech_name)
        if name in mech.parameter_names:
            return mech.parameter(name)
    return registry.PARAMETERS[name]


def _audit_default(name: str):
    """The audit's default for a setting: a registered mechanism's ``audit_defaults``."""
    for spec in OFFERED.values():
        if name in spec.get("defaults", {}):
            return spec["defaults"][name]
    return _audit_parameter(name).default


controls, results = st.columns([2, 3], gap="large")

with controls:
    mechanism = st.selectbox("Mechanism to audit", CHOICES, index=CHOICES.index("btt"), format_func=_label,
                             key="audit_mechanism")
    teaching = mechanism in A.TEACHING_MECHANISMS
    if teaching:
        st.warning(
            "**Teaching example of a leak.** BTT's paper prints the distance to instability as "
            "max(0, M − 1), M being the top vote count minus the runner-up. One changed private row moves "
            "one vote and M by up to 2, so that distance moves by 2, while the noise is calibrated for a "
            "move of 1: the true ε is up to **twice** the claim. The library uses the corrected "
            "max(0, ⌈M/2⌉ − 1); this deliberately broken variant exists only here and never labels data."
        )
    # The settings' widgets come from the registry's parameters; their audit defaults are
    # the values at which the audit has power (small ε, few queries).
    settings: dict = {}
    for name in OFFERED[mechanism]["params"]:
        p = _audit_parameter(name)
        default = _audit_default(name)
        key = f"audit_{name}"
        st.session_state.setdefault(key, default)
        choices = None
        if p.choices is not None and p.kind != "choice" and default not in p.choices:
            choices = tuple(sorted({*p.choices, default}, reverse=True))
        settings[name] = widgets.parameter_widget(st, p, key=key, choices=choices)

    names, default_pair = A.pair_choices(mechanism)
    pair = st.selectbox("Neighbouring inputs", names, index=names.index(default_pair), key=f"audit_pair_{mechanism}",
                        format_func=_pair_label,
                        help="Worst cases: ties, margins at the threshold, the top class losing a vote to the "
                        "runner-up; the default is the strongest for this mechanism.")
    n_trials = st.select_slider("Trials per input", TRIALS, value=200_000, format_func=lambda n: f"{n:,}",
                                key="audit_trials")
    confidence = st.select_slider("Confidence", CONFIDENCES, value=0.99, format_func=lambda c: f"{c:.1%}",
                                  key="audit_confidence")
    run = st.button("Run the audit", type="primary", key="audit_run")

with results:
    with session.shown_errors():
        scn = A.scenario(mechanism, pair=pair, **settings)
        run_key = (mechanism, pair, tuple(sorted(settings.items())), n_trials, confidence, session.demo_mode())
        if run:
            bar = st.progress(0.0, text="Sampling the mechanism…")

            def progress(done: int, total: int) -> None:
                bar.progress(done / total, text=f"{done:,} of {total:,} runs")

            ss["audit_result"] = (run_key, A.run_scenario(
                scn, n_trials=n_trials, confidence=confidence, rng=session.synthetic_rng(),
                chunk_size=max(1_000, n_trials // 10), progress=progress,
            ))
            bar.empty()

        stored = ss.get("audit_result")
        if stored is None:
            st.info("Choose a mechanism and press **Run the audit**.")
        else:
            shown_key, res = stored
            if shown_key != run_key:
                st.caption("Settings changed since this audit ran: press **Run the audit** to update it.")
            st.subheader(_label(shown_key[0]))
            c = st.columns(3)
            c[0].metric("Claimed ε", f"{res.claimed_epsilon:.3f}", help=f"with δ = {res.claimed_delta:.3g}")
            c[1].metric(f"Audited ε ≥ ({res.confidence:.1%} confidence)", f"{res.epsilon_lower_bound:.3f}",
                        delta=f"{res.epsilon_lower_bound - res.claimed_epsilon:+.3f} vs claim",
                        delta_color="inverse")
            c[2].metric("Trials per input", f"{res.n_trials:,}")
            if res.passed:
                st.success("No violation found: the audited lower bound does not exceed the claimed ε.")
            else:
                st.error("Violation: the mechanism leaks more than it claims (the lower bound exceeds the "
                         "claimed ε).")
            fig = go.Figure(go.Bar(
                x=[res.claimed_epsilon, res.epsilon_lower_bound],
                y=["claimed ε", "audited lower bound"],
                orientation="h",
                marker_color=[style.COLOURS[0], style.OUTCOMES["answered right"]["color"] if res.passed
                              else style.OUTCOMES["⊥"]["color"]],
                text=[f"{res.claimed_epsilon:.3f}", f"{res.epsilon_lower_bound:.3f}"],
                textposition="auto",
            ))
            fig.add_vline(x=res.claimed_epsilon, line_dash="dash", line_color=style.COLOURS[0])
            style.finish(fig, x_title="ε", height=200, legend=False)
            st.plotly_chart(fig, key="audit_chart")
            st.markdown(
                f"**Event:** {res.event} (likelier under input {'a' if res.direction == 'a>b' else 'b'}).  \n"
                f"Probability on the favoured input ≈ {res.p_first:.4g} (lower bound {res.p_first_lower:.4g}); "
                f"on the other ≈ {res.p_second:.4g} (upper bound {res.p_second_upper:.4g})."
            )
            st.caption(
                "Outputs are the released label vectors: a class id per query, −1 for ⊥ (abstain), −2 for "
                "not processed (after the cutoff); soft labels are encoded as 2·score/η. "
                f"Half of the runs chose the event, the other half estimated it."
            )
        with st.expander("The two neighbouring inputs"):
            st.markdown(f"**{_pair_label(scn.pair.name)}**: {scn.pair.description}")
            st.markdown("input a")  # one above the other: each table at the full width
            st.dataframe(scn.pair.a, key="audit_input_a")
            st.markdown("input b")
            st.dataframe(scn.pair.b, key="audit_input_b")
            st.caption(f"Claimed (ε, δ) = ({scn.claimed_epsilon:.4g}, {scn.claimed_delta:.3g}), as the "
                       "library's mechanism reports it for these settings.")
