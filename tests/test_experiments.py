"""Smoke tests of the experiment scripts: each runs with ``--quick`` into a temporary folder.

Each script is run as a user would run it (``python experiments/<name>.py``, a fresh
process from the repository root) and must write ``<name>.md`` and ``<name>.png``; the
markdown must hold the table with the expected columns, the quoted command, and numbers
that are possible (answered counts within the number of queries, accuracies and rates in
[0, 1], reported ε within the target).  Together they take about a minute on one core.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run_script(name: str, out: Path, *extra: str) -> str:
    """Run ``experiments/<name>.py --quick --out out``; return the markdown it wrote."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "experiments" / f"{name}.py"), "--quick", "--out", str(out),
         "--n-jobs", "1", *extra],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, f"{name} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    md, png = out / f"{name}.md", out / f"{name}.png"
    assert md.is_file() and png.is_file(), f"{name} did not write {md.name} and {png.name}"
    assert png.read_bytes()[:8] == PNG_MAGIC and png.stat().st_size > 5_000, "the plot is not a real PNG"
    text = md.read_text(encoding="utf-8")
    assert f"python experiments/{name}.py --quick" in text, "the table must quote the command that made it"
    assert text.strip() in proc.stdout, "the script prints its table"
    return text


def table(text: str) -> tuple[list[str], list[list[str]]]:
    """The first markdown table of ``text``: (header cells, rows of cells)."""
    lines = [ln for ln in text.splitlines() if ln.startswith("|")]
    assert len(lines) >= 3, "no markdown table found"
    cells = [[c.strip() for c in ln.strip("|").split("|")] for ln in lines]
    assert set(lines[1].replace("|", "")) == {"-"}, "second line must be the header rule"
    header, rows = cells[0], cells[2:]
    assert all(len(r) == len(header) for r in rows)
    return header, rows


def number(cell: str) -> float:
    """The leading number of a cell such as ``637 ± 7`` or ``1,000``; NaN for ``—``."""
    match = re.match(r"^-?[\d,]*\.?\d+(e[-+]?\d+)?", cell.replace("−", "-"))
    return float(match.group(0).replace(",", "")) if match else float("nan")


def column(header: list[str], rows: list[list[str]], starts: str) -> list[float]:
    idx = [i for i, h in enumerate(header) if h.startswith(starts)]
    assert len(idx) == 1, f"expected one column starting with {starts!r} in {header}"
    return [number(r[idx[0]]) for r in rows]


def in_unit(values: list[float]) -> bool:
    return all(v != v or 0.0 <= v <= 1.0 for v in values)  # NaN (—) allowed


def test_one_over_alpha(tmp_path):
    text = run_script("one_over_alpha", tmp_path)
    header, rows = table(text)
    assert header[:4] == ["label noise γ", "teacher error α", "share of queries with > k/3 teachers wrong",
                          "BTT tight: answered"]
    assert "baseline: answered at its best m'" in header and "ratio BTT / baseline" in header
    assert [number(r[0]) for r in rows] == [0.0, 0.3]  # the quick noise levels
    alpha = column(header, rows, "teacher error α")
    btt = column(header, rows, "BTT tight: answered")
    base = column(header, rows, "baseline: answered")
    assert in_unit(alpha) and alpha[0] < alpha[1], "more label noise must give worse teachers"
    assert all(0 <= b <= 2000 for b in btt + base)
    assert btt[0] > btt[1], "BTT answers more queries when the teachers err less"
    assert btt[0] > 0 and base[0] > 0
    assert in_unit(column(header, rows, "BTT accuracy on answered"))
    assert "Fitted slope" in text


def test_misclassification_vs_m(tmp_path):
    text = run_script("misclassification_vs_m", tmp_path)
    header, rows = table(text)
    assert header[0] == "m" and header[-1] == "Thm 3.2 bound with its own T"
    assert [number(r[0]) for r in rows] == [20, 50, 100]
    for name in ("error rate on answered", "misclassification rate", "bound T/m", "Thm 3.2 bound"):
        assert in_unit(column(header, rows, name)), name
    bound = column(header, rows, "bound T/m")
    assert bound == pytest.approx([3 / 20, 3 / 50, 3 / 100], rel=1e-3)
    bottoms = column(header, rows, "⊥ count")
    assert all(0 <= b <= 3 for b in bottoms), "never more ⊥ than the cutoff T"
    required = column(header, rows, "T required by Thm 3.2")
    assert required == sorted(required) and required[0] > 0, "Theorem 3.2's cutoff grows with m"


def test_privacy_utility(tmp_path):
    from core.mechanisms import registry

    text = run_script("privacy_utility", tmp_path)
    header, rows = table(text)
    assert header == ["target ε", "mechanism", "setting", "guarantee (ε, δ)", "answered (of 300)", "correct",
                      "wrong", "⊥", "not processed", "student test accuracy",
                      "data-dependent ε (NON-PRIVATE diagnostic)"]
    # every registered mechanism runs on the binary task (btt-soft included), at every quick ε
    assert [r[1] for r in rows] == registry.names() * 2
    assert "NON-PRIVATE" in text
    for r in rows:
        target = number(r[0])
        answered, correct, wrong, bottom, unprocessed = (number(c) for c in r[4:9])
        assert correct + wrong == answered and answered + bottom + unprocessed == 300, r
        if r[2].startswith("not run"):
            continue
        assert number(r[3]) <= target * (1 + 1e-3), f"{r[1]} reports ε above the target"
        assert number(r[3].split(",")[1].strip()) <= 1e-5 * (1 + 1e-3)
    assert in_unit(column(header, rows, "student test accuracy"))
    for name in ("lnmax", "gnmax"):
        cells = [r for r in rows if r[1] == name]
        assert all(number(r[4]) == 300 for r in cells), f"{name} labels every query"
        assert all(number(r[3]) == pytest.approx(number(r[0]), rel=1e-2) for r in cells), "noise solved for the target ε"
    lnmax = [r for r in rows if r[1] == "lnmax"]
    assert all(number(r[-1]) > 0 for r in lnmax), "LNMax reports its data-dependent diagnostic"
    assert [r[2] for r in rows if r[1] == "lnmax"][0].startswith("gamma = ")
    assert [r[2] for r in rows if r[1] == "confident-gnmax"][0].startswith("sigma1 = ")


def adult_rows(text: str):
    header, rows = table(text)
    labels = [r[0] for r in rows]
    return header, rows, labels


def test_pate_appendix_c(tmp_path):
    text = run_script("pate_appendix_c", tmp_path)
    header, rows, labels = adult_rows(text)
    assert header == ["labels from", "ε (data-independent guarantee)", "δ", "data-dependent ε (NON-PRIVATE diagnostic)",
                      "answered (of 100)", "⊥", "not processed", "label accuracy on answered",
                      "student accuracy (last 1,000 test rows)"]
    assert labels[0].startswith("non-private random forest")
    assert labels[2] == "lnmax, γ = 0.05"
    assert labels[3].startswith("btt (tight) at LNMax's (ε, δ)") and labels[4] == "baseline at LNMax's (ε, δ)"
    assert 0.7 < number(rows[0][-1]) <= 1.0, "a forest on Adult's private rows is far better than chance"
    assert in_unit(column(header, rows, "label accuracy on answered"))
    assert in_unit(column(header, rows, "student accuracy"))
    lnmax, btt, base = rows[2], rows[3], rows[4]
    assert number(lnmax[4]) == 100, "LNMax labels every public query"
    assert number(lnmax[1]) > 0 and number(lnmax[3]) > 0
    assert number(btt[1]) <= number(lnmax[1]) * (1 + 1e-3) and number(base[1]) <= number(lnmax[1]) * (1 + 1e-3)


def test_pate2018_adult(tmp_path):
    text = run_script("pate2018_adult", tmp_path)
    header, rows, labels = adult_rows(text)
    assert header[0] == "labels from" and header[4] == "answered (of 150)" and header[5] == "correct"
    assert labels[1].startswith("confident-gnmax, t = 12") and labels[2].startswith("certified-gnmax")
    conf = rows[1]
    assert 0 < number(conf[1]) and number(conf[2]) <= 1e-5
    assert number(conf[3]) > 0, "the data-dependent diagnostic is reported"
    assert number(conf[5]) + number(conf[6]) == number(conf[4])
    assert number(conf[4]) + number(conf[7]) + number(conf[8]) == 150
    assert in_unit(column(header, rows, "student accuracy"))
    assert "NOT a privacy guarantee" in text


def test_no_direct_mechanism_calls():
    """Experiments run mechanisms only through core.pipeline, by registry name."""
    for path in (ROOT / "experiments").glob("*.py"):
        source = path.read_text(encoding="utf-8")
        assert not re.search(r"\b\w+_label\(", source), f"{path.name} calls a labeling function directly"
        assert "from core.mechanisms import" not in source.replace("from core.mechanisms import registry", ""), path.name


def test_bad_argument_is_refused(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(ROOT / "experiments" / "one_over_alpha.py"), "--noise", "0.7", "--out", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2 and "noise level must lie in [0, 0.5)" in proc.stderr
    assert not list(tmp_path.iterdir()), "nothing is written for a refused run"


def test_quick_run_writes_to_scratch_never_over_tracked_results():
    """``--quick`` without ``--out`` goes to the git-ignored scratch folder, not experiments/results/."""
    sys.path.insert(0, str(ROOT / "experiments"))
    try:
        import _common as common
    finally:
        sys.path.remove(str(ROOT / "experiments"))
    p = common.parser("demo", "demo")
    assert common.parse(p, ["--quick"], {}).out == common.QUICK_OUT
    assert common.parse(p, [], {}).out == common.DEFAULT_OUT
    assert common.parse(p, ["--quick", "--out", "elsewhere"], {}).out == Path("elsewhere")
    assert common.QUICK_OUT != common.DEFAULT_OUT and common.DEFAULT_OUT not in common.QUICK_OUT.parents
    ignored = subprocess.run(["git", "check-ignore", "-q", str(common.QUICK_OUT / "x.md")], cwd=ROOT)
    assert ignored.returncode == 0, "the quick scratch folder must be ignored by git"
