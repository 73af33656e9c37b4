"""The documentation site builds in strict mode, and the tutorial notebooks run as stored.

``mkdocs build --strict`` turns every warning into a failure: a link to a page or an anchor
that does not exist, an API reference (``::: core.x.y`` or ``[name][core.x.y]``) that does
not resolve, a page missing from the navigation.  The notebooks in ``docs/tutorials`` are
stored without outputs and executed here, top to bottom, in a fresh kernel.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = ROOT / "docs" / "tutorials"
NOTEBOOKS = ("lecture.ipynb", "data-owner-job.ipynb", "pate2018-adult.ipynb")
# A line each notebook prints when it ran to its end as written (seeded, or a guarantee fixed by the settings).
PRINTS = {
    "lecture.ipynb": "agrees: True",
    "data-owner-job.ipynb": "answered 1000 of 1000; guarantee (2, 1e-05)",
    "pate2018-adult.ipynb": "guarantee for every dataset: (6.40, 1e-05)-DP",
}


def test_the_docs_extra_is_part_of_the_test_extra():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert extras["docs"] and set(extras["docs"]) <= set(extras["test"])


def test_every_tutorial_is_in_the_navigation_and_stored_without_outputs():
    import nbformat

    stored = sorted(p.name for p in TUTORIALS.glob("*.ipynb"))
    assert stored == sorted(NOTEBOOKS)
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for name in NOTEBOOKS:
        assert f"tutorials/{name}" in nav
        nb = nbformat.read(TUTORIALS / name, as_version=4)
        nbformat.validate(nb)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert code, name
        assert all(not c.outputs and c.execution_count is None for c in code), f"{name} is stored with outputs"


def test_docstring_prose_is_rewritten_as_markdown_and_sections_are_left_alone():
    import importlib.util

    spec = importlib.util.spec_from_file_location("numpydoc_markdown", ROOT / "docs" / "_hooks" / "numpydoc_markdown.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    doc = (
        "Labels from :func:`~core.pipeline.label` and :class:`core.data.Table`.\n\n"
        ":func:`resolve`\n    Settings from a request.\n:func:`privacy_map`\n    The guarantee.\n\n"
        "Parameters\n----------\nvotes : ndarray\n    See :mod:`core.mechanisms`.\n\n"
        "References\n----------\n.. [BTT18] R. Bassily et al.\n"
    )
    assert module.markdown(doc).split("\n") == [
        "Labels from `label` and `core.data.Table`.", "",
        "`resolve`", ":   Settings from a request.", "", "`privacy_map`", ":   The guarantee.", "",
        "Parameters", "----------", "votes : ndarray", "    See `core.mechanisms`.", "",
        "References", "----------", "- **[BTT18]** R. Bassily et al.", "",
    ]


def build(site: Path) -> subprocess.CompletedProcess:
    """``mkdocs build --strict`` of the repository's site into ``site``."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_the_site_builds_in_strict_mode(tmp_path):
    site = tmp_path / "site"
    done = build(site)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    # Every page of the navigation is there, the notebooks rendered (not executed: no output cells).
    for page in ("index.html", "guarantee.html", "guide/data-owner.html", "guide/lecturer.html",
                 "guide/researcher.html", "design.html", "API.html", "benchmarks.html", "install.html",
                 "design/overview.html", "design/ledger.html", "design/references.html"):
        assert (site / page).is_file(), page
    # The design notes: the index links each section's page; a guide's citation is a link to its section.
    assert 'href="design/ledger.html#s9"' in (site / "design.html").read_text(encoding="utf-8")
    guide = (site / "guide" / "data-owner.html").read_text(encoding="utf-8")
    assert '<a href="../design/ledger.html#s9">docs/design.md §9</a>' in guide
    lecture = (site / "tutorials" / "lecture.html").read_text(encoding="utf-8")
    assert "sweep_against_bounds" in lecture and PRINTS["lecture.ipynb"] not in lecture   # code, no output
    # The API reference is generated from the docstrings: every public name of every package
    # (its __all__, and the top-level names of core) has its entry, a heading with its full path.
    import importlib
    import re

    ids = set()
    for page in (site / "reference").glob("*.html"):
        ids |= set(re.findall(r'id="(core(?:\.\w+)+)"', page.read_text(encoding="utf-8")))
    packages = ["core.pipeline", "core.mechanisms", "core.accounting", "core.theory", "core.ensemble", "core.data",
                "core.audit", "core.plan"]
    public = {(package, name) for package in packages for name in importlib.import_module(package).__all__}
    public |= {("core", name) for name in importlib.import_module("core")._EXPORTS}
    missing = sorted(f"{package}.{name}" for package, name in public if not any(i.endswith("." + name) for i in ids))
    assert not missing, f"public names without a reference entry: {missing}"
    assert "core.accounting.btt.calibrate_btt" in ids and "core.mechanisms.registry.register" in ids
    accounting = (site / "reference" / "accounting.html").read_text(encoding="utf-8")
    assert ":func:" not in accounting and ".. [" not in accounting   # reStructuredText read as Markdown
    # Nothing in the built site points at the network for what a page needs to show.
    assert "fonts.googleapis.com" not in (site / "index.html").read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_tutorial_notebooks_run_top_to_bottom(name, tmp_path):
    """Each notebook in a fresh kernel of its own, one test each (the two test workers share them out)."""
    import nbformat
    from jupyter_client import KernelManager
    from nbclient import NotebookClient

    nb = nbformat.read(TUTORIALS / name, as_version=4)
    start = time.perf_counter()
    # A fresh kernel, run in a scratch folder (a notebook writes nothing into the repository);
    # its channels are Unix sockets in that folder, not TCP ports.
    km = KernelManager(kernel_name="python3", transport="ipc", ip=str(tmp_path / "kernel"))
    NotebookClient(nb, km=km, timeout=600, resources={"metadata": {"path": str(tmp_path)}}).execute()
    seconds = time.perf_counter() - start
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, (name, errors)
    text = "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs
                     if o.output_type == "stream")
    assert PRINTS[name] in text, (name, text[-2000:])
    print(f"tutorial notebook {name}: {seconds:.1f} s")
