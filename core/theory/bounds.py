"""Theory calculators: the bounds of BTT (Bassily, Thakkar, Thakurta 2018) and its baselines.

Pure functions implementing DESIGN §3.2, §3.5 and §4, vectorized over their numeric
arguments (an array in gives an array of the broadcast shape out; all-scalar input gives
a numpy scalar), so that the app can draw curves.  Natural log everywhere unless a
formula names ``log2``.

Contents
--------
Algorithm 2 parameters (BTT)
    :func:`btt_noise_scale` (λ), :func:`btt_threshold` (w) and the composition helpers
    :func:`advanced_composition_epsilon`, :func:`advanced_composition_eps0`,
    :func:`pate_simple_epsilon` are re-exported from :mod:`core.accounting` (one
    implementation); :func:`btt_num_teachers` (k) and the soft-label versions
    :func:`btt_soft_noise_scale`, :func:`btt_soft_threshold`,
    :func:`btt_soft_num_teachers` (``2T`` rounds, ``2m`` tests) are here.
Theorem 3.2
    :func:`cutoff_T` and :func:`misclassification_bound`.
Explicit learners (VC bounds)
    :func:`realizable_sample_size`, :func:`realizable_error` (Blumer et al. 1989) and
    :func:`agnostic_error` (Vapnik), and the loop solver :func:`solve_btt_parameters`
    for ``T → α → k → T``.
Rates "up to constants and log factors"
    :func:`misclassification_rate_btt` (Theorems 3.4, 3.5),
    :func:`misclassification_rate_composition` (advanced composition), :func:`crossover_m`,
    :func:`sample_complexity_private` (Theorems 4.2, 4.3, Remarks 2, 3) and
    :func:`sample_complexity_nonprivate`.
Feasibility and answered-query models
    :func:`btt_pass_probability`, :func:`btt_min_teachers`,
    :func:`expected_answers_btt`, :func:`expected_answers_composition`.
Remark 1
    :func:`private_error_estimate`, :func:`error_estimate_budget_split`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple, Union

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize, stats

from core import noise as _noise
from core.accounting.composition import advanced_composition_eps0, advanced_composition_epsilon
from core.accounting.btt import btt_noise_scale, btt_threshold, calibrate_btt
from core.accounting.baseline import composition_baseline_parameters
from core.accounting.pate import pate_simple_epsilon
from core.errors import ParameterError
from core.mechanisms.stability import distance_to_instability, min_teachers_for_threshold
from core.validation import check_beta, check_delta, check_epsilon, check_k, check_m, check_probability, check_real_array, check_T

FloatOrArray = Union[np.floating, np.ndarray]
"""Return annotation of the vectorized functions: a numpy scalar for scalar input, else an array."""

__all__ = [
    # re-exported from core.accounting (one implementation)
    "btt_noise_scale",
    "btt_threshold",
    "advanced_composition_epsilon",
    "advanced_composition_eps0",
    "pate_simple_epsilon",
    # Algorithm 2 / soft labels
    "btt_num_teachers",
    "btt_soft_noise_scale",
    "btt_soft_threshold",
    "btt_soft_num_teachers",
    # Theorem 3.2
    "cutoff_T",
    "misclassification_bound",
    # VC bounds and the loop solver
    "realizable_sample_size",
    "realizable_error",
    "agnostic_error",
    "teacher_error",
    "BTTParameters",
    "solve_btt_parameters",
    # rates
    "misclassification_rate_btt",
    "misclassification_rate_composition",
    "crossover_m",
    "sample_complexity_private",
    "sample_complexity_nonprivate",
    # feasibility and answered-query models
    "btt_pass_probability",
    "btt_min_teachers",
    "expected_answers_btt",
    "expected_answers_composition",
    # Remark 1
    "private_error_estimate",
    "BudgetSplit",
    "error_estimate_budget_split",
]

SETTINGS = ("realizable", "agnostic")
"""Learning settings of the rate and solver functions."""

PRIVATE_SAMPLE_SETTINGS = ("realizable", "agnostic", "realizable_erm", "realizable_efficient")
"""Settings of :func:`sample_complexity_private` (Theorem 4.2, 4.3, Remark 2, Remark 3)."""

BLUMER_CONSTANTS = (4.0, 2.0, 8.0, 13.0)
"""Blumer et al. (1989): ``N >= max((4/α) log2(2/β), (8V/α) log2(13/α))``."""

VAPNIK_CONSTANTS = (8.0, 2.0, 8.0, 4.0)
"""Vapnik: ``α = sqrt((8V log(2eN/V) + 8 log(4/β)) / N)``."""


# ---------------------------------------------------------------------------------------
# helpers: elementwise validation through core.validation, and array plumbing
# ---------------------------------------------------------------------------------------


def _each(check, values, name: str) -> np.ndarray:
    """Run a scalar ``core.validation`` check on every distinct element of ``values``."""
    arr = np.asarray(values)
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.bool_)
    ):
        raise ParameterError(f"{name} must be a number or an array of numbers, got {values!r}.")
    if arr.size == 0:
        raise ParameterError(f"{name} must not be empty.")
    for v in np.unique(arr.ravel()):
        check(v.item(), name=name)
    return arr.astype(float)


def _positive(values, name: str, what: str) -> np.ndarray:
    """Every element a finite number > 0 (counts, sizes, dimensions)."""
    return check_real_array(values, name, 0.0, low_open=True, what=what)


def _nonnegative(values, name: str, what: str) -> np.ndarray:
    return check_real_array(values, name, 0.0, what=what)


def _unit(values, name: str, what: str) -> np.ndarray:
    """Elementwise ``0 <= x <= 1`` (error rates)."""
    return check_real_array(values, name, 0.0, 1.0, what=what)


def _setting(setting: str, allowed=SETTINGS) -> str:
    if setting not in allowed:
        raise ParameterError(f"setting must be one of {', '.join(map(repr, allowed))}, got {setting!r}.")
    return setting


def _realizable_gamma(gamma: np.ndarray) -> None:
    """The realizable setting has no best-error term: every γ must be 0."""
    if np.any(gamma != 0):
        raise ParameterError("gamma must be 0 in the realizable setting; use setting='agnostic' for gamma > 0.")


def _out(x):
    """Return an array, or a numpy scalar for 0-d results."""
    x = np.asarray(x, dtype=float)
    return x[()] if x.ndim == 0 else x


# ---------------------------------------------------------------------------------------
# Algorithm 2: number of teachers; soft labels
# ---------------------------------------------------------------------------------------


def btt_num_teachers(noise_scale: ArrayLike, m: ArrayLike, T: ArrayLike, delta: ArrayLike, beta: ArrayLike) -> FloatOrArray:
    """BTT's recommended number of teachers (Algorithm 2, line 1).

    ``k = 34·sqrt(2)·λ·log(4 m T / min(δ, β/2))``.

    Theorem 3.2's proof asks for ``k/3 >= 32 log(4mT/min(δ, β/2)) sqrt(2T log(2/δ))/ε``,
    which with the paper's ``λ = 4 sqrt(2T log(2/δ))/ε`` reads ``k >= 24 λ log(...)``;
    line 1 prints the constant ``34·√2 ≈ 48.08``, about twice that, which is also what a
    ``2k/3`` majority needs with the corrected distance ``ceil(M/2) - 1`` (DESIGN §2),
    since the margin ``k/3`` then gives a distance of about ``k/6``.  This returns the
    printed formula.  The privacy guarantee does not depend on k; k only decides
    utility: with probability ``1 - 2β`` every query on which at least ``2k/3``
    teachers agree passes the sparse-vector test.

    Parameters
    ----------
    noise_scale : float or array
        λ, the sparse-vector threshold noise scale (:func:`btt_noise_scale`).
    m : float or array
        Number of queries (real values allowed, for curves and the loop solver).
    T : float or array
        Cutoff (maximum number of ⊥); real values allowed.
    delta, beta : float or array
        Privacy δ and failure probability β, both in (0, 1).

    Returns
    -------
    float or numpy.ndarray
        k (real; round up for an ensemble size).

    Examples
    --------
    T = 10, ε = 1, δ = 1e-5, m = 1000, β = 0.05: λ ≈ 62.497 and
    ``k = 48.083 · 62.497 · log(4e9) ≈ 66,441``.
    """
    lam = _positive(noise_scale, "noise_scale", "the threshold noise scale λ")
    m = _positive(m, "m", "the number of queries")
    T = _positive(T, "T", "the cutoff")
    delta = _each(check_delta, delta, "delta")
    beta = _each(check_beta, beta, "beta")
    return _out(34.0 * math.sqrt(2.0) * lam * np.log(4.0 * m * T / np.minimum(delta, beta / 2.0)))


def btt_soft_noise_scale(T: ArrayLike, epsilon: ArrayLike, delta: ArrayLike) -> FloatOrArray:
    """λ for soft labels (full version Section 5; DESIGN §3.3): the hard-label λ at ``2T`` rounds.

    Every failed test of Algorithms 6–8 is one sparse-vector round and a query can fail
    two tests, so the soft-label mechanism halts after ``2T`` failed tests and is
    calibrated as :func:`btt_noise_scale` with ``2T``:
    ``λ = sqrt(32 · 2T · log(2/δ)) / ε``.
    """
    T = _positive(T, "T", "the cutoff")
    epsilon = _each(check_epsilon, epsilon, "epsilon")
    delta = _each(check_delta, delta, "delta")
    return _out(btt_noise_scale(2.0 * T, epsilon, delta))


def btt_soft_threshold(noise_scale: ArrayLike, m: ArrayLike, delta: ArrayLike) -> FloatOrArray:
    """w for soft labels (DESIGN §3.3): the hard-label threshold at ``2m`` tests.

    ``w = 2 λ log(2 · 2m / δ)``: up to two tests per query, so the union bound over
    tests runs over ``2m``.
    """
    lam = _positive(noise_scale, "noise_scale", "the threshold noise scale λ")
    m = _positive(m, "m", "the number of queries")
    delta = _each(check_delta, delta, "delta")
    return _out(btt_threshold(lam, 2.0 * m, delta))


def btt_soft_num_teachers(
    noise_scale: ArrayLike, m: ArrayLike, T: ArrayLike, delta: ArrayLike, beta: ArrayLike
) -> FloatOrArray:
    """k for soft labels: :func:`btt_num_teachers` with ``2m`` tests and ``2T`` rounds.

    ``k = 34·sqrt(2)·λ·log(4 · 2m · 2T / min(δ, β/2))`` with λ from
    :func:`btt_soft_noise_scale`.  (The soft-label algorithms' formulas were lost in the
    seed text; this keeps Algorithm 2's form with the soft calibration's counts, as
    DESIGN §3.3 does.)
    """
    m = _positive(m, "m", "the number of queries")
    T = _positive(T, "T", "the cutoff")
    return btt_num_teachers(noise_scale, 2.0 * m, 2.0 * T, delta, beta)


# ---------------------------------------------------------------------------------------
# Theorem 3.2
# ---------------------------------------------------------------------------------------


def cutoff_T(gamma: ArrayLike, alpha: ArrayLike, m: ArrayLike, beta: ArrayLike) -> FloatOrArray:
    """The cutoff T of BTT Theorem 3.2.

    ``T = 3((γ+α) m + sqrt((γ+α) m log(m/β) / 2))``.

    Assumptions (Theorem 3.2): the learner is an ``(α, β/k, n/k)`` agnostic PAC learner,
    ``γ = min_h err(h)`` is the best error in the class (0 when realizable), and the m
    queries are i.i.d. from the data distribution.  Then with probability ``>= 1 - 2β``
    the algorithm answers all m queries with at most T abstentions, and misclassifies at
    most T of them (:func:`misclassification_bound`).  The Chernoff term bounds each
    teacher's mistakes on the m queries by ``B = (γ+α)m + sqrt((γ+α)m log(m/β)/2)``;
    Lemma 3.3 (with ξ = 1/3) gives ``3B``.

    Parameters
    ----------
    gamma : float or array
        γ ∈ [0, 1], the best achievable error of the class.
    alpha : float or array
        α ∈ [0, 1], the learner's excess error.
    m : float or array
        Number of queries (> 0; real values allowed for curves).
    beta : float or array
        Failure probability β ∈ (0, 1).  Note ``log(m/β)`` is negative when ``m < β``.

    Returns
    -------
    float or numpy.ndarray
        T (real; the algorithm uses ``ceil(T)``).

    Examples
    --------
    ``cutoff_T(0, 0.01, 1000, 0.05) = 3(10 + sqrt(10·log(20000)/2)) ≈ 51.11``.
    """
    g = _unit(gamma, "gamma", "the best error of the hypothesis class")
    a = _unit(alpha, "alpha", "the learner's error")
    m = _positive(m, "m", "the number of queries")
    beta = _each(check_beta, beta, "beta")
    ga_m = (g + a) * m
    return _out(3.0 * (ga_m + np.sqrt(np.maximum(ga_m * np.log(m / beta) / 2.0, 0.0))))


def misclassification_bound(gamma: ArrayLike, alpha: ArrayLike, m: ArrayLike, beta: ArrayLike) -> FloatOrArray:
    """The misclassification-rate bound of BTT Theorem 3.2: ``T/m = O(γ + α)``.

    Same assumptions as :func:`cutoff_T`; holds with probability ``>= 1 - 2β``.  A value
    of 1 or more is vacuous.
    """
    return _out(np.asarray(cutoff_T(gamma, alpha, m, beta)) / _positive(m, "m", "the number of queries"))


# ---------------------------------------------------------------------------------------
# Explicit learners from VC bounds
# ---------------------------------------------------------------------------------------


def realizable_sample_size(V: ArrayLike, alpha: ArrayLike, beta: ArrayLike) -> FloatOrArray:
    """Samples sufficient for a realizable (α, β)-PAC learner (Blumer et al. 1989).

    ``N = max((4/α) log2(2/β), (8V/α) log2(13/α))``: any consistent learner (ERM) for a
    class of VC dimension V reaches error ≤ α with probability ≥ 1 - β from N i.i.d.
    samples labeled by a hypothesis of the class.  Constants 4, 2, 8, 13 as in Blumer,
    Ehrenfeucht, Haussler and Warmuth, "Learnability and the Vapnik–Chervonenkis
    dimension" (J. ACM, 1989).

    Parameters
    ----------
    V : float or array
        VC dimension (> 0).
    alpha : float or array
        Target error, in (0, 1).
    beta : float or array
        Failure probability β' (the solver passes ``β/k``), in (0, 1).

    Returns
    -------
    float or numpy.ndarray
        N (real; round up for a count of samples).

    Examples
    --------
    V = 10, α = 0.05, β' = 0.01: ``max(80·log2(200), 1600·log2(260)) = max(611.5, 12835.9)
    ≈ 12,836``.
    """
    V = _positive(V, "V", "the VC dimension")
    alpha = _each(check_probability, alpha, "alpha")
    beta = _each(check_beta, beta, "beta")
    return _out(_realizable_size_raw(V, alpha, beta))


def _realizable_size_raw(V, alpha, beta):
    return np.maximum(4.0 / alpha * np.log2(2.0 / beta), 8.0 * V / alpha * np.log2(13.0 / alpha))


def _realizable_error_raw(V, N, beta, iterations: int = 200):
    """Vectorized bisection on log α of ``size(V, α, β) = N``; 1.0 where vacuous."""
    V, N, beta = np.broadcast_arrays(np.asarray(V, float), np.asarray(N, float), np.asarray(beta, float))
    lo = np.full(N.shape, -745.0)  # log α; size there is astronomically large
    hi = np.zeros(N.shape)  # log α = 0, α = 1
    vacuous = _realizable_size_raw(V, 1.0, beta) > N
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        ok = _realizable_size_raw(V, np.exp(mid), beta) <= N  # size decreases in α
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
        if np.all(hi - lo < 1e-15):
            break
    return np.where(vacuous, 1.0, np.exp(hi))


def realizable_error(V: ArrayLike, N: ArrayLike, beta: ArrayLike) -> FloatOrArray:
    """The smallest α that Blumer et al.'s bound guarantees from N realizable samples.

    The inverse of :func:`realizable_sample_size` in α (solved numerically by bisection;
    ``realizable_sample_size(V, α, β) = N`` to about 1e-12 relative): the ERM of a class
    of VC dimension V trained on N samples labeled by a hypothesis of the class has
    error ≤ α with probability ≥ 1 - β.  Returns 1.0 (a vacuous bound) where even α → 1
    would need more than N samples.

    Parameters
    ----------
    V : float or array
        VC dimension (> 0).
    N : float or array
        Number of samples (> 0).
    beta : float or array
        Failure probability β' in (0, 1).
    """
    V = _positive(V, "V", "the VC dimension")
    N = _positive(N, "N", "the number of samples")
    beta = _each(check_beta, beta, "beta")
    return _out(_realizable_error_raw(V, N, beta))


def _agnostic_error_raw(V, N, beta):
    V, N, beta = np.broadcast_arrays(np.asarray(V, float), np.asarray(N, float), np.asarray(beta, float))
    with np.errstate(invalid="ignore", divide="ignore"):
        inner = (8.0 * V * np.log(2.0 * math.e * N / V) + 8.0 * np.log(4.0 / beta)) / N
        a = np.sqrt(np.maximum(inner, 0.0))
    return np.where((N < V) | (a >= 1.0), 1.0, a)


def agnostic_error(V: ArrayLike, N: ArrayLike, beta: ArrayLike) -> FloatOrArray:
    """Excess error of ERM from N samples in the agnostic setting (Vapnik's bound).

    ``α = sqrt((8V log(2eN/V) + 8 log(4/β)) / N)``, the form DESIGN §4 uses: Vapnik's
    uniform-convergence bound with the growth function bounded by ``(eN/V)^V``
    (Sauer's lemma; constants 8, 2e, 8, 4).  ERM on N i.i.d. samples is then taken as an
    ``(α, β, N)`` agnostic PAC learner for a class of VC dimension V (error at most
    ``γ + α`` with probability ≥ 1 - β, γ the best error in the class).  Valid for
    ``N >= V``; returns 1.0 (vacuous) where ``N < V`` or the formula reaches 1.

    Parameters
    ----------
    V : float or array
        VC dimension (> 0).
    N : float or array
        Number of samples (> 0).
    beta : float or array
        Failure probability β' in (0, 1).

    Examples
    --------
    V = 10, N = 10,000, β' = 0.01: ``(80·log(5436.6) + 8·log(400))/1e4 = (688.07 + 47.93)/1e4
    = 0.0736``, so ``α ≈ 0.2713``.
    """
    V = _positive(V, "V", "the VC dimension")
    N = _positive(N, "N", "the number of samples")
    beta = _each(check_beta, beta, "beta")
    return _out(_agnostic_error_raw(V, N, beta))


def teacher_error(V: ArrayLike, N: ArrayLike, beta: ArrayLike, setting: str = "realizable") -> FloatOrArray:
    """α of a teacher trained on N samples: :func:`realizable_error` or :func:`agnostic_error`."""
    _setting(setting)
    return realizable_error(V, N, beta) if setting == "realizable" else agnostic_error(V, N, beta)


# ---------------------------------------------------------------------------------------
# The loop T -> alpha -> k -> T
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BTTParameters:
    """Output of :func:`solve_btt_parameters`.

    Attributes
    ----------
    k : float
        Number of teachers at the fixed point (real; the ensemble uses ``ceil(k)``).
    T : float
        Cutoff ``max(1, cutoff_T(γ, α, m, β))`` (real; the algorithm uses ``ceil(T)``).
    alpha : float
        Teachers' error at ``n/k`` samples with failure probability ``β/k``.
    noise_scale : float
        λ at T (paper or tight calibration).
    misclassification : float
        Theorem 3.2's bound ``T/m``.
    feasible : bool
        True when a fixed point exists with ``α < 1`` and ``T < m``.
    reason : str or None
        Why not, in words (contains "no k works"), with roughly the n that would be needed.
    n_needed : float or None
        When infeasible: about the smallest n for which the solver succeeds.
    """

    k: float
    T: float
    alpha: float
    noise_scale: float
    misclassification: float
    feasible: bool
    reason: str | None = None
    n_needed: float | None = None


class _Loop:
    """The three relations of the loop ``T → α → k → T`` as functions of k."""

    def __init__(self, n, V, epsilon, delta, beta, m, gamma, setting, calibration):
        self.n, self.V, self.epsilon, self.delta = n, V, epsilon, delta
        self.beta, self.m, self.gamma = beta, m, gamma
        self.setting, self.calibration = setting, calibration

    # relation 1: alpha at n/k samples, failure probability beta/k
    def alpha(self, k):
        k = np.asarray(k, float)
        return np.asarray(teacher_error(self.V, self.n / k, self.beta / k, self.setting), float)

    # relation 2: T = max(1, cutoff_T(gamma, alpha, m, beta))
    def cutoff(self, alpha):
        return np.maximum(np.asarray(cutoff_T(self.gamma, alpha, self.m, self.beta), float), 1.0)

    def T_of_k(self, k):
        return self.cutoff(self.alpha(k))

    # relation 3: k = btt_num_teachers(λ, m, T, δ, β)
    def k_required(self, T, lam):
        return np.asarray(btt_num_teachers(lam, self.m, T, self.delta, self.beta), float)

    def tight_lambda(self, t: int) -> float:
        return float(calibrate_btt(self.epsilon, self.delta, int(t), self.m, calibration="tight").noise_scale)

    def state(self, k):
        """``(α, T, λ)`` at k (λ at ``ceil(T)`` for the tight calibration)."""
        a = float(self.alpha(k))
        T = float(self.cutoff(a))
        if self.calibration == "paper":
            lam = float(btt_noise_scale(T, self.epsilon, self.delta))
        else:
            lam = self.tight_lambda(math.ceil(T - 1e-9))
        return a, T, lam

    def solve(self):
        """The smallest k in ``[1, n]`` with ``k >= k_req(k)`` and α < 1, or None."""
        return self._solve_paper() if self.calibration == "paper" else self._solve_stepwise()

    def _solve_paper(self):
        ks = np.geomspace(1.0, self.n, 600)
        a = self.alpha(ks)
        T = self.cutoff(a)
        kr = np.where(a >= 1.0, np.inf, self.k_required(T, btt_noise_scale(T, self.epsilon, self.delta)))
        ok = ks >= kr
        if not np.any(ok):
            return None
        i = int(np.argmax(ok))
        if i == 0:
            return 1.0

        def h(logk):
            a = self.alpha(math.exp(logk))
            if a >= 1.0:
                return -math.inf
            T = self.cutoff(a)
            return logk - math.log(float(self.k_required(T, btt_noise_scale(T, self.epsilon, self.delta))))

        lo, hi = math.log(ks[i - 1]), math.log(ks[i])
        if math.isfinite(h(lo)):
            root = optimize.brentq(h, lo, hi, xtol=1e-15, rtol=1e-15, maxiter=300)
            if h(root) >= 0:
                return math.exp(root)
            lo = root
        for _ in range(200):  # keep the side where k >= k_req(k)
            mid = 0.5 * (lo + hi)
            if h(mid) >= 0:
                hi = mid
            else:
                lo = mid
            if hi - lo < 1e-15:
                break
        return math.exp(hi)

    def _K(self, t: float) -> float | None:
        """``sup{k in [1, n] : T(k) <= t}`` (T(k) is continuous and non-decreasing), or None."""
        if float(self.T_of_k(1.0)) > t:
            return None
        if float(self.T_of_k(self.n)) <= t:
            return self.n
        f = lambda logk: float(self.T_of_k(math.exp(logk))) - t
        return math.exp(optimize.brentq(f, 0.0, math.log(self.n), xtol=1e-14, rtol=1e-15, maxiter=300))

    def _solve_stepwise(self):
        """Tight calibration: λ is a step function of ``ceil(T)``, calibrated per integer t.

        For an integer t the k with ``ceil(T(k)) = t`` form ``(K(t-1), K(t)]`` and λ is
        ``λ_t`` there; a k of that interval works when ``k >= k_req``.  Binary search on t
        for the first interval whose right end works (about log2(m) calibrations), then
        root finding inside it.
        """
        t_lo = max(1, math.ceil(float(self.T_of_k(1.0)) - 1e-9))
        t_hi = min(self.m, math.ceil(float(self.T_of_k(self.n)) - 1e-9))
        if t_lo > t_hi:
            return None

        def works(t):
            Kt = self._K(t)
            if Kt is None or float(self.alpha(Kt)) >= 1.0:
                return False
            return Kt >= float(self.k_required(self.T_of_k(Kt), self.tight_lambda(t)))

        if not works(t_hi):
            return None
        lo_t, hi_t = t_lo - 1, t_hi  # works(lo_t) is False (or out of range), works(hi_t) True
        while hi_t - lo_t > 1:
            mid = (lo_t + hi_t) // 2
            if works(mid):
                hi_t = mid
            else:
                lo_t = mid
        t = hi_t
        lam = self.tight_lambda(t)
        K_left = self._K(t - 1) if t - 1 >= t_lo else None
        k_left = 1.0 if K_left is None else K_left * (1.0 + 1e-12)
        k_right = self._K(t)

        def h(logk):
            return logk - math.log(float(self.k_required(self.T_of_k(math.exp(logk)), lam)))

        if h(math.log(k_left)) >= 0:
            return k_left
        root = optimize.brentq(h, math.log(k_left), math.log(k_right), xtol=1e-15, rtol=1e-15, maxiter=300)
        return math.exp(root) if h(root) >= 0 else math.exp(root + 1e-15)


def solve_btt_parameters(
    n: float,
    V: float,
    epsilon: float,
    delta: float,
    beta: float,
    m: int,
    gamma: float = 0.0,
    *,
    setting: str = "realizable",
    calibration: str = "paper",
) -> BTTParameters:
    """Solve BTT's loop ``T → α → k → T`` for explicit learners (Theorem 3.2 and BTT §3
    "Explicit misclassification rate"; DESIGN §4).

    Three relations in the unknown k (the number of teachers):

    1. ``α = α(n/k, β/k)``: Theorem 3.2 needs an ``(α, β/k, n/k)`` learner, so α is the
       teachers' error from ``N = n/k`` samples with failure probability ``β/k`` —
       :func:`realizable_error` (Blumer et al.) or :func:`agnostic_error` (Vapnik);
    2. ``T = max(1, cutoff_T(γ, α, m, β))`` (the algorithm allows at least one ⊥);
    3. ``k = btt_num_teachers(λ, m, T, δ, β)`` with λ from the ``calibration``:
       ``"paper"``: ``λ = btt_noise_scale(T, ε, δ)`` at the real T;
       ``"tight"``: ``calibrate_btt(ε, δ, ceil(T), m, "tight").noise_scale``, a step
       function of T (each step is a privacy-loss-distribution calibration taking
       seconds; the solver needs about ``log2(m)`` of them).

    ``k_req(k)``, the right side of 3 after 1 and 2, grows with k about like
    ``sqrt(k)`` while the teachers' bound stays non-vacuous, so the solution is the
    smallest k with ``k >= k_req(k)``.  Paper calibration: a log-grid scan of ``[1, n]``
    and Brent's method, after which the three relations hold to about 1e-12 relative.
    Tight calibration: equality, or ``k`` just above a step of λ where ``k > k_req``.
    k, T and α are real numbers (the algorithm uses ``ceil``).  Assumptions are those
    of Theorem 3.2 (i.i.d. queries from the data distribution; the bound holds with
    probability ≥ 1 - 2β) and of the chosen VC bound.

    Parameters
    ----------
    n : float
        Number of private rows.
    V : float
        VC dimension of the teachers' class.
    epsilon, delta : float
        The privacy budget.
    beta : float
        Failure probability of Theorem 3.2.
    m : int
        Number of queries.
    gamma : float
        Best error of the class (0 when realizable; enters ``cutoff_T``).
    setting : {"realizable", "agnostic"}
        Which explicit learner bound gives α.
    calibration : {"paper", "tight"}
        How λ follows from T.

    Returns
    -------
    BTTParameters
        ``feasible=False`` with a reason saying "no k works" (and roughly which n would
        be needed) when no k in ``[1, n]`` gives ``k >= k_req(k)`` with a non-vacuous
        teacher bound (α < 1) and a non-vacuous misclassification bound (T < m).

    Examples
    --------
    n = 1e10, V = 10, ε = 1, δ = 1e-5, β = 0.05, m = 1000 (realizable, paper):
    k ≈ 192,769 teachers of 51,876 rows each, α ≈ 0.0150, T ≈ 71.0, bound T/m ≈ 0.071.
    """
    n = float(_positive(n, "n", "the number of private rows"))
    V = float(_positive(V, "V", "the VC dimension"))
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    beta = check_beta(beta)
    m = check_m(m)
    gamma = float(_unit(gamma, "gamma", "the best error of the hypothesis class"))
    _setting(setting)
    if calibration not in ("paper", "tight"):
        raise ParameterError(f"calibration must be 'paper' or 'tight', got {calibration!r}.")

    def attempt(n_rows, cal):
        loop = _Loop(n_rows, V, epsilon, delta, beta, m, gamma, setting, cal)
        k = loop.solve()
        if k is None:
            return None
        return (k,) + loop.state(k)

    res = attempt(n, calibration)
    if res is not None and res[2] < m:
        k, a, T, lam = res
        return BTTParameters(k=k, T=T, alpha=a, noise_scale=lam, misclassification=T / m, feasible=True)

    # Infeasible.  Feasibility only improves with n, so search for roughly the n that
    # works: doubling, then bisection to 2 %.  (With the tight calibration the search
    # uses the paper calibration, and one tight calibration checks that its λ is not
    # larger there, so that n is enough for the tight calibration too.)
    def works(n_rows):
        r = attempt(n_rows, "paper")
        return r is not None and r[2] < m

    n_cap = 1e18
    hi = max(2.0 * n, 2.0)
    while hi < n_cap and not works(hi):
        hi *= 4.0
    n_needed = None
    if works(min(hi, n_cap)):
        hi = min(hi, n_cap)
        lo = max(n, hi / 4.0)
        while hi / lo > 1.02:
            mid = math.sqrt(lo * hi)
            if works(mid):
                hi = mid
            else:
                lo = mid
        n_needed = hi
    enough_note = ""
    if n_needed is not None and calibration == "tight":
        r = attempt(n_needed, "paper")
        loop = _Loop(n_needed, V, epsilon, delta, beta, m, gamma, setting, "tight")
        if loop.tight_lambda(math.ceil(r[2] - 1e-9)) <= r[3]:
            enough_note = " (enough for the paper calibration, hence for the tight one)"
        else:
            enough_note = " (what the paper calibration needs)"
    if res is None:
        why = (
            f"no k works: with n = {n:,.0f} private rows, every k in [1, n] needs more than k teachers "
            f"(k_req = 34·√2·λ·log(4mT/min(δ, β/2)) exceeds k) or leaves each teacher too few rows "
            f"for a non-vacuous error bound"
        )
        k, a, T, lam = (math.nan,) * 4
    else:
        k, a, T, lam = res
        why = (
            f"no k works: the smallest consistent k = {k:,.0f} gives T = {T:,.1f} >= m = {m}, "
            f"so the misclassification bound T/m is vacuous"
        )
    if n_needed is not None:
        why += f"; roughly n ≈ {n_needed:,.3g} private rows would be needed with these settings{enough_note}."
    else:
        why += (
            "; no n up to 1e18 suffices with these settings (T >= 3·gamma·m whatever the teachers' "
            "accuracy, so a large gamma alone can make the bound vacuous)."
        )
    return BTTParameters(
        k=k,
        T=T,
        alpha=a,
        noise_scale=lam,
        misclassification=(T / m if math.isfinite(T) else math.nan),
        feasible=False,
        reason=why,
        n_needed=n_needed,
    )


# ---------------------------------------------------------------------------------------
# Rates up to constants and log factors (Theorems 3.4, 3.5, advanced composition)
# ---------------------------------------------------------------------------------------


def _rate_args(m, V, epsilon, n, gamma):
    m = _positive(m, "m", "the number of queries")
    V = _positive(V, "V", "the VC dimension")
    epsilon = _each(check_epsilon, epsilon, "epsilon")
    n = _positive(n, "n", "the number of private rows")
    gamma = _unit(gamma, "gamma", "the best error of the hypothesis class")
    return m, V, epsilon, n, gamma


def misclassification_rate_btt(
    m: ArrayLike, V: ArrayLike, epsilon: ArrayLike, n: ArrayLike, setting: str = "realizable", gamma: ArrayLike = 0.0
) -> FloatOrArray:
    """BTT's misclassification rate vs the number of queries m, up to constants and logs.

    With ``x = V/(ε n)``:

    - realizable (Theorem 3.4): ``x`` for ``m <= M = ε n / V``, then ``m x²``
      (= ``m V²/(ε² n²)``); returned as ``x · max(1, m x)``.
    - agnostic (Theorem 3.5): ``γ + sqrt(x)`` for ``m <= M``, then
      ``γ + m^{1/3} x^{2/3}``; returned as ``γ + max(sqrt(x), m^{1/3} x^{2/3})``.

    Derivation (the theorems' proofs): α ≈ kV/n (realizable) or ``sqrt(kV/n)``
    (agnostic) at n/k samples; ``k ≈ sqrt(T)/ε`` (Algorithm 2, logs dropped); T ≈ αm from
    Theorem 3.2 but at least O(1).  Solving gives ``T ≈ m² x²`` (realizable) or
    ``T ≈ m^{4/3} x^{2/3}`` (agnostic, γ ≤ α), and the rate is T/m with the O(1) floor.
    Theorem 3.5 places its crossover at ``min(1/γ, sqrt(εn/V))``: beyond ``1/γ`` the
    ``γm`` term makes T grow, but there ``γ >= sqrt(x)`` and the rate is ``Θ(γ)`` either
    way, so this continuous form agrees with the theorem up to constants.  Values are
    shapes for plotting, not bounds (they may exceed 1).

    Parameters
    ----------
    m, V, epsilon, n : float or array
        Number of queries, VC dimension, ε, number of private rows.
    setting : {"realizable", "agnostic"}
    gamma : float or array
        Best error of the class (agnostic only; must be 0 for realizable).
    """
    _setting(setting)
    m, V, epsilon, n, gamma = _rate_args(m, V, epsilon, n, gamma)
    x = V / (epsilon * n)
    if setting == "realizable":
        _realizable_gamma(gamma)
        return _out(x * np.maximum(1.0, m * x))
    return _out(gamma + np.maximum(np.sqrt(x), np.cbrt(m) * x ** (2.0 / 3.0)))


def misclassification_rate_composition(
    m: ArrayLike, V: ArrayLike, epsilon: ArrayLike, n: ArrayLike, setting: str = "realizable", gamma: ArrayLike = 0.0
) -> FloatOrArray:
    """Misclassification rate of the advanced-composition baseline (DESIGN §3.5, §4), up to
    constants and logs.

    Answering each of m queries with ``A_stab`` at ``ε0 ≈ ε/sqrt(m)`` (advanced
    composition, logs dropped) needs a distance to instability ≈ ``1/ε0``, hence
    ``k ≈ sqrt(m)/ε`` teachers and α at n/k samples:

    - realizable: ``sqrt(m) · V/(ε n)`` (BTT §1);
    - agnostic: ``γ + sqrt(sqrt(m) · V/(ε n))``.

    BTT's rate (:func:`misclassification_rate_btt`) is at most this for every
    ``1 <= m <= (ε n / V)²``, in particular below :func:`crossover_m`.
    """
    _setting(setting)
    m, V, epsilon, n, gamma = _rate_args(m, V, epsilon, n, gamma)
    y = np.sqrt(m) * V / (epsilon * n)
    if setting == "realizable":
        _realizable_gamma(gamma)
        return _out(y)
    return _out(gamma + np.sqrt(y))


def crossover_m(
    V: ArrayLike, epsilon: ArrayLike, n: ArrayLike, setting: str = "realizable", gamma: ArrayLike = 0.0
) -> FloatOrArray:
    """The number of queries M up to which BTT answers at the non-private rate.

    - realizable (Theorem 3.4): ``M ≈ ε n / V``;
    - agnostic (Theorem 3.5): ``M ≈ min(1/γ, sqrt(ε n / V))`` (``1/γ = inf`` for γ = 0).

    Up to constants and log factors.
    """
    _setting(setting)
    V = _positive(V, "V", "the VC dimension")
    epsilon = _each(check_epsilon, epsilon, "epsilon")
    n = _positive(n, "n", "the number of private rows")
    gamma = _unit(gamma, "gamma", "the best error of the hypothesis class")
    r = epsilon * n / V
    if setting == "realizable":
        _realizable_gamma(gamma)
        return _out(r)
    with np.errstate(divide="ignore"):
        inv_g = np.where(gamma > 0, 1.0 / np.where(gamma > 0, gamma, 1.0), np.inf)
    return _out(np.minimum(inv_g, np.sqrt(r)))


def sample_complexity_private(alpha: ArrayLike, V: ArrayLike, epsilon: ArrayLike, setting: str = "realizable") -> FloatOrArray:
    """Private sample complexity n of BTT's private learner (Algorithm 3) vs target error α,
    up to constants and log factors.

    - ``"realizable"`` (Theorem 4.2, agnostic learner Θ with ``m ≈ V/α²`` public
      queries): ``V^{3/2} / (ε α^{3/2})``;
    - ``"agnostic"`` (Theorem 4.3, error ``O(α + γ)``): ``V^{3/2} / (ε α^{5/2})``;
    - ``"realizable_erm"`` (Remark 2: Θ an ERM, ``m ≈ V/α``): ``V^{3/2} / (ε α)``;
    - ``"realizable_efficient"`` (Remark 3: an efficient PAC learner trained towards
      accuracy 1/m): ``V² / (ε α)``.

    Assumptions of the theorems: ``0 < β <= α < 1``; the public queries are i.i.d. from
    the data distribution.
    """
    _setting(setting, PRIVATE_SAMPLE_SETTINGS)
    alpha = _each(check_probability, alpha, "alpha")
    V = _positive(V, "V", "the VC dimension")
    epsilon = _each(check_epsilon, epsilon, "epsilon")
    if setting == "realizable":
        return _out(V**1.5 / (epsilon * alpha**1.5))
    if setting == "agnostic":
        return _out(V**1.5 / (epsilon * alpha**2.5))
    if setting == "realizable_erm":
        return _out(V**1.5 / (epsilon * alpha))
    return _out(V**2 / (epsilon * alpha))


def sample_complexity_nonprivate(alpha: ArrayLike, V: ArrayLike, setting: str = "realizable") -> FloatOrArray:
    """Non-private sample complexity up to constants and logs: ``V/α`` (realizable PAC),
    ``V/α²`` (agnostic PAC)."""
    _setting(setting)
    alpha = _each(check_probability, alpha, "alpha")
    V = _positive(V, "V", "the VC dimension")
    return _out(V / alpha if setting == "realizable" else V / alpha**2)


# ---------------------------------------------------------------------------------------
# Pass probabilities, feasibility, answered-query models
# ---------------------------------------------------------------------------------------


def _dlap_diff_tail(b1: float, b2: float, a) -> np.ndarray:
    """``P[Z1 - Z2 > a]`` for independent discrete Laplace ``Z1 ~ DLap(b1)``, ``Z2 ~ DLap(b2)``.

    ``Y = Z1 - Z2`` is integer valued and symmetric.  With ``p_i = exp(-1/b_i)`` and
    ``c_i = (1 - p_i)/(1 + p_i)``, for ``y >= 0``:
    ``P[Y = y] = c1 c2 (A p1^y + B p2^y)``, ``A = 1/(1 - p1 p2) + p2/(p1 - p2)``,
    ``B = 1/(1 - p1 p2) - p1/(p1 - p2)``, so for integer ``a >= -1``
    ``P[Y > a] = c1 c2 (A p1^{a+1}/(1 - p1) + B p2^{a+1}/(1 - p2))``; for ``a <= -1``,
    ``P[Y > a] = 1 - P[Y > -a - 1]``.  Real ``a`` is floored (Y is an integer).
    """
    if b1 == b2:
        raise ParameterError("The two noise scales must differ (BTT uses 2λ and λ).")
    p1, p2 = math.exp(-1.0 / b1), math.exp(-1.0 / b2)
    q1, q2 = -math.expm1(-1.0 / b1), -math.expm1(-1.0 / b2)  # 1 - p
    c1c2 = (q1 / (1.0 + p1)) * (q2 / (1.0 + p2))
    one_m_pp = -math.expm1(-1.0 / b1 - 1.0 / b2)
    A = 1.0 / one_m_pp + p2 / (p1 - p2)
    B = 1.0 / one_m_pp - p1 / (p1 - p2)
    a = np.floor(np.asarray(a, dtype=float))

    def upper(j):  # P[Y > j] for integer j >= -1
        return c1c2 * (A * np.exp((j + 1.0) * math.log(p1)) / q1 + B * np.exp((j + 1.0) * math.log(p2)) / q2)

    pos = upper(np.maximum(a, -1.0))
    neg = 1.0 - upper(np.maximum(-a - 1.0, -1.0))
    return np.clip(np.where(a >= 0, pos, neg), 0.0, 1.0)


def _lap_diff_tail(b1: float, b2: float, a) -> np.ndarray:
    """``P[Z1 - Z2 > a]`` for continuous ``Z1 ~ Lap(b1)``, ``Z2 ~ Lap(b2)`` (DESIGN §3.2)."""
    a = np.asarray(a, dtype=float)
    w = np.abs(a)
    t = (b1**2 * np.exp(-w / b1) - b2**2 * np.exp(-w / b2)) / (2.0 * (b1**2 - b2**2))
    return np.where(a >= 0, t, 1.0 - t)


def btt_pass_probability(
    distance: ArrayLike, noise_scale: float, threshold: ArrayLike, *, discrete: bool = True
) -> FloatOrArray:
    """Probability that a query with distance to instability d passes BTT's sparse-vector test.

    ``P[d + Z1 > w + Z2]`` with ``Z1 ~ Lap(2λ)`` (query noise) and ``Z2 ~ Lap(λ)``
    (threshold noise) independent (DESIGN §3.2), for a freshly drawn threshold.  With
    ``discrete=True`` (the library's mechanism, :func:`core.noise.discrete_laplace`) both
    are discrete Laplace on the integers and the real threshold w is used as is, so the
    test is ``Z1 - Z2 > w - d`` ⇔ ``Z1 - Z2 >= floor(w - d) + 1``; with ``discrete=False``
    both are continuous.

    Since ``Z1 - Z2`` is symmetric about 0, the probability is at least 1/2 exactly when
    ``d > w`` (discrete: ``P[Y >= 0] > 1/2 > P[Y >= 1]``) or ``d >= w`` (continuous).

    Parameters
    ----------
    distance : int or array
        Distance to instability ``d = max(0, ceil(M/2) - 1)`` (DESIGN §2).
    noise_scale : float
        λ.
    threshold : float
        w.
    """
    d = _nonnegative(distance, "distance", "the distance to instability")
    lam = float(_positive(noise_scale, "noise_scale", "the threshold noise scale λ"))
    w = _nonnegative(threshold, "threshold", "the sparse-vector threshold w")
    tail = _dlap_diff_tail if discrete else _lap_diff_tail
    return _out(tail(2.0 * lam, lam, w - d))


def btt_min_teachers(
    epsilon: float,
    delta: float,
    T: int,
    m: int,
    calibration: str = "paper",
    soft: bool = False,
    *,
    discrete: bool = True,
) -> int:
    """The fewest teachers for which a unanimous vote passes BTT's test with probability ≥ 1/2.

    A unanimous vote of k teachers has margin ``M = k`` and distance to instability
    ``d = ceil(k/2) - 1`` (DESIGN §2; not BTT's printed ``k - 1``).  It passes
    ``d + Z1 > w + Z2`` (:func:`btt_pass_probability`) with probability ≥ 1/2 exactly
    when

    - discrete noise (the mechanism's; default): ``d > w``, i.e.
      ``ceil(k/2) >= floor(w) + 2``, so ``k_min = 2·floor(w) + 3``;
    - continuous noise: ``d >= w``, i.e. ``ceil(k/2) >= ceil(w) + 1``, so
      ``k_min = 2·ceil(w) + 1``

    (the smallest k with ``ceil(k/2) >= c`` is ``2c - 1``).  The two agree unless w is a
    whole number.  The discrete rule is :func:`core.mechanisms.stability.min_teachers_for_threshold`,
    the one the aggregators report as ``k_min_unanimous``.  w comes from ``core.accounting.calibrate_btt`` for the given
    calibration (``soft=True``: ``2T`` rounds and ``2m`` tests).  With fewer teachers even
    a unanimous query is more likely to be ⊥ than answered, so the run answers little.

    Returns
    -------
    int
        k_min.

    Examples
    --------
    ε = 1, δ = 1e-5, T = 10, m = 1000, paper calibration: w ≈ 2389.1, so
    ``k_min = 2·2389 + 3 = 4781`` (d = 2390 > w; k = 4780 gives d = 2389 < w).
    """
    cal = calibrate_btt(epsilon, delta, T, m, calibration=calibration, soft=soft)
    w = float(cal.threshold)
    if discrete:
        return min_teachers_for_threshold(w)  # 2·floor(w) + 3, the mechanism's rule
    return int(2 * math.ceil(w) + 1) if w >= 0 else 1


def _distance_pmf(k: int, alpha: float):
    """Distances to instability and their probabilities when each of k teachers is wrong
    independently with probability α (binary task): correct votes ~ Binomial(k, 1 - α)."""
    v = np.arange(k + 1)
    pmf = stats.binom.pmf(v, k, 1.0 - alpha)
    dist = distance_to_instability(np.stack([v, k - v], axis=1))  # ceil(M/2) - 1, DESIGN §2
    return dist, pmf


def _model_args(k, alpha):
    k = np.asarray(k)
    _each(check_k, k, "k")
    a = _unit(alpha, "alpha", "the teachers' error rate")
    return np.broadcast_arrays(np.asarray(k, dtype=np.int64), a)


def expected_answers_btt(
    k: ArrayLike,
    alpha: ArrayLike,
    epsilon: float,
    delta: float,
    T: int,
    m: int,
    calibration: str = "paper",
    *,
    discrete: bool = True,
) -> FloatOrArray:
    """MODEL: expected number of queries BTT answers (labels) before halting.

    The model (binary task, a simplification, not a bound):

    - every teacher is wrong on a query independently with probability α, so the votes
      for the correct class are ``Binomial(k, 1 - α)``, the margin is
      ``M = |2V - k|`` and the distance ``d = max(0, ceil(M/2) - 1)``;
    - each query passes independently with the averaged probability
      ``p = Σ_v P[V = v] · btt_pass_probability(d(v), λ, w)`` (λ, w from
      ``calibrate_btt``), which ignores the correlation between queries that share one
      threshold draw;
    - the run stops after the T-th ⊥ or after m queries, so
      ``E[answered] = p · Σ_{i=0}^{m-1} P[Binomial(i, 1 - p) <= T - 1]``
      (≈ ``min(m p, T p/(1 - p))``).

    Parameters
    ----------
    k : int or array
        Number of teachers.
    alpha : float or array
        Teachers' error rate in [0, 1].
    epsilon, delta, T, m : scalars
        Privacy budget, cutoff and number of queries of the run.
    calibration : {"paper", "tight"}
    discrete : bool
        Discrete (the mechanism's) or continuous Laplace noise.

    Returns
    -------
    float or numpy.ndarray
        Expected answered count, broadcast over k and alpha.
    """
    T = check_T(T)
    m = check_m(m)
    k, a = _model_args(k, alpha)
    cal = calibrate_btt(epsilon, delta, T, m, calibration=calibration)
    lam, w = float(cal.noise_scale), float(cal.threshold)
    tail = _dlap_diff_tail if discrete else _lap_diff_tail
    i = np.arange(m)
    out = np.empty(k.shape)
    for idx in np.ndindex(k.shape):
        dist, pmf = _distance_pmf(int(k[idx]), float(a[idx]))
        p = float(np.clip(np.sum(pmf * tail(2.0 * lam, lam, w - dist)), 0.0, 1.0))
        out[idx] = p * float(np.sum(stats.binom.cdf(T - 1, i, 1.0 - p)))
    return _out(out)


def expected_answers_composition(
    k: ArrayLike,
    alpha: ArrayLike,
    epsilon: float,
    delta: float,
    m: int,
    *,
    discrete: bool = True,
) -> FloatOrArray:
    """MODEL: expected number of queries the advanced-composition baseline answers (DESIGN §3.5).

    The baseline answers every one of the m queries with ``A_stab`` at per-query
    ``(ε0, δ0)`` from ``core.accounting.composition_baseline_parameters``: δ is split as
    ``δ = m δ0 + δ'`` with ``δ' = δ/2`` and ``δ0 = δ/(2m)``, and ``ε0`` inverts advanced
    composition, ``sqrt(2m log(1/δ')) ε0 + m ε0 (e^ε0 - 1) = ε``.  ``A_stab`` releases
    when ``d + Z > Γ`` with ``Z ~ Lap(1/ε0)`` (discrete by default) and
    ``Γ = log(1/δ0)/ε0``.  Same vote model as :func:`expected_answers_btt` (each teacher
    wrong independently with probability α, binary task); there is no halting, so
    ``E[answered] = m · Σ_v P[V = v] · P[d(v) + Z > Γ]``.

    Returns
    -------
    float or numpy.ndarray
        Expected answered count, broadcast over k and alpha.
    """
    params = composition_baseline_parameters(epsilon, delta, m)
    m = int(m)
    k, a = _model_args(k, alpha)
    eps0, gamma_thr = float(params.eps0), float(params.threshold)
    out = np.empty(k.shape)
    for idx in np.ndindex(k.shape):
        dist, pmf = _distance_pmf(int(k[idx]), float(a[idx]))
        x = gamma_thr - dist
        if discrete:
            pas = _noise.discrete_laplace_tail(1.0 / eps0, x)
        else:
            pas = np.where(x >= 0, 0.5 * np.exp(-np.abs(x) * eps0), 1.0 - 0.5 * np.exp(-np.abs(x) * eps0))
        out[idx] = m * float(np.clip(np.sum(pmf * pas), 0.0, 1.0))
    return _out(out)


# ---------------------------------------------------------------------------------------
# Remark 1: private estimate of γ + α
# ---------------------------------------------------------------------------------------


def private_error_estimate(
    n_errors: ArrayLike, n_holdout: int, epsilon: float, rng: _noise.RNGLike = None
) -> FloatOrArray:
    """A private estimate of the error rate γ + α from a held-out split (BTT Remark 1).

    ``clip((n_errors + DLap(1/ε)) / n_holdout, 0, 1)``.  The error count over held-out
    rows has sensitivity 1 under replacement adjacency (one row changes one error), so
    the estimate is ε-DP for the held-out rows, provided the evaluated hypothesis does
    not depend on them.  Rows that trained the evaluated hypothesis are not protected by
    this noise: that hypothesis must be public or itself private, otherwise the estimate
    is a non-private diagnostic.  Use the estimate as ``cutoff_T(estimate, 0, m, β)``
    (it estimates γ + α together); its standard deviation is ``sqrt(2)/(ε n_holdout)``,
    negligible for a large hold-out, so the asymptotics of Theorem 3.2 are unchanged.
    The noise is the exact discrete Laplace of :func:`core.noise.discrete_laplace` on the
    integer count: an integer plus integer noise has no floating-point representation to
    leak through (Mironov 2012), and the ε-DP proof is that of the Laplace mechanism for an
    integer-valued sensitivity-1 query.

    Parameters
    ----------
    n_errors : int or array
        Number of misclassified held-out rows (0 ≤ n_errors ≤ n_holdout).
    n_holdout : int
        Number of held-out rows.
    epsilon : float
        The estimate's own budget (see :func:`error_estimate_budget_split`).
    rng : Generator, int or None
        See :func:`core.noise.check_rng`.
    """
    n_holdout = check_m(n_holdout, "n_holdout")
    epsilon = check_epsilon(epsilon)
    e = _nonnegative(n_errors, "n_errors", "the number of held-out errors")
    if np.any(e > n_holdout) or np.any(e != np.round(e)):
        raise ParameterError(f"n_errors must be whole numbers between 0 and n_holdout = {n_holdout}, got {n_errors!r}.")
    z = _noise.discrete_laplace(1.0 / epsilon, size=e.shape, rng=rng)
    return _out(np.clip((e.astype(np.int64) + z) / n_holdout, 0.0, 1.0))


class BudgetSplit(NamedTuple):
    """Two budgets that add up to the total (basic composition)."""

    epsilon_estimate: float
    epsilon_labeling: float


def error_estimate_budget_split(epsilon_total: float, fraction: float) -> BudgetSplit:
    """Split a total ε between the Remark-1 error estimate and the labeling (basic composition).

    ``ε_estimate = fraction · ε_total`` and ``ε_labeling = (1 - fraction) · ε_total``;
    by basic composition the two steps together are ``ε_total``-DP (δ is the labeling's).
    The cost: the labeling runs at a smaller ε, so its λ grows by ``1/(1 - fraction)``
    and it needs that many times more teachers for the same answers; the estimate's
    noise has scale ``1/ε_estimate``.  (If the estimate reads only rows that the teachers
    never see and its hypothesis depends on no private row, parallel composition gives
    ``max`` instead of the sum; this split is the safe default.)

    Parameters
    ----------
    epsilon_total : float
        The whole budget.
    fraction : float
        Share for the estimate, in (0, 1).
    """
    eps = check_epsilon(epsilon_total, "epsilon_total")
    f = check_probability(fraction, "fraction")
    return BudgetSplit(epsilon_estimate=f * eps, epsilon_labeling=(1.0 - f) * eps)
