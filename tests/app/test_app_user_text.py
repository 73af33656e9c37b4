"""User text is shown as text on every page (AppTest): names from a file never become markup.

A private file whose columns are named ``<img src=x onerror=alert(1)>`` and
``[x](javascript:alert(1))``, whose label column and classes carry the same kind of text, and
whose file name does too, is uploaded, checked (a column check quoting the column), loaded,
trained, labeled at a price, and then declared teaching data; every page is opened in each
state.  On every page, no Markdown text (bodies, captions, alerts, headers, metric, widget and
button labels, help) holds one of those names as it is: each is escaped
(:func:`app_pages._text.literal`), and a Plotly chart holds no raw HTML tag from them
(:func:`app_pages._text.chart_text`).  Select boxes and dataframes show their options and
cells as plain text: the names appear there as they are.  ``tests/app/test_browser_user_text.py``
checks in Chromium what the escaped text looks like (exactly those characters) and that no
``<img>`` and no ``javascript:`` link is ever created.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from google.protobuf.message import Message
from streamlit.testing.v1 import AppTest

from test_app import go, texts

pytestmark = pytest.mark.slow

IMG = "<img src=x onerror=alert(1)>"
LINK = "[x](javascript:alert(1))"
LABEL = "**label** $y$ :red[z]"
CLASSES = ("<img src=c onerror=alert(2)>", "[c](javascript:alert(2))")
FILE = "<img src=f onerror=alert(3)>[f](javascript:alert(3)).csv"
NAMES = (IMG, LINK, LABEL, *CLASSES, FILE)
HTML_NAMES = (IMG, CLASSES[0], "<img src=f onerror=alert(3)>")

PLAIN_FIELDS = {"options", "raw_values", "raw_value", "default", "value", "id", "form_id"}
"""Proto fields shown as plain text (a select box's options, a widget's value) or never shown."""


def named_csv(columns: tuple[str, str], label: str, classes: tuple[str, str], n: int = 1000, seed: int = 5,
              public: bool = False, missing: float = 0.0) -> bytes:
    """Two Gaussian classes in two numeric columns (a share ``missing`` of the first column's cells
    empty), every name quoted as CSV quotes it: any characters."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    x = rng.normal(size=(n, 2)) + 4.0 * y[:, None]
    q = lambda s: '"' + s.replace('"', '""') + '"'  # noqa: E731
    rows = [",".join(q(h) for h in (*columns, *([] if public else [label])))]
    for (a, b), c in zip(x, y):
        first = "" if rng.random() < missing else f"{a:.4f}"
        rows.append(f"{first},{b:.4f}" + ("" if public else "," + q(classes[c])))
    return ("\n".join(rows) + "\n").encode()


def payload_csv() -> bytes:
    """The file of this module: columns, label and classes named with markup, 2 % of one column missing."""
    return named_csv((IMG, LINK), LABEL, CLASSES, missing=0.02)


def _walk(msg: Message, kind: str):
    for field, value in msg.ListFields():
        for v in (value if field.is_repeated else [value]):
            if isinstance(v, Message):
                yield from _walk(v, kind)
            elif isinstance(v, str):
                yield kind, field.name, v


def _nodes(node):
    yield node
    for child in (getattr(node, "children", None) or {}).values():
        yield from _nodes(child)


def _chart_strings(spec: str):
    def walk(obj):
        if isinstance(obj, str):
            yield obj
        elif isinstance(obj, dict):
            for v in obj.values():
                yield from walk(v)
        elif isinstance(obj, list):
            for v in obj:
                yield from walk(v)

    return list(walk(json.loads(spec)))


def markup_found(at: AppTest) -> list[tuple[str, str, str]]:
    """(element, field, text) of every text of the page that carries one of the names as markup."""
    found = []
    for node in _nodes(at._tree):
        proto = getattr(node, "proto", None)
        if not isinstance(proto, Message):
            continue
        kind = type(node).__name__
        for _, field, text in _walk(proto, kind):
            if field == "spec":  # a Plotly figure: its labels read HTML tags, not Markdown
                found += [(kind, "spec", s) for s in _chart_strings(text) if any(h in s for h in HTML_NAMES)]
            elif field not in PLAIN_FIELDS and any(name in text for name in NAMES):
                found.append((kind, field, text))
    return found


def all_strings(at: AppTest) -> list[str]:
    """Every text a session is sent: each element's fields (labels, bodies, options, help, chart
    specifications) and every dataframe's column names and cells."""
    out = [text for node in _nodes(at._tree) if isinstance(getattr(node, "proto", None), Message)
           for _, _, text in _walk(node.proto, "")]
    for frame in at.dataframe:
        data = frame.value
        out += [str(c) for c in data.columns] + [str(v) for v in np.asarray(data, dtype=object).ravel()]
    return out


def every_page(at: AppTest, state: str, shown: list) -> None:
    from app_pages import _session

    for path, title, _ in _session.app_pages():
        at.switch_page(path).run()
        assert not at.exception, (state, title, at.exception)
        assert not markup_found(at), (state, title, markup_found(at)[:3])
        shown.append(" ".join(texts(at.main.markdown) + texts(at.sidebar.markdown)))


def test_names_from_a_file_are_text_on_every_page(lab):
    from app_pages._text import literal

    at = go(lab(), "Data")
    at.radio(key="w_data_ui_source").set_value("Upload CSV").run()
    at.file_uploader(key="upload_private").set_value((FILE, payload_csv(), "text/csv")).run()
    assert not at.exception and not markup_found(at), markup_found(at)[:3]
    # a label column that cannot be one: the library's message quotes it, shown as text
    box = next(s for s in at.selectbox if s.label == "Label column")
    assert set(box.options) == {IMG, LINK, LABEL}  # the options: plain text, as they are
    box.set_value(IMG).run()
    assert not at.exception and not markup_found(at), markup_found(at)[:3]
    # the label column; the missing values (refused by default) are a blocking problem naming the column
    next(s for s in at.selectbox if s.label == "Label column").set_value(LABEL).run()
    checked = " ".join(texts(at.error))
    assert literal(IMG) in checked and literal(FILE) in " ".join(texts(at.markdown)), checked
    assert not markup_found(at), markup_found(at)[:3]
    # one file, no public file: the drop is not offered (the queries are its own rows); impute is
    next(b for b in at.button if b.label == "Impute missing values inside each teacher").click().run()
    assert f"Loaded: {literal(FILE)}" in texts(at.main.subheader), texts(at.error)
    data_page = " ".join(texts(at.main.markdown))
    assert all(f"**{literal(c)}**" in data_page for c in CLASSES) and f"**{literal(LABEL)}**" in data_page
    assert not markup_found(at), markup_found(at)[:3]

    shown: list[str] = []
    go(at, "Ensemble")
    at.number_input(key="w_ens_ui_k").set_value(10)
    at.button[0].click().run()
    assert "Trained 10 teachers." in texts(at.success)
    every_page(at, "a real job", shown)
    go(at, "Private labeling")
    at.radio(key="w_privacy_mechanism").set_value("lnmax").run()  # answers every query: every view has labels
    from test_app_plan_spend import name_job

    name_job(at)
    at.number_input(key="job_budget_epsilon").set_value(100.0)
    at.button(key="FormSubmitter:job_budget_form-Set the budget for this data").click().run()
    at.button(key="run_private").click().run()
    assert not at.exception, at.exception
    every_page(at, "a real job after a priced run", shown)

    at.sidebar.checkbox(key="teaching_declaration").check().run()
    at.sidebar.button(key="declare_teaching").click().run()
    every_page(at, "declared teaching data", shown)
    # the teaching views draw the classes too: a query's vote bars and a released label
    at.switch_page("app_pages/7_One_query.py").run()
    next(b for b in at.button if b.label == "Draw the noise once").click().run()
    assert not at.exception and not markup_found(at), markup_found(at)[:3]
    bars = [s for c in at.get("plotly_chart") for s in _chart_strings(c.proto.spec)]
    assert "&lt;img src=c onerror=alert(2)&gt;" in bars
    assert any("True class: **" + literal(c) in m for c in CLASSES for m in texts(at.main.markdown))
    assert len(shown) == 30 and all(literal(FILE) in page for page in shown)  # the sidebar names the file
