"""Private labeling mechanisms: one module per family, the one sparse-vector scan, the
distance to instability, and the registry every caller picks mechanisms from.
"""

from __future__ import annotations

from core._lazy import lazy_exports

_EXPORTS = {
    "BaselineSession": "a_stab",
    "a_stab_label": "a_stab",
    "composition_baseline_label": "a_stab",
    "BTTSession": "btt",
    "btt_label": "btt",
    "btt_public_params": "btt",
    "CertifiedDiagnostics": "certified",
    "CertifiedSampler": "certified",
    "certified_confident_gnmax_label": "certified",
    "certified_diagnostics": "certified",
    "COMPOSITIONS": "certified_params",
    "CertifiedParameters": "certified_params",
    "certified_parameters": "certified_params",
    "gnss_rdp": "certified_params",
    "log_sensitivity_rdp": "certified_params",
    "normal_upper_quantile": "certified_params",
    "ACCOUNTING_MODES": "gaussian",
    "check_ordering": "gaussian",
    "confident_gnmax_label": "gaussian",
    "gnmax_label": "gaussian",
    "lnmax_label": "lnmax",
    "Mechanism": "registry",
    "PARAMETERS": "registry",
    "Parameter": "registry",
    "REGISTRY": "registry",
    "ENTRY_POINT_GROUP": "registry",
    "get": "registry",
    "load_plugins": "registry",
    "names": "registry",
    "register": "registry",
    "unregister": "registry",
    "BOTTOM": "result",
    "LabelingResult": "result",
    "UNPROCESSED": "result",
    "btt_remedies": "result",
    "infeasible_reason": "result",
    "make_result": "result",
    "OneShotSession": "session",
    "PerQuerySession": "session",
    "Session": "session",
    "btt_soft_label": "soft",
    "soft_bin_histograms": "soft",
    "distance_to_instability": "stability",
    "distance_to_instability_printed": "stability",
    "margins": "stability",
    "max_distance": "stability",
    "min_teachers_for_threshold": "stability",
    "plurality": "stability",
    "plurality_and_distance": "stability",
    "plurality_and_distance_unchecked": "stability",
    "sparse_vector_scan": "svt",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

# The built-in mechanisms register themselves in the registry on import (the registry
# itself imports no mechanism module, so every module depends only on lower ones).
from core.mechanisms import builtin as _builtin  # noqa: E402,F401
