"""Shared fixtures: the project root on sys.path, a served app, and the browser check.

* ``app_server``: starts ``streamlit run app.py`` on a free port in a subprocess, waits
  for ``/_stcore/health`` and yields the base URL; the process is stopped afterwards.
  Each test that uses it gets its own port, so parallel workers never collide.
* ``chromium_executable``: the Debian ``chromium`` browser at ``/usr/bin/chromium``; the
  browser tests fail (never skip) with a message naming the package when it is absent.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # `from pages import _state`, as under `streamlit run app.py`


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


@pytest.fixture
def app_server(tmp_path):
    """Serve ``app.py`` with Streamlit on a free port; yield its base URL."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(tmp_path / "streamlit.log", "wb")
    env = dict(os.environ, HOME=str(tmp_path), STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
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
                            + (tmp_path / "streamlit.log").read_text(errors="replace")[-3000:])
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
def chromium_executable() -> str:
    """Path of the Debian chromium; fails with the package name when it is missing."""
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(
            f"{CHROMIUM} not found: the browser tests need Debian's `chromium` package "
            "(install it with `apt-get install chromium`; .ci/run does this)."
        )
    return str(CHROMIUM)
