"""Theory calculators (docs/design.md §4): Theorem 3.2, explicit VC bounds, the loop solver,
rates and sample complexities, expected answers.  Public inputs only; nothing private.
"""

from __future__ import annotations

from core._lazy import lazy_exports

_EXPORTS = {
    "BTTParameters": "bounds",
    "BudgetSplit": "bounds",
    "advanced_composition_eps0": "bounds",
    "advanced_composition_epsilon": "bounds",
    "agnostic_error": "bounds",
    "btt_min_teachers": "bounds",
    "btt_noise_scale": "bounds",
    "btt_num_teachers": "bounds",
    "btt_pass_probability": "bounds",
    "btt_soft_noise_scale": "bounds",
    "btt_soft_num_teachers": "bounds",
    "btt_soft_threshold": "bounds",
    "btt_threshold": "bounds",
    "crossover_m": "bounds",
    "cutoff_T": "bounds",
    "error_estimate_budget_split": "bounds",
    "expected_answers_btt": "bounds",
    "expected_answers_composition": "bounds",
    "misclassification_bound": "bounds",
    "misclassification_rate_btt": "bounds",
    "misclassification_rate_composition": "bounds",
    "pate_simple_epsilon": "bounds",
    "private_error_estimate": "bounds",
    "realizable_error": "bounds",
    "realizable_sample_size": "bounds",
    "sample_complexity_nonprivate": "bounds",
    "sample_complexity_private": "bounds",
    "solve_btt_parameters": "bounds",
    "teacher_error": "bounds",
    # curve grids for plotting (the app's Bounds page)
    "answers_model": "curves",
    "rate_curves": "curves",
    "sample_complexity_curves": "curves",
    "solve_loop": "curves",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
