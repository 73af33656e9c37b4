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
    "LedgerUnreachable",
    "SearchStopped",
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


class LedgerUnreachable(PrivateLabelLabError, RuntimeError):
    """A run cannot be charged to its ledger from here, so it is refused before it reads a row.

    An in-memory ledger lives in the memory of one process: a copy of it (unpickled in a
    worker process of scikit-learn's ``n_jobs``, a Dask worker, another Python, or after
    its original is gone) could only charge itself, and the original would never see the
    run.  Give the estimator a ledger store (``PrivacyLedger("name", store=path)``), whose
    charges land in the same file from every process, or run in one process
    (``n_jobs=1``)."""


class SearchStopped(BaseException):
    """A refusal (:class:`BudgetExhausted`, :class:`LedgerUnreachable`) raised inside
    scikit-learn's model selection, stopping the whole search.

    scikit-learn's searches and cross-validation turn an :class:`Exception` raised by a
    fit or a score into a NaN score and carry on when ``error_score`` is a number (its
    default); a refused run is no failed fit, so the estimator raises this instead, which
    derives from :class:`BaseException` (as :class:`KeyboardInterrupt` does) and stops the
    search in every process.  The refusal is its ``__cause__`` and :attr:`refusal`.
    ``PrivateEnsembleClassifier(..., on_refusal="raise")`` asks for the plain exception
    (then a numeric ``error_score`` scores the refused candidate as NaN and the search goes on).
    """

    def __init__(self, message: str, refusal: BaseException | None = None) -> None:
        super().__init__(message)
        self.refusal = refusal


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
