"""A class on one server: N headless-Chromium sessions opening the app together.

For each N (default 1, 5, 10) a fresh ``streamlit run app.py`` is started (so the first
session of every row pays for training the default teachers, as on a lecturer's freshly
started server), then N browser contexts of one headless Chromium (each its own Streamlit
session, like N students' tabs) open the app's address at the same moment.  Measured:

* **first result**: seconds from ``goto`` to the Data page showing the default run's
  "Answered" metric (the default view's first complete result), per session; median and max;
* **server CPU**: user + system CPU seconds of the server process (``/proc/<pid>/stat``)
  from its start until every session shows its first result and the server is idle again;
  per session, and per *additional* session: ``(CPU(N) - CPU(1)) / (N - 1)``, the cost of one
  more student once the first has opened the view;
* **server memory**: resident set size when idle after the N sessions, and its peak (VmHWM);
* **ε step** (N = 1 only, after the first result): one session opens Private labeling and
  moves the ε slider with the keyboard, one ArrowRight at a time, ``--steps`` times; the time
  from the key press to a still page (the last change to the page, with Streamlit's
  "running" indicator gone and nothing changing for 0.6 s); median and max.

The browsers run on the same machine as the server, where in a lecture room each runs on
its student's own machine: on two cores, N cold Chromium pages share the CPU with each
other and with the server.  Two more sets of rows separate the server from the browsers:

* **control**: the same Chromium sessions against a Streamlit page holding only a title and
  one metric: what N browsers cost on this machine whatever the app does;
* **protocol**: N sessions opened together through Streamlit's own websocket protocol
  (``/_stcore/stream``, as the app's page does) without a browser: the time until the server
  has *sent* the first result, as a room whose browsers run elsewhere sees it (add one
  browser's own drawing time, the Chromium N = 1 row minus the protocol N = 1 row).

Nothing is asserted: the tables are printed.

Run from the repository root::

    .venv/bin/python bench/bench_app_load.py                 # N = 1, 5, 10; 10 ε steps
    .venv/bin/python bench/bench_app_load.py --sessions 1 5  # some of them
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
WAIT_MS = 240_000  # a session that has no first result after 4 minutes counts as failed
TICKS = os.sysconf("SC_CLK_TCK")

# window.__lastChange: performance.now() of the last change anywhere in the page.
WATCH_CHANGES = """() => {
  window.__lastChange = performance.now();
  new MutationObserver(() => { window.__lastChange = performance.now(); })
    .observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
}"""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
            return resp.status == 200
    except OSError:
        return False


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (its threads included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (its children, theirs, ...)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError):
                pass
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parents.items() if pp == p]
        found += kids
        todo += kids
    return found


def browser_cpu_seconds(server: int) -> float:
    """CPU seconds of this bench's browser processes (the Playwright driver and Chromium) so far."""
    total = 0.0
    for pid in set(descendants(os.getpid())) - {server, *descendants(server)}:
        try:
            total += cpu_seconds(pid)
        except OSError:
            pass
    return total


def memory_mib(pid: int) -> tuple[float, float]:
    """(resident, peak resident) MiB of process ``pid``."""
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(status["VmRSS"].split()[0]) / 1024, int(status["VmHWM"].split()[0]) / 1024


def wait_idle(pid: int, quiet_s: float = 1.5, limit_s: float = 120.0) -> None:
    """Wait until the server has used (almost) no CPU for ``quiet_s`` seconds."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        before = cpu_seconds(pid)
        time.sleep(quiet_s)
        if cpu_seconds(pid) - before < 0.05 * quiet_s:
            return


class Server:
    """``streamlit run app.py`` on a free port, in its own HOME, logs in a temporary folder."""

    def __init__(self, folder: Path, app: Path = ROOT / "app.py") -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(folder / f"streamlit_{self.port}.log", "wb")
        env = dict(os.environ, HOME=str(folder), STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(app), "--server.port", str(self.port),
             "--server.address", "127.0.0.1", "--server.headless", "true", "--server.fileWatcherType", "none",
             "--browser.gatherUsageStats", "false"],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while not healthy(self.url):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not start (see {self.log.name})")
            time.sleep(0.3)
        wait_idle(self.proc.pid, quiet_s=1.0)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


async def settle(page, quiet_ms: float = 600) -> float:
    """Wait for a still page; return performance.now() of its last change."""
    status = page.get_by_test_id("stStatusWidget")
    while True:
        await page.wait_for_timeout(100)
        if await status.count():
            continue
        now, last = await page.evaluate("() => [performance.now(), window.__lastChange]")
        if now - last >= quiet_ms and not await status.count():
            return last


async def open_session(browser, url: str) -> tuple[object, float | None]:
    """A new session opening ``url``; seconds to the first result (None: none within WAIT_MS)."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    t0 = time.perf_counter()
    try:
        await page.goto(url, timeout=WAIT_MS)
        answered = page.get_by_test_id("stMainBlockContainer").get_by_test_id("stMetric").filter(has_text="Answered")
        await answered.first.wait_for(state="visible", timeout=WAIT_MS)
        return page, time.perf_counter() - t0
    except Exception as exc:  # noqa: BLE001 - a session without a result is reported, not raised
        print(f"  a session had no first result: {type(exc).__name__}: {str(exc).splitlines()[0]}", flush=True)
        return page, None


def wire_session(url: str, started: float, out: list, menus: list | None = None) -> None:
    """One session through Streamlit's own websocket protocol, no browser: what the server sends.

    It opens ``/_stcore/stream`` as the app's page does, asks for the default page's run and
    appends the seconds (from ``started``) until the server has sent the "Answered" metric,
    or None if the run finished without it or took longer than WAIT_MS.  With ``menus``,
    appends the page names of every menu the server sent (tests read them).
    """
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from websockets.sync.client import connect

    ask = BackMsg()
    ask.rerun_script.query_string = ""
    ask.rerun_script.page_script_hash = ""
    ask.rerun_script.page_name = ""
    found = None
    try:
        with connect(url.replace("http", "ws", 1) + "/_stcore/stream", subprotocols=["streamlit"],
                     max_size=None, open_timeout=WAIT_MS / 1000) as ws:
            ws.send(ask.SerializeToString())
            deadline = started + WAIT_MS / 1000
            while found is None:
                msg = ForwardMsg()
                msg.ParseFromString(ws.recv(timeout=max(0.1, deadline - time.perf_counter())))
                kind = msg.WhichOneof("type")
                if menus is not None and kind in ("navigation", "new_session"):
                    pages = msg.navigation.app_pages if kind == "navigation" else msg.new_session.app_pages
                    menus.append([p.page_name for p in pages])
                if kind == "script_finished":
                    break
                if (kind == "delta" and msg.delta.WhichOneof("type") == "new_element"
                        and msg.delta.new_element.WhichOneof("type") == "metric"
                        and msg.delta.new_element.metric.label == "Answered"):
                    found = time.perf_counter() - started
    except Exception as exc:  # noqa: BLE001 - a session without a result is reported, not raised
        print(f"  a wire session had no first result: {type(exc).__name__}: {exc}", flush=True)
    out.append(found)


def wire_row(n: int, folder: Path) -> dict:
    """N protocol sessions opened together against a fresh server (threads, one each)."""
    import threading

    server = Server(folder)
    pid = server.proc.pid
    try:
        cpu0 = cpu_seconds(pid)
        out: list = []
        started = time.perf_counter()
        threads = [threading.Thread(target=wire_session, args=(server.url, started, out)) for _ in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wait_idle(pid)
        cpu = cpu_seconds(pid) - cpu0
        rss, peak = memory_mib(pid)
    finally:
        server.stop()
    return {"n": n, "firsts": [t for t in out if t is not None], "cpu": cpu, "browser_cpu": None,
            "rss": rss, "peak": peak, "steps": []}


async def epsilon_steps(page, steps: int) -> list[float]:
    """Open Private labeling, press ArrowRight on the ε slider ``steps`` times; seconds to a still page."""
    await page.get_by_test_id("stSidebarNav").get_by_role("link", name="Private labeling").click()
    main = page.get_by_test_id("stMainBlockContainer")
    await main.get_by_test_id("stMetric").filter(has_text="Answered").first.wait_for(timeout=WAIT_MS)
    await page.evaluate(WATCH_CHANGES)
    await settle(page)
    box = page.get_by_test_id("stSlider").filter(has_text="ε (privacy budget)").first
    slider, value = box.get_by_role("slider"), box.get_by_test_id("stSliderThumbValue")
    times = []
    for _ in range(steps):
        before = await value.inner_text()
        await slider.focus()
        t0 = await page.evaluate("() => performance.now()")
        await slider.press("ArrowRight")
        last = await settle(page)
        after = await value.inner_text()
        if after == before:
            raise RuntimeError("the ε slider did not move")
        times.append(max(0.0, last - t0) / 1000)
    return times


CONTROL_APP = '''import streamlit as st

st.title("Data")
st.metric("Answered", 1)
'''


async def one_row(n: int, steps: int, folder: Path, app: Path = ROOT / "app.py") -> dict:
    from playwright.async_api import async_playwright

    server = Server(folder, app)
    pid = server.proc.pid
    try:
        cpu0 = cpu_seconds(pid)
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            try:
                opened = await asyncio.gather(*(open_session(browser, server.url) for _ in range(n)))
                firsts = [t for _, t in opened if t is not None]
                await asyncio.to_thread(wait_idle, pid)
                cpu = cpu_seconds(pid) - cpu0
                browser_cpu = browser_cpu_seconds(pid)
                rss, peak = memory_mib(pid)
                step_times = await epsilon_steps(opened[0][0], steps) if steps else []
            finally:
                await browser.close()
    finally:
        server.stop()
    return {"n": n, "firsts": firsts, "cpu": cpu, "browser_cpu": browser_cpu, "rss": rss, "peak": peak, "steps": step_times}


def table(title: str, rows: list[dict]) -> None:
    single = next((r for r in rows if r["n"] == 1), None)
    print(f"\n{title}\n")
    print("| sessions | with a first result | first result median s | max s | median / single | server CPU s | "
          "CPU s per additional session | server RSS MiB (peak) | browsers' CPU s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        f, n = r["firsts"], r["n"]
        med = statistics.median(f) if f else float("nan")
        ratio = "" if single is None or not single["firsts"] else f"{med / statistics.median(single['firsts']):.1f}×"
        extra = "" if single is None or n == 1 else f"{(r['cpu'] - single['cpu']) / (n - 1):.2f}"
        browsers = "" if r["browser_cpu"] is None else f"{r['browser_cpu']:.1f}"
        print(f"| {n} | {len(f)} of {n} | {med:.1f} | {max(f) if f else float('nan'):.1f} | {ratio} | {r['cpu']:.1f} | "
              f"{extra} | {r['rss']:.0f} ({r['peak']:.0f}) | {browsers} |")
    for r in rows:
        if r["steps"]:
            st = r["steps"]
            print(f"\nε step on Private labeling (N = {r['n']}, {len(st)} steps): median {statistics.median(st):.2f} s, "
                  f"max {max(st):.2f} s; each: {', '.join(f'{x:.2f}' for x in st)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, nargs="*", default=[1, 5, 10],
                        help="N for the Chromium rows (none: leave them out)")
    parser.add_argument("--wire-sessions", type=int, nargs="*", default=[1, 5, 10, 30],
                        help="N for the rows without a browser (none: leave them out)")
    parser.add_argument("--steps", type=int, default=10, help="ε steps timed in the Chromium N = 1 row")
    parser.add_argument("--no-control", action="store_true",
                        help="leave out the Chromium rows of the control page (a page with one metric)")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; server and browsers on it",
          flush=True)
    browser_rows, wire_rows, control_rows = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        control = Path(tmp) / "control" / "app.py"
        control.parent.mkdir()
        control.write_text(CONTROL_APP)
        for n in [] if args.no_control else args.sessions:
            control_rows.append(asyncio.run(one_row(n, 0, Path(tmp), control)))
            print(f"  Chromium, control page, N = {n}: {len(control_rows[-1]['firsts'])} of {n} first results",
                  flush=True)
        for n in args.sessions:
            browser_rows.append(asyncio.run(one_row(n, args.steps if n == 1 else 0, Path(tmp))))
            r = browser_rows[-1]
            print(f"  Chromium, N = {n}: {len(r['firsts'])} of {n} first results, server CPU {r['cpu']:.1f} s",
                  flush=True)
        for n in args.wire_sessions:
            wire_rows.append(wire_row(n, Path(tmp)))
            r = wire_rows[-1]
            print(f"  protocol, N = {n}: {len(r['firsts'])} of {n} first results, server CPU {r['cpu']:.1f} s",
                  flush=True)
    if browser_rows:
        table("Headless Chromium sessions on the server's machine (first result: the Answered metric shown)",
              browser_rows)
    if control_rows:
        table("Control: the same Chromium sessions on a Streamlit page holding only a title and one metric "
              "(what the browsers cost on this machine, whatever the app)", control_rows)
    if wire_rows:
        table("Sessions through Streamlit's protocol, no browser (first result: the Answered metric sent; "
              "a student's own browser adds its drawing time)", wire_rows)


if __name__ == "__main__":
    main()
