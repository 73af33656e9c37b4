"""The labeled table: :class:`Table` and :func:`table_from_arrays`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from core.errors import DataError, ParameterError

from core.data.missing import MISSING_OPTIONS

__all__ = [
    "Table",
    "table_from_arrays",
    "LABEL_NAMES",
    "MAX_CLASSES",
]

#: Column names (compared ignoring case) taken as the label column by default, in order.
LABEL_NAMES: tuple[str, ...] = ("label", "target", "y", "class")
#: More distinct labels than this is refused: a regression target or an identifier.
MAX_CLASSES = 100


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
    dropped_columns : tuple of str
        Feature columns dropped because they were empty in every row
        (``load_table(..., drop_empty_columns=True)``).
    rows : numpy.ndarray of int64, shape (n_rows,)
        Each row's number in the source file (1 = the first data row after the header),
        kept through dropped rows and random splits, so that an export of a part can be
        joined back to the file.  Default ``1..n_rows``.
    unit : core.data.units.PrivacyUnit or None
        The declared privacy unit (the persons named by a unit column, which is not a
        feature), or None: each row is a unit.  Its IDs are private (in memory only).
        :attr:`privacy_unit` gives the unit in both cases.  Under ``missing="drop"`` it
        keeps every person of the file (of this part), those whose every row was dropped
        included (with no row), so its number of persons is the file's.
    source_rows : numpy.ndarray of int64 or None
        Under ``missing="drop"`` without a unit: the numbers of the file's rows this table
        stands for before the drop (the rows kept and those dropped; a part made by
        :func:`split_public` holds its own share).  None otherwise.  Public: a function of
        the file's number of rows and of the split's randomness, never of a value.
    classes_declared : bool
        Whether :attr:`class_names` was declared by the user (public by construction:
        ``load_table(..., classes=...)``, ``table_from_arrays(..., classes_declared=True)``),
        or read from the rows and then treated as public: a release names every class a row
        holds (docs/design.md §1.3).

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
    dropped_columns: tuple[str, ...] = ()
    rows: np.ndarray | None = field(default=None, repr=False)
    unit: "PrivacyUnit | None" = field(default=None, repr=False)
    source_rows: np.ndarray | None = field(default=None, repr=False)
    classes_declared: bool = False

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
        if self.missing not in MISSING_OPTIONS:
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
        rows = np.arange(1, labels.shape[0] + 1) if self.rows is None else np.asarray(self.rows)
        if rows.shape != labels.shape or (rows.size and not np.issubdtype(rows.dtype, np.integer)):
            raise DataError(f"Table.rows must give one whole row number per row ({labels.shape[0]}), got shape {rows.shape}.")
        object.__setattr__(self, "rows", rows.astype(np.int64, copy=False))
        object.__setattr__(self, "class_names", tuple(str(c) for c in self.class_names))
        object.__setattr__(self, "classes_declared", bool(self.classes_declared))
        if self.source_rows is not None:
            source = np.unique(np.asarray(self.source_rows, dtype=np.int64))
            if not np.isin(rows, source).all():
                raise DataError("Table.source_rows must hold the number of every row of the table.")
            object.__setattr__(self, "source_rows", source)
        if self.unit is not None:
            from core.data.units import PrivacyUnit

            if not isinstance(self.unit, PrivacyUnit) or self.unit.n_rows != labels.shape[0]:
                raise DataError("Table.unit must be a PrivacyUnit with one unit per row (core.data.units.privacy_unit).")
            if self.unit.per_row:
                object.__setattr__(self, "unit", None)
            elif self.unit.column in columns:
                raise DataError(f"The privacy unit column '{self.unit.column}' cannot also be a feature.")

    def __repr__(self) -> str:
        unit = "" if self.unit is None else f", privacy_unit={self.unit.column!r}"
        return (
            f"Table(name={self.name!r}, n_rows={self.n_rows}, n_features={len(self.feature_names)} "
            f"({len(self.numeric_columns)} numeric, {len(self.categorical_columns)} categorical), "
            f"n_classes={self.n_classes}, label_column={self.label_column!r}, missing={self.missing!r}{unit})"
        )

    @property
    def unit_ids(self) -> np.ndarray:
        """The privacy-unit ID of each row: the person's ID (text) with a unit, else the row's
        number in the source file (:attr:`rows`).  Private (in memory only).

        A ledger charges runs by :attr:`ledger_units` (the IDs only where a unit is declared).

        Returns
        -------
        numpy.ndarray, shape (n_rows,)
        """
        if self.unit is None:
            return self.rows.copy()
        return self.unit.ids[self.unit.codes]

    @property
    def ledger_units(self) -> np.ndarray | None:
        """What a ledger charges a run on this table to (docs/design.md §9):
        ``ledger.charge(entry, units=table.ledger_units)``.

        With a declared unit, the persons' IDs (:attr:`unit_ids`): each person's runs
        compose in their own account, so a run on a part split by person (the app's
        training part, a fold) charges only that part's persons, all of a person's rows
        together.  Without one, None: the run counts against the whole dataset.  Row numbers
        are no identity (a re-saved file with rows added in front renumbers every row), so
        charging by them could under-count.  Also None when the table was loaded with
        ``missing="drop"``: which persons are left after the drop depends on their values
        (a person whose every row misses its label is gone), so charging the persons left
        would make a charge, and a refusal, read a private value and leave a dropped person's
        account untouched by runs that reveal that they were dropped; the whole dataset is
        charged instead (docs/design.md §9).

        Returns
        -------
        numpy.ndarray or None
        """
        return None if self.unit is None or self.missing == "drop" else self.unit_ids

    @property
    def n_units(self) -> int:
        """The number of privacy units (rows, or persons with a unit) of the file (of this part)
        BEFORE any row was dropped: public under replace-one adjacency (a neighbouring file has
        as many rows and persons), whatever the values.  Every count that leaves the owner or
        sets a parameter (the report's counts, ``k``'s limits, the DP-training routes' ``n``)
        reads this, never the rows left after ``missing="drop"`` (docs/design.md §1.2).

        Returns
        -------
        int
        """
        if self.unit is not None:
            return self.unit.n_units
        return self.n_rows if self.source_rows is None else int(self.source_rows.size)

    @property
    def partition_units(self):
        """What the teachers' chunks are made of (``train_teachers(..., units=table.partition_units)``).

        With a unit, the persons (:attr:`unit`: a keyed hash of each ID).  Under
        ``missing="drop"`` without a unit, each row as the unit it is in the file: a
        :class:`core.data.units.PrivacyUnit` over the file's row numbers
        (:attr:`source_rows`), so a row's chunk is a keyed hash of its number in the file
        and a row removed by the drop leaves every other row's chunk unchanged (a slice of a
        permutation of the rows left would move the chunk boundaries).  Otherwise None:
        slices of a random permutation of the ``n`` rows (``n`` public under replace-one).

        Returns
        -------
        core.data.units.PrivacyUnit or None
        """
        if self.unit is not None:
            return self.unit
        if self.source_rows is None:
            return None
        from core.data.units import PrivacyUnit

        codes = np.searchsorted(self.source_rows, self.rows).astype(np.int64)
        return PrivacyUnit(None, codes, self.source_rows.astype(str).astype(object))

    @property
    def privacy_unit(self):
        """The privacy unit: the declared persons, or each row (:class:`core.data.units.PrivacyUnit`).

        Returns
        -------
        core.data.units.PrivacyUnit
        """
        if self.unit is not None:
            return self.unit
        from core.data.units import privacy_unit

        return privacy_unit(n_rows=self.n_rows)

    @property
    def n_rows(self) -> int:
        """Number of rows.

        Returns
        -------
        int
            The rows of ``features`` (and of ``labels``).
        """
        return int(self.features.shape[0])

    @property
    def n_classes(self) -> int:
        """Number of classes C (class ids ``0..C-1``).

        Returns
        -------
        int
        """
        return len(self.class_names)

    @property
    def feature_names(self) -> tuple[str, ...]:
        """The feature column names, in order.

        Returns
        -------
        tuple of str
        """
        return tuple(str(c) for c in self.features.columns)

    @property
    def class_counts(self) -> np.ndarray:
        """Rows per class id, shape (C,).  Computed from the private labels: a non-private
        diagnostic when the table is the private table.

        Returns
        -------
        numpy.ndarray of int64, shape (C,)
        """
        return np.bincount(self.labels, minlength=self.n_classes).astype(np.int64)

    def preprocessor(self, *, standardize: bool = False):
        """An unfitted scikit-learn ``ColumnTransformer`` for this table's features.

        Numeric columns are passed through (after a median ``SimpleImputer`` when the table
        was loaded with ``missing="impute"``); categorical columns are one-hot encoded by
        ``OneHotEncoder(handle_unknown="ignore")`` (after a most-frequent ``SimpleImputer``
        when imputing), so categories unseen in training encode as all zeros.  The output
        is a dense float array, the numeric columns first.  With ``standardize`` the
        numeric columns are also standardized (``StandardScaler``: zero mean, unit
        variance) while the one-hot columns stay 0/1: that is how a learner's
        ``standardize`` is applied to a table (:func:`core.pipeline.teacher_model`), since
        standardizing a one-hot column seen in one row of a hundred turns it into a column
        of ±10 that regularization barely restrains.  Put it in front of a learner with
        ``sklearn.pipeline.make_pipeline(table.preprocessor(), learner)``, or let
        :func:`core.pipeline.teacher_model` do it: each teacher then fits its own encoder,
        imputer and scaler on its own chunk, which keeps the chunks disjoint.

        Never fit it (or the pipeline) on all private rows at once to impute them: an
        imputer (or scaler) fitted on all private rows is a release of their statistics
        (medians, most frequent categories, means and variances) that no teacher's chunk
        bounds.  Nor fit it on public rows for the teachers: their imputers and scalers see
        their own chunk only, and the public rows are only transformed.

        Parameters
        ----------
        standardize : bool, default False
            Standardize the numeric columns (never the one-hot columns).

        Returns
        -------
        sklearn.compose.ColumnTransformer
        """
        from sklearn.compose import ColumnTransformer
        from sklearn.impute import SimpleImputer
        from sklearn.pipeline import Pipeline
        from sklearn.preprocessing import OneHotEncoder, StandardScaler

        impute = self.missing == "impute"
        transformers = []
        if self.numeric_columns:
            steps = []
            if impute:
                steps.append(("impute", SimpleImputer(strategy="median", keep_empty_features=True)))
            if standardize:
                steps.append(("scale", StandardScaler()))
            numeric = "passthrough" if not steps else steps[0][1] if len(steps) == 1 else Pipeline(steps)
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
    units=None,
    unit_column: str = "person",
    classes_declared: bool = False,
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
    units : array-like, optional
        One privacy-unit ID per row (the persons); None: each row is a unit.
    unit_column : str, default "person"
        The name the unit is described by (it is not a feature).
    classes_declared : bool, default False
        ``class_names`` is the user's declared, public class list (``Table.classes_declared``,
        docs/design.md §1.3); needs ``class_names``.

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
    if classes_declared and class_names is None:
        raise ParameterError("classes_declared=True needs the declared class_names.")
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
        classes_declared=bool(classes_declared),
        label_column=str(label_column),
        numeric_columns=tuple(feature_names),
        categorical_columns=(),
        name=str(name),
        unit=None if units is None else _unit(units, unit_column, X.shape[0]),
    )


def _unit(units, column: str, n_rows: int):
    from core.data.units import privacy_unit

    return privacy_unit(units, column, n_rows=n_rows)
