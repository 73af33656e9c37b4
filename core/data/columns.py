"""What each column of a private table looks like: identifiers, survey weights, free text, dates, label stand-ins.

:func:`column_warnings` reads each feature column and says, in a sentence, when it looks
like

``"identifier"``
    something that names a person or a record rather than describing it, found by the
    column's name (``id``, ``name``, ``first``, ``last``, ``surname``, ``email``, ``phone``,
    ``zip``...) or by its content: e-mail addresses, phone numbers, postcodes, people's
    names (values found in lists of common first names and surnames, or shaped like
    capitalised names and nearly all different), text nearly unique per row (case
    numbers, codes), or whole numbers unique in every row (row numbers).  Teachers cannot
    generalise from it, and an export of it is a join key back to people;
``"survey_weight"``
    a survey's sampling weight, found by its name (``fnlwgt``, ``perwt``, ``pwgtp``,
    ``wtfinl``, ``final_weight``, ``sampling_weight``...; not ``weight`` or ``wt.loss``): it
    says how many people a row stands for, not anything about the row's person;
``"free_text"``
    many distinct long or many-word texts (one-hot encoding makes each its own column);
``"date"``
    dates written as text (read as categories, one per day);
``"label_stand_in"``
    a column that agrees with the label, or tells almost everything about it, by its
    values, its missingness or one threshold (:mod:`core.data.standins`; every column is
    tested, identifiers included): often the outcome itself or a leak of it.  A NON-PRIVATE
    diagnostic computed on the private rows, for the data's owner only, never exported.

Identifiers, survey weights and label stand-ins are left out of the features by default
(:func:`core.data.features.default_features`, :data:`core.data.features.LEFT_OUT_KINDS`).
The sentences name no command-line flag; :mod:`core.data.problems` attaches the fixes
(an app button, a command-line flag) to each.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from core.data.standins import StandIn, single_column_accuracy, stand_in

__all__ = [
    "ColumnWarning",
    "WARNING_KINDS",
    "IDENTIFIER_NAMES",
    "SURVEY_WEIGHT_NAMES",
    "SURVEY_WEIGHT_PHRASES",
    "PERSON_NAME_COLUMNS",
    "column_warnings",
    "identify",
    "PERSON_KEY_NAMES",
    "PersonKey",
    "person_keys",
    "duplicate_rows",
    "single_column_accuracy",
]

WARNING_KINDS = ("identifier", "survey_weight", "free_text", "date", "label_stand_in")
"""The kinds of :class:`ColumnWarning`, in the order they are checked."""

IDENTIFIER_NAMES = frozenset({
    "id", "uuid", "guid", "ssn", "email", "mail", "phone", "telephone", "tel", "mobile", "cell", "fax",
    "address", "street", "zip", "zipcode", "postcode", "postal", "postalcode", "passport", "iban",
    "account", "casenumber", "recordnumber", "mrn",
})
"""Words of a column name (split at anything but letters and digits, and at camelCase) that
mark an identifier."""

SURVEY_WEIGHT_NAMES = frozenset({
    "fnlwgt", "finalwgt", "finwgt", "perwt", "hhwt", "pwgtp", "wgtp", "wtfinl", "wtsupp", "sampwt", "sampwgt",
    "wtpers", "basewgt", "expansionfactor",
})
"""Name words of survey weights (census and survey codes), matched whole."""

SURVEY_WEIGHT_PHRASES = ("finalweight", "weightfinal", "sampleweight", "samplingweight", "surveyweight",
                         "designweight", "personweight", "householdweight", "replicateweight", "baseweight")
"""Phrases found in a name with its separators removed (``final_weight``, ``SampleWeight2019``).
A column called just ``weight`` (often a person's body weight) or ``wt.loss`` is left alone."""

PERSON_NAME_COLUMNS = frozenset({
    "name", "names", "first", "last", "firstname", "lastname", "fullname", "surname", "surnames",
    "forename", "givenname", "familyname", "middlename", "middle", "fname", "lname", "maidenname",
    "nickname", "personname",
})
"""Column names (whole, ignoring case and separators) or name words that hold people's names."""

_FIRST_NAMES = frozenset("""
james john robert michael william david richard joseph thomas charles christopher daniel matthew anthony
mark donald steven paul andrew joshua kenneth kevin brian george timothy ronald edward jason jeffrey ryan
jacob gary nicholas eric jonathan stephen larry justin scott brandon benjamin samuel gregory alexander
frank patrick raymond jack dennis jerry tyler aaron jose adam nathan henry douglas zachary peter kyle
walter ethan jeremy harold keith christian roger noah gerald carl terry sean austin arthur lawrence jesse
dylan bryan joe jordan billy bruce albert willie gabriel logan alan juan wayne roy ralph randy eugene
vincent russell elijah louis bobby philip johnny carlos luis miguel jorge antonio marcus darnell tyrone
andre jamal terrell deshawn lamar reginald cedric mary patricia jennifer linda elizabeth barbara susan
jessica sarah karen lisa nancy betty margaret sandra ashley kimberly emily donna michelle carol amanda
dorothy melissa deborah stephanie rebecca sharon laura cynthia kathleen amy angela shirley anna brenda
pamela emma nicole helen samantha katherine christine debra rachel carolyn janet catherine maria heather
diane ruth julie olivia joyce virginia victoria kelly lauren christina joan evelyn judith megan andrea
cheryl hannah jacqueline martha gloria teresa ann sara madison frances kathryn janice jean abigail alice
judy sophia grace denise amber doris marilyn danielle beverly isabella theresa diana natalie brittany
charlotte marie kayla alexis lori tanisha latoya keisha ebony shanice monique yolanda rosa ana carmen
""".split())
_SURNAMES = frozenset("""
smith johnson williams brown jones garcia miller davis rodriguez martinez hernandez lopez gonzalez wilson
anderson thomas taylor moore jackson martin lee perez thompson white harris sanchez clark ramirez lewis
robinson walker young allen king wright scott torres nguyen hill flores green adams nelson baker hall
rivera campbell mitchell carter roberts gomez phillips evans turner diaz parker cruz edwards collins
reyes stewart morris morales murphy cook rogers gutierrez ortiz morgan cooper peterson bailey reed kelly
howard ramos kim cox ward richardson watson brooks chavez wood james bennett gray mendoza ruiz hughes
price alvarez castillo sanders patel myers long ross foster jimenez powell jenkins perry russell sullivan
bell coleman butler henderson barnes gonzales fisher vasquez simmons romero jordan patterson alexander
hamilton graham reynolds griffin wallace moreno west cole hayes bryant herrera gibson ellis tran medina
aguilar stevens murray ford castro marshall owens harrison fernandez mcdonald woods washington kennedy
wells vargas henry chen freeman webb tucker guzman burns crawford olson simpson porter hunter gordon
""".split())

_DATE = re.compile(r"^\s*(\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})([ T]\d{1,2}:\d{2}(:\d{2})?)?\s*$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
_PHONE = re.compile(r"^\+?[\d\s().\-/]{7,24}$")
_POSTCODE = re.compile(
    r"^(?:[A-Z]{1,2}\d[A-Z\d]?\s*\d[A-Z]{2}"  # United Kingdom
    r"|\d{5}-\d{4}"  # United States ZIP+4
    r"|[A-Z]\d[A-Z]\s?\d[A-Z]\d"  # Canada
    r"|\d{4}\s?[A-Z]{2})$",  # Netherlands
    re.IGNORECASE,
)
_CAPITALISED = re.compile(r"^[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)*(?:,?\s+[A-Z][a-z]*\.?(?:[-'][A-Z]?[a-z]+)*){0,3}$")


@dataclass(frozen=True)
class ColumnWarning:
    """One finding about one column.

    Attributes
    ----------
    column : str
        The column's name.
    kind : str
        One of :data:`WARNING_KINDS`.
    sentence : str
        What was found and what to do, in words (no command-line flag).
    reason : str
        The finding in a few words (e.g. ``"people's names (found in lists of names)"``).
    stand_in : StandIn or None
        The NON-PRIVATE stand-in statistics, for a ``"label_stand_in"`` finding.
    """

    column: str
    kind: str
    sentence: str
    reason: str = ""
    stand_in: StandIn | None = None

    def __str__(self) -> str:
        return self.sentence


def _name_words(name: str) -> set[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", str(name))
    words = {w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w}
    return words | {_joined(name)}


def _joined(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", str(name).lower())


def _is_text(values: pd.Series) -> bool:
    if pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        return False
    if pd.to_numeric(values.dropna().head(200), errors="coerce").isna().any():
        return True
    return bool(pd.to_numeric(values.dropna(), errors="coerce").isna().any())


def _whole_numbers(values: pd.Series) -> bool:
    x = pd.to_numeric(values, errors="coerce").dropna().to_numpy(dtype=float)
    return x.size > 0 and bool(np.all(np.isfinite(x)) and np.all(x == np.round(x)))


def _share(text: pd.Series, pattern: re.Pattern) -> float:
    return float(text.map(lambda v: bool(pattern.match(v))).mean()) if len(text) else 0.0


def _looks_like_dates(text: pd.Series) -> bool:
    if text.empty or _share(text, _DATE) < 0.9:
        return False
    parsed = pd.to_datetime(text[text.map(lambda v: bool(_DATE.match(v)))], errors="coerce", format="mixed")
    return bool(parsed.notna().mean() >= 0.9)


def _phone_like(text: pd.Series) -> bool:
    digits = text.str.count(r"\d")
    shaped = text.map(lambda v: bool(_PHONE.match(v))) & digits.between(7, 15)
    separated = text.str.contains(r"[\s().\-/+]", regex=True)
    return bool(shaped.mean() >= 0.8 and separated.mean() >= 0.5)


def _name_list_share(text: pd.Series) -> float:
    tokens = text.str.lower().str.replace(r"[^a-z\s'-]", " ", regex=True).str.split()
    known = tokens.map(lambda ws: any(w in _FIRST_NAMES or w in _SURNAMES for w in ws) if ws else False)
    return float(known.mean()) if len(known) else 0.0


def identify(values: pd.Series, name: str, *, min_rows: int = 20) -> tuple[str, str] | None:
    """What one column holds, when it is not an ordinary feature.

    Parameters
    ----------
    values : pandas.Series
        The column (text, or numbers).
    name : str
        The column's name.
    min_rows : int, default 20
        Fewer present values than this: no judgement by content (only by name and shape).

    Returns
    -------
    (kind, reason) or None
        ``kind`` is ``"identifier"``, ``"survey_weight"``, ``"free_text"`` or ``"date"``;
        ``reason`` says what was found, in a few words.
    """
    present = values.dropna()
    n = len(present)
    if n == 0:
        return None
    text = present.astype(str).str.strip()
    sample = text.sample(min(n, 2000), random_state=0) if n > 2000 else text
    distinct = int(text.nunique())
    is_text = _is_text(present)
    words = _name_words(name)
    joined = _joined(name)
    enough = n >= min_rows
    if is_text and _looks_like_dates(sample):
        return "date", f"dates written as text (e.g. '{text.iloc[0]}'; {distinct} distinct)"
    if joined in PERSON_NAME_COLUMNS or words & (PERSON_NAME_COLUMNS - {"first", "last", "middle", "name", "names"}):
        return "identifier", "people's names (its name says so)"
    if "name" in words and is_text and distinct >= 0.2 * n:
        return "identifier", "names (its name says so, and its values are nearly all different)"
    if is_text and _share(sample, _EMAIL) >= 0.8:
        return "identifier", "e-mail addresses"
    if is_text and _phone_like(sample):
        return "identifier", "phone numbers"
    if is_text and _share(sample, _POSTCODE) >= 0.8 and distinct > 5:
        return "identifier", "postcodes"
    if not is_text and (words & SURVEY_WEIGHT_NAMES or any(w in joined for w in SURVEY_WEIGHT_PHRASES)):
        return "survey_weight", f"its name ('{name}') marks a survey's sampling weight"
    if words & IDENTIFIER_NAMES:
        found = sorted(words & IDENTIFIER_NAMES)[0]
        return "identifier", f"its name ('{found}') marks an identifier"
    if is_text and enough and distinct >= 10 and _name_list_share(sample) >= 0.5 and distinct >= 0.05 * n:
        return "identifier", "people's names (found in lists of common first names and surnames)"
    lengths = text.str.len()
    many_words = text.str.count(r"\s+").median() >= 3 or lengths.median() >= 30
    if is_text and enough and distinct >= 0.5 * n:
        if many_words:
            return "free_text", (f"free text ({distinct} distinct values in {n} rows, typically "
                                 f"{int(lengths.median())} characters)")
        if _share(sample, _CAPITALISED) >= 0.9:
            return "identifier", f"people's names or other proper names ({distinct} distinct capitalised values in {n} rows)"
        return "identifier", f"codes nearly unique per row, such as case or record numbers ({distinct} distinct in {n} rows)"
    if is_text and enough and distinct >= 20 and distinct >= 0.2 * n and _share(sample, _CAPITALISED) >= 0.9 \
            and _name_list_share(sample) >= 0.2:
        return "identifier", f"people's names ({distinct} distinct capitalised values in {n} rows)"
    if enough and distinct == n and not is_text and _whole_numbers(present):
        x = np.sort(pd.to_numeric(present, errors="coerce").to_numpy(dtype=float))
        if np.all(np.diff(x) == 1.0):
            return "identifier", f"row numbers (consecutive whole numbers, one per row, from {x[0]:.0f} to {x[-1]:.0f})"
        return "identifier", f"whole numbers different in every one of the {n} rows"
    return None


LEFT_OUT_SENTENCE = ("It is left out of the features unless you keep it explicitly (it can still be carried into "
                     "the export as a join key).")
"""What the sentence of an identifier or a survey weight adds: the default and how to change it."""


def _sentence(column: str, kind: str, reason: str) -> str:
    if kind == "date":
        return (f"Column '{column}' holds {reason}: they would be read as categories, one per distinct day. "
                "Drop it, or replace it by a number such as an age or a year.")
    if kind == "free_text":
        return (f"Column '{column}' looks like {reason}: each text would be a category of its own. "
                "Drop it, or turn it into a few features first.")
    if kind == "survey_weight":
        return (f"Column '{column}' looks like a survey weight: {reason}. It says how many people a row stands for, "
                "not something about the row's person, so it is no feature. " + LEFT_OUT_SENTENCE)
    return (f"Column '{column}' looks like an identifier: {reason}. An identifier teaches the teachers nothing, "
            "and copied into an export it links rows back to people. " + LEFT_OUT_SENTENCE)


def _stand_in_sentence(column: str, label: str | None, s: StandIn) -> str:
    label_text = f"the label '{label}'" if label is not None else "the label"
    if s.test == "missingness":
        found = (f"is filled in or empty with {label_text}: whether it is missing agrees with the label on "
                 f"{s.agreement:.0%} of held-out rows (always answering the most common class: {s.baseline:.0%})")
    elif s.test == "threshold":
        found = (f"turns into {label_text} at a single threshold on {s.agreement:.0%} of held-out rows (always "
                 f"answering the most common class: {s.baseline:.0%})")
    elif s.test == "outcome time":
        found = (f"is named like a time or an event measured up to the outcome, and a single threshold on it gives "
                 f"{label_text} on {s.agreement:.0%} of held-out rows (always answering the most common class: "
                 f"{s.baseline:.0%})")
    else:
        grouped = f", its {s.grouped} rare values grouped" if s.grouped else ""
        found = (f"agrees with {label_text} on {s.agreement:.0%} of held-out rows (always answering the most "
                 f"common class: {s.baseline:.0%}) and explains {s.information:.0%} of its uncertainty{grouped}")
    return (f"Column '{column}' {found}. It may be the outcome itself or a leak of it: it is left out of the "
            "features unless you keep it explicitly, which is right only if its value is known whenever the labels "
            "are used. NON-PRIVATE diagnostic computed on the private rows: for the data's owner only, never exported.")


def _stand_in_reason(s: StandIn) -> str:
    if s.test == "missingness":
        return f"whether it is filled in agrees with the label on {s.agreement:.0%} of held-out rows"
    if s.test == "threshold":
        return f"one threshold gives the label on {s.agreement:.0%} of held-out rows"
    if s.test == "outcome time":
        return (f"named like a time up to the outcome; one threshold gives the label on {s.agreement:.0%} of "
                "held-out rows")
    return f"agrees with the label on {s.agreement:.0%} of held-out rows"


def column_warnings(
    frame: pd.DataFrame,
    label_column: str | None,
    *,
    labels: Any = None,
    stand_ins: bool = True,
    min_rows: int = 20,
    max_rows: int = 20_000,
    rng: int = 0,
) -> list[ColumnWarning]:
    """Findings about columns that look like identifiers, free text, dates or label stand-ins.

    Parameters
    ----------
    frame : pandas.DataFrame
        The private table: its feature columns, and the label column unless ``labels`` is given.
    label_column : str or None
        The label column's name (skipped as a feature, named in the sentences).
    labels : array-like, optional
        The labels, when they are not a column of ``frame``.
    stand_ins : bool, default True
        Look for label stand-ins (needs the labels).
    min_rows : int
        Fewer non-missing rows than this: no judgement by content, and no stand-in check.
    max_rows : int
        At most this many rows (a fixed random sample) are examined.
    rng : int
        Seed of the sample and of the stand-in check's split (a fixed diagnostic, not noise).

    Returns
    -------
    list of ColumnWarning
        In column order; at most one of identifier/survey weight/free text/date per
        column, and a stand-in finding for any column (identifiers included: every column
        is tested).
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
    out: list[ColumnWarning] = []
    for column in frame.columns:
        if column == label_column:
            continue
        values = frame[column]
        found = identify(values, str(column), min_rows=min_rows)
        if found is not None:
            kind, reason = found
            out.append(ColumnWarning(str(column), kind, _sentence(str(column), kind, reason), reason))
        if not stand_ins or labels is None or len(values) < min_rows:
            continue
        s = stand_in(values.reset_index(drop=True), labels, rng=rng, name=str(column))
        if s.flagged:
            out.append(ColumnWarning(str(column), "label_stand_in", _stand_in_sentence(str(column), label_column, s),
                                     _stand_in_reason(s), s))
    return out


PERSON_KEY_NAMES = frozenset({
    "id", "nr", "pid", "person", "personid", "subject", "subjectid", "patient", "patientid", "participant",
    "respondent", "member", "memberid", "customer", "customerid", "client", "clientid", "user", "userid",
    "individual", "household", "hhid", "case", "caseid", "mrn", "ssn", "uuid", "guid", "student", "studentid",
    "employee", "employeeid", "account", "accountid",
})
"""Column names (whole or a word, ignoring case and separators) that name a person or a record."""


@dataclass(frozen=True)
class PersonKey:
    """A column whose values repeat across rows like a person key (a NON-PRIVATE diagnostic).

    Attributes
    ----------
    column : str
    n_keys : int
        Distinct values.
    largest : int
        Rows of the most frequent value.
    reason : str
        Why it looks like a key, in a few words.
    """

    column: str
    n_keys: int
    largest: int
    reason: str


def person_keys(frame: pd.DataFrame, *, skip: tuple = (), min_keys: int = 10) -> list[PersonKey]:
    """Columns whose values repeat across rows like a person key.

    A column is reported when its values repeat (at least 30 % of the rows share their
    value with another row: a key of one row per person is no risk for a per-row
    guarantee, and a few coincidences, such as two people of one name, are not a
    panel), it has at least ``min_keys`` distinct values, and
    either its name names a person or record (:data:`PERSON_KEY_NAMES`) or each of its
    values occupies one contiguous block of rows (a file sorted by person, as panels
    are), with at most half as many distinct values as rows.  Reads the private rows: a
    NON-PRIVATE diagnostic for the data's owner, never exported.

    Parameters
    ----------
    frame : pandas.DataFrame
        The private table's columns (the label column excluded by the caller or ``skip``).
    skip : tuple of str
        Columns not to examine.
    min_keys : int

    Returns
    -------
    list of PersonKey
    """
    out = []
    for column in frame.columns:
        if column in skip:
            continue
        values = frame[column]
        present = values.dropna()
        if len(present) < 2:
            continue
        text = present.astype(str).str.strip()
        counts = text.value_counts()
        n_keys, largest = int(counts.size), int(counts.iloc[0])
        repeated = int(counts[counts > 1].sum())
        if largest < 2 or n_keys < min_keys or repeated < 0.3 * len(text):
            continue
        words = _name_words(str(column))
        named = bool(words & PERSON_KEY_NAMES)
        runs = int((text != text.shift()).sum())
        blocks = runs == n_keys and n_keys <= 0.5 * len(text)
        if not (named or blocks):
            continue
        reason = ("its name names a person or record" if named else "each value fills one block of consecutive rows")
        out.append(PersonKey(str(column), n_keys, largest, reason))
    return out


def duplicate_rows(frame: pd.DataFrame) -> tuple[int, int]:
    """Rows that are exact copies of an earlier row, and the size of the largest group of copies.

    Reads the private rows: a NON-PRIVATE diagnostic.

    Returns
    -------
    (int, int)
        ``(copies, largest)``: 0 and 1 when every row is distinct.
    """
    if frame.empty:
        return 0, 1
    dup = frame.duplicated(keep="first")
    if not dup.any():
        return 0, 1
    sizes = frame.groupby(list(frame.columns), dropna=False, sort=False).size()
    return int(dup.sum()), int(sizes.max())
