"""The ``passk`` command: parse arguments, read Results, bind criteria, estimate, decide, render."""

from __future__ import annotations

from passk.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
