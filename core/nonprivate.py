"""NON-PRIVATE diagnostics: how good the teachers and the private labels are.

Every function here reads the public queries' held-out **true labels** or the teachers'
**raw votes and predictions**, which depend on the private data without any noise.  They
are for understanding a run only: never exported, never part of a privacy report, never
published.  Numpy arrays in, plain numbers out; a function returns None where the true
labels are unknown (``y`` is None, e.g. an unlabeled public file) or where the measure
does not apply.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = [
    "data_dependent_epsilon",
    "teacher_accuracies",
    "mean_teacher_error",
    "plurality_accuracy",
    "answered_accuracy",
    "correct_count",
    "soft_error",
    "theorem_32_check",
    "worst_teacher_error",
    "majority_rate",
    "reference_line",
]


def _without_truth_none(measure):
    """``measure`` returning None where the true labels ``y`` (its last argument) are None."""

    @functools.wraps(measure)
    def wrapped(*args, **kwargs):
        y = kwargs["y"] if "y" in kwargs else args[-1]
        return None if y is None else measure(*args, **kwargs)

    return wrapped


@_without_truth_none
def teacher_accuracies(predictions, y) -> np.ndarray | None:
    """Each teacher's accuracy on the public queries.  NON-PRIVATE: reads true labels.

    Parameters
    ----------
    predictions : array-like of int, shape (m, k)
        Every teacher's label on every public query.
    y : array-like of int, shape (m,), or None
        The queries' true labels.

    Returns
    -------
    numpy.ndarray of float, shape (k,), or None
        The share of queries each teacher labels correctly; None without ``y``.
    """
    return np.mean(np.asarray(predictions) == np.asarray(y)[:, None], axis=0)


def _teacher_error(predictions, y, reduce) -> float | None:
    """``1 - reduce(teacher_accuracies)``; None without ``y``."""
    accs = teacher_accuracies(predictions, y)
    return None if accs is None else float(1.0 - reduce(accs))


def mean_teacher_error(predictions, y) -> float | None:
    """Average teacher error on the public queries.  NON-PRIVATE: reads true labels.

    Parameters
    ----------
    predictions, y
        As in :func:`teacher_accuracies`.

    Returns
    -------
    float or None
        ``1 - mean(teacher_accuracies)``; None without ``y``.
    """
    return _teacher_error(predictions, y, np.mean)


@_without_truth_none
def plurality_accuracy(votes, y) -> float | None:
    """Accuracy of the un-noised plurality vote.  NON-PRIVATE: reads raw votes and true labels.

    Parameters
    ----------
    votes : array-like of int, shape (m, n_classes)
        Vote counts per query and class.
    y : array-like of int, shape (m,), or None

    Returns
    -------
    float or None
    """
    from core.mechanisms.stability import plurality

    return float(np.mean(np.asarray(plurality(np.asarray(votes))) == np.asarray(y)))


def _answers(labels, y) -> tuple[np.ndarray, np.ndarray]:
    """The released hard labels on the answered queries (class ids ≥ 0) and their true labels."""
    labels = np.asarray(labels)
    mask = labels >= 0
    return labels[mask], np.asarray(y)[mask]


@_without_truth_none
def answered_accuracy(labels, y) -> float | None:
    """Accuracy of released hard labels on the answered queries.  NON-PRIVATE: reads true labels.

    Parameters
    ----------
    labels : array-like of int, shape (m,)
        Released class ids; negative values (⊥, not processed) are not answers.
    y : array-like of int, shape (m,), or None

    Returns
    -------
    float or None
        None without ``y`` or without any answer.
    """
    released, truth = _answers(labels, y)
    return float(np.mean(released == truth)) if released.size else None


@_without_truth_none
def correct_count(labels, y) -> int | None:
    """Answered hard labels equal to the true label.  NON-PRIVATE: reads true labels.

    Parameters
    ----------
    labels : array-like of int, shape (m,)
        Released class ids; negative values are not answers.
    y : array-like of int, shape (m,), or None

    Returns
    -------
    int or None
    """
    released, truth = _answers(labels, y)
    return int(np.count_nonzero(released == truth))


@_without_truth_none
def soft_error(scores, answered, y) -> float | None:
    """Mean absolute error of released scores against the 0/1 truth.  NON-PRIVATE: reads true labels.

    Parameters
    ----------
    scores : array-like of float, shape (m,)
        Released soft labels (positive-class scores).
    answered : array-like of bool, shape (m,)
        Which queries were answered.
    y : array-like of int, shape (m,), or None

    Returns
    -------
    float or None
        None without ``y`` or without any answer.
    """
    mask = np.asarray(answered, dtype=bool)
    if not mask.any():
        return None
    return float(np.mean(np.abs(np.asarray(y, dtype=float)[mask] - np.asarray(scores, dtype=float)[mask])))


def worst_teacher_error(predictions, y) -> float | None:
    """The largest error of any one teacher on the public queries.  NON-PRIVATE: reads true labels.

    BTT's Theorem 3.2 asks every teacher to err at most γ + α: this is the error
    :func:`theorem_32_check` holds against that condition.

    Parameters
    ----------
    predictions, y : array-like of int
        Every teacher's labels and the true labels, as in :func:`teacher_accuracies`.

    Returns
    -------
    float or None
        The worst teacher's error, ``1 - min(teacher_accuracies)``, or None without ``y``.
    """
    return _teacher_error(predictions, y, np.min)


def theorem_32_check(predictions, y, result, *, beta: float, n_classes: int, n_private: int | None = None):
    """BTT Theorem 3.2 checked for a BTT run, with the worst teacher's measured error.

    NON-PRIVATE: the teachers' error is measured on true labels (:func:`worst_teacher_error`:
    the theorem asks every teacher to err at most γ + α).  The run's own cutoff T, number of
    teachers k, queries m and target (ε, δ) are read from ``result.params``; the check and
    the bound (only where every condition holds) come from
    :func:`core.theory.theorem_32_conditions`.

    Parameters
    ----------
    predictions : array-like of int, shape (m, k)
        Every teacher's label on the public queries.
    y : array-like of int, shape (m,), or None
        The public queries' true labels.
    result : LabelingResult
        A BTT run.
    beta : float
        The theorem's failure probability.
    n_classes : int
        Classes of the task.
    n_private : int, optional
        Private rows (to say how many rows each teacher would get).

    Returns
    -------
    core.theory.Theorem32Check or None
        None without true labels.
    """
    from core.theory import theorem_32_conditions

    error = worst_teacher_error(predictions, y)
    if error is None:
        return None
    p = result.params
    return theorem_32_conditions(teacher_error=error, k=int(np.asarray(predictions).shape[1]), T=int(p["T"]),
                                 m=int(result.m), epsilon=float(p["epsilon_target"]), delta=float(p["delta_target"]),
                                 beta=float(beta), n_classes=int(n_classes), n_private=n_private)


@_without_truth_none
def majority_rate(y) -> float | None:
    """Accuracy of always answering the most frequent class.  NON-PRIVATE: reads true labels.

    Parameters
    ----------
    y : array-like of int, shape (m,), or None

    Returns
    -------
    float or None
        The most frequent class's share of ``y``; None without ``y`` or when it is empty.
    """
    y = np.asarray(y)
    if y.size == 0:
        return None
    return float(np.max(np.bincount(y.astype(np.int64))) / y.size)


def _fmt(x: float) -> str:
    return f"{x:.2f}"


def reference_line(what: str, accuracy: float | None, y, *, plurality: float | None = None,
                   nonprivate_model: float | None = None) -> str | None:
    """A sentence putting a private accuracy beside NON-PRIVATE reference points.

    E.g. ``"LNMax labels: 0.62 — below always answering the majority class (0.76)"``.

    Parameters
    ----------
    what : str
        What was measured (e.g. ``"LNMax labels"``, ``"Student"``).
    accuracy : float or None
        Its accuracy; None gives None.
    y : array-like of int or None
        The true labels it was measured on (the majority-class rate is read from them).
    plurality, nonprivate_model : float, optional
        The un-noised plurality vote's accuracy, and a non-private model's, where known.

    Returns
    -------
    str or None
        One sentence (text, no markup), or None without ``accuracy`` or ``y``.
    """
    base = majority_rate(y)
    if accuracy is None or base is None:
        return None
    if accuracy < base - 1e-12:
        verdict = f"below always answering the majority class ({_fmt(base)})"
    elif accuracy <= base + 0.01:
        verdict = f"no better than always answering the majority class ({_fmt(base)})"
    else:
        verdict = f"above always answering the majority class ({_fmt(base)})"
    parts = [f"{what}: {_fmt(accuracy)} — {verdict}"]
    if plurality is not None:
        parts.append(f"non-private plurality vote of the teachers: {_fmt(plurality)}")
    if nonprivate_model is not None:
        parts.append(f"non-private model trained on all private rows: {_fmt(nonprivate_model)}")
    return "; ".join(parts) + " (reference points are non-private)."


def data_dependent_epsilon(counts, result) -> float | None:
    """NON-PRIVATE: the data-dependent ε of a labeling run on these votes, if the mechanism has one.

    The run's own ``epsilon_data_dependent`` where its labeling function reports it
    (LNMax's moments accountant, certified Confident-GNMax), else the registry's
    ``diagnostic`` computed now (GNMax, Confident-GNMax: PATE 2018's data-dependent
    Rényi analysis), never above the run's own guarantee (which holds on these votes
    too, at the same δ).  It describes the private votes: shown under "non-private
    diagnostics" only, never exported, never a guarantee.

    Parameters
    ----------
    counts : array-like, shape (m, n_classes)
        The teachers' vote counts the run labeled.
    result : LabelingResult

    Returns
    -------
    float or None
    """
    from core.mechanisms import registry

    if result.epsilon_data_dependent is not None:
        found = float(result.epsilon_data_dependent)
    else:
        mech = registry.get(result.mechanism)
        if mech.diagnostic is None or np.ndim(counts) != 2:
            return None
        found = float(mech.diagnostic(counts, result))
    # The run's guarantee holds on these votes too, and both bound the same loss at the same
    # δ: the data-dependent analysis converts Rényi DP to (ε, δ), which can read above the
    # guarantee's exact Gaussian accounting on votes with little agreement; the smaller holds.
    return min(found, float(result.epsilon))
