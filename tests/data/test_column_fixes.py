"""Duplicate and all-empty columns fixed in place (rename / drop) instead of editing the file."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core.data import load_table, read_public, unique_column_names
from core.errors import DataError

ROOT = Path(__file__).resolve().parents[2]


def _csv(n: int = 300, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    rows = ["a,b,a,c,label"]
    for x in rng.normal(size=(n, 3)):
        rows.append(f"{x[0]:.3f},{x[1]:.3f},{x[2]:.3f},,{'yes' if x[0] + x[1] > 0 else 'no'}")
    return ("\n".join(rows) + "\n").encode()


def test_unique_column_names_skips_names_already_taken():
    assert unique_column_names(["a", "b", "a", "a.2", "a"]) == ["a", "b", "a.3", "a.2", "a.4"]
    assert unique_column_names(["x", "y"]) == ["x", "y"]


def test_refused_by_default_with_the_fix_named():
    with pytest.raises(DataError, match="rename_duplicates=True"):
        load_table(_csv(), label_column="label")
    with pytest.raises(DataError, match="drop_empty_columns=True"):
        load_table(_csv(), label_column="label", rename_duplicates=True)


def test_rename_and_drop_in_place_apply_to_both_files():
    t = load_table(_csv(), label_column="label", rename_duplicates=True, drop_empty_columns=True)
    assert t.feature_names == ("a", "b", "a.2") and t.dropped_columns == ("c",)
    assert t.n_rows == 300
    public = read_public(io.BytesIO(b"a,b,a,c\n1,2,3,\n4,5,6,\n"), t, rename_duplicates=True)
    assert list(public.columns) == ["a", "b", "a.2"]
    assert public["a.2"].tolist() == [3, 6]


def test_cli_flags(tmp_path):
    (tmp_path / "p.csv").write_bytes(_csv())
    (tmp_path / "q.csv").write_bytes(b"a,b,a,c\n0.5,0.5,1,\n-1,-1,0,\n")
    base = [sys.executable, "-m", "core", "label", "--private", str(tmp_path / "p.csv"), "--public",
            str(tmp_path / "q.csv"), "--learner", "logistic_regression", "--k", "10", "--mechanism", "gnmax",
            "--epsilon", "4", "--delta", "1e-5", "--out", str(tmp_path / "out.csv"), "--no-progress"]
    r = subprocess.run(base, capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "--rename-duplicates" in r.stderr
    r = subprocess.run(base + ["--rename-duplicates", "--drop-empty-columns"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "dropped column(s) empty in every private row: c" in r.stderr
    assert (tmp_path / "out.csv").read_text().splitlines()[0].startswith("a,b,a.2,label")
