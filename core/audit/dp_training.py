"""Audit scenarios of the models trained with DP on the private rows (:mod:`core.mechanisms.dp_training`).

The input of a DP-training route is a whole private table, so a neighbouring pair is two
tiny tables that differ in one row (replace-one adjacency), with a declared norm bound
``R = 1`` on one feature.  Each trial is a full release by the library's own code (the
DP logistic regression's coefficients, solved for all trials at once; the naive Bayes'
noisy statistics), and the audit reads one released number, a post-processing, so its
lower bound on ε is valid for the whole release.

Pairs:

``dp-logistic``
    ``label_flips``: the row ``(x = 1, y = 1)`` becomes ``(x = 1, y = 0)`` (the loss
    gradient moves by its largest amount, ``2R``); ``row_moves``: ``x = 1`` becomes
    ``x = 0`` with the same label.  Statistic: the released slope.
``dp-naive-bayes``
    ``row_moves``: a row of class 1 moves from ``x = 1`` to ``x = 0`` (its class's sum moves
    by ``√d``); statistic: that class's noisy sum.  ``class_changes``: the row changes
    class; statistic: class 1's noisy count.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from core.errors import ParameterError

__all__ = ["check_neighbouring_rows", "dp_training_pairs", "dp_training_scenario", "DPLogisticSampler", "DPNaiveBayesSampler"]

_X = np.array([[1.0], [0.5], [0.0], [0.2]])
_Y = np.array([1, 0, 1, 0])
_PUBLIC = np.array([[0.0], [1.0]])

_PAIRS = {
    "dp-logistic": {
        "label_flips": ((1.0, 0), "The row (x = 1, y = 1) is replaced by (x = 1, y = 0): the loss gradient moves by 2R."),
        "row_moves": ((0.0, 1), "The row (x = 1, y = 1) is replaced by (x = 0, y = 1)."),
    },
    "dp-naive-bayes": {
        "row_moves": ((0.0, 1), "A row of class 1 moves from x = 1 to x = 0: its class's sum moves by the whole range."),
        "class_changes": ((1.0, 0), "The row (x = 1, y = 1) changes class to 0: two counts move by 1."),
    },
}


def _rows(x0: float, y0: int):
    from core.mechanisms.dp_training import rows_from_arrays

    X, y = _X.copy(), _Y.copy()
    X[0, 0], y[0] = x0, y0
    return rows_from_arrays(X, y, _PUBLIC, n_classes=2, data_norm=1.0, bounds="declared (audit)")


class DPLogisticSampler:
    """``n_trials`` releases of :func:`core.mechanisms.dp_training.dp_logistic_coefficients`; the slopes."""

    name = "dp-logistic"

    def __init__(self, epsilon: float, delta: float, C: float, perturbation: str):
        self.settings = {"epsilon": float(epsilon), "delta": float(delta), "C": float(C), "perturbation": perturbation}

    def __call__(self, rows, n_trials: int, rng) -> np.ndarray:
        from core.mechanisms.dp_training import dp_logistic_coefficients

        return dp_logistic_coefficients(rows, size=int(n_trials), rng=rng, **self.settings)[:, 0, 0]


class DPNaiveBayesSampler:
    """``n_trials`` releases of :func:`core.mechanisms.dp_training.fit_naive_bayes`; one released number."""

    name = "dp-naive-bayes"

    def __init__(self, epsilon: float, delta: float, statistic: str = "sum"):
        self.epsilon, self.delta, self.statistic = float(epsilon), float(delta), statistic

    def __call__(self, rows, n_trials: int, rng) -> np.ndarray:
        from core.mechanisms.dp_training import fit_naive_bayes

        counts, sums, _ = fit_naive_bayes(rows, epsilon=self.epsilon, delta=self.delta, size=int(n_trials), rng=rng)
        return sums[:, 1, 0] if self.statistic == "sum" else counts[:, 1]


def check_neighbouring_rows(a, b) -> None:
    """Raise unless two :class:`~core.mechanisms.dp_training.PrivateRows` are neighbours:
    the same public rows, bound and size, and private rows differing in exactly one row."""
    from core.mechanisms.dp_training import PrivateRows

    if not (isinstance(a, PrivateRows) and isinstance(b, PrivateRows)):
        raise ParameterError("Neighbouring tables must both be PrivateRows.")
    if a.X.shape != b.X.shape or a.data_norm != b.data_norm or not np.array_equal(a.X_public, b.X_public):
        raise ParameterError("Neighbouring tables have the same size, norm bound and public rows.")
    differ = np.any(a.X != b.X, axis=1) | (a.y != b.y)
    if int(differ.sum()) != 1:
        raise ParameterError(f"Neighbouring tables differ in exactly one row, these in {int(differ.sum())}.")


def dp_training_pairs(mechanism: str) -> tuple[list[str], str]:
    """The neighbouring tables offered for ``mechanism`` and the default."""
    if mechanism not in _PAIRS:
        raise ParameterError(f"No DP-training audit for {mechanism!r}.")
    names = list(_PAIRS[mechanism])
    return names, names[0]


def dp_training_scenario(mechanism: str, *, pair: str | None = None, **settings: Any):
    """The audit of a DP-training route on two tables differing in one row.

    Parameters
    ----------
    mechanism : {"dp-logistic", "dp-naive-bayes"}
    pair : str, optional
        One of :func:`dp_training_pairs`.
    **settings
        ``epsilon``, ``delta`` (and ``C``, ``perturbation`` for the logistic regression).

    Returns
    -------
    core.audit.AuditScenario
    """
    from core.accounting.dp_training import logistic_guarantee, naive_bayes_guarantee
    from core.audit.pairs import NeighbourPair
    from core.audit.run import AuditScenario
    from core.mechanisms import registry

    names, default = dp_training_pairs(mechanism)
    name = pair or default
    if name not in names:
        raise ParameterError(f"Unknown neighbouring pair {name!r}; choose one of {names}.")
    (x0, y0), text = _PAIRS[mechanism][name]
    chosen = NeighbourPair(name, _rows(1.0, 1), _rows(x0, y0), text)
    eps, delta = float(settings["epsilon"]), float(settings["delta"])
    if mechanism == "dp-logistic":
        pert = settings.get("perturbation") or "gaussian"
        C = 1.0 if settings.get("C") is None else float(settings["C"])
        sampler = DPLogisticSampler(eps, delta, C, pert)
        g = logistic_guarantee(eps, delta, perturbation=pert)
        used = dict(sampler.settings)
    else:
        sampler = DPNaiveBayesSampler(eps, delta, "sum" if name == "row_moves" else "count")
        g = naive_bayes_guarantee(eps, delta)
        used = {"epsilon": eps, "delta": delta}
    return AuditScenario(mechanism, registry.get(mechanism).title, sampler, chosen, float(g.epsilon), float(g.delta), used)
