"""The plan's choice among predicted runs (docs/design.md §10.4).

:func:`best` picks, among predictions of one job at one budget, the run the plan
recommends: of the *useful* ones (answered labels right more often than always
answering the majority class, :data:`core.plan.MIN_GAIN`), the one with the most correct
labels predicted; a tie within half a percent of ``m`` goes to the higher label
accuracy.  :func:`by_epsilon` makes that choice at every ε of a plan's curve.  Both read
predictions only (public quantities and assumptions), so choosing costs no privacy;
``--mechanism auto`` (:mod:`core.auto`), ``plan``, ``recommend`` and the app's plan make
their choice here.
"""

from __future__ import annotations

from typing import Any, Sequence

__all__ = ["best", "by_epsilon", "ranking_key"]


def ranking_key(pred: Any) -> tuple[float, float]:
    """How predictions are ranked: correct labels (to half a percent of m), then label accuracy.

    Parameters
    ----------
    pred : Prediction

    Returns
    -------
    tuple of float
    """
    step = max(1.0, 0.005 * pred.m)
    acc = pred.label_accuracy
    return (round(pred.correct / step), acc if acc == acc else 0.0)


def best(predictions: Sequence[Any]) -> Any | None:
    """The useful prediction with the most correct labels, or None when none is useful.

    Parameters
    ----------
    predictions : sequence of Prediction

    Returns
    -------
    Prediction or None
    """
    useful = [p for p in predictions if p.useful]
    return max(useful, key=ranking_key) if useful else None


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
