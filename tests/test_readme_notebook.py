"""README's "Library in a notebook" runs as printed, and its comments say what it prints."""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def notebook_block() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Library in a notebook", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, flags=re.S)
    assert match, "the section has a python block"
    return match.group(1)


@pytest.mark.slow
def test_the_notebook_section_runs_and_prints_what_it_says():
    from core.pipeline.estimator import PrivacyWarning

    out = io.StringIO()
    env: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)  # GNMax answers every query: no warning expected
        with contextlib.redirect_stdout(out):
            exec(compile(notebook_block(), "README.md", "exec"), env)
    lines = out.getvalue().splitlines()
    clf, ledger = env["clf"], env["ledger"]
    assert clf.settings_["sigma"] == pytest.approx(28.2, abs=0.05) and "sigma" in lines[0]
    assert clf.privacy_spent_ == pytest.approx((2.0, 1e-5)) and ledger.total().epsilon == pytest.approx(2.0)
    assert float(lines[2]) == pytest.approx(0.74, abs=0.005)
    assert "Privacy budget exhausted for this row" in lines[3] and len(ledger) == 1
    assert ledger.n_rows == 4500
