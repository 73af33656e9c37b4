"""Served safely (AppTest): who may upload a private file, what the sidebar says, two sessions.

* A server reachable from the network (``server.address`` 0.0.0.0, as ``make run HOST=0.0.0.0``
  and the class mode set it) without a password refuses a private upload, says why and which
  setting allows it, and still serves the teaching data; with the password set by whoever
  started it, a session that gives it may upload (a wrong one is refused, and another session
  stays locked).  On this machine only (127.0.0.1) nothing is asked unless a password is set.
* The sidebar says where the lab is served.
* Two sessions of one server, one of them the owner of a real job: the other sees nothing of
  it (file name, columns, classes, ledger, results, trained teachers), on every page.

The served app itself (the listening address of ``make run``'s command, Streamlit's XSRF and
cross-origin protection, the upload limit) is checked in ``tests/app/test_served.py``.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from test_app import ROOT, go, metrics, texts
from test_app_user_text import all_strings, named_csv

PASSWORD_ENV = "PRIVATE_LABEL_LAB_PASSWORD"
PASSWORD = "a long server password chosen at start 7f3c"


@pytest.fixture
def served(monkeypatch):
    """``serve(address, password)``: the listening address and password a server was started with."""
    monkeypatch.syspath_prepend(str(ROOT))
    from streamlit import config

    before = (config.get_option("server.address"), config.get_where_defined("server.address"))

    def serve(address: str, password: str | None = None) -> None:
        config.set_option("server.address", address)
        if password is None:
            monkeypatch.delenv(PASSWORD_ENV, raising=False)
        else:
            monkeypatch.setenv(PASSWORD_ENV, password)

    yield serve
    config.set_option("server.address", before[0], where_defined=before[1])


def session() -> AppTest:
    from conftest import start_app

    return start_app()


def to_upload(at: AppTest) -> AppTest:
    go(at, "Data")
    at.radio(key="w_data_ui_source").set_value("Upload CSV").run()
    assert not at.exception, at.exception
    return at


def uploaders(at: AppTest) -> list[str]:
    return [u.key for u in at.file_uploader]


def sidebar_alerts(at: AppTest) -> str:
    return " ".join(texts(at.sidebar.warning) + texts(at.sidebar.caption))


def upload(at: AppTest, name: str, data: bytes, label: str, public: bytes | None = None) -> AppTest:
    if public is not None:
        at.file_uploader(key="upload_public").set_value(("public.csv", public, "text/csv"))
    at.file_uploader(key="upload_private").set_value((name, data, "text/csv")).run()
    box = next(s for s in at.selectbox if s.label == "Label column")
    if box.value != label:
        box.set_value(label).run()
    assert not at.exception, at.exception
    return at


# ----------------------------------------------------------------------------- the upload gate


def test_a_network_server_without_a_password_refuses_a_private_upload_and_serves_the_teaching_data(served):
    served("0.0.0.0")
    at = session()
    # the teaching data's first result, at once, as on any server
    assert int(metrics(at)["Answered"]) > 0
    assert "Reachable from the network" in sidebar_alerts(at)
    assert "private uploads are off" in sidebar_alerts(at)
    to_upload(at)
    assert uploaders(at) == []  # no uploader is drawn: no file can reach the app
    refusal = " ".join(texts(at.error))
    assert "Private uploads are off on this server" in refusal
    assert "0.0.0.0" in refusal and PASSWORD_ENV in refusal and "make run" in refusal  # the reason, the setting
    assert not at.text_input  # nothing to type a password into: none was set
    # the teaching data stays open: a bundled set loads and labels
    at.radio(key="w_data_ui_source").set_value("Bundled dataset").run()
    at.selectbox(key="w_data_ui_name").set_value("breast_cancer").run()
    assert not at.exception and "Loaded: breast_cancer" in texts(at.main.subheader)
    assert int(metrics(at)["Answered"]) > 0


def test_with_the_password_a_session_may_upload_and_no_other_session_gains_from_it(served):
    served("0.0.0.0", PASSWORD)
    at = to_upload(session())
    assert "need the server's password" in sidebar_alerts(at)
    assert uploaders(at) == []
    assert any("asks for its password" in i for i in texts(at.info))
    box = at.text_input(key="server_password_input")
    assert box.proto.type == box.proto.PASSWORD  # typed as a password: shown as dots
    box.input("not the password")
    at.button(key="FormSubmitter:server_password-Unlock private uploads").click().run()
    assert "That is not this server's password." in texts(at.error)
    assert uploaders(at) == []
    assert at.text_input(key="server_password_input").value == ""  # the box keeps nothing typed
    at.text_input(key="server_password_input").input(PASSWORD)
    at.button(key="FormSubmitter:server_password-Unlock private uploads").click().run()
    assert not at.exception, at.exception
    assert uploaders(at) == ["upload_private", "upload_public"] and not at.text_input
    assert any("unlocked in this session" in c for c in texts(at.caption))
    upload(at, "owner.csv", named_csv(("a", "b"), "label", ("no", "yes")), "label")
    assert "Loaded: owner.csv" in texts(at.main.subheader)
    # another session of the same server is still asked for the password
    other = to_upload(session())
    assert uploaders(other) == [] and any("asks for its password" in i for i in texts(other.info))


def test_on_this_machine_only_nothing_is_asked_unless_a_password_is_set(served):
    served("127.0.0.1")
    at = to_upload(session())
    assert "Served on this machine only" in sidebar_alerts(at) and not at.sidebar.warning
    assert uploaders(at) == ["upload_private", "upload_public"]
    assert not at.text_input
    # Streamlit's own limit on an upload, as the browser receives it (the served app: test_served.py)
    assert at.file_uploader(key="upload_private").proto.max_upload_size_mb == 50
    served("127.0.0.1", PASSWORD)  # a shared machine: other accounts reach 127.0.0.1 too
    at = to_upload(session())
    assert uploaders(at) == [] and at.text_input(key="server_password_input")


def test_the_listening_address_decides_what_counts_as_the_network():
    from app_pages._serving import announcement, is_loopback

    assert all(is_loopback(a) for a in ("127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST"))
    assert not any(is_loopback(a) for a in ("", "0.0.0.0", "::", "192.168.1.20", "10.0.0.5", "myhost",
                                            "unix:///tmp/lab.sock"))
    assert "this machine only" in announcement("127.0.0.1", 8501, False)
    assert "REACHABLE FROM THE NETWORK" in announcement("0.0.0.0", 8501, False)
    assert "private uploads are off" in announcement("0.0.0.0", 8501, False)
    assert "need the password" in announcement("0.0.0.0", 8501, True)


def test_the_password_is_compared_whole_and_never_matches_without_one(monkeypatch):
    from app_pages._serving import password_matches

    monkeypatch.delenv(PASSWORD_ENV, raising=False)
    assert not password_matches("") and not password_matches("anything")
    monkeypatch.setenv(PASSWORD_ENV, PASSWORD)
    assert password_matches(PASSWORD)
    assert not any(password_matches(p) for p in ("", PASSWORD[:-1], PASSWORD + " ", PASSWORD.upper()))


# ----------------------------------------------------------------------------- two sessions, one server

SECRET = {
    "file": "owner_secret_payroll.csv",
    "columns": ("secret_alpha_col", "secret_beta_col"),
    "label": "secret_label_col",
    "classes": ("secret_class_no", "secret_class_yes"),
}


def all_pages(at: AppTest):
    from app_pages import _session

    for path, title, _ in _session.app_pages():
        at.switch_page(path).run()
        assert not at.exception, (title, at.exception)
        yield title, at


@pytest.mark.slow
def test_a_second_session_sees_nothing_of_the_owners_real_job(served):
    from test_app_plan_spend import train

    from app_pages import _cache

    served("0.0.0.0", PASSWORD)  # a class server; the owner gave the password
    owner = to_upload(session())
    owner.text_input(key="server_password_input").input(PASSWORD)
    owner.button(key="FormSubmitter:server_password-Unlock private uploads").click().run()
    private = named_csv(SECRET["columns"], SECRET["label"], SECRET["classes"], n=1200)
    public = named_csv(SECRET["columns"], SECRET["label"], SECRET["classes"], n=300, seed=4, public=True)
    upload(owner, SECRET["file"], private, SECRET["label"], public=public)
    assert f"Loaded: {SECRET['file']}" in texts(owner.main.subheader)
    train(owner, k=12)
    go(owner, "Private labeling")
    from test_app_plan_spend import name_job

    name_job(owner, "clinic-job")
    owner.number_input(key="job_budget_epsilon").set_value(50.0)
    owner.button(key="FormSubmitter:job_budget_form-Set the budget for this data").click().run()
    owner.button(key="run_private").click().run()
    assert not owner.exception and "Answered" in metrics(owner)
    owner_ds = owner.session_state["data_cfg"]
    go(owner, "Data")  # the search below finds these names where they are shown: on the owner's own pages
    assert all(any(name in text for text in all_strings(owner)) for name in (SECRET["file"], *SECRET["columns"]))
    owner_teachers = [key for key in _cache._ensembles().items if "upload:" in key[0]]
    assert owner_teachers, "the owner's teachers are in the server's cache"

    other = session()  # the next person to open the same server
    ledger = next(c.value.strip("*") for c in other.sidebar.markdown if c.value.startswith("**Your lesson's ledger"))
    assert ledger.endswith("over 1 run.")  # its own first look at its own data, nothing of the owner's
    secrets = [SECRET["file"], *SECRET["columns"], SECRET["label"], *SECRET["classes"], "owner_secret", "secret_"]
    for title, at in all_pages(other):
        shown = all_strings(at)
        leaked = [(s, text) for text in shown for s in secrets if s in text]
        assert not leaked, (title, leaked[:3])
        assert "Teachers (k)" not in metrics(at) or metrics(at)["Teachers (k)"] != "12", title
    # the other session's own state: no upload, no release, no password, its own ledger and teachers
    state = other.session_state
    for key in ("_uploads", "_release", "_uploads_unlocked", "_paid_compare"):
        assert key not in state, key
    assert other.session_state["data_cfg"]["source"] == "generator" and owner_ds["source"] == "upload"
    assert all(not str(key[0][0]).startswith("upload:") for key in state["_labelings"])
    to_upload(other)
    assert uploaders(other) == [] and "Loaded: two_gaussians" in " ".join(texts(other.main.subheader))
