"""Teachers: one classifier per disjoint chunk of the private data (docs/design.md §1).

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

**Per person** (``units``: one privacy-unit ID per row, docs/design.md §1.2) the chunks are
made of whole persons: a person's chunk is a keyed hash of their ID under a key drawn
fresh from ``rng`` (:func:`core.data.units.unit_chunks`), so all of a person's rows are in
one chunk and which chunk does not depend on any other person's data.  Neighbours now
differ in all the rows of one person (their number may change): only that person's chunk
changes, so one teacher changes and every query's vote-count vector again moves by at
most one vote: one person → one chunk → one vote per query, and every aggregator's
guarantee holds per person unchanged.  Chunks are not balanced by row counts (that would
let one person's count move other persons between chunks).

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
from typing import Any, Callable, Iterable

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import BaseEstimator, clone
from threadpoolctl import threadpool_limits

from core.ensemble.inputs import ProgressCallback, check_features, check_n_jobs, check_progress
from core.ensemble.inputs import learner_name, num_rows, resolve_learner, seed_estimator, select_rows
from core.ensemble.teacher_ensemble import ConstantClassifier, TeacherEnsemble
from core.errors import DataError, ParameterError
from core.noise import RNGLike, check_rng
from core.validation import check_k

__all__ = ["train_teachers"]


def _check_labels(y: Any, n_rows: int, n_classes: int | None) -> tuple[np.ndarray, int, np.ndarray]:
    """The labels as class ids into the class list, the number of classes, and the class list.

    ``n_classes=None``: the classes are the labels seen (sorted, as :func:`numpy.unique`
    orders them), so labels {1, 2} give two classes, never a phantom class 0.  Given: the
    labels are class ids ``0..n_classes-1`` of a declared class list.
    """
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise DataError(f"The labels must be one column (one class label per row), got shape {arr.shape}.")
    if arr.shape[0] != n_rows:
        raise DataError(
            f"The features have {n_rows} rows but the labels have {arr.shape[0]}; give one label per row."
        )
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise DataError("The labels must be class labels (whole numbers or text, no missing values).")
        arr = arr.astype(np.int64)
    elif arr.dtype.kind == "O":
        if any(v is None or (isinstance(v, float) and not np.isfinite(v)) for v in arr.tolist()):
            raise DataError("The labels must be class labels (whole numbers or text, no missing values).")
        arr = arr.astype(str) if all(isinstance(v, str) for v in arr.tolist()) else arr
    if n_classes is None:
        try:
            classes, ids = np.unique(arr, return_inverse=True)
        except TypeError:
            raise DataError("The labels mix kinds that cannot be ordered (e.g. numbers and text); "
                            "give one kind of class label.") from None
        n_classes = int(classes.size)
        ids = ids.astype(np.int64).reshape(-1)
    else:
        if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)):
            raise ParameterError(f"n_classes must be a whole number, got {n_classes!r}.")
        n_classes = int(n_classes)
        if arr.dtype.kind == "b":
            arr = arr.astype(np.int64)
        if arr.dtype.kind not in "iu":
            raise DataError(
                "With n_classes given, the labels must be class ids 0, 1, ..., n_classes-1; encode text labels "
                "first (core.data.load_table does this and keeps the class names), or leave n_classes unset."
            )
        ids = arr.astype(np.int64, copy=False)
        if ids.size and ids.min() < 0:
            raise DataError("With n_classes given, the labels must be class ids 0, 1, ..., n_classes-1; found a negative label.")
        top = int(ids.max()) + 1 if ids.size else 0
        if n_classes < top:
            raise ParameterError(
                f"n_classes = {n_classes} but the labels go up to class {top - 1}; "
                f"leave n_classes unset or give at least {top}."
            )
        classes = np.arange(n_classes, dtype=np.int64)
    if n_classes < 2:
        raise DataError(
            "The private labels hold a single class; a classifier needs at least two classes."
        )
    return ids, n_classes, classes


def _fit_teacher(
    index: int, model: BaseEstimator, X: Any, y: np.ndarray, seed: int, name: str
) -> tuple[int, BaseEstimator, np.ndarray, list[tuple[type, str]]]:
    """Fit one teacher (runs in a joblib worker).  Returns its index for reordering."""
    present = np.unique(y)
    caught: list[warnings.WarningMessage] = []
    if present.size == 0:  # a chunk no person hashed to: a fixed vote, a function of the (empty) chunk
        shape = getattr(X, "shape", (0, 1))
        model = ConstantClassifier().fit(np.zeros((1, shape[1] if len(shape) == 2 else 1)), np.zeros(1, dtype=np.int64))
        return index, model, np.zeros(1, np.int64), []
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


# --------------------------------------------------------------------------- training


def _person_chunks(units: Any, n: int, k: Any, gen: np.random.Generator) -> tuple[list[np.ndarray], int]:
    """Chunks of whole persons: row indices per teacher, by a keyed hash of each person's ID."""
    from core.data.units import PrivacyUnit, privacy_unit, unit_chunks

    unit = units if isinstance(units, PrivacyUnit) else privacy_unit(units, "unit")
    if unit.n_rows != n:
        raise DataError(f"units must give one privacy-unit ID per private row: {n} rows but {unit.n_rows} IDs.")
    k = check_k(k, unit.n_units, of="persons" if unit.column is not None else "private rows")
    assignment = unit_chunks(unit, k, rng=gen)
    order = np.argsort(assignment, kind="stable")
    bounds = np.searchsorted(assignment[order], np.arange(k + 1))
    chunks = [order[bounds[j]:bounds[j + 1]] for j in range(k)]
    empty = sum(1 for c in chunks if c.size == 0)
    if empty:
        warnings.warn(
            f"{empty} of {k} teachers received no person (the chunks are a keyed hash of the persons' IDs, "
            f"{unit.n_units} persons): they vote class 0. Use fewer teachers (NON-PRIVATE diagnostic).",
            UserWarning, stacklevel=3)
    return chunks, k


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
    units: Any = None,
) -> TeacherEnsemble:
    """Fit ``k`` teachers on disjoint, data-independent chunks of the private data.

    The rows are shuffled by a random permutation drawn from ``rng`` and cut into ``k``
    near-equal consecutive slices (:func:`numpy.array_split`); teacher ``j`` is a clone
    of ``learner`` fitted on slice ``j``.  The split depends only on ``n`` and ``rng``,
    never on the data, which is what the replace-one adjacency of docs/design.md §1 needs (see
    the module docstring).

    With ``units`` (one privacy-unit ID per row) the chunks hold whole persons instead: a
    person's chunk is a keyed hash of their ID under a fresh key from ``rng``
    (:func:`core.data.units.unit_chunks`).  *Proof sketch* (replace one person,
    docs/design.md §1.2): the neighbouring dataset differs in the rows of one person only;
    every other person keeps their ID, hence their chunk, and their rows; so only the
    chunk of the changed person differs, one teacher can change, and each query's vote
    vector moves by at most one vote, the sensitivity every aggregator assumes.  The
    number of persons must leave two per chunk on average (``k ≤ persons / 2``); a chunk
    no person lands in (possible for small ``persons / k``) gets a teacher that always
    votes class 0 (a fixed vote, independent of the data), with a warning.

    The classes are the labels seen (``n_classes`` unset): labels {1, 2} give two classes,
    ``ensemble.classes_ == [1, 2]``, and vote column ``j`` counts the votes for
    ``classes_[j]`` (text labels work alike).  The class list is released with every
    answer (an answer is an index into it), so it should be public: a class held by a
    single private row would be revealed by its presence.  Declare it with ``n_classes``
    (labels are then class ids ``0..n_classes-1``, ``classes_ == arange(n_classes)``,
    the pipeline's way: :func:`core.data.load_table` encodes the labels and keeps the
    class names).

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
    y : array-like, shape (n,)
        Private labels: any class labels (whole numbers or text) when ``n_classes`` is
        unset; class ids ``0..n_classes-1`` when it is given.
    learner : sklearn classifier, Pipeline or str
        Cloned (:func:`sklearn.base.clone`) for every teacher; a name from
        :data:`core.ensemble.learners.LEARNERS` builds that learner with its defaults.
    k : int
        Number of teachers; checked by :func:`core.validation.check_k` against ``n``
        (every chunk needs at least two rows).
    n_classes : int, optional
        Declares the class list ``0..n_classes-1`` (public, e.g. a table's classes);
        default: the labels seen.
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
        aggregators and :class:`core.pipeline.estimator.PrivateEnsembleClassifier`.  Private
        chunks go to the workers' memory only (joblib's memory-mapping of large
        arguments to a temporary folder is turned off).
    progress : callable, optional
        ``progress(done, total)``, called in the calling process each time a teacher has
        finished (``k`` calls, the last one ``(k, k)``).
    units : array-like or core.data.units.PrivacyUnit, optional
        The privacy unit of each row (a person's ID; private, in memory only).  None
        (default): each row is a unit and the chunks are slices of a permutation.

    Returns
    -------
    TeacherEnsemble
        Holds the fitted teachers in memory only (they are derived from private data),
        ``classes_`` (the class of each vote column) and ``n_jobs`` for its vote
        computation.

    Raises
    ------
    DataError
        For unusable data, or when the learner fails on a chunk (the message names the
        teacher and repeats the learner's error).
    ParameterError
        For a bad ``k``, ``n_classes``, ``n_jobs`` or learner.
    """
    learner = resolve_learner(learner)
    X = check_features(X, "private features")
    n = num_rows(X)
    y, n_classes, class_list = _check_labels(y, n, n_classes)
    n_jobs = check_n_jobs(n_jobs)
    check_progress(progress)
    gen = check_rng(rng)
    if units is None:
        k = check_k(k, n)
        permutation = gen.permutation(n)
        chunks = [np.sort(chunk) for chunk in np.array_split(permutation, k)]
    else:
        chunks, k = _person_chunks(units, n, k, gen)
    seeds = gen.integers(0, 2**32, size=k, dtype=np.uint64)
    name = learner_name(learner)

    def tasks() -> Iterable[Any]:
        return (
            delayed(_fit_teacher)(j, clone(learner), select_rows(X, idx), y[idx], int(seeds[j]), name)
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
        classes_=class_list,
    )
