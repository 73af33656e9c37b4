"""A real job's ledger survives a restart of the server (headless Chromium, Playwright).

A served app is given a two-file upload, named, budgeted and run once; the server is then
stopped and a new one started on the same ledger store.  The same files uploaded and given
the same name show the run and the budget: nothing was kept in the server's memory only.
"""

from __future__ import annotations

import re

import pytest

from conftest import open_data_page, serve_app, train_teachers, upload_two_files
from test_app_plan_spend import two_files
from test_browser import WAIT, go_to, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def upload_and_name(page, url, folder, name: str) -> None:
    from playwright.sync_api import expect

    open_data_page(page, url, wait=WAIT)
    upload_two_files(page, folder, wait=WAIT)
    box = page.get_by_role("textbox", name="Name of this data")
    box.fill(name)
    page.get_by_role("button", name="Use this name").click()
    expect(page.get_by_test_id("stMainBlockContainer")).to_contain_text(f"Ledger of this data: {name}")
    settle(page)


def test_a_restarted_server_keeps_a_real_jobs_ledger(browser_page, tmp_path):
    from playwright.sync_api import expect

    private, public = two_files()
    (tmp_path / "private.csv").write_bytes(private)
    (tmp_path / "public.csv").write_bytes(public)
    with browser_page(wait=WAIT) as page:
        with serve_app(tmp_path, "first.log") as url:
            upload_and_name(page, url, tmp_path, "clinic")
            train_teachers(page, 40, wait=WAIT)
            go_to(page, "Private labeling", "Private labeling")
            main = page.get_by_test_id("stMainBlockContainer")
            budget = page.get_by_role("spinbutton", name="Total budget ε")
            budget.fill("10")  # the default run costs ε 4
            budget.press("Tab")
            page.get_by_role("button", name="Set the budget for this data").click()
            expect(main).to_contain_text("Total privacy budget on this data: (ε, δ) = (10, 0.0001)")
            settle(page)
            page.get_by_role("button", name="Run on the private votes").click()
            expect(main).to_contain_text(re.compile(r"Spent on this data so far: \(ε, δ\) = \([0-9.]+, [^)]+\) over 1 run "))
            settle(page)
            caption = page.get_by_test_id("stSidebar").get_by_text(re.compile("^Spent on this data: ε"))
            before = caption.inner_text()
            assert re.search(r"ε [0-9.]+ of 10 over 1 run · its ledger: clinic", before), before
        # ---- the server is stopped; a new one starts on the same store
        with serve_app(tmp_path, "second.log") as url:
            upload_and_name(page, url, tmp_path, "clinic")
            sidebar = page.get_by_test_id("stSidebar")
            expect(sidebar).to_contain_text(before)  # the same total, budget and run count
            go_to(page, "Private labeling", "Private labeling")
            expect(page.get_by_test_id("stMainBlockContainer")).to_contain_text(
                "Total privacy budget on this data: (ε, δ) = (10, 0.0001)")
