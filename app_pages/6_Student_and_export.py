"""Student & export: train a publishable student on the private labels; download the results."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from core import nonprivate, pipeline
from core.ensemble.student import PublishedStudent
from core.errors import PrivateLabelLabError
from app_pages import _session as session
from app_pages import _cache as cache
from app_pages import _datasets as datasets
from app_pages import _ledger as ledgers
from app_pages import _spend as spending
from app_pages import _widgets as widgets
from app_pages import _charts as charts
from app_pages import _lesson_ledger as lesson
from app_pages._text import literal

session.init()
ss = st.session_state
cache.warm_student_writer()
ss.setdefault("student_ui", {"bottom": "drop", "learner": None})
# After a run that trains one model with DP on the private rows (no teachers), the student's learner
# defaults to that model's class.
TRAINED_MODEL_LEARNER = {"dp-logistic": "logistic_regression", "dp-naive-bayes": "gaussian_nb"}

st.title("Student and export")
st.markdown(
    "The private labels can train a new model, the **student**, on the public queries alone. "
    "Anything computed from the private labels (and public data) is *post-processing*: it keeps "
    "the labeling's $(\\varepsilon, \\delta)$ guarantee, so the student, the labeled CSV and the report "
    "may be published. The teachers themselves may not: each one has seen private rows."
)
st.latex(r"\text{student} = \mathcal{A}\big(x_1..x_m,\ \hat y_1..\hat y_m\big) \ \text{ is } (\varepsilon,\delta)\text{-DP}")

UNPUBLISHABLE = (
    "**Nothing here can be published: this real job has one file.** Its public queries are rows of your private "
    "file, and the guarantee covers the teachers' rows only: the labels of those rows, a student fitted to them "
    "and even their counts describe persons it does not cover. Upload a separate public file (the rows you may "
    "publish) on the Data page for a release, or declare this upload teaching data there to explore it."
)

with session.shown_errors():
    ds = datasets.dataset()
    ens = cache.ensemble()
    real_job = session.is_real_job(ds)
    try:
        result, _ = cache.labeling()
    except cache.NotRunYet:  # a real job before any paid run: the release below is the first
        result = None
    cfg = ss["ensemble_cfg"]

    if result is not None:
        st.markdown(
            f"Labels from **{widgets.mechanism_title(result.mechanism)}**: {result.n_answered} answered, "
            f"{result.n_bottom} ⊥, {result.n_unprocessed} not processed; "
            f"(ε, δ) = ({result.epsilon:.4g}, {result.delta:.3g})."
        )
    if real_job:
        spending.budget_box(ds)
    spent_box = st.container()  # filled after a release below, so that it counts the release

    # ---- the release: a fresh run at the settings fixed (and shown) before the button
    st.subheader("Release")
    mechanism = session.privacy()["mechanism"]
    asked = session.request(mechanism)
    planned = pipeline.privacy_map(mechanism, asked, int(ens.votes.shape[0]))
    from core.mechanisms import registry

    def _setting(name: str) -> str:  # the registry's words for a setting, never its code name
        if name in ("epsilon", "delta"):
            return "ε" if name == "epsilon" else "δ"
        return registry.get(mechanism).parameter(name).label

    fixed = ", ".join(f"{_setting(name)} = {value:g}" if isinstance(value, float) else f"{_setting(name)} = {value}"
                      for name, value in asked.items())
    if real_job:
        st.markdown(
            "What you download is a **release**: a run on the private votes at parameters fixed and priced before "
            "its output is seen. On a real job every paid run is one (the last one paid on Private labeling, "
            "Compare or Tune privately, or the one you start here); nothing else ever ran on the private votes."
        )
    st.markdown(
        ("Release here" if real_job else "What you download is a **release**") +
        ": a *fresh* run at parameters fixed before its output is seen, "
        f"here the current settings: **{widgets.mechanism_title(mechanism)}** with {fixed} "
        f"(its guarantee, before any data is seen: (ε, δ) = ({planned.epsilon:.4g}, {planned.delta:.3g})). "
        "The runs you explored are not exported: a result chosen after looking at them is covered only by "
        "the total spent on this data."
    )
    # A real job on one file: its public queries are rows of the private file, so nothing released about them
    # (their labels, a student fitted to them, the counts) is covered: the guarantee covers the teachers' rows.
    unpublishable = real_job and ds.teaching_split
    if unpublishable:
        st.error(UNPUBLISHABLE)
        pressed = False
    elif real_job:  # the price and the total after it, shown before the button (refused in place past the budget)
        pressed = spending.run_button(ds, ens, [(mechanism, dict(asked))], label="Release", key="release")
    else:  # teaching data: the price on the lesson's ledger, said before the click and on the button itself
        m = int(ens.votes.shape[0])
        price = lesson.lesson_price(ledgers.ledger(ds), [pipeline.ledger_entry(mechanism, asked, m)])
        st.caption(price.words("This release")
                   + (" A demonstration: not charged to your lesson." if lesson.demonstration() else ""))
        if not price.fits:
            st.error("Refused: that would take your lesson past its budget (Private labeling page). Lower ε or "
                     "start a new lesson.")
        pressed = st.button(f"Release (1 run, ε {lesson.fmt_eps(price.cost.epsilon)})", type="primary",
                            key="release", disabled=not price.fits,
                            help="Draws new noise at the settings above and charges the run to this data's ledger.")
    if pressed:
        try:
            with st.spinner("Releasing: a fresh run on the private votes, then the student and the files to "
                            "download…"):
                ledgers.release(ds, ens, mechanism, asked)
        except PrivateLabelLabError as exc:  # e.g. BudgetExhausted: said in place, the page keeps working
            st.error(literal(exc))
        else:
            st.rerun()  # every total on the page, the budget box drawn above included, counts the release
    rel = None if unpublishable else ledgers.current_release(ds, ens)
    if rel is not None:
        released = rel["result"]
        st.success(
            f"Released (run {rel['number']} on this data): **{widgets.mechanism_title(released.mechanism)}**, "
            f"{released.n_answered} answered, {released.n_bottom} ⊥, {released.n_unprocessed} not processed; "
            f"(ε, δ) = ({released.epsilon:.4g}, {released.delta:.3g}). The student and the downloads below use it."
        )
        if (rel["mechanism"], rel["asked"]) != (mechanism, asked):
            st.info("The settings have changed since this release; the downloads still export the release. "
                    "Press Release again to release at the new settings (a new run, charged to the ledger).")
        result = released
    ledgers.show_spent(spent_box, ds, ens=ens)
    if result is None and unpublishable:
        raise cache.NotRunYet("Downloads are off: this real job has one file (see Release above).")
    if result is None:  # shown as a next step (st.info); the rest of the page needs a release
        raise cache.NotRunYet("Nothing has run on the private votes yet: press Release above (its price is shown "
                              "beside it) to label the public rows; the student and the downloads use that release.")

    c1, c2 = st.columns(2)
    names = widgets.learner_names()
    # The student learner follows the learner chosen for the job whenever it changes: the teachers' learner, or
    # for a route that trains one model with DP on the private rows, that model's class (no teachers ran).
    job_learner = TRAINED_MODEL_LEARNER.get(result.mechanism, cfg["learner"])
    if ss["student_ui"]["learner"] not in names or ss["student_ui"].get("teachers") != job_learner:
        ss["student_ui"]["learner"] = job_learner if job_learner in names else names[0]
        ss["student_ui"]["teachers"] = job_learner
        ss.pop("w_student_ui_learner", None)
    learner = c1.selectbox("Student learner", names, format_func=widgets.learner_label,
                           key=session.widget_key("student_ui", "learner"))
    session.remember("student_ui", "learner", learner)
    bottom = c2.radio("What to do with ⊥ and unprocessed queries", list(session.BOTTOM_POLICIES),
                      format_func=session.BOTTOM_POLICIES.get, key=session.widget_key("student_ui", "bottom"))
    session.remember("student_ui", "bottom", bottom)

    st.subheader("Student")
    student = None
    try:
        student = cache.student(result, ds, learner, bottom)
    except PrivateLabelLabError as exc:
        st.error(literal(exc))
    if student is not None:
        s = st.columns(3)
        s[0].metric("Rows with a label", student.n_labeled)
        s[1].metric("Random labels (⊥ policy)", student.n_random)
        s[2].metric("Unlabeled rows", student.n_unlabeled, help="Rows given to a semi-supervised student without a label.")
        st.caption(f"The student inherits (ε, δ) = ({student.epsilon:.4g}, {student.delta:.3g}).")

    st.markdown("**Accuracy on the held-out test rows**" + (" (NON-PRIVATE diagnostic)" if real_job else ""))
    if ds.test is None:
        st.info("No held-out test rows are available.")
    elif not widgets.raw_votes_allowed(ds, key="student_accuracy",
                                       label="Show the accuracy on the held-out private rows (non-private)"):
        st.caption(f"The {ds.n_test} held-out test rows are private rows: their accuracies describe the private "
                   "data, so on a real job they are shown only when you ask.")
    else:
        a = st.columns(2)
        a[0].metric("Student (private)", session.fmt(charts.model_accuracy(student.model, ds.test)) if student else "—")
        nonpriv = cache.nonprivate_model(ds, cfg)
        a[1].metric("Non-private model (not publishable)", session.fmt(charts.model_accuracy(nonpriv, ds.test)),
                    help="The same learner trained directly on all private rows: a reference only; it is not private.")
        st.caption(f"{ds.n_test} test rows held out from the private data; the non-private model is "
                   "the teachers' learner fitted on all private rows, shown only as a reference.")
        line = nonprivate.reference_line(
            "Student (private)", charts.model_accuracy(student.model, ds.test) if student else None, ds.test.labels,
            nonprivate_model=charts.model_accuracy(nonpriv, ds.test))
        if line:
            st.markdown(f"**{line}**")

    st.divider()
    st.subheader("Downloads")
    st.caption(
        "The CSV holds the public features, the private label (empty where not answered), whether the "
        "query was answered, and its status. The report holds the mechanism, its parameters, (ε, δ) and "
        "the counts. Neither holds a seed, a vote count, a margin, a teacher accuracy or a data-dependent ε."
    )
    st.caption(
        "The report also states the release's own guarantee and the ledger's total on this data (ε, δ and the "
        "number of runs), with what each covers: the release's guarantee covers the exported labels if its "
        "parameters were fixed in advance; choosing parameters after looking at other runs is covered only "
        "by the ledger total."
    )
    # A teaching split's public rows are private rows: their features are exported only on confirmation;
    # each row is named by its number in the file it was drawn from, so that the labels can be joined back.
    names = ds.export_columns  # decided when the files loaded: never one of the file's own column names
    public_frame = ds.public_X
    if ds.teaching_split and not unpublishable:
        st.warning("**Teaching split**: the public queries are a split of the private file, so their features are "
                   "private rows. The labeled CSV holds each row's number in the file and its label only, unless "
                   "you confirm below.")
        rows = pd.DataFrame({names["row"]: ds.public_rows})
        if st.checkbox("I confirm these rows may be published: they are a split of the private file",
                       key="confirm_teaching_split"):
            st.caption("The labeled CSV holds each row's number in the file and the split's features.")
            public_frame = pd.concat([rows, ds.public_X.reset_index(drop=True)], axis=1)
        else:
            public_frame = rows
        st.caption(f"Column **{literal(names['row'])}** is the row's number in the file "
                   "(1 = the first row after the header).")
    keys = None
    if not ds.teaching_split and ds.join_keys is not None:
        # Columns of the public file left out of the features (an id, a code): carried by default, first,
        # so that the labels join back to the public file's rows (a dropped column leaves the features
        # only). Public values only; the user may leave any of them out.
        offered = list(ds.join_keys.columns)
        chosen = st.multiselect("Join keys: public-file columns carried into the labeled CSV (not features)",
                                offered, default=offered, key="export_keys",
                                help="Columns of the public file that are not features (left out by default or by "
                                "you): carried by default so that each labeled row joins back to its row of the "
                                "public file. They are the public file's own values, written first, as they are; "
                                "remove any you do not want in the file.")
        if chosen:
            keys = ds.join_keys[chosen]
            from core.export import export_columns

            names = export_columns(list(keys.columns) + list(ds.all_columns))
            st.caption("The labeled CSV starts with " + ", ".join(f"**{literal(c)}**" for c in chosen)
                       + ": the public file's values, not used by the teachers or the student.")
    if names["label"] != "label" or names["status"] != "status" or names["answered"] != "answered":
        st.caption("The public file has columns named like the ones the export adds; the export's own are "
                   + ", ".join(f"**{literal(names[r])}**" for r in ("label", "answered", "status"))
                   + ", and the file's columns keep their names.")
    d = st.columns(2) + st.columns(2)
    if rel is None:
        if unpublishable:
            st.info("Downloads are off: this real job has one file (see Release above).")
        else:
            st.info("Nothing to download yet: only a release is exported. Press **Release** above to draw a fresh "
                    "run at the current settings; the runs explored so far were chosen by looking at them, so "
                    "exporting one of them would not be covered by its own guarantee.")
        d[0].download_button("Download labeled CSV", data=b"", file_name="private_labels.csv", mime="text/csv",
                             key="download_csv", disabled=True)
        d[1].download_button("Download privacy report (JSON)", data=b"", file_name="privacy_report.json",
                             mime="application/json", key="download_report", disabled=True)
        if student is not None:
            d[2].download_button("Download student model (skops)", data=b"", file_name="student.skops",
                                 mime="application/octet-stream", key="download_model_skops", disabled=True)
            d[3].download_button("Download student model (joblib)", data=b"", file_name="student.joblib",
                                 mime="application/octet-stream", key="download_model", disabled=True)
    else:
        with st.spinner("Writing the labeled CSV, the report and the student's files…"):
            report = pipeline.report(result, n_private=ds.n_private, n_public=ds.n_public, learner=cfg["learner"],
                                     k=int(cfg["k"]), dataset=ledgers.job_name(ds) if ds.source == "upload" else ds.title,
                                     ledger_total=ledgers.ledger(ds, ens=ens).total(), unit=ds.private.privacy_unit,
                                     classes=ds.class_names, classes_declared=ds.private.classes_declared,
                                     features=datasets.report_features(ds))
            d[0].download_button("Download labeled CSV",
                                 data=pipeline.labeled_csv(public_frame, result, ds.class_names, columns=names, keys=keys),
                                 file_name="private_labels.csv", mime="text/csv", key="download_csv")
            d[1].download_button("Download privacy report (JSON)", data=report,
                                 file_name="privacy_report.json", mime="application/json", key="download_report")
            if student is not None:
                published = PublishedStudent.from_student(student, ds.class_names, report=json.loads(report))
                d[2].download_button("Download student model (skops)", data=published.to_skops(), file_name="student.skops",
                                     mime="application/octet-stream", key="download_model_skops",
                                     help="The published student: it predicts the class names and carries (ε, δ) and "
                                     "the release's report. skops' format loads without running code from the file.")
                d[3].download_button("Download student model (joblib)", data=published.to_joblib(), file_name="student.joblib",
                                     mime="application/octet-stream", key="download_model",
                                     help="The same student as a joblib file. Loading a joblib file runs code from it: "
                                     "load only files you trust.")
                st.caption("Both student files hold the same published student: it predicts the class names, and carries "
                           "(ε, δ) and the report of the release it came from.")
        with st.expander("Preview the privacy report"):
            st.code(report, language="json")
