"""The default audit of a registered mechanism: built from its labeling function and privacy
map alone, so that a mechanism registered by a user (in code or by an installed package's
entry point) reaches the audit, the app's audit page and ``private-label-lab audit`` without
an ``audit=`` builder of its own (docs/design.md §5, docs/API.md "Adding a mechanism").

The scenario runs the registered ``label`` itself (:class:`RegistrySampler`) on neighbouring
vote counts (or teacher scores) and claims what the registered ``privacy_map`` says for the
pair's number of queries.  The pair is placed where a noisy-max leaks most: the top class
loses one vote to the runner-up at a margin of about three noise scales, the scale read off
the per-query privacy map (``2/ε₁``).  A mechanism whose leak sits elsewhere (a threshold,
as BTT's) should bring its own ``Mechanism.audit``; the other neighbouring pairs are offered
by name.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from core.errors import ParameterError
from core.noise import check_rng

__all__ = ["RegistrySampler", "default_pairs", "default_scenario", "default_settings", "DEFAULT_PAIR"]

DEFAULT_PAIR = "top_loses_vote"
_COUNT_PAIRS = ["top_loses_vote", "tie", "all_queries_move", "mixed_directions", "answered_then_bottom"]
_SCORE_PAIRS = ["adjacent_bins", "bin_edge", "tie", "outer_half_bin"]
_AUDIT_EPSILON = 1.0  # the budget a default audit runs at: small, so that the audit has power
_AUDIT_DELTA = 1e-5


def default_settings(mech) -> dict[str, Any]:
    """The settings a default audit runs at: ``audit_defaults``, else the parameters' defaults
    with ε = 1 (where the mechanism takes ε) and δ = 1e-5.

    Parameters
    ----------
    mech : core.mechanisms.Mechanism

    Returns
    -------
    dict
        Setting name -> value (noise parameters that ε decides are left to ε).
    """
    if mech.audit_defaults:
        return dict(mech.audit_defaults)
    out: dict[str, Any] = {}
    if mech.takes_epsilon:
        out["epsilon"] = _AUDIT_EPSILON
    for p in mech.parameters:
        if p.name in out or p.name in mech.derived:
            continue
        if p.name == "delta":
            out["delta"] = _AUDIT_DELTA
        elif p.default is not None:
            out[p.name] = p.default
    return out


def _encode(labels, scores, rows: int) -> np.ndarray:
    """Released labels (and scores, to 1e-9, ⊥ as -1) as integers, one row per run."""
    labels = np.asarray(labels, dtype=np.int64).reshape(rows, -1)
    if scores is None:
        return labels
    scores = np.asarray(scores, dtype=float).reshape(rows, -1)
    code = np.where(np.isnan(scores), -1, np.rint(np.nan_to_num(scores, nan=0.0) * 1e9)).astype(np.int64)
    return np.concatenate([labels, code], axis=1)


class RegistrySampler:
    """A registered mechanism's own labeling function as an audit sampler.

    ``sampler(inputs, n_trials, rng)`` returns the released outputs, one row per
    independent run: for a mechanism registered ``per_query`` (answers independent per
    query, the same noise), one call on the inputs stacked ``n_trials`` times; otherwise
    one call per trial (slow, exact for any mechanism).  The settings are resolved once
    for the pair's number of queries (noise derived from ε included), so every run is the
    one the claim is about.

    Parameters
    ----------
    mechanism : str
        A registered mechanism.
    settings : dict
        Its settings (:func:`core.pipeline.resolve`).
    m : int
        The number of queries of the audited inputs.
    """

    def __init__(self, mechanism: str, settings: dict[str, Any], m: int):
        from core import pipeline
        from core.mechanisms import registry

        self.name = mechanism
        self.mech = registry.get(mechanism)
        self.m = int(m)
        self.params = pipeline.resolve(mechanism, settings, self.m)

    def claim(self, inputs=None) -> tuple[float, float]:
        """The (ε, δ) the registered privacy map states for a run on the pair's queries."""
        g = self.mech.privacy_map(self.m, **self.params)
        return float(g.epsilon), float(g.delta)

    def _run(self, inputs, gen):
        return self.mech.label(inputs, **self.params, rng=gen)

    def __call__(self, inputs, n_trials: int, rng) -> np.ndarray:
        gen = check_rng(rng)
        inputs = np.asarray(inputs)
        if self.mech.per_query:
            res = self._run(np.tile(inputs, (int(n_trials), 1)), gen)
            return _encode(res.labels, res.scores, int(n_trials))
        runs = [self._run(inputs, gen) for _ in range(int(n_trials))]
        return np.concatenate([_encode(r.labels, r.scores, 1) for r in runs], axis=0)


def _margin_distance(sampler_params: dict[str, Any], mech, m_one: int = 1) -> int:
    """The distance to instability of the pair's pivotal row: a margin of about three noise
    scales, the scale ``2/ε₁`` read off the privacy map of one query."""
    eps1 = float(mech.privacy_map(m_one, **sampler_params).epsilon)
    if not np.isfinite(eps1) or eps1 <= 0:
        return 0
    margin = int(np.clip(round(6.0 / eps1), 4, 400))
    return max(0, margin // 2 - 2)


def default_pairs(mechanism: str) -> tuple[list[str], str]:
    """The neighbouring pairs a default audit offers, and the default one.

    Returns
    -------
    (names, default) : (list of str, str)
    """
    from core.mechanisms import registry

    mech = registry.get(mechanism)
    if mech.inputs == "scores":
        return list(_SCORE_PAIRS), "adjacent_bins"
    return list(_COUNT_PAIRS), DEFAULT_PAIR


def default_scenario(mechanism: str, *, pair: str | None = None, **settings: Any):
    """The default audit of a registered mechanism: its own labeling function on a
    neighbouring pair, against its own privacy map.

    Parameters
    ----------
    mechanism : str
        A registered mechanism whose inputs are vote counts or teacher scores.
    pair : str, optional
        A name of :func:`default_pairs` (default ``"top_loses_vote"``; ``"adjacent_bins"``
        for scores).
    **settings
        The mechanism's settings (default: :func:`default_settings`).

    Returns
    -------
    core.audit.AuditScenario

    Raises
    ------
    ParameterError
        For a mechanism that reads the private rows (it needs its own ``audit``), an
        unknown pair, or settings the mechanism refuses.
    """
    from core.audit.pairs import neighbouring_pairs, soft_neighbouring_pairs
    from core.audit.run import AuditScenario
    from core.mechanisms import registry

    mech = registry.get(mechanism)
    if mech.inputs not in ("counts", "scores"):
        raise ParameterError(
            f"{mechanism} reads the private rows: a default audit cannot build its neighbouring inputs; "
            "register it with audit= (see core.audit.dp_training for an example).")
    names, default = default_pairs(mechanism)
    chosen = pair or default
    if chosen not in names:
        raise ParameterError(f"Unknown neighbouring pair {chosen!r} for {mechanism}; choose one of {names}.")
    if mech.spend is not None and any(d in settings and settings[d] is not None for d in mech.derived):
        settings.pop("epsilon", None)  # the noise given decides ε
    wanted = {**default_settings(mech), **{k: v for k, v in settings.items() if v is not None}}
    if any(d in wanted for d in mech.derived):
        wanted.pop("epsilon", None)
    # the margin from one query's privacy map, then the run resolved for the pair's own queries
    d = _margin_distance(RegistrySampler(mechanism, wanted, 1).params, mech)
    if mech.inputs == "scores":
        eta = float(wanted.get("eta", next((p.default for p in mech.parameters if p.name == "eta"), 0.25)))
        pairs = soft_neighbouring_pairs(2 * d + 24, eta, distance=d)
    else:
        pairs = neighbouring_pairs(2 * d + 24, distance=d, n_queries=3)
    found = next((p for p in pairs if p.name == chosen), None)
    if found is None:
        raise ParameterError(f"Unknown neighbouring pair {chosen!r} for {mechanism}; choose one of {[p.name for p in pairs]}.")
    sampler = RegistrySampler(mechanism, wanted, found.a.shape[0])
    eps, delta = sampler.claim(found.a)
    shown = {k: v for k, v in sampler.params.items() if isinstance(v, (int, float, str)) and v is not None}
    if "epsilon" in wanted:
        shown = {"epsilon": wanted["epsilon"], **shown}
    return AuditScenario(mechanism, f"{mech.title} (default audit: its labeling function against its privacy map)",
                         sampler, found, eps, delta, shown, False)
