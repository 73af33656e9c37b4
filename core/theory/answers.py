"""Feasibility and answered-query models: the probability that a BTT test passes and the
expected number of answered queries under BTT and under composition.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from core import noise as _noise
from core.accounting.btt import calibrate_btt
from core.accounting.baseline import composition_baseline_parameters
from core.errors import ParameterError
from core.mechanisms.stability import distance_to_instability
from core.validation import check_k, check_m, check_T
from core.theory.checks import FloatOrArray, each_checked, nonnegative_array, as_output, positive_array, unit_array

__all__ = [
    "btt_pass_probability",
    "expected_answers_btt",
    "expected_answers_composition",
]


# ---------------------------------------------------------------------------------------
# Pass probabilities, feasibility, answered-query models
# ---------------------------------------------------------------------------------------


def btt_pass_probability(
    distance: ArrayLike, noise_scale: float, threshold: ArrayLike, *, discrete: bool = True
) -> FloatOrArray:
    """Probability that a query with distance to instability d passes BTT's sparse-vector test.

    ``P[d + Z1 > w + Z2]`` with ``Z1 ~ Lap(2λ)`` (query noise) and ``Z2 ~ Lap(λ)``
    (threshold noise) independent (docs/design.md §3.2), for a freshly drawn threshold.  With
    ``discrete=True`` (the library's mechanism, :func:`core.noise.discrete_laplace`) both
    are discrete Laplace on the integers and the real threshold w is used as is, so the
    test is ``Z1 - Z2 > w - d`` ⇔ ``Z1 - Z2 >= floor(w - d) + 1``; with ``discrete=False``
    both are continuous.

    Since ``Z1 - Z2`` is symmetric about 0, the probability is at least 1/2 exactly when
    ``d > w`` (discrete: ``P[Y >= 0] > 1/2 > P[Y >= 1]``) or ``d >= w`` (continuous).

    Parameters
    ----------
    distance : int or array
        Distance to instability ``d = max(0, ceil(M/2) - 1)`` (docs/design.md §2).
    noise_scale : float
        λ.
    threshold : float
        w.
    """
    d = nonnegative_array(distance, "distance", "the distance to instability")
    lam = float(positive_array(noise_scale, "noise_scale", "the threshold noise scale λ"))
    w = nonnegative_array(threshold, "threshold", "the sparse-vector threshold w")
    return as_output(_noise.difference_tail(2.0 * lam, lam, w - d, discrete=discrete))


def _distance_pmf(k: int, alpha: float):
    """Distances to instability and their probabilities when each of k teachers is wrong
    independently with probability α (binary task): correct votes ~ Binomial(k, 1 - α)."""
    v = np.arange(k + 1)
    pmf = stats.binom.pmf(v, k, 1.0 - alpha)
    dist = distance_to_instability(np.stack([v, k - v], axis=1))  # ceil(M/2) - 1, docs/design.md §2
    return dist, pmf


def _model_args(k, alpha):
    k = np.asarray(k)
    each_checked(check_k, k, "k")
    a = unit_array(alpha, "alpha", "the teachers' error rate")
    return np.broadcast_arrays(np.asarray(k, dtype=np.int64), a)


def expected_answers_btt(
    k: ArrayLike,
    alpha: ArrayLike,
    epsilon: float,
    delta: float,
    T: int,
    m: int,
    calibration: str = "tight",
    *,
    discrete: bool = True,
) -> FloatOrArray:
    """MODEL: expected number of queries BTT answers (labels) before halting.

    The model (binary task, a simplification, not a bound):

    - every teacher is wrong on a query independently with probability α, so the votes
      for the correct class are ``Binomial(k, 1 - α)``, the margin is
      ``M = |2V - k|`` and the distance ``d = max(0, ceil(M/2) - 1)``;
    - each query passes independently with the averaged probability
      ``p = Σ_v P[V = v] · btt_pass_probability(d(v), λ, w)`` (λ, w from
      ``calibrate_btt``), which ignores the correlation between queries that share one
      threshold draw;
    - the run stops after the T-th ⊥ or after m queries, so
      ``E[answered] = p · Σ_{i=0}^{m-1} P[Binomial(i, 1 - p) <= T - 1]``
      (≈ ``min(m p, T p/(1 - p))``).

    Parameters
    ----------
    k : int or array
        Number of teachers.
    alpha : float or array
        Teachers' error rate in [0, 1].
    epsilon, delta, T, m : scalars
        Privacy budget, cutoff and number of queries of the run.
    calibration : {"tight", "paper"}, default "tight"
    discrete : bool
        Discrete (the mechanism's) or continuous Laplace noise.

    Returns
    -------
    float or numpy.ndarray
        Expected answered count, broadcast over k and alpha.
    """
    T = check_T(T)
    m = check_m(m)
    k, a = _model_args(k, alpha)
    cal = calibrate_btt(epsilon, delta=delta, T=T, m=m, calibration=calibration)
    lam, w = float(cal.noise_scale), float(cal.threshold)
    i = np.arange(m)
    out = np.empty(k.shape)
    for idx in np.ndindex(k.shape):
        dist, pmf = _distance_pmf(int(k[idx]), float(a[idx]))
        p = float(np.clip(np.sum(pmf * _noise.difference_tail(2.0 * lam, lam, w - dist, discrete=discrete)), 0.0, 1.0))
        out[idx] = p * float(np.sum(stats.binom.cdf(T - 1, i, 1.0 - p)))
    return as_output(out)


def expected_answers_composition(
    k: ArrayLike,
    alpha: ArrayLike,
    epsilon: float,
    delta: float,
    m: int,
    *,
    discrete: bool = True,
) -> FloatOrArray:
    """MODEL: expected number of queries the advanced-composition baseline answers (docs/design.md §3.5).

    The baseline answers every one of the m queries with ``A_stab`` at per-query
    ``(ε0, δ0)`` from ``core.accounting.composition_baseline_parameters``: δ is split as
    ``δ = m δ0 + δ'`` with ``δ' = δ/2`` and ``δ0 = δ/(2m)``, and ``ε0`` inverts advanced
    composition, ``sqrt(2m log(1/δ')) ε0 + m ε0 (e^ε0 - 1) = ε``.  ``A_stab`` releases
    when ``d + Z > Γ`` with ``Z ~ Lap(1/ε0)`` (discrete by default) and
    ``Γ = log(1/δ0)/ε0``.  Same vote model as :func:`expected_answers_btt` (each teacher
    wrong independently with probability α, binary task); there is no halting, so
    ``E[answered] = m · Σ_v P[V = v] · P[d(v) + Z > Γ]``.

    Returns
    -------
    float or numpy.ndarray
        Expected answered count, broadcast over k and alpha.
    """
    params = composition_baseline_parameters(epsilon, delta=delta, m=m)
    m = int(m)
    k, a = _model_args(k, alpha)
    eps0, gamma_thr = float(params.eps0), float(params.threshold)
    out = np.empty(k.shape)
    for idx in np.ndindex(k.shape):
        dist, pmf = _distance_pmf(int(k[idx]), float(a[idx]))
        x = gamma_thr - dist
        if discrete:
            pas = _noise.discrete_laplace_tail(1.0 / eps0, x)
        else:
            pas = np.where(x >= 0, 0.5 * np.exp(-np.abs(x) * eps0), 1.0 - 0.5 * np.exp(-np.abs(x) * eps0))
        out[idx] = m * float(np.clip(np.sum(pmf * pas), 0.0, 1.0))
    return as_output(out)
