"""Every page in a real headless Chromium at 1400 and 1024 px, then at 1024 px with the projector on:
no text is cut, and Compare's and Sweeps' charts give every line its own look.

On the default data (reproducible demo seed) every page of the menu is opened at each width and
measured in the browser (:data:`OVERFLOW_JS`), in the main area and the sidebar:

* any element whose content is wider than its box while the box cuts or scrolls it (overflow
  hidden, clip, auto or scroll, or an ellipsis): metric labels, formulas (KaTeX), captions,
  button and toggle labels (every expander is opened first);
* a table whose columns do not fit its width (the data grid's own scroller);
* chart text outside its chart: axis titles, tick labels, legend entries, annotations.

On Compare and Sweeps (each of its three tabs) the rendered Plotly figures are read back
(``gd._fullData``): every line trace must have its own (colour, dash, marker), and every
colour a contrast of at least 3:1 on white (WCAG 2).  With the projector on, the ledger banner
stands at the top of the page and a screenshot of each page is saved in the test's folder
(``projector_<page>.png``).  Last, the lecture at 1024 × 768 with the projector: each preset's
button (steps (a)–(g), the certified release) opens its page with the banner still there and no
text cut (``preset_<n>_<step>.png``).
"""

from __future__ import annotations

import functools

import pytest

from app_pages._presets import PRESETS
from conftest import go_to, open_data_page, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WAIT = 240_000  # ms: Compare runs every mechanism at seven budgets on a loaded two-core machine

PAGES = {  # menu title → the page's heading
    "Data": "Data",
    "A leak": "A leak: does the model remember its rows?",
    "Ensemble": "Ensemble of teachers",
    "Private labeling": "Private labeling",
    "One query": "One query under the microscope",
    "Bounds": "Bounds: what the theory predicts",
    "Sweeps": "Sweeps against the bounds",
    "Compare": "Compare the mechanisms",
    "Student & export": "Student and export",
    "Privacy audit": "Privacy audit",
}

settle = functools.partial(settle, timeout=WAIT)
go_to = functools.partial(go_to, timeout=WAIT)

# Each expander opens with a half-second height animation; it is run to its end at once (the
# open expander then stands as it would after the animation).
OPEN_EXPANDERS_JS = """() => {
  const main = '[data-testid="stMain"] ';
  for (const d of document.querySelectorAll(main + 'details:not([open]) > summary')) d.click();
  for (const d of document.querySelectorAll(main + 'details')) for (const a of d.getAnimations()) a.finish();
}"""

# The page stands: every expander of the main area open, none still animating its height (it
# cuts its content while it does), and every chart shown drawn.
STANDING_JS = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  if (!main) return false;
  for (const d of main.querySelectorAll('details'))
    if (!d.open || d.style.overflow === 'hidden' || d.getAnimations().length) return false;
  for (const c of main.querySelectorAll('[data-testid="stPlotlyChart"]')) {
    if (c.getBoundingClientRect().width === 0) continue;
    const gd = c.querySelector('.js-plotly-plot');
    if (!gd || !gd._fullLayout || !gd.querySelector('svg.main-svg')) return false;
  }
  return true;
}"""

OVERFLOW_JS = """() => {
  const out = [];
  const roots = [document.querySelector('[data-testid="stMain"]'),
                 document.querySelector('[data-testid="stSidebarContent"]')].filter(Boolean);
  const shown = (el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && el.getClientRects().length > 0
      && getComputedStyle(el).visibility !== 'hidden';
  };
  const name = (el) => {
    const t = el.closest('[data-testid]');
    const text = (el.innerText || el.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 90);
    return (t ? t.getAttribute('data-testid') : el.tagName) + ' <' + el.tagName.toLowerCase()
      + (el.className && el.className.baseVal === undefined ? '.' + String(el.className).split(' ').join('.') : '')
      + ' ' + el.scrollWidth + '>' + el.clientWidth + '>: ' + text;
  };
  for (const root of roots) {
    // 1. Content wider than a box that cuts or scrolls it.
    for (const el of root.querySelectorAll('*')) {
      if (el.closest('.js-plotly-plot') || el.closest('[data-testid="stDataFrame"]')) continue;
      // A box one pixel wide is a screen reader's copy, hidden by design (KaTeX's MathML, a radio's input).
      if (!shown(el) || el.clientWidth <= 1) continue;
      const cs = getComputedStyle(el);
      const cuts = ['hidden', 'clip', 'auto', 'scroll'].includes(cs.overflowX) || cs.textOverflow === 'ellipsis';
      if (cuts && el.scrollWidth > el.clientWidth + 1) out.push('cut ' + name(el));
    }
    // 2. Tables: the columns must fit the grid's width (no sideways scrolling).
    for (const grid of root.querySelectorAll('[data-testid="stDataFrame"]')) {
      if (!shown(grid)) continue;
      const scroller = grid.querySelector('.dvn-scroller') || grid;
      if (scroller.scrollWidth > scroller.clientWidth + 1)
        out.push('table wider than its box (' + scroller.scrollWidth + ' > ' + scroller.clientWidth + '): '
                 + Array.from(grid.querySelectorAll('[role="columnheader"]')).map(h => h.textContent).join(' | '));
    }
    // 3. Chart text outside its chart.
    for (const plot of root.querySelectorAll('.js-plotly-plot')) {
      if (!shown(plot)) continue;
      const svg = plot.querySelector('svg.main-svg');
      if (!svg) continue;
      const box = svg.getBoundingClientRect();
      for (const t of plot.querySelectorAll(
          '.xtitle, .ytitle, .g-xtitle text, .g-ytitle text, .xtick text, .ytick text, .legendtext, '
          + '.annotation-text, .gtitle, .textpoint text')) {
        const r = t.getBoundingClientRect();
        if (r.width === 0 || !t.textContent.trim()) continue;
        if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1)
          out.push('chart text outside its chart: ' + t.textContent.trim().slice(0, 80));
      }
    }
  }
  return [...new Set(out)];
}"""

TRACES_JS = """() => Array.from(document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot'))
  .filter(gd => gd.getBoundingClientRect().width > 0 && gd._fullData)
  .map(gd => gd._fullData.filter(t => t.visible === true && t.type === 'scatter' && String(t.mode).includes('lines'))
    .map(t => ({name: t.name, color: (t.line || {}).color, dash: (t.line || {}).dash,
                symbol: String((t.marker || {}).symbol)})))"""


def opened(page) -> None:
    """Open every expander of the main area (what it holds is measured open) and wait until the page
    stands (:data:`STANDING_JS`), then a little more for the layout to follow."""
    page.evaluate(OPEN_EXPANDERS_JS)
    page.wait_for_function(STANDING_JS, polling=50)
    page.wait_for_timeout(200)


def overflowing(page) -> list[str]:
    """What overflows on the page now and still two seconds later (a table or chart being drawn
    is measured once it stands)."""
    found = page.evaluate(OVERFLOW_JS)
    if found:
        page.wait_for_timeout(2000)
        again = set(page.evaluate(OVERFLOW_JS))
        found = [f for f in found if f in again]
    return found


def rgb(colour: str) -> tuple[int, int, int]:
    """``#RRGGBB``, ``#RGB`` or ``rgb(r, g, b)`` as three integers."""
    c = colour.strip()
    if c.startswith("#"):
        h = c[1:]
        if len(h) == 3:
            h = "".join(x * 2 for x in h)
        return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)
    parts = c[c.index("(") + 1:c.index(")")].split(",")
    return tuple(int(float(p)) for p in parts[:3])


def contrast_on_white(colour: str) -> float:
    """WCAG 2 contrast ratio against white, computed here from the definition."""
    def lin(v: int) -> float:
        s = v / 255
        return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (lin(v) for v in rgb(colour))
    return 1.05 / (0.2126 * r + 0.7152 * g + 0.0722 * b + 0.05)


def check_traces(page, where: str) -> list[str]:
    """What is wrong with the line traces of the charts on the page: shared looks, faint colours."""
    problems = []
    figures = page.evaluate(TRACES_JS)
    assert any(figures), f"{where}: no chart with lines was drawn"
    for traces in figures:
        seen: dict[tuple, str] = {}
        for t in traces:
            look = (rgb(t["color"]), t["dash"], t["symbol"])
            if look in seen:
                problems.append(f"{where}: {t['name']} and {seen[look]} share colour, dash and marker {look}")
            seen[look] = t["name"]
            if contrast_on_white(t["color"]) < 3.0:
                problems.append(f"{where}: {t['name']} in {t['color']} has contrast "
                                f"{contrast_on_white(t['color']):.2f} < 3 on white")
    return problems


def test_the_scan_finds_what_it_looks_for(browser_page):
    """The measuring script itself: a cut label, a too-wide table, a title outside its chart."""
    html = """<html><body>
      <div data-testid="stMain">
        <p style="width:80px;overflow:hidden;white-space:nowrap;text-overflow:ellipsis">a label far too long for its box</p>
        <p style="width:400px">a label that fits</p>
        <div data-testid="stDataFrame" style="width:100px"><div class="dvn-scroller" style="width:100px;overflow:auto">
          <div style="width:300px">wide</div></div></div>
        <div class="js-plotly-plot" style="width:200px;height:100px;position:relative">
          <svg class="main-svg" width="200" height="100"><text class="xtitle" x="150" y="50">axis title far outside</text>
          <text class="ytitle" x="10" y="50">inside</text></svg></div>
      </div></body></html>"""
    with browser_page(wait=WAIT, width=1024, height=768) as page:
        page.set_content(html)
        found = page.evaluate(OVERFLOW_JS)
    assert any(f.startswith("cut ") and "far too long" in f for f in found), found
    assert not any("that fits" in f for f in found), found
    assert any(f.startswith("table wider") for f in found), found
    assert any("axis title far outside" in f for f in found) and not any(": inside" in f for f in found), found
    assert contrast_on_white("#FFFFFF") == pytest.approx(1.0) and contrast_on_white("rgb(0, 0, 0)") == pytest.approx(21.0)
    assert contrast_on_white("#767676") == pytest.approx(4.54, abs=0.01)  # WCAG's well-known 4.5:1 grey


def test_no_page_cuts_text_and_every_line_has_its_own_look(app_server, browser_page, tmp_path):
    from playwright.sync_api import expect

    problems: list[str] = []
    with browser_page(wait=WAIT, height=1000) as page:
        open_data_page(page, app_server, wait=WAIT, demo_seed=True)
        for width, height, projector in ((1400, 1000, False), (1024, 768, False), (1024, 768, True)):
            page.set_viewport_size({"width": width, "height": height})
            if projector:
                page.get_by_test_id("stSidebar").get_by_text("Projector", exact=True).click()
                settle(page)
            where_width = f"{width} px" + (" with the projector" if projector else "")
            for title, heading in PAGES.items():
                go_to(page, title, heading)
                go = page.get_by_role("button", name="Run the comparison")
                if go.count():  # Compare shows its price first; its runs once clicked (then drawn already)
                    go.first.click()
                    settle(page)
                if projector:
                    banner = page.locator(".ledger-banner")
                    expect(banner).to_be_visible()
                    assert "ledger" in banner.inner_text()
                    top = banner.bounding_box()["y"]
                    assert top < page.get_by_role("heading", name=heading, exact=True).bounding_box()["y"]
                    page.screenshot(path=tmp_path / f"projector_{title.replace(' ', '_')}.png")
                opened(page)
                problems += [f"{title} at {where_width}: {what}" for what in overflowing(page)]
                if title == "Compare":
                    problems += check_traces(page, f"Compare at {where_width}")
                if title == "Sweeps":
                    for tab in ("Answered", "⊥", "Wrong labels"):
                        page.get_by_role("tab", name=tab).click()
                        page.wait_for_timeout(500)
                        problems += [f"Sweeps ({tab}) at {where_width}: {what}" for what in overflowing(page)]
                        problems += check_traces(page, f"Sweeps ({tab}) at {where_width}")
        # The lecture at 1024 × 768 with the projector: each preset one click away, its page uncut.
        for n, key in enumerate(PRESETS):
            title = PRESETS[key]["title"]
            page.get_by_test_id("stSidebar").get_by_role("button", name=title, exact=True).click()
            settle(page)
            page.get_by_text(title + ".", exact=False).first.wait_for()  # the preset's note above its page
            go = page.get_by_role("button", name="Run the comparison")
            if go.count():
                go.first.click()
                settle(page)
            expect(page.locator(".ledger-banner")).to_be_visible()  # the projector stays on
            page.screenshot(path=tmp_path / f"preset_{n}_{key}.png")
            opened(page)
            problems += [f"preset {title} at 1024 px with the projector: {what}" for what in overflowing(page)]
    assert not problems, "\n".join(problems)
    assert len(list(tmp_path.glob("projector_*.png"))) == len(PAGES)
    assert len(list(tmp_path.glob("preset_*.png"))) == len(PRESETS)
