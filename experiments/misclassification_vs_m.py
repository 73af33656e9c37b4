"""Misclassification rate and ⊥ count of BTT against m, next to Theorem 3.2's bound T/m.

BTT Theorem 3.2: with the cutoff ``T = 3((γ+α)m + sqrt((γ+α) m log(m/β)/2))``
(``core.theory.cutoff_T``) and an (α, β/k, n/k) agnostic PAC learner, with probability at
least 1 − 2β the algorithm answers all m queries with at most T ⊥, and its
misclassification rate is at most T/m (``core.theory.misclassification_bound``).  Here T is
fixed (it fixes the privacy cost) and m grows: the experiment shows the measured ⊥ count,
the error rate on answered queries and the misclassification rate (wrong answers, ⊥ and
unprocessed queries, over m) next to T/m, and marks for which m the fixed T is at least the
cutoff the theorem asks for.

Setting: halfspaces in d dimensions with label noise γ (γ is then the best error of the
class); k logistic-regression teachers on disjoint chunks; BTT with the tight calibration
(registry name ``btt`` through ``core.pipeline.label``) calibrated for each m; every repeat draws fresh public
queries and fresh mechanism noise (same teachers).  α for the theorem is the largest
teacher error on a held-out sample minus γ (the theorem needs every teacher within γ + α).

Run:  python experiments/misclassification_vs_m.py      (about a minute on two cores)
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
from core.theory import cutoff_T, misclassification_bound  # noqa: E402

NAME = "misclassification_vs_m"
TITLE = "Misclassification rate and ⊥ count vs m, against Theorem 3.2"


def build_parser() -> argparse.ArgumentParser:
    p = common.parser(NAME, __doc__.split("\n\n")[0])
    p.add_argument("--m-grid", type=common.number_list(int, "number of queries", low=1, increasing=True), default=[50, 100, 200, 500, 1000, 2000, 5000],
                   help="numbers of public queries m, comma separated")
    p.add_argument("--noise", type=float, default=0.0, help="label noise γ in [0, 0.5)")
    p.add_argument("--d", type=common.positive_int, default=5, help="dimension of the halfspace")
    p.add_argument("--k", type=common.positive_int, default=1000, help="number of teachers")
    p.add_argument("--rows-per-teacher", type=common.positive_int, default=1000, help="private rows per teacher")
    p.add_argument("--epsilon", type=common.positive_float, default=8.0, help="target ε")
    p.add_argument("--delta", type=common.probability, default=1e-6, help="target δ")
    p.add_argument("--T", type=common.positive_int, default=20, help="the fixed cutoff (number of ⊥)")
    p.add_argument("--beta", type=common.probability, default=0.05, help="failure probability β of Theorem 3.2")
    p.add_argument("--repeats", type=common.positive_int, default=5, help="runs (fresh queries and noise) per m")
    p.add_argument("--holdout", type=common.positive_int, default=10000, help="held-out rows measuring the teachers' error")
    return p


QUICK = {"m_grid": [20, 50, 100], "k": 200, "rows_per_teacher": 100, "T": 3, "repeats": 2, "holdout": 1000}


def run(args) -> dict:
    """Train the teachers once, then run BTT for every m and repeat."""
    if not 0.0 <= args.noise < 0.5:
        raise SystemExit("error: --noise must lie in [0, 0.5).")
    m_max = args.m_grid[-1]
    task = common.halfspace_task(args.k * args.rows_per_teacher, args.holdout + args.repeats * m_max,
                                 args.d, args.noise, args.seed)
    teachers = common.logistic_teachers(task, args.k, args.seed, args.n_jobs)
    # non-private diagnostics: every teacher's error on held-out rows (noisy labels)
    X_hold, y_hold = task.X_public[: args.holdout], task.y_public[: args.holdout]
    errors = (teachers.predictions(X_hold) != y_hold[:, None]).mean(axis=0)
    gamma = args.noise
    alpha = max(0.0, float(errors.max()) - gamma)
    X_q, y_q = task.X_public[args.holdout:], task.y_public[args.holdout:]
    votes = teachers.vote_counts(X_q)

    rows = []
    for i, m in enumerate(args.m_grid):
        runs = []
        for r in range(args.repeats):
            sl = slice(r * m_max, r * m_max + m)
            res = pipeline.label(votes[sl], "btt", {"epsilon": args.epsilon, "delta": args.delta, "T": args.T,
                                                     "calibration": "tight", "beta": args.beta},
                                 rng=common.rng_for(args.seed, 3, i, r))
            if res.epsilon > args.epsilon * (1 + 1e-9) or res.delta > args.delta * (1 + 1e-9):
                raise RuntimeError(f"btt reported ({res.epsilon:g}, {res.delta:g}) above the target.")
            answered = res.answered
            wrong = int(np.count_nonzero(res.labels[answered] != y_q[sl][answered]))
            runs.append({
                "bottom": res.n_bottom, "unprocessed": res.n_unprocessed, "halted": res.halted_at is not None,
                "err_answered": wrong / res.n_answered if res.n_answered else float("nan"),
                "miscls": (wrong + res.n_bottom + res.n_unprocessed) / m,
                "threshold": res.params["threshold"],
            })
        rows.append({"m": m, "runs": runs,
                     "T_thm": float(cutoff_T(gamma, alpha, m, args.beta)),
                     "bound_thm": float(misclassification_bound(gamma, alpha, m, args.beta))})
        print(f"m = {m}: ⊥ {np.mean([x['bottom'] for x in runs]):.1f}, misclassification "
              f"{np.mean([x['miscls'] for x in runs]):.4f}, T/m = {args.T / m:.4f}", flush=True)
    return {"rows": rows, "alpha": alpha, "teacher_errors": errors, "gamma": gamma}


def report(args, data: dict) -> tuple[list[str], Any]:
    rows = data["rows"]
    table = []
    for row in rows:
        runs, m = row["runs"], row["m"]
        bound = args.T / m
        miscls = [x["miscls"] for x in runs]
        table.append([
            f"{m:,}", f"{row['T_thm']:.1f}", "yes" if args.T >= row["T_thm"] else "no",
            common.mean_sd([x["bottom"] for x in runs], 1),
            common.mean_sd([x["unprocessed"] for x in runs], 0),
            f"{sum(x['halted'] for x in runs)}/{len(runs)}",
            common.mean_sd([x["err_answered"] for x in runs], 4),
            common.mean_sd(miscls, 4), f"{bound:.4f}",
            f"{sum(v <= bound for v in miscls)}/{len(runs)}",
            f"{row['bound_thm']:.4f}",
        ])
    cols = ["m", "T required by Thm 3.2", f"T = {args.T} ≥ required?", "⊥ count", "not processed",
            "runs halted", "error rate on answered", "misclassification rate (wrong + ⊥ + not processed)/m",
            f"bound T/m (T = {args.T})", "runs within T/m", "Thm 3.2 bound with its own T"]
    errs = data["teacher_errors"]
    params = (
        f"Halfspaces in d = {args.d} with label noise γ = {args.noise:g}; k = {args.k:,} logistic-regression "
        f"teachers, {args.rows_per_teacher:,} private rows each. BTT tight calibration at (ε, δ) = "
        f"({args.epsilon:g}, {args.delta:g}) with the fixed cutoff T = {args.T}, calibrated for each m; "
        f"{args.repeats} runs per m, each with fresh public queries and fresh noise (mean ± sd). "
        f"Teachers' error on {args.holdout:,} held-out rows (non-private diagnostic): mean {errs.mean():.4f}, "
        f"largest {errs.max():.4f}, so α = largest − γ = {data['alpha']:.4f} for Theorem 3.2 "
        f"(β = {args.beta:g}). Errors are counted against the public rows' own labels"
        + (f" (which carry the label noise γ = {args.noise:g}). " if args.noise > 0 else " (noise-free here). ")
        + f"Theorem 3.2 also assumes BTT's recommended number of teachers (Alg. 2, line 1), "
        f"far more than k = {args.k:,}; the tight calibration makes this k enough to answer."
    )
    ok = [r["m"] for r in rows if args.T >= r["T_thm"]]
    within = []  # the m before the first one with a run above T/m
    for r in rows:
        if not all(x["miscls"] <= args.T / r["m"] for x in r["runs"]):
            break
        within.append(r["m"])
    first_out = next((r for r in rows if not all(x["miscls"] <= args.T / r["m"] for x in r["runs"])), None)
    halted = [r["m"] for r in rows if any(x["halted"] for x in r["runs"])]
    parts = [
        f"Reading: the fixed T = {args.T} meets Theorem 3.2's cutoff for "
        + (f"m ≤ {max(ok):,}, where the theorem promises a misclassification rate of at most T/m."
           if ok else "none of these m, so the theorem promises nothing here."),
        (f"Every run is within T/m for m ≤ {max(within):,}." if within else "No m has every run within T/m."),
    ]
    if first_out is not None:
        m0 = first_out["m"]
        err = np.nanmean([x["err_answered"] for x in first_out["runs"]])
        if any(x["halted"] for x in first_out["runs"]):
            parts.append(f"From m = {m0:,} some runs exceed it: the ⊥ count reaches T, BTT halts and the "
                         "queries it did not process count as misclassified.")
        else:
            parts.append(f"From m = {m0:,} some runs exceed it: the wrong answers alone (error rate "
                         f"{err:.3f} on answered, about the label noise γ) are more than T/m; Theorem 3.2's "
                         "cutoff grows like 3(γ + α)m for this reason.")
        if halted and halted[0] != m0:
            parts.append(f"BTT halts from m = {halted[0]:,} on.")
    parts.append("The theorem's cutoff is conservative (a factor 3 and a Chernoff term): the measured ⊥ "
                 "counts stay far below it"
                 + (", and the bound holds beyond the m where the theorem guarantees it."
                    if ok and within and max(within) > max(ok) else "."))
    reading = " ".join(parts)
    sections = [params, common.markdown_table(cols, table), reading]

    ms = np.array([r["m"] for r in rows], dtype=float)

    def stat(key):
        """Mean over runs and the distance down to the smallest and up to the largest run."""
        v = np.array([[x[key] for x in r["runs"]] for r in rows], dtype=float)
        mean = np.nanmean(v, axis=1)
        return mean, np.vstack([mean - np.nanmin(v, axis=1), np.nanmax(v, axis=1) - mean])

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    mis, mis_bar = stat("miscls")
    err, err_bar = stat("err_answered")
    ax1.plot(ms, args.T / ms, "k--", label=f"bound T/m (T = {args.T})")
    ax1.plot(ms, [r["bound_thm"] for r in rows], "k:", label="Thm 3.2 bound with its own T")
    ax1.errorbar(ms, mis, yerr=mis_bar, marker="o", capsize=3, label="misclassification rate (wrong + ⊥ + not processed)/m")
    ax1.errorbar(ms, err, yerr=err_bar, marker="s", capsize=3, label="error rate on answered")
    ax1.set_xscale("log")
    ax1.set_yscale("symlog", linthresh=1e-3)
    ax1.set_ylim(bottom=0)
    ax1.set_xlabel("number of queries m")
    ax1.set_ylabel("rate (linear below 0.001)")
    ax1.set_title(f"BTT tight, (ε, δ) = ({args.epsilon:g}, {args.delta:g}), k = {args.k:,}; bars: min–max of runs",
                  fontsize=9)
    ax1.legend(fontsize=7)
    bot, bot_bar = stat("bottom")
    unp, unp_bar = stat("unprocessed")
    ax2.errorbar(ms, bot, yerr=bot_bar, marker="o", capsize=3, label="⊥ count")
    ax2.errorbar(ms, unp, yerr=unp_bar, marker="s", capsize=3, label="not processed")
    ax2.axhline(args.T, color="k", ls="--", lw=1, label=f"cutoff T = {args.T}")
    ax2.plot(ms, [r["T_thm"] for r in rows], "k:", label="T required by Thm 3.2")
    ax2.set_xscale("log")
    ax2.set_yscale("symlog", linthresh=1)
    ax2.set_ylim(bottom=0)
    ax2.set_xlabel("number of queries m")
    ax2.set_ylabel("queries (linear below 1)")
    ax2.set_title("⊥ and unprocessed queries; bars: min–max of runs", fontsize=9)
    ax2.legend(fontsize=8)
    return sections, fig


main = common.experiment(NAME, TITLE, build_parser, run, report, QUICK)


if __name__ == "__main__":
    common.run_main(main)
