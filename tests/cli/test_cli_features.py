"""The feature set on the command line (docs/design.md §1.3): in a two-file job the identifiers that
leave a column out by default are found on the PUBLIC file's columns, so two neighbouring private
files -- one person's whole-number code equal to another row's in one, all codes distinct in the
other -- give the same student features, export columns and report; a set chosen by a check of the
private rows (label stand-ins) is said in capitals on the console and in the report, and a declared
``--features`` carries no note."""

from __future__ import annotations

import json

import joblib
import numpy as np

from core.cli import EXIT_OK, main
from core.data import check_file, check_public_columns, default_features

NOTE = "FEATURES CHOSEN BY A CHECK OF THE PRIVATE ROWS"


def _files(folder, *, repeat: bool = False, stand_in: bool = False):
    rng = np.random.default_rng(0)
    n = 300
    x0 = rng.normal(size=n)
    code = 7 * np.arange(n) + 3  # whole numbers, all different, not consecutive: an identifier by its values
    if repeat:
        code[-1] = code[0]  # one person's value now equals another's: no longer "all different"
    y = np.where(x0 + 0.3 * rng.normal(size=n) > 0, "yes", "no")
    folder.mkdir(exist_ok=True)
    extra_head, extra = (",e401k", [f",{int(v == 'yes')}" for v in y]) if stand_in else ("", [""] * n)
    (folder / "private.csv").write_text(f"x0,code{extra_head},label\n" + "".join(
        f"{a:.4f},{b}{e},{lab}\n" for a, b, e, lab in zip(x0, code, extra, y)))
    pub = rng.normal(size=50)
    extra_pub = [f",{int(v > 0)}" for v in pub] if stand_in else [""] * 50
    (folder / "public.csv").write_text(f"x0,code{extra_head}\n" + "".join(
        f"{a:.4f},{7 * i + 5}{e}\n" for i, (a, e) in enumerate(zip(pub, extra_pub))))
    return folder


def _run(folder, capsys, *extra: str):
    args = ["label", "--private", str(folder / "private.csv"), "--public", str(folder / "public.csv"),
            "--label-column", "label", "--mechanism", "dp-logistic", "--epsilon", "2", "--delta", "1e-6",
            "--class-names", "no,yes", "--out", str(folder / "out.csv"), "--report", str(folder / "report.json"),
            "--student", str(folder / "s.joblib"), "--seed", "0", "--no-progress", "--overwrite", *extra]
    assert main(args) == EXIT_OK
    out, err = capsys.readouterr()
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    student = joblib.load(folder / "s.joblib")
    header = (folder / "out.csv").read_text(encoding="utf-8").splitlines()[0]
    return list(student.feature_names_in_), header, report, out, err


def test_neighbouring_private_files_release_the_same_features(tmp_path, capsys):
    # Before: ['x0'] vs ['x0', 'code'], "encoded into 1" vs "2 columns": the set was a function of one value.
    (feat_a, head_a, rep_a, out_a, err_a), (feat_b, head_b, rep_b, out_b, err_b) = (
        _run(_files(tmp_path / name, repeat=repeat), capsys) for name, repeat in (("distinct", False), ("repeat", True)))
    assert feat_a == feat_b == ["x0"]
    assert head_a == head_b
    assert rep_a["features"] == rep_b["features"]
    assert rep_a["features"]["names"] == ["x0"] and rep_a["features"]["declared"] is False
    # the stand-in check read the private labels (it found none): the report states it, the console is quiet
    assert rep_a["features"]["statement"].startswith(NOTE + " (label stand-ins looked for in the private rows; none")
    assert NOTE not in err_a + err_b
    # every section but the counts (the labels) and the ledger (one ledger for the dataset 'private': the
    # second run counts the first) is the same
    same = [{k: v for k, v in rep.items() if k not in ("counts", "ledger")} for rep in (rep_a, rep_b)]
    assert same[0] == same[1]
    encoded = [[line for line in out.splitlines() if "encoded into" in line] for out in (out_a, out_b)]
    assert "encoded into 1 columns" in encoded[0][0] and "encoded into 1 columns" in encoded[1][0]
    for err in (err_a, err_b):  # the public rows decide, said as such
        assert "Public file: Column 'code' looks like an identifier" in err
        assert "left out of the features: code" in err
    # the private file's own finding: still shown to the owner, marked, choosing nothing
    assert "NON-PRIVATE diagnostic on the private rows: the default features are chosen on the public" in err_a
    assert "--keep code" in err_a and "--keep code" in err_b


def test_a_stand_in_left_out_is_stated_and_a_declared_set_is_not(tmp_path, capsys):
    feats, _, report, _, err = _run(_files(tmp_path / "default", stand_in=True), capsys)
    assert feats == ["x0"]
    assert NOTE + " (label stand-ins looked for in the private rows; left out: e401k)" in err
    assert report["features"]["declared"] is False
    assert report["features"]["statement"].startswith(NOTE)
    assert "left out: e401k" in report["features"]["statement"]

    feats, _, report, _, err = _run(_files(tmp_path / "declared", stand_in=True), capsys, "--features", "x0")
    assert feats == ["x0"]
    assert NOTE not in err
    assert report["features"] == {"names": ["x0"], "declared": True, "statement": "features declared (public): x0"}


def test_the_library_reads_identifiers_on_the_public_columns(tmp_path):
    distinct, repeat = _files(tmp_path / "a"), _files(tmp_path / "b", repeat=True)
    choices = []
    for folder in (distinct, repeat):
        check = check_file(folder / "private.csv", label_column="label")
        public = check_public_columns(folder / "public.csv", features=check.features)
        choices.append((default_features(check), default_features(check, public=public)))
    (one_a, two_a), (one_b, two_b) = choices
    assert one_a.features != one_b.features  # on the private values: one person's value moves 'code'
    assert two_a.features == two_b.features == ("x0",)  # on the public values: it does not
    assert one_a.read_private is not None and one_a.statement.startswith(NOTE)  # a one-file job says so
    assert "left out: code" in one_a.read_private
    assert default_features(check_file(distinct / "private.csv", label_column="label", features=["x0"]),
                            declared=True).read_private is None


def test_a_column_named_like_a_person_stays_out_whatever_its_values(tmp_path):
    # A private panel's 'patient' repeats (a person key); its public copy is neither a key (one value repeats
    # once) nor all different: out by its name alone.
    private = tmp_path / "private.csv"
    private.write_text("x0,patient,label\n" + "".join(f"{i % 7}.5,{i // 3},{'yes' if i % 2 else 'no'}\n"
                                                       for i in range(60)))
    public = tmp_path / "public.csv"
    public.write_text("x0,patient\n" + "".join(f"{i % 5}.5,{900 + 3 * (i % 29)}\n" for i in range(30)))
    check = check_file(private, label_column="label")
    choice = default_features(check, public=check_public_columns(public, features=check.features))
    assert choice.features == ("x0",) and choice.dropped == ("patient",)
    assert "names a person or record" in choice.left_out[0].reason


def _statement(folder, private: str, public: str, **options):
    folder.mkdir()
    (folder / "private.csv").write_text(private)
    (folder / "public.csv").write_text(public)
    check = check_file(folder / "private.csv", label_column="label", **options)
    choice = default_features(check, public=check_public_columns(folder / "public.csv", features=check.features))
    return choice.features, choice.statement


def test_a_skipped_stand_in_check_still_states_the_read_when_the_row_count_decided(tmp_path):
    # 20 labeled rows: the stand-in check runs; one person's label missing (dropped): 19, it is skipped. Before,
    # the second statement read "features chosen on the public file's columns (public)": the report's
    # features section told the neighbours apart.
    x = [f"{(i * 37 % 20) / 10 - 1:.1f}" for i in range(20)]
    y = ["yes" if i % 3 else "no" for i in range(20)]
    public = "x0\n" + "".join(f"{i / 10:.1f}\n" for i in range(10))
    rows = ["x0,label\n" + "".join(f"{a},{b}\n" for a, b in zip(x, labels)) for labels in (y, [""] + y[1:])]
    (feat_a, said_a), (feat_b, said_b) = (_statement(tmp_path / str(i), r, public, missing="drop")
                                          for i, r in enumerate(rows))
    assert feat_a == feat_b == ("x0",)
    assert said_a == said_b and said_a.startswith(NOTE + " (label stand-ins looked for in the private rows; none")


def test_a_column_dropped_as_empty_in_the_private_rows_is_stated(tmp_path):
    # --drop-empty-columns: 'z' empty in every private row is left out; one person's value keeps it. The set is a
    # function of a private value, so the capitals say so, naming it (before: "none left out").
    x = [f"{(i * 37 % 20) / 10 - 1:.1f}" for i in range(20)]
    y = ["yes" if i % 3 else "no" for i in range(20)]
    public = "x0,z\n" + "".join(f"{i / 10:.1f},{i % 4}\n" for i in range(10))
    rows = ["x0,z,label\n" + "".join(f"{a},{w},{b}\n" for a, w, b in zip(x, z, y)) for z in ([""] * 20, ["3"] + [""] * 19)]
    (feat_a, said_a), (feat_b, said_b) = (_statement(tmp_path / str(i), r, public, drop_empty_columns=True,
                                                     missing="impute") for i, r in enumerate(rows))
    assert feat_a == ("x0",) and feat_b == ("x0", "z")
    for said in (said_a, said_b):
        assert said.startswith(NOTE + " (label stand-ins looked for in the private rows and columns empty in every "
                               "private row dropped;")
    assert "left out: z" in said_a and "none left out" in said_b
