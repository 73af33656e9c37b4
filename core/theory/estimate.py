"""Remark 1: a private estimate of γ + α and the split of its budget.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from core import noise as _noise
from core.errors import ParameterError
from core.validation import check_epsilon, check_m, check_probability
from core.theory.checks import FloatOrArray, nonnegative_array, as_output

__all__ = [
    "private_error_estimate",
    "BudgetSplit",
    "error_estimate_budget_split",
]


# ---------------------------------------------------------------------------------------
# Remark 1: private estimate of γ + α
# ---------------------------------------------------------------------------------------


def private_error_estimate(
    n_errors: ArrayLike, n_holdout: int, epsilon: float, rng: _noise.RNGLike = None
) -> FloatOrArray:
    """A private estimate of the error rate γ + α from a held-out split (BTT Remark 1).

    ``clip((n_errors + DLap(1/ε)) / n_holdout, 0, 1)``.  The error count over held-out
    rows has sensitivity 1 under replacement adjacency (one row changes one error), so
    the estimate is ε-DP for the held-out rows, provided the evaluated hypothesis does
    not depend on them.  Rows that trained the evaluated hypothesis are not protected by
    this noise: that hypothesis must be public or itself private, otherwise the estimate
    is a non-private diagnostic.  Use the estimate as ``cutoff_T(estimate, 0, m, β)``
    (it estimates γ + α together); its standard deviation is ``sqrt(2)/(ε n_holdout)``,
    negligible for a large hold-out, so the asymptotics of Theorem 3.2 are unchanged.
    The noise is the exact discrete Laplace of :func:`core.noise.discrete_laplace` on the
    integer count: an integer plus integer noise has no floating-point representation to
    leak through (Mironov 2012), and the ε-DP proof is that of the Laplace mechanism for an
    integer-valued sensitivity-1 query.

    Parameters
    ----------
    n_errors : int or array
        Number of misclassified held-out rows (0 ≤ n_errors ≤ n_holdout).
    n_holdout : int
        Number of held-out rows.
    epsilon : float
        The estimate's own budget (see :func:`error_estimate_budget_split`).
    rng : Generator, int or None
        See :func:`core.noise.check_rng`.
    """
    n_holdout = check_m(n_holdout, "n_holdout")
    epsilon = check_epsilon(epsilon)
    e = nonnegative_array(n_errors, "n_errors", "the number of held-out errors")
    if np.any(e > n_holdout) or np.any(e != np.round(e)):
        raise ParameterError(f"n_errors must be whole numbers between 0 and n_holdout = {n_holdout}, got {n_errors!r}.")
    z = _noise.discrete_laplace(1.0 / epsilon, size=e.shape, rng=rng)
    return as_output(np.clip((e.astype(np.int64) + z) / n_holdout, 0.0, 1.0))


class BudgetSplit(NamedTuple):
    """Two budgets that add up to the total (basic composition)."""

    epsilon_estimate: float
    epsilon_labeling: float


def error_estimate_budget_split(epsilon_total: float, fraction: float) -> BudgetSplit:
    """Split a total ε between the Remark-1 error estimate and the labeling (basic composition).

    ``ε_estimate = fraction · ε_total`` and ``ε_labeling = (1 - fraction) · ε_total``;
    by basic composition the two steps together are ``ε_total``-DP (δ is the labeling's).
    The cost: the labeling runs at a smaller ε, so its λ grows by ``1/(1 - fraction)``
    and it needs that many times more teachers for the same answers; the estimate's
    noise has scale ``1/ε_estimate``.  (If the estimate reads only rows that the teachers
    never see and its hypothesis depends on no private row, parallel composition gives
    ``max`` instead of the sum; this split is the safe default.)

    Parameters
    ----------
    epsilon_total : float
        The whole budget.
    fraction : float
        Share for the estimate, in (0, 1).
    """
    eps = check_epsilon(epsilon_total, "epsilon_total")
    f = check_probability(fraction, "fraction")
    return BudgetSplit(epsilon_estimate=f * eps, epsilon_labeling=(1.0 - f) * eps)
