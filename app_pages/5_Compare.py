"""Compare: every mechanism on the same cached votes at equal (ε, δ)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core import nonprivate
from core.errors import PrivateLabelLabError
from app_pages import _session as session
from app_pages import _cache as cache
from app_pages import _charts as charts
from app_pages import _datasets as datasets
from app_pages import _ledger as ledgers
from app_pages import _lesson_ledger as lesson
from app_pages import _plan as plan
from app_pages import _spend as spending
from app_pages import _widgets as widgets
from app_pages._text import literal

session.init()
ss = st.session_state

st.title("Compare the mechanisms")
st.markdown(
    "Every registered mechanism below labels the **same** public queries from the **same** teacher votes, "
    "at the same privacy budget $(\\varepsilon, \\delta)$: each one's own settings are chosen for that ε by "
    "the same rules as on the command line. BTT pays only for abstentions (⊥) "
    "and stops after $T$ of them; PATE's noisy max pays for every answer (its noise γ follows from ε); the "
    "baseline splits $\\varepsilon$ over all $m$ queries."
)
st.latex(r"\text{BTT: } \varepsilon \approx \frac{2T}{\lambda}\ \text{(composed over } T \text{ rounds)}")
st.latex(r"\begin{aligned}\text{LNMax: } \varepsilon &= \varepsilon_\delta\big(2m \text{ Laplace coordinates of scale } "
         r"1/\gamma\big)\\ &\le 4m\gamma^2 + 2\gamma\sqrt{2m\log(1/\delta)}\end{aligned}")
st.caption("λ: the scale of BTT's Laplace noise; γ: LNMax's noise parameter (each count gets Laplace noise of "
           "scale 1/γ); ε_δ(…): the smallest ε at which those noises, composed, meet δ; m: the number of queries; "
           "T: BTT's cutoff (the most ⊥ it pays for).")

EPS_GRID = [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0]
# Mechanisms that train a model on the private rows for every budget: on a large table (rows ×
# columns above SLOW_CELLS) each point of the curve takes seconds, so the curve leaves them out
# (their row in the table is still measured). MNIST's 4,000 × 784 is above; digits' is far below.
SLOW_ON_LARGE_TABLES = ("dp-logistic",)
SLOW_CELLS = 1_000_000
# Second rows of a mechanism at other settings: BTT with the paper's printed calibration.
EXTRA_ROWS = (("btt", {"calibration": "paper"}),)

c1, c2, c3 = st.columns(3)
eps = widgets.shared_widget(c1, "epsilon")
delta = widgets.shared_widget(c2, "delta")
T = widgets.shared_widget(c3, "T")


def count_cell(value: int | None) -> str:
    """A count in a table cell: 1,953, or — where there is none (never the word None)."""
    return "—" if value is None else f"{int(value):,}"


def chosen_rows(labels: list[str], *, key: str) -> list[str]:
    """The chooser of the mechanisms the charts below show (all of them at first)."""
    if key in ss:  # a row that is gone (another ε, other data) is dropped from the choice
        ss[key] = [label for label in ss[key] if label in labels]
    return st.multiselect("Mechanisms in the charts", labels, default=labels, key=key,
                          help="Choose which mechanisms the charts show; the tables keep every row.")


def draw_curves(curves: dict[str, list], rows: dict[str, tuple], title: str, key: str, *, top: int,
                top_words: str = "all answered") -> None:
    """One chart of curves against ε, and in words the curves that lie on one line."""
    if not curves:
        st.info("Choose at least one mechanism above to draw its curve.")
        return
    fig, same = charts.curves_figure(EPS_GRID, curves, rows, x_title="ε (privacy budget)", y_title=title, top=top,
                                     top_words=top_words)
    st.plotly_chart(fig, key=key)
    for text in same:
        st.caption(f"**{text}** The lines underneath are hidden by the one on top.")


def real_job_view(ds) -> None:
    """A real job: the comparison and the curves predicted (free); the comparison on the
    private votes is one priced action."""
    ens = cache.cached_ensemble(ds)
    k = int(ss["ensemble_cfg"]["k"]) if ens is None else int(ens.teachers.k)
    m = ds.n_public
    rows, skipped = cache.compare_rows(ens, float(eps), m, EXTRA_ROWS, n_classes=ds.n_classes)
    st.subheader(f"Plan at ε = {eps:g}, δ = {delta:.0e} on {m:,} queries")
    st.caption(f"**{plan.PREDICTED.capitalize()}.** Free: every number in this section comes from n, m, k, the "
               "number of classes, the settings and the assumed teacher quality below.")
    plan.quality_controls(st)
    preds = {label: plan.predict_for(ds, k, name, settings, advise=False,
                                     draws=plan.CURVE_DRAWS if name in plan.SLOW_TO_SIMULATE else plan.TABLE_DRAWS)
             for label, (name, settings) in rows.items()}
    for label, p in list(preds.items()):  # settings the mechanism refuses (before any data) are no row to pay for
        if p.epsilon != p.epsilon:
            skipped.append(f"{label} is not compared: {p.reason}")
            del preds[label], rows[label]
    st.dataframe(pd.DataFrame([
        {"mechanism": label, "answered (predicted)": plan.pm(p.answered, p.answered_sd),
         "correct (predicted)": plan.pm(p.correct, p.correct_sd), "⊥ (predicted)": plan.pm(p.bottom, p.bottom_sd),
         "not processed (predicted)": plan.pm(p.not_processed, p.not_processed_sd),
         "useful": "yes" if p.useful else "no", "ε spent": round(p.epsilon, 4) if p.epsilon == p.epsilon else "—"}
        for label, p in preds.items()]), hide_index=True)
    for text in skipped:
        st.caption(text)
    st.caption("A row is useful when its answered labels are predicted to beat always answering the majority "
               "class (its assumed share above); ε spent is each mechanism's data-independent guarantee, known before any data is seen.")

    st.subheader("Privacy–utility curve (predicted)")
    st.caption(f"{plan.PREDICTED.capitalize()}: each point is the mean over {plan.CURVE_DRAWS} simulated runs "
               f"(each row of the table over {plan.TABLE_DRAWS}, or {plan.CURVE_DRAWS} for a mechanism slow to simulate).")
    curve: dict[str, list] = {label: [] for label, (name, _) in rows.items() if name not in plan.SLOW_TO_SIMULATE}
    left_off = [label for label in rows if label not in curve]
    if left_off:
        st.caption(f"Not drawn: {', '.join(left_off)} (slow to simulate at every ε; its row in the table "
                   "above is predicted).")
    for e in EPS_GRID:
        at_e, _ = cache.compare_rows(ens, e, m, EXTRA_ROWS, n_classes=ds.n_classes)
        for label in curve:
            curve[label].append(plan.predict_for(ds, k, *at_e[label], draws=plan.CURVE_DRAWS, advise=False)
                                if label in at_e else None)
    shown = chosen_rows(list(curve), key="w_compare_shown_plan")
    for measure, title, key in (("answered", "answered queries (predicted)", "utility_curve_predicted"),
                                ("correct", "correct labels (predicted)", "correct_curve_predicted")):
        draw_curves({label: [None if p is None else getattr(p, measure) for p in points]
                     for label, points in curve.items() if label in shown}, rows, title, key, top=m)

    st.divider()
    st.subheader("Compare on the private votes")
    if ens is None:
        st.info("Train the teachers on the Ensemble page first (training spends no privacy: only a run on their "
                "votes does).")
        ledgers.show_spent(st, ds)
        return
    runs = [(name, session.request(name, settings)) for name, settings in rows.values()]
    st.caption(f"One action: every row of the table above runs once on the private votes ({len(runs)} runs). "
               "The price below is their composition, shown before anything runs.")
    if spending.run_button(ds, ens, runs, label=f"Run the comparison on the private votes ({len(runs)} runs)",
                           key="compare_private", what=f"these {len(runs)} runs"):
        with session.shown_errors():
            cache.priced_compare(rows, ens, float(eps))
    measured = cache.paid_compare(ens, float(eps))
    if measured is not None:
        st.markdown("**Measured on the private votes** (counted on this data's ledger)")
        failed = {label: r for label, r in measured.items() if isinstance(r, Exception)}
        measured = {label: r for label, r in measured.items() if label not in failed}
        st.dataframe(pd.DataFrame([
            {"mechanism": label, "answered": r.n_answered, "⊥": r.n_bottom, "not processed": r.n_unprocessed,
             "ε spent": round(r.epsilon, 4), "δ spent": f"{r.delta:.3g}"}
            for label, r in measured.items()]), hide_index=True)
        for label, exc in failed.items():
            st.caption(f"{label} did not run: {literal(exc)}")
    ledgers.show_spent(st, ds, ens=ens)
    if measured is not None and ds.public_y is not None and widgets.raw_votes_allowed(ds, key="raw_votes_compare"):
        st.subheader("Non-private diagnostics")
        st.caption("Accuracy of the measured runs against the public queries' held-out true labels: for "
                   "understanding only, never exported.")
        st.dataframe(pd.DataFrame([
            {"mechanism": label,
             "correct labels": count_cell(None if r.scores is not None
                                          else nonprivate.correct_count(r.labels, ds.public_y)),
             "accuracy on answered": session.fmt(None if r.scores is not None
                                                 else nonprivate.answered_accuracy(r.labels, ds.public_y))}
            for label, r in measured.items()]), hide_index=True)


def unpaid(ens, wanted) -> list[tuple[str, dict]]:
    """The runs among ``wanted`` (``(name, settings)``) this session has not drawn yet: each would be charged."""
    out, seen = [], set()
    for name, settings in wanted:
        key = (name, tuple(sorted(session.request(name, settings).items())))
        if key not in seen and cache.paid_run(name, settings, ens) is None:
            seen.add(key)
            out.append((name, settings))
    return out


def _entries(ens, runs) -> list:
    from core import pipeline

    m = int(ens.votes.shape[0])
    return [pipeline.ledger_entry(name, session.request(name, settings), m) for name, settings in runs]


def _runs_label(label: str, price) -> str:
    return f"{label} ({price.runs} run{'s' if price.runs != 1 else ''}, ε {lesson.fmt_eps(price.cost.epsilon)})"


def asked_first(ds, ens, runs, *, what: str, label: str, key: str):
    """Teaching data: the price of ``runs`` (not drawn yet) first, and a click.

    Returns ``(go, note, price)``: ``go`` is True when they may run now (nothing to pay, the
    lecturer chose to run comparisons without asking, or the priced button was pressed);
    ``note`` is the place of the price's words and button, which the page fills with what
    ran once the runs are made (None when nothing was asked); ``price`` the group's price.
    """
    if not runs or not lesson.ask_first():
        return True, None, None
    led = ledgers.lesson_ledger(ledgers.lesson_key(ds)) if not lesson.demonstration() else ledgers.ledger(ds)
    price = lesson.lesson_price(led, _entries(ens, runs))
    note = st.empty()
    with note.container():
        st.info(price.words(what) + (" A demonstration: not charged to your lesson." if lesson.demonstration() else "")
                + " Nothing has run yet.")
        if not price.fits:
            st.error("Refused: that would take your lesson past its budget (Private labeling page). Lower ε or start a "
                     "new lesson.")
        pressed = st.button(_runs_label(label, price), key=key, type="primary", disabled=not price.fits)
    return bool(pressed), note, price


# Session key: what the last priced comparison ran and cost (said after the run, with "Run again").
RAN = "_compare_ran"


def said_after_the_run(where, ens, record: dict) -> bool:
    """What the priced comparison ran and what it cost, in one sentence, why together costs less than the sum,
    and "Run again" with its price; True when "Run again" is pressed (its runs are then dropped from memory,
    so that they are drawn, and charged, again)."""
    ds = datasets.dataset()
    led = ledgers.lesson_ledger(ledgers.lesson_key(ds)) if not lesson.demonstration() else ledgers.ledger(ds)
    runs = record["drawn"]  # what the priced run drew (a run shown before it was already paid for)
    price = lesson.lesson_price(led, _entries(ens, [(n, dict(s)) for n, s in runs]))
    n = record["runs"]
    text = (f"**Ran {n} run{'s' if n != 1 else ''} on the private rows: ε {lesson.fmt_eps(record['cost'])} together; "
            f"your lesson's total went from ε {lesson.fmt_eps(record['before'])} to ε "
            f"{lesson.fmt_eps(record['after'])}.**")
    if n > 1 and record["own"] > record["cost"] * (1 + 1e-9):
        text += (f" Why less than the sum of their own εs (ε {lesson.fmt_eps(record['own'])}): runs of one kind are "
                 "composed as one long run, and the noise of many runs does not line up against one person every "
                 "time; the ledger also composes them with the runs already on it, so the total grows by at most "
                 "their ε together.")
    with where.container():
        st.success(text)
        again = st.button(_runs_label("Run again", price), key=f"compare_again_{len(led)}", disabled=not price.fits,
                          help="Draws the noise of every row and curve point again: new runs, charged to the ledger."
                          + (" With the demo seed on, the same noise is drawn again: the same numbers, charged again."
                             if session.demo_mode() else ""))
    if again:
        memo = st.session_state["_labelings"]
        for name, settings in runs:
            memo.pop(cache._memo_key(ens, name, dict(settings)), None)
    return bool(again)


def teaching_view() -> None:
    """Teaching data: every row and every curve point is a run on the votes (each counted), priced before it runs."""
    ds = datasets.dataset()
    ens = cache.ensemble()
    m = int(ens.votes.shape[0])
    rows, skipped = cache.compare_rows(ens, float(eps), m, EXTRA_ROWS)
    quiet = st.toggle("Run comparisons without asking first (this session)",
                      key=session.widget_key_for("lesson", "run_without_asking", False),
                      help="For a lecturer who wants Compare to run as soon as it opens: every row and curve point is "
                      "still a run, charged to the lesson (or to the demonstration, when one is marked).")
    session.remember("lesson", "run_without_asking", bool(quiet))
    # Every run of the page: the table at ε, and each row at every budget of the curve.
    cells = ds.n_private * len(ds.private.features.columns)
    on_curve = [label for label, (name, _) in rows.items() if not (name in SLOW_ON_LARGE_TABLES and cells > SLOW_CELLS)]
    at_grid = {e: cache.compare_rows(ens, e, m, EXTRA_ROWS)[0] for e in EPS_GRID}
    wanted = list(rows.values()) + [at_grid[e][label] for e in EPS_GRID for label in on_curve if label in at_grid[e]]
    to_pay = unpaid(ens, wanted)
    record = st.session_state.get(RAN)
    if record is not None and record["key"] != (ens.key, float(eps)):
        record = None
    if not to_pay and record is not None:  # what the priced run made and cost, and "Run again"
        note = st.empty()
        if said_after_the_run(note, ens, record):
            note.empty()
            to_pay = unpaid(ens, wanted)
            go, price = True, lesson.lesson_price(ledgers.ledger(ds), _entries(ens, to_pay))
        else:
            go, note, price = True, None, None
    else:
        go, note, price = asked_first(ds, ens, to_pay, what=f"This comparison (the table at ε = {float(eps):g} and "
                                      f"the curve at {len(EPS_GRID)} budgets)", label="Run the comparison",
                                      key="compare_go")
    if not go:
        for text in skipped:  # known before anything runs
            st.caption(text)
        ledgers.show_spent(st, ds, ens=ens)
        return
    if price is not None and to_pay:  # said in place of the price once the runs are made (below)
        led = ledgers.ledger(ds)
        entries = _entries(ens, to_pay)
        record = {"key": (ens.key, float(eps)), "runs": len(to_pay),
                  "drawn": [(name, tuple(sorted(session.request(name, settings).items()))) for name, settings in to_pay],
                  "cost": float(price.cost.epsilon),
                  "own": float(sum(lesson._alone(e).epsilon for e in entries)),
                  "before": float(price.before.epsilon) if len(led) else 0.0}
    runs = {}
    table_bar = st.progress(0.0, text=f"Running {len(rows)} mechanisms at ε = {float(eps):g}…")
    for i, (label, (name, settings)) in enumerate(rows.items()):
        try:
            runs[label] = cache.labeling(name, settings, ens)[0]
        except PrivateLabelLabError as exc:  # one mechanism refusing this data leaves the others
            skipped.append(f"{label} did not run: {literal(exc)}")
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
                "δ spent": f"{r.delta:.3g}",
            }
            for label, r in runs.items()
        ]
    )
    st.dataframe(table, hide_index=True)
    for label, r in runs.items():  # a run that released nothing says why beside the table
        if r.n_answered == 0 and r.reason:
            st.caption(f"{label} released nothing: {r.reason}")
    for text in skipped:
        st.caption(text)
    st.caption("ε spent is each mechanism's own data-independent guarantee; it is at most the target ε.")
    spent_box = st.container()  # filled after the curve below: its runs count too

    st.subheader("Privacy–utility curve")
    st.caption("Each point is one run on the cached votes (one random draw of the noise).")
    # A fixed grid of budgets: computed once per ensemble and session, then remembered.
    left_off = [label for label in runs if label not in on_curve]
    if left_off:
        st.caption(f"Not drawn on the curve: {', '.join(left_off)}. Each budget would train a model on the "
                   f"{ds.n_private:,} private rows × {len(ds.private.features.columns):,} columns again (seconds each); "
                   "its row in the table above is measured.")
    bar = st.progress(0.0, text="Running every mechanism at each budget…")
    curve = {label: [] for label in runs if label in on_curve}
    for i, e in enumerate(EPS_GRID):
        at_e = at_grid[e]
        for label in curve:
            try:
                curve[label].append(cache.labeling(*at_e[label], ens)[0] if label in at_e else None)
            except PrivateLabelLabError:
                curve[label].append(None)
        bar.progress((i + 1) / len(EPS_GRID), text=f"ε = {e:g} done ({i + 1} of {len(EPS_GRID)} budgets)")
    bar.empty()
    if price is not None and to_pay:
        led = ledgers.ledger(ds)
        record["after"] = float(led.total().epsilon)
        st.session_state[RAN] = record
        if note is not None:  # in place of the price and its button
            said_after_the_run(note, ens, record)
    ledgers.show_spent(spent_box, ds, ens=ens)
    spent_box.caption("Each row above and each point of the curve below is one run on the private data: "
                      "comparing many settings costs their composition, not the chosen one's ε.")
    shown = chosen_rows(list(curve), key="w_compare_shown")
    draw_curves({label: [None if r is None else r.n_answered for r in results]
                 for label, results in curve.items() if label in shown}, rows, "answered queries", "utility_curve",
                top=m)

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
                    "accuracy": session.fmt(hard(r, nonprivate.answered_accuracy)),
                    "right": count_cell(hard(r, nonprivate.correct_count)),
                    "wrong": count_cell(None if hard(r, nonprivate.correct_count) is None
                                        else r.n_answered - hard(r, nonprivate.correct_count)),
                    "data-dependent ε": session.fmt(
                        None if r is None or r.scores is not None else nonprivate.data_dependent_epsilon(ens.votes, r), 4),
                }
                for label, r in runs.items()
            ]
        )
        st.dataframe(acc_table, hide_index=True)
        st.caption("Accuracy: the share of the answered queries labeled right; right, wrong: answered queries "
                   "whose label is right or wrong; — : not measured (soft labels release scores, not labels). "
                   "Data-dependent ε: PATE's analysis of these very votes; NON-PRIVATE, not a guarantee (it "
                   "describes the private data).")
        plurality = nonprivate.plurality_accuracy(ens.votes, ds.public_y)
        st.markdown(f"Non-private reference points: always answering the majority class "
                    f"**{session.fmt(nonprivate.majority_rate(ds.public_y))}**; the teachers' plurality vote "
                    f"without noise **{session.fmt(plurality)}**.")
        for label, r in runs.items():
            line = nonprivate.reference_line(f"{label} labels", hard(r, nonprivate.answered_accuracy), ds.public_y,
                                             plurality=plurality)
            if line:
                st.caption(line)
        draw_curves({label: [hard(r, nonprivate.correct_count) for r in results]
                     for label, results in curve.items() if label in shown}, rows, "correctly labeled queries",
                    "correct_curve", top=m, top_words="all labeled right")
        st.markdown(f"**The rare outcomes at ε = {eps:g}**: abstentions (⊥) and wrong labels of each run in the "
                    "table above, drawn large (NON-PRIVATE: wrong labels need the true labels).")
        st.plotly_chart(charts.rare_outcomes_figure({
            label: {"⊥": r.n_bottom, **({} if hard(r, nonprivate.correct_count) is None
                                        else {"answered wrong": r.n_answered - hard(r, nonprivate.correct_count)})}
            for label, r in runs.items() if label in shown}), key="rare_outcomes")


with session.shown_errors():
    ds = datasets.dataset()
    if session.is_real_job(ds):
        real_job_view(ds)
    else:
        teaching_view()
