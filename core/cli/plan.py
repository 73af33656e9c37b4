"""``plan``: predictions of labeling runs from public quantities only (no privacy spent).

A thin layer over :func:`core.plan.predict_many` (docs/design.md §10): for every
requested mechanism and ε it prints the predicted answered, correct and ⊥ counts, the
run's guarantee, whether it would be useful (its answered labels right more often than
always answering the majority class) and, when not, what would be needed instead.  The
teachers' quality is an assumption given by flags, and so is, for the routes that train
one model with DP on the private rows (``dp-logistic``, ``dp-naive-bayes``), the
accuracy of a non-private logistic regression (``--model-accuracy``).  From the private
file it reads its header, its number of rows and the number of distinct values of its
label column (treated as public, like ``n`` in the privacy report), and nothing at all
when ``--n`` and ``--classes`` are given; from the public file its rows (public),
encoded as the DP-training routes encode them (:class:`core.plan.PublicRows`).  Given
both files, the DP-training routes are predicted on the features ``label`` would train
on: the same column check (:func:`core.cli.checks.private_columns`) leaves identifiers,
survey weights and label stand-ins out unless ``--keep``; it reads the private rows, so
what it says is a NON-PRIVATE diagnostic for the data's owner, marked as ``label``
marks it, and spends nothing.  After the table it says which run it would choose at
each ε (:func:`core.plan.by_epsilon`).
"""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from core.cli.common import EXIT_OK, PROG, CommandError, ProgressBar, add_command, fmt, mechanism_name

__all__ = ["add_parser", "run", "add_quality_flags", "quality_of", "count_rows"]

DEFAULT_MECHANISMS = ("gnmax", "confident-gnmax", "btt", "dp-logistic", "dp-naive-bayes")
DEFAULT_EPSILONS = (1.0, 2.0, 4.0)


def add_quality_flags(parser, *, title: str = "assumed teacher quality (public assumptions, not read from any file)",
                      description: str | None = None) -> None:
    """Add the plan's assumption flags (public assumptions, never read from data): the teachers'
    quality, the majority share, the DP-training routes' model accuracies.

    Parameters
    ----------
    parser : argparse parser
        Every flag's value is None when not given (:func:`quality_of` fills the defaults), so a
        command can tell a flag given from its default.
    title : str
        The flags' group heading in ``--help``.
    description : str, optional
        A sentence under the heading.
    """
    from core.plan import TeacherQuality

    d = TeacherQuality()
    g = parser.add_argument_group(title, description)
    g.add_argument("--accuracy", type=float, default=None, metavar="A",
                   help=f"a teacher's chance of the true class on an easy row (default {d.accuracy:g})")
    g.add_argument("--hard-share", type=float, default=None, metavar="H",
                   help=f"share of public rows that are hard, where teachers split (default {d.hard_share:g})")
    g.add_argument("--hard-accuracy", type=float, default=None, metavar="A",
                   help=f"a teacher's chance of the true class on a hard row (default {d.hard_accuracy:g})")
    g.add_argument("--hard-spread", type=float, default=None, metavar="W",
                   help=f"hard rows' accuracy drawn uniformly from hard-accuracy ± W per row (default {d.hard_spread:g})")
    g.add_argument("--majority-share", type=float, default=None, metavar="S",
                   help="share of public rows in the most common class: always answering it is the "
                   "baseline a useful run must beat (default: balanced classes; the share is private and never "
                   "read, and plan's 'useful below' column says where each run's verdict turns)")
    g.add_argument("--model-accuracy", type=float, default=None, metavar="A",
                   help="the DP-training routes (dp-logistic, dp-naive-bayes): the accuracy a logistic regression "
                   "trained on all private rows WITHOUT privacy would have (default: the teachers' noise-free "
                   "plurality under the accuracies above, so both kinds of route rest on one assumption)")
    g.add_argument("--route-accuracy", action="append", default=None, metavar="ROUTE=A",
                   help="a DP-training route's OWN model trained on all private rows without its noise, at its "
                   "regularization for epsilon 1, is right A of the time (e.g. dp-logistic=0.70; repeat for the "
                   "other route; the plan prints that model, to fit on similar public data). The route is then "
                   "predicted from it: what privacy costs, nothing of the route's gap to a plain logistic "
                   "regression, which depends on how the label lies (--model-accuracy)")
    g.add_argument("--rows-per-teacher", type=int, default=None, metavar="N",
                   help="the accuracies hold for teachers of N private rows; other sizes move the error "
                   "by sqrt(N / rows) (default: the accuracies hold for any k)")


def quality_of(args: argparse.Namespace, n_classes: int):
    """The :class:`core.plan.TeacherQuality` of the flags.

    Parameters
    ----------
    args : argparse.Namespace
    n_classes : int

    Returns
    -------
    core.plan.TeacherQuality
    """
    from core.plan import TeacherQuality

    shares = None
    if args.majority_share is not None:
        ms = float(args.majority_share)
        if not (1.0 / n_classes <= ms < 1.0):
            raise CommandError(f"--majority-share must lie between 1/{n_classes} and 1, got {ms:g}.")
        shares = tuple([ms] + [(1.0 - ms) / (n_classes - 1)] * (n_classes - 1))
    given = {k: getattr(args, k) for k in ("accuracy", "hard_share", "hard_accuracy", "hard_spread")}
    return TeacherQuality(**{k: v for k, v in given.items() if v is not None},  # unset: the defaults
                          class_shares=shares, rows=args.rows_per_teacher)


def count_rows(path: str, label_column: str | None = None, *, csv_format=None) -> tuple[int, int | None, str | None]:
    """A CSV file's number of data rows and, with a label column, its number of distinct labels.

    Only the label column is parsed (the other columns are skipped by the reader).

    Parameters
    ----------
    path : str
    label_column : str or None
        ``None``: count rows only.  ``""``: the column :func:`core.data.load_table` would choose.
    csv_format : core.data.CsvFormat, optional
        The file's encoding, separator and decimal mark (None fields found in its first lines).

    Returns
    -------
    (int, int or None, str or None)
        Rows, distinct non-empty labels, the label column read.
    """
    import pandas as pd

    from core.cli.checks import choose_label_column

    how = _pandas_format(path, csv_format)
    header = pd_header(path, csv_format)
    if not header:
        raise CommandError(f"'{path}' has no header row.")
    if label_column is None:
        n = int(sum(len(c) for c in pd.read_csv(path, usecols=[0], dtype=str, chunksize=100_000,
                                                 keep_default_na=False, **how).__iter__()))
        return n, None, None
    column = choose_label_column(header, label_column or None)
    if column is None:
        shown = ", ".join(f"'{c}'" for c in header[:30]) + (", ..." if len(header) > 30 else "")
        if not label_column:  # the words every other command uses (core.data.load_table)
            raise CommandError(f"'{path}': no column is named 'label', 'target', 'y', 'class': say which column "
                               f"holds the label (--label-column NAME). The columns are: {shown}.")
        raise CommandError(f"'{path}': the label column '{label_column}' is not in the file. The columns are: "
                           f"{shown}. Give one of them as --label-column.")
    labels = pd.read_csv(path, usecols=[column], dtype=str, keep_default_na=False, **how)[column].str.strip()
    return int(len(labels)), int(labels[labels != ""].nunique()), str(column)


def _pandas_format(path: str, csv_format=None) -> dict[str, str]:
    """pandas' ``sep`` and ``encoding`` for the file at ``path`` (:func:`core.data.sniff_format`)."""
    from core.data import sniff_format

    fmt = sniff_format(path, csv_format)
    return {"sep": fmt.sep, "encoding": "utf-8-sig" if fmt.encoding == "utf-8" else fmt.encoding}


def count_units(path: str, column: str, *, csv_format=None) -> int:
    """The number of distinct values of a CSV file's privacy unit column (persons)."""
    import pandas as pd

    try:
        ids = pd.read_csv(path, usecols=[column], dtype=str, keep_default_na=False,
                          **_pandas_format(path, csv_format))[column].str.strip()
    except ValueError:
        raise CommandError(f"'{path}' has no column {column!r} for --privacy-unit.") from None
    return int(ids[ids != ""].nunique())


def add_parser(commands) -> argparse.ArgumentParser:
    """Add the ``plan`` command to the subparsers ``commands``."""
    from core.mechanisms import registry

    names = [n for n in registry.names() if registry.get(n).takes_epsilon]
    p = add_command(
        commands, "plan",
        help="predict what labeling runs would release, from sizes and an assumed teacher quality (spends nothing)",
        description=(
            "Predict, for each mechanism and epsilon, how many public rows a run would answer, how many "
            "correctly, how many abstentions, its guarantee, and whether it is useful: its answered labels "
            "right at least 2 points more often than always answering the majority class. Votes are simulated under the "
            "assumed teacher quality and the real mechanisms run on them: no private data is used and no "
            "privacy is spent. From --private the number of rows and the number of classes of the "
            "label column are read (treated as public, like n in the privacy report); nothing when --n and "
            "--classes are given. --public is read whole: it is public, and the routes that train one model "
            "with DP on the private rows (dp-logistic, dp-naive-bayes) are predicted from its encoding and an "
            "assumed non-private accuracy (--model-accuracy). With both files they are predicted on the "
            "features label would use: label's column check leaves identifiers, survey weights and label "
            "stand-ins out unless --keep (it reads the private rows: its findings are NON-PRIVATE diagnostics "
            "for the data's owner, as label prints them). The plan says which run it would choose at each "
            "epsilon: the useful one with the most correct labels."
        ),
        epilog=(
            "examples:\n"
            f"  {PROG} plan --n 700 --classes 2 --m 300 --k 35 --majority-share 0.68\n"
            f"  {PROG} plan --private adult_train.csv --label-column income --public adult_public.csv \\\n"
            "      --k 250 --mechanism gnmax --mechanism confident-gnmax --epsilon 1 --epsilon 2 --epsilon 4"
        ),
    )
    job = p.add_argument_group("the job (sizes only)")
    from core.cli.checks import add_private_file

    add_private_file(job, required=False)  # as label reads it: --label-column, --missing, --privacy-unit, the format
    job.add_argument("--n", type=int, default=None, metavar="N", help="number of private rows (instead of --private)")
    job.add_argument("--classes", type=int, default=None, metavar="C", help="number of classes (instead of --private)")
    job.add_argument("--public", default=None, metavar="FILE",
                     help="public CSV file: its number of rows, and its rows' encoding for the DP-training routes")
    job.add_argument("--m", type=int, default=None, metavar="N", help="number of public rows to label (instead of --public)")
    job.add_argument("--drop", default=None, metavar="X,Y",
                     help="leave these columns out of the features, as in label (comma separated), e.g. an "
                     "identifier: the DP-training routes are predicted without them")
    job.add_argument("--keep", default=None, metavar="X,Y",
                     help="use these flagged columns as features anyway, as in label: identifiers, survey weights and "
                     "label stand-ins found by the column check are left out of the features unless kept here")
    job.add_argument("--d", type=int, default=None, metavar="D",
                     help="without --public: the DP-training routes are predicted on a stand-in of D uniform columns")
    job.add_argument("--k", type=int, default=None, metavar="N",
                     help="number of teachers (default: n/20, at most 250)")
    runs = p.add_argument_group("runs to predict")
    runs.add_argument("--mechanism", action="append", type=mechanism_name, choices=names, default=None,
                      help="a mechanism (repeat for several; default: " + ", ".join(DEFAULT_MECHANISMS) + ")")
    runs.add_argument("--epsilon", action="append", type=float, default=None, metavar="E",
                      help="a privacy budget (repeat for several; default 1, 2, 4)")
    runs.add_argument("--delta", type=float, default=1e-5, metavar="D", help="delta of every run (default 1e-5)")
    from core.mechanisms.registry import PARAMETERS

    t_default = int(PARAMETERS["T"].default)  # label's default: one cutoff everywhere
    runs.add_argument("--T", type=int, default=t_default, metavar="N", help=f"BTT's cutoff (default {t_default}, as label)")
    add_quality_flags(p)
    out = p.add_argument_group("output")
    out.add_argument("--draws", type=int, default=20, metavar="N", help="simulated runs per prediction (default 20)")
    out.add_argument("--seed", type=int, default=0, metavar="N",
                     help="seed of the simulation (default 0; the plan reads no private data, so its randomness "
                     "protects nothing)")
    out.add_argument("--json", action="store_true", help="print the predictions as JSON")
    p.set_defaults(handler=run, features=None)
    return p


def public_rows_of(args: argparse.Namespace, label_column: str | None, m: int):
    """The public rows as the DP-training routes encode them (:class:`core.plan.PublicRows`), or None."""
    from core.plan import PublicRows

    if args.public is not None:
        frame = _frame(args.public, "--public", _format(args))
        dropped = dropped_names(args, frame.columns)
        drop = [c for c in (label_column, getattr(args, "privacy_unit", None), *dropped) if c and c in frame.columns]
        try:
            return PublicRows.from_frame(frame.drop(columns=drop), source=f"the rows of '{args.public}'")
        except Exception as exc:  # a plan without the DP-training routes still plans the others
            raise CommandError(f"Cannot encode the rows of '{args.public}' for the DP-training routes: {exc}") from None
    if args.d is not None:
        if args.d < 1:
            raise CommandError(f"--d must be at least 1, got {args.d}.")
        return PublicRows.standin(m, args.d)
    return None


def column_check(args: argparse.Namespace, stderr: TextIO, read: list[str]) -> list[str]:
    """``label``'s column check of ``--private`` (:func:`core.cli.checks.private_columns`), given both files.

    The columns ``label`` would leave out of the features (identifiers, survey weights,
    label stand-ins, unless ``--keep``) are added to ``args.drop``, so the DP-training
    routes are predicted on the features ``label`` trains on.  The check reads the private
    rows: its findings go to ``stderr`` worded and marked exactly as ``label`` prints them
    (a label stand-in's as a NON-PRIVATE diagnostic), and ``read`` says so.  Nothing is spent.

    Returns
    -------
    list of str
        The columns left out by the check (not those of ``--drop``).
    """
    if args.private is None or args.public is None:
        return []
    from core.cli.checks import private_columns

    _, choice = private_columns(args, stderr)
    left_out = list(choice.dropped)
    read.append(f"From '{args.private}' also its rows, for label's column check (a NON-PRIVATE diagnostic for the "
                "data's owner, printed as label prints it; nothing spent): "
                + (f"left out of the features as label leaves them out: {', '.join(left_out)} (--keep NAME keeps "
                   "one)." if left_out else "no column left out."))
    return left_out


def checks_names(args: argparse.Namespace) -> list[str]:
    """``--drop``'s names as given."""
    from core.cli.checks import names_list

    return names_list(getattr(args, "drop", None))


def dropped_names(args: argparse.Namespace, public_columns) -> list[str]:
    """``--drop``'s names, each checked against the private file's header (or, without one, the public file's).

    Parameters
    ----------
    args : argparse.Namespace
    public_columns : sequence of str
        The public file's columns.

    Returns
    -------
    list of str
    """
    from core.cli.checks import _unknown, names_list

    drop = names_list(getattr(args, "drop", None))
    if not drop:
        return []
    if args.private is not None:
        header = pd_header(args.private, _format(args))
        _unknown(drop, header, "--drop", "the private file")
        label = read_label_column(args)
        if label in drop:
            raise CommandError(f"'{label}' is the label column; leave it out of --drop.")
    else:
        _unknown(drop, [str(c) for c in public_columns], "--drop", "the public file")
    return drop


def sizes_of(args: argparse.Namespace, *, checked: bool = False) -> tuple[dict[str, int], list[str]]:
    """The job's sizes from the flags and files, and sentences saying what was read (``checked``: the
    column check reads the private rows too, said by :func:`column_check`)."""
    read: list[str] = []
    n, classes = args.n, args.classes
    if n is None or classes is None:
        if args.private is None:
            raise CommandError("give --n and --classes, or --private FILE to count them.")
        rows, c, column = count_rows(args.private, args.label_column or "", csv_format=_format(args))
        read.append(f"From '{args.private}': its number of rows ({rows}) and the number of distinct values of "
                    f"column '{column}' ({c} classes)" + (", and its rows for the column check" if checked else
                                                           ", nothing else") + "; both counts treated as public, "
                    "like n in the privacy report.")
        if getattr(args, "privacy_unit", None):
            persons = count_units(args.private, args.privacy_unit, csv_format=_format(args))
            read.append(f"Privacy unit '{args.privacy_unit}': {persons} persons (the chunks are made of persons, so "
                        "n below counts persons).")
            rows = persons
        n = rows if n is None else n
        classes = c if classes is None else classes
    else:
        read.append("No private file was read (--n and --classes given).")
    m = args.m
    if m is None:
        if args.public is None:
            raise CommandError("give --m, or --public FILE to count its rows.")
        m, _, _ = count_rows(args.public, None, csv_format=_format(args))
        read.append(f"From '{args.public}': its number of rows ({m}).")
    if n < 2 or classes is None or classes < 2 or m < 1:
        raise CommandError(f"a plan needs at least 2 private rows, 2 classes and 1 public row (n={n}, classes={classes}, m={m}).")
    k = args.k if args.k is not None else max(2, min(250, n // 20))
    return {"n": int(n), "n_classes": int(classes), "m": int(m), "k": int(k)}, read


def requests_of(args: argparse.Namespace) -> list[tuple[str, dict[str, Any]]]:
    """The (mechanism, settings) pairs to predict."""
    from core.mechanisms import registry

    mechs = args.mechanism or list(DEFAULT_MECHANISMS)
    epsilons = args.epsilon or list(DEFAULT_EPSILONS)
    out = []
    for name in mechs:
        takes = registry.get(name).parameter_names
        for e in epsilons:
            s: dict[str, Any] = {"epsilon": float(e), "delta": float(args.delta)}
            if "T" in takes:
                s["T"] = int(args.T)
            out.append((name, s))
    return out


def registry_inputs(name: str) -> str:
    """What a registered mechanism reads: ``counts``, ``scores`` or ``rows`` (a DP-training route)."""
    from core.mechanisms import registry

    return registry.get(name).inputs


def read_label_column(args: argparse.Namespace) -> str | None:
    """The label column of --private (its header only), to leave out of the public rows' encoding."""
    if args.label_column:
        return args.label_column
    if args.private is None:
        return None
    from core.cli.checks import choose_label_column

    header = list(pd_header(args.private, _format(args)))
    return choose_label_column(header, None)


def _format(args: argparse.Namespace):
    """``--sep``/``--decimal``/``--encoding`` as a :class:`core.data.CsvFormat`."""
    from core.cli.checks import csv_format

    return csv_format(args)


def pd_header(path: str, csv_format=None) -> list[str]:
    """The header of a CSV file (nothing else is read but the first lines, for its format)."""
    import pandas as pd

    how = _pandas_format(path, csv_format)
    try:
        return [str(c) for c in pd.read_csv(path, nrows=0, **how).columns]
    except (OSError, ValueError) as exc:
        raise CommandError(f"Cannot read '{path}': {exc}") from None


def _frame(path: str, flag: str, csv_format=None):
    """A public CSV file's rows (text), read by the library's reader (size, encoding and header checked)."""
    from core.data.reading import DEFAULT_MAX_BYTES, read_csv
    from core.errors import DataError

    try:
        frame, _ = read_csv(path, DEFAULT_MAX_BYTES, f"'{path}' ({flag}) has a header row but no data rows.",
                            csv_format=csv_format)
    except DataError as exc:
        raise CommandError(f"{flag}: {exc}") from None
    return frame


def route_accuracy_of(args: argparse.Namespace) -> dict[str, float]:
    """``--route-accuracy ROUTE=A`` (repeated) as ``{route: A}``, checked (:func:`core.plan.check_route_accuracy`)."""
    from core.errors import ParameterError
    from core.plan.prediction import check_route_accuracy

    given = {}
    for item in getattr(args, "route_accuracy", None) or ():
        name, sep, value = str(item).partition("=")
        if not sep:
            raise CommandError(f"--route-accuracy takes ROUTE=A, e.g. dp-logistic=0.70; got {item!r}.")
        try:
            given[name.strip()] = float(value)
        except ValueError:
            raise CommandError(f"--route-accuracy {item!r}: A must be a number in (0, 1].") from None
    try:
        return check_route_accuracy(given)
    except ParameterError as exc:
        raise CommandError(f"--route-accuracy: {exc}") from None


def prediction_dict(p) -> dict[str, Any]:
    """A prediction as JSON-ready values."""
    keys = ("mechanism", "epsilon", "delta", "m", "answered", "answered_sd", "correct", "correct_sd", "wrong",
            "bottom", "not_processed", "draws", "feasible", "useful", "majority_share", "reason", "advice",
            "model_accuracy", "route_accuracy", "route_reached", "accuracy_range")
    d = {k: getattr(p, k) for k in keys}
    d["settings"] = dict(p.settings)
    d["label_accuracy"] = None if p.answered == 0 else p.label_accuracy
    below = p.useful_below
    d["useful_while_majority_below"] = None if below != below else below
    return d


def run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO, bar: ProgressBar) -> int:
    """Run ``plan``: print the predictions (exit code 0)."""
    from core.plan import by_epsilon, predict_many
    from core.plan.trained import route_model_words

    if args.private is not None and args.public is not None:
        from core.data import check_pair

        check_pair(args.private, args.public)  # as label refuses it: the private file given as --public
    requests = requests_of(args)
    routes = route_accuracy_of(args)  # checked before any file is read
    dp_routes = any(registry_inputs(name) == "rows" for name, _ in requests)
    checked = dp_routes and args.private is not None and args.public is not None  # label's column check runs
    sizes, read = sizes_of(args, checked=checked)
    quality = quality_of(args, sizes["n_classes"])
    public = None
    if dp_routes:
        asked = checks_names(args)  # --drop as given, before the column check adds to it
        left_out = column_check(args, stderr, read)
        public = public_rows_of(args, read_label_column(args), sizes["m"])
        if public is not None:
            without = ([f"{', '.join(asked)}: --drop"] if asked else []) + (
                [f"{', '.join(left_out)}: the column check"] if left_out else [])
            read.append(f"The DP-training routes are predicted from {public.source}: {public.m} rows, encoded into "
                        f"{public.d} columns" + (f" (without {'; '.join(without)})" if without else "") + ".")
    if args.model_accuracy is not None and not (0.0 < args.model_accuracy <= 1.0):
        raise CommandError(f"--model-accuracy must lie in (0, 1], got {args.model_accuracy:g}.")
    preds = predict_many(requests, **sizes, quality=quality, draws=max(1, args.draws), rng=args.seed, public=public,
                         model_accuracy=args.model_accuracy, route_accuracy=routes)
    choices = by_epsilon(preds)
    assumed_share = (f"--majority-share {args.majority_share:g}" if args.majority_share is not None else
                     "balanced classes (default; the share of the most common class is private and is not read)")
    if args.json:
        stdout.write(json.dumps({"predicted": True, "read": read, "job": sizes, "assumption": quality.describe(),
                                 "majority_share_assumed": assumed_share,
                                 "predictions": [prediction_dict(p) for p in preds],
                                 "choices": [{"epsilon": e, "mechanism": None if p is None else p.mechanism}
                                             for e, p in choices.items()]}, indent=2, default=str) + "\n")
        return EXIT_OK
    stdout.write("PREDICTED — no privacy spent; the private rows were read only by label's column check (its warnings "
                 "are NON-PRIVATE diagnostics), to predict on the features label would use.\n" if checked else
                 "PREDICTED — no private data used, no privacy spent.\n")
    for line in read:
        stdout.write(f"  {line}\n")
    stdout.write(f"  Job: n = {sizes['n']} private rows, {sizes['n_classes']} classes, m = {sizes['m']} public rows, "
                 f"k = {sizes['k']} teachers.\n  Assumed: {quality.describe()}; always answering the majority class "
                 f"is right {quality.majority_share(sizes['n_classes']):.0%} of the time.\n")
    if args.majority_share is None:
        stdout.write("  MAJORITY SHARE ASSUMED, NOT READ: the classes are taken as balanced. How often the most common "
                     "class occurs is private, so the plan does not read it. A run is useful only while that share is "
                     "below its 'useful below' column: on a table where one class holds 90% of the rows, labels right "
                     "85% of the time are worse than answering that class every time. Give --majority-share S if you "
                     "know it (the app's Private labeling page can also estimate it privately, for a price).\n")
    trained = [p for p in preds if p.model_accuracy is not None]
    grounded = {p.mechanism for p in trained if p.route_accuracy is not None}
    for name in sorted(grounded):
        resolved = next((p.resolved for p in trained if p.mechanism == name and p.resolved), None)
        model = ("" if public is None or resolved is None else  # refused (no public rows): no model to name
                 " That model: " + route_model_words(name, resolved, n=sizes["n"], n_classes=sizes["n_classes"],
                                                     public=public) + ".")
        stdout.write(f"  Assumed for {name}: its own model trained on all private rows without its noise (at its "
                     f"regularization for ε = 1) would be right {routes[name]:.1%} of the time (--route-accuracy); "
                     "its prediction is that less what privacy costs (the noise, and below ε = 1 the stronger "
                     f"regularization).{model}\n")
        unreached = [p for p in trained if p.mechanism == name and p.route_unreached]
        if unreached:
            got = unreached[0].route_reached
            stdout.write(f"  NOTE: on the public rows the plan's stand-in task could not make {name}'s model without "
                         f"noise right {routes[name]:.1%} of the time (it stops at {got:.1%}): the prediction takes "
                         "the noise's cost there and is less sure; check the assumption against the model above.\n")
    if dp_routes and {p.mechanism for p in trained} - grounded:
        stdout.write(f"  Assumed for the DP-training routes: a logistic regression trained on all private rows without "
                     f"privacy would be right {trained[0].model_accuracy:.1%} of the time"
                     + (" (--model-accuracy)" if args.model_accuracy is not None else
                        " (the teachers' noise-free plurality; set it with --model-accuracy)") + ".\n")
        if args.model_accuracy is None:
            stdout.write("  MODEL ACCURACY ASSUMED, NOT READ: every DP-training prediction starts from it, and on a "
                         "real table a model without privacy can be far weaker (a label the columns barely predict "
                         "is right little more often than the majority class). Give --model-accuracy A from what "
                         "you know of the task (a non-private model on similar public data), and --accuracy for "
                         "the teachers.\n")
    stdout.write("\n")
    head = (f"{'mechanism':<16} {'ε asked':>7} {'ε, δ of the run':>18} {'answered':>14} {'correct':>14} {'⊥':>7} "
            f"{'right %':>7}  useful  useful below")
    stdout.write(head + "\n")
    for p in preds:
        eps_asked = p.settings.get("epsilon")
        guarantee = "refused" if p.epsilon != p.epsilon else f"{fmt(p.epsilon)}, {p.delta:.0e}"
        right = "—" if p.answered == 0 else f"{p.label_accuracy:.0%}"
        stdout.write(f"{p.mechanism:<16} {fmt(eps_asked) if eps_asked is not None else '—':>7} {guarantee:>18} "
                     f"{p.answered:>8.0f} ± {p.answered_sd:<3.0f} {p.correct:>8.0f} ± {p.correct_sd:<3.0f} "
                     f"{p.bottom + p.not_processed:>7.0f} {right:>7}  {'yes' if p.useful else 'NO':<6}  "
                     f"{'—' if p.useful_below != p.useful_below else format(max(0.0, p.useful_below), '.0%'):>12}\n")
    ranged = [p for p in preds if p.accuracy_range is not None]
    if ranged:
        stdout.write("\nThe DP-training routes' 'right %' is the central guess: it also rests on how the label lies "
                     "among the encoded columns, which the public rows cannot tell (with --route-accuracy: how much "
                     "the noise costs, and it can also help a little). Over the ways the plan tries "
                     "(a random direction; one along the public rows' leading principal directions, where a label "
                     "that moves many correlated columns lies; one along the trailing ones, a label carried by "
                     "rare or narrow columns; either class on either side):\n")
        for p in ranged:
            lo, hi = p.accuracy_range
            stdout.write(f"  {p.mechanism} at ε = {fmt(p.settings.get('epsilon', float('nan')))}: "
                         f"{p.label_accuracy:.0%} right, between {lo:.0%} and {hi:.0%}\n")
    refused = [p for p in preds if p.epsilon != p.epsilon and p.reason]
    if refused:
        stdout.write("\n")
        for p in refused:
            stdout.write(f"{p.mechanism} at ε = {fmt(p.settings.get('epsilon', float('nan')))} refused: {p.reason}\n")
    advice = [p for p in preds if not p.useful and p.advice]
    if advice:
        stdout.write("\n")
        for p in advice:
            stdout.write(f"{p.mechanism} at ε = {fmt(p.settings.get('epsilon', float('nan')))}: {p.advice}\n")
    if not any(p.useful for p in preds):
        stdout.write("\nNo setting planned here is useful.\n")
    else:
        defaults = [words for words, unset in (
            ("balanced classes (--majority-share)", args.majority_share is None),
            ("a model accuracy (--model-accuracy or --route-accuracy)",  # a route not grounded rests on the default
             dp_routes and args.model_accuracy is None and bool({p.mechanism for p in trained} - grounded))) if unset]
        stdout.write("\nThe plan's choice (the useful run with the most correct labels; --mechanism auto chooses the "
                     "same under the same flags)"
                     + (f", UNDER DEFAULT ASSUMPTIONS: {' and '.join(defaults)} assumed, not read; on a task whose "
                        "majority class is common or whose label is hard to predict, nothing may be useful, so give "
                        "them before spending" if defaults else "") + ":\n")
        for eps, p in choices.items():
            what = ("no useful run" if p is None else
                    f"{p.mechanism} ({p.correct:.0f} of {p.m} right, {p.label_accuracy:.0%}; useful while the most "
                    f"common class holds under {p.useful_below:.0%} of the rows)")
            stdout.write(f"  at ε = {fmt(eps)}: {what}\n")
    stdout.flush()
    return EXIT_OK
