"""Statistics of the audit: one-sided Clopper–Pearson bounds, the ε lower bound of an
event, and the hashing of output rows to one int64 per trial.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from core.errors import ParameterError

__all__ = [
    "clopper_pearson",
    "epsilon_lower_bound",
    "hash_rows",
]


# ----------------------------------------------------------------------------- statistics


def clopper_pearson(successes, n: int, alpha: float, side: str) -> np.ndarray:
    """One-sided Clopper–Pearson bound for a binomial proportion.

    Parameters
    ----------
    successes : int or array of int
        Number of trials in the event.
    n : int
        Number of trials.
    alpha : float
        One-sided error level: the true proportion is below the ``"lower"`` bound (or
        above the ``"upper"`` bound) with probability at most ``alpha``.
    side : {"lower", "upper"}

    Returns
    -------
    numpy.ndarray of float
    """
    x = np.asarray(successes, dtype=float)
    if side == "lower":
        with np.errstate(invalid="ignore"):
            out = stats.beta.ppf(alpha, np.maximum(x, 1.0), np.maximum(n - x + 1.0, 1.0))
        return np.where(x <= 0, 0.0, out)
    if side == "upper":
        with np.errstate(invalid="ignore"):
            out = stats.beta.ppf(1.0 - alpha, x + 1.0, np.maximum(n - x, 1.0))
        return np.where(x >= n, 1.0, out)
    raise ParameterError(f"side must be 'lower' or 'upper', got {side!r}.")


def epsilon_lower_bound(x_in, n_in: int, x_out, n_out: int, alpha: float, delta: float = 0.0) -> np.ndarray:
    """``log((p_lower - δ) / q_upper)`` from counts, ``-inf`` where not positive-definite.

    ``x_in`` of ``n_in`` trials of the first input fell in the event, ``x_out`` of
    ``n_out`` trials of the second; each one-sided bound is at level ``alpha``.
    """
    p_low = clopper_pearson(x_in, n_in, alpha, "lower")
    q_up = clopper_pearson(x_out, n_out, alpha, "upper")
    num = p_low - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(num > 0, np.log(np.maximum(num, 1e-300) / q_up), -np.inf)


# ----------------------------------------------------------------------------- outputs

_HASH_MULT = np.uint64(0x9E3779B97F4A7C15)
_HASH_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_HASH_MIX2 = np.uint64(0x94D049BB133111EB)


def _mix(x: np.ndarray) -> np.ndarray:
    # splitmix64 finaliser (uint64 arithmetic wraps modulo 2**64)
    x = x ^ (x >> np.uint64(30))
    x = x * _HASH_MIX1
    x = x ^ (x >> np.uint64(27))
    x = x * _HASH_MIX2
    return x ^ (x >> np.uint64(31))


def hash_rows(outputs) -> np.ndarray:
    """Hash each row of a 2-D output array to one int64 (a deterministic function).

    Float rows are hashed through their bit patterns (all NaNs map to one value), so
    equal released vectors give equal hashes.  Collisions are astronomically rare and
    would only merge two outputs into one event, which keeps the audit valid.
    """
    arr = np.asarray(outputs)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ParameterError(f"Mechanism outputs must be 1-D or 2-D, got shape {arr.shape}.")
    if np.issubdtype(arr.dtype, np.floating):
        f = np.where(np.isnan(arr), np.nan, arr.astype(np.float64) + 0.0)  # -0.0 -> 0.0
        words = f.view(np.uint64)
    else:
        words = arr.astype(np.int64).view(np.uint64)
    with np.errstate(over="ignore"):
        h = np.full(arr.shape[0], np.uint64(arr.shape[1]), dtype=np.uint64)
        for j in range(arr.shape[1]):
            h = _mix(h * _HASH_MULT + words[:, j] + np.uint64(j))
    return h.view(np.int64)
