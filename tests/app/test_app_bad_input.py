"""The app under bad input, driven headlessly with Streamlit's AppTest.

Every bad file of the foundation issue's list is uploaded through the Data page's file
uploader.  Each shows its specific message in place, raises no exception, and leaves the
previously loaded data and results on the page.  Two AppTest sessions never see each
other's uploads.

"A label column named but absent" cannot be entered through the app: the label-column
box offers only the uploaded file's columns (tested below); the library's own check of a
named-but-absent column is tested in tests/data/test_data.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
SOURCE = "w_data_ui_source"  # the Data page's source radio (app_pages/_session.widget_key("data_ui", "source"))


def csv(rows: list[str]) -> bytes:
    return ("\n".join(rows) + "\n").encode()


def good_private(cols=("a", "b", "c"), n=400, label="label") -> bytes:
    return csv([",".join((*cols, label))]
               + [f"{i % 7},{(i * 3) % 11},{'x' if i % 2 else 'y'},{'yes' if (i * 5) % 3 else 'no'}" for i in range(n)])


BAD_PRIVATE = {
    "empty file": (b"", "The file 'bad.csv' is empty"),  # the upload named in its error
    "header only": (b"a,b,label\n", "header row but no data rows"),
    "binary bytes": (bytes(range(256)) * 8, "not a CSV text file"),
    "non-UTF-8 text": ("a,b,label\n1,caf\xe9,0\n2,na\xefve,1\n".encode("latin-1"), "not UTF-8 text"),
    "one class only": (csv(["a,b,label"] + [f"{i},{i * 2},same" for i in range(30)]), "holds a single class"),
    "all-NaN column": (csv(["a,b,label"] + [f"{i},,{i % 2}" for i in range(30)]), "empty in every row"),
    "inf values": (csv(["a,b,label"] + [f"{i},{'-inf' if i == 3 else i},{i % 2}" for i in range(30)]),
                   "infinite values"),
    "duplicate column names": (csv(["a,a,label"] + [f"{i},{i},{i % 2}" for i in range(30)]), "Duplicate column names"),
    "more than 100 labels": (csv(["a,label"] + [f"{i},c{i}" for i in range(150)]), "more than 100"),
    "all-empty label column": (csv(["a,b,label"] + [f"{i},{i}," for i in range(30)]), "label column 'label' is empty"),
}

BAD_PUBLIC = {
    "public table missing a feature column": (csv(["a,b"] + ["1,2"] * 5), "lacks 1 feature column"),
    "public table with a different dtype": (csv(["a,b,c"] + ["1,zz,x"] * 5), "holds text"),
}


def _texts(elements) -> list[str]:
    return [e.value for e in elements]


def _snapshot(at) -> dict:
    """What the Data page shows about the loaded data and its results."""
    return {
        "loaded": [s for s in _texts(at.main.subheader) if s.startswith("Loaded:")],
        "metrics": {m.label: m.value for m in at.main.metric},
    }


@pytest.fixture(scope="module")
def warm_cache():
    """Train the default ensemble once in demo mode so the per-test sessions hit the cache."""
    at = _session()
    return _snapshot(at)


def _session(monkeypatch=None) -> AppTest:
    import sys

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))  # `from app_pages import _session`, as under `streamlit run app.py`
    at = AppTest.from_file(APP, default_timeout=300)
    at.session_state["demo_seed"] = True  # one public seed: the cached ensemble is shared across tests
    at.run()
    assert not at.exception, at.exception
    return at


def _to_upload(at: AppTest) -> None:
    at.radio(key=SOURCE).set_value("Upload CSV").run()
    assert not at.exception, at.exception


def _upload(at: AppTest, key: str, name: str, data: bytes) -> None:
    at.file_uploader(key=key).set_value((name, data, "text/csv")).run()


def _assert_unchanged(at: AppTest, before: dict) -> None:
    after = _snapshot(at)
    assert after["loaded"] == before["loaded"]
    for label in ("Private rows (n)", "Public queries (m)", "Classes", "Features", "Answered", "Abstained (⊥)",
                  "Not processed", "Guarantee"):
        assert after["metrics"].get(label) == before["metrics"].get(label), label


@pytest.fixture
def lab(warm_cache):
    at = _session()
    before = _snapshot(at)
    assert before["loaded"] == ["Loaded: two_gaussians (generated, n = 20000)"] and "Answered" in before["metrics"]
    _to_upload(at)
    return at, before


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(BAD_PRIVATE))
def test_bad_private_upload_shows_its_message_and_keeps_the_data(lab, case):
    at, before = lab
    data, message = BAD_PRIVATE[case]
    _upload(at, "upload_private", "bad.csv", data)
    assert not at.exception, at.exception
    errors = _texts(at.error)
    assert any(message in e for e in errors), (case, errors)
    _assert_unchanged(at, before)
    at.run()  # and it stays so on the next rerun
    assert not at.exception
    _assert_unchanged(at, before)


@pytest.mark.slow
def test_file_over_the_size_limit(lab):
    at, before = lab
    big = b"a,b,label\n" + b"1,2,0\n3,4,1\n" * (51 * 2**20 // 12)
    assert len(big) > 50 * 2**20
    _upload(at, "upload_private", "big.csv", big)
    assert not at.exception, at.exception
    assert any("MiB" in e or "too large" in e.lower() or "larger" in e.lower() for e in _texts(at.error)), _texts(at.error)
    _assert_unchanged(at, before)


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(BAD_PUBLIC))
def test_bad_public_upload_shows_its_message_and_keeps_the_data(lab, case):
    at, before = lab
    data, message = BAD_PUBLIC[case]
    at.file_uploader(key="upload_public").set_value(("public.csv", data, "text/csv"))
    _upload(at, "upload_private", "private.csv", good_private())
    assert not at.exception, at.exception
    assert any(message in e for e in _texts(at.error)), (case, _texts(at.error))
    _assert_unchanged(at, before)


@pytest.mark.slow
def test_one_file_in_both_upload_boxes_is_refused(lab):
    """The private file uploaded as the public file too: refused in the page's words, nothing loaded."""
    at, before = lab
    data = good_private()
    at.file_uploader(key="upload_public").set_value(("private.csv", data, "text/csv"))
    _upload(at, "upload_private", "private.csv", data)
    assert not at.exception, at.exception
    errors = " ".join(_texts(at.error))
    assert "uploaded as the **Private labeled CSV** and as the **Public unlabeled CSV**" in errors, errors
    _assert_unchanged(at, before)


@pytest.mark.slow
def test_a_public_file_lacking_a_column_offers_its_drop_button(lab):
    """Both fixes are named; the second, leaving the column out of the features, is one click."""
    at, before = lab
    at.file_uploader(key="upload_public").set_value(("public.csv", csv(["a,c"] + ["1,x", "2,y"] * 5), "text/csv"))
    _upload(at, "upload_private", "private.csv", good_private())
    assert not at.exception, at.exception
    errors = " ".join(_texts(at.error))
    assert "lacks 1 feature column" in errors and "their **Drop** button below: b" in errors, errors
    _assert_unchanged(at, before)
    at.button(key="fix_public_lacks").click().run()
    assert not at.exception, at.exception
    assert _snapshot(at)["loaded"] == ["Loaded: private.csv"], _texts(at.error)
    assert _snapshot(at)["metrics"]["Features"] == "2" and _snapshot(at)["metrics"]["Public queries (m)"] == "10"


@pytest.mark.slow
def test_a_class_too_small_for_k_is_reported_when_k_is_chosen(lab):
    at, _ = lab
    rows = ["a,b,label"] + [f"{i},{i % 5},{'big' if i >= 3 else 'tiny'}" for i in range(2000)]
    _upload(at, "upload_private", "small_class.csv", csv(rows))
    assert not at.exception, at.exception
    # the file itself is fine and is loaded ...
    assert _snapshot(at)["loaded"] == ["Loaded: small_class.csv"]
    # ... but the default k = 100 teachers is refused, naming the class and the largest k
    # that works (the private share of the 3 'tiny' rows after the random public split)
    errors = _texts(at.error)
    assert any("Too many teachers for the smallest class" in e and "'tiny'" in e and "Choose k of at most" in e
               for e in errors), errors


@pytest.mark.slow
def test_label_column_box_offers_only_the_file_columns(lab):
    at, _ = lab
    _upload(at, "upload_private", "ok.csv", good_private(cols=("alpha", "beta", "gamma")))
    assert not at.exception, at.exception
    at.run()  # the box is built from the loaded file's columns, on the run after it loaded
    boxes = [b for b in at.selectbox if b.label == "Label column"]
    assert boxes and set(boxes[0].options) == {"label", "alpha", "beta", "gamma"}


@pytest.mark.slow
def test_recovers_after_a_good_upload_then_keeps_it_on_the_next_bad_one(lab):
    at, _ = lab
    _upload(at, "upload_private", "fine.csv", good_private())
    assert not at.exception, at.exception
    loaded = _snapshot(at)
    assert loaded["loaded"] == ["Loaded: fine.csv"] and loaded["metrics"]["Features"] == "3"
    _upload(at, "upload_private", "broken.csv", b"a,a,label\n1,2,0\n")
    assert not at.exception, at.exception
    assert any("Duplicate column names" in e for e in _texts(at.error))
    _assert_unchanged(at, loaded)


@pytest.mark.slow
def test_two_sessions_never_see_each_others_uploads(warm_cache):
    a = _session()
    _to_upload(a)
    secret = good_private(cols=("secret_col_one", "secret_col_two", "secret_col_three"))
    _upload(a, "upload_private", "session_a_private.csv", secret)
    assert not a.exception, a.exception
    assert _snapshot(a)["loaded"] == ["Loaded: session_a_private.csv"]

    b = _session()
    assert not b.exception, b.exception
    assert _snapshot(b)["loaded"] == ["Loaded: two_gaussians (generated, n = 20000)"]
    shown = " ".join(_texts(b.markdown) + _texts(b.caption) + _texts(b.subheader))
    assert "secret_col" not in shown and "session_a" not in shown
    uploads = b.session_state["_uploads"] if "_uploads" in b.session_state else {}
    assert not uploads
    assert b.session_state["data_cfg"]["source"] == "generator"

    # b uploads its own file; a still sees its own
    _to_upload(b)
    _upload(b, "upload_private", "session_b_private.csv", good_private(cols=("b1", "b2", "b3")))
    assert _snapshot(b)["loaded"] == ["Loaded: session_b_private.csv"]
    a.run()
    assert _snapshot(a)["loaded"] == ["Loaded: session_a_private.csv"]
    assert "b1" not in " ".join(_texts(a.markdown))
