"""Private selection over a grid of settings: its price before it runs, and the run.

Part of :mod:`core.pipeline` (see its docstring); import the names from there.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

from core.mechanisms.selection import HOLDOUT_ROWS, SCORE_SIGMA  # defined with the selection, re-exported
from core.pipeline.outputs import student
from core.pipeline.runs import ledger_entry, resolve

__all__ = ['tune_price', 'tune', 'tune_plan', 'holdout_score', 'tune_candidate', 'tune_table', 'HOLDOUT_ROWS',
           'SCORE_SIGMA']


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
    from core.mechanisms.selection import check_selection, select

    given = check_selection(inputs, candidates, score=score, score_sigma=score_sigma)  # refused before the charge
    if ledger is not None:
        m = max(int(next(iter(given.values())).shape[0]), 1)
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


def _trains_on_rows(name: str) -> bool:
    """Whether ``name`` is a DP-training route (it reads the private rows, not the teachers)."""
    from core.mechanisms import registry

    return registry.get(name).inputs == "rows"


def tune_candidate(name: str, settings: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """A grid entry as private selection takes it.

    The DP logistic regression's default objective perturbation is Gaussian, whose
    guarantee is known only as (ε, δ); Papernot–Steinke's repeat-and-select theorem is a
    Rényi-DP result and cannot take it.  A DP logistic regression candidate therefore uses
    the pure-ε (Gamma-norm) perturbation, its one choice the selection can take, whatever
    the settings asked (an app session's settings carry the Gaussian default)
    (docs/design.md §10.3).

    Parameters
    ----------
    name : str
        A registered mechanism.
    settings : mapping
        Its settings (``epsilon`` as for :func:`label`).

    Returns
    -------
    (str, dict)
    """
    out = dict(settings)
    if name == "dp-logistic":
        out["perturbation"] = "gamma"
    return name, out


def tune_table(table, public_X, candidates, *, learner: str, params: Mapping[str, Any] | None = None,
               k: int | None = None, holdout: int | None = HOLDOUT_ROWS, score_sigma: float | None = SCORE_SIGMA,
               mean: float | None = None, shape: float = 1.0, delta: float | None = None, ledger=None,
               units: Any = None, rng=None, train_progress: Callable[[int, int], None] | None = None,
               votes_progress: Callable[[int, int], None] | None = None):
    """Private selection on a private table: held-out rows, teachers, the grid's runs, the best one's labels.

    The one job behind ``tune`` on the command line and "Tune privately" in the app:

    1. with a held-out score (``score_sigma`` not None) ``holdout`` private rows (persons,
       with a privacy unit) are split off at random without reading them
       (:func:`core.data.split_public`): no teacher and no DP-training candidate sees them;
       a grid with an ensemble mechanism is refused here, before the charge, when a class
       of the rest is too small for ``k`` (:func:`core.data.check_class_sizes`; only for a
       class list read from the rows, as ``label`` refuses before it trains); before it, the
       learner and its hyperparameters and the public rows' columns (against the table's
       schema, public metadata) are checked, so none of these is refused after the charge;
    2. the selection's privacy map (:func:`tune_plan`) is charged to ``ledger`` before anything
       is trained or run;
    3. the teachers are trained on the rest (only when the grid has an ensemble mechanism),
       and the DP-training candidates read the same rest;
    4. :func:`tune` runs the selection, each candidate scored by :func:`holdout_score` (the
       student's correct count on the held-out rows, released with discrete Gaussian noise
       ``score_sigma``) or, with ``score_sigma=None``, by the number of rows it answered.

    A DP-training route answers every public row, so scored by the number answered it
    would always win: a grid that mixes one with the ensemble's mechanisms needs the
    held-out score (refused otherwise).

    Parameters
    ----------
    table : core.data.Table
        The private table.
    public_X : pandas.DataFrame
        The public rows to label (read as :func:`core.data.read_public` reads them).
    candidates : sequence of (str, mapping)
        The grid (see :func:`tune_candidate`).
    learner : str
        The teachers' and the scoring student's learner.
    params : mapping, optional
        Its hyperparameters.
    k : int, optional
        Number of teachers; required when the grid has an ensemble mechanism.
    holdout : int, optional
        Private rows (persons) held out to score on; used with ``score_sigma``.
    score_sigma : float or None
        Noise of the held-out count; None scores by the number answered.
    mean, shape, delta
        As for :func:`tune_price`.
    ledger : core.ledger.PrivacyLedger, optional
        Charged the selection's privacy map first (refused past the budget: nothing runs).
    units : array-like, optional
        The private rows' persons, for a ledger kept per person (``table.ledger_units``).
    rng : Generator, int or None
        The split, the teachers, the scoring students and the selection's noise (these last two
        from a child keyed by one draw, :func:`core.noise.detached_rng`: a Generator given here
        moves by the same amount whatever the hidden number of repetitions is).
    train_progress, votes_progress : callable, optional
        ``progress(done, total)`` of the teachers' training and of their votes.

    Returns
    -------
    core.mechanisms.selection.SelectionResult
        The chosen run; ``epsilon``/``delta`` are the whole selection's.

    Raises
    ------
    ParameterError
        A grid mixing DP-training routes and ensemble mechanisms scored by the number
        answered; an ensemble mechanism without ``k``; a held-out score without ``holdout``.
    BudgetExhausted
        From ``ledger``: nothing was read.
    """
    from core.data import split_public
    from core.errors import ParameterError
    from core.noise import check_rng, detached_rng
    from core.pipeline.teachers import mechanism_inputs, train

    cands = [tune_candidate(name, s) for name, s in candidates]
    trained = sorted({name for name, _ in cands if _trains_on_rows(name)})
    ensemble = any(not _trains_on_rows(name) for name, _ in cands)
    if trained and ensemble and score_sigma is None:
        raise ParameterError(f"{', '.join(trained)} answer every public row: scored by the number answered they would "
                             "always win. Score the candidates on held-out private rows (score_sigma) to compare them "
                             "with the ensemble's mechanisms.")
    if ensemble and k is None:
        raise ParameterError("the grid has an ensemble mechanism: give the number of teachers k.")
    if score_sigma is not None and (holdout is None or int(holdout) < 1):
        raise ParameterError("a held-out score needs at least one held-out private row (holdout).")
    if score_sigma is not None and int(holdout) > table.n_units - 2:  # refused before the charge, not after
        what = "rows" if table.unit is None else "persons"
        raise ParameterError(f"holdout = {int(holdout)} held-out private {what} leave fewer than two of the table's "
                             f"{table.n_units} to train on: hold out at most {table.n_units - 2}. Nothing was charged.")
    # Public settings and the schema, checked before the charge (they were charged, then refused by the
    # teachers' training or a route's encoding): the learner and its hyperparameters, the public rows' columns
    # against the table's schema (public metadata, docs/design.md §1.3; the checked copy is not used).
    from core.data.public import check_public
    from core.ensemble.learners import make_learner

    make_learner(learner, **dict(params or {}))
    check_public(table, public_X)
    gen = check_rng(rng)
    m = int(len(public_X))
    teach, held = table, None
    if score_sigma is not None:  # at random, reading no row; nothing is released or charged by it
        teach, held = split_public(table, int(holdout), rng=gen)
    if ensemble:  # a k too large for a class (a class list read from the rows) is refused before the charge
        from core.data import check_class_sizes

        check_class_sizes(teach, int(k))
    if ledger is not None:  # before anything is trained or run
        ledger.charge(tune_plan(cands, m, mean=mean, shape=shape, score_sigma=score_sigma, delta=delta)[1],
                      units=units)
    inputs: dict[str, Any] = {}
    if ensemble:
        teachers = train(teach, learner, params, int(k), rng=gen, progress=train_progress)
        inputs["counts"] = mechanism_inputs("gnmax", teachers, teach, public_X, progress=votes_progress)
        del teachers
    if trained:
        inputs["rows"] = mechanism_inputs(trained[0], None, teach, public_X)
    # The repetitions (the scoring students, the candidates' noise) draw from a child of ``gen`` keyed by one draw:
    # a caller's Generator moves by the same amount whatever the hidden number of repetitions is.
    loop = detached_rng(gen)
    score = None if held is None else holdout_score(public_X, held, learner, params, teach, rng=loop)
    return tune(inputs, cands, mean=mean, shape=shape, score=score, score_sigma=score_sigma, delta=delta, rng=loop)
