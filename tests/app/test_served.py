"""The served app, started with ``make run``'s own command: who can reach it, and Streamlit's protections.

* ``make run`` listens on 127.0.0.1 only (read from the listening sockets of /proc/net/tcp and
  /proc/net/tcp6, never by connecting to another address), even with a ``HOST`` variable
  exported by the shell; ``make run HOST=0.0.0.0`` listens on every interface, and the class
  mode ``make run DEMO=1`` does too.  Each says so as it starts.
* On the served app: Streamlit's XSRF protection is on (an upload without the token of the
  page's cookie is refused), cross-origin requests are refused (no
  Access-Control-Allow-Origin for another site, and its WebSocket is turned away: Streamlit
  compares host names, so this holds for another host, not for another port of this one), and the
  upload size limit (50 MB, ``.streamlit/config.toml``) is in force.
* In Chromium, on a network-served app: without a password a private upload is refused
  (no file input is drawn) while the teaching data is served; with the password set by
  whoever started the server, a session that gives it uploads a file.

Every request goes to 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import CHROMIUM_ARGS, ROOT, _healthy, free_port, settle

PASSWORD_ENV = "PRIVATE_LABEL_LAB_PASSWORD"
WAIT = 120_000  # ms: a freshly started server's first page on a loaded two-core machine


def listening_addresses(port: int) -> set[str]:
    """The local addresses of every TCP socket listening on ``port`` (Linux: /proc/net/tcp, tcp6)."""
    found = set()
    for name, size in (("tcp", 4), ("tcp6", 16)):
        table = Path("/proc/net") / name
        if not table.exists():
            continue
        for line in table.read_text().splitlines()[1:]:
            fields = line.split()
            address, state = fields[1], fields[3]
            host, port_hex = address.split(":")
            if state != "0A" or int(port_hex, 16) != port:  # 0A: LISTEN
                continue
            raw = bytes.fromhex(host)  # the kernel writes each 32-bit word in host (little-endian) order
            raw = b"".join(raw[i:i + 4][::-1] for i in range(0, size, 4))
            found.add(str(ipaddress.ip_address(raw)))
    return found


@contextlib.contextmanager
def make_run(tmp_path: Path, *args: str, password: str | None = None, env: dict | None = None):
    """``make run`` with ``args`` on a free port (this venv's Python; the venv is not rebuilt).

    Yields ``(url on 127.0.0.1, port, log text reader)``; the server's process group is ended after.
    """
    port = free_port()
    environment = {k: v for k, v in os.environ.items() if k not in (PASSWORD_ENV, "DEMO", "HOST")}
    environment.update(HOME=str(tmp_path), STREAMLIT_BROWSER_GATHER_USAGE_STATS="false", **(env or {}))
    if password is not None:
        environment[PASSWORD_ENV] = password
    log_path = tmp_path / f"make_run_{port}.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            ["make", "-s", "-o", ".venv/.run-deps", "run", f"PORT={port}", f"PY={sys.executable}", *args],
            cwd=ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while not _healthy(url):
                if proc.poll() is not None:
                    pytest.fail(f"make run exited with {proc.returncode}:\n{log_path.read_text(errors='replace')[-3000:]}")
                if time.monotonic() > deadline:
                    pytest.fail(f"make run did not answer {url}/_stcore/health within 120 s")
                time.sleep(0.5)
            yield url, port, lambda: log_path.read_text(errors="replace")
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def request(port: int, method: str, path: str, headers: dict | None = None, body: bytes | None = None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


@contextlib.contextmanager
def open_session(url: str):
    """A session of the served app, open through Streamlit's WebSocket as a page holds it; yields its id."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from websockets.sync.client import connect

    ask = BackMsg()
    ask.rerun_script.query_string = ""
    ask.rerun_script.page_script_hash = ""
    ask.rerun_script.page_name = ""
    with connect(url.replace("http", "ws", 1) + "/_stcore/stream", subprotocols=["streamlit"]) as ws:
        ws.send(ask.SerializeToString())
        while True:
            msg = ForwardMsg()
            msg.ParseFromString(ws.recv(timeout=60))
            if msg.WhichOneof("type") == "new_session":
                break
        yield msg.new_session.initialize.session_id


def streamlit_line(*args: str, **env: str) -> str:
    """The ``streamlit run`` line of ``make -n run ARGS``, with the shell's environment (less its own
    ``DEMO``, ``HOST`` and password) plus ``env``: what ``make run`` would start, started nothing."""
    environment = {k: v for k, v in os.environ.items() if k not in ("DEMO", "HOST", PASSWORD_ENV)} | env
    out = subprocess.run(["make", "-n", "-o", ".venv/.run-deps", "run", *args], cwd=ROOT, env=environment,
                         capture_output=True, text=True, check=True).stdout
    return next(line for line in out.splitlines() if "streamlit run" in line)


def test_the_class_mode_serves_the_network_and_only_the_command_line_changes_the_address():
    command = streamlit_line
    assert "--server.address '127.0.0.1'" in command()
    assert "--server.address '127.0.0.1'" in command(HOST="0.0.0.0")  # a shell's HOST never opens the network
    assert "--server.address '0.0.0.0'" in command("HOST=0.0.0.0")
    class_mode = command("DEMO=1")
    assert "--server.address '0.0.0.0'" in class_mode and "PRIVATE_LABEL_LAB_DEMO_SEED=1" in class_mode
    assert "--server.address '127.0.0.1'" in command("DEMO=1", "HOST=127.0.0.1")  # a rehearsal on the laptop


@pytest.mark.slow
def test_make_run_listens_on_this_machine_only_and_keeps_streamlits_protections(tmp_path):
    with make_run(tmp_path, env={"HOST": "0.0.0.0"}) as (url, port, log):
        assert listening_addresses(port) == {"127.0.0.1"}  # no other address of this machine reaches it
        assert "serving this machine only" in log().splitlines()[0]

        # cross-origin: no Access-Control-Allow-Origin for another site; its WebSocket is refused
        status, headers, _ = request(port, "GET", "/_stcore/health", {"Origin": "http://elsewhere.example"})
        assert status == 200 and "access-control-allow-origin" not in {k.lower() for k in headers}
        from websockets.exceptions import InvalidStatus
        from websockets.sync.client import connect

        with pytest.raises(InvalidStatus):
            with connect(url.replace("http", "ws", 1) + "/_stcore/stream", subprotocols=["streamlit"],
                         additional_headers={"Origin": "http://elsewhere.example"}, open_timeout=30):
                pass

        # XSRF: the page's cookie carries a token; an upload without it is refused, with it accepted
        _, headers, _ = request(port, "GET", "/_stcore/health")
        cookie = next(v for k, v in headers.items() if k.lower() == "set-cookie").split(";")[0]
        assert cookie.startswith("_streamlit_xsrf=")
        token = cookie.split("=", 1)[1]
        with open_session(url) as sid:
            path = f"/_stcore/upload_file/{sid}/probe"
            body = (b"--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.csv\"\r\n"
                    b"Content-Type: text/csv\r\n\r\na,label\n1,0\n\r\n--B--\r\n")
            form = {"Content-Type": "multipart/form-data; boundary=B"}
            assert request(port, "PUT", path, form, body)[0] == 403
            signed = {**form, "Cookie": cookie, "X-Xsrftoken": token}
            assert request(port, "PUT", path, signed, body)[0] == 204

            # the upload limit: a file over 50 MB is refused before its bytes are read
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            try:
                conn.putrequest("PUT", path)
                for key, value in {**signed, "Content-Length": str(50 * 1024 * 1024 + 1)}.items():
                    conn.putheader(key, value)
                conn.endheaders()
                assert conn.getresponse().status == 413
            finally:
                conn.close()


@pytest.mark.slow
@pytest.mark.parametrize("setting", ["HOST=0.0.0.0", "DEMO=1"])
def test_the_network_setting_and_the_class_mode_listen_on_every_interface_and_say_so(tmp_path, setting):
    with make_run(tmp_path, setting) as (url, port, log):
        assert listening_addresses(port) == {"0.0.0.0"}  # every IPv4 interface of the machine
        first = log().splitlines()[0]
        assert "REACHABLE FROM THE NETWORK" in first and "private uploads are off" in first
        assert request(port, "GET", "/_stcore/health")[0] == 200  # served (asked on 127.0.0.1 only)


def open_lab(p, chromium_executable: str, url: str):
    from playwright.sync_api import expect

    browser = p.chromium.launch(executable_path=chromium_executable, headless=True, args=CHROMIUM_ARGS)
    page = browser.new_page(viewport={"width": 1400, "height": 1400})
    page.set_default_timeout(WAIT)
    expect.set_options(timeout=WAIT)
    page.goto(url)
    page.get_by_role("heading", name="Data", exact=True).wait_for()
    settle(page, WAIT)
    return browser, page


@pytest.mark.slow
@pytest.mark.browser
def test_on_the_network_without_a_password_a_private_upload_is_refused_and_teaching_data_served(
        tmp_path, chromium_executable):
    from playwright.sync_api import expect, sync_playwright

    with make_run(tmp_path, "HOST=0.0.0.0") as (url, port, log), sync_playwright() as p:
        assert listening_addresses(port) == {"0.0.0.0"}  # every interface of the machine
        assert "REACHABLE FROM THE NETWORK" in log().splitlines()[0]
        browser, page = open_lab(p, chromium_executable, url)
        try:
            sidebar = page.get_by_test_id("stSidebar")
            expect(sidebar).to_contain_text("Reachable from the network")
            expect(sidebar).to_contain_text("private uploads are off (no password set)")
            # the teaching data's first result
            expect(page.get_by_test_id("stMetric").filter(has_text="Answered").first).to_be_visible()
            page.get_by_text("Upload CSV", exact=True).click()
            settle(page, WAIT)
            main = page.get_by_test_id("stMainBlockContainer")
            expect(main).to_contain_text("Private uploads are off on this server")
            expect(main).to_contain_text(f"{PASSWORD_ENV}=... make run HOST=0.0.0.0")
            expect(page.locator("input[type=file]")).to_have_count(0)
            expect(page.locator("input[type=password]")).to_have_count(0)
        finally:
            browser.close()


@pytest.mark.slow
@pytest.mark.browser
def test_on_the_network_with_the_password_a_private_upload_works(tmp_path, chromium_executable):
    from playwright.sync_api import expect, sync_playwright

    password = "the owner's own password 91c2"
    rows = "a,b,label\n" + "".join(f"{i % 7}.5,{(3 * i) % 5}.25,{'yes' if i % 2 else 'no'}\n" for i in range(400))
    (tmp_path / "owner.csv").write_text(rows)
    with make_run(tmp_path, "HOST=0.0.0.0", password=password) as (url, port, log), sync_playwright() as p:
        assert listening_addresses(port) == {"0.0.0.0"}
        assert "private uploads need the password" in log().splitlines()[0]
        browser, page = open_lab(p, chromium_executable, url)
        try:
            expect(page.get_by_test_id("stSidebar")).to_contain_text("private uploads need the server's password")
            page.get_by_text("Upload CSV", exact=True).click()
            settle(page, WAIT)
            main = page.get_by_test_id("stMainBlockContainer")
            expect(main).to_contain_text("This server asks for its password before a private file is uploaded")
            expect(page.locator("input[type=file]")).to_have_count(0)
            box = page.locator("input[type=password]")
            box.fill("a guess")
            page.get_by_role("button", name="Unlock private uploads").click()
            expect(main).to_contain_text("That is not this server's password.")
            settle(page, WAIT)
            expect(page.locator("input[type=file]")).to_have_count(0)
            box.fill(password)
            page.get_by_role("button", name="Unlock private uploads").click()
            expect(main).to_contain_text("Private uploads unlocked in this session")
            settle(page, WAIT)
            page.get_by_test_id("stFileUploader").filter(has_text="Private labeled CSV").locator(
                "input[type=file]").set_input_files(str(tmp_path / "owner.csv"))
            page.get_by_role("heading", name="Loaded: owner.csv").wait_for()
            expect(page.get_by_test_id("stSidebar")).to_contain_text("Real job")
        finally:
            browser.close()
