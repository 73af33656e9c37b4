"""Charts for the pages: the timeline of a run, value ranges, numbers beside charts, and the
lecture's figures (each mechanism's test picture, sweeps against the bounds, the ROC of the
membership attack, one query's votes).

Numpy in, plain lists and numbers or plotly figures out, in the app's one visual language
(:mod:`app_pages._style`): each mechanism its own colour, dash and marker, every bound in
the one bound style, ⊥ and wrong answers in one colour each and drawn large, the legend
below the plot.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from core.errors import PrivateLabelLabError

from app_pages import _style as style
from app_pages._text import chart_text

OUTCOME_COLORS = {name: o["color"] for name, o in style.OUTCOMES.items()}
"""Colours of a query's outcomes (:data:`core.theory.microscope.OUTCOMES`), the same on every page."""


def line_style(name: str, settings: dict | None = None) -> dict[str, Any]:
    """``go.Scatter`` keywords of a mechanism's measured line (:func:`app_pages._style.line`)."""
    return style.line(name, settings)


def picture_of_test(result, votes, truth=None):
    """The picture of a run's test, drawn from what its registry entry declares.

    A histogram of the statistic the mechanism's test reads
    (:class:`core.mechanisms.registry.TestPicture`), stacked by each query's outcome
    (answered right / answered wrong / ⊥ / not processed; without true labels every
    answer counts as right), with the line of the test on that axis.

    Parameters
    ----------
    result : LabelingResult
    votes : ndarray
        What the mechanism read (counts, or scores).
    truth : ndarray, optional
        The public queries' true labels (NON-PRIVATE teaching view).

    Returns
    -------
    (plotly Figure, str, str) or None
        The figure, a caption (what the test reads) and the mechanism's own bound; None
        when the mechanism declares no picture.
    """
    import plotly.graph_objects as go

    from core.mechanisms import registry
    from core.theory.microscope import OUTCOMES, outcomes

    pic = registry.get(result.mechanism).picture
    if pic is None:
        return None
    values = np.asarray(pic.values(votes, result.params), dtype=float)
    line = float(pic.threshold(result.params))
    kinds = outcomes(result, truth)
    lo, hi = float(min(values.min(), line)), float(max(values.max(), line))
    size = max((hi - lo) / 40.0, 1e-9)
    fig = go.Figure()
    bins = dict(start=lo - size, end=hi + size, size=size)
    tallest = 1
    for i, name in enumerate(OUTCOMES):
        x = values[kinds == i]
        if name == "answered wrong" and truth is None:
            continue
        if x.size:
            tallest = max(tallest, int(np.histogram(x, bins=np.arange(lo - size, hi + 2 * size, size))[0].max()))
        rare = style.OUTCOMES[name]["rare"]
        fig.add_trace(go.Histogram(x=x, name=f"{name} ({x.size})", marker_color=OUTCOME_COLORS[name], xbins=bins,
                                   legendgroup=name, showlegend=not rare))
    # The rare outcomes once more as large markers above the bars: a few ⊥ or wrong answers
    # among thousands of answers are otherwise bars one pixel high.
    for level, name in ((1.06, "⊥"), (1.2, "answered wrong")):
        if name == "answered wrong" and truth is None:
            continue
        x = values[kinds == OUTCOMES.index(name)]
        fig.add_trace(go.Scatter(x=x, y=np.full(x.size, tallest * level), mode="markers", name=f"{name} ({x.size})",
                                 legendgroup=name, marker=style.outcome_marker(name), hoverinfo="x+name"))
    fig.add_vline(x=line, line_dash="dash", line_color="#000000", line_width=3,
                  annotation_text=line_label(pic, line), annotation_font_size=style.sizes().font,
                  annotation_position="top left" if line > (lo + hi) / 2 else "top right")
    style.finish(fig, x_title=pic.statistic, y_title="queries", barmode="stack",
                 yaxis=dict(range=[0, tallest * 1.55]))
    return fig, pic.reads, pic.bound


def certified_test_figure(pic, test_value: float, passed: bool):
    """The test that decides a certified Confident-GNMax run (NON-PRIVATE: its spread reads the votes).

    The test's value in many draws as a histogram, the budget B as the bound style's black dashed
    line, and where this run fell as a thick line in its outcome's colour: answered (released) or
    ⊥ (nothing released), the colours of every page.

    Parameters
    ----------
    pic : core.mechanisms.certified.CertifiedTestPicture
    test_value : float
        The run's own noisy value of the test.
    passed : bool
        Whether the run's test passed (its labels released).
    """
    import plotly.graph_objects as go

    z = style.sizes()
    values = np.asarray(pic.values, dtype=float)
    shown = np.concatenate([values[np.isfinite(values)], [pic.budget, test_value]])
    middle = (float(shown.min()) + float(shown.max())) / 2
    outcome = "answered right" if passed else "⊥"
    fig = go.Figure(go.Histogram(x=values, name="the test's value in 2,000 draws", nbinsx=40,
                                 marker_color=style.OUTCOMES["not processed"]["color"]))
    fig.add_vline(x=pic.budget, line_dash="dash", line_color="#000000", line_width=z.line * 0.75,
                  annotation_text=f"budget B = {pic.budget:.3g}", annotation_font_size=z.font,
                  annotation_position="top left" if pic.budget > middle else "top right")
    fig.add_vline(x=test_value, line_color=style.OUTCOMES[outcome]["color"], line_width=z.line,
                  annotation_text=f"this run: {test_value:.3g} ({'released' if passed else 'nothing released'})",
                  annotation_font_size=z.font, annotation_font_color=style.OUTCOMES[outcome]["color"],
                  annotation_position="bottom left" if test_value > middle else "bottom right")
    style.finish(fig, x_title="measured privacy cost<br>(noisy, Rényi units)", y_title="draws", height=300, legend=False)
    return fig


def number(value: float) -> str:
    """A number as a student reads it: 1,250 rather than 1.25e+03; 0.0142; 3.5."""
    v = float(value)
    if not np.isfinite(v):
        return "∞" if v > 0 else ("−∞" if v < 0 else "—")
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}".rstrip("0").rstrip(".")
    return f"{v:.3g}"


def line_label(pic, line: float) -> str:
    """The test's line in words, with its symbol explained ("threshold Γ = 1,250")."""
    if pic.kind == "flip":
        return f"gap {pic.symbol} = {number(line)}: 5 % chance of a swap"
    return f"threshold {pic.symbol} = {number(line)}"


def sweep_figure(points: dict[str, list], vary: str, rate: str, *, title: str = ""):
    """One outcome share against the swept setting, mean ± sd per mechanism, bounds dashed.

    Parameters
    ----------
    points : dict
        Mechanism name → list of :class:`core.plan.sweeps.SweepPoint`.
    vary : str
        The swept setting (axis title).
    rate : {"answered", "bottom", "wrong", "unprocessed"}
        The share drawn.
    title : str

    Returns
    -------
    plotly Figure
    """
    import plotly.graph_objects as go

    key = {"bottom": "⊥"}.get(rate, rate)
    fig = go.Figure()
    z = style.sizes()
    for name, pts in points.items():
        ok = [p for p in pts if p.feasible or np.isfinite(p.answered)]
        x = [p.value for p in ok]
        y = [getattr(p, rate) for p in ok]
        sd = [getattr(p, f"{rate}_sd") for p in ok]
        fig.add_trace(go.Scatter(x=x, y=y, error_y=dict(type="data", array=sd, visible=True, thickness=z.bound_line),
                                 mode="lines+markers", name=style.short_title(name), **style.line(name)))
        bx = [p.value for p in ok if p.bounds and key in p.bounds]
        if bx:
            fig.add_trace(go.Scatter(x=bx, y=[p.bounds[key] for p in ok if p.bounds and key in p.bounds],
                                     mode="lines+markers", name=f"bound: {style.short_title(name)}",
                                     **style.bound_line(name)))
    axis = SWEPT.get(vary, vary)
    values = sorted({p.value for pts in points.values() for p in pts})
    what = {"answered": ("answered right", "share of the queries answered"),
            "bottom": ("⊥", "share of the queries abstained (⊥)"),
            "wrong": ("answered wrong", "share of the queries answered wrong"),
            "unprocessed": ("not processed", "share of the queries not processed")}[rate]
    colour = style.OUTCOMES[what[0]]["color"]
    style.finish(fig, x_title=axis, y_title=what[1], title=title or f"<span style='color:{colour}'>■</span> {what[1]}",
                 height=z.plot_height + 40,
                 xaxis=dict(type="log" if vary in ("epsilon", "k", "m", "delta") else "linear", tickvals=values,
                            ticktext=[SWEPT_TICK.get(vary, "{:g}").format(v) for v in values]))
    return fig


def sweep_overlaps(points: dict[str, list], rate: str) -> list[str]:
    """Sentences naming the mechanisms whose measured lines coincide on a sweep's chart
    (:func:`app_pages._style.overlaps`): the lines drawn underneath are there too."""
    measured = {style.short_title(name): [getattr(p, rate) if (p.feasible or np.isfinite(p.answered)) else None
                                          for p in pts] for name, pts in points.items()}
    return style.overlaps(measured, top=1.0,
                          top_words={"answered": "all answered", "bottom": "every query ⊥",
                                     "wrong": "every query answered wrong",
                                     "unprocessed": "no query processed"}[rate],
                          zero_words={"answered": "none answered", "bottom": "no ⊥",
                                      "wrong": "no wrong label", "unprocessed": "every query processed"}[rate])


SWEPT = {"epsilon": "ε (privacy budget)", "delta": "δ", "T": "cutoff T (most ⊥)", "k": "teachers k",
         "m": "queries m"}
"""Axis titles of the swept settings."""

SWEPT_TICK = {"delta": "{:.0e}"}


def curves_figure(x, curves: dict[str, list], rows: dict[str, tuple], *, x_title: str, y_title: str,
                  top: float | None = None, top_words: str = "all answered", log_x: bool = True):
    """Measured (or predicted) curves of several mechanisms against one setting, each in its style.

    Parameters
    ----------
    x : sequence of float
        The shared x values (the ε grid).
    curves : dict
        Row label → y values (None where the row has no point).
    rows : dict
        Row label → ``(mechanism name, settings)`` (its style, :func:`app_pages._style.line`).
    x_title, y_title : str
    top : float, optional
        The most a curve can reach (the number of queries): lines that coincide there are
        said to be "all answered".

    Returns
    -------
    (plotly Figure, list of str)
        The figure and the sentences naming the curves that lie on one line.
    """
    import plotly.graph_objects as go

    fig = go.Figure()
    for label, ys in curves.items():
        name, settings = rows[label]
        fig.add_trace(go.Scatter(x=list(x), y=list(ys), mode="lines+markers", name=label, **style.line(name, settings)))
    style.finish(fig, x_title=x_title, y_title=y_title,
                 xaxis=dict(type="log" if log_x else "linear", tickvals=list(x), ticktext=[f"{v:g}" for v in x]))
    return fig, style.overlaps(curves, top=top, top_words=top_words)


def rare_outcomes_figure(counts: dict[str, dict[str, int]]):
    """The rare outcomes of each mechanism's run, drawn large: ⊥ and wrong labels per row.

    Parameters
    ----------
    counts : dict
        Row label → ``{"⊥": n, "answered wrong": n}`` (an outcome left out is not drawn).

    Returns
    -------
    plotly Figure
    """
    import plotly.graph_objects as go

    fig = go.Figure()
    labels = list(counts)[::-1]  # the first row on top
    z = style.sizes()
    for outcome, shift in (("⊥", 0.2), ("answered wrong", -0.2)):  # one row per mechanism, ⊥ above wrong
        shown = [i for i, label in enumerate(labels) if outcome in counts[label]]
        if not shown:
            continue
        values = [counts[labels[i]][outcome] for i in shown]
        fig.add_trace(go.Scatter(x=values, y=[i + shift for i in shown], mode="markers+text", name=outcome,
                                 text=[f"{v:,}" for v in values], textposition="middle right",
                                 textfont=dict(size=z.font, color=style.OUTCOMES[outcome]["color"]),
                                 marker=style.outcome_marker(outcome), hovertext=[labels[i] for i in shown],
                                 cliponaxis=False))
    top = max([1] + [v for c in counts.values() for v in c.values()])
    style.finish(fig, x_title="queries", height=max(z.plot_height, int(len(labels) * z.font * 3.6)),
                 xaxis=dict(range=[-0.05 * top, top * 1.4]),
                 yaxis=dict(tickvals=list(range(len(labels))), ticktext=labels, range=[-0.6, len(labels) - 0.4],
                            automargin=True, zeroline=False))
    return fig


def roc_figure(attacks: dict[str, Any]):
    """ROC curves of the membership attack, one per attacked model, with the guessing line.

    Parameters
    ----------
    attacks : dict
        Label → :class:`core.audit.membership.MembershipAttack`.

    Returns
    -------
    plotly Figure
    """
    import plotly.graph_objects as go

    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="guessing",
                             line=dict(color="#666666", dash="dot", width=style.sizes().bound_line)))
    for i, (label, a) in enumerate(attacks.items()):
        fig.add_trace(go.Scatter(x=a.fpr, y=a.tpr, mode="lines", name=f"{label}: advantage {a.advantage:.2f}",
                                 line=style.series(i)["line"]))
    style.finish(fig, x_title="non-members accused (false positives)", y_title="members caught (true positives)")
    return fig


def vote_bars(votes_row, class_names, noisy=None):
    """One query's vote counts per class, with one noisy draw beside them (for counts).

    Returns
    -------
    plotly Figure
    """
    import plotly.graph_objects as go

    names = [chart_text(c) for c in class_names][: len(votes_row)]
    fig = go.Figure(go.Bar(x=names, y=np.asarray(votes_row), name="teachers' votes", marker_color=style.COLOURS[0]))
    if noisy is not None:
        fig.add_trace(go.Bar(x=names, y=np.asarray(noisy), name="votes + one noise draw", marker_color=style.COLOURS[1]))
    style.finish(fig, x_title="class", y_title="votes", height=300, legend=noisy is not None, barmode="group",
                 xaxis_type="category")
    return fig



def timeline(result) -> list[tuple[str, np.ndarray]]:
    """Query indices of each outcome of a run: answered, ⊥, not processed."""
    from core.mechanisms import BOTTOM, UNPROCESSED

    return [
        ("answered", np.flatnonzero(result.labels >= 0)),
        ("⊥", np.flatnonzero(result.labels == BOTTOM)),
        ("not processed", np.flatnonzero(result.labels == UNPROCESSED)),
    ]


def timeline_figure(result):
    """The timeline of a run: each query's outcome in processing order, ⊥ large.

    Answered queries are thin green ticks; each ⊥ a large vermillion marker (its outcome's
    style on every page); not processed queries grey; the halt, if any, a dashed line.

    Returns
    -------
    plotly Figure
    """
    import plotly.graph_objects as go

    fig = go.Figure()
    z = style.sizes()
    for name, idx in timeline(result):
        outcome = {"answered": style.ANSWERED}.get(name, name)
        marker = style.outcome_marker(outcome)
        if name == "answered":
            marker = dict(color=marker["color"], symbol="line-ns-open", size=z.marker + 4, line=dict(width=1.5))
        elif name == "not processed":
            marker = dict(color=marker["color"], symbol="line-ns-open", size=z.marker + 4, line=dict(width=1.5))
        # The counts are the metrics' above: the rows keep short names, so a narrow column keeps the plot.
        fig.add_trace(go.Scatter(x=idx, y=[name] * len(idx), mode="markers", name=f"{name} ({len(idx):,})",
                                 marker=marker))
    if result.halted_at is not None:
        fig.add_vline(x=result.halted_at, line_dash="dash", line_width=2, annotation_text="halted",
                      annotation_font_size=z.font, annotation_position="top left")
    style.finish(fig, x_title="query", height=max(220, int(z.font * 13)), legend=False,
                 yaxis=dict(type="category", categoryorder="array", categoryarray=["not processed", "⊥", "answered"],
                            title=dict(text="")),
                 xaxis=dict(range=[-0.5, max(result.m, 1) - 0.5], nticks=4, tickangle=0))
    fig.update_layout(margin=dict(t=int(z.font * 1.8)))  # room for the "halted" label above the plot
    return fig


def value_range(*arrays) -> tuple[float, float]:
    """Smallest positive and largest finite value of some curves (marker lines on log axes)."""
    values = np.concatenate([np.asarray(a, dtype=float).ravel() for a in arrays])
    values = values[np.isfinite(values) & (values > 0)]
    if values.size == 0:
        return 1e-3, 1.0
    return float(values.min()), float(values.max())


def median(values) -> float:
    """Median, for a caption."""
    return float(np.median(np.asarray(values)))


def public_params(result) -> dict[str, Any]:
    """The run's data-independent parameters (``core.export.PUBLIC_PARAMETERS``) for ``st.json``."""
    from core.export import PUBLIC_PARAMETERS

    out = {}
    for k, v in result.params.items():
        if k not in PUBLIC_PARAMETERS:
            continue
        out[k] = v.item() if isinstance(v, np.generic) else v
    return out


def _sparse_vector(mechanism: str) -> bool:
    """Whether a mechanism tests distances against a threshold with a cutoff T (BTT's family).

    Those are the mechanisms :func:`core.theory.btt_min_teachers` describes.
    """
    from core.mechanisms import registry

    names = registry.get(mechanism).parameter_names
    return "T" in names and "calibration" in names


def min_teachers(result) -> int | None:
    """The fewest teachers whose unanimous vote passes half the time, at a run's settings."""
    from core.theory import btt_min_teachers

    if not _sparse_vector(result.mechanism):
        return None
    p = result.params
    soft = result.scores is not None
    return int(btt_min_teachers(p["epsilon_target"], p["delta_target"], int(p["T"]), int(p["m"]),
                                calibration=p["calibration"], soft=soft))


def min_teachers_for_settings(settings: dict[str, Any], m: int) -> tuple[int, float] | None:
    """``(k_min, w)`` at privacy settings on ``m`` queries, or None.

    ``k_min`` is :func:`core.theory.btt_min_teachers`, ``w`` the threshold of
    :func:`core.accounting.calibrate_btt`.  None for mechanisms without a threshold on
    the distance and for settings the library refuses.
    """
    from core.accounting import calibrate_btt
    from core.mechanisms import registry
    from core.theory import btt_min_teachers

    name = settings["mechanism"]
    if not _sparse_vector(name):
        return None
    soft = registry.get(name).inputs == "scores"
    p = settings
    try:
        k_min = btt_min_teachers(p["epsilon"], p["delta"], int(p["T"]), int(m), calibration=p["calibration"], soft=soft)
        w = calibrate_btt(p["epsilon"], delta=p["delta"], T=int(p["T"]), m=int(m), calibration=p["calibration"], soft=soft).threshold
    except PrivateLabelLabError:
        return None
    return int(k_min), float(w)


def model_accuracy(model, table) -> float:
    """Accuracy of a fitted model on a labeled table (the held-out test rows)."""
    return float(np.mean(np.asarray(model.predict(table.features)) == np.asarray(table.labels)))


def bounds_defaults(ds, data_cfg: dict[str, Any]) -> dict[str, Any]:
    """Starting values of the Bounds page for a dataset: its n, m and a VC dimension."""
    if data_cfg.get("source") == "generator":
        from core.data import vc_dimension

        V = int(vc_dimension(data_cfg["name"], **data_cfg.get("params", {})))
        note = f"The VC dimension of the generator's hypothesis class ({data_cfg['name']})."
    else:
        V = len(ds.private.features.columns) + 1
        note = "Suggested: d + 1 for linear classifiers on the d feature columns; change it for other learners."
    return {"V": V, "V_note": note, "n": ds.n_private, "m": ds.n_public, "setting": "realizable", "gamma": 0.1}


def show_test_picture(where, result, ens, truth=None, key: str = "test_picture") -> None:
    """Draw a run's test picture (:func:`picture_of_test`) with its caption and bound into ``where``.

    The one place every page draws a mechanism's test: the statistic its registry entry
    declares, the line on that axis, the outcomes, and the mechanism's own bound (BTT's
    Theorem 3.2 appears for BTT only, because only BTT's entry declares it).

    Parameters
    ----------
    where : Streamlit container
    result : LabelingResult
    ens : app_pages._cache.Ensemble
        Gives what the mechanism read (``ens.inputs``), read only when it has a picture.
    truth : ndarray, optional
        The public queries' true labels (NON-PRIVATE teaching view).
    key : str
    """
    from core.mechanisms import registry as _registry

    mech = _registry.get(result.mechanism)
    if mech.picture is None:
        where.info(f"{style.short_title(result.mechanism)} runs no test on each query, so there is no test to draw"
                   + (": one model trained on the private rows labels every query." if mech.inputs == "rows"
                      else "."))
        return
    drawn = picture_of_test(result, ens.inputs(result.mechanism), truth)
    fig, reads, bound = drawn
    from core.mechanisms import registry

    pic = registry.get(result.mechanism).picture
    where.markdown(f"**What the test reads: {pic.statistic}**, with the line {pic.symbol} "
                   "(NON-PRIVATE: the raw votes)")
    where.plotly_chart(fig, key=key)
    where.caption(reads)
    where.caption(f"Its own bound: {bound}")


def boundary_grid(model, frame, n: int = 70):
    """The student's predicted class on a grid over two numeric columns (for a contour).

    Returns
    -------
    (xs, ys, z)
        Grid coordinates and the predicted class ids, shape (n, n).
    """
    import pandas as pd

    cols = list(frame.columns)
    x0, x1 = float(frame[cols[0]].min()), float(frame[cols[0]].max())
    y0, y1 = float(frame[cols[1]].min()), float(frame[cols[1]].max())
    xs, ys = np.linspace(x0, x1, n), np.linspace(y0, y1, n)
    gx, gy = np.meshgrid(xs, ys)
    grid = pd.DataFrame({cols[0]: gx.ravel(), cols[1]: gy.ravel()}).astype(frame.dtypes.to_dict())
    z = np.asarray(model.predict(grid), dtype=float).reshape(n, n)
    return xs, ys, z


def outcome_scatter(frame, kinds, chosen: int, model=None):
    """Every public query of 2-D data coloured by its outcome, the chosen one ringed, the student's boundary.

    Parameters
    ----------
    frame : DataFrame with two numeric columns
    kinds : ndarray of int
        :func:`core.theory.microscope.outcomes` of the run.
    chosen : int
        The query under the microscope.
    model : fitted estimator, optional
        The student (its decision regions are shaded).

    Returns
    -------
    plotly Figure
    """
    import plotly.graph_objects as go

    from core.theory.microscope import OUTCOMES

    cols = list(frame.columns)
    x, y = frame[cols[0]].to_numpy(float), frame[cols[1]].to_numpy(float)
    fig = go.Figure()
    if model is not None:
        xs, ys, z = boundary_grid(model, frame[cols])
        fig.add_trace(go.Contour(x=xs, y=ys, z=z, showscale=False, opacity=0.25, hoverinfo="skip",
                                 colorscale=[[0, "#56B4E9"], [1, "#E69F00"]], line=dict(width=3, color="#000000"),
                                 contours=dict(coloring="fill"), name="student's regions"))
    for j, name in enumerate(OUTCOMES):
        idx = np.flatnonzero(kinds == j)
        if idx.size == 0:
            continue
        rare = style.OUTCOMES[name]["rare"]  # few: drawn as large SVG markers on top of the many
        trace = go.Scatter if rare else go.Scattergl
        fig.add_trace(trace(x=x[idx], y=y[idx], mode="markers", name=f"{name} ({idx.size:,})", customdata=idx,
                            marker=style.outcome_marker(name, small=6)))
    fig.add_trace(go.Scatter(x=[x[chosen]], y=[y[chosen]], mode="markers", name="under the microscope",
                             marker=dict(size=20, color="rgba(0,0,0,0)", line=dict(width=3, color="#000000"))))
    style.finish(fig, x_title=chart_text(cols[0]), y_title=chart_text(cols[1]), height=430)
    return fig


def picked_point(event) -> int | None:
    """The query index of the dot clicked on :func:`outcome_scatter` (None if none)."""
    try:
        points = event["selection"]["points"]
    except (TypeError, KeyError):
        return None
    for point in points:
        data = point.get("customdata")
        if data is not None:
            return int(data[0] if isinstance(data, (list, tuple)) else data)
    return None


def digit_image(pixels):
    """A square image of pixels (8 × 8 digits, 28 × 28 MNIST) in grey."""
    import plotly.graph_objects as go

    fig = go.Figure(go.Heatmap(z=np.asarray(pixels)[::-1], colorscale="Greys", showscale=False))
    fig.update_layout(height=260, width=260, margin=dict(l=10, r=10, t=10, b=10),
                      xaxis=dict(visible=False), yaxis=dict(visible=False, scaleanchor="x"))
    return fig


def score_histogram(scores):
    """One query's teacher scores (soft labels read them in bins)."""
    import plotly.graph_objects as go

    fig = go.Figure(go.Histogram(x=np.asarray(scores, dtype=float), xbins=dict(start=0, end=1, size=0.05),
                                 marker_color=style.COLOURS[0], name="teachers' scores"))
    style.finish(fig, x_title="teacher's score for the positive class", y_title="teachers", height=300, legend=False)
    return fig
