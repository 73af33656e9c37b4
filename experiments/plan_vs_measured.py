"""The plan against real runs: predicted and measured answered and correct counts.

The plan (``core.plan.predict``) simulates votes under a public teacher-quality
assumption and runs the real registered mechanisms on them.  Here the assumption is
CALIBRATED FROM THE NON-PRIVATE MEASURED TEACHER ACCURACY of the real teachers on the
public rows (for this check only: a real job plans from an assumption, or from a priced
private estimate), and the predictions are compared with the same mechanisms run on the
real votes, for GNMax, Confident-GNMax and BTT at ε ∈ {1, 2, 4}:

* the project's standard benchmark: realizable halfspaces in d = 20, 200,000 private
  rows, k = 250 logistic-regression teachers, m = 2,000 public queries, δ = 1e-5;
* UCI Adult (bundled, rows with a missing cell dropped): ``adult_train`` as the private
  rows, k = 250 logistic-regression teachers, the first 2,000 rows of ``adult_test`` as
  the public queries, δ = 1e-5.

Two calibrations of :class:`core.plan.TeacherQuality` from the per-query share ``s_i`` of
teachers voting for the true class (NON-PRIVATE):

* *one accuracy*: ``accuracy = mean(s_i)``, no hard queries;
* *easy/hard*: a cut ``c`` splits the queries into easy (``s_i ≥ c``) and hard ones; the
  accuracies are the two groups' means, the hard share the second group's size, and the
  hard queries' spread (``hard_spread``, a uniform's half-width) follows from their
  variance net of the binomial vote noise; ``c`` is the one (on a grid) whose simulated
  vote shares are closest to the measured ones in Kolmogorov–Smirnov distance.

The class shares are the public rows' (NON-PRIVATE).  BTT's cutoff is, per ε, the largest
T whose calibrated threshold is at most k/4 (public quantities only).  Measured: mean ±
sd over ``--repeats`` runs of each mechanism's noise; predicted: mean ± sd over
``--draws`` simulated runs.  A prediction is *within tolerance* when it is within
``--tolerance`` × m of the measured mean (default 5% of m: 100 of 2,000 queries).

Run:  python experiments/plan_vs_measured.py
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as common  # noqa: E402
from _common import plt  # noqa: E402

from core import pipeline  # noqa: E402
from core.plan import TeacherQuality, predict, simulate_votes  # noqa: E402

NAME = "plan_vs_measured"
MECHANISMS = ("gnmax", "confident-gnmax", "btt")


def build_parser() -> argparse.ArgumentParser:
    p = common.parser(NAME, __doc__.split("\n\n")[0])
    p.set_defaults(out=common.ROOT / "experiments" / "out")
    p.add_argument("--datasets", type=lambda t: [x.strip() for x in t.split(",") if x.strip()],
                   default=["halfspaces", "adult"], help="halfspaces and/or adult")
    p.add_argument("--epsilons", type=common.number_list(float, "ε", low=0.0, low_open=True, increasing=True),
                   default=[1.0, 2.0, 4.0], help="target ε of every run")
    p.add_argument("--delta", type=common.probability, default=1e-5, help="δ of every run")
    p.add_argument("--k", type=common.positive_int, default=250, help="number of teachers")
    p.add_argument("--m", type=common.positive_int, default=2000, help="public queries")
    p.add_argument("--n-private", type=common.positive_int, default=200_000, help="halfspaces: private rows")
    p.add_argument("--d", type=common.positive_int, default=20, help="halfspaces: dimension")
    p.add_argument("--repeats", type=common.positive_int, default=10, help="runs of each mechanism's noise (measured)")
    p.add_argument("--draws", type=common.positive_int, default=20, help="simulated runs per prediction")
    p.add_argument("--tolerance", type=common.probability, default=0.05, help="tolerance as a share of m")
    return p


QUICK = {"k": 40, "m": 200, "n_private": 8_000, "repeats": 3, "draws": 5}


def calibrate(share: np.ndarray, k: int, class_shares, seed: int) -> tuple[TeacherQuality, TeacherQuality, float]:
    """NON-PRIVATE: the one-accuracy and easy/hard qualities fitted to per-query correct shares."""
    from scipy.stats import ks_2samp

    one = TeacherQuality(accuracy=float(share.mean()), hard_share=0.0, class_shares=class_shares)
    best, best_d, cut = one, float("inf"), float("nan")
    for c in np.linspace(0.5, 0.975, 20):
        hard = share < c
        if not hard.any() or hard.all():
            continue
        mu = float(share[hard].mean())
        # the spread of the hard queries' accuracy (uniform: half-width √3·sd) net of the binomial vote noise
        var = max(float(share[hard].var()) - mu * (1 - mu) / k, 0.0)
        q = TeacherQuality(accuracy=float(share[~hard].mean()), hard_share=float(hard.mean()), hard_accuracy=mu,
                           hard_spread=float(min(np.sqrt(3.0 * var), mu, 1.0 - mu)), class_shares=class_shares)
        sim = simulate_votes(m=20_000, k=k, n_classes=2, quality=q, rng=seed)
        sim_share = sim.counts[np.arange(20_000), sim.truth] / k
        d = ks_2samp(sim_share, share).statistic
        if d < best_d:
            best, best_d, cut = q, d, float(c)
    return one, best, cut


def dataset(name: str, args):
    """(votes, truth, n_private, description) of one dataset, teachers trained once."""
    if name == "halfspaces":
        task = common.halfspace_task(args.n_private, args.m, args.d, 0.0, args.seed)
        teachers = common.logistic_teachers(task, args.k, args.seed, args.n_jobs)
        votes = np.asarray(teachers.vote_counts(task.X_public))
        return votes, task.y_public, args.n_private, (
            f"halfspaces, d = {args.d}, {args.n_private:,} private rows, k = {args.k} logistic-regression teachers, "
            f"m = {args.m:,}")
    if name == "adult":
        split = common.adult_split(args.m, 100, "drop")
        teachers = pipeline.train(split.table, "logistic_regression", {}, args.k, rng=common.rng_for(args.seed, 2),
                                  n_jobs=args.n_jobs)
        votes = pipeline.mechanism_inputs("gnmax", teachers, split.table, split.X_public)
        return np.asarray(votes), split.y_public, split.table.n_rows, (
            f"UCI Adult (rows with a missing cell dropped), {split.table.n_rows:,} private rows, k = {args.k} "
            f"logistic-regression teachers, the first {args.m:,} rows of adult_test")
    raise SystemExit(f"error: unknown dataset {name!r}; choose halfspaces or adult.")


def settings_for(mech: str, eps: float, args) -> dict:
    s = {"epsilon": eps, "delta": args.delta}
    if mech == "btt":
        s.update(T=common.auto_cutoff(eps, args.delta, args.m, args.k), calibration="tight")
    return s


def run(args) -> dict:
    out = {"datasets": []}
    for d_i, name in enumerate(args.datasets):
        timer = common.Timer()
        votes, truth, n_private, words = dataset(name, args)
        k = int(votes[0].sum())
        share = votes[np.arange(len(truth)), truth] / k
        class_shares = tuple(np.bincount(truth, minlength=2) / len(truth))
        one, two, cut = calibrate(share, k, class_shares, args.seed)
        rows = []
        for mech in MECHANISMS:
            for eps in args.epsilons:
                s = settings_for(mech, eps, args)
                answered, correct = [], []
                for r in range(args.repeats):
                    res = pipeline.label(votes, mech, s, rng=common.rng_for(args.seed, 3, d_i, r))
                    answered.append(res.n_answered)
                    correct.append(int(np.sum(res.labels == truth)))
                preds = {label: predict(mech, s, n=n_private, m=len(truth), k=k, n_classes=2, quality=q,
                                        draws=args.draws, rng=args.seed, advise=False)
                         for label, q in (("two", two), ("one", one))}
                rows.append({"mechanism": mech, "epsilon": eps, "T": s.get("T"),
                             "answered": np.array(answered), "correct": np.array(correct), "pred": preds})
        out["datasets"].append({"name": name, "words": words, "k": k, "m": len(truth), "n_private": n_private,
                                "teacher_acc": float(share.mean()), "one": one, "two": two, "cut": cut, "rows": rows,
                                "seconds": timer.elapsed})
        print(f"{name}: {timer.elapsed:.0f} s", flush=True)
    return out


def report(args, data: dict, argv: Sequence[str] | None, timer: common.Timer) -> None:
    sections = []
    cols = ["dataset", "mechanism", "ε", "measured answered", "predicted answered (easy/hard)",
            "predicted answered (one accuracy)", "measured correct", "predicted correct (easy/hard)",
            "predicted correct (one accuracy)", "within tolerance (easy/hard)"]
    table, held, total = [], 0, 0
    for ds in data["datasets"]:
        tol = args.tolerance * ds["m"]
        for r in ds["rows"]:
            two, one = r["pred"]["two"], r["pred"]["one"]
            ok_a = abs(two.answered - r["answered"].mean()) <= tol
            ok_c = abs(two.correct - r["correct"].mean()) <= tol
            held += int(ok_a and ok_c)
            total += 1
            mech = r["mechanism"] + (f" (T = {r['T']})" if r["T"] is not None else "")
            table.append([ds["name"], mech, f"{r['epsilon']:g}", common.mean_sd(r["answered"], 0),
                          f"{two.answered:.0f} ± {two.answered_sd:.0f}", f"{one.answered:.0f} ± {one.answered_sd:.0f}",
                          common.mean_sd(r["correct"], 0), f"{two.correct:.0f} ± {two.correct_sd:.0f}",
                          f"{one.correct:.0f} ± {one.correct_sd:.0f}",
                          "yes" if ok_a and ok_c else f"NO ({'answered' if not ok_a else ''}"
                          f"{', ' if not ok_a and not ok_c else ''}{'correct' if not ok_c else ''})"])
    setup = []
    for ds in data["datasets"]:
        two = ds["two"]
        setup.append(
            f"**{ds['name']}**: {ds['words']}; δ = {args.delta:g}. Mean teacher accuracy on the public rows "
            f"{ds['teacher_acc']:.3f} (NON-PRIVATE). Calibrated assumption (NON-PRIVATE, for this check only): "
            f"easy/hard cut {ds['cut']:.3f}: {two.describe()}; one accuracy: {ds['one'].accuracy:.3f}. "
            f"Teachers and votes: {ds['seconds']:.0f} s.")
    sections.append(" ".join([__doc__.split("\n\n")[1].replace("\n", " ")]))
    sections.extend(setup)
    sections.append(common.markdown_table(cols, table))
    sections.append(
        f"Within tolerance (answered and correct both within {args.tolerance:.0%} of m of the measured mean, "
        f"easy/hard calibration): {held} of {total} rows. Measured: {args.repeats} runs of each mechanism's noise "
        f"on the same real votes; predicted: {args.draws} simulated runs (each on its own simulated votes).")
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    for ax, what in zip(axes, ("answered", "correct")):
        for ds, marker in zip(data["datasets"], "os^"):
            meas = [r[what].mean() for r in ds["rows"]]
            pred = [getattr(r["pred"]["two"], what) for r in ds["rows"]]
            ax.scatter(meas, pred, marker=marker, label=ds["name"])
        hi = max(ds["m"] for ds in data["datasets"])
        ax.plot([0, hi], [0, hi], color="grey", lw=1)
        ax.fill_between([0, hi], [-args.tolerance * hi, (1 - args.tolerance) * hi],
                        [args.tolerance * hi, (1 + args.tolerance) * hi], color="grey", alpha=0.15)
        ax.set_xlabel(f"measured {what}")
        ax.set_ylabel(f"predicted {what} (easy/hard calibration)")
        ax.legend(fontsize=8)
    fig.tight_layout()
    common.write_outputs(args.out, NAME, "The plan against real runs (GNMax, Confident-GNMax, BTT)",
                         common.command_line(NAME, argv), sections, fig, timer.elapsed)


main = common.experiment(NAME, build_parser, run, report, QUICK)


if __name__ == "__main__":
    common.run_main(main)
