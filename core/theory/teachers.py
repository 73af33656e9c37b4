"""Algorithm 2 sizes: the number of teachers ``k`` (recommended and minimum) and the
soft-label (``2T`` rounds, ``2m`` tests) noise scale, threshold and teacher count.

:func:`btt_noise_scale` (λ) and :func:`btt_threshold` (w) are re-exported from
:mod:`core.accounting.btt` (one implementation).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from core.accounting.btt import btt_noise_scale, btt_num_teachers, btt_threshold, calibrate_btt
from core.mechanisms.stability import min_teachers_for_threshold
from core.validation import check_beta, check_delta, check_epsilon
from core.theory.checks import FloatOrArray, each_checked, as_output, positive_array

__all__ = [
    "btt_noise_scale",
    "btt_threshold",
    "btt_num_teachers",
    "btt_soft_noise_scale",
    "btt_soft_threshold",
    "btt_soft_num_teachers",
    "btt_min_teachers",
]


# ---------------------------------------------------------------------------------------
# Algorithm 2: number of teachers; soft labels
# ---------------------------------------------------------------------------------------


def btt_soft_noise_scale(T: ArrayLike, epsilon: ArrayLike, delta: ArrayLike) -> FloatOrArray:
    """λ for soft labels (full version Section 5; docs/design.md §3.3): the hard-label λ at ``2T`` rounds.

    Every failed test of Algorithms 6–8 is one sparse-vector round and a query can fail
    two tests, so the soft-label mechanism halts after ``2T`` failed tests and is
    calibrated as :func:`btt_noise_scale` with ``2T``:
    ``λ = sqrt(32 · 2T · log(2/δ)) / ε``.
    """
    T = positive_array(T, "T", "the cutoff")
    epsilon = each_checked(check_epsilon, epsilon, "epsilon")
    delta = each_checked(check_delta, delta, "delta")
    return as_output(btt_noise_scale(2.0 * T, epsilon, delta))


def btt_soft_threshold(noise_scale: ArrayLike, m: ArrayLike, delta: ArrayLike) -> FloatOrArray:
    """w for soft labels (docs/design.md §3.3): the hard-label threshold at ``2m`` tests.

    ``w = 2 λ log(2 · 2m / δ)``: up to two tests per query, so the union bound over
    tests runs over ``2m``.
    """
    lam = positive_array(noise_scale, "noise_scale", "the threshold noise scale λ")
    m = positive_array(m, "m", "the number of queries")
    delta = each_checked(check_delta, delta, "delta")
    return as_output(btt_threshold(lam, 2.0 * m, delta))


def btt_soft_num_teachers(
    noise_scale: ArrayLike, m: ArrayLike, T: ArrayLike, delta: ArrayLike, beta: ArrayLike
) -> FloatOrArray:
    """k for soft labels: :func:`btt_num_teachers` with ``2m`` tests and ``2T`` rounds.

    ``k = 34·sqrt(2)·λ·log(4 · 2m · 2T / min(δ, β/2))`` with λ from
    :func:`btt_soft_noise_scale`.  (The soft-label algorithms' formulas were lost in the
    seed text; this keeps Algorithm 2's form with the soft calibration's counts, as
    docs/design.md §3.3 does.)
    """
    m = positive_array(m, "m", "the number of queries")
    T = positive_array(T, "T", "the cutoff")
    return btt_num_teachers(noise_scale, 2.0 * m, 2.0 * T, delta, beta)


def btt_min_teachers(epsilon: float, delta: float, T: int, m: int, calibration: str = "tight", soft: bool = False,
                     *, discrete: bool = True) -> int:
    """The fewest teachers for which a unanimous vote passes BTT's test with probability ≥ 1/2.

    A unanimous vote of k teachers has margin ``M = k`` and distance to instability
    ``d = ceil(k/2) - 1`` (docs/design.md §2; not BTT's printed ``k - 1``).  It passes
    ``d + Z1 > w + Z2`` (:func:`btt_pass_probability`) with probability ≥ 1/2 exactly
    when

    - discrete noise (the mechanism's; default): ``d > w``, i.e.
      ``ceil(k/2) >= floor(w) + 2``, so ``k_min = 2·floor(w) + 3``;
    - continuous noise: ``d >= w``, i.e. ``ceil(k/2) >= ceil(w) + 1``, so
      ``k_min = 2·ceil(w) + 1``

    (the smallest k with ``ceil(k/2) >= c`` is ``2c - 1``).  The two agree unless w is a
    whole number.  The discrete rule is :func:`core.mechanisms.stability.min_teachers_for_threshold`,
    the one the aggregators report as ``k_min_unanimous``.  w comes from ``core.accounting.calibrate_btt`` for the given
    calibration (``soft=True``: ``2T`` rounds and ``2m`` tests).  With fewer teachers even
    a unanimous query is more likely to be ⊥ than answered, so the run answers little.

    Returns
    -------
    int
        k_min.

    Examples
    --------
    ε = 1, δ = 1e-5, T = 10, m = 1000, paper calibration: w ≈ 2389.1, so
    ``k_min = 2·2389 + 3 = 4781`` (d = 2390 > w; k = 4780 gives d = 2389 < w).
    """
    cal = calibrate_btt(epsilon, delta=delta, T=T, m=m, calibration=calibration, soft=soft)
    w = float(cal.threshold)
    if discrete:
        return min_teachers_for_threshold(w)  # 2·floor(w) + 3, the mechanism's rule
    return int(2 * math.ceil(w) + 1) if w >= 0 else 1
