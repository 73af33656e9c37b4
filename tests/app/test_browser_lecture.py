"""The lecture's pages in a real headless Chromium at a projector's widths (1400 and 1024 px).

On the default data (reproducible demo seed): the leak page (its three advantages and the
ROC), one query under the microscope (draw 100 times: the measured shares beside the
formula's), and a sweep against the bounds, each at 1400 and at 1024 px wide.  Every
screenshot goes to the test's temporary folder; at each width the page's main block must
not scroll sideways (charts and formulas fit) and the chart must be drawn.
"""

from __future__ import annotations

import functools

import pytest

from conftest import go_to, open_data_page, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WAIT = 90_000  # ms: the default ensemble trains on first use on a loaded two-core machine
WIDTHS = (1400, 1024)


settle = functools.partial(settle, timeout=WAIT)
go_to = functools.partial(go_to, timeout=WAIT)


def fits(page) -> bool:
    """Whether the main block is no wider than the window (nothing cut off at the right)."""
    return page.evaluate(
        "() => { const m = document.querySelector('[data-testid=\"stMainBlockContainer\"]');"
        " return m.scrollWidth <= m.clientWidth + 2; }")


def test_lecture_pages_at_1400_and_1024_px(app_server, browser_page, tmp_path):
    from playwright.sync_api import expect

    shots = []
    with browser_page(wait=WAIT, height=1400) as page:
        open_data_page(page, app_server, wait=WAIT, first_result=True, demo_seed=True)

        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 1400})

            go_to(page, "A leak", "A leak: does the model remember its rows?")
            expect(page.get_by_text("The attacker's advantage", exact=True)).to_be_visible()
            expect(page.get_by_text("Published student", exact=True)).to_be_visible()
            expect(page.locator(".js-plotly-plot").first).to_be_visible()
            assert fits(page), f"leak page cut off at {width} px"
            page.screenshot(path=tmp_path / f"leak_{width}.png", full_page=True)
            shots.append(f"leak_{width}.png")

            go_to(page, "One query", "One query under the microscope")
            page.get_by_role("button", name="Draw 100 times").click()
            settle(page)
            expect(page.get_by_text("P(answered), formula")).to_be_visible()
            expect(page.get_by_text("Answered in 100 draws")).to_be_visible()
            assert fits(page), f"microscope cut off at {width} px"
            page.screenshot(path=tmp_path / f"microscope_{width}.png", full_page=True)
            shots.append(f"microscope_{width}.png")

            go_to(page, "Sweeps", "Sweeps against the bounds")
            page.get_by_role("tab", name="Wrong labels").click()  # measured beside the dotted bounds
            expect(page.locator(".js-plotly-plot >> visible=true").first).to_be_visible()
            expect(page.get_by_text("bound: PATE 2018 GNMax").first).to_be_visible()
            expect(page.get_by_text("The bounds drawn, with their constants")).to_be_visible()
            assert fits(page), f"sweep cut off at {width} px"
            page.screenshot(path=tmp_path / f"sweep_{width}.png", full_page=True)
            shots.append(f"sweep_{width}.png")
    for name in shots:
        assert (tmp_path / name).stat().st_size > 10_000, name
    assert len(shots) == 6
