"""One query under the microscope, and every query's outcome beside the picture of its test.

:func:`microscope` takes one public query of a teaching run, its teachers' votes and the
run's public parameters, draws the mechanism's noise on it as often as asked through the
registered mechanism's :class:`~core.mechanisms.registry.TestPicture`, and sets the
measured shares of answered and correctly answered draws beside the analytic
probabilities, with the binomial interval that the measured count falls outside of with
probability at most ``fail`` when the analytic value is right.  :func:`outcomes` names
each query's outcome of a run (answered right, answered wrong, ⊥, not processed).

Everything here reads votes and true labels: NON-PRIVATE teaching views, never exported.

References
----------
.. [BTT18] R. Bassily, O. Thakkar, A. Thakurta. Model-Agnostic Private Learning. NeurIPS 2018.
.. [PATE18] N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar, Ú. Erlingsson.
   Scalable Private Learning with PATE. ICLR 2018.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
from scipy import stats

from core.errors import ParameterError

__all__ = ["OUTCOMES", "Microscope", "binomial_interval", "draw_once", "interesting_query", "least_certain", "microscope",
           "outcomes", "picture_of"]

OUTCOMES = ("answered right", "answered wrong", "⊥", "not processed")
"""The outcomes of a query, in the order the pictures stack them."""


def picture_of(mechanism: str):
    """The registered mechanism's :class:`~core.mechanisms.registry.TestPicture`.

    Raises
    ------
    ParameterError
        When the mechanism declares no picture.
    """
    from core.mechanisms import registry

    pic = registry.get(mechanism).picture
    if pic is None:
        raise ParameterError(f"{mechanism} declares no picture of its test.")
    return pic


def binomial_interval(p: float, n: int, fail: float = 1e-6) -> tuple[int, int]:
    """The counts ``[lo, hi]`` a Binomial(n, p) count falls outside of with probability ≤ ``fail``.

    ``lo`` is the largest count with ``P[X < lo] ≤ fail/2`` and ``hi`` the smallest with
    ``P[X > hi] ≤ fail/2`` (exact binomial tails).

    Parameters
    ----------
    p : float
        The success probability.
    n : int
        The number of draws.
    fail : float
        The allowed probability of falling outside.

    Returns
    -------
    (int, int)
    """
    p = float(np.clip(p, 0.0, 1.0))
    lo = int(stats.binom.ppf(fail / 2.0, n, p))
    hi = int(stats.binom.isf(fail / 2.0, n, p))
    # ppf returns the smallest x with P[X <= x] >= fail/2: P[X < x] < fail/2 holds.
    return lo, max(lo, hi)


@dataclass(frozen=True)
class Microscope:
    """One query drawn many times beside its analytic odds.

    Attributes
    ----------
    mechanism : str
        A built-in mechanism's name.
    statistic : float
        The value its test reads (:attr:`TestPicture.statistic`).
    threshold : float
        The line on that axis.
    labels : ndarray (draws,)
        Every draw's released label (or ⊥).
    scores : ndarray or None
        Soft labels' released scores.
    answered, correct : int
        Draws answered; answered with the true label (None without a true label).
    p_answered, p_correct : float
        The analytic probabilities (``p_correct`` None without a true label).
    answered_interval, correct_interval : (int, int)
        :func:`binomial_interval` of the analytic values at ``fail``.
    fail : float
    """

    mechanism: str
    statistic: float
    threshold: float
    labels: np.ndarray
    scores: np.ndarray | None
    answered: int
    correct: int | None
    p_answered: float
    p_correct: float | None
    answered_interval: tuple[int, int]
    correct_interval: tuple[int, int] | None
    fail: float

    @property
    def draws(self) -> int:
        """Number of draws."""
        return int(self.labels.shape[0])

    @property
    def agrees(self) -> bool:
        """Whether the measured counts lie within their binomial intervals."""
        ok = self.answered_interval[0] <= self.answered <= self.answered_interval[1]
        if self.correct_interval is not None and self.correct is not None:
            ok = ok and self.correct_interval[0] <= self.correct <= self.correct_interval[1]
        return bool(ok)


def _right(labels: np.ndarray, scores: np.ndarray | None, truth: int) -> np.ndarray:
    if scores is not None:
        return (labels >= 0) & (np.abs(np.nan_to_num(scores, nan=10.0) - truth) < 0.5)
    return labels == truth


def microscope(mechanism: str, votes_row, params: Mapping[str, Any], *, truth: int | None = None,
               draws: int = 100, fail: float = 1e-6, rng=None) -> Microscope:
    """Draw one query's noise ``draws`` times and set the shares beside the analytic values.

    Parameters
    ----------
    mechanism : str
        A registered mechanism with a picture.
    votes_row : array-like
        The query's vote counts ``(c,)`` (teacher scores ``(k,)`` for soft labels).
    params : mapping
        The run's public parameters (``LabelingResult.params``).
    truth : int, optional
        The query's true label (NON-PRIVATE teaching data).
    draws : int
        Independent draws of the noise.
    fail : float
        False-alarm probability of the binomial intervals.
    rng : Generator, int or None
        See :func:`core.noise.check_rng`.

    Returns
    -------
    Microscope
    """
    pic = picture_of(mechanism)
    row = np.asarray(votes_row)
    labels, scores = pic.draw(row, params, draws, rng)
    truth_arr = None if truth is None else np.array([int(truth)])
    p_ans, p_cor = pic.odds(row[None, :], params, truth_arr)
    p_ans = float(np.asarray(p_ans)[0])
    p_cor = None if p_cor is None else float(np.asarray(p_cor)[0])
    answered = int(np.count_nonzero(labels >= 0))
    correct = None if truth is None else int(np.count_nonzero(_right(labels, scores, int(truth))))
    return Microscope(
        mechanism=mechanism,
        statistic=float(pic.values(row[None, :], params)[0]),
        threshold=float(pic.threshold(params)),
        labels=labels,
        scores=scores,
        answered=answered,
        correct=correct,
        p_answered=p_ans,
        p_correct=p_cor,
        answered_interval=binomial_interval(p_ans, int(draws), fail),
        correct_interval=None if p_cor is None else binomial_interval(p_cor, int(draws), fail),
        fail=float(fail),
    )


def outcomes(result, truth=None) -> np.ndarray:
    """Each query's outcome in a run: an index into :data:`OUTCOMES`.

    Without true labels every answered query counts as "answered right" (the picture
    then shows answered / ⊥ / not processed only).  Soft labels are right when the
    released score is within 1/2 of the true label.

    Parameters
    ----------
    result : LabelingResult
    truth : array-like of int, optional
        The public queries' true labels (NON-PRIVATE teaching data).

    Returns
    -------
    ndarray of int (m,)
    """
    from core.mechanisms.result import BOTTOM

    labels = np.asarray(result.labels)
    out = np.full(labels.shape[0], 3, dtype=np.int64)
    out[labels == BOTTOM] = 2
    answered = labels >= 0
    if truth is None:
        out[answered] = 0
        return out
    right = _right(labels, result.scores, np.asarray(truth))
    out[answered & right] = 0
    out[answered & ~right] = 1
    return out


def least_certain(mechanism: str, votes, params: Mapping[str, Any], truth=None) -> tuple[int, float]:
    """The query whose outcome is least certain, and its probability (:func:`interesting_query`).

    Returns
    -------
    (int, float)
        The query's index and its analytic probability of being answered (a threshold test)
        or of a right answer (a noisy maximum; of keeping its plurality without true labels).
        A probability near 0 or 1 for the least certain query says that no query is
        uncertain in this run.
    """
    pic = picture_of(mechanism)
    votes = np.asarray(votes)
    if pic.kind == "flip":
        if truth is None:
            truth = np.argmax(votes, axis=1)
        _, p = pic.odds(votes, params, np.asarray(truth))
    else:
        p, _ = pic.odds(votes, params)
    p = np.asarray(p, dtype=float)
    i = int(np.argmin(np.abs(p - 0.5)))
    return i, float(p[i])


def interesting_query(mechanism: str, votes, params: Mapping[str, Any], truth=None) -> int:
    """The query whose outcome is least certain: a good first query to put under the microscope.

    For a threshold test, the query whose analytic probability of being answered is
    closest to 1/2; for a noisy maximum (every query answered), the one whose probability
    of a right answer is closest to 1/2 (of keeping its plurality without true labels).

    Parameters
    ----------
    mechanism : str
    votes : array-like
        Counts (scores for soft labels) of every query.
    params : mapping
        A run's public parameters.
    truth : array-like of int, optional

    Returns
    -------
    int
    """
    return least_certain(mechanism, votes, params, truth)[0]


def draw_once(mechanism: str, votes_row, params: Mapping[str, Any], *, rng=None):
    """One draw of a query's noise, with the noise kept (:func:`core.mechanisms.odds.draw_once`).

    Returns
    -------
    core.mechanisms.odds.OneDraw or None
        None for a mechanism whose draw is not broken down (its picture's ``draw`` still
        gives the label).
    """
    from core.mechanisms import odds

    if mechanism not in odds.NAMES:
        return None
    return odds.draw_once(mechanism, votes_row, params, rng)
