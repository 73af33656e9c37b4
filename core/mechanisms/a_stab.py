"""``A_stab`` and the advanced-composition baseline (docs/design.md §3.1, §3.5)."""

from __future__ import annotations

import numpy as np

from core import accounting, noise
from core.mechanisms.result import BOTTOM, LabelingResult, infeasible_reason, make_result
from core.mechanisms.session import Session
from core.mechanisms.stability import plurality_and_distance_unchecked
from core.validation import check_counts, check_delta, check_epsilon

__all__ = ["a_stab_label", "composition_baseline_label", "BaselineSession"]


# ---------------------------------------------------------------------------
# A_stab and the advanced-composition baseline
# ---------------------------------------------------------------------------

def _a_stab(counts: np.ndarray, eps0: float, threshold: float, gen: np.random.Generator) -> np.ndarray:
    """A_stab on every query of counts already checked by ``check_counts``."""
    top, dist = plurality_and_distance_unchecked(counts)
    z = noise.discrete_laplace(1.0 / eps0, counts.shape[0], gen)
    return np.where(dist + z > threshold, top, BOTTOM).astype(np.int64)


def _checked(counts, epsilon, delta, rng) -> tuple[np.ndarray, float, float, np.random.Generator]:
    """The counts (equal totals: k teachers), the per-run budget and the generator, checked."""
    return check_counts(counts), check_epsilon(epsilon), check_delta(delta), noise.check_rng(rng)


def a_stab_label(counts, *, epsilon: float, delta: float, rng=None) -> LabelingResult:
    """``A_stab`` (docs/design.md §3.1, BTT Thm 2.4) on each query independently.

    ``dist + DLap(1/ε) > Γ = log(1/δ)/ε`` releases the plurality label, else ⊥.
    Guarantee: (ε, δ)-DP for one query; for m queries the result reports basic
    composition ``(m ε, m δ)``.  It releases the label with probability ≥ 1 − β when
    ``dist ≥ (log(1/δ) + log(1/β))/ε`` (Thm 2.5).

    Parameters
    ----------
    counts : array-like of int, shape (m, n_classes)
        Teacher vote counts per query (private).
    epsilon : float
        Per-query ε, > 0.
    delta : float
        Per-query δ in (0, 1).
    rng : numpy.random.Generator, int or None, optional
        Randomness (see :func:`core.noise.check_rng`).

    Returns
    -------
    LabelingResult
        Labels (⊥ = -1 where not released) with mechanism ``"a-stab"`` and guarantee ``(mε, mδ)``.

    References
    ----------
    R. Bassily, O. Thakkar, A. Thakurta, "Model-Agnostic Private Learning", NeurIPS 2018 (Theorems 2.4, 2.5).
    C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy",
    Foundations and Trends in Theoretical Computer Science 9(3–4), 2014 (Theorem 3.16).
    docs/design.md §3.1.
    """
    counts, epsilon, delta, gen = _checked(counts, epsilon, delta, rng)
    m, k = counts.shape[0], int(counts[0].sum())
    threshold = accounting.a_stab_threshold(epsilon, delta=delta)
    labels = _a_stab(counts, epsilon, threshold, gen)
    guarantee = accounting.a_stab_guarantee(epsilon, delta=delta, m=m)
    reason = infeasible_reason(k, threshold, f"A_stab at (ε={epsilon:g}, δ={delta:g})",
                               "raise ε or δ")
    params = {"epsilon_per_query": epsilon, "delta_per_query": delta, "threshold": threshold,
              "noise_scale": 1.0 / epsilon, "m": m, "k": k, "noise": "discrete Laplace"}
    return make_result("a-stab", labels, None, None, guarantee, params, feasible=reason is None, reason=reason)


def composition_baseline_label(counts, *, epsilon: float, delta: float, rng=None) -> LabelingResult:
    """The advanced-composition baseline (docs/design.md §3.5).

    Every query is answered independently by ``A_stab`` at per-query ``(ε0, δ0)``,
    where ``δ0 = δ/(2m)``, ``δ' = δ/2`` and ``ε0`` solves
    ``sqrt(2m log(1/δ')) ε0 + m ε0 (e^ε0 − 1) = ε``.
    Guarantee: (ε, δ)-DP under replace-one adjacency (advanced composition of m
    (ε0, δ0)-DP answers; basic composition when it is smaller).  BTT beats this
    baseline by about 1/α in the number of answered queries.

    Parameters
    ----------
    counts : array-like of int, shape (m, n_classes)
        Teacher vote counts per query (private).
    epsilon : float
        Total ε, > 0.
    delta : float
        Total δ in (0, 1).
    rng : numpy.random.Generator, int or None, optional
        Randomness (see :func:`core.noise.check_rng`).

    Returns
    -------
    LabelingResult
        Labels (⊥ = -1 where not released) with mechanism ``"baseline"``.

    References
    ----------
    R. Bassily, O. Thakkar, A. Thakurta, "Model-Agnostic Private Learning", NeurIPS 2018 (Theorem 2.4).
    C. Dwork, G. N. Rothblum, S. Vadhan, "Boosting and Differential Privacy", FOCS 2010.
    C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy",
    Foundations and Trends in Theoretical Computer Science 9(3–4), 2014 (Theorem 3.20).
    docs/design.md §3.5.
    """
    counts, epsilon, delta, gen = _checked(counts, epsilon, delta, rng)
    m, k = counts.shape[0], int(counts[0].sum())
    par = accounting.composition_baseline_parameters(epsilon, delta=delta, m=m)
    labels = _a_stab(counts, par.eps0, par.threshold, gen)
    reason = infeasible_reason(k, par.threshold, f"the per-query A_stab of the composition baseline at (ε={epsilon:g}, δ={delta:g}, m={m})",
                               "raise ε, or label fewer queries (every query spends budget)")
    params = {
        "epsilon_target": epsilon,
        "delta_target": delta,
        "m": m,
        "k": k,
        "eps0": par.eps0,
        "delta0": par.delta0,
        "delta_prime": par.delta_prime,
        "threshold": par.threshold,
        "noise_scale": 1.0 / par.eps0,
        "noise": "discrete Laplace",
    }
    return make_result("baseline", labels, None, None, par.guarantee, params, feasible=reason is None, reason=reason)


class BaselineSession(Session):
    """The composition baseline answering a stream of query batches (the estimator).

    The per-query (ε0, δ0) is set for at most ``m_max`` queries; every query is answered
    independently by ``A_stab`` at that budget, so the first ``n`` answers are covered by
    :meth:`spent` (the same composition at ``n``), whatever the batches.

    Parameters
    ----------
    m_max : int
    rng : Generator, int or None
    epsilon, delta : float
        The budget for all ``m_max`` queries.
    """

    def __init__(self, m_max: int, rng, *, epsilon: float, delta: float) -> None:
        super().__init__(m_max, rng)
        self.parameters = accounting.composition_baseline_parameters(epsilon, delta=delta, m=self.m_max)

    def _answer(self, counts: np.ndarray) -> tuple[np.ndarray, int]:
        return _a_stab(counts, self.parameters.eps0, self.parameters.threshold, self._gen), counts.shape[0]

    def spent(self) -> accounting.PrivacyGuarantee:
        """The guarantee of the queries answered so far.

        Returns
        -------
        PrivacyGuarantee
            The baseline's composition over the ``n_processed`` queries.

        References
        ----------
        C. Dwork, G. N. Rothblum, S. Vadhan, "Boosting and Differential Privacy", FOCS 2010.
        docs/design.md §3.5.
        """
        return self.parameters.spent(self.n_processed)
