"""The default features on the Data page (AppTest, docs/design.md §1.3): in a two-file upload the
identifiers left out by default are found on the PUBLIC file's columns, so a private file whose
codes repeat once (one person's value equal to another's: no identifier by its private values)
still leaves 'code' out, as its public file says; a label stand-in (found on the private labels)
is left out too, and the page says in capitals that a check of the private rows chose it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from test_app import go, texts

NOTE = "FEATURES CHOSEN BY A CHECK OF THE PRIVATE ROWS"


def upload(at, private: pd.DataFrame, public: pd.DataFrame):
    """Upload the two frames as the Data page's public and private CSV files."""
    go(at, "Data")
    at.radio(key="w_data_ui_source").set_value("Upload CSV").run()
    at.file_uploader(key="upload_public").set_value(("public.csv", public.to_csv(index=False).encode(), "text/csv"))
    at.file_uploader(key="upload_private").set_value(
        ("private.csv", private.to_csv(index=False).encode(), "text/csv")).run()
    return at


def test_the_default_features_of_a_two_file_upload_are_read_from_the_public_file(lab):
    rng = np.random.default_rng(0)
    x0 = rng.normal(size=120)
    code = 7 * np.arange(120) + 3
    code[-1] = code[0]  # on the private values alone, 'code' would stay a feature
    label = np.where(x0 > 0, "yes", "no")
    private = pd.DataFrame({"x0": x0, "code": code, "e401k": (label == "yes").astype(int), "label": label})
    pub = rng.normal(size=40)
    public = pd.DataFrame({"x0": pub, "code": 7 * np.arange(40) + 5, "e401k": (pub > 0).astype(int)})
    at = upload(lab(), private, public)
    assert not at.exception, at.exception
    assert "Loaded: private.csv" in texts(at.main.subheader), (texts(at.error), texts(at.main.subheader))
    assert sorted(at.session_state["data_cfg"]["left_out"]) == ["code", "e401k"]
    assert any(NOTE in w and "left out: e401k" in w for w in texts(at.warning)), texts(at.warning)
    # the public file's finding is shown with its Keep; the private file's own would choose nothing
    assert any(w.startswith("**code** (") and "Public file: Column 'code'" in w for w in texts(at.warning)), \
        [w[:90] for w in texts(at.warning)]
    assert any(b.label == "Keep 'code' as a feature" for b in at.button), [b.label for b in at.button]


def test_a_two_file_release_report_states_the_features_as_the_data_page_does(lab, downloads):
    import json

    from test_app import release

    rng = np.random.default_rng(1)
    x0 = rng.normal(size=120)
    label = np.where(x0 + 0.5 * rng.normal(size=120) > 0, "yes", "no")
    private = pd.DataFrame({"x0": x0, "e401k": (label == "yes").astype(int), "label": label})
    pub = rng.normal(size=40)
    public = pd.DataFrame({"x0": pub, "e401k": (pub > 0).astype(int)})
    at = upload(lab(), private, public)
    assert not at.exception, at.exception
    go(at, "Ensemble")
    at.number_input(key="w_ens_ui_k").set_value(10)
    at.button[0].click().run()  # the form's "Train ensemble"
    assert not at.exception, at.exception
    go(at, "Private labeling")
    at.text_input(key="job_name_input").set_value("job")  # a real job: named, with a budget, before any run
    at.button(key="FormSubmitter:job_name_form-Use this name").click().run()
    at.number_input(key="job_budget_epsilon").set_value(100.0)
    at.button(key="FormSubmitter:job_budget_form-Set the budget for this data").click().run()
    go(at, "Student & export")
    release(at)
    buttons = {b.label: b for b in at.get("download_button")}
    report = json.loads(downloads[buttons["Download privacy report (JSON)"].proto.url][0])
    assert report["features"]["names"] == ["x0"] and report["features"]["declared"] is False
    assert report["features"]["statement"].startswith(NOTE + " (label stand-ins looked for in the private rows; "
                                                      "left out: e401k)")


def test_the_private_file_in_both_upload_boxes_is_refused_and_its_copy_without_labels_warned(lab):
    rng = np.random.default_rng(2)
    x0 = rng.normal(size=60)
    private = pd.DataFrame({"x0": x0, "x1": rng.normal(size=60), "label": np.where(x0 > 0, "yes", "no")})
    data = private.to_csv(index=False).encode()
    for public, said in ((data, "The same file is uploaded as the **Private labeled CSV** and as the **Public unlabele"),
                         (private.drop(columns="label").to_csv(index=False, sep=";").encode(),
                          "60 of the 60 public rows (100%) are exact copies of private rows' features")):
        at = lab()
        go(at, "Data")
        at.radio(key="w_data_ui_source").set_value("Upload CSV").run()
        at.file_uploader(key="upload_public").set_value(("public.csv", public, "text/csv"))
        at.file_uploader(key="upload_private").set_value(("private.csv", data, "text/csv")).run()
        assert not at.exception, at.exception
        shown = texts(at.error) + texts(at.warning)
        assert any(said in t for t in shown), [t[:100] for t in shown]
        if "copies" in said:
            assert any(said in t and "NON-PRIVATE" in t for t in texts(at.warning))
