"""The lecture's charts: distinct styles per mechanism, and each test picture drawn on its own axis."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from core.mechanisms import registry
from core.theory.microscope import OUTCOMES

ROOT = Path(__file__).resolve().parents[2]


def test_every_registered_mechanism_has_its_own_colour_and_dash():
    from app_pages import _style as style

    names = registry.names()
    styles = [style.mechanism_style(n) for n in names]
    assert len({s.color for s in styles}) == len(names)
    assert len({(s.color, s.dash) for s in styles}) == len(names)


def test_each_picture_draws_its_line_on_its_statistic_axis():
    from app_pages import _charts as charts

    rng = np.random.default_rng(0)
    k, m = 400, 300
    agree = rng.uniform(0.34, 1.0, m)
    truth = rng.integers(0, 2, m)
    counts = np.stack([rng.multinomial(k, [a, 1 - a] if t == 0 else [1 - a, a]) for a, t in zip(agree, truth)])
    scores = np.clip(rng.normal(np.where(truth == 1, agree, 1 - agree)[:, None], 0.05, (m, 60)), 0, 1)
    for name in registry.names():
        mech = registry.get(name)
        if mech.picture is None:
            continue
        votes = scores if mech.inputs == "scores" else counts
        settings = {p.name: p.default for p in mech.parameters if p.default is not None and p.name not in mech.derived}
        if mech.spend is not None:
            settings.update(mech.spend(8.0, m, delta=1e-5))
        if "epsilon" in mech.parameter_names:
            settings["epsilon"] = 8.0
        if "threshold" in mech.parameter_names:
            settings["threshold"] = None
        result = mech.label(votes, **{a: b for a, b in settings.items() if a in mech.parameter_names}, rng=1)
        fig, reads, bound = charts.picture_of_test(result, votes, truth)
        assert fig.layout.xaxis.title.text == mech.picture.statistic
        (line,) = fig.layout.shapes
        assert line.x0 == line.x1 == mech.picture.threshold(result.params)
        drawn = sum(len(t.x) for t in fig.data if t.type == "histogram")
        assert drawn == m  # every query in exactly one outcome (the rare ones drawn large once more)
        assert {t.name.split(" (")[0] for t in fig.data} <= set(OUTCOMES)
        assert reads == mech.picture.reads and bound == mech.picture.bound
        if name != "btt":
            assert "Theorem 3.2" not in bound  # BTT's bound is shown for BTT only


def test_a_new_mechanism_brings_its_own_picture():
    """A mechanism registered later is drawn from its own declaration, with no page change."""
    from dataclasses import replace

    from core.mechanisms.registry import TestPicture
    from app_pages import _charts as charts

    base = registry.get("a-stab")

    def values(votes, params):
        return np.asarray(votes).max(axis=1).astype(float)

    toy = TestPicture(statistic="top count (toy)", symbol="τ", kind="threshold", reads="toy reads", values=values,
                      threshold=lambda params: 7.0, odds=lambda v, p, t=None: (np.ones(len(v)), None),
                      draw=lambda row, p, n, rng=None: (np.zeros(n, dtype=int), None), bound="None known (toy).")
    registry.register(replace(base, name="toy-picture", picture=toy))
    try:
        counts = np.array([[9, 1], [5, 5], [2, 8]])
        result = registry.get("a-stab").label(counts, epsilon=1.0, delta=1e-5, rng=0)
        result = replace(result, mechanism="toy-picture")
        fig, reads, bound = charts.picture_of_test(result, counts)
        assert fig.layout.xaxis.title.text == "top count (toy)" and fig.layout.shapes[0].x0 == 7.0
        assert reads == "toy reads" and bound == "None known (toy)."
    finally:
        registry.unregister("toy-picture")
