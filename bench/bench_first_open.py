"""The first opening of every page on every bundled teaching set, as a class meets it.

For each data set (the default generated two Gaussians, then each bundled teaching set) a fresh
Python process plays a fresh server with one session (Streamlit's ``AppTest``, demo seed on):
it opens the Data page (for a bundled set, then picks the set: this row includes reading it and
training its teachers), then opens every other page once, in menu order, and times each first
opening.  Where the Compare page asks before it runs (its price first, then a click), the click
is timed as its own row, "Compare: run".

Both **wall seconds** and **CPU seconds** are printed (CPU: user + system time of the whole
process, every thread: the page's script thread and the numeric libraries' threads).  On a
machine shared with other work the wall time grows with the load and the CPU time does not:
quote the CPU column there, and re-run on a quiet machine for the wall column.

Nothing is asserted: the table is printed (markdown).

Run from the repository root::

    .venv/bin/python bench/bench_first_open.py                        # every set, every page
    .venv/bin/python bench/bench_first_open.py --sets digits mnist_5k
    .venv/bin/python bench/bench_first_open.py --root /path/to/other/checkout   # e.g. the code before a change
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETS = ["default", "breast_cancer", "digits", "iris", "wine", "mnist_5k"]
PAGES = [
    ("A leak", "app_pages/7_A_leak.py"),
    ("Ensemble", "app_pages/2_Ensemble.py"),
    ("Private labeling", "app_pages/3_Private_labeling.py"),
    ("One query", "app_pages/7_One_query.py"),
    ("Bounds", "app_pages/4_Bounds.py"),
    ("Sweeps", "app_pages/9_Sweeps.py"),
    ("Compare", "app_pages/5_Compare.py"),
    ("Student & export", "app_pages/6_Student_and_export.py"),
    ("Privacy audit", "app_pages/8_Privacy_audit.py"),
]


def one_set(root: Path, name: str) -> list[dict]:
    """Every page's first opening on ``name`` in this process (a fresh server)."""
    sys.path.insert(0, str(root))
    os.chdir(root)
    from streamlit.testing.v1 import AppTest

    rows = []

    def timed(page: str, action) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        at = action()
        rows.append({"set": name, "page": page, "wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu,
                     "error": [str(e.message)[:120] for e in at.exception] if at.exception else []})

    at = AppTest.from_file(str(root / "app.py"), default_timeout=1800)
    at.session_state["demo_seed"] = True
    if name == "default":
        timed("Data", at.run)
    else:
        at.run()

        def pick():
            at.radio(key="w_data_ui_source").set_value("Bundled dataset").run()
            return at.selectbox(key="w_data_ui_name").set_value(name).run()

        timed("Data", pick)
    for page, path in PAGES:
        if not (root / path).is_file():
            continue
        timed(page, lambda: at.switch_page(path).run())
        if page == "Compare" and any(getattr(b, "key", None) == "compare_go" for b in at.button):
            timed("Compare: run", lambda: at.button(key="compare_go").click().run())
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", nargs="*", default=SETS)
    parser.add_argument("--root", default=str(ROOT), help="the checkout to time (default: this one)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    root = Path(args.root).resolve()
    if args.one:
        print("ROWS " + json.dumps(one_set(root, args.one)), flush=True)
        return
    rows = []
    for name in args.sets:
        out = subprocess.run([sys.executable, __file__, "--root", str(root), "--one", name], capture_output=True,
                             text=True)
        line = next((x for x in out.stdout.splitlines() if x.startswith("ROWS ")), None)
        if line is None:
            print(f"{name}: failed\n{out.stderr[-2000:]}", file=sys.stderr)
            continue
        rows += json.loads(line[5:])
        print(f"{name} done", file=sys.stderr, flush=True)
    print(f"First opening of each page ({root.name}), a fresh process per set, demo seed on; "
          f"machine load at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
    print("| set | page | wall s | CPU s | note |")
    print("|---|---|---:|---:|---|")
    for r in rows:
        print(f"| {r['set']} | {r['page']} | {r['wall']:.1f} | {r['cpu']:.1f} | {'; '.join(r['error'])} |")


if __name__ == "__main__":
    main()
