"""Private rows by their values: the per-row fingerprint a ledger accounts each row by.

A privacy guarantee protects each private row, so a ledger must follow each row over
every run that touched it, whatever container the row came in.  :func:`row_fingerprints`
gives each row a canonical fingerprint of its *values* (features and label), so that

* the row order does not matter (each row is hashed on its own);
* the container does not matter (a pandas DataFrame, a NumPy array, a list of lists);
* the numeric dtype does not matter: every number is written as the float64 of its
  float32 rounding (int, bool, float32 and float64 copies of a row agree; -0.0 is 0.0
  and every NaN is one NaN);
* anything that is not a number is written as the UTF-8 ``str`` of the value,
  length-prefixed.

Two rows that differ only beyond float32 precision get the same fingerprint: the ledger
then charges them as one row, which over-counts and is therefore safe.  Identical rows
(duplicates) share one account as well; the guarantee is for replace-one adjacency, so a
person with two identical records is protected as a group of two (docs/design.md §13).

The fingerprint is BLAKE2b-128 (keyed when a secret ``key`` is given).  It reveals nothing
about a row beyond equality, with the caveat of :func:`dataset_fingerprint`: someone who
can guess a whole row can confirm the guess; a secret ``key`` rules that out.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from core.errors import DataError

__all__ = ["row_fingerprints"]

_VERSION = b"private-label-lab/row/v1\x00"


def _is_number(x: Any) -> bool:
    return isinstance(x, (bool, int, float, np.number, np.bool_)) and not isinstance(x, (str, bytes))


def _columns(features: Any) -> list[np.ndarray]:
    """The columns of a table, an array or a list of rows, each a 1-D array."""
    if hasattr(features, "columns") and hasattr(features, "iloc"):  # pandas DataFrame
        return [features.iloc[:, j].to_numpy() for j in range(features.shape[1])]
    if hasattr(features, "to_numpy"):  # pandas Series: one column
        return [features.to_numpy()]
    arr = np.asarray(features) if not hasattr(features, "toarray") else np.asarray(features.toarray())
    if arr.ndim == 1:
        return [arr]
    if arr.ndim != 2:
        raise DataError(f"private rows must be a table (2-D), got an array of shape {arr.shape}.")
    return [arr[:, j] for j in range(arr.shape[1])]


def _canonical_numbers(col: np.ndarray) -> np.ndarray | None:
    """The column as float64 of its float32 rounding, or None when it is not numeric."""
    if col.dtype.kind in "biuf":
        vals = col.astype(np.float32).astype("<f8")
    elif col.dtype.kind == "O" and all(_is_number(x) for x in col.tolist()):
        vals = np.asarray([float(x) for x in col.tolist()], dtype=np.float32).astype("<f8")
    else:
        return None
    vals = vals + 0.0  # -0.0 → 0.0
    vals[np.isnan(vals)] = np.nan
    return vals


def row_fingerprints(features: Any, labels: Any = None, *, key: bytes | None = None) -> np.ndarray:
    """One canonical fingerprint per private row (values only; see the module docstring).

    Parameters
    ----------
    features : array-like or pandas.DataFrame, shape (n, p)
        The private rows' features.
    labels : array-like, shape (n,), optional
        Their labels (part of the row).
    key : bytes, optional
        A secret key for keyed BLAKE2b.

    Returns
    -------
    numpy.ndarray of str, shape (n,)
        32 hex digits per row; equal rows give equal fingerprints.

    Raises
    ------
    DataError
        When the features are not a table or the labels do not have one value per row.
    """
    cols = _columns(features)
    n = len(cols[0]) if cols else (int(np.shape(features)[0]) if np.ndim(features) else 0)
    if labels is not None:
        lab = _columns(labels)
        if len(lab) != 1 or len(lab[0]) != n:
            raise DataError(f"labels must be one value per row: {n} rows, got labels of shape {np.shape(labels)}.")
        cols = cols + lab
    numeric, text = [], []
    for j, col in enumerate(cols):
        vals = _canonical_numbers(col)
        if vals is None:
            text.append((j, col))
        else:
            numeric.append((j, vals))
    # The numeric block row by row (column positions are written too, so a text column
    # and a numeric column cannot trade places unnoticed).
    layout = (",".join(f"{j}n" for j, _ in numeric) + ";" + ",".join(f"{j}s" for j, _ in text)).encode()
    num = np.ascontiguousarray(np.column_stack([v for _, v in numeric])) if numeric else np.zeros((n, 0))
    text_cols = [[str(x).encode("utf-8") for x in col.tolist()] for _, col in text]
    out = np.empty(n, dtype=object)
    prefix = _VERSION + layout + b"\x00"
    k = bytes(key) if key is not None else b""
    for i in range(n):
        h = hashlib.blake2b(prefix, digest_size=16, key=k)
        h.update(num[i].tobytes())
        for tc in text_cols:
            s = tc[i]
            h.update(len(s).to_bytes(8, "little"))
            h.update(s)
        out[i] = h.hexdigest()
    return out.astype(str)
