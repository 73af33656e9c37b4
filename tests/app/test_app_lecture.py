"""The lecture's pages (A leak, One query, Sweeps) on every bundled teaching set and the default data,
and the first views of the bundled teaching sets, driven with Streamlit's AppTest in demo mode."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
LECTURE = {
    "A leak": ("app_pages/7_A_leak.py", "A leak: does the model remember its rows?"),
    "One query": ("app_pages/7_One_query.py", "One query under the microscope"),
    "Sweeps": ("app_pages/9_Sweeps.py", "Sweeps against the bounds"),
}
TEACHING_SETS = ["breast_cancer", "digits", "iris", "wine", "mnist_5k"]
PAGE_SETS = TEACHING_SETS  # mnist_5k (784 columns) is the slowest: about 90 s through the three pages


def go(at: AppTest, page: str) -> AppTest:
    path, title = LECTURE[page]
    at.switch_page(path).run()
    assert not at.exception, (page, at.exception)
    assert at.title[0].value == title
    assert not at.error, (page, [e.value for e in at.error])
    return at


def texts(elements) -> list[str]:
    return [e.value for e in elements]


def bundled(at: AppTest, name: str) -> AppTest:
    at.radio(key="w_data_ui_source").set_value("Bundled dataset").run()
    at.selectbox(key="w_data_ui_name").set_value(name).run()
    assert not at.exception and f"Loaded: {name}" in texts(at.main.subheader)
    return at


def test_lecture_pages_on_the_default_data(lab):
    at = lab()
    go(at, "One query")
    # the least certain query is picked; 100 draws agree with the formula
    at.button[2].click().run()  # "Draw 100 times" (after "Pick…" and "Draw the noise once")
    assert not at.exception
    labels = {m.label for m in at.main.metric}
    assert {"Answered in 100 draws", "P(answered), formula", "Right in 100 draws", "P(right), formula"} <= labels
    assert any("as the formula says." in t for t in texts(at.caption)), texts(at.caption)
    at.button[1].click().run()  # one draw
    assert any(t.startswith("One draw:") for t in texts(at.markdown))
    # soft labels (teacher scores) and a noisy maximum under the microscope too
    for mechanism in ("btt-soft", "gnmax"):
        at.selectbox(key="w_privacy_mechanism").set_value(mechanism).run()
        assert not at.exception, (mechanism, at.exception)
        at.button[2].click().run()
        assert not at.exception and any("as the formula says." in t for t in texts(at.caption)), (mechanism, texts(at.caption))
    go(at, "Sweeps")
    assert [t.label for t in at.tabs] == ["Answered", "⊥", "Wrong labels", "Not processed"]
    at.selectbox(key="w_sweep_vary").set_value("T").run()
    assert not at.exception
    go(at, "A leak")
    labels = [m.label for m in at.main.metric]
    assert labels == ["Non-private model", "One teacher", "Published student"]
    assert any("(e^ε − 1 + 2δ)/(e^ε + 1)" in t for t in texts(at.markdown))


@pytest.mark.slow
@pytest.mark.parametrize("name", PAGE_SETS)
def test_lecture_pages_on_each_bundled_teaching_set(lab, name):
    at = bundled(lab(), name)
    for page in LECTURE:
        go(at, page)
    go(at, "One query")
    at.button[2].click().run()
    assert not at.exception and any("Answered in 100 draws" == m.label for m in at.main.metric)
    if name == "digits":  # image data: the query is shown as its picture
        assert any(t.startswith("**The query** (a ") for t in texts(at.markdown))
    if name == "digits":  # the leak is clear where a model can only know rows by heart
        go(at, "A leak")
        assert not any(t.startswith("Nothing measurable") for t in texts(at.info))


@pytest.mark.slow
@pytest.mark.parametrize("name", TEACHING_SETS)
def test_each_teaching_set_opens_with_a_readable_first_view(lab, name):
    from app_pages._lessons import LESSONS

    at = lab()
    at.radio(key="w_data_ui_source").set_value("Bundled dataset").run()  # opens breast_cancer, the first offered
    shown = texts(at.info)
    at.selectbox(key="w_data_ui_name").set_value(name).run()
    shown += texts(at.info)
    assert not at.exception and f"Loaded: {name}" in texts(at.main.subheader)
    lesson = LESSONS[name]
    assert lesson["note"] in shown, shown
    assert at.session_state["ensemble_cfg"]["k"] == lesson["k"]
    assert at.session_state["privacy"]["mechanism"] == lesson["mechanism"]
    m = {x.label: x.value for x in at.main.metric}
    assert int(m["Answered"]) > 0, m  # something is answered on the first view
    # BTT answering nothing on a small file is said plainly, with the control to move
    assert "BTT answers nothing" in lesson["note"] and "two_gaussians" in lesson["note"]
