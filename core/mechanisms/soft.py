"""BTT soft labels on η-bins with a second test on shifted bins (docs/design.md §3.3)."""

from __future__ import annotations

import numpy as np

from core import accounting, noise
from core.mechanisms.btt import btt_public_params
from core.mechanisms.result import BOTTOM, UNPROCESSED, LabelingResult, btt_remedies, infeasible_reason, make_result
from core.mechanisms.stability import plurality_and_distance_unchecked
from core.validation import check_beta, check_delta, check_epsilon, check_eta, check_scores, check_T

__all__ = ["btt_soft_label", "soft_bin_histograms"]


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


def btt_soft_label(scores, *, epsilon: float, delta: float, T: int, eta: float, calibration: str = "tight", beta: float = 0.05, rng=None) -> LabelingResult:
    """BTT soft labels on η-bins (docs/design.md §3.3, full version §5), binary tasks.

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
    calibration : {"tight", "paper"}, default "tight"
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
    cal = accounting.calibrate_btt(epsilon, delta=delta, T=T, m=m, calibration=calibration, soft=True)
    gen = noise.check_rng(rng)
    hist, shifted = _soft_bin_histograms(scores, n_bins)  # scores and η checked above
    top1, d1 = plurality_and_distance_unchecked(hist)
    top2, d2 = plurality_and_distance_unchecked(shifted)
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
    reason = infeasible_reason(k, cal.threshold, f"the {calibration} soft-label calibration of (ε={epsilon:g}, δ={delta:g}, T={T}, m={m})",
                               btt_remedies(calibration))
    params = btt_public_params(cal, epsilon, delta, T, m, beta, calibration, k, extra={"eta": eta, "n_bins": n_bins})
    return make_result("btt-soft", labels, out, halted_at, cal.guarantee, params, feasible=reason is None, reason=reason)
