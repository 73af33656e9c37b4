"""The one path from private data to a published student: train → vote → label → student → export.

The app, the command line, the estimator and the experiments call these functions and
nothing else to run a mechanism, so the same request chooses the same parameters and
spends the same ε everywhere (docs/design.md §5):

:func:`resolve`
    A mechanism's settings from a request: defaults filled in, the noise parameter
    derived from a target ε through the registry's ``spend`` (e.g. LNMax's γ), unknown
    or conflicting settings refused with a sentence.
:func:`privacy_map`
    The guarantee of a run before any data is seen.
:func:`label`
    Run a registered mechanism on votes (or scores).
:func:`session`
    A mechanism answering a stream of query batches under one budget (the estimator).
:func:`teacher_model`, :func:`model_input`, :func:`train`, :func:`mechanism_inputs`
    The teachers of a table and their votes (or scores) on public rows.
:func:`student`, :func:`labeled_csv`, :func:`report`
    The student and the export.
:class:`PrivateEnsembleClassifier`
    The scikit-learn estimator: a user of this path (teachers, a session, the ledger).
:func:`tune_price`, :func:`tune`, :func:`tune_table`
    Private selection over a grid of settings (:mod:`core.mechanisms.selection`): its
    guarantee before it runs, the run on votes, and the whole job on a private table
    (held-out rows, teachers, scoring) the command line and the app both drive
    (docs/design.md §10.3).
:class:`PrivateSearchCV`
    The same selection over the estimator's settings, as a scikit-learn search whose
    ``best_params_`` and score are covered (docs/design.md §10.8).

References
----------
.. [BTT18] R. Bassily, O. Thakkar, A. Thakurta. Model-Agnostic Private Learning. NeurIPS 2018.
.. [PATE17] N. Papernot et al. Semi-supervised Knowledge Transfer for Deep Learning from
   Private Training Data. ICLR 2017.
"""


from __future__ import annotations

from core.pipeline.estimator import EstimatorNotFittedError, PrivateEnsembleClassifier
from core.pipeline.outputs import labeled_csv, report, student
from core.pipeline.runs import BUDGET, label, ledger_entry, privacy_map, resolve, session, stream_result, stream_session
from core.pipeline.search import PrivateSearchCV
from core.pipeline.selection import (HOLDOUT_ROWS, SCORE_SIGMA, holdout_score, tune, tune_candidate, tune_plan,
                                     tune_price, tune_table)
from core.pipeline.teachers import (
    mechanism_inputs,
    model_input,
    plain_numeric,
    teacher_model,
    train,
    votes_and_predictions,
)

__all__ = [
    "BUDGET",
    "resolve",
    "privacy_map",
    "label",
    "ledger_entry",
    "session",
    "stream_session",
    "stream_result",
    "teacher_model",
    "model_input",
    "plain_numeric",
    "train",
    "mechanism_inputs",
    "votes_and_predictions",
    "student",
    "labeled_csv",
    "report",
    "tune_price",
    "tune_plan",
    "tune",
    "holdout_score",
    "tune_candidate",
    "tune_table",
    "HOLDOUT_ROWS",
    "SCORE_SIGMA",
    "PrivateEnsembleClassifier",
    "PrivateSearchCV",
    "EstimatorNotFittedError",
]


