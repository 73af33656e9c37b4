"""Per-row accounting for :class:`core.accounting.PrivacyLedger` (docs/design.md §13).

A ledger run either touches *every* row of the ledger's data (a run charged without
rows: the dataset-level ledger of the app and the command line) or a given set of rows
(identified by :func:`core.accounting.rows.row_fingerprints`).  A row's own spending is
the composition of every run that touched it; the data's guarantee is the largest row's.
Rows with the same *history* (the same set of runs) have the same spending, so the
ledger composes once per distinct history (:func:`histories`) and takes the largest
(:func:`worst_total`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from core.accounting.ledger_compose import LedgerTotal, compose_entries

__all__ = ["RowIndex", "histories", "worst_total"]


class RowIndex:
    """Row fingerprint -> row number, in order of first appearance."""

    def __init__(self, fingerprints: Sequence[str] = ()) -> None:
        self._ids: dict[str, int] = {}
        for f in fingerprints:
            self._ids.setdefault(str(f), len(self._ids))

    def __len__(self) -> int:
        return len(self._ids)

    @property
    def fingerprints(self) -> list[str]:
        """Every row's fingerprint, by row number."""
        return list(self._ids)

    def lookup(self, fingerprints: Sequence[str], *, add: bool) -> np.ndarray:
        """Row numbers of ``fingerprints`` (unique, sorted); new rows are numbered after the
        known ones (and remembered only with ``add=True``)."""
        out, new = [], {}
        for f in fingerprints:
            f = str(f)
            i = self._ids.get(f)
            if i is None:
                i = new.setdefault(f, len(self._ids) + len(new))
            out.append(i)
        if add:
            self._ids.update(new)
        return np.unique(np.asarray(out, dtype=np.int64))


def histories(entries: Sequence, entry_rows: Sequence, n_rows: int, only_rows: np.ndarray | None = None) -> list[list]:
    """The runs of each distinct row history: one list of entries per history.

    Parameters
    ----------
    entries : sequence of LedgerEntry
    entry_rows : sequence of (array of row numbers or None)
        The rows each entry touched; None: every row.
    n_rows : int
        Number of rows known (row numbers are below it).
    only_rows : array of int, optional
        Restrict to these rows' histories (a charge looks at the rows it touches).

    Returns
    -------
    list of list of LedgerEntry
        Each row's runs, one list per distinct history.  Every list holds the entries
        charged to every row.
    """
    common = [e for e, r in zip(entries, entry_rows) if r is None]
    per = [(e, r) for e, r in zip(entries, entry_rows) if r is not None]
    if not per or n_rows == 0:
        return [common]
    if only_rows is None:
        member = np.zeros((n_rows, len(per)), dtype=bool)
        for j, (_, r) in enumerate(per):
            member[r, j] = True
    else:  # only the rows asked about (a charge touches a few of many rows)
        only = np.asarray(only_rows, dtype=np.int64)
        member = np.zeros((only.size, len(per)), dtype=bool)
        for j, (_, r) in enumerate(per):
            member[:, j] = np.isin(only, r)
    if member.shape[0] == 0:
        return [common]
    out = []
    for sig in np.unique(member, axis=0):
        out.append(common + [per[j][0] for j in np.flatnonzero(sig)])
    return out


def worst_total(lists: list[list], *, delta: float | None = None) -> LedgerTotal:
    """The largest row's total: the compositions of every history, the largest ε and δ.

    Each history's composition is a valid (ε_h, δ_h) for its rows; ``(max ε_h, max δ_h)``
    is weaker than each, so it holds for every row (docs/design.md §13).
    """
    totals = [compose_entries(lst, delta=delta) for lst in lists]
    if len(totals) == 1:
        return totals[0]
    worst = max(totals, key=lambda t: (t.epsilon, t.delta))
    eps = max(t.epsilon for t in totals)
    d = max(t.delta for t in totals)
    detail = (f"{len(totals)} distinct row histories; the largest row's runs: " + worst.detail
              + (f" δ raised to {d:.3g}, the largest row's δ." if d > worst.delta else ""))
    return dataclasses.replace(worst, epsilon=float(eps), delta=float(d), method=worst.method + "+per-row",
                               detail=detail, parts=dict(worst.parts, n_histories=len(totals)))
