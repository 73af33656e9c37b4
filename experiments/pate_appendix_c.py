"""PATE 2017 Appendix C on UCI Adult: random-forest teachers, LNMax γ = 0.05, a random-forest student.

PATE (Papernot et al., ICLR 2017), Appendix C: 250 random-forest teachers (scikit-learn,
100 trees) on disjoint partitions of Adult's 32,561 training rows; LNMax with γ = 0.05
labels the first 500 test inputs; a random-forest student trained on those 500 labels is
evaluated on the last 11,282 test inputs (PATE: student 83% at a data-dependent
(ε, δ) = (2.66, 1e-5), non-private 85%).

Here, with the bundled Adult (``core.data.load_bundled("adult_train")`` / ``"adult_test"``,
missing cells imputed inside each teacher's pipeline by default): the teachers are trained
by ``core.pipeline.train``; every mechanism runs through ``core.pipeline.label`` by its
registry name:

* ``lnmax`` at γ = 0.05: its data-independent guarantee (the registry's privacy map) and
  PATE's data-dependent ε (``LabelingResult.epsilon_data_dependent``: a NON-PRIVATE
  diagnostic, since it depends on the votes);
* ``btt`` (tight calibration, cutoff T from public quantities: the largest T whose
  threshold is at most k/4) and ``baseline`` at LNMax's guaranteed (ε, δ);

a random-forest student (``core.pipeline.student``, ⊥ rows dropped) is trained on each
labeling and evaluated on the evaluation rows.  One run trains the teachers and runs each
mechanism once; ``--runs 5`` repeats the whole run with fresh teacher, noise and student
seeds (about 90 s a run on two cores).

Run:  python experiments/pate_appendix_c.py --runs 5
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as common  # noqa: E402
from _common import plt  # noqa: E402

from core import pipeline  # noqa: E402
from core.mechanisms.stability import plurality  # noqa: E402

NAME = "pate_appendix_c"
TITLE = "PATE 2017 Appendix C on UCI Adult: LNMax, BTT and the baseline, students"


def build_parser() -> argparse.ArgumentParser:
    p = common.parser(NAME, __doc__.split("\n\n")[0])
    p.add_argument("--k", type=common.positive_int, default=250, help="number of teachers (PATE: 250)")
    p.add_argument("--trees", type=common.positive_int, default=100, help="trees per random forest (PATE: 100)")
    p.add_argument("--n-public", type=common.positive_int, default=500, help="public queries: the first test rows (PATE: 500)")
    p.add_argument("--n-eval", type=common.positive_int, default=11_282, help="evaluation rows: the last test rows (PATE: 11,282)")
    p.add_argument("--gamma", type=common.positive_float, default=0.05, help="LNMax noise parameter γ (PATE: 0.05)")
    p.add_argument("--delta", type=common.probability, default=1e-5, help="δ (PATE: 1e-5)")
    p.add_argument("--missing", choices=("impute", "drop"), default="impute", help="Adult's missing cells")
    p.add_argument("--runs", type=common.positive_int, default=5, help="whole runs (teachers, mechanisms, students)")
    return p


QUICK = {"k": 10, "trees": 5, "n_public": 100, "n_eval": 1000, "runs": 1}

ROWS = ("lnmax", "btt", "baseline")


def run(args) -> dict:
    split = common.adult_split(args.n_public, args.n_eval, args.missing)
    out = {"n_private": split.table.n_rows, "runs": [],
           "nonprivate_acc": common.nonprivate_forest_accuracy(split, args.trees, args.seed)}
    for r in range(args.runs):
        timer = common.Timer()
        teachers = common.forest_teachers(split, args.k, args.trees, args.seed, args.n_jobs, r)
        votes = pipeline.mechanism_inputs("lnmax", teachers, split.table, split.X_public)
        X_pub = pipeline.model_input(split.table, split.X_public)
        one = {
            "teacher_acc": float(np.mean(teachers.predictions(X_pub) == split.y_public[:, None])),
            "plurality_acc": float(np.mean(plurality(votes) == split.y_public)),
            "seconds": timer.elapsed,
        }
        lnmax = pipeline.label(votes, "lnmax", {"gamma": args.gamma, "delta": args.delta},
                               rng=common.rng_for(args.seed, 3, r))
        eps, delta = lnmax.epsilon, lnmax.delta
        T = common.auto_cutoff(eps, delta, args.n_public, args.k)
        results = {
            "lnmax": lnmax,
            "btt": pipeline.label(votes, "btt", {"epsilon": eps, "delta": delta, "T": T, "calibration": "tight"},
                                  rng=common.rng_for(args.seed, 4, r)),
            "baseline": pipeline.label(votes, "baseline", {"epsilon": eps, "delta": delta},
                                       rng=common.rng_for(args.seed, 5, r)),
        }
        one["T"] = T
        for j, (name, res) in enumerate(results.items()):
            one[name] = {
                "answered": res.n_answered, "bottom": res.n_bottom, "unprocessed": res.n_unprocessed,
                "acc": common.accuracy(res.labels, split.y_public),
                "student": common.forest_student_accuracy(split, res, args.trees, common.rng_for(args.seed, 6, r, j)),
                "eps": res.epsilon, "delta": res.delta, "eps_dd": res.epsilon_data_dependent,
            }
        out["runs"].append(one)
        print(f"run {r + 1}: teachers {one['seconds']:.0f} s; LNMax ε = {eps:.3f} (data-dependent "
              f"{lnmax.epsilon_data_dependent}), student {one['lnmax']['student']:.3f}; BTT T = {T} answered "
              f"{one['btt']['answered']}; baseline answered {one['baseline']['answered']}", flush=True)
    return out


def report(args, data: dict) -> tuple[list[str], Any]:
    runs = data["runs"]
    n_pub = args.n_public
    label_of = {"lnmax": f"lnmax, γ = {args.gamma:g}", "btt": "btt (tight) at LNMax's (ε, δ), T = {T}",
                "baseline": "baseline at LNMax's (ε, δ)"}
    rows = [["non-private random forest on all private rows", "∞", "—", "—", "—", "—", "—", "—",
             f"{data['nonprivate_acc']:.3f}"],
            ["non-private: the teachers' plurality vote", "∞", "—", "—", f"{n_pub:,}", "—", "—",
             common.mean_sd([x["plurality_acc"] for x in runs], 3), "—"]]
    for name in ROWS:
        cells = [x[name] for x in runs]
        Ts = sorted({x["T"] for x in runs})
        rows.append([
            label_of[name].format(T="/".join(map(str, Ts))),
            f"{max(c['eps'] for c in cells):.3g}", f"{max(c['delta'] for c in cells):.2g}",
            common.mean_sd([c["eps_dd"] for c in cells], 2) if name == "lnmax" else "—",
            common.mean_sd([c["answered"] for c in cells], 0),
            common.mean_sd([c["bottom"] for c in cells], 0),
            common.mean_sd([c["unprocessed"] for c in cells], 0),
            common.mean_sd([c["acc"] for c in cells], 3),
            common.mean_sd([c["student"] for c in cells], 3),
        ])
    cols = ["labels from", "ε (data-independent guarantee)", "δ", "data-dependent ε (NON-PRIVATE diagnostic)",
            f"answered (of {n_pub:,})", "⊥", "not processed", "label accuracy on answered",
            f"student accuracy (last {args.n_eval:,} test rows)"]
    params = (
        f"UCI Adult (bundled, missing cells: {args.missing}): {data['n_private']:,} private training rows, "
        f"k = {args.k} random-forest teachers ({args.trees} trees) on disjoint chunks of about "
        f"{data['n_private'] // args.k} rows (mean teacher accuracy on the public rows "
        f"{common.mean_sd([x['teacher_acc'] for x in runs], 3)}, non-private); the first {n_pub:,} rows of "
        f"`adult_test` are the public queries and its last {args.n_eval:,} rows the evaluation set. LNMax at "
        f"γ = {args.gamma:g}, δ = {args.delta:g}; BTT (tight calibration, T the largest cutoff whose threshold "
        f"is at most k/4) and the advanced-composition baseline at LNMax's data-independent (ε, δ). "
        f"Random-forest students ({args.trees} trees) on the answered public rows. {args.runs} run(s) "
        "(teachers, noise and students re-seeded per run; mean ± sd over runs). The data-dependent ε is "
        "PATE's moments-accountant value computed from the votes: it is NOT a privacy guarantee."
    )
    lnmax = [x["lnmax"] for x in runs]
    reading = (
        "PATE 2017 reported on Adult a student at 83% for a data-dependent (ε, δ) = (2.66, 1e-5), next to "
        f"85% non-private. Here: student {common.mean_sd([c['student'] for c in lnmax], 3)} against the "
        f"non-private forest's {data['nonprivate_acc']:.3f}; LNMax's data-dependent ε "
        f"{common.mean_sd([c['eps_dd'] for c in lnmax], 2)} (non-private), while the guarantee that holds "
        f"for every dataset is ε = {lnmax[0]['eps']:.3g}."
    )
    sections = [params, common.markdown_table(cols, rows), reading]

    fig, ax = plt.subplots(figsize=(8, 4.2))
    names = ["non-private\nforest"] + [label_of[n].split(" at")[0].split(",")[0] for n in ROWS]
    vals = [data["nonprivate_acc"]] + [float(np.nan_to_num(np.nanmean([x[n]["student"] for x in runs])))
                                       if np.isfinite([x[n]["student"] for x in runs]).any() else 0.0 for n in ROWS]
    ax.bar(range(len(names)), vals, color=["grey", "tab:orange", "tab:blue", "tab:green"])
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, fontsize=9)
    ax.set_ylabel(f"student accuracy (last {args.n_eval:,} test rows)")
    ax.set_ylim(0, 1)
    ax.set_title(f"Adult: k = {args.k} forests, {n_pub} queries, ε = {lnmax[0]['eps']:.3g}, δ = {args.delta:g} "
                 "(0 = student not trainable)", fontsize=9)
    return sections, fig


main = common.experiment(NAME, TITLE, build_parser, run, report, QUICK)


if __name__ == "__main__":
    common.run_main(main)
