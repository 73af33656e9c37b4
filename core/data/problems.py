"""One check of a private table that lists every problem at once, each with its fixes.

:func:`check_file` reads a private CSV file the way :func:`core.data.load_table` does, but
instead of refusing it at the first problem it lists them all: the label column (never
guessed from position), duplicate column names, columns empty in every row, missing
values, number columns holding text, and then, column by column
(:mod:`core.data.columns`), identifiers, survey weights, free text, dates and label
stand-ins.  Each
:class:`Problem` says what was found in a sentence (no command-line flag), whether the
file can be loaded as it is (``blocking``), and its :class:`Fix` es: the app shows one
button per fix, the command line names its flag (:attr:`Fix.flag`).  Identifiers, survey
weights and label stand-ins are left out of the features by default
(:func:`core.data.features.default_features`): their fix is to keep them explicitly.

:func:`check_columns` makes the same column checks on a table already loaded (a bundled or
generated one).  A :class:`ColumnCheck` records the checks it made and those it did not
make (and why), and its :meth:`ColumnCheck.summary` speaks only of the checks made.

The stand-in check reads the private labels: its findings are NON-PRIVATE diagnostics
for the data's owner (``Problem.non_private``), never exported.

:func:`check_public_columns` makes the value-based column checks (identifiers, survey weights, free
text, dates, person keys) on the PUBLIC file's columns: in a two-file job these findings, not
the private file's, decide the default features (:func:`core.data.features.default_features`,
``public=``), so that the feature set is no function of a private value (docs/design.md §1.3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from core.errors import DataError

from core.data.columns import column_warnings
from core.data.formats import dot_thousands
from core.data.missing import check_markers, check_missing_option, mark_missing
from core.data.reading import DEFAULT_MAX_BYTES, clean_text, read_csv, to_numbers
from core.data.table import LABEL_NAMES, MAX_CLASSES

__all__ = [
    "FIX_ACTIONS",
    "PROBLEM_KINDS",
    "Fix",
    "Problem",
    "ColumnCheck",
    "check_file",
    "check_columns",
    "check_public_columns",
    "two_file_problems",
    "suggest_label_column",
    "without_columns",
]

FIX_ACTIONS = ("choose_label", "rename_duplicates", "drop_empty_columns", "missing", "drop_column", "privacy_unit",
               "keep_column")
"""What a :class:`Fix` does: choose the label column, rename repeated header names, drop
columns empty in every row, set the missing-value option (``Fix.value``), drop columns,
declare a column the privacy unit (the persons: every guarantee then holds per person),
keep a column that is left out of the features by default."""

PROBLEM_KINDS = ("label", "duplicate_header", "empty_column", "missing_values", "not_numbers",
                 "person_key", "duplicate_rows", "identifier", "survey_weight", "free_text", "date", "label_stand_in")
"""The kinds of :class:`Problem`, in the order they are listed."""

_CHECKS = {
    "label": "the label column",
    "duplicate_header": "duplicate column names",
    "empty_column": "empty columns",
    "missing_values": "missing values",
    "not_numbers": "number columns holding text",
    "person_key": "columns repeating like a person key (a NON-PRIVATE diagnostic on the private rows)",
    "duplicate_rows": "exact duplicate rows (a NON-PRIVATE diagnostic on the private rows)",
    "identifier": "identifiers (by name, and by content: people's names, e-mail addresses, phone numbers, "
                  "postcodes, codes unique per row, row numbers)",
    "survey_weight": "survey weights (by name)",
    "free_text": "free text",
    "date": "dates",
    "label_stand_in": "label stand-ins (a NON-PRIVATE diagnostic on the private rows)",
}


@dataclass(frozen=True)
class Fix:
    """One way to fix a problem.

    Attributes
    ----------
    action : str
        One of :data:`FIX_ACTIONS`.
    columns : tuple of str
        The columns to drop (``"drop_column"``), or the candidates (``"choose_label"``).
    value : str or None
        The missing-value option for ``"missing"`` (``"drop"`` or ``"impute"``).
    """

    action: str
    columns: tuple[str, ...] = ()
    value: str | None = None

    @property
    def title(self) -> str:
        """The fix in words (an app button's text)."""
        if self.action == "rename_duplicates":
            return "Rename the repeated names (a, a.2, a.3)"
        if self.action == "drop_empty_columns":
            return "Drop the empty columns"
        if self.action == "missing":
            return {"drop": "Drop the rows with a missing value",
                    "impute": "Impute missing values inside each teacher"}[str(self.value)]
        if self.action == "drop_column":
            return "Drop " + ", ".join(f"'{c}'" for c in self.columns)
        if self.action == "privacy_unit":
            return f"Declare '{self.columns[0]}' the privacy unit (a guarantee per person)"
        if self.action == "keep_column":
            return "Keep " + ", ".join(f"'{c}'" for c in self.columns) + " as a feature"
        return "Choose the label column"

    @property
    def flag(self) -> str:
        """The fix as a command-line flag of ``private-label-lab label``."""
        if self.action == "rename_duplicates":
            return "--rename-duplicates"
        if self.action == "drop_empty_columns":
            return "--drop-empty-columns"
        if self.action == "missing":
            return f"--missing {self.value}"
        if self.action == "drop_column":
            return "--drop " + ",".join(self.columns)
        if self.action == "privacy_unit":
            return f"--privacy-unit {self.columns[0]}"
        if self.action == "keep_column":
            return "--keep " + ",".join(self.columns)
        return "--label-column NAME"


@dataclass(frozen=True)
class Problem:
    """One problem of a private table.

    Attributes
    ----------
    kind : str
        One of :data:`PROBLEM_KINDS`.
    columns : tuple of str
        The columns concerned (empty for the label column's absence).
    sentence : str
        What was found and what it means, in words (no command-line flag).
    fixes : tuple of Fix
    blocking : bool
        True when the table cannot be loaded until the problem is fixed; the others are
        warnings.
    non_private : bool
        True when found by reading the private labels (a NON-PRIVATE diagnostic for the
        data's owner, never exported).
    reason : str
        The finding in a few words (a column finding's :attr:`ColumnWarning.reason`).
    """

    kind: str
    columns: tuple[str, ...]
    sentence: str
    fixes: tuple[Fix, ...] = ()
    blocking: bool = False
    non_private: bool = False
    reason: str = ""

    @property
    def column(self) -> str | None:
        """The first column concerned, or None."""
        return self.columns[0] if self.columns else None


@dataclass(frozen=True)
class ColumnCheck:
    """Every problem of a table, and which checks were made.

    Attributes
    ----------
    problems : tuple of Problem
        In :data:`PROBLEM_KINDS` order, then column order.
    made : tuple of str
        The kinds of check made (keys of :data:`PROBLEM_KINDS`).
    not_made : dict of str to str
        The kinds of check not made, each with the reason.
    columns : tuple of str
        The file's columns (repeated names renamed ``a.2``...).
    label_column : str or None
        The label column checked against (None when none was chosen or suggested).
    suggested_label : str or None
        A column named like a label (``label``, ``target``, ``y``, ``class``), if any: a
        suggestion, never applied silently.
    features : tuple of str
        The feature columns checked (the columns but the label, less those the user left
        out), in file order: :func:`core.data.features.default_features` chooses among them.
    empty_dropped : tuple of str or None
        The columns left out because they are empty in every private row
        (``drop_empty_columns=True``; None when that option is off): a choice of features
        that read the private values, which :func:`core.data.default_features` states.
    """

    problems: tuple[Problem, ...]
    made: tuple[str, ...]
    not_made: dict[str, str] = field(default_factory=dict)
    columns: tuple[str, ...] = ()
    label_column: str | None = None
    suggested_label: str | None = None
    features: tuple[str, ...] = ()
    empty_dropped: tuple[str, ...] | None = None

    @property
    def blocking(self) -> tuple[Problem, ...]:
        """The problems that stop the table from loading."""
        return tuple(p for p in self.problems if p.blocking)

    @property
    def warnings(self) -> tuple[Problem, ...]:
        """The problems that do not stop it."""
        return tuple(p for p in self.problems if not p.blocking)

    def flagged(self) -> dict[str, list[str]]:
        """Column -> the kinds of problem found in it."""
        out: dict[str, list[str]] = {}
        for p in self.problems:
            for c in p.columns:
                out.setdefault(c, []).append(p.kind)
        return out

    def summary(self) -> str:
        """One sentence on the checks made and not made; it never vouches for a check not made."""
        made = ", ".join(_CHECKS[k] for k in self.made)
        if self.problems:
            text = f"{len(self.problems)} problem(s) found. Checked: {made}."
        else:
            text = f"No problem found by these checks: {made}."
        if self.not_made:
            text += " Not checked: " + "; ".join(f"{_CHECKS[k].split(' (')[0]} ({why})"
                                                 for k, why in self.not_made.items()) + "."
        return text


def suggest_label_column(columns: Sequence[str]) -> str | None:
    """The first column named (ignoring case) ``label``, ``target``, ``y`` or ``class``, else None.

    A suggestion only: nothing here picks a column by its position.
    """
    for wanted in LABEL_NAMES:
        for column in columns:
            if str(column).strip().casefold() == wanted:
                return str(column)
    return None


def without_columns(source, columns: Sequence[str], *, rename_duplicates: bool = False,
                    max_bytes: int = DEFAULT_MAX_BYTES, csv_format=None, privacy_unit: str | None = None) -> bytes:
    """The CSV ``source`` without ``columns``, as CSV bytes (every value as written).

    A column that would stop the file from loading (a number column holding text) can
    be left out before :func:`core.data.load_table` reads it; the bytes stay in memory.  The
    bytes are comma-separated UTF-8 with decimal points, whatever ``csv_format`` the source has;
    the ``privacy_unit`` column of a decimal-comma source has its dot-grouped IDs written as
    digits (:func:`core.data.formats.dot_thousands`), as :func:`core.data.load_table` reads them.
    """
    frame, _ = read_csv(source, max_bytes, "The file has a header row but no data rows.",
                        rename_duplicates=rename_duplicates, csv_format=csv_format)
    if privacy_unit in frame.columns and getattr(frame.attrs.get("csv_format"), "decimal", ".") == ",":
        frame[privacy_unit] = dot_thousands(frame[privacy_unit])
    kept = frame.drop(columns=[c for c in columns if c in frame.columns])
    return kept.to_csv(index=False).encode("utf-8")


def _quoted(columns: Iterable[str], limit: int = 12) -> str:
    columns = list(columns)
    shown = ", ".join(f"'{c}'" for c in columns[:limit])
    return shown + (f" and {len(columns) - limit} more" if len(columns) > limit else "")


GROUP_EXAMPLE = (1.0, 1e-6)
"""The (ε, δ) per row at which the person-key sentence states the group-privacy figure."""

_NON_PRIVATE = ("NON-PRIVATE diagnostic computed on the private rows: for the data's owner only, never exported.")


def _group_sentence(k: int) -> str:
    from core.data.units import group_privacy

    eps, delta = GROUP_EXAMPLE
    g_eps, g_delta = group_privacy(eps, delta, k)
    return (f"Without a declared unit the guarantee is per row, so for a person with {k} rows a run at (ε, δ) per row "
            f"is only (kε, δ(e^{{kε}} − 1)/(e^ε − 1)) with k = {k} (group privacy): at ({eps:g}, {delta:g}) per row, "
            f"({g_eps:g}, {g_delta:.2g}) for that person.")


def _person_problems(frame: pd.DataFrame, label_column: str | None,
                     identifiers: dict[str, str] | None = None) -> list[Problem]:
    """Columns repeating like a person key, and exact duplicate rows (NON-PRIVATE diagnostics).

    A key named like a person or record, or also found an identifier (``identifiers``:
    column to reason), is a person's ID: left out of the features by default, with the unit
    offered and a Keep; a key found by its blocks of rows alone stays a feature, with the
    unit offered and a Drop.
    """
    from core.data.columns import duplicate_rows, person_keys

    identifiers = identifiers or {}
    out = []
    for key in person_keys(frame, skip=(label_column,) if label_column else ()):
        named = key.reason.startswith("its name") or key.column in identifiers
        head = (f"Column '{key.column}' repeats its values like a person key ({key.reason}): {key.n_keys:,} "
                f"distinct values, up to {key.largest} rows each. {_group_sentence(key.largest)} ")
        if named:
            why = key.reason if key.column not in identifiers else f"{identifiers[key.column]}; {key.reason}"
            sentence = (head + "It names a person, so it is left out of the features. Declare it the privacy unit: "
                        "every guarantee then holds per person (all of a person's rows under one teacher), and the "
                        f"column is not a feature. {_NON_PRIVATE}")
            fixes = (Fix("privacy_unit", (key.column,)), Fix("keep_column", (key.column,)))
        else:
            why = key.reason
            sentence = (head + "Declare it the privacy unit instead of dropping it: every guarantee then holds per "
                        "person (all of a person's rows under one teacher), and the column is not a feature. "
                        + _NON_PRIVATE)
            fixes = (Fix("privacy_unit", (key.column,)), Fix("drop_column", (key.column,)))
        out.append(Problem("person_key", (key.column,), sentence, fixes, blocking=False, non_private=True, reason=why))
    copies, largest = duplicate_rows(frame)
    if copies:
        sentence = (f"{copies:,} row(s) are exact copies of another row (up to {largest} identical rows). A per-row "
                    "guarantee counts each copy as a unit; if the copies are one person's, "
                    f"{_group_sentence(largest)[0].lower()}{_group_sentence(largest)[1:]} Declare the column that names "
                    f"the person as the privacy unit, if the file has one. {_NON_PRIVATE}")
        out.append(Problem("duplicate_rows", (), sentence, (), blocking=False, non_private=True))
    return out


def _column_problems(features: pd.DataFrame, label_column: str | None, labels, stand_ins: bool, *,
                     unit: str | None = None, whole: pd.DataFrame | None = None) -> list[Problem]:
    from core.data.features import LEFT_OUT_KINDS

    warnings = column_warnings(features, label_column, labels=labels, stand_ins=stand_ins)
    identifiers = {w.column: w.reason for w in warnings if w.kind == "identifier"}
    out = [] if unit is not None or whole is None else _person_problems(whole, label_column, identifiers)
    keyed = {p.column for p in out if p.kind == "person_key"}
    for w in warnings:
        if w.column in keyed and w.kind == "identifier":
            continue  # said once, as a person key, with the unit offered before keeping it
        fix = Fix("keep_column" if w.kind in LEFT_OUT_KINDS else "drop_column", (w.column,))
        out.append(Problem(w.kind, (w.column,), w.sentence, (fix,), blocking=False,
                           non_private=w.kind == "label_stand_in", reason=w.reason))
    return out


def _made(stand_ins_reason: str | None, labels_known: bool) -> tuple[tuple[str, ...], dict[str, str]]:
    made = tuple(k for k in PROBLEM_KINDS if k != "label_stand_in")  # person keys and copies: without a unit
    not_made = {}
    if stand_ins_reason is not None:
        not_made["label_stand_in"] = stand_ins_reason
    elif not labels_known:
        not_made["label_stand_in"] = "it needs the label column"
    else:
        made += ("label_stand_in",)
    return made, not_made


def _order(problems: list[Problem]) -> tuple[Problem, ...]:
    return tuple(sorted(problems, key=lambda p: PROBLEM_KINDS.index(p.kind)))


def check_file(
    source,
    *,
    label_column: str | None = None,
    missing: str = "refuse",
    missing_markers: Iterable[str] | None = None,
    rename_duplicates: bool = False,
    drop_empty_columns: bool = False,
    drop_columns: Sequence[str] = (),
    features: Sequence[str] | None = None,
    stand_ins: bool = True,
    max_bytes: int = DEFAULT_MAX_BYTES,
    min_rows: int = 20,
    privacy_unit: str | None = None,
    csv_format=None,
) -> ColumnCheck:
    """Every problem of a private CSV file at once, with the options it would be loaded with.

    Parameters
    ----------
    source : str, pathlib.Path, bytes or file-like
        As for :func:`core.data.load_table` (held in memory only).
    label_column : str, optional
        The label column.  None: the check suggests a column named like a label (if any)
        and checks against it, and says that the label column must be chosen.
    missing, missing_markers, rename_duplicates, drop_empty_columns
        The options of :func:`core.data.load_table`: a problem they fix is not listed.
    drop_columns : sequence of str
        Columns the user leaves out: not checked.
    features : sequence of str, optional
        Only these feature columns are used (and checked); default: every column but the label.
    stand_ins : bool, default True
        Look for label stand-ins (NON-PRIVATE: reads the private labels).
    max_bytes : int
        As for :func:`core.data.load_table`.
    min_rows : int, default 20
        Fewer rows than this: no judgement by content, no stand-in check.
    privacy_unit : str, optional
        The declared unit column: not a feature, not checked.  Without one, columns that
        repeat like a person key and exact duplicate rows are listed (NON-PRIVATE
        diagnostics), each person key with the fix that declares it the unit.
    csv_format : core.data.CsvFormat, optional
        As for :func:`core.data.load_table` (None fields detected).

    Returns
    -------
    ColumnCheck

    Raises
    ------
    DataError
        When the file cannot be read as a CSV table at all (not text, not UTF-8, no header,
        rows of the wrong length...): there are no columns to check.
    ParameterError
        On an invalid option.
    """
    missing = check_missing_option(missing)
    markers = check_markers(missing_markers)
    frame, _ = read_csv(source, max_bytes, "The file has a header row but no data rows.", rename_duplicates=True,
                        csv_format=csv_format)
    header = list(frame.attrs.get("header", frame.columns))
    frame = mark_missing(frame, markers)
    columns = [str(c) for c in frame.columns]
    problems: list[Problem] = []

    # The label column: chosen, or suggested by its name (never by its position).
    suggested = suggest_label_column(columns)
    if label_column is not None and label_column not in columns:
        raise DataError(f"The label column '{label_column}' is not in the file. The columns are: {_quoted(columns, 30)}.")
    label = label_column if label_column is not None else suggested
    if label_column is None:
        if suggested is None:
            sentence = ("No column is named label, target, y or class, and the label column is never guessed from its "
                        "position: choose the column that holds the class of each row.")
        else:
            sentence = (f"The label column has not been chosen; '{suggested}' is suggested by its name. Confirm it or "
                        "choose another.")
        problems.append(Problem("label", (), sentence, (Fix("choose_label", tuple(columns)),), blocking=True))

    # Duplicate names.
    counts = pd.Series(header).value_counts()
    repeated = counts[counts > 1]
    if len(repeated) and not rename_duplicates:
        problems.append(Problem(
            "duplicate_header", tuple(str(c) for c in repeated.index),
            "Duplicate column names in the header: " + ", ".join(f"'{c}' ({n} times)" for c, n in repeated.items())
            + ". Rename them in the file, or let the repeats be renamed (a, a.2, a.3).",
            (Fix("rename_duplicates"),), blocking=True))

    if privacy_unit is not None and privacy_unit not in columns:
        raise DataError(f"The privacy unit column '{privacy_unit}' is not in the file. The columns are: "
                        f"{_quoted(columns, 30)}.")
    left_out = set(drop_columns) | ({c for c in columns if c not in set(features)} if features is not None else set())
    left_out |= {privacy_unit} if privacy_unit is not None else set()
    features = frame.drop(columns=[c for c in columns if c == label or c in left_out])
    empty = [c for c in features.columns if features[c].isna().all()]
    if empty and not drop_empty_columns:
        problems.append(Problem(
            "empty_column", tuple(empty),
            f"Column(s) {_quoted(empty)} are empty in every row (all values missing): they hold nothing to learn from.",
            (Fix("drop_empty_columns"),), blocking=True))
    features = features.drop(columns=empty)

    # Number columns with a few text values.
    typed = {}
    for column in features.columns:
        numbers, failed, text = to_numbers(features[column])
        n_present = int(features[column].notna().sum())
        if failed.any() and failed.sum() <= 0.1 * n_present:
            examples = ", ".join(f"'{v}'" for v in pd.unique(text)[:3])
            problems.append(Problem(
                "not_numbers", (column,),
                f"Column '{column}' holds numbers except for {int(failed.sum())} value(s) that are not numbers "
                f"({examples}). If they mark missing values, name them as missing-value markers; otherwise correct "
                "them in the file or drop the column.", (Fix("drop_column", (column,)),), blocking=True))
            typed[column] = numbers
        else:
            typed[column] = numbers if not failed.any() else clean_text(features[column])
    features = pd.DataFrame(typed, columns=list(features.columns))

    # Labels and missing values.
    labels = None
    if label is not None:
        labels_text = clean_text(frame[label])
        no_label = labels_text.isna().to_numpy()
        distinct = pd.unique(labels_text[~no_label])
        if no_label.all() or len(distinct) < 2 or len(distinct) > MAX_CLASSES:
            why = ("is empty in every row" if no_label.all() else f"holds a single class ('{distinct[0]}')"
                   if len(distinct) < 2 else f"holds {len(distinct)} distinct values, more than {MAX_CLASSES} classes")
            problems.append(Problem("label", (label,), f"The label column '{label}' {why}: choose the column that "
                                    "holds the class of each row.", (Fix("choose_label", tuple(columns)),), blocking=True))
        else:
            labels = labels_text
    cell_missing = features.isna()
    per_column = {c: int(n) for c, n in cell_missing.sum().items() if n}
    row_missing = cell_missing.any(axis=1).to_numpy()
    label_missing = labels.isna().to_numpy() if labels is not None else np.zeros(len(frame), dtype=bool)
    if label_missing.any() and missing != "drop":
        problems.append(Problem(
            "missing_values", (label,),
            f"{int(label_missing.sum())} row(s) have no label in column '{label}'. Labels are never imputed: fill them "
            "in, or drop those rows.", (Fix("missing", value="drop"),), blocking=True))
    if per_column:
        shown = ", ".join(f"'{c}' ({n})" for c, n in sorted(per_column.items(), key=lambda kv: -kv[1])[:10])
        mostly = [c for c, n in per_column.items() if n > 0.5 * len(frame)]
        every_row = bool((row_missing | label_missing).all())
        if missing == "refuse" or (missing == "drop" and every_row):
            fixes = [Fix("missing", value=v) for v in ("drop", "impute") if v != missing and not (v == "drop" and every_row)]
            if mostly:
                fixes.append(Fix("drop_column", tuple(mostly)))
            where = (" Every row has one, so dropping those rows leaves none." if every_row else "")
            mostly_text = (f" Column(s) {_quoted(mostly)} are missing in most rows; dropping them keeps more rows."
                           if mostly else "")
            problems.append(Problem(
                "missing_values", tuple(per_column),
                f"{int(row_missing.sum())} of {len(frame)} row(s) have missing feature values, in column(s) {shown}."
                + where + mostly_text, tuple(fixes), blocking=True))

    # Column by column: identifiers, free text, dates, stand-ins.
    reason = None if stand_ins else "turned off"
    if reason is None and labels is not None and int((~label_missing).sum()) < min_rows:
        reason = f"fewer than {min_rows} labeled rows"
    use_labels = labels is not None and reason is None
    rows = ~label_missing
    kept = features.loc[rows].reset_index(drop=True)
    whole = kept.assign(**{label: labels[rows].to_numpy()}) if labels is not None else kept
    found = _column_problems(kept, label, labels[rows].to_numpy() if use_labels else None, use_labels,
                             unit=privacy_unit, whole=whole)
    made, not_made = _made(reason, labels is not None)
    return ColumnCheck(_order(problems + found), made, not_made, tuple(columns), label, suggested,
                       tuple(str(c) for c in features.columns),
                       tuple(str(c) for c in empty) if drop_empty_columns else None)


def check_columns(table, *, stand_ins: bool = True, stand_ins_reason: str | None = None) -> ColumnCheck:
    """The column checks of a loaded :class:`core.data.Table` (bundled, generated, two-file job).

    Its header, empty columns and label were checked when it loaded; its missing values
    are listed when it was loaded with ``missing="impute"`` (a warning: kept and imputed);
    its feature columns are checked one by one.

    Parameters
    ----------
    table : core.data.Table
    stand_ins : bool, default True
        Look for label stand-ins (NON-PRIVATE: reads the private labels).
    stand_ins_reason : str, optional
        Why the stand-in check is not made (e.g. ``"generated data: the label is computed from
        the features by design"``); implies ``stand_ins=False``.

    Returns
    -------
    ColumnCheck
    """
    from core.data.reading import check_table as _is_table

    _is_table(table)
    if stand_ins_reason is not None:
        stand_ins = False
    elif not stand_ins:
        stand_ins_reason = "turned off"
    if stand_ins and table.n_rows < 20:
        stand_ins, stand_ins_reason = False, "fewer than 20 labeled rows"
    labels = np.asarray(table.class_names, dtype=object)[table.labels]
    whole = table.features.assign(**{table.label_column: table.labels})
    problems = _column_problems(table.features, table.label_column, labels if stand_ins else None, stand_ins,
                                unit=None if table.unit is None else table.unit.column, whole=whole)
    made, not_made = _made(stand_ins_reason, True)
    columns = (*table.features.columns, table.label_column)
    return ColumnCheck(_order(problems), made, not_made, tuple(str(c) for c in columns), table.label_column,
                       suggest_label_column(columns), tuple(str(c) for c in table.features.columns))



PUBLIC_CHECK_ROWS = 20_000
"""The public rows :func:`check_public_columns` reads: the first ones (a streamed file is never
read whole for the check)."""


def check_public_columns(source, *, features: Sequence[str], missing_markers: Iterable[str] | None = None,
                 max_bytes: int = DEFAULT_MAX_BYTES, csv_format=None) -> ColumnCheck:
    """The value-based column checks of the PUBLIC rows of a two-file job (public data).

    Identifiers (by name and by content), survey weights, free text, dates and person keys
    are looked for in the public file's copy of each private feature column; there is no
    label, hence no stand-in check.  These findings decide the job's default features
    (:func:`core.data.features.default_features` with ``public=``) in place of the private
    file's, whose value-based findings then read a private value and stay NON-PRIVATE
    diagnostics for the owner: one person's value cannot move a column in or out of the
    features (docs/design.md §1.3).

    Parameters
    ----------
    source : str, pathlib.Path, bytes, file-like or pandas.DataFrame
        The public CSV file (read as :func:`core.data.read_csv` reads it), or its text frame.
    features : sequence of str (keyword-only)
        The private file's checked feature columns (:attr:`ColumnCheck.features`); those the
        public file has are checked, in this order, on its first :data:`PUBLIC_CHECK_ROWS` rows.
        A number column with a few values that are no numbers (at most 10 %) is checked as
        numbers, as :func:`check_file` does (the job refuses those values in its place).
    missing_markers : iterable of str, optional (keyword-only)
        Cell texts that mark a missing value.
    max_bytes : int (keyword-only)
        As for :func:`core.data.load_table`.
    csv_format : core.data.CsvFormat, optional (keyword-only)
        As for :func:`core.data.load_table`.

    Returns
    -------
    ColumnCheck
        Its ``features``: the checked columns (the private features the public file has);
        its ``problems``: the findings on the public rows (none is blocking).
    """
    if isinstance(source, pd.DataFrame):
        frame = source
    else:
        frame, _ = read_csv(source, max_bytes, "The public file has a header row but no data rows.",
                            rename_duplicates=True, csv_format=csv_format)
    frame = mark_missing(frame.head(PUBLIC_CHECK_ROWS), check_markers(missing_markers))
    present = {str(c) for c in frame.columns}
    columns = [str(c) for c in features if str(c) in present]
    typed = {}
    for column in columns:
        numbers, failed, _ = to_numbers(frame[column])
        few = failed.sum() <= 0.1 * int(frame[column].notna().sum())
        typed[column] = numbers if few else clean_text(frame[column])
    table = pd.DataFrame(typed, columns=columns)
    found = _column_problems(table, None, None, False, whole=table) if columns else []
    from dataclasses import replace  # the public rows' findings are public: not the private rows' diagnostic

    found = [replace(p, sentence=p.sentence.replace(_NON_PRIVATE, "(Found on the public rows.)"), non_private=False)
             for p in found]
    found += _named_keys(columns, {c for p in found if p.kind in ("identifier", "person_key") for c in p.columns})
    made = tuple(k for k in PROBLEM_KINDS if k in ("person_key", "duplicate_rows", "identifier", "survey_weight",
                                                        "free_text", "date"))
    return ColumnCheck(_order(found), made, {"label_stand_in": "the public rows have no label"}, tuple(columns), None,
                       None, tuple(columns))


def _named_keys(columns: Sequence[str], flagged: set) -> list[Problem]:
    """A column named like a person or record (``patient``, ``member``...) is left out by its name
    (the schema, public), whatever its values on either side: a private panel's person key whose
    public copy repeats no value stays out of the features."""
    from core.data.columns import LEFT_OUT_SENTENCE, PERSON_KEY_NAMES, _name_words

    out = []
    for column in columns:
        words = sorted(_name_words(column) & PERSON_KEY_NAMES)
        if column in flagged or not words:
            continue
        reason = f"its name ('{words[0]}') names a person or record"
        out.append(Problem("identifier", (column,), f"Column '{column}' looks like an identifier: {reason}. "
                           + LEFT_OUT_SENTENCE, (Fix("keep_column", (column,)),), blocking=False, reason=reason))
    return out


NOT_CHOSEN_ON = ("(NON-PRIVATE diagnostic on the private rows: the default features are chosen on the public "
                 "file's columns, not on these values.)")
"""What a private file's identifier, survey-weight, person-key, free-text or date finding says
in a two-file job: it is shown to the owner and chooses nothing."""

_PRIVATE_VALUE_KINDS = ("person_key", "identifier", "survey_weight", "free_text", "date")


def two_file_problems(check: ColumnCheck, public: ColumnCheck) -> tuple[Problem, ...]:
    """The findings a two-file job shows: the private file's, those found by its values marked as
    choosing nothing (no Keep: :data:`NOT_CHOSEN_ON`), then the public file's findings that leave
    a column out (each with its Keep, its sentence beginning ``Public file:``).

    Parameters
    ----------
    check : ColumnCheck
        The private file's check (:func:`check_file`).
    public : ColumnCheck
        The public file's (:func:`check_public_columns`).

    Returns
    -------
    tuple of Problem
    """
    from dataclasses import replace

    from core.data.columns import LEFT_OUT_SENTENCE

    out = []
    for p in check.problems:
        if p.kind in _PRIVATE_VALUE_KINDS and not p.blocking:
            text = p.sentence.replace(" " + LEFT_OUT_SENTENCE, "").replace(LEFT_OUT_SENTENCE, "")
            p = replace(p, sentence=f"{text} {NOT_CHOSEN_ON}", non_private=True,
                        fixes=tuple(f for f in p.fixes if f.action != "keep_column") or
                        tuple(Fix("drop_column", f.columns) for f in p.fixes if f.action == "keep_column"))
        out.append(p)
    out += [replace(p, sentence="Public file: " + p.sentence) for p in public.problems
            if p.kind in ("person_key", "identifier", "survey_weight") and any(f.action == "keep_column" for f in p.fixes)]
    return tuple(out)
