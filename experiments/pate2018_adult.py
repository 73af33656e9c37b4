"""PATE 2018's UCI Adult row: Confident-GNMax with 250 random-forest teachers, 1,500 queries.

PATE 2018 (Papernot, Song, Mironov, Raghunathan, Talwar, Erlingsson, ICLR 2018), Table 2,
Adult: 250 teachers, Confident-GNMax with threshold t = 300, σ1 = 200, σ2 = 40 on 1,500
queries, δ = 1e-5; reported 524 queries answered, a student at 83.7% (non-private 85.0%)
and a data-dependent ε = 2.66.

Here, with the bundled Adult (``adult_train`` as the private rows, missing cells imputed
inside each teacher's pipeline by default): 250 random-forest teachers (100 trees,
``core.pipeline.train``); the first 1,500 rows of ``adult_test`` are the queries and its
last 11,282 rows the student's evaluation set (as in PATE 2017's Appendix C). Every
mechanism runs through ``core.pipeline.label`` by its registry name:

* ``confident-gnmax`` at (t, σ1, σ2, δ): answered, correct, the data-independent
  guarantee (the registry's privacy map: every query charged the threshold test and the
  answer), and the data-dependent ε of PATE 2018's analysis
  (``core.accounting.confident_gnmax_epsilon_data_dependent``, a NON-PRIVATE diagnostic);
* ``certified-gnmax`` at Confident-GNMax's data-independent (ε, δ) and the same t: a
  guarantee for every dataset that pays for the data-dependent analysis with a private
  test; the test may fail (then no label is released), and the table says so.

A random-forest student (``core.pipeline.student``, ⊥ rows dropped) is trained on each
labeling.  One run trains the teachers once; ``--runs 5`` repeats the whole run with
fresh seeds (about 90 s a run on two cores).

Run:  python experiments/pate2018_adult.py --runs 5
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
from core.accounting.data_dependent import confident_gnmax_epsilon_data_dependent  # noqa: E402
from core.errors import ParameterError  # noqa: E402
from core.mechanisms.stability import plurality  # noqa: E402

NAME = "pate2018_adult"
TITLE = "PATE 2018's Adult row: Confident-GNMax and its certified version"


def build_parser() -> argparse.ArgumentParser:
    p = common.parser(NAME, __doc__.split("\n\n")[0])
    p.add_argument("--k", type=common.positive_int, default=250, help="number of teachers (PATE 2018: 250)")
    p.add_argument("--trees", type=common.positive_int, default=100, help="trees per random forest")
    p.add_argument("--n-queries", type=common.positive_int, default=1500, help="queries: the first test rows (PATE 2018: 1,500)")
    p.add_argument("--n-eval", type=common.positive_int, default=11_282, help="evaluation rows: the last test rows")
    p.add_argument("--threshold", type=common.positive_float, default=300.0, help="threshold t (PATE 2018: 300)")
    p.add_argument("--sigma1", type=common.positive_float, default=200.0, help="threshold noise σ1 (PATE 2018: 200)")
    p.add_argument("--sigma2", type=common.positive_float, default=40.0, help="answer noise σ2 (PATE 2018: 40)")
    p.add_argument("--delta", type=common.probability, default=1e-5, help="δ (PATE 2018: 1e-5)")
    p.add_argument("--missing", choices=("impute", "drop"), default="impute", help="Adult's missing cells")
    p.add_argument("--runs", type=common.positive_int, default=5, help="whole runs (teachers, mechanisms, students)")
    return p


QUICK = {"k": 10, "trees": 5, "n_queries": 150, "n_eval": 1000, "threshold": 12.0, "sigma1": 8.0,
         "sigma2": 1.6, "runs": 1}


def summary(res, split, trees: int, rng) -> dict:
    answered = res.labels >= 0
    return {
        "answered": res.n_answered, "bottom": res.n_bottom, "unprocessed": res.n_unprocessed,
        "correct": int(np.count_nonzero(res.labels[answered] == split.y_public[answered])),
        "eps": res.epsilon, "delta": res.delta, "feasible": res.feasible, "reason": res.reason,
        "eps_dd": res.epsilon_data_dependent,
        "student": common.forest_student_accuracy(split, res, trees, rng),
    }


def run(args) -> dict:
    split = common.adult_split(args.n_queries, args.n_eval, args.missing)
    out = {"n_private": split.table.n_rows, "runs": [],
           "nonprivate_acc": common.nonprivate_forest_accuracy(split, args.trees, args.seed)}
    conf = {"threshold": args.threshold, "sigma1": args.sigma1, "sigma2": args.sigma2, "delta": args.delta}
    for r in range(args.runs):
        timer = common.Timer()
        teachers = common.forest_teachers(split, args.k, args.trees, args.seed, args.n_jobs, r)
        votes = pipeline.mechanism_inputs("confident-gnmax", teachers, split.table, split.X_public)
        X_pub = pipeline.model_input(split.table, split.X_public)
        one = {
            "teacher_acc": float(np.mean(teachers.predictions(X_pub) == split.y_public[:, None])),
            "plurality_acc": float(np.mean(plurality(votes) == split.y_public)),
            "seconds": timer.elapsed,
        }
        res = pipeline.label(votes, "confident-gnmax", conf, rng=common.rng_for(args.seed, 3, r))
        one["confident"] = summary(res, split, args.trees, common.rng_for(args.seed, 6, r, 0))
        one["confident"]["eps_dd"] = confident_gnmax_epsilon_data_dependent(
            votes, threshold=args.threshold, sigma1=args.sigma1, sigma2=args.sigma2, delta=args.delta,
            answered=res.labels >= 0)
        eps, delta = res.epsilon, res.delta
        try:
            cert = pipeline.label(votes, "certified-gnmax", {"epsilon": eps, "delta": delta, "threshold": args.threshold},
                                  rng=common.rng_for(args.seed, 4, r))
            one["certified"] = summary(cert, split, args.trees, common.rng_for(args.seed, 6, r, 1))
        except ParameterError as exc:  # no feasible certification at this (ε, δ)
            one["certified"] = {"error": str(exc), "eps": eps, "delta": delta}
        out["runs"].append(one)
        c = one["confident"]
        print(f"run {r + 1}: teachers {one['seconds']:.0f} s; confident-gnmax answered {c['answered']}, correct "
              f"{c['correct']}, ε = {eps:.3f} (data-dependent {c['eps_dd']:.3f}), student {c['student']:.3f}; "
              f"certified-gnmax: {one['certified'].get('error') or one['certified']['answered']}", flush=True)
    return out


def report(args, data: dict) -> tuple[list[str], Any]:
    runs = data["runs"]
    m = args.n_queries
    rows = [["non-private random forest on all private rows", "∞", "—", "—", "—", "—", "—", "—", "—",
             f"{data['nonprivate_acc']:.3f}"]]

    def row(label: str, cells: list[dict], dd_note: str) -> list[str]:
        ok = [c for c in cells if "error" not in c]
        if not ok:
            return [label, f"{cells[0]['eps']:.3g} (target)", f"{cells[0]['delta']:.2g}", "not run: "
                    + cells[0]["error"].replace("|", "/"), "0", "0", "0", "—", f"{m:,}", "—"]
        failed = sum(not c["feasible"] for c in ok)
        status = f"test failed in {failed} of {len(ok)} runs: no label released" if failed else "passed"
        return [
            label, f"{max(c['eps'] for c in ok):.3g}", f"{max(c['delta'] for c in ok):.2g}",
            (common.mean_sd([c["eps_dd"] for c in ok], 2) + dd_note) if any(c["eps_dd"] is not None for c in ok)
            else (status if label.startswith("certified") else "—"),
            common.mean_sd([c["answered"] for c in ok], 0), common.mean_sd([c["correct"] for c in ok], 0),
            common.mean_sd([c["answered"] - c["correct"] for c in ok], 0),
            common.mean_sd([c["bottom"] for c in ok], 0), common.mean_sd([c["unprocessed"] for c in ok], 0),
            common.mean_sd([c["student"] for c in ok], 3),
        ]

    rows.append(row(f"confident-gnmax, t = {args.threshold:g}, σ1 = {args.sigma1:g}, σ2 = {args.sigma2:g}",
                    [x["confident"] for x in runs], ""))
    cert = [x["certified"] for x in runs]
    rows.append(row("certified-gnmax at Confident-GNMax's (ε, δ), same t", cert,
                    " (" + ("passed" if all(c.get("feasible") for c in cert) else "some tests failed") + ")"))
    cols = ["labels from", "ε (guarantee, every dataset)", "δ", "data-dependent ε (NON-PRIVATE diagnostic) / certification",
            f"answered (of {m:,})", "correct", "wrong", "⊥", "not processed",
            f"student accuracy (last {args.n_eval:,} test rows)"]
    params = (
        f"UCI Adult (bundled, missing cells: {args.missing}): {data['n_private']:,} private training rows, "
        f"k = {args.k} random-forest teachers ({args.trees} trees) on disjoint chunks (mean teacher accuracy on "
        f"the queries {common.mean_sd([x['teacher_acc'] for x in runs], 3)}; their plurality vote is right on "
        f"{common.mean_sd([x['plurality_acc'] for x in runs], 3)} of them, non-private); the first {m:,} rows of "
        f"`adult_test` are the queries and its last {args.n_eval:,} rows the evaluation set; δ = {args.delta:g}. "
        "Confident-GNMax's guarantee is the registry's data-independent privacy map (every query charged the "
        "threshold test and an answer). Its data-dependent ε is PATE 2018's analysis of these votes "
        "(`core.accounting.confident_gnmax_epsilon_data_dependent`): NOT a privacy guarantee. "
        "certified-gnmax is run at Confident-GNMax's data-independent (ε, δ): a guarantee for every dataset; its "
        "private test may fail, then nothing is released (all queries 'not processed'). "
        f"{args.runs} run(s) (teachers, noise and students re-seeded per run; mean ± sd over runs)."
    )
    c = [x["confident"] for x in runs]
    reading = (
        "PATE 2018 (Table 2, Adult): 524 of 1,500 queries answered, student 83.7% (non-private 85.0%), "
        f"data-dependent ε = 2.66 at δ = 1e-5. Here: {common.mean_sd([x['answered'] for x in c], 0)} answered, "
        f"student {common.mean_sd([x['student'] for x in c], 3)} against the non-private "
        f"{data['nonprivate_acc']:.3f}; data-dependent ε {common.mean_sd([x['eps_dd'] for x in c], 2)} "
        f"(non-private), while the data-independent guarantee is ε = {c[0]['eps']:.3g}."
    )
    sections = [params, common.markdown_table(cols, rows), reading]

    fig, ax = plt.subplots(figsize=(7, 4.2))
    vals = [data["nonprivate_acc"], float(np.nanmean([x["student"] for x in c]))]
    ok = [x for x in cert if "error" not in x and np.isfinite(x["student"])]
    vals.append(float(np.mean([x["student"] for x in ok])) if ok else 0.0)
    ax.bar(range(3), vals, color=["grey", "tab:orange", "tab:blue"])
    ax.set_xticks(range(3))
    ax.set_xticklabels(["non-private\nforest", "confident-gnmax", "certified-gnmax"], fontsize=9)
    ax.set_ylabel(f"student accuracy (last {args.n_eval:,} test rows)")
    ax.set_ylim(0, 1)
    ax.set_title(f"Adult: k = {args.k} forests, {m:,} queries, data-independent ε = {c[0]['eps']:.3g} "
                 "(0 = nothing released)", fontsize=9)
    return sections, fig


main = common.experiment(NAME, TITLE, build_parser, run, report, QUICK)


if __name__ == "__main__":
    common.run_main(main)
