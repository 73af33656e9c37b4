"""The class list of a private table: declared by the user (public by construction), or read
from the private rows and then treated as public (docs/design.md §1.3).

The class list is released by everything downstream of a labeling: the labels name their
classes, the published student carries the list, the privacy report states it, and the
DP-training routes fit one model per class (ε/c each, one-vs-rest).  Read from the private
rows, it is a deterministic function of them: under add/remove-one-person adjacency a class
held by one person is in the list exactly when that person is in the data, which no noise
hides.  Declared (``load_table(..., classes=[...])``), the list is a public input, like a
declared domain in OpenDP or the declared group-by keys of Tumult Analytics: a neighbouring
file has the very same list, ``c`` is fixed before any row is read, and a row whose label is
not declared is handled as a row without a label (dropped under ``missing="drop"`` — a
removal of that row, covered by the adjacency — and refused otherwise).

References
----------
.. [1] R. Bassily, O. Thakkar, A. Thakurta, "Model-Agnostic Private Learning", NeurIPS 2018
   (the labeling's output space is the declared set of classes).
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from core.errors import DataError, ParameterError

from core.data.missing import row_list
from core.data.table import MAX_CLASSES

__all__ = [
    "CLASSES_READ_NOTE",
    "check_classes",
    "class_list",
    "class_statement",
    "declared_labels",
]

CLASSES_READ_NOTE = (
    "CLASS LIST READ FROM THE PRIVATE FILE, treated as public: every class that any private row holds is named in "
    "the labels, the published student and this report — a class held by only a few persons reveals that they are "
    "in the data; declare the classes (--class-names A,B,... on the command line, the Declared classes box in the "
    "app, load_table(classes=...) in the library) to keep it public by construction."
)
"""The statement of a report (and the ``label`` command's note) when the class list was read
from the private rows (docs/design.md §1.3)."""


def check_classes(classes) -> tuple[str, ...] | None:
    """The declared class list, checked: names stripped of surrounding spaces, in the order given.

    Parameters
    ----------
    classes : sequence of str or None
        The declared, public class names (e.g. ``["<=50K", ">50K"]``); None: not declared.

    Returns
    -------
    tuple of str or None

    Raises
    ------
    ParameterError
        When ``classes`` is a single text (give a list, or split ``"a,b"`` at its commas), a
        name is empty or repeated, or there are fewer than two or more than ``MAX_CLASSES``.
    """
    if classes is None:
        return None
    if isinstance(classes, (str, bytes)) or not isinstance(classes, Iterable):
        raise ParameterError(
            "classes must be a list of class names, e.g. classes=['no', 'yes'], got "
            f"{type(classes).__name__}" + (" (split a text 'a,b' at its commas)." if isinstance(classes, str) else ".")
        )
    names = [str(c).strip() if isinstance(c, (str, int, np.integer)) and not isinstance(c, bool) else None
             for c in classes]
    if any(n is None for n in names):
        raise ParameterError("classes must hold class names as text (or whole numbers written as the file writes them).")
    if any(not n for n in names):
        raise ParameterError("A declared class name is empty; give every class a name.")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ParameterError(f"Class(es) {', '.join(repr(n) for n in repeated)} are declared more than once.")
    if len(names) < 2:
        raise ParameterError(f"Declare at least two classes (a classifier needs two), got {len(names)}.")
    if len(names) > MAX_CLASSES:
        raise ParameterError(f"Declare at most {MAX_CLASSES} classes, got {len(names)}.")
    return tuple(names)


def declared_labels(labels_text: pd.Series, classes: Sequence[str], *, label: str, missing: str) -> pd.Series:
    """The labels with every label that is not a declared class made missing (NaN).

    Under ``missing="drop"`` such a row is then dropped as a row without a label: the
    removal of a row, covered by add/remove adjacency, and the class list stays the declared
    one.  Otherwise the file is refused: labels are never imputed, and a label outside the
    declared list is not silently turned into another class.

    Parameters
    ----------
    labels_text : pandas.Series
        The label column's text (:func:`core.data.reading.clean_text`), NaN where empty.
    classes : sequence of str
        The declared classes (:func:`check_classes`).
    label : str
        The label column's name, for the message.
    missing : {"refuse", "impute", "drop"}

    Returns
    -------
    pandas.Series

    Raises
    ------
    DataError
        Without ``missing="drop"``, when a row's label is not declared; the message names the
        declared list, the undeclared values and their rows (the owner's own file, read locally).
    """
    undeclared = (labels_text.notna() & ~labels_text.isin(list(classes))).to_numpy()
    if not undeclared.any():
        return labels_text
    if missing != "drop":

        rows = np.flatnonzero(undeclared)
        values = ", ".join(f"'{v}'" for v in pd.unique(labels_text[undeclared])[:5])
        raise DataError(
            f"{len(rows)} row(s) hold a label in column '{label}' that is not among the declared classes "
            f"({', '.join(classes)}): {values} (data row(s) {row_list(rows)}). Add the missing class(es) to the "
            "declared classes, correct those labels, or drop those rows (missing='drop' drops them as rows "
            "without a label), and load the file again."
        )
    return labels_text.where(~undeclared)


def class_list(labels_text: pd.Series, label: str, classes: Sequence[str] | None) -> tuple[str, ...]:
    """The table's class names: the declared ones in their order, else the distinct labels of
    the rows (numbers by value, text alphabetically).

    Parameters
    ----------
    labels_text : pandas.Series
        The kept rows' labels (no NaN).
    label : str
        The label column's name, for the messages.
    classes : sequence of str or None
        The declared classes; a declared class with no row is kept.

    Returns
    -------
    tuple of str

    Raises
    ------
    DataError
        Without a declaration: when the rows hold a single class or more than ``MAX_CLASSES``.
    """
    if classes is not None:
        return tuple(classes)
    distinct = pd.unique(labels_text)
    if len(distinct) < 2:
        raise DataError(
            f"The label column '{label}' holds a single class ('{distinct[0]}'). A classifier "
            "needs at least two classes: add rows of another class, or choose another "
            "label_column."
        )
    if len(distinct) > MAX_CLASSES:
        raise DataError(
            f"The label column '{label}' holds {len(distinct)} distinct values, more than "
            f"{MAX_CLASSES}: it is likely a regression target or an identifier, not a class. "
            "Choose the right column with label_column, or group the values into at most "
            f"{MAX_CLASSES} classes."
        )
    values = [str(v) for v in distinct]
    try:
        return tuple(sorted(values, key=lambda v: (float(v), v)))
    except ValueError:  # not every label is a number
        return tuple(sorted(values))


def class_statement(class_names: Sequence[str], declared: bool) -> str:
    """What a release says about its class list: ``"classes declared (public): a, b"``, or
    :data:`CLASSES_READ_NOTE` when the list was read from the private rows.

    Parameters
    ----------
    class_names : sequence of str
    declared : bool
        ``Table.classes_declared``.

    Returns
    -------
    str
    """
    if declared:
        return "classes declared (public): " + ", ".join(str(c) for c in class_names)
    return CLASSES_READ_NOTE
