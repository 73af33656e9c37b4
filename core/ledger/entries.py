"""Ledger entries: the three privacy maps (:class:`PureDPEntry`, :class:`RDPEntry`,
:class:`ApproxDPEntry`), their serialization, and the key that says when two runs have the
same privacy map (:func:`map_key`: such runs reduce to a count in the ledger).

References
----------
.. [M17] I. Mironov, "Rényi differential privacy", CSF 2017.
.. [FZ21] V. Feldman, T. Zrnic, "Individual privacy accounting via a Rényi filter",
   NeurIPS 2021.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar

import numpy as np

from core.errors import DataError, ParameterError

__all__ = [
    "ApproxDPEntry",
    "LedgerEntry",
    "PureDPEntry",
    "RDPEntry",
    "entry_from_dict",
    "map_key",
    "nonnegative_value",
    "delta_value",
    "public_params",
]

# ---------------------------------------------------------------------------
# Entries (privacy maps)
# ---------------------------------------------------------------------------

def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def nonnegative_value(value: Any, name: str) -> float:
    """Check a finite number ``>= 0`` (an ε, a ρ or a cost in the ledger).

    Parameters
    ----------
    value : Any
        The value to check (anything ``float()`` accepts).
    name : str
        The quantity's name, for the error message.

    Returns
    -------
    float
        ``value`` as a float.

    Raises
    ------
    ParameterError
        When ``value`` is not a number, not finite, or negative.
    """
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number, got {value!r}.") from None
    if not (math.isfinite(v) and v >= 0.0):
        raise ParameterError(f"{name} must be a finite number >= 0, got {value!r}.")
    return v


def delta_value(value: Any, name: str) -> float:
    """Check a δ: a finite number in ``[0, 1]`` (as :func:`nonnegative_value`, at most 1).

    Raises
    ------
    ParameterError
        When ``value`` is not a number in ``[0, 1]``.
    """
    v = nonnegative_value(value, name)
    if v > 1.0:
        raise ParameterError(f"{name} must lie between 0 and 1, got {value!r}.")
    return v


def public_params(params: Mapping[str, Any] | None) -> dict[str, Any]:
    """JSON-safe public parameters: scalars only; data-dependent values dropped.

    Parameters
    ----------
    params : Mapping or None
        A run's parameters (e.g. :attr:`LabelingResult.params`).

    Returns
    -------
    dict
        The entries whose value is None, a bool, an int, a str or a finite float
        (NumPy scalars converted), keys as str; keys containing ``"data_dependent"``
        are dropped.
    """
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
                "params": public_params(self.params), "timestamp": self.timestamp}


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
    laplace : bool
        Every step is a Laplace coordinate: one value released with ``Lap(1/eps_step)``
        noise, sensitivity 1 (LNMax: two per answer; docs/design.md §3.4).  Still pure
        ``eps_step``-DP, so any reading as generic steps stays valid; the ledger composes
        such steps by the Laplace privacy-loss distribution, which is tighter.
    mechanism, description, params, timestamp
        Name, one sentence, public parameters, ISO-8601 UTC time.
    """

    steps: tuple = ()
    delta_composition: float = 0.0
    delta_additive: float = 0.0
    laplace: bool = False

    kind: ClassVar[str] = "pure"

    def __post_init__(self) -> None:
        steps = []
        for pair in self.steps:
            try:
                e, n = pair
            except (TypeError, ValueError):
                raise ParameterError(f"each pure-DP step must be a pair (eps_step, n_steps), got {pair!r}.") from None
            e = nonnegative_value(e, "eps_step")
            if isinstance(n, float) and not n.is_integer() or int(n) < 0:
                raise ParameterError(f"n_steps must be a whole number >= 0, got {n!r}.")
            if e > 0 and int(n) > 0:
                steps.append((e, int(n)))
        object.__setattr__(self, "steps", tuple(steps))
        object.__setattr__(self, "delta_composition", delta_value(self.delta_composition, "delta_composition"))
        object.__setattr__(self, "delta_additive", delta_value(self.delta_additive, "delta_additive"))
        object.__setattr__(self, "params", dict(self.params))
        if not isinstance(self.laplace, (bool, np.bool_)):
            raise ParameterError(f"laplace must be True or False, got {self.laplace!r}.")
        object.__setattr__(self, "laplace", bool(self.laplace))

    @classmethod
    def uniform(cls, *, eps_step: float, n_steps: int, delta_composition: float = 0.0, delta_additive: float = 0.0, **kw: Any) -> PureDPEntry:
        """``n_steps`` pure ``eps_step``-DP steps (one size).

        Parameters
        ----------
        eps_step : float
            ε of each pure-DP step.
        n_steps : int
            Number of steps.
        delta_composition : float, default 0.0
            Slack δ at which the steps are composed.
        delta_additive : float, default 0.0
            Extra δ added to the total (e.g. BTT's ``delta_release``).
        **kw
            ``laplace``, ``mechanism``, ``description``, ``params``, ``timestamp``.

        Returns
        -------
        PureDPEntry
        """
        return cls(steps=((eps_step, n_steps),), delta_composition=delta_composition, delta_additive=delta_additive, **kw)

    @property
    def basic_epsilon(self) -> float:
        """Basic composition of the steps, ``Σ n·eps_step``.

        Returns
        -------
        float

        References
        ----------
        C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy",
        Foundations and Trends in Theoretical Computer Science 9(3–4), 2014 (Theorem 3.16).
        """
        return float(math.fsum(e * n for e, n in self.steps))

    def to_dict(self) -> dict[str, Any]:
        """This entry as a JSON-ready dict (see :func:`entry_from_dict`).

        Returns
        -------
        dict
            The common fields plus ``steps`` (``[[eps, n], ...]``), ``delta_composition`` and
            ``delta_additive``.
        """
        d = self._base_dict()
        d.update(steps=[[e, n] for e, n in self.steps], delta_composition=self.delta_composition,
                 delta_additive=self.delta_additive)
        if self.laplace:
            d["laplace"] = True
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
    gaussian_mu_sq : float or None
        When the run is exactly a composition of Gaussian mechanisms: its
        ``μ² = Σ sensitivity²/σ²`` (the curve must then be ``α·μ²/2``).  A group of such
        runs is one Gaussian mechanism and converts by its exact privacy profile
        (:mod:`core.accounting.gaussian_dp`), tighter than RDP's conversion.
    mechanism, description, params, timestamp
        As for :class:`PureDPEntry`.
    """

    orders: tuple = ()
    rho: tuple = ()
    delta_conversion: float = 1e-6
    delta_additive: float = 0.0
    gaussian_mu_sq: float | None = None

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
        dc = delta_value(self.delta_conversion, "delta_conversion")
        if not 0.0 < dc < 1.0:
            raise ParameterError(f"delta_conversion must lie strictly between 0 and 1, got {self.delta_conversion!r}.")
        object.__setattr__(self, "delta_conversion", dc)
        object.__setattr__(self, "delta_additive", delta_value(self.delta_additive, "delta_additive"))
        object.__setattr__(self, "params", dict(self.params))
        if self.gaussian_mu_sq is not None:
            mu_sq = nonnegative_value(self.gaussian_mu_sq, "gaussian_mu_sq")
            if not (mu_sq > 0 and np.allclose(rho[idx], orders[idx] * mu_sq / 2.0, rtol=1e-9, atol=0.0)):
                raise ParameterError("gaussian_mu_sq is for a Gaussian run only: its curve must be α·μ²/2 with μ² > 0.")
            object.__setattr__(self, "gaussian_mu_sq", mu_sq)

    @classmethod
    def filter(cls, *, order: float, rho_budget: float, delta_conversion: float, delta_additive: float = 0.0, **kw: Any) -> RDPEntry:
        """A Rényi-filter run (Feldman–Zrnic 2021): its budget ``ρ*`` at one order.

        The curve is ``ρ*`` at ``order`` and ``+inf`` elsewhere; in a ledger the orders
        below ``order`` get ``ρ*`` too (monotonicity of the Rényi divergence).

        Parameters
        ----------
        order : float
            The filter's Rényi order α, > 1.
        rho_budget : float
            The filter's RDP budget ρ* at that order.
        delta_conversion : float
            δ at which the curve is converted to (ε, δ).
        delta_additive : float, default 0.0
            Extra δ added to the total.
        **kw
            ``mechanism``, ``description``, ``params``, ``timestamp``.

        Returns
        -------
        RDPEntry

        References
        ----------
        V. Feldman, T. Zrnic, "Individual Privacy Accounting via a Rényi Filter", NeurIPS 2021.
        I. Mironov, "Rényi Differential Privacy", IEEE CSF 2017.
        docs/design.md §9.
        """
        return cls(orders=(order,), rho=(rho_budget,), delta_conversion=delta_conversion, delta_additive=delta_additive, **kw)

    def curve(self, grid: Sequence[float]) -> np.ndarray:
        """ρ at the orders of ``grid`` (monotone fill, ``inf`` above the largest order).

        Parameters
        ----------
        grid : sequence of float
            Rényi orders.

        Returns
        -------
        numpy.ndarray of float, shape (len(grid),)
            ρ at each order of ``grid``.

        References
        ----------
        I. Mironov, "Rényi Differential Privacy", IEEE CSF 2017 (monotonicity in the order).
        """
        return _fill_monotone(np.asarray(self.orders), np.asarray(self.rho), np.asarray(grid, dtype=float))

    def to_dict(self) -> dict[str, Any]:
        """This entry as a JSON-ready dict (see :func:`entry_from_dict`).

        Returns
        -------
        dict
            The common fields plus ``orders``, ``rho`` (``None`` for infinite values),
            ``delta_conversion`` and ``delta_additive``.
        """
        d = self._base_dict()
        d.update(orders=list(self.orders), rho=[r if math.isfinite(r) else None for r in self.rho],
                 delta_conversion=self.delta_conversion, delta_additive=self.delta_additive)
        if self.gaussian_mu_sq is not None:
            d["gaussian_mu_sq"] = self.gaussian_mu_sq
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
        object.__setattr__(self, "epsilon", nonnegative_value(self.epsilon, "epsilon"))
        object.__setattr__(self, "delta", delta_value(self.delta, "delta"))
        object.__setattr__(self, "params", dict(self.params))

    def to_dict(self) -> dict[str, Any]:
        """This entry as a JSON-ready dict (see :func:`entry_from_dict`).

        Returns
        -------
        dict
            The common fields plus ``epsilon`` and ``delta``.
        """
        d = self._base_dict()
        d.update(epsilon=self.epsilon, delta=self.delta)
        return d


LedgerEntry = PureDPEntry | RDPEntry | ApproxDPEntry
"""Any of the three privacy maps."""

_KINDS: dict[str, type] = {"pure": PureDPEntry, "rdp": RDPEntry, "approx": ApproxDPEntry}


def entry_from_dict(d: Mapping[str, Any]) -> LedgerEntry:
    """Rebuild an entry from :meth:`to_dict` output (JSON).

    Parameters
    ----------
    d : mapping
        A dict with ``kind`` in ``{"pure", "rdp", "approx"}`` and that kind's fields.

    Returns
    -------
    PureDPEntry, RDPEntry or ApproxDPEntry

    Raises
    ------
    DataError
        If ``kind`` is missing or unknown.
    """
    kind = d.get("kind") if isinstance(d, Mapping) else None
    if kind not in _KINDS:
        raise DataError(f"a ledger entry must be an object with a kind among {sorted(_KINDS)}, got kind {kind!r}.")
    common = {k: d[k] for k in ("mechanism", "description", "params", "timestamp") if k in d}
    if kind == "pure":
        return PureDPEntry(steps=tuple(tuple(s) for s in d.get("steps", ())), delta_composition=d.get("delta_composition", 0.0),
                           delta_additive=d.get("delta_additive", 0.0), laplace=bool(d.get("laplace", False)), **common)
    if kind == "rdp":
        return RDPEntry(orders=tuple(d["orders"]), rho=tuple(d["rho"]), delta_conversion=d["delta_conversion"],
                        delta_additive=d.get("delta_additive", 0.0), gaussian_mu_sq=d.get("gaussian_mu_sq"), **common)
    return ApproxDPEntry(epsilon=d["epsilon"], delta=d["delta"], **common)


def map_key(entry: LedgerEntry) -> str:
    """The privacy map of ``entry`` as text: equal for two runs exactly when they compose alike.

    Composition (:mod:`core.ledger.compose`) reads only the map's numbers: the kind, the
    pure steps and their δs, the Rényi curve, its δs and Gaussian μ², or the (ε, δ).  The
    mechanism's name, the description, the parameters and the time are not part of it, so
    runs with one key are interchangeable in every total and the ledger keeps one count
    per key (docs/design.md §9).

    Parameters
    ----------
    entry : PureDPEntry, RDPEntry or ApproxDPEntry

    Returns
    -------
    str
        Canonical JSON of the map's numbers (floats written exactly, by ``repr``).
    """
    if isinstance(entry, PureDPEntry):
        body = {"kind": "pure", "steps": [[float(e), int(n)] for e, n in sorted(entry.steps)],
                "delta_composition": entry.delta_composition, "delta_additive": entry.delta_additive}
        if entry.laplace:  # Laplace coordinates compose by their own loss distribution
            body["laplace"] = True
    elif isinstance(entry, RDPEntry):
        body = {"kind": "rdp", "orders": list(entry.orders),
                "rho": [r if math.isfinite(r) else None for r in entry.rho],
                "delta_conversion": entry.delta_conversion, "delta_additive": entry.delta_additive,
                "gaussian_mu_sq": entry.gaussian_mu_sq}
    elif isinstance(entry, ApproxDPEntry):
        body = {"kind": "approx", "epsilon": entry.epsilon, "delta": entry.delta}
    else:
        raise ParameterError(f"a ledger entry must be a PureDPEntry, RDPEntry or ApproxDPEntry, got {type(entry).__name__}.")
    return json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False)
