"""Widgets generated from specifications: registry parameters, learners, generators.

* :func:`parameter_widget` turns one :class:`core.mechanisms.registry.Parameter` into a
  control (float → slider, or a number box on a log scale; float with choices → select
  slider; int → number box; choice → radio), with its label, help, range and choices.
* :func:`mechanism_controls` draws a mechanism's controls: ε for every mechanism that
  takes ε, then its other parameters; the *derived* ones (e.g. LNMax's γ) are no widget
  but follow from ε through :func:`core.pipeline.resolve` and are shown beside.
* Learner hyperparameters (``core.ensemble.learners``) and generator parameters
  (``core.data.GENERATORS``) likewise.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from core import pipeline
from core.errors import PrivateLabelLabError
from core.mechanisms import registry
from app_pages import _session as session

# --------------------------------------------------------------------------------------
# Mechanisms (core.mechanisms.registry)
# --------------------------------------------------------------------------------------


def _format(p) -> Any:
    if p.kind == "float" and p.choices is not None:
        return (lambda v: f"{v:.0e}") if p.log else (lambda v: f"{v:g}")
    return str


def _step(p) -> float:
    """A slider step: the power of ten of the range's low end (0.1 for ε in [0.1, 20])."""
    import math

    low = float(p.low if p.low is not None and p.low > 0 else 0.01)
    return 10.0 ** math.floor(math.log10(low))


def _slides(p) -> bool:
    """A slider for a float on a linear scale with at most 1,000 steps; a number box otherwise."""
    if p.log or p.low is None or p.high is None or p.low <= 0:
        return False
    return (float(p.high) - float(p.low)) / _step(p) <= 1000


def parameter_widget(where, p, *, key: str, choices: tuple | None = None) -> Any:
    """One control for a registry :class:`~core.mechanisms.registry.Parameter`.

    ``st.session_state[key]`` must hold the value to show (the caller seeds it).  The
    labeling function validates the value again; the widget only offers the range.

    Parameters
    ----------
    where : streamlit container
    p : Parameter
    key : str
        The widget key.
    choices : tuple, optional
        Replaces ``p.choices`` (e.g. to add a page's own default).

    Returns
    -------
    The value, converted by ``p.convert``.
    """
    choices = choices if choices is not None else p.choices
    if p.kind == "choice":
        value = where.radio(p.label, list(choices or ()), horizontal=True, key=key, help=p.help)
    elif choices is not None:
        shown = sorted(choices) if p.kind == "float" else list(choices)  # small to large, left to right
        value = where.select_slider(p.label, shown, format_func=_format(p), key=key, help=p.help)
    elif p.kind == "int":
        value = where.number_input(p.label, min_value=None if p.low is None else int(p.low),
                                   max_value=None if p.high is None else int(p.high), step=1, key=key, help=p.help)
    elif p.default is None or not _slides(p):
        # no default: empty means "the mechanism chooses" (None is passed on as not given)
        value = where.number_input(p.label, min_value=None if p.low is None else float(p.low),
                                   max_value=None if p.high is None else float(p.high), format="%g", key=key,
                                   help=p.help, placeholder="automatic" if p.default is None else None)
    else:
        step = _step(p)
        value = where.slider(p.label, float(p.low), float(p.high), step=step, key=key, help=p.help)
        # The slider's own step, exactly: keyboard moves add the step in binary floating point
        # (3.2999999999999994); the run and its report use the value the slider shows (3.3).
        value = on_step(value, float(p.low), step)
    return p.convert(value)


def on_step(value: float, low: float, step: float) -> float:
    """``value`` moved to the nearest slider step ``low + i·step``, written as that decimal."""
    import math

    digits = max(0, -math.floor(math.log10(step))) + 1
    return round(low + round((float(value) - low) / step) * step, digits)


def controlled(name: str) -> list:
    """The parameters the user sets for a mechanism: ε first where it takes ε, never a derived one."""
    mech = registry.get(name)
    shown = [p for p in mech.parameters if p.name not in mech.derived and p.name != "epsilon"]
    if mech.takes_epsilon:
        eps = mech.parameter("epsilon") if "epsilon" in mech.parameter_names else registry.PARAMETERS["epsilon"]
        shown.insert(0, eps)
    return shown


def privacy_widget(where, p) -> Any:
    """A control for ``privacy[p.name]`` (one key per parameter name, shared by the pages)."""
    session.privacy().setdefault(p.name, p.default)
    value = parameter_widget(where, p, key=session.widget_key("privacy", p.name))
    session.remember("privacy", p.name, value)
    return value


def mechanism_controls(where, name: str, *, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """Every control of mechanism ``name`` (:func:`controlled`), except ``skip``; the values."""
    return {p.name: privacy_widget(where, p) for p in controlled(name) if p.name not in skip}


def shared_widget(where, name: str) -> Any:
    """The control of one privacy parameter shared by the mechanisms (``registry.PARAMETERS``)."""
    return privacy_widget(where, registry.PARAMETERS[name])


def mechanism_title(name: str) -> str:
    """The registered title of a mechanism (``LabelingResult.mechanism`` is its registry name)."""
    return registry.get(name).title


def derived_values(name: str, m: int) -> dict[str, Any]:
    """The derived parameters of ``name`` at the session's request on ``m`` queries (or {})."""
    mech = registry.get(name)
    if not mech.derived:
        return {}
    try:
        params = pipeline.resolve(name, session.request(name), max(int(m), 1))
    except PrivateLabelLabError:
        return {}
    return {d: params[d] for d in mech.derived}


def derived_caption(name: str, m: int) -> str | None:
    """"LNMax noise γ = 0.0071, from ε": the derived parameters of the request, in words."""
    mech = registry.get(name)
    values = derived_values(name, m)
    if not values:
        return None
    parts = [f"{mech.parameter(d).label} = {v:.4g}" for d, v in values.items()]
    return f"{', '.join(parts)}, from ε (ε = {session.privacy()['epsilon']:g} on m = {int(m):,} queries)"


def _shown(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def privacy_summary(m: int | None = None) -> str:
    """The privacy settings in one short markdown block (the sidebar), from the registry."""
    p = session.privacy()
    name = p["mechanism"]
    mech = registry.get(name)
    asked = session.request(name)
    lines = [f"**{mech.title}**"]
    first = [f"{'ε' if k == 'epsilon' else 'δ'} = {asked[k]:g}" for k in ("epsilon", "delta") if k in asked]
    if first:
        lines.append(" · ".join(first))
    rest = [f"{mech.parameter(k).label} = {_shown(v)}" for k, v in asked.items() if k not in ("epsilon", "delta", "beta")]
    if rest:
        lines.append(" · ".join(rest))
    if m:
        caption = derived_caption(name, m)
        if caption:
            lines.append(caption.split(" (ε =")[0])
    return "  \n".join(lines)


# --------------------------------------------------------------------------------------
# Learners (core.ensemble.learners)
# --------------------------------------------------------------------------------------


def learner_names() -> list[str]:
    from core.ensemble.learners import LEARNERS

    return list(LEARNERS)


def learner_spec(name: str):
    from core.ensemble.learners import LEARNERS

    return LEARNERS[name]


def learner_label(name: str) -> str:
    return learner_spec(name).label


def hyperparameter_widget(where, section: str, hp) -> Any:
    """One control for a :class:`core.ensemble.learners.Hyperparameter`-like spec.

    The value is kept in ``st.session_state[section][hp.name]``.  Ranges and choices come
    from the spec; the library checks the value again when the model is built.
    """
    ss = st.session_state
    ss.setdefault(section, {})
    ss[section].setdefault(hp.name, hp.default)
    label = hp.name.replace("_", " ")
    if getattr(hp, "allow_none", False):
        unlimited = where.checkbox(f"{label}: no limit", key=session.widget_key_for(
            section, hp.name + "__none", ss[section][hp.name] is None), help=hp.help)
        ss[section][hp.name + "__none"] = unlimited
        if unlimited:
            ss[section][hp.name] = None
            return None
        if ss[section][hp.name] is None:
            ss[section][hp.name] = int(hp.min or 1) if hp.type is int else float(hp.min or 1.0)
    key = session.widget_key(section, hp.name)
    if hp.type is bool:
        value = where.checkbox(label, key=key, help=hp.help)
    elif hp.type is str:
        value = where.selectbox(label, list(hp.choices or [hp.default]), key=key, help=hp.help)
    elif hp.type is int:
        value = int(where.number_input(label, min_value=None if hp.min is None else int(hp.min),
                                       max_value=None if hp.max is None else int(hp.max), step=1, key=key,
                                       help=hp.help))
    else:
        value = float(where.number_input(label, min_value=None if hp.min is None else float(hp.min),
                                         max_value=None if hp.max is None else float(hp.max),
                                         format="%g", key=key, help=hp.help))
    ss[section][hp.name] = value
    return value


# --------------------------------------------------------------------------------------
# Generators (core.data.GENERATORS)
# --------------------------------------------------------------------------------------


def generator_description(spec: dict[str, Any]) -> str:
    """One caption describing a generator: what it draws, its VC dimension, its noise."""
    return (
        f"{spec.get('description', '')} VC dimension: {spec.get('vc_dimension', '?')}. "
        f"Noise: {spec.get('noise_model', 'none')}."
    )


def generator_parameters(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The generator's parameters as a list of dicts (each with its ``name``)."""
    return [dict(p, name=name) for name, p in spec.get("params", {}).items()]


def generator_widget(where, section: str, p: dict[str, Any]) -> Any:
    """A number input for one generator parameter spec (kept in ``session_state[section]``)."""
    ss = st.session_state
    ss.setdefault(section, {})
    is_int = p.get("type") == "int"
    default = int(p["default"]) if is_int else float(p["default"])
    ss[section].setdefault(p["name"], default)
    key = session.widget_key(section, p["name"])
    if is_int:
        value = int(where.number_input(p.get("label", p["name"]), min_value=int(p["min"]), max_value=int(p["max"]),
                                       step=1, key=key, help=p.get("help")))
    else:
        value = float(where.number_input(p.get("label", p["name"]), min_value=float(p["min"]),
                                         max_value=float(p["max"]), step=float(p.get("step", 0.1)),
                                         format="%g", key=key, help=p.get("help")))
    ss[section][p["name"]] = value
    return value


# --------------------------------------------------------------------------------------
# Raw votes on a real job
# --------------------------------------------------------------------------------------


def raw_votes_allowed(ds, *, key: str,
                      label: str = "Show the non-private diagnostics (they read the raw votes)") -> bool:
    """Whether to show views that read the raw votes, teacher predictions or held-out private rows (NON-PRIVATE).

    Always on teaching data; on a real job only when the data owner ticks the box (``label``):
    such a view spends nothing, but a setting chosen after looking at it is chosen on the
    private data, outside the (ε, δ) guarantee.
    """
    if not session.is_real_job(ds):
        return True
    return bool(st.checkbox(
        label, key=key, value=False,
        help="Shown to you only, never exported, and spends nothing; but a setting you choose after looking at "
        "them is chosen on the private data, outside the (ε, δ) guarantee.",
    ))
