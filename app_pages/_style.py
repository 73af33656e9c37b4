"""The app's one visual language: each mechanism's colour, dash and marker, the outcomes' colours,
chart sizes for a screen or a projector, and the legend's place.

* :func:`style_table`: one row per registered mechanism (in registry order), then one per
  other value of a mechanism's choice parameters (BTT at the paper's calibration, …).  It is
  computed from the registry (:mod:`core.mechanisms.registry`), so a mechanism registered
  later gets a style too.  The first :data:`COLOURS` rows each have their own colour; every
  row has its own colour, dash and marker combination (and, up to ``len(DASHES)`` and
  ``len(SYMBOLS)`` rows, its own dash and its own marker).
* Measured curves are thick lines with filled markers, drawn with long dashes only (never
  dots); every bound is drawn in the one bound style (:func:`bound_line`): thin, dotted, with
  open bar markers, in its mechanism's colour.
* :data:`OUTCOMES`: answered right, answered wrong, ⊥ and not processed have one colour and
  one marker each on every page; the rare ones (wrong, ⊥) are drawn large.
* :func:`projector`: the sidebar's "projector" setting (larger type, thicker lines, big ⊥ and
  wrong markers) read from the session; :func:`sizes` gives the numbers.
* :func:`finish`: the common layout: the legend below the plot in one column, the figure
  made taller by the legend's height so the plot keeps its own height at any width.

Colours.  Every colour has a contrast of at least 3:1 on white (WCAG 2's ratio for graphics)
and the first five are Okabe and Ito's colour-blind-safe colours; the others were chosen to be
as far from every other as possible (CIEDE2000) in normal vision and in simulated deutan,
protan and tritan vision.  With a dozen lines no palette stays distinct for every reader by
colour alone, so every line also has its own dash and marker (``tests/app/test_style.py``
checks all three).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

COLOURS: tuple[str, ...] = (
    "#0072B2",  # blue (Okabe–Ito)
    "#D55E00",  # vermillion (Okabe–Ito)
    "#009E73",  # bluish green (Okabe–Ito)
    "#CC79A7",  # reddish purple (Okabe–Ito)
    "#000000",  # black
    "#2B0E8A",  # indigo
    "#944B40",  # brick
    "#304C03",  # dark olive
    "#8A63FE",  # violet
    "#666666",  # grey
    "#834D7E",  # mauve
    "#581631",  # maroon
    "#7E8F46",  # olive green
    "#204177",  # navy
)
"""Mechanism colours, each at least 3:1 on white, in the order of :func:`style_table`."""

DASHES: tuple[str, ...] = (
    "solid", "dash", "longdash", "dashdot", "longdashdot", "18px,6px", "12px,4px,4px,4px,4px,4px",
    "24px,4px,8px,4px", "8px,4px", "30px,8px", "16px,4px,2px,4px", "6px,3px,14px,3px",
    "20px,4px,4px,4px", "10px,6px",
)
"""Dash patterns of measured lines: all made of long strokes (a dotted line is a bound)."""

SYMBOLS: tuple[str, ...] = (
    "circle", "square", "diamond", "triangle-up", "pentagon", "hexagon", "star", "triangle-down",
    "hourglass", "bowtie", "star-diamond", "triangle-left",
    "triangle-right", "cross",
)
"""Filled markers of measured lines (the open bar ``line-ew-open`` marks a bound)."""

BOUND_DASH = "dot"
BOUND_SYMBOL = "line-ew-open"

OUTCOMES: dict[str, dict[str, Any]] = {
    "answered right": {"color": "#009E73", "symbol": "circle", "rare": False},
    "answered wrong": {"color": "#000000", "symbol": "x-thin-open", "rare": True},
    "⊥": {"color": "#D55E00", "symbol": "diamond-tall", "rare": True},
    "not processed": {"color": "#9E9E9E", "symbol": "square", "rare": False},
}
"""One colour and marker per outcome of a query, on every page (timeline, test picture,
microscope, Compare, Sweeps): the rare outcomes, a wrong answer and ⊥, in black and vermillion."""

ANSWERED = "answered right"  # the timeline has no truth: an answer is drawn as "answered"

PROJECTOR_KEY = "projector"
"""Session-state key of the sidebar's projector toggle."""


@dataclass(frozen=True)
class Style:
    """One line's colour, dash and marker."""

    color: str
    dash: str
    symbol: str


@dataclass(frozen=True)
class Sizes:
    """Type, line and marker sizes (:func:`sizes`)."""

    font: int
    legend_font: int
    line: float
    bound_line: float
    marker: int
    rare_marker: int
    plot_height: int


SCREEN = Sizes(font=16, legend_font=15, line=4.0, bound_line=2.0, marker=10, rare_marker=18, plot_height=340)
PROJECTOR = Sizes(font=22, legend_font=20, line=6.0, bound_line=3.0, marker=14, rare_marker=28, plot_height=420)


def projector() -> bool:
    """Whether the projector setting is on in this session (False outside a Streamlit run)."""
    try:
        import streamlit as st

        return bool(st.session_state.get(PROJECTOR_KEY, False))
    except Exception:  # noqa: BLE001 - no session (a library call, a test without a runtime)
        return False


def sizes() -> Sizes:
    """The sizes of this session's charts: :data:`PROJECTOR` or :data:`SCREEN`."""
    return PROJECTOR if projector() else SCREEN


# --------------------------------------------------------------------------------------
# Mechanism styles
# --------------------------------------------------------------------------------------


def variants() -> list[tuple[str, dict[str, Any]]]:
    """Every row of the style table: ``(name, {choice: value})`` for each registered mechanism
    at its defaults, then each other value of its choice parameters (registry order)."""
    from core.mechanisms import registry

    rows: list[tuple[str, dict[str, Any]]] = [(name, {}) for name in registry.names()]
    for name in registry.names():
        for p in registry.get(name).parameters:
            if p.kind == "choice":
                rows += [(name, {p.name: v}) for v in (p.choices or ()) if v != p.default]
    return rows


def _nth(i: int) -> Style:
    """The i-th style: colour, dash and marker i while they last; then combinations that
    differ from every earlier row in at least one of the three."""
    n_c, n_d, n_s = len(COLOURS), len(DASHES), len(SYMBOLS)
    lap = i // n_c
    return Style(COLOURS[i % n_c], DASHES[(i + lap) % n_d], SYMBOLS[(i + 2 * lap) % n_s])


def style_table() -> dict[tuple[str, tuple], Style]:
    """``(name, sorted non-default choices) → Style`` for every row of :func:`variants`."""
    return {(name, tuple(sorted(choices.items()))): _nth(i) for i, (name, choices) in enumerate(variants())}


def mechanism_style(name: str, settings: Mapping[str, Any] | None = None) -> Style:
    """The style of a mechanism's line at its settings (only its choice parameters matter).

    Parameters
    ----------
    name : str
        A registered mechanism.
    settings : mapping, optional
        Its settings; a choice parameter at a non-default value selects that variant's row.
    """
    from core.mechanisms import registry

    mech = registry.get(name)
    chosen = {p.name: (settings or {}).get(p.name, p.default) for p in mech.parameters if p.kind == "choice"}
    other = tuple(sorted((k, v) for k, v in chosen.items()
                         if v is not None and v != mech.parameter(k).default))
    table = style_table()
    return table.get((name, other[:1]), table[(name, ())])


def short_title(name: str) -> str:
    """A mechanism's title without its parenthesis ("PATE LNMax", "DP logistic regression"): the
    name a chart's legend and an overlap sentence use."""
    from core.mechanisms import registry

    return registry.get(name).title.split(" (")[0]


def choice_words(name: str, settings: Mapping[str, Any]) -> str:
    """The mechanism's choice parameters at these settings in words ("the paper's calibration")."""
    from core.mechanisms import registry

    mech = registry.get(name)
    words = []
    for p in mech.parameters:
        if p.kind != "choice":
            continue
        value = settings.get(p.name, p.default)
        words.append(p.describe_choice(value))
    return ", ".join(w for w in words if w)


def row_label(name: str, settings: Mapping[str, Any], *, several: bool = False) -> str:
    """The name of a mechanism's row or curve: its short title, and where the same mechanism has
    several rows, its choices in words ("BTT, hard labels, the paper's calibration")."""
    label = short_title(name)
    words = choice_words(name, settings) if several else ""
    return f"{label}, {words}" if words else label


def line(name: str, settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``go.Scatter`` keywords drawing a mechanism's measured line: its colour, dash and marker,
    thick, filled markers (sizes of this session, :func:`sizes`)."""
    s, z = mechanism_style(name, settings), sizes()
    return {"line": dict(color=s.color, dash=s.dash, width=z.line),
            "marker": dict(symbol=s.symbol, size=z.marker, color=s.color, line=dict(width=1, color="#FFFFFF"))}


def series(i: int) -> dict[str, Any]:
    """``go.Scatter`` keywords of the i-th line of a chart whose lines are not mechanisms (the
    attacked models of the leak page): the i-th style of the table."""
    s, z = _nth(i), sizes()
    return {"line": dict(color=s.color, dash=s.dash, width=z.line),
            "marker": dict(symbol=s.symbol, size=z.marker, color=s.color)}


def bound_line(name: str, settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``go.Scatter`` keywords drawing a bound: the one bound style (thin, dotted, open bars) in the
    mechanism's colour."""
    s, z = mechanism_style(name, settings), sizes()
    return {"line": dict(color=s.color, dash=BOUND_DASH, width=z.bound_line),
            "marker": dict(symbol=BOUND_SYMBOL, size=z.marker + 8, line=dict(width=z.bound_line, color=s.color))}


def outcome_marker(outcome: str, *, small: int | None = None) -> dict[str, Any]:
    """``marker=`` of an outcome's dots: its colour and symbol; the rare outcomes large."""
    o, z = OUTCOMES[outcome], sizes()
    size = z.rare_marker if o["rare"] else (small if small is not None else z.marker - 3)
    width = max(2, z.line * 0.6) if o["rare"] else 0
    return dict(color=o["color"], symbol=o["symbol"], size=size, line=dict(width=width, color=o["color"]))


# --------------------------------------------------------------------------------------
# Layout
# --------------------------------------------------------------------------------------


def legend_height(n_entries: int) -> int:
    """Pixels the legend below a chart needs: one entry per row."""
    z = sizes()
    return int(n_entries * math.ceil(z.legend_font * 1.6) + 12) if n_entries else 0


def finish(fig, *, x_title: str = "", y_title: str = "", height: int | None = None, legend: bool = True,
           title: str = "", **layout: Any):
    """The app's common layout: type size, the legend below the plot in one column, clear of it.

    The figure is made taller by the legend's height (:func:`legend_height`), so the plot keeps
    ``height`` (the session's default plot height) however many entries the legend has and at
    any width: the legend never covers the plot or its axis titles.

    Parameters
    ----------
    fig : plotly Figure
    x_title, y_title : str
    height : int, optional
        The plot's own height in pixels (axes included, legend not).
    legend : bool
        Whether to show the legend.
    title : str
    **layout
        More ``update_layout`` keywords (axes types, bar mode, …).

    Returns
    -------
    plotly Figure
    """
    z = sizes()
    plot = int(height if height is not None else z.plot_height)
    if plot < z.plot_height and projector():  # a projector's smallest chart still reads
        plot = int(plot * PROJECTOR.plot_height / SCREEN.plot_height)
    entries = [t for t in fig.data if t.showlegend is not False and t.name] if legend else []
    below = legend_height(len(entries))
    axis_room = int(z.font * 3.6)  # tick labels and the x axis title
    top = int(z.font * 2.4) if title else 16
    area = max(plot - top - axis_room, 60)  # the plot area's own height, in pixels
    fig.update_layout(
        font=dict(size=z.font, color="#111111"),
        height=plot + below,
        margin=dict(l=10, r=20, t=top, b=axis_room + below),
        showlegend=bool(entries),
        # In the bottom margin, under the x axis title: paper coordinates in units of the plot
        # area's height, so the legend starts just below the axis whatever the figure's width.
        legend=dict(orientation="v", y=-(axis_room + 6) / area, yanchor="top", x=0, xanchor="left",
                    font=dict(size=z.legend_font), bgcolor="rgba(255,255,255,0)", itemsizing="constant",
                    itemwidth=60, tracegroupgap=2),  # a sample long enough to show the line's dash
        # Every size explicit: Streamlit's chart theme sets its own axis fonts over the layout's font.
        # Numbers in full (0.0001, 1,000,000), never Plotly's SI prefixes (100μ, 1M): a student reads no prefix.
        xaxis=dict(title=dict(text=x_title, standoff=8, font=dict(size=z.font)), tickfont=dict(size=z.font - 2),
                   automargin=True, exponentformat="none", separatethousands=True),
        yaxis=dict(title=dict(text=y_title, font=dict(size=z.font)), tickfont=dict(size=z.font - 2),
                   automargin=True, exponentformat="none", separatethousands=True),
        hoverlabel=dict(font=dict(size=z.font)),
        **({"title": dict(text=title, x=0, xanchor="left", font=dict(size=z.font + 2))} if title else {}),
    )
    if layout:
        fig.update_layout(**layout)
    return fig


def overlaps(curves: Mapping[str, Iterable[float | None]], *, top: float | None = None,
             top_words: str = "all answered", zero_words: str = "none answered") -> list[str]:
    """Sentences naming the curves that lie on one line ("BTT, hard labels and PATE LNMax lie
    on one line: all answered"), so a reader knows the hidden ones are there.

    Two curves coincide when every point is equal (missing points equal missing points).

    Parameters
    ----------
    curves : mapping
        Legend name → y values at the chart's shared x values.
    top : float, optional
        The largest possible value (the number of queries): a shared line that is ``top`` at
        every point is described by ``top_words``, one that is 0 everywhere by ``zero_words``.
    """
    groups: list[tuple[tuple, list[str]]] = []
    for name, ys in curves.items():
        key = tuple(None if y is None or (isinstance(y, float) and math.isnan(y)) else round(float(y), 9) for y in ys)
        if all(v is None for v in key):
            continue
        for k, members in groups:
            if k == key:
                members.append(name)
                break
        else:
            groups.append((key, [name]))
    out = []
    for key, members in groups:
        if len(members) < 2:
            continue
        names = ", ".join(members[:-1]) + " and " + members[-1]
        values = {v for v in key if v is not None}
        if top is not None and values == {round(float(top), 9)}:
            out.append(f"{names} lie on one line: {top_words}.")
        elif values == {0.0}:
            out.append(f"{names} lie on one line: {zero_words}.")
        else:
            out.append(f"{names} lie on one line (the same value at every point).")
    return out


def contrast_on_white(colour: str) -> float:
    """WCAG 2 contrast ratio of a ``#RRGGBB`` colour against white."""
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    h = colour.lstrip("#")
    r, g, b = (channel(int(h[i:i + 2], 16) / 255) for i in (0, 2, 4))
    lum = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return 1.05 / (lum + 0.05)


BASE_CSS = """
<style>
.katex-display { padding-left: 0.5em; padding-right: 0.5em; }
[data-testid="stMetricLabel"] .stMarkdownEllipsis, [data-testid="stMetricLabel"] p {
  white-space: normal; overflow: visible; text-overflow: clip; overflow-wrap: anywhere; }
@media (max-width: 1280px) {
  [data-testid="stMainBlockContainer"] { padding-left: 2rem; padding-right: 2rem; }
}
</style>
"""
"""Every session: at a projector's 1024 px the main column keeps 2 rem margins (Streamlit's 5 rem
would leave tables and formulas 110 px less); a displayed formula gets room for the overhang of
its last glyph (a square root's bar); a metric's label wraps onto a second line where its column
is narrow, instead of being cut with an ellipsis."""

PROJECTOR_CSS = """
<style>
[data-testid="stMainBlockContainer"] [data-testid="stMarkdownContainer"] p,
[data-testid="stMainBlockContainer"] [data-testid="stMarkdownContainer"] li { font-size: 1.3rem; line-height: 1.45; }
[data-testid="stMainBlockContainer"] button [data-testid="stMarkdownContainer"] p { font-size: 1.1rem; }
[data-testid="stMainBlockContainer"] [data-testid="stCaptionContainer"] p { font-size: 1.1rem; line-height: 1.4; }
[data-testid="stMainBlockContainer"] [data-testid="stWidgetLabel"] p { font-size: 1.1rem; }
[data-testid="stMainBlockContainer"] [data-testid="stMetricValue"] p { font-size: inherit; }
[data-testid="stMainBlockContainer"] [data-testid="stMetricLabel"] p { font-size: 1.1rem; }
[data-testid="stMainBlockContainer"] h1 { font-size: 2.4rem; }
[data-testid="stMainBlockContainer"] h2, [data-testid="stMainBlockContainer"] h3 { font-size: 1.8rem; }
[data-testid="stMainBlockContainer"] { padding-left: 1.5rem; padding-right: 1.5rem; padding-top: 4rem; }
.ledger-banner { font-size: 1.5rem; font-weight: 700; padding: 0.5rem 1rem; border-radius: 0.5rem;
  background: #FFF4E5; border: 3px solid #D55E00; color: #111111; overflow-wrap: anywhere; }
</style>
"""
"""Larger type and a wider main column for a projector (injected by :func:`apply_css`)."""


def apply_css() -> None:
    """Inject :data:`BASE_CSS`, and :data:`PROJECTOR_CSS` when the projector setting is on (once per
    page run, before the page)."""
    import streamlit as st

    st.html(BASE_CSS + (PROJECTOR_CSS if projector() else ""))
