"""``python -m passk``: the same as the ``passk`` command."""

import sys

from .cli import main

sys.exit(main())
