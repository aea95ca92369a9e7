"""Measure the issue's three goals for ``passk.run.runner.run_suite`` (issue 5), in one run.

1. Throughput: 1,000 runs of an async adapter awaiting 50 ms at concurrency 64
   against the ideal 1,000 x 0.05 / 64 s (goal <= 1.3x); the same with a sync
   adapter sleeping 50 ms on 64 threads; the overhead per run of an adapter that
   does nothing (goal < 1 ms), without and with the crash-safe log (goal >= 10,000 runs
   a second with the log, wall and CPU).
2. Crash safety: SIGKILL the runner at seeded random points in 20 trials, resume,
   and count the trials where every run is in the log exactly once and the
   outcomes equal an uninterrupted run (goal 20/20).
3. Curtailment: runs spent with ``stopping="curtailed"`` against fixed n, on the
   chapter's demo suite and on simulated 200-task suites (a third of the tasks
   with p in [0.97, 1], a third in [0, 0.03], a third in [0.2, 0.8]; n = 12), and
   whether the gate decisions are identical (goal: >= 30% fewer runs on 200 tasks).

    .venv/bin/python benchmarks/bench_runner.py [--throughput-repeats 2] [--trials 20]

The adapters are stand-ins for a real agent (``tests/helpers/runner_helpers.py``):
their success is a deterministic function of the run's seed and the task's p.
Timings on a loaded 2-core machine are noisy: the throughput part runs
``--throughput-repeats`` times and prints each.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

HELPERS = Path(__file__).resolve().parents[1] / "tests" / "helpers"
sys.path.insert(0, str(HELPERS))

from runner_helpers import (
    CRASH_RUNS,
    CRASH_SEED,
    AsyncNoOp,
    AsyncSeedCoin,
    CrashTarget,
    NoOp,
    SeedCoin,
    crash_suite,
    p_tasks,
)

from passk import OnCallSimulator, demo_tasks
from passk.run.runner import read_log, run_suite, task_settled
from passk.stability import RepeatPolicy

KILL_TARGET = HELPERS / "kill_target.py"


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


# --------------------------------------------------------------------------
# 1. throughput
# --------------------------------------------------------------------------


def throughput(tmp: Path, repeat: int) -> None:
    runs, wait, conc = 1000, 0.05, 64
    tasks = p_tasks([0.5] * 100)
    policy = {"read-only": 10}
    ideal = runs * wait / conc
    print(f"\n1. throughput: {runs} runs x {wait * 1000:.0f} ms at concurrency {conc}; "
          f"ideal {ideal:.3f} s (goal <= 1.3x)")
    # warm up imports, the event loop and thread creation
    run_suite(AsyncSeedCoin(sleep=0.001), tasks[:4], policy, max_concurrency=conc, progress=False)
    for r in range(repeat):
        t_async, res = timed(lambda: run_suite(AsyncSeedCoin(sleep=wait), tasks, policy,
                                               max_concurrency=conc, progress=False))
        assert res.runs_spent == runs
        t_sync, res = timed(lambda: run_suite(SeedCoin(sleep=wait), tasks, policy,
                                              max_concurrency=conc, progress=False))
        assert res.runs_spent == runs
        log = tmp / f"tp{r}.jsonl"
        t_async_log, _ = timed(lambda log=log: run_suite(AsyncSeedCoin(sleep=wait), tasks,
                                                         policy, max_concurrency=conc, log=log,
                                                         progress=False))
        log2 = tmp / f"tps{r}.jsonl"
        t_sync_log, _ = timed(lambda log2=log2: run_suite(SeedCoin(sleep=wait), tasks, policy,
                                                          max_concurrency=conc, log=log2,
                                                          progress=False))
        print(f"  [{r + 1}] async       {t_async:6.3f} s  = {t_async / ideal:5.2f}x ideal"
              f"   (with log: {t_async_log:6.3f} s = {t_async_log / ideal:5.2f}x)")
        print(f"  [{r + 1}] sync/64 thr {t_sync:6.3f} s  = {t_sync / ideal:5.2f}x ideal"
              f"   (with log: {t_sync_log:6.3f} s = {t_sync_log / ideal:5.2f}x)")
    # overhead per run: an adapter doing nothing
    big = p_tasks([1.0] * 1000)
    n_over = 10_000
    for r in range(repeat):
        t_seq, _ = timed(lambda: run_suite(NoOp(), big, policy, progress=False))
        t_aio, _ = timed(lambda: run_suite(AsyncNoOp(), big, policy, max_concurrency=conc,
                                           progress=False))
        t_thr, _ = timed(lambda: run_suite(NoOp(), big, policy, max_concurrency=conc,
                                           progress=False))
        log = tmp / f"over{r}.jsonl"
        cpu = time.process_time()
        t_log, _ = timed(lambda log=log: run_suite(NoOp(), big, policy, log=log, progress=False))
        cpu_log = time.process_time() - cpu
        t_bar, _ = timed(lambda: run_suite(NoOp(), big, policy, progress=True))
        us = 1e6 / n_over
        print(f"  [{r + 1}] overhead per run, no-op adapter (goal < 1000 us): sequential "
              f"{t_seq * us:5.0f} us, async {t_aio * us:5.0f} us, 64 threads {t_thr * us:5.0f} us,"
              f" sequential + log (group commit) {t_log * us:5.0f} us"
              f" = {n_over / t_log:6.0f} runs/s wall, {n_over / cpu_log:6.0f} a CPU second"
              f" (goal >= 10000), + progress bar "
              f"{t_bar * us:5.0f} us")


# --------------------------------------------------------------------------
# 2. crash safety
# --------------------------------------------------------------------------

CRASH_POLICY = RepeatPolicy(runs_by_risk={"read-only": CRASH_RUNS})


def outcomes(run):
    return {(r.task_id, r.run_index): (bool(r.success), r.seed) for r in run.results}


def kill_at_random(log: Path, delay: float) -> int:
    proc = subprocess.Popen([sys.executable, str(KILL_TARGET), str(log)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (log.exists() and log.stat().st_size > 0):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("kill target did not start logging")
            time.sleep(0.002)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        return proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def crash_safety(tmp: Path, trials: int) -> None:
    ref = run_suite(CrashTarget(sleep=0.0), crash_suite(), CRASH_POLICY, seed=CRASH_SEED,
                    backoff=0, progress=False)
    attempts = ref.runs_fixed + sum(ref.retries.values())
    print(f"\n2. crash safety: {trials} SIGKILL trials at seeded random points; suite of "
          f"{ref.runs_fixed} runs ({attempts} attempts with infrastructure retries), 4 threads")
    rng = np.random.default_rng(20240502)
    ok = killed_mid = 0
    survived_lines = []
    for trial in range(trials):
        log = tmp / f"crash{trial}.jsonl"
        code = kill_at_random(log, float(rng.uniform(0.0, 0.35)))
        before = len(read_log(log))
        survived_lines.append(before)
        killed_mid += code == -signal.SIGKILL and before < attempts
        resumed = run_suite(CrashTarget(sleep=0.0), crash_suite(), CRASH_POLICY,
                            seed=CRASH_SEED, max_concurrency=4, log=log, resume=True,
                            backoff=0, progress=False)
        records = read_log(log)
        counted = Counter((r.task_id, r.trial) for r in records
                          if not (r.infrastructure_error or r.cached))
        once = set(counted) == set(outcomes(ref)) and set(counted.values()) == {1}
        same = (outcomes(resumed) == outcomes(ref)
                and resumed.report.to_dict() == ref.report.to_dict()
                and dict(resumed.retries) == dict(ref.retries))
        ok += once and same
    print(f"  killed mid-suite in {killed_mid}/{trials} trials; lines surviving the kill: "
          f"min {min(survived_lines)}, median {int(np.median(survived_lines))}, "
          f"max {max(survived_lines)} of {attempts}")
    print(f"  every run exactly once and outcomes equal to the uninterrupted run: "
          f"{ok}/{trials} (goal {trials}/{trials})")


# --------------------------------------------------------------------------
# 3. curtailment
# --------------------------------------------------------------------------


def decisions(run):
    return run.report.gate.passed, frozenset(run.report.gate.flaky_tasks)


def compare(adapter, tasks, runs_by_risk, seed):
    fixed = run_suite(adapter, tasks, runs_by_risk, seed=seed, progress=False)
    cut = run_suite(adapter, tasks, RepeatPolicy(runs_by_risk=runs_by_risk,
                                                 stopping="curtailed"),
                    seed=seed, progress=False)
    return fixed.runs_spent, cut.runs_spent, decisions(fixed) == decisions(cut), fixed


def oracle_runs(fixed, cap: float = 0.2) -> int:
    """Runs the settle rule would need, taking each task's runs in order, had it known
    from the start that the suite is blocked (when the fixed-n gate blocked it): every
    task stops at the first run after which its own verdict is settled."""
    suite = "open" if fixed.report.gate.passed else "blocked"
    by_task: dict[str, list[bool]] = {}
    for r in fixed.results:  # sorted by (task, run index)
        by_task.setdefault(r.task_id, []).append(bool(r.success))
    total = 0
    for runs in by_task.values():
        n, s, f = len(runs), 0, 0
        for i, ok in enumerate(runs, start=1):
            s, f = s + ok, f + (not ok)
            if task_settled(s, f, remaining=n - i, max_flakiness=cap, suite=suite):
                break
        total += i
    return total


def spread_suite(rng: np.random.Generator, size: int = 200):
    third = size // 3
    ps = np.concatenate([rng.uniform(0.97, 1.0, third), rng.uniform(0.0, 0.03, third),
                         rng.uniform(0.2, 0.8, size - 2 * third)])
    return p_tasks(rng.permutation(ps))


def curtailment(demo_seeds: int, suites: int) -> None:
    print("\n3. curtailment (n = 12 for the runbook task, 5 for reads in the demo; "
          "n = 12 on the 200-task suites; cap 0.2)")
    fixed_sum = cut_sum = same = 0
    for seed in range(demo_seeds):
        f, c, s, _ = compare(OnCallSimulator(), demo_tasks(),
                             {"high-risk-write": 12, "read-only": 5}, seed)
        fixed_sum, cut_sum, same = fixed_sum + f, cut_sum + c, same + s
    print(f"  demo suite, seeds 0..{demo_seeds - 1}: {cut_sum} runs curtailed vs {fixed_sum} "
          f"fixed ({1 - cut_sum / fixed_sum:.1%} saved); identical decisions in "
          f"{same}/{demo_seeds}")
    f, c, s, _ = compare(OnCallSimulator(), demo_tasks(), {"high-risk-write": 12, "read-only": 5},
                         3)
    print(f"  demo suite, the chapter's seed 3: {c} vs {f} runs "
          f"({1 - c / f:.1%} saved), identical: {s}")
    rng = np.random.default_rng(5)
    shares, bounds = [], []
    all_same = True
    for i in range(suites):
        tasks = spread_suite(rng)
        f, c, s, fixed = compare(SeedCoin(), tasks, {"read-only": 12}, i)
        shares.append(1 - c / f)
        bound = oracle_runs(fixed)
        bounds.append(1 - bound / f)
        all_same &= s
        print(f"  200-task suite #{i + 1}: {c} vs {f} runs = {1 - c / f:.1%} saved "
              f"(with the verdict known in advance {1 - bound / f:.1%}); "
              f"identical decisions: {s} "
              f"(gate {'PASSED' if fixed.report.gate.passed else 'BLOCKED'}, "
              f"{len(fixed.report.gate.flaky_tasks)} flaky tasks)")
    print(f"  200-task suites: mean {np.mean(shares):.1%} saved (goal >= 30%), min "
          f"{min(shares):.1%}; all decisions identical: {all_same}; the settle rule told "
          f"the verdict in advance would save: mean {np.mean(bounds):.1%}")
    hard_cases(suites * 40)


def hard_cases(count: int) -> None:
    """Curtailed against fixed on scripted random suites where exactness is hard: runs left
    out as infrastructure errors (0-2 retries), cached runs, 1- to 12-run tiers, k 1-6,
    caps from 0 to 1 (0.96 among them), bars from 0 to 1, min_runs; sequential."""
    from runner_helpers import Scripted, fixed_n_counts, random_case

    from passk.repeats import attempt_seed

    rng = np.random.default_rng(99)
    same = spent = fixed_spent = passed = curtailed = 0
    start = time.perf_counter()
    for _ in range(count):
        case = random_case(rng)
        seed = int(rng.integers(0, 2**32))
        seeds = {attempt_seed(seed, t.task_id, i, a): (t.task_id, i, a)
                 for t in case["tasks"] for i in range(case["tiers"][t.risk])
                 for a in range(case["max_retries"] + 1)}
        options = {"k": case["k"], "seed": seed, "max_retries": case["max_retries"],
                   "backoff": 0, "min_overall_pass_hat_k": case["bar"],
                   "max_flakiness": case["cap"], "min_runs": case["min_runs"],
                   "progress": False}
        adapter = Scripted(case["script"], seeds)
        fixed = run_suite(adapter, case["tasks"], case["tiers"], **options)
        assert [(t.successes, t.runs) for t in fixed.report.tasks] == fixed_n_counts(case)
        cut = run_suite(adapter, case["tasks"], RepeatPolicy(runs_by_risk=case["tiers"],
                                                             stopping="curtailed"), **options)
        same += decisions(fixed) == decisions(cut)
        spent, fixed_spent = spent + cut.runs_spent, fixed_spent + fixed.runs_spent
        passed += fixed.report.gate.passed
        curtailed += bool(cut.settled_early)
    print(f"  {count} scripted suites with infrastructure errors, cached runs, short tiers "
          f"and caps up to 1: identical decisions {same}/{count} ({passed} passing, "
          f"{curtailed} curtailed); {spent} counted runs vs {fixed_spent} "
          f"({1 - spent / fixed_spent:.1%} saved); {time.perf_counter() - start:.1f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--throughput-repeats", type=int, default=2)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--demo-seeds", type=int, default=100)
    parser.add_argument("--suites", type=int, default=5)
    parser.add_argument("--skip", nargs="*", default=[], choices=["1", "2", "3"])
    args = parser.parse_args()
    print(f"passk run_suite benchmark; {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if "1" not in args.skip:
            throughput(tmp, args.throughput_repeats)
        if "2" not in args.skip:
            crash_safety(tmp, args.trials)
        if "3" not in args.skip:
            curtailment(args.demo_seeds, args.suites)
    return 0


if __name__ == "__main__":
    sys.exit(main())
