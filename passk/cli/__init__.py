"""The ``passk`` command: parse arguments, read Results, bind criteria, estimate, decide, render.

:mod:`.commands` holds the commands, :mod:`.options` the argument types (the pytest plugin
shares them, so importing this package loads nothing else: ``main`` loads on first use).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["build_parser", "main"]

if TYPE_CHECKING:
    from passk.cli.commands import build_parser, main


def __getattr__(name: str) -> Any:
    """``main`` and ``build_parser``, from :mod:`.commands` on first use (everything else
    the command line has is imported from :mod:`passk.cli.commands` itself)."""
    if name in __all__:
        from passk.cli import commands

        return getattr(commands, name)
    raise AttributeError(f"module 'passk.cli' has no attribute {name!r}")
