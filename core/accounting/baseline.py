"""A_stab's threshold and the advanced-composition baseline's per-query budget
(docs/design.md §3.1, §3.5)."""

from __future__ import annotations

from dataclasses import dataclass

import math

from core.accounting.composition import (
    advanced_composition_eps0,
    advanced_composition_epsilon,
)
from core.accounting.guarantee import PrivacyGuarantee
from core.validation import (
    check_delta,
    check_epsilon,
    check_m,
    check_probability,
)

__all__ = [
    "BaselineParameters", "a_stab_guarantee", "a_stab_threshold", "composition_baseline_parameters"]


# ---------------------------------------------------------------------------
# A_stab and the advanced-composition baseline
# ---------------------------------------------------------------------------

def a_stab_threshold(epsilon: float, *, delta: float) -> float:
    """``Γ = log(1/δ)/ε``: A_stab releases when ``dist + Lap(1/ε) > Γ`` (BTT Thm 2.4).

    With discrete Laplace noise ``P[Z > Γ] = p^(⌊Γ⌋+1)/(1+p) < e^(-εΓ) = δ`` for
    ``p = e^(-ε)``, so the (ε, δ) guarantee holds as for continuous noise.

    Parameters
    ----------
    epsilon : float
        Per-query ε of A_stab, > 0 (the noise is ``Lap(1/ε)``, discrete).
    delta : float
        Per-query δ in (0, 1).

    Returns
    -------
    float
        The release threshold Γ on the distance to instability (in votes).

    References
    ----------
    R. Bassily, O. Thakkar, A. Thakurta, "Model-Agnostic Private Learning", NeurIPS 2018 (Theorem 2.4).
    docs/design.md §3.1.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_probability(delta, "delta")
    return math.log(1.0 / delta) / epsilon


@dataclass(frozen=True)
class BaselineParameters:
    """The advanced-composition baseline's per-query budget for ``m`` queries.

    Attributes
    ----------
    eps0, delta0 : float
        Each A_stab answer is (ε0, δ0)-DP.
    delta_prime : float
        The advanced composition's slack δ' (0 for basic composition).
    threshold : float
        A_stab's threshold ``Γ = log(1/δ0)/ε0``.
    composition : {"advanced", "basic"}
    guarantee : PrivacyGuarantee
        The guarantee of all ``m`` answers.
    m : int
    """

    eps0: float
    delta0: float
    delta_prime: float
    threshold: float
    composition: str
    guarantee: PrivacyGuarantee
    m: int

    def spent(self, n: int) -> PrivacyGuarantee:
        """The guarantee of the first ``n <= m`` answers (the same per-query budget).

        Parameters
        ----------
        n : int
            Number of A_stab answers released so far (``n <= m``).

        Returns
        -------
        PrivacyGuarantee
            (ε, δ) of those ``n`` answers: basic composition ``(n·eps0, n·delta0)``, or
            advanced composition ``(ε_adv, n·delta0 + delta_prime)`` when that ε is smaller;
            ``(0, 0)`` with method ``"none"`` for ``n <= 0``.

        References
        ----------
        C. Dwork, G. N. Rothblum, S. Vadhan, "Boosting and Differential Privacy", FOCS 2010 (advanced composition).
        C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy",
        Foundations and Trends in Theoretical Computer Science 9(3–4), 2014 (Theorem 3.20).
        docs/design.md §3.5.
        """
        if n <= 0:
            return PrivacyGuarantee(0.0, 0.0, "none", "No query answered yet.")
        eps_basic = self.eps0 * n
        if self.composition == "basic":
            return PrivacyGuarantee(eps_basic, n * self.delta0, "composition/basic", f"{n} A_stab answers, basic composition.")
        eps_adv = float(advanced_composition_epsilon(self.eps0, n, self.delta_prime))
        if eps_basic <= eps_adv:
            return PrivacyGuarantee(eps_basic, n * self.delta0, "composition/basic", f"{n} A_stab answers, basic composition.")
        return PrivacyGuarantee(eps_adv, n * self.delta0 + self.delta_prime, "composition/advanced",
                                f"{n} A_stab answers, advanced composition with δ' = {self.delta_prime:.3g}.")


def composition_baseline_parameters(epsilon: float, *, delta: float, m: int) -> BaselineParameters:
    """Per-query (ε0, δ0) for answering ``m`` queries with A_stab (docs/design.md §3.5).

    Two ways to spend (ε, δ) on m answers are compared and the one giving the lower
    A_stab threshold ``Γ = log(1/δ0)/ε0`` (so more answers) is used:

    * advanced composition: ``δ' = δ/2``, ``δ0 = δ/(2m)`` and ``ε0`` solves
      ``sqrt(2m log(1/δ')) ε0 + m ε0 (e^ε0 − 1) = ε``;
    * basic composition (better for small m): ``ε0 = ε/m``, ``δ0 = δ/m``.

    Parameters
    ----------
    epsilon : float
        Total ε target for the ``m`` answers, > 0.
    delta : float
        Total δ target in (0, 1).
    m : int
        Number of queries (A_stab answers), >= 1.

    Returns
    -------
    BaselineParameters

    References
    ----------
    R. Bassily, O. Thakkar, A. Thakurta, "Model-Agnostic Private Learning", NeurIPS 2018 (Theorem 2.4, A_stab).
    C. Dwork, G. N. Rothblum, S. Vadhan, "Boosting and Differential Privacy", FOCS 2010.
    C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy",
    Foundations and Trends in Theoretical Computer Science 9(3–4), 2014 (Theorem 3.20).
    docs/design.md §3.5.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    m = check_m(m)
    adv = {"eps0": float(advanced_composition_eps0(epsilon, m, delta / 2.0)), "delta0": delta / (2.0 * m),
           "delta_prime": delta / 2.0, "composition": "advanced"}
    basic = {"eps0": epsilon / m, "delta0": delta / m, "delta_prime": 0.0, "composition": "basic"}
    for option in (adv, basic):
        option["threshold"] = a_stab_threshold(option["eps0"], delta=option["delta0"])
    par = min((adv, basic), key=lambda o: o["threshold"])
    eps0, delta0, how = par["eps0"], par["delta0"], par["composition"]
    if how == "advanced":
        total_eps = float(advanced_composition_epsilon(eps0, m, par["delta_prime"]))
        total_delta = m * delta0 + par["delta_prime"]
    else:
        total_eps, total_delta = eps0 * m, m * delta0
    par["guarantee"] = PrivacyGuarantee(
        epsilon=total_eps,
        delta=total_delta,
        method=f"composition/{how}",
        detail=(
            f"{m} independent A_stab answers, each ({eps0:.4g}, {delta0:.3g})-DP, composed by "
            f"{how} composition" + (f" with δ' = {par['delta_prime']:.3g}." if how == "advanced" else ".")
        ),
        parts={"eps0": eps0, "delta0": delta0, "delta_prime": par["delta_prime"]},
    )
    return BaselineParameters(m=m, **par)


def a_stab_guarantee(epsilon: float, *, delta: float, m: int) -> PrivacyGuarantee:
    """The guarantee of ``m`` independent ``A_stab`` answers, each (ε, δ)-DP (BTT Thm 2.4).

    Basic composition: ``(m ε, min(1, m δ))`` under replace-one adjacency.

    Parameters
    ----------
    epsilon, delta : float
        The per-query guarantee.
    m : int
        The number of queries.

    Returns
    -------
    PrivacyGuarantee
    """
    return PrivacyGuarantee(
        m * epsilon, min(1.0, m * delta), "basic",
        f"{m} independent A_stab answers, each ({epsilon:.4g}, {delta:.3g})-DP, by basic composition.",
    )
