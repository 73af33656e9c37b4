"""Reading and checking tables, splits, generators and the bundled datasets.
"""

from __future__ import annotations

from core._lazy import lazy_exports

_EXPORTS = {
    "BUNDLED": "datasets",
    "DATASETS_DIR": "datasets",
    "GENERATORS": "datasets",
    "bundled_names": "datasets",
    "generate": "datasets",
    "halfspaces": "datasets",
    "load_bundled": "datasets",
    "thresholds": "datasets",
    "two_gaussians": "datasets",
    "two_gaussians_posterior": "datasets",
    "vc_dimension": "datasets",
    "DEFAULT_MAX_BYTES": "table",
    "LABEL_NAMES": "table",
    "MAX_CLASSES": "table",
    "Table": "table",
    "check_class_sizes": "table",
    "check_public": "table",
    "largest_k": "table",
    "load_table": "table",
    "read_public": "table",
    "split_public": "table",
    "table_from_arrays": "table",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
