"""Every registered mechanism's picture of its test, one query under the microscope, the bounds.

Generated votes: m queries whose teachers agree on the true class with a probability drawn
uniformly from [1/c, 1] (mostly near 1: √ of a uniform; scores for soft labels), so that the statistic of every test covers
both sides of its line.

False-failure rates (all seeds fixed, so each test is deterministic; the rates say how
unlucky a seed would have to be):

* ``test_picture_reads_the_statistic_its_test_reads``: well right of the line (analytic
  probability of being answered, or for the noisy maxima of keeping the plurality, ≥ 0.95)
  and well left (≤ 0.05; noisy maxima ≤ 0.6), at least 100 queries each, the number answered
  (kept) on each side lies within Hoeffding's deviation ``n·√(log(2/5e-8)/(2n))`` of the sum
  of the analytic probabilities: 16 sides, false-failure rate ≤ 8e-7 for independent queries
  (BTT's and soft labels' queries of one round share a threshold noise, so for them the rate
  is the independent-query figure at a fixed seed, not a proof); then the majority on the
  right is answered and the majority on the left is not.
* ``test_microscope_matches_the_analytic_probability``: 1,000 draws; the measured counts of
  answered and correct draws must lie in their exact binomial intervals at 5e-8 each; 16
  intervals: false-failure rate ≤ 8e-7.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from core.errors import ParameterError
from core.mechanisms import registry
from core.mechanisms.soft import soft_bin_histograms
from core.mechanisms.stability import distance_to_instability, margins
from core.mechanisms import odds as pictures
from core.theory.microscope import OUTCOMES, binomial_interval, microscope, outcomes

M = 1200


def generated(m: int, k: int, c: int, seed: int, mixture: bool = True):
    """Counts (m, c), scores (m, k) for a binary task, and true labels.

    ``mixture``: 60 % of the queries are easy (the teachers agree on the true class with
    probability in [0.85, 1]), 40 % hard (agreement in [1/c, 0.6]); otherwise the agreement
    is uniform on [1/c, 1] (every value of the statistic occurs).
    """
    rng = np.random.default_rng(seed)
    easy = rng.uniform(0.0, 1.0, m) < 0.6
    agree = np.where(easy, rng.uniform(0.85, 1.0, m), rng.uniform(1.0 / c, 0.6, m))
    if not mixture:
        agree = rng.uniform(1.0 / c, 1.0, m)
    truth = rng.integers(0, c, m)
    p = np.repeat(((1.0 - agree) / (c - 1))[:, None], c, axis=1)
    p[np.arange(m), truth] = agree
    counts = np.stack([rng.multinomial(k, row / row.sum()) for row in p])
    centre = np.where(truth == 1, 1.0 - (1.0 - agree) / 2, (1.0 - agree) / 2)  # near the class when easy
    scores = np.clip(rng.normal(centre[:, None], 0.02 + 0.3 * (1.0 - agree)[:, None], (m, k)), 0.0, 1.0)
    return counts, scores, truth


def settings(name: str) -> dict:
    """Settings at which each mechanism's line falls inside the generated statistic's range."""
    mech = registry.get(name)
    out = {p.name: p.default for p in mech.parameters if p.default is not None and p.name not in mech.derived}
    if "T" in out:
        out["T"] = 400
    if "epsilon" in mech.parameter_names:
        out["epsilon"] = 8.0
    if name == "a-stab":
        out["epsilon"] = 0.2
    if "threshold" in mech.parameter_names:
        out["threshold"] = None  # 0.8 k, the registered default
    if mech.spend is not None:
        out.update(mech.spend(8.0, M, delta=out["delta"]))
    return {k: v for k, v in out.items() if k in mech.parameter_names}


def run(name: str, k: int, seed: int = 1, mixture: bool = True):
    mech = registry.get(name)
    counts, scores, truth = generated(M, k, 2 if mech.inputs == "scores" else 3, seed, mixture)
    votes = scores if mech.inputs == "scores" else counts
    return mech, votes, truth, mech.label(votes, **settings(name), rng=seed + 10)


@functools.lru_cache(maxsize=None)
def sized_run(name: str, mixture: bool = True):
    """A run whose number of teachers puts the line well inside the statistic's range."""
    mech, votes, truth, result = run(name, 600, mixture=mixture)
    line = mech.picture.threshold(result.params)
    if mech.picture.statistic == "top vote count":
        k = int(max(600, 14 * result.params["sigma1"]))
    elif mech.picture.kind == "flip":
        k = int(1.6 * line)
    else:
        k = int(3 * line + 120)
    return run(name, k, mixture=mixture)


def independent_statistic(name: str, votes, params) -> np.ndarray:
    """The statistic recomputed from the mechanisms' own modules."""
    if name == "btt-soft":
        return distance_to_instability(soft_bin_histograms(votes, params["eta"])[0])
    if name in ("btt", "a-stab", "baseline"):
        return distance_to_instability(votes)
    if name in ("confident-gnmax", "certified-gnmax"):
        return np.asarray(votes).max(axis=1)
    return margins(votes)


def test_every_registered_voting_mechanism_declares_a_picture():
    """Every mechanism that reads votes (counts or scores) declares its test's picture."""
    for name in registry.names():
        if registry.get(name).inputs not in ("counts", "scores"):
            continue  # a route that trains on private rows has no vote test to draw
        pic = registry.get(name).picture
        assert pic is not None, name
        assert pic.kind in ("threshold", "flip") and pic.statistic and pic.symbol and pic.bound


def test_a_picture_of_unknown_kind_is_refused():
    mech = registry.get("btt")
    from dataclasses import replace

    with pytest.raises(ParameterError, match="kind"):
        registry.register(replace(mech, name="toy-picture", picture=replace(mech.picture, kind="histogram")))
    assert "toy-picture" not in registry.REGISTRY


def test_every_registered_voting_mechanism_is_checked_here():
    voting = [n for n in registry.names() if registry.get(n).inputs in ("counts", "scores")]
    assert sorted(voting) == sorted(pictures.NAMES)


@pytest.mark.parametrize("name", pictures.NAMES)
def test_picture_reads_the_statistic_its_test_reads(name):
    mech, votes, truth, result = sized_run(name)
    pic = mech.picture
    stat = pic.values(votes, result.params)
    np.testing.assert_array_equal(stat, independent_statistic(name, votes, result.params))
    line = pic.threshold(result.params)
    if pic.kind == "threshold":
        assert line == result.params["threshold"]  # the mechanism's own threshold, on this axis
    assert stat.min() < line < stat.max(), (name, stat.min(), line, stat.max())

    p_answered, _ = pic.odds(votes, result.params)
    if pic.kind == "threshold":
        kept = result.labels >= 0
        processed = result.labels != -2
        if name == "certified-gnmax" and not result.params["passed"]:
            pytest.fail("the certificate should pass on these well-separated votes")
        p = p_answered
    else:
        kept = result.labels == np.argmax(votes, axis=1)
        processed = np.ones_like(kept)
        kind, scale = ("laplace", 1.0 / result.params["gamma"]) if name == "lnmax" else ("gaussian", result.params["sigma"])
        p = pictures.noisy_argmax_probabilities(votes, kind=kind, scale=scale).max(axis=1)
    hi, lo = (0.95, 0.05) if pic.kind == "threshold" else (0.95, 0.6)
    if name == "certified-gnmax":
        # The certificate chooses σ1 ≈ 0.6 k: no query is far from the line in units of the
        # noise, so the sides are the top and bottom quarters of the answer probability.
        hi, lo = np.quantile(p[processed], [0.75, 0.25])
    right = processed & (p >= hi)
    left = processed & (p <= lo)
    assert right.sum() >= 100 and left.sum() >= 100, (name, right.sum(), left.sum())
    # The analytic sides are the picture's sides: well right of the line, well left of it.
    assert stat[right].min() > line and stat[left].max() < line
    # Well right mostly answered (kept), well left mostly not: within Hoeffding's deviation
    # of the analytic odds at 5e-8 per side (module docstring).
    for side in (right, left):
        dev = math.sqrt(math.log(2 / 5e-8) / (2 * side.sum()))
        assert abs(kept[side].sum() - p[side].sum()) <= dev * side.sum(), (name, kept[side].mean(), p[side].mean(), dev)
    if name == "certified-gnmax":
        assert kept[right].mean() > kept[left].mean() + 0.2
    elif pic.kind == "threshold":
        assert kept[right].mean() > 0.5 > kept[left].mean()
    else:
        assert kept[right].mean() > kept[left].mean() + 0.3


@pytest.mark.parametrize("name", pictures.NAMES)
def test_microscope_matches_the_analytic_probability(name):
    mech, votes, truth, result = sized_run(name, mixture=False)
    pic = mech.picture
    p_answered, p_correct = pic.odds(votes, result.params, truth)
    target = p_correct if pic.kind == "flip" else p_answered
    i = int(np.argmin(np.abs(target - 0.5)))
    assert 0.2 < target[i] < 0.8
    ms = microscope(name, votes[i], result.params, truth=int(truth[i]), draws=1000, fail=5e-8, rng=7)
    assert ms.draws == 1000
    lo, hi = ms.answered_interval
    assert lo <= ms.answered <= hi, (name, ms.answered, ms.answered_interval, ms.p_answered)
    lo, hi = ms.correct_interval
    assert lo <= ms.correct <= hi, (name, ms.correct, ms.correct_interval, ms.p_correct)
    assert ms.agrees
    assert ms.statistic == pic.values(votes[i:i + 1], result.params)[0]


def test_binomial_interval_is_exact():
    lo, hi = binomial_interval(0.5, 1000, 1e-6)
    from scipy import stats

    assert stats.binom.cdf(lo - 1, 1000, 0.5) <= 5e-7 and stats.binom.sf(hi, 1000, 0.5) <= 5e-7
    assert stats.binom.cdf(lo, 1000, 0.5) > 5e-7  # the tightest such interval
    assert binomial_interval(1.0, 100) == (100, 100)


def test_noisy_argmax_probabilities_match_closed_forms():
    counts = np.array([[30, 25], [10, 10], [50, 0]])
    for kind, scale in (("gaussian", 4.0), ("laplace", 3.0)):
        p = pictures.noisy_argmax_probabilities(counts, kind=kind, scale=scale)
        gaps = (counts[:, 0] - counts[:, 1]).astype(float)
        if kind == "gaussian":
            from scipy.special import erfc

            flip = 0.5 * erfc(gaps / (2 * scale))
        else:
            flip = 0.5 * (1 + gaps / (2 * scale)) * np.exp(-gaps / scale)
        np.testing.assert_allclose(p[:, 1], flip, atol=1e-5)
        np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert math.isclose(pictures.flip_gap("gaussian", 4.0), 1.6448536 * 4 * math.sqrt(2), rel_tol=1e-6)
    g = pictures.flip_gap("laplace", 3.0)
    assert math.isclose(0.5 * (1 + g / 6) * math.exp(-g / 3), 0.05, rel_tol=1e-9)


@pytest.mark.parametrize("name", [n for n in pictures.NAMES if n != "certified-gnmax"])
def test_measured_rates_stay_below_the_explicit_bounds(name):
    """The declared bounds hold on a run (β = 0.05; wrong ≤ bound + 3/√m slack for the
    expected-value bounds of the noisy maxima and A_stab)."""
    mech, votes, truth, result = sized_run(name)
    rates = mech.picture.bound_rates(votes, result.params, truth, 0.05)
    oc = outcomes(result, truth)
    measured = {"wrong": np.mean(oc == 1), "⊥": np.mean(oc == 2)}
    slack = 3.0 / math.sqrt(M)
    for key, bound in rates.items():
        assert measured[key] <= bound + slack, (name, key, measured[key], bound)


def test_certified_declares_no_bound_and_says_so():
    pic = registry.get("certified-gnmax").picture
    assert pic.bound_rates is None and "No explicit bound" in pic.bound


def test_outcomes_name_every_query():
    from tests.builders import make_result

    result = make_result(np.array([0, 1, -1, -2, 1]))
    oc = outcomes(result, np.array([0, 0, 1, 1, 1]))
    assert [OUTCOMES[i] for i in oc] == ["answered right", "answered wrong", "⊥", "not processed", "answered right"]


@pytest.mark.parametrize("name", pictures.NAMES)
def test_one_draw_shows_the_noise_the_picture_draws(name):
    """draw_once draws the same noise, in the same order, as draw(..., 1): the same label from the same seed,
    and the shown noise explains the outcome (value + noise against the line + its noise; votes + noise)."""
    from core.theory.microscope import draw_once

    mech, votes, truth, result = sized_run(name)
    for i in range(0, M, 97):
        row = votes[i]
        for seed in range(3):
            once = draw_once(name, row, result.params, rng=seed)
            labels, scores = pictures.draw(name, row, result.params, 1, rng=seed)
            assert once.label == int(labels[0]), (name, i, seed)
            if scores is not None and not np.isnan(scores[0]):
                assert once.score == pytest.approx(float(scores[0]))
            for what, value, z, line, z_line, passed in once.tests:
                assert passed == ((value + z >= line + z_line) if name in ("confident-gnmax", "certified-gnmax")
                                  else (value + z > line + z_line))
            if once.noise is not None and once.label >= 0:
                assert once.label == int(np.argmax(once.counts + once.noise))


def test_least_certain_says_how_certain_the_least_certain_query_is():
    from core.theory.microscope import least_certain

    mech, votes, truth, result = sized_run("btt")
    i, p = least_certain("btt", votes, result.params)
    p_all, _ = mech.picture.odds(votes, result.params)
    assert i == int(np.argmin(np.abs(np.asarray(p_all) - 0.5))) and p == pytest.approx(float(p_all[i]))
    # unanimous votes far above the line: no query is uncertain, and the probability says so
    k = 10 * int(mech.picture.threshold(result.params)) + 100
    unanimous = np.tile(np.array([[k, 0, 0]]), (50, 1))
    rerun = mech.label(unanimous, **settings("btt"), rng=3)
    _, p = least_certain("btt", unanimous, rerun.params)
    assert p > 0.99
