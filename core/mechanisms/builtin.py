"""The built-in mechanisms' registry entries (one :func:`register` call each).

Imported once by :func:`core.mechanisms.registry.get`/``names``; every caller reaches the
mechanisms through the registry.
"""

from __future__ import annotations

import math
from importlib import import_module
from typing import Any

from core.mechanisms.registry import PARAMETERS as P
from core.mechanisms.registry import Mechanism, register
from core.mechanisms.pictures import builtin_picture

__all__: list[str] = []


# ----------------------------------------------------------------------------- labeling


def _lazy(target: str, **defaults: Any):
    """The function ``module:name``, imported when first called (loading the registry stays
    light), with ``defaults`` filling the keyword arguments a call leaves out."""
    module, _, name = target.partition(":")

    def call(*args: Any, **kwargs: Any):
        return getattr(import_module(module), name)(*args, **{**defaults, **kwargs})

    call.__name__ = call.__qualname__ = name
    return call


def _builtin(name: str, title: str, description: str, **fields: Any) -> Mechanism:
    """Register a built-in mechanism; its test picture and (unless given) its planned ledger
    entry follow from its name."""
    if "picture" not in fields:
        fields["picture"] = builtin_picture(name)
    if "ledger_entry" not in fields:
        fields["ledger_entry"] = _planned(name)
    return register(Mechanism(name=name, title=title, description=description, **fields))


def _noisy_max(name: str, title: str, description: str, *, noise: str, label: str, guarantee: str,
               inverse: str, audit_noise: float, **fields: Any) -> Mechanism:
    """Register a noisy-max mechanism: one noise parameter (derived from ε by ``inverse``), δ,
    every query answered and paid; ``guarantee(noise, n_answers=m, delta=δ)`` is its privacy map."""
    accountant, to_noise = _lazy(guarantee), _lazy(inverse)

    def privacy_map(m: int, *, delta, **params: Any):
        return accountant(params[noise], n_answers=m, delta=delta)

    def spend(epsilon: float, m: int, *, delta, **_: Any) -> dict:
        return {noise: float(to_noise(epsilon, n_answers=m, delta=delta))}

    return _builtin(name, title, description, parameters=(P[noise], P["delta"]), label=_lazy(label),
                    privacy_map=privacy_map, spend=spend, derived=(noise,), per_query=True,
                    audit_defaults={noise: audit_noise, "delta": 1e-5}, **fields)


# ----------------------------------------------------------------------------- privacy maps


def _btt_map(m: int, *, epsilon, delta, T, calibration="tight", **_: Any):
    from core.accounting.btt import calibrate_btt

    return calibrate_btt(epsilon, delta=delta, T=T, m=m, calibration=calibration).guarantee


def _btt_soft_map(m: int, *, epsilon, delta, T, calibration="tight", **_: Any):
    from core.accounting.btt import calibrate_btt

    return calibrate_btt(epsilon, delta=delta, T=T, m=m, calibration=calibration, soft=True).guarantee


def _baseline_map(m: int, *, epsilon, delta, **_: Any):
    from core.accounting.baseline import composition_baseline_parameters

    return composition_baseline_parameters(epsilon, delta=delta, m=m).guarantee


def _a_stab_map(m: int, *, epsilon, delta, **_: Any):
    from core.accounting.baseline import a_stab_guarantee

    return a_stab_guarantee(epsilon, delta=delta, m=m)


# ----------------------------------------------------------------------------- ledger entries


def _planned(name: str):
    def entry(m: int, *, delta, epsilon=None, T=None, calibration="tight", gamma=None, **_: Any):
        from core.ledger.maps import planned_entry

        return planned_entry(name, epsilon=epsilon, delta=delta, m=m, T=T, calibration=calibration, gamma=gamma)

    return entry


def _gnmax_entry(m: int, *, sigma, delta, **_: Any):
    from core.ledger.maps import gnmax_entry

    return gnmax_entry(sigma=sigma, m=m, delta=delta)


def _confident_entry(m: int, *, sigma1, sigma2, delta, accounting="fixed", **_: Any):
    from core.ledger.maps import confident_gnmax_entry

    if accounting == "filter":  # the run's own claim: its Rényi filter's budget at its order (the result's map)
        from core.accounting.rdp import confident_gnmax_guarantee
        from core.ledger.entries import RDPEntry

        alpha = float(confident_gnmax_guarantee(sigma1, sigma2, n_queries=m, delta=delta).parts["order"])
        rho = m * alpha / (2.0 * sigma1 * sigma1) + m * alpha / (sigma2 * sigma2)
        return RDPEntry.filter(order=alpha, rho_budget=rho, delta_conversion=delta, mechanism="confident-gnmax",
                               params={"sigma1": float(sigma1), "sigma2": float(sigma2), "m": int(m),
                                       "accounting": "filter", "order": alpha, "budget": rho},
                               description=f"confident-gnmax under a Rényi filter: budget {rho:.4g} at α = {alpha:g}.")
    return confident_gnmax_entry(sigma1=sigma1, sigma2=sigma2, m=m, delta=delta)


def _baseline_online(m_max: int, rng, *, epsilon, delta):
    from core.mechanisms.a_stab import BaselineSession

    return BaselineSession(m_max, rng, epsilon=epsilon, delta=delta)


def _btt_online(m_max: int, rng, *, epsilon, delta, T, calibration="tight", beta=0.05):
    from core.mechanisms.btt import BTTSession

    return BTTSession(m_max, rng, epsilon=epsilon, delta=delta, T=T, calibration=calibration)


_BTT_TEXT = (
    "**BTT** answers a query only when the vote is *stable*: its distance to instability "
    "(how many private rows must change before the answer can flip) passes a noisy "
    "threshold. Each failed test (an abstention, ⊥) costs budget; after $T$ of them the "
    "mechanism stops. Stable answers cost nothing (the *sparse vector* technique)."
)
_BTT_FORMULAS = (
    r"\text{test: } \mathrm{dist}_i + \mathrm{Lap}(2\lambda) > w + \mathrm{Lap}(\lambda)",
    r"\text{pass} \Rightarrow \hat y_i = \arg\max_c n_c(x_i), \qquad \text{fail} \Rightarrow \bot",
    r"\lambda_{\text{paper}} = \frac{\sqrt{32\,T\log(2/\delta)}}{\varepsilon}, \qquad w_{\text{paper}} = 2\lambda\log(2m/\delta)",
)

_builtin(
    "btt", "BTT, hard labels",
    "Stability + sparse vector (Bassily–Thakkar–Thakurta): answers stable votes for free, pays one round per ⊥, stops after T.",
    parameters=(P["epsilon"], P["delta"], P["T"], P["calibration"], P["beta"]),
    label=_lazy("core.mechanisms.btt:btt_label"),
    privacy_map=_btt_map,
    audit_defaults={"epsilon": 1.0, "delta": 1e-2, "T": 1, "calibration": "tight"},
    explanation=_BTT_TEXT,
    formulas=_BTT_FORMULAS,
    online=_btt_online,
)

_builtin(
    "btt-soft", "BTT, soft labels",
    "BTT on η-bins of the teachers' scores with a second test on shifted bins (binary tasks); releases a score.",
    parameters=(P["epsilon"], P["delta"], P["T"], P["eta"], P["calibration"], P["beta"]),
    label=_lazy("core.mechanisms.soft:btt_soft_label", eta=0.1),
    privacy_map=_btt_soft_map,
    inputs="scores",
    audit_defaults={"epsilon": 1.0, "delta": 1e-2, "T": 1, "eta": 0.25, "calibration": "tight"},
    explanation=_BTT_TEXT + " Soft labels test the histogram of the teachers' scores on bins of width η, "
    "then on bins shifted by η/2, and release the midpoint of the top bin.",
    formulas=_BTT_FORMULAS[:1],
)

_noisy_max(
    "lnmax", "PATE LNMax (Laplace noisy max)",
    "PATE's Laplace noisy max: adds Lap(1/γ) to every vote count and releases the argmax; every query answered and paid.",
    noise="gamma", audit_noise=1.0, label="core.mechanisms.lnmax:lnmax_label",
    guarantee="core.accounting.pate:lnmax_guarantee", inverse="core.accounting.pate:lnmax_gamma_for_epsilon",
    explanation=(
        "**PATE's noisy max** adds Laplace noise to every vote count and releases the class "
        "with the largest noisy count. Every query is answered, and every answer costs "
        "budget, so $\\varepsilon$ grows with the number of queries $m$. One changed teacher moves "
        "two counts by one: the cost is that of two Laplace coordinates per answer, composed exactly."
    ),
    formulas=(
        r"\hat y_i = \arg\max_c \big(n_c(x_i) + \mathrm{Lap}(1/\gamma)\big)",
        r"\varepsilon = \varepsilon_\delta\big(2m \text{ Laplace coordinates of scale } 1/\gamma\big) \le \min\Big(4m\gamma^2 + 2\gamma\sqrt{2m\log(1/\delta)},\ \text{optimal composition of } m \text{ steps of } 2\gamma\Big)",
    ),
    data_dependent="PATE's data-dependent moments-accountant ε (a NON-PRIVATE diagnostic)",
)

_builtin(
    "baseline", "Advanced-composition baseline",
    "A_stab on every query at a per-query budget, composed by advanced composition: the baseline BTT beats.",
    parameters=(P["epsilon"], P["delta"]),
    label=_lazy("core.mechanisms.a_stab:composition_baseline_label"),
    privacy_map=_baseline_map,
    audit_defaults={"epsilon": 1.0, "delta": 1e-2},
    explanation=(
        "**The baseline** answers every query on its own with the one-query stability "
        "mechanism $A_{\\mathrm{stab}}$ at a small per-query budget $\\varepsilon_0$, and adds up the "
        "cost with the advanced composition theorem. BTT improves on it by paying only for ⊥."
    ),
    formulas=(r"\varepsilon = \sqrt{2m\log(1/\delta')}\,\varepsilon_0 + m\,\varepsilon_0\,(e^{\varepsilon_0}-1)",),
    online=_baseline_online,
)

_builtin(
    "a-stab", "Stability test on each query alone (ε per query)",
    "A_stab (BTT Thm 2.4) at (ε, δ) on each query independently; the run reports basic composition (m ε, m δ).",
    parameters=(P["epsilon"], P["delta"]),
    label=_lazy("core.mechanisms.a_stab:a_stab_label"),
    privacy_map=_a_stab_map,
    audit_defaults={"epsilon": 1.0, "delta": 1e-2},
    explanation=(
        "**$A_{\\mathrm{stab}}$** releases the plurality label of one query when its distance to "
        "instability plus Laplace noise passes $\\log(1/\\delta)/\\varepsilon$. Each query costs (ε, δ)."
    ),
    formulas=(r"\mathrm{dist}_i + \mathrm{Lap}(1/\varepsilon) > \log(1/\delta)/\varepsilon",),
    per_query=True,
)


# ----------------------------------------------------------------------------- Gaussian family


def _default_threshold(counts, threshold):
    """t = 0.8 × the number of teachers when not given (a public choice: k is public)."""
    import numpy as np

    return 0.8 * float(np.asarray(counts)[0].sum()) if threshold is None else threshold


def _confident(counts, *, threshold, sigma1, sigma2, delta, ratio=3.75, accounting="fixed", rng=None):
    from core.mechanisms.gaussian import confident_gnmax_label

    return confident_gnmax_label(counts, threshold=_default_threshold(counts, threshold), sigma1=sigma1,
                                 sigma2=sigma2, delta=delta, accounting=accounting, rng=rng)


def _confident_map(m: int, *, sigma1, sigma2, delta, **_: Any):
    from core.accounting.rdp import confident_gnmax_guarantee

    return confident_gnmax_guarantee(sigma1, sigma2, n_queries=m, delta=delta)


def _confident_spend(epsilon: float, m: int, *, delta, ratio=3.75, **_: Any) -> dict:
    from core.accounting.rdp import confident_gnmax_sigmas_for_epsilon

    s1, s2 = confident_gnmax_sigmas_for_epsilon(epsilon, n_queries=m, delta=delta, ratio=ratio)
    return {"sigma1": float(s1), "sigma2": float(s2)}


def _certified(counts, *, epsilon, delta, threshold=None, rng=None):
    from core.mechanisms.certified import certified_confident_gnmax_label

    return certified_confident_gnmax_label(counts, epsilon=epsilon, delta=delta,
                                           threshold=_default_threshold(counts, threshold), rng=rng)


def _certified_map(m: int, *, epsilon, delta, **_: Any):
    from core.accounting.guarantee import PrivacyGuarantee

    return PrivacyGuarantee(
        float(epsilon), float(delta), "certified",
        "Certified Confident-GNMax: its public parameters (order, RDP budget B, smoothing β, "
        "test noises, failure probabilities) are chosen from the target so that ε_test + ε_B ≤ ε "
        "and δ_test + δ_B + δ′ + δ″ ≤ δ; the run reports the exact value.",
    )


def _gnmax_diagnostic(counts, result) -> float:
    """NON-PRIVATE: PATE 2018's data-dependent ε of a GNMax run on these votes."""
    from core.accounting.data_dependent import gnmax_rdp_data_dependent
    from core.accounting.rdp import ORDERS, rdp_to_dp

    p = result.params
    rho = gnmax_rdp_data_dependent(counts, sigma=p["sigma"], orders=ORDERS).sum(axis=0)
    return float(rdp_to_dp(rho, delta=p["delta_target"], orders=ORDERS)[0])


def _confident_diagnostic(counts, result) -> float:
    """NON-PRIVATE: PATE 2018's data-dependent ε of a Confident-GNMax run on these votes
    (the threshold step on every processed query, GNMax on the answered ones)."""
    import numpy as np

    from core.accounting.data_dependent import confident_gnmax_epsilon_data_dependent

    p = result.params
    processed = result.labels != -2
    return float(confident_gnmax_epsilon_data_dependent(
        np.asarray(counts)[processed], threshold=p["threshold"], sigma1=p["sigma1"], sigma2=p["sigma2"],
        delta=p["delta_target"], answered=result.answered[processed]))


_GAUSS_FORMULAS = (r"\hat y_i = \arg\max_c \big(n_c(x_i) + \mathcal{N}(0, \sigma^2)\big), \qquad \rho(\alpha) = \alpha/\sigma^2 \text{ per answer}",)

_noisy_max(
    "gnmax", "PATE 2018 GNMax (Gaussian noisy max)",
    "Gaussian noisy max: adds N(0, σ²) to every vote count and releases the argmax; Rényi accounting α/σ² per answer.",
    noise="sigma", audit_noise=2.5, label="core.mechanisms.gaussian:gnmax_label",
    guarantee="core.accounting.rdp:gnmax_guarantee", inverse="core.accounting.rdp:gnmax_sigma_for_epsilon",
    explanation=(
        "**GNMax** (PATE 2018) adds Gaussian noise to every vote count and releases the class "
        "with the largest noisy count. Every query is answered and paid, but Rényi-DP "
        "accounting composes Gaussian answers far more cheaply than Laplace ones."
    ),
    formulas=_GAUSS_FORMULAS,
    ledger_entry=_gnmax_entry,
    diagnostic=_gnmax_diagnostic,
    data_dependent="PATE 2018's data-dependent Rényi ε (a NON-PRIVATE diagnostic)",
)

_builtin(
    "confident-gnmax", "PATE 2018 Confident-GNMax",
    "Answers only queries whose noisy top vote reaches a threshold t (else ⊥), then GNMax; Rényi accounting.",
    parameters=(P["threshold"], P["sigma1"], P["sigma2"], P["delta"], P["ratio"], P["accounting"]),
    label=_confident,
    privacy_map=_confident_map,
    spend=_confident_spend,
    derived=("sigma1", "sigma2"),
    audit_defaults={"threshold": 10.0, "sigma1": 1.75, "sigma2": 50.0, "delta": 1e-5},
    explanation=(
        "**Confident-GNMax** (PATE 2018) first checks, with Gaussian noise σ1, that the teachers "
        "agree (top count ≥ t); only then it answers with GNMax (noise σ2), else ⊥. Each query "
        "costs α/(2σ1²) for the test and α/σ2² for an answer, charged in advance (or under a "
        "Rényi filter)."
    ),
    formulas=(r"\max_c n_c(x_i) + \mathcal{N}(0, \sigma_1^2) \ge t \Rightarrow \arg\max_c \big(n_c(x_i) + \mathcal{N}(0, \sigma_2^2)\big), \text{ else } \bot",),
    per_query=True,
    ledger_entry=_confident_entry,
    diagnostic=_confident_diagnostic,
    data_dependent="PATE 2018's data-dependent Rényi ε (a NON-PRIVATE diagnostic)",
)

_builtin(
    "certified-gnmax", "Certified Confident-GNMax (data-dependent, propose–test–release)",
    "Confident-GNMax released only if a noisy, smoothed test certifies its data-dependent Rényi cost is within budget; a real (ε, δ) for every dataset.",
    ledger_entry=None,
    parameters=(P["epsilon"], P["delta"], P["threshold"]),
    label=_certified,
    privacy_map=_certified_map,
    explanation=(
        "**Certified Confident-GNMax** measures how little the teachers' agreement reveals "
        "(PATE 2018's data-dependent Rényi analysis), smooths and noises that measurement, and "
        "releases the labels only if the noisy test says the cost is within a budget fixed in "
        "advance (propose–test–release). On a fail no label is released; the test's cost is spent."
    ),
    formulas=(r"\text{pass} \iff \tilde E + \hat S\,\sigma_s z(\delta') \le B, \qquad \varepsilon = \varepsilon_{\text{test}} + \varepsilon_B",),
    data_dependent="the data-dependent ε of the released labels (a NON-PRIVATE diagnostic)",
)


# ----------------------------------------------------------------------------- DP training (reads the private rows)


def _dp_logistic(rows, *, epsilon, delta, C=None, perturbation="gaussian", rows_per_unit=1, rng=None):
    from core.mechanisms.dp_training import dp_logistic_label

    return dp_logistic_label(rows, epsilon=epsilon, delta=delta, C=C, perturbation=perturbation,
                             rows_per_unit=1 if rows_per_unit is None else rows_per_unit, rng=rng)


def _dp_logistic_map(m: int, *, epsilon, delta, perturbation="gaussian", **_: Any):
    from core.accounting.dp_training import logistic_guarantee

    return logistic_guarantee(epsilon, delta, perturbation=perturbation)


def _dp_logistic_entry(m: int, *, epsilon, delta, perturbation="gaussian", C=None, **_: Any):
    from core.ledger.entries import ApproxDPEntry, PureDPEntry

    public = {"epsilon": float(epsilon), "perturbation": perturbation, **({} if C is None else {"C": float(C)})}
    if perturbation == "gamma":
        return PureDPEntry(steps=((float(epsilon), 1),), mechanism="dp-logistic", params=public,
                           description="DP logistic regression (objective perturbation, pure ε) labeling every public row")
    return ApproxDPEntry(epsilon=float(epsilon), delta=float(delta), mechanism="dp-logistic", params=public,
                         description="DP logistic regression (Gaussian objective perturbation) labeling every public row")


def _dp_naive_bayes(rows, *, epsilon, delta, rows_per_unit=1, rng=None):
    from core.mechanisms.dp_training import dp_naive_bayes_label

    return dp_naive_bayes_label(rows, epsilon=epsilon, delta=delta,
                                rows_per_unit=1 if rows_per_unit is None else rows_per_unit, rng=rng)


def _dp_naive_bayes_map(m: int, *, epsilon, delta, **_: Any):
    from core.accounting.dp_training import naive_bayes_guarantee

    return naive_bayes_guarantee(epsilon, delta)


def _dp_naive_bayes_entry(m: int, *, epsilon, delta, **_: Any):
    from core.accounting.dp_training import naive_bayes_mu_sq
    from core.ledger.maps import gaussian_entry

    mu_sq = naive_bayes_mu_sq(epsilon, delta)
    return gaussian_entry(mu_sq=mu_sq, delta=float(delta), mechanism="dp-naive-bayes",
                          description=f"DP Gaussian naive Bayes: one Gaussian mechanism of μ² = {mu_sq:.4g} "
                          f"(noise multiplier z = {1.0 / math.sqrt(mu_sq):.4g}), exact accounting",
                          params={"epsilon": float(epsilon)})


from core.mechanisms.registry import Parameter  # noqa: E402  (this section's own parameters)

_C = Parameter(
    "C", "float", None, "regularization C",
    "Inverse regularization of the DP logistic regression (penalty ‖w‖²/(2Cn)); left out, it follows "
    "from public quantities (rows, columns, ε).",
    low=1e-4, high=10.0, log=True, metavar="C", optional=True,
)
_ROWS_PER_UNIT = Parameter(
    "rows_per_unit", "int", 1, "rows per person",
    "With a privacy unit (persons): at most this many rows of each person are used, chosen at random "
    "(never by their values), and the noise is scaled for them (docs/design.md §12.6). Per row it is unused.",
    low=1, high=20, metavar="R",
)
_PERTURBATION = Parameter(
    "perturbation", "choice", "gaussian", "noise",
    "'gaussian': Gaussian objective perturbation, (ε, δ); 'gamma': a noise vector of Gamma-distributed "
    "norm, pure ε (δ unused).",
    choices=("gaussian", "gamma"), metavar="P",
    choice_words=("Gaussian noise, (ε, δ)", "noise of Gamma-distributed norm, pure ε"),
)

_builtin(
    "dp-logistic", "DP logistic regression (trained on the private rows)",
    "One logistic regression trained on all private rows by objective perturbation labels every public row; "
    "its cost does not grow with the number of queries.",
    picture=None,
    parameters=(P["epsilon"], P["delta"], _C, _PERTURBATION, _ROWS_PER_UNIT),
    label=_dp_logistic,
    privacy_map=_dp_logistic_map,
    inputs="rows",
    audit_defaults={"epsilon": 1.0, "delta": 1e-5, "C": 0.1, "perturbation": "gamma"},
    explanation=(
        "**DP training** skips the teachers: one logistic regression is trained on all private rows "
        "with a random linear term added to its objective (objective perturbation), and the released "
        "model labels every public row. Feature ranges and categories come from the public rows, so "
        "each row's norm is bounded without looking at the private data."
    ),
    formulas=(
        r"\hat w = \arg\min_w \frac1n\sum_i \log\big(1+e^{-y_i w^\top x_i}\big) + \frac{\Lambda+\Delta}{2}\|w\|^2 + \frac{b^\top w}{n}",
        r"b \sim \mathcal{N}\Big(0, \tfrac{R^2(8\log(2/\delta)+4\varepsilon)}{\varepsilon^2} I\Big) \ \text{or}\ \|b\| \sim \Gamma\big(d, 2R/\varepsilon'\big)",
    ),
    ledger_entry=_dp_logistic_entry,
)

_builtin(
    "dp-naive-bayes", "DP Gaussian naive Bayes (trained on the private rows)",
    "A Gaussian naive Bayes from noisy class counts, sums and sums of squares of the private rows "
    "labels every public row; its cost does not grow with the number of queries.",
    picture=None,
    parameters=(P["epsilon"], P["delta"], _ROWS_PER_UNIT),
    label=_dp_naive_bayes,
    privacy_map=_dp_naive_bayes_map,
    inputs="rows",
    audit_defaults={"epsilon": 1.0, "delta": 1e-5},
    explanation=(
        "**DP naive Bayes** releases each class's row count and, per feature, the sum and the sum of "
        "squares of its rows, each with Gaussian noise; the means and variances computed from them "
        "define a Gaussian naive Bayes that labels every public row."
    ),
    formulas=(r"\tilde S_c = \sum_{i: y_i = c} u_i + \mathcal{N}(0, \sigma_S^2 I), \qquad "
              r"\delta = \Phi\big(-\varepsilon z + \tfrac{1}{2z}\big) - e^{\varepsilon}\,\Phi\big(-\varepsilon z - \tfrac{1}{2z}\big)",),
    ledger_entry=_dp_naive_bayes_entry,
)
