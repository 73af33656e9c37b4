"""The estimator inside scikit-learn's model selection: what it is told, refused and warned.

Part of :mod:`core.pipeline` (see its docstring).  scikit-learn's searches and
cross-validation (``GridSearchCV``, ``RandomizedSearchCV``, ``cross_val_score``,
``cross_validate`` …) are allowed around :class:`PrivateEnsembleClassifier`, with three
rules (docs/design.md §13):

* their scores, ``cv_results_`` and ``best_params_`` are computed from the private labels
  of the held-out folds and are not covered by any guarantee: a :class:`PrivacyWarning`
  says so (:class:`core.pipeline.PrivateSearchCV` is the covered route);
* folds chosen by reading the labels (``StratifiedKFold``, what ``cv=int`` becomes for a
  classifier, and the other stratified splitters) are refused: one changed label moves
  other rows between folds, outside the guarantee's per-unit accounting (§9);
* a refused run (a spent budget, a ledger out of reach) stops the whole search
  (:class:`core.errors.SearchStopped`) instead of becoming a NaN score.

scikit-learn gives an estimator no handle on the search that runs it, so the search is
found on the call stack: the frames of ``sklearn.model_selection`` (in the process that
clones the estimator, and in a worker that fits it).  Nothing here reads a private value.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from typing import Any, Iterator

from core.errors import BudgetExhausted, LedgerUnreachable, ParameterError, PrivacyWarning, SearchStopped

__all__ = ["in_model_selection", "search_splitter", "check_search", "refusals_stop_search", "ON_REFUSAL",
           "PLAIN_ROUTE_WARNING"]

ON_REFUSAL = ("stop", "raise")
"""The estimator's choices for a refusal inside a search: stop it, or raise the plain exception."""

PLAIN_ROUTE_WARNING = (
    "scikit-learn's model selection scores PrivateEnsembleClassifier on the private labels of its held-out folds: "
    "its scores, cv_results_ and best_params_ are computed from private labels and are NOT covered by the ledger's "
    "guarantee (each fit's private answers are, and each fit is charged; docs/design.md §13). For a selection whose "
    "best_params_ and score are covered, use core.pipeline.PrivateSearchCV.")

_MAX_FRAMES = 200


def _frames() -> Iterator[Any]:
    """The frames of ``sklearn.model_selection`` on the current call stack, innermost first."""
    f = sys._getframe(1)
    for _ in range(_MAX_FRAMES):
        if f is None:
            return
        if str(f.f_globals.get("__name__", "")).startswith("sklearn.model_selection"):
            yield f
        f = f.f_back


def in_model_selection() -> bool:
    """Whether the caller runs inside scikit-learn's model selection (a search, a cross-validation).

    Returns
    -------
    bool
    """
    return next(_frames(), None) is not None


def search_splitter() -> Any:
    """The splitter of the scikit-learn search or cross-validation on the call stack (after
    ``check_cv``: ``cv=5`` on a classifier is a ``StratifiedKFold`` here), or None.

    Returns
    -------
    object or None
    """
    for f in _frames():
        loc = f.f_locals
        owner = loc.get("self")
        cv = getattr(owner, "_checked_cv_orig", None)
        if cv is not None and hasattr(cv, "split"):
            return cv
        cv = loc.get("cv")
        if cv is not None and hasattr(cv, "split"):
            return cv
    return None


def _label_dependent(cv: Any) -> bool:
    from sklearn import model_selection as ms

    stratified = tuple(getattr(ms, n) for n in ("StratifiedKFold", "StratifiedShuffleSplit", "StratifiedGroupKFold",
                                                "RepeatedStratifiedKFold") if hasattr(ms, n))
    return isinstance(cv, stratified)


def check_search(estimator_name: str = "PrivateEnsembleClassifier") -> None:
    """When called inside scikit-learn's model selection: refuse label-dependent folds, warn
    that the search's scores are not covered.  Outside it, nothing.

    Raises
    ------
    ParameterError
        For a stratified splitter (docs/design.md §9, §13).

    Warns
    -----
    PrivacyWarning
        :data:`PLAIN_ROUTE_WARNING`.
    """
    if not in_model_selection():
        return
    cv = search_splitter()
    if cv is not None and _label_dependent(cv):
        raise ParameterError(
            f"{type(cv).__name__} chooses the folds by reading the private labels (cv=<int> on a classifier becomes "
            "StratifiedKFold): one changed label moves other rows between folds, so the folds' fits are no longer "
            f"charged to the rows they read and the guarantee does not hold (docs/design.md §9, §13). Run {estimator_name} "
            "with folds chosen without the labels: cv=KFold(n_splits, shuffle=True), or GroupKFold with privacy-unit "
            "IDs; or use core.pipeline.PrivateSearchCV, whose selection is covered.")
    warnings.warn(PLAIN_ROUTE_WARNING, PrivacyWarning, stacklevel=3)


@contextlib.contextmanager
def refusals_stop_search(on_refusal: str) -> Iterator[None]:
    """Raise a refusal inside scikit-learn's model selection as :class:`SearchStopped`
    (``on_refusal="stop"``), which a numeric ``error_score`` cannot turn into a NaN score.

    Parameters
    ----------
    on_refusal : {"stop", "raise"}
    """
    if on_refusal not in ON_REFUSAL:
        raise ParameterError(f"on_refusal must be one of {', '.join(map(repr, ON_REFUSAL))}, got {on_refusal!r}.")
    try:
        yield
    except (BudgetExhausted, LedgerUnreachable) as exc:
        if on_refusal == "stop" and in_model_selection():
            raise SearchStopped(
                f"{exc} The model-selection search was stopped: a refused run is not a failed fit, and scoring it "
                "as error_score would carry on past the budget (set on_refusal=\"raise\" on the estimator to let the "
                "search record it as a failed fit and go on).", exc) from exc
        raise
