"""PATE's Laplace noisy max, LNMax (docs/design.md §3.4)."""

from __future__ import annotations

import numpy as np

from core import accounting, noise
from core.mechanisms.result import LabelingResult, make_result
from core.validation import (
    check_counts,
    check_delta,
    check_gamma,
)

__all__ = ["lnmax_label"]


# ---------------------------------------------------------------------------
# PATE LNMax
# ---------------------------------------------------------------------------

def lnmax_label(counts, *, gamma: float, delta: float, rng=None) -> LabelingResult:
    """PATE's Laplace noisy max (docs/design.md §3.4): ``argmax_j (counts[i, j] + Lap(1/γ))``.

    Guarantee (:func:`core.accounting.lnmax_guarantee`): one changed teacher moves two
    vote counts of a query by one, so each answer is a post-processing of two Laplace
    coordinates of sensitivity 1; the m answers are (ε, δ)-DP with ε the privacy-loss
    distribution composition of those 2m coordinates (never above PATE's bound
    ``4mγ² + 2γ sqrt(2m log(1/δ))`` or the optimal composition of m pure ``2γ``-DP
    steps; ``params["epsilon_pate_simple"]`` keeps PATE's figure).  The data-dependent
    moments-accountant ε (PATE Thm 2-3) is reported as ``epsilon_data_dependent``:
    it depends on the private votes, so it is a NON-PRIVATE diagnostic, never the
    guarantee and never exported.  Every query is answered (no ⊥).

    Noise: continuous Laplace (as PATE analyses it); only the argmax is released.

    Parameters
    ----------
    counts : array-like of int, shape (m, n_classes)
    gamma : float
        Noise parameter; noise ``Lap(1/γ)``.
    delta : float
        The δ of the guarantee (no default: the budget is always stated).
    rng : Generator, int or None

    Returns
    -------
    LabelingResult
        One label per query (none is ⊥), mechanism ``"lnmax"``.

    References
    ----------
    N. Papernot, M. Abadi, Ú. Erlingsson, I. Goodfellow, K. Talwar, "Semi-supervised
    Knowledge Transfer for Deep Learning from Private Training Data", ICLR 2017 (Section 3.1, Theorems 2–3).
    P. Kairouz, S. Oh, P. Viswanath, "The Composition Theorem for Differential Privacy", ICML 2015.
    docs/design.md §3.4.
    """
    counts = check_counts(counts)
    gamma = check_gamma(gamma)
    delta = check_delta(delta)
    m = counts.shape[0]
    gen = noise.check_rng(rng)
    noisy = counts + noise.laplace(1.0 / gamma, counts.shape, gen)
    labels = np.argmax(noisy, axis=1).astype(np.int64)
    guarantee = accounting.lnmax_guarantee(gamma, n_answers=m, delta=delta)
    simple = guarantee.parts["pate_simple"]
    eps_dd = accounting.pate_moments_epsilon(counts, gamma=gamma, delta=delta)
    params = {
        "gamma": gamma,
        "noise_scale": 1.0 / gamma,
        "delta_target": delta,
        "m": m,
        "k": int(counts[0].sum()),
        "epsilon_pate_simple": float(simple),
        "noise": "continuous Laplace",
    }
    return make_result("lnmax", labels, None, None, guarantee, params, eps_dd=eps_dd)
