"""The public (unlabeled) data: :func:`check_public` against the private table's schema,
:func:`read_public` from a CSV source, and the pairing of a private and a public source
(:func:`check_pair`: the private file given as the public file is refused; :func:`copied_rows`:
public rows that copy private rows, a NON-PRIVATE diagnostic for the data's owner).
"""

from __future__ import annotations

import hashlib
import math
import os
import shlex
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from core.errors import DataError, SchemaError

from core.data.distinct import distinct, take
from core.data.missing import marked, missing_report
from core.data.reading import DEFAULT_MAX_BYTES, check_finite, check_table, number_values, read_csv, row_list, text_values
from core.data.table import Table

__all__ = [
    "check_pair",
    "copied_rows",
    "CopiedRows",
    "read_public",
    "check_public",
    "check_public_coded",
]


# --------------------------------------------------------------------------------------
# The public (query) table
# --------------------------------------------------------------------------------------


def _category_text(value: Any) -> Any:
    if value is None or value is pd.NA or (isinstance(value, (float, np.floating)) and math.isnan(value)):
        return np.nan
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    text = str(value).strip()
    return text if text else np.nan


def _shown(columns: list) -> str:
    """Column names for a message: the first 20, quoted."""
    return ", ".join(f"'{c}'" for c in columns[:20]) + (", ..." if len(columns) > 20 else "")


def check_public(table: Table, public_frame, *, return_rows: bool = False):
    """Check a public (query) table against the private table's feature schema.

    The public table must hold every feature column of ``table``.  A column named like
    the private label column is refused: public points to label carry no label, and a public
    file holding it is most often the private file given by mistake.  The private table's
    privacy unit column is dropped (the public rows' own IDs are not a feature).  Any
    other extra column is refused: an unexpected column is often a misnamed feature or an identifier
    that should not be there, so the user decides which columns go in.

    Numeric columns must hold numbers (text that reads as a number is converted);
    categorical columns accept any value, compared as text; values never seen in the
    private data encode as all zeros.  Text equal to one of the table's
    ``missing_markers`` is missing.  Missing values are refused when the private table was
    loaded with ``missing="refuse"``, their rows dropped with ``missing="drop"`` (the
    count is in the returned frame's ``attrs["dropped_rows"]``), and left to each
    teacher's fitted imputer with ``missing="impute"`` (the public rows are only
    transformed, never fitted on).

    Each rule (the missing-value markers, the text cleaning, the numbers read from text)
    runs once per distinct value of a column (:mod:`core.data.distinct`), whichever path
    calls: the app, a whole file or a stream of chunks.

    Parameters
    ----------
    table : Table
        The private table whose schema the public table must match.
    public_frame : pandas.DataFrame or 2-D array-like
        The public features.  A plain array must have exactly the table's feature columns
        in order.
    return_rows : bool, default False (keyword-only)
        Also return the kept rows' positions.

    Returns
    -------
    pandas.DataFrame
        The public features with a fresh ``RangeIndex``, in the table's column order:
        numeric columns as float64, categorical ones as object (text).  With
        ``return_rows``, also each kept row's position in ``public_frame`` (to carry
        join keys along when ``missing="drop"`` leaves rows out).

    Raises
    ------
    SchemaError
        Missing, extra or duplicate columns, the private label column, or text in a numeric
        column.
    DataError
        No rows, infinite values, or missing values the table's option refuses.
    """
    if return_rows:
        checked, _, rows = check_public_coded(table, public_frame, return_rows=True)
        return checked, rows
    return check_public_coded(table, public_frame)[0]


def check_public_coded(
    table: Table, public_frame, *, skip_empty: bool = False, return_rows: bool = False
) -> tuple:
    """:func:`check_public`, and the distinct values of the checked columns read from text.

    Parameters
    ----------
    table : Table
    public_frame : pandas.DataFrame or 2-D array-like
        As for :func:`check_public`.
    skip_empty : bool, keyword-only
        With ``missing="drop"``, a frame whose every row is dropped gives no rows (and
        ``attrs["dropped_rows"]`` = its length) instead of an error: a chunk of a stream.
    return_rows : bool, keyword-only
        Also return each kept row's position in ``public_frame`` (a third item).

    Returns
    -------
    checked : pandas.DataFrame
        As :func:`check_public` returns it.
    codes : dict of str to (numpy.ndarray, numpy.ndarray)
        For every categorical column, and every numeric column given as text:
        ``(codes, values)``, each checked row's position in ``values`` (``-1`` where
        missing), so that ``checked[column]`` is ``values[codes]`` (categorical: the
        distinct texts; numeric: the distinct numbers).  What a consumer of the rows
        would otherwise factorize again (the teachers' shared encoder, a CSV writer).
    rows : numpy.ndarray
        With ``return_rows``: each kept row's position in ``public_frame``.
    """
    check_table(table)
    if not isinstance(public_frame, pd.DataFrame):
        array = np.asarray(public_frame, dtype=object)
        if array.ndim != 2 or array.shape[1] != len(table.feature_names):
            raise SchemaError(
                f"The public data must be a table with the {len(table.feature_names)} feature "
                f"columns of '{table.name}'; got an array of shape {array.shape}. Pass a pandas "
                "DataFrame with named columns."
            )
        public_frame = pd.DataFrame(array, columns=list(table.feature_names))
    columns = [str(c) for c in public_frame.columns]
    duplicated = sorted({c for c in columns if columns.count(c) > 1})
    if duplicated:
        raise SchemaError(
            "The public table has duplicate column names: "
            + ", ".join(f"'{c}'" for c in duplicated)
            + ". Give every column a distinct name."
        )
    if table.label_column in columns:
        raise SchemaError(
            f"The public table holds the label column '{table.label_column}' of the private table "
            f"'{table.name}', but the public rows to label carry no label. Remove that column from the "
            "public file and load it again; or, if this is the private file given as the public file "
            "(likely), give the public rows to label instead."
        )
    frame = public_frame.copy()
    frame.columns = columns
    if table.unit is not None and table.unit.column in frame.columns:  # the public rows' own IDs: never a feature
        frame = frame.drop(columns=[table.unit.column])
    wanted = list(table.feature_names)
    absent = [c for c in wanted if c not in frame.columns]
    if absent:
        error = SchemaError(
            f"The public table lacks {len(absent)} feature column(s) of the private table "
            f"'{table.name}': {_shown(absent)}. Add them (same names as in the private table) and load "
            f"it again, or leave them out of the features (drop_columns={shlex.quote(','.join(map(str, absent)))})."
        )
        error.columns = tuple(absent)  # the columns to drop, for an interface that offers the fix
        raise error
    extra = [c for c in frame.columns if c not in wanted]
    if extra:
        raise SchemaError(
            f"The public table has column(s) that the private table '{table.name}' does not: "
            f"{_shown(extra)}. Delete them (the public table holds exactly the private table's feature "
            "columns) and load it again."
        )
    if frame.shape[0] == 0:
        raise DataError("The public table has no rows. Add the points to label and load it again.")
    frame = frame[wanted].reset_index(drop=True)
    markers = table.missing_markers
    out, coded = {}, {}
    for column in table.numeric_columns:
        values = frame[column]
        if pd.api.types.is_bool_dtype(values):
            raise SchemaError(
                f"Column '{column}' of the public table holds True/False values, but it is "
                "numeric in the private table. Give it numbers."
            )
        if pd.api.types.is_numeric_dtype(values) and not isinstance(values.dtype, pd.CategoricalDtype):
            out[column] = pd.to_numeric(values, errors="raise").astype(np.float64)
            continue
        codes, distinct_values = distinct(values)
        numbers, text = number_values(distinct_values), text_values(distinct_values)
        hit = marked(distinct_values, markers)
        numbers[hit], text[hit] = np.nan, np.nan
        failed = take(np.isnan(numbers) & pd.notna(text), codes, False)  # present, not blank, not a number
        if failed.any():
            rows = np.flatnonzero(failed)
            examples = ", ".join(f"'{v}'" for v in pd.unique(take(text, codes, np.nan)[failed])[:3])
            raise SchemaError(
                f"Column '{column}' of the public table holds text ({examples}; row(s) "
                f"{row_list(rows)}) but it is numeric in the private table. Use numbers "
                "in that column (leave a field empty to mark it missing)."
            )
        out[column] = pd.Series(take(numbers, codes, np.nan), dtype=np.float64)
        coded[column] = (codes, numbers)
    for column in table.categorical_columns:
        values = frame[column]
        codes, distinct_values = distinct(values)
        if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            text = np.array([_category_text(v) for v in distinct_values] + [None], dtype=object)[:-1]
        else:
            text = text_values(distinct_values)
            text[marked(distinct_values, markers)] = np.nan
        merged, texts = pd.factorize(text, use_na_sentinel=True)  # " Rome" and "Rome": one text
        codes = take(merged, codes, -1)
        texts = np.asarray(texts, dtype=object)
        out[column] = pd.Series(take(texts, codes, np.nan), dtype=object)
        coded[column] = (codes, texts)
    checked = pd.DataFrame(out, columns=wanted)
    for column in table.categorical_columns:
        checked[column] = checked[column].astype(object)
    check_finite(checked, table.numeric_columns, "The public table holds")
    has_missing = checked.isna().any(axis=1).to_numpy()
    if table.missing == "refuse" and has_missing.any():
        raise DataError(
            f"{int(has_missing.sum())} row(s) of the public table have missing values, in column(s) "
            f"{missing_report(checked)}. Fill them in or delete those rows; or load the "
            "private table with missing='drop' (drops them) or missing='impute' (imputes them "
            "inside each teacher's pipeline)."
        )
    dropped = 0
    source_rows = np.arange(len(checked))
    if table.missing == "drop" and has_missing.any():
        if has_missing.all() and not skip_empty:
            raise DataError(
                f"Every row of the public table has a missing value (in column(s) "
                f"{missing_report(checked)}), so missing='drop' leaves no rows. Fill in the "
                "values, or load the private table with missing='impute'."
            )
        dropped = int(has_missing.sum())
        checked = checked.loc[~has_missing].reset_index(drop=True)
        coded = {column: (codes[~has_missing], values) for column, (codes, values) in coded.items()}
        source_rows = source_rows[~has_missing]
    checked.attrs["dropped_rows"] = dropped
    return (checked, coded, source_rows) if return_rows else (checked, coded)


def read_public(source, table: Table, *, max_bytes: int = DEFAULT_MAX_BYTES, rename_duplicates: bool = False,
                csv_format=None, return_rows: bool = False, keys=None):
    """Read a public (query) CSV file and check it against ``table`` (:func:`check_public`).

    Parameters
    ----------
    source : str, pathlib.Path, bytes, file-like or pandas.DataFrame
        As for :func:`load_table`; held in memory only.  A frame is the file already read
        (by :func:`core.data.reading.read_csv`, every column as text): it is not read again.
    table : Table
        The private table whose feature schema the file must match.
    max_bytes : int
        Largest accepted file size, 50 MiB by default.
    rename_duplicates : bool
        As for :func:`load_table` (use the same choice for both files).  Columns the
        private table dropped as empty (``table.dropped_columns``) are dropped here too.
    csv_format : core.data.CsvFormat, optional
        The file's encoding, separator and decimal mark; None fields are detected (as for
        :func:`load_table`; the public file may be written another way than the private one).
    return_rows : bool, default False
        Also return the kept rows' positions in the file (:func:`check_public`).
    keys : sequence of str, optional
        Columns of the file to carry beside its rows as join keys (public text, never
        features): left out of the check, and returned for the rows kept.

    Returns
    -------
    pandas.DataFrame
        See :func:`check_public` (with ``return_rows``, also the kept rows' positions).
    key_frame : pandas.DataFrame or None
        With ``keys``: the key columns the file has, as written, one row per row kept
        (None when it has none of them).

    Raises
    ------
    DataError, SchemaError
        As :func:`load_table` for unreadable files, and :func:`check_public` for schema
        problems.
    """
    check_table(table)
    if isinstance(source, pd.DataFrame):
        frame = source
    else:
        frame, _ = read_csv(
            source,
            max_bytes,
            "The public file has a header row but no data rows. Add the points to label and load it again.",
            rename_duplicates=rename_duplicates,
            csv_format=csv_format,
        )
    if keys is None:
        frame = frame.drop(columns=[c for c in table.dropped_columns if c in frame.columns])
        return check_public(table, frame, return_rows=return_rows)
    keys = [c for c in frame.columns if c in set(keys)]
    aside = set(keys) | set(table.dropped_columns)
    public, kept_rows = check_public(table, frame.drop(columns=[c for c in frame.columns if c in aside]),
                                     return_rows=True)
    key_frame = frame[keys].iloc[kept_rows].reset_index(drop=True) if keys else None
    return (public, kept_rows, key_frame) if return_rows else (public, key_frame)


# --------------------------------------------------------------------------------------
# The pairing of a private and a public source
# --------------------------------------------------------------------------------------

SAME_FILE = (
    "The same file is given as the private file and as the public file{names}: its rows are the private "
    "rows, and labeling them would publish every private row's features beside a label. Give as the public "
    "file the rows to label (a separate file, without the label column)."
)
"""The refusal of :func:`check_pair` (``{names}``: the file name(s), or nothing)."""


def _path(source) -> str | None:
    """``source`` as a file's path, or None (bytes, a frame, a file-like object)."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        return path if os.path.isfile(path) else None
    return None


def _digest(source, path: str | None) -> str:
    h = hashlib.sha256()
    if path is None:
        h.update(bytes(source))
        return h.hexdigest()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _size(source, path: str | None) -> int | None:
    if path is not None:
        return os.path.getsize(path)
    if isinstance(source, (bytes, bytearray, memoryview)):
        return len(source)
    return None


def check_pair(private, public) -> None:
    """Refuse the private data given as the public data, before anything is read or spent.

    The public rows are what a release labels and publishes beside its features: the private
    file given there (by a slip of the command line, or one file uploaded in both boxes)
    would publish every private row.  Refused when both sources are the same file (the same
    path once resolved, links included) or hold identical bytes; two frames are refused when
    they are equal.  The check reads the two sources only (sizes first, then a SHA-256 of
    each where the sizes agree); it spends nothing and says nothing about the rows.

    A public file that merely holds the private label column is refused by
    :func:`check_public`; public rows that copy many private rows are the NON-PRIVATE
    diagnostic :func:`copied_rows`.

    Parameters
    ----------
    private, public : str, pathlib.Path, bytes or pandas.DataFrame
        The two sources as given (a file-like object is not compared).

    Raises
    ------
    DataError
        Both are one file, or the same bytes.
    """
    if isinstance(private, pd.DataFrame) or isinstance(public, pd.DataFrame):
        if isinstance(private, pd.DataFrame) and isinstance(public, pd.DataFrame) and private.equals(public):
            raise DataError(SAME_FILE.format(names=""))
        return
    p_path, q_path = _path(private), _path(public)
    names = ""
    if p_path is not None and q_path is not None:
        names = (f" ('{p_path}')" if p_path == q_path else f" ('{p_path}' and '{q_path}')")
        if os.path.samefile(p_path, q_path):
            raise DataError(SAME_FILE.format(names=names))
        names = f" ('{p_path}' and '{q_path}' hold the same bytes)"
    sizes = _size(private, p_path), _size(public, q_path)
    if None in sizes or sizes[0] != sizes[1]:
        return
    if _digest(private, p_path) == _digest(public, q_path):
        raise DataError(SAME_FILE.format(names=names))


COPIED_SHARE = 0.5
"""Public rows copying private rows' features, as a share of the public rows, from which
:func:`copied_rows` warns."""

COPIED_ROWS = 1_000
"""Public rows copying private rows' features, as a count, from which :func:`copied_rows` warns."""


@dataclass(frozen=True)
class CopiedRows:
    """Public rows whose features are an exact copy of a private row's: a NON-PRIVATE diagnostic.

    Attributes
    ----------
    n_copied : int
        Public rows whose every feature equals some private row's.
    n_public : int
        Public rows compared.
    first : bool
        The rows compared are the file's first rows only (a file labeled in chunks).
    """

    n_copied: int
    n_public: int
    first: bool = False

    @property
    def message(self) -> str:
        """The warning, marked as a NON-PRIVATE diagnostic for the data's owner."""
        return (
            f"{self.n_copied:,} of the {'first ' if self.first else ''}{self.n_public:,} public rows "
            f"({self.n_copied / self.n_public:.0%}) are exact "
            "copies of private rows' features. The rows a release labels are published with their labels: "
            "they must be data you give as public, not private rows. Check that the public file holds the "
            "rows to label. (NON-PRIVATE diagnostic counted on the private rows: for the data's owner only, "
            "never exported.)"
        )


def _row_hashes(frame: pd.DataFrame, columns: list) -> np.ndarray:
    """One 64-bit hash per row of ``frame[columns]`` (numbers as float64, categories as text)."""
    parts = {}
    for c in columns:
        values = frame[c]
        if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            parts[c] = pd.to_numeric(values).astype(np.float64).reset_index(drop=True)
        else:
            parts[c] = values.astype(object).where(values.notna(), None).map(
                lambda v: None if v is None else str(v)).reset_index(drop=True)
    return pd.util.hash_pandas_object(pd.DataFrame(parts, columns=columns), index=False).to_numpy()


def copied_rows(table: Table, public: pd.DataFrame, *, share: float = COPIED_SHARE,
                rows: int = COPIED_ROWS, first: bool = False) -> CopiedRows | None:
    """Public rows that are exact copies of private rows' features, when there are many.

    A NON-PRIVATE diagnostic: the count reads the private rows without noise, so it is shown
    to the data's owner only and never exported or reported.  Rows compare on the features
    of ``table`` as :func:`check_public` returns them (numbers as float64, categories as
    text; two missing values are equal).

    Parameters
    ----------
    table : Table
        The private table.
    public : pandas.DataFrame
        The checked public rows (:func:`check_public`).
    share, rows : keyword-only
        Warn from this share of the public rows, or this many rows, copied.
    first : bool, keyword-only
        ``public`` is the file's first rows only (a file labeled in chunks): said so.

    Returns
    -------
    CopiedRows or None
        The count, when at least ``share`` of the public rows or ``rows`` rows copy a
        private row; None otherwise (or with no public row).
    """
    columns = [c for c in table.feature_names if c in public.columns]
    if len(public) == 0 or not columns:
        return None
    private_hashes = _row_hashes(table.features, columns)
    n_copied = int(np.isin(_row_hashes(public, columns), private_hashes).sum())
    if n_copied >= share * len(public) or n_copied >= rows:
        return CopiedRows(n_copied, int(len(public)), first)
    return None
