"""Tests of core.data's missing-value handling: markers, ``missing="drop"``, the counts a
Table records, gzip-compressed CSV files, and where the imputer is fitted."""

from __future__ import annotations

import gzip
import io

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from core.data import check_public, load_table, read_public, split_public
from core.errors import DataError, ParameterError
from core.ensemble.teachers import train_teachers

QMARK = (
    "age,work,label\n"
    "30,Private,<=50K\n"
    "?,Private,>50K\n"
    "40, ?,<=50K\n"
    "50,State,>50K\n"
    "60,?,?\n"
    "70,Private,<=50K\n"
)


def load(text: str, **kwargs):
    return load_table(text.encode("utf-8"), **kwargs)


# ---------------------------------------------------------------- markers


def test_without_markers_a_question_mark_is_a_category_or_refused():
    # In a text column '?' is an ordinary value unless the user names it as a marker ...
    t = load("x,work,label\n1,a,u\n2,?,v\n3,b,u\n4,a,v\n")
    assert "?" in set(t.features["work"])
    # ... and in a number column the message points to missing_markers.
    text = "x,label\n" + "".join(f"{i},a\n" for i in range(20)) + "?,b\n"
    with pytest.raises(DataError, match=r"missing_markers=\('\?',\)"):
        load(text)


def test_markers_make_question_marks_missing():
    # The label '?' of row 5 is missing: refused unless dropping.
    with pytest.raises(DataError, match="no label"):
        load(QMARK, missing="impute", missing_markers=("?",))
    t = load(QMARK.replace("60,?,?", "60,?,>50K"), missing="impute", missing_markers=["?"])
    assert t.numeric_columns == ("age",) and t.categorical_columns == ("work",)
    assert "?" not in set(t.features["work"].dropna())
    assert t.features["age"].isna().sum() == 1
    assert t.features["work"].isna().sum() == 2  # ' ?' is stripped before comparing
    assert t.missing_markers == ("?",)
    assert t.missing_counts == {"age": 1, "work": 2, "label": 0}
    assert t.missing_rows == 3 and t.dropped_rows == 0
    assert t.n_rows == 6


def test_markers_with_refuse_name_the_columns():
    with pytest.raises(DataError, match=r"'age' \(1\).*'work' \(1\).*missing='drop'"):
        load("age,work,label\n30,a,u\n?,a,v\n40,?,u\n50,b,v\n", missing_markers="?")


@pytest.mark.parametrize("bad", [("",), ("  ",), (3,), 5])
def test_bad_markers(bad):
    with pytest.raises(ParameterError, match="missing_markers"):
        load("x,label\n1,a\n2,b\n", missing_markers=bad)


# ---------------------------------------------------------------- drop


def test_drop_removes_rows_with_a_missing_feature_or_label():
    t = load(QMARK, missing="drop", missing_markers=("?",))
    assert t.missing == "drop"
    assert t.n_rows == 3 and t.dropped_rows == 3 and t.missing_rows == 3
    assert t.features["age"].tolist() == [30.0, 50.0, 70.0]
    assert t.features["work"].tolist() == ["Private", "State", "Private"]
    assert [t.class_names[c] for c in t.labels] == ["<=50K", ">50K", "<=50K"]
    assert t.missing_counts == {"age": 1, "work": 2, "label": 1}
    assert not t.features.isna().any().any()
    assert t.features.index.equals(pd.RangeIndex(3))
    assert "missing='drop'" in repr(t)


def test_drop_with_empty_fields_and_no_markers():
    t = load("x,c,label\n1,u,a\n,v,b\n3,,a\n4,w,\n5,v,b\n", missing="drop")
    assert (t.n_rows, t.dropped_rows) == (2, 3)
    assert t.missing_counts == {"x": 1, "c": 1, "label": 1}


def test_drop_without_missing_values_drops_nothing():
    t = load("x,label\n1,a\n2,b\n", missing="drop")
    assert (t.n_rows, t.dropped_rows, t.missing_rows) == (2, 0, 0)


def test_drop_leaving_no_rows_is_refused():
    with pytest.raises(DataError, match="leaves no rows"):
        load("x,c,label\n,u,a\n2,,b\n", missing="drop")


def test_drop_leaving_one_class_is_refused():
    with pytest.raises(DataError, match="single class"):
        load("x,label\n1,a\n,b\n3,a\n", missing="drop")


def test_counts_are_zero_for_a_complete_file():
    t = load("x,c,label\n1,u,a\n2,v,b\n")
    assert t.missing_counts == {"x": 0, "c": 0, "label": 0}
    assert (t.missing_rows, t.dropped_rows, t.missing_markers) == (0, 0, ())


def test_split_parts_keep_the_options():
    t = load(QMARK * 1 + "".join(f"{i},Private,>50K\n{i},State,<=50K\n" for i in range(10)),
             missing="drop", missing_markers=("?",))
    private, public = split_public(t, 5, rng=0)
    for part in (private, public):
        assert part.missing == "drop" and part.missing_markers == ("?",)
        assert part.dropped_rows == t.dropped_rows and part.missing_counts == t.missing_counts


# ---------------------------------------------------------------- public tables


def test_public_rows_follow_the_markers():
    t = load(QMARK.replace("60,?,?", "60,?,>50K"), missing="impute", missing_markers=("?",))
    public = read_public(b"age,work\n?,Private\n33, ?\n", t)
    assert public["age"].isna().tolist() == [True, False]
    assert public["work"].isna().tolist() == [False, True]
    frame = pd.DataFrame({"age": ["?", "20"], "work": ["State", "?"]})
    out = check_public(t, frame)
    assert out["age"].dtype == np.float64 and out.isna().sum().sum() == 2


def test_public_rows_refused_or_dropped_by_the_table_option():
    refuse = load("age,work,label\n1,a,u\n2,b,v\n", missing_markers=("?",))
    with pytest.raises(DataError, match="missing='drop'"):
        read_public(b"age,work\n?,a\n3,b\n", refuse)
    drop = load("age,work,label\n1,a,u\n2,b,v\n", missing="drop", missing_markers=("?",))
    out = read_public(b"age,work\n?,a\n3,b\n4,?\n5,a\n", drop)
    assert out["age"].tolist() == [3.0, 5.0] and out.attrs["dropped_rows"] == 2
    assert out.index.equals(pd.RangeIndex(2))
    with pytest.raises(DataError, match="leaves no rows"):
        read_public(b"age,work\n?,a\n", drop)
    assert read_public(b"age,work\n3,b\n", drop).attrs["dropped_rows"] == 0


# ---------------------------------------------------------------- gzip


def _gz(text: str) -> bytes:
    return gzip.compress(text.encode("utf-8"), mtime=0)


def test_gzip_files_load_like_plain_ones(tmp_path):
    text = "a,color,label\n1,red,x\n2,blue,y\n3,red,x\n"
    path = tmp_path / "pets.csv.gz"
    path.write_bytes(_gz(text))
    plain = load(text)
    for t in (load_table(path), load_table(_gz(text)), load_table(io.BytesIO(_gz(text)))):
        pd.testing.assert_frame_equal(t.features, plain.features)
        np.testing.assert_array_equal(t.labels, plain.labels)
    assert load_table(path).name == "pets"
    public = read_public(_gz("a,color\n5,red\n"), plain)
    assert public["a"].tolist() == [5.0]


def test_damaged_gzip_is_refused():
    with pytest.raises(DataError, match="cannot be decompressed"):
        load_table(_gz("a,label\n1,x\n2,y\n")[:-12])


def test_gzip_size_limit_applies_to_the_decompressed_bytes():
    text = "a,label\n" + "1,x\n2,y\n" * 5000  # 40 kB that compress to very little
    blob = _gz(text)
    assert len(blob) < 1000
    with pytest.raises(DataError, match="decompresses to more than"):
        load_table(blob, max_bytes=10_000)
    assert load_table(blob, max_bytes=len(text)).n_rows == 10_000


def test_gzip_of_a_binary_file_is_refused():
    with pytest.raises(DataError, match="not a CSV"):
        load_table(gzip.compress(b"\x00\x01\x02binary", mtime=0))


# ---------------------------------------------------------------- imputation


def test_each_teacher_imputes_from_its_own_chunk_only():
    """The imputer is fitted inside each teacher's pipeline, on that teacher's chunk."""
    rng = np.random.default_rng(0)
    n, k = 40, 4
    x = rng.normal(size=n)
    x[::5] = np.nan
    color = np.where(rng.random(n) < 0.5, "red", "blue").astype(object)
    color[1::7] = np.nan
    y = np.arange(n) % 2
    text = "x,color,label\n" + "".join(
        f"{'' if np.isnan(a) else a},{'' if c is np.nan else c},{b}\n" for a, c, b in zip(x, color, y)
    )
    t = load(text, missing="impute")
    model = make_pipeline(t.preprocessor(), LogisticRegression())
    ensemble = train_teachers(t.features, t.labels, model, k, n_classes=2, rng=1)
    order = np.random.default_rng(1).permutation(n)  # train_teachers' first draw
    chunks = np.array_split(order, k)
    medians = []
    for teacher, rows in zip(ensemble.teachers, chunks):
        imputer = teacher.steps[0][1].named_transformers_["numeric"]
        medians.append(float(imputer.statistics_[0]))
        expected = np.nanmedian(t.features["x"].to_numpy()[rows])
        assert medians[-1] == pytest.approx(expected)
    # the statistic of all private rows is not what the teachers hold
    assert len(set(np.round(medians, 12))) > 1


# ---------------------------------------------------------------- command line


def test_cli_drops_rows_with_a_marked_missing_value(tmp_path):
    from core.cli import EXIT_OK, main

    rng = np.random.default_rng(3)
    lines = ["x,c,label"]
    for i in range(200):
        x = rng.normal()
        lines.append(f"{'?' if i % 17 == 0 else round(x, 3)},{'ab'[i % 2]},{int(x > 0)}")
    private = tmp_path / "private.csv.gz"
    private.write_bytes(_gz("\n".join(lines) + "\n"))
    public = tmp_path / "public.csv"
    public.write_text("x,c\n0.5,a\n?,b\n-1,a\n", encoding="utf-8")
    out = tmp_path / "labels.csv"
    code = main([
        "label", "--private", str(private), "--public", str(public), "--missing", "drop",
        "--missing-marker", "?", "--learner", "logistic_regression", "--k", "10",
        "--mechanism", "btt", "--epsilon", "50", "--T", "2", "--delta", "1e-3", "--out", str(out),
        "--seed", "1",
        "--no-progress",
    ])
    assert code == EXIT_OK
    labeled = pd.read_csv(out)
    assert len(labeled) == 2 and labeled["x"].tolist() == [0.5, -1.0]
