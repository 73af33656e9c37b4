"""Certified Confident-GNMax: a data-dependent guarantee released by propose–test–release.

PATE 2018's data-dependent RDP (:mod:`core.accounting.data_dependent`) is far smaller than the
data-independent bound when the teachers agree, but it describes the private data and
so is not a guarantee.  This module implements docs/design.md §8.5: a budget B at one
Rényi order λ is fixed in advance, a *noisy* test checks privately that the
data-dependent RDP ``E(D)`` of the run fits in B, and only then are labels released.
The reported (ε, δ) is fixed before the data is seen and holds for every dataset.

The five steps (docs/design.md §8.5)
------------------------------------
1. ``E(D) = Σ_i [ρ_thr,i(λ) + ρ_gn,i(λ)]`` over all m queries (each term the
   data-dependent bound of §8.4, capped by the data-independent one; the GNMax term is
   charged for every query, answered or not).
2. ``S(D) = max_d e^{−βd} Σ_i LS_i(d)``, a β-smooth bound on E's local sensitivity
   (:mod:`core.accounting.smooth_sensitivity`).
3. Release ``ℓ = log S(D) + N(0, σ_ℓ²)``; ``Ŝ = exp(ℓ + σ_ℓ z(δ″))`` ≥ S(D) with
   probability ≥ 1 − δ″ (``z(p) = Φ⁻¹(1 − p)``).
4. Release ``Ẽ = E(D) + S(D)·N(0, σ_s²)`` (GNSS, PATE 2018 Thm 23).
5. Pass iff ``Ẽ + Ŝ σ_s z(δ′) ≤ B``.  On a pass run Confident-GNMax with fresh noise
   and release its labels; on a fail release no label.

Where the non-private values live
---------------------------------
``E(D)``, ``S(D)``, the per-distance profile and the per-query terms are returned only
by :func:`certified_diagnostics` (a :class:`CertifiedDiagnostics`, every field marked
NON-PRIVATE).  A :class:`~core.mechanisms.LabelingResult` from
:func:`certified_confident_gnmax_label` holds in ``params`` only public parameters and
released values (the outcome of the test, ℓ, Ŝ, Ẽ), and in
``epsilon_data_dependent`` the data-dependent ε of the released labels (NON-PRIVATE,
never exported, as for LNMax).

References
----------
N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar, Ú. Erlingsson, "Scalable
Private Learning with PATE", ICLR 2018 (Thm 6, Thm 23 (GNSS), Appendix B).
K. Nissim, S. Raskhodnikova, A. Smith, "Smooth sensitivity and sampling in private data
analysis", STOC 2007.
M. Bun, T. Steinke, "Average-case averages: private algorithms for smooth sensitivity
and mean estimation", NeurIPS 2019.
R. Redberg, Y. Zhu, Y.-X. Wang, "Generalized PTR: user-friendly recipes for
data-adaptive algorithms with differential privacy", AISTATS 2023.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from core.accounting.gnmax_sensitivity import gnmax_sensitivity
from core.accounting.smooth_sensitivity import (
    SmoothSensitivityProfile,
    certified_rdp_terms_from_sensitivity,
    smooth_sensitivity_profile,
)
from core.errors import ParameterError
from core.mechanisms.certified_params import (
    CertifiedParameters,
    certified_parameters,
    normal_upper_quantile,
)
from core.mechanisms.result import BOTTOM, UNPROCESSED, LabelingResult, make_result
from core.noise import RNGLike, check_rng
from core.validation import check_counts

__all__ = [
    "CertifiedDiagnostics",
    "CertifiedSampler",
    "CertifiedTestPicture",
    "certified_outcome_words",
    "certified_pass_probability",
    "certified_test_picture",
    "certified_confident_gnmax_label",
    "certified_diagnostics",
]


# ---------------------------------------------------------------------------- diagnostics


@dataclass(frozen=True)
class CertifiedDiagnostics:
    """NON-PRIVATE diagnostics of certified Confident-GNMax on the private votes.

    **Every field describes the private data.**  Show under "non-private diagnostics"
    only; never export; never report as a guarantee.

    Attributes
    ----------
    rdp_data_dependent : float
        E(D) at the order λ.
    smooth_sensitivity : float
        S(D).
    profile : SmoothSensitivityProfile
        Σ_i LS_i(d) per distance d.
    rdp_threshold, rdp_gnmax : numpy.ndarray, shape (m,)
        The per-query terms of E(D).
    budget : float
        B (public), for comparison.
    """

    rdp_data_dependent: float
    smooth_sensitivity: float
    profile: SmoothSensitivityProfile
    rdp_threshold: np.ndarray
    rdp_gnmax: np.ndarray
    budget: float


def _check_params_counts(counts, params: CertifiedParameters) -> np.ndarray:
    if not isinstance(params, CertifiedParameters):
        raise ParameterError("params must be a CertifiedParameters (see certified_parameters).")
    return check_counts(counts)


def certified_diagnostics(counts, params: CertifiedParameters) -> CertifiedDiagnostics:
    """E(D), S(D) and their parts — **NON-PRIVATE** (see :class:`CertifiedDiagnostics`).

    Parameters
    ----------
    counts : array-like of int, shape (m, n_classes)
        Teacher vote counts per query (private).
    params : CertifiedParameters
        The run's public parameters.

    Returns
    -------
    CertifiedDiagnostics

    Notes
    -----
    docs/design.md §8.5 (PATE 2018's Appendix B, Theorem 23); the papers are cited in this module's References.
    """
    counts = _check_params_counts(counts, params)
    a = gnmax_sensitivity(sigma=params.sigma2, n_classes=counts.shape[1], order=params.order)
    thr, gn = certified_rdp_terms_from_sensitivity(counts, params.threshold, params.sigma1, a)
    prof = smooth_sensitivity_profile(counts, threshold=params.threshold, sigma1=params.sigma1,
                                      sigma2=params.sigma2, order=params.order, beta=params.beta)
    return CertifiedDiagnostics(float(thr.sum() + gn.sum()), prof.smooth, prof, thr, gn, params.budget)


_ANALYSES: OrderedDict = OrderedDict()
_ANALYSES_LOCK = threading.Lock()
_ANALYSES_SIZE = 64


def _e_and_s(counts: np.ndarray, params: CertifiedParameters) -> tuple[float, float]:
    """``(E(D), S(D))`` of steps 1–2, computed once per vote table and parameters.

    Both are deterministic functions of the votes and the public parameters (no noise is
    drawn for them), so a run asked again on the same votes at the same parameters —
    another draw, another session of the app reading the same trained teachers, the
    audit's trials — reads them from a small in-memory memo (the last 64 pairs, keyed by a
    SHA-256 digest of the counts and the parameters) instead of repeating the
    smooth-sensitivity walk.  What a run releases is unchanged: its noise is drawn afresh
    every time.  The two floats are NON-PRIVATE values kept in process memory only, like
    the votes they come from; they are never returned, written or exported.
    """
    key = (hashlib.sha256(np.ascontiguousarray(counts, dtype=np.int64).tobytes()).hexdigest(), counts.shape,
           params.threshold, params.sigma1, params.sigma2, params.order, params.beta)
    with _ANALYSES_LOCK:
        if key in _ANALYSES:
            _ANALYSES.move_to_end(key)
            return _ANALYSES[key]
    d = certified_diagnostics(counts, params)
    value = (d.rdp_data_dependent, d.smooth_sensitivity)
    with _ANALYSES_LOCK:
        _ANALYSES[key] = value
        while len(_ANALYSES) > _ANALYSES_SIZE:
            _ANALYSES.popitem(last=False)
    return value


# ---------------------------------------------------------------------------- mechanism


def _test(e: float, s: float, params: CertifiedParameters, gen: np.random.Generator, size=None):
    """Steps 3–5: returns (passed, ℓ, Ŝ, Ẽ); draws the ℓ noise, then the Ẽ noise."""
    z_l = gen.standard_normal(size)
    z_e = gen.standard_normal(size)
    with np.errstate(divide="ignore"):
        log_s = np.log(s) if s > 0 else -np.inf
    ell = log_s + params.sigma_l * z_l
    s_hat = np.exp(ell + params.sigma_l * normal_upper_quantile(params.delta_dprime))
    e_tilde = e + s * params.sigma_s * z_e
    passed = e_tilde + s_hat * params.sigma_s * normal_upper_quantile(params.delta_prime) <= params.budget
    return passed, ell, s_hat, e_tilde


def certified_confident_gnmax_label(counts, *, threshold: float | None = None, sigma1: float | None = None,
                                    sigma2: float | None = None, delta: float | None = None,
                                    epsilon: float | None = None, params: CertifiedParameters | None = None,
                                    rng: RNGLike = None) -> LabelingResult:
    """Certified Confident-GNMax: propose–test–release of a data-dependent budget.

    Runs the five steps of docs/design.md §8.5 (module docstring).  On a pass, labels
    come from :func:`core.mechanisms.gaussian.confident_gnmax_label` (fixed accounting semantics,
    fresh noise); on a fail no label is released.

    Parameters
    ----------
    counts : array-like of int, shape (m, K)
        Vote counts (every row sums to k).
    threshold, sigma1, sigma2 : float, optional
        Confident-GNMax's parameters; with ``epsilon``/``delta`` they are passed to
        :func:`certified_parameters` (defaults there); with ``params`` they must be
        omitted or equal to the ``params`` values.
    delta, epsilon : float, optional
        Target guarantee; the public parameters are then chosen by
        :func:`certified_parameters` from (ε, δ) and the public sizes (m, k, K).
    params : CertifiedParameters, optional
        Fully specified public parameters (instead of ``epsilon``/``delta``).
    rng : Generator, int or None
        Draws ℓ's noise, then Ẽ's noise, then (on a pass) Confident-GNMax's noises in
        :func:`core.mechanisms.gaussian.confident_gnmax_label`'s order.

    Returns
    -------
    LabelingResult
        ``mechanism="certified-gnmax"``.  ``epsilon``/``delta`` is the certified
        guarantee (:meth:`CertifiedParameters.guarantee`), the same whether the test
        passes or fails.  On a fail every label is :data:`~core.mechanisms.UNPROCESSED`
        (no query was processed — ⊥ would wrongly suggest the teachers disagreed),
        ``feasible=False`` and ``reason`` says that the test failed and what it spent.
        ``params``: the public parameters (the budget B among them), ``passed``,
        ``epsilon_test`` and ``test_value``, the noisy value the test compared with B
        (``Ẽ + Ŝ σ_s z(δ′)``): a function of the released ℓ and Ẽ, which the guarantee
        charges for (ε_test), so showing it beside the budget line costs nothing more.  ``epsilon_data_dependent``: on a pass, the data-dependent
        ε of the released labels (threshold term of every query, GNMax term of the
        answered ones, at the run's δ) — NON-PRIVATE, never exported; None on a fail.
        E(D) and S(D) are not in the result: see :func:`certified_diagnostics`.

    Notes
    -----
    Proof sketch (Redberg–Zhu–Wang 2023, generalized PTR; docs/design.md §8.5).
    S is a β-smooth upper bound on the local sensitivity of E, so ``log S`` has global
    sensitivity β and step 3 is a Gaussian mechanism: ``λβ²/(2σ_ℓ²)``-RDP; step 4 is
    GNSS: ``λe^{2β}/σ_s² + (βλ − ½ log(1 − 2λβ))/(λ − 1)``-RDP for ``λ < 1/(2β)``
    (PATE 2018 Thm 23).  Fix neighbours D, D′ and an event.  If ``E(D) ≤ B``: on a pass
    the labels (fresh noise) have data-dependent RDP ``≤ E(D) ≤ B`` at λ against D′
    (PATE 2018 Thm 6, composed over queries), which converts to ``(ε_B, δ_B)``; the
    test converts to ``(ε_test, δ_test)``; sequential composition gives
    ``(ε_test + ε_B, δ_test + δ_B)``.  If ``E(D) > B``: a pass needs
    ``S σ_s N + Ŝ σ_s z(δ′) < 0``; with probability ≥ 1 − δ″ ``Ŝ ≥ S`` and then it needs
    ``N < −z(δ′)``, probability ≤ δ′: so, up to δ′ + δ″, the output is "test, then no
    label", which is ``(ε_test, δ_test)``.  Hence ``(ε_test + ε_B,
    δ_test + δ_B + δ′ + δ″)``-DP for every pair, under replace-one adjacency.

    References
    ----------
    Papernot et al. (2018); Nissim, Raskhodnikova, Smith (2007); Bun, Steinke (2019);
    Redberg, Zhu, Wang (2023).
    """
    from core.accounting.data_dependent import confident_gnmax_epsilon_data_dependent
    from core.mechanisms.gaussian import confident_gnmax_label

    counts = check_counts(counts)
    m, n_classes = counts.shape
    k = int(counts[0].sum())
    if params is None:
        if epsilon is None or delta is None:
            raise ParameterError("Give either params, or epsilon and delta (the target guarantee).")
        params = certified_parameters(epsilon=epsilon, delta=delta, m=m, k=k, n_classes=n_classes,
                                      threshold=threshold, sigma1=sigma1, sigma2=sigma2)
    else:
        if epsilon is not None or delta is not None:
            raise ParameterError("Give either params or epsilon/delta, not both (params fixes the guarantee).")
        if not isinstance(params, CertifiedParameters):
            raise ParameterError("params must be a CertifiedParameters (see certified_parameters).")
        for name, value in (("threshold", threshold), ("sigma1", sigma1), ("sigma2", sigma2)):
            if value is not None and float(value) != getattr(params, name):
                raise ParameterError(f"{name} = {value!r} differs from params.{name} = {getattr(params, name)!r}.")
    guarantee = params.guarantee()
    gen = check_rng(rng)

    # Steps 1–2 (private values; they never leave this function except through the noisy test).
    e_d, s_d = _e_and_s(counts, params)
    # Steps 3–5.
    passed, _, s_hat, e_tilde = _test(e_d, s_d, params, gen)
    passed = bool(passed)
    # The test's value, compared with B: a function of the released ℓ and Ẽ (post-processing),
    # which the guarantee charges for (ε_test), so it may be shown beside the budget line.
    test_value = float(e_tilde + s_hat * params.sigma_s * normal_upper_quantile(params.delta_prime))

    eps_dd = None
    if passed:
        run = confident_gnmax_label(counts, threshold=params.threshold, sigma1=params.sigma1,
                                    sigma2=params.sigma2, delta=guarantee.delta, accounting="fixed", rng=gen)
        labels = run.labels.astype(np.int64)
        reason = None
        eps_dd = confident_gnmax_epsilon_data_dependent(
            counts, threshold=params.threshold, sigma1=params.sigma1, sigma2=params.sigma2,
            delta=guarantee.delta, answered=labels >= 0)
    else:
        labels = np.full(m, UNPROCESSED, dtype=np.int64)
        reason = (
            f"The private budget test failed (its noisy estimate of the data-dependent cost exceeded the "
            f"budget B = {params.budget:.4g} at order {params.order:g}), so no label was released. The test itself was run and its cost is "
            f"spent: ε_test = {guarantee.parts['epsilon_test']:.4g}; the run's guarantee "
            f"(ε = {guarantee.epsilon:.4g}, δ = {guarantee.delta:.3g}) still applies. Raise the budget (a larger "
            "epsilon), the noise sigma2, or use the data-independent Confident-GNMax."
        )
    from core.accounting.rdp import confident_gnmax_guarantee

    # The data-independent guarantee of the same Confident-GNMax parameters on these m
    # queries (public: from public parameters only), shown beside the certified one.
    eps_independent = confident_gnmax_guarantee(params.sigma1, params.sigma2, n_queries=m, delta=float(guarantee.delta)).epsilon
    out_params = {
        **params.public_dict(),
        "epsilon_data_independent": float(eps_independent),
        "passed": passed,
        "test_value": test_value,
        "epsilon_test": float(guarantee.parts["epsilon_test"]),
        "delta_target": float(guarantee.delta),
        "m": m,
        "k": k,
        "n_classes": n_classes,
        "noise": "Gaussian",
    }
    return make_result("certified-gnmax", labels, None, None, guarantee, out_params,
                       feasible=passed, reason=reason, eps_dd=eps_dd)


# ---------------------------------------------------------------------------- the test, for teaching


@dataclass(frozen=True)
class CertifiedTestPicture:
    """The deciding test of certified Confident-GNMax on some votes, drawn many times.

    **NON-PRIVATE**: ``cost`` and ``values`` are computed from E(D) and S(D), which
    describe the private votes (:class:`CertifiedDiagnostics`).  For a teaching view only;
    never exported.

    Attributes
    ----------
    budget : float
        B, fixed before the run (public).
    cost : float
        E(D): the data-dependent Rényi cost of the run on these votes.
    values : numpy.ndarray, shape (draws,)
        Independent draws of the test's value ``Ẽ + Ŝ σ_s z(δ′)`` on these votes.
    p_pass : float
        The exact probability that the test passes on these votes (Gauss–Hermite
        quadrature over ℓ's noise of the normal probability over Ẽ's).
    """

    budget: float
    cost: float
    values: np.ndarray
    p_pass: float


def certified_pass_probability(e: float, s: float, params: CertifiedParameters) -> float:
    """P[pass] of the test on votes with data-dependent cost ``e`` and smooth sensitivity ``s``.

    Pass iff ``e + s σ_s N₁ + exp(log s + σ_ℓ N₂ + σ_ℓ z(δ″)) σ_s z(δ′) ≤ B`` (N₁, N₂
    independent standard normals): for each N₂ a normal probability in N₁, integrated
    over N₂ by 80-point Gauss–Hermite quadrature.
    """
    from scipy.special import ndtr

    if s <= 0:
        return float(e <= params.budget)
    x, w = np.polynomial.hermite_e.hermegauss(80)
    s_hat = np.exp(np.log(s) + params.sigma_l * x + params.sigma_l * normal_upper_quantile(params.delta_dprime))
    room = params.budget - e - s_hat * params.sigma_s * normal_upper_quantile(params.delta_prime)
    return float(np.clip(np.sum(w * ndtr(room / (s * params.sigma_s))) / np.sqrt(2.0 * np.pi), 0.0, 1.0))


def certified_test_picture(counts, params: CertifiedParameters, *, draws: int = 2000,
                           rng: RNGLike = None) -> CertifiedTestPicture:
    """The deciding test on these votes: B, E(D), ``draws`` values of the test and P[pass] — **NON-PRIVATE**.

    Parameters
    ----------
    counts : array-like of int, shape (m, n_classes)
        Teacher vote counts per query (private; the picture is a non-private diagnostic).
    params : CertifiedParameters
    draws : int
        Independent draws of the test's noise.
    rng : Generator, int or None

    Returns
    -------
    CertifiedTestPicture
    """
    counts = _check_params_counts(counts, params)
    e_d, s_d = _e_and_s(counts, params)
    gen = check_rng(rng)
    _, _, s_hat, e_tilde = _test(e_d, s_d, params, gen, size=int(draws))
    values = np.asarray(e_tilde + s_hat * params.sigma_s * normal_upper_quantile(params.delta_prime), dtype=float)
    return CertifiedTestPicture(float(params.budget), float(e_d), values, certified_pass_probability(e_d, s_d, params))


def certified_outcome_words(result: LabelingResult) -> str:
    """Why a certified run released its labels or did not, in words a student follows.

    Reads the run's public parameters and released values only (``passed``,
    ``test_value``, the budget B, ``epsilon_test``): safe to show with the labels.
    """
    p = result.params
    value, budget = float(p["test_value"]), float(p["budget"])
    price = (f"The guarantee ε = {result.epsilon:.3g} holds for every data set, pass or fail; the test itself "
             f"costs ε {p['epsilon_test']:.3g} of it.")
    if p["passed"]:
        return ("**Released.** Before any label, the mechanism measured how much this run would reveal about the "
                f"private rows on these votes, with noise added: {value:.3g}, under the budget {budget:.3g} fixed "
                "before the run. Teachers that agree strongly reveal little about any one private row, so the measured "
                "cost was low and the labels were released. " + price)
    return ("**Nothing released.** Before any label, the mechanism measured how much this run would reveal about the "
            f"private rows on these votes, with noise added: {value:.3g}, above the budget {budget:.3g} fixed before "
            "the run, so no query was processed. The cost is high when the teachers disagree on many queries (a close "
            "vote reveals more about single rows) or when the budget is small: raise ε (a larger budget), use more "
            "teachers that agree, or use the plain Confident-GNMax, whose guarantee needs no test. " + price)


# ---------------------------------------------------------------------------- audit sampler


class CertifiedSampler:
    """Vectorized sampler of :func:`certified_confident_gnmax_label` for :func:`core.audit.audit`.

    ``__call__(counts, n_trials, rng)`` returns the released label vectors, shape
    ``(n_trials, m)`` (:data:`~core.mechanisms.UNPROCESSED` everywhere on a failed
    test).  The released ℓ and Ẽ are dropped (a post-processing: the audit's bound stays
    valid).  E(D) and S(D) are computed once per input (they are deterministic).

    Parameters
    ----------
    params : CertifiedParameters
        The public parameters of the sampled runs.
    """

    name = "certified-gnmax"

    def __init__(self, params: CertifiedParameters):
        if not isinstance(params, CertifiedParameters):
            raise ParameterError("params must be a CertifiedParameters.")
        self.params = params

    def claim(self, counts) -> tuple[float, float]:
        """The claimed (ε, δ) of a run, the same for every input (``params.guarantee()``).

        Parameters
        ----------
        counts : array-like of int, shape (m, n_classes)
            Teacher vote counts per query (not read: the claim is data-independent).

        Returns
        -------
        (epsilon, delta) : tuple of float

        Notes
        -----
        docs/design.md §8.5 (PATE 2018's Appendix B, Theorem 23); the papers are cited in this module's References.
        """
        g = self.params.guarantee()
        return g.epsilon, g.delta

    def __call__(self, counts, n_trials: int, rng) -> np.ndarray:
        counts = check_counts(counts)
        gen = check_rng(rng)
        p = self.params
        e_d, s_d = _e_and_s(counts, p)
        passed, _, _, _ = _test(e_d, s_d, p, gen, size=n_trials)
        m, c = counts.shape
        top = counts.max(axis=1)
        ok = (top[None, :] + p.sigma1 * gen.standard_normal((n_trials, m))) >= p.threshold
        noisy = counts[None, :, :] + p.sigma2 * gen.standard_normal((n_trials, m, c))
        ans = np.argmax(noisy, axis=2)
        labels = np.where(ok, ans, BOTTOM)
        return np.where(passed[:, None], labels, UNPROCESSED).astype(np.int64)
