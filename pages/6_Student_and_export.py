"""Student & export: train a publishable student on the private labels; download the results."""

from __future__ import annotations

import streamlit as st

from core import pipeline
from core.errors import PrivateLabelLabError
from pages import _session as session
from pages import _cache as cache
from pages import _widgets as widgets
from pages import _charts as charts

session.run_through_app()
session.init()
ss = st.session_state
ss.setdefault("student_ui", {"bottom": "drop", "learner": None})

st.title("Student and export")
st.markdown(
    "The private labels can train a new model, the **student**, on the public queries alone. "
    "Anything computed from the private labels (and public data) is *post-processing*: it keeps "
    "the labeling's $(\\varepsilon, \\delta)$ guarantee, so the student, the labeled CSV and the report "
    "may be published. The teachers themselves may not: each one has seen private rows."
)
st.latex(r"\text{student} = \mathcal{A}\big(x_1..x_m,\ \hat y_1..\hat y_m\big) \ \text{ is } (\varepsilon,\delta)\text{-DP}")

with session.shown_errors():
    ds = cache.dataset()
    ens = cache.ensemble()
    result, _ = cache.labeling()
    cfg = ss["ensemble_cfg"]

    st.markdown(
        f"Labels from **{widgets.mechanism_title(result.mechanism)}**: {result.n_answered} answered, "
        f"{result.n_bottom} ⊥, {result.n_unprocessed} not processed; "
        f"(ε, δ) = ({result.epsilon:.4g}, {result.delta:.3g})."
    )

    c1, c2 = st.columns(2)
    names = widgets.learner_names()
    if ss["student_ui"]["learner"] not in names:
        ss["student_ui"]["learner"] = cfg["learner"]
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
        st.error(str(exc))
    if student is not None:
        s = st.columns(3)
        s[0].metric("Rows with a label", student.n_labeled)
        s[1].metric("Random labels (⊥ policy)", student.n_random)
        s[2].metric("Unlabeled rows (semi-supervised)", student.n_unlabeled)
        st.caption(f"The student inherits (ε, δ) = ({student.epsilon:.4g}, {student.delta:.3g}).")

    st.markdown("**Accuracy on the held-out test rows**")
    if ds.test is None:
        st.info("No held-out test rows are available.")
    else:
        a = st.columns(2)
        a[0].metric("Student (private)", session.fmt(charts.model_accuracy(student.model, ds.test)) if student else "—")
        nonpriv = cache.nonprivate_model(ds, cfg)
        a[1].metric("Non-private model (not publishable)", session.fmt(charts.model_accuracy(nonpriv, ds.test)),
                    help="The same learner trained directly on all private rows: a reference only; it is not private.")
        st.caption(f"{ds.n_test} test rows held out from the private data; the non-private model is "
                   "the teachers' learner fitted on all private rows, shown only as a reference.")

    st.divider()
    st.subheader("Downloads")
    st.caption(
        "The CSV holds the public features, the private label (empty where not answered), whether the "
        "query was answered, and its status. The report holds the mechanism, its parameters, (ε, δ) and "
        "the counts. Neither holds a seed, a vote count, a margin, a teacher accuracy or a data-dependent ε."
    )
    report = pipeline.report(result, n_private=ds.n_private, n_public=ds.n_public, learner=cfg["learner"],
                             k=int(cfg["k"]), dataset=None if ds.source == "upload" else ds.title)
    d = st.columns(3)
    d[0].download_button("Download labeled CSV", data=pipeline.labeled_csv(ds.public_X, result, ds.class_names), file_name="private_labels.csv",
                         mime="text/csv", key="download_csv")
    d[1].download_button("Download privacy report (JSON)", data=report,
                         file_name="privacy_report.json", mime="application/json", key="download_report")
    if student is not None:
        d[2].download_button("Download student model (joblib)", data=cache.model_bytes(student.model),
                             file_name="student.joblib", mime="application/octet-stream", key="download_model",
                             help="A scikit-learn model; load it with joblib.load. Only load files you trust.")
    with st.expander("Preview the privacy report"):
        st.code(report, language="json")
