"""Overhead of the passk pytest plugin per repetition, against plain pytest-repeat.

A no-op test is repeated N times, once as ``@pytest.mark.passk(runs=N)`` and
once as pytest-repeat's ``@pytest.mark.repeat(N)``, each in its own pytest
process with only that plugin loaded (``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``).
The cost per repetition is the slope between two sizes,
``(T(N2) - T(N1)) / (N2 - N1)``, so the session's fixed costs (start-up,
collection, passk's report at the end) cancel. T is the CPU time (user +
system) of the pytest process, which other work on a shared machine disturbs
far less than wall time; the two plugins alternate within each round and the
median over rounds is kept. It also times what the plugin adds to a session
without marked tests (importing ``passk``), against the same session without
the plugin.

Run ``python benchmarks/bench_pytest_plugin.py [--small 500] [--large 4000]
[--rounds 7]``; it prints a table and the ratio (goal: at most 1.5).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
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

PLUGINS = {"passk": "passk.integrations.pytest_plugin", "pytest-repeat": "pytest_repeat"}


def session_seconds(folder: Path, source: str, plugin: str | None) -> float:
    """CPU seconds (user + system) of one pytest process running ``source`` with ``plugin``."""
    (folder / "test_bench.py").write_text(source)
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_bench.py"]
    if plugin is not None:
        cmd[3:3] = ["-p", plugin]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True,
                          check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stdout[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--small", type=int, default=500, help="N1 repetitions (default 500)")
    parser.add_argument("--large", type=int, default=4000, help="N2 repetitions (default 4000)")
    parser.add_argument("--rounds", type=int, default=7, help="rounds, median kept (default 7)")
    args = parser.parse_args(argv)
    names = {"pytest-repeat": REPEAT, "passk": PASSK}
    times: dict[tuple[str, int], list[float]] = {}
    plain: dict[str, list[float]] = {"without": [], "with": []}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "pytest.ini").write_text("[pytest]\n")  # not this project's settings
        for _ in range(args.rounds):
            for n in (args.small, args.large):
                for name, template in names.items():
                    seconds = session_seconds(folder, template.format(n=n), PLUGINS[name])
                    times.setdefault((name, n), []).append(seconds)
            plain["without"].append(session_seconds(folder, PLAIN, None))
            plain["with"].append(session_seconds(folder, PLAIN, PLUGINS["passk"]))
    print(f"no-op test, {args.small} and {args.large} repetitions, CPU seconds of the pytest "
          f"process, median of {args.rounds} rounds")
    print(f"{'plugin':<14} {'T(N1)':>8} {'T(N2)':>8} {'per repetition':>16}")
    per_rep, slopes = {}, {}
    for name in names:
        small, large = times[(name, args.small)], times[(name, args.large)]
        slopes[name] = [(b - a) / (args.large - args.small) for a, b in zip(small, large)]
        per_rep[name] = statistics.median(slopes[name])
        print(f"{name:<14} {statistics.median(small):>8.3f} {statistics.median(large):>8.3f} "
              f"{per_rep[name] * 1e3:>13.3f} ms")
    ratios = [p / r for p, r in zip(slopes["passk"], slopes["pytest-repeat"])]
    ratio = per_rep["passk"] / per_rep["pytest-repeat"]
    print(f"passk / pytest-repeat per repetition: {ratio:.2f}x (per round {min(ratios):.2f}-"
          f"{max(ratios):.2f}x; goal <= 1.5x)")
    without, loaded = statistics.median(plain["without"]), statistics.median(plain["with"])
    print(f"a session with one unmarked test: {without:.3f} s without the plugin, {loaded:.3f} s "
          f"with it (+{loaded - without:.3f} s CPU, importing passk)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
