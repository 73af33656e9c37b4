"""``audit``: the empirical privacy audit of a mechanism, claimed ε beside an audited lower bound.

The mechanisms offered are the registry's with an audit scenario
(:func:`core.audit.audit_mechanisms`: a mechanism registered without one, in code or by an
installed package, gets the default audit of :mod:`core.audit.default`) and the
deliberately broken teaching variants
(:data:`core.audit.TEACHING_MECHANISMS`); a mechanism's settings are its registry
``audit_defaults`` overridden by the flags given, and the flags are generated from the
registry (:mod:`core.cli.options`; docs/design.md §5, §7).
"""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from core.cli import options
from core.cli.common import (EXIT_OK, EXIT_VIOLATION, PROG, CommandError, ProgressBar, add_command,
                             add_progress, add_seed, json_value, mechanism_name, one_line)

__all__ = ["add_parser", "run", "offered"]


def offered() -> dict[str, tuple[dict[str, Any], bool]]:
    """The mechanisms the audit offers: name -> (default settings, teaching?).

    Registered mechanisms with an audit come with their ``audit_defaults`` (settings the
    audit also accepts, without a default, as None); the teaching variants with the
    settings they take (their defaults are the scenario's).
    """
    from core.audit import TEACHING_MECHANISMS, audit_mechanisms

    out: dict[str, tuple[dict[str, Any], bool]] = {
        name: ({**{t: None for t in spec["takes"]}, **spec["defaults"]}, False)
        for name, spec in audit_mechanisms().items()
    }
    for name, spec in TEACHING_MECHANISMS.items():
        out[name] = ({p: None for p in spec["params"]}, True)
    return out


def add_parser(commands) -> argparse.ArgumentParser:
    """Add the ``audit`` command to the subparsers ``commands`` (see :func:`core.cli.common.add_command`)."""
    mechanisms = offered()
    names = list(mechanisms)
    teaching = [n for n, (_, t) in mechanisms.items() if t]
    aud = add_command(
        commands, "audit",
        help="audit a mechanism empirically: claimed epsilon vs an audited lower bound",
        description=(
            "Run a mechanism many times on two neighbouring inputs (synthetic vote counts that "
            "differ by one teacher, placed where the mechanism leaks most), choose an output event "
            "on half of the runs and estimate it on the other half. The result is a lower bound on "
            "the true epsilon that holds with the given confidence; above the claimed epsilon it is "
            "a violation (exit code 4). An audit never proves privacy. The printed-distance "
            "mechanisms are deliberately broken teaching examples of a leak."
        ),
        epilog=(
            "examples:\n"
            f"  {PROG} audit --mechanism btt --epsilon 1 --delta 0.01 --T 1 --trials 100000\n"
            f"  {PROG} audit --mechanism printed-distance-btt --trials 200000 --json"
        ),
    )
    aud.add_argument("--mechanism", required=True, type=mechanism_name, choices=names, metavar="NAME",
                     help="the mechanism to audit: " + ", ".join(names)
                     + (f" ({', '.join(teaching)}: teaching examples that leak)" if teaching else ""))
    settings = {n: tuple(d) for n, (d, _) in mechanisms.items()}
    options.add_mechanism_flags(aud, settings, {n: d for n, (d, _) in mechanisms.items()})
    aud.add_argument("--pair", default=None, metavar="NAME",
                     help="neighbouring inputs, e.g. tie, top_loses_vote, all_queries_move, mixed_directions, "
                     "answered_then_bottom; for btt-soft adjacent_bins, bin_edge, tie, outer_half_bin "
                     "(default: the strongest for the mechanism; a name not offered lists those that are)")
    aud.add_argument("--trials", type=int, default=200_000, metavar="N",
                     help="runs per input (default 200000; half choose the event, half estimate it)")
    aud.add_argument("--confidence", type=float, default=0.99, metavar="C",
                     help="joint confidence of the lower bound (default 0.99)")
    add_seed(aud)
    add_progress(aud)
    aud.add_argument("--json", action="store_true", help="print JSON instead of a table")
    aud.set_defaults(handler=run)
    return aud


def run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO, bar: ProgressBar) -> int:
    """Run ``audit``: exit code 0 (no violation found) or 4 (violation)."""
    from core import audit as A

    name = args.mechanism
    defaults, _ = offered()[name]
    given = options.given_settings(args)
    options.check_flags(given, name, tuple(defaults))
    if name not in A.TEACHING_MECHANISMS and "epsilon" not in given:
        from core.mechanisms import registry

        if any(d in given for d in registry.get(name).derived):
            defaults = {k: v for k, v in defaults.items() if k != "epsilon"}  # the noise given decides ε
    settings = {k: v for k, v in {**defaults, **given}.items() if v is not None}
    if args.pair is not None:
        pairs, _ = A.pair_choices(name)
        if args.pair not in pairs:
            raise CommandError(f"--pair {args.pair!r} is not offered for {name}; choose one of {', '.join(pairs)}.")
    scn = A.scenario(name, pair=args.pair, **settings)
    result = A.run_scenario(
        scn,
        n_trials=args.trials,
        confidence=args.confidence,
        rng=args.seed,
        chunk_size=max(1_000, args.trials // 10),  # --trials is an int (argparse)
        progress=bar.task("Sampling the mechanism"),
    )
    verdict = "no violation found" if result.passed else "VIOLATION: the mechanism leaks more than it claims"
    if args.json:
        data = {
            "mechanism": name,
            "label": scn.label,
            "teaching": bool(scn.teaching),
            "settings": scn.settings,
            "pair": scn.pair.name,
            "claimed_epsilon": result.claimed_epsilon,
            "claimed_delta": result.claimed_delta,
            "epsilon_lower_bound": result.epsilon_lower_bound,
            "passed": bool(result.passed),
            "confidence": result.confidence,
            "n_trials": result.n_trials,
            "event": result.event,
            "direction": result.direction,
            "p_first": result.p_first,
            "p_first_lower": result.p_first_lower,
            "p_second": result.p_second,
            "p_second_upper": result.p_second_upper,
        }
        stdout.write(json.dumps({k: json_value(v) for k, v in data.items()}, indent=2, ensure_ascii=False) + "\n")
    else:
        favoured = "a" if result.direction == "a>b" else "b"
        shown = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in scn.settings.items())
        rows = [
            ("mechanism", f"{scn.label} ({name})"),
            ("settings", shown),
            ("neighbouring pair", f"{scn.pair.name}: {scn.pair.description}"),
            ("claimed epsilon", f"{result.claimed_epsilon:.4f}  (delta = {result.claimed_delta:.3g})"),
            ("audited epsilon >=", f"{result.epsilon_lower_bound:.4f}  ({result.confidence:.1%} confidence, "
                                   f"{result.n_trials:,} trials per input)"),
            ("verdict", verdict),
            ("event", f"{result.event} (likelier under input {favoured})"),
            ("probabilities", f"{result.p_first:.4g} (lower bound {result.p_first_lower:.4g}) vs "
                              f"{result.p_second:.4g} (upper bound {result.p_second_upper:.4g})"),
        ]
        width = max(len(name) for name, _ in rows)
        stdout.write("\n".join(f"{name:<{width}}  {one_line(text)}" for name, text in rows) + "\n")
    stdout.flush()
    return EXIT_OK if result.passed else EXIT_VIOLATION
