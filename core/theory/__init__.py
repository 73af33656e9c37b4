"""Theory calculators (docs/design.md §4): Theorem 3.2, explicit VC bounds, the loop solver,
rates and sample complexities, expected answers.  Public inputs only; nothing private.

Vectorized over their numeric arguments (an array in gives an array of the broadcast shape
out; all-scalar input gives a numpy scalar), so that the app can draw curves.  Natural log
everywhere unless a formula names ``log2``.

Modules
-------
teachers
    Algorithm 2 sizes: :func:`btt_num_teachers`, :func:`btt_min_teachers`, the soft-label
    :func:`btt_soft_noise_scale`, :func:`btt_soft_threshold`, :func:`btt_soft_num_teachers`;
    :func:`btt_noise_scale` and :func:`btt_threshold` re-exported from core.accounting.
Theorem 3.2
    :func:`cutoff_T`, :func:`misclassification_bound`, and its conditions for one run:
    :func:`theorem_32_conditions` (a :class:`Theorem32Check`); named here, defined in
    :mod:`core.accounting.btt` and :mod:`core.accounting.btt_theorem` (below the mechanisms,
    which check a run's conditions).
vc
    Explicit learners: :func:`realizable_sample_size`, :func:`realizable_error`,
    :func:`agnostic_error`, :func:`teacher_error`.
loop
    :func:`solve_btt_parameters` (``T → α → k → T``).
rates
    Rates, :func:`crossover_m`, sample complexities; the composition helpers re-exported.
answers
    :func:`btt_pass_probability`, :func:`expected_answers_btt`,
    :func:`expected_answers_composition`.
estimate
    Remark 1: :func:`private_error_estimate`, :func:`error_estimate_budget_split`.
checks
    Shared elementwise validation and the scalar-or-array return convention.
curves
    The curve grids the Bounds page plots.
"""

from __future__ import annotations

from core._lazy import lazy_exports

_EXPORTS = {
    "btt_pass_probability": "answers",
    "expected_answers_btt": "answers",
    "expected_answers_composition": "answers",
    "FloatOrArray": "checks",
    "SETTINGS": "checks",
    "as_output": "checks",
    "check_setting": "checks",
    "each_checked": "checks",
    "nonnegative_array": "checks",
    "positive_array": "checks",
    "unit_array": "checks",
    "answers_model": "curves",
    "rate_curves": "curves",
    "sample_complexity_curves": "curves",
    "solve_loop": "curves",
    "Condition": "core.accounting.btt_theorem",
    "Theorem32Check": "core.accounting.btt_theorem",
    "theorem_32_conditions": "core.accounting.btt_theorem",
    "cutoff_T": "core.accounting.btt",
    "misclassification_bound": "core.accounting.btt",
    "BudgetSplit": "estimate",
    "error_estimate_budget_split": "estimate",
    "private_error_estimate": "estimate",
    "BTTParameters": "loop",
    "solve_btt_parameters": "loop",
    "advanced_composition_eps0": "rates",
    "advanced_composition_epsilon": "rates",
    "crossover_m": "rates",
    "misclassification_rate_btt": "rates",
    "misclassification_rate_composition": "rates",
    "pate_simple_epsilon": "rates",
    "sample_complexity_nonprivate": "rates",
    "sample_complexity_private": "rates",
    "btt_min_teachers": "teachers",
    "btt_noise_scale": "teachers",
    "btt_num_teachers": "teachers",
    "btt_soft_noise_scale": "teachers",
    "btt_soft_num_teachers": "teachers",
    "btt_soft_threshold": "teachers",
    "btt_threshold": "teachers",
    "agnostic_error": "vc",
    "realizable_error": "vc",
    "realizable_sample_size": "vc",
    "teacher_error": "vc",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
