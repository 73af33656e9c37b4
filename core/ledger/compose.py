"""Composition of ledger entries (docs/design.md §9): the optimal composition of pure-DP
steps (closed form or dp-accounting's PLD), RDP curves added order by order and converted
(or Gaussian runs composed exactly), approximate-DP entries by basic composition; the groups
then by basic composition.

:func:`compose_entries` composes a list of runs; :func:`compose_counts` the same multiset
given as distinct privacy maps and how many runs had each (runs with one map are
interchangeable: :func:`core.ledger.entries.map_key`), which is how the ledger composes a
unit's history without listing its runs.

References
----------
.. [KOV15] P. Kairouz, S. Oh, P. Viswanath, "The composition theorem for differential
   privacy", ICML 2015.
.. [M17] I. Mironov, "Rényi differential privacy", CSF 2017.
.. [DR14] C. Dwork, A. Roth, "The algorithmic foundations of differential privacy", 2014.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from core.accounting.composition import exact_composition_epsilon
from core.accounting.guarantee import PrivacyGuarantee
from core.errors import ParameterError
from core.ledger.entries import ApproxDPEntry, LedgerEntry, PureDPEntry, RDPEntry, delta_value, map_key

__all__ = [
    "GroupTotal",
    "LedgerTotal",
    "compose_counts",
    "compose_delta",
    "compose_entries",
]

_PLD_DISCRETIZATION = 1e-4


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
        ``"basic"``, ``"kov-exact"``, ``"pld"``, ``"laplace-pld"``, ``"rdp"``.
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


def _compose_pure(items: list, slack: float) -> GroupTotal:
    counter: Counter = Counter()
    laplace: Counter = Counter()
    for e, c in items:
        for eps, n in e.steps:
            (laplace if e.laplace else counter)[eps] += n * c
    generic = tuple(sorted(counter.items()))
    steps = tuple(sorted((counter + laplace).items()))
    additive = math.fsum(e.delta_additive * c for e, c in items)
    basic = math.fsum(eps * n for eps, n in steps)
    eps, method, used = basic, "basic", 0.0
    if steps and 0.0 < slack < 1.0:
        if len(steps) == 1:
            opt, how = exact_composition_epsilon(steps[0][0], steps[0][1], slack), "kov-exact"
        else:
            opt, how = _pld_epsilon(steps, slack), "pld"
        if laplace:  # Laplace coordinates by their own loss distribution (docs/design.md §3.4)
            from core.accounting.composition import laplace_composition_epsilon

            lap = laplace_composition_epsilon(tuple(sorted(laplace.items())), slack, pure_steps=generic)
            if lap < opt:
                opt, how = lap, "laplace-pld"
        if opt < basic:
            eps, method, used = opt, how, slack
    n = sum(c for _, c in items)
    return GroupTotal("pure", n, float(eps), min(1.0, used + additive), used, additive, method)


def _compose_rdp(items: list, slack: float) -> GroupTotal:
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    grid = np.unique(np.concatenate([np.asarray(e.orders) for e, _ in items]))
    rho = np.zeros_like(grid)
    for e, c in items:
        rho = rho + c * e.curve(grid)
    additive = math.fsum(e.delta_additive * c for e, c in items)
    if not 0.0 < slack < 1.0:
        raise ParameterError(f"the RDP runs need a conversion δ strictly between 0 and 1, got {slack!r}.")
    eps, order = rdp.compute_epsilon(grid, rho, slack)
    method = "rdp"
    if all(e.gaussian_mu_sq is not None for e, _ in items):
        # Gaussian runs compose exactly into one Gaussian mechanism of μ² = Σ μ_i².
        from core.accounting.gaussian_dp import gaussian_epsilon

        exact = gaussian_epsilon(math.fsum(e.gaussian_mu_sq * c for e, c in items), delta=slack)
        if exact < eps:
            eps, method = exact, "gaussian"
    n = sum(c for _, c in items)
    return GroupTotal("rdp", n, float(eps), min(1.0, slack + additive), slack, additive, method, float(order))


def _remembered(entry: LedgerEntry, key: str, compute) -> float:
    """``compute()`` the first time, then the value kept in the entry's ``__dict__`` under ``key``."""
    cached = entry.__dict__.get(key)
    if cached is None:
        cached = compute()
        object.__setattr__(entry, key, cached)
    return cached


def alone_epsilon(entry: LedgerEntry) -> float:
    """ε of ``entry`` composed alone at its own δ, remembered on the entry.

    Entries are immutable (frozen dataclasses), so the value cannot go stale; it is kept in
    the entry's own ``__dict__`` (not a field: equality, ``repr`` and ``dataclasses.replace``
    ignore it).  A total floors its ε at every entry's own (below), so without this a
    ledger of n runs composed each of them again on every charge: n² compositions.

    Parameters
    ----------
    entry : LedgerEntry

    Returns
    -------
    float
    """
    return _remembered(entry, "_alone_epsilon", lambda: compose_counts([entry], [1]).epsilon)


def alone_upper(entry: LedgerEntry) -> float:
    """A cheap upper bound on :func:`alone_epsilon` (remembered on the entry).

    Pure steps: basic composition; an RDP curve: its RDP conversion at its own δ
    (the exact rule takes the smaller of that and, for a Gaussian run, its exact ε);
    an (ε, δ) run: its ε.  A total's floor can only bind where this bound exceeds the
    composed ε, so the exact single-run ε (a root-finding per Gaussian run) is computed
    only there.

    Parameters
    ----------
    entry : LedgerEntry
        One run's privacy map.

    Returns
    -------
    float
        At least :func:`alone_epsilon` of ``entry``.
    """
    def upper() -> float:
        if "_alone_epsilon" in entry.__dict__:
            return entry.__dict__["_alone_epsilon"]
        if isinstance(entry, PureDPEntry):
            return entry.basic_epsilon
        if isinstance(entry, RDPEntry):
            from dp_accounting.rdp import rdp_privacy_accountant as rdp

            return float(rdp.compute_epsilon(np.asarray(entry.orders), np.asarray(entry.rho),
                                             entry.delta_conversion)[0])
        return float(entry.epsilon)

    return _remembered(entry, "_alone_upper", upper)


def _compose_approx(items: list) -> GroupTotal:
    eps = math.fsum(e.epsilon * c for e, c in items)
    d = math.fsum(e.delta * c for e, c in items)
    return GroupTotal("approx", sum(c for _, c in items), eps, min(1.0, d), 0.0, d, "basic")


def compose_entries(entries: Iterable[LedgerEntry], *, delta: float | None = None) -> LedgerTotal:
    """Compose privacy maps (the rules of docs/design.md §9).

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
    _check_entries(entries)
    first: dict[str, int] = {}
    kinds: list = []
    counts: list[int] = []
    for e in entries:
        key = map_key(e)
        i = first.get(key)
        if i is None:
            first[key] = len(kinds)
            kinds.append(e)
            counts.append(1)
        else:
            counts[i] += 1
    return compose_counts(kinds, counts, delta=delta)


def _check_entries(entries: Sequence) -> None:
    for e in entries:
        if not isinstance(e, (PureDPEntry, RDPEntry, ApproxDPEntry)):
            raise ParameterError(f"a ledger entry must be a PureDPEntry, RDPEntry or ApproxDPEntry, got {type(e).__name__}.")


def _groups_and_slacks(kinds: Sequence[LedgerEntry], counts: Sequence[int], delta: float | None) -> tuple:
    """The runs split by kind of map, and the δ slack each composed group gets.

    ``delta`` None: each group's own slack (the sum of its runs' composition or
    conversion slacks); a target δ: what the runs' additive and (ε, δ) terms leave of it,
    shared equally between the groups that need slack (pure runs with steps, RDP runs).

    Returns
    -------
    tuple
        ``(items, pure, rdp, approx, slack_pure, slack_rdp)``, each group a list of
        ``(entry, count)`` with a positive count.
    """
    _check_entries(kinds)
    items = [(e, int(c)) for e, c in zip(kinds, counts) if int(c) > 0]
    pure = [(e, c) for e, c in items if isinstance(e, PureDPEntry)]
    rdp_ = [(e, c) for e, c in items if isinstance(e, RDPEntry)]
    approx = [(e, c) for e, c in items if isinstance(e, ApproxDPEntry)]
    if delta is None:
        slack_pure = math.fsum(e.delta_composition * c for e, c in pure)
        slack_rdp = math.fsum(e.delta_conversion * c for e, c in rdp_)
    else:
        delta = delta_value(delta, "delta")
        fixed = (math.fsum(e.delta_additive * c for e, c in pure + rdp_)
                 + math.fsum(e.delta * c for e, c in approx))
        needy = int(any(e.steps for e, _ in pure)) + int(bool(rdp_))
        rest = delta - fixed
        if needy and rest <= 0:
            raise ParameterError(
                f"δ = {delta:.3g} leaves no slack for composition: the runs' additive and (ε, δ) terms "
                f"already sum to {fixed:.3g}; ask for a larger δ.")
        slack_pure = slack_rdp = rest / needy if needy else 0.0
    return items, pure, rdp_, approx, slack_pure, slack_rdp


def compose_delta(kinds: Sequence[LedgerEntry], counts: Sequence[int], *, delta: float | None = None) -> float:
    """The δ of :func:`compose_counts` alone, composing only what decides it.

    A group's δ is a sum of its runs' δs, except that the pure group counts its slack only
    when optimal composition beats basic composition; only that comparison is computed (no
    RDP conversion, no Gaussian root-finding).

    Parameters
    ----------
    kinds, counts, delta
        As for :func:`compose_counts`.

    Returns
    -------
    float
        Exactly ``compose_counts(kinds, counts, delta=delta).delta``.
    """
    _, pure, rdp_, approx, slack_pure, slack_rdp = _groups_and_slacks(kinds, counts, delta)
    parts = []
    if pure:
        parts.append(_compose_pure(pure, slack_pure).delta)
    if rdp_:
        parts.append(min(1.0, slack_rdp + math.fsum(e.delta_additive * c for e, c in rdp_)))
    if approx:
        parts.append(min(1.0, math.fsum(e.delta * c for e, c in approx)))
    return min(1.0, math.fsum(parts))


def compose_counts(kinds: Sequence[LedgerEntry], counts: Sequence[int], *, delta: float | None = None,
                   floor: bool = True) -> LedgerTotal:
    """Compose ``counts[i]`` runs of privacy map ``kinds[i]`` for every i (as :func:`compose_entries`).

    The composition reads the runs' maps only, so a multiset of runs is its distinct maps
    and their counts: the result equals :func:`compose_entries` of the list holding each
    ``kinds[i]`` ``counts[i]`` times, at the cost of one term per distinct map.

    Parameters
    ----------
    kinds : sequence of LedgerEntry
        Distinct privacy maps.
    counts : sequence of int
        How many runs had each (0 allowed: the map is absent).
    delta : float, optional
        As for :func:`compose_entries`.
    floor : bool
        False: without raising ε to the largest single run's own ε (the ledger's total
        over many units takes that maximum apart, :mod:`core.ledger.largest`).

    Returns
    -------
    LedgerTotal
    """
    items, pure, rdp_, approx, slack_pure, slack_rdp = _groups_and_slacks(kinds, counts, delta)
    n_entries = sum(c for _, c in items)
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
    top = 0.0
    if floor and delta is None and n_entries > 1:
        # Summing slacks can make the composition cheaper in ε than one run at its own
        # (smaller) δ; floor ε there so the total never reads below a run it contains.
        # Valid: a larger ε at the same δ is a weaker statement.
        # Only the runs whose cheap bound exceeds the composition can raise it.
        top = max((alone_epsilon(e) for e, _ in items if alone_upper(e) > eps), default=0.0)
        if top > eps:
            eps, method = top, method + "+floor"
    words = {"basic": "basic composition", "kov-exact": "optimal composition (Kairouz–Oh–Viswanath closed form)",
             "pld": "optimal composition (dp-accounting PLD)",
             "laplace-pld": "privacy-loss distributions, Laplace steps by their own (dp-accounting PLD)", "rdp": "RDP added order by order, converted by dp-accounting",
             "gaussian": "Gaussian runs composed exactly (μ² added), converted by dp-accounting's exact Gaussian privacy loss"}
    pieces = [f"{g.n_entries} {g.kind} run{'s' if g.n_entries != 1 else ''}: ({g.epsilon:.4g}, {g.delta:.3g}) by {words[g.method]}"
              for g in groups]
    detail = ("No run recorded." if not groups else
              "; ".join(pieces) + (". Groups composed by basic composition." if len(groups) > 1 else "."))
    parts = {f"{g.kind}_epsilon": g.epsilon for g in groups}
    if method.endswith("+floor"):
        parts["epsilon_floor"] = top
        detail += f" ε raised to {top:.4g}, the largest single run's own ε (the summed slack made the composition smaller)."
    parts.update({f"{g.kind}_delta": g.delta for g in groups})
    return LedgerTotal(epsilon=float(eps), delta=float(d), method=method, detail=detail, parts=parts,
                       groups=tuple(groups), n_entries=n_entries)
