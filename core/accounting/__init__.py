"""Privacy accounting: every (ε, δ) the library reports is computed here.

One interface: every accountant returns a :class:`PrivacyGuarantee` (ε, δ, the method
and a sentence saying how it was computed).  Adjacency: replace one private row
(docs/design.md §1); at most one teacher changes.
"""

from __future__ import annotations

from core._lazy import lazy_exports

_EXPORTS = {
    "BaselineParameters": "baseline",
    "a_stab_guarantee": "baseline",
    "a_stab_threshold": "baseline",
    "composition_baseline_parameters": "baseline",
    "BTTCalibration": "btt",
    "btt_guarantee": "btt",
    "btt_noise_scale": "btt",
    "btt_threshold": "btt",
    "calibrate_btt": "btt",
    "release_delta": "btt",
    "svt_round_epsilon": "btt",
    "COMPOSITION_METHODS": "composition",
    "advanced_composition_eps0": "composition",
    "advanced_composition_epsilon": "composition",
    "basic_composition_epsilon": "composition",
    "compose_pure_dp": "composition",
    "exact_composition_epsilon": "composition",
    "optimal_composition_epsilon": "composition",
    "PrivacyGuarantee": "guarantee",
    "lnmax_gamma_for_epsilon": "pate",
    "lnmax_guarantee": "pate",
    "pate_gamma_for_epsilon": "pate",
    "pate_moments_epsilon": "pate",
    "pate_simple_epsilon": "pate",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
