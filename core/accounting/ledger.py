"""Privacy ledger: one per private dataset, composing every run on it (docs/design.md §9).

Every labeling run on the same private data spends privacy budget, including runs that
are only looked at.  A :class:`PrivacyLedger` records each run's guarantee as a
*privacy map* and composes them into one (ε, δ) for the dataset; a budget can be set,
and a run whose a-priori privacy map would take the composition past it is refused
**before** it runs (:meth:`PrivacyLedger.charge` raises
:class:`core.errors.BudgetExhausted`).

Privacy maps (entry kinds)
--------------------------
:class:`PureDPEntry`
    Adaptive pure-DP steps ``((eps_step, n_steps), ...)`` (possibly of several sizes),
    a composition slack ``delta_composition`` (the δ at which this run's own guarantee
    converts its steps) and an additive ``delta_additive``.  BTT: ``T`` rounds of
    ``2/λ`` plus ``δ_release``; LNMax: ``m`` steps of ``2γ``; A_stab / the composition
    baseline: ``m`` steps of ``ε0`` plus ``m·δ0``.
:class:`RDPEntry`
    A Rényi curve ``(orders, rho)``, a conversion δ ``delta_conversion`` and an
    additive δ.  Gaussian mechanisms; a Rényi-filter run records its budget ``ρ*`` at
    its single order (``+inf`` elsewhere, see :meth:`RDPEntry.filter`).
:class:`ApproxDPEntry`
    An (ε, δ) only (e.g. a certified propose–test–release run).

Composition rules (:meth:`PrivacyLedger.total`)
-----------------------------------------------
Entries are split into three groups by kind; each group is composed as tightly as its
kind allows, then the groups by basic composition.

* **Pure group.**  All steps of all pure entries form one adaptive sequence of pure
  ε_j-DP steps.  Equal steps (one distinct ``eps_step``): the optimal composition in
  closed form (Kairouz–Oh–Viswanath, :func:`core.accounting.exact_composition_epsilon`);
  heterogeneous steps: the optimal composition computed by dp-accounting's
  privacy-loss distribution (PLD) with pessimistic discretization.  Either is taken only
  when smaller than basic composition ``Σ n_j ε_j`` (which needs no slack).  The
  group's δ is its slack (when used) plus the sum of the entries' additive δs.
* **RDP group.**  Curves are added order by order on the union of the entries'
  orders (an order an entry lacks is filled with its value at the next larger order
  it has, ``+inf`` if none: Rényi divergence is non-decreasing in the order), then
  converted with ``dp_accounting.rdp.rdp_privacy_accountant.compute_epsilon`` at the
  group's slack.  δ: slack plus additive δs.
* **Approximate group.**  Basic composition: ``Σ ε_i``, ``Σ δ_i``.
* **Groups.**  Basic composition of the groups' (ε, δ).  δ is capped at 1.

δ split rule
    ``total()`` (no δ given): every entry keeps its own δ target; a group's slack is
    the **sum** of its entries' slacks (``delta_composition`` / ``delta_conversion``).
    A ledger holding one run therefore reproduces that run's own guarantee (or a
    smaller ε where the ledger's composition is tighter).  Since the summed slack is
    larger than any one run's, the composed ε can come out below a single run's own ε
    (at a larger δ); the total's ε is then raised to the largest single-run ε, so the
    total is never below any run it contains in either coordinate (valid: a larger ε
    at the same δ is a weaker guarantee).  ``total(delta=δ)``: the
    additive δs and the approximate entries' δs are taken off δ first; what remains is
    split **equally** between the non-empty pure and RDP groups and used as their
    slack, so the returned δ is at most the δ asked for.

Why the composition is valid (proof sketch)
-------------------------------------------
1. An (ε0, δ0)-DP step (in particular a pure step with an additive δ) composes like a
   pure ε0-DP step plus δ0: the optimal adaptive composition of (ε_j, δ_j)-DP steps is
   ``(ε, 1 − (1 − δ_pure(ε)) Π(1 − δ_j))`` ≤ ``(ε, δ_pure(ε) + Σ δ_j)``, where
   ``δ_pure(ε)`` is the optimal composition of the pure ε_j-DP steps, whose worst case
   is (a product of) randomized responses (Kairouz–Oh–Viswanath 2015, Thm 3.3 for
   equal steps; Murtagh–Vadhan 2016 for heterogeneous ones).  dp-accounting's PLD of
   randomized response, composed with pessimistic discretization, upper-bounds
   ``δ_pure``; the closed form computes it exactly.  BTT's δ_release is the probability
   of the only event on which a run's output is not a post-processing of its pure
   sparse-vector rounds, and composes the same way (union bound over the runs' bad
   events).
2. RDP composes additively order by order under adaptive composition (Mironov 2017,
   Prop. 1), and ``compute_epsilon`` is a valid RDP → (ε, δ) conversion (Balle et al.
   2020, Prop. 12).  Rényi divergence is non-decreasing in the order, which justifies
   the monotone fill of missing orders.
3. The three groups are composed by basic composition, ``(Σ ε_g, Σ δ_g)`` (Dwork–Roth
   2014, Thm 3.16).  Runs of different groups interleave in time (a pure run, then an
   RDP run, then a pure run chosen after seeing both): each group is then one
   interactive mechanism whose queries may depend on the other groups' outputs, and the
   concurrent-composition theorems (Vadhan–Wang 2021 for (ε, δ)-DP; Lyu 2022 and
   Vadhan–Zhang 2023 for RDP and f-DP) show that each group's bound still holds against
   such adaptivity and that the groups' (ε, δ) guarantees add.
4. Any slack δ gives a valid (ε(δ), δ) for a group, so the choice of slack (the sum
   rule, the equal split) is a parametrization, not an assumption; raising ε at a
   fixed δ (the floor) only weakens a valid guarantee.

The budget check accepts a run when some valid composition including it (the own-δ
total, or the total at the budget's δ) is within the budget up to a relative rounding
tolerance of 1e-9 (a run calibrated to spend exactly the rest of the budget is
accepted).

Persistence
-----------
JSON, strict (no NaN / Infinity: an infinite Rényi value is written as ``null``).  A
ledger file holds several ledgers keyed by dataset fingerprint::

    {"format": "private-label-lab-ledger", "version": 1,
     "ledgers": {"<fingerprint>": {"fingerprint": ..., "budget": {...} | null,
                                   "entries": [...]}}}

The file holds no private value: fingerprints, public parameters and guarantees only
(:func:`entry_from_result` drops any parameter whose name says it is data-dependent).

References
----------
.. [KOV15] P. Kairouz, S. Oh, P. Viswanath, "The composition theorem for differential
   privacy", ICML 2015.
.. [MV16] J. Murtagh, S. Vadhan, "The complexity of computing the optimal composition
   of differential privacy", TCC 2016.
.. [M17] I. Mironov, "Rényi differential privacy", CSF 2017.
.. [BBGHS20] B. Balle, G. Barthe, M. Gaboardi, J. Hsu, T. Sato, "Hypothesis testing
   interpretations and Rényi differential privacy", AISTATS 2020.
.. [PS22] N. Papernot, T. Steinke, "Hyperparameter tuning with Rényi differential
   privacy", ICLR 2022.
.. [DR14] C. Dwork, A. Roth, "The algorithmic foundations of differential privacy",
   2014 (basic composition, Thm 3.16).
.. [VW21] S. Vadhan, T. Wang, "Concurrent composition of differential privacy", TCC 2021.
.. [L22] X. Lyu, "Composition theorems for interactive differential privacy",
   NeurIPS 2022.
.. [VZ23] S. Vadhan, W. Zhang, "Concurrent composition theorems for differential
   privacy", STOC 2023.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import json
import math
import os
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from core import accounting
from core.accounting.guarantee import PrivacyGuarantee
from core.errors import BudgetExhausted, DataError, ParameterError

__all__ = [
    "BUDGET_TOLERANCE",
    "FILE_FORMAT",
    "FILE_VERSION",
    "ApproxDPEntry",
    "Budget",
    "GroupTotal",
    "LedgerEntry",
    "LedgerTotal",
    "PrivacyLedger",
    "PureDPEntry",
    "RDPEntry",
    "append_to_file",
    "compose_entries",
    "dataset_fingerprint",
    "entry_from_dict",
    "entry_from_result",
    "forget_ledgers",
    "ledger_for",
    "load",
    "load_ledgers",
    "planned_entry",
    "pure_dp_rdp",
    "register_privacy_map",
    "repeat_and_select",
]

FILE_FORMAT = "private-label-lab-ledger"
FILE_VERSION = 1
BUDGET_TOLERANCE = 1e-9
"""Relative rounding tolerance of the budget check."""

_PLD_DISCRETIZATION = 1e-4
_FINGERPRINT_VERSION = b"private-label-lab/fingerprint/v1"


# ---------------------------------------------------------------------------
# Dataset fingerprint
# ---------------------------------------------------------------------------

def _canonical_array_bytes(name: str, value: Any) -> bytes:
    """Canonical serialisation of one array: name, kind, shape, then the values.

    Numbers are written as little-endian float64 (bool and integers included, so an
    int array and the equal float array serialise alike; -0.0 is written as 0.0 and
    every NaN as the one canonical NaN); anything else (strings, mixed objects) as the
    UTF-8 ``str`` of each element, length-prefixed.
    """
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        return b"".join([name.encode(), b"\x00bytes\x00", len(raw).to_bytes(8, "little"), raw])
    if hasattr(value, "to_numpy"):  # pandas objects
        value = value.to_numpy()
    arr = np.asarray(value)
    shape = ",".join(str(int(s)) for s in arr.shape).encode()
    if arr.dtype.kind in "biuf":
        vals = arr.astype("<f8", copy=True).ravel(order="C")
        vals += 0.0  # -0.0 → 0.0
        vals[np.isnan(vals)] = np.nan
        payload = b"num\x00" + vals.tobytes()
    else:
        parts = []
        for x in arr.ravel(order="C").tolist():
            s = str(x).encode("utf-8")
            parts.append(len(s).to_bytes(8, "little") + s)
        payload = b"str\x00" + b"".join(parts)
    return b"".join([name.encode(), b"\x00", shape, b"\x00", len(payload).to_bytes(8, "little"), payload])


def dataset_fingerprint(features: Any = None, labels: Any = None, *, data: bytes | None = None, key: bytes | None = None) -> str:
    """Fingerprint of a private dataset: the key of its ledger.

    SHA-256 (or HMAC-SHA-256 when ``key`` is given) over a canonical serialisation of
    the private features and labels (and/or raw bytes, e.g. the uploaded file):

    ``b"private-label-lab/fingerprint/v1"``, then for each part present, in the order
    ``features``, ``labels``, ``data``: its name, its shape, and its values — numbers as
    little-endian float64 in C order (-0.0 as 0.0, one canonical NaN), anything else as
    the length-prefixed UTF-8 ``str`` of each element; raw bytes as they are.

    Equal data give equal fingerprints; different data give different ones (up to
    SHA-256 collisions).  The hash reveals nothing about the data beyond equality, with
    one caveat: someone who can guess the *entire* dataset can confirm the guess by
    hashing it.  Pass a secret ``key`` (kept with the ledger's owner) to rule that out.

    Parameters
    ----------
    features, labels : array-like, optional
        The private table's features and labels (NumPy arrays, pandas objects, lists).
    data : bytes, optional
        Raw bytes of the private data (e.g. the CSV file as uploaded).
    key : bytes, optional
        Secret key for HMAC-SHA-256.

    Returns
    -------
    str
        ``"sha256:<64 hex digits>"`` (``"hmac-sha256:..."`` with a key).

    Raises
    ------
    DataError
        When nothing is given.
    """
    if features is None and labels is None and data is None:
        raise DataError("dataset_fingerprint needs the private features, labels or raw bytes; none was given.")
    h = hmac.new(bytes(key), digestmod=hashlib.sha256) if key is not None else hashlib.sha256()
    h.update(_FINGERPRINT_VERSION)
    for name, value in (("features", features), ("labels", labels), ("data", data)):
        if value is not None:
            h.update(_canonical_array_bytes(name, value))
    return ("hmac-sha256:" if key is not None else "sha256:") + h.hexdigest()


# ---------------------------------------------------------------------------
# Entries (privacy maps)
# ---------------------------------------------------------------------------

def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _nonneg(value: Any, name: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number, got {value!r}.") from None
    if not (math.isfinite(v) and v >= 0.0):
        raise ParameterError(f"{name} must be a finite number >= 0, got {value!r}.")
    return v


def _delta_value(value: Any, name: str) -> float:
    v = _nonneg(value, name)
    if v > 1.0:
        raise ParameterError(f"{name} must lie between 0 and 1, got {value!r}.")
    return v


def _public_params(params: Mapping[str, Any] | None) -> dict[str, Any]:
    """JSON-safe public parameters: scalars only; data-dependent values dropped."""
    out: dict[str, Any] = {}
    for k, v in (params or {}).items():
        k = str(k)
        if "data_dependent" in k:
            continue
        if isinstance(v, np.generic):
            v = v.item()
        if v is None or isinstance(v, (bool, int, str)) or isinstance(v, float) and math.isfinite(v):
            out[k] = v
    return out


@dataclass(frozen=True, kw_only=True)
class _EntryBase:
    mechanism: str = "custom"
    description: str = ""
    params: dict = field(default_factory=dict)
    timestamp: str = field(default_factory=_now)

    kind: ClassVar[str] = ""

    def _base_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "mechanism": self.mechanism, "description": self.description,
                "params": _public_params(self.params), "timestamp": self.timestamp}

    def guarantee(self) -> PrivacyGuarantee:
        """This run's own guarantee (the ledger's total when it holds this run only)."""
        return compose_entries([self])


@dataclass(frozen=True, kw_only=True)
class PureDPEntry(_EntryBase):
    """A run made of adaptive pure-DP steps, plus an additive δ.

    Parameters (keyword-only)
    -------------------------
    steps : sequence of (eps_step, n_steps)
        The run's pure steps, e.g. ``((2/λ, T),)`` for BTT; several sizes allowed.
    delta_composition : float
        Slack δ at which this run's own guarantee converts its steps (0: basic
        composition only).  In a ledger, a group's slack is the sum of its entries'.
    delta_additive : float
        δ added on top (BTT's ``δ_release``; ``m·δ0`` for A_stab answers).
    mechanism, description, params, timestamp
        Name, one sentence, public parameters, ISO-8601 UTC time.
    """

    steps: tuple = ()
    delta_composition: float = 0.0
    delta_additive: float = 0.0

    kind: ClassVar[str] = "pure"

    def __post_init__(self) -> None:
        steps = []
        for pair in self.steps:
            try:
                e, n = pair
            except (TypeError, ValueError):
                raise ParameterError(f"each pure-DP step must be a pair (eps_step, n_steps), got {pair!r}.") from None
            e = _nonneg(e, "eps_step")
            if isinstance(n, float) and not n.is_integer() or int(n) < 0:
                raise ParameterError(f"n_steps must be a whole number >= 0, got {n!r}.")
            if e > 0 and int(n) > 0:
                steps.append((e, int(n)))
        object.__setattr__(self, "steps", tuple(steps))
        object.__setattr__(self, "delta_composition", _delta_value(self.delta_composition, "delta_composition"))
        object.__setattr__(self, "delta_additive", _delta_value(self.delta_additive, "delta_additive"))
        object.__setattr__(self, "params", dict(self.params))

    @classmethod
    def uniform(cls, *, eps_step: float, n_steps: int, delta_composition: float = 0.0, delta_additive: float = 0.0, **kw: Any) -> PureDPEntry:
        """``n_steps`` pure ``eps_step``-DP steps (one size)."""
        return cls(steps=((eps_step, n_steps),), delta_composition=delta_composition, delta_additive=delta_additive, **kw)

    @property
    def basic_epsilon(self) -> float:
        """Basic composition of the steps, ``Σ n·eps_step``."""
        return float(math.fsum(e * n for e, n in self.steps))

    def to_dict(self) -> dict[str, Any]:
        d = self._base_dict()
        d.update(steps=[[e, n] for e, n in self.steps], delta_composition=self.delta_composition,
                 delta_additive=self.delta_additive)
        return d


def _fill_monotone(orders: np.ndarray, rho: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """ρ on ``grid``: at each order the value at the smallest order ≥ it (inf if none)."""
    out = np.full(grid.shape, np.inf)
    # suffix minimum of rho over orders sorted ascending
    idx = np.argsort(orders)
    o, r = orders[idx], rho[idx]
    suffix = np.minimum.accumulate(r[::-1])[::-1]
    pos = np.searchsorted(o, grid, side="left")
    ok = pos < o.size
    out[ok] = suffix[pos[ok]]
    return out


@dataclass(frozen=True, kw_only=True)
class RDPEntry(_EntryBase):
    """A run with a Rényi-DP curve, plus an additive δ.

    Parameters (keyword-only)
    -------------------------
    orders : sequence of float
        Rényi orders α > 1.
    rho : sequence of float
        ρ(α) ≥ 0 at those orders; ``inf`` allowed (no bound at that order).
    delta_conversion : float
        δ at which this run's own guarantee converts its curve, in (0, 1).
    delta_additive : float
        δ added on top.
    mechanism, description, params, timestamp
        As for :class:`PureDPEntry`.
    """

    orders: tuple = ()
    rho: tuple = ()
    delta_conversion: float = 1e-6
    delta_additive: float = 0.0

    kind: ClassVar[str] = "rdp"

    def __post_init__(self) -> None:
        orders = np.asarray(self.orders, dtype=float).ravel()
        rho = np.asarray([np.inf if r is None else r for r in np.asarray(self.rho, dtype=object).ravel()], dtype=float)
        if orders.size == 0 or orders.size != rho.size:
            raise ParameterError(f"an RDP curve needs as many ρ values as orders (at least one), got {orders.size} orders and {rho.size} values.")
        if not np.all(np.isfinite(orders)) or np.any(orders <= 1.0):
            raise ParameterError("Rényi orders must be finite numbers greater than 1.")
        if np.any(np.isnan(rho)) or np.any(rho < 0):
            raise ParameterError("ρ values must be numbers >= 0 (inf allowed).")
        if np.unique(orders).size != orders.size:
            raise ParameterError("Rényi orders must be distinct.")
        idx = np.argsort(orders)
        object.__setattr__(self, "orders", tuple(float(x) for x in orders[idx]))
        object.__setattr__(self, "rho", tuple(float(x) for x in rho[idx]))
        dc = _delta_value(self.delta_conversion, "delta_conversion")
        if not 0.0 < dc < 1.0:
            raise ParameterError(f"delta_conversion must lie strictly between 0 and 1, got {self.delta_conversion!r}.")
        object.__setattr__(self, "delta_conversion", dc)
        object.__setattr__(self, "delta_additive", _delta_value(self.delta_additive, "delta_additive"))
        object.__setattr__(self, "params", dict(self.params))

    @classmethod
    def filter(cls, *, order: float, rho_budget: float, delta_conversion: float, delta_additive: float = 0.0, **kw: Any) -> RDPEntry:
        """A Rényi-filter run (Feldman–Zrnic 2021): its budget ``ρ*`` at one order.

        The curve is ``ρ*`` at ``order`` and ``+inf`` elsewhere; in a ledger the orders
        below ``order`` get ``ρ*`` too (monotonicity of the Rényi divergence).
        """
        return cls(orders=(order,), rho=(rho_budget,), delta_conversion=delta_conversion, delta_additive=delta_additive, **kw)

    def curve(self, grid: Sequence[float]) -> np.ndarray:
        """ρ at the orders of ``grid`` (monotone fill, ``inf`` above the largest order)."""
        return _fill_monotone(np.asarray(self.orders), np.asarray(self.rho), np.asarray(grid, dtype=float))

    def to_dict(self) -> dict[str, Any]:
        d = self._base_dict()
        d.update(orders=list(self.orders), rho=[r if math.isfinite(r) else None for r in self.rho],
                 delta_conversion=self.delta_conversion, delta_additive=self.delta_additive)
        return d


@dataclass(frozen=True, kw_only=True)
class ApproxDPEntry(_EntryBase):
    """A run known only by its (ε, δ) guarantee (e.g. certified propose–test–release).

    Parameters (keyword-only)
    -------------------------
    epsilon : float
        ≥ 0.
    delta : float
        In [0, 1].
    mechanism, description, params, timestamp
        As for :class:`PureDPEntry`.
    """

    epsilon: float = 0.0
    delta: float = 0.0

    kind: ClassVar[str] = "approx"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _nonneg(self.epsilon, "epsilon"))
        object.__setattr__(self, "delta", _delta_value(self.delta, "delta"))
        object.__setattr__(self, "params", dict(self.params))

    def to_dict(self) -> dict[str, Any]:
        d = self._base_dict()
        d.update(epsilon=self.epsilon, delta=self.delta)
        return d


LedgerEntry = PureDPEntry | RDPEntry | ApproxDPEntry
"""Any of the three privacy maps."""

_KINDS: dict[str, type] = {"pure": PureDPEntry, "rdp": RDPEntry, "approx": ApproxDPEntry}


def entry_from_dict(d: Mapping[str, Any]) -> LedgerEntry:
    """Rebuild an entry from :meth:`to_dict` output (JSON)."""
    kind = d.get("kind") if isinstance(d, Mapping) else None
    if kind not in _KINDS:
        raise DataError(f"a ledger entry must be an object with a kind among {sorted(_KINDS)}, got kind {kind!r}.")
    common = {k: d[k] for k in ("mechanism", "description", "params", "timestamp") if k in d}
    if kind == "pure":
        return PureDPEntry(steps=tuple(tuple(s) for s in d.get("steps", ())), delta_composition=d.get("delta_composition", 0.0),
                           delta_additive=d.get("delta_additive", 0.0), **common)
    if kind == "rdp":
        return RDPEntry(orders=tuple(d["orders"]), rho=tuple(d["rho"]), delta_conversion=d["delta_conversion"],
                        delta_additive=d.get("delta_additive", 0.0), **common)
    return ApproxDPEntry(epsilon=d["epsilon"], delta=d["delta"], **common)


# ---------------------------------------------------------------------------
# Composition
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class GroupTotal:
    """One group's composed guarantee in a :class:`LedgerTotal` breakdown.

    Attributes
    ----------
    kind : {"pure", "rdp", "approx"}
    n_entries : int
    epsilon, delta : float
    slack : float
        δ used by the composition/conversion (0 for basic composition).
    delta_additive : float
        Sum of the entries' additive δs (the approximate entries' δs for ``approx``).
    method : str
        ``"basic"``, ``"kov-exact"``, ``"pld"``, ``"rdp"``.
    order : float or None
        RDP group: the order at which the conversion was optimal.
    """

    kind: str
    n_entries: int
    epsilon: float
    delta: float
    slack: float
    delta_additive: float
    method: str
    order: float | None = None


@dataclass(frozen=True)
class LedgerTotal(PrivacyGuarantee):
    """The ledger's composed (ε, δ), with a breakdown by group (``groups``)."""

    groups: tuple = ()
    n_entries: int = 0


@functools.lru_cache(maxsize=256)
def _pld_epsilon(steps: tuple, delta: float) -> float:
    """Optimal composition of heterogeneous pure steps by dp-accounting's PLD (pessimistic)."""
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    basic = math.fsum(e * n for e, n in steps)
    interval = max(_PLD_DISCRETIZATION, basic / 2e5)
    total = None
    for e, n in steps:
        p = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(e, 0.0),
                                        value_discretization_interval=interval).self_compose(n)
        total = p if total is None else total.compose(p)
    return float(total.get_epsilon_for_delta(delta))


def _compose_pure(entries: list, slack: float) -> GroupTotal:
    counter: Counter = Counter()
    for e in entries:
        for eps, n in e.steps:
            counter[eps] += n
    steps = tuple(sorted(counter.items()))
    additive = math.fsum(e.delta_additive for e in entries)
    basic = math.fsum(eps * n for eps, n in steps)
    eps, method, used = basic, "basic", 0.0
    if steps and 0.0 < slack < 1.0:
        if len(steps) == 1:
            opt, how = accounting.exact_composition_epsilon(steps[0][0], steps[0][1], slack), "kov-exact"
        else:
            opt, how = _pld_epsilon(steps, slack), "pld"
        if opt < basic:
            eps, method, used = opt, how, slack
    return GroupTotal("pure", len(entries), float(eps), min(1.0, used + additive), used, additive, method)


def _compose_rdp(entries: list, slack: float) -> GroupTotal:
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    grid = np.unique(np.concatenate([np.asarray(e.orders) for e in entries]))
    rho = np.zeros_like(grid)
    for e in entries:
        rho = rho + e.curve(grid)
    additive = math.fsum(e.delta_additive for e in entries)
    if not 0.0 < slack < 1.0:
        raise ParameterError(f"the RDP runs need a conversion δ strictly between 0 and 1, got {slack!r}.")
    eps, order = rdp.compute_epsilon(grid, rho, slack)
    return GroupTotal("rdp", len(entries), float(eps), min(1.0, slack + additive), slack, additive, "rdp", float(order))


def _compose_approx(entries: list) -> GroupTotal:
    eps = math.fsum(e.epsilon for e in entries)
    d = math.fsum(e.delta for e in entries)
    return GroupTotal("approx", len(entries), eps, min(1.0, d), 0.0, d, "basic")


def compose_entries(entries: Iterable[LedgerEntry], *, delta: float | None = None) -> LedgerTotal:
    """Compose privacy maps (the rules of the module docstring; docs/design.md §9).

    Parameters
    ----------
    entries : iterable of PureDPEntry, RDPEntry or ApproxDPEntry
    delta : float, optional
        Total δ target.  None: every entry keeps its own δ target (a group's slack is
        the sum of its entries').  Given: the additive and approximate δs are taken off
        first and the rest is split equally between the non-empty pure and RDP groups.

    Returns
    -------
    LedgerTotal
        ε, δ, ``method`` (the groups' methods), ``detail`` (one sentence), ``parts``
        (ε and δ by group) and ``groups`` (:class:`GroupTotal` each).

    Raises
    ------
    ParameterError
        When ``delta`` leaves no slack for the groups that need one.
    """
    entries = list(entries)
    for e in entries:
        if not isinstance(e, (PureDPEntry, RDPEntry, ApproxDPEntry)):
            raise ParameterError(f"a ledger entry must be a PureDPEntry, RDPEntry or ApproxDPEntry, got {type(e).__name__}.")
    pure = [e for e in entries if isinstance(e, PureDPEntry)]
    rdp_ = [e for e in entries if isinstance(e, RDPEntry)]
    approx = [e for e in entries if isinstance(e, ApproxDPEntry)]
    if delta is None:
        slack_pure = math.fsum(e.delta_composition for e in pure)
        slack_rdp = math.fsum(e.delta_conversion for e in rdp_)
    else:
        delta = _delta_value(delta, "delta")
        fixed = math.fsum(e.delta_additive for e in pure + rdp_) + math.fsum(e.delta for e in approx)
        needy = int(any(e.steps for e in pure)) + int(bool(rdp_))
        rest = delta - fixed
        if needy and rest <= 0:
            raise ParameterError(
                f"δ = {delta:.3g} leaves no slack for composition: the runs' additive and (ε, δ) terms "
                f"already sum to {fixed:.3g}; ask for a larger δ.")
        share = rest / needy if needy else 0.0
        slack_pure = slack_rdp = share
    groups = []
    if pure:
        groups.append(_compose_pure(pure, slack_pure))
    if rdp_:
        groups.append(_compose_rdp(rdp_, slack_rdp))
    if approx:
        groups.append(_compose_approx(approx))
    eps = math.fsum(g.epsilon for g in groups)
    d = min(1.0, math.fsum(g.delta for g in groups))
    method = "+".join(f"{g.kind}:{g.method}" for g in groups) or "empty"
    floor = 0.0
    if delta is None and len(entries) > 1:
        # Summing slacks can make the composition cheaper in ε than one run at its own
        # (smaller) δ; floor ε there so the total never reads below a run it contains.
        # Valid: a larger ε at the same δ is a weaker statement.
        floor = max(compose_entries([e]).epsilon for e in entries)
        if floor > eps:
            eps, method = floor, method + "+floor"
    words = {"basic": "basic composition", "kov-exact": "optimal composition (Kairouz–Oh–Viswanath closed form)",
             "pld": "optimal composition (dp-accounting PLD)", "rdp": "RDP added order by order, converted by dp-accounting"}
    pieces = [f"{g.n_entries} {g.kind} run{'s' if g.n_entries != 1 else ''}: ({g.epsilon:.4g}, {g.delta:.3g}) by {words[g.method]}"
              for g in groups]
    detail = ("No run recorded." if not groups else
              "; ".join(pieces) + (". Groups composed by basic composition." if len(groups) > 1 else "."))
    parts = {f"{g.kind}_epsilon": g.epsilon for g in groups}
    if method.endswith("+floor"):
        parts["epsilon_floor"] = floor
        detail += f" ε raised to {floor:.4g}, the largest single run's own ε (the summed slack made the composition smaller)."
    parts.update({f"{g.kind}_delta": g.delta for g in groups})
    return LedgerTotal(epsilon=float(eps), delta=float(d), method=method, detail=detail, parts=parts,
                       groups=tuple(groups), n_entries=len(entries))


# ---------------------------------------------------------------------------
# Privacy maps of the library's mechanisms
# ---------------------------------------------------------------------------

_PRIVACY_MAPS: dict[str, Callable[[Any], LedgerEntry]] = {}
_MAPS_LOCK = threading.Lock()


def register_privacy_map(mechanism: str, fn: Callable[[Any], LedgerEntry]) -> None:
    """Register ``fn(result) -> entry`` as the privacy map of ``mechanism``.

    :func:`entry_from_result` consults this registry before its built-in maps, so a new
    mechanism (or a tighter analysis of an old one) plugs in without editing this module.
    """
    if not callable(fn):
        raise ParameterError("a privacy map must be callable: result -> ledger entry.")
    with _MAPS_LOCK:
        _PRIVACY_MAPS[str(mechanism)] = fn


def _btt_entry(result: Any) -> PureDPEntry:
    p = result.params
    rounds = int(p["rounds"])
    eps_step = float(accounting.svt_round_epsilon(float(p["noise_scale"])))
    return PureDPEntry.uniform(
        eps_step=eps_step, n_steps=rounds, delta_composition=float(p["delta_svt"]), delta_additive=float(p["delta_release"]),
        mechanism=result.mechanism, params=_public_params(p),
        description=(f"{result.mechanism}: {rounds} sparse-vector rounds, each pure {eps_step:.4g}-DP (λ = {p['noise_scale']:.4g}), "
                     f"plus δ_release = {float(p['delta_release']):.3g}."))


def _lnmax_entry(result: Any) -> PureDPEntry:
    p = result.params
    gamma, m = float(p["gamma"]), int(p["m"])
    return PureDPEntry.uniform(
        eps_step=2.0 * gamma, n_steps=m, delta_composition=float(p["delta_target"] if "delta_target" in p else result.delta),  # noqa: SIM401 - .get would read result.delta eagerly
        mechanism=result.mechanism, params=_public_params(p),
        description=f"lnmax: {m} noisy-max answers, each pure 2γ = {2 * gamma:.4g}-DP.")


def _a_stab_entry(result: Any) -> PureDPEntry:
    p = result.params
    m = int(p["m"])
    if result.mechanism == "a-stab":
        eps0, delta0, slack = float(p["epsilon_per_query"]), float(p["delta_per_query"]), 0.0
    else:
        eps0, delta0, slack = float(p["eps0"]), float(p["delta0"]), float(p.get("delta_prime", 0.0))
    return PureDPEntry.uniform(
        eps_step=eps0, n_steps=m, delta_composition=slack, delta_additive=min(1.0, m * delta0),
        mechanism=result.mechanism, params=_public_params(p),
        description=f"{result.mechanism}: {m} A_stab answers, each ({eps0:.4g}, {delta0:.3g})-DP (pure ε0 plus additive δ0).")


_BUILTIN_MAPS: dict[str, Callable[[Any], LedgerEntry]] = {
    "btt": _btt_entry,
    "btt-soft": _btt_entry,
    "lnmax": _lnmax_entry,
    "a-stab": _a_stab_entry,
    "baseline": _a_stab_entry,
}


def entry_from_result(result: Any) -> LedgerEntry:
    """The ledger entry (privacy map) of a :class:`core.aggregators.LabelingResult`.

    * ``"btt"``, ``"btt-soft"``: ``rounds`` pure ``2/λ``-DP steps at slack
      ``delta_svt``, plus ``delta_release``;
    * ``"lnmax"``: ``m`` pure ``2γ``-DP steps at slack ``delta_target``;
    * ``"a-stab"``: ``m`` pure ``ε``-steps plus ``m·δ`` (basic composition);
      ``"baseline"``: ``m`` pure ``ε0``-steps at slack ``δ'`` plus ``m·δ0``;
    * a mechanism registered with :func:`register_privacy_map`: its own map (checked
      first);
    * anything else: :class:`ApproxDPEntry` with the result's (ε, δ).

    A ledger holding only this entry reports the result's own (ε, δ), or a smaller ε
    where its composition is tighter (the baseline's advanced composition and PATE's
    bound are replaced by the optimal composition).  Public parameters only: keys with
    ``data_dependent`` in their name are dropped, and the result's
    ``epsilon_data_dependent`` is never read.
    """
    mech = str(getattr(result, "mechanism", "custom"))
    with _MAPS_LOCK:
        fn = _PRIVACY_MAPS.get(mech)
    if fn is None:
        fn = _BUILTIN_MAPS.get(mech)
    if fn is not None:
        try:
            return fn(result)
        except KeyError as exc:
            raise ParameterError(f"the {mech} result lacks the parameter {exc.args[0]!r} its privacy map needs.") from None
    return ApproxDPEntry(epsilon=float(result.epsilon), delta=float(result.delta), mechanism=mech,
                         params=_public_params(getattr(result, "params", {})),
                         description=f"{mech}: an ({float(result.epsilon):.4g}, {float(result.delta):.3g})-DP run.")


def planned_entry(mechanism: str, *, epsilon: float | None = None, delta: float, m: int, T: int | None = None,
                  calibration: str = "paper", gamma: float | None = None) -> LedgerEntry:
    """The a-priori privacy map of a built-in mechanism's run, before it runs.

    The library's guarantees are data-independent, so the map of a planned run follows
    from its public parameters alone (the same numbers :func:`entry_from_result` reads
    from the result afterwards).  Pass it to :meth:`PrivacyLedger.charge` before the run.

    Parameters
    ----------
    mechanism : {"btt", "btt-soft", "lnmax", "baseline", "a-stab"}
    epsilon, delta : float
        The run's target (for ``"a-stab"``: per query; ``"lnmax"`` takes ``gamma``
        instead of ``epsilon``).
    m : int
        Number of queries.
    T : int, optional
        BTT's cutoff.
    calibration : {"paper", "tight"}
        BTT's calibration.
    gamma : float, optional
        LNMax's noise parameter.
    """
    from types import SimpleNamespace

    if mechanism in ("btt", "btt-soft"):
        if T is None or epsilon is None:
            raise ParameterError("a planned BTT run needs epsilon and T.")
        cal = accounting.calibrate_btt(epsilon, delta, T, m, calibration, soft=mechanism == "btt-soft")
        params = {"epsilon_target": epsilon, "delta_target": delta, "T": T, "m": m, "calibration": calibration,
                  "noise_scale": cal.noise_scale, "threshold": cal.threshold, "rounds": cal.rounds, "tests": cal.tests,
                  "epsilon_svt": cal.guarantee.parts["epsilon_svt"], "delta_svt": cal.guarantee.parts["delta_svt"],
                  "delta_release": cal.guarantee.parts["delta_release"]}
        return _btt_entry(SimpleNamespace(mechanism=mechanism, params=params))
    if mechanism == "lnmax":
        if gamma is None:
            raise ParameterError("a planned LNMax run needs gamma (see core.accounting.lnmax_gamma_for_epsilon).")
        return _lnmax_entry(SimpleNamespace(mechanism=mechanism, params={"gamma": gamma, "m": m, "delta_target": delta}))
    if mechanism == "baseline":
        if epsilon is None:
            raise ParameterError("a planned baseline run needs epsilon.")
        par = accounting.composition_baseline_parameters(epsilon, delta, m)
        params = {"epsilon_target": epsilon, "delta_target": delta, "m": m, "eps0": par.eps0, "delta0": par.delta0,
                  "delta_prime": par.delta_prime}
        return _a_stab_entry(SimpleNamespace(mechanism=mechanism, params=params))
    if mechanism == "a-stab":
        if epsilon is None:
            raise ParameterError("a planned A_stab run needs epsilon (per query).")
        return _a_stab_entry(SimpleNamespace(mechanism=mechanism, params={"epsilon_per_query": epsilon, "delta_per_query": delta, "m": m}))
    raise ParameterError(f"no built-in a-priori privacy map for {mechanism!r}; build a PureDPEntry, RDPEntry or ApproxDPEntry.")


# ---------------------------------------------------------------------------
# Repeat and select (Papernot–Steinke 2022)
# ---------------------------------------------------------------------------

def _rr_rdp(eps: float, orders: np.ndarray) -> np.ndarray:
    """RDP of binary randomized response at ε: the worst case of any pure ε-DP step."""
    log_p = eps - np.logaddexp(0.0, eps)
    log_q = -np.logaddexp(0.0, eps)
    a = orders
    return np.logaddexp(a * log_p + (1 - a) * log_q, a * log_q + (1 - a) * log_p) / (a - 1)


def pure_dp_rdp(steps: Sequence[tuple[float, int]], orders: Sequence[float]) -> np.ndarray:
    """RDP curve of adaptive pure-DP steps: the sum of randomized response's curves.

    Any ε-DP pair of output distributions is a post-processing of binary randomized
    response at ε (Kairouz–Oh–Viswanath 2015), so by data processing its Rényi
    divergence at every order is at most randomized response's; RDP then composes
    additively (Mironov 2017).
    """
    orders = np.asarray(orders, dtype=float)
    out = np.zeros_like(orders)
    for e, n in steps:
        out += n * _rr_rdp(float(e), orders)
    return out


def repeat_and_select(entry: PureDPEntry | RDPEntry, *, mean: float, shape: float = 1.0, orders: Sequence[float] | None = None,
                      delta_conversion: float | None = None, description: str = "") -> RDPEntry:
    """Privacy map of "run a setting a random number of times, keep the best".

    Papernot and Steinke (2022) bound the RDP of running a mechanism ``K`` times with
    independent randomness, ``K`` drawn from a truncated negative binomial (``shape``
    0 < s < ∞; geometric ``shape=1``; logarithmic ``shape=0``) or Poisson
    (``shape=inf``) distribution of mean ``mean``, and releasing only the best run.
    Each candidate setting is one run of ``entry``'s privacy map; to tune over several
    settings, let each repetition pick a setting at random (a mixture of runs, whose
    map the caller bounds by the largest one).  The number of repetitions must really be
    drawn from that distribution.

    Computed by dp-accounting (the RDP accountant's treatment of
    ``RepeatAndSelectDpEvent``) from the inner run's RDP curve: ``entry``'s own curve,
    or for pure-DP steps the randomized-response curve of :func:`pure_dp_rdp`.

    Parameters
    ----------
    entry : PureDPEntry or RDPEntry
        One run's privacy map; it must have no additive δ (the theorem is for RDP).
    mean : float
        Mean number of repetitions, ≥ 1.
    shape : float
        Distribution of the number of repetitions (see above).
    orders : sequence of float, optional
        Orders for a pure-DP inner run (default: dp-accounting's default grid).
    delta_conversion : float, optional
        The new entry's δ target (default: the inner entry's, for pure steps its
        ``delta_composition`` or 1e-6 when that is 0).

    Returns
    -------
    RDPEntry
        Record it like any run.

    References
    ----------
    N. Papernot, T. Steinke, "Hyperparameter tuning with Rényi differential privacy",
    ICLR 2022 (Theorems 2 and 6).
    """
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    mean = float(mean)
    shape = float(shape)
    if not (math.isfinite(mean) and mean >= 1.0):
        raise ParameterError(f"mean number of repetitions must be at least 1, got {mean!r}.")
    if math.isnan(shape) or shape < 0:
        raise ParameterError(f"shape must be >= 0 (inf for Poisson), got {shape!r}.")
    if isinstance(entry, PureDPEntry):
        if entry.delta_additive > 0:
            raise ParameterError("repeat-and-select is accounted in RDP and needs a run without an additive δ; "
                                 "record each repetition as its own run instead.")
        grid = np.asarray(orders if orders is not None else rdp.DEFAULT_RDP_ORDERS, dtype=float)
        grid = grid[grid > 1.0]
        inner = pure_dp_rdp(entry.steps, grid)
        dc = delta_conversion if delta_conversion is not None else (entry.delta_composition or 1e-6)
    elif isinstance(entry, RDPEntry):
        if entry.delta_additive > 0:
            raise ParameterError("repeat-and-select is accounted in RDP and needs a run without an additive δ; "
                                 "record each repetition as its own run instead.")
        grid = np.asarray(entry.orders, dtype=float)
        inner = np.asarray(entry.rho, dtype=float)
        dc = delta_conversion if delta_conversion is not None else entry.delta_conversion
    else:
        raise ParameterError("repeat-and-select needs a PureDPEntry or an RDPEntry; an (ε, δ)-only run has no RDP curve.")
    _ = dp_event.RepeatAndSelectDpEvent  # the event this accounts (see the RDP accountant)
    out = np.asarray(rdp._compute_rdp_repeat_and_select(grid, inner, mean, shape), dtype=float)
    params = dict(entry.params)
    params.update(repeat_mean=mean, repeat_shape=shape if math.isfinite(shape) else "poisson")
    return RDPEntry(orders=tuple(grid), rho=tuple(out), delta_conversion=dc, mechanism=f"repeat_and_select({entry.mechanism})",
                    params=params, description=description or (
                        f"repeat-and-select (Papernot–Steinke 2022) of {entry.mechanism}: mean {mean:g} repetitions, shape {shape:g}, best kept."))


# ---------------------------------------------------------------------------
# The ledger
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Budget:
    """A total privacy budget (ε, δ) for one dataset."""

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        e = _nonneg(self.epsilon, "budget epsilon")
        d = _delta_value(self.delta, "budget delta")
        object.__setattr__(self, "epsilon", e)
        object.__setattr__(self, "delta", d)


def _within(total: PrivacyGuarantee, budget: Budget) -> bool:
    tol = 1.0 + BUDGET_TOLERANCE
    return total.epsilon <= budget.epsilon * tol + 1e-15 and total.delta <= budget.delta * tol + 1e-300


class PrivacyLedger:
    """The privacy ledger of one private dataset (docs/design.md §9).

    Thread-safe: every method holds the ledger's lock.

    Parameters
    ----------
    fingerprint : str
        :func:`dataset_fingerprint` of the private data.
    budget_epsilon, budget_delta : float, optional (keyword-only)
        A total budget; both or neither.
    entries : iterable of entries, optional (keyword-only)
    """

    def __init__(self, fingerprint: str, *, budget_epsilon: float | None = None, budget_delta: float | None = None,
                 entries: Iterable[LedgerEntry] = ()) -> None:
        if not isinstance(fingerprint, str) or not fingerprint:
            raise ParameterError("a ledger needs the dataset's fingerprint (a non-empty string from dataset_fingerprint).")
        self.fingerprint = fingerprint
        self._lock = threading.RLock()
        self._entries: list[LedgerEntry] = []
        self._budget: Budget | None = None
        if (budget_epsilon is None) != (budget_delta is None):
            raise ParameterError("a budget needs both epsilon and delta.")
        if budget_epsilon is not None:
            self._budget = Budget(budget_epsilon, budget_delta)
        for e in entries:
            self.record(e)

    def __repr__(self) -> str:
        return f"PrivacyLedger({self.fingerprint[:19]}..., {len(self)} runs, budget={self._budget})"

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    @property
    def entries(self) -> tuple:
        """The recorded runs, oldest first (a copy)."""
        with self._lock:
            return tuple(self._entries)

    @property
    def budget(self) -> Budget | None:
        """The total budget, or None."""
        with self._lock:
            return self._budget

    def set_budget(self, *, epsilon: float | None, delta: float | None = None) -> None:
        """Set (or with ``epsilon=None`` clear) the total budget.

        A budget below what is already spent is allowed; every later charge is refused.
        """
        with self._lock:
            self._budget = None if epsilon is None else Budget(epsilon, delta if delta is not None else 0.0)

    def total(self, *, delta: float | None = None) -> LedgerTotal:
        """The composition of every recorded run (rules and δ split: module docstring)."""
        with self._lock:
            return compose_entries(self._entries, delta=delta)

    def total_with(self, entry: LedgerEntry, *, delta: float | None = None) -> LedgerTotal:
        """The total if ``entry`` were recorded too (nothing is recorded)."""
        with self._lock:
            return compose_entries(self._entries + [entry], delta=delta)

    def _best_total_with(self, entry: LedgerEntry) -> LedgerTotal:
        candidates = [compose_entries(self._entries + [entry])]
        if self._budget is not None and self._budget.delta > 0:
            with contextlib.suppress(ParameterError):
                candidates.append(compose_entries(self._entries + [entry], delta=self._budget.delta))
        inside = [c for c in candidates if self._budget is None or _within(c, self._budget)]
        return min(inside or candidates, key=lambda c: (c.epsilon, c.delta))

    def check(self, entry: LedgerEntry) -> LedgerTotal:
        """Check, before a run, that its a-priori privacy map fits in the budget.

        Returns the total including the run (the smaller of the own-δ total and the
        total at the budget's δ).  Records nothing.

        Raises
        ------
        BudgetExhausted
            When no valid composition including the run is within the budget.
        """
        with self._lock:
            total = self._best_total_with(entry)
            b = self._budget
            if b is not None and not _within(total, b):
                spent = compose_entries(self._entries)
                own = compose_entries([entry])
                raise BudgetExhausted(
                    f"Privacy budget exhausted for this dataset: the {len(self._entries)} run(s) recorded so far spent "
                    f"(ε = {spent.epsilon:.4g}, δ = {spent.delta:.3g}); this {entry.mechanism} run would cost "
                    f"(ε = {own.epsilon:.4g}, δ = {own.delta:.3g}) on its own, bringing the total to "
                    f"(ε = {total.epsilon:.4g}, δ = {total.delta:.3g}), over the budget "
                    f"(ε = {b.epsilon:.4g}, δ = {b.delta:.3g}). The run was not started: lower its ε, its number of "
                    f"queries or rounds, or label with fresh private data (raising the budget weakens the promised guarantee).")
            return total

    def charge(self, entry: LedgerEntry) -> LedgerTotal:
        """Check ``entry`` against the budget and record it, atomically.

        Call it before the run with the run's a-priori privacy map; on refusal
        (:class:`BudgetExhausted`) nothing is recorded and the run must not happen.
        """
        with self._lock:
            total = self.check(entry)
            self._entries.append(entry)
            return total

    def record(self, entry: LedgerEntry) -> LedgerTotal:
        """Record a run that has happened, without a budget check (it was spent anyway)."""
        if not isinstance(entry, (PureDPEntry, RDPEntry, ApproxDPEntry)):
            raise ParameterError(f"a ledger entry must be a PureDPEntry, RDPEntry or ApproxDPEntry, got {type(entry).__name__}.")
        with self._lock:
            self._entries.append(entry)
            return compose_entries(self._entries)

    def extend(self, entries: Iterable[LedgerEntry]) -> None:
        """Record several runs (no budget check)."""
        with self._lock:
            for e in entries:
                self.record(e)

    # -- persistence -------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        with self._lock:
            return {"fingerprint": self.fingerprint,
                    "budget": None if self._budget is None else {"epsilon": self._budget.epsilon, "delta": self._budget.delta},
                    "entries": [e.to_dict() for e in self._entries]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PrivacyLedger:
        try:
            b = d.get("budget")
            return cls(d["fingerprint"], budget_epsilon=None if b is None else b["epsilon"],
                       budget_delta=None if b is None else b["delta"],
                       entries=[entry_from_dict(e) for e in d.get("entries", [])])
        except (KeyError, TypeError, AttributeError) as exc:
            raise DataError(f"not a privacy ledger: {exc!r}.") from None

    def to_json(self, *, indent: int | None = 2) -> str:
        """This ledger as strict JSON (see :meth:`from_json`)."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> PrivacyLedger:
        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(f"the ledger is not valid JSON ({exc.msg} at line {exc.lineno}).") from None
        return cls.from_dict(d)

    def save(self, path: str | os.PathLike) -> None:
        """Write this ledger into the file at ``path``, keeping other datasets' ledgers there."""
        path = Path(path)
        with _file_lock(path):
            ledgers = _read_file(path)
            ledgers[self.fingerprint] = self.to_dict()
            _write_file(path, ledgers)


# -- ledger files --------------------------------------------------------------

_PATH_LOCKS: dict[str, threading.Lock] = {}
_PATH_LOCKS_LOCK = threading.Lock()


@contextlib.contextmanager
def _file_lock(path: Path):
    """Serialise read-modify-write of one file: a thread lock, and ``flock`` across processes."""
    key = str(path.resolve())
    with _PATH_LOCKS_LOCK:
        lock = _PATH_LOCKS.setdefault(key, threading.Lock())
    with lock:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            yield
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(str(path) + ".lock", "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)


def _read_file(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"{path} is not a ledger file (not valid JSON: {exc}). Give another --ledger path.") from None
    if not isinstance(d, dict) or d.get("format") != FILE_FORMAT or not isinstance(d.get("ledgers"), dict):
        raise DataError(f"{path} is not a Private Label Lab ledger file. Give another --ledger path.")
    if d.get("version") != FILE_VERSION:
        raise DataError(f"{path} is a ledger file of version {d.get('version')!r}; this library reads version {FILE_VERSION}.")
    return d["ledgers"]


def _write_file(path: Path, ledgers: Mapping[str, Any]) -> None:
    text = json.dumps({"format": FILE_FORMAT, "version": FILE_VERSION, "ledgers": dict(ledgers)},
                      indent=2, allow_nan=False, ensure_ascii=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def load_ledgers(path: str | os.PathLike) -> dict[str, PrivacyLedger]:
    """Every ledger in the file at ``path``, by fingerprint (empty when there is no file)."""
    path = Path(path)
    with _file_lock(path):
        raw = _read_file(path)
    return {fp: PrivacyLedger.from_dict(d) for fp, d in raw.items()}


def load(path: str | os.PathLike, fingerprint: str) -> PrivacyLedger:
    """The ledger of dataset ``fingerprint`` in the file at ``path`` (empty if absent)."""
    return load_ledgers(path).get(fingerprint) or PrivacyLedger(fingerprint)


def append_to_file(path: str | os.PathLike, entry: LedgerEntry, *, fingerprint: str, check_budget: bool = False) -> PrivacyLedger:
    """Add one run to dataset ``fingerprint``'s ledger in the file at ``path``.

    Read, append and write happen under a file lock (safe for concurrent CLI runs); the
    file is replaced atomically.  ``check_budget=True`` charges the entry (refusing with
    :class:`BudgetExhausted` and writing nothing when it would exceed the file's
    budget); the default records it, for a run that already happened.  Returns the
    updated ledger.
    """
    path = Path(path)
    with _file_lock(path):
        raw = _read_file(path)
        ledger = PrivacyLedger.from_dict(raw[fingerprint]) if fingerprint in raw else PrivacyLedger(fingerprint)
        (ledger.charge if check_budget else ledger.record)(entry)
        raw[fingerprint] = ledger.to_dict()
        _write_file(path, raw)
    return ledger


# -- process-wide registry ----------------------------------------------------

_REGISTRY: dict[str, PrivacyLedger] = {}
_REGISTRY_LOCK = threading.Lock()


def ledger_for(fingerprint: str) -> PrivacyLedger:
    """The process-wide ledger of dataset ``fingerprint`` (created empty on first use).

    The app and the estimator continue a dataset's ledger across runs and ``fit``
    calls through this; thread-safe (every caller gets the same object).
    """
    if not isinstance(fingerprint, str) or not fingerprint:
        raise ParameterError("ledger_for needs the dataset's fingerprint (a non-empty string from dataset_fingerprint).")
    with _REGISTRY_LOCK:
        ledger = _REGISTRY.get(fingerprint)
        if ledger is None:
            ledger = _REGISTRY[fingerprint] = PrivacyLedger(fingerprint)
        return ledger


def forget_ledgers() -> None:
    """Empty the process-wide registry (tests; a new session)."""
    with _REGISTRY_LOCK:
        _REGISTRY.clear()
