"""The DP-training routes in the app: Compare sets them beside the ensemble's mechanisms at
the same (ε, δ), and the Private labeling page runs them like any mechanism (AppTest)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
M = 2000  # public queries of the default dataset


def test_compare_shows_dp_training_beside_the_mechanisms(lab):
    from app_pages._style import short_title

    at = lab()
    at.switch_page("app_pages/5_Compare.py").run()
    assert not at.exception, at.exception
    at.button(key="compare_go").click().run()  # the comparison's price first, then the click
    table = at.dataframe[0].value
    rows = {str(r["mechanism"]): r for _, r in table.iterrows()}
    for name in ("dp-logistic", "dp-naive-bayes"):
        title = short_title(name)  # the page's rows name mechanisms by their short titles
        hits = [label for label in rows if label.startswith(title)]
        assert hits, (title, list(rows))
        row = rows[hits[0]]
        assert int(row["answered"]) == M and int(row["⊥"]) == 0  # one model labels every query
        assert float(row["ε spent"]) == pytest.approx(4.0)  # the page's default ε, whatever m
    assert any(str(label).startswith("PATE 2018 GNMax") for label in rows)  # beside the ensemble's
    accuracy = at.dataframe[1].value  # NON-PRIVATE diagnostics on the held-out public labels
    dp = accuracy[accuracy["mechanism"].astype(str).str.startswith(short_title("dp-logistic"))]
    assert float(dp["accuracy"].iloc[0]) > 0.8


def test_private_labeling_page_runs_the_dp_logistic_regression(lab):
    from core.mechanisms import registry

    at = lab()
    at.switch_page("app_pages/3_Private_labeling.py").run()
    assert not at.exception, at.exception
    at.radio(key="w_privacy_mechanism").set_value("dp-logistic").run()
    assert not at.exception, at.exception
    m = {x.label: x.value for x in at.main.metric}
    assert int(m["Answered"]) == M
    assert registry.get("dp-logistic").title in " ".join(x.value for x in at.sidebar.markdown)


@pytest.mark.parametrize("mechanism", ["dp-logistic", "dp-naive-bayes"])
def test_privacy_audit_page_audits_the_dp_training_routes(monkeypatch, mechanism):
    monkeypatch.syspath_prepend(str(ROOT))
    at = AppTest.from_file(str(ROOT / "app_pages" / "8_Privacy_audit.py"), default_timeout=120)
    at.session_state["demo_seed"] = True
    at.run()
    assert not at.exception, at.exception
    at.selectbox(key="audit_mechanism").set_value(mechanism).run()
    at.select_slider(key="audit_trials").set_value(20_000)
    at.button(key="audit_run").click().run()
    assert not at.exception, at.exception
    m = {x.label: x.value for x in at.metric}
    assert float(m["Audited ε ≥ (99.0% confidence)"]) <= float(m["Claimed ε"])
    assert not any("Violation" in e.value for e in at.error)
