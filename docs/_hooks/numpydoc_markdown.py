"""Griffe extension: the library's numpydoc docstrings read as Markdown in the API reference.

The docstrings follow numpydoc, whose prose is reStructuredText: Sphinx roles
(``:func:`label```), citation targets (``.. [BTT18] …``) and definition lists (a term, then
its description indented under it).  mkdocstrings parses the numpydoc sections (Parameters,
Returns …) itself and renders the prose as Markdown, where those three constructs come out
as literal text.  This extension rewrites them in the loaded docstrings, before rendering:

* a role becomes inline code of its text (``:func:`~core.pipeline.label``` → ```label```);
* a citation target becomes a list item (``- **[BTT18]** …``);
* in prose (outside the parsed sections), a term followed by an indented description
  becomes a Markdown definition list (``def_list``: the description's first line starts
  with ``:   ``).

The source files are not changed; only the site's rendering is.
"""

from __future__ import annotations

import re

import griffe

ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|attr|data|obj|exc|const|ref|term):`(~?)([^`<]+?)(?:\s*<([^>`]+)>)?`")
CITATION = re.compile(r"^(\s*)\.\. \[([^\]]+)\]\s*(.*)$")
UNDERLINE = re.compile(r"^\s*-{3,}\s*$")
# numpydoc sections that mkdocstrings parses into tables and lists: their lines are left as they are.
PARSED = {
    "parameters", "other parameters", "params", "arguments", "args", "returns", "yields", "receives", "raises",
    "warns", "attributes", "functions", "methods", "classes", "modules", "type parameters", "type aliases",
    "examples", "deprecated",
}


def _role(match: re.Match) -> str:
    tilde, text, target = match.group(1), match.group(2).strip(), match.group(3)
    if target is None and tilde:
        text = text.rsplit(".", 1)[-1]
    return f"`{text}`"


def _definitions(lines: list[str]) -> list[str]:
    """A term line followed by a 4-space indented description, in prose: a definition list.

    A term that follows the previous description directly gets a blank line before it, or
    Markdown would read it as that description's continuation.
    """
    out: list[str] = []
    in_code = False
    skip = False
    for i, line in enumerate(lines):
        if skip:  # the description's first line, already written
            skip = False
            continue
        if line.lstrip().startswith("```"):
            in_code = not in_code
        term = (not in_code and i + 1 < len(lines) and line.strip() and not line[0].isspace()
                and not line.lstrip().startswith((">>>", "- ", "* "))
                and (i == 0 or not lines[i - 1].strip() or _is_term_of_previous(lines, i))
                and lines[i + 1].startswith("    ") and lines[i + 1].strip()
                and not lines[i + 1].lstrip().startswith(">>>"))
        if not term:
            out.append(line)
            continue
        if out and out[-1].strip():
            out.append("")
        out += [line, ":   " + lines[i + 1][4:]]
        skip = True
    return out


def _is_term_of_previous(lines: list[str], i: int) -> bool:
    """Whether line ``i`` follows a finished definition (the line before it is indented)."""
    return lines[i - 1].startswith("    ")


def markdown(text: str) -> str:
    """A numpydoc docstring with its reStructuredText prose rewritten as Markdown."""
    text = ROLE.sub(_role, text)
    lines = [CITATION.sub(lambda m: f"{m.group(1)}- **[{m.group(2)}]** {m.group(3)}", line) for line in text.split("\n")]
    # Split into segments at section headers (a title line over a dashed underline).
    out: list[str] = []
    segment: list[str] = []
    parsed = False
    i = 0
    while i < len(lines):
        if i + 1 < len(lines) and lines[i].strip() and UNDERLINE.match(lines[i + 1]):
            out += segment if parsed else _definitions(segment)
            segment = []
            parsed = lines[i].strip().lower() in PARSED
            out += [lines[i], lines[i + 1]]
            i += 2
            continue
        segment.append(lines[i])
        i += 1
    out += segment if parsed else _definitions(segment)
    return "\n".join(out)


class NumpydocMarkdown(griffe.Extension):
    """Rewrite every loaded docstring with :func:`markdown`."""

    def on_object(self, *, obj, loader, **kwargs) -> None:  # noqa: D102 - griffe's hook
        if obj.is_alias or obj.docstring is None:
            return
        obj.docstring.value = markdown(obj.docstring.value)
