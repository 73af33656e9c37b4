"""Recommended settings for a labeling job: number of teachers k, cutoff T and mechanism.

:func:`recommend_settings` works from sizes only -- the number of private rows, the rows
per class, the privacy budget and the number of public queries (all treated as public,
like ``n`` in the privacy report) -- and, optionally, a measured teacher agreement.  It
explains its choice in sentences (:attr:`Recommendation.reasons`):

- BTT answers a query only when the teachers' vote is stable enough to pass a noisy
  threshold; a unanimous vote passes with probability at least 1/2 only with
  ``k >= core.theory.btt_min_teachers(ε, δ, T, m)`` teachers, and the run stops after T
  abstentions.  With fewer teachers than that a BTT run answers next to nothing
  (e.g. Adult-sized data at ε = 2 with k = 250 and T = 5).
- With an ``agreement`` a (the share of teachers that vote for the majority, measured on
  a held-out slice of the private data: a NON-PRIVATE measurement, for planning only)
  the expected answered counts come from the answer models
  :func:`core.theory.expected_answers_btt` (each teacher wrong with probability 1 - a).
- Otherwise, or when BTT would answer too little, the Gaussian mechanisms: GNMax answers
  every query with noise σ set by ε (its vote margin ``k(2a - 1)`` should be well above
  σ), Confident-GNMax answers only the queries whose noisy top vote clears a threshold.
- With the public rows (``public=``), the DP logistic regression and the DP naive Bayes
  are planned beside the ensemble's recommendation (:mod:`core.plan.trained`) and
  recommended when the plan predicts they label more rows right (:func:`core.plan.best`).
- Then the plan (:func:`core.plan.predict`, the same predictions every page shows) runs
  the chosen mechanism on votes simulated under a public teacher-quality assumption
  (from the measured agreement when given): if its answered labels would not be right
  more often than always answering the majority class, another mechanism the plan calls
  useful is recommended instead, and when none is, the recommendation says so plainly
  (:attr:`Recommendation.useful` False) with what would be needed instead -- more
  private rows, fewer public rows, a larger ε, fewer teachers (:mod:`core.plan.advice`).
  The majority share is an assumption: balanced classes unless given (the private class
  shares are private and never read for it, docs/design.md §10.9).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from core.errors import ParameterError

__all__ = ["Recommendation", "recommend_settings", "quality_from", "MIN_ROWS_PER_TEACHER", "T_CANDIDATES"]

MIN_ROWS_PER_TEACHER = 20
"""The fewest private rows a teacher is given by a recommendation."""

T_CANDIDATES = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
"""The cutoffs BTT is considered with."""

USEFUL_SHARE = 0.5
"""BTT is recommended when it is expected to answer at least this share of the queries."""

ASSUMED_AGREEMENT = 0.9
"""The agreement assumed to size GNMax's k when none was measured."""


@dataclass(frozen=True)
class Recommendation:
    """Suggested settings and why (or, with ``useful`` False, the least bad and why none is useful).

    Attributes
    ----------
    mechanism : str
        A registered mechanism name (:func:`core.mechanisms.registry.names`).
    k : int
        Number of teachers.
    T : int or None
        BTT's cutoff (None for other mechanisms).
    settings : dict
        The mechanism's settings for ``label`` (``epsilon``, ``delta``, ``T``, ``threshold``...).
    reasons : list of str
        Why, in words.
    expected_answered : float or None
        The answer model's expected answered count (with an agreement only).
    k_max : int
        The most teachers the private rows allow (``MIN_ROWS_PER_TEACHER`` rows each, and
        every class able to win a majority).
    useful : bool
        Whether the plan predicts the recommended run's answered labels beat always
        answering the majority class (:func:`core.plan.predict`).
    prediction : core.plan.Prediction or None
        The plan's prediction of the recommended run (no private data used).
    advice : str or None
        When not useful: what would be needed instead.
    """

    mechanism: str
    k: int
    T: int | None
    settings: dict[str, Any]
    reasons: list[str] = field(default_factory=list)
    expected_answered: float | None = None
    k_max: int = 0
    useful: bool = True
    prediction: Any = None
    advice: str | None = None

    def flags(self) -> str:
        """The settings as ``label`` flags (no ``--k`` for a route that trains one model: it has no teachers)."""
        from core.mechanisms import registry

        parts = [f"--mechanism {self.mechanism}"]
        if registry.get(self.mechanism).inputs != "rows":
            parts.append(f"--k {self.k}")
        for name, value in self.settings.items():
            parts.append(f"--{name} {value:g}" if isinstance(value, float) else f"--{name} {value}")
        return " ".join(parts)


def _k_max(n_private: int, class_counts: Sequence[int]) -> int:
    smallest = int(min(class_counts))
    return max(2, min(n_private // MIN_ROWS_PER_TEACHER, 2 * smallest, n_private // 2))


def _btt_expected(k: int, shares: np.ndarray, epsilon: float, delta: float, T: int, m: int) -> float:
    """MODEL: BTT's expected answered count when the queries' majority shares are ``shares``
    (drawn independently per query; the same halting rule as
    :func:`core.theory.expected_answers_btt`)."""
    from scipy import stats

    from core import theory
    from core.accounting import calibrate_btt

    cal = calibrate_btt(epsilon, delta=delta, T=T, m=m, calibration="tight")
    top = np.round(np.clip(shares, 0.0, 1.0) * k)
    margin = np.abs(2.0 * top - k)
    distance = np.maximum(0.0, np.ceil(margin / 2.0) - 1.0)
    p = float(np.clip(np.mean(theory.btt_pass_probability(distance, float(cal.noise_scale), float(cal.threshold))), 0.0, 1.0))
    return p * float(np.sum(stats.binom.cdf(T - 1, np.arange(m), 1.0 - p)))


def recommend_settings(
    *,
    n_private: int,
    class_counts: Sequence[int],
    epsilon: float,
    delta: float,
    m: int,
    agreement: float | Sequence[float] | None = None,
    k: int | None = None,
    quality: Any = None,
    majority_share: float | None = None,
    draws: int = 10,
    public: Any = None,
    model_accuracy: float | None = None,
    route_accuracy: Any = None,
) -> Recommendation:
    """Suggest k, T and a mechanism for labeling ``m`` public rows at (ε, δ), or say that none is useful.

    Parameters
    ----------
    n_private, class_counts, epsilon, delta, m, agreement, k
        As for the sizing rules (see the module docstring).
    quality : core.plan.TeacherQuality, optional
        The public assumption the plan checks usefulness under (default: from the
        measured ``agreement`` when given, else :class:`core.plan.TeacherQuality`'s defaults).
    majority_share : float, optional
        The share of the majority class among the public rows, an assumption (default:
        balanced classes; the private class counts' shares are private and never read for
        it, docs/design.md §10.9).
    draws : int
        Simulated runs per prediction.
    public : core.plan.PublicRows, optional
        The public rows as the DP-training routes encode them; with it the DP logistic
        regression and the DP naive Bayes are planned beside the ensemble's mechanisms
        and recommended where they win (:func:`core.plan.best`).
    model_accuracy : float, optional
        The assumed (or, NON-PRIVATE, measured) accuracy of a logistic regression trained
        on all private rows without privacy (:func:`core.plan.predict`).
    route_accuracy : mapping, optional
        ``{route: accuracy}``: a DP-training route's own model without noise
        (:func:`core.plan.predict`'s ``route_accuracy``).

    Returns
    -------
    Recommendation
    """
    rec = _size(n_private=n_private, class_counts=class_counts, epsilon=epsilon, delta=delta, m=m, agreement=agreement, k=k)
    return _check_with_plan(rec, n_private=int(n_private), class_counts=[int(c) for c in class_counts], m=int(m),
                            agreement=agreement, quality=quality, majority_share=majority_share, draws=draws,
                            public=public, model_accuracy=model_accuracy, route_accuracy=route_accuracy)


def quality_from(agreement: float | Sequence[float] | None, class_shares: Sequence[float] | None = None,
                 quality: Any = None):
    """The plan's teacher-quality assumption for a recommendation.

    A measured agreement (NON-PRIVATE, the data owner's planning measurement) becomes the
    accuracy; per-row agreements split into easy rows (agreement ≥ 0.8) and hard ones.

    Parameters
    ----------
    agreement : float, sequence of float or None
    class_shares : sequence of float, optional
    quality : core.plan.TeacherQuality, optional
        Used as given (with ``class_shares`` if it has none).

    Returns
    -------
    core.plan.TeacherQuality
    """
    from dataclasses import replace

    from core.plan import TeacherQuality

    shares = None if class_shares is None else tuple(float(x) for x in class_shares)
    if quality is not None:
        return quality if quality.class_shares is not None or shares is None else replace(quality, class_shares=shares)
    if agreement is None:
        return TeacherQuality(class_shares=shares)
    a = np.atleast_1d(np.asarray(agreement, dtype=float))
    if a.size == 1:
        return TeacherQuality(accuracy=float(a[0]), hard_share=0.0, class_shares=shares)
    hard = a < 0.8
    return TeacherQuality(accuracy=float(a[~hard].mean()) if (~hard).any() else float(a.mean()),
                          hard_share=float(hard.mean()),
                          hard_accuracy=float(a[hard].mean()) if hard.any() else 0.55, class_shares=shares)


def _check_with_plan(rec: Recommendation, *, n_private: int, class_counts: list[int], m: int, agreement, quality,
                     majority_share: float | None, draws: int, public=None,
                     model_accuracy: float | None = None, route_accuracy=None) -> Recommendation:
    """Check the sized recommendation with the plan; switch mechanism or say none is useful."""
    rec = _check_ensemble(rec, n_private=n_private, class_counts=class_counts, m=m, agreement=agreement,
                          quality=quality, majority_share=majority_share, draws=draws)
    if public is None:
        return rec
    return _against_trained(rec, n_private=n_private, class_counts=class_counts, m=m, agreement=agreement,
                            quality=quality, majority_share=majority_share, public=public,
                            model_accuracy=model_accuracy, route_accuracy=route_accuracy)


def _against_trained(rec: Recommendation, *, n_private: int, class_counts: list[int], m: int, agreement, quality,
                     majority_share: float | None, public, model_accuracy, route_accuracy=None) -> Recommendation:
    """The DP-training routes planned beside the ensemble's recommendation; the plan's choice wins."""
    from dataclasses import replace

    from core.plan import best, predict

    q = quality_from(agreement, _shares(class_counts, majority_share), quality)
    budget = {"epsilon": rec.settings["epsilon"], "delta": rec.settings["delta"]}
    trained = [predict(name, {**budget, **extra}, n=n_private, m=m, k=rec.k, n_classes=len(class_counts), quality=q,
                       rng=0, advise=False, public=public, model_accuracy=model_accuracy,
                       route_accuracy=route_accuracy)
               for name, extra in (("dp-logistic", {"perturbation": "gaussian"}), ("dp-naive-bayes", {}))]
    reasons = list(rec.reasons)
    for p in trained:
        assumed = (f"its own model without noise right {p.route_accuracy:.1%} of the time" if p.route_accuracy
                   is not None else f"a non-private logistic regression right {p.model_accuracy:.1%} of the time")
        reasons.append(f"Plan of {p.mechanism} (one model trained with DP on all {n_private} private rows, no "
                       f"teachers; assumed: {assumed}): {p.summary().split(': ', 1)[1]}.")
    ensemble = rec.prediction if rec.useful else None
    chosen = best(([ensemble] if ensemble is not None else []) + trained)
    if chosen is None:  # nothing useful: the least bad is the one with the most right labels, every route counted
        from core.plan.choice import ranking_key

        least = max([p for p in [rec.prediction, *trained] if p is not None and p.feasible] or [rec.prediction],
                    key=lambda p: ranking_key(p) if p is not None else (-1.0, -1.0))
        if least is not None and least is not rec.prediction:
            settings = {**budget, **({"perturbation": "gaussian"} if least.mechanism == "dp-logistic" else {})}
            reasons.append(f"Least bad: {least.mechanism}, the most rows right ({least.correct:.0f} of {m}) though "
                           "not useful.")
            return replace(rec, mechanism=least.mechanism, T=None, settings=settings, reasons=reasons,
                           prediction=least)
        return replace(rec, reasons=reasons)
    if chosen is ensemble:
        reasons.append(f"{rec.mechanism} keeps the recommendation: the plan predicts it labels at least as many "
                       "rows right as the DP-training routes.")
        return replace(rec, reasons=reasons)
    reasons.append(f"{chosen.mechanism} is recommended: the plan predicts it labels the most rows right "
                   f"({chosen.correct:.0f} of {m}), every public row answered by one model that pays once.")
    settings = {**budget, **({"perturbation": "gaussian"} if chosen.mechanism == "dp-logistic" else {})}
    return replace(rec, mechanism=chosen.mechanism, T=None, settings=settings, reasons=reasons, useful=True,
                   prediction=chosen, advice=None)


def _shares(class_counts: list[int], majority_share: float | None) -> list[float]:
    n_classes = len(class_counts)
    if majority_share is not None:
        ms = float(majority_share)
        return [ms] + [(1.0 - ms) / (n_classes - 1)] * (n_classes - 1)
    return [1.0 / n_classes] * n_classes  # assumed balanced: the private shares are not read (§10.9)


def _check_ensemble(rec: Recommendation, *, n_private: int, class_counts: list[int], m: int, agreement, quality,
                    majority_share: float | None, draws: int) -> Recommendation:
    """Check the sized ensemble recommendation with the plan; switch mechanism or say none is useful."""
    from dataclasses import replace

    from core.plan import predict

    n_classes = len(class_counts)
    if majority_share is not None:
        ms = float(majority_share)
        if not 0.0 < ms < 1.0 or ms < 1.0 / n_classes:
            raise ParameterError(f"majority_share must lie between 1/{n_classes} and 1, got {majority_share!r}.")
        rest = (1.0 - ms) / (n_classes - 1)
        shares = [ms] + [rest] * (n_classes - 1)
        source = "an assumed"
    else:  # the private class shares are private: assumed balanced, never read for free (§10.9)
        shares = [1.0 / n_classes] * n_classes
        source = "an assumed balanced (the private class shares are not read)"
    q = quality_from(agreement, shares, quality)
    sizes = dict(n=n_private, m=m, k=rec.k, n_classes=n_classes, quality=q, draws=draws)
    first = predict(rec.mechanism, rec.settings, **sizes)
    reasons = list(rec.reasons)
    note = f"Plan (predicted, no privacy spent; assumed: {q.describe()}): {first.summary().split(': ', 1)[1]}."
    if first.useful:
        return replace(rec, reasons=reasons + [note], prediction=first)
    reasons.append(note)
    budget = {"epsilon": rec.settings["epsilon"], "delta": rec.settings["delta"]}
    others = [("gnmax", dict(budget)), ("confident-gnmax", dict(budget))]
    if rec.mechanism != "btt":
        others.append(("btt", {**budget, "T": 10}))
    best = None
    for name, settings in others:
        if name == rec.mechanism:
            continue
        alt = predict(name, settings, **sizes, advise=False)
        if alt.useful and (best is None or alt.correct > best.correct):
            best = alt
    if best is not None:
        reasons.append(f"{rec.mechanism} is predicted not useful (its answered labels would be right "
                       f"{first.label_accuracy:.0%} of the time; always the majority class: {first.majority_share:.0%}, "
                       f"{source} share); {best.mechanism} is predicted useful instead: {best.summary().split(': ', 1)[1]}.")
        return replace(rec, mechanism=best.mechanism, T=best.settings.get("T"), settings=dict(best.settings),
                       reasons=reasons, prediction=best)
    reasons.append("No setting is useful at this budget and size: " + (first.advice or "").replace("Not useful: ", "", 1))
    return replace(rec, reasons=reasons, useful=False, prediction=first, advice=first.advice)


def _size(*, n_private: int, class_counts: Sequence[int], epsilon: float, delta: float, m: int,
          agreement: float | Sequence[float] | None = None, k: int | None = None) -> Recommendation:
    """Suggest k, T and a mechanism for labeling ``m`` public rows at (ε, δ) from the sizing rules.

    Parameters
    ----------
    n_private : int
        Number of private units: rows, or persons where the data has a privacy unit (a
        person's rows go to one teacher, so persons bound the number of teachers).
    class_counts : sequence of int
        Private rows per class (a size, used as public).
    epsilon, delta : float
        The budget of the run.
    m : int
        Number of public rows to label.
    agreement : float or sequence of float, optional
        Measured share of teachers voting with the majority (NON-PRIVATE: measured on
        held-out private rows, for planning only; it is never exported).  One number: the
        binomial answer model (each teacher wrong independently, which is optimistic
        where some queries are hard); one number per held-out query: each query's own
        vote margin, so hard queries count as the abstentions they cause.
    k : int, optional
        The number of teachers the agreement was measured with (or that you intend to
        use); default: chosen here.

    Returns
    -------
    Recommendation
    """
    from core import theory
    from core.accounting import gnmax_sigma_for_epsilon
    from core.validation import check_delta, check_epsilon, check_m

    epsilon, delta, m = check_epsilon(epsilon), check_delta(delta), check_m(m)
    counts = [int(c) for c in class_counts]
    if len(counts) < 2 or min(counts) < 1:
        raise ParameterError("class_counts must give the rows of at least two classes, each at least 1.")
    n_private = int(n_private)
    if n_private < 2:
        raise ParameterError(f"n_private must be at least 2 (rows or persons), got {n_private}.")
    shares = None
    if agreement is not None:
        shares = np.atleast_1d(np.asarray(agreement, dtype=float))
        if shares.size == 0 or not np.all((shares > 0.0) & (shares <= 1.0)):
            raise ParameterError("agreement must be a share in (0, 1] (or one share per held-out query).")
        agreement = float(shares.mean())
    binary = len(counts) == 2
    k_max = _k_max(n_private, counts)
    if k is not None:
        k = int(k)
        if not 2 <= k <= n_private // 2:
            raise ParameterError(f"k must be between 2 and {n_private // 2}, got {k}.")
    reasons: list[str] = [
        f"{n_private} private rows, smallest class {min(counts)} rows: at most {k_max} teachers "
        f"(at least {MIN_ROWS_PER_TEACHER} rows each, and every class able to win a majority)."
    ]
    budget = {"epsilon": float(epsilon), "delta": float(delta)}

    # BTT: which cutoffs a unanimous vote can pass with the teachers available.
    k_btt = k if k is not None else k_max
    mins = {T: int(theory.btt_min_teachers(epsilon, delta, T, m, calibration="tight"))
            for T in T_CANDIDATES if T <= m}
    feasible = [T for T, need in mins.items() if need <= k_btt]
    if not feasible:
        T1 = min(mins)
        reasons.append(
            f"BTT is not recommended: even with T = {T1} a unanimous vote passes its test with "
            f"probability 1/2 only from k = {mins[T1]} teachers (core.theory.btt_min_teachers), "
            f"more than the {k_btt} available; it would answer almost nothing.")
    else:
        shown = ", ".join(f"T = {T}: k >= {mins[T]}" for T in list(mins)[:4])
        reasons.append(f"BTT needs k >= btt_min_teachers(ε, δ, T, m) for a unanimous vote to pass ({shown}).")

    expected = None
    if agreement is not None and feasible and binary:
        alpha = 1.0 - float(agreement)
        answers = {T: (float(theory.expected_answers_btt(k_btt, alpha, epsilon, delta, T, m, calibration="tight"))
                       if shares.size == 1 else _btt_expected(k_btt, shares, epsilon, delta, T, m))
                   for T in feasible}
        best_T = max(answers, key=lambda T: (answers[T], -T))
        expected = answers[best_T]
        reasons.append(
            f"With the measured agreement {float(agreement):.1%}"
            + (f" (mean over {shares.size} held-out queries)" if shares.size > 1 else "")
            + f" (NON-PRIVATE, for planning only) the "
            f"answer model (core.theory.expected_answers_btt) expects BTT with k = {k_btt}, "
            f"T = {best_T} to answer about {expected:.0f} of the {m} queries.")
        if expected >= USEFUL_SHARE * m:
            reasons.append("BTT is recommended: it answers most queries, and its guarantee holds "
                           "whatever the votes (no data-dependent accounting).")
            return Recommendation("btt", k_btt, best_T, {**budget, "T": best_T}, reasons, expected, k_max)
        reasons.append(f"That is under {USEFUL_SHARE:.0%} of the queries, so a Gaussian mechanism is recommended instead.")
    elif agreement is None:
        reasons.append("No teacher agreement was given, so BTT's answered count cannot be estimated; "
                       "measure it (--measure-agreement) for a BTT estimate.")
    elif not binary:
        reasons.append("The answer models are for two classes; with more classes a Gaussian mechanism is recommended.")

    # GNMax: noise for m answers; the margin k(2a - 1) should clear it.
    sigma = float(gnmax_sigma_for_epsilon(epsilon, n_answers=m, delta=delta))
    a = float(agreement) if agreement is not None else ASSUMED_AGREEMENT
    margin_share = max(2.0 * a - 1.0, 1e-3)
    k_needed = int(math.ceil(3.0 * sigma / margin_share))
    k_gauss = k if k is not None else max(2, min(k_max, max(k_needed, 100)))
    source = "measured" if agreement is not None else "assumed"
    reasons.append(
        f"GNMax answering all {m} queries at (ε = {epsilon:g}, δ = {delta:g}) adds Gaussian noise σ = "
        f"{sigma:.1f} to the votes; with {a:.0%} agreement ({source}) the vote margin k(2a - 1) is "
        f"3σ from k = {k_needed} teachers.")
    if k_gauss < k_needed:
        reasons.append(
            f"Only {k_gauss} teachers: the noise will flip many labels. Label fewer public rows "
            "(a smaller m), raise ε, or use more private data.")
        # Confident-GNMax answers only confident queries: fewer answers, less noise each.
        threshold = round(0.7 * k_gauss)
        reasons.append(
            f"Among the ensemble's mechanisms, Confident-GNMax: it answers only the queries whose noisy top vote "
            f"clears the threshold {threshold} (70% of the teachers), spending less on the rest.")
        return Recommendation("confident-gnmax", k_gauss, None,
                              {"epsilon": float(epsilon), "delta": float(delta), "threshold": float(threshold)},
                              reasons, expected, k_max)
    reasons.append(f"Among the ensemble's mechanisms, GNMax with k = {k_gauss}: it answers every query.")
    return Recommendation("gnmax", k_gauss, None, dict(budget), reasons, expected, k_max)
