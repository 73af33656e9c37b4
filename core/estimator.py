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

from . import accounting, noise
from .aggregators import BOTTOM, UNPROCESSED, _a_stab, lnmax_label, sparse_vector_scan
from .errors import BudgetExhausted, DataError, NotFittedError, ParameterError
from .stability import plurality_and_distance
from .validation import check_counts, check_delta, check_gamma, check_m, check_T

__all__ = ["PrivateEnsembleClassifier"]

_MECHANISMS = ("btt", "lnmax", "baseline")


class PrivateEnsembleClassifier(ClassifierMixin, BaseEstimator):
    """Private predictions from an ensemble of any scikit-learn classifier.

    Parameters
    ----------
    learner : scikit-learn classifier
        Cloned for each of the ``k`` teachers.
    k : int
        Number of teachers (disjoint chunks of the training data).
    mechanism : {"btt", "lnmax", "baseline"}
        BTT sparse-vector labeling (hard labels), PATE's LNMax, or the
        advanced-composition baseline (DESIGN §3.2, §3.4, §3.5).
    epsilon, delta : float
        The privacy budget for all queries together (BTT and the baseline); for
        LNMax the guarantee follows from ``gamma`` and ``max_queries``.
    T : int
        BTT's cutoff: the maximum number of ⊥ answers.
    max_queries : int
        The most queries that will ever be answered (m in the calibration).
    calibration : {"paper", "tight"}
        BTT's calibration (:func:`core.accounting.calibrate_btt`).
    gamma : float
        LNMax noise parameter.
    abstain : int
        The value ``predict`` returns for ⊥ (and for queries not processed after the
        budget ran out).
    n_jobs : int or None
        Parallel teacher training.
    rng : Generator, int or None
        Noise and split randomness; None (default) seeds from the operating system.

    Attributes
    ----------
    teachers_ : core.teachers.TeacherEnsemble
    classes_ : ndarray
        The class labels seen in ``fit``.
    calibration_ : core.accounting.BTTCalibration or None
    privacy_spent_ : tuple (epsilon, delta)
        The guarantee for everything answered so far (data-independent).
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
        gamma: float = 0.05,
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
        self.abstain = abstain
        self.n_jobs = n_jobs
        self.rng = rng

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, progress=None) -> "PrivateEnsembleClassifier":
        """Train the k teachers on disjoint chunks of ``(X, y)`` and reset the budget."""
        from .teachers import train_teachers

        if self.mechanism not in _MECHANISMS:
            raise ParameterError(f"mechanism must be one of {_MECHANISMS}, got {self.mechanism!r}.")
        self._gen = noise.check_rng(self.rng)
        y = np.asarray(y)
        if y.ndim != 1:
            raise DataError("y must be one column of class labels.")
        self.classes_, y_ids = np.unique(y, return_inverse=True)
        m_max = check_m(self.max_queries, "max_queries")
        self.teachers_ = train_teachers(
            X, y_ids, clone(self.learner), self.k, n_classes=len(self.classes_),
            rng=self._gen, n_jobs=self.n_jobs, progress=progress,
        )
        self.calibration_ = None
        if self.mechanism == "btt":
            T = check_T(self.T)
            self.calibration_ = accounting.calibrate_btt(self.epsilon, self.delta, T, m_max, self.calibration)
            self._thresholds = self.calibration_.threshold + noise.discrete_laplace(
                self.calibration_.noise_scale, T, self._gen
            )
        elif self.mechanism == "baseline":
            self._baseline = accounting.composition_baseline_parameters(self.epsilon, self.delta, m_max)
        else:
            check_gamma(self.gamma)
            check_delta(self.delta)
        self.n_queries_ = 0
        self.n_bottom_ = 0
        self.halted_ = False
        return self

    # ------------------------------------------------------------ budget
    @property
    def privacy_spent_(self) -> tuple[float, float]:
        if not hasattr(self, "teachers_"):
            raise NotFittedError("Call fit before asking for privacy_spent_.")
        n = self.n_queries_
        if n == 0:
            return (0.0, 0.0)
        if self.mechanism == "btt":
            cal = self.calibration_
            rounds = min(self.n_bottom_ + 1, cal.rounds)
            g = accounting.btt_guarantee(cal.noise_scale, cal.threshold, rounds, n, cal.guarantee.parts["delta_svt"])
            return (min(g.epsilon, cal.epsilon), min(g.delta, cal.delta))
        if self.mechanism == "baseline":
            b = self._baseline
            eps_basic = b["eps0"] * n
            if b["composition"] == "basic":
                return (eps_basic, n * b["delta0"])
            eps_adv = float(accounting.advanced_composition_epsilon(b["eps0"], n, b["delta_prime"]))
            if eps_basic <= eps_adv:
                return (eps_basic, n * b["delta0"])
            return (eps_adv, n * b["delta0"] + b["delta_prime"])
        return (accounting.lnmax_guarantee(self.gamma, n, self.delta).epsilon, float(self.delta))

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
            raise NotFittedError("This PrivateEnsembleClassifier is not fitted yet; call fit(X, y) first.")
        if self.halted_:
            raise BudgetExhausted(
                f"The privacy budget is spent after {self.n_queries_} queries "
                f"({self.n_bottom_} abstentions): no further query can be answered. "
                "Fit a new classifier (on fresh private data) to answer more."
            )
        counts = self.teachers_.vote_counts(X)
        m = counts.shape[0]
        room = self.max_queries - self.n_queries_
        ids = np.full(m, UNPROCESSED, dtype=np.int64)
        take = min(m, room)
        part = counts[:take]
        if take > 0:
            if self.mechanism == "btt":
                cal = self.calibration_
                top, dist = plurality_and_distance(part)
                zq = noise.discrete_laplace(2.0 * cal.noise_scale, take, self._gen)
                status, halted_at = sparse_vector_scan(dist + zq, self._thresholds[self.n_bottom_ :], cal.rounds - self.n_bottom_)
                ids[:take] = np.where(status == 1, top, np.where(status == 0, BOTTOM, UNPROCESSED))
                processed = take if halted_at is None else halted_at + 1
                self.n_bottom_ += int(np.count_nonzero(status == 0))
                self.n_queries_ += processed
                if halted_at is not None:
                    self.halted_ = True
            elif self.mechanism == "baseline":
                b = self._baseline
                ids[:take] = _a_stab(check_counts(part, equal_totals=False), b["eps0"], b["threshold"], self._gen)
                self.n_bottom_ += int(np.count_nonzero(ids[:take] == BOTTOM))
                self.n_queries_ += take
            else:
                res = lnmax_label(part, self.gamma, delta=self.delta, rng=self._gen)
                ids[:take] = res.labels
                self.n_queries_ += take
        if self.n_queries_ >= self.max_queries:
            self.halted_ = True
        out = np.empty(m, dtype=self.classes_.dtype if self.classes_.dtype.kind in "iu" else object)
        answered = ids >= 0
        out[answered] = self.classes_[ids[answered]]
        out[~answered] = self.abstain
        return out
