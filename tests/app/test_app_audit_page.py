"""The Privacy audit page, driven headlessly with Streamlit's AppTest.

The audits here run in the app's reproducible demo mode (a fixed public seed), so the
verdicts are deterministic: the real BTT passes (its lower bound ≈ 0.37 against a claim
of 0.994 at 20,000 trials), the printed-distance teaching variant is caught (≈ 1.6
against 1.0).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "app_pages" / "8_Privacy_audit.py")


@pytest.fixture
def page(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))  # `from app_pages import _session`, as under `streamlit run app.py`
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["demo_seed"] = True
    at.run()
    assert not at.exception, at.exception
    return at


def _metrics(at):
    return {m.label: m.value for m in at.metric}


def test_page_renders_with_a_prompt(page):
    assert page.title[0].value == "Privacy audit"
    assert any("Run the audit" in i.value for i in page.info)
    assert page.selectbox(key="audit_mechanism").value == "btt"  # a real mechanism, never the teaching one
    assert not page.metric


def test_runs_a_small_audit_and_shows_the_bound_next_to_the_claim(page):
    page.select_slider(key="audit_trials").set_value(20_000)
    page.button(key="audit_run").click().run()
    assert not page.exception, page.exception
    m = _metrics(page)
    assert m["Claimed ε"] == "0.994"
    bound = float(m["Audited ε ≥ (99.0% confidence)"])
    assert 0.0 <= bound <= 0.994
    assert m["Trials per input"] == "20,000"
    assert page.success and not page.error
    assert len(page.get("plotly_chart")) == 1
    assert not page.get("progress")  # the progress bar is removed when done


def test_teaching_variant_is_labelled_and_caught(page):
    page.selectbox(key="audit_mechanism").set_value("printed-distance-a-stab").run()
    assert any("Teaching example of a leak" in w.value for w in page.warning)
    page.select_slider(key="audit_trials").set_value(20_000)
    page.button(key="audit_run").click().run()
    assert not page.exception, page.exception
    m = _metrics(page)
    assert float(m["Audited ε ≥ (99.0% confidence)"]) > float(m["Claimed ε"]) == 1.0
    assert any("Violation" in e.value for e in page.error)


@pytest.mark.parametrize("mechanism", ["a-stab", "baseline", "btt-soft", "lnmax", "printed-distance-btt"])
def test_every_mechanism_runs(page, mechanism):
    page.selectbox(key="audit_mechanism").set_value(mechanism).run()
    page.select_slider(key="audit_trials").set_value(20_000)
    page.button(key="audit_run").click().run()
    assert not page.exception, page.exception
    assert "Claimed ε" in _metrics(page)


def test_result_stays_when_settings_change(page):
    page.select_slider(key="audit_trials").set_value(20_000)
    page.button(key="audit_run").click().run()
    before = _metrics(page)
    page.slider(key="audit_epsilon").set_value(2.0).run()
    assert not page.exception
    assert _metrics(page) == before
    assert any("Settings changed" in c.value for c in page.caption)


def test_page_is_reachable_through_the_app_navigation(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("app_pages/8_Privacy_audit.py").run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Privacy audit"
