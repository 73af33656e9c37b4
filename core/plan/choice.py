"""The plan's choice among predicted runs (docs/design.md §10.7).

:func:`best` picks, among predictions of one job at one budget, the run the plan
recommends: of the *useful* ones (answered labels right more often than always
answering the majority class, :data:`core.plan.MIN_GAIN`), the one with the most correct
labels predicted; runs within :data:`TIE` of ``m`` (at least one label) of the most are a
tie, which goes to the first in the order given (the simulation cannot tell them apart).  :func:`by_epsilon` makes that choice at every ε of a plan's curve.  Both read
predictions only (public quantities and assumptions), so choosing costs no privacy;
``--mechanism auto`` (:mod:`core.auto`), ``plan``, ``recommend`` and the app's plan make
their choice here.
"""

from __future__ import annotations

from typing import Any, Sequence

__all__ = ["best", "by_epsilon", "ranking_key", "TIE"]

TIE = 0.01
"""Predicted correct counts within this share of m of the most are a tie."""


def ranking_key(pred: Any) -> tuple[float, float]:
    """How predictions are ranked without a tie rule: correct labels, then label accuracy.

    Parameters
    ----------
    pred : Prediction

    Returns
    -------
    tuple of float
    """
    acc = pred.label_accuracy
    return (float(pred.correct), acc if acc == acc else 0.0)


def best(predictions: Sequence[Any]) -> Any | None:
    """The useful prediction with the most correct labels (ties: the first given), or None when none is useful.

    Parameters
    ----------
    predictions : sequence of Prediction
        In order of preference on a tie.

    Returns
    -------
    Prediction or None
    """
    useful = [p for p in predictions if p.useful]
    if not useful:
        return None
    top = max(p.correct for p in useful)
    return next(p for p in useful if p.correct >= top - max(1.0, TIE * p.m))


def by_epsilon(predictions: Sequence[Any]) -> dict[float, Any | None]:
    """The plan's choice at every requested ε (predictions grouped by their ``settings['epsilon']``).

    Parameters
    ----------
    predictions : sequence of Prediction

    Returns
    -------
    dict of float to Prediction or None
        In the order the ε first appear.
    """
    groups: dict[float, list] = {}
    for p in predictions:
        eps = p.settings.get("epsilon", p.epsilon)
        groups.setdefault(float(eps), []).append(p)
    return {eps: best(group) for eps, group in groups.items()}
