"""The empirical privacy audit: sample a mechanism on neighbouring inputs and lower-bound ε.
"""

from __future__ import annotations

from core._lazy import lazy_exports

_EXPORTS = {
    "AStabSampler": "engine",
    "AUDIT_MECHANISMS": "engine",
    "AuditResult": "engine",
    "AuditScenario": "engine",
    "BTTSampler": "engine",
    "BTTSoftSampler": "engine",
    "LNMaxSampler": "engine",
    "NeighbourPair": "engine",
    "RealAggregator": "engine",
    "SamplerComparison": "engine",
    "TEACHING_MECHANISMS": "engine",
    "audit": "engine",
    "audit_mechanisms": "engine",
    "builtin_pairs": "engine",
    "builtin_scenario": "engine",
    "check_neighbouring_counts": "engine",
    "check_neighbouring_scores": "engine",
    "clopper_pearson": "engine",
    "compare_samplers": "engine",
    "counts_with_distance": "engine",
    "epsilon_lower_bound": "engine",
    "hash_rows": "engine",
    "neighbouring_pairs": "engine",
    "pair_choices": "engine",
    "run_scenario": "engine",
    "scenario": "engine",
    "soft_neighbouring_pairs": "engine",
    "BrokenThresholdConfidentGNMaxSampler": "gaussian",
    "ConfidentGNMaxSampler": "gaussian",
    "GNMaxSampler": "gaussian",
    "HalvedNoiseGNMaxSampler": "gaussian",
    "gaussian_pairs": "gaussian",
    "gaussian_scenario": "gaussian",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
