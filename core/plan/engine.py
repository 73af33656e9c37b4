"""The outcome engine of a plan: a registered mechanism run many times on given votes.

:func:`outcomes` runs a REGISTERED mechanism (the same labeling function a real run
calls, through :func:`core.pipeline.resolve`) ``draws`` times on vote counts whose
true classes are known -- votes simulated under an assumed teacher quality
(:func:`core.plan.simulate_votes`) or the votes of teaching data -- and counts per draw
how many queries were answered, answered correctly, answered wrongly, abstained (⊥) or
not processed.  It reads no private data and releases nothing, so it costs no privacy.

Mechanisms that answer every query independently with the same noise
(``Mechanism.per_query``, Confident-GNMax with fixed accounting) are run once on all
draws stacked (one call of ``draws × m`` queries, each query's noise independent as in
``draws`` separate runs), which keeps a plan of 10,000 queries well under a second;
the others are run once per draw.

References
----------
.. [BTT18] R. Bassily, O. Thakkar, A. Thakurta. Model-Agnostic Private Learning. NeurIPS 2018.
.. [PATE18] N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar, Ú. Erlingsson.
   Scalable Private Learning with PATE. ICLR 2018.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from core.errors import ParameterError

__all__ = ["Outcomes", "outcomes", "OUTCOME_FIELDS"]

OUTCOME_FIELDS = ("answered", "correct", "wrong", "bottom", "not_processed")
"""The per-draw counts an :class:`Outcomes` holds."""


@dataclass(frozen=True)
class Outcomes:
    """What ``draws`` runs of a mechanism released on votes with known true classes.

    Attributes
    ----------
    mechanism : str
        The registered mechanism that ran.
    settings : dict
        The resolved settings every draw ran with (:func:`core.pipeline.resolve`).
    answered, correct, wrong, bottom, not_processed : numpy.ndarray of int64, shape (draws,)
        Per draw: queries labeled, labeled with the true class, labeled with another
        class, abstained (⊥), not processed (after the mechanism halted).
    epsilon, delta : float
        The data-independent guarantee of one run on ``m`` queries (the registry's privacy map).
    m : int
        Queries per run.
    feasible : bool
        False when the labeling function itself says the settings can answer (almost) nothing.
    reason : str or None
        Why not feasible, in words.
    """

    mechanism: str
    settings: dict
    answered: np.ndarray
    correct: np.ndarray
    wrong: np.ndarray
    bottom: np.ndarray
    not_processed: np.ndarray
    epsilon: float
    delta: float
    m: int
    feasible: bool = True
    reason: str | None = None

    @property
    def draws(self) -> int:
        """Number of runs.

        Returns
        -------
        int
            The length of every count array.
        """
        return int(self.answered.shape[0])

    def mean(self) -> dict[str, float]:
        """The mean of every count over the draws.

        Returns
        -------
        dict of str to float
        """
        return {f: float(np.mean(getattr(self, f))) for f in OUTCOME_FIELDS}

    def sd(self) -> dict[str, float]:
        """The standard deviation of every count over the draws (0 for one draw).

        Returns
        -------
        dict of str to float
        """
        ddof = 1 if self.draws > 1 else 0
        return {f: float(np.std(getattr(self, f), ddof=ddof)) for f in OUTCOME_FIELDS}


def _stackable(mech, params: Mapping[str, Any]) -> bool:
    return bool(mech.per_query) and mech.inputs == "counts" and params.get("accounting", "fixed") == "fixed"


def outcomes(counts, truth, mechanism: str, settings: Mapping[str, Any], *, draws: int = 20, rng=None,
             max_seconds: float | None = None) -> Outcomes:
    """Run a registered mechanism ``draws`` times on votes and count its outcomes per draw.

    Parameters
    ----------
    counts : array-like of int, shape (m, n_classes) or (draws, m, n_classes)
        Vote counts: one set used by every draw, or one set per draw.
    truth : array-like of int, shape (m,) or (draws, m)
        The true class of every query (simulated, or teaching data's labels).
    mechanism : str
        A registered mechanism's name (:func:`core.mechanisms.registry.names`).
    settings : mapping
        Its settings as for :func:`core.pipeline.label` (``epsilon`` for a mechanism whose
        noise follows from ε).
    draws : int
        Number of runs (ignored when ``counts`` has a leading draws axis).
    rng : numpy.random.Generator, int or None
        Randomness of the runs.
    max_seconds : float, optional
        For a mechanism run once per draw: stop starting new draws after this many
        seconds (at least one draw runs; ``Outcomes.draws`` says how many did).  The
        draws that ran are the first ones of the full prediction, so a time budget
        trades only the spread's precision.

    Returns
    -------
    Outcomes

    Raises
    ------
    ParameterError
        Unknown mechanism or settings, or counts and truth of different shapes.
    """
    from core import pipeline
    from core.mechanisms import registry
    from core.mechanisms.result import BOTTOM, UNPROCESSED

    mech = registry.get(mechanism)
    counts = np.asarray(counts)
    truth = np.asarray(truth, dtype=np.int64)
    if counts.ndim == 2:
        draws = int(draws)
        if draws < 1:
            raise ParameterError(f"draws must be at least 1, got {draws}.")
        counts = np.broadcast_to(counts, (draws,) + counts.shape)
        truth = np.broadcast_to(truth, (draws,) + truth.shape)
    elif counts.ndim == 3:
        draws = int(counts.shape[0])
        if truth.ndim == 1:
            truth = np.broadcast_to(truth, (draws,) + truth.shape)
    else:
        raise ParameterError("counts must have shape (m, n_classes) or (draws, m, n_classes).")
    if truth.shape != counts.shape[:2]:
        raise ParameterError(f"truth has shape {truth.shape}; the counts need {counts.shape[:2]}.")
    m, c = int(counts.shape[1]), int(counts.shape[2])
    params = pipeline.resolve(mechanism, settings, m)
    guarantee = mech.privacy_map(m, **params)
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)

    def inputs(block: np.ndarray) -> np.ndarray:
        if mech.inputs == "scores":
            if c != 2:
                raise ParameterError(f"{mech.name} reads teacher scores, which are for two classes.")
            k = int(block[..., 0, :].sum(axis=-1).max())
            return (np.arange(k) < block[..., 1:2]).astype(float)
        return block

    feasible, reason = True, None
    if _stackable(mech, params):
        res = mech.label(inputs(np.ascontiguousarray(counts).reshape(draws * m, c)), **params, rng=gen)
        labels = np.asarray(res.labels).reshape(draws, m)
        scores = None if res.scores is None else np.asarray(res.scores).reshape(draws, m)
        feasible, reason = res.feasible, res.reason
    else:
        labels = np.empty((draws, m), dtype=np.int64)
        scores = None
        start = time.perf_counter()
        for d in range(draws):
            if max_seconds is not None and d >= 1 and time.perf_counter() - start > float(max_seconds):
                labels, truth = labels[:d], truth[:d]
                scores = None if scores is None else scores[:d]
                break
            res = mech.label(inputs(np.ascontiguousarray(counts[d])), **params, rng=gen)
            labels[d] = res.labels
            if res.scores is not None:
                if scores is None:
                    scores = np.full((draws, m), np.nan)
                scores[d] = res.scores
            if not res.feasible:
                feasible, reason = False, res.reason
    answered = labels >= 0
    predicted = labels if scores is None else np.where(np.nan_to_num(scores, nan=0.0) >= 0.5, 1, 0)
    correct = answered & (predicted == truth)
    return Outcomes(
        mechanism=mech.name,
        settings=dict(params),
        answered=answered.sum(axis=1).astype(np.int64),
        correct=correct.sum(axis=1).astype(np.int64),
        wrong=(answered & ~correct).sum(axis=1).astype(np.int64),
        bottom=(labels == BOTTOM).sum(axis=1).astype(np.int64),
        not_processed=(labels == UNPROCESSED).sum(axis=1).astype(np.int64),
        epsilon=float(guarantee.epsilon),
        delta=float(guarantee.delta),
        m=m,
        feasible=bool(feasible),
        reason=reason,
    )
