"""Reading and checking tables, splits, generators and the bundled datasets.
"""

from __future__ import annotations

from core._lazy import lazy_exports

_EXPORTS = {
    "ColumnWarning": "columns",
    "IDENTIFIER_NAMES": "columns",
    "WARNING_KINDS": "columns",
    "column_warnings": "columns",
    "single_column_accuracy": "standins",
    "StandIn": "standins",
    "stand_in": "standins",
    "uncertainty_coefficient": "standins",
    "ColumnCheck": "problems",
    "Fix": "problems",
    "Problem": "problems",
    "check_file": "problems",
    "check_columns": "problems",
    "suggest_label_column": "problems",
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
    "MISSING_OPTIONS": "missing",
    "check_markers": "missing",
    "check_missing_option": "missing",
    "mark_missing": "missing",
    "missing_report": "missing",
    "check_public": "public",
    "read_public": "public",
    "DEFAULT_MAX_BYTES": "reading",
    "check_finite": "reading",
    "check_table": "reading",
    "clean_text": "reading",
    "load_table": "reading",
    "read_csv": "reading",
    "row_list": "reading",
    "to_numbers": "reading",
    "unique_column_names": "reading",
    "check_class_sizes": "splits",
    "largest_k": "splits",
    "split_public": "splits",
    "LABEL_NAMES": "table",
    "MAX_CLASSES": "table",
    "Table": "table",
    "table_from_arrays": "table",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
