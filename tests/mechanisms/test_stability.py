"""Distance to instability: hand values and exhaustive sensitivity checks (docs/design.md §2)."""

import itertools

import numpy as np
import pytest

from core.errors import DataError
from core.mechanisms.stability import (
    distance_to_instability,
    distance_to_instability_printed,
    margins,
    max_distance,
    min_teachers_for_threshold,
    plurality,
)


def test_hand_values():
    counts = np.array([[5, 5, 0], [6, 5, 0], [7, 5, 0], [8, 5, 0], [9, 5, 0], [10, 0, 0], [3, 3, 4], [0, 7, 0]])
    # margins: 0, 1, 2, 3, 4, 10, 1, 7 ; dist = max(0, ceil(M/2) - 1)
    assert margins(counts).tolist() == [0, 1, 2, 3, 4, 10, 1, 7]
    assert distance_to_instability(counts).tolist() == [0, 0, 0, 1, 1, 4, 0, 3]
    assert distance_to_instability_printed(counts).tolist() == [0, 0, 1, 2, 3, 9, 0, 6]


def test_plurality_ties_go_to_smallest_index():
    assert plurality(np.array([[2, 2, 1], [0, 3, 3], [1, 1, 1]])).tolist() == [0, 1, 0]


def test_single_class_column_has_runner_up_zero():
    assert margins(np.array([[4], [7]])).tolist() == [4, 7]
    assert distance_to_instability(np.array([[4], [7]])).tolist() == [1, 3]


def _vectors(k, c):
    for combo in itertools.product(range(k + 1), repeat=c):
        if sum(combo) == k:
            yield np.array(combo)


def _moves(v):
    """All results of one teacher changing its vote (one count -1, another +1)."""
    c = len(v)
    for a in range(c):
        if v[a] == 0:
            continue
        for b in range(c):
            if a != b:
                w = v.copy()
                w[a] -= 1
                w[b] += 1
                yield w


@pytest.mark.parametrize("k", range(1, 9))
@pytest.mark.parametrize("c", [2, 3, 4])
def test_sensitivity_exhaustive(k, c):
    """Over every vote vector and every single-teacher move: the corrected distance
    changes by at most 1; the printed form changes by 2 for some move (k >= 3)."""
    worst_corrected, worst_printed = 0, 0
    for v in _vectors(k, c):
        moved = np.array(list(_moves(v)))
        if moved.size == 0:
            continue
        base = np.repeat(v[None, :], len(moved), axis=0)
        dc = np.abs(distance_to_instability(moved) - distance_to_instability(base))
        dp = np.abs(distance_to_instability_printed(moved) - distance_to_instability_printed(base))
        worst_corrected = max(worst_corrected, int(dc.max()))
        worst_printed = max(worst_printed, int(dp.max()))
    assert worst_corrected <= 1
    if k >= 3:
        assert worst_printed == 2


def test_distance_is_stability_certificate():
    """dist = number of teacher changes the plurality survives: after dist arbitrary
    single-teacher moves the plurality is unchanged (exhaustive on small k)."""
    for k in range(2, 8):
        for v in _vectors(k, 3):
            d = int(distance_to_instability(v[None, :])[0])
            top = int(plurality(v[None, :])[0])
            frontier = {tuple(v)}
            for _ in range(d):
                frontier = {tuple(w) for u in frontier for w in _moves(np.array(u))}
            for u in frontier:
                assert int(plurality(np.array(u)[None, :])[0]) == top


def test_max_distance_and_min_teachers_boundary():
    for w in [0.0, 0.5, 3.0, 3.7, 325.0, 2389.13]:
        k = min_teachers_for_threshold(w)
        assert max_distance(k) > w
        assert max_distance(k - 1) <= w
    assert min_teachers_for_threshold(-1.0) == 2


def test_bad_counts():
    with pytest.raises(DataError):
        distance_to_instability(np.array([1, 2, 3]))
    with pytest.raises(DataError):
        distance_to_instability(np.array([[1, -1]]))
    with pytest.raises(DataError):
        distance_to_instability(np.array([[1.5, 2]]))
