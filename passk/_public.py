"""The public surface names one path: each object of ``passk.__all__`` says ``passk``.

httpx sets ``__module__ = "httpx"`` on every name of its ``__all__`` in its
``__init__.py``, so reprs, tracebacks, pickles and the docs name the path users
import from. passk's ``__init__`` loads each name on first use (``import passk``
stays fast), so the owner module does it instead, on its last line::

    publish(globals())

for the names :data:`passk._OWNER` gives it, whatever is imported first (as
numpy's ``set_module`` and pandas' do, on each object where it is written).
:func:`defined_in` gives the module that defines a published object, from the same
table, so doctests are still collected where they are written (the repository's
``conftest.py``) and a run's protocol still names the demo adapter by its file.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import MutableMapping
from typing import Any

__all__ = ["defined_in", "publish"]

#: The import path of every name in ``passk.__all__``.
PUBLIC = "passk"


def publish(namespace: MutableMapping[str, Any]) -> None:
    """Give each public class and function a module's ``namespace`` defines
    ``__module__ = 'passk'``.

    The names are those :data:`passk._OWNER` assigns to the module; constants
    (tuples, strings) have no ``__module__`` and are left as they are. Under
    ``python -m`` (``__name__ == '__main__'``) nothing is published: that copy is
    not the module the package imports.

    Examples
    --------
    >>> from passk.metrics import pass_hat_k
    >>> pass_hat_k.__module__, defined_in(pass_hat_k)
    ('passk', 'passk.metrics')
    """
    owners = importlib.import_module(PUBLIC)._OWNER  # noqa: SLF001  # passk's own table
    here = namespace["__name__"]
    for name, owner in owners.items():
        if f"{PUBLIC}.{owner}" != here:
            continue
        obj = namespace[name]
        if isinstance(obj, type) or inspect.isfunction(obj):
            obj.__module__ = PUBLIC


def defined_in(obj: object) -> str | None:
    """The module that defines a published ``obj`` (None if ``obj`` was not published).

    Read from :data:`passk._OWNER`, the one table of the surface (an attribute on the
    class, as numpy's ``_module_source``, would become a member every
    ``typing.Protocol`` such as ``HarnessAdapter`` requires on Python 3.11).

    Examples
    --------
    >>> from passk.results.counts import Results
    >>> defined_in(Results), defined_in(defined_in)
    ('passk.results.counts', None)
    """
    name = getattr(obj, "__name__", None)
    if getattr(obj, "__module__", None) != PUBLIC or not isinstance(name, str):
        return None
    owner = importlib.import_module(PUBLIC)._OWNER.get(name)  # noqa: SLF001  # passk's own
    if owner is None:
        return None
    home = f"{PUBLIC}.{owner}"
    return home if vars(importlib.import_module(home)).get(name) is obj else None
