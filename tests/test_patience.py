"""The test command depends on neither the machine's load nor its caches.

* ``tests/helpers/patience.py``: a wait returns as soon as its condition holds, and at the
  ceiling fails with words that name what it waited for and how long;
* ``conftest.py``: the session's own matplotlib configuration directory, with its font
  list built before any test, inherited by every process the tests start; a stale font
  list in ``~/.cache/matplotlib`` (the families mathtext needs missing from it, as another
  environment leaves one) makes matplotlib write "findfont" warnings to stderr without it
  (the check can fail) and none with it; nbval's own waits raised to the ceiling.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import patience
import pytest

DRAW_MATH = ("import matplotlib; matplotlib.use('agg'); import matplotlib.pyplot as plt; "
             "plt.title(r'$\\hat{p}^k = \\sum_i x_i$'); plt.savefig(__import__('io').BytesIO()); "
             "print(matplotlib.get_cachedir())")


def test_a_wait_returns_the_conditions_value_as_soon_as_it_holds():
    calls = []

    def ready():
        calls.append(1)
        return len(calls) >= 3 and "up"

    started = time.monotonic()
    assert patience.wait_until(ready, "the third call", poll_s=0.01) == "up"
    assert len(calls) == 3 and time.monotonic() - started < patience.CEILING_S


def test_a_wait_at_the_ceiling_names_what_it_waited_for(monkeypatch):
    monkeypatch.setattr(patience, "CEILING_S", 0.05)
    seen = []
    with pytest.raises(pytest.fail.Exception) as failed:
        patience.wait_until(lambda: None, "jupyter lab to answer on 127.0.0.1:1", poll_s=0.01,
                            between=lambda: seen.append(1))
    words = str(failed.value)
    assert words.startswith("waited 0 s (the ceiling, PASSK_TEST_CEILING_S=0)")
    assert words.endswith("for jupyter lab to answer on 127.0.0.1:1")
    assert seen, "the between-polls action never ran"


def test_the_ceiling_is_generous_and_set_by_the_environment():
    code = "import patience; print(patience.CEILING_S, patience.CEILING_MS)"
    helpers = str(Path(__file__).parent / "helpers")
    env = {**os.environ, "PYTHONPATH": helpers}
    env.pop("PASSK_TEST_CEILING_S", None)
    default = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True, timeout=patience.CEILING_S).stdout.split()
    assert default == ["900.0", "900000"]  # 15 minutes
    env["PASSK_TEST_CEILING_S"] = "30"
    lowered = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True, timeout=patience.CEILING_S).stdout.split()
    assert lowered == ["30.0", "30000"]


def test_the_session_has_its_own_matplotlib_configuration():
    own = Path(os.environ["MPLCONFIGDIR"])
    assert os.environ["PASSK_TEST_MPLCONFIGDIR"] == str(own)
    assert own.is_dir() and own.is_relative_to(tempfile.gettempdir())
    assert not own.is_relative_to(Path.home()), own
    assert list(own.glob("fontlist-v*.json")), f"no font list built in {own}"
    drawn = subprocess.run([sys.executable, "-c", DRAW_MATH], capture_output=True,
                           text=True, check=True, timeout=patience.CEILING_S)
    assert drawn.stdout.strip() == str(own)
    assert drawn.stderr == "", drawn.stderr  # no "building the font cache", no findfont


def _stale_font_list(home: Path) -> None:
    """The session's font list without the STIX and DejaVu * Display families, where a
    fresh HOME's matplotlib looks for it."""
    own = next(Path(os.environ["MPLCONFIGDIR"]).glob("fontlist-v*.json"))
    data = json.loads(own.read_text(encoding="utf-8"))
    data["ttflist"] = [f for f in data["ttflist"] if not f["name"].startswith(
        ("STIX", "DejaVu Sans Display", "DejaVu Serif Display"))]
    (home / ".cache" / "matplotlib").mkdir(parents=True)
    (home / ".cache" / "matplotlib" / own.name).write_text(json.dumps(data), encoding="utf-8")


def test_a_stale_font_cache_in_home_reaches_no_test(tmp_path):
    home = tmp_path / "home"
    _stale_font_list(home)
    env = {k: v for k, v in os.environ.items() if k != "XDG_CACHE_HOME"}
    env["HOME"] = str(home)
    # without the session's MPLCONFIGDIR, the stale list is read and warns (the check can
    # fail): what six notebook cells wrote to stderr before
    bare = {k: v for k, v in env.items() if k != "MPLCONFIGDIR"}
    stale = subprocess.run([sys.executable, "-c", DRAW_MATH], env=bare, capture_output=True,
                           text=True, check=True, timeout=patience.CEILING_S)
    assert stale.stdout.strip() == str(home / ".cache" / "matplotlib")
    assert "findfont: Font family ['STIXGeneral'] not found" in stale.stderr, stale.stderr
    # with it (every process the tests start inherits it), nothing
    ours = subprocess.run([sys.executable, "-c", DRAW_MATH], env=env, capture_output=True,
                          text=True, check=True, timeout=patience.CEILING_S)
    assert ours.stdout.strip() == os.environ["MPLCONFIGDIR"]
    assert ours.stderr == "", ours.stderr


def test_nbvals_waits_are_raised_to_the_ceiling(pytestconfig):
    assert pytestconfig.option.nbval_kernel_startup_timeout == patience.CEILING_S
    assert float(pytestconfig.option.nbval_cell_timeout) >= patience.CEILING_S
