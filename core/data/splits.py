"""Splitting the public data and checking class sizes: :func:`split_public`,
:func:`largest_k`, :func:`check_class_sizes`.
"""

from __future__ import annotations

import math

import numpy as np

from core.errors import DataError, ParameterError
from core.noise import RNGLike, check_rng
from core.validation import check_k
from core.data.reading import check_table
from core.data.table import Table

__all__ = [
    "ONE_FILE_DROP",
    "check_class_sizes",
    "check_one_file_queries",
    "largest_k",
    "split_public",
]


# --------------------------------------------------------------------------------------
# Class sizes and splitting
# --------------------------------------------------------------------------------------


def largest_k(table: Table) -> int:
    """The largest number of teachers the private table allows (at least 2).

    ``min(2 · min_c r_c, n_rows // 2)``: every class keeps a possible majority
    (:func:`check_class_sizes`) and every chunk has two rows (two persons with a privacy unit).  Used to fit the number of
    teachers to a newly loaded table.  With a declared class list (``Table.classes_declared``) the class
    counts are not read: ``check_class_sizes`` keeps a small or empty declared class, and a k fitted to
    the smallest class would publish (in every report's k) how many rows it holds, or whether any
    person holds it (docs/design.md §1.3); the limit is then ``n_rows // 2`` only.

    Parameters
    ----------
    table : Table
        The private table.

    Returns
    -------
    int
    """
    check_table(table)
    if table.classes_declared:  # public list: the rows' class counts decide nothing (docs/design.md §1.3)
        return max(2, _chunkable(table) // 2)
    return max(2, min(2 * int(table.class_counts.min()), _chunkable(table) // 2))


def _chunkable(table: Table) -> int:
    """What the chunks are made of: rows, or persons when the table has a privacy unit (the
    file's count, before ``missing="drop"``: :attr:`Table.n_units`)."""
    return table.n_units


def check_class_sizes(table: Table, k) -> None:
    """Refuse a number of teachers ``k`` that some class is too small for.

    A class with ``r`` private rows appears in at most ``r`` of the ``k`` disjoint chunks,
    and a teacher never predicts a class it has not seen, so at most ``r`` teachers can
    vote for it.  With ``r < ceil(k/2)`` the class can never win a majority of the votes,
    and BTT's stability test would rarely answer it; such a ``k`` is refused.  The largest
    ``k`` that works is ``2 · min_c r_c`` (and at most ``n_rows // 2`` so every chunk has
    two rows).

    A declared class list (``Table.classes_declared``) is not refused for a small or empty
    class: the list is the user's public choice (docs/design.md §1.3), and a class that no
    majority of teachers can vote for is simply rarely or never answered.

    Parameters
    ----------
    table : Table
        The private table.
    k : int
        The number of teachers.

    Raises
    ------
    ParameterError
        ``k`` is not a whole number in ``[2, n_rows // 2]`` (see
        :func:`core.validation.check_k`).
    DataError
        Some class has fewer than ``ceil(k/2)`` rows (a class list read from the rows only); the message names the classes and the
        largest ``k`` that works.
    """
    check_table(table)
    k = check_k(k, _chunkable(table), of="private rows" if table.unit is None else "persons")
    if table.classes_declared:  # the user's public class list: a small class is kept (docs/design.md §1.3)
        return
    need = math.ceil(k / 2)
    counts = table.class_counts
    small = np.flatnonzero(counts < need)
    if small.size == 0:
        return
    smallest = int(counts.min())
    shown = ", ".join(f"'{table.class_names[c]}' ({int(counts[c])} row(s))" for c in small[:10])
    if len(small) > 10:
        shown += f" and {len(small) - 10} more"
    if smallest == 0:
        absent = ", ".join(f"'{table.class_names[c]}'" for c in np.flatnonzero(counts == 0))
        raise DataError(
            f"Class(es) {absent} have no rows in the private table '{table.name}', so no "
            "teacher can ever predict them. Add rows of those classes (or, for a split, use a "
            "smaller public part)."
        )
    k_max = min(2 * smallest, _chunkable(table) // 2)
    raise DataError(
        f"Too many teachers for the smallest class(es): with k = {k}, a class needs at least "
        f"ceil(k/2) = {need} private rows, but {shown} has fewer. Such a class appears in "
        "fewer than half of the teachers' chunks, so the ensemble can never give it a "
        f"majority. Choose k of at most {k_max}, or add rows of the small class(es)."
    )


ONE_FILE_DROP = (
    "Rows with a missing value cannot be dropped when the public queries are drawn from the private file itself "
    "(one file, no public file): how many of the public rows a drop removes depends on the private rows, and "
    "with it the number of queries m, the price, refusal and ledger entry of every run, and the report. "
    "Choose 'impute' (each teacher fills a missing feature in from its own chunk; a missing label is still "
    "refused), or give the rows to label as a separate public file (rows without a label belong there), or "
    "'refuse' to see which rows have a missing value."
)
"""Why :func:`check_one_file_queries` refuses ``missing="drop"``, and what to do instead."""


def check_one_file_queries(table: Table) -> None:
    """Refuse ``missing="drop"`` on a one-file job: public queries drawn from the private file.

    A one-file job (an uploaded private file and no public file) takes its public queries
    from the file's own rows (:func:`split_public`).  Under ``missing="drop"`` the public
    part holds only the rows left of its ``n_public`` units, so the number of queries
    ``m = len(public rows)`` counts the private rows of the public part that have no missing
    value: a neighbouring file in which one such row has a missing cell or label has ``m``
    one smaller, and every quantity set from ``m`` moves with it — the per-query noise
    calibrated for ``m`` queries, the price and the refusal, the ledger entry's stored ``m``
    and description, and the report's count of public rows.  Everything charged or stored
    must be a function of public values only (docs/design.md §1.2), so the drop is refused
    here, before anything is charged, and whatever the rows hold: the refusal reads the
    option, never a row.  With ``"impute"`` every row of the file stays (a missing label
    is refused at load), so ``m`` is the public part's share of the file's count, public.
    A two-file job's queries are the public file's rows (public), and a teaching split of
    bundled or generated data reads no one's private rows; neither calls this check.

    Parameters
    ----------
    table : Table
        The loaded private file whose rows the public queries will be drawn from.

    Raises
    ------
    DataError
        When ``table.missing == "drop"`` (:data:`ONE_FILE_DROP` says what to do instead).
    """
    check_table(table)
    if table.missing == "drop":
        raise DataError(ONE_FILE_DROP)


def split_public(table: Table, n_public, *, rng: RNGLike = None) -> tuple[Table, Table]:
    """Split a table at random into a private part and a public part (by whole persons when it has a unit).

    Used with bundled or generated data to play both roles: the public part's features
    are the queries, and its labels serve only to measure accuracy (they are never given
    to a mechanism).  The split is a uniformly random permutation (no stratification);
    both parts keep the table's class names and schema and list their rows in the
    permuted (random) order; each row keeps its number in the source file
    (:attr:`Table.rows`), so that a part's export can be joined back to the file.

    With a privacy unit (:attr:`Table.unit`) the split is by person: ``n_public`` persons,
    drawn uniformly at random without reading any row, go to the public part with all
    their rows (:func:`core.data.units.split_units`), so no person is in both parts (a
    held-out part split by rows would put one person on both sides of the proof).  Each
    part keeps the unit of its own rows.

    Under ``missing="drop"`` the split is of the units of the FILE, before the drop: the
    file's rows (:attr:`Table.source_rows`), or its persons, those whose every row was
    dropped included; ``n_public`` of them, drawn without reading any value, go to the
    public part, and each part holds the rows left of its units.  Removing one row (or
    person) from the file then moves no other row between the parts (a permutation of the
    rows left would shift every position after it), and each part's :attr:`Table.n_units`
    is its share of the file's count, public (docs/design.md §1.2).  The public part's
    rows left are fewer than ``n_public`` by the dropped rows among them (a private count):
    where they are a job's queries of the private file, :func:`check_one_file_queries`
    refuses the drop first.

    Parameters
    ----------
    table : Table
        The labeled table to split.
    n_public : int
        Rows in the public part, from 1 to ``n_rows - 2``; with a privacy unit, persons,
        from 1 to ``n_persons - 2``.
    rng : Generator, int or None
        See :func:`core.noise.check_rng`.

    Returns
    -------
    (private, public) : (Table, Table)
    """
    check_table(table)
    if isinstance(n_public, bool) or not isinstance(n_public, (int, np.integer)):
        raise ParameterError(f"n_public must be a whole number of rows, got {n_public!r}.")
    n_public = int(n_public)
    unit = table.unit
    total, what = table.n_units, "rows" if unit is None else "persons"
    if not 1 <= n_public <= total - 2:
        raise ParameterError(
            f"n_public must be between 1 and {total - 2} for a table of {total} "
            f"{what} (the private part needs at least two), got {n_public}."
        )
    drop = table.missing == "drop"
    sources = {"private": None, "public": None}
    units = {"private": None, "public": None}
    if unit is None and table.source_rows is not None:  # the file's rows, those dropped included
        order = check_rng(rng).permutation(table.source_rows.size)
        position = np.empty(order.size, dtype=np.int64)
        position[order] = np.arange(order.size)
        pos = position[np.searchsorted(table.source_rows, table.rows)]
        ranked = np.argsort(pos, kind="stable")
        public_rows, private_rows = ranked[pos[ranked] < n_public], ranked[pos[ranked] >= n_public]
        sources = {"public": table.source_rows[order[:n_public]], "private": table.source_rows[order[n_public:]]}
    elif unit is None:
        order = check_rng(rng).permutation(table.n_rows)
        public_rows, private_rows = order[:n_public], order[n_public:]
    else:
        from core.data.units import split_units

        if drop:  # the file's persons, those whose every row was dropped included
            private_rows, public_rows, units["private"], units["public"] = split_units(
                unit, n_public, rng=rng, return_units=True)
        else:
            private_rows, public_rows = split_units(unit, n_public, rng=rng)

    def part(rows: np.ndarray, suffix: str) -> Table:
        if unit is None:
            part_unit = None
        elif units[suffix] is not None:
            part_unit = unit.restrict(rows, units[suffix])
        else:
            part_unit = unit.subset(rows)
        return Table(
            features=table.features.iloc[rows].reset_index(drop=True),
            labels=table.labels[rows].copy(),
            class_names=table.class_names,
            classes_declared=table.classes_declared,
            label_column=table.label_column,
            numeric_columns=table.numeric_columns,
            categorical_columns=table.categorical_columns,
            name=f"{table.name} ({suffix})",
            missing=table.missing,
            missing_markers=table.missing_markers,
            missing_counts=table.missing_counts,
            missing_rows=table.missing_rows,
            dropped_rows=table.dropped_rows,
            dropped_columns=table.dropped_columns,
            rows=table.rows[rows],
            unit=part_unit,
            source_rows=sources[suffix],
        )

    return part(private_rows, "private"), part(public_rows, "public")
