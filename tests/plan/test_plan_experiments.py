"""Smoke tests of the plan's experiment scripts (``--quick``, into a temporary folder).

Marked slow like the other experiment smoke tests: each runs as a user would, writes its
table and plot, and the table holds possible numbers.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def run_quick(name: str, out: Path) -> str:
    proc = subprocess.run([sys.executable, str(ROOT / "experiments" / f"{name}.py"), "--quick", "--out", str(out),
                           "--n-jobs", "1"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (out / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = (out / f"{name}.md").read_text(encoding="utf-8")
    assert f"python experiments/{name}.py --quick" in text
    return text


def rows(text: str) -> list[list[str]]:
    lines = [ln for ln in text.splitlines() if ln.startswith("|")]
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in lines[2:]]


def test_plan_vs_measured_quick(tmp_path):
    text = run_quick("plan_vs_measured", tmp_path)
    head, trained = text.split("### The DP-training routes", 1)
    table = rows(head)
    assert len(table) == 18 and {r[0] for r in table} == {"halfspaces", "adult"}
    assert "NON-PRIVATE" in text and "Within tolerance" in text
    dp = rows(trained)  # the quick run: breast cancer, both DP-training routes at ε = 1
    assert [(r[0], r[1], r[2]) for r in dp] == [("breast_cancer", "dp-logistic", "1"), ("breast_cancer", "dp-naive-bayes", "1")]
    for r in dp:  # predicted, its range over the label's directions, measured
        predicted, (lo, hi), measured = float(r[3].split(" ")[0]), map(float, r[4].split("–")), float(r[5].split(" ")[0])
        assert 0.0 <= lo <= predicted <= hi <= 1.0 and 0.0 <= measured <= 1.0
        assert 0.0 <= float(r[6]) <= 1.0  # the route without its noise (NON-PRIVATE diagnostic)
        assert r[8] in ("yes", "NO") and r[9] in ("yes", "NO")
    assert "Per table, rows within 3 points of the central prediction: breast_cancer" in trained
    for r in table:
        measured, predicted = float(r[3].split(" ")[0]), float(r[4].split(" ")[0])
        assert 0 <= measured <= 200 and 0 <= predicted <= 200


def test_private_selection_adult_quick(tmp_path):
    text = run_quick("private_selection_adult", tmp_path)
    assert "Guarantee of the whole selection" in text and "Within 1 point of the grid's best" in text
    table = rows(text)
    assert 0.0 <= float(table[0][2]) <= 1.0
