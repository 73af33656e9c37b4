"""What a job would need for a useful run, when its plan says it has none (docs/design.md §10).

:func:`advise` takes a :class:`~core.plan.Prediction` that is not useful and predicts the
same mechanism under single changes a data owner can make -- a larger ε, fewer public
rows, more private rows (with as many more teachers), fewer teachers -- and says in words
which of them would make the run useful, and with BTT how many teachers its test needs
(:func:`core.theory.btt_min_teachers`; a BTT alternative with under half of them is not
simulated: it would answer next to nothing).  It reads nothing private: every alternative is a
prediction from public quantities and the same assumption.

References
----------
.. [BTT18] R. Bassily, O. Thakkar, A. Thakurta. Model-Agnostic Private Learning. NeurIPS 2018.
"""

from __future__ import annotations

import math
from typing import Any, Callable

__all__ = ["advise", "why_not_useful", "alternatives"]

ADVICE_DRAWS = 4
"""Simulated runs per alternative (fewer than a prediction's: the advice needs a direction, not a number)."""


def why_not_useful(pred: Any) -> str:
    """Why a prediction is not useful, in one sentence.

    Parameters
    ----------
    pred : Prediction
        A prediction whose ``useful`` is False.

    Returns
    -------
    str
    """
    if not pred.feasible and pred.answered == 0:
        return f"{pred.mechanism} would answer nothing: {str(pred.reason).rstrip('.')}"
    if pred.answered < max(1.0, 0.01 * pred.m):
        return f"{pred.mechanism} would answer almost nothing ({pred.answered:.0f} of {pred.m} public rows)"
    margin = pred.label_accuracy - pred.useful_below  # MIN_GAIN, read off the prediction (no import circle)
    return (f"{pred.mechanism}'s answered labels would be right {pred.label_accuracy:.0%} of the time, where always "
            f"answering the majority class is right {pred.majority_share:.0%} (useful needs {margin * 100:.0f} "
            "points more than that)")


def alternatives(pred: Any) -> list[tuple[str, dict, dict]]:
    """The single changes tried: ``(words, settings, sizes)``.

    Parameters
    ----------
    pred : Prediction

    Returns
    -------
    list of (str, dict, dict)
    """
    sizes = dict(n=pred.n, m=pred.m, k=pred.k, n_classes=pred.n_classes)
    out: list[tuple[str, dict, dict]] = []
    trained = getattr(pred, "model_accuracy", None) is not None  # one model pays once for every row; no teachers
    eps = pred.settings.get("epsilon")
    if eps is not None:
        for f in (2, 4):
            out.append((f"a larger ε (ε = {f * float(eps):g})", {**pred.settings, "epsilon": f * float(eps)}, sizes))
    for f in (2, 4):
        if not trained and pred.m // f >= 1:
            out.append((f"fewer public rows (m = {pred.m // f})", dict(pred.settings), {**sizes, "m": pred.m // f}))
    for f in (2, 4):
        if trained:
            out.append((f"more private rows (n = {f * pred.n})", dict(pred.settings), {**sizes, "n": f * pred.n}))
            continue
        out.append((f"more private rows (n = {f * pred.n}, with k = {f * pred.k} teachers of the same size)",
                    dict(pred.settings), {**sizes, "n": f * pred.n, "k": f * pred.k}))
        if pred.quality.rows is not None:
            out.append((f"more private rows (n = {f * pred.n}, the same k)", dict(pred.settings), {**sizes, "n": f * pred.n}))
    for f in (2, 4):
        if not trained and pred.k // f >= 2:
            out.append((f"fewer teachers (k = {pred.k // f})", dict(pred.settings), {**sizes, "k": pred.k // f}))
    return out


def _btt_teachers(pred: Any) -> str | None:
    if pred.mechanism not in ("btt", "btt-soft") or "T" not in pred.resolved:
        return None
    eps = pred.settings.get("epsilon", pred.epsilon)
    if eps is None or not math.isfinite(float(eps)):
        return None
    from core import theory

    cal = pred.resolved.get("calibration", "tight")
    need = int(theory.btt_min_teachers(float(eps), float(pred.resolved["delta"]), int(pred.resolved["T"]), pred.m,
                                       calibration=cal))
    if need > pred.k:
        return (f"BTT's test passes a unanimous vote with probability 1/2 only from k = {need} teachers at these "
                f"settings (core.theory.btt_min_teachers), more than the {pred.k} planned")
    return None


def _btt_hopeless(pred: Any, settings: dict, sizes: dict) -> bool:
    """Whether BTT at an alternative has under half the teachers its test needs for a
    unanimous vote to pass with probability 1/2 (:func:`core.theory.btt_min_teachers`):
    it would answer next to nothing, so it is not simulated."""
    if pred.mechanism != "btt" or "T" not in pred.resolved or settings.get("epsilon") is None:
        return False
    from core import theory

    need = float(theory.btt_min_teachers(float(settings["epsilon"]), float(pred.resolved["delta"]),
                                         int(pred.resolved["T"]), int(sizes["m"]),
                                         calibration=pred.resolved.get("calibration", "tight")))
    return int(sizes["k"]) < 0.5 * need


def advise(pred: Any, predict: Callable[..., Any]) -> str:
    """What would be needed instead of a run that is not useful, in words.

    Parameters
    ----------
    pred : Prediction
        A prediction with ``useful`` False.
    predict : callable
        :func:`core.plan.prediction.predict` (passed in: that module calls this one).

    Returns
    -------
    str
    """
    lines = [f"Not useful: {why_not_useful(pred)}."]
    btt = _btt_teachers(pred)
    if btt and "teachers are needed" not in str(pred.reason):
        lines.append(btt + ".")
    works = []
    tried = []
    seen_kinds = set()
    for words, settings, sizes in alternatives(pred):
        kind = words.split(" (")[0]
        tried.append(words)
        if kind in seen_kinds or _btt_hopeless(pred, settings, sizes):
            continue
        try:
            alt = predict(pred.mechanism, settings, **sizes, quality=pred.quality, draws=min(pred.draws, ADVICE_DRAWS),
                          rng=0, advise=False, spread=False)
        except Exception:  # an alternative the mechanism refuses is simply not offered
            continue
        if alt.useful:
            seen_kinds.add(kind)
            works.append(f"{words}: {alt.answered:.0f} of {alt.m} answered, {alt.label_accuracy:.0%} right")
    if works:
        lines.append("Predicted to be useful with " + "; or ".join(works) + ".")
    else:
        lines.append("None of these single changes is predicted to be enough: " + ", ".join(tried)
                     + (". Better features or a different mechanism would be needed." if pred.trained else
                        ". Better teachers (a better learner or features) or a different mechanism would be needed."))
    return " ".join(lines)
