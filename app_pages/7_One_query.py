"""One query under the microscope: the teachers' votes, one noise draw, the test and its outcome."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core.mechanisms import registry
from core.theory import microscope as scope
from app_pages import _session as session
from app_pages import _cache as cache
from app_pages import _datasets as datasets
from app_pages import _charts as charts
from app_pages import _widgets as widgets
from app_pages import _lesson_ledger as lesson
from app_pages._text import literal, number

session.init()
ss = st.session_state


def show_draw(draw, names, true_class: int) -> None:
    """One draw of the noise: the noise that was drawn, what it did to the test, and the outcome."""
    from core.theory.microscope import Microscope

    if isinstance(draw, Microscope):  # a mechanism whose draw is not broken down: the outcome only
        label = int(draw.labels[0])
        st.markdown("One draw: **⊥** (the noisy test failed: no label)." if label < 0 else
                    f"One draw: released label **{literal(names[label])}** "
                    f"({'right' if label == true_class else 'wrong'}).")
        return
    for what, value, z, line, z_line, passed in draw.tests:
        noisy_line = (number(line) if z_line == 0 else
                      f"{number(line)} {'+' if z_line >= 0 else '−'} {number(abs(z_line))} = {number(line + z_line)}")
        st.markdown(f"Noise drawn on the {what}: **{number(z, '+.4g')}**, so {number(value)} {'+' if z >= 0 else '−'} "
                    f"{number(abs(z))} = **{number(value + z)}**"
                    + (f" against the line with its own noise {number(z_line, '+.4g')}: {noisy_line}"
                                             if z_line != 0 else f" against the line {noisy_line}")
                    + (": **passes**." if passed else ": **fails**."))
    if draw.noise is not None and (not draw.tests or draw.tests[-1][-1]):
        noisy = draw.counts + draw.noise
        st.dataframe([{"class": names[c], "votes": int(draw.counts[c]), "noise drawn": number(draw.noise[c], "+.3f"),
                       "votes + noise": number(noisy[c], ".3f")} for c in range(len(draw.counts))], hide_index=True)
    if draw.label < 0:
        st.markdown("One draw: **⊥** (the noisy test failed: no label).")
    elif draw.score is not None:
        st.markdown(f"One draw: released score **{draw.score:.2f}**.")
    else:
        st.markdown(f"One draw: released label **{literal(names[draw.label])}** "
                    f"({'right' if draw.label == true_class else 'wrong'}): "
                    + ("the largest of votes + noise." if draw.noise is not None else "the teachers' plurality."))

st.title("One query under the microscope")
st.markdown(
    "Pick one public query and watch the mechanism decide it: the teachers' votes, the statistic "
    "its test reads, one draw of the noise and the outcome. Then draw the noise 100 times and "
    "compare the shares with the formula's probabilities."
)
st.caption("NON-PRIVATE teaching view: it shows the raw votes and the true labels of teaching data. "
           "Nothing here is exported, and its draws are not counted on your ledger: a view that already shows "
           "the raw votes has no privacy left to spend. On a real job it is not offered.")

with session.shown_errors():
    ds = datasets.dataset()
    if not ds.teaching_split or session.is_real_job(ds) or ds.public_y is None:
        raise session.NotOffered("The microscope reads the teachers' raw votes and the queries' true labels, so it "
                                 "is offered on teaching data only (bundled or generated data, Data page).")
    ens = cache.ensemble()
    offered = [name for name in registry.names() if ens.offers(name) and registry.get(name).picture is not None]
    if session.privacy()["mechanism"] not in offered:
        session.remember("privacy", "mechanism", offered[0])
        ss.pop("w_privacy_mechanism", None)
    left, right = st.columns([2, 3], gap="large")
    with left:
        mechanism = st.selectbox("Mechanism", offered, format_func=widgets.mechanism_title,
                                 key=session.widget_key("privacy", "mechanism"))
        session.remember("privacy", "mechanism", mechanism)
        price = lesson.price_caption(mechanism, int(ens.votes.shape[0]))
        if price:  # the run the page shows is charged to the lesson (the draws below are not)
            (st.warning if lesson.run_price(mechanism, int(ens.votes.shape[0])).per_query else st.caption)(price)
        with st.expander("Settings of the run"):
            widgets.mechanism_controls(st, mechanism)
    result, _ = cache.labeling(mechanism)
    pic = registry.get(mechanism).picture
    votes = ens.inputs(mechanism)
    truth = np.asarray(ds.public_y)
    m = votes.shape[0]

    first, p_first = scope.least_certain(mechanism, votes, result.params, truth)
    with left:
        if st.button("Pick the least certain query", help="The query whose outcome is closest to a coin flip."):
            ss["w_microscope_query"] = first + 1
            ss["_microscope_certain"] = (mechanism, first, p_first)
        said = ss.get("_microscope_certain")
        if said is not None and said[:2] == (mechanism, first) and abs(said[2] - 0.5) > 0.49:
            what = "answered" if pic.kind == "threshold" else "answered right"
            st.info(f"No query is uncertain in this run: every one is {what} with probability above 0.99 or "
                    f"below 0.01. The least certain, query {first + 1}, is {what} with probability {said[2]:.4g}. "
                    "Lower ε (more noise) or pick a harder data set to see a coin flip.")
        if "_microscope_pick" in ss:  # a dot clicked on the scatter (before the box is drawn)
            ss["w_microscope_query"] = ss.pop("_microscope_pick")
        ss.setdefault("w_microscope_query", first + 1)
        if ss["w_microscope_query"] > m:
            ss["w_microscope_query"] = first + 1
        chosen = st.number_input(f"Query number (1 to {m:,})", min_value=1, max_value=m, step=1,
                                 key="w_microscope_query")
    i = int(chosen) - 1

    features = ds.public_X
    numeric = [c for c in features.columns if np.issubdtype(features[c].dtype, np.number)]
    two_d = len(features.columns) == 2 and len(numeric) == 2
    kinds = scope.outcomes(result, truth)

    with right:
        if two_d:
            st.markdown("**All public queries, coloured by their outcome in this run**, with the student's boundary")
            student = cache.student(result, ds, ss["ensemble_cfg"]["learner"], "drop")
            fig = charts.outcome_scatter(features, kinds, i, None if student is None else student.model)
            event = st.plotly_chart(fig, key="microscope_scatter", on_select="rerun", selection_mode="points")
            picked = charts.picked_point(event)
            if picked is not None and picked != i:
                ss["_microscope_pick"] = picked + 1
                st.rerun()
            st.caption("Click a dot to put that query under the microscope.")
        elif len(numeric) == len(features.columns) and len(numeric) >= 64 and round(len(numeric) ** 0.5) ** 2 == len(numeric):
            side = round(len(numeric) ** 0.5)
            st.markdown(f"**The query** (a {side} × {side} image)")
            img = features.iloc[i][numeric].to_numpy(dtype=float).reshape(side, side)
            st.plotly_chart(charts.digit_image(img), key="microscope_digit")
        else:
            st.markdown("**The query** (one public row)")
            st.dataframe(features.iloc[[i]], hide_index=True)

    st.divider()
    a, b = st.columns(2, gap="large")
    row = votes[i]
    true_class = int(truth[i])
    names = ds.class_names
    with a:
        st.subheader(f"Query {i + 1}: the teachers' votes")
        if result.scores is None and votes.ndim == 2 and votes.shape[1] == len(names):
            st.plotly_chart(charts.vote_bars(row, names), key="microscope_votes")
        else:
            st.plotly_chart(charts.score_histogram(row), key="microscope_scores")
        st.markdown(f"True class: **{literal(names[true_class])}** · "
                    f"outcome in the run: **{scope.OUTCOMES[kinds[i]]}**")
    with b:
        st.subheader("The test")
        stat = float(pic.values(votes[i:i + 1], result.params)[0])
        line = float(pic.threshold(result.params))
        st.markdown(f"{pic.statistic.capitalize()}: **{number(stat)}**; the line {pic.symbol} = **{number(line)}**.")
        st.caption(pic.reads)
        rng = session.noise_rng(ds)
        if st.button("Draw the noise once", type="primary"):
            ss["_microscope_one"] = (i, mechanism, scope.draw_once(mechanism, row, result.params, rng=rng)
                                     or scope.microscope(mechanism, row, result.params, truth=true_class, draws=1,
                                                         rng=rng))
        one = ss.get("_microscope_one")
        if one is not None and one[0] == i and one[1] == mechanism:
            show_draw(one[2], names, true_class)
        if st.button("Draw 100 times"):
            ss["_microscope_many"] = (i, mechanism, scope.microscope(mechanism, row, result.params, truth=true_class,
                                                                      draws=100, rng=rng))
        many = ss.get("_microscope_many")
        if many is not None and many[0] == i and many[1] == mechanism:
            ms = many[2]
            c = st.columns(2)
            c[0].metric("Answered in 100 draws", f"{ms.answered / ms.draws:.2f}",
                        help="Share of the draws that released a label.")
            c[0].metric("P(answered), formula", f"{ms.p_answered:.3f}")
            c[1].metric("Right in 100 draws", f"{ms.correct / ms.draws:.2f}")
            c[1].metric("P(right), formula", f"{ms.p_correct:.3f}")
            lo, hi = ms.answered_interval
            where = f"is {lo}" if lo == hi else f"lies between {lo} and {hi}"
            st.caption(f"If the formula is right, the answered count of the 100 draws {where} except with "
                       f"probability {ms.fail:g} (exact binomial tails). "
                       + (f"It is {ms.answered}, as the formula says." if ms.agrees
                          else f"It is {ms.answered}: the draws disagree with the formula."))
        st.caption("The formula treats the query on its own at the run's noise (for BTT, at the start of a "
                   "sparse-vector round with a fresh threshold noise).")
