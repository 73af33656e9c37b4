"""The lesson's ledger that teaches composition, bounds inside their conditions, the certified preset,
and the lecture's presets, driven with Streamlit's AppTest in demo mode on the default data."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from core.mechanisms import registry

PAGES = {
    "Private labeling": "app_pages/3_Private_labeling.py",
    "Bounds": "app_pages/4_Bounds.py",
    "Compare": "app_pages/5_Compare.py",
}
LEDGER = re.compile(r"Your lesson's ledger: ε ([0-9.,e+]+) over (\d+) runs?\.")


def go(at, page: str):
    at.switch_page(PAGES[page]).run()
    assert not at.exception, (page, at.exception)
    return at


def texts(elements) -> list[str]:
    return [e.value for e in elements]


def ledger(at) -> tuple[float, int]:
    """The sidebar's ledger line: (ε, runs)."""
    found = [LEDGER.search(t) for t in texts(at.sidebar.markdown)]
    hit = next(f for f in found if f)
    return float(hit.group(1).replace(",", "")), int(hit.group(2))


def test_a_control_that_spends_per_query_shows_its_total_price_before_the_click(lab):
    at = go(lab(), "Private labeling")
    eps, runs = ledger(at)
    radio = at.radio(key="w_privacy_mechanism")
    captions = list(radio.proto.captions)
    a_stab = radio.options.index(registry.get("a-stab").title)
    assert captions[a_stab] == "ε 4 on each query × 2,000 queries = ε 8,000 per run", captions
    btt = radio.options.index("BTT, hard labels")
    assert captions[btt] == "ε 4 per run"
    assert ledger(at) == (eps, runs)  # shown before anything ran
    radio.set_value("a-stab").run()
    warned = [t for t in texts(at.warning) if t.startswith("**ε is spent on each query here.**")]
    assert warned and "ε 4 on each query × 2,000 queries = ε 8,000 per run" in warned[0]
    after, n = ledger(at)
    assert n == runs + 1 and after >= 8000


def test_a_bound_outside_its_conditions_is_replaced_by_the_sentence_that_says_which_fails(lab):
    at = go(lab(), "Private labeling")  # BTT at T = 5 with 400 teachers: outside Theorem 3.2
    said = [t for t in texts(at.warning) if t.startswith("Theorem 3.2 does not apply to this run")]
    assert said, texts(at.warning)
    assert "cutoff T: it needs T ≥" in said[0] and "this run has T = 5" in said[0] and "raise the cutoff T to" in said[0]
    assert "number of teachers k: it needs k ≥" in said[0] and "this run has k = 400" in said[0]
    assert not [m for m in at.main.metric if m.label.startswith("Theorem 3.2 bound")]
    go(at, "Bounds")
    assert any(t.startswith("Theorem 3.2 does not apply to this run") for t in texts(at.warning))
    # no measured point over the curves whose constants are arbitrary
    for chart in at.get("plotly_chart"):
        spec = chart.proto.spec
        assert not ("(shape)" in spec and "measured" in spec), spec[:300]


def test_compare_says_what_it_costs_first_and_waits_for_a_click(lab):
    at = go(lab(), "Compare")
    eps, runs = ledger(at)
    price = [t for t in texts(at.info) if "new runs on the private rows" in t]
    assert price and "Nothing has run yet." in price[0], texts(at.info)
    n = int(re.search(r"makes (\d+) new runs", price[0]).group(1))
    assert n > 20 and not at.dataframe  # nothing ran: no table
    assert ledger(at) == (eps, runs)
    at.button(key="compare_go").click().run()
    assert not at.exception and at.dataframe
    total, runs_after = ledger(at)
    assert runs_after == runs + n
    promised = float(re.search(r"to at most ε ([0-9.,]+)", price[0]).group(1).replace(",", ""))
    assert total <= promised * (1 + 1e-3)
    # a lecturer who wants it at once: the switch runs a new ε without asking (still charged)
    at.toggle(key="w_lesson_run_without_asking").set_value(True).run()
    at.slider(key="w_privacy_epsilon").set_value(3.0).run()
    assert not at.exception and not [t for t in texts(at.info) if "Nothing has run yet." in t]
    assert ledger(at)[1] > runs_after
    at.toggle(key="w_lesson_run_without_asking").set_value(False).run()
    at.slider(key="w_privacy_epsilon").set_value(5.0).run()
    assert [t for t in texts(at.info) if "Nothing has run yet." in t]


def test_a_demonstration_is_not_charged_to_the_lesson_and_says_so(lab):
    at = go(lab(), "Private labeling")
    eps, runs = ledger(at)
    at.sidebar.toggle(key="_demonstration").set_value(True).run()
    assert any(t.startswith("**Demonstration: not charged to the lesson.**") for t in texts(at.warning))
    at.slider(key="w_privacy_epsilon").set_value(2.5).run()
    assert not at.exception
    assert ledger(at) == (eps, runs)  # the lesson's total did not move
    assert any(t.startswith("Not charged to the lesson so far: 1 run") for t in texts(at.sidebar.caption))
    at.sidebar.toggle(key="_demonstration").set_value(False).run()
    assert not any(t.startswith("**Demonstration") for t in texts(at.warning))
    assert ledger(at)[1] == runs + 1  # the same setting shown in the lesson is a new run of the lesson


def test_a_real_job_offers_no_demonstration(lab):
    at = lab()
    at.radio(key="w_data_ui_source").set_value("Bundled two-file job").run()
    assert not at.exception
    assert not [t for t in at.sidebar.toggle if t.key == "_demonstration"]
    at.session_state["_demonstration"] = True  # set by hand: still no banner, and the flag is dropped
    at.run()
    assert not any(t.startswith("**Demonstration") for t in texts(at.warning))
    assert not at.session_state["_demonstration"]


def test_the_ledger_explains_how_its_total_grew(lab):
    at = go(lab(), "Private labeling")
    at.radio(key="w_privacy_mechanism").set_value("gnmax").run()
    at.slider(key="w_privacy_epsilon").set_value(4.1).run()
    at.radio(key="w_privacy_mechanism").set_value("lnmax").run()
    grew = next(e for e in at.expander if e.label == "How your total grew, run by run")
    lines = [t for t in texts(grew.markdown) if t.startswith("- Run ")]
    assert len(lines) == 4 and lines[-1].startswith("- Run 1 · BTT, hard labels at ε 4")
    step = re.compile(r"its own ε ([0-9.]+) → total ε ([0-9.]+) \(\+([0-9.]+)\)")
    for line in lines:
        own, _, growth = (float(x) for x in step.search(line).groups())
        assert growth <= own * (1 + 1e-3) + 1e-3, line  # a run never adds more than its own ε
    assert "first of the Gaussian-noise runs" in lines[-2]  # GNMax at 4: a new kind, added in full
    assert "Less than its own ε" in lines[0] or "Added in full" in lines[0]


def test_the_certified_preset_releases(lab):
    """The preset (default data, 400 naive-Bayes teachers, certified Confident-GNMax at ε = 8) releases its labels.

    Under the demo seed the run is one fixed draw; for any other draw the test fails with probability below 1e-6
    (computed below from the votes' NON-PRIVATE cost and sensitivity): the stated false-failure rate.
    """
    from app_pages import _cache
    from core.mechanisms.certified import _e_and_s, certified_pass_probability
    from core.mechanisms.certified_params import certified_parameters

    at = lab()
    at.sidebar.button(key="preset_certified").click().run()
    assert not at.exception and at.title[0].value == "Private labeling"
    assert at.session_state["privacy"]["mechanism"] == "certified-gnmax"
    released = [t for t in texts(at.success) if t.startswith("**Released.**")]
    assert released, texts(at.warning)
    metrics = {m.label: m.value for m in at.main.metric}
    assert int(metrics["Answered"]) > 0 and int(metrics["Not processed"]) == 0
    ens = next(e for e in _cache._ensembles().items.values() if e.teachers.k == 400)
    m, c = ens.votes.shape
    params = certified_parameters(epsilon=8.0, delta=1e-5, m=m, k=400, n_classes=c)
    assert certified_pass_probability(*_e_and_s(ens.votes, params), params) >= 1 - 1e-6


@pytest.mark.slow
def test_each_lecture_step_is_one_click_away(lab):
    from app_pages._presets import PRESETS

    at = lab()
    for key, preset in PRESETS.items():
        at.sidebar.button(key=f"preset_{key}").click().run()
        assert not at.exception, (key, at.exception)
        assert any(t.startswith(f"**{preset['title']}.**") for t in texts(at.info)), key
        assert at.session_state["privacy"]["mechanism"] == preset["mechanism"]
        assert at.session_state["ensemble_cfg"]["k"] == preset["k"]
        assert at.session_state["data_cfg"]["source"] == preset["data"]["source"]


def test_the_lesson_ledger_never_grows_by_more_than_a_run_and_stays_valid():
    """The lesson's total against the library's composition, on runs of every kind (no Streamlit session needed)."""
    from core import pipeline
    from core.ledger import compose_entries
    from core.mechanisms import registry
    from app_pages._lesson_ledger import LessonLedger, _alone
    from app_pages._session import default_privacy

    rng = np.random.default_rng(5)
    names = [n for n in registry.names() if registry.get(n).takes_epsilon]
    led = LessonLedger("test")
    entries = []
    last = 0.0
    for i in range(24):
        name = names[int(rng.integers(len(names)))]
        mech = registry.get(name)
        asked = {k: v for k, v in dict(default_privacy(), epsilon=float(rng.choice([0.5, 2.0, 4.0, 16.0]))).items()
                 if k in mech.parameter_names or k == "epsilon"}
        try:
            entry = pipeline.ledger_entry(name, asked, 500)
        except Exception:  # settings a mechanism refuses
            continue
        led.charge(entry)
        entries.append(entry)
        if rng.uniform() < 0.6 or i == 23:  # a view ends here
            total = led.total()
            together = compose_entries(entries)
            assert total.epsilon <= together.epsilon * (1 + 1e-9)  # never looser than composing all
            assert total.epsilon >= max(_alone(e).epsilon for e in entries) * (1 - 1e-9)
            assert total.delta >= together.delta * (1 - 1e-12)
            start = max([p for p in led.known_points() if p < len(entries)], default=0)
            own = math.fsum(_alone(e).epsilon for e in entries[start:])
            assert total.epsilon - last <= own * (1 + 1e-9) + 1e-9
            last = total.epsilon
