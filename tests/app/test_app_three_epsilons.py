"""The three kinds of ε on the Private labeling page, each labelled (docs/design.md, "Three
kinds of ε"): the certified guarantee, the data-independent guarantee of the same noise, and
the NON-PRIVATE data-dependent diagnostic."""

from __future__ import annotations

from test_app import MECHANISM, go, metrics, set_epsilon


def test_certified_run_shows_certified_data_independent_and_data_dependent_epsilon(lab):
    at = go(lab(), "Private labeling")
    at.radio(key=MECHANISM).set_value("certified-gnmax").run()
    at = set_epsilon(at, 8.0)
    shown = metrics(at)
    assert float(shown["Certified guarantee ε"]) <= 8.0
    independent = float(shown["Same noise without the test ε"])
    assert independent > 0
    dd = [k for k in shown if k.startswith("Data-dependent ε (NON-PRIVATE")]
    assert len(dd) == 1 and float(shown[dd[0]]) < independent  # confident demo votes: far below


def test_confident_gnmax_shows_its_data_dependent_diagnostic_as_non_private(lab):
    at = go(lab(), "Private labeling")
    at.radio(key=MECHANISM).set_value("confident-gnmax").run()
    shown = metrics(at)
    assert "Guarantee ε" in shown and "Certified guarantee ε" not in shown
    assert any(k.startswith("Data-dependent ε (NON-PRIVATE") for k in shown)
