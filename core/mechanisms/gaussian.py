"""Gaussian noisy-max aggregators of PATE 2018: GNMax and Confident-GNMax (docs/design.md §8).

Both take the teachers' vote counts (queries × classes), keyword-only privacy parameters
and ``rng``, and return a :class:`core.mechanisms.LabelingResult` whose
``epsilon``/``delta`` is the *data-independent* guarantee under replace-one adjacency
(docs/design.md §1), computed in Rényi DP by :mod:`core.accounting.rdp`.

:func:`gnmax_label`
    ``argmax_c(counts[i, c] + N(0, σ²))`` on every query.
:func:`confident_gnmax_label`
    A noisy threshold test on the top count, then GNMax on the queries that pass, ⊥ on
    the others; accounted either with every query charged in advance (``"fixed"``) or
    under a Rényi filter with a budget fixed in advance (``"filter"``).

Noise and the random stream
---------------------------
Continuous Gaussian noise from :meth:`numpy.random.Generator.normal` (``gen.normal(0.0,
σ, size)``); only comparisons and argmaxes of noisy values are released, as PATE 2018
analyses it.  The draws are made in bulk, in this fixed order, so that a plain
per-query loop can replay the stream:

* GNMax: one ``(m, C)`` array of answer noises, row ``i`` for query ``i`` (drawn in
  blocks of rows, which gives the same stream as one call);
* Confident-GNMax: first all ``m`` threshold noises (``gen.normal(0.0, σ1, m)``, entry
  ``i`` for query ``i``), then all ``(m, C)`` answer noises at σ2 (row ``i`` for query
  ``i``), whatever the processing order and whether or not a query passes or is
  processed.  A loop drawing ``gen.normal(0.0, σ1)`` m times and then
  ``gen.normal(0.0, σ2, C)`` m times consumes the same numbers.

References
----------
Papernot, N., Song, S., Mironov, I., Raghunathan, A., Talwar, K., Erlingsson, Ú. (2018).
Scalable private learning with PATE. ICLR 2018.
Mironov, I. (2017). Rényi differential privacy. CSF 2017.
Balle, B., Barthe, G., Gaboardi, M., Hsu, J., Sato, T. (2020). Hypothesis testing
interpretations and Rényi differential privacy. AISTATS 2020.
Feldman, V., Zrnic, T. (2021). Individual privacy accounting via a Rényi filter.
NeurIPS 2021.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from core.accounting import rdp
from core.mechanisms.result import BOTTOM, UNPROCESSED, LabelingResult, make_result
from core.errors import ParameterError
from core import noise
from core.noise import RNGLike, check_rng
from core.validation import check_counts, check_delta, check_real

__all__ = ["gnmax_label", "confident_gnmax_label", "ACCOUNTING_MODES", "check_ordering"]

ACCOUNTING_MODES = ("fixed", "filter")

_BLOCK_ROWS = 1 << 16  # rows of answer noise drawn at a time (bounds peak memory)


def _noisy_argmax(counts: np.ndarray, sigma: float, gen: np.random.Generator) -> np.ndarray:
    """``argmax_c(counts[i, c] + N(0, σ²))`` for every row, ties to the smallest index.

    Draws the ``(m, C)`` noise in blocks of rows, in row order (the same stream as one
    ``gen.normal(0.0, σ, (m, C))``), adding the counts in place to bound memory.
    """
    m, n_classes = counts.shape
    labels = np.empty(m, dtype=np.int64)
    for start in range(0, m, _BLOCK_ROWS):
        stop = min(m, start + _BLOCK_ROWS)
        noisy = noise.gaussian(sigma, (stop - start, n_classes), gen)
        noisy += counts[start:stop]
        labels[start:stop] = np.argmax(noisy, axis=1)
    return labels


def check_ordering(ordering, m: int) -> np.ndarray:
    """Check a processing order: a permutation of ``0 .. m-1`` (int64 array).

    Parameters
    ----------
    ordering : array-like of int, shape (m,)
    m : int
        Number of queries.

    Returns
    -------
    numpy.ndarray of int64, shape (m,)

    Raises
    ------
    ParameterError
        If ``ordering`` is not a permutation of ``0 .. m-1``.
    """
    arr = np.asarray(ordering)
    if arr.ndim != 1 or arr.shape[0] != m or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
        raise ParameterError(
            f"ordering must be a 1-D array of the {m} query indices (a permutation of 0..{m - 1}), "
            f"got shape {arr.shape} and dtype {arr.dtype}."
        )
    arr = arr.astype(np.int64)
    if not np.array_equal(np.sort(arr), np.arange(m)):
        raise ParameterError(f"ordering must list every query index 0..{m - 1} exactly once.")
    return arr


def gnmax_label(counts, *, sigma: float, delta: float, rng: RNGLike = None) -> LabelingResult:
    """GNMax (PATE 2018, §4.1): ``argmax_c(counts[i, c] + N(0, σ²))`` on every query.

    Parameters
    ----------
    counts : array-like of int, shape (m, n_classes)
        Vote counts (every row sums to the number of teachers k).
    sigma : float
        Noise standard deviation σ > 0.
    delta : float
        Target δ of the reported (ε, δ) guarantee, in (0, 1).
    rng : Generator, int or None
        See :func:`core.noise.check_rng`.  Draws one ``(m, C)`` array of noise.

    Returns
    -------
    LabelingResult
        ``mechanism="gnmax"``; every query answered; ``epsilon``/``delta`` the
        data-independent guarantee of m answers.

    Notes
    -----
    Guarantee (docs/design.md §8.1).  Under replace-one adjacency one teacher changes its
    vote, so each query's count vector moves by at most one unit down in one class and
    one unit up in another: L2² ≤ 2.  The Gaussian mechanism ``counts + N(0, σ² I)`` is
    then ``(α, α·2/(2σ²)) = (α, α/σ²)``-RDP for every α (Mironov 2017, Prop. 7), and the
    argmax is a post-processing.  The m answers compose to ``m·α/σ²`` (adaptive
    composition, Mironov 2017, Prop. 1; the same teacher may move on every query), and
    the curve over :data:`core.accounting.rdp.ORDERS` is converted to (ε, δ) by Balle et al.
    (2020).  Ties in the argmax (probability 0 under continuous noise) go to the
    smallest class index.

    References
    ----------
    Papernot et al. (2018); Mironov (2017); Balle et al. (2020).
    """
    counts = check_counts(counts)
    sigma = rdp.check_sigma(sigma)
    delta = check_delta(delta)
    gen = check_rng(rng)
    m, n_classes = counts.shape
    labels = _noisy_argmax(counts, sigma, gen)
    guarantee = rdp.gnmax_guarantee(sigma, n_answers=m, delta=delta)
    params = {
        "sigma": sigma,
        "delta_target": delta,
        "m": m,
        "k": int(counts[0].sum()),
        "n_classes": n_classes,
        "order": guarantee.parts["order"],
        "rdp_at_order": guarantee.parts["rdp_at_order"],
        "noise": "Gaussian",
    }
    return make_result("gnmax", labels, None, None, guarantee, params)


def confident_gnmax_label(
    counts,
    *,
    threshold: float,
    sigma1: float,
    sigma2: float,
    delta: float,
    accounting: str = "fixed",
    order: float | None = None,
    budget: float | None = None,
    ordering=None,
    rng: RNGLike = None,
) -> LabelingResult:
    """Confident-GNMax (PATE 2018, Algorithm 1): answer only where the teachers agree.

    For each query ``i``: if ``max_c counts[i, c] + N(0, σ1²) ≥ threshold`` release
    ``argmax_c(counts[i, c] + N(0, σ2²))``, else release ⊥ (:data:`BOTTOM`).

    Parameters
    ----------
    counts : array-like of int, shape (m, n_classes)
        Vote counts (every row sums to k).
    threshold : float
        The threshold t on the noisy top count (public, fixed in advance).
    sigma1 : float
        Threshold noise σ1 > 0.
    sigma2 : float
        Answer noise σ2 > 0.
    delta : float
        Target δ of the reported guarantee, in (0, 1).
    accounting : {"fixed", "filter"}, default "fixed"
        ``"fixed"``: every query is charged ``α/(2σ1²) + α/σ2²`` in advance and all m
        queries are processed.  ``"filter"``: a Rényi filter at one order with a budget
        fixed in advance; queries are processed in ``ordering`` and the run halts
        before a query whose worst-case charge would exceed the budget (see Notes).
    order : float, optional
        ``"filter"`` only: the Rényi order α of the filter (> 1.01).  Default: the order
        at which the fixed-accounting curve of the m queries converts to the smallest ε
        at ``delta`` (a data-independent choice).
    budget : float, optional
        ``"filter"`` only: the RDP budget ρ* at ``order``.  Default: the fixed-accounting
        total ``m·α/(2σ1²) + m·α/σ2²`` at that order, with which the filter never halts
        and the guarantee equals the fixed one at that order; a smaller budget trades
        queries for privacy.  From a target ε use
        :func:`core.accounting.rdp.filter_budget_for_epsilon` (which inverts the conversion).
    ordering : array of int, optional
        A permutation of the query indices giving the processing order (e.g. least
        confident first by a student's confidence on the public queries, PATE 2018
        App. B.3).  It must be computed from public information only: an order that
        depends on the private votes is not covered by the guarantee.  Results are
        returned in the original query order.  Only the filter's halting point depends
        on it.
    rng : Generator, int or None
        See :func:`core.noise.check_rng`.  Draws ``m`` threshold noises, then an
        ``(m, C)`` array of answer noises (the module docstring gives the order).

    Returns
    -------
    LabelingResult
        ``mechanism="confident-gnmax"``; labels are a class, :data:`BOTTOM` (⊥) or, with
        the filter, :data:`UNPROCESSED` for the queries after the halt;
        ``halted_at`` is the index (original numbering) of the last query processed
        when the filter halted, else None.  ``params`` holds every public parameter,
        the per-query charges at the filter's order and, for the filter, the realised
        RDP spent (a function of the released labels).

    Raises
    ------
    ParameterError
        For a bad parameter, ``order``/``budget`` given with ``accounting="fixed"``,
        or a filter budget smaller than the charge of a single query.

    Notes
    -----
    Guarantee (docs/design.md §8.2).  Under replace-one adjacency each query's top count
    moves by at most 1, so the threshold test is the Gaussian mechanism with sensitivity
    1: ``(α, α/(2σ1²))``-RDP; an answer is GNMax at σ2: ``(α, α/σ2²)``-RDP.

    * ``"fixed"``: releasing, for every query, the test outcome and a GNMax answer is
      ``m(α/(2σ1²) + α/σ2²)``-RDP by composition; replacing the answers of the failed
      queries by ⊥ is a post-processing of that release.  The curve is converted at δ
      (Balle et al. 2020) with the best order of :data:`core.accounting.rdp.ORDERS`.
    * ``"filter"``: the order α and budget ρ* are fixed before the run.  Before query j
      (in processing order) the filter checks ``(n_processed + 1)·c1 + (n_answered + 1)·c2
      ≤ ρ*`` with ``c1 = α/(2σ1²)``, ``c2 = α/σ2²`` (the query's worst-case charge); if
      it fails the run halts and the remaining queries are not processed.  Each step's
      charge is a function of earlier released outputs (whether the test passed), so by
      the Rényi filter theorem (Feldman & Zrnic 2021, Thm 3.1) the whole run is
      ``(α, ρ*)``-RDP, whatever the realised charges; ρ* is converted at δ (Balle et al.
      2020) at that single order.  The realised spend is reported but is not the
      guarantee.

    References
    ----------
    Papernot et al. (2018), Algorithm 1 and App. B.3; Mironov (2017); Balle et al. (2020);
    Feldman & Zrnic (2021).
    """
    counts = check_counts(counts)
    threshold = check_real(threshold, "threshold")
    sigma1 = rdp.check_sigma(sigma1, "sigma1")
    sigma2 = rdp.check_sigma(sigma2, "sigma2")
    delta = check_delta(delta)
    if accounting not in ACCOUNTING_MODES:
        raise ParameterError(f"accounting must be one of {ACCOUNTING_MODES}, got {accounting!r}.")
    if accounting == "fixed" and (order is not None or budget is not None):
        raise ParameterError("order and budget apply to accounting='filter' only.")
    m, n_classes = counts.shape
    k = int(counts[0].sum())
    perm = None if ordering is None else check_ordering(ordering, m)

    fixed = rdp.confident_gnmax_guarantee(sigma1, sigma2, n_queries=m, delta=delta)
    if accounting == "filter":
        alpha = fixed.parts["order"] if order is None else rdp.check_order(order)
        c1 = alpha / (2.0 * sigma1 * sigma1)
        c2 = alpha / (sigma2 * sigma2)
        rho = m * c1 + m * c2 if budget is None else check_real(budget, "budget", 0.0, math.inf, low_open=True)
        if not (1 * c1 + 1 * c2 <= rho):
            raise ParameterError(
                f"budget = {rho:.6g} at order {alpha:g} is below the charge of one query "
                f"(α/(2σ1²) + α/σ2² = {c1 + c2:.6g}); raise the budget or the noise."
            )
        guarantee = rdp.filter_guarantee(rho, order=alpha, delta=delta)
    else:
        alpha = fixed.parts["order"]
        c1 = alpha / (2.0 * sigma1 * sigma1)
        c2 = alpha / (sigma2 * sigma2)
        rho = None
        guarantee = fixed

    gen = check_rng(rng)
    top = counts.max(axis=1)
    passed = (top + noise.gaussian(sigma1, m, gen)) >= threshold
    answers = _noisy_argmax(counts, sigma2, gen)
    labels = np.where(passed, answers, BOTTOM).astype(np.int64)

    halted_at = None
    spent = None
    n_processed = m
    if accounting == "filter":
        order_idx = np.arange(m) if perm is None else perm
        p = passed[order_idx].astype(np.int64)
        answered_before = np.cumsum(p) - p
        j = np.arange(m, dtype=np.int64)
        # worst-case charge of query j given the released outcomes before it; monotone in j
        fits = (j + 1) * c1 + (answered_before + 1) * c2 <= rho
        n_processed = m if fits.all() else int(np.argmin(fits))
        if n_processed < m:
            labels[order_idx[n_processed:]] = UNPROCESSED
            halted_at = int(order_idx[n_processed - 1])
        n_answered_filter = int(p[:n_processed].sum())
        spent = n_processed * c1 + n_answered_filter * c2
        detail = (
            f"{guarantee.detail} Processed {n_processed} of {m} queries"
            f"{' in the given order' if perm is not None else ''}"
            f"{', then halted (the next query could have exceeded the budget)' if halted_at is not None else ''}; "
            f"realised RDP {spent:.6g} of the budget {rho:.6g} (the guarantee is the budget)."
        )
        guarantee = dataclasses.replace(guarantee, detail=detail,
                                        parts={**guarantee.parts, "rdp_spent": spent,
                                               "n_processed": n_processed})

    reason = None
    if threshold - k > 3.0 * sigma1:
        reason = (
            f"The threshold {threshold:g} is more than 3σ1 = {3 * sigma1:.3g} above the number of "
            f"teachers k = {k}: even a unanimous query passes with probability below 0.2%; "
            "lower the threshold or use more teachers."
        )
    params = {
        "threshold": threshold,
        "sigma1": sigma1,
        "sigma2": sigma2,
        "accounting": accounting,
        "order": float(alpha),
        "budget": None if rho is None else float(rho),
        "charge_threshold": float(c1),
        "charge_answer": float(c2),
        "rdp_spent": None if spent is None else float(spent),
        "ordering": "given" if perm is not None else "query order",
        "delta_target": delta,
        "m": m,
        "k": k,
        "n_classes": n_classes,
        "noise": "Gaussian",
    }
    return make_result("confident-gnmax", labels, None, halted_at, guarantee, params,
                       feasible=reason is None, reason=reason)
