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

def lnmax_label(counts, *, gamma: float, delta: float = 1e-5, rng=None) -> LabelingResult:
    """PATE's Laplace noisy max (docs/design.md §3.4): ``argmax_j (counts[i, j] + Lap(1/γ))``.

    Guarantee: each answer is ``2γ``-DP (PATE §3.1), so m answers are (ε, δ)-DP with
    ε the smaller of PATE's data-independent bound ``4mγ² + 2γ sqrt(2m log(1/δ))``
    and the optimal composition of m pure ``2γ``-DP steps.  The data-dependent
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
    guarantee = accounting.lnmax_guarantee(gamma, m, delta)
    simple = guarantee.parts["pate_simple"]
    eps_dd = accounting.pate_moments_epsilon(counts, gamma, delta)
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
