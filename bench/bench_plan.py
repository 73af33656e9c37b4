"""Speed of the plan: one prediction per control change (core.plan.predict).

A page on a real job recomputes the predictions of the mechanism on screen whenever a
control moves; the target is ≤ 1 s per control change on the project's two-core
machine for m ≤ 10,000 public rows.  Prints one table: for each mechanism and m, the
seconds of ``predict`` (20 simulated runs, the default) after a warm-up call (imports
and cached calibrations excluded, as in a running app), the best of 3, and the seconds
of the advice that a prediction judged not useful adds (computed only then).  Also a
sweep of 5 ε values (a privacy–utility curve), and certified-gnmax, whose data-dependent
analysis runs once per draw, in full and under a 0.5 s budget (``max_seconds``: at least
one draw runs).

Run: .venv/bin/python bench/bench_plan.py   (no assertions; numbers vary by machine)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_aggregators import best_of as timed_best_of  # noqa: E402  (the aggregation bench's timer)
from core.plan import TeacherQuality, predict, sweep  # noqa: E402

CASES = [
    ("gnmax", {"epsilon": 2.0, "delta": 1e-5}),
    ("confident-gnmax", {"epsilon": 2.0, "delta": 1e-5}),
    ("btt", {"epsilon": 2.0, "delta": 1e-5, "T": 10}),
    ("lnmax", {"epsilon": 2.0, "delta": 1e-5}),
]


def best_of(fn, repeat: int = 3) -> float:
    """The best of ``repeat`` timed calls, after one untimed warm-up (imports, the accountant's caches)."""
    fn()
    return timed_best_of(fn, repeat)


def main() -> None:
    q = TeacherQuality()
    rows = []
    for m in (1_000, 10_000):
        sizes = dict(n=100_000, m=m, k=250, n_classes=2, quality=q)
        for name, s in CASES:
            t = best_of(lambda: predict(name, s, **sizes, advise=False))
            ta = best_of(lambda: predict(name, s, **sizes, advise=True), repeat=1)
            useful = predict(name, s, **sizes, advise=False).useful
            rows.append((name, m, t, ta if not useful else float("nan"), useful))
        t = best_of(lambda: sweep("gnmax", {"delta": 1e-5}, vary="epsilon", values=[0.5, 1, 2, 4, 8], **sizes))
        rows.append(("gnmax sweep of 5 ε", m, t, float("nan"), None))
        cert = {"epsilon": 4.0, "delta": 1e-5}
        t = best_of(lambda: predict("certified-gnmax", cert, **sizes, advise=False), repeat=1)
        rows.append(("certified-gnmax", m, t, float("nan"), None))
        t = best_of(lambda: predict("certified-gnmax", cert, **sizes, advise=False, max_seconds=0.5), repeat=1)
        d = predict("certified-gnmax", cert, **sizes, advise=False, max_seconds=0.5).draws
        rows.append((f"  with max_seconds=0.5 ({d} draws)", m, t, float("nan"), None))
    print(f"{'prediction':<34} {'m':>7} {'seconds':>8} {'with advice':>12}  useful")
    for name, m, t, ta, useful in rows:
        adv = "—" if ta != ta else f"{ta:.3f}"
        print(f"{name:<34} {m:>7,} {t:>8.3f} {adv:>12}  {'' if useful is None else ('yes' if useful else 'no')}")


if __name__ == "__main__":
    main()
