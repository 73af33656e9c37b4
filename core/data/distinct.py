"""A column's rule worked out once per distinct value: :func:`distinct` factorizes a
column (one hash pass), a rule runs on its distinct values only, and :func:`take` spreads
the outcome back over the rows.

Every per-cell rule of :mod:`core.data` (the missing-value markers, text cleaning, numbers
read from text) runs this way, whatever the path (the app, a whole file, a stream of
chunks): a column of a million cells with a few hundred distinct values costs a few
hundred evaluations of the rule and two integer gathers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["distinct", "take"]


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def distinct(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of ``column`` and each cell's position among them.

    Parameters
    ----------
    column : pandas.Series

    Returns
    -------
    codes : numpy.ndarray of intp, shape (len(column),)
        Each cell's position in ``values``; ``-1`` where the cell is missing (None, NaN,
        ``pd.NA``).
    values : numpy.ndarray of object
        The distinct present values, in order of first appearance.  A cell that cannot be
        hashed (a list, a dict) stands as its text ``str(cell)``; values of different
        types are distinct even where Python calls them equal (``1``, ``1.0``, ``True``).
    """
    try:
        codes, values = pd.factorize(column, use_na_sentinel=True)
    except TypeError:  # unhashable cells: by their text (what every rule reads of them)
        codes, values = pd.factorize(column.map(lambda v: v if _hashable(v) else str(v)), use_na_sentinel=True)
    values = np.asarray(values, dtype=object)
    if values.size and len({type(v) for v in values} - {str}) > 1:
        # values of several kinds (1, 1.0, True): equal as Python numbers, not as cells
        keyed = column.map(lambda v: v if pd.api.types.is_scalar(v) and pd.isna(v) else (type(v), v if _hashable(v) else str(v)))
        codes, keys = pd.factorize(keyed, use_na_sentinel=True)
        values = np.empty(len(keys), dtype=object)
        for i, key in enumerate(keys):
            values[i] = key[1]
    return np.asarray(codes, dtype=np.intp), np.asarray(values, dtype=object)


def take(per_value: np.ndarray, codes: np.ndarray, missing: Any) -> np.ndarray:
    """``per_value`` spread over the rows: ``per_value[codes]``, ``missing`` where a code is -1.

    Parameters
    ----------
    per_value : numpy.ndarray, shape (n_values,)
        The rule's outcome on each distinct value.
    codes : numpy.ndarray of intp
        From :func:`distinct`.
    missing : scalar
        The outcome on a missing cell.

    Returns
    -------
    numpy.ndarray, shape (len(codes),)
    """
    return np.append(per_value, np.array([missing], dtype=per_value.dtype))[codes]
