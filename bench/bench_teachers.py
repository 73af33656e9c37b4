"""Benchmark the teacher ensemble: parallel training and vote-count memory.

Run from the repository root::

    .venv/bin/python bench/bench_teachers.py            # full sizes
    .venv/bin/python bench/bench_teachers.py --quick    # smaller, for a smoke run

Prints two tables:

1. Training 250 logistic-regression teachers (the registry's default learner) on the
   digits data (1,797 rows, about 7 rows per teacher) with ``n_jobs=1`` and ``n_jobs=2``
   (joblib's default loky backend): best of ``--repeats`` runs, after one warm-up run
   that starts the worker processes; the cold run (worker start-up included) is shown
   too.  Target: speed-up >= 1.6x.  A reference speed-up of ideal CPU-bound dummy tasks of
   the same length, measured right after, shows how much parallelism the (shared) machine
   offered at the time.
2. Vote counts of 100,000 queries x 1,000 teachers (decision stumps on synthetic data)
   for the default (auto) and smaller block sizes: time, peak traced allocation (``tracemalloc``) and the growth
   of the process's peak resident memory (``resource.getrusage``).  Target: < 1 GiB.  The
   size of the m x k prediction matrix that blocked counting avoids is shown beside it.

Timings depend on the load of the machine: the script prints the load average before
each table.  No assertion is made here; tests never time anything.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.ensemble.learners import make_learner  # noqa: E402
from core.ensemble.teacher_ensemble import default_block_size  # noqa: E402
from core.ensemble.teachers import train_teachers  # noqa: E402


def load_digits_arrays() -> tuple[np.ndarray, np.ndarray, str]:
    """The digits data: the bundled CSV when present, else scikit-learn's copy."""
    try:
        from core.data import load_bundled

        table = load_bundled("digits")
        return table.features.to_numpy(dtype=float), table.labels, "datasets/digits.csv"
    except Exception:  # the bundled file or core.data may be missing
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
        return X.astype(float), y.astype(np.int64), "sklearn.datasets.load_digits"


def load_average() -> str:
    try:
        one, five, fifteen = os.getloadavg()
        return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} (1/5/15 min) on {os.cpu_count()} cores"
    except OSError:  # pragma: no cover - not on every platform
        return "load average unavailable"


def print_table(headers: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = " | ".join(h.ljust(w) for h, w in zip(headers, widths))
    print(line)
    print("-+-".join("-" * w for w in widths))
    for r in rows:
        print(" | ".join(c.rjust(w) for c, w in zip(r, widths)))
    print()


def _busy(cpu_seconds: float) -> None:
    start = time.process_time()
    while time.process_time() - start < cpu_seconds:
        pass


def reference_speedup(tasks: int, cpu_seconds: float) -> float:
    """Speed-up of n_jobs=2 over n_jobs=1 for ideal CPU-bound tasks, on this machine, now.

    It shows how much parallelism the machine offers at the moment of measurement (other
    processes share the cores), so the teachers' speed-up can be read against it.
    """
    from joblib import Parallel, delayed

    times = {}
    for n_jobs in (1, 2):
        Parallel(n_jobs=n_jobs)(delayed(_busy)(0.001) for _ in range(4))  # start the workers
        start = time.perf_counter()
        Parallel(n_jobs=n_jobs)(delayed(_busy)(cpu_seconds) for _ in range(tasks))
        times[n_jobs] = time.perf_counter() - start
    return times[1] / times[2]


def bench_training(k: int, repeats: int) -> None:
    X, y, source = load_digits_arrays()
    learner = make_learner("logistic_regression")
    print(f"## Training {k} logistic-regression teachers on digits ({X.shape[0]} x {X.shape[1]}, from {source})")
    print(load_average())
    results = {}
    for n_jobs in (1, 2):
        start = time.perf_counter()
        train_teachers(X, y, learner, k, rng=0, n_jobs=n_jobs)
        cold = time.perf_counter() - start
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            train_teachers(X, y, learner, k, rng=0, n_jobs=n_jobs)
            times.append(time.perf_counter() - start)
        results[n_jobs] = (cold, min(times), float(np.median(times)))
    base = results[1][1]
    rows = [
        [
            str(n_jobs),
            f"{cold:.2f}",
            f"{best:.2f}",
            f"{median:.2f}",
            f"{base / best:.2f}x",
        ]
        for n_jobs, (cold, best, median) in results.items()
    ]
    print_table(["n_jobs", "cold run (s)", f"best of {repeats} (s)", "median (s)", "speed-up (best)"], rows)
    per_teacher = base / k
    reference = reference_speedup(k, per_teacher)
    print(
        f"Reference: {k} ideal CPU-bound tasks of {per_teacher * 1000:.1f} ms CPU each (the measured time per "
        f"teacher) run {reference:.2f}x faster with n_jobs=2 right now: the parallelism the shared machine offers."
    )
    print(load_average())
    print()


def peak_rss_bytes() -> int:
    # ru_maxrss is in kibibytes on Linux (bytes on macOS)
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def bench_votes(m: int, k: int, block_sizes: list[int | None]) -> None:
    from sklearn.tree import DecisionTreeClassifier

    gen = np.random.default_rng(0)
    d = 10
    n_private = 20 * k
    w = gen.normal(size=d)
    X = gen.normal(size=(n_private, d))
    y = (X @ w > 0).astype(np.int64)
    Q = gen.normal(size=(m, d))
    print(f"## Vote counts: {m:,} queries x {k:,} decision-stump teachers ({d} features, {n_private:,} private rows)")
    start = time.perf_counter()
    ens = train_teachers(X, y, DecisionTreeClassifier(max_depth=1), k, rng=0)
    print(f"(training the {k} stumps took {time.perf_counter() - start:.1f} s)")
    print(load_average())
    gib = 1024**3
    rows = []
    for block in block_sizes:
        gc.collect()
        rss_before = peak_rss_bytes()
        start = time.perf_counter()
        counts = ens.vote_counts(Q, block_size=block)
        elapsed = time.perf_counter() - start
        rss_growth = peak_rss_bytes() - rss_before
        assert int(counts.sum()) == m * k
        del counts
        gc.collect()
        tracemalloc.start()
        counts = ens.vote_counts(Q, block_size=block)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        del counts
        rows.append(
            [
                f"{block:,}" if block is not None else f"auto ({default_block_size(d):,})",
                f"{elapsed:.2f}",
                f"{peak / 2**20:.1f}",
                f"{max(rss_growth, 0) / 2**20:.1f}",
                "yes" if peak < gib else "NO",
            ]
        )
    print_table(
        ["block size (rows)", "time (s)", "peak traced (MiB)", "peak RSS growth (MiB)", "< 1 GiB"],
        rows,
    )
    print(
        f"For comparison: an m x k prediction matrix would take {m * k * 4 / 2**20:,.0f} MiB as int32 "
        f"({m * k * 8 / 2**20:,.0f} MiB as int64); the (m, C) counts take {m * 2 * 4 / 2**20:.1f} MiB. "
        f"Query data: {Q.nbytes / 2**20:.1f} MiB."
    )
    print()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes for a smoke run")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per n_jobs (after a warm-up)")
    parser.add_argument("--part", choices=("all", "votes", "training"), default="all", help="which table to print")
    args = parser.parse_args(argv)
    # memory first, so the peak-RSS growth is not hidden by earlier allocations
    if args.part in ("all", "votes"):
        if args.quick:
            bench_votes(m=10_000, k=100, block_sizes=[None, 4096])
        else:
            bench_votes(m=100_000, k=1_000, block_sizes=[None, 4096, 16384])
    if args.part in ("all", "training"):
        bench_training(k=50 if args.quick else 250, repeats=1 if args.quick else args.repeats)


if __name__ == "__main__":
    main()
