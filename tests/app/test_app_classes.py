"""The declared class list on the Data page (AppTest, docs/design.md §1.3): an upload whose classes
are read from the file warns on a real job; the Declared classes box makes the list the declared
one, a row with an undeclared label refused, then dropped under Missing values: drop."""

from __future__ import annotations

import numpy as np
import pandas as pd

from test_app import go, texts

NOTE = "CLASS LIST READ FROM THE PRIVATE FILE"


def _files() -> tuple[bytes, bytes]:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(121, 2))
    label = np.where(x[:, 0] > 0, "yes", "no").astype(object)  # x0 a label stand-in: its fix buttons shown twice
    label[-1] = "rare"  # one person's class
    private = pd.DataFrame({"x0": x[:, 0], "x1": x[:, 1], "label": label})
    public = pd.DataFrame(rng.normal(size=(40, 2)), columns=["x0", "x1"])
    return private.to_csv(index=False).encode(), public.to_csv(index=False).encode()


def _classes_line(at) -> str:
    return next(m for m in texts(at.main.markdown) if m.startswith("Label column"))


def test_declared_classes_box_keeps_the_class_list_public(lab):
    at = lab()
    private, public = _files()
    go(at, "Data")
    at.radio(key="w_data_ui_source").set_value("Upload CSV").run()
    at.file_uploader(key="upload_public").set_value(("public.csv", public, "text/csv"))
    at.file_uploader(key="upload_private").set_value(("private.csv", private, "text/csv")).run()
    assert not at.exception, at.exception
    assert "Loaded: private.csv" in texts(at.main.subheader), (texts(at.error), texts(at.main.subheader))
    # Read from the file: the one person's class is named, and the page says so.
    assert "**rare**" in _classes_line(at) and "declared" not in _classes_line(at)
    assert any(NOTE in w for w in texts(at.warning)), texts(at.warning)

    box = at.text_input(key="w_data_ui_class_names")
    box.set_value("yes, no").run()  # refused: a row holds an undeclared label, and missing values are refused
    assert not at.exception, at.exception
    assert any("not among the declared classes (yes, no): 'rare'" in e for e in texts(at.error)), texts(at.error)

    at.radio(key="w_data_ui_missing").set_value("drop").run()  # the undeclared row is dropped as a row without a label
    assert not at.exception, at.exception
    assert not texts(at.error), texts(at.error)
    line = _classes_line(at)
    assert line == "Label column **label**; classes (declared, public): **yes**, **no**", line
    assert not any(NOTE in w for w in texts(at.warning)), texts(at.warning)
    assert at.session_state["data_cfg"]["class_names"] == ["yes", "no"]
