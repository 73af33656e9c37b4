"""``recommend``: suggested number of teachers, cutoff and mechanism for a labeling job.

A thin layer over :func:`core.recommend.recommend_settings`: the sizes come from the
private file (rows, rows per class), the budget and the number of public rows from the
flags.  The private file is read as ``label`` reads it (:func:`core.cli.checks.chosen_data`):
the same column check leaves identifiers, survey weights and label stand-ins out of the
features unless ``--keep`` (its findings are NON-PRIVATE diagnostics on stderr, worded as
``label`` words them), so the DP-training routes are planned on the features ``label``
trains on.  With ``--measure-agreement`` the teachers' agreement is measured on a held-out
slice of the private rows: a NON-PRIVATE measurement, printed for the data's owner only
and labelled as such, to plan a run; it spends no budget of a published run and is
never written anywhere.  Otherwise the plan's teacher-quality flags are the assumption
(:mod:`core.cli.plan`); when no setting is predicted useful the command says so first.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from core.cli.common import EXIT_OK, PROG, CommandError, ProgressBar, add_command, add_seed

__all__ = ["add_parser", "run"]


def add_parser(commands) -> argparse.ArgumentParser:
    """Add the ``recommend`` command to the subparsers ``commands``."""
    from core.mechanisms.registry import PARAMETERS as P

    from core.cli.options import add_flag

    rec = add_command(
        commands, "recommend",
        help="suggest the number of teachers, BTT's cutoff T and a mechanism for a labeling job",
        description=(
            "Suggest k (teachers), T (BTT's cutoff) and a mechanism for labeling --m public rows at "
            "(epsilon, delta), with the reasons in words: BTT answers only with at least "
            "btt_min_teachers(epsilon, delta, T, m) teachers; with a measured teacher agreement the "
            "answer models estimate how many rows it answers; otherwise GNMax or Confident-GNMax. "
            "--measure-agreement trains teachers on part of the private rows and measures their "
            "agreement on the rest: a NON-PRIVATE measurement for planning, never exported."
        ),
        epilog=(
            "examples:\n"
            f"  {PROG} recommend --private adult_train.csv --label-column income --epsilon 2 "
            "--delta 1e-5 --m 4884\n"
            f"  {PROG} recommend --private adult_train.csv --label-column income --epsilon 2 "
            "--delta 1e-5 --m 4884 \\\n      --measure-agreement --learner logistic_regression "
            "--k 250 --missing drop --missing-marker '?'"
        ),
    )
    from core.cli.checks import add_private_file

    add_private_file(rec)
    rec.add_argument("--drop", default=None, metavar="X,Y",
                     help="leave these columns out of the features, as in label (comma separated), e.g. an identifier")
    rec.add_argument("--keep", default=None, metavar="X,Y",
                     help="use these flagged columns as features anyway, as in label: identifiers, survey weights and "
                     "label stand-ins found by the column check are left out of the features unless kept here")
    add_flag(rec, P["epsilon"], "privacy budget epsilon of the run", required=True)
    add_flag(rec, P["delta"], "privacy delta of the run", required=True)
    rec.add_argument("--m", type=int, default=None, metavar="N",
                     help="number of public rows to label (default: the rows of --public)")
    rec.add_argument("--public", default=None, metavar="FILE",
                     help="public CSV file: its rows (public) plan the DP-training routes (dp-logistic, "
                     "dp-naive-bayes) beside the ensemble; without it they are planned on a stand-in of as many "
                     "uniform columns as --private has features")
    rec.add_argument("--k", type=int, default=None, metavar="N",
                     help="number of teachers to plan with (default: chosen by the recommendation)")
    rec.add_argument("--measure-agreement", action="store_true",
                     help="measure the teachers' agreement on a held-out slice of the private rows "
                     "(NON-PRIVATE, for planning only; needs --learner)")
    rec.add_argument("--learner", default="logistic_regression", metavar="NAME",
                     help="the teachers' learner for --measure-agreement (default logistic_regression)")
    rec.add_argument("--holdout", type=int, default=500, metavar="N",
                     help="held-out private rows for --measure-agreement (default 500; persons with --privacy-unit)")
    add_seed(rec)
    from core.cli.plan import add_quality_flags

    add_quality_flags(rec)
    rec.set_defaults(handler=run, features=None)
    return rec


def _measure(table, learner: str, k: int, holdout: int, rng):
    """NON-PRIVATE: each held-out row's share of teachers voting with the majority, and the held-out
    accuracy of one logistic regression trained on all the other private rows."""
    import numpy as np

    from core import pipeline
    from core.data import largest_k, split_public

    units = table.n_units  # with a unit, persons are held out whole (the file's count, before a drop)
    holdout = max(10, min(int(holdout), units // 4))
    train, held = split_public(table, holdout, rng=rng)
    k = min(int(k), largest_k(train))
    teachers = pipeline.train(train, learner, {}, k, rng=rng)
    votes = np.asarray(teachers.vote_counts(pipeline.model_input(train, held.features)), dtype=float)
    one = pipeline.teacher_model(train, "logistic_regression", {}).fit(train.features, train.labels)
    return votes.max(axis=1) / votes.sum(axis=1), k, float(np.mean(one.predict(held.features) == held.labels))


def _what(rec) -> str:
    from core.mechanisms import registry

    if registry.get(rec.mechanism).inputs == "rows":
        return f"{rec.mechanism} (one model trained with DP on the private rows; no teachers)"
    return f"{rec.mechanism}, k = {rec.k}" + (f", T = {rec.T}" if rec.T is not None else "")


def run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO, bar: ProgressBar) -> int:
    """Run ``recommend``: print the suggestion and its reasons (exit code 0)."""
    import numpy as np

    from core.recommend import recommend_settings

    if args.m is None and args.public is None:
        raise CommandError("give --m (the number of public rows to label) or --public FILE.")
    if args.m is not None and args.m < 1:
        raise CommandError(f"--m must be a whole number of public rows, at least 1, got {args.m}.")
    from core.cli import checks
    from core.cli.checks import csv_format

    read_as = csv_format(args)
    # label's data path: the column check (identifiers, survey weights and label stand-ins left out of the features
    # unless --keep, said as label says it), the chosen columns, the table and the public rows
    table, public_X, _ = checks.chosen_data(args, stderr, csv_format=read_as)
    if table.unit is not None:
        stdout.write(f"Privacy unit: {table.privacy_unit.describe()}.\n")
    # Chunks are made of persons with a unit: the number of persons limits k.
    n_units = table.n_units  # the file's count, before a drop: public
    if table.classes_declared:
        # The declared list is public, the rows' class counts are not: which declared classes the rows hold, and how
        # many of each, would decide k and the plan (one person holding a rare class changed both).  The plan takes
        # the declared classes as balanced, read from nothing private (docs/design.md §1.3).
        counts = [n_units // table.n_classes] * table.n_classes
        stdout.write(f"Classes declared (public): {', '.join(table.class_names)}; k is sized as if they were "
                     f"balanced ({counts[0]} {'persons' if table.unit is not None else 'rows'} each): the private rows' "
                     "class counts are not read (the plan's majority share is --majority-share, or balanced).\n")
    else:
        counts = [int(c) for c in table.class_counts]
        if table.unit is not None:  # class sizes in persons, for planning: the rows' shares of the persons
            counts = [int(c * n_units // table.n_rows) for c in counts]
        stderr.write(f"{PROG}: note: the class counts were read from the private rows, and the suggested k is limited "
                     "by the smallest (a NON-PRIVATE diagnostic for the data's owner, never exported: a k taken from "
                     "it is the owner's decision, outside the (ε, δ) guarantee, and a published k says the smallest "
                     "class has at least k/2 rows). Declare the classes (--class-names A,B,...) to read none.\n")
    from core.plan import PublicRows

    if public_X is not None:  # the DP-training routes are planned on the features label would train on
        args.m = len(public_X) if args.m is None else args.m
        public = PublicRows.of(table, public_X)
    else:
        public = PublicRows.standin(args.m, max(1, table.features.shape[1]))
    sizes = dict(n_private=n_units, class_counts=counts, epsilon=args.epsilon, delta=args.delta, m=args.m)
    agreement = None
    k = args.k
    if args.measure_agreement:
        rng = np.random.default_rng(args.seed)
        plan_k = k if k is not None else recommend_settings(**sizes).k
        agreement, k, measured = _measure(table, args.learner, plan_k, args.holdout, rng)
        stdout.write(
            f"Teacher agreement (NON-PRIVATE measurement on {agreement.size} held-out private rows, "
            f"{k} teachers of {args.learner}; for planning only, never exported): mean "
            f"{agreement.mean():.1%}, {np.mean(agreement >= 0.9):.0%} of rows at 90% or more.\n"
            f"One logistic regression on the other private rows (NON-PRIVATE, the same held-out rows): right "
            f"{measured:.1%} of the time; the DP-training routes are planned from it.\n")
        if args.model_accuracy is None:
            args.model_accuracy = measured
    from core.cli.plan import quality_of, route_accuracy_of

    quality = None if agreement is not None else quality_of(args, len(counts))
    rec = recommend_settings(**sizes, agreement=agreement, k=k, quality=quality, majority_share=args.majority_share,
                             public=public, model_accuracy=args.model_accuracy,
                             route_accuracy=route_accuracy_of(args))
    if not rec.useful:
        stdout.write("No useful setting: at this budget and size no mechanism is predicted to label better than "
                     "always answering the majority class.\n")
        stdout.write(f"  least bad: {_what(rec)}\n  label flags: {rec.flags()}\n")
    else:
        stdout.write(f"Recommended: {_what(rec)}\n  label flags: {rec.flags()}\n")
    if rec.expected_answered is not None:
        stdout.write(f"  expected answered (model): about {rec.expected_answered:.0f} of {args.m}\n")
    if args.majority_share is None:
        stdout.write("  MAJORITY SHARE ASSUMED, NOT READ: balanced classes (the private share is not read). On a skewed "
                     "table give --majority-share S: a run is useful only if its labels beat answering the most "
                     "common class every time.\n")
    stdout.write("Reasons:\n" + "".join(f"  - {r}\n" for r in rec.reasons))
    stdout.flush()
    return EXIT_OK
