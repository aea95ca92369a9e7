"""Doctests are collected where they are written, although public objects say ``passk``.

``doctest.DocTestFinder`` takes a class or function into a module's doctests only if
its ``__module__`` is that module, so publishing ``passk.pass_hat_k.__module__ =
'passk'`` (:mod:`passk._public`, as httpx does) would drop its examples from
``passk/metrics.py`` and, ``passk/__init__.py`` holding none, from every file. The
finder asks :func:`passk._public.defined_in` first: a published object belongs to the
module that defines it, and to no other (not ``passk/__init__.py``, where it is cached
after first use). ``tests/test_public_api.py`` checks the count.

The machine's caches are not inputs of the tests. Matplotlib keeps its font list in
``~/.cache/matplotlib/fontlist-v*.json`` (and reads ``~/.config/matplotlib``), shared by
every environment of the same matplotlib version: a list written by another environment
names font files that are not here, and then the first figure of each notebook kernel
writes "findfont: ..." warnings to stderr, which nbval compares and fails. So each test
session gets a matplotlib configuration directory of its own, new and empty
(``MPLCONFIGDIR``, a temporary directory removed at exit), whose font list is built from
this machine's fonts before any test runs (building it later would write "Matplotlib is
building the font cache" into a notebook's stderr). Every process the tests start
inherits it: xdist's workers, the notebooks' kernels, JupyterLab's, the CLI's
subprocesses. A fresh directory rather than one kept in the checkout: a kept list goes
stale when fonts are installed later (``scripts/setup.sh`` installs the CJK font), and
matplotlib rebuilds it only when a listed file is missing. The build costs about 0.2 s of
CPU per session.

nbval waits on the notebooks' kernels with limits of its own: 60 s for a kernel to start
(``--nbval-kernel-startup-timeout``) and 5 s for each output message once a cell has
replied (``IPyNbCell.output_timeout``, no option). On a busy 2-core machine either can
pass while the kernel is only slow, so both are raised to the tests' one ceiling
(``tests/helpers/patience.py``); a cell's own limit (``--nbval-cell-timeout``, 2,000 s)
is above it already.
"""

from __future__ import annotations

import atexit
import doctest
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from types import ModuleType

import pytest

from passk._public import defined_in

# the tests' one ceiling on a wait, from tests/helpers/ (which tests/conftest.py puts on
# sys.path for the tests; loaded here by its path, and registered under its name so that
# the tests share this module)
_PATIENCE = importlib.util.spec_from_file_location(
    "patience", os.path.join(os.path.dirname(__file__), "tests", "helpers", "patience.py"))
if _PATIENCE is None or _PATIENCE.loader is None:
    raise ImportError("tests/helpers/patience.py is missing")
patience = sys.modules.setdefault("patience", importlib.util.module_from_spec(_PATIENCE))
_PATIENCE.loader.exec_module(patience)

_from_module = doctest.DocTestFinder._from_module  # type: ignore[attr-defined]


def _defined_here(self: doctest.DocTestFinder, module: ModuleType | None, obj: object) -> bool:
    home = defined_in(obj) if module is not None else None
    if home is not None:
        return module.__name__ == home  # type: ignore[union-attr]
    return bool(_from_module(self, module, obj))


doctest.DocTestFinder._from_module = _defined_here  # type: ignore[attr-defined]


# the session's own matplotlib configuration (see the module's docstring); xdist's workers
# and nested pytest runs find it set by their parent and keep it
_OWN_MPLCONFIGDIR = "PASSK_TEST_MPLCONFIGDIR"


def _own_mplconfigdir() -> None:
    ours = os.environ.get(_OWN_MPLCONFIGDIR)
    if ours and os.environ.get("MPLCONFIGDIR") == ours and os.path.isdir(ours):
        return
    path = tempfile.mkdtemp(prefix="passk-tests-mplconfig-")
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    os.environ["MPLCONFIGDIR"] = os.environ[_OWN_MPLCONFIGDIR] = path
    if importlib.util.find_spec("matplotlib") is None:
        return
    build = subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"],
                           capture_output=True, text=True, check=False)
    if build.returncode != 0:
        raise RuntimeError(f"building matplotlib's font cache in {path} failed:\n"
                           f"{build.stderr}")


_own_mplconfigdir()


def pytest_configure(config: pytest.Config) -> None:
    """nbval's kernel start waited for up to the ceiling, unless asked otherwise."""
    option = config.option
    if getattr(option, "nbval_kernel_startup_timeout", None) == 60:  # nbval's default
        option.nbval_kernel_startup_timeout = patience.CEILING_S


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each notebook cell's outputs waited for up to the ceiling (nbval: 5 s)."""
    for item in items:
        if hasattr(item, "output_timeout"):
            item.output_timeout = patience.CEILING_S
