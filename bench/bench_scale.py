"""Benchmark labeling at scale: Adult-shaped public files of 100k, 1M and 5M rows.

Run from the repository root::

    .venv/bin/python bench/bench_scale.py                 # 100k and 1M x 3 learners, then 5M (command line)
    .venv/bin/python bench/bench_scale.py --sizes 100000  # one size, no 5M run
    .venv/bin/python bench/bench_scale.py --quick         # 20k rows, k = 50: a smoke run

The private table is ``adult_train`` (``--missing drop``: 30,162 rows, 14 features, 8 of them
categorical).  Public files are made by resampling the rows of ``adult_test`` with
replacement (a fixed seed) and written to a temporary folder.  Every labeling job runs in a
fresh process, so its peak resident memory (``ru_maxrss`` from ``wait4``) is its own:

* 100k and 1M rows × {logistic regression, random forest, Gaussian naive Bayes}, k = 250,
  GNMax at ε = 8, δ = 1e-5, through the library path the command line uses
  (:func:`core.cli.stream.read_chunks` → :func:`core.cli.stream.label_stream`: chunks of
  100,000 rows, votes on rows encoded once, one stream session, the labeled CSV written
  as it goes); training and labeling timed apart;
* 5M rows × logistic regression through the command line itself
  (``python -m core label ...``), once, at the end (``--no-5m`` leaves it out).

Random forests are kept small (``n_estimators=5, max_depth=8``, 1,250 trees in all) so that
the 1M run finishes on a shared two-core machine; every tree still predicts every row.

Each table row shows seconds (training, labeling of the public rows, total), public rows
labeled per second, the process's peak memory, and the ratio of the labeling time to
pandas reading and writing the same file (``pd.read_csv`` + ``DataFrame.to_csv``) measured in
the same run.  Timings depend on the machine's load (printed); nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LEARNERS = {
    "logistic_regression": [],
    "random_forest": ["n_estimators=5", "max_depth=8"],
    "gaussian_nb": [],
}
SETTINGS = {"epsilon": 8.0, "delta": 1e-5}

_CHILD = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, {root!r})
import numpy as np
from core import pipeline
from core.cli import stream
from core.data import load_table
from core.ensemble.learners import parse_assignments

args = json.loads(sys.argv[1])
t0 = time.perf_counter()
table = load_table(args["private"], label_column="income", missing="drop", missing_markers=["?"])
rng = np.random.default_rng(0)
params = parse_assignments(args["learner"], args["params"])
teachers = pipeline.train(table, args["learner"], params, args["k"], rng=rng)
t1 = time.perf_counter()
m = stream.count_rows(args["public"])
with open(args["out"], "w", newline="", encoding="utf-8") as out:
    result, _ = stream.label_stream(chunks=stream.read_chunks(args["public"], args["chunk"]), table=table,
                                    teachers=teachers, mechanism="gnmax", settings=args["settings"], m=m,
                                    rng=rng, out=out)
t2 = time.perf_counter()
print(json.dumps({{"train": t1 - t0, "label": t2 - t1, "rows": int(result.m), "answered": int(result.n_answered)}}))
"""


def run_child(argv: list[str]) -> tuple[float, float, str]:
    """Run a command in a fresh process: wall seconds, its own peak RSS (MiB), stdout."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out_file, tempfile.TemporaryFile() as err_file:
        proc = subprocess.Popen(argv, stdout=out_file, stderr=err_file, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        out_file.seek(0)
        err_file.seek(0)
        out, err = out_file.read().decode(), err_file.read().decode()
    if proc.returncode not in (0, 3):
        raise SystemExit(f"{' '.join(argv[:4])} failed ({proc.returncode}):\n{err[-2000:]}")
    return wall, usage.ru_maxrss / 1024.0, out


def make_public(path: Path, rows: int) -> None:
    import pandas as pd

    test = pd.read_csv(ROOT / "datasets" / "adult_test.csv.gz", dtype=str, keep_default_na=False)
    test = test[~(test == "?").any(axis=1)].drop(columns=["income"])
    test.sample(rows, replace=True, random_state=0).to_csv(path, index=False)


def pandas_read_write(path: Path, folder: Path) -> float:
    """Seconds for ``pd.read_csv`` of the file and ``to_csv`` of the frame (in a child)."""
    code = ("import time, pandas as pd; t = time.perf_counter(); f = pd.read_csv({p!r}); "
            "f.to_csv({o!r}, index=False); print(time.perf_counter() - t)").format(p=str(path), o=str(folder / "pd.csv"))
    _, _, out = run_child([sys.executable, "-c", code])
    (folder / "pd.csv").unlink(missing_ok=True)
    return float(out.strip())


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--learners", nargs="+", default=list(LEARNERS), choices=list(LEARNERS))
    parser.add_argument("--k", type=int, default=250)
    parser.add_argument("--chunk", type=int, default=100_000)
    parser.add_argument("--no-5m", action="store_true", help="leave out the 5M-row command-line run")
    parser.add_argument("--quick", action="store_true", help="20,000 rows, k = 50, no 5M run")
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.k, args.no_5m = [20_000], 50, True

    import pandas as pd

    with tempfile.TemporaryDirectory(prefix="bench_scale_") as tmp:
        folder = Path(tmp)
        private = folder / "adult_train.csv"
        pd.read_csv(ROOT / "datasets" / "adult_train.csv.gz", dtype=str, keep_default_na=False).to_csv(private, index=False)
        rows = []
        print(f"Adult: adult_train (missing=drop) private, adult_test resampled as public; k = {args.k}, "
              f"GNMax at epsilon = 8; chunks of {args.chunk:,} rows; load average {load()}", flush=True)
        sizes = list(args.sizes) + ([] if args.no_5m else [5_000_000])
        for size in sizes:
            public = folder / f"public_{size}.csv"
            make_public(public, size)
            mb = public.stat().st_size / 2**20
            base = pandas_read_write(public, folder)
            print(f"\n{size:,} rows ({mb:,.0f} MiB): pandas read + write {base:.2f} s (load {load()})", flush=True)
            learners = ["logistic_regression"] if size >= 5_000_000 else args.learners
            for learner in learners:
                out = folder / "labeled.csv"
                if size >= 5_000_000:  # the command line itself
                    argv = [sys.executable, "-m", "core", "label", "--private", str(private), "--label-column",
                            "income", "--public", str(public), "--missing", "drop", "--missing-marker", "?",
                            "--learner", learner, "--k", str(args.k), "--mechanism", "gnmax", "--epsilon", "8",
                            "--delta", "1e-5", "--out", str(out), "--seed", "0", "--no-progress",
                            "--chunk-rows", str(args.chunk)]
                    for p in LEARNERS[learner]:
                        argv += ["--learner-param", p]
                    wall, peak, _ = run_child(argv)
                    train, label, how = float("nan"), wall, "command line"
                else:
                    job = {"private": str(private), "public": str(public), "out": str(out), "learner": learner,
                           "params": LEARNERS[learner], "k": args.k, "chunk": args.chunk, "settings": SETTINGS}
                    wall, peak, text = run_child([sys.executable, "-c", _CHILD.format(root=str(ROOT)), json.dumps(job)])
                    stats = json.loads(text.strip().splitlines()[-1])
                    train, label, how = stats["train"], stats["label"], "library"
                    assert stats["rows"] == size
                out.unlink(missing_ok=True)
                row = dict(rows=size, learner=learner, how=how, train=train, label=label, total=wall,
                           rate=size / label, peak=peak, pandas=base, ratio=label / base)
                rows.append(row)
                print(f"  {learner:<20} {how:<12} train {train:6.1f} s  label {label:7.1f} s  total {wall:7.1f} s  "
                      f"{size / label:10,.0f} rows/s  peak {peak:6,.0f} MiB  {label / base:5.2f}x pandas "
                      f"(load {load()})", flush=True)
            public.unlink()
        print("\n| public rows | teachers (k = %d) | run | training s | labeling s | rows/s | peak MiB | "
              "pandas read+write s | labeling / pandas |" % args.k)
        print("|---:|---|---|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            train = "—" if r["train"] != r["train"] else f"{r['train']:.1f}"
            label = f"{r['label']:.1f}" + (" (whole run)" if r["how"] == "command line" else "")
            print(f"| {r['rows']:,} | {r['learner']} | {r['how']} | {train} | {label} | {r['rate']:,.0f} | "
                  f"{r['peak']:,.0f} | {r['pandas']:.2f} | {r['ratio']:.2f}x |")


if __name__ == "__main__":
    main()
