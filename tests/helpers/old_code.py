"""A module as an earlier commit had it: the outside reference of the speed-up tests.

A faster path must give what the code it replaced gave; the replaced code is loaded from
git (``git show COMMIT:PATH``), not copied into the tests, so the reference cannot drift.
A clone without that commit skips the test that asks for it.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def old_module(commit: str, path: str, name: str) -> ModuleType:
    """The module at ``path`` as ``commit`` had it, importable as ``name``."""
    try:
        text = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:{path}"],
                              capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip(f"commit {commit} is not in this clone")
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    exec(compile(text, f"{commit}:{path}", "exec"), module.__dict__)
    return module
