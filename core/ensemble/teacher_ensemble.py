"""The fitted teachers and their votes: :class:`TeacherEnsemble` (docs/design.md §1).

A :class:`TeacherEnsemble` (built by :func:`core.ensemble.teachers.train_teachers`) holds
the fitted teachers in memory only: they hold parameters derived from the private data
and the library never writes them to disk.  Its per-teacher outputs
(:meth:`TeacherEnsemble.predictions`, :meth:`TeacherEnsemble.vote_counts`,
:meth:`TeacherEnsemble.scores`) are the *input* of the private aggregators, not private
outputs themselves: they are non-private and must never be shown outside a
"non-private diagnostics" heading or exported.

Votes are computed block by block of query rows through :class:`joblib.Parallel`,
following the caller's ``joblib.parallel_config`` (see
:func:`core.ensemble.distributed.joblib_backend`).
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import BaseEstimator
from threadpoolctl import threadpool_limits

from core.ensemble.inputs import ProgressCallback, check_features, check_n_jobs
from core.ensemble.inputs import check_progress, learner_name, num_rows, select_rows
from core.ensemble.teacher_calls import ConstantClassifier, _is_sparse, _predict_teacher, _score_teacher
from core.errors import DataError, ParameterError

__all__ = ["BLOCK_BYTES", "ConstantClassifier", "TeacherEnsemble", "default_block_size"]

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
    b = num_rows(Xb)
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
    classes_ : numpy.ndarray, shape (n_classes,)
        The class of each vote column: ``classes_[j]`` is the label that class id ``j``
        stands for (the labels seen in training, or ``0..C-1`` for a declared class
        list); ``classes_[labels]`` turns a labeling run's answers into labels.
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
    encode_once : bool
        True (default): where the teachers' preprocessing can be read off (every teacher
        :func:`core.pipeline.train` builds), the query rows are encoded once for all
        teachers and linear teachers vote through one stacked matrix product
        (:mod:`core.ensemble.voter`, docs/design.md §1.1); the votes equal the per-teacher
        path's.  False: every teacher transforms and predicts the rows itself.
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
        classes_: Any = None,
    ) -> None:
        if len(teachers) != len(classes) or len(teachers) != len(chunk_sizes):
            raise ParameterError("teachers, classes and chunk_sizes must have one entry per teacher.")
        self._teachers = list(teachers)
        self._classes = [np.asarray(c, dtype=np.int64) for c in classes]
        self.n_classes = int(n_classes)
        self.classes_ = np.arange(self.n_classes) if classes_ is None else np.asarray(classes_)
        if self.classes_.shape != (self.n_classes,):
            raise ParameterError(f"classes_ must hold one label per class ({self.n_classes}), got shape {self.classes_.shape}.")
        self.chunk_sizes = np.asarray(chunk_sizes, dtype=np.int64)
        self.learner = learner
        self.learner_name = learner_name(learner)
        self.n_jobs = check_n_jobs(n_jobs)
        self.block_size = None if block_size is None else self._check_block_size(block_size)
        self.encode_once = True
        self._voters: dict[Any, Any] = {}

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
        m = num_rows(X)
        for start in range(0, m, size):
            stop = min(m, start + size)
            yield start, stop, select_rows(X, slice(start, stop))

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
        X = check_features(X, "query rows")
        if num_rows(X) == 0:
            raise DataError("There are no query rows to label; give at least one public row.")
        return X

    def _per_block(
        self, kind: str, X: Any, block_size: int | None, progress: ProgressCallback | None, codes: dict | None = None
    ) -> np.ndarray:
        """``kind`` output (see :func:`_group_output`) on every row of ``X``, block by block.

        Counts of the groups are added; predictions and scores of the groups are placed
        side by side.  ``progress(done, total)`` is called after each block.  ``codes``:
        the categorical columns' codes of ``X``'s rows (see :meth:`vote_counts`).
        """
        check_progress(progress)
        X = self._check_query(X)
        m = num_rows(X)
        if kind == "counts":
            out = np.zeros((m, self.n_classes), dtype=np.int32)
        else:
            out = np.empty((m, self.k), dtype=np.float32 if kind == "scores" else np.int32)
        voter = self.voter(X) if self.encode_once else None
        workers = max(1, effective_n_jobs(self.n_jobs))
        groups = self._groups()
        for start, stop, Xb in self._blocks(X, block_size):
            part = None if codes is None else {c: (k[start:stop], v) for c, (k, v) in codes.items()}
            block = None if voter is None else voter.encode(Xb, codes=part)
            if block is not None and voter.handles(block):
                out[start:stop] = voter.output(kind, block, n_jobs=self.n_jobs, workers=workers)
            else:  # every teacher on the rows themselves (also for cells they must refuse or handle)
                with threadpool_limits(limits=1):  # parallelism is across teachers, see train_teachers
                    parts = self._map_groups(kind, Xb, groups)
                if kind == "counts":
                    for part in parts:
                        out[start:stop] += part
                else:
                    out[start:stop] = np.concatenate(parts, axis=1)
            if progress is not None:
                progress(stop, m)
        return out

    def voter(self, X: Any):
        """The encode-once voter for query rows like ``X`` (None: every teacher reads the rows).

        Built once per kind of input (a DataFrame, or arrays of a number of columns) and
        kept: its public vocabulary grows with the rows it encodes
        (:class:`core.ensemble.voter.EncodedVoter`, docs/design.md §1.1).  None when a
        teacher's preprocessing cannot be read off (a custom pipeline).
        """
        from core.ensemble.voter import EncodedVoter

        key = "frame" if hasattr(X, "iloc") else ("array", int(np.shape(X)[1]) if np.ndim(X) == 2 else 0)
        if hasattr(X, "iloc") or np.ndim(X) == 2 and not _is_sparse(X):
            if key not in self._voters:
                self._voters[key] = EncodedVoter.build(self._teachers, self._classes, self.n_classes,
                                                       self.learner_name, X)
            return self._voters[key]
        return None

    # -- outputs -----------------------------------------------------------------------

    def vote_counts(
        self, X: Any, *, block_size: int | None = None, progress: ProgressCallback | None = None,
        codes: dict | None = None,
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
        codes : dict, optional
            For a DataFrame ``X`` checked by :func:`core.data.public.check_public_coded`:
            its categorical columns' ``(codes, values)`` from there, so that the teachers'
            shared encoder reads the codes instead of factorizing each column again.

        Returns
        -------
        numpy.ndarray of int32, shape (m, n_classes)
            Every row sums to ``k``.  Non-private: input to an aggregator only.
        """
        return self._per_block("counts", X, block_size, progress, codes)

    def votes_and_predictions(
        self, X: Any, *, block_size: int | None = None, progress: ProgressCallback | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The vote counts and every teacher's prediction, from ONE pass of the teachers.

        For a caller that needs both (the app shows the per-teacher accuracy, a NON-PRIVATE
        diagnostic, beside the private labels): the counts are tallied from the predictions
        instead of asking every teacher again, so it costs one pass, not two.  The counts
        are exactly :meth:`vote_counts`' (the same predictions, counted per class).

        Returns
        -------
        counts : numpy.ndarray of int32, shape (m, n_classes)
        predictions : numpy.ndarray of int32, shape (m, k)
        """
        preds = self.predictions(X, block_size=block_size, progress=progress)
        m = preds.shape[0]
        flat = np.repeat(np.arange(m, dtype=np.int64) * self.n_classes, preds.shape[1]) + preds.ravel()
        counts = np.bincount(flat, minlength=m * self.n_classes).reshape(m, self.n_classes).astype(np.int32)
        return counts, preds

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
        self, X: Any, *, block_size: int | None = None, progress: ProgressCallback | None = None,
        codes: dict | None = None,
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
        codes : dict, optional
            As for :meth:`vote_counts`.

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
        return self._per_block("scores", X, block_size, progress, codes)
