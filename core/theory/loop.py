"""The loop solver ``T → α → k → T`` of the BTT parameters (:func:`solve_btt_parameters`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from core.accounting.btt import btt_noise_scale, calibrate_btt, cutoff_T
from core.errors import ParameterError
from core.validation import check_beta, check_delta, check_epsilon, check_m
from core.theory.checks import positive_array, check_setting, unit_array
from core.theory.teachers import btt_num_teachers
from core.theory.vc import teacher_error

__all__ = ["BTTParameters", "solve_btt_parameters"]


# ---------------------------------------------------------------------------------------
# The loop T -> alpha -> k -> T
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BTTParameters:
    """Output of :func:`solve_btt_parameters`.

    Attributes
    ----------
    k : float
        Number of teachers at the fixed point (real; the ensemble uses ``ceil(k)``).
    T : float
        Cutoff ``max(1, cutoff_T(γ, α, m, β))`` (real; the algorithm uses ``ceil(T)``).
    alpha : float
        Teachers' error at ``n/k`` samples with failure probability ``β/k``.
    noise_scale : float
        λ at T (paper or tight calibration).
    misclassification : float
        Theorem 3.2's bound ``T/m``.
    feasible : bool
        True when a fixed point exists with ``α < 1`` and ``T < m``.
    reason : str or None
        Why not, in words (contains "no k works"), with roughly the n that would be needed.
    n_needed : float or None
        When infeasible: about the smallest n for which the solver succeeds.
    """

    k: float
    T: float
    alpha: float
    noise_scale: float
    misclassification: float
    feasible: bool
    reason: str | None = None
    n_needed: float | None = None


class _Loop:
    """The three relations of the loop ``T → α → k → T`` as functions of k."""

    def __init__(self, n, V, epsilon, delta, beta, m, gamma, setting, calibration):
        self.n, self.V, self.epsilon, self.delta = n, V, epsilon, delta
        self.beta, self.m, self.gamma = beta, m, gamma
        self.setting, self.calibration = setting, calibration

    # relation 1: alpha at n/k samples, failure probability beta/k
    def alpha(self, k):
        k = np.asarray(k, float)
        return np.asarray(teacher_error(self.V, self.n / k, self.beta / k, self.setting), float)

    # relation 2: T = max(1, cutoff_T(gamma, alpha, m, beta))
    def cutoff(self, alpha):
        return np.maximum(np.asarray(cutoff_T(self.gamma, alpha, self.m, self.beta), float), 1.0)

    def T_of_k(self, k):
        return self.cutoff(self.alpha(k))

    # relation 3: k = btt_num_teachers(λ, m, T, δ, β)
    def k_required(self, T, lam):
        return np.asarray(btt_num_teachers(lam, self.m, T, self.delta, self.beta), float)

    def tight_lambda(self, t: int) -> float:
        return float(calibrate_btt(self.epsilon, delta=self.delta, T=int(t), m=self.m, calibration="tight").noise_scale)

    def state(self, k):
        """``(α, T, λ)`` at k (λ at ``ceil(T)`` for the tight calibration)."""
        a = float(self.alpha(k))
        T = float(self.cutoff(a))
        if self.calibration == "paper":
            lam = float(btt_noise_scale(T, self.epsilon, self.delta))
        else:
            lam = self.tight_lambda(math.ceil(T - 1e-9))
        return a, T, lam

    def solve(self):
        """The smallest k in ``[1, n]`` with ``k >= k_req(k)`` and α < 1, or None."""
        return self._solve_paper() if self.calibration == "paper" else self._solve_stepwise()

    def _solve_paper(self):
        ks = np.geomspace(1.0, self.n, 600)
        a = self.alpha(ks)
        T = self.cutoff(a)
        kr = np.where(a >= 1.0, np.inf, self.k_required(T, btt_noise_scale(T, self.epsilon, self.delta)))
        ok = ks >= kr
        if not np.any(ok):
            return None
        i = int(np.argmax(ok))
        if i == 0:
            return 1.0

        def h(logk):
            a = self.alpha(math.exp(logk))
            if a >= 1.0:
                return -math.inf
            T = self.cutoff(a)
            return logk - math.log(float(self.k_required(T, btt_noise_scale(T, self.epsilon, self.delta))))

        lo, hi = math.log(ks[i - 1]), math.log(ks[i])
        if math.isfinite(h(lo)):
            root = optimize.brentq(h, lo, hi, xtol=1e-15, rtol=1e-15, maxiter=300)
            if h(root) >= 0:
                return math.exp(root)
            lo = root
        for _ in range(200):  # keep the side where k >= k_req(k)
            mid = 0.5 * (lo + hi)
            if h(mid) >= 0:
                hi = mid
            else:
                lo = mid
            if hi - lo < 1e-15:
                break
        return math.exp(hi)

    def _K(self, t: float) -> float | None:
        """``sup{k in [1, n] : T(k) <= t}`` (T(k) is continuous and non-decreasing), or None."""
        if float(self.T_of_k(1.0)) > t:
            return None
        if float(self.T_of_k(self.n)) <= t:
            return self.n
        f = lambda logk: float(self.T_of_k(math.exp(logk))) - t
        return math.exp(optimize.brentq(f, 0.0, math.log(self.n), xtol=1e-14, rtol=1e-15, maxiter=300))

    def _solve_stepwise(self):
        """Tight calibration: λ is a step function of ``ceil(T)``, calibrated per integer t.

        For an integer t the k with ``ceil(T(k)) = t`` form ``(K(t-1), K(t)]`` and λ is
        ``λ_t`` there; a k of that interval works when ``k >= k_req``.  Binary search on t
        for the first interval whose right end works (about log2(m) calibrations), then
        root finding inside it.
        """
        t_lo = max(1, math.ceil(float(self.T_of_k(1.0)) - 1e-9))
        t_hi = min(self.m, math.ceil(float(self.T_of_k(self.n)) - 1e-9))
        if t_lo > t_hi:
            return None

        def works(t):
            Kt = self._K(t)
            if Kt is None or float(self.alpha(Kt)) >= 1.0:
                return False
            return Kt >= float(self.k_required(self.T_of_k(Kt), self.tight_lambda(t)))

        if not works(t_hi):
            return None
        lo_t, hi_t = t_lo - 1, t_hi  # works(lo_t) is False (or out of range), works(hi_t) True
        while hi_t - lo_t > 1:
            mid = (lo_t + hi_t) // 2
            if works(mid):
                hi_t = mid
            else:
                lo_t = mid
        t = hi_t
        lam = self.tight_lambda(t)
        K_left = self._K(t - 1) if t - 1 >= t_lo else None
        k_left = 1.0 if K_left is None else K_left * (1.0 + 1e-12)
        k_right = self._K(t)

        def h(logk):
            return logk - math.log(float(self.k_required(self.T_of_k(math.exp(logk)), lam)))

        if h(math.log(k_left)) >= 0:
            return k_left
        root = optimize.brentq(h, math.log(k_left), math.log(k_right), xtol=1e-15, rtol=1e-15, maxiter=300)
        return math.exp(root) if h(root) >= 0 else math.exp(root + 1e-15)


def solve_btt_parameters(
    n: float,
    V: float,
    epsilon: float,
    delta: float,
    beta: float,
    m: int,
    gamma: float = 0.0,
    *,
    setting: str = "realizable",
    calibration: str = "tight",
) -> BTTParameters:
    """Solve BTT's loop ``T → α → k → T`` for explicit learners (Theorem 3.2 and BTT §3
    "Explicit misclassification rate"; docs/design.md §4).

    Three relations in the unknown k (the number of teachers):

    1. ``α = α(n/k, β/k)``: Theorem 3.2 needs an ``(α, β/k, n/k)`` learner, so α is the
       teachers' error from ``N = n/k`` samples with failure probability ``β/k`` —
       :func:`realizable_error` (Blumer et al.) or :func:`agnostic_error` (Vapnik);
    2. ``T = max(1, cutoff_T(γ, α, m, β))`` (the algorithm allows at least one ⊥);
    3. ``k = btt_num_teachers(λ, m, T, δ, β)`` with λ from the ``calibration``:
       ``"paper"``: ``λ = btt_noise_scale(T, ε, δ)`` at the real T;
       ``"tight"``: ``calibrate_btt(ε, delta=δ, T=ceil(T), m=m).noise_scale``, a step
       function of T (each step is a privacy-loss-distribution calibration taking
       seconds; the solver needs about ``log2(m)`` of them).

    ``k_req(k)``, the right side of 3 after 1 and 2, grows with k about like
    ``sqrt(k)`` while the teachers' bound stays non-vacuous, so the solution is the
    smallest k with ``k >= k_req(k)``.  Paper calibration: a log-grid scan of ``[1, n]``
    and Brent's method, after which the three relations hold to about 1e-12 relative.
    Tight calibration: equality, or ``k`` just above a step of λ where ``k > k_req``.
    k, T and α are real numbers (the algorithm uses ``ceil``).  Assumptions are those
    of Theorem 3.2 (i.i.d. queries from the data distribution; the bound holds with
    probability ≥ 1 - 2β) and of the chosen VC bound.

    Parameters
    ----------
    n : float
        Number of private rows.
    V : float
        VC dimension of the teachers' class.
    epsilon, delta : float
        The privacy budget.
    beta : float
        Failure probability of Theorem 3.2.
    m : int
        Number of queries.
    gamma : float
        Best error of the class (0 when realizable; enters ``cutoff_T``).
    setting : {"realizable", "agnostic"}
        Which explicit learner bound gives α.
    calibration : {"tight", "paper"}, default "tight"
        How λ follows from T.

    Returns
    -------
    BTTParameters
        ``feasible=False`` with a reason saying "no k works" (and roughly which n would
        be needed) when no k in ``[1, n]`` gives ``k >= k_req(k)`` with a non-vacuous
        teacher bound (α < 1) and a non-vacuous misclassification bound (T < m).

    Examples
    --------
    n = 1e10, V = 10, ε = 1, δ = 1e-5, β = 0.05, m = 1000 (realizable, paper):
    k ≈ 192,769 teachers of 51,876 rows each, α ≈ 0.0150, T ≈ 71.0, bound T/m ≈ 0.071.
    """
    n = float(positive_array(n, "n", "the number of private rows"))
    V = float(positive_array(V, "V", "the VC dimension"))
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    beta = check_beta(beta)
    m = check_m(m)
    gamma = float(unit_array(gamma, "gamma", "the best error of the hypothesis class"))
    check_setting(setting)
    if calibration not in ("paper", "tight"):
        raise ParameterError(f"calibration must be 'paper' or 'tight', got {calibration!r}.")

    def attempt(n_rows, cal):
        loop = _Loop(n_rows, V, epsilon, delta, beta, m, gamma, setting, cal)
        k = loop.solve()
        if k is None:
            return None
        return (k,) + loop.state(k)

    res = attempt(n, calibration)
    if res is not None and res[2] < m:
        k, a, T, lam = res
        return BTTParameters(k=k, T=T, alpha=a, noise_scale=lam, misclassification=T / m, feasible=True)

    # Infeasible.  Feasibility only improves with n, so search for roughly the n that
    # works: doubling, then bisection to 2 %.  (With the tight calibration the search
    # uses the paper calibration, and one tight calibration checks that its λ is not
    # larger there, so that n is enough for the tight calibration too.)
    def works(n_rows):
        r = attempt(n_rows, "paper")
        return r is not None and r[2] < m

    n_cap = 1e18
    hi = max(2.0 * n, 2.0)
    while hi < n_cap and not works(hi):
        hi *= 4.0
    n_needed = None
    if works(min(hi, n_cap)):
        hi = min(hi, n_cap)
        lo = max(n, hi / 4.0)
        while hi / lo > 1.02:
            mid = math.sqrt(lo * hi)
            if works(mid):
                hi = mid
            else:
                lo = mid
        n_needed = hi
    enough_note = ""
    if n_needed is not None and calibration == "tight":
        r = attempt(n_needed, "paper")
        loop = _Loop(n_needed, V, epsilon, delta, beta, m, gamma, setting, "tight")
        if loop.tight_lambda(math.ceil(r[2] - 1e-9)) <= r[3]:
            enough_note = " (enough for the paper calibration, hence for the tight one)"
        else:
            enough_note = " (what the paper calibration needs)"
    if res is None:
        why = (
            f"no k works: with n = {n:,.0f} private rows, every k in [1, n] needs more than k teachers "
            f"(k_req = 34·√2·λ·log(4mT/min(δ, β/2)) exceeds k) or leaves each teacher too few rows "
            f"for a non-vacuous error bound"
        )
        k, a, T, lam = (math.nan,) * 4
    else:
        k, a, T, lam = res
        why = (
            f"no k works: the smallest consistent k = {k:,.0f} gives T = {T:,.1f} >= m = {m}, "
            f"so the misclassification bound T/m is vacuous"
        )
    if n_needed is not None:
        about = f"{float(f'{n_needed:.3g}'):,.0f}"  # three significant digits, written in full
        why += f"; roughly n ≈ {about} private rows would be needed with these settings{enough_note}."
    else:
        why += (
            "; no n up to 10^18 suffices with these settings (T ≥ 3·γ·m whatever the teachers' "
            "accuracy, so a large γ, the best error of the class, alone can make the bound vacuous)."
        )
    return BTTParameters(
        k=k,
        T=T,
        alpha=a,
        noise_scale=lam,
        misclassification=(T / m if math.isfinite(T) else math.nan),
        feasible=False,
        reason=why,
        n_needed=n_needed,
    )
