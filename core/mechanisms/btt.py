"""BTT's private labeling by stability and sparse vector, hard labels (docs/design.md §3.2)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from core import accounting, noise
from core.mechanisms.result import BOTTOM, UNPROCESSED, LabelingResult, btt_remedies, infeasible_reason, make_result
from core.mechanisms.stability import plurality_and_distance_unchecked, min_teachers_for_threshold
from core.mechanisms.session import AlignedNoise, Session
from core.mechanisms.svt import sparse_vector_scan
from core.validation import check_beta, check_counts, check_delta, check_epsilon, check_T

__all__ = ["btt_label", "BTTSession", "btt_public_params"]


def btt_public_params(cal: accounting.BTTCalibration, epsilon, delta, T, m, beta, calibration, k, extra=None) -> dict:
    """The public parameters a BTT run reports in :attr:`LabelingResult.params`.

    Parameters
    ----------
    cal : BTTCalibration
        The run's calibration (noise scale, threshold, rounds, tests, guarantee).
    epsilon, delta : float
        The target guarantee.
    T : int
        The number of answers (BTT's budget of hard queries).
    m : int
        The number of queries.
    beta : float
        The failure probability used for the recommended number of teachers.
    calibration : str
        ``"paper"`` or ``"tight"``.
    k : int
        The number of teachers.
    extra : dict, optional
        Further public entries (e.g. the soft-label ``eta`` and ``n_bins``).

    Returns
    -------
    dict
        Public values only (sizes, settings and the calibration's outputs).
    """
    params: dict[str, Any] = {
        "epsilon_target": epsilon,
        "delta_target": delta,
        "T": T,
        "m": m,
        "beta": beta,
        "calibration": calibration,
        "noise_scale": cal.noise_scale,
        "query_noise_scale": 2.0 * cal.noise_scale,
        "threshold": cal.threshold,
        "rounds": cal.rounds,
        "tests": cal.tests,
        "k": k,
        "k_recommended": _k_recommended(float(cal.noise_scale), int(cal.tests), int(cal.rounds), float(delta), float(beta)),
        "k_min_unanimous": min_teachers_for_threshold(cal.threshold),
        "epsilon_svt": cal.guarantee.parts["epsilon_svt"],
        "delta_svt": cal.guarantee.parts["delta_svt"],
        "delta_release": cal.guarantee.parts["delta_release"],
        "composition": cal.guarantee.parts["composition"],
        "noise": "discrete Laplace",
    }
    if extra:
        params.update(extra)
    return params


@functools.lru_cache(maxsize=1024)
def _k_recommended(noise_scale: float, tests: int, rounds: int, delta: float, beta: float) -> float:
    """The paper's recommended number of teachers (:func:`core.accounting.btt.btt_num_teachers`),
    memoised on its public numbers (a pure function of them: a run at the same settings repeats it)."""
    from core.accounting.btt import btt_num_teachers

    return float(btt_num_teachers(noise_scale, tests, rounds, delta, beta))


def btt_label(counts, *, epsilon: float, delta: float, T: int, calibration: str = "tight", beta: float = 0.05, rng=None) -> LabelingResult:
    """BTT's private labeling by stability and sparse vector (docs/design.md §3.2, BTT Alg. 2).

    For each query in order, while fewer than ``T`` ⊥ were given:
    ``dist_i + DLap(2λ) > w + DLap(λ)`` releases the plurality label, else ⊥ and the
    threshold noise is refreshed.  Queries after the T-th ⊥ are not processed.

    Guarantee: (ε', δ')-DP under replace-one adjacency with ``ε' <= ε`` and
    ``δ' <= δ``, as computed exactly by :func:`core.accounting.btt_guarantee`
    (T pure ``2/λ``-DP rounds composed optimally, plus the release term).  The
    guarantee does not depend on the number of teachers, which decides utility only.

    Parameters
    ----------
    counts : array-like of int, shape (m, n_classes)
        Teacher vote counts (each row sums to k).
    epsilon, delta : float
        Target guarantee.
    T : int
        Cutoff: the maximum number of ⊥.
    calibration : {"tight", "paper"}, default "tight"
        The smallest λ and w meeting (ε, δ) exactly, or λ and w as printed in the paper
        (see :func:`core.accounting.calibrate_btt`); the pipeline, the estimator and the
        command line default to "tight" too.
    beta : float
        Failure probability used for the paper's recommended number of teachers
        (reported as ``params["k_recommended"]``).
    rng : Generator, int or None
        See :func:`core.noise.check_rng`.

    Returns
    -------
    LabelingResult
        ``feasible`` is False (with a ``reason``) when even a unanimous vote would be
        answered with probability below 1/2.
    """
    counts = check_counts(counts)
    epsilon = check_epsilon(epsilon)
    k = int(counts[0].sum())
    delta = check_delta(delta)
    T = check_T(T)
    beta = check_beta(beta)
    m = counts.shape[0]
    cal = accounting.calibrate_btt(epsilon, delta=delta, T=T, m=m, calibration=calibration)
    gen = noise.check_rng(rng)
    top, dist = plurality_and_distance_unchecked(counts)  # counts checked above
    zt = noise.discrete_laplace(cal.noise_scale, T, gen)
    zq = noise.discrete_laplace(2.0 * cal.noise_scale, m, gen)
    status, halted_at = sparse_vector_scan(dist + zq, cal.threshold + zt, T)
    labels = np.where(status == 1, top, np.where(status == 0, BOTTOM, UNPROCESSED)).astype(np.int64)
    reason = infeasible_reason(k, cal.threshold, f"the {calibration} calibration of (ε={epsilon:g}, δ={delta:g}, T={T}, m={m})",
                               btt_remedies(calibration))
    return make_result(
        "btt",
        labels,
        None,
        halted_at,
        cal.guarantee,
        btt_public_params(cal, epsilon, delta, T, m, beta, calibration, k),
        feasible=reason is None,
        reason=reason,
    )


class BTTSession(Session):
    """BTT's sparse vector answering a stream of query batches (the estimator's ``predict``).

    The calibration is for at most ``m_max`` queries; the ``T`` threshold noises are drawn
    when the session starts, then each batch draws its query noises, so one batch of all
    queries replays :func:`btt_label` on the same random stream.  The state (rounds used,
    queries processed) carries over between batches; after ``T`` abstentions or
    ``m_max`` queries the session is spent.

    Guarantee: every answer over all batches together is covered by
    :meth:`spent`, the a-priori guarantee of what has run: BTT's exact accounting with
    ``min(T, n)`` rounds and ``n`` tests for the ``n`` queries processed so far.  It
    depends on the number of queries only, never on which were answered, and never
    exceeds the calibration's (ε, δ) (docs/design.md §3.2).

    Parameters
    ----------
    m_max : int
        The most queries that will ever be answered.
    rng : Generator, int or None
    epsilon, delta, T, calibration
        As for :func:`btt_label`.
    """

    def __init__(self, m_max: int, rng, *, epsilon: float, delta: float, T: int, calibration: str = "tight") -> None:
        super().__init__(m_max, rng)
        self.T = check_T(T)
        self.calibration = accounting.calibrate_btt(epsilon, delta=delta, T=self.T, m=self.m_max, calibration=calibration)
        self._thresholds = self.calibration.threshold + noise.discrete_laplace(self.calibration.noise_scale, self.T, self._gen)
        # query noises in btt_label's own pieces, so that any batching replays it (split invariance)
        self._query_noise = AlignedNoise(2.0 * self.calibration.noise_scale, self.m_max, self._gen)

    def _answer(self, counts: np.ndarray) -> tuple[np.ndarray, int]:
        cal = self.calibration
        top, dist = plurality_and_distance_unchecked(counts)
        zq = self._query_noise.take(counts.shape[0])
        status, halted_at = sparse_vector_scan(dist + zq, self._thresholds[self.n_bottom:], cal.rounds - self.n_bottom)
        if halted_at is not None:
            self.halted = True
        labels = np.where(status == 1, top, np.where(status == 0, BOTTOM, UNPROCESSED))
        return labels, counts.shape[0] if halted_at is None else halted_at + 1

    def spent(self) -> accounting.PrivacyGuarantee:
        """The a-priori guarantee of the ``n`` queries processed so far (0 before any).

        Returns
        -------
        PrivacyGuarantee

        References
        ----------
        R. Bassily, O. Thakkar, A. Thakurta, "Model-Agnostic Private Learning", NeurIPS 2018 (Algorithm 2).
        docs/design.md §3.2.
        """
        n = self.n_processed
        if n == 0:
            return accounting.PrivacyGuarantee(0.0, 0.0, "none", "No query answered yet.")
        cal = self.calibration
        rounds = min(self.T, n)
        g = accounting.btt_guarantee(cal.noise_scale, cal.threshold, rounds, n, cal.guarantee.parts["delta_svt"])
        return accounting.PrivacyGuarantee(
            min(g.epsilon, cal.epsilon), min(g.delta, cal.delta), g.method,
            f"{n} queries processed: at most min(T, {n}) = {rounds} sparse-vector rounds. " + g.detail,
            g.parts,
        )
