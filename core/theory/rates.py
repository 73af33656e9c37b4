"""Rates "up to constants and log factors": Theorems 3.4, 3.5, advanced composition, the
crossover, and the private (Theorems 4.2, 4.3, Remarks 2, 3) and non-private sample
complexities.

:func:`advanced_composition_epsilon`, :func:`advanced_composition_eps0` and
:func:`pate_simple_epsilon` are re-exported from :mod:`core.accounting` (one implementation).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from core.accounting.composition import advanced_composition_eps0, advanced_composition_epsilon
from core.accounting.pate import pate_simple_epsilon
from core.errors import ParameterError
from core.validation import check_epsilon, check_probability
from core.theory.checks import FloatOrArray, each_checked, as_output, positive_array, check_setting, unit_array

__all__ = [
    "advanced_composition_epsilon",
    "advanced_composition_eps0",
    "pate_simple_epsilon",
    "misclassification_rate_btt",
    "misclassification_rate_composition",
    "crossover_m",
    "sample_complexity_private",
    "sample_complexity_nonprivate",
]

PRIVATE_SAMPLE_SETTINGS = ("realizable", "agnostic", "realizable_erm", "realizable_efficient")
"""Settings of :func:`sample_complexity_private` (Theorem 4.2, 4.3, Remark 2, Remark 3)."""


def _realizable_gamma(gamma: np.ndarray) -> None:
    """The realizable setting has no best-error term: every γ must be 0."""
    if np.any(gamma != 0):
        raise ParameterError("gamma must be 0 in the realizable setting; use setting='agnostic' for gamma > 0.")


# ---------------------------------------------------------------------------------------
# Rates up to constants and log factors (Theorems 3.4, 3.5, advanced composition)
# ---------------------------------------------------------------------------------------


def _rate_args(m, V, epsilon, n, gamma):
    m = positive_array(m, "m", "the number of queries")
    V = positive_array(V, "V", "the VC dimension")
    epsilon = each_checked(check_epsilon, epsilon, "epsilon")
    n = positive_array(n, "n", "the number of private rows")
    gamma = unit_array(gamma, "gamma", "the best error of the hypothesis class")
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
    check_setting(setting)
    m, V, epsilon, n, gamma = _rate_args(m, V, epsilon, n, gamma)
    x = V / (epsilon * n)
    if setting == "realizable":
        _realizable_gamma(gamma)
        return as_output(x * np.maximum(1.0, m * x))
    return as_output(gamma + np.maximum(np.sqrt(x), np.cbrt(m) * x ** (2.0 / 3.0)))


def misclassification_rate_composition(
    m: ArrayLike, V: ArrayLike, epsilon: ArrayLike, n: ArrayLike, setting: str = "realizable", gamma: ArrayLike = 0.0
) -> FloatOrArray:
    """Misclassification rate of the advanced-composition baseline (docs/design.md §3.5, §4), up to
    constants and logs.

    Answering each of m queries with ``A_stab`` at ``ε0 ≈ ε/sqrt(m)`` (advanced
    composition, logs dropped) needs a distance to instability ≈ ``1/ε0``, hence
    ``k ≈ sqrt(m)/ε`` teachers and α at n/k samples:

    - realizable: ``sqrt(m) · V/(ε n)`` (BTT §1);
    - agnostic: ``γ + sqrt(sqrt(m) · V/(ε n))``.

    BTT's rate (:func:`misclassification_rate_btt`) is at most this for every
    ``1 <= m <= (ε n / V)²``, in particular below :func:`crossover_m`.
    """
    check_setting(setting)
    m, V, epsilon, n, gamma = _rate_args(m, V, epsilon, n, gamma)
    y = np.sqrt(m) * V / (epsilon * n)
    if setting == "realizable":
        _realizable_gamma(gamma)
        return as_output(y)
    return as_output(gamma + np.sqrt(y))


def crossover_m(
    V: ArrayLike, epsilon: ArrayLike, n: ArrayLike, setting: str = "realizable", gamma: ArrayLike = 0.0
) -> FloatOrArray:
    """The number of queries M up to which BTT answers at the non-private rate.

    - realizable (Theorem 3.4): ``M ≈ ε n / V``;
    - agnostic (Theorem 3.5): ``M ≈ min(1/γ, sqrt(ε n / V))`` (``1/γ = inf`` for γ = 0).

    Up to constants and log factors.
    """
    check_setting(setting)
    V = positive_array(V, "V", "the VC dimension")
    epsilon = each_checked(check_epsilon, epsilon, "epsilon")
    n = positive_array(n, "n", "the number of private rows")
    gamma = unit_array(gamma, "gamma", "the best error of the hypothesis class")
    r = epsilon * n / V
    if setting == "realizable":
        _realizable_gamma(gamma)
        return as_output(r)
    with np.errstate(divide="ignore"):
        inv_g = np.where(gamma > 0, 1.0 / np.where(gamma > 0, gamma, 1.0), np.inf)
    return as_output(np.minimum(inv_g, np.sqrt(r)))


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
    check_setting(setting, PRIVATE_SAMPLE_SETTINGS)
    alpha = each_checked(check_probability, alpha, "alpha")
    V = positive_array(V, "V", "the VC dimension")
    epsilon = each_checked(check_epsilon, epsilon, "epsilon")
    if setting == "realizable":
        return as_output(V**1.5 / (epsilon * alpha**1.5))
    if setting == "agnostic":
        return as_output(V**1.5 / (epsilon * alpha**2.5))
    if setting == "realizable_erm":
        return as_output(V**1.5 / (epsilon * alpha))
    return as_output(V**2 / (epsilon * alpha))


def sample_complexity_nonprivate(alpha: ArrayLike, V: ArrayLike, setting: str = "realizable") -> FloatOrArray:
    """Non-private sample complexity up to constants and logs: ``V/α`` (realizable PAC),
    ``V/α²`` (agnostic PAC)."""
    check_setting(setting)
    alpha = each_checked(check_probability, alpha, "alpha")
    V = positive_array(V, "V", "the VC dimension")
    return as_output(V / alpha if setting == "realizable" else V / alpha**2)
