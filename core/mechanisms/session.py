"""Answering a stream of query batches under one budget (the estimator's ``predict``).

:class:`Session` keeps the bookkeeping every streaming mechanism shares — at most
``m_max`` queries in all, the number processed and abstained, and the halt — and asks
its subclass only how to answer one batch (:meth:`Session._answer`) and what has been
spent (:meth:`Session.spent`).  The mechanisms' sessions are BTT's sparse vector
(:class:`core.mechanisms.btt.BTTSession`), the composition baseline
(:class:`core.mechanisms.a_stab.BaselineSession`) and any per-query mechanism
(:class:`PerQuerySession`); :func:`core.pipeline.session` picks one from the registry.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from core import noise
from core.mechanisms.result import BOTTOM, UNPROCESSED

__all__ = ["Session", "PerQuerySession", "OneShotSession"]


class Session:
    """A mechanism answering batches of queries, at most ``m_max`` in all.

    Parameters
    ----------
    m_max : int
        The most queries that will ever be answered (the budget is set for these).
    rng : Generator, int or None
        See :func:`core.noise.check_rng`.

    Attributes
    ----------
    n_processed, n_bottom : int
        Queries processed and abstentions (⊥) so far.
    halted : bool
        True once the budget is spent: every later query is not processed.
    """

    def __init__(self, m_max: int, rng) -> None:
        from core.validation import check_m

        self.m_max = check_m(m_max, "max_queries")
        self._gen = noise.check_rng(rng)
        self.n_processed = 0
        self.n_bottom = 0
        self.halted = False

    def _answer(self, counts: np.ndarray) -> tuple[np.ndarray, int]:
        """Labels for a batch that fits in the budget, and how many queries it processed."""
        raise NotImplementedError

    def answer(self, counts) -> np.ndarray:
        """Labels for a batch: class ids, BOTTOM (⊥), or UNPROCESSED once the session is spent.

        Parameters
        ----------
        counts : array-like of int, shape (m, n_classes)

        Returns
        -------
        numpy.ndarray of int64, shape (m,)
        """
        from core.validation import check_counts

        counts = check_counts(counts, equal_totals=False)
        ids = np.full(counts.shape[0], UNPROCESSED, dtype=np.int64)
        take = 0 if self.halted else min(counts.shape[0], self.m_max - self.n_processed)
        if take > 0:
            labels, processed = self._answer(counts[:take])
            ids[:take] = labels
            self.n_bottom += int(np.count_nonzero(labels == BOTTOM))
            self.n_processed += processed
        if self.n_processed >= self.m_max:
            self.halted = True
        return ids

    def spent(self):
        """The a-priori guarantee of the queries processed so far.

        Returns
        -------
        core.accounting.PrivacyGuarantee
        """
        raise NotImplementedError


class PerQuerySession(Session):
    """A per-query registered mechanism (the same noise for every query) answering batches.

    Guarantee: the first ``n`` answers are the mechanism's run on ``n`` queries, so they
    are covered by its privacy map at ``n`` (``Mechanism.privacy_map(n, **params)``).

    Parameters
    ----------
    mechanism : Mechanism
        The registered mechanism.
    m_max : int
        Largest number of queries the session answers.
    rng : numpy.random.Generator, int or None
        Randomness (see :func:`core.noise.check_rng`).
    params : dict
        The mechanism's parameters.
    """

    def __init__(self, mechanism: Any, m_max: int, rng, params: dict[str, Any]) -> None:
        super().__init__(m_max, rng)
        self.mechanism, self.params = mechanism, params

    def _answer(self, counts: np.ndarray) -> tuple[np.ndarray, int]:
        return self.mechanism.label(counts, **self.params, rng=self._gen).labels, counts.shape[0]

    def spent(self):
        """The guarantee of the queries answered so far: the privacy map at ``n_processed``.

        Returns
        -------
        PrivacyGuarantee
            ``(0, 0)`` before any query.
        """
        from core.accounting import PrivacyGuarantee

        if self.n_processed == 0:
            return PrivacyGuarantee(0.0, 0.0, "none", "No query answered yet.")
        return self.mechanism.privacy_map(self.n_processed, **self.params)


class OneShotSession(Session):
    """A mechanism that labels a whole set of queries at once, answering one batch.

    The first batch (up to ``m_max`` queries) is one run of the mechanism with its
    parameters set for ``m_max`` queries (a target ε is spent over ``m_max``); the session
    is then spent, whatever the outcome.  Guarantee: :meth:`spent` is the run's privacy
    map at ``m_max`` once it has run (the budget was committed to the whole set).

    Parameters
    ----------
    mechanism : Mechanism
        The registered mechanism.
    m_max : int
        Largest number of queries the session answers.
    rng : numpy.random.Generator, int or None
        Randomness (see :func:`core.noise.check_rng`).
    params : dict
        The mechanism's parameters.
    """

    def __init__(self, mechanism: Any, m_max: int, rng, params: dict[str, Any]) -> None:
        super().__init__(m_max, rng)
        self.mechanism, self.params = mechanism, params
        self.result = None

    def _answer(self, counts: np.ndarray) -> tuple[np.ndarray, int]:
        self.result = self.mechanism.label(counts, **self.params, rng=self._gen)
        self.halted = True
        return self.result.labels, counts.shape[0]

    def spent(self):
        """The run's (ε, δ) once it has run, ``(0, 0)`` before.

        Returns
        -------
        PrivacyGuarantee
        """
        from core.accounting import PrivacyGuarantee

        if self.result is None:
            return PrivacyGuarantee(0.0, 0.0, "none", "No query answered yet.")
        return PrivacyGuarantee(self.result.epsilon, self.result.delta, "one run", self.result.accounting)
