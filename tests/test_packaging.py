"""Packaging: every package of core/ goes into the wheel, with its type hints (py.typed), and
the repository carries the license pyproject names and a citation file."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import core

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_every_package_of_core_is_in_the_wheel():
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "core").rglob("__init__.py")}
    assert on_disk <= listed, f"packages missing from pyproject.toml: {sorted(on_disk - listed)}"
    assert listed - on_disk == {"core.bundled"}  # datasets/, mapped by package-dir
    assert PYPROJECT["tool"]["setuptools"]["package-dir"]["core.bundled"] == "datasets"


def test_the_package_ships_its_type_hints():
    assert (ROOT / "core" / "py.typed").is_file()
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["core"]


def test_the_license_is_the_one_pyproject_names():
    assert PYPROJECT["project"]["license"] == "MIT"
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License")
    assert re.search(r"Copyright \(c\) \d{4} Private Label Lab developers", text)
    assert "THE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND" in text


def test_the_citation_file_names_this_version_and_the_papers():
    text = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    fields = dict(re.findall(r"^([a-z-]+): *\"?([^\"\n]*)\"?$", text, flags=re.M))
    assert fields["cff-version"] == "1.2.0"
    assert fields["version"] == PYPROJECT["project"]["version"] == core.__version__
    assert fields["license"] == "MIT"
    assert fields["title"].startswith("Private Label Lab")
    for paper in ("Model-Agnostic Private Learning",
                  "Semi-supervised Knowledge Transfer for Deep Learning from Private Training Data",
                  "Scalable Private Learning with PATE"):
        assert f'title: "{paper}"' in text
