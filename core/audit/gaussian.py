"""Audit samplers for the Gaussian aggregators (GNMax, Confident-GNMax) and broken variants.

They follow the sampler protocol of :mod:`core.audit`: ``claim(counts) -> (ε, δ)`` gives
the data-independent guarantee the real function reports for that input's number of
queries, and ``sampler(counts, n_trials, rng)`` returns ``n_trials`` independent label
vectors, shape ``(n_trials, m)``, drawn in bulk.  The draw order matches the real
functions of :mod:`core.mechanisms.gaussian` (threshold noises, then answer noises), so with
``n_trials=1`` a sampler and the real function with the same seed give the same labels.

Broken variants (to show the audit catches real bugs; never used to label data):

:class:`HalvedNoiseGNMaxSampler`
    Claims GNMax's guarantee at σ but adds noise of standard deviation σ/2.
:class:`BrokenThresholdConfidentGNMaxSampler`
    A threshold test that reads a different statistic than the top count.
    ``statistic="margin"`` (top minus runner-up) is a real privacy bug: one teacher
    moving from the top class to the runner-up moves the margin by 2, so the test's RDP
    is ``4α/(2σ1²)``, four times the claim.  ``statistic="second_top"`` (the runner-up
    count) is **not** a privacy bug: every order statistic of a count vector moves by at
    most 1 when one vote moves, so the test keeps the claimed ``α/(2σ1²)`` and no audit
    can (or should) flag it; it is kept to document that fact.
"""

from __future__ import annotations

import numpy as np

from core.accounting import rdp
from core.mechanisms.result import BOTTOM
from core.errors import ParameterError
from core.noise import check_rng
from core.validation import check_counts, check_delta, check_real

__all__ = [
    "gaussian_scenario",
    "gaussian_pairs",
    "GNMaxSampler",
    "ConfidentGNMaxSampler",
    "HalvedNoiseGNMaxSampler",
    "BrokenThresholdConfidentGNMaxSampler",
]


class GNMaxSampler:
    """Vectorized sampler of :func:`core.mechanisms.gaussian.gnmax_label`: label vectors
    ``argmax_c(counts[i, c] + N(0, σ²))``, shape ``(n_trials, m)``.

    Parameters
    ----------
    sigma : float
        The noise σ (claimed and used).
    delta : float
        The δ at which the guarantee is claimed.
    """

    name = "gnmax"

    def __init__(self, sigma: float, delta: float):
        self.sigma = rdp.check_sigma(sigma)
        self.delta = check_delta(delta)

    @property
    def noise_sigma(self) -> float:
        """The standard deviation of the noise actually added."""
        return self.sigma

    def claim(self, counts) -> tuple[float, float]:
        m = check_counts(counts).shape[0]
        g = rdp.gnmax_guarantee(self.sigma, n_answers=m, delta=self.delta)
        return g.epsilon, g.delta

    def __call__(self, counts, n_trials: int, rng) -> np.ndarray:
        counts = check_counts(counts)
        gen = check_rng(rng)
        noisy = gen.normal(0.0, self.noise_sigma, (int(n_trials),) + counts.shape)
        noisy += counts[None, :, :]
        return np.argmax(noisy, axis=2).astype(np.int64)


class HalvedNoiseGNMaxSampler(GNMaxSampler):
    """BROKEN: claims GNMax's guarantee at σ but adds ``N(0, (σ/2)²)``."""

    name = "gnmax_halved_noise"

    @property
    def noise_sigma(self) -> float:
        return self.sigma / 2.0


class ConfidentGNMaxSampler:
    """Vectorized sampler of :func:`core.mechanisms.gaussian.confident_gnmax_label` with
    ``accounting="fixed"``: per query, ``max_c counts + N(0, σ1²) ≥ t`` answers
    ``argmax_c(counts + N(0, σ2²))``, else :data:`core.mechanisms.BOTTOM`.

    Returns label vectors of shape ``(n_trials, m)``.  Draws ``(n_trials, m)`` threshold
    noises, then ``(n_trials, m, C)`` answer noises.
    """

    name = "confident-gnmax"

    def __init__(self, threshold: float, sigma1: float, sigma2: float, delta: float):
        self.threshold = check_real(threshold, "threshold")
        self.sigma1 = rdp.check_sigma(sigma1, "sigma1")
        self.sigma2 = rdp.check_sigma(sigma2, "sigma2")
        self.delta = check_delta(delta)

    def claim(self, counts) -> tuple[float, float]:
        m = check_counts(counts).shape[0]
        g = rdp.confident_gnmax_guarantee(self.sigma1, self.sigma2, n_queries=m, delta=self.delta)
        return g.epsilon, g.delta

    def _tested(self, counts: np.ndarray) -> np.ndarray:
        """The per-query statistic compared with the threshold: the top count."""
        return counts.max(axis=1)

    def __call__(self, counts, n_trials: int, rng) -> np.ndarray:
        counts = check_counts(counts)
        gen = check_rng(rng)
        n = int(n_trials)
        m = counts.shape[0]
        passed = (self._tested(counts)[None, :] + gen.normal(0.0, self.sigma1, (n, m))) >= self.threshold
        noisy = gen.normal(0.0, self.sigma2, (n,) + counts.shape)
        noisy += counts[None, :, :]
        answers = np.argmax(noisy, axis=2)
        return np.where(passed, answers, BOTTOM).astype(np.int64)


class BrokenThresholdConfidentGNMaxSampler(ConfidentGNMaxSampler):
    """Confident-GNMax whose threshold test reads another statistic than the top count,
    while claiming the same guarantee.

    Parameters
    ----------
    threshold, sigma1, sigma2, delta
        As :class:`ConfidentGNMaxSampler`.
    statistic : {"margin", "second_top"}
        ``"margin"``: top minus runner-up count (sensitivity 2: BROKEN, the test's true
        RDP is four times the claim).  ``"second_top"``: the runner-up count
        (sensitivity 1: still private at the claim, see the module docstring).
    """

    def __init__(self, threshold: float, sigma1: float, sigma2: float, delta: float, *, statistic: str = "margin"):
        super().__init__(threshold, sigma1, sigma2, delta)
        if statistic not in ("margin", "second_top"):
            raise ParameterError(f"statistic must be 'margin' or 'second_top', got {statistic!r}.")
        self.statistic = statistic
        self.name = f"confident_gnmax_threshold_on_{statistic}"

    def _tested(self, counts: np.ndarray) -> np.ndarray:
        if counts.shape[1] < 2:
            second = np.zeros(counts.shape[0], dtype=counts.dtype)
        else:
            second = np.partition(counts, -2, axis=1)[:, -2]
        if self.statistic == "second_top":
            return second
        return counts.max(axis=1) - second


_PAIRS = ["tie", "top_loses_vote", "all_queries_move", "mixed_directions", "answered_then_bottom"]


def gaussian_pairs(mechanism: str) -> tuple[list[str], str]:
    """The neighbouring pairs offered for GNMax and Confident-GNMax, and the default."""
    return list(_PAIRS), "top_loses_vote"


def gaussian_scenario(mechanism: str, *, pair: str | None = None, **settings):
    """The audit of GNMax (``sigma``, ``delta``) or Confident-GNMax (``threshold``,
    ``sigma1``, ``sigma2``, ``delta``) on neighbouring vote counts of 20 teachers, 3
    classes and 3 queries (one teacher's vote moves on every query).

    Returns
    -------
    core.audit.AuditScenario
    """
    from core.audit.pairs import neighbouring_pairs
    from core.audit.run import AuditScenario
    from core.mechanisms import registry

    pairs = {p.name: p for p in neighbouring_pairs(20, distance=1, n_classes=3, n_queries=3)}
    name = pair or gaussian_pairs(mechanism)[1]
    if name not in pairs:
        raise ParameterError(f"Unknown neighbouring pair {name!r}; choose one of {sorted(pairs)}.")
    if mechanism == "gnmax":
        sampler = GNMaxSampler(settings["sigma"], settings["delta"])
        used = {"sigma": sampler.sigma, "delta": sampler.delta}
    elif mechanism == "confident-gnmax":
        sampler = ConfidentGNMaxSampler(settings["threshold"], settings["sigma1"], settings["sigma2"], settings["delta"])
        used = {k: settings[k] for k in ("threshold", "sigma1", "sigma2", "delta")}
    else:
        raise ParameterError(f"No Gaussian audit scenario for {mechanism!r}.")
    chosen = pairs[name]
    eps, delta = sampler.claim(chosen.a)
    return AuditScenario(mechanism, registry.get(mechanism).title, sampler, chosen, float(eps), float(delta), used)
