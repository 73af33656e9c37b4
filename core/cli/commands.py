"""The command line: ``private-label-lab`` (also ``python -m core``).

Three commands, each a thin layer over the library (no algorithm lives here):

``label``
    Train teachers on a private CSV file, label a public CSV file with a private
    mechanism, and write the labeled CSV (:func:`core.export.labeled_frame`), the JSON
    privacy report (:func:`core.export.privacy_report`, :func:`core.export.report_json`)
    and optionally a student model (:func:`core.ensemble.student.train_student`) -- the same
    files the app's "Student and export" page offers for download.
``bounds``
    Print the theory calculators' values (:mod:`core.accounting`, :mod:`core.theory`)
    for given settings, as an aligned table or as JSON.
``audit``
    Run the empirical privacy audit of a mechanism (:mod:`core.audit`) and print the
    claimed ε beside the audited lower bound.

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

Randomness comes from the operating system unless ``--seed`` is given: a reproducible
demonstration option, not for production, which is never written to any output.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence, TextIO

__all__ = [
    "main",
    "build_parser",
    "ProgressBar",
    "EXIT_OK",
    "EXIT_ERROR",
    "EXIT_HALTED",
    "EXIT_VIOLATION",
]

PROG = "private-label-lab"

EXIT_OK = 0
"""Success."""
EXIT_ERROR = 2
"""Bad arguments or bad input (argparse's usage errors use 2 as well)."""
EXIT_HALTED = 3
"""``label``: the mechanism halted (budget exhausted) before every row was processed."""
EXIT_VIOLATION = 4
"""``audit``: the audited lower bound exceeds the claimed ε."""

LABEL_MECHANISMS = ("btt", "btt-soft", "lnmax", "baseline")
AUDIT_CHOICES = (
    "btt",
    "btt-soft",
    "lnmax",
    "baseline",
    "a-stab",
    "printed-distance-btt",
    "printed-distance-a-stab",
)

# Privacy settings of the label command: which each mechanism uses, which it needs.
_LABEL_USES = {
    "btt": ("epsilon", "delta", "T", "beta", "calibration"),
    "btt-soft": ("epsilon", "delta", "T", "eta", "beta", "calibration"),
    "lnmax": ("gamma", "epsilon", "delta"),
    "baseline": ("epsilon", "delta"),
}
_LABEL_NEEDS = {
    "btt": ("epsilon", "delta", "T"),
    "btt-soft": ("epsilon", "delta", "T"),
    "lnmax": ("delta",),  # and one of --gamma / --epsilon
    "baseline": ("epsilon", "delta"),
}
_LABEL_DEFAULTS = {"beta": 0.05, "calibration": "tight", "eta": 0.1}

# The audit page's defaults (pages/8_Privacy_audit.py).
_AUDIT_DEFAULTS = {"epsilon": 1.0, "delta": 1e-2, "T": 1, "calibration": "tight", "gamma": 1.0, "eta": 0.25}

# The privacy settings' options, alike in every command: argparse type and metavar (or choices).
_PRIVACY_OPTIONS = {
    "epsilon": {"type": float, "metavar": "E"},
    "delta": {"type": float, "metavar": "D"},
    "T": {"type": int, "metavar": "N"},
    "beta": {"type": float, "metavar": "B"},
    "calibration": {"choices": ("paper", "tight")},
    "eta": {"type": float, "metavar": "H"},
    "gamma": {"type": float, "metavar": "G"},
}
_FLAGS = {name: f"--{name}" for name in _PRIVACY_OPTIONS}


class CommandError(Exception):
    """A problem with the command's arguments that the library does not check itself
    (an option that does not apply, an output path that cannot be written)."""


# --------------------------------------------------------------------------------------
# Terminal output: progress bar and one-line messages
# --------------------------------------------------------------------------------------


class ProgressBar:
    """A plain-text progress bar on one line of a stream, redrawn with ``\\r``.

    Parameters
    ----------
    stream : text stream
        Where to draw (stderr).
    enabled : bool
        When False every method does nothing and :meth:`task` returns None, so the
        library skips its progress calls.
    width : int
        Number of characters of the bar itself.

    Examples
    --------
    >>> bar = ProgressBar(sys.stderr, enabled=False)
    >>> bar.task("Training teachers") is None
    True
    """

    def __init__(self, stream: TextIO, enabled: bool, width: int = 30) -> None:
        self.stream = stream
        self.enabled = bool(enabled)
        self.width = int(width)
        self._open = False

    def task(self, label: str) -> Callable[[int, int], None] | None:
        """A ``progress(done, total)`` callback drawing ``label`` (None when disabled)."""
        if not self.enabled:
            return None

        def progress(done: int, total: int) -> None:
            self.draw(label, done, total)

        return progress

    def draw(self, label: str, done: int, total: int) -> None:
        """Redraw the line; end it when ``done`` reaches ``total``."""
        if not self.enabled:
            return
        total = max(int(total), 1)
        done = min(max(int(done), 0), total)
        filled = (self.width * done) // total
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\r{label} [{bar}] {done}/{total}")
        self._open = True
        if done >= total:
            self.stream.write("\n")
            self._open = False
        self.stream.flush()

    def break_line(self) -> None:
        """End an unfinished bar's line, so that a message starts on a line of its own."""
        if self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


@contextlib.contextmanager
def _warnings_as_lines(stream: TextIO, bar: ProgressBar) -> Iterator[None]:
    """Show warnings raised inside as ``private-label-lab: warning: ...`` lines."""

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        bar.break_line()
        stream.write(f"{PROG}: warning: {_one_line(message)}\n")
        stream.flush()

    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        warnings.showwarning = show
        yield


def _progress_enabled(choice: bool | None, stream: TextIO) -> bool:
    if choice is not None:
        return choice
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):
        return False


# --------------------------------------------------------------------------------------
# Parser
# --------------------------------------------------------------------------------------


def _para(text: str) -> str:
    """A description paragraph wrapped for the help screen (the formatter keeps line breaks)."""
    return textwrap.fill(" ".join(text.split()), width=_WIDTH, break_on_hyphens=False)


_WIDTH = 96


class _Formatter(argparse.RawDescriptionHelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=30, width=_WIDTH)


def _mechanism_name(text: str) -> str:
    """Accept ``btt-soft`` and ``btt_soft`` alike (the command line prefers hyphens)."""
    return text.strip().lower().replace("_", "-")


def _learner_epilog() -> str:
    from core.ensemble.learners import LEARNERS

    lines = ["learners (--learner NAME) and their hyperparameters (--learner-param key=value, defaults shown):"]
    for spec in LEARNERS.values():
        params = ", ".join(
            f"{h.name}={'none' if h.default is None else str(h.default).lower() if h.type is bool else h.default}"
            for h in spec.hyperparameters
        )
        proba = "" if spec.has_predict_proba else " (no probabilities: not for btt-soft)"
        lines.append(f"  {spec.name:<21} {params}{proba}")
    return "\n".join(lines)


_EXIT_CODES = """\
exit codes:
  0  done (audit: no violation found)
  2  bad arguments or bad input (one line 'private-label-lab: error: ...' on stderr)
  3  label: the privacy budget ran out before every public row was processed (BTT
     reached its cutoff T); the files are still written, the remaining rows have an
     empty label and the status 'not processed'
  4  audit: the audited lower bound exceeds the claimed epsilon (a violation)"""

_LABEL_EXAMPLES = """\
examples:
  private-label-lab label --private private.csv --label-column label --public public.csv \\
      --learner logistic_regression --k 50 --mechanism btt --epsilon 2 --delta 1e-6 --T 10 \\
      --out labeled.csv --report report.json --student student.joblib
  private-label-lab label --private private.csv --public public.csv --learner random_forest \\
      --learner-param n_estimators=10 --k 40 --mechanism lnmax --gamma 0.05 --delta 1e-6 \\
      --out labeled.csv --report report.json
"""


def _add_progress(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar on stderr (default: only when stderr is a terminal)",
    )


def _seed(text: str) -> int:
    """A seed: a whole number of at least 0 (argparse type)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"the seed must be a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"the seed must be 0 or more, got {value}")
    return value


def _add_seed(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--seed",
        type=_seed,
        default=None,
        metavar="N",
        help="reproducible demo seed: runs repeat exactly. Not for production (the noise "
        "becomes predictable); never written to any output. Default: fresh randomness "
        "from the operating system",
    )


def _add_privacy_options(parser: argparse.ArgumentParser, helps: dict[str, str], **kwargs: Any) -> None:
    """Add the privacy settings named in ``helps``, in that order, each with its help text;
    ``kwargs`` (e.g. ``required=True``, a default) apply to every one of them."""
    for name, text in helps.items():
        parser.add_argument(_FLAGS[name], **_PRIVACY_OPTIONS[name], help=text, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``private-label-lab`` and its three commands."""
    from core import __version__

    parser = argparse.ArgumentParser(
        prog=PROG,
        description=_para(
            "Private Label Lab: differentially private labels for public data from an "
            "ensemble of scikit-learn teachers trained on disjoint chunks of private data."
        ),
        epilog=_EXIT_CODES + f"\n\nRun '{PROG} COMMAND --help' for the options of a command.",
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    # ---------------------------------------------------------------- label
    label = commands.add_parser(
        "label",
        help="label public rows privately; write the labeled CSV, the privacy report and a student",
        description=_para(
            "Train k teachers on disjoint chunks of the private CSV file, label the rows of the "
            "public CSV file with a differentially private mechanism, and write the labeled CSV "
            "(public features, the private label -- empty where not answered --, 'answered' and "
            "'status' columns), the JSON privacy report and optionally a student model trained on "
            "the private labels. Every output is safe to publish: it holds no seed, vote count or "
            "teacher output. The teachers themselves stay in memory and are never written."
        ),
        epilog=_LABEL_EXAMPLES + "\n" + _learner_epilog() + "\n\n" + _EXIT_CODES,
        formatter_class=_Formatter,
    )
    data = label.add_argument_group("data")
    data.add_argument("--private", required=True, metavar="FILE",
                      help="private labeled CSV file (UTF-8, comma separated, header row)")
    data.add_argument("--label-column", default=None, metavar="NAME",
                      help="label column of the private file (default: the first column named label, "
                      "target, y or class, ignoring case, else the last column)")
    data.add_argument("--public", required=True, metavar="FILE",
                      help="public CSV file of the rows to label: the private file's feature columns "
                      "(a label column is allowed and ignored)")
    data.add_argument("--missing", choices=("refuse", "impute"), default="refuse",
                      help="missing feature values: refuse the file (default) or impute them inside "
                      "the learning pipeline")

    ens = label.add_argument_group("teachers")
    ens.add_argument("--learner", required=True, metavar="NAME",
                     help="the teachers' learner (see the list below)")
    ens.add_argument("--learner-param", action="append", default=[], metavar="KEY=VALUE",
                     help="a hyperparameter of the learner, e.g. C=0.5; repeat for several")
    ens.add_argument("--k", required=True, type=int, metavar="N",
                     help="number of teachers; each is fitted on about n/k private rows")

    priv = label.add_argument_group("privacy")
    priv.add_argument("--mechanism", required=True, type=_mechanism_name, choices=LABEL_MECHANISMS,
                      help="btt: stability + sparse vector, hard labels (needs --epsilon --delta --T); "
                      "btt-soft: soft labels, binary tasks (also --eta); lnmax: PATE's Laplace noisy "
                      "max (needs --delta and --gamma or --epsilon); baseline: A_stab on every query with advanced "
                      "composition (needs --epsilon --delta)")
    _add_privacy_options(priv, {
        "epsilon": "privacy budget epsilon > 0 of the whole run (btt, btt-soft, baseline; for lnmax "
        "instead of --gamma: the gamma whose data-independent bound on all public rows is epsilon)",
        "delta": "privacy delta in (0, 1), well below 1/n, e.g. 1e-6",
        "T": "cutoff: BTT stops after T abstentions (btt, btt-soft)",
        "eta": "soft-label precision, 1/eta a whole number (btt-soft; default 0.1)",
        "gamma": "LNMax noise parameter: noise Lap(1/gamma) on every vote count (lnmax)",
        "beta": "failure probability for BTT's recommended number of teachers, reported "
        "in the report (btt, btt-soft; default 0.05; it does not change the noise)",
        "calibration": "BTT's noise and threshold: as printed in the paper, or the smallest "
        "meeting (epsilon, delta) exactly (btt, btt-soft; default tight)",
    })

    out = label.add_argument_group("outputs")
    out.add_argument("--out", required=True, metavar="FILE",
                     help="the labeled CSV file to write")
    out.add_argument("--report", default=None, metavar="FILE",
                     help="the JSON privacy report to write (mechanism, parameters, epsilon, delta, counts)")
    out.add_argument("--student", default=None, metavar="FILE",
                     help="train a student on the private labels and write it with joblib "
                     "(load it with joblib.load; it carries the labeling's epsilon and delta)")
    out.add_argument("--student-learner", default=None, metavar="NAME",
                     help="the student's learner (default: the teachers' learner)")
    out.add_argument("--student-param", action="append", default=[], metavar="KEY=VALUE",
                     help="a hyperparameter of the student's learner (default: its defaults)")
    out.add_argument("--bottom", choices=("drop", "random", "semi"), default="drop",
                     help="the student's rows without a label: drop them (default), give them a random "
                     "class, or keep them unlabeled for a semi-supervised student")

    run = label.add_argument_group("execution")
    run.add_argument("--n-jobs", type=int, default=None, metavar="N",
                     help="parallel workers for training and prediction (-1: all cores; default: "
                     "sequential, or the backend's own setting)")
    run.add_argument("--backend", default=None, metavar="NAME",
                     help="joblib backend for training and prediction, e.g. loky, threading or dask "
                     "(default: joblib's)")
    run.add_argument("--scheduler", default=None, metavar="ADDRESS",
                     help="address of the Dask scheduler for --backend dask, e.g. tcp://127.0.0.1:8786")
    run.add_argument("--scheduler-timeout", type=float, default=None, metavar="SECONDS",
                     help="how long to wait for the Dask scheduler to answer (default 10)")
    _add_seed(run)
    _add_progress(run)
    label.set_defaults(handler=_cmd_label)

    # ---------------------------------------------------------------- bounds
    bounds = commands.add_parser(
        "bounds",
        help="print the theory calculators' values (noise, threshold, teachers needed, loop solver)",
        description=_para(
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
            "      --alpha 0.01 --k 5000 --n 1e10 --vc 10 --json\n\n" + _EXIT_CODES
        ),
        formatter_class=_Formatter,
    )
    _add_privacy_options(bounds, {
        "epsilon": "privacy budget epsilon > 0",
        "delta": "privacy delta in (0, 1)",
        "T": "BTT's cutoff (maximum number of abstentions)",
    }, required=True)
    bounds.add_argument("--m", type=int, required=True, metavar="N", help="number of public queries")
    _add_privacy_options(bounds, {"calibration": "BTT calibration (default tight)"}, default="tight")
    bounds.add_argument("--soft", action="store_true",
                        help="soft-label calibration (2T sparse-vector rounds, 2m tests)")
    _add_privacy_options(bounds, {
        "beta": "failure probability of the recommended k, Theorem 3.2 and the loop (default 0.05)",
    }, default=0.05)
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
    bounds.set_defaults(handler=_cmd_bounds)

    # ---------------------------------------------------------------- audit
    aud = commands.add_parser(
        "audit",
        help="audit a mechanism empirically: claimed epsilon vs an audited lower bound",
        description=_para(
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
            f"  {PROG} audit --mechanism printed-distance-btt --trials 200000 --json\n\n" + _EXIT_CODES
        ),
        formatter_class=_Formatter,
    )
    aud.add_argument("--mechanism", required=True, type=_mechanism_name, choices=AUDIT_CHOICES, metavar="NAME",
                     help="the mechanism to audit: " + ", ".join(AUDIT_CHOICES) + " (the last two are "
                     "teaching examples that leak)")
    _add_privacy_options(aud, {
        "epsilon": "target epsilon (all but lnmax; default 1)",
        "delta": "target delta (all but lnmax; default 0.01)",
        "T": "BTT's cutoff (BTT mechanisms; default 1)",
        "calibration": "BTT calibration (BTT mechanisms; default tight)",
        "eta": "soft-label precision (btt-soft; default 0.25)",
        "gamma": "LNMax noise Lap(1/gamma) (lnmax; default 1)",
    })
    aud.add_argument("--pair", default=None, metavar="NAME",
                     help="neighbouring inputs: tie, top_loses_vote, all_queries_move, mixed_directions, "
                     "answered_then_bottom; for btt-soft adjacent_bins, bin_edge, tie, outer_half_bin "
                     "(default: the strongest for the mechanism)")
    aud.add_argument("--trials", type=int, default=200_000, metavar="N",
                     help="runs per input (default 200000; half choose the event, half estimate it)")
    aud.add_argument("--confidence", type=float, default=0.99, metavar="C",
                     help="joint confidence of the lower bound (default 0.99)")
    _add_seed(aud)
    _add_progress(aud)
    aud.add_argument("--json", action="store_true", help="print JSON instead of a table")
    aud.set_defaults(handler=_cmd_audit)
    return parser


# --------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------


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
        row was processed, 4 ``audit`` found a violation.
    """
    stdout, stderr = sys.stdout, sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else EXIT_ERROR)
    bar = ProgressBar(stderr, _progress_enabled(getattr(args, "progress", None), stderr))
    from core.errors import PrivateLabelLabError

    try:
        with _warnings_as_lines(stderr, bar):
            return int(args.handler(args, stdout, stderr, bar))
    except (PrivateLabelLabError, CommandError) as exc:
        bar.break_line()
        stderr.write(f"{PROG}: error: {_one_line(exc)}\n")
        stderr.flush()
        return EXIT_ERROR
    except KeyboardInterrupt:
        bar.break_line()
        stderr.write(f"{PROG}: interrupted\n")
        return 130


# --------------------------------------------------------------------------------------
# label
# --------------------------------------------------------------------------------------


def _privacy_settings(args: argparse.Namespace, mechanism: str, uses: dict, needs: dict, defaults: dict) -> dict[str, Any]:
    """The settings a mechanism uses: refuse others, require the needed, fill defaults."""
    flag = args.mechanism
    used = uses[mechanism]
    extra = [_FLAGS[name] for name in _FLAGS if name not in used and getattr(args, name, None) is not None]
    if extra:
        wanted = ", ".join(_FLAGS[name] for name in used)
        hint = ""
        if mechanism == "lnmax" and "--epsilon" in extra:
            hint = (
                " LNMax is set by its noise --gamma; its epsilon follows from gamma, delta and the "
                f"number of queries ('{PROG} bounds --lnmax-gamma G' prints it)."
            )
        raise CommandError(
            f"{', '.join(extra)} does not apply to --mechanism {flag}, which takes {wanted}.{hint}"
        )
    if uses is _LABEL_USES and mechanism == "lnmax" and (args.gamma is None) == (args.epsilon is None):
        raise CommandError(
            "--mechanism lnmax needs either --gamma (its noise Lap(1/gamma)) or --epsilon (the largest "
            "gamma whose data-independent bound on all public rows is that epsilon), not both."
        )
    missing = [_FLAGS[name] for name in needs[mechanism] if getattr(args, name, None) is None]
    if missing:
        raise CommandError(f"--mechanism {flag} needs {' and '.join(missing)}.")
    settings = {name: getattr(args, name) for name in used}
    for name, value in defaults.items():
        if name in settings and settings[name] is None:
            settings[name] = value
    return settings


def _validate_settings(settings: dict[str, Any]) -> None:
    from core import validation as v

    checks = {
        "epsilon": v.check_epsilon,
        "delta": v.check_delta,
        "T": v.check_T,
        "beta": v.check_beta,
        "eta": v.check_eta,
        "gamma": v.check_gamma,
    }
    for name, check in checks.items():
        if settings.get(name) is not None:
            check(settings[name])


def _output_paths(args: argparse.Namespace) -> dict[str, Path]:
    """The output files, checked before any work: writable places, distinct from the inputs."""
    outputs = {"--out": args.out, "--report": args.report, "--student": args.student}
    paths = {flag: Path(p).expanduser() for flag, p in outputs.items() if p is not None}
    inputs = {Path(p).expanduser().resolve() for p in (args.private, args.public)}
    seen: dict[Path, str] = {}
    for flag, path in paths.items():
        resolved = path.resolve()
        if resolved in inputs:
            raise CommandError(f"{flag} '{path}' is one of the input files; choose another file name.")
        if resolved in seen:
            raise CommandError(f"{seen[resolved]} and {flag} name the same file '{path}'; give each its own file.")
        seen[resolved] = flag
        if path.is_dir():
            raise CommandError(f"{flag} '{path}' is a folder; give a file name.")
        parent = resolved.parent
        if not parent.is_dir():
            raise CommandError(f"Cannot write {flag} '{path}': the folder '{parent}' does not exist.")
    return paths


def _write(path: Path, data: bytes, flag: str) -> None:
    try:
        path.write_bytes(data)
    except OSError as exc:
        raise CommandError(f"Cannot write {flag} '{path}': {exc.strerror or exc}.") from None


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _cmd_label(args: argparse.Namespace, stdout: TextIO, stderr: TextIO, bar: ProgressBar) -> int:
    import numpy as np
    from sklearn.pipeline import make_pipeline

    from core import mechanisms as agg
    from core.data.table import check_class_sizes, load_table, read_public
    from core.errors import ParameterError, PrivateLabelLabError
    from core.export import labeled_frame, privacy_report, report_json
    from core.ensemble.learners import LEARNERS, make_learner, parse_assignments
    from core.ensemble.teachers import train_teachers
    from core.validation import check_delta, check_k

    mechanism = args.mechanism.replace("-", "_")

    # 1. Arguments, before any file is read.
    settings = _privacy_settings(args, mechanism, _LABEL_USES, _LABEL_NEEDS, _LABEL_DEFAULTS)
    _validate_settings(settings)
    k = check_k(args.k)
    params = parse_assignments(args.learner, args.learner_param)
    student_learner = args.student_learner or args.learner
    if args.student is None and (args.student_learner is not None or args.student_param):
        raise CommandError("--student-learner and --student-param need --student FILE to write the student to.")
    student_params = parse_assignments(student_learner, args.student_param)
    if mechanism == "btt-soft" and not LEARNERS[args.learner].has_predict_proba:
        raise ParameterError(
            f"--mechanism btt-soft needs class probabilities, but {args.learner} has none. Choose a "
            "learner with probabilities (e.g. logistic_regression) or use --mechanism btt."
        )
    paths = _output_paths(args)
    from core.ensemble.distributed import DEFAULT_CONNECT_TIMEOUT, joblib_backend

    timeout = DEFAULT_CONNECT_TIMEOUT if args.scheduler_timeout is None else args.scheduler_timeout
    backend = joblib_backend(args.backend, args.scheduler, timeout=timeout)  # checked now, connects on entering
    if args.seed is not None:
        stderr.write(f"{PROG}: note: --seed makes this a reproducible demo run, not for production.\n")
    rng = np.random.default_rng(args.seed) if args.seed is not None else None

    # 2. Data (the app's loading path: the same checks and messages).
    table = load_table(args.private, label_column=args.label_column, missing=args.missing)
    public = read_public(args.public, table)
    check_delta(settings["delta"], n=table.n_rows)
    check_class_sizes(table, k)
    if mechanism == "btt-soft" and table.n_classes != 2:
        raise ParameterError(
            f"--mechanism btt-soft needs a binary task, but the label column '{table.label_column}' "
            f"holds {table.n_classes} classes. Use --mechanism btt (hard labels) instead."
        )

    # 3. Teachers and their votes (or scores), on the chosen joblib backend.
    model = make_pipeline(table.preprocessor(), make_learner(args.learner, **params))
    with backend:
        ensemble = train_teachers(
            table.features,
            table.labels,
            model,
            k,
            n_classes=table.n_classes,
            rng=rng,
            n_jobs=args.n_jobs,
            progress=bar.task(f"Training {k} teachers"),
        )
        if mechanism == "btt-soft":
            inputs = ensemble.scores(public, progress=bar.task("Scoring the public rows"))
        else:
            inputs = ensemble.vote_counts(public, progress=bar.task("Counting votes"))

    # 4. The private labeling.
    if mechanism == "btt":
        result = agg.btt_label(inputs, epsilon=settings["epsilon"], delta=settings["delta"], T=settings["T"],
                               calibration=settings["calibration"], beta=settings["beta"], rng=rng)
    elif mechanism == "btt-soft":
        result = agg.btt_soft_label(inputs, epsilon=settings["epsilon"], delta=settings["delta"], T=settings["T"], eta=settings["eta"],
                                    calibration=settings["calibration"], beta=settings["beta"], rng=rng)
    elif mechanism == "lnmax":
        gamma = settings["gamma"]
        if gamma is None:  # --epsilon: PATE's data-independent bound on all public rows meets it
            from core.accounting.pate import pate_gamma_for_epsilon

            gamma = pate_gamma_for_epsilon(settings["epsilon"], len(public), settings["delta"])
        result = agg.lnmax_label(inputs, gamma=gamma, delta=settings["delta"], rng=rng)
    else:
        result = agg.composition_baseline_label(inputs, epsilon=settings["epsilon"], delta=settings["delta"], rng=rng)
    del inputs, ensemble  # non-private: never written

    # 5. Outputs (exactly the app's export functions).
    frame = labeled_frame(public, result, table.class_names)
    _write(paths["--out"], frame.to_csv(index=False).encode("utf-8"), "--out")
    written = [str(paths["--out"])]
    if "--report" in paths:
        report = privacy_report(result, n_private=table.n_rows, n_public=len(public),
                                learner=args.learner, k=k, dataset=None)
        _write(paths["--report"], report_json(report).encode("utf-8"), "--report")
        written.append(str(paths["--report"]))
    stdout.write(
        f"Labeled {result.m} public rows with {args.mechanism} "
        f"({k} teachers, {args.learner}, on {table.n_rows} private rows):\n"
        f"  answered       {result.n_answered}\n"
        f"  abstained      {result.n_bottom}\n"
        f"  not processed  {result.n_unprocessed}\n"
        f"Guarantee: ({_fmt(result.epsilon)}, {_fmt(result.delta)})-differential privacy "
        "(replace one private row).\n"
        f"Wrote {', '.join(written)}.\n"
    )
    stdout.flush()
    bar.break_line()
    if not result.feasible and result.reason:
        stderr.write(f"{PROG}: warning: {_one_line(result.reason)}\n")
    halted = result.n_unprocessed > 0
    if halted:
        failed = "failed tests" if mechanism == "btt-soft" else "abstentions"
        row = "?" if result.halted_at is None else str(result.halted_at + 1)
        stderr.write(
            f"{PROG}: budget exhausted: {args.mechanism} halted after {result.params.get('rounds')} "
            f"{failed} at public row {row}; the {result.n_unprocessed} rows after it were not "
            f"processed (empty label, status 'not processed' in {paths['--out']}). Raise --T or "
            "--epsilon, or use more teachers, to label more rows.\n"
        )
    stderr.flush()

    # 6. The student: a post-processing of the labels, with the same guarantee.
    if "--student" in paths:
        import joblib

        from core.ensemble.student import train_student

        student_model = make_pipeline(table.preprocessor(), make_learner(student_learner, **student_params))
        try:
            student = train_student(public, result, student_model, bottom=args.bottom,
                                    n_classes=2 if result.scores is not None else table.n_classes, rng=rng)
        except PrivateLabelLabError as exc:
            raise CommandError(f"The labels were written but the student was not: {exc}") from None
        buffer = io.BytesIO()
        joblib.dump(student.model, buffer)
        _write(paths["--student"], buffer.getvalue(), "--student")
        stdout.write(
            f"Student ({student_learner}) trained on {student.n_labeled} labeled rows; it carries the "
            f"same guarantee. Wrote {paths['--student']}.\n"
        )
        stdout.flush()
    return EXIT_HALTED if halted else EXIT_OK


# --------------------------------------------------------------------------------------
# bounds
# --------------------------------------------------------------------------------------

Row = tuple[str, Any, str]


def _bounds_sections(args: argparse.Namespace) -> list[tuple[str, str, list[Row]]]:
    """Every value the bounds command prints: (section key, title, rows of (key, value, text))."""
    from core import accounting as acc
    from core.theory import bounds as b
    from core.validation import check_beta, check_delta, check_epsilon, check_m, check_T

    eps, delta = check_epsilon(args.epsilon), check_delta(args.delta)
    T, m, beta = check_T(args.T), check_m(args.m), check_beta(args.beta)
    cal = acc.calibrate_btt(eps, delta, T, m, args.calibration, soft=args.soft)
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
        ("threshold", float(acc.a_stab_threshold(eps, delta)), "Gamma = log(1/delta)/epsilon"),
    ]))
    base = acc.composition_baseline_parameters(eps, delta, m)
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
        sections.append(("lnmax", f"PATE LNMax, m answers with noise Lap(1/{g:g})", [
            ("gamma", g, "noise parameter"),
            ("epsilon_pate_simple", float(acc.pate_simple_epsilon(g, m, delta)),
             "PATE's data-independent bound 4m gamma^2 + 2 gamma sqrt(2m log(1/delta))"),
            ("epsilon_composition", float(comp.epsilon),
             f"composition of m pure 2 gamma-DP answers ({comp.method}); a run reports the smaller"),
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


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # strict JSON, as core.export.report_json writes non-finite numbers
    return value


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
                    out.append(f"  {_one_line(value)}")
                continue
            out.append(f"  {key:<{key_w}}  {_text_value(value):>{val_w}}  {text}")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def _cmd_bounds(args: argparse.Namespace, stdout: TextIO, stderr: TextIO, bar: ProgressBar) -> int:
    sections = _bounds_sections(args)
    if args.json:
        data = {key: {k: _json_value(v) for k, v, _ in rows} for key, _, rows in sections}
        stdout.write(json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
    else:
        stdout.write(_table(sections))
    stdout.flush()
    return EXIT_OK


# --------------------------------------------------------------------------------------
# audit
# --------------------------------------------------------------------------------------

_AUDIT_USES = {
    "btt": ("epsilon", "delta", "T", "calibration"),
    "printed-distance-btt": ("epsilon", "delta", "T", "calibration"),
    "btt-soft": ("epsilon", "delta", "T", "eta", "calibration"),
    "lnmax": ("gamma",),
    "baseline": ("epsilon", "delta"),
    "a-stab": ("epsilon", "delta"),
    "printed-distance-a-stab": ("epsilon", "delta"),
}


def _cmd_audit(args: argparse.Namespace, stdout: TextIO, stderr: TextIO, bar: ProgressBar) -> int:
    from core import audit as A

    mechanism = args.mechanism.replace("-", "_")
    settings = _privacy_settings(args, mechanism, _AUDIT_USES, {m: () for m in _AUDIT_USES}, _AUDIT_DEFAULTS)
    if args.pair is not None:
        names, _ = A.pair_choices(mechanism)
        if args.pair not in names:
            raise CommandError(f"--pair {args.pair!r} is not offered for {args.mechanism}; choose one of {', '.join(names)}.")
    scn = A.scenario(mechanism, pair=args.pair, **settings)
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
            "mechanism": mechanism,
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
        stdout.write(json.dumps({k: _json_value(v) for k, v in data.items()}, indent=2, ensure_ascii=False) + "\n")
    else:
        favoured = "a" if result.direction == "a>b" else "b"
        shown = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in scn.settings.items())
        rows = [
            ("mechanism", f"{scn.label} ({args.mechanism})"),
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
        stdout.write("\n".join(f"{name:<{width}}  {_one_line(text)}" for name, text in rows) + "\n")
    stdout.flush()
    return EXIT_OK if result.passed else EXIT_VIOLATION


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
