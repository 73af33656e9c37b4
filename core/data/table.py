"""Loading and checking labeled tables: the private data and the public (query) data.

A :class:`Table` holds the feature columns of a CSV file, the labels as class ids
``0..C-1`` and the class names.  :func:`load_table` reads a CSV from a path, bytes or an
uploaded file, entirely in memory (nothing is written to disk), and refuses bad input with
a :class:`core.errors.DataError` whose message says what is wrong and what to do.
:func:`check_public` and :func:`read_public` check a public table against the private
table's feature schema (:class:`core.errors.SchemaError` on a mismatch).

Reading rules
-------------
- The file must be UTF-8 text, comma separated, with a header row.  A UTF-8 byte-order
  mark, Windows line endings and quoted fields containing commas or line breaks are fine.
  Other encodings are refused, never guessed.
- The label column is ``label_column`` when given, else the first column named (ignoring
  case) ``label``, ``target``, ``y`` or ``class``, else the last column.
- Labels are read as text, stripped of surrounding spaces, and mapped to class ids in the
  sorted order of their text (numerically sorted when every label is a number).
- A feature column whose every non-empty field is a number is numeric (float64); any other
  column is categorical (text).  Categorical columns are one-hot encoded inside the
  scikit-learn pipeline of :meth:`Table.preprocessor`, never by hand.
- gzip-compressed content (a ``.csv.gz`` file) is decompressed in memory; the size limit
  applies to the compressed and to the decompressed bytes.
- Empty fields and the usual markers (``NA``, ``N/A``, ``NaN``, ``null``...) are missing;
  ``missing_markers`` adds the text a file uses for a missing cell (e.g. ``("?",)`` for
  UCI Adult), so such a value is never read as a category or a number.
- Missing feature values are refused (``missing="refuse"``, the default), their rows are
  dropped (``missing="drop"``, which also drops rows without a label), or they are left
  for the pipeline to impute (``missing="impute"``).  Rows without a label are refused
  unless dropping.  The :class:`Table` records how many cells were missing per column
  (``missing_counts``), how many rows had one (``missing_rows``) and how many were
  dropped (``dropped_rows``).

Imputation and privacy
----------------------
An imputer fitted on all private rows is a release of their statistics (a median, a most
frequent category), outside the teachers' disjoint chunks.  So nothing is imputed at load
time: :meth:`Table.preprocessor` puts the imputers inside the scikit-learn pipeline that
:func:`core.teachers.train_teachers` clones for every teacher, and each teacher's imputer
is fitted on that teacher's chunk only: private rows of one chunk, never all private rows
at once, never public rows (the public rows are only transformed by each fitted teacher).
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from core.errors import DataError, ParameterError, SchemaError
from core.noise import RNGLike, check_rng
from core.validation import check_k

__all__ = [
    "Table",
    "load_table",
    "read_public",
    "check_public",
    "check_class_sizes",
    "largest_k",
    "split_public",
    "table_from_arrays",
    "LABEL_NAMES",
    "MAX_CLASSES",
    "DEFAULT_MAX_BYTES",
]

#: Column names (compared ignoring case) taken as the label column by default, in order.
LABEL_NAMES: tuple[str, ...] = ("label", "target", "y", "class")
#: More distinct labels than this is refused: a regression target or an identifier.
MAX_CLASSES = 100
#: Default size limit of a CSV file: 50 MiB.
DEFAULT_MAX_BYTES = 50 * 2**20

_MISSING_OPTIONS = ("refuse", "impute", "drop")

# Leading bytes of common binary formats that users upload by mistake.
_MAGIC = (
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF", "a PDF document"),
    (b"PK\x03\x04", "a zip archive (an Excel .xlsx workbook is one)"),
    (b"PK\x05\x06", "an empty zip archive"),
    (b"BZh", "a bzip2-compressed file"),
    (b"\xfd7zXZ\x00", "an xz-compressed file"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-zip archive"),
    (b"\xd0\xcf\x11\xe0", "an old Excel .xls workbook"),
    (b"PAR1", "a Parquet file"),
    (b"\x93NUMPY", "a NumPy .npy file"),
    (b"\x80\x04", "a Python pickle"),
    (b"\x80\x05", "a Python pickle"),
    (b"SQLite format 3", "an SQLite database"),
)

_CONTROL = re.compile("[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f]")
_SAVE_AS_CSV = "Export it as a comma-separated CSV file (UTF-8) and load that instead."


# --------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Table:
    """A labeled table: feature columns, class-id labels and the class names.

    Attributes
    ----------
    features : pandas.DataFrame
        The feature columns only, in file order, with a default ``RangeIndex``: numeric
        columns as float64, categorical columns as object (text, NaN where missing).
    labels : numpy.ndarray of int64, shape (n_rows,)
        Class ids ``0..C-1``.
    class_names : tuple of str
        ``class_names[c]`` is the original label text of class id ``c``.
    label_column : str
        Name of the label column in the source file.
    numeric_columns, categorical_columns : tuple of str
        The feature columns of each kind, in file order.
    name : str
        A display name (file name without extension, bundled dataset or generator name).
    missing : {"refuse", "impute", "drop"}
        How the table was loaded: with ``"impute"`` the features may hold missing values
        and :meth:`preprocessor` imputes them (inside each teacher's pipeline); with
        ``"refuse"`` and ``"drop"`` they hold none.
    missing_markers : tuple of str
        Text read as a missing cell besides the empty field and pandas' usual markers
        (e.g. ``("?",)``); :func:`check_public` applies them to the public table too.
    missing_counts : dict of str to int
        Missing cells per column of the source file (feature columns in order, then the
        label column), counted before any row was dropped.
    missing_rows : int
        Rows of the source file with at least one missing cell (feature or label).
    dropped_rows : int
        Rows dropped for a missing cell (``missing="drop"``; 0 otherwise).

    Notes
    -----
    The representation shows only sizes, never the private values.  The missing-value
    counts, like :attr:`class_counts`, are computed from the rows: for the private table
    they are non-private diagnostics (show them as such, never export them).  A part made
    by :func:`split_public` keeps the counts of the file it came from.
    """

    features: pd.DataFrame = field(repr=False)
    labels: np.ndarray = field(repr=False)
    class_names: tuple[str, ...]
    label_column: str
    numeric_columns: tuple[str, ...]
    categorical_columns: tuple[str, ...]
    name: str
    missing: str = "refuse"
    missing_markers: tuple[str, ...] = ()
    missing_counts: dict[str, int] = field(default_factory=dict)
    missing_rows: int = 0
    dropped_rows: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.features, pd.DataFrame):
            raise DataError("Table.features must be a pandas DataFrame of the feature columns.")
        labels = np.asarray(self.labels)
        if labels.ndim != 1 or labels.shape[0] != self.features.shape[0]:
            raise DataError(
                f"Table needs one label per row: {self.features.shape[0]} rows of features "
                f"but labels of shape {labels.shape}."
            )
        if labels.size and (
            not np.issubdtype(labels.dtype, np.integer)
            or labels.min() < 0
            or labels.max() >= len(self.class_names)
        ):
            raise DataError(
                f"Table labels must be class ids 0..{len(self.class_names) - 1} "
                "(one per class name)."
            )
        columns = list(self.features.columns)
        if sorted(columns) != sorted(list(self.numeric_columns) + list(self.categorical_columns)):
            raise DataError(
                "Table.numeric_columns and Table.categorical_columns must together list "
                "every feature column exactly once."
            )
        if self.missing not in _MISSING_OPTIONS:
            raise ParameterError(
                f"missing must be 'refuse', 'impute' or 'drop', got {self.missing!r}."
            )
        object.__setattr__(self, "missing_markers", tuple(str(m) for m in self.missing_markers))
        object.__setattr__(
            self, "missing_counts", {str(c): int(n) for c, n in dict(self.missing_counts).items()}
        )
        object.__setattr__(self, "missing_rows", int(self.missing_rows))
        object.__setattr__(self, "dropped_rows", int(self.dropped_rows))
        object.__setattr__(self, "labels", labels.astype(np.int64, copy=False))
        object.__setattr__(self, "class_names", tuple(str(c) for c in self.class_names))

    def __repr__(self) -> str:
        return (
            f"Table(name={self.name!r}, n_rows={self.n_rows}, n_features={len(self.feature_names)} "
            f"({len(self.numeric_columns)} numeric, {len(self.categorical_columns)} categorical), "
            f"n_classes={self.n_classes}, label_column={self.label_column!r}, missing={self.missing!r})"
        )

    @property
    def n_rows(self) -> int:
        """Number of rows."""
        return int(self.features.shape[0])

    @property
    def n_classes(self) -> int:
        """Number of classes C (class ids ``0..C-1``)."""
        return len(self.class_names)

    @property
    def feature_names(self) -> tuple[str, ...]:
        """The feature column names, in order."""
        return tuple(str(c) for c in self.features.columns)

    @property
    def class_counts(self) -> np.ndarray:
        """Rows per class id, shape (C,).  Computed from the private labels: a non-private
        diagnostic when the table is the private table."""
        return np.bincount(self.labels, minlength=self.n_classes).astype(np.int64)

    def preprocessor(self):
        """An unfitted scikit-learn ``ColumnTransformer`` for this table's features.

        Numeric columns are passed through (after a median ``SimpleImputer`` when the table
        was loaded with ``missing="impute"``); categorical columns are one-hot encoded by
        ``OneHotEncoder(handle_unknown="ignore")`` (after a most-frequent ``SimpleImputer``
        when imputing), so categories unseen in training encode as all zeros.  The output
        is a dense float array.  Put it in front of a learner with
        ``sklearn.pipeline.make_pipeline(table.preprocessor(), learner)``: each teacher then
        fits its own encoder and imputer on its own chunk, which keeps the chunks disjoint.

        Never fit it (or the pipeline) on all private rows at once to impute them: an
        imputer fitted on all private rows is a release of their statistics (medians,
        most frequent categories) that no teacher's chunk bounds.  Nor fit it on public
        rows for the teachers: their imputers see their own chunk only, and the public
        rows are only transformed.

        Returns
        -------
        sklearn.compose.ColumnTransformer
        """
        from sklearn.compose import ColumnTransformer
        from sklearn.impute import SimpleImputer
        from sklearn.pipeline import Pipeline
        from sklearn.preprocessing import OneHotEncoder

        impute = self.missing == "impute"
        transformers = []
        if self.numeric_columns:
            numeric = (
                SimpleImputer(strategy="median", keep_empty_features=True) if impute else "passthrough"
            )
            transformers.append(("numeric", numeric, list(self.numeric_columns)))
        if self.categorical_columns:
            onehot = OneHotEncoder(handle_unknown="ignore", sparse_output=False)
            if impute:
                categorical = Pipeline(
                    [
                        ("impute", SimpleImputer(strategy="most_frequent", keep_empty_features=True)),
                        ("onehot", onehot),
                    ]
                )
            else:
                categorical = onehot
            transformers.append(("categorical", categorical, list(self.categorical_columns)))
        return ColumnTransformer(transformers, remainder="drop", sparse_threshold=0.0)


def table_from_arrays(
    X,
    y,
    *,
    class_names: Sequence[str] | None = None,
    feature_names: Sequence[str] | None = None,
    name: str = "table",
    label_column: str = "label",
) -> Table:
    """Build a numeric :class:`Table` from a feature matrix and class ids.

    Parameters
    ----------
    X : array-like, shape (n, d)
        Finite numeric features.
    y : array-like of int, shape (n,)
        Class ids ``0..C-1``.
    class_names : sequence of str, optional
        Names of the class ids; default ``"0", "1", ...`` up to the largest id.
    feature_names : sequence of str, optional
        Column names; default ``x0 .. x{d-1}``.
    name, label_column : str
        Display name and label-column name.

    Returns
    -------
    Table
    """
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2 or X.shape[1] < 1:
        raise DataError(f"Features must be a 2-D array (rows × columns), got shape {X.shape}.")
    if not np.all(np.isfinite(X)):
        raise DataError("Features must be finite numbers; replace NaN and infinite values.")
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise DataError(f"Need one label per row: {X.shape[0]} rows but labels of shape {y.shape}.")
    if y.size and (not np.issubdtype(y.dtype, np.integer) or y.min() < 0):
        raise DataError("Labels must be non-negative integer class ids.")
    if class_names is None:
        class_names = tuple(str(c) for c in range(int(y.max()) + 1 if y.size else 0))
    if feature_names is None:
        feature_names = [f"x{j}" for j in range(X.shape[1])]
    feature_names = [str(c) for c in feature_names]
    if len(feature_names) != X.shape[1] or len(set(feature_names)) != len(feature_names):
        raise DataError("feature_names must give one distinct name per feature column.")
    frame = pd.DataFrame(X, columns=feature_names)
    return Table(
        features=frame,
        labels=y.astype(np.int64),
        class_names=tuple(class_names),
        label_column=str(label_column),
        numeric_columns=tuple(feature_names),
        categorical_columns=(),
        name=str(name),
    )


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


def _line_of(data, position: int) -> int:
    newline = b"\n" if isinstance(data, bytes) else "\n"
    return data[:position].count(newline) + 1


def _decode(data: bytes | str, max_bytes: int) -> str:
    """Check size and encoding and return the text (BOM removed)."""
    size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise _too_big(size, max_bytes)
    if isinstance(data, str):
        text = data[1:] if data.startswith("\ufeff") else data
    else:
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            raise DataError(
                "The file is UTF-16 text (Excel's 'Unicode text'), not UTF-8. Save it as "
                "'CSV UTF-8 (comma delimited)' and load it again."
            )
        for magic, what in _MAGIC:
            if data.startswith(magic):
                raise DataError(f"The file is not a CSV file: it looks like {what}. {_SAVE_AS_CSV}")
        nul = data.find(b"\x00")
        if nul >= 0:
            raise DataError(
                f"The file is not a CSV text file: it holds binary data (a NUL byte on line "
                f"{_line_of(data, nul)}). {_SAVE_AS_CSV}"
            )
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            bad = data[exc.start]
            raise DataError(
                f"The file is not UTF-8 text: byte 0x{bad:02x} on line {_line_of(data, exc.start)} "
                "is not valid UTF-8 (the file was probably saved as Latin-1 or Windows-1252). "
                "Save it with UTF-8 encoding ('CSV UTF-8' in Excel, 'UTF-8' in a text editor's "
                "Save As) and load it again."
            ) from None
    if not text.strip():
        raise DataError("The file is empty. Choose a CSV file with a header row and at least one data row.")
    control = _CONTROL.search(text)
    if control is not None:
        raise DataError(
            f"The file is not a CSV text file: it holds the control character "
            f"{control.group()!r} on line {_line_of(text, control.start())}. {_SAVE_AS_CSV}"
        )
    return text


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _raw_header(text: str) -> list[str]:
    """The first non-blank record of the CSV, each field stripped."""
    try:
        for row in csv.reader(io.StringIO(text), skipinitialspace=True, strict=False):
            if row and any(field.strip() for field in row):
                return [field.strip() for field in row]
    except csv.Error as exc:
        raise DataError(f"The header row cannot be read as CSV ({exc}). {_SAVE_AS_CSV}") from None
    raise DataError("The file is empty. Choose a CSV file with a header row and at least one data row.")


def _parse_csv(text: str) -> pd.DataFrame:
    """Parse CSV text into a frame of text columns (missing -> NaN), checking the header."""
    header = _raw_header(text)
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
    if duplicates:
        raise DataError(
            "Duplicate column names in the header: "
            + ", ".join(f"'{d}' ({seen[d]} times)" for d in duplicates)
            + ". Give every column a distinct name and load the file again."
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
                sep=",",
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
            "comma-separated fields as the header; quote fields that contain commas."
        ) from None
    for warning in caught:
        if issubclass(warning.category, pd.errors.ParserWarning):
            raise DataError(
                "Some rows have more comma-separated fields than the header has column names. "
                "Add the missing names to the header (or delete the extra fields; quote fields "
                "that contain commas) and load the file again."
            )
    if frame.shape[1] != len(header):
        raise DataError(
            f"The header has {len(header)} names but the rows were read as {frame.shape[1]} "
            "columns. Check the file's quoting and load it again."
        )
    frame.columns = header
    frame = frame.reset_index(drop=True)
    return frame


def _clean_text(column: pd.Series) -> pd.Series:
    """Text values stripped of surrounding spaces, as object dtype; empty -> NaN."""
    present = column.notna().to_numpy()
    out = np.full(len(column), np.nan, dtype=object)
    if present.any():
        stripped = column[present].astype(str).str.strip().to_numpy(dtype=object)
        stripped[stripped == ""] = np.nan
        out[present] = stripped
    return pd.Series(out, index=column.index, dtype=object)


def _to_numbers(column: pd.Series) -> tuple[pd.Series, np.ndarray, pd.Series]:
    """Read a column as numbers.

    Returns the float64 numbers (NaN where missing or not a number), a mask of the values
    that are present but not numbers (blank text counts as missing, not as a failure), and
    those values' text.
    """
    try:
        numbers = pd.to_numeric(column, errors="coerce")
    except (TypeError, ValueError):  # objects that are not even text (lists, dicts...)
        numbers = pd.to_numeric(_clean_text(column), errors="coerce")
    failed = np.array(column.notna().to_numpy() & numbers.isna().to_numpy(), dtype=bool)
    text = _clean_text(column[failed])
    blank = text.isna().to_numpy()
    if blank.any():
        failed[np.flatnonzero(failed)[blank]] = False
        text = text[~blank]
    return numbers.astype(np.float64), failed, text


def _row_list(rows: np.ndarray, limit: int = 5) -> str:
    shown = ", ".join(str(int(r) + 1) for r in rows[:limit])
    return shown + (", ..." if len(rows) > limit else "")


def _label_order(values: Iterable[str]) -> list[str]:
    values = list(values)
    if all(_is_number(v) for v in values):
        return sorted(values, key=lambda v: (float(v), v))
    return sorted(values)


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
    return columns[-1]


def _numeric_or_text(column: pd.Series, name: str) -> tuple[pd.Series, bool]:
    """Convert a text column to float64 if every present value is a number."""
    numbers, failed, text = _to_numbers(column)
    if not failed.any():
        return numbers, True
    n_present = int(column.notna().sum())
    n_failed = int(failed.sum())
    if n_failed <= 0.1 * n_present:
        examples = ", ".join(f"'{v}'" for v in pd.unique(text)[:3])
        raise DataError(
            f"Column '{name}' holds numbers except for {n_failed} value(s) that are not numbers "
            f"({examples}; data row(s) {_row_list(np.flatnonzero(failed))}). If these mark "
            "missing values, leave those fields empty or name the marker with missing_markers "
            f"(e.g. missing_markers=({pd.unique(text)[0]!r},)); otherwise correct them (numbers "
            "use '.' as decimal point and no thousands separator), then load the file again."
        )
    return _clean_text(column), False


def _check_finite(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    bad = []
    for name in columns:
        values = frame[name].to_numpy(dtype=float)
        inf = np.isinf(values)
        if inf.any():
            bad.append((name, int(inf.sum()), np.flatnonzero(inf)))
    if bad:
        detail = "; ".join(f"'{n}' ({c} row(s), data row(s) {_row_list(r)})" for n, c, r in bad)
        raise DataError(
            f"{what} infinite values (inf or -inf, or numbers too large for floating point) in "
            f"column(s) {detail}. Replace them with finite numbers, or leave the fields empty "
            "to mark them missing, and load the file again."
        )


def _missing_report(frame: pd.DataFrame) -> str:
    counts = frame.isna().sum()
    counts = counts[counts > 0]
    shown = ", ".join(f"'{c}' ({int(n)})" for c, n in counts.head(10).items())
    return shown + (f" and {len(counts) - 10} more" if len(counts) > 10 else "")


# --------------------------------------------------------------------------------------
# The private table
# --------------------------------------------------------------------------------------


def _read_csv(source, max_bytes, no_rows: str) -> tuple[pd.DataFrame, str | None]:
    """Read ``source`` into a frame of text columns, with the source's default name.

    Checks ``max_bytes``, the size, the encoding and the header; ``no_rows`` is the
    message for a file with a header row but no data rows.
    """
    max_bytes = _check_max_bytes(max_bytes)
    raw, default_name = _read_source(source, max_bytes)
    frame = _parse_csv(_decode(_gunzip(raw, max_bytes), max_bytes))
    if frame.shape[0] == 0:
        raise DataError(no_rows)
    return frame, default_name


def _check_markers(markers) -> tuple[str, ...]:
    """``missing_markers`` as a tuple of distinct non-blank stripped strings."""
    if markers is None:
        return ()
    if isinstance(markers, str):
        markers = (markers,)
    try:
        items = list(markers)
    except TypeError:
        raise ParameterError(
            f"missing_markers must be a sequence of text values such as ('?',), got {markers!r}."
        ) from None
    out: list[str] = []
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise ParameterError(
                "missing_markers must hold non-blank text values such as '?' (blank fields are "
                f"always missing), got {item!r}."
            )
        if item.strip() not in out:
            out.append(item.strip())
    return tuple(out)


def _mark_missing(frame: pd.DataFrame, markers: tuple[str, ...]) -> pd.DataFrame:
    """``frame`` with every text cell equal (after stripping) to a marker set to NaN."""
    if not markers:
        return frame
    out = frame.copy()
    for column in out.columns:
        values = out[column]
        if values.dtype != object and not pd.api.types.is_string_dtype(values):
            continue
        text = values.map(lambda v: v.strip() if isinstance(v, str) else v)
        hit = text.isin(markers).to_numpy()
        if hit.any():
            out[column] = values.astype(object).mask(hit, np.nan)
    return out


def _check_table(table) -> None:
    if not isinstance(table, Table):
        raise ParameterError(f"table must be a core.data.Table, got {type(table).__name__}.")


def _check_missing_option(missing) -> str:
    if missing not in _MISSING_OPTIONS:
        raise ParameterError(
            f"missing must be 'refuse' (stop on missing feature values), 'impute' (fill them "
            f"inside each teacher's learning pipeline) or 'drop' (drop the rows that have "
            f"them), got {missing!r}."
        )
    return missing


def load_table(
    source,
    *,
    label_column: str | None = None,
    missing: str = "refuse",
    missing_markers: Iterable[str] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    name: str | None = None,
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
        ``label``, ``target``, ``y`` or ``class``, else the last column.
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
    missing = _check_missing_option(missing)
    markers = _check_markers(missing_markers)
    frame, default_name = _read_csv(
        source,
        max_bytes,
        "The file has a header row but no data rows. Add at least one row per class and load it again.",
    )
    frame = _mark_missing(frame, markers)
    columns = list(frame.columns)
    label = _choose_label_column(columns, label_column)
    feature_columns = [c for c in columns if c != label]
    if not feature_columns:
        hint = ""
        if any(sep in label for sep in (";", "\t", "|")):
            hint = (
                " The header looks separated by semicolons, tabs or bars: save the file as "
                "comma-separated CSV."
            )
        raise DataError(
            f"The file has no feature columns: its only column is the label column '{label}'."
            f"{hint} A usable table needs at least one feature column besides the label."
        )

    # Labels.
    labels_text = _clean_text(frame[label])
    no_label = labels_text.isna().to_numpy()
    if no_label.all():
        raise DataError(
            f"The label column '{label}' is empty in every row. Fill in the labels, or choose "
            "the column that holds them with label_column."
        )
    if no_label.any() and missing != "drop":
        rows = np.flatnonzero(no_label)
        raise DataError(
            f"{len(rows)} row(s) have no label in column '{label}' (data row(s) "
            f"{_row_list(rows)}). Labels are never imputed: fill them in or delete those rows "
            "(or load with missing='drop'), and load the file again."
        )

    # Features (read from every row, so the kinds and the counts describe the whole file).
    features = frame[feature_columns]
    empty = [c for c in feature_columns if features[c].isna().all()]
    if empty:
        shown = ", ".join(f"'{c}'" for c in empty)
        raise DataError(
            f"Column(s) {shown} are empty in every row (all values missing). Delete them and "
            "load the file again."
        )
    converted = {}
    numeric, categorical = [], []
    for column in feature_columns:
        values, is_numeric = _numeric_or_text(features[column], column)
        converted[column] = values
        (numeric if is_numeric else categorical).append(column)
    features = pd.DataFrame(converted, columns=feature_columns)
    for column in categorical:  # keep text columns as object dtype (text, NaN missing)
        features[column] = features[column].astype(object)
    _check_finite(features, numeric, "The file holds")
    cell_missing = features.isna()
    counts = {c: int(n) for c, n in cell_missing.sum().items()}
    counts[label] = int(no_label.sum())
    row_missing = cell_missing.any(axis=1).to_numpy() | no_label
    missing_rows = int(row_missing.sum())
    if missing == "refuse" and cell_missing.any().any():
        n_rows = int(cell_missing.any(axis=1).sum())
        raise DataError(
            f"{n_rows} row(s) have missing feature values, in column(s) "
            f"{_missing_report(features)}. Fill them in, delete those rows, or load with "
            "missing='drop' to drop them or missing='impute' to impute them inside each "
            "teacher's learning pipeline."
        )
    dropped = 0
    if missing == "drop" and missing_rows:
        if missing_rows == len(row_missing):
            raise DataError(
                f"Every row has a missing value (in column(s) {_missing_report(features)}"
                + (f", and '{label}' ({counts[label]})" if counts[label] else "")
                + "), so missing='drop' leaves no rows. Fill in the values, or load with "
                "missing='impute'."
            )
        keep = ~row_missing
        features = features.loc[keep].reset_index(drop=True)
        labels_text = labels_text[keep].reset_index(drop=True)
        dropped = missing_rows

    # Classes.
    distinct = pd.unique(labels_text)
    if len(distinct) < 2:
        raise DataError(
            f"The label column '{label}' holds a single class ('{distinct[0]}'). A classifier "
            "needs at least two classes: add rows of another class, or choose another "
            "label_column."
        )
    if len(distinct) > MAX_CLASSES:
        raise DataError(
            f"The label column '{label}' holds {len(distinct)} distinct values, more than "
            f"{MAX_CLASSES}: it is likely a regression target or an identifier, not a class. "
            "Choose the right column with label_column, or group the values into at most "
            f"{MAX_CLASSES} classes."
        )
    class_names = _label_order(distinct)
    class_id = {c: i for i, c in enumerate(class_names)}
    labels = labels_text.map(class_id).to_numpy(dtype=np.int64)
    if name is None:
        name = default_name or "uploaded table"
    return Table(
        features=features,
        labels=labels,
        class_names=tuple(class_names),
        label_column=label,
        numeric_columns=tuple(numeric),
        categorical_columns=tuple(categorical),
        name=str(name),
        missing=missing,
        missing_markers=markers,
        missing_counts=counts,
        missing_rows=missing_rows,
        dropped_rows=dropped,
    )


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


def check_public(table: Table, public_frame) -> pd.DataFrame:
    """Check a public (query) table against the private table's feature schema.

    The public table must hold every feature column of ``table``.  A column named like
    the private label column is dropped (public points are unlabeled).  Any other extra
    column is refused: an unexpected column is often a misnamed feature or an identifier
    that should not be there, so the user decides which columns go in.

    Numeric columns must hold numbers (text that reads as a number is converted);
    categorical columns accept any value, compared as text; values never seen in the
    private data encode as all zeros.  Text equal to one of the table's
    ``missing_markers`` is missing.  Missing values are refused when the private table was
    loaded with ``missing="refuse"``, their rows dropped with ``missing="drop"`` (the
    count is in the returned frame's ``attrs["dropped_rows"]``), and left to each
    teacher's fitted imputer with ``missing="impute"`` (the public rows are only
    transformed, never fitted on).

    Parameters
    ----------
    table : Table
        The private table whose schema the public table must match.
    public_frame : pandas.DataFrame or 2-D array-like
        The public features.  A plain array must have exactly the table's feature columns
        in order.

    Returns
    -------
    pandas.DataFrame
        The public features with a fresh ``RangeIndex``, in the table's column order:
        numeric columns as float64, categorical ones as object (text).

    Raises
    ------
    SchemaError
        Missing, extra or duplicate columns, or text in a numeric column.
    DataError
        No rows, infinite values, or missing values the table's option refuses.
    """
    _check_table(table)
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
    frame = public_frame.copy()
    frame.columns = columns
    if table.label_column in frame.columns:
        frame = frame.drop(columns=[table.label_column])
    wanted = list(table.feature_names)
    absent = [c for c in wanted if c not in frame.columns]
    if absent:
        shown = ", ".join(f"'{c}'" for c in absent[:20]) + (", ..." if len(absent) > 20 else "")
        raise SchemaError(
            f"The public table lacks {len(absent)} feature column(s) of the private table "
            f"'{table.name}': {shown}. Add them (same names as in the private table) and load "
            "it again."
        )
    extra = [c for c in frame.columns if c not in wanted]
    if extra:
        shown = ", ".join(f"'{c}'" for c in extra[:20]) + (", ..." if len(extra) > 20 else "")
        raise SchemaError(
            f"The public table has column(s) that the private table '{table.name}' does not: "
            f"{shown}. Delete them (the public table holds exactly the private table's feature "
            "columns; a label column is allowed and ignored) and load it again."
        )
    if frame.shape[0] == 0:
        raise DataError("The public table has no rows. Add the points to label and load it again.")
    frame = _mark_missing(frame[wanted].reset_index(drop=True), table.missing_markers)
    out = {}
    for column in table.numeric_columns:
        values = frame[column]
        if pd.api.types.is_bool_dtype(values):
            raise SchemaError(
                f"Column '{column}' of the public table holds True/False values, but it is "
                "numeric in the private table. Give it numbers."
            )
        if isinstance(values.dtype, pd.CategoricalDtype):
            values = values.astype(object)
        if not pd.api.types.is_numeric_dtype(values):
            numbers, failed, text = _to_numbers(values)
            if failed.any():
                rows = np.flatnonzero(failed)
                examples = ", ".join(f"'{v}'" for v in pd.unique(text)[:3])
                raise SchemaError(
                    f"Column '{column}' of the public table holds text ({examples}; row(s) "
                    f"{_row_list(rows)}) but it is numeric in the private table. Use numbers "
                    "in that column (leave a field empty to mark it missing)."
                )
            values = numbers
        out[column] = pd.to_numeric(values, errors="raise").astype(np.float64)
    for column in table.categorical_columns:
        values = frame[column]
        if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            text = values.astype(object).map(_category_text)
        else:
            text = _clean_text(values)
        out[column] = pd.Series(text.to_numpy(dtype=object), dtype=object)
    checked = pd.DataFrame(out, columns=wanted)
    for column in table.categorical_columns:
        checked[column] = checked[column].astype(object)
    _check_finite(checked, table.numeric_columns, "The public table holds")
    has_missing = checked.isna().any(axis=1).to_numpy()
    if table.missing == "refuse" and has_missing.any():
        raise DataError(
            f"{int(has_missing.sum())} row(s) of the public table have missing values, in column(s) "
            f"{_missing_report(checked)}. Fill them in or delete those rows; or load the "
            "private table with missing='drop' (drops them) or missing='impute' (imputes them "
            "inside each teacher's pipeline)."
        )
    dropped = 0
    if table.missing == "drop" and has_missing.any():
        if has_missing.all():
            raise DataError(
                f"Every row of the public table has a missing value (in column(s) "
                f"{_missing_report(checked)}), so missing='drop' leaves no rows. Fill in the "
                "values, or load the private table with missing='impute'."
            )
        dropped = int(has_missing.sum())
        checked = checked.loc[~has_missing].reset_index(drop=True)
    checked.attrs["dropped_rows"] = dropped
    return checked


def read_public(source, table: Table, *, max_bytes: int = DEFAULT_MAX_BYTES) -> pd.DataFrame:
    """Read a public (query) CSV file and check it against ``table`` (:func:`check_public`).

    Parameters
    ----------
    source : str, pathlib.Path, bytes or file-like
        As for :func:`load_table`; held in memory only.
    table : Table
        The private table whose feature schema the file must match.
    max_bytes : int
        Largest accepted file size, 50 MiB by default.

    Returns
    -------
    pandas.DataFrame
        See :func:`check_public`.

    Raises
    ------
    DataError, SchemaError
        As :func:`load_table` for unreadable files, and :func:`check_public` for schema
        problems.
    """
    _check_table(table)
    frame, _ = _read_csv(
        source,
        max_bytes,
        "The public file has a header row but no data rows. Add the points to label and load it again.",
    )
    return check_public(table, frame)


# --------------------------------------------------------------------------------------
# Class sizes and splitting
# --------------------------------------------------------------------------------------


def largest_k(table: Table) -> int:
    """The largest number of teachers the private table allows (at least 2).

    ``min(2 · min_c r_c, n_rows // 2)``: every class keeps a possible majority
    (:func:`check_class_sizes`) and every chunk has two rows.  Used to fit the number of
    teachers to a newly loaded table.
    """
    _check_table(table)
    return max(2, min(2 * int(table.class_counts.min()), table.n_rows // 2))


def check_class_sizes(table: Table, k) -> None:
    """Refuse a number of teachers ``k`` that some class is too small for.

    A class with ``r`` private rows appears in at most ``r`` of the ``k`` disjoint chunks,
    and a teacher never predicts a class it has not seen, so at most ``r`` teachers can
    vote for it.  With ``r < ceil(k/2)`` the class can never win a majority of the votes,
    and BTT's stability test would rarely answer it; such a ``k`` is refused.  The largest
    ``k`` that works is ``2 · min_c r_c`` (and at most ``n_rows // 2`` so every chunk has
    two rows).

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
        Some class has fewer than ``ceil(k/2)`` rows; the message names the classes and the
        largest ``k`` that works.
    """
    _check_table(table)
    k = check_k(k, table.n_rows)
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
    k_max = min(2 * smallest, table.n_rows // 2)
    raise DataError(
        f"Too many teachers for the smallest class(es): with k = {k}, a class needs at least "
        f"ceil(k/2) = {need} private rows, but {shown} has fewer. Such a class appears in "
        "fewer than half of the teachers' chunks, so the ensemble can never give it a "
        f"majority. Choose k of at most {k_max}, or add rows of the small class(es)."
    )


def split_public(table: Table, n_public, *, rng: RNGLike = None) -> tuple[Table, Table]:
    """Split a table at random into a private part and a public part.

    Used with bundled or generated data to play both roles: the public part's features
    are the queries, and its labels serve only to measure accuracy (they are never given
    to a mechanism).  The split is a uniformly random permutation (no stratification);
    both parts keep the table's class names and schema and list their rows in the
    permuted (random) order.

    Parameters
    ----------
    table : Table
        The labeled table to split.
    n_public : int
        Rows in the public part, from 1 to ``n_rows - 2``.
    rng : Generator, int or None
        See :func:`core.noise.check_rng`.

    Returns
    -------
    (private, public) : (Table, Table)
    """
    _check_table(table)
    if isinstance(n_public, bool) or not isinstance(n_public, (int, np.integer)):
        raise ParameterError(f"n_public must be a whole number of rows, got {n_public!r}.")
    n_public = int(n_public)
    if not 1 <= n_public <= table.n_rows - 2:
        raise ParameterError(
            f"n_public must be between 1 and {table.n_rows - 2} for a table of {table.n_rows} "
            f"rows (the private part needs at least two rows), got {n_public}."
        )
    order = check_rng(rng).permutation(table.n_rows)
    public_rows, private_rows = order[:n_public], order[n_public:]

    def part(rows: np.ndarray, suffix: str) -> Table:
        return Table(
            features=table.features.iloc[rows].reset_index(drop=True),
            labels=table.labels[rows].copy(),
            class_names=table.class_names,
            label_column=table.label_column,
            numeric_columns=table.numeric_columns,
            categorical_columns=table.categorical_columns,
            name=f"{table.name} ({suffix})",
            missing=table.missing,
            missing_markers=table.missing_markers,
            missing_counts=table.missing_counts,
            missing_rows=table.missing_rows,
            dropped_rows=table.dropped_rows,
        )

    return part(private_rows, "private"), part(public_rows, "public")
