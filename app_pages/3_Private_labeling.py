"""Private labeling: turn the cached teacher votes into differentially private labels."""

from __future__ import annotations

import streamlit as st

from core import nonprivate, pipeline
from core.mechanisms import registry
from app_pages import _session as session
from app_pages import _cache as cache
from app_pages import _datasets as datasets
from app_pages import _ledger as ledgers
from app_pages import _lesson_ledger as lesson
from app_pages import _plan as plan
from app_pages import _spend as spending
from app_pages import _charts as charts
from app_pages import _widgets as widgets
from app_pages._text import literal

session.init()
ss = st.session_state

st.title("Private labeling")
st.markdown(
    "The teachers' votes depend on the private data, so they cannot be published. A private "
    "mechanism releases a label only when it is safe: every mechanism here is $(\\varepsilon, \\delta)$-"
    "differentially private, meaning that replacing any one private row changes the probability of "
    "any output by at most a factor $e^{\\varepsilon}$ (plus a small $\\delta$)."
)
st.latex(r"\Pr[\mathcal{M}(D) \in S] \le e^{\varepsilon}\,\Pr[\mathcal{M}(D') \in S] + \delta")

# The mechanism's formulas at the page's full width (a narrow column cuts long ones at 1024 px).
formulas_box = st.container()
controls, results = st.columns([2, 3], gap="large")

with controls:
    with session.shown_errors():
        ds = datasets.dataset()
        ens = cache.ensemble()
        # Every registered mechanism, from the registry; those reading teacher scores only
        # where this ensemble has scores (binary task, a learner with probabilities).
        offered = [name for name in registry.names() if ens.offers(name)]
        if session.privacy()["mechanism"] not in offered:
            session.remember("privacy", "mechanism", offered[0])
            st.session_state.pop("w_privacy_mechanism", None)
        # Each option's price under it, before the click that runs it (a new run on teaching data).
        mechanism = st.radio("Mechanism", offered, format_func=widgets.mechanism_title,
                             captions=lesson.option_captions(offered, ds.n_public),
                             key=session.widget_key("privacy", "mechanism"))
        session.remember("privacy", "mechanism", mechanism)
        missing = [registry.get(n).title for n in registry.names() if n not in offered]
        if missing:
            st.caption(f"Not offered here ({', '.join(missing)}): {literal(ens.scores_error)}")

        mech = registry.get(mechanism)
        st.markdown(mech.explanation or mech.description)
        if mech.formulas:
            with formulas_box.expander(f"The formulas of {mech.title}", expanded=True):
                for formula in mech.formulas:
                    st.latex(formula)
        widgets.mechanism_controls(st, mechanism)
        price = lesson.price_caption(mechanism, ds.n_public, teaching=not session.is_real_job(ds))
        if price:
            (st.warning if lesson.run_price(mechanism, ds.n_public).per_query else st.caption)(price)
        derived = widgets.derived_caption(mechanism, ds.n_public)
        if derived:
            st.info(derived)
        st.caption(f"δ is the small chance that the ε bound fails. Keep it far below 1/n = {1 / ds.n_private:.1e} "
                   f"(n = {ds.n_private:,} private rows): publishing one private row picked at random, in full, "
                   "already satisfies δ = 1/n with ε = 0.")

        if session.is_real_job(ds):
            spending.budget_box(ds)
        else:
            with st.expander("Total privacy budget on this data (optional)"):
                b1, b2 = st.columns(2)
                b_eps = b1.number_input("Budget ε (0 = no budget)", min_value=0.0, step=1.0, format="%g",
                                        key=session.widget_key_for(ledgers.BUDGET_SECTION, "epsilon", 0.0))
                b_delta = b2.number_input("Budget δ", min_value=0.0, max_value=1.0, format="%g",
                                          key=session.widget_key_for(ledgers.BUDGET_SECTION, "delta",
                                                                     ledgers.DEFAULT_BUDGET_DELTA))
                session.remember(ledgers.BUDGET_SECTION, "epsilon", float(b_eps))
                session.remember(ledgers.BUDGET_SECTION, "delta", float(b_delta))
                st.caption("Every run on these private rows is charged to this lesson's ledger; a run that would "
                           "take its total past this budget is refused before it runs (nothing is drawn, nothing "
                           "is spent).")


def adjacency_words(ds) -> str:
    """The adjacency the guarantee holds under, in words: one row, or all the rows of one person (the report's)."""
    unit = ds.private.privacy_unit
    if unit.per_row:
        return "replace-one adjacency (neighbouring private datasets differ in one row)"
    return (f"per-person adjacency (neighbouring private datasets differ in all the rows of one person, column "
            f"{literal(unit.column)})")


def show_result(result, ds, ens) -> None:
    """The measured result of a run on the private votes: counts, guarantees, timeline."""
    st.subheader("Result")
    c = st.columns(2) + st.columns(2)  # two metrics a row: their labels fit a narrow column at 1024 px
    c[0].metric("Answered", result.n_answered, help="Queries that received a private label.")
    c[1].metric("Abstained (⊥)", result.n_bottom, help="Queries the mechanism refused to label.")
    c[2].metric("Not processed", result.n_unprocessed,
                help="Queries after the mechanism halted (T abstentions reached): not the same as ⊥.")
    g = [c[3]] + st.columns(2)
    certified = "epsilon_data_independent" in result.params
    g[0].metric("Certified guarantee ε" if certified else "Guarantee ε", session.fmt(result.epsilon, 4),
                help="A guarantee for every dataset (ε, δ), computed before the data is seen"
                + (" from the certified test's budget (propose–test–release)." if certified else "."))
    g[1].metric("Guarantee δ", f"{result.delta:.3g}")
    if certified:
        alone = session.fmt(result.params["epsilon_data_independent"], 4)
        g[2].metric("Same noise without the test ε", alone,
                    help="What the same Confident-GNMax noise on these queries guarantees when no test is run, from "
                    "public parameters only: for comparison; it does not cover this release, whose test is "
                    "published too.")
        st.caption(f"Which ε holds for this release: the certified ε {session.fmt(result.epsilon, 4)} (δ "
                   f"{result.delta:.3g}), which covers both the private test and the labels. ε {alone} beside it is "
                   "what the same labeling noise guarantees on its own, as plain Confident-GNMax with no test; it is "
                   "shown for comparison and does not cover this release, because the test's outcome is published "
                   f"too (the test alone costs ε {session.fmt(result.params['epsilon_test'], 4)}, part of the "
                   f"{session.fmt(result.epsilon, 4)}).")
    if result.mechanism == "certified-gnmax":  # why it released or not, in words, before the accounting
        from core.mechanisms.certified import certified_outcome_words

        (st.success if result.params.get("passed") else st.warning)(certified_outcome_words(result))
        st.markdown(f"**(ε, δ) = ({result.epsilon:.4g}, {result.delta:.3g})** under {adjacency_words(ds)}.")
        with st.expander("How the guarantee is computed (technical)"):
            st.caption(result.accounting)
    else:
        st.markdown(
            f"**(ε, δ) = ({result.epsilon:.4g}, {result.delta:.3g})** under {adjacency_words(ds)}. How it was "
            f"computed: {result.accounting}"
        )
    ledgers.show_spent(st, ds, ens=ens)
    if result.halted_at is not None:
        st.caption(f"The mechanism halted at query {result.halted_at + 1} of {result.m} after {result.n_bottom} abstentions.")

    if not result.feasible:
        st.error("These settings can answer (almost) nothing. " + (result.reason or ""))
        k_needed = charts.min_teachers(result)
        if k_needed is not None:
            st.info(f"Teachers needed for a unanimous vote to pass the test half the time: "
                    f"**k ≥ {k_needed:,}**; you have k = {ens.teachers.k}.")
    elif result.halted_at is not None and result.n_answered == 0:
        st.warning("No query was answered before the mechanism halted: the vote margins are small "
                   "compared with the threshold. Raise ε, lower T, use more teachers or more data.")

    st.markdown("**Timeline over the queries** (in the order they were processed)")
    fig = charts.timeline_figure(result)
    st.plotly_chart(fig, key="timeline")

    with st.expander("All parameters of this run"):
        # In words: "delta release", not the library's key (the page shows no code names).
        st.json({key.replace("_", " "): value for key, value in charts.public_params(result).items()})


def certified_test(result, ens) -> None:
    """The test that decides a certified run: the budget line, this run's value, and the test drawn 2,000 times."""
    import dataclasses

    from core.mechanisms.certified import certified_test_picture
    from core.mechanisms.certified_params import CertifiedParameters

    params = CertifiedParameters(**{f.name: result.params[f.name] for f in dataclasses.fields(CertifiedParameters)})
    pic = certified_test_picture(ens.votes, params, draws=2000, rng=session.DEMO_SEED)
    st.markdown("**The test that decides: the measured privacy cost against the budget** (the spread of the "
                "test is NON-PRIVATE: it reads the raw votes)")
    fig = charts.certified_test_figure(pic, float(result.params["test_value"]), bool(result.params.get("passed")))
    st.plotly_chart(fig, key="certified_test")
    st.caption(f"Left of the budget line the labels are released. On these votes the test passes with probability "
               f"{pic.p_pass:.4g}: the cost without noise is {pic.cost:.3g} (NON-PRIVATE), and the noise, which "
               "keeps the test private, spreads it around that.")


result = None
with results:
    with session.shown_errors():
        ds = datasets.dataset()
        if not session.is_real_job(ds):
            ens = cache.ensemble()
            result, privacy_warnings = cache.labeling()
            for text in privacy_warnings:
                st.warning(text)
            show_result(result, ds, ens)
            st.divider()
            if st.toggle("Tune privately", key="show_tune",
                         help="Choose the best of a grid of settings, privately (the choice is paid for too)."):
                spending.tune_section(ds, ens)
        else:
            # A real job: the plan (free, predicted) first, then the run on the private votes as a priced button.
            mechanism = session.privacy()["mechanism"]
            k = int(ss["ensemble_cfg"]["k"])
            st.subheader("Plan: the predicted result")
            st.caption(f"**{plan.PREDICTED.capitalize()}.** Free: nothing here reads the private rows or votes.")
            plan.quality_controls(st)
            plan.show_prediction(st, plan.predict_for(ds, k, mechanism), m=ds.n_public)
            chosen, routes = plan.choice_for(ds, k)
            eps_now = session.privacy().get("epsilon")
            at = f"at ε = {eps_now:g}" if isinstance(eps_now, (int, float)) else "at these settings"
            st.markdown(f"**The plan's choice {at}** (the useful route with the most correct labels, among GNMax, "
                        "Confident-GNMax and the two DP-training routes): "
                        + ("none is predicted useful." if chosen is None else
                           f"{registry.get(chosen.mechanism).title}, {plan.pm(chosen.correct, chosen.correct_sd)} of "
                           f"{ds.n_public:,} right."))
            plan.routes_table(st, routes)
            planned = pipeline.privacy_map(mechanism, session.request(mechanism), ds.n_public)
            st.markdown(f"Guarantee of a run at these settings, known before any data is seen: "
                        f"**(ε, δ) = ({planned.epsilon:.4g}, {planned.delta:.3g})**.")
            st.divider()
            st.subheader("Run on the private votes")
            ens = cache.cached_ensemble(ds)
            if ens is None:
                st.info("Train the teachers on the Ensemble page first (training spends no privacy: only a run "
                        "on their votes does).")
            else:
                if spending.run_button(ds, ens, [(mechanism, session.request(mechanism))],
                                       label="Run on the private votes", key="run_private"):
                    with session.shown_errors():
                        cache.priced_run(mechanism, ens=ens)
                        st.rerun()  # every total on the page, the budget box drawn above included, counts it
                result = cache.paid_run(mechanism, ens=ens)
                if result is not None:
                    show_result(result, ds, ens)
                    st.caption("This run was asked for and paid; it is also the release the Student & export "
                               "page exports. Pressing the button again draws a new run, counted again.")
                else:
                    ledgers.show_spent(st, ds, ens=ens)
                spending.estimate_section(ds, ens)
                st.divider()
                spending.tune_section(ds, ens)

st.divider()
st.subheader("Non-private diagnostics")
st.caption(
    "Everything below compares the private labels with the public queries' held-out true labels or "
    "looks at the raw votes. It is for understanding only: not private, never exported."
)
with session.shown_errors():
    ds = datasets.dataset()
    if result is None:
        raise cache.NotRunYet("No run on the private votes at these settings yet: the diagnostics of a run "
                              "appear once it has run.")
    ens = cache.ensemble()
    if not widgets.raw_votes_allowed(ds, key="raw_votes_labeling"):
        raise cache.NotRunYet("Not shown on a real job unless you ask (tick the box above).")
    left, right = st.columns(2)
    with left:
        if ds.public_y is None:
            st.info("The public queries came from an unlabeled file: their accuracy cannot be measured.")
        elif result.scores is not None:
            st.metric("Mean absolute error of the released scores",
                      session.fmt(nonprivate.soft_error(result.scores, result.answered, ds.public_y)))
        else:
            acc = nonprivate.answered_accuracy(result.labels, ds.public_y)
            err = None if acc is None else 1.0 - acc
            cols = [st.container(), st.container()]  # one metric a row: labels whole at 1024 px
            cols[0].metric("Misclassification on answered", session.fmt(err),
                           help="Share of answered queries whose private label differs from the true label.")
            line = nonprivate.reference_line(
                f"Labels of {widgets.mechanism_title(result.mechanism)} (accuracy on answered)", acc, ds.public_y,
                plurality=nonprivate.plurality_accuracy(ens.votes, ds.public_y))
            if line:
                st.markdown(f"**{line}**")
            if result.mechanism == "btt" and acc is not None:  # BTT's own theorem: drawn for BTT only
                check = nonprivate.theorem_32_check(ens.predictions, ds.public_y, result, beta=ss["privacy"]["beta"],
                                                     n_classes=ds.n_classes, n_private=ds.n_private)
                if check.holds:
                    cols[1].metric("Theorem 3.2 bound (T/m)", session.fmt(check.bound),
                                   help="BTT Theorem 3.2 for this run's cutoff T, teachers k and m queries, with the "
                                   "worst teacher's measured error: every condition of the theorem holds.")
                    st.caption(check.sentence() + f" Its conditions hold: T = {check.T} reaches the theorem's "
                               f"{check.T_needed:.3g} for the worst teacher's error {check.error:.3g}, and k = "
                               f"{check.k:,} reaches Algorithm 2's {check.k_needed:,.0f}.")
                else:
                    st.warning(check.sentence())
                    st.caption("The theorem's conditions are checked with the worst teacher's error measured on "
                               "the public queries' held-out labels (a non-private teaching measurement); the "
                               "Bounds page shows how the conditions move with k, T and m.")
        eps_dd = nonprivate.data_dependent_epsilon(ens.votes, result) if result.scores is None else None
        if eps_dd is not None:
            st.metric("Data-dependent ε (NON-PRIVATE diagnostic, not a guarantee)", session.fmt(eps_dd, 4),
                      help="PATE's data-dependent analysis of these votes: it describes the private data, "
                      "so publishing it would leak; shown for understanding only, never exported. "
                      "The guarantees are the data-independent and (for certified runs) certified ε above.")
    with right:
        if result.mechanism == "certified-gnmax":
            certified_test(result, ens)
        charts.show_test_picture(st, result, ens, ds.public_y)
