"""The outcome of every labeling run: :class:`LabelingResult`, the ⊥ and not-processed codes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from core.mechanisms.stability import (
    max_distance,
    min_teachers_for_threshold,
)

__all__ = ["BOTTOM", "UNPROCESSED", "LabelingResult", "btt_remedies", "infeasible_reason", "make_result"]


BOTTOM = -1
"""Label value of an abstention (⊥)."""
UNPROCESSED = -2
"""Label value of a query not processed because the mechanism halted."""


@dataclass(frozen=True)
class LabelingResult:
    """The outcome of a private labeling run.

    Attributes
    ----------
    mechanism : str
        ``"btt"``, ``"btt-soft"``, ``"lnmax"``, ``"baseline"`` or ``"a-stab"``.
    labels : numpy.ndarray of int64, shape (m,)
        The released class id, :data:`BOTTOM` (⊥) or :data:`UNPROCESSED` (after halting).
        For soft labels: 1 where a score was released, else BOTTOM / UNPROCESSED.
    scores : numpy.ndarray of float or None
        Soft labels only: the released score, NaN where ⊥ or not processed.
    n_answered, n_bottom, n_unprocessed : int
        Counts of the three outcomes.
    halted_at : int or None
        Index of the query at which the cutoff was reached (the last ⊥), or None.
    epsilon, delta : float
        The (data-independent) (ε, δ) guarantee of the whole run.
    params : dict
        Every parameter used (for BTT: ``noise_scale`` = λ and ``threshold`` = w).
    accounting : str
        How (ε, δ) was computed, in words.
    feasible : bool
        False when the settings can answer (almost) nothing; ``reason`` says why.
    reason : str or None
        Plain-words explanation when ``feasible`` is False.
    epsilon_data_dependent : float or None
        LNMax only: PATE's data-dependent ε.  It depends on the private data, so it is a
        NON-PRIVATE diagnostic, never a guarantee and never exported.
    """

    mechanism: str
    labels: np.ndarray
    scores: np.ndarray | None
    n_answered: int
    n_bottom: int
    n_unprocessed: int
    halted_at: int | None
    epsilon: float
    delta: float
    params: dict[str, Any] = field(default_factory=dict)
    accounting: str = ""
    feasible: bool = True
    reason: str | None = None
    epsilon_data_dependent: float | None = None

    @property
    def m(self) -> int:
        """Number of queries: the length of ``labels`` (answered, ⊥ and not processed together)."""
        return int(self.labels.shape[0])

    @property
    def data_dependent_note(self) -> str | None:
        """A sentence when the NON-PRIVATE data-dependent ε is above the guarantee (then of no use).

        Returns
        -------
        str or None
        """
        from core.accounting.guarantee import data_dependent_note

        return data_dependent_note(self.epsilon_data_dependent, self.epsilon)

    @property
    def answered(self) -> np.ndarray:
        """Boolean mask of the queries that received a label (or score).

        Returns
        -------
        numpy.ndarray of bool, shape (m,)
        """
        return self.labels >= 0


def make_result(mechanism: str, labels: np.ndarray, scores, halted_at, guarantee, params, feasible=True, reason=None, eps_dd=None) -> LabelingResult:
    """Build a :class:`LabelingResult` from a run's labels and its guarantee.

    The answered, ⊥ and not-processed counts are computed from ``labels``; ε, δ and the
    accounting description are read from ``guarantee``.

    Parameters
    ----------
    mechanism : str
        The mechanism's name (e.g. ``"btt"``).
    labels : numpy.ndarray of int, shape (m,)
        Released labels: class ids, :data:`BOTTOM` or :data:`UNPROCESSED`.
    scores : numpy.ndarray or None
        Released soft scores (soft mechanisms), else None.
    halted_at : int or None
        Query at which an online run stopped, else None.
    guarantee : PrivacyGuarantee
        The run's (ε, δ) guarantee and its accounting ``detail``.
    params : dict
        Public parameters of the run.
    feasible : bool, default True
        False when the settings cannot answer (see :func:`infeasible_reason`).
    reason : str, optional
        Plain-words explanation when not feasible.
    eps_dd : float, optional
        Data-dependent ε (NON-PRIVATE, never exported), where the mechanism has one.

    Returns
    -------
    LabelingResult
    """
    return LabelingResult(
        mechanism=mechanism,
        labels=labels,
        scores=scores,
        n_answered=int(np.count_nonzero(labels >= 0)),
        n_bottom=int(np.count_nonzero(labels == BOTTOM)),
        n_unprocessed=int(np.count_nonzero(labels == UNPROCESSED)),
        halted_at=halted_at,
        epsilon=float(guarantee.epsilon),
        delta=float(guarantee.delta),
        params=params,
        accounting=guarantee.detail,
        feasible=feasible,
        reason=reason,
        epsilon_data_dependent=eps_dd,
    )


def infeasible_reason(k: int, threshold: float, what: str, remedies: str) -> str | None:
    """Plain-words reason when even a unanimous vote passes with probability < 1/2.

    Parameters
    ----------
    k : int
        Number of teachers.
    threshold : float
        The distance-to-instability threshold the mechanism requires.
    what : str
        The mechanism's description, as it appears in the sentence.
    remedies : str
        The other settings that lower the threshold for this mechanism (e.g. "raise ε
        or lower T").

    Returns
    -------
    str or None
        The explanation, or None when a unanimous vote's distance to instability is
        above the threshold.
    """
    if max_distance(k) > threshold:
        return None
    needed = min_teachers_for_threshold(threshold)
    return (
        f"With k = {k} teachers the largest possible distance to instability (a unanimous "
        f"vote) is {max_distance(k)}, not above the threshold {threshold:.1f} that {what} "
        f"requires, so even a unanimous vote is answered with probability below 1/2. "
        f"About k = {needed} teachers are needed; or {remedies}."
    )


def btt_remedies(calibration: str) -> str:
    """The settings that lower BTT's threshold, for :func:`infeasible_reason`.

    Parameters
    ----------
    calibration : str
        BTT's calibration (``"paper"`` or ``"tight"``).

    Returns
    -------
    str
        E.g. ``"raise ε or lower T, or use the tight calibration"``.
    """
    return "raise ε or lower T" + (", or use the tight calibration" if calibration == "paper" else "")
