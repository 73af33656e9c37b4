"""Warnings about the columns of a private table before it is used (issue "A real labeling job").

:func:`column_warnings` looks at each feature column and says, in a sentence, when it
looks like

``"identifier"``
    a per-row identifier: a name such as ``id``, ``uuid`` or ``name``, or text (or whole
    numbers) unique in every row.  Teachers cannot generalise from it, and a public
    export of it is a join key back to people;
``"free_text"``
    free text: many distinct long strings (one-hot encoding makes every value its own
    column);
``"date"``
    dates written as text (read as categories, one per day);
``"label_proxy"``
    a column that predicts the label almost perfectly on its own (e.g. COMPAS's
    ``is_recid`` beside ``two_year_recid``): often the outcome itself or a leak of it.
    This check is a NON-PRIVATE diagnostic computed on the private rows (a one-column
    rule fitted on part of them and scored on the rest); its result is for the data's
    owner only and is never exported.

The warnings never stop a run; the command line prints them as
``private-label-lab: warning: ...`` lines.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "ColumnWarning",
    "WARNING_KINDS",
    "IDENTIFIER_NAMES",
    "column_warnings",
    "single_column_accuracy",
]

WARNING_KINDS = ("identifier", "free_text", "date", "label_proxy")
"""The kinds of :class:`ColumnWarning`, in the order they are checked."""

IDENTIFIER_NAMES = frozenset(
    {"id", "uuid", "guid", "name", "firstname", "lastname", "fullname", "surname", "ssn", "email",
     "phone", "address"}
)
"""Words of a column name (split at anything but letters and digits) that mark an identifier."""

_DATE = re.compile(r"^\s*(\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})([ T]\d{1,2}:\d{2}(:\d{2})?)?\s*$")


@dataclass(frozen=True)
class ColumnWarning:
    """One warning about one column.

    Attributes
    ----------
    column : str
    kind : str
        One of :data:`WARNING_KINDS`.
    sentence : str
        What was found and what to do, in words.
    """

    column: str
    kind: str
    sentence: str

    def __str__(self) -> str:
        return self.sentence


def _name_words(name: str) -> set[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", str(name))
    words = {w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w}
    joined = re.sub(r"[^a-z0-9]+", "", str(name).lower())
    return words | {joined}


def _is_text(values: pd.Series) -> bool:
    return not (pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values))


def _whole_numbers(values: pd.Series) -> bool:
    x = pd.to_numeric(values, errors="coerce").dropna().to_numpy(dtype=float)
    return x.size > 0 and bool(np.all(np.isfinite(x)) and np.all(x == np.round(x)))


def _looks_like_dates(text: pd.Series) -> bool:
    sample = text.dropna().astype(str).head(500)
    if sample.empty:
        return False
    matched = sample.map(lambda v: bool(_DATE.match(v)))
    if matched.mean() < 0.9:
        return False
    parsed = pd.to_datetime(sample[matched], errors="coerce", format="mixed")
    return bool(parsed.notna().mean() >= 0.9)


def _codes(values: pd.Series) -> np.ndarray:
    """Each value as a category code (missing is a value of its own)."""
    text = values.astype(object).where(values.notna(), "\0missing")
    return pd.factorize(text.astype(str))[0]


def _per_value_majority(train_x, train_y, test_x, test_y, fallback: int) -> float:
    frame = pd.DataFrame({"x": train_x, "y": train_y})
    majority = frame.groupby("x")["y"].agg(lambda s: s.value_counts().idxmax())
    predicted = pd.Series(test_x).map(majority).fillna(fallback).to_numpy(dtype=np.int64)
    return float(np.mean(predicted == test_y))


def _stump(train_x, train_y, test_x, test_y) -> float:
    from sklearn.tree import DecisionTreeClassifier

    tree = DecisionTreeClassifier(max_depth=1, random_state=0)
    tree.fit(train_x.reshape(-1, 1), train_y)
    return float(np.mean(tree.predict(test_x.reshape(-1, 1)) == test_y))


def single_column_accuracy(values: pd.Series, labels: Any, *, holdout: float = 0.3, rng: int = 0) -> tuple[float, float]:
    """NON-PRIVATE: how well one column alone predicts the labels on held-out rows.

    The better of a per-value majority rule and (for numbers) a depth-1 decision tree,
    fitted on a random ``1 - holdout`` share of the rows and scored on the rest.

    Parameters
    ----------
    values : pandas.Series
        The column's values, one per row.
    labels : array-like, shape (n_rows,)
        The (private) labels of the same rows.
    holdout : float, default 0.3
        Share of the rows held out for scoring.
    rng : int, default 0
        Seed of the random split.

    Returns
    -------
    (accuracy, baseline)
        The held-out accuracy, and that of always answering the training rows' majority class.
    """
    y = pd.factorize(pd.Series(np.asarray(labels)).astype(str))[0]
    n = len(y)
    gen = np.random.default_rng(rng)
    order = gen.permutation(n)
    n_test = max(1, int(round(holdout * n)))
    test, train = order[:n_test], order[n_test:]
    if train.size == 0:
        return 0.0, 0.0
    fallback = int(np.bincount(y[train]).argmax())
    baseline = float(np.mean(y[test] == fallback))
    codes = _codes(values)
    best = _per_value_majority(codes[train], y[train], codes[test], y[test], fallback)
    if not _is_text(values):
        x = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
        finite = x[np.isfinite(x)]
        x = np.where(np.isfinite(x), x, (finite.min() - 1.0) if finite.size else 0.0)
        best = max(best, _stump(x[train], y[train], x[test], y[test]))
    return best, baseline


def column_warnings(
    frame: pd.DataFrame,
    label_column: str | None,
    *,
    labels: Any = None,
    proxy_accuracy: float = 0.98,
    min_rows: int = 20,
    max_rows: int = 50_000,
    rng: int = 0,
) -> list[ColumnWarning]:
    """Warnings about columns that look like identifiers, free text, dates or label proxies.

    Parameters
    ----------
    frame : pandas.DataFrame
        The private table: its feature columns, and the label column unless ``labels`` is given.
    label_column : str or None
        The label column's name (skipped as a feature); None when ``labels`` is given apart.
    labels : array-like, optional
        The labels, when they are not a column of ``frame``.
    proxy_accuracy : float
        A column whose one-column rule reaches this held-out accuracy (and removes at
        least half of the majority-class baseline's errors) is a ``"label_proxy"``.
    min_rows : int
        Fewer non-missing rows than this: no "unique per row" or proxy judgement.
    max_rows : int
        At most this many rows (a fixed random sample) are examined.
    rng : int
        Seed of the sample and of the proxy check's split (a fixed diagnostic, not noise).

    Returns
    -------
    list of ColumnWarning
        In column order; at most one of identifier/free text/date per column, plus a
        label-proxy warning where it applies.
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}.")
    if labels is None and label_column is not None and label_column in frame.columns:
        labels = frame[label_column].to_numpy()
    if labels is not None and len(np.asarray(labels)) != len(frame):
        raise ValueError("labels must have one value per row of frame.")
    if len(frame) > max_rows:
        keep = np.sort(np.random.default_rng(rng).choice(len(frame), size=max_rows, replace=False))
        frame = frame.iloc[keep].reset_index(drop=True)
        labels = None if labels is None else np.asarray(labels)[keep]
    label_text = f"'{label_column}'" if label_column is not None else "the label"
    out: list[ColumnWarning] = []
    for column in frame.columns:
        if column == label_column:
            continue
        values = frame[column]
        present = values.dropna()
        n = len(present)
        if n == 0:
            continue
        distinct = int(present.astype(str).nunique())
        text = _is_text(values)
        words = _name_words(column)
        found = None
        if text and _looks_like_dates(present):
            found = ColumnWarning(
                column, "date",
                f"Column '{column}' holds dates written as text (e.g. '{present.iloc[0]}'); they are read "
                f"as categories, one per distinct day ({distinct} here). Drop it (--drop {column}) or "
                "replace it by a number such as an age or a year before labeling.")
        elif words & IDENTIFIER_NAMES:
            found = ColumnWarning(
                column, "identifier",
                f"Column '{column}' looks like an identifier (its name); an identifier teaches the "
                f"teachers nothing and, copied into the labeled export, links rows back to people. "
                f"Drop it (--drop {column}).")
        elif text and n >= min_rows and distinct >= 0.5 * n:
            lengths = present.astype(str).str.len()
            if lengths.median() >= 20 or present.astype(str).str.count(" ").median() >= 3:
                found = ColumnWarning(
                    column, "free_text",
                    f"Column '{column}' looks like free text ({distinct} distinct values in {n} rows, "
                    f"typically {int(lengths.median())} characters); each text becomes a category of "
                    f"its own. Drop it (--drop {column}) or turn it into a few features first.")
        if found is None and n >= min_rows and distinct == n and (text or _whole_numbers(present)):
            found = ColumnWarning(
                column, "identifier",
                f"Column '{column}' looks like an identifier: its value is different in every one of "
                f"the {n} rows. Drop it (--drop {column}) unless it is a real feature.")
        if found is not None:
            out.append(found)
        if labels is None or n < min_rows or (found is not None and found.kind == "identifier"):
            continue
        accuracy, baseline = single_column_accuracy(values, labels, rng=rng)
        if accuracy >= proxy_accuracy and (1.0 - accuracy) <= 0.5 * (1.0 - baseline) and not math.isclose(baseline, 1.0):
            out.append(ColumnWarning(
                column, "label_proxy",
                f"Column '{column}' predicts the label {label_text} almost perfectly on its own "
                f"({accuracy:.1%} held-out accuracy of a one-column rule; the majority class alone "
                f"gives {baseline:.1%}): it may be the outcome itself or leak it. Drop it "
                f"(--drop {column}) unless that is intended. (A NON-PRIVATE diagnostic computed on "
                "the private rows: shown to you only, never exported.)"))
    return out
