"""experiments/small_epsilon.py: every route runs (quick sizes) and the table is consistent."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_small_epsilon_quick(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("small_epsilon", ROOT / "experiments" / "small_epsilon.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.main(["--quick", "--out", str(tmp_path)])
    text = (tmp_path / "small_epsilon.md").read_text(encoding="utf-8")
    assert (tmp_path / "small_epsilon.png").exists()
    rows = [line.split(" | ") for line in text.splitlines() if line.startswith("| 1 |")]
    assert [r[1] for r in rows] == list(mod.ROUTES)
    for r in rows:
        correct, answered = int(r[2].replace(",", "")), int(r[3].split(" ")[0].replace(",", ""))
        assert 0 <= correct <= answered <= 300
    dp = {r[1]: int(r[2]) for r in rows}
    assert dp["DP logistic regression (Gaussian)"] > 200  # a clean halfspace at ε = 1: well above chance


def test_small_epsilon_dp_routes_alone_train_no_teachers(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("small_epsilon", ROOT / "experiments" / "small_epsilon.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)

    def no_teachers(*args, **kwargs):
        raise AssertionError("--routes dp trains no teachers")

    monkeypatch.setattr(mod.pipeline, "train", no_teachers)
    mod.main(["--quick", "--routes", "dp", "--out", str(tmp_path)])
    text = (tmp_path / "small_epsilon.md").read_text(encoding="utf-8")
    rows = [line.split(" | ") for line in text.splitlines() if line.startswith("| 1 |")]
    assert [r[1] for r in rows] == list(mod.DP_ROUTES)
    assert "the DP-training routes only" in text and "plurality" not in text
