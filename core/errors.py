"""Exception types of Private Label Lab.

Every error raised on bad input derives from :class:`PrivateLabelLabError`, and its
message says what is wrong and what to do about it, in a sentence a user can act on.
The app shows the message in place; the command line prints it on one line.
"""

from __future__ import annotations

__all__ = [
    "PrivateLabelLabError",
    "DataError",
    "SchemaError",
    "ParameterError",
    "BudgetExhausted",
    "NotFittedError",
    "ConvergenceError",
    "PrivacyWarning",
]


class PrivateLabelLabError(Exception):
    """Base class of every error the library raises on purpose."""


class DataError(PrivateLabelLabError, ValueError):
    """A data file or table cannot be used as given (empty, unreadable, bad values...)."""


class SchemaError(DataError):
    """A public (query) table does not match the private table's feature schema."""


class ParameterError(PrivateLabelLabError, ValueError):
    """A privacy or learning parameter is outside its valid range."""


class BudgetExhausted(PrivateLabelLabError, RuntimeError):
    """The privacy budget is spent: the mechanism halted and answers no further query."""


class NotFittedError(PrivateLabelLabError, AttributeError):
    """An estimator was used before ``fit``."""


class ConvergenceError(PrivateLabelLabError, RuntimeError):
    """An optimisation whose privacy proof needs its exact solution did not reach it: nothing is released."""


class PrivacyWarning(UserWarning):
    """Something about privacy the user should know: settings that are valid but weaken the
    guarantee (a δ at or above 1/n, a Dask worker that may spill private data to disk), or a
    private run that answered nothing, halted early or failed its certified test.

    The one warning class of the library (``core.PrivacyWarning`` is this class): a filter
    on it catches every such warning."""
