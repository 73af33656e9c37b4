"""Label stand-ins: columns that agree with the label, or tell almost everything about it.

A column that is the outcome itself, or a leak of it (COMPAS's ``is_recid`` and ``event``
beside the label ``two_year_recid``; a cause of death filled in only for those who died; a
follow-up time that ends at the outcome), lets teachers score well without learning
anything that will be known when the labels are used.  Every column is tested, whatever
its type and number of values, in three ways:

values
    The column's values as categories, missing a value of its own and **rare values
    grouped** (a value seen on fewer than :data:`RARE_MIN` rows, or 1 % of the rows, joins
    one "other" group), so a text column with thousands of values is tested like one with
    three.  Its *agreement* is the held-out accuracy of answering each value's most common
    class (fitted on a random 70 % of the rows, scored on the other 30 %); its
    *information* the uncertainty coefficient U = I(column; label) / H(label) of the same
    grouped values (Theil's U; 0: independent, 1: the label is a function of the column).
missingness
    Whether the cell is filled in, as a column of its own (agreement and information as
    above): a column present exactly when the label is 1 is the label.
threshold
    For a number column, the held-out accuracy of the best single threshold (a depth-1
    decision tree; missing below every value).

Beside each, the accuracy of always answering the most common class (the baseline).  A
column is flagged when its values or its missingness agree with the label on at least
:data:`AGREEMENT` of held-out rows (removing at least half of the baseline's errors) or
explain at least :data:`INFORMATION` of its entropy; when one threshold reaches
:data:`THRESHOLD_ACCURACY` (an ordinary strong feature -- a tumour's size, a person's
income -- predicts well, but not that well); or when a number named like a time or an
event measured up to the outcome (follow-up, survival, duration, days, death...: see
:data:`OUTCOME_TIME_WORDS`) removes at least :data:`OUTCOME_TIME_ERRORS` (a fifth) of
the baseline's errors at one threshold (ACTG 175's follow-up ``days`` beside its event
``cens``: 82 % against 76 %).

All of it is computed on the private rows: **NON-PRIVATE diagnostics** for the data's
owner, shown as such and never exported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "StandIn",
    "DISCRETE_MAX_VALUES",
    "RARE_MIN",
    "OUTCOME_TIME_WORDS",
    "stand_in",
    "single_column_accuracy",
    "uncertainty_coefficient",
]

DISCRETE_MAX_VALUES = 12
"""A column with at most this many distinct values is said to have few values (``StandIn.discrete``);
every column is tested whatever its number of values."""

RARE_MIN = 10
"""A value seen on fewer training rows than this (or than 1 % of them) joins the "other" group."""

OUTCOME_TIME_WORDS = frozenset({
    "follow", "followup", "fu", "survival", "surv", "duration", "time", "days", "tte",
    "censor", "censored", "los", "discharge", "death", "died", "dead", "deceased", "outcome", "event",
    "readmission", "readmitted",
})
"""Words of a number column's name that mark a time or an event measured up to the outcome."""

OUTCOME_TIME_ERRORS = 0.2
"""Share of the baseline's errors that one threshold on such a column must remove to be flagged."""

AGREEMENT = 0.85
"""A column with few values whose one-column rule agrees with the label on at least this share
of held-out rows (and removes at least half of the baseline's errors) is a stand-in."""

THRESHOLD_ACCURACY = 0.98
"""A number column with many values that one threshold turns into the label on at least this
share of held-out rows (removing at least half of the baseline's errors) is a stand-in."""

INFORMATION = 0.6
"""A column with few values that explains at least this share of the label's entropy is a stand-in."""


@dataclass(frozen=True)
class StandIn:
    """The stand-in statistics of one column (NON-PRIVATE: computed on the private rows).

    Attributes
    ----------
    agreement : float
        Held-out accuracy of the one-column rule.
    baseline : float
        Held-out accuracy of always answering the training rows' most common class.
    information : float
        Uncertainty coefficient I(column; label) / H(label), in [0, 1].
    discrete : bool
        True when the column has few distinct values (at most :data:`DISCRETE_MAX_VALUES`).
    flagged : bool
        True when the column looks like a stand-in for the label.
    test : str
        The test the figures come from: ``"values"``, ``"missingness"``, ``"threshold"`` or
        ``"outcome time"`` (a threshold on a number named like a time up to the outcome).
    grouped : int
        How many rare values were grouped into "other" (``"values"`` test).
    """

    agreement: float
    baseline: float
    information: float
    discrete: bool
    flagged: bool
    test: str = "values"
    grouped: int = 0


def _codes(values: pd.Series) -> np.ndarray:
    """Each value as a category code (missing is a value of its own)."""
    text = values.astype(object).where(values.notna(), "\0missing")
    return pd.factorize(text.astype(str))[0]


def _numbers(values: pd.Series) -> np.ndarray | None:
    """The column as finite floats (missing below every value), or None for text."""
    if pd.api.types.is_bool_dtype(values):
        return values.astype(float).to_numpy()
    if not pd.api.types.is_numeric_dtype(values):
        head = values.dropna().head(200)
        if pd.to_numeric(head, errors="coerce").isna().any():
            return None  # text seen in the first values: no need to read them all
    x = pd.to_numeric(values, errors="coerce")
    if int(x.notna().sum()) < int(values.notna().sum()):
        return None  # some present value is not a number: a text column
    x = x.to_numpy(dtype=float)
    finite = x[np.isfinite(x)]
    return np.where(np.isfinite(x), x, (finite.min() - 1.0) if finite.size else 0.0)


def _per_value_majority(train_x, train_y, test_x, test_y, fallback: int) -> float:
    """Held-out accuracy of answering each value's most common training class (codes ``0..``)."""
    n_values = int(max(train_x.max(initial=0), test_x.max(initial=0))) + 1
    n_classes = int(max(train_y.max(initial=0), test_y.max(initial=0))) + 1
    counts = np.bincount(train_x * n_classes + train_y, minlength=n_values * n_classes).reshape(n_values, n_classes)
    majority = np.where(counts.sum(axis=1) > 0, counts.argmax(axis=1), fallback)
    return float(np.mean(majority[test_x] == test_y))


def _stump(train_x, train_y, test_x, test_y) -> float:
    """Held-out accuracy of the best single threshold (a depth-1 tree: each side answers its
    most common training class), the threshold halfway between two training values."""
    order = np.argsort(train_x, kind="stable")
    x, y = train_x[order], train_y[order]
    n_classes = int(max(y.max(initial=0), test_y.max(initial=0))) + 1
    left = np.cumsum(np.eye(n_classes, dtype=np.int64)[y], axis=0)  # class counts of x[:i+1]
    total = left[-1]
    cuts = np.flatnonzero(x[1:] > x[:-1])  # split after position i
    if cuts.size == 0:
        majority = int(total.argmax())
        return float(np.mean(test_y == majority))
    correct = left[cuts].max(axis=1) + (total - left[cuts]).max(axis=1)
    best = cuts[int(np.argmax(correct))]
    threshold = (x[best] + x[best + 1]) / 2.0
    below, above = int(left[best].argmax()), int((total - left[best]).argmax())
    predicted = np.where(test_x <= threshold, below, above)
    return float(np.mean(predicted == test_y))


def _label_codes(labels: Any) -> np.ndarray:
    return pd.factorize(pd.Series(np.asarray(labels)).astype(str))[0]


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
        Seed of the random split (a fixed diagnostic, not noise).

    Returns
    -------
    (accuracy, baseline)
        The held-out accuracy, and that of always answering the training rows' majority class.
    """
    values = pd.Series(values).reset_index(drop=True)
    y = _label_codes(labels)
    n = len(y)
    order = np.random.default_rng(rng).permutation(n)
    n_test = max(1, int(round(holdout * n)))
    test, train = order[:n_test], order[n_test:]
    if train.size == 0:
        return 0.0, 0.0
    fallback = int(np.bincount(y[train]).argmax())
    baseline = float(np.mean(y[test] == fallback))
    codes = _codes(values)
    best = _per_value_majority(codes[train], y[train], codes[test], y[test], fallback)
    x = _numbers(values)
    if x is not None:
        best = max(best, _stump(x[train], y[train], x[test], y[test]))
    return best, baseline


def _entropy(counts: np.ndarray) -> float:
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log2(p)).sum())


def uncertainty_coefficient(values: pd.Series, labels: Any, *, bins: int = 10) -> float:
    """NON-PRIVATE: I(column; label) / H(label) from the rows' plug-in frequencies.

    Parameters
    ----------
    values : pandas.Series
        The column (numbers with more than ``bins`` distinct values are cut into ``bins``
        quantile bins; missing is a value of its own).
    labels : array-like
        The labels of the same rows.
    bins : int, default 10

    Returns
    -------
    float
        In [0, 1]; 0 when the label has a single class.
    """
    values = pd.Series(values).reset_index(drop=True)
    y = _label_codes(labels)
    x = _numbers(values)
    if x is not None and len(np.unique(x)) > bins:
        edges = np.unique(np.quantile(x, np.linspace(0, 1, bins + 1)[1:-1]))
        codes = np.searchsorted(edges, x, side="right")
    else:
        codes = _codes(values)
    return _plug_in_information(codes, y)


def _grouped_codes(codes: np.ndarray, train: np.ndarray) -> tuple[np.ndarray, int]:
    """Codes with the values rare on the training rows merged into one "other" code (0)."""
    counts = np.bincount(codes[train], minlength=int(codes.max(initial=0)) + 1)
    rare_min = max(RARE_MIN, int(np.ceil(0.01 * train.size)))
    common = counts >= rare_min
    mapping = np.zeros(counts.size, dtype=np.int64)
    mapping[common] = np.arange(1, int(common.sum()) + 1)
    return mapping[codes], int((~common & (counts > 0)).sum())


def _plug_in_information(codes: np.ndarray, y: np.ndarray) -> float:
    """Theil's U of the label given the codes, from the rows' plug-in frequencies."""
    codes = pd.factorize(codes)[0]
    n_classes = int(y.max(initial=0)) + 1
    table = np.bincount(codes * n_classes + y, minlength=(int(codes.max(initial=0)) + 1) * n_classes)
    table = table.reshape(-1, n_classes).astype(float)
    h_y = _entropy(table.sum(axis=0))
    if h_y == 0.0:
        return 0.0
    h_y_given_x = sum(row.sum() / table.sum() * _entropy(row) for row in table)
    return float(min(1.0, max(0.0, (h_y - h_y_given_x) / h_y)))


def _name_words(name: str | None) -> set[str]:
    import re

    if not name:
        return set()
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", str(name))
    return {w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w}


def stand_in(values: pd.Series, labels: Any, *, rng: int = 0, name: str | None = None) -> StandIn:
    """NON-PRIVATE: whether one column stands in for the label (values, missingness, threshold).

    Every column is tested, whatever its type and number of values (module docstring):
    its values with rare ones grouped, whether it is filled in, and (numbers) one
    threshold.  The returned figures are those of the strongest test that flagged the
    column, or of the strongest test when none did.

    Parameters
    ----------
    values : pandas.Series
    labels : array-like
        The private labels of the same rows.
    rng : int, default 0
        Seed of the held-out split.
    name : str, optional
        The column's name (a number named like a time up to the outcome is judged at a
        lower threshold accuracy).

    Returns
    -------
    StandIn
    """
    values = pd.Series(values).reset_index(drop=True)
    y = _label_codes(labels)
    n = len(y)
    discrete = int(values.astype(str).nunique(dropna=False)) <= DISCRETE_MAX_VALUES
    order = np.random.default_rng(rng).permutation(n)
    n_test = max(1, int(round(0.3 * n)))
    test, train = order[:n_test], order[n_test:]
    if train.size == 0:
        return StandIn(0.0, 0.0, 0.0, discrete, False)
    fallback = int(np.bincount(y[train]).argmax())
    baseline = float(np.mean(y[test] == fallback))

    def halves(agreement: float, share: float = 0.5) -> bool:
        return (1.0 - agreement) <= (1.0 - share) * (1.0 - baseline) and baseline < 1.0

    results = []
    codes, grouped = _grouped_codes(_codes(values), train)
    agreement = _per_value_majority(codes[train], y[train], codes[test], y[test], fallback)
    information = _plug_in_information(codes, y)
    results.append(StandIn(agreement, baseline, information, discrete,
                           bool((agreement >= AGREEMENT and halves(agreement)) or information >= INFORMATION),
                           "values", grouped))
    missing = values.isna().to_numpy()
    if 0 < int(missing.sum()) < n:
        m_codes = missing.astype(np.int64)
        m_agreement = _per_value_majority(m_codes[train], y[train], m_codes[test], y[test], fallback)
        m_information = _plug_in_information(m_codes, y)
        results.append(StandIn(m_agreement, baseline, m_information, discrete,
                               bool((m_agreement >= AGREEMENT and halves(m_agreement)) or m_information >= INFORMATION),
                               "missingness"))
    x = _numbers(values)
    if x is not None:
        t_agreement = _stump(x[train], y[train], x[test], y[test])
        t_information = uncertainty_coefficient(values, labels)
        if t_agreement >= THRESHOLD_ACCURACY and halves(t_agreement):
            results.append(StandIn(t_agreement, baseline, t_information, discrete, True, "threshold"))
        elif _name_words(name) & OUTCOME_TIME_WORDS and halves(t_agreement, OUTCOME_TIME_ERRORS):
            results.append(StandIn(t_agreement, baseline, t_information, discrete, True, "outcome time"))
        else:
            results.append(StandIn(t_agreement, baseline, t_information, discrete, False, "threshold"))
    flagged = [r for r in results if r.flagged]
    # the strongest finding (of the flagged tests, if any); on a tie the plainest one (missingness)
    return max(flagged or results, key=lambda r: (r.agreement, r.test == "missingness"))
