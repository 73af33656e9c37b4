"""The teachers of a table and their votes (or scores) on public rows.

Part of :mod:`core.pipeline` (see its docstring); import the names from there.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

from core.mechanisms import registry

__all__ = ['plain_numeric', 'model_input', 'teacher_model', 'train', 'mechanism_inputs', 'votes_and_predictions']


def plain_numeric(table) -> bool:
    """Whether a table's features go to the learner unchanged (numeric, no imputation:
    loaded with ``missing="refuse"`` or ``"drop"``).

    Parameters
    ----------
    table : core.data.Table
        The private table.

    Returns
    -------
    bool
    """
    return not table.categorical_columns and table.missing != "impute"


def model_input(table, X):
    """Features as the teachers see them: a float array for a plain numeric table.

    Fitting and predicting on an array skips pandas' per-call checks, which cost more
    than fitting a small teacher; both give the same teachers and votes.

    Parameters
    ----------
    table : core.data.Table
        The private table.
    X : pandas.DataFrame
        Feature rows.

    Returns
    -------
    numpy.ndarray of float or pandas.DataFrame
        ``X`` as a float array for a plain numeric table, else ``X`` itself.
    """
    return X.to_numpy(dtype=float) if plain_numeric(table) else X


def teacher_model(table, learner: str, params: Mapping[str, Any] | None = None):
    """The learner behind the table's preprocessing (one-hot encoding, imputation, scaling).

    A table of numeric columns loaded without imputation needs no preprocessing (its
    preprocessor passes every column through unchanged), so the learner is used on its
    own there: the same model, fitted about twice as fast, which matters for hundreds
    of teachers.  Imputation, where chosen, is fitted inside each teacher's pipeline on
    that teacher's chunk only.

    A learner that standardizes (``standardize``, on by default for the linear models,
    k-nearest neighbours and the MLP) standardizes the table's **numeric** columns only:
    the scaler moves into the numeric branch of the table's preprocessor
    (``table.preprocessor(standardize=True)``) and the one-hot columns stay 0/1.  Its
    means and variances are fitted where the rest of the preprocessing is: on a
    teacher's own chunk for a teacher, on the public rows for the student.

    Parameters
    ----------
    table : core.data.Table
        The private table.
    learner : str
        The learner's name.
    params : mapping, optional
        The learner's hyperparameters.

    Returns
    -------
    sklearn estimator
        An unfitted model (the learner, or a pipeline with the table's preprocessing).
    """
    from sklearn.pipeline import make_pipeline

    from core.ensemble.learners import make_learner, parse_assignments, standardizes

    values = parse_assignments(learner, dict(params or {}))
    if plain_numeric(table):
        return make_learner(learner, **values)
    scale = standardizes(learner, values)
    if scale:
        values["standardize"] = False  # the preprocessor scales the numeric columns instead
    return make_pipeline(table.preprocessor(standardize=scale), make_learner(learner, **values))


def train(table, learner: str, params: Mapping[str, Any] | None, k: int, *, rng=None, n_jobs: int | None = 1,
          progress: Callable[[int, int], None] | None = None):
    """Train ``k`` teachers of ``learner`` on disjoint chunks of a table's private rows.

    With a privacy unit (:attr:`core.data.Table.unit`) the chunks hold whole persons
    (:func:`core.ensemble.teachers.train_teachers` with ``units``): one person changes one
    teacher (docs/design.md §1.2).  Under ``missing="drop"`` without a unit each row's chunk
    is a keyed hash of its number in the file (:attr:`core.data.Table.partition_units`), so
    a row removed by the drop changes its own chunk only.

    Parameters
    ----------
    table, learner, params
        As for :func:`teacher_model` (the private table, the learner and its
        hyperparameters).
    k : int
        Number of teachers.
    rng : numpy.random.Generator, int or None, optional
        Randomness (see :func:`core.noise.check_rng`).
    n_jobs : int or None, default 1
        Parallel jobs for fitting.
    progress : callable, optional
        Progress callback ``progress(done, total)``.

    Returns
    -------
    core.ensemble.TeacherEnsemble
    """
    from core.data import check_class_sizes
    from core.ensemble.teachers import train_teachers

    check_class_sizes(table, int(k))
    return train_teachers(
        model_input(table, table.features),
        table.labels,
        teacher_model(table, learner, params),
        int(k),
        n_classes=table.n_classes,
        rng=rng,
        n_jobs=n_jobs,
        progress=progress,
        units=table.partition_units,
    )


def mechanism_inputs(mechanism: str, teachers, table, public_X, *, progress=None, codes=None) -> np.ndarray:
    """What ``mechanism`` reads from the teachers on the public rows: votes or scores.

    Parameters
    ----------
    mechanism : str
        A registered mechanism's name.
    teachers : core.ensemble.TeacherEnsemble
    table : core.data.Table
        The private table.
    public_X : pandas.DataFrame
        The public (unlabeled) rows' features.
    progress : callable, optional
        Progress callback ``progress(done, total)``.
    codes : dict, optional
        ``public_X``'s codes from :func:`core.data.public.check_public_coded`, handed to
        the teachers' shared encoder (no second factorization of a category column).

    Returns
    -------
    numpy.ndarray or PrivateRows
        Vote counts, shape (m, n_classes), teacher scores for a scores mechanism, or the
        private and public rows encoded with public bounds for a ``"rows"`` mechanism
        (:func:`core.mechanisms.dp_training.private_rows`; ``teachers`` unused) (private).
    """
    mech = registry.get(mechanism)
    if mech.inputs == "rows":  # a model trained with DP on the private rows: no teacher is asked
        from core.mechanisms.dp_training import private_rows

        return private_rows(table, public_X)
    X = model_input(table, public_X)
    codes = codes if hasattr(X, "iloc") else None
    if mech.inputs == "scores":
        return np.asarray(teachers.scores(X, progress=progress, codes=codes))
    return np.asarray(teachers.vote_counts(X, progress=progress, codes=codes))


def votes_and_predictions(teachers, table, public_X, *, progress=None) -> tuple[np.ndarray, np.ndarray]:
    """Vote counts and per-teacher predictions on the public rows from one pass of the teachers.

    For a caller that shows the per-teacher predictions (a NON-PRIVATE diagnostic) as well
    as labeling from the votes (the app): one pass instead of two
    (:meth:`core.ensemble.TeacherEnsemble.votes_and_predictions`).  The counts are exactly
    :func:`mechanism_inputs`' for a counts mechanism.

    Parameters
    ----------
    teachers : core.ensemble.TeacherEnsemble
    table : core.data.Table
        The private table.
    public_X : pandas.DataFrame
        The public rows' features.
    progress : callable, optional
        Progress callback ``progress(done, total)``.

    Returns
    -------
    counts : numpy.ndarray of int, shape (m, n_classes)
        Vote counts (private).
    predictions : numpy.ndarray of int32, shape (m, k)
        Per-teacher predicted class ids (NON-PRIVATE diagnostic).
    """
    return teachers.votes_and_predictions(model_input(table, public_X), progress=progress)
