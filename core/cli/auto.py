"""``label --mechanism auto`` and ``--k auto``: the choice of :func:`core.auto.choose` on a command.

The command's files are read for their public quantities only (row counts, the classes,
the public rows' encoded width), through the same loaders and column choices as the
command itself; nothing private decides the choice, so it costs no privacy.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

__all__ = ["resolve_auto"]


def resolve_auto(args: argparse.Namespace, stderr: TextIO):
    """Set ``args.mechanism``, ``args.k`` and any chosen setting not given; say why on ``stderr``.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed ``label`` command, with ``mechanism`` and/or ``k`` equal to ``"auto"``.
    stderr : text stream

    Returns
    -------
    core.auto.AutoChoice

    Raises
    ------
    core.errors.ParameterError
        Without ``--epsilon`` and ``--delta`` (the choice depends on the budget).
    """
    from core.auto import choose
    from core.cli import checks
    from core.cli.options import DEST, given_settings
    from core.data import load_table, read_public
    from core.errors import ParameterError
    from core.mechanisms.dp_training import public_encoding

    given = given_settings(args)
    if "epsilon" not in given or "delta" not in given:
        raise ParameterError("--mechanism auto and --k auto need --epsilon and --delta (the choice depends on the budget).")
    from core.data import check_pair

    check_pair(args.private, args.public)  # the private file given as --public: refused before reading
    checks.private_columns(args, stderr)  # the run's features: flagged columns left out unless --keep
    read_as = checks.csv_format(args)
    raw_private = checks.raw_frame(args.private, args.rename_duplicates, read_as)
    raw_public = checks.raw_frame(args.public, args.rename_duplicates, read_as)
    keys = checks.key_names(args, raw_public.columns)
    private_src, public_src = checks.select_columns(
        raw_private, raw_public, label_column=args.label_column,
        features=checks.names_list(args.features), drop=checks.names_list(args.drop), unit=args.privacy_unit,
        keys=keys)
    table = load_table(args.private if private_src is None else private_src, label_column=args.label_column,
                       missing=args.missing, missing_markers=args.missing_marker or None,
                       name=Path(args.private).stem, rename_duplicates=args.rename_duplicates,
                       drop_empty_columns=args.drop_empty_columns, privacy_unit=args.privacy_unit,
                       csv_format=read_as if private_src is None else None, classes=checks.declared_classes(args))
    public, _ = read_public(public_src, table, keys=keys)  # the public file as read above
    from core.plan import PublicRows

    enc = public_encoding(table, public)
    d = len(enc.numeric) + sum(len(v) for v in enc.categories.values())
    n_units = table.n_units  # persons make the chunks with a unit; the file's count, before a drop
    from core.cli.plan import quality_of, route_accuracy_of

    choice = choose(n=n_units, m=len(public), d=d, n_classes=table.n_classes, epsilon=float(given["epsilon"]),
                    delta=float(given["delta"]), learner=args.learner or "logistic_regression", mechanism=args.mechanism,
                    public=PublicRows.of(table, public), quality=quality_of(args, table.n_classes),
                    model_accuracy=getattr(args, "model_accuracy", None), route_accuracy=route_accuracy_of(args))
    args.mechanism = choice.mechanism
    from core.mechanisms import registry

    if args.learner is None and registry.get(choice.mechanism).inputs != "rows":
        args.learner = "logistic_regression"
        stderr.write("auto: the teachers' learner is logistic_regression (none was given with --learner).\n")
    if args.k == "auto":
        args.k = choice.k
    for key, value in choice.settings.items():
        if getattr(args, DEST + key, None) is None:
            setattr(args, DEST + key, value)
    stderr.write(f"auto: {choice.reason}\n")
    return choice
