"""The app's upload path pairs the private and the public file as the command line does
(:func:`core.data.check_pair`, :func:`core.data.check_public`, :func:`core.data.copied_rows`):
one file uploaded in both boxes, a public file holding the label column, public rows copying
private rows, and a public file lacking a feature column, each worded with the app's controls.
The upload path (``app_pages._datasets.try_dataset``) runs alone (``AppTest.from_function``):
no page, no training."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


def private_file(n: int = 200) -> bytes:
    rows = [f"{i % 13},{(i * 7) % 5},{'x' if i % 2 else 'y'},{'yes' if (i * 5) % 3 else 'no'}" for i in range(n)]
    return ("a,b,c,label\n" + "\n".join(rows) + "\n").encode()


def public_file(n: int = 30, start: int = 1000) -> bytes:
    rows = [f"{start + i},{i % 4 + 0.5},z" for i in range(n)]  # values the private rows never hold
    return ("a,b,c\n" + "\n".join(rows) + "\n").encode()


def load(private: bytes, public: bytes) -> AppTest:
    """Run the app's upload path on the two files: its messages as the page shows them."""

    def script():
        import streamlit as st

        from app_pages import _datasets as datasets
        from app_pages import _session as session

        session.init()
        files = st.session_state["files"]
        p, q = datasets.digest(files[0]), datasets.digest(files[1])  # the keys of the app's cache, as keep_upload
        st.session_state["_uploads"] = {p: files[0], q: files[1]}
        cfg = {"source": "upload", "private_hash": p, "public_hash": q, "filename": "private.csv",
               "public_filename": "public.csv", "label_column": "label", "missing": "refuse"}
        ds = datasets.try_dataset(cfg)
        st.text("loaded" if ds is not None else "refused")
        st.text(repr(st.session_state.get("_public_lacks")))

    import sys

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    at = AppTest.from_function(script, default_timeout=120)
    at.session_state["files"] = (private, public)
    at.run()
    assert not at.exception, at.exception
    return at


def shown(elements) -> str:
    return " ".join(e.value for e in elements)


def test_one_file_in_both_boxes_is_refused_in_the_apps_words():
    data = private_file()
    at = load(data, bytes(data))
    assert at.text[0].value == "refused"
    error = shown(at.error)
    assert "same file is uploaded as the **Private labeled CSV** and as the **Public unlabeled CSV**" in error, error
    assert "Upload as the **Public unlabeled CSV** the rows to label" in error
    assert "--private" not in error and "given as" not in error


def test_a_public_file_holding_the_label_column_is_refused():
    public = public_file().decode().replace("a,b,c\n", "a,b,c,label\n").replace(",z\n", ",z,yes\n").encode()
    at = load(private_file(), public)
    assert at.text[0].value == "refused"
    error = shown(at.error)
    assert "holds the label column 'label'" in error and "Remove that column" in error, error
    assert "the private file uploaded as the **Public unlabeled CSV**" in error


def test_public_rows_copying_private_rows_are_a_marked_non_private_warning():
    # the private file's first 40 rows without their label: every public row copies a private row
    lines = private_file().decode().splitlines()[:41]
    copied = ("\n".join(",".join(line.split(",")[:3]) for line in lines) + "\n").encode()
    at = load(private_file(), copied)
    assert at.text[0].value == "loaded"  # a warning: the owner decides
    warning = shown(at.warning)
    assert "40 of the 40 public rows" in warning and "NON-PRIVATE diagnostic" in warning, warning
    assert "never exported" in warning
    fresh = load(private_file(), public_file())
    assert fresh.text[0].value == "loaded" and "exact copies" not in shown(fresh.warning)


def test_a_public_file_lacking_a_column_names_both_fixes():
    public = b"a,c\n" + b"".join(f"{1000 + i},z\n".encode() for i in range(20))
    at = load(private_file(), public)
    error = shown(at.error)
    assert "lacks 1 feature column" in error and "Add them" in error, error
    assert "leave them out of the features (their **Drop** button below: b)" in error
    assert "drop_columns" not in error
    assert at.text[1].value == "('b',)"  # what the Data page's Drop button drops
