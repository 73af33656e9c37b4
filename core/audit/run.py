"""Empirical differential-privacy audit (in the style of StatDP / DP-Sniper).

A mechanism claims ``(ε, δ)``-DP: for neighbouring inputs ``a`` and ``b`` and every set
``E`` of outputs, ``P[M(a) ∈ E] <= e^ε P[M(b) ∈ E] + δ``.  The audit samples the
mechanism many times on both inputs and looks for an event that violates the claim:

1. The trials are split in two halves.  On the first half (the *selection* half) the
   audit ranks candidate events by the lower bound they would give: single outputs,
   sets of outputs ranked by their empirical likelihood ratio, and, for scalar numeric
   outputs, threshold sets ``{x >= t}`` / ``{x <= t}``.  It does so in both directions
   (``a`` against ``b`` and ``b`` against ``a``) and keeps the best event of each.
2. On the second half (the *estimation* half, independent of the choice) it estimates
   ``p = P[M(x) ∈ E]`` and ``q = P[M(x') ∈ E]`` with one-sided Clopper–Pearson bounds.
   The level ``1 - confidence`` is split (Bonferroni) over the two directions and the
   two probabilities, so the four bounds hold together with probability at least
   ``confidence``.
3. The lower confidence bound is ``ε_lb = log((p_lower - δ) / q_upper)`` for the better
   direction, or 0 when no event gives a positive value.  With probability at least
   ``confidence`` the mechanism's true ε is at least ``ε_lb``; an audit *fails* (finds a
   violation) when ``ε_lb`` exceeds the claimed ε.

Any deterministic function of the released output is itself a valid output to audit
(post-processing), so a mechanism may return a projection of its output (a hash of the
label vector, the number of abstentions, a sum of released values...): the bound stays
valid, only its power changes.  ``statistic=`` applies such a projection to each batch.

Mechanisms are *vectorized samplers*: ``mechanism(input, n_trials, rng)`` returns
``n_trials`` independent outputs, an array of shape ``(n_trials,)`` (a scalar per trial)
or ``(n_trials, d)`` (a row per trial, e.g. the released label vector; rows are hashed
to one int64 per trial, and a hash collision only merges outputs, which is again a
post-processing).  :class:`BTTSampler` and friends (:mod:`core.audit.samplers`) sample the library's mechanisms
many times at once from the same building blocks the aggregators use
(:mod:`core.mechanisms.stability`, :mod:`core.noise`, :mod:`core.accounting`); :class:`RealAggregator`
calls the real :mod:`core.mechanisms` functions once per trial, to test the real code
and to cross-check the fast samplers (:func:`compare_samplers`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from core.errors import ParameterError
from core.noise import RNGLike, check_rng
from core.validation import check_probability
from core.audit.stats import clopper_pearson, epsilon_lower_bound, hash_rows

if TYPE_CHECKING:
    from core.audit.pairs import NeighbourPair

__all__ = [
    "AuditResult",
    "AuditScenario",
    "audit",
]

_MAX_CANDIDATES = 4096
_MAX_EXAMPLES = 4096  # distinct vector outputs remembered for describing the event


def _prepare(outputs) -> tuple[np.ndarray, bool]:
    """Outputs as a 1-D array, and whether their order means something (scalar outputs)."""
    arr = np.asarray(outputs)
    if arr.ndim == 1 and arr.dtype == bool:
        return arr.astype(np.int64), True
    if arr.ndim == 1 and (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        if np.issubdtype(arr.dtype, np.floating):
            return np.where(np.isnan(arr), np.inf, arr).astype(np.float64), True
        return arr.astype(np.int64), True
    return hash_rows(arr), False


# ----------------------------------------------------------------------------- events


@dataclass(frozen=True)
class _Event:
    kind: str  # "set" or "ge" or "le"
    values: np.ndarray | None = None  # kind "set": sorted output values in the event
    threshold: float | None = None  # kind "ge"/"le"

    def contains(self, x: np.ndarray) -> np.ndarray:
        if self.kind == "set":
            return np.isin(x, self.values)
        if self.kind == "ge":
            return x >= self.threshold
        return x <= self.threshold

    def outputs(self, examples: dict) -> list:
        """The event's outputs (vector outputs decoded from their hashes when known)."""
        if self.kind != "set":
            return []
        return [examples.get(int(v), v.item()) for v in self.values]

    def describe(self, examples: dict | None = None) -> str:
        if self.kind == "ge":
            return f"output >= {self.threshold:g}"
        if self.kind == "le":
            return f"output <= {self.threshold:g}"
        outs = self.outputs(examples or {})
        n = len(outs)
        shown = ", ".join(str(v) for v in outs[:5])
        more = f", ... ({n} outputs)" if n > 5 else ""
        return f"output in {{{shown}{more}}}"


def _candidate_cuts(n_items: int) -> np.ndarray:
    """Prefix lengths to try: all when few, else a geometric grid plus the first ones."""
    if n_items <= _MAX_CANDIDATES:
        return np.arange(1, n_items + 1)
    grid = np.unique(np.geomspace(1, n_items, _MAX_CANDIDATES - 256).astype(np.int64))
    return np.unique(np.concatenate([np.arange(1, 257), grid, [n_items]]))


def _best_event(x_in: np.ndarray, x_out: np.ndarray, alpha: float, delta: float, ordered: bool) -> tuple[_Event, float]:
    """The candidate event with the largest selection-half lower bound, direction in→out."""
    n_in, n_out = x_in.size, x_out.size
    values, inv = np.unique(np.concatenate([x_in, x_out]), return_inverse=True)
    c_in = np.bincount(inv[:n_in], minlength=values.size).astype(float)
    c_out = np.bincount(inv[n_in:], minlength=values.size).astype(float)
    best_event, best_score = None, -np.inf

    # (1) sets of outputs ranked by empirical likelihood ratio: the prefixes of that
    #     order.  Ranking and scoring on the same trials would overfit (with many distinct
    #     outputs, "the outputs seen only under x_in" looks perfect and has probability ~0
    #     elsewhere), so the selection half is cross-fitted: the order comes from one part
    #     and the prefixes are scored on the other, both ways round.
    h_in, h_out = n_in // 2, n_out // 2
    parts = (
        (np.bincount(inv[:h_in], minlength=values.size), np.bincount(inv[n_in : n_in + h_out], minlength=values.size), h_in, h_out),
        (np.bincount(inv[h_in:n_in], minlength=values.size), np.bincount(inv[n_in + h_out :], minlength=values.size), n_in - h_in, n_out - h_out),
    )
    cuts = _candidate_cuts(values.size)
    for (r_in, r_out, rn_in, rn_out), (s_in, s_out, sn_in, sn_out) in ((parts[0], parts[1]), (parts[1], parts[0])):
        ratio = ((r_in + 0.5) / rn_in) / ((r_out + 0.5) / rn_out)
        order = np.lexsort((-r_in, -ratio))
        cum_in = np.cumsum(s_in[order])[cuts - 1]
        cum_out = np.cumsum(s_out[order])[cuts - 1]
        scores = epsilon_lower_bound(cum_in, sn_in, cum_out, sn_out, alpha, delta)
        i = int(np.argmax(scores))
        if scores[i] > best_score:
            best_score = float(scores[i])
            best_event = _Event("set", values=np.sort(values[order[: cuts[i]]]))
    # single outputs, scored on the whole selection half
    ratio = (c_in + 0.5) / n_in / ((c_out + 0.5) / n_out)
    order = np.lexsort((-c_in, -ratio))
    single_idx = order[: min(values.size, _MAX_CANDIDATES)]
    scores = epsilon_lower_bound(c_in[single_idx], n_in, c_out[single_idx], n_out, alpha, delta)
    i = int(np.argmax(scores))
    if scores[i] > best_score:
        best_score = float(scores[i])
        best_event = _Event("set", values=values[single_idx[i : i + 1]])

    # (2) scalar numeric outputs: threshold sets {x >= t} and {x <= t}.
    if ordered and values.size > 2:
        cuts = _candidate_cuts(values.size)  # indices into sorted values
        ge_in = np.cumsum(c_in[::-1])[::-1]  # count of x >= values[j]
        ge_out = np.cumsum(c_out[::-1])[::-1]
        le_in = np.cumsum(c_in)
        le_out = np.cumsum(c_out)
        idx = np.unique(np.concatenate([cuts - 1, values.size - cuts]))
        for kind, a_cnt, b_cnt in (("ge", ge_in, ge_out), ("le", le_in, le_out)):
            scores = epsilon_lower_bound(a_cnt[idx], n_in, b_cnt[idx], n_out, alpha, delta)
            i = int(np.argmax(scores))
            if scores[i] > best_score:
                best_score = float(scores[i])
                best_event = _Event(kind, threshold=float(values[idx[i]]))

    if best_event is None:  # nothing positive: the single most likely output of x_in
        best_event = _Event("set", values=values[[int(np.argmax(c_in))]])
    return best_event, best_score


# ----------------------------------------------------------------------------- audit


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit`.

    Attributes
    ----------
    epsilon_lower_bound : float
        ``ε_lb``: with probability at least ``confidence`` the mechanism's true ε on this
        pair of inputs is at least this value (0 when no event gives a positive bound).
    claimed_epsilon, claimed_delta : float
        The guarantee under test.
    passed : bool
        ``epsilon_lower_bound <= claimed_epsilon``: no violation was found.
    event : str
        The chosen output event, in words.
    direction : str
        ``"a>b"`` (the event is likelier under input a) or ``"b>a"``.
    p_first, p_second : float
        Estimated probabilities of the event on the estimation half, for the input
        that favours it and for the other one.
    p_first_lower, p_second_upper : float
        Their Clopper–Pearson bounds (each at level ``(1 - confidence) / 4``).
    n_trials : int
        Trials per input (half used to choose the event, half to estimate it).
    confidence : float
    mechanism : str
        A name for the audited mechanism.
    event_outputs : tuple
        Up to 50 outputs of the event (rows as tuples; empty for threshold events).
    details : dict
        Trial split and per-bound error level.
    """

    epsilon_lower_bound: float
    claimed_epsilon: float
    claimed_delta: float
    passed: bool
    event: str
    direction: str
    p_first: float
    p_second: float
    p_first_lower: float
    p_second_upper: float
    n_trials: int
    confidence: float
    mechanism: str = ""
    event_outputs: tuple = ()
    details: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        """One line: the bound, the claim and the verdict."""
        verdict = "no violation found" if self.passed else "VIOLATION"
        return (
            f"{self.mechanism or 'mechanism'}: audited eps >= {self.epsilon_lower_bound:.3f} "
            f"({self.confidence:.0%} confidence, {self.n_trials} trials per input) vs claimed "
            f"eps = {self.claimed_epsilon:.3f}, delta = {self.claimed_delta:g}: {verdict}"
        )


@dataclass(frozen=True)
class AuditScenario:
    """A mechanism with its settings and a worst-case neighbouring pair, ready to audit.

    Attributes
    ----------
    mechanism : str
        Key of :data:`AUDIT_MECHANISMS` or :data:`TEACHING_MECHANISMS`.
    label : str
    sampler : callable
        ``sampler(input, n_trials, rng)``.
    pair : NeighbourPair
    claimed_epsilon, claimed_delta : float
        What the (real or, for teaching variants, the correct) mechanism reports.
    settings : dict
    teaching : bool
        True for a deliberately broken teaching variant.
    """

    mechanism: str
    label: str
    sampler: Callable
    pair: NeighbourPair
    claimed_epsilon: float
    claimed_delta: float
    settings: dict
    teaching: bool = False


def _sample(mechanism, inp, n: int, gen, statistic, chunk_size: int, progress, done: int, total: int, examples: dict):
    parts = []
    ordered = True
    left = n
    while left > 0:
        size = min(chunk_size, left)
        raw = mechanism(inp, size, gen)
        if statistic is not None:
            raw = statistic(raw)  # once: the examples below are read from the same array
        out, ordered = _prepare(raw)
        if not ordered and len(examples) < _MAX_EXAMPLES:
            raw2 = np.asarray(raw).reshape(size, -1)
            keys, first = np.unique(out, return_index=True)
            for key, i in zip(keys[:_MAX_EXAMPLES], first[:_MAX_EXAMPLES]):
                examples.setdefault(int(key), tuple(raw2[i].tolist()))
        if out.shape[0] != size:
            raise ParameterError(
                f"The mechanism returned {out.shape[0]} outputs for {size} trials; "
                "a sampler must return one output per trial."
            )
        parts.append(out)
        left -= size
        done += size
        if progress is not None:
            progress(done, total)
    return np.concatenate(parts), ordered, done


def audit(
    mechanism: Callable[[Any, int, np.random.Generator], np.ndarray],
    input_a,
    input_b,
    *,
    claimed_epsilon: float,
    claimed_delta: float = 0.0,
    n_trials: int = 200_000,
    confidence: float = 0.99,
    rng: RNGLike = None,
    statistic: Callable[[np.ndarray], np.ndarray] | None = None,
    chunk_size: int = 100_000,
    progress: Callable[[int, int], None] | None = None,
    name: str = "",
) -> AuditResult:
    """Audit a mechanism on one pair of neighbouring inputs.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(input, n_trials, rng) -> outputs``: ``n_trials`` independent runs,
        an array of shape ``(n_trials,)`` or ``(n_trials, d)``.
    input_a, input_b : any
        Neighbouring inputs (e.g. from :func:`neighbouring_pairs`).
    claimed_epsilon : float
        The ε the mechanism claims (> 0).
    claimed_delta : float, default 0
        The claimed δ, in ``[0, 1)``; it is subtracted from the event probability.
    n_trials : int, default 200000
        Trials per input: the first half chooses the event, the second estimates it.
    confidence : float, default 0.99
        Joint confidence of the four Clopper–Pearson bounds.
    rng : Generator, int or None
        Randomness of the trials (see :func:`core.noise.check_rng`).
    statistic : callable, optional
        A fixed function applied to every output batch before the analysis (any
        post-processing keeps the bound valid), e.g. the number of ⊥ in a label vector.
    chunk_size : int, default 100000
        Trials per call of ``mechanism`` (bounds memory; ``progress`` is called per chunk).
    progress : callable, optional
        ``progress(done, total)`` with trial counts over both inputs.
    name : str
        A label for the result.

    Returns
    -------
    AuditResult
    """
    eps = float(claimed_epsilon)
    if not (math.isfinite(eps) and eps > 0):
        raise ParameterError(f"claimed_epsilon must be a finite number > 0, got {claimed_epsilon!r}.")
    delta = float(claimed_delta)
    if not (0.0 <= delta < 1.0):
        raise ParameterError(f"claimed_delta must lie in [0, 1), got {claimed_delta!r}.")
    conf = check_probability(confidence, "confidence")
    if isinstance(n_trials, bool) or not isinstance(n_trials, (int, np.integer)) or n_trials < 20:
        raise ParameterError(f"n_trials must be a whole number of at least 20, got {n_trials!r}.")
    n_trials = int(n_trials)
    chunk_size = max(1, int(chunk_size))
    gen = check_rng(rng)

    total = 2 * n_trials
    examples: dict[int, tuple] = {}
    out_a, ordered_a, done = _sample(mechanism, input_a, n_trials, gen, statistic, chunk_size, progress, 0, total, examples)
    out_b, ordered_b, done = _sample(mechanism, input_b, n_trials, gen, statistic, chunk_size, progress, done, total, examples)
    ordered = ordered_a and ordered_b
    if out_a.dtype != out_b.dtype:
        out_a, out_b = out_a.astype(np.float64), out_b.astype(np.float64)

    half = n_trials // 2
    sel_a, est_a = out_a[:half], out_a[half:]
    sel_b, est_b = out_b[:half], out_b[half:]
    alpha = (1.0 - conf) / 4.0  # two directions x two probabilities

    best = None
    for direction, s_in, s_out, e_in, e_out in (
        ("a>b", sel_a, sel_b, est_a, est_b),
        ("b>a", sel_b, sel_a, est_b, est_a),
    ):
        event, _ = _best_event(s_in, s_out, alpha, delta, ordered)
        x_in = int(np.count_nonzero(event.contains(e_in)))
        x_out = int(np.count_nonzero(event.contains(e_out)))
        lb = float(epsilon_lower_bound(x_in, e_in.size, x_out, e_out.size, alpha, delta))
        cand = (lb, direction, event, x_in, e_in.size, x_out, e_out.size)
        if best is None or lb > best[0]:
            best = cand
    lb, direction, event, x_in, n_in, x_out, n_out = best
    lb = max(0.0, lb) if math.isfinite(lb) else 0.0
    return AuditResult(
        epsilon_lower_bound=lb,
        claimed_epsilon=eps,
        claimed_delta=delta,
        passed=lb <= eps,
        event=event.describe(examples),
        direction=direction,
        p_first=x_in / n_in,
        p_second=x_out / n_out,
        p_first_lower=float(clopper_pearson(x_in, n_in, alpha, "lower")),
        p_second_upper=float(clopper_pearson(x_out, n_out, alpha, "upper")),
        n_trials=n_trials,
        confidence=conf,
        mechanism=name,
        event_outputs=tuple(event.outputs(examples)[:50]),
        details={"n_selection": half, "n_estimation": n_trials - half, "alpha_per_bound": alpha},
    )
