"""``python -m passk``: the same as the ``passk`` command."""

import sys

from passk.cli.commands import main

sys.exit(main())
