"""``bounds``: the theory calculators' values for given settings, as a table or as JSON.

What the library computes from the settings alone (:mod:`core.accounting`,
:mod:`core.theory`): BTT's noise and threshold with their exact guarantee, the numbers of
teachers, A_stab's threshold, the composition baseline, PATE LNMax's ε, Theorem 3.2 and
the loop solver (docs/design.md §4).  No data is read.  The privacy settings' flags take
their type and metavar from the registry's shared parameters
(:data:`core.mechanisms.registry.PARAMETERS`).
"""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from core.cli.common import EXIT_OK, PROG, CommandError, ProgressBar, add_command, json_value, one_line
from core.cli.options import add_flag

__all__ = ["add_parser", "run", "sections_of"]


def add_parser(commands) -> argparse.ArgumentParser:
    """Add the ``bounds`` command to the subparsers ``commands`` (see :func:`core.cli.common.add_command`)."""
    from core.mechanisms.registry import PARAMETERS as P

    bounds = add_command(
        commands, "bounds",
        help="print the theory calculators' values (noise, threshold, teachers needed, loop solver)",
        description=(
            "Print what the library computes from the settings alone: BTT's noise scale and "
            "threshold with their exact guarantee, the recommended and minimum numbers of "
            "teachers, A_stab's threshold and the composition baseline's per-query budget; with "
            "--lnmax-gamma PATE's epsilon; with --alpha Theorem 3.2's cutoff and bound (and with "
            "--k the expected number of answers); with --n and --vc the loop solver T -> alpha "
            "-> k -> T. No data is read."
        ),
        epilog=(
            "examples:\n"
            f"  {PROG} bounds --epsilon 1 --delta 1e-5 --T 10 --m 1000\n"
            f"  {PROG} bounds --epsilon 1 --delta 1e-5 --T 10 --m 1000 --calibration paper \\\n"
            "      --alpha 0.01 --k 5000 --n 1e10 --vc 10 --json"
        ),
    )
    add_flag(bounds, P["epsilon"], "privacy budget epsilon > 0", required=True)
    add_flag(bounds, P["delta"], "privacy delta in (0, 1)", required=True)
    add_flag(bounds, P["T"], "BTT's cutoff (maximum number of abstentions)", required=True)
    bounds.add_argument("--m", type=int, required=True, metavar="N", help="number of public queries")
    add_flag(bounds, P["calibration"], "BTT calibration (default tight)", default="tight")
    bounds.add_argument("--soft", action="store_true",
                        help="soft-label calibration (2T sparse-vector rounds, 2m tests)")
    add_flag(bounds, P["beta"], "failure probability of the recommended k, Theorem 3.2 and the loop "
             "(default 0.05)", default=0.05)
    bounds.add_argument("--lnmax-gamma", type=float, default=None, metavar="G",
                        help="also PATE LNMax's epsilon for m answers with noise Lap(1/G)")
    bounds.add_argument("--alpha", type=float, default=None, metavar="A",
                        help="the teachers' error rate: adds Theorem 3.2's cutoff and misclassification bound")
    bounds.add_argument("--class-error", type=float, default=0.0, metavar="G",
                        help="best error of the hypothesis class, gamma in Theorem 3.2 (default 0: realizable)")
    bounds.add_argument("--k", type=int, default=None, metavar="N",
                        help="number of teachers: with --alpha, adds the expected answered counts (a model)")
    bounds.add_argument("--n", type=float, default=None, metavar="N",
                        help="number of private rows: with --vc, runs the loop solver")
    bounds.add_argument("--vc", type=float, default=None, metavar="V",
                        help="VC dimension of the teachers' class: with --n, runs the loop solver")
    bounds.add_argument("--setting", choices=("realizable", "agnostic"), default="realizable",
                        help="the loop solver's learner bound (default realizable); with the tight "
                        "calibration the solver runs the exact accountant about log2(m) times")
    bounds.add_argument("--json", action="store_true", help="print JSON instead of a table")
    bounds.set_defaults(handler=run)
    return bounds


Row = tuple[str, Any, str]
"""One printed value: key, value, explanation."""


def sections_of(args: argparse.Namespace) -> list[tuple[str, str, list[Row]]]:
    """Every value the bounds command prints.

    Returns
    -------
    list of (key, title, rows)
        Sections; each row is ``(key, value, explanation)``.

    Raises
    ------
    CommandError, core.errors.ParameterError
    """
    from core import accounting as acc
    from core import theory as b
    from core.validation import check_beta, check_delta, check_epsilon, check_m, check_T

    eps, delta = check_epsilon(args.epsilon), check_delta(args.delta)
    T, m, beta = check_T(args.T), check_m(args.m), check_beta(args.beta)
    cal = acc.calibrate_btt(eps, delta=delta, T=T, m=m, calibration=args.calibration, soft=args.soft)
    parts = cal.guarantee.parts
    num_teachers = b.btt_soft_num_teachers if args.soft else b.btt_num_teachers
    kind = "soft labels" if args.soft else "hard labels"
    sections: list[tuple[str, str, list[Row]]] = []
    sections.append(("inputs", "Settings", [
        ("epsilon", eps, "target epsilon"),
        ("delta", delta, "target delta"),
        ("T", T, "cutoff: maximum number of abstentions"),
        ("m", m, "number of public queries"),
        ("beta", beta, "failure probability"),
        ("calibration", args.calibration, "BTT calibration"),
        ("soft", bool(args.soft), "soft-label calibration (2T rounds, 2m tests)"),
    ]))
    sections.append(("btt", f"BTT sparse vector, {kind} ({args.calibration} calibration)", [
        ("noise_scale", float(cal.noise_scale), "lambda: threshold noise DLap(lambda), query noise DLap(2 lambda) (discrete Laplace)"),
        ("threshold", float(cal.threshold), "w: a query is answered when dist + noise > w + noise"),
        ("rounds", int(cal.rounds), "sparse-vector rounds (failed tests allowed)"),
        ("tests", int(cal.tests), "sparse-vector tests"),
        ("epsilon", float(cal.guarantee.epsilon), "exact epsilon of the run (at most the target)"),
        ("delta", float(cal.guarantee.delta), "exact delta of the run (at most the target)"),
        ("epsilon_svt", float(parts["epsilon_svt"]), "epsilon of the composed rounds"),
        ("delta_svt", float(parts["delta_svt"]), "delta of the composed rounds"),
        ("delta_release", float(parts["delta_release"]), "delta of releasing an unstable label"),
        ("composition", str(parts["composition"]), "how the rounds were composed"),
        ("k_recommended", float(num_teachers(cal.noise_scale, m, T, delta, beta)),
         "BTT's recommended number of teachers (Algorithm 2, line 1)"),
        ("k_min_unanimous", int(b.btt_min_teachers(eps, delta, T, m, calibration=args.calibration, soft=args.soft)),
         "fewest teachers whose unanimous vote passes with probability >= 1/2"),
    ]))
    sections.append(("a-stab", "A_stab (one query)", [
        ("threshold", float(acc.a_stab_threshold(eps, delta=delta)), "Gamma = log(1/delta)/epsilon"),
    ]))
    base = acc.composition_baseline_parameters(eps, delta=delta, m=m)
    sections.append(("baseline", "Composition baseline (A_stab on each of m queries)", [
        ("eps0", float(base.eps0), "per-query epsilon"),
        ("delta0", float(base.delta0), "per-query delta"),
        ("delta_prime", float(base.delta_prime), "delta' of advanced composition (0 for basic)"),
        ("threshold", float(base.threshold), "per-query A_stab threshold log(1/delta0)/eps0"),
        ("composition", str(base.composition), "the composition giving the lower threshold"),
        ("epsilon", float(base.guarantee.epsilon), "epsilon of the run"),
        ("delta", float(base.guarantee.delta), "delta of the run"),
    ]))
    if args.lnmax_gamma is not None:
        from core.validation import check_gamma

        g = check_gamma(args.lnmax_gamma, "lnmax_gamma")
        comp = acc.compose_pure_dp(2.0 * g, m, delta, method="best")
        run = acc.lnmax_guarantee(g, n_answers=m, delta=delta)
        sections.append(("lnmax", f"PATE LNMax, m answers with noise Lap(1/{g:g})", [
            ("gamma", g, "noise parameter"),
            ("epsilon_pate_simple", float(acc.pate_simple_epsilon(g, n_answers=m, delta=delta)),
             "PATE's data-independent bound 4m gamma^2 + 2 gamma sqrt(2m log(1/delta))"),
            ("epsilon_composition", float(comp.epsilon),
             f"composition of m pure 2 gamma-DP answers ({comp.method})"),
            ("epsilon_laplace_pld", float(run.parts["laplace_pld"]),
             "2m Laplace coordinates (two per answer) composed by their privacy-loss distributions"),
            ("epsilon", float(run.epsilon), "epsilon of the run: the smallest of the three"),
        ]))
    if args.alpha is not None:
        rows: list[Row] = [
            ("alpha", float(args.alpha), "the teachers' error rate"),
            ("class_error", float(args.class_error), "gamma: best error of the class"),
            ("cutoff_T", float(b.cutoff_T(args.class_error, args.alpha, m, beta)),
             "T = 3((gamma+alpha)m + sqrt((gamma+alpha) m log(m/beta)/2))"),
            ("misclassification_bound", float(b.misclassification_bound(args.class_error, args.alpha, m, beta)),
             "T/m, with probability >= 1 - 2 beta"),
        ]
        if args.k is not None:
            rows.append(("k", int(args.k), "number of teachers (model below)"))
            if not args.soft:
                rows.append(("expected_answers_btt",
                             float(b.expected_answers_btt(args.k, args.alpha, eps, delta, T, m,
                                                          calibration=args.calibration)),
                             "MODEL: expected answered queries of BTT (binary, independent teacher errors)"))
            rows.append(("expected_answers_baseline",
                         float(b.expected_answers_composition(args.k, args.alpha, eps, delta, m)),
                         "MODEL: expected answered queries of the composition baseline"))
        sections.append(("theorem_3_2", "Theorem 3.2 (teachers with error alpha)", rows))
    elif args.k is not None:
        raise CommandError("--k needs --alpha (the teachers' error rate) for the expected answered counts.")
    if (args.n is None) != (args.vc is None):
        raise CommandError("The loop solver needs both --n (private rows) and --vc (VC dimension).")
    if args.n is not None:
        sol = b.solve_btt_parameters(args.n, args.vc, eps, delta, beta, m, args.class_error,
                                     setting=args.setting, calibration=args.calibration)
        sections.append(("loop_solver", f"Loop solver T -> alpha -> k -> T ({args.setting}, {args.calibration})", [
            ("feasible", bool(sol.feasible), "a consistent k exists with a non-vacuous bound"),
            ("k", float(sol.k), "number of teachers (use ceil)"),
            ("T", float(sol.T), "cutoff (use ceil)"),
            ("alpha", float(sol.alpha), "teachers' error at n/k rows"),
            ("noise_scale", float(sol.noise_scale), "lambda at T"),
            ("misclassification", float(sol.misclassification), "Theorem 3.2's bound T/m"),
            ("n_needed", None if sol.n_needed is None else float(sol.n_needed),
             "when infeasible: about the n that would work"),
            ("reason", sol.reason, "why not, when infeasible"),
        ]))
    return sections


def _text_value(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _table(sections: list[tuple[str, str, list[Row]]]) -> str:
    rows = [row for _, _, rs in sections for row in rs if row[0] != "reason"]
    key_w = max(len(r[0]) for r in rows)
    val_w = max(len(_text_value(r[1])) for r in rows)
    out: list[str] = []
    for _, title, rs in sections:
        out.append(title)
        for key, value, text in rs:
            if key == "reason":
                if value:
                    out.append(f"  {one_line(value)}")
                continue
            out.append(f"  {key:<{key_w}}  {_text_value(value):>{val_w}}  {text}")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO, bar: ProgressBar) -> int:
    """Run ``bounds``: print the sections as an aligned table or as JSON; exit code 0."""
    sections = sections_of(args)
    if args.json:
        data = {key: {k: json_value(v) for k, v, _ in rows} for key, _, rows in sections}
        stdout.write(json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
    else:
        stdout.write(_table(sections))
    stdout.flush()
    return EXIT_OK


