"""Plans: predictions of labeling runs from public quantities only (docs/design.md §10).

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
:class:`PublicRows`, :func:`predict_trained`
    The DP-training routes' predictions from the public rows' encoding and an assumed
    non-private accuracy (:mod:`core.plan.trained`).
:func:`best`, :func:`by_epsilon`
    The plan's choice: the useful run with the most correct labels (:mod:`core.plan.choice`).
:func:`estimate_quality`, :func:`estimate_price`
    A priced, counted private estimate of the teachers' agreement to replace the
    assumption (:mod:`core.plan.estimate`).
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
    "QualityEstimate": "estimate",
    "estimate_price": "estimate",
    "estimate_quality": "estimate",
    "estimate_class_shares": "estimate",
    "PublicRows": "trained",
    "predict_trained": "trained",
    "best": "choice",
    "by_epsilon": "choice",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
