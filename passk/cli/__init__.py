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
    if name in __all__:
        import importlib

        return getattr(importlib.import_module("passk.cli.commands"), name)
    raise AttributeError(f"module 'passk.cli' has no attribute {name!r}")
