""" (red team): a release drawn while an upload was declared teaching data, with the demo seed
on, survives "Treat it as a real job again": the real job's export page shows and exports it, its
noise is the public demo seed's (two sessions draw the identical labels), and the job's ledger
holds no run for it. Left failing on purpose."""

from __future__ import annotations

import json

import numpy as np

from test_app import go, texts
from test_app_plan_spend import all_text, job_ledger_runs, train, two_files, upload_two_files


def _release_then_retract(lab, files):
    at = train(upload_two_files(lab(), files))
    at.sidebar.checkbox(key="teaching_declaration").check().run()
    at.sidebar.button(key="declare_teaching").click().run()
    go(at, "Private labeling")
    at.radio(key="w_privacy_mechanism").set_value("gnmax").run()
    at.slider(key="w_privacy_epsilon").set_value(0.1).run()
    go(at, "Student & export")
    at.button(key="release").click().run()
    assert not at.exception, at.exception
    at.sidebar.button(key="undeclare_teaching").click().run()
    assert not at.exception, at.exception
    assert "Real job" in " ".join(texts(at.sidebar.markdown))
    go(at, "Student & export")
    return at


def test_a_retracted_teaching_declaration_leaves_no_demo_seeded_release_on_the_real_job(lab, downloads):
    """Runs made while an upload was declared teaching data (drawn from the demo seed, charged
    to the lesson's ledger) are forgotten when it is declared a real job again: the real job
    shows, releases and exports none of them."""
    files = two_files()
    at = _release_then_retract(lab, files)
    assert "_release" not in at.session_state
    assert "Released (run" not in all_text(at)
    assert not any(b.label == "Download privacy report (JSON)" for b in at.get("download_button"))
    assert job_ledger_runs(at) == 0
