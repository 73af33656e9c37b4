"""Teachers, learners, the student, the scikit-learn estimator and where training runs.
"""

from __future__ import annotations

from core._lazy import lazy_exports

_EXPORTS = {
    "DASK_EXTRA": "distributed",
    "DEFAULT_CONNECT_TIMEOUT": "distributed",
    "DISTRIBUTION": "distributed",
    "joblib_backend": "distributed",
    "PrivateEnsembleClassifier": "estimator",
    "Hyperparameter": "learners",
    "LEARNERS": "learners",
    "LearnerSpec": "learners",
    "learner_names": "learners",
    "make_learner": "learners",
    "parse_assignments": "learners",
    "BOTTOM_POLICIES": "student",
    "Student": "student",
    "least_confident_first": "student",
    "train_student": "student",
    "BLOCK_BYTES": "teachers",
    "ConstantClassifier": "teachers",
    "TeacherEnsemble": "teachers",
    "default_block_size": "teachers",
    "train_teachers": "teachers",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
