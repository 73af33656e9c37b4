"""Exports: the privately labeled public rows and the privacy report.

(Slightly over the 500-line aim: the report's schema, its allow-list of public parameters
and the checks that nothing private leaves are one topic and are kept in one place.)

Nothing here writes a file: the functions return a :class:`pandas.DataFrame` or a
``dict``/JSON string, and the app or the command line writes them where the user asks.

What an export may hold (docs/design.md §6): the public features, the private outputs (a label,
a released score or nothing) and a privacy report (mechanism, public parameters, ε, δ,
counts).  Never a seed, vote counts, margins, teacher accuracy or a data-dependent ε:
the report's parameters pass through the explicit allow-list
:data:`PUBLIC_PARAMETERS`, and a name containing any of :data:`FORBIDDEN_WORDS` is
dropped even if listed.

Cells are written exactly as they are, a leading ``=``, ``+``, ``-`` or ``@`` included: an
export is data for a program, and the prefix that stops a spreadsheet from evaluating a
formula would change the labels a reader gets (a class ``-1`` would read ``'-1``).  Open an
export as data, not in a spreadsheet that evaluates formulas (docs/guide/data-owner.md,
"A real table, handled safely").

Schema of :func:`labeled_frame` (columns, in order)
    the join keys, when asked (``keys=``: columns of the public file carried into the
    export without being features, e.g. an identifier left out of the features, so that
    the labels can be joined back to the public file's rows; as given, text stays text);
    the public file's feature columns, as given (same names, order, values and index; a float
    column holding only whole numbers becomes a nullable integer column, so Adult's
    ``age`` is written ``40``, not ``40.0``); then the columns the export adds, named by
    :func:`export_columns` so that they never clash with the public file's own or the keys (by
    default ``label``, ``answered`` and ``status``; ``private_status`` when the public
    file has a ``status`` column, and so on):
    label: object column — for hard labels the class name (text), for soft labels
    the released score (float); the empty string ``""`` where the query was not answered;
    answered: bool;
    status: ``"answered"``, ``"abstained"`` (⊥) or ``"not processed"`` (after the
    mechanism halted).

Schema of :func:`privacy_report` (keys, in order)
    ``library`` (``"private-label-lab"``), ``version``, ``mechanism``, ``adjacency``
    (``"replace one private row"``, or ``"replace all rows of one person (column id)"``),
    ``privacy_unit`` {``unit``, ``column``, ``units``, ``description``}, ``guarantee`` {``epsilon``, ``delta``,
    ``accounting``}, ``parameters`` {allow-listed public parameters, sorted by name},
    ``counts`` {``queries``, ``answered``, ``abstained``, ``not_processed``,
    ``public_rows``}, ``ensemble`` {``learner``, ``k``, ``n_private``}, ``dataset``
    (name or null), ``classes`` ({``names``, ``declared``, ``statement``}, or null when the
    caller gave no class list; docs/design.md §1.3); then, only for a release reported with its ledger
    (``privacy_report(..., ledger_total=...)``), :data:`RELEASE_KEYS`: ``release``
    {``epsilon``, ``delta``, ``covers``} and ``ledger`` {``epsilon``, ``delta``, ``runs``,
    ``accounting``, ``covers``} (docs/design.md §9).
"""

from __future__ import annotations

import json
import math
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from core.mechanisms.result import BOTTOM, UNPROCESSED, LabelingResult
from core.errors import DataError, ParameterError, SchemaError
from core.validation import check_integer, check_k

__all__ = [
    "LABEL_COLUMNS",
    "STATUS_ANSWERED",
    "STATUS_ABSTAINED",
    "STATUS_NOT_PROCESSED",
    "REPORT_KEYS",
    "RELEASE_KEYS",
    "RELEASE_COVERS",
    "LEDGER_COVERS",
    "PUBLIC_PARAMETERS",
    "FORBIDDEN_WORDS",
    "FORBIDDEN_WORD_EXCEPTIONS",
    "ADJACENCY",
    "PERSON_ADJACENCY",
    "LIBRARY",
    "EXPORT_ROLES",
    "export_columns",
    "labeled_frame",
    "privacy_report",
    "report_json",
]

LABEL_COLUMNS = ("label", "answered", "status")
"""The columns :func:`labeled_frame` appends after the public features (their default names)."""

EXPORT_ROLES = ("row", "label", "answered", "status")
"""The columns an export may add: ``row`` (a teaching split's row number in the uploaded
file), then :data:`LABEL_COLUMNS`."""

STATUS_ANSWERED = "answered"
STATUS_ABSTAINED = "abstained"
STATUS_NOT_PROCESSED = "not processed"

LIBRARY = "private-label-lab"
ADJACENCY = "replace one private row"
PERSON_ADJACENCY = "replace all rows of one person (column {column})"
"""The adjacency with a privacy unit (docs/design.md §1.2); ``{column}`` is the unit column."""

REPORT_KEYS = (
    "library",
    "version",
    "mechanism",
    "adjacency",
    "privacy_unit",
    "guarantee",
    "parameters",
    "counts",
    "ensemble",
    "dataset",
    "classes",
    "features",
)
"""Top-level keys of :func:`privacy_report`, in order."""

RELEASE_KEYS = ("release", "ledger")
"""Top-level keys a release's report adds after :data:`REPORT_KEYS` (``ledger_total`` given)."""

RELEASE_COVERS = (
    "The release's guarantee covers the exported labels if its parameters were fixed in advance "
    "(a fresh run at settings chosen before its output was seen); choosing parameters after looking "
    "at other runs is covered only by the ledger total."
)
"""What the release's own guarantee covers (the ``release.covers`` sentence)."""

LEDGER_COVERS = (
    "The ledger total composes every labeling run made on this private data so far, the release "
    "included (runs only looked at and discarded count too): it covers everything published from "
    "those runs together, including parameters chosen after looking at other runs."
)
"""What the ledger's total covers (the ``ledger.covers`` sentence)."""

_NESTED_KEYS = {
    "privacy_unit": ("unit", "column", "units", "description"),
    "guarantee": ("epsilon", "delta", "accounting"),
    "counts": ("queries", "answered", "abstained", "not_processed", "public_rows"),
    "ensemble": ("learner", "k", "n_private"),
    "classes": ("names", "declared", "statement"),
    "features": ("names", "declared", "statement"),
    "release": ("epsilon", "delta", "covers"),
    "ledger": ("epsilon", "delta", "runs", "accounting", "covers"),
}
_ALL_KEYS = REPORT_KEYS + RELEASE_KEYS

PUBLIC_PARAMETERS = frozenset(
    {
        # the user's settings
        "epsilon",
        "delta",
        "epsilon_target",
        "delta_target",
        "T",
        "m",
        "beta",
        "gamma",
        "eta",
        "n_bins",
        "calibration",
        "delta_split",
        "k",
        # quantities computed from the settings only (data-independent)
        "noise",
        "noise_scale",
        "query_noise_scale",
        "threshold",
        "rounds",
        "tests",
        "composition",
        "epsilon_svt",
        "delta_svt",
        "delta_release",
        "k_recommended",
        "k_min_unanimous",
        "epsilon_pate_simple",
        "epsilon_per_query",
        "delta_per_query",
        "eps0",
        "delta0",
        "delta_prime",
        # the Gaussian family's settings and the quantities derived from them
        "sigma",
        "sigma1",
        "sigma2",
        "accounting",
        "order",
        "budget",
        "ratio",
        # the certified mechanism's test outcome (pass/fail) and its cost; the test's
        # noisy continuous statistics are only compared with the budget, never published
        "passed",
        "epsilon_test",
        # DP training routes: the penalty (fixed from public sizes or given) and the noise kind
        "C",
        "perturbation",
        # the declared bound on each person's rows (a setting)
        "rows_per_unit",
    }
)
"""Names of :attr:`LabelingResult.params` entries that an export may show.

Every one is a setting or a function of the settings (ε, δ, T, m, β, γ, η, k and the
calibration), never of the private data — except the certified mechanism's test
outputs (``passed``, ``ell``, ``s_hat``, ``e_tilde``, ``test_statistic``), which are
released by its private budget test and paid for in its guarantee.  Other entries
(e.g. ``epsilon_data_dependent``) are left out of exports."""

FORBIDDEN_WORDS = (
    "seed",
    "rng",
    "random_state",
    "vote",
    "count",
    "margin",
    "accuracy",
    "data_dependent",
    "dist",
    "score",
)
"""A parameter whose name contains one of these is never exported, allow-listed or not
(except the names in :data:`FORBIDDEN_WORD_EXCEPTIONS`)."""

FORBIDDEN_WORD_EXCEPTIONS = frozenset({"accounting"})
"""Allow-listed names in which a forbidden word appears only inside an unrelated word:
``accounting`` (Confident-GNMax's accounting method, a setting) holds "count"."""


def _status(labels: np.ndarray) -> np.ndarray:
    status = np.full(labels.shape, STATUS_ANSWERED, dtype=object)
    status[labels == BOTTOM] = STATUS_ABSTAINED
    status[labels == UNPROCESSED] = STATUS_NOT_PROCESSED
    return status


def _check_result(result: Any) -> np.ndarray:
    if not isinstance(result, LabelingResult):
        raise ParameterError(f"result must be a LabelingResult from core.mechanisms, got {type(result).__name__}.")
    labels = np.asarray(result.labels)
    if labels.ndim != 1:
        raise DataError("The labeling's labels must be one value per query.")
    labels = labels.astype(np.int64)
    if np.any((labels < 0) & (labels != BOTTOM) & (labels != UNPROCESSED)):
        raise DataError("The labeling holds label values other than class ids, BOTTOM (-1) and UNPROCESSED (-2).")
    return labels


def export_columns(public_columns: Sequence[str]) -> dict[str, str]:
    """The names of the columns an export adds, none of them a name of the public file.

    Decide them when the files load, from every column of the public file (and the
    private file's, for a teaching split), so that a release is never refused for a
    clash and the public file's own columns pass through untouched.  A role whose
    default name is taken gets ``private_`` in front (``private_status``), then a number
    (``private_status_2``) until the name is free.

    Parameters
    ----------
    public_columns : sequence of str
        Every column name of the public file.

    Returns
    -------
    dict
        Role (:data:`EXPORT_ROLES`) -> column name; the names are distinct.

    Examples
    --------
    >>> export_columns(["status", "duration"])["status"]
    'private_status'
    """
    taken = {str(c) for c in public_columns}
    out: dict[str, str] = {}
    for role in EXPORT_ROLES:
        name = role if role not in taken else f"private_{role}"
        i = 2
        while name in taken:
            name = f"private_{role}_{i}"
            i += 1
        taken.add(name)
        out[role] = name
    return out


def labeled_frame(public: pd.DataFrame, result: LabelingResult, class_names: Sequence[str] | None, *,
                  columns: Mapping[str, str] | None = None, keys: pd.DataFrame | None = None) -> pd.DataFrame:
    """The public rows with their private labels, ready to be written as a CSV.

    Parameters
    ----------
    public : pandas.DataFrame, shape (m, n_features)
        The public rows that were labeled, in the order they were labeled.  Their columns
        pass through untouched, whatever their names.
    result : LabelingResult
        The private labeling of these rows.
    class_names : sequence of str or None
        Class id -> name (e.g. ``Table.class_names``).  Not used for soft labels; for
        hard labels None writes the class id as text.
    columns : mapping, optional (keyword-only)
        The names of the added columns (:func:`export_columns`, decided when the files
        loaded).  Default: :func:`export_columns` of the keys' and ``public``'s columns.
    keys : pandas.DataFrame, optional (keyword-only)
        Join keys: columns of the PUBLIC file that are not features (an identifier or a
        code left out of the features, :func:`core.data.default_features`), one row per
        labeled row in the same order.  They come first in the export, values as given.
        They are the public file's own values, so exporting them reveals nothing private;
        never pass a column of the private file here.

    Returns
    -------
    pandas.DataFrame
        The keys (if any), then a copy of ``public`` (same columns, order, values and
        index; float columns of whole numbers as nullable ``Int64``) followed by, under
        the names of ``columns``:

        - label (object): the class name for hard labels, the released score (float)
          for soft labels, ``""`` (empty) where the query was not answered;
        - answered (bool);
        - status (object): ``"answered"``, ``"abstained"`` or ``"not processed"``.

        Nothing else: no votes, margins or teacher outputs.

    Raises
    ------
    DataError
        When ``public`` is not a DataFrame, its length differs from the labeling, or a
        label has no class name; when ``keys`` is not a DataFrame of as many rows.
    SchemaError
        When a name in ``columns`` is one of ``public``'s columns (names decided for
        another file), or a key column is also a column of ``public``.
    """
    labels = _check_result(result)
    if not isinstance(public, pd.DataFrame):
        raise DataError(f"The public rows must be a pandas DataFrame, got {type(public).__name__}.")
    if len(public) != labels.shape[0]:
        raise DataError(
            f"There are {len(public)} public rows but the labeling has {labels.shape[0]} answers; "
            "pass the rows that were labeled, in the same order."
        )
    if keys is not None:
        if not isinstance(keys, pd.DataFrame) or len(keys) != len(public):
            raise DataError(f"The join keys must be a DataFrame with one row per labeled row ({len(public)}), got "
                            + (f"{len(keys)} rows." if isinstance(keys, pd.DataFrame) else f"{type(keys).__name__}."))
        both = [str(c) for c in keys.columns if c in public.columns]
        if both:
            raise SchemaError(f"Column(s) {', '.join(map(repr, both))} are features of the export already; a join key "
                              "is a column the export would not carry otherwise.")
    key_names = [] if keys is None else [str(c) for c in keys.columns]
    added = (export_columns(key_names + list(public.columns)) if columns is None
             else {r: str(columns[r]) for r in LABEL_COLUMNS})
    clash = [added[r] for r in LABEL_COLUMNS if added[r] in public.columns or added[r] in key_names]
    if clash or len({added[r] for r in LABEL_COLUMNS}) < len(LABEL_COLUMNS):
        raise SchemaError(
            f"The export's column names {', '.join(map(repr, clash or [added[r] for r in LABEL_COLUMNS]))} clash "
            "with the public rows' columns or with each other; decide them with export_columns from every "
            "column of the public file."
        )
    answered = labels >= 0
    label = np.full(labels.shape, "", dtype=object)
    if result.scores is not None:
        scores = np.asarray(result.scores, dtype=float)
        if scores.shape != labels.shape:
            raise DataError("The labeling's scores and labels have different lengths.")
        if np.any(~np.isfinite(scores[answered])):
            raise DataError("Every answered soft label must carry a finite score.")
        label[answered] = [float(s) for s in scores[answered]]
    else:
        names = None if class_names is None else [str(c) for c in class_names]
        ids = labels[answered]
        if names is not None and ids.size and ids.max() >= len(names):
            raise DataError(
                f"The labeling uses class id {int(ids.max())} but only {len(names)} class names were given."
            )
        label[answered] = [names[i] for i in ids] if names is not None else [str(i) for i in ids]
    frame = public.copy()
    for column in frame.columns:  # whole numbers read as floats (e.g. age 40.0) go out as 40
        if pd.api.types.is_float_dtype(frame[column]):
            values = frame[column].to_numpy(dtype=float)
            known = values[~np.isnan(values)]
            if known.size and np.all(np.isfinite(known)) and np.all(known == np.round(known)) and np.all(np.abs(known) < 2**53):
                frame[column] = frame[column].astype("Int64")
    frame[added["label"]] = pd.Series(label, index=public.index, dtype=object)
    frame[added["answered"]] = pd.Series(answered, index=public.index, dtype=bool)
    frame[added["status"]] = pd.Series(_status(labels), index=public.index, dtype=object)
    if keys is not None:
        carried = keys.copy()
        carried.index = public.index
        frame = pd.concat([carried, frame], axis=1)
    return frame


SIGNIFICANT_DIGITS = 15
"""(ε, δ) in a report (the guarantee, the release, the ledger, and the ε and δ settings) are
written with 15 significant digits: a setting reached by adding a slider's step (0.1) to
itself, such as 3.2999999999999994, is written as the step it is (3.3); the change (under
1e-15 relative) is below the floating-point error of the accounting itself.  Other numbers
are written exactly."""

_BUDGET_NAMES = frozenset({"epsilon", "delta", "epsilon_target", "delta_target"})


def _budget(value: Any) -> Any:
    """ε or δ for a report: :func:`_scalar`, finite floats to :data:`SIGNIFICANT_DIGITS`."""
    value = _scalar(value)
    if isinstance(value, float):
        return float(f"{value:.{SIGNIFICANT_DIGITS}g}")
    return value


def _scalar(value: Any) -> Any:
    """A JSON-ready scalar, or a sentinel when the value is not a plain scalar."""
    if value is None or isinstance(value, (bool, np.bool_)):
        return None if value is None else bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return value
    return _NOT_SCALAR


_NOT_SCALAR = object()


def _is_public_name(name: Any) -> bool:
    if not isinstance(name, str) or name not in PUBLIC_PARAMETERS:
        return False
    if name in FORBIDDEN_WORD_EXCEPTIONS:
        return True
    lower = name.lower()
    return not any(word in lower for word in FORBIDDEN_WORDS)


def _public_parameters(params: Mapping[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in sorted(params or {}, key=str):
        if not _is_public_name(name):
            continue
        value = _budget(params[name]) if name in _BUDGET_NAMES else _scalar(params[name])
        if value is not _NOT_SCALAR:
            out[name] = value
    return out


def _learner_text(learner: Any) -> str:
    if isinstance(learner, str):
        text = learner.strip()
        if not text:
            raise ParameterError("learner must name the teachers' learner, got an empty text.")
        return text
    name = getattr(learner, "learner_name", None)  # a TeacherEnsemble
    if isinstance(name, str):
        return name
    if hasattr(learner, "get_params"):
        from core.ensemble.inputs import learner_name as _learner_name

        return _learner_name(learner)
    raise ParameterError(
        f"learner must be a learner name or a scikit-learn estimator, got {type(learner).__name__}."
    )


def privacy_report(
    result: LabelingResult,
    *,
    n_private: int,
    n_public: int,
    learner: Any,
    k: int | None,
    dataset: str | None = None,
    ledger_total: Any = None,
    unit: Any = None,
    classes: Sequence[str] | None = None,
    classes_declared: bool = False,
    features: Any = None,
) -> dict[str, Any]:
    """The privacy report of a labeling, safe to publish beside the labeled rows.

    Parameters
    ----------
    result : LabelingResult
        The labeling.
    n_private : int
        Number of private rows ``n`` (public under replace-one adjacency).  With a privacy
        unit the report gives the number of persons instead (public under replace-one-
        person adjacency; a person's number of rows, hence ``n``, is not).
    n_public : int
        Number of rows in the public table (at least the number of queries labeled).
    learner : str, sklearn estimator or TeacherEnsemble
        The teachers' learner: a registry name, or an estimator (reported by its class
        names only).
    k : int or None
        Number of teachers.  Read only for the ensemble's mechanisms: a route that trains one
        model with DP on the private rows (``dp-logistic``, ``dp-naive-bayes``) used no
        teachers, and its report has a ``model`` section instead of ``ensemble``.
    dataset : str or None
        The dataset's name (e.g. a bundled set, or the name a job gives its private data),
        or None; never a file's path.
    ledger_total : LedgerTotal, PrivacyGuarantee, mapping or None (keyword-only)
        For a **release** (a fresh run at parameters fixed before it was shown): the
        privacy ledger's total on this private data, the release included
        (:meth:`core.ledger.PrivacyLedger.total`) — anything with ``epsilon``,
        ``delta`` and the number of runs (``n_entries`` or ``runs``), as attributes or
        keys.  Adds the ``release`` and ``ledger`` sections (:data:`RELEASE_KEYS`), each
        with a sentence saying what it covers.  None (default): the report of one run,
        as before.
    unit : core.data.units.PrivacyUnit, optional (keyword-only)
        The privacy unit of the private table (``Table.privacy_unit``); None: per row.
        The report states it (``privacy_unit``, and the ``adjacency``) in public words:
        the unit column's name and the number of persons, never a person's ID or count.
    classes : sequence of str, optional (keyword-only)
        The class list the labels name (``Table.class_names``); None: the report's
        ``classes`` is null.
    classes_declared : bool, default False (keyword-only)
        Whether that list was declared (``Table.classes_declared``), or read from the private
        rows and treated as public; the report states which (docs/design.md §1.3).
    features : core.data.FeatureChoice or sequence of str, optional (keyword-only)
        The run's feature columns: the choice of :func:`core.data.default_features` (its
        statement says whether a check of the private rows chose them), or the names of
        columns declared in advance.  None: the report's ``features`` is null.

    Returns
    -------
    dict
        Keys, in order:

        - ``library``: ``"private-label-lab"``;
        - ``version``: the library version;
        - ``mechanism``: ``result.mechanism``;
        - ``adjacency``: ``"replace one private row"``, or with a unit
          ``"replace all rows of one person (column id)"``;
        - ``privacy_unit``: {``unit`` (``"row"`` or ``"person"``), ``column`` (or None),
          ``units`` (rows or persons), ``description`` (e.g. ``"per person (column id):
          5,027 persons"``, with ``"; at most r rows of each person used"`` when the run
          declared such a bound)};
        - ``guarantee``: {``epsilon``, ``delta``, ``accounting``} — the data-independent
          guarantee and how it was computed;
        - ``parameters``: the entries of ``result.params`` named in
          :data:`PUBLIC_PARAMETERS` whose values are plain scalars, sorted by name;
        - ``counts``: {``queries``, ``answered``, ``abstained``, ``not_processed``,
          ``public_rows``};
        - ``ensemble``: {``learner``, ``k``, ``n_private``} (``n_private``: persons with a unit)
          for the ensemble's mechanisms; for a DP-training route instead ``model``:
          {``trained``, ``n_private``} (what ran: one model on all private rows, no teachers);
        - ``dataset``: the name or None;
        - ``classes``: {``names``, ``declared``, ``statement``} (the statement:
          :func:`core.data.class_statement`), or None without ``classes``;
        - ``features``: {``names``, ``declared``, ``statement``} (the statement:
          :func:`core.data.feature_statement`, in capitals when a check of the private rows
          chose them), or None without ``features``;
        - with ``ledger_total`` only: ``release`` {``epsilon``, ``delta``, ``covers``}
          (the released run's own guarantee, as in ``guarantee``, and
          :data:`RELEASE_COVERS`) and ``ledger`` {``epsilon``, ``delta``, ``runs``,
          ``accounting``, ``covers``} (the ledger's total over all runs on this data and
          :data:`LEDGER_COVERS`).  The ledger's total is computed from the runs' a-priori
          privacy maps (public parameters), never from the data.

        Never a seed, vote counts, margins, teacher accuracy or the data-dependent ε.
    """
    from core import __version__

    labels = _check_result(result)
    unit_section, n_private = _unit_section(unit, result, n_private)
    n_private = check_integer(n_private, "n_private", minimum=1)
    n_public = check_integer(n_public, "n_public", minimum=1)
    if n_public < labels.shape[0]:
        raise ParameterError(
            f"n_public = {n_public} is smaller than the {labels.shape[0]} labeled queries; "
            "give the number of rows of the public table."
        )
    from core.mechanisms import registry

    trained = str(result.mechanism) in registry.names() and registry.get(str(result.mechanism)).inputs == "rows"
    if not trained:
        k = check_k(k, n_private)
    if dataset is not None and not isinstance(dataset, str):
        raise ParameterError(f"dataset must be a name (text) or None, got {type(dataset).__name__}.")
    report = {
        "library": LIBRARY,
        "version": __version__,
        "mechanism": str(result.mechanism),
        "adjacency": ADJACENCY if unit_section["column"] is None else PERSON_ADJACENCY.format(column=unit_section["column"]),
        "privacy_unit": unit_section,
        "guarantee": {
            "epsilon": _budget(result.epsilon),
            "delta": _budget(result.delta),
            "accounting": str(result.accounting),
        },
        "parameters": _public_parameters(result.params),
        "counts": {
            "queries": int(labels.shape[0]),
            "answered": int((labels >= 0).sum()),
            "abstained": int((labels == BOTTOM).sum()),
            "not_processed": int((labels == UNPROCESSED).sum()),
            "public_rows": n_public,
        },
        **({"model": {"trained": registry.get(str(result.mechanism)).title, "n_private": n_private}} if trained else
           {"ensemble": {"learner": _learner_text(learner), "k": k, "n_private": n_private}}),
        "dataset": dataset,
        "classes": _classes_section(classes, classes_declared),
        "features": _features_section(features),
    }
    if ledger_total is not None:
        report["release"] = {
            "epsilon": _budget(result.epsilon),
            "delta": _budget(result.delta),
            "covers": RELEASE_COVERS,
        }
        report["ledger"] = _ledger_section(ledger_total, result)
    return report


def _classes_section(classes: Sequence[str] | None, declared: Any) -> dict[str, Any] | None:
    """The ``classes`` section: the names, whether they were declared, and the statement."""
    if classes is None:
        return None
    if isinstance(classes, (str, bytes)) or not all(isinstance(c, str) for c in classes):
        raise ParameterError("classes must be the class names (Table.class_names), a sequence of text.")
    if not isinstance(declared, (bool, np.bool_)):
        raise ParameterError(f"classes_declared must be True or False, got {declared!r}.")
    from core.data.classes import class_statement

    names = [str(c) for c in classes]
    return {"names": names, "declared": bool(declared), "statement": class_statement(names, bool(declared))}


def _features_section(features: Any) -> dict[str, Any] | None:
    """The ``features`` section: the names, whether they were declared, and the statement."""
    if features is None:
        return None
    from core.data.features import FeatureChoice, feature_statement

    if isinstance(features, FeatureChoice):
        names, declared, read = list(features.features), features.declared, features.read_private
    elif isinstance(features, (str, bytes)) or not all(isinstance(c, str) for c in features):
        raise ParameterError("features must be a core.data.FeatureChoice or the feature names, a sequence of text.")
    else:
        names, declared, read = [str(c) for c in features], True, None
    return {"names": names, "declared": bool(declared), "statement": feature_statement(names, declared, read)}


def _unit_section(unit: Any, result: LabelingResult, n_private: Any) -> tuple[dict[str, Any], Any]:
    """The ``privacy_unit`` section (public words only) and the ``n_private`` the report gives."""
    from core.data.units import PrivacyUnit

    if unit is None or (isinstance(unit, PrivacyUnit) and unit.per_row):
        n = check_integer(n_private, "n_private", minimum=1)
        return {"unit": "row", "column": None, "units": n, "description": "per row"}, n
    if not isinstance(unit, PrivacyUnit):
        raise ParameterError(f"unit must be a core.data.units.PrivacyUnit (Table.privacy_unit), got {type(unit).__name__}.")
    bound = (result.params or {}).get("rows_per_unit")
    bound = int(bound) if isinstance(bound, (int, np.integer)) and not isinstance(bound, bool) else None
    return ({"unit": "person", "column": unit.column, "units": unit.n_units,
             "description": unit.describe(owner=False, bound=bound)}, unit.n_units)


def _field(obj: Any, *names: str) -> Any:
    for name in names:
        if isinstance(obj, Mapping) and name in obj:
            return obj[name]
        if not isinstance(obj, Mapping) and hasattr(obj, name):
            return getattr(obj, name)
    return None


def _ledger_section(total: Any, result: LabelingResult) -> dict[str, Any]:
    """The ``ledger`` section: the ledger's total (ε, δ, runs), its method and what it covers."""
    eps, delta = _field(total, "epsilon"), _field(total, "delta")
    runs = _field(total, "n_entries", "runs")
    if eps is None or delta is None or runs is None:
        raise ParameterError(
            "ledger_total must give the ledger's epsilon, delta and number of runs (n_entries or runs), "
            "e.g. PrivacyLedger.total()."
        )
    eps, delta = float(eps), float(delta)
    runs = check_integer(runs, "ledger_total's number of runs", minimum=1)
    if not (eps >= 0 and 0 <= delta <= 1):
        raise ParameterError(f"ledger_total must have ε ≥ 0 and δ in [0, 1], got ({eps}, {delta}).")
    # A total at a δ no larger than the run's includes the run, so its ε cannot be smaller; a total quoted
    # at the budget's larger δ (docs/design.md §9.1) can be.
    if delta <= float(result.delta) * (1 + 1e-9) and eps < float(result.epsilon) * (1 - 1e-9) - 1e-12:
        raise ParameterError(
            f"The ledger's total ε = {eps:.4g} is below the released run's own ε = {float(result.epsilon):.4g}: "
            "the ledger must include the release (charge it before reporting)."
        )
    method, detail = _field(total, "method"), _field(total, "detail")
    # In words (PrivacyLedger.total()'s detail); a bare method name only for a total that has no words.
    how = detail if isinstance(detail, str) and detail else method if isinstance(method, str) and method else ""
    return {
        "epsilon": _budget(eps),
        "delta": _budget(delta),
        "runs": runs,
        "accounting": "composition of the runs' a-priori privacy maps" + (f": {how}" if how else ""),
        "covers": LEDGER_COVERS,
    }


def _canonical(value: Any, order: Sequence[str] | None = None) -> Any:
    if isinstance(value, Mapping):
        known = [key for key in (order or ()) if key in value]
        rest = sorted((key for key in value if key not in known), key=str)
        return {
            str(key): _canonical(value[key], _NESTED_KEYS.get(key) if order is _ALL_KEYS else None)
            for key in known + rest
        }
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    scalar = _scalar(value)
    if scalar is _NOT_SCALAR:
        raise ParameterError(f"The report holds a value that is not JSON text, a number or a flag: {type(value).__name__}.")
    return scalar


def report_json(report: Mapping[str, Any]) -> str:
    """The report as JSON text: 2-space indent, keys in a stable order.

    Top-level and nested keys of the documented schema (:data:`REPORT_KEYS`, then
    :data:`RELEASE_KEYS` where present) come in the documented order;
    any other keys (and the parameters) are sorted by name.  Non-finite numbers are
    written as text ("inf"), so the output is strict JSON.
    """
    if not isinstance(report, Mapping):
        raise ParameterError(f"report must be a dict from privacy_report, got {type(report).__name__}.")
    return json.dumps(_canonical(report, _ALL_KEYS), indent=2, ensure_ascii=False, allow_nan=False)
