"""The one registry and the one pipeline: a new mechanism is picked up everywhere, no module
outside core.mechanisms calls a labeling function, and every caller spends the same ε."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from core import pipeline
from core.accounting import PrivacyGuarantee
from core.ledger import PrivacyLedger
from core.errors import BudgetExhausted, ParameterError
from core.mechanisms import registry
from core.mechanisms.registry import Mechanism, Parameter
from core.mechanisms.result import make_result

ROOT = Path(__file__).resolve().parents[2]


def _toy_label(counts, *, spread, delta, rng=None):
    """Report-noisy-max with Gumbel noise of scale `spread` (a toy: exponential mechanism)."""
    from core.noise import check_rng

    counts = np.asarray(counts)
    gen = check_rng(rng)
    labels = np.argmax(counts + gen.gumbel(0.0, spread, counts.shape), axis=1).astype(np.int64)
    return make_result("toy-max", labels, None, None, _toy_map(counts.shape[0], spread=spread, delta=delta),
                       {"spread": spread, "m": counts.shape[0]})


def _toy_map(m, *, spread, delta, **_):
    return PrivacyGuarantee(m * 2.0 / spread, 0.0, "basic", f"{m} exponential-mechanism answers")


def _toy_audit(pair=None, **settings):
    from core.audit import AuditScenario, neighbouring_pairs

    class Sampler:
        def claim(self, counts):
            return _toy_map(len(counts), spread=settings["spread"], delta=0.0).epsilon, 0.0

        def __call__(self, counts, n_trials, rng):
            from core.noise import check_rng

            gen = check_rng(rng)
            c = np.asarray(counts, dtype=float)
            return np.argmax(c[None] + gen.gumbel(0.0, settings["spread"], (n_trials,) + c.shape), axis=2)

    p = neighbouring_pairs(20, distance=1, n_classes=3, n_queries=1)[1]
    s = Sampler()
    eps, delta = s.claim(p.a)
    return AuditScenario("toy-max", "Toy max", s, p, eps, delta, dict(settings))


TOY = Mechanism(
    name="toy-max",
    title="Toy max",
    description="A toy registered by the tests.",
    parameters=(Parameter("spread", "float", 4.0, "spread", "Gumbel noise scale.", low=0.5, high=50.0), registry.PARAMETERS["delta"]),
    label=_toy_label,
    privacy_map=_toy_map,
    spend=lambda epsilon, m, **_: {"spread": 2.0 * m / epsilon},
    derived=("spread",),
    audit=_toy_audit,
    audit_pairs=lambda: (["top_loses_vote"], "top_loses_vote"),
    audit_defaults={"spread": 4.0},
    per_query=True,
)


@pytest.fixture
def toy():
    registry.register(TOY)
    try:
        yield TOY
    finally:
        registry.unregister("toy-max")


def _votes(m=40, k=30, seed=0):
    rng = np.random.default_rng(seed)
    return np.stack([rng.multinomial(k, [0.8, 0.15, 0.05]) for _ in range(m)])


def test_builtin_names_are_spelled_once():
    names = registry.names()
    assert names[:5] == ["btt", "btt-soft", "lnmax", "baseline", "a-stab"]
    assert {"gnmax", "confident-gnmax", "certified-gnmax"} <= set(names)
    for n in names:
        assert "_" not in n
        assert registry.get(n).name == n


def test_unknown_and_badly_named_mechanisms_are_refused():
    with pytest.raises(ParameterError, match="Unknown mechanism"):
        registry.get("btt_soft")
    with pytest.raises(ParameterError, match="hyphens"):
        registry.register(Mechanism("Bad_Name", "t", "d", (), _toy_label, _toy_map))
    with pytest.raises(ParameterError, match="already registered"):
        registry.register(registry.get("btt"))


def test_toy_mechanism_reaches_the_pipeline_the_estimator_and_the_audit(toy):
    from sklearn.linear_model import LogisticRegression

    from core import PrivateEnsembleClassifier, audit
    from core.data import halfspaces

    r = pipeline.label(_votes(), "toy-max", {"epsilon": 4.0, "delta": 1e-5}, rng=0)
    assert r.mechanism == "toy-max" and r.epsilon == pytest.approx(4.0)
    assert "toy-max" in audit.audit_mechanisms()
    scn = audit.scenario("toy-max")
    res = audit.run_scenario(scn, n_trials=20_000, rng=1)
    assert res.claimed_epsilon == pytest.approx(0.5)  # one query, spread 4: 2/4
    X, y = halfspaces(3000, 3, rng=2)
    est = PrivateEnsembleClassifier(LogisticRegression(), k=20, mechanism="toy-max", epsilon=4.0, delta=1e-5, max_queries=50, rng=0)
    est.fit(X[:2900], y[:2900])
    assert est.predict(X[2900:2920]).shape == (20,)
    assert est.privacy_spent_[0] == pytest.approx(4.0 * 20 / 50)


@pytest.mark.parametrize("name", [n for n in registry.names() if registry.get(n).inputs == "counts"])
def test_resolve_spends_exactly_the_target_epsilon(name):
    mech = registry.get(name)
    settings = {"epsilon": 2.0, "delta": 1e-5, "T": 5}
    params = pipeline.resolve(name, settings, 300)
    g = pipeline.privacy_map(name, settings, 300)
    if name == "a-stab":  # ε is per query there
        assert g.epsilon == pytest.approx(600.0)
    else:
        assert g.epsilon <= 2.0 * (1 + 1e-6) and g.delta <= 1e-5 * (1 + 1e-9)
        if mech.spend is not None:  # the inverse spends the whole budget
            assert g.epsilon == pytest.approx(2.0, rel=1e-6)
    assert set(params) == set(mech.parameter_names)


def test_strict_resolve_refuses_flags_that_do_not_apply_and_double_noise():
    with pytest.raises(ParameterError, match="does not apply"):
        pipeline.resolve("lnmax", {"gamma": 0.1, "delta": 1e-5, "T": 3}, 100, strict=True)
    with pytest.raises(ParameterError, match="not both"):
        pipeline.resolve("lnmax", {"gamma": 0.1, "epsilon": 1.0, "delta": 1e-5}, 100, strict=True)
    with pytest.raises(ParameterError, match="needs epsilon"):
        pipeline.resolve("gnmax", {"delta": 1e-5}, 100)


def test_the_ledger_charges_every_run_before_it_runs():
    led = PrivacyLedger("test")
    v = _votes()
    a = pipeline.label(v, "gnmax", {"epsilon": 1.0, "delta": 1e-5}, rng=0, ledger=led)
    b = pipeline.label(v, "lnmax", {"epsilon": 2.0, "delta": 1e-5}, rng=0, ledger=led)
    total = led.total()
    assert len(led) == 2 and total.epsilon > max(a.epsilon, b.epsilon)
    led.set_budget(epsilon=total.epsilon + 0.05, delta=3e-5)
    with pytest.raises(BudgetExhausted):
        pipeline.label(v, "gnmax", {"epsilon": 1.0, "delta": 1e-5}, rng=0, ledger=led)
    assert len(led) == 2  # the refused run was not recorded (and did not run)


_LABEL_FUNCTIONS = {
    "btt_label", "btt_soft_label", "lnmax_label", "composition_baseline_label", "a_stab_label",
    "gnmax_label", "confident_gnmax_label", "certified_confident_gnmax_label",
}


def _calls_outside_mechanisms() -> list[str]:
    found = []
    paths = [p for p in (ROOT / "core").rglob("*.py") if "mechanisms" not in p.parts]
    paths += list((ROOT / "app_pages").glob("*.py")) + [ROOT / "app.py"] + list((ROOT / "experiments").glob("*.py"))
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
                if name in _LABEL_FUNCTIONS:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}")
    return found


def test_no_module_outside_core_mechanisms_calls_a_labeling_function():
    assert _calls_outside_mechanisms() == []


def test_every_mechanism_family_is_exported_from_core():
    import core

    for name in ("btt_label", "btt_soft_label", "lnmax_label", "composition_baseline_label", "a_stab_label",
                 "gnmax_label", "confident_gnmax_label", "certified_confident_gnmax_label"):
        assert name in core.__all__ and callable(getattr(core, name))
    assert core.PrivacyLedger is not None and callable(core.recommend_settings)
