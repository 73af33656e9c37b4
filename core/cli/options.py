"""The mechanisms' flags, generated from the registry (docs/design.md §5).

Every parameter any registered mechanism takes becomes one flag ``--NAME`` of ``label``
and ``audit`` (``--epsilon``, ``--delta``, ``--T``, ``--calibration``, ``--beta``,
``--eta``, ``--gamma``, and whatever a mechanism registers later), with the registry's
type, metavar, choices and help; ``--mechanism``'s choices and the help screens' list
of mechanisms come from the registry too.  Nothing here names a mechanism.

The one rule of the command line on top of the registry's defaults: the privacy budget
is never a silent default.  A mechanism that takes ε needs ``--epsilon`` (or, where ε
decides a noise parameter, that parameter), and one that takes δ needs ``--delta``.
"""

from __future__ import annotations

import argparse
import textwrap
from typing import Any, Iterable, Mapping

from core.cli.common import WIDTH, CommandError

__all__ = [
    "DEST",
    "flag_parameters",
    "takes",
    "add_flag",
    "add_mechanism_flags",
    "given_settings",
    "check_flags",
    "check_budget",
    "mechanisms_epilog",
]

DEST = "mechanism_setting_"
"""Prefix of the generated flags' attributes (so that no parameter name can clash with
another option's attribute)."""

def _registry():
    from core.mechanisms import registry

    return registry


def takes(mechanism) -> tuple[str, ...]:
    """The settings a registered mechanism takes: its parameters, and ``epsilon`` where
    ε can be spent (:attr:`core.mechanisms.Mechanism.takes_epsilon`)."""
    names = tuple(mechanism.parameter_names)
    if mechanism.takes_epsilon and "epsilon" not in names:
        names = ("epsilon",) + names
    return names


def flag_parameters() -> dict[str, Any]:
    """Every registered parameter by name (the first registration of a name defines its
    flag's type and metavar), ``epsilon`` first, then in registration order."""
    registry = _registry()
    out: dict[str, Any] = {"epsilon": registry.PARAMETERS["epsilon"]}
    for name in registry.names():
        for p in registry.get(name).parameters:
            out.setdefault(p.name, p)
    return out


def _type(p) -> Any:
    """The argparse type of a parameter: its own conversion, errors as usage errors."""
    if p.kind == "choice":
        def choice(text: str) -> Any:
            for c in p.choices or ():
                if str(c) == text:
                    return c
            return text  # argparse then reports 'invalid choice'

        return choice

    def convert(text: str) -> Any:
        from core.errors import ParameterError

        try:
            return p.convert(text)
        except ParameterError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = p.kind
    return convert


def _escape(text: str) -> str:
    return text.replace("%", "%%")


def add_flag(parser, p, help: str, *, dest: str | None = None, **kwargs: Any) -> None:
    """Add ``--NAME`` for a :class:`core.mechanisms.Parameter` (type, metavar, choices).

    Parameters
    ----------
    parser : argparse parser or argument group
    p : core.mechanisms.Parameter
    help : str
    dest : str, optional
        The attribute (default: the parameter's name).
    **kwargs
        More ``add_argument`` keywords (``required``, ``default``).
    """
    options: dict[str, Any] = {"type": _type(p), "help": _escape(help), "dest": dest or p.name}
    if p.kind == "choice":
        options["choices"] = tuple(p.choices or ())
    else:
        options["metavar"] = p.metavar
    names = [f"--{p.name.replace('_', '-')}"] + ([f"--{p.name}"] if "_" in p.name else [])  # --rows-per-unit, --rows_per_unit
    parser.add_argument(*names, **options, **kwargs)


def _value(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def add_mechanism_flags(parser, mechanisms: Mapping[str, Iterable[str]], defaults: Mapping[str, Mapping[str, Any]] | None = None) -> None:
    """Add one flag per parameter that any of ``mechanisms`` takes.

    Parameters
    ----------
    parser : argparse parser or argument group
    mechanisms : mapping
        Mechanism name -> the settings it takes (only registered parameters get a flag).
    defaults : mapping, optional
        Mechanism name -> its defaults to show (default: the registry's, except for the
        budget, which is required).
    """
    params = flag_parameters()
    for name, p in params.items():
        takers = [m for m, names in mechanisms.items() if name in names]
        if not takers:
            continue
        if defaults is not None:
            shown = {m: defaults[m].get(name) for m in takers}
        else:
            shown = {m: _default(m, name) for m in takers}
        values = {_value(v) for v in shown.values() if v is not None}
        if defaults is None and name in _registry().BUDGET:
            tail = "required"
        elif len(values) == 1 and all(v is not None for v in shown.values()):
            tail = f"default {values.pop()}"
        elif values:
            tail = "default " + ", ".join(f"{m} {_value(v)}" for m, v in shown.items() if v is not None)
        else:
            tail = ""
        where = "every mechanism" if len(takers) == len(mechanisms) > 1 else ", ".join(takers)
        add_flag(parser, p, f"{p.help.rstrip('.')} ({where}{'; ' + tail if tail else ''})", dest=DEST + name, default=None)


def _default(mechanism: str, name: str) -> Any:
    mech = _registry().get(mechanism)
    if name not in mech.parameter_names or name in mech.derived:
        return None
    return mech.parameter(name).default


def given_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The generated flags that were given: name -> value."""
    return {
        key[len(DEST):]: value
        for key, value in vars(args).items()
        if key.startswith(DEST) and value is not None
    }


def check_flags(given: Mapping[str, Any], mechanism: str, allowed: Iterable[str]) -> None:
    """Refuse flags ``mechanism`` does not take, in one line naming those it takes.

    Raises
    ------
    CommandError
    """
    allowed = tuple(allowed)
    extra = [f"--{name}" for name in flag_parameters() if name in given and name not in allowed]
    if extra:
        wanted = ", ".join(f"--{name}" for name in allowed) or "no settings"
        raise CommandError(f"{', '.join(extra)} does not apply to --mechanism {mechanism}, which takes {wanted}.")


def check_budget(given: Mapping[str, Any], mechanism: str) -> None:
    """Require ``--epsilon`` (or the noise parameters it decides) and ``--delta`` where the
    mechanism takes them: the command line never labels at a default budget.

    Raises
    ------
    CommandError
    """
    mech = _registry().get(mechanism)
    missing = []
    if mech.takes_epsilon and "epsilon" not in given and not (mech.derived and all(d in given for d in mech.derived)):
        missing.append(f"--epsilon or {' and '.join(f'--{n}' for n in mech.derived)}" if mech.derived else "--epsilon")
    if "delta" in mech.parameter_names and "delta" not in given:
        missing.append("--delta")
    if missing:
        raise CommandError(f"--mechanism {mechanism} needs {' and '.join(missing)} (the privacy budget has no default).")


def _usage(mech) -> str:
    """A mechanism's settings as flags: required ones bare, the others with their default."""
    parts: list[str] = []
    derived: list[str] = []
    for name in takes(mech):
        if name == "epsilon" and mech.derived:
            continue
        p = mech.parameter(name) if name in mech.parameter_names else _registry().PARAMETERS["epsilon"]
        arg = "{" + ",".join(map(str, p.choices or ())) + "}" if p.kind == "choice" else p.metavar
        if name in mech.derived:
            derived.append(f"--{name} {arg}")
        elif name in _registry().BUDGET or (p.default is None and not getattr(p, "optional", False)):
            parts.append(f"--{name} {arg}")
        else:
            parts.append(f"[--{name} {arg}, default {_value(p.default)}]")
    if derived:
        parts.insert(0, f"--epsilon E (sets {', '.join(mech.derived)}) or {' '.join(derived)};")
    return " ".join(parts)


def mechanisms_epilog() -> str:
    """The ``label`` help's list of mechanisms: name, title, description and settings."""
    registry = _registry()
    names = registry.names()
    width = max(len(n) for n in names) + 2
    lines = ["mechanisms (--mechanism NAME), each with its settings:"]
    wrap = dict(width=WIDTH, initial_indent=" " * (2 + width), subsequent_indent=" " * (2 + width), break_on_hyphens=False)
    for name in names:
        mech = registry.get(name)
        text = textwrap.fill(f"{mech.title}. {mech.description}", **wrap)
        lines.append(f"  {name:<{width}}" + text[2 + width:])
        lines.append(textwrap.fill(_usage(mech), **wrap))
        if mech.inputs == "scores":
            lines.append(textwrap.fill("reads the teachers' scores: binary tasks and learners with probabilities only", **wrap))
    return "\n".join(lines)
