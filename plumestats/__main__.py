"""``python -m plumestats``: the command line (see :mod:`plumestats.cli`)."""

from .cli import main

raise SystemExit(main())
