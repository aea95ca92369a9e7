"""Shared test setup: the helpers folder on the path, and Debian's headless Chromium."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HELPERS = Path(__file__).resolve().parent / "helpers"
if str(HELPERS) not in sys.path:  # tests import their helpers (adapters, browser) from here
    sys.path.insert(0, str(HELPERS))

from offline_browser import CHROMIUM, CHROMIUM_ARGS
from patience import launch


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium driven by playwright; a clear failure (never a skip) when missing.

    One per module: playwright's sync API keeps an event loop marked running in the main
    thread while it is open, and ``asyncio.run`` in a later module (the runner's async
    adapters, Inspect's evals) would refuse to start.

    Its contexts and pages wait up to the tests' ceiling, not playwright's 30 s
    (``tests/helpers/patience.py``): on a busy machine a screenshot or a navigation
    can take longer."""
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} not found: install Debian's Chromium with "
                    "`apt-get update && apt-get install -y chromium` "
                    "(never `playwright install`: it downloads a browser).", pytrace=False)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the playwright Python package is missing: pip install -e '.[browser]' "
                    "(or `pip install playwright`; do not run `playwright install`).",
                    pytrace=False)
    with sync_playwright() as pw:
        chromium = launch(pw.chromium, executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
