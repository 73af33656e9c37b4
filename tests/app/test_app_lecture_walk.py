"""The lecture's presets walked as a lecturer walks them (AppTest, demo mode, default data): the release
priced before its click, Compare's priced run said in one sentence after it, plain words on Student & export,
the certified preset's two guarantees explained."""

from __future__ import annotations

import re

import pytest

from app_pages._lesson_ledger import fmt_eps


def texts(elements) -> list[str]:
    return [e.value for e in elements]


LEDGER = re.compile(r"Your lesson's ledger: ε ([0-9.,e+]+) over (\d+) runs?\.")


def ledger(at) -> tuple[float, int]:
    """The sidebar's ledger line: (ε, runs)."""
    hit = next(f for f in (LEDGER.search(t) for t in texts(at.sidebar.markdown)) if f)
    return float(hit.group(1).replace(",", "")), int(hit.group(2))


def test_the_release_states_its_price_before_the_click(lab):
    at = lab()
    at.sidebar.button(key="preset_g").click().run()
    assert not at.exception, at.exception
    button = at.button(key="release")
    assert button.label.startswith("Release (1 run, ε "), button.label
    said = " ".join(texts(at.markdown) + texts(at.caption) + texts(at.info))
    assert "your lesson's total would go from" in said, said
    before = ledger(at)
    button.click().run()
    assert not at.exception, at.exception
    after = ledger(at)
    assert after[1] == before[1] + 1


@pytest.mark.slow
def test_compare_says_what_ran_after_its_priced_run_and_offers_to_run_again(lab):
    at = lab()
    at.sidebar.button(key="preset_f").click().run()
    assert not at.exception, at.exception
    eps_before, runs_before = ledger(at)
    at.button(key="compare_go").click().run()
    assert not at.exception, at.exception
    for _ in range(2):  # right after the click, and on the next rerun
        assert not [t for t in texts(at.info) if "Nothing has run yet." in t], texts(at.info)
        assert not [b for b in at.button if b.key == "compare_go"]
        eps, runs = ledger(at)
        said = [t for t in texts(at.success) if t.startswith("**Ran ")]
        assert len(said) == 1, texts(at.success)
        n = runs - runs_before
        assert f"Ran {n} runs on the private rows" in said[0]
        assert f"your lesson's total went from ε {fmt_eps(eps_before)} to ε {fmt_eps(eps)}" in said[0]
        assert "Why less than the sum of their own εs" in said[0]
        again = [b for b in at.button if b.key.startswith("compare_again")]
        assert len(again) == 1 and again[0].label.startswith(f"Run again ({n} runs, ε "), [b.label for b in at.button]
        at.run()
        assert not at.exception, at.exception
    again[0].click().run()  # new runs, charged again
    assert not at.exception, at.exception
    assert ledger(at)[1] == runs + n
    assert [t for t in texts(at.success) if t.startswith(f"**Ran {n} runs")]


def test_student_and_export_opens_in_plain_words(lab):
    """No code comment rendered at the top of the page (a bare string in a page is drawn by Streamlit)."""
    at = lab()
    at.sidebar.button(key="preset_g").click().run()
    assert not at.exception, at.exception
    said = texts(at.markdown)
    assert not [t for t in said if "model class a DP-training route" in t or "such a run" in t], said
    assert said and said[0].startswith("The private labels can train a new model"), said[:2]


def test_no_page_holds_a_bare_string_that_streamlit_would_draw():
    """Streamlit draws a string standing alone in a page's script (its "magic"): only the module docstring may."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    found = []

    def walk(body, path, top):
        for i, node in enumerate(body):
            if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                    and isinstance(node.value.value, str) and not (top and i == 0)):
                found.append(f"{path.name}:{node.lineno}")
            if isinstance(node, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
                for part in ("body", "orelse", "finalbody"):
                    walk(getattr(node, part, []), path, False)

    for path in [root / "app.py", *sorted((root / "app_pages").glob("[0-9]*.py"))]:
        walk(ast.parse(path.read_text()).body, path, True)
    assert not found, found


def test_the_certified_preset_says_which_guarantee_holds_for_the_release(lab):
    at = lab()
    at.sidebar.button(key="preset_certified").click().run()
    assert not at.exception, at.exception
    shown = {m.label: m.value for m in at.main.metric}
    assert shown["Certified guarantee ε"] == "8"
    alone = next(k for k in shown if k.startswith("Same noise without the test"))
    said = " ".join(texts(at.caption))
    assert "Which ε holds for this release: the certified ε 8" in said, said
    assert f"ε {shown[alone]} beside it" in said and "does not cover this release" in said
    assert "the test alone costs ε 2.018" in said


def test_numbers_read_as_a_student_reads_them(lab):
    """The microscope's signed noise with a true minus sign (−, never the hyphen), and teachers of equal size
    say their rows once ("40", not "40–40")."""
    at = lab()
    at.switch_page("app_pages/7_One_query.py").run()
    assert not at.exception, at.exception
    next(b for b in at.button if b.label == "Draw the noise once").click().run()
    assert not at.exception, at.exception
    drawn = [t for t in texts(at.markdown) if t.startswith("Noise drawn on the")]
    assert drawn, texts(at.markdown)
    for text in drawn:
        assert not re.search(r"-\d", text), text
    for frame in at.dataframe:
        if "noise drawn" in frame.value.columns:
            assert not any(str(v).startswith("-") for v in frame.value["noise drawn"])
    at.switch_page("app_pages/2_Ensemble.py").run()
    assert not at.exception, at.exception
    rows = next(m.value for m in at.main.metric if m.label == "Rows per teacher")
    assert "–" not in rows and int(rows.replace(",", "")) > 0, rows


def test_bounds_log_axes_label_each_decade_only(lab):
    """Plotly's minor labels between decades (2, 5, 20, 50 …) crowd a projected log axis: one label a decade."""
    import json

    at = lab()
    at.switch_page("app_pages/4_Bounds.py").run()
    assert not at.exception, at.exception
    logs = [(axis, layout[axis]) for layout in (json.loads(c.proto.spec)["layout"] for c in at.get("plotly_chart"))
            for axis in ("xaxis", "yaxis") if layout.get(axis, {}).get("type") == "log"]
    assert logs
    assert all(a.get("dtick") == 1 for _, a in logs), logs
