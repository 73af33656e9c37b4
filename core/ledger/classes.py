"""The privacy units of a dataset, grouped by what they have spent (docs/design.md §9).

A ledger does not keep a history per unit.  What a unit has spent is the composition of
the runs that read it, and a composition reads only the runs' privacy maps
(:func:`core.ledger.entries.map_key`), so a unit's account is a **count vector**: how many
runs of each distinct map read it.  Units with the same vector are one **class**;
:class:`UnitClasses` keeps the classes' vectors and, for every unit seen, its keyed hash
(:mod:`core.ledger.units`) and its class.  A run that reads some units splits each class
it touches (its units move to the class of the vector plus one; the others stay), and
classes that end with equal vectors merge.  Runs that read the whole dataset are one
common vector added to every class, and units never seen are the zero class (class 0).

The data's total is the largest class's (:func:`worst_total`), computed without composing
every class:

1. **Only maximal vectors matter.**  A unit whose vector is below another's (entry by
   entry) is covered by that vector's composition: the missing runs are steps of
   privacy loss 0 for it, and every composition rule of §9 stays valid when a step's
   loss is lowered (proof: docs/design.md §9).
2. **Cheap upper bounds** (:func:`upper_bounds`, vectorised over all classes): basic
   composition and randomized response's RDP conversion for pure steps, dp-accounting's
   RDP conversion formula evaluated on the summed curves, Gaussian runs' exact profile
   bracketed by bisection, sums for the approximate runs, and the floor (the largest
   single run's own ε).
3. **Exact composition in the order of the bounds** (:func:`core.ledger.compose.compose_counts`),
   stopping as soon as the next bound is at most the largest exact total found: the
   result is the exact maximum over the maximal classes, never below it.

References
----------
.. [KOV15] P. Kairouz, S. Oh, P. Viswanath, "The composition theorem for differential
   privacy", ICML 2015 (randomized response is the worst pure step).
.. [M17] I. Mironov, "Rényi differential privacy", CSF 2017.
.. [BW18] B. Balle, Y.-X. Wang, "Improving the Gaussian mechanism for differential
   privacy", ICML 2018 (the Gaussian privacy profile).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from core.errors import ParameterError
from core.ledger.compose import LedgerTotal, alone_epsilon, compose_counts
from core.ledger.entries import ApproxDPEntry, LedgerEntry, PureDPEntry, RDPEntry, delta_value
from core.ledger.units import sorted_unique

__all__ = ["UnitClasses", "as_vectors", "maximal", "unique_rows", "upper_bounds", "worst_total"]

_MARGIN = 1e-9
"""Relative margin added to every upper bound (floating-point rounding of the vectorised
formulas against the exact computations' own)."""


def _small_uint(values: np.ndarray) -> np.ndarray:
    """``values`` (non-negative integers) in the smallest unsigned dtype that holds them."""
    top = int(values.max()) if values.size else 0
    for dt in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(dt).max:
            return values.astype(dt)
    return values.astype(np.uint64)


def unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows in lexicographic order (the zero row first) and each row's index among them."""
    n, d = rows.shape
    if n == 0:
        return rows, np.zeros(0, dtype=np.int64)
    if d == 0:
        return rows[:1], np.zeros(n, dtype=np.int64)
    order = np.lexsort(rows.T[::-1])
    s = rows[order]
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.any(s[1:] != s[:-1], axis=1, out=new[1:])
    group = np.cumsum(new) - 1
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = group
    return s[new], inverse


@dataclass(frozen=True)
class UnitClasses:
    """The units of a dataset by class (module docstring).

    Attributes
    ----------
    keys : numpy.ndarray of uint64, shape (n_units,)
        Every unit seen, as its keyed hash (:func:`core.ledger.units.unit_keys`), sorted.
    class_of : numpy.ndarray of unsigned int, shape (n_units,)
        Each unit's class.
    vectors : numpy.ndarray of unsigned int, shape (n_classes, n_kinds)
        Each class's count of runs per privacy map, over the runs that read part of
        the data; row 0 is the zero vector (units never read by such a run).
    """

    keys: np.ndarray
    class_of: np.ndarray
    vectors: np.ndarray

    @classmethod
    def empty(cls, n_kinds: int = 0) -> UnitClasses:
        """No unit seen yet: only the zero class.

        Parameters
        ----------
        n_kinds : int
            Number of distinct privacy maps so far.

        Returns
        -------
        UnitClasses
        """
        return cls(np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.uint8), np.zeros((1, n_kinds), dtype=np.uint8))

    @property
    def n_units(self) -> int:
        """Number of distinct units seen."""
        return int(self.keys.size)

    @property
    def n_classes(self) -> int:
        """Number of classes, the zero class included."""
        return int(self.vectors.shape[0])

    def widened(self, n_kinds: int) -> UnitClasses:
        """The same classes with room for ``n_kinds`` privacy maps (new columns are 0).

        Parameters
        ----------
        n_kinds : int

        Returns
        -------
        UnitClasses
        """
        d = self.vectors.shape[1]
        if n_kinds <= d:
            return self
        wide = np.zeros((self.vectors.shape[0], n_kinds), dtype=self.vectors.dtype)
        wide[:, :d] = self.vectors
        return dataclasses.replace(self, vectors=wide)

    def classes_of(self, keys: np.ndarray) -> np.ndarray:
        """The distinct classes of the units ``keys`` (units never seen: class 0).

        Parameters
        ----------
        keys : numpy.ndarray of uint64, sorted and distinct

        Returns
        -------
        numpy.ndarray of int64
        """
        if self.keys.size == 0 or keys.size == 0:
            return np.zeros(int(keys.size > 0), dtype=np.int64)
        pos = np.searchsorted(self.keys, keys)
        inside = pos < self.keys.size
        found = np.zeros(keys.size, dtype=bool)
        found[inside] = self.keys[pos[inside]] == keys[inside]
        cls = self.class_of[pos[found]].astype(np.int64)
        if not found.all():
            cls = np.concatenate([cls, [0]])
        return sorted_unique(cls)

    def after_run(self, kind: int, keys: np.ndarray) -> UnitClasses:
        """The classes after a run of privacy map ``kind`` that read the units ``keys``.

        Each class the run touches splits: its units in ``keys`` move to the class of its
        vector plus one run of ``kind``, the rest stay; then classes with equal vectors
        merge and classes left without units are dropped (the zero class always stays).

        Parameters
        ----------
        kind : int
            The run's privacy map (a column of :attr:`vectors`, widened if new).
        keys : numpy.ndarray of uint64, sorted and distinct

        Returns
        -------
        UnitClasses
        """
        state = self.widened(kind + 1)
        if keys.size == 0:
            return state
        old_keys = state.keys
        pos = np.searchsorted(old_keys, keys)
        inside = pos < old_keys.size
        found = np.zeros(keys.size, dtype=bool)
        found[inside] = old_keys[pos[inside]] == keys[inside]
        class_of = state.class_of.astype(np.int64)
        if not found.all():
            all_keys = np.concatenate([old_keys, keys[~found]])
            order = np.argsort(all_keys, kind="stable")
            all_keys = all_keys[order]
            class_of = np.concatenate([class_of, np.zeros(int((~found).sum()), dtype=np.int64)])[order]
            pos = np.searchsorted(all_keys, keys)
        else:
            all_keys = old_keys
        old = class_of[pos]
        touched = sorted_unique(old)
        n_old = state.vectors.shape[0]
        grown = state.vectors[touched].astype(np.int64)
        grown[:, kind] += 1
        class_of[pos] = n_old + np.searchsorted(touched, old)
        every = np.vstack([state.vectors.astype(np.int64), grown])
        live = np.bincount(class_of, minlength=every.shape[0]) > 0
        live[0] = True
        live_ids = np.flatnonzero(live)
        vectors, inverse = unique_rows(every[live_ids])
        mapping = np.zeros(every.shape[0], dtype=np.int64)
        mapping[live_ids] = inverse
        return UnitClasses(all_keys, _small_uint(mapping[class_of]), _small_uint(vectors))


# ---------------------------------------------------------------------------------------
# The largest class's total
# ---------------------------------------------------------------------------------------

def maximal(vectors: np.ndarray, *, work: float = 2e8) -> np.ndarray:
    """Indices of the rows of ``vectors`` not below another row (entry by entry).

    Rows are visited from the largest sum down; each kept row removes the rows it covers.
    The pass stops once about ``work`` comparisons were made, keeping every row not yet
    removed (keeping a covered row is allowed: it is only composed needlessly).

    Parameters
    ----------
    vectors : numpy.ndarray, shape (n, d)
        Distinct rows.
    work : float
        Budget of comparisons.

    Returns
    -------
    numpy.ndarray of int64
    """
    n, d = vectors.shape
    if n <= 1:
        return np.arange(n)
    order = np.argsort(-vectors.astype(np.int64).sum(axis=1), kind="stable")
    alive = np.ones(n, dtype=bool)
    spent = 0.0
    for i in order:
        if not alive[i]:
            continue
        if spent > work:
            break
        covered = np.all(vectors <= vectors[i], axis=1)
        covered[i] = False
        alive &= ~covered
        spent += n * max(d, 1)
    return np.flatnonzero(alive)


def _conversion(rho: np.ndarray, orders: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """dp-accounting's ``compute_epsilon`` (RDP → (ε, δ), Balle et al. 2020, Prop. 12),
    vectorised over the rows of ``rho`` (shape (n, n_orders)) at each row's δ."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        a = orders[None, :]
        eps = rho + np.log1p(-1.0 / a) - np.log(delta[:, None] * a) / (a - 1.0)
        eps = np.where(a > 1.01, eps, np.inf)
        eps = np.where(delta[:, None] ** 2 + np.expm1(-rho) > 0, 0.0, eps)
        eps = np.where(delta[:, None] > 0, eps, np.where(rho == 0, 0.0, np.inf))
        eps = np.where(np.isnan(eps), np.inf, eps)
    return np.maximum(0.0, eps.min(axis=1))


def _gaussian_upper(mu_sq: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """Upper ends of bisection brackets of the exact Gaussian ε at δ (Balle–Wang 2018):
    ``δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)`` is decreasing in ε, so every upper end
    has ``δ(hi) ≤ δ``, within 1e-9 of the exact ε."""
    from scipy.special import log_ndtr

    mu = np.sqrt(mu_sq)

    def log_delta(e):
        a = log_ndtr(-e / mu + mu / 2.0)
        b = e + log_ndtr(-e / mu - mu / 2.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            return a + np.log1p(-np.exp(np.minimum(b - a, 0.0)))

    target = np.log(delta)
    lo = np.zeros_like(mu)
    hi = np.maximum(1.0, 2.0 * mu)
    for _ in range(60):
        bad = log_delta(hi) > target
        if not bad.any():
            break
        hi = np.where(bad, hi * 2.0, hi)
    zero = log_delta(lo) <= target
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        over = log_delta(mid) > target
        lo = np.where(over, mid, lo)
        hi = np.where(over, hi, mid)
        if np.all(hi - lo <= 1e-10 * np.maximum(hi, 1e-300)):
            break
    return np.where(zero, 0.0, hi)


@dataclass(frozen=True)
class _KindTable:
    """Per privacy map, the numbers the bounds are linear in."""

    pure: np.ndarray
    basic: np.ndarray
    steps_total: np.ndarray
    d_comp: np.ndarray
    d_add: np.ndarray
    rdp: np.ndarray
    d_conv: np.ndarray
    gaussian: np.ndarray
    mu_sq: np.ndarray
    approx: np.ndarray
    approx_eps: np.ndarray
    approx_delta: np.ndarray
    alone: np.ndarray
    one_step: float | None
    orders: np.ndarray
    curves: np.ndarray


def _kind_table(kinds: Sequence[LedgerEntry]) -> _KindTable:
    d = len(kinds)
    pure = np.array([isinstance(k, PureDPEntry) for k in kinds], dtype=bool)
    rdp = np.array([isinstance(k, RDPEntry) for k in kinds], dtype=bool)
    approx = np.array([isinstance(k, ApproxDPEntry) for k in kinds], dtype=bool)
    basic = np.array([k.basic_epsilon if isinstance(k, PureDPEntry) else 0.0 for k in kinds])
    steps_total = np.array([sum(n for _, n in k.steps) if isinstance(k, PureDPEntry) else 0 for k in kinds], dtype=float)
    d_comp = np.array([k.delta_composition if isinstance(k, PureDPEntry) else 0.0 for k in kinds])
    d_add = np.array([k.delta_additive if isinstance(k, (PureDPEntry, RDPEntry)) else 0.0 for k in kinds])
    d_conv = np.array([k.delta_conversion if isinstance(k, RDPEntry) else 0.0 for k in kinds])
    gaussian = np.array([isinstance(k, RDPEntry) and k.gaussian_mu_sq is not None for k in kinds], dtype=bool)
    mu_sq = np.array([k.gaussian_mu_sq if isinstance(k, RDPEntry) and k.gaussian_mu_sq is not None else 0.0 for k in kinds])
    approx_eps = np.array([k.epsilon if isinstance(k, ApproxDPEntry) else 0.0 for k in kinds])
    approx_delta = np.array([k.delta if isinstance(k, ApproxDPEntry) else 0.0 for k in kinds])
    alone = np.array([alone_epsilon(k) for k in kinds]) if d else np.zeros(0)
    sizes = {e for k in kinds if isinstance(k, PureDPEntry) for e, _ in k.steps}
    one_step = next(iter(sizes)) if len(sizes) == 1 else None
    rdp_kinds = [k for k in kinds if isinstance(k, RDPEntry)]
    if rdp_kinds:
        orders = np.unique(np.concatenate([np.asarray(k.orders) for k in rdp_kinds]))
        curves = np.zeros((d, orders.size))
        for i, k in enumerate(kinds):
            if isinstance(k, RDPEntry):
                curves[i] = np.minimum(k.curve(orders), 1e300)  # inf as a huge finite value: 0 runs × inf = 0
    else:
        orders, curves = np.zeros(0), np.zeros((d, 0))
    return _KindTable(pure, basic, steps_total, d_comp, d_add, rdp, d_conv, gaussian, mu_sq, approx, approx_eps,
                      approx_delta, alone, one_step, orders, curves)


def upper_bounds(kinds: Sequence[LedgerEntry], vectors: np.ndarray, *, delta: float | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Upper bounds on :func:`compose_counts` ``(ε, δ)`` for every row of ``vectors``.

    Each group of :func:`core.ledger.compose.compose_counts` is bounded by a quantity
    linear in the counts or computed in one vectorised pass:

    * pure runs: basic composition, and (one step size) randomized response's RDP curve
      converted at the group's slack, which bounds the optimal composition the exact
      rule computes (Kairouz–Oh–Viswanath: randomized response is the worst pure step);
      δ: the whole slack plus the additive δs;
    * RDP runs: dp-accounting's conversion formula on the summed curves, and for
      Gaussian runs only the bracketed exact Gaussian ε; δ: slack plus additive δs;
    * approximate runs: their sums;
    * the floor (no δ given): the largest single run's own ε.

    Every bound carries a relative margin of 1e-9 against floating-point rounding.

    Parameters
    ----------
    kinds : sequence of LedgerEntry
        The distinct privacy maps.
    vectors : numpy.ndarray, shape (n, len(kinds))
        Count vectors.
    delta : float, optional
        As for :func:`core.ledger.compose.compose_counts`.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        ε and δ bounds, shape (n,) each.

    Raises
    ------
    ParameterError
        When ``delta`` leaves no slack for some row (as the exact composition would).
    """
    t = _kind_table(kinds)
    V = np.asarray(vectors, dtype=float)
    n = V.shape[0]
    has_pure = (V[:, t.pure] * t.steps_total[t.pure]).sum(axis=1) > 0 if t.pure.any() else np.zeros(n, dtype=bool)
    has_rdp = V[:, t.rdp].sum(axis=1) > 0 if t.rdp.any() else np.zeros(n, dtype=bool)
    add = V @ t.d_add
    approx_d = V @ t.approx_delta
    if delta is None:
        slack_p = V @ t.d_comp
        slack_r = V @ t.d_conv
    else:
        delta = delta_value(delta, "delta")
        fixed = add + approx_d
        needy = has_pure.astype(int) + has_rdp.astype(int)
        rest = delta - fixed
        if np.any((needy > 0) & (rest <= 0)):
            raise ParameterError(f"δ = {delta:.3g} leaves no slack for composition: the runs' additive and (ε, δ) "
                                 f"terms already sum to {float(fixed.max()):.3g}; ask for a larger δ.")
        share = np.where(needy > 0, rest / np.maximum(needy, 1), 0.0)
        slack_p = slack_r = share
    add_p = V[:, t.pure] @ t.d_add[t.pure] if t.pure.any() else np.zeros(n)
    add_r = V[:, t.rdp] @ t.d_add[t.rdp] if t.rdp.any() else np.zeros(n)
    eps = np.zeros(n)
    dlt = np.zeros(n)
    if t.pure.any():
        basic = V @ t.basic
        pure_eps = basic.copy()
        usable = has_pure & (slack_p > 0) & (slack_p < 1)
        if t.one_step is not None and usable.any():
            from dp_accounting.rdp import rdp_privacy_accountant as rdp

            from core.ledger.maps import pure_dp_rdp

            grid = np.asarray(rdp.DEFAULT_RDP_ORDERS, dtype=float)
            grid = grid[grid > 1.0]
            rr = pure_dp_rdp([(t.one_step, 1)], grid)
            steps = V @ t.steps_total
            conv = _conversion(steps[usable, None] * rr[None, :], grid, slack_p[usable])
            pure_eps[usable] = np.minimum(basic[usable], conv)
        eps += np.where(has_pure, pure_eps, 0.0)
        dlt += np.where(has_pure, np.where(usable, slack_p, 0.0) + add_p, add_p)
    if t.rdp.any():
        rho = V[:, t.rdp] @ t.curves[t.rdp]
        sl = np.where(has_rdp, slack_r, 1.0)
        if np.any(has_rdp & ~((sl > 0) & (sl < 1))):
            raise ParameterError("the RDP runs need a conversion δ strictly between 0 and 1.")
        rdp_eps = _conversion(rho, t.orders, sl)
        gauss_only = has_rdp & ((V[:, t.rdp & ~t.gaussian].sum(axis=1) == 0) if (t.rdp & ~t.gaussian).any() else True)
        if np.any(gauss_only):
            mu_sq = V @ t.mu_sq
            g = _gaussian_upper(mu_sq[gauss_only], sl[gauss_only])
            rdp_eps[gauss_only] = np.minimum(rdp_eps[gauss_only], g)
        eps += np.where(has_rdp, rdp_eps, 0.0)
        dlt += np.where(has_rdp, slack_r + add_r, 0.0)
    if t.approx.any():
        eps += V @ t.approx_eps
        dlt += approx_d
    eps = eps * (1.0 + _MARGIN) + 1e-12
    if delta is None and V.shape[1]:
        present = V > 0
        floor = np.where(present, t.alone[None, :], 0.0).max(axis=1)
        eps = np.maximum(eps, floor)
    dlt = np.minimum(1.0, dlt * (1.0 + _MARGIN))
    return eps, dlt


def worst_total(kinds: Sequence[LedgerEntry], vectors: np.ndarray, *, delta: float | None = None,
                compose: Callable[[np.ndarray], LedgerTotal] | None = None) -> LedgerTotal:
    """The largest total over the rows of ``vectors``: ``(max ε, max δ)`` (module docstring).

    Each row's composition is a valid (ε, δ) for its units and for every unit whose
    vector lies below it; ``(max ε, max δ)`` is weaker than each, so it holds for every
    unit.  Only the maximal rows are composed, in decreasing order of their upper bounds,
    until no remaining bound can exceed the largest exact value found (in ε, then in δ).

    Parameters
    ----------
    kinds : sequence of LedgerEntry
    vectors : numpy.ndarray, shape (n, len(kinds))
        Count vectors (each unit's runs, the whole-data runs included).
    delta : float, optional
        As for :func:`core.ledger.compose.compose_counts`.
    compose : callable, optional
        ``compose(vector) -> LedgerTotal`` replacing :func:`compose_counts` (e.g. a
        budget check's best total); it must not exceed the own-δ composition.

    Returns
    -------
    LedgerTotal
        The largest row's total; with several classes ``method`` ends in ``+per-unit``
        and ``parts["n_classes"]`` says how many there were.
    """
    V = np.asarray(vectors)
    if V.ndim != 2 or V.shape[0] == 0:
        return compose_counts(kinds, [0] * len(kinds), delta=delta) if compose is None else compose(np.zeros(len(kinds), dtype=np.int64))
    V, _ = unique_rows(V)
    n_classes = V.shape[0]
    run = compose or (lambda v: compose_counts(kinds, v.tolist(), delta=delta))
    if n_classes == 1:
        return run(V[0])
    V = V[maximal(V)]
    if V.shape[0] == 1:
        best = run(V[0])
        return _per_unit(best, best.epsilon, best.delta, n_classes)
    ub_eps, ub_delta = upper_bounds(kinds, V, delta=delta)
    done: dict[int, LedgerTotal] = {}

    def exact(i: int) -> LedgerTotal:
        if i not in done:
            done[i] = run(V[i])
        return done[i]

    worst = None
    for i in np.argsort(-ub_eps, kind="stable"):
        if worst is not None and ub_eps[i] <= worst.epsilon:
            break
        t = exact(int(i))
        if worst is None or (t.epsilon, t.delta) > (worst.epsilon, worst.delta):
            worst = t
    top_delta = max(t.delta for t in done.values())
    for i in np.argsort(-ub_delta, kind="stable"):
        if ub_delta[i] <= top_delta:
            break
        top_delta = max(top_delta, exact(int(i)).delta)
    return _per_unit(worst, worst.epsilon, top_delta, n_classes)


def _per_unit(worst: LedgerTotal, eps: float, d: float, n_classes: int) -> LedgerTotal:
    detail = (f"{n_classes} groups of privacy units with different runs; the most-charged unit's runs: " + worst.detail
              + (f" δ raised to {d:.3g}, the largest unit's δ." if d > worst.delta else ""))
    return dataclasses.replace(worst, epsilon=float(eps), delta=float(d), method=worst.method + "+per-unit",
                               detail=detail, parts=dict(worst.parts, n_classes=n_classes))


def as_vectors(common: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Each class's full vector: its own counts plus the whole-data runs' ``common``.

    Parameters
    ----------
    common : numpy.ndarray, shape (d,)
    classes : numpy.ndarray, shape (n, d)

    Returns
    -------
    numpy.ndarray of int64, shape (n, d)
    """
    return np.asarray(classes, dtype=np.int64) + np.asarray(common, dtype=np.int64)[None, :]

