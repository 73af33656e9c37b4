"""``missing="drop"`` under replace-one adjacency: a replaced row (person) whose label goes
missing is REMOVED by the drop, so every step after the drop must be stable under one removal
(docs/design.md §1.2): the teachers' chunks, the counts, the splits and the rows kept per person.

Each test builds two neighbouring files (the same file but for one row, or one person, whose
label is missing in the second) and compares what the pipeline computes from them.  Everything
compared is exact (no statistics): the tests fail on any change.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

from core import pipeline
from core.data import load_table, split_public
from core.data.units import bound_rows
from core.mechanisms.dp_training import bounded, dp_logistic_label, private_rows, _logistic_noise

N = 60


def _csv(missing_at: int | None, *, persons: bool) -> io.StringIO:
    """Rows ``x, label`` (with ``id``: 3 rows per person); row ``missing_at`` (0-based) has no label
    (with ``persons``: every row of that row's person)."""
    lines = ["id,x,label" if persons else "x,label"]
    for i in range(N):
        label = "yes" if (i * 7) % 5 < 2 else "no"
        if missing_at is not None and (i // 3 == missing_at // 3 if persons else i == missing_at):
            label = ""
        x = f"{(i * 37) % 23}.5"
        lines.append(f"P{i // 3},{x},{label}" if persons else f"{x},{label}")
    return io.StringIO("\n".join(lines) + "\n")


def _pair(persons: bool, at: int = 17):
    return (load_table(_csv(None, persons=persons), missing="drop", privacy_unit="id" if persons else None),
            load_table(_csv(at, persons=persons), missing="drop", privacy_unit="id" if persons else None))


def _chunks(table, k: int, seed: int) -> list[set]:
    """Each teacher's chunk as a set of file row numbers (from the teachers' own split)."""
    from core.ensemble.teachers import _person_chunks

    chunks, _ = _person_chunks(table.partition_units, table.n_rows, k, np.random.default_rng(seed))
    return [set(table.rows[c].tolist()) for c in chunks]


@pytest.mark.filterwarnings("ignore:.*received no person")  # 20 persons in 4 chunks: one may get none
@pytest.mark.parametrize("persons", [False, True], ids=["per-row", "per-person"])
def test_one_removal_changes_exactly_one_teachers_chunk(persons):
    full, dropped = _pair(persons)
    assert dropped.n_rows == full.n_rows - (3 if persons else 1)
    for seed in range(5):
        a, b = _chunks(full, 4, seed), _chunks(dropped, 4, seed)
        assert sum(x != y for x, y in zip(a, b)) == 1
        assert set().union(*a) - set().union(*b) == ({18, 17, 16} if persons else {18})  # the file's rows 16-18 / row 18
    # The pipeline trains on that partition: the chunk sizes differ in one teacher only.
    sizes = [pipeline.train(t, "gaussian_nb", {}, 4, rng=3).chunk_sizes for t in (full, dropped)]
    assert int(np.sum(sizes[0] != sizes[1])) == 1


def test_a_slice_of_a_permutation_would_move_several_chunks():
    """Why the partition under drop is a hash: slicing a permutation of the rows left (the split
    without drop) moves the chunk boundaries, and more than one chunk changes."""
    from core.ensemble.teachers import train_teachers

    full, dropped = _pair(False)
    sizes = [train_teachers(t.features.to_numpy(), t.labels, "gaussian_nb", 6, n_classes=2, rng=3).chunk_sizes
             for t in (full, dropped)]
    rows = []
    for t in (full, dropped):
        perm = np.random.default_rng(3).permutation(t.n_rows)
        rows.append([set(t.rows[c].tolist()) for c in np.array_split(perm, 6)])
    assert sum(x != y for x, y in zip(*rows)) > 1 and sizes[0].sum() != sizes[1].sum()


@pytest.mark.parametrize("persons", [False, True], ids=["per-row", "per-person"])
def test_counts_and_dp_training_parameters_read_the_files_count(persons):
    full, dropped = _pair(persons)
    assert full.n_units == dropped.n_units == (N // 3 if persons else N)
    public = full.features.iloc[:12]
    rows = [private_rows(t, public) for t in (full, dropped)]
    assert rows[0].public_n == rows[1].public_n == full.n_units
    results = [dp_logistic_label(r, epsilon=1.0, delta=1e-6, rng=0) for r in rows]
    assert results[0].params["C"] == results[1].params["C"]
    assert results[0].params["n_private"] == results[1].params["n_private"] == full.n_units
    for r in rows:  # the noise's scale and the total regularization n·Λ do not read the rows left
        kept, rr, n_public = bounded(r, 1, np.random.default_rng(0))
        assert n_public == full.n_units
    cfgs = [_logistic_noise(bounded(r, 1, np.random.default_rng(0))[0], 1.0, 1e-6, results[0].params["C"], "gaussian")[1]
            for r in rows]
    ns = [bounded(r, 1, np.random.default_rng(0))[0].n for r in rows]
    assert cfgs[0].scale == cfgs[1].scale
    assert (cfgs[0].regularization + cfgs[0].extra) * ns[0] == pytest.approx((cfgs[1].regularization + cfgs[1].extra) * ns[1])
    # k's limit on the chunks reads the file's count: the same for both.
    from core.data.splits import _chunkable

    assert _chunkable(full) == _chunkable(dropped) == full.n_units


@pytest.mark.parametrize("persons", [False, True], ids=["per-row", "per-person"])
def test_splits_are_of_the_files_units(persons):
    full, dropped = _pair(persons)
    for seed in range(4):
        parts = [split_public(t, 5, rng=seed) for t in (full, dropped)]
        for side in (0, 1):
            a, b = set(parts[0][side].rows.tolist()), set(parts[1][side].rows.tolist())
            assert b <= a and len(a - b) <= (3 if persons else 1)  # only the removed rows differ
            assert parts[0][side].n_units == parts[1][side].n_units  # public: the split's share of the file
        assert parts[0][1].n_units == 5 and parts[0][0].n_units == full.n_units - 5


def test_rows_kept_per_person_are_stable_under_removal():
    full, dropped = _pair(True)
    unit_rows = {}
    for t in (full, dropped):
        keep = bound_rows(t.unit, 1, rng=7, rows=t.rows)
        unit_rows[t is full] = set(t.rows[keep].tolist())
    assert unit_rows[True] - unit_rows[False] <= {16, 17, 18}
    assert unit_rows[False] <= unit_rows[True]
