"""Rényi-DP accounting of the Gaussian aggregators (core.accounting.rdp): curves, conversion,
guarantees against dp-accounting's own RdpAccountant, and the σ inverses.

All tests are deterministic (no random draws except hypothesis' examples, which only
choose inputs of exact identities / monotonicity properties)."""

from __future__ import annotations

import math

import dp_accounting as dpa
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.accounting import rdp
from core.accounting import PrivacyGuarantee
from core.errors import ParameterError


def dpa_epsilon(events, delta):
    acc = dpa.rdp.RdpAccountant(list(rdp.ORDERS))
    acc.compose(dpa.ComposedDpEvent(events))
    return acc.get_epsilon(delta)


def pld_epsilon(events, delta):
    """dp-accounting's PLD accountant (discretized, pessimistic: an upper bound on the exact ε)."""
    acc = dpa.pld.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dpa.ComposedDpEvent(events))
    return acc.get_epsilon(delta)


def exact_gaussian_epsilon(mu, delta):
    """Independent computation: solve Balle–Wang's δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) = δ."""
    from scipy import optimize
    from scipy.special import log_ndtr

    f = lambda e: math.exp(log_ndtr(-e / mu + mu / 2)) - math.exp(e + log_ndtr(-e / mu - mu / 2)) - delta
    return 0.0 if f(0.0) <= 0 else optimize.brentq(f, 0.0, mu * mu / 2 + 20 * mu + 20, xtol=1e-13)


# ---------------------------------------------------------------------------- grid and curves


def test_orders_grid():
    o = rdp.ORDERS
    assert o.size == 297 and o[0] == 2.0 and o[-1] == pytest.approx(500.0)
    np.testing.assert_array_equal(o[:197], np.arange(2.0, 100.5, 0.5))
    assert np.all(np.diff(o) > 0)
    ratios = o[198:] / o[197:-1]
    np.testing.assert_allclose(ratios, (5.0) ** (1 / 100), rtol=1e-12)
    with pytest.raises(ValueError):
        o[0] = 3.0  # read-only


def test_gaussian_rdp_hand_values():
    orders = np.array([2.0, 3.0, 10.0])
    np.testing.assert_allclose(rdp.gaussian_rdp(2.0, sensitivity_sq=2.0, orders=orders), [0.5, 0.75, 2.5])
    np.testing.assert_allclose(rdp.gaussian_rdp(2.0, orders=orders), [0.25, 0.375, 1.25])
    # GNMax: α/σ² per answer; threshold: α/(2σ1²) per query
    np.testing.assert_allclose(rdp.gnmax_rdp(4.0, n_answers=3, orders=orders), 3 * orders / 16)
    np.testing.assert_allclose(rdp.confident_gnmax_rdp(3.0, 2.0, n_queries=5, n_answers=2, orders=orders), 5 * orders / 18 + 2 * orders / 4)
    np.testing.assert_allclose(rdp.confident_gnmax_rdp(3.0, 2.0, n_queries=5, orders=orders), 5 * orders / 18 + 5 * orders / 4)


def test_rdp_to_dp_single_order_hand_value():
    # Balle et al. 2020: ε = ρ + log((α−1)/α) − (log δ + log α)/(α − 1)
    eps, order = rdp.rdp_to_dp(np.array([1.0]), delta=1e-5, orders=np.array([10.0]))
    assert order == 10.0
    assert eps == pytest.approx(1.0 + math.log(0.9) - (math.log(1e-5) + math.log(10.0)) / 9.0, rel=1e-14)
    # the minimum over orders of the same expression
    curve = rdp.gnmax_rdp(10.0, n_answers=7)
    manual = np.min(curve + np.log1p(-1 / rdp.ORDERS) - np.log(1e-5 * rdp.ORDERS) / (rdp.ORDERS - 1))
    eps, order = rdp.rdp_to_dp(curve, delta=1e-5)
    assert eps == pytest.approx(manual, rel=1e-12)
    assert order in rdp.ORDERS


# ---------------------------------------------------------------------------- against dp-accounting


def test_gnmax_against_dp_accounting():
    # GNMax answer = Gaussian mechanism with L2 sensitivity sqrt(2): noise multiplier σ/√2
    events = [dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(40 / math.sqrt(2)), 100)]
    ref_rdp = dpa_epsilon(events, 1e-5)
    g = rdp.gnmax_guarantee(40.0, n_answers=100, delta=1e-5)
    assert isinstance(g, PrivacyGuarantee)
    # exact: one Gaussian of μ = √(2·100)/40, by hand and below dp-accounting's PLD accountant
    assert g.epsilon == pytest.approx(exact_gaussian_epsilon(math.sqrt(200) / 40, 1e-5), rel=1e-9)
    assert g.epsilon <= pld_epsilon(events, 1e-5) <= g.epsilon * (1 + 1e-3)
    assert g.epsilon == pytest.approx(1.3565, abs=1e-4) and g.epsilon < ref_rdp
    assert g.parts["epsilon_rdp"] == pytest.approx(ref_rdp, rel=1e-6) and ref_rdp == pytest.approx(1.478, abs=1e-3)
    assert g.delta == 1e-5 and g.method == "pld-gnmax"
    assert g.parts["order"] == 13.0 and g.parts["rdp_at_order"] == pytest.approx(100 * 13 / 1600)
    assert "α = 13" in g.detail


def test_confident_gnmax_against_dp_accounting():
    # σ1 = 150 on 640 threshold tests (sensitivity 1), σ2 = 40 on 283 answers (sensitivity √2)
    ref = dpa_epsilon([
        dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(150.0), 640),
        dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(40 / math.sqrt(2)), 283),
    ], 1e-5)
    g = rdp.confident_gnmax_guarantee(150.0, 40.0, n_queries=640, n_answers=283, delta=1e-5)
    assert g.parts["epsilon_rdp"] == pytest.approx(ref, rel=1e-6)
    assert g.parts["epsilon_rdp"] == pytest.approx(2.743, abs=1e-3)
    eps, _ = rdp.rdp_to_dp(rdp.confident_gnmax_rdp(150.0, 40.0, n_queries=640, n_answers=283), delta=1e-5)
    assert eps == g.parts["epsilon_rdp"]
    mu = math.sqrt(640 / 150.0 ** 2 + 2 * 283 / 40.0 ** 2)
    assert g.epsilon == pytest.approx(exact_gaussian_epsilon(mu, 1e-5), rel=1e-9) and g.epsilon < eps
    # the fixed accounting charges every query an answer
    fixed = rdp.confident_gnmax_guarantee(150.0, 40.0, n_queries=640, delta=1e-5)
    ref_fixed = dpa_epsilon([
        dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(150.0), 640),
        dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(40 / math.sqrt(2)), 640),
    ], 1e-5)
    assert fixed.parts["epsilon_rdp"] == pytest.approx(ref_fixed, rel=1e-6) and fixed.epsilon > g.epsilon


@settings(max_examples=25, deadline=None)
@given(sigma=st.floats(0.5, 200.0), n=st.integers(1, 5000), delta=st.sampled_from([1e-4, 1e-5, 1e-8]))
def test_gnmax_matches_dp_accounting_everywhere(sigma, n, delta):
    ref = dpa_epsilon([dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(sigma / math.sqrt(2)), n)], delta)
    g = rdp.gnmax_guarantee(sigma, n_answers=n, delta=delta)
    assert g.parts["epsilon_rdp"] == pytest.approx(ref, rel=1e-6, abs=1e-12)
    assert g.epsilon <= ref * (1 + 1e-12)  # exact is never above RDP's conversion
    assert g.epsilon == pytest.approx(exact_gaussian_epsilon(math.sqrt(2 * n) / sigma, delta), rel=1e-7, abs=1e-10)


# ---------------------------------------------------------------------------- monotonicity


@settings(max_examples=40, deadline=None)
@given(sigma=st.floats(1.0, 300.0), factor=st.floats(1.01, 3.0), n=st.integers(1, 2000), extra=st.integers(1, 2000))
def test_epsilon_decreases_in_sigma_and_increases_in_answers(sigma, factor, n, extra):
    e = lambda s, k: rdp.gnmax_guarantee(s, n_answers=k, delta=1e-5).epsilon
    assert e(sigma * factor, n) <= e(sigma, n)
    assert e(sigma, n + extra) >= e(sigma, n)
    c = lambda s1, s2, k: rdp.confident_gnmax_guarantee(s1, s2, n_queries=k, delta=1e-5).epsilon
    assert c(2 * sigma * factor, sigma, n) <= c(2 * sigma, sigma, n)
    assert c(2 * sigma, sigma * factor, n) <= c(2 * sigma, sigma, n)
    assert c(2 * sigma, sigma, n + extra) >= c(2 * sigma, sigma, n)


def test_strictly_monotone_where_positive():
    eps = [rdp.gnmax_guarantee(s, n_answers=100, delta=1e-5).epsilon for s in (10, 20, 40, 80)]
    assert all(a > b > 0 for a, b in zip(eps, eps[1:]))


# ---------------------------------------------------------------------------- inverses


@settings(max_examples=30, deadline=None)
@given(eps=st.floats(0.05, 20.0), n=st.integers(1, 100_000), delta=st.sampled_from([1e-3, 1e-5, 1e-9]))
def test_gnmax_sigma_round_trip(eps, n, delta):
    sigma = rdp.gnmax_sigma_for_epsilon(eps, n_answers=n, delta=delta)
    assert rdp.gnmax_guarantee(sigma, n_answers=n, delta=delta).epsilon == pytest.approx(eps, rel=1e-9)
    again = rdp.gnmax_sigma_for_epsilon(rdp.gnmax_guarantee(sigma, n_answers=n, delta=delta).epsilon,
                                        n_answers=n, delta=delta)
    assert again == pytest.approx(sigma, rel=1e-9)


@settings(max_examples=30, deadline=None)
@given(sigma=st.floats(0.5, 500.0), n=st.integers(1, 10_000))
def test_gnmax_sigma_inverse_returns_sigma(sigma, n):
    eps = rdp.gnmax_guarantee(sigma, n_answers=n, delta=1e-5).epsilon
    assert rdp.gnmax_sigma_for_epsilon(eps, n_answers=n, delta=1e-5) == pytest.approx(sigma, rel=1e-9)


@settings(max_examples=30, deadline=None)
@given(eps=st.floats(0.05, 20.0), n=st.integers(1, 100_000), ratio=st.floats(0.2, 10.0))
def test_confident_sigmas_round_trip(eps, n, ratio):
    s1, s2 = rdp.confident_gnmax_sigmas_for_epsilon(eps, n_queries=n, delta=1e-5, ratio=ratio)
    assert s1 == pytest.approx(ratio * s2, rel=1e-12)
    g = rdp.confident_gnmax_guarantee(s1, s2, n_queries=n, delta=1e-5)
    assert g.epsilon == pytest.approx(eps, rel=1e-9)


def test_inverses_vectorized_and_cached():
    eps = np.array([0.5, 1.0, 2.0])
    sig = rdp.gnmax_sigma_for_epsilon(eps, n_answers=100, delta=1e-5)
    assert sig.shape == (3,) and np.all(np.diff(sig) < 0)
    for e, s in zip(eps, sig):
        assert rdp.gnmax_sigma_for_epsilon(float(e), n_answers=100, delta=1e-5) == s
    sig_n = rdp.gnmax_sigma_for_epsilon(1.0, n_answers=np.array([1, 10, 100]), delta=1e-5)
    np.testing.assert_allclose(sig_n, sig_n[0] * np.sqrt([1, 10, 100]), rtol=1e-12)  # ε depends on n/σ²
    s1, s2 = rdp.confident_gnmax_sigmas_for_epsilon(eps, n_queries=50, delta=1e-5, ratio=2.0)
    assert s1.shape == s2.shape == (3,)
    np.testing.assert_allclose(s1, 2 * s2)
    rdp._gnmax_sigma.cache_clear()
    rdp.gnmax_sigma_for_epsilon(1.0, n_answers=100, delta=1e-5)
    rdp.gnmax_sigma_for_epsilon(1.0, n_answers=100, delta=1e-5)
    assert rdp._gnmax_sigma.cache_info().hits >= 1


def test_reference_inverse_value():
    # σ = 40 on 100 answers gives ε ≈ 1.3565 at δ = 1e-5, so the inverse of that ε is 40.
    eps = rdp.gnmax_guarantee(40.0, n_answers=100, delta=1e-5).epsilon
    assert rdp.gnmax_sigma_for_epsilon(eps, n_answers=100, delta=1e-5) == pytest.approx(40.0, rel=1e-9)


# ---------------------------------------------------------------------------- filter budget


def test_filter_budget_round_trip():
    for order in (8.0, 13.0, 64.0):
        rho = rdp.filter_budget_for_epsilon(2.0, order=order, delta=1e-5)
        g = rdp.filter_guarantee(rho, order=order, delta=1e-5)
        assert g.epsilon == pytest.approx(2.0, rel=1e-12)
        assert g.method == "rdp-filter" and g.parts == {"order": order, "budget": rho}
    with pytest.raises(ParameterError, match="no positive RDP budget"):
        rdp.filter_budget_for_epsilon(0.5, order=2.0, delta=1e-5)


def test_filter_guarantee_at_best_order_equals_fixed():
    fixed = rdp.confident_gnmax_guarantee(50.0, 20.0, n_queries=1000, delta=1e-5)
    a = fixed.parts["order"]
    g = rdp.filter_guarantee(fixed.parts["rdp_at_order"], order=a, delta=1e-5)
    assert g.epsilon == pytest.approx(fixed.parts["epsilon_rdp"], rel=1e-12) and fixed.epsilon < g.epsilon


# ---------------------------------------------------------------------------- validation


@pytest.mark.parametrize("call, match", [
    (lambda: rdp.gaussian_rdp(0.0), "sigma"),
    (lambda: rdp.gaussian_rdp(float("nan")), "sigma"),
    (lambda: rdp.gaussian_rdp(1.0, orders=[0.5, 2.0]), "orders"),
    (lambda: rdp.gnmax_rdp(1.0, n_answers=-1), "n_answers"),
    (lambda: rdp.gnmax_rdp(1.0, n_answers=2.5), "n_answers"),
    (lambda: rdp.confident_gnmax_rdp(1.0, -2.0, n_queries=3), "sigma2"),
    (lambda: rdp.rdp_to_dp(np.ones(3), delta=1e-5), "one value per order"),
    (lambda: rdp.rdp_to_dp(-np.ones(rdp.ORDERS.size), delta=1e-5), "non-negative"),
    (lambda: rdp.rdp_to_dp(np.ones(rdp.ORDERS.size), delta=0.0), "delta"),
    (lambda: rdp.gnmax_guarantee(1.0, n_answers=0, delta=1e-5), "n_answers"),
    (lambda: rdp.gnmax_sigma_for_epsilon(0.0, n_answers=10, delta=1e-5), "epsilon"),
    (lambda: rdp.gnmax_sigma_for_epsilon([1.0, -1.0], n_answers=10, delta=1e-5), "epsilon"),
    (lambda: rdp.confident_gnmax_sigmas_for_epsilon(1.0, n_queries=10, delta=1e-5, ratio=0.0), "ratio"),
    (lambda: rdp.filter_guarantee(1.0, order=1.0, delta=1e-5), "order"),
    (lambda: rdp.filter_guarantee(0.0, order=3.0, delta=1e-5), "budget"),
])
def test_validation(call, match):
    with pytest.raises(ParameterError, match=match):
        call()
