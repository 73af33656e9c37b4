"""Inputs shared by the teachers and the student: tables, learners, seeds, workers.

Row counting and indexing of feature tables (DataFrame, 2-D ndarray or CSR matrix),
resolving a learner from its name, its public name, seeding every ``random_state`` of
an estimator, and the checks of ``n_jobs`` and progress callbacks used by
:mod:`core.ensemble.teachers`, :mod:`core.ensemble.teacher_ensemble` and
:mod:`core.ensemble.student`.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from sklearn.base import BaseEstimator

from core.errors import DataError, ParameterError

__all__ = [
    "ProgressCallback",
    "check_features",
    "check_n_jobs",
    "check_progress",
    "learner_name",
    "num_rows",
    "resolve_learner",
    "seed_estimator",
    "select_rows",
]

ProgressCallback = Callable[[int, int], Any]
"""A function ``progress(done, total)`` called as work finishes."""


def num_rows(X: Any) -> int:
    """Number of rows of a table (DataFrame, ndarray, sparse matrix or sequence).

    Parameters
    ----------
    X : array-like, sparse matrix or pandas.DataFrame
        A table of rows.

    Returns
    -------
    int
        ``X.shape[0]`` when ``X`` has a shape, else ``len(X)``.
    """
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) >= 1:
        return int(shape[0])
    return len(X)


def check_features(X: Any, what: str = "features") -> Any:
    """Return X as a DataFrame, a 2-D ndarray or a CSR matrix (row indexable).

    Parameters
    ----------
    X : array-like, sparse matrix or pandas.DataFrame
        A table of features (rows × columns).
    what : str, default "features"
        What the table holds, for the error message (e.g. "query rows").

    Returns
    -------
    pandas.DataFrame, numpy.ndarray or scipy.sparse.csr_matrix
        The same rows, indexable by :func:`select_rows`.

    Raises
    ------
    DataError
        When ``X`` is not two-dimensional.
    """
    if hasattr(X, "iloc"):
        if getattr(X, "ndim", 2) != 2:
            raise DataError(f"The {what} must be a table (rows × columns), not a single column.")
        return X
    try:
        import scipy.sparse as sp

        if sp.issparse(X):
            return X.tocsr()
    except ImportError:  # pragma: no cover - scipy is a dependency
        pass
    arr = np.asarray(X)
    if arr.ndim != 2:
        raise DataError(
            f"The {what} must be a 2-D table (rows × columns), got an array of shape {arr.shape}."
        )
    return arr


def select_rows(X: Any, index: Any) -> Any:
    """Rows of X (DataFrame, ndarray or CSR matrix) by integer array or slice.

    Parameters
    ----------
    X : pandas.DataFrame, numpy.ndarray or scipy.sparse.csr_matrix
        A table checked by :func:`check_features`.
    index : array-like of int or slice
        The rows to take (by position).

    Returns
    -------
    pandas.DataFrame, numpy.ndarray or scipy.sparse.csr_matrix
        The selected rows, of the same kind as ``X``.
    """
    if hasattr(X, "iloc"):
        return X.iloc[index]
    return X[index]


def learner_name(learner: Any) -> str:
    """A short, public name of a learner: its class (the last step of a pipeline).

    Parameters
    ----------
    learner : sklearn estimator or Pipeline
        The learner.

    Returns
    -------
    str
        The class name, or ``"Pipeline(StepA → StepB)"`` for a pipeline.
    """
    steps = getattr(learner, "steps", None)
    if steps:
        return f"{type(learner).__name__}({' → '.join(type(s[1]).__name__ for s in steps)})"
    return type(learner).__name__


def resolve_learner(learner: Any) -> BaseEstimator:
    """A learner from a name in :data:`core.ensemble.learners.LEARNERS` or an estimator.

    Parameters
    ----------
    learner : str or sklearn classifier or Pipeline
        A learner name (built with its defaults by
        :func:`core.ensemble.learners.make_learner`) or an estimator with ``fit``,
        ``predict`` and ``get_params``.

    Returns
    -------
    sklearn estimator
        The estimator (the given one, unchanged, when not a name).

    Raises
    ------
    ParameterError
        When ``learner`` is neither a known name nor a scikit-learn style classifier.
    """
    if isinstance(learner, str):
        from core.ensemble.learners import make_learner

        return make_learner(learner)
    if not (hasattr(learner, "fit") and hasattr(learner, "predict") and hasattr(learner, "get_params")):
        raise ParameterError(
            f"The learner must be a scikit-learn classifier or pipeline (with fit, predict and "
            f"get_params) or a name from core.ensemble.learners.LEARNERS, got {type(learner).__name__}."
        )
    return learner


def seed_estimator(estimator: BaseEstimator, seed: int) -> BaseEstimator:
    """Set every ``random_state`` parameter of ``estimator`` (nested ones included).

    Parameters
    ----------
    estimator : sklearn estimator
        Modified in place (call it on a clone).
    seed : int
        A seed in ``[0, 2**32)``; nested ``random_state`` parameters get distinct seeds
        derived from it.

    Returns
    -------
    estimator
        The same object, for chaining.
    """
    keys = sorted(
        key for key in estimator.get_params(deep=True) if key == "random_state" or key.endswith("__random_state")
    )
    if keys:
        states = np.random.SeedSequence(int(seed)).generate_state(len(keys))
        estimator.set_params(**{key: int(s) for key, s in zip(keys, states)})
    return estimator


def check_n_jobs(n_jobs: Any) -> int | None:
    """Check a number of joblib workers.

    Parameters
    ----------
    n_jobs : int or None
        None (the caller's joblib setting), a positive number of workers or a negative
        joblib count (-1 for all cores); not 0.

    Returns
    -------
    int or None
        ``n_jobs`` as an int, or None.

    Raises
    ------
    ParameterError
        When ``n_jobs`` is 0, not a whole number, or a bool.
    """
    if n_jobs is None:
        return None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or int(n_jobs) == 0:
        raise ParameterError(
            f"n_jobs must be None (the caller's joblib setting), a positive number of workers "
            f"or -1 for all cores, got {n_jobs!r}."
        )
    return int(n_jobs)


def check_progress(progress: Any) -> None:
    """Check a progress callback.

    Parameters
    ----------
    progress : callable or None
        A function ``progress(done, total)``, or None.

    Returns
    -------
    None

    Raises
    ------
    ParameterError
        When ``progress`` is neither callable nor None.
    """
    if progress is not None and not callable(progress):
        raise ParameterError("progress must be a function progress(done, total) or None.")
