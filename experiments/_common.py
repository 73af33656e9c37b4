"""Shared plumbing of the experiment scripts: arguments, data, tables, plots.

Every script in ``experiments/`` reproduces one claim of the source papers with the
library's own functions (``core``), writes ``<name>.md`` (a markdown table with the
parameters and the exact command) and ``<name>.png`` (a plot) into ``--out``, and prints
the table.  Experiments are reproducible by design: every random draw comes from
generators derived from ``--seed``.  This is research code: fixed seeds make the noise
predictable, which is right for an experiment and wrong for a real release (the library
never writes a seed to an export).

Nothing here computes a privacy or learning quantity the library already computes.
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run from a fresh clone without installing the package
    sys.path.insert(0, str(ROOT))

import os  # noqa: E402

# core.ensemble.teachers hands sklearn's ``delayed`` to a plain joblib Parallel, and every
# teacher then warns once in its worker (hundreds of identical lines): silence that one
# warning here and in the workers (they inherit the environment).
os.environ.setdefault("PYTHONWARNINGS", "ignore::UserWarning:sklearn.utils.parallel")

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402,F401  (re-exported for the scripts)

from core.data import halfspaces  # noqa: E402
from core.ensemble.learners import make_learner  # noqa: E402
from core.ensemble.teacher_ensemble import TeacherEnsemble  # noqa: E402
from core.ensemble.teachers import train_teachers  # noqa: E402

DEFAULT_OUT = ROOT / "experiments" / "results"
"""Where the scripts write their table and plot unless ``--out`` says otherwise."""

QUICK_OUT = ROOT / "experiments" / "out" / "quick"
"""Where a ``--quick`` run writes unless ``--out`` says otherwise: a scratch folder ignored by
git, so a smoke test never overwrites the tracked tables and plots of ``experiments/results/``."""

SEED_NOTE = (
    "Reproducible by design: every random draw (data, teachers, mechanism noise) comes from "
    "`--seed`. A fixed seed makes the noise predictable, so this is research code, not a release."
)


# --------------------------------------------------------------------------- arguments


def parser(name: str, description: str) -> argparse.ArgumentParser:
    """An argument parser with the options every experiment takes.

    ``--out DIR`` (default ``experiments/results/``; ``experiments/out/quick/`` with
    ``--quick``), ``--seed`` (default 0) and ``--quick`` (tiny sizes for the smoke test; the
    numbers are then not meaningful).
    Scripts add their own size and privacy options.
    """
    p = argparse.ArgumentParser(
        prog=f"experiments/{name}.py",
        description=description,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--out", type=Path, default=None,
                   help=f"folder for the table (.md) and plot (.png) (default: {DEFAULT_OUT.relative_to(ROOT)}, "
                   f"or the scratch folder {QUICK_OUT.relative_to(ROOT)} with --quick)")
    p.add_argument("--seed", type=int, default=0, help="seed of every random draw (reproducible research runs)")
    p.add_argument("--quick", action="store_true", help="tiny sizes for a smoke test; numbers not meaningful")
    p.add_argument("--n-jobs", type=int, default=2, help="workers for training the teachers")
    return p


def parse(p: argparse.ArgumentParser, argv: Sequence[str] | None, quick: dict[str, Any]) -> argparse.Namespace:
    """Parse ``argv``; with ``--quick``, options left at their default take ``quick``'s values.

    An option given explicitly on the command line always wins over the quick value.  Without
    ``--out``, a quick run writes to :data:`QUICK_OUT` (scratch), never over the tracked
    results in :data:`DEFAULT_OUT`.
    """
    args = p.parse_args(argv)
    if getattr(args, "out", None) is None and "out" in vars(args):
        args.out = QUICK_OUT if args.quick else DEFAULT_OUT
    if args.quick:
        for key, value in quick.items():
            if getattr(args, key) == p.get_default(key):
                setattr(args, key, value)
    if args.seed < 0:
        p.error("--seed must be a non-negative whole number.")
    return args


def number_list(
    kind: type,
    what: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    increasing: bool = False,
) -> Callable[[str], list]:
    """An argparse type: a comma-separated list of ``kind`` (int or float) within bounds.

    The message names ``what`` one value is (e.g. "noise level") and the rule broken.
    """
    rule = []
    if low is not None:
        rule.append(f"{'above' if low_open else 'at least'} {low:g}")
    if high is not None:
        rule.append(f"{'below' if high_open else 'at most'} {high:g}")
    interval = (f"lie in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
                if low is not None and high is not None else "be " + " and ".join(rule))

    def parse(text: str) -> list:
        try:
            values = [kind(v) for v in text.split(",") if v.strip()]
        except ValueError:
            words = "whole numbers" if kind is int else "numbers"
            raise argparse.ArgumentTypeError(f"must be {words} separated by commas, got {text!r}") from None
        if not values:
            raise argparse.ArgumentTypeError(f"needs at least one {what}, got {text!r}")
        for v in values:
            if ((low is not None and (v <= low if low_open else v < low))
                    or (high is not None and (v >= high if high_open else v > high))):
                raise argparse.ArgumentTypeError(f"each {what} must {interval}, got {text!r}")
        if increasing and values != sorted(set(values)):
            raise argparse.ArgumentTypeError(f"the values ({what}) must increase, got {text!r}")
        return values

    return parse


def positive_int(text: str) -> int:
    """argparse type: a whole number of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, got {text}")
    return value


def probability(text: str) -> float:
    """argparse type: a number strictly between 0 and 1."""
    value = float(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must lie strictly between 0 and 1, got {text}")
    return value


def positive_float(text: str) -> float:
    """argparse type: a finite number greater than 0."""
    value = float(text)
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number greater than 0, got {text}")
    return value


def command_line(name: str, argv: Sequence[str] | None) -> str:
    """The command that made this run, as typed from the repository root (arguments verbatim)."""
    args = list(sys.argv[1:] if argv is None else argv)
    return " ".join(["python", f"experiments/{name}.py", *map(shlex.quote, args)])


def rng_for(seed: int, *stream: int) -> np.random.Generator:
    """An independent generator for one named stream of an experiment (``seed``, then ids)."""
    return np.random.default_rng([seed, *stream])


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class HalfspaceTask:
    """Private and public rows of one halfspace task with label noise (``core.data.halfspaces``).

    Attributes
    ----------
    X_private, y_private : the teachers' training rows (labels carry the noise).
    X_public, y_public : the public queries and their (noisy) labels, used only to measure.
    y_public_clean : the public queries' noise-free labels ``1[w·x > 0]``.
    noise : the label-flip probability γ.
    """

    X_private: np.ndarray
    y_private: np.ndarray
    X_public: np.ndarray
    y_public: np.ndarray
    y_public_clean: np.ndarray
    noise: float


def halfspace_task(n_private: int, n_public: int, d: int, noise: float, seed: int) -> HalfspaceTask:
    """Draw ``n_private + n_public`` rows of one noisy halfspace and split them in order.

    The rows are i.i.d., so the first ``n_private`` are the private set and the rest the
    public queries; both come from the same halfspace ``w``.
    """
    X, y, w = halfspaces(n_private + n_public, d, noise=noise, rng=rng_for(seed, 1), return_normal=True)
    clean = (X[n_private:] @ w > 0).astype(np.int64)
    return HalfspaceTask(X[:n_private], y[:n_private], X[n_private:], y[n_private:], clean, noise)


def logistic_teachers(task: HalfspaceTask, k: int, seed: int, n_jobs: int) -> TeacherEnsemble:
    """``k`` logistic-regression teachers (the registry's defaults) on disjoint chunks."""
    return train_teachers(
        task.X_private, task.y_private, make_learner("logistic_regression"), k,
        rng=rng_for(seed, 2), n_jobs=n_jobs,
    )


# --------------------------------------------------------------------------- mechanisms


def accuracy(labels: np.ndarray, truth: np.ndarray) -> float:
    """Share of answered entries (``labels >= 0``) equal to ``truth``; NaN when none is answered."""
    answered = labels >= 0
    if not answered.any():
        return float("nan")
    return float(np.mean(labels[answered] == truth[answered]))


# --------------------------------------------------------------------------- tables


def mean_sd(values: Iterable[float], digits: int = 1) -> str:
    """``mean ± sd`` of finite values (sample sd; ``—`` when there is none)."""
    v = np.asarray([x for x in values if x is not None and math.isfinite(x)], dtype=float)
    if v.size == 0:
        return "—"
    if v.size == 1:
        return f"{v[0]:.{digits}f}"
    return f"{v.mean():.{digits}f} ± {v.std(ddof=1):.{digits}f}"


def fmt(value: Any, digits: int = 3) -> str:
    """A table cell: floats with ``digits`` significant digits, NaN as ``—``."""
    if value is None:
        return "—"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(float(value)):
            return "—"
        return f"{float(value):.{digits}g}"
    return str(value)


def markdown_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub markdown table; cells are formatted with :func:`fmt` unless already text."""
    if any(len(r) != len(columns) for r in rows):
        raise ValueError("every row needs one cell per column")
    head = "| " + " | ".join(columns) + " |"
    rule = "|" + "|".join("---" for _ in columns) + "|"
    body = ["| " + " | ".join(c if isinstance(c, str) else fmt(c) for c in r) + " |" for r in rows]
    return "\n".join([head, rule, *body])


def write_outputs(
    out: Path,
    name: str,
    title: str,
    command: str,
    sections: Sequence[str],
    figure: Any,
    elapsed_s: float,
) -> tuple[Path, Path]:
    """Write ``<name>.md`` (title, command, sections) and ``<name>.png`` (the figure laid out
    tightly); print the markdown.

    Returns the two paths.
    """
    out.mkdir(parents=True, exist_ok=True)
    md_path, png_path = out / f"{name}.md", out / f"{name}.png"
    text = "\n\n".join(
        [f"# {title}", f"Command: `{command}` ({elapsed_s:.0f} s on this machine)", *sections, SEED_NOTE]
    ) + "\n"
    md_path.write_text(text, encoding="utf-8")
    figure.tight_layout()
    figure.savefig(png_path, dpi=110, bbox_inches="tight")
    plt.close(figure)
    print(text)
    print(f"wrote {md_path} and {png_path}")
    return md_path, png_path


class Timer:
    """Wall-clock seconds since construction (``Timer().elapsed``)."""

    def __init__(self) -> None:
        self._start = time.perf_counter()

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self._start


def experiment(name: str, title: str, build_parser: Callable[[], argparse.ArgumentParser],
               run: Callable[[Any], Any], report: Callable[[Any, Any], tuple[Sequence[str], Any]],
               quick: dict[str, Any]) -> Callable[[Sequence[str] | None], None]:
    """A script's ``main(argv)``: parse (``--quick`` applies ``quick``), run, and write what
    ``report(args, data)`` returns (its markdown sections and its figure) under ``title``
    with the command line and the time taken (:func:`write_outputs`)."""

    def main(argv: Sequence[str] | None = None) -> None:
        timer = Timer()
        args = parse(build_parser(), argv, quick)
        sections, figure = report(args, run(args))
        write_outputs(args.out, name, title, command_line(name, argv), sections, figure, timer.elapsed)

    main.__doc__ = f"Parse the arguments, run the experiment, write ``{name}.md`` and ``{name}.png``."
    return main


def run_main(main: Callable[[Sequence[str] | None], Any]) -> None:
    """Run a script's ``main`` and turn the library's errors into a one-line message."""
    from core.errors import PrivateLabelLabError

    try:
        main(None)
    except PrivateLabelLabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


# --------------------------------------------------------------------------- UCI Adult (PATE 2017, 2018)


@dataclass(frozen=True)
class AdultSplit:
    """UCI Adult's original split: private training rows; public queries and evaluation rows
    from the test file (queries first, evaluation the last rows, disjoint)."""

    table: Any
    X_public: Any
    y_public: np.ndarray
    X_eval: Any
    y_eval: np.ndarray


def adult_split(n_public: int, n_eval: int, missing: str = "impute") -> AdultSplit:
    """``adult_train`` as the private table; the first ``n_public`` rows of ``adult_test`` as
    the public queries and its last ``n_eval`` rows as the student's evaluation set."""
    from core.data import load_bundled

    train = load_bundled("adult_train", missing=missing)
    test = load_bundled("adult_test", missing=missing)
    if n_public + n_eval > test.n_rows:
        raise SystemExit(f"error: adult_test has {test.n_rows:,} rows; {n_public:,} public and {n_eval:,} "
                         "evaluation rows would overlap.")
    X, y = test.features, test.labels
    return AdultSplit(train, X.iloc[:n_public].reset_index(drop=True), y[:n_public],
                      X.iloc[test.n_rows - n_eval:].reset_index(drop=True), y[test.n_rows - n_eval:])


def forest_teachers(split: AdultSplit, k: int, trees: int, seed: int, n_jobs: int, *stream: int):
    """``k`` random-forest teachers (``trees`` trees) on disjoint chunks of the private rows,
    through ``core.pipeline.train`` (the table's preprocessing inside each teacher)."""
    from core import pipeline

    return pipeline.train(split.table, "random_forest", {"n_estimators": trees}, k,
                          rng=rng_for(seed, 2, *stream), n_jobs=n_jobs)


def forest_student_accuracy(split: AdultSplit, result, trees: int, rng) -> float:
    """Test accuracy of a random-forest student trained on a labeling of the public rows
    (``core.pipeline.student``, ⊥ dropped); NaN when fewer than two classes were answered."""
    from core import pipeline
    from core.errors import DataError

    try:
        model = pipeline.student(split.X_public, result, "random_forest", {"n_estimators": trees}, split.table, rng=rng)
    except DataError:
        return float("nan")
    return float(np.mean(model.predict(split.X_eval) == split.y_eval))


def nonprivate_forest_accuracy(split: AdultSplit, trees: int, seed: int) -> float:
    """Test accuracy of one random forest on all private rows (the non-private reference)."""
    from core import pipeline
    from core.ensemble.inputs import seed_estimator

    model = seed_estimator(pipeline.teacher_model(split.table, "random_forest", {"n_estimators": trees}), seed)
    model.fit(pipeline.model_input(split.table, split.table.features), split.table.labels)
    return float(np.mean(model.predict(pipeline.model_input(split.table, split.X_eval)) == split.y_eval))


def auto_cutoff(epsilon: float, delta: float, m: int, k: int, soft: bool = False) -> int:
    """BTT's cutoff from public quantities only: the largest T on a geometric grid whose
    tightly calibrated threshold w (``core.accounting.calibrate_btt``) is at most k/4, at least 1."""
    from core.accounting import calibrate_btt

    grid = [int(t) for t in np.unique(np.geomspace(1, max(1, m), 40).round())]
    ok = lambda t: calibrate_btt(epsilon, delta=delta, T=t, m=m, calibration="tight", soft=soft).threshold <= k / 4  # noqa: E731
    if not ok(grid[0]):
        return 1
    lo, hi = 0, len(grid) - 1
    while lo < hi:  # invariant: grid[lo] passes
        mid = (lo + hi + 1) // 2
        if ok(grid[mid]):
            lo = mid
        else:
            hi = mid - 1
    return grid[lo]
