"""Explicit learners (VC bounds): realizable sample sizes and errors (Blumer et al. 1989),
agnostic errors (Vapnik), and the per-teacher error :func:`teacher_error`.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from core.validation import check_beta, check_probability

from core.theory.checks import FloatOrArray, each_checked, as_output, positive_array, check_setting

__all__ = [
    "realizable_sample_size",
    "realizable_error",
    "agnostic_error",
    "teacher_error",
]

BLUMER_CONSTANTS = (4.0, 2.0, 8.0, 13.0)
"""Blumer et al. (1989): ``N >= max((4/α) log2(2/β), (8V/α) log2(13/α))``."""

VAPNIK_CONSTANTS = (8.0, 2.0, 8.0, 4.0)
"""Vapnik: ``α = sqrt((8V log(2eN/V) + 8 log(4/β)) / N)``."""


# ---------------------------------------------------------------------------------------
# Explicit learners from VC bounds
# ---------------------------------------------------------------------------------------


def realizable_sample_size(V: ArrayLike, alpha: ArrayLike, beta: ArrayLike) -> FloatOrArray:
    """Samples sufficient for a realizable (α, β)-PAC learner (Blumer et al. 1989).

    ``N = max((4/α) log2(2/β), (8V/α) log2(13/α))``: any consistent learner (ERM) for a
    class of VC dimension V reaches error ≤ α with probability ≥ 1 - β from N i.i.d.
    samples labeled by a hypothesis of the class.  Constants 4, 2, 8, 13 as in Blumer,
    Ehrenfeucht, Haussler and Warmuth, "Learnability and the Vapnik–Chervonenkis
    dimension" (J. ACM, 1989).

    Parameters
    ----------
    V : float or array
        VC dimension (> 0).
    alpha : float or array
        Target error, in (0, 1).
    beta : float or array
        Failure probability β' (the solver passes ``β/k``), in (0, 1).

    Returns
    -------
    float or numpy.ndarray
        N (real; round up for a count of samples).

    Examples
    --------
    V = 10, α = 0.05, β' = 0.01: ``max(80·log2(200), 1600·log2(260)) = max(611.5, 12835.9)
    ≈ 12,836``.
    """
    V = positive_array(V, "V", "the VC dimension")
    alpha = each_checked(check_probability, alpha, "alpha")
    beta = each_checked(check_beta, beta, "beta")
    return as_output(_realizable_size_raw(V, alpha, beta))


def _realizable_size_raw(V, alpha, beta):
    return np.maximum(4.0 / alpha * np.log2(2.0 / beta), 8.0 * V / alpha * np.log2(13.0 / alpha))


def _realizable_error_raw(V, N, beta, iterations: int = 200):
    """Vectorized bisection on log α of ``size(V, α, β) = N``; 1.0 where vacuous."""
    V, N, beta = np.broadcast_arrays(np.asarray(V, float), np.asarray(N, float), np.asarray(beta, float))
    lo = np.full(N.shape, -745.0)  # log α; size there is astronomically large
    hi = np.zeros(N.shape)  # log α = 0, α = 1
    vacuous = _realizable_size_raw(V, 1.0, beta) > N
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        ok = _realizable_size_raw(V, np.exp(mid), beta) <= N  # size decreases in α
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
        if np.all(hi - lo < 1e-15):
            break
    return np.where(vacuous, 1.0, np.exp(hi))


def realizable_error(V: ArrayLike, N: ArrayLike, beta: ArrayLike) -> FloatOrArray:
    """The smallest α that Blumer et al.'s bound guarantees from N realizable samples.

    The inverse of :func:`realizable_sample_size` in α (solved numerically by bisection;
    ``realizable_sample_size(V, α, β) = N`` to about 1e-12 relative): the ERM of a class
    of VC dimension V trained on N samples labeled by a hypothesis of the class has
    error ≤ α with probability ≥ 1 - β.  Returns 1.0 (a vacuous bound) where even α → 1
    would need more than N samples.

    Parameters
    ----------
    V : float or array
        VC dimension (> 0).
    N : float or array
        Number of samples (> 0).
    beta : float or array
        Failure probability β' in (0, 1).
    """
    V = positive_array(V, "V", "the VC dimension")
    N = positive_array(N, "N", "the number of samples")
    beta = each_checked(check_beta, beta, "beta")
    return as_output(_realizable_error_raw(V, N, beta))


def _agnostic_error_raw(V, N, beta):
    V, N, beta = np.broadcast_arrays(np.asarray(V, float), np.asarray(N, float), np.asarray(beta, float))
    with np.errstate(invalid="ignore", divide="ignore"):
        inner = (8.0 * V * np.log(2.0 * math.e * N / V) + 8.0 * np.log(4.0 / beta)) / N
        a = np.sqrt(np.maximum(inner, 0.0))
    return np.where((N < V) | (a >= 1.0), 1.0, a)


def agnostic_error(V: ArrayLike, N: ArrayLike, beta: ArrayLike) -> FloatOrArray:
    """Excess error of ERM from N samples in the agnostic setting (Vapnik's bound).

    ``α = sqrt((8V log(2eN/V) + 8 log(4/β)) / N)``, the form docs/design.md §4 uses: Vapnik's
    uniform-convergence bound with the growth function bounded by ``(eN/V)^V``
    (Sauer's lemma; constants 8, 2e, 8, 4).  ERM on N i.i.d. samples is then taken as an
    ``(α, β, N)`` agnostic PAC learner for a class of VC dimension V (error at most
    ``γ + α`` with probability ≥ 1 - β, γ the best error in the class).  Valid for
    ``N >= V``; returns 1.0 (vacuous) where ``N < V`` or the formula reaches 1.

    Parameters
    ----------
    V, N, beta : float or array
        As for :func:`realizable_error`.

    Returns
    -------
    float or ndarray
        The excess error α (1.0 where the bound is vacuous).

    Examples
    --------
    V = 10, N = 10,000, β' = 0.01: ``(80·log(5436.6) + 8·log(400))/1e4 = (688.07 + 47.93)/1e4
    = 0.0736``, so ``α ≈ 0.2713``.
    """
    V = positive_array(V, "V", "the VC dimension")
    N = positive_array(N, "N", "the number of samples")
    beta = each_checked(check_beta, beta, "beta")
    return as_output(_agnostic_error_raw(V, N, beta))


def teacher_error(V: ArrayLike, N: ArrayLike, beta: ArrayLike, setting: str = "realizable") -> FloatOrArray:
    """α of a teacher trained on N samples: :func:`realizable_error` or :func:`agnostic_error`."""
    check_setting(setting)
    return realizable_error(V, N, beta) if setting == "realizable" else agnostic_error(V, N, beta)
