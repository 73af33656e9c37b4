"""Throughput of the Gaussian aggregators and speed of the RDP accountant.

Prints one table:
* gnmax_label and confident_gnmax_label (fixed and filter accounting) on 1e6 queries ×
  10 classes, k = 250 teachers: seconds, queries/s and peak traced memory (tracemalloc,
  numpy allocations included; the input counts are allocated before tracing starts);
* the RDP accountant on 10,000 queries: the data-independent guarantees (one curve,
  one conversion), a composition of 10,000 per-query curves (10,000 × 297 orders,
  summed order by order, then converted), and the σ inverse (uncached).

Targets: ≤ 0.5 s per aggregator run on 1e6 queries, ≤ 0.05 s for the accountant.
Run: .venv/bin/python bench/bench_gaussian.py   (no assertions; numbers vary by machine)
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np



from core.accounting import rdp  # noqa: E402
from core.mechanisms.gaussian import confident_gnmax_label, gnmax_label  # noqa: E402
from bench_aggregators import votes  # noqa: E402  (the same vote model as the aggregation bench)


def timed(fn, repeat: int = 3):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return best, peak, out


def main() -> None:
    m = 1_000_000
    counts = votes(m)
    rows = []
    cases = [
        ("gnmax_label σ=40", lambda: gnmax_label(counts, sigma=40.0, delta=1e-5, rng=0)),
        ("confident_gnmax fixed", lambda: confident_gnmax_label(
            counts, threshold=200, sigma1=150.0, sigma2=40.0, delta=1e-5, rng=0)),
        ("confident_gnmax filter", lambda: confident_gnmax_label(
            counts, threshold=200, sigma1=150.0, sigma2=40.0, delta=1e-5, accounting="filter",
            order=8.0, budget=rdp.filter_budget_for_epsilon(8.0, order=8.0, delta=1e-5), rng=0)),
    ]
    for name, fn in cases:
        sec, peak, r = timed(fn)
        rows.append((name, f"{m:,}", f"{sec:.3f}", f"{m / sec:,.0f}", f"{peak / 2**20:.0f} MiB",
                     f"ans {r.n_answered:,} ⊥ {r.n_bottom:,} unproc {r.n_unprocessed:,} ε={r.epsilon:.3g}"))

    n = 10_000
    sec, peak, g = timed(lambda: rdp.confident_gnmax_guarantee(150.0, 40.0, n_queries=n, delta=1e-5), repeat=5)
    rows.append(("RDP guarantee (data-indep.)", f"{n:,}", f"{sec:.4f}", "", f"{peak / 2**20:.1f} MiB", f"ε={g.epsilon:.4g}"))

    per_query = np.random.default_rng(0).uniform(0.5, 1.0, size=(n, 1))

    def compose():
        curves = per_query * (rdp.ORDERS / (2 * 150.0 ** 2) + rdp.ORDERS / 40.0 ** 2)[None, :]
        return rdp.rdp_to_dp(curves.sum(axis=0), delta=1e-5)

    sec, peak, (eps, order) = timed(compose, repeat=5)
    rows.append(("RDP compose 10k curves", f"{n:,}", f"{sec:.4f}", "", f"{peak / 2**20:.1f} MiB", f"ε={eps:.4g} at α={order:g}"))

    def inverse():
        rdp._gnmax_sigma.cache_clear()
        rdp._u_for_epsilon.cache_clear()
        return rdp.gnmax_sigma_for_epsilon(2.0, n_answers=n, delta=1e-5)

    sec, peak, s = timed(inverse, repeat=3)
    rows.append(("σ for ε=2 (uncached)", f"{n:,}", f"{sec:.4f}", "", f"{peak / 2**20:.1f} MiB", f"σ={s:.6g}"))

    head = ("what", "queries", "seconds", "queries/s", "peak mem", "result")
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    line = lambda r: " | ".join(str(v).ljust(w) for v, w in zip(r, widths))
    print(line(head))
    print("-+-".join("-" * w for w in widths))
    for r in rows:
        print(line(r))


if __name__ == "__main__":
    main()
