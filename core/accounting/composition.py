"""Composition of pure-DP steps: basic, advanced (Dwork–Rothblum–Vadhan), the exact optimal
composition in closed form (Kairouz–Oh–Viswanath) and dp-accounting's PLD."""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import optimize

from core.accounting.guarantee import PrivacyGuarantee
from core.errors import ParameterError
from core.validation import (
    check_epsilon,
    check_probability,
    check_T,
)

COMPOSITION_METHODS = ("basic", "advanced", "exact", "pld", "best")

__all__ = [
    "COMPOSITION_METHODS","basic_composition_epsilon", "advanced_composition_epsilon", "advanced_composition_eps0", "optimal_composition_epsilon", "exact_composition_epsilon", "compose_pure_dp", "optimal_composition_delta",
    "laplace_composition_epsilon", "pld_interval"]


# ---------------------------------------------------------------------------
# Composition of pure-DP steps
# ---------------------------------------------------------------------------

def basic_composition_epsilon(eps0, k):
    """Basic composition: ``k`` adaptive ``eps0``-DP steps are ``k·eps0``-DP (δ = 0).

    Parameters
    ----------
    eps0 : float or array-like
        Per-step ε.
    k : int or array-like
        Number of steps.

    Returns
    -------
    numpy.ndarray of float
        ``k·eps0``, broadcast over the inputs (0-d for scalar inputs).

    References
    ----------
    C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy",
    Foundations and Trends in Theoretical Computer Science 9(3–4), 2014 (Theorem 3.16).
    """
    return np.asarray(eps0, dtype=float) * np.asarray(k, dtype=float)


def advanced_composition_epsilon(eps0, k, delta_prime):
    """Advanced composition (Dwork, Rothblum, Vadhan 2010; docs/design.md §3.5).

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

    Returns
    -------
    numpy.ndarray of float
        The total ε, broadcast over the inputs (0-d for scalar inputs; ``inf`` where
        ``eps0`` is so large that ``e^eps0`` overflows).

    References
    ----------
    C. Dwork, G. N. Rothblum, S. Vadhan, "Boosting and Differential Privacy", FOCS 2010.
    C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy",
    Foundations and Trends in Theoretical Computer Science 9(3–4), 2014 (Theorem 3.20).
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

    Parameters
    ----------
    epsilon : float or array-like
        Total ε, finite and > 0.
    k : int or array-like
        Number of steps.
    delta_prime : float or array-like
        The slack δ' in (0, 1).

    Returns
    -------
    float or numpy.ndarray
        Per-step ε0 (a float for scalar inputs).

    References
    ----------
    C. Dwork, G. N. Rothblum, S. Vadhan, "Boosting and Differential Privacy", FOCS 2010.
    C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy",
    Foundations and Trends in Theoretical Computer Science 9(3–4), 2014 (Theorem 3.20).
    docs/design.md §3.5.
    """
    eps = np.asarray(epsilon, dtype=float)
    if np.any(eps <= 0) or not np.all(np.isfinite(eps)):
        raise ParameterError("epsilon must be a finite number greater than 0.")
    out = np.vectorize(_adv_eps0_scalar, otypes=[float])(eps, k, delta_prime)
    return out if out.ndim else float(out)


@functools.lru_cache(maxsize=4096)
def _pld_composed(eps0: float, rounds: int, discretization: float):
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

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

    Parameters
    ----------
    eps0 : float
        Per-step ε, > 0.
    rounds : int
        Number of steps, >= 1.
    delta : float
        Slack δ in [0, 1].
    discretization : float, default 1e-4
        Discretization interval of the privacy-loss distribution.

    Returns
    -------
    float
        The composed ε at δ (an upper bound, tight up to the discretization).

    References
    ----------
    P. Kairouz, S. Oh, P. Viswanath, "The Composition Theorem for Differential Privacy", ICML 2015.
    Google dp-accounting library (privacy-loss distributions).
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


def optimal_composition_delta(eps0: float, rounds: int, epsilon: float) -> float:
    """Exact δ of the optimal composition of ``rounds`` pure ``eps0``-DP steps at ε:
    ``E[(1 − e^(ε − L))₊]`` for the privacy loss ``L`` of :func:`_privacy_loss_law`.

    Parameters
    ----------
    eps0 : float
        ε of each pure-DP step.
    rounds : int
        Number of adaptively composed steps.
    epsilon : float
        The ε at which δ is computed.

    Returns
    -------
    float
        The smallest δ such that the composition is (ε, δ)-DP.

    References
    ----------
    P. Kairouz, S. Oh, P. Viswanath, "The Composition Theorem for Differential
    Privacy", ICML 2015; J. Murtagh, S. Vadhan, "The Complexity of Computing the
    Optimal Composition of Differential Privacy", TCC 2016.
    """
    loss, log_p = _privacy_loss_law(float(eps0), int(rounds))
    above = loss > epsilon
    return float(np.sum(np.exp(log_p[above]) * -np.expm1(epsilon - loss[above])))


@functools.lru_cache(maxsize=4096)
def _exact_epsilon(eps0: float, rounds: int, delta: float) -> float:
    if optimal_composition_delta(eps0, rounds, 0.0) <= delta:
        return 0.0
    lo, hi = 0.0, eps0 * rounds  # δ(eps0·rounds) = 0: no loss exceeds it
    for _ in range(200):  # bisection keeps δ(hi) <= delta: hi is a valid ε
        mid = 0.5 * (lo + hi)
        if optimal_composition_delta(eps0, rounds, mid) > delta:
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

    Parameters
    ----------
    eps0, rounds, delta
        As for :func:`optimal_composition_epsilon` (here without a discretization).

    Returns
    -------
    float
        The optimal composed ε at δ (never below the true optimum, 1e-12 relative).

    References
    ----------
    P. Kairouz, S. Oh, P. Viswanath, "The Composition Theorem for Differential Privacy", ICML 2015 (Theorem 3.3).
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
# Laplace coordinates: their own privacy-loss distribution, tighter than a generic pure step
# ---------------------------------------------------------------------------

_PLD_INTERVAL_CAP = 1e-3
_PLD_INTERVAL_FLOOR = 1e-4


def pld_interval(pure_steps=(), laplace=()) -> float:
    """The discretization interval of the privacy-loss distributions composed here.

    Generic pure steps: ``max(1e-4, Σ n·ε / 2·10⁵)`` (the composed loss spans at most the
    basic sum).  Laplace coordinates: at most ``min γ / 5`` and ``1e-3``, so that each
    coordinate's loss, which lies in ``[−γ, γ]``, spans ten cells or more; the grid of the
    composed loss then holds about ``5·sqrt(n)`` cells per standard deviation whatever γ
    (ε within about 1e-5 relative of a ten times finer grid's).
    With both, never finer than the composed loss's likely range (its mean plus 40
    standard deviations, both bounded by ``Σ n·ε²``) over 2·10⁵ cells, so that the grid
    stays small; a coarser grid is still a valid (pessimistic) bound.
    """
    basic = math.fsum(float(e) * int(n) for e, n in pure_steps)
    interval = max(_PLD_INTERVAL_FLOOR, basic / 2e5) if pure_steps else _PLD_INTERVAL_CAP
    if laplace:
        interval = min(interval, _PLD_INTERVAL_CAP, min(float(g) for g, _ in laplace) / 5.0)
        spread = math.fsum(float(e) ** 2 * int(n) for e, n in (*pure_steps, *laplace))
        interval = max(interval, (spread / 2.0 + 40.0 * math.sqrt(spread)) / 2e5)
    return float(interval)


@functools.lru_cache(maxsize=1024)
def _laplace_pld_epsilon(laplace: tuple, pure_steps: tuple, delta: float) -> float:
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    interval = pld_interval(pure_steps, laplace)
    total = None
    for gamma, n in laplace:  # pessimistic (the default): a valid upper bound
        p = pld.from_laplace_mechanism(1.0 / gamma, sensitivity=1.0, value_discretization_interval=interval)
        p = p.self_compose(n) if n > 1 else p
        total = p if total is None else total.compose(p)
    for eps, n in pure_steps:
        p = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(eps, 0.0),
                                        value_discretization_interval=interval)
        p = p.self_compose(n) if n > 1 else p
        total = p if total is None else total.compose(p)
    return float(total.get_epsilon_for_delta(delta))


def _check_step_pairs(pairs, name: str, what: str) -> tuple:
    out = []
    for pair in pairs:
        try:
            e, n = pair
        except (TypeError, ValueError):
            raise ParameterError(f"each {name} entry must be a pair ({what}, count), got {pair!r}.") from None
        e = check_epsilon(e, what)
        n = check_T(n, "count")
        out.append((float(e), int(n)))
    return tuple(sorted(out))


def laplace_composition_epsilon(laplace, delta: float, *, pure_steps=()) -> float:
    """ε at slack δ of Laplace coordinates (and pure steps) composed by their privacy-loss distributions.

    A Laplace coordinate is one value released with ``Lap(1/γ)`` noise whose neighbouring
    inputs differ by at most 1: a pure γ-DP step whose privacy loss, ``γ·(|Z − 1| − |Z|)``
    for ``Z ~ Lap(1/γ)``, is +γ with probability 1/2, −γ with probability ``e^−γ/2`` and
    spread evenly in between otherwise — far from the worst case of a pure γ-DP step
    (randomized response, ±γ only).  Composed, the coordinates' losses add; dp-accounting's
    privacy-loss distributions compose them (connect-the-dots, pessimistic), so the result
    is a valid upper bound, tight up to the discretization (:func:`pld_interval`).

    LNMax's ``n`` answers are ``((γ, 2n),)``: one changed teacher moves two of a query's
    vote counts by one each (docs/design.md §3.4).

    Parameters
    ----------
    laplace : sequence of (gamma, count)
        Laplace coordinates: noise ``Lap(1/gamma)``, sensitivity 1; ``count`` of each.
    delta : float
        Slack δ in [0, 1].
    pure_steps : sequence of (eps, count), optional
        Generic pure-DP steps composed with them (randomized response's loss).

    Returns
    -------
    float
        The composed ε at δ.

    References
    ----------
    Google dp-accounting library (privacy-loss distributions; ``from_laplace_mechanism``).
    V. Doroshenko, B. Ghazi, P. Kamath, R. Kumar, P. Manurangsi, "Connect the Dots: Tighter
    Discrete Approximations of Privacy Loss Distributions", PETS 2022.
    S. Meiser, E. Mohammadi, "Tight on Budget? Tight Bounds for r-Fold Approximate
    Differential Privacy", CCS 2018.
    docs/design.md §3.4.
    """
    laplace = _check_step_pairs(laplace, "laplace", "gamma")
    pure_steps = _check_step_pairs(pure_steps, "pure_steps", "eps_step")
    delta = check_probability(delta, "delta")
    if not laplace and not pure_steps:
        return 0.0
    return _laplace_pld_epsilon(laplace, pure_steps, float(delta))
