"""Private aggregators: label public queries from teacher votes with DP guarantees.

(Being written: the LabelingResult contract is fixed here first; see docs/API.md.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["BOTTOM", "UNPROCESSED", "LabelingResult"]

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
        ``"btt"``, ``"btt_soft"``, ``"lnmax"``, ``"baseline"`` or ``"a_stab"``.
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
        """Number of queries."""
        return int(self.labels.shape[0])

    @property
    def answered(self) -> np.ndarray:
        """Boolean mask of the queries that received a label (or score)."""
        return self.labels >= 0
