"""Privacy accounting: every (ε, δ) the library reports is computed here.

One interface: every accountant returns a :class:`PrivacyGuarantee` (ε, δ, the method
and a sentence saying how it was computed).

Contents
--------
Composition of pure-DP steps
    :func:`compose_pure_dp` composes ``rounds`` adaptive pure ``eps_round``-DP steps
    by basic composition, advanced composition (Dwork–Rothblum–Vadhan), the optimal
    composition in closed form (Kairouz–Oh–Viswanath, :func:`exact_composition_epsilon`)
    or the optimal composition computed as a privacy-loss distribution (PLD) by Google's
    ``dp-accounting`` library (:func:`optimal_composition_epsilon`, pessimistically
    discretized; the tests check the two against each other).  ``method="best"`` takes
    the smallest of basic, advanced and exact (each is a valid upper bound, so their
    minimum is too); the closed form is exact and takes milliseconds where the PLD takes
    about a second, which keeps the app's answers immediate.
Advanced composition (DESIGN §3.5)
    :func:`advanced_composition_epsilon` and its inverse :func:`advanced_composition_eps0`.
BTT sparse-vector labeling (DESIGN §3.2, §3.3)
    The paper's noise scale and threshold (:func:`btt_noise_scale`,
    :func:`btt_threshold`), the release term :func:`release_delta`, the exact
    guarantee :func:`btt_guarantee`, and the two calibrations :func:`calibrate_btt`.
PATE (DESIGN §3.4)
    :func:`pate_simple_epsilon` (data-independent) and :func:`pate_moments_epsilon`
    (data-dependent moments accountant: a NON-PRIVATE diagnostic).

Adjacency: replace one private row (DESIGN §1); at most one teacher changes.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np
from scipy import optimize

from .errors import ParameterError
from .noise import discrete_laplace_tail
from .validation import (
    check_counts,
    check_delta,
    check_epsilon,
    check_gamma,
    check_m,
    check_probability,
    check_real_array,
    check_T,
)

__all__ = [
    "PrivacyGuarantee",
    "BTTCalibration",
    "basic_composition_epsilon",
    "advanced_composition_epsilon",
    "advanced_composition_eps0",
    "optimal_composition_epsilon",
    "exact_composition_epsilon",
    "compose_pure_dp",
    "btt_noise_scale",
    "btt_threshold",
    "svt_round_epsilon",
    "release_delta",
    "btt_guarantee",
    "calibrate_btt",
    "a_stab_threshold",
    "composition_baseline_parameters",
    "pate_simple_epsilon",
    "pate_gamma_for_epsilon",
    "lnmax_guarantee",
    "lnmax_gamma_for_epsilon",
    "pate_moments_epsilon",
    "COMPOSITION_METHODS",
]

COMPOSITION_METHODS = ("basic", "advanced", "exact", "pld", "best")


@dataclass(frozen=True)
class PrivacyGuarantee:
    """An (ε, δ)-differential-privacy guarantee and how it was obtained.

    Attributes
    ----------
    epsilon, delta : float
        The guarantee, under replace-one adjacency.
    method : str
        Short name of the accountant (``"basic"``, ``"advanced"``, ``"pld"``,
        ``"btt-exact"``, ``"pate-simple"`` ...).
    detail : str
        One or two sentences saying how (ε, δ) was computed.
    parts : dict
        The components (e.g. ``epsilon_svt``, ``delta_svt``, ``delta_release``).
    """

    epsilon: float
    delta: float
    method: str
    detail: str = ""
    parts: dict = field(default_factory=dict)


# ---------------------------------------------------------------------------
# Composition of pure-DP steps
# ---------------------------------------------------------------------------

def basic_composition_epsilon(eps0, k):
    """Basic composition: ``k`` adaptive ``eps0``-DP steps are ``k·eps0``-DP (δ = 0)."""
    return np.asarray(eps0, dtype=float) * np.asarray(k, dtype=float)


def advanced_composition_epsilon(eps0, k, delta_prime):
    """Advanced composition (Dwork, Rothblum, Vadhan 2010; DESIGN §3.5).

    ``k`` adaptive ``eps0``-DP steps are ``(ε, δ')``-DP with
    ``ε = sqrt(2 k log(1/δ')) eps0 + k eps0 (e^eps0 - 1)``.
    (With ``(eps0, δ0)`` steps the total δ is ``k δ0 + δ'``.)  Vectorized.

    Parameters
    ----------
    eps0 : float or array
        Per-step ε; > 0.
    k : int or array
        Number of steps.
    delta_prime : float or array
        The slack δ' in (0, 1).
    """
    eps0 = np.asarray(eps0, dtype=float)
    k = np.asarray(k, dtype=float)
    dp = np.asarray(delta_prime, dtype=float)
    if np.any(eps0 <= 0) or np.any(k < 1) or np.any((dp <= 0) | (dp >= 1)):
        raise ParameterError("advanced composition needs eps0 > 0, k >= 1 and 0 < delta' < 1.")
    with np.errstate(over="ignore"):  # huge eps0 (root search) gives inf, which is right
        return np.sqrt(2.0 * k * np.log(1.0 / dp)) * eps0 + k * eps0 * np.expm1(eps0)


def _adv_eps0_scalar(epsilon: float, k: float, delta_prime: float) -> float:
    f = lambda e0: float(advanced_composition_epsilon(e0, k, delta_prime)) - epsilon
    hi = epsilon / max(1.0, math.sqrt(k))
    while f(hi) < 0:
        hi *= 2.0
    return optimize.brentq(f, 0.0 + 1e-300, hi, xtol=1e-300, rtol=1e-14, maxiter=500)


def advanced_composition_eps0(epsilon, k, delta_prime):
    """Inverse of :func:`advanced_composition_epsilon`: the per-step ε0 giving total ε.

    Solved numerically (Brent's method; the total is increasing in ε0) to about 1e-14
    relative error.  Vectorized.
    """
    eps = np.asarray(epsilon, dtype=float)
    if np.any(eps <= 0) or not np.all(np.isfinite(eps)):
        raise ParameterError("epsilon must be a finite number greater than 0.")
    out = np.vectorize(_adv_eps0_scalar, otypes=[float])(eps, k, delta_prime)
    return out if out.ndim else float(out)


@functools.lru_cache(maxsize=4096)
def _pld_composed(eps0: float, rounds: int, discretization: float):
    from dp_accounting.pld import common, privacy_loss_distribution as pld

    base = pld.from_privacy_parameters(
        common.DifferentialPrivacyParameters(eps0, 0.0),
        value_discretization_interval=discretization,
    )
    return base.self_compose(rounds)


def optimal_composition_epsilon(eps0: float, rounds: int, delta: float, *, discretization: float = 1e-4) -> float:
    """Optimal composition of ``rounds`` adaptive pure ``eps0``-DP steps at slack δ.

    Computed by Google's ``dp-accounting`` library as the ``rounds``-fold
    self-composition of the privacy-loss distribution of the worst-case pure
    ``eps0``-DP pair (randomized response), with pessimistic discretization, so the
    result is a valid upper bound and tight up to the discretization interval
    (Kairouz, Oh, Viswanath 2015 give the same quantity in closed form; the tests
    check one against the other).
    """
    eps0 = check_epsilon(eps0, "eps0")
    rounds = check_T(rounds, "rounds")
    delta = check_probability(delta, "delta")
    return float(_pld_composed(float(eps0), int(rounds), float(discretization)).get_epsilon_for_delta(delta))


@functools.lru_cache(maxsize=8)  # arrays of rounds + 1 entries: keep few
def _privacy_loss_law(eps0: float, rounds: int) -> tuple[np.ndarray, np.ndarray]:
    """Privacy loss of ``rounds``-fold randomized response at ``eps0`` and its log-probabilities:
    ``eps0·(rounds − 2i)`` with ``i ~ Bin(rounds, 1/(1 + e^eps0))`` (Kairouz–Oh–Viswanath)."""
    from scipy.special import gammaln

    i = np.arange(rounds + 1)
    log_choose = gammaln(rounds + 1) - gammaln(i + 1) - gammaln(rounds - i + 1)
    log_q = -np.logaddexp(0.0, eps0)  # log 1/(1 + e^eps0)
    log_p = log_choose + (rounds - i) * (eps0 + log_q) + i * log_q
    return eps0 * (rounds - 2 * i), log_p


def _optimal_composition_delta(eps0: float, rounds: int, epsilon: float) -> float:
    """Exact δ of the optimal composition of ``rounds`` pure ``eps0``-DP steps at ε:
    ``E[(1 − e^(ε − L))₊]`` for the privacy loss ``L`` of :func:`_privacy_loss_law`."""
    loss, log_p = _privacy_loss_law(float(eps0), int(rounds))
    above = loss > epsilon
    return float(np.sum(np.exp(log_p[above]) * -np.expm1(epsilon - loss[above])))


@functools.lru_cache(maxsize=4096)
def _exact_epsilon(eps0: float, rounds: int, delta: float) -> float:
    if _optimal_composition_delta(eps0, rounds, 0.0) <= delta:
        return 0.0
    lo, hi = 0.0, eps0 * rounds  # δ(eps0·rounds) = 0: no loss exceeds it
    for _ in range(200):  # bisection keeps δ(hi) <= delta: hi is a valid ε
        mid = 0.5 * (lo + hi)
        if _optimal_composition_delta(eps0, rounds, mid) > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * max(1.0, hi):
            break
    return hi


def exact_composition_epsilon(eps0: float, rounds: int, delta: float) -> float:
    """Optimal composition of ``rounds`` adaptive pure ``eps0``-DP steps at slack δ, exactly.

    Kairouz, Oh and Viswanath (2015) show that the worst case of the adaptive
    composition of pure ``eps0``-DP steps is randomized response; its privacy loss is
    ``eps0·(rounds − 2i)`` with ``i ~ Bin(rounds, 1/(1 + e^eps0))``, and the smallest ε
    at slack δ solves ``E[(1 − e^(ε − L))₊] = δ``.  This sums that expectation in log
    space (``rounds + 1`` terms) and bisects on ε, returning the upper end of the final
    bracket, so the result is valid (never below the true optimum) to 1e-12 relative.
    """
    eps0 = check_epsilon(eps0, "eps0")
    rounds = check_T(rounds, "rounds")
    delta = check_probability(delta, "delta")
    return _exact_epsilon(float(eps0), int(rounds), float(delta))


def compose_pure_dp(eps_round: float, rounds: int, delta: float, method: str = "best") -> PrivacyGuarantee:
    """Compose ``rounds`` adaptive pure ``eps_round``-DP steps at slack ``delta``.

    Used for BTT's sparse-vector rounds and for LNMax's answers alike.

    Parameters
    ----------
    eps_round : float
        ε of one round (``2/λ`` for BTT's AboveThreshold rounds).
    rounds : int
        Number of rounds (the cutoff T; 2T for soft labels).
    delta : float
        The δ allowed for composition (ignored by ``basic``, which has δ = 0).
    method : {"basic", "advanced", "exact", "pld", "best"}
        ``best`` returns the smallest ε of basic, advanced and exact (the exact optimum
        is never above the others; basic has δ = 0, so it wins ties).  ``pld`` asks
        Google's dp-accounting for the same optimum (pessimistically discretized).

    Returns
    -------
    PrivacyGuarantee
    """
    eps_round = check_epsilon(eps_round, "eps_round")
    rounds = check_T(rounds, "rounds")
    delta = check_probability(delta, "delta")
    if method not in COMPOSITION_METHODS:
        raise ParameterError(f"method must be one of {COMPOSITION_METHODS}, got {method!r}.")
    candidates = {}
    if method in ("basic", "best"):
        candidates["basic"] = (float(basic_composition_epsilon(eps_round, rounds)), 0.0)
    if method in ("advanced", "best"):
        candidates["advanced"] = (float(advanced_composition_epsilon(eps_round, rounds, delta)), delta)
    if method in ("exact", "best"):
        candidates["exact"] = (exact_composition_epsilon(eps_round, rounds, delta), delta)
    if method == "pld":
        candidates["pld"] = (optimal_composition_epsilon(eps_round, rounds, delta), delta)
    name = min(candidates, key=lambda k: candidates[k][0])
    eps, d = candidates[name]
    words = {
        "basic": "basic composition (sum of the rounds' ε)",
        "advanced": "advanced composition (Dwork–Rothblum–Vadhan)",
        "exact": "optimal composition, exact (Kairouz–Oh–Viswanath closed form)",
        "pld": "optimal composition via the privacy-loss distribution (dp-accounting)",
    }[name]
    return PrivacyGuarantee(
        epsilon=eps,
        delta=d,
        method=name,
        detail=f"{rounds} pure {eps_round:.4g}-DP rounds composed by {words}.",
        parts={k: v[0] for k, v in candidates.items()},
    )


# ---------------------------------------------------------------------------
# BTT sparse-vector labeling
# ---------------------------------------------------------------------------

def _unit_open(values, name: str) -> np.ndarray:
    """Elementwise ``0 < x < 1`` (δ of the vectorized calculators)."""
    arr = check_real_array(values, name)
    if np.any((arr <= 0) | (arr >= 1)):
        raise ParameterError(f"{name} must lie strictly between 0 and 1, got {values!r}.")
    return arr


def btt_noise_scale(T, epsilon, delta):
    """The paper's threshold noise scale ``λ = sqrt(32 T log(2/δ)) / ε`` (BTT Alg. 2).

    Queries get ``Lap(2λ)`` and the threshold ``Lap(λ)``.  Vectorized.
    For soft labels (DESIGN §3.3) call it with ``2T``.
    """
    T = check_real_array(T, "T", 1.0, what="the cutoff")
    epsilon = check_real_array(epsilon, "epsilon", 0.0, low_open=True)
    delta = _unit_open(delta, "delta")
    return np.sqrt(32.0 * T * np.log(2.0 / delta)) / epsilon


def btt_threshold(noise_scale, m, delta):
    """The paper's threshold ``w = 2 λ log(2m/δ)`` (BTT Alg. 2).  Vectorized.

    For soft labels (DESIGN §3.3) call it with ``2m``.
    """
    lam = check_real_array(noise_scale, "noise_scale", 0.0, low_open=True)
    m = check_real_array(m, "m", 1.0, what="the number of queries")
    delta = _unit_open(delta, "delta")
    return 2.0 * lam * np.log(2.0 * m / delta)


def svt_round_epsilon(noise_scale: float) -> float:
    """ε of one sparse-vector round: threshold noise ``Lap(λ)``, query noise ``Lap(2λ)``,
    sensitivity-1 queries (the distance to instability): ``2/λ`` (AboveThreshold)."""
    return 2.0 / float(noise_scale)


def _dlap_pmf_support(scale: float, tail: float = 1e-30):
    """Support and pmf of DLap(scale) truncated where the two tails hold < ``tail``;
    returns (z, pmf, dropped_mass)."""
    p = math.exp(-1.0 / scale)
    log_p = -1.0 / scale
    # P[|Z| > a] = 2 p^(a+1) / (1 + p) <= tail  =>  a >= log(tail (1+p) / 2) / log p - 1
    a = int(math.ceil(math.log(tail * (1 + p) / 2.0) / log_p))
    z = np.arange(-a, a + 1, dtype=float)
    pmf = math.exp(math.log1p(-p) - math.log1p(p)) * np.exp(np.abs(z) * log_p)
    dropped = 2.0 * math.exp((a + 1) * log_p - math.log1p(p))
    return z, pmf, dropped


def release_delta(noise_scale: float, threshold: float, tests: int, rounds: int, *, discrete: bool = True) -> float:
    """Probability bound that a query whose plurality is unstable gets released.

    A released label is exact and can leak only when its distance to instability is 0
    and the noise pushes it over the threshold.  Two bounds are computed and the
    larger is returned (so the value is never below DESIGN §3.2's formula):

    * DESIGN §3.2: ``tests · P[Z_q - Z_t > w]`` with ``Z_q ~ Lap(2λ)``, ``Z_t ~ Lap(λ)``.
    * A per-round bound that is rigorous for the adaptive threshold refreshes: the
      threshold noise of each of the at most ``rounds`` rounds is a fresh draw
      ``Z_t``; given ``Z_t = z``, each distance-0 query reached in that round passes
      with probability ``g(z) = P[Z_q > w + z]`` and any failure ends the round, so
      the expected number of distance-0 releases in the round is at most
      ``min(tests · g(z), g(z) / (1 - g(z)))``; summing over rounds and taking the
      expectation over ``z`` bounds the probability of any such release (Markov).

    Parameters
    ----------
    noise_scale : float
        λ.
    threshold : float
        w.
    tests : int
        Number of threshold tests (m; 2m for soft labels).
    rounds : int
        Number of sparse-vector rounds (T; 2T for soft labels).
    discrete : bool, default True
        Discrete Laplace noise (what the mechanisms use) or continuous Laplace, for
        which the first bound has the closed form
        ``(b1² e^(-w/b1) - b2² e^(-w/b2)) / (2 (b1² - b2²))``, ``b1 = 2λ, b2 = λ``.
    """
    lam = float(noise_scale)
    w = float(threshold)
    if not (lam > 0 and math.isfinite(lam) and math.isfinite(w)):
        raise ParameterError("noise_scale must be positive and threshold finite.")
    tests = check_m(tests, "tests")
    rounds = check_T(rounds, "rounds")
    if discrete:
        z, pmf, dropped = _dlap_pmf_support(lam)
        g = discrete_laplace_tail(2.0 * lam, w + z)  # pass iff Z_q > floor(w + z) (integers)
        p_single = float(np.sum(pmf * g) + dropped)
    else:
        # numerical integration on a fine grid for the per-round term; closed form for the first
        span = 70.0 * lam
        z = np.linspace(-span, span, 400_001)
        dz = z[1] - z[0]
        pmf = np.exp(-np.abs(z) / lam) / (2.0 * lam) * dz
        dropped = math.exp(-70.0)
        a = w + z
        b = 2.0 * lam
        g = np.where(a >= 0, 0.5 * np.exp(-np.maximum(a, 0) / b), 1.0 - 0.5 * np.exp(np.minimum(a, 0) / b))
        b1, b2 = 2.0 * lam, lam
        if w >= 0:
            p_single = (b1**2 * math.exp(-w / b1) - b2**2 * math.exp(-w / b2)) / (2.0 * (b1**2 - b2**2))
        else:
            p_single = 1.0 - (b1**2 * math.exp(w / b1) - b2**2 * math.exp(w / b2)) / (2.0 * (b1**2 - b2**2))
    with np.errstate(divide="ignore", invalid="ignore"):
        per_round = np.minimum(tests * g, np.where(g < 1.0, g / (1.0 - g), np.inf))
    per_round_bound = rounds * (float(np.sum(pmf * per_round)) + dropped * tests)
    design_bound = tests * p_single
    return float(min(1.0, max(design_bound, per_round_bound)))


def btt_guarantee(
    noise_scale: float,
    threshold: float,
    T: int,
    m: int,
    delta_svt: float,
    *,
    soft: bool = False,
    method: str = "best",
) -> PrivacyGuarantee:
    """The exact (ε, δ) of BTT's sparse-vector labeling for given λ, w (DESIGN §3.2).

    Each stretch between two ⊥ is one AboveThreshold round on the sensitivity-1
    distance to instability, a pure ``2/λ``-DP step; ``T`` rounds (``2T`` failed tests
    for soft labels) are composed by :func:`compose_pure_dp` at slack
    ``delta_svt``; released labels add :func:`release_delta` over ``m`` tests (``2m``
    for soft labels).  Guarantee: ``(ε_svt, δ_svt + δ_release)`` under replace-one
    adjacency.
    """
    T = check_T(T)
    m = check_m(m)
    rounds, tests = (2 * T, 2 * m) if soft else (T, m)
    eps_round = svt_round_epsilon(noise_scale)
    comp = compose_pure_dp(eps_round, rounds, delta_svt, method=method)
    d_rel = release_delta(noise_scale, threshold, tests, rounds)
    total_delta = comp.delta + d_rel
    detail = (
        f"{rounds} sparse-vector rounds (each a pure {eps_round:.4g}-DP "
        f"AboveThreshold with discrete Laplace threshold noise DLap({noise_scale:.4g}) and query "
        f"noise DLap({2 * noise_scale:.4g}) on the sensitivity-1 distance to instability) composed by "
        f"{comp.method} composition: ε = {comp.epsilon:.4g} at δ_svt = {comp.delta:.3g}; "
        f"plus δ_release = {d_rel:.3g}, the chance that an unstable plurality crosses the "
        f"threshold w = {threshold:.4g} over {tests} tests."
    )
    return PrivacyGuarantee(
        epsilon=comp.epsilon,
        delta=total_delta,
        method=f"btt-exact/{comp.method}",
        detail=detail,
        parts={
            "epsilon_svt": comp.epsilon,
            "delta_svt": comp.delta,
            "delta_release": d_rel,
            "rounds": rounds,
            "tests": tests,
            "composition": comp.method,
            "composition_candidates": comp.parts,
        },
    )


@dataclass(frozen=True)
class BTTCalibration:
    """Noise scale λ and threshold w for BTT labeling, with their exact guarantee.

    Attributes
    ----------
    calibration : {"paper", "tight"}
    noise_scale : float
        λ (threshold noise ``Lap(λ)``, query noise ``Lap(2λ)``).
    threshold : float
        w.
    rounds, tests : int
        Sparse-vector rounds (T, or 2T for soft labels) and tests (m, or 2m).
    guarantee : PrivacyGuarantee
        The exact (ε, δ), at most the requested (ε, δ).
    """

    calibration: str
    noise_scale: float
    threshold: float
    rounds: int
    tests: int
    guarantee: PrivacyGuarantee

    @property
    def epsilon(self) -> float:
        return self.guarantee.epsilon

    @property
    def delta(self) -> float:
        return self.guarantee.delta


def _smallest_threshold(lam: float, tests: int, rounds: int, budget: float) -> float:
    """Smallest w >= 0 with release_delta(λ, w) <= budget (bisection; decreasing in w)."""
    f = lambda w: release_delta(lam, w, tests, rounds) - budget
    lo, hi = 0.0, 2.0 * lam * math.log(2.0 * tests / budget) + 1.0
    while f(hi) > 0:
        hi *= 2.0
    if f(lo) <= 0:
        return lo
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-6 * max(1.0, hi):
            break
    return hi


@functools.lru_cache(maxsize=1024)
def _calibrate(epsilon: float, delta: float, T: int, m: int, calibration: str, soft: bool, delta_split: float) -> BTTCalibration:
    rounds, tests = (2 * T, 2 * m) if soft else (T, m)
    if calibration == "paper":
        lam = float(btt_noise_scale(rounds, epsilon, delta))
        w = float(btt_threshold(lam, tests, delta))
        d_rel = release_delta(lam, w, tests, rounds)
        # The paper's constants leave room: spend what δ_release leaves on the composition.
        delta_svt = max(delta - d_rel, delta * 1e-3)
        g = btt_guarantee(lam, w, T, m, delta_svt, soft=soft)
        return BTTCalibration("paper", lam, w, rounds, tests, g)
    # tight: smallest λ whose composed ε meets the target at δ_svt = split·δ, then the
    # smallest w whose release term fits in the rest of δ.
    delta_svt = delta * delta_split
    delta_rel = delta - delta_svt

    def eps_of(lam: float) -> float:
        return compose_pure_dp(svt_round_epsilon(lam), rounds, delta_svt, method="best").epsilon

    lo = 2.0 / epsilon * 0.999  # one round alone costs 2/λ <= ε
    hi = max(float(btt_noise_scale(rounds, epsilon, delta)), lo * 2.0)
    while eps_of(hi) > epsilon:
        hi *= 2.0
    if eps_of(lo) <= epsilon:
        hi = lo
    else:
        for _ in range(60):
            mid = math.sqrt(lo * hi)
            if eps_of(mid) > epsilon:
                lo = mid
            else:
                hi = mid
            if hi / lo - 1.0 < 1e-5:
                break
    lam = hi
    w = _smallest_threshold(lam, tests, rounds, delta_rel)
    g = btt_guarantee(lam, w, T, m, delta_svt, soft=soft)
    return BTTCalibration("tight", lam, w, rounds, tests, g)


def calibrate_btt(
    epsilon: float,
    delta: float,
    T: int,
    m: int,
    calibration: str = "paper",
    *,
    soft: bool = False,
    delta_split: float = 0.5,
) -> BTTCalibration:
    """Noise scale and threshold for BTT labeling at a target (ε, δ) (DESIGN §3.2).

    Parameters
    ----------
    epsilon, delta : float
        The target guarantee.
    T : int
        Cutoff: maximum number of ⊥ (for soft labels, ``2T`` failed tests are allowed).
    m : int
        Maximum number of queries.
    calibration : {"paper", "tight"}
        ``paper``: λ and w exactly as printed in BTT Alg. 2 (with 2T, 2m for soft
        labels); the exact guarantee is then reported, below (ε, δ).  ``tight``: the
        smallest λ whose composition (best of basic, advanced and the exact optimum) meets ε
        at ``δ_svt = delta_split·δ``, and the smallest w whose release term fits in
        the remaining δ.  Same mechanism; far more answered queries for realistic k.
    soft : bool
        Soft labels (DESIGN §3.3): ``2T`` rounds, ``2m`` tests.
    delta_split : float in (0, 1)
        Share of δ given to the composition in the ``tight`` calibration.

    Returns
    -------
    BTTCalibration
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    T = check_T(T)
    m = check_m(m)
    delta_split = check_probability(delta_split, "delta_split")
    if calibration not in ("paper", "tight"):
        raise ParameterError(f"calibration must be 'paper' or 'tight', got {calibration!r}.")
    return _calibrate(float(epsilon), float(delta), int(T), int(m), calibration, bool(soft), float(delta_split))


# ---------------------------------------------------------------------------
# A_stab and the advanced-composition baseline
# ---------------------------------------------------------------------------

def a_stab_threshold(epsilon: float, delta: float) -> float:
    """``Γ = log(1/δ)/ε``: A_stab releases when ``dist + Lap(1/ε) > Γ`` (BTT Thm 2.4).

    With discrete Laplace noise ``P[Z > Γ] = p^(⌊Γ⌋+1)/(1+p) < e^(-εΓ) = δ`` for
    ``p = e^(-ε)``, so the (ε, δ) guarantee holds as for continuous noise.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_probability(delta, "delta")
    return math.log(1.0 / delta) / epsilon


def composition_baseline_parameters(epsilon: float, delta: float, m: int) -> dict:
    """Per-query (ε0, δ0) for answering ``m`` queries with A_stab (DESIGN §3.5).

    Two ways to spend (ε, δ) on m answers are compared and the one giving the lower
    A_stab threshold ``Γ = log(1/δ0)/ε0`` (so more answers) is used:

    * advanced composition: ``δ' = δ/2``, ``δ0 = δ/(2m)`` and ``ε0`` solves
      ``sqrt(2m log(1/δ')) ε0 + m ε0 (e^ε0 − 1) = ε``;
    * basic composition (better for small m): ``ε0 = ε/m``, ``δ0 = δ/m``.

    Returns
    -------
    dict with ``eps0``, ``delta0``, ``delta_prime``, ``threshold`` (Γ), ``composition``
    and ``guarantee`` (a :class:`PrivacyGuarantee`).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    m = check_m(m)
    adv = {"eps0": float(advanced_composition_eps0(epsilon, m, delta / 2.0)), "delta0": delta / (2.0 * m),
           "delta_prime": delta / 2.0, "composition": "advanced"}
    basic = {"eps0": epsilon / m, "delta0": delta / m, "delta_prime": 0.0, "composition": "basic"}
    for option in (adv, basic):
        option["threshold"] = a_stab_threshold(option["eps0"], option["delta0"])
    par = min((adv, basic), key=lambda o: o["threshold"])
    eps0, delta0, how = par["eps0"], par["delta0"], par["composition"]
    if how == "advanced":
        total_eps = float(advanced_composition_epsilon(eps0, m, par["delta_prime"]))
        total_delta = m * delta0 + par["delta_prime"]
    else:
        total_eps, total_delta = eps0 * m, m * delta0
    par["guarantee"] = PrivacyGuarantee(
        epsilon=total_eps,
        delta=total_delta,
        method=f"composition/{how}",
        detail=(
            f"{m} independent A_stab answers, each ({eps0:.4g}, {delta0:.3g})-DP, composed by "
            f"{how} composition" + (f" with δ' = {par['delta_prime']:.3g}." if how == "advanced" else ".")
        ),
        parts={"eps0": eps0, "delta0": delta0, "delta_prime": par["delta_prime"]},
    )
    return par


# ---------------------------------------------------------------------------
# PATE
# ---------------------------------------------------------------------------

def pate_simple_epsilon(gamma, T, delta):
    """PATE's data-independent bound for ``T`` LNMax answers (PATE §3.1; DESIGN §3.4).

    Each answer is ``2γ``-DP; ``ε = 4Tγ² + 2γ sqrt(2T log(1/δ))``.  Vectorized.
    """
    gamma = check_real_array(gamma, "gamma", 0.0, low_open=True)
    T = check_real_array(T, "T", 1.0, what="the number of answers")
    delta = _unit_open(delta, "delta")
    out = 4.0 * T * gamma**2 + 2.0 * gamma * np.sqrt(2.0 * T * np.log(1.0 / delta))
    return out if out.ndim else float(out)


def pate_gamma_for_epsilon(epsilon, T, delta):
    """The γ at which PATE's data-independent bound for ``T`` answers equals ``ε``.

    The inverse of :func:`pate_simple_epsilon`: the positive root of
    ``4Tγ² + 2γ·sqrt(2T log(1/δ)) − ε = 0``,
    ``γ = (sqrt(b² + 16Tε) − b) / (8T)`` with ``b = 2 sqrt(2T log(1/δ))``.
    :func:`core.aggregators.lnmax_label` at this γ on ``T`` queries reports a guarantee
    of at most ``ε`` (the smaller of this bound and optimal composition).  Vectorized.
    """
    epsilon = check_real_array(epsilon, "epsilon", 0.0, low_open=True)
    T = check_real_array(T, "T", 1.0, what="the number of answers")
    delta = _unit_open(delta, "delta")
    b = 2.0 * np.sqrt(2.0 * T * np.log(1.0 / delta))
    # (sqrt(b² + 16Tε) − b) / (8T), written without cancellation for small ε
    out = 2.0 * epsilon / (np.sqrt(b * b + 16.0 * T * epsilon) + b)
    return out if out.ndim else float(out)


@functools.lru_cache(maxsize=1024)
def _lnmax_guarantee(gamma: float, m: int, delta: float) -> PrivacyGuarantee:
    simple = float(pate_simple_epsilon(gamma, m, delta))
    comp = compose_pure_dp(2.0 * gamma, m, delta, method="best")
    if simple <= comp.epsilon:
        return PrivacyGuarantee(
            simple, delta, "pate-simple",
            f"{m} LNMax answers, each 2γ = {2 * gamma:.4g}-DP, by PATE's data-independent bound "
            "4mγ² + 2γ·sqrt(2m·log(1/δ)).",
            parts={"pate_simple": simple, **comp.parts},
        )
    return PrivacyGuarantee(
        comp.epsilon, comp.delta, f"lnmax/{comp.method}",
        f"{m} LNMax answers, each a pure 2γ = {2 * gamma:.4g}-DP step; " + comp.detail,
        parts={"pate_simple": simple, **comp.parts},
    )


def lnmax_guarantee(gamma: float, m: int, delta: float) -> PrivacyGuarantee:
    """The privacy map of LNMax: the guarantee of ``m`` answers with noise ``Lap(1/γ)``.

    Each answer is ``2γ``-DP (PATE §3.1); the guarantee is the smaller of PATE's
    data-independent bound (:func:`pate_simple_epsilon`) and the best composition of
    ``m`` pure ``2γ``-DP steps (:func:`compose_pure_dp`), at slack δ.  It does not
    depend on the votes (the data-dependent ε of :func:`pate_moments_epsilon` does).
    """
    return _lnmax_guarantee(float(check_gamma(gamma)), int(check_m(m)), float(check_probability(delta, "delta")))


@functools.lru_cache(maxsize=256)
def _lnmax_gamma(epsilon: float, m: int, delta: float) -> float:
    gamma_simple = float(pate_gamma_for_epsilon(epsilon, m, delta))

    def excess(g: float) -> float:  # > 0 once the optimal composition of m 2g-DP steps exceeds ε
        return _optimal_composition_delta(2.0 * g, m, epsilon) - delta

    gamma = gamma_simple
    if excess(gamma_simple) <= 0:
        hi = 2.0 * gamma_simple
        while excess(hi) <= 0:
            hi *= 2.0
        gamma = optimize.brentq(excess, hi / 2.0, hi, xtol=1e-15, rtol=1e-12)
    if _lnmax_guarantee(gamma, m, delta).epsilon <= epsilon:
        return gamma
    # The root may sit a rounding error above: bisect on the reported guarantee itself
    # between γ_simple (always within ε) and the root.
    lo, hi = gamma_simple, gamma
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _lnmax_guarantee(mid, m, delta).epsilon <= epsilon else (lo, mid)
        if hi - lo <= 1e-12 * hi:
            break
    return lo


def lnmax_gamma_for_epsilon(epsilon: float, m: int, delta: float) -> float:
    """The largest γ (to about 1e-10 relative) whose LNMax guarantee on ``m`` answers is ≤ ε.

    The inverse of :func:`lnmax_guarantee`, so that LNMax spends the same budget as the
    other mechanisms when they are compared at equal (ε, δ).  PATE's bound is inverted
    in closed form (:func:`pate_gamma_for_epsilon`), the exact optimal composition by a
    root search on its closed form; the larger γ is checked with :func:`lnmax_guarantee`
    itself, so ``lnmax_guarantee(γ, m, δ).epsilon <= ε`` always.
    """
    epsilon = check_epsilon(epsilon)
    m = check_m(m)
    delta = check_probability(delta, "delta")
    return _lnmax_gamma(float(epsilon), int(m), float(delta))


def _moments_alpha(counts: np.ndarray, gamma: float, orders: np.ndarray) -> np.ndarray:
    """Per-query moment bounds α_i(l), shape (m, len(orders)) (PATE Thm 2, 3, Lemma 4)."""
    top = counts.max(axis=1, keepdims=True)
    top_idx = counts.argmax(axis=1)
    gaps = (top - counts).astype(float)  # Δ_j = n_j* − n_j >= 0
    terms = (2.0 + gamma * gaps) / (4.0 * np.exp(gamma * gaps))
    terms[np.arange(counts.shape[0]), top_idx] = 0.0  # j ≠ j*
    q = np.minimum(1.0, terms.sum(axis=1))  # (m,)
    l = orders[None, :].astype(float)
    pure = 2.0 * gamma * l
    data_indep = 2.0 * gamma**2 * l * (l + 1.0)
    bound = np.broadcast_to(np.minimum(pure, data_indep), (counts.shape[0], orders.size)).copy()
    limit = 1.0 / (math.exp(2.0 * gamma) + 1.0)  # (e^{2γ}−1)/(e^{4γ}−1)
    use = q < limit
    if np.any(use):
        qq = q[use][:, None]
        one_minus = 1.0 - qq
        ratio = one_minus / (1.0 - math.exp(2.0 * gamma) * qq)
        with np.errstate(divide="ignore"):
            dd = np.log(one_minus * ratio**l + qq * np.exp(2.0 * gamma * l))
        bound[use] = np.minimum(bound[use], dd)
    return bound


def pate_moments_epsilon(counts, gamma: float, delta: float, orders: Iterable[int] = range(1, 9)) -> float:
    """PATE's data-dependent ε for LNMax answers on ``counts`` (DESIGN §3.4).

    ``q_i = min(1, Σ_{j≠j*} (2 + γΔ_j) / (4 exp(γΔ_j)))``, ``Δ_j = n_j* − n_j``;
    ``α_i(l) = min(2γl, 2γ²l(l+1), log((1−q)((1−q)/(1−e^{2γ}q))^l + q e^{2γl}))``
    (the last term only where ``q < 1/(e^{2γ}+1)``), summed over the answered
    queries; ``ε = min_l (Σ α(l) + log(1/δ)) / l``.

    NON-PRIVATE: the value depends on the private vote counts.  It is a diagnostic,
    never a guarantee, and is never exported.

    Parameters
    ----------
    counts : array-like of int, shape (m, n_classes)
        Vote counts of the answered queries.
    gamma : float
        LNMax noise parameter (noise ``Lap(1/γ)``).
    delta : float
    orders : iterable of int
        Moment orders ``l``.
    """
    counts = check_counts(counts)
    gamma = check_gamma(gamma)
    delta = check_probability(delta, "delta")
    orders = np.asarray(list(orders), dtype=int)
    if orders.size == 0 or np.any(orders < 1):
        raise ParameterError("orders must be positive whole numbers.")
    total = _moments_alpha(counts, gamma, orders).sum(axis=0)
    return float(np.min((total + math.log(1.0 / delta)) / orders))
