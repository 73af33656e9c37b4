"""A leak to start the story: membership inference on a non-private model, a teacher and the student."""

from __future__ import annotations

import streamlit as st

from core.audit.membership import dp_advantage_bound, leak_story
from core.ensemble.learners import learner_names
from app_pages import _session as session
from app_pages import _cache as cache
from app_pages import _datasets as datasets
from app_pages import _charts as charts
from app_pages import _widgets as widgets

session.init()
ss = st.session_state

st.title("A leak: does the model remember its rows?")
st.markdown(
    "An attacker holds a row with its label and asks the model how surprised it is (its loss). A model "
    "that memorised its training rows is less surprised by them: guessing *member* when the loss is "
    "small separates the rows it was trained on from rows it never saw. The attacker's **advantage** is "
    "the best share of members caught minus the share of non-members accused (0: nothing learned, "
    "1: membership revealed exactly)."
)
st.caption("NON-PRIVATE teaching view: the attack reads private rows and their labels. Teaching data only; "
           "never exported.")


@st.cache_resource(max_entries=8, show_spinner="Fitting the models and running the attack…")
def _story(ds_key, learner, k, student_key, seed, _ds, _student):
    public = None if _ds.public_y is None else (_ds.public_X, _ds.public_y)
    return leak_story(_ds.private, _ds.test, learner=learner, params=None, k=k, student=_student, public=public,
                      rng=seed)


with session.shown_errors():
    ds = datasets.dataset()
    if not ds.teaching_split or session.is_real_job(ds) or ds.test is None or ds.test.n_rows == 0:
        raise session.NotOffered("The attack needs the private rows' labels and held-out rows: it runs on teaching "
                                 "data only (bundled or generated data, Data page).")
    names = learner_names()
    default = "random_forest" if "random_forest" in names else names[0]
    ss.setdefault("w_leak_learner", default)
    learner = st.selectbox("Learner of the non-private model and of the teacher", names,
                           format_func=widgets.learner_label, key="w_leak_learner",
                           help="A random forest is more confident on the rows it was fitted to: a clear leak where classes overlap.")
    k = int(ss["ensemble_cfg"]["k"])
    ens = cache.ensemble()
    result, _ = cache.labeling()
    student = cache.student(result, ds, ss["ensemble_cfg"]["learner"], "drop")
    story = _story(ds.key, learner, k, (id(result), ss["ensemble_cfg"]["learner"]), session.seed(), ds,
                   None if student is None else student.model)

    rows = [
        ("Non-private model", f"fitted to all {ds.n_private:,} private rows", story.nonprivate),
        ("One teacher", f"fitted to its {story.chunk:,} private rows", story.teacher),
    ]
    if story.student is not None:
        rows.append(("Published student", f"trained on public rows labeled by {widgets.mechanism_title(result.mechanism)} "
                     f"at ε = {result.epsilon:.3g}", story.student))
    st.subheader("The attacker's advantage")
    cols = st.columns(len(rows))
    for col, (title, what, attack) in zip(cols, rows):
        col.metric(title, f"{attack.advantage:.2f}",
                   help=f"{what}. Members: {attack.n_members:,} rows it was trained on (or private rows for the "
                   f"student); non-members: {attack.n_nonmembers:,} held-out rows.")
        verdict = "leaks" if attack.leaks else "no leak measurable"
        if attack.tolerance < 1:
            noise = (f"A model that reveals nothing stays below {attack.tolerance:.2f} except with probability "
                     f"{attack.fail:g}")
        else:  # an advantage is at most 1: with so few rows no value could show a leak
            noise = (f"With only {attack.n_members:,} members and {attack.n_nonmembers:,} non-members the noise of the "
                     "measurement exceeds any possible advantage (at most 1), so nothing can be told here")
        col.caption(f"Advantage; {what}. {noise}: **{verdict}**. Mean loss on members {attack.member_loss:.2f}, "
                    f"on non-members {attack.nonmember_loss:.2f}.")
    if any(attack.tolerance >= 1 for _, _, attack in rows):
        st.info("Too few rows to measure some of these attacks (a teacher is trained on n/k rows only): with so few "
                "members, chance alone can produce any advantage. Fewer teachers (Ensemble page) or a larger "
                "dataset gives each attack enough rows.")
    elif not story.nonprivate.leaks:
        st.info("Nothing measurable on this data: where the classes barely overlap, a model is right and confident "
                "on almost every row, seen or not, so the loss tells members from non-members no better than "
                "chance. A leak needs rows a model can only know by heart: open digits (Data page, bundled), "
                "where a random forest's advantage is far above the noise.")
    st.plotly_chart(charts.roc_figure({title: attack for title, _, attack in rows}), key="leak_roc")
    if story.student is not None:
        bound = dp_advantage_bound(result.epsilon, result.delta)
        st.markdown(f"**The guarantee:** any attack on a release that is (ε, δ) = ({result.epsilon:.3g}, "
                    f"{result.delta:.3g})-differentially private has advantage at most "
                    f"(e^ε − 1 + 2δ)/(e^ε + 1) = **{bound:.2f}**, whatever the attacker knows."
                    + (" At this ε the bound rules out almost nothing (an advantage of 1 is a perfect attack): "
                       "the guarantee protects at small ε, e.g. 0.46 at ε = 1." if bound > 0.9 else ""))
    st.caption("The teacher is refitted here to a random chunk of n/k private rows with the chosen learner, as the "
               "ensemble's teachers are; the student is the one the Student & export page trains from this run.")
