"""Curve grids of the theory calculators, for plotting (the app's Bounds page).

Public inputs only: every function takes sizes and privacy parameters and returns arrays
of the calculators in :mod:`core.theory`; nothing private is read.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["rate_curves", "sample_complexity_curves", "solve_loop", "answers_model"]


def rate_curves(V: int, epsilon: float, n: int, setting: str, gamma: float, m: int) -> dict[str, Any]:
    """Misclassification-rate shapes vs the number of queries, BTT and the composition baseline.

    Parameters
    ----------
    V : int
        VC dimension.
    epsilon : float
    n : int
        Private rows.
    setting : {"realizable", "agnostic"}
    gamma : float
        Best error of the class (agnostic).
    m : int
        The user's number of queries (the grid reaches past it).

    Returns
    -------
    dict
        ``m`` (the grid), ``btt``, ``composition`` (rates on it) and ``crossover`` (M).
    """
    from core.theory import crossover_m, misclassification_rate_btt, misclassification_rate_composition

    M = float(crossover_m(V, epsilon, n, setting, gamma))
    top = max(10.0 * m, 100.0 * (M if np.isfinite(M) else m), 10.0)
    grid = np.geomspace(1.0, top, 200)
    return {
        "m": grid,
        "btt": misclassification_rate_btt(grid, V, epsilon, n, setting, gamma),
        "composition": misclassification_rate_composition(grid, V, epsilon, n, setting, gamma),
        "crossover": M,
    }


def sample_complexity_curves(V: int, epsilon: float) -> dict[str, Any]:
    """Private and non-private sample-complexity shapes vs the target error α.

    Returns
    -------
    dict
        ``alpha`` (the grid) and ``curves`` (name → private rows needed).
    """
    from core.theory import sample_complexity_nonprivate, sample_complexity_private

    alpha = np.geomspace(0.005, 0.5, 120)
    return {
        "alpha": alpha,
        "curves": {
            "private, realizable (Thm 4.2)": sample_complexity_private(alpha, V, epsilon, "realizable"),
            "private, agnostic (Thm 4.3)": sample_complexity_private(alpha, V, epsilon, "agnostic"),
            "private, realizable ERM (Remark 2)": sample_complexity_private(alpha, V, epsilon, "realizable_erm"),
            "private, efficient learner (Remark 3)": sample_complexity_private(alpha, V, epsilon, "realizable_efficient"),
            "non-private, realizable V/α": sample_complexity_nonprivate(alpha, V, "realizable"),
            "non-private, agnostic V/α²": sample_complexity_nonprivate(alpha, V, "agnostic"),
        },
    }


def solve_loop(n: float, V: float, epsilon: float, delta: float, beta: float, m: int, gamma: float, setting: str):
    """The loop T → α → k → T (:func:`core.theory.solve_btt_parameters`) with the paper calibration.

    The tight calibration is not offered here: its solver calls the exact accountant for
    every candidate T and takes minutes.
    """
    from core.theory import solve_btt_parameters

    return solve_btt_parameters(n, V, epsilon, delta, beta, m, gamma, setting=setting, calibration="paper")


def answers_model(alpha: float, k_teachers: int, epsilon: float, delta: float, T: int, m: int,
                  calibration: str = "tight") -> dict[str, Any]:
    """Expected answered count vs the number of teachers (:func:`core.theory.expected_answers_btt`).

    Parameters
    ----------
    alpha : float
        Every teacher's error probability (the model).
    k_teachers : int
        The user's number of teachers (the grid reaches past it).
    epsilon, delta, T, m, calibration
        BTT's settings.

    Returns
    -------
    dict
        ``k`` (the grid), ``answered`` (expected answers on it), ``k_min``
        (:func:`core.theory.btt_min_teachers`).
    """
    from core.theory import btt_min_teachers, expected_answers_btt

    ks = np.unique(np.geomspace(2, max(2000, 4 * int(k_teachers)), 40).astype(int))
    answered = expected_answers_btt(ks, alpha, epsilon, delta, int(T), int(m), calibration=calibration)
    k_min = btt_min_teachers(epsilon, delta, int(T), int(m), calibration=calibration)
    return {"k": ks, "answered": answered, "k_min": int(k_min)}
