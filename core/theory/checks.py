"""Shared plumbing of the theory calculators: elementwise validation through
:mod:`core.validation`, the learning settings, and the scalar-or-array return convention.
"""

from __future__ import annotations

from typing import Union

import numpy as np

from core.errors import ParameterError
from core.validation import check_real_array

__all__ = [
    "FloatOrArray",
    "SETTINGS",
    "each_checked",
    "positive_array",
    "nonnegative_array",
    "unit_array",
    "check_setting",
    "as_output",
]

FloatOrArray = Union[np.floating, np.ndarray]
"""Return annotation of the vectorized functions: a numpy scalar for scalar input, else an array."""

SETTINGS = ("realizable", "agnostic")
"""Learning settings of the rate and solver functions."""


# ---------------------------------------------------------------------------------------
# helpers: elementwise validation through core.validation, and array plumbing
# ---------------------------------------------------------------------------------------


def each_checked(check, values, name: str) -> np.ndarray:
    """Run a scalar ``core.validation`` check on every distinct element of ``values``.

    Parameters
    ----------
    check : callable
        A scalar check of :mod:`core.validation`, called as ``check(value, name=name)``.
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
    """Every element a finite number > 0 (counts, sizes, dimensions).

    Parameters
    ----------
    values : array_like
        A number or an array of numbers.
    name : str
        The parameter's name, for error messages.
    what : str
        What the parameter is, for error messages.

    Returns
    -------
    numpy.ndarray
        ``values`` as a float array.
    """
    return check_real_array(values, name, 0.0, low_open=True, what=what)


def nonnegative_array(values, name: str, what: str) -> np.ndarray:
    """Every element a finite number >= 0.

    Parameters
    ----------
    values : array_like
        A number or an array of numbers.
    name : str
        The parameter's name, for error messages.
    what : str
        What the parameter is, for error messages.

    Returns
    -------
    numpy.ndarray
        ``values`` as a float array.
    """
    return check_real_array(values, name, 0.0, what=what)


def unit_array(values, name: str, what: str) -> np.ndarray:
    """Elementwise ``0 <= x <= 1`` (error rates).

    Parameters
    ----------
    values : array_like
        A number or an array of numbers.
    name : str
        The parameter's name, for error messages.
    what : str
        What the parameter is, for error messages.

    Returns
    -------
    numpy.ndarray
        ``values`` as a float array.
    """
    return check_real_array(values, name, 0.0, 1.0, what=what)


def check_setting(setting: str, allowed=SETTINGS) -> str:
    """Check a learning setting.

    Parameters
    ----------
    setting : str
        The setting, one of ``allowed``.
    allowed : tuple of str, optional
        The settings accepted (default :data:`SETTINGS`).

    Returns
    -------
    str
        ``setting``.
    """
    if setting not in allowed:
        raise ParameterError(f"setting must be one of {', '.join(map(repr, allowed))}, got {setting!r}.")
    return setting


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
