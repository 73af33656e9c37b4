"""Red-team (rt36) findings on serving safety: each test FAILS on purpose until the lab is fixed.

1. An exported ``DEMO`` variable (any value, ``DEMO=0`` included) makes a plain ``make run``
   listen on 0.0.0.0: the Makefile guards ``HOST`` against the shell's environment
   (``HOST = ...``) but ``DEMO`` is read from it.
2. On a server whose uploads need the password (here: loopback with the password set), a
   session that never gave it still gets its file bytes accepted by Streamlit's upload route
   (``PUT /_stcore/upload_file/<session>/<id>``, 204) and held in the server's memory: the
   gate is the page's (no file box drawn), not the server's.  Repeated 45 MB uploads grow the
   server by about their size: memory exhaustion by anyone who can open a session.
3. A WebSocket from another origin on the same host (``http://127.0.0.1:<another port>``, a
   different origin) is accepted: Streamlit's origin check compares host names only
   (localhost, 127.0.0.1, 0.0.0.0 and the machine's own addresses, any port).

Every request goes to 127.0.0.1.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT, free_port
from test_served import listening_addresses, make_run, open_session, request


def _command(*args: str, **env: str) -> str:
    environment = {k: v for k, v in os.environ.items() if k not in ("DEMO", "HOST")} | env
    out = subprocess.run(["make", "-n", "-o", ".venv/.run-deps", "run", *args], cwd=ROOT, env=environment,
                         capture_output=True, text=True, check=True).stdout
    return next(line for line in out.splitlines() if "streamlit run" in line)


@pytest.mark.parametrize("value", ["1", "0", "false"])
def test_rt36_an_exported_DEMO_variable_does_not_open_the_network(value):
    # README: "Serving the network is always a setting you type"; a shell's HOST is ignored, DEMO is not.
    assert "--server.address '127.0.0.1'" in _command(DEMO=value)


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _server_pid(port: int) -> int:
    out = subprocess.run(["ss", "-ltnpH", f"sport = :{port}"], capture_output=True, text=True).stdout
    return int(out.split("pid=")[1].split(",")[0])


@pytest.mark.slow
def test_rt36_a_locked_session_cannot_put_file_bytes_into_the_server_nor_another_origin_open_a_socket(tmp_path):
    with make_run(tmp_path, password="correct horse") as (url, port, log):
        assert listening_addresses(port) == {"127.0.0.1"}
        pid = _server_pid(port)
        _, headers, _ = request(port, "GET", "/_stcore/health")
        cookie = next(v for k, v in headers.items() if k.lower() == "set-cookie").split(";")[0]
        token = cookie.split("=", 1)[1]
        blob = os.urandom(45 * 1024 * 1024)
        with open_session(url) as sid:  # this session never gave the password: its uploads are "refused"
            before = _rss_mib(pid)
            statuses = []
            for i in range(4):
                body = (b"--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f.csv\"\r\n"
                        b"Content-Type: text/csv\r\n\r\n" + blob + b"\r\n--B--\r\n")
                statuses.append(request(port, "PUT", f"/_stcore/upload_file/{sid}/f{i}",
                                        {"Content-Type": "multipart/form-data; boundary=B", "Cookie": cookie,
                                         "X-Xsrftoken": token}, body)[0])
            grown = _rss_mib(pid) - before
            # another origin on the same host (another port): per docs/design.md §10.6 its socket is refused
            from websockets.exceptions import InvalidStatus
            from websockets.sync.client import connect

            other = f"http://127.0.0.1:{free_port()}"
            try:
                with connect(url.replace("http", "ws", 1) + "/_stcore/stream", subprotocols=["streamlit"],
                             additional_headers={"Origin": other}, open_timeout=30):
                    other_origin_accepted = True
            except InvalidStatus:
                other_origin_accepted = False
        problems = []
        if any(s == 204 for s in statuses) or grown > 60:
            problems.append(f"locked session's uploads answered {statuses}; server grew {grown:.0f} MiB")
        if other_origin_accepted:
            problems.append(f"WebSocket from another origin {other} accepted")
        assert not problems, problems
