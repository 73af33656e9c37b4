"""Plan, then spend, in a real headless Chromium (Playwright): a real job as a person would run it.

A two-file upload (a private labeled CSV and a separate public CSV) is a real job.  The walk:
upload both files, train the teachers, open every page and move its sliders with the keyboard
(ε, the assumed teacher quality, the Bounds page's model), reading "Spent on this data so far"
at zero on every page that shows it; then set the total budget, read the run's price ("this run:
ε … · spent after it: … of 3"), press the run button, and read the total: exactly that price.
The Student & export page then offers the run just paid for as the release; its CSV is
downloaded into the test's temporary folder.  Screenshots of the plan at 1400 and 1024 px
go there too.  Every wait is on visible text or a role, never a fixed sleep.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

from conftest import open_data_page, train_teachers, upload_two_files
from test_app_plan_spend import two_files
from test_browser import WAIT, go_to, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

K = 40
M = 300  # rows of the public file
ZERO = "Spent on this data so far: (ε, δ) = (0, 0)"
PREDICTED = re.compile("predicted — no private data used", re.IGNORECASE)


def move_slider(page, label: str, key: str, presses: int = 3) -> None:
    """Move the slider labelled ``label`` with the keyboard (as a person would), then wait."""
    slider = page.get_by_test_id("stSlider").filter(has_text=label).first.get_by_role("slider")
    slider.focus()
    for _ in range(presses):
        slider.press(key)
    settle(page)


def spent_zero(page) -> None:
    from playwright.sync_api import expect

    expect(page.get_by_test_id("stMainBlockContainer")).to_contain_text(ZERO)


def test_a_real_job_plans_for_free_and_spends_only_its_stated_price(app_server, browser_page, tmp_path):
    from playwright.sync_api import expect

    private, public = two_files()
    (tmp_path / "private.csv").write_bytes(private)
    (tmp_path / "public.csv").write_bytes(public)

    with browser_page(wait=WAIT, downloads=True) as page:
        open_data_page(page, app_server, wait=WAIT, demo_seed=True)
        sidebar = page.get_by_test_id("stSidebar")
        expect(sidebar).to_contain_text("Teaching data")  # the generated first view

        # ---- Data: upload the public file, then the private one
        upload_two_files(page, tmp_path, wait=WAIT)
        expect(sidebar).to_contain_text("Real job")
        expect(sidebar).to_contain_text("nothing runs on the private votes unless you ask")
        # ---- a real job is named once (its ledger's name in the store); the file's name is offered
        name = page.get_by_role("textbox", name="Name of this data")
        expect(name).to_have_value("private")
        name.fill("job")
        page.get_by_role("button", name="Use this name").click()
        expect(page.get_by_test_id("stMainBlockContainer")).to_contain_text("Ledger of this data: job")
        settle(page)

        # ---- Ensemble: train the teachers (training spends nothing)
        train_teachers(page, K, wait=WAIT)
        spent_zero(page)

        # ---- Private labeling: the plan, sliders moved; nothing spent
        go_to(page, "Private labeling", "Private labeling")
        main = page.get_by_test_id("stMainBlockContainer")
        expect(main).to_contain_text(PREDICTED)
        expect(page.get_by_test_id("stMetric").filter(has_text="Answered (plan)")).to_be_visible()
        move_slider(page, "ε (privacy budget)", "ArrowLeft", 20)
        move_slider(page, "Assumed teacher accuracy", "ArrowRight", 5)
        move_slider(page, "Assumed share of hard queries", "ArrowLeft", 2)
        spent_zero(page)
        page.screenshot(path=str(tmp_path / "plan_1400.png"), full_page=True)
        page.set_viewport_size({"width": 1024, "height": 1500})
        settle(page)
        page.screenshot(path=str(tmp_path / "plan_1024.png"), full_page=True)
        page.set_viewport_size({"width": 1400, "height": 1500})

        # ---- Bounds and Compare: predicted overlays and table, sliders moved; nothing spent
        go_to(page, "Bounds", "Bounds: what the theory predicts")
        expect(main).to_contain_text(PREDICTED)
        move_slider(page, "Teacher error α for the model", "ArrowRight", 3)
        spent_zero(page)
        go_to(page, "Compare", "Compare the mechanisms")
        expect(main).to_contain_text(PREDICTED)
        move_slider(page, "ε (privacy budget)", "ArrowRight", 5)
        spent_zero(page)
        for title, heading in (("Data", "Data"), ("Student & export", "Student and export"),
                               ("Privacy audit", "Privacy audit")):
            go_to(page, title, heading)
        expect(sidebar).to_contain_text("Spent on this data: ε 0 over 0 runs")

        # ---- the budget, the price, the run: the total is exactly the price shown
        go_to(page, "Private labeling", "Private labeling")
        budget = page.get_by_role("spinbutton", name="Total budget ε")
        budget.fill("3")
        budget.press("Tab")
        page.get_by_role("button", name="Set the budget for this data").click()
        expect(main).to_contain_text("Total privacy budget on this data: (ε, δ) = (3, 0.0001)")
        settle(page)
        price = main.get_by_text(re.compile(r"^this run: ε [0-9.]+")).first
        match = re.search(r"this run: ε ([0-9.]+) .*spent after it: ([0-9.]+) of 3", price.inner_text())
        assert match, price.inner_text()
        cost = match.group(1)
        assert match.group(2) == cost  # nothing was spent before it
        spent_zero(page)
        page.get_by_role("button", name="Run on the private votes").click()
        expect(main).to_contain_text(f"Spent on this data so far: (ε, δ) = ({cost},")
        expect(main).to_contain_text(re.compile(rf"Spent on this data so far: \(ε, δ\) = \({re.escape(cost)}, "
                                                r"[^)]+\) over 1 run "))
        settle(page)

        # ---- Student & export: the paid run is the release; its CSV has one row per public query
        go_to(page, "Student & export", "Student and export")
        expect(page.get_by_text(re.compile(r"Released \(run 1 on this data\)"))).to_be_visible()
        with page.expect_download() as info:
            page.get_by_role("button", name="Download labeled CSV").click()
        path = tmp_path / "private_labels.csv"
        info.value.save_as(path)
        page.screenshot(path=str(tmp_path / "export.png"))

    frame = pd.read_csv(path)
    # "a" splits the label at one threshold: a stand-in the column check leaves out by default
    assert len(frame) == M and {"b", "label", "answered", "status"} <= set(frame.columns)
    assert (tmp_path / "plan_1400.png").stat().st_size > 10_000
    assert (tmp_path / "plan_1024.png").stat().st_size > 10_000
