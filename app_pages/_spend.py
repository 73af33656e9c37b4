"""Spending on a real job, as the pages show it: the budget asked first, then priced buttons.

* :func:`budget_box`: a real job asks for the data's name (once: its ledger in the store
  shared with the command line) and a total budget (ε, δ) on it before its first run;
  once set, it is shown with what is spent (and may be changed, said to weaken the
  promise when raised).
* :func:`run_button`: before a run on the private votes the page shows its cost and the
  total after it ("this run: ε 1 · spent after it: 1 of 3"); the button is the only way to
  run, and a run that would pass the budget is refused in place (the button is disabled
  and the ledger's words are shown).

The prices come from :mod:`app_pages._ledger` (the runs' a-priori privacy maps composed with
what the ledger holds); nothing here runs a mechanism.
"""

from __future__ import annotations

from typing import Any, Sequence

import streamlit as st

from app_pages import _ledger as ledgers
from app_pages import _plan as plan
from app_pages import _session as session
from app_pages import _widgets as widgets

BUDGET_HELP = (
    "The most this data may spend, over every run you will ask for (each release, each priced comparison). "
    "Every run is refused before it starts if it would take the total past it."
)


NAME_HELP = (
    "The name this data's privacy budget is kept under. Use the same name every time you load this data, from "
    "any file or copy: every session, a restarted server and the command line (--dataset NAME) then charge one "
    "ledger. A new name starts a new budget."
)


def name_box(ds) -> bool:
    """A real job's name: asked for once (then remembered by the session); True once named."""
    name = ledgers.job_name(ds)
    if name is None:
        st.markdown("**Name this data**")
        st.info("A real job's privacy budget belongs to the data, under a name you give it once. Every run on it, "
                "in any session, after a restart of this server, or from the command line (`--dataset NAME`), is "
                "charged to that name's ledger.")
        with st.form("job_name_form", enter_to_submit=False):
            typed = st.text_input("Name of this data", value=ledgers.suggested_name(ds), key="job_name_input",
                                  help=NAME_HELP, max_chars=200)
            if st.form_submit_button("Use this name", type="primary"):
                with session.shown_errors():
                    ledgers.set_job_name(ds, typed)
                    st.rerun()
        return False
    store = ledgers.store()
    c = st.columns([4, 1])
    c[0].markdown(f"**Ledger of this data: {name}** (kept in `{store.path}`, shared with every session and the "
                  "command line)")
    if c[1].button("Another name", key="job_name_change", help="Asks for the name again; the ledger of "
                   f"{name} keeps every run charged to it."):
        ledgers.forget_job_name(ds)
        st.rerun()
    return True


def budget_box(ds) -> None:
    """The real job's name and total budget: asked for before the first run, then shown."""
    if not name_box(ds):
        return
    led = ledgers.ledger(ds)
    budget = led.budget
    if budget is None:
        st.markdown("**Total privacy budget on this data**")
        st.info("A real job asks for a total budget (ε, δ) on this data before its first run. Predictions are "
                "free and need none.")
        with st.form("job_budget_form", enter_to_submit=False):
            c = st.columns(2)
            eps = c[0].number_input("Total budget ε", min_value=0.01, value=3.0, step=0.5, format="%g",
                                    key="job_budget_epsilon", help=BUDGET_HELP)
            delta = c[1].number_input("Total budget δ", min_value=0.0, max_value=1.0, format="%g",
                                      value=ledgers.DEFAULT_BUDGET_DELTA, key="job_budget_delta",
                                      help="Keep it far below 1/n.")
            if st.form_submit_button("Set the budget for this data", type="primary"):
                with session.shown_errors():
                    ledgers.set_job_budget(ds, float(eps), float(delta))
                    st.rerun()
        return
    total = led.total()
    st.markdown(f"**Total privacy budget on this data: (ε, δ) = ({budget.epsilon:.4g}, {budget.delta:.3g})**; "
                f"spent so far ε {total.epsilon:.4g}, δ {total.delta:.3g} over {len(led)} "
                f"run{'s' if len(led) != 1 else ''}.")
    with st.expander("Change the budget"):
        st.caption("The budget is the promise you make about this data; raising it after runs weakens that "
                   "promise, and every run already made stays counted.")
        with st.form("job_budget_change", enter_to_submit=False):
            c = st.columns(2)
            eps = c[0].number_input("Total budget ε", min_value=0.01, value=float(budget.epsilon), format="%g",
                                    key="job_budget_epsilon_new")
            delta = c[1].number_input("Total budget δ", min_value=0.0, max_value=1.0, value=float(budget.delta),
                                      format="%g", key="job_budget_delta_new")
            if st.form_submit_button("Change the budget"):
                ledgers.set_job_budget(ds, float(eps), float(delta))
                st.rerun()


def run_button(ds, ens, runs: Sequence[tuple[str, dict[str, Any]]], *, label: str, key: str,
               what: str = "this run") -> bool:
    """The price of ``runs`` and the button that runs them; True when pressed and allowed.

    The price line is shown before the button; without a budget (real job) or past it the
    button is disabled and the reason shown in place.
    """
    p = ledgers.price(ds, runs, int(ens.votes.shape[0]))
    return priced_button(ds, p, label=label, key=key, what=what)


def priced_button(ds, p: dict[str, Any], *, label: str, key: str, what: str = "this run") -> bool:
    """:func:`run_button` for a price already computed (:func:`app_pages._ledger.price_entries`)."""
    led = ledgers.ledger(ds)
    st.markdown("**" + ledgers.price_line(p, what) + "**")
    blocked = None
    if session.is_real_job(ds) and ledgers.job_name(ds) is None:
        blocked = "Name this data and set its total budget first (their box is on Private labeling and on Student & export)."
    elif session.is_real_job(ds) and led.budget is None:
        blocked = "Set the total budget for this data first (its box is on Private labeling and on Student & export)."
    elif not p["fits"]:
        blocked = "Refused: " + p["refusal"]
    if blocked:
        st.error(blocked)
    pressed = st.button(label, type="primary", key=key, disabled=blocked is not None,
                        help="Runs on the private votes once, with fresh noise, and counts it on this data's ledger.")
    return bool(pressed and blocked is None)


TUNE_EPSILONS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
"""The ε values offered to private selection (each candidate's own ε)."""


def selection_candidates() -> tuple[list[str], list[str]]:
    """The registered mechanisms private selection accepts, and the titles of the others.

    The ensemble's mechanisms that read vote counts and the DP-training routes (one model
    trained with DP on the private rows, :func:`core.pipeline.tune_candidate`), as the
    command line's ``tune`` takes them.
    """
    from core import pipeline
    from core.errors import PrivateLabelLabError
    from core.mechanisms import registry

    ok, why = [], []
    for name in registry.names():
        mech = registry.get(name)
        if mech.inputs not in ("counts", "rows") or not mech.takes_epsilon:
            continue
        try:
            pipeline.tune_price([pipeline.tune_candidate(name, session.request(name, {"epsilon": 1.0}))], 100)
        except PrivateLabelLabError:
            why.append(mech.title)
        else:
            ok.append(name)
    return ok, why


def trains_on_rows(name: str) -> bool:
    """Whether ``name`` is a DP-training route (no teachers: one model trained with DP on the private rows)."""
    from core.mechanisms import registry

    return registry.get(name).inputs == "rows"


def tune_section(ds, ens) -> None:
    """"Tune privately": a grid of mechanisms × ε, its price first, then one button."""
    from core import pipeline

    st.subheader("Tune privately")
    st.markdown(
        "Chooses the best of a grid of settings **on the private data** under one guarantee fixed before it "
        "starts: Papernot and Steinke's random-stopping selection. A grid of the ensemble's mechanisms only is "
        "judged by the number of queries each run answers (an output of the run itself). A grid with a "
        "DP-training route (which answers every query, so it would always win on that count) is judged as the "
        "command line's `tune` judges it: private rows are held out at random, the teachers are trained again "
        "without them, and each run's student is scored by its noisy count of correct labels on them. Only the "
        "chosen run's labels are released; the report states the whole selection's guarantee. How many "
        "repetitions ran is never shown: the guarantee holds with it hidden."
    )
    names, why = selection_candidates()
    if not names:
        st.info("No registered mechanism can be a candidate of private selection here.")
        return
    current = session.privacy()["mechanism"]
    c = st.columns(2)
    mechs = c[0].multiselect("Mechanisms to try", names, default=[current if current in names else names[0]],
                             format_func=widgets.mechanism_title, key="tune_mechanisms")
    epsilons = c[1].multiselect("ε values to try (each run's own ε)", list(TUNE_EPSILONS), default=[1.0, 2.0],
                                key="tune_epsilons")
    if why:
        st.caption(f"Not offered: {', '.join(why)}. Their guarantee carries an additive δ or is known only as "
                   "(ε, δ), which the selection's Rényi-DP theorem cannot take.")
    if "dp-logistic" in mechs:
        st.caption("The DP logistic regression is tried with its pure-ε objective perturbation (Gamma noise): its "
                   "Gaussian one is known only as (ε, δ), which the selection's theorem cannot take.")
    candidates = [pipeline.tune_candidate(n, session.request(n, {"epsilon": float(e)}))
                  for n in mechs for e in sorted(epsilons)]
    if not candidates:
        st.info("Tick at least one mechanism and one ε.")
        return
    score_sigma = holdout = None
    if any(trains_on_rows(n) for n in mechs):
        most = max(int(ds.n_private) - 2, 1)
        holdout = int(st.number_input(
            "Private rows held out to score on", min_value=1, max_value=most,
            value=min(pipeline.HOLDOUT_ROWS, max(1, int(ds.n_private) // 5)), step=50, key="tune_holdout",
            help="Kept out of every teacher and every DP-trained model; each run's student is scored by its correct "
                 "labels on them (one row of each changes the count by at most 1), released with discrete Gaussian "
                 "noise. Setting it spends nothing."))
        score_sigma = pipeline.SCORE_SIGMA
        st.caption(f"Judged on {holdout:,} held-out private rows: each run's student's correct count, with discrete "
                   f"Gaussian noise σ = {score_sigma:g} (in the price below). "
                   + ("The teachers are trained again on the other rows when you press the button."
                      if any(not trains_on_rows(n) for n in mechs) else ""))
    k = int(ens.teachers.k)
    rows = []
    for name, settings in candidates:
        pred = plan.predict_for(ds, k, name, settings, draws=plan.CURVE_DRAWS, advise=False)
        rows.append({"mechanism": widgets.mechanism_title(name), "ε": settings.get("epsilon"),
                     "answered (predicted)": plan.pm(pred.answered, pred.answered_sd),
                     "correct (predicted)": plan.pm(pred.correct, pred.correct_sd)})
    st.dataframe(rows, hide_index=True)
    st.caption(f"The grid, {plan.PREDICTED} (free).")
    p = ledgers.tune_price(ds, candidates, int(ens.votes.shape[0]), score_sigma=score_sigma)
    if priced_button(ds, p, label=f"Tune privately ({len(candidates)} candidates)", key="tune_private",
                     what="this selection"):
        with session.shown_errors():
            bar = st.progress(0.0, text="Private selection…") if score_sigma is not None else None

            def progress(done: int, total: int) -> None:
                bar.progress(min(1.0, done / max(total, 1)), text=f"Trained {done} of {total} teachers (without "
                                                                    "the held-out rows)")

            ledgers.tune(ds, ens, candidates, score_sigma=score_sigma, holdout=holdout,
                         progress=progress if bar is not None else None)
            st.rerun()  # every total on the page (drawn above) shows the selection
    rel = ledgers.current_release(ds, ens)
    sel = None if rel is None else rel.get("selection")
    if sel is not None:
        r = sel.result
        st.success(f"Chosen: **{widgets.mechanism_title(sel.mechanism)}** at ε = {sel.settings.get('epsilon'):g}: "
                   f"{r.n_answered} answered, {r.n_bottom} ⊥, {r.n_unprocessed} not "
                   f"processed; judged by {sel.score_kind}. The whole selection: (ε, δ) = ({sel.epsilon:.4g}, {sel.delta:.3g}). These labels are "
                   "the release the Student & export page exports.")


def estimate_section(ds, ens) -> None:
    """Replace the assumed quality with private estimates: each one a priced, counted run."""
    from core.ledger.entries import PureDPEntry
    from core.plan.estimate import estimate_class_shares, estimate_price, estimate_quality

    with st.expander("Estimate the teachers' quality privately instead of assuming it (priced)"):
        st.caption("Each estimate reads the private data, so it is a run: priced first and counted on this data's "
                   "ledger. The teachers' agreement is the noisy mean share of teachers voting for each query's "
                   "plurality (it moves by at most one vote per query when one private row changes); the class "
                   "shares are a noisy count of the private labels.")
        eps = st.number_input("ε of each estimate", min_value=0.01, max_value=5.0, value=0.1, step=0.05,
                              format="%g", key="estimate_epsilon")
        m, k = int(ens.votes.shape[0]), int(ens.teachers.k)
        acc, hard, major = plan.quality()
        assumed = plan.teacher_quality(acc, hard, major, ds.n_classes)
        p = ledgers.price_entries(ds, [estimate_price(epsilon=float(eps), m=m, k=k)])
        if priced_button(ds, p, label="Estimate the teachers' agreement", key="estimate_agreement",
                         what="this estimate"):
            with session.shown_errors():
                ledgers.require_budget(ds)
                rng = session.noise_rng(ds, "agreement")
                est = estimate_quality(ens.votes, epsilon=float(eps), assumed=assumed, ledger=ledgers.ledger(ds),
                                       rng=rng)
                plan.set_quality("accuracy", round(est.quality.accuracy, 2))
                st.session_state["_quality_note"] = (
                    f"Assumed teacher accuracy set from a private estimate: agreement {est.agreement:.3f} "
                    f"(± {est.noise_sd:.3f}) at ε {est.epsilon:g}.")
                st.rerun()
        shares_entry = PureDPEntry.uniform(eps_step=float(eps), n_steps=1, mechanism="class-shares-estimate")
        p = ledgers.price_entries(ds, [shares_entry])
        if priced_button(ds, p, label="Estimate the share of the most common class", key="estimate_shares",
                         what="this estimate"):
            with session.shown_errors():
                ledgers.require_budget(ds)
                rng = session.noise_rng(ds, "class_shares")
                shares = estimate_class_shares(ds.private.labels, n_classes=ds.n_classes, epsilon=float(eps),
                                               ledger=ledgers.ledger(ds), units=ds.private.unit, rng=rng,
                                               rows=ds.private.rows if ds.private.missing == "drop" else None)
                plan.set_quality("majority", round(float(max(shares)), 2))
                st.session_state["_quality_note"] = (
                    f"Assumed share of the most common class set from a private count: {max(shares):.2f} "
                    f"at ε {float(eps):g}.")
                st.rerun()
        note = st.session_state.get("_quality_note")
        if note:
            st.success(note)
