"""The one path from private data to a published student: train → vote → label → student → export.

The app, the command line, the estimator and the experiments call these functions and
nothing else to run a mechanism, so the same request chooses the same parameters and
spends the same ε everywhere (docs/design.md §5):

:func:`resolve`
    A mechanism's settings from a request: defaults filled in, the noise parameter
    derived from a target ε through the registry's ``spend`` (e.g. LNMax's γ), unknown
    or conflicting settings refused with a sentence.
:func:`privacy_map`
    The guarantee of a run before any data is seen.
:func:`label`
    Run a registered mechanism on votes (or scores).
:func:`session`
    A mechanism answering a stream of query batches under one budget (the estimator).
:func:`teacher_model`, :func:`model_input`, :func:`train`, :func:`mechanism_inputs`
    The teachers of a table and their votes (or scores) on public rows.
:func:`student`, :func:`labeled_csv`, :func:`report`
    The student and the export.

References
----------
.. [BTT18] R. Bassily, O. Thakkar, A. Thakurta. Model-Agnostic Private Learning. NeurIPS 2018.
.. [PATE17] N. Papernot et al. Semi-supervised Knowledge Transfer for Deep Learning from
   Private Training Data. ICLR 2017.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

from core.errors import ParameterError
from core.mechanisms import registry

__all__ = [
    "resolve",
    "privacy_map",
    "label",
    "ledger_entry",
    "session",
    "teacher_model",
    "model_input",
    "plain_numeric",
    "train",
    "mechanism_inputs",
    "votes_and_predictions",
    "student",
    "labeled_csv",
    "report",
]


def resolve(mechanism: str, settings: Mapping[str, Any], m: int, *, strict: bool = False) -> dict[str, Any]:
    """The keyword arguments of ``mechanism``'s labeling function for a request.

    Parameters
    ----------
    mechanism : str
        A registered name (:func:`core.mechanisms.registry.names`).
    settings : mapping
        The request: any of the mechanism's parameters, and ``epsilon`` for a mechanism
        whose noise follows from ε.  A parameter left out (or None) takes its default.
    m : int
        The number of queries the run will label (ε is spent over these).
    strict : bool
        Refuse settings the mechanism does not take (the command line), instead of
        ignoring them (the app keeps one set of settings for every mechanism).

    Returns
    -------
    dict
        Exactly the mechanism's parameters, each set.

    Raises
    ------
    ParameterError
        An unknown mechanism or setting, a missing required setting, or both ε and the
        noise parameter it decides.
    """
    mech = registry.get(mechanism)
    given = {name: value for name, value in settings.items() if value is not None}
    allowed = set(mech.parameter_names) | ({"epsilon"} if mech.takes_epsilon else set())
    if strict:
        extra = sorted(set(given) - allowed)
        if extra:
            raise ParameterError(
                f"{', '.join(extra)} does not apply to {mech.name}, which takes {', '.join(sorted(allowed))}."
            )
    out: dict[str, Any] = {}
    for p in mech.parameters:
        if p.name in given:
            out[p.name] = p.convert(given[p.name])
    if mech.spend is not None:
        derived_given = [d for d in mech.derived if d in out]
        if derived_given and "epsilon" in given and strict:
            raise ParameterError(
                f"{mech.name} takes either epsilon or {' and '.join(derived_given)} (which decide each other), not both."
            )
        if len(derived_given) < len(mech.derived):
            if "epsilon" not in given:
                raise ParameterError(f"{mech.name} needs epsilon (or {', '.join(mech.derived)}).")
            known = {p.name: out.get(p.name, p.default) for p in mech.parameters if p.name not in mech.derived}
            from core.validation import check_epsilon

            out.update(mech.spend(check_epsilon(float(given["epsilon"])), int(m), **known))
    for p in mech.parameters:
        if p.name not in out:
            if p.default is None and not p.optional:
                raise ParameterError(f"{mech.name} needs {p.name}.")
            out[p.name] = p.default
    return out


def privacy_map(mechanism: str, settings: Mapping[str, Any], m: int):
    """The data-independent guarantee of a run on ``m`` queries (before any data is seen).

    Parameters
    ----------
    mechanism : str
        A registered mechanism's name (:func:`core.mechanisms.registry.names`).
    settings : mapping
        The mechanism's parameters by name (e.g. ``epsilon``, ``delta``, ``T``).
    m : int
        Number of queries.

    Returns
    -------
    core.accounting.PrivacyGuarantee

    References
    ----------
    R. Bassily, O. Thakkar, A. Thakurta, "Model-Agnostic Private Learning", NeurIPS 2018.
    N. Papernot, M. Abadi, Ú. Erlingsson, I. Goodfellow, K. Talwar, "Semi-supervised
    Knowledge Transfer for Deep Learning from Private Training Data", ICLR 2017.
    N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar, Ú. Erlingsson,
    "Scalable Private Learning with PATE", ICLR 2018.
    docs/design.md §3, §8.
    """
    mech = registry.get(mechanism)
    return mech.privacy_map(int(m), **resolve(mechanism, settings, m))


def ledger_entry(mechanism: str, settings: Mapping[str, Any], m: int):
    """A run's a-priori privacy map as a ledger entry (:mod:`core.accounting.ledger`).

    The mechanism's own ``ledger_entry`` (pure-DP steps, an RDP curve) where it has one,
    else its privacy map's (ε, δ).

    Parameters
    ----------
    mechanism : str
        A registered mechanism's name (:func:`core.mechanisms.registry.names`).
    settings : mapping
        The mechanism's parameters by name (e.g. ``epsilon``, ``delta``, ``T``).
    m : int
        Number of queries.

    Returns
    -------
    LedgerEntry
        The mechanism's entry, or an :class:`ApproxDPEntry` with its privacy map's (ε, δ).

    References
    ----------
    P. Kairouz, S. Oh, P. Viswanath, "The Composition Theorem for Differential Privacy", ICML 2015.
    I. Mironov, "Rényi Differential Privacy", IEEE CSF 2017.
    docs/design.md §9.
    """
    from core.accounting.ledger_entries import ApproxDPEntry

    mech = registry.get(mechanism)
    params = resolve(mechanism, settings, m)
    if mech.ledger_entry is not None:
        return mech.ledger_entry(int(m), **params)
    g = mech.privacy_map(int(m), **params)
    public = {k: v for k, v in params.items() if isinstance(v, (int, float, str))}
    return ApproxDPEntry(epsilon=float(g.epsilon), delta=float(g.delta), mechanism=mech.name,
                         description=g.detail, params=public)


def label(inputs, mechanism: str, settings: Mapping[str, Any], *, rng=None, strict: bool = False, ledger=None):
    """Label queries with a registered mechanism.

    Parameters
    ----------
    inputs : array-like
        Vote counts ``(m, n_classes)``, or teacher scores ``(m, k)`` for a mechanism
        whose ``inputs`` is ``"scores"``.
    mechanism : str
    settings : mapping
        See :func:`resolve`.
    rng : Generator, int or None
    strict : bool
        See :func:`resolve`.
    ledger : core.accounting.PrivacyLedger or None
        The ledger of the private data the inputs come from: the run's a-priori privacy
        map is charged to it BEFORE the run (a run past the ledger's budget is refused
        with :class:`core.errors.BudgetExhausted` and nothing runs).  Every run that
        touches the private data should be charged, including runs that are only looked
        at (docs/design.md §9).

    Returns
    -------
    core.mechanisms.LabelingResult
    """
    mech = registry.get(mechanism)
    m = max(int(np.shape(inputs)[0]) if np.ndim(inputs) else 0, 1)
    params = resolve(mechanism, settings, m, strict=strict)
    if ledger is not None:
        ledger.charge(ledger_entry(mechanism, params, m))
    return mech.label(inputs, **params, rng=rng)


def session(mechanism: str, settings: Mapping[str, Any], m_max: int, *, rng=None):
    """A mechanism answering a stream of query batches under one budget for ``m_max`` queries.

    The returned object has ``answer(counts) -> labels`` (class ids, ⊥ = -1, -2 once
    spent), ``spent() -> PrivacyGuarantee`` (the a-priori guarantee of what has run),
    ``n_processed``, ``n_bottom`` and ``halted``.  Mechanisms with state across queries
    provide their own (``Mechanism.online``); per-query mechanisms are answered batch by
    batch with the noise set for ``m_max`` queries; a mechanism that labels a whole set
    at once (certified Confident-GNMax's test covers all its queries) answers the first
    batch as one run calibrated for ``m_max`` queries and is then spent.

    Parameters
    ----------
    mechanism : str
        A registered mechanism's name (:func:`core.mechanisms.registry.names`).
    settings : mapping
        The mechanism's parameters by name (e.g. ``epsilon``, ``delta``, ``T``).
    m_max : int
        Largest number of queries, the budget's horizon.
    rng : numpy.random.Generator, int or None, optional
        Randomness (see :func:`core.noise.check_rng`).

    Returns
    -------
    Session
        An online session (see above).

    Raises
    ------
    ParameterError
        For a mechanism that reads scores rather than vote counts.
    """
    mech = registry.get(mechanism)
    params = resolve(mechanism, settings, m_max)
    if mech.online is not None:
        return mech.online(int(m_max), rng, **params)
    if mech.per_query and mech.inputs == "counts":
        from core.mechanisms.session import PerQuerySession

        return PerQuerySession(mech, m_max, rng, params)
    if mech.inputs == "counts":
        from core.mechanisms.session import OneShotSession

        return OneShotSession(mech, m_max, rng, params)
    raise ParameterError(
        f"{mech.name} reads the teachers' scores, not their votes, so it cannot answer a stream of "
        f"queries; choose one of {', '.join(n for n in registry.names() if registry.get(n).inputs == 'counts')}."
    )


# ----------------------------------------------------------------------------- teachers


def plain_numeric(table) -> bool:
    """Whether a table's features go to the learner unchanged (numeric, no imputation:
    loaded with ``missing="refuse"`` or ``"drop"``).

    Parameters
    ----------
    table : core.data.Table
        The private table.

    Returns
    -------
    bool
    """
    return not table.categorical_columns and table.missing != "impute"


def model_input(table, X):
    """Features as the teachers see them: a float array for a plain numeric table.

    Fitting and predicting on an array skips pandas' per-call checks, which cost more
    than fitting a small teacher; both give the same teachers and votes.

    Parameters
    ----------
    table : core.data.Table
        The private table.
    X : pandas.DataFrame
        Feature rows.

    Returns
    -------
    numpy.ndarray of float or pandas.DataFrame
        ``X`` as a float array for a plain numeric table, else ``X`` itself.
    """
    return X.to_numpy(dtype=float) if plain_numeric(table) else X


def teacher_model(table, learner: str, params: Mapping[str, Any] | None = None):
    """The learner behind the table's preprocessing (one-hot encoding, imputation).

    A table of numeric columns loaded without imputation needs no preprocessing (its
    preprocessor passes every column through unchanged), so the learner is used on its
    own there: the same model, fitted about twice as fast, which matters for hundreds
    of teachers.  Imputation, where chosen, is fitted inside each teacher's pipeline on
    that teacher's chunk only.

    Parameters
    ----------
    table : core.data.Table
        The private table.
    learner : str
        The learner's name.
    params : mapping, optional
        The learner's hyperparameters.

    Returns
    -------
    sklearn estimator
        An unfitted model (the learner, or a pipeline with the table's preprocessing).
    """
    from sklearn.pipeline import make_pipeline

    from core.ensemble.learners import make_learner

    model = make_learner(learner, **dict(params or {}))
    if plain_numeric(table):
        return model
    return make_pipeline(table.preprocessor(), model)


def train(table, learner: str, params: Mapping[str, Any] | None, k: int, *, rng=None, n_jobs: int | None = 1,
          progress: Callable[[int, int], None] | None = None):
    """Train ``k`` teachers of ``learner`` on disjoint chunks of a table's private rows.

    Parameters
    ----------
    table : core.data.Table
        The private table.
    learner : str
        The learner's name.
    params : mapping, optional
        The learner's hyperparameters.
    k : int
        Number of teachers.
    rng : numpy.random.Generator, int or None, optional
        Randomness (see :func:`core.noise.check_rng`).
    n_jobs : int or None, default 1
        Parallel jobs for fitting.
    progress : callable, optional
        Progress callback ``progress(done, total)``.

    Returns
    -------
    core.ensemble.TeacherEnsemble
    """
    from core.data import check_class_sizes
    from core.ensemble.teachers import train_teachers

    check_class_sizes(table, int(k))
    return train_teachers(
        model_input(table, table.features),
        table.labels,
        teacher_model(table, learner, params),
        int(k),
        n_classes=table.n_classes,
        rng=rng,
        n_jobs=n_jobs,
        progress=progress,
    )


def mechanism_inputs(mechanism: str, teachers, table, public_X, *, progress=None) -> np.ndarray:
    """What ``mechanism`` reads from the teachers on the public rows: votes or scores.

    Parameters
    ----------
    mechanism : str
        A registered mechanism's name.
    teachers : core.ensemble.TeacherEnsemble
    table : core.data.Table
        The private table.
    public_X : pandas.DataFrame
        The public (unlabeled) rows' features.
    progress : callable, optional
        Progress callback ``progress(done, total)``.

    Returns
    -------
    numpy.ndarray
        Vote counts, shape (m, n_classes), or teacher scores for a scores mechanism (private).
    """
    mech = registry.get(mechanism)
    X = model_input(table, public_X)
    if mech.inputs == "scores":
        return np.asarray(teachers.scores(X, progress=progress))
    return np.asarray(teachers.vote_counts(X, progress=progress))


def votes_and_predictions(teachers, table, public_X, *, progress=None) -> tuple[np.ndarray, np.ndarray]:
    """Vote counts and per-teacher predictions on the public rows from one pass of the teachers.

    For a caller that shows the per-teacher predictions (a NON-PRIVATE diagnostic) as well
    as labeling from the votes (the app): one pass instead of two
    (:meth:`core.ensemble.TeacherEnsemble.votes_and_predictions`).  The counts are exactly
    :func:`mechanism_inputs`' for a counts mechanism.

    Parameters
    ----------
    teachers : core.ensemble.TeacherEnsemble
    table : core.data.Table
        The private table.
    public_X : pandas.DataFrame
        The public rows' features.
    progress : callable, optional
        Progress callback ``progress(done, total)``.

    Returns
    -------
    counts : numpy.ndarray of int, shape (m, n_classes)
        Vote counts (private).
    predictions : numpy.ndarray of int32, shape (m, k)
        Per-teacher predicted class ids (NON-PRIVATE diagnostic).
    """
    return teachers.votes_and_predictions(model_input(table, public_X), progress=progress)


# ----------------------------------------------------------------------------- student and export


def student(public_X, result, learner: str, params: Mapping[str, Any] | None, table, *, bottom: str = "drop", rng=None):
    """Train the student on the privately labeled public rows (post-processing: same guarantee).

    Parameters
    ----------
    public_X : pandas.DataFrame
        The public rows' features.
    result : LabelingResult
        The private labeling of those rows.
    learner : str
        The learner's name.
    params : mapping, optional
        The learner's hyperparameters.
    table : core.data.Table
        The private table.
    bottom : str, default "drop"
        What to do with ⊥ rows.
    rng : numpy.random.Generator, int or None, optional
        Randomness (see :func:`core.noise.check_rng`).

    Returns
    -------
    core.ensemble.Student
    """
    from core.ensemble.student import train_student

    # Fitted on the public DataFrame (never the plain-array shortcut): the student is
    # published and applied to a table of the same named columns.
    model = teacher_model(table, learner, params)
    n_classes = 2 if result.scores is not None else table.n_classes
    return train_student(public_X, result, model, bottom=bottom, n_classes=n_classes, rng=rng)


def labeled_csv(public_frame, result, class_names, *, columns=None) -> bytes:
    """The labeled CSV of the public rows (:func:`core.export.labeled_frame`), as UTF-8 bytes.

    Parameters
    ----------
    public_frame : pandas.DataFrame
        The public rows.
    result : LabelingResult
    class_names : sequence of str
    columns : mapping, optional (keyword-only)
        The names of the added columns, decided when the files loaded
        (:func:`core.export.export_columns`); default: decided from ``public_frame``.

    Returns
    -------
    bytes
    """
    from core.export import labeled_frame

    return labeled_frame(public_frame, result, class_names, columns=columns).to_csv(index=False).encode("utf-8")


def report(result, **context: Any) -> str:
    """The JSON privacy report of a run (:func:`core.export.privacy_report`).

    Parameters
    ----------
    result : LabelingResult
    **context
        Extra report fields passed to :func:`core.export.privacy_report`.

    Returns
    -------
    str
        JSON text.
    """
    from core.export import privacy_report, report_json

    return report_json(privacy_report(result, **context))
