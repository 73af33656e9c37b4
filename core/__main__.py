"""``python -m core``: the command line, as the ``private-label-lab`` script."""

from core.cli import main

raise SystemExit(main())
