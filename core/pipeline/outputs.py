"""The student and the export of a labeling run.

Part of :mod:`core.pipeline` (see its docstring); import the names from there.
"""

from __future__ import annotations

from typing import Any, Mapping


from core.pipeline.teachers import teacher_model

__all__ = ['student', 'labeled_csv', 'report']


def student(public_X, result, learner: str, params: Mapping[str, Any] | None, table, *, bottom: str = "drop", rng=None):
    """Train the student on the privately labeled public rows (post-processing: same guarantee).

    Parameters
    ----------
    public_X : pandas.DataFrame
        The public rows' features.
    result : LabelingResult
        The private labeling of those rows.
    learner : str
        The learner's name.
    params : mapping, optional
        The learner's hyperparameters.
    table : core.data.Table
        The private table.
    bottom : str, default "drop"
        What to do with ⊥ rows.
    rng : numpy.random.Generator, int or None, optional
        Randomness (see :func:`core.noise.check_rng`).

    Returns
    -------
    core.ensemble.Student
    """
    from core.ensemble.student import train_student

    # Fitted on the public DataFrame (never the plain-array shortcut): the student is
    # published and applied to a table of the same named columns.
    model = teacher_model(table, learner, params)
    n_classes = 2 if result.scores is not None else table.n_classes
    return train_student(public_X, result, model, bottom=bottom, n_classes=n_classes, rng=rng)


def labeled_csv(public_frame, result, class_names, *, columns=None, keys=None) -> bytes:
    """The labeled CSV of the public rows (:func:`core.export.labeled_frame`), as UTF-8 bytes.

    Parameters
    ----------
    public_frame : pandas.DataFrame
        The public rows.
    result : LabelingResult
    class_names : sequence of str
    columns : mapping, optional (keyword-only)
        The names of the added columns, decided when the files loaded
        (:func:`core.export.export_columns`); default: decided from ``public_frame``.
    keys : pandas.DataFrame, optional (keyword-only)
        Join keys from the public file, carried first (:func:`core.export.labeled_frame`).

    Returns
    -------
    bytes
    """
    from core.export import labeled_frame

    return labeled_frame(public_frame, result, class_names, columns=columns,
                         keys=keys).to_csv(index=False).encode("utf-8")


def report(result, **context: Any) -> str:
    """The JSON privacy report of a run (:func:`core.export.privacy_report`).

    Parameters
    ----------
    result : LabelingResult
    **context
        Extra report fields passed to :func:`core.export.privacy_report`.

    Returns
    -------
    str
        JSON text.
    """
    from core.export import privacy_report, report_json

    return report_json(privacy_report(result, **context))
