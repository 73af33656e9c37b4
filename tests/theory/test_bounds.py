"""Tests of core.theory: hand-computed values (arithmetic in the comments), the loop
solver, monotonicity properties, feasibility boundary and vectorization."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import accounting
from core import theory as bounds
from core.errors import ParameterError
from core.noise import discrete_laplace

PROP = settings(deadline=None, max_examples=60, derandomize=True)


# ---------------------------------------------------------------------------------------
# one implementation: the accounting helpers are re-exported, not re-implemented
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "btt_noise_scale",
        "btt_threshold",
        "advanced_composition_epsilon",
        "advanced_composition_eps0",
        "pate_simple_epsilon",
    ],
)
def test_reexports_are_the_accounting_functions(name):
    assert getattr(bounds, name) is getattr(accounting, name)
    assert name in bounds.__all__


# ---------------------------------------------------------------------------------------
# Theorem 3.2
# ---------------------------------------------------------------------------------------


def test_cutoff_T_hand_values():
    # γ=0, α=0.01, m=1000, β=0.05: (γ+α)m = 10; log(m/β) = log(20000) = 9.90349;
    # sqrt(10·9.90349/2) = sqrt(49.5174) = 7.03686; T = 3(10 + 7.03686) = 51.1106
    assert bounds.cutoff_T(0, 0.01, 1000, 0.05) == pytest.approx(51.1106, abs=1e-3)
    # γ=0.05, α=0.02: (γ+α)m = 70; sqrt(70·9.90349/2) = sqrt(346.622) = 18.6178;
    # T = 3(70 + 18.6178) = 265.853
    assert bounds.cutoff_T(0.05, 0.02, 1000, 0.05) == pytest.approx(265.853, abs=1e-3)


def test_misclassification_bound_is_T_over_m():
    # 51.1106 / 1000
    assert bounds.misclassification_bound(0, 0.01, 1000, 0.05) == pytest.approx(0.0511106, abs=1e-6)
    # 265.853 / 1000
    assert bounds.misclassification_bound(0.05, 0.02, 1000, 0.05) == pytest.approx(0.265853, abs=1e-6)


# ---------------------------------------------------------------------------------------
# Algorithm 2 parameters and soft labels
# ---------------------------------------------------------------------------------------


def test_btt_parameters_hand_values():
    # λ = sqrt(32·10·log(2/1e-5)) / 1 = sqrt(320 · 12.20607) = sqrt(3905.943) = 62.4975
    lam = bounds.btt_noise_scale(10, 1.0, 1e-5)
    assert lam == pytest.approx(62.4975, abs=1e-3)
    # w = 2λ log(2·1000/1e-5) = 124.995 · log(2e8) = 124.995 · 19.11383 = 2389.13
    assert bounds.btt_threshold(lam, 1000, 1e-5) == pytest.approx(2389.13, abs=0.01)
    # k = 34·√2·λ·log(4·1000·10/min(1e-5, 0.025)) = 48.0833 · 62.4975 · log(4e9)
    #   = 48.0833 · 62.4975 · 22.10956 = 66,441.1
    assert bounds.btt_num_teachers(lam, 1000, 10, 1e-5, 0.05) == pytest.approx(66441.1, abs=0.5)


def test_btt_soft_parameters_hand_values():
    # 2T = 20 rounds: λ = sqrt(32·20·log(2e5)) = sqrt(7811.886) = 88.3849
    lam = bounds.btt_soft_noise_scale(10, 1.0, 1e-5)
    assert lam == pytest.approx(88.3849, abs=1e-3)
    # 2m = 2000 tests: w = 2λ log(2·2000/1e-5) = 176.770 · log(4e8) = 176.770 · 19.80698 = 3501.27
    assert bounds.btt_soft_threshold(lam, 1000, 1e-5) == pytest.approx(3501.27, abs=0.01)
    # k = 48.0833 · 88.3849 · log(4·2000·20/1e-5) = 48.0833 · 88.3849 · log(1.6e10)
    #   = 48.0833 · 88.3849 · 23.49585 = 99,853.5
    assert bounds.btt_soft_num_teachers(lam, 1000, 10, 1e-5, 0.05) == pytest.approx(99853.5, abs=0.5)


def test_k_uses_beta_when_beta_half_is_below_delta():
    # min(δ, β/2) = min(0.1, 0.01) = 0.01: k = 48.0833 · 1 · log(4·10·1/0.01) = 48.0833 · log(4000)
    #   = 48.0833 · 8.29405 = 398.806
    assert bounds.btt_num_teachers(1.0, 10, 1, 0.1, 0.02) == pytest.approx(398.806, abs=1e-2)


# ---------------------------------------------------------------------------------------
# Baselines of the issue (accounting functions reached through core.theory)
# ---------------------------------------------------------------------------------------


def test_advanced_composition_hand_values_and_inverse():
    # 100 steps: sqrt(2·100·log(1e5))·0.05 + 100·0.05·(e^0.05 − 1)
    #   = sqrt(2302.585)·0.05 + 5·0.0512711 = 2.39963 + 0.25636 = 2.6560
    assert float(bounds.advanced_composition_epsilon(0.05, 100, 1e-5)) == pytest.approx(2.6556, abs=1e-3)
    # 1000 steps: sqrt(23025.85)·0.05 + 50·0.0512711 = 7.58714 + 2.56355 = 10.1507
    assert float(bounds.advanced_composition_epsilon(0.05, 1000, 1e-5)) == pytest.approx(10.1507, abs=1e-3)
    for k in (100, 1000):
        eps = float(bounds.advanced_composition_epsilon(0.05, k, 1e-5))
        assert float(bounds.advanced_composition_eps0(eps, k, 1e-5)) == pytest.approx(0.05, rel=1e-9)


def test_pate_simple_bound_hand_values():
    # 4·100·0.05² + 2·0.05·sqrt(2·100·log(1e5)) = 1 + 0.1·47.9853 = 5.79853
    assert bounds.pate_simple_epsilon(0.05, n_answers=100, delta=1e-5) == pytest.approx(5.7985, abs=1e-3)
    # 4·1000·0.0025 + 0.1·sqrt(2000·log(1e6)) = 10 + 0.1·166.226 = 26.6226
    assert bounds.pate_simple_epsilon(0.05, n_answers=1000, delta=1e-6) == pytest.approx(26.62, abs=1e-2)


# ---------------------------------------------------------------------------------------
# VC bounds
# ---------------------------------------------------------------------------------------


def test_realizable_sample_size_hand_value():
    # max((4/0.05) log2(2/0.01), (8·10/0.05) log2(13/0.05)) = max(80·7.64386, 1600·8.02237)
    #   = max(611.51, 12835.79) = 12835.79 ≈ 12,836
    assert bounds.realizable_sample_size(10, 0.05, 0.01) == pytest.approx(12835.79, abs=0.01)


def test_realizable_sample_size_first_term_can_dominate():
    # V = 1, α = 0.5, β = 1e-6: (4/0.5) log2(2e6) = 8·20.9316 = 167.45;
    # (8/0.5) log2(26) = 16·4.70044 = 75.21  -> 167.45
    assert bounds.realizable_sample_size(1, 0.5, 1e-6) == pytest.approx(167.45, abs=0.01)


def test_agnostic_error_hand_value():
    # (8·10·log(2e·10000/10) + 8·log(4/0.01)) / 10000 = (80·8.60090 + 8·5.99146) / 1e4
    #   = (688.072 + 47.932) / 1e4 = 0.0736004;  sqrt = 0.271294
    assert bounds.agnostic_error(10, 10_000, 0.01) == pytest.approx(0.271294, abs=1e-5)


def test_realizable_error_inverts_the_sample_size():
    for V, alpha, beta in [(10, 0.05, 0.01), (3, 0.2, 0.1), (50, 0.001, 1e-6)]:
        N = bounds.realizable_sample_size(V, alpha, beta)
        assert bounds.realizable_error(V, N, beta) == pytest.approx(alpha, rel=1e-9)
    # V=10, N=12835.79, β=0.01 gives back α = 0.05 (the hand value above)
    assert bounds.realizable_error(10, 12835.7885, 0.01) == pytest.approx(0.05, rel=1e-6)


def test_vc_bounds_are_vacuous_with_too_few_samples():
    # realizable: even α → 1 needs max(4·log2(200), 80·log2(13)) = max(30.6, 296.0) samples
    assert bounds.realizable_error(10, 100, 0.01) == 1.0
    # agnostic: N < V, or the formula above 1
    assert bounds.agnostic_error(10, 5, 0.01) == 1.0
    assert bounds.agnostic_error(10, 100, 0.01) == 1.0
    assert bounds.teacher_error(10, 10_000, 0.01, "agnostic") == bounds.agnostic_error(10, 10_000, 0.01)


# ---------------------------------------------------------------------------------------
# The loop solver
# ---------------------------------------------------------------------------------------


def _check_relations(res, n, V, eps, delta, beta, m, gamma, setting):
    # relation 1: α is the teachers' error at n/k samples with failure probability β/k
    a = bounds.teacher_error(V, n / res.k, beta / res.k, setting)
    assert a == pytest.approx(res.alpha, rel=1e-6)
    # relation 2: T = max(1, cutoff_T(γ, α, m, β))
    assert max(1.0, bounds.cutoff_T(gamma, res.alpha, m, beta)) == pytest.approx(res.T, rel=1e-6)
    # relation 3: k = btt_num_teachers(λ(T), m, T, δ, β), λ the paper's
    assert bounds.btt_noise_scale(res.T, eps, delta) == pytest.approx(res.noise_scale, rel=1e-12)
    assert bounds.btt_num_teachers(res.noise_scale, m, res.T, delta, beta) == pytest.approx(res.k, rel=1e-6)
    assert res.misclassification == pytest.approx(res.T / m, rel=1e-12)


@pytest.mark.parametrize(
    "n, V, eps, delta, beta, m, gamma, setting",
    [
        (1e10, 10, 1.0, 1e-5, 0.05, 1000, 0.0, "realizable"),
        (1e9, 10, 8.0, 1e-5, 0.05, 1000, 0.0, "realizable"),
        (1e8, 5, 8.0, 1e-6, 0.1, 20, 0.0, "realizable"),
        (1e11, 10, 1.0, 1e-5, 0.05, 1000, 0.0, "agnostic"),
        (1e12, 10, 2.0, 1e-5, 0.05, 1000, 0.02, "agnostic"),
    ],
)
def test_solver_relations_hold_when_feasible(n, V, eps, delta, beta, m, gamma, setting):
    res = bounds.solve_btt_parameters(n, V, eps, delta, beta, m, gamma, setting=setting, calibration="paper")
    assert res.feasible, res.reason
    assert res.reason is None and res.n_needed is None
    assert 1.0 <= res.k <= n and 0 < res.alpha < 1 and 1.0 <= res.T < m
    _check_relations(res, n, V, eps, delta, beta, m, gamma, setting)


def test_solver_realizable_example_values():
    # the docstring example: n = 1e10, V = 10, ε = 1, δ = 1e-5, β = 0.05, m = 1000
    res = bounds.solve_btt_parameters(1e10, 10, 1.0, 1e-5, 0.05, 1000, calibration="paper")
    assert res.k == pytest.approx(192_769, rel=1e-5)
    assert res.alpha == pytest.approx(0.0150439, rel=1e-5)
    assert res.T == pytest.approx(71.0245, rel=1e-5)
    assert res.misclassification == pytest.approx(0.0710245, rel=1e-5)


def test_solver_finds_the_smallest_consistent_k():
    n, V, eps, delta, beta, m = 1e10, 10, 1.0, 1e-5, 0.05, 1000
    res = bounds.solve_btt_parameters(n, V, eps, delta, beta, m, calibration="paper")
    for k in (res.k * 0.999, res.k * 0.9, res.k * 0.5):  # below the fixed point: k < k_req(k)
        a = bounds.realizable_error(V, n / k, beta / k)
        T = max(1.0, bounds.cutoff_T(0, a, m, beta))
        assert k < bounds.btt_num_teachers(bounds.btt_noise_scale(T, eps, delta), m, T, delta, beta)


def test_solver_says_no_k_works_for_small_n():
    res = bounds.solve_btt_parameters(1e5, 10, 1.0, 1e-5, 0.05, 1000, calibration="paper")
    assert not res.feasible
    assert "no k works" in res.reason
    assert res.n_needed is not None and res.n_needed > 1e5
    assert f"n ≈ {float(f'{res.n_needed:.3g}'):,.0f} private rows" in res.reason  # in full: 1,200,000,000
    # "roughly": a little more than n_needed works, a little less does not
    assert bounds.solve_btt_parameters(res.n_needed * 1.01, 10, 1.0, 1e-5, 0.05, 1000, calibration="paper").feasible
    assert not bounds.solve_btt_parameters(res.n_needed / 1.05, 10, 1.0, 1e-5, 0.05, 1000, calibration="paper").feasible


def test_solver_vacuous_bound_and_hopeless_gamma():
    # a fixed point exists at n = 1e9 but gives T >= m (bound >= 1)
    res = bounds.solve_btt_parameters(1e9, 10, 1.0, 1e-5, 0.05, 1000, calibration="paper")
    assert not res.feasible and "no k works" in res.reason and res.T >= 1000
    # γ = 0.4: T >= 3·0.4·m = 1.2 m whatever n is
    res = bounds.solve_btt_parameters(1e11, 10, 1.0, 1e-5, 0.05, 1000, 0.4, setting="agnostic", calibration="paper")
    assert not res.feasible and res.n_needed is None and "no n up to 10^18" in res.reason


@pytest.mark.slow
def test_solver_tight_calibration():
    n, V, eps, delta, beta, m = 1e8, 10, 8.0, 1e-5, 0.05, 20
    paper = bounds.solve_btt_parameters(n, V, eps, delta, beta, m, calibration="paper")
    tight = bounds.solve_btt_parameters(n, V, eps, delta, beta, m, calibration="tight")
    assert tight.feasible and paper.feasible
    assert tight.k < paper.k and tight.misclassification <= paper.misclassification
    a = bounds.realizable_error(V, n / tight.k, beta / tight.k)
    assert a == pytest.approx(tight.alpha, rel=1e-6)
    assert max(1.0, bounds.cutoff_T(0, a, m, beta)) == pytest.approx(tight.T, rel=1e-6)
    lam = accounting.calibrate_btt(eps, delta=delta, T=math.ceil(tight.T), m=m, calibration="tight").noise_scale
    assert lam == pytest.approx(tight.noise_scale, rel=1e-12)
    # k >= k_req (equality unless k sits just above a step of λ)
    assert tight.k >= bounds.btt_num_teachers(lam, m, tight.T, delta, beta) * (1 - 1e-9)


@settings(deadline=None, max_examples=15, derandomize=True)
@given(
    log_n=st.floats(9.5, 13.0),
    factor=st.floats(1.5, 100.0),
    eps=st.floats(0.5, 10.0),
)
def test_solver_bound_improves_with_n(log_n, factor, eps):
    n = 10.0**log_n
    a = bounds.solve_btt_parameters(n, 10, eps, 1e-5, 0.05, 1000, calibration="paper")
    b = bounds.solve_btt_parameters(n * factor, 10, eps, 1e-5, 0.05, 1000, calibration="paper")
    if a.feasible:
        assert b.feasible
        assert b.misclassification <= a.misclassification * (1 + 1e-9)


# ---------------------------------------------------------------------------------------
# Monotonicity properties
# ---------------------------------------------------------------------------------------

unit = st.floats(0.0, 0.5)
betas = st.floats(1e-4, 0.5)


@PROP
@given(gamma=unit, a1=unit, a2=unit, m=st.integers(1, 10**6), beta=betas)
def test_T_grows_with_alpha(gamma, a1, a2, m, beta):
    lo, hi = sorted((a1, a2))
    assert bounds.cutoff_T(gamma, lo, m, beta) <= bounds.cutoff_T(gamma, hi, m, beta)


@PROP
@given(gamma=unit, alpha=unit, m1=st.integers(1, 10**6), m2=st.integers(1, 10**6), beta=betas)
def test_T_grows_with_m(gamma, alpha, m1, m2, beta):
    lo, hi = sorted((m1, m2))
    assert bounds.cutoff_T(gamma, alpha, lo, beta) <= bounds.cutoff_T(gamma, alpha, hi, beta)


@PROP
@given(
    T=st.integers(1, 10**4),
    e1=st.floats(0.01, 50.0),
    e2=st.floats(0.01, 50.0),
    delta=st.floats(1e-12, 0.1),
)
def test_lambda_falls_with_epsilon(T, e1, e2, delta):
    lo, hi = sorted((e1, e2))
    assert bounds.btt_noise_scale(T, hi, delta) <= bounds.btt_noise_scale(T, lo, delta)
    assert bounds.btt_soft_noise_scale(T, hi, delta) <= bounds.btt_soft_noise_scale(T, lo, delta)
    if hi > lo * (1 + 1e-9):
        assert bounds.btt_noise_scale(T, hi, delta) < bounds.btt_noise_scale(T, lo, delta)


@PROP
@given(
    V=st.floats(1.0, 100.0),
    eps=st.floats(0.1, 10.0),
    log_n=st.floats(3.0, 9.0),
    u=st.floats(0.0, 1.0),
    gamma=st.floats(0.0, 0.3),
    setting=st.sampled_from(["realizable", "agnostic"]),
)
def test_btt_rate_beats_composition_below_crossover(V, eps, log_n, u, gamma, setting):
    n = 10.0**log_n
    g = gamma if setting == "agnostic" else 0.0
    M = float(bounds.crossover_m(V, eps, n, setting, g))
    if M < 1:
        return
    m = M**u  # 1 <= m <= M, log-uniform
    btt = bounds.misclassification_rate_btt(m, V, eps, n, setting, g)
    comp = bounds.misclassification_rate_composition(m, V, eps, n, setting, g)
    assert btt <= comp * (1 + 1e-12)


@PROP
@given(V=st.floats(1.0, 50.0), beta=st.floats(1e-6, 0.5), N1=st.floats(1e2, 1e8), N2=st.floats(1e2, 1e8))
def test_teacher_errors_fall_with_samples(V, beta, N1, N2):
    lo, hi = sorted((N1, N2))
    assert bounds.realizable_error(V, hi, beta) <= bounds.realizable_error(V, lo, beta)
    assert bounds.agnostic_error(V, hi, beta) <= bounds.agnostic_error(V, lo, beta)


# ---------------------------------------------------------------------------------------
# Rates, crossovers and sample complexities
# ---------------------------------------------------------------------------------------


def test_rate_hand_values():
    # V=10, ε=1, n=1e4: x = V/(εn) = 1e-3, realizable crossover M = εn/V = 1000
    assert bounds.crossover_m(10, 1.0, 1e4) == pytest.approx(1000.0)
    # m = 10 <= M: rate = x = 1e-3; m = 1e4 > M: m x² = 1e4 · 1e-6 = 0.01
    assert bounds.misclassification_rate_btt(10, 10, 1.0, 1e4) == pytest.approx(1e-3)
    assert bounds.misclassification_rate_btt(1e4, 10, 1.0, 1e4) == pytest.approx(0.01)
    # composition at m = 100: sqrt(100) · 1e-3 = 0.01
    assert bounds.misclassification_rate_composition(100, 10, 1.0, 1e4) == pytest.approx(0.01)
    # agnostic, γ = 0: sqrt(x) = 0.0316228 up to M = sqrt(1000) = 31.6228;
    # m = 1000: m^{1/3} x^{2/3} = 10 · 0.01 = 0.1
    assert bounds.crossover_m(10, 1.0, 1e4, "agnostic") == pytest.approx(31.6228, abs=1e-4)
    assert bounds.misclassification_rate_btt(5, 10, 1.0, 1e4, "agnostic") == pytest.approx(0.0316228, abs=1e-7)
    assert bounds.misclassification_rate_btt(1000, 10, 1.0, 1e4, "agnostic") == pytest.approx(0.1)
    # agnostic composition at m = 1e4: γ + sqrt(sqrt(1e4) · 1e-3) = sqrt(0.1) = 0.316228
    assert bounds.misclassification_rate_composition(1e4, 10, 1.0, 1e4, "agnostic") == pytest.approx(
        0.316228, abs=1e-6
    )
    # γ = 0.01: M = min(1/0.01, 31.6) = 31.6;  γ = 0.1: M = min(10, 31.6) = 10
    assert bounds.crossover_m(10, 1.0, 1e4, "agnostic", 0.01) == pytest.approx(31.6228, abs=1e-4)
    assert bounds.crossover_m(10, 1.0, 1e4, "agnostic", 0.1) == pytest.approx(10.0)
    # γ = 0.1 adds to the rate: 0.1 + 0.0316228
    assert bounds.misclassification_rate_btt(5, 10, 1.0, 1e4, "agnostic", 0.1) == pytest.approx(0.1316228)


@pytest.mark.parametrize("setting", ["realizable", "agnostic"])
def test_rate_is_continuous_at_the_crossover(setting):
    M = float(bounds.crossover_m(10, 2.0, 1e6, setting))
    below = bounds.misclassification_rate_btt(M * (1 - 1e-9), 10, 2.0, 1e6, setting)
    above = bounds.misclassification_rate_btt(M * (1 + 1e-9), 10, 2.0, 1e6, setting)
    assert below == pytest.approx(above, rel=1e-6)
    # flat below M, growing above
    assert bounds.misclassification_rate_btt(M / 10, 10, 2.0, 1e6, setting) == pytest.approx(below, rel=1e-6)
    assert bounds.misclassification_rate_btt(M * 10, 10, 2.0, 1e6, setting) > above


def test_sample_complexity_hand_values():
    # α = 0.01, V = 10, ε = 1: V^{3/2} = 31.6228
    # Thm 4.2: 31.6228 / 0.01^{1.5} = 31.6228 / 1e-3 = 31,622.8
    assert bounds.sample_complexity_private(0.01, 10, 1.0, "realizable") == pytest.approx(31622.8, abs=0.1)
    # Thm 4.3: 31.6228 / 0.01^{2.5} = 31.6228 / 1e-5 = 3,162,278
    assert bounds.sample_complexity_private(0.01, 10, 1.0, "agnostic") == pytest.approx(3162278, abs=1)
    # Remark 2: 31.6228 / 0.01 = 3,162.28
    assert bounds.sample_complexity_private(0.01, 10, 1.0, "realizable_erm") == pytest.approx(3162.28, abs=0.01)
    # Remark 3: 100 / 0.01 = 10,000
    assert bounds.sample_complexity_private(0.01, 10, 1.0, "realizable_efficient") == pytest.approx(1e4)
    # ε = 4 divides by 4
    assert bounds.sample_complexity_private(0.01, 10, 4.0, "realizable_efficient") == pytest.approx(2500.0)
    # non-private: V/α = 1000, V/α² = 100,000
    assert bounds.sample_complexity_nonprivate(0.01, 10, "realizable") == pytest.approx(1000.0)
    assert bounds.sample_complexity_nonprivate(0.01, 10, "agnostic") == pytest.approx(1e5)


# ---------------------------------------------------------------------------------------
# Pass probability and the minimum number of teachers
# ---------------------------------------------------------------------------------------


def _brute_dlap_diff_tail(b1, b2, a, half=4000):
    """P[Z1 − Z2 > a] by explicit convolution of the two pmfs on [−half, half]."""
    z = np.arange(-half, half + 1)
    p1, p2 = math.exp(-1 / b1), math.exp(-1 / b2)
    f1 = (1 - p1) / (1 + p1) * p1 ** np.abs(z)
    f2 = (1 - p2) / (1 + p2) * p2 ** np.abs(z)
    y = np.convolve(f1, f2[::-1])
    ys = np.arange(-2 * half, 2 * half + 1)
    return y[ys > a].sum()


@pytest.mark.parametrize("lam", [1.0, 3.0, 12.5])
def test_discrete_pass_probability_matches_convolution(lam):
    w = 10.3
    d = np.array([0, 3, 10, 11, 15, 40, 90])
    got = bounds.btt_pass_probability(d, lam, w)
    want = [_brute_dlap_diff_tail(2 * lam, lam, w - di) for di in d]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-15)


def test_pass_probability_matches_the_noise_module():
    # Monte Carlo with core.noise.discrete_laplace: d + DLap(2λ) > w + DLap(λ)
    lam, w, d = 4.0, 20.5, 17
    rng = np.random.default_rng(12345)
    n = 200_000
    passed = (d + discrete_laplace(2 * lam, n, rng) > w + discrete_laplace(lam, n, rng)).mean()
    p = float(bounds.btt_pass_probability(d, lam, w))
    assert abs(passed - p) < 5 * math.sqrt(p * (1 - p) / n)


def test_continuous_pass_probability_closed_form():
    # d = w: symmetric difference, exactly 1/2
    assert bounds.btt_pass_probability(100, 5.0, 100.0, discrete=False) == pytest.approx(0.5)
    # d = 0, w = 10, λ = 5 (b1 = 10, b2 = 5): (100 e^{-1} − 25 e^{-2}) / (2·75)
    #   = (36.7879 − 3.38338) / 150 = 0.222697
    assert bounds.btt_pass_probability(0, 5.0, 10.0, discrete=False) == pytest.approx(0.222697, abs=1e-6)
    # by symmetry d = 20: 1 − 0.222697
    assert bounds.btt_pass_probability(20, 5.0, 10.0, discrete=False) == pytest.approx(0.777303, abs=1e-6)


def test_btt_min_teachers_hand_value_and_boundary():
    # paper: w = 2389.13, so k_min = 2·floor(w) + 3 = 4781:
    # d(4781) = ceil(4781/2) − 1 = 2390 > w;  d(4780) = 2389 < w
    k = bounds.btt_min_teachers(1.0, 1e-5, 10, 1000, calibration="paper")
    assert k == 4781
    cal = accounting.calibrate_btt(1.0, delta=1e-5, T=10, m=1000, calibration="paper")
    lam, w = cal.noise_scale, cal.threshold

    def p(kk):
        return float(bounds.btt_pass_probability(math.ceil(kk / 2) - 1, lam, w))

    assert p(k) >= 0.5 > p(k - 1)
    # continuous noise: d >= w, k = 2·ceil(w) + 1 = 4781 as well (w is not a whole number)
    assert bounds.btt_min_teachers(1.0, 1e-5, 10, 1000, discrete=False, calibration="paper") == 4781


@pytest.mark.parametrize(
    "eps, delta, T, m, calibration, soft",
    [
        (1.0, 1e-5, 10, 1000, "paper", True),
        (4.0, 1e-6, 3, 50, "paper", False),
        (8.0, 1e-5, 5, 100, "tight", False),
    ],
)
def test_btt_min_teachers_is_the_smallest_k_by_scan(eps, delta, T, m, calibration, soft):
    cal = accounting.calibrate_btt(eps, delta=delta, T=T, m=m, calibration=calibration, soft=soft)
    k_min = bounds.btt_min_teachers(eps, delta, T, m, calibration, soft)
    ks = np.arange(1, 2 * k_min + 10)
    dist = np.ceil(ks / 2) - 1  # unanimous vote: margin k (docs/design.md §2)
    for discrete in (True, False):
        passes = bounds.btt_pass_probability(dist, cal.noise_scale, cal.threshold, discrete=discrete) >= 0.5
        first = int(ks[np.argmax(passes)])
        assert passes[first - 1:].all()  # monotone in k after the first
        assert first == bounds.btt_min_teachers(eps, delta, T, m, calibration, soft, discrete=discrete)


def test_soft_min_teachers_uses_soft_calibration():
    # soft: w = 3501.27 (2T rounds, 2m tests), k = 2·3501 + 3 = 7005
    assert bounds.btt_min_teachers(1.0, 1e-5, 10, 1000, soft=True, calibration="paper") == 7005


# ---------------------------------------------------------------------------------------
# Answered-query models
# ---------------------------------------------------------------------------------------


def test_expected_answers_btt_model_extremes():
    # unanimous and correct votes far above the threshold: every one of m queries answered
    assert bounds.expected_answers_btt(20_000, 0.0, 1.0, 1e-5, 10, 1000, calibration="paper") == pytest.approx(1000.0, rel=1e-9)
    # 100 teachers cannot reach w ≈ 2389: essentially nothing answered
    assert bounds.expected_answers_btt(100, 0.0, 1.0, 1e-5, 10, 1000, calibration="paper") < 1e-6


def test_expected_answers_btt_formula_for_a_fixed_margin():
    # α = 0: every query has distance d = ceil(k/2) − 1 and passes with p; the model's
    # expectation is p · Σ_{i<m} P[Binomial(i, 1−p) <= T−1]; with k = 4781, d = 2390 and
    # p = P[pass] just above 1/2.  Check against a direct simulation of the model.
    k, T, m = 4781, 10, 1000
    cal = accounting.calibrate_btt(1.0, delta=1e-5, T=T, m=m, calibration="paper")
    p = float(bounds.btt_pass_probability(math.ceil(k / 2) - 1, cal.noise_scale, cal.threshold))
    rng = np.random.default_rng(7)
    fails = rng.random((20_000, m)) >= p
    answered_before_halt = ((np.cumsum(fails, axis=1) < T) & ~fails).sum(axis=1)
    got = bounds.expected_answers_btt(k, 0.0, 1.0, 1e-5, T, m, calibration="paper")
    # about T p/(1−p) ≈ 10 when p ≈ 1/2
    assert got == pytest.approx(answered_before_halt.mean(), rel=0.02)
    assert got == pytest.approx(T * p / (1 - p), rel=0.05)


def test_expected_answers_tight_at_least_paper():
    ks = np.array([1000, 3000, 5000])
    paper = bounds.expected_answers_btt(ks, 0.02, 1.0, 1e-5, 10, 1000, "paper")
    tight = bounds.expected_answers_btt(ks, 0.02, 1.0, 1e-5, 10, 1000, "tight")
    assert np.all(tight >= paper)
    assert np.all(np.diff(paper) >= 0)  # more teachers, more answers


def test_expected_answers_composition_hand_value():
    # composition_baseline_parameters(1, 1e-5, 1000): δ' = 5e-6, δ0 = 5e-9, ε0 solves
    # sqrt(2000 log(2e5)) ε0 + 1000 ε0 (e^ε0 − 1) = 1, Γ = log(2e8)/ε0.  With α = 0 every
    # query has d = ceil(k/2) − 1 and passes with P[DLap(1/ε0) > Γ − d] = p0^(floor(Γ−d)+1)/(1+p0),
    # p0 = e^{−ε0}, for Γ − d >= 0.
    par = accounting.composition_baseline_parameters(1.0, delta=1e-5, m=1000)
    eps0, gam = par.eps0, par.threshold
    k = 4001
    d = math.ceil(k / 2) - 1  # 2000
    p0 = math.exp(-eps0)
    want = 1000 * p0 ** (math.floor(gam - d) + 1) / (1 + p0)
    assert bounds.expected_answers_composition(k, 0.0, 1.0, 1e-5, 1000) == pytest.approx(want, rel=1e-9)
    # far above Γ: all m answered
    assert bounds.expected_answers_composition(40_000, 0.0, 1.0, 1e-5, 1000) == pytest.approx(1000.0, rel=1e-9)


def test_expected_answers_models_vectorize():
    ks = np.array([[1000, 5000], [8000, 20000]])
    alphas = np.array([0.0, 0.05])
    out = bounds.expected_answers_btt(ks, alphas, 1.0, 1e-5, 10, 1000, calibration="paper")
    assert out.shape == (2, 2)
    assert out[1, 0] == pytest.approx(bounds.expected_answers_btt(8000, 0.0, 1.0, 1e-5, 10, 1000, calibration="paper"))
    out = bounds.expected_answers_composition(ks, alphas, 1.0, 1e-5, 1000)
    assert out.shape == (2, 2)
    assert out[0, 1] == pytest.approx(bounds.expected_answers_composition(5000, 0.05, 1.0, 1e-5, 1000))


# ---------------------------------------------------------------------------------------
# Remark 1
# ---------------------------------------------------------------------------------------


def test_private_error_estimate_is_unbiased_away_from_the_clip():
    # 50 errors out of 1000, ε = 1: estimate 0.05 + Lap(1)/1000, sd sqrt(2)/1000 per draw
    est = bounds.private_error_estimate(np.full(20_000, 50), 1000, 1.0, rng=2024)
    assert est.shape == (20_000,)
    assert abs(est.mean() - 0.05) < 5 * math.sqrt(2) / 1000 / math.sqrt(20_000)
    assert est.std() == pytest.approx(math.sqrt(2) / 1000, rel=0.05)


def test_private_error_estimate_is_clipped_and_reproducible():
    est = bounds.private_error_estimate(np.zeros(1000, int), 10, 0.1, rng=1)
    assert est.min() >= 0.0 and est.max() <= 1.0 and np.any(est == 0.0) and np.any(est == 1.0)
    a = bounds.private_error_estimate(3, 100, 1.0, rng=5)
    b = bounds.private_error_estimate(3, 100, 1.0, rng=5)
    assert a == b and np.ndim(a) == 0


def test_error_estimate_budget_split():
    # 10% of ε = 2 for the estimate: 0.2 and 1.8, adding up to 2 (basic composition)
    split = bounds.error_estimate_budget_split(2.0, 0.1)
    assert split.epsilon_estimate == pytest.approx(0.2)
    assert split.epsilon_labeling == pytest.approx(1.8)
    assert sum(split) == pytest.approx(2.0)


# ---------------------------------------------------------------------------------------
# Vectorization: array in, array of the same shape out
# ---------------------------------------------------------------------------------------

GRID = np.array([[0.01, 0.02, 0.05], [0.1, 0.2, 0.3]])


@pytest.mark.parametrize(
    "call",
    [
        lambda a: bounds.cutoff_T(0.0, a, 1000, 0.05),
        lambda a: bounds.misclassification_bound(a, 0.01, 1000, 0.05),
        lambda a: bounds.btt_noise_scale(10, a * 10, 1e-5),
        lambda a: bounds.btt_soft_noise_scale(10, a * 10, 1e-5),
        lambda a: bounds.btt_threshold(a * 100, 1000, 1e-5),
        lambda a: bounds.btt_soft_threshold(a * 100, 1000, 1e-5),
        lambda a: bounds.btt_num_teachers(a * 100, 1000, 10, 1e-5, 0.05),
        lambda a: bounds.btt_soft_num_teachers(a * 100, 1000, 10, 1e-5, 0.05),
        lambda a: bounds.realizable_sample_size(10, a, 0.01),
        lambda a: bounds.realizable_error(10, a * 1e6, 0.01),
        lambda a: bounds.agnostic_error(10, a * 1e6, 0.01),
        lambda a: bounds.misclassification_rate_btt(a * 1e4, 10, 1.0, 1e5),
        lambda a: bounds.misclassification_rate_btt(a * 1e4, 10, 1.0, 1e5, "agnostic", a / 10),
        lambda a: bounds.misclassification_rate_composition(a * 1e4, 10, 1.0, 1e5),
        lambda a: bounds.crossover_m(10, a * 10, 1e5, "agnostic", a / 10),
        lambda a: bounds.sample_complexity_private(a, 10, 1.0, "agnostic"),
        lambda a: bounds.sample_complexity_nonprivate(a, 10, "agnostic"),
        lambda a: bounds.btt_pass_probability(a * 1e4, 62.5, 2389.1),
    ],
)
def test_vectorized_shape_and_elementwise_agreement(call):
    out = np.asarray(call(GRID))
    assert out.shape == GRID.shape
    for idx in np.ndindex(GRID.shape):
        assert out[idx] == pytest.approx(float(call(GRID[idx])), rel=1e-9)


def test_scalar_in_scalar_out():
    assert np.ndim(bounds.cutoff_T(0, 0.01, 1000, 0.05)) == 0
    assert np.ndim(bounds.realizable_error(10, 1e5, 0.01)) == 0
    assert np.ndim(bounds.btt_soft_noise_scale(10, 1.0, 1e-5)) == 0


# ---------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: bounds.cutoff_T(0, 1.5, 1000, 0.05),
        lambda: bounds.cutoff_T(0, 0.01, 1000, 1.0),
        lambda: bounds.cutoff_T(0, 0.01, -5, 0.05),
        lambda: bounds.realizable_sample_size(-1, 0.1, 0.01),
        lambda: bounds.realizable_sample_size(10, 0.0, 0.01),
        lambda: bounds.agnostic_error(10, [100, np.nan], 0.01),
        lambda: bounds.btt_num_teachers(0.0, 10, 1, 1e-5, 0.05),
        lambda: bounds.solve_btt_parameters(1e6, 10, 0.0, 1e-5, 0.05, 100, calibration="paper"),
        lambda: bounds.solve_btt_parameters(1e6, 10, 1.0, 1e-5, 0.05, 100, setting="other", calibration="paper"),
        lambda: bounds.solve_btt_parameters(1e6, 10, 1.0, 1e-5, 0.05, 100, calibration="loose"),
        lambda: bounds.misclassification_rate_btt(10, 10, 1.0, 1e4, "realizable", 0.1),
        lambda: bounds.sample_complexity_private(0.1, 10, 1.0, "semi"),
        lambda: bounds.expected_answers_btt(0, 0.1, 1.0, 1e-5, 10, 100, calibration="paper"),
        lambda: bounds.expected_answers_btt(10.5, 0.1, 1.0, 1e-5, 10, 100, calibration="paper"),
        lambda: bounds.private_error_estimate(11, 10, 1.0),
        lambda: bounds.private_error_estimate(1.5, 10, 1.0),
        lambda: bounds.error_estimate_budget_split(1.0, 1.0),
        lambda: bounds.btt_min_teachers(1.0, 1e-5, 0, 100, calibration="paper"),
    ],
)
def test_bad_parameters_raise_parameter_error(call):
    with pytest.raises(ParameterError):
        call()


def test_pass_probability_and_min_teachers_match_the_mechanism():
    # One unanimous query (m = 1) labeled by core.mechanisms.btt_label: answered exactly
    # when d + DLap(2λ) > w + DLap(λ).  Small λ makes the 1/2 boundary sharp:
    # ε = 20, δ = 1e-3, T = 1: λ = sqrt(32·log(2000))/20 = sqrt(243.23)/20 = 0.7798,
    # w = 2λ·log(2000) = 1.5596·7.6009 = 11.854, so k_min = 2·11 + 3 = 25.
    from core.mechanisms import btt_label

    eps, delta, T = 20.0, 1e-3, 1
    cal = accounting.calibrate_btt(eps, delta=delta, T=T, m=1, calibration="paper")
    assert cal.threshold == pytest.approx(11.854, abs=1e-3)
    k_min = bounds.btt_min_teachers(eps, delta, T, 1, calibration="paper")
    assert k_min == 25
    rng = np.random.default_rng(99)
    runs = 1500
    for k in (k_min - 1, k_min):
        p = float(bounds.btt_pass_probability(math.ceil(k / 2) - 1, cal.noise_scale, cal.threshold))
        answered = sum(btt_label([[k, 0]], epsilon=eps, delta=delta, T=T, calibration="paper", rng=rng).n_answered
                       for _ in range(runs))
        assert abs(answered / runs - p) < 5 * math.sqrt(p * (1 - p) / runs)
        assert (p >= 0.5) == (k == k_min)


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: bounds.btt_soft_noise_scale(10, 0.0, 1e-5), "epsilon"),
        (lambda: bounds.btt_soft_noise_scale(10, 1.0, 2.0), "delta"),
        (lambda: bounds.btt_soft_threshold(62.5, 0, 1e-5), "m (the number of queries)"),
        (lambda: bounds.btt_soft_num_teachers(62.5, 100, -1, 1e-5, 0.05), "T (the cutoff)"),
    ],
)
def test_soft_parameter_errors_name_the_parameter(call, words):
    with pytest.raises(ParameterError, match=re.escape(words)):
        call()


# ---------------------------------------------------------------------------------------
# Theorem 3.2's conditions for one run
# ---------------------------------------------------------------------------------------


def test_theorem_32_conditions_by_hand():
    """T and k from the printed formulas, by hand: e = 0.005, m = 2,000, β = 0.05; T = 5, ε = 4, δ = 1e-5."""
    import math

    from core.theory import theorem_32_conditions

    check = theorem_32_conditions(teacher_error=0.005, k=400, T=5, m=2000, epsilon=4.0, delta=1e-5, beta=0.05,
                                  n_private=16_000)
    em = 0.005 * 2000
    assert check.T_needed == pytest.approx(3 * (em + math.sqrt(em * math.log(2000 / 0.05) / 2)), rel=1e-12)
    lam = math.sqrt(32 * 5 * math.log(2 / 1e-5)) / 4.0
    k_needed = 34 * math.sqrt(2) * lam * math.log(4 * 2000 * 5 / min(1e-5, 0.05 / 2))
    assert check.k_needed == pytest.approx(k_needed, rel=1e-12)
    assert not check.holds and check.bound is None
    failing = {c.name for c in check.failing}
    assert failing == {"cutoff T", "number of teachers k"}
    text = check.sentence()
    assert text.startswith("Theorem 3.2 does not apply to this run")
    assert f"raise the cutoff T to {math.ceil(check.T_needed)}" in text and "this run has T = 5" in text
    assert f"use at least {math.ceil(k_needed):,} teachers" in text and "this run has k = 400" in text


def test_theorem_32_bound_only_where_every_condition_holds():
    from core.theory import cutoff_T, theorem_32_conditions

    e, m, beta = 1e-4, 2000, 0.05
    T = int(np.ceil(cutoff_T(e, 0.0, m, beta)))
    ok = theorem_32_conditions(teacher_error=e, k=10**6, T=T, m=m, epsilon=4.0, delta=1e-5, beta=beta)
    assert ok.holds and ok.bound == pytest.approx(T / m)
    assert ok.sentence().startswith("Theorem 3.2 applies to this run")
    # one short of the theorem's cutoff, or of its teachers, or more than two classes: no bound
    assert theorem_32_conditions(teacher_error=e, k=10**6, T=T - 1, m=m, epsilon=4.0, delta=1e-5, beta=beta).bound is None
    short_k = theorem_32_conditions(teacher_error=e, k=int(ok.k_needed) - 1, T=T, m=m, epsilon=4.0, delta=1e-5, beta=beta)
    assert [c.name for c in short_k.failing] == ["number of teachers k"]
    # k grows like 1/ε: the ε the fix names is exactly the one at which the run's k suffices
    eps_fix = 4.0 * short_k.k_needed / short_k.k
    assert theorem_32_conditions(teacher_error=e, k=short_k.k, T=T, m=m, epsilon=eps_fix * (1 + 1e-9), delta=1e-5,
                                 beta=beta).holds
    three = theorem_32_conditions(teacher_error=e, k=10**6, T=T, m=m, epsilon=4.0, delta=1e-5, beta=beta, n_classes=3)
    assert [c.name for c in three.failing] == ["two classes"] and three.bound is None
    # the fix for T names an error whose cutoff the run's T reaches
    for c in theorem_32_conditions(teacher_error=0.01, k=10**6, T=T, m=m, epsilon=4.0, delta=1e-5, beta=beta).failing:
        if c.name == "cutoff T":
            allowed = float(c.fix.rsplit("at most ", 1)[1])
            assert 0 < allowed and cutoff_T(allowed, 0.0, m, beta) <= T
