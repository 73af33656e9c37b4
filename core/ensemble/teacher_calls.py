"""One teacher asked on one block of rows, and the teacher of a one-class chunk.

The lowest layer of the ensemble: :class:`ConstantClassifier` (the teacher of a chunk
whose rows all share one class) and the checked calls of one teacher's ``predict`` and
``predict_proba`` on a block, used by :mod:`core.ensemble.teacher_ensemble` (the
per-teacher path) and :mod:`core.ensemble.voter` (the encode-once path) alike.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from core.ensemble.inputs import num_rows
from core.errors import DataError

__all__ = ["ConstantClassifier"]


class ConstantClassifier(ClassifierMixin, BaseEstimator):
    """A classifier that always predicts the one class it was fitted on.

    :func:`train_teachers` uses it for a chunk whose rows all share one class, where most
    learners refuse to fit.  It follows scikit-learn's estimator conventions (``fit``
    returns self; ``classes_``, ``predict``, ``predict_proba``).  Fitted on several
    classes, it predicts the most frequent one.
    """

    def fit(self, X: Any, y: Any) -> "ConstantClassifier":
        y = np.asarray(y)
        if y.shape[0] == 0:
            raise DataError("ConstantClassifier needs at least one row to fit.")
        classes, counts = np.unique(y, return_counts=True)
        self.classes_ = classes
        self.constant_ = classes[int(np.argmax(counts))]
        shape = getattr(X, "shape", None)
        if shape is not None and len(shape) == 2:
            self.n_features_in_ = int(shape[1])
        return self

    def predict(self, X: Any) -> np.ndarray:
        return np.full(num_rows(X), self.constant_, dtype=np.asarray(self.classes_).dtype)

    def predict_proba(self, X: Any) -> np.ndarray:
        proba = np.zeros((num_rows(X), len(self.classes_)))
        proba[:, int(np.searchsorted(self.classes_, self.constant_))] = 1.0
        return proba


def _is_sparse(X: Any) -> bool:
    try:
        import scipy.sparse as sp
    except ImportError:  # pragma: no cover - scipy is a dependency
        return False
    return sp.issparse(X)


def _predict_teacher(teacher: Any, j: int, Xb: Any, n_classes: int, name: str) -> np.ndarray:
    """Teacher ``j``'s predicted class ids on a block, checked to lie in ``0..n_classes-1``."""
    try:
        pred = np.asarray(teacher.predict(Xb))
    except Exception as exc:
        raise DataError(
            f"Teacher {j} ({name}) could not predict the query rows: "
            f"{type(exc).__name__}: {exc}. The query rows must have the private table's columns."
        ) from None
    if pred.dtype.kind not in "iu":
        as_int = pred.astype(np.int64)
        if np.any(as_int != pred):
            raise DataError(f"Teacher {j} ({name}) predicted values that are not class ids.")
        pred = as_int
    pred = pred.astype(np.intp, copy=False).ravel()
    if pred.size and (pred.min() < 0 or pred.max() >= n_classes):
        raise DataError(f"Teacher {j} ({name}) predicted a class outside 0..{n_classes - 1}.")
    return pred


def _score_teacher(teacher: Any, classes: np.ndarray, j: int, Xb: Any, name: str) -> np.ndarray:
    """Teacher ``j``'s probability of class 1 on a block (0 or 1 for a one-class teacher)."""
    b = num_rows(Xb)
    if classes.size == 1:
        return np.full(b, float(classes[0] == 1))
    try:
        proba = np.asarray(teacher.predict_proba(Xb), dtype=float)
    except Exception as exc:
        raise DataError(
            f"Teacher {j} ({name}) could not score the query rows: {type(exc).__name__}: {exc}."
        ) from None
    where = np.flatnonzero(classes == 1)
    return proba[:, where[0]] if where.size else np.zeros(b)
