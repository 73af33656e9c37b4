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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from core.errors import DataError

__all__ = ["LEFT_OUT_KINDS", "KIND_WORDS", "LeftOut", "FeatureChoice", "default_features"]

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
    """

    features: tuple[str, ...]
    left_out: tuple[LeftOut, ...] = ()
    kept: tuple[LeftOut, ...] = ()

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


def default_features(check: Any, *, keep: Sequence[str] = ()) -> FeatureChoice:
    """The features of a run on a checked table: every checked column but the flagged ones.

    Parameters
    ----------
    check : core.data.ColumnCheck
        The column check of the private table (its ``features`` and ``problems``).
    keep : sequence of str, optional
        Flagged columns the user keeps as features (explicitly).  A name that is no
        checked column is refused; one that is not flagged is a feature anyway.

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
    for p in check.problems:
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
    return FeatureChoice(chosen, left_out, kept)
