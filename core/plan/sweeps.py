"""Sweeps against the bounds: answered, ⊥ and wrong labels against ε, T, k or m, per mechanism.

For every value of the swept setting a registered mechanism runs ``draws`` times on the
same votes (:func:`core.plan.outcomes`, the plan's engine: per-query mechanisms are run
once on the draws stacked, the others once per draw), and the shares of the ``m`` queries
answered, abstained (⊥) and answered with a wrong label are summarised by their mean and
standard deviation over the draws of the noise.  Beside them stand the mechanism's own
explicit bounds with their constants (:attr:`core.mechanisms.registry.TestPicture.bound_rates`)
at the same settings, a bound that holds only under conditions (BTT's Theorem 3.2) only at
the points where they hold, with the failing condition in words elsewhere
(:attr:`SweepPoint.bound_note`); a mechanism without one says so.

Sweeping ε, δ or T reuses one set of votes; sweeping m takes the first m queries; sweeping k
needs votes of k teachers, simulated from a :class:`core.plan.TeacherQuality`
(:func:`core.plan.simulate_votes`): an assumed one, or on teaching data the one measured
from the real teachers (:func:`measured_quality`).  A model trained with differential
privacy on the private rows (registry inputs ``"rows"``) has no teachers and no cutoff: it is
swept over ε, δ and m by training it ``draws`` times on the rows themselves.  Votes and rows
of teaching data are NON-PRIVATE teaching views: a sweep on them is never exported.

References
----------
.. [BTT18] R. Bassily, O. Thakkar, A. Thakurta. Model-Agnostic Private Learning. NeurIPS 2018.
.. [PATE18] N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar, Ú. Erlingsson.
   Scalable Private Learning with PATE. ICLR 2018.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from core.errors import ParameterError, PrivateLabelLabError

__all__ = ["VARIES", "ROWS_VARY", "SweepPoint", "measured_quality", "sweep_against_bounds"]

VARIES = ("epsilon", "delta", "T", "k", "m")
"""The settings a sweep can vary."""

ROWS_VARY = ("epsilon", "delta", "m")
"""What a sweep of a model trained on the private rows can vary (it has no teachers and no cutoff)."""


@dataclass(frozen=True)
class SweepPoint:
    """One value of the swept setting: measured shares (mean, sd over draws) and the bounds.

    Attributes
    ----------
    value : float
        The swept setting's value.
    epsilon, delta : float
        The run's data-independent guarantee.
    answered, bottom, wrong, unprocessed : float
        Mean shares of the m queries answered, ⊥, answered with a wrong label, and not
        processed (after a run halts, e.g. BTT after T ⊥: no label and not ⊥; or a
        certified run whose test failed).
    answered_sd, bottom_sd, wrong_sd, unprocessed_sd : float
        Their standard deviations over the draws.
    bounds : dict or None
        The mechanism's explicit bounds at these settings (``"wrong"``, ``"⊥"``), None
        when none is known.
    feasible : bool
    reason : str or None
        Why the settings cannot run or can answer (almost) nothing.
    bound_note : str or None
        Where a bound holds only under conditions and they fail at this point (BTT's
        Theorem 3.2): which condition fails and what would meet it; the bound is then left
        out of ``bounds``.
    """

    value: float
    epsilon: float = float("nan")
    delta: float = float("nan")
    answered: float = float("nan")
    bottom: float = float("nan")
    wrong: float = float("nan")
    answered_sd: float = float("nan")
    bottom_sd: float = float("nan")
    wrong_sd: float = float("nan")
    unprocessed: float = float("nan")
    unprocessed_sd: float = float("nan")
    bounds: dict | None = field(default=None)
    feasible: bool = True
    reason: str | None = None
    bound_note: str | None = None


_WORDS = {"T": "the cutoff T", "k": "the number of teachers k"}


def measured_quality(counts, truth, *, rows_per_teacher: int | None = None):
    """The teacher quality of real teachers, measured from their votes and the true labels.

    NON-PRIVATE (teaching data only): it reads the votes and the queries' true labels.  Each
    query's agreement is the share of teachers voting for its true class.  Most queries are
    easy, so a teacher's accuracy on an easy query is the median agreement ``A``; a query is
    hard when its agreement lies more than four binomial standard deviations
    ``√(A(1 − A)/k)`` (and 0.02) below ``A``.  The hard queries' mean agreement is the hard
    accuracy and their spread (the standard deviation times √3, the half-width of a uniform
    law with that deviation) the hard spread; the class shares are the true labels' shares.

    Parameters
    ----------
    counts : array-like of int, shape (m, n_classes)
        The real teachers' vote counts.
    truth : array-like of int, shape (m,)
        The queries' true classes.
    rows_per_teacher : int, optional
        The private rows each teacher was trained on: the accuracies then hold at that many
        rows and move with ``k`` (:meth:`core.plan.TeacherQuality.at`).

    Returns
    -------
    core.plan.TeacherQuality
    """
    from core.plan import TeacherQuality

    counts = np.asarray(counts, dtype=float)
    truth = np.asarray(truth, dtype=np.int64)
    if counts.ndim != 2 or truth.shape != counts.shape[:1] or counts.shape[0] < 1:
        raise ParameterError("measured_quality needs counts of shape (m, n_classes) and m true classes.")
    k = float(counts[0].sum())
    if k < 1:
        raise ParameterError("the votes hold no teacher.")
    agree = counts[np.arange(truth.size), truth] / k
    easy = float(np.median(agree))
    hard = agree < easy - max(4.0 * np.sqrt(max(easy * (1.0 - easy), 1e-12) / k), 0.02)
    if hard.any():
        hard_acc = float(agree[hard].mean())
        spread = float(min(np.sqrt(3.0) * agree[hard].std(), hard_acc, 1.0 - hard_acc))
    else:
        hard_acc, spread = 0.5, 0.0
    shares = np.bincount(truth, minlength=counts.shape[1]) / truth.size
    return TeacherQuality(accuracy=float(np.clip(agree[~hard].mean() if (~hard).any() else easy, 0.0, 1.0)),
                          hard_share=float(hard.mean()), hard_accuracy=float(np.clip(hard_acc, 0.0, 1.0)),
                          class_shares=tuple(float(x) for x in shares) if np.all(shares > 0) else None,
                          rows=None if rows_per_teacher is None else max(int(rows_per_teacher), 1),
                          hard_spread=max(spread, 0.0))


def _rows_outcomes(mech, rows, truth, request: Mapping[str, Any], draws: int, gen):
    """``draws`` trainings of a model on the private rows: (answered, bottom, wrong) per draw,
    the guarantee and the resolved settings."""
    from core import pipeline
    from core.mechanisms.result import BOTTOM

    m = int(rows.shape[0])
    params = pipeline.resolve(mech.name, dict(request), m)
    guarantee = mech.privacy_map(m, **params)
    counts = np.zeros((int(draws), 3))
    for d in range(int(draws)):
        res = mech.label(rows, **params, rng=gen)
        labels = np.asarray(res.labels)
        answered = labels >= 0
        counts[d] = (answered.sum(), (labels == BOTTOM).sum(), (answered & (labels != truth)).sum())
    return counts, guarantee, params


def _rows_point(mech, rows, truth, request, draws, gen, value: float) -> SweepPoint:
    """One sweep point of a model trained on the private rows (no explicit bound is drawn)."""
    try:
        counts, guarantee, _ = _rows_outcomes(mech, rows, truth, request, draws, gen)
    except PrivateLabelLabError as exc:
        return SweepPoint(value=value, feasible=False, reason=str(exc))
    m = float(rows.shape[0])
    mean, sd = counts.mean(axis=0) / m, counts.std(axis=0) / m
    return SweepPoint(value=value, epsilon=float(guarantee.epsilon), delta=float(guarantee.delta),
                      answered=float(mean[0]), bottom=float(mean[1]), wrong=float(mean[2]),
                      answered_sd=float(sd[0]), bottom_sd=float(sd[1]), wrong_sd=float(sd[2]),
                      unprocessed=float(max(0.0, 1.0 - mean[0] - mean[1])), unprocessed_sd=0.0)


def _run_params(mech, counts: np.ndarray, settings: Mapping[str, Any]) -> dict:
    """One run's public parameters at resolved settings (what the bounds read)."""
    if mech.inputs == "scores":
        k = int(counts[0].sum())
        inputs = (np.arange(k)[None, :] < counts[:, 1:2]).astype(float)
    else:
        inputs = counts
    return mech.label(inputs, **settings, rng=0).params


def sweep_against_bounds(
    mechanism: str,
    settings: Mapping[str, Any],
    *,
    vary: str,
    values: Sequence[float],
    counts,
    truth,
    draws: int = 20,
    rng=None,
    beta: float = 0.05,
    quality=None,
    n: int | None = None,
    rows=None,
) -> list[SweepPoint]:
    """Measured outcome shares and the mechanism's explicit bounds over a swept setting.

    Parameters
    ----------
    mechanism : str
        A registered mechanism.
    settings : mapping
        Its settings (as for :func:`core.pipeline.label`, ``epsilon`` where its noise
        follows from ε).
    vary : {"epsilon", "delta", "T", "k", "m"}
        The setting to sweep (a model trained on the rows: ε, δ or m).
    values : sequence
        Its values.
    counts : array-like, shape (m, c)
        Vote counts (teaching data's, or simulated).
    truth : array-like of int, shape (m,)
        The queries' true classes.
    draws : int
        Draws of the noise per value.
    rng : Generator, int or None
        Randomness of the runs (and of the simulated votes when sweeping k).
    beta : float
        Failure probability of the bounds that have one.
    quality : core.plan.TeacherQuality, optional
        Needed to sweep k (votes of k teachers are simulated from it).
    n : int, optional
        The private rows, when sweeping k with a quality that moves with the rows per
        teacher (``quality.rows`` set): k teachers get ``n // k`` rows each.
    rows : core.mechanisms.dp_training.PrivateRows, optional
        Needed for a mechanism trained on the private rows (registry inputs ``"rows"``);
        ``counts`` is then not read, ``truth`` holds the public rows' true classes.

    Returns
    -------
    list of SweepPoint
        One per value; a value the mechanism refuses gives a point with ``feasible=False``
        and its reason.
    """
    from core.mechanisms import registry
    from core.plan.engine import outcomes
    from core.plan.quality import simulate_votes

    if vary not in VARIES:
        raise ParameterError(f"vary must be one of {', '.join(VARIES)}, got {vary!r}.")
    mech = registry.get(mechanism)
    if mech.inputs == "rows":
        title = mech.title.split(" (")[0]
        if vary not in ROWS_VARY:
            raise ParameterError(f"{title} is trained on the private rows: it has no teachers and no cutoff, "
                                 f"so it sweeps ε, δ or the number of queries m, not {_WORDS.get(vary, vary)}.")
        if rows is None:
            raise ParameterError(f"{title} is trained on the private rows: give them (rows=).")
    elif vary == "k" and quality is None:
        raise ParameterError("Sweeping k simulates k teachers' votes: give a TeacherQuality.")
    counts = np.asarray(counts) if rows is None or mech.inputs != "rows" else None
    truth = np.asarray(truth, dtype=np.int64)
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    points: list[SweepPoint] = []
    for value in values:
        request = dict(settings)
        c_now, t_now = counts, truth
        if vary in ("epsilon", "delta", "T"):
            request[vary] = int(value) if vary == "T" else float(value)
        elif vary == "m":
            t_now = truth[: int(value)]
            if mech.inputs == "rows":
                from dataclasses import replace

                c_now = replace(rows, X_public=rows.X_public[: int(value)])
            else:
                c_now = counts[: int(value)]
        else:
            sim = simulate_votes(m=len(truth), k=int(value), n_classes=counts.shape[1], quality=quality, rng=gen,
                                 n=n)
            c_now, t_now = sim.counts, sim.truth
        if mech.inputs == "rows":
            points.append(_rows_point(mech, rows if vary != "m" else c_now, t_now, request, draws, gen, float(value)))
            continue
        try:
            out = outcomes(c_now, t_now, mechanism, request, draws=draws, rng=gen)
            params = _run_params(mech, c_now, out.settings)
        except PrivateLabelLabError as exc:
            points.append(SweepPoint(value=float(value), feasible=False, reason=str(exc)))
            continue
        m = float(out.m)
        mean, sd = out.mean(), out.sd()
        pic = mech.picture
        bounds, note = None, None
        if pic is not None and pic.bound_rates is not None:
            votes = c_now if mech.inputs == "counts" else (np.arange(int(c_now[0].sum()))[None, :] < c_now[:, 1:2]).astype(float)
            bounds = pic.bound_rates(votes, params, t_now, beta)
            check = None if pic.bound_conditions is None else pic.bound_conditions(votes, params, t_now, beta)
            note = None if check is None or check.holds else check.sentence()
        points.append(SweepPoint(
            value=float(value), epsilon=out.epsilon, delta=out.delta,
            answered=mean["answered"] / m, bottom=mean["bottom"] / m, wrong=mean["wrong"] / m,
            answered_sd=sd["answered"] / m, bottom_sd=sd["bottom"] / m, wrong_sd=sd["wrong"] / m,
            unprocessed=mean["not_processed"] / m, unprocessed_sd=sd["not_processed"] / m,
            bounds=bounds, feasible=out.feasible, reason=out.reason, bound_note=note,
        ))
    return points
