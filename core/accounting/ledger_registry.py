"""The process-wide ledgers: one per dataset fingerprint (:func:`ledger_for`, the app's and
the command line's) and the per-row ledger of the process
(:func:`default_ledger`, the estimator's when it is given none).
"""

from __future__ import annotations

import threading

from core.accounting.ledger import PrivacyLedger
from core.errors import ParameterError

__all__ = ["default_ledger", "forget_ledgers", "ledger_for"]

_REGISTRY_LOCK = threading.Lock()

_DEFAULT: PrivacyLedger | None = None


def default_ledger() -> PrivacyLedger:
    """The process-wide per-row ledger (the estimator's when it is given none).

    Every run charged to it by rows is accounted per row, whichever container, order or
    subset the rows came in; set a budget on it with :meth:`PrivacyLedger.set_budget`.

    Returns
    -------
    PrivacyLedger
    """
    global _DEFAULT
    with _REGISTRY_LOCK:
        if _DEFAULT is None:
            _DEFAULT = PrivacyLedger("per-row ledger of this process")
        return _DEFAULT

_REGISTRY: dict[str, PrivacyLedger] = {}


def ledger_for(fingerprint: str) -> PrivacyLedger:
    """The process-wide ledger of dataset ``fingerprint`` (created empty on first use).

    The app and the estimator continue a dataset's ledger across runs and ``fit``
    calls through this; thread-safe (every caller gets the same object).

    Parameters
    ----------
    fingerprint : str
        The dataset's fingerprint (non-empty, from ``dataset_fingerprint``).

    Returns
    -------
    PrivacyLedger
        The shared in-memory ledger of that dataset.
    """
    if not isinstance(fingerprint, str) or not fingerprint:
        raise ParameterError("ledger_for needs the dataset's fingerprint (a non-empty string from dataset_fingerprint).")
    with _REGISTRY_LOCK:
        ledger = _REGISTRY.get(fingerprint)
        if ledger is None:
            ledger = _REGISTRY[fingerprint] = PrivacyLedger(fingerprint)
        return ledger


def forget_ledgers() -> None:
    """Empty the process-wide registry and the per-row default ledger (tests; a new session)."""
    global _DEFAULT
    with _REGISTRY_LOCK:
        _REGISTRY.clear()
        _DEFAULT = None
