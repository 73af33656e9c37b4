"""The one sparse-vector scan: sequential AboveThreshold logic over noisy values, vectorized."""

from __future__ import annotations

import numpy as np

__all__ = ["sparse_vector_scan"]


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
