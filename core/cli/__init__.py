"""The command line: ``private-label-lab`` (also ``python -m core``).
"""

from __future__ import annotations

from core._lazy import lazy_exports

_EXPORTS = {
    "EXIT_ERROR": "commands",
    "EXIT_HALTED": "commands",
    "EXIT_OK": "commands",
    "EXIT_VIOLATION": "commands",
    "ProgressBar": "commands",
    "build_parser": "commands",
    "main": "commands",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
