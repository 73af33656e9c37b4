"""The registry of learners that teachers and students can be built from.

(Just past the 500-line aim: most of it is the table of learners and their hyperparameters.)

Every entry of :data:`LEARNERS` is a :class:`LearnerSpec`: a human label, a factory that
returns an unfitted scikit-learn classifier, and the learner's main hyperparameters, each
a :class:`Hyperparameter` with its type, default, range (or choices) and a one-line help
text.  The app builds its controls and the command line its ``key=value`` flags from these
specs, so a learner is described in one place only.

Defaults are chosen for *small chunks*: a teacher may see only about ten private rows
(``n / k``), so every default fits quickly and without errors on a handful of rows.

Learners whose predictions depend on the scale of the features (logistic regression, the
linear SVM, k-nearest neighbours and the MLP) take ``standardize`` (default True): the
numeric features are standardized, the one-hot columns of categories stay 0/1 (a rare
category standardized becomes a column of ±10 that regularization barely restrains, and
small-chunk teachers overfit it).  On a numeric array the factory puts a
:class:`~sklearn.preprocessing.StandardScaler` in front of the learner (a
:class:`~sklearn.pipeline.Pipeline`); behind a table's preprocessing,
:func:`core.pipeline.teacher_model` moves the scaler into the preprocessor's numeric
branch (:meth:`core.data.Table.preprocessor` with ``standardize=True``).

Probabilities.  Soft labels (:meth:`core.ensemble.teacher_ensemble.TeacherEnsemble.scores`), the
semi-supervised student and least-confident-first ordering need ``predict_proba``.  Every
learner offers it except ``linear_svm``: scikit-learn's ``LinearSVC`` has no probabilities,
and calibrating it (``CalibratedClassifierCV``) needs several rows of every class per
cross-validation fold, which a ten-row chunk does not have.  ``linear_svm`` is therefore
left uncalibrated; use ``logistic_regression`` for a linear model with probabilities.
:attr:`LearnerSpec.has_predict_proba` says which is which.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

import numpy as np

from core.errors import ParameterError

if TYPE_CHECKING:  # annotations only: the registry (and the CLI's help) loads without sklearn
    from sklearn.base import BaseEstimator

__all__ = [
    "Hyperparameter",
    "LearnerSpec",
    "LEARNERS",
    "learner_names",
    "make_learner",
    "parse_assignments",
    "standardizes",
]


@dataclass(frozen=True)
class Hyperparameter:
    """One hyperparameter of a learner, as the app and the command line show it.

    Attributes
    ----------
    name : str
        The keyword accepted by :func:`make_learner`.
    type : type
        ``int``, ``float``, ``str`` or ``bool``; values given as text (command line) are
        converted to it.
    default : Any
        The default value (``None`` only when ``allow_none`` is True).
    help : str
        One line describing what the value does.
    min, max : float or None
        Inclusive range for numbers (None: unbounded on that side).
    choices : tuple of str or None
        The allowed values of a ``str`` hyperparameter.
    allow_none : bool
        True when ``None`` is a valid value (e.g. an unlimited tree depth); the text
        ``"none"`` converts to it.
    log_scale : bool
        A hint for sliders: the value spans orders of magnitude.
    """

    name: str
    type: type
    default: Any
    help: str
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] | None = None
    allow_none: bool = False
    log_scale: bool = False

    def convert(self, value: Any, learner: str = "") -> Any:
        """Check ``value`` and return it converted to this hyperparameter's type.

        Parameters
        ----------
        value : Any
            A value of the right type, or text such as ``"10"``, ``"1e-3"``, ``"true"``
            or ``"none"`` (from a command line ``key=value``).
        learner : str
            The learner's name, used in error messages.

        Raises
        ------
        ParameterError
            When the value cannot be converted or lies outside the range or choices.
        """
        where = f"{learner}: " if learner else ""
        text = value.strip() if isinstance(value, str) else None
        if value is None or (text is not None and text.lower() in ("none", "null")):
            if self.allow_none:
                return None
            raise ParameterError(f"{where}{self.name} needs a value ({self._describe()}); None is not allowed.")
        try:
            converted = self._to_type(value, text)
        except (TypeError, ValueError):
            raise ParameterError(
                f"{where}{self.name} must be {self._describe()}, got {value!r}."
            ) from None
        if self.type in (int, float):
            if not math.isfinite(converted):
                raise ParameterError(f"{where}{self.name} must be a finite number, got {value!r}.")
            if (self.min is not None and converted < self.min) or (
                self.max is not None and converted > self.max
            ):
                raise ParameterError(f"{where}{self.name} must be {self._describe()}, got {value!r}.")
        if self.choices is not None and converted not in self.choices:
            raise ParameterError(
                f"{where}{self.name} must be one of {', '.join(self.choices)}; got {value!r}."
            )
        return converted

    def _to_type(self, value: Any, text: str | None) -> Any:
        if self.type is bool:
            if isinstance(value, bool):
                return value
            if text is not None and text.lower() in ("true", "yes", "on", "1"):
                return True
            if text is not None and text.lower() in ("false", "no", "off", "0"):
                return False
            if not isinstance(value, str) and value in (0, 1):
                return bool(value)
            raise ValueError(value)
        if self.type is int:
            if isinstance(value, bool):
                raise TypeError(value)
            if isinstance(value, (int, np.integer)):
                return int(value)
            number = float(text if text is not None else value)
            if not number.is_integer():
                raise ValueError(value)
            return int(number)
        if self.type is float:
            if isinstance(value, bool):
                raise TypeError(value)
            return float(text if text is not None else value)
        if self.type is str:
            if text is None:
                raise TypeError(value)
            return text
        raise TypeError(self.type)  # pragma: no cover - specs only use the four types

    def _describe(self) -> str:
        if self.type is bool:
            return "true or false"
        if self.type is str:
            return "one of " + ", ".join(self.choices or ())
        kind = "a whole number" if self.type is int else "a number"
        if self.min is not None and self.max is not None:
            kind += f" from {self.min:g} to {self.max:g}"
        elif self.min is not None:
            kind += f" of at least {self.min:g}"
        if self.allow_none:
            kind += " (or none)"
        return kind


@dataclass(frozen=True)
class LearnerSpec:
    """A registered learner.

    Attributes
    ----------
    name : str
        Registry key, e.g. ``"logistic_regression"``.
    label : str
        Human-readable name for menus.
    factory : callable
        ``factory(**params)`` returns an unfitted scikit-learn classifier (or a pipeline
        ending in one); ``params`` holds every hyperparameter of the spec.
    hyperparameters : tuple of Hyperparameter
        The main hyperparameters, in display order.
    has_predict_proba : bool
        Whether the learner gives class probabilities (needed for soft labels, the
        semi-supervised student and least-confident-first ordering).
    description : str
        One sentence about the learner.
    """

    name: str
    label: str
    factory: Callable[..., BaseEstimator]
    hyperparameters: tuple[Hyperparameter, ...]
    has_predict_proba: bool
    description: str

    @property
    def defaults(self) -> dict[str, Any]:
        """The default value of every hyperparameter."""
        return {h.name: h.default for h in self.hyperparameters}

    def hyperparameter(self, name: str) -> Hyperparameter:
        """The hyperparameter called ``name`` (ParameterError if there is none)."""
        for h in self.hyperparameters:
            if h.name == name:
                return h
        raise ParameterError(
            f"{self.name} has no hyperparameter {name!r}; it takes "
            f"{', '.join(h.name for h in self.hyperparameters)}."
        )


# --------------------------------------------------------------------------- factories


def _scaled(estimator: BaseEstimator, standardize: bool) -> BaseEstimator:
    if not standardize:
        return estimator
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), estimator)


def _logistic_regression(*, C: float, max_iter: int, standardize: bool) -> BaseEstimator:
    from sklearn.linear_model import LogisticRegression

    return _scaled(LogisticRegression(C=C, max_iter=max_iter), standardize)


def _linear_svm(*, C: float, max_iter: int, standardize: bool) -> BaseEstimator:
    from sklearn.svm import LinearSVC

    return _scaled(LinearSVC(C=C, max_iter=max_iter), standardize)


def _random_forest(*, n_estimators: int, max_depth: int | None, min_samples_leaf: int) -> BaseEstimator:
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(
        n_estimators=n_estimators, max_depth=max_depth, min_samples_leaf=min_samples_leaf
    )


def _gradient_boosting(
    *, max_iter: int, learning_rate: float, max_depth: int | None, min_samples_leaf: int
) -> BaseEstimator:
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(
        max_iter=max_iter,
        learning_rate=learning_rate,
        max_depth=max_depth,
        min_samples_leaf=min_samples_leaf,
    )


def _knn(*, n_neighbors: int, weights: str, standardize: bool) -> BaseEstimator:
    from sklearn.neighbors import KNeighborsClassifier

    return _scaled(KNeighborsClassifier(n_neighbors=n_neighbors, weights=weights), standardize)


def _gaussian_nb(*, var_smoothing: float) -> BaseEstimator:
    from sklearn.naive_bayes import GaussianNB

    return GaussianNB(var_smoothing=var_smoothing)


def _decision_tree(*, max_depth: int | None, min_samples_leaf: int, criterion: str) -> BaseEstimator:
    from sklearn.tree import DecisionTreeClassifier

    return DecisionTreeClassifier(
        max_depth=max_depth, min_samples_leaf=min_samples_leaf, criterion=criterion
    )


def _mlp(
    *, hidden_units: int, hidden_layers: int, alpha: float, solver: str, max_iter: int, standardize: bool
) -> BaseEstimator:
    from sklearn.neural_network import MLPClassifier

    return _scaled(
        MLPClassifier(
            hidden_layer_sizes=(hidden_units,) * hidden_layers,
            alpha=alpha,
            solver=solver,
            max_iter=max_iter,
        ),
        standardize,
    )


_STANDARDIZE = Hyperparameter(
    "standardize", bool, True,
    "Standardize the numeric features (zero mean, unit variance) before fitting; one-hot category columns stay 0/1.",
)
_MAX_DEPTH = Hyperparameter(
    "max_depth", int, None, "Maximum tree depth; none grows until the leaves are pure.", min=1, max=100, allow_none=True
)

LEARNERS: dict[str, LearnerSpec] = {
    spec.name: spec
    for spec in (
        LearnerSpec(
            "logistic_regression",
            "Logistic regression",
            _logistic_regression,
            (
                Hyperparameter("C", float, 1.0, "Inverse regularization strength; smaller means a simpler model.", min=1e-4, max=1e4, log_scale=True),
                Hyperparameter("max_iter", int, 200, "Maximum number of solver iterations.", min=10, max=10_000),
                _STANDARDIZE,
            ),
            True,
            "A linear model with class probabilities; fast and stable on small chunks; numeric features "
            "standardized, category columns left 0/1.",
        ),
        LearnerSpec(
            "linear_svm",
            "Linear SVM",
            _linear_svm,
            (
                Hyperparameter("C", float, 1.0, "Inverse regularization strength; smaller means a wider margin.", min=1e-4, max=1e4, log_scale=True),
                Hyperparameter("max_iter", int, 1000, "Maximum number of solver iterations.", min=10, max=100_000),
                _STANDARDIZE,
            ),
            False,
            "A linear support vector machine (LinearSVC); hard labels only, no probabilities; numeric "
            "features standardized, category columns left 0/1.",
        ),
        LearnerSpec(
            "random_forest",
            "Random forest",
            _random_forest,
            (
                Hyperparameter("n_estimators", int, 20, "Number of trees per teacher.", min=1, max=1000),
                _MAX_DEPTH,
                Hyperparameter("min_samples_leaf", int, 1, "Minimum number of rows in a leaf.", min=1, max=1000),
            ),
            True,
            "An average of randomized decision trees.",
        ),
        LearnerSpec(
            "gradient_boosting",
            "Gradient boosting",
            _gradient_boosting,
            (
                Hyperparameter("max_iter", int, 50, "Number of boosting rounds.", min=1, max=1000),
                Hyperparameter("learning_rate", float, 0.1, "Shrinkage applied to each tree.", min=1e-3, max=1.0, log_scale=True),
                _MAX_DEPTH,
                Hyperparameter("min_samples_leaf", int, 2, "Minimum number of rows in a leaf (scikit-learn's 20 would stop small chunks from splitting).", min=1, max=1000),
            ),
            True,
            "Histogram-based gradient-boosted trees (HistGradientBoostingClassifier).",
        ),
        LearnerSpec(
            "knn",
            "k-nearest neighbours",
            _knn,
            (
                Hyperparameter("n_neighbors", int, 3, "Number of neighbours that vote; at most the rows of the smallest chunk.", min=1, max=1000),
                Hyperparameter("weights", str, "uniform", "uniform: equal votes; distance: closer neighbours count more.", choices=("uniform", "distance")),
                _STANDARDIZE,
            ),
            True,
            "Votes of the nearest training rows.",
        ),
        LearnerSpec(
            "gaussian_nb",
            "Gaussian naive Bayes",
            _gaussian_nb,
            (
                Hyperparameter("var_smoothing", float, 1e-9, "Share of the largest feature variance added to every variance, for stability.", min=1e-12, max=1.0, log_scale=True),
            ),
            True,
            "Independent Gaussian features per class; needs almost no data.",
        ),
        LearnerSpec(
            "decision_tree",
            "Decision tree",
            _decision_tree,
            (
                _MAX_DEPTH,
                Hyperparameter("min_samples_leaf", int, 1, "Minimum number of rows in a leaf.", min=1, max=1000),
                Hyperparameter("criterion", str, "gini", "Split quality measure.", choices=("gini", "entropy", "log_loss")),
            ),
            True,
            "A single classification tree (max_depth=1 gives a decision stump).",
        ),
        LearnerSpec(
            "mlp",
            "Neural network (MLP)",
            _mlp,
            (
                Hyperparameter("hidden_units", int, 32, "Units per hidden layer.", min=1, max=1024),
                Hyperparameter("hidden_layers", int, 1, "Number of hidden layers.", min=1, max=5),
                Hyperparameter("alpha", float, 1e-4, "L2 penalty.", min=1e-8, max=10.0, log_scale=True),
                Hyperparameter("solver", str, "lbfgs", "lbfgs suits small data; adam suits large data.", choices=("lbfgs", "adam")),
                Hyperparameter("max_iter", int, 200, "Maximum number of training iterations.", min=10, max=10_000),
                _STANDARDIZE,
            ),
            True,
            "A small multi-layer perceptron (MLPClassifier).",
        ),
    )
}
"""Registry of learners: name -> :class:`LearnerSpec`."""


def learner_names() -> list[str]:
    """The registered learner names, in display order."""
    return list(LEARNERS)


def _spec(name: Any) -> LearnerSpec:
    spec = LEARNERS.get(name) if isinstance(name, str) else None
    if spec is None:
        raise ParameterError(
            f"Unknown learner {name!r}; choose one of {', '.join(LEARNERS)}."
        )
    return spec


def standardizes(name: str, params: Mapping[str, Any]) -> bool:
    """Whether learner ``name`` with the checked hyperparameters ``params`` standardizes its input
    (its ``standardize``, the default where not given; False for a learner without one)."""
    spec = _spec(name)
    if not any(h.name == "standardize" for h in spec.hyperparameters):
        return False
    return bool(params.get("standardize", spec.defaults["standardize"]))


def make_learner(name: str, **params: Any) -> BaseEstimator:
    """Build an unfitted classifier from the registry.

    Parameters
    ----------
    name : str
        A key of :data:`LEARNERS`.
    **params
        Hyperparameters of that learner (see its spec); missing ones take their
        defaults.  Values may be given as text (``"10"``, ``"1e-3"``, ``"true"``,
        ``"none"``), as they come from a command line ``key=value``; they are converted
        to the hyperparameter's type.

    Returns
    -------
    sklearn estimator
        A fresh, unfitted classifier (a Pipeline when ``standardize`` is True).

    Raises
    ------
    ParameterError
        For an unknown learner or hyperparameter, or a value of the wrong type or out of
        range; the message names the valid choices.

    Examples
    --------
    >>> make_learner("random_forest", n_estimators="20", max_depth="none")
    RandomForestClassifier(n_estimators=20)
    """
    spec = _spec(name)
    values = spec.defaults
    for key, value in params.items():
        values[key] = spec.hyperparameter(key).convert(value, spec.name)
    return spec.factory(**values)


def parse_assignments(name: str, assignments: Iterable[str] | Mapping[str, Any] | None) -> dict[str, Any]:
    """Parse command line ``key=value`` texts into checked hyperparameters of ``name``.

    Parameters
    ----------
    name : str
        A key of :data:`LEARNERS`.
    assignments : iterable of str, mapping or None
        Texts such as ``["C=0.5", "max_iter=500"]`` (or an already split mapping).

    Returns
    -------
    dict
        Hyperparameter name -> converted value, ready for ``make_learner(name, **d)``.

    Raises
    ------
    ParameterError
        For a text without ``=``, a repeated key, an unknown key or a bad value.
    """
    spec = _spec(name)
    if assignments is None:
        return {}
    if isinstance(assignments, Mapping):
        pairs = list(assignments.items())
    else:
        pairs = []
        for text in assignments:
            key, sep, value = str(text).partition("=")
            if not sep or not key.strip():
                raise ParameterError(
                    f"Learner parameter {text!r} must be written key=value, e.g. "
                    f"{spec.hyperparameters[0].name}={spec.hyperparameters[0].default}."
                )
            pairs.append((key.strip(), value))
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ParameterError(f"Learner parameter {key!r} is given twice; give it once.")
        result[key] = spec.hyperparameter(key).convert(value, spec.name)
    return result
