"""Private aggregators: label public queries from teacher votes with DP guarantees.

Every function takes the teachers' vote counts (or scores), the privacy parameters and
``rng``, and returns a :class:`LabelingResult` whose ``epsilon``/``delta`` is the
data-independent guarantee under replace-one adjacency (DESIGN §1), computed by
:mod:`core.accounting`.

Mechanisms (DESIGN §3)
----------------------
:func:`a_stab_label`
    ``A_stab`` on each query: ``dist + Lap(1/ε) > log(1/δ)/ε`` releases the plurality.
    (ε, δ)-DP per query (BTT Thm 2.4); the run reports basic composition over queries.
:func:`btt_label`
    BTT's sparse-vector labeling (Alg. 2), hard labels, any number of classes.
:func:`btt_soft_label`
    Soft labels on η-bins with a second test on shifted bins (DESIGN §3.3), binary.
:func:`lnmax_label`
    PATE's Laplace noisy max.
:func:`composition_baseline_label`
    Every query answered independently by ``A_stab`` at per-query (ε0, δ0), composed by
    advanced composition (DESIGN §3.5).

Noise: distances and thresholds are integers or compared with integers, and get discrete
Laplace noise from :mod:`core.noise` (no floating-point leak); LNMax adds continuous
Laplace noise to counts as PATE analyses it, and releases only the argmax.

Random stream (so the tests' plain reference loops can replay it): BTT draws all
threshold noises first (one per possible round), then all query noises; the soft-label
version draws ``2T`` threshold noises, then an ``(m, 2)`` array of query noises (test 1,
test 2).  The sequential threshold logic is done by scanning blocks of queries.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import accounting, noise
from .stability import _plurality_and_distance, max_distance, min_teachers_for_threshold
from .validation import (
    check_beta,
    check_counts,
    check_delta,
    check_epsilon,
    check_eta,
    check_gamma,
    check_scores,
    check_T,
)

__all__ = [
    "BOTTOM",
    "UNPROCESSED",
    "LabelingResult",
    "a_stab_label",
    "btt_label",
    "btt_soft_label",
    "lnmax_label",
    "composition_baseline_label",
    "sparse_vector_scan",
    "soft_bin_histograms",
    "MECHANISMS",
]

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


def _result(mechanism: str, labels: np.ndarray, scores, halted_at, guarantee, params, feasible=True, reason=None, eps_dd=None) -> LabelingResult:
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


def _infeasible_reason(k: int, threshold: float, what: str, remedies: str) -> str | None:
    """Plain-words reason when even a unanimous vote passes with probability < 1/2.

    ``remedies`` names the other settings that lower the threshold for this mechanism
    (e.g. "raise ε or lower T").
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


def _btt_remedies(calibration: str) -> str:
    return "raise ε or lower T" + (", or use the tight calibration" if calibration == "paper" else "")


# ---------------------------------------------------------------------------
# Sparse-vector scanning (vectorized; the tests replay it with a plain loop)
# ---------------------------------------------------------------------------

def sparse_vector_scan(values: np.ndarray, thresholds: np.ndarray, max_failures: int) -> tuple[np.ndarray, int | None]:
    """Sequential sparse-vector logic over noisy query values.

    Query ``i`` passes when ``values[i] > thresholds[r]``, ``r`` being the number of
    failures so far; a failure moves to the next threshold; after ``max_failures``
    failures the scan halts.

    Only a query whose value is at most the largest threshold in use can fail, whatever
    round it falls in; every other query passes.  Those candidates are found in one
    vectorized pass and only they are walked in order (a plain loop over Python scalars,
    which is exact: integers and floats compare exactly).  The result is identical to the
    per-query loop of the tests.

    Parameters
    ----------
    values : ndarray, shape (m,)
        Noisy query values (distance + query noise).
    thresholds : ndarray, shape (>= max_failures,)
        Noisy thresholds, one per round, used in order.
    max_failures : int
        The cutoff T.

    Returns
    -------
    status : ndarray of int8, shape (m,)
        1 passed, 0 failed (⊥), -1 not processed.
    halted_at : int or None
        Index of the query with the last allowed failure, or None.
    """
    values = np.asarray(values)
    m = values.shape[0]
    if max_failures < 1:
        return np.full(m, -1, dtype=np.int8), None
    thresholds = np.asarray(thresholds)[:max_failures]
    status = np.ones(m, dtype=np.int8)
    candidates = np.flatnonzero(values <= thresholds.max())
    thr = thresholds.tolist()
    failed: list[int] = []
    failures, halted_at = 0, None
    for i, v in zip(candidates.tolist(), values[candidates].tolist()):
        if v <= thr[failures]:
            failed.append(i)
            failures += 1
            if failures == max_failures:
                halted_at = i
                break
    status[failed] = 0
    if halted_at is not None:
        status[halted_at + 1 :] = -1
    return status, halted_at


def _btt_params(cal: accounting.BTTCalibration, epsilon, delta, T, m, beta, calibration, k, extra=None) -> dict:
    from .bounds import btt_num_teachers

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
        "k_recommended": float(btt_num_teachers(cal.noise_scale, cal.tests, cal.rounds, delta, beta)),
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


def btt_label(counts, epsilon: float, delta: float, T: int, *, calibration: str = "paper", beta: float = 0.05, rng=None) -> LabelingResult:
    """BTT's private labeling by stability and sparse vector (DESIGN §3.2, BTT Alg. 2).

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
    calibration : {"paper", "tight"}
        λ and w as printed in the paper, or the smallest meeting (ε, δ) exactly
        (see :func:`core.accounting.calibrate_btt`).
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
    cal = accounting.calibrate_btt(epsilon, delta, T, m, calibration)
    gen = noise.check_rng(rng)
    top, dist = _plurality_and_distance(counts)  # counts checked above
    zt = noise.discrete_laplace(cal.noise_scale, T, gen)
    zq = noise.discrete_laplace(2.0 * cal.noise_scale, m, gen)
    status, halted_at = sparse_vector_scan(dist + zq, cal.threshold + zt, T)
    labels = np.where(status == 1, top, np.where(status == 0, BOTTOM, UNPROCESSED)).astype(np.int64)
    reason = _infeasible_reason(k, cal.threshold, f"the {calibration} calibration of (ε={epsilon:g}, δ={delta:g}, T={T}, m={m})",
                                _btt_remedies(calibration))
    return _result(
        "btt",
        labels,
        None,
        halted_at,
        cal.guarantee,
        _btt_params(cal, epsilon, delta, T, m, beta, calibration, k),
        feasible=reason is None,
        reason=reason,
    )


# ---------------------------------------------------------------------------
# Soft labels
# ---------------------------------------------------------------------------

def soft_bin_histograms(scores, eta: float) -> tuple[np.ndarray, np.ndarray]:
    """Histograms of teacher scores on ``P_η`` and on the shifted bins ``P̃_η``.

    ``P_η``: ``[0, η), [η, 2η), ..., [1-η, 1]`` (1/η bins, midpoints ``(b + 1/2) η``).
    ``P̃_η``: every bin shifted by η/2, the two outer half-bins dropped
    (``1/η - 1`` bins ``[(b + 1/2) η, (b + 3/2) η)``, midpoints ``(b + 1) η``).

    Parameters
    ----------
    scores : array-like, shape (m, k)
        Teacher scores in [0, 1].
    eta : float
        Precision; ``1/η`` a whole number.

    Returns
    -------
    hist, shifted : ndarrays of int64, shapes (m, 1/η) and (m, 1/η - 1)
    """
    return _soft_bin_histograms(check_scores(scores), check_eta(eta)[1])


def _soft_bin_histograms(scores: np.ndarray, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`soft_bin_histograms` on scores checked by ``check_scores`` and ``n_bins = 1/η``."""
    m, k = scores.shape
    scaled = scores * n_bins  # multiply by the integer bin count: no 0.3/0.1 rounding slip
    b = np.minimum(np.floor(scaled).astype(np.int64), n_bins - 1)
    rows = np.repeat(np.arange(m, dtype=np.int64), k)
    hist = np.bincount(rows * n_bins + b.ravel(), minlength=m * n_bins).reshape(m, n_bins)
    sb = np.floor(scaled - 0.5).astype(np.int64)
    keep = ((scaled - 0.5) >= 0) & (sb < n_bins - 1)
    shifted = np.bincount(
        (rows.reshape(m, k)[keep]) * (n_bins - 1) + sb[keep], minlength=m * (n_bins - 1)
    ).reshape(m, n_bins - 1)
    return hist, shifted


def btt_soft_label(scores, epsilon: float, delta: float, T: int, eta: float, *, calibration: str = "paper", beta: float = 0.05, rng=None) -> LabelingResult:
    """BTT soft labels on η-bins (DESIGN §3.3, full version §5), binary tasks.

    Per query: test 1 is the sparse-vector test on the distance to instability of the
    teachers' score histogram over ``P_η``; pass → release the midpoint of the top
    bin.  Fail → one round is spent (threshold refreshed) and test 2 runs on the
    histogram over the shifted bins ``P̃_η``; pass → midpoint of its top bin; fail →
    another round is spent and the answer is ⊥.  The run halts after ``2T`` failed
    tests.  Queries whose scores concentrate in a bin pass test 1 and cost nothing.

    Guarantee: every failed test is one sparse-vector round, so the calibration uses
    ``2T`` rounds and ``2m`` tests (:func:`core.accounting.calibrate_btt` with
    ``soft=True``); (ε', δ') <= (ε, δ) under replace-one adjacency (one teacher's
    score moves, changing each histogram by at most one vote in and one out).

    Parameters
    ----------
    scores : array-like of float, shape (m, k)
        Teachers' positive-class probabilities.
    epsilon, delta : float
    T : int
        Up to ``2T`` failed tests.
    eta : float
        Precision; ``1/η`` a whole number.
    calibration : {"paper", "tight"}
    beta : float
    rng : Generator, int or None

    Returns
    -------
    LabelingResult
        ``scores`` holds the released bin midpoints (NaN where ⊥ / not processed);
        ``labels`` is 1 where a score was released, else BOTTOM / UNPROCESSED.
    """
    scores = check_scores(scores)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    T = check_T(T)
    eta, n_bins = check_eta(eta)
    beta = check_beta(beta)
    m, k = scores.shape
    cal = accounting.calibrate_btt(epsilon, delta, T, m, calibration, soft=True)
    gen = noise.check_rng(rng)
    hist, shifted = _soft_bin_histograms(scores, n_bins)  # scores and η checked above
    top1, d1 = _plurality_and_distance(hist)
    top2, d2 = _plurality_and_distance(shifted)
    mid1 = (top1 + 0.5) / n_bins
    mid2 = (top2 + 1.0) / n_bins
    max_fail = 2 * T
    zt = noise.discrete_laplace(cal.noise_scale, max_fail, gen)
    zq = noise.discrete_laplace(2.0 * cal.noise_scale, (m, 2), gen)
    thr = cal.threshold + zt
    v1 = d1 + zq[:, 0]
    v2 = d2 + zq[:, 1]
    # Every query passes test 1 unless its value is at most the largest threshold; only
    # those candidates are walked in order (exact, as in sparse_vector_scan).
    out = mid1.astype(float)
    labels = np.ones(m, dtype=np.int64)
    thr_list = thr.tolist()
    candidates = np.flatnonzero(v1 <= thr.max())
    failures, halted_at = 0, None
    for j, a, b in zip(candidates.tolist(), v1[candidates].tolist(), v2[candidates].tolist()):
        if a > thr_list[failures]:
            continue  # test 1 passes
        failures += 1  # test 1 failed at query j
        if failures < max_fail and b > thr_list[failures]:
            out[j] = mid2[j]  # test 2 passes
            continue
        labels[j] = BOTTOM
        out[j] = np.nan
        if failures < max_fail:
            failures += 1  # test 2 failed too
        if failures >= max_fail:
            halted_at = j
            break
    if halted_at is not None:
        labels[halted_at + 1 :] = UNPROCESSED
        out[halted_at + 1 :] = np.nan
    reason = _infeasible_reason(k, cal.threshold, f"the {calibration} soft-label calibration of (ε={epsilon:g}, δ={delta:g}, T={T}, m={m})",
                                _btt_remedies(calibration))
    params = _btt_params(cal, epsilon, delta, T, m, beta, calibration, k, extra={"eta": eta, "n_bins": n_bins})
    return _result("btt_soft", labels, out, halted_at, cal.guarantee, params, feasible=reason is None, reason=reason)


# ---------------------------------------------------------------------------
# PATE LNMax
# ---------------------------------------------------------------------------

def lnmax_label(counts, gamma: float, *, delta: float = 1e-5, rng=None) -> LabelingResult:
    """PATE's Laplace noisy max (DESIGN §3.4): ``argmax_j (counts[i, j] + Lap(1/γ))``.

    Guarantee: each answer is ``2γ``-DP (PATE §3.1), so m answers are (ε, δ)-DP with
    ε the smaller of PATE's data-independent bound ``4mγ² + 2γ sqrt(2m log(1/δ))``
    and the optimal composition of m pure ``2γ``-DP steps.  The data-dependent
    moments-accountant ε (PATE Thm 2-3) is reported as ``epsilon_data_dependent``:
    it depends on the private votes, so it is a NON-PRIVATE diagnostic, never the
    guarantee and never exported.  Every query is answered (no ⊥).

    Noise: continuous Laplace (as PATE analyses it); only the argmax is released.

    Parameters
    ----------
    counts : array-like of int, shape (m, n_classes)
    gamma : float
        Noise parameter; noise ``Lap(1/γ)``.
    delta : float
    rng : Generator, int or None
    """
    counts = check_counts(counts)
    gamma = check_gamma(gamma)
    delta = check_delta(delta)
    m = counts.shape[0]
    gen = noise.check_rng(rng)
    noisy = counts + noise.laplace(1.0 / gamma, counts.shape, gen)
    labels = np.argmax(noisy, axis=1).astype(np.int64)
    guarantee = accounting.lnmax_guarantee(gamma, m, delta)
    simple = guarantee.parts["pate_simple"]
    eps_dd = accounting.pate_moments_epsilon(counts, gamma, delta)
    params = {
        "gamma": gamma,
        "noise_scale": 1.0 / gamma,
        "delta_target": delta,
        "m": m,
        "k": int(counts[0].sum()),
        "epsilon_pate_simple": float(simple),
        "noise": "continuous Laplace",
    }
    return _result("lnmax", labels, None, None, guarantee, params, eps_dd=eps_dd)


# ---------------------------------------------------------------------------
# A_stab and the advanced-composition baseline
# ---------------------------------------------------------------------------

def _a_stab(counts: np.ndarray, eps0: float, threshold: float, gen: np.random.Generator) -> np.ndarray:
    """A_stab on every query of counts already checked by ``check_counts``."""
    top, dist = _plurality_and_distance(counts)
    z = noise.discrete_laplace(1.0 / eps0, counts.shape[0], gen)
    return np.where(dist + z > threshold, top, BOTTOM).astype(np.int64)


def a_stab_label(counts, epsilon: float, delta: float, *, rng=None) -> LabelingResult:
    """``A_stab`` (DESIGN §3.1, BTT Thm 2.4) on each query independently.

    ``dist + DLap(1/ε) > Γ = log(1/δ)/ε`` releases the plurality label, else ⊥.
    Guarantee: (ε, δ)-DP for one query; for m queries the result reports basic
    composition ``(m ε, m δ)``.  It releases the label with probability ≥ 1 − β when
    ``dist ≥ (log(1/δ) + log(1/β))/ε`` (Thm 2.5).
    """
    counts = check_counts(counts)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    m = counts.shape[0]
    k = int(counts[0].sum())
    gen = noise.check_rng(rng)
    threshold = accounting.a_stab_threshold(epsilon, delta)
    labels = _a_stab(counts, epsilon, threshold, gen)
    guarantee = accounting.PrivacyGuarantee(
        m * epsilon, min(1.0, m * delta), "basic",
        f"{m} independent A_stab answers, each ({epsilon:.4g}, {delta:.3g})-DP, by basic composition.",
    )
    reason = _infeasible_reason(k, threshold, f"A_stab at (ε={epsilon:g}, δ={delta:g})",
                                "raise ε or δ")
    params = {"epsilon_per_query": epsilon, "delta_per_query": delta, "threshold": threshold,
              "noise_scale": 1.0 / epsilon, "m": m, "k": k, "noise": "discrete Laplace"}
    return _result("a_stab", labels, None, None, guarantee, params, feasible=reason is None, reason=reason)


def composition_baseline_label(counts, epsilon: float, delta: float, *, rng=None) -> LabelingResult:
    """The advanced-composition baseline (DESIGN §3.5).

    Every query is answered independently by ``A_stab`` at per-query ``(ε0, δ0)``,
    where ``δ0 = δ/(2m)``, ``δ' = δ/2`` and ``ε0`` solves
    ``sqrt(2m log(1/δ')) ε0 + m ε0 (e^ε0 − 1) = ε``.
    Guarantee: (ε, δ)-DP under replace-one adjacency (advanced composition of m
    (ε0, δ0)-DP answers; basic composition when it is smaller).  BTT beats this
    baseline by about 1/α in the number of answered queries.
    """
    counts = check_counts(counts)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    m = counts.shape[0]
    k = int(counts[0].sum())
    gen = noise.check_rng(rng)
    par = accounting.composition_baseline_parameters(epsilon, delta, m)
    labels = _a_stab(counts, par["eps0"], par["threshold"], gen)
    reason = _infeasible_reason(k, par["threshold"], f"the per-query A_stab of the composition baseline at (ε={epsilon:g}, δ={delta:g}, m={m})",
                                "raise ε, or label fewer queries (every query spends budget)")
    params = {
        "epsilon_target": epsilon,
        "delta_target": delta,
        "m": m,
        "k": k,
        "eps0": par["eps0"],
        "delta0": par["delta0"],
        "delta_prime": par["delta_prime"],
        "threshold": par["threshold"],
        "noise_scale": 1.0 / par["eps0"],
        "noise": "discrete Laplace",
    }
    return _result("baseline", labels, None, None, par["guarantee"], params, feasible=reason is None, reason=reason)


MECHANISMS = {
    "btt": btt_label,
    "btt_soft": btt_soft_label,
    "lnmax": lnmax_label,
    "baseline": composition_baseline_label,
    "a_stab": a_stab_label,
}
"""Mechanism name → labeling function."""
