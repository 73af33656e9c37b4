"""Rényi differential privacy (RDP) accounting for Gaussian noise (docs/design.md §8).

A mechanism is (α, ρ(α))-RDP when the Rényi divergence of order α between its output
distributions on neighbouring datasets is at most ρ(α).  RDP composes by adding ρ(α)
order by order (Mironov 2017, Prop. 1), also adaptively.  This module keeps every RDP
*curve* as a numpy array over a fixed grid of orders, :data:`ORDERS`, and converts a
curve to (ε, δ)-DP with the improved conversion of Balle et al. (2020, Thm 21),

    ε = min_α  ρ(α) + log((α − 1)/α) − (log δ + log α)/(α − 1),

computed by Google's ``dp-accounting`` (``rdp.rdp_privacy_accountant.compute_epsilon``).

Adjacency: replace one private row (docs/design.md §1), so at most one teacher changes
its vote, on every query at once.  Then

* a query's vote-count vector moves by L2² ≤ 2 (one count −1, another +1): a GNMax
  answer ``argmax_c(counts[c] + N(0, σ²))`` is a post-processing of the Gaussian
  mechanism on the count vector, so it costs ``ρ(α) = α·2/(2σ²) = α/σ²``;
* the top count ``max_c counts[c]`` moves by at most 1: the threshold test of
  Confident-GNMax, ``max_c counts[c] + N(0, σ1²) ≥ t``, costs ``α/(2σ1²)``.

Data-independent guarantees
---------------------------
:func:`gnmax_rdp` / :func:`gnmax_guarantee`
    ``n_answers`` GNMax answers: ``ρ(α) = n_answers·α/σ²``.
:func:`confident_gnmax_rdp` / :func:`confident_gnmax_guarantee`
    ``n_queries`` threshold tests plus ``n_answers`` answers (``n_answers`` fixed in
    advance; the data-independent "fixed" accounting charges every query its answer,
    ``n_answers = n_queries``).
:func:`filter_guarantee`, :func:`filter_budget_for_epsilon`
    A Rényi filter's budget ρ* at one order, converted at δ (Feldman & Zrnic 2021).
Inverses
    :func:`gnmax_sigma_for_epsilon`, :func:`confident_gnmax_sigmas_for_epsilon`.

References
----------
Mironov, I. (2017). Rényi differential privacy. CSF 2017.
Balle, B., Barthe, G., Gaboardi, M., Hsu, J., Sato, T. (2020). Hypothesis testing
interpretations and Rényi differential privacy. AISTATS 2020.
Papernot, N., Song, S., Mironov, I., Raghunathan, A., Talwar, K., Erlingsson, Ú. (2018).
Scalable private learning with PATE. ICLR 2018.
Feldman, V., Zrnic, T. (2021). Individual privacy accounting via a Rényi filter.
NeurIPS 2021.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from core.accounting.guarantee import PrivacyGuarantee
from core.errors import ParameterError
from core.validation import check_delta, check_epsilon, check_integer, check_real

__all__ = [
    "ORDERS",
    "GNMAX_SENSITIVITY_SQ",
    "THRESHOLD_SENSITIVITY_SQ",
    "check_sigma",
    "check_order",
    "check_orders",
    "gaussian_rdp",
    "gnmax_rdp",
    "confident_gnmax_rdp",
    "rdp_to_dp",
    "gnmax_guarantee",
    "confident_gnmax_guarantee",
    "filter_guarantee",
    "filter_budget_for_epsilon",
    "best_order",
    "gnmax_sigma_for_epsilon",
    "confident_gnmax_sigmas_for_epsilon",
    "rdp_epsilon_floor",
]

ORDERS: np.ndarray = np.concatenate([
    np.arange(2.0, 100.5, 0.5),
    np.geomspace(100.0, 500.0, 101)[1:],
])
"""The fixed grid of Rényi orders: ``2, 2.5, …, 100`` (197 orders, step 0.5) followed by
100 log-spaced orders in ``(100, 500]`` (``numpy.geomspace(100, 500, 101)[1:]``); 297
orders in all, increasing (docs/design.md §8).  Read-only."""
ORDERS.setflags(write=False)

GNMAX_SENSITIVITY_SQ = 2.0
"""Squared L2 sensitivity of a query's vote-count vector under replace-one adjacency."""
THRESHOLD_SENSITIVITY_SQ = 1.0
"""Squared sensitivity of a query's top count under replace-one adjacency."""


# ---------------------------------------------------------------------------- checks


def check_sigma(sigma, name: str = "sigma") -> float:
    """Check a Gaussian noise standard deviation: a finite number > 0.

    Parameters
    ----------
    sigma : float
        The standard deviation to check.
    name : str, default "sigma"
        Its name in the error message.

    Returns
    -------
    float
        ``sigma`` as a float.

    Raises
    ------
    ParameterError
        If ``sigma`` is not a finite number > 0.
    """
    s = check_real(sigma, name, 0.0, math.inf, low_open=True)
    return s


def check_orders(orders) -> np.ndarray:
    """Check a grid of Rényi orders: a non-empty 1-D array of finite numbers > 1.

    Parameters
    ----------
    orders : array-like of float or None
        The orders to check; None: :data:`ORDERS`.

    Returns
    -------
    numpy.ndarray of float, shape (n_orders,)

    Raises
    ------
    ParameterError
        If ``orders`` is empty, not 1-D, not finite or has an order <= 1.
    """
    if orders is None:
        return ORDERS
    arr = np.asarray(orders, dtype=float)
    if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr <= 1.0):
        raise ParameterError(
            "orders must be a non-empty 1-D array of finite Rényi orders greater than 1 "
            f"(e.g. core.accounting.rdp.ORDERS), got {orders!r}."
        )
    return arr


def _check_count(value, name: str, minimum: int = 0) -> int:
    return check_integer(value, name, minimum=minimum)


# ---------------------------------------------------------------------------- curves


def gaussian_rdp(sigma, *, sensitivity_sq: float = 1.0, orders=None) -> np.ndarray:
    """RDP curve of one Gaussian mechanism: ``ρ(α) = α·s²/(2σ²)``.

    Parameters
    ----------
    sigma : float
        Noise standard deviation σ > 0.
    sensitivity_sq : float, default 1
        The squared L2 sensitivity ``s²`` of the noised quantity (2 for a vote-count
        vector, 1 for a top count under replace-one adjacency).
    orders : array of float, default :data:`ORDERS`

    Returns
    -------
    numpy.ndarray of float, shape ``orders.shape``

    References
    ----------
    Mironov (2017), Prop. 7.
    """
    sigma = check_sigma(sigma)
    s2 = check_real(sensitivity_sq, "sensitivity_sq", 0.0, math.inf)
    orders = check_orders(orders)
    return orders * s2 / (2.0 * sigma * sigma)


def gnmax_rdp(sigma, *, n_answers, orders=None) -> np.ndarray:
    """Data-independent RDP curve of ``n_answers`` GNMax answers: ``n_answers·α/σ²``.

    Each answer is ``argmax_c(counts[c] + N(0, σ²))``, a post-processing of the Gaussian
    mechanism on the count vector (L2² sensitivity 2); answers compose additively.

    Parameters
    ----------
    sigma : float
        GNMax noise standard deviation σ, > 0 (votes).
    n_answers : int
        Number of answers, >= 0.
    orders : array-like of float, default ORDERS
        Rényi orders α > 1.

    Returns
    -------
    numpy.ndarray of float, shape (len(orders),)
        ρ(α) = ``n_answers·α/σ²``.

    References
    ----------
    N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar, Ú. Erlingsson,
    "Scalable Private Learning with PATE", ICLR 2018 (Section 4.1).
    I. Mironov, "Rényi Differential Privacy", IEEE CSF 2017 (Proposition 7, Gaussian mechanism).
    docs/design.md §8.1.
    """
    sigma = check_sigma(sigma)
    n = _check_count(n_answers, "n_answers")
    return n * gaussian_rdp(sigma, sensitivity_sq=GNMAX_SENSITIVITY_SQ, orders=orders)


def confident_gnmax_rdp(sigma1, sigma2, *, n_queries, n_answers=None, orders=None) -> np.ndarray:
    """Data-independent RDP curve of Confident-GNMax: ``n_queries·α/(2σ1²) + n_answers·α/σ2²``.

    Parameters
    ----------
    sigma1 : float
        Threshold noise σ1 (the test ``max_c counts[c] + N(0, σ1²) ≥ t``).
    sigma2 : float
        Answer noise σ2 (GNMax on the queries that pass).
    n_queries : int
        Number of threshold tests.
    n_answers : int, optional
        Number of answers charged.  It must be fixed before the run (the number actually
        answered depends on the private data, so charging it would not be a
        data-independent guarantee); the default charges every query, ``n_queries``,
        which is the "fixed" accounting of :func:`core.mechanisms.gaussian.confident_gnmax_label`.
    orders : array of float

    Returns
    -------
    numpy.ndarray of float, shape (len(orders),)
        The composed RDP curve ρ(α).

    References
    ----------
    N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar, Ú. Erlingsson,
    "Scalable Private Learning with PATE", ICLR 2018 (Section 4.2).
    I. Mironov, "Rényi Differential Privacy", IEEE CSF 2017 (Proposition 7).
    docs/design.md §8.2.
    """
    sigma1 = check_sigma(sigma1, "sigma1")
    sigma2 = check_sigma(sigma2, "sigma2")
    nq = _check_count(n_queries, "n_queries")
    na = nq if n_answers is None else _check_count(n_answers, "n_answers")
    return (nq * gaussian_rdp(sigma1, sensitivity_sq=THRESHOLD_SENSITIVITY_SQ, orders=orders)
            + na * gaussian_rdp(sigma2, sensitivity_sq=GNMAX_SENSITIVITY_SQ, orders=orders))


# ---------------------------------------------------------------------------- conversion


def rdp_to_dp(rdp, *, delta: float, orders=None) -> tuple[float, float]:
    """Convert an RDP curve to (ε, δ)-DP (Balle et al. 2020), by dp-accounting.

    Parameters
    ----------
    rdp : array of float
        ρ(α) for each order (same shape as ``orders``); non-negative.
    delta : float
        Target δ in (0, 1).
    orders : array of float, default :data:`ORDERS`

    Returns
    -------
    (epsilon, order) : (float, float)
        The smallest ε over the grid and the order that attains it.
    """
    from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

    delta = check_delta(delta)
    orders = check_orders(orders)
    rdp = np.asarray(rdp, dtype=float)
    if rdp.shape != orders.shape:
        raise ParameterError(f"rdp must have one value per order: shape {orders.shape}, got {rdp.shape}.")
    if np.any(np.isnan(rdp)) or np.any(rdp < 0):
        raise ParameterError("rdp values must be non-negative numbers.")
    eps, order = compute_epsilon(orders, rdp, delta)
    return float(eps), float(order)


def best_order(rdp, *, delta: float, orders=None) -> float:
    """The order at which :func:`rdp_to_dp` attains its minimum.

    Parameters
    ----------
    rdp : array-like of float
        ρ(α) for each order.
    delta : float
        Target δ in (0, 1).
    orders : array-like of float, default ORDERS

    Returns
    -------
    float
        The minimizing order α.

    References
    ----------
    B. Balle, G. Barthe, M. Gaboardi, J. Hsu, T. Sato, "Hypothesis Testing
    Interpretations and Rényi Differential Privacy", AISTATS 2020 (Theorem 21).
    """
    return rdp_to_dp(rdp, delta=delta, orders=orders)[1]


# ---------------------------------------------------------------------------- guarantees


def gnmax_guarantee(sigma, *, n_answers, delta: float) -> PrivacyGuarantee:
    """Data-independent (ε, δ) of ``n_answers`` GNMax answers at noise σ (exact).

    Proof sketch: each answer is a post-processing of the Gaussian mechanism on the
    count vector, whose L2² sensitivity is 2 under replace-one adjacency; ``n_answers``
    adaptive answers compose to one Gaussian mechanism with ``μ² = 2·n_answers/σ²``,
    whose exact privacy profile dp-accounting's PLD Gaussian privacy loss gives
    (:mod:`core.accounting.gaussian_dp`; docs/design.md §8.1).  The RDP conversion of
    the same curve ``α·n_answers/σ²`` (Balle et al. 2020) is an upper bound, reported in
    ``parts`` with its best order (the order a Rényi filter uses).

    Parameters
    ----------
    sigma : float
        GNMax noise standard deviation σ, > 0.
    n_answers : int
        Number of answers, >= 1.
    delta : float
        Target δ in (0, 1).

    Returns
    -------
    PrivacyGuarantee
        (ε, δ) with method ``"pld-gnmax"`` and parts ``mu_sq``, ``epsilon_rdp``,
        ``order``, ``rdp_at_order``, ``n_answers``, ``sigma``, ``orders``.

    References
    ----------
    N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar, Ú. Erlingsson,
    "Scalable Private Learning with PATE", ICLR 2018 (Section 4.1).
    J. Dong, A. Roth, W. Su, "Gaussian Differential Privacy", JRSS B 2022 (Corollary 3.3).
    B. Balle, Y.-X. Wang, "Improving the Gaussian Mechanism for Differential Privacy", ICML 2018.
    docs/design.md §8.1.
    """
    from core.accounting.gaussian_dp import gaussian_epsilon

    sigma = check_sigma(sigma)
    n = _check_count(n_answers, "n_answers", 1)
    delta = check_delta(delta)
    curve = gnmax_rdp(sigma, n_answers=n)
    eps_rdp, order = rdp_to_dp(curve, delta=delta)
    i = int(np.searchsorted(ORDERS, order))
    mu_sq = n * GNMAX_SENSITIVITY_SQ / (sigma * sigma)
    eps = min(gaussian_epsilon(mu_sq, delta=delta), eps_rdp)
    return PrivacyGuarantee(
        eps, delta, "pld-gnmax",
        f"{n} GNMax answers at σ = {sigma:.6g}: each the Gaussian mechanism on the vote counts (replace-one: "
        f"they move by L2² = 2), composed exactly into one Gaussian of μ² = 2n/σ² = {mu_sq:.6g} and converted "
        f"at δ = {delta:g} by its exact privacy profile (dp-accounting's PLD; RDP would give ε = {eps_rdp:.4g} "
        f"at α = {order:g}).",
        parts={"mu_sq": mu_sq, "epsilon_rdp": eps_rdp, "order": order, "rdp_at_order": float(curve[i]),
               "n_answers": n, "sigma": sigma, "orders": "core.accounting.rdp.ORDERS"},
    )


def confident_gnmax_guarantee(sigma1, sigma2, *, n_queries, delta: float, n_answers=None) -> PrivacyGuarantee:
    """Data-independent (ε, δ) of Confident-GNMax with every charge fixed in advance (exact).

    Proof sketch: each threshold test is the Gaussian mechanism on the top count
    (sensitivity 1, ``1/σ1²``); each answer is GNMax at σ2 (``2/σ2²``).  Whether a query
    is answered depends on the data, so the fixed accounting charges every query both
    parts (``n_answers = n_queries``; answering fewer is a post-processing of answering
    all and replacing some answers by ⊥ under the released test outcomes).  All are
    Gaussian mechanisms, so they compose exactly into one Gaussian with
    ``μ² = n_queries/σ1² + 2·n_answers/σ2²``, converted by its exact privacy profile
    (dp-accounting's PLD; docs/design.md §8.2).  ``parts`` also holds the RDP conversion
    of the same curve and its best order (a Rényi filter's order).

    Parameters
    ----------
    sigma1 : float
        Threshold noise standard deviation σ1, > 0.
    sigma2 : float
        Answer noise standard deviation σ2, > 0.
    n_queries : int
        Number of threshold tests, >= 1.
    delta : float
        Target δ in (0, 1).
    n_answers : int, optional
        Number of answers charged, fixed in advance (default ``n_queries``).

    Returns
    -------
    PrivacyGuarantee
        (ε, δ) with method ``"pld-confident-gnmax-fixed"``.

    References
    ----------
    N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar, Ú. Erlingsson,
    "Scalable Private Learning with PATE", ICLR 2018 (Section 4.2).
    J. Dong, A. Roth, W. Su, "Gaussian Differential Privacy", JRSS B 2022 (Corollary 3.3).
    docs/design.md §8.2.
    """
    from core.accounting.gaussian_dp import gaussian_epsilon

    sigma1 = check_sigma(sigma1, "sigma1")
    sigma2 = check_sigma(sigma2, "sigma2")
    nq = _check_count(n_queries, "n_queries", 1)
    na = nq if n_answers is None else _check_count(n_answers, "n_answers")
    delta = check_delta(delta)
    curve = confident_gnmax_rdp(sigma1, sigma2, n_queries=nq, n_answers=na)
    eps_rdp, order = rdp_to_dp(curve, delta=delta)
    i = int(np.searchsorted(ORDERS, order))
    mu_sq = nq * THRESHOLD_SENSITIVITY_SQ / (sigma1 * sigma1) + na * GNMAX_SENSITIVITY_SQ / (sigma2 * sigma2)
    eps = min(gaussian_epsilon(mu_sq, delta=delta), eps_rdp)
    return PrivacyGuarantee(
        eps, delta, "pld-confident-gnmax-fixed",
        f"{nq} threshold tests at σ1 = {sigma1:.6g} and {na} GNMax answers at σ2 = {sigma2:.6g}, all charged in "
        f"advance: Gaussian mechanisms composed exactly into one of μ² = {mu_sq:.6g}, converted at δ = {delta:g} "
        f"by its exact privacy profile (dp-accounting's PLD; RDP would give ε = {eps_rdp:.4g} at α = {order:g}).",
        parts={"mu_sq": mu_sq, "epsilon_rdp": eps_rdp, "order": order, "rdp_at_order": float(curve[i]),
               "n_queries": nq, "n_answers": na, "sigma1": sigma1, "sigma2": sigma2,
               "orders": "core.accounting.rdp.ORDERS"},
    )


def check_order(order) -> float:
    """Check one Rényi order λ for a conversion: a number greater than 1.01.

    Parameters
    ----------
    order : float
        The Rényi order λ.

    Returns
    -------
    float
        ``order`` as a float.

    Raises
    ------
    ParameterError
        When ``order`` is not a number or is at most 1.01 (dp-accounting's conversion is
        infinite at orders this close to 1).
    """
    a = check_real(order, "order", 1.0, math.inf, low_open=True)
    if a <= 1.01:  # dp-accounting's conversion is infinite at orders this close to 1
        raise ParameterError(f"order must be greater than 1.01, got {order!r}.")
    return a


def filter_guarantee(budget, *, order, delta: float) -> PrivacyGuarantee:
    """(ε, δ) of a Rényi filter run with budget ρ* at one order (Feldman & Zrnic 2021).

    A filter that, before each adaptively chosen step, checks that the charges so far
    plus the step's charge stay within ρ* (halting otherwise) is (α, ρ*)-RDP at that
    order, whatever the realised charges; ρ* is then converted at δ (Balle et al. 2020).

    Parameters
    ----------
    budget : float
        The filter's RDP budget ρ* at ``order``, > 0.
    order : float
        Rényi order α > 1.
    delta : float
        Target δ in (0, 1).

    Returns
    -------
    PrivacyGuarantee
        (ε, δ) with method ``"rdp-filter"`` and parts ``order`` and ``budget``.

    References
    ----------
    V. Feldman, T. Zrnic, "Individual Privacy Accounting via a Rényi Filter", NeurIPS 2021.
    B. Balle, G. Barthe, M. Gaboardi, J. Hsu, T. Sato, "Hypothesis Testing
    Interpretations and Rényi Differential Privacy", AISTATS 2020.
    """
    rho = check_real(budget, "budget", 0.0, math.inf, low_open=True)
    order = check_order(order)
    delta = check_delta(delta)
    eps, _ = rdp_to_dp(np.array([rho]), delta=delta, orders=np.array([order]))
    return PrivacyGuarantee(
        eps, delta, "rdp-filter",
        f"Rényi filter (Feldman & Zrnic 2021) with budget ρ* = {rho:.6g} at order α = {order:g}, "
        f"fixed before the run; converted at δ = {delta:g} (Balle et al. 2020).",
        parts={"order": order, "budget": rho},
    )


def filter_budget_for_epsilon(epsilon, *, order, delta: float) -> float:
    """The largest filter budget ρ* at ``order`` whose converted ε is ``epsilon``.

    Inverts Balle et al.'s conversion at one order:
    ``ρ* = ε − log((α−1)/α) + (log δ + log α)/(α − 1)``.

    Parameters
    ----------
    epsilon : float
        Target ε, > 0.
    order, delta
        As for :func:`filter_guarantee`.

    Returns
    -------
    float
        The budget ρ* > 0.

    Raises
    ------
    ParameterError
        When no positive budget reaches ε at that order (raise ε or δ, or pick another
        order).

    References
    ----------
    V. Feldman, T. Zrnic, "Individual Privacy Accounting via a Rényi Filter", NeurIPS 2021.
    B. Balle, G. Barthe, M. Gaboardi, J. Hsu, T. Sato, "Hypothesis Testing
    Interpretations and Rényi Differential Privacy", AISTATS 2020 (Theorem 21).
    """
    epsilon = check_epsilon(epsilon)
    a = check_order(order)
    delta = check_delta(delta)
    rho = epsilon - math.log1p(-1.0 / a) + math.log(delta * a) / (a - 1.0)
    if not rho > 0:
        floor = epsilon - rho
        raise ParameterError(
            f"At order {a:g} and delta = {delta:g} no positive RDP budget gives epsilon = {epsilon:g}: RDP at this "
            f"order cannot go below epsilon = {floor:.4g} (over all of ORDERS: {rdp_epsilon_floor(delta=delta):.4g}). "
            "Raise epsilon or delta, choose a larger order, or charge every query in advance (accounting='fixed'), "
            "which the exact Gaussian accountant converts and which reaches any epsilon."
        )
    return float(rho)


# ---------------------------------------------------------------------------- inverses
# Both guarantees above are the exact Gaussian profile of μ² (Σ sensitivity²/σ²), which
# reaches every ε > 0 at every δ; each inverse solves for μ² once (gaussian_dp).


def rdp_epsilon_floor(*, delta: float, orders=None) -> float:
    """The smallest ε any RDP curve can be converted to at δ over ``orders``.

    Balle et al.'s conversion adds ``log((α−1)/α) − (log δ + log α)/(α − 1)`` to ρ(α) ≥ 0,
    so over a finite grid no RDP analysis goes below this floor (e.g. 0.027 at
    δ = 1e-9 over :data:`ORDERS`).  A target below it needs the exact Gaussian accountant
    (:mod:`core.accounting.gaussian_dp`) or larger orders.

    Parameters
    ----------
    delta : float
        δ in (0, 1).
    orders : array of float, optional
        Default :data:`ORDERS`.

    Returns
    -------
    float
    """
    delta = check_delta(delta)
    a = check_orders(ORDERS if orders is None else orders)
    return float(max(0.0, np.min(np.log1p(-1.0 / a) - (math.log(delta) + np.log(a)) / (a - 1.0))))


def _check_eps_delta(epsilon, delta) -> tuple[float, float]:
    return check_epsilon(epsilon), check_delta(delta)


@functools.lru_cache(maxsize=4096)
def _gnmax_sigma(epsilon: float, n_answers: int, delta: float) -> float:
    from core.accounting.gaussian_dp import gaussian_mu_sq_for_epsilon

    return math.sqrt(n_answers * GNMAX_SENSITIVITY_SQ / gaussian_mu_sq_for_epsilon(epsilon, delta=delta))


def gnmax_sigma_for_epsilon(epsilon, *, n_answers, delta: float):
    """The GNMax noise σ whose data-independent guarantee for ``n_answers`` answers is ε.

    Inverse of :func:`gnmax_guarantee`: the exact Gaussian profile depends on σ and
    ``n_answers`` only through ``μ² = 2·n_answers/σ²``, solved by Brent's method
    (:func:`core.accounting.gaussian_dp.gaussian_mu_sq_for_epsilon`), so every ε > 0 is
    reached at every δ and the round trip holds to 1e-9 relative.  Vectorized over
    ``epsilon`` and ``n_answers``; scalar calls are cached.

    Parameters
    ----------
    epsilon : float or array
        Target ε > 0.
    n_answers : int or array of int
        Number of answers (≥ 1).
    delta : float

    Returns
    -------
    float or numpy.ndarray
    """
    delta = check_delta(delta)
    eps = np.asarray(epsilon)
    n = np.asarray(n_answers)
    if eps.ndim == 0 and n.ndim == 0:
        return _gnmax_sigma(check_epsilon(epsilon), _check_count(n_answers, "n_answers", 1), delta)
    eps_b, n_b = np.broadcast_arrays(eps, n)
    out = np.empty(eps_b.shape, dtype=float)
    for idx in np.ndindex(eps_b.shape):
        out[idx] = _gnmax_sigma(check_epsilon(eps_b[idx].item()),
                                _check_count(n_b[idx].item(), "n_answers", 1), delta)
    return out


@functools.lru_cache(maxsize=4096)
def _confident_sigmas(epsilon: float, n_queries: int, delta: float, ratio: float) -> tuple[float, float]:
    from core.accounting.gaussian_dp import gaussian_mu_sq_for_epsilon

    mu_sq = gaussian_mu_sq_for_epsilon(epsilon, delta=delta)
    # μ² = n (1/σ1² + 2/σ2²) with σ1 = ratio·σ2  =>  σ2² = n (1/ratio² + 2) / μ²
    sigma2 = math.sqrt(n_queries * (1.0 / (ratio * ratio) + 2.0) / mu_sq)
    return ratio * sigma2, sigma2


def confident_gnmax_sigmas_for_epsilon(epsilon, *, n_queries, delta: float, ratio: float = 1.0):
    """The noises ``(σ1, σ2)`` with ``σ1 = ratio·σ2`` whose fixed-accounting guarantee
    for ``n_queries`` queries is ε.

    Every query is charged its threshold test and its answer in advance
    (:func:`confident_gnmax_guarantee` with ``n_answers = n_queries``).  Solved as
    :func:`gnmax_sigma_for_epsilon`.  Vectorized over ``epsilon`` and ``n_queries``.

    Parameters
    ----------
    epsilon : float or array-like
        Target ε, > 0.
    n_queries : int or array-like
        Number of queries, >= 1.
    delta : float
        Target δ in (0, 1).
    ratio : float, default 1.0
        σ1/σ2, > 0.

    Returns
    -------
    (sigma1, sigma2) : floats, or two arrays

    References
    ----------
    N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar, Ú. Erlingsson,
    "Scalable Private Learning with PATE", ICLR 2018 (Section 4.2).
    I. Mironov, "Rényi Differential Privacy", IEEE CSF 2017.
    B. Balle, G. Barthe, M. Gaboardi, J. Hsu, T. Sato, "Hypothesis Testing
    Interpretations and Rényi Differential Privacy", AISTATS 2020.
    docs/design.md §8.2.
    """
    delta = check_delta(delta)
    ratio = check_real(ratio, "ratio", 0.0, math.inf, low_open=True)
    eps = np.asarray(epsilon)
    n = np.asarray(n_queries)
    if eps.ndim == 0 and n.ndim == 0:
        return _confident_sigmas(check_epsilon(epsilon), _check_count(n_queries, "n_queries", 1), delta, ratio)
    eps_b, n_b = np.broadcast_arrays(eps, n)
    s1 = np.empty(eps_b.shape, dtype=float)
    s2 = np.empty(eps_b.shape, dtype=float)
    for idx in np.ndindex(eps_b.shape):
        s1[idx], s2[idx] = _confident_sigmas(check_epsilon(eps_b[idx].item()),
                                             _check_count(n_b[idx].item(), "n_queries", 1), delta, ratio)
    return s1, s2
