"""The app is generated from the mechanism registry and runs through the one pipeline.

* A toy mechanism registered at run time appears in the Private labeling page's selector,
  with its parameter widget generated from its ``Parameter``, and runs.
* For every registered mechanism, the app and ``core.pipeline.resolve``/``privacy_map``
  choose the same parameters and the same ε for the same request.
* The one patch of Streamlit's private ``PagesManager`` (app_pages/_session.py) still finds
  what it patches, within the Streamlit versions pinned in pyproject.toml.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
LABELING = "app_pages/3_Private_labeling.py"
MECHANISM = "w_privacy_mechanism"
M = 2000  # public queries of the default dataset


@pytest.fixture
def labeling_page(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    at = AppTest.from_file(APP, default_timeout=300)
    at.session_state["demo_seed"] = True
    at.run()
    assert not at.exception, at.exception
    at.switch_page(LABELING).run()
    assert not at.exception, at.exception
    return at


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.main.metric}


# ----------------------------------------------------------------------------- a toy mechanism


def _toy_label(counts, *, spread, rng=None):
    from core import noise
    from core.mechanisms import LabelingResult

    counts = np.asarray(counts, dtype=float)
    gen = noise.check_rng(rng)
    labels = np.argmax(counts + gen.laplace(0.0, spread, size=counts.shape), axis=1).astype(np.int64)
    return LabelingResult(mechanism="toy-max", labels=labels, scores=None, n_answered=len(labels), n_bottom=0,
                          n_unprocessed=0, halted_at=None, epsilon=2.0 / spread, delta=0.0,
                          params={"spread": spread, "m": len(labels)}, accounting="toy: 2/spread")


def _toy_map(m, *, spread):
    from core.accounting import PrivacyGuarantee

    return PrivacyGuarantee(2.0 / spread, 0.0, "toy", "2/spread")


@pytest.fixture
def toy():
    from core.mechanisms import registry
    from core.mechanisms.registry import Mechanism, Parameter

    registry.names()  # the built-in mechanisms first
    registry.register(Mechanism(
        name="toy-max", title="Toy max", description="argmax of Laplace-noised counts (a test mechanism).",
        parameters=(Parameter("spread", "float", 1.0, "spread", "help", low=0.1, high=5.0),),
        label=_toy_label, privacy_map=_toy_map,
        explanation="**Toy max** adds noise of scale *spread* to each count.",
    ))
    try:
        yield "toy-max"
    finally:
        registry.unregister("toy-max")


def test_a_registered_mechanism_appears_in_the_selector_and_runs(toy, labeling_page):
    at = labeling_page
    at.run()  # the selector is read from the registry on every run
    assert "Toy max" in at.radio(key=MECHANISM).options
    at.radio(key=MECHANISM).set_value(toy).run()
    assert not at.exception, at.exception
    assert any("**Toy max** adds noise" in t.value for t in at.markdown)
    spread = at.slider(key="w_privacy_spread")  # generated from Parameter("spread", "float", ...)
    assert spread.label == "spread" and spread.value == 1.0 and (spread.min, spread.max) == (0.1, 5.0)
    m = metrics(at)
    assert m["Answered"] == str(M) and m["Guarantee ε"] == "2"
    spread.set_value(4.0).run()
    assert not at.exception, at.exception
    assert metrics(at)["Guarantee ε"] == "0.5"
    assert "Toy max" in " ".join(t.value for t in at.sidebar.markdown)
    # Compare lists it too (it takes no ε: said why)
    at.switch_page("app_pages/5_Compare.py").run()
    assert not at.exception, at.exception
    assert any("Toy max is not compared: it takes no ε." in c.value for c in at.caption)


# ----------------------------------------------------------------------------- the app and the pipeline agree


def _request(name: str) -> dict:
    """The request of a new session for ``name``: ε = 4 and the registered defaults."""
    from core.mechanisms import registry

    mech = registry.get(name)
    out = {p.name: p.default for p in mech.parameters if p.name not in mech.derived and p.default is not None}
    if mech.takes_epsilon:
        out["epsilon"] = 4.0
    return out


def test_the_app_and_the_pipeline_choose_the_same_parameters_and_epsilon(labeling_page):
    from core import pipeline
    from core.mechanisms import registry

    at = labeling_page
    names = registry.names()
    assert at.radio(key=MECHANISM).options == [registry.get(n).title for n in names]
    for name in names:
        at.radio(key=MECHANISM).set_value(name).run()
        assert not at.exception, (name, at.exception)
        assert at.session_state["privacy"]["mechanism"] == name
        resolved = pipeline.resolve(name, _request(name), M)
        guarantee = pipeline.privacy_map(name, _request(name), M)
        m = metrics(at)
        if "Guarantee ε" not in m:  # a run the library refused: said in place
            assert at.error, name
            continue
        assert at.json, (name, [e.value for e in at.error], m)
        shown = json.loads(at.json[0].value)
        for key, value in resolved.items():  # the page names each parameter in words ("delta release")
            if key.replace("_", " ") in shown and isinstance(value, (int, float)) and not isinstance(value, bool):
                assert shown[key.replace("_", " ")] == pytest.approx(value, rel=1e-9), (name, key)
        mech = registry.get(name)
        for d in mech.derived:  # shown beside ε, as the pipeline derives it
            label = mech.parameter(d).label
            assert any(f"{label} = {resolved[d]:.4g}" in t.value for t in at.info), (name, d, [t.value for t in at.info])
        if mech.data_dependent is None and "certified" not in name:
            assert float(m["Guarantee ε"]) == pytest.approx(guarantee.epsilon, rel=1e-3), name
        else:  # a data-dependent run may spend less than the a-priori guarantee
            assert float(m["Guarantee ε"]) <= guarantee.epsilon * (1 + 1e-3), name
        # the app asked for what the test asked the pipeline for (ε and the registered defaults)
        app_privacy = at.session_state["privacy"]
        assert {k: app_privacy[k] for k in _request(name)} == _request(name), name


# ----------------------------------------------------------------------------- no folder named pages/


def test_no_folder_named_pages_beside_the_app():
    """A ``pages/`` folder beside ``app.py`` would switch on Streamlit's old "pages folder"
    mode: a fresh server then lists every file of it in the menu (helpers included) and
    runs a page without ``app.py`` until ``st.navigation`` has run once."""
    assert not (ROOT / "pages").exists()
    assert (ROOT / "app_pages" / "_session.py").exists()


def test_no_page_calls_a_labeling_function_directly():
    # a call of a labeling (or teacher/student) function, other than through core.pipeline
    pattern = re.compile(r"(?<!pipeline\.)\b(btt_label|btt_soft_label|lnmax_label|composition_baseline_label|"
                         r"a_stab_label|train_teachers|train_student|make_pipeline|model_input|plain_numeric)\s*\(")
    offenders = [str(p.relative_to(ROOT)) for p in [*ROOT.glob("app_pages/*.py"), ROOT / "app.py"]
                 if pattern.search(p.read_text())]
    assert offenders == [], offenders
