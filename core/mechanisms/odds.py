"""Each built-in mechanism's test as a picture: the statistic it reads, the line, the odds, the bound.

The registry entries of :mod:`core.mechanisms.builtin` declare a
:class:`core.mechanisms.registry.TestPicture` whose callables are the functions here,
selected by the mechanism's name.  For every query of a run they give

* the statistic the mechanism's test reads (BTT, A_stab and the baseline: the distance to
  instability; Confident-GNMax and its certified variant: the top vote count; LNMax and
  GNMax, which answer everything: the gap between the top two counts; soft labels: the
  distance to instability of the η-bin histogram of the teachers' scores);
* the line on that axis (w, Γ, t, or for the noisy maxima the gap at which the noise
  swaps the top two answers with probability 5 %);
* the analytic probability that the query is answered, and answered with a given label,
  when it is processed on its own at the run's noise (the sparse-vector mechanisms: at the
  start of a round, with a freshly drawn threshold noise);
* one query drawn through the mechanism's own noise (:mod:`core.noise`), as many times
  as asked;
* the mechanism's own explicit bound with its constants, as shares of the queries.

All of it reads vote counts or scores: NON-PRIVATE teaching views, never exported.

References
----------
.. [BTT18] R. Bassily, O. Thakkar, A. Thakurta. Model-Agnostic Private Learning. NeurIPS 2018
   (Theorems 2.4, 2.5, 3.2).
.. [PATE17] N. Papernot, M. Abadi, Ú. Erlingsson, I. Goodfellow, K. Talwar. Semi-supervised
   Knowledge Transfer for Deep Learning from Private Training Data. ICLR 2017 (Theorem 3).
.. [PATE18] N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar, Ú. Erlingsson.
   Scalable Private Learning with PATE. ICLR 2018 (Algorithm 1, Proposition 7).
"""

from __future__ import annotations

from dataclasses import dataclass

import math
from typing import Any, Mapping

import numpy as np
from scipy import optimize, special, stats

from core import noise
from core.errors import ParameterError
from core.mechanisms.result import BOTTOM

__all__ = [
    "OneDraw",
    "draw_once",
    "noisy_argmax_probabilities",
    "flip_gap",
    "values",
    "threshold",
    "odds",
    "draw",
    "bound_rates",
    "bound_conditions",
    "NAMES",
]

NAMES = ("btt", "btt-soft", "lnmax", "baseline", "a-stab", "gnmax", "confident-gnmax", "certified-gnmax")
"""The mechanisms whose pictures live here."""

_DISTANCE = ("btt", "a-stab", "baseline")
_CONFIDENT = ("confident-gnmax", "certified-gnmax")
_FLIP = ("lnmax", "gnmax")


def _check(name: str) -> str:
    if name not in NAMES:
        raise ParameterError(f"No built-in picture for {name!r}; it has {', '.join(NAMES)}.")
    return name


def _counts(votes) -> np.ndarray:
    counts = np.asarray(votes)
    if counts.ndim == 1:
        counts = counts[None, :]
    return counts


def _top_two(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = np.sort(counts, axis=1)
    second = s[:, -2] if counts.shape[1] > 1 else np.zeros(counts.shape[0], dtype=s.dtype)
    return s[:, -1], second


def _distance(counts: np.ndarray) -> np.ndarray:
    from core.mechanisms.stability import plurality_and_distance_unchecked

    return plurality_and_distance_unchecked(np.asarray(counts, dtype=np.int64))[1].astype(float)


def _soft_hists(scores, params: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    from core.mechanisms.soft import soft_bin_histograms

    scores = np.asarray(scores, dtype=float)
    if scores.ndim == 1:
        scores = scores[None, :]
    return soft_bin_histograms(scores, float(params["eta"]))


# ----------------------------------------------------------------------------- noisy argmax


def _log_cdf_pdf(kind: str, z: np.ndarray, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """``log F(z)`` and ``f(z)`` of Laplace(scale) or N(0, scale²) noise."""
    u = z / scale
    if kind == "laplace":
        log_cdf = np.where(u < 0, u - math.log(2.0), np.log1p(-0.5 * np.exp(-np.abs(u))))
        return log_cdf, np.exp(-np.abs(u)) / (2.0 * scale)
    return special.log_ndtr(u), np.exp(-0.5 * u * u) / (scale * math.sqrt(2.0 * math.pi))


def noisy_argmax_probabilities(counts, *, kind: str, scale: float, grid: int = 2001) -> np.ndarray:
    """``P[argmax_c (n_c + Z_c) = j]`` for independent continuous noise ``Z_c``.

    ``P_j = ∫ f(x − n_j) Π_{i≠j} F(x − n_i) dx`` (f, F the noise's density and
    distribution), integrated with the trapezoid rule on a grid over
    ``[min n − R s, max n + R s]`` (R = 40 scales for Laplace, 10 for Gaussian: the mass left
    out is below 1e-17), then normalised to sum to one (it differs from one by the grid's
    error only).  Two classes are checked against the closed forms in the tests.

    Parameters
    ----------
    counts : array-like, shape (m, c) or (c,)
        Vote counts.
    kind : {"laplace", "gaussian"}
        LNMax's ``Lap(1/γ)`` or GNMax's ``N(0, σ²)``.
    scale : float
        ``1/γ`` or σ.
    grid : int
        Grid points.

    Returns
    -------
    ndarray, shape (m, c)
    """
    counts = _counts(counts).astype(float)
    if kind not in ("laplace", "gaussian"):
        raise ParameterError(f"kind must be 'laplace' or 'gaussian', got {kind!r}.")
    scale = float(scale)
    if not scale > 0:
        raise ParameterError(f"The noise scale must be positive, got {scale!r}.")
    reach = 40.0 if kind == "laplace" else 10.0
    out = np.empty_like(counts)
    t = np.linspace(0.0, 1.0, grid)
    chunk = max(1, 2_000_000 // (grid * counts.shape[1]))
    for start in range(0, counts.shape[0], chunk):
        rows = counts[start:start + chunk]  # (r, c)
        lo = rows.min(axis=1) - reach * scale
        hi = rows.max(axis=1) + reach * scale
        x = lo[:, None] + (hi - lo)[:, None] * t[None, :]  # (r, grid)
        log_cdf, pdf = _log_cdf_pdf(kind, x[:, :, None] - rows[:, None, :], scale)  # (r, grid, c)
        dens = pdf * np.exp(log_cdf.sum(axis=2, keepdims=True) - log_cdf)
        p = np.trapezoid(dens, x[:, :, None], axis=1)  # (r, c)
        out[start:start + chunk] = p / p.sum(axis=1, keepdims=True)
    return out


def flip_gap(kind: str, scale: float, level: float = 0.05) -> float:
    """The gap between two counts at which the noise swaps them with probability ``level``.

    Gaussian: ``P[Z1 − Z2 > g] = Φ(−g/(σ√2))``; Laplace with scale b:
    ``P[Z1 − Z2 > g] = (1 + g/(2b)) e^{−g/b} / 2`` (both exact).

    Parameters
    ----------
    kind : {"laplace", "gaussian"}
    scale : float
        b = 1/γ or σ.
    level : float
        The swap probability, in (0, 1/2).

    Returns
    -------
    float
    """
    if not 0.0 < level < 0.5:
        raise ParameterError(f"level must be in (0, 1/2), got {level!r}.")
    if kind == "gaussian":
        return float(-stats.norm.ppf(level) * scale * math.sqrt(2.0))
    return float(optimize.brentq(lambda g: 0.5 * (1.0 + g / (2.0 * scale)) * math.exp(-g / scale) - level,
                                 0.0, 100.0 * scale))


def _pairwise_flip(kind: str, scale: float, gaps: np.ndarray) -> np.ndarray:
    """Exact ``P[Z_j − Z_top > Δ]`` for a gap Δ ≥ 0 between the top count and count j."""
    gaps = np.asarray(gaps, dtype=float)
    if kind == "gaussian":
        return 0.5 * special.erfc(gaps / (2.0 * scale))
    g = gaps / scale
    return (2.0 + g) / (4.0 * np.exp(g))


# ----------------------------------------------------------------------------- statistic, line


def values(name: str, votes, params: Mapping[str, Any]) -> np.ndarray:
    """The statistic the mechanism's test reads, one value per query.

    Parameters
    ----------
    name : str
        A built-in mechanism (:data:`NAMES`).
    votes : array-like
        Counts ``(m, c)`` (scores ``(m, k)`` for ``btt-soft``).
    params : mapping
        A run's public parameters (``LabelingResult.params``).

    Returns
    -------
    ndarray of float, shape (m,)
    """
    name = _check(name)
    if name == "btt-soft":
        hist, _ = _soft_hists(votes, params)
        return _distance(hist)
    counts = _counts(votes)
    if name in _DISTANCE:
        return _distance(counts)
    top, second = _top_two(counts)
    if name in _CONFIDENT:
        return top.astype(float)
    return (top - second).astype(float)


def _flip_noise(name: str, params: Mapping[str, Any]) -> tuple[str, float]:
    if name == "lnmax":
        return "laplace", 1.0 / float(params["gamma"])
    if name == "gnmax":
        return "gaussian", float(params["sigma"])
    return "gaussian", float(params["sigma2"])


def threshold(name: str, params: Mapping[str, Any], level: float = 0.05) -> float:
    """The line on the statistic's axis: w, Γ, t, or the 5 % swap gap of a noisy max.

    Parameters
    ----------
    name : str
    params : mapping
        A run's public parameters.
    level : float
        The swap probability placing the line of LNMax and GNMax.

    Returns
    -------
    float
    """
    name = _check(name)
    if name in _FLIP:
        return flip_gap(*_flip_noise(name, params), level)
    return float(params["threshold"])


# ----------------------------------------------------------------------------- odds


def _dlap_pass(distance: np.ndarray, params: Mapping[str, Any]) -> np.ndarray:
    lam = float(params["noise_scale"])
    return noise.difference_tail(2.0 * lam, lam, float(params["threshold"]) - np.asarray(distance, dtype=float))


def _a_stab_pass(name: str, distance: np.ndarray, params: Mapping[str, Any]) -> np.ndarray:
    eps = float(params["eps0"] if name == "baseline" else params["epsilon_per_query"])
    return np.asarray(noise.discrete_laplace_tail(1.0 / eps, float(params["threshold"]) - distance), dtype=float)


def odds(name: str, votes, params: Mapping[str, Any], truth=None) -> tuple[np.ndarray, np.ndarray | None]:
    """Each query's analytic probability of being answered, and of being answered right.

    A query is processed on its own at the run's noise: BTT's test ``d + DLap(2λ) >
    w + DLap(λ)`` with a fresh threshold noise (:func:`core.noise.difference_tail`);
    soft labels ``p1 + (1 − p1) p2`` (the shifted bins' test after a failed first test);
    A_stab and the baseline ``P[d + DLap(1/ε) > Γ]``; Confident-GNMax
    ``Φ((n_top − t)/σ1)`` (the certified variant's per-query step once its certificate
    passed); LNMax and GNMax answer every query.  "Right" means the released label
    equals ``truth`` (soft labels: the released score is within 1/2 of it): the
    plurality for the stability tests, the noisy argmax's exact probability
    (:func:`noisy_argmax_probabilities`) for the noisy maxima.

    Parameters
    ----------
    name, votes, params
        As for :func:`values`.
    truth : array-like of int, optional
        The queries' true labels (NON-PRIVATE teaching data).

    Returns
    -------
    p_answered : ndarray (m,)
    p_correct : ndarray (m,) or None
    """
    name = _check(name)
    truth = None if truth is None else np.atleast_1d(np.asarray(truth, dtype=np.int64))
    if name == "btt-soft":
        hist, shifted = _soft_hists(votes, params)
        n_bins = hist.shape[1]
        p1 = _dlap_pass(_distance(hist), params)
        p2 = _dlap_pass(_distance(shifted), params)
        answered = p1 + (1.0 - p1) * p2
        if truth is None:
            return answered, None
        mid1 = (np.argmax(hist, axis=1) + 0.5) / n_bins
        mid2 = (np.argmax(shifted, axis=1) + 1.0) / n_bins
        right1 = np.abs(mid1 - truth) < 0.5
        right2 = np.abs(mid2 - truth) < 0.5
        return answered, p1 * right1 + (1.0 - p1) * p2 * right2
    counts = _counts(votes)
    if name in _DISTANCE:
        d = _distance(counts)
        answered = _dlap_pass(d, params) if name == "btt" else _a_stab_pass(name, d, params)
        if truth is None:
            return answered, None
        return answered, answered * (np.argmax(counts, axis=1) == truth)
    if name in _CONFIDENT:
        answered = stats.norm.cdf((counts.max(axis=1) - float(params["threshold"])) / float(params["sigma1"]))
    else:
        answered = np.ones(counts.shape[0])
    if truth is None:
        return answered, None
    kind, scale = _flip_noise(name, params)
    probs = noisy_argmax_probabilities(counts, kind=kind, scale=scale)
    return answered, answered * probs[np.arange(counts.shape[0]), truth]


# ----------------------------------------------------------------------------- one query, drawn


def draw(name: str, votes_row, params: Mapping[str, Any], draws: int, rng=None) -> tuple[np.ndarray, np.ndarray | None]:
    """One query processed ``draws`` times, independently, through the mechanism's own noise.

    The per-query mechanisms run their labeling function on the query repeated ``draws``
    times at the run's noise parameters (LNMax's γ, GNMax's σ, Confident-GNMax's t, σ1,
    σ2, A_stab's ε and δ, the baseline's per-query ε0 and δ0: each query is answered
    independently, so the rows are independent draws).  The sparse-vector mechanisms run
    their test at the start of a round, with a fresh threshold noise every draw: BTT
    ``d + DLap(2λ) > w + DLap(λ)`` (:func:`core.mechanisms.btt.btt_label`'s test for the
    first query of a round), soft labels that test on the η-bins and, on a failure, on
    the shifted bins.

    Parameters
    ----------
    name : str
    votes_row : array-like
        One query's counts ``(c,)`` (scores ``(k,)`` for ``btt-soft``).
    params : mapping
        A run's public parameters.
    draws : int
        Number of independent draws.
    rng : Generator, int or None
        See :func:`core.noise.check_rng`.

    Returns
    -------
    labels : ndarray of int (draws,)
        The released class or :data:`core.mechanisms.BOTTOM`.
    scores : ndarray (draws,) or None
        Soft labels' released scores (NaN where ⊥).
    """
    name = _check(name)
    draws = int(draws)
    if draws < 1:
        raise ParameterError(f"draws must be at least 1, got {draws!r}.")
    gen = noise.check_rng(rng)
    row = np.asarray(votes_row)
    if name == "btt-soft":
        hist, shifted = _soft_hists(row, params)
        n_bins = hist.shape[1]
        d1, d2 = _distance(hist)[0], _distance(shifted)[0]
        lam, w = float(params["noise_scale"]), float(params["threshold"])
        pass1 = d1 + noise.discrete_laplace(2.0 * lam, draws, gen) > w + noise.discrete_laplace(lam, draws, gen)
        pass2 = d2 + noise.discrete_laplace(2.0 * lam, draws, gen) > w + noise.discrete_laplace(lam, draws, gen)
        mid1 = (np.argmax(hist[0]) + 0.5) / n_bins
        mid2 = (np.argmax(shifted[0]) + 1.0) / n_bins
        scores = np.where(pass1, mid1, np.where(pass2, mid2, np.nan))
        return np.where(np.isnan(scores), BOTTOM, 1).astype(np.int64), scores
    counts = np.repeat(_counts(row), draws, axis=0)
    if name == "btt":
        lam, w = float(params["noise_scale"]), float(params["threshold"])
        d = _distance(counts[:1])[0]
        passed = d + noise.discrete_laplace(2.0 * lam, draws, gen) > w + noise.discrete_laplace(lam, draws, gen)
        return np.where(passed, int(np.argmax(counts[0])), BOTTOM).astype(np.int64), None
    if name in ("a-stab", "baseline"):
        from core.mechanisms.a_stab import a_stab_label

        if name == "baseline":
            eps, dlt = float(params["eps0"]), float(params["delta0"])
        else:
            eps, dlt = float(params["epsilon_per_query"]), float(params["delta_per_query"])
        return a_stab_label(counts, epsilon=eps, delta=dlt, rng=gen).labels, None
    if name == "lnmax":
        from core.mechanisms.lnmax import lnmax_label

        return lnmax_label(counts, gamma=float(params["gamma"]), delta=float(params["delta_target"]), rng=gen).labels, None
    from core.mechanisms.gaussian import confident_gnmax_label, gnmax_label

    if name == "gnmax":
        return gnmax_label(counts, sigma=float(params["sigma"]), delta=float(params["delta_target"]), rng=gen).labels, None
    return confident_gnmax_label(counts, threshold=float(params["threshold"]), sigma1=float(params["sigma1"]),
                                 sigma2=float(params["sigma2"]), delta=float(params["delta_target"]), rng=gen).labels, None


@dataclass(frozen=True)
class OneDraw:
    """One query processed once, with the noise that was drawn shown (a teaching view).

    Attributes
    ----------
    mechanism : str
        The built-in mechanism that drew it.
    label : int
        The released class, or :data:`core.mechanisms.BOTTOM`.
    score : float or None
        Soft labels' released score.
    tests : tuple of (str, float, float, float, float, bool)
        Each noisy test: ``(what, value, value_noise, line, line_noise, passed)``: passed
        when ``value + value_noise`` exceeds (or, for Confident-GNMax, reaches)
        ``line + line_noise``.
    counts, noise : numpy.ndarray or None
        For a noisy maximum: the vote counts and the noise added to each class's count
        (the released class is the largest sum).
    """

    mechanism: str
    label: int
    score: float | None
    tests: tuple
    counts: np.ndarray | None
    noise: np.ndarray | None


def draw_once(name: str, votes_row, params: Mapping[str, Any], rng=None) -> OneDraw:
    """:func:`draw` with ``draws=1``, keeping the noise: the same noise, in the same order, as it draws.

    So, from the same generator state, the released label is the one ``draw(name, row,
    params, 1, rng)`` gives; here each noise value is kept to be shown.

    Parameters
    ----------
    name, votes_row, params, rng
        As for :func:`draw` (one draw, from the same generator state).

    Returns
    -------
    OneDraw
    """
    name = _check(name)
    gen = noise.check_rng(rng)
    row = np.asarray(votes_row)
    if name == "btt-soft":
        hist, shifted = _soft_hists(row, params)
        n_bins = hist.shape[1]
        d1, d2 = float(_distance(hist)[0]), float(_distance(shifted)[0])
        lam, w = float(params["noise_scale"]), float(params["threshold"])
        z = [float(noise.discrete_laplace(sc, 1, gen)[0]) for sc in (2.0 * lam, lam, 2.0 * lam, lam)]
        pass1, pass2 = d1 + z[0] > w + z[1], d2 + z[2] > w + z[3]
        tests = (("distance to instability of the score bins", d1, z[0], w, z[1], bool(pass1)),
                 ("distance of the shifted bins", d2, z[2], w, z[3], bool(pass2)))
        score = (np.argmax(hist[0]) + 0.5) / n_bins if pass1 else (np.argmax(shifted[0]) + 1.0) / n_bins if pass2 else None
        return OneDraw(name, BOTTOM if score is None else 1, None if score is None else float(score), tests, None, None)
    counts = _counts(row)
    top = int(np.argmax(counts[0]))
    if name in _DISTANCE:
        d = float(_distance(counts)[0])
        if name == "btt":
            lam, w = float(params["noise_scale"]), float(params["threshold"])
            z1 = float(noise.discrete_laplace(2.0 * lam, 1, gen)[0])
            z2 = float(noise.discrete_laplace(lam, 1, gen)[0])
        else:
            from core import accounting

            if name == "baseline":
                eps, dlt = float(params["eps0"]), float(params["delta0"])
            else:
                eps, dlt = float(params["epsilon_per_query"]), float(params["delta_per_query"])
            w, z2 = float(accounting.a_stab_threshold(eps, delta=dlt)), 0.0
            z1 = float(noise.discrete_laplace(1.0 / eps, 1, gen)[0])
        passed = d + z1 > w + z2
        return OneDraw(name, top if passed else BOTTOM, None,
                       (("distance to instability", d, z1, w, z2, bool(passed)),), None, None)
    if name == "lnmax":
        z = noise.laplace(1.0 / float(params["gamma"]), counts.shape, gen)[0]
        return OneDraw(name, int(np.argmax(counts[0] + z)), None, (), counts[0].astype(float), np.asarray(z, float))
    if name == "gnmax":
        z = noise.gaussian(float(params["sigma"]), counts.shape, gen)[0]
        return OneDraw(name, int(np.argmax(counts[0] + z)), None, (), counts[0].astype(float), np.asarray(z, float))
    t = float(params["threshold"])
    z1 = float(noise.gaussian(float(params["sigma1"]), 1, gen)[0])
    z = noise.gaussian(float(params["sigma2"]), counts.shape, gen)[0]
    passed = float(counts[0].max()) + z1 >= t
    return OneDraw(name, int(np.argmax(counts[0] + z)) if passed else BOTTOM, None,
                   (("top vote count", float(counts[0].max()), z1, t, 0.0, bool(passed)),),
                   counts[0].astype(float), np.asarray(z, float))


# ----------------------------------------------------------------------------- explicit bounds


def _worst_error_above(counts: np.ndarray, truth: np.ndarray) -> float:
    """An upper bound on the worst teacher's error read from vote counts alone.

    A teacher errs only on a query where at least one teacher voted for another class, so
    every teacher's error is at most the share of such queries (the counts do not say which
    teacher erred where; the bound is never below the true worst error)."""
    k = counts.sum(axis=1)
    return float(np.mean(counts[np.arange(counts.shape[0]), truth] < k))


def bound_conditions(name: str, votes, params: Mapping[str, Any], truth, beta: float = 0.05):
    """The conditions of a mechanism's conditional bound, checked for one run; None when its bounds have none.

    Only ``btt``'s error bound is conditional: BTT Theorem 3.2 needs two classes, the run's
    cutoff T at least the theorem's cutoff for the teachers' error, k at least Algorithm 2's
    number of teachers at that T, and ``T/m < 1``
    (:func:`core.accounting.btt_theorem.theorem_32_conditions`).  The theorem asks every teacher to err at
    most e; vote counts do not say which teacher erred, so e is the share of queries with at
    least one dissenting vote, an upper bound on the worst teacher's error (NON-PRIVATE:
    it reads the true labels).  Every other explicit bound (⊥ ≤ T/m, BTT Theorem 2.5, PATE's
    Theorem 3 and Proposition 7, the exact ⊥ share of Confident-GNMax) holds at every
    setting.

    Parameters
    ----------
    name : str
    votes : array-like
    params : mapping
        A run's public parameters (``T``, ``epsilon_target``, ``delta_target``).
    truth : array-like of int
    beta : float

    Returns
    -------
    core.theory.Theorem32Check or None
    """
    name = _check(name)
    if name != "btt":
        return None
    from core.accounting.btt_theorem import theorem_32_conditions

    counts = _counts(votes)
    truth = np.atleast_1d(np.asarray(truth, dtype=np.int64))
    return theorem_32_conditions(teacher_error=_worst_error_above(counts, truth), k=int(counts[0].sum()),
                                 T=int(params["T"]), m=int(counts.shape[0]), epsilon=float(params["epsilon_target"]),
                                 delta=float(params["delta_target"]), beta=float(beta), n_classes=int(counts.shape[1]))


def bound_rates(name: str, votes, params: Mapping[str, Any], truth, beta: float = 0.05) -> dict[str, float] | None:
    """The mechanism's own explicit bounds with their constants, as shares of the queries.

    * ``btt``: wrong ≤ Theorem 3.2's ``T/m``, only where the theorem's conditions hold for
      the run (:func:`bound_conditions`: two classes, T and k large enough; then with
      probability ≥ 1 − 2β); ⊥ ≤ T/m by construction, at every setting.
    * ``btt-soft``: ⊥ ≤ T/m by construction (no error bound with constants).
    * ``a-stab``, ``baseline`` (Theorem 2.5): a query with ``d ≥ (log(1/δ) + log(1/β))/ε`` is
      answered with probability ≥ 1 − β, so expected ⊥ ≤ share(d below it) + β·share(above);
      wrong ≤ share of queries whose plurality is wrong (they release only the plurality).
    * ``lnmax`` (PATE 2017, Theorem 3): ``P[answer ≠ plurality] ≤ Σ_j (2 + γΔ_j)/(4e^{γΔ_j})``.
    * ``gnmax`` (PATE 2018, Proposition 7): ``P[answer ≠ plurality] ≤ Σ_j ½ erfc(Δ_j/(2σ))``.
    * ``confident-gnmax``: ⊥ = mean ``Φ((t − n_top)/σ1)`` (exact); wrong ≤ mean
      ``P[answered]·min(1, [plurality wrong] + Σ_j ½ erfc(Δ_j/(2σ2)))``.
    * ``certified-gnmax``: None (the certificate releases the whole batch or nothing).

    For the noisy maxima, wrong ≤ mean over queries of ``min(1, [plurality wrong] + bound)``.

    Parameters
    ----------
    name, votes, params
        As for :func:`values`.
    truth : array-like of int
        True labels (NON-PRIVATE teaching data).
    beta : float
        Failure probability of the theorems that have one.

    Returns
    -------
    dict or None
        Some of ``{"wrong": …, "⊥": …}``; None when no explicit bound is known.
    """
    name = _check(name)
    if name == "certified-gnmax":
        return None
    truth = np.atleast_1d(np.asarray(truth, dtype=np.int64))
    if name == "btt-soft":
        return {"⊥": min(1.0, float(params["T"]) / len(truth))}
    counts = _counts(votes)
    m = counts.shape[0]
    plurality_wrong = np.argmax(counts, axis=1) != truth
    if name == "btt":
        out = {"⊥": min(1.0, float(params["T"]) / m)}
        check = bound_conditions(name, counts, params, truth, beta)
        if check.holds:
            out["wrong"] = float(check.bound)
        return out
    if name in ("a-stab", "baseline"):
        if name == "baseline":
            eps, dlt = float(params["eps0"]), float(params["delta0"])
        else:
            eps, dlt = float(params["epsilon_per_query"]), float(params["delta_per_query"])
        safe = _distance(counts) >= (math.log(1.0 / dlt) + math.log(1.0 / beta)) / eps
        return {"⊥": float(np.mean(np.where(safe, beta, 1.0))), "wrong": float(np.mean(plurality_wrong))}
    kind, scale = _flip_noise(name, params)
    top = counts.max(axis=1, keepdims=True)
    gaps = (top - counts).astype(float)
    pair = _pairwise_flip(kind, scale, gaps)
    pair[np.arange(m), np.argmax(counts, axis=1)] = 0.0
    flip = np.minimum(1.0, plurality_wrong + pair.sum(axis=1))
    if name in _FLIP:
        return {"wrong": float(np.mean(flip))}
    answered, _ = odds(name, counts, params)
    return {"wrong": float(np.mean(answered * flip)), "⊥": float(np.mean(1.0 - answered))}
