"""The built-in mechanisms' :class:`~core.mechanisms.registry.TestPicture` declarations.

The texts live here; the callables import :mod:`core.mechanisms.odds` (which holds the
statistics, lines, analytic odds, draws and bounds) only when called, so that loading the
registry stays light.
"""

from __future__ import annotations

from typing import Any

from core.mechanisms.registry import TestPicture

__all__ = ["builtin_picture"]

_DIST = "distance to instability"



def _flip(name: str, noise: str, bound: str) -> dict[str, str]:
    """The texts of a noisy-max mechanism's picture (it answers every query; the gap may flip)."""
    return dict(
        statistic="gap between the top two vote counts", symbol="g", kind="flip",
        reads=f"{name} answers every query: it adds {noise} noise to every count and releases the largest. "
        "It reads the gap between the top two counts: right of the line g the noise swaps them with "
        "probability below 5 %, so the plurality is kept; left of it the answer may flip.",
        bound=bound,
    )


def _a_stab(reads: str, sub: str = "") -> dict[str, str]:
    """The texts of a picture of A_stab run at (ε_sub, δ_sub) on each query (BTT Theorem 2.5)."""
    at = f" at (ε{sub}, δ{sub})" if sub else ""
    return dict(
        statistic=_DIST, symbol="Γ", kind="threshold", reads=reads,
        bound=f"BTT Theorem 2.5{at}: a query whose distance reaches (log(1/δ{sub}) + log(1/β))/ε{sub} is "
        "answered with probability at least 1 − β; only plurality labels are released.",
    )


_TEXTS: dict[str, dict[str, str]] = {
    "btt": dict(
        statistic=_DIST, symbol="w", kind="threshold",
        reads="BTT tests each query's distance to instability (how many private rows must change before "
        "the plurality can flip) against the threshold w, both with Laplace noise. Right of w a query is "
        "answered most of the time; each ⊥ left of it spends one of the T rounds, and after T the run stops.",
        bound="Theorem 3.2 (BTT): at most T of the m answers are wrong, with probability at least 1 − 2β, "
        "only where its conditions hold: two classes, T at least 3(e·m + √(e·m·log(m/β)/2)) for teachers of "
        "error e, and k at least the theorem's number of teachers at that T. At most T queries are ⊥ by "
        "construction, at every setting.",
    ),
    "btt-soft": dict(
        statistic="distance to instability of the score bins", symbol="w", kind="threshold",
        reads="Soft labels test the distance to instability of the histogram of the teachers' scores on "
        "bins of width η against w; on a failure they test the bins shifted by η/2. Right of w the first "
        "test passes most of the time.",
        bound="No error bound with constants is known here for soft labels; at most T queries are ⊥ by construction.",
    ),
    "lnmax": _flip("LNMax", "Laplace",
                   "PATE 2017, Theorem 3: the answer differs from the plurality with probability at most "
                   "Σ over the other classes of (2 + γΔ)/(4·exp(γΔ)), Δ being the class's gap to the top count."),
    "gnmax": _flip("GNMax", "Gaussian",
                   "PATE 2018, Proposition 7: the answer differs from the plurality with probability at most "
                   "Σ over the other classes of ½·erfc(Δ/(2σ)), Δ being the class's gap to the top count."),
    "confident-gnmax": dict(
        statistic="top vote count", symbol="t", kind="threshold",
        reads="Confident-GNMax tests the top vote count plus Gaussian noise σ1 against t. Right of t a "
        "query is answered most of the time (then by GNMax with noise σ2); left of it it is mostly ⊥.",
        bound="Exact, not a bound: a query with top count n is answered with probability Φ((n − t)/σ1); "
        "once answered, PATE 2018's Proposition 7 with σ2 bounds the chance the answer leaves the plurality.",
    ),
    "certified-gnmax": dict(
        statistic="top vote count", symbol="t", kind="threshold",
        reads="Certified Confident-GNMax runs Confident-GNMax's test (top vote count plus noise σ1 against t) "
        "on every query, but releases the labels only if a first test passes: the run's privacy cost on these "
        "votes, measured with noise, must stay under a budget fixed in advance. Otherwise no query is processed "
        "(every bar is then \"not processed\"); the Private labeling page draws that first test beside this one.",
        bound="No explicit bound with constants is known: the certificate releases the whole batch or "
        "nothing. Once it passes, each query is answered with probability Φ((n − t)/σ1).",
    ),
    "baseline": _a_stab(
        "The baseline runs A_stab on every query at a small per-query budget ε0: the distance to "
        "instability plus Laplace noise must pass Γ = log(1/δ0)/ε0. Right of Γ answered most of the time.", "0"),
    "a-stab": _a_stab(
        "A_stab tests each query's distance to instability plus Laplace noise against "
        "Γ = log(1/δ)/ε. Right of Γ a query is answered most of the time; left of it it is mostly ⊥."),
}


def _call(name: str, what: str):
    def call(*args: Any, **kwargs: Any):
        from core.mechanisms import odds as pictures

        return getattr(pictures, what)(name, *args, **kwargs)

    call.__name__ = f"{what}_{name.replace('-', '_')}"
    return call


def builtin_picture(name: str) -> TestPicture:
    """The picture of a built-in mechanism (texts here, callables in :mod:`core.mechanisms.odds`).

    Parameters
    ----------
    name : str
        A built-in mechanism's name.

    Returns
    -------
    TestPicture
    """
    text = _TEXTS[name]
    return TestPicture(
        statistic=text["statistic"],
        symbol=text["symbol"],
        kind=text["kind"],
        reads=text["reads"],
        values=_call(name, "values"),
        threshold=_call(name, "threshold"),
        odds=_call(name, "odds"),
        draw=_call(name, "draw"),
        bound=text["bound"],
        bound_rates=None if name == "certified-gnmax" else _call(name, "bound_rates"),
        bound_conditions=_call(name, "bound_conditions") if name == "btt" else None,
    )
