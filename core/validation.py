"""The one validation path for parameters.

Every public function of the library checks its privacy and learning parameters
through these helpers, so that a bad value gives the same clear
:class:`core.errors.ParameterError` wherever it enters (library, app or command line).
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real
from typing import Union

import numpy as np

from core.errors import DataError, ParameterError, PrivacyWarning

__all__ = [
    "check_epsilon",
    "check_delta",
    "check_beta",
    "check_gamma",
    "check_T",
    "check_m",
    "check_eta",
    "check_k",
    "check_counts",
    "check_scores",
    "check_probability",
    "check_integer",
    "check_real",
    "check_real_array",
    "check_delta_array",
    "FloatOrArray",
    "each_checked",
    "positive_array",
    "nonnegative_array",
    "unit_array",
    "as_output",
]


def _real(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (Real, np.floating, np.integer)):
        raise ParameterError(f"{name} must be a number, got {value!r}.")
    return float(value)


def _positive(value, name: str, hint: str) -> float:
    """A finite number > 0, or an error that says so and then ``hint``."""
    v = _real(value, name)
    if not math.isfinite(v) or v <= 0:
        raise ParameterError(f"{name} must be a finite number greater than 0 (got {value!r}); {hint}")
    return v


def _integer(value, name: str) -> int:
    if isinstance(value, bool):
        raise ParameterError(f"{name} must be a whole number, got {value!r}.")
    if isinstance(value, (Integral, np.integer)):
        return int(value)
    if isinstance(value, (Real, np.floating)) and float(value).is_integer():
        return int(value)
    raise ParameterError(f"{name} must be a whole number, got {value!r}.")


def check_integer(value, name: str, minimum: int | None = None, maximum: int | None = None) -> int:
    """Check a whole number (an int, or a float with no fractional part) within bounds.

    Used for sizes and counts that are not privacy parameters (rows, dimensions, trials).
    """
    v = _integer(value, name)
    if minimum is not None and v < minimum:
        raise ParameterError(f"{name} must be at least {minimum}, got {value!r}.")
    if maximum is not None and v > maximum:
        raise ParameterError(f"{name} must be at most {maximum}, got {value!r}.")
    return v


def _interval(low: float, high: float, low_open: bool, high_open: bool) -> str:
    return f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"


def check_real(
    value,
    name: str,
    low: float = -math.inf,
    high: float = math.inf,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Check a finite real number in the interval from ``low`` to ``high``.

    ``low_open`` / ``high_open`` exclude the end points.
    """
    v = _real(value, name)
    if (
        not math.isfinite(v)
        or v < low
        or v > high
        or (low_open and v <= low)
        or (high_open and v >= high)
    ):
        raise ParameterError(
            f"{name} must be a finite number in {_interval(low, high, low_open, high_open)}, got {value!r}."
        )
    return v


def check_real_array(
    values,
    name: str,
    low: float = -math.inf,
    high: float = math.inf,
    *,
    low_open: bool = False,
    what: str | None = None,
) -> np.ndarray:
    """Check a number or non-empty array of finite numbers, all in ``[low, high]``.

    ``low_open`` excludes ``low``.  ``what`` names the quantity in the message (e.g.
    "number of queries").  Returns a float array of the same shape.
    """
    label = f"{name} ({what})" if what else name
    arr = np.asarray(values)
    if arr.dtype == object or not np.issubdtype(arr.dtype, np.number) or arr.size == 0:
        raise ParameterError(f"{label} must be a number or a non-empty array of numbers, got {values!r}.")
    arr = arr.astype(float)
    bad = ~np.isfinite(arr) | (arr < low) | (arr > high)
    if low_open:
        bad |= arr <= low
    if np.any(bad):
        if math.isinf(high) and not math.isinf(low):
            rule = f"greater than {low:g}" if low_open else f"at least {low:g}"
        else:
            rule = f"in {_interval(low, high, low_open, False)}"
        raise ParameterError(f"{label} must be finite and {rule}, got {values!r}.")
    return arr


def check_epsilon(epsilon, name: str = "epsilon") -> float:
    """Check a privacy parameter ε: a finite number > 0."""
    return _positive(epsilon, name, "smaller values mean stronger privacy, typical choices are 0.1 to 10.")


def check_probability(value, name: str) -> float:
    """Check a number strictly between 0 and 1."""
    v = _real(value, name)
    if not (0.0 < v < 1.0):
        raise ParameterError(f"{name} must lie strictly between 0 and 1, got {value!r}.")
    return v


def check_delta(delta, n: int | None = None, name: str = "delta") -> float:
    """Check δ ∈ (0, 1); warn with :class:`PrivacyWarning` when ``δ >= 1/n``.

    A δ of order 1/n allows a mechanism to publish one private row outright, so the
    guarantee is then weak; the usual choice is δ well below 1/n.
    """
    d = _real(delta, name)
    if not (0.0 < d < 1.0):
        raise ParameterError(
            f"{name} must lie strictly between 0 and 1 (got {delta!r}); "
            "choose it well below 1/n, e.g. 1e-5 or 1e-6."
        )
    if n is not None and n > 0 and d >= 1.0 / n:
        warnings.warn(
            f"{name} = {d:g} is at least 1/n = {1.0 / n:g} for n = {n} private rows: "
            "such a delta allows one private row to be published outright; choose a smaller delta.",
            PrivacyWarning,
            stacklevel=2,
        )
    return d


def check_beta(beta, name: str = "beta") -> float:
    """Check a failure probability β ∈ (0, 1)."""
    return check_probability(beta, name)


def check_gamma(gamma, name: str = "gamma") -> float:
    """Check PATE's noise parameter γ: a finite number > 0 (noise ``Lap(1/γ)``)."""
    return _positive(gamma, name, "PATE's noise is Lap(1/gamma), e.g. gamma = 0.05.")


def check_T(T, name: str = "T") -> int:
    """Check the cutoff T (maximum number of ⊥ answers): a whole number ≥ 1."""
    t = _integer(T, name)
    if t < 1:
        raise ParameterError(
            f"{name} (the maximum number of abstentions) must be at least 1, got {T!r}."
        )
    return t


def check_m(m, name: str = "m") -> int:
    """Check a number of queries m: a whole number ≥ 1."""
    v = _integer(m, name)
    if v < 1:
        raise ParameterError(f"{name} (the number of public queries) must be at least 1, got {m!r}.")
    return v


def check_eta(eta, name: str = "eta") -> tuple[float, int]:
    """Check the soft-label precision η: ``0 < η < 1`` with ``1/η`` a whole number.

    Returns
    -------
    (eta, n_bins) : (float, int)
        η and the number of bins ``1/η`` of ``P_η``.
    """
    e = _real(eta, name)
    if not (0.0 < e < 1.0):  # also rejects nan and inf
        raise ParameterError(f"{name} must lie strictly between 0 and 1, got {eta!r}.")
    bins = round(1.0 / e)
    if bins < 2 or abs(bins * e - 1.0) > 1e-9:
        raise ParameterError(
            f"{name} = {eta!r}: 1/{name} must be a whole number of bins of at least 2 "
            "(e.g. 0.5, 0.25, 0.2, 0.1, 0.05)."
        )
    return 1.0 / bins, int(bins)


def _each(of: str) -> str:
    return "rows" if of == "private rows" else of


def check_k(k, n_rows: int | None = None, name: str = "k", *, of: str = "private rows") -> int:
    """Check the number of teachers k against the number of private rows (or persons).

    Each teacher is fitted on a chunk of about ``n_rows / k`` rows, so ``k`` must be
    at least 2 and leave every chunk at least two rows.  With a privacy unit, chunks hold
    whole persons: ``n_rows`` is then the number of persons and ``of="persons"``.
    """
    v = _integer(k, name)
    if v < 2:
        raise ParameterError(f"{name} (the number of teachers) must be at least 2, got {k!r}.")
    if n_rows is not None:
        if v > n_rows:
            raise ParameterError(
                f"{name} = {v} teachers is more than the {n_rows} {of}; "
                f"choose k of at most {max(2, n_rows // 2)} so that each teacher sees at least two {_each(of)}."
            )
        if n_rows // v < 2:
            raise ParameterError(
                f"{name} = {v} teachers leaves some chunk of the {n_rows} {of} with fewer "
                f"than two {_each(of)}; choose k of at most {n_rows // 2}."
            )
    return v


def check_counts(counts, *, equal_totals: bool = True) -> np.ndarray:
    """Check a vote-count matrix: 2-D, non-negative integers, equal row sums.

    ``equal_totals=False`` skips the row-sum check (histograms over the shifted
    soft-label bins drop the outer half-bins, so their rows need not sum to k).

    Returns
    -------
    numpy.ndarray of int64, shape (m, n_classes)
    """
    arr = np.asarray(counts)
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise DataError(
            f"Vote counts must be a 2-D array (queries × classes) with at least one query, got shape {arr.shape}."
        )
    if not np.issubdtype(arr.dtype, np.integer):
        if not np.issubdtype(arr.dtype, np.floating) or not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise DataError("Vote counts must be whole numbers (number of teachers voting for each class).")
    arr = arr.astype(np.int64, copy=False)
    if np.any(arr < 0):
        raise DataError("Vote counts must be non-negative.")
    totals = arr.sum(axis=1)
    if equal_totals and np.any(totals != totals[0]):
        raise DataError("Every query must have the same number of votes (one per teacher).")
    return arr


def check_scores(scores) -> np.ndarray:
    """Check a teacher-score matrix: 2-D (queries × teachers), finite, in [0, 1]."""
    arr = np.asarray(scores, dtype=float)
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise DataError(
            f"Teacher scores must be a 2-D array (queries × teachers), got shape {arr.shape}."
        )
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr > 1):
        raise DataError("Teacher scores must be probabilities in [0, 1].")
    return arr


def check_delta_array(values, name: str) -> np.ndarray:
    """Elementwise ``0 < x < 1`` (δ of the vectorized calculators).

    Parameters
    ----------
    values : float or array-like of float
        The values to check.
    name : str
        The parameter's name, for the error message.

    Returns
    -------
    numpy.ndarray of float
        ``values`` as a float array of the same shape.

    Raises
    ------
    ParameterError
        When a value is not a finite number strictly between 0 and 1.
    """
    arr = check_real_array(values, name)
    if np.any((arr <= 0) | (arr >= 1)):
        raise ParameterError(f"{name} must lie strictly between 0 and 1, got {values!r}.")
    return arr


# ---------------------------------------------------------------------------------------
# Elementwise checks of vectorized functions, and their scalar-or-array output
# ---------------------------------------------------------------------------------------


FloatOrArray = Union[np.floating, np.ndarray]
"""Return annotation of the vectorized functions: a numpy scalar for scalar input, else an array."""


def each_checked(check, values, name: str) -> np.ndarray:
    """Run a scalar check of this module on every distinct element of ``values``.

    Parameters
    ----------
    check : callable
        A scalar check, called as ``check(value, name=name)``.
    values : array_like
        A number or an array of numbers.
    name : str
        The parameter's name, for error messages.

    Returns
    -------
    numpy.ndarray
        ``values`` as a float array.
    """
    arr = np.asarray(values)
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.bool_)
    ):
        raise ParameterError(f"{name} must be a number or an array of numbers, got {values!r}.")
    if arr.size == 0:
        raise ParameterError(f"{name} must not be empty.")
    for v in np.unique(arr.ravel()):
        check(v.item(), name=name)
    return arr.astype(float)


def positive_array(values, name: str, what: str) -> np.ndarray:
    """``values`` (a number or an array) as floats, every one finite and > 0 (counts, sizes).

    ``name`` and ``what`` (what the parameter is) word the error; the same holds for
    :func:`nonnegative_array` (>= 0) and :func:`unit_array` (in [0, 1], error rates).
    """
    return check_real_array(values, name, 0.0, low_open=True, what=what)


def nonnegative_array(values, name: str, what: str) -> np.ndarray:
    """``values`` as floats, every one finite and >= 0 (see :func:`positive_array`)."""
    return check_real_array(values, name, 0.0, what=what)


def unit_array(values, name: str, what: str) -> np.ndarray:
    """``values`` as floats, every one in [0, 1] (see :func:`positive_array`)."""
    return check_real_array(values, name, 0.0, 1.0, what=what)


def as_output(x):
    """Return an array, or a numpy scalar for 0-d results.

    Parameters
    ----------
    x : array_like
        The result.

    Returns
    -------
    numpy.floating or numpy.ndarray
        ``x`` as float: a numpy scalar if 0-d, else an array.
    """
    x = np.asarray(x, dtype=float)
    return x[()] if x.ndim == 0 else x
