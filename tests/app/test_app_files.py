"""The app on the files a hurried data owner has (AppTest): a spreadsheet's semicolon export with
decimal commas, in Latin-1, whose row number the owner drops and wants back in the export."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from builders import euro_frames

from test_app import go, metrics, release, texts
from test_app_plan_spend import name_job, train


def euro_files() -> tuple[bytes, bytes, pd.DataFrame]:
    rng = np.random.default_rng(8)
    private, public = euro_frames(rng, 600, 40, 90_000)
    write = dict(sep=";", decimal=",", index=False, encoding="latin-1")
    return private.to_csv(**write).encode("latin-1"), public.to_csv(**write).encode("latin-1"), public


@pytest.mark.slow
def test_a_semicolon_latin1_upload_reaches_its_columns_and_the_dropped_key_reaches_the_export(lab, downloads):
    private, public, truth = euro_files()
    at = go(lab(), "Data")
    at.radio(key="w_data_ui_source").set_value("Upload CSV").run()
    at.file_uploader(key="upload_public").set_value(("public.csv", public, "text/csv"))
    at.file_uploader(key="upload_private").set_value(("private.csv", private, "text/csv")).run()
    assert not at.exception, at.exception
    # Latin-1: refused, naming the file and the control that reads it (never a library word).
    shown = " ".join(texts(at.error))
    assert "'private.csv'" in shown and "File format: Encoding latin-1" in shown, shown
    assert "encoding=" not in shown and "label_column" not in shown
    at.selectbox(key="w_data_ui_encoding").set_value("latin-1").run()
    assert not at.exception, at.exception
    assert "Loaded: private.csv" in texts(at.main.subheader), (texts(at.error), texts(at.main.subheader))
    # The semicolons and decimal commas reach the right columns: the row number is an identifier,
    # left out of the features by default; three features, two of them numbers.
    assert metrics(at)["Features"] == "3", metrics(at)
    assert not any("people's names" in w for w in texts(at.warning))
    train(at, k=20)
    go(at, "Student & export")
    name_job(at)
    at.number_input(key="job_budget_epsilon").set_value(50.0)
    at.button(key="FormSubmitter:job_budget_form-Set the budget for this data").click().run()
    release(at)
    # The row number left the features only: it stays in the export as its join key, by default, and leads it.
    assert at.multiselect(key="export_keys").value == ["rownum"]
    assert any("rownum" in c and "public file's values" in c for c in texts(at.caption))
    buttons = {b.label: b for b in at.get("download_button")}
    labeled = pd.read_csv(io.BytesIO(downloads[buttons["Download labeled CSV"].proto.url][0]))
    # The dropped column left the features only: it is the export's first column, each row's own.
    assert list(labeled.columns)[:4] == ["rownum", "x1", "x2", "city"]
    assert labeled["rownum"].tolist() == truth["rownum"].tolist()
    np.testing.assert_allclose(labeled["x1"], truth["x1"])
    assert labeled["city"].tolist() == truth["city"].tolist()
