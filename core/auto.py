"""Choose the labeling route and the number of teachers from public quantities only.

``--mechanism auto --k auto`` on the command line, and :func:`choose` in the library,
pick among every route -- the ensemble's aggregators and the models trained with DP on
the private rows (:mod:`core.mechanisms.dp_training`) -- from quantities that are public
by the library's conventions (docs/design.md §1): the number of private rows ``n``, the
number of public rows ``m``, the encoded width ``d``, the number of classes, the budget
(ε, δ) and the learner the data owner asked for.  Nothing is read from the private rows,
so choosing costs no privacy.  The choice is reported in sentences (:attr:`AutoChoice.reason`).

The choice is the plan's (:func:`core.plan.best`, docs/design.md §10.7): GNMax and
Confident-GNMax at the ``k`` below, the DP logistic regression and the DP naive Bayes
are predicted from public quantities and assumptions (:func:`core.plan.predict`; the
DP-training routes from the public rows' encoding, :mod:`core.plan.trained`), and the
useful run with the most correct labels is chosen -- the run ``plan`` names at that ε.
The quantities quoted in the reason (docs/design.md §12.5 for the measurements behind them):

Ensemble (GNMax)
    Every answer pays: ``σ = gnmax_sigma_for_epsilon(ε, m, δ)``.  A query on which a
    share ``a = 0.9`` of the ``k`` teachers agree (a public planning assumption) has a
    vote margin ``(2a − 1)k`` and its label flips with probability
    ``Φ(−(2a − 1)k / (√2 σ))``.  ``k`` is the smallest on a grid with a flip rate of at
    most 2 %, keeping at least ``max(20, 5(d + 1))`` rows per teacher; else the largest
    such ``k``.
DP logistic regression (Gaussian objective perturbation)
    One model pays once for every query.  Its noise relative to the loss gradient's
    scale is ``r = 2√(8 log(2/δ) + 4ε) · √(d + 1) / (n ε)`` (the noise vector's norm, with
    KST12's ``σ`` for a replace-one move of the gradient by ``2R``, over ``n`` times the gradient
    bound ``R``): an upper bound, the library's ``σ`` charging the Jacobian apart is smaller
    (docs/design.md §12.7; the plan below uses it).  On UCI Adult (``r ≈ 0.006`` at ε = 1) it
    lands within a point of the non-private logistic regression (0.845 against 0.850).

On a tie of the plan a linear learner (``logistic_regression``, ``linear_svm``), the model
class the DP logistic regression trains, goes to the DP-training routes, another learner
to the ensemble.  The choice is a plan from public assumptions, not a measurement: the
Compare page, ``experiments/small_epsilon.py`` and ``experiments/plan_vs_measured.py``
measure the routes.

References
----------
.. [PATE18] N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar, Ú. Erlingsson.
   Scalable Private Learning with PATE. ICLR 2018.
.. [KST12] D. Kifer, A. Smith, A. Thakurta. Private Convex Empirical Risk Minimization
   and High-dimensional Regression. COLT 2012.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from core.errors import ParameterError
from core.validation import check_delta, check_epsilon

__all__ = ["AutoChoice", "choose", "flip_rate", "dp_noise_ratio", "K_GRID", "LINEAR_LEARNERS", "parse_k"]

K_GRID = (10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000)
"""The numbers of teachers considered."""

LINEAR_LEARNERS = ("logistic_regression", "linear_svm")
"""Learners whose model class the DP logistic regression trains."""

AGREEMENT = 0.9
"""The planning assumption: the share of teachers agreeing on a typical query (public)."""

MAX_FLIP = 0.02
"""The largest predicted flip rate of an ensemble's labels the rule accepts."""

MAX_DP_NOISE = 0.05
"""The largest relative noise ``r`` of the DP logistic regression the rule accepts."""


@dataclass(frozen=True)
class AutoChoice:
    """The chosen route, its settings and why.

    Attributes
    ----------
    mechanism : str
        A registered mechanism's name.
    k : int
        The number of teachers (the ensemble's plan; a DP-training route asks none).
    settings : dict
        Settings chosen besides the budget (e.g. ``perturbation``).
    reason : str
        Sentences saying what was chosen and why, with the numbers compared.
    predictions : dict
        The compared quantities: ``sigma``, ``flip_rate``, ``dp_noise``.
    """

    mechanism: str
    k: int
    settings: dict = field(default_factory=dict)
    reason: str = ""
    predictions: dict = field(default_factory=dict)


def parse_k(text: Any) -> int | str:
    """A ``--k`` value: a whole number, or ``"auto"``."""
    if isinstance(text, str) and text.strip().lower() == "auto":
        return "auto"
    try:
        return int(text)
    except (TypeError, ValueError):
        raise ParameterError(f"--k must be a whole number or auto, got {text!r}.") from None


def flip_rate(k: int, sigma: float, agreement: float = AGREEMENT) -> float:
    """Probability that GNMax's label of a query with ``agreement`` of ``k`` votes flips."""
    margin = (2.0 * agreement - 1.0) * k
    return 0.5 * math.erfc(margin / (math.sqrt(2.0) * sigma) / math.sqrt(2.0))


def dp_noise_ratio(*, n: int, d: int, epsilon: float, delta: float) -> float:
    """``r``: the Gaussian objective perturbation's noise norm over ``n R`` (module docstring)."""
    return 2.0 * math.sqrt(8.0 * math.log(2.0 / delta) + 4.0 * epsilon) * math.sqrt(d + 1) / (n * epsilon)


def _ensemble_k(n: int, d: int, sigma: float) -> tuple[int, float]:
    rows = max(20, 5 * (d + 1))
    allowed = [k for k in K_GRID if n / k >= rows] or [max(2, min(K_GRID[0], n // 20))]
    for k in allowed:
        if flip_rate(k, sigma) <= MAX_FLIP:
            return k, flip_rate(k, sigma)
    return allowed[-1], flip_rate(allowed[-1], sigma)


def choose(*, n: int, m: int, d: int, n_classes: int, epsilon: float, delta: float,
           learner: str = "logistic_regression", mechanism: str = "auto", public=None, quality=None,
           model_accuracy: float | None = None, route_accuracy=None) -> AutoChoice:
    """Choose the route (and ``k``) for a labeling job from public quantities: the plan's choice.

    Parameters
    ----------
    n : int
        Private rows (persons with a privacy unit).
    m : int
        Public rows to label.
    d : int
        Features after encoding (one-hot categories counted).
    n_classes : int
    epsilon, delta : float
        The job's budget.
    learner : str
        The learner asked for (the teachers' and the student's); on a tie of the plan, a
        linear learner's job goes to the DP logistic regression, another's to the ensemble.
    mechanism : str
        ``"auto"``, or a registered name (then only ``k`` is chosen for it).
    public : core.plan.PublicRows, optional
        The public rows as the DP-training routes encode them (default: a stand-in of
        ``d`` uniform columns).
    quality : core.plan.TeacherQuality, optional
        The assumed teacher quality (default :class:`core.plan.TeacherQuality`'s).
    model_accuracy : float, optional
        The assumed accuracy of a non-private logistic regression on all private rows
        (default: the teachers' noise-free plurality, :func:`core.plan.predict`).
    route_accuracy : mapping, optional
        ``{route: accuracy}``: a DP-training route's own model without noise
        (:func:`core.plan.predict`'s ``route_accuracy``).

    Returns
    -------
    AutoChoice
        ``predictions`` holds ``sigma``, ``flip_rate``, ``dp_noise`` and ``plan`` (the
        :class:`core.plan.Prediction` of every candidate).
    """
    from core.accounting.rdp import gnmax_sigma_for_epsilon
    from core.mechanisms import registry
    from core.plan import PublicRows, best, predict_many
    from core.plan.choice import ranking_key

    eps, dlt = check_epsilon(epsilon), check_delta(delta)
    n, m, d = int(n), max(1, int(m)), max(1, int(d))
    sigma = float(gnmax_sigma_for_epsilon(eps, n_answers=m, delta=dlt))
    k, flip = _ensemble_k(n, d, sigma)
    r = dp_noise_ratio(n=n, d=d, epsilon=eps, delta=dlt)
    pred = {"sigma": sigma, "flip_rate": flip, "dp_noise": r}
    ensemble = (f"An ensemble of k = {k} teachers ({n // k:,} rows each) answering {m:,} queries with GNMax "
                f"needs σ = {sigma:.1f}: a query on which {AGREEMENT:.0%} of the teachers agree flips with "
                f"probability {flip:.1%}.")
    if mechanism != "auto":
        return AutoChoice(mechanism, k, {}, f"k = {k} for {mechanism}: " + ensemble, pred)
    linear = learner in LINEAR_LEARNERS
    ensemble_routes = [("gnmax", {}), ("confident-gnmax", {})]
    trained_routes = [("dp-logistic", {"perturbation": "gaussian"}), ("dp-naive-bayes", {})]
    routes = trained_routes + ensemble_routes if linear else ensemble_routes + trained_routes
    public = PublicRows.standin(m, d) if public is None else public
    budget = {"epsilon": eps, "delta": dlt}
    preds = predict_many([(name, {**budget, **extra}) for name, extra in routes], n=n, m=m, k=min(k, n),
                         n_classes=n_classes, quality=quality, draws=8, rng=0, advise=False, public=public,
                         model_accuracy=model_accuracy, spread=False, route_accuracy=route_accuracy)
    pred["plan"] = preds
    chosen = best(preds)
    useful = chosen is not None
    if chosen is None:
        chosen = max([p for p in preds if p.feasible] or preds, key=ranking_key)
    settings = dict(routes[preds.index(chosen)][1])
    words = "; ".join(f"{registry.get(p.mechanism).title}: {p.correct:,.0f} of {m:,} right ({p.label_accuracy:.0%})"
                      if p.answered else f"{registry.get(p.mechanism).title}: answers nothing"
                      for p in preds)
    assumed = preds[-1].model_accuracy if preds[-1].model_accuracy is not None else preds[0].model_accuracy
    grounded = "".join(f", {p.mechanism}'s own model without noise right {p.route_accuracy:.1%}"
                       for p in preds if p.route_accuracy is not None)
    plan = (f"The plan (public quantities and assumptions only: teachers as assumed, a non-private logistic "
            f"regression right {assumed:.1%} of the time{grounded}) predicts {words}.")
    if chosen.mechanism == "dp-logistic":
        head = "Chose the DP logistic regression."
    elif chosen.mechanism == "dp-naive-bayes":
        head = "Chose the DP naive Bayes."
    else:
        head = f"Chose {registry.get(chosen.mechanism).title} with k = {k}."
    tail = "" if useful else (" No route is predicted to beat always answering the majority class; this is the "
                              "least bad.")
    dp = (f"The DP-training routes train one model on all {n:,} rows and pay once for every query (the "
          f"logistic regression's noise is {r:.3g} of the gradient's scale).")
    return AutoChoice(chosen.mechanism, k, settings, f"{head} {plan} {ensemble} {dp}{tail}", pred)
