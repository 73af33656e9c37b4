"""Shared fixtures: the project root on sys.path, a served app, and the browser check.

* ``app_server``: starts ``streamlit run app.py`` on a free port in a subprocess, waits
  for ``/_stcore/health`` and yields the base URL; the process is stopped afterwards.
  Each test that uses it gets its own port, so parallel workers never collide.
* ``chromium_executable``: the Debian ``chromium`` browser at ``/usr/bin/chromium``; the
  browser tests fail (never skip) with a message naming the package when it is absent.
* ``downloads``: the bytes behind every ``st.download_button`` an ``AppTest`` run shows.
* ``lab``: a factory of fresh ``AppTest`` sessions of ``app.py`` in demo mode
  (:func:`start_app`); ``settle`` and ``go_to``: the browser tests' waits.
* ``browser_page``: a headless Chromium page for the browser tests (what it showed is kept on a
  failure); ``open_data_page``, ``upload_two_files`` and ``train_teachers``: the steps every
  walk through the app starts with.
* ``fresh_ledgers`` (automatic): every test starts with an empty ledger store of its own
  (``PRIVATE_LABEL_LAB_LEDGER`` set to a file in the test's temporary folder, inherited by
  every app and command it starts) and a fresh in-memory default ledger, so the app's
  "spent on this data so far" counts only the test's own runs.  The real per-user store
  (``~/.local/share/private-label-lab``) is never written: the variable is set for the
  whole session before any test runs, and ``XDG_DATA_HOME`` points into it too.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path(os.environ.get("CHROMIUM") or "/usr/bin/chromium")  # make test installs it when missing
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

# JavaScript for page.evaluate: records every text the progress bar shows while it exists in
# window.__progressTexts (a fast run can remove the bar between two polls of the page).
PROGRESS_RECORDER = """() => {
  window.__progressTexts = [];
  const seen = () => document.querySelectorAll('[data-testid="stProgress"]').forEach(
    el => window.__progressTexts.push(el.innerText));
  new MutationObserver(seen).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # `from app_pages import _session`, as under `streamlit run app.py`

# Never the real per-user ledger store: this session's own, before any test (or anything a
# test starts) can open the default one.
_SESSION_DATA = tempfile.mkdtemp(prefix="private-label-lab-tests-")
os.environ["PRIVATE_LABEL_LAB_LEDGER"] = os.path.join(_SESSION_DATA, "ledger.sqlite")
os.environ["XDG_DATA_HOME"] = _SESSION_DATA
os.environ.pop("PRIVATE_LABEL_LAB_LEDGER_KEY", None)


def free_port() -> int:
    """A TCP port that is free right now on localhost."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
            return resp.status == 200 and resp.read().strip() == b"ok"
    except OSError:
        return False


@contextlib.contextmanager
def serve_app(folder: Path, log_name: str = "streamlit.log"):
    """Serve ``app.py`` with Streamlit on a free port (loopback only) while the block runs; yield its URL.

    The server inherits this process's environment (the test's ledger store among it),
    with ``HOME`` in ``folder``; it is stopped when the block ends.
    """
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(folder / log_name, "wb")
    env = dict(os.environ, HOME=str(folder), STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
            "--server.port", str(port),
            "--server.address", "127.0.0.1",
            "--server.headless", "true",
            "--server.fileWatcherType", "none",
            "--browser.gatherUsageStats", "false",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 120
        while not _healthy(url):
            if proc.poll() is not None:
                log.flush()
                pytest.fail(f"streamlit exited with code {proc.returncode}:\n"
                            + (folder / log_name).read_text(errors="replace")[-3000:])
            if time.monotonic() > deadline:
                pytest.fail(f"streamlit did not answer {url}/_stcore/health within 120 s")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture
def app_server(tmp_path):
    """Serve ``app.py`` with Streamlit on a free port; yield its base URL."""
    with serve_app(tmp_path) as url:
        yield url


def start_app(*, demo: bool | None = True, timeout: int = 600):
    """A fresh ``AppTest`` session of ``app.py`` after its first run (on the Data page).

    ``demo`` sets the reproducible demo seed before the first run (None: the app's own
    default).  The project root must be on ``sys.path`` (the ``lab`` fixture puts it there),
    as under ``streamlit run app.py``.
    """
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    if demo is not None:
        at.session_state["demo_seed"] = demo
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.fixture
def lab(monkeypatch):
    """A factory of fresh app sessions in demo mode, on the Data page."""
    monkeypatch.syspath_prepend(str(ROOT))  # `from app_pages import _session`, as under `streamlit run app.py`
    return start_app


# Init script of every browser page (:func:`_browser_page`): counts the app's script runs from
# the attribute Streamlit keeps on its root (``data-test-script-state``: "running", "notRunning",
# ...), and when the state last changed.  ``mark`` is the count at the end of the last ``settle``.
RUN_RECORDER = """(() => {
  const r = window.__stRuns = {started: 0, state: null, at: performance.now(), mark: 0};
  new MutationObserver(() => {
    const app = document.querySelector('[data-testid="stApp"]');
    const s = app ? app.getAttribute('data-test-script-state') : null;
    if (s !== r.state) {
      if (s === 'running') r.started++;
      r.state = s;
      r.at = performance.now();
    }
  }).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-test-script-state']});
})();"""

# True once a run has started since the last settle, the app is not running, and nothing has
# changed for 300 ms (since the state's last change and since ``since``, when settle began): a
# rerun that follows at once (st.rerun, a second click) starts within that time.
SETTLED_JS = """(since) => {
  const r = window.__stRuns;
  const app = document.querySelector('[data-testid="stApp"]');
  if (!r || !app) return false;
  return r.started > r.mark && app.getAttribute('data-test-script-state') === 'notRunning'
    && performance.now() - Math.max(r.at, since) > 300;
}"""


def settle(page, timeout: int = 60_000) -> None:
    """Wait until the app has finished its current run (browser tests).

    Typing into a widget while a run re-renders the page could lose the keystrokes, so every
    step starts from a settled page.  A page made by :func:`_browser_page` records the app's
    runs (:data:`RUN_RECORDER`): once a run has started since the last settle and the app has
    been idle for 300 ms, the page is settled.  Otherwise (no run recorded within 1.5 s: the
    step started none, or its run is still going) Streamlit's "Running" status widget is
    waited on until it is gone, as on a page without the recorder.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect

    status = page.get_by_test_id("stStatusWidget")
    try:
        since = page.evaluate("() => performance.now()")
        page.wait_for_function(SETTLED_JS, arg=since, timeout=1_500, polling=50)
    except PlaywrightTimeout:
        pass  # no run recorded that ended: the status widget below says when it does
    expect(status).to_have_count(0, timeout=timeout)
    page.evaluate("() => { if (window.__stRuns) window.__stRuns.mark = window.__stRuns.started; }")


def go_to(page, title: str, heading: str, timeout: int = 60_000) -> None:
    """Open a page from the sidebar's menu and wait for its heading and the end of its run."""
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=title).click()
    page.get_by_role("heading", name=heading, exact=True).wait_for(timeout=timeout)
    settle(page, timeout)


@contextlib.contextmanager
def _browser_page(chromium: str, folder: Path, *, wait: int, width: int = 1400, height: int = 1500,
                  downloads: bool = False):
    """A page of a headless Chromium (Playwright) whose waits all take up to ``wait`` ms.

    On a failure inside the block, what the page showed is kept beside the test's log
    (``failure.png`` and ``failure.txt`` in ``folder``); the browser is closed either way.
    """
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": width, "height": height}, accept_downloads=downloads)
        page.add_init_script(RUN_RECORDER)  # settle() reads the app's runs from it
        page.set_default_timeout(wait)
        expect.set_options(timeout=wait)
        try:
            yield page
        except Exception:
            with contextlib.suppress(Exception):
                page.screenshot(path=str(folder / "failure.png"))
                (folder / "failure.txt").write_text(page.locator("body").inner_text())
            raise
        finally:
            browser.close()


@pytest.fixture
def browser_page(chromium_executable, tmp_path):
    """``with browser_page(wait=ms, width=…, height=…, downloads=…) as page``: a Chromium page (browser tests)."""
    return functools.partial(_browser_page, chromium_executable, tmp_path)


def open_data_page(page, url: str, *, wait: int, first_result: bool = False, demo_seed: bool = False) -> None:
    """Open the served app at ``url`` and wait for the Data page's first run to end.

    ``first_result``: wait for the first result's "Answered" metric too (it shows without a
    click); ``demo_seed``: then turn on the sidebar's reproducible demo seed, so that runs on
    teaching data repeat exactly.
    """
    from playwright.sync_api import expect

    page.goto(url)
    page.get_by_role("heading", name="Data", exact=True).wait_for()
    if first_result:
        expect(page.get_by_test_id("stMetric").filter(has_text="Answered")).to_be_visible()
    settle(page, wait)
    if demo_seed:
        page.get_by_test_id("stSidebar").get_by_text("Reproducible demo seed").click()
        expect(page.get_by_text("Demo seed on: runs on teaching data repeat exactly;")).to_be_visible()
        settle(page, wait)


def upload_two_files(page, folder: Path, *, wait: int) -> None:
    """On the Data page, upload ``folder``'s ``public.csv`` then ``private.csv``; wait until it is loaded."""
    page.get_by_text("Upload CSV", exact=True).click()
    settle(page, wait)
    uploaders = page.get_by_test_id("stFileUploader")
    uploaders.filter(has_text="Public unlabeled CSV").locator("input[type=file]").set_input_files(
        str(folder / "public.csv"))
    settle(page, wait)
    uploaders.filter(has_text="Private labeled CSV").locator("input[type=file]").set_input_files(
        str(folder / "private.csv"))
    page.get_by_role("heading", name="Loaded: private.csv").wait_for()
    settle(page, wait)


def train_teachers(page, k: int, *, wait: int) -> None:
    """Open the Ensemble page, train ``k`` teachers and wait for the page to say so."""
    from playwright.sync_api import expect

    go_to(page, "Ensemble", "Ensemble of teachers", wait)
    k_box = page.get_by_role("spinbutton", name="Number of teachers k")
    k_box.fill(str(k))
    k_box.press("Tab")
    page.get_by_role("button", name="Train ensemble").click()
    expect(page.get_by_text(f"Trained {k} teachers.")).to_be_visible()
    settle(page, wait)


@pytest.fixture
def chromium_executable() -> str:
    """Path of the Debian chromium; fails with the package name when it is missing."""
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(
            f"{CHROMIUM} not found: the browser tests need Debian's `chromium` package "
            "(`make test` installs it with apt-get; by hand: `apt-get install chromium`)."
        )
    return str(CHROMIUM)


@pytest.fixture
def downloads(monkeypatch):
    """``{url: (data, mimetype, filename)}`` of every file an ``AppTest`` run offers.

    ``st.download_button`` stores its data in the runtime's media file storage and puts
    only a URL in the page; this records what is stored, so a test can read the bytes
    behind a button (``downloads[button.proto.url]``).
    """
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    stored: dict[str, tuple] = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def load_and_get_id(self, path_or_data, mimetype, kind, filename=None):
        file_id = original(self, path_or_data, mimetype, kind, filename)
        stored[self.get_url(file_id)] = (path_or_data, mimetype, filename)
        return file_id

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", load_and_get_id)
    return stored


@pytest.fixture(autouse=True)
def fresh_ledgers(tmp_path_factory, monkeypatch):
    """A ledger store of the test's own (``PRIVATE_LABEL_LAB_LEDGER``), and a fresh default ledger.

    The app, the command line and the library charge the configured store; tests in one
    worker share the process, so each starts with an empty store of its own (its path is
    ``os.environ["PRIVATE_LABEL_LAB_LEDGER"]``).
    """
    from core.ledger import forget_ledgers

    store = tmp_path_factory.mktemp("ledger") / "ledger.sqlite"
    monkeypatch.setenv("PRIVATE_LABEL_LAB_LEDGER", str(store))
    forget_ledgers()
    yield


def pytest_collection_modifyitems(config, items):
    """Run the long tests first: browser tests, then the other ``slow`` ones, then the rest.

    ``make test`` hands out tests to two pytest-xdist workers in collection order, one at a
    time as each worker frees up (``--dist loadgroup``; an ``xdist_group`` goes whole, largest
    first).  A long test that starts last leaves the other worker idle until it ends; started
    first, the many short tests fill in around it and both workers finish together.  The sort
    is stable: within each tier the tests keep their files' order.  Nothing is skipped or
    changed, only the order, and every test sets up its own state (``fresh_ledgers``).
    """
    def tier(item) -> int:
        if item.get_closest_marker("browser"):
            return 0
        return 1 if item.get_closest_marker("slow") else 2

    items.sort(key=tier)
