"""The privacy units of a dataset, grouped by what they have spent (docs/design.md §9).

A ledger does not keep a history per unit.  What a unit has spent is the composition of
the runs that read it, and a composition reads only the runs' privacy maps
(:func:`core.ledger.entries.map_key`), so a unit's account is a **count vector**: how many
runs of each distinct map read it.  Units with the same vector are one **class**;
:class:`UnitClasses` keeps the classes' vectors and, for every unit seen, its keyed hash
(:mod:`core.ledger.units`) and its class.  A run that reads some units splits each class
it touches (its units move to the class of the vector plus one; the others stay), and
classes that end with equal vectors merge.  Runs that read the whole dataset are one
common vector added to every class, and units never seen are the zero class (class 0).

The data's total, the largest class's, is computed in :mod:`core.ledger.largest`.

References
----------
.. [DR14] C. Dwork, A. Roth, "The algorithmic foundations of differential privacy",
   2014 (a run that does not read a unit's rows costs that unit nothing).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from core.ledger.units import sorted_unique

__all__ = ["UnitClasses", "unique_rows"]


def _small_uint(values: np.ndarray) -> np.ndarray:
    """``values`` (non-negative integers) in the smallest unsigned dtype that holds them."""
    top = int(values.max()) if values.size else 0
    for dt in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(dt).max:
            return values.astype(dt)
    return values.astype(np.uint64)


def unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows in lexicographic order (the zero row first) and each row's index among them."""
    n, d = rows.shape
    if n == 0:
        return rows, np.zeros(0, dtype=np.int64)
    if d == 0:
        return rows[:1], np.zeros(n, dtype=np.int64)
    order = np.lexsort(rows.T[::-1])
    s = rows[order]
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.any(s[1:] != s[:-1], axis=1, out=new[1:])
    group = np.cumsum(new) - 1
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = group
    return s[new], inverse


@dataclass(frozen=True)
class UnitClasses:
    """The units of a dataset by class (module docstring).

    Attributes
    ----------
    keys : numpy.ndarray of uint64, shape (n_units,)
        Every unit seen, as its keyed hash (:func:`core.ledger.units.unit_keys`), sorted.
    class_of : numpy.ndarray of unsigned int, shape (n_units,)
        Each unit's class.
    vectors : numpy.ndarray of unsigned int, shape (n_classes, n_kinds)
        Each class's count of runs per privacy map, over the runs that read part of
        the data; row 0 is the zero vector (units never read by such a run).
    """

    keys: np.ndarray
    class_of: np.ndarray
    vectors: np.ndarray

    @classmethod
    def empty(cls, n_kinds: int = 0) -> UnitClasses:
        """No unit seen yet: only the zero class.

        Parameters
        ----------
        n_kinds : int
            Number of distinct privacy maps so far.

        Returns
        -------
        UnitClasses
        """
        return cls(np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.uint8), np.zeros((1, n_kinds), dtype=np.uint8))

    @property
    def n_units(self) -> int:
        """Number of distinct units seen."""
        return int(self.keys.size)

    @property
    def n_classes(self) -> int:
        """Number of classes, the zero class included."""
        return int(self.vectors.shape[0])

    def widened(self, n_kinds: int) -> UnitClasses:
        """The same classes with room for ``n_kinds`` privacy maps (new columns are 0).

        Parameters
        ----------
        n_kinds : int
            The number of distinct privacy maps the ledger holds now.

        Returns
        -------
        UnitClasses
        """
        d = self.vectors.shape[1]
        if n_kinds <= d:
            return self
        wide = np.zeros((self.vectors.shape[0], n_kinds), dtype=self.vectors.dtype)
        wide[:, :d] = self.vectors
        return dataclasses.replace(self, vectors=wide)

    def classes_of(self, keys: np.ndarray) -> np.ndarray:
        """The distinct classes of the units ``keys`` (units never seen: class 0).

        Parameters
        ----------
        keys : numpy.ndarray of uint64, sorted and distinct

        Returns
        -------
        numpy.ndarray of int64
        """
        if self.keys.size == 0 or keys.size == 0:
            return np.zeros(int(keys.size > 0), dtype=np.int64)
        pos = np.searchsorted(self.keys, keys)
        inside = pos < self.keys.size
        found = np.zeros(keys.size, dtype=bool)
        found[inside] = self.keys[pos[inside]] == keys[inside]
        cls = self.class_of[pos[found]].astype(np.int64)
        if not found.all():
            cls = np.concatenate([cls, [0]])
        return sorted_unique(cls)

    def after_run(self, kind: int, keys: np.ndarray) -> UnitClasses:
        """The classes after a run of privacy map ``kind`` that read the units ``keys``.

        Each class the run touches splits: its units in ``keys`` move to the class of its
        vector plus one run of ``kind``, the rest stay; then classes with equal vectors
        merge and classes left without units are dropped (the zero class always stays).

        Parameters
        ----------
        kind : int
            The run's privacy map (a column of :attr:`vectors`, widened if new).
        keys : numpy.ndarray of uint64, sorted and distinct

        Returns
        -------
        UnitClasses
        """
        state = self.widened(kind + 1)
        if keys.size == 0:
            return state
        old_keys = state.keys
        pos = np.searchsorted(old_keys, keys)
        inside = pos < old_keys.size
        found = np.zeros(keys.size, dtype=bool)
        found[inside] = old_keys[pos[inside]] == keys[inside]
        class_of = state.class_of.astype(np.int64)
        if not found.all():
            all_keys = np.concatenate([old_keys, keys[~found]])
            order = np.argsort(all_keys, kind="stable")
            all_keys = all_keys[order]
            class_of = np.concatenate([class_of, np.zeros(int((~found).sum()), dtype=np.int64)])[order]
            pos = np.searchsorted(all_keys, keys)
        else:
            all_keys = old_keys
        old = class_of[pos]
        touched = sorted_unique(old)
        n_old = state.vectors.shape[0]
        vectors = state.vectors
        if touched.size and int(vectors[touched, kind].max()) >= np.iinfo(vectors.dtype).max:
            vectors = vectors.astype(np.uint32 if vectors.dtype.itemsize < 4 else np.uint64)  # a count outgrew its type
        grown = vectors[touched].copy()
        grown[:, kind] += 1
        class_of[pos] = n_old + np.searchsorted(touched, old)
        every = np.concatenate([vectors, grown])
        live = np.bincount(class_of, minlength=every.shape[0]) > 0
        live[0] = True
        live_ids = np.flatnonzero(live)
        merged, inverse = _merge_equal(every[live_ids])
        mapping = np.zeros(every.shape[0], dtype=np.int64)
        mapping[live_ids] = inverse
        return UnitClasses(all_keys, _small_uint(mapping[class_of]), merged)


def _merge_equal(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows with equal entries merged (row 0, the zero vector, stays first); each row's new index.

    Rows are grouped by a random linear 64-bit hash, and rows of one hash are merged only
    after comparing them entry by entry: a collision leaves two classes with equal vectors
    apart (harmless: totals read each), never two different vectors together.
    """
    n, d = rows.shape
    if n <= 1 or d == 0:
        return (rows[:1], np.zeros(n, dtype=np.int64)) if d == 0 else (rows, np.arange(n))
    weights = np.random.default_rng(0x5EED).integers(1, 2 ** 63, size=d, dtype=np.uint64) | np.uint64(1)
    h = np.zeros(n, dtype=np.uint64)
    for j in range(d):  # column by column: no n × d temporary of 64-bit values
        h += rows[:, j].astype(np.uint64) * weights[j]
    h[0] = 0  # the zero vector (its hash is 0 anyway) sorts first
    order = np.argsort(h, kind="stable")
    hs, rs = h[order], rows[order]
    same = np.zeros(n, dtype=bool)
    tie = np.flatnonzero(hs[1:] == hs[:-1])
    same[tie + 1] = np.all(rs[tie + 1] == rs[tie], axis=1)
    group = np.cumsum(~same) - 1
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = group
    return rs[~same], inverse
