"""Resolving a request, its guarantee, and running it: one labeling run, a session, a stream.

Part of :mod:`core.pipeline` (see its docstring); import the names from there.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from core.errors import ParameterError
from core.mechanisms import registry

__all__ = ['BUDGET', 'resolve', 'privacy_map', 'ledger_entry', 'label', 'session', 'stream_session', 'stream_result']

BUDGET = registry.BUDGET
"""The settings that never take a default (:data:`core.mechanisms.registry.BUDGET`)."""


def _unknown_setting_message(mech, extra, allowed) -> str:
    """``x does not apply to m, which takes …`` with the nearest valid name of each."""
    import difflib

    hints = []
    for name in extra:
        close = difflib.get_close_matches(name, sorted(allowed), n=1, cutoff=0.6)
        if close:
            hints.append(f"did you mean {close[0]!r} for {name!r}?")
    return (f"{', '.join(extra)} does not apply to {mech.name}, which takes {', '.join(sorted(allowed))}"
            + (f"; {' '.join(hints)}" if hints else "."))


def _known_settings() -> set[str]:
    """Every setting some registered mechanism takes (and ε)."""
    names = {"epsilon"}
    for name in registry.names():
        names.update(registry.get(name).parameter_names)
    return names


def resolve(mechanism: str, settings: Mapping[str, Any], m: int, *, strict: bool | None = None) -> dict[str, Any]:
    """The keyword arguments of ``mechanism``'s labeling function for a request.

    What is asked is what runs: an unknown setting is refused (with the nearest valid
    name), and a target ε together with the noise parameter it decides is refused naming
    both values, so a request can never run at other parameters than the ones it names.

    Parameters
    ----------
    mechanism : str
        A registered name (:func:`core.mechanisms.registry.names`).
    settings : mapping
        The request: any of the mechanism's parameters, and ``epsilon`` for a mechanism
        whose noise follows from ε.  A parameter left out (or None) takes its default,
        except the budget: ``epsilon`` (or the noise it decides) and ``delta``, where the
        mechanism takes them, have no default (:data:`BUDGET`).
    m : int
        The number of queries the run will label (ε is spent over these).
    strict : bool or None, default None
        None: refuse a setting that no registered mechanism takes (a misspelt name such
        as ``detla``), and pass over the settings of other registered mechanisms (one set
        of settings for every mechanism, as the app keeps).  True: refuse every setting
        this mechanism does not take (the command line, the estimator).  False: ignore
        unknown settings too.

    Returns
    -------
    dict
        Exactly the mechanism's parameters, each set.

    Raises
    ------
    ParameterError
        An unknown mechanism or setting, a missing required setting (the budget
        included), or both ε and the noise parameter it decides.
    """
    mech = registry.get(mechanism)
    given = {name: value for name, value in settings.items() if value is not None}
    allowed = set(mech.parameter_names) | ({"epsilon"} if mech.takes_epsilon else set())
    if strict is not False:
        extra = sorted(set(given) - allowed)
        if strict is None:
            known = _known_settings()
            extra = [name for name in extra if name not in known]
        if extra:
            raise ParameterError(_unknown_setting_message(mech, extra, allowed))
    out: dict[str, Any] = {}
    for p in mech.parameters:
        if p.name in given:
            out[p.name] = p.convert(given[p.name])
    if mech.spend is not None:
        derived_given = [d for d in mech.derived if d in out]
        if derived_given and "epsilon" in given:
            raise ParameterError(_conflict_message(mech, given, out, derived_given, m))
        if len(derived_given) < len(mech.derived):
            if "epsilon" not in given:
                raise ParameterError(f"{mech.name} needs epsilon (or {', '.join(mech.derived)}).")
            known = {p.name: out.get(p.name, p.default) for p in mech.parameters if p.name not in mech.derived}
            from core.validation import check_epsilon

            out.update(mech.spend(check_epsilon(float(given["epsilon"])), int(m), **known))
    for p in mech.parameters:
        if p.name not in out:
            if p.name in BUDGET:
                raise ParameterError(f"{mech.name} needs {p.name}: the privacy budget has no default "
                                     f"(state {p.name} with every request).")
            if p.default is None and not p.optional:
                raise ParameterError(f"{mech.name} needs {p.name}.")
            out[p.name] = p.default
    return out


def _conflict_message(mech, given, out, derived_given, m) -> str:
    """Both ε and the noise it decides: name both values (and what the noise would spend)."""
    noise = " and ".join(f"{d} = {out[d]:g}" if isinstance(out[d], float) else f"{d} = {out[d]!r}" for d in derived_given)
    spends = ""
    try:
        params = {p.name: out.get(p.name, p.default) for p in mech.parameters}
        if all(params.get(d) is not None for d in mech.derived):
            g = mech.privacy_map(max(int(m), 1), **params)
            spends = f" ({noise} spends ε = {g.epsilon:.4g} on {int(m)} queries)"
    except Exception:  # noqa: BLE001 - the refusal stands; the figure is a courtesy
        spends = ""
    return (f"{mech.name} takes either epsilon or {' and '.join(derived_given)} (which decide each other), not both: "
            f"epsilon = {float(given['epsilon']):g} was asked and {noise}{spends}. Give only one.")


def privacy_map(mechanism: str, settings: Mapping[str, Any], m: int, *, strict: bool | None = None):
    """The data-independent guarantee of a run on ``m`` queries (before any data is seen).

    Parameters
    ----------
    mechanism : str
        A registered mechanism's name (:func:`core.mechanisms.registry.names`).
    settings : mapping
        The mechanism's parameters by name (e.g. ``epsilon``, ``delta``, ``T``).
    m : int
        Number of queries.
    strict : bool or None, default None
        See :func:`resolve`.

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
    return mech.privacy_map(int(m), **resolve(mechanism, settings, m, strict=strict))


def ledger_entry(mechanism: str, settings: Mapping[str, Any], m: int, *, strict: bool | None = None):
    """A run's a-priori privacy map as a ledger entry (:mod:`core.ledger`).

    The mechanism's own ``ledger_entry`` (pure-DP steps, an RDP curve) where it has one,
    else its privacy map's (ε, δ).

    Parameters
    ----------
    mechanism, settings, m, strict
        As for :func:`privacy_map` (the same checks and defaults).

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
    from core.ledger.entries import ApproxDPEntry

    mech = registry.get(mechanism)
    params = resolve(mechanism, settings, m, strict=strict)
    if mech.ledger_entry is not None:
        return mech.ledger_entry(int(m), **params)
    g = mech.privacy_map(int(m), **params)
    public = {k: v for k, v in params.items() if isinstance(v, (int, float, str))}
    return ApproxDPEntry(epsilon=float(g.epsilon), delta=float(g.delta), mechanism=mech.name,
                         description=g.detail, params=public)


def label(inputs, mechanism: str, settings: Mapping[str, Any], *, rng=None, strict: bool | None = None, ledger=None, units=None):
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
    strict : bool or None, default None
        See :func:`resolve`.
    ledger : core.ledger.PrivacyLedger or None
        The ledger of the private data the inputs come from: the run's a-priori privacy
        map is charged to it BEFORE the run (a run past the ledger's budget is refused
        with :class:`core.errors.BudgetExhausted` and nothing runs).  Every run that
        touches the private data should be charged, including runs that are only looked
        at (docs/design.md §9).
    units : 1-D array-like, optional
        The privacy-unit IDs (e.g. person IDs) of the private rows the votes come from,
        one per row (repeats allowed): the run is charged to those units only, and each
        unit's own runs compose (docs/design.md §9); None charges the whole dataset.

    Returns
    -------
    core.mechanisms.LabelingResult
    """
    mech = registry.get(mechanism)
    m = max(int(np.shape(inputs)[0]) if np.ndim(inputs) else 0, 1)
    params = resolve(mechanism, settings, m, strict=strict)
    if ledger is not None:
        ledger.charge(ledger_entry(mechanism, params, m), units=units)
    return mech.label(inputs, **params, rng=rng)


def session(mechanism: str, settings: Mapping[str, Any], m_max: int, *, rng=None, strict: bool | None = None):
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
    mechanism, settings
        As for :func:`privacy_map`.
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
        For a mechanism that reads scores or private rows rather than vote counts.
    """
    mech = registry.get(mechanism)
    params = resolve(mechanism, settings, m_max, strict=strict)
    if mech.online is not None:
        return mech.online(int(m_max), rng, **params)
    if mech.per_query and mech.inputs == "counts":
        from core.mechanisms.session import PerQuerySession

        return PerQuerySession(mech, m_max, rng, params)
    if mech.inputs == "counts":
        from core.mechanisms.session import OneShotSession

        return OneShotSession(mech, m_max, rng, params)
    what = "trains a model on the private rows" if mech.inputs == "rows" else "reads the teachers' scores"
    raise ParameterError(
        f"{mech.name} {what}, not their votes, so it cannot answer a stream of "
        f"queries; choose one of {', '.join(n for n in registry.names() if registry.get(n).inputs == 'counts')}."
    )


def stream_session(mechanism: str, settings, m_max: int, *, rng=None) -> Any:
    """The session that labels a stream of chunks of ``m_max`` queries under one budget.

    Confident-GNMax gets :class:`ConfidentGNMaxSession` (one Rényi filter, or one fixed
    composition, over the whole stream); every other mechanism the session of
    :func:`core.pipeline.session` (BTT's sparse vector, whose state carries over between
    chunks; per-query mechanisms answered chunk by chunk with the noise set for
    ``m_max`` queries).

    Parameters
    ----------
    mechanism : str
        A registered mechanism reading vote counts.
    settings : mapping
        Its settings (resolved by :func:`core.pipeline.resolve` for ``m_max`` queries).
    m_max : int
        The number of queries of the whole stream (the budget's horizon).
    rng : Generator, int or None

    Returns
    -------
    Session
    """
    from core.mechanisms.session import ConfidentGNMaxSession

    mech = registry.get(mechanism)
    if mech.name == "confident-gnmax":
        return ConfidentGNMaxSession(m_max, rng, **resolve(mech.name, settings, m_max))
    return session(mech.name, settings, m_max, rng=rng)


def stream_result(session, mechanism: str, labels: np.ndarray, settings, *, k: int, n_classes: int):
    """The labeling result of a whole stream (for its report), from its session and labels.

    For BTT and Confident-GNMax it is what one run of the mechanism on all the stream's
    queries reports (the same guarantee, parameters and warnings; with the same seed the
    labels are the same too); for another mechanism, the session's guarantee
    (:meth:`Session.spent`) and the resolved settings.

    Parameters
    ----------
    session : Session
        The session that answered the stream (from :func:`stream_session`).
    mechanism : str
    labels : numpy.ndarray of int, shape (m,)
        Every query's label, in order.
    settings : mapping
        The request.
    k, n_classes : int
        Teachers and classes (public).

    Returns
    -------
    LabelingResult
    """
    from core.mechanisms.result import UNPROCESSED, infeasible_reason, make_result
    from core.mechanisms.session import ConfidentGNMaxSession

    labels = np.asarray(labels, dtype=np.int64)
    m = int(labels.size)
    unprocessed = np.flatnonzero(labels == UNPROCESSED)
    halted_at = int(unprocessed[0]) - 1 if unprocessed.size and unprocessed[0] > 0 else None
    params = dict(resolve(mechanism, settings, session.m_max))
    if hasattr(session, "calibration") and mechanism == "btt":
        from core.mechanisms.btt import btt_public_params
        from core.mechanisms.result import btt_remedies

        cal = session.calibration
        reason = infeasible_reason(
            k, cal.threshold,
            f"the {params['calibration']} calibration of (ε={params['epsilon']:g}, δ={params['delta']:g}, "
            f"T={params['T']}, m={m})", btt_remedies(params["calibration"]))
        public = btt_public_params(cal, params["epsilon"], params["delta"], params["T"], m, params["beta"],
                                   params["calibration"], k)
        return make_result("btt", labels, None, halted_at, cal.guarantee, public, feasible=reason is None, reason=reason)
    if isinstance(session, ConfidentGNMaxSession):
        threshold = session.threshold if session.threshold is not None else 0.8 * k
        reason = None
        if threshold - k > 3.0 * session.sigma1:
            reason = (
                f"The threshold {threshold:g} is more than 3σ1 = {3 * session.sigma1:.3g} above the number of "
                f"teachers k = {k}: even a unanimous query passes with probability below 0.2%; "
                "lower the threshold or use more teachers."
            )
        spent = session.n_processed * session.c1 + session.n_answered * session.c2 if session.budget else None
        public = {**session.params, "threshold": threshold, "rdp_spent": spent, "ordering": "query order",
                  "m": m, "k": k, "n_classes": n_classes}
        public = {key: public[key] for key in ("threshold", "sigma1", "sigma2", "accounting", "order", "budget",
                                               "charge_threshold", "charge_answer", "rdp_spent", "ordering",
                                               "delta_target", "m", "k", "n_classes", "noise")}
        return make_result("confident-gnmax", labels, None, session.halted_at if session.budget else None,
                           session.spent(), public, feasible=reason is None, reason=reason)
    if mechanism == "baseline" and hasattr(session, "parameters"):
        par = session.parameters
        reason = infeasible_reason(
            k, par.threshold, f"the per-query A_stab of the composition baseline at (ε={params['epsilon']:g}, "
            f"δ={params['delta']:g}, m={m})", "raise ε, or label fewer queries (every query spends budget)")
        public = {"epsilon_target": params["epsilon"], "delta_target": params["delta"], "m": m, "k": k,
                  "eps0": par.eps0, "delta0": par.delta0, "delta_prime": par.delta_prime,
                  "threshold": par.threshold, "noise_scale": 1.0 / par.eps0, "noise": "discrete Laplace"}
        return make_result("baseline", labels, None, None, par.guarantee, public, feasible=reason is None, reason=reason)
    params.update({"m": m, "k": k, "n_classes": n_classes})
    return make_result(mechanism, labels, None, halted_at, session.spent(), params)
