"""Shared plumbing of the theory calculators: the learning settings, and (from
:mod:`core.validation`, where every layer finds them) the elementwise checks and the
scalar-or-array return convention.
"""

from __future__ import annotations

from core.errors import ParameterError
from core.validation import FloatOrArray, as_output, each_checked, nonnegative_array, positive_array, unit_array

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

SETTINGS = ("realizable", "agnostic")
"""Learning settings of the rate and solver functions."""


# ---------------------------------------------------------------------------------------
# helpers: elementwise validation through core.validation, and array plumbing
# ---------------------------------------------------------------------------------------


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
