"""The parser of ``private-label-lab`` and :func:`main` (docs/design.md §5).

The commands, each a thin layer over the library (no algorithm lives here):

``label`` (:mod:`core.cli.label`)
    Train teachers on a private CSV file, label a public CSV file with a registered
    mechanism through :mod:`core.pipeline`, and write the labeled CSV, the JSON privacy
    report and optionally a student model -- the files the app's "Student and export"
    page offers for download.
``bounds`` (:mod:`core.cli.bounds`)
    Print the theory calculators' values for given settings, as a table or as JSON.
``audit`` (:mod:`core.cli.audit`)
    Run the empirical privacy audit of a mechanism and print the claimed ε beside the
    audited lower bound.
``recommend`` (:mod:`core.cli.recommend`)
    Suggest k, T and a mechanism, or say plainly that no setting is useful.
``plan`` (:mod:`core.cli.plan`)
    Predict runs from sizes and an assumed teacher quality: no private data, no privacy spent.
``tune`` (:mod:`core.cli.tune`)
    Private selection over a grid of mechanisms and ε (one priced, counted run).

The ``--mechanism`` choices, the mechanisms' flags and their help are generated from
:mod:`core.mechanisms.registry` each time the parser is built (:mod:`core.cli.options`),
so a mechanism registered before :func:`main` runs is on the command line.

Exit codes
----------
0
    Done (``audit``: no violation found).
2
    Bad arguments or bad input: one line ``private-label-lab: error: ...`` on stderr.
3
    ``label`` only: the privacy budget ran out (BTT reached its cutoff T) before every
    public row was processed.  The files are still written; the rows after the halt have
    an empty label and the status ``"not processed"``.
4
    ``audit`` only: the audited lower bound exceeds the claimed ε (a violation).
5
    ``label`` only: the labels and report were written but the student failed (when the
    mechanism also halted, the code stays 3).

Randomness comes from the operating system unless ``--seed`` is given: a reproducible
demonstration option, not for production, which is never written to any output.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from typing import Sequence

from core.cli.common import (
    EXIT_CODES,
    EXIT_ERROR,
    PROG,
    CommandError,
    Formatter,
    ProgressBar,
    cli_words,
    para,
    progress_enabled,
    warnings_as_lines,
)

__all__ = ["build_parser", "main"]


def close_flags(extras: Sequence[str], flags: Sequence[str]) -> str:
    """`` (--epsilion: did you mean --epsilon?)`` for each unknown flag of ``extras`` close to one
    of ``flags`` (:func:`difflib.get_close_matches`), or ""."""
    known = [f for f in flags if f.startswith("--")]
    hints = []
    for extra in extras:
        name = extra.split("=", 1)[0]
        if not name.startswith("--") or name in known:
            continue
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.7)
        if close:
            hints.append(f"{name}: did you mean {close[0]}?")
    return f" ({'; '.join(hints)})" if hints else ""


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors name the closest flag of the command for a mistyped one
    (``--epsilion`` -> "did you mean --epsilon?"): on "unrecognized arguments", and on a
    required flag missing because it was mistyped."""

    _given: Sequence[str] = ()

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        self._given = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def parse_args(self, args=None, namespace=None):  # type: ignore[override]
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            command = self
            for action in self._actions:  # the flags of the command that ran
                if isinstance(action, argparse._SubParsersAction):
                    command = action.choices.get(getattr(parsed, action.dest or "", None), self)
            hint = close_flags(extras, list(command._option_string_actions))
            self.error(f"unrecognized arguments: {' '.join(extras)}{hint}")
        return parsed

    def error(self, message: str):  # type: ignore[override]
        if message.startswith("the following arguments are required"):
            message += close_flags(self._given, list(self._option_string_actions))
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``private-label-lab`` and its commands.

    Returns
    -------
    argparse.ArgumentParser
        Each command's namespace has ``handler(args, stdout, stderr, bar) -> exit code``.
    """
    from core import __version__
    from core.cli import audit, bounds, label, plan, recommend, tune

    parser = Parser(
        prog=PROG,
        description=para(
            "Private Label Lab: differentially private labels for public data from an "
            "ensemble of scikit-learn teachers trained on disjoint chunks of private data."
        ),
        epilog=EXIT_CODES + f"\n\nRun '{PROG} COMMAND --help' for the options of a command.",
        formatter_class=Formatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    label.add_parser(commands)
    recommend.add_parser(commands)
    plan.add_parser(commands)
    tune.add_parser(commands)
    bounds.add_parser(commands)
    audit.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit code: 0 done, 2 bad arguments or input, 3 ``label`` halted before every
        row was processed, 4 ``audit`` found a violation, 5 ``label`` wrote the labels but
        the student failed.
    """
    stdout, stderr = sys.stdout, sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else EXIT_ERROR)
    bar = ProgressBar(stderr, progress_enabled(getattr(args, "progress", None), stderr))
    from core.errors import PrivateLabelLabError

    try:
        with warnings_as_lines(stderr, bar):
            return int(args.handler(args, stdout, stderr, bar))
    except (PrivateLabelLabError, CommandError) as exc:
        bar.break_line()
        stderr.write(f"{PROG}: error: {cli_words(exc)}\n")
        stderr.flush()
        return EXIT_ERROR
    except KeyboardInterrupt:
        bar.break_line()
        stderr.write(f"{PROG}: interrupted\n")
        return 130


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
