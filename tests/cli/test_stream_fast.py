"""One check for every path: the stream's chunks go through :func:`core.data.check_public`
(each rule once per distinct value of a column), which gives what a plain per-cell loop
gives; the stream's text writer gives the bytes pandas writes (:func:`core.cli.stream.label_stream`)."""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest

from core import pipeline
from core.cli import stream
from core.data import load_table, read_public
from core.data.public import check_public_coded
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
    "?,Paris,12\n"
    "52,?,20\n"
    "33,\"Ber,lin\",20\n"
    "27,\"Qu\"\"ote\",22\n"
    "28,Rome,\n"
    "NA,Oslo,30\n"
    "19,  ,25\n"
    "65,Lima,60\n"
    "44,Rome,-0\n"
    "50,\xa0Lima\x1f,33 \n"
)
PUBLIC_FRACTION = "age,city,hours\n30,Oslo,40.5\n31,Rome,40\n?,Lima,1e-5\n"
PUBLIC_ALL_MISSING = "age,city,hours\n?,Oslo,40\n30,?,1\n"
PUBLIC_BLANK_ONLY = "age,city,hours\n30, ,40\n"
PUBLIC_TEXT = "age,city,hours\n30,Oslo,forty\n31,Rome,40\n"
PUBLIC_INF = "age,city,hours\n30,Oslo,inf\n"


def _per_cell(table, frame: pd.DataFrame) -> pd.DataFrame:
    """The rules read cell by cell in a plain loop: the markers and blanks missing, numbers
    read by ``pd.to_numeric``, text stripped; rows with a missing cell dropped (``drop``)."""
    rows = []
    for i in range(len(frame)):
        row = {}
        for column in table.feature_names:
            value = frame[column].iloc[i]
            text = None if not isinstance(value, str) and pd.isna(value) else str(value).strip()
            if text == "" or text in table.missing_markers:
                text = None
            if column in table.numeric_columns:
                number = math.nan if text is None else pd.to_numeric(value, errors="coerce")
                if text is not None and math.isnan(number):
                    raise SchemaError(f"'{column}' holds text")
                if math.isinf(number):
                    raise DataError(f"'{column}' holds an infinite value")
                row[column] = float(number)
            else:
                row[column] = math.nan if text is None else text
        if not (table.missing == "drop" and any(isinstance(v, float) and math.isnan(v) for v in row.values())):
            rows.append(row)
    out = pd.DataFrame(rows, columns=list(table.feature_names)) if rows else pd.DataFrame(
        {c: pd.Series(dtype=np.float64 if c in table.numeric_columns else object) for c in table.feature_names})
    for column in table.categorical_columns:
        out[column] = out[column].astype(object)
    for column in table.numeric_columns:
        out[column] = out[column].astype(np.float64)
    return out


def _setup(tmp_path, missing: str, text: str):
    table = load_table(io.BytesIO(PRIVATE.encode()), label_column="kind", missing=missing, missing_markers=["?"])
    teachers = pipeline.train(table, "logistic_regression", {}, 4, rng=np.random.default_rng(0))
    path = tmp_path / "public.csv"
    path.write_text(text, encoding="utf-8")
    return table, teachers, path


def _stream(table, teachers, path, chunk: int) -> tuple[str, np.ndarray, pd.DataFrame]:
    out = io.StringIO()
    result, kept = stream.label_stream(chunks=stream.read_chunks(path, chunk), table=table, teachers=teachers,
                                       mechanism="gnmax", settings={"epsilon": 50.0, "delta": 1e-5},
                                       m=stream.count_rows(path), rng=np.random.default_rng(3), out=out, keep=True)
    return out.getvalue(), np.asarray(result.labels), kept


@pytest.mark.parametrize("missing", ["drop", "impute"])
@pytest.mark.parametrize("text", [PUBLIC_OK, PUBLIC_FRACTION, PUBLIC_ALL_MISSING, PUBLIC_BLANK_ONLY])
@pytest.mark.parametrize("chunk", [1, 3, 100])
def test_the_check_of_every_chunk_is_the_per_cell_rule_and_the_writer_writes_pandas_bytes(
        tmp_path, monkeypatch, missing, text, chunk):
    table, teachers, path = _setup(tmp_path, missing, text)
    expected = []
    for raw in stream.read_chunks(path, chunk):
        checked, coded = check_public_coded(table, raw, skip_empty=True)
        reference = _per_cell(table, raw)
        pd.testing.assert_frame_equal(checked, reference, check_index_type=False)
        assert checked.attrs["dropped_rows"] == len(raw) - len(reference)
        for column, (codes, values) in coded.items():  # the codes handed on give the checked cells
            pd.testing.assert_series_equal(pd.Series(np.append(values, np.nan)[codes], dtype=checked[column].dtype),
                                           checked[column], check_names=False)
        expected.append(reference)
    whole = pd.concat(expected, ignore_index=True)
    if not len(whole):  # every row dropped: the stream says so; so does the whole-file check
        with pytest.raises(DataError, match="no rows to label"):
            _stream(table, teachers, path, chunk)
        with pytest.raises(DataError, match="Every row of the public table has a missing value"):
            read_public(path, table)
        return
    fast = _stream(table, teachers, path, chunk)
    with monkeypatch.context() as patch:  # every chunk written by pandas
        patch.setattr(stream, "_write_fast", lambda *a: False)
        general = _stream(table, teachers, path, chunk)
    assert fast[0] == general[0]
    np.testing.assert_array_equal(fast[1], general[1])
    pd.testing.assert_frame_equal(fast[2], whole)
    if text is PUBLIC_OK:
        assert '"Ber,lin"' in fast[0] and '"Qu""ote"' in fast[0]


@pytest.mark.parametrize("text, error", [(PUBLIC_TEXT, SchemaError), (PUBLIC_INF, DataError)])
def test_the_stream_refuses_as_the_whole_file_check(tmp_path, text, error):
    table, teachers, path = _setup(tmp_path, "drop", text)
    with pytest.raises(error) as whole:
        read_public(path, table)
    with pytest.raises(error) as streamed:
        _stream(table, teachers, path, 100)
    with pytest.raises(error):
        _per_cell(table, next(stream.read_chunks(path, 100)))
    assert str(streamed.value) == str(whole.value)


@pytest.mark.parametrize("block_size", [None, 2])
def test_the_codes_handed_to_the_encoder_give_the_votes_it_would_factorize(tmp_path, block_size):
    table, teachers, path = _setup(tmp_path, "drop", PUBLIC_OK)
    raw = next(stream.read_chunks(path, 100))
    checked, coded = check_public_coded(table, raw)
    assert set(coded) == {"age", "city", "hours"} and len(coded["city"][0]) == len(checked)
    handed = teachers.vote_counts(checked, block_size=block_size, codes=coded)
    vocabulary = set(teachers.voter(checked).encoder.vocabulary(0))
    assert vocabulary == set(checked["city"].dropna())  # a dropped row's value never joins it
    np.testing.assert_array_equal(handed, teachers.vote_counts(checked, block_size=block_size))
    np.testing.assert_array_equal(handed, pipeline.mechanism_inputs("gnmax", teachers, table, checked, codes=coded))
