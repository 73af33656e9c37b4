"""The privacy map of private selection: repeat a random candidate a random number of times, keep the best.

Papernot and Steinke's random-stopping selection (docs/design.md §10.3).  A grid of
candidates -- (mechanism, settings) pairs run on the same teachers' votes -- is tuned
as follows: draw the number of repetitions ``K`` from a truncated negative binomial
distribution of mean ``μ`` and shape ``η`` (geometric ``η = 1``, logarithmic ``η = 0``);
in each repetition pick a candidate uniformly at random, run it with fresh noise and
compute its private *score*; release only the repetition with the best score (its
candidate, its labels, its score).

The privacy map, fixed before anything runs, from public quantities only:

1. *One repetition* ``Q_j`` = candidate ``j``'s labeling run together with its score.  A
   score that is an output of the run (the number answered) is post-processing: the
   run's RDP curve ``ρ_j(α)``.  A score counted on private rows *held out of every
   teacher's chunk* (e.g. the student's correct predictions there) and released with
   discrete Gaussian noise ``σ_s`` (sensitivity 1) costs ``α/(2σ_s²)`` -- but in
   *parallel* with the labeling: under replace-one adjacency the changed row lies either
   in a teacher's chunk (the score is then a post-processing of the released labels
   and the unchanged held-out rows) or in the held-out rows (the votes, hence the
   labels, are unchanged, and the count moves by at most 1).  So
   ``ρ_Qj(α) = max(ρ_j(α), α/(2σ_s²))``.
2. *A random candidate* per repetition (uniform, independent of the data), released with
   its index: ``exp((α−1)ρ(α)) = Σ_j p_j exp((α−1)ρ_Qj(α))``, at most ``max_j ρ_Qj(α)``.
3. *Repeat and select* (Papernot–Steinke 2022, Theorem 2): the RDP of releasing the best
   of ``K`` repetitions, computed by dp-accounting's treatment of
   ``RepeatAndSelectDpEvent`` (:func:`core.ledger.maps.repeat_and_select`),
   converted to (ε, δ) by dp-accounting.

Candidates must have an RDP (or pure-DP) privacy map without an additive δ (GNMax,
Confident-GNMax, LNMax); BTT's map carries an additive δ that the theorem does not cover,
so BTT candidates are refused with that reason.

References
----------
.. [PS22] N. Papernot, T. Steinke. Hyperparameter Tuning with Renyi Differential Privacy. ICLR 2022.
.. [LT19] J. Liu, K. Talwar. Private Selection from Private Candidates. STOC 2019.
.. [CKS20] C. Canonne, G. Kamath, T. Steinke. The Discrete Gaussian for Differential Privacy. NeurIPS 2020.
.. [vEH14] T. van Erven, P. Harremoës. Rényi Divergence and Kullback–Leibler Divergence.
   IEEE Trans. Inf. Theory 2014 (quasi-convexity, used in step 2).
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from core.errors import ParameterError

__all__ = ["candidate_curve", "score_curve", "selection_entry", "selection_guarantee", "check_repetitions"]


def check_repetitions(mean: float, shape: float) -> tuple[float, float]:
    """Check the distribution of the number of repetitions.

    Parameters
    ----------
    mean : float
        Mean number of repetitions, at least 1.
    shape : float
        Truncated negative binomial shape, 0 <= shape < inf (1: geometric, 0: logarithmic).

    Returns
    -------
    (float, float)

    Raises
    ------
    ParameterError
    """
    mean, shape = float(mean), float(shape)
    if not (math.isfinite(mean) and mean >= 1.0):
        raise ParameterError(f"the mean number of repetitions must be at least 1, got {mean!r}.")
    if not (math.isfinite(shape) and shape >= 0.0):
        raise ParameterError(f"the shape of the number of repetitions must be 0 or more and finite, got {shape!r}.")
    if shape == 0.0 and mean <= 1.0:
        raise ParameterError("the logarithmic distribution (shape 0) needs a mean above 1.")
    return mean, shape


def candidate_curve(entry, orders: Sequence[float]) -> np.ndarray:
    """One candidate run's RDP curve on ``orders`` from its ledger entry.

    Parameters
    ----------
    entry : RDPEntry or PureDPEntry
        The run's a-priori privacy map (:func:`core.pipeline.ledger_entry`).
    orders : sequence of float

    Returns
    -------
    numpy.ndarray of float

    Raises
    ------
    ParameterError
        For a map with an additive δ or known only by (ε, δ).
    """
    from core.ledger.entries import PureDPEntry, RDPEntry
    from core.ledger.maps import pure_dp_rdp

    if isinstance(entry, RDPEntry) and entry.delta_additive == 0:
        return entry.curve(orders)
    if isinstance(entry, PureDPEntry) and entry.delta_additive == 0:
        return pure_dp_rdp(entry.steps, orders)
    raise ParameterError(
        f"{entry.mechanism} cannot be a candidate of private selection: its privacy map "
        + ("carries an additive δ" if getattr(entry, "delta_additive", 0) else "is known only as (ε, δ)")
        + ", which Papernot–Steinke's repeat-and-select theorem (a Rényi-DP result) does not cover; "
        "choose GNMax, Confident-GNMax or LNMax candidates.")


def score_curve(score_sigma: float | None, orders: Sequence[float]) -> np.ndarray:
    """RDP of a held-out count of sensitivity 1 released with discrete Gaussian noise σ_s: ``α/(2σ_s²)``.

    Parameters
    ----------
    score_sigma : float or None
        None: the score is an output of the run (no noise, no cost).
    orders : sequence of float

    Returns
    -------
    numpy.ndarray of float

    References
    ----------
    C. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020.
    """
    a = np.asarray(orders, dtype=float)
    if score_sigma is None:
        return np.zeros_like(a)
    s = float(score_sigma)
    if not (math.isfinite(s) and s > 0):
        raise ParameterError(f"the score's noise σ must be a positive number, got {score_sigma!r}.")
    return a / (2.0 * s * s)


def selection_entry(entries: Sequence[Any], *, mean: float, shape: float = 1.0, score_sigma: float | None = None,
                    delta: float, description: str = "", params: Mapping[str, Any] | None = None):
    """The whole selection's privacy map as a ledger entry (steps 1–3 of the module docstring).

    Parameters
    ----------
    entries : sequence of RDPEntry or PureDPEntry
        Each candidate's run on the ``m`` queries (:func:`core.pipeline.ledger_entry`).
    mean, shape : float
        The distribution of the number of repetitions (:func:`check_repetitions`).
    score_sigma : float or None
        The held-out score's discrete Gaussian σ_s (None: the score is an output of the run).
    delta : float
        δ at which the curve converts to (ε, δ).
    description : str
    params : mapping, optional
        Public parameters recorded with the entry.

    Returns
    -------
    RDPEntry
    """
    from core.ledger.entries import RDPEntry
    from core.ledger.maps import repeat_and_select
    from core.accounting.rdp import ORDERS

    mean, shape = check_repetitions(mean, shape)
    if not entries:
        raise ParameterError("private selection needs at least one candidate.")
    orders = np.asarray(ORDERS, dtype=float)
    curves = np.array([candidate_curve(e, orders) for e in entries])
    one = np.maximum(curves.max(axis=0), score_curve(score_sigma, orders))
    inner = RDPEntry(orders=tuple(orders), rho=tuple(one), delta_conversion=float(delta), mechanism="candidate",
                     description="the most expensive candidate with its score")
    out = repeat_and_select(inner, mean=mean, shape=shape, delta_conversion=float(delta))
    p = dict(params or {})
    p.update(candidates=len(entries), repeat_mean=mean, repeat_shape=shape,
             score_sigma=score_sigma if score_sigma is not None else "none")
    return RDPEntry(orders=out.orders, rho=out.rho, delta_conversion=float(delta), mechanism="private-selection",
                    params=p, description=description or (
                        f"private selection (Papernot–Steinke 2022) over {len(entries)} candidates: mean {mean:g} "
                        f"repetitions (shape {shape:g}), the best kept"))


def selection_guarantee(entries: Sequence[Any], *, mean: float, shape: float = 1.0, score_sigma: float | None = None,
                        delta: float):
    """The whole selection's (ε, δ) (:func:`selection_entry`, converted by dp-accounting).

    Parameters
    ----------
    entries : sequence of RDPEntry or PureDPEntry
    mean, shape : float
    score_sigma : float or None
    delta : float

    Returns
    -------
    PrivacyGuarantee
    """
    from core.accounting.guarantee import PrivacyGuarantee
    from core.ledger.compose import compose_entries

    entry = selection_entry(entries, mean=mean, shape=shape, score_sigma=score_sigma, delta=delta)
    g = compose_entries([entry])
    return PrivacyGuarantee(float(g.epsilon), float(g.delta), "repeat-and-select",
                            entry.description + "; RDP by dp-accounting's RepeatAndSelectDpEvent, converted to (ε, δ).",
                            {"candidates": len(entries), "repeat_mean": float(mean), "repeat_shape": float(shape)})
