"""BTT sparse-vector labeling: the paper's noise scale, threshold and number of teachers
(Algorithm 2), Theorem 3.2's cutoff, the release term, the exact guarantee and the two
calibrations (docs/design.md §3.2, §3.3)."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from core.accounting.composition import compose_pure_dp
from core.accounting.guarantee import PrivacyGuarantee
from core.errors import ParameterError
from core.noise import discrete_laplace_tail, rational_scale
from core.validation import (
    check_delta,
    check_delta_array,
    check_epsilon,
    check_m,
    check_probability,
    check_real_array,
    check_T,
    FloatOrArray,
    as_output,
    check_beta,
    each_checked,
    positive_array,
    unit_array,
)

__all__ = ["BTTCalibration", "btt_noise_scale", "btt_threshold", "btt_num_teachers", "cutoff_T", "misclassification_bound", "svt_round_epsilon", "release_delta", "btt_guarantee", "calibrate_btt"]


_METHOD_WORDS = {"exact": "exact (optimal)", "pld": "privacy-loss-distribution (optimal)"}
"""Composition methods in words (a run's accounting sentence); the others read as they are."""


# ---------------------------------------------------------------------------
# BTT sparse-vector labeling
# ---------------------------------------------------------------------------


def btt_noise_scale(T, epsilon, delta):
    """The paper's threshold noise scale ``λ = sqrt(32 T log(2/δ)) / ε`` (BTT Alg. 2).

    Queries get ``Lap(2λ)`` and the threshold ``Lap(λ)``.  Vectorized.
    For soft labels (docs/design.md §3.3) call it with ``2T``.

    Parameters
    ----------
    T : float or array-like
        The cutoff (number of sparse-vector rounds), >= 1.
    epsilon : float or array-like
        Target ε, > 0.
    delta : float or array-like
        Target δ in (0, 1).

    Returns
    -------
    float or numpy.ndarray
        The noise scale λ (votes), broadcast over the inputs.

    References
    ----------
    R. Bassily, O. Thakkar, A. Thakurta, "Model-Agnostic Private Learning", NeurIPS 2018 (Algorithm 2).
    docs/design.md §3.2, §3.3.
    """
    T = check_real_array(T, "T", 1.0, what="the cutoff")
    epsilon = check_real_array(epsilon, "epsilon", 0.0, low_open=True)
    delta = check_delta_array(delta, "delta")
    return np.sqrt(32.0 * T * np.log(2.0 / delta)) / epsilon


def btt_threshold(noise_scale, m, delta):
    """The paper's threshold ``w = 2 λ log(2m/δ)`` (BTT Alg. 2).  Vectorized.

    For soft labels (docs/design.md §3.3) call it with ``2m``.

    Parameters
    ----------
    noise_scale : float or array-like
        λ, > 0 (see :func:`btt_noise_scale`).
    m : float or array-like
        Number of queries, >= 1.
    delta : float or array-like
        Target δ in (0, 1).

    Returns
    -------
    float or numpy.ndarray
        The threshold ``w`` on the distance to instability (votes), broadcast over the
        inputs.

    References
    ----------
    R. Bassily, O. Thakkar, A. Thakurta, "Model-Agnostic Private Learning", NeurIPS 2018 (Algorithm 2).
    docs/design.md §3.2, §3.3.
    """
    lam = check_real_array(noise_scale, "noise_scale", 0.0, low_open=True)
    m = check_real_array(m, "m", 1.0, what="the number of queries")
    delta = check_delta_array(delta, "delta")
    return 2.0 * lam * np.log(2.0 * m / delta)


def btt_num_teachers(noise_scale, m, T, delta, beta) -> FloatOrArray:
    """BTT's recommended number of teachers (Algorithm 2, line 1).

    ``k = 34·sqrt(2)·λ·log(4 m T / min(δ, β/2))``.

    Theorem 3.2's proof asks for ``k/3 >= 32 log(4mT/min(δ, β/2)) sqrt(2T log(2/δ))/ε``,
    which with the paper's ``λ = 4 sqrt(2T log(2/δ))/ε`` reads ``k >= 24 λ log(...)``;
    line 1 prints the constant ``34·√2 ≈ 48.08``, about twice that, which is also what a
    ``2k/3`` majority needs with the corrected distance ``ceil(M/2) - 1`` (docs/design.md §2),
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
    lam = positive_array(noise_scale, "noise_scale", "the threshold noise scale λ")
    m = positive_array(m, "m", "the number of queries")
    T = positive_array(T, "T", "the cutoff")
    delta = each_checked(check_delta, delta, "delta")
    beta = each_checked(check_beta, beta, "beta")
    return as_output(34.0 * math.sqrt(2.0) * lam * np.log(4.0 * m * T / np.minimum(delta, beta / 2.0)))


def cutoff_T(gamma, alpha, m, beta) -> FloatOrArray:
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
    g = unit_array(gamma, "gamma", "the best error of the hypothesis class")
    a = unit_array(alpha, "alpha", "the learner's error")
    m = positive_array(m, "m", "the number of queries")
    beta = each_checked(check_beta, beta, "beta")
    ga_m = (g + a) * m
    return as_output(3.0 * (ga_m + np.sqrt(np.maximum(ga_m * np.log(m / beta) / 2.0, 0.0))))


def misclassification_bound(gamma, alpha, m, beta) -> FloatOrArray:
    """The misclassification-rate bound of BTT Theorem 3.2: ``T/m = O(γ + α)``.

    Same assumptions as :func:`cutoff_T`; holds with probability ``>= 1 - 2β``.  A value
    of 1 or more is vacuous.
    """
    return as_output(np.asarray(cutoff_T(gamma, alpha, m, beta)) / positive_array(m, "m", "the number of queries"))


def svt_round_epsilon(noise_scale: float) -> float:
    """ε of one sparse-vector round: threshold noise ``Lap(λ)``, query noise ``Lap(2λ)``,
    sensitivity-1 queries (the distance to instability): ``2/λ`` (AboveThreshold).

    Parameters
    ----------
    noise_scale : float
        λ, > 0 (threshold noise ``Lap(λ)``, query noise ``Lap(2λ)``).

    Returns
    -------
    float
        The pure ε ``2/λ`` of one AboveThreshold round.

    References
    ----------
    C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy",
    Foundations and Trends in Theoretical Computer Science 9(3–4), 2014 (Theorem 3.23, AboveThreshold).
    R. Bassily, O. Thakkar, A. Thakurta, "Model-Agnostic Private Learning", NeurIPS 2018.
    docs/design.md §3.2.
    """
    return 2.0 / float(noise_scale)


def _dlap_pmf_support(scale: float, tail: float = 1e-30):
    """Support and pmf of DLap(scale) truncated where the two tails hold < ``tail``;
    returns (z, pmf, dropped_mass).

    The scale is the one :func:`core.noise.discrete_laplace` actually samples (the
    float rounded up to a rational, :func:`core.noise.rational_scale`)."""
    scale = float(rational_scale(scale))
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
    larger is returned (so the value is never below docs/design.md §3.2's formula):

    * docs/design.md §3.2: ``tests · P[Z_q - Z_t > w]`` with ``Z_q ~ Lap(2λ)``, ``Z_t ~ Lap(λ)``.
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

    Returns
    -------
    float
        Upper bound on the probability that some query with distance to instability 0
        is released, the larger of the two bounds above.

    References
    ----------
    R. Bassily, O. Thakkar, A. Thakurta, "Model-Agnostic Private Learning", NeurIPS 2018 (Algorithm 2).
    C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy",
    Foundations and Trends in Theoretical Computer Science 9(3–4), 2014 (Section 3.6, sparse vector).
    docs/design.md §3.2.
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
    """The exact (ε, δ) of BTT's sparse-vector labeling for given λ, w (docs/design.md §3.2).

    Each stretch between two ⊥ is one AboveThreshold round on the sensitivity-1
    distance to instability, a pure ``2/λ``-DP step; ``T`` rounds (``2T`` failed tests
    for soft labels) are composed by :func:`compose_pure_dp` at slack
    ``delta_svt``; released labels add :func:`release_delta` over ``m`` tests (``2m``
    for soft labels).  Guarantee: ``(ε_svt, δ_svt + δ_release)`` under replace-one
    adjacency.

    Parameters
    ----------
    noise_scale : float
        λ, > 0.
    threshold : float
        The threshold ``w`` on the distance to instability.
    T : int
        The cutoff (number of ⊥ answers allowed), >= 1.
    m : int
        Number of queries, >= 1.
    delta_svt : float
        Slack δ of the composition of the sparse-vector rounds, in (0, 1).
    soft : bool, default False
        Soft labels (docs/design.md §3.3): ``2T`` rounds and ``2m`` tests.
    method : str, default "best"
        Composition passed to :func:`compose_pure_dp` (``"best"`` takes the smallest valid ε).

    Returns
    -------
    PrivacyGuarantee
        ``(ε_svt, δ_svt + δ_release)`` with method ``"btt-exact/<composition>"`` and the
        parts ``epsilon_svt``, ``delta_svt``, ``delta_release``, ``rounds``, ``tests`` and
        ``composition``.

    References
    ----------
    R. Bassily, O. Thakkar, A. Thakurta, "Model-Agnostic Private Learning", NeurIPS 2018 (Algorithm 2, Theorem 3.4).
    C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy",
    Foundations and Trends in Theoretical Computer Science 9(3–4), 2014 (Section 3.6).
    P. Kairouz, S. Oh, P. Viswanath, "The Composition Theorem for Differential Privacy", ICML 2015.
    docs/design.md §3.2.
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
        f"AboveThreshold test: discrete Laplace noise of scale {noise_scale:.4g} on the threshold and "
        f"of scale {2 * noise_scale:.4g} on each query's distance to instability, which one private row "
        f"moves by at most 1) composed by {_METHOD_WORDS.get(comp.method, comp.method)} composition: "
        f"ε = {comp.epsilon:.4g} with "
        f"δ = {comp.delta:.3g} for the rounds; plus δ = {d_rel:.3g} for the release, the chance that an "
        f"unstable plurality crosses the threshold w = {threshold:.4g} over {tests} tests."
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
        """The calibrated guarantee's ε (``guarantee.epsilon``).

        Returns
        -------
        float
        """
        return self.guarantee.epsilon

    @property
    def delta(self) -> float:
        """The calibrated guarantee's δ (``guarantee.delta``).

        Returns
        -------
        float
            At most the target δ (the composition's and the release's parts together).
        """
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
        if g.delta > delta * (1.0 + 1e-9):
            # Never report a δ above the target without a word: refuse, naming the fix.
            raise ParameterError(
                f"The paper calibration cannot meet δ = {delta:g} at ε = {epsilon:g}, T = {T}, m = {m}: "
                f"its own release term alone is δ_release = {d_rel:.3g}, so the run would be "
                f"({g.epsilon:.4g}, {g.delta:.3g})-DP. Use calibration='tight' (which meets any target), "
                "or lower T, or label more queries at once (a larger m)."
            )
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
    *,
    delta: float,
    T: int,
    m: int,
    calibration: str = "tight",
    soft: bool = False,
    delta_split: float = 0.5,
) -> BTTCalibration:
    """Noise scale and threshold for BTT labeling at a target (ε, δ) (docs/design.md §3.2).

    Parameters
    ----------
    epsilon, delta : float
        The target guarantee.
    T : int
        Cutoff: maximum number of ⊥ (for soft labels, ``2T`` failed tests are allowed).
    m : int
        Maximum number of queries.
    calibration : {"tight", "paper"}, default "tight"
        ``paper``: λ and w exactly as printed in BTT Alg. 2 (with 2T, 2m for soft
        labels); the exact guarantee is then reported, below (ε, δ).  ``tight``: the
        smallest λ whose composition (best of basic, advanced and the exact optimum) meets ε
        at ``δ_svt = delta_split·δ``, and the smallest w whose release term fits in
        the remaining δ.  Same mechanism; far more answered queries for realistic k.
    soft : bool
        Soft labels (docs/design.md §3.3): ``2T`` rounds, ``2m`` tests.
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
