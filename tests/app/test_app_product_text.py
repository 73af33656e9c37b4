"""The app reads as a product: no code names, command-line flags or stray text on any page.

Every page is rendered with AppTest on the default data and on an uploaded real-looking
table, and every piece of visible text (titles, markdown, captions, alerts, metric labels
and values, widget labels, options, placeholders and help) is scanned for

- command-line flags (``--measure-agreement``),
- dotted code names (``core.pipeline.resolve``, ``st.session_state``),
- snake_case identifiers (``btt_min_teachers``) other than the data's own names (column,
  dataset, class and file names, which are the user's words),
- text that is code: a bare assignment or a string that was meant as a comment.

Formulas (LaTeX) are not scanned.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "data"))
from real_like import criminal_justice_csv  # noqa: E402

from test_app import APP, PAGES as WORKFLOW_PAGES  # noqa: E402

PAGES = {  # the workflow's pages and the lecture's
    **WORKFLOW_PAGES,
    "A leak": "app_pages/7_A_leak.py",
    "One query": "app_pages/7_One_query.py",
    "Sweeps": "app_pages/9_Sweeps.py",
}

FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
DOTTED = re.compile(r"\b(?:core|app_pages|st|np|pd|sklearn|numpy|pandas|streamlit)\.[A-Za-z_]\w*(?:\.\w+)*")
SNAKE = re.compile(r"(?<![\w.-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w-])")
CODE_LINE = re.compile(r"^\s*[A-Za-z_]\w*\s*=\s*\S")
SETTING = re.compile(r"\b(?:epsilon|delta|sigma[12]?|gamma|beta|eta)\s*=")  # a setting by its code name
TEXT_FIELDS = ("body", "label", "help", "placeholder", "caption", "text", "value", "options", "default_text",
               "title", "description")


def _strings(message, out: list[str]) -> None:
    """Every string field of a protobuf message that a reader sees (recursively)."""
    from google.protobuf.message import Message

    for field, value in message.ListFields():
        if field.name in ("latex", "id", "form_id", "url", "icon", "data", "arrow_data", "spec", "figure",
                          "component_name", "json_args", "page_script_hash", "url_path", "page"):
            continue
        values = list(value) if isinstance(value, (list, tuple)) or type(value).__name__.startswith("Repeated") else [value]
        for v in values:
            if isinstance(v, Message):
                _strings(v, out)
            elif isinstance(v, str) and field.name in TEXT_FIELDS and v.strip():
                out.append(v)


def visible_text(at: AppTest) -> list[str]:
    out: list[str] = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None and type(node).__name__ not in ("Latex",):
            _strings(proto, out)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return out


def allowed_names(at: AppTest) -> set[str]:
    """The data's own words: column, class, dataset, generator, learner-free names of the loaded data."""
    from core.data import GENERATORS, bundled_names

    names = set(bundled_names()) | set(GENERATORS)
    cfg = at.session_state["data_cfg"] if "data_cfg" in at.session_state else {}
    names |= {str(cfg.get("filename", ""))}
    shape = at.session_state["_data_shape"] if "_data_shape" in at.session_state else {}
    for columns, _ in shape.values():
        names |= {str(c) for c in columns or ()}
    return names


def hits(at: AppTest, data_names=()) -> list[str]:
    allowed = allowed_names(at) | set(data_names)
    found = []
    for text in visible_text(at):
        for pattern in (FLAG, DOTTED, SETTING):
            found += [m.group() for m in pattern.finditer(text)]
        found += [m.group() for m in SNAKE.finditer(text) if m.group() not in allowed
                  and not any(m.group() in a for a in allowed)]
        found += [line for line in text.splitlines() if CODE_LINE.match(line)]
    return sorted(set(found))


def fresh() -> AppTest:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    at = AppTest.from_file(APP, default_timeout=300)
    at.session_state["demo_seed"] = True
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.fixture(scope="module")
def session():
    return fresh()


def _page(at: AppTest, page: str) -> AppTest:
    at.switch_page(PAGES[page]).run()
    assert not at.exception, (page, at.exception)
    return at


def test_the_scan_finds_what_it_looks_for():
    text = "Use --measure-agreement, core.pipeline.resolve and btt_min_teachers.\nJOB_TEACHERS = 250"
    assert [m.group() for m in FLAG.finditer(text)] == ["--measure-agreement"]
    assert [m.group() for m in DOTTED.finditer(text)] == ["core.pipeline.resolve"]
    assert [m.group() for m in SNAKE.finditer(text)] == ["btt_min_teachers"]
    assert CODE_LINE.match(text.splitlines()[1])
    assert SETTING.findall("with epsilon = 4, delta = 1e-05") == ["epsilon =", "delta ="]
    assert not FLAG.findall("a --- b, −0.5, ε-DP") and not SNAKE.findall("non-private, one-click")


@pytest.mark.parametrize("page", list(PAGES))
def test_no_code_names_flags_or_stray_text_on_the_page(session, page):
    at = _page(session, page)
    found = hits(at)
    if page == "Student & export":  # and once released, with its downloads
        at.button(key="release").click().run()
        assert not at.exception, at.exception
        found += hits(at)
    assert not found, found


def test_data_page_on_a_real_looking_upload_names_no_flag(session):
    at = _page(session, "Data")
    at.radio(key="w_data_ui_source").set_value("Upload CSV").run()
    data = criminal_justice_csv(n=300)
    columns = data.decode().splitlines()[0].split(",")
    at.file_uploader(key="upload_private").set_value(("people.csv", data, "text/csv")).run()
    assert not at.exception, at.exception
    labels = [b for b in at.selectbox if b.label == "Label column"]
    labels[0].set_value("two_year_recid").run()
    assert not at.exception, at.exception
    found = hits(at, columns)
    assert not found, found
    text = " ".join(visible_text(at))
    for column in ("first", "last", "is_recid", "event", "violent_recid", "priors_count"):
        assert f"**{column}**" in text, column  # every problem listed at once, before the file loads
    assert "the label the label" not in text and "--drop" not in text


def test_the_fixes_are_one_click_each_and_the_real_table_loads():
    """The criminal-justice table: choose the label, then one click per fix; no round trips."""
    at = _page(fresh(), "Data")
    at.radio(key="w_data_ui_source").set_value("Upload CSV").run()
    at.file_uploader(key="upload_private").set_value(("people.csv", criminal_justice_csv(n=300), "text/csv")).run()
    assert any("never guessed" in i.value for i in at.info)  # no column named like a label: nothing loads
    assert "Loaded: people.csv" not in [s.value for s in at.main.subheader]
    next(b for b in at.selectbox if b.label == "Label column").set_value("two_year_recid").run()
    errors = " ".join(e.value for e in at.error)
    assert "Duplicate column names" in errors and "empty in every row" in errors and "missing" in errors

    def click(title: str) -> None:
        next(b for b in at.button if b.label == title).click().run()
        assert not at.exception, at.exception

    click("Rename the repeated names (a, a.2, a.3)")
    click("Drop the empty columns")
    click("Impute missing values inside each teacher")
    assert "Loaded: people.csv" in [s.value for s in at.main.subheader]
    warned = " ".join(w.value for w in at.warning)
    for column in ("first", "last", "is_recid", "event", "c_case_number", "dob"):
        assert f"**{column}**" in warned, column
    # the identifiers and stand-ins are left out of the features by default: one click keeps one
    assert any("Left out of the features: 'id' (identifier" in i.value for i in at.info)
    features = int(next(m.value for m in at.main.metric if m.label == "Features"))
    click("Keep 'first' as a feature")
    assert int(next(m.value for m in at.main.metric if m.label == "Features")) == features + 1
    click("Leave 'first' out of the features")
    assert int(next(m.value for m in at.main.metric if m.label == "Features")) == features
    click("Drop 'dob'")
    assert int(next(m.value for m in at.main.metric if m.label == "Features")) == features - 1
    assert "**dob**" not in " ".join(w.value for w in at.warning)


def test_the_demo_data_says_which_check_it_did_not_make(session):
    """Generated data: x0 gives the label by design, so the stand-in check is not made, and said so."""
    at = _page(session, "Data")
    at.radio(key="w_data_ui_source").set_value("Generator").run()
    assert not at.exception, at.exception
    text = " ".join(visible_text(at))
    assert "stand-in" not in " ".join(w.value for w in at.warning)
    summary = next(c.value for c in at.caption if c.value.startswith(("No problem found", "1 problem", "2 problem")))
    assert "Not checked: label stand-ins" in summary and "generated data" in summary
    assert "nothing looks wrong" not in text.lower() and "No column looks like" not in text


def _shown_strings(path: Path) -> list[str]:
    """Bare strings that Streamlit's magic would write on the page: every string statement
    except a module's or a function's docstring (Streamlit shows the others as text)."""
    import ast

    found = []

    def visit(body, docstring_allowed: bool) -> None:
        for i, node in enumerate(body):
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                if not (i == 0 and docstring_allowed):
                    found.append(f"{path.name}:{node.lineno}: {node.value.value.strip()[:60]}")
            for name in ("body", "orelse", "finalbody"):
                inner = getattr(node, name, None)
                if isinstance(inner, list) and not isinstance(node, ast.ClassDef):
                    visit(inner, isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and name == "body")
            for handler in getattr(node, "handlers", []):
                visit(handler.body, False)

    visit(ast.parse(path.read_text(encoding="utf-8")).body, True)
    return found


@pytest.mark.parametrize("path", [ROOT / "app.py", *sorted((ROOT / "app_pages").glob("[0-9]*.py"))], ids=lambda p: p.name)
def test_no_page_holds_a_bare_string_that_would_be_shown(path):
    found = _shown_strings(path)
    assert not found, found


def test_slider_values_are_the_sliders_own_steps():
    from app_pages._widgets import on_step

    v = 3.0
    for _ in range(3):  # three keyboard steps of 0.1, as a browser sends them
        v += 0.1
    assert v != 3.3 and on_step(v, 0.1, 0.1) == 3.3
    assert on_step(0.30000000000000004, 0.1, 0.1) == 0.3 and on_step(12.0, 0.1, 0.1) == 12.0
    assert on_step(0.0149, 0.01, 0.01) == 0.01 and on_step(0.0251, 0.01, 0.01) == 0.03
