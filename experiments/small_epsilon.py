"""The best labels at small ε: every route on UCI Adult and the halfspaces benchmark, beside DP training.

Adult (bundled, missing cells imputed inside each teacher): ``adult_train`` is the private
table (32,561 rows); the first 1,500 rows of ``adult_test`` are the public queries and its
other 14,781 rows the evaluation set.  Benchmark: halfspaces, d = 20, 200,000 private rows,
2,000 public queries (labels counted against the clean halfspace), k = 250.  Every route
runs through the registry and :mod:`core.pipeline` at the same (ε, δ):

* ``dp-logistic`` (Gaussian objective perturbation, C from public quantities); and with
  Gamma-norm noise (pure ε) at C = 0.01 and C = 1, the settings of diffprivlib's figures;
* ``dp-naive-bayes``;
* GNMax on 250 logistic-regression teachers, with the learner's defaults and with the
  teachers regularized for their small chunks (C = 0.05);
* Confident-GNMax with the default threshold 0.8 k and with a test tuned for small ε
  (σ1/σ2 = 1, threshold 0.6 k);
* GNMax asked only 300 queries (its σ shrinks with √m) and a self-trained student
  (PATE's semi-supervised recipe, reduced to self-training: the student labels the other
  public rows and is refitted on all of them);
* the DP logistic regression at ε/2 combined with GNMax at ε/2 (basic composition): the
  DP model's vote is added to the teachers' noisy counts with weight k/2.

Adult's table reports each route's accuracy of the labels on the 1,500 public rows and
its logistic-regression student's accuracy on the 14,781 evaluation rows (the DP model's
own accuracy too); the benchmark's counts correct labels of 2,000.  Non-private
references: the logistic regression on all private rows; the student on the 1,500 true
labels (the ceiling of any student of these public rows).  Mean ± sd over ``--seeds``
runs (teachers, noise and students re-seeded per run).

Run:  python experiments/small_epsilon.py --seeds 5
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
from core.errors import DataError  # noqa: E402
from core.mechanisms.dp_training import dp_logistic_coefficients, public_encoding  # noqa: E402
from core.mechanisms.result import make_result  # noqa: E402

NAME = "small_epsilon"
TITLE = "The best labels at small ε, beside DP training"
OUT = Path(__file__).resolve().parent / "out"

ROUTES = (
    "DP logistic regression (Gaussian)",
    "DP logistic regression (Gamma, C = 0.01)",
    "DP logistic regression (Gamma, C = 1)",
    "DP naive Bayes",
    "GNMax, default teachers",
    "GNMax, regularized teachers",
    "Confident-GNMax, t = 0.8k",
    "Confident-GNMax, tuned for small ε",
    "GNMax on 300 queries + self-trained student",
    "DP model (ε/2) + GNMax (ε/2)",
)

DP_ROUTES = ROUTES[:4]
"""The routes that train one model with differential privacy on the private rows (no teachers)."""


def build_parser() -> argparse.ArgumentParser:
    p = common.parser(NAME, __doc__.split("\n\n")[0])
    p.set_defaults(out=OUT)
    p.add_argument("--epsilons", type=common.number_list(float, "ε", low=0.0, low_open=True, increasing=True),
                   default=[0.5, 1.0, 2.0, 4.0], help="target ε values, comma separated")
    p.add_argument("--delta", type=common.probability, default=1e-5, help="δ of every route")
    p.add_argument("--seeds", type=common.positive_int, default=3, help="runs (re-seeded teachers, noise, students)")
    p.add_argument("--k", type=common.positive_int, default=250, help="number of teachers")
    p.add_argument("--tasks", choices=("adult", "halfspaces", "both"), default="both")
    p.add_argument("--n-private", type=common.positive_int, default=200_000, help="benchmark: private rows")
    p.add_argument("--m", type=common.positive_int, default=2000, help="benchmark: public queries")
    p.add_argument("--routes", choices=("all", "dp"), default="all",
                   help="every route, or the DP-training routes only (no teachers are trained)")
    p.add_argument("--student", default="logistic_regression",
                   help="the student's learner (Adult), a name of core.ensemble.learners")
    return p


QUICK = {"epsilons": [1.0], "seeds": 1, "k": 50, "n_private": 5000, "m": 300, "tasks": "halfspaces"}


# --------------------------------------------------------------------------- labels of each route


def _result(labels: np.ndarray, name: str, eps: float, delta: float):
    from core.accounting.guarantee import PrivacyGuarantee

    return make_result(name, np.asarray(labels, dtype=np.int64), None, None,
                       PrivacyGuarantee(eps, delta, "composition", "basic composition of the parts"), {})


def route_labels(route: str, eps: float, ctx: dict[str, Any], rng) -> tuple[np.ndarray, dict]:
    """The public rows' labels of one route at ε (every part charged at its share of ε)."""
    delta, k, rows = ctx["delta"], ctx["k"], ctx["rows"]
    if route == "DP logistic regression (Gaussian)":
        coef = dp_logistic_coefficients(rows, epsilon=eps, delta=delta, rng=rng)
        return _linear(coef, rows.X_public), {"coef": coef}
    if route.startswith("DP logistic regression (Gamma"):
        C = 0.01 if "0.01" in route else 1.0
        coef = dp_logistic_coefficients(rows, epsilon=eps, delta=delta, C=C, perturbation="gamma", rng=rng)
        return _linear(coef, rows.X_public), {"coef": coef}
    if route == "DP naive Bayes":
        return pipeline.label(rows, "dp-naive-bayes", {"epsilon": eps, "delta": delta}, rng=rng).labels, {}
    if route == "GNMax, default teachers":
        return pipeline.label(ctx["votes"], "gnmax", {"epsilon": eps, "delta": delta}, rng=rng).labels, {}
    if route == "GNMax, regularized teachers":
        return pipeline.label(ctx["votes_reg"], "gnmax", {"epsilon": eps, "delta": delta}, rng=rng).labels, {}
    if route == "Confident-GNMax, t = 0.8k":
        return pipeline.label(ctx["votes"], "confident-gnmax", {"epsilon": eps, "delta": delta}, rng=rng).labels, {}
    if route == "Confident-GNMax, tuned for small ε":
        s = {"epsilon": eps, "delta": delta, "ratio": 1.0, "threshold": 0.6 * k}
        return pipeline.label(ctx["votes"], "confident-gnmax", s, rng=rng).labels, {}
    if route == "GNMax on 300 queries + self-trained student":
        few = min(300, len(ctx["votes"]))
        labels = np.full(len(ctx["votes"]), -1, dtype=np.int64)
        labels[:few] = pipeline.label(ctx["votes"][:few], "gnmax", {"epsilon": eps, "delta": delta}, rng=rng).labels
        return labels, {"self_train": True}
    if route == "DP model (ε/2) + GNMax (ε/2)":
        coef = dp_logistic_coefficients(rows, epsilon=eps / 2, delta=delta / 2, rng=rng)
        dp = _linear(coef, rows.X_public)
        from core.accounting.rdp import gnmax_sigma_for_epsilon

        sigma = float(gnmax_sigma_for_epsilon(eps / 2, n_answers=len(ctx["votes"]), delta=delta / 2))
        from core import noise

        noisy = ctx["votes"] + noise.gaussian(sigma, ctx["votes"].shape, rng=rng)  # GNMax's noisy counts
        noisy[np.arange(len(dp)), dp] += k / 2  # the DP model's vote (post-processing of both releases)
        return np.argmax(noisy, axis=1).astype(np.int64), {}
    raise ValueError(route)


def _linear(coef: np.ndarray, X: np.ndarray) -> np.ndarray:
    scores = np.hstack([X, np.ones((len(X), 1))]) @ coef.T
    return (scores[:, 0] > 0).astype(np.int64) if coef.shape[0] == 1 else np.argmax(scores, axis=1)


def student_accuracy(ctx: dict[str, Any], labels: np.ndarray, eps: float, self_train: bool, rng) -> float:
    """Accuracy on the evaluation rows of a logistic-regression student of these labels."""
    if ctx["X_eval"] is None:
        return float("nan")
    res = _result(labels, "route", eps, ctx["delta"])
    try:
        model = pipeline.student(ctx["X_public"], res, ctx["student"], None, ctx["table"], rng=rng)
        if self_train:  # label the unlabeled public rows with the student, refit on all of them
            filled = np.where(labels >= 0, labels, np.asarray(model.predict(ctx["X_public"]), dtype=np.int64))
            model = pipeline.student(ctx["X_public"], _result(filled, "route", eps, ctx["delta"]),
                                     ctx["student"], None, ctx["table"], rng=rng)
    except DataError:
        return float("nan")
    return float(np.mean(np.asarray(model.predict(ctx["X_eval"])) == ctx["y_eval"]))


# --------------------------------------------------------------------------- tasks


def adult_context(args, seed: int) -> dict[str, Any]:
    split = common.adult_split(1500, 14_781)
    return _context(args, seed, split.table, split.X_public, split.y_public, split.X_eval, split.y_eval)


def halfspace_context(args, seed: int) -> dict[str, Any]:
    task = common.halfspace_task(args.n_private, args.m, 20 if not args.quick else 5, 0.0, seed)
    cols = [f"x{j}" for j in range(task.X_private.shape[1])]
    table = table_from_arrays(task.X_private, task.y_private, feature_names=cols, name="halfspaces")
    return _context(args, seed, table, pd.DataFrame(task.X_public, columns=cols), task.y_public_clean, None, None)


def _context(args, seed, table, X_public, y_public, X_eval, y_eval) -> dict[str, Any]:
    timer = common.Timer()
    teachers = votes = votes_reg = None
    if args.routes == "all":
        teachers = pipeline.train(table, "logistic_regression", None, args.k, rng=common.rng_for(seed, 2),
                                  n_jobs=args.n_jobs)
        votes = pipeline.mechanism_inputs("gnmax", teachers, table, X_public)
        reg = pipeline.train(table, "logistic_regression", {"C": 0.05}, args.k, rng=common.rng_for(seed, 2),
                             n_jobs=args.n_jobs)
        votes_reg = pipeline.mechanism_inputs("gnmax", reg, table, X_public)
    rows = pipeline.mechanism_inputs("dp-logistic", None, table, X_public)
    enc = public_encoding(table, X_public)
    ctx = {"table": table, "X_public": X_public, "y_public": y_public, "X_eval": X_eval, "y_eval": y_eval,
           "votes": votes, "votes_reg": votes_reg, "rows": rows, "k": args.k, "delta": args.delta,
           "student": args.student, "X_eval_enc": None if X_eval is None else enc.transform(X_eval)}
    # non-private references (diagnostics, never released)
    from core.mechanisms.dp_training import fit_logistic

    Xa = np.hstack([rows.X, np.ones((rows.n, 1))])
    coef = fit_logistic(Xa, np.where(rows.y == 1, 1.0, -1.0), 1.0 / rows.n, np.zeros((1, Xa.shape[1])))
    ctx["ref_public"] = float(np.mean(_linear(coef, rows.X_public) == y_public))
    if teachers is not None:
        ctx["ref_plurality"] = float(np.mean(np.argmax(votes, axis=1) == y_public))
        # the default teachers' mean accuracy and their agreement (the plurality's share of the k votes)
        predictions = teachers.predictions(pipeline.model_input(table, X_public))
        ctx["ref_teacher"] = float(np.mean(predictions == np.asarray(y_public)[:, None]))
        ctx["ref_agreement"] = float(np.mean(np.max(votes, axis=1)) / args.k)
    if X_eval is not None:
        ctx["ref_eval"] = float(np.mean(_linear(coef, ctx["X_eval_enc"]) == y_eval))
        ctx["ref_student"] = student_accuracy(ctx, np.asarray(y_public), 1.0, False, common.rng_for(seed, 8))
    print(f"seed {seed}: teachers, votes and references in {timer.elapsed:.0f} s", flush=True)
    return ctx


def subsampled_sigma(q: float, epsilon: float, delta: float, m: int) -> float:
    """GNMax's σ when each query asks a Poisson sample (rate q) of the teachers, by dp-accounting.

    One answer is the Gaussian mechanism on the sampled votes (L2 sensitivity √2, noise
    multiplier σ/√2), amplified by subsampling (``PoissonSampledDpEvent``, RDP accountant,
    replace-one within the sample), composed over ``m`` queries; σ is found by bisection.
    """
    import logging
    import dp_accounting
    from dp_accounting import rdp

    logging.getLogger("absl").setLevel(logging.ERROR)

    def eps_of(z: float) -> float:
        acc = rdp.RdpAccountant(orders=list(np.arange(1.5, 200, 0.5)),
                                neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_SPECIAL)
        event = dp_accounting.GaussianDpEvent(z)
        acc.compose(event if q >= 1 else dp_accounting.PoissonSampledDpEvent(q, event), m)
        return acc.get_epsilon(delta)

    lo, hi = 1e-2, 1e5
    for _ in range(45):
        mid = float(np.sqrt(lo * hi))
        lo, hi = (mid, hi) if eps_of(mid) > epsilon else (lo, mid)
    return hi * float(np.sqrt(2.0))


def subsampling_section(args) -> str:
    """Why subsampling teachers per query does not help GNMax here: σ shrinks like q, and so does the margin."""
    rows = []
    for task, eps, m in (("adult", 1.0, 1500), ("halfspaces", 2.0, args.m)):
        for q in (1.0, 0.5, 0.2, 0.1):
            sigma = subsampled_sigma(q, eps, args.delta, m)
            rows.append([task, f"{eps:g}", f"{q:g}", f"{sigma:.1f}", f"{0.8 * args.k * q / (np.sqrt(2) * sigma):.3f}"])
    text = ("Privacy amplification by subsampling teachers per query (Private-kNN's device), accounted with "
            "dp-accounting: at the same (ε, δ) the noise σ falls in proportion to the sampling rate q, and so does "
            "the expected vote margin (here 0.8 k q for 90 % agreement), so the margin-to-noise ratio, which decides "
            "how many labels flip, does not improve (and the sample adds its own variance). Not kept.")
    return "## Subsampling teachers per query\n\n" + text + "\n\n" + common.markdown_table(
        ["task", "ε", "rate q", "σ", "margin / (√2 σ)"], rows)


def _routes(args) -> tuple[str, ...]:
    return ROUTES if args.routes == "all" else DP_ROUTES


def run(args) -> dict:
    tasks = ["adult", "halfspaces"] if args.tasks == "both" else [args.tasks]
    out: dict = {"cells": {}, "refs": {}}
    for t_i, task in enumerate(tasks):
        for s in range(args.seeds):
            seed = args.seed + s
            ctx = adult_context(args, seed) if task == "adult" else halfspace_context(args, seed)
            for key in ("ref_public", "ref_plurality", "ref_teacher", "ref_agreement", "ref_eval", "ref_student"):
                if key in ctx:
                    out["refs"].setdefault((task, key), []).append(ctx[key])
            for e_i, eps in enumerate(args.epsilons):
                for r_i, route in enumerate(_routes(args)):  # DP_ROUTES lead ROUTES: same streams
                    rng = common.rng_for(seed, 5, t_i, e_i, r_i)
                    labels, extra = route_labels(route, eps, ctx, rng)
                    answered = labels >= 0
                    cell = out["cells"].setdefault((task, eps, route), {"correct": [], "answered": [], "student": [], "model": []})
                    cell["correct"].append(int(np.sum(labels[answered] == ctx["y_public"][answered])))
                    cell["answered"].append(int(answered.sum()))
                    if task == "adult":
                        cell["student"].append(student_accuracy(ctx, labels, eps, bool(extra.get("self_train")), rng))
                        if "coef" in extra:
                            cell["model"].append(float(np.mean(_linear(extra["coef"], ctx["X_eval_enc"]) == ctx["y_eval"])))
                print(f"{task} seed {seed} ε = {eps:g} done", flush=True)
    out["tasks"] = tasks
    return out


def report(args, res: dict) -> tuple[list[str], Any]:
    sections = []
    fig, axes = plt.subplots(1, len(res["tasks"]), figsize=(6 * len(res["tasks"]), 4), squeeze=False)
    for ax, task in zip(axes[0], res["tasks"]):
        m = 1500 if task == "adult" else args.m
        if task == "adult":
            cols = ["ε", "route", f"correct labels (of {m})", "answered", "student accuracy", "DP model accuracy"]
        else:
            cols = ["ε", "route", f"correct labels (of {m})", "answered"]
        rows = []
        for eps in args.epsilons:
            for route in _routes(args):
                c = res["cells"][(task, eps, route)]
                row = [f"{eps:g}", route, common.mean_sd(c["correct"], 0), common.mean_sd(c["answered"], 0)]
                if task == "adult":
                    row += [common.mean_sd(c["student"], 3), common.mean_sd(c["model"], 3)]
                rows.append(row)
        for route in _routes(args):
            key = "student" if task == "adult" else "correct"
            ax.plot(args.epsilons, [np.nanmean(res["cells"][(task, e, route)][key]) for e in args.epsilons],
                    marker="o", label=route)
        ax.set_xscale("log")
        ax.set_xlabel("ε")
        ax.set_ylabel("student accuracy" if task == "adult" else "correct labels")
        ax.set_title(task)
        refs = res["refs"]
        lines = [f"Non-private references ({args.seeds} run(s)): logistic regression on all private rows labels "
                 f"{common.mean_sd(refs[(task, 'ref_public')], 3)} of the public rows correctly"]
        if (task, "ref_plurality") in refs:
            lines[0] += (f"; the teachers' plurality {common.mean_sd(refs[(task, 'ref_plurality')], 3)}; the default "
                         f"teachers one by one {common.mean_sd(refs[(task, 'ref_teacher')], 3)} (mean teacher "
                         f"accuracy), and the plurality holds {common.mean_sd(refs[(task, 'ref_agreement')], 3)} of "
                         "the k votes on average (agreement)")
        lines[0] += "."
        if task == "adult":
            lines.append(f"On the evaluation rows: that model {common.mean_sd(refs[(task, 'ref_eval')], 3)}; a student "
                         f"on the 1,500 TRUE public labels {common.mean_sd(refs[(task, 'ref_student')], 3)} (the ceiling "
                         "of any student of these public rows).")
        title = ("UCI Adult: private adult_train, public = first 1,500 rows of adult_test, evaluation = the other 14,781"
                 if task == "adult" else f"Halfspaces: d = 20, {args.n_private:,} private rows, {args.m:,} queries, k = {args.k}")
        who = f"{args.k} logistic-regression teachers" if args.routes == "all" else "the DP-training routes only"
        sections += [f"## {title}", f"δ = {args.delta:g}; {who}; student learner `{args.student}`; mean ± sd over "
                     f"{args.seeds} run(s).", common.markdown_table(cols, rows), " ".join(lines)]
    if not args.quick and args.routes == "all":
        sections.append(subsampling_section(args))
    axes[0][-1].legend(fontsize=6, loc="lower right")
    return sections, fig


main = common.experiment(NAME, TITLE, build_parser, run, report, QUICK)

if __name__ == "__main__":
    common.run_main(main)
