"""Smooth sensitivity of Confident-GNMax's data-dependent RDP (docs/design.md §8.5 step 2).

(The per-query analysis it walks over — the local sensitivity of GNMax's term at distance d
and the conditions C5–C6 — is :mod:`core.accounting.gnmax_sensitivity`.)

The certified guarantee (:mod:`core.mechanisms.certified`) releases a noisy version of

    E(D) = Σ_i [ρ_thr,i(λ) + ρ_gn,i(λ)]

(the data-dependent RDP of every query's threshold step and GNMax answer at one order
λ).  Its noise is scaled by a β-smooth upper bound on the local sensitivity of E
(Nissim, Raskhodnikova, Smith 2007):

    S(D) = max_{d ≥ 0} e^{−βd} Σ_i A_i(D, d),

where ``A_i(D, d)`` bounds the local sensitivity of query i's term at every dataset
within d teacher changes of D.  One teacher change moves one vote in every query at
once, so ``Σ_i A_i(D, d)`` bounds the local sensitivity of E on that ball, and
``A_i(D, d) ≤ A_i(D', d + 1)`` for neighbours D, D' makes S β-smooth:
``S(D) ≤ e^β S(D')``.

**Every value here describes the private data: S(D), E(D) and the per-distance
profile are NON-PRIVATE diagnostics.**  Only their noisy releases in
:mod:`core.mechanisms.certified` leave the private side.

How ``A_i`` is computed (PATE 2018, Appendix B, Algorithms 3–5, Prop. 13)
---------------------------------------------------------------------------
GNMax term.  ``ρ_gn`` is a function ``f(q̃)`` of Prop. 7's ``q̃``: Theorem 6's bound
for ``q̃ ≤ q0`` and the data-independent ``λ/σ2²`` above, where ``q0`` is where the two
meet (:class:`GNMaxSensitivity`).  A neighbour's ``q̃`` lies in ``[bl(q̃), bu(q̃)]`` with
``bu/bl(q) = (K−1) Φ(Φ⁻¹(q/(K−1)) ± √2/σ2)`` (every gap moves by at most 2 and the
Gaussian ROC curve is concave), so with ``f`` non-decreasing (condition C5) the local
sensitivity at ``q̃`` is at most ``g(q) = max(f(bu(q)) − f(q), f(q) − f(bl(q)))``,
evaluated at ``q1 = bl(q0)`` for ``q ∈ [q1, q0]`` (Algorithm 3).  With condition C6
(``f(bu(q)) − f(q)`` non-decreasing on ``(0, q1]``), g is non-decreasing up to ``q1``,
flat (the plateau) on ``[q1, q0]`` and non-increasing above ``q0``.  The maximum over
the ball of radius d is therefore g at the reachable ``q̃`` nearest the plateau: the
smallest reachable ``q̃`` (move d votes from the runner-up to the top, one at a time)
when ``q̃ > q0``, the largest (move d votes from the top to the runner-up) when
``q̃ < q1`` — and the plateau once the walk reaches or crosses ``[q1, q0]``
(Algorithms 4–5).  C5 and C6 are checked numerically on a dense grid for the given
(σ2, K, λ) (:func:`check_conditions`); a failure raises ``ParameterError``.

Threshold term.  ``ρ_thr`` depends only on the top count v; a neighbour moves v by at
most 1, so the local sensitivity at v is at most ``max |ρ_thr(v ± 1) − ρ_thr(v)|`` over
the feasible ``v ± 1`` (``ceil(k/K) ≤ v ≤ k``), and ``A_i(d)`` is the maximum of that
over ``[v − d, v + d]``.  Computed exactly from a table over v.

Cost: O(k²) for the threshold table plus O(m · K) per distance step for the walking
queries (vote tables are integer lookups), with an early stop once
``e^{−βd} · (largest possible Σ_i A_i)`` cannot beat the running maximum.

References
----------
K. Nissim, S. Raskhodnikova, A. Smith, "Smooth sensitivity and sampling in private data
analysis", STOC 2007.
N. Papernot et al., "Scalable Private Learning with PATE", ICLR 2018, Appendix B
(Algorithms 3–5, Prop. 13, conditions C5–C6).
"""


from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr, logsumexp

from core.accounting.data_dependent import (
    log_q_threshold_of_top,
    rdp_from_logq_unchecked,
)
from core.accounting.gnmax_sensitivity import GNMaxSensitivity, gnmax_sensitivity
from core.accounting.rdp import check_order, check_sigma
from core.validation import check_counts, check_real

__all__ = [
    "SmoothSensitivityProfile",
    "certified_rdp_terms",
    "certified_rdp_terms_from_sensitivity",
    "confident_gnmax_smooth_sensitivity",
    "local_sensitivity_profile",
    "smooth_sensitivity_profile",
]


def _threshold_table(k: int, n_classes: int, threshold: float, sigma1: float, order: float):
    """ρ_thr(v) for v = 0..k, and the bound on the local sensitivity at v."""
    v = np.arange(k + 1)
    rho = rdp_from_logq_unchecked(log_q_threshold_of_top(v, threshold, sigma1), math.sqrt(2.0) * sigma1, np.array([order]))[:, 0]
    vmin = -(-k // n_classes)  # ceil(k / K): the smallest possible top count
    ls = np.zeros(k + 1)
    up = np.abs(np.diff(rho))  # |ρ(v+1) − ρ(v)| for v = 0..k−1
    ls[:-1] = up
    ls[1:] = np.maximum(ls[1:], up)
    ls[vmin] = up[vmin] if vmin < k else 0.0  # v − 1 is infeasible at vmin
    ls[:vmin] = 0.0
    return rho, ls, vmin


def _checked(counts, threshold, sigma1):
    """The votes, the threshold t and σ1, checked (every entry point's first step)."""
    return check_counts(counts), check_real(threshold, "threshold"), check_sigma(sigma1, "sigma1")


def certified_rdp_terms(counts, *, threshold: float, sigma1: float, sigma2: float, order: float):
    """Per-query terms of ``E(D)`` at one order: ``(ρ_thr, ρ_gn)``, each shape (m,).

    ``ρ_thr`` is :func:`core.accounting.data_dependent.threshold_rdp_data_dependent` at λ; ``ρ_gn``
    is GNMax's data-dependent bound under the ``q0`` rule (Theorem 6 for ``q̃ ≤ q0``,
    ``λ/σ2²`` above), which equals ``min(ρ_dd, λ/σ2²)`` of
    :func:`core.accounting.data_dependent.gnmax_rdp_data_dependent` for ``q̃ ≤ q0`` and is never
    smaller.  Both are capped by the data-independent bound.

    **NON-PRIVATE**: functions of the private votes.

    Parameters
    ----------
    counts : array-like of int, shape (m, n_classes)
        Vote counts per query (private; equal totals k).
    threshold : float
        The threshold ``t`` (votes).
    sigma1 : float
        Threshold noise σ1, > 0.
    sigma2 : float
        Answer noise σ2, > 0.
    order : float
        Rényi order λ.

    Returns
    -------
    (rho_thr, rho_gn) : tuple of numpy.ndarray of float, each shape (m,)

    Notes
    -----
    docs/design.md §8.5; the papers are cited in this module's References.
    """
    counts, threshold, sigma1 = _checked(counts, threshold, sigma1)
    sigma2 = check_sigma(sigma2, "sigma2")
    order = check_order(order)
    a = gnmax_sensitivity(sigma=sigma2, n_classes=counts.shape[1], order=order)
    return certified_rdp_terms_from_sensitivity(counts, threshold, sigma1, a)


def certified_rdp_terms_from_sensitivity(counts: np.ndarray, threshold: float, sigma1: float, a: GNMaxSensitivity):
    """:func:`certified_rdp_terms` with GNMax's sensitivity analysis already computed.

    **NON-PRIVATE**: functions of the private votes.

    Parameters
    ----------
    counts : numpy.ndarray of int, shape (m, K)
        Vote counts, as returned by :func:`core.validation.check_counts`.
    threshold : float
        Confident-GNMax's threshold t.
    sigma1 : float
        The threshold noise σ1 (> 0).
    a : GNMaxSensitivity
        :func:`gnmax_sensitivity` at the run's σ2, K and order λ.

    Returns
    -------
    rho_thr : numpy.ndarray of float, shape (m,)
        The threshold step's data-dependent RDP at λ.
    rho_gn : numpy.ndarray of float, shape (m,)
        GNMax's data-dependent RDP at λ under the ``q0`` rule (zeros with one class).

    References
    ----------
    N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar, Ú. Erlingsson,
    "Scalable Private Learning with PATE", ICLR 2018 (Theorem 6, Appendix B).
    """
    from core.accounting.data_dependent import log_q_gnmax_unchecked

    thr = rdp_from_logq_unchecked(log_q_threshold_of_top(counts.max(axis=1), threshold, sigma1), math.sqrt(2.0) * sigma1,
                         np.array([a.order]))[:, 0]
    gn = a.rho(log_q_gnmax_unchecked(counts, a.sigma)) if counts.shape[1] > 1 else np.zeros(counts.shape[0])
    return thr, gn


# ---------------------------------------------------------------------------- profile


@dataclass(frozen=True)
class SmoothSensitivityProfile:
    """Smooth sensitivity of E at one order, with its per-distance profile.

    **NON-PRIVATE diagnostic**: every field describes the private votes.

    Attributes
    ----------
    smooth : float
        ``S(D) = max_d e^{−βd} (ls_threshold[d] + ls_gnmax[d])``.
    argmax_d : int
        The distance attaining it.
    ls_threshold, ls_gnmax : numpy.ndarray
        ``Σ_i A_i(D, d)`` of each term for ``d = 0 .. len − 1`` (computed up to the
        early stop; larger d cannot raise S).
    beta, order : float
    """

    smooth: float
    argmax_d: int
    ls_threshold: np.ndarray
    ls_gnmax: np.ndarray
    beta: float
    order: float

    @property
    def ls_total(self) -> np.ndarray:
        """Per-distance total local sensitivity, ``ls_threshold + ls_gnmax``.

        Returns
        -------
        numpy.ndarray of float
        """
        return self.ls_threshold + self.ls_gnmax


def _gnmax_walk(counts: np.ndarray, a: GNMaxSensitivity, k: int, after_step) -> np.ndarray:
    """``Σ_i A_i(d)`` of the GNMax term for d = 0..k (Algorithms 4–5, all queries at once).

    Each query walks from its histogram towards the plateau: runner-up → top when
    ``q̃ > q0`` (smallest reachable ``q̃``), top → runner-up when ``q̃ < q1`` (largest);
    rows are kept sorted in decreasing order.  A query leaves the walk when it reaches
    or crosses the plateau (its A_i is the plateau from then on) or cannot move (no
    runner-up vote left).  ``after_step(d, total_d)`` is called after each distance and
    returns True to stop early; the entries after an early stop are NaN.
    """
    n_classes = counts.shape[1]
    total = np.full(k + 1, np.nan)
    if n_classes < 2:
        total[:] = 0.0
        after_step(0, 0.0)
        return total
    table = log_ndtr(-np.arange(k + 1, dtype=float) / (math.sqrt(2.0) * a.sigma))  # log Φ(−g/(√2σ)), g = 0..k
    linear = table[-1] > -700.0  # every term is a normal double: sum in linear space
    lin_table = np.exp(table)

    def logq_of(srt: np.ndarray) -> np.ndarray:
        gaps = srt[:, :1] - srt[:, 1:]
        if linear:
            with np.errstate(divide="ignore"):
                lq = np.log(lin_table[gaps].sum(axis=1))
        else:
            lq = logsumexp(table[gaps], axis=1)
        return np.minimum(lq, a.log_cap)


    srt = -np.sort(-counts, axis=1)  # descending
    logq = logq_of(srt)
    left = logq > a.logq0
    right = logq < a.logq1
    ls0 = a.local_sensitivity(logq)
    total[0] = ls0.sum()
    # `constant`: Σ of A_i over the queries that no longer change.
    constant = a.plateau * np.count_nonzero(~left & ~right)
    sl = srt[left].copy()
    stuck = sl[:, 1] == 0
    constant += ls0[left][stuck].sum()
    sl = sl[~stuck]
    sr = srt[right].copy()
    if after_step(0, total[0]):
        return total
    for d in range(1, k + 1):
        moving = 0.0
        if sl.shape[0]:
            sl[:, 0] += 1
            j = (sl[:, 1:] == sl[:, 1:2]).sum(axis=1)  # last index of the runner-up's run
            sl[np.arange(sl.shape[0]), j] -= 1
            lq = logq_of(sl)
            done = lq <= a.logq0
            val = np.full(lq.shape, a.plateau)
            val[~done] = a.ls_above(lq[~done])
            fixed = done | (sl[:, 1] == 0)
            constant += val[fixed].sum()
            moving += val[~fixed].sum()
            sl = sl[~fixed]
        if sr.shape[0]:
            sr[:, 0] -= 1
            sr[:, 1] += 1
            swap = sr[:, 1] > sr[:, 0]
            if np.any(swap):
                sr[swap, :2] = sr[swap, 1::-1]
            lq = logq_of(sr)
            done = lq >= a.logq1
            val = np.full(lq.shape, a.plateau)
            val[~done] = a.ls_below(lq[~done])
            constant += val[done].sum()
            moving += val[~done].sum()
            sr = sr[~done]
        total[d] = constant + moving
        if sl.shape[0] == 0 and sr.shape[0] == 0:
            total[d + 1:] = total[d]  # nothing moves any more: constant from here on
            after_step(d, total[d])
            break
        if after_step(d, total[d]):
            break
    return total


def _window_max(ls_v: np.ndarray, vmin: int, k: int, d_max: int) -> np.ndarray:
    """``W[v, d]`` = max of ``ls_v`` over ``[max(vmin, v−d), min(k, v+d)]``, shape (k+1, d_max+1)."""
    w = np.zeros((k + 1, d_max + 1))
    w[:, 0] = ls_v
    v = np.arange(k + 1)
    for d in range(1, d_max + 1):
        lo = np.clip(v - d, vmin, k)
        hi = np.clip(v + d, 0, k)
        w[:, d] = np.maximum(w[:, d - 1], np.maximum(ls_v[lo], ls_v[hi]))
        if d >= k:
            w[:, d + 1:] = w[:, [d]]
            break
    return w


def local_sensitivity_profile(counts, *, threshold: float, sigma1: float, sigma2: float, order: float,
                              d_max: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per-query ``A_i(D, d)`` of both terms for ``d = 0..d_max`` (default k).

    Loops over queries: for diagnostics and tests, not for large m.

    **NON-PRIVATE diagnostic**.

    Parameters
    ----------
    counts, threshold, sigma1, sigma2, order
        As in :func:`certified_rdp_terms`.
    d_max : int, optional
        Largest distance ``d`` (default: k, the number of teachers).

    Returns
    -------
    (ls_threshold, ls_gnmax) : each numpy.ndarray of shape (m, d_max + 1)

    Notes
    -----
    docs/design.md §8.5; the papers are cited in this module's References.
    """
    counts, threshold, sigma1 = _checked(counts, threshold, sigma1)
    m, n_classes = counts.shape
    k = int(counts[0].sum())
    d_max = k if d_max is None else int(d_max)
    a = gnmax_sensitivity(sigma=sigma2, n_classes=n_classes, order=order)
    _, ls_v, vmin = _threshold_table(k, n_classes, threshold, sigma1, a.order)
    thr = _window_max(ls_v, vmin, k, d_max)[counts.max(axis=1)]
    gn = np.zeros((m, d_max + 1))
    for i in range(m):
        full = _gnmax_walk(counts[i:i + 1], a, k, lambda d, t: False)
        n = min(d_max, k) + 1
        gn[i, :n] = full[:n]
        gn[i, n:] = full[k]
    return thr, gn


def smooth_sensitivity_profile(counts, *, threshold: float, sigma1: float, sigma2: float, order: float,
                               beta: float) -> SmoothSensitivityProfile:
    """``S(D)`` and its per-distance profile (docs/design.md §8.5 step 2).

    ``S(D) = max_{0 ≤ d ≤ k} e^{−βd} Σ_i A_i(D, d)`` (beyond d = k every histogram is
    reachable, so ``A_i`` is constant and the discounted value only falls).  The walk
    stops early once ``e^{−βd} · m · (plateau_gn + max LS_thr)`` — an upper bound on
    every later discounted value — cannot beat the running maximum.

    **NON-PRIVATE diagnostic**: S(D) describes the private votes; only its noisy
    release in :mod:`core.mechanisms.certified` is private.

    Parameters
    ----------
    counts : array-like of int, shape (m, K)
        Vote counts (every row sums to k).
    threshold, sigma1, sigma2 : float
        Confident-GNMax's public parameters.
    order : float
        The Rényi order λ of E (> 1.01).
    beta : float
        Smoothness β > 0.

    Returns
    -------
    SmoothSensitivityProfile
    """
    counts, threshold, sigma1 = _checked(counts, threshold, sigma1)
    beta = check_real(beta, "beta", 0.0, math.inf, low_open=True)
    m, n_classes = counts.shape
    k = int(counts[0].sum())
    a = gnmax_sensitivity(sigma=sigma2, n_classes=n_classes, order=order)
    _, ls_v, vmin = _threshold_table(k, n_classes, threshold, sigma1, a.order)
    window = _window_max(ls_v, vmin, k, k)
    thr_sums = np.bincount(counts.max(axis=1), minlength=k + 1) @ window  # Σ_i A_thr,i(d), d = 0..k
    upper = m * (a.plateau + float(ls_v.max()))
    best = [-np.inf]

    def after_step(d: int, total_d: float) -> bool:
        best[0] = max(best[0], math.exp(-beta * d) * (thr_sums[d] + total_d))
        return math.exp(-beta * (d + 1)) * upper <= best[0]

    gn = _gnmax_walk(counts, a, k, after_step)
    n = int(np.argmax(np.isnan(gn))) if np.isnan(gn).any() else k + 1
    ls_gn, ls_thr = gn[:n], thr_sums[:n]
    disc = np.exp(-beta * np.arange(n)) * (ls_thr + ls_gn)
    j = int(np.argmax(disc))
    return SmoothSensitivityProfile(float(disc[j]), j, ls_thr, ls_gn, float(beta), a.order)


def confident_gnmax_smooth_sensitivity(counts, *, threshold: float, sigma1: float, sigma2: float,
                                       order: float, beta: float) -> float:
    """``S(D) = max_{d≥0} e^{−βd} Σ_i LS_i(d)`` for Confident-GNMax's E at order λ.

    See the module docstring for the analysis; :func:`smooth_sensitivity_profile`
    returns the per-distance profile too.

    **NON-PRIVATE diagnostic**: a function of the private votes.

    Parameters
    ----------
    counts, threshold, sigma1, sigma2, order
        As in :func:`certified_rdp_terms`.
    beta : float
        Smoothness parameter β > 0.

    Returns
    -------
    float

    Notes
    -----
    docs/design.md §8.5; the papers are cited in this module's References.
    """
    return smooth_sensitivity_profile(counts, threshold=threshold, sigma1=sigma1, sigma2=sigma2,
                                      order=order, beta=beta).smooth
