"""LNMax's accounting by two Laplace coordinates per answer (docs/design.md §3.4), checked
against an exact computation of one query, an independent bracket for several queries, the
one-query argmax computed exactly, the pure 2γ view, the ledger and the audit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, optimize

from core import accounting, pipeline
from core.accounting.composition import laplace_composition_epsilon
from core.ledger import PrivacyLedger
from core.ledger.entries import PureDPEntry, entry_from_dict
from core.errors import ParameterError


# ----------------------------------------------------------------------------- independent computations


def _loss_atoms(g: float) -> list[tuple[float, float]]:
    """One Laplace coordinate's privacy loss γ(|Z−1| − |Z|), Z ~ Lap(1/γ): its two atoms."""
    return [(g, 0.5), (-g, 0.5 * math.exp(-g))]


def _continuous_density(g: float, z: float) -> float:
    """Density of Z on (0, 1), where the loss is γ(1 − 2Z)."""
    return 0.5 * g * math.exp(-g * z)


def pair_delta_exact(g: float, eps: float) -> float:
    """δ(ε) = E[(1 − e^(ε − L1 − L2))₊] of one query (two coordinates), by integration."""
    def f(loss: float) -> float:
        return max(0.0, -math.expm1(eps - loss))

    total = sum(pa * pb * f(a + b) for a, pa in _loss_atoms(g) for b, pb in _loss_atoms(g))
    for a, pa in _loss_atoms(g):
        v, _ = integrate.quad(lambda z: _continuous_density(g, z) * f(a + g * (1 - 2 * z)), 0, 1,
                              epsabs=1e-14, epsrel=1e-12, limit=200)
        total += 2 * pa * v
    v, _ = integrate.dblquad(lambda z2, z1: _continuous_density(g, z1) * _continuous_density(g, z2)
                             * f(g * (2 - 2 * z1 - 2 * z2)), 0, 1, 0, 1, epsabs=1e-14, epsrel=1e-12)
    return total + v


def bracket(g: float, coordinates: int, delta: float, cells: int = 400) -> tuple[float, float]:
    """(lower, upper) on the true ε at δ of ``coordinates`` Laplace coordinates: the loss law
    on a grid of step γ/cells, rounded down and up, composed by convolution (a slow plain
    computation independent of dp-accounting)."""
    h = g / cells
    out = []
    for up in (False, True):
        n = cells + 1
        p = np.zeros(2 * n + 1)
        for loss, w in _loss_atoms(g):
            p[(math.ceil(loss / h - 1e-9) if up else math.floor(loss / h + 1e-9)) + n] += w
        edges = np.arange(-n, n + 1) * h
        for i in range(edges.size - 1):  # the continuous part, cell by cell, exactly
            a, b = max(edges[i], -g), min(edges[i + 1], g)
            if b > a:
                p[i + 1 if up else i] += 0.5 * (math.exp(-g * (1 - b / g) / 2) - math.exp(-g * (1 - a / g) / 2))
        dist, offset, base, base_offset, k = np.array([1.0]), 0, p, -n, coordinates
        while k:
            if k & 1:
                dist, offset = np.convolve(dist, base), offset + base_offset
            k >>= 1
            if k:
                base, base_offset = np.convolve(base, base), 2 * base_offset
        losses = (np.arange(dist.size) + offset) * h

        def d(e: float) -> float:
            sel = losses > e
            return float(np.sum(dist[sel] * -np.expm1(e - losses[sel])))

        out.append(optimize.brentq(lambda e: d(e) - delta, 0.0, coordinates * g + h, xtol=1e-12))
    return out[0], out[1]


def argmax_delta_exact(g: float, margin: int, eps: float) -> float:
    """δ(ε) of one LNMax answer on two classes, counts (c + margin, c) against (c + margin − 1, c + 1).

    The answer is the runner-up when D = Z2 − Z1 > margin (or > margin − 2); D is the
    difference of two Lap(1/γ): P[D > t] = e^(−γt)(2 + γt)/4 for t ≥ 0.
    """
    def tail(t: float) -> float:
        return math.exp(-g * t) * (2 + g * t) / 4 if t >= 0 else 1 - math.exp(g * t) * (2 - g * t) / 4

    pa = [1 - tail(margin), tail(margin)]
    pb = [1 - tail(margin - 2), tail(margin - 2)]
    return max(sum(max(0.0, x - math.exp(eps) * y) for x, y in zip(p, q)) for p, q in ((pa, pb), (pb, pa)))


# ----------------------------------------------------------------------------- the bound


@pytest.mark.parametrize("g, eps", [(0.05, 0.02), (0.05, 0.08), (0.5, 0.05), (0.5, 0.3), (0.5, 0.8),
                                    (1.0, 0.05), (1.0, 0.8), (1.0, 1.6)])
def test_one_query_equals_the_exact_two_coordinate_divergence(g, eps):
    from dp_accounting.pld import privacy_loss_distribution as pld

    exact = pair_delta_exact(g, eps)
    got = pld.from_laplace_mechanism(1 / g, sensitivity=1.0, value_discretization_interval=g / 10).self_compose(2)
    d = got.get_delta_for_epsilon(eps)
    assert d >= exact * (1 - 1e-9)  # pessimistic: never below the truth
    assert d == pytest.approx(exact, rel=2e-3, abs=1e-9)


@pytest.mark.parametrize("g, n, delta", [(0.5, 3, 1e-5), (0.2, 10, 1e-5), (0.05, 40, 1e-6)])
def test_several_queries_lie_in_an_independent_bracket(g, n, delta):
    lower, upper = bracket(g, 2 * n, delta)
    got = laplace_composition_epsilon([(g, 2 * n)], delta)
    assert lower <= got <= upper * (1 + 1e-9)
    assert upper - lower < 2e-3 * upper  # the bracket is narrow: the value is tight
    assert accounting.lnmax_guarantee(g, n_answers=n, delta=delta).epsilon <= got


@pytest.mark.parametrize("g, margin", [(0.5, 2), (0.5, 6), (1.0, 4), (0.2, 10)])
def test_the_released_argmax_never_leaks_more_than_the_bound(g, margin):
    for eps in (0.1, 0.4, 0.9):
        if eps >= 2 * g:
            continue
        assert argmax_delta_exact(g, margin, eps) <= pair_delta_exact(g, eps) + 1e-12


def test_the_figure_for_500_answers_and_the_pure_view():
    g = accounting.lnmax_guarantee(0.05, n_answers=500, delta=1e-5)
    assert g.method == "lnmax/laplace-pld"
    assert g.epsilon == pytest.approx(7.4213, abs=5e-4)
    assert g.parts["exact"] == pytest.approx(11.4089, abs=5e-4)  # n pure 2γ steps (KOV)
    assert g.parts["pate_simple"] == pytest.approx(15.7298, abs=5e-4)
    lower, upper = 7.4152, 7.4274  # the bracket at γ/100 (tests above check the method)
    assert lower <= g.epsilon <= upper
    for n in (1, 2, 10, 100, 2000):  # never above the pure view, strictly below from two answers on
        for gamma in (0.01, 0.1, 1.0):
            gg = accounting.lnmax_guarantee(gamma, n_answers=n, delta=1e-5)
            assert gg.epsilon <= min(gg.parts["exact"], gg.parts["pate_simple"], gg.parts["basic"])
            if n >= 2:
                assert gg.epsilon < gg.parts["exact"]
            if n >= 10 and gamma <= 0.1:
                assert gg.epsilon < 0.8 * gg.parts["exact"]


@pytest.mark.parametrize("epsilon, n, delta", [(0.5, 10, 1e-5), (2.0, 300, 1e-5), (8.0, 2000, 1e-6)])
def test_the_inverse_spends_the_budget_with_the_tighter_map(epsilon, n, delta):
    gamma = accounting.lnmax_gamma_for_epsilon(epsilon, n_answers=n, delta=delta)
    spent = accounting.lnmax_guarantee(gamma, n_answers=n, delta=delta).epsilon
    assert spent <= epsilon and spent == pytest.approx(epsilon, rel=1e-6)
    assert accounting.lnmax_guarantee(gamma * (1 + 1e-6), n_answers=n, delta=delta).epsilon > epsilon * (1 - 1e-6)
    assert gamma > accounting.pate_gamma_for_epsilon(epsilon, n_answers=n, delta=delta) * 1.2  # less noise than before


def test_laplace_composition_checks_its_inputs():
    with pytest.raises(ParameterError):
        laplace_composition_epsilon([(0.0, 3)], 1e-5)
    with pytest.raises(ParameterError):
        laplace_composition_epsilon([(0.1,)], 1e-5)
    assert laplace_composition_epsilon([], 1e-5) == 0.0
    mixed = laplace_composition_epsilon([(0.05, 100)], 1e-5, pure_steps=[(0.2, 3)])
    assert laplace_composition_epsilon([(0.05, 100)], 1e-5) < mixed < 0.05 * 100 + 0.6


# ----------------------------------------------------------------------------- the ledger


def test_the_ledger_charges_an_lnmax_run_its_guarantee_and_composes_it_with_others():
    votes = np.tile([[60, 30, 10]], (500, 1))
    settings = {"gamma": 0.05, "delta": 1e-5}
    run = pipeline.label(votes, "lnmax", settings, rng=0)
    entry = pipeline.ledger_entry("lnmax", settings, 500)
    assert isinstance(entry, PureDPEntry) and entry.laplace and entry.steps == ((0.05, 1000),)
    back = entry_from_dict(entry.to_dict())
    assert back.laplace and back.to_dict() == entry.to_dict()
    led = PrivacyLedger()
    led.charge(entry)
    assert led.total().epsilon == pytest.approx(run.epsilon, rel=1e-9) == pytest.approx(7.4213, abs=5e-4)
    # with a BTT run: composed together, below the two runs' sum, above each alone
    btt = pipeline.ledger_entry("btt", {"epsilon": 2.0, "delta": 1e-5, "T": 5}, 500)
    led.charge(btt)
    total = led.total().epsilon
    assert max(run.epsilon, 2.0) < total < run.epsilon + 2.0
    generic = PureDPEntry(steps=entry.steps, delta_composition=entry.delta_composition)
    from core.ledger import compose_entries

    assert compose_entries([entry, btt]).epsilon < compose_entries([generic, btt]).epsilon


# ----------------------------------------------------------------------------- the audit


@pytest.mark.slow
def test_the_audit_passes_the_new_claim_and_flags_one_coordinate_per_answer():
    """At confidence 1 − 1e-6 a true claim is flagged with probability at most 1e-6 (fixed
    seeds: deterministic).  The false claim, γ per answer, is below the argmax's true leak
    on this pair, e^(2γ)·4/5 → ε ≈ 0.78 against 0.5: caught by a wide margin."""
    from core.audit import LNMaxSampler, audit, neighbouring_pairs

    gamma = 0.5
    pair = next(p for p in neighbouring_pairs(40, distance=1, n_queries=3) if p.name == "all_queries_move")
    sampler = LNMaxSampler(gamma, delta=1e-5)
    claim = sampler.claim(pair.a)
    assert claim[0] == pytest.approx(accounting.lnmax_guarantee(gamma, n_answers=3, delta=1e-5).epsilon)
    assert claim[0] < accounting.lnmax_guarantee(gamma, n_answers=3, delta=1e-5).parts["exact"]
    ok = audit(sampler, pair.a, pair.b, claimed_epsilon=claim[0], claimed_delta=claim[1], n_trials=400_000,
               confidence=1 - 1e-6, rng=5)
    assert ok.passed and ok.epsilon_lower_bound > 1.0  # the audit has power here (1.47 with this seed)
    # γ per answer (one coordinate) under-counts the change of two counts: flagged
    one = next(p for p in neighbouring_pairs(40, distance=1, n_queries=3) if p.name == "top_loses_vote")
    low = audit(sampler, one.a, one.b, claimed_epsilon=gamma, claimed_delta=0.0, n_trials=400_000,
                confidence=1 - 1e-6, rng=6)
    assert not low.passed
