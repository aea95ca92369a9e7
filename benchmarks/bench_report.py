"""Time ``passk report`` on 1,000,000 runs (100,000 tasks x 10 trials, JSON Lines).

Generates the file in a temporary directory, then times, separately, the parse
(``read_results``), the compute (``build_report``: estimators, intervals, gate,
curve) and the output (the terminal table and the JSON), and finally the whole
command ``passk report FILE`` end to end in a fresh process. Prints the total
and each share. The issue's budget: under 5 s, parsing included.

    .venv/bin/python benchmarks/bench_report.py [--tasks 100000] [--trials 10]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from passk.analysis.report import build_report, format_report
from passk.results.read import read_results


def write_runs(path: Path, tasks: int, trials: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    p = rng.beta(4, 1, size=tasks)  # most tasks reliable, a tail of flaky ones
    ok = rng.random((tasks, trials)) < p[:, None]
    with open(path, "w", encoding="utf-8") as f:
        for t in range(tasks):
            tid = f"task-{t:06d}"
            f.write("".join(
                f'{{"task_id": "{tid}", "trial": {j}, "success": {"true" if ok[t, j] else "false"}}}\n'
                for j in range(trials)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=100_000)
    ap.add_argument("--trials", type=int, default=10)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "runs.jsonl"
        t0 = time.perf_counter()
        write_runs(path, args.tasks, args.trials)
        size = path.stat().st_size
        print(f"generated {args.tasks * args.trials:,} runs ({args.tasks:,} tasks x "
              f"{args.trials}), {size / 1e6:.1f} MB, in {time.perf_counter() - t0:.2f} s")

        t0 = time.perf_counter()
        results = read_results(path)
        t_parse = time.perf_counter() - t0
        t0 = time.perf_counter()
        fr = build_report(results)
        t_compute = time.perf_counter() - t0
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            print(format_report(fr))
        t_table = time.perf_counter() - t0
        t0 = time.perf_counter()
        json.dumps(fr.to_dict(), allow_nan=False)
        t_json = time.perf_counter() - t0

        total = t_parse + t_compute + t_table
        print(f"in process: parse {t_parse:.2f} s ({t_parse / total:.0%}), compute "
              f"{t_compute:.2f} s ({t_compute / total:.0%}), table {t_table:.2f} s "
              f"({t_table / total:.0%}); total {total:.2f} s  [JSON instead of the table: "
              f"{t_json:.2f} s]")

        exe = Path(sys.executable).with_name("passk")
        cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "passk"]
        for extra in ([], ["--json"]):
            t0 = time.perf_counter()
            done = subprocess.run([*cmd, "report", str(path), *extra], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True, env=os.environ, check=False)
            wall = time.perf_counter() - t0
            label = " ".join(["passk report FILE", *extra])
            print(f"end to end: {label:<24} {wall:.2f} s (exit {done.returncode}; "
                  f"{'within' if wall < 5 else 'OVER'} the 5 s budget)")
            if done.returncode not in (0, 1):
                print(done.stderr, file=sys.stderr)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
