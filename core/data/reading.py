"""Reading a labeled CSV table: the source (path, bytes, file object; size limit, gzip),
the decoding, the CSV parsing, the label column and the numeric columns, and
:func:`load_table`.

:func:`load_table` is longer than the rest (about 170 lines) because it is the one place
that orders the checks of a private table and words their errors.
"""

from __future__ import annotations

import csv
import io
import os
import re
import warnings
from dataclasses import field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from core.errors import DataError, ParameterError

from core.data.classes import check_classes, class_list, declared_labels
from core.data.distinct import distinct, take
from core.data.formats import SAVE_AS_CSV, SEPARATORS, CsvFormat, check_csv_format, decimal_points, decode, \
    dot_thousands, \
    detect_decimal, detect_separator, named, separator_hint
from core.data.missing import check_markers, check_missing_option, mark_missing, missing_report, row_list
from core.data.table import LABEL_NAMES, MAX_CLASSES, Table

__all__ = [
    "unique_column_names",
    "load_table",
    "DEFAULT_MAX_BYTES",
    "check_finite",
    "check_table",
    "clean_text",
    "read_csv",
    "row_list",
    "to_numbers",
    "number_values",
    "text_values",
]

#: Default size limit of a CSV file: 50 MiB.
DEFAULT_MAX_BYTES = 50 * 2**20



# --------------------------------------------------------------------------------------
# Reading bytes and text
# --------------------------------------------------------------------------------------


def _megabytes(n: int) -> str:
    if n >= 2**20:
        return f"{n / 2**20:.1f} MiB ({n:,} bytes)"
    if n >= 1024:
        return f"{n / 1024:.1f} KiB ({n:,} bytes)"
    return f"{n:,} bytes"


def _check_max_bytes(max_bytes) -> int:
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, (int, np.integer)) or max_bytes < 1:
        raise ParameterError(f"max_bytes must be a positive whole number of bytes, got {max_bytes!r}.")
    return int(max_bytes)


def _too_big(size: int, max_bytes: int) -> DataError:
    return DataError(
        f"The file is {_megabytes(size)}, over the size limit of "
        f"{_megabytes(max_bytes)}; load a sample of its rows, or raise max_bytes if your "
        "machine has the memory."
    )


def _stem(name: str) -> str:
    """A file name without its folder, ``.gz`` and extension: ``adult.csv.gz`` -> ``adult``."""
    base = Path(name).name
    if base.lower().endswith(".gz"):
        base = base[:-3]
    return Path(base).stem


def _gunzip(data: bytes | str, max_bytes: int) -> bytes | str:
    """Decompress gzip content in memory (at most ``max_bytes`` out); other content as is."""
    if not (isinstance(data, bytes) and data.startswith(b"\x1f\x8b")):
        return data
    import gzip
    import zlib

    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb") as handle:
            out = handle.read(max_bytes + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise DataError(
            f"The file is gzip-compressed but cannot be decompressed ({exc}): it is damaged or "
            "cut short. Compress the CSV file again (gzip file.csv) or load it uncompressed."
        ) from None
    if len(out) > max_bytes:
        raise DataError(
            f"The file decompresses to more than the size limit of {_megabytes(max_bytes)}; "
            "load a sample of its rows, or raise max_bytes if your machine has the memory."
        )
    return out


def _read_source(source, max_bytes: int) -> tuple[bytes | str, str | None]:
    """Return the raw content (bytes, or str from a text-mode file) and a default name."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source).expanduser()
        if not path.exists():
            raise DataError(
                f"No file at '{path}'. Check the path; to load CSV content that is already "
                "in memory, pass it as bytes (text.encode()) or as a file-like object."
            )
        if not path.is_file():
            raise DataError(f"'{path}' is not a file (it is a folder or a device); give the path of a CSV file.")
        try:
            size = path.stat().st_size
            if size > max_bytes:
                raise _too_big(size, max_bytes)
            with path.open("rb") as handle:
                data = handle.read(max_bytes + 1)
        except OSError as exc:
            raise DataError(f"Cannot read '{path}': {exc.strerror or exc}. Check the file's permissions.") from None
        return data, _stem(path.name)
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), None
    name = getattr(source, "name", None)
    stem = _stem(str(name)) if isinstance(name, (str, os.PathLike)) and str(name) else None
    size = getattr(source, "size", None)
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool) and size > max_bytes:
        raise _too_big(int(size), max_bytes)
    try:
        if hasattr(source, "getvalue"):
            data = source.getvalue()
        elif hasattr(source, "read"):
            data = source.read(max_bytes + 1)
        else:
            raise ParameterError(
                "source must be a path (str or pathlib.Path), bytes, or a file-like object with "
                f".read() (such as an uploaded file), got {type(source).__name__}."
            )
    except OSError as exc:
        raise DataError(f"Cannot read the uploaded file: {exc}. Upload it again.") from None
    if isinstance(data, memoryview | bytearray):
        data = bytes(data)
    if not isinstance(data, (bytes, str)):
        raise ParameterError(
            f"Reading the file-like source gave {type(data).__name__}, not bytes or text; "
            "pass a binary or text file object."
        )
    return data, stem


def _decode(data: bytes | str, max_bytes: int, encoding: str | None = None, where: str | None = None) -> tuple[str, str]:
    """Check the size, then :func:`core.data.formats.decode`: the text and the encoding read."""
    size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise _too_big(size, max_bytes)
    return decode(data, encoding, where=where)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _raw_header(text: str, sep: str = ",") -> list[str]:
    """The first non-blank record of the CSV, each field stripped."""
    try:
        for row in csv.reader(io.StringIO(text), delimiter=sep, skipinitialspace=True, strict=False):
            if row and any(field.strip() for field in row):
                return [field.strip() for field in row]
    except csv.Error as exc:
        raise DataError(f"The header row cannot be read as CSV ({exc}). {SAVE_AS_CSV}") from None
    raise DataError("The file is empty. Choose a CSV file with a header row and at least one data row.")


def unique_column_names(header: Sequence[str]) -> list[str]:
    """The header with repeated names made distinct: the second ``a`` becomes ``a.2``, the
    third ``a.3`` (skipping any name already in the header).

    Parameters
    ----------
    header : sequence of str

    Returns
    -------
    list of str
    """
    taken = set(header)
    seen: dict[str, int] = {}
    out = []
    for name in header:
        seen[name] = seen.get(name, 0) + 1
        if seen[name] == 1:
            out.append(name)
            continue
        i = seen[name]
        while f"{name}.{i}" in taken:
            i += 1
        new = f"{name}.{i}"
        taken.add(new)
        out.append(new)
    return out


def _parse_csv(text: str, rename_duplicates: bool = False, sep: str = ",") -> pd.DataFrame:
    """Parse CSV text into a frame of text columns (missing -> NaN), checking the header."""
    header = _raw_header(text, sep)
    fields = f"{SEPARATORS[sep]}-separated fields"
    empty = [i + 1 for i, name in enumerate(header) if not name]
    if empty:
        raise DataError(
            f"Column {empty[0]} of the header has no name (an empty header field, often a saved "
            "row index or a trailing comma). Give every column a name, or delete the unnamed "
            "column, and load the file again."
        )
    seen: dict[str, int] = {}
    duplicates = []
    for name in header:
        seen[name] = seen.get(name, 0) + 1
        if seen[name] == 2:
            duplicates.append(name)
    if duplicates and not rename_duplicates:
        raise DataError(
            "Duplicate column names in the header: "
            + ", ".join(f"'{d}' ({seen[d]} times)" for d in duplicates)
            + ". Give every column a distinct name and load the file again, or let the repeats be "
            "renamed (a, a.2, a.3; rename_duplicates=True: the app's 'Rename duplicate columns', "
            "the command line's --rename-duplicates)."
        )
    if len(header) > 1 and all(_is_number(name) for name in header):
        raise DataError(
            "The first row holds only numbers, so the file seems to have no header row. "
            "Add a first line with the column names (e.g. x1,x2,...,label) and load it again."
        )
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            frame = pd.read_csv(
                io.StringIO(text),
                sep=sep,
                header=0,
                dtype=str,
                index_col=False,
                skipinitialspace=True,
                skip_blank_lines=True,
                low_memory=False,
                on_bad_lines="error",
            )
    except pd.errors.EmptyDataError:
        raise DataError("The file is empty. Choose a CSV file with a header row and at least one data row.") from None
    except (pd.errors.ParserError, ValueError, csv.Error, OverflowError) as exc:
        detail = str(exc).replace("Error tokenizing data. C error: ", "").strip()
        raise DataError(
            f"The file cannot be read as CSV: {detail}. Every row must have as many "
            f"{fields} as the header; quote fields that contain the separator.{separator_hint(text, sep)}"
        ) from None
    for warning in caught:
        if issubclass(warning.category, pd.errors.ParserWarning):
            raise DataError(
                f"Some rows have more {fields} than the header has column names. "
                "Add the missing names to the header (or delete the extra fields; quote fields "
                f"that contain the separator) and load the file again.{separator_hint(text, sep)}"
            )
    if frame.shape[1] != len(header):
        raise DataError(
            f"The header has {len(header)} names but the rows were read as {frame.shape[1]} "
            "columns. Check the file's quoting and load it again."
        )
    frame.columns = unique_column_names(header) if rename_duplicates else header
    frame = frame.reset_index(drop=True)
    frame.attrs["header"] = list(header)  # the names as written, repeats included
    return frame


def text_values(values: np.ndarray) -> np.ndarray:
    """The text rule on present cell values (a column's distinct values, an object array):
    ``str(value)`` stripped of surrounding spaces, NaN where that leaves nothing; an object
    array of the same length."""
    out = np.array([str(v).strip() for v in values] + [""], dtype=object)[:len(values)]
    out[out == ""] = np.nan
    return out


def number_values(values: np.ndarray) -> np.ndarray:
    """The number rule on present cell values (as :func:`text_values`): the float each
    reads as (``pd.to_numeric``), NaN where none; a float64 array of the same length."""
    try:
        numbers = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce")
    except (TypeError, ValueError):  # objects that are not even text (lists, dicts...)
        numbers = pd.to_numeric(pd.Series(text_values(values), dtype=object), errors="coerce")
    return numbers.to_numpy(dtype=np.float64, copy=True)


def clean_text(column: pd.Series) -> pd.Series:
    """Text values stripped of surrounding spaces, as object dtype; empty -> NaN.

    The rule (:func:`text_values`) runs once per distinct value of the column.

    Parameters
    ----------
    column : pandas.Series

    Returns
    -------
    pandas.Series of object
        Same index as ``column``.
    """
    codes, values = distinct(column)
    return pd.Series(take(text_values(values), codes, np.nan), index=column.index, dtype=object)


def to_numbers(column: pd.Series) -> tuple[pd.Series, np.ndarray, pd.Series]:
    """Read a column as numbers.

    Returns the float64 numbers (NaN where missing or not a number), a mask of the values
    that are present but not numbers (blank text counts as missing, not as a failure), and
    those values' text.  The rules (:func:`number_values`, :func:`text_values`) run once per
    distinct value of the column.

    Parameters
    ----------
    column : pandas.Series

    Returns
    -------
    numbers : pandas.Series of float64
    failed : numpy.ndarray of bool, shape (len(column),)
    text : pandas.Series
        The failed values' text.
    """
    if pd.api.types.is_numeric_dtype(column) and not isinstance(column.dtype, pd.CategoricalDtype):
        return column.astype(np.float64), np.zeros(len(column), dtype=bool), column.iloc[:0].astype(object)
    codes, values = distinct(column)
    numbers, text = number_values(values), text_values(values)
    failed = np.isnan(numbers) & pd.notna(text)  # present, not blank, not a number
    rows = take(failed, codes, False)
    return (pd.Series(take(numbers, codes, np.nan), index=column.index, dtype=np.float64), rows,
            pd.Series(take(text, codes, np.nan)[rows], index=column.index[rows], dtype=object))


def _choose_label_column(columns: list[str], label_column) -> str:
    if label_column is not None:
        if not isinstance(label_column, str):
            raise ParameterError(
                f"label_column must be a column name (text), got {type(label_column).__name__}."
            )
        wanted = label_column.strip()
        if wanted in columns:
            return wanted
        near = [c for c in columns if c.casefold() == wanted.casefold()]
        hint = f" Did you mean '{near[0]}'?" if near else ""
        shown = ", ".join(f"'{c}'" for c in columns[:30]) + (", ..." if len(columns) > 30 else "")
        raise DataError(
            f"The label column '{label_column}' is not in the file.{hint} The columns are: "
            f"{shown}. Pass one of them as label_column."
        )
    for wanted in LABEL_NAMES:
        for column in columns:
            if column.casefold() == wanted:
                return column
    if len(columns) == 1:  # refused just after as having no feature column (with its own hints)
        return columns[0]
    # No conventional name: never guess (the last column may be a private attribute that would
    # then be released as the label, or the label would become a feature).
    shown = ", ".join(f"'{c}'" for c in columns[:30]) + (", ..." if len(columns) > 30 else "")
    raise DataError(
        f"No column is named {', '.join(repr(n) for n in LABEL_NAMES)}: say which column holds the label "
        f"(label_column=...). The columns are: {shown}."
    )


def _numeric_or_text(column: pd.Series, name: str) -> tuple[pd.Series, bool]:
    """Convert a text column to float64 if every present value is a number."""
    numbers, failed, text = to_numbers(column)
    if not failed.any():
        return numbers, True
    n_present = int(column.notna().sum())
    n_failed = int(failed.sum())
    if n_failed <= 0.1 * n_present:
        examples = ", ".join(f"'{v}'" for v in pd.unique(text)[:3])
        raise DataError(
            f"Column '{name}' holds numbers except for {n_failed} value(s) that are not numbers "
            f"({examples}; data row(s) {row_list(np.flatnonzero(failed))}). If these mark "
            "missing values, leave those fields empty or name the marker with missing_markers "
            f"(e.g. missing_markers=({pd.unique(text)[0]!r},)); otherwise correct them (numbers "
            "use one decimal mark, no thousands separator: give decimal=',' for decimal commas), then load the "
            "file again."
        )
    return clean_text(column), False


def check_finite(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    """Refuse infinite values in the numeric ``columns`` of ``frame``.

    Parameters
    ----------
    frame : pandas.DataFrame
    columns : sequence of str
        Numeric columns to check.
    what : str
        Start of the error message (names the file).

    Raises
    ------
    DataError
        If a column has ``inf`` or ``-inf``.
    """
    bad = []
    for name in columns:
        values = frame[name].to_numpy(dtype=float)
        inf = np.isinf(values)
        if inf.any():
            bad.append((name, int(inf.sum()), np.flatnonzero(inf)))
    if bad:
        detail = "; ".join(f"'{n}' ({c} row(s), data row(s) {row_list(r)})" for n, c, r in bad)
        raise DataError(
            f"{what} infinite values (inf or -inf, or numbers too large for floating point) in "
            f"column(s) {detail}. Replace them with finite numbers, or leave the fields empty "
            "to mark them missing, and load the file again."
        )


# --------------------------------------------------------------------------------------
# The private table
# --------------------------------------------------------------------------------------


def read_csv(source, max_bytes, no_rows: str, *, rename_duplicates: bool = False,
             csv_format: CsvFormat | None = None) -> tuple[pd.DataFrame, str | None]:
    """Read ``source`` into a frame of text columns, with the source's default name.

    Checks ``max_bytes``, the size, the encoding and the header; ``no_rows`` is the
    message for a file with a header row but no data rows; ``rename_duplicates`` makes
    repeated header names distinct (:func:`unique_column_names`) instead of refusing them.

    Parameters
    ----------
    source : str, os.PathLike, bytes or file-like
        The CSV (optionally gzip-compressed).
    max_bytes : int
        Largest accepted size in bytes.
    no_rows : str
        Error message for a header without data rows.
    rename_duplicates : bool, default False
        Rename repeated header names instead of refusing them.
    csv_format : CsvFormat, optional
        The file's encoding, separator and decimal mark; a field left None (default: all)
        is detected (:mod:`core.data.formats`).  Numbers written with a decimal comma are
        rewritten with a point.

    Returns
    -------
    frame : pandas.DataFrame
        The rows, every column as text; ``frame.attrs["csv_format"]`` is the format read
        (every field set).
    name : str or None
        The source's default name (e.g. the file name), if it has one.

    Raises
    ------
    DataError
        Every message names the file when the source has a name (a path, an uploaded file).
    """
    max_bytes = _check_max_bytes(max_bytes)
    given = check_csv_format(csv_format)
    where = _display_name(source)
    try:
        raw, default_name = _read_source(source, max_bytes)
        text, encoding = _decode(_gunzip(raw, max_bytes), max_bytes, given.encoding, where)
        sep = given.sep or detect_separator(text)
        frame = _parse_csv(text, bool(rename_duplicates), sep)
        if frame.shape[0] == 0:
            raise DataError(no_rows)
        decimal = given.decimal or detect_decimal(frame, sep)
    except DataError as exc:
        raise DataError(named(str(exc), where)) from None
    header = frame.attrs.get("header")
    frame = decimal_points(frame, decimal)
    frame.attrs.update(header=header, csv_format=CsvFormat(sep=sep, decimal=decimal, encoding=encoding))
    return frame, default_name


def _display_name(source) -> str | None:
    """How messages name ``source``: a path as given, an uploaded file by its name, bytes not at all."""
    if isinstance(source, (str, os.PathLike)):
        return str(source)
    name = getattr(source, "name", None)
    return Path(str(name)).name if isinstance(name, (str, os.PathLike)) and str(name) else None


def check_table(table) -> None:
    """Refuse anything but a :class:`core.data.Table`.

    Parameters
    ----------
    table : Table

    Raises
    ------
    ParameterError
        If ``table`` is not a Table.
    """
    if not isinstance(table, Table):
        raise ParameterError(f"table must be a core.data.Table, got {type(table).__name__}.")


def load_table(
    source,
    *,
    label_column: str | None = None,
    missing: str = "refuse",
    missing_markers: Iterable[str] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    name: str | None = None,
    rename_duplicates: bool = False,
    drop_empty_columns: bool = False,
    privacy_unit: str | None = None,
    csv_format: CsvFormat | None = None,
    classes: Sequence[str] | None = None,
) -> Table:
    """Load a labeled CSV file (plain or gzip-compressed) into a :class:`Table`, in memory.

    Parameters
    ----------
    source : str, pathlib.Path, bytes or file-like
        A path to a CSV file, the file's bytes, or an object with ``.read()`` or
        ``.getvalue()`` (such as Streamlit's ``UploadedFile`` or ``io.BytesIO``).  The
        content is held in memory only; nothing is written to disk.
    label_column : str, optional
        Name of the label column.  Default: the first column named (ignoring case)
        ``label``, ``target``, ``y`` or ``class``; without such a column the file is
        refused (:class:`DataError` listing the columns): the label is never guessed.
    missing : {"refuse", "impute", "drop"}
        ``"refuse"`` (default) raises :class:`DataError` on any missing feature value;
        ``"drop"`` drops every row with a missing feature value or label (the count is
        ``Table.dropped_rows``); ``"impute"`` keeps them, and :meth:`Table.preprocessor`
        imputes them (median for numbers, most frequent value for categories) inside each
        teacher's pipeline, fitted on that teacher's chunk only: nothing is imputed here,
        since an imputer fitted on all private rows is a release of their statistics.
        Rows without a label are refused unless dropping.
    missing_markers : sequence of str, optional
        Text that marks a missing cell in this file, compared after stripping spaces,
        e.g. ``("?",)`` for UCI Adult.  Empty fields and pandas' markers (``NA``,
        ``N/A``, ``NaN``, ``null``...) are always missing.  Without it, a ``?`` is an
        ordinary value: a category in a text column (and refused in a number column).
    max_bytes : int
        Largest accepted file size, 50 MiB by default (compressed and decompressed).
    name : str, optional
        Display name; default the file name without extension, or ``"uploaded table"``.
    rename_duplicates : bool
        Make repeated header names distinct (``a``, ``a.2``, ...) instead of refusing the file.
    drop_empty_columns : bool
        Drop feature columns that are empty in every row (listed in
        ``Table.dropped_columns``) instead of refusing the file.
    privacy_unit : str, optional
        The column that names the person each row belongs to (an ID): every guarantee
        then holds per person (``Table.unit``, docs/design.md §1.2).  The column is taken
        out of the features (it is never a feature) and kept, in memory only, as the
        unit's IDs; every row must have one (rows dropped for a missing value go first).
        None (default): each row is a unit.
    csv_format : CsvFormat, optional
        The file's encoding, separator (comma, semicolon, tab) and decimal mark; a field
        left None (default: all) is detected from the file (:mod:`core.data.formats`).
    classes : sequence of str, optional
        The declared, public class list (``Table.class_names`` in this order; a class with no
        row is kept).  A row whose label is not declared is a row without a label: dropped
        under ``missing="drop"``, refused otherwise.  None (default): the rows' distinct
        labels, a list then treated as public (``Table.classes_declared`` False;
        docs/design.md §1.3).

    Returns
    -------
    Table

    Raises
    ------
    DataError
        On an empty, binary, non-UTF-8, malformed or too large file, duplicate or unnamed
        columns, an absent label column, missing labels, fewer than two or more than
        ``MAX_CLASSES`` classes, no feature column, an all-empty column, infinite values,
        or (with ``missing="refuse"``) missing feature values.  The message names the
        problem and what to do.
    ParameterError
        On an invalid option (``missing``, ``missing_markers``, ``max_bytes``,
        ``label_column``'s type).
    """
    missing = check_missing_option(missing)
    markers = check_markers(missing_markers)
    classes = check_classes(classes)
    frame, default_name = read_csv(
        source,
        max_bytes,
        "The file has a header row but no data rows. Add at least one row per class and load it again.",
        rename_duplicates=rename_duplicates,
        csv_format=csv_format,
    )
    decimal = getattr(frame.attrs.get("csv_format"), "decimal", None) or "."
    frame = mark_missing(frame, markers)
    columns = list(frame.columns)
    label = _choose_label_column(columns, label_column)
    unit_column = _choose_unit_column(columns, privacy_unit, label)
    feature_columns = [c for c in columns if c not in (label, unit_column)]
    if not feature_columns:
        hint = ""
        if any(sep in label for sep in (";", "\t", "|")):
            hint = (
                " The header looks separated by semicolons, tabs or bars, but its rows do not split the same "
                "way: give the separator (sep=';' or sep=tab), or save the file as comma-separated CSV."
            )
        raise DataError(
            f"The file has no feature columns: its only column is the label column '{label}'."
            f"{hint} A usable table needs at least one feature column besides the label."
        )

    # Labels.
    labels_text = clean_text(frame[label])
    no_label = labels_text.isna().to_numpy()
    if no_label.all():
        raise DataError(
            f"The label column '{label}' is empty in every row. Fill in the labels, or choose "
            "the column that holds them with label_column."
        )
    if classes is not None:  # an undeclared label: a row without a label
        labels_text = declared_labels(labels_text, classes, label=label, missing=missing)
        no_label = labels_text.isna().to_numpy()
    if no_label.any() and missing != "drop":
        rows = np.flatnonzero(no_label)
        raise DataError(
            f"{len(rows)} row(s) have no label in column '{label}' (data row(s) "
            f"{row_list(rows)}). Labels are never imputed: fill them in or delete those rows "
            "(or load with missing='drop'), and load the file again."
        )

    # Features (read from every row, so the kinds and the counts describe the whole file).
    features = frame[feature_columns]
    empty = [c for c in feature_columns if features[c].isna().all()]
    if empty and not drop_empty_columns:
        shown = ", ".join(f"'{c}'" for c in empty)
        raise DataError(
            f"Column(s) {shown} are empty in every row (all values missing). Delete them and "
            "load the file again, or let them be dropped (drop_empty_columns=True: the app's "
            "'Drop empty columns', the command line's --drop-empty-columns)."
        )
    if empty:
        feature_columns = [c for c in feature_columns if c not in empty]
        if not feature_columns:
            raise DataError("Every feature column is empty: the file has no data to learn from.")
        features = frame[feature_columns]
    converted = {}
    numeric, categorical = [], []
    for column in feature_columns:
        values, is_numeric = _numeric_or_text(features[column], column)
        converted[column] = values
        (numeric if is_numeric else categorical).append(column)
    features = pd.DataFrame(converted, columns=feature_columns)
    for column in categorical:  # keep text columns as object dtype (text, NaN missing)
        features[column] = features[column].astype(object)
    check_finite(features, numeric, "The file holds")
    cell_missing = features.isna()
    counts = {c: int(n) for c, n in cell_missing.sum().items()}
    counts[label] = int(no_label.sum())
    row_missing = cell_missing.any(axis=1).to_numpy() | no_label
    missing_rows = int(row_missing.sum())
    if missing == "refuse" and cell_missing.any().any():
        n_rows = int(cell_missing.any(axis=1).sum())
        raise DataError(
            f"{n_rows} row(s) have missing feature values, in column(s) "
            f"{missing_report(features)}. Fill them in, delete those rows, or load with "
            "missing='drop' to drop them or missing='impute' to impute them inside each "
            "teacher's learning pipeline."
        )
    dropped = 0
    source_rows = np.arange(1, len(row_missing) + 1)
    file_unit = None
    file_rows = source_rows if missing == "drop" else None  # the file's rows, before the drop
    unit_values = None if unit_column is None else frame[unit_column]
    if missing == "drop" and missing_rows:
        if missing_rows == len(row_missing):
            raise DataError(
                f"Every row has a missing value (in column(s) {missing_report(features)}"
                + (f", and '{label}' ({counts[label]})" if counts[label] else "")
                + "), so missing='drop' leaves no rows. Fill in the values, or load with "
                "missing='impute'."
            )
        keep = ~row_missing
        if unit_column is not None:  # the file's persons: those named by any row, dropped rows included
            named = ~clean_text(frame[unit_column]).isna().to_numpy()
            file_unit = _unit(frame[unit_column][keep | named].reset_index(drop=True), unit_column, decimal)
            unit_values = None
        features = features.loc[keep].reset_index(drop=True)
        labels_text = labels_text[keep].reset_index(drop=True)
        dropped = missing_rows
        source_rows = source_rows[keep]
        if unit_column is not None:  # the kept rows' persons, in the unit of every person of the file
            file_unit = file_unit.restrict(np.flatnonzero(keep[keep | named]))

    # Classes: the declared list, or the rows' (then treated as public, docs/design.md §1.3).
    class_names = class_list(labels_text, label, classes)
    class_id = {c: i for i, c in enumerate(class_names)}
    labels = labels_text.map(class_id).to_numpy(dtype=np.int64)
    if name is None:
        name = default_name or "uploaded table"
    return Table(
        features=features,
        labels=labels,
        class_names=tuple(class_names),
        classes_declared=classes is not None,
        label_column=label,
        numeric_columns=tuple(numeric),
        categorical_columns=tuple(categorical),
        name=str(name),
        missing=missing,
        missing_markers=markers,
        missing_counts=counts,
        missing_rows=missing_rows,
        dropped_rows=dropped,
        dropped_columns=tuple(empty),
        rows=source_rows,
        unit=None if unit_column is None else file_unit if file_unit is not None else _unit(unit_values, unit_column, decimal),
        source_rows=file_rows if missing == "drop" and unit_column is None else None,
    )


def _choose_unit_column(columns: list[str], privacy_unit, label: str) -> str | None:
    """The declared privacy unit column, checked against the file's columns."""
    if privacy_unit is None:
        return None
    if not isinstance(privacy_unit, str):
        raise ParameterError(f"privacy_unit must be a column name, got {type(privacy_unit).__name__}.")
    if privacy_unit == label:
        raise DataError(f"The privacy unit column '{privacy_unit}' is the label column; name the column of IDs.")
    if privacy_unit not in columns:
        shown = ", ".join(f"'{c}'" for c in columns[:30])
        raise DataError(f"The privacy unit column '{privacy_unit}' is not in the file. The columns are: {shown}.")
    return privacy_unit


def _unit(values: pd.Series, column: str, decimal: str = "."):
    """The privacy unit of the rows from the unit column's values.

    In a file that writes decimals with a comma, a dot groups thousands: ``12.345`` is the
    number 12345 there (a spreadsheet saves a formatted ID so), and it is read so, since the
    canonical ID (:mod:`core.data.ids`) would otherwise read it as 12.345, and the same
    person's ID saved elsewhere as ``12345`` or ``12,345`` would be another person.
    """
    from core.data.units import privacy_unit

    text = clean_text(values)
    if decimal == ",":
        text = dot_thousands(text)
    if text.isna().any():
        rows = np.flatnonzero(text.isna().to_numpy())
        raise DataError(
            f"{len(rows)} row(s) have no ID in the privacy unit column '{column}' (data row(s) {row_list(rows)}). "
            "Every row must name its person: fill the IDs in, or delete those rows."
        )
    return privacy_unit(text.to_numpy(dtype=object), column)
