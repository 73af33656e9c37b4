"""Privacy accounting: every (ε, δ) the library reports is computed here.

One interface: every accountant returns a :class:`PrivacyGuarantee` (ε, δ, the method
and a sentence saying how it was computed).  ``__all__`` is the public API; the
helpers behind it live in the submodules (:mod:`.rdp`, :mod:`.gaussian_dp`,
:mod:`.data_dependent` …).  The privacy ledger that composes the runs on a dataset is
:mod:`core.ledger`.  Adjacency: replace one private row
(docs/design.md §1); at most one teacher changes.
"""

from __future__ import annotations

from core._lazy import lazy_exports

# The public API: the names a researcher needs (``__all__`` and ``dir()``).
_EXPORTS = {
    "a_stab_guarantee": "baseline",
    "composition_baseline_parameters": "baseline",
    "BTTCalibration": "btt",
    "btt_guarantee": "btt",
    "calibrate_btt": "btt",
    "exact_composition_epsilon": "composition",
    "optimal_composition_epsilon": "composition",
    "confident_gnmax_epsilon_data_dependent": "data_dependent",
    "gnmax_rdp_data_dependent": "data_dependent",
    "gaussian_epsilon": "gaussian_dp",
    "gaussian_mu_sq_for_epsilon": "gaussian_dp",
    "PrivacyGuarantee": "guarantee",
    "data_dependent_note": "guarantee",
    "lnmax_gamma_for_epsilon": "pate",
    "lnmax_guarantee": "pate",
    "pate_moments_epsilon": "pate",
    "ORDERS": "rdp",
    "confident_gnmax_guarantee": "rdp",
    "confident_gnmax_rdp": "rdp",
    "confident_gnmax_sigmas_for_epsilon": "rdp",
    "filter_guarantee": "rdp",
    "gnmax_guarantee": "rdp",
    "gnmax_rdp": "rdp",
    "gnmax_sigma_for_epsilon": "rdp",
    "rdp_epsilon_floor": "rdp",
    "rdp_to_dp": "rdp",
}

# Still reachable as ``core.accounting.<name>`` for existing callers, but not public API:
# import them from their submodule (e.g. ``core.accounting.rdp.check_sigma``).
_MORE = {
    "BaselineParameters": "baseline",
    "a_stab_threshold": "baseline",
    "btt_noise_scale": "btt",
    "btt_threshold": "btt",
    "release_delta": "btt",
    "svt_round_epsilon": "btt",
    "COMPOSITION_METHODS": "composition",
    "advanced_composition_eps0": "composition",
    "advanced_composition_epsilon": "composition",
    "basic_composition_epsilon": "composition",
    "compose_pure_dp": "composition",
    "optimal_composition_delta": "composition",
    "DEFAULT_ORDERS": "data_dependent",
    "confident_gnmax_rdp_data_dependent": "data_dependent",
    "lnmax_rdp_data_dependent": "data_dependent",
    "log_q_gnmax": "data_dependent",
    "log_q_gnmax_unchecked": "data_dependent",
    "log_q_threshold": "data_dependent",
    "log_q_threshold_of_top": "data_dependent",
    "rdp_from_logq": "data_dependent",
    "rdp_from_logq_unchecked": "data_dependent",
    "theorem6_bound": "data_dependent",
    "threshold_rdp_data_dependent": "data_dependent",
    "gaussian_delta": "gaussian_dp",
    "GNMaxSensitivity": "gnmax_sensitivity",
    "check_conditions": "gnmax_sensitivity",
    "gnmax_sensitivity": "gnmax_sensitivity",
    "pate_gamma_for_epsilon": "pate",
    "pate_moments_alpha": "pate",
    "pate_simple_epsilon": "pate",
    "GNMAX_SENSITIVITY_SQ": "rdp",
    "THRESHOLD_SENSITIVITY_SQ": "rdp",
    "best_order": "rdp",
    "check_order": "rdp",
    "check_orders": "rdp",
    "check_sigma": "rdp",
    "filter_budget_for_epsilon": "rdp",
    "gaussian_rdp": "rdp",
    "SmoothSensitivityProfile": "smooth_sensitivity",
    "certified_rdp_terms": "smooth_sensitivity",
    "certified_rdp_terms_from_sensitivity": "smooth_sensitivity",
    "confident_gnmax_smooth_sensitivity": "smooth_sensitivity",
    "local_sensitivity_profile": "smooth_sensitivity",
    "smooth_sensitivity_profile": "smooth_sensitivity",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _MORE)
