"""Public parameters of certified Confident-GNMax (docs/design.md §8.5).

:func:`certified_parameters` chooses, from a target (ε, δ) and public sizes only, the
Confident-GNMax settings, the Rényi order λ, the smoothness β, the noises σ_s and σ_ℓ of
the private test and the data-dependent budget B; :class:`CertifiedParameters` holds
them and states the certified guarantee.  :func:`gnss_rdp` and
:func:`log_sensitivity_rdp` are the RDP of the test's two noisy releases.  The labeling
run itself is :func:`core.mechanisms.certified.certified_confident_gnmax_label`.

References
----------
N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar, Ú. Erlingsson, "Scalable
Private Learning with PATE", ICLR 2018 (Thm 23 (GNSS), Appendix B).
R. Redberg, Y. Zhu, Y.-X. Wang, "Generalized PTR: user-friendly recipes for
data-adaptive algorithms with differential privacy", AISTATS 2023.
K. Nissim, S. Raskhodnikova, A. Smith, "Smooth sensitivity and sampling in private data
analysis", STOC 2007.
I. Mironov, "Rényi Differential Privacy", IEEE CSF 2017 (Proposition 7: the Gaussian's RDP).
B. Balle, G. Barthe, M. Gaboardi, J. Hsu, T. Sato, "Hypothesis testing interpretations and
Rényi differential privacy", AISTATS 2020 (the conversion to (ε, δ)).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from core.accounting.gnmax_sensitivity import gnmax_sensitivity
from core.accounting.guarantee import PrivacyGuarantee
from core.errors import ParameterError
from core.validation import (
    check_delta,
    check_epsilon,
    check_integer,
    check_probability,
    check_real,
)

__all__ = [
    "COMPOSITIONS",
    "CertifiedParameters",
    "certified_parameters",
    "gnss_rdp",
    "log_sensitivity_rdp",
    "normal_upper_quantile",
]

COMPOSITIONS = ("basic", "rdp")
_BETA_TIMES_ORDER = 0.4  # β = 0.4/λ: PATE 2018's released analysis searches β in [0.3/λ, 0.495/λ]
_ORDER_GRID = np.concatenate([np.arange(2.0, 64.0, 1.0), np.geomspace(64.0, 512.0, 40)])


def normal_upper_quantile(p: float) -> float:
    """``z(p) = Φ⁻¹(1 − p)``, the standard normal quantile with upper tail ``p``.

    Parameters
    ----------
    p : float
        Upper-tail probability in (0, 1).

    Returns
    -------
    float
        ``z`` with ``P[N(0, 1) > z] = p``.
    """
    return float(-ndtri(p))


def gnss_rdp(order, *, beta: float, sigma_s: float):
    """RDP of GNSS, ``f(D) + S(D)·N(0, σ_s²)`` with S a β-smooth bound (PATE 2018 Thm 23).

    ``λ e^{2β}/σ_s² + (βλ − ½ log(1 − 2λβ))/(λ − 1)`` for ``1 < λ < 1/(2β)``; +inf for
    orders outside that range.

    Parameters
    ----------
    order : float or array-like
        Rényi orders λ.
    beta : float
        Smoothness β > 0.
    sigma_s : float
        GNSS noise σ_s > 0.

    Returns
    -------
    numpy.ndarray of float
        ρ_GNSS(λ), same shape as ``order`` (+inf outside 1 < λ < 1/(2β)).

    Notes
    -----
    docs/design.md §8.5 (PATE 2018's Appendix B, Theorem 23); the papers are cited in this module's References.
    """
    lam = np.asarray(order, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        val = lam * math.exp(2.0 * beta) / sigma_s**2 + (beta * lam - 0.5 * np.log1p(-2.0 * lam * beta)) / (lam - 1.0)
    return np.where((lam > 1.0) & (lam * 2.0 * beta < 1.0), val, np.inf)


def log_sensitivity_rdp(order, *, beta: float, sigma_l: float):
    """RDP of releasing ``log S(D) + N(0, σ_ℓ²)``: ``log S`` has sensitivity β, so ``λβ²/(2σ_ℓ²)``.

    Parameters
    ----------
    order, beta
        As in :func:`gnss_rdp` (β is the sensitivity of ``log S``).
    sigma_l : float
        Noise σ_ℓ > 0.

    Returns
    -------
    numpy.ndarray of float
        ρ_ℓ(λ), same shape as ``order``.

    Notes
    -----
    docs/design.md §8.5 (Mironov's Proposition 7); the papers are cited in this module's References.
    """
    lam = np.asarray(order, dtype=float)
    return lam * beta**2 / (2.0 * sigma_l**2)


def _compute_epsilon(orders, rdp, delta: float) -> tuple[float, float]:
    from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

    orders = np.atleast_1d(np.asarray(orders, dtype=float))
    rdp = np.atleast_1d(np.asarray(rdp, dtype=float))
    ok = np.isfinite(rdp)
    if not np.any(ok):
        return math.inf, float("nan")
    eps, order = compute_epsilon(orders[ok], rdp[ok], delta)
    return float(eps), float(order)


def _test_orders(beta: float) -> np.ndarray:
    """Orders at which the test's RDP is converted: the grid inside ``(1, 1/(2β))``."""
    hi = 1.0 / (2.0 * beta)
    grid = np.concatenate([_ORDER_GRID, hi * np.array([0.9, 0.95, 0.98, 0.99])])
    return np.unique(grid[(grid > 1.01) & (grid < hi)])


# ---------------------------------------------------------------------------- parameters


@dataclass(frozen=True)
class CertifiedParameters:
    """Public parameters of certified Confident-GNMax, all fixed before the data is seen.

    Attributes
    ----------
    threshold, sigma1, sigma2 : float
        Confident-GNMax's threshold t and noises σ1 (threshold), σ2 (answer).
    order : float
        The Rényi order λ of the test and of the budget.
    budget : float
        B: the RDP at λ that the labels may spend (the test passes only if E(D) ≤ B).
    beta : float
        Smoothness of S; ``λ < 1/(2β)``.
    sigma_s : float
        GNSS noise multiplier of step 4 (noise ``S(D)·N(0, σ_s²)``).
    sigma_l : float
        Noise σ_ℓ of the log-sensitivity release (step 3).
    delta_prime : float
        δ′: probability that the GNSS noise makes a test with E(D) > B pass (given Ŝ ≥ S).
    delta_dprime : float
        δ″: probability that Ŝ < S(D).
    delta_conversion : float
        δ spent converting RDP to (ε, δ): with ``composition="basic"`` half goes to the
        test (δ_test) and half to the budget (δ_B).
    composition : {"basic", "rdp"}
        How the guarantee composes the test and the labels (see
        :meth:`guarantee`).
    """

    threshold: float
    sigma1: float
    sigma2: float
    order: float
    budget: float
    beta: float
    sigma_s: float
    sigma_l: float
    delta_prime: float
    delta_dprime: float
    delta_conversion: float
    composition: str = "basic"

    def __post_init__(self):
        check_real(self.threshold, "threshold")
        for name in ("sigma1", "sigma2", "budget", "beta", "sigma_s", "sigma_l"):
            check_real(getattr(self, name), name, 0.0, math.inf, low_open=True)
        order = check_real(self.order, "order", 1.0, math.inf, low_open=True)
        if order <= 1.01:
            raise ParameterError(f"order must be greater than 1.01, got {self.order!r}.")
        if not order < 1.0 / (2.0 * self.beta):
            raise ParameterError(
                f"The order λ = {order:g} must be below 1/(2β) = {1.0 / (2.0 * self.beta):g} "
                "(GNSS, PATE 2018 Thm 23); lower beta or the order."
            )
        for name in ("delta_prime", "delta_dprime", "delta_conversion"):
            check_probability(getattr(self, name), name)
        if self.delta_prime + self.delta_dprime + self.delta_conversion >= 1.0:
            raise ParameterError("delta_prime + delta_dprime + delta_conversion must be below 1.")
        if self.composition not in COMPOSITIONS:
            raise ParameterError(f"composition must be one of {COMPOSITIONS}, got {self.composition!r}.")

    def test_rdp(self, orders):
        """RDP of the test (steps 3–4) at the given orders (+inf where GNSS does not apply).

        Parameters
        ----------
        orders : float or array-like
            Rényi orders λ.

        Returns
        -------
        numpy.ndarray of float
            ρ_test(λ), same shape as ``orders``.

        Notes
        -----
        docs/design.md §8.5 (PATE 2018's Appendix B, Theorem 23); the papers are cited in this module's References.
        """
        return gnss_rdp(orders, beta=self.beta, sigma_s=self.sigma_s) + log_sensitivity_rdp(
            orders, beta=self.beta, sigma_l=self.sigma_l)

    @property
    def delta(self) -> float:
        """The total δ of the guarantee: ``δ_conversion + δ′ + δ″``.

        Returns
        -------
        float
        """
        return self.delta_conversion + self.delta_prime + self.delta_dprime

    def guarantee(self) -> PrivacyGuarantee:
        """The certified (ε, δ) of a run, whatever the data and whatever the test's outcome.

        ``composition="basic"`` (docs/design.md §8.5): ``ε = ε_test + ε_B``,
        ``δ = δ_test + δ_B + δ′ + δ″``, with ``(ε_test, δ_test)`` the test's RDP
        (GNSS plus the log-S release) converted at the best order in ``(1, 1/(2β))`` and
        ``(ε_B, δ_B)`` the budget B converted at λ; ``δ_test = δ_B = δ_conversion/2``.

        ``composition="rdp"``: ``ε`` converts ``ρ_test(λ) + B`` at λ with
        ``δ_conversion``; ``δ = δ_conversion + δ′ + δ″``.  Valid because, for D with
        ``E(D) ≤ B``, the run is the adaptive composition of the test and of labels whose
        data-dependent RDP against every neighbour is ≤ B, so
        ``D_λ(M(D) ‖ M(D')) ≤ ρ_test(λ) + B`` (this is the direction (ε, δ)-DP needs
        for the pair (D, D')); for D with ``E(D) > B`` the run equals "test, then no
        label" except with probability ≤ δ′ + δ″, and the test alone costs less.
        Never larger than "basic" up to the δ split; offered as an option.

        Returns
        -------
        PrivacyGuarantee

        Notes
        -----
        docs/design.md §8.5 (PATE 2018's Theorem 23, Generalized PTR, the RDP conversion); the
        papers are cited in this module's References.
        """
        orders_t = _test_orders(self.beta)
        rho_t = self.test_rdp(orders_t)
        rho_t_lam = float(self.test_rdp(self.order))
        if self.composition == "basic":
            half = self.delta_conversion / 2.0
            eps_t, order_t = _compute_epsilon(orders_t, rho_t, half)
            eps_b, _ = _compute_epsilon([self.order], [self.budget], half)
            eps = eps_t + eps_b
            detail = (
                f"Certified by propose–test–release (docs/design.md §8.5): test (GNSS + log-S release, "
                f"RDP converted at order {order_t:g}) ε_test = {eps_t:.4g} at δ_test = {half:.3g}, plus the "
                f"budget B = {self.budget:.4g} at order {self.order:g}: ε_B = {eps_b:.4g} at δ_B = {half:.3g}; "
                f"δ′ = {self.delta_prime:.3g}, δ″ = {self.delta_dprime:.3g} cover a pass with E(D) > B."
            )
            parts = {"epsilon_test": eps_t, "delta_test": half, "order_test": order_t,
                     "epsilon_budget": eps_b, "delta_budget": half}
        else:
            eps, _ = _compute_epsilon([self.order], [rho_t_lam + self.budget], self.delta_conversion)
            eps_t, order_t = _compute_epsilon(orders_t, rho_t, self.delta_conversion)
            detail = (
                f"Certified by propose–test–release (docs/design.md §8.5), RDP composition: test RDP "
                f"{rho_t_lam:.4g} + budget B = {self.budget:.4g} at order {self.order:g}, converted at "
                f"δ = {self.delta_conversion:.3g}; δ′ = {self.delta_prime:.3g}, δ″ = {self.delta_dprime:.3g} "
                "cover a pass with E(D) > B."
            )
            parts = {"epsilon_test": eps_t, "order_test": order_t, "rdp_test_at_order": rho_t_lam}
        parts.update({"order": self.order, "budget": self.budget, "delta_prime": self.delta_prime,
                      "delta_dprime": self.delta_dprime, "composition": self.composition})
        return PrivacyGuarantee(float(eps), float(self.delta), "certified-ptr", detail, parts)

    def public_dict(self) -> dict:
        """The parameters as a plain dict (all public).

        Returns
        -------
        dict
        """
        return dataclasses.asdict(self)


def _budget_for(eps_b: float, order: float, delta_b: float) -> float:
    """Largest B ≥ 0 whose conversion at λ is ≤ ``eps_b`` (Balle et al. 2020), or ≤ 0."""
    return eps_b - math.log1p(-1.0 / order) + math.log(delta_b * order) / (order - 1.0)


def _design(order: float, epsilon: float, delta_conv: float, delta_prime: float, delta_dprime: float,
            composition: str):
    beta = _BETA_TIMES_ORDER / order
    # σ_ℓ: the bound Ŝ overstates S by e^{σ_ℓ (z(δ″) + N(0,1))}; σ_ℓ z(δ″) = 1 keeps that
    # factor near e.
    sigma_l = 1.0 / normal_upper_quantile(delta_dprime)
    # σ_s: the GNSS term λe^{2β}/σ_s² is set to half the fixed part of Thm 23's bound.
    fixed = (beta * order - 0.5 * math.log1p(-2.0 * order * beta)) / (order - 1.0)
    sigma_s = math.sqrt(order * math.exp(2.0 * beta) / (0.5 * fixed))
    test = float(gnss_rdp(order, beta=beta, sigma_s=sigma_s) + log_sensitivity_rdp(order, beta=beta, sigma_l=sigma_l))
    if composition == "basic":
        half = delta_conv / 2.0
        orders_t = _test_orders(beta)
        rho_t = gnss_rdp(orders_t, beta=beta, sigma_s=sigma_s) + log_sensitivity_rdp(orders_t, beta=beta, sigma_l=sigma_l)
        eps_t, _ = _compute_epsilon(orders_t, rho_t, half)
        budget = _budget_for(epsilon - eps_t, order, half)
    else:
        budget = _budget_for(epsilon, order, delta_conv) - test
    return beta, sigma_s, sigma_l, budget


def certified_parameters(*, epsilon: float, delta: float, m: int, k: int, n_classes: int,
                         threshold: float | None = None, sigma1: float | None = None,
                         sigma2: float | None = None, order: float | None = None,
                         composition: str = "basic") -> CertifiedParameters:
    """Choose the public parameters of certified Confident-GNMax from a target (ε, δ).

    Uses public sizes only, never the data (the choice is part of the mechanism's
    definition, fixed before the run).

    Heuristics
    ----------
    * Confident-GNMax defaults scale PATE 2018's MNIST/SVHN/Adult settings for 250
      teachers (t = 200–300, σ1 = 150–200, σ2 = 40): ``t = 0.8k``, ``σ1 = 0.6k``,
      ``σ2 = 0.16k``.
    * δ split: ``δ′ = δ″ = δ/4``, ``δ_conversion = δ/2`` (for "basic":
      ``δ_test = δ_B = δ/4``).
    * ``β = 0.4/λ`` (PATE 2018's released analysis searches ``β ∈ [0.3/λ, 0.495/λ]``).
    * ``σ_ℓ = 1/z(δ″)``, so the released bound Ŝ overstates S by about a factor e.
    * ``σ_s``: the GNSS term ``λe^{2β}/σ_s²`` is half of Thm 23's fixed part
      ``(βλ − ½ log(1 − 2βλ))/(λ − 1)`` (PATE 2018 chose σ_s from the data, which a
      certified run may not do).
    * B is the largest budget with ``ε_test + ε_B ≤ ε`` ("basic") or with the
      composed RDP converting to ε ("rdp").
    * λ (unless given) maximises ``B/λ`` over a grid of orders 2–512: the budget in
      units of the per-order cost of a Gaussian step (which is ∝ λ), a data-free proxy
      for how many confident queries fit.  The GNMax smooth-sensitivity conditions
      C5–C6 are checked at the chosen (σ2, K, λ); orders where they fail are skipped.

    Parameters
    ----------
    epsilon, delta : float
        Target guarantee.
    m, k, n_classes : int
        Numbers of queries, teachers and classes (public).
    threshold, sigma1, sigma2 : float, optional
        Confident-GNMax's parameters; defaults above.
    order : float, optional
        Fix λ instead of choosing it.
    composition : {"basic", "rdp"}, default "basic"
        See :meth:`CertifiedParameters.guarantee`.

    Returns
    -------
    CertifiedParameters

    Raises
    ------
    ParameterError
        When no order leaves a positive budget (ε too small for the test at this δ).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    check_integer(m, "m", 1)
    k = check_integer(k, "k", 1)
    n_classes = check_integer(n_classes, "n_classes", 1)
    if composition not in COMPOSITIONS:
        raise ParameterError(f"composition must be one of {COMPOSITIONS}, got {composition!r}.")
    threshold = 0.8 * k if threshold is None else check_real(threshold, "threshold")
    sigma1 = 0.6 * k if sigma1 is None else check_real(sigma1, "sigma1", 0.0, math.inf, low_open=True)
    sigma2 = 0.16 * k if sigma2 is None else check_real(sigma2, "sigma2", 0.0, math.inf, low_open=True)
    return _chosen(float(epsilon), float(delta), float(threshold), float(sigma1), float(sigma2),
                   None if order is None else check_real(order, "order", 1.01, math.inf, low_open=True), composition,
                   n_classes)


@functools.lru_cache(maxsize=256)
def _chosen(epsilon: float, delta: float, threshold: float, sigma1: float, sigma2: float, order: float | None,
            composition: str, n_classes: int) -> CertifiedParameters:
    """The search of :func:`certified_parameters` on validated public values, done once per input.

    A pure function of public values (no data, no randomness): the app's comparison and
    sweeps ask it for the same settings again and again.  :class:`CertifiedParameters` is
    frozen, so the one returned object is safe to share.
    """
    d_prime = d_dprime = delta / 4.0
    d_conv = delta / 2.0
    candidates = _ORDER_GRID if order is None else np.array([order])
    best = None
    for lam in candidates:
        lam = float(lam)
        beta, sigma_s, sigma_l, budget = _design(lam, epsilon, d_conv, d_prime, d_dprime, composition)
        if not budget > 0:
            continue
        if best is not None and budget / lam <= best[0]:
            continue
        try:
            gnmax_sensitivity(sigma=sigma2, n_classes=n_classes, order=lam)
        except ParameterError:
            continue
        best = (budget / lam, lam, beta, sigma_s, sigma_l, budget)
    if best is None:
        raise ParameterError(
            f"epsilon = {epsilon:g} at delta = {delta:g} leaves no positive RDP budget once the private test "
            "is paid for (or the smooth-sensitivity conditions fail at every order); raise epsilon or delta, "
            "or use the data-independent Confident-GNMax."
        )
    _, lam, beta, sigma_s, sigma_l, budget = best
    return CertifiedParameters(threshold=float(threshold), sigma1=float(sigma1), sigma2=float(sigma2), order=lam,
                               budget=float(budget), beta=beta, sigma_s=sigma_s, sigma_l=sigma_l,
                               delta_prime=d_prime, delta_dprime=d_dprime, delta_conversion=d_conv,
                               composition=composition)
