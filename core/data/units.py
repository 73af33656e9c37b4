"""The privacy unit: a person (the rows sharing a declared ID column) or a row.

A guarantee of differential privacy protects one *unit*.  Without a declared unit the
library protects each row (replace-one-row adjacency, docs/design.md §1).  Real tables
hold several rows per person (a yearly panel, repeated visits); there the data owner
declares the column that names the person (``load_table(..., privacy_unit="id")``, the
command line's ``--privacy-unit id``, the app's Data page) and every guarantee holds per
person: two datasets are neighbours when they differ in **all the rows of one person**
(their number may change).  docs/design.md §1.2 states the adjacency and why each route
keeps its guarantee under it:

* teachers are trained on disjoint sets of persons (:func:`unit_chunks`: a keyed hash of
  the ID decides a person's chunk, so all of a person's rows are in one chunk and a
  person's chunk never depends on another person's data): one person changes one
  teacher, hence one vote per query, exactly as one row did;
* the DP-training routes keep at most ``r`` rows of each person (:func:`bound_rows`,
  chosen at random, never by their values or labels) and calibrate their noise for ``r``;
* held-out parts are split by person (:func:`split_units`).

The unit column is never a feature: :func:`core.data.load_table` takes it out of the
features and keeps it here.  Its values are private (an ID is a join key back to people):
they stay in memory, are never shown, exported or stored.

:class:`PrivacyUnit` describes the unit in the words every report, export and page uses
(:meth:`PrivacyUnit.describe`).  :func:`group_privacy` says what a per-row guarantee means
for a person with ``k`` rows when no unit is declared.

References
----------
.. [Vad17] S. Vadhan. The Complexity of Differential Privacy. In *Tutorials on the
   Foundations of Cryptography*, Springer 2017 (Lemma 2.2: group privacy).
.. [DR14] C. Dwork, A. Roth. The Algorithmic Foundations of Differential Privacy.
   Foundations and Trends in TCS 9, 2014 (Theorem 2.2: group privacy, pure ε).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from core.data.ids import canonical_id
from core.errors import DataError, ParameterError
from core.noise import RNGLike, check_rng

__all__ = [
    "PrivacyUnit",
    "PER_ROW",
    "privacy_unit",
    "unit_chunks",
    "bound_rows",
    "check_bound",
    "split_units",
    "group_privacy",
    "describe_unit",
]

PER_ROW = "per row"
"""The description of the row as the privacy unit (no unit column declared)."""


def _codes(ids: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per-row integer codes ``0..P-1`` (order of first appearance; rows whose IDs have one canonical
    form are one person) and the ``P`` IDs as text (each person's first spelling)."""
    arr = np.asarray(ids).ravel()
    if arr.dtype.kind == "f":
        missing = np.isnan(arr)
        if not missing.any() and np.all(arr == np.round(arr)) and np.all(np.abs(arr) < 2**62):
            arr = arr.astype(np.int64)  # 7.0 and 7 are one person
    else:
        missing = pd.isna(arr) if arr.dtype.kind == "O" else np.zeros(arr.shape, dtype=bool)
    if np.any(missing):
        raise DataError(
            f"The privacy unit column has {int(np.sum(missing))} missing value(s): every row must name its "
            "person (fill the IDs in, or drop those rows)."
        )
    codes, uniques = pd.factorize(arr, sort=False)
    if arr.dtype.kind in "iub":  # whole numbers: their text is distinct already
        return codes.astype(np.int64), np.asarray(uniques).astype(str).astype(object)
    # One person per canonical form (core.data.ids), once per distinct value: the ledger charges
    # by that form, so two spellings it merges ("P001"/"p001", "007"/7) must share one chunk.
    forms = np.empty(len(uniques), dtype=object)
    forms[:] = [_form(u) for u in uniques]
    merged, first = pd.factorize(forms, sort=False)
    if first.size != forms.size:
        codes = merged[codes]
        uniques = np.asarray(uniques, dtype=object)[np.unique(merged, return_index=True)[1]]  # first spellings
    return codes.astype(np.int64), np.array([_as_text(u) for u in uniques], dtype=object)


def _form(value: Any) -> bytes:
    """The canonical form of an ID (:func:`core.data.ids.canonical_id`); an ID of another type
    by its text (the ledger refuses it when charged)."""
    try:
        return canonical_id(value)
    except DataError:
        return b"x" + _as_text(value).encode("utf-8", errors="backslashreplace")


def _as_text(value: Any) -> str:
    """An ID as text: 7, 7.0 and "7" are one person (a CSV column of IDs may be read either way)."""
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value) == int(value):
        return str(int(value))
    return str(value).strip()


@dataclass(frozen=True, eq=False)
class PrivacyUnit:
    """The declared privacy unit of a private table, with its IDs (private, in memory only).

    Attributes
    ----------
    column : str or None
        The unit column (None: each row is a unit).
    codes : numpy.ndarray of int64, shape (n_rows,)
        Each row's unit as a code ``0..n_units-1`` (order of first appearance); for the
        row unit, ``0..n_rows-1``.  Private: never shown or exported.
    ids : numpy.ndarray of object, shape (n_units,) or None
        Each unit's ID as text (``ids[codes]`` gives the rows' IDs); None for the row
        unit.  Private: kept in memory for the keyed hash of :func:`unit_chunks` only.
    """

    column: str | None
    codes: np.ndarray = field(repr=False)
    ids: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_units(self) -> int:
        """The number of units (persons, or rows)."""
        return int(self.codes.shape[0]) if self.ids is None else int(self.ids.shape[0])

    @property
    def per_row(self) -> bool:
        """True when each row is a unit (no unit column)."""
        return self.column is None

    @property
    def n_rows(self) -> int:
        """The number of rows."""
        return int(self.codes.shape[0])

    @property
    def rows_per_unit(self) -> np.ndarray:
        """Rows of each unit, shape (n_units,) (private: a NON-PRIVATE diagnostic for the owner)."""
        return np.bincount(self.codes, minlength=self.n_units).astype(np.int64)

    @property
    def largest(self) -> int:
        """The most rows any one unit has (private: a NON-PRIVATE diagnostic for the owner)."""
        return int(self.rows_per_unit.max()) if self.n_units else 0

    def describe(self, *, owner: bool = True, bound: int | None = None) -> str:
        """The unit in words: ``"per person (column id): 5,027 persons, at most 5 rows each"`` or ``"per row"``.

        Parameters
        ----------
        owner : bool, default True
            Include the largest number of rows of one person, read from the private rows:
            for the data owner's pages (a NON-PRIVATE diagnostic).  ``False`` for what
            leaves the owner (reports, exports): the number of persons is public under
            the adjacency (it is the same in neighbouring datasets), a person's number of
            rows is not.
        bound : int, optional
            A declared bound on the rows used per person (the DP-training routes):
            stated as ``"at most r rows each used"``; public.

        Returns
        -------
        str
        """
        return describe_unit(self.column, self.n_units, largest=self.largest if owner else None, bound=bound)

    def restrict(self, rows: np.ndarray, units: np.ndarray | None = None) -> "PrivacyUnit":
        """The unit of a subset of the rows that keeps persons without a row (``missing="drop"``).

        Parameters
        ----------
        rows : numpy.ndarray of int
            The rows kept.
        units : numpy.ndarray of int, optional
            The persons (codes) the result holds, in order; default all of them.  Every kept
            row's person must be among them.

        Returns
        -------
        PrivacyUnit
            Its persons are ``units`` whether or not a row of theirs is kept, so its
            :attr:`n_units` does not read which rows were kept.
        """
        rows = np.asarray(rows, dtype=np.int64)
        if self.ids is None:
            raise ParameterError("restrict needs a unit of persons (with IDs).")
        units = np.arange(self.n_units) if units is None else np.asarray(units, dtype=np.int64)
        new = np.full(self.n_units, -1, dtype=np.int64)
        new[units] = np.arange(units.size)
        codes = new[self.codes[rows]]
        if codes.size and codes.min() < 0:
            raise ParameterError("restrict: a kept row's person is not among the units kept.")
        return PrivacyUnit(self.column, codes, self.ids[units])

    def subset(self, rows: np.ndarray) -> "PrivacyUnit":
        """The unit of a subset of the rows (codes renumbered)."""
        rows = np.asarray(rows, dtype=np.int64)
        if self.per_row:
            return PrivacyUnit(None, np.arange(rows.size, dtype=np.int64))
        codes, ids = _codes(self.ids[self.codes[rows]])
        return PrivacyUnit(self.column, codes, ids)


def describe_unit(column: str | None, n_units: int, *, largest: int | None = None, bound: int | None = None) -> str:
    """The unit in words from its parts (see :meth:`PrivacyUnit.describe`).

    Parameters
    ----------
    column : str or None
    n_units : int
    largest : int, optional
        The most rows of one person (the owner's view only).
    bound : int, optional
        A declared bound on the rows used per person.

    Returns
    -------
    str
    """
    if column is None:
        return PER_ROW
    text = f"per person (column {column}): {int(n_units):,} person{'s' if int(n_units) != 1 else ''}"
    if largest is not None:
        text += f", at most {int(largest):,} row{'s' if int(largest) != 1 else ''} each"
    if bound is not None:
        text += f"; at most {int(bound):,} row{'s' if int(bound) != 1 else ''} of each person used"
    return text


def privacy_unit(ids: Any = None, column: str | None = None, *, n_rows: int | None = None) -> PrivacyUnit:
    """The privacy unit of a table: persons named by ``ids``, or each row.

    Parameters
    ----------
    ids : array-like, optional
        One ID per row (any values; compared in their canonical form,
        :func:`core.data.ids.canonical_id`: ``7``, ``"007"``, ``"P001"``/``"p001"`` are one person each,
        as in the ledger's accounts).
        None: each row is a unit (``n_rows`` needed).
    column : str, optional
        The unit column's name (required with ``ids``).
    n_rows : int, optional
        The number of rows, for the row unit.

    Returns
    -------
    PrivacyUnit

    Raises
    ------
    DataError
        An ID is missing.
    ParameterError
        ``ids`` without ``column`` or neither ``ids`` nor ``n_rows``.
    """
    if ids is None:
        if n_rows is None:
            raise ParameterError("Give the IDs of the privacy unit, or n_rows for the row as the unit.")
        return PrivacyUnit(None, np.arange(int(n_rows), dtype=np.int64))
    if column is None or not str(column):
        raise ParameterError("Name the privacy unit's column (column=...).")
    codes, uniques = _codes(ids)
    if n_rows is not None and codes.size != int(n_rows):
        raise DataError(f"The privacy unit needs one ID per row: {int(n_rows)} rows but {codes.size} IDs.")
    return PrivacyUnit(str(column), codes, uniques)


def _unit_codes(units: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per-row codes and the units' IDs as text (a row's index as text for the row unit)."""
    if isinstance(units, PrivacyUnit):
        if units.ids is None:
            return units.codes, np.array([str(i) for i in range(units.n_units)], dtype=object)
        return units.codes, units.ids
    return _codes(units)


def unit_chunks(units: Any, k: int, *, rng: RNGLike = None) -> np.ndarray:
    """The chunk (teacher) of every row: a keyed hash of its unit's ID, so a person's rows share one chunk.

    A fresh 64-bit key is drawn from ``rng``; each distinct ID goes, as text, through
    SipHash-2-4 under that key (:func:`pandas.util.hash_array`), and its chunk is the
    hash modulo ``k``.  A person's chunk is therefore a function of the key and of that
    person's own ID only: no other person's ID, row count or values move it.  For a fresh
    key the chunks of distinct IDs are (pseudo)random and independent, each uniform on
    ``0..k-1`` (the bias of a 64-bit hash modulo ``k`` is below ``k/2⁶⁴``).

    Why not balance the chunks by row counts: a rule that fills chunks evenly would place a
    person according to the other persons' row counts, so replacing one person (their
    count may change) could move other persons between chunks, and several teachers would
    change; the proof of docs/design.md §1.2 needs exactly one.  Chunk sizes therefore
    vary (about ``n/k`` rows each, with the spread of a multinomial draw).

    Parameters
    ----------
    units : array-like of IDs (one per row) or PrivacyUnit
    k : int
        The number of chunks.
    rng : numpy.random.Generator, int or None
        Source of the key (see :func:`core.noise.check_rng`).

    Returns
    -------
    numpy.ndarray of int64, shape (n_rows,)
        The chunk of each row, in ``0..k-1``.
    """
    from pandas.util import hash_array

    codes, ids = _unit_codes(units)
    k = int(k)
    if k < 1:
        raise ParameterError(f"k must be at least 1, got {k}.")
    key = check_rng(rng).bytes(8).hex()  # 16 characters: the 16-byte SipHash key
    hashed = hash_array(np.asarray(ids, dtype=object), hash_key=key, categorize=False)
    return (hashed % np.uint64(k)).astype(np.int64)[codes]


def bound_rows(units: Any, r: int, *, rng: RNGLike = None, rows: np.ndarray | None = None) -> np.ndarray:
    """Keep at most ``r`` rows of each unit, chosen at random without reading any value or label.

    Each row draws an independent uniform key from ``rng`` (a keyed hash of the row's
    index); within each unit the ``r`` rows with the smallest keys are kept.  Which rows of
    a person are kept is a uniformly random ``r``-subset of that person's rows,
    independent across persons: it depends on nothing but how many rows the person has.

    Parameters
    ----------
    units : array-like of IDs (one per row) or PrivacyUnit
    r : int
        The bound, at least 1.
    rng : numpy.random.Generator, int or None
    rows : numpy.ndarray of int, optional
        Each row's number in the file (:attr:`core.data.Table.rows`), given under
        ``missing="drop"``: a row's key is then a keyed hash (SipHash-2-4 under a fresh key
        from ``rng``) of its number, so a row removed by the drop leaves every other row's
        key, hence every other person's kept rows, unchanged (keys drawn in row order
        would shift after it).

    Returns
    -------
    numpy.ndarray of int64
        The kept row indices, ascending.
    """
    codes, _ = _unit_codes(units)
    r = check_bound(r)
    if rows is not None:
        from pandas.util import hash_array

        rows = np.asarray(rows, dtype=np.int64)
        if rows.shape != codes.shape:
            raise ParameterError(f"bound_rows: rows must give one number per row ({codes.size}), got {rows.shape}.")
        hashed = hash_array(rows.astype(str).astype(object), hash_key=check_rng(rng).bytes(8).hex(), categorize=False)
        order = np.lexsort((hashed, codes))
        keys = None
    else:
        keys = check_rng(rng).random(codes.size)
    if keys is None:
        pass
    elif codes.size and int(codes.max()) < 2**21:  # by unit, then by key: one float sort, 32 bits of key left
        order = np.argsort(codes + keys, kind="stable")
    else:
        order = np.lexsort((keys, codes))
    sorted_codes = codes[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_codes)) + 1] if codes.size else np.zeros(0, dtype=np.int64)
    rank = np.arange(codes.size) - np.repeat(starts, np.diff(np.r_[starts, codes.size]))
    return np.sort(order[rank < r]).astype(np.int64)


def check_bound(r: Any) -> int:
    """``r``, the rows kept per person, as an int ≥ 1 (else a ParameterError)."""
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or int(r) < 1:
        raise ParameterError(f"The rows kept per person must be a whole number of at least 1, got {r!r}.")
    return int(r)


def split_units(units: Any, n_out: int, *, rng: RNGLike = None, return_units: bool = False) -> tuple[np.ndarray, ...]:
    """Split the rows into two parts by whole units: ``n_out`` units (all their rows) go out.

    The units that go out are a uniformly random ``n_out``-subset of the units, drawn from
    ``rng`` without reading any row: a person is never on both sides.

    Parameters
    ----------
    units : array-like of IDs or PrivacyUnit
    n_out : int
        Units in the second part.
    rng : numpy.random.Generator, int or None
    return_units : bool, default False
        Also return the units (codes) of each part, persons without a row included.

    Returns
    -------
    (rest, out) : (numpy.ndarray, numpy.ndarray)
        Row indices of each part, each in a random order of units (rows of a unit together);
        with ``return_units``, then the units of each part, ascending.
    """
    codes, ids = _unit_codes(units)
    n_units = int(ids.shape[0])
    n_out = int(n_out)
    if not 0 <= n_out <= n_units:
        raise ParameterError(f"Cannot take {n_out} of {n_units} units.")
    order = check_rng(rng).permutation(n_units)
    position = np.empty(n_units, dtype=np.int64)
    position[order] = np.arange(n_units)
    rows = np.argsort(position[codes], kind="stable")
    out_mask = position[codes[rows]] < n_out
    if return_units:
        return rows[~out_mask], rows[out_mask], np.sort(order[n_out:]), np.sort(order[:n_out])
    return rows[~out_mask], rows[out_mask]


def group_privacy(epsilon: float, delta: float, k: int) -> tuple[float, float]:
    """What an (ε, δ) guarantee per row means for a group of ``k`` rows (one person's rows).

    ``(k ε, δ Σ_{i<k} e^{iε}) = (k ε, δ (e^{kε} − 1)/(e^ε − 1))``, obtained by chaining the
    row guarantee along the ``k`` rows that differ: ``P[M(D₀) ∈ S] ≤ e^ε P[M(D₁) ∈ S] + δ ≤
    e^{2ε} P[M(D₂) ∈ S] + (1 + e^ε) δ ≤ …``.  It is at most ``(k ε, k e^{(k−1)ε} δ)``, the
    form of [Vad17] Lemma 2.2; pure ε gives ``k ε`` ([DR14] Theorem 2.2).  The chain needs
    datasets of the same size at each step (replace-one), so it covers a person whose
    ``k`` rows are each replaced; it is the figure to show when no unit is declared.

    Parameters
    ----------
    epsilon : float
    delta : float
    k : int
        The group's size (at least 1).

    Returns
    -------
    (float, float)
        The group's (ε, δ); δ capped at 1.
    """
    eps, dlt, k = float(epsilon), float(delta), int(k)
    if k < 1 or eps < 0 or not 0 <= dlt <= 1:
        raise ParameterError("group_privacy needs ε ≥ 0, δ in [0, 1] and k ≥ 1.")
    if dlt == 0:
        return k * eps, 0.0
    factor = float(k) if eps == 0 else math.expm1(k * eps) / math.expm1(eps)
    return k * eps, min(1.0, dlt * factor)

