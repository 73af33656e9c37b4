"""``python -m core``: the command line, as the ``private-label-lab`` script."""

from core.cli.commands import main

raise SystemExit(main())
