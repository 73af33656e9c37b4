"""A file as a hurried user has it: semicolons and decimal commas, tabs, Latin-1 text."""

from __future__ import annotations

import numpy as np
import pytest

from core.data import CsvFormat, load_table, read_public, sniff_format
from core.data.formats import decimal_points, detect_decimal, detect_separator
from core.data.problems import check_file
from core.errors import DataError, ParameterError

# A spreadsheet's export in much of Europe: semicolons, decimal commas, a text column holding a comma.
EURO = ("age;income;city;note;label\n"
        "34;1234,5;Zürich;\"a, b\";yes\n"
        "51;-0,25;Genève;c;no\n"
        "29;,75;Zürich;d;yes\n"
        "40;2e3;Genève;e;no\n"
        "45;1,5e-1;Genève;f;yes\n")


def test_semicolon_file_with_decimal_commas_loads_its_columns_and_numbers():
    table = load_table(EURO.encode("utf-8"), label_column="label")
    assert list(table.feature_names) == ["age", "income", "city", "note"]
    assert table.numeric_columns == ("age", "income")
    np.testing.assert_array_equal(table.features["income"].to_numpy(), [1234.5, -0.25, 0.75, 2000.0, 0.15])
    assert list(table.features["note"]) == ["a, b", "c", "d", "e", "f"]  # text keeps its comma
    assert list(table.features["city"]) == ["Zürich", "Genève", "Zürich", "Genève", "Genève"]


def test_the_public_file_is_read_its_own_way():
    table = load_table(EURO.encode("utf-8"), label_column="label")
    public = read_public(b"age\tincome\tcity\tnote\n30\t1.5\tZ\tx\n", table)
    assert public["income"].tolist() == [1.5] and public["age"].tolist() == [30.0]


def test_separator_and_decimal_detection():
    assert detect_separator("a,b\n1,2\n") == ","
    assert detect_separator("a;b\n1,5;2\n") == ";"
    assert detect_separator("a\tb\n1\t2\n") == "\t"
    assert detect_separator("just one column\nx\n") == ","
    import pandas as pd

    with pytest.raises(DataError, match="not guessed"):
        detect_decimal(pd.DataFrame({"a": ["1,5", "2.5"]}), ";")
    assert detect_decimal(pd.DataFrame({"a": ["1,5"]}), ",") == "."
    out = decimal_points(pd.DataFrame({"a": ["1,5", "?", None], "b": ["x,y", "1", "2"]}), ",")
    assert out["a"].tolist()[:2] == ["1.5", "?"] and out["b"].tolist() == ["x,y", "1", "2"]


def test_a_decimal_comma_with_points_elsewhere_is_refused_with_the_option():
    text = "x;y;label\n" + "".join(f"{i},5;{i}.5;a\n{i},25;{i};b\n" for i in range(20))
    with pytest.raises(DataError, match="semicolon-separated and writes numbers with a decimal comma \\('0,5' in column 'x'\\).*decimal point \\('0.5' in column "
                       "'y'\\).*decimal=','"):
        load_table(text.encode())
    table = load_table(text.replace(".", ",").encode())
    assert table.numeric_columns == ("x", "y")
    table = load_table(text.encode(), csv_format=CsvFormat(decimal=","))
    np.testing.assert_array_equal(table.features["x"].to_numpy()[:2], [0.5, 0.25])


def test_given_format_wins_and_is_checked():
    text = b"a;b;label\n1,5;2;x\n3;4;y\n"
    table = load_table(text, csv_format=CsvFormat(decimal="."))
    assert table.categorical_columns == ("a",)  # "1,5" kept as text when told the decimal mark is a point
    assert CsvFormat(sep="tab").sep == "\t" and CsvFormat(decimal="comma").decimal == ","
    assert CsvFormat(encoding="LATIN-1").encoding == "iso8859-1"
    with pytest.raises(ParameterError, match="sep"):
        CsvFormat(sep="|")
    with pytest.raises(ParameterError, match="both be commas"):
        CsvFormat(sep=",", decimal=",")
    with pytest.raises(ParameterError, match="encoding"):
        CsvFormat(encoding="klingon")


def test_latin1_file_is_refused_naming_the_file_and_the_option(tmp_path):
    path = tmp_path / "people.csv"
    path.write_bytes(EURO.encode("latin-1"))
    with pytest.raises(DataError) as info:
        load_table(path, label_column="label")
    message = str(info.value)
    assert f"'{path}'" in message and "encoding='latin-1'" in message and "line 2" in message
    table = load_table(path, label_column="label", csv_format=CsvFormat(encoding="latin-1"))
    assert table.features["city"].tolist()[:2] == ["Zürich", "Genève"]
    check = check_file(path, label_column="label", csv_format=CsvFormat(encoding="latin-1"))
    assert "city" in check.columns


def test_every_read_error_names_the_file(tmp_path):
    class Upload:  # an uploaded file: named by its name, not a path
        name = "folder/upload.csv"

        def getvalue(self):
            return b"a,,label\n1,2,x\n"

    with pytest.raises(DataError, match="^'upload.csv': Column 2 of the header has no name"):
        load_table(Upload())
    path = tmp_path / "rows.csv"
    path.write_bytes(b"a,b,label\n1,2,x,9\n")
    with pytest.raises(DataError, match=f"^'{path}': Some rows have more comma-separated fields"):
        load_table(path)
    path.write_bytes(b"")
    with pytest.raises(DataError, match=f"^The file '{path}' is empty"):
        load_table(path)


def test_sniff_format_reads_only_the_first_lines(tmp_path):
    path = tmp_path / "big.csv"
    path.write_bytes(("a;b\n" + "1,5;x\n" * 20_000).encode("latin-1"))
    found = sniff_format(path, sample_bytes=1024)
    assert (found.sep, found.decimal, found.encoding) == (";", ",", "utf-8")
    assert sniff_format(path, CsvFormat(decimal=".")).decimal == "."
    path.write_bytes("a;b\n1,5;Zürich\n".encode("latin-1"))
    with pytest.raises(DataError, match="encoding='latin-1'"):
        sniff_format(path)
    assert sniff_format(path, CsvFormat(encoding="latin-1")).encoding == "iso8859-1"
