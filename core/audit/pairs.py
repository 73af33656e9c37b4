"""Neighbouring inputs of the audit: :class:`NeighbourPair`, the checks that two vote
count (or score) vectors are neighbours, and the worst-case pairs of the count and
soft-label mechanisms.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.errors import ParameterError
from core.validation import check_counts, check_scores

__all__ = ["NeighbourPair", "neighbouring_pairs", "soft_neighbouring_pairs", "check_neighbouring_counts",
           "check_neighbouring_scores", "counts_with_distance"]


# ----------------------------------------------------------------------------- neighbours


@dataclass(frozen=True)
class NeighbourPair:
    """Two neighbouring inputs (one teacher changed) and what makes them a worst case.

    Attributes
    ----------
    name : str
    a, b : numpy.ndarray
        Vote counts ``(m, n_classes)`` or teacher scores ``(m, k)``.
    description : str
    """

    name: str
    a: np.ndarray
    b: np.ndarray
    description: str


def check_neighbouring_counts(a, b) -> None:
    """Raise :class:`ParameterError` unless ``a`` and ``b`` differ by one teacher's vote.

    Under replace-one adjacency one teacher may change its vote on every query at once:
    in each row one count goes down by 1 and another up by 1 (or nothing changes).
    """
    a = check_counts(a)
    b = check_counts(b)
    if a.shape != b.shape:
        raise ParameterError(f"Neighbouring vote counts must have the same shape, got {a.shape} and {b.shape}.")
    diff = b - a
    ok = (
        np.all(np.abs(diff) <= 1)
        & np.all(diff.sum(axis=1) == 0)
        & np.all((diff == 1).sum(axis=1) <= 1)
        & np.all((diff == -1).sum(axis=1) <= 1)
    )
    if not ok:
        raise ParameterError(
            "The two vote-count matrices are not neighbours: in every row at most one count may "
            "go down by 1 and one other up by 1 (one teacher changing its vote)."
        )


def check_neighbouring_scores(a, b) -> None:
    """Raise :class:`ParameterError` unless two score matrices differ in one teacher's column."""
    a = check_scores(a)
    b = check_scores(b)
    if a.shape != b.shape:
        raise ParameterError(f"Neighbouring score matrices must have the same shape, got {a.shape} and {b.shape}.")
    changed = np.flatnonzero(np.any(a != b, axis=0))
    if changed.size > 1:
        raise ParameterError(
            f"The two score matrices differ in teachers {changed.tolist()}; neighbours differ in one "
            "teacher's column (queries × teachers) only."
        )


def counts_with_distance(distance: int, k: int, n_classes: int = 2) -> np.ndarray:
    """One vote-count row whose distance to instability is ``distance``.

    The margin is ``2·distance + 2`` (``2·distance + 1`` for odd ``k``), the largest
    margin with that distance, so that moving one vote from the top class to the
    runner-up lowers the corrected distance by exactly 1 and the printed distance
    ``max(0, M - 1)`` by 2.  The votes not in the top two classes are spread over the
    other classes, never above the runner-up.

    Parameters
    ----------
    distance : int
        Target distance ``d >= 0``.
    k : int
        Number of teachers.
    n_classes : int, default 2

    Returns
    -------
    numpy.ndarray of int64, shape (n_classes,)
    """
    d = int(distance)
    k = int(k)
    n_classes = int(n_classes)
    if d < 0 or n_classes < 2:
        raise ParameterError("distance must be >= 0 and n_classes >= 2.")
    margin = 2 * d + 2 if k % 2 == 0 else 2 * d + 1
    rest = k - margin
    if rest < 0:
        raise ParameterError(
            f"A distance of {d} needs at least {margin} teachers (a margin of {margin}), got k = {k}."
        )
    # rest votes: runner-up r and the other classes; top = r + margin.
    row = np.zeros(n_classes, dtype=np.int64)
    # as many votes as possible to the two top classes, the remainder (< 2) to a third
    r = rest // 2
    row[0] = r + margin
    row[1] = r
    left = rest - 2 * r
    if left:
        if n_classes < 3:
            raise ParameterError(f"k = {k} and distance {d} need a third class for the odd vote.")
        row[2] += left
    return row


def neighbouring_pairs(k: int, *, distance: int = 0, n_classes: int = 2, n_queries: int = 3) -> list[NeighbourPair]:
    """A catalogue of worst-case neighbouring vote-count pairs.

    Each pair differs by one teacher's vote (on one query, or on every query at once
    under replace-one adjacency).  Audits should include pairs whose distance to
    instability sits at the mechanism's threshold: pass ``distance`` near the
    threshold ``w`` (BTT) or ``Γ`` (A_stab).

    Parameters
    ----------
    k : int
        Number of teachers (the row sum).
    distance : int, default 0
        The distance to instability of the pivotal rows.
    n_classes : int, default 2
    n_queries : int, default 3
        Number of queries of the multi-query pairs.

    Returns
    -------
    list of NeighbourPair
        ``tie``: a tie against the top class losing one vote to the runner-up (the label
        flips at distance 0 on both sides); ``top_loses_vote``: distance ``d`` against
        ``d - 1`` (the top class loses a vote to the runner-up; the printed distance
        drops by 2); ``top_loses_to_third`` (three classes or more); ``all_queries_move``:
        every query's distance drops by 1; ``mixed_directions``: one query's distance
        drops, the next one's rises (the same teacher moves away from the top class on
        one query and to it on the other); ``answered_then_bottom``: ``n_queries - 1``
        queries lose a unit of distance and the last gains one.
    """
    k = int(k)
    d = max(0, int(distance))
    n_queries = max(2, int(n_queries))
    pairs: list[NeighbourPair] = []

    def row(dd: int) -> np.ndarray:
        return counts_with_distance(dd, k, n_classes)

    def moved(r: np.ndarray, src: int, dst: int) -> np.ndarray:
        r = r.copy()
        r[src] -= 1
        r[dst] += 1
        return r

    # tie: the plurality flips between neighbours
    tie = np.zeros(n_classes, dtype=np.int64)
    tie[0] = (k + 1) // 2
    tie[1] = k // 2
    pairs.append(NeighbourPair(
        "tie", tie[None, :], moved(tie, 0, 1)[None, :],
        "A tie (or a margin of 1): one teacher moving to the runner-up flips the plurality; distance 0 on both sides.",
    ))
    top = row(d + 1)
    pairs.append(NeighbourPair(
        "top_loses_vote", top[None, :], moved(top, 0, 1)[None, :],
        f"Distance {d + 1} against {d}: the top class loses one vote to the runner-up "
        "(the printed distance drops by 2).",
    ))
    if n_classes >= 3:
        pairs.append(NeighbourPair(
            "top_loses_to_third", top[None, :], moved(top, 0, 2)[None, :],
            "The top class loses one vote to a third class (the margin drops by 1).",
        ))
    a = np.tile(top, (n_queries, 1))
    b = np.tile(moved(top, 0, 1), (n_queries, 1))
    pairs.append(NeighbourPair(
        "all_queries_move", a, b,
        f"{n_queries} queries at distance {d + 1}; the changed teacher leaves the top class on every query.",
    ))
    hi, lo = row(d + 1), row(d)
    pairs.append(NeighbourPair(
        "mixed_directions", np.stack([hi, lo]), np.stack([moved(hi, 0, 1), moved(lo, 1, 0)]),
        f"Two queries: the first drops from distance {d + 1} to {d}, the second rises from {d} to {d + 1}.",
    ))
    a = np.vstack([np.tile(hi, (n_queries - 1, 1)), lo[None, :]])
    b = np.vstack([np.tile(moved(hi, 0, 1), (n_queries - 1, 1)), moved(lo, 1, 0)[None, :]])
    pairs.append(NeighbourPair(
        "answered_then_bottom", a, b,
        f"{n_queries - 1} queries lose a unit of distance, the last gains one (pins the noisy threshold).",
    ))
    for p in pairs:
        check_neighbouring_counts(p.a, p.b)
    return pairs


def soft_neighbouring_pairs(k: int, eta: float, *, distance: int = 0) -> list[NeighbourPair]:
    """Worst-case neighbouring teacher-score matrices (queries × teachers) for soft labels.

    Each pair differs in one teacher's column (that teacher's scores on all queries).

    Returns
    -------
    list of NeighbourPair
        ``adjacent_bins``: scores at the midpoints of two adjacent bins of ``P_η`` with
        the margin of distance ``d + 1``; one teacher moves from the top bin to the other.
        ``bin_edge``: scores just below and just above a bin edge (split on ``P_η``,
        together on the shifted bins); one teacher crosses the edge.  ``tie``: an even
        split between two bins; one teacher moves.  ``outer_half_bin``: a teacher moves
        from the outer half-bin (dropped by the shifted bins) into a kept bin.
    """
    from core.validation import check_eta

    eta, n_bins = check_eta(eta)
    k = int(k)
    d = max(0, int(distance))
    pairs: list[NeighbourPair] = []
    lo_mid, hi_mid = 0.5 / n_bins, 1.5 / n_bins  # midpoints of bins 0 and 1

    def column_pair(name, values_a, changed_a, changed_b, text):
        a = np.asarray(values_a, dtype=float)[None, :]
        b = a.copy()
        a[0, 0] = changed_a
        b[0, 0] = changed_b
        pairs.append(NeighbourPair(name, a, b, text))

    margin = 2 * (d + 1) + 2 if k % 2 == 0 else 2 * (d + 1) + 1
    margin = min(margin, k)
    n_top = (k + margin) // 2
    vals = np.array([lo_mid] * n_top + [hi_mid] * (k - n_top))
    column_pair("adjacent_bins", vals, lo_mid, hi_mid,
                f"Scores in two adjacent bins, margin {2 * n_top - k}; one teacher moves to the second bin.")
    edge = 1.0 / n_bins
    below, above = edge - 0.01 / n_bins, edge + 0.01 / n_bins
    vals = np.array([below] * ((k + 1) // 2) + [above] * (k // 2))
    column_pair("bin_edge", vals, below, above,
                "Scores straddling a bin edge: split on P_η, together on the shifted bins; one teacher crosses.")
    vals = np.array([lo_mid] * ((k + 1) // 2) + [hi_mid] * (k // 2))
    column_pair("tie", vals, lo_mid, hi_mid, "An even split between two bins; one teacher moves.")
    outer = 0.1 / n_bins
    vals = np.array([outer] * ((k + 1) // 2) + [lo_mid + 0.2 / n_bins] * (k // 2))
    column_pair("outer_half_bin", vals, outer, lo_mid + 0.2 / n_bins,
                "A teacher moves from the outer half-bin (not in the shifted bins) into a kept bin.")
    for p in pairs:
        check_neighbouring_scores(p.a, p.b)
    return pairs
