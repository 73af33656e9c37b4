"""The privacy ledger of a command that reads private data (``label``, ``tune``).

Every such run is charged, before it reads a private row, to the ledger of the private
dataset's **name** in the ledger store shared with the app and the library
(:mod:`core.ledger.store`): ``--dataset NAME`` names the data (by default the private
file's name without its extension, said on stderr), ``--ledger PATH`` chooses the store
(by default ``$PRIVATE_LABEL_LAB_LEDGER``, else the per-user default), and
``--budget-epsilon``/``--budget-delta`` set the data's total budget in it.  The file's
bytes never decide which ledger is charged: the same rows re-saved with other line
endings, an encoding mark or their columns reordered are one dataset when they carry one
name.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from core.cli.common import CommandError, fmt

__all__ = ["add_ledger_arguments", "ledger_line", "open_ledger"]

DATASET_HELP = (
    "the name of the private data: its privacy budget and every run charged to it are kept under this name in the "
    "ledger store, shared with the app and the library. Give the same name to every copy of the same data: "
    "under one name, another file, other line endings, an encoding mark or another column order change nothing. "
    "Default: the --private file's name without its extension (e.g. credit for credit.csv), said on the ledger "
    "line; a real job should name its data"
)
LEDGER_HELP = (
    "the ledger store (an SQLite file, created if missing) where each dataset's runs and budget are kept; the run's "
    "a-priori (epsilon, delta) is charged to --dataset there BEFORE any private row is read, and the report gets "
    "the dataset's total. Default: $PRIVATE_LABEL_LAB_LEDGER, else ~/.local/share/private-label-lab/ledger.sqlite. "
    "Units' IDs are kept as keyed hashes whose key sits beside it (PATH.key)"
)


def add_ledger_arguments(group: argparse._ArgumentGroup) -> None:
    """``--dataset``, ``--ledger``, ``--budget-epsilon``, ``--budget-delta`` on ``group``.

    Parameters
    ----------
    group : argparse argument group
    """
    group.add_argument("--dataset", default=None, metavar="NAME", help=DATASET_HELP)
    group.add_argument("--ledger", default=None, metavar="PATH", help=LEDGER_HELP)
    group.add_argument("--budget-epsilon", type=float, default=None, metavar="E",
                       help="the total epsilon allowed on this dataset (stored in the ledger, for every later run); "
                       "a run that would pass it is refused before it starts (exit 2)")
    group.add_argument("--budget-delta", type=float, default=None, metavar="D",
                       help="the total delta allowed (default: the dataset's stored budget delta)")


def open_ledger(args: argparse.Namespace):
    """The ledger of the command's private dataset, with ``--budget-*`` applied (nothing charged).

    Parameters
    ----------
    args : argparse.Namespace
        With ``private``, ``dataset``, ``ledger``, ``budget_epsilon``, ``budget_delta``.

    Returns
    -------
    core.ledger.PrivacyLedger

    Raises
    ------
    CommandError
        For an empty name, or a new budget without both ε and δ.
    """
    from core.ledger import PrivacyLedger, store_path

    name = args.dataset
    if name is None:
        name = Path(args.private).stem
    elif not str(name).strip():
        raise CommandError("--dataset needs a name (the name this data's budget is kept under).")
    ledger = PrivacyLedger(str(name), store=store_path(args.ledger))
    if args.budget_epsilon is not None or args.budget_delta is not None:
        stored = ledger.budget
        b_eps = args.budget_epsilon if args.budget_epsilon is not None else (stored.epsilon if stored else None)
        b_delta = args.budget_delta if args.budget_delta is not None else (stored.delta if stored else None)
        if b_eps is None or b_delta is None:
            raise CommandError("A new ledger budget needs both --budget-epsilon and --budget-delta.")
        ledger.set_budget(epsilon=b_eps, delta=b_delta)
    return ledger


def ledger_line(ledger, args: argparse.Namespace) -> str:
    """``Ledger PATH, dataset 'NAME': 3 run(s), total (e, d) of the budget (E, D).`` (one line, with a newline);
    a name taken from the file says so."""
    total = ledger.total()
    budget = ledger.budget
    named = ("" if args.dataset is not None else
             " (named after the file: give --dataset NAME to keep one budget for every copy of this data)")
    return (f"Ledger {ledger.store}, dataset '{ledger.dataset}'{named}: {len(ledger)} run(s), total "
            f"({fmt(total.epsilon)}, {fmt(total.delta)})"
            + (f" of the budget ({fmt(budget.epsilon)}, {fmt(budget.delta)})" if budget is not None else "")
            + ".\n")
