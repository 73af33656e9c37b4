"""Theorem 3.2: the cutoff ``T`` (:func:`cutoff_T`) and the misclassification bound.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from core.validation import check_beta

from core.theory.checks import FloatOrArray, each_checked, as_output, positive_array, unit_array

__all__ = [
    "cutoff_T",
    "misclassification_bound",
]


# ---------------------------------------------------------------------------------------
# Theorem 3.2
# ---------------------------------------------------------------------------------------


def cutoff_T(gamma: ArrayLike, alpha: ArrayLike, m: ArrayLike, beta: ArrayLike) -> FloatOrArray:
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


def misclassification_bound(gamma: ArrayLike, alpha: ArrayLike, m: ArrayLike, beta: ArrayLike) -> FloatOrArray:
    """The misclassification-rate bound of BTT Theorem 3.2: ``T/m = O(γ + α)``.

    Same assumptions as :func:`cutoff_T`; holds with probability ``>= 1 - 2β``.  A value
    of 1 or more is vacuous.
    """
    return as_output(np.asarray(cutoff_T(gamma, alpha, m, beta)) / positive_array(m, "m", "the number of queries"))
