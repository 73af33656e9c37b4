"""Vote margins and the distance to instability (docs/design.md §2).

Adjacency: neighbouring private datasets differ by *replacing* one row, so at most one
teacher changes and each query's vote-count vector changes by at most 1 in each of at
most two coordinates.  One changed row can therefore move the margin
``M = n_(1) - n_(2)`` (top count minus runner-up count) by up to 2.

The distance to instability is the number of private rows that must change before one
more change can alter the plurality answer::

    dist = max(0, ceil(M / 2) - 1)          # sensitivity 1

The paper (BTT) prints ``max(0, M - 1)``, which has sensitivity 2 under this adjacency:
a sparse-vector test calibrated for sensitivity 1 would then leak twice the stated ε.
The printed form is kept only as :func:`distance_to_instability_printed`, for the privacy
audit's demonstration of that leak; no mechanism uses it.
"""

from __future__ import annotations

import math

import numpy as np

from core.validation import check_counts

__all__ = [
    "plurality",
    "margins",
    "distance_to_instability",
    "distance_to_instability_printed",
    "plurality_and_distance",
    "plurality_and_distance_unchecked",
    "max_distance",
    "min_teachers_for_threshold",
]


def _compact(counts: np.ndarray) -> np.ndarray:
    """Checked (non-negative) counts as int32 when they fit: partitioning and argmax
    then move half the bytes (about twice as fast on a million queries)."""
    if counts.dtype != np.int32 and counts.size and int(counts.max()) <= np.iinfo(np.int32).max:
        return counts.astype(np.int32)
    return counts


def _distance(margin: np.ndarray) -> np.ndarray:
    """``max(0, ceil(M/2) - 1)`` for margins ``M >= 0``, written ``(M + 1) // 2 - 1``."""
    return np.maximum(0, (margin + 1) // 2 - 1).astype(np.int64, copy=False)


def _top_two(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if counts.shape[1] == 1:
        top = counts[:, 0].astype(np.int64)
        return top, np.zeros_like(top)
    part = np.partition(counts, counts.shape[1] - 2, axis=1)
    return part[:, -1].astype(np.int64), part[:, -2].astype(np.int64)


def plurality(counts) -> np.ndarray:
    """The plurality class of each query; ties go to the smallest class index.

    Parameters
    ----------
    counts : array-like of int, shape (m, n_classes)
        Vote counts: ``counts[i, c]`` teachers predict class ``c`` on query ``i``.

    Returns
    -------
    numpy.ndarray of int64, shape (m,)
        The class with the most votes (the lowest on a tie).
    """
    counts = check_counts(counts, equal_totals=False)
    return np.argmax(counts, axis=1).astype(np.int64)  # argmax returns the first maximum


def margins(counts) -> np.ndarray:
    """Top vote count minus runner-up count, ``M_i = n_(1) - n_(2)`` (0 for a tie).

    With a single class column the runner-up count is 0.  This is a raw, non-private
    quantity (a diagnostic): never export it.

    Parameters
    ----------
    counts : array-like of int, shape (m, n_classes)
        Teacher vote counts per query (private).

    Returns
    -------
    numpy.ndarray of int64, shape (m,)
    """
    counts = check_counts(counts, equal_totals=False)
    top, second = _top_two(counts)
    return (top - second).astype(np.int64)


def distance_to_instability(counts) -> np.ndarray:
    """Distance to instability of the plurality answer, ``max(0, ceil(M/2) - 1)``.

    Guarantee: under replace-one adjacency (one teacher's vote changes on every query
    at once) each entry changes by at most 1, so adding ``Lap(b)`` noise to one entry
    is ``1/b``-DP.  Corrects the factor-2 slip of the printed form (see module doc).

    Parameters
    ----------
    counts : array-like of int, shape (m, n_classes)
        Teacher vote counts per query (private; one teacher moves every row by at most 1).

    Returns
    -------
    numpy.ndarray of int64, shape (m,)
    """
    return _distance(margins(counts))


def plurality_and_distance(counts) -> tuple[np.ndarray, np.ndarray]:
    """:func:`plurality` and :func:`distance_to_instability` in one validated pass.

    The aggregators need both for every query; computing them together checks the
    counts once and partitions them once.

    Parameters
    ----------
    counts : array-like of int, shape (m, n_classes)
        Teacher vote counts per query (private), checked once for both answers.

    Returns
    -------
    top : numpy.ndarray of int64, shape (m,)
        The plurality class (ties go to the smallest class index).
    distance : numpy.ndarray of int64, shape (m,)
        ``max(0, ceil(M/2) - 1)``, as :func:`distance_to_instability`.
    """
    return plurality_and_distance_unchecked(check_counts(counts, equal_totals=False))


def plurality_and_distance_unchecked(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`plurality_and_distance` on counts already checked by ``check_counts``.

    The aggregators check their counts once on entry and then call this, skipping a
    second validation pass.

    Parameters
    ----------
    counts : numpy.ndarray of int, shape (m, C)
        Vote counts, as returned by :func:`core.validation.check_counts`.

    Returns
    -------
    top, distance : numpy.ndarray of int64, shape (m,)
        As for :func:`plurality_and_distance`.
    """
    counts = _compact(counts)
    first, second = _top_two(counts)
    return np.argmax(counts, axis=1).astype(np.int64, copy=False), _distance(first - second)


def distance_to_instability_printed(counts) -> np.ndarray:
    """The paper's printed distance ``max(0, M - 1)``: sensitivity 2, NOT private as used.

    Kept only so the privacy audit can show the leak it causes.  No mechanism of the
    library uses it and nothing computed from it is exported.

    Parameters
    ----------
    counts : array-like of int, shape (m, n_classes)
        Teacher vote counts per query (private; audit use only).

    Returns
    -------
    numpy.ndarray of int64, shape (m,)

    References
    ----------
    R. Bassily, O. Thakkar, A. Thakurta, "Model-Agnostic Private Learning", NeurIPS 2018.
    docs/design.md §2.
    """
    m = margins(counts)
    return np.maximum(0, m - 1).astype(np.int64)


def max_distance(k: int) -> int:
    """Largest possible distance to instability with ``k`` teachers (a unanimous vote):
    ``ceil(k/2) - 1``.

    Parameters
    ----------
    k : int
        Number of teachers.

    Returns
    -------
    int
    """
    k = int(k)
    return max(0, (k + 1) // 2 - 1)


def min_teachers_for_threshold(threshold: float) -> int:
    """Smallest k whose unanimous vote passes a noisy threshold test with probability ≥ 1/2.

    The test is ``d + Z_q > w + Z_t`` with ``Z_q, Z_t`` independent, symmetric,
    integer-valued noise (discrete Laplace) and ``d = ceil(k/2) - 1``.  ``Z_q - Z_t`` is
    symmetric on the integers, so ``P[Z_q - Z_t > a] >= 1/2`` exactly when the integer
    ``a = floor(w - d) <= -1``, i.e. when ``d > w``.  The smallest such k is
    ``2 floor(w) + 3`` (for ``w >= 0``).

    Parameters
    ----------
    threshold : float
        The threshold ``w`` (votes).

    Returns
    -------
    int
    """
    w = float(threshold)
    if w < 0:
        return 2
    return int(2 * math.floor(w) + 3)
