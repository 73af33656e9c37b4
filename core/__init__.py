"""Private Label Lab: model-agnostic private prediction.

A private labeled dataset trains an ensemble of any scikit-learn learner on disjoint
chunks (:mod:`core.ensemble.teachers`); public unlabeled points are labeled with
differential-privacy guarantees (:mod:`core.mechanisms`, accounted in
:mod:`core.accounting`, every run on a dataset charged to its ledger in
:mod:`core.ledger`); the private labels train a student model that is safe to publish
(:mod:`core.ensemble.student`).  :mod:`core.theory` holds the theory calculators and
:mod:`core.audit` the empirical privacy audit.

The top-level names and the subpackages (``core.accounting``, ``core.data``,
``core.pipeline`` …) are imported lazily on first use, so ``import core`` is cheap and
``core.accounting`` works without its own import; ``dir(core)`` lists both.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_EXPORTS = {
    # data
    "load_table": "data",
    "check_public": "data",
    "Table": "data",
    # teachers
    "train_teachers": "ensemble",
    "TeacherEnsemble": "ensemble",
    # where the work runs (joblib backends, Dask clusters)
    "joblib_backend": "ensemble",
    # stability
    "distance_to_instability": "mechanisms",
    # aggregators
    "LabelingResult": "mechanisms",
    "a_stab_label": "mechanisms",
    "btt_label": "mechanisms",
    "btt_soft_label": "mechanisms",
    "lnmax_label": "mechanisms",
    "composition_baseline_label": "mechanisms",
    "gnmax_label": "mechanisms",
    "confident_gnmax_label": "mechanisms",
    "certified_confident_gnmax_label": "mechanisms",
    # the privacy ledger
    "PrivacyLedger": "ledger",
    # settings suggested from public sizes
    "recommend_settings": "recommend",
    # transfer
    "train_student": "ensemble",
    # estimator
    "PrivateEnsembleClassifier": "pipeline",
    "PrivateSearchCV": "pipeline",
    "PrivacyWarning": "errors",
    # errors
    "PrivateLabelLabError": "errors",
    "DataError": "errors",
    "SchemaError": "errors",
    "ParameterError": "errors",
    "BudgetExhausted": "errors",
    "LedgerUnreachable": "errors",
    "SearchStopped": "errors",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def _submodules() -> list[str]:
    """The public subpackages and modules of ``core`` (names without a leading underscore)."""
    import pkgutil

    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        if name in _submodules():
            value = importlib.import_module(f".{name}", __name__)
            globals()[name] = value
            return value
        raise AttributeError(f"module 'core' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(__all__) | set(_submodules()))
