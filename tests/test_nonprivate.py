"""NON-PRIVATE diagnostics (core.nonprivate): the data-dependent ε shown beside a run."""

from __future__ import annotations

import numpy as np

from core import nonprivate, pipeline
from core.mechanisms import registry


def _votes(m: int, k: int, top: int, n_classes: int = 10) -> np.ndarray:
    counts = np.zeros((m, n_classes), dtype=np.int64)
    counts[:, 0] = top
    counts[:, 1:] = (k - top) // (n_classes - 1)
    counts[:, 0] += k - counts.sum(axis=1)
    return counts


def test_the_data_dependent_epsilon_never_reads_above_the_runs_guarantee():
    # votes split across 10 classes: PATE's data-dependent analysis (RDP, converted) reads above
    # the guarantee computed with the exact Gaussian privacy loss; both bound the same loss
    split = _votes(180, 50, 14)
    run = pipeline.label(split, "gnmax", {"epsilon": 4.0, "delta": 1e-5}, rng=0)
    raw = float(registry.get("gnmax").diagnostic(split, run))
    assert raw > run.epsilon
    assert nonprivate.data_dependent_epsilon(split, run) == run.epsilon
    # near-unanimous votes: the data-dependent analysis is far below the guarantee, and shown as it is
    agree = _votes(500, 250, 250)
    run = pipeline.label(agree, "gnmax", {"epsilon": 4.0, "delta": 1e-5}, rng=0)
    raw = float(registry.get("gnmax").diagnostic(agree, run))
    assert raw < run.epsilon and nonprivate.data_dependent_epsilon(agree, run) == raw
