"""The data's total: the largest privacy unit's, over many classes of units (docs/design.md §9).

Every class of units (:mod:`core.ledger.classes`) has its own composition; the data's
total is ``(max ε, max δ)`` over the classes, each maximum taken apart (the pair is weaker
than every class's own, so it holds for every unit).  A million persons read by a hundred
runs on random subsets can fall into a million classes, so :func:`worst_total` never
composes them all, and its result is exact (the maximum itself, never below it):

1. **The floor apart.**  With no δ given, a class's ε is ``max(C, F)``: its composition
   ``C`` and the largest own ε ``F`` of a run it holds (:func:`core.ledger.compose.compose_counts`;
   a class of one run has ``C = F``).  So ``max ε = max(max C, max F)``, and ``max F`` is
   the largest own ε among the maps any class holds: one number per map.
2. **Few sums decide C.**  ``C`` reads a class's counts only through a few sums
   (:func:`signature`): the pure steps per step size and the pure slack, the Gaussian
   runs' ``μ² = Σ μ_i²`` (or the RDP runs' counts) and their slack, the approximate runs'
   ε.  ``C`` never decreases when a step count, ``μ²`` or an RDP count grows, nor when a
   slack shrinks (optimal composition, RDP conversion and the Gaussian profile all
   improve with δ), so only classes whose sums are not all beaten by another class's can
   hold the maximum (:func:`maximal`): for runs of one or a few settings that is at most
   a hundred or so classes, whatever the number of persons.
3. **Bounds, then exact composition.**  Each remaining class gets a cheap upper bound on
   ``C`` (:func:`upper_bounds`: basic composition and randomized response's RDP
   conversion for pure steps, dp-accounting's conversion formula on the summed RDP
   curves, a bisection bracket of the exact Gaussian ε, sums for the approximate runs,
   each with a relative margin of 1e-9), and classes are composed exactly in decreasing
   order of their bounds until the next bound is at most the largest exact value found.
4. **δ** is, per class, a sum of its runs' δs (and the pure slack when optimal
   composition wins): the same bound-then-exact search on that sum, computing only the
   pure group's comparison (:func:`core.ledger.compose.compose_delta`).

References
----------
.. [KOV15] P. Kairouz, S. Oh, P. Viswanath, "The composition theorem for differential
   privacy", ICML 2015 (randomized response is the worst pure step).
.. [M17] I. Mironov, "Rényi differential privacy", CSF 2017.
.. [BBGHS20] B. Balle, G. Barthe, M. Gaboardi, J. Hsu, T. Sato, "Hypothesis testing
   interpretations and Rényi differential privacy", AISTATS 2020 (the conversion).
.. [BW18] B. Balle, Y.-X. Wang, "Improving the Gaussian mechanism for differential
   privacy", ICML 2018 (the Gaussian privacy profile).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.errors import ParameterError
from core.ledger.compose import LedgerTotal, alone_epsilon, alone_upper, compose_counts, compose_delta
from core.ledger.entries import ApproxDPEntry, LedgerEntry, PureDPEntry, RDPEntry, delta_value

__all__ = ["delta_bounds", "maximal", "signature", "upper_bounds", "worst_total"]

_MARGIN = 1e-9
"""Relative margin added to every upper bound (floating-point rounding of the vectorised
formulas against the exact computations' own)."""

_CHUNK = 1 << 13
"""Classes handled at a time (bounded memory for a million classes of a hundred maps)."""


# ---------------------------------------------------------------------------------------
# Per map, the numbers the sums are made of
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Table:
    pure: np.ndarray          # is the map pure steps
    steps: np.ndarray         # (d, n_columns): steps of each size (Laplace steps in their own columns)
    sizes: np.ndarray         # each column's step size
    basic: np.ndarray         # Σ n ε of the map
    d_comp: np.ndarray
    d_add: np.ndarray
    rdp: np.ndarray
    gaussian_only: bool       # every RDP map is a Gaussian run
    mu_sq: np.ndarray
    d_conv: np.ndarray
    orders: np.ndarray
    curves: np.ndarray        # (d, n_orders), inf as 1e300
    approx: np.ndarray
    approx_eps: np.ndarray
    approx_delta: np.ndarray


def _table(kinds: Sequence[LedgerEntry]) -> _Table:
    d = len(kinds)
    pure = np.array([isinstance(k, PureDPEntry) for k in kinds], dtype=bool)
    rdp = np.array([isinstance(k, RDPEntry) for k in kinds], dtype=bool)
    approx = np.array([isinstance(k, ApproxDPEntry) for k in kinds], dtype=bool)
    # One column per step size and way of composing: Laplace coordinates (``laplace=True``) have
    # their own loss distribution, so they are never summed with generic steps of the same size.
    columns = sorted({(float(e), bool(k.laplace)) for k in kinds if isinstance(k, PureDPEntry) for e, _ in k.steps})
    where = {c: j for j, c in enumerate(columns)}
    sizes = np.array([e for e, _ in columns], dtype=float)
    steps = np.zeros((d, sizes.size))
    for i, k in enumerate(kinds):
        if isinstance(k, PureDPEntry):
            for e, n in k.steps:
                steps[i, where[(float(e), bool(k.laplace))]] += n
    rdp_kinds = [k for k in kinds if isinstance(k, RDPEntry)]
    if rdp_kinds:
        orders = np.unique(np.concatenate([np.asarray(k.orders) for k in rdp_kinds]))
        curves = np.zeros((d, orders.size))
        for i, k in enumerate(kinds):
            if isinstance(k, RDPEntry):
                curves[i] = np.minimum(k.curve(orders), 1e300)  # 0 runs × "inf" stays 0
    else:
        orders, curves = np.zeros(0), np.zeros((d, 0))

    def col(fn, kind):
        return np.array([float(fn(k)) if isinstance(k, kind) else 0.0 for k in kinds])

    return _Table(
        pure=pure, steps=steps, sizes=sizes, basic=col(lambda k: k.basic_epsilon, PureDPEntry),
        d_comp=col(lambda k: k.delta_composition, PureDPEntry),
        d_add=col(lambda k: k.delta_additive, (PureDPEntry, RDPEntry)), rdp=rdp,
        gaussian_only=all(k.gaussian_mu_sq is not None for k in rdp_kinds),
        mu_sq=col(lambda k: k.gaussian_mu_sq or 0.0, RDPEntry), d_conv=col(lambda k: k.delta_conversion, RDPEntry),
        orders=orders, curves=curves, approx=approx, approx_eps=col(lambda k: k.epsilon, ApproxDPEntry),
        approx_delta=col(lambda k: k.delta, ApproxDPEntry))


@dataclass(frozen=True)
class _Sums:
    """Per class (rows), the sums its composition reads."""

    steps: np.ndarray      # (n, n_sizes)
    slack_p: np.ndarray
    add_p: np.ndarray
    rdp: np.ndarray        # (n, 1) μ² for Gaussian runs only, else (n, n_rdp) counts
    slack_r: np.ndarray
    add_r: np.ndarray
    approx_eps: np.ndarray
    approx_delta: np.ndarray
    has_pure: np.ndarray
    has_rdp: np.ndarray


def _sums(t: _Table, V: np.ndarray, delta: float | None) -> _Sums:
    """The sums of full count vectors ``V`` (float, shape (n, d)), at the δ split of ``delta``."""
    n = V.shape[0]
    steps = V @ t.steps if t.steps.size else np.zeros((n, 0))
    has_pure = steps.sum(axis=1) > 0 if steps.shape[1] else np.zeros(n, dtype=bool)
    has_rdp = V[:, t.rdp].sum(axis=1) > 0 if t.rdp.any() else np.zeros(n, dtype=bool)
    add_p = V[:, t.pure] @ t.d_add[t.pure] if t.pure.any() else np.zeros(n)
    add_r = V[:, t.rdp] @ t.d_add[t.rdp] if t.rdp.any() else np.zeros(n)
    approx_delta = V @ t.approx_delta
    if delta is None:
        slack_p, slack_r = V @ t.d_comp, V @ t.d_conv
    else:
        fixed = add_p + add_r + approx_delta
        needy = has_pure.astype(int) + has_rdp.astype(int)
        rest = delta - fixed
        if np.any((needy > 0) & (rest <= 0)):
            raise ParameterError(f"δ = {delta:.3g} leaves no slack for composition: the runs' additive and (ε, δ) "
                                 f"terms already sum to {float(fixed.max()):.3g}; ask for a larger δ.")
        slack_p = slack_r = np.where(needy > 0, rest / np.maximum(needy, 1), 0.0)
    if t.rdp.any():
        rdp = (V @ t.mu_sq)[:, None] if t.gaussian_only else V[:, t.rdp]
    else:
        rdp = np.zeros((n, 0))
    return _Sums(steps, slack_p, add_p, rdp, slack_r, add_r, V @ t.approx_eps, approx_delta, has_pure, has_rdp)


def _full(classes: np.ndarray, common: np.ndarray, rows: slice | np.ndarray) -> np.ndarray:
    return np.asarray(classes[rows], dtype=float) + np.asarray(common, dtype=float)[None, :]


def signature(kinds: Sequence[LedgerEntry], classes: np.ndarray, common: np.ndarray, *,
              delta: float | None = None) -> np.ndarray | None:
    """Per class, the sums its composition's ε (without the floor) depends on, each oriented
    so that a larger value never lowers that ε (module docstring, step 2).

    Columns: pure steps per step size (Laplace steps apart), minus the pure slack, the Gaussian runs' ``μ²`` (or
    each RDP map's count), minus the RDP slack, the approximate runs' ε.

    Parameters
    ----------
    kinds : sequence of LedgerEntry
    classes : numpy.ndarray, shape (n, len(kinds))
        Count vectors of the classes (without the whole-data runs).
    common : numpy.ndarray, shape (len(kinds),)
        Counts of the whole-data runs.
    delta : float, optional

    Returns
    -------
    numpy.ndarray of float, shape (n, s), or None
        None where a pure slack reaches 1 (basic composition then replaces the optimal
        one, and a larger slack no longer means a smaller ε).
    """
    t = _table(kinds)
    out = []
    for start in range(0, classes.shape[0], _CHUNK):
        s = _sums(t, _full(classes, common, slice(start, start + _CHUNK)), delta)
        if np.any(s.has_pure & (s.slack_p >= 1.0)):
            return None
        cols = [s.steps]
        if s.steps.shape[1]:
            cols.append(-s.slack_p[:, None])
        if s.rdp.shape[1]:
            cols += [s.rdp, -s.slack_r[:, None]]
        if t.approx.any():
            cols.append(s.approx_eps[:, None])
        out.append(np.column_stack(cols) if cols else np.zeros((s.steps.shape[0], 0)))
    return np.concatenate(out) if out else np.zeros((0, 0))


def maximal(rows: np.ndarray, *, work: float = 2e8) -> np.ndarray:
    """Indices of rows not beaten in every column by another row (one index per distinct row).

    One or two columns: by sorting (exact); more: rows are visited from the largest sum
    down and each removes the rows it beats, until about ``work`` comparisons were made
    (keeping a beaten row is allowed: it is only composed needlessly).

    Parameters
    ----------
    rows : numpy.ndarray, shape (n, s)
    work : float

    Returns
    -------
    numpy.ndarray of int64
    """
    n, s = rows.shape
    if n <= 1:
        return np.arange(n)
    if s == 0:
        return np.arange(1)
    order = np.lexsort(rows.T[::-1])[::-1]  # descending, lexicographic
    r = rows[order]
    distinct = np.ones(n, dtype=bool)
    distinct[1:] = np.any(r[1:] != r[:-1], axis=1)
    order, r = order[distinct], r[distinct]
    if s == 1:
        return order[:1]
    if s == 2:  # sorted by the first column (then the second) descending: keep new highs of the second
        best = np.maximum.accumulate(r[:, 1])
        keep = np.ones(r.shape[0], dtype=bool)
        keep[1:] = r[1:, 1] > best[:-1]
        return np.sort(order[keep])
    alive = np.ones(r.shape[0], dtype=bool)
    by_sum = np.argsort(-r.sum(axis=1), kind="stable")
    spent = 0.0
    for i in by_sum:
        if not alive[i]:
            continue
        if spent > work:
            break
        beaten = np.all(r <= r[i], axis=1)
        beaten[i] = False
        alive &= ~beaten
        spent += r.shape[0] * s
    return np.sort(order[alive])


# ---------------------------------------------------------------------------------------
# Bounds
# ---------------------------------------------------------------------------------------

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
    return np.maximum(0.0, eps.min(axis=1)) if eps.shape[1] else np.full(rho.shape[0], np.inf)


def _gaussian_upper(mu_sq: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """Upper ends of bisection brackets of the exact Gaussian ε at δ (Balle–Wang 2018):
    ``δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)`` decreases in ε, and every upper end
    has ``δ(hi) ≤ δ``; the bracket is closed to 1e-10 relative."""
    from scipy.special import log_ndtr

    mu = np.sqrt(np.maximum(mu_sq, 1e-300))

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
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        over = log_delta(mid) > target
        lo = np.where(over, mid, lo)
        hi = np.where(over, hi, mid)
        if np.all(hi - lo <= 1e-10 * np.maximum(hi, 1e-300)):
            break
    return np.where(zero, 0.0, hi)


def upper_bounds(kinds: Sequence[LedgerEntry], classes: np.ndarray, common: np.ndarray | None = None, *,
                 delta: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Upper bounds on the composition ``(C, δ)`` of each class, without the floor (module docstring, step 3).

    Parameters
    ----------
    kinds : sequence of LedgerEntry
    classes : numpy.ndarray, shape (n, len(kinds))
    common : numpy.ndarray, optional
        Counts of the whole-data runs (added to every class).
    delta : float, optional

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        Bounds on ε (without the floor) and on δ, shape (n,) each.
    """
    t = _table(kinds)
    common = np.zeros(len(kinds)) if common is None else common
    eps_out, delta_out = [], []
    for start in range(0, classes.shape[0], _CHUNK):
        V = _full(classes, common, slice(start, start + _CHUNK))
        s = _sums(t, V, delta)
        n = V.shape[0]
        eps = np.zeros(n)
        dlt = np.zeros(n)
        if s.steps.shape[1]:
            basic = V @ t.basic
            pure = basic.copy()
            usable = s.has_pure & (s.slack_p > 0) & (s.slack_p < 1)
            if np.unique(t.sizes).size == 1 and usable.any():  # one step size (Laplace or not): pure steps
                from dp_accounting.rdp import rdp_privacy_accountant as rdp

                from core.ledger.maps import pure_dp_rdp

                grid = np.asarray(rdp.DEFAULT_RDP_ORDERS, dtype=float)
                grid = grid[grid > 1.0]
                rr = pure_dp_rdp([(float(t.sizes[0]), 1)], grid)
                conv = _conversion(s.steps[usable].sum(axis=1, keepdims=True) * rr[None, :], grid, s.slack_p[usable])
                pure[usable] = np.minimum(basic[usable], conv)
            eps += np.where(s.has_pure, pure, 0.0)
            dlt += np.where(usable, s.slack_p, 0.0) + s.add_p
        else:
            dlt += s.add_p
        if s.rdp.shape[1]:
            sl = np.where(s.has_rdp, s.slack_r, 0.5)
            if np.any(s.has_rdp & ~((sl > 0) & (sl < 1))):
                raise ParameterError("the RDP runs need a conversion δ strictly between 0 and 1.")
            rho = V[:, t.rdp] @ t.curves[t.rdp]
            rdp_eps = _conversion(rho, t.orders, sl)
            if t.gaussian_only:
                rdp_eps = np.minimum(rdp_eps, _gaussian_upper(s.rdp[:, 0], sl))
            eps += np.where(s.has_rdp, rdp_eps, 0.0)
            dlt += np.where(s.has_rdp, s.slack_r, 0.0) + s.add_r
        eps += s.approx_eps
        dlt += s.approx_delta
        eps_out.append(eps * (1.0 + _MARGIN) + 1e-12)
        delta_out.append(np.minimum(1.0, dlt * (1.0 + _MARGIN)))
    return np.concatenate(eps_out), np.concatenate(delta_out)


def delta_bounds(kinds: Sequence[LedgerEntry], classes: np.ndarray, common: np.ndarray | None = None, *,
                 delta: float | None = None) -> np.ndarray:
    """The δ bounds of :func:`upper_bounds` alone (sums only: cheap for a million classes).

    Parameters
    ----------
    kinds, classes, common, delta
        As for :func:`upper_bounds`.

    Returns
    -------
    numpy.ndarray, shape (n,)
    """
    t = _table(kinds)
    common = np.zeros(len(kinds)) if common is None else common
    out = []
    for start in range(0, classes.shape[0], _CHUNK):
        s = _sums(t, _full(classes, common, slice(start, start + _CHUNK)), delta)
        usable = s.has_pure & (s.slack_p > 0) & (s.slack_p < 1)
        dlt = (np.where(usable, s.slack_p, 0.0) + s.add_p + np.where(s.has_rdp, s.slack_r, 0.0) + s.add_r
               + s.approx_delta)
        out.append(np.minimum(1.0, dlt * (1.0 + _MARGIN)))
    return np.concatenate(out) if out else np.zeros(0)


# ---------------------------------------------------------------------------------------
# The largest class's total
# ---------------------------------------------------------------------------------------

def _search(bounds: np.ndarray, exact, start: float = -np.inf) -> tuple[float, int | None]:
    """The largest ``exact(i)``, visiting ``i`` by decreasing ``bounds`` until none can beat it."""
    best, arg = start, None
    for i in np.argsort(-bounds, kind="stable"):
        if bounds[i] <= best:
            break
        v = exact(int(i))
        if v > best:
            best, arg = v, int(i)
    return best, arg


def worst_total(kinds: Sequence[LedgerEntry], classes: np.ndarray, common: np.ndarray | None = None, *,
                delta: float | None = None) -> LedgerTotal:
    """The data's total: ``(max ε, max δ)`` over the classes (module docstring).

    Parameters
    ----------
    kinds : sequence of LedgerEntry
        The distinct privacy maps.
    classes : numpy.ndarray, shape (n, len(kinds))
        Each class's count vector (without the whole-data runs); distinct rows.
    common : numpy.ndarray, shape (len(kinds),), optional
        The whole-data runs' counts, added to every class.
    delta : float, optional
        As for :func:`core.ledger.compose.compose_counts`.

    Returns
    -------
    LedgerTotal
        The total of the class with the largest ε, its ε and δ raised to the maxima; with
        several classes ``method`` ends in ``+per-unit`` and ``parts["n_classes"]`` says
        how many there were.
    """
    d = len(kinds)
    classes = np.asarray(classes)
    classes = classes.reshape(classes.shape[0] if classes.ndim else 0, d)
    common = np.zeros(d, dtype=np.int64) if common is None else np.asarray(common, dtype=np.int64)
    n = classes.shape[0]
    if delta is not None:
        delta = delta_value(delta, "delta")

    def counts(i: int) -> list:
        return (np.asarray(classes[i], dtype=np.int64) + common).tolist()

    if n <= 1:
        return compose_counts(kinds, counts(0) if n else common.tolist(), delta=delta)
    done: dict[int, LedgerTotal] = {}

    def composed(i: int) -> LedgerTotal:
        if i not in done:
            done[i] = compose_counts(kinds, counts(i), delta=delta, floor=False)
        return done[i]

    sig = signature(kinds, classes, common, delta=delta)
    candidates = maximal(sig) if sig is not None else np.arange(n)
    ub_eps, _ = upper_bounds(kinds, classes[candidates], common, delta=delta)
    top_c, arg = _search(ub_eps, lambda j: composed(int(candidates[j])).epsilon)
    worst = int(candidates[arg])
    eps = top_c
    if delta is None:  # the floor apart: the largest own ε of a map any class holds (≥ 2 runs or not)
        present = (np.asarray(classes).max(axis=0) > 0) | (common > 0)
        ups = [(alone_upper(k), i) for i, k in enumerate(kinds) if present[i]]
        for up, i in sorted(ups, reverse=True):
            if up <= eps:
                break
            own = alone_epsilon(kinds[i])
            if own > eps:
                eps = own
    ub_delta = delta_bounds(kinds, classes, common, delta=delta)
    top_delta, _ = _search(ub_delta, lambda i: done[i].delta if i in done else compose_delta(kinds, counts(i), delta=delta),
                           max(t.delta for t in done.values()))
    full = compose_counts(kinds, counts(worst), delta=delta)
    return _per_unit(full, max(eps, full.epsilon), max(top_delta, full.delta), n)


def _per_unit(worst: LedgerTotal, eps: float, d: float, n_classes: int) -> LedgerTotal:
    detail = (f"{n_classes} groups of privacy units with different runs; the most-charged unit's runs: " + worst.detail
              + (f" ε raised to {eps:.4g}, the largest unit's." if eps > worst.epsilon else "")
              + (f" δ raised to {d:.3g}, the largest unit's δ." if d > worst.delta else ""))
    return dataclasses.replace(worst, epsilon=float(eps), delta=float(d), method=worst.method + "+per-unit",
                               detail=detail, parts=dict(worst.parts, n_classes=n_classes))
