"""MkDocs hook: the design notes' sections, and every citation "docs/design.md §N" as a link.

The design notes are an index (``docs/design.md``: each section's number, title and page)
and one page per topic under ``docs/design/``; each numbered heading there carries a stable
anchor (``## 9. The privacy ledger ... {#s9}``, ``### 3.1 ... {#s3.1}``).  The code, the
documentation and the tests cite a section as "docs/design.md §N".  In the site, this hook
turns each such citation in a page's prose (not in code) into a link to the section's page
and anchor, so ``mkdocs build --strict`` also fails on a citation of a section that does
not exist.  The same reading of the pages and of a citation serves the test of the index
(``tests/test_design_index.py``).
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DESIGN = ROOT / "docs" / "design"

# A numbered heading of a design page: its level, number, title and anchor.
HEADING = re.compile(r"^(?P<level>##|###) (?P<number>\d+(?:\.\d+)?)\.? (?P<title>.*?) \{#s(?P<anchor>[\d.]+)\}\s*$")
NUMBER = r"\d+(?:\.\d+)*"
# "docs/design.md §3.2", "design.md §8.4–8.5", "design.md §3.2, §3.3", "`docs/design.md` §5",
# and a citation broken over two lines of a docstring or of comments ("design.md\n    # §9").
CITATION = re.compile(
    rf"(?:docs/)?design\.md`?\s*(?:#\s*)?(?P<run>§{NUMBER}(?:\s*[–-]\s*§?{NUMBER})?(?:(?:,\s*|\s+and\s+)§{NUMBER}(?:\s*[–-]\s*§?{NUMBER})?)*)"
)


def sections(design: Path = DESIGN) -> dict[str, list[tuple[str, str]]]:
    """Each section number → the (page, title) pairs that hold a heading of that number.

    A page is named relative to ``docs/`` (``design/ledger.md``); headings inside fenced
    code are not headings.  A heading whose anchor differs from its number is an error.
    """
    found: dict[str, list[tuple[str, str]]] = {}
    for path in sorted(design.glob("*.md")):
        fenced = False
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("```"):
                fenced = not fenced
            match = None if fenced else HEADING.match(line)
            if match:
                if match["anchor"] != match["number"]:
                    raise ValueError(f"{path.name}: heading {match['number']} has the anchor #s{match['anchor']}")
                found.setdefault(match["number"], []).append((f"design/{path.name}", match["title"]))
    return found


def cited(text: str) -> list[str]:
    """The section numbers a text cites as "design.md §N" (both ends of a range "§8.4–8.5")."""
    return [number for match in CITATION.finditer(text) for number in re.findall(NUMBER, match["run"])]


def _link(text: str, page: str, where: dict[str, str]) -> str:
    """``text`` with each citation of a known section made a link (relative to ``page``)."""
    def one(match: re.Match) -> str:
        number = re.match(rf"§({NUMBER})", match["run"]).group(1)
        if number not in where:
            # Left as text; the build warns (and fails in strict mode) on the link below.
            target = f"design.md#s{number}"
        else:
            target = f"{where[number]}#s{number}"
        return f"[{match.group(0)}]({posixpath.relpath(target, posixpath.dirname(page) or '.')})"

    return CITATION.sub(one, text)


def link_citations(markdown: str, page: str, where: dict[str, str]) -> str:
    """A page's Markdown with its prose citations linked; fenced code, inline code and existing links untouched."""
    out, fenced = [], False
    for line in markdown.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if fenced or "design.md" not in line:
            out.append(line)
            continue
        # Split off inline code spans and links: only the text between them is rewritten.
        parts = re.split(r"(`[^`]*`|\[[^\]]*\]\([^)]*\))", line)
        out.append("".join(p if i % 2 else _link(p, page, where) for i, p in enumerate(parts)))
    return "\n".join(out)


def on_page_markdown(markdown, page, config, files, **kwargs):
    src = page.file.src_uri
    if not src.endswith(".md") or src.startswith("design/"):
        return markdown
    where = {number: places[0][0] for number, places in sections().items()}
    return link_citations(markdown, src, where)
