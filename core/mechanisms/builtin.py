"""The built-in mechanisms' registry entries (one :func:`register` call each).

Imported once by :func:`core.mechanisms.registry.get`/``names``; every caller reaches the
mechanisms through the registry.
"""

from __future__ import annotations

from typing import Any

from core.mechanisms.registry import PARAMETERS as P
from core.mechanisms.registry import Mechanism, register

__all__: list[str] = []


# ----------------------------------------------------------------------------- labeling


def _btt(counts, *, epsilon, delta, T, calibration="tight", beta=0.05, rng=None):
    from core.mechanisms.btt import btt_label

    return btt_label(counts, epsilon=epsilon, delta=delta, T=T, calibration=calibration, beta=beta, rng=rng)


def _btt_soft(scores, *, epsilon, delta, T, eta=0.1, calibration="tight", beta=0.05, rng=None):
    from core.mechanisms.soft import btt_soft_label

    return btt_soft_label(scores, epsilon=epsilon, delta=delta, T=T, eta=eta, calibration=calibration, beta=beta, rng=rng)


def _lnmax(counts, *, gamma, delta, rng=None):
    from core.mechanisms.lnmax import lnmax_label

    return lnmax_label(counts, gamma=gamma, delta=delta, rng=rng)


def _baseline(counts, *, epsilon, delta, rng=None):
    from core.mechanisms.a_stab import composition_baseline_label

    return composition_baseline_label(counts, epsilon=epsilon, delta=delta, rng=rng)


def _a_stab(counts, *, epsilon, delta, rng=None):
    from core.mechanisms.a_stab import a_stab_label

    return a_stab_label(counts, epsilon=epsilon, delta=delta, rng=rng)


# ----------------------------------------------------------------------------- privacy maps


def _btt_map(m: int, *, epsilon, delta, T, calibration="tight", **_: Any):
    from core.accounting.btt import calibrate_btt

    return calibrate_btt(epsilon, delta, T, m, calibration).guarantee


def _btt_soft_map(m: int, *, epsilon, delta, T, calibration="tight", **_: Any):
    from core.accounting.btt import calibrate_btt

    return calibrate_btt(epsilon, delta, T, m, calibration, soft=True).guarantee


def _lnmax_map(m: int, *, gamma, delta, **_: Any):
    from core.accounting.pate import lnmax_guarantee

    return lnmax_guarantee(gamma, m, delta)


def _lnmax_spend(epsilon: float, m: int, *, delta, **_: Any) -> dict:
    from core.accounting.pate import lnmax_gamma_for_epsilon

    return {"gamma": float(lnmax_gamma_for_epsilon(epsilon, m, delta))}


def _baseline_map(m: int, *, epsilon, delta, **_: Any):
    from core.accounting.baseline import composition_baseline_parameters

    return composition_baseline_parameters(epsilon, delta, m).guarantee


def _a_stab_map(m: int, *, epsilon, delta, **_: Any):
    from core.accounting.baseline import a_stab_guarantee

    return a_stab_guarantee(epsilon, delta, m)


# ----------------------------------------------------------------------------- audit


def _audit(name: str):
    def scenario(pair: str | None = None, **settings: Any):
        from core.audit.engine import builtin_scenario

        return builtin_scenario(name, pair=pair, **settings)

    return scenario


def _pairs(name: str):
    def pairs() -> tuple[list[str], str]:
        from core.audit.engine import builtin_pairs

        return builtin_pairs(name)

    return pairs


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

register(Mechanism(
    name="btt",
    title="BTT, hard labels",
    description="Stability + sparse vector (Bassily–Thakkar–Thakurta): answers stable votes for free, pays one round per ⊥, stops after T.",
    parameters=(P["epsilon"], P["delta"], P["T"], P["calibration"], P["beta"]),
    label=_btt,
    privacy_map=_btt_map,
    audit=_audit("btt"),
    audit_pairs=_pairs("btt"),
    audit_defaults={"epsilon": 1.0, "delta": 1e-2, "T": 1, "calibration": "tight"},
    explanation=_BTT_TEXT,
    formulas=_BTT_FORMULAS,
    online=_btt_online,
))

register(Mechanism(
    name="btt-soft",
    title="BTT, soft labels",
    description="BTT on η-bins of the teachers' scores with a second test on shifted bins (binary tasks); releases a score.",
    parameters=(P["epsilon"], P["delta"], P["T"], P["eta"], P["calibration"], P["beta"]),
    label=_btt_soft,
    privacy_map=_btt_soft_map,
    inputs="scores",
    audit=_audit("btt-soft"),
    audit_pairs=_pairs("btt-soft"),
    audit_defaults={"epsilon": 1.0, "delta": 1e-2, "T": 1, "eta": 0.25, "calibration": "tight"},
    explanation=_BTT_TEXT + " Soft labels test the histogram of the teachers' scores on bins of width η, "
    "then on bins shifted by η/2, and release the midpoint of the top bin.",
    formulas=_BTT_FORMULAS[:1],
))

register(Mechanism(
    name="lnmax",
    title="PATE LNMax (Laplace noisy max)",
    description="PATE's Laplace noisy max: adds Lap(1/γ) to every vote count and releases the argmax; every query answered and paid.",
    parameters=(P["gamma"], P["delta"]),
    label=_lnmax,
    privacy_map=_lnmax_map,
    spend=_lnmax_spend,
    derived=("gamma",),
    audit=_audit("lnmax"),
    audit_pairs=_pairs("lnmax"),
    audit_defaults={"gamma": 1.0, "delta": 1e-5},
    explanation=(
        "**PATE's noisy max** adds Laplace noise to every vote count and releases the class "
        "with the largest noisy count. Every query is answered, and every answer costs "
        "budget, so $\\varepsilon$ grows with the number of queries $m$."
    ),
    formulas=(
        r"\hat y_i = \arg\max_c \big(n_c(x_i) + \mathrm{Lap}(1/\gamma)\big)",
        r"\varepsilon = \min\Big(4m\gamma^2 + 2\gamma\sqrt{2m\log(1/\delta)},\ \text{optimal composition of } m \text{ steps of } 2\gamma\Big)",
    ),
    data_dependent="PATE's data-dependent moments-accountant ε (a NON-PRIVATE diagnostic)",
    per_query=True,
))

register(Mechanism(
    name="baseline",
    title="Advanced-composition baseline",
    description="A_stab on every query at a per-query budget, composed by advanced composition: the baseline BTT beats.",
    parameters=(P["epsilon"], P["delta"]),
    label=_baseline,
    privacy_map=_baseline_map,
    audit=_audit("baseline"),
    audit_pairs=_pairs("baseline"),
    audit_defaults={"epsilon": 1.0, "delta": 1e-2},
    explanation=(
        "**The baseline** answers every query on its own with the one-query stability "
        "mechanism $A_{\\mathrm{stab}}$ at a small per-query budget $\\varepsilon_0$, and adds up the "
        "cost with the advanced composition theorem. BTT improves on it by paying only for ⊥."
    ),
    formulas=(r"\varepsilon = \sqrt{2m\log(1/\delta')}\,\varepsilon_0 + m\,\varepsilon_0\,(e^{\varepsilon_0}-1)",),
    online=_baseline_online,
))

register(Mechanism(
    name="a-stab",
    title="A_stab on each query",
    description="A_stab (BTT Thm 2.4) at (ε, δ) on each query independently; the run reports basic composition (m ε, m δ).",
    parameters=(P["epsilon"], P["delta"]),
    label=_a_stab,
    privacy_map=_a_stab_map,
    audit=_audit("a-stab"),
    audit_pairs=_pairs("a-stab"),
    audit_defaults={"epsilon": 1.0, "delta": 1e-2},
    explanation=(
        "**$A_{\\mathrm{stab}}$** releases the plurality label of one query when its distance to "
        "instability plus Laplace noise passes $\\log(1/\\delta)/\\varepsilon$. Each query costs (ε, δ)."
    ),
    formulas=(r"\mathrm{dist}_i + \mathrm{Lap}(1/\varepsilon) > \log(1/\delta)/\varepsilon",),
    per_query=True,
))
