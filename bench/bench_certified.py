"""Certified Confident-GNMax: speed of the data-dependent RDP and the smooth sensitivity.

Prints one table for 10,000 queries × 10 classes, 250 teachers (target: ≤ 0.5 s for the
data-dependent RDP + smooth sensitivity at one order; best of three runs, memory from a separate traced run), on three vote distributions:
confident teachers (each right w.p. 0.97, 1% near-ties, as in bench_aggregators),
moderately confident (right w.p. 0.7) and Dirichlet(1) votes.  Columns: seconds and
peak memory (tracemalloc) of the data-dependent RDP over the full order grid, E(D) at
one order, S(D), and the whole certified labeling run; plus E(D), S(D) and the distance
that attains S (non-private diagnostics of synthetic data).

Run (from the repository root): PYTHONPATH=. .venv/bin/python bench/bench_certified.py
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

from core.accounting import data_dependent, gnmax_sensitivity, smooth_sensitivity
from core.mechanisms import certified, certified_params

M, K, C = 10_000, 250, 10
SIGMA1, SIGMA2, T = 150.0, 40.0, 200.0
ORDER = 20.0
BETA = 0.4 / ORDER


def votes(kind: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "dirichlet(1)":
        p = rng.dirichlet(np.ones(C), size=M)
        return np.array([rng.multinomial(K, row) for row in p])
    p_right = {"confident": 0.97, "moderate": 0.7}[kind]
    truth = rng.integers(C, size=M)
    p = np.where(rng.uniform(size=M) < 0.99, p_right, 0.5)
    right = rng.binomial(K, p)
    counts = np.zeros((M, C), dtype=np.int64)
    counts[np.arange(M), truth] = right
    rest = np.array([rng.multinomial(K - r, np.full(C - 1, 1 / (C - 1))) for r in right])
    others = (truth[:, None] + 1 + np.arange(C - 1)[None, :]) % C
    np.add.at(counts, (np.repeat(np.arange(M), C - 1), others.ravel()), rest.ravel())
    return counts


def timed(fn, repeat: int = 3):
    """Best of ``repeat`` untraced runs (seconds), then one traced run (peak MiB)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return out, best, peak / 2**20


def main() -> None:
    gnmax_sensitivity.gnmax_sensitivity(sigma=SIGMA2, n_classes=C, order=ORDER)  # warm the (public) analysis cache
    params = certified_params.CertifiedParameters(threshold=T, sigma1=SIGMA1, sigma2=SIGMA2, order=ORDER, budget=5.0,
                                           beta=BETA, sigma_s=10.0, sigma_l=0.2, delta_prime=1e-6,
                                           delta_dprime=1e-6, delta_conversion=1e-6)
    params.guarantee()  # warm: the first call imports dp-accounting (seconds, once)
    print(f"m = {M:,} queries, k = {K} teachers, {C} classes; σ1 = {SIGMA1:g}, σ2 = {SIGMA2:g}, t = {T:g}, "
          f"λ = {ORDER:g}, β = {BETA:g}")
    head = f"{'votes':<14}{'step':<34}{'seconds':>9}{'peak MiB':>10}"
    print(head)
    print("-" * len(head))
    for kind in ("confident", "moderate", "dirichlet(1)"):
        counts = votes(kind)
        _, t1, m1 = timed(lambda counts=counts: (data_dependent.gnmax_rdp_data_dependent(counts, sigma=SIGMA2),
                                   data_dependent.threshold_rdp_data_dependent(counts, threshold=T, sigma1=SIGMA1)))
        terms, t2, m2 = timed(lambda counts=counts: smooth_sensitivity.certified_rdp_terms(
            counts, threshold=T, sigma1=SIGMA1, sigma2=SIGMA2, order=ORDER))
        prof, t3, m3 = timed(lambda counts=counts: smooth_sensitivity.smooth_sensitivity_profile(
            counts, threshold=T, sigma1=SIGMA1, sigma2=SIGMA2, order=ORDER, beta=BETA))
        _, t4, m4 = timed(lambda counts=counts: certified.certified_confident_gnmax_label(counts, params=params, rng=0))
        rows = [("data-dependent RDP, 297 orders", t1, m1), ("E(D) terms at λ", t2, m2),
                ("smooth sensitivity S(D)", t3, m3), ("E(D) + S(D)", t2 + t3, max(m2, m3)),
                ("certified labeling run", t4, m4)]
        for name, t, mem in rows:
            print(f"{kind:<14}{name:<34}{t:>9.3f}{mem:>10.1f}")
        e = float(sum(x.sum() for x in terms))
        print(f"{'':<14}(non-private) E(D) = {e:.4g}, S(D) = {prof.smooth:.4g} at d = {prof.argmax_d}, "
              f"{prof.ls_total.size} distances walked")


if __name__ == "__main__":
    main()
