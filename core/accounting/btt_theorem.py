"""Theorem 3.2: the cutoff ``T`` (:func:`cutoff_T`), the misclassification bound, and the
theorem's conditions checked for one run (:func:`theorem_32_conditions`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from core.validation import check_beta

from core.accounting.btt import cutoff_T, misclassification_bound
from core.validation import FloatOrArray, each_checked, as_output, positive_array, unit_array

__all__ = ["Condition", "Theorem32Check", "cutoff_T", "misclassification_bound", "theorem_32_conditions"]


# ---------------------------------------------------------------------------------------
# Theorem 3.2's conditions for one run
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Condition:
    """One condition of a theorem, checked for a run.

    Attributes
    ----------
    name : str
        What the condition is about, in a few words ("two classes", "cutoff T", ...).
    holds : bool
        Whether the run meets it.
    needed : str
        What the theorem asks for, with the number ("T ≥ 29").
    have : str
        What the run has ("T = 5").
    fix : str
        What would meet it, in words (empty when it holds).
    """

    name: str
    holds: bool
    needed: str
    have: str
    fix: str = ""


@dataclass(frozen=True)
class Theorem32Check:
    """Theorem 3.2 (BTT) checked for one run: its conditions, and its bound only where they hold.

    Attributes
    ----------
    conditions : tuple of Condition
        Two classes; the cutoff the run uses reaches the theorem's cutoff for the
        teachers' error; the run has the theorem's number of teachers for that cutoff;
        the bound says something (below 1).
    error : float
        The teachers' error γ + α the check used (the worst teacher's, NON-PRIVATE when
        measured on true labels).
    T_needed : float
        The theorem's cutoff ``3(e·m + √(e·m·log(m/β)/2))`` for that error.
    k_needed : float
        Algorithm 2's number of teachers ``34√2·λ·log(4mT/min(δ, β/2))`` at the run's
        cutoff T, with ``λ = √(32 T log(2/δ))/ε``.
    T, k, m : int
        The run's cutoff, teachers and queries.
    epsilon, delta, beta : float
        The run's target guarantee and the theorem's failure probability.
    bound : float or None
        The misclassification bound ``T/m`` for the cutoff the run uses, with probability
        at least ``1 − 2β``; None unless every condition holds.
    """

    conditions: tuple
    error: float
    T_needed: float
    k_needed: float
    T: int
    k: int
    m: int
    epsilon: float
    delta: float
    beta: float
    bound: float | None

    @property
    def holds(self) -> bool:
        """Whether every condition holds (the bound applies to this run)."""
        return all(c.holds for c in self.conditions)

    @property
    def failing(self) -> tuple:
        """The conditions the run does not meet."""
        return tuple(c for c in self.conditions if not c.holds)

    def sentence(self) -> str:
        """The check in words: the bound where it applies, else which condition fails and what would meet it."""
        if self.holds:
            return (f"Theorem 3.2 applies to this run: at most T/m = {self.T}/{self.m:,} = {self.bound:.3g} of the "
                    f"queries are misclassified, with probability at least {1 - 2 * self.beta:g}.")
        parts = [f"{c.name}: it needs {c.needed}, this run has {c.have}; {c.fix}" for c in self.failing]
        return ("Theorem 3.2 does not apply to this run, so no bound is shown. "
                + " ".join(f"({i + 1}) {p}." for i, p in enumerate(parts)))


_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def _whole(x: float) -> str:
    """A whole number as a student reads it: 36,600 below 10⁷, else 1.28 × 10⁸ (never 1.28e+08)."""
    if abs(x) < 1e7:
        return f"{x:,.0f}"
    mantissa, exponent = f"{x:.2e}".split("e")
    return f"{float(mantissa):g} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def _plain(x: float) -> str:
    """Three significant digits as a student reads them: 3,660 rather than 3.66e+03."""
    y = float(f"{x:.3g}")
    return _whole(y) if abs(y) >= 1000 else f"{y:g}"


def theorem_32_conditions(*, teacher_error: float, k: int, T: int, m: int, epsilon: float, delta: float,
                          beta: float, n_classes: int = 2, n_private: int | None = None) -> Theorem32Check:
    """Check BTT Theorem 3.2's conditions for a run, and give its bound only where they hold.

    Theorem 3.2 (BTT 2018) is about Algorithm 2 run with the cutoff
    ``T = 3((γ+α)m + √((γ+α)m log(m/β)/2))`` and ``k = 34√2·λ·log(4mT/min(δ, β/2))``
    teachers, each an ``(α, β/k, n/k)`` learner, on two classes.  Then, with probability at
    least ``1 − 2β``, the run answers all m queries with at most T ⊥, and misclassifies at
    most ``T/m`` of them.  A run at another cutoff or with fewer teachers is outside it:

    * **two classes**: the theorem is stated for binary labels;
    * **cutoff**: the run's T must reach the theorem's T for the teachers' error
      (:func:`cutoff_T`): a smaller T may halt before the ⊥ the theorem allows;
    * **teachers**: the run's k must reach Algorithm 2's k at the run's T
      (:func:`core.accounting.btt.btt_num_teachers`): fewer teachers leave a ``2k/3`` majority short of
      the noisy threshold;
    * **a bound that says something**: ``T/m < 1``.

    Parameters
    ----------
    teacher_error : float
        γ + α: the teachers' error rate, in [0, 1].  Every teacher must err at most this
        often, so pass the worst teacher's error (measured on held-out labels it is a
        NON-PRIVATE diagnostic).
    k, T, m : int
        The run's teachers, cutoff and queries.
    epsilon, delta : float
        The run's target guarantee.
    beta : float
        The theorem's failure probability, in (0, 1).
    n_classes : int
        Classes of the task.
    n_private : int, optional
        Private rows; with it the teachers' fix says how many rows each teacher would get.

    Returns
    -------
    Theorem32Check

    References
    ----------
    R. Bassily, O. Thakkar, A. Thakurta, "Model-Agnostic Private Learning", NeurIPS 2018
    (Algorithm 2, Theorem 3.2, Lemma 3.3).  docs/design.md §4.

    Examples
    --------
    Teachers of error 0.005 on m = 2,000 queries at β = 0.05 need ``T ≥ 51.8``; a run
    with T = 5 is outside the theorem.
    """
    from core.accounting.btt import btt_noise_scale, btt_num_teachers

    e = float(unit_array(teacher_error, "teacher_error", "the teachers' error"))
    beta = float(each_checked(check_beta, beta, "beta"))
    k, T, m, n_classes = int(k), int(T), int(m), int(n_classes)
    eps, delta = float(epsilon), float(delta)
    T_needed = float(cutoff_T(e, 0.0, m, beta))
    k_needed = float(btt_num_teachers(btt_noise_scale(T, eps, delta), m, T, delta, beta))
    conds = [Condition("two classes", n_classes == 2, "two classes", f"{n_classes}",
                       "" if n_classes == 2 else "the theorem is stated for binary labels; pick a two-class data set")]
    fix_T = ""
    if T < T_needed:
        # The largest error whose cutoff the run's T reaches: cutoff_T is increasing in e.
        lo, hi = 0.0, e
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if cutoff_T(mid, 0.0, m, beta) <= T else (lo, mid)
        if lo > 0:  # two significant digits, rounded down: that error's cutoff is still within T
            unit = 10.0 ** (math.floor(math.log10(lo)) - 1)
            lo = math.floor(lo / unit) * unit
        fix_T = (f"raise the cutoff T to {math.ceil(T_needed)} (each extra ⊥ round costs privacy), or use "
                 f"teachers whose error is at most {lo:.2g}")
    conds.append(Condition("cutoff T", T >= T_needed, f"T ≥ {_plain(T_needed)} for teachers of error {e:.3g} on "
                           f"{m:,} queries", f"T = {T}", fix_T))
    fix_k = ""
    if k < k_needed:
        fix_k = f"use at least {_whole(math.ceil(k_needed))} teachers"
        if n_private:
            per = n_private / math.ceil(k_needed)
            fix_k += (f" ({_plain(float(f'{per:.2g}'))} private rows each from your {n_private:,})" if per >= 1 else
                      f", more than your {n_private:,} private rows can give one row each")
        fix_k += f", or raise ε to {_plain(eps * k_needed / max(k, 1))} (k grows like 1/ε)"
    conds.append(Condition("number of teachers k", k >= k_needed, f"k ≥ {_whole(math.ceil(k_needed))} at T = {T}, "
                           f"ε = {eps:g}, δ = {delta:g}", f"k = {k:,}", fix_k))
    said = T / m < 1.0
    conds.append(Condition("a bound below 1", said, "T/m < 1", f"T/m = {T / m:.3g}",
                           "" if said else "more queries m than the cutoff T"))
    check = Theorem32Check(conditions=tuple(conds), error=e, T_needed=T_needed, k_needed=k_needed, T=T, k=k, m=m,
                           epsilon=eps, delta=delta, beta=beta, bound=None)
    if check.holds:
        check = dataclasses.replace(check, bound=T / m)
    return check
