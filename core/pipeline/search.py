"""Private model selection as a scikit-learn estimator: :class:`PrivateSearchCV`.

Part of :mod:`core.pipeline` (see its docstring).  A grid of settings of
:class:`PrivateEnsembleClassifier` (its learner's hyperparameters, ``k``, the mechanism's
ε …) is searched by Papernot and Steinke's random-stopping selection (docs/design.md
§10.3, §10.8): each repetition trains a random candidate on the training part and scores
its *private answers* on held-out private rows by a noisy count; only the best
repetition's candidate and score are released, under a guarantee priced from public
settings before anything runs and charged to the ledger.

References
----------
.. [PS22] N. Papernot, T. Steinke. Hyperparameter Tuning with Renyi Differential Privacy. ICLR 2022.
.. [CKS20] C. Canonne, G. Kamath, T. Steinke. The Discrete Gaussian for Differential Privacy. NeurIPS 2020.
.. [vEH14] T. van Erven, P. Harremoës. Rényi Divergence and Kullback–Leibler Divergence.
   IEEE Trans. Inf. Theory 2014 (joint quasi-convexity).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.model_selection import ParameterGrid
from sklearn.utils.multiclass import check_classification_targets

from core import noise
from core.errors import DataError, ParameterError, PrivacyWarning
from core.pipeline.estimator import NOISY_MAX, EstimatorNotFittedError, PrivateEnsembleClassifier

__all__ = ["PrivateSearchCV"]


class PrivateSearchCV(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Private selection of a :class:`PrivateEnsembleClassifier`'s settings over a grid.

    The private counterpart of ``GridSearchCV``: ``fit(X, y)`` charges the whole
    search's privacy map to the estimator's ledger **before** it reads a row, searches
    the grid by random stopping, releases only ``best_params_`` (with ``best_index_``)
    and ``best_score_``, and refits the chosen candidate on all of ``(X, y)`` (its own
    run, charged by its own ``fit``).  :meth:`price` gives the whole guarantee from the
    parameters alone, before anything runs.

    Algorithm.  The rows are split at random, without reading them, into a training
    part ``T`` and a held-out part ``H`` (with ``groups``: by privacy unit, one row of
    each held-out unit scored).  ``K`` is drawn from the truncated negative binomial
    distribution of mean ``mean`` and shape ``shape``, independently of the data.  Each
    of the ``K`` repetitions picks a candidate uniformly at random, fits it on ``T``
    with fresh randomness, answers the rows of ``H`` as private queries, and scores the
    count of correct answers (⊥ is wrong) plus discrete Gaussian noise of σ
    ``score_sigma``.  The best repetition's candidate and score are released; ``K``,
    the candidates tried, the other scores and every repetition's answers are not.

    Guarantee.  Let ``ρ_j`` be candidate ``j``'s RDP curve for ``max_queries`` queries
    (its ledger entry, :meth:`PrivateEnsembleClassifier.planned_entry`).  The release
    ``(best_index_, best_score_)`` is (ε, δ)-DP with respect to replacing one row of
    ``(X, y)`` (one unit's rows with ``groups``), where (ε, δ) converts the
    Papernot–Steinke curve of mean ``mean`` and shape ``shape`` over the per-repetition
    curve ``ρ(α) = max(max_j ρ_j(α), α/(2 score_sigma²))``
    (:func:`core.accounting.selection.selection_entry`).  With ``refit`` the refitted
    estimator's answers are a second run, charged by its own fit; :meth:`price` and
    :attr:`privacy_` report the two composed (for :meth:`price`, the costliest
    candidate's refit).

    *Proof sketch.*  (1) One repetition releases ``s = C + Z``, ``C`` the count of
    held-out rows answered correctly.  Neighbours differ in one row of ``T`` or of ``H``
    (the split reads no value).  If in ``T``: the answers are a run of candidate ``j``
    on fixed queries (the rows of ``H``), ``ρ_j``-RDP; ``s`` post-processes them with the
    unchanged ``H``.  If in ``H``: the teachers are the same; candidates are per-query
    mechanisms (each query answered independently, registry ``per_query``), so every
    other answer has the same law and the changed row's term of ``C`` is a Bernoulli in
    ``{0, 1}`` on each side; coupling the two Bernoullis, ``s`` on each side is the same
    mixture over pairs whose components are discrete Gaussians at most 1 apart, of
    divergence at most ``α/(2σ²)`` [CKS20], and joint quasi-convexity of the Rényi
    divergence [vEH14] bounds the mixtures' by it.  Case ``T`` needs the candidates' classes
    DECLARED (``classes=`` on the estimator): read from ``y`` of ``T``, a neighbour that
    replaces the only row of a class has one class column fewer, and a noisy-max candidate
    answers a class without a vote only where it has its column, so its output space, not
    only its law, would differ.  The two cases never mix, so a
    repetition is ``max(ρ_j, α/(2σ²))``-RDP (as in docs/design.md §10.3, step 1).
    (2) The candidate is uniform and data-independent: ``ρ ≤ max_j``.  (3) Releasing the
    best of ``K`` hidden repetitions is Papernot–Steinke's Theorem 2 on ``ρ``.  Scoring
    ``n_h ≤ max_queries`` queries costs at most the map of ``max_queries`` (the maps grow
    with the number of queries).  The refit is a separate run on all rows, composed by
    the ledger.  ∎

    Parameters
    ----------
    estimator : PrivateEnsembleClassifier
        The template: its ``ledger`` is charged, its other parameters are the
        candidates' defaults.  Its mechanism (and every candidate's) must answer each
        query independently with an RDP map without additive δ (GNMax,
        Confident-GNMax, LNMax).
    param_grid : dict or list of dicts
        As ``GridSearchCV``'s (e.g. ``{"learner__C": [0.1, 1.0], "k": [50, 100]}``); the
        candidates are uniform over it.
    holdout : float or int
        The held-out part: a fraction of the rows (of the units, with ``groups``) or a
        number of them.  The scored rows must not exceed any candidate's ``max_queries``.
    score_sigma : float
        σ of the discrete Gaussian noise on the held-out count (sensitivity 1).
    mean : float or None
        Mean number of repetitions (None: 3 per candidate).
    shape : float
        Shape of its truncated negative binomial distribution (1: geometric).
    delta : float or None
        δ of the selection (None: the largest candidate δ).
    refit : bool
        Fit the chosen candidate on all of ``(X, y)`` (charged by its own fit).
    rng : Generator, int or None
        The split, the candidates' draws and the scores' noise.  None (default):
        operating-system entropy.  ``K`` and the candidates tried are always drawn from
        operating-system entropy (a seed shows in ``repr`` and ``get_params``; replaying it
        must not count the repetitions).  The repetitions draw from a child keyed by one
        draw (:func:`core.noise.detached_rng`): a Generator given here moves by the same
        amount whatever K is.  A seed reproduces the noise: keep it private as a key.

    Attributes
    ----------
    best_params_ : dict
        The chosen candidate's settings (covered).
    best_index_ : int
        Its index in ``ParameterGrid(param_grid)`` (covered).
    best_score_ : float
        Its released noisy held-out accuracy: (count + noise) / scored rows (covered).
    best_estimator_ : PrivateEnsembleClassifier
        The refitted candidate (with ``refit``): its own run on the ledger.
    n_scored_ : int
        The number of held-out rows scored (public: from the number of rows or units).
    selection_entry_ : core.ledger.RDPEntry
        The selection's privacy map, charged before the search ran.
    privacy_ : core.ledger.LedgerTotal
        The selection's guarantee composed with the refit's run (the whole search).
    ledger_ : core.ledger.PrivacyLedger
    classes_ : ndarray
        With ``refit``, the refitted estimator's classes.

    Notes
    -----
    No ``cv_results_``: the candidates tried and their scores are not covered.  The wall
    time grows with ``K`` (a side channel the caller keeps: show no per-repetition
    progress).

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from core.ledger import PrivacyLedger
    >>> clf = PrivateEnsembleClassifier(LogisticRegression(), k=50, mechanism="gnmax", epsilon=1.0,
    ...                                 delta=1e-5, max_queries=400, ledger=PrivacyLedger("adult"))
    >>> search = PrivateSearchCV(clf, {"learner__C": [0.01, 1.0]}, mean=4)
    >>> round(search.price().epsilon, 2) > 1.0
    True
    """

    def __init__(self, estimator: Any, param_grid: Any, *, holdout: float = 0.2, score_sigma: float = 5.0,
                 mean: float | None = None, shape: float = 1.0, delta: float | None = None, refit: bool = True,
                 rng: Any = None):
        self.estimator = estimator
        self.param_grid = param_grid
        self.holdout = holdout
        self.score_sigma = score_sigma
        self.mean = mean
        self.shape = shape
        self.delta = delta
        self.refit = refit
        self.rng = rng

    # ---------------------------------------------------------------- the price
    def _candidates(self) -> list[tuple[dict, PrivateEnsembleClassifier, Any]]:
        from core.mechanisms import registry

        if not isinstance(self.estimator, PrivateEnsembleClassifier):
            raise ParameterError("PrivateSearchCV searches a PrivateEnsembleClassifier's settings, got "
                                 f"{type(self.estimator).__name__}.")
        out = []
        for params in ParameterGrid(self.param_grid):
            if "ledger" in params or "rng" in params:
                raise ParameterError("the ledger and rng are the search's own: leave them out of param_grid.")
            est = clone(self.estimator).set_params(**params)
            mech = registry.get(est.mechanism)
            if mech.inputs != "counts" or not mech.per_query:
                raise ParameterError(
                    f"{est.mechanism} cannot be a candidate of PrivateSearchCV: the held-out count moves by at most "
                    "one per changed held-out row only when every query is answered independently of the others "
                    "(GNMax, Confident-GNMax, LNMax); BTT's sparse vector carries state from query to query.")
            out.append((params, est, est.planned_entry()))
        if not out:
            raise ParameterError("param_grid holds no candidate.")
        return out

    def _plan(self, cands) -> tuple[Any, float]:
        from core.accounting.selection import selection_entry
        from core.mechanisms.selection import default_mean
        from core.validation import check_delta

        s = float(self.score_sigma)
        if not (math.isfinite(s) and s > 0):
            raise ParameterError(f"score_sigma must be a positive number, got {self.score_sigma!r}.")
        delta = self.delta
        if delta is None:
            delta = max(float(c.delta or 0.0) for _, c, _ in cands) or 1e-6
        delta = check_delta(delta)
        mean = default_mean(len(cands)) if self.mean is None else float(self.mean)
        entry = selection_entry([e for _, _, e in cands], mean=mean, shape=float(self.shape), score_sigma=s,
                                delta=delta, params={"search": "PrivateSearchCV", "m": int(max(
                                    c.max_queries for _, c, _ in cands))})
        return entry, mean

    def price(self):
        """The whole search's guarantee, from the parameters alone (nothing is read or charged).

        The selection composed with the refit of the costliest candidate (with
        ``refit``), as the ledger composes them.

        Returns
        -------
        core.ledger.LedgerTotal
        """
        from core.ledger.compose import compose_entries

        cands = self._candidates()
        entry, _ = self._plan(cands)
        if not self.refit:
            return compose_entries([entry])
        return max((compose_entries([entry, e]) for _, _, e in cands), key=lambda g: (g.epsilon, g.delta))

    # ---------------------------------------------------------------- the search
    def _split(self, n: int, groups, gen) -> tuple[np.ndarray, np.ndarray]:
        """Training rows and scored held-out rows, chosen at random without reading a value."""
        h = self.holdout
        if groups is None:
            codes = np.arange(n)
        else:
            from core.pipeline.estimator import _privacy_units

            codes = np.unique(np.asarray(_privacy_units(groups, n)), return_inverse=True)[1].ravel()
        n_units = int(codes.max()) + 1 if n else 0
        if isinstance(h, (int, np.integer)) and not isinstance(h, bool):
            n_h = int(h)
        elif isinstance(h, float) and 0.0 < h < 1.0:
            n_h = int(round(h * n_units))
        else:
            raise ParameterError(f"holdout is a fraction in (0, 1) or a number of rows (units), got {h!r}.")
        if not 1 <= n_h < n_units:
            raise ParameterError(f"holdout leaves {n_h} of {n_units} {'units' if groups is not None else 'rows'} held "
                                 "out: hold out at least one and keep at least one for training.")
        held = np.zeros(n_units, dtype=bool)
        held[gen.permutation(n_units)[:n_h]] = True
        rows_h = held[codes]
        train = np.flatnonzero(~rows_h)
        if groups is None:
            scored = np.flatnonzero(rows_h)
        else:  # one row of each held-out unit: replacing a unit moves the count by at most 1
            from core.data.units import bound_rows

            idx = np.flatnonzero(rows_h)
            scored = idx[bound_rows(codes[idx], 1, rng=gen)]
        return train, scored

    def fit(self, X, y, groups=None) -> "PrivateSearchCV":
        """Charge the whole selection, search the grid privately, and refit the chosen candidate.

        Parameters
        ----------
        X : array-like or DataFrame, shape (n, p)
        y : array-like, shape (n,)
        groups : array-like, shape (n,), optional
            Privacy-unit IDs (as :meth:`PrivateEnsembleClassifier.fit`): the split is by
            unit, one row per held-out unit is scored, and the charge names the units.

        Raises
        ------
        BudgetExhausted
            Before anything runs, when the selection (with the costliest refit) would
            pass the ledger's budget.
        """
        from core.pipeline.model_selection import refusals_stop_search

        with refusals_stop_search("stop"):  # inside an outer scikit-learn search, a refusal stops it
            return self._fit(X, y, groups)

    def _fit(self, X, y, groups) -> "PrivateSearchCV":
        from core.ledger.compose import compose_entries

        cands = self._candidates()
        entry, mean = self._plan(cands)
        ledger = self.estimator._ledger_here()
        if y is None:
            raise DataError("PrivateSearchCV requires y to be passed, but the target y is None.")
        y = np.asarray(y)
        if y.ndim != 1:
            raise DataError("y must be one column of class labels.")
        check_classification_targets(y)
        gen = noise.check_rng(self.rng)
        train, scored = self._split(y.shape[0], groups, gen)
        m_min = min(int(c.max_queries) for _, c, _ in cands)
        if scored.size > m_min:
            raise ParameterError(f"PrivateSearchCV scores {scored.size} held-out rows, but a candidate answers at most "
                                 f"max_queries = {m_min} queries: lower holdout or raise max_queries.")
        undeclared = sorted({c.mechanism for _, c, _ in cands if c.classes is None and c.mechanism in NOISY_MAX})
        if undeclared:  # once, before the repetitions (whose warnings are silenced): the proof's case T needs them
            warnings.warn(f"classes= not given to the estimator: {', '.join(undeclared)} answers every class the "
                          "training part holds, so the selection's guarantee does not cover which classes the private "
                          "rows hold (docs/design.md §10.8). Declare them: PrivateEnsembleClassifier(..., classes=[...]).",
                          PrivacyWarning, stacklevel=3)
        units = None if groups is None else np.asarray(groups.to_numpy() if hasattr(groups, "to_numpy") else groups)
        for _, _, e in cands if self.refit else cands[:1]:  # the costliest refit must fit too, before anything runs
            ledger.check([entry, e] if self.refit else [entry], units=units)
        ledger.charge(entry, units=units)  # the whole selection, before any row is read

        X_t, y_t = _rows(X, train), y[train]
        X_h, y_h = _rows(X, scored), y[scored]
        g_t = None if units is None else units[train]
        from core.mechanisms.selection import hidden_repetitions

        child = noise.detached_rng(gen)  # a child: ``rng`` moves by one draw whatever K is
        s, j = hidden_repetitions(
            lambda: _repetitions(cands, mean, float(self.shape), float(self.score_sigma), child, X_t, y_t, g_t, X_h,
                                 y_h),
            "A repetition of PrivateSearchCV failed (a candidate could not be fitted or could not answer); the "
            "search stopped, and its charge stands.", "how many ran, their held-out counts")
        self.best_index_ = j
        self.best_params_ = dict(cands[j][0])
        self.best_score_ = float(s) / scored.size
        self.n_scored_ = int(scored.size)
        self.selection_entry_ = entry
        self.ledger_ = ledger
        if self.refit:
            self.best_estimator_ = clone(cands[j][1]).fit(X, y, groups=groups)
            self.classes_ = self.best_estimator_.classes_
            self.privacy_ = compose_entries([entry, cands[j][2]])
        else:
            self.privacy_ = compose_entries([entry])
        return self

    # ---------------------------------------------------------------- after
    def _refitted(self) -> PrivateEnsembleClassifier:
        if "best_estimator_" not in vars(self):
            raise EstimatorNotFittedError("PrivateSearchCV has no refitted estimator: call fit with refit=True first.")
        return self.best_estimator_

    def predict(self, X) -> np.ndarray:
        """The refitted estimator's private answers (spending its own run's budget)."""
        return self._refitted().predict(X)


def _repetitions(cands, mean: float, shape: float, score_sigma: float, gen, X_t, y_t, g_t, X_h, y_h) -> tuple[int, int]:
    """The best repetition's noisy held-out count and candidate index (K, the candidates
    tried and the other scores stay in this frame and die with it).

    ``K`` and each repetition's candidate are drawn from operating-system entropy, never from
    ``gen``: a seed given as the search's ``rng`` is shown by its ``repr`` and ``get_params``,
    and replaying it would count the repetitions (a replayed sequence of candidates beside
    ``best_index_`` would bound their number from below).
    """
    from core.ledger import PrivacyLedger
    from core.mechanisms.selection import draw_repetitions

    scratch = PrivacyLedger("private selection's repetitions")  # covered by the selection's charge
    best = None
    with warnings.catch_warnings():  # a repetition's warnings would tell how many ran
        warnings.simplefilter("ignore")
        hidden = np.random.default_rng()  # K and the candidates tried: never from ``gen``
        for _ in range(draw_repetitions(mean, shape, hidden)):  # K is never kept
            j = int(hidden.integers(len(cands)))
            rep = clone(cands[j][1]).set_params(ledger=scratch, rng=np.random.default_rng(gen.integers(2**63)),
                                                on_refusal="raise")
            rep.fit(X_t, y_t, groups=g_t)
            ids = rep.answer_ids(X_h)  # ⊥ apart from every class, whatever the abstain value
            answered = ids >= 0
            count = int(np.sum(rep.classes_[ids[answered]] == np.asarray(y_h)[answered]))
            s = count + int(noise.discrete_gaussian(score_sigma, rng=gen))
            if best is None or s > best[0]:
                best = (s, j)
    return best


def _rows(X, idx: np.ndarray):
    return X.iloc[idx] if hasattr(X, "iloc") else np.asarray(X)[idx]
