"""Exact (ε, δ) of composed Gaussian mechanisms, by dp-accounting's privacy-loss distribution.

A Gaussian mechanism with L2 sensitivity s and noise N(0, σ²) has a Gaussian privacy-loss
distribution, N(μ²/2, μ²) with μ = s/σ; composing runs adds the privacy-loss random
variables, so any adaptive composition of Gaussian mechanisms is exactly one Gaussian
mechanism with ``μ² = Σ s_i²/σ_i²`` (Dong, Roth & Su 2022, Cor. 3.3; Balle & Wang 2018).
Its privacy profile is exact:

    δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2),

computed by dp-accounting's ``GaussianPrivacyLoss`` (its PLD accountant's Gaussian
privacy loss, with no discretization).  This is the tightest data-independent guarantee
of GNMax (``μ² = 2n/σ²``: each answer moves the vote counts by L2² ≤ 2) and of
Confident-GNMax charged in advance (``μ² = n(1/σ1² + 2/σ2²)``).  RDP's conversion is an
upper bound on it (the RDP curve ``α μ²/2`` is the same mechanism's), so RDP is kept
where a data-dependent or filtered analysis needs it.

Every ε > 0 is reachable at every δ in (0, 1): δ(ε) decreases from 1 to 0 as μ → ∞
and to 0 as μ → 0, so the inverses below never fail for lack of an order grid.

References
----------
.. [DRS22] J. Dong, A. Roth, W. Su, "Gaussian differential privacy", JRSS B 84(1), 2022.
.. [BW18] B. Balle, Y.-X. Wang, "Improving the Gaussian mechanism for differential
   privacy: analytical calibration and optimal denoising", ICML 2018 (Theorem 8).
.. [DGKKM22] V. Doroshenko, B. Ghazi, P. Kamath, R. Kumar, P. Manurangsi, "Connect the
   dots: tighter discrete approximations of privacy loss distributions", PETS 2022
   (dp-accounting's PLD library).
"""

from __future__ import annotations

import functools
import math

from scipy import optimize

from core.errors import ParameterError
from core.validation import check_delta, check_epsilon

__all__ = ["gaussian_delta", "gaussian_epsilon", "gaussian_mu_sq_for_epsilon"]


def _check_mu_sq(mu_sq) -> float:
    try:
        v = float(mu_sq)
    except (TypeError, ValueError):
        raise ParameterError(f"mu_sq must be a number, got {mu_sq!r}.") from None
    if not (math.isfinite(v) and v > 0):
        raise ParameterError(f"mu_sq (Σ sensitivity²/σ²) must be a finite number > 0, got {mu_sq!r}.")
    return v


def gaussian_delta(mu_sq: float, *, epsilon: float) -> float:
    """δ(ε) of a Gaussian mechanism with ``μ² = mu_sq`` (exact, dp-accounting).

    Parameters
    ----------
    mu_sq : float
        Σ sensitivity²/σ² over the composed Gaussian mechanisms, > 0.
    epsilon : float
        ε ≥ 0.

    Returns
    -------
    float
    """
    from dp_accounting.pld.privacy_loss_mechanism import GaussianPrivacyLoss

    mu = math.sqrt(_check_mu_sq(mu_sq))
    return float(GaussianPrivacyLoss(standard_deviation=1.0, sensitivity=mu).get_delta_for_epsilon(float(epsilon)))


@functools.lru_cache(maxsize=4096)
def _epsilon(mu_sq: float, delta: float) -> float:
    if gaussian_delta(mu_sq, epsilon=0.0) <= delta:
        return 0.0
    f = lambda e: math.log(max(gaussian_delta(mu_sq, epsilon=e), 1e-320)) - math.log(delta)
    hi = max(1.0, 2.0 * math.sqrt(mu_sq))
    while f(hi) > 0:
        hi *= 2.0
    return float(optimize.brentq(f, 0.0, hi, xtol=1e-14, rtol=1e-15, maxiter=500))


def gaussian_epsilon(mu_sq: float, *, delta: float) -> float:
    """The exact ε at δ of a Gaussian mechanism with ``μ² = mu_sq``.

    Parameters
    ----------
    mu_sq : float
        Σ sensitivity²/σ², > 0.
    delta : float
        δ in (0, 1).

    Returns
    -------
    float
        The smallest ε with δ(ε) ≤ δ (solved to ~1e-14).
    """
    return _epsilon(_check_mu_sq(mu_sq), check_delta(delta))


@functools.lru_cache(maxsize=4096)
def _mu_sq(epsilon: float, delta: float) -> float:
    f = lambda log_mu: math.log(max(gaussian_delta(math.exp(2 * log_mu), epsilon=epsilon), 1e-320)) - math.log(delta)
    lo, hi = math.log(epsilon) - 2.0, math.log(epsilon) + 2.0
    while f(lo) >= 0:
        lo -= 2.0
        if lo < -700:  # pragma: no cover - δ(ε) → 0 as μ → 0 for every ε > 0
            raise ParameterError(f"epsilon = {epsilon:g} cannot be reached at delta = {delta:g}.")
    while f(hi) <= 0:
        hi += 1.0
    log_mu = optimize.brentq(f, lo, hi, xtol=1e-15, rtol=1e-15, maxiter=500)
    return math.exp(2.0 * log_mu)


def gaussian_mu_sq_for_epsilon(epsilon: float, *, delta: float) -> float:
    """The largest ``μ²`` whose exact guarantee at δ is ε (the inverse of :func:`gaussian_epsilon`).

    Parameters
    ----------
    epsilon : float
        Target ε > 0 (every one is reachable).
    delta : float
        δ in (0, 1).

    Returns
    -------
    float
        μ² = Σ sensitivity²/σ²; e.g. GNMax's σ for n answers is ``sqrt(2n/μ²)``.
    """
    return _mu_sq(check_epsilon(epsilon), check_delta(delta))
