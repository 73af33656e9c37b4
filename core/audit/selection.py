"""The empirical audit of private selection on neighbouring vote histograms.

:class:`SelectionSampler` samples :func:`core.mechanisms.selection.select` many times at
once: per trial, the number of repetitions from the same sampler
(:func:`core.mechanisms.selection.draw_repetitions`), a uniformly random candidate per
repetition, each candidate's labels from the vectorized Gaussian samplers
(:mod:`core.audit.gaussian`), the score = the number answered, the best repetition kept
(ties to the earlier one, as ``select``).  Its output is what a selection releases: the
chosen candidate's index followed by its label vector.  :func:`selection_scenario` places
it on a pair of neighbouring vote histograms where the Confident-GNMax candidates'
threshold sits at the top count (where the number answered, hence the choice, moves
most) and claims the whole selection's guarantee (:func:`core.pipeline.tune_price`).

References
----------
.. [PS22] N. Papernot, T. Steinke. Hyperparameter Tuning with Renyi Differential Privacy. ICLR 2022.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from core.errors import ParameterError
from core.noise import check_rng
from core.validation import check_counts

__all__ = ["SelectionSampler", "selection_scenario", "SELECTION_DEFAULTS"]

SELECTION_DEFAULTS: dict[str, Any] = {"mean": 3.0, "shape": 1.0, "sigma1": 2.0, "sigma2": 4.0, "sigma": 4.0,
                                      "delta": 1e-5}
"""Settings at which the selection audit has power (few queries, little noise)."""


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
    """

    name = "private-selection"

    def __init__(self, candidates: Sequence[Any], *, mean: float, shape: float = 1.0, delta: float = 1e-5):
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

    def claim(self, counts) -> tuple[float, float]:
        """The whole selection's guarantee on these votes' number of queries.

        Returns
        -------
        (float, float)
        """
        from core import pipeline

        m = check_counts(counts).shape[0]
        g = pipeline.tune_price(self.candidates, m, mean=self.mean, shape=self.shape, delta=self.delta)
        return g.epsilon, g.delta

    def __call__(self, counts, n_trials: int, rng) -> np.ndarray:
        from core.mechanisms.selection import draw_repetitions

        counts = check_counts(counts)
        gen = check_rng(rng)
        n, m = int(n_trials), counts.shape[0]
        K = draw_repetitions(self.mean, self.shape, gen, size=n)
        best_score = np.full(n, -1, dtype=np.int64)
        best_idx = np.zeros(n, dtype=np.int64)
        best_labels = np.zeros((n, m), dtype=np.int64)
        for r in range(int(K.max())):
            active = K > r
            pick = gen.integers(len(self.samplers), size=n)
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
