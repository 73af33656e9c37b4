"""A scikit-learn-style estimator for private prediction.

:class:`PrivateEnsembleClassifier` trains the teachers in ``fit`` and answers queries
privately in ``predict``, spending one privacy budget across all calls.  The state that
bounds that budget (the sparse vector's rounds and noisy thresholds, the queries
answered) lives in the privacy ledger (:class:`core.ledger.PrivacyLedger`), not in
the estimator: a copy of a fitted estimator (``copy.deepcopy``, ``pickle``, ``clone``'s
ledger parameter) continues the same budget and cannot restart it.  Every ``fit`` is
charged to the ledger before it reads a row: without privacy-unit IDs against the whole
dataset (so a fit on any copy, subset, transformation or bootstrap sample of the data is
counted in full), with IDs (``groups``, routed by scikit-learn's metadata routing) against
the units it trains on, so that folds of ``GroupKFold`` compose in parallel
(docs/design.md §9, §13).

Every fit is counted wherever it runs (docs/design.md §13): with a stored ledger a fit in
a worker process (scikit-learn's ``n_jobs``, Dask) or in an unpickled copy charges the
same store; with an in-memory ledger such a fit, and an answer from such a copy, is
refused before it reads a row (:class:`core.errors.LedgerUnreachable`).  Inside
scikit-learn's model selection the plain route warns that its scores are not covered,
label-dependent folds are refused, and a refusal stops the search
(:mod:`core.pipeline.model_selection`; the covered route is
:class:`core.pipeline.PrivateSearchCV`).

References
----------
.. [BTT18] R. Bassily, O. Thakkar, A. Thakurta. Model-Agnostic Private Learning. NeurIPS 2018.
.. [PATE18] N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar, Ú. Erlingsson.
   Scalable Private Learning with PATE. ICLR 2018.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import NotFittedError as _SklearnNotFittedError
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import column_or_1d

from core import noise
from core.errors import BudgetExhausted, DataError, LedgerUnreachable, NotFittedError, ParameterError, PrivacyWarning
from core.mechanisms import registry
from core.pipeline import runs as pipeline
from core.pipeline.model_selection import check_search, in_model_selection, refusals_stop_search
from core.validation import check_m

__all__ = ["PrivateEnsembleClassifier", "EstimatorNotFittedError", "PrivacyWarning"]


def process_id() -> str:
    from core.ledger.ledger import process_id as _pid

    return _pid()

#: The privacy settings the estimator takes itself, and their defaults (the budget, ε and δ,
#: has none: a fit states it, as every entry point does; core.pipeline.BUDGET).
_OWN_SETTINGS = {"epsilon": None, "delta": None, "T": 10, "calibration": "tight", "gamma": None}


def _shape(X) -> tuple:
    """The shape of a table, array or array-like (without NumPy's ``ndim`` dispatch)."""
    shape = getattr(X, "shape", None)
    return tuple(shape) if shape is not None else np.asarray(X).shape


def _privacy_units(groups, n_rows: int) -> Any:
    """The fit's privacy units (one ID per row), or None (the whole dataset).

    The same IDs go to the ledger (each unit charged the fit) and to the teachers'
    partition (``train_teachers(..., units=)``: all of a unit's rows in one chunk, so one
    unit changes one teacher, docs/design.md §1.2).
    """
    if groups is None:
        return None
    units = groups.to_numpy() if hasattr(groups, "to_numpy") else groups
    try:
        n = len(units)
    except TypeError:
        raise DataError("groups must hold one privacy-unit ID per row of X.") from None
    if n != n_rows:
        raise DataError(f"groups must hold one privacy-unit ID per row: {n_rows} rows, got {n} IDs.")
    return units


class EstimatorNotFittedError(NotFittedError, _SklearnNotFittedError):
    """:class:`core.errors.NotFittedError` that scikit-learn also recognises as its own."""


NOISY_MAX = ("lnmax", "gnmax", "confident-gnmax", "certified-gnmax")
"""Mechanisms that answer the noisy argmax over every class column, so a class without a vote
can be answered: with classes read from ``y`` their answers show which classes the private rows
hold (``PrivateEnsembleClassifier(classes=...)`` declares them)."""


def _classes_of(y: np.ndarray, declared: Any, mechanism: str) -> tuple[np.ndarray, np.ndarray]:
    """The classes (declared, else those of ``y``) and each row's index into them.

    The set of classes ``y`` holds is private: replacing the only row of a class removes it,
    and a noisy-max mechanism answers each class column it is given, so with the classes of
    ``y`` a class held by one person shows in the answers with a probability the (ε, δ)
    guarantee does not bound (its output space is not that of the neighbour's run).  Declared
    classes are public and the same on both neighbours.
    """
    if declared is None:
        classes, y_ids = np.unique(y, return_inverse=True)
        if mechanism in NOISY_MAX:
            warnings.warn(
                f"classes= not given: the classes are read from y, and {mechanism} answers each of them, a class "
                "without a vote included, so its answers show which classes the private rows hold (a class held by "
                "one person appears or not), outside the (ε, δ) guarantee. Declare the classes: "
                "PrivateEnsembleClassifier(..., classes=[...]).", PrivacyWarning, stacklevel=4)
        return classes, np.asarray(y_ids).ravel()
    classes = np.asarray(declared)
    if classes.ndim != 1 or classes.size < 2 or np.unique(classes).size != classes.size:
        raise ParameterError(f"classes must list at least two distinct classes, got {declared!r}.")
    classes = np.sort(classes)
    try:
        pos = np.searchsorted(classes, y)
    except TypeError:
        raise DataError("y's labels cannot be compared with the declared classes (mixed types).") from None
    ok = (pos < classes.size) & (classes[np.minimum(pos, classes.size - 1)] == y)
    if not ok.all():
        raise DataError("y holds a label that is not one of the declared classes; nothing was charged. Add it to "
                        "classes= (every value the label may take) or correct the rows.")
    return classes, pos.astype(np.int64)


class PrivateEnsembleClassifier(ClassifierMixin, BaseEstimator):
    """Private predictions from an ensemble of any scikit-learn classifier.

    What is asked is what is spent: a target ``epsilon`` decides the mechanism's noise
    (LNMax's γ, GNMax's σ) for ``max_queries`` queries; giving the noise as well is
    refused naming both values (set ``epsilon=None`` to let the noise decide).  A setting
    the mechanism does not take is refused with the nearest valid name, and
    :attr:`settings_` holds exactly the parameters that run.

    Preprocessing belongs inside the learner, so that each teacher fits it on its own
    chunk::

        PrivateEnsembleClassifier(make_pipeline(StandardScaler(), LogisticRegression()), ...)

    A transformer fitted on all private rows *before* the ensemble (``Pipeline([("scale",
    StandardScaler()), ("private", PrivateEnsembleClassifier(...))])``) voids the
    guarantee: its fitted means and scales depend on every row, so one changed row can
    change every teacher's vote, where the proof assumes it changes one teacher's
    (docs/design.md §13).  Only a transformer fitted on public data, or none, may come
    first.

    A fitted classifier is itself PRIVATE: its teachers are models trained without
    privacy on the private chunks, ``teachers_.vote_counts`` gives their raw votes (the
    aggregators' input, neither private nor charged), and it holds the privacy units'
    IDs, and with an in-memory ledger the run's state.  Pickling it to a worker process
    (joblib, Dask) is what parallel model selection does; writing it to a file others
    read, or publishing it, releases all of that.  What may leave is what ``predict``
    answers, or a student trained on those answers
    (:class:`core.ensemble.student.PublishedStudent`).

    Parameters
    ----------
    learner : scikit-learn classifier
        Cloned for each of the ``k`` teachers (put any preprocessing inside it).
    k : int
        Number of teachers (disjoint chunks of the training data).
    mechanism : str
        Any registered mechanism that can answer a stream of queries
        (:func:`core.pipeline.session`): BTT's sparse vector (``"btt"``), the
        advanced-composition baseline, or a per-query mechanism such as LNMax or GNMax.
    epsilon : float or None
        The privacy budget for all ``max_queries`` queries together; for a mechanism
        whose noise follows from ε (LNMax, GNMax, Confident-GNMax) it decides the noise.
        None (default): the noise given (``gamma`` or in ``mechanism_params``) decides ε;
        with no noise given either, ``fit`` is refused: the budget has no default.
    delta : float or None
        The δ of the budget, required by every mechanism that takes one (None, the
        default, is refused by ``fit`` with the mechanism's name): keep it well below
        1/(number of private rows).
    T : int
        BTT's cutoff: the maximum number of ⊥ (only for mechanisms that take it).
    max_queries : int
        The most queries that will ever be answered (m in the calibration).
    calibration : {"tight", "paper"}
        BTT's calibration (:func:`core.accounting.calibrate_btt`); "tight" as everywhere.
    gamma : float or None
        LNMax's noise parameter, with ``epsilon=None`` (else refused: ε decides γ).
    mechanism_params : dict or None
        Further parameters of the mechanism (its registry parameters, e.g. ``sigma``);
        an unknown name is refused, and so is one of the estimator's own settings.
    abstain : int
        The value ``predict`` returns for ⊥ (and for queries not processed after the
        budget ran out); ``fit`` warns when it is one of the classes of ``y`` (an
        abstention would then read as that class).
    classes : array-like or None
        The declared classes (public: the data owner lists them, e.g. every value the
        label may take).  Given, ``classes_`` is their sorted list whatever ``y`` holds
        (a class no row has keeps its column; a label outside them is refused).  None:
        the classes ``y`` holds, which are private under replace-one adjacency -- a
        neighbour that replaces the only row of a class has one class fewer -- and a
        noisy-max mechanism (:data:`NOISY_MAX`) answers every class the fit saw, a class
        without a vote included: its answers would then show whether anyone has that
        class, outside the (ε, δ) guarantee.  ``fit`` warns of it
        (:class:`core.errors.PrivacyWarning`) for those mechanisms.
    n_jobs : int or None
        Parallel teacher training.
    rng : Generator, int or None
        Noise and split randomness; None (default) seeds from the operating system.
    ledger : core.ledger.PrivacyLedger or None
        The ledger of the private dataset every ``fit`` is charged to (as diffprivlib's
        models take ``accountant=``), e.g. ``PrivacyLedger("credit", store=path)``; None:
        the process's in-memory ledger (:func:`core.ledger.default_ledger`).  A ledger
        with a budget refuses a ``fit`` that would take the data (or, with ``groups``, a
        unit it trains on) past it, before training.  Parallel or multi-process work
        (``n_jobs`` of a search, Dask, a pickled copy in another process) needs a stored
        ledger: with an in-memory one (or None) a fit or an answer there is refused
        (:class:`core.errors.LedgerUnreachable`), never silently uncounted.
    on_refusal : {"stop", "raise"}
        Inside scikit-learn's model selection, a refused fit or answer (a spent budget, a
        ledger out of reach) stops the whole search as :class:`core.errors.SearchStopped`
        (``"stop"``, the default: a numeric ``error_score`` cannot turn it into a NaN
        score); ``"raise"`` raises the plain exception, which such a search records as a
        failed fit and goes on.  Outside model selection both raise the refusal.

    Attributes
    ----------
    teachers_ : core.ensemble.teacher_ensemble.TeacherEnsemble
    classes_ : ndarray
        The class labels seen in ``fit``.
    settings_ : dict
        The mechanism's parameters as they run (the noise derived from ε included).
    calibration_ : core.accounting.BTTCalibration or None
    privacy_spent_ : tuple (epsilon, delta)
        The a-priori guarantee of the queries processed so far (data-independent; for
        BTT ``min(T, queries)`` rounds, never the realised number of ⊥).
    ledger_ : core.ledger.PrivacyLedger
        The ledger this fit was charged to (it holds the budget's state).
    ledger_total_ : tuple (epsilon, delta)
        The guarantee of the training data over every run charged to it so far (with
        ``groups``: the largest of its units'): every ``fit`` charges its whole budget
        for ``max_queries`` queries before it reads a row (docs/design.md §13).
    n_queries_ : int
        Queries processed so far.
    n_bottom_ : int
        ⊥ answers so far.

    Warns
    -----
    PrivacyWarning
        When a ``predict`` call answers none of its queries, halts before its last query
        (the budget ran out) or fails a certified test: with the mechanism's reason.  When
        scikit-learn's model selection clones it (its scores are not covered).

    Notes
    -----
    Guarantee: every answer ``predict`` ever returns, over all calls and all copies of
    the fitted estimator in one process together, is ``privacy_spent_``-DP with respect
    to the training data under replace-one adjacency; ``privacy_spent_`` never exceeds
    the target.  A copy in another process (pickled, a worker) cannot continue that run:
    the run's state (its noise) never leaves its process.  With a stored ledger the
    copy's first ``predict`` charges a new run of the same a-priori map to the store
    (refused past its budget) and answers with fresh operating-system randomness; with
    an in-memory ledger it is refused.  The ledger's total covers every run.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from core.ledger import PrivacyLedger
    >>> ledger = PrivacyLedger("credit", budget_epsilon=4.0, budget_delta=1e-5)
    >>> clf = PrivateEnsembleClassifier(make_pipeline(StandardScaler(), LogisticRegression()),
    ...                                 k=100, mechanism="gnmax", epsilon=2.0, max_queries=500,
    ...                                 ledger=ledger)  # doctest: +SKIP
    """

    def __init__(
        self,
        learner: Any,
        k: int = 100,
        mechanism: str = "btt",
        epsilon: float | None = None,
        delta: float | None = None,
        T: int = 10,
        max_queries: int = 1000,
        calibration: str = "tight",
        gamma: float | None = None,
        mechanism_params: dict | None = None,
        abstain: int = -1,
        n_jobs: int | None = None,
        rng: Any = None,
        ledger: Any = None,
        on_refusal: str = "stop",
        classes: Any = None,
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
        self.ledger = ledger
        self.on_refusal = on_refusal
        self.classes = classes

    # ------------------------------------------------------- other processes
    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state.setdefault("_origin", process_id())  # the process whose default ledger ledger=None means
        return state

    def __sklearn_clone__(self):
        check_search()  # inside scikit-learn's model selection: stratified folds refused, the plain route warned
        new = super().__sklearn_clone__()
        if "_origin" in vars(self):
            new._origin = self._origin
        return new

    def _ledger_here(self):
        """The ledger a fit here charges, or :class:`LedgerUnreachable` (before any row is read)."""
        from core.ledger import PrivacyLedger, default_ledger

        if self.ledger is None:
            if vars(self).get("_origin", process_id()) != process_id():
                raise LedgerUnreachable(
                    "PrivateEnsembleClassifier.fit runs in another process than the one that built it (a worker of "
                    "scikit-learn's n_jobs, a Dask worker, an unpickled copy) with ledger=None, whose in-memory "
                    "ledger lives in that first process and would never see this fit. Nothing was run. Give it a "
                    "ledger store, ledger=PrivacyLedger(\"name\", store=path), whose charges reach the same file "
                    "from every process, or run it in one process (n_jobs=1).")
            ledger = default_ledger()
        else:
            ledger = self.ledger
        if not isinstance(ledger, PrivacyLedger):
            raise ParameterError(f"ledger must be a core.ledger.PrivacyLedger or None, got {type(ledger).__name__}.")
        ledger.require_here("PrivateEnsembleClassifier.fit")
        return ledger

    # ------------------------------------------------------------------ fit
    def _settings(self) -> dict[str, Any]:
        """The mechanism's request from the estimator's parameters: what is asked runs.

        Raises
        ------
        ParameterError
            A setting the mechanism does not take (set away from its default), an
            estimator setting repeated in ``mechanism_params``, or an unknown name.
        """
        mech = registry.get(self.mechanism)
        takes = set(mech.parameter_names) | ({"epsilon"} if mech.takes_epsilon else set())
        extra = dict(self.mechanism_params or {})
        for name in sorted(set(extra) & set(_OWN_SETTINGS)):
            raise ParameterError(
                f"{name} is a parameter of the estimator itself: set {name}={extra[name]!r} instead of "
                f"mechanism_params[{name!r}] (get_params() then shows what runs).")
        settings: dict[str, Any] = {}
        for name, default in _OWN_SETTINGS.items():
            value = getattr(self, name)
            if name in takes:
                if value is not None:
                    settings[name] = value
            elif value is not None and value != default:
                raise ParameterError(f"{name} = {value!r} does not apply to {mech.name}, which takes "
                                     f"{', '.join(sorted(takes))}.")
        settings.update(extra)
        return settings

    def _resolve(self, settings: dict[str, Any], m_max: int) -> dict[str, Any]:
        try:
            return pipeline.resolve(self.mechanism, settings, m_max, strict=True)
        except ParameterError as exc:
            if "decide each other" in str(exc):
                raise ParameterError(f"{exc} In the estimator, set epsilon=None to let the noise decide, "
                                     "or leave the noise unset to let epsilon decide it.") from None
            if "no default" in str(exc) or "needs epsilon" in str(exc):
                raise ParameterError(f"PrivateEnsembleClassifier(mechanism={self.mechanism!r}): {exc} "
                                     "Give epsilon= and delta= (or the noise that decides ε) when you build "
                                     "the estimator.") from None
            raise

    def planned_entry(self):
        """The ledger entry every ``fit`` charges (for ``max_queries`` queries), from the
        parameters alone: nothing is read or charged.

        Returns
        -------
        core.ledger.LedgerEntry

        Raises
        ------
        ParameterError
            As ``fit`` would, for settings it refuses.
        """
        registry.get(self.mechanism)
        m_max = check_m(self.max_queries, "max_queries")
        settings = self._settings()
        self._resolve(settings, m_max)
        return pipeline.ledger_entry(self.mechanism, settings, m_max, strict=True)

    def fit(self, X, y, groups=None, progress=None) -> "PrivateEnsembleClassifier":
        """Train the k teachers on disjoint chunks of ``(X, y)`` and start the budget.

        The run's whole a-priori budget (for ``max_queries`` queries) is charged to the
        ledger before any row is read; a ledger budget this fit would pass refuses it
        (:class:`BudgetExhausted`) and nothing is trained.

        Parameters
        ----------
        X : array-like or DataFrame, shape (n, p)
        y : array-like, shape (n,)
        groups : array-like, shape (n,), optional
            The privacy unit of each row (e.g. a person ID): the teachers' chunks hold
            whole units (one unit changes one teacher, docs/design.md §1.2), the fit is
            charged to these units only, and each unit's own fits compose
            (docs/design.md §9).  Routed by
            scikit-learn's metadata routing: with
            ``sklearn.set_config(enable_metadata_routing=True)`` and
            ``clf.set_fit_request(groups=True)``, ``cross_validate(clf, X, y,
            params={"groups": ids}, cv=GroupKFold(5))`` hands each fold its units' IDs
            (and GroupKFold its groups), so disjoint folds compose in parallel.  None:
            the fit counts against the whole dataset.
        progress : callable, optional
            ``progress(done, total)`` during training.
        """
        with refusals_stop_search(self.on_refusal):
            return self._fit(X, y, groups, progress)

    def _fit(self, X, y, groups, progress) -> "PrivateEnsembleClassifier":
        from core.ensemble.teachers import train_teachers

        registry.get(self.mechanism)  # a clear error for an unknown name
        ledger = self._ledger_here()
        if y is None:
            raise DataError("PrivateEnsembleClassifier requires y to be passed, but the target y is None.")
        gen = noise.check_rng(self.rng)
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = column_or_1d(y, warn=True)  # a column vector: flattened with sklearn's DataConversionWarning
        if y.ndim != 1:
            raise DataError("y must be one column of class labels.")
        check_classification_targets(y)  # a continuous target: sklearn's "Unknown label type" ValueError
        m_max = check_m(self.max_queries, "max_queries")
        settings = self._settings()
        params = self._resolve(settings, m_max)  # refuse bad settings before training
        entry = pipeline.ledger_entry(self.mechanism, settings, m_max, strict=True)
        classes, y_ids = _classes_of(y, self.classes, self.mechanism)
        if np.any(classes == self.abstain):  # predict's output cannot tell ⊥ from that class
            warnings.warn(f"abstain={self.abstain!r} is one of the classes of y: in predict's output an abstention "
                          "(⊥) reads as that class, and a score computed from it counts ⊥ as right where that class "
                          "is the truth. Pass abstain= a value that is not a class (e.g. abstain=-999).", UserWarning,
                          stacklevel=3)
        units = _privacy_units(groups, y.shape[0])
        ledger.charge(entry, units=units)  # the whole a-priori budget, committed before any row is read
        teachers = train_teachers(
            X, y_ids, clone(self.learner), self.k, n_classes=len(classes),
            rng=gen, n_jobs=self.n_jobs, progress=progress, units=units,
        )
        session = pipeline.session(self.mechanism, settings, m_max, rng=gen, strict=True)
        self.classes_ = classes
        shape = _shape(X)
        self.n_features_in_ = int(shape[1]) if len(shape) == 2 else None
        if hasattr(X, "columns"):
            self.feature_names_in_ = np.asarray([str(c) for c in X.columns], dtype=object)
        self.teachers_ = teachers
        self.settings_ = dict(params)
        self.ledger_ = ledger
        self._units = units
        self._run = (settings, m_max, entry, self.mechanism)  # what a copy in another process charges and runs
        self._session_key = ledger.open_session(session)
        self.calibration_ = getattr(session, "calibration", None)
        return self

    def _fitted(self, what: str) -> None:
        if "_session_key" not in vars(self):
            raise EstimatorNotFittedError(f"Call fit before asking for {what}.")

    @property
    def session_(self):
        """The running session (its state is kept by the ledger in the process that runs it),
        or None in a copy in another process that has not answered yet."""
        self._fitted("session_")
        try:
            return self.ledger_.session(self._session_key)
        except ParameterError:
            return None

    def _answering_session(self):
        """The session that answers here: the run's own in its process; in a copy elsewhere
        (stored ledger) a new run of the same map, charged first (docstring, Notes)."""
        led = self.ledger_
        session = led.local_session(self._session_key)  # LedgerUnreachable on an in-memory ledger's copy
        if session is None:
            settings, m_max, entry, mechanism = self._run  # the fitted run's, whatever set_params changed since
            led.charge(entry, units=self._units)  # BudgetExhausted past the budget: nothing answered
            session = pipeline.session(mechanism, settings, m_max, rng=np.random.default_rng(), strict=True)
            self._session_key = led.open_session(session)
        return session

    @property
    def ledger_total_(self) -> tuple[float, float]:
        """The guarantee of the training data over every run charged to it (with ``groups``:
        the largest of its units')."""
        self._fitted("ledger_total_")
        g = self.ledger_.total(units=self._units)
        return (float(g.epsilon), float(g.delta))

    @property
    def n_queries_(self) -> int:
        s = self.session_
        return 0 if s is None else s.n_processed

    @property
    def n_bottom_(self) -> int:
        s = self.session_
        return 0 if s is None else s.n_bottom

    @property
    def halted_(self) -> bool:
        s = self.session_
        return False if s is None else s.halted

    # ------------------------------------------------------------ budget
    @property
    def privacy_spent_(self) -> tuple[float, float]:
        """The a-priori guarantee of every query processed so far (never outcome-dependent)."""
        s = self.session_
        if s is None:
            return (0.0, 0.0)
        g = s.spent()
        return (float(g.epsilon), float(g.delta))

    # ----------------------------------------------------------- predict
    def _nothing_reason(self, session, counts: np.ndarray) -> str:
        """The pipeline's reason why a run answers nothing (or a plain one)."""
        from core.mechanisms.result import btt_remedies, infeasible_reason

        result = getattr(session, "result", None)
        if result is not None and getattr(result, "reason", None):
            return str(result.reason)
        k = int(counts[0].sum()) if counts.size else int(self.k)
        cal = getattr(session, "calibration", None)
        if cal is not None and hasattr(cal, "threshold"):
            why = infeasible_reason(k, cal.threshold, f"{self.mechanism} at (ε={self.epsilon:g}, δ={self.delta:g}, "
                                    f"T={self.T}, m={self.max_queries})", btt_remedies(self.calibration))
            if why:
                return why
        par = getattr(session, "parameters", None)
        if par is not None and hasattr(par, "threshold"):
            why = infeasible_reason(k, par.threshold, f"the composition baseline at (ε={self.epsilon:g}, "
                                    f"δ={self.delta:g}, m={self.max_queries})", "raise ε or lower max_queries")
            if why:
                return why
        return ("the teachers did not agree strongly enough for the noise this budget allows; raise ε or the "
                "number of teachers k, or lower max_queries.")

    def predict(self, X) -> np.ndarray:
        """Answer the queries in ``X`` privately, in order, spending the shared budget.

        Returns the predicted class labels, with ``abstain`` for ⊥ and for queries left
        unprocessed when the budget ran out during this call (:meth:`answer_ids` gives
        the class indices with ⊥ apart).
        """
        ids = self.answer_ids(X)
        answered = ids >= 0
        out = np.empty(ids.shape[0], dtype=self.classes_.dtype if self.classes_.dtype.kind in "iu" else object)
        out[answered] = self.classes_[ids[answered]]
        out[~answered] = self.abstain
        return out

    def answer_ids(self, X) -> np.ndarray:
        """Answer the queries in ``X`` privately, as indices into :attr:`classes_` (negative: ⊥ or unprocessed).

        The same answers as :meth:`predict` (one call spends the same budget), with an
        abstention told apart from every class whatever ``abstain`` is.

        Raises
        ------
        BudgetExhausted
            If the budget was already spent by earlier calls (or by a copy).

        Warns
        -----
        PrivacyWarning
            When this call answers none of its queries, halts before its last query or
            fails a certified test.
        """
        with refusals_stop_search(self.on_refusal):
            return self._predict(X)

    def _predict(self, X) -> np.ndarray:
        from core.mechanisms.result import UNPROCESSED

        if "_session_key" not in vars(self):
            raise EstimatorNotFittedError("This PrivateEnsembleClassifier is not fitted yet; call fit(X, y) first.")
        shape = _shape(X)
        if self.n_features_in_ is not None and len(shape) == 2 and shape[1] != self.n_features_in_:
            raise DataError(f"X has {shape[1]} features, but PrivateEnsembleClassifier is expecting "
                            f"{self.n_features_in_} features as input.")
        if in_model_selection():  # a fold's unprocessed rows would be scored as wrong answers: refuse it whole
            kept = self.session_
            left = self._run[1] - (0 if kept is None else kept.n_processed)
            n_rows = int(shape[0]) if shape else 0
            if n_rows > left:
                raise BudgetExhausted(
                    f"scikit-learn scores this PrivateEnsembleClassifier on {n_rows} rows, but only {left} of its "
                    f"max_queries = {self._run[1]} queries are left: the rest would be left unanswered and scored as "
                    "wrong. Nothing was answered. Raise max_queries (it is charged in full by each fit) or use "
                    "smaller test folds.")
        session = self._answering_session()
        if session.halted:
            raise BudgetExhausted(
                f"The privacy budget is spent after {session.n_processed} queries "
                f"({session.n_bottom} abstentions): no further query can be answered. "
                "Fit a new classifier (on fresh private data) to answer more."
            )
        counts = np.asarray(self.teachers_.vote_counts(X))
        before = session.n_processed
        ids = session.answer(counts)
        processed = session.n_processed - before
        answered = ids >= 0
        left = int(np.count_nonzero(ids == UNPROCESSED)) if session.halted else 0
        ran_out = (f" The privacy budget ran out after {session.n_processed} queries ({session.n_bottom} abstentions): "
                   f"the last {left} of these {ids.size} queries were not processed and read {self.abstain!r}."
                   if left else "")
        result = getattr(session, "result", None)
        if result is not None and not getattr(result, "feasible", True):
            warnings.warn(f"{self.mechanism} released nothing: {result.reason}", PrivacyWarning, stacklevel=2)
        elif processed > 0 and not answered.any():
            warnings.warn(f"{self.mechanism} answered none of the {processed} queries processed (all ⊥): "
                          f"{self._nothing_reason(session, counts)}{ran_out}", PrivacyWarning, stacklevel=2)
        elif left:
            warnings.warn(ran_out.strip(), PrivacyWarning, stacklevel=2)
        return ids
