"""Plans: predictions of labeling runs from public quantities only (docs/design.md §22).

A plan reads no private data and costs no privacy: it simulates votes under an assumed,
public :class:`TeacherQuality` and runs the real registered mechanisms on them.

:class:`TeacherQuality`, :func:`simulate_votes`
    The assumption and the votes simulated from it (:mod:`core.plan.quality`).
:func:`outcomes`, :class:`Outcomes`
    A registered mechanism run many times on votes with known true classes
    (:mod:`core.plan.engine`; also used on teaching data's votes).
:func:`predict`, :func:`predict_many`, :func:`sweep`, :class:`Prediction`
    Predicted answered / correct / ⊥ counts, the guarantee, whether the run is useful
    and, when not, what would be needed (:mod:`core.plan.prediction`, :mod:`core.plan.advice`).
"""

from __future__ import annotations

from core._lazy import lazy_exports

_EXPORTS = {
    "TeacherQuality": "quality",
    "SimulatedVotes": "quality",
    "simulate_votes": "quality",
    "Outcomes": "engine",
    "outcomes": "engine",
    "OUTCOME_FIELDS": "engine",
    "Prediction": "prediction",
    "predict": "prediction",
    "predict_many": "prediction",
    "sweep": "prediction",
    "MIN_GAIN": "prediction",
    "advise": "advice",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
