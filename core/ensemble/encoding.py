"""Encode the public rows once for every teacher (docs/design.md §1.1, "Encode once").

Each teacher of a table with categorical columns (or imputation) is a pipeline: the table's
preprocessor (:meth:`core.data.Table.preprocessor`, fitted on the teacher's own chunk:
its category lists and imputation values) followed by the learner.  Asking every teacher
to transform the public rows repeats the expensive part — reading text categories and
one-hot encoding them — ``k`` times.  Here the public rows are encoded **once**:

:class:`SharedEncoder`
    Turns a block of public rows into an :class:`EncodedBlock`: the numeric columns as
    float64 (NaN where missing) and every categorical column as an integer code into a
    vocabulary taken from the **public rows** (it grows as blocks arrive; ``-1`` marks a
    missing cell).  It reads no private row: the vocabulary is public.
:class:`TeacherMap`
    One teacher's own preprocessing, read off its fitted preprocessor: for each column,
    the teacher's category list (a public code maps to the teacher's one-hot column, or
    to all zeros for a category its chunk never held, exactly as
    ``OneHotEncoder(handle_unknown="ignore")`` does), its imputation value and, for a
    numeric column it standardizes, its mean and scale.
    :meth:`TeacherMap.features` rebuilds, by integer gathers on the shared block, the very
    matrix the teacher's preprocessor would have produced — the same numbers, so the
    teacher's learner gives the same predictions.

The per-teacher steps (category lists, imputation values, scalings) therefore stay per teacher:
nothing fitted on one teacher's chunk reaches another teacher, and each vote is the same
function of its chunk as before (the replace-one argument of docs/design.md §1 is
unchanged).  :mod:`core.ensemble.stacked` goes further for linear learners.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from core.errors import DataError

__all__ = ["EncodedBlock", "SharedEncoder", "TeacherMap", "compile_teachers", "split_teacher"]


@dataclass(frozen=True)
class EncodedBlock:
    """A block of public rows, encoded once for every teacher.

    Attributes
    ----------
    numeric : numpy.ndarray of float64, shape (b, n_numeric)
        The numeric columns, NaN where missing.
    codes : numpy.ndarray of int64, shape (b, n_categorical)
        Each categorical cell's position in the encoder's vocabulary of that column,
        ``-1`` where missing.
    sizes : tuple of int
        The vocabulary sizes when the block was encoded (every code is below them).
    """

    numeric: np.ndarray
    codes: np.ndarray
    sizes: tuple[int, ...]

    @property
    def n_rows(self) -> int:
        """Number of rows in the block."""
        return int(self.numeric.shape[0] if self.numeric.size or not self.codes.size else self.codes.shape[0])


class SharedEncoder:
    """Encode public rows: numeric columns as floats, categories as codes of a public vocabulary.

    Parameters
    ----------
    numeric : sequence of str or int
        The numeric columns (names for a DataFrame, positions for an array).
    categorical : sequence of str
        The categorical columns (DataFrame input only).

    Notes
    -----
    The vocabulary of a categorical column is the list of values met in the public rows
    encoded so far, in order of first appearance; it grows with each block and never
    depends on a private row.  Codes already handed out never change.
    """

    def __init__(self, numeric: Sequence[Any], categorical: Sequence[Any]) -> None:
        self.numeric = list(numeric)
        self.categorical = list(categorical)
        self._values: list[list[Any]] = [[] for _ in self.categorical]
        self._index: list[pd.Index] = [pd.Index([], dtype=object) for _ in self.categorical]

    @property
    def sizes(self) -> tuple[int, ...]:
        """The current vocabulary size of every categorical column."""
        return tuple(len(v) for v in self._values)

    def vocabulary(self, column: int) -> pd.Index:
        """The vocabulary of categorical column ``column`` (by position), in code order."""
        return self._index[column]

    def encode(self, X: Any, codes: dict | None = None) -> EncodedBlock:
        """Encode a block of rows (a DataFrame, or a 2-D array of numeric columns).

        Parameters
        ----------
        X : pandas.DataFrame or numpy.ndarray
            Public rows with (at least) the encoder's columns.
        codes : dict, optional
            Per categorical column, ``(codes, values)`` with ``X[column]`` equal to
            ``values[codes]`` (``-1``: missing), as :func:`core.data.public.check_public_coded`
            hands them on: the column is not factorized again.

        Returns
        -------
        EncodedBlock
        """
        hints = codes
        if hasattr(X, "iloc"):
            numeric = X[self.numeric].to_numpy(dtype=np.float64) if self.numeric else np.empty((len(X), 0))
            codes = np.empty((len(X), len(self.categorical)), dtype=np.int64)
            for j, column in enumerate(self.categorical):
                given = None if hints is None else hints.get(column)
                codes[:, j] = self._codes(j, X[column]) if given is None else self._lookup(j, *given)
        else:
            arr = np.asarray(X)
            numeric = arr[:, self.numeric].astype(np.float64, copy=False) if self.numeric else np.empty((len(arr), 0))
            codes = np.empty((len(arr), 0), dtype=np.int64)
        return EncodedBlock(np.ascontiguousarray(numeric), codes, self.sizes)

    def _codes(self, j: int, values: pd.Series) -> np.ndarray:
        local, uniques = pd.factorize(values, use_na_sentinel=True)  # one hash pass; -1 where missing
        return self._lookup(j, local, uniques)

    def _lookup(self, j: int, local: np.ndarray, uniques: Any) -> np.ndarray:
        """Codes of the vocabulary of column ``j`` for cells ``uniques[local]`` (-1: missing),
        the vocabulary grown by the values not met before."""
        uniques = np.asarray(uniques, dtype=object)
        where = self._index[j].get_indexer(uniques)
        new = where < 0
        if new.any():  # only the values these cells hold join the vocabulary
            new &= np.bincount(local[local >= 0], minlength=len(uniques)) > 0
            self._values[j].extend(uniques[new].tolist())
            self._index[j] = pd.Index(self._values[j], dtype=object)
            where = self._index[j].get_indexer(uniques)
        lookup = np.append(where, -1).astype(np.int64)  # local code -1 (missing) -> -1
        return lookup[local]


# --------------------------------------------------------------------------- one teacher


def split_teacher(teacher: Any) -> tuple[Any, Any]:
    """A teacher's fitted preprocessor (a ``ColumnTransformer``) and the rest of it.

    Returns ``(None, teacher)`` for a teacher without one (a plain numeric table's
    learner, a :class:`~core.ensemble.teacher_ensemble.ConstantClassifier`).
    """
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline

    if isinstance(teacher, Pipeline) and len(teacher.steps) > 1 and isinstance(teacher.steps[0][1], ColumnTransformer):
        return teacher.steps[0][1], teacher[1:]
    return None, teacher


class _Unsupported(Exception):
    """The teacher's preprocessing is not one that can be read off (use the per-teacher path)."""


def _probe_missing(transformer: Any, columns: list, numeric: bool) -> np.ndarray:
    """What ``transformer`` outputs for one row whose every cell is missing."""
    dtype = np.float64 if numeric else object
    frame = pd.DataFrame({c: pd.Series([np.nan], dtype=dtype) for c in columns})
    try:
        return np.asarray(transformer.transform(frame), dtype=np.float64).ravel()
    except Exception:
        return np.full(0, np.nan)


def _numeric_steps(transformer: Any) -> tuple[Any, Any]:
    """A numeric branch's imputer and scaler (either may be None): ``"passthrough"``, a
    ``SimpleImputer``, a ``StandardScaler`` or a pipeline of an imputer then a scaler.

    Raises ``_Unsupported`` for any other transformer.
    """
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    steps = [s for _, s in transformer.steps] if isinstance(transformer, Pipeline) else [transformer]
    steps = [s for s in steps if s is not None and not _is_passthrough(s)]
    imputer = steps.pop(0) if steps and isinstance(steps[0], SimpleImputer) else None
    scaler = steps.pop(0) if steps and isinstance(steps[0], StandardScaler) else None
    if steps:
        raise _Unsupported
    return imputer, scaler


def _is_numeric(transformer: Any) -> bool:
    """Whether a fitted branch is one of :func:`_numeric_steps`' numeric branches."""
    try:
        _numeric_steps(transformer)
    except _Unsupported:
        return False
    return True


def _scaling(scaler: Any, width: int) -> tuple[np.ndarray, np.ndarray]:
    """A fitted ``StandardScaler``'s ``(mean, scale)``: its transform is ``(x - mean) / scale``."""
    mean = getattr(scaler, "mean_", None) if scaler is not None and scaler.with_mean else None
    scale = getattr(scaler, "scale_", None) if scaler is not None and scaler.with_std else None
    mean = np.zeros(width) if mean is None else np.asarray(mean, dtype=np.float64)
    scale = np.ones(width) if scale is None else np.asarray(scale, dtype=np.float64)
    if mean.shape != (width,) or scale.shape != (width,):
        raise _Unsupported
    return mean, scale


def _is_passthrough(transformer: Any) -> bool:
    """``"passthrough"``, or the identity ``FunctionTransformer`` scikit-learn fits in its place."""
    from sklearn.preprocessing import FunctionTransformer

    if isinstance(transformer, str):
        return transformer == "passthrough"
    return isinstance(transformer, FunctionTransformer) and transformer.func is None


def _onehot(transformer: Any) -> Any:
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    encoder, before = transformer, []
    if isinstance(transformer, Pipeline):
        *before, (_, encoder) = transformer.steps
        if not all(isinstance(step, SimpleImputer) for _, step in before):
            raise _Unsupported
    if not isinstance(encoder, OneHotEncoder):
        raise _Unsupported
    if (encoder.drop is not None or encoder.handle_unknown != "ignore"
            or encoder.min_frequency is not None or encoder.max_categories is not None):
        raise _Unsupported
    return encoder


class TeacherMap:
    """One teacher's fitted preprocessing, applied to a shared :class:`EncodedBlock`.

    Built by :func:`compile_teachers`.  :meth:`features` gives exactly the matrix the
    teacher's own preprocessor gives on the same rows (same values, same column order).

    Attributes
    ----------
    segments : list of tuple
        In output order: ``("num", positions, fill, mean, scale)`` for numeric columns
        (``fill``: the value a missing cell takes, NaN to keep it missing; then the
        teacher's input is ``(value - mean) / scale``, mean 0 and scale 1 where it does not
        standardize), ``("cat", position, categories, missing_row)`` for one categorical
        column (the teacher's category list and its output for a missing cell).
    n_features : int
        Number of columns the teacher's learner reads.
    """

    def __init__(self, segments: list[tuple], n_features: int) -> None:
        self.segments = segments
        self.n_features = int(n_features)
        self._tables: dict[int, tuple[int, np.ndarray]] = {}

    def table(self, position: int, vocabulary: pd.Index) -> np.ndarray:
        """The teacher's one-hot rows for every code of a vocabulary, then its missing row.

        Shape ``(len(vocabulary) + 1, n_categories)``: row ``v`` is the teacher's encoding
        of vocabulary entry ``v`` (zeros for a category its chunk never held), the last row
        its encoding of a missing cell (so code ``-1`` indexes it).
        """
        size = len(vocabulary)
        cached = self._tables.get(position)
        if cached is not None and cached[0] == size:
            return cached[1]
        segment = next(s for s in self.segments if s[0] == "cat" and s[1] == position)
        categories, missing_row = segment[2], segment[3]
        out = np.zeros((size + 1, len(categories)), dtype=np.float64)
        where = pd.Index(categories, dtype=object).get_indexer(vocabulary) if size else np.empty(0, dtype=np.int64)
        known = np.flatnonzero(where >= 0)
        out[known, where[known]] = 1.0
        out[size] = missing_row
        self._tables[position] = (size, out)
        return out

    def features(self, block: EncodedBlock, encoder: SharedEncoder, dtype=np.float64,
                 used: np.ndarray | None = None) -> np.ndarray:
        """The teacher's input matrix for the rows of ``block``, ``(b, n_features)``.

        ``dtype`` float32 is for learners that read float32 anyway (trees, which convert
        their input): the same values they would see.  ``used`` (a boolean mask over the
        teacher's columns) fills only those columns and leaves the others 0, for a learner
        that reads no other column (a tree's split features).
        """
        b = block.numeric.shape[0] if block.numeric.size else block.codes.shape[0]
        out = (np.zeros if used is not None else np.empty)((b, self.n_features), dtype=dtype)
        col = 0
        for segment in self.segments:
            if segment[0] == "num":
                positions, fill, mean, scale = segment[1:5]
                width = len(positions)
                values = block.numeric[:, positions]
                if np.any(np.isfinite(fill)):
                    values = np.where(np.isnan(values), fill, values)
                if np.any(mean != 0.0) or np.any(scale != 1.0):
                    values = (values - mean) / scale  # StandardScaler.transform's operations, in its order
                if used is None:
                    out[:, col: col + width] = values
                else:
                    keep = np.flatnonzero(used[col: col + width])
                    out[:, col + keep] = values[:, keep]
                col += width
            else:
                position = segment[1]
                table = self.table(position, encoder.vocabulary(position))
                width = table.shape[1]
                codes = block.codes[:, position]
                if used is None:
                    out[:, col: col + width] = table[codes]
                else:
                    keep = np.flatnonzero(used[col: col + width])
                    if keep.size:
                        out[:, col + keep] = table[:, keep][codes]
                col += width
        return out


def _teacher_map(preprocessor: Any, encoder_columns: tuple[list, list], n_input: int | None) -> TeacherMap:
    """Read a teacher's fitted ``ColumnTransformer`` (or none: every column numeric)."""
    numeric_cols, categorical_cols = encoder_columns
    if preprocessor is None:
        positions = list(range(int(n_input)))
        n = len(positions)
        return TeacherMap([("num", positions, np.full(n, np.nan), np.zeros(n), np.ones(n))], n)
    if getattr(preprocessor, "sparse_output_", False):
        raise _Unsupported
    segments: list[tuple] = []
    width = 0
    for name, transformer, columns in preprocessor.transformers_:
        if isinstance(transformer, str) and transformer == "drop":
            continue
        columns = list(columns)
        if not columns:
            continue
        if name == "remainder":
            raise _Unsupported
        if _is_numeric(transformer):
            if not all(c in numeric_cols for c in columns):
                raise _Unsupported
            positions = [numeric_cols.index(c) for c in columns]
            imputer, scaler = _numeric_steps(transformer)
            if imputer is None:
                fill = np.full(len(columns), np.nan)
            else:
                fill = _probe_missing(imputer, columns, numeric=True)
                if fill.shape[0] != len(columns):
                    raise _Unsupported
            mean, scale = _scaling(scaler, len(columns))
            segments.append(("num", positions, fill, mean, scale))
            width += len(columns)
            continue
        encoder = _onehot(transformer)
        if not all(c in categorical_cols for c in columns):
            raise _Unsupported
        lengths = [len(c) for c in encoder.categories_]
        # a missing cell: the imputer's value, one-hot encoded; without an imputer the
        # encoder ignores it (all zeros), as it ignores any category it did not see
        missing = _probe_missing(transformer, columns, numeric=False) if encoder is not transformer else np.zeros(0)
        if missing.shape[0] != sum(lengths):
            missing = np.zeros(sum(lengths))
        start = 0
        for column, categories, length in zip(columns, encoder.categories_, lengths):
            cats = np.asarray(categories, dtype=object)
            if any(not isinstance(c, str) for c in cats):  # NaN or numbers as categories: not read off
                raise _Unsupported
            segments.append(("cat", categorical_cols.index(column), cats, missing[start: start + length]))
            start += length
            width += length
    return TeacherMap(segments, width)


def _encoder_columns(preprocessor: Any) -> tuple[list, list]:
    """The numeric and categorical input columns of a fitted table preprocessor."""
    numeric: list = []
    categorical: list = []
    for name, transformer, columns in preprocessor.transformers_:
        if isinstance(transformer, str) and transformer == "drop":
            continue
        if _is_numeric(transformer):
            numeric.extend(columns)
        else:
            categorical.extend(columns)
    return numeric, categorical


def compile_teachers(teachers: Sequence[Any], n_input: int | None) -> tuple[SharedEncoder, list] | None:
    """One shared encoder and, per teacher, its map and the learner it feeds.

    Parameters
    ----------
    teachers : sequence of fitted estimators
        The teachers (pipelines behind the table's preprocessor, bare learners, or
        :class:`~core.ensemble.teacher_ensemble.ConstantClassifier`).
    n_input : int or None
        Number of input columns for array input (a plain numeric table), else None.

    Returns
    -------
    (SharedEncoder, list of (TeacherMap or None, learner)) or None
        None when a teacher's preprocessing cannot be read off (a custom pipeline): the
        caller then asks every teacher on the rows themselves.  A constant teacher gets
        ``(None, teacher)``.
    """
    from core.ensemble.teacher_calls import ConstantClassifier

    columns = None
    out: list = []
    try:
        for teacher in teachers:
            if isinstance(teacher, ConstantClassifier):
                out.append((None, teacher))
                continue
            preprocessor, tail = split_teacher(teacher)
            if preprocessor is None and n_input is None:
                raise _Unsupported
            these = ([], []) if preprocessor is None else _encoder_columns(preprocessor)
            if columns is None:
                columns = these
            elif these != columns:
                raise _Unsupported
            out.append((_teacher_map(preprocessor, columns, n_input), tail))
    except _Unsupported:
        return None
    if columns is None or (n_input is not None and columns == ([], [])):
        encoder = SharedEncoder(list(range(int(n_input or 0))), [])
    else:
        encoder = SharedEncoder(*columns)
    return encoder, out


def check_block_columns(X: Any, encoder: SharedEncoder) -> None:
    """Refuse rows that lack one of the encoder's columns (the teachers' own message)."""
    if hasattr(X, "columns"):
        absent = [c for c in encoder.numeric + encoder.categorical if c not in X.columns]
        if absent:
            raise DataError(
                f"The query rows lack column(s) {', '.join(map(repr, absent[:5]))}. "
                "The query rows must have the private table's columns."
            )
    elif encoder.categorical:
        raise DataError("The query rows must be a table with the private table's named columns.")
