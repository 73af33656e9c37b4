"""App responsiveness: the time of one rerun after moving the ε slider (issue 5's bench).

The default dataset of the app has m = 2,000 public queries (two Gaussians, n = 20,000,
10 % public).  The teachers are trained and their votes cached by a first, untimed
visit; then every timed rerun moves the privacy slider to a value not seen before (so
the labeling really runs: a value seen before would come from the session's memo) and
times ``AppTest.run()``, which executes ``app.py`` and the page like a served app does.

Rows: the Private labeling page with each mechanism (for LNMax the slider is γ, its only
privacy knob), the Data page (its result follows ε; ε is changed on the Private labeling
page, so its row times the switch back to the Data page), the Compare page (five
mechanisms at the new ε; its privacy–utility curve is on a fixed ε grid and cached) and
the Bounds page (theory curves and the loop solver at the new ε).  Target: ≤ 1 s.

Measured, not asserted.  Run: .venv/bin/python bench/bench_app.py [reruns]
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402


PAGES = {
    "labeling": "app_pages/3_Private_labeling.py",
    "data": "app_pages/1_Data.py",
    "compare": "app_pages/5_Compare.py",
    "bounds": "app_pages/4_Bounds.py",
}
EPSILON = "w_privacy_epsilon"


def session() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.session_state["demo_seed"] = True
    at.run()
    assert not at.exception, at.exception
    return at


def check(at: AppTest) -> None:
    if at.exception:
        raise RuntimeError(at.exception[0].message)


def epsilons(n: int, start: float) -> list[float]:
    """n distinct slider values (step 0.1) near ``start``."""
    return [round(start + 0.1 * (i + 1), 1) for i in range(n)]


def time_labeling(at: AppTest, mechanism: str, reruns: int) -> list[float]:
    at.switch_page(PAGES["labeling"]).run()
    at.radio(key="w_privacy_mechanism").set_value(mechanism).run()
    check(at)
    times = []
    if mechanism == "lnmax":
        values = [round(0.05 + 0.005 * (i + 1), 3) for i in range(reruns)]
        key = "w_privacy_gamma"
    else:
        values, key = epsilons(reruns, 4.0 if mechanism != "btt-soft" else 6.0), EPSILON
    for v in values:
        at.slider(key=key).set_value(v)
        t = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - t)
        check(at)
    at.radio(key="w_privacy_mechanism").set_value("btt").run()
    return times


def time_data_page(at: AppTest, reruns: int) -> list[float]:
    times = []
    for v in epsilons(reruns, 5.0):
        at.switch_page(PAGES["labeling"]).run()
        at.slider(key=EPSILON).set_value(v).run()
        at.switch_page(PAGES["data"])
        t = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - t)
        check(at)
    return times


def time_page(at: AppTest, page: str, reruns: int, start: float) -> list[float]:
    at.switch_page(PAGES[page]).run()
    check(at)
    times = []
    for v in epsilons(reruns, start):
        at.slider(key=EPSILON).set_value(v)
        t = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - t)
        check(at)
    return times


def main() -> None:
    reruns = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    t = time.perf_counter()
    at = session()
    first = time.perf_counter() - t
    m = int({x.label: x.value for x in at.metric}["Public queries (m)"])
    rows = [
        ("Private labeling: BTT hard labels (tight), ε", time_labeling(at, "btt", reruns)),
        ("Private labeling: BTT soft labels (tight), ε", time_labeling(at, "btt-soft", reruns)),
        ("Private labeling: PATE LNMax, γ", time_labeling(at, "lnmax", reruns)),
        ("Private labeling: composition baseline, ε", time_labeling(at, "baseline", reruns)),
        ("Data page after ε changed (BTT)", time_data_page(at, reruns)),
        ("Compare: 5 mechanisms, ε", time_page(at, "compare", reruns, 7.0)),
        ("Bounds: curves + loop solver, ε", time_page(at, "bounds", reruns, 8.0)),
    ]
    print(f"App rerun after a privacy-slider change, m = {m:,} public queries, votes cached "
          f"({reruns} reruns each; {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f})")
    print(f"(first run of the app, training the default ensemble: {first:.2f} s)\n")
    print(f"{'page / mechanism':<48} {'median s':>9} {'best s':>8} {'worst s':>8}")
    print("-" * 76)
    for name, times in rows:
        print(f"{name:<48} {statistics.median(times):>9.3f} {min(times):>8.3f} {max(times):>8.3f}")
    print("\nTarget: ≤ 1 s per rerun.")


if __name__ == "__main__":
    main()
