"""Private selection over a grid of settings: its price before it runs, and the run.

Part of :mod:`core.pipeline` (see its docstring); import the names from there.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

from core.pipeline.outputs import student
from core.pipeline.runs import ledger_entry, resolve

__all__ = ['tune_price', 'tune', 'tune_plan', 'holdout_score']


def tune_price(candidates, m: int, *, mean: float | None = None, shape: float = 1.0, score_sigma: float | None = None,
               delta: float | None = None):
    """The whole private selection's guarantee over a grid, before anything runs (docs/design.md §10.3).

    Parameters
    ----------
    candidates : sequence of (str, mapping)
        The grid: registered mechanism names and settings (``epsilon`` as for :func:`label`).
    m : int
        Queries each candidate labels.
    mean : float, optional
        Mean number of repetitions (default 3 per candidate).
    shape : float
        Shape of the truncated negative binomial number of repetitions (1: geometric).
    score_sigma : float, optional
        Noise of a held-out score (:func:`holdout_score`); None scores by the number answered.
    delta : float, optional
        δ of the whole selection (default: the largest candidate δ).

    Returns
    -------
    core.accounting.PrivacyGuarantee

    References
    ----------
    N. Papernot, T. Steinke, "Hyperparameter Tuning with Renyi Differential Privacy", ICLR 2022.
    """
    from core.accounting.guarantee import PrivacyGuarantee

    _, entry, g = tune_plan(candidates, m, mean=mean, shape=shape, score_sigma=score_sigma, delta=delta)
    return PrivacyGuarantee(float(g.epsilon), float(g.delta), "repeat-and-select", entry.description,
                            {"candidates": len(list(candidates)), "repeat_mean": float(entry.params["repeat_mean"]),
                             "repeat_shape": float(shape)})


def tune(inputs, candidates, *, mean: float | None = None, shape: float = 1.0, score=None, score_sigma: float | None = None,
         delta: float | None = None, ledger=None, rng=None):
    """Private selection over a grid on the votes: the best candidate's labels, under one guarantee.

    The selection's privacy map (:func:`tune_price`) is charged to ``ledger`` BEFORE
    anything runs (a selection past the budget is refused and nothing runs).

    Parameters
    ----------
    inputs : array-like, PrivateRows or mapping
        Vote counts ``(m, n_classes)``, the private rows of a DP-training route
        (:func:`core.pipeline.mechanism_inputs` of ``dp-logistic``), or both as
        ``{"counts": …, "rows": …}`` (:func:`core.mechanisms.selection.selection_inputs`).
    candidates : sequence of (str, mapping)
    mean, shape, score_sigma, delta
        See :func:`tune_price`.
    score : callable, optional
        A held-out count (:func:`holdout_score`); None scores by the number answered.
    ledger : core.ledger.PrivacyLedger, optional
    rng : Generator, int or None

    Returns
    -------
    core.mechanisms.selection.SelectionResult
    """
    from core.mechanisms.selection import select

    from core.mechanisms.selection import selection_inputs

    if ledger is not None:
        m = max(int(next(iter(selection_inputs(inputs).values())).shape[0]), 1)
        _, entry, _ = tune_plan(candidates, m, mean=mean, shape=shape, score_sigma=score_sigma, delta=delta)
        ledger.charge(entry)
    return select(inputs, candidates, prepare=_prepare_candidate, mean=mean, shape=shape, score=score,
                  score_sigma=score_sigma, delta=delta, rng=rng)


def _prepare_candidate(name: str, settings: Mapping[str, Any], m: int):
    """A selection candidate's resolved parameters and ledger entry (the pipeline's own rules)."""
    params = resolve(name, settings, m)
    return params, ledger_entry(name, params, m)


def tune_plan(candidates, m: int, *, mean: float | None = None, shape: float = 1.0, score_sigma: float | None = None,
              delta: float | None = None):
    """The candidates' resolved settings and the selection's ledger entry, before anything runs.

    Parameters
    ----------
    candidates, m, mean, shape, score_sigma, delta
        As for :func:`tune_price`.

    Returns
    -------
    (list of (str, dict), RDPEntry, PrivacyGuarantee)
        The resolved candidates, the entry a ledger is charged and its (ε, δ).
    """
    from core.mechanisms.selection import selection_plan

    return selection_plan(candidates, m, prepare=_prepare_candidate, mean=mean, shape=shape, score_sigma=score_sigma,
                          delta=delta)


def holdout_score(public_X, holdout, learner: str, params: Mapping[str, Any] | None, table, *, bottom: str = "drop",
                  rng=None) -> Callable[[Any], int]:
    """A private selection's score: the student's correct predictions on held-out private rows.

    The held-out rows must be kept out of every teacher's chunk (split them off before
    :func:`core.pipeline.train`, e.g. with :func:`core.data.split_public`).  The score reads the
    teachers' rows only through the released labels (the student is trained on them),
    and changing one held-out row moves it by at most 1: a count of sensitivity 1,
    released by :func:`tune` with discrete Gaussian noise (docs/design.md §10.3).  A run
    whose labels cannot train a student scores 0.

    With a privacy unit (``holdout.unit``: split off by person, so no held-out person has
    a row under a teacher) one row of each held-out person is scored, chosen at random
    without reading it (:func:`core.data.units.bound_rows` with ``r = 1``): replacing one
    person then moves the count by at most 1, the same sensitivity per person.

    Parameters
    ----------
    public_X : pandas.DataFrame
        The public rows' features (the student's training rows).
    holdout : core.data.Table
        The held-out private rows.
    learner : str
    params : mapping, optional
    table : core.data.Table
        The private table (its preprocessing).
    bottom : str
        The student's ⊥ policy.
    rng : Generator, int or None

    Returns
    -------
    callable
        ``score(result) -> int``.
    """
    from core.errors import PrivateLabelLabError
    from core.noise import check_rng

    gen = check_rng(rng)
    X_h = holdout.features
    y_h = np.asarray(holdout.labels)
    if holdout.unit is not None:
        from core.data.units import bound_rows

        one = bound_rows(holdout.unit, 1, rng=gen, rows=holdout.rows if holdout.missing == "drop" else None)
        X_h, y_h = X_h.iloc[one].reset_index(drop=True), y_h[one]

    def score(result) -> int:
        try:
            st = student(public_X, result, learner, params, table, bottom=bottom, rng=gen)
        except (PrivateLabelLabError, ValueError):
            return 0
        return int(np.sum(np.asarray(st.predict(X_h)) == y_h))

    return score
