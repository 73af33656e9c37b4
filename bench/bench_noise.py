"""Throughput of the exact noise samplers (core/noise.py, docs/design.md §6).

Prints:
1. draws/s of the exact discrete Laplace (several scales) and discrete Gaussian, with
   PCG64 (int seed) and the secure default (ChaCha20, ``check_rng(None)``), next to the
   old inexact method (difference of two numpy geometric draws) for reference, and the
   peak traced memory of one call;
2. ``btt_label`` on 1e6 queries × 10 classes, k = 250, tight calibration, T = m/50,
   ε = T (the throughput setting of bench/bench_aggregators.py), secure vs PCG64.

Run: .venv/bin/python bench/bench_noise.py
"""

from __future__ import annotations

import math
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]

from core import accounting, noise  # noqa: E402
from core.mechanisms import btt_label  # noqa: E402
from bench_aggregators import best_of  # noqa: E402  (one timing helper for the benches)

N = 1_000_000


def old_geometric(scale, n, gen):
    q = -math.expm1(-1.0 / scale)
    return gen.geometric(q, n).astype(np.int64) - gen.geometric(q, n).astype(np.int64)


def peak_mib(fn):
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return peak


def main() -> None:
    print(f"Exact samplers, {N:,} draws per call (best of 3); M draws/s; peak MiB of one call (tracemalloc)\n")
    print(f"{'sampler':<22} | {'PCG64 M/s':>9} | {'ChaCha20 M/s':>12} | {'old geometric M/s':>17} | {'peak MiB':>8}")
    print("-" * 82)
    pcg = np.random.default_rng(1)
    sec = noise.check_rng(None)
    rows = [(f"discrete_laplace {s:g}", lambda g, s=s: noise.discrete_laplace(s, N, g), s) for s in (0.5, 1, 2.47, 7.3, 40, 1000)]
    rows += [(f"discrete_gaussian {s:g}", lambda g, s=s: noise.discrete_gaussian(s, N, g), None) for s in (0.5, 2.47, 7.3, 40)]
    for name, fn, s in rows:
        t_pcg = best_of(lambda: fn(pcg))
        t_sec = best_of(lambda: fn(sec))
        old = f"{N / best_of(lambda: old_geometric(s, N, pcg)) / 1e6:>17.1f}" if s is not None else f"{'':>17}"
        print(f"{name:<22} | {N / t_pcg / 1e6:>9.2f} | {N / t_sec / 1e6:>12.2f} | {old} | {peak_mib(lambda: fn(pcg)):>8.1f}")
    print()

    from bench_aggregators import votes

    m = 1_000_000
    counts = votes(m)
    T = m // 50
    eps, delta = float(T), 1e-5
    accounting.calibrate_btt(eps, delta=delta, T=T, m=m, calibration="tight")  # cached: time the aggregation
    t_pcg = best_of(lambda: btt_label(counts, epsilon=eps, delta=delta, T=T, calibration="tight", rng=1))
    t_sec = best_of(lambda: btt_label(counts, epsilon=eps, delta=delta, T=T, calibration="tight", rng=None))
    t_sec_noise = best_of(lambda: noise.discrete_laplace(2 * accounting.calibrate_btt(eps, delta=delta, T=T, m=m, calibration="tight").noise_scale, m, None))
    print(f"btt_label, m = {m:,} queries × 10 classes, k = 250, tight, T = m/50, ε = T, δ = 1e-5")
    print(f"  PCG64 (rng=1): {t_pcg:.3f} s    ChaCha20 (rng=None): {t_sec:.3f} s    "
          f"(of which the 1e6 query-noise draws with ChaCha20: {t_sec_noise:.3f} s)")


if __name__ == "__main__":
    main()
