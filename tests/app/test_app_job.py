"""A real labeling job, tried as a new user would (AppTest): two files kept apart, the
teaching split said everywhere, column choice and warnings, missing values in place, no
training by itself on a real job, reference lines beside the private accuracy, the
student learner following the teachers', and how many public rows to label."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from test_app import ROOT, go, metrics, release, sidebar_text, texts
from test_app_plan_spend import name_job

SOURCE = "w_data_ui_source"


def all_text(at: AppTest) -> str:
    parts = []
    for kind in ("markdown", "caption", "info", "warning", "success", "error"):
        parts += [e.value for e in getattr(at.main, kind)]
    return "\n".join(parts)


def key_of(at: AppTest, kind: str, prefix: str) -> str:
    return next(w.key for w in getattr(at, kind) if w.key and w.key.startswith(prefix))


def train(at: AppTest, learner: str, k: int) -> AppTest:
    go(at, "Ensemble")
    at.selectbox(key="w_ens_ui_learner").set_value(learner).run()
    at.number_input(key="w_ens_ui_k").set_value(k)
    at.button[0].click().run()  # the form's "Train ensemble"
    assert not at.exception, at.exception
    assert f"Trained {k} teachers." in texts(at.success), texts(at.error)
    return at


@pytest.mark.slow
def test_adult_two_file_job(lab, downloads):
    at = lab()
    at.radio(key=SOURCE).set_value("Bundled two-file job").run()
    assert not at.exception, at.exception
    assert not at.error, texts(at.error)
    title = "Adult: private = adult_train, public = adult_test (features only)"
    assert f"Loaded: {title}" in texts(at.main.subheader)
    text = all_text(at)
    assert "Two-file job" in text and "Teaching split" not in text
    assert "two-file job" in sidebar_text(at) and "teaching split" not in sidebar_text(at)
    # missing values in place: counts per column, the choice, and where imputation is fitted
    assert "on that teacher's chunk only" in text
    assert "rows with a missing value" in text and "dropped" in text
    assert at.checkbox(key="w_data_ui_markers").value is True
    # an upload/job does not train by itself: the Data page says so
    assert "Not trained yet." in " ".join(texts(at.info)), texts(at.info)
    assert at.session_state["ensemble_cfg"]["k"] == 250  # the job's teachers, trained only on request
    # 2,000 public rows to label by default (the first rows of adult_test)
    m = metrics(at)
    assert m["Public queries (m)"] == "2000", m
    n_key = key_of(at, "number_input", "n_label_")
    at.number_input(key=n_key).set_value(500).run()
    assert metrics(at)["Public queries (m)"] == "500"
    # the census weight is no feature by default, its reason shown; a Keep button would keep it
    cols_key = key_of(at, "multiselect", "keep_columns_")
    assert "fnlwgt" not in at.multiselect(key=cols_key).value
    assert any("Left out of the features: 'fnlwgt' (survey weight" in i for i in texts(at.info)), texts(at.info)
    assert any(b.label == "Keep 'fnlwgt' as a feature" for b in at.button)
    # column choice, applied to private and public rows
    before = int(metrics(at)["Features"])
    kept = [c for c in at.multiselect(key=cols_key).value if c != "education"]
    at.multiselect(key=cols_key).set_value(kept).run()
    assert not at.exception, at.exception
    assert int(metrics(at)["Features"]) == before - 1

    go(at, "Ensemble")
    assert any("Not trained yet" in i for i in texts(at.info)), texts(at.info)
    train(at, "logistic_regression", 20)

    go(at, "Private labeling")
    at.radio(key="w_privacy_mechanism").set_value("lnmax").run()
    assert not at.exception, at.exception
    # the bundled two-file job is a real job: predicted first, a run only on request, at its price
    assert "Answered (plan)" in metrics(at) and "Answered" not in metrics(at)
    at.text_input(key="job_name_input").set_value("job")  # a real job is named once: its ledger's name
    at.button(key="FormSubmitter:job_name_form-Use this name").click().run()
    at.number_input(key="job_budget_epsilon").set_value(100.0)
    at.button(key="FormSubmitter:job_budget_form-Set the budget for this data").click().run()
    at.button(key="run_private").click().run()
    assert not at.exception, at.exception
    assert metrics(at)["Answered"] == "500"
    at.checkbox(key="raw_votes_labeling").check().run()  # the non-private diagnostics, on request
    assert "always answering the majority class" in all_text(at)
    assert "plurality vote of the teachers" in all_text(at)

    go(at, "Compare")
    assert "always answering the majority class" in all_text(at)

    go(at, "Student & export")
    # the student learner follows the teachers' learner
    assert at.selectbox(key="w_student_ui_learner").value == "logistic_regression"
    # accuracies on held-out PRIVATE rows are a non-private diagnostic: on a real job, on request only
    assert "non-private model trained on all private rows" not in all_text(at)
    assert "Non-private model (not publishable)" not in metrics(at)
    assert "held-out test rows are private rows" in all_text(at)
    at.checkbox(key="student_accuracy").check().run()
    assert "non-private model trained on all private rows" in all_text(at)
    assert "Non-private model (not publishable)" in metrics(at)
    release(at)
    assert not any("Teaching split" in w for w in texts(at.warning))
    csv = downloads[at.get("download_button")[0].proto.url][0]
    frame = pd.read_csv(io.BytesIO(csv))
    # the columns left out of the features stay in the export as join keys, by default, first
    assert set(at.multiselect(key="export_keys").options) == {"fnlwgt", "education"}
    assert set(at.multiselect(key="export_keys").value) == {"fnlwgt", "education"}
    assert len(frame) == 500 and set(frame.columns[:2]) == {"fnlwgt", "education"} and "age" in frame.columns
    assert "income" not in frame.columns
    at.multiselect(key="export_keys").set_value(["fnlwgt"]).run()  # the user may keep fewer
    assert not at.exception, at.exception
    keyed = pd.read_csv(io.BytesIO(downloads[at.get("download_button")[0].proto.url][0]))
    public = pd.read_csv(ROOT / "datasets" / "adult_test.csv.gz", na_values=["?"], skipinitialspace=True).dropna().head(500)
    assert keyed.columns[0] == "fnlwgt" and keyed["fnlwgt"].tolist() == public["fnlwgt"].tolist()


def test_teaching_split_is_said_and_its_export_leaves_the_features_out(lab, downloads):
    at = lab()
    assert any("Teaching split" in w for w in texts(at.warning))
    assert "teaching split" in sidebar_text(at)
    go(at, "Student & export")
    release(at)
    assert any("Teaching split" in w for w in texts(at.warning))
    csv = downloads[at.get("download_button")[0].proto.url][0]
    frame = pd.read_csv(io.BytesIO(csv))
    assert list(frame.columns) == ["row", "label", "answered", "status"]
    at.checkbox(key="confirm_teaching_split").check().run()
    assert at.checkbox(key="confirm_teaching_split").label == (
        "I confirm these rows may be published: they are a split of the private file")
    csv = downloads[at.get("download_button")[0].proto.url][0]
    assert list(pd.read_csv(io.BytesIO(csv)).columns) == ["row", "x0", "x1", "label", "answered", "status"]


def _people_csv(n: int = 300) -> bytes:
    rng = np.random.default_rng(0)
    x = rng.normal(size=n)
    y = (x + 0.5 * rng.normal(size=n) > 0).astype(int)
    frame = pd.DataFrame({
        "person_id": np.arange(1000, 1000 + n),
        "name": [f"Person {i:04d} Q{i * 7 % 13}" for i in range(n)],
        "x": x.round(3),
        "c": np.where(rng.random(n) < 0.1, "?", rng.choice(["a", "b"], size=n)),
        "label": y,
    })
    return frame.to_csv(index=False).encode()


def test_upload_column_warnings_choice_and_missing_markers(lab):
    at = lab()
    at.radio(key=SOURCE).set_value("Upload CSV").run()
    at.file_uploader(key="upload_private").set_value(("people.csv", _people_csv(), "text/csv")).run()
    assert not at.exception, at.exception
    # '?' is read as missing: refused by default (said in place), imputed on request, counted in place
    assert any("missing" in e.lower() for e in texts(at.error)), texts(at.error)
    # a file without a public file is not offered the drop (its queries are its own rows: m would count them)
    assert "Impute missing values inside each teacher" in {b.label for b in at.button}
    assert "Drop the rows with a missing value" not in {b.label for b in at.button}
    assert any("cannot be dropped when the public queries are drawn from the private file" in c
               for c in texts(at.caption)), texts(at.caption)
    at.radio(key="w_data_ui_missing").set_value("drop").run()
    assert not at.exception, at.exception
    assert any("cannot be dropped when the public queries are drawn from the private file" in e
               for e in texts(at.error)), texts(at.error)
    assert "Loaded: people.csv" not in texts(at.main.subheader)
    at.radio(key="w_data_ui_missing").set_value("impute").run()
    assert not at.exception, at.exception
    assert "Loaded: people.csv" in texts(at.main.subheader)
    warned = " ".join(texts(at.warning))
    assert "person_id" in warned and "name" in warned and "identifier" in warned
    assert any("Teaching split" in w for w in texts(at.warning))
    assert "Not trained yet." in " ".join(texts(at.info))
    assert "rows with a missing value" in all_text(at)
    frames = [d.value for d in at.dataframe if "column" in getattr(d.value, "columns", [])]
    assert frames and "c" in list(frames[0]["column"])
    # the identifiers are not features by default: said with their reasons, each with a Keep button
    cols_key = key_of(at, "multiselect", "keep_columns_")
    assert at.multiselect(key=cols_key).value == ["x", "c"] and metrics(at)["Features"] == "2"
    assert "It is left out of the features unless you keep it explicitly" in warned
    assert {"Keep 'person_id' as a feature", "Keep 'name' as a feature"} <= {b.label for b in at.button}
    at.multiselect(key=cols_key).set_value(["x"]).run()
    assert not at.exception, at.exception
    assert metrics(at)["Features"] == "1"


def test_ensemble_form_does_not_submit_on_enter(lab):
    at = go(lab(), "Ensemble")
    form = next(b for b in at.get("form"))
    assert getattr(form.proto, "form", form.proto).enter_to_submit is False


def test_duplicate_and_empty_columns_are_fixed_in_place(lab):
    from test_app import _to_upload, _upload

    rng = np.random.default_rng(0)
    rows = ["a,b,a,c,label"] + [
        f"{x:.3f},{y:.3f},{z:.3f},,{'yes' if x + y > 0 else 'no'}" for x, y, z in rng.normal(size=(600, 3))
    ]
    at = lab()
    _to_upload(at)
    _upload(at, "dup.csv", ("\n".join(rows) + "\n").encode())
    assert any("Duplicate column names" in e.value for e in at.error)
    at.checkbox(key="w_data_ui_rename_duplicates").check().run()
    at.checkbox(key="w_data_ui_drop_empty_columns").check().run()
    assert not at.exception, at.exception
    assert not any("Duplicate column names" in e.value or "empty in every row" in e.value for e in at.error)
    assert "a.2" in " ".join(str(df.value.columns.tolist()) for df in at.dataframe)


def test_ensemble_page_recommends_settings_for_the_data(lab):
    at = go(lab(), "Ensemble")
    text = " ".join(m.value for m in at.markdown)
    assert "Recommend" in " ".join(e.label for e in at.expander)
    assert "teachers" in text and "k =" in text
    assert any("outside the (ε, δ) guarantee" in c.value for c in at.caption)


def flagged_files(n: int = 900, seed: int = 0) -> tuple[bytes, bytes]:
    """A private and a public file with row numbers, a person id, a survey weight, an outcome text
    filled in exactly for label 1 (70 distinct values) and a lab value that is the label at one threshold."""
    g = np.random.default_rng(seed)
    x = g.normal(size=n)
    y = (x + g.normal(scale=0.8, size=n) > 0).astype(int)
    frame = pd.DataFrame({
        "row": np.arange(1, n + 1), "person_id": np.repeat(np.arange(n // 3), 3), "x": x.round(4),
        "z": g.normal(size=n).round(4), "weight_final": g.uniform(10, 500, n).round(1),
        "outcome_note": np.where(y == 1, [f"note {g.integers(0, 70)}" for _ in range(n)], ""),
        "lab": np.where(y == 1, g.uniform(2.1, 4, n), g.uniform(0, 1.9, n)).round(3),
        "label": np.where(y == 1, "yes", "no"),
    })
    private, public = frame.iloc[:700], frame.iloc[700:].drop(columns=["label"])
    return private.to_csv(index=False).encode(), public.to_csv(index=False).encode()


def test_flagged_columns_are_not_features_of_an_upload_unless_kept(lab, downloads):
    private, public = flagged_files()
    at = lab()
    at.radio(key=SOURCE).set_value("Upload CSV").run()
    at.file_uploader(key="upload_public").set_value(("public.csv", public, "text/csv"))
    at.file_uploader(key="upload_private").set_value(("private.csv", private, "text/csv")).run()
    assert not at.exception, at.exception
    assert "Loaded: private.csv" in texts(at.main.subheader), texts(at.error)  # the empty notes do not refuse it
    cols_key = key_of(at, "multiselect", "keep_columns_")
    assert at.multiselect(key=cols_key).value == ["x", "z"] and metrics(at)["Features"] == "2"
    info = " ".join(texts(at.info))
    for column in ("row", "person_id", "weight_final", "outcome_note", "lab"):
        assert f"'{column}' (" in info, (column, info)
    assert "identifier: row numbers" in info and "survey weight" in info and "NON-PRIVATE" in info
    # keeping one explicitly makes it a feature; leaving it out again undoes that
    at.button(key=next(b.key for b in at.button if b.label == "Keep 'lab' as a feature")).click().run()
    assert not at.exception, at.exception
    cols_key = key_of(at, "multiselect", "keep_columns_")
    assert at.multiselect(key=cols_key).value == ["x", "z", "lab"] and metrics(at)["Features"] == "3"
    assert any("Kept as features on request although flagged: 'lab'" in i for i in texts(at.info))
    at.button(key=next(b.key for b in at.button if b.label == "Leave 'lab' out of the features")).click().run()
    assert metrics(at)["Features"] == "2"
    # a left-out column is offered as a join key of the export, from the public file
    train(at, "gaussian_nb", 10)
    go(at, "Student & export")
    name_job(at)
    at.number_input(key="job_budget_epsilon").set_value(10.0)
    at.button(key="FormSubmitter:job_budget_form-Set the budget for this data").click().run()
    release(at)
    assert set(at.multiselect(key="export_keys").options) == {"row", "person_id", "weight_final", "outcome_note",
                                                               "lab"}
    assert set(at.multiselect(key="export_keys").value) == set(at.multiselect(key="export_keys").options)
    at.multiselect(key="export_keys").set_value(["row"]).run()
    frame = pd.read_csv(io.BytesIO(downloads[at.get("download_button")[0].proto.url][0]))
    assert list(frame.columns) == ["row", "x", "z", "label", "answered", "status"]
    assert frame["row"].tolist() == list(range(701, 901))  # the public file's own row numbers
