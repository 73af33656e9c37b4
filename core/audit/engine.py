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
post-processing).  :class:`BTTSampler` and friends below sample the library's mechanisms
many times at once from the same building blocks the aggregators use
(:mod:`core.mechanisms.stability`, :mod:`core.noise`, :mod:`core.accounting`); :class:`RealAggregator`
calls the real :mod:`core.mechanisms` functions once per trial, to test the real code
and to cross-check the fast samplers (:func:`compare_samplers`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
from scipy import stats

from core.errors import ParameterError
from core.noise import RNGLike, check_rng
from core.validation import check_counts, check_probability, check_scores

__all__ = [
    "audit_mechanisms",
    "builtin_scenario",
    "builtin_pairs",
    "TEACHING_MECHANISMS",
    "AuditResult",
    "audit",
    "clopper_pearson",
    "epsilon_lower_bound",
    "hash_rows",
    "NeighbourPair",
    "neighbouring_pairs",
    "soft_neighbouring_pairs",
    "check_neighbouring_counts",
    "check_neighbouring_scores",
    "counts_with_distance",
    "compare_samplers",
    "SamplerComparison",
    "BTTSampler",
    "BTTSoftSampler",
    "LNMaxSampler",
    "AStabSampler",
    "RealAggregator",
    "AUDIT_MECHANISMS",
    "AuditScenario",
    "scenario",
    "run_scenario",
    "pair_choices",
]

_MAX_CANDIDATES = 4096
_MAX_EXAMPLES = 4096  # distinct vector outputs remembered for describing the event


# ----------------------------------------------------------------------------- statistics


def clopper_pearson(successes, n: int, alpha: float, side: str) -> np.ndarray:
    """One-sided Clopper–Pearson bound for a binomial proportion.

    Parameters
    ----------
    successes : int or array of int
        Number of trials in the event.
    n : int
        Number of trials.
    alpha : float
        One-sided error level: the true proportion is below the ``"lower"`` bound (or
        above the ``"upper"`` bound) with probability at most ``alpha``.
    side : {"lower", "upper"}

    Returns
    -------
    numpy.ndarray of float
    """
    x = np.asarray(successes, dtype=float)
    if side == "lower":
        with np.errstate(invalid="ignore"):
            out = stats.beta.ppf(alpha, np.maximum(x, 1.0), np.maximum(n - x + 1.0, 1.0))
        return np.where(x <= 0, 0.0, out)
    if side == "upper":
        with np.errstate(invalid="ignore"):
            out = stats.beta.ppf(1.0 - alpha, x + 1.0, np.maximum(n - x, 1.0))
        return np.where(x >= n, 1.0, out)
    raise ParameterError(f"side must be 'lower' or 'upper', got {side!r}.")


def epsilon_lower_bound(x_in, n_in: int, x_out, n_out: int, alpha: float, delta: float = 0.0) -> np.ndarray:
    """``log((p_lower - δ) / q_upper)`` from counts, ``-inf`` where not positive-definite.

    ``x_in`` of ``n_in`` trials of the first input fell in the event, ``x_out`` of
    ``n_out`` trials of the second; each one-sided bound is at level ``alpha``.
    """
    p_low = clopper_pearson(x_in, n_in, alpha, "lower")
    q_up = clopper_pearson(x_out, n_out, alpha, "upper")
    num = p_low - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(num > 0, np.log(np.maximum(num, 1e-300) / q_up), -np.inf)


# ----------------------------------------------------------------------------- outputs

_HASH_MULT = np.uint64(0x9E3779B97F4A7C15)
_HASH_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_HASH_MIX2 = np.uint64(0x94D049BB133111EB)


def _mix(x: np.ndarray) -> np.ndarray:
    # splitmix64 finaliser (uint64 arithmetic wraps modulo 2**64)
    x = x ^ (x >> np.uint64(30))
    x = x * _HASH_MIX1
    x = x ^ (x >> np.uint64(27))
    x = x * _HASH_MIX2
    return x ^ (x >> np.uint64(31))


def hash_rows(outputs) -> np.ndarray:
    """Hash each row of a 2-D output array to one int64 (a deterministic function).

    Float rows are hashed through their bit patterns (all NaNs map to one value), so
    equal released vectors give equal hashes.  Collisions are astronomically rare and
    would only merge two outputs into one event, which keeps the audit valid.
    """
    arr = np.asarray(outputs)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ParameterError(f"Mechanism outputs must be 1-D or 2-D, got shape {arr.shape}.")
    if np.issubdtype(arr.dtype, np.floating):
        f = np.where(np.isnan(arr), np.nan, arr.astype(np.float64) + 0.0)  # -0.0 -> 0.0
        words = f.view(np.uint64)
    else:
        words = arr.astype(np.int64).view(np.uint64)
    with np.errstate(over="ignore"):
        h = np.full(arr.shape[0], np.uint64(arr.shape[1]), dtype=np.uint64)
        for j in range(arr.shape[1]):
            h = _mix(h * _HASH_MULT + words[:, j] + np.uint64(j))
    return h.view(np.int64)


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


# ----------------------------------------------------------------------------- neighbours


@dataclass(frozen=True)
class NeighbourPair:
    """Two neighbouring inputs (one teacher changed) and what makes them a worst case.

    Attributes
    ----------
    name : str
    a, b : numpy.ndarray
        Vote counts ``(m, n_classes)`` or teacher scores ``(m, k)``.
    description : str
    """

    name: str
    a: np.ndarray
    b: np.ndarray
    description: str


def check_neighbouring_counts(a, b) -> None:
    """Raise :class:`ParameterError` unless ``a`` and ``b`` differ by one teacher's vote.

    Under replace-one adjacency one teacher may change its vote on every query at once:
    in each row one count goes down by 1 and another up by 1 (or nothing changes).
    """
    a = check_counts(a)
    b = check_counts(b)
    if a.shape != b.shape:
        raise ParameterError(f"Neighbouring vote counts must have the same shape, got {a.shape} and {b.shape}.")
    diff = b - a
    ok = (
        np.all(np.abs(diff) <= 1)
        & np.all(diff.sum(axis=1) == 0)
        & np.all((diff == 1).sum(axis=1) <= 1)
        & np.all((diff == -1).sum(axis=1) <= 1)
    )
    if not ok:
        raise ParameterError(
            "The two vote-count matrices are not neighbours: in every row at most one count may "
            "go down by 1 and one other up by 1 (one teacher changing its vote)."
        )


def check_neighbouring_scores(a, b) -> None:
    """Raise :class:`ParameterError` unless two score matrices differ in one teacher's column."""
    a = check_scores(a)
    b = check_scores(b)
    if a.shape != b.shape:
        raise ParameterError(f"Neighbouring score matrices must have the same shape, got {a.shape} and {b.shape}.")
    changed = np.flatnonzero(np.any(a != b, axis=0))
    if changed.size > 1:
        raise ParameterError(
            f"The two score matrices differ in teachers {changed.tolist()}; neighbours differ in one "
            "teacher's column (queries × teachers) only."
        )


def counts_with_distance(distance: int, k: int, n_classes: int = 2) -> np.ndarray:
    """One vote-count row whose distance to instability is ``distance``.

    The margin is ``2·distance + 2`` (``2·distance + 1`` for odd ``k``), the largest
    margin with that distance, so that moving one vote from the top class to the
    runner-up lowers the corrected distance by exactly 1 and the printed distance
    ``max(0, M - 1)`` by 2.  The votes not in the top two classes are spread over the
    other classes, never above the runner-up.

    Parameters
    ----------
    distance : int
        Target distance ``d >= 0``.
    k : int
        Number of teachers.
    n_classes : int, default 2

    Returns
    -------
    numpy.ndarray of int64, shape (n_classes,)
    """
    d = int(distance)
    k = int(k)
    n_classes = int(n_classes)
    if d < 0 or n_classes < 2:
        raise ParameterError("distance must be >= 0 and n_classes >= 2.")
    margin = 2 * d + 2 if k % 2 == 0 else 2 * d + 1
    rest = k - margin
    if rest < 0:
        raise ParameterError(
            f"A distance of {d} needs at least {margin} teachers (a margin of {margin}), got k = {k}."
        )
    # rest votes: runner-up r and the other classes; top = r + margin.
    row = np.zeros(n_classes, dtype=np.int64)
    # as many votes as possible to the two top classes, the remainder (< 2) to a third
    r = rest // 2
    row[0] = r + margin
    row[1] = r
    left = rest - 2 * r
    if left:
        if n_classes < 3:
            raise ParameterError(f"k = {k} and distance {d} need a third class for the odd vote.")
        row[2] += left
    return row


def neighbouring_pairs(k: int, *, distance: int = 0, n_classes: int = 2, n_queries: int = 3) -> list[NeighbourPair]:
    """A catalogue of worst-case neighbouring vote-count pairs.

    Each pair differs by one teacher's vote (on one query, or on every query at once
    under replace-one adjacency).  Audits should include pairs whose distance to
    instability sits at the mechanism's threshold: pass ``distance`` near the
    threshold ``w`` (BTT) or ``Γ`` (A_stab).

    Parameters
    ----------
    k : int
        Number of teachers (the row sum).
    distance : int, default 0
        The distance to instability of the pivotal rows.
    n_classes : int, default 2
    n_queries : int, default 3
        Number of queries of the multi-query pairs.

    Returns
    -------
    list of NeighbourPair
        ``tie``: a tie against the top class losing one vote to the runner-up (the label
        flips at distance 0 on both sides); ``top_loses_vote``: distance ``d`` against
        ``d - 1`` (the top class loses a vote to the runner-up; the printed distance
        drops by 2); ``top_loses_to_third`` (three classes or more); ``all_queries_move``:
        every query's distance drops by 1; ``mixed_directions``: one query's distance
        drops, the next one's rises (the same teacher moves away from the top class on
        one query and to it on the other); ``answered_then_bottom``: ``n_queries - 1``
        queries lose a unit of distance and the last gains one.
    """
    k = int(k)
    d = max(0, int(distance))
    n_queries = max(2, int(n_queries))
    pairs: list[NeighbourPair] = []

    def row(dd: int) -> np.ndarray:
        return counts_with_distance(dd, k, n_classes)

    def moved(r: np.ndarray, src: int, dst: int) -> np.ndarray:
        r = r.copy()
        r[src] -= 1
        r[dst] += 1
        return r

    # tie: the plurality flips between neighbours
    tie = np.zeros(n_classes, dtype=np.int64)
    tie[0] = (k + 1) // 2
    tie[1] = k // 2
    pairs.append(NeighbourPair(
        "tie", tie[None, :], moved(tie, 0, 1)[None, :],
        "A tie (or a margin of 1): one teacher moving to the runner-up flips the plurality; distance 0 on both sides.",
    ))
    top = row(d + 1)
    pairs.append(NeighbourPair(
        "top_loses_vote", top[None, :], moved(top, 0, 1)[None, :],
        f"Distance {d + 1} against {d}: the top class loses one vote to the runner-up "
        "(the printed distance drops by 2).",
    ))
    if n_classes >= 3:
        pairs.append(NeighbourPair(
            "top_loses_to_third", top[None, :], moved(top, 0, 2)[None, :],
            "The top class loses one vote to a third class (the margin drops by 1).",
        ))
    a = np.tile(top, (n_queries, 1))
    b = np.tile(moved(top, 0, 1), (n_queries, 1))
    pairs.append(NeighbourPair(
        "all_queries_move", a, b,
        f"{n_queries} queries at distance {d + 1}; the changed teacher leaves the top class on every query.",
    ))
    hi, lo = row(d + 1), row(d)
    pairs.append(NeighbourPair(
        "mixed_directions", np.stack([hi, lo]), np.stack([moved(hi, 0, 1), moved(lo, 1, 0)]),
        f"Two queries: the first drops from distance {d + 1} to {d}, the second rises from {d} to {d + 1}.",
    ))
    a = np.vstack([np.tile(hi, (n_queries - 1, 1)), lo[None, :]])
    b = np.vstack([np.tile(moved(hi, 0, 1), (n_queries - 1, 1)), moved(lo, 1, 0)[None, :]])
    pairs.append(NeighbourPair(
        "answered_then_bottom", a, b,
        f"{n_queries - 1} queries lose a unit of distance, the last gains one (pins the noisy threshold).",
    ))
    for p in pairs:
        check_neighbouring_counts(p.a, p.b)
    return pairs


def soft_neighbouring_pairs(k: int, eta: float, *, distance: int = 0) -> list[NeighbourPair]:
    """Worst-case neighbouring teacher-score matrices (queries × teachers) for soft labels.

    Each pair differs in one teacher's column (that teacher's scores on all queries).

    Returns
    -------
    list of NeighbourPair
        ``adjacent_bins``: scores at the midpoints of two adjacent bins of ``P_η`` with
        the margin of distance ``d + 1``; one teacher moves from the top bin to the other.
        ``bin_edge``: scores just below and just above a bin edge (split on ``P_η``,
        together on the shifted bins); one teacher crosses the edge.  ``tie``: an even
        split between two bins; one teacher moves.  ``outer_half_bin``: a teacher moves
        from the outer half-bin (dropped by the shifted bins) into a kept bin.
    """
    from core.validation import check_eta

    eta, n_bins = check_eta(eta)
    k = int(k)
    d = max(0, int(distance))
    pairs: list[NeighbourPair] = []
    lo_mid, hi_mid = 0.5 / n_bins, 1.5 / n_bins  # midpoints of bins 0 and 1

    def column_pair(name, values_a, changed_a, changed_b, text):
        a = np.asarray(values_a, dtype=float)[None, :]
        b = a.copy()
        a[0, 0] = changed_a
        b[0, 0] = changed_b
        pairs.append(NeighbourPair(name, a, b, text))

    margin = 2 * (d + 1) + 2 if k % 2 == 0 else 2 * (d + 1) + 1
    margin = min(margin, k)
    n_top = (k + margin) // 2
    vals = np.array([lo_mid] * n_top + [hi_mid] * (k - n_top))
    column_pair("adjacent_bins", vals, lo_mid, hi_mid,
                f"Scores in two adjacent bins, margin {2 * n_top - k}; one teacher moves to the second bin.")
    edge = 1.0 / n_bins
    below, above = edge - 0.01 / n_bins, edge + 0.01 / n_bins
    vals = np.array([below] * ((k + 1) // 2) + [above] * (k // 2))
    column_pair("bin_edge", vals, below, above,
                "Scores straddling a bin edge: split on P_η, together on the shifted bins; one teacher crosses.")
    vals = np.array([lo_mid] * ((k + 1) // 2) + [hi_mid] * (k // 2))
    column_pair("tie", vals, lo_mid, hi_mid, "An even split between two bins; one teacher moves.")
    outer = 0.1 / n_bins
    vals = np.array([outer] * ((k + 1) // 2) + [lo_mid + 0.2 / n_bins] * (k // 2))
    column_pair("outer_half_bin", vals, outer, lo_mid + 0.2 / n_bins,
                "A teacher moves from the outer half-bin (not in the shifted bins) into a kept bin.")
    for p in pairs:
        check_neighbouring_scores(p.a, p.b)
    return pairs


# ----------------------------------------------------------------------------- samplers
#
# Trial-vectorized samplers of the library's mechanisms.  They use the same building
# blocks as core.mechanisms (distance from core.mechanisms.stability, noise from core.noise,
# calibration from core.accounting) and the same decision rules; the audit tests
# cross-check their output distribution against the real functions
# (RealAggregator + compare_samplers).


def _encode_soft(labels: np.ndarray, scores: np.ndarray, n_bins: int) -> np.ndarray:
    """Soft-label outputs as integers: a released score s ↦ round(2·s·n_bins) (bin
    midpoints are odd, shifted-bin midpoints even); ⊥ ↦ -1, not processed ↦ -2."""
    code = np.rint(np.nan_to_num(scores, nan=0.0) * 2 * n_bins).astype(np.int64)
    return np.where(labels >= 0, code, labels).astype(np.int64)


class BTTSampler:
    """Vectorized sampler of :func:`core.mechanisms.btt_label`.

    ``sampler(counts, n_trials, rng)`` returns the released label vectors, shape
    ``(n_trials, m)`` (class id, ``BOTTOM`` or ``UNPROCESSED``), each trial an
    independent run: threshold noise ``DLap(λ)`` per round and query noise ``DLap(2λ)``
    per query, compared as in :func:`core.mechanisms.sparse_vector_scan`.

    Parameters
    ----------
    epsilon, delta : float
    T : int
    calibration : {"paper", "tight"}
    distance : callable, optional
        Distance to instability (default :func:`core.mechanisms.stability.distance_to_instability`);
        the printed form here is the audit's teaching example of a leak.
    """

    name = "btt"

    def __init__(self, epsilon: float, delta: float, T: int, *, calibration: str = "paper", distance=None):
        from core.mechanisms.stability import distance_to_instability

        self.epsilon, self.delta, self.T, self.calibration = epsilon, delta, T, calibration
        self.distance = distance or distance_to_instability

    def calibration_for(self, m: int):
        """The :class:`core.accounting.BTTCalibration` for ``m`` queries."""
        from core.accounting.btt import calibrate_btt

        return calibrate_btt(self.epsilon, self.delta, self.T, m, self.calibration)

    def claim(self, counts) -> tuple[float, float]:
        """The (ε, δ) the real :func:`~core.mechanisms.btt_label` reports on ``counts``."""
        from core import pipeline

        r = pipeline.label(counts, "btt", {"epsilon": self.epsilon, "delta": self.delta, "T": self.T, "calibration": self.calibration}, rng=0)
        return r.epsilon, r.delta

    def __call__(self, counts, n_trials: int, rng) -> np.ndarray:
        from core.mechanisms.result import BOTTOM, UNPROCESSED
        from core.noise import discrete_laplace
        from core.mechanisms.stability import plurality

        counts = check_counts(counts)
        m = counts.shape[0]
        cal = self.calibration_for(m)
        gen = check_rng(rng)
        dist = self.distance(counts)
        top = plurality(counts)
        zt = discrete_laplace(cal.noise_scale, (n_trials, self.T), gen)
        zq = discrete_laplace(2.0 * cal.noise_scale, (n_trials, m), gen)
        thr = cal.threshold + zt
        rows = np.arange(n_trials)
        failures = np.zeros(n_trials, dtype=np.int64)
        out = np.empty((n_trials, m), dtype=np.int64)
        for i in range(m):
            alive = failures < self.T
            t = thr[rows, np.minimum(failures, self.T - 1)]
            passed = dist[i] + zq[:, i] > t
            out[:, i] = np.where(alive, np.where(passed, top[i], BOTTOM), UNPROCESSED)
            failures += alive & ~passed
        return out


class BTTSoftSampler:
    """Vectorized sampler of :func:`core.mechanisms.btt_soft_label`.

    Returns encoded outputs ``(n_trials, m)``: a released score ``s`` as
    ``round(2·s/η)``, ⊥ as -1, not processed as -2 (see :func:`_encode_soft`).
    """

    name = "btt-soft"

    def __init__(self, epsilon: float, delta: float, T: int, eta: float, *, calibration: str = "paper"):
        self.epsilon, self.delta, self.T, self.eta, self.calibration = epsilon, delta, T, eta, calibration

    def claim(self, scores) -> tuple[float, float]:
        from core import pipeline

        r = pipeline.label(scores, "btt-soft", {"epsilon": self.epsilon, "delta": self.delta, "T": self.T, "eta": self.eta, "calibration": self.calibration}, rng=0)
        return r.epsilon, r.delta

    def __call__(self, scores, n_trials: int, rng) -> np.ndarray:
        from core.accounting.btt import calibrate_btt
        from core.mechanisms.result import BOTTOM, UNPROCESSED
        from core.mechanisms.soft import soft_bin_histograms
        from core.noise import discrete_laplace
        from core.mechanisms.stability import distance_to_instability
        from core.validation import check_eta

        scores = check_scores(scores)
        _, n_bins = check_eta(self.eta)
        m = scores.shape[0]
        cal = calibrate_btt(self.epsilon, self.delta, self.T, m, self.calibration, soft=True)
        gen = check_rng(rng)
        hist, shifted = soft_bin_histograms(scores, self.eta)
        d1 = distance_to_instability(hist)
        d2 = distance_to_instability(shifted)
        code1 = 2 * np.argmax(hist, axis=1) + 1  # midpoint (b + 1/2)/n_bins, encoded
        code2 = 2 * np.argmax(shifted, axis=1) + 2  # midpoint (b + 1)/n_bins, encoded
        max_fail = 2 * self.T
        zt = discrete_laplace(cal.noise_scale, (n_trials, max_fail), gen)
        zq = discrete_laplace(2.0 * cal.noise_scale, (n_trials, m, 2), gen)
        thr = cal.threshold + zt
        rows = np.arange(n_trials)
        failures = np.zeros(n_trials, dtype=np.int64)
        out = np.empty((n_trials, m), dtype=np.int64)
        for i in range(m):
            alive = failures < max_fail
            pass1 = d1[i] + zq[:, i, 0] > thr[rows, np.minimum(failures, max_fail - 1)]
            fail1 = alive & ~pass1
            failures = failures + fail1
            can2 = fail1 & (failures < max_fail)
            pass2 = d2[i] + zq[:, i, 1] > thr[rows, np.minimum(failures, max_fail - 1)]
            ok2 = can2 & pass2
            failures = failures + (can2 & ~pass2)
            out[:, i] = np.where(
                ~alive, UNPROCESSED, np.where(pass1, code1[i], np.where(ok2, code2[i], BOTTOM))
            )
        return out


class LNMaxSampler:
    """Vectorized sampler of :func:`core.mechanisms.lnmax_label`: label vectors
    ``argmax_j (counts[i, j] + Lap(1/γ))``, shape ``(n_trials, m)``."""

    name = "lnmax"

    def __init__(self, gamma: float, *, delta: float = 1e-5):
        self.gamma, self.delta = gamma, delta

    def claim(self, counts) -> tuple[float, float]:
        from core import pipeline

        r = pipeline.label(counts, "lnmax", {"gamma": self.gamma, "delta": self.delta}, rng=0)
        return r.epsilon, r.delta

    def __call__(self, counts, n_trials: int, rng) -> np.ndarray:
        from core.noise import laplace

        counts = check_counts(counts)
        noisy = counts[None, :, :] + laplace(1.0 / self.gamma, (n_trials,) + counts.shape, check_rng(rng))
        return np.argmax(noisy, axis=2).astype(np.int64)


class AStabSampler:
    """Vectorized sampler of :func:`core.mechanisms.a_stab_label` (``baseline=False``)
    or :func:`core.mechanisms.composition_baseline_label` (``baseline=True``): each
    query independently, ``dist + DLap(1/ε0) > Γ`` releases the plurality, else ⊥.

    Parameters
    ----------
    epsilon, delta : float
    baseline : bool
        Per-query parameters of the composition baseline (DESIGN §3.5) instead of A_stab's.
    distance : callable, optional
        Distance to instability; the printed form is the teaching example of a leak.
    """

    def __init__(self, epsilon: float, delta: float, *, baseline: bool = False, distance=None):
        from core.mechanisms.stability import distance_to_instability

        self.epsilon, self.delta, self.baseline = epsilon, delta, baseline
        self.distance = distance or distance_to_instability
        self.name = "baseline" if baseline else "a-stab"

    def parameters(self, m: int) -> tuple[float, float]:
        """Per-query ``(ε0, Γ)``."""
        from core.accounting.baseline import a_stab_threshold, composition_baseline_parameters

        if self.baseline:
            par = composition_baseline_parameters(self.epsilon, self.delta, m)
            return par.eps0, par.threshold
        return float(self.epsilon), a_stab_threshold(self.epsilon, self.delta)

    def claim(self, counts) -> tuple[float, float]:
        from core import pipeline

        r = pipeline.label(counts, "baseline" if self.baseline else "a-stab", {"epsilon": self.epsilon, "delta": self.delta}, rng=0)
        return r.epsilon, r.delta

    def __call__(self, counts, n_trials: int, rng) -> np.ndarray:
        from core.mechanisms.result import BOTTOM
        from core.noise import discrete_laplace
        from core.mechanisms.stability import plurality

        counts = check_counts(counts)
        eps0, gamma_thr = self.parameters(counts.shape[0])
        z = discrete_laplace(1.0 / eps0, (n_trials, counts.shape[0]), check_rng(rng))
        passed = self.distance(counts)[None, :] + z > gamma_thr
        return np.where(passed, plurality(counts)[None, :], BOTTOM).astype(np.int64)


class RealAggregator:
    """Audit adapter that calls a real :mod:`core.mechanisms` function once per trial.

    Slow (one call per trial) but it tests the library's code itself.  Outputs are the
    released label vectors ``(n_trials, m)``; for ``btt_soft`` the encoded scores as in
    :class:`BTTSoftSampler`.

    Parameters
    ----------
    mechanism : str
        A registered mechanism (:mod:`core.mechanisms.registry`).
    **params
        The function's parameters other than the input and ``rng``.
    """

    def __init__(self, mechanism: str, **params):
        from core import pipeline

        self.name = mechanism
        self.params = params
        self.fn = lambda inp, rng: pipeline.label(inp, mechanism, params, rng=rng)

    def claim(self, inp) -> tuple[float, float]:
        r = self.fn(inp, rng=0)
        return r.epsilon, r.delta

    def __call__(self, inp, n_trials: int, rng) -> np.ndarray:
        gen = check_rng(rng)
        rows = []
        n_bins = None
        if self.name == "btt-soft":
            from core.validation import check_eta

            n_bins = check_eta(self.params["eta"])[1]
        for _ in range(n_trials):
            r = self.fn(inp, rng=gen)
            rows.append(_encode_soft(r.labels, r.scores, n_bins) if n_bins else r.labels)
        return np.asarray(rows, dtype=np.int64).reshape(n_trials, -1)


@dataclass(frozen=True)
class SamplerComparison:
    """Two-sample chi-square test that two samplers draw from one output distribution.

    Attributes
    ----------
    statistic, dof, p_value : float
        Pearson chi-square statistic of homogeneity, its degrees of freedom and p-value
        (outputs with fewer than 10 expected trials pooled into one category).
    total_variation : float
        Empirical total-variation distance between the two output histograms.
    n_trials : int
        Trials per sampler.
    """

    statistic: float
    dof: int
    p_value: float
    total_variation: float
    n_trials: int


def compare_samplers(fast, real, inp, n_trials: int, rng: RNGLike = None) -> SamplerComparison:
    """Chi-square test of homogeneity between two samplers' outputs on one input.

    Under the null hypothesis (same distribution) ``p_value`` is (asymptotically)
    uniform, so rejecting at ``p_value < α`` fails falsely with probability ``α``.
    """
    gen = check_rng(rng)
    x = hash_rows(np.asarray(fast(inp, n_trials, gen)).reshape(n_trials, -1))
    y = hash_rows(np.asarray(real(inp, n_trials, gen)).reshape(n_trials, -1))
    values, inv = np.unique(np.concatenate([x, y]), return_inverse=True)
    cx = np.bincount(inv[:n_trials], minlength=values.size).astype(float)
    cy = np.bincount(inv[n_trials:], minlength=values.size).astype(float)
    tv = 0.5 * float(np.abs(cx - cy).sum()) / n_trials
    small = (cx + cy) / 2.0 < 10
    table = np.stack([cx[~small], cy[~small]], axis=0)
    if small.any():
        table = np.concatenate([table, [[cx[small].sum()], [cy[small].sum()]]], axis=1)
    table = table[:, table.sum(axis=0) > 0]
    if table.shape[1] < 2:
        return SamplerComparison(0.0, 0, 1.0, tv, n_trials)
    res = stats.chi2_contingency(table, correction=False)
    return SamplerComparison(float(res.statistic), int(res.dof), float(res.pvalue), tv, n_trials)


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


def audit_mechanisms() -> dict[str, dict[str, Any]]:
    """The mechanisms the audit offers, from the registry: name → label and settings.

    Every registered mechanism with an audit scenario is offered; the settings are its
    ``audit_defaults`` (values at which the audit has power).
    """
    from core.mechanisms import registry

    out: dict[str, dict[str, Any]] = {}
    for name in registry.names():
        mech = registry.get(name)
        if mech.audit is not None:
            out[name] = {"label": mech.title, "params": tuple(mech.audit_defaults), "defaults": dict(mech.audit_defaults)}
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
    used = {k: v for k, v in settings.items() if k in mech.audit_defaults and v is not None}
    return mech.audit(pair=pair, **{**mech.audit_defaults, **used})


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
            thr = composition_baseline_parameters(epsilon, delta, n_q).threshold
            d = int(math.floor(thr))
            pairs = neighbouring_pairs(_even_k(2 * d + 4), distance=d - 1, n_queries=n_q)
            sampler = AStabSampler(epsilon, delta, baseline=True)
        else:
            thr = a_stab_threshold(epsilon, delta)
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
        w = calibrate_btt(epsilon, delta, T, n_q, calibration).threshold
        d = int(round(w)) if mechanism == "btt" else max(0, int(round((w - 2) / 2)))
        pairs = neighbouring_pairs(_even_k(2 * d + 6), distance=d, n_queries=n_q)
        sampler = (BTTSampler(epsilon, delta, T, calibration=calibration) if mechanism == "btt"
                   else teaching_printed_distance_btt(epsilon, delta, T, calibration))
    elif mechanism == "btt-soft":
        epsilon, delta, T = check_epsilon(epsilon), check_delta(delta), check_T(T)
        settings = {"epsilon": epsilon, "delta": delta, "T": T, "eta": eta, "calibration": calibration}
        w = calibrate_btt(epsilon, delta, T, 1, calibration, soft=True).threshold
        d = int(round(w))
        pairs = soft_neighbouring_pairs(_even_k(2 * d + 6), eta, distance=d)
        sampler = BTTSoftSampler(epsilon, delta, T, eta, calibration=calibration)
    else:  # lnmax
        gamma = check_gamma(gamma)
        settings = {"gamma": gamma}
        pairs = neighbouring_pairs(40, distance=0)
        sampler = LNMaxSampler(gamma)
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
    if mechanism not in offered or registry.get(mechanism).audit_pairs is None:
        raise ParameterError(
            f"Unknown mechanism {mechanism!r}; choose one of {sorted(offered) + sorted(TEACHING_MECHANISMS)}."
        )
    return registry.get(mechanism).audit_pairs()


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
