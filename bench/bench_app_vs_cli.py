"""App vs CLI: the time to train the same ensemble (teachers + votes on the public queries).

A user reported that training in the app takes about twice the CLI's time for the same
ensemble.  This bench trains, for each dataset, the very same ensemble (same private rows,
same public queries, same learner and k) both ways:

* **CLI**: ``python -m core label ... --k 250 --learner logistic_regression --mechanism gnmax
  --epsilon 4 --delta 1e-5 --out /tmp/x.csv`` in a subprocess, on CSV files holding the
  app's own private rows and public queries.  The subprocess runs the real CLI
  (``core.cli.main``) with ``core.pipeline.train`` and ``core.pipeline.mechanism_inputs``
  wrapped by timers, so the figure is training + votes exactly (no interpreter start-up,
  no CSV reading).  The whole subprocess wall time minus that of ``python -m core
  --version`` is printed too.
* **App**: the Streamlit app driven by ``streamlit.testing.v1.AppTest`` as a user would:
  pick the data, open the
  Ensemble page, choose the learner and k, press "Train ensemble"; the timed figure is the
  ``AppTest.run()`` of that click, the rerun that trains (what the user waits for).  The
  same timers on ``core.pipeline`` give the training + votes time inside that rerun.

Datasets: two Gaussians generated (n = 20,000, the app's default generator; 10 % public,
10 % test) and UCI Adult (the app's "Bundled two-file job", missing values imputed, '?'
as missing; the first 2,000 rows of adult_test as public queries).  (The bundled
breast_cancer has 455 private rows after the split, too few for k = 250.)

Measured, not asserted.  Run: .venv/bin/python bench/bench_app_vs_cli.py [--profile]
(``--profile`` prints the top of a cProfile of each app training rerun.)
"""

from __future__ import annotations

import cProfile
import io
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pandas as pd
from streamlit.testing.v1 import AppTest

from core import pipeline

LEARNER = "logistic_regression"
K = 250
CLI_ARGS = ["--k", str(K), "--learner", LEARNER, "--mechanism", "gnmax", "--epsilon", "4", "--delta", "1e-5"]

# Timers on the two calls that make an ensemble; the app's pages call them through
# ``core.pipeline`` at call time, so wrapping the module attributes times them in both.
PHASES: dict[str, float] = {}
SEEN: dict[str, object] = {}  # the private table and public rows the app trained and voted on


def _timed(name: str, fn):
    def wrapper(*args, **kwargs):
        if name == "votes":  # mechanism_inputs(mechanism, teachers, table, public_X)
            SEEN["table"], SEEN["public_X"] = args[2], args[3]
        elif name == "votes+predictions":  # votes_and_predictions(teachers, table, public_X)
            SEEN["table"], SEEN["public_X"] = args[1], args[2]
        t = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            PHASES[name] = PHASES.get(name, 0.0) + time.perf_counter() - t
    wrapper.__wrapped__ = fn
    return wrapper


pipeline.train = _timed("train", pipeline.train)
pipeline.mechanism_inputs = _timed("votes", pipeline.mechanism_inputs)
# The app gets the votes and the per-teacher predictions from one pass of the teachers.
pipeline.votes_and_predictions = _timed("votes+predictions", pipeline.votes_and_predictions)

# The per-teacher predictions the pages ask for (a diagnostic, not in the CLI), timed too.
try:
    from core.ensemble.teacher_ensemble import TeacherEnsemble

    TeacherEnsemble.predictions = _timed("predictions", TeacherEnsemble.predictions)
except (ImportError, AttributeError):  # core is being reorganised: the figure is then 0
    pass

# AppTest runs the script in a thread of its own: a cProfile of the caller's thread sees only
# it waiting.  With --profile the profiler is switched on inside the script thread instead.
PROFILER: list[cProfile.Profile] = []


def _profile_script_thread() -> None:
    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

    original = ScriptRunner._run_script

    def _run_script(self, rerun_data):
        if not PROFILER:
            return original(self, rerun_data)
        PROFILER[0].enable()
        try:
            return original(self, rerun_data)
        finally:
            PROFILER[0].disable()

    ScriptRunner._run_script = _run_script

# The CLI, run in a subprocess with the same timers; prints the phases as JSON on stderr's last line.
CLI_WRAPPER = r"""
import json, sys, time
from core import pipeline
phases = {}
def timed(name, fn):
    def wrapper(*a, **k):
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            phases[name] = phases.get(name, 0.0) + time.perf_counter() - t
    return wrapper
pipeline.train = timed("train", pipeline.train)
pipeline.mechanism_inputs = timed("votes", pipeline.mechanism_inputs)
from core.cli import main
rc = main(sys.argv[1:])
sys.stderr.write("\nPHASES " + json.dumps(phases) + "\n")
raise SystemExit(rc)
"""

PY = sys.executable


def check(at: AppTest) -> None:
    if at.exception:
        raise RuntimeError(at.exception[0].message)


def texts(elements) -> list[str]:
    return [e.value for e in elements]


# ----------------------------------------------------------------------------- app


def app_session() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=900)
    at.session_state["demo_seed"] = True
    at.run()  # first launch: trains the default ensemble (untimed)
    check(at)
    return at


def choose_adult(at: AppTest) -> None:
    at.switch_page("app_pages/1_Data.py").run()
    at.radio(key="w_data_ui_source").set_value("Bundled two-file job").run()
    check(at)
    at.radio(key="w_data_ui_job_missing").set_value("impute").run()
    check(at)
    if not at.checkbox(key="w_data_ui_markers").value:
        at.checkbox(key="w_data_ui_markers").check().run()
    check(at)


def app_train(at: AppTest, profile: bool) -> tuple[float, dict[str, float], str]:
    """Open the Ensemble page, set learner and k, press Train: (rerun s, phases, profile text)."""
    at.switch_page("app_pages/2_Ensemble.py").run()
    check(at)
    at.selectbox(key="w_ens_ui_learner").set_value(LEARNER).run()
    check(at)
    at.number_input(key="w_ens_ui_k").set_value(K)
    at.button[0].click()  # the form's "Train ensemble"
    PHASES.clear()
    prof = cProfile.Profile() if profile else None
    PROFILER[:] = [prof] if prof else []
    t = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - t
    PROFILER.clear()
    check(at)
    if f"Trained {K} teachers." not in texts(at.success):
        raise RuntimeError(f"the app did not train: {texts(at.success)} {texts(at.error)} {texts(at.info)}")
    report = ""
    if prof:
        out = io.StringIO()
        st = pstats.Stats(prof, stream=out).sort_stats("cumulative")
        st.print_stats(45)
        out.write("\n--- by own time ---\n")
        st.sort_stats("tottime").print_stats(25)
        report = out.getvalue()
    return elapsed, dict(PHASES), report


# ----------------------------------------------------------------------------- CLI


def write_csvs(table, public_X, folder: Path) -> tuple[Path, Path]:
    """The app's private rows (labels by class name) and public rows, as the CLI's input files."""
    frame = table.features.copy()
    frame[table.label_column] = [table.class_names[i] for i in table.labels]
    private, public = folder / "private.csv", folder / "public.csv"
    frame.to_csv(private, index=False)
    pd.DataFrame(public_X).to_csv(public, index=False)
    return private, public


def cli_startup() -> float:
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run([PY, "-m", "core", "--version"], cwd=ROOT, check=True, capture_output=True)
        best = min(best, time.perf_counter() - t)
    return best


def cli_train(private: Path, public: Path, extra: list[str]) -> tuple[float, dict[str, float]]:
    out = Path(tempfile.gettempdir()) / "x.csv"
    cmd = [PY, "-c", CLI_WRAPPER, "label", "--private", str(private), "--public", str(public),
           *CLI_ARGS, *extra, "--out", str(out), "--seed", "1", "--no-progress"]
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"CLI failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    line = [x for x in proc.stderr.splitlines() if x.startswith("PHASES ")][-1]
    return wall, json.loads(line[len("PHASES "):])


# ----------------------------------------------------------------------------- main


def main() -> None:
    profile = "--profile" in sys.argv[1:]
    if profile:
        _profile_script_thread()
    startup = cli_startup()
    rows, profiles = [], []
    with tempfile.TemporaryDirectory() as tmp:
        at = app_session()  # default data: two Gaussians, n = 20,000
        for title, select, extra in (
            ("two_gaussians n=20,000", None, []),
            ("adult_train (impute)", choose_adult, ["--missing", "impute", "--missing-marker", "?"]),
        ):
            if select is not None:
                select(at)
            SEEN.clear()
            app_s, app_phases, prof = app_train(at, profile)
            table, public_X = SEEN["table"], SEEN["public_X"]
            folder = Path(tmp) / title.split()[0]
            folder.mkdir()
            private, public = write_csvs(table, public_X, folder)
            cli_wall, cli_phases = cli_train(private, public, extra)
            rows.append({
                "dataset": title, "n": table.n_rows, "m": len(public_X), "app_s": app_s,
                "app_core": app_phases.get("train", 0.0) + app_phases.get("votes", 0.0),
                "app_phases": app_phases, "cli_s": cli_phases.get("train", 0.0) + cli_phases.get("votes", 0.0),
                "cli_phases": cli_phases, "cli_wall": cli_wall,
            })
            profiles.append((title, prof))

    print(f"Training {K} teachers ({LEARNER}) + votes on the public queries, app vs CLI "
          f"({os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f})\n")
    head = (f"{'dataset':<24} {'n':>6} {'m':>5} {'learner':<20} {'k':>4} {'CLI s':>7} {'app s':>7} "
            f"{'app/CLI':>8}")
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['dataset']:<24} {r['n']:>6} {r['m']:>5} {LEARNER:<20} {K:>4} {r['cli_s']:>7.2f} "
              f"{r['app_s']:>7.2f} {r['app_s'] / r['cli_s']:>8.2f}")
    print("\nTarget: app/CLI ≤ 1.2.  CLI s = core.pipeline.train + mechanism_inputs inside the CLI;"
          " app s = the AppTest rerun of the Train click.")
    print("\nDetail (seconds):")
    for r in rows:
        print(f"  {r['dataset']}: CLI train {r['cli_phases'].get('train', 0):.2f} + votes "
              f"{r['cli_phases'].get('votes', 0):.2f}; CLI subprocess wall {r['cli_wall']:.2f} - start-up "
              f"{startup:.2f} = {r['cli_wall'] - startup:.2f}; app train {r['app_phases'].get('train', 0):.2f} + "
              f"separate votes pass {r['app_phases'].get('votes', 0):.2f} + per-teacher predictions (one pass; the votes "
              f"are counted from them) "
              f"{r['app_phases'].get('predictions', 0):.2f}, rest of the rerun "
              f"{r['app_s'] - r['app_core'] - r['app_phases'].get('predictions', 0):.2f}")
    for title, prof in profiles:
        if prof:
            print(f"\n===== cProfile of the app's training rerun: {title} =====\n{prof}")


if __name__ == "__main__":
    main()
