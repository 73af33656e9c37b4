"""Benchmark reading persons' IDs: the partition's persons and the ledger's keys.

Run from the repository root::

    .venv/bin/python bench/bench_unit_ids.py                 # 100,000 and 1,000,000 persons
    .venv/bin/python bench/bench_unit_ids.py --persons 100000

Both steps read each distinct ID once in its canonical form (core/data/ids.py: a number and
its text one ID, text folded: NFKC, case folded, invisible marks and white space removed):
``privacy_unit`` groups a table's rows into persons (each person has two rows here) and
``unit_keys`` turns the persons' IDs into the ledger's keyed hashes.  Three kinds of IDs:
whole numbers (an int64 column: no text to fold), ASCII text (``P0000001``) and text with an
accented letter (``Pé0000001``: the Unicode steps run).  Timings depend on the machine and
its load: the script prints the CPU count and the load average.  Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from core.data.units import privacy_unit
from core.ledger.units import unit_keys


def _ids(kind: str, n: int) -> np.ndarray:
    if kind == "integers":
        return np.repeat(np.arange(n, dtype=np.int64) * 7 + 1000, 2)
    prefix = "P" if kind == "ASCII text" else "Pé"
    return np.repeat(np.array([f"{prefix}{i:07d}" for i in range(n)], dtype=object), 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--persons", type=int, nargs="*", default=[100_000, 1_000_000])
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; each person has 2 rows")
    head = f"{'IDs':<22} {'persons':>10} {'privacy_unit s':>15} {'unit_keys s':>12} {'persons/s':>11}"
    print(head)
    print("-" * len(head))
    for n in args.persons:
        for kind in ("integers", "ASCII text", "accented text"):
            ids = _ids(kind, n)
            t = time.perf_counter()
            unit = privacy_unit(ids, "id")
            t_unit = time.perf_counter() - t
            t = time.perf_counter()
            keys = unit_keys(unit.ids[unit.codes], secret=b"s" * 32, dataset="bench")
            t_keys = time.perf_counter() - t
            assert unit.n_units == keys.size == n
            print(f"{kind:<22} {n:>10,} {t_unit:>15.2f} {t_keys:>12.2f} {n / (t_unit + t_keys):>11,.0f}")


if __name__ == "__main__":
    main()
