"""The default feature columns of a private table, and why the others are left out.

One decision, made once for the app, the command line and a notebook: which checked
columns are features of a run unless the user says otherwise.  :func:`default_features`
reads a :class:`core.data.ColumnCheck` (:func:`core.data.check_file` or
:func:`core.data.check_columns`) and leaves out every column found to be

* a **person key** named like one (``id``, ``patient``...; :func:`core.data.columns.person_keys`):
  a person's ID, offered as the privacy unit instead (a declared unit is never a feature);
* an **identifier** (row numbers, person ids, codes unique per row, names, e-mail
  addresses...: :func:`core.data.columns.identify`): teachers cannot generalise from it,
  and one that repeats across rows (a person's id) still names a person;
* a **survey weight** (``fnlwgt``...): how many people a row stands for, not a trait of
  its person;
* a **label stand-in** (:mod:`core.data.standins`): the outcome itself or a leak of it,
  found by its values, its missingness or one threshold.  This finding reads the private
  labels: a NON-PRIVATE diagnostic for the data's owner, never exported.

Each left-out column comes with its reason, in words.  The user keeps one explicitly
(``keep=``; ``--keep`` on the command line, a Keep button or the feature box in the app).
A column left out of the features can still be carried into the export as a join key
(:func:`core.export.labeled_frame`, ``keys=``): the public file's copy of it, not the
private one.

What the feature set reveals (docs/design.md §1.3): the features of the published student
and of the export are treated as public, like the class list.  In a two-file job the
value-based findings (identifiers, survey weights, person keys) are read on the PUBLIC
file's columns (:func:`core.data.check_public_columns`, ``public=``): a private value cannot move a
column in or out.  A label stand-in needs the labels, so it is found on the private rows; a
default set that such a check (or, in a one-file job, any check of the private values)
could have changed says so in capitals (:data:`FEATURES_READ_NOTE`,
:attr:`FeatureChoice.read_private`) on the console and in the report.  Features declared
in advance (``declared=True``: ``--features``, the app's column choice) carry no note.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from core.errors import DataError

__all__ = ["LEFT_OUT_KINDS", "KIND_WORDS", "FEATURES_READ_NOTE", "LeftOut", "FeatureChoice", "default_features",
           "feature_statement"]

LEFT_OUT_KINDS = ("person_key", "identifier", "survey_weight", "label_stand_in")
"""Kinds of column finding (:data:`core.data.PROBLEM_KINDS`) that leave a column out of the
features unless the user keeps it: a finding of these kinds that offers Keep (a
``keep_column`` fix) leaves its column out.  A person key does when it names a person (by
its name, or found an identifier too); one found by its blocks of rows alone stays a feature
and offers the unit and a Drop."""

KIND_WORDS = {"person_key": "person key, NON-PRIVATE diagnostic", "identifier": "identifier",
              "survey_weight": "survey weight",
              "label_stand_in": "stand-in for the label, NON-PRIVATE diagnostic"}
"""Each left-out kind in a few words."""


FEATURES_READ_NOTE = (
    "FEATURES CHOSEN BY A CHECK OF THE PRIVATE ROWS ({what}), treated as public: the published student and the "
    "export name them; give --features (the app: its column choice; the library: the feature columns) to fix them "
    "in advance"
)
"""The statement of a report and the commands' note when the default feature set was decided
by a check that read the private rows; ``{what}`` says which check and what it left out."""

_VALUE_KINDS = ("person_key", "identifier", "survey_weight")
"""Left-out kinds found by a column's values (name findings included): read on the public
rows of a two-file job."""


@dataclass(frozen=True)
class LeftOut:
    """A column left out of the features by default (or kept on request), and why.

    Attributes
    ----------
    column : str
    kinds : tuple of str
        The findings that leave it out (:data:`LEFT_OUT_KINDS`), in check order.
    reasons : tuple of str
        Each finding in a few words.
    """

    column: str
    kinds: tuple[str, ...]
    reasons: tuple[str, ...]

    @property
    def reason(self) -> str:
        """``"identifier: row numbers (...)"``: the findings in one phrase."""
        return "; ".join(f"{KIND_WORDS[k]}: {r}" if r else KIND_WORDS[k] for k, r in zip(self.kinds, self.reasons))

    @property
    def non_private(self) -> bool:
        """True when a finding read the private rows (a stand-in, a person key)."""
        return "label_stand_in" in self.kinds or "person_key" in self.kinds


@dataclass(frozen=True)
class FeatureChoice:
    """The feature columns of a run and the columns left out of them.

    Attributes
    ----------
    features : tuple of str
        The feature columns, in the check's order: every checked column but those left out.
    left_out : tuple of LeftOut
        Flagged columns left out of the features.
    kept : tuple of LeftOut
        Flagged columns kept as features because the user asked.
    read_private : str or None
        When a check of the private rows decided (or could have changed) the set: which
        check and what it left out, in words (``"label stand-ins left out: e401k"``), for
        :data:`FEATURES_READ_NOTE`; None when the set is public (declared, or chosen on public
        columns alone).
    declared : bool
        Whether the feature columns were declared by the user in advance.
    left_by_private : tuple of str
        The columns a check of the private rows left out (a stand-in; any flagged column in a
        one-file job): the consoles say the note when there is one, the report always
        states :attr:`read_private`.
    """

    features: tuple[str, ...]
    left_out: tuple[LeftOut, ...] = ()
    kept: tuple[LeftOut, ...] = ()
    read_private: str | None = None
    declared: bool = False
    left_by_private: tuple[str, ...] = ()

    @property
    def statement(self) -> str:
        """What a release says about its features (:func:`feature_statement`)."""
        return feature_statement(self.features, self.declared, self.read_private)

    @property
    def dropped(self) -> tuple[str, ...]:
        """The names of the columns left out."""
        return tuple(c.column for c in self.left_out)

    def sentence(self) -> str:
        """The columns left out and kept, with their reasons, in one paragraph ('' when none)."""
        parts = []
        if self.left_out:
            parts.append("Left out of the features: " + "; ".join(f"'{c.column}' ({c.reason})" for c in self.left_out)
                         + ". Keep one explicitly to use it as a feature; a column left out can still be carried "
                         "into the export as a join key.")
        if self.kept:
            parts.append("Kept as features on request although flagged: "
                         + "; ".join(f"'{c.column}' ({c.reason})" for c in self.kept) + ".")
        return " ".join(parts)


def feature_statement(features: Sequence[str], declared: bool, read_private: str | None) -> str:
    """What a release says about its feature columns: declared, chosen on public columns, or
    :data:`FEATURES_READ_NOTE` when a check of the private rows chose them.

    Parameters
    ----------
    features : sequence of str
    declared : bool
    read_private : str or None
        :attr:`FeatureChoice.read_private`.

    Returns
    -------
    str
    """
    names = ", ".join(str(c) for c in features)
    if read_private is not None:
        return FEATURES_READ_NOTE.format(what=read_private)
    if declared:
        return f"features declared (public): {names}"
    return f"features chosen on the public file's columns (public): {names}"


def default_features(check: Any, *, keep: Sequence[str] = (), public: Any = None,
                     declared: bool = False) -> FeatureChoice:
    """The features of a run on a checked table: every checked column but the flagged ones.

    Parameters
    ----------
    check : core.data.ColumnCheck
        The column check of the private table (its ``features`` and ``problems``).
    keep : sequence of str, optional
        Flagged columns the user keeps as features (explicitly).  A name that is no
        checked column is refused; one that is not flagged is a feature anyway.
    public : core.data.ColumnCheck, optional (keyword-only)
        The check of the public rows of a two-file job (:func:`core.data.check_public_columns`).
        Given, the identifiers, survey weights and person keys that leave a column out are
        the public rows' findings (a column the public file lacks: the private finding by
        its name only); of the private check only the label stand-ins count.  None: a
        one-file job, every finding read on the private rows.
    declared : bool, default False (keyword-only)
        The checked features were declared by the user in advance (``--features``, the
        app's column choice): no note unless a private finding left one of them out.

    Notes
    -----
    Why (docs/design.md §1.3): the feature set leaves with the student and the export.  A
    value-based test on the private rows (e.g. whole numbers all different) makes it a
    function of one person's value: with ``public=`` that test reads public rows only, so
    neighbouring private files give the same set unless a stand-in (which needs the private
    labels) is found, and that case is stated in :attr:`FeatureChoice.read_private`.

    Returns
    -------
    FeatureChoice

    Raises
    ------
    DataError
        When ``keep`` names a column that is not among the checked features.
    """
    features = tuple(str(c) for c in check.features)
    keep = [str(c) for c in keep]
    unknown = [c for c in keep if c not in features]
    if unknown:
        raise DataError(f"Cannot keep {', '.join(repr(c) for c in unknown)}: not a feature column of this table; "
                        f"its feature columns are {', '.join(repr(c) for c in features)}.")
    found: dict[str, tuple[list[str], list[str]]] = {}
    on_public = set() if public is None else {str(c) for c in public.features}
    problems = list(check.problems)
    if public is not None:
        problems = [p for p in problems if p.kind == "label_stand_in" or (
            p.kind in _VALUE_KINDS and all(c not in on_public for c in p.columns)
            and str(getattr(p, "reason", "") or "").startswith("its name"))]
        problems += [p for p in public.problems if p.kind in _VALUE_KINDS]
    for p in sorted(problems, key=lambda p: LEFT_OUT_KINDS.index(p.kind) if p.kind in LEFT_OUT_KINDS else 99):
        if p.kind not in LEFT_OUT_KINDS or not any(f.action == "keep_column" for f in p.fixes):
            continue
        for column in p.columns:
            if column in features:
                kinds, reasons = found.setdefault(column, ([], []))
                if p.kind not in kinds:
                    kinds.append(p.kind)
                    reasons.append(str(getattr(p, "reason", "") or ""))
    flagged = [LeftOut(c, tuple(found[c][0]), tuple(found[c][1])) for c in features if c in found]
    left_out = tuple(f for f in flagged if f.column not in keep)
    kept = tuple(f for f in flagged if f.column in keep)
    gone = {f.column for f in left_out}
    chosen = tuple(c for c in features if c not in gone)
    if not chosen:
        raise DataError("Every feature column is flagged (" + "; ".join(f"'{f.column}': {f.reason}" for f in left_out)
                        + "): keep at least one explicitly to have something to learn from.")
    read, private = _read_private(check, left_out, public, declared)
    return FeatureChoice(chosen, left_out, kept, read, bool(declared), private)


def _read_private(check: Any, left_out: Sequence[LeftOut], public: Any,
                  declared: bool) -> tuple[str | None, tuple[str, ...]]:
    """Which check of the private rows chose the set and what it left out (None: none did), and
    the columns it left out.

    The stand-in check counts as read whenever it was asked for: skipped for too few labeled
    rows, it still read the private rows (how many carry a label), and neighbouring files
    must give the same statement.  Columns dropped as empty in every private row
    (``drop_empty_columns``) were chosen by the private values too."""
    empty = getattr(check, "empty_dropped", None)
    parts = []
    if public is None:
        private = tuple(f.column for f in left_out)
        parts.append("identifiers, survey weights, person keys and label stand-ins looked for in the private rows")
    else:
        private = tuple(f.column for f in left_out if "label_stand_in" in f.kinds)
        why_not = str(getattr(check, "not_made", {}).get("label_stand_in", ""))
        if "label_stand_in" in getattr(check, "made", ()) or why_not.startswith("fewer than"):
            parts.append("label stand-ins looked for in the private rows")
    if empty is not None:
        private += tuple(c for c in empty if c not in private)
        parts.append("columns empty in every private row dropped")
    if not parts:
        return None, ()  # no check of the private rows was made: the set read public columns only
    if declared and not private:
        return None, ()
    return " and ".join(parts) + (f"; left out: {', '.join(private)}" if private else "; none left out"), private
