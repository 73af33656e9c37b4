"""A scikit-learn-style estimator for private prediction.

:class:`PrivateEnsembleClassifier` trains the teachers in ``fit`` and answers queries
privately in ``predict``, spending one privacy budget across all calls: the
sparse-vector state (⊥ count, the current round's noisy threshold) and the number of
queries answered persist between calls, and once the mechanism halts every further call
raises :class:`core.errors.BudgetExhausted`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import NotFittedError as _SklearnNotFittedError
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import column_or_1d

from core import noise, pipeline
from core.errors import BudgetExhausted, DataError, NotFittedError, ParameterError
from core.mechanisms import registry
from core.validation import check_m

__all__ = ["PrivateEnsembleClassifier", "EstimatorNotFittedError"]


def _shape(X) -> tuple:
    """The shape of a table, array or array-like (without NumPy's ``ndim`` dispatch)."""
    shape = getattr(X, "shape", None)
    return tuple(shape) if shape is not None else np.asarray(X).shape


class EstimatorNotFittedError(NotFittedError, _SklearnNotFittedError):
    """:class:`core.errors.NotFittedError` that scikit-learn also recognises as its own."""


class PrivateEnsembleClassifier(ClassifierMixin, BaseEstimator):
    """Private predictions from an ensemble of any scikit-learn classifier.

    Parameters
    ----------
    learner : scikit-learn classifier
        Cloned for each of the ``k`` teachers.
    k : int
        Number of teachers (disjoint chunks of the training data).
    mechanism : str
        Any registered mechanism that can answer a stream of queries
        (:func:`core.pipeline.session`): BTT's sparse vector (``"btt"``), the
        advanced-composition baseline, or a per-query mechanism such as LNMax.
    epsilon, delta : float
        The privacy budget for all queries together (BTT and the baseline); for
        LNMax the guarantee follows from ``gamma`` and ``max_queries``.
    T : int
        BTT's cutoff: the maximum number of ⊥ answers.
    max_queries : int
        The most queries that will ever be answered (m in the calibration).
    calibration : {"paper", "tight"}
        BTT's calibration (:func:`core.accounting.calibrate_btt`).
    gamma : float or None
        LNMax noise parameter; None spends ``epsilon`` over ``max_queries``.
    mechanism_params : dict or None
        Further parameters of the mechanism (its registry parameters, e.g. ``sigma``).
    abstain : int
        The value ``predict`` returns for ⊥ (and for queries not processed after the
        budget ran out).
    n_jobs : int or None
        Parallel teacher training.
    rng : Generator, int or None
        Noise and split randomness; None (default) seeds from the operating system.

    Attributes
    ----------
    teachers_ : core.ensemble.teacher_ensemble.TeacherEnsemble
    classes_ : ndarray
        The class labels seen in ``fit``.
    calibration_ : core.accounting.BTTCalibration or None
    privacy_spent_ : tuple (epsilon, delta)
        The a-priori guarantee of the queries processed so far (data-independent; for
        BTT ``min(T, queries)`` rounds, never the realised number of ⊥).
    ledger_ : core.accounting.PrivacyLedger
        The process-wide ledger of the training data (looked up by its fingerprint,
        ``ledger_fingerprint_``, so a pickled estimator holds no lock and finds its
        data's ledger again).
    ledger_total_ : tuple (epsilon, delta)
        The privacy ledger's total on this training data: every ``fit`` on the same data
        (and on clones) charges its whole budget for ``max_queries`` queries, and the
        totals compose (docs/design.md §9).
    n_queries_ : int
        Queries processed so far.
    n_bottom_ : int
        ⊥ answers so far.

    Notes
    -----
    Guarantee: every answer ``predict`` ever returns, over all calls together, is
    ``privacy_spent_``-DP with respect to the training data under replace-one
    adjacency; ``privacy_spent_`` never exceeds (ε, δ).
    """

    def __init__(
        self,
        learner: Any,
        k: int = 100,
        mechanism: str = "btt",
        epsilon: float = 1.0,
        delta: float = 1e-5,
        T: int = 10,
        max_queries: int = 1000,
        calibration: str = "tight",
        gamma: float | None = 0.05,
        mechanism_params: dict | None = None,
        abstain: int = -1,
        n_jobs: int | None = None,
        rng: Any = None,
    ):
        self.learner = learner
        self.k = k
        self.mechanism = mechanism
        self.epsilon = epsilon
        self.delta = delta
        self.T = T
        self.max_queries = max_queries
        self.calibration = calibration
        self.gamma = gamma
        self.mechanism_params = mechanism_params
        self.abstain = abstain
        self.n_jobs = n_jobs
        self.rng = rng

    # ------------------------------------------------------------------ fit
    def _settings(self) -> dict[str, Any]:
        """The mechanism's settings from the estimator's parameters (only those it takes)."""
        mech = registry.get(self.mechanism)
        common = {"epsilon": self.epsilon, "delta": self.delta, "T": self.T,
                  "calibration": self.calibration, "gamma": self.gamma}
        taken = set(mech.parameter_names) | ({"epsilon"} if mech.takes_epsilon else set())
        settings = {name: value for name, value in common.items() if name in taken}
        if mech.spend is not None and any(settings.get(d) is not None for d in mech.derived):
            settings.pop("epsilon", None)  # the noise parameter was given: ε follows from it
        settings.update(self.mechanism_params or {})
        return settings

    def fit(self, X, y, progress=None) -> "PrivateEnsembleClassifier":
        """Train the k teachers on disjoint chunks of ``(X, y)`` and start the budget."""
        from core.ensemble.teachers import train_teachers

        registry.get(self.mechanism)  # a clear error for an unknown name
        if y is None:
            raise DataError("PrivateEnsembleClassifier requires y to be passed, but the target y is None.")
        self._gen = noise.check_rng(self.rng)
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = column_or_1d(y, warn=True)  # a column vector: flattened with sklearn's DataConversionWarning
        if y.ndim != 1:
            raise DataError("y must be one column of class labels.")
        check_classification_targets(y)  # a continuous target: sklearn's "Unknown label type" ValueError
        self.classes_, y_ids = np.unique(y, return_inverse=True)
        shape = _shape(X)
        self.n_features_in_ = int(shape[1]) if len(shape) == 2 else None
        if hasattr(X, "columns"):
            self.feature_names_in_ = np.asarray([str(c) for c in X.columns], dtype=object)
        m_max = check_m(self.max_queries, "max_queries")
        settings = self._settings()
        pipeline.resolve(self.mechanism, settings, m_max)  # refuse bad settings before training
        self.teachers_ = train_teachers(
            X, y_ids, clone(self.learner), self.k, n_classes=len(self.classes_),
            rng=self._gen, n_jobs=self.n_jobs, progress=progress,
        )
        # The private data's ledger continues across fit calls on the same data (and
        # clones): the session's whole a-priori budget is charged now, before any answer.
        from core.accounting import dataset_fingerprint, ledger_for

        self.ledger_fingerprint_ = dataset_fingerprint(np.asarray(X, dtype=object) if not hasattr(X, "dtype") else X, y)
        ledger_for(self.ledger_fingerprint_).charge(pipeline.ledger_entry(self.mechanism, settings, m_max))
        self.session_ = pipeline.session(self.mechanism, settings, m_max, rng=self._gen)
        self.calibration_ = getattr(self.session_, "calibration", None)
        return self

    @property
    def ledger_(self):
        """The privacy ledger of the training data (process-wide, shared by every fit on it)."""
        from core.accounting import ledger_for

        if "ledger_fingerprint_" not in vars(self):
            raise EstimatorNotFittedError("Call fit before asking for ledger_.")
        return ledger_for(self.ledger_fingerprint_)

    @property
    def ledger_total_(self) -> tuple[float, float]:
        """The composition of every run on this training data so far (all fits together)."""
        if "ledger_fingerprint_" not in vars(self):
            raise EstimatorNotFittedError("Call fit before asking for ledger_total_.")
        g = self.ledger_.total()
        return (float(g.epsilon), float(g.delta))

    @property
    def n_queries_(self) -> int:
        return self.session_.n_processed

    @property
    def n_bottom_(self) -> int:
        return self.session_.n_bottom

    @property
    def halted_(self) -> bool:
        return self.session_.halted

    # ------------------------------------------------------------ budget
    @property
    def privacy_spent_(self) -> tuple[float, float]:
        """The a-priori guarantee of every query processed so far (never outcome-dependent)."""
        if not hasattr(self, "teachers_"):
            raise EstimatorNotFittedError("Call fit before asking for privacy_spent_.")
        g = self.session_.spent()
        return (float(g.epsilon), float(g.delta))

    # ----------------------------------------------------------- predict
    def predict(self, X) -> np.ndarray:
        """Answer the queries in ``X`` privately, in order, spending the shared budget.

        Returns the predicted class labels, with ``abstain`` for ⊥ and for queries left
        unprocessed when the budget ran out during this call.

        Raises
        ------
        BudgetExhausted
            If the budget was already spent by earlier calls.
        """
        if not hasattr(self, "teachers_"):
            raise EstimatorNotFittedError("This PrivateEnsembleClassifier is not fitted yet; call fit(X, y) first.")
        shape = _shape(X)
        if self.n_features_in_ is not None and len(shape) == 2 and shape[1] != self.n_features_in_:
            raise DataError(f"X has {shape[1]} features, but PrivateEnsembleClassifier is expecting "
                            f"{self.n_features_in_} features as input.")
        if self.halted_:
            raise BudgetExhausted(
                f"The privacy budget is spent after {self.n_queries_} queries "
                f"({self.n_bottom_} abstentions): no further query can be answered. "
                "Fit a new classifier (on fresh private data) to answer more."
            )
        ids = self.session_.answer(self.teachers_.vote_counts(X))
        out = np.empty(ids.shape[0], dtype=self.classes_.dtype if self.classes_.dtype.kind in "iu" else object)
        answered = ids >= 0
        out[answered] = self.classes_[ids[answered]]
        out[~answered] = self.abstain
        return out
