"""The privacy unit in the app (AppTest): on a real job's Data page the column check offers to declare a
person column the unit (one click, instead of dropping it), every page's sidebar states the unit, the
teachers hold whole persons, the release's report says it, and the named dataset's ledger charges each
person of the private part (the test hold-out's persons are not read by the release)."""

from __future__ import annotations

import json

import numpy as np

from core.data import panel
from test_app import go, release, texts
from test_app_plan_spend import all_text, name_job, train

UNIT = "per person (column id): 270 persons"  # 300 less the 30 persons held out whole for the test


def panel_files() -> tuple[bytes, bytes]:
    table = panel(300, d=2, rng=4)
    frame = table.features.copy()
    frame.insert(0, "id", table.unit.ids[table.unit.codes])
    frame["label"] = np.where(table.labels == 1, "yes", "no")
    public = panel(60, d=2, rng=5).features.copy()
    public.insert(0, "id", [f"P{i:03d}" for i in range(len(public))])  # the public file's own person IDs
    return frame.to_csv(index=False).encode(), public.to_csv(index=False).encode()


def test_a_person_column_is_declared_the_unit_in_one_click_and_every_output_states_it(lab, downloads):
    at = lab()
    private, public = panel_files()
    go(at, "Data")
    at.radio(key="w_data_ui_source").set_value("Upload CSV").run()
    at.file_uploader(key="upload_public").set_value(("public.csv", public, "text/csv"))
    at.file_uploader(key="upload_private").set_value(("private.csv", private, "text/csv")).run()
    assert not at.exception, at.exception
    # As a data owner meets it: 'id' names a person, so it is left out of the features by default (a
    # two-file job: the public file's 'id', an identifier by its name, decides; docs/design.md §1.3); the
    # column check offers to declare it the unit instead.
    assert not texts(at.error), texts(at.error)
    assert "Loaded: private.csv" in texts(at.main.subheader), texts(at.main.subheader)
    assert any("Left out of the features: 'id' (identifier: its name ('id')" in i for i in texts(at.info)), \
        texts(at.info)
    assert any("repeats its values like a person key" in w for w in texts(at.warning)), texts(at.warning)
    assert "Privacy unit: **per row**" in " ".join(texts(at.sidebar.markdown))  # until declared
    declare = [b for b in at.button if b.label == "Declare 'id' the privacy unit (a guarantee per person)"]
    assert declare, [b.label for b in at.button]
    declare[0].click().run()
    assert not at.exception, at.exception
    assert "Loaded: private.csv" in texts(at.main.subheader), (texts(at.error), texts(at.main.subheader))
    text = all_text(at)
    assert f"Privacy unit:** {UNIT}, at most" in text, text[:2000]
    assert not any("person key" in w for w in texts(at.warning))  # declared: no longer a warning
    assert f"Privacy unit: **{UNIT}, at most" in " ".join(texts(at.sidebar.markdown))
    assert "id" not in at.session_state["data_cfg"].get("drop_columns", [])
    # The test hold-out is split by person: persons, not rows, are counted.
    train(at, k=20)
    go(at, "Student & export")
    name_job(at, "panel")
    at.number_input(key="job_budget_epsilon").set_value(50.0)
    at.button(key="FormSubmitter:job_budget_form-Set the budget for this data").click().run()
    release(at)
    buttons = {b.label: b for b in at.get("download_button")}
    report = json.loads(downloads[buttons["Download privacy report (JSON)"].proto.url][0])
    assert report["privacy_unit"]["column"] == "id" and report["privacy_unit"]["unit"] == "person"
    assert report["adjacency"] == "replace all rows of one person (column id)"
    assert report["privacy_unit"]["description"].startswith("per person (column id): ")
    assert "at most" not in report["privacy_unit"]["description"]  # a person's row count stays with the owner
    assert report["dataset"] == "panel"  # the job's name, not a path, not null
    # The public file's person IDs join the labels back: carried first as a key, never a feature.
    import io

    import pandas as pd

    labeled = pd.read_csv(io.BytesIO(downloads[buttons["Download labeled CSV"].proto.url][0]))
    assert list(labeled["id"]) == [f"P{i:03d}" for i in range(len(labeled))] and labeled.columns[0] == "id"
    # A run on the labeling page states its guarantee per person too.
    go(at, "Private labeling")
    at.button(key="run_private").click().run()
    assert not at.exception, at.exception
    assert "per-person adjacency (neighbouring private datasets differ in all the rows of one person, column id)" \
        in all_text(at)
    # The release is charged to the persons it read: the 270 of the private part, each one account.
    from core.ledger import PrivacyLedger, store_path

    led = PrivacyLedger("panel", store=store_path())
    assert len(led) == 2 and led.n_units == 270  # the release and the labeling page's run
