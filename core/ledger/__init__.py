"""The privacy ledger: one per named private dataset, in one store (docs/design.md §9).

Every run that touches a private dataset is charged here, before it runs, and a run past
the dataset's budget is refused.  The modules, by what they hold:

:mod:`.entries`
    The privacy maps a run is charged as (:class:`PureDPEntry`, :class:`RDPEntry`,
    :class:`ApproxDPEntry`).
:mod:`.maps`
    The maps of the library's mechanisms (:func:`planned_entry` before a run,
    :func:`entry_from_result` after it, :func:`register_privacy_map` for a new one) and
    repeat-and-select.
:mod:`.compose`
    The composition rules (:func:`compose_entries`, :func:`compose_counts`).
:mod:`.units`
    Privacy units: declared IDs, kept only as keyed hashes.
:mod:`.classes`
    Units grouped by what they spent; the largest unit's total.
:mod:`.state`
    What one dataset's ledger holds, and the budget check.
:mod:`.store`
    The SQLite store shared by the app, the command line and the library.
:mod:`.ledger`
    :class:`PrivacyLedger`, the one interface.

Example::

    from core.ledger import PrivacyLedger, store_path
    ledger = PrivacyLedger("credit", store=store_path())  # the configured store
    ledger.set_budget(epsilon=4.0, delta=1e-5)
    pipeline.label(votes, "gnmax", {"epsilon": 1.0, "delta": 1e-6}, ledger=ledger)
"""

from __future__ import annotations

from core._lazy import lazy_exports

_EXPORTS = {
    "PrivacyLedger": "ledger",
    "LedgerPart": "ledger",
    "Budget": "state",
    "default_ledger": "ledger",
    "LedgerStore": "store",
    "store_path": "store",
    "default_store_path": "store",
    "LedgerTotal": "compose",
    "compose_entries": "compose",
    "compose_counts": "compose",
    "ApproxDPEntry": "entries",
    "LedgerEntry": "entries",
    "PureDPEntry": "entries",
    "RDPEntry": "entries",
    "entry_from_result": "maps",
    "planned_entry": "maps",
    "register_privacy_map": "maps",
    "repeat_and_select": "maps",
    "unit_keys": "units",
}

_MORE = {
    "BUDGET_TOLERANCE": "state",
    "LedgerState": "state",
    "forget_ledgers": "ledger",
    "STORE_ENV": "store",
    "GroupTotal": "compose",
    "alone_epsilon": "compose",
    "delta_value": "entries",
    "entry_from_dict": "entries",
    "map_key": "entries",
    "nonnegative_value": "entries",
    "public_params": "entries",
    "confident_gnmax_entry": "maps",
    "gaussian_entry": "maps",
    "gnmax_entry": "maps",
    "pure_dp_rdp": "maps",
    "KEY_ENV": "units",
    "UnitClasses": "classes",
    "worst_total": "classes",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _MORE)
