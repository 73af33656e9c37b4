"""``label``: teachers on a private CSV file, private labels for a public one, the student.

A thin layer over :mod:`core.pipeline` (docs/design.md §5): the same functions, in the
same order, as the app's pages, so a request spends the same ε and gives the same files
here and there.  The mechanisms, their flags and their help come from the registry
(:mod:`core.cli.options`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, TextIO

from core.cli.common import (EXIT_HALTED, EXIT_OK, EXIT_STUDENT_FAILED, PROG, CommandError, ProgressBar,
                             add_command, add_progress, add_seed, dataset_name, fmt, mechanism_name, one_line)
from core.cli import checks, ledger, options

__all__ = ["add_parser", "run"]

_EXAMPLES = """\
examples:
  private-label-lab label --private private.csv --label-column label --public public.csv \\
      --learner logistic_regression --k 50 --mechanism btt --epsilon 2 --delta 1e-6 --T 10 \\
      --out labeled.csv --report report.json --student student.joblib
  private-label-lab label --private private.csv --public public.csv --learner random_forest \\
      --learner-param n_estimators=10 --k 40 --mechanism lnmax --gamma 0.05 --delta 1e-6 \\
      --out labeled.csv --report report.json
  private-label-lab label --private adult_train.csv --label-column income --public adult_public.csv \
      --drop fnlwgt --missing drop --missing-marker '?' --learner logistic_regression --k 400 \
      --mechanism gnmax --epsilon 2 --delta 1e-5 --dataset adult --budget-epsilon 8 \
      --budget-delta 1e-4 --out labeled.csv --report report.json --student student.joblib
"""


def _score_mechanisms() -> list[str]:
    from core.mechanisms import registry

    return [n for n in registry.names() if registry.get(n).inputs == "scores"]


def _vote_mechanisms() -> list[str]:
    from core.mechanisms import registry

    return [n for n in registry.names() if registry.get(n).inputs == "counts"]


def _learner_epilog() -> str:
    from core.ensemble.learners import LEARNERS

    scores = ", ".join(_score_mechanisms())
    lines = ["learners (--learner NAME) and their hyperparameters (--learner-param key=value, defaults shown):"]
    for spec in LEARNERS.values():
        params = ", ".join(
            f"{h.name}={'none' if h.default is None else str(h.default).lower() if h.type is bool else h.default}"
            for h in spec.hyperparameters
        )
        proba = f" (no probabilities: not for {scores})" if scores and not spec.has_predict_proba else ""
        lines.append(f"  {spec.name:<21} {params}{proba}")
    return "\n".join(lines)


def _k_value(text: str) -> int | str:
    """``--k``: a whole number, or ``auto``."""
    from core.auto import parse_k

    return parse_k(text)


ASSUMPTIONS = ("accuracy", "hard_share", "hard_accuracy", "hard_spread", "majority_share", "model_accuracy",
               "route_accuracy", "rows_per_teacher")
"""The plan's assumption flags (:func:`core.cli.plan.add_quality_flags`): read by --mechanism auto only."""


def add_parser(commands) -> argparse.ArgumentParser:
    """Add the ``label`` command to the subparsers ``commands`` (see :func:`core.cli.common.add_command`)."""
    from core.mechanisms import registry

    label = add_command(
        commands, "label",
        help="label public rows privately; write the labeled CSV, the privacy report and a student",
        description=(
            "Train k teachers on disjoint chunks of the private CSV file, label the rows of the "
            "public CSV file with a differentially private mechanism, and write the labeled CSV "
            "(public features, the private label -- empty where not answered --, 'answered' and "
            "'status' columns), the JSON privacy report and optionally a student model trained on "
            "the private labels. Every output is safe to publish: it holds no seed, vote count or "
            "teacher output. The teachers themselves stay in memory and are never written."
        ),
        epilog=(_EXAMPLES + "\n" + options.mechanisms_epilog() + "\n\n" + _learner_epilog()),
    )
    data = label.add_argument_group("data")
    checks.add_data_arguments(data)
    data.add_argument("--rename-duplicates", action="store_true",
                      help="make repeated column names distinct (a, a.2, a.3) instead of refusing the files")
    data.add_argument("--drop-empty-columns", action="store_true",
                      help="drop feature columns that are empty in every private row instead of refusing the file")
    ens = label.add_argument_group("teachers")
    ens.add_argument("--learner", default=None, metavar="NAME",
                     help="the teachers' learner (see the list below); needed by the ensemble's mechanisms, not by "
                     "the DP-training routes (dp-logistic, dp-naive-bayes), whose student it names "
                     "(default there: logistic_regression)")
    ens.add_argument("--learner-param", action="append", default=[], metavar="KEY=VALUE",
                     help="a hyperparameter of the learner, e.g. C=0.5; repeat for several")
    ens.add_argument("--k", default=None, type=_k_value, metavar="N",
                     help="number of teachers; each is fitted on about n/k private rows (auto: chosen from public "
                     "sizes); needed by the ensemble's mechanisms, not by the DP-training routes")

    priv = label.add_argument_group("privacy (each mechanism's settings are listed below)")
    names = registry.names()
    priv.add_argument("--mechanism", required=True, type=mechanism_name, choices=[*names, "auto"],
                      help="the labeling mechanism: " + ", ".join(names) + "; auto: the plan's choice, from public "
                      "sizes and the assumptions below (as `plan` takes them)")
    options.add_mechanism_flags(priv, {n: options.takes(registry.get(n)) for n in names})
    from core.cli.plan import add_quality_flags

    add_quality_flags(label, title="--mechanism auto's assumptions (as plan's; public, not read from any file)",
                      description="Read only by --mechanism auto, whose choice is plan's under them; refused with a "
                      "named mechanism.")

    out = label.add_argument_group("outputs")
    out.add_argument("--out", required=True, metavar="FILE",
                     help="the labeled CSV file to write")
    out.add_argument("--report", default=None, metavar="FILE",
                     help="the JSON privacy report to write (mechanism, parameters, epsilon, delta, counts)")
    out.add_argument("--student", default=None, metavar="FILE",
                     help="train a student on the private labels and write it: in skops' format when the "
                     "name ends in .skops (loaded without running code from the file), else with joblib "
                     "(a pickle: joblib.load runs code from the file); it predicts class names and carries "
                     "the labeling's epsilon and delta")
    out.add_argument("--student-learner", default=None, metavar="NAME",
                     help="the student's learner (default: the teachers' learner)")
    out.add_argument("--student-param", action="append", default=[], metavar="KEY=VALUE",
                     help="a hyperparameter of the student's learner (default: its defaults)")
    out.add_argument("--overwrite", action="store_true",
                     help="replace --out, --report and --student files that exist already (default: refuse, so "
                     "that a run never overwrites an earlier run's files)")
    out.add_argument("--bottom", choices=("drop", "random", "semi"), default="drop",
                     help="the student's rows without a label: drop them (default), give them a random "
                     "class, or keep them unlabeled for a semi-supervised student")

    ledger.add_ledger_arguments(label.add_argument_group(
        "privacy ledger (every run is charged to the private data's name before it reads a private row)"))

    run_group = label.add_argument_group("execution")
    run_group.add_argument("--n-jobs", type=int, default=None, metavar="N",
                           help="parallel workers for training and prediction (-1: all cores; default: "
                           "sequential, or the backend's own setting)")
    run_group.add_argument("--backend", default=None, metavar="NAME",
                           help="joblib backend for training and prediction, e.g. loky, threading or dask "
                           "(default: joblib's)")
    run_group.add_argument("--scheduler", default=None, metavar="ADDRESS",
                           help="address of the Dask scheduler for --backend dask, e.g. tcp://127.0.0.1:8786")
    run_group.add_argument("--chunk-rows", type=int, default=None, metavar="N",
                           help="public rows read, labeled and written at a time by the mechanisms that "
                           "answer query by query (default 100000); memory stays flat in the file's length")
    run_group.add_argument("--scheduler-timeout", type=float, default=None, metavar="SECONDS",
                           help="how long to wait for the Dask scheduler to answer (default 10)")
    add_seed(run_group)
    add_progress(run_group)
    label.set_defaults(handler=run)
    return label


# ----------------------------------------------------------------------------- files


ONE_CLASS_SHARE = 0.95
"""Above this share of the answered rows in one class, ``label`` warns that the labels may be no
better than answering that class every time."""


def one_class_note(result, class_names) -> str | None:
    """A warning when nearly every answered label is one class, read from the RELEASED labels only.

    The released labels are a post-processing of the run (free to read); the private class
    shares are not read.  Labels that are almost all one class are useful only if they beat
    always answering that class, which the plan cannot tell without the private share
    (docs/design.md §10.9).

    Parameters
    ----------
    result : LabelingResult
    class_names : sequence of str

    Returns
    -------
    str or None
    """
    import numpy as np

    if getattr(result, "scores", None) is not None:  # soft labels: released scores, not classes
        return None
    labels = np.asarray(result.labels)
    answered = labels[labels >= 0] if labels.dtype.kind in "iu" else np.zeros(0, dtype=int)
    if answered.size < 20:
        return None
    counts = np.bincount(answered.astype(np.int64), minlength=len(class_names))
    top = int(np.argmax(counts))
    share = counts[top] / answered.size
    if share <= ONE_CLASS_SHARE:
        return None
    return (f"{share:.1%} of the answered rows got the label '{class_names[top]}'. Labels that are nearly all one "
            f"class are useful only if they beat answering '{class_names[top]}' every time: if that class is as "
            f"common in your data, these labels add little. Plan again with --majority-share S (your best public "
            "knowledge of its share) to see whether any route beats it.")


def _takes_ledger_total() -> bool:
    """Whether :func:`core.export.privacy_report` reports a ledger total (``ledger_total=``)."""
    import inspect

    from core.export import privacy_report

    return "ledger_total" in inspect.signature(privacy_report).parameters


def output_paths(args: argparse.Namespace) -> dict[str, Path]:
    """The output files, checked before any work: writable places, distinct from the inputs, and
    (without ``--overwrite``) not there yet: a run never replaces an earlier run's files unasked.

    Returns
    -------
    dict
        Flag (``--out``, ``--report``, ``--student``) -> path, for those given.

    Raises
    ------
    CommandError
    """
    outputs = {"--out": args.out, "--report": args.report, "--student": args.student,
               "--ledger": getattr(args, "ledger", None)}
    paths = {flag: Path(p).expanduser() for flag, p in outputs.items() if p is not None}
    inputs = {Path(p).expanduser().resolve() for p in (args.private, args.public)}
    seen: dict[Path, str] = {}
    for flag, path in paths.items():
        resolved = path.resolve()
        if resolved in inputs:
            raise CommandError(f"{flag} '{path}' is one of the input files; choose another file name.")
        if resolved in seen:
            raise CommandError(f"{seen[resolved]} and {flag} name the same file '{path}'; give each its own file.")
        seen[resolved] = flag
        if path.is_dir():
            raise CommandError(f"{flag} '{path}' is a folder; give a file name.")
        if flag != "--ledger" and path.exists() and not getattr(args, "overwrite", False):
            raise CommandError(f"{flag} '{path}' exists already (an earlier run's file?); nothing was run or spent. "
                               "Give another file name, or add --overwrite to replace it.")
        parent = resolved.parent
        if not parent.is_dir():
            raise CommandError(f"Cannot write {flag} '{path}': the folder '{parent}' does not exist.")
    return paths


def _write(path: Path, data: bytes, flag: str) -> None:
    try:
        path.write_bytes(data)
    except OSError as exc:
        raise CommandError(f"Cannot write {flag} '{path}': {exc.strerror or exc}.") from None


# ----------------------------------------------------------------------------- the command


def settings_of(args: argparse.Namespace) -> dict[str, Any]:
    """The request of a ``label`` command: the mechanism's flags that were given, checked.

    Refuses flags the mechanism does not take, a missing budget, and (through
    :func:`core.pipeline.resolve` with ``strict=True``) both ε and the noise it decides.

    Raises
    ------
    CommandError, core.errors.ParameterError
    """
    from core import pipeline
    from core.mechanisms import registry

    mech = registry.get(args.mechanism)
    given = options.given_settings(args)
    options.check_flags(given, mech.name, options.takes(mech))
    options.check_budget(given, mech.name)
    pipeline.resolve(mech.name, given, 1, strict=True)
    pipeline.privacy_map(mech.name, given, 1)  # the guarantee's own checks, before any file is read
    return given


def run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO, bar: ProgressBar) -> int:
    """Run ``label``: the exit code (0 done, 3 halted before every row was processed)."""
    import numpy as np
    import pandas as pd

    from core import pipeline
    from core.data import load_table, read_public
    from core.ensemble.distributed import DEFAULT_CONNECT_TIMEOUT, joblib_backend
    from core.ensemble.learners import LEARNERS, parse_assignments
    from core.errors import ParameterError, PrivateLabelLabError
    from core.mechanisms import registry
    from core.validation import check_delta, check_k

    if args.mechanism != "auto":  # the plan's assumptions steer auto's choice only
        given_assumptions = ["--" + dest.replace("_", "-") for dest in ASSUMPTIONS if getattr(args, dest, None) is not None]
        if given_assumptions:
            raise ParameterError(f"{', '.join(given_assumptions)} steer --mechanism auto's choice (the plan's "
                                 f"assumptions); with --mechanism {args.mechanism} nothing reads them. Drop them, or "
                                 "use --mechanism auto.")
    if args.mechanism == "auto" and args.k is None:
        args.k = "auto"  # the ensemble's k, if auto chooses the ensemble, is chosen with it
    if "auto" in (args.mechanism, args.k):  # chosen from public sizes only (core.auto), said on stderr
        from core.cli.auto import resolve_auto

        resolve_auto(args, stderr)
    mech = registry.get(args.mechanism)
    votes = ", ".join(_vote_mechanisms()) or "one reading votes"

    # 1. Arguments, before any file is read.  A DP-training route trains no teachers: --learner and
    #    --k are the ensemble's, not asked for (--learner then names only the student's learner).
    given = settings_of(args)
    trained = mech.inputs == "rows"
    if not trained and (args.learner is None or args.k is None):
        missing = " and ".join(f for f, v in (("--learner NAME", args.learner), ("--k N", args.k)) if v is None)
        raise CommandError(f"--mechanism {mech.name} trains an ensemble of teachers: give {missing} "
                           "(or a DP-training route, --mechanism dp-logistic or dp-naive-bayes, which needs neither).")
    if trained:
        if args.learner_param and args.learner is None:
            raise CommandError("--learner-param needs --learner NAME.")
        args.learner = args.learner or "logistic_regression"  # the student's learner by default
        k = None
    else:
        k = check_k(args.k)
    params = parse_assignments(args.learner, args.learner_param)
    student_learner = args.student_learner or args.learner
    if args.student is None and (args.student_learner is not None or args.student_param):
        raise CommandError("--student-learner and --student-param need --student FILE to write the student to.")
    student_params = parse_assignments(student_learner, args.student_param)
    if mech.inputs == "scores" and not LEARNERS[args.learner].has_predict_proba:
        raise ParameterError(
            f"--mechanism {mech.name} needs class probabilities, but {args.learner} has none. Choose a "
            f"learner with probabilities (e.g. logistic_regression) or a mechanism reading votes ({votes})."
        )
    paths = output_paths(args)
    timeout = DEFAULT_CONNECT_TIMEOUT if args.scheduler_timeout is None else args.scheduler_timeout
    backend = joblib_backend(args.backend, args.scheduler, timeout=timeout)  # checked now, connects on entering
    if args.seed is not None:
        stderr.write(f"{PROG}: note: --seed makes this a reproducible demo run, not for production.\n")
    rng = np.random.default_rng(args.seed) if args.seed is not None else None

    paths.pop("--ledger", None)  # checked as an output place; the store is opened below

    # 2. Data (the app's loading path: the same checks and messages), the chosen columns only;
    #    first the one column check, which says every problem of the private file at once, and
    #    the default features (flagged columns left out unless --keep).
    from core.data import check_pair

    check_pair(args.private, args.public)  # the private file given as --public: refused before any reading
    checks.private_columns(args, stderr)
    # Mechanisms that answer query by query (or keep a stream's state) label the public file
    # in chunks, written as they go; the others (scores, one test over every query) read it whole.
    streaming = mech.inputs == "counts" and (mech.online is not None or mech.per_query)
    read_as = checks.csv_format(args)
    raw_private = checks.raw_frame(args.private, args.rename_duplicates, read_as)
    if streaming:
        import itertools

        from core.cli import stream

        chunk_rows = stream.DEFAULT_CHUNK_ROWS if args.chunk_rows is None else args.chunk_rows
        if chunk_rows < 1:
            raise CommandError(f"--chunk-rows must be at least 1, got {chunk_rows}.")
        chunks = stream.read_chunks(args.public, chunk_rows, rename_duplicates=args.rename_duplicates, csv_format=read_as)
        head = next(chunks, None)
        if head is None:
            raise CommandError(f"The file '{args.public}' has a header row but no data rows.")
        raw_public = head
    else:
        raw_public = checks.raw_frame(args.public, args.rename_duplicates, read_as)
    keys = checks.key_names(args, raw_public.columns)  # --key, and the --drop columns the public file has
    private_src, public_src = checks.select_columns(
        raw_private, raw_public, label_column=args.label_column,
        features=checks.names_list(args.features), drop=checks.names_list(args.drop), unit=args.privacy_unit,
        keys=keys)
    checks.warn(stderr, checks.marker_hints({"private": raw_private, "public": raw_public}, args.missing_marker))
    del raw_private, raw_public
    table = load_table(args.private if private_src is None else private_src, label_column=args.label_column,
                       missing=args.missing, missing_markers=args.missing_marker or None,
                       name=Path(args.private).stem, rename_duplicates=args.rename_duplicates,
                       drop_empty_columns=args.drop_empty_columns, privacy_unit=args.privacy_unit,
                       csv_format=read_as if private_src is None else None, classes=checks.declared_classes(args))
    if table.unit is not None:
        stdout.write(f"Privacy unit: {checks.unit_text(table)}.\n")
    if streaming:
        n_public = stream.count_rows(args.public)
        selected = private_src is not None

        def prepare(frame):  # the chosen columns, as select_columns chose them for the whole file
            frame = frame.drop(columns=[c for c in table.dropped_columns if c in frame.columns])
            if selected:
                frame = frame[[c for c in frame.columns if c in table.feature_names or c == table.label_column
                               or (table.unit is not None and c == table.unit.column)]]
            return frame

        from core.data import check_public

        first = check_public(table, prepare(head))  # the first chunk's problems are refused before any training
        checks.warn_copies(stderr, table, first, first=True)  # NON-PRIVATE: the first chunk's copies of private rows
        del first
        public = None
        chunks = itertools.chain([head], chunks)
    else:
        # the public file as read above (not read again); the keys: its own text, for the rows kept
        public, key_frame = read_public(public_src, table, keys=keys)
        checks.warn_copies(stderr, table, public)  # NON-PRIVATE: public rows copying private rows
        n_public = len(public)
    del public_src
    if table.dropped_columns:
        stderr.write(f"{PROG}: note: dropped column(s) empty in every private row: "
                     f"{', '.join(table.dropped_columns)}.\n")
    for line in checks.missing_lines(table, pd.DataFrame() if streaming else public):
        stderr.write(f"{PROG}: missing values: {one_line(line)}\n")
    settings = pipeline.resolve(mech.name, given, n_public, strict=True)
    if "delta" in settings:
        check_delta(settings["delta"], n=table.n_units)
    if mech.inputs == "scores" and table.n_classes != 2:
        raise ParameterError(
            f"--mechanism {mech.name} needs a binary task, but the label column '{table.label_column}' "
            f"holds {table.n_classes} classes. Use a mechanism reading votes ({votes}) instead."
        )

    # The private data's ledger: the run is charged (and refused past the budget) before any
    # private row is read, in one transaction of the store shared with the app; with a
    # privacy unit, to each person of the file (their own account), else to the whole dataset.
    job_ledger = ledger.open_ledger(args)
    job_ledger.charge(pipeline.ledger_entry(mech.name, given, n_public), units=table.ledger_units)
    stdout.write(ledger.ledger_line(job_ledger, args))

    # 3. Teachers, then (streaming) each chunk's votes, labels and labeled rows, or (whole file)
    #    the votes (or scores) of every row, on the chosen joblib backend.
    reading = "Scoring the public rows" if mech.inputs == "scores" else "Counting votes"
    with backend:  # a DP-training route (trained): one model trained with DP on the private rows, no teachers
        teachers = None if trained else pipeline.train(table, args.learner, params, k, rng=rng, n_jobs=args.n_jobs,
                                                       progress=bar.task(f"Training {k} teachers"))
        if streaming:
            rate = stream.RateBar(stderr if bar.enabled else None, "Labeling", n_public)
            result, public = stream.write_stream(
                paths["--out"], chunks=chunks, table=table, teachers=teachers, mechanism=mech.name,
                settings=given, m=n_public, rng=rng, prepare=prepare, progress=rate, keep="--student" in paths,
                keys=keys)
        else:
            inputs = pipeline.mechanism_inputs(mech.name, teachers, table, public, progress=bar.task(reading))
    del teachers  # non-private: never written

    # 4. The private labeling (whole file, charged above); 5. outputs.
    if not streaming:
        result = pipeline.label(inputs, mech.name, given, rng=rng, strict=True)
        del inputs
        _write(paths["--out"], pipeline.labeled_csv(public, result, table.class_names, keys=key_frame), "--out")
    written = [str(paths["--out"])]
    if "--report" in paths:
        context = dict(n_private=table.n_units, n_public=n_public, learner=args.learner, k=k,
                       dataset=dataset_name(args), unit=table.privacy_unit, classes=table.class_names,
                       classes_declared=table.classes_declared, features=args._private_columns[1])
        if _takes_ledger_total():
            context["ledger_total"] = job_ledger.total()
        report = pipeline.report(result, **context)
        _write(paths["--report"], report.encode("utf-8"), "--report")
        written.append(str(paths["--report"]))
    stdout.write(
        f"Labeled {result.m} public rows with {mech.name} "
        + (f"(one model trained with DP on {checks.private_count_text(table)}, encoded into "
           f"{result.params.get('encoded_columns')} columns, no teachers; " if trained else
           f"({k} teachers, {args.learner}, on {checks.private_count_text(table)}; ")
        + f"privacy unit: {checks.unit_text(table)}):\n"
        f"  answered       {result.n_answered}\n"
        f"  abstained      {result.n_bottom}\n"
        f"  not processed  {result.n_unprocessed}\n"
        f"Guarantee: ({fmt(result.epsilon)}, {fmt(result.delta)})-differential privacy "
        f"({checks.adjacency_text(table)}).\n"
        f"Wrote {', '.join(written)}.\n"
    )
    checks.class_note(table, stdout, stderr)  # the outputs' class list: declared (public), or read (in capitals)
    stdout.flush()
    bar.break_line()
    skew = one_class_note(result, table.class_names)
    if skew:
        stderr.write(f"{PROG}: warning: {skew}\n")
    if not result.feasible and result.reason:
        stderr.write(f"{PROG}: warning: {one_line(result.reason)}\n")
    halted = result.n_unprocessed > 0
    if halted:
        failed = "failed tests" if mech.inputs == "scores" else "abstentions"
        row = "?" if result.halted_at is None else str(result.halted_at + 1)
        raise_ = " or ".join(f"--{n}" for n in ("T", "epsilon") if n in options.takes(mech)) or "the budget"
        stderr.write(
            f"{PROG}: budget exhausted: {mech.name} halted after {result.params.get('rounds')} "
            f"{failed} at public row {row}; the {result.n_unprocessed} rows after it were not "
            f"processed (empty label, status 'not processed' in {paths['--out']}). Raise {raise_}, "
            "or use more teachers, to label more rows.\n"
        )
    stderr.flush()

    # 6. The student: a post-processing of the labels, with the same guarantee.
    if "--student" in paths:
        from core.ensemble.student import PublishedStudent

        try:
            student = pipeline.student(public, result, student_learner, student_params, table,
                                       bottom=args.bottom, rng=rng)
        except PrivateLabelLabError as exc:
            code = EXIT_HALTED if halted else EXIT_STUDENT_FAILED
            stderr.write(f"{PROG}: error: The labels were written but the student was not "
                         f"(exit code {code}): {one_line(exc)}\n")
            stderr.flush()
            return code
        public_report = json.loads(pipeline.report(result, n_private=table.n_units, n_public=n_public,
                                                   learner=args.learner, k=k, dataset=dataset_name(args),
                                                   unit=table.privacy_unit, classes=table.class_names,
                                                   classes_declared=table.classes_declared,
                                                   features=args._private_columns[1]))
        published = PublishedStudent.from_student(student, table.class_names, report=public_report)
        skops_format = paths["--student"].suffix.lower() == ".skops"
        _write(paths["--student"], published.to_skops() if skops_format else published.to_joblib(), "--student")
        stdout.write(
            f"Student ({student_learner}) trained on {student.n_labeled} labeled rows; it predicts the "
            f"class names and carries the same guarantee. Wrote {paths['--student']}.\n"
        )
        stdout.flush()
    return EXIT_HALTED if halted else EXIT_OK
