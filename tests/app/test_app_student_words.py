"""Student words everywhere: no internal names on any page, on the default data and on every bundled
teaching set (AppTest, demo mode).

Every page is opened on each data set; on the default data also Private labeling with every
registered mechanism, the Privacy audit with every mechanism it audits, and Student & export after
a release (its report included).  Everything a reader sees is scanned — titles, markdown, captions,
alerts, metric labels and values, widget labels, options and help, code blocks (the report), the
charts' names and axis titles, and every table cell — for

* the internal names a lecturer found on the pages (:data:`CODE_WORDS`),
* a number in scientific notation above one (``1.25e+03``: a student reads 1,250),
* a table cell that shows ``None`` or ``nan`` (a missing value is a dash).

Formulas (LaTeX) are not scanned: their symbols are captioned beside them.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from test_app_product_text import visible_text

PAGES = {
    "Data": "app_pages/1_Data.py",
    "A leak": "app_pages/7_A_leak.py",
    "Ensemble": "app_pages/2_Ensemble.py",
    "Private labeling": "app_pages/3_Private_labeling.py",
    "One query": "app_pages/7_One_query.py",
    "Bounds": "app_pages/4_Bounds.py",
    "Sweeps": "app_pages/9_Sweeps.py",
    "Compare": "app_pages/5_Compare.py",
    "Student & export": "app_pages/6_Student_and_export.py",
    "Privacy audit": "app_pages/8_Privacy_audit.py",
}
# mnist_5k is left out of the word scan: its pages say what digits' say (the same ten class names, the
# same sentences); its width (784 columns) is what differs, and tests/app/test_app_lecture.py reads its
# pages for that. It was the scan's slowest case (about 30 s on one worker).
TEACHING_SETS = ["breast_cancer", "digits", "iris", "wine"]

CODE_WORDS = (
    "A_stab on each query", "Confident-GNMax (fixed)", "(fixed)", "(gaussian)", "(tight)", "(paper)",
    "declares no picture", "model(s)", "(ε/1, δ/1)", "δ_svt", "δ_release", "DLap(", "pure:kov-exact",
    "kov-exact", "Answered then bottom", "Top loses vote", "All queries move", "Mixed directions",
)
"""Internal names seen on the pages, each of which now has its words."""

SCIENTIFIC = re.compile(r"(?<![\w.])[1-9](?:\.\d+)?e\+\d+")


def _chart_text(spec: dict) -> list[str]:
    out = [str(t.get("name", "")) for t in spec.get("data", [])]
    out += [str(t) for tr in spec.get("data", []) for t in (tr.get("text") or [] if isinstance(tr.get("text"), list) else [])]
    lay = spec.get("layout", {})
    for key, axis in lay.items():
        if key.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
            title = axis.get("title")
            out.append(str(title.get("text", "")) if isinstance(title, dict) else str(title or ""))
            out += [str(t) for t in axis.get("ticktext", []) or []]
    title = lay.get("title")
    out.append(str(title.get("text", "")) if isinstance(title, dict) else str(title or ""))
    out += [str(a.get("text", "")) for a in lay.get("annotations", []) or []]
    return [t for t in out if t.strip()]


def seen(at) -> tuple[list[str], list[str]]:
    """Every text a reader sees, and the problems of the tables (cells that read None or nan)."""
    texts = visible_text(at)  # the page's words (test_app_product_text), then its code blocks and charts
    texts += [c.proto.code_text for c in at.get("code")]
    for chart in at.get("plotly_chart"):
        texts += _chart_text(json.loads(chart.proto.spec))
    tables = []
    for frame in at.dataframe:
        df = frame.value
        texts += [str(c) for c in df.columns]
        missing = df.isna() | df.astype(str).isin(["None", "nan", "NaN"])
        if missing.any().any():
            where = [(str(df.iloc[i, 0]), str(df.columns[j])) for i, j in zip(*np.nonzero(missing.to_numpy()))]
            tables.append(f"table cells that read None: {where[:5]}")
    return texts, tables


def problems(at, where: str) -> list[str]:
    texts, tables = seen(at)
    found = [f"{where}: {w!r} in {t[:140]!r}" for t in texts for w in CODE_WORDS if w in t]
    found += [f"{where}: {m.group()!r} in {t[:140]!r}" for t in texts for m in SCIENTIFIC.finditer(t)]
    return found + [f"{where}: {t}" for t in tables]


def test_the_scan_finds_what_it_looks_for():
    assert [m.group() for m in SCIENTIFIC.finditer("Γ = 1.25e+03, δ = 1e-05, 4e+00, x2e+03")] == ["1.25e+03", "4e+00"]
    assert _chart_text({"data": [{"name": "BTT (tight)"}], "layout": {"xaxis": {"title": {"text": "ε"}},
                                                                      "annotations": [{"text": "Γ = 1.25e+03"}]}}) \
        == ["BTT (tight)", "ε", "Γ = 1.25e+03"]


def visit_every_page(at, data: str) -> list[str]:
    found = []
    for title, path in PAGES.items():
        at.switch_page(path).run()
        assert not at.exception, (data, title, at.exception)
        found += problems(at, f"{title} on {data}")
        if any(b.key == "compare_go" for b in at.button):  # Compare's price first; then its runs, scanned too
            at.button(key="compare_go").click().run()
            assert not at.exception, (data, title, at.exception)
            found += problems(at, f"{title} on {data}, after its runs")
    return found


@pytest.mark.slow
@pytest.mark.parametrize("data", ["default"] + TEACHING_SETS)
def test_no_code_words_on_any_page(lab, data):
    at = lab()
    if data != "default":
        at.radio(key="w_data_ui_source").set_value("Bundled dataset").run()
        at.selectbox(key="w_data_ui_name").set_value(data).run()
        assert not at.exception, at.exception
    found = visit_every_page(at, data)
    assert not found, "\n".join(found)


@pytest.mark.slow
def test_no_code_words_for_any_mechanism(lab):
    """Each mechanism's own sentences (its accounting, its test picture) and the audit's pairs."""
    from core import audit as A
    from core.mechanisms import registry

    at = lab()
    found = []
    at.switch_page(PAGES["Private labeling"]).run()
    offered = at.radio(key="w_privacy_mechanism").options  # the titles of the mechanisms this data offers
    for name in registry.names():
        if registry.get(name).title not in offered:
            continue
        at.radio(key="w_privacy_mechanism").set_value(name).run()
        assert not at.exception, (name, at.exception)
        found += problems(at, f"Private labeling with {name}")
    at.switch_page(PAGES["Student & export"]).run()
    at.button(key="release").click().run()
    assert not at.exception, at.exception
    found += problems(at, "Student & export after a release")
    at.switch_page(PAGES["Privacy audit"]).run()
    for name in {**A.audit_mechanisms(), **A.TEACHING_MECHANISMS}:
        at.selectbox(key="audit_mechanism").set_value(name).run()
        assert not at.exception, (name, at.exception)
        found += problems(at, f"Privacy audit of {name}")
    assert not found, "\n".join(found)
