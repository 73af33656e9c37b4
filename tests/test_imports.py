"""The import graph of ``core/`` and ``app_pages/`` has no circle.

Every ``import`` statement counts, at module level or inside a function (a lazy import
still ties two modules together): the modules of a package must form layers in which
each module imports only lower ones.  The graph is read from the source with :mod:`ast`,
so nothing is imported to build it.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "app_pages")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            out[_module_name(path)] = path
    return out


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The module of ours that ``name`` (a module, or a name inside one) refers to."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of ``core``/``app_pages`` it imports (any import statement).

    ``from package import name`` counts as importing ``package.name`` when that is a
    module, else ``package`` itself; a package's ``__init__`` importing its own
    submodules is an edge like any other.
    """
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = module if is_package else module.rpartition(".")[0]
                    for _ in range(node.level - 1):
                        base = base.rpartition(".")[0]
                    source = f"{base}.{node.module}" if node.module else base
                else:
                    source = node.module or ""
                targets = [f"{source}.{alias.name}" for alias in node.names] or [source]
            for target in targets:
                found = _resolve(target, modules)
                if found is not None and found != module:
                    graph[module].add(found)
    return graph


def _lazy_package_edges(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph without a package ``__init__``'s edges to its own submodules when they are
    lazy exports (``core._lazy``): such an ``__init__`` imports a submodule only when one
    of its names is asked for, so the submodule importing the package is no circle."""
    out = {m: set(t) for m, t in graph.items()}
    for module, path in _modules().items():
        if path.name == "__init__.py" and "lazy_exports(" in path.read_text(encoding="utf-8"):
            out[module] = {t for t in out[module] if not t.startswith(module + ".")}
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(found)


def test_the_graph_is_read():
    graph = import_graph()
    assert "core.pipeline" in graph and "app_pages._session" in graph
    assert "core.mechanisms.registry" in graph["core.pipeline.runs"], "a plain module-level import is an edge"
    assert "core.pipeline.runs" in graph["core.pipeline"]


def test_the_checker_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_in_core_or_pages():
    found = cycles(_lazy_package_edges(import_graph()))
    assert not found, "import circles (each module must import only lower ones):\n" + "\n".join(
        " <-> ".join(c) for c in found)


LAYERS = (
    ("core.errors", "core._lazy"),
    ("core.validation", "core.rng", "core.noise"),
    ("core.data",),
    ("core.accounting", "core.ledger"),  # the ledger composes accounting's maps; selection's map is a ledger entry
    ("core.mechanisms",),
    ("core.theory",),
    ("core.ensemble",),
    ("core.export",),
    ("core.pipeline",),
    ("core.plan", "core.audit"),
    ("core.estimator", "core.auto", "core.recommend", "core.nonprivate"),
    ("core.cli", "core.__main__"),
)
"""The layers of ``core``, lowest first: a module imports only from its own package or a
lower layer (``core`` itself, which holds the version and the lazy top-level names, is above
them all and may be read by any)."""


def _layer(module: str) -> int | None:
    for i, layer in enumerate(LAYERS):
        if any(module == top or module.startswith(top + ".") for top in layer):
            return i
    return None


def test_every_module_of_core_has_a_layer():
    unplaced = sorted(m for m in import_graph() if m.startswith("core.") and _layer(m) is None)
    assert not unplaced, f"modules of core in no layer: {unplaced}"


def test_no_import_runs_up_the_layers():
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in import_graph().items() if module.startswith("core.")
        for target in targets if target != "core" and _layer(target) > _layer(module)
    )
    assert not upward, "imports up the layers:\n" + "\n".join(upward)


def test_the_layer_check_finds_an_upward_import():
    assert _layer("core.mechanisms.odds") < _layer("core.theory.loop") < _layer("core.plan.engine")
    assert _layer("core.ensemble.teachers") < _layer("core.pipeline.runs") < _layer("core.estimator")
