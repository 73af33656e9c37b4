"""Data-dependent Rényi-DP bounds for PATE aggregators (docs/design.md §8.4, §3.4).

**Every value computed here describes the private data.**  A data-dependent bound is a
function of the teachers' vote counts, so releasing it (or anything computed from it)
leaks information about the private rows.  These functions are NON-PRIVATE
diagnostics: show them under a "non-private diagnostics" heading, never export them,
and never report them as a guarantee.  The one way to turn them into a guarantee is
:mod:`core.mechanisms.certified` (propose–test–release with smooth sensitivity, docs/design.md
§8.5), which adds calibrated noise before anything leaves the private side.

Contents
--------
:func:`gnmax_rdp_data_dependent`
    GNMax (PATE 2018, Thm 6 with Prop. 7): per query and order, capped by ``λ/σ²``.
:func:`threshold_rdp_data_dependent`
    The Confident-GNMax threshold step (PATE 2018, Thm 6 with σ → √2·σ1).
:func:`lnmax_rdp_data_dependent`
    PATE 2017's data-dependent moments accountant for LNMax, as an RDP curve.
:func:`confident_gnmax_epsilon_data_dependent`
    The data-dependent ε of a Confident-GNMax run (threshold term for every query, GNMax
    term for the answered ones), converted at δ.
:func:`rdp_from_logq`
    Theorem 6 on a given ``log q̃`` (the building block of the above and of
    :mod:`core.accounting.smooth_sensitivity`).

Adjacency: replace one private row (docs/design.md §1), so at most one teacher changes
and each query's count vector moves by one vote.

References
----------
N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar, Ú. Erlingsson, "Scalable
Private Learning with PATE", ICLR 2018 (Thm 6, Prop. 7, Prop. 8, Prop. 10).
N. Papernot, M. Abadi, Ú. Erlingsson, I. Goodfellow, K. Talwar, "Semi-supervised
Knowledge Transfer for Deep Learning from Private Training Data", ICLR 2017 (Thm 2–3).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr, logsumexp

from core.errors import ParameterError
from core.validation import check_counts, check_delta, check_gamma, check_real

from core.accounting.rdp import ORDERS

__all__ = [
    "DEFAULT_ORDERS",
    "confident_gnmax_epsilon_data_dependent",
    "confident_gnmax_rdp_data_dependent",
    "gnmax_rdp_data_dependent",
    "lnmax_rdp_data_dependent",
    "log_q_gnmax",
    "log_q_gnmax_unchecked",
    "log_q_threshold",
    "log_q_threshold_of_top",
    "rdp_from_logq",
    "rdp_from_logq_unchecked",
    "theorem6_bound",
    "threshold_rdp_data_dependent",
]

DEFAULT_ORDERS: np.ndarray = ORDERS  # the one grid of orders (core.accounting.rdp)
"""Default grid of Rényi orders, the same as :data:`core.accounting.rdp.ORDERS` (``2, 2.5, …, 100``
and 100 log-spaced orders up to 500; docs/design.md §8).  Read-only."""
DEFAULT_ORDERS.setflags(write=False)

_SQRT2 = math.sqrt(2.0)


# ---------------------------------------------------------------------------- checks


def _check_sigma(sigma, name: str) -> float:
    return check_real(sigma, name, 0.0, math.inf, low_open=True)


def _check_orders(orders) -> np.ndarray:
    if orders is None:
        return np.array(DEFAULT_ORDERS)
    arr = np.atleast_1d(np.asarray(orders))
    if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.number):
        raise ParameterError(f"orders must be a number or a non-empty 1-D array of numbers, got {orders!r}.")
    arr = arr.astype(float)
    if not np.all(np.isfinite(arr)) or np.any(arr <= 1.0):
        raise ParameterError(f"Rényi orders must be finite and greater than 1, got {orders!r}.")
    return arr


def _log1mexp(x: np.ndarray) -> np.ndarray:
    """``log(1 − e^x)`` for ``x <= 0``, stable at both ends (−inf at x = 0)."""
    x = np.asarray(x, dtype=float)
    out = np.empty_like(x)
    small = x < -math.log(2.0)
    with np.errstate(divide="ignore"):
        out[small] = np.log1p(-np.exp(x[small]))
        out[~small] = np.log(-np.expm1(x[~small]))
    return out


# ---------------------------------------------------------------------------- log q


def log_q_gnmax(counts, *, sigma: float) -> np.ndarray:
    """``log q̃`` per query: PATE 2018 Prop. 7's bound on ``P[GNMax ≠ argmax]``.

    ``q̃ = Σ_{c≠c*} ½ erfc((n_c* − n_c)/(2σ))`` capped at ``1 − 1/K``, computed in log
    space (``½ erfc(x/(2σ)) = Φ(−x/(√2 σ))``, ``scipy.special.log_ndtr``).  ``c*`` is
    the first argmax.  With one class the output is fixed: ``log q̃ = −inf``.

    NON-PRIVATE: a function of the private votes.

    Parameters
    ----------
    counts : array-like of int, shape (m, K)
    sigma : float
        GNMax noise standard deviation (> 0).

    Returns
    -------
    numpy.ndarray of float, shape (m,)
    """
    counts = check_counts(counts, equal_totals=False)
    sigma = _check_sigma(sigma, "sigma")
    return log_q_gnmax_unchecked(counts, sigma)


def log_q_gnmax_unchecked(counts: np.ndarray, sigma: float) -> np.ndarray:
    """:func:`log_q_gnmax` on counts and σ already checked (PATE 2018 Prop. 7).

    NON-PRIVATE: a function of the private votes.

    Parameters
    ----------
    counts : numpy.ndarray of int, shape (m, K)
        Vote counts, as returned by :func:`core.validation.check_counts`.
    sigma : float
        GNMax noise standard deviation (> 0).

    Returns
    -------
    numpy.ndarray of float, shape (m,)
        ``log q̃`` per query.

    References
    ----------
    N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar, Ú. Erlingsson,
    "Scalable Private Learning with PATE", ICLR 2018 (Proposition 7).
    """
    m, n_classes = counts.shape
    if n_classes == 1:
        return np.full(m, -np.inf)
    top = counts.max(axis=1)
    gaps = (top[:, None] - counts).astype(float)
    terms = log_ndtr(-gaps / (_SQRT2 * sigma))
    terms[np.arange(m), counts.argmax(axis=1)] = -np.inf  # c ≠ c*
    logq = logsumexp(terms, axis=1)
    return np.minimum(logq, math.log1p(-1.0 / n_classes))


def log_q_threshold(counts, *, threshold: float, sigma1: float) -> np.ndarray:
    """``log q`` per query for the threshold step: ``q = min(p, 1 − p)``,
    ``p = P[N(0, σ1²) ≥ t − max_c n_c]``.

    NON-PRIVATE: a function of the private votes.

    Parameters
    ----------
    counts : array-like of int, shape (m, n_classes)
        Vote counts per query (private).
    threshold : float
        The Confident-GNMax threshold ``t`` (votes).
    sigma1 : float
        Threshold noise standard deviation σ1, > 0.

    Returns
    -------
    numpy.ndarray of float, shape (m,)
    """
    counts = check_counts(counts, equal_totals=False)
    threshold = check_real(threshold, "threshold")
    sigma1 = _check_sigma(sigma1, "sigma1")
    return log_q_threshold_of_top(counts.max(axis=1), threshold, sigma1)


def log_q_threshold_of_top(top: np.ndarray, threshold: float, sigma1: float) -> np.ndarray:
    """:func:`log_q_threshold` from the top vote count of each query (inputs checked).

    ``log q = min(log p, log(1 − p))``, ``p = P[N(0, σ1²) ≥ t − top]``.

    NON-PRIVATE when ``top`` comes from private votes.

    Parameters
    ----------
    top : numpy.ndarray, shape (m,)
        The largest vote count of each query.
    threshold : float
        Confident-GNMax's threshold t.
    sigma1 : float
        The threshold noise σ1 (> 0).

    Returns
    -------
    numpy.ndarray of float, shape (m,)
        ``log q`` per query.

    References
    ----------
    N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar, Ú. Erlingsson,
    "Scalable Private Learning with PATE", ICLR 2018 (Section 4, Theorem 6).
    """
    z = (np.asarray(top, dtype=float) - threshold) / sigma1
    return np.minimum(log_ndtr(z), log_ndtr(-z))  # log p, log(1 − p)


# ---------------------------------------------------------------------------- Theorem 6


def rdp_from_logq(logq, *, sigma: float, orders) -> np.ndarray:
    """PATE 2018 Theorem 6 for a Gaussian-noise mechanism, capped by ``λ/σ²``.

    The mechanism is ``(μ, μ/σ²)``-RDP for every μ (GNMax with noise σ; the threshold
    step with σ = √2·σ1).  Given ``q̃ ≥ P[M(D) ≠ i*]``, set ``μ2 = σ sqrt(log(1/q̃))``,
    ``μ1 = μ2 + 1``, ``εj = μj/σ²``.  Where ``λ ≤ μ1``, ``μ2 > 1``, ``q̃ e^{ε2} < 1`` and
    ``q̃ ≤ e^{(μ2−1)ε2} / (μ1/(μ1−1) · μ2/(μ2−1))^{μ2}``::

        ρ_dd(λ) = log((1−q̃)·A^{λ−1} + q̃·B^{λ−1}) / (λ−1),
        A = (1−q̃) / (1 − (q̃ e^{ε2})^{(μ2−1)/μ2}),   B = e^{ε1} / q̃^{1/(μ1−1)},

    evaluated in log space (log-sum-exp).  The result is ``min(ρ_dd, λ/σ²)`` where the
    conditions hold and ``λ/σ²`` elsewhere; ``q̃ = 0`` (``log q̃ = −inf``: the output is
    fixed) gives 0.  Values are clipped below at 0 (a Rényi divergence is ≥ 0).

    NON-PRIVATE when ``logq`` comes from private data.

    Parameters
    ----------
    logq : array-like of float, shape (m,)
        ``log q̃`` per query, each ≤ 0.
    sigma : float
        Effective noise σ (> 0).
    orders : array-like of float
        Rényi orders λ > 1.

    Returns
    -------
    numpy.ndarray of float, shape (m, len(orders))
    """
    sigma = _check_sigma(sigma, "sigma")
    orders = _check_orders(orders)
    logq = np.atleast_1d(np.asarray(logq, dtype=float))
    if logq.ndim != 1 or np.any(np.isnan(logq)) or np.any(logq > 0):
        raise ParameterError("logq must be a 1-D array of numbers ≤ 0 (logs of probabilities).")
    return rdp_from_logq_unchecked(logq, sigma, orders)


def theorem6_bound(lq: np.ndarray, sigma: float, orders: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Raw Theorem 6 bound and its conditions for finite ``lq < 0``: arrays (n, len(orders)).

    The uncapped ``ρ_dd(λ)`` of :func:`rdp_from_logq`, with a mask of where its
    conditions hold; the caller applies the cap ``λ/σ²``.

    Parameters
    ----------
    lq : numpy.ndarray of float, shape (n,)
        ``log q̃`` values, finite and < 0.
    sigma : float
        Effective noise σ (> 0).
    orders : numpy.ndarray of float
        Rényi orders λ > 1.

    Returns
    -------
    bound : numpy.ndarray of float, shape (n, len(orders))
        Theorem 6's ``ρ_dd(λ)`` (meaningless where ``cond`` is False).
    cond : numpy.ndarray of bool, shape (n, len(orders))
        Where Theorem 6's conditions hold.

    References
    ----------
    N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar, Ú. Erlingsson,
    "Scalable Private Learning with PATE", ICLR 2018 (Theorem 6).
    """
    var = sigma * sigma
    lam = orders[None, :]
    mu2 = sigma * np.sqrt(-lq)
    mu1 = mu2 + 1.0
    eps1 = mu1 / var
    eps2 = mu2 / var
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        cond_q = (mu2 > 1.0) & (lq + eps2 < 0.0)
        bound = (mu2 - 1.0) * eps2 - mu2 * (np.log(mu1 / (mu1 - 1.0)) + np.log(mu2 / (mu2 - 1.0)))
        cond_q &= lq <= bound
        log1q = _log1mexp(lq)
        inner = np.where(cond_q, (lq + eps2) * (1.0 - 1.0 / mu2), -1.0)
        log_a = log1q - _log1mexp(inner)
        log_b = eps1 - lq / (mu1 - 1.0)
        lm1 = lam - 1.0
        log_s = np.logaddexp(log1q[:, None] + lm1 * log_a[:, None], lq[:, None] + lm1 * log_b[:, None])
        dd = log_s / lm1
    cond = cond_q[:, None] & (lam <= mu1[:, None])
    return dd, cond


def rdp_from_logq_unchecked(logq: np.ndarray, sigma: float, orders: np.ndarray) -> np.ndarray:
    """:func:`rdp_from_logq` on inputs already checked (Theorem 6 capped by ``λ/σ²``).

    NON-PRIVATE when ``logq`` comes from private data.

    Parameters
    ----------
    logq : numpy.ndarray of float, shape (m,)
        ``log q̃`` per query, each ≤ 0.
    sigma, orders
        As for :func:`theorem6_bound`.

    Returns
    -------
    numpy.ndarray of float, shape (m, len(orders))

    References
    ----------
    N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar, Ú. Erlingsson,
    "Scalable Private Learning with PATE", ICLR 2018 (Theorem 6).
    """
    var = sigma * sigma
    indep = np.broadcast_to(orders[None, :] / var, (logq.size, orders.size))
    out = np.array(indep, dtype=float)
    fixed = np.isneginf(logq)
    out[fixed] = 0.0
    ok_q = ~fixed & (logq < 0)
    if not np.any(ok_q):
        return out
    dd, cond = theorem6_bound(logq[ok_q], sigma, orders)
    sub = out[ok_q]
    out[ok_q] = np.where(cond, np.minimum(sub, np.maximum(dd, 0.0)), sub)
    return out


# ---------------------------------------------------------------------------- mechanisms


def gnmax_rdp_data_dependent(counts, *, sigma: float, orders=None) -> np.ndarray:
    """Data-dependent RDP of one GNMax answer per query (docs/design.md §8.4).

    PATE 2018 Theorem 6 with Prop. 7's ``q̃`` (:func:`log_q_gnmax`), per query and order;
    the data-independent ``λ/σ²`` where Theorem 6's conditions fail, and
    ``min(ρ_dd, λ/σ²)`` always.

    **NON-PRIVATE diagnostic.**  The value describes the private vote counts: it bounds
    ``D_λ(M(D) ‖ M(D'))`` for every neighbour D' of the actual D, and is not itself
    differentially private.  Never export it; never report it as a guarantee
    (docs/design.md §8.4–8.5; :mod:`core.mechanisms.certified` releases a certified version).

    Parameters
    ----------
    counts : array-like of int, shape (m, K)
        Vote counts.
    sigma : float
        GNMax noise σ (> 0).
    orders : array-like of float, optional
        Rényi orders λ > 1; default :data:`DEFAULT_ORDERS`.

    Returns
    -------
    numpy.ndarray of float, shape (m, len(orders))
    """
    counts = check_counts(counts, equal_totals=False)
    sigma = _check_sigma(sigma, "sigma")
    orders = _check_orders(orders)
    return rdp_from_logq_unchecked(log_q_gnmax_unchecked(counts, sigma), sigma, orders)


def threshold_rdp_data_dependent(counts, *, threshold: float, sigma1: float, orders=None) -> np.ndarray:
    """Data-dependent RDP of the Confident-GNMax threshold step, per query and order.

    The step releases whether ``max_c n_c + N(0, σ1²) ≥ t``; the top count has
    sensitivity 1, so it is ``(μ, μ/(2σ1²))``-RDP, i.e. Theorem 6 applies with
    σ → √2·σ1 and ``q = min(p, 1 − p)``, ``p = P[N(0, σ1²) ≥ t − max_c n_c]`` (PATE 2018
    Prop. 10 and §4.2).  Capped by the data-independent ``λ/(2σ1²)``.

    **NON-PRIVATE diagnostic** (see :func:`gnmax_rdp_data_dependent`).

    Parameters
    ----------
    counts : array-like of int, shape (m, K)
    threshold : float
        The threshold t.
    sigma1 : float
        Threshold noise σ1 (> 0).
    orders : array-like of float, optional

    Returns
    -------
    numpy.ndarray of float, shape (m, len(orders))
    """
    counts = check_counts(counts, equal_totals=False)
    threshold = check_real(threshold, "threshold")
    sigma1 = _check_sigma(sigma1, "sigma1")
    orders = _check_orders(orders)
    logq = log_q_threshold_of_top(counts.max(axis=1), threshold, sigma1)
    return rdp_from_logq_unchecked(logq, _SQRT2 * sigma1, orders)


def lnmax_rdp_data_dependent(counts, *, gamma: float, orders=None) -> np.ndarray:
    """PATE 2017's data-dependent moments accountant for LNMax, as an RDP curve.

    A log-moment bound ``α(l)`` at moment ``l`` is the RDP bound ``ρ(λ) = α(λ−1)/(λ−1)``
    at order ``λ = l + 1``.  At whole orders λ this uses
    :func:`core.accounting.pate.pate_moments_alpha` (Thm 2–3, Lemma 4: the data-dependent term,
    the pure-DP cap ``2γl`` and ``2γ²l(l+1)``); at fractional orders only the two
    data-independent terms, which hold for every real order (pure ``2γ``-DP, and
    ``2γ``-DP ⇒ ``2γ²``-zCDP).

    **NON-PRIVATE diagnostic** (see :func:`gnmax_rdp_data_dependent`).

    Parameters
    ----------
    counts : array-like of int, shape (m, K)
    gamma : float
        LNMax noise parameter (noise ``Lap(1/γ)``).
    orders : array-like of float, optional

    Returns
    -------
    numpy.ndarray of float, shape (m, len(orders))
    """
    from core.accounting.pate import pate_moments_alpha

    counts = check_counts(counts)
    gamma = check_gamma(gamma)
    orders = _check_orders(orders)
    l = orders - 1.0
    whole = np.isclose(orders, np.round(orders), rtol=0.0, atol=1e-12)
    out = np.broadcast_to(np.minimum(2.0 * gamma * l, 2.0 * gamma**2 * l * (l + 1.0)) / l,
                          (counts.shape[0], orders.size)).copy()
    if np.any(whole):
        out[:, whole] = pate_moments_alpha(counts, gamma, np.round(l[whole])) / l[whole][None, :]
    return np.maximum(out, 0.0)


def confident_gnmax_rdp_data_dependent(counts, *, threshold: float, sigma1: float, sigma2: float,
                                       answered, orders=None) -> np.ndarray:
    """Data-dependent RDP curve (summed over queries) of a Confident-GNMax run.

    The threshold term of every query plus the GNMax term of the answered queries
    (``answered`` is required: the run's ``LabelingResult.answered``; a mask of ones is the
    worst case before a run).

    **NON-PRIVATE diagnostic** (see :func:`gnmax_rdp_data_dependent`).

    Parameters
    ----------
    counts : array-like of int, shape (m, n_classes)
        Vote counts per query (private).
    threshold : float
        The threshold ``t`` (votes).
    sigma1 : float
        Threshold noise standard deviation σ1, > 0.
    sigma2 : float
        Answer (GNMax) noise standard deviation σ2, > 0.
    orders : array-like of float, optional
        Rényi orders (default: the module's grid).
    answered : numpy.ndarray of bool, shape (m,)
        Which queries were answered (only they pay the GNMax term).

    Returns
    -------
    numpy.ndarray of float, shape (len(orders),)

    References
    ----------
    N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar, Ú. Erlingsson,
    "Scalable Private Learning with PATE", ICLR 2018 (Theorem 6, Proposition 7).
    I. Mironov, "Rényi Differential Privacy", IEEE CSF 2017.
    docs/design.md §8.4.
    """
    counts = check_counts(counts, equal_totals=False)
    orders = _check_orders(orders)
    thr = threshold_rdp_data_dependent(counts, threshold=threshold, sigma1=sigma1, orders=orders)
    if answered is None:
        raise ParameterError(
            "answered is required: the boolean mask of the queries the run answered (LabelingResult.answered); "
            "only they pay the answer's term.  Pass np.ones(m, bool) for the worst case before a run.")
    mask = np.asarray(answered)
    if mask.shape != (counts.shape[0],) or mask.dtype != bool:
        raise ParameterError(
            f"answered must be a boolean mask with one entry per query (shape ({counts.shape[0]},)), "
            f"got shape {mask.shape} and dtype {mask.dtype}."
        )
    gn = gnmax_rdp_data_dependent(counts, sigma=sigma2, orders=orders)[mask]
    return thr.sum(axis=0) + gn.sum(axis=0)


def confident_gnmax_epsilon_data_dependent(counts, *, threshold: float, sigma1: float, sigma2: float,
                                           delta: float, answered, orders=None) -> float:
    """The data-dependent ε of a Confident-GNMax run — a NON-PRIVATE diagnostic.

    **This ε describes the private data.  It is not a privacy guarantee, it is not
    differentially private, and it must never be exported or shown as the run's ε.**
    The run's guarantee is the data-independent one (:mod:`core.mechanisms.gaussian`) or the
    certified one (:mod:`core.mechanisms.certified`, docs/design.md §8.5).

    Sums the threshold term of every query and the GNMax term of the answered queries
    (:func:`confident_gnmax_rdp_data_dependent`) and converts the curve at δ with
    dp-accounting's ``compute_epsilon`` (Balle et al. 2020), best order of the grid.

    Parameters
    ----------
    counts : array-like of int, shape (m, K)
    threshold, sigma1, sigma2 : float
    delta : float
    orders : array-like of float, optional
    answered : array of bool, shape (m,)
        Mask of the answered queries (``LabelingResult.answered``); required, so that the
        answer's term is charged to the queries that were answered and no others.

    Returns
    -------
    float
    """
    from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

    delta = check_delta(delta)
    orders = _check_orders(orders)
    curve = confident_gnmax_rdp_data_dependent(counts, threshold=threshold, sigma1=sigma1, sigma2=sigma2,
                                               orders=orders, answered=answered)
    eps, _ = compute_epsilon(orders, curve, delta)
    return float(eps)
