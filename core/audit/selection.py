"""The audit of private selection as it is released: the best run, with the number of repetitions hidden.

:class:`SelectionSampler` samples :func:`core.mechanisms.selection.select` many times at
once: per trial, the number of repetitions from the same sampler
(:func:`core.mechanisms.selection.draw_repetitions`), a uniformly random candidate per
repetition, each candidate's labels from the vectorized Gaussian samplers
(:mod:`core.audit.gaussian`), the score, the best repetition kept (ties to the earlier
one, as ``select``).  Its output is what a selection releases and nothing more: the
chosen candidate's index, its label vector and (for a held-out score) the released
score; never the number of repetitions nor the candidates tried.

Two scenarios:

:func:`selection_scenario`
    Scored by the number answered, on a pair of neighbouring vote histograms where the
    Confident-GNMax candidates' threshold sits at the top count (where the number
    answered, hence the choice, moves most).
:func:`selection_holdout_scenario`
    Scored by a held-out count with discrete Gaussian noise σ_s, the changed row held
    out: the votes are the same on both sides and every candidate's count moves by one
    (the worst case of a sensitivity-1 count).  Given the chosen index, its labels have
    the same law on both sides (the votes did not move), so the sampler releases the
    index and the score: a sufficient statistic of the release for this pair.

Both claim the whole selection's guarantee (:func:`core.pipeline.tune_price`).

:func:`held_out_score_delta` computes, exactly, the privacy profile of the best of ``K``
noisy held-out counts, with ``K`` hidden (what the selection releases) or shown: with
``K`` hidden δ(ε) at the claimed ε is far below the claimed δ; with ``K`` shown it is
above it (docs/design.md §10.3).

References
----------
.. [PS22] N. Papernot, T. Steinke. Hyperparameter Tuning with Renyi Differential Privacy. ICLR 2022.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from core.errors import ParameterError
from core.noise import check_rng
from core.validation import check_counts

__all__ = ["SelectionSampler", "HeldOutVotes", "selection_scenario", "selection_holdout_scenario",
           "held_out_score_delta", "SELECTION_DEFAULTS"]

SELECTION_DEFAULTS: dict[str, Any] = {"mean": 3.0, "shape": 1.0, "sigma1": 2.0, "sigma2": 4.0, "sigma": 4.0,
                                      "delta": 1e-5, "score_sigma": 2.0}
"""Settings at which the selection audit has power (few queries, little noise)."""


@dataclass(frozen=True, eq=False)
class HeldOutVotes:
    """One side of a held-out neighbouring pair: the votes and each candidate's held-out count.

    Attributes
    ----------
    votes : numpy.ndarray, shape (m, n_classes)
        The teachers' vote counts (the same on both sides: the changed row is held out).
    counts : numpy.ndarray of int, shape (n_candidates,)
        The held-out count each candidate's run scores before its noise.
    """

    votes: np.ndarray
    counts: np.ndarray

    @property
    def shape(self) -> tuple[int, ...]:
        """The votes' shape (the audit reads the number of queries from it)."""
        return tuple(np.shape(self.votes))


class SelectionSampler:
    """Vectorized sampler of private selection over GNMax / Confident-GNMax candidates, scored by answers.

    Parameters
    ----------
    candidates : sequence of (str, mapping)
        ``("gnmax", {"sigma", "delta"})`` or ``("confident-gnmax", {"threshold", "sigma1",
        "sigma2", "delta"})`` with explicit noise (so the guarantee does not depend on m).
    mean, shape : float
        The number of repetitions' distribution.
    delta : float
        δ of the claim.
    score_sigma : float, optional
        Score by a held-out count with discrete Gaussian noise ``score_sigma`` (the input is
        then a :class:`HeldOutVotes`); None: by the number answered.
    """

    name = "private-selection"

    def __init__(self, candidates: Sequence[Any], *, mean: float, shape: float = 1.0, delta: float = 1e-5,
                 score_sigma: float | None = None):
        from core.audit.gaussian import ConfidentGNMaxSampler, GNMaxSampler
        from core.mechanisms.selection import check_candidates

        self.candidates = check_candidates(candidates)
        self.samplers = []
        for name, s in self.candidates:
            if name == "gnmax":
                self.samplers.append(GNMaxSampler(s["sigma"], s["delta"]))
            elif name == "confident-gnmax":
                self.samplers.append(ConfidentGNMaxSampler(s["threshold"], s["sigma1"], s["sigma2"], s["delta"]))
            else:
                raise ParameterError(f"the selection audit samples GNMax and Confident-GNMax candidates, not {name!r}.")
        self.mean, self.shape, self.delta = float(mean), float(shape), float(delta)
        self.score_sigma = None if score_sigma is None else float(score_sigma)

    def claim(self, counts) -> tuple[float, float]:
        """The whole selection's guarantee on these votes' number of queries.

        Returns
        -------
        (float, float)
        """
        from core import pipeline

        votes = counts.votes if isinstance(counts, HeldOutVotes) else counts
        m = check_counts(votes).shape[0]
        g = pipeline.tune_price(self.candidates, m, mean=self.mean, shape=self.shape, delta=self.delta,
                                score_sigma=self.score_sigma)
        return g.epsilon, g.delta

    def __call__(self, counts, n_trials: int, rng) -> np.ndarray:
        from core import noise
        from core.mechanisms.selection import draw_repetitions

        held = None
        if self.score_sigma is not None:
            if not isinstance(counts, HeldOutVotes) or len(counts.counts) != len(self.samplers):
                raise ParameterError("a held-out score is audited on HeldOutVotes with one count per candidate.")
            held = np.asarray(counts.counts, dtype=np.int64)
            counts = counts.votes
        counts = check_counts(counts)
        gen = check_rng(rng)
        n, m = int(n_trials), counts.shape[0]
        K = draw_repetitions(self.mean, self.shape, gen, size=n)
        best_score = np.full(n, np.iinfo(np.int64).min, dtype=np.int64)
        best_idx = np.zeros(n, dtype=np.int64)
        best_labels = np.zeros((n, m), dtype=np.int64)
        for r in range(int(K.max())):
            active = K > r
            pick = gen.integers(len(self.samplers), size=n)
            if held is not None:  # the labels' law is the same on both sides: only the index and the score are kept
                rows = np.flatnonzero(active)
                score = held[pick[rows]] + noise.discrete_gaussian(self.score_sigma, size=rows.size, rng=gen).astype(np.int64)
                better = score > best_score[rows]
                win = rows[better]
                best_score[win] = score[better]
                best_idx[win] = pick[win]
                continue
            for j, sampler in enumerate(self.samplers):
                rows = np.flatnonzero(active & (pick == j))
                if rows.size == 0:
                    continue
                labels = sampler(counts, rows.size, gen)
                score = (labels >= 0).sum(axis=1)
                better = score > best_score[rows]
                win = rows[better]
                best_score[win] = score[better]
                best_idx[win] = j
                best_labels[win] = labels[better]
        if held is not None:
            return np.column_stack([best_idx, best_score])
        return np.column_stack([best_idx, best_labels])


def selection_scenario(*, pair: str | None = None, **settings: Any):
    """The audit of private selection on neighbouring vote counts (20 teachers, 3 classes, 3 queries).

    Three candidates: Confident-GNMax with its threshold at the pair's top count and two
    votes above it, and GNMax; scored by the number answered.

    Parameters
    ----------
    pair : str, optional
        A pair of :func:`core.audit.neighbouring_pairs` (default ``"all_queries_move"``).
    **settings
        Any of :data:`SELECTION_DEFAULTS`.

    Returns
    -------
    core.audit.AuditScenario
    """
    from core.audit.pairs import neighbouring_pairs
    from core.audit.scenarios import AuditScenario

    s = {**SELECTION_DEFAULTS, **{k: v for k, v in settings.items() if k in SELECTION_DEFAULTS and v is not None}}
    pairs = {p.name: p for p in neighbouring_pairs(20, distance=1, n_classes=3, n_queries=3)}
    name = pair or "all_queries_move"
    if name not in pairs:
        raise ParameterError(f"Unknown neighbouring pair {name!r}; choose one of {sorted(pairs)}.")
    chosen = pairs[name]
    top = float(np.asarray(chosen.a).max(axis=1).min())
    conf = {"sigma1": s["sigma1"], "sigma2": s["sigma2"], "delta": s["delta"]}
    candidates = [("confident-gnmax", {"threshold": top, **conf}), ("confident-gnmax", {"threshold": top + 2.0, **conf}),
                  ("gnmax", {"sigma": s["sigma"], "delta": s["delta"]})]
    sampler = SelectionSampler(candidates, mean=s["mean"], shape=s["shape"], delta=s["delta"])
    eps, delta = sampler.claim(chosen.a)
    return AuditScenario("private-selection", "Private selection (Papernot–Steinke), scored by answers", sampler,
                         chosen, float(eps), float(delta), dict(s))


def selection_holdout_scenario(*, counts: Sequence[int] = (6, 3, 0), **settings: Any):
    """The audit of private selection scored by a held-out count, the changed row held out.

    The votes (20 teachers, 3 classes, 3 queries) are the same on both sides; candidate
    ``j``'s held-out count is ``counts[j]`` on one side and one more on the other (the
    changed row is one every candidate's student predicts correctly there, and wrongly
    here).  The released index and score (the sampler's output) carry everything the
    release says about the changed row.

    Parameters
    ----------
    counts : sequence of int
        Each candidate's held-out count on the first side (three candidates).
    **settings
        Any of :data:`SELECTION_DEFAULTS` (``score_sigma`` is the score's noise).

    Returns
    -------
    core.audit.AuditScenario
    """
    from core.audit.pairs import NeighbourPair
    from core.audit.scenarios import AuditScenario

    s = {**SELECTION_DEFAULTS, **{k: v for k, v in settings.items() if k in SELECTION_DEFAULTS and v is not None}}
    held = np.asarray(counts, dtype=np.int64)
    if held.shape != (3,):
        raise ParameterError("the held-out selection audit takes one count for each of its three candidates.")
    votes = np.array([[14, 4, 2], [10, 9, 1], [7, 7, 6]])
    # Labeling noise 20 times the answered scenario's: the labels' cost is then far below the
    # score's α/(2σ_s²), so the claim is the score's (3.52 at σ_s = 2, mean 3) and the audit
    # tests the part of the selection that the held-out pair moves.
    quiet = 20.0
    conf = {"sigma1": quiet * s["sigma1"], "sigma2": quiet * s["sigma2"], "delta": s["delta"]}
    candidates = [("confident-gnmax", {"threshold": 12.0, **conf}), ("confident-gnmax", {"threshold": 8.0, **conf}),
                  ("gnmax", {"sigma": quiet * s["sigma"], "delta": s["delta"]})]
    sampler = SelectionSampler(candidates, mean=s["mean"], shape=s["shape"], delta=s["delta"],
                               score_sigma=s["score_sigma"])
    pair = NeighbourPair("held_out_row_changes", HeldOutVotes(votes, held), HeldOutVotes(votes, held + 1),
                         "The changed row is held out: the votes are the same, every candidate's held-out count "
                         "moves by one.")
    eps, delta = sampler.claim(pair.a)
    return AuditScenario("private-selection", "Private selection (Papernot–Steinke), scored by a held-out count",
                         sampler, pair, float(eps), float(delta), dict(s))


def _repetition_pmf(mean: float, shape: float, tail: float) -> tuple[np.ndarray, np.ndarray, float]:
    """``(k, P[K = k])`` for ``k = 1..k_max`` and the mass left beyond ``k_max`` (at most ``tail``)."""
    from dp_accounting.rdp.rdp_privacy_accountant import _gamma_truncated_negative_binomial
    from scipy import stats

    from core.accounting.selection import check_repetitions

    mean, shape = check_repetitions(mean, shape)
    if mean == 1.0:
        return np.array([1]), np.array([1.0]), 0.0
    gamma = float(_gamma_truncated_negative_binomial(shape, mean))
    dist = stats.logser(1.0 - gamma) if shape == 0.0 else stats.nbinom(shape, gamma)
    zero = 0.0 if shape == 0.0 else float(dist.pmf(0))
    k_max = int(dist.isf(tail * (1.0 - zero))) + 1
    k = np.arange(1, k_max + 1)
    p = dist.pmf(k) / (1.0 - zero)
    return k, p, max(0.0, 1.0 - float(p.sum()))


def held_out_score_delta(*, mean: float, shape: float = 1.0, score_sigma: float, epsilon: float,
                         k_shown: bool = False) -> float:
    """Exact δ(ε) of the best of ``K`` noisy held-out counts, ``K`` hidden or shown.

    The release of a selection scored by a held-out count, the changed row held out, with
    every candidate's count moving by one (the audit's worst case): ``max_{i ≤ K} (c + Z_i)``
    against ``max_{i ≤ K} (c + 1 + Z_i)``, ``Z_i`` discrete Gaussian of σ_s, ``K`` truncated
    negative binomial (mean, shape).  With ``k_shown`` the release is ``(K, max)``.  The
    distribution functions are exact sums (``P[max ≤ v] = E[F(v − c)^K]``); the discrete
    Gaussian is cut at ±40σ_s and ``K`` where its tail is below 1e-15, the tail's mass added
    to δ (an upper bound).

    Parameters
    ----------
    mean, shape : float
        The number of repetitions' distribution.
    score_sigma : float
    epsilon : float
    k_shown : bool
        Release ``K`` beside the best score.

    Returns
    -------
    float
        The larger δ of the two directions.
    """
    sigma = float(score_sigma)
    k, pk, tail = _repetition_pmf(mean, shape, 1e-15)
    lim = int(math.ceil(40 * sigma)) + 2
    z = np.arange(-lim, lim + 1)
    w = np.exp(-(z.astype(float) ** 2) / (2 * sigma * sigma))
    cdf = np.cumsum(w / w.sum())
    v = np.arange(-lim, lim + 2)

    def F(c: int) -> np.ndarray:
        idx = v - c + lim
        return np.where(idx < 0, 0.0, np.where(idx >= cdf.size, 1.0, cdf[np.clip(idx, 0, cdf.size - 1)]))

    worst = 0.0
    bound = math.exp(float(epsilon))
    for ca, cb in ((0, 1), (1, 0)):
        Fa, Fb = F(ca), F(cb)
        if k_shown:
            total = 0.0
            for kk, p in zip(k, pk):
                pa = np.diff(Fa ** kk, prepend=0.0)
                pb = np.diff(Fb ** kk, prepend=0.0)
                total += p * float(np.maximum(0.0, pa - bound * pb).sum())
        else:
            Ga = (pk[:, None] * Fa[None, :] ** k[:, None]).sum(axis=0)
            Gb = (pk[:, None] * Fb[None, :] ** k[:, None]).sum(axis=0)
            total = float(np.maximum(0.0, np.diff(Ga, prepend=0.0) - bound * np.diff(Gb, prepend=0.0)).sum())
        worst = max(worst, total + tail)
    return worst
