"""Teachers: one classifier per disjoint chunk of the private data (DESIGN §1).

:func:`train_teachers` splits the ``n`` private rows into ``k`` disjoint chunks and fits
a clone of the learner on each.  The split is **data-independent**: a uniformly random
permutation of the row indices (drawn from ``rng``), cut into ``k`` near-equal
consecutive slices by :func:`numpy.array_split` (sizes ``floor(n/k)`` or ``ceil(n/k)``).
Which chunk a row lands in depends only on its position and the random permutation,
never on its values.  This is what the privacy analysis relies on: neighbouring datasets
differ by *replacing* one row (``n`` is public), the replaced row keeps its position and
hence its chunk, so exactly one teacher can change and every query's vote-count vector
moves by at most one vote.  (Under add/remove adjacency slicing a permutation would move
rows between chunks; the library's guarantees are stated for replace-one.)

The fitted teachers hold parameters derived from the private data: a
:class:`TeacherEnsemble` keeps them in memory only and the library never writes them to
disk.  Its per-teacher outputs (:meth:`TeacherEnsemble.predictions`,
:meth:`TeacherEnsemble.vote_counts`, :meth:`TeacherEnsemble.scores`) are the *input* of
the private aggregators, not private outputs themselves: they are non-private and must
never be shown outside a "non-private diagnostics" heading or exported.

Training and vote computation run through :class:`joblib.Parallel` and follow the
caller's ``joblib.parallel_config``; :func:`core.ensemble.distributed.joblib_backend` chooses a
backend by name, or a Dask cluster by its scheduler address, for both at once.  Process
and Dask workers receive private chunks and fitted teachers in memory only (see
:mod:`core.ensemble.distributed` for Dask's own spilling to disk).
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from typing import Any, Callable, Iterable, Sequence

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from threadpoolctl import threadpool_limits

from core.errors import DataError, ParameterError
from core.noise import RNGLike, check_rng
from core.validation import check_k

__all__ = ["ConstantClassifier", "TeacherEnsemble", "train_teachers", "BLOCK_BYTES", "default_block_size"]

BLOCK_BYTES = 32 * 2**20
"""Target size of one block of query features (float64) predicted at once."""
_MIN_BLOCK, _MAX_BLOCK = 1_024, 65_536


def default_block_size(n_features: int) -> int:
    """Rows per prediction block: about :data:`BLOCK_BYTES` of features, 1,024 to 65,536 rows.

    Every teacher's ``predict`` is called once per block, and each call has a fixed cost
    (input validation), so blocks should be large; the block's features and the
    learners' per-row intermediates (probabilities, hidden units, copies made by a
    pipeline's preprocessing) bound the memory, so they should not be huge.
    """
    rows = BLOCK_BYTES // (8 * max(1, int(n_features)))
    return int(min(_MAX_BLOCK, max(_MIN_BLOCK, rows)))

ProgressCallback = Callable[[int, int], Any]


# --------------------------------------------------------------------------- helpers


def _num_rows(X: Any) -> int:
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) >= 1:
        return int(shape[0])
    return len(X)


def _check_X(X: Any, what: str = "features") -> Any:
    """Return X as a DataFrame, a 2-D ndarray or a CSR matrix (row indexable)."""
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


def _rows(X: Any, index: Any) -> Any:
    """Rows of X (DataFrame, ndarray or CSR matrix) by integer array or slice."""
    if hasattr(X, "iloc"):
        return X.iloc[index]
    return X[index]


def _check_labels(y: Any, n_rows: int, n_classes: int | None) -> tuple[np.ndarray, int]:
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise DataError(f"The labels must be one column (one class id per row), got shape {arr.shape}.")
    if arr.shape[0] != n_rows:
        raise DataError(
            f"The features have {n_rows} rows but the labels have {arr.shape[0]}; give one label per row."
        )
    if arr.dtype.kind == "b":
        arr = arr.astype(np.int64)
    elif arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise DataError("The labels must be class ids 0, 1, ..., C-1 (whole numbers, no missing values).")
        arr = arr.astype(np.int64)
    elif arr.dtype.kind not in "iu":
        raise DataError(
            "The labels must be class ids 0, 1, ..., C-1; encode text labels first "
            "(core.data.load_table does this and keeps the class names)."
        )
    arr = arr.astype(np.int64, copy=False)
    if arr.size and arr.min() < 0:
        raise DataError("The labels must be class ids 0, 1, ..., C-1; found a negative label.")
    top = int(arr.max()) + 1 if arr.size else 0
    if n_classes is None:
        n_classes = top
    else:
        if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)):
            raise ParameterError(f"n_classes must be a whole number, got {n_classes!r}.")
        n_classes = int(n_classes)
        if n_classes < top:
            raise ParameterError(
                f"n_classes = {n_classes} but the labels go up to class {top - 1}; "
                f"leave n_classes unset or give at least {top}."
            )
    if n_classes < 2:
        raise DataError(
            "The private labels hold a single class; a classifier needs at least two classes."
        )
    return arr, n_classes


def _learner_name(learner: Any) -> str:
    """A short, public name of a learner: its class (the last step of a pipeline)."""
    steps = getattr(learner, "steps", None)
    if steps:
        return f"{type(learner).__name__}({' → '.join(type(s[1]).__name__ for s in steps)})"
    return type(learner).__name__


def _resolve_learner(learner: Any) -> BaseEstimator:
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
        return np.full(_num_rows(X), self.constant_, dtype=np.asarray(self.classes_).dtype)

    def predict_proba(self, X: Any) -> np.ndarray:
        proba = np.zeros((_num_rows(X), len(self.classes_)))
        proba[:, int(np.searchsorted(self.classes_, self.constant_))] = 1.0
        return proba


def _fit_teacher(
    index: int, model: BaseEstimator, X: Any, y: np.ndarray, seed: int, name: str
) -> tuple[int, BaseEstimator, np.ndarray, list[tuple[type, str]]]:
    """Fit one teacher (runs in a joblib worker).  Returns its index for reordering."""
    present = np.unique(y)
    caught: list[warnings.WarningMessage] = []
    if present.size == 1:
        model = ConstantClassifier().fit(X, y)
    else:
        seed_estimator(model, seed)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                model.fit(X, y)
            except Exception as exc:  # any learner failure becomes one clear error
                raise DataError(
                    f"Teacher {index} ({name}) could not be fitted on its chunk of {len(y)} "
                    f"private rows: {type(exc).__name__}: {exc}"
                ) from None
    classes = getattr(model, "classes_", None)
    classes = present if classes is None else np.asarray(classes)
    if classes.dtype.kind not in "iu":
        try:
            as_int = classes.astype(np.int64)
        except (TypeError, ValueError):
            as_int = None
        if as_int is None or np.any(as_int != classes):
            raise DataError(
                f"Teacher {index} ({name}) reports classes {classes[:5]!r}, not class ids; "
                "the learner must keep the integer labels it was given."
            )
        classes = as_int
    seen = sorted({(w.category, str(w.message).splitlines()[0] if str(w.message) else "") for w in caught})
    return index, model, classes.astype(np.int64), seen


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
    b = _num_rows(Xb)
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


def _group_output(
    kind: str,
    first: int,
    teachers: Sequence[Any],
    classes: Sequence[np.ndarray],
    n_classes: int,
    name: str,
    Xb: Any,
) -> np.ndarray:
    """One group of teachers on one block of query rows (runs in a joblib worker).

    ``kind`` is ``"counts"`` (votes per class, int32 ``(b, C)``), ``"predictions"``
    (int32 ``(b, len(teachers))``) or ``"scores"`` (float ``(b, len(teachers))``);
    ``first`` is the index of the group's first teacher, for error messages.  A
    module-level function of its arguments only, so a process or Dask worker receives
    just this group's teachers and this block.
    """
    b = _num_rows(Xb)
    if kind == "counts":
        out = np.zeros((b, n_classes), dtype=np.int32)
        rows = np.arange(b)
        for offset, teacher in enumerate(teachers):
            # each row appears once per teacher, so the fancy-index increment is exact
            out[rows, _predict_teacher(teacher, first + offset, Xb, n_classes, name)] += 1
        return out
    if kind == "predictions":
        cols = [_predict_teacher(t, first + i, Xb, n_classes, name) for i, t in enumerate(teachers)]
        return np.stack(cols, axis=1).astype(np.int32, copy=False)
    if kind == "scores":
        cols = [_score_teacher(t, c, first + i, Xb, name) for i, (t, c) in enumerate(zip(teachers, classes))]
        return np.clip(np.stack(cols, axis=1), 0.0, 1.0)
    raise ValueError(f"unknown output kind {kind!r}")  # pragma: no cover - internal


def _run_parallel(
    tasks: Callable[[], Iterable[Any]], total: int, n_jobs: int | None, progress: ProgressCallback | None
) -> list[Any]:
    """Run delayed tasks with joblib, calling ``progress(done, total)`` as they finish.

    ``max_nbytes=None``: joblib's process backends would otherwise dump arguments over
    1 MB (private chunks) to a memory-mapped file in a temporary folder, which may be on
    disk; here they are pickled to the workers' memory instead.
    """
    results: list[Any] = []
    try:
        parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered", max_nbytes=None)
    except ValueError as exc:  # a backend without result generators: fall back to batches
        if "return_as" not in str(exc):
            raise
        parallel = None
    if parallel is not None:
        for result in parallel(tasks()):
            results.append(result)
            if progress is not None:
                progress(len(results), total)
        return results
    workers = max(1, effective_n_jobs(n_jobs))
    batch = max(2 * workers, math.ceil(total / 20))
    iterator = iter(tasks())
    with Parallel(n_jobs=n_jobs, max_nbytes=None) as parallel_list:
        while len(results) < total:
            chunk = [task for _, task in zip(range(batch), iterator)]
            if not chunk:
                break
            results.extend(parallel_list(chunk))
            if progress is not None:
                progress(len(results), total)
    return results


def _check_n_jobs(n_jobs: Any) -> int | None:
    if n_jobs is None:
        return None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or int(n_jobs) == 0:
        raise ParameterError(
            f"n_jobs must be None (the caller's joblib setting), a positive number of workers "
            f"or -1 for all cores, got {n_jobs!r}."
        )
    return int(n_jobs)


def _check_progress(progress: Any) -> None:
    if progress is not None and not callable(progress):
        raise ParameterError("progress must be a function progress(done, total) or None.")


# --------------------------------------------------------------------------- ensemble


class TeacherEnsemble:
    """``k`` teachers fitted on disjoint chunks of the private data.

    Built by :func:`train_teachers`.  The fitted teachers are private (they are derived
    from the private rows): they live in memory only.  Every method here returns
    *non-private* per-teacher quantities meant as input to the private aggregators of
    :mod:`core.mechanisms`; never show them outside a non-private diagnostics heading
    and never export them.

    Attributes
    ----------
    k : int
        Number of teachers.
    n_classes : int
        Number of classes C; teachers vote on class ids ``0..C-1``.
    chunk_sizes : numpy.ndarray of int64, shape (k,)
        Rows in each teacher's chunk (all ``floor(n/k)`` or ``ceil(n/k)``).
    n_rows : int
        Number of private rows ``n``.
    learner : sklearn estimator
        The unfitted template the teachers were cloned from.
    learner_name : str
        A short public description of the learner (its class names).
    n_jobs : int or None
        Workers for vote computation (:func:`train_teachers` sets its own ``n_jobs``);
        None follows the caller's ``joblib.parallel_config`` (sequential when there is
        none).  The teachers are split into one contiguous group per worker; prediction
        prefers threads, which share the fitted teachers, unless the configuration names
        a backend: under processes or a Dask cluster
        (:func:`core.ensemble.distributed.joblib_backend`) each block of query rows is sent with
        one group of teachers to each worker.  The results are identical either way.
    block_size : int or None
        Default number of query rows predicted at once; None (default) picks
        :func:`default_block_size` from the number of feature columns.
    """

    def __init__(
        self,
        teachers: Sequence[BaseEstimator],
        classes: Sequence[np.ndarray],
        n_classes: int,
        chunk_sizes: np.ndarray,
        learner: BaseEstimator,
        *,
        n_jobs: int | None = None,
        block_size: int | None = None,
    ) -> None:
        if len(teachers) != len(classes) or len(teachers) != len(chunk_sizes):
            raise ParameterError("teachers, classes and chunk_sizes must have one entry per teacher.")
        self._teachers = list(teachers)
        self._classes = [np.asarray(c, dtype=np.int64) for c in classes]
        self.n_classes = int(n_classes)
        self.chunk_sizes = np.asarray(chunk_sizes, dtype=np.int64)
        self.learner = learner
        self.learner_name = _learner_name(learner)
        self.n_jobs = _check_n_jobs(n_jobs)
        self.block_size = None if block_size is None else self._check_block_size(block_size)

    # -- basic facts -------------------------------------------------------------------

    @property
    def k(self) -> int:
        """Number of teachers."""
        return len(self._teachers)

    @property
    def n_rows(self) -> int:
        """Number of private rows the ensemble was trained on."""
        return int(self.chunk_sizes.sum())

    @property
    def teachers(self) -> list[BaseEstimator]:
        """The fitted teachers (private: derived from the private data; memory only)."""
        return list(self._teachers)

    @property
    def n_constant(self) -> int:
        """How many teachers saw a single class and therefore always predict it."""
        return sum(isinstance(t, ConstantClassifier) for t in self._teachers)

    def __len__(self) -> int:
        return self.k

    def __repr__(self) -> str:
        return (
            f"TeacherEnsemble(k={self.k}, n_classes={self.n_classes}, learner={self.learner_name}, "
            f"chunk sizes {int(self.chunk_sizes.min())}-{int(self.chunk_sizes.max())})"
        )

    # -- internals ---------------------------------------------------------------------

    @staticmethod
    def _check_block_size(block_size: Any) -> int:
        if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size < 1:
            raise ParameterError(f"block_size must be a whole number of rows of at least 1, got {block_size!r}.")
        return int(block_size)

    def _blocks(self, X: Any, block_size: int | None) -> Iterable[tuple[int, int, Any]]:
        if block_size is not None:
            size = self._check_block_size(block_size)
        elif self.block_size is not None:
            size = self.block_size
        else:
            shape = getattr(X, "shape", None)
            size = default_block_size(shape[1] if shape is not None and len(shape) == 2 else 1)
        m = _num_rows(X)
        for start in range(0, m, size):
            stop = min(m, start + size)
            yield start, stop, _rows(X, slice(start, stop))

    def _groups(self) -> list[range]:
        """Split the teachers into contiguous groups, one per prediction worker.

        The number of workers is ``joblib.effective_n_jobs(self.n_jobs)``: with
        ``n_jobs=None`` that follows the caller's ``joblib.parallel_config`` (one group
        when there is none; every worker thread of the cluster under Dask).
        """
        workers = max(1, effective_n_jobs(self.n_jobs))
        if workers == 1:
            return [range(self.k)]
        bounds = np.linspace(0, self.k, min(workers, self.k) + 1).astype(int)
        return [range(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]

    def _map_groups(self, kind: str, Xb: Any, groups: list[range]) -> list[np.ndarray]:
        """``kind`` output of every group on block ``Xb``, in group order.

        One group runs here; several run through :class:`joblib.Parallel`, preferring
        threads (which share the fitted teachers) unless the caller's
        ``joblib.parallel_config`` names a backend, e.g. processes or a Dask cluster
        (each task then receives its group's teachers and the block).
        """
        args = [
            (kind, g.start, self._teachers[g.start : g.stop], self._classes[g.start : g.stop],
             self.n_classes, self.learner_name)
            for g in groups
        ]
        if len(groups) == 1:
            return [_group_output(*args[0], Xb)]
        parallel = Parallel(n_jobs=self.n_jobs, prefer="threads", max_nbytes=None)
        return parallel(delayed(_group_output)(*a, Xb) for a in args)

    def _check_query(self, X: Any) -> Any:
        X = _check_X(X, "query rows")
        if _num_rows(X) == 0:
            raise DataError("There are no query rows to label; give at least one public row.")
        return X

    def _per_block(
        self, kind: str, X: Any, block_size: int | None, progress: ProgressCallback | None
    ) -> np.ndarray:
        """``kind`` output (see :func:`_group_output`) on every row of ``X``, block by block.

        Counts of the groups are added; predictions and scores of the groups are placed
        side by side.  ``progress(done, total)`` is called after each block.
        """
        _check_progress(progress)
        X = self._check_query(X)
        m = _num_rows(X)
        if kind == "counts":
            out = np.zeros((m, self.n_classes), dtype=np.int32)
        else:
            out = np.empty((m, self.k), dtype=np.float32 if kind == "scores" else np.int32)
        groups = self._groups()
        with threadpool_limits(limits=1):  # parallelism is across teachers, see train_teachers
            for start, stop, Xb in self._blocks(X, block_size):
                parts = self._map_groups(kind, Xb, groups)
                if kind == "counts":
                    for part in parts:
                        out[start:stop] += part
                else:
                    out[start:stop] = np.concatenate(parts, axis=1)
                if progress is not None:
                    progress(stop, m)
        return out

    # -- outputs -----------------------------------------------------------------------

    def vote_counts(
        self, X: Any, *, block_size: int | None = None, progress: ProgressCallback | None = None
    ) -> np.ndarray:
        """Votes per class: ``counts[i, c]`` = number of teachers predicting ``c`` on row ``i``.

        Computed block by block: each teacher predicts a block of rows and its votes are
        added at once, so memory stays ``O(block_size × (C + features))`` plus the
        ``(m, C)`` result; the ``m × k`` matrix of predictions is never formed.

        Parameters
        ----------
        X : array-like or DataFrame, shape (m, n_features)
            Query rows, with the private table's columns.
        block_size : int, optional
            Rows per block (default :attr:`block_size`, else :func:`default_block_size`).
        progress : callable, optional
            ``progress(done, total)``, called after each block with the rows done so far
            (the last call is ``(m, m)``).

        Returns
        -------
        numpy.ndarray of int32, shape (m, n_classes)
            Every row sums to ``k``.  Non-private: input to an aggregator only.
        """
        return self._per_block("counts", X, block_size, progress)

    def predictions(
        self, X: Any, *, block_size: int | None = None, progress: ProgressCallback | None = None
    ) -> np.ndarray:
        """Every teacher's predicted class on every row (NON-PRIVATE diagnostic).

        This forms the full ``(m, k)`` matrix (4 bytes per entry); use
        :meth:`vote_counts` for aggregation.  ``block_size`` and ``progress`` as there.

        Returns
        -------
        numpy.ndarray of int32, shape (m, k)
        """
        return self._per_block("predictions", X, block_size, progress)

    def scores(
        self, X: Any, *, block_size: int | None = None, progress: ProgressCallback | None = None
    ) -> np.ndarray:
        """Every teacher's probability of the positive class (binary tasks; for soft labels).

        A teacher whose chunk held one class only scores 0 (class 0) or 1 (class 1).

        Parameters
        ----------
        X : array-like or DataFrame, shape (m, n_features)
            Query rows.
        block_size : int, optional
            Rows per block (default :attr:`block_size`, else :func:`default_block_size`).
        progress : callable, optional
            ``progress(done, total)``, called after each block (as :meth:`vote_counts`).

        Returns
        -------
        numpy.ndarray of float32, shape (m, k)
            Values in [0, 1].  Non-private: input to ``btt_soft_label`` only.

        Raises
        ------
        ParameterError
            When the task has more than two classes, or the learner gives no
            probabilities (``predict_proba``), e.g. a linear SVM.
        """
        if self.n_classes != 2:
            raise ParameterError(
                f"Soft labels need a binary task (2 classes); this ensemble has {self.n_classes} "
                "classes. Use hard labels (vote counts) instead."
            )
        for teacher in self._teachers:
            if not isinstance(teacher, ConstantClassifier) and not hasattr(teacher, "predict_proba"):
                raise ParameterError(
                    f"Soft labels need class probabilities, but {self.learner_name} has no predict_proba. "
                    "Choose a learner with probabilities (e.g. logistic_regression) or use hard labels."
                )
        return self._per_block("scores", X, block_size, progress)


# --------------------------------------------------------------------------- training


def train_teachers(
    X: Any,
    y: Any,
    learner: Any,
    k: int,
    *,
    n_classes: int | None = None,
    rng: RNGLike = None,
    n_jobs: int | None = None,
    progress: ProgressCallback | None = None,
) -> TeacherEnsemble:
    """Fit ``k`` teachers on disjoint, data-independent chunks of the private data.

    The rows are shuffled by a random permutation drawn from ``rng`` and cut into ``k``
    near-equal consecutive slices (:func:`numpy.array_split`); teacher ``j`` is a clone
    of ``learner`` fitted on slice ``j``.  The split depends only on ``n`` and ``rng``,
    never on the data, which is what the replace-one adjacency of DESIGN §1 needs (see
    the module docstring).

    Chunks may lack some classes: each teacher's ``classes_`` (a subset of the class ids)
    is mapped onto the global class list ``0..n_classes-1``.  A chunk holding a single
    class becomes a :class:`ConstantClassifier` predicting it, without calling the
    learner.  Each clone's ``random_state`` parameters (nested ones included) are set to
    a per-teacher seed drawn from ``rng``, so a fixed seed gives the same teachers for
    any ``n_jobs`` and any backend (a Dask cluster included, when its workers run the
    same package versions).

    Each fit runs with one BLAS/OpenMP thread (:func:`threadpoolctl.threadpool_limits`):
    chunks are small, so the parallelism is across teachers (``n_jobs``), and nested
    threads would oversubscribe the cores (a tenfold slow-down on a loaded machine).

    Warnings raised while fitting (e.g. scikit-learn's ``ConvergenceWarning``) are
    collected in the workers and re-issued once per distinct message, with the number of
    teachers that raised it.

    Parameters
    ----------
    X : array-like, sparse matrix or pandas.DataFrame, shape (n, n_features)
        Private features.
    y : array-like of int, shape (n,)
        Private labels as class ids ``0..C-1``.
    learner : sklearn classifier, Pipeline or str
        Cloned (:func:`sklearn.base.clone`) for every teacher; a name from
        :data:`core.ensemble.learners.LEARNERS` builds that learner with its defaults.
    k : int
        Number of teachers; checked by :func:`core.validation.check_k` against ``n``
        (every chunk needs at least two rows).
    n_classes : int, optional
        Number of classes C (default ``max(y) + 1``).
    rng : numpy.random.Generator, int or None
        Source of the permutation and the teachers' seeds (see
        :func:`core.noise.check_rng`).
    n_jobs : int, optional
        Workers for :class:`joblib.Parallel`, in training and in the returned ensemble's
        vote computation.  The backend is the caller's (``joblib.parallel_config``;
        ``"loky"`` processes by default); None defers to that configuration (sequential
        when there is none, every worker thread under Dask).  To choose the backend, or
        to send the work to a Dask cluster, enter
        :func:`core.ensemble.distributed.joblib_backend` around training and voting::

            with joblib_backend("dask", "tcp://10.0.0.5:8786"):
                ensemble = train_teachers(X, y, learner, k, rng=0)
                votes = ensemble.vote_counts(X_public)

        That context is the library's one way to choose where the work runs (the
        command line's ``--backend``/``--scheduler`` use it too): one connection serves
        training and every vote computation, including those made inside the
        aggregators and :class:`core.ensemble.estimator.PrivateEnsembleClassifier`.  Private
        chunks go to the workers' memory only (joblib's memory-mapping of large
        arguments to a temporary folder is turned off).
    progress : callable, optional
        ``progress(done, total)``, called in the calling process each time a teacher has
        finished (``k`` calls, the last one ``(k, k)``).

    Returns
    -------
    TeacherEnsemble
        Holds the fitted teachers in memory only (they are derived from private data),
        and ``n_jobs`` for its vote computation.

    Raises
    ------
    DataError
        For unusable data, or when the learner fails on a chunk (the message names the
        teacher and repeats the learner's error).
    ParameterError
        For a bad ``k``, ``n_classes``, ``n_jobs`` or learner.
    """
    learner = _resolve_learner(learner)
    X = _check_X(X, "private features")
    n = _num_rows(X)
    y, n_classes = _check_labels(y, n, n_classes)
    k = check_k(k, n)
    n_jobs = _check_n_jobs(n_jobs)
    _check_progress(progress)
    gen = check_rng(rng)
    permutation = gen.permutation(n)
    chunks = [np.sort(chunk) for chunk in np.array_split(permutation, k)]
    seeds = gen.integers(0, 2**32, size=k, dtype=np.uint64)
    name = _learner_name(learner)

    def tasks() -> Iterable[Any]:
        return (
            delayed(_fit_teacher)(j, clone(learner), _rows(X, idx), y[idx], int(seeds[j]), name)
            for j, idx in enumerate(chunks)
        )

    # One BLAS/OpenMP thread per fit: teachers are small, parallelism is across teachers
    # (n_jobs); nested threads oversubscribe the cores (loky workers limit themselves).
    with threadpool_limits(limits=1):
        results = _run_parallel(tasks, k, n_jobs, progress)
    results.sort(key=lambda r: r[0])
    if len(results) != k:  # pragma: no cover - joblib returns every task or raises
        raise DataError(f"Only {len(results)} of {k} teachers finished training.")

    tally: Counter[tuple[type, str]] = Counter()
    for *_, seen in results:
        tally.update(seen)
    for (category, message), count in sorted(tally.items(), key=lambda item: -item[1])[:3]:
        warnings.warn(f"{count} of {k} teachers warned while fitting: {message}", category, stacklevel=2)

    return TeacherEnsemble(
        teachers=[r[1] for r in results],
        classes=[r[2] for r in results],
        n_classes=n_classes,
        chunk_sizes=np.array([c.size for c in chunks], dtype=np.int64),
        learner=clone(learner),
        n_jobs=n_jobs,
    )
