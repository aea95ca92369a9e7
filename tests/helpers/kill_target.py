"""Subprocess target for the kill-and-resume trials: run the crash suite with a log.

    python tests/helpers/kill_target.py LOG [--resume] [--threads N]

The parent kills it with SIGKILL at a random moment, then resumes (in this
script with ``--resume`` or in-process).
"""

from __future__ import annotations

import argparse
import os
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from runner_helpers import CRASH_RUNS, CRASH_SEED, CrashTarget, crash_suite

from passk.run.runner import run_suite
from passk.stability import RepeatPolicy


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("log")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--tasks", type=int, default=40)
    args = parser.parse_args()
    policy = RepeatPolicy(runs_by_risk={"read-only": CRASH_RUNS})
    with ThreadPoolExecutor(args.threads) as pool:
        run = run_suite(CrashTarget(), crash_suite(args.tasks), policy, seed=CRASH_SEED,
                        executor=pool, max_concurrency=args.threads, log=args.log,
                        resume=args.resume, progress=False, backoff=0.0)
    print(run.runs_spent, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
