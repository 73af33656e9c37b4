"""The Sweeps page (AppTest, demo mode, default data): δ sweepable, the k sweep's teacher quality taken
from the real teachers and said on the page, a model trained with DP on the rows included, every
line in its mechanism's style with its bound in the one bound style."""

from __future__ import annotations

import json

from app_pages import _style as style

SWEEPS = "app_pages/9_Sweeps.py"


def figures(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def test_sweeps_over_delta_k_and_with_dp_training(lab):
    at = lab()
    at.switch_page(SWEEPS).run()
    assert not at.exception, at.exception
    assert set(at.selectbox(key="w_sweep_vary").options) >= {"ε", "δ", "cutoff T (BTT's family)", "teachers k"}
    assert "DP logistic regression" in at.multiselect(key="w_sweep_mechanisms").options

    # every measured line in its mechanism's style; bounds thin and dotted in the same colour
    for fig in figures(at):
        for trace in fig["data"]:
            name = trace["name"].removeprefix("bound: ")
            mechanism = next(n for n in ("btt", "lnmax", "gnmax", "confident-gnmax") if style.short_title(n) == name)
            look = style.mechanism_style(mechanism)
            assert trace["line"]["color"] == look.color
            if trace["name"].startswith("bound: "):
                assert trace["line"]["dash"] == style.BOUND_DASH and trace["marker"]["symbol"] == style.BOUND_SYMBOL
            else:
                assert trace["line"]["dash"] == look.dash and trace["marker"]["symbol"] == look.symbol
        assert fig["layout"]["legend"]["y"] < 0  # below the plot

    at.selectbox(key="w_sweep_vary").set_value("delta").run()
    assert not at.exception, at.exception
    answered = figures(at)[0]
    assert answered["layout"]["xaxis"]["title"]["text"] == "δ"
    assert all(len(t["x"]) == 6 for t in answered["data"] if not t["name"].startswith("bound"))

    at.selectbox(key="w_sweep_vary").set_value("k").run()
    assert not at.exception, at.exception
    said = " ".join(i.value for i in at.info)
    assert "measured from your 400 real teachers" in said and "0.85" not in said
    assert not any(s.label.startswith("Assumed") for s in at.slider)  # no hidden or assumed accuracy on teaching data

    at.multiselect(key="w_sweep_mechanisms").set_value(["btt", "dp-logistic"]).run()
    assert not at.exception, at.exception
    assert any("DP logistic regression: trained on the private rows, it has no teachers" in c.value for c in at.caption)
    at.selectbox(key="w_sweep_vary").set_value("epsilon").run()
    assert not at.exception, at.exception
    names = [t["name"] for t in figures(at)[0]["data"]]
    assert "DP logistic regression" in names and "bound: DP logistic regression" not in names
    dp = next(t for t in figures(at)[0]["data"] if t["name"] == "DP logistic regression")
    assert dp["line"]["color"] == style.mechanism_style("dp-logistic").color and set(dp["y"]) == {1.0}
    assert any("trained 3 times per point" in c.value for c in at.caption)


COMPARE = "app_pages/5_Compare.py"


def test_compare_chooses_its_mechanisms_says_which_lines_coincide_and_draws_the_rare_outcomes(lab):
    at = lab()
    at.switch_page(COMPARE).run()
    at.button(key="compare_go").click().run()  # the comparison's price first, then the click
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    rows = list(table["mechanism"])
    assert "BTT, hard labels, tight calibration" in rows and "BTT, hard labels, paper's calibration" in rows
    chooser = at.multiselect(key="w_compare_shown")
    assert chooser.value == rows
    curve = figures(at)[0]
    assert [t["name"] for t in curve["data"]] == rows
    looks = {(t["line"]["color"], t["line"]["dash"], t["marker"]["symbol"]) for t in curve["data"]}
    assert len(looks) == len(rows)  # every row its own look
    assert curve["layout"]["legend"]["y"] < 0
    together = [c.value for c in at.caption if "lie on one line: all answered." in c.value]
    assert together and "PATE LNMax" in together[0]
    # the rare outcomes, large, in their colours; the counts are the table's
    rare = next(f for f in figures(at) if any(t["name"] == "⊥" for t in f["data"]))
    bottom = next(t for t in rare["data"] if t["name"] == "⊥")
    assert bottom["marker"]["color"] == style.OUTCOMES["⊥"]["color"]
    assert bottom["marker"]["size"] == style.SCREEN.rare_marker
    assert sorted(bottom["x"]) == sorted(int(v) for v in table["⊥"])
    # no cell reads None
    for frame in (e.value for e in at.dataframe):
        assert not frame.astype(str).isin(["None", "nan"]).any().any()

    chooser.set_value(rows[:2]).run()
    assert not at.exception, at.exception
    assert [t["name"] for t in figures(at)[0]["data"]] == rows[:2]
    assert list(at.dataframe[0].value["mechanism"]) == rows  # the table keeps every row


def test_btt_bound_is_drawn_only_where_theorem_3_2_holds(lab):
    """BTT's error bound (Theorem 3.2) needs k and T far above the sweep's: no line where its conditions
    fail, and a sentence saying which condition fails."""
    at = lab()
    at.switch_page(SWEEPS).run()
    assert not at.exception, at.exception
    for vary in ("epsilon", "k"):
        at.selectbox(key="w_sweep_vary").set_value(vary).run()
        assert not at.exception, at.exception
        wrong = figures(at)[2]
        assert "bound: BTT" not in [t["name"] for t in wrong["data"]], vary
        said = " ".join(c.value for c in at.caption)
        assert "Theorem 3.2's error bound is not drawn" in said and "number of teachers k: it needs k ≥" in said, said


def test_sweeps_show_the_queries_not_processed(lab):
    """At low ε BTT stops after T ⊥: the queries after it are not processed, drawn and said."""
    at = lab()
    at.switch_page(SWEEPS).run()
    assert not at.exception, at.exception
    charts = figures(at)
    assert len(charts) == 4
    btt = next(t for t in charts[3]["data"] if t["name"] == style.short_title("btt"))
    assert btt["y"][0] > 0.5  # ε = 0.5: BTT halts early, most queries not processed
    answered = next(t for t in charts[0]["data"] if t["name"] == style.short_title("btt"))
    bottom = next(t for t in charts[1]["data"] if t["name"] == style.short_title("btt"))
    for a, b, u in zip(answered["y"], bottom["y"], btt["y"]):
        assert abs(a + b + u - 1.0) < 1e-9
    said = " ".join(c.value for c in at.caption)
    assert "not processed" in said and "BTT stops after T ⊥" in said, said
