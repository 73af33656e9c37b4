"""The stream's per-distinct-value check and text writer give the general path's bytes,
labels and errors (:func:`core.cli.stream.label_stream`), chunk by chunk."""

from __future__ import annotations

import io

import numpy as np
import pytest

from core import pipeline
from core.cli import stream
from core.data import load_table
from core.errors import DataError, SchemaError

KINDS = {True: '"a,b"', False: "c"}
PRIVATE = "\n".join(
    ["age,city,hours,kind"]
    + [f"{20 + (i * 7) % 40},{['Oslo', 'Rome', 'Lima', '?'][i % 4] if i % 9 else 'Rome'},{10 + (i * 3) % 50},"
       f"{KINDS[(i * 5) % 7 < 3]}" for i in range(240)]
) + "\n"

PUBLIC_OK = (
    "age,city,hours\n"
    "30,Oslo,40\n"
    " 41 , Rome ,4e1\n"
    "?,Lima,12\n"
    "52,?,20\n"
    "33,\"Ber,lin\",20\n"
    "27,\"Qu\"\"ote\",22\n"
    "28,Rome,\n"
    "NA,Oslo,30\n"
    "19,  ,25\n"
    "65,Lima,60\n"
    "44,Rome,-0\n"
    "50,\xa0Lima\x1f,\u200333\n"
)
PUBLIC_FRACTION = "age,city,hours\n30,Oslo,40.5\n31,Rome,40\n?,Lima,1e-5\n"
PUBLIC_ALL_MISSING = "age,city,hours\n?,Oslo,40\n30,?,1\n"
PUBLIC_BLANK_ONLY = "age,city,hours\n30, ,40\n"
PUBLIC_TEXT = "age,city,hours\n30,Oslo,forty\n31,Rome,40\n"
PUBLIC_INF = "age,city,hours\n30,Oslo,inf\n"


def _run(table, teachers, text: str, chunk: int, general: bool, monkeypatch) -> tuple[str, np.ndarray]:
    with monkeypatch.context() as patch:
        if general:
            patch.setattr(stream, "_fast_chunk", lambda *a: None)
        path = _run.folder / "public.csv"
        path.write_text(text, encoding="utf-8")
        out = io.StringIO()
        result, kept = stream.label_stream(chunks=stream.read_chunks(path, chunk), table=table, teachers=teachers,
                                           mechanism="gnmax", settings={"epsilon": 50.0, "delta": 1e-5},
                                           m=stream.count_rows(path), rng=np.random.default_rng(3), out=out,
                                           keep=True)
    return out.getvalue(), np.asarray(result.labels), kept


@pytest.mark.parametrize("missing", ["drop", "impute"])
@pytest.mark.parametrize("text", [PUBLIC_OK, PUBLIC_FRACTION, PUBLIC_ALL_MISSING, PUBLIC_BLANK_ONLY])
@pytest.mark.parametrize("chunk", [1, 3, 100])
def test_fast_path_writes_the_general_paths_bytes(tmp_path, monkeypatch, missing, text, chunk):
    _run.folder = tmp_path
    table = load_table(io.BytesIO(PRIVATE.encode()), label_column="kind", missing=missing, missing_markers=["?"])
    teachers = pipeline.train(table, "logistic_regression", {}, 4, rng=np.random.default_rng(0))
    try:
        general = _run(table, teachers, text, chunk, True, monkeypatch)
    except DataError as exc:
        with pytest.raises(DataError, match=str(exc)[:40].replace("(", r"\(").replace(")", r"\)")):
            _run(table, teachers, text, chunk, False, monkeypatch)
        return
    fast = _run(table, teachers, text, chunk, False, monkeypatch)
    assert fast[0] == general[0]
    np.testing.assert_array_equal(fast[1], general[1])
    assert fast[2].equals(general[2])
    assert list(fast[2].dtypes) == list(general[2].dtypes)
    if text is PUBLIC_OK:
        assert '"Ber,lin"' in fast[0] and '"Qu""ote"' in fast[0]


@pytest.mark.parametrize("text, error", [(PUBLIC_TEXT, SchemaError), (PUBLIC_INF, DataError)])
def test_fast_path_refuses_as_the_general_path(tmp_path, monkeypatch, text, error):
    _run.folder = tmp_path
    table = load_table(io.BytesIO(PRIVATE.encode()), label_column="kind", missing="drop", missing_markers=["?"])
    teachers = pipeline.train(table, "logistic_regression", {}, 4, rng=np.random.default_rng(0))
    messages = []
    for general in (True, False):
        with pytest.raises(error) as caught:
            _run(table, teachers, text, 100, general, monkeypatch)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
