"""Doctests are collected where they are written, although public objects say ``passk``.

``doctest.DocTestFinder`` takes a class or function into a module's doctests only if
its ``__module__`` is that module, so publishing ``passk.pass_hat_k.__module__ =
'passk'`` (:mod:`passk._public`, as httpx does) would drop its examples from
``passk/metrics.py`` and, ``passk/__init__.py`` holding none, from every file. The
finder asks :func:`passk._public.defined_in` first: a published object belongs to the
module that defines it, and to no other (not ``passk/__init__.py``, where it is cached
after first use). ``tests/test_public_api.py`` checks the count.
"""

from __future__ import annotations

import doctest
from types import ModuleType

from passk._public import defined_in

_from_module = doctest.DocTestFinder._from_module  # type: ignore[attr-defined]


def _defined_here(self: doctest.DocTestFinder, module: ModuleType | None, obj: object) -> bool:
    home = defined_in(obj) if module is not None else None
    if home is not None:
        return module.__name__ == home  # type: ignore[union-attr]
    return bool(_from_module(self, module, obj))


doctest.DocTestFinder._from_module = _defined_here  # type: ignore[attr-defined]
