"""``tune``: private selection over a grid of mechanisms and ε, then the selected run's labels.

A thin layer over :func:`core.pipeline.tune_price` and :func:`core.pipeline.tune_table`
(docs/design.md §10.3).  The grid is every ``--mechanism`` × every ``--epsilon``; the
whole selection's guarantee is computed and printed before any private row is read
(``--price-only`` stops there), charged to the dataset's ledger (``--dataset``, ``--ledger``:
:mod:`core.cli.ledger`) before any private row is read, and stated in
the report of the release.  What is written is the selected run's labels, as
``label`` writes them.  With ``--score holdout`` the candidates are judged by the
student's correct predictions on ``--holdout`` private rows kept out of every teacher's
chunk, released with discrete Gaussian noise ``--score-sigma`` (it composes in parallel
with the labeling); with ``--score answered`` by the number of rows each run answered.
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path
from typing import Any, TextIO

from core.cli.common import (EXIT_OK, PROG, CommandError, ProgressBar, add_command, add_progress, add_seed,
                             dataset_name, fmt, mechanism_name)
from core.cli.ledger import add_ledger_arguments, ledger_line, open_ledger

__all__ = ["add_parser", "run", "grid_of"]

SELECTABLE = ("gnmax", "confident-gnmax", "lnmax", "dp-logistic", "dp-naive-bayes")
TRAINED = ("dp-logistic", "dp-naive-bayes")
"""The DP-training routes: one model trained with DP on the private rows (no teachers) per repetition."""


def add_parser(commands) -> argparse.ArgumentParser:
    """Add the ``tune`` command to the subparsers ``commands``."""
    p = add_command(
        commands, "tune",
        help="choose the best of a grid of mechanisms and epsilons privately and write its labels",
        description=(
            "Private selection (Papernot and Steinke's random stopping): a random number of repetitions, "
            "each running a random candidate of the grid (--mechanism x --epsilon) on the teachers' votes "
            "and scoring it privately; only the best run's labels are written. The whole selection's "
            "(epsilon, delta) is fixed and printed before any private row is read, charged to the --dataset's "
            "ledger before the teachers are trained, and stated in --report."
        ),
        epilog=(
            "examples:\n"
            f"  {PROG} tune --private adult_train.csv --label-column income --public adult_public.csv \\\n"
            "      --drop fnlwgt --missing drop --missing-marker '?' --learner logistic_regression --k 250 \\\n"
            "      --mechanism gnmax --mechanism confident-gnmax --epsilon 0.5 --epsilon 1 --delta 1e-5 \\\n"
            "      --score holdout --holdout 1000 --out labeled.csv --report report.json\n"
            f"  {PROG} tune --public adult_public.csv --mechanism gnmax --epsilon 1 --epsilon 2 --delta 1e-5 "
            "--price-only"
        ),
    )
    from core.cli.checks import add_data_arguments
    from core.mechanisms.selection import HOLDOUT_ROWS, SCORE_SIGMA  # the light module: --help stays quick

    add_data_arguments(p.add_argument_group("data"), private_required=False)
    ens = p.add_argument_group("teachers")
    ens.add_argument("--learner", default="logistic_regression", metavar="NAME",
                     help="the teachers' and the student's learner (default logistic_regression)")
    ens.add_argument("--learner-param", action="append", default=[], metavar="KEY=VALUE",
                     help="a hyperparameter of the learner; repeat for several")
    ens.add_argument("--k", type=int, default=None, metavar="N", help="number of teachers")
    grid = p.add_argument_group("the grid")
    grid.add_argument("--mechanism", action="append", type=mechanism_name, choices=SELECTABLE, required=True,
                      help="a candidate mechanism (repeat for several): " + ", ".join(SELECTABLE) + " (the DP-training "
                      "routes train one model with DP on the private rows at each repetition that picks them; "
                      "dp-logistic with its pure-epsilon noise)")
    grid.add_argument("--epsilon", action="append", type=float, required=True, metavar="E",
                      help="a candidate epsilon of one run (repeat for several)")
    grid.add_argument("--delta", type=float, required=True, metavar="D", help="delta of every run and of the selection")
    grid.add_argument("--vary", action="append", default=[], metavar="NAME=V1,V2",
                      help="another setting to tune, e.g. threshold=150,200 or ratio=2,3.75 (crossed with the grid for "
                      "the mechanisms that take it; repeat for several)")
    sel = p.add_argument_group("selection")
    sel.add_argument("--mean", type=float, default=None, metavar="X",
                     help="mean number of repetitions (default 3 per candidate)")
    sel.add_argument("--shape", type=float, default=1.0, metavar="S",
                     help="shape of the number of repetitions' truncated negative binomial (1: geometric; default 1)")
    sel.add_argument("--score", choices=("holdout", "answered"), default="holdout",
                     help="how a candidate is judged: the student's noisy correct count on held-out private rows "
                     "(default), or the number of rows its run answered")
    sel.add_argument("--holdout", type=int, default=HOLDOUT_ROWS, metavar="N",
                     help=f"private rows kept out of every teacher's chunk to score on (default {HOLDOUT_ROWS}); with "
                          "--privacy-unit, persons (all their rows kept out; one row of each scored)")
    sel.add_argument("--score-sigma", type=float, default=SCORE_SIGMA, metavar="S",
                     help=f"discrete Gaussian noise of the held-out count (sensitivity 1; default {SCORE_SIGMA:g})")
    sel.add_argument("--price-only", action="store_true",
                     help="print the selection's guarantee and stop (reads only the public file's row count)")
    out = p.add_argument_group("outputs")
    out.add_argument("--out", default=None, metavar="FILE", help="the labeled CSV file to write")
    out.add_argument("--report", default=None, metavar="FILE", help="the JSON privacy report to write")
    out.add_argument("--overwrite", action="store_true",
                     help="replace --out and --report files that exist already (default: refuse)")
    add_ledger_arguments(p.add_argument_group(
        "privacy ledger (the whole selection is charged to the private data's name before it reads a private row)"))
    add_seed(p)
    add_progress(p)
    p.set_defaults(handler=run)
    return p


def _varied(args: argparse.Namespace) -> list[tuple[str, list[Any]]]:
    """The ``--vary NAME=V1,V2`` options: (name, values)."""
    out = []
    for text in args.vary:
        name, sep, values = text.partition("=")
        vals = [v.strip() for v in values.split(",") if v.strip()]
        if not sep or not name.strip() or not vals:
            raise CommandError(f"--vary takes NAME=V1,V2,..., got {text!r}.")
        out.append((name.strip(), vals))
    return out


def grid_of(args: argparse.Namespace) -> list[tuple[str, dict[str, Any]]]:
    """The candidates: every mechanism × every ε (× every ``--vary`` value it takes), at ``--delta``."""
    from core import pipeline
    from core.mechanisms import registry

    varied = _varied(args)
    out = []
    for name, e in itertools.product(dict.fromkeys(args.mechanism), dict.fromkeys(args.epsilon)):
        mech = registry.get(name)
        own = [(n, [mech.parameter(n).convert(v) for v in vals]) for n, vals in varied if n in mech.parameter_names]
        for combo in itertools.product(*[vals for _, vals in own]):
            s: dict[str, Any] = {"epsilon": float(e), "delta": float(args.delta)}
            s.update({n: v for (n, _), v in zip(own, combo)})
            out.append(pipeline.tune_candidate(name, s))  # dp-logistic: its pure-ε perturbation
    unused = [n for n, _ in varied if not any(n in registry.get(m).parameter_names for m in args.mechanism)]
    if unused:
        raise CommandError(f"--vary {', '.join(unused)}: none of the chosen mechanisms takes it.")
    return out


def run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO, bar: ProgressBar) -> int:
    """Run ``tune``: print the price, run the selection, write the chosen labels (exit 0)."""
    import numpy as np

    from core import pipeline
    from core.cli import checks
    from core.cli.label import output_paths
    from core.cli.plan import count_rows
    from core.ensemble.learners import parse_assignments
    from core.export import privacy_report, report_json
    from core.validation import check_delta

    candidates = grid_of(args)
    score_sigma = args.score_sigma if args.score == "holdout" else None
    trained = sorted({name for name, _ in candidates if name in TRAINED})
    if trained and args.score == "answered" and len({name for name, _ in candidates}) > 1:
        raise CommandError(f"{', '.join(trained)} answer every public row: scored by the number answered they "
                           "would always win. Use --score holdout (the student's noisy correct count on held-out "
                           "private rows) to compare them with the ensemble's mechanisms.")
    read_as = checks.csv_format(args)
    m_public, _, _ = count_rows(args.public, None, csv_format=read_as)
    price = pipeline.tune_price(candidates, m_public, mean=args.mean, shape=args.shape, score_sigma=score_sigma,
                                delta=args.delta)
    stdout.write(f"This selection: ({fmt(price.epsilon)}, {fmt(price.delta)})-differential privacy for the whole "
                 f"selection over {len(candidates)} candidates (mean {price.parts['repeat_mean']:g} repetitions, "
                 f"shape {args.shape:g}, scored by {'held-out count' if score_sigma else 'answered'}), "
                 f"fixed before it runs.\n")
    if args.price_only:
        stdout.flush()
        return EXIT_OK
    ensemble = any(name not in TRAINED for name, _ in candidates)  # teachers are trained only for these
    if args.private is None or args.out is None or (ensemble and args.k is None):
        raise CommandError("a selection run needs --private FILE" + (", --k N" if ensemble else "")
                           + " and --out FILE (or --price-only)."
                           + (" (--k is the ensemble's: a grid of DP-training routes only needs none.)"
                              if ensemble else ""))
    ns = argparse.Namespace(out=args.out, report=args.report, student=None, ledger=args.ledger,
                            private=args.private, public=args.public, overwrite=args.overwrite)
    paths = output_paths(ns)
    paths.pop("--ledger", None)  # checked as an output place; the store is opened below
    params = parse_assignments(args.learner, args.learner_param)
    if args.seed is not None:
        stderr.write(f"{PROG}: note: --seed makes this a reproducible demo run, not for production.\n")
    rng = np.random.default_rng(args.seed) if args.seed is not None else None

    # label's data path: the column check (flagged columns left out unless --keep), the chosen columns, the table
    table, public, key_frame = checks.chosen_data(args, stderr, csv_format=read_as, name=Path(args.private).stem)
    if table.unit is not None:
        stdout.write(f"Privacy unit: {checks.unit_text(table)}.\n")
    check_delta(args.delta, n=table.n_units)
    if len(public) != m_public:  # rows dropped for missing values: the price is for the rows labeled
        price = pipeline.tune_price(candidates, len(public), mean=args.mean, shape=args.shape, score_sigma=score_sigma,
                                    delta=args.delta)
        stdout.write(f"{len(public)} public rows remain to label: the selection's guarantee is "
                     f"({fmt(price.epsilon)}, {fmt(price.delta)}), before anything runs.\n")

    job_ledger = open_ledger(args)
    # The one job (core.pipeline.tune_table): the whole selection charged before anything is trained (with a
    # unit: each person of the file, held-out ones too), --holdout rows (persons) split off at random, the teachers
    # and the DP-training routes on the rest, each candidate scored on the held-out rows.
    sel = pipeline.tune_table(table, public, candidates, learner=args.learner, params=params,
                              k=None if args.k is None else int(args.k), holdout=int(args.holdout),
                              score_sigma=score_sigma, mean=args.mean, shape=args.shape, delta=args.delta,
                              ledger=job_ledger, units=table.ledger_units, rng=rng,
                              train_progress=bar.task(f"Training {args.k} teachers") if ensemble else None,
                              votes_progress=bar.task("Counting votes") if ensemble else None)
    stdout.write(ledger_line(job_ledger, args))
    result = sel.result
    paths["--out"].write_bytes(pipeline.labeled_csv(public, result, table.class_names, keys=key_frame))
    written = [str(paths["--out"])]
    if "--report" in paths:
        rep = privacy_report(result, n_private=table.n_units, n_public=len(public), learner=args.learner,
                             k=None if args.k is None else int(args.k),
                             dataset=dataset_name(args), unit=table.privacy_unit,
                             ledger_total=job_ledger.total(), classes=table.class_names,
                             classes_declared=table.classes_declared, features=args._private_columns[1])
        rep["selection"] = {
            "method": "Papernot–Steinke random stopping (ICLR 2022)",
            "candidates": [{"mechanism": n, **s} for n, s in candidates],
            "chosen": sel.chosen, "repeat_mean": price.parts["repeat_mean"],
            "repeat_shape": float(args.shape), "score": sel.score_kind, "score_released": sel.score,
            "holdout_rows": 0 if score_sigma is None else int(args.holdout),
            "epsilon": sel.epsilon, "delta": sel.delta,
            "statement": "The labels are the selected run's; epsilon and delta are the whole selection's. How many "
                         "repetitions ran, and which candidates they ran, is not released: the guarantee holds for "
                         "the best run with their number hidden.",
        }
        paths["--report"].write_text(report_json(rep), encoding="utf-8")
        written.append(str(paths["--report"]))
    stdout.write(
        f"Selected candidate {sel.chosen + 1} of {len(candidates)}: {sel.mechanism} at "
        f"{', '.join(f'{k} = {fmt(v) if isinstance(v, float) else v}' for k, v in sel.settings.items())} "
        f"(score by {sel.score_kind}: {fmt(sel.score)}).\n"
        f"  answered       {result.n_answered}\n  abstained      {result.n_bottom}\n"
        f"Guarantee of the whole selection: ({fmt(sel.epsilon)}, {fmt(sel.delta)})-differential privacy "
        f"({checks.adjacency_text(table)}).\n"
        f"Wrote {', '.join(written)}.\n")
    checks.class_note(table, stdout, stderr)  # the outputs' class list: declared (public), or read (in capitals)
    stdout.flush()
    bar.break_line()
    return EXIT_OK
