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
    """``main``, ``build_parser`` and every name the flat ``passk.cli`` had (``EXIT_BLOCKED``,
    ``cmd_gate``, ...), from :mod:`.commands` on first use."""
    import importlib

    commands = importlib.import_module("passk.cli.commands")
    if name.startswith("__") or not hasattr(commands, name):
        raise AttributeError(f"module 'passk.cli' has no attribute {name!r}")
    return getattr(commands, name)
