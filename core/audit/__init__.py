"""The empirical privacy audit: sample a mechanism on neighbouring inputs and lower-bound ε.
"""

from __future__ import annotations

from core._lazy import lazy_exports

_EXPORTS = {
    "RegistrySampler": "default",
    "default_pairs": "default",
    "default_scenario": "default",
    "default_settings": "default",
    "BrokenThresholdConfidentGNMaxSampler": "gaussian",
    "ConfidentGNMaxSampler": "gaussian",
    "GNMaxSampler": "gaussian",
    "HalvedNoiseGNMaxSampler": "gaussian",
    "gaussian_pairs": "gaussian",
    "gaussian_scenario": "gaussian",
    "NeighbourPair": "pairs",
    "check_neighbouring_counts": "pairs",
    "check_neighbouring_scores": "pairs",
    "counts_with_distance": "pairs",
    "neighbouring_pairs": "pairs",
    "soft_neighbouring_pairs": "pairs",
    "PersonVotes": "persons",
    "person_gnmax_audit": "persons",
    "person_logistic_audit": "persons",
    "person_vote_pair": "persons",
    "AuditResult": "run",
    "audit": "run",
    "AStabSampler": "samplers",
    "BTTSampler": "samplers",
    "BTTSoftSampler": "samplers",
    "LNMaxSampler": "samplers",
    "RealAggregator": "samplers",
    "SamplerComparison": "samplers",
    "compare_samplers": "samplers",
    "AUDIT_MECHANISMS": "scenarios",
    "AuditScenario": "run",
    "TEACHING_MECHANISMS": "scenarios",
    "audit_mechanisms": "scenarios",
    "builtin_pairs": "scenarios",
    "builtin_scenario": "scenarios",
    "pair_choices": "scenarios",
    "run_scenario": "scenarios",
    "scenario": "scenarios",
    "SelectionSampler": "selection",
    "selection_scenario": "selection",
    "selection_holdout_scenario": "selection",
    "held_out_score_delta": "selection",
    "HeldOutVotes": "selection",
    "clopper_pearson": "stats",
    "epsilon_lower_bound": "stats",
    "hash_rows": "stats",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
