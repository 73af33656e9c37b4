"""Teachers, learners, the student and where training runs (the scikit-learn estimator,
a user of the pipeline, is :class:`core.pipeline.PrivateEnsembleClassifier`).
"""

from __future__ import annotations

from core._lazy import lazy_exports

_EXPORTS = {
    "DASK_EXTRA": "distributed",
    "DEFAULT_CONNECT_TIMEOUT": "distributed",
    "DISTRIBUTION": "distributed",
    "joblib_backend": "distributed",
    "ProgressCallback": "inputs",
    "check_features": "inputs",
    "check_n_jobs": "inputs",
    "check_progress": "inputs",
    "learner_name": "inputs",
    "num_rows": "inputs",
    "resolve_learner": "inputs",
    "seed_estimator": "inputs",
    "select_rows": "inputs",
    "Hyperparameter": "learners",
    "LEARNERS": "learners",
    "LearnerSpec": "learners",
    "learner_names": "learners",
    "make_learner": "learners",
    "parse_assignments": "learners",
    "BOTTOM_POLICIES": "student",
    "PublishedStudent": "student",
    "Student": "student",
    "least_confident_first": "student",
    "train_student": "student",
    "BLOCK_BYTES": "teacher_ensemble",
    "ConstantClassifier": "teacher_ensemble",
    "TeacherEnsemble": "teacher_ensemble",
    "default_block_size": "teacher_ensemble",
    "train_teachers": "teachers",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
