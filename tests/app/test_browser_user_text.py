"""User text in Chromium: exactly its characters, never markup (no ``<img>``, no ``javascript:`` link).

* :func:`app_pages._text.literal` on a page of its own: each of some 250 texts (the issue's two
  names, Markdown and HTML constructs, Streamlit's colours, emoji and icons, and random strings
  of the characters that start markup, drawn with a fixed seed) is shown by ``st.markdown``
  exactly as its characters, and none creates an element: no image, no link but the web
  addresses Streamlit links in any text.
* The lab's main flow on a file whose columns are named ``<img src=x onerror=alert(1)>`` and
  ``[x](javascript:alert(1))``, whose label column and classes carry such text and whose file
  name does too: upload, column check, load, train, label, a query's vote bars, the student;
  on each page of the flow the names are shown as those characters, no ``<img>`` element with
  one of their sources exists, no link points to ``javascript:``, and no dialog ever opens
  (``tests/app/test_app_user_text.py`` opens every page in AppTest).
"""

from __future__ import annotations

import functools
import json
import os
import random
import subprocess
import sys
import time

import pytest

from conftest import ROOT, _healthy, free_port, go_to, open_data_page, settle, train_teachers
from test_app_user_text import CLASSES, FILE, IMG, LABEL, LINK, payload_csv

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WAIT = 120_000  # ms: a loaded two-core machine (every page of this flow runs live on teaching data)
settle = functools.partial(settle, timeout=WAIT)
go_to = functools.partial(go_to, timeout=WAIT)

FIXED = [
    IMG, LINK, LABEL, *CLASSES, FILE, "<script>alert(1)</script>", "<a href='javascript:alert(1)'>y</a>",
    "**bold** _it_ `code`", "$x^2$ $$y$$", "$5 and $6", ":smile: :red[red] :material/home: :blue-background[b]",
    "note: :smile:", "a:b:c:d", "x:y/z:w", ":+1: :-1:", ":)", "<3", "1. a", "- b", "+ c", "# h", "> q", "***",
    "---", "&amp; &lt;b&gt;", "a_b_c _a_ __b__", "__init__", "mean_radius", "~~s~~ ~t~", "|a|b|", "![i](x.png)",
    "<http://x.example>", "``d``", "\\", "x\\", "a\\*b", "\\[x\\]", "{a} (b) !c", "<!-- c -->", "[a]: /x",
    "[^1]", "3:1 ratio", "k=4; n>3", "ε ≥ 1 ⊥", "1) x", "10.5 m", "Adult: private = adult_train",
]


def texts() -> list[str]:
    rng = random.Random(20240611)
    out = list(FIXED)
    alphabet = list("\\`*_{}[]()#+-.!|~$:&<>=\"'@%^;,/?ax1 ") + ["smile", "material", "red", "b", "http"]
    while len(out) < 250:
        s = " ".join("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 14))).split())
        if s:
            out.append(s)
    return out


SCRIPT = '''import json, sys
sys.path.insert(0, {root!r})
import streamlit as st
from app_pages._text import literal
for i, text in enumerate(json.loads({texts!r})):
    st.markdown(f"T{{i}}: " + literal(text))
st.button("done")
'''

NO_MARKUP_JS = """() => {
  const main = document.querySelector('[data-testid="stMain"]') || document.body;
  const images = [...document.querySelectorAll('img')].map(e => e.getAttribute('src') || '')
    .filter(src => ['x', 'c', 'f', 'x.png'].includes(src));
  const scripts = [...document.querySelectorAll('[onerror], [onclick], [onload]')].map(e => e.outerHTML.slice(0, 80));
  const links = [...document.querySelectorAll('a')].map(a => a.getAttribute('href') || a.getAttribute('xlink:href') || '')
    .filter(h => h.trim().toLowerCase().startsWith('javascript'));
  return {images, scripts, links};
}"""


def assert_no_markup(page, where: str, dialogs: list) -> None:
    found = page.evaluate(NO_MARKUP_JS)
    assert found == {"images": [], "scripts": [], "links": []}, (where, found)
    assert not dialogs, (where, dialogs)


def test_literal_shows_every_text_as_its_characters(browser_page, tmp_path):
    cases = texts()
    script = tmp_path / "literal_page.py"
    script.write_text(SCRIPT.format(root=str(ROOT), texts=json.dumps(cases)))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = dict(os.environ, HOME=str(tmp_path), STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
    with open(tmp_path / "streamlit.log", "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(script), "--server.port", str(port),
                                 "--server.address", "127.0.0.1", "--server.headless", "true"],
                                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 120
            while not _healthy(url):
                assert proc.poll() is None and time.monotonic() < deadline, "the page's server did not start"
                time.sleep(0.5)
            with browser_page(wait=WAIT, width=1280, height=720) as page:
                dialogs: list = []
                page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
                page.goto(url)
                page.get_by_role("button", name="done").wait_for(timeout=WAIT)
                settle(page)
                shown = page.evaluate("""() => [...document.querySelectorAll('[data-testid="stMarkdownContainer"]')]
                    .map(e => [e.innerText, e.querySelectorAll('*:not(p)').length,
                               [...e.querySelectorAll('a')].map(a => a.getAttribute('href'))])""")
                assert_no_markup(page, "the page of texts", dialogs)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    rendered = {}
    for text, elements, links in shown:
        if text.startswith("T") and ": " in text:
            i = int(text[1:text.index(":")])
            rendered[i] = (text[text.index(": ") + 2:], elements, links)
    assert len(rendered) == len(cases)
    squash = lambda s: " ".join(s.split())  # noqa: E731 - the page collapses runs of white space
    wrong = [(c, rendered[i][0]) for i, c in enumerate(cases) if squash(rendered[i][0]) != squash(c)]
    assert not wrong, wrong[:5]
    # no element inside a paragraph, but the links Streamlit makes of a web address in any text
    made = [(c, rendered[i][1:]) for i, c in enumerate(cases)
            if rendered[i][1] != len(rendered[i][2]) or any(not h.startswith(("http://", "mailto:"))
                                                               for h in rendered[i][2])]
    assert not made, made[:5]


def choose(page, box_label: str, option: str) -> None:
    """Pick ``option`` in the select box labeled ``box_label`` (its list opened again if a rerun closed it)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    box = page.get_by_test_id("stSelectbox").filter(has_text=box_label)
    for _ in range(3):
        settle(page)
        box.click()
        try:
            page.get_by_role("option", name=option, exact=True).click(timeout=10_000)
            return
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
    raise AssertionError(f"{option!r} could not be chosen in {box_label!r}")


def test_the_main_flow_shows_names_from_a_file_as_text(app_server, browser_page, tmp_path):
    from playwright.sync_api import expect

    path = tmp_path / FILE
    path.write_bytes(payload_csv())
    with browser_page(wait=WAIT, height=1400) as page:
        open_data_page(page, app_server, wait=WAIT)  # the default data: nothing of the file yet
        dialogs: list = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        main = page.get_by_test_id("stMainBlockContainer")
        sidebar = page.get_by_test_id("stSidebar")

        # ---- Data: upload, choose the label column, the column check names the column, the fix
        page.get_by_text("Upload CSV", exact=True).click()
        settle(page)
        page.get_by_test_id("stFileUploader").filter(has_text="Private labeled CSV").locator(
            "input[type=file]").set_input_files(str(path))
        settle(page)
        choose(page, "Label column", LABEL)
        settle(page)
        expect(main.get_by_test_id("stAlert").filter(has_text=IMG).first).to_be_visible()
        expect(main).to_contain_text(f"Column check of {FILE} (not loaded yet)")
        assert_no_markup(page, "the column check", dialogs)
        page.get_by_role("button", name="Impute missing values inside each teacher").click()
        page.get_by_role("heading", name=f"Loaded: {FILE}").wait_for()
        settle(page)
        expect(main).to_contain_text(f"Label column {LABEL}; classes: {CLASSES[0]}, {CLASSES[1]}")
        expect(sidebar).to_contain_text(FILE)
        assert_no_markup(page, "Data", dialogs)

        # ---- Ensemble: train ten teachers
        train_teachers(page, 10, wait=WAIT)
        assert_no_markup(page, "Ensemble", dialogs)

        # ---- teaching data (declared): the live views draw the class names
        sidebar.get_by_text("Teaching data?").click()
        sidebar.get_by_text("I confirm that this upload holds nobody's private data", exact=False).click()
        sidebar.get_by_role("button", name="Treat this upload as teaching data").click()
        settle(page)
        go_to(page, "Private labeling", "Private labeling")
        page.get_by_text("PATE LNMax (Laplace noisy max)", exact=True).click()
        settle(page)
        expect(page.get_by_test_id("stMetric").filter(has_text="Answered").first).to_be_visible()
        assert_no_markup(page, "Private labeling", dialogs)
        go_to(page, "One query", "One query under the microscope")
        ticks = page.locator(".xtick text")
        expect(ticks.filter(has_text=CLASSES[0])).to_have_count(1)
        expect(ticks.filter(has_text=CLASSES[1])).to_have_count(1)
        expect(main).to_contain_text("True class: ")
        assert_no_markup(page, "One query", dialogs)
        go_to(page, "Student & export", "Student and export")
        expect(sidebar).to_contain_text(FILE)
        assert_no_markup(page, "Student & export", dialogs)
        page.screenshot(path=str(tmp_path / "user_text.png"), full_page=True)
