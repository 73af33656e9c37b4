"""PATE's LNMax accounting: the data-independent bound, its inverse, LNMax's privacy map, and
the data-dependent moments accountant (a NON-PRIVATE diagnostic) (docs/design.md §3.4)."""

from __future__ import annotations

import functools
import math
from typing import Iterable

import numpy as np
from scipy import optimize

from core.accounting.composition import optimal_composition_delta, compose_pure_dp
from core.accounting.guarantee import PrivacyGuarantee
from core.errors import ParameterError
from core.validation import (
    check_counts,
    check_delta_array,
    check_epsilon,
    check_gamma,
    check_m,
    check_probability,
    check_real_array,
)

__all__ = ["pate_simple_epsilon", "pate_gamma_for_epsilon", "lnmax_guarantee", "lnmax_gamma_for_epsilon", "pate_moments_epsilon", "pate_moments_alpha"]


# ---------------------------------------------------------------------------
# PATE
# ---------------------------------------------------------------------------

def pate_simple_epsilon(gamma, T, delta):
    """PATE's data-independent bound for ``T`` LNMax answers (PATE §3.1; docs/design.md §3.4).

    Each answer is ``2γ``-DP; ``ε = 4Tγ² + 2γ sqrt(2T log(1/δ))``.  Vectorized.

    Parameters
    ----------
    gamma : float or array-like
        LNMax noise parameter γ, > 0 (noise ``Lap(1/γ)``).
    T : float or array-like
        Number of answers, >= 1.
    delta : float or array-like
        Target δ in (0, 1).

    Returns
    -------
    float or numpy.ndarray
        The ε bound (a float for scalar inputs).

    References
    ----------
    N. Papernot, M. Abadi, Ú. Erlingsson, I. Goodfellow, K. Talwar, "Semi-supervised
    Knowledge Transfer for Deep Learning from Private Training Data", ICLR 2017 (Section 3.1).
    docs/design.md §3.4.
    """
    gamma = check_real_array(gamma, "gamma", 0.0, low_open=True)
    T = check_real_array(T, "T", 1.0, what="the number of answers")
    delta = check_delta_array(delta, "delta")
    out = 4.0 * T * gamma**2 + 2.0 * gamma * np.sqrt(2.0 * T * np.log(1.0 / delta))
    return out if out.ndim else float(out)


def pate_gamma_for_epsilon(epsilon, T, delta):
    """The γ at which PATE's data-independent bound for ``T`` answers equals ``ε``.

    The inverse of :func:`pate_simple_epsilon`: the positive root of
    ``4Tγ² + 2γ·sqrt(2T log(1/δ)) − ε = 0``,
    ``γ = (sqrt(b² + 16Tε) − b) / (8T)`` with ``b = 2 sqrt(2T log(1/δ))``.
    :func:`core.mechanisms.lnmax_label` at this γ on ``T`` queries reports a guarantee
    of at most ``ε`` (the smaller of this bound and optimal composition).  Vectorized.

    Parameters
    ----------
    epsilon : float or array-like
        Target ε, > 0.
    T : float or array-like
        Number of answers, >= 1.
    delta : float or array-like
        Target δ in (0, 1).

    Returns
    -------
    float or numpy.ndarray
        γ (a float for scalar inputs).

    References
    ----------
    N. Papernot, M. Abadi, Ú. Erlingsson, I. Goodfellow, K. Talwar, "Semi-supervised
    Knowledge Transfer for Deep Learning from Private Training Data", ICLR 2017 (Section 3.1).
    docs/design.md §3.4.
    """
    epsilon = check_real_array(epsilon, "epsilon", 0.0, low_open=True)
    T = check_real_array(T, "T", 1.0, what="the number of answers")
    delta = check_delta_array(delta, "delta")
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

    Parameters
    ----------
    gamma : float
        LNMax noise parameter γ, > 0.
    m : int
        Number of answers, >= 1.
    delta : float
        Slack δ.

    Returns
    -------
    PrivacyGuarantee
        The data-independent (ε, δ) of the ``m`` answers.

    References
    ----------
    N. Papernot, M. Abadi, Ú. Erlingsson, I. Goodfellow, K. Talwar, "Semi-supervised
    Knowledge Transfer for Deep Learning from Private Training Data", ICLR 2017 (Section 3.1).
    P. Kairouz, S. Oh, P. Viswanath, "The Composition Theorem for Differential Privacy", ICML 2015.
    docs/design.md §3.4.
    """
    return _lnmax_guarantee(float(check_gamma(gamma)), int(check_m(m)), float(check_probability(delta, "delta")))


@functools.lru_cache(maxsize=256)
def _lnmax_gamma(epsilon: float, m: int, delta: float) -> float:
    gamma_simple = float(pate_gamma_for_epsilon(epsilon, m, delta))

    def excess(g: float) -> float:  # > 0 once the optimal composition of m 2g-DP steps exceeds ε
        return optimal_composition_delta(2.0 * g, m, epsilon) - delta

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

    Parameters
    ----------
    epsilon : float
        Target ε, > 0.
    m : int
        Number of answers, >= 1.
    delta : float
        Slack δ.

    Returns
    -------
    float
        γ with ``lnmax_guarantee(γ, m, δ).epsilon <= epsilon``.

    References
    ----------
    N. Papernot, M. Abadi, Ú. Erlingsson, I. Goodfellow, K. Talwar, "Semi-supervised
    Knowledge Transfer for Deep Learning from Private Training Data", ICLR 2017 (Section 3.1).
    P. Kairouz, S. Oh, P. Viswanath, "The Composition Theorem for Differential Privacy", ICML 2015.
    docs/design.md §3.4.
    """
    epsilon = check_epsilon(epsilon)
    m = check_m(m)
    delta = check_probability(delta, "delta")
    return _lnmax_gamma(float(epsilon), int(m), float(delta))


def pate_moments_alpha(counts: np.ndarray, gamma: float, orders: np.ndarray) -> np.ndarray:
    """Per-query moment bounds α_i(l), shape (m, len(orders)) (PATE Thm 2, 3, Lemma 4).

    NON-PRIVATE: a function of the private votes (the data-dependent moments).

    Parameters
    ----------
    counts : numpy.ndarray of int, shape (m, K)
        Vote counts, already checked.
    gamma : float
        LNMax's Laplace noise parameter γ (noise ``Lap(1/γ)``).
    orders : numpy.ndarray
        Moments l (whole numbers ≥ 1).

    Returns
    -------
    numpy.ndarray of float, shape (m, len(orders))
        ``min(2γl, 2γ²l(l+1), data-dependent bound)`` per query and moment.

    References
    ----------
    N. Papernot, M. Abadi, Ú. Erlingsson, I. Goodfellow, K. Talwar, "Semi-supervised
    Knowledge Transfer for Deep Learning from Private Training Data", ICLR 2017
    (Theorems 2 and 3, Lemma 4).
    """
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
    """PATE's data-dependent ε for LNMax answers on ``counts`` (docs/design.md §3.4).

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

    Returns
    -------
    float
        The data-dependent ε (NON-PRIVATE).

    References
    ----------
    N. Papernot, M. Abadi, Ú. Erlingsson, I. Goodfellow, K. Talwar, "Semi-supervised
    Knowledge Transfer for Deep Learning from Private Training Data", ICLR 2017 (Theorem 3, moments accountant).
    docs/design.md §3.4.
    """
    counts = check_counts(counts)
    gamma = check_gamma(gamma)
    delta = check_probability(delta, "delta")
    orders = np.asarray(list(orders), dtype=int)
    if orders.size == 0 or np.any(orders < 1):
        raise ParameterError("orders must be positive whole numbers.")
    total = pate_moments_alpha(counts, gamma, orders).sum(axis=0)
    return float(np.min((total + math.log(1.0 / delta)) / orders))
