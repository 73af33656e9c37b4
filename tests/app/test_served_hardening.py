"""Serving, hardened: what opens the network, what a locked session can still send, how fast one may guess.

* Only the command line opens the network: ``make run DEMO=1`` starts the class mode, while a
  ``DEMO`` variable the shell exports (any value) and ``make run DEMO=0`` leave the lab on
  127.0.0.1 without the demo seed (read from ``make -n``; the class mode's real server is
  started in ``tests/app/test_served.py``).
* Where no upload is accepted (the network, no password) ``make run`` gives Streamlit its
  smallest upload limit, 1 MB a file: Streamlit's upload route still takes bytes from a locked
  session (the app never reads them), so they stay small; another host's page gets no
  WebSocket there either.
* Wrong passwords are checked one at a time for the whole server (sessions guessing together
  guess no faster than one), while the right one is never held up.
* Unicode's bidirectional controls in names from a file show as their code points.
* The plan's cached predictions are shared by sessions only while the data's row count is
  public (no privacy unit declared).
* Streamlit's agent API is pinned off.

Every request goes to 127.0.0.1.
"""

from __future__ import annotations

import http.client
import os
import subprocess
import sys
import threading
import time

import pytest

from conftest import ROOT
from test_app import go, texts
from test_app_serving import PASSWORD, PASSWORD_ENV, served, session, to_upload, upload  # noqa: F401 (fixture)
from test_served import listening_addresses, make_run, open_session, request, streamlit_line

BIDI = ("\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069",
        "\u200e", "\u200f", "\u061c")


def on_this_machine(line: str) -> bool:
    return "--server.address '127.0.0.1'" in line and "PRIVATE_LABEL_LAB_DEMO_SEED" not in line


# ----------------------------------------------------------------------------- the class mode


@pytest.mark.parametrize("value", ["1", "0", "false", "yes", ""])
def test_a_DEMO_variable_the_shell_exports_leaves_the_lab_on_this_machine(value):
    assert on_this_machine(streamlit_line(DEMO=value))
    assert on_this_machine(streamlit_line("-e", DEMO=value))  # even when make prefers the environment


@pytest.mark.parametrize("setting", ["DEMO=0", "DEMO=false", "DEMO=", "DEMO=yes", "DEMO=10"])
def test_only_DEMO_1_on_makes_command_line_starts_the_class_mode(setting):
    assert on_this_machine(streamlit_line(setting))
    for line in (streamlit_line("DEMO=1"), streamlit_line("DEMO=1", DEMO="0")):  # typed beats exported
        assert "--server.address '0.0.0.0'" in line and line.startswith("PRIVATE_LABEL_LAB_DEMO_SEED=1 ")


# ----------------------------------------------------------------------------- bytes a locked session sends


def test_where_no_upload_is_accepted_streamlit_gets_its_smallest_upload_limit():
    from app_pages._serving import LOCKED_UPLOAD_LIMIT_MB, streamlit_options

    assert LOCKED_UPLOAD_LIMIT_MB == 1
    for host in ("0.0.0.0", "", "::", "192.168.1.20", "lab.example"):
        assert streamlit_options(host, password=False) == ["--server.maxUploadSize", "1"]
        assert streamlit_options(host, password=True) == []  # a session that gives the password may upload
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"):
        assert streamlit_options(host, password=False) == []  # the 50 MB of .streamlit/config.toml
    # what make run passes: the options printed for its address
    assert "-m app_pages._serving --streamlit-options '0.0.0.0')" in streamlit_line("DEMO=1")
    environment = {k: v for k, v in os.environ.items() if k != PASSWORD_ENV}
    printed = lambda host, **env: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "app_pages._serving", "--streamlit-options", host], cwd=ROOT,
        env=environment | env, capture_output=True, text=True, check=True).stdout.strip()
    assert printed("0.0.0.0") == "--server.maxUploadSize 1"
    assert printed("0.0.0.0", **{PASSWORD_ENV: PASSWORD}) == "" and printed("127.0.0.1") == ""


@pytest.mark.slow
def test_in_the_class_mode_a_locked_session_sends_at_most_one_megabyte_a_file_and_no_other_host_connects(
        tmp_path):
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    with make_run(tmp_path, "DEMO=1") as (url, port, log):
        assert listening_addresses(port) == {"0.0.0.0"}
        assert "private uploads are off" in log().splitlines()[0]
        _, headers, _ = request(port, "GET", "/_stcore/health")
        cookie = next(v for k, v in headers.items() if k.lower() == "set-cookie").split(";")[0]
        signed = {"Content-Type": "multipart/form-data; boundary=B", "Cookie": cookie,
                  "X-Xsrftoken": cookie.split("=", 1)[1]}
        with open_session(url) as sid:  # a session of the room: no upload can be used here
            path = f"/_stcore/upload_file/{sid}/probe"
            # what holds: Streamlit's route takes a small file (the page never reads it) ...
            body = (b"--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.csv\"\r\n"
                    b"Content-Type: text/csv\r\n\r\n" + b"a,label\n1,0\n" * 1000 + b"\r\n--B--\r\n")
            assert request(port, "PUT", path, signed, body)[0] == 204
            # ... and refuses one over 1 MB before its bytes are read
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            try:
                conn.putrequest("PUT", path)
                for key, value in {**signed, "Content-Length": str(1024 * 1024 + 1)}.items():
                    conn.putheader(key, value)
                conn.endheaders()
                assert conn.getresponse().status == 413
            finally:
                conn.close()
        # a page of another host (on any port) gets no WebSocket
        for origin in ("http://elsewhere.example", f"http://elsewhere.example:{port}"):
            with pytest.raises(InvalidStatus):
                with connect(url.replace("http", "ws", 1) + "/_stcore/stream", subprotocols=["streamlit"],
                             additional_headers={"Origin": origin}, open_timeout=30):
                    pass


# ----------------------------------------------------------------------------- guessing the password


def test_wrong_passwords_from_many_sessions_are_checked_one_at_a_time(served, monkeypatch):
    from app_pages import _serving

    served("0.0.0.0", PASSWORD)
    at = to_upload(session())
    guesses = 3  # this session's, through the form, and two other sessions' at the same moment
    together = threading.Barrier(guesses, timeout=300)
    compare = _serving.password_matches

    def matches(given: str) -> bool:
        result = compare(given)
        together.wait()  # every guess is checked before any pays for it: they contend
        return result

    spans: list[tuple[float, float]] = []

    class Clock:  # the module's clock, recording when each wrong guess paid its delay
        @staticmethod
        def sleep(seconds: float) -> None:
            start = time.monotonic()
            time.sleep(seconds)
            spans.append((start, time.monotonic()))

    monkeypatch.setattr(_serving, "password_matches", matches)
    monkeypatch.setattr(_serving, "time", Clock)
    others = [threading.Thread(target=_serving.unlock, args=(f"guess {i}",)) for i in range(guesses - 1)]
    for thread in others:
        thread.start()
    at.text_input(key="server_password_input").input("not the password")
    at.button(key="FormSubmitter:server_password-Unlock private uploads").click().run()
    for thread in others:
        thread.join(timeout=120)
    assert "That is not this server's password." in texts(at.error)
    assert len(spans) == guesses
    spans.sort()
    assert all(end - start >= _serving.WRONG_PASSWORD_DELAY_S for start, end in spans)
    assert all(later[0] >= earlier[1] for earlier, later in zip(spans, spans[1:])), spans  # one at a time


def test_the_right_password_is_not_held_up_by_wrong_guesses(served):
    from app_pages import _serving

    served("0.0.0.0", PASSWORD)
    at = to_upload(session())
    with _serving._WRONG_PASSWORDS:  # another session's wrong guess is paying its delay
        at.text_input(key="server_password_input").input(PASSWORD)
        at.button(key="FormSubmitter:server_password-Unlock private uploads").click().run(timeout=120)
    assert not at.exception, at.exception
    assert "upload_private" in [u.key for u in at.file_uploader]


# ----------------------------------------------------------------------------- names that reorder text


def test_bidirectional_controls_show_as_their_code_points():
    from app_pages._text import chart_text, literal

    for control in BIDI:
        name = f"abc{control}fdp.exe"
        shown = f"abc⟨U+{ord(control):04X}⟩fdp.exe"
        assert literal(name) == shown and chart_text(name) == shown
    assert literal("\u2067<b>[x](javascript:alert(1))\u2069") == (
        "⟨U+2067⟩&lt;b&gt;\\[x\\](javascript\\:alert(1))⟨U+2069⟩")
    assert chart_text("\u202e<b>x</b>") == "⟨U+202E⟩&lt;b&gt;x&lt;/b&gt;"
    assert literal("ليبل \u05d0 ⟨ok⟩") == "ليبل \u05d0 ⟨ok⟩"  # right-to-left letters themselves stay


@pytest.mark.slow
def test_a_class_named_with_a_right_to_left_override_shows_the_override_on_the_data_page(served):
    from google.protobuf.message import Message

    from app_pages._text import literal
    from test_app_user_text import PLAIN_FIELDS, _nodes, _walk, named_csv

    served("127.0.0.1")
    classes = ("abc\u202efdp.exe", "\u2067yes\u2069")
    at = upload(to_upload(session()), "panel\u202ecsv.csv", named_csv(("a", "b"), "label", classes), "label")
    assert "Loaded: " + literal("panel\u202ecsv.csv") in texts(at.main.subheader)
    page = " ".join(texts(at.main.markdown))
    assert all(f"**{literal(c)}**" in page for c in classes), page[:2000]
    assert "abc⟨U+202E⟩fdp.exe" in page
    raw = [(type(node).__name__, field, text) for node in _nodes(at._tree)
           if isinstance(getattr(node, "proto", None), Message)
           for _, field, text in _walk(node.proto, "")
           if field not in PLAIN_FIELDS and any(c in text for c in BIDI)]
    assert not raw, raw[:3]


# ----------------------------------------------------------------------------- the plan's caches


def test_plan_caches_are_shared_only_while_the_row_count_is_public():
    from streamlit.testing.v1 import AppTest

    def scopes():
        from types import SimpleNamespace

        import streamlit as st

        from app_pages._plan import cache_scope

        per_row = SimpleNamespace(private=SimpleNamespace(unit=None))
        per_person = SimpleNamespace(private=SimpleNamespace(unit="persons declared"))
        st.text(repr(cache_scope(per_row)))
        st.text(repr(cache_scope(per_person)))

    def run() -> AppTest:
        at = AppTest.from_function(scopes, default_timeout=120)
        at.run()
        assert not at.exception, at.exception
        return at

    one, other = run(), run()
    assert texts(one.text)[0] == texts(other.text)[0] == "''"  # per row: n is public, every session shares
    mine = texts(one.text)[1]
    assert len(mine) > 20 and mine != texts(other.text)[1]  # per person: each session its own entries
    one.run()
    assert texts(one.text)[1] == mine  # kept for the session's life: its own cache still serves it


# ----------------------------------------------------------------------------- Streamlit's agent API


def _config_shown(home) -> tuple[list[str], str]:
    shown = subprocess.run([sys.executable, "-m", "streamlit", "config", "show"], cwd=ROOT,
                           env=dict(os.environ, HOME=str(home)), capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr[-2000:]
    return shown.stdout.splitlines(), shown.stdout + shown.stderr


def test_streamlits_agent_api_is_pinned_off_and_known_to_the_installed_streamlit(tmp_path):
    lines, everything = _config_shown(tmp_path)
    at = lines.index("enableAgentApi = false")
    assert lines[at - 1].endswith(str(ROOT / ".streamlit" / "config.toml")), lines[at - 2:at + 1]
    assert "not a valid config option" not in everything


def test_no_table_on_a_page_offers_a_download(tmp_path):
    """Streamlit puts "Download as CSV" on every st.dataframe unless told not to: the non-private
    diagnostics and the private rows' preview would leave by it."""
    lines, everything = _config_shown(tmp_path)
    at = lines.index("disableDataExport = true")
    assert lines[at - 1].endswith(str(ROOT / ".streamlit" / "config.toml")), lines[at - 2:at + 1]
    assert "not a valid config option" not in everything
