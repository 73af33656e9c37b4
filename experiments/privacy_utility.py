"""Privacy–utility of every registered mechanism on the same teacher votes, at equal (ε, δ).

One ensemble, one set of m public queries, one set of votes (and scores); for each target
ε of a grid, every mechanism of the registry (``core.mechanisms.registry``) that applies
to the task is run through the pipeline (``core.pipeline.resolve`` / ``label``) at that
(ε, δ): mechanisms reading vote counts always, ``btt-soft`` (teacher scores) only on a
binary task.  ε is the control: a mechanism whose noise follows from ε (LNMax's γ, GNMax's
σ, Confident-GNMax's σ1 and σ2) gets it from the registry's ``spend`` for these m queries;
a mechanism that takes ε directly gets it as is, except one whose registered privacy map
charges ε per query (``a-stab``: basic composition), which gets ε/m and δ/m so that the
whole run is held to (ε, δ).  BTT's cutoff T is, by default (``--T auto``), for each ε the
largest T of a grid whose calibrated threshold w (``core.accounting.calibrate_btt``) is at
most k/4 — a rule using only public quantities (k, ε, δ, m), never the votes.

Measured, for every mechanism and ε: answered, correct and wrong answers (against the
public rows' true labels), ⊥, queries not processed (after a halt, or a failed
certification), the guarantee the run reports, the test accuracy of a student
(``core.pipeline.student``: the teachers' learner on the answered public rows, ⊥ dropped)
on held-out rows, and — where a mechanism reports one — the data-dependent ε
(``LabelingResult.epsilon_data_dependent``), a NON-PRIVATE diagnostic that depends on the
votes and is not a guarantee.

The project's standard benchmark (the defaults): realizable halfspaces in d = 20
(``core.data.halfspaces``), 200,000 private rows, 2,000 public queries, 10,000 test rows,
k = 250 logistic-regression teachers, δ = 1e-5, ε ∈ {0.5, 1, 2, 4, 8}.

Run:  python experiments/privacy_utility.py
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as common  # noqa: E402
from _common import plt  # noqa: E402

from core import pipeline  # noqa: E402
from core.data import table_from_arrays  # noqa: E402
from core.errors import DataError, ParameterError  # noqa: E402
from core.mechanisms import registry  # noqa: E402
from core.mechanisms.stability import plurality  # noqa: E402

NAME = "privacy_utility"
TITLE = "Privacy–utility of every registered mechanism on the same votes"
LEARNER = "logistic_regression"


def build_parser() -> argparse.ArgumentParser:
    p = common.parser(NAME, __doc__.split("\n\n")[0])
    p.add_argument("--epsilons", type=common.number_list(float, "ε", low=0.0, low_open=True, increasing=True),
                   default=[0.5, 1.0, 2.0, 4.0, 8.0], help="target ε values, comma separated")
    p.add_argument("--delta", type=common.probability, default=1e-5, help="target δ of every mechanism")
    p.add_argument("--noise", type=float, default=0.0, help="label noise in [0, 0.5) (0: realizable)")
    p.add_argument("--d", type=common.positive_int, default=20, help="dimension of the halfspace")
    p.add_argument("--k", type=common.positive_int, default=250, help="number of teachers")
    p.add_argument("--n-private", type=common.positive_int, default=200_000, help="private rows (split among the teachers)")
    p.add_argument("--m", type=common.positive_int, default=2000, help="number of public queries")
    p.add_argument("--n-test", type=common.positive_int, default=10_000, help="held-out rows for the students")
    p.add_argument("--T", type=cutoff, default="auto",
                   help="BTT's cutoff (number of ⊥), or 'auto': per ε, the largest T whose threshold is at most k/4")
    p.add_argument("--eta", type=common.probability, default=0.1, help="soft-label precision η (1/η whole)")
    p.add_argument("--mechanisms", type=mechanism_list, default=None,
                   help="registered mechanisms to run, comma separated (default: every one that applies)")
    p.add_argument("--repeats", type=common.positive_int, default=5, help="runs of each mechanism's noise")
    return p


QUICK = {"epsilons": [1.0, 8.0], "d": 5, "k": 50, "n_private": 10_000, "m": 300, "n_test": 1000, "repeats": 1}


def cutoff(text: str) -> int | str:
    """argparse type: ``auto`` or a whole number of at least 1."""
    return "auto" if text == "auto" else common.positive_int(text)


def mechanism_list(text: str) -> list[str]:
    """argparse type: registered mechanism names, comma separated."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in registry.names()]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"choose among {', '.join(registry.names())}, got {text!r}")
    return names


def applicable(n_classes: int, chosen: list[str] | None) -> list[str]:
    """The registered mechanisms that run on this task, in registration order.

    Every mechanism reading vote counts; a mechanism reading teacher scores only on a
    binary task; all of them must accept a target ε (a parameter, or ``spend``).
    """
    out = []
    for name in registry.names():
        mech = registry.get(name)
        if chosen is not None and name not in chosen:
            continue
        if not mech.takes_epsilon:
            continue
        if mech.inputs == "scores" and n_classes != 2:
            continue
        out.append(name)
    return out


def settings_for(name: str, eps: float, args) -> tuple[dict, str]:
    """The request for ``name`` at the target (ε, δ) on m queries, and a note for the table.

    The request always names the target ε; :func:`core.pipeline.resolve` turns it into
    the mechanism's noise through the registry's ``spend``.  A mechanism whose registered
    privacy map charges the run more than the ε it is given (per-query charging, basic
    composition) is given ε/m and δ/m instead.
    """
    mech = registry.get(name)
    settings: dict = {"epsilon": eps, "delta": args.delta}
    note = []
    if "T" in mech.parameter_names:
        soft = mech.inputs == "scores"
        T = args.T if args.T != "auto" else common.auto_cutoff(eps, args.delta, args.m, args.k, soft)
        settings.update(T=T, calibration="tight")
        note.append(f"T = {T}")
    if "eta" in mech.parameter_names:
        settings["eta"] = args.eta
        note.append(f"η = {args.eta:g}")
    charged = pipeline.privacy_map(name, settings, args.m)
    if charged.epsilon > eps * (1 + 1e-9) or charged.delta > args.delta * (1 + 1e-9):
        settings.update(epsilon=eps / args.m, delta=args.delta / args.m)
        note.append(f"ε/m = {eps / args.m:.3g} and δ/m per query")
    resolved = pipeline.resolve(name, settings, args.m)
    for derived in mech.derived:
        note.append(f"{derived} = {resolved[derived]:.4g}")
    return settings, ", ".join(note)


def hard_labels(result) -> np.ndarray:
    """Class ids of a labeling (a soft label's score becomes ``1[score >= 0.5]``), negatives kept."""
    if result.scores is None:
        return result.labels
    return np.where(result.answered, (np.nan_to_num(result.scores) >= 0.5).astype(np.int64), result.labels)


def student_accuracy(X_pub, result, table, X_test, y_test, rng) -> float:
    """Test accuracy of the student trained on a labeling; NaN when it cannot be trained."""
    try:
        model = pipeline.student(X_pub, result, LEARNER, None, table, rng=rng)
    except DataError:  # fewer than two classes answered
        return float("nan")
    return float(np.mean(model.predict(X_test) == y_test))


def run(args) -> dict:
    """Teachers and votes once; every applicable mechanism at every ε and repeat."""
    if not 0.0 <= args.noise < 0.5:
        raise SystemExit("error: --noise must lie in [0, 0.5).")
    task = common.halfspace_task(args.n_private, args.m + args.n_test, args.d, args.noise, args.seed)
    columns = [f"x{j}" for j in range(args.d)]
    table = table_from_arrays(task.X_private, task.y_private, feature_names=columns, name="halfspaces")
    X_pub = pd.DataFrame(task.X_public[:args.m], columns=columns)
    X_test = pd.DataFrame(task.X_public[args.m:], columns=columns)
    y_pub, y_test = task.y_public_clean[:args.m], task.y_public_clean[args.m:]
    timer = common.Timer()
    teachers = pipeline.train(table, LEARNER, None, args.k, rng=common.rng_for(args.seed, 2), n_jobs=args.n_jobs)
    names = applicable(table.n_classes, args.mechanisms)
    inputs = {kind: pipeline.mechanism_inputs(n, teachers, table, X_pub)
              for kind, n in {registry.get(n).inputs: n for n in names}.items()}
    print(f"{args.k} teachers and their votes in {timer.elapsed:.0f} s", flush=True)
    votes = inputs.get("counts")
    if votes is None:
        votes = teachers.vote_counts(pipeline.model_input(table, X_pub))
    top = plurality(votes)  # non-private diagnostic
    out: dict = {
        "names": names, "cells": {},
        "plurality_acc": float(np.mean(top == y_pub)),
        "teacher_acc": float(np.mean(teachers.predictions(pipeline.model_input(table, X_pub)) == y_pub[:, None])),
        "nonprivate_student": student_accuracy(
            X_pub, _all_labeled(y_pub), table, X_test, y_test, common.rng_for(args.seed, 9)),
    }
    for i, eps in enumerate(args.epsilons):
        for j, name in enumerate(names):
            runs = []
            try:
                settings, note = settings_for(name, eps, args)
                pipeline.resolve(name, settings, args.m)
            except ParameterError as exc:  # the mechanism cannot run at this (ε, δ): report why
                out["cells"][(eps, name)] = {"runs": [], "note": f"not run: {exc}"}
                continue
            for r in range(args.repeats):
                try:
                    res = pipeline.label(inputs[registry.get(name).inputs], name, settings,
                                         rng=common.rng_for(args.seed, 5, i, j, r))
                except ParameterError as exc:
                    out["cells"][(eps, name)] = {"runs": [], "note": f"not run: {exc}"}
                    break
                if res.epsilon > eps * (1 + 1e-9) or res.delta > args.delta * (1 + 1e-9):
                    raise RuntimeError(f"{name} reported ({res.epsilon:g}, {res.delta:g}) above ({eps:g}, {args.delta:g}).")
                labels = hard_labels(res)
                answered = labels >= 0
                correct = int(np.count_nonzero(labels[answered] == y_pub[answered]))
                runs.append({
                    "answered": res.n_answered, "correct": correct, "wrong": res.n_answered - correct,
                    "bottom": res.n_bottom, "unprocessed": res.n_unprocessed,
                    "epsilon": res.epsilon, "delta": res.delta, "feasible": res.feasible,
                    "eps_dd": res.epsilon_data_dependent,
                    "student": student_accuracy(X_pub, res, table, X_test, y_test, common.rng_for(args.seed, 6, i, j, r)),
                })
            else:
                out["cells"][(eps, name)] = {"runs": runs, "note": note}
        print(f"ε = {eps:g} ({timer.elapsed:.0f} s): " + ", ".join(
            f"{n} {np.mean([x['answered'] for x in out['cells'][(eps, n)]['runs']] or [0]):.0f}" for n in names
        ), flush=True)
    return out


def _all_labeled(y):
    """A labeling holding the true labels of every public row (the non-private reference student)."""
    from core.mechanisms.result import LabelingResult

    y = np.asarray(y, dtype=np.int64)
    return LabelingResult(mechanism="true labels (non-private)", labels=y, scores=None, n_answered=len(y),
                          n_bottom=0, n_unprocessed=0, halted_at=None, epsilon=float("inf"), delta=0.0,
                          params={}, accounting="none")


def report(args, data: dict) -> tuple[list[str], Any]:
    names = data["names"]
    rows = []
    for eps in args.epsilons:
        for name in names:
            cell = data["cells"][(eps, name)]
            runs = cell["runs"]
            note = cell["note"]
            if not runs:
                rows.append([f"{eps:g}", name, note.replace("|", "/"), "—", "0", "0", "0", "0", f"{args.m:,}", "—", "—"])
                continue
            failed = sum(not x["feasible"] for x in runs)
            if failed:
                note = (note + "; " if note else "") + f"infeasible / not certified in {failed} of {len(runs)} runs"
            rows.append([
                f"{eps:g}", name, note or "—",
                f"{max(x['epsilon'] for x in runs):.3g}, {max(x['delta'] for x in runs):.2g}",
                common.mean_sd([x["answered"] for x in runs], 0),
                common.mean_sd([x["correct"] for x in runs], 0),
                common.mean_sd([x["wrong"] for x in runs], 0),
                common.mean_sd([x["bottom"] for x in runs], 0),
                common.mean_sd([x["unprocessed"] for x in runs], 0),
                common.mean_sd([x["student"] for x in runs], 3),
                common.mean_sd([x["eps_dd"] for x in runs], 3) if registry.get(name).data_dependent else "—",
            ])
    cols = ["target ε", "mechanism", "setting", "guarantee (ε, δ)", f"answered (of {args.m:,})", "correct",
            "wrong", "⊥", "not processed", "student test accuracy",
            "data-dependent ε (NON-PRIVATE diagnostic)"]
    dd = [f"`{n}`: {registry.get(n).data_dependent}" for n in names if registry.get(n).data_dependent]
    params = (
        f"Halfspaces in d = {args.d} "
        + ("(realizable, no label noise)" if args.noise == 0 else f"with label noise {args.noise:g}")
        + f"; {args.n_private:,} private rows split among k = {args.k:,} logistic-regression teachers "
        f"({args.n_private // args.k:,} rows each); m = {args.m:,} public queries; {args.n_test:,} held-out test "
        f"rows. Every registered mechanism that applies (`{'`, `'.join(names)}`) is run through "
        f"`core.pipeline.label` at the target (ε, δ = {args.delta:g}) on the same votes (`btt-soft`: the "
        "same teachers' scores; a released score counts as the class 1[score ≥ 0.5]); the setting column "
        "gives what follows from ε (the registry's `spend`) and BTT's cutoff "
        + ("(per ε, the largest T whose calibrated threshold w is at most k/4: a rule using only k, ε, δ "
           "and m)" if args.T == "auto" else f"T = {args.T}")
        + f". {args.repeats} runs of each mechanism's noise (mean ± sd). Correct and wrong count answered "
        "queries against the public rows' true labels; the student is the teachers' learner trained on "
        "the answered public rows (⊥ dropped) and tested on the held-out rows. Guarantee: the largest "
        "(ε, δ) any run reported (data-independent). The last column is NOT a privacy guarantee: "
        + "; ".join(dd) + ". Non-private references: mean teacher accuracy on the public rows "
        f"{data['teacher_acc']:.3f}; the teachers' plurality vote agrees with the true labels on "
        f"{data['plurality_acc']:.3f} of the queries; a student on all {args.m:,} true public labels "
        f"reaches {data['nonprivate_student']:.3f}."
    )
    sections = [params, common.markdown_table(cols, rows)]

    def mean_of(eps: float, name: str, key: str) -> float:
        values = [x[key] for x in data["cells"][(eps, name)]["runs"]]
        if not values and key == "correct":
            return 0.0
        finite = [v for v in values if v is not None and np.isfinite(v)]
        return float(np.mean(finite)) if finite else float("nan")

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    eps = np.array(args.epsilons)
    for name in names:
        cor = np.array([mean_of(e, name, "correct") for e in eps])
        acc = np.array([mean_of(e, name, "student") for e in eps])
        ax1.plot(eps, cor, marker="o", label=name)
        ax2.plot(eps, acc, marker="o", label=name)
    ax1.set_xscale("log")
    ax1.set_yscale("symlog", linthresh=10)
    ax1.set_ylim(bottom=0)
    ax1.set_xlabel("target ε (δ = %g)" % args.delta)
    ax1.set_ylabel(f"correct answers (of {args.m:,}; linear below 10)")
    ax1.set_title(f"Correct labels released, k = {args.k:,}")
    ax1.legend(fontsize=8)
    ax2.axhline(data["nonprivate_student"], color="grey", ls="--", lw=1, label="student on true labels (non-private)")
    ax2.set_xscale("log")
    ax2.set_xlabel("target ε (δ = %g)" % args.delta)
    ax2.set_ylabel("student test accuracy")
    ax2.set_title("Student trained on the released labels")
    ax2.legend(fontsize=8)
    return sections, fig


main = common.experiment(NAME, TITLE, build_parser, run, report, QUICK)


if __name__ == "__main__":
    common.run_main(main)
