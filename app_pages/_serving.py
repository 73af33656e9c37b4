"""Who can reach the lab: the listening address, the server's password, the gate of private uploads.

``make run`` listens on 127.0.0.1 (this machine only); serving the network is one explicit
setting, ``make run HOST=0.0.0.0`` (and the class mode ``make run DEMO=1``).  On a server
reachable from the network a private file (an upload) is accepted only from a session that
gave the password set by whoever started the server (:data:`PASSWORD_ENV`); without one set,
uploads are off there, said with the reason and the setting that allows them, while teaching
data (bundled and generated sets, the bundled two-file job) stays open to the room.  A
password set on a server of this machine only is asked for too (other accounts of a shared
machine reach 127.0.0.1).  The page says where it is served in the sidebar
(:func:`sidebar_notice`), and ``make run`` says it when the server starts (:func:`announcement`).

The password is compared in constant time (:func:`password_matches`); a session that gave it
may upload for as long as it lives, and no other session gains anything from it.  Wrong
passwords are checked one at a time for the whole server, each costing at least
:data:`WRONG_PASSWORD_DELAY_S`: many sessions guessing at once guess no faster than one.

Streamlit's upload route takes file bytes from any open session that carries its own XSRF
token, whatever the page drew; the app never reads a locked session's bytes, and where no
upload can be used at all (the network, no password) ``make run`` lowers Streamlit's upload
limit to :data:`LOCKED_UPLOAD_LIMIT_MB` per file (:func:`streamlit_options`).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
import sys
import threading
import time

import streamlit as st

from core.errors import PrivateLabelLabError
from app_pages._text import literal

PASSWORD_ENV = "PRIVATE_LABEL_LAB_PASSWORD"
"""The environment variable holding the server's password, set by whoever starts the server."""

NETWORK_SETTING = "make run HOST=0.0.0.0"
"""The one setting that serves the lab to the network (the class mode ``make run DEMO=1`` does too)."""

WRONG_PASSWORD_DELAY_S = 1.0
"""A wrong password costs this long, and wrong passwords are checked one at a time for the whole
server: guessing takes at least this long per guess, however many sessions guess at once."""

LOCKED_UPLOAD_LIMIT_MB = 1
"""Streamlit's upload limit (``server.maxUploadSize``, megabytes per file) where no upload is
accepted (the network, no password).  1 is the smallest that every supported Streamlit takes:
Streamlit before its Starlette server (1.40 included) gave this size to Tornado as the read
buffer of every request, headers included, so 0 would break every request there."""

_WRONG_PASSWORDS = threading.Lock()
"""Held while a wrong password costs its delay: one per server process (a module is imported once)."""

_UNLOCKED = "_uploads_unlocked"
_PASSWORD_BOX = "server_password_input"


class UploadRefused(PrivateLabelLabError):
    """A private upload on a server that does not accept one from this session."""


def listening_address() -> str:
    """The address the server listens on (Streamlit's ``server.address``); "" means every interface."""
    return str(st.get_option("server.address") or "")


def is_loopback(address: str) -> bool:
    """Whether ``address`` reaches this machine only (127.0.0.0/8, ::1, localhost).

    Anything else (an empty address, 0.0.0.0, ::, a network address, a host name, a Unix
    socket) counts as reachable from the network.
    """
    host = str(address or "").strip().strip("[]")
    if host.casefold() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def network_served() -> bool:
    """Whether this server is reachable from the network (it does not listen on loopback only)."""
    return not is_loopback(listening_address())


def password_set() -> bool:
    """Whether whoever started the server set a password (:data:`PASSWORD_ENV`)."""
    return bool(os.environ.get(PASSWORD_ENV))


def password_matches(given: str) -> bool:
    """Whether ``given`` is the server's password, compared in constant time.

    Both sides are hashed first, so the comparison takes the same time whatever the
    lengths; without a password set nothing matches.
    """
    expected = os.environ.get(PASSWORD_ENV)
    if not expected:
        return False
    digest = lambda text: hashlib.sha256(str(text).encode("utf-8")).digest()  # noqa: E731
    return hmac.compare_digest(digest(given), digest(expected))


def uploads_need_password() -> bool:
    """Whether a private upload on this server is accepted only with the password."""
    return network_served() or password_set()


def may_upload() -> bool:
    """Whether this session may upload a private file now."""
    if not uploads_need_password():
        return True
    return password_set() and bool(st.session_state.get(_UNLOCKED, False))


def refusal() -> str:
    """Why this session may not upload a private file, and the setting that allows it (plain text)."""
    where = _where()
    if network_served() and not password_set():
        return (f"Private uploads are off on this server. It is reachable from the network ({where}) and no "
                "password was set when it started, so anyone who can reach this machine could look at a file "
                "uploaded here. Teaching data stays open: the bundled datasets, the generators and the bundled "
                "two-file job. For a real job, start the lab on your own machine (make run listens on "
                f"127.0.0.1 only), or start this server with a password in {PASSWORD_ENV} "
                f"({PASSWORD_ENV}=... {NETWORK_SETTING}).")
    return (f"This server asks for its password before a private file is uploaded ({where}). The password "
            f"was set by whoever started the server ({PASSWORD_ENV}). Teaching data needs none.")


def require_upload() -> None:
    """Raise :class:`UploadRefused` unless this session may upload a private file."""
    if not may_upload():
        raise UploadRefused(refusal())


def unlock(given: str) -> bool:
    """Let this session upload if ``given`` is the server's password.

    A wrong one costs :data:`WRONG_PASSWORD_DELAY_S`, served one at a time across every session
    of the server (a process-wide lock held through the delay): N sessions guessing in parallel
    make at most one guess per second between them.
    """
    if password_matches(given):
        st.session_state[_UNLOCKED] = True
        return True
    with _WRONG_PASSWORDS:
        time.sleep(WRONG_PASSWORD_DELAY_S)
    return False


def _submitted() -> None:
    """The password form's callback: check what was typed, then forget it (before the page runs again)."""
    ss = st.session_state
    given = ss.get(_PASSWORD_BOX) or ""
    ss[_PASSWORD_BOX] = ""
    if not unlock(given):
        ss["_password_refused"] = True


def upload_gate() -> bool:
    """Draw what stands before the uploaders; True when this session may upload a private file.

    On a network server without a password: the refusal. With a password: its box, until
    this session gave it.  On this machine only, without a password: nothing.
    """
    if may_upload():
        if uploads_need_password():
            st.caption("Private uploads unlocked in this session with the server's password.")
        return True
    if not password_set():
        st.error(literal(refusal()))
        return False
    st.info(literal(refusal()))
    with st.form("server_password", border=False):
        st.text_input("Server password", type="password", key=_PASSWORD_BOX)
        st.form_submit_button("Unlock private uploads", on_click=_submitted)
    if st.session_state.pop("_password_refused", False):
        st.error("That is not this server's password.")
    return False


def _where() -> str:
    address = listening_address()
    return f"listening on {address or 'every network interface'}, port {st.get_option('server.port')}"


def sidebar_notice() -> None:
    """The sidebar's line on where the lab is served and what that means for private uploads."""
    if network_served():
        uploads = ("private uploads need the server's password" if password_set()
                   else "private uploads are off (no password set); teaching data is open")
        st.warning(f"**Reachable from the network** ({_where()}): anyone who can reach this machine can open "
                   f"the lab; {uploads}.")
    else:
        st.caption(f"Served on this machine only ({_where()})"
                   + ("; private uploads need the server's password." if password_set() else "."))


def announcement(host: str, port: int | str, password: bool) -> str:
    """What ``make run`` prints as the server starts: where it listens and what that opens."""
    if is_loopback(host):
        return (f"Private Label Lab: serving this machine only, http://{host}:{port} "
                f"(to serve the network: {NETWORK_SETTING})"
                + ("; private uploads need the server's password." if password else "."))
    return (f"Private Label Lab: REACHABLE FROM THE NETWORK (listening on {host or 'every interface'}, port {port}): "
            "anyone who can reach this machine can open the lab; "
            + ("private uploads need the password set in " + PASSWORD_ENV + "." if password else
               f"private uploads are off (no {PASSWORD_ENV} set); teaching data is open."))


def streamlit_options(host: str, password: bool) -> list[str]:
    """Streamlit's command-line options that follow from where the lab listens.

    On a server reachable from the network without a password no session may upload, yet
    Streamlit's upload route still takes file bytes from any open session that carries its own
    XSRF token (there is no setting that closes the route, or gates it per session): the upload
    limit drops to :data:`LOCKED_UPLOAD_LIMIT_MB` per file, so such bytes stay small.
    Everywhere else the limit of ``.streamlit/config.toml`` holds.
    """
    if not is_loopback(host) and not password:
        return ["--server.maxUploadSize", str(LOCKED_UPLOAD_LIMIT_MB)]
    return []


if __name__ == "__main__":
    # make run: "python -m app_pages._serving HOST PORT" prints the announcement;
    # "python -m app_pages._serving --streamlit-options HOST" prints the options for streamlit run.
    _password = bool(os.environ.get(PASSWORD_ENV))
    if sys.argv[1] == "--streamlit-options":
        print(" ".join(streamlit_options(sys.argv[2], _password)), flush=True)
    else:
        print(announcement(sys.argv[1], sys.argv[2], _password), flush=True)
