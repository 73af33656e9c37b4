"""Knowledge transfer: train a publishable student on privately labeled public points.

docs/design.md §3.6 (BTT Algorithm 3, PATE's student).  An aggregator of
:mod:`core.mechanisms` labels public points with a differential-privacy guarantee; a
student (any scikit-learn learner) is then trained on the public points and those
labels only.  The student never sees the private data or the teachers, so it is a
post-processing of the labeling: **it carries exactly the labeling's (ε, δ)** and may be
published.

Abstentions (⊥) are handled by one of three policies (``bottom``):

``"drop"`` (default)
    Train on the answered rows only.
``"random"``
    Give every ⊥ row a uniformly random class, as in BTT's analysis of the student
    (the labels of ⊥ rows are then pure noise; the number of noisy rows is bounded by
    the cutoff T).
``"semi"``
    Keep ⊥ rows as unlabeled data for a semi-supervised student: scikit-learn's
    :class:`~sklearn.semi_supervised.SelfTrainingClassifier` around the learner (it
    marks unlabeled rows with -1, which is :data:`core.mechanisms.BOTTOM`).
    Self-training needs class probabilities; for a learner without ``predict_proba``
    (e.g. the linear SVM) the student is a
    :class:`~sklearn.semi_supervised.LabelSpreading` model instead (after the
    learner's preprocessing steps when the learner is a pipeline).  PATE-G used GANs.

Rows the mechanism did not process (:data:`core.mechanisms.UNPROCESSED`, after it
halted) are never used as labels: ``drop`` and ``random`` leave them out, ``semi`` treats
them as unlabeled.

Soft labels (``result.scores`` is not None, binary tasks): the student is a classifier
trained on the answered rows with the hard label ``1[score >= 0.5]``; no regressor is
needed.

To choose which public points to query first when the budget is limited, train a student
on what is labeled so far and ask about its least-confident points next
(:func:`least_confident_first`, PATE Appendix B.3).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, clone

from core.mechanisms.result import BOTTOM, UNPROCESSED, LabelingResult
from core.errors import DataError, ParameterError
from core.noise import RNGLike, check_rng
from core.ensemble.inputs import check_features, learner_name, num_rows, resolve_learner, seed_estimator, select_rows

__all__ = ["Student", "PublishedStudent", "BOTTOM_POLICIES", "STUDENT_FORMAT", "train_student", "least_confident_first"]

STUDENT_FORMAT = "private-label-lab published student"
"""The ``format`` entry of a student written in skops' format (:meth:`PublishedStudent.to_skops`)."""

BOTTOM_POLICIES = ("drop", "random", "semi")
"""The accepted values of ``bottom``."""

TRUSTED_TYPES = ("numpy.dtype",)
"""Types besides scikit-learn's own (``sklearn.*``) that :meth:`PublishedStudent.from_skops` trusts: a
NumPy data type, which scikit-learn's fitted imputers hold; it names a type, it runs no code."""

SOFT_LABEL_THRESHOLD = 0.5
"""A released soft label (score) becomes class 1 when it is at least this value."""


@dataclass(frozen=True)
class Student:
    """A student model trained on privately labeled public points.

    The student is a post-processing of the labeling, so it satisfies the labeling's
    (ε, δ)-differential privacy with respect to the private data, and may be published.

    Attributes
    ----------
    model : sklearn estimator
        The fitted student.
    n_labeled : int
        Rows that carried a label in training: the answered rows, plus the ⊥ rows given a
        random class under ``bottom="random"``.
    bottom : str
        The ⊥ policy used: ``"drop"``, ``"random"`` or ``"semi"``.
    epsilon, delta : float
        The labeling's guarantee, which the student inherits.
    mechanism : str
        The labeling mechanism (``LabelingResult.mechanism``).
    n_random : int
        ⊥ rows that received a uniformly random class (``bottom="random"`` only).
    n_unlabeled : int
        Rows given to a semi-supervised student without a label (``bottom="semi"``).
    n_classes : int
        Number of classes the student was trained for.
    """

    model: BaseEstimator
    n_labeled: int
    bottom: str
    epsilon: float
    delta: float
    mechanism: str
    n_random: int = 0
    n_unlabeled: int = 0
    n_classes: int = 2

    def predict(self, X: Any) -> np.ndarray:
        """Class ids predicted by the student (a shortcut for ``model.predict``)."""
        return self.model.predict(X)


class PublishedStudent:
    """A student as published: predicts class NAMES and carries its guarantee.

    What ``private-label-lab label --student FILE`` writes and the app's download is.  It
    holds the fitted student, the class names, the labeling's (ε, δ) and mechanism, and
    the privacy report of the release it came from -- no private value.

    Two file formats: :meth:`to_joblib` (a pickle: loading it RUNS CODE from the file, so
    load only a file you trust) and :meth:`to_skops` (skops' format, which a recipient
    loads without running code from the file: :meth:`from_skops`, or ``skops.io.load``
    with the types it lists as trusted).

    Parameters
    ----------
    model : fitted scikit-learn classifier
        Predicts class ids ``0..C-1``.
    classes : sequence of str
        Class id -> name.
    epsilon, delta : float
        The labeling's guarantee, which the student inherits (post-processing).
    mechanism : str
    report : dict, optional
        The privacy report (:func:`core.export.privacy_report`).

    Examples
    --------
    >>> import joblib  # doctest: +SKIP
    >>> student = joblib.load("student.joblib")  # doctest: +SKIP
    >>> student.predict(X_new), student.epsilon, student.classes_  # doctest: +SKIP
    """

    def __init__(self, model: Any, classes, *, epsilon: float, delta: float, mechanism: str,
                 report: dict | None = None) -> None:
        self.model = model
        self.classes_ = np.asarray([str(c) for c in classes], dtype=object)
        self.epsilon = float(epsilon)
        self.delta = float(delta)
        self.mechanism = str(mechanism)
        self.report = dict(report or {})

    @classmethod
    def from_student(cls, student: Student, classes, report: dict | None = None) -> "PublishedStudent":
        """Wrap a :class:`Student` with the class names (e.g. ``Table.class_names``); with a
        report, (ε, δ) are the report's (written to 15 significant digits)."""
        guarantee = (report or {}).get("guarantee") or {}
        epsilon = guarantee.get("epsilon", student.epsilon)
        delta = guarantee.get("delta", student.delta)
        return cls(student.model, classes, epsilon=epsilon, delta=delta, mechanism=student.mechanism, report=report)

    @property
    def release(self) -> dict:
        """The release the student came from: the report's ``release`` and ``ledger`` sections
        (empty when the labels were not a release with its ledger)."""
        return {key: self.report[key] for key in ("release", "ledger") if key in self.report}

    def to_joblib(self) -> bytes:
        """The student as joblib bytes (a pickle: loading runs code from the file)."""
        import io

        import joblib

        buffer = io.BytesIO()
        joblib.dump(self, buffer)
        return buffer.getvalue()

    def to_skops(self) -> bytes:
        """The student in skops' format: a dict of the fitted model (scikit-learn objects),
        the class names, (ε, δ), the mechanism and the report as JSON text.  Loading it
        (:meth:`from_skops`) runs no code from the file."""
        import json

        import skops.io as sio

        return sio.dumps({
            "format": STUDENT_FORMAT,
            "model": self.model,
            "classes": [str(c) for c in self.classes_],
            "epsilon": self.epsilon,
            "delta": self.delta,
            "mechanism": self.mechanism,
            "report": json.dumps(self.report, ensure_ascii=False),
        })

    @classmethod
    def from_skops(cls, data: bytes, trusted: list[str] | tuple[str, ...] = ()) -> "PublishedStudent":
        """Load a student written by :meth:`to_skops`, running no code from the file.

        Types of scikit-learn itself (``sklearn.*``) and :data:`TRUSTED_TYPES`
        (``numpy.dtype``, which a fitted imputer holds) are trusted; any other type the
        file names is refused unless listed in ``trusted``.

        Raises
        ------
        DataError
            When the file names a type that is not trusted, or is not a published student.
        """
        import json

        import skops.io as sio

        data = bytes(data)
        unknown = [t for t in sio.get_untrusted_types(data=data)
                   if not t.startswith("sklearn.") and t not in TRUSTED_TYPES and t not in trusted]
        if unknown:
            raise DataError(f"The student file names types that are not scikit-learn's: {', '.join(unknown)}. "
                            "Load it only if you trust them (pass them as trusted).")
        content = sio.loads(data, trusted=list(sio.get_untrusted_types(data=data)))
        if not isinstance(content, dict) or content.get("format") != STUDENT_FORMAT:
            raise DataError("The file is not a published student of private-label-lab.")
        return cls(content["model"], content["classes"], epsilon=content["epsilon"], delta=content["delta"],
                   mechanism=content["mechanism"], report=json.loads(content["report"]))

    def __repr__(self) -> str:
        return (f"PublishedStudent({learner_name(self.model)}, classes={list(self.classes_)}, "
                f"epsilon={self.epsilon:.4g}, delta={self.delta:.3g}, mechanism={self.mechanism!r})")

    @property
    def feature_names_in_(self) -> np.ndarray | None:
        """The columns the student was fitted on, by name (None when it was fitted on an array)."""
        names = getattr(self.model, "feature_names_in_", None)
        return None if names is None else np.asarray(names, dtype=object)

    def _own_columns(self, X: Any) -> Any:
        """A table's columns the student was fitted on, by name and in its order (extra columns left out)."""
        names = self.feature_names_in_
        if names is None or not hasattr(X, "columns"):
            return X
        have = [str(c) for c in X.columns]
        missing = [str(n) for n in names if str(n) not in have]
        if missing:
            raise DataError(f"The table has no column {', '.join(repr(m) for m in missing)}; the student reads "
                            f"the columns {', '.join(map(str, names))} (by name, in any order; others are ignored).")
        return X[list(names)]

    def predict(self, X: Any) -> np.ndarray:
        """Class names predicted for the rows of ``X``.

        A table (pandas DataFrame) gives the student its own columns by name: extra columns
        are ignored and the order does not matter."""
        ids = np.asarray(self.model.predict(self._own_columns(X))).astype(np.int64)
        return self.classes_[ids]

    def predict_codes(self, X: Any) -> np.ndarray:
        """Class ids predicted for the rows of ``X`` (the fitted model's own output)."""
        return np.asarray(self.model.predict(self._own_columns(X)))

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, one column per entry of ``classes_`` (a student whose
        training labels missed a class gets a zero column for it)."""
        if not hasattr(self.model, "predict_proba"):
            raise AttributeError(f"{learner_name(self.model)} gives no probabilities.")
        proba = np.asarray(self.model.predict_proba(self._own_columns(X)), dtype=float)
        seen = np.asarray(getattr(self.model, "classes_", np.arange(proba.shape[1]))).astype(np.int64)
        out = np.zeros((proba.shape[0], len(self.classes_)))
        out[:, seen] = proba
        return out


def _training_labels(result: LabelingResult) -> np.ndarray:
    """Labels as the student sees them: class ids, BOTTOM or UNPROCESSED."""
    labels = np.asarray(result.labels).astype(np.int64, copy=True)
    if result.scores is not None:
        scores = np.asarray(result.scores, dtype=float)
        if scores.shape != labels.shape:
            raise DataError("The labeling's scores and labels have different lengths.")
        answered = labels >= 0
        if np.any(~np.isfinite(scores[answered])):
            raise DataError("The labeling's answered rows must carry a finite score.")
        labels[answered] = (scores[answered] >= SOFT_LABEL_THRESHOLD).astype(np.int64)
    if np.any((labels < 0) & (labels != BOTTOM) & (labels != UNPROCESSED)):
        raise DataError("The labeling holds label values other than class ids, BOTTOM (-1) and UNPROCESSED (-2).")
    return labels


def _semi_model(learner: BaseEstimator, n_unlabeled_neighbours: int) -> BaseEstimator:
    from sklearn.semi_supervised import LabelSpreading, SelfTrainingClassifier

    if hasattr(learner, "predict_proba"):
        return SelfTrainingClassifier(estimator=learner)
    spreading = LabelSpreading(kernel="knn", n_neighbors=n_unlabeled_neighbours)
    steps = getattr(learner, "steps", None)
    if steps:
        from sklearn.pipeline import Pipeline

        return Pipeline(list(steps[:-1]) + [("labelspreading", spreading)])
    return spreading


def train_student(
    X_public: Any,
    result: LabelingResult,
    learner: Any,
    *,
    bottom: str = "drop",
    n_classes: int | None = None,
    rng: RNGLike = None,
) -> Student:
    """Train a student on public points and their private labels (docs/design.md §3.6).

    The student is a post-processing of ``result``: it carries the labeling's (ε, δ)
    and nothing else of the private data.

    Parameters
    ----------
    X_public : array-like or pandas.DataFrame, shape (m, n_features)
        The public points, in the order they were labeled.
    result : LabelingResult
        The private labeling of these points.
    learner : sklearn classifier, Pipeline or str
        The student's learner (cloned), or a name from :data:`core.ensemble.learners.LEARNERS`.
    bottom : {"drop", "random", "semi"}
        What to do with ⊥ rows (see the module docstring).
    n_classes : int, optional
        Number of classes, used to draw random labels for ⊥ rows; default: 2 for soft
        labels, else the largest answered class id + 1 (give it when a class may be
        missing from the answers).
    rng : numpy.random.Generator, int or None
        Source of the random labels and of the student's ``random_state`` (see
        :func:`core.noise.check_rng`).

    Returns
    -------
    Student

    Raises
    ------
    DataError
        When ``X_public`` and ``result`` disagree in length, when fewer than two classes
        were answered (a classifier needs two), or when the learner fails.
    ParameterError
        For an unknown ``bottom`` policy, a bad ``n_classes`` or learner.
    """
    if bottom not in BOTTOM_POLICIES:
        raise ParameterError(f"bottom must be one of {', '.join(BOTTOM_POLICIES)}, got {bottom!r}.")
    if not isinstance(result, LabelingResult):
        raise ParameterError(f"result must be a LabelingResult from core.mechanisms, got {type(result).__name__}.")
    learner = resolve_learner(learner)
    X_public = check_features(X_public, "public points")
    labels = _training_labels(result)
    if num_rows(X_public) != labels.shape[0]:
        raise DataError(
            f"There are {num_rows(X_public)} public points but the labeling has {labels.shape[0]} "
            "answers; pass the same points that were labeled, in the same order."
        )
    answered = labels >= 0
    classes = np.unique(labels[answered])
    if classes.size < 2:
        from core.mechanisms import registry

        trained = result.mechanism in registry.names() and registry.get(result.mechanism).inputs == "rows"
        fix = ("The model trained with DP gave every public row one class: raise epsilon, or try the other "
               "DP-training route or an ensemble's mechanism (the labels are no better than that class alone)."
               if trained else
               "Label more public points, raise epsilon, allow more abstentions (a larger cutoff T) or use more "
               "teachers.")
        raise DataError(
            f"The labeling answered {int(answered.sum())} queries covering {classes.size} class(es); "
            "a student needs answers of at least two classes. " + fix
        )
    if n_classes is None:
        n_classes = 2 if result.scores is not None else int(classes.max()) + 1
    elif isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)) or n_classes <= classes.max():
        raise ParameterError(
            f"n_classes must be a whole number above every answered class id ({int(classes.max())}), got {n_classes!r}."
        )
    n_classes = int(n_classes)

    gen = check_rng(rng)
    model = clone(learner)
    seed_estimator(model, int(gen.integers(0, 2**32)))
    n_random = n_unlabeled = 0
    if bottom == "drop":
        use = answered
        y = labels[use]
    elif bottom == "random":
        is_bottom = labels == BOTTOM
        n_random = int(is_bottom.sum())
        y_all = labels.copy()
        y_all[is_bottom] = gen.integers(0, n_classes, size=n_random)
        use = answered | is_bottom
        y = y_all[use]
    else:  # semi: every row, unlabeled ones marked -1 (BOTTOM)
        use = np.ones(labels.shape[0], dtype=bool)
        y = np.where(answered, labels, BOTTOM)
        n_unlabeled = int((~answered).sum())
        if n_unlabeled:
            model = _semi_model(model, n_unlabeled_neighbours=max(1, min(7, labels.shape[0] - 1)))
    X_train = select_rows(X_public, np.flatnonzero(use)) if not use.all() else X_public
    try:
        model.fit(X_train, y)
    except Exception as exc:
        raise DataError(
            f"The student ({learner_name(model)}) could not be trained on {int(use.sum())} public "
            f"points: {type(exc).__name__}: {exc}"
        ) from None
    return Student(
        model=model,
        n_labeled=int(answered.sum()) + n_random,
        bottom=bottom,
        epsilon=float(result.epsilon),
        delta=float(result.delta),
        mechanism=result.mechanism,
        n_random=n_random,
        n_unlabeled=n_unlabeled,
        n_classes=n_classes,
    )


def _confidence(model: Any, X: Any) -> np.ndarray:
    if hasattr(model, "predict_proba"):
        return np.asarray(model.predict_proba(X), dtype=float).max(axis=1)
    if hasattr(model, "decision_function"):
        scores = np.asarray(model.decision_function(X), dtype=float)
        if scores.ndim == 1:
            return np.abs(scores)
        top2 = np.sort(scores, axis=1)[:, -2:]
        return top2[:, 1] - top2[:, 0]
    raise ParameterError(
        f"{learner_name(model)} gives neither probabilities nor decision scores, so its confidence "
        "cannot be ranked; use a learner with predict_proba."
    )


def least_confident_first(model: Any, X_public: Any) -> np.ndarray:
    """Order public points from the model's least to most confident (PATE Appendix B.3).

    Use: with a limited privacy budget, first label a few public points, train a student
    on them, then send the points this student is least sure about to the private
    aggregator next; labels of points the student already predicts confidently add
    little.  The ordering is computed from the public points and a model trained on
    private *labels* only, so it is a post-processing and costs no privacy.

    Parameters
    ----------
    model : fitted classifier
        Typically ``Student.model``.  Confidence is the largest predicted probability;
        for a model without ``predict_proba`` it is the decision margin (absolute decision
        value for two classes, top minus runner-up score otherwise).
    X_public : array-like or pandas.DataFrame, shape (m, n_features)
        The candidate public points.

    Returns
    -------
    numpy.ndarray of int64, shape (m,)
        Row indices, least confident first; ties keep the input order.

    Raises
    ------
    ParameterError
        When the model offers no confidence at all.
    """
    X_public = check_features(X_public, "public points")
    if num_rows(X_public) == 0:
        return np.zeros(0, dtype=np.int64)
    confidence = _confidence(model, X_public)
    return np.argsort(confidence, kind="stable").astype(np.int64)
