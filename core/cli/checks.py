"""The steps of ``label`` and ``tune`` around the data: the column check, the default
features (identifiers, survey weights and label stand-ins left out unless ``--keep``),
column choice, join keys carried into ``--out`` (``--key``) and missing values said in place
(the privacy ledger: :mod:`core.cli.ledger`).
"""

from __future__ import annotations

import dataclasses
import io
from typing import Any, Sequence, TextIO

from core.cli.common import PROG, CommandError, one_line

__all__ = [
    "MARKER_CANDIDATES",
    "check_private",
    "public_column_check",
    "choose_features",
    "private_columns",
    "chosen_data",
    "key_names",
    "problem_lines",
    "names_list",
    "raw_frame",
    "add_csv_format",
    "add_data_arguments",
    "add_private_file",
    "class_note",
    "declared_classes",
    "csv_format",
    "choose_label_column",
    "select_columns",
    "marker_hints",
    "missing_lines",
    "NON_PRIVATE_COUNTS",
    "private_count_text",
    "warning_lines",
    "warn",
]

MARKER_CANDIDATES = ("?", "-", "--", ".")
"""Cell texts that usually mark a missing value (UCI Adult writes ``?``)."""

_LABEL_NAMES = ("label", "target", "y", "class")


def names_list(text: str | None) -> list[str]:
    """``a,b,c`` as a list of names (blank entries ignored)."""
    if text is None:
        return []
    return [name.strip() for name in str(text).split(",") if name.strip()]


def raw_frame(path: str, rename_duplicates: bool = False, csv_format=None):
    """The CSV file as text columns (the library's reader: same checks and messages)."""
    from core.data import DEFAULT_MAX_BYTES, read_csv

    frame, _ = read_csv(path, DEFAULT_MAX_BYTES, f"The file '{path}' has a header row but no data rows.",
                        rename_duplicates=rename_duplicates, csv_format=csv_format)
    return frame


def add_csv_format(group) -> None:
    """``--sep``, ``--decimal``, ``--encoding``: how the CSV files are written (default: detected)."""
    group.add_argument("--sep", default=None, metavar="SEP", choices=(",", ";", "tab"),
                       help="the files' field separator: ',', ';' or tab (default: detected from each file)")
    group.add_argument("--decimal", default=None, metavar="MARK", choices=(".", ","),
                       help="the files' decimal mark: '.' or ',' (default: detected; a comma only in a file "
                            "separated by semicolons or tabs)")
    group.add_argument("--encoding", default=None, metavar="NAME",
                       help="the files' text encoding, e.g. latin-1 or cp1252 (default: UTF-8)")


def csv_format(args):
    """The :class:`core.data.CsvFormat` of ``--sep``/``--decimal``/``--encoding`` (None: detect)."""
    from core.data import CsvFormat

    return CsvFormat(sep=getattr(args, "sep", None), decimal=getattr(args, "decimal", None),
                     encoding=getattr(args, "encoding", None))


def choose_label_column(columns: Sequence[str], label_column: str | None) -> str | None:
    """The label column: ``--label-column``, else a column named label, target, y or class;
    never a column taken for its position (None: no such column)."""
    if label_column is not None:
        return label_column if label_column in columns else None
    for column in columns:
        if str(column).strip().lower() in _LABEL_NAMES:
            return column
    return None


def _unknown(names: list[str], columns: Sequence[str], flag: str, what: str) -> None:
    unknown = [n for n in names if n not in columns]
    if unknown:
        raise CommandError(
            f"{flag} names column(s) {', '.join(repr(n) for n in unknown)} that {what} does not have; "
            f"its columns are {', '.join(repr(str(c)) for c in columns)}.")


def add_privacy_unit(group) -> None:
    """``--privacy-unit COL``: the column naming each row's person; every guarantee then holds per person."""
    group.add_argument(
        "--privacy-unit", default=None, metavar="COL",
        help="the column of the private file that names the person each row belongs to (an ID): the guarantee then "
             "holds per person (all of a person's rows under one teacher; the DP-training routes use at most "
             "--rows-per-unit rows of each person), and the column is never a feature (default: each row is a unit)")


def add_private_file(group, *, required: bool = True) -> None:
    """``--private``, ``--label-column``, ``--missing``, ``--missing-marker``, ``--privacy-unit`` and the
    CSV format (:func:`add_csv_format`): the private file and how it is read (``label``, ``tune``, ``recommend``)."""
    group.add_argument("--private", required=required, default=None, metavar="FILE",
                       help="private labeled CSV file (header row; UTF-8 unless --encoding; separated by commas, "
                       "semicolons or tabs, detected)")
    group.add_argument("--label-column", default=None, metavar="NAME",
                       help="label column of the private file (default: the first column named label, "
                       "target, y or class, ignoring case; with none, it must be given)")
    group.add_argument("--missing", choices=("refuse", "impute", "drop"), default="refuse",
                       help="missing feature values: refuse the file (default), impute them inside "
                       "the learning pipeline, or drop the rows that have one")
    group.add_argument("--missing-marker", action="append", default=[], metavar="TEXT",
                       help="text that marks a missing cell, e.g. '?' (besides empty fields); repeat for several")
    group.add_argument("--class-names", default=None, metavar="A,B,...",
                       help="the classes, declared (public): the labels, the student and the report name these, in "
                       "this order, whatever the private rows hold; a row with another label is a row without a "
                       "label (dropped with --missing drop, refused otherwise). Default: read from the private "
                       "file and treated as public (a class held by a few persons then reveals that they are in "
                       "the data)")
    add_privacy_unit(group)
    add_csv_format(group)


def declared_classes(args) -> list[str] | None:
    """``--class-names A,B,...`` as the declared class list for :func:`core.data.load_table`
    (None: not given, read from the private file)."""
    text = getattr(args, "class_names", None)
    if text is None:
        return None
    names = [name.strip() for name in str(text).split(",")]
    if any(not name for name in names):
        raise CommandError(f"--class-names {text!r} has an empty name; give the classes as A,B,... (comma separated).")
    return names


def class_note(table, stdout: TextIO, stderr: TextIO) -> None:
    """Say the run's class list: declared (public) on ``stdout``, or the capital note on ``stderr`` when it
    was read from the private file (docs/design.md §1.3)."""
    from core.data import class_statement

    statement = class_statement(table.class_names, table.classes_declared)
    if table.classes_declared:
        stdout.write(f"{statement[0].upper()}{statement[1:]}.\n")
    else:
        stderr.write(f"{PROG}: note: {statement}\n")


def add_data_arguments(group, *, private_required: bool = True) -> None:
    """The data flags of the commands that label public rows (``label``, ``tune``).

    The private file (:func:`add_private_file`), ``--public``, and the column choice read by
    :func:`choose_features` and :func:`key_names`: ``--features``, ``--drop``, ``--keep``, ``--key``.
    """
    add_private_file(group, required=private_required)
    group.add_argument("--public", required=True, metavar="FILE",
                       help="public CSV file of the rows to label: the private file's feature columns, no "
                       "label column (never the private file itself)")
    group.add_argument("--features", default=None, metavar="A,B,C",
                       help="use only these feature columns (comma separated; in both files)")
    group.add_argument("--drop", default=None, metavar="X,Y",
                       help="leave these columns out of the features (comma separated; in both files), e.g. an "
                       "identifier; a dropped column of the public file stays in --out as a join key")
    group.add_argument("--keep", default=None, metavar="X,Y",
                       help="use these flagged columns as features anyway: identifiers, survey weights and label "
                       "stand-ins found by the column check are left out of the features unless kept here")
    group.add_argument("--key", default=None, metavar="X,Y",
                       help="carry these columns of the public file into --out as join keys (first, values as "
                       "written), without using them as features, e.g. an id left out of the features")


def unit_text(table) -> str:
    """The unit for the command line's output, as the owner sees it (:meth:`PrivacyUnit.describe`; a
    person's largest number of rows is read from the private rows: marked a NON-PRIVATE diagnostic for
    the owner, and not in the report)."""
    unit = table.privacy_unit
    if unit.per_row:
        return unit.describe()
    return unit.describe() + " (the rows-per-person figure is a NON-PRIVATE diagnostic, for you only, never exported)"


def private_count_text(table) -> str:
    """The private file's count as the privacy report gives it (``n_private``): its rows, or its
    persons with a privacy unit, counted BEFORE a ``--missing drop`` (:attr:`core.data.Table.n_units`;
    public, since a neighbouring file has as many; docs/design.md §1.2).  The rows left after the
    drop are a private count, never printed here."""
    what = "private rows" if table.unit is None else "persons"
    before = ", the file's count before the drop" if table.missing == "drop" else ""
    return f"{table.n_units} {what}{before}"


def adjacency_text(table) -> str:
    """The adjacency in words: one private row, or all the rows of one person."""
    from core.export import ADJACENCY, PERSON_ADJACENCY  # the report's words

    unit = table.unit
    return ADJACENCY if unit is None else PERSON_ADJACENCY.format(column=unit.column)


def select_columns(private, public, *, label_column: str | None, features: list[str], drop: list[str],
                   unit: str | None = None, keys: Sequence[str] = ()):
    """Apply ``--features``/``--drop`` to the private and public text frames; take ``--key`` out of the features.

    Returns
    -------
    private_bytes : bytes or None
        The selected private columns as CSV bytes for :func:`core.data.load_table` (None when
        no selection was asked: the file is loaded as it is).
    public_frame : pandas.DataFrame
        The public text frame, read once: its selected columns and the ``keys``, for
        :func:`core.data.read_public` with ``keys`` (``public`` itself when no selection was
        asked).

    Raises
    ------
    CommandError
        An unknown column name (the message lists the columns that exist), the label
        column among ``--drop``/``--features``/``--key``, a key that is a feature, or
        nothing left to learn from.
    """
    if not features and not drop and not keys:
        return None, public
    columns = [str(c) for c in private.columns]
    public_columns = [str(c) for c in public.columns]
    _unknown(features, columns, "--features", "the private file")
    _unknown(drop, columns, "--drop", "the private file")
    _unknown(list(keys), public_columns, "--key", "the public file")
    label = choose_label_column(columns, label_column)
    if label is None:
        raise CommandError(f"The private file has no column {label_column!r}; its columns are "
                           f"{', '.join(repr(c) for c in columns)}.")
    if label in features or label in drop:
        raise CommandError(f"'{label}' is the label column; leave it out of --features and --drop.")
    if unit is not None and (unit in features or unit in drop):
        raise CommandError(f"'{unit}' is the privacy unit column (never a feature); leave it out of --features and "
                           "--drop.")
    if label in keys:
        raise CommandError(f"'{label}' is the label column; a join key is a column of the public file that is no feature.")
    kept = [c for c in (features or columns) if c != label and c not in drop and c != unit]
    if not kept:
        raise CommandError("--features and --drop leave no feature column; keep at least one.")
    featured = [k for k in keys if k in kept]
    if featured:
        raise CommandError(f"--key {', '.join(repr(k) for k in featured)}: a feature is in --out already; a join key is a "
                           "column left out of the features (e.g. an identifier), carried into --out beside them.")
    public_kept = [c for c in public_columns if c in kept or c == label]
    missing = [c for c in kept if c not in public_columns]
    if missing:
        raise CommandError(
            f"The public file lacks the chosen feature column(s) {', '.join(repr(c) for c in missing)}; "
            f"its columns are {', '.join(repr(c) for c in public_columns)}.")
    unit_kept = [unit] if unit is not None and unit in columns else []
    chosen = private[kept + unit_kept + [label]]
    if unit_kept and getattr(private.attrs.get("csv_format"), "decimal", ".") == ",":
        from core.data.formats import dot_thousands

        chosen = chosen.assign(**{unit: dot_thousands(chosen[unit])})  # as load_table reads a decimal-comma file's IDs
    return _csv(chosen), public[public_kept + list(keys)]


def key_names(args, public_columns: Sequence[str] | None = None) -> list[str]:
    """The export's join keys: ``--key A,B`` (columns of the public file carried into ``--out``),
    then, given the public file's columns, each column the user named in ``--drop`` that the
    public file has (a dropped column leaves the features only; the labels join back by it).
    Columns left out of the features by default (:func:`choose_features`) are not keys unless
    ``--key`` names them."""
    keys = names_list(getattr(args, "key", None))
    if public_columns is None:
        return keys
    present = {str(c) for c in public_columns}
    done = getattr(args, "_private_columns", None)
    by_default = set() if done is None else set(done[1].dropped)
    dropped = [c for c in names_list(args.drop) if c in present and c not in by_default and c not in keys]
    return keys + dropped


def _csv(frame) -> bytes:
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False)
    return buffer.getvalue().encode("utf-8")


def marker_hints(frames: dict[str, Any], markers: Sequence[str]) -> list[str]:
    """Sentences suggesting ``--missing-marker`` for text cells such as ``?`` (not already given)."""
    given = {m.strip() for m in markers}
    out = []
    for what, frame in frames.items():
        found: dict[str, list[str]] = {}
        for column in frame.columns:
            text = frame[column].dropna().astype(str).str.strip()
            for marker in MARKER_CANDIDATES:
                if marker not in given and (text == marker).any():
                    found.setdefault(marker, []).append(str(column))
        for marker, columns in found.items():
            shown = ", ".join(f"'{c}'" for c in columns[:8]) + (", ..." if len(columns) > 8 else "")
            out.append(
                f"the {what} file writes '{marker}' in column(s) {shown}; if it marks a missing value, "
                f"add --missing-marker '{marker}' with --missing drop (drop those rows) or --missing impute "
                "(impute them inside each teacher); as it is, it is read as a value of its own.")
    return out


NON_PRIVATE_COUNTS = "NON-PRIVATE diagnostic counted on the private rows: for the data's owner only, never exported"
"""How a line that counts private rows is marked on the command line's stderr."""


def missing_lines(table, public) -> list[str]:
    """Sentences on the missing values of the private table and the public rows (none: []).

    The private file's counts (rows with a missing value, rows dropped, cells per column) read
    the private rows: that sentence is marked a NON-PRIVATE diagnostic (:data:`NON_PRIVATE_COUNTS`),
    for the owner's console only; the public file's counts are public."""
    out = []
    counts = {c: n for c, n in table.missing_counts.items() if n}
    if counts:
        shown = ", ".join(f"'{c}' {n}" for c, n in counts.items())
        action = {"drop": f"{table.dropped_rows} dropped", "impute": "kept, imputed inside each teacher",
                  "refuse": "refused"}[table.missing]
        out.append(f"private file: {table.missing_rows} row(s) with a missing value ({action}); missing cells "
                   f"per column: {shown} ({NON_PRIVATE_COUNTS}).")
    dropped = int(public.attrs.get("dropped_rows", 0) or 0)
    cells = {c: int(n) for c, n in public.isna().sum().items() if n}
    if dropped:
        out.append(f"public file: {dropped} row(s) with a missing value dropped (not labeled, not in --out).")
    if cells:
        shown = ", ".join(f"'{c}' {n}" for c, n in cells.items())
        out.append(f"public file: missing cells per column (imputed inside each teacher): {shown}.")
    return out


def problem_lines(problems, kept: Sequence[str] = (), *, choose: bool = True) -> list[str]:
    """Each :class:`core.data.Problem` as one line: its sentence, then the flag(s) that fix it.

    A column left out of the features by default says so with the ``--keep`` that keeps it
    (or, when it is in ``kept``, that it was kept on request).  ``choose=False``: findings
    that do not choose the features (the private file's, in a two-file job): no ``--keep``.
    """
    lines = []
    for p in problems:
        keeps = [f for f in p.fixes if f.action == "keep_column"] if choose else []
        flags = " or ".join(f.flag for f in p.fixes if f.action != "keep_column")
        line = p.sentence + (f" Fix: {flags}." if flags else "")
        if keeps and all(c in kept for f in keeps for c in f.columns):
            line += " Kept as a feature on request (--keep)."
        elif keeps:
            line += " Left out of the features; to use it anyway: " + " ".join(f.flag for f in keeps) + "."
        lines.append(line)
    return lines


def public_column_check(args, check):
    """The value-based column checks of ``--public`` (:func:`core.data.check_public_columns`): in a two-file
    job they, not the private file's, decide the default features (docs/design.md §1.3).  None
    without ``--public``."""
    from core.data.problems import check_public_columns

    path = getattr(args, "public", None)
    if path is None:
        return None
    from core.errors import DataError

    from core.cli.stream import read_chunks
    from core.data.problems import PUBLIC_CHECK_ROWS

    try:  # its first rows, read as the job reads them (a streamed file too); the job says any problem in its place
        frame = next(iter(read_chunks(path, PUBLIC_CHECK_ROWS, rename_duplicates=True, csv_format=csv_format(args))))
    except (DataError, StopIteration):
        return None  # the job stops at the public file's own error, before anything is trained or spent
    return check_public_columns(frame, features=check.features, missing_markers=args.missing_marker or None)


def check_private(args, stderr: TextIO):
    """The one column check of ``--private`` (:func:`core.data.check_file`), before it is loaded.

    Every problem is said at once: the blocking ones (duplicate names, empty columns,
    missing values the ``--missing`` choice refuses, no label column) in one error, each
    with the flag that fixes it; the others (identifiers, survey weights, free text, dates,
    label stand-ins -- the last a NON-PRIVATE diagnostic on the private rows) as warnings,
    each with its ``--drop`` or, for a column left out by default, its ``--keep``.  The
    label column is taken from ``--label-column``, else from a column named label, target,
    y or class; never from a column's position.

    With ``--public`` (a two-file job) the identifiers, survey weights and person keys that
    leave a column out by default are found on the PUBLIC file's columns
    (:func:`public_column_check`), said as ``public file:`` warnings; the private file's own
    findings of those kinds, free text and dates are said as NON-PRIVATE diagnostics that do
    not choose the features.

    Returns
    -------
    (core.data.ColumnCheck, core.data.ColumnCheck or None)
        The private file's check, and the public file's (None without ``--public``).

    Raises
    ------
    CommandError
        When a problem stops the file from loading (all of them listed).
    """
    from core.data.features import default_features
    from core.data.problems import check_file
    from core.errors import DataError

    def run_check(drop: list[str]):
        return check_file(args.private, csv_format=csv_format(args), label_column=args.label_column,
                          missing=args.missing,
                          missing_markers=args.missing_marker or None,
                          rename_duplicates=getattr(args, "rename_duplicates", False),
                          drop_empty_columns=getattr(args, "drop_empty_columns", False), drop_columns=drop,
                          features=names_list(args.features) or None, privacy_unit=getattr(args, "privacy_unit", None))

    drop = names_list(args.drop)
    keep = names_list(getattr(args, "keep", None))
    check = run_check(drop)
    public = public_column_check(args, check)
    final = check
    try:  # a column left out by default (e.g. a cause of death, empty for the living) cannot block the file
        left_out = default_features(check, keep=keep, public=public).dropped
    except DataError as exc:
        if keep and any(k not in check.features for k in keep):
            raise CommandError(f"--keep: {exc}") from None
        left_out = ()  # every column flagged: said by choose_features
    if left_out and any(p.blocking for p in check.problems):
        final = run_check(drop + list(left_out))
    problems = [p for p in check.problems if not p.blocking]
    problems += [p for p in final.problems if p.blocking]
    problems = [p for p in problems
                if not (p.kind == "label" and not p.columns and args.label_column is None and check.suggested_label)]
    blocking = [p for p in problems if p.blocking]
    if public is not None:  # the private file's findings by value choose nothing; the public file's do
        from core.data.problems import two_file_problems

        problems = list(two_file_problems(dataclasses.replace(check, problems=tuple(problems)), public))
    warn(stderr, problem_lines([p for p in problems if not p.blocking], keep))
    if blocking:
        listed = "\n".join(f"  {i}. {line}" for i, line in enumerate(problem_lines(blocking), 1))
        raise CommandError(f"The private file '{args.private}' cannot be used as it is ({len(blocking)} problem(s); "
                           f"nothing was trained or spent):\n{listed}")
    return check, public


def choose_features(args, check, stderr: TextIO, public=None):
    """The run's feature columns (:func:`core.data.default_features`): flagged columns left out
    unless ``--keep`` names them, said on ``stderr`` with their reasons; ``args.drop`` then
    names them too, so every later step (``auto``, the column selection) reads the same features.

    ``public``: the public file's check (:func:`public_column_check`), whose findings decide
    the identifiers of a two-file job.  When a check of the private rows chose the set (label
    stand-ins; any finding in a one-file job) and left a column out, the capital note
    :data:`core.data.FEATURES_READ_NOTE` is said on ``stderr``; the report's ``features``
    section states it on every run whose set such a check could have changed (no ``--features``).

    Returns
    -------
    core.data.FeatureChoice

    Raises
    ------
    CommandError
        ``--keep`` naming no feature column, or ``--features`` naming a flagged column
        without ``--keep``.
    """
    from core.data.features import default_features
    from core.errors import DataError

    keep = names_list(getattr(args, "keep", None))
    try:
        choice = default_features(check, keep=keep, public=public, declared=bool(names_list(args.features)))
    except DataError as exc:
        raise CommandError(f"--keep: {exc}" if keep else str(exc)) from None
    named = names_list(args.features)
    forced = [c for c in choice.left_out if c.column in named]
    if forced:
        raise CommandError(
            "--features names " + "; ".join(f"'{c.column}' ({c.reason})" for c in forced)
            + ": flagged columns are left out of the features unless kept explicitly; add --keep "
            + ",".join(c.column for c in forced) + " to use them.")
    if choice.left_out:  # each with its reason in the warnings above
        keys = set(names_list(getattr(args, "key", None)))
        carry = [c.column for c in choice.left_out if "identifier" in c.kinds and c.column not in keys]
        stderr.write(f"{PROG}: note: left out of the features: {', '.join(choice.dropped)} (the warnings above say "
                     "why; --keep NAME keeps one)"
                     + (f"; to carry the public file's {', '.join(carry)} into --out as a join key, add --key "
                        f"{','.join(carry)}" if carry and hasattr(args, "out") else "") + ".\n")
    for c in choice.kept:
        stderr.write(f"{PROG}: note: '{c.column}' is kept as a feature on request (--keep) although flagged "
                     f"({one_line(c.reason)}).\n")
    if choice.left_by_private:  # the report states it on every run whose set such a check could change
        stderr.write(f"{PROG}: note: {choice.statement}.\n")
    stderr.flush()
    drop = names_list(args.drop)
    args.drop = ",".join(drop + [c for c in choice.dropped if c not in drop]) or None
    return choice


def private_columns(args, stderr: TextIO):
    """:func:`check_private` then :func:`choose_features`, once per command (the result is kept on ``args``).

    Returns
    -------
    (core.data.ColumnCheck, core.data.FeatureChoice)
    """
    done = getattr(args, "_private_columns", None)
    if done is None:
        check, public = check_private(args, stderr)
        done = (check, choose_features(args, check, stderr, public))
        args._private_columns = done
    return done


def chosen_data(args, stderr: TextIO, *, csv_format=None, name: str | None = None):
    """``label``'s data path for the commands that read the whole private file (``tune``, ``recommend``).

    The column check and the default features (:func:`private_columns`: flagged columns
    left out unless ``--keep``, said on ``stderr``), ``--features``/``--drop``/``--key``
    (:func:`select_columns`), then the private table (:func:`core.data.load_table`) and,
    with ``--public``, the public rows checked against it (:func:`core.data.read_public`).

    Parameters
    ----------
    args : argparse.Namespace
        The command's flags (``--public`` may be absent or None).
    stderr : TextIO
    csv_format : core.data.CsvFormat, optional
        The files' format flags (:func:`csv_format`).
    name : str, optional
        The table's name.

    Returns
    -------
    (core.data.Table, pandas.DataFrame or None, pandas.DataFrame or None)
        The private table, the public rows (None without ``--public``) and their join keys
        (None without any).
    """
    from core.data import load_table, read_public

    private_columns(args, stderr)
    rename = bool(getattr(args, "rename_duplicates", False))
    public_path = getattr(args, "public", None)
    if public_path is not None:
        from core.data import check_pair

        check_pair(args.private, public_path)  # the private file given as --public: refused before reading
    raw_private = raw_frame(args.private, rename, csv_format)
    raw_public = None if public_path is None else raw_frame(public_path, rename, csv_format)
    keys = [] if raw_public is None else key_names(args, raw_public.columns)  # --key, and --drop columns it has
    private_src, public_src = select_columns(raw_private, raw_private if raw_public is None else raw_public,
                                             label_column=args.label_column, features=names_list(args.features),
                                             drop=names_list(args.drop), unit=getattr(args, "privacy_unit", None),
                                             keys=keys)
    del raw_private
    table = load_table(args.private if private_src is None else private_src, label_column=args.label_column,
                       missing=args.missing, missing_markers=args.missing_marker or None, name=name,
                       rename_duplicates=rename, drop_empty_columns=bool(getattr(args, "drop_empty_columns", False)),
                       privacy_unit=getattr(args, "privacy_unit", None),
                       csv_format=csv_format if private_src is None else None, classes=declared_classes(args))
    if raw_public is None:
        return table, None, None
    public, key_frame = read_public(public_src, table, keys=keys)  # as read above; the keys: its own text
    warn_copies(stderr, table, public)
    return table, public, key_frame


def warn_copies(stderr: TextIO, table, public, *, first: bool = False) -> None:
    """Warn when many public rows copy private rows' features (:func:`core.data.copied_rows`):
    a NON-PRIVATE diagnostic for the data's owner, on ``stderr`` only (``first``: the rows are
    the file's first chunk)."""
    from core.data import copied_rows

    copied = copied_rows(table, public, first=first)
    if copied is not None:
        stderr.write(f"{PROG}: warning: {one_line(copied.message)}\n")


def warning_lines(table) -> list[str]:
    """The column findings of :func:`core.data.columns.column_warnings` on a loaded private
    table, each with the ``--drop`` that fixes it."""
    from core.data.problems import check_columns

    return problem_lines(check_columns(table).problems)


def warn(stderr: TextIO, lines: Sequence[str]) -> None:
    """Write ``private-label-lab: warning: ...`` lines."""
    for line in lines:
        stderr.write(f"{PROG}: warning: {one_line(line)}\n")
    stderr.flush()
