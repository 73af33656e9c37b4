"""Benchmark of the privacy audit: sampler throughput and the table of claimed ε
against the audited 99%-confidence lower bound.

    .venv/bin/python bench/bench_audit.py [--trials 200000] [--real-trials 20000]

Prints two tables:

1. Trials per second of each mechanism's audit sampler: the trial-vectorized sampler of
   ``core.audit`` and the real ``core.mechanisms`` function called once per trial.
2. For each mechanism (on its worst-case neighbouring pair, ``core.audit.scenario``) and
   each broken variant of ``tests/audit/test_audit.py`` (where they live; the library never
   holds them), the claimed ε and δ, the audited lower bound and the number of trials.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tests", "audit"))  # the broken variants live in tests/audit/test_audit.py

from core.audit import (  # noqa: E402
    AUDIT_MECHANISMS,
    RealAggregator,
    audit,
    run_scenario,
    scenario,
)

EPS, DELTA, T, GAMMA, ETA = 1.0, 1e-2, 1, 1.0, 0.25


def _real_for(scn) -> RealAggregator:
    s = scn.settings
    if scn.mechanism == "lnmax":
        return RealAggregator("lnmax", gamma=s["gamma"], delta=1e-5)
    if scn.mechanism in ("a-stab", "baseline"):
        return RealAggregator(scn.mechanism, epsilon=s["epsilon"], delta=s["delta"])
    extra = {"eta": s["eta"]} if scn.mechanism == "btt-soft" else {}
    return RealAggregator(scn.mechanism, epsilon=s["epsilon"], delta=s["delta"], T=s["T"],
                          calibration=s["calibration"], **extra)


def _configs():
    for name in sorted(AUDIT_MECHANISMS):
        for cal in (("paper", "tight") if name.startswith("btt") else ("tight",)):
            label = f"{name} ({cal})" if name.startswith("btt") else name
            yield label, scenario(name, epsilon=EPS, delta=DELTA, T=T, calibration=cal, gamma=GAMMA, eta=ETA)


def throughput(n_fast: int, n_real: int) -> None:
    print(f"Audit sampler throughput (trials per second; one input of the worst-case pair)")
    print(f"{'mechanism':<22} {'queries':>7} {'vectorized':>14} {'real code':>12} {'speed-up':>9}")
    for label, scn in _configs():
        t0 = time.perf_counter()
        scn.sampler(scn.pair.a, n_fast, 0)
        fast = n_fast / (time.perf_counter() - t0)
        real = _real_for(scn)
        t0 = time.perf_counter()
        real(scn.pair.a, n_real, 0)
        slow = n_real / (time.perf_counter() - t0)
        print(f"{label:<22} {scn.pair.a.shape[0]:>7} {fast:>14,.0f} {slow:>12,.0f} {fast / slow:>8.0f}x")
    print()


def table(n_trials: int, n_real: int) -> None:
    rows = []
    for label, scn in _configs():
        t0 = time.perf_counter()
        r = run_scenario(scn, n_trials=n_trials, rng=1)
        rows.append((label, "vectorized", scn.pair.name, r, time.perf_counter() - t0))
    for label, scn in _configs():
        real = _real_for(scn)
        t0 = time.perf_counter()
        r = audit(real, scn.pair.a, scn.pair.b, claimed_epsilon=scn.claimed_epsilon,
                  claimed_delta=scn.claimed_delta, n_trials=n_real, rng=2, name=label)
        rows.append((label, "real code", scn.pair.name, r, time.perf_counter() - t0))
    try:
        import test_audit as broken
    except ImportError as exc:  # pragma: no cover - the tests directory is part of the repository
        print(f"(broken variants unavailable: {exc})")
        broken = None
    if broken is not None:
        for key, build in broken.CAUGHT_CASES.items():
            case = build()
            t0 = time.perf_counter()
            r = case.run(n_trials=n_trials)
            rows.append((case.name, "BROKEN (test)", key, r, time.perf_counter() - t0))
    print(f"Claimed ε against the audited 99%-confidence lower bound (ε = {EPS}, δ = {DELTA}, T = {T}, "
          f"γ = {GAMMA}, η = {ETA})")
    print(f"{'mechanism':<34} {'sampler':<14} {'pair':<24} {'claimed ε':>9} {'claimed δ':>10} "
          f"{'audited ε ≥':>11} {'trials':>8} {'verdict':<10} {'s':>5}")
    for label, kind, pair, r, secs in rows:
        verdict = "passes" if r.passed else "CAUGHT"
        print(f"{label:<34} {kind:<14} {pair:<24} {r.claimed_epsilon:>9.3f} {r.claimed_delta:>10.3g} "
              f"{r.epsilon_lower_bound:>11.3f} {r.n_trials:>8} {verdict:<10} {secs:>5.1f}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=200_000, help="trials per input, vectorized samplers")
    ap.add_argument("--real-trials", type=int, default=20_000, help="trials per input, real code")
    args = ap.parse_args(argv)
    throughput(max(args.trials, 100_000) * 5, min(args.real_trials, 2_000))
    table(args.trials, args.real_trials)


if __name__ == "__main__":
    main()
