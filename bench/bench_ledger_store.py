"""Benchmark the ledger store at scale: a million persons, a hundred runs on random subsets.

Run from the repository root::

    .venv/bin/python bench/bench_ledger_store.py                   # 1,000,000 persons, 100 runs
    .venv/bin/python bench/bench_ledger_store.py --persons 100000 --runs 20

Each scenario charges ``--runs`` runs to one dataset of a fresh SQLite store
(:class:`core.ledger.PrivacyLedger` with ``store=``), each run reading a random subset of the
persons (its privacy units, given by their IDs: 80 % of them, drawn afresh per run, as
repeated cross-validation does):

* ``one setting``: every run has the same privacy map (GNMax at ε 1 for 1,000 queries);
* ``10 settings``: ten maps (GNMax at ε 0.5 … 5), each run one of them in turn;
* ``100 settings``: every run its own map (GNMax at ε 0.1 … 10): the case where identical
  runs cannot be counted together;
* ``10-fold CV x 10``: ten repetitions of ten-fold cross-validation by person (each run
  reads the nine other folds' persons), one setting.

Every scenario runs in a fresh Python process, so its peak resident memory (``ru_maxrss``)
is its own.  The table shows the seconds per charge (mean and the slowest; a charge hashes
the IDs, splits the classes, checks the budget and commits), the seconds to compute the
data's total on a fresh ledger object (read from the store, then composed) and again on
the same object, the number of classes (groups of persons with the same runs), the
store's size on disk and the peak memory.  The total is also checked against the plain
answer where it is known in closed form (``one setting``: the largest count's
composition).  Timings depend on the machine and its load: the script prints the CPU count
and the load average.  Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SCENARIOS = ("one setting", "10 settings", "100 settings", "10-fold CV x 10")


def _entries(scenario: str, runs: int):
    from core.ledger.maps import gnmax_entry
    from core.accounting import gnmax_sigma_for_epsilon

    m, delta = 1000, 1e-6

    def at(eps: float):
        return gnmax_entry(sigma=gnmax_sigma_for_epsilon(eps, n_answers=m, delta=delta), m=m, delta=delta)

    if scenario in ("one setting", "10-fold CV x 10"):
        one = at(1.0)
        return [one] * runs
    if scenario == "10 settings":
        grid = [at(e) for e in [0.5 * (i + 1) for i in range(10)]]
        return [grid[i % 10] for i in range(runs)]
    grid = [at(0.1 * (i + 1)) for i in range(runs)]
    return grid


def run_one(scenario: str, persons: int, runs: int, seed: int) -> dict:
    import numpy as np

    from core.ledger import PrivacyLedger, compose_entries

    rng = np.random.default_rng(seed)
    entries = _entries(scenario, runs)
    ids = np.arange(persons, dtype=np.int64) + 10_000_000  # person IDs as a table would hold them
    folder = Path(tempfile.mkdtemp(prefix="bench-ledger-"))
    path = folder / "ledger.sqlite"
    led = PrivacyLedger("bench", store=path)
    times = []
    counts = np.zeros(persons, dtype=np.int64)
    fold = rng.integers(0, 10, persons)
    for j, entry in enumerate(entries):
        if scenario == "10-fold CV x 10":
            if j % 10 == 0:
                fold = rng.permutation(persons) % 10
            pick = fold != (j % 10)
        else:
            pick = rng.random(persons) < 0.8
        counts += pick
        t0 = time.perf_counter()
        led.charge(entry, units=ids[pick])
        times.append(time.perf_counter() - t0)
    fresh = PrivacyLedger("bench", store=path)
    t0 = time.perf_counter()
    total = fresh.total()
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    fresh.total()
    warm = time.perf_counter() - t0
    state = fresh._read()
    size = sum(p.stat().st_size for p in folder.iterdir())
    check = None
    if scenario in ("one setting", "10-fold CV x 10"):
        check = compose_entries([entries[0]] * int(counts.max())).epsilon
    return {"scenario": scenario, "persons": persons, "runs": runs, "charge_mean_s": float(np.mean(times)),
            "charge_max_s": float(np.max(times)), "total_cold_s": cold, "total_warm_s": warm,
            "classes": state.classes.n_classes, "epsilon": total.epsilon, "epsilon_check": check,
            "store_mib": size / 2 ** 20, "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--persons", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scenario", choices=SCENARIOS, action="append", default=None)
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one is not None:
        print(json.dumps(run_one(args.one, args.persons, args.runs, args.seed)))
        return
    print(f"ledger store at scale: {args.persons:,} persons, {args.runs} runs each reading a random 80 % of them "
          f"(CPUs: {os.cpu_count()}, load average: {', '.join(f'{x:.1f}' for x in os.getloadavg())})")
    head = (f"{'scenario':<17} {'classes':>8} {'s/charge':>9} {'slowest':>8} {'total (fresh)':>14} {'total (again)':>14} "
            f"{'store MiB':>10} {'peak MiB':>9} {'ε total':>9} {'ε check':>9}")
    print(head)
    print("-" * len(head))
    for scenario in args.scenario or SCENARIOS:
        out = subprocess.run([sys.executable, __file__, "--one", scenario, "--persons", str(args.persons), "--runs",
                              str(args.runs), "--seed", str(args.seed)], capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        check = "—" if r["epsilon_check"] is None else f"{r['epsilon_check']:.4f}"
        print(f"{scenario:<17} {r['classes']:>8,} {r['charge_mean_s']:>9.3f} {r['charge_max_s']:>8.3f} "
              f"{r['total_cold_s']:>13.3f}s {r['total_warm_s']:>13.4f}s {r['store_mib']:>10.1f} {r['peak_mib']:>9.0f} "
              f"{r['epsilon']:>9.4f} {check:>9}", flush=True)


if __name__ == "__main__":
    main()
