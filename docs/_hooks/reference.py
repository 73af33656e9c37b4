"""MkDocs hook: the API reference pages, generated at build time from the packages' public names.

Each package of ``core`` names its public API in ``__all__`` (lazily re-exported from its
modules, ``core._lazy``).  A static reader of the source (mkdocstrings' griffe) cannot
follow the lazy re-exports, so this hook imports each package, finds the module that
defines each public name and writes one page per package: the package's docstring, then
each defining module's docstring with the names it gives the package, rendered by
mkdocstrings from their numpydoc docstrings.  A name a package re-exports from another
package is rendered once, where it is defined, and linked from the other page (an
autorefs cross-reference, checked by ``mkdocs build --strict``).

Nothing here is written to disk: the pages exist only in the build (``File.generated``).
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from collections import defaultdict
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[2]

# (page, package, title): the order of the reference's navigation (mkdocs.yml names the same pages).
PACKAGES = [
    ("pipeline", "core.pipeline", "The one path: train → vote → label → student → export; the estimator"),
    ("mechanisms", "core.mechanisms", "The mechanisms and their registry"),
    ("accounting", "core.accounting", "Privacy accounting"),
    ("ledger", "core.ledger", "The privacy ledger: one per named dataset, in one store"),
    ("theory", "core.theory", "Theory calculators"),
    ("ensemble", "core.ensemble", "Teachers, learners and the student"),
    ("data", "core.data", "Reading and checking tables, bundled data, generators"),
    ("audit", "core.audit", "The empirical privacy audit"),
    ("plan", "core.plan", "Plans: predictions from public quantities"),
]


def _home(package: str, name: str) -> str:
    """The module that defines ``package.name`` (the package's own lazy map for constants)."""
    pkg = importlib.import_module(package)
    value = getattr(pkg, name)
    module = getattr(value, "__module__", None) if (inspect.isclass(value) or inspect.isroutine(value)) else None
    if module and module.startswith("core."):
        return module
    exports = getattr(pkg, "_EXPORTS", None)
    if exports and name in exports:
        return exports[name] if exports[name].startswith("core.") else f"{package}.{exports[name]}"
    for prefix in (package + ".", "core."):  # a constant of a package without a lazy map; then one it re-exports
        for mod_name, mod in sorted(sys.modules.items()):
            if mod_name.startswith(prefix) and name in vars(mod) and not _imported(mod, name):
                return mod_name
    raise LookupError(f"cannot find the module defining {package}.{name}")


def _imported(module, name: str) -> bool:
    """Whether ``name`` reached ``module`` by an import (its source has no assignment of it)."""
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):
        return False
    return f"\n{name} =" not in source and f"\n{name}:" not in source


def _static(module: str, name: str) -> bool:
    """Whether ``module`` defines ``name`` in its source (a def, a class or an assignment at top level).

    A name served by the module's ``__getattr__`` (computed on each access) is not: a static
    reader of the source cannot render it, so the page describes it in words.
    """
    source = inspect.getsource(importlib.import_module(module))
    return re.search(rf"^(?:def|class)\s+{re.escape(name)}\b|^{re.escape(name)}\s*[:=]", source, flags=re.M) is not None


def _computed(module: str, name: str) -> list[str]:
    """The entry of a name computed on access: a heading with the name's full path and what it is."""
    value = getattr(importlib.import_module(module), name)
    if isinstance(value, dict):
        now = f"a `dict` keyed by {', '.join(f'`{key}`' for key in value)} when this page was built"
    else:
        text = repr(value)
        now = f"a `{type(value).__name__}`, `{text if len(text) <= 120 else text[:117] + '...'}` when this page was built"
    return [f"### `{name}` {{ #{module}.{name} }}", "",
            f"Computed on each access by `{module}`'s `__getattr__` (see the module's description above): {now}.", ""]


def _first_line(obj) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.strip().split("\n\n", 1)[0].replace("\n", " ")


def rendered() -> set[str]:
    """Every ``module.name`` some package page renders where it is defined."""
    out = set()
    for _, package, _ in PACKAGES:
        pkg = importlib.import_module(package)
        for name in pkg.__all__:
            home = _home(package, name)
            if home == package or home.startswith(package + "."):
                out.add(f"{home}.{name}")
    return out


def _elsewhere(names: list[tuple[str, str]], done: set[str]) -> list[str]:
    """Links to re-exported names documented on another page; the others rendered here, one by one."""
    lines: list[str] = []
    linked = [(n, h) for n, h in sorted(names) if f"{h}.{n}" in done]
    here = [(n, h) for n, h in sorted(names) if f"{h}.{n}" not in done]
    if linked:
        refs = ", ".join(f"[`{name}`][{home}.{name}]" for name, home in linked)
        lines += [f"Also re-exported here, documented where they are defined: {refs}.", ""]
    if here:
        lines += ["## Re-exported from other modules", ""]
        for name, home in here:
            lines += [f"::: {home}.{name}", "    options:", "      heading_level: 3", ""]
            done.add(f"{home}.{name}")
    return lines


def package_page(package: str, title: str, done: set[str]) -> str:
    """The reference page of one package: its docstring, then each defining module and its public names."""
    pkg = importlib.import_module(package)
    by_module: dict[str, list[str]] = defaultdict(list)
    elsewhere: list[tuple[str, str]] = []
    for name in pkg.__all__:
        home = _home(package, name)
        if home == package or home.startswith(package + "."):
            by_module[home].append(name)
        else:
            elsewhere.append((name, home))
    lines = [f"# `{package}`: {title}", "", f"::: {package}", "    options:", "      members: false",
             "      show_root_heading: false", ""]
    lines += ["Import every name below from the package: "
              f"`from {package} import {pkg.__all__[0]}`.", ""]
    for module in sorted(by_module):
        names = [name for name in by_module[module] if _static(module, name)]
        lines += [f"::: {module}", "    options:", "      heading_level: 2", "      members:"]
        lines += [f"        - {name}" for name in names]
        lines.append("")
        for name in by_module[module]:
            if name not in names:
                lines += _computed(module, name)
    lines += _elsewhere(elsewhere, done)
    return "\n".join(lines)


def top_page(done: set[str]) -> str:
    """The page of ``core`` itself: its docstring and where each top-level name is documented."""
    core = importlib.import_module("core")
    lines = ["# `core`", "", "::: core", "    options:", "      members: false", "      show_root_heading: false", "",
             "## Top-level names", "", "`from core import …` gives these names; each is documented in its package.", "",
             "| name | defined in | summary |", "|---|---|---|"]
    homes = {name: _home("core", name) for name in sorted(core._EXPORTS)}
    for name, home in homes.items():
        summary = _first_line(getattr(core, name)).replace("|", "\\|")
        lines.append(f"| [`{name}`][{home}.{name}] | `{home}` | {summary} |")
    lines.append("")
    here = [(n, h) for n, h in homes.items() if f"{h}.{n}" not in done]
    if here:
        lines += ["## Defined outside the packages above", ""]
        for name, home in here:
            lines += [f"::: {home}.{name}", "    options:", "      heading_level: 3", ""]
            done.add(f"{home}.{name}")
    return "\n".join(lines) + "\n"


def index_page() -> str:
    lines = ["# API reference", "",
             "Generated from the numpydoc docstrings of the library's public names (each package's `__all__`). "
             "Privacy parameters are keyword-only; `rng` is a `numpy.random.Generator`, an int seed or None "
             "(a fresh generator seeded by the operating system). The [module contract](../API.md) lists the "
             "same names by module in one page.", "",
             "| package | what it holds |", "|---|---|",
             "| [`core`](core.md) | " + _first_line(importlib.import_module("core")).replace("|", "\\|") + " |"]
    for page, package, title in PACKAGES:
        lines.append(f"| [`{package}`]({page}.md) | {title} |")
    return "\n".join(lines) + "\n"


def on_files(files, config):
    """Add the generated reference pages to the build."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    done = rendered()
    pages = {"reference/index.md": index_page()}
    for page, package, title in PACKAGES:
        pages[f"reference/{page}.md"] = package_page(package, title, done)
    pages["reference/core.md"] = top_page(done)
    for uri, content in pages.items():
        files.append(File.generated(config, uri, content=content))
    return files
