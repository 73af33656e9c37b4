"""Ensemble: pick a learner and k, train the teachers on disjoint chunks of the private data."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from core import nonprivate
from core.errors import PrivateLabelLabError
from core.mechanisms.stability import margins
from core.recommend import recommend_settings
from app_pages import _cache as cache
from app_pages import _charts as charts
from app_pages import _style as style
from app_pages import _datasets as datasets
from app_pages import _ledger as ledgers
from app_pages import _plan as plan
from app_pages import _session as session
from app_pages import _widgets as widgets
from app_pages._text import literal

session.init()
ss = st.session_state
active = ss["ensemble_cfg"]
ss.setdefault("ens_ui", {"learner": active["learner"], "k": active["k"]})

st.title("Ensemble of teachers")
st.markdown(
    "The private rows are shuffled and cut into $k$ disjoint chunks; teacher $j$ is the chosen "
    "learner fitted on chunk $j$ alone. On a public query $x$ every teacher votes, and the votes are "
    "counted per class. Changing one private row changes **one chunk**, hence at most one teacher and "
    "one vote on every query: this is what the private mechanisms rely on."
)
st.latex(r"n_c(x) = \#\{\, j : f_j(x) = c \,\}, \qquad \sum_c n_c(x) = k")

with session.shown_errors():
    ds = datasets.dataset()
    names = widgets.learner_names()
    if ss["ens_ui"]["learner"] not in names:
        ss["ens_ui"]["learner"] = names[0]
    learner = st.selectbox("Learner", names, format_func=widgets.learner_label, key=session.widget_key("ens_ui", "learner"))
    session.remember("ens_ui", "learner", learner)
    spec = widgets.learner_spec(learner)
    st.caption(spec.description)

    with st.expander("Recommend settings for this data"):
        eps_now = float(session.privacy().get("epsilon", 4.0))
        delta_now = float(session.privacy().get("delta", 1e-5))
        assumed_major = plan.quality()[2]  # the plan's assumed majority share: the private one is never read
        rec = recommend_settings(n_private=ds.n_private, class_counts=ds.private.class_counts.tolist(),
                                 epsilon=eps_now, delta=delta_now, m=ds.n_public,
                                 majority_share=assumed_major if assumed_major >= 1.0 / ds.n_classes else None)
        st.markdown(f"At ε = {eps_now:g}, δ = {delta_now:g} for {ds.n_public:,} public rows: "
                    f"**{widgets.mechanism_title(rec.mechanism)}** "
                    f"with **k = {rec.k}** teachers" + (f" and cutoff T = {rec.T}" if rec.T else "") + ".")
        for reason in rec.reasons:  # the recommender also speaks to the command line: its names left out here
            reason = (reason.replace(" (core.theory.btt_min_teachers)", "").replace(" (--measure-agreement)", "")
                      .replace("k >= btt_min_teachers(ε, δ, T, m)", "enough teachers"))
            st.markdown(f"- {reason}")
        # The same predictions as the plan: is the recommended setting useful at all?
        rec_pred = plan.predict(rec.mechanism, rec.settings, n=ds.n_private, m=ds.n_public, k=int(rec.k),
                                n_classes=ds.n_classes, scope=plan.cache_scope(ds))
        st.markdown(f"Predicted at the recommended setting ({plan.PREDICTED}, at the assumed teacher quality of "
                    f"the plan): {plan.pm(rec_pred.answered, rec_pred.answered_sd)} answered, "
                    f"{plan.pm(rec_pred.correct, rec_pred.correct_sd)} correct.")
        if not rec_pred.useful:
            st.warning("**No useful setting here**: the recommended setting is predicted to label no better than "
                       "always answering the most common class, so it is not recommended for a release. "
                       + plan.advice_text(rec_pred))
        st.caption("The suggestion reads the private class counts (how large k may be): like the automatic k, "
                   "it is the data owner's decision, made outside the (ε, δ) guarantee; no privacy is spent on it.")

    # Enter in a box of this form does not train: only the button does (a long step on big data).
    with st.form("train_form", enter_to_submit=False):
        st.markdown("**Main hyperparameters** (each teacher gets the same ones)")
        cols = st.columns(3)
        params = {}
        section = f"hp_{learner}"
        if section not in ss:
            ss[section] = dict(active["params"]) if active["learner"] == learner else dict(spec.defaults)
        for i, hp in enumerate(spec.hyperparameters):
            params[hp.name] = widgets.hyperparameter_widget(cols[i % 3], section, hp)
        k_max = max(2, ds.n_private // 2)
        if ss["ens_ui"]["k"] > k_max:
            ss["ens_ui"]["k"] = k_max
            ss.pop("w_ens_ui_k", None)
        k = st.number_input(
            "Number of teachers k", min_value=2, max_value=k_max, step=1, key=session.widget_key("ens_ui", "k"),
            help="More teachers give larger vote margins (a steadier answer) but each sees fewer rows.",
        )
        st.latex(rf"\text{{rows per teacher}} \approx n/k = {ds.n_private}/{int(k)}")
        k_min = charts.min_teachers_for_settings(session.privacy(), ds.n_public)
        if k_min is not None:
            st.caption(
                "How many teachers does BTT need? A query is answered when its distance to instability "
                "clears the noisy threshold w, and even a unanimous vote of k teachers only reaches "
                f"⌈k/2⌉ − 1. With the current privacy settings (Private labeling page) w ≈ {k_min[1]:.0f}, so "
                f"k ≥ 2⌊w⌋ + 3 = **{k_min[0]:,}** teachers are needed before anything is answered; "
                "a comfortable margin above it lets votes with a few "
                "dissenting teachers pass too."
            )
        submitted = st.form_submit_button("Train ensemble", type="primary")

    if submitted:
        session.remember("ens_ui", "k", int(k))
        cfg = {"learner": learner, "params": {h.name: params[h.name] for h in spec.hyperparameters}, "k": int(k)}
        bar = st.progress(0.0, text=f"Training {int(k)} teachers ({widgets.learner_label(learner)}) on "
                          f"{ds.n_private:,} private rows…")
        try:
            cache.train(
                ds, cfg,
                lambda done, total: bar.progress(done / total, text=f"Trained {done} of {total} teachers"),
                lambda done, total: bar.progress(done / max(total, 1),
                                                 text=f"Teachers voting: {done:,} of {total:,} public queries"),
            )
        except PrivateLabelLabError as exc:
            st.error(literal(exc))
            st.caption("The previous ensemble is kept.")
        else:
            ss["ensemble_cfg"] = cfg
            st.success(f"Trained {int(k)} teachers.")
        finally:
            bar.empty()

    cfg = ss["ensemble_cfg"]
    if cache.cached_ensemble(ds, cfg) is None:
        st.subheader("Current ensemble")
        st.info(f"**Not trained yet**: {cfg['k']} teachers ({widgets.learner_label(cfg['learner'])}) on "
                f"{ds.n_private:,} private rows. Choose the learner and k above and press **Train ensemble** "
                "(a progress bar shows the teachers being trained, then their votes on the public queries).")
    else:
        ens = cache.ensemble()
        st.subheader("Current ensemble")
        c = st.columns(2) + st.columns(2)  # two metrics a row: labels and values whole at 1024 px
        c[0].metric("Teachers (k)", ens.teachers.k)
        c[1].metric("Learner", widgets.learner_label(cfg["learner"]))
        lo, hi = int(min(ens.teachers.chunk_sizes)), int(max(ens.teachers.chunk_sizes))
        c[2].metric("Rows per teacher", f"{lo:,}" if lo == hi else f"{lo:,}–{hi:,}")
        c[3].metric("Public queries voted on", ens.votes.shape[0])
        if cfg["params"]:
            st.caption("Hyperparameters: " + ", ".join(f"{k_} = {v}" for k_, v in cfg["params"].items()))
        ledgers.show_spent(st, ds, ens=ens)  # training spends no privacy: only runs on the votes do

        st.divider()
        st.subheader("Non-private diagnostics")
        st.caption(
            "These numbers look at the teachers and their raw votes, which depend on the private data "
            "without any noise. They help you understand the ensemble; they are not private, are never "
            "exported, and should not be published."
        )
        if not widgets.raw_votes_allowed(ds, key="raw_votes_ensemble"):
            raise cache.NotRunYet("Not shown on a real job unless you ask (tick the box above): the plan's "
                                  "predictions need none of it.")
        left, right = st.columns(2)
        accs = nonprivate.teacher_accuracies(ens.predictions, ds.public_y) if ds.public_y is not None else None
        with left:
            st.markdown("**Teacher accuracy** on the public queries' held-out true labels")
            if accs is None:
                st.info("The public queries came from an unlabeled file, so teacher accuracy cannot be measured.")
            else:
                fig = go.Figure(go.Histogram(x=accs, nbinsx=20, marker_color=style.COLOURS[0]))
                style.finish(fig, x_title="accuracy of one teacher", y_title="teachers", height=300, legend=False)
                st.plotly_chart(fig, key="teacher_acc")
                st.caption(f"Median teacher accuracy {session.fmt(charts.median(accs))}; "
                           f"plurality vote accuracy {session.fmt(nonprivate.plurality_accuracy(ens.votes, ds.public_y))}.")
        with right:
            st.markdown("**Vote margins**: top count minus runner-up count on each query")
            st.latex(r"M(x) = n_{(1)}(x) - n_{(2)}(x)")
            st.latex(r"\mathrm{dist}(x) = \max\!\left(0, \lceil M(x)/2 \rceil - 1\right)")
            fig = go.Figure(go.Histogram(x=margins(ens.votes), nbinsx=min(50, ens.teachers.k + 1),
                                         marker_color=style.COLOURS[1]))
            style.finish(fig, x_title="vote margin M", y_title="queries", height=300, legend=False)
            st.plotly_chart(fig, key="margins")
            st.caption(
                "A query whose margin is large is *stable*: many private rows would have to change before "
                "the plurality answer could flip. The private mechanisms answer those and abstain on the rest."
            )
