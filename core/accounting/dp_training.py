"""Privacy maps of the models trained with differential privacy on the private rows.

The DP-training routes (:mod:`core.mechanisms.dp_training`) release one model trained on
all private rows; every public row is then labeled by that model (post-processing), so
their guarantee does not depend on the number of queries ``m``.  This module turns the
public quantities (ε, δ, the number of private rows ``n``, the public bound ``R`` on a
row's Euclidean norm, the dimension, the number of classes, the regularization ``C``)
into the noise that meets the guarantee, before any data is seen.  Adjacency is
replace-one (docs/design.md §1), as in both papers.

Objective perturbation, pure ε (Chaudhuri, Monteleoni, Sarwate 2011, Algorithm 2)
    Minimise ``J(f) = (1/n) Σ ℓ(y_i fᵀx_i) + (Λ/2)‖f‖² + (Δ/2)‖f‖² + bᵀf / n`` with the
    logistic loss (``|ℓ'| ≤ 1``, ``0 ≤ ℓ'' ≤ c = 1/4``) and ``‖x_i‖ ≤ R``.  Rescaling
    ``x̃ = x/R``, ``g = R f`` gives the paper's unit-norm problem with ``Λ̃ = Λ/R²``, so
    with ``c̃ = c R²``::

        ε' = ε − log(1 + 2c̃/(nΛ) + c̃²/(nΛ)²) = ε − 2 log(1 + c̃/(nΛ))
        if ε' ≤ 0:  Δ = c̃ / (n (e^{ε/4} − 1)) − Λ,  ε' = ε/2      (else Δ = 0)
        b has density ∝ exp(−ε' ‖b‖ / (2R)):  ‖b‖ ~ Gamma(d, 2R/ε'), direction uniform.

    Proof sketch (the paper's Theorem 9).  The minimiser ``f*`` determines ``b``
    (``b = −n ∇(loss + reg)(f*)``, a bijection for a strongly convex objective).  For
    neighbours the two ``b`` giving the same ``f*`` differ by ``y ℓ'(·)x − y' ℓ'(·)x'``, of
    norm at most ``2R``, so the densities of ``b`` differ by at most ``e^{ε'}``; the
    Jacobian of ``f* ↦ b`` changes by the rank-two term of one row's Hessian, whose
    determinant ratio is at most ``(1 + c̃/(n(Λ+Δ)))² ≤ e^{ε−ε'}``.  Together ``e^ε``.

    With Λ from ``C`` as in scikit-learn (``Λ = 1/(C n)``), ``nΛ = 1/C``.

Objective perturbation, Gaussian (Kifer, Smith, Thakurta 2012, Theorem 2), replace-one
    The same objective with ``b ~ N(0, σ² I)`` and the total regularization (in the sum form
    ``n(Λ + Δ)``) at least ``2β/ε``, where ``β = c R² = R²/4`` is the largest eigenvalue of one
    row's loss Hessian (rank one for a linear model), so ``Δ = max(0, R²/(2εn) − Λ)``.  ``ζ``
    bounds how far one change of the data moves the gradient of the data term: under
    replace-one adjacency (docs/design.md §1) one row's gradient ``ℓ'(y fᵀx) y x`` (norm at
    most ``R``) is swapped for another's, so ``ζ = 2R``.  The ε is split between the two
    factors of the density ratio as CMS11 split it for the Gamma noise: the Jacobian is
    charged what it costs, ``ε_J = log(1 + β/(n(Λ + Δ)))`` (at most ``log(1 + ε/2) < ε/2``;
    0.037 on Adult at C = 0.01), and the noise carries the rest, ``ε_N = ε − ε_J``, outside a
    tail of probability δ::

        t = 2 log(1/δ),   σ = ζ (√(t + 2ε_N) + √t) / (2ε_N)

    (KST12 give each factor ε/2 and the tail δ/2, ``σ = ζ √(8 log(2/δ) + 4ε)/ε``, which is
    at least this σ at every setting: ``ε_N ≥ ε/2`` and ``t < 2 log(2/δ)``.)
    Better than the Gamma norm when ``d`` is large: ``E‖b‖ ≈ σ√d`` against ``2dR/ε'``.

    Proof sketch (replace-one).  As above, the minimiser ``f`` determines
    ``b_D(f) = −∇(Σ_i ℓ_i + (nΛ_tot/2)‖·‖²)(f)``, a bijection, and the density of ``f`` is
    ``φ_σ(b_D(f)) |det ∇b_D(f)|``.  For ``D, D'`` differing in row ``z = (x, y)`` against
    ``z' = (x', y')``: (i) *Jacobian.*  ``∇b_D = −(H₀ + h xxᵀ)`` and ``∇b_{D'} = −(H₀ + h' x'x'ᵀ)``
    with ``H₀ ⪰ nΛ_tot I`` and ``0 ≤ h, h' ≤ c``, so the determinant ratio is
    ``(1 + h xᵀH₀⁻¹x)/(1 + h' x'ᵀH₀⁻¹x')``, between ``(1 + β/(nΛ_tot))^{±1}``: its log is at
    most ``ε_J`` in absolute value, for every ``f``.  (ii) *Noise.*
    ``b_{D'}(f) = b_D(f) − Δ(f)`` with ``Δ(f) = ∇ℓ_{z'}(f) − ∇ℓ_z(f)`` in the fixed plane
    ``V = span{x, x'}`` and ``‖Δ(f)‖ ≤ 2R = ζ``.  The log-ratio of the Gaussian densities is
    ``(‖b − Δ‖² − ‖b‖²)/(2σ²) ≤ ζ‖Π_V b‖/σ² + ζ²/(2σ²)``.  When ``f`` is drawn from the
    mechanism on ``D``, ``b = b_D(f)`` is the noise itself, ``N(0, σ²I)``, so ``‖Π_V b‖²/σ²`` is
    χ² with (at most) 2 degrees of freedom and ``‖Π_V b‖ ≤ σ√t`` except with probability
    exactly ``e^{−t/2} = δ``.  There, with ``u = ζ/σ = √(t + 2ε_N) − √t``, the log-ratio is at
    most ``u√t + u²/2 = ε_N``.  So the privacy loss is at most ``ε_J + ε_N = ε`` except on an
    event of probability δ: ``(ε, δ)``-DP (the same argument with ``D`` and ``D'`` swapped).
    KST12's constant with ``ζ = R`` covers a gradient move of ``R`` (adding or removing a
    row); with ``R`` a replace-one change could move it by ``2R``, which is why ``ζ = 2R`` here.

Several classes: one-vs-rest, ``c`` binary models each at ``(ε/c, δ/c)``; basic
composition gives ``(ε, δ)``.

Per person, at most ``r`` rows each (docs/design.md §1.2, §12.6)
    With a privacy unit, neighbours differ in all the rows of one person, and the route
    keeps at most ``r`` rows per person (chosen at random, never by a value or a label).
    Write the objective in its sum form, ``Σ ℓ(y_i fᵀx_i) + (nΛ + nΔ)/2 ‖f‖² + bᵀf``: with
    ``Λ = 1/(Cn)`` the regularization ``nΛ = 1/C`` (and ``nΔ``) does not depend on ``n``, so
    the argument above holds whatever the number of rows, which may change between
    neighbours.  A person's ``r₁ ≤ r`` rows replaced by ``r₂ ≤ r`` rows moves the ``b``
    that gives a minimiser by at most ``(r₁ + r₂) R ≤ 2rR``, and the Hessian by ``r₁``
    rank-one terms removed and ``r₂`` added, each of eigenvalue at most ``c̃``; by the
    matrix determinant lemma, term by term, the determinant ratio lies in
    ``[(1 + c̃/(nΛ_tot))^{−r₁}, (1 + c̃/(nΛ_tot))^{r₂}]``.  So the proofs hold with ``R``
    replaced by ``rR`` in the noise and the Jacobian's ``(1 + c̃/(nΛ))`` raised to the
    power ``r``:

    - Gamma: ``ε' = ε − 2r log(1 + c̃/(nΛ))``; if ``ε' ≤ 0``,
      ``Δ = c̃/(n(e^{ε/(4r)} − 1)) − Λ`` and ``ε' = ε/2``; ``‖b‖ ~ Gamma(d, 2rR/ε')``.
    - Gaussian: ``ζ = 2rR`` and ``n(Λ + Δ) ≥ 2rβ/ε``; the Jacobian is charged
      ``ε_J = r log(1 + β/(n(Λ+Δ))) ≤ r log(1 + ε/(2r)) < ε/2``.  The move ``Δ(f)`` now lies in
      the span ``V`` of the person's ``r₁ + r₂ ≤ 2r`` rows, so ``‖Π_V b‖²/σ²`` is χ² with at most
      ``2r`` degrees of freedom: with ``t_r`` its upper δ point (``t_1 = 2 log(1/δ)``, exactly),
      ``σ = ζ (√(t_r + 2ε_N) + √t_r)/(2ε_N)``, ``ε_N = ε − ε_J``, gives the same algebra.

    ``r = 1`` is the one-row case above, exactly.  The naive Bayes sensitivities scale by
    ``r`` exactly: a person's ``r₁`` rows leaving class ``a`` and ``r₂`` entering class
    ``b`` move the counts by ``√(r₁² + r₂²) ≤ √2 r``; the sums, when ``a = b``, by
    ``‖Σu' − Σu‖`` whose every coordinate is at most ``(r₁ + r₂)/2 ≤ r`` (values in
    ``[−½, ½]``), so ``≤ r√d``, and when ``a ≠ b`` by ``√(r₁² + r₂²) √d/2 ≤ r√(d/2)``; the
    squares (values in ``[0, ¼]``) by ``≤ r√d/4`` or ``√(r₁² + r₂²) √d/4 ≤ r√(2d)/4``.
    ``σ_b = z r Δ_b/√w_b`` keeps the joint release one Gaussian mechanism of ``μ = 1/z``.

Gaussian naive Bayes, Gaussian mechanism, exact accounting
    Features centred on the public range, ``u ∈ [−½, ½]^d``.  The release is the class
    counts ``N_c``, the per-class sums ``S_c = Σ u`` and sums of squares ``Q_c = Σ u²``.
    Replacing one row moves the L2 norm of (counts, sums, squares) by at most ``√2``,
    ``√d`` (same class, ``u`` to ``u'``) and ``√(2d)/4`` respectively.  Each block gets
    Gaussian noise ``σ_b = z Δ_b / √w_b`` with shares ``w_b`` summing to 1, so the joint
    release is one Gaussian mechanism of ``μ = 1/z`` (``Σ_b Δ_b²/σ_b² = 1/z²``).  Its exact
    privacy profile ``δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)`` (Balle–Wang 2018,
    :mod:`core.accounting.gaussian_dp`) is solved for ``μ`` at the target (ε, δ), so a
    release at ``(1, 1e-5)`` is exactly ``ε = 1``; its ledger entry carries ``μ²`` and
    composes with other Gaussian runs exactly (its RDP curve ``α/(2z²)`` with the rest).

References
----------
.. [CMS11] K. Chaudhuri, C. Monteleoni, A. D. Sarwate. Differentially Private Empirical
   Risk Minimization. JMLR 12, 2011.
.. [KST12] D. Kifer, A. Smith, A. Thakurta. Private Convex Empirical Risk Minimization
   and High-dimensional Regression. COLT 2012.
.. [Mir17] I. Mironov. Rényi Differential Privacy. IEEE CSF 2017.
.. [BW18] B. Balle, Y.-X. Wang. Improving the Gaussian Mechanism for Differential Privacy:
   Analytical Calibration and Optimal Denoising. ICML 2018.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.accounting.guarantee import PrivacyGuarantee
from core.errors import ParameterError
from core.validation import check_delta, check_epsilon

__all__ = [
    "LOGISTIC_CURVATURE",
    "NB_SHARES",
    "ObjectiveNoise",
    "objective_noise",
    "gaussian_objective_sigma",
    "logistic_guarantee",
    "NaiveBayesNoise",
    "naive_bayes_noise",
    "naive_bayes_mu_sq",
    "naive_bayes_rdp",
    "naive_bayes_guarantee",
    "nb_sensitivities",
]

LOGISTIC_CURVATURE = 0.25
"""``c``: the logistic loss's second derivative is at most 1/4."""

NB_SHARES = (0.1, 0.6, 0.3)
"""Shares of the Rényi budget for the naive Bayes counts, sums and sums of squares (public)."""


def _check_positive(value, name: str) -> float:
    v = float(value)
    if not (math.isfinite(v) and v > 0):
        raise ParameterError(f"{name} must be a finite number > 0, got {value!r}.")
    return v


@dataclass(frozen=True)
class ObjectiveNoise:
    """The noise and extra regularization of one binary objective-perturbation fit.

    Attributes
    ----------
    perturbation : {"gamma", "gaussian"}
    epsilon, delta : float
        The fit's own budget (ε/c, δ/c of the job for c one-vs-rest models).
    regularization : float
        ``Λ = 1/(C n)``.
    extra : float
        ``Δ``, added to Λ (0 when none is needed).
    epsilon_prime : float or None
        ``ε'`` of the Gamma-norm noise (None for Gaussian noise).
    scale : float
        The Gamma norm's scale ``2R/ε'``, or the Gaussian σ (``ζ = 2R``: replace-one).
    data_norm : float
        ``R``, the bound on a row's norm (the intercept's constant 1 included).
    """

    perturbation: str
    epsilon: float
    delta: float
    regularization: float
    extra: float
    epsilon_prime: float | None
    scale: float
    data_norm: float


def objective_noise(epsilon, delta=0.0, *, n: int, data_norm: float, C: float,
                    perturbation: str = "gamma", rows_per_unit: int = 1) -> ObjectiveNoise:
    """The noise of one binary DP logistic regression at ``(ε, δ)`` (the module's formulas).

    Parameters
    ----------
    epsilon : float
        This fit's ε.
    delta : float
        This fit's δ (0 for ``"gamma"``; in (0, 1) for ``"gaussian"``).
    n : int
        The number of private rows (public).
    data_norm : float
        ``R``: every row, with its constant 1 for the intercept, has norm at most ``R``.
    C : float
        Inverse regularization: ``Λ = 1/(C n)``.
    perturbation : {"gamma", "gaussian"}
    rows_per_unit : int, default 1
        ``r``: the most rows one privacy unit contributes (1: per row).  The noise is for
        neighbours that differ in all of one person's (at most ``r``) rows (module
        docstring).

    Returns
    -------
    ObjectiveNoise
    """
    from core.data.units import check_bound

    r = check_bound(rows_per_unit)
    eps = check_epsilon(epsilon)
    n = int(n)
    if n < 1:
        raise ParameterError(f"n must be at least 1, got {n}.")
    R = _check_positive(data_norm, "data_norm")
    lam = 1.0 / (_check_positive(C, "C") * n)
    c_tilde = LOGISTIC_CURVATURE * R * R
    if perturbation == "gamma":
        eps_p = eps - 2.0 * r * math.log1p(c_tilde / (n * lam))
        extra = 0.0
        if eps_p <= 0:
            extra = max(0.0, c_tilde / (n * math.expm1(eps / (4.0 * r))) - lam)
            eps_p = eps / 2.0
        return ObjectiveNoise("gamma", eps, 0.0, lam, extra, eps_p, 2.0 * r * R / eps_p, R)
    if perturbation == "gaussian":
        d = check_delta(delta)
        extra = max(0.0, 2.0 * r * c_tilde / (eps * n) - lam)
        sigma = gaussian_objective_sigma(eps, d, jacobian=r * math.log1p(c_tilde / (n * (lam + extra))),
                                         zeta=2.0 * r * R, dof=2 * r)
        return ObjectiveNoise("gaussian", eps, d, lam, extra, None, sigma, R)
    raise ParameterError(f"perturbation must be 'gamma' or 'gaussian', got {perturbation!r}.")


def gaussian_objective_sigma(epsilon: float, delta: float, *, jacobian: float, zeta: float, dof: int = 2) -> float:
    """σ of Gaussian objective perturbation when the Jacobian costs ``jacobian`` of ε (module docstring).

    The noise carries ``ε_N = ε − jacobian`` outside a tail of probability δ: with ``t`` the
    point where ``P(χ²_dof > t) = δ`` (``2 log(1/δ)`` for 2 degrees) and ``u = ζ/σ``, the
    bound ``u√t + u²/2`` on the Gaussian log-ratio equals ``ε_N`` at
    ``u = √(t + 2ε_N) − √t``, so ``σ = ζ (√(t + 2ε_N) + √t) / (2ε_N)``.

    Parameters
    ----------
    epsilon, delta : float
        The fit's budget.
    jacobian : float
        The Jacobian's share ``r log(1 + β/(nΛ_tot))``, below ``epsilon``.
    zeta : float
        ``ζ``: how far one change of the data moves the gradient (``2rR``).
    dof : int, default 2
        The dimension bound ``2r`` of the plane the move lies in.

    Returns
    -------
    float
    """
    eps_noise = float(epsilon) - float(jacobian)
    if not eps_noise > 0:
        raise ParameterError(f"The Jacobian's share {jacobian:g} leaves no ε for the noise (ε = {epsilon:g}).")
    t = _chi2_tail_point(int(dof), float(delta))
    return float(zeta) * (math.sqrt(t + 2.0 * eps_noise) + math.sqrt(t)) / (2.0 * eps_noise)


def _chi2_tail_point(dof: int, tail: float) -> float:
    """The point ``t`` with ``P(χ²_dof > t) = tail`` (``2 log(1/tail)`` in closed form for 2 degrees)."""
    if dof == 2:
        return 2.0 * math.log(1.0 / tail)
    from scipy.stats import chi2

    return float(chi2.isf(tail, dof))


def _per_person(rows_per_unit) -> str:
    if rows_per_unit is None:
        return ""
    r = int(rows_per_unit)
    return (f" Per person: at most {r} row{'s' if r != 1 else ''} of each person used (chosen at random), "
            "noise calibrated for them.")


def logistic_guarantee(epsilon, delta, *, perturbation: str, n_classes: int = 2,
                       rows_per_unit: int | None = None) -> PrivacyGuarantee:
    """The guarantee of a DP logistic regression (any number of queries: one model labels them all).

    Parameters
    ----------
    epsilon, delta : float
        The job's budget.
    perturbation : {"gamma", "gaussian"}
    n_classes : int
        ``c``: ``c`` one-vs-rest models at ``(ε/c, δ/c)`` when ``c > 2``, one model when 2.
    rows_per_unit : int, optional
        With a privacy unit: the bound ``r`` on each person's rows (said in the accounting).

    Returns
    -------
    PrivacyGuarantee
        ``(ε, 0)`` for Gamma-norm noise, ``(ε, δ)`` for Gaussian noise.
    """
    eps = check_epsilon(epsilon)
    models = 1 if int(n_classes) <= 2 else int(n_classes)
    # One model spends the whole budget; one per class (one against the rest) spends a share each.
    if perturbation == "gamma":
        share = "one model at ε" if models == 1 else f"{models} models (one per class) at ε/{models} each"
        return PrivacyGuarantee(eps, 0.0, "objective-perturbation",
                                f"Objective perturbation (Chaudhuri–Monteleoni–Sarwate 2011, Alg. 2): "
                                f"{share}, pure ε-DP; the public rows are "
                                "labeled by the released model (post-processing, any number of queries)."
                                + _per_person(rows_per_unit))
    d = check_delta(delta)
    share = ("one model at (ε, δ)" if models == 1
             else f"{models} models (one per class) at (ε/{models}, δ/{models}) each")
    return PrivacyGuarantee(eps, d, "objective-perturbation",
                            f"Gaussian objective perturbation (Kifer–Smith–Thakurta 2012, Thm 2): "
                            f"{share}; the public rows are "
                            "labeled by the released model (post-processing, any number of queries)."
                            + _per_person(rows_per_unit))


@dataclass(frozen=True)
class NaiveBayesNoise:
    """The Gaussian noise of the naive Bayes release.

    Attributes
    ----------
    z : float
        The noise multiplier: the joint release has RDP ``α/(2z²)``.
    sigma_counts, sigma_sums, sigma_squares : float
        The noise standard deviation of each block.
    """

    z: float
    sigma_counts: float
    sigma_sums: float
    sigma_squares: float


def nb_sensitivities(dimension: int, rows_per_unit: int = 1) -> tuple[float, float, float]:
    """L2 sensitivities of the naive Bayes counts, sums and squares when one unit of at most ``r`` rows changes.

    ``(√2 r, r √d, r √(2d)/4)`` (module docstring; ``r = 1``: one row).
    """
    d, r = int(dimension), int(rows_per_unit)
    return r * math.sqrt(2.0), r * math.sqrt(d), r * math.sqrt(2.0 * d) / 4.0


def naive_bayes_mu_sq(epsilon, delta) -> float:
    """``μ² = 1/z²`` of the naive Bayes release at ``(ε, δ)``: the exact Gaussian profile solved for μ.

    Parameters
    ----------
    epsilon, delta : float

    Returns
    -------
    float
    """
    from core.accounting.gaussian_dp import gaussian_mu_sq_for_epsilon

    return float(gaussian_mu_sq_for_epsilon(check_epsilon(epsilon), delta=check_delta(delta)))


def naive_bayes_noise(epsilon, delta, *, dimension: int, rows_per_unit: int = 1) -> NaiveBayesNoise:
    """The noise of the DP Gaussian naive Bayes at ``(ε, δ)`` on ``dimension`` features.

    ``z = 1/μ`` with ``μ`` from :func:`naive_bayes_mu_sq` (the exact Gaussian profile), and
    each block's ``σ_b = z Δ_b/√w_b``.

    Parameters
    ----------
    epsilon, delta : float
    dimension : int
    rows_per_unit : int, default 1
        ``r``: the most rows one privacy unit contributes (1: per row); every block's
        noise is scaled by ``r``, its sensitivity's factor.

    Returns
    -------
    NaiveBayesNoise
    """
    from core.data.units import check_bound

    r = check_bound(rows_per_unit)
    if int(dimension) < 1:
        raise ParameterError(f"dimension must be at least 1, got {dimension!r}.")
    z = 1.0 / math.sqrt(naive_bayes_mu_sq(epsilon, delta))
    sens = nb_sensitivities(dimension, r)
    s = [z * s_b / math.sqrt(w) for s_b, w in zip(sens, NB_SHARES)]
    return NaiveBayesNoise(z, *s)


def naive_bayes_rdp(z: float, orders=None) -> np.ndarray:
    """The RDP curve ``α/(2z²)`` of the naive Bayes release at multiplier ``z`` (for composing
    with runs known by their RDP curve only)."""
    from core.accounting.rdp import ORDERS

    orders = ORDERS if orders is None else np.asarray(orders, dtype=float)
    return orders / (2.0 * float(z) ** 2)


def naive_bayes_guarantee(epsilon, delta, *, rows_per_unit: int | None = None) -> PrivacyGuarantee:
    """The guarantee of the DP Gaussian naive Bayes (one release labels every query).

    Returns
    -------
    PrivacyGuarantee
        ``(ε, δ)``: the exact profile of one Gaussian mechanism of ``μ = 1/z``, with ``z``
        solved for (ε, δ).
    """
    eps, d = check_epsilon(epsilon), check_delta(delta)
    return PrivacyGuarantee(eps, d, "pld-gaussian",
                            "Gaussian naive Bayes: class counts, per-class sums and sums of squares with "
                            "Gaussian noise, one Gaussian mechanism whose exact privacy profile (Balle–Wang 2018) "
                            "is solved for its noise at (ε, δ); the public rows are labeled by the released model "
                            "(post-processing, any number of queries)."
                            + _per_person(rows_per_unit))
