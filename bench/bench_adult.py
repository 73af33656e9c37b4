"""Benchmark teacher training and voting on UCI Adult (the bundled train/test split).

Run from the repository root::

    .venv/bin/python bench/bench_adult.py                      # impute, k = 250
    .venv/bin/python bench/bench_adult.py --missing drop --k 100

The private table is ``adult_train`` (32,561 rows; with ``--missing drop`` the 2,399 rows
with a ``?`` are dropped first); the public queries are the first 4,884 rows of
``adult_test`` (with the same missing-value option).  Every teacher is
``core.pipeline.teacher_model(table, learner, params)``: one-hot encoding of the 8
categorical columns, with ``impute`` the imputers, and for logistic regression the
standardizing of the 6 numeric columns, all fitted on the teacher's own chunk (about 130
rows for k = 250).  Learners: random forests of 100 trees (``n_estimators=100``) and
logistic regression (the registry's default: numbers standardized, ``max_iter=200``).

Each configuration (learner x ``n_jobs``) runs in a fresh Python process, so its peak
resident memory (``ru_maxrss``) is its own: the table shows the seconds to train the k
teachers with :func:`core.ensemble.teachers.train_teachers`, the seconds to compute their vote
counts on the public rows (:meth:`TeacherEnsemble.vote_counts`, same ``n_jobs``), the
main process's peak RSS and the largest peak RSS of its worker processes (joblib's loky
workers, for ``n_jobs`` = 2).  Timings depend on the machine and its load; the script
prints the CPU count and the load average.  Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

N_PUBLIC = 4_884
LEARNERS = {
    "random_forest": {"n_estimators": 100},
    "logistic_regression": {},
}


def _rss_mib(who: int) -> float:
    """Peak resident memory in MiB (``ru_maxrss`` is in KiB on Linux)."""
    return resource.getrusage(who).ru_maxrss / 1024.0


def run_one(learner: str, n_jobs: int, k: int, missing: str, seed: int) -> dict:
    """Train ``k`` teachers and count their votes once; return timings and memory."""
    import warnings

    from core.data import load_bundled
    from core.ensemble.teachers import train_teachers
    from core.pipeline import teacher_model

    private = load_bundled("adult_train", missing=missing)
    public = load_bundled("adult_test", missing=missing).features.iloc[:N_PUBLIC].reset_index(drop=True)
    model = teacher_model(private, learner, LEARNERS[learner])
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. a chunk's ConvergenceWarning: timing only
        ensemble = train_teachers(
            private.features, private.labels, model, k, n_classes=private.n_classes, rng=seed,
            n_jobs=n_jobs,
        )
    train_s = time.perf_counter() - start
    start = time.perf_counter()
    counts = ensemble.vote_counts(public)
    vote_s = time.perf_counter() - start
    assert counts.shape == (N_PUBLIC, private.n_classes) and (counts.sum(axis=1) == k).all()
    if n_jobs != 1:
        # RUSAGE_CHILDREN counts waited-for children only: stop joblib's reusable loky
        # workers so that their peak memory is counted.
        from joblib.externals.loky import get_reusable_executor

        get_reusable_executor().shutdown(wait=True)
    return {
        "learner": learner,
        "n_jobs": n_jobs,
        "rows": private.n_rows,
        "dropped": private.dropped_rows,
        "train_s": train_s,
        "vote_s": vote_s,
        "rss_mib": _rss_mib(resource.RUSAGE_SELF),
        "workers_rss_mib": _rss_mib(resource.RUSAGE_CHILDREN),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--k", type=int, default=250, help="number of teachers (default 250)")
    parser.add_argument("--missing", choices=("impute", "drop"), default="impute",
                        help="missing-value option for Adult's '?' cells (default impute)")
    parser.add_argument("--n-jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--learners", nargs="+", choices=sorted(LEARNERS), default=list(LEARNERS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--one", nargs=2, metavar=("LEARNER", "N_JOBS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        result = run_one(args.one[0], int(args.one[1]), args.k, args.missing, args.seed)
        print(json.dumps(result))
        return 0

    print(f"UCI Adult: adult_train as private (missing={args.missing}), first {N_PUBLIC:,} rows of "
          f"adult_test as public; k = {args.k} teachers")
    print(f"CPUs: {os.cpu_count()}; load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    rows = []
    for learner in args.learners:
        for n_jobs in args.n_jobs:
            command = [sys.executable, __file__, "--k", str(args.k), "--missing", args.missing,
                       "--seed", str(args.seed), "--one", learner, str(n_jobs)]
            done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
            if done.returncode != 0:
                print(done.stderr, file=sys.stderr)
                return done.returncode
            rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
            r = rows[-1]
            print(f"  done: {learner}, n_jobs={n_jobs} ({r['train_s']:.1f} s + {r['vote_s']:.1f} s)",
                  flush=True)
    print()
    print(f"private rows: {rows[0]['rows']:,} (dropped: {rows[0]['dropped']:,})")
    header = (f"{'learner':<22}{'n_jobs':>7}{'train s':>10}{'votes s':>10}"
              f"{'peak RSS MiB':>14}{'workers MiB':>13}")
    print(header)
    print("-" * len(header))
    for r in rows:
        workers = f"{r['workers_rss_mib']:.0f}" if r["n_jobs"] > 1 else "-"
        print(f"{r['learner']:<22}{r['n_jobs']:>7}{r['train_s']:>10.1f}{r['vote_s']:>10.1f}"
              f"{r['rss_mib']:>14.0f}{workers:>13}")
    print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
