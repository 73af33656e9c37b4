"""Private Label Lab: model-agnostic private prediction.

A private labeled dataset trains an ensemble of any scikit-learn learner on disjoint
chunks (:mod:`core.teachers`); public unlabeled points are labeled with
differential-privacy guarantees (:mod:`core.aggregators`, accounted in
:mod:`core.accounting`); the private labels train a student model that is safe to
publish (:mod:`core.transfer`).  :mod:`core.bounds` holds the theory calculators and
:mod:`core.audit` the empirical privacy audit.

The top-level names are imported lazily, so ``import core`` is cheap.
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
    "train_teachers": "teachers",
    "TeacherEnsemble": "teachers",
    # where the work runs (joblib backends, Dask clusters)
    "joblib_backend": "distributed",
    # stability
    "distance_to_instability": "stability",
    # aggregators
    "LabelingResult": "aggregators",
    "a_stab_label": "aggregators",
    "btt_label": "aggregators",
    "btt_soft_label": "aggregators",
    "lnmax_label": "aggregators",
    "composition_baseline_label": "aggregators",
    # transfer
    "train_student": "transfer",
    # estimator
    "PrivateEnsembleClassifier": "estimator",
    # errors
    "PrivateLabelLabError": "errors",
    "DataError": "errors",
    "SchemaError": "errors",
    "ParameterError": "errors",
    "BudgetExhausted": "errors",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'core' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
