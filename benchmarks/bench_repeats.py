"""Benchmark: ``passk.repeat_run`` of 256 runs of a 20 ms adapter on 32 threads.

The adapter sleeps 20 ms (an I/O-bound agent call) and returns a RunResult.
Ideal wall time on ThreadPoolExecutor(32) is 256 x 20 ms / 32 = 0.16 s; the
ratio measured / ideal shows the runner's overhead (seed derivation, result
stamping, futures, the disabled progress bar). Goal: ratio <= 1.5.

Run: ``.venv/bin/python benchmarks/bench_repeats.py``
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import passk
from passk.adapter import RunResult, Task

repeat_run = passk.repeat_run
assert callable(repeat_run)

RUNS = 256
SLEEP_S = 0.020
WORKERS = 32
REPEATS = 3


class SleepyAdapter:
    """An adapter whose every run takes SLEEP_S seconds of waiting."""

    def run(self, task: Task, *, seed: int) -> RunResult:
        time.sleep(SLEEP_S)
        return RunResult(task.task_id, 0, success=seed % 2 == 0)


def main() -> None:
    task = Task("sleepy")
    adapter = SleepyAdapter()
    ideal = RUNS * SLEEP_S / WORKERS
    times = []
    with ThreadPoolExecutor(WORKERS) as pool:
        repeat_run(adapter, task, WORKERS, executor=pool)  # warm-up: start the 32 threads
        for _ in range(REPEATS):
            start = time.perf_counter()
            runs = repeat_run(adapter, task, RUNS, executor=pool)
            times.append(time.perf_counter() - start)
            assert runs.total == RUNS
    # single-threaded per-run overhead of the runner, for context
    start = time.perf_counter()
    repeat_run(_Instant(), task, RUNS)
    overhead = (time.perf_counter() - start) / RUNS
    first, best = times[0], min(times)
    print(f"{RUNS} runs x {SLEEP_S * 1e3:.0f} ms on ThreadPoolExecutor({WORKERS})")
    print(f"measured wall time: first {first:.3f} s, best of {REPEATS} {best:.3f} s "
          f"(all: {', '.join(f'{t:.3f}' for t in times)} s)")
    print(f"ideal: {RUNS} x {SLEEP_S * 1e3:.0f} ms / {WORKERS} = {ideal:.3f} s")
    print(f"ratio measured / ideal: first {first / ideal:.2f}, best {best / ideal:.2f}   "
          f"(goal <= 1.5: {'met' if first / ideal <= 1.5 else 'NOT met'} on the first run)")
    print(f"runner overhead without sleeping: {overhead * 1e6:.1f} us per run (sequential)")


class _Instant:
    def run(self, task: Task, *, seed: int) -> RunResult:
        return RunResult(task.task_id, 0, True)


if __name__ == "__main__":
    main()
