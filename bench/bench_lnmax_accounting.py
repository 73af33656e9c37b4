"""LNMax's accounting: two Laplace coordinates per answer against the pure 2γ view (docs/design.md §3.4).

Prints two tables:
1. ε of n answers at γ = 0.05, δ = 1e-5 by the three bounds (PATE's, the optimal composition
   of n pure 2γ steps, the Laplace privacy-loss distributions) and the seconds the map takes
   (cold cache).
2. The γ that spends ε = 2 on n answers (the registry's ``spend``) in the pure view and in the
   Laplace view, their ratio (less noise for the same ε) and the seconds of the search (cold).

Run: .venv/bin/python bench/bench_lnmax_accounting.py
"""

from __future__ import annotations

import time

from core.accounting import pate


def _cold() -> None:
    from core.accounting import composition

    pate._lnmax_guarantee.cache_clear()
    pate._lnmax_gamma.cache_clear()
    composition._laplace_pld_epsilon.cache_clear()
    composition._exact_epsilon.cache_clear()


def main() -> None:
    import dp_accounting.pld.privacy_loss_distribution  # noqa: F401  (import time not counted)

    delta = 1e-5
    print("ε of n LNMax answers at γ = 0.05, δ = 1e-5")
    print(f"{'n':>8} | {'PATE bound':>10} | {'pure 2γ (KOV)':>13} | {'Laplace PLD':>11} | {'saved':>6} | {'seconds':>7}")
    for n in (10, 100, 500, 1_000, 10_000, 100_000):
        _cold()
        t0 = time.perf_counter()
        g = pate.lnmax_guarantee(0.05, n_answers=n, delta=delta)
        t = time.perf_counter() - t0
        p = g.parts
        print(f"{n:>8,} | {p['pate_simple']:>10.3f} | {p['exact']:>13.3f} | {p['laplace_pld']:>11.3f} | "
              f"{1 - p['laplace_pld'] / p['exact']:>6.1%} | {t:>7.3f}")
    print()
    print("γ that spends ε = 2 on n answers, δ = 1e-5")
    print(f"{'n':>8} | {'γ pure 2γ':>10} | {'γ Laplace':>10} | {'ratio':>6} | {'seconds':>7}")
    for n in (10, 100, 1_000, 10_000, 100_000):
        _cold()
        pure = pate.pate_gamma_for_epsilon(2.0, n_answers=n, delta=delta)
        from scipy import optimize

        from core.accounting.composition import optimal_composition_delta

        hi = 2.0 * pure
        while optimal_composition_delta(2.0 * hi, n, 2.0) <= delta:
            hi *= 2.0
        if optimal_composition_delta(2.0 * pure, n, 2.0) <= delta:
            pure = optimize.brentq(lambda g: optimal_composition_delta(2.0 * g, n, 2.0) - delta, pure, hi, rtol=1e-12)
        t0 = time.perf_counter()
        gamma = pate.lnmax_gamma_for_epsilon(2.0, n_answers=n, delta=delta)
        t = time.perf_counter() - t0
        print(f"{n:>8,} | {pure:>10.5f} | {gamma:>10.5f} | {gamma / pure:>6.3f} | {t:>7.3f}")


if __name__ == "__main__":
    main()
