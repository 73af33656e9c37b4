"""Local sensitivity of GNMax's data-dependent RDP at distance d (docs/design.md §8.5 step 2).

:class:`GNMaxSensitivity` holds, for one (σ, number of classes, order λ), the per-query
analysis that the smooth sensitivity of :mod:`core.accounting.smooth_sensitivity` walks
over: the data-dependent RDP as a function of ``log q̃``, its upper and lower bounds on a
neighbouring dataset, and the local sensitivity; :func:`check_conditions` checks PATE 2018's
conditions C5–C6 (numerically, on a grid) under which that analysis holds.

References
----------
N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar, Ú. Erlingsson, "Scalable
Private Learning with PATE", ICLR 2018 (Theorem 6, Algorithms 3–5, Appendix B.4).
K. Nissim, S. Raskhodnikova, A. Smith, "Smooth Sensitivity and Sampling in Private Data
Analysis", STOC 2007.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize
from scipy.special import log_ndtr, ndtri_exp

from core.accounting.data_dependent import (
    rdp_from_logq_unchecked,
    theorem6_bound,
)
from core.accounting.rdp import check_order, check_sigma
from core.errors import ParameterError

__all__ = [
    "GNMaxSensitivity",
    "check_conditions",
    "gnmax_sensitivity",
]

_SQRT2 = math.sqrt(2.0)
_GRID = 4000  # points of the numerical check of C5/C6


# ---------------------------------------------------------------------------- GNMax


def _dd_raw(x: float, sigma: float, order: float) -> tuple[float, bool]:
    dd, cond = theorem6_bound(np.array([x]), sigma, np.array([order]))
    return float(dd[0, 0]), bool(cond[0, 0])


def _compute_logq0(sigma: float, order: float) -> float:
    """``log q0``: where Theorem 6's bound meets ``λ/σ²`` (data-dependent below it)."""
    ind = order / sigma**2
    # Upper end where Theorem 6's conditions are guaranteed (μ2 ≥ σ + 1 > 1,
    # μ1 ≥ λ + 0.01, q e^{ε2} < 1).
    x_hi = min(-(1.0 + 1.0 / sigma) ** 2, -((order - 0.99) / sigma) ** 2, -1.0 / sigma**2)
    val, ok = _dd_raw(x_hi, sigma, order)
    if not ok:
        raise ParameterError(
            f"Theorem 6's conditions fail at the start of the search for sigma = {sigma:g}, "
            f"order = {order:g}; choose a larger sigma or a smaller order."
        )
    if val - ind < 0:
        return x_hi
    x_lo = 2.0 * x_hi
    while _dd_raw(x_lo, sigma, order)[0] - ind > 0:
        x_lo *= 1.5
        if x_lo < -1e7:
            raise ParameterError(f"Could not bracket q0 for sigma = {sigma:g}, order = {order:g}.")
    x0 = optimize.brentq(lambda x: _dd_raw(x, sigma, order)[0] - ind, x_lo, x_hi, xtol=1e-14, rtol=1e-14)
    # Stay on the data-dependent side of the root (dd(x0) ≤ λ/σ²).
    while _dd_raw(x0, sigma, order)[0] > ind:
        x0 = np.nextafter(x0, -np.inf) - 1e-13 * abs(x0)
    if not _dd_raw(x0, sigma, order)[1]:
        raise ParameterError(f"Theorem 6's conditions fail at q0 for sigma = {sigma:g}, order = {order:g}.")
    return float(x0)


@dataclass(frozen=True)
class GNMaxSensitivity:
    """Local-sensitivity analysis of GNMax's data-dependent RDP at one order.

    Public: depends only on (σ, K, λ).  The methods evaluate functions of ``logq`` (a
    float or array-like: ``log q̃``, the natural log of the bound on the probability of a
    non-plurality answer), elementwise; they are private when applied to private votes.

    Attributes
    ----------
    sigma : float
        GNMax noise σ (σ2 of Confident-GNMax).
    n_classes : int
        K.
    order : float
        λ.
    logq0 : float
        ``log q0``: Theorem 6's bound is used for ``q̃ ≤ q0``, ``λ/σ²`` above.
    logq1 : float
        ``log bl(q0)``: start of the plateau of the local-sensitivity bound.
    plateau : float
        The largest local-sensitivity bound of one query (the value on ``[q1, q0]``).

    References
    ----------
    N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar, Ú. Erlingsson,
    "Scalable Private Learning with PATE", ICLR 2018 (Theorem 6, Algorithm 3, Appendix B.4).
    K. Nissim, S. Raskhodnikova, A. Smith, "Smooth Sensitivity and Sampling in Private
    Data Analysis", STOC 2007.
    docs/design.md §8.5.
    """

    sigma: float
    n_classes: int
    order: float
    logq0: float
    logq1: float
    plateau: float

    @property
    def rdp_independent(self) -> float:
        """``λ/σ²``.

        Returns
        -------
        float
            The data-independent RDP of one GNMax answer at order λ.
        """
        return self.order / self.sigma**2

    @property
    def log_cap(self) -> float:
        """``log(1 − 1/K)``, the largest ``log q̃`` (``-inf`` for K = 1).

        Returns
        -------
        float
        """
        return math.log1p(-1.0 / self.n_classes) if self.n_classes > 1 else -math.inf

    def rho(self, logq) -> np.ndarray:
        """``f(q̃)``: Theorem 6's bound for ``q̃ ≤ q0``, ``λ/σ²`` above; 0 at ``q̃ = 0``.

        Returns
        -------
        numpy.ndarray of float
            ``f(q̃)``, same shape as ``logq``.
        """
        x = np.minimum(np.asarray(logq, dtype=float), self.log_cap)
        out = np.full(x.shape, self.rdp_independent)
        low = x <= self.logq0
        if np.any(low):
            out[low] = rdp_from_logq_unchecked(x[low].ravel(), self.sigma, np.array([self.order]))[:, 0].reshape(x[low].shape)
        return out

    def log_bu(self, logq) -> np.ndarray:
        """``log bu(q)``: the largest ``log q̃`` of a neighbour (capped at ``log(1 − 1/K)``).

        Returns
        -------
        numpy.ndarray of float, the shape of ``logq``
        """
        return self._shift(logq, +_SQRT2 / self.sigma)

    def log_bl(self, logq) -> np.ndarray:
        """``log bl(q)``: the smallest ``log q̃`` of a neighbour.

        Returns
        -------
        numpy.ndarray of float, the shape of ``logq``
        """
        return self._shift(logq, -_SQRT2 / self.sigma)

    def _shift(self, logq, s: float) -> np.ndarray:
        x = np.asarray(logq, dtype=float)
        lk = math.log(self.n_classes - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = ndtri_exp(np.minimum(x - lk, 0.0))
            out = lk + log_ndtr(z + s)
        out = np.where(np.isneginf(x), -np.inf, out)
        return np.minimum(out, self.log_cap)

    def _ls_raw(self, logq) -> np.ndarray:
        x = np.asarray(logq, dtype=float)
        f0 = self.rho(x)
        return np.maximum(self.rho(self.log_bu(x)) - f0, f0 - self.rho(self.log_bl(x)))

    def ls_below(self, logq) -> np.ndarray:
        """Algorithm 3 for ``q̃ < q1``: ``f(bu(q)) − f(q)`` (which dominates ``f(q) − f(bl(q))``
        there by condition C6).

        Returns
        -------
        numpy.ndarray of float, the shape of ``logq``
        """
        x = np.asarray(logq, dtype=float)
        return self.rho(self.log_bu(x)) - self.rho(x)

    def ls_above(self, logq) -> np.ndarray:
        """Algorithm 3 for ``q̃ > q0``: ``λ/σ² − f(bl(q))`` (here ``f(q) = f(bu(q)) = λ/σ²``).

        Returns
        -------
        numpy.ndarray of float, the shape of ``logq``
        """
        x = np.asarray(logq, dtype=float)
        return self.rdp_independent - self.rho(self.log_bl(x))

    def local_sensitivity(self, logq) -> np.ndarray:
        """Algorithm 3: a bound on the local sensitivity at a histogram with this ``log q̃``.

        Returns
        -------
        numpy.ndarray of float
            The local-sensitivity bound, same shape as ``logq``.
        """
        x = np.asarray(logq, dtype=float)
        x = np.where((x >= self.logq1) & (x <= self.logq0), self.logq1, x)
        return self._ls_raw(x)


def check_conditions(sigma: float, n_classes: int, order: float) -> tuple[bool, bool]:
    """Check conditions C5 and C6 of PATE 2018 (App. B.4) numerically on a dense grid.

    C5: Theorem 6's conditions hold and its bound ``f`` is non-decreasing in ``q`` on
    ``(0, q0]``.  C6: ``f(bu(q)) − f(q)`` is non-decreasing on ``(0, q1]``.  Both are
    checked at 4,000 points log-spaced in ``log(1/q)`` from ``log(1/q0)`` (resp.
    ``log(1/q1)``) to 1,000 times that, with a relative tolerance of 1e-9.  A grid
    check is evidence, not a proof (PATE 2018's reference checks the sign of a symbolic
    derivative numerically, which is not a proof either).

    Parameters
    ----------
    sigma : float
        GNMax noise σ, > 0.
    n_classes : int
        Number of classes K.
    order : float
        Rényi order λ.

    Returns
    -------
    (c5, c6) : (bool, bool)
    """
    a = _analysis(float(sigma), int(n_classes), float(order), check=False)
    return _c5_c6(a)


def _c5_c6(a: GNMaxSensitivity) -> tuple[bool, bool]:
    xs = -np.geomspace(-a.logq0, -a.logq0 * 1000.0, _GRID)[::-1]  # increasing, ends at logq0
    dd, cond = theorem6_bound(xs, a.sigma, np.array([a.order]))
    f = np.maximum(dd[:, 0], 0.0)
    tol = 1e-9 * a.rdp_independent
    c5 = bool(np.all(cond[:, 0])) and bool(np.all(np.diff(f) >= -tol))
    ys = -np.geomspace(-a.logq1, -a.logq1 * 1000.0, _GRID)[::-1]
    delta = a.rho(a.log_bu(ys)) - a.rho(ys)
    c6 = bool(np.all(np.diff(delta) >= -tol))
    return c5, c6


@functools.lru_cache(maxsize=256)
def _analysis(sigma: float, n_classes: int, order: float, check: bool = True) -> GNMaxSensitivity:
    logq0 = _compute_logq0(sigma, order)
    tmp = GNMaxSensitivity(sigma, n_classes, order, logq0, -np.inf, 0.0)
    if n_classes < 2:
        return GNMaxSensitivity(sigma, n_classes, order, logq0, -np.inf, 0.0)
    logq1 = float(tmp.log_bl(np.array(logq0)))
    tmp = GNMaxSensitivity(sigma, n_classes, order, logq0, logq1, 0.0)
    plateau = float(tmp._ls_raw(np.array(logq1)))
    a = GNMaxSensitivity(sigma, n_classes, order, logq0, logq1, plateau)
    if check:
        c5, c6 = _c5_c6(a)
        if not (c5 and c6):
            which = "C5" if not c5 else "C6"
            raise ParameterError(
                f"The smooth-sensitivity analysis of GNMax needs condition {which} (PATE 2018, App. B.4), "
                f"which fails numerically for sigma2 = {sigma:g}, {n_classes} classes, order = {order:g}; "
                "choose a larger sigma2 or a smaller order."
            )
    return a


def gnmax_sensitivity(*, sigma: float, n_classes: int, order: float) -> GNMaxSensitivity:
    """The (public) local-sensitivity analysis of GNMax at (σ, K, λ), C5/C6 checked.

    Parameters
    ----------
    sigma : float
        GNMax noise σ, > 0.
    n_classes : int
        Number of classes K, >= 1.
    order : float
        Rényi order λ.

    Returns
    -------
    GNMaxSensitivity

    Raises
    ------
    ParameterError
        If σ or λ is invalid, or C5/C6 fail numerically.
    """
    sigma = check_sigma(sigma, "sigma")
    order = check_order(order)
    if isinstance(n_classes, bool) or int(n_classes) != n_classes or n_classes < 1:
        raise ParameterError(f"n_classes must be a whole number ≥ 1, got {n_classes!r}.")
    return _analysis(float(sigma), int(n_classes), float(order))


# ---------------------------------------------------------------------------- terms
