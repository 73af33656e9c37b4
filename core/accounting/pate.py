"""PATE's LNMax accounting: the data-independent bound, its inverse, LNMax's privacy map (two
Laplace coordinates per answer, composed by their privacy-loss distributions), and the
data-dependent moments accountant (a NON-PRIVATE diagnostic) (docs/design.md §3.4)."""

from __future__ import annotations

import functools
import math
from typing import Iterable

import numpy as np
from scipy import optimize

from core.accounting.composition import compose_pure_dp, laplace_composition_epsilon, optimal_composition_delta
from core.accounting.gaussian_dp import gaussian_mu_sq_for_epsilon
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

def pate_simple_epsilon(gamma, *, n_answers, delta):
    """PATE's data-independent bound for ``n_answers`` LNMax answers (PATE §3.1; docs/design.md §3.4).

    Each answer is ``2γ``-DP; ``ε = 4nγ² + 2γ sqrt(2n log(1/δ))`` for ``n`` answers.  Vectorized.

    Parameters
    ----------
    gamma : float or array-like
        LNMax noise parameter γ, > 0 (noise ``Lap(1/γ)``).
    n_answers : float or array-like
        Number of answers, >= 1 (PATE's T; not BTT's cutoff).
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
    n = check_real_array(n_answers, "n_answers", 1.0, what="the number of answers")
    delta = check_delta_array(delta, "delta")
    out = 4.0 * n * gamma**2 + 2.0 * gamma * np.sqrt(2.0 * n * np.log(1.0 / delta))
    return out if out.ndim else float(out)


def pate_gamma_for_epsilon(epsilon, *, n_answers, delta):
    """The γ at which PATE's data-independent bound for ``n_answers`` answers equals ``ε``.

    The inverse of :func:`pate_simple_epsilon`: with ``n = n_answers``, the positive root of
    ``4nγ² + 2γ·sqrt(2n log(1/δ)) − ε = 0``,
    ``γ = (sqrt(b² + 16nε) − b) / (8n)`` with ``b = 2 sqrt(2n log(1/δ))``.
    :func:`core.mechanisms.lnmax_label` at this γ on ``n`` queries reports a guarantee
    of at most ``ε`` (its privacy map is never above this bound).  Vectorized.

    Parameters
    ----------
    epsilon : float or array-like
        Target ε, > 0.
    n_answers : float or array-like
        Number of answers, >= 1.
    delta : float or array-like
        Target δ in (0, 1).

    Returns
    -------
    float or numpy.ndarray
        γ (a float for scalar inputs).

    References
    ----------
    The paper of :func:`pate_simple_epsilon` (Papernot et al., ICLR 2017, Section 3.1);
    docs/design.md §3.4.
    """
    epsilon = check_real_array(epsilon, "epsilon", 0.0, low_open=True)
    n = check_real_array(n_answers, "n_answers", 1.0, what="the number of answers")
    delta = check_delta_array(delta, "delta")
    b = 2.0 * np.sqrt(2.0 * n * np.log(1.0 / delta))
    # (sqrt(b² + 16nε) − b) / (8n), written without cancellation for small ε
    out = 2.0 * epsilon / (np.sqrt(b * b + 16.0 * n * epsilon) + b)
    return out if out.ndim else float(out)


@functools.lru_cache(maxsize=1024)
def _lnmax_guarantee(gamma: float, n: int, delta: float) -> PrivacyGuarantee:
    simple = float(pate_simple_epsilon(gamma, n_answers=n, delta=delta))
    comp = compose_pure_dp(2.0 * gamma, n, delta, method="best")
    pair = laplace_composition_epsilon(((gamma, 2 * n),), delta) if delta > 0 else math.inf
    parts = {"pate_simple": simple, **comp.parts, "laplace_pld": pair}
    best = min(simple, comp.epsilon, pair)
    if pair == best:
        return PrivacyGuarantee(
            pair, delta, "lnmax/laplace-pld",
            f"{n} LNMax answers: each releases the argmax of its noisy class counts, and one changed teacher "
            f"moves two of them by one, so each answer is a post-processing of two Laplace coordinates "
            f"(scale 1/γ = {1 / gamma:.4g}, sensitivity 1); their {2 * n} privacy-loss distributions composed "
            "by dp-accounting (pessimistic).",
            parts=parts,
        )
    if simple == best:
        return PrivacyGuarantee(
            simple, delta, "pate-simple",
            f"{n} LNMax answers, each 2γ = {2 * gamma:.4g}-DP, by PATE's data-independent bound "
            "4nγ² + 2γ·sqrt(2n·log(1/δ)).",
            parts=parts,
        )
    return PrivacyGuarantee(
        comp.epsilon, comp.delta, f"lnmax/{comp.method}",
        f"{n} LNMax answers, each a pure 2γ = {2 * gamma:.4g}-DP step; " + comp.detail,
        parts=parts,
    )


def lnmax_guarantee(gamma: float, *, n_answers: int, delta: float) -> PrivacyGuarantee:
    """The privacy map of LNMax: the guarantee of ``n_answers`` answers with noise ``Lap(1/γ)``.

    The smallest of three valid bounds at slack δ (docs/design.md §3.4): the answers as
    post-processings of two Laplace coordinates each (one changed teacher moves two vote
    counts by one), whose ``2·n_answers`` privacy-loss distributions are composed exactly
    (:func:`core.accounting.composition.laplace_composition_epsilon`; the tightest, e.g.
    ε = 7.42 instead of 11.41 for γ = 0.05, 500 answers, δ = 1e-5); the best composition
    of ``n_answers`` pure ``2γ``-DP steps (:func:`compose_pure_dp`); PATE's
    data-independent bound (:func:`pate_simple_epsilon`).  It does not depend on the
    votes (the data-dependent ε of :func:`pate_moments_epsilon` does).

    Proof sketch.  Query ``i`` releases ``argmax_c (n_c + Z_c)`` with independent
    ``Z_c ~ Lap(1/γ)``: a function of the noisy vector ``Y = n + Z``.  Replacing one row
    changes one teacher, so ``n`` becomes ``n + e_u − e_v`` (or stays): under the two
    inputs ``Y`` differs in the laws of coordinates ``u`` and ``v`` only, each the Laplace
    mechanism of sensitivity 1, and the privacy loss of ``Y`` is the sum of the two
    coordinates' independent losses.  Over ``n`` queries (independent noise) the losses of
    ``2n`` Laplace coordinates add; releasing the argmaxes is post-processing, so every
    (ε, δ) the composed privacy-loss distribution satisfies holds for the answers.

    Parameters
    ----------
    gamma : float
        LNMax noise parameter γ, > 0.
    n_answers : int
        Number of answers (every query is answered), >= 1.
    delta : float
        Slack δ.

    Returns
    -------
    PrivacyGuarantee
        The data-independent (ε, δ) of the answers; ``parts`` holds every bound.

    References
    ----------
    N. Papernot, M. Abadi, Ú. Erlingsson, I. Goodfellow, K. Talwar, "Semi-supervised
    Knowledge Transfer for Deep Learning from Private Training Data", ICLR 2017 (Section 3.1).
    P. Kairouz, S. Oh, P. Viswanath, "The Composition Theorem for Differential Privacy", ICML 2015.
    S. Meiser, E. Mohammadi, "Tight on Budget? Tight Bounds for r-Fold Approximate
    Differential Privacy", CCS 2018 (privacy-loss distributions).
    docs/design.md §3.4.
    """
    return _lnmax_guarantee(float(check_gamma(gamma)), int(check_m(n_answers, "n_answers")),
                            float(check_probability(delta, "delta")))


@functools.lru_cache(maxsize=256)
def _lnmax_gamma(epsilon: float, n: int, delta: float) -> float:
    # γ of the pure 2γ view (PATE's bound in closed form, optimal composition by a root
    # search on its closed form): valid, since the map is never above that view.
    pure = float(pate_gamma_for_epsilon(epsilon, n_answers=n, delta=delta))
    if optimal_composition_delta(2.0 * pure, n, epsilon) <= delta:
        hi = 2.0 * pure
        while optimal_composition_delta(2.0 * hi, n, epsilon) <= delta:
            hi *= 2.0
        pure = optimize.brentq(lambda g: optimal_composition_delta(2.0 * g, n, epsilon) - delta,
                               hi / 2.0, hi, xtol=1e-15, rtol=1e-12)
    if delta <= 0.0:
        return _within(pure, n, delta, epsilon)

    # The Laplace view spends less at the same γ: a root search on its ε alone (the map is
    # the minimum of the three bounds, so a γ within ε here is within ε there).
    def pair(g: float) -> float:
        return laplace_composition_epsilon(((g, 2 * n),), delta) - epsilon

    # Start near the root: the composed loss is close to a Gaussian mechanism's whose μ²
    # is 4n·KL(one coordinate) = 4n(γ + e^−γ − 1) (within 1 % for realistic settings).
    mu_sq = gaussian_mu_sq_for_epsilon(epsilon, delta=delta)
    guess = optimize.brentq(lambda g: 4.0 * n * (g + math.expm1(-g)) - mu_sq, 1e-15, 1e6, rtol=1e-12)
    if guess * 0.99 > pure and pair(guess * 0.99) <= 0:
        lo = guess * 0.99
    elif pair(pure) <= 0:
        lo = pure
    else:  # one answer: the Laplace view is no better than 2γ
        return _within(pure, n, delta, epsilon)
    hi = max(guess * 1.01, lo * 1.01)
    while pair(hi) <= 0:
        lo, hi = hi, 1.25 * hi
    # γ to about 1e-7 relative is all a budget needs (ε moves by about as much); a tighter
    # tolerance only chases the FFT composition's wobble (about 1e-9 of ε at δ = 1e-5, up to
    # 1e-3 at δ ≈ 1e-12) and costs a composition per step.
    root = optimize.brentq(pair, lo, hi, xtol=_GAMMA_RTOL * lo, rtol=_GAMMA_RTOL)
    if pair(root) <= 0:
        return max(pure, root)
    # The root sits a rounding error above ε: step down (doubling the step) to a γ within ε;
    # ``lo`` always is.
    step = _GAMMA_RTOL
    while step < 1e-2:
        g = root * (1.0 - step)
        if g <= lo:
            break
        if pair(g) <= 0:
            return max(pure, g)
        step *= 2.0
    return max(pure, lo)


_GAMMA_RTOL = 1e-7


def _within(gamma: float, n: int, delta: float, epsilon: float) -> float:
    """``gamma``, nudged down until the map's ε is within ``epsilon`` (a rounding error at most)."""
    for _ in range(60):
        if _lnmax_guarantee(gamma, n, delta).epsilon <= epsilon:
            return gamma
        gamma *= 1.0 - 1e-9
    raise ParameterError(f"no LNMax noise found within ε = {epsilon:g} on {n} answers at δ = {delta:g}.")


def lnmax_gamma_for_epsilon(epsilon: float, *, n_answers: int, delta: float) -> float:
    """The largest γ (to about 1e-7 relative) whose LNMax guarantee on ``n_answers`` answers is ≤ ε.

    The inverse of :func:`lnmax_guarantee`, so that LNMax spends the same budget as the
    other mechanisms when they are compared at equal (ε, δ).  The γ of the pure ``2γ``
    view (PATE's bound in closed form, the optimal composition by a root search) starts
    the search; a root search on the Laplace view's ε then raises γ to the tightest map's
    (checked with :func:`lnmax_guarantee` itself, so ``lnmax_guarantee(γ, n_answers=n,
    delta=δ).epsilon <= ε``).

    Parameters
    ----------
    epsilon : float
        Target ε, > 0.
    n_answers : int
        Number of answers, >= 1.
    delta : float
        Slack δ.

    Returns
    -------
    float
        γ with ``lnmax_guarantee(γ, n_answers=n_answers, delta=delta).epsilon <= epsilon``.

    References
    ----------
    N. Papernot, M. Abadi, Ú. Erlingsson, I. Goodfellow, K. Talwar, "Semi-supervised
    Knowledge Transfer for Deep Learning from Private Training Data", ICLR 2017 (Section 3.1).
    P. Kairouz, S. Oh, P. Viswanath, "The Composition Theorem for Differential Privacy", ICML 2015.
    docs/design.md §3.4.
    """
    epsilon = check_epsilon(epsilon)
    n = check_m(n_answers, "n_answers")
    delta = check_probability(delta, "delta")
    return _lnmax_gamma(float(epsilon), int(n), float(delta))


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


def pate_moments_epsilon(counts, *, gamma: float, delta: float, orders: Iterable[int] = range(1, 9)) -> float:
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
