"""The plugin path: a mechanism registered by a user (in code, or by an installed package's
entry point) reaches the pipeline, the ledger, the estimator, the command line and the audit,
whose default scenario is built from its labeling function and privacy map.  The mechanism
is docs/API.md's "Adding a mechanism" example (Gumbel noisy max), run from the page itself.

False-failure rate: the audits run at confidence 1 − 1e-6 with fixed seeds (deterministic);
with another seed a true claim would be flagged with probability at most 1e-6.  The false
claim (half the true ε: the factor 2 of replace-one adjacency forgotten) sits far below the
leak of the audited pair (about 1.98 against a claim of 1), so it is caught by a wide margin.
"""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from core import pipeline
from core.accounting import PrivacyGuarantee
from core.ledger import PrivacyLedger, PureDPEntry
from core.cli import main
from core.cli.common import EXIT_OK, EXIT_VIOLATION
from core.mechanisms import registry

ROOT = Path(__file__).resolve().parents[2]
NAME = "gumbel-max"


def _documented_example() -> str:
    """The Python block of docs/API.md's "Adding a mechanism"."""
    text = (ROOT / "docs" / "API.md").read_text(encoding="utf-8")
    section = text.split("## Adding a mechanism", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, flags=re.S).group(1)


@pytest.fixture
def gumbel():
    registry.names()  # the built-in mechanisms (and any installed plugin) first
    namespace: dict = {}
    exec(compile(_documented_example(), "docs/API.md", "exec"), namespace)  # registers it
    try:
        yield namespace["GUMBEL_MAX"]
    finally:
        registry.unregister(NAME)


def _votes(m=200, k=50, seed=0):
    rng = np.random.default_rng(seed)
    agree = rng.binomial(k, 0.9, size=m)
    return np.stack([agree, k - agree], axis=1)


def _false(mech):
    """The same noise with a false claim: each answer 1/b-DP (the factor 2 forgotten)."""
    def false_map(m, *, spread, delta, **_):
        return PrivacyGuarantee(m / spread, 0.0, "gumbel-max", f"{m} answers, each {1 / spread:.4g}-DP (false)")

    return replace(mech, privacy_map=false_map, spend=lambda epsilon, m, **_: {"spread": m / epsilon},
                   ledger_entry=None)


def _audit(capsys, *flags) -> tuple[int, dict]:
    rc = main(["audit", "--mechanism", NAME, "--trials", "100000", "--seed", "3", "--confidence", "0.999999",
               "--json", "--no-progress", *flags])
    out = capsys.readouterr()
    return rc, (json.loads(out.out) if out.out.strip() else {"err": out.err})


# ----------------------------------------------------------------------------- in code


def test_the_documented_example_reaches_the_pipeline_the_ledger_and_the_estimator(gumbel):
    from sklearn.linear_model import LogisticRegression

    from core import PrivateEnsembleClassifier
    from core.data import halfspaces

    assert NAME in registry.names() and registry.get(NAME) is gumbel
    votes = _votes()
    r = pipeline.label(votes, NAME, {"epsilon": 2.0, "delta": 1e-5}, rng=0)
    assert r.mechanism == NAME and r.n_answered == 200 and r.epsilon <= 2.0
    assert r.params["spread"] == pytest.approx(200.0)  # b = 2m/ε
    assert np.mean(r.labels == 0) > 0.5
    entry = pipeline.ledger_entry(NAME, {"epsilon": 2.0, "delta": 1e-5}, 200)
    assert isinstance(entry, PureDPEntry) and entry.steps == ((0.01, 200),)
    led = PrivacyLedger()
    pipeline.label(votes, NAME, {"epsilon": 2.0, "delta": 1e-5}, rng=0, ledger=led)
    assert led.total().epsilon == pytest.approx(r.epsilon, rel=1e-6)
    X, y = halfspaces(2000, 3, rng=2)
    est = PrivateEnsembleClassifier(LogisticRegression(), k=20, mechanism=NAME, epsilon=4.0, delta=1e-5,
                                    max_queries=50, rng=0, ledger=PrivacyLedger()).fit(X[:1900], y[:1900])
    assert est.predict(X[1900:1920]).shape == (20,) and est.settings_["spread"] == pytest.approx(25.0)


def test_the_gumbel_example_is_on_the_command_line_passes_its_audit_and_a_false_claim_is_flagged(gumbel, capsys):
    from core import audit as A

    assert main(["label", "--help"]) == EXIT_OK
    assert NAME in capsys.readouterr().out.split("--mechanism", 2)[1]
    assert main(["audit", "--help"]) == EXIT_OK
    assert NAME in " ".join(capsys.readouterr().out.split())
    assert NAME in A.audit_mechanisms() and A.pair_choices(NAME)[1] == "top_loses_vote"

    rc, report = _audit(capsys)
    assert rc == EXIT_OK, report
    assert report["passed"] and report["claimed_epsilon"] == pytest.approx(1.0, rel=1e-3)  # ε = 1 on one query
    assert report["settings"]["spread"] == pytest.approx(2.0)
    assert 0.5 < report["epsilon_lower_bound"] < 1.0  # the audit has power: the true leak is 0.92 here
    rc, report = _audit(capsys, "--spread", "4")  # the noise instead of ε
    assert rc == EXIT_OK and report["claimed_epsilon"] == pytest.approx(0.5, rel=1e-3) and report["passed"]

    registry.register(_false(gumbel), replace=True)
    rc, report = _audit(capsys)
    assert rc == EXIT_VIOLATION, report
    assert not report["passed"] and report["claimed_epsilon"] == pytest.approx(1.0, rel=1e-3)
    assert report["epsilon_lower_bound"] > 1.3


def test_the_default_audit_refuses_what_it_cannot_build(gumbel):
    from core import audit as A
    from core.errors import ParameterError

    with pytest.raises(ParameterError, match="choose one of"):
        A.scenario(NAME, pair="adjacent_bins")
    scn = A.scenario(NAME, pair="all_queries_move")
    assert scn.pair.a.shape[0] == 3 and scn.claimed_epsilon == pytest.approx(1.0, rel=1e-3)  # ε over 3 queries
    assert "dp-logistic" in A.audit_mechanisms()  # a rows mechanism keeps its own audit
    assert "certified-gnmax" not in A.audit_mechanisms()


# ----------------------------------------------------------------------------- from an installed package


def _install(site: Path, name: str, module: str, source: str, entry: str) -> None:
    """A tiny installed distribution: a module and its dist-info with one entry point."""
    (site / f"{module}.py").write_text(source, encoding="utf-8")
    info = site / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{registry.ENTRY_POINT_GROUP}]\n{entry}\n", encoding="utf-8")


def test_an_installed_package_adds_its_mechanism_through_the_entry_point(tmp_path, monkeypatch, capsys):
    import importlib

    registry.names()
    source = _documented_example().replace("register(GUMBEL_MAX)\n", "")  # the entry point registers it
    _install(tmp_path, "gumbel_plugin", "gumbel_plugin", source, f"{NAME} = gumbel_plugin:GUMBEL_MAX")
    _install(tmp_path, "broken_plugin", "broken_plugin", "raise ImportError('a missing dependency')\n",
             "broken = broken_plugin:MECHANISM")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    try:
        assert NAME not in registry.REGISTRY
        with pytest.warns(UserWarning, match=r"plugin 'broken' \(broken_plugin:MECHANISM\) was not registered: "
                                             r"ImportError: a missing dependency"):
            added = registry.load_plugins(reload=True)
        assert added == [NAME] and registry.get(NAME).title == "Gumbel noisy max"
        assert registry.load_plugins() == []  # once per process unless asked again
        assert main(["audit", "--help"]) == EXIT_OK
        assert NAME in " ".join(capsys.readouterr().out.split())
        rc, report = _audit(capsys)
        assert rc == EXIT_OK and report["passed"], report
        # a name already taken is never replaced by a plugin
        registry.unregister(NAME)
        registry.register(replace(importlib.import_module("gumbel_plugin").GUMBEL_MAX, title="mine"))
        with pytest.warns(UserWarning) as caught:  # the broken plugin warns again, beside it
            assert registry.load_plugins(reload=True) == []
        assert [str(w.message) for w in caught if "already registered" in str(w.message)], caught
        assert registry.get(NAME).title == "mine"
    finally:
        registry.unregister(NAME)


def test_the_api_page_documents_every_function_a_mechanism_needs():
    text = (ROOT / "docs" / "API.md").read_text(encoding="utf-8").split("## Adding a mechanism", 1)[1].split("\n## ", 1)[0]
    for name in ("make_result", "PureDPEntry.uniform", "RDPEntry", "ApproxDPEntry", "PrivacyGuarantee", "Parameter",
                 "PARAMETERS", "register", "check_rng", "check_counts", "privacy_map", "spend", "derived",
                 "ledger_entry", "per_query", "audit_defaults", "audit_pairs", "default_scenario",
                 "register_privacy_map", "private_label_lab.mechanisms", "BOTTOM", "UNPROCESSED"):
        assert name in text, name
    assert textwrap.dedent(_documented_example()).count("register(") == 1
