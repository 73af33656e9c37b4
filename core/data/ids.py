"""One spelling of a person's ID: the form that decides which rows are one person.

The same form serves the two places where rows become persons, and they must agree
(docs/design.md §1.2, §9): the partition of the private rows (:mod:`core.data.units`: all
of a person's rows in one teacher's chunk, one side of a split, at most ``r`` rows kept)
and the ledger's accounts (:mod:`core.ledger.units`).  If the ledger merged two spellings
that the partition kept apart, a person's rows could sit in two teachers — two votes per
query, twice the ε of one person — while the ledger charges that person once.

Two spellings of one ID must never be two persons (that under-counts), while two IDs
merged only over-count (both are charged for the runs of either, and a merged group is
protected as one person).  So the form merges generously:

* a number and its text are one ID: ``7``, ``7.0``, ``"7"``, ``" 7 "``, ``"007"``, ``"7e0"``;
* text is folded to one spelling: Unicode NFKC (full-width and other compatibility forms,
  composed accents), case folded, every default-ignorable or format character removed
  (byte-order mark, zero-width and direction marks, soft hyphen, variation selectors,
  combining grapheme joiner, Hangul fillers), every white space removed (also inside:
  ``"P 001"``, ``"P\\u00a0001"`` and ``"P001"`` are one ID), and every dash or minus sign
  written as ``-`` (``"P–001"``, ``"P‐001"`` and ``"P-001"``; ``"−7"`` is ``-7``);
* a number written with separators is that number: ``"1,000"``, ``"1 000"``, ``"1'000"``,
  ``"1,000.0"`` and ``"1.000.000"`` or ``"1.000,5"`` (dots grouping, a comma for decimals).
  A single dot group (``"1.000"``) is read as the decimal number 1, as everywhere else:
  it cannot be both 1 and 1000;
* a tuple (an ID made of several columns) is its parts' forms, length-prefixed.

Homoglyphs of other scripts (a Cyrillic ``Р`` for a Latin ``P``) are distinct IDs: no
re-saving or re-encoding of a file produces them, and merging scripts would be a guess.
A missing ID (None, NaN, ``pandas.NA``) is refused: it would be nobody's unit.
"""

from __future__ import annotations

import math
import numbers
import re
import unicodedata
from typing import Any

import numpy as np

from core.errors import DataError

__all__ = ["canonical_id", "folded_text", "INT64"]

INT64 = 2 ** 63

_IGNORABLE = (  # Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt); format characters (Cf) also go
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)
_MINUS = "\u2212\u2796\ufe63\uff0d"  # minus sign, heavy minus, small and full-width hyphen-minus
_GROUPING = dict.fromkeys(map(ord, ",_'"))
_DOT_GROUPED = re.compile(r"[+-]?\d{1,3}(?:\.\d{3})+(?:,\d+)?")


_TABLES: list = []


def _tables() -> dict[int, str | None]:
    """The translation of a text ID's characters: default-ignorable and format characters removed,
    dashes and minus signs written ``-``; built once from the Unicode database (a fraction of a
    second, on the first text ID that is not ASCII)."""
    if not _TABLES:
        table: dict[int, str | None] = {}
        for o in (*range(0x80, 0x40000), *range(0xE0000, 0xE1000)):  # past them: unassigned or private use
            category = unicodedata.category(chr(o))
            if category == "Pd" or chr(o) in _MINUS:
                table[o] = "-"
            elif category == "Cf":
                table[o] = None
        for first, last in _IGNORABLE:
            table.update(dict.fromkeys(range(first, last + 1)))
        _TABLES.append(table)
    return _TABLES[0]


def folded_text(text: str) -> str:
    """One spelling of a text ID (module docstring): NFKC, case folded, default-ignorable and
    format characters and all white space removed, dashes and minus signs as ``-``.

    Parameters
    ----------
    text : str

    Returns
    -------
    str
    """
    if not text.isascii():
        if not unicodedata.is_normalized("NFKC", text):
            text = unicodedata.normalize("NFKC", text)
        text = text.translate(_tables()).casefold()
        if not unicodedata.is_normalized("NFKC", text):  # a removed mark or a case fold may undo it
            text = unicodedata.normalize("NFKC", text)
    else:
        text = text.casefold()
    return "".join(text.split())


def _integer_form(n: int) -> bytes:
    if -INT64 <= n < INT64:
        return b"i" + n.to_bytes(8, "little", signed=True)
    return b"n" + str(n).encode()


def _number_form(x: float) -> bytes:
    if not math.isfinite(x):
        raise DataError(f"a privacy-unit ID must be a finite number or a text, got {x!r}.")
    if float(x).is_integer():
        return _integer_form(int(x))
    return b"f" + repr(float(x)).encode()


def _text_number(text: str) -> bytes | None:
    """The form of a folded text that writes a number, else None."""
    if not text or not (text[0].isdigit() or text[0] in "+-.,_'"):
        return None  # no number (a finite float's text starts so): most text IDs leave here
    if _DOT_GROUPED.fullmatch(text) and (text.count(".") > 1 or "," in text):
        text = text.replace(".", "").replace(",", ".")  # "1.000.000", "1.000,5"
    plain = text.translate(_GROUPING) if ("," in text or "_" in text or "'" in text) else text
    try:
        number = float(plain)
    except ValueError:
        return None
    if not math.isfinite(number):
        return None
    try:
        return _integer_form(int(plain))  # exact for long integers
    except ValueError:
        return _number_form(number)


def canonical_id(value: Any) -> bytes:
    """The bytes that decide which person an ID is (module docstring: merged generously).

    An integral number is ``b"i"`` and its 8 bytes (little-endian, two's complement); any
    other number ``b"f"`` and its ``repr``; a text that writes a number (separators allowed)
    is that number; other text ``b"s"`` and the UTF-8 of :func:`folded_text`; a tuple its
    parts, length-prefixed.

    Parameters
    ----------
    value : hashable
        A number, a text, bytes, a bool, a date or a tuple of those.

    Returns
    -------
    bytes

    Raises
    ------
    DataError
        For a missing ID (None, NaN, ``pandas.NA``) or one of another type.
    """
    if isinstance(value, str):
        text = folded_text(value)
        number = _text_number(text)
        return b"s" + text.encode("utf-8") if number is None else number
    if value is None:
        raise DataError("a privacy-unit ID is missing (None): every row read needs its unit's ID.")
    if isinstance(value, (bool, np.bool_, numbers.Integral)):
        return _integer_form(int(value))
    if isinstance(value, numbers.Real):
        if math.isnan(float(value)):
            raise DataError("a privacy-unit ID is missing (NaN): every row read needs its unit's ID.")
        return _number_form(float(value))
    if isinstance(value, bytes):
        return canonical_id(value.decode("utf-8", errors="backslashreplace"))
    if isinstance(value, tuple):
        parts = [canonical_id(v) for v in value]
        return b"(" + b"".join(len(x).to_bytes(4, "little") + x for x in parts)
    import pandas as pd

    if value is pd.NA or value is pd.NaT:
        raise DataError("a privacy-unit ID is missing (NA): every row read needs its unit's ID.")
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        return b"t" + pd.Timestamp(value).isoformat().encode()
    raise DataError(f"a privacy-unit ID must be a number, a text or a tuple of those, got {type(value).__name__}.")
