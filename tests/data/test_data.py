"""Tests of core.data: loading CSV tables, refusing bad input, public-table schema checks."""

from __future__ import annotations

import io
import math
import zipfile

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.data import (
    MAX_CLASSES,
    Table,
    check_class_sizes,
    check_public,
    load_table,
    read_public,
    split_public,
    table_from_arrays,
)
from core.errors import DataError, ParameterError, PrivateLabelLabError, SchemaError

GOOD = "a,b,color,label\n1.5,2,red,cat\n2.5,3,blue,dog\n3.5,4,red,cat\n4.5,5,green,dog\n"


def load(text: str, **kwargs) -> Table:
    return load_table(text.encode("utf-8"), **kwargs)


class FakeUpload:
    """Stands in for Streamlit's UploadedFile: a name, a size and getvalue()."""

    def __init__(self, data: bytes, name: str = "upload.csv"):
        self._data = data
        self.name = name
        self.size = len(data)

    def getvalue(self) -> bytes:
        return self._data

    def read(self, n: int = -1) -> bytes:  # pragma: no cover - getvalue is preferred
        return self._data if n < 0 else self._data[:n]


# --------------------------------------------------------------------------------------
# Good files
# --------------------------------------------------------------------------------------


def test_good_table_contents():
    t = load(GOOD)
    assert t.n_rows == 4
    assert t.n_classes == 2
    assert t.class_names == ("cat", "dog")
    assert t.labels.dtype == np.int64
    assert t.labels.tolist() == [0, 1, 0, 1]
    assert t.label_column == "label"
    assert t.feature_names == ("a", "b", "color")
    assert t.numeric_columns == ("a", "b")
    assert t.categorical_columns == ("color",)
    assert t.features["a"].dtype == np.float64
    assert t.features["b"].dtype == np.float64  # whole numbers become float
    assert t.features["color"].dtype == object
    assert t.features["a"].tolist() == [1.5, 2.5, 3.5, 4.5]
    assert t.features["color"].tolist() == ["red", "blue", "red", "green"]
    assert t.name == "uploaded table"
    assert t.class_counts.tolist() == [2, 2]


def test_all_sources_give_the_same_table(tmp_path):
    path = tmp_path / "pets.csv"
    path.write_bytes(GOOD.encode())
    tables = [
        load_table(path),
        load_table(str(path)),
        load_table(GOOD.encode()),
        load_table(bytearray(GOOD.encode())),
        load_table(io.BytesIO(GOOD.encode())),
        load_table(io.StringIO(GOOD)),
        load_table(FakeUpload(GOOD.encode(), name="pets.csv")),
    ]
    for t in tables:
        pd.testing.assert_frame_equal(t.features, tables[0].features)
        np.testing.assert_array_equal(t.labels, tables[0].labels)
        assert t.class_names == tables[0].class_names
    assert tables[0].name == "pets"
    assert tables[-1].name == "pets"
    assert load_table(path, name="mine").name == "mine"


def test_open_binary_file_object(tmp_path):
    path = tmp_path / "pets.csv"
    path.write_bytes(GOOD.encode())
    with path.open("rb") as handle:
        t = load_table(handle)
    assert t.n_rows == 4 and t.name == "pets"


def test_utf8_bom_crlf_and_quoted_commas():
    text = '\ufeff"size, cm",name,label\r\n"1,5",x,"a, b"\r\n2,"y, z",c\r\n3,w,"a, b"\r\n'
    t = load_table(text.encode("utf-8"))
    assert t.feature_names == ("size, cm", "name")
    assert t.label_column == "label"  # the BOM is not part of the first name
    assert t.class_names == ("a, b", "c")
    assert t.labels.tolist() == [0, 1, 0]
    # "1,5" is text, so the column is categorical: that is the honest reading
    assert t.categorical_columns == ("size, cm", "name")
    assert t.features["name"].tolist() == ["x", "y, z", "w"]


def test_crlf_numeric_values_parse_as_numbers():
    t = load_table(b"x1,x2,label\r\n1,2,0\r\n3,4,1\r\n")
    assert t.numeric_columns == ("x1", "x2")
    assert t.features.to_numpy().tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_quoted_field_with_line_break_and_blank_lines():
    t = load('note,x,label\n"two\nlines",1,a\n\nplain,2,b\n')
    assert t.n_rows == 2
    assert t.features["note"].tolist() == ["two\nlines", "plain"]


def test_spaces_around_values_are_stripped():
    t = load("x, color ,label\n 1 , red , a \n2,blue,b\n")
    assert t.feature_names == ("x", "color")
    assert t.features["color"].tolist() == ["red", "blue"]
    assert t.class_names == ("a", "b")
    assert t.features["x"].tolist() == [1.0, 2.0]


def test_blank_fields_are_missing_not_text():
    t = load('x,c,label\n1,u,a\n  ,v,b\n3 ,"  ",a\n"  ",w,b\n', missing="impute")
    assert t.numeric_columns == ("x",)
    assert t.features["x"].isna().tolist() == [False, True, False, True]
    assert t.features["c"].isna().tolist() == [False, False, True, False]


def test_public_blank_text_is_missing():
    t = load("x,c,label\n1,u,a\n2,v,b\n", missing="impute")
    out = check_public(t, pd.DataFrame({"x": [" 4 ", "  ", None, 5], "c": ["u", " ", np.nan, pd.NA]}))
    assert out["x"].tolist()[0] == 4.0 and out["x"].tolist()[3] == 5.0
    assert out["x"].isna().tolist() == [False, True, True, False]
    assert out["c"].isna().tolist() == [False, True, True, True]
    nullable = pd.DataFrame({"x": pd.array([1, None], dtype="Int64"), "c": pd.array([7, None], dtype="Int64")})
    out = check_public(t, nullable)
    assert out["x"].isna().tolist() == [False, True]
    assert out["c"].tolist()[0] == "7" and out["c"].isna().tolist() == [False, True]


def test_public_objects_that_are_not_numbers():
    t = load("x,c,label\n1,u,a\n2,v,b\n")
    with pytest.raises(SchemaError, match="'x'"):
        check_public(t, pd.DataFrame({"x": [{"a": 1}], "c": ["u"]}))


def test_text_module_file_with_bom():
    t = load_table(io.StringIO("\ufeffx,label\n1,a\n2,b\n"))
    assert t.feature_names == ("x",)


@pytest.mark.parametrize(
    "header, expected",
    [
        ("x,target,z", "target"),
        ("x,Label,z", "Label"),
        ("x,Y,z", "Y"),
        ("x,CLASS,z", "CLASS"),
        ("y,label,z", "label"),  # the first match in the order label, target, y, class
        ("class,target,z", "target"),
    ],
)
def test_default_label_column(header, expected):
    names = header.split(",")
    rows = []
    for i in range(4):
        rows.append(",".join(("ab"[i % 2] if n == expected else str(i * 1.5 + j)) for j, n in enumerate(names)))
    t = load("\n".join([header] + rows) + "\n")
    assert t.label_column == expected
    assert expected not in t.feature_names
    assert t.class_names == ("a", "b")


def test_explicit_label_column_and_names_with_spaces():
    t = load("species,x,label\nfoo,1,q\nbar,2,q\n", label_column="species")
    assert t.label_column == "species"
    assert t.feature_names == ("x", "label")
    assert t.class_names == ("bar", "foo")
    assert t.categorical_columns == ("label",)


def test_numeric_labels_sorted_numerically():
    t = load("x,label\n1,10\n2,9\n3,2\n4,10\n5,-1\n")
    assert t.class_names == ("-1", "2", "9", "10")
    assert t.labels.tolist() == [3, 2, 1, 3, 0]


def test_text_labels_sorted_as_text():
    t = load("x,label\n1,b\n2,a\n3,10\n4,9\n")
    assert t.class_names == ("10", "9", "a", "b")
    assert t.labels.tolist() == [3, 2, 0, 1]


def test_one_feature_column_is_fine():
    t = load("x,label\n1,a\n2,b\n")
    assert t.feature_names == ("x",)


def test_na_markers_and_impute_keeps_missing():
    t = load("x,c,label\n1,NA,a\n,red,b\n3,red,a\nN/A,blue,b\n", missing="impute")
    assert t.missing == "impute"
    assert t.features["x"].isna().tolist() == [False, True, False, True]
    assert t.features["c"].isna().tolist() == [True, False, False, False]


def test_signed_and_exponent_numbers():
    t = load("x,label\n+1.5e3,a\n-.5,b\n2E-2,a\n")
    assert t.features["x"].tolist() == [1500.0, -0.5, 0.02]


def test_repr_shows_no_values():
    t = load("secret_feature,label\n123456.789,a\n98765.4321,b\n")
    text = repr(t)
    assert "123456" not in text and "98765" not in text
    assert "n_rows=2" in text


# --------------------------------------------------------------------------------------
# The preprocessing pipeline
# --------------------------------------------------------------------------------------


def test_preprocessor_is_unfitted_and_one_hot_encodes():
    from sklearn.base import clone
    from sklearn.compose import ColumnTransformer
    from sklearn.exceptions import NotFittedError
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    t = load(GOOD)
    pre = t.preprocessor()
    assert isinstance(pre, ColumnTransformer)
    with pytest.raises(NotFittedError):
        pre.transform(t.features)
    out = clone(pre).fit_transform(t.features)
    assert isinstance(out, np.ndarray)
    # two numeric columns passed through, then one-hot of blue/green/red
    np.testing.assert_array_equal(out[:, :2], t.features[["a", "b"]].to_numpy())
    onehot = out[:, 2:]
    assert onehot.shape == (4, 3)
    np.testing.assert_array_equal(onehot.sum(axis=1), np.ones(4))
    np.testing.assert_array_equal(onehot[0], onehot[2])  # red == red
    assert not np.array_equal(onehot[0], onehot[1])
    # unseen categories encode as all zeros instead of failing
    public = check_public(t, pd.DataFrame({"a": [1.0], "b": [2.0], "color": ["purple"]}))
    fitted = clone(pre).fit(t.features)
    np.testing.assert_array_equal(fitted.transform(public)[0, 2:], np.zeros(3))
    model = make_pipeline(t.preprocessor(), LogisticRegression()).fit(t.features, t.labels)
    assert model.predict(public).shape == (1,)


def test_preprocessor_imputes_when_loaded_with_impute():
    t = load("x,c,label\n1,red,a\n,red,b\n3,,a\n5,blue,b\n", missing="impute")
    out = t.preprocessor().fit_transform(t.features)
    assert np.all(np.isfinite(out))
    assert out[1, 0] == 3.0  # median of 1, 3, 5
    # the missing colour becomes the most frequent one, red
    np.testing.assert_array_equal(out[2, 1:], out[0, 1:])


def test_preprocessor_numeric_only_passes_through():
    t = load_table(b"x1,x2,label\n1,2,a\n3,4,b\n")
    out = t.preprocessor().fit_transform(t.features)
    np.testing.assert_array_equal(out, [[1, 2], [3, 4]])


# --------------------------------------------------------------------------------------
# Bad input: each gives a specific DataError with an actionable message
# --------------------------------------------------------------------------------------


def refused(source, *fragments, error=DataError, **kwargs) -> str:
    with pytest.raises(error) as info:
        load_table(source, **kwargs)
    message = str(info.value)
    for fragment in fragments:
        assert fragment.lower() in message.lower(), message
    return message


@pytest.mark.parametrize("content", [b"", b"   \n\r\n  ", b"\xef\xbb\xbf", b"\n\n"])
def test_empty_file(content):
    refused(content, "empty")


def test_header_only():
    refused(b"a,b,label\n", "header row but no data rows")
    refused(b"a,b,label", "no data rows")


def test_png_bytes():
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
    refused(png, "not a CSV", "PNG")


def test_zip_bytes():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("data.csv", GOOD)
    refused(buffer.getvalue(), "not a CSV", "zip", "Excel")


def test_nul_bytes():
    refused(b"a,b,label\n1,2\x00,x\n", "binary", "NUL", "line 2")


def test_control_characters():
    refused(b"a,label\n\x01\x02\x03,x\n4,y\n", "control character")


def test_random_binary_bytes():
    data = np.random.default_rng(5).integers(0, 256, size=4096, dtype=np.uint8).tobytes()
    with pytest.raises(DataError):
        load_table(data)


def test_latin1_text_is_refused_not_guessed():
    text = "name,label\ncaf\u00e9,a\nthe,b\n".encode("latin-1")
    message = refused(text, "not UTF-8", "save", "UTF-8")
    assert "0xe9" in message and "line 2" in message


def test_utf16_text():
    refused("a,label\n1,x\n".encode("utf-16"), "UTF-16", "UTF-8")


def test_label_column_named_but_absent():
    message = refused(GOOD.encode(), "'species'", "not in the file", label_column="species")
    for column in ("'a'", "'b'", "'color'", "'label'"):
        assert column in message


def test_label_column_wrong_case_suggests_name():
    refused(GOOD.encode(), "did you mean 'color'", label_column="COLOR")


def test_label_column_of_wrong_type():
    refused(GOOD.encode(), "label_column", error=ParameterError, label_column=3)


def test_single_class():
    refused(b"x,label\n1,a\n2,a\n3,a\n", "single class", "'a'")


def test_label_column_all_empty():
    refused(b"x,label\n1,\n2,\n3,\n", "empty in every row", "'label'")
    refused(b"x,label\n1,NA\n2,\n", "empty in every row")


def test_rows_with_missing_label():
    message = refused(b"x,label\n1,a\n2,\n3,b\n4,\n5,a\n", "2 row(s) have no label", "never imputed")
    assert "2, 4" in message  # the data rows


def test_missing_label_refused_even_when_imputing():
    refused(b"x,label\n1,a\n2,\n3,b\n", "no label", missing="impute")


def test_all_nan_feature_column():
    refused(b"x,empty,label\n1,,a\n2,,b\n3,NA,a\n", "'empty'", "empty in every row")
    refused(b"x,empty,label\n1,,a\n2,,b\n", "empty in every row", missing="impute")


@pytest.mark.parametrize("value", ["inf", "-inf", "Infinity", "1e999", "-1e400"])
def test_infinite_values(value):
    message = refused(f"x,z,label\n1,2,a\n{value},3,b\n".encode(), "infinite", "'x'")
    assert "data row(s) 2" in message


def test_duplicate_column_names_from_raw_header():
    refused(b"a,b,a,label\n1,2,3,x\n4,5,6,y\n", "Duplicate column names", "'a' (2 times)")
    # pandas would rename the second column 'a.1'; a real 'a.1' column is not a duplicate
    t = load("a,a.1,label\n1,2,x\n3,4,y\n")
    assert t.feature_names == ("a", "a.1")


def test_unnamed_column():
    refused(b",x,label\n0,1,a\n1,2,b\n", "Column 1", "no name")
    refused(b"x,label,\n1,a,\n2,b,\n", "Column 3", "trailing comma")


def test_headerless_file():
    refused(b"1.0,2.0,0\n3.0,4.0,1\n", "no header row")


def test_file_over_size_limit(tmp_path):
    data = GOOD.encode()
    refused(data, "over the size limit", "max_bytes", max_bytes=len(data) - 1)
    path = tmp_path / "big.csv"
    path.write_bytes(data)
    refused(path, "over the size limit", max_bytes=10)
    refused(FakeUpload(data), "over the size limit", max_bytes=10)
    refused(io.BytesIO(data), "over the size limit", max_bytes=10)
    assert load_table(data, max_bytes=len(data)).n_rows == 4


def test_bad_max_bytes():
    refused(GOOD.encode(), "max_bytes", error=ParameterError, max_bytes=0)
    refused(GOOD.encode(), "max_bytes", error=ParameterError, max_bytes=1.5)


def test_too_many_distinct_labels():
    n = MAX_CLASSES + 1
    rows = "\n".join(f"{i},{i * 0.37}" for i in range(n))
    refused(f"x,label\n{rows}\n".encode(), f"{n} distinct values", "regression target", "identifier")
    rows = "\n".join(f"{i},{i % MAX_CLASSES}" for i in range(n))
    assert load(f"x,label\n{rows}\n").n_classes == MAX_CLASSES


def test_missing_values_refused_by_default():
    message = refused(
        b"x,y2,c,label\n1,2,red,a\n,3,blue,b\n4,,,a\n5,6,red,b\n", "missing", "missing='impute'"
    )
    assert "'x' (1)" in message and "'y2' (1)" in message and "'c' (1)" in message
    assert "2 row(s)" in message


def test_a_file_without_a_conventional_label_name_is_refused_not_guessed():
    message = refused(b"x,w,z\n1,2,a\n3,4,b\n", "No column is named", "label_column=", "'x', 'w', 'z'")
    assert load("x,w,z\n1,2,a\n3,4,b\n", label_column="z").label_column == "z"  # named: loaded
    assert message


def test_zero_feature_columns():
    refused(b"label\na\nb\n", "no feature columns")
    # A semicolon file loads (its separator is detected); read as comma-separated it has one column.
    from core.data import CsvFormat

    refused(b"a;b;label\n1;2;x\n3;4;y\n", "no feature columns", "semicolons", "sep=';'",
            csv_format=CsvFormat(sep=","))


def test_rows_with_extra_fields():
    refused(b"a,label\n1,x\n2,y,3\n", "fields")
    refused(b"a,label\n1,x,9\n2,y,3\n", "more comma-separated fields than the header")


def test_short_rows_become_missing_values():
    refused(b"a,b,label\n1,2,x\n3\n", "no label")


def test_numbers_with_a_few_text_values():
    message = refused(b"x,label\n" + b"".join(b"%d,a\n" % i for i in range(20)) + b"?,b\n", "'?'", "empty")
    assert "data row(s) 21" in message


def test_missing_path(tmp_path):
    refused(tmp_path / "nope.csv", "No file at")
    refused(tmp_path, "not a file")


def test_unsupported_source_type():
    refused(12345, "source must be", error=ParameterError)


def test_bad_missing_option():
    refused(GOOD.encode(), "missing must be", error=ParameterError, missing="skip")


@settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.binary(max_size=400))
def test_arbitrary_bytes_never_crash(data):
    try:
        table = load_table(data)
    except PrivateLabelLabError:
        return
    assert isinstance(table, Table)


_CELL = st.one_of(
    st.sampled_from(["", "NA", "inf", "1", "-2.5", "x", "a,b", '"q"', " ", "1e999", "é"]),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6),
)


@settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(_CELL, min_size=1, max_size=4), min_size=1, max_size=6))
def test_arbitrary_csv_text_never_crashes(rows):
    import csv

    buffer = io.StringIO()
    csv.writer(buffer).writerows(rows)
    try:
        table = load_table(buffer.getvalue().encode("utf-8"))
    except PrivateLabelLabError:
        return
    assert table.n_classes >= 2
    assert table.features.shape[1] >= 1


# --------------------------------------------------------------------------------------
# The public (query) table
# --------------------------------------------------------------------------------------


def test_check_public_orders_columns():
    t = load(GOOD)
    public = pd.DataFrame({"color": ["red", "blue"], "b": [1, 2], "a": ["0.5", " 7 "]})
    out = check_public(t, public)
    assert list(out.columns) == ["a", "b", "color"]
    assert out["a"].dtype == np.float64 and out["b"].dtype == np.float64
    assert out["a"].tolist() == [0.5, 7.0]
    assert out["color"].dtype == object
    assert out["color"].tolist() == ["red", "blue"]
    assert isinstance(out.index, pd.RangeIndex)


def test_check_public_accepts_plain_array():
    t = load_table(b"x1,x2,label\n1,2,a\n3,4,b\n")
    out = check_public(t, np.array([[5.0, 6.0]]))
    assert list(out.columns) == ["x1", "x2"]
    with pytest.raises(SchemaError, match="2 feature columns"):
        check_public(t, np.ones((3, 3)))


def test_public_missing_feature_column():
    t = load(GOOD)
    with pytest.raises(SchemaError) as info:
        check_public(t, pd.DataFrame({"a": [1.0], "color": ["red"]}))
    assert "'b'" in str(info.value) and "lacks" in str(info.value)


def test_public_extra_column_is_refused():
    t = load(GOOD)
    with pytest.raises(SchemaError) as info:
        check_public(t, pd.DataFrame({"a": [1.0], "b": [2.0], "color": ["red"], "patient_id": [7]}))
    assert "'patient_id'" in str(info.value) and "Delete" in str(info.value)


def test_public_text_in_numeric_column():
    t = load(GOOD)
    with pytest.raises(SchemaError) as info:
        check_public(t, pd.DataFrame({"a": [1.0, 2.0], "b": ["3", "three"], "color": ["red", "red"]}))
    message = str(info.value)
    assert "'b'" in message and "'three'" in message and "numeric" in message


def test_public_boolean_in_numeric_column():
    t = load(GOOD)
    with pytest.raises(SchemaError, match="True/False"):
        check_public(t, pd.DataFrame({"a": [True], "b": [2.0], "color": ["red"]}))


def test_public_numbers_in_categorical_column_are_text():
    t = load("code,label\nA1,x\n7,y\n")
    assert t.categorical_columns == ("code",)
    out = check_public(t, pd.DataFrame({"code": [7.0, 2.5]}))
    assert out["code"].tolist() == ["7", "2.5"]


def test_public_duplicate_columns():
    t = load(GOOD)
    frame = pd.DataFrame([[1.0, 2.0, "red", 3.0]], columns=["a", "b", "color", "a"])
    with pytest.raises(SchemaError, match="duplicate"):
        check_public(t, frame)


def test_public_missing_values_follow_the_table_option():
    frame = pd.DataFrame({"a": [1.0, np.nan], "b": [2.0, 3.0], "color": ["red", None]})
    with pytest.raises(DataError, match="missing='impute'"):
        check_public(load(GOOD), frame)
    out = check_public(load(GOOD, missing="impute"), frame)
    assert out.isna().sum().sum() == 2


def test_public_infinite_values():
    with pytest.raises(DataError, match="infinite"):
        check_public(load(GOOD), pd.DataFrame({"a": [np.inf], "b": [2.0], "color": ["red"]}))


def test_public_no_rows():
    with pytest.raises(DataError, match="no rows"):
        check_public(load(GOOD), pd.DataFrame({"a": [], "b": [], "color": []}))


def test_read_public_from_csv():
    t = load(GOOD)
    out = read_public(b"\xef\xbb\xbfcolor,b,a\r\nred,1,2\r\ngreen,3,4\r\n", t)
    assert list(out.columns) == ["a", "b", "color"]
    assert out.to_numpy().tolist() == [[2.0, 1.0, "red"], [4.0, 3.0, "green"]]
    # public rows to label carry no label: a public file holding the label column is refused
    # (most often it is the private file given as the public file)
    with pytest.raises(SchemaError, match="holds the label column 'label'.*Remove that column.*private file given as"):
        read_public(b"a,b,color,label\n1,2,red,\n", t)
    with pytest.raises(SchemaError, match="holds the label column 'label'"):
        check_public(t, pd.DataFrame({"color": ["red"], "label": ["dog"], "b": [1], "a": [0.5]}))


def test_read_public_bad_files():
    t = load(GOOD)
    with pytest.raises(SchemaError, match="text"):
        read_public(b"a,b,color\n1,two,red\n", t)
    with pytest.raises(SchemaError, match="lacks") as lacks:
        read_public(b"a,color\n1,red\n", t)
    # both fixes: add the column, or leave it out of the features (the interfaces word drop_columns=)
    assert "Add them" in str(lacks.value) and "leave them out of the features (drop_columns=b)" in str(lacks.value)
    assert lacks.value.columns == ("b",)
    with pytest.raises(DataError, match="no data rows"):
        read_public(b"a,b,color\n", t)
    with pytest.raises(DataError, match="UTF-8"):
        read_public("a,b,color\n1,2,caf\u00e9\n".encode("latin-1"), t)
    with pytest.raises(DataError, match="Duplicate"):
        read_public(b"a,b,color,a\n1,2,red,3\n", t)
    with pytest.raises(DataError, match="size limit"):
        read_public(b"a,b,color\n1,2,red\n", t, max_bytes=5)


def test_public_categorical_column_keeps_numeric_looking_text():
    t = load("zip,label\n01234,a\nN5,b\n")
    out = read_public(b"zip\n01234\n", t)
    assert out["zip"].tolist() == ["01234"]


# --------------------------------------------------------------------------------------
# Class sizes for k teachers
# --------------------------------------------------------------------------------------


def _sized_table(sizes: dict[str, int]) -> Table:
    labels = np.concatenate([np.full(n, i) for i, n in enumerate(sizes.values())])
    X = np.arange(labels.size, dtype=float)[:, None]
    return table_from_arrays(X, labels, class_names=tuple(sizes), name="sized")


def test_check_class_sizes_accepts_enough_rows():
    t = _sized_table({"big": 100, "small": 5})
    check_class_sizes(t, 10)  # ceil(10/2) = 5 <= 5
    check_class_sizes(t, 9)


def test_check_class_sizes_refuses_small_class():
    t = _sized_table({"big": 100, "small": 5, "tiny": 3})
    with pytest.raises(DataError) as info:
        check_class_sizes(t, 11)  # needs 6 rows per class
    message = str(info.value)
    assert "'small' (5 row(s))" in message and "'tiny' (3 row(s))" in message
    assert "'big'" not in message
    assert "at most 6" in message  # 2 * 3: the largest k that works
    check_class_sizes(t, 6)  # the suggested k indeed works
    with pytest.raises(DataError):
        check_class_sizes(t, 7)


def test_check_class_sizes_largest_k_respects_rows_per_chunk():
    t = _sized_table({"a": 3, "b": 3})
    with pytest.raises(ParameterError):
        check_class_sizes(t, 7)  # fewer than two rows per chunk
    check_class_sizes(t, 3)


def test_check_class_sizes_absent_class():
    t = table_from_arrays(np.zeros((10, 1)), np.zeros(10, dtype=int), class_names=("a", "b"))
    with pytest.raises(DataError, match="'b' have no rows"):
        check_class_sizes(t, 2)
    declared = table_from_arrays(np.zeros((10, 1)), np.zeros(10, dtype=int), class_names=("a", "b"),
                                 classes_declared=True)
    check_class_sizes(declared, 4)  # a declared class may have no row, or too few for k (design §1.3)
    with pytest.raises(ParameterError):
        check_class_sizes(declared, 6)  # k itself is still checked: two rows per chunk


def test_check_class_sizes_bad_k():
    with pytest.raises(ParameterError):
        check_class_sizes(_sized_table({"a": 10, "b": 10}), 1)


# --------------------------------------------------------------------------------------
# split_public and table_from_arrays
# --------------------------------------------------------------------------------------


def test_split_public_is_a_disjoint_random_partition():
    n = 200
    X = np.arange(n, dtype=float)[:, None]
    y = np.arange(n) % 3
    t = table_from_arrays(X, y, class_names=("a", "b", "c"), name="ids")
    private, public = split_public(t, 50, rng=7)
    assert public.n_rows == 50 and private.n_rows == 150
    ids_private = private.features["x0"].to_numpy().astype(int)
    ids_public = public.features["x0"].to_numpy().astype(int)
    assert set(ids_private).isdisjoint(ids_public)
    assert sorted(np.concatenate([ids_private, ids_public]).tolist()) == list(range(n))
    # labels travel with their rows
    np.testing.assert_array_equal(private.labels, ids_private % 3)
    np.testing.assert_array_equal(public.labels, ids_public % 3)
    assert private.class_names == public.class_names == ("a", "b", "c")
    assert public.feature_names == t.feature_names
    # the same seed gives the same split; another seed a different one
    again_private, _ = split_public(t, 50, rng=7)
    np.testing.assert_array_equal(again_private.features["x0"], private.features["x0"])
    other_private, _ = split_public(t, 50, rng=8)
    assert not np.array_equal(other_private.features["x0"], private.features["x0"])
    # random, not the first or last rows: P[public == first 50 rows] = 1 / C(200, 50)
    assert sorted(ids_public.tolist()) != list(range(50))


def test_split_public_keeps_categorical_schema():
    t = load(GOOD, missing="impute")
    private, public = split_public(t, 1, rng=np.random.default_rng(0))
    assert private.categorical_columns == ("color",) and public.missing == "impute"
    assert check_public(private, public.features).shape == (1, 3)


@pytest.mark.parametrize("n_public", [0, 3, 4, -1, 1.5, True])
def test_split_public_bad_sizes(n_public):
    with pytest.raises(ParameterError):
        split_public(load(GOOD), n_public, rng=0)


def test_table_from_arrays_checks():
    t = table_from_arrays(np.ones((3, 2)), np.array([0, 1, 1]))
    assert t.class_names == ("0", "1") and t.feature_names == ("x0", "x1")
    with pytest.raises(DataError):
        table_from_arrays(np.ones((3, 2)), np.array([0, 1]))
    with pytest.raises(DataError):
        table_from_arrays(np.array([[np.nan]]), np.array([0]))
    with pytest.raises(DataError):
        Table(
            features=pd.DataFrame({"x": [1.0]}),
            labels=np.array([2]),
            class_names=("a", "b"),
            label_column="label",
            numeric_columns=("x",),
            categorical_columns=(),
            name="bad",
        )


def test_ceil_half_rule_matches_the_voting_argument():
    """A class with r rows reaches at most r of k chunks; the rule refuses exactly r < k/2."""
    for r in range(1, 8):
        t = _sized_table({"big": 60, "small": r})
        for k in range(2, 20):
            ok = r >= math.ceil(k / 2)
            if ok:
                check_class_sizes(t, k)
            else:
                with pytest.raises(DataError):
                    check_class_sizes(t, k)


def test_table_pickles_for_caching():
    import pickle

    t = load(GOOD, missing="impute")
    copy = pickle.loads(pickle.dumps(t))
    pd.testing.assert_frame_equal(copy.features, t.features)
    np.testing.assert_array_equal(copy.labels, t.labels)
    assert (copy.class_names, copy.categorical_columns, copy.missing) == (
        t.class_names,
        t.categorical_columns,
        t.missing,
    )


def test_largest_k_is_the_largest_k_check_class_sizes_accepts():
    from core.data import largest_k

    for sizes in ({"big": 100, "small": 5}, {"a": 40, "b": 40, "c": 40}, {"a": 7, "b": 2}, {"a": 3, "b": 1000}):
        t = _sized_table(sizes)
        k = largest_k(t)
        check_class_sizes(t, k)  # accepted
        with pytest.raises((DataError, ParameterError)):
            check_class_sizes(t, k + 1)  # and the next one is not
    assert largest_k(_sized_table({"a": 40, "b": 40, "c": 40})) == 60  # 120 rows // 2
    assert largest_k(_sized_table({"big": 100, "small": 5})) == 10  # 2 · 5


def test_check_pair_refuses_the_private_file_as_public(tmp_path):
    """The same path (a link included), or the same bytes, as private and as public: refused."""
    from core.data import check_pair

    data = GOOD.encode()
    private = tmp_path / "p.csv"
    private.write_bytes(data)
    copy = tmp_path / "copy.csv"
    copy.write_bytes(data)
    link = tmp_path / "link.csv"
    link.symlink_to(private)
    other = tmp_path / "public.csv"
    other.write_bytes(b"a,b,color\n1,2,red\n")
    for public in (private, str(private), link, copy, data):
        with pytest.raises(DataError, match="same file is given as the private file and as the public file"):
            check_pair(private, public)
    with pytest.raises(DataError, match="same file"):
        check_pair(data, bytes(data))
    frame = pd.read_csv(private)
    with pytest.raises(DataError, match="same file"):
        check_pair(frame, frame.copy())
    check_pair(private, other)  # a separate public file passes
    check_pair(data, other.read_bytes())
    check_pair(data[:-1] + b"x", data)  # same size, other bytes


def test_copied_rows_is_a_marked_non_private_warning():
    """Many public rows that copy private rows' features: counted (exactly, on hand-made rows)."""
    from core.data import copied_rows

    t = load_table(b"x,c,label\n1,a,u\n2,b,v\n3,a,u\n4,b,v\n", name="t")
    public = check_public(t, pd.DataFrame({"x": ["1", "2", "9"], "c": ["a", "b", "a"]}))
    found = copied_rows(t, public)
    assert (found.n_copied, found.n_public) == (2, 3)  # 2 of 3 >= 50 %
    assert "2 of the 3 public rows" in found.message and "NON-PRIVATE diagnostic" in found.message
    assert "never exported" in found.message
    assert copied_rows(t, check_public(t, pd.DataFrame({"x": [1, 7, 8], "c": ["a", "a", "b"]}))) is None  # 1 of 3
    assert copied_rows(t, public, share=1.0, rows=2).n_copied == 2  # the count threshold alone
    # categories compare as text, numbers as numbers: 1 and "1.0" are one value, "a" and "A" are not
    assert copied_rows(t, check_public(t, pd.DataFrame({"x": ["1.0"], "c": ["a"]}))).n_copied == 1
    assert copied_rows(t, check_public(t, pd.DataFrame({"x": [1.0], "c": ["A"]}))) is None
