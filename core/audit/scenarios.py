"""Ready-made audits for the app and the benchmark: a mechanism, its settings, and a
worst-case neighbouring pair placed where that mechanism's threshold makes it leak most;
the teaching (deliberately broken) variants; the registry's auditable mechanisms, also
served as ``AUDIT_MECHANISMS`` (always the registry's current list).  A mechanism
registered without an audit of its own gets the default one of :mod:`core.audit.default`
(its labeling function against its privacy map).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

from core.errors import ParameterError
from core.noise import RNGLike
from core.audit.pairs import NeighbourPair, neighbouring_pairs, soft_neighbouring_pairs
from core.audit.run import AuditResult, AuditScenario, audit
from core.audit.samplers import AStabSampler, BTTSampler, BTTSoftSampler, LNMaxSampler

__all__ = [
    "audit_mechanisms",
    "builtin_scenario",
    "builtin_pairs",
    "TEACHING_MECHANISMS",
    "AUDIT_MECHANISMS",
    "AuditScenario",
    "scenario",
    "run_scenario",
    "pair_choices",
]


# ----------------------------------------------------------------------------- scenarios
#
# Ready-made audits for the app and the benchmark: a mechanism, its settings, and a
# worst-case neighbouring pair placed where that mechanism's threshold makes it leak
# most.  The page renders these; it computes nothing itself.



TEACHING_MECHANISMS: dict[str, dict[str, Any]] = {
    "printed-distance-a-stab": {
        "label": "TEACHING EXAMPLE (leaks): A_stab with the paper's printed distance max(0, M − 1)",
        "params": ("epsilon", "delta"),
    },
    "printed-distance-btt": {
        "label": "TEACHING EXAMPLE (leaks): BTT with the paper's printed distance max(0, M − 1)",
        "params": ("epsilon", "delta", "T", "calibration"),
    },
}
"""Deliberately broken variants, for demonstrating a leak only.  Never a default, never
used to label data, never written to an export."""


def teaching_printed_distance_a_stab(epsilon: float, delta: float) -> AStabSampler:
    """TEACHING ONLY: ``A_stab`` with the paper's printed distance (sensitivity 2).

    It claims ``(ε, δ)`` but leaks ``2ε`` on pairs near the threshold; the audit shows it.
    Never use it to label data.
    """
    from core.mechanisms.stability import distance_to_instability_printed

    s = AStabSampler(epsilon, delta, distance=distance_to_instability_printed)
    s.name = "printed_distance_a_stab (teaching: leaks)"
    return s


def teaching_printed_distance_btt(epsilon: float, delta: float, T: int, calibration: str = "tight") -> BTTSampler:
    """TEACHING ONLY: BTT hard labels with the paper's printed distance (sensitivity 2).

    Its true leak can reach twice the claimed ε; the audit shows it exceeding the claim
    with the tight calibration.  Never use it to label data.
    """
    from core.mechanisms.stability import distance_to_instability_printed

    s = BTTSampler(epsilon, delta, T, calibration=calibration, distance=distance_to_instability_printed)
    s.name = "printed_distance_btt (teaching: leaks)"
    return s


def _pair(pairs: Sequence[NeighbourPair], name: str) -> NeighbourPair:
    for p in pairs:
        if p.name == name:
            return p
    raise ParameterError(f"Unknown neighbouring pair {name!r}; choose one of {[p.name for p in pairs]}.")


def _even_k(min_k: int) -> int:
    return int(min_k + (min_k % 2) + 20)


_GAUSSIAN = ("gnmax", "confident-gnmax")
_DP_TRAINING = ("dp-logistic", "dp-naive-bayes")
_BUILTIN_AUDITS = ("btt", "btt-soft", "lnmax", "baseline", "a-stab") + _GAUSSIAN + _DP_TRAINING
"""The registered mechanisms whose audit scenario is built here (the Gaussian ones in
:mod:`core.audit.gaussian`, the models trained with DP in :mod:`core.audit.dp_training`).  The audit looks mechanisms up in the registry; the registry
never reaches into the audit (a mechanism registered elsewhere brings its own
``Mechanism.audit`` and ``Mechanism.audit_pairs``, or gets the default audit)."""

_NO_DEFAULT_AUDIT = {
    "certified-gnmax": "its release passes a private test of the data-dependent cost (design.md §8.5); "
                       "a default scenario's pair says nothing about that test",
}
"""Built-in mechanisms left out of the default audit, with the reason."""


def _default_applies(mech) -> bool:
    return mech.inputs in ("counts", "scores") and mech.name not in _NO_DEFAULT_AUDIT


def _scenario_of(mech) -> Callable[..., "AuditScenario"] | None:
    """The scenario builder of a registered mechanism: its own, the built-in one, else the
    default audit (:func:`core.audit.default.default_scenario`) for counts and scores."""
    if mech.audit is not None:
        return mech.audit
    if mech.name in _GAUSSIAN:
        from core.audit.gaussian import gaussian_scenario

        return lambda pair=None, **settings: gaussian_scenario(mech.name, pair=pair, **settings)
    if mech.name in _DP_TRAINING:
        from core.audit.dp_training import dp_training_scenario

        return lambda pair=None, **settings: dp_training_scenario(mech.name, pair=pair, **settings)
    if mech.name in _BUILTIN_AUDITS:
        return lambda pair=None, **settings: builtin_scenario(mech.name, pair=pair, **settings)
    if _default_applies(mech):
        from core.audit.default import default_scenario

        return lambda pair=None, **settings: default_scenario(mech.name, pair=pair, **settings)
    return None


def _pairs_of(mech) -> Callable[[], tuple[list[str], str]] | None:
    """The neighbouring pairs of a registered mechanism: its own, the built-in ones, else the default audit's."""
    if mech.audit_pairs is not None:
        return mech.audit_pairs
    if mech.name in _GAUSSIAN:
        from core.audit.gaussian import gaussian_pairs

        return lambda: gaussian_pairs(mech.name)
    if mech.name in _DP_TRAINING:
        from core.audit.dp_training import dp_training_pairs

        return lambda: dp_training_pairs(mech.name)
    if mech.name in _BUILTIN_AUDITS:
        return lambda: builtin_pairs(mech.name)
    if mech.audit is None and _default_applies(mech):
        from core.audit.default import default_pairs

        return lambda: default_pairs(mech.name)
    return None


def _audit_settings(mech) -> dict[str, Any]:
    """The settings an audit of ``mech`` starts from (values at which the audit has power)."""
    if mech.audit is None and mech.name not in _BUILTIN_AUDITS and _default_applies(mech):
        from core.audit.default import default_settings

        return default_settings(mech)
    return dict(mech.audit_defaults)


def _audit_takes(mech, defaults: dict[str, Any]) -> tuple[str, ...]:
    """The settings an audit of ``mech`` accepts: its defaults' names; for the default audit
    every setting the mechanism takes (a noise parameter instead of ε, for instance)."""
    if mech.audit is None and mech.name not in _BUILTIN_AUDITS and _default_applies(mech):
        takes = (("epsilon",) if mech.takes_epsilon else ()) + tuple(mech.parameter_names)
        return tuple(dict.fromkeys((*defaults, *takes)))
    return tuple(defaults)


def audit_mechanisms() -> dict[str, dict[str, Any]]:
    """The mechanisms the audit offers, from the registry: name → label and settings.

    Every registered mechanism with an audit scenario is offered: its own
    ``Mechanism.audit``, one built here for the built-in mechanisms, or the default audit
    (its labeling function against its privacy map, :mod:`core.audit.default`) for any
    other mechanism that reads vote counts or teacher scores.  The settings are its
    ``audit_defaults`` (values at which the audit has power), for the default audit its
    parameters' defaults at ε = 1 and δ = 1e-5; ``takes`` names every setting the audit
    accepts.
    """
    from core.mechanisms import registry

    out: dict[str, dict[str, Any]] = {}
    for name in registry.names():
        mech = registry.get(name)
        if _scenario_of(mech) is not None:
            defaults = _audit_settings(mech)
            out[name] = {"label": mech.title, "params": tuple(defaults), "defaults": defaults,
                         "takes": _audit_takes(mech, defaults)}
    return out


def __getattr__(name: str) -> Any:
    if name == "AUDIT_MECHANISMS":  # always the registry's current list
        return audit_mechanisms()
    raise AttributeError(name)


def scenario(mechanism: str, *, pair: str | None = None, **settings: Any) -> "AuditScenario":
    """Build the audit of one mechanism on its worst-case neighbouring pair.

    Registered mechanisms come from the registry (``Mechanism.audit``); the teaching
    variants of :data:`TEACHING_MECHANISMS` are built here.  Settings the mechanism does
    not use are ignored; missing ones take the mechanism's audit defaults.

    Parameters
    ----------
    mechanism : str
        A registered mechanism with an audit, or a key of :data:`TEACHING_MECHANISMS`.
    pair : str, optional
        Name of a neighbouring pair (see :func:`pair_choices`).
    **settings
        The mechanism's settings.

    Returns
    -------
    AuditScenario
    """
    from core.mechanisms import registry

    if mechanism in TEACHING_MECHANISMS:
        return builtin_scenario(mechanism, pair=pair, **settings)
    offered = audit_mechanisms()
    if mechanism not in offered:
        raise ParameterError(
            f"Unknown mechanism {mechanism!r}; choose one of {sorted(offered) + sorted(TEACHING_MECHANISMS)}."
        )
    mech = registry.get(mechanism)
    defaults = dict(offered[mechanism]["defaults"])
    used = {k: v for k, v in settings.items() if k in offered[mechanism]["takes"] and v is not None}
    if any(d in used for d in mech.derived) and "epsilon" not in used:
        defaults.pop("epsilon", None)  # the noise given decides ε
    return _scenario_of(mech)(pair=pair, **{**defaults, **used})


def builtin_scenario(
    mechanism: str,
    *,
    epsilon: float = 1.0,
    delta: float = 1e-2,
    T: int = 1,
    calibration: str = "tight",
    gamma: float = 1.0,
    eta: float = 0.25,
    pair: str | None = None,
) -> AuditScenario:
    """Build the audit of one mechanism on its worst-case neighbouring pair.

    The pair is placed where the mechanism leaks most: A_stab's pivotal distance at its
    threshold ``Γ``; BTT's queries around its threshold ``w`` (answered queries losing
    a unit of distance, the last query gaining one); LNMax's top class losing a vote at
    a margin of 4.  Settings not used by the mechanism are ignored.

    Parameters
    ----------
    mechanism : str
        A key of :data:`AUDIT_MECHANISMS` or :data:`TEACHING_MECHANISMS`.
    epsilon, delta, T, calibration, gamma, eta
        The mechanism's settings (validated by the mechanism itself).
    pair : str, optional
        Name of a pair of :func:`neighbouring_pairs` (or :func:`soft_neighbouring_pairs`)
        to use instead of the default worst case.

    Returns
    -------
    AuditScenario
    """
    from core.accounting.baseline import a_stab_threshold, composition_baseline_parameters
    from core.accounting.btt import calibrate_btt
    from core.validation import check_delta, check_epsilon, check_gamma, check_T

    from core.mechanisms import registry

    teaching = mechanism in TEACHING_MECHANISMS
    label = TEACHING_MECHANISMS[mechanism]["label"] if teaching else registry.get(mechanism).title
    settings: dict[str, Any] = {}
    if mechanism in ("a-stab", "printed-distance-a-stab", "baseline"):
        epsilon, delta = check_epsilon(epsilon), check_delta(delta)
        settings = {"epsilon": epsilon, "delta": delta}
        if mechanism == "baseline":
            n_q = 2
            thr = composition_baseline_parameters(epsilon, delta=delta, m=n_q).threshold
            d = int(math.floor(thr))
            pairs = neighbouring_pairs(_even_k(2 * d + 4), distance=d - 1, n_queries=n_q)
            sampler = AStabSampler(epsilon, delta, baseline=True)
        else:
            thr = a_stab_threshold(epsilon, delta=delta)
            if mechanism == "a-stab":
                # distance floor(Γ) against floor(Γ) - 1: the Laplace tail ratio is exactly e^ε
                d = int(math.floor(thr))
                sampler = AStabSampler(epsilon, delta)
            else:
                # printed distance 2d + 1 against 2d - 1 straddling Γ
                d = max(0, int(math.floor((thr - 1) / 2)))
                sampler = teaching_printed_distance_a_stab(epsilon, delta)
            pairs = neighbouring_pairs(_even_k(2 * d + 4), distance=max(0, d - 1))
    elif mechanism in ("btt", "printed-distance-btt"):
        epsilon, delta, T = check_epsilon(epsilon), check_delta(delta), check_T(T)
        settings = {"epsilon": epsilon, "delta": delta, "T": T, "calibration": calibration}
        n_q = 3 if mechanism == "btt" else 6
        w = calibrate_btt(epsilon, delta=delta, T=T, m=n_q, calibration=calibration).threshold
        d = int(round(w)) if mechanism == "btt" else max(0, int(round((w - 2) / 2)))
        pairs = neighbouring_pairs(_even_k(2 * d + 6), distance=d, n_queries=n_q)
        sampler = (BTTSampler(epsilon, delta, T, calibration=calibration) if mechanism == "btt"
                   else teaching_printed_distance_btt(epsilon, delta, T, calibration))
    elif mechanism == "btt-soft":
        epsilon, delta, T = check_epsilon(epsilon), check_delta(delta), check_T(T)
        settings = {"epsilon": epsilon, "delta": delta, "T": T, "eta": eta, "calibration": calibration}
        w = calibrate_btt(epsilon, delta=delta, T=T, m=1, calibration=calibration, soft=True).threshold
        d = int(round(w))
        pairs = soft_neighbouring_pairs(_even_k(2 * d + 6), eta, distance=d)
        sampler = BTTSoftSampler(epsilon, delta, T, eta, calibration=calibration)
    else:  # lnmax
        gamma, delta = check_gamma(gamma), check_delta(delta)
        settings = {"gamma": gamma, "delta": delta}
        pairs = neighbouring_pairs(40, distance=0)
        sampler = LNMaxSampler(gamma, delta=delta)
    chosen = _pair(pairs, pair or _DEFAULT_PAIRS[mechanism])
    # the claim is what the correct mechanism reports (for teaching variants too)
    if mechanism == "printed-distance-a-stab":
        claim = AStabSampler(epsilon, delta).claim(chosen.a)
    elif mechanism == "printed-distance-btt":
        claim = BTTSampler(epsilon, delta, T, calibration=calibration).claim(chosen.a)
    else:
        claim = sampler.claim(chosen.a)
    return AuditScenario(mechanism, label, sampler, chosen, float(claim[0]), float(claim[1]), settings, teaching)


_DEFAULT_PAIRS = {
    "a-stab": "top_loses_vote",
    "printed-distance-a-stab": "top_loses_vote",
    "baseline": "all_queries_move",
    "btt": "answered_then_bottom",
    "printed-distance-btt": "answered_then_bottom",
    "btt-soft": "adjacent_bins",
    "lnmax": "top_loses_vote",
}
_COUNT_PAIRS = ["tie", "top_loses_vote", "all_queries_move", "mixed_directions", "answered_then_bottom"]
_SOFT_PAIRS = ["adjacent_bins", "bin_edge", "tie", "outer_half_bin"]


def pair_choices(mechanism: str) -> tuple[list[str], str]:
    """The neighbouring pairs :func:`scenario` offers for a mechanism, and its default.

    Returns
    -------
    (names, default) : (list of str, str)
    """
    from core.mechanisms import registry

    if mechanism in TEACHING_MECHANISMS:
        return builtin_pairs(mechanism)
    offered = audit_mechanisms()
    pairs = _pairs_of(registry.get(mechanism)) if mechanism in offered else None
    if pairs is None:
        raise ParameterError(
            f"Unknown mechanism {mechanism!r}; choose one of {sorted(offered) + sorted(TEACHING_MECHANISMS)}."
        )
    return pairs()


def builtin_pairs(mechanism: str) -> tuple[list[str], str]:
    """The neighbouring pairs of the built-in mechanisms' scenarios, and the default."""
    if mechanism not in _DEFAULT_PAIRS:
        raise ParameterError(f"No built-in audit scenario for {mechanism!r}.")
    names = _SOFT_PAIRS if mechanism == "btt-soft" else _COUNT_PAIRS
    return list(names), _DEFAULT_PAIRS[mechanism]


def run_scenario(
    scn: AuditScenario,
    *,
    n_trials: int = 200_000,
    confidence: float = 0.99,
    rng: RNGLike = None,
    chunk_size: int = 20_000,
    progress: Callable[[int, int], None] | None = None,
) -> AuditResult:
    """Audit a :class:`AuditScenario` (see :func:`audit`)."""
    return audit(
        scn.sampler,
        scn.pair.a,
        scn.pair.b,
        claimed_epsilon=scn.claimed_epsilon,
        claimed_delta=scn.claimed_delta,
        n_trials=n_trials,
        confidence=confidence,
        rng=rng,
        chunk_size=chunk_size,
        progress=progress,
        name=scn.mechanism,
    )
