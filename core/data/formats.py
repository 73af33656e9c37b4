"""How a CSV file is written: its text encoding, its separator and its decimal mark.

A file saved by a spreadsheet in much of Europe is separated by semicolons and writes
``1,5`` for one and a half; a file from an older Windows program is Latin-1 (Windows-1252)
text, not UTF-8.  :class:`CsvFormat` names the three choices; each left ``None`` is
detected from the file itself:

- the encoding: UTF-8 (a byte-order mark is removed).  A file that is not valid UTF-8 is
  refused, never guessed (a Cyrillic Windows-1251 file read as Latin-1 would load as
  nonsense categories without a word): the message names the file and the option
  (``encoding='latin-1'``, the command line's ``--encoding latin-1``);
- the separator: the first of comma, semicolon and tab that cuts the header and the first
  rows into the same number (more than one) of fields; comma when none does;
- the decimal mark: a comma when the separator is not a comma, some number cell writes a
  decimal comma (``1,5``) and none a decimal point (``1.5``); a point otherwise.

With a decimal comma every cell that reads as a number with a decimal comma is rewritten with
a point (``-1,5e3`` -> ``-1.5e3``) while the file is read, before any other check, so that
every later step (the numeric columns, the missing-value markers, the export) sees numbers
written one way.  Nothing here reads beyond the bytes it is given, and nothing is written.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from dataclasses import dataclass

import pandas as pd

from core.errors import DataError, ParameterError

__all__ = ["SEPARATORS", "DECIMALS", "CsvFormat", "check_csv_format", "decode", "detect_separator", "separator_hint",
           "detect_decimal", "decimal_points", "sniff_format"]

SEPARATORS = {",": "comma", ";": "semicolon", "\t": "tab"}
"""The separators detected and accepted, with their names."""

DECIMALS = {".": "point", ",": "comma"}
"""The decimal marks accepted, with their names."""

_SEP_ALIASES = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";"}
_DECIMAL_ALIASES = {"point": ".", "dot": ".", "comma": ","}
_COMMA_NUMBER = re.compile(r"^\s*[+-]?\d*,\d+(?:[eE][+-]?\d+)?\s*$")
_POINT_NUMBER = re.compile(r"^\s*[+-]?\d*\.\d+(?:[eE][+-]?\d+)?\s*$")
_SAMPLE_LINES = 50
_SAMPLE_ROWS = 2000

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
SAVE_AS_CSV = "Export it as a CSV file (comma, semicolon or tab separated) and load that instead."


@dataclass(frozen=True)
class CsvFormat:
    """How a CSV file is written; ``None`` is detected from the file (see the module's docstring).

    Attributes
    ----------
    sep : {",", ";", "\\t"} or None
        The field separator (``"tab"``, ``"comma"`` and ``"semicolon"`` are read as these).
    decimal : {".", ","} or None
        The decimal mark of the numbers (``"point"``, ``"comma"`` are read as these).
    encoding : str or None
        A Python codec name (``"utf-8"``, ``"latin-1"``, ``"cp1252"``...).

    Examples
    --------
    >>> CsvFormat(sep="semicolon", decimal=",").sep
    ';'
    """

    sep: str | None = None
    decimal: str | None = None
    encoding: str | None = None

    def __post_init__(self) -> None:
        sep = _SEP_ALIASES.get(str(self.sep).strip().lower(), self.sep) if self.sep is not None else None
        if sep is not None and sep not in SEPARATORS:
            raise ParameterError(f"sep must be one of ',', ';' or tab, got {self.sep!r}.")
        decimal = (_DECIMAL_ALIASES.get(str(self.decimal).strip().lower(), self.decimal)
                   if self.decimal is not None else None)
        if decimal is not None and decimal not in DECIMALS:
            raise ParameterError(f"decimal must be '.' or ',', got {self.decimal!r}.")
        if sep == "," and decimal == ",":
            raise ParameterError("sep=',' and decimal=',' cannot both be commas: a comma-separated file writes "
                                 "decimal points (or give sep=';').")
        encoding = self.encoding
        if encoding is not None:
            try:
                encoding = codecs.lookup(str(encoding)).name
            except LookupError:
                raise ParameterError(f"encoding {self.encoding!r} is not a known text encoding (e.g. 'utf-8', "
                                     "'latin-1', 'cp1252').") from None
        object.__setattr__(self, "sep", sep)
        object.__setattr__(self, "decimal", decimal)
        object.__setattr__(self, "encoding", encoding)

    def describe(self) -> str:
        """The format in words, e.g. ``semicolon-separated, decimal comma, cp1252``."""
        parts = [f"{SEPARATORS[self.sep]}-separated" if self.sep else "separator detected",
                 f"decimal {DECIMALS[self.decimal]}" if self.decimal else "decimal mark detected"]
        if self.encoding:
            parts.append(self.encoding)
        return ", ".join(parts)


def check_csv_format(value) -> CsvFormat:
    """``value`` as a :class:`CsvFormat`: None (detect everything), a CsvFormat, or a mapping of its fields.

    Raises
    ------
    ParameterError
        On anything else, or a field out of range.
    """
    if value is None:
        return CsvFormat()
    if isinstance(value, CsvFormat):
        return value
    if isinstance(value, dict):
        unknown = set(value) - {"sep", "decimal", "encoding"}
        if unknown:
            raise ParameterError(f"csv_format takes sep, decimal and encoding, not {', '.join(sorted(unknown))}.")
        return CsvFormat(**value)
    raise ParameterError(f"csv_format must be a core.data.CsvFormat, a dict or None, got {type(value).__name__}.")


def _line_of(data, position: int) -> int:
    newline = b"\n" if isinstance(data, bytes) else "\n"
    return data[:position].count(newline) + 1


def _refuse_binary(data: bytes) -> None:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DataError(
            "The file is UTF-16 text (Excel's 'Unicode text'), not UTF-8. Save it as "
            "'CSV UTF-8 (comma delimited)' and load it again."
        )
    for magic, what in _MAGIC:
        if data.startswith(magic):
            raise DataError(f"The file is not a CSV file: it looks like {what}. {SAVE_AS_CSV}")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise DataError(
            f"The file is not a CSV text file: it holds binary data (a NUL byte on line "
            f"{_line_of(data, nul)}). {SAVE_AS_CSV}"
        )


def decode(data: bytes | str, encoding: str | None = None, *, where: str | None = None,
           controls: bool = True) -> tuple[str, str]:
    """The text of a file's bytes (byte-order mark removed) and the encoding it was read with.

    Parameters
    ----------
    data : bytes or str
        The file's content (text is taken as it is).
    encoding : str, optional
        The encoding to use; None: UTF-8 (refused otherwise, with the option to give).
    where : str, optional
        The file's name (unused: :func:`named` adds it to the messages).
    controls : bool, default True
        Refuse control characters (False: a sample read only for its format).

    Returns
    -------
    (str, str)

    Raises
    ------
    DataError
        Binary content, an empty file, control characters, or bytes the given encoding cannot read.
    """
    used = "utf-8"
    if isinstance(data, str):
        text = data[1:] if data.startswith("\ufeff") else data
    else:
        _refuse_binary(data)
        if encoding is not None:
            used = encoding
            try:
                text = data.decode("utf-8-sig" if codecs.lookup(encoding).name == "utf-8" else encoding)
            except UnicodeDecodeError as exc:
                raise DataError(
                    f"The file is not {encoding} text: byte 0x{data[exc.start]:02x} on line "
                    f"{_line_of(data, exc.start)} cannot be read in that encoding. Give the file's encoding "
                    "(encoding='latin-1' for a file saved as Latin-1 or Windows-1252), or save it as UTF-8."
                ) from None
        else:
            try:
                text = data.decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                raise DataError(
                    f"The file is not UTF-8 text: byte 0x{data[exc.start]:02x} on line {_line_of(data, exc.start)} "
                    "is not valid UTF-8 (the file was probably saved as Latin-1 or Windows-1252). Read it with "
                    "encoding='latin-1' (encoding='cp1252' for Windows-1252), or save it with UTF-8 encoding "
                    "('CSV UTF-8' in Excel, 'UTF-8' in a text editor's Save As) and load it again."
                ) from None
    if not text.strip():
        raise DataError("The file is empty. Choose a CSV file with a header row and at least one data row.")
    control = _CONTROL.search(text) if controls else None
    if control is not None:
        raise DataError(
            f"The file is not a CSV text file: it holds the control character "
            f"{control.group()!r} on line {_line_of(text, control.start())}. {SAVE_AS_CSV}"
        )
    return text, used


def detect_separator(text: str) -> str:
    """The separator of a CSV text: the first of comma, semicolon and tab that cuts the header
    and the first rows (up to 50, blank lines skipped) into one same number of fields, more
    than one; comma when none does.

    Examples
    --------
    >>> detect_separator("a;b;c\\n1,5;2;x\\n")
    ';'
    """
    lines = []
    for line in io.StringIO(text):
        if line.strip():
            lines.append(line)
        if len(lines) > _SAMPLE_LINES:
            break
    sample = "".join(lines)
    for sep in SEPARATORS:
        try:
            counts = {len(row) for row in csv.reader(io.StringIO(sample), delimiter=sep, skipinitialspace=True)
                      if row and any(f.strip() for f in row)}
        except csv.Error:
            continue
        if len(counts) == 1 and counts.pop() > 1:
            return sep
    return ","


def separator_hint(text: str, sep: str) -> str:
    """A sentence naming the separator that would read ``text`` (" The file looks
    semicolon-separated: read it with sep=';'."), or "" when ``sep`` is the one detected."""
    found = detect_separator(text)
    if found == sep or (found == "," and sep != ","):
        return ""
    option = "sep=tab" if found == "\t" else f"sep='{found}'"
    return f" The file looks {SEPARATORS[found]}-separated: read it with {option}."


def detect_decimal(frame: pd.DataFrame, sep: str) -> str:
    """The decimal mark of a frame of text cells: a comma when ``sep`` is not a comma and some cell
    of the first rows reads as a number with a decimal comma, none with a decimal point.

    Raises
    ------
    DataError
        When ``sep`` is not a comma and the first rows write numbers both ways (``1,5`` and
        ``2.5``): the mark is not guessed; the message gives the option for each reading.
    """
    if sep == ",":
        return "."
    head = frame.head(_SAMPLE_ROWS)
    comma = point = None
    for column in head.columns:
        values = head[column].dropna().astype(str)
        if not len(values):
            continue
        if comma is None and values.str.match(_COMMA_NUMBER).any():
            comma = (column, values[values.str.match(_COMMA_NUMBER)].iloc[0].strip())
        if point is None and values.str.match(_POINT_NUMBER).any():
            point = (column, values[values.str.match(_POINT_NUMBER)].iloc[0].strip())
    if comma and point:
        raise DataError(
            f"The file is {SEPARATORS[sep]}-separated and writes numbers with a decimal comma ('{comma[1]}' in "
            f"column '{comma[0]}') and with a decimal point ('{point[1]}' in column '{point[0]}'), so its decimal "
            "mark is not guessed: give it (decimal=',' or decimal='.') and load the file again."
        )
    return "," if comma else "."


_DOT_THOUSANDS = re.compile(r"[+-]?\d{1,3}(?:\.\d{3})+")


def dot_thousands(values: pd.Series) -> pd.Series:
    """IDs of a file that writes decimals with a comma, thousands grouped by a dot read as their
    digits (``12.345`` -> ``12345``): there a dot is never a decimal mark, and a spreadsheet saves
    a formatted number ID so.  The privacy unit's column only (docs/design.md §1.2: one person,
    one canonical ID, however the file writes it)."""
    return values.map(lambda v: v.replace(".", "") if isinstance(v, str) and _DOT_THOUSANDS.fullmatch(v.strip())
                      else v)


def decimal_points(frame: pd.DataFrame, decimal: str) -> pd.DataFrame:
    """``frame`` with every cell that reads as a number with a decimal comma written with a point
    (``1,5`` -> ``1.5``) when ``decimal`` is a comma; as it is otherwise."""
    if decimal != ",":
        return frame
    out = frame
    for column in frame.columns:
        values = frame[column]
        if values.dtype != object and not pd.api.types.is_string_dtype(values):
            continue
        text = values.astype(str)
        hit = values.notna() & text.str.match(_COMMA_NUMBER)
        if hit.any():
            if out is frame:
                out = frame.copy()
            out[column] = values.mask(hit, text.str.replace(",", ".", regex=False))
    return out


def sniff_format(path, given: CsvFormat | None = None, *, sample_bytes: int = 1 << 16) -> CsvFormat:
    """The format of the CSV file at ``path`` (plain or gzip), every field resolved from its first bytes.

    For readers that go through a file in pieces (the command line's chunked labeling, its
    row counts): the encoding, separator and decimal mark found in the first ``sample_bytes``
    (whole lines) hold for the whole file.  A field of ``given`` is kept as given.

    Returns
    -------
    CsvFormat
        With ``sep``, ``decimal`` and ``encoding`` all set.
    """
    import gzip
    from pathlib import Path

    given = check_csv_format(given)
    path = Path(path)
    opener = gzip.open if str(path).lower().endswith(".gz") else open
    try:
        with opener(path, "rb") as handle:
            head = handle.read(sample_bytes)
            more = handle.read(1)
    except OSError as exc:
        raise DataError(f"Cannot read '{path}': {exc.strerror or exc}. Check the file's permissions.") from None
    if more and b"\n" in head:
        head = head[:head.rindex(b"\n") + 1]  # whole lines only (never half a UTF-8 character)
    try:
        text, encoding = decode(head, given.encoding, where=str(path), controls=False)
        sep = given.sep or detect_separator(text)
        decimal = given.decimal
        if decimal is None:
            try:
                frame = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, index_col=False, skipinitialspace=True,
                                    on_bad_lines="skip")
            except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, csv.Error):
                frame = pd.DataFrame()
            decimal = detect_decimal(frame, sep)
    except DataError as exc:
        raise DataError(named(str(exc), str(path))) from None
    return CsvFormat(sep=sep, decimal=decimal, encoding=encoding)


def named(message: str, where: str | None) -> str:
    """``message`` naming the file ``where``: ``The file is ...`` becomes ``The file 'x.csv' is ...``,
    another message gets ``'x.csv': `` in front; unchanged when it names the file already or
    ``where`` is None."""
    if not where or f"'{where}'" in message:
        return message
    if message.startswith("The file "):
        return f"The file '{where}' " + message[len("The file "):]
    return f"'{where}': {message}"
