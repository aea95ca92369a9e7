"""Overhead of the passk pytest plugin per repetition, against plain pytest-repeat.

A no-op test is repeated N times, once as ``@pytest.mark.passk(runs=N)`` and
once as pytest-repeat's ``@pytest.mark.repeat(N)``, each in its own pytest
process with only that plugin loaded (``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``).
The cost per repetition is the slope between two sizes,
``(T(N2) - T(N1)) / (N2 - N1)``, so the session's fixed costs (start-up,
collection, passk's report at the end) cancel; the best of a few rounds is
kept. It also times what the plugin adds to a session without marked tests
(importing ``passk``), against the same session without the plugin.

Run ``python benchmarks/bench_pytest_plugin.py [--small 200] [--large 2000]
[--rounds 5]``; it prints a table and the ratio (goal: at most 1.5).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PASSK = """
import pytest

@pytest.mark.passk(runs={n})
def test_noop():
    pass
"""

REPEAT = """
import pytest

@pytest.mark.repeat({n})
def test_noop():
    pass
"""

PLAIN = """
def test_noop():
    pass
"""

PLUGINS = {"passk": "passk.pytest_plugin", "pytest-repeat": "pytest_repeat"}


def session_seconds(folder: Path, source: str, plugin: str | None) -> float:
    """Wall time of one pytest process running ``source`` with ``plugin`` loaded."""
    (folder / "test_bench.py").write_text(source)
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_bench.py"]
    if plugin is not None:
        cmd[3:3] = ["-p", plugin]
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True,
                          check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stdout[-2000:]}")
    return seconds


def best(folder: Path, source: str, plugin: str | None, rounds: int) -> float:
    return min(session_seconds(folder, source, plugin) for _ in range(rounds))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=200, help="N1 repetitions (default 200)")
    parser.add_argument("--large", type=int, default=2000, help="N2 repetitions (default 2000)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds, best kept (default 5)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "pytest.ini").write_text("[pytest]\n")  # not this project's settings
        per_rep = {}
        print(f"no-op test, {args.small} and {args.large} repetitions, best of {args.rounds} "
              "rounds (seconds)")
        print(f"{'plugin':<14} {'T(N1)':>8} {'T(N2)':>8} {'per repetition':>16}")
        for name, template in (("pytest-repeat", REPEAT), ("passk", PASSK)):
            small = best(folder, template.format(n=args.small), PLUGINS[name], args.rounds)
            large = best(folder, template.format(n=args.large), PLUGINS[name], args.rounds)
            per_rep[name] = (large - small) / (args.large - args.small)
            print(f"{name:<14} {small:>8.3f} {large:>8.3f} {per_rep[name] * 1e3:>13.3f} ms")
        ratio = per_rep["passk"] / per_rep["pytest-repeat"]
        print(f"passk / pytest-repeat per repetition: {ratio:.2f}x (goal <= 1.5x)")
        without = best(folder, PLAIN, None, args.rounds)
        loaded = best(folder, PLAIN, PLUGINS["passk"], args.rounds)
        print(f"a session with one unmarked test: {without:.3f} s without the plugin, "
              f"{loaded:.3f} s with it (+{loaded - without:.3f} s, importing passk)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
