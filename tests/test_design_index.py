"""The design notes' index and their citations: every "docs/design.md §N" finds its section.

``docs/design.md`` is an index (each section's number, title and page) of the topic pages
under ``docs/design/``.  The code, the documentation and the tests cite a section as
"docs/design.md §N"; a reader follows the index.  These checks read files only (no build):
each section is on exactly one page, under its own anchor, and listed once in the index
with a link to that page; each citation anywhere in the project names such a section.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("design_citations", ROOT / "docs" / "_hooks" / "design_citations.py")
design_citations = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(design_citations)

# Where the project cites the design notes: the library, the app, the documentation, the
# tests, the benchmarks and experiments, the README.
CITING = ("core", "app_pages", "docs", "tests", "bench", "experiments")
SUFFIXES = {".py", ".md", ".ipynb", ".yml", ".toml", ".txt"}
ROW = re.compile(r"^\| §(?P<number>[\d.]+) \| \[(?P<title>.*)\]\((?P<page>design/[\w.-]+\.md)#s(?P<anchor>[\d.]+)\) \|")


def index_rows() -> list[re.Match]:
    return [m for line in (ROOT / "docs" / "design.md").read_text(encoding="utf-8").splitlines()
            if (m := ROW.match(line))]


def citing_files() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "app.py"]
    for folder in CITING:
        files += [p for p in (ROOT / folder).rglob("*") if p.suffix in SUFFIXES and p.is_file()
                  and "__pycache__" not in p.parts and "out" not in p.relative_to(ROOT).parts[:2]]
    return files


def test_each_section_is_on_one_page_and_in_the_index_once_linked_to_that_page():
    sections = design_citations.sections()
    assert {"1", "1.2", "3.4", "8.5", "9", "10.3", "14"} <= set(sections)   # the pages were read
    twice = {number: places for number, places in sections.items() if len(places) != 1}
    assert not twice, f"sections on more than one page: {twice}"
    rows = index_rows()
    listed = [row["number"] for row in rows]
    assert sorted(set(listed)) == sorted(listed), "a section listed twice in the index"
    assert set(listed) == set(sections), (set(listed) ^ set(sections))
    for row in rows:
        (page, title), = sections[row["number"]]
        assert (row["page"], row["anchor"], row["title"]) == (page, row["number"], title), row.group(0)
    # The index lists the sections in their order, and every design page is in the navigation.
    assert listed == sorted(listed, key=lambda n: tuple(int(p) for p in n.split(".")))
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = sorted(p.name for p in (ROOT / "docs" / "design").glob("*.md"))
    assert [p for p in pages if f"design/{p}" not in nav] == []


def test_every_citation_of_the_design_notes_names_a_section_of_the_index():
    sections = design_citations.sections()
    listed = {row["number"] for row in index_rows()}
    cited: dict[str, set[str]] = {}
    for path in citing_files():
        for number in design_citations.cited(path.read_text(encoding="utf-8", errors="replace")):
            cited.setdefault(number, set()).add(str(path.relative_to(ROOT)))
    # Read as cited (a docstring's citation broken over two lines, a range, a list of sections).
    assert len(cited) >= 25 and {"8.4", "8.5", "3.2", "3.3", "10.3", "6"} <= set(cited), sorted(cited)
    unknown = {number: sorted(files) for number, files in cited.items()
               if number not in listed or len(sections.get(number, ())) != 1}
    assert not unknown, f"citations of sections the design notes do not have: {unknown}"


def test_a_citation_is_read_in_each_of_its_spellings_and_linked_outside_code():
    text = ("docs/design.md §3.2, §3.3 and §12.1; design.md §8.4–8.5; `docs/design.md` §5; "
            "design.md\n    # §9; the design notes; design.md §x")
    assert design_citations.cited(text) == ["3.2", "3.3", "12.1", "8.4", "8.5", "5", "9"]
    where = {"9": "design/ledger.md", "3.2": "design/mechanisms.md"}
    page = "Charged (docs/design.md §9), `design.md §9` in code.\n```\n# design.md §9\n```\n[done](design.md)"
    linked = design_citations.link_citations(page, "guide/data-owner.md", where)
    assert linked.split("\n") == [
        "Charged ([docs/design.md §9](../design/ledger.md#s9)), `design.md §9` in code.",
        "```", "# design.md §9", "```", "[done](design.md)"]
