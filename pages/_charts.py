"""Chart data for the pages: the timeline of a run, value ranges, numbers beside charts.

Numpy in, plain lists and numbers out; the pages draw them with plotly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from core.errors import PrivateLabelLabError

STATUS_COLORS = {"answered": "#2e7d32", "⊥": "#c62828", "not processed": "#9e9e9e"}


def timeline(result) -> list[tuple[str, np.ndarray, str]]:
    """Query indices of each outcome (answered, ⊥, not processed) with its colour."""
    from core.mechanisms import BOTTOM, UNPROCESSED

    return [
        ("answered", np.flatnonzero(result.labels >= 0), STATUS_COLORS["answered"]),
        ("⊥", np.flatnonzero(result.labels == BOTTOM), STATUS_COLORS["⊥"]),
        ("not processed", np.flatnonzero(result.labels == UNPROCESSED), STATUS_COLORS["not processed"]),
    ]


def value_range(*arrays) -> tuple[float, float]:
    """Smallest positive and largest finite value of some curves (marker lines on log axes)."""
    values = np.concatenate([np.asarray(a, dtype=float).ravel() for a in arrays])
    values = values[np.isfinite(values) & (values > 0)]
    if values.size == 0:
        return 1e-3, 1.0
    return float(values.min()), float(values.max())


def median(values) -> float:
    """Median, for a caption."""
    return float(np.median(np.asarray(values)))


def public_params(result) -> dict[str, Any]:
    """The run's data-independent parameters (``core.export.PUBLIC_PARAMETERS``) for ``st.json``."""
    from core.export import PUBLIC_PARAMETERS

    out = {}
    for k, v in result.params.items():
        if k not in PUBLIC_PARAMETERS:
            continue
        out[k] = v.item() if isinstance(v, np.generic) else v
    return out


def _sparse_vector(mechanism: str) -> bool:
    """Whether a mechanism tests distances against a threshold with a cutoff T (BTT's family).

    Those are the mechanisms :func:`core.theory.btt_min_teachers` describes.
    """
    from core.mechanisms import registry

    names = registry.get(mechanism).parameter_names
    return "T" in names and "calibration" in names


def min_teachers(result) -> int | None:
    """The fewest teachers whose unanimous vote passes half the time, at a run's settings."""
    from core.theory import btt_min_teachers

    if not _sparse_vector(result.mechanism):
        return None
    p = result.params
    soft = result.scores is not None
    return int(btt_min_teachers(p["epsilon_target"], p["delta_target"], int(p["T"]), int(p["m"]),
                                calibration=p["calibration"], soft=soft))


def min_teachers_for_settings(settings: dict[str, Any], m: int) -> tuple[int, float] | None:
    """``(k_min, w)`` at privacy settings on ``m`` queries, or None.

    ``k_min`` is :func:`core.theory.btt_min_teachers`, ``w`` the threshold of
    :func:`core.accounting.calibrate_btt`.  None for mechanisms without a threshold on
    the distance and for settings the library refuses.
    """
    from core.accounting import calibrate_btt
    from core.mechanisms import registry
    from core.theory import btt_min_teachers

    name = settings["mechanism"]
    if not _sparse_vector(name):
        return None
    soft = registry.get(name).inputs == "scores"
    p = settings
    try:
        k_min = btt_min_teachers(p["epsilon"], p["delta"], int(p["T"]), int(m), calibration=p["calibration"], soft=soft)
        w = calibrate_btt(p["epsilon"], p["delta"], int(p["T"]), int(m), calibration=p["calibration"], soft=soft).threshold
    except PrivateLabelLabError:
        return None
    return int(k_min), float(w)


def model_accuracy(model, table) -> float:
    """Accuracy of a fitted model on a labeled table (the held-out test rows)."""
    return float(np.mean(np.asarray(model.predict(table.features)) == np.asarray(table.labels)))


def bounds_defaults(ds, data_cfg: dict[str, Any]) -> dict[str, Any]:
    """Starting values of the Bounds page for a dataset: its n, m and a VC dimension."""
    if data_cfg.get("source") == "generator":
        from core.data import vc_dimension

        V = int(vc_dimension(data_cfg["name"], **data_cfg.get("params", {})))
        note = f"The VC dimension of the generator's hypothesis class ({data_cfg['name']})."
    else:
        V = len(ds.private.features.columns) + 1
        note = "Suggested: d + 1 for linear classifiers on the d feature columns; change it for other learners."
    return {"V": V, "V_note": note, "n": ds.n_private, "m": ds.n_public, "setting": "realizable", "gamma": 0.1}
