"""Sweeps against the bounds: answered, ⊥ and wrong labels against ε, T, k or m, per mechanism.

For every value of the swept setting a registered mechanism runs ``draws`` times on the
same votes (:func:`core.plan.outcomes`, the plan's engine: per-query mechanisms are run
once on the draws stacked, the others once per draw), and the shares of the ``m`` queries
answered, abstained (⊥) and answered with a wrong label are summarised by their mean and
standard deviation over the draws of the noise.  Beside them stand the mechanism's own
explicit bounds with their constants (:attr:`core.mechanisms.registry.TestPicture.bound_rates`)
at the same settings; a mechanism without one says so.

Sweeping ε or T reuses one set of votes; sweeping m takes the first m queries; sweeping k
needs votes of k teachers, simulated from a public :class:`core.plan.TeacherQuality`
(:func:`core.plan.simulate_votes`).  Votes of teaching data are NON-PRIVATE teaching views:
a sweep on them is never exported.

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

__all__ = ["VARIES", "SweepPoint", "sweep_against_bounds"]

VARIES = ("epsilon", "T", "k", "m")
"""The settings a sweep can vary."""


@dataclass(frozen=True)
class SweepPoint:
    """One value of the swept setting: measured shares (mean, sd over draws) and the bounds.

    Attributes
    ----------
    value : float
        The swept setting's value.
    epsilon, delta : float
        The run's data-independent guarantee.
    answered, bottom, wrong : float
        Mean shares of the m queries answered, ⊥ and answered with a wrong label.
    answered_sd, bottom_sd, wrong_sd : float
        Their standard deviations over the draws.
    bounds : dict or None
        The mechanism's explicit bounds at these settings (``"wrong"``, ``"⊥"``), None
        when none is known.
    feasible : bool
    reason : str or None
        Why the settings cannot run or can answer (almost) nothing.
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
    bounds: dict | None = field(default=None)
    feasible: bool = True
    reason: str | None = None


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
) -> list[SweepPoint]:
    """Measured outcome shares and the mechanism's explicit bounds over a swept setting.

    Parameters
    ----------
    mechanism : str
        A registered mechanism.
    settings : mapping
        Its settings (as for :func:`core.pipeline.label`, ``epsilon`` where its noise
        follows from ε).
    vary : {"epsilon", "T", "k", "m"}
        The setting to sweep.
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
    if vary == "k" and quality is None:
        raise ParameterError("Sweeping k simulates k teachers' votes: give a TeacherQuality.")
    mech = registry.get(mechanism)
    counts = np.asarray(counts)
    truth = np.asarray(truth, dtype=np.int64)
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    points: list[SweepPoint] = []
    for value in values:
        request = dict(settings)
        c_now, t_now = counts, truth
        if vary in ("epsilon", "T"):
            request[vary] = int(value) if vary == "T" else float(value)
        elif vary == "m":
            c_now, t_now = counts[: int(value)], truth[: int(value)]
        else:
            sim = simulate_votes(m=len(truth), k=int(value), n_classes=counts.shape[1], quality=quality, rng=gen)
            c_now, t_now = sim.counts, sim.truth
        try:
            out = outcomes(c_now, t_now, mechanism, request, draws=draws, rng=gen)
            params = _run_params(mech, c_now, out.settings)
        except PrivateLabelLabError as exc:
            points.append(SweepPoint(value=float(value), feasible=False, reason=str(exc)))
            continue
        m = float(out.m)
        mean, sd = out.mean(), out.sd()
        pic = mech.picture
        bounds = None
        if pic is not None and pic.bound_rates is not None:
            votes = c_now if mech.inputs == "counts" else (np.arange(int(c_now[0].sum()))[None, :] < c_now[:, 1:2]).astype(float)
            bounds = pic.bound_rates(votes, params, t_now, beta)
        points.append(SweepPoint(
            value=float(value), epsilon=out.epsilon, delta=out.delta,
            answered=mean["answered"] / m, bottom=mean["bottom"] / m, wrong=mean["wrong"] / m,
            answered_sd=sd["answered"] / m, bottom_sd=sd["bottom"] / m, wrong_sd=sd["wrong"] / m,
            bounds=bounds, feasible=out.feasible, reason=out.reason,
        ))
    return points
