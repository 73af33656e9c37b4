"""The privacy unit (core.data.units): declared IDs, keyed-hash chunks, the row bound, splits by person,
group privacy, and the unit through load_table and split_public."""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest

from core.data import load_table, panel, split_public
from core.data.units import (PER_ROW, bound_rows, describe_unit, group_privacy, privacy_unit, split_units,
                             unit_chunks)
from core.ensemble.teachers import train_teachers
from core.errors import DataError, ParameterError

from builders import PersonRecorder


def test_describe_says_the_unit_for_the_owner_and_for_an_export():
    ids = np.repeat(np.arange(5027), [5] * 1000 + [3] * 4027)
    unit = privacy_unit(ids, "id")
    assert unit.n_units == 5027 and unit.largest == 5
    assert unit.describe() == "per person (column id): 5,027 persons, at most 5 rows each"
    # What leaves the owner names the persons (public under the adjacency), not a person's count.
    assert unit.describe(owner=False) == "per person (column id): 5,027 persons"
    assert unit.describe(owner=False, bound=2) == "per person (column id): 5,027 persons; at most 2 rows of each person used"
    assert privacy_unit(n_rows=10).describe() == PER_ROW == "per row"
    assert describe_unit("nr", 1, largest=1) == "per person (column nr): 1 person, at most 1 row each"


def test_ids_are_compared_as_text_and_must_be_present():
    unit = privacy_unit(np.array([7, "7", 7.0, "8"], dtype=object), "id")
    assert unit.n_units == 2
    with pytest.raises(DataError, match="missing"):
        privacy_unit(np.array(["a", None], dtype=object), "id")
    with pytest.raises(ParameterError):
        privacy_unit([1, 2])


def test_a_persons_chunk_depends_on_its_own_id_only():
    # The same key (seed) puts a person in the same chunk whatever the other persons are.
    ids = np.array(["ann", "bob", "bob", "cy", "dee", "dee", "dee"], dtype=object)
    a = unit_chunks(ids, 7, rng=11)
    others = np.array(["zed", "bob", "ann", "ann", "ann", "q", "r", "s"], dtype=object)
    b = unit_chunks(others, 7, rng=11)
    assert a[0] == b[2] == b[3] == b[4]  # ann
    assert a[1] == a[2] == b[1]  # bob
    # Rows of one person share a chunk; a fresh key moves the persons independently.
    assert a[4] == a[5] == a[6]
    draws = np.array([unit_chunks(np.arange(2000), 4, rng=s) for s in range(3)])
    assert not np.array_equal(draws[0], draws[1])
    counts = np.bincount(draws[0], minlength=4)
    # Uniform chunks: each count ~ Binomial(2000, 1/4), sd 19.4; 6 sd is a false-failure rate < 1e-8.
    assert np.all(np.abs(counts - 500) < 6 * math.sqrt(2000 * 0.25 * 0.75))


def test_bound_rows_keeps_at_most_r_rows_per_person_at_random():
    ids = np.repeat(np.arange(50), np.arange(1, 51))
    for r in (1, 3):
        kept = bound_rows(ids, r, rng=0)
        per = np.bincount(ids[kept], minlength=50)
        assert np.array_equal(per, np.minimum(np.arange(1, 51), r))
    # Label-blind and uniform: over seeds, every row of the 50-row person is kept about
    # equally often (each with probability 1/50; 2,000 draws: mean 40, sd 6.3; within 40 ± 35
    # is 5.5 sd, false failure < 1e-6 for 50 rows together).
    rows = np.flatnonzero(ids == 49)
    hits = np.zeros(rows.size)
    for s in range(2000):
        kept = bound_rows(ids, 1, rng=s)
        hits += np.isin(rows, kept)
    assert hits.sum() == 2000 and hits.min() > 5 and hits.max() < 75
    with pytest.raises(ParameterError):
        bound_rows(ids, 0)


def test_split_units_never_puts_a_person_on_both_sides():
    ids = np.repeat(np.arange(40), 3)
    rest, out = split_units(ids, 10, rng=0)
    assert set(ids[rest]).isdisjoint(ids[out]) and len(set(ids[out])) == 10
    assert sorted(np.r_[rest, out]) == list(range(ids.size))


def test_group_privacy_matches_the_chain_computed_by_a_plain_loop():
    for eps, delta, k in [(1.0, 1e-6, 5), (0.3, 1e-5, 3), (2.0, 1e-7, 1)]:
        # The chain: P[D0] <= e^eps P[D1] + delta, applied k times.
        mult, slack = 1.0, 0.0
        for _ in range(k):
            slack = slack * math.exp(eps) + delta
            mult *= math.exp(eps)
        g_eps, g_delta = group_privacy(eps, delta, k)
        assert g_eps == pytest.approx(math.log(mult)) and g_delta == pytest.approx(slack, rel=1e-12)
        assert g_delta <= k * math.exp((k - 1) * eps) * delta * (1 + 1e-12)  # Vadhan's Lemma 2.2 form
    assert group_privacy(1.0, 0.0, 5) == (5.0, 0.0)


def test_load_table_takes_the_unit_out_of_the_features():
    csv = "id,age,label\n" + "".join(f"{i // 3},{20 + i % 7},{'yes' if i % 2 else 'no'}\n" for i in range(30))
    table = load_table(io.BytesIO(csv.encode()), label_column="label", privacy_unit="id")
    assert "id" not in table.features.columns and table.unit.column == "id"
    assert table.privacy_unit.describe() == "per person (column id): 10 persons, at most 3 rows each"
    assert "privacy_unit='id'" in repr(table)
    plain = load_table(io.BytesIO(csv.encode()), label_column="label")
    assert "id" in plain.features.columns and plain.unit is None and plain.privacy_unit.describe() == "per row"
    with pytest.raises(DataError, match="not in the file"):
        load_table(io.BytesIO(csv.encode()), label_column="label", privacy_unit="person")
    with pytest.raises(DataError, match="label column"):
        load_table(io.BytesIO(csv.encode()), label_column="label", privacy_unit="label")
    gap = "id,age,label\n1,3,a\n,4,b\n2,5,a\n"
    with pytest.raises(DataError, match="no ID"):
        load_table(io.BytesIO(gap.encode()), label_column="label", privacy_unit="id")


def test_split_public_splits_by_person():
    table = panel(60, rng=3)
    private, public = split_public(table, 15, rng=0)
    assert public.unit.n_units == 15 and private.unit.n_units == 45
    assert private.n_rows + public.n_rows == table.n_rows
    ids = table.unit.ids[table.unit.codes]
    pos = {r: i for i, r in enumerate(table.rows)}
    priv_ids = {ids[pos[r]] for r in private.rows}
    pub_ids = {ids[pos[r]] for r in public.rows}
    assert priv_ids.isdisjoint(pub_ids)
    with pytest.raises(ParameterError, match="persons"):
        split_public(table, 59, rng=0)
    # Each part names the units it holds (for a ledger charging a run on a part): persons, or file rows.
    assert set(private.unit_ids).isdisjoint(public.unit_ids) and len(set(public.unit_ids)) == 15
    plain = load_table(io.BytesIO(b"a,label\n1,x\n2,y\n3,x\n4,y\n5,x\n"), label_column="label")
    rest, out = split_public(plain, 2, rng=0)
    assert sorted(np.r_[rest.unit_ids, out.unit_ids]) == [1, 2, 3, 4, 5]


def _persons_per_teacher(table, units, k, seed):
    X = np.column_stack([table.unit.codes.astype(float), table.features.to_numpy()])
    y = table.labels.copy()
    y[:2] = [0, 1]
    ensemble = train_teachers(X, y, PersonRecorder(), k, rng=seed, units=units)
    return [getattr(t, "persons_", frozenset()) for t in ensemble._teachers]


def test_no_persons_rows_span_two_teachers_on_a_generated_panel():
    table = panel(1000, rng=5)  # persons with 1 to 5 rows
    seen = _persons_per_teacher(table, table.unit, 50, seed=1)
    owner = {}
    for j, persons in enumerate(seen):
        for p in persons:
            assert owner.setdefault(p, j) == j, f"person {p} is under teachers {owner[p]} and {j}"
    assert len(owner) == 1000
    # Per-row chunks (no unit) spread a person's rows: most persons with 5 rows are under several teachers.
    spread = _persons_per_teacher(table, None, 50, seed=1)
    teachers_of = {}
    for j, persons in enumerate(spread):
        for p in persons:
            teachers_of.setdefault(p, set()).add(j)
    five = np.flatnonzero(table.unit.rows_per_unit == 5)
    assert np.mean([len(teachers_of[p]) > 1 for p in five]) > 0.8


def test_replacing_one_person_changes_one_teachers_chunk_only():
    table = panel(300, rng=6)
    before = _persons_per_teacher(table, table.unit, 20, seed=2)
    # The neighbour: person p0's rows replaced by two new rows (their count changes).
    keep = table.unit.codes != 0
    X = np.vstack([table.features.to_numpy()[keep], [[9.0, 9.0], [8.0, 8.0]]])
    ids = np.concatenate([table.unit.ids[table.unit.codes][keep], ["p0", "p0"]])
    labels = np.concatenate([table.labels[keep], [1, 1]])
    from core.data.table import table_from_arrays

    other = table_from_arrays(X, labels, units=ids, unit_column="person")
    # Codes of the neighbour differ; compare by ID text.
    names_before = [frozenset(table.unit.ids[list(p)]) for p in before]
    after = _persons_per_teacher(other, other.unit, 20, seed=2)
    names_after = [frozenset(other.unit.ids[list(p)]) for p in after]
    assert names_before == names_after  # the same persons in every chunk (p0's chunk too)


def test_person_chunks_are_the_same_on_any_backend():
    # The chunks are decided in the calling process; joblib workers only fit them.
    from joblib import parallel_config

    table = panel(200, rng=8)
    one = _persons_per_teacher(table, table.unit, 10, seed=4)
    with parallel_config(backend="threading"):
        X = np.column_stack([table.unit.codes.astype(float), table.features.to_numpy()])
        y = table.labels.copy()
        y[:2] = [0, 1]
        two = train_teachers(X, y, PersonRecorder(), 10, rng=4, units=table.unit, n_jobs=2)
    assert one == [getattr(t, "persons_", frozenset()) for t in two._teachers]
