"""Answering a stream of query batches under one budget (the estimator's ``predict``).

:class:`Session` keeps the bookkeeping every streaming mechanism shares — at most
``m_max`` queries in all, the number processed and abstained, and the halt — and asks
its subclass only how to answer one batch (:meth:`Session._answer`) and what has been
spent (:meth:`Session.spent`).  The mechanisms' sessions are BTT's sparse vector
(:class:`core.mechanisms.btt.BTTSession`), the composition baseline
(:class:`core.mechanisms.a_stab.BaselineSession`) and any per-query mechanism
(:class:`PerQuerySession`); :func:`core.pipeline.session` picks one from the registry.
:class:`ConfidentGNMaxSession` answers Confident-GNMax batch by batch with one budget
(fixed accounting, or one Rényi filter over the whole stream), and :func:`stream_session`
is the session a chunked labeling job uses (the command line's streaming ``label``).

Split invariance.  A stream answered in chunks gives the same labels as one run on all
its rows with the same seed when the noise is drawn in an order that does not depend on
where the chunks end: :class:`AlignedNoise` draws discrete Laplace noise in the pieces
:func:`core.noise.discrete_laplace` itself uses for ``m_max`` draws, so BTT's session
replays :func:`core.mechanisms.btt.btt_label`; Gaussian draws are split-invariant by
themselves, and Confident-GNMax's session reads its answer noise from a second copy of
the generator advanced past the ``m_max`` threshold draws, as
:func:`core.mechanisms.gaussian.confident_gnmax_label` draws them.

References
----------
.. [BTT18] R. Bassily, O. Thakkar, A. Thakurta. Model-Agnostic Private Learning. NeurIPS 2018.
.. [PATE18] N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar, Ú. Erlingsson.
   Scalable Private Learning with PATE. ICLR 2018.
.. [FZ21] V. Feldman, T. Zrnic. Individual Privacy Accounting via a Rényi Filter. NeurIPS 2021.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from core import noise
from core.mechanisms.result import BOTTOM, UNPROCESSED

__all__ = ["Session", "PerQuerySession", "OneShotSession", "AlignedNoise", "ConfidentGNMaxSession"]


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
        self._answering = threading.Lock()  # one batch at a time: two threads must not both see the budget left

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_answering", None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._answering = threading.Lock()

    def _answer(self, counts: np.ndarray) -> tuple[np.ndarray, int]:
        """Labels for a batch that fits in the budget, and how many queries it processed."""
        raise NotImplementedError

    def answer(self, counts) -> np.ndarray:
        """Labels for a batch: class ids, BOTTOM (⊥), or UNPROCESSED once the session is spent.

        Parameters
        ----------
        counts : array-like of int, shape (m, n_classes)
            A batch of teacher vote counts (private); the batches may differ in size.

        Returns
        -------
        numpy.ndarray of int64, shape (m,)
        """
        from core.validation import check_counts

        counts = check_counts(counts, equal_totals=False)
        ids = np.full(counts.shape[0], UNPROCESSED, dtype=np.int64)
        with self._answering:  # the budget left is read and spent in one step (threads answering one run)
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


class _MechanismSession(Session):
    """A registered mechanism answering batches (the parameters both its sessions take).

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


class PerQuerySession(_MechanismSession):
    """A per-query registered mechanism (the same noise for every query) answering batches.

    Guarantee: the first ``n`` answers are the mechanism's run on ``n`` queries, so they
    are covered by its privacy map at ``n`` (``Mechanism.privacy_map(n, **params)``).

    Parameters
    ----------
    mechanism, m_max, rng, params
        The registered mechanism, the most queries answered, the randomness and the
        mechanism's parameters.
    """

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


class OneShotSession(_MechanismSession):
    """A mechanism that labels a whole set of queries at once, answering one batch.

    The first batch (up to ``m_max`` queries) is one run of the mechanism with its
    parameters set for ``m_max`` queries (a target ε is spent over ``m_max``); the session
    is then spent, whatever the outcome.  Guarantee: :meth:`spent` is the run's privacy
    map at ``m_max`` once it has run (the budget was committed to the whole set).

    Parameters
    ----------
    mechanism, m_max, rng, params
        As for :class:`PerQuerySession`.
    """

    def __init__(self, mechanism: Any, m_max: int, rng, params: dict[str, Any]) -> None:
        super().__init__(mechanism, m_max, rng, params)
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


class AlignedNoise:
    """Discrete Laplace noise for ``total`` queries, handed out in any batch sizes.

    The draws are made in the pieces :func:`core.noise.discrete_laplace` uses for one
    call of ``total`` draws (at most ``2**20`` at a time), so the numbers handed out are
    exactly that call's, however the queries are batched; at most one piece is held.

    Parameters
    ----------
    scale : float
        The discrete Laplace scale.
    total : int
        Draws in all (the session's ``m_max``).
    gen : numpy.random.Generator
    """

    def __init__(self, scale: float, total: int, gen: np.random.Generator) -> None:
        self.scale, self.total, self._gen = scale, int(total), gen
        self._drawn = 0
        self._buffer = np.empty(0, dtype=np.int64)

    def take(self, n: int) -> np.ndarray:
        """The next ``n`` draws (``n`` at most what is left of ``total``)."""
        from core.noise import _CHUNK

        parts = []
        while n > 0:
            if self._buffer.size == 0:
                size = min(_CHUNK, self.total - self._drawn)
                if size <= 0:
                    raise ValueError("more noise asked for than the session's m_max")  # pragma: no cover
                self._buffer = noise.discrete_laplace(self.scale, size, self._gen)
                self._drawn += size
            part, self._buffer = self._buffer[:n], self._buffer[n:]
            parts.append(part)
            n -= part.size
        return np.concatenate(parts) if len(parts) != 1 else parts[0]


class ConfidentGNMaxSession(Session):
    """Confident-GNMax answering a stream of batches under one budget for ``m_max`` queries.

    Each query: release ``argmax_c(counts_c + N(0, σ2²))`` if ``max_c counts_c + N(0, σ1²)
    ≥ t``, else ⊥ (PATE 2018, Algorithm 1), with the noises set for ``m_max`` queries.

    Guarantee (docs/design.md §8.2).  ``accounting="fixed"``: the first ``n`` queries
    processed are ``n(α/(2σ1²) + α/σ2²)``-RDP at every order, whichever were answered;
    :meth:`spent` converts that curve at δ.  ``accounting="filter"``: one Rényi filter with
    order α and budget ρ* fixed before the first batch (defaults: as
    :func:`core.mechanisms.gaussian.confident_gnmax_label` sets them for ``m_max``
    queries) runs over the whole stream: before each query it checks that the worst-case
    charge ``(n_processed + 1)·c1 + (n_answered + 1)·c2`` stays within ρ*, and halts the
    session otherwise.  Each charge is a function of earlier released outcomes, so the
    whole stream is ``(α, ρ*)``-RDP by the filter theorem (Feldman & Zrnic 2021, Thm 3.1),
    whatever the batches.  On the same seed, the labels of ``m_max`` queries in any
    batches equal one :func:`confident_gnmax_label` run on all of them (tested).

    Parameters
    ----------
    m_max : int
    rng : Generator, int or None
    threshold, sigma1, sigma2, delta, accounting, order, budget
        As for :func:`core.mechanisms.gaussian.confident_gnmax_label` (``threshold``
        None: 0.8 × the number of teachers, read from the first batch; k is public).
    ratio : float
        Ignored here (it decides σ1 and σ2 from a target ε in :func:`core.pipeline.resolve`).
    """

    def __init__(self, m_max: int, rng, *, threshold, sigma1, sigma2, delta, accounting: str = "fixed",
                 order=None, budget=None, ratio=None) -> None:
        import copy
        import math

        from core.accounting import rdp
        from core.errors import ParameterError
        from core.mechanisms.gaussian import ACCOUNTING_MODES
        from core.validation import check_delta, check_real

        super().__init__(m_max, rng)
        self.sigma1 = rdp.check_sigma(sigma1, "sigma1")
        self.sigma2 = rdp.check_sigma(sigma2, "sigma2")
        self.delta = check_delta(delta)
        if accounting not in ACCOUNTING_MODES:
            raise ParameterError(f"accounting must be one of {ACCOUNTING_MODES}, got {accounting!r}.")
        if accounting == "fixed" and (order is not None or budget is not None):
            raise ParameterError("order and budget apply to accounting='filter' only.")
        self.accounting = accounting
        self.threshold = None if threshold is None else check_real(threshold, "threshold")
        fixed = rdp.confident_gnmax_guarantee(self.sigma1, self.sigma2, n_queries=self.m_max, delta=self.delta)
        self.order = float(fixed.parts["order"] if order is None else rdp.check_order(order))
        self.c1 = self.order / (2.0 * self.sigma1 * self.sigma1)
        self.c2 = self.order / (self.sigma2 * self.sigma2)
        self.budget = None
        if accounting == "filter":
            rho = self.m_max * (self.c1 + self.c2) if budget is None else check_real(budget, "budget", 0.0, math.inf, low_open=True)
            if not (self.c1 + self.c2 <= rho):
                raise ParameterError(
                    f"budget = {rho:.6g} at order {self.order:g} is below the charge of one query "
                    f"(α/(2σ1²) + α/σ2² = {self.c1 + self.c2:.6g}); raise the budget or the noise."
                )
            self.budget = float(rho)
        self.n_answered = 0
        self.halted_at: int | None = None
        # the answer noise comes after the m_max threshold draws, as in one run on m_max queries
        self._answer_gen = copy.deepcopy(self._gen)
        left = self.m_max
        while left:
            step = min(left, 1 << 16)
            self._answer_gen.normal(0.0, 1.0, step)
            left -= step

    def _answer(self, counts: np.ndarray) -> tuple[np.ndarray, int]:
        if self.threshold is None:
            self.threshold = 0.8 * float(counts[0].sum())
        b, n_classes = counts.shape
        passed = (counts.max(axis=1) + noise.gaussian(self.sigma1, b, self._gen)) >= self.threshold
        noisy = noise.gaussian(self.sigma2, (b, n_classes), self._answer_gen)
        noisy += counts
        labels = np.where(passed, np.argmax(noisy, axis=1), BOTTOM).astype(np.int64)
        processed = b
        if self.budget is not None:
            p = passed.astype(np.int64)
            answered_before = self.n_answered + np.cumsum(p) - p
            j = self.n_processed + np.arange(b, dtype=np.int64)
            fits = (j + 1) * self.c1 + (answered_before + 1) * self.c2 <= self.budget
            if not fits.all():
                processed = int(np.argmin(fits))
                labels[processed:] = UNPROCESSED
                self.halted = True
                self.halted_at = self.n_processed + processed - 1 if processed else (
                    self.n_processed - 1 if self.n_processed else None)
        self.n_answered += int(np.count_nonzero(labels[:processed] >= 0))
        return labels, processed

    def spent(self):
        """The guarantee of the stream so far: the filter's (α, ρ*) once a query ran, or,
        with fixed accounting, the composition of the ``n_processed`` queries.

        Returns
        -------
        PrivacyGuarantee
        """
        from core.accounting import PrivacyGuarantee, rdp

        if self.n_processed == 0:
            return PrivacyGuarantee(0.0, 0.0, "none", "No query answered yet.")
        if self.budget is not None:
            g = rdp.filter_guarantee(self.budget, order=self.order, delta=self.delta)
            spent = self.n_processed * self.c1 + self.n_answered * self.c2
            detail = (f"{g.detail} Processed {self.n_processed} of {self.m_max} queries"
                      f"{', then halted (the next query could have exceeded the budget)' if self.halted_at is not None else ''}; "
                      f"realised RDP {spent:.6g} of the budget {self.budget:.6g} (the guarantee is the budget).")
            return PrivacyGuarantee(g.epsilon, g.delta, g.method, detail,
                                    {**g.parts, "rdp_spent": spent, "n_processed": self.n_processed})
        return rdp.confident_gnmax_guarantee(self.sigma1, self.sigma2, n_queries=self.n_processed, delta=self.delta)

    @property
    def params(self) -> dict[str, Any]:
        """The run's public parameters (as :func:`confident_gnmax_label` reports them)."""
        return {"threshold": self.threshold, "sigma1": self.sigma1, "sigma2": self.sigma2,
                "accounting": self.accounting, "order": self.order, "budget": self.budget,
                "charge_threshold": self.c1, "charge_answer": self.c2, "delta_target": self.delta,
                "m": self.m_max, "noise": "Gaussian"}
