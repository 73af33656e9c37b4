"""The command line: ``private-label-lab`` (also ``python -m core``).

Modules, one topic each: :mod:`core.cli.parser` (``build_parser``, ``main``),
:mod:`core.cli.common` (exit codes, messages, progress bar, shared options),
:mod:`core.cli.options` (the mechanisms' flags, generated from the registry),
:mod:`core.cli.label`, :mod:`core.cli.recommend`, :mod:`core.cli.bounds` and
:mod:`core.cli.audit` (the commands); :mod:`core.cli.checks` (the column and
missing-value steps of ``label``); :mod:`core.cli.ledger` (the private data's ledger:
``--dataset``, ``--ledger``, the budget).
"""

from __future__ import annotations

from core._lazy import lazy_exports

_EXPORTS = {
    "EXIT_ERROR": "common",
    "EXIT_HALTED": "common",
    "EXIT_OK": "common",
    "EXIT_STUDENT_FAILED": "common",
    "EXIT_VIOLATION": "common",
    "ProgressBar": "common",
    "build_parser": "parser",
    "main": "parser",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
