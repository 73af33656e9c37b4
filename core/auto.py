"""Choose the labeling route and the number of teachers from public quantities only.

``--mechanism auto --k auto`` on the command line, and :func:`choose` in the library,
pick among every route -- the ensemble's aggregators and the models trained with DP on
the private rows (:mod:`core.mechanisms.dp_training`) -- from quantities that are public
by the library's conventions (docs/design.md §1): the number of private rows ``n``, the
number of public rows ``m``, the encoded width ``d``, the number of classes, the budget
(ε, δ) and the learner the data owner asked for.  Nothing is read from the private rows,
so choosing costs no privacy.  The choice is reported in sentences (:attr:`AutoChoice.reason`).

The two predictions it compares (docs/design.md §12.5 for the measurements behind them):

Ensemble (GNMax)
    Every answer pays: ``σ = gnmax_sigma_for_epsilon(ε, m, δ)``.  A query on which a
    share ``a = 0.9`` of the ``k`` teachers agree (a public planning assumption) has a
    vote margin ``(2a − 1)k`` and its label flips with probability
    ``Φ(−(2a − 1)k / (√2 σ))``.  ``k`` is the smallest on a grid with a flip rate of at
    most 2 %, keeping at least ``max(20, 5(d + 1))`` rows per teacher; else the largest
    such ``k``.
DP logistic regression (Gaussian objective perturbation)
    One model pays once for every query.  Its noise relative to the loss gradient's
    scale is ``r = √(8 log(2/δ) + 4ε) · √(d + 1) / (n ε)`` (the noise vector's norm over
    ``n`` times the gradient bound ``R``).  On UCI Adult (``r ≈ 0.003`` at ε = 1) it lands
    within 1.5 points of the non-private logistic regression.

The rule: a linear learner (``logistic_regression``, ``linear_svm``) asks for the model
class the DP logistic regression trains on all ``n`` rows instead of ``n/k``: it is
chosen whenever ``r ≤ 0.05``.  For another learner the ensemble keeps the learner's
flexibility and is chosen when its flip rate is at most 2 %; otherwise the DP logistic
regression if ``r ≤ 0.05``, else the ensemble.  The choice is a plan from public
assumptions, not a measurement: the Compare page and ``experiments/small_epsilon.py``
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
    return math.sqrt(8.0 * math.log(2.0 / delta) + 4.0 * epsilon) * math.sqrt(d + 1) / (n * epsilon)


def _ensemble_k(n: int, d: int, sigma: float) -> tuple[int, float]:
    rows = max(20, 5 * (d + 1))
    allowed = [k for k in K_GRID if n / k >= rows] or [max(2, min(K_GRID[0], n // 20))]
    for k in allowed:
        if flip_rate(k, sigma) <= MAX_FLIP:
            return k, flip_rate(k, sigma)
    return allowed[-1], flip_rate(allowed[-1], sigma)


def choose(*, n: int, m: int, d: int, n_classes: int, epsilon: float, delta: float,
           learner: str = "logistic_regression", mechanism: str = "auto") -> AutoChoice:
    """Choose the route (and ``k``) for a labeling job from public quantities.

    Parameters
    ----------
    n : int
        Private rows.
    m : int
        Public rows to label.
    d : int
        Features after encoding (one-hot categories counted).
    n_classes : int
    epsilon, delta : float
        The job's budget.
    learner : str
        The learner asked for (the teachers' and the student's).
    mechanism : str
        ``"auto"``, or a registered name (then only ``k`` is chosen for it).

    Returns
    -------
    AutoChoice
    """
    from core.accounting.rdp import gnmax_sigma_for_epsilon

    eps, dlt = check_epsilon(epsilon), check_delta(delta)
    n, m, d = int(n), max(1, int(m)), max(1, int(d))
    sigma = float(gnmax_sigma_for_epsilon(eps, n_answers=m, delta=dlt))
    k, flip = _ensemble_k(n, d, sigma)
    r = dp_noise_ratio(n=n, d=d, epsilon=eps, delta=dlt)
    pred = {"sigma": sigma, "flip_rate": flip, "dp_noise": r}
    ensemble = (f"An ensemble of k = {k} teachers ({n // k:,} rows each) answering {m:,} queries with GNMax "
                f"needs σ = {sigma:.1f}: a query on which {AGREEMENT:.0%} of the teachers agree flips with "
                f"probability {flip:.1%}.")
    dp = (f"A logistic regression trained with Gaussian objective perturbation on all {n:,} rows pays once for "
          f"every query; its noise is {r:.3g} of the gradient's scale.")
    if mechanism != "auto":
        return AutoChoice(mechanism, k, {}, f"k = {k} for {mechanism}: " + ensemble, pred)
    linear = learner in LINEAR_LEARNERS
    if linear and r <= MAX_DP_NOISE:
        why = (f"{dp} The learner asked for is linear, so the DP logistic regression trains the same model class "
               f"on all rows instead of {n // k:,}; its noise is below {MAX_DP_NOISE}. {ensemble}")
        return AutoChoice("dp-logistic", k, {"perturbation": "gaussian"}, "Chose the DP logistic regression. " + why, pred)
    if not linear and flip <= MAX_FLIP:
        why = f"{ensemble} That is at most {MAX_FLIP:.0%}, and the ensemble keeps the {learner} learner. {dp}"
        return AutoChoice("gnmax", k, {}, f"Chose GNMax with k = {k}. " + why, pred)
    if r <= MAX_DP_NOISE:
        why = f"{ensemble} That is above {MAX_FLIP:.0%}. {dp}"
        return AutoChoice("dp-logistic", k, {"perturbation": "gaussian"}, "Chose the DP logistic regression. " + why, pred)
    why = f"{ensemble} {dp} That is above {MAX_DP_NOISE} too; GNMax degrades more gracefully."
    return AutoChoice("gnmax", k, {}, f"Chose GNMax with k = {k}. " + why, pred)
