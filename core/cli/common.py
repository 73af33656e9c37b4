"""What every command shares: exit codes, errors, one-line messages, the progress bar,
the help formatter and the ``--seed``/``--progress`` options (docs/design.md §5).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import textwrap
import warnings
from typing import Any, Callable, Iterator, TextIO

__all__ = [
    "PROG",
    "EXIT_OK",
    "EXIT_ERROR",
    "EXIT_HALTED",
    "EXIT_VIOLATION",
    "EXIT_STUDENT_FAILED",
    "EXIT_CODES",
    "CommandError",
    "ProgressBar",
    "Formatter",
    "add_command",
    "para",
    "one_line",
    "cli_words",
    "LIBRARY_WORDS",
    "warnings_as_lines",
    "progress_enabled",
    "add_progress",
    "add_seed",
    "dataset_name",
    "mechanism_name",
    "json_value",
    "fmt",
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
EXIT_STUDENT_FAILED = 5
"""``label``: every public row was processed and the labels written, but the student failed
(when the mechanism also halted, the exit code stays 3)."""

EXIT_CODES = """\
exit codes:
  0  done (audit: no violation found)
  2  bad arguments or bad input (one line 'private-label-lab: error: ...' on stderr)
  3  label: the privacy budget ran out before every public row was processed (BTT
     reached its cutoff T); the files are still written, the remaining rows have an
     empty label and the status 'not processed'
  4  audit: the audited lower bound exceeds the claimed epsilon (a violation)
  5  label: the labels and the report were written, but the student (--student) could
     not be trained; when the run also halted, the code stays 3 (the labeling's outcome)"""

WIDTH = 96
"""Width of the help screens."""


class CommandError(Exception):
    """A problem with the command's arguments that the library does not check itself
    (an option that does not apply, an output path that cannot be written)."""


# ----------------------------------------------------------------------------- terminal output


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
    >>> import sys
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


def one_line(text: Any) -> str:
    """``text`` with every run of white space (line breaks included) made one space."""
    return " ".join(str(text).split())


LIBRARY_WORDS = (
    ("given as the private file and as the public file", "given to --private and to --public"),
    ("Give as the public file the rows to label", "Give --public the rows to label"),
    ("the private file given as the public file", "the private file given to --public"),
    ("drop_columns=", "--drop "),
    ("(label_column=...)", "(--label-column NAME)"),
    ("Pass one of them as label_column.", "Give one of them as --label-column."),
    ("label_column=", "--label-column "),
    ("missing='drop'", "--missing drop"),
    ("missing='impute'", "--missing impute"),
    ("missing='refuse'", "--missing refuse"),
    ('missing="drop"', "--missing drop"),
    ('missing="impute"', "--missing impute"),
    ("rename_duplicates=True", "--rename-duplicates"),
    ("drop_empty_columns=True", "--drop-empty-columns"),
    ("missing_markers=", "--missing-marker "),
    ("privacy_unit=", "--privacy-unit "),
    ("encoding='latin-1' or another", "--encoding latin-1 or another"),
    ("encoding='latin-1'", "--encoding latin-1"),
    ("encoding='cp1252'", "--encoding cp1252"),
    ("decimal=','", "--decimal ','"),
    ("decimal='.'", "--decimal '.'"),
    ("sep=';'", "--sep ';'"),
    ("sep=','", "--sep ','"),
    ("sep=tab", "--sep tab"),
)
"""The library's keyword arguments named in its messages, and the command line's flags for them."""


def cli_words(text: Any) -> str:
    """A library message in the command line's words: keyword arguments become flags (:data:`LIBRARY_WORDS`)."""
    out = one_line(text)
    for library, flag in LIBRARY_WORDS:
        out = out.replace(library, flag)
    return out


@contextlib.contextmanager
def warnings_as_lines(stream: TextIO, bar: ProgressBar) -> Iterator[None]:
    """Show warnings raised inside as ``private-label-lab: warning: ...`` lines.

    Parameters
    ----------
    stream : text stream
        Where to write them (stderr).
    bar : ProgressBar
        Its unfinished line is ended first.
    """

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        bar.break_line()
        stream.write(f"{PROG}: warning: {one_line(message)}\n")
        stream.flush()

    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        warnings.showwarning = show
        yield


def progress_enabled(choice: bool | None, stream: TextIO) -> bool:
    """Whether to draw progress bars: ``--progress``/``--no-progress``, else only on a terminal."""
    if choice is not None:
        return choice
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):
        return False


def fmt(x: float) -> str:
    """A number in four significant digits."""
    return f"{x:.4g}"


def json_value(value: Any) -> Any:
    """``value`` for strict JSON: non-finite floats as text, as :func:`core.export.report_json` writes them."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


# ----------------------------------------------------------------------------- help screens and options


def para(text: str) -> str:
    """A description paragraph wrapped for the help screen (the formatter keeps line breaks)."""
    return textwrap.fill(" ".join(text.split()), width=WIDTH, break_on_hyphens=False)


class Formatter(argparse.RawDescriptionHelpFormatter):
    """The help formatter of every command: descriptions and epilogs as written."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=30, width=WIDTH)


def add_command(commands, name: str, *, help: str, description: str, epilog: str) -> argparse.ArgumentParser:
    """Add one command to the subparsers ``commands``, as every command is laid out.

    Parameters
    ----------
    commands : argparse subparsers action
    name : str
        The command's name.
    help : str
        Its line in the list of commands.
    description : str
        Its paragraph, wrapped by :func:`para`.
    epilog : str
        Examples and lists shown after the options; :data:`EXIT_CODES` follows them.

    Returns
    -------
    argparse.ArgumentParser
    """
    return commands.add_parser(name, help=help, description=para(description),
                               epilog=epilog + "\n\n" + EXIT_CODES, formatter_class=Formatter)


def mechanism_name(text: str) -> str:
    """A ``--mechanism`` value in the registry's spelling (``btt_soft`` is read as ``btt-soft``)."""
    return text.strip().lower().replace("_", "-")


def add_progress(parser: argparse.ArgumentParser) -> None:
    """Add ``--progress``/``--no-progress``."""
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


def add_seed(parser: argparse.ArgumentParser) -> None:
    """Add ``--seed N`` (a reproducible demonstration option, never written to any output)."""
    parser.add_argument(
        "--seed",
        type=_seed,
        default=None,
        metavar="N",
        help="reproducible demo seed: runs repeat exactly. Not for production (the noise "
        "becomes predictable); never written to any output. Default: fresh randomness "
        "from the operating system",
    )


def dataset_name(args) -> str:
    """The name a report gives the private data: ``--dataset NAME`` where the command has it, else the
    private file's name without folder or extension (a report names data, never a path)."""
    from pathlib import Path

    given = getattr(args, "dataset", None)
    if given:
        return str(given)
    name = Path(str(args.private)).name
    for ext in (".gz", ".csv", ".tsv", ".txt"):
        if name.lower().endswith(ext):
            name = name[: -len(ext)]
    return name
