"""Vectorized samplers of the library's mechanisms for the audit (BTT, soft-label BTT,
LNMax, A_stab), drawn from the same building blocks the aggregators use
(:mod:`core.mechanisms.stability`, :mod:`core.noise`, :mod:`core.accounting`);
:class:`RealAggregator` calls the real :mod:`core.mechanisms` functions once per trial,
and :func:`compare_samplers` cross-checks the two.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from core.noise import RNGLike, check_rng
from core.validation import check_counts, check_scores
from core.audit.stats import hash_rows

__all__ = [
    "compare_samplers",
    "SamplerComparison",
    "BTTSampler",
    "BTTSoftSampler",
    "LNMaxSampler",
    "AStabSampler",
    "RealAggregator",
]


# ----------------------------------------------------------------------------- samplers
#
# Trial-vectorized samplers of the library's mechanisms.  They use the same building
# blocks as core.mechanisms (distance from core.mechanisms.stability, noise from core.noise,
# calibration from core.accounting) and the same decision rules; the audit tests
# cross-check their output distribution against the real functions
# (RealAggregator + compare_samplers).


def _encode_soft(labels: np.ndarray, scores: np.ndarray, n_bins: int) -> np.ndarray:
    """Soft-label outputs as integers: a released score s ↦ round(2·s·n_bins) (bin
    midpoints are odd, shifted-bin midpoints even); ⊥ ↦ -1, not processed ↦ -2."""
    code = np.rint(np.nan_to_num(scores, nan=0.0) * 2 * n_bins).astype(np.int64)
    return np.where(labels >= 0, code, labels).astype(np.int64)


class BTTSampler:
    """Vectorized sampler of :func:`core.mechanisms.btt_label`.

    ``sampler(counts, n_trials, rng)`` returns the released label vectors, shape
    ``(n_trials, m)`` (class id, ``BOTTOM`` or ``UNPROCESSED``), each trial an
    independent run: threshold noise ``DLap(λ)`` per round and query noise ``DLap(2λ)``
    per query, compared as in :func:`core.mechanisms.sparse_vector_scan`.

    Parameters
    ----------
    epsilon, delta : float
    T : int
    calibration : {"tight", "paper"}
    distance : callable, optional
        Distance to instability (default :func:`core.mechanisms.stability.distance_to_instability`);
        the printed form here is the audit's teaching example of a leak.
    """

    name = "btt"

    def __init__(self, epsilon: float, delta: float, T: int, *, calibration: str = "tight", distance=None):
        from core.mechanisms.stability import distance_to_instability

        self.epsilon, self.delta, self.T, self.calibration = epsilon, delta, T, calibration
        self.distance = distance or distance_to_instability

    def calibration_for(self, m: int):
        """The :class:`core.accounting.BTTCalibration` for ``m`` queries."""
        from core.accounting.btt import calibrate_btt

        return calibrate_btt(self.epsilon, delta=self.delta, T=self.T, m=m, calibration=self.calibration)

    def claim(self, counts) -> tuple[float, float]:
        """The (ε, δ) the real :func:`~core.mechanisms.btt_label` reports on ``counts``."""
        from core import pipeline

        r = pipeline.label(counts, "btt", {"epsilon": self.epsilon, "delta": self.delta, "T": self.T, "calibration": self.calibration}, rng=0)
        return r.epsilon, r.delta

    def __call__(self, counts, n_trials: int, rng) -> np.ndarray:
        from core.mechanisms.result import BOTTOM, UNPROCESSED
        from core.noise import discrete_laplace
        from core.mechanisms.stability import plurality

        counts = check_counts(counts)
        m = counts.shape[0]
        cal = self.calibration_for(m)
        gen = check_rng(rng)
        dist = self.distance(counts)
        top = plurality(counts)
        zt = discrete_laplace(cal.noise_scale, (n_trials, self.T), gen)
        zq = discrete_laplace(2.0 * cal.noise_scale, (n_trials, m), gen)
        thr = cal.threshold + zt
        rows = np.arange(n_trials)
        failures = np.zeros(n_trials, dtype=np.int64)
        out = np.empty((n_trials, m), dtype=np.int64)
        for i in range(m):
            alive = failures < self.T
            t = thr[rows, np.minimum(failures, self.T - 1)]
            passed = dist[i] + zq[:, i] > t
            out[:, i] = np.where(alive, np.where(passed, top[i], BOTTOM), UNPROCESSED)
            failures += alive & ~passed
        return out


class BTTSoftSampler:
    """Vectorized sampler of :func:`core.mechanisms.btt_soft_label`.

    Returns encoded outputs ``(n_trials, m)``: a released score ``s`` as
    ``round(2·s/η)``, ⊥ as -1, not processed as -2 (see :func:`_encode_soft`).
    """

    name = "btt-soft"

    def __init__(self, epsilon: float, delta: float, T: int, eta: float, *, calibration: str = "tight"):
        self.epsilon, self.delta, self.T, self.eta, self.calibration = epsilon, delta, T, eta, calibration

    def claim(self, scores) -> tuple[float, float]:
        from core import pipeline

        r = pipeline.label(scores, "btt-soft", {"epsilon": self.epsilon, "delta": self.delta, "T": self.T, "eta": self.eta, "calibration": self.calibration}, rng=0)
        return r.epsilon, r.delta

    def __call__(self, scores, n_trials: int, rng) -> np.ndarray:
        from core.accounting.btt import calibrate_btt
        from core.mechanisms.result import BOTTOM, UNPROCESSED
        from core.mechanisms.soft import soft_bin_histograms
        from core.noise import discrete_laplace
        from core.mechanisms.stability import distance_to_instability
        from core.validation import check_eta

        scores = check_scores(scores)
        _, n_bins = check_eta(self.eta)
        m = scores.shape[0]
        cal = calibrate_btt(self.epsilon, delta=self.delta, T=self.T, m=m, calibration=self.calibration, soft=True)
        gen = check_rng(rng)
        hist, shifted = soft_bin_histograms(scores, self.eta)
        d1 = distance_to_instability(hist)
        d2 = distance_to_instability(shifted)
        code1 = 2 * np.argmax(hist, axis=1) + 1  # midpoint (b + 1/2)/n_bins, encoded
        code2 = 2 * np.argmax(shifted, axis=1) + 2  # midpoint (b + 1)/n_bins, encoded
        max_fail = 2 * self.T
        zt = discrete_laplace(cal.noise_scale, (n_trials, max_fail), gen)
        zq = discrete_laplace(2.0 * cal.noise_scale, (n_trials, m, 2), gen)
        thr = cal.threshold + zt
        rows = np.arange(n_trials)
        failures = np.zeros(n_trials, dtype=np.int64)
        out = np.empty((n_trials, m), dtype=np.int64)
        for i in range(m):
            alive = failures < max_fail
            pass1 = d1[i] + zq[:, i, 0] > thr[rows, np.minimum(failures, max_fail - 1)]
            fail1 = alive & ~pass1
            failures = failures + fail1
            can2 = fail1 & (failures < max_fail)
            pass2 = d2[i] + zq[:, i, 1] > thr[rows, np.minimum(failures, max_fail - 1)]
            ok2 = can2 & pass2
            failures = failures + (can2 & ~pass2)
            out[:, i] = np.where(
                ~alive, UNPROCESSED, np.where(pass1, code1[i], np.where(ok2, code2[i], BOTTOM))
            )
        return out


class LNMaxSampler:
    """Vectorized sampler of :func:`core.mechanisms.lnmax_label`: label vectors
    ``argmax_j (counts[i, j] + Lap(1/γ))``, shape ``(n_trials, m)``."""

    name = "lnmax"

    def __init__(self, gamma: float, *, delta: float = 1e-5):
        self.gamma, self.delta = gamma, delta

    def claim(self, counts) -> tuple[float, float]:
        from core import pipeline

        r = pipeline.label(counts, "lnmax", {"gamma": self.gamma, "delta": self.delta}, rng=0)
        return r.epsilon, r.delta

    def __call__(self, counts, n_trials: int, rng) -> np.ndarray:
        from core.noise import laplace

        counts = check_counts(counts)
        noisy = counts[None, :, :] + laplace(1.0 / self.gamma, (n_trials,) + counts.shape, check_rng(rng))
        return np.argmax(noisy, axis=2).astype(np.int64)


class AStabSampler:
    """Vectorized sampler of :func:`core.mechanisms.a_stab_label` (``baseline=False``)
    or :func:`core.mechanisms.composition_baseline_label` (``baseline=True``): each
    query independently, ``dist + DLap(1/ε0) > Γ`` releases the plurality, else ⊥.

    Parameters
    ----------
    epsilon, delta : float
    baseline : bool
        Per-query parameters of the composition baseline (docs/design.md §3.5) instead of A_stab's.
    distance : callable, optional
        Distance to instability; the printed form is the teaching example of a leak.
    """

    def __init__(self, epsilon: float, delta: float, *, baseline: bool = False, distance=None):
        from core.mechanisms.stability import distance_to_instability

        self.epsilon, self.delta, self.baseline = epsilon, delta, baseline
        self.distance = distance or distance_to_instability
        self.name = "baseline" if baseline else "a-stab"

    def parameters(self, m: int) -> tuple[float, float]:
        """Per-query ``(ε0, Γ)``."""
        from core.accounting.baseline import a_stab_threshold, composition_baseline_parameters

        if self.baseline:
            par = composition_baseline_parameters(self.epsilon, delta=self.delta, m=m)
            return par.eps0, par.threshold
        return float(self.epsilon), a_stab_threshold(self.epsilon, delta=self.delta)

    def claim(self, counts) -> tuple[float, float]:
        from core import pipeline

        r = pipeline.label(counts, "baseline" if self.baseline else "a-stab", {"epsilon": self.epsilon, "delta": self.delta}, rng=0)
        return r.epsilon, r.delta

    def __call__(self, counts, n_trials: int, rng) -> np.ndarray:
        from core.mechanisms.result import BOTTOM
        from core.noise import discrete_laplace
        from core.mechanisms.stability import plurality

        counts = check_counts(counts)
        eps0, gamma_thr = self.parameters(counts.shape[0])
        z = discrete_laplace(1.0 / eps0, (n_trials, counts.shape[0]), check_rng(rng))
        passed = self.distance(counts)[None, :] + z > gamma_thr
        return np.where(passed, plurality(counts)[None, :], BOTTOM).astype(np.int64)


class RealAggregator:
    """Audit adapter that calls a real :mod:`core.mechanisms` function once per trial.

    Slow (one call per trial) but it tests the library's code itself.  Outputs are the
    released label vectors ``(n_trials, m)``; for ``btt_soft`` the encoded scores as in
    :class:`BTTSoftSampler`.

    Parameters
    ----------
    mechanism : str
        A registered mechanism (:mod:`core.mechanisms.registry`).
    **params
        The function's parameters other than the input and ``rng``.
    """

    def __init__(self, mechanism: str, **params):
        from core import pipeline

        self.name = mechanism
        self.params = params
        self.fn = lambda inp, rng: pipeline.label(inp, mechanism, params, rng=rng)

    def claim(self, inp) -> tuple[float, float]:
        r = self.fn(inp, rng=0)
        return r.epsilon, r.delta

    def __call__(self, inp, n_trials: int, rng) -> np.ndarray:
        gen = check_rng(rng)
        rows = []
        n_bins = None
        if self.name == "btt-soft":
            from core.validation import check_eta

            n_bins = check_eta(self.params["eta"])[1]
        for _ in range(n_trials):
            r = self.fn(inp, rng=gen)
            rows.append(_encode_soft(r.labels, r.scores, n_bins) if n_bins else r.labels)
        return np.asarray(rows, dtype=np.int64).reshape(n_trials, -1)


@dataclass(frozen=True)
class SamplerComparison:
    """Two-sample chi-square test that two samplers draw from one output distribution.

    Attributes
    ----------
    statistic, dof, p_value : float
        Pearson chi-square statistic of homogeneity, its degrees of freedom and p-value
        (outputs with fewer than 10 expected trials pooled into one category).
    total_variation : float
        Empirical total-variation distance between the two output histograms.
    n_trials : int
        Trials per sampler.
    """

    statistic: float
    dof: int
    p_value: float
    total_variation: float
    n_trials: int


def compare_samplers(fast, real, inp, n_trials: int, rng: RNGLike = None) -> SamplerComparison:
    """Chi-square test of homogeneity between two samplers' outputs on one input.

    Under the null hypothesis (same distribution) ``p_value`` is (asymptotically)
    uniform, so rejecting at ``p_value < α`` fails falsely with probability ``α``.
    """
    gen = check_rng(rng)
    x = hash_rows(np.asarray(fast(inp, n_trials, gen)).reshape(n_trials, -1))
    y = hash_rows(np.asarray(real(inp, n_trials, gen)).reshape(n_trials, -1))
    values, inv = np.unique(np.concatenate([x, y]), return_inverse=True)
    cx = np.bincount(inv[:n_trials], minlength=values.size).astype(float)
    cy = np.bincount(inv[n_trials:], minlength=values.size).astype(float)
    tv = 0.5 * float(np.abs(cx - cy).sum()) / n_trials
    small = (cx + cy) / 2.0 < 10
    table = np.stack([cx[~small], cy[~small]], axis=0)
    if small.any():
        table = np.concatenate([table, [[cx[small].sum()], [cy[small].sum()]]], axis=1)
    table = table[:, table.sum(axis=0) > 0]
    if table.shape[1] < 2:
        return SamplerComparison(0.0, 0, 1.0, tv, n_trials)
    res = stats.chi2_contingency(table, correction=False)
    return SamplerComparison(float(res.statistic), int(res.dof), float(res.pvalue), tv, n_trials)
