"""How long a test waits: until what it waits for has happened, up to one ceiling.

A test that waits for something (a server answering, Run All finishing, a figure redrawn,
a file autosaved, a subprocess exiting) waits on that condition, for as long as it takes:
on a 2-core machine busy with other jobs it takes several times as long as on an idle one
(page 9's JupyterLab test: 110 s beside other people's jobs, 180 s with two more CPU-bound
loops; its Run All once missed a fixed 90 s). A limit exists only so that a hang ends,
and there is one: ``CEILING_S``, 15 minutes, far above anything the tests take on a
loaded machine. When a wait reaches it, the failure names what was
awaited and how long the test waited.

``PASSK_TEST_CEILING_S`` in the environment sets another ceiling (lower, to find a hang
sooner; higher on a very slow machine).

Playwright's own limits (30 s for an action, a navigation, a ``wait_for_function``) are
raised to the ceiling by :func:`patient`, which the ``browser`` fixture applies to every
context and page (``tests/conftest.py``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

CEILING_S: float = float(os.environ.get("PASSK_TEST_CEILING_S", "900"))
CEILING_MS: int = int(CEILING_S * 1000)

T = TypeVar("T")


def too_long(what: str, started: float) -> str:
    """The failure's words: ``"waited 900 s (the ceiling) for <what>"``."""
    return (f"waited {time.monotonic() - started:.0f} s (the ceiling, PASSK_TEST_CEILING_S="
            f"{CEILING_S:.0f}) for {what}")


def wait_until(condition: Callable[[], T], what: str, *, poll_s: float = 0.25,
               between: Callable[[], object] | None = None) -> T:
    """Call ``condition`` until it returns something true, and return that; fail (naming
    ``what`` and the time waited) when the ceiling is reached first. ``between`` runs
    after each false answer (e.g. answer a dialog), before sleeping ``poll_s``."""
    started = time.monotonic()
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() - started > CEILING_S:
            pytest.fail(too_long(what, started), pytrace=False)
        if between is not None:
            between()
        time.sleep(poll_s)


def wait_in_page(page: Any, script: str, what: str, arg: Any = None) -> Any:
    """``page.wait_for_function(script, arg=arg)`` up to the ceiling; at the ceiling a
    failure that names ``what`` and the time waited (not playwright's bare "Timeout
    30000ms exceeded")."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    started = time.monotonic()
    try:
        return page.wait_for_function(script, arg=arg, timeout=CEILING_MS)
    except PlaywrightTimeout:
        pytest.fail(too_long(what, started), pytrace=False)


def patient(target: T) -> T:
    """A playwright context or page whose actions, navigations and waits time out at the
    ceiling, not at playwright's 30 s; returns it."""
    target.set_default_timeout(CEILING_MS)  # type: ignore[attr-defined]
    target.set_default_navigation_timeout(CEILING_MS)  # type: ignore[attr-defined]
    return target


class PatientBrowser:
    """A playwright ``Browser`` whose every new context and page is :func:`patient`; the
    rest is the browser's own (``browser_type``, ``close``, ...)."""

    def __init__(self, browser: Any) -> None:
        self._browser = browser

    def new_context(self, **kwargs: Any) -> Any:
        return patient(self._browser.new_context(**kwargs))

    def new_page(self, **kwargs: Any) -> Any:
        page = self._browser.new_page(**kwargs)
        patient(page.context)
        return patient(page)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._browser, name)


def launch(browser_type: Any, **kwargs: Any) -> PatientBrowser:
    """``browser_type.launch(**kwargs)`` (its own start waited for up to the ceiling), as
    a :class:`PatientBrowser`."""
    return PatientBrowser(browser_type.launch(timeout=CEILING_MS, **kwargs))
