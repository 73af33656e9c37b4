"""The app's visual language (app_pages/_style.py): one look per mechanism, readable colours, the
legend clear of the plot, the rare outcomes large, and the projector setting.

The colours are checked with an independent colour-science library (coloraide): the WCAG 2
contrast ratio on white, and CIEDE2000 distances between every two colours in normal vision and
in simulated deutan, protan and tritan vision (Brettel/Viénot simulation at full severity).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import replace

import numpy as np
import pytest
from coloraide import Color

from core.mechanisms import registry


def test_every_row_of_the_style_table_has_its_own_colour_dash_and_marker():
    from app_pages import _style as style

    table = style.style_table()
    rows = style.variants()
    assert len(table) == len(rows) >= len(registry.names())
    looks = list(table.values())
    assert len({(s.color, s.dash, s.symbol) for s in looks}) == len(looks)
    first = looks[:len(style.COLOURS)]
    assert len({s.color for s in first}) == len(first)  # no two alike while the colours last
    assert len({s.dash for s in looks[:len(style.DASHES)]}) == min(len(looks), len(style.DASHES))
    assert len({s.symbol for s in looks[:len(style.SYMBOLS)]}) == min(len(looks), len(style.SYMBOLS))
    # today every registered mechanism and every other choice of one has its own colour
    assert len(looks) <= len(style.COLOURS) and len({s.color for s in looks}) == len(looks)
    assert style.BOUND_DASH not in style.DASHES and style.BOUND_SYMBOL not in style.SYMBOLS
    # a mechanism at a non-default choice is its own row; other settings do not matter
    paper = style.mechanism_style("btt", {"calibration": "paper", "epsilon": 2.0})
    assert paper != style.mechanism_style("btt") == style.mechanism_style("btt", {"epsilon": 8.0, "T": 3})
    assert paper == table[("btt", (("calibration", "paper"),))]


def test_the_colours_read_on_white_and_stay_apart_for_colour_blind_readers():
    from app_pages import _style as style

    white = Color("white")
    for colour in style.COLOURS + tuple(o["color"] for o in style.OUTCOMES.values() if o["rare"]):
        assert Color(colour).contrast(white) >= 3.0, colour
        assert style.contrast_on_white(colour) == pytest.approx(Color(colour).contrast(white), rel=1e-3)

    def seen(colour: str, deficiency: str | None) -> Color:
        c = Color(colour)
        return c if deficiency is None else c.filter(deficiency).convert("srgb").clip()

    for a, b in itertools.combinations(style.COLOURS, 2):
        assert seen(a, None).delta_e(seen(b, None), method="2000") >= 15, (a, b)
        for deficiency in ("deutan", "protan", "tritan"):
            assert seen(a, deficiency).delta_e(seen(b, deficiency), method="2000") >= 5, (a, b, deficiency)
    # The first five (Okabe and Ito's, the most common mechanisms) stay further apart for every reader.
    for a, b in itertools.combinations(style.COLOURS[:5], 2):
        for deficiency in (None, "deutan", "protan", "tritan"):
            assert seen(a, deficiency).delta_e(seen(b, deficiency), method="2000") >= 10, (a, b, deficiency)
    # ⊥ and a wrong answer apart from each other and from an answer, for every reader
    outcomes = [style.OUTCOMES[o]["color"] for o in ("answered right", "answered wrong", "⊥")]
    for a, b in itertools.combinations(outcomes, 2):
        for deficiency in (None, "deutan", "protan", "tritan"):
            assert seen(a, deficiency).delta_e(seen(b, deficiency), method="2000") >= 15, (a, b, deficiency)


def test_a_newly_registered_mechanism_gets_its_own_style():
    from app_pages import _style as style

    before = style.style_table()
    registry.register(replace(registry.get("lnmax"), name="toy-style", title="Toy noisy max (for a test)"))
    try:
        table = style.style_table()
        assert ("toy-style", ()) in table and len(table) == len(before) + 1
        looks = [(s.color, s.dash, s.symbol) for s in table.values()]
        assert len(set(looks)) == len(looks)
        assert style.short_title("toy-style") == "Toy noisy max"
        assert style.line("toy-style")["line"]["color"] == table[("toy-style", ())].color
    finally:
        registry.unregister("toy-style")


def test_row_labels_and_choices_in_words():
    from app_pages import _style as style

    assert style.row_label("btt", {"calibration": "paper"}) == "BTT, hard labels"
    assert style.row_label("btt", {"calibration": "paper"}, several=True) == "BTT, hard labels, paper's calibration"
    assert style.row_label("confident-gnmax", {"accounting": "fixed"}) == "PATE 2018 Confident-GNMax"
    assert style.row_label("dp-logistic", {}) == "DP logistic regression"
    for name in registry.names():  # every choice of every mechanism has words
        for p in registry.get(name).parameters:
            if p.kind == "choice":
                assert p.choice_words is not None and len(p.choice_words) == len(p.choices), (name, p.name)


def test_curves_on_one_line_are_named_in_words():
    from app_pages import _style as style

    text = style.overlaps({"A": [2000, 2000], "B": [5, 2000], "C": [2000, 2000], "D": [2000, 2000],
                           "E": [0, 0], "F": [0, 0], "G": [None, None]}, top=2000)
    assert text == ["A, C and D lie on one line: all answered.", "E and F lie on one line: none answered."]
    assert style.overlaps({"A": [1, 2], "B": [1, 2]}) == ["A and B lie on one line (the same value at every point)."]
    assert style.overlaps({"A": [1, 2], "B": [1, 3]}) == []


def test_the_legend_stands_below_the_plot_which_keeps_its_height():
    import plotly.graph_objects as go

    from app_pages import _style as style

    for n in (1, 4, 11):
        fig = go.Figure([go.Scatter(x=[1, 2], y=[1, 2], name=f"curve {i}") for i in range(n)])
        style.finish(fig, x_title="ε", y_title="answered", height=340)
        lay = fig.layout
        assert lay.legend.orientation == "v" and lay.legend.y < 0 and lay.legend.yanchor == "top"
        assert lay.height == 340 + style.legend_height(n)
        assert lay.margin.b >= style.legend_height(n)  # the legend lives in the bottom margin, not on the plot
        assert lay.height - lay.margin.t - lay.margin.b >= 340 - 16 - int(style.SCREEN.font * 3.6)
        assert lay.xaxis.title.font.size == style.SCREEN.font and lay.legend.font.size == style.SCREEN.legend_font
        # numbers in full on the axes (0.0001, 1,000,000), never an SI prefix (100μ, 1M)
        assert lay.xaxis.exponentformat == lay.yaxis.exponentformat == "none" and lay.yaxis.separatethousands


def test_the_test_picture_draws_the_rare_outcomes_large_in_their_colours():
    from app_pages import _charts as charts
    from app_pages import _style as style

    rng = np.random.default_rng(3)
    counts = np.stack([rng.multinomial(200, [p, 1 - p]) for p in rng.uniform(0.3, 1.0, 400)])
    truth = np.where(rng.random(400) < 0.9, counts.argmax(axis=1), 1 - counts.argmax(axis=1))
    result = registry.get("btt").label(counts, epsilon=4.0, delta=1e-5, T=20, rng=0)
    fig, _, _ = charts.picture_of_test(result, counts, truth)
    markers = {t.name.split(" (")[0]: t for t in fig.data if t.type == "scatter"}
    assert set(markers) == {"⊥", "answered wrong"}
    for name, t in markers.items():
        assert t.marker.color == style.OUTCOMES[name]["color"] and t.marker.size == style.SCREEN.rare_marker
        assert len(t.x) == int(t.name.split("(")[1].rstrip(")"))
    assert len(markers["⊥"].x) == result.n_bottom > 0
    bars = {t.name.split(" (")[0]: t.marker.color for t in fig.data if t.type == "histogram"}
    assert all(colour == style.OUTCOMES[name]["color"] for name, colour in bars.items())
    # the line's label says what it is, with its number in full
    assert fig.layout.annotations[0].text.startswith("threshold w = ")
    assert charts.number(1250.4) == "1,250" and charts.number(0.01423) == "0.0142" and charts.number(28.46) == "28.5"


def test_the_timeline_draws_each_bottom_large():
    from app_pages import _charts as charts
    from app_pages import _style as style

    counts = np.array([[10, 0]] * 30 + [[5, 5]] * 3 + [[10, 0]] * 20)
    result = registry.get("btt").label(counts, epsilon=1.0, delta=1e-5, T=2, rng=0)
    fig = charts.timeline_figure(result)
    bottom = next(t for t in fig.data if t.name.startswith("⊥"))
    assert bottom.marker.color == style.OUTCOMES["⊥"]["color"] and bottom.marker.size == style.SCREEN.rare_marker
    assert len(bottom.x) == result.n_bottom


def test_the_certified_test_draws_the_budget_and_where_the_run_fell_in_its_outcome_colour():
    from app_pages import _charts as charts
    from app_pages import _style as style
    from core.mechanisms.certified import certified_test_picture
    from core.mechanisms.certified_params import CertifiedParameters

    counts = np.array([[390, 10]] * 200)  # 400 agreeing teachers: the test passes
    for epsilon in (8.0, 0.5):
        result = registry.get("certified-gnmax").label(counts, epsilon=epsilon, delta=1e-5, rng=1)
        params = CertifiedParameters(**{f: result.params[f] for f in CertifiedParameters.__dataclass_fields__})
        pic = certified_test_picture(counts, params, draws=200, rng=0)
        value, passed = float(result.params["test_value"]), bool(result.params["passed"])
        fig = charts.certified_test_figure(pic, value, passed)
        budget, run = fig.layout.shapes
        assert budget.x0 == pic.budget and budget.line.dash == "dash" and budget.line.color == "#000000"
        outcome = "answered right" if passed else "⊥"
        assert run.x0 == value and run.line.color == style.OUTCOMES[outcome]["color"]
        said = [a.text for a in fig.layout.annotations]
        assert said[0] == f"budget B = {pic.budget:.3g}"
        assert said[1] == f"this run: {value:.3g} ({'released' if passed else 'nothing released'})"
        assert fig.layout.font.size == style.SCREEN.font and all(a.font.size == style.SCREEN.font
                                                                  for a in fig.layout.annotations)
        assert (value <= pic.budget) == passed  # the picture's line and the run agree on the side


def _specs(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def test_the_projector_setting_enlarges_the_charts_and_shows_the_ledger_banner(lab):
    from app_pages import _style as style

    at = lab()
    at.switch_page("app_pages/3_Private_labeling.py").run()
    assert not at.exception, at.exception
    assert not [m for m in at.markdown if "ledger-banner" in m.value]
    screen = _specs(at)
    at.toggle(key=style.PROJECTOR_KEY).set_value(True).run()
    assert not at.exception, at.exception
    banner = [m.value for m in at.markdown if "ledger-banner" in m.value]
    assert len(banner) == 1 and "Lesson ledger: ε 4 over 1 run" in banner[0]  # the lesson ledger's own line
    big = _specs(at)
    assert len(big) == len(screen) >= 2
    for before, after in zip(screen, big):
        assert before["layout"]["font"]["size"] == style.SCREEN.font
        assert after["layout"]["font"]["size"] == style.PROJECTOR.font
        assert after["layout"]["xaxis"]["tickfont"]["size"] > before["layout"]["xaxis"]["tickfont"]["size"]
    timeline = next(s for s in big if any(str(t.get("name", "")).startswith("⊥") for t in s["data"]))
    bottom = next(t for t in timeline["data"] if t["name"].startswith("⊥"))
    assert bottom["marker"]["size"] == style.PROJECTOR.rare_marker
    assert any("font-size" in h.proto.body for h in at.get("html"))  # the larger type
    # the banner stands above the page's title
    main = list(at.main)
    first_banner = next(i for i, e in enumerate(main) if "ledger-banner" in str(getattr(e, "value", "")))
    title = next(i for i, e in enumerate(main) if type(e).__name__ == "Title")
    assert first_banner < title


def test_the_projector_and_the_demo_seed_stay_on_through_a_lecture_preset(lab):
    """A preset's click switches page, which clears every widget's state: the switches the lecturer
    turned on must still be on, on the page the preset opens and after."""
    from app_pages import _style as style

    at = lab(demo=None)  # the server's default: the demo seed off
    assert at.session_state["demo_seed"] is False
    at.toggle(key="demo_seed").set_value(True).run()
    at.toggle(key=style.PROJECTOR_KEY).set_value(True).run()
    at.button(key="preset_b").click().run()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["Ensemble of teachers"]
    for _ in range(2):  # on the page the preset opened, and on the next run
        assert at.session_state["demo_seed"] is True and at.session_state[style.PROJECTOR_KEY] is True
        assert at.toggle(key="demo_seed").value and at.toggle(key=style.PROJECTOR_KEY).value
        assert [m for m in at.markdown if "ledger-banner" in m.value]
        at.run()
    at.toggle(key=style.PROJECTOR_KEY).set_value(False).run()  # and off stays off
    at.button(key="preset_c").click().run()
    assert not at.exception, at.exception
    assert at.session_state[style.PROJECTOR_KEY] is False and at.session_state["demo_seed"] is True
    assert not [m for m in at.markdown if "ledger-banner" in m.value]
