"""Charts for the pages: the timeline of a run, value ranges, numbers beside charts, and the
lecture's figures (each mechanism's test picture, sweeps against the bounds, the ROC of the
membership attack, one query's votes).

Numpy in, plain lists and numbers or plotly figures out.  Every mechanism has its own colour
and dash (:func:`mechanism_style`), readable on a projector and at 1024 px: the Okabe–Ito
palette (distinguishable with the common colour-vision deficiencies) and eight dash
patterns, so two mechanisms never share both.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from core.errors import PrivateLabelLabError
from app_pages._text import chart_text

STATUS_COLORS = {"answered": "#2e7d32", "⊥": "#c62828", "not processed": "#9e9e9e"}

OUTCOME_COLORS = {
    "answered right": "#009E73",
    "answered wrong": "#D55E00",
    "⊥": "#CC79A7",
    "not processed": "#9E9E9E",
}
"""Colours of a query's outcomes (:data:`core.theory.microscope.OUTCOMES`), the same on every page."""

PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442")
"""Okabe–Ito colours, in the order mechanisms are registered."""

DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot", "5px,2px,1px,2px", "1px,4px")
"""Plotly dash patterns; the i-th mechanism gets colour i and dash i, shifted by one each time the colours repeat."""

FONT = dict(size=15)
"""Chart text large enough for a room."""


def mechanism_style(name: str, index: int | None = None) -> dict[str, Any]:
    """Colour, dash and marker of a mechanism's lines: distinct for every registered mechanism.

    Parameters
    ----------
    name : str
        A registered mechanism's name (or a label that starts with one's title).
    index : int, optional
        Position to use when ``name`` is not registered (e.g. the i-th curve of a chart).

    Returns
    -------
    dict
        ``{"color", "dash", "symbol"}`` for ``go.Scatter(line=dict(color=..., dash=...),
        marker=dict(symbol=...))``.
    """
    from core.mechanisms import registry

    names = registry.names()
    if name in names:
        i = names.index(name)
    else:
        titles = [registry.get(n).title for n in names]
        i = next((j for j, t in enumerate(titles) if name.startswith(t)), index if index is not None else len(names))
    symbols = ("circle", "square", "diamond", "triangle-up", "x", "cross", "star", "triangle-down")
    # Past the palette's length the colours repeat with the next dash, so (colour, dash) pairs
    # stay distinct for up to len(PALETTE) * len(DASHES) mechanisms.
    dash = DASHES[(i + i // len(PALETTE)) % len(DASHES)]
    return {"color": PALETTE[i % len(PALETTE)], "dash": dash, "symbol": symbols[i % len(symbols)]}


def line_style(name: str, index: int | None = None) -> dict[str, Any]:
    """``go.Scatter`` keyword arguments drawing a mechanism's curve in its own colour, dash and
    marker (:func:`mechanism_style`), with lines thick enough for a projector."""
    s = mechanism_style(name, index)
    return {"line": dict(color=s["color"], dash=s["dash"], width=3), "marker": dict(symbol=s["symbol"], size=8)}


def _layout(fig, **kw):
    fig.update_layout(font=FONT, margin=dict(l=10, r=10, t=30, b=10),
                      legend=dict(orientation="h", yanchor="top", y=-0.25, x=0, xanchor="left", font=dict(size=14)),
                      **kw)
    return fig


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
    for i, name in enumerate(OUTCOMES):
        x = values[kinds == i]
        if name == "answered wrong" and truth is None:
            continue
        fig.add_trace(go.Histogram(x=x, name=f"{name} ({x.size})", marker_color=OUTCOME_COLORS[name],
                                   xbins=dict(start=lo - size, end=hi + size, size=size)))
    label = f"{pic.symbol} = {line:.3g}" + (" (5 % swap)" if pic.kind == "flip" else "")
    fig.add_vline(x=line, line_dash="dash", line_color="#000000", line_width=3,
                  annotation_text=label, annotation_font_size=15)
    _layout(fig, barmode="stack", height=330, xaxis_title=pic.statistic, yaxis_title="queries")
    return fig, pic.reads, pic.bound


def sweep_figure(points: dict[str, list], vary: str, rate: str, *, title: str = ""):
    """One outcome share against the swept setting, mean ± sd per mechanism, bounds dashed.

    Parameters
    ----------
    points : dict
        Mechanism name → list of :class:`core.plan.sweeps.SweepPoint`.
    vary : str
        The swept setting (axis title).
    rate : {"answered", "bottom", "wrong"}
        The share drawn.
    title : str

    Returns
    -------
    plotly Figure
    """
    import plotly.graph_objects as go

    from app_pages._widgets import mechanism_title

    key = {"bottom": "⊥"}.get(rate, rate)
    fig = go.Figure()
    for name, pts in points.items():
        style = mechanism_style(name)
        ok = [p for p in pts if p.feasible or np.isfinite(p.answered)]
        x = [p.value for p in ok]
        y = [getattr(p, rate) for p in ok]
        sd = [getattr(p, f"{rate}_sd") for p in ok]
        fig.add_trace(go.Scatter(x=x, y=y, error_y=dict(type="data", array=sd, visible=True, thickness=1.5),
                                 mode="lines+markers", name=mechanism_title(name),
                                 line=dict(color=style["color"], dash=style["dash"], width=3),
                                 marker=dict(symbol=style["symbol"], size=9)))
        bx = [p.value for p in ok if p.bounds and key in p.bounds]
        if bx:
            fig.add_trace(go.Scatter(x=bx, y=[p.bounds[key] for p in ok if p.bounds and key in p.bounds],
                                     mode="lines+markers", name=f"bound: {mechanism_title(name)}",
                                     line=dict(color=style["color"], dash="dot", width=1.5),
                                     marker=dict(symbol="line-ew-open", size=16, line=dict(width=2, color=style["color"]))))
    axis = {"epsilon": "ε", "T": "cutoff T", "k": "teachers k", "m": "queries m"}.get(vary, vary)
    values = sorted({p.value for pts in points.values() for p in pts})
    _layout(fig, height=560, xaxis_title=axis, yaxis_title="share of the queries", title=title,
            xaxis=dict(type="log" if vary in ("epsilon", "k", "m") else "linear", tickvals=values,
                       ticktext=[f"{v:g}" for v in values]))
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
                             line=dict(color="#9E9E9E", dash="dot", width=2)))
    for i, (label, a) in enumerate(attacks.items()):
        fig.add_trace(go.Scatter(x=a.fpr, y=a.tpr, mode="lines", name=f"{label}: advantage {a.advantage:.2f}",
                                 line=dict(color=PALETTE[i % len(PALETTE)], dash=DASHES[i % len(DASHES)], width=3)))
    _layout(fig, height=380, xaxis_title="non-members accused (false positives)",
            yaxis_title="members caught (true positives)")
    return fig


def vote_bars(votes_row, class_names, noisy=None):
    """One query's vote counts per class, with one noisy draw beside them (for counts).

    Returns
    -------
    plotly Figure
    """
    import plotly.graph_objects as go

    names = [chart_text(c) for c in class_names][: len(votes_row)]
    fig = go.Figure(go.Bar(x=names, y=np.asarray(votes_row), name="teachers' votes", marker_color=PALETTE[0]))
    if noisy is not None:
        fig.add_trace(go.Bar(x=names, y=np.asarray(noisy), name="votes + one noise draw", marker_color=PALETTE[1]))
    _layout(fig, height=300, barmode="group", xaxis_title="class", yaxis_title="votes", xaxis_type="category")
    return fig



def timeline(result) -> list[tuple[str, np.ndarray, str]]:
    """Query indices of each outcome (answered, ⊥, not processed) with its colour."""
    from core.mechanisms import BOTTOM, UNPROCESSED

    return [
        ("answered", np.flatnonzero(result.labels >= 0), STATUS_COLORS["answered"]),
        ("⊥", np.flatnonzero(result.labels == BOTTOM), STATUS_COLORS["⊥"]),
        ("not processed", np.flatnonzero(result.labels == UNPROCESSED), STATUS_COLORS["not processed"]),
    ]


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

    if _registry.get(result.mechanism).picture is None:
        where.info("This mechanism declares no picture of its test.")
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
        fig.add_trace(go.Scattergl(x=x[idx], y=y[idx], mode="markers", name=f"{name} ({idx.size})",
                                   customdata=idx, marker=dict(size=6, color=OUTCOME_COLORS[name])))
    fig.add_trace(go.Scatter(x=[x[chosen]], y=[y[chosen]], mode="markers", name="under the microscope",
                             marker=dict(size=20, color="rgba(0,0,0,0)", line=dict(width=3, color="#000000"))))
    _layout(fig, height=430, xaxis_title=chart_text(cols[0]), yaxis_title=chart_text(cols[1]))
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
                                 marker_color=PALETTE[0], name="teachers' scores"))
    _layout(fig, height=300, xaxis_title="teacher's score for the positive class", yaxis_title="teachers")
    return fig
