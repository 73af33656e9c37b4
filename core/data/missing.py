"""Missing values: the ``missing=`` options, the markers, dropping or refusing rows with
missing values, and the counts reported.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.errors import ParameterError

from core.data.distinct import distinct, take

__all__ = [
    "MISSING_OPTIONS",
    "check_markers",
    "check_missing_option",
    "mark_missing",
    "marked",
    "missing_report",
    "row_list",
]

MISSING_OPTIONS = ("refuse", "impute", "drop")


def missing_report(frame: pd.DataFrame) -> str:
    """The columns of ``frame`` with missing values and their counts, as text (first 10).

    Parameters
    ----------
    frame : pandas.DataFrame

    Returns
    -------
    str
        E.g. ``"'age' (3), 'job' (1)"``; empty when nothing is missing.
    """
    counts = frame.isna().sum()
    counts = counts[counts > 0]
    shown = ", ".join(f"'{c}' ({int(n)})" for c, n in counts.head(10).items())
    return shown + (f" and {len(counts) - 10} more" if len(counts) > 10 else "")


def check_markers(markers) -> tuple[str, ...]:
    """``missing_markers`` as a tuple of distinct non-blank stripped strings.

    Parameters
    ----------
    markers : str, iterable of str or None
        The text values that mean "missing" (e.g. ``("?",)``); ``None`` means none.

    Returns
    -------
    tuple of str

    Raises
    ------
    ParameterError
        If ``markers`` is not text or a sequence of text.
    """
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


def marked(values: np.ndarray, markers: tuple[str, ...]) -> np.ndarray:
    """Which of ``values`` are text equal, after stripping, to a marker: the marker rule.

    Parameters
    ----------
    values : numpy.ndarray of object
        Cell values (a column's distinct values, :func:`core.data.distinct.distinct`).
    markers : tuple of str
        Stripped marker strings (see :func:`check_markers`).

    Returns
    -------
    numpy.ndarray of bool, shape (len(values),)
    """
    wanted = set(markers)
    return np.array([isinstance(v, str) and v.strip() in wanted for v in values], dtype=bool)


def mark_missing(frame: pd.DataFrame, markers: tuple[str, ...]) -> pd.DataFrame:
    """``frame`` with every text cell equal (after stripping) to a marker set to NaN.

    The rule (:func:`marked`) runs once per distinct value of a column.

    Parameters
    ----------
    frame : pandas.DataFrame
    markers : tuple of str
        Stripped marker strings (see :func:`check_markers`).

    Returns
    -------
    pandas.DataFrame
        A copy with the markers replaced by NaN (``frame`` itself when ``markers`` is empty).
    """
    if not markers:
        return frame
    out = frame.copy()
    for column in out.columns:
        values = out[column]
        if values.dtype != object and not pd.api.types.is_string_dtype(values):
            continue
        codes, uniques = distinct(values)
        hit = take(marked(uniques, markers), codes, False)
        if hit.any():
            out[column] = values.astype(object).mask(hit, np.nan)
    return out


def check_missing_option(missing) -> str:
    """Check the ``missing`` option: one of ``MISSING_OPTIONS``.

    Parameters
    ----------
    missing : str
        ``"refuse"``, ``"impute"`` or ``"drop"``.

    Returns
    -------
    str
        ``missing`` unchanged.

    Raises
    ------
    ParameterError
        If ``missing`` is not one of the options.
    """
    if missing not in MISSING_OPTIONS:
        raise ParameterError(
            f"missing must be 'refuse' (stop on missing feature values), 'impute' (fill them "
            f"inside each teacher's learning pipeline) or 'drop' (drop the rows that have "
            f"them), got {missing!r}."
        )
    return missing


def row_list(rows: np.ndarray, limit: int = 5) -> str:
    """Row positions (0-based) as 1-based data-row numbers, at most ``limit`` shown.

    Parameters
    ----------
    rows : numpy.ndarray of int
        0-based row positions.
    limit : int, default 5
        How many to list before ``...``.

    Returns
    -------
    str
        E.g. ``"1, 4, 9, ..."``.
    """
    shown = ", ".join(str(int(r) + 1) for r in rows[:limit])
    return shown + (", ..." if len(rows) > limit else "")
