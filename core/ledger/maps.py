"""From labeling results to ledger entries: the registered privacy maps
(:func:`register_privacy_map`, :func:`entry_from_result`), the planned entry of a run,
and repeat-and-select (:func:`repeat_and_select`, :func:`pure_dp_rdp`).

References
----------
R. Bassily, O. Thakkar, A. Thakurta, "Model-Agnostic Private Learning", NeurIPS 2018.
N. Papernot, M. Abadi, Ú. Erlingsson, I. Goodfellow, K. Talwar, "Semi-supervised
Knowledge Transfer for Deep Learning from Private Training Data", ICLR 2017.
P. Kairouz, S. Oh, P. Viswanath, "The Composition Theorem for Differential Privacy", ICML 2015
(pure-DP steps as randomized response, the optimal composition).
I. Mironov, "Rényi Differential Privacy", IEEE CSF 2017 (Proposition 1, composition).
N. Papernot, T. Steinke, "Hyperparameter tuning with Rényi differential privacy",
ICLR 2022 (Theorems 2 and 6: repeat-and-select).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from core.accounting.baseline import composition_baseline_parameters
from core.accounting.btt import calibrate_btt, svt_round_epsilon
from core.errors import ParameterError
from core.ledger.entries import ApproxDPEntry, LedgerEntry, PureDPEntry, RDPEntry, public_params

__all__ = [
    "confident_gnmax_entry",
    "entry_from_result",
    "gaussian_entry",
    "gnmax_entry",
    "planned_entry",
    "pure_dp_rdp",
    "register_privacy_map",
    "repeat_and_select",
]


# ---------------------------------------------------------------------------
# Privacy maps of the library's mechanisms
# ---------------------------------------------------------------------------

_PRIVACY_MAPS: dict[str, Callable[[Any], LedgerEntry]] = {}
_MAPS_LOCK = threading.Lock()


def register_privacy_map(mechanism: str, fn: Callable[[Any], LedgerEntry]) -> None:
    """Register ``fn(result) -> entry`` as the privacy map of ``mechanism``.

    :func:`entry_from_result` consults this registry before its built-in maps, so a new
    mechanism (or a tighter analysis of an old one) plugs in without editing this module.

    Parameters
    ----------
    mechanism : str
        The mechanism name (``LabelingResult.mechanism``).
    fn : callable
        ``fn(result) -> LedgerEntry``.
    """
    if not callable(fn):
        raise ParameterError("a privacy map must be callable: result -> ledger entry.")
    with _MAPS_LOCK:
        _PRIVACY_MAPS[str(mechanism)] = fn


def _btt_entry(result: Any) -> PureDPEntry:
    p = result.params
    rounds = int(p["rounds"])
    eps_step = float(svt_round_epsilon(float(p["noise_scale"])))
    return PureDPEntry.uniform(
        eps_step=eps_step, n_steps=rounds, delta_composition=float(p["delta_svt"]), delta_additive=float(p["delta_release"]),
        mechanism=result.mechanism, params=public_params(p),
        description=(f"{result.mechanism}: {rounds} sparse-vector rounds, each pure {eps_step:.4g}-DP (λ = {p['noise_scale']:.4g}), "
                     f"plus δ_release = {float(p['delta_release']):.3g}."))


def _lnmax_entry(result: Any) -> PureDPEntry:
    p = result.params
    gamma, m = float(p["gamma"]), int(p["m"])
    # two Laplace coordinates per answer (docs/design.md §3.4): 2m pure γ steps, composed by their own PLD
    return PureDPEntry.uniform(
        eps_step=gamma, n_steps=2 * m, laplace=True,
        delta_composition=float(p["delta_target"] if "delta_target" in p else result.delta),  # noqa: SIM401 - .get would read result.delta eagerly
        mechanism=result.mechanism, params=public_params(p),
        description=f"lnmax: {m} noisy-max answers, each two Laplace coordinates of scale 1/γ = {1 / gamma:.4g} (pure 2γ = {2 * gamma:.4g}-DP).")


def _a_stab_entry(result: Any) -> PureDPEntry:
    p = result.params
    m = int(p["m"])
    if result.mechanism == "a-stab":
        eps0, delta0, slack = float(p["epsilon_per_query"]), float(p["delta_per_query"]), 0.0
    else:
        eps0, delta0, slack = float(p["eps0"]), float(p["delta0"]), float(p.get("delta_prime", 0.0))
    return PureDPEntry.uniform(
        eps_step=eps0, n_steps=m, delta_composition=slack, delta_additive=min(1.0, m * delta0),
        mechanism=result.mechanism, params=public_params(p),
        description=f"{result.mechanism}: {m} A_stab answers, each ({eps0:.4g}, {delta0:.3g})-DP (pure ε0 plus additive δ0).")


def gaussian_entry(*, mu_sq: float, delta: float, mechanism: str, description: str, params: dict) -> RDPEntry:
    """The ledger entry of a run that is exactly a Gaussian mechanism of ``μ² = mu_sq``.

    Its RDP curve ``α·μ²/2`` on :data:`core.accounting.rdp.ORDERS` (for composing with
    other RDP runs), marked Gaussian so that Gaussian runs compose exactly.
    """
    from core.accounting.rdp import ORDERS

    return RDPEntry(orders=tuple(ORDERS), rho=tuple(ORDERS * (mu_sq / 2.0)), delta_conversion=delta,
                    gaussian_mu_sq=mu_sq, mechanism=mechanism, description=description, params=params)


def gnmax_entry(*, sigma: float, m: int, delta: float) -> RDPEntry:
    """``m`` GNMax answers at σ: one Gaussian mechanism of ``μ² = 2m/σ²``."""
    sigma, m = float(sigma), int(m)
    return gaussian_entry(mu_sq=2.0 * m / (sigma * sigma), delta=delta, mechanism="gnmax",
                          description=f"{m} GNMax answers, σ = {sigma:.4g}", params={"sigma": sigma, "m": m})


def confident_gnmax_entry(*, sigma1: float, sigma2: float, m: int, delta: float) -> RDPEntry:
    """``m`` Confident-GNMax queries charged in advance: ``μ² = m(1/σ1² + 2/σ2²)``."""
    sigma1, sigma2, m = float(sigma1), float(sigma2), int(m)
    return gaussian_entry(mu_sq=m * (1.0 / sigma1 ** 2 + 2.0 / sigma2 ** 2), delta=delta, mechanism="confident-gnmax",
                          description=f"{m} Confident-GNMax queries charged in advance, σ1 = {sigma1:.4g}, σ2 = {sigma2:.4g}",
                          params={"sigma1": sigma1, "sigma2": sigma2, "m": m})


def _gnmax_entry(result: Any) -> RDPEntry:
    p = result.params
    return gnmax_entry(sigma=p["sigma"], m=p["m"], delta=p["delta_target"])


def _confident_entry(result: Any) -> RDPEntry:
    p = result.params
    if p.get("accounting", "fixed") == "filter":
        return RDPEntry.filter(order=p["order"], rho_budget=p["budget"], delta_conversion=p["delta_target"],
                               mechanism=result.mechanism, params=public_params(p),
                               description=f"confident-gnmax under a Rényi filter: budget {p['budget']:.4g} at α = {p['order']:g}.")
    return confident_gnmax_entry(sigma1=p["sigma1"], sigma2=p["sigma2"], m=p["m"], delta=p["delta_target"])


_BUILTIN_MAPS: dict[str, Callable[[Any], LedgerEntry]] = {
    "gnmax": _gnmax_entry,
    "confident-gnmax": _confident_entry,
    "btt": _btt_entry,
    "btt-soft": _btt_entry,
    "lnmax": _lnmax_entry,
    "a-stab": _a_stab_entry,
    "baseline": _a_stab_entry,
}


def entry_from_result(result: Any) -> LedgerEntry:
    """The ledger entry (privacy map) of a :class:`core.mechanisms.LabelingResult`.

    * ``"btt"``, ``"btt-soft"``: ``rounds`` pure ``2/λ``-DP steps at slack
      ``delta_svt``, plus ``delta_release``;
    * ``"lnmax"``: ``m`` pure ``2γ``-DP steps at slack ``delta_target``;
    * ``"a-stab"``: ``m`` pure ``ε``-steps plus ``m·δ`` (basic composition);
      ``"baseline"``: ``m`` pure ``ε0``-steps at slack ``δ'`` plus ``m·δ0``;
    * ``"gnmax"``, ``"confident-gnmax"`` (fixed accounting): one Gaussian mechanism
      (:func:`gnmax_entry`, :func:`confident_gnmax_entry`), composing exactly with other
      Gaussian runs and by RDP with the rest; under a Rényi filter, its budget;
    * a mechanism registered with :func:`register_privacy_map`: its own map (checked
      first);
    * anything else: :class:`ApproxDPEntry` with the result's (ε, δ).

    A ledger holding only this entry reports the result's own (ε, δ), or a smaller ε
    where its composition is tighter (the baseline's advanced composition and PATE's
    bound are replaced by the optimal composition).  Public parameters only: keys with
    ``data_dependent`` in their name are dropped, and the result's
    ``epsilon_data_dependent`` is never read.

    Parameters
    ----------
    result : LabelingResult
        A finished run (anything with ``mechanism``, ``params``, ``epsilon``, ``delta``).

    Returns
    -------
    LedgerEntry
        The run's data-independent privacy map.

    See the module's references; docs/design.md §9.
    """
    mech = str(getattr(result, "mechanism", "custom"))
    with _MAPS_LOCK:
        fn = _PRIVACY_MAPS.get(mech)
    if fn is None:
        fn = _BUILTIN_MAPS.get(mech)
    if fn is not None:
        try:
            return fn(result)
        except KeyError as exc:
            raise ParameterError(f"the {mech} result lacks the parameter {exc.args[0]!r} its privacy map needs.") from None
    return ApproxDPEntry(epsilon=float(result.epsilon), delta=float(result.delta), mechanism=mech,
                         params=public_params(getattr(result, "params", {})),
                         description=f"{mech}: an ({float(result.epsilon):.4g}, {float(result.delta):.3g})-DP run.")


def planned_entry(mechanism: str, *, epsilon: float | None = None, delta: float, m: int, T: int | None = None,
                  calibration: str = "tight", gamma: float | None = None, sigma: float | None = None,
                  sigma1: float | None = None, sigma2: float | None = None, ratio: float = 3.75) -> LedgerEntry:
    """The a-priori privacy map of a built-in mechanism's run, before it runs.

    The library's guarantees are data-independent, so the map of a planned run follows
    from its public parameters alone (the same numbers :func:`entry_from_result` reads
    from the result afterwards).  Pass it to :meth:`PrivacyLedger.charge` before the run.

    Parameters
    ----------
    mechanism : {"btt", "btt-soft", "lnmax", "baseline", "a-stab", "gnmax", "confident-gnmax"}
    epsilon, delta : float
        The run's target (for ``"a-stab"``: per query; ``"lnmax"`` takes ``gamma``,
        ``"gnmax"`` ``sigma``, ``"confident-gnmax"`` ``sigma1`` and ``sigma2``, or ε which
        then decides them).
    m : int
        Number of queries.
    T : int, optional
        BTT's cutoff.
    calibration : {"paper", "tight"}
        BTT's calibration.
    gamma : float, optional
        LNMax's noise parameter.
    sigma, sigma1, sigma2 : float, optional
        GNMax's noise; Confident-GNMax's threshold and answer noises.
    ratio : float
        σ1/σ2 when ε decides Confident-GNMax's noises.

    Returns
    -------
    LedgerEntry
        The run's a-priori privacy map.

    See the module's references; docs/design.md §9.
    """
    from types import SimpleNamespace

    if mechanism in ("btt", "btt-soft"):
        if T is None or epsilon is None:
            raise ParameterError("a planned BTT run needs epsilon and T.")
        cal = calibrate_btt(epsilon, delta=delta, T=T, m=m, calibration=calibration, soft=mechanism == "btt-soft")
        params = {"epsilon_target": epsilon, "delta_target": delta, "T": T, "m": m, "calibration": calibration,
                  "noise_scale": cal.noise_scale, "threshold": cal.threshold, "rounds": cal.rounds, "tests": cal.tests,
                  "epsilon_svt": cal.guarantee.parts["epsilon_svt"], "delta_svt": cal.guarantee.parts["delta_svt"],
                  "delta_release": cal.guarantee.parts["delta_release"]}
        return _btt_entry(SimpleNamespace(mechanism=mechanism, params=params))
    if mechanism == "lnmax":
        if gamma is None:
            raise ParameterError("a planned LNMax run needs gamma (see core.accounting.lnmax_gamma_for_epsilon).")
        return _lnmax_entry(SimpleNamespace(mechanism=mechanism, params={"gamma": gamma, "m": m, "delta_target": delta}))
    if mechanism == "gnmax":
        if (sigma is None) == (epsilon is None):
            raise ParameterError("a planned GNMax run needs sigma or epsilon (which decides sigma), not both.")
        if sigma is None:
            from core.accounting.rdp import gnmax_sigma_for_epsilon

            sigma = gnmax_sigma_for_epsilon(epsilon, n_answers=m, delta=delta)
        return gnmax_entry(sigma=sigma, m=m, delta=delta)
    if mechanism == "confident-gnmax":
        if (sigma1 is None or sigma2 is None) == (epsilon is None):
            raise ParameterError("a planned Confident-GNMax run needs sigma1 and sigma2, or epsilon (which decides them).")
        if epsilon is not None:
            from core.accounting.rdp import confident_gnmax_sigmas_for_epsilon

            sigma1, sigma2 = confident_gnmax_sigmas_for_epsilon(epsilon, n_queries=m, delta=delta, ratio=ratio)
        return confident_gnmax_entry(sigma1=sigma1, sigma2=sigma2, m=m, delta=delta)
    if mechanism == "baseline":
        if epsilon is None:
            raise ParameterError("a planned baseline run needs epsilon.")
        par = composition_baseline_parameters(epsilon, delta=delta, m=m)
        params = {"epsilon_target": epsilon, "delta_target": delta, "m": m, "eps0": par.eps0, "delta0": par.delta0,
                  "delta_prime": par.delta_prime}
        return _a_stab_entry(SimpleNamespace(mechanism=mechanism, params=params))
    if mechanism == "a-stab":
        if epsilon is None:
            raise ParameterError("a planned A_stab run needs epsilon (per query).")
        return _a_stab_entry(SimpleNamespace(mechanism=mechanism, params={"epsilon_per_query": epsilon, "delta_per_query": delta, "m": m}))
    raise ParameterError(f"no built-in a-priori privacy map for {mechanism!r}; build a PureDPEntry, RDPEntry or ApproxDPEntry.")


# ---------------------------------------------------------------------------
# Repeat and select (Papernot–Steinke 2022)
# ---------------------------------------------------------------------------

def _rr_rdp(eps: float, orders: np.ndarray) -> np.ndarray:
    """RDP of binary randomized response at ε: the worst case of any pure ε-DP step."""
    log_p = eps - np.logaddexp(0.0, eps)
    log_q = -np.logaddexp(0.0, eps)
    a = orders
    return np.logaddexp(a * log_p + (1 - a) * log_q, a * log_q + (1 - a) * log_p) / (a - 1)


def pure_dp_rdp(steps: Sequence[tuple[float, int]], orders: Sequence[float]) -> np.ndarray:
    """RDP curve of adaptive pure-DP steps: the sum of randomized response's curves.

    Any ε-DP pair of output distributions is a post-processing of binary randomized
    response at ε (Kairouz–Oh–Viswanath 2015), so by data processing its Rényi
    divergence at every order is at most randomized response's; RDP then composes
    additively (Mironov 2017).

    Parameters
    ----------
    steps : sequence of (float, int)
        ``(eps_step, n_steps)`` pairs.
    orders : sequence of float
        Rényi orders.

    Returns
    -------
    numpy.ndarray of float, shape (len(orders),)
        The composed RDP curve.

    """
    orders = np.asarray(orders, dtype=float)
    out = np.zeros_like(orders)
    for e, n in steps:
        out += n * _rr_rdp(float(e), orders)
    return out


def repeat_and_select(entry: PureDPEntry | RDPEntry, *, mean: float, shape: float = 1.0, orders: Sequence[float] | None = None,
                      delta_conversion: float | None = None, description: str = "") -> RDPEntry:
    """Privacy map of "run a setting a random number of times, keep the best".

    Papernot and Steinke (2022) bound the RDP of running a mechanism ``K`` times with
    independent randomness, ``K`` drawn from a truncated negative binomial (``shape``
    0 < s < ∞; geometric ``shape=1``; logarithmic ``shape=0``) or Poisson
    (``shape=inf``) distribution of mean ``mean``, and releasing only the best run.
    Each candidate setting is one run of ``entry``'s privacy map; to tune over several
    settings, let each repetition pick a setting at random (a mixture of runs, whose
    map the caller bounds by the largest one).  The number of repetitions must really be
    drawn from that distribution.

    Computed by dp-accounting (the RDP accountant's treatment of
    ``RepeatAndSelectDpEvent``) from the inner run's RDP curve: ``entry``'s own curve,
    or for pure-DP steps the randomized-response curve of :func:`pure_dp_rdp`.

    Parameters
    ----------
    entry : PureDPEntry or RDPEntry
        One run's privacy map; it must have no additive δ (the theorem is for RDP).
    mean : float
        Mean number of repetitions, ≥ 1.
    shape : float
        Distribution of the number of repetitions (see above).
    orders : sequence of float, optional
        Orders for a pure-DP inner run (default: dp-accounting's default grid).
    delta_conversion : float, optional
        The new entry's δ target (default: the inner entry's, for pure steps its
        ``delta_composition`` or 1e-6 when that is 0).

    Returns
    -------
    RDPEntry
        Record it like any run.

    """
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    mean = float(mean)
    shape = float(shape)
    if not (math.isfinite(mean) and mean >= 1.0):
        raise ParameterError(f"mean number of repetitions must be at least 1, got {mean!r}.")
    if math.isnan(shape) or shape < 0:
        raise ParameterError(f"shape must be >= 0 (inf for Poisson), got {shape!r}.")
    if isinstance(entry, PureDPEntry):
        if entry.delta_additive > 0:
            raise ParameterError("repeat-and-select is accounted in RDP and needs a run without an additive δ; "
                                 "record each repetition as its own run instead.")
        grid = np.asarray(orders if orders is not None else rdp.DEFAULT_RDP_ORDERS, dtype=float)
        grid = grid[grid > 1.0]
        inner = pure_dp_rdp(entry.steps, grid)
        dc = delta_conversion if delta_conversion is not None else (entry.delta_composition or 1e-6)
    elif isinstance(entry, RDPEntry):
        if entry.delta_additive > 0:
            raise ParameterError("repeat-and-select is accounted in RDP and needs a run without an additive δ; "
                                 "record each repetition as its own run instead.")
        grid = np.asarray(entry.orders, dtype=float)
        inner = np.asarray(entry.rho, dtype=float)
        dc = delta_conversion if delta_conversion is not None else entry.delta_conversion
    else:
        raise ParameterError("repeat-and-select needs a PureDPEntry or an RDPEntry; an (ε, δ)-only run has no RDP curve.")
    _ = dp_event.RepeatAndSelectDpEvent  # the event this accounts (see the RDP accountant)
    out = np.asarray(rdp._compute_rdp_repeat_and_select(grid, inner, mean, shape), dtype=float)
    params = dict(entry.params)
    params.update(repeat_mean=mean, repeat_shape=shape if math.isfinite(shape) else "poisson")
    return RDPEntry(orders=tuple(grid), rho=tuple(out), delta_conversion=dc, mechanism=f"repeat_and_select({entry.mechanism})",
                    params=params, description=description or (
                        f"repeat-and-select (Papernot–Steinke 2022) of {entry.mechanism}: mean {mean:g} repetitions, shape {shape:g}, best kept."))
