"""Lazy re-exports for the package ``__init__`` files.

Each subpackage names which of its modules defines each public name; the module is
imported on first use.  ``import core.cli`` (the command line) therefore does not import
scikit-learn or the accounting libraries until a command needs them.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable


def lazy_exports(package: str, exports: dict[str, str], more: dict[str, str] | None = None,
                 ) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``(__all__, __getattr__, __dir__)`` for a package re-exporting ``exports``.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    exports : dict
        Public name -> the submodule (relative to ``package``, or a full ``core.…`` path for a
        name another package defines) that defines it: the package's ``__all__`` and ``dir()``.
    more : dict, optional
        Names still reachable as attributes of the package (for existing callers) but
        not part of its public API: not in ``__all__`` nor ``dir()``; their home is the
        submodule.
    """
    names = sorted(exports)
    reachable = {**(more or {}), **exports}

    def __getattr__(name: str) -> Any:
        module = reachable.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        home = module if module.startswith("core.") else f"{package}.{module}"
        value = getattr(importlib.import_module(home), name)
        return value

    def __dir__() -> list[str]:
        return names

    return names, __getattr__, __dir__
