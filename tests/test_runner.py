"""Tests for :mod:`passk.run.runner`: executors, async adapters, timeouts, infrastructure
errors, cached runs, the log, curtailment, load_tasks/load_adapter and progress.

Resume, KeyboardInterrupt and kill-and-resume are in ``test_runner_resume.py``;
the Dask LocalCluster comparison is in ``test_runner_dask.py``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import multiprocessing
import pickle
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from runner_helpers import (
    CACHED,
    CRASH_SEED,
    INFRA,
    PASS,
    AsyncScripted,
    AsyncSeedCoin,
    AsyncSimulator,
    Scripted,
    SeedCoin,
    coin,
    fixed_n_counts,
    p_tasks,
    random_case,
)

import passk
from passk import InfrastructureError, OnCallSimulator, RunResult, Task, demo_tasks
from passk.cli import main as cli_main
from passk.gate.judge import judge
from passk.repeats import attempt_seed, run_seed
from passk.results.read import read_results
from passk.run.evaluate import evaluate_suite
from passk.run.runner import (
    GateSettings,
    LogRecord,
    SuiteRun,
    load_adapter,
    load_tasks,
    read_log,
    run_suite,
    suite_outlook,
    task_outlook,
    task_settled,
)
from passk.run.schedule import Schedule
from passk.stability import RepeatPolicy, reliability_gate, suite_report


def _gate(schedule, rows):
    """The runner's verdict on its schedule: the judge on the schedule's Results."""
    return judge(schedule.results(), schedule.criteria, rows=rows)


BIG = RepeatPolicy(runs_by_risk={"high-risk-write": 40, "read-only": 20})


def outcomes(run: SuiteRun) -> dict[tuple[str, int], tuple[bool, int | None]]:
    """Per (task, run): (success, seed) of the final attempt."""
    return {(r.task_id, r.run_index): (bool(r.success), r.seed) for r in run.results}


def counted(run: SuiteRun) -> dict[tuple[str, int], bool]:
    return {(r.task_id, r.run_index): bool(r.success) for r in run.results if r.counted}


def log_lines(path: Path) -> list[dict]:
    """The run records of a log (after its protocol header line)."""
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n")
    header, *records = [json.loads(line) for line in text.splitlines()]
    assert set(header) == {"protocol", "seed"} and "task_id" not in header
    return records


# --------------------------------------------------------------------------
# adapters specific to these tests
# --------------------------------------------------------------------------


class InfraOnSeeds:
    """Raises InfrastructureError when given one of ``bad`` seeds (every time), else a
    seed coin; counts calls per seed."""

    def __init__(self, bad: set[int], *, p: float = 1.0) -> None:
        self.bad, self.p = set(bad), p
        self.calls = 0
        self._lock = threading.Lock()

    def run(self, task: Task, *, seed: int) -> RunResult:
        with self._lock:
            self.calls += 1
        if seed in self.bad:
            raise InfrastructureError("rate limited (429)")
        return RunResult(task.task_id, 0, coin(seed, task.params.get("p", self.p)))


class AlwaysInfraFor:
    """Every attempt at the listed tasks is an infrastructure error; others pass."""

    def __init__(self, task_ids: set[str]) -> None:
        self.task_ids = task_ids
        self.calls = 0

    def run(self, task: Task, *, seed: int) -> RunResult:
        self.calls += 1
        if task.task_id in self.task_ids:
            raise InfrastructureError("sandbox would not start")
        return RunResult(task.task_id, 0, True)


class RaisesOn:
    """An ordinary exception (an agent crash) on the given seeds."""

    def __init__(self, bad: set[int]) -> None:
        self.bad = bad
        self.calls = 0

    def run(self, task: Task, *, seed: int) -> RunResult:
        self.calls += 1
        if seed in self.bad:
            raise ValueError("the agent tripped")
        return RunResult(task.task_id, 0, True)


class CachedOn:
    """Returns a cached result for the given seeds (success=True: a cache hit that
    would flatter the agent if it were counted)."""

    def __init__(self, cached: set[int]) -> None:
        self.cached = cached
        self.calls = 0

    def run(self, task: Task, *, seed: int) -> RunResult:
        self.calls += 1
        return RunResult(task.task_id, 0, True if seed in self.cached else coin(seed, 0.5),
                         cached=seed in self.cached)


def seeds_of(suite_seed: int, pairs) -> set[int]:
    return {run_seed(suite_seed, t, i) for t, i in pairs}


# --------------------------------------------------------------------------
# same seeds, same outcomes
# --------------------------------------------------------------------------


def test_simulator_pickles():
    sim = OnCallSimulator(temperature=0.5, deadline=0.5)
    clone = pickle.loads(pickle.dumps(sim))
    assert clone == sim
    task = demo_tasks()[0]
    assert pickle.loads(pickle.dumps(task)) == task
    assert clone.run(task, seed=9) == sim.run(task, seed=9)


@pytest.fixture(scope="module")
def sequential_demo() -> SuiteRun:
    return run_suite(OnCallSimulator(), demo_tasks(), BIG, seed=5, progress=False)


def test_sequential_matches_evaluate_suite(sequential_demo):
    report = evaluate_suite(OnCallSimulator(), demo_tasks(), BIG, seed=5)
    expected = {(r.task_id, r.run_index): (bool(r.success), r.seed)
                for rr in report.runs for r in rr.results}
    assert outcomes(sequential_demo) == expected
    assert sequential_demo.report.tasks == report.tasks
    assert sequential_demo.report.gate == report.gate
    assert sequential_demo.runs_spent == sequential_demo.runs_fixed == 80
    assert sequential_demo.runs_saved == 0
    assert all(r.seed == run_seed(5, r.task_id, r.run_index) for r in sequential_demo.results)
    # both outcomes occur, so the comparison below is not vacuous
    assert 0 < sum(ok for ok, _ in outcomes(sequential_demo).values()) < 80


def test_thread_pool_same_outcomes(sequential_demo):
    with ThreadPoolExecutor(8) as pool:
        threaded = run_suite(OnCallSimulator(), demo_tasks(), BIG, seed=5, executor=pool,
                             progress=False)
    assert outcomes(threaded) == outcomes(sequential_demo)
    assert threaded.report.to_dict() == sequential_demo.report.to_dict()
    own = run_suite(OnCallSimulator(), demo_tasks(), BIG, seed=5, max_concurrency=8,
                    progress=False)
    assert outcomes(own) == outcomes(sequential_demo)


def test_async_adapter_same_outcomes(sequential_demo):
    run = run_suite(AsyncSimulator(), demo_tasks(), BIG, seed=5, max_concurrency=16,
                    progress=False)
    assert outcomes(run) == outcomes(sequential_demo)
    scored = run.report.to_dict()
    assert scored.pop("protocol")["settings"]["adapter"].endswith("AsyncSimulator")
    assert scored == {k: v for k, v in sequential_demo.report.to_dict().items()
                      if k != "protocol"}
    default_limit = run_suite(AsyncSimulator(), demo_tasks(), BIG, seed=5, progress=False)
    assert outcomes(default_limit) == outcomes(sequential_demo)


class _InFlight(AsyncSeedCoin):
    """:class:`AsyncSeedCoin` that counts the runs in flight at once (awaiting together),
    so that overlap is read from the runs themselves, not from a clock a busy machine
    slows down."""

    def __init__(self, sleep: float) -> None:
        super().__init__(sleep=sleep)
        self.now, self.peak = 0, 0

    async def run(self, task: Task, *, seed: int) -> RunResult:
        self.now += 1
        self.peak = max(self.peak, self.now)
        try:
            return await super().run(task, seed=seed)
        finally:
            self.now -= 1


def test_async_runs_really_overlap():
    # 64 runs awaiting 50 ms each at concurrency 16: up to 16 await together, never more
    tasks = p_tasks([0.5] * 8)
    adapter = _InFlight(sleep=0.05)
    run = run_suite(adapter, tasks, {"read-only": 8}, max_concurrency=16, progress=False)
    assert run.runs_spent == 64
    assert 1 < adapter.peak <= 16, adapter.peak
    assert counted(run) == {(t.task_id, i): coin(run_seed(0, t.task_id, i), 0.5)
                            for t in tasks for i in range(8)}


@pytest.mark.slow
def test_process_pool_same_outcomes(sequential_demo):
    context = multiprocessing.get_context("spawn")  # nothing inherited: all must pickle
    with ProcessPoolExecutor(2, mp_context=context) as pool:
        run = run_suite(OnCallSimulator(), demo_tasks(), BIG, seed=5, executor=pool,
                        progress=False)
    assert outcomes(run) == outcomes(sequential_demo)
    assert run.report.to_dict() == sequential_demo.report.to_dict()


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_seed_coin_same_on_every_driver(seed):
    tasks = p_tasks([0.2, 0.5, 0.9, 1.0, 0.0])
    policy = {"read-only": 10}
    seq = run_suite(SeedCoin(), tasks, policy, seed=seed, progress=False)
    with ThreadPoolExecutor(4) as pool:
        thr = run_suite(SeedCoin(sleep=0.001, jitter=True), tasks, policy, seed=seed,
                        executor=pool, progress=False)
    asy = run_suite(AsyncSeedCoin(sleep=0.001, jitter=True), tasks, policy, seed=seed,
                    max_concurrency=16, progress=False)
    assert outcomes(seq) == outcomes(thr) == outcomes(asy)
    assert [r.run_index for r in seq.results] == [i for _ in tasks for i in range(10)]


def test_run_suite_rejects_bad_arguments(tmp_path):
    tasks = demo_tasks()
    with pytest.raises(ValueError, match="resume"):
        run_suite(OnCallSimulator(), tasks, resume=True, progress=False)
    with pytest.raises(ValueError, match="max_concurrency"):
        run_suite(OnCallSimulator(), tasks, max_concurrency=0, progress=False)
    with pytest.raises(ValueError, match="stopping"):
        run_suite(OnCallSimulator(), tasks, "sometimes", progress=False)
    with pytest.raises(ValueError, match="unique"):
        run_suite(OnCallSimulator(), [tasks[0], tasks[0]], progress=False)


@pytest.mark.parametrize("driver", ["sequential", "threads", "async"])
def test_adapter_returning_wrong_type_stops_the_suite(driver, tmp_path):
    """An adapter bug, the same on every run: one path with repeat_run (run_once), raised
    at once, never logged as 2 agent failures; the log is closed with what it holds."""
    class Bad:
        def run(self, task, *, seed):
            return {"success": True}

    class AsyncBad:
        async def run(self, task, *, seed):
            return {"success": True}

    adapter = AsyncBad() if driver == "async" else Bad()
    extra = {"max_concurrency": 4} if driver == "threads" else {}
    log = tmp_path / "runs.jsonl"
    with pytest.raises(TypeError, match=r"Bad.run returned dict, not a RunResult"):
        run_suite(adapter, [Task("a")], {"read-only": 2}, log=log, progress=False, **extra)
    assert log_lines(log) == []


# --------------------------------------------------------------------------
# per-run timeout
# --------------------------------------------------------------------------


class SlowOnSeeds:
    def __init__(self, slow: set[int], seconds: float) -> None:
        self.slow, self.seconds, self.calls = slow, seconds, 0

    def run(self, task: Task, *, seed: int) -> RunResult:
        self.calls += 1
        if seed in self.slow:
            time.sleep(self.seconds)
        return RunResult(task.task_id, 0, True)


class AsyncSlowOnSeeds(SlowOnSeeds):
    def __init__(self, slow: set[int], seconds: float) -> None:
        super().__init__(slow, seconds)
        self.slept_out = 0  # slow runs that finished their sleep: none, when cancelled

    async def run(self, task: Task, *, seed: int) -> RunResult:  # type: ignore[override]
        self.calls += 1
        if seed in self.slow:
            await asyncio.sleep(self.seconds)
            self.slept_out += 1
        return RunResult(task.task_id, 0, True)


@pytest.mark.parametrize("kind", ["async", "sync", "sync-pool"])
def test_timeout_is_a_failure_not_retried(kind):
    # the fast runs return at once and the slow ones sleep past the limit; the limit is
    # wide enough (1 s) that a fast run on a busy machine is never taken for a slow one
    tasks = [Task("a"), Task("b")]
    slow_pairs = {("a", 1), ("b", 0), ("b", 3)}
    slow = seeds_of(0, slow_pairs)
    if kind == "async":
        adapter = AsyncSlowOnSeeds(slow, 30.0)  # cancelled at the timeout
        extra = {"max_concurrency": 4}
    else:
        adapter = SlowOnSeeds(slow, 1.5)
        extra = {"max_concurrency": 4} if kind == "sync-pool" else {}
    run = run_suite(adapter, tasks, {"read-only": 4}, timeout=1.0, progress=False,
                    backoff=0, **extra)
    if kind == "async":  # the slow runs were cancelled at the timeout, not awaited for 30 s
        assert adapter.slept_out == 0
    assert adapter.calls == 8  # not retried
    for r in run.results:
        if (r.task_id, r.run_index) in slow_pairs:
            assert r.success is False and not r.infrastructure_error
            assert r.error.startswith("TimeoutError") and "1.0 s" in r.error
        else:
            assert r.success is True and r.error is None
    assert run.retries == {"a": 0, "b": 0}
    assert run.effective_n == {"a": 4, "b": 4}  # a timeout is an agent failure: counted
    assert [t.successes for t in run.report.tasks] == [3, 2]


def test_async_adapters_own_timeout_error_keeps_its_message():
    class Raises:
        async def run(self, task, *, seed):
            raise TimeoutError("upstream took too long")

    run = run_suite(Raises(), [Task("a")], {"read-only": 1}, progress=False)
    assert run.results[0].error == "TimeoutError: upstream took too long"


# --------------------------------------------------------------------------
# infrastructure errors
# --------------------------------------------------------------------------

INFRA_TASKS = p_tasks([1.0, 1.0, 0.5])  # t000, t001 always pass; t002 a coin
INFRA_FIRST = {("t000", 0), ("t000", 3), ("t001", 2), ("t002", 1), ("t002", 4)}


@pytest.mark.parametrize("driver", ["sequential", "threads", "async"])
def test_infrastructure_error_retried_and_never_a_failure(driver, tmp_path):
    bad = seeds_of(0, INFRA_FIRST)  # only the first attempt: retries have other seeds
    adapter = InfraOnSeeds(bad)
    if driver == "async":
        class AsyncInfra:
            async def run(self, task, *, seed):
                await asyncio.sleep(0)
                return adapter.run(task, seed=seed)
        target, extra = AsyncInfra(), {"max_concurrency": 8}
    else:
        target, extra = adapter, ({"max_concurrency": 4} if driver == "threads" else {})
    log = tmp_path / "runs.jsonl"
    run = run_suite(target, INFRA_TASKS, {"read-only": 6}, seed=0, backoff=0, log=log,
                    progress=False, **extra)
    assert adapter.calls == 18 + len(INFRA_FIRST)
    assert run.retries == {"t000": 2, "t001": 1, "t002": 2}
    assert run.infrastructure_errors == {"t000": 0, "t001": 0, "t002": 0}
    assert run.effective_n == {"t000": 6, "t001": 6, "t002": 6}
    assert run.runs_spent == run.runs_fixed == 18
    assert all(r.counted for r in run.results) and len(run.results) == 18
    # the always-passing tasks stay stable passes: no infrastructure error counted as failure
    rows = {t.task_id: t for t in run.report.tasks}
    assert rows["t000"].successes == rows["t001"].successes == 6
    assert rows["t000"].cls == rows["t001"].cls == "stable-pass"
    # retried runs carry the retry's seed; the others the run's own seed
    for r in run.results:
        base = run_seed(0, r.task_id, r.run_index)
        assert (r.seed != base) == ((r.task_id, r.run_index) in INFRA_FIRST)
    lines = log_lines(log)
    assert len(lines) == adapter.calls
    infra = [(x["task_id"], x["trial"]) for x in lines if x["infrastructure_error"]]
    assert sorted(infra) == sorted(INFRA_FIRST)
    assert all(x["attempt"] == 0 for x in lines if x["infrastructure_error"])
    assert {(x["task_id"], x["trial"]) for x in lines if x["attempt"] == 1} == INFRA_FIRST


def test_infrastructure_retries_same_outcomes_on_every_driver():
    bad = seeds_of(0, INFRA_FIRST)
    seq = run_suite(InfraOnSeeds(bad), INFRA_TASKS, {"read-only": 6}, backoff=0,
                    progress=False)
    with ThreadPoolExecutor(4) as pool:
        thr = run_suite(InfraOnSeeds(bad), INFRA_TASKS, {"read-only": 6}, backoff=0,
                        executor=pool, progress=False)
    assert outcomes(seq) == outcomes(thr)


def test_always_infrastructure_error_excluded_and_gate_fails_closed(tmp_path):
    tasks = [Task("ok"), Task("dead-sandbox")]
    adapter = AlwaysInfraFor({"dead-sandbox"})
    run = run_suite(adapter, tasks, {"read-only": 5}, max_retries=2, backoff=0,
                    log=tmp_path / "log.jsonl", progress=False)
    assert adapter.calls == 5 + 5 * 3
    assert run.retries == {"ok": 0, "dead-sandbox": 10}
    assert run.infrastructure_errors == {"ok": 0, "dead-sandbox": 5}
    assert run.effective_n == {"ok": 5, "dead-sandbox": 0}
    assert run.runs_spent == 5
    row = {t.task_id: t for t in run.report.tasks}["dead-sandbox"]
    assert row.runs == 0 and row.cls == "no-evidence"
    assert run.report.gate.passed is False
    assert any("dead-sandbox" in r and "no runs" in r for r in run.report.gate.reasons)
    given_up = [r for r in run.results if r.task_id == "dead-sandbox"]
    assert len(given_up) == 5 and all(r.infrastructure_error and not r.counted
                                      for r in given_up)
    assert all(r.error.startswith("InfrastructureError") for r in given_up)


def test_some_runs_always_infrastructure_lower_effective_n():
    tasks = [Task("a"), Task("b")]
    bad_pairs = {("a", 1), ("a", 2)}
    # every attempt of those runs fails: base seed and both retry seeds
    bad = {attempt_seed(0, t, i, a) for t, i in bad_pairs for a in range(3)}
    adapter = InfraOnSeeds(bad)
    run = run_suite(adapter, tasks, {"read-only": 6}, k=4, max_retries=2, backoff=0,
                    progress=False)
    assert run.effective_n == {"a": 4, "b": 6}
    assert run.infrastructure_errors == {"a": 2, "b": 0}
    assert run.retries == {"a": 4, "b": 0}
    assert [t.runs for t in run.report.tasks] == [4, 6]
    assert run.report.gate.passed is True  # 4 all-pass runs still estimate pass^k (k=4)
    run5 = run_suite(InfraOnSeeds(bad), tasks, {"read-only": 6}, k=5, max_retries=2,
                     backoff=0, progress=False)
    assert run5.report.gate.passed is False  # 4 counted runs cannot estimate pass^5


def test_max_retries_zero_gives_up_at_once():
    bad = seeds_of(0, {("a", 0)})
    adapter = InfraOnSeeds(bad)
    run = run_suite(adapter, [Task("a")], {"read-only": 3}, max_retries=0, progress=False)
    assert adapter.calls == 3
    assert run.retries == {"a": 0} and run.infrastructure_errors == {"a": 1}
    assert run.effective_n == {"a": 2}


def test_backoff_doubles():
    bad = {attempt_seed(0, "a", 0, a) for a in range(2)}  # attempts 0, 1 fail; 2 passes
    start = time.perf_counter()
    run = run_suite(InfraOnSeeds(bad), [Task("a")], {"read-only": 1}, backoff=0.05,
                    progress=False)
    elapsed = time.perf_counter() - start
    assert run.retries == {"a": 2} and run.effective_n == {"a": 1}
    assert elapsed >= 0.05 + 0.10 - 0.01


@pytest.mark.slow
def test_backoff_does_not_serialise_a_thread_pool():
    tasks = [Task(f"t{i}") for i in range(8)]
    bad = {run_seed(0, t.task_id, 0) for t in tasks}  # the first attempt of each task's run
    start = time.perf_counter()
    run = run_suite(InfraOnSeeds(bad), tasks, {"read-only": 1}, backoff=0.25,
                    max_concurrency=8, progress=False)
    elapsed = time.perf_counter() - start
    assert run.retries == {t.task_id: 1 for t in tasks}
    assert elapsed < 1.0, f"8 retries x 0.25 s backoff took {elapsed:.2f} s on 8 threads"


def test_ordinary_exception_is_an_agent_failure_never_retried():
    bad = seeds_of(0, {("a", 0), ("a", 2)})
    adapter = RaisesOn(bad)
    run = run_suite(adapter, [Task("a")], {"read-only": 5}, backoff=0, progress=False)
    assert adapter.calls == 5
    assert run.retries == {"a": 0} and run.infrastructure_errors == {"a": 0}
    assert run.effective_n == {"a": 5}
    assert [r.success for r in run.results] == [False, True, False, True, True]
    assert run.results[0].error == "ValueError: the agent tripped"
    assert run.results[0].counted and not run.results[0].infrastructure_error
    assert run.report.tasks[0].successes == 3 and run.report.tasks[0].cls == "flaky"


# --------------------------------------------------------------------------
# cached runs
# --------------------------------------------------------------------------


def test_cached_runs_not_counted_and_reported(tmp_path):
    cached_pairs = {("a", 1), ("a", 2), ("b", 0)}
    adapter = CachedOn(seeds_of(0, cached_pairs))
    log = tmp_path / "log.jsonl"
    run = run_suite(adapter, [Task("a"), Task("b")], {"read-only": 6}, log=log, progress=False)
    assert adapter.calls == 12  # a cached run is not retried
    assert run.cached == {"a": 2, "b": 1}
    assert run.effective_n == {"a": 4, "b": 5}
    assert run.retries == {"a": 0, "b": 0}
    assert run.infrastructure_errors == {"a": 0, "b": 0}
    assert run.runs_spent == 9
    assert [t.runs for t in run.report.tasks] == [4, 5]
    assert {(r.task_id, r.run_index) for r in run.results if r.cached} == cached_pairs
    # the report counts only fresh runs
    fresh = {(t, i): coin(run_seed(0, t, i), 0.5)
             for t in ("a", "b") for i in range(6) if (t, i) not in cached_pairs}
    assert counted(run) == fresh
    assert [t.successes for t in run.report.tasks] == [
        sum(v for (t, _), v in fresh.items() if t == tid) for tid in ("a", "b")]
    lines = log_lines(log)
    assert sorted((x["task_id"], x["trial"]) for x in lines if x["cached"]) == sorted(cached_pairs)
    results = read_results(log)
    assert results.totals.tolist() == [4, 5]
    assert results.excluded.tolist() == [2, 1]
    assert results.successes.tolist() == [t.successes for t in run.report.tasks]


def test_all_cached_task_fails_closed():
    adapter = CachedOn(seeds_of(0, {("a", i) for i in range(5)}))
    run = run_suite(adapter, [Task("a")], progress=False)
    assert run.effective_n == {"a": 0} and run.cached == {"a": 5}
    assert run.report.gate.passed is False


def test_runs_saved_is_zero_without_curtailment():
    adapter = CachedOn(seeds_of(0, {("a", 1)}))
    run = run_suite(adapter, [Task("a")], progress=False)
    assert run.runs_saved == 0


# --------------------------------------------------------------------------
# the log
# --------------------------------------------------------------------------

LOG_KEYS = {"task_id", "trial", "success", "attempt", "seconds", "error",
            "infrastructure_error", "cached", "seed", "risk", "trajectory"}  # issue 39


def test_log_one_line_per_run_readable_by_read_results(tmp_path):
    log = tmp_path / "runs.jsonl"
    run = run_suite(OnCallSimulator(), demo_tasks(), seed=3, log=log, progress=False)
    lines = log_lines(log)
    assert len(lines) == run.runs_spent == 22
    assert all(set(x) == LOG_KEYS for x in lines)
    assert sorted((x["task_id"], x["trial"]) for x in lines) == sorted(outcomes(run))
    by_pair = {(x["task_id"], x["trial"]): (x["success"], x["seed"]) for x in lines}
    assert by_pair == outcomes(run)
    assert {x["risk"] for x in lines if x["task_id"] == "payment-alert"} == {"high-risk-write"}
    assert [r.to_json() for r in read_log(log)] == log.read_text().splitlines()[1:]
    results = read_results(log)
    rows = {t.task_id: t for t in run.report.tasks}
    assert list(results.task_ids) == [t.task_id for t in run.report.tasks]
    assert results.successes.tolist() == [rows[t].successes for t in results.task_ids]
    assert results.totals.tolist() == [rows[t].runs for t in results.task_ids]
    assert results.excluded.tolist() == [0, 0, 0]
    assert results.risks == ("high-risk-write", "read-only", "read-only")
    # the header: the run's protocol and seed, read back by read_results
    header = json.loads(log.read_text().splitlines()[0])
    assert header["seed"] == 3
    assert header["protocol"]["fingerprint"] == run.protocol.fingerprint
    assert results.protocol == run.protocol
    settings = run.protocol.settings
    assert settings["runs_by_risk"] == {"high-risk-write": 12, "read-only": 5}
    assert settings["tasks"] == sorted(t.task_id for t in demo_tasks())
    assert settings["adapter"] == "passk.flaky_adapter.OnCallSimulator"


def test_log_is_written_within_the_window_of_each_run(tmp_path):
    """Each run's record reaches the file within the log's commit window (20 ms), in order:
    the next run finds every earlier one there once the window has passed."""
    from patience import CEILING_S  # the tests' one ceiling on a wait

    log = tmp_path / "runs.jsonl"
    seen: list[int] = []

    class Peek:
        def run(self, task, *, seed):
            deadline = time.monotonic() + CEILING_S
            while (len(log.read_text().splitlines()) - 1 < len(seen)  # less the header
                   and time.monotonic() < deadline):
                time.sleep(0.005)
            seen.append(len(log.read_text().splitlines()) - 1)
            return RunResult(task.task_id, 0, True)

    run_suite(Peek(), [Task("a")], {"read-only": 4}, log=log, progress=False)
    assert seen == [0, 1, 2, 3]


def test_log_with_infrastructure_retries(tmp_path):
    """Every attempt is a line; a retry shares its run's trial number with the
    infrastructure-error attempt before it (told apart by ``attempt``)."""
    log = tmp_path / "runs.jsonl"
    run_suite(InfraOnSeeds(seeds_of(0, INFRA_FIRST)), INFRA_TASKS, {"read-only": 6},
              backoff=0, log=log, progress=False)
    lines = log_lines(log)
    assert len(lines) == 18 + len(INFRA_FIRST)
    assert len({(x["task_id"], x["trial"]) for x in lines}) == 18
    assert len({(x["task_id"], x["trial"], x["attempt"]) for x in lines}) == len(lines)
    final = [x for x in lines if not x["infrastructure_error"]]
    assert len({(x["task_id"], x["trial"]) for x in final}) == len(final) == 18


def test_read_results_accepts_retried_trials(tmp_path):
    """An infrastructure-error attempt and its retry share a trial: not a duplicate, and
    not double counted (fixed in 239a856: duplicates only among counted runs)."""
    log = tmp_path / "runs.jsonl"
    run = run_suite(InfraOnSeeds(seeds_of(0, INFRA_FIRST)), INFRA_TASKS, {"read-only": 6},
                    backoff=0, log=log, progress=False)
    results = read_results(log)
    assert results.totals.tolist() == [6, 6, 6]
    assert results.successes.tolist() == [t.successes for t in run.report.tasks]
    assert results.excluded.tolist() == [2, 1, 2]


def test_log_record_round_trip():
    rec = LogRecord("a", 3, True, attempt=1, seconds=0.25, error=None, infrastructure_error=False,
                    cached=False, seed=2**64 - 1, risk="read-only")
    assert LogRecord(**json.loads(rec.to_json())) == rec
    assert "\n" not in rec.to_json()


# --------------------------------------------------------------------------
# curtailment: the settle rule
# --------------------------------------------------------------------------


@pytest.mark.parametrize("s,f,r,options,expected", [
    # the docstring's: one of each in 2 of 12 is flaky whatever the other 10 give
    (1, 1, 10, {}, True),
    (5, 0, 7, {}, False),               # 12/12 is not flaky, 5/6 (a failure, rest left out) is
    (0, 0, 12, {}, False),
    (11, 0, 1, {}, False),              # 11/12 flaky, 12/12 not
    (11, 0, 1, {"suite": "blocked"}, False),  # the flaky set still depends on the last run
    (9, 3, 0, {}, True),                # nothing left
    (0, 0, 0, {}, True),
    # 29/29, 29/30, 30/30 are all under the cap (4 * 29/30 * 1/30 = 0.129), but pass^5 is
    # 1, 25/30 or 1: its term in the mean is open, unless the suite is settled anyway
    (29, 0, 1, {}, False),
    (29, 0, 1, {"suite": "blocked"}, True),
    (29, 0, 1, {"suite": "passed"}, True),
    # k > the passes still possible: pass^5 is 0 under every completion (0/29, 0/30,
    # 1/30; 1/30 has flakiness 0.129): its term is fixed even with the suite open
    (0, 29, 1, {}, True),
    # the reported bug: at a 0.96 cap 1 of 2 is flaky (1.0) and 1 of 3 is not (0.889)
    (1, 1, 1, {"max_flakiness": 0.96, "suite": "blocked"}, False),
    (2, 1, 0, {"max_flakiness": 0.96}, True),
    # a 1-run tier with k = 5 fails the gate whatever happens ("too few"), and one run
    # is never flaky: settled before it starts; with k = 1 the run can decide it
    (0, 0, 1, {}, True),
    (0, 0, 1, {"k": 1}, False),
    (0, 0, 1, {"k": 1, "suite": "blocked"}, True),
    # a cap of 1: nothing is ever flaky, so only the mean keeps a task running
    (1, 1, 10, {"max_flakiness": 1.0}, False),
    (1, 1, 10, {"max_flakiness": 1.0, "suite": "blocked"}, True),
    # a cap of 0: any mix is flaky; all passes so far can still end 6/7 or 12/12
    (3, 3, 6, {"max_flakiness": 0.0}, True),
    (6, 0, 6, {"max_flakiness": 0.0}, False),
    # min_runs 8 out of reach (at most 7 counted runs) and 1/7, 0/7, 0/6 all under a 0.5
    # cap (4 * 1/7 * 6/7 = 0.49): blocked whatever happens, so settled
    (0, 6, 1, {"k": 1, "max_flakiness": 0.5, "min_runs": 8}, True),
    # min_runs out of reach, but 1/2 (flaky) and 1/1 (not) are both still possible
    (0, 0, 3, {"k": 1, "min_runs": 5}, False),
])
def test_task_settled_cases(s, f, r, options, expected):
    assert task_settled(s, f, remaining=r, **options) is expected


def test_task_settled_rejects_bad_input():
    with pytest.raises(ValueError, match="suite"):
        task_settled(1, 1, remaining=1, suite="maybe")
    with pytest.raises(ValueError, match=r"remaining \(-1\)"):
        task_settled(1, 1, remaining=-1)
    with pytest.raises(ValueError, match=r"k \(0\)"):
        task_outlook(1, 1, 1, k=0)
    with pytest.raises(ValueError, match=r"max_flakiness \(1.5\)"):
        task_outlook(1, 1, 1, max_flakiness=1.5)


def completions(s: int, f: int, r: int) -> list[tuple[int, int]]:
    """Final (passes, counted runs) of every way r more runs can end: a passes, b failures,
    the rest left out."""
    return [(s + a, s + f + a + b) for a in range(r + 1) for b in range(r + 1 - a)]


class GateOnCounts:
    """The real gate on final counts: each (c, m) scored once by ``suite_report``, and a
    suite of them gated by ``reliability_gate``."""

    def __init__(self, k: int, cap: float, min_runs: int, most: int) -> None:
        self.k, self.cap, self.min_runs = k, cap, min_runs
        pairs = [(c, m) for m in range(most + 1) for c in range(m + 1)]
        rows = suite_report([f"{c}/{m}" for c, m in pairs], [c for c, _ in pairs],
                            [m for _, m in pairs], k=k).tasks
        self.rows = dict(zip(pairs, rows))
        self.named: dict = {}

    def row(self, task: int, c: int, m: int):
        """The row of (c, m), as task ``t{task}`` (made once)."""
        key = (task, c, m)
        if key not in self.named:
            self.named[key] = dataclasses.replace(self.rows[(c, m)], task_id=f"t{task}")
        return self.named[key]

    def gate(self, counts, bar: float):
        rows = [self.row(t, c, m) for t, (c, m) in enumerate(counts)]
        return reliability_gate(rows, min_overall_pass_hat_k=bar, max_flakiness=self.cap,
                                min_runs=self.min_runs)

    def alone(self, c: int, m: int) -> tuple[bool, bool, float]:
        """(clear: nothing raised against the task itself, flaky, pass^k) of one task."""
        gate = self.gate([(c, m)], 0.0)  # a bar of 0: only the task's own reasons remain
        return gate.passed, bool(gate.flaky_tasks), self.rows[(c, m)].pass_hat_k


def same(values) -> bool | None:
    values = list(values)
    return True if all(values) else False if not any(values) else None


@pytest.mark.parametrize("k", [1, 2, 5, 13])
@pytest.mark.parametrize("cap", [0.0, 0.2, 0.5, 0.96, 1.0])
@pytest.mark.parametrize("min_runs", [0, 4])
def test_task_outlook_agrees_with_the_gate_on_every_completion(k, cap, min_runs):
    """Every state with up to 12 planned runs: the outlook's summaries equal those of the
    real gate applied to each completion's final counts."""
    oracle = GateOnCounts(k, cap, min_runs, 12)
    for n in range(13):
        for s in range(n + 1):
            for f in range(n + 1 - s):
                r = n - s - f
                scored = [oracle.alone(c, m) for c, m in completions(s, f, r)]
                clear_values = [v for ok, _, v in scored if ok]
                o = task_outlook(s, f, r, k=k, max_flakiness=cap, min_runs=min_runs)
                where = (s, f, r)
                assert o.flaky is same(fl for _, fl, _ in scored), where
                assert o.clear is same(ok for ok, _, _ in scored), where
                if clear_values:
                    assert (o.low, o.high) == (min(clear_values), max(clear_values)), where
                else:
                    assert np.isnan(o.low) and np.isnan(o.high), where
                all_same = all(ok for ok, _, _ in scored) and len(set(clear_values)) == 1
                assert o.fixed is (not clear_values or all_same), where


def test_settle_rule_against_every_joint_completion():
    """Small random suites in random states, against the real gate on every joint
    completion of every task's remaining runs:

    - ``suite_outlook`` says 'blocked' ('passed') only when every joint completion is
      blocked (passes), and does say so whenever that holds (no mean near the bar);
    - a task ``task_settled`` lets stop cannot change the decision: with its remaining
      runs left out, every joint completion gets the same verdict and flaky tasks.
    """
    rng = np.random.default_rng(909)
    oracles: dict[tuple, GateOnCounts] = {}
    checked = stopped = decided = 0
    for _ in range(260):
        size = int(rng.integers(1, 4))
        k, min_runs = int(rng.integers(1, 4)), int(rng.choice([0, 0, 2, 3]))
        cap = float(rng.choice([0.0, 0.2, 0.5, 0.75, 0.96, 1.0]))
        bar = float(rng.choice([0.0, 0.25, 0.5, 0.6, 0.7, 0.9, 1.0]))
        oracle = oracles.setdefault((k, cap, min_runs), GateOnCounts(k, cap, min_runs, 6))
        states = []
        for _ in range(size):
            n = int(rng.integers(1, 7 if size < 3 else 5))
            done = int(rng.integers(0, n + 1))
            s = int(rng.binomial(done, rng.choice([0.1, 0.5, 0.9, 1.0])))
            left_out = int(rng.binomial(done - s, 0.2))
            states.append((s, done - s - left_out, n - done))
        options = {"k": k, "max_flakiness": cap, "min_runs": min_runs}
        outlook = suite_outlook([task_outlook(*st_, **options) for st_ in states], bar)
        joint = list(itertools.product(*(completions(*st_) for st_ in states)))
        gates = [oracle.gate(counts, bar) for counts in joint]
        passed = [g.passed for g in gates]
        near = any(abs(g.overall - bar) < 1e-9 for g in gates if not np.isnan(g.overall))
        if outlook == "blocked":
            assert not any(passed), (states, k, cap, bar, min_runs)
        if outlook == "passed":
            assert all(passed), (states, k, cap, bar, min_runs)
        if not near:
            want = "blocked" if not any(passed) else "passed" if all(passed) else "open"
            assert outlook == want, (states, k, cap, bar, min_runs)
        decided += outlook != "open"
        for t, (s, f, r) in enumerate(states):
            if r == 0 or not task_settled(s, f, remaining=r, suite=outlook, **options):
                continue
            stopped += 1
            for counts, g in zip(joint, gates):
                cut = list(counts)
                cut[t] = (s, s + f)  # its remaining runs not made
                g_cut = oracle.gate(cut, bar)
                assert (g_cut.passed, g_cut.flaky_tasks) == (g.passed, g.flaky_tasks), (
                    states, t, k, cap, bar, min_runs, counts)
                checked += 1
    assert stopped > 60 and decided > 60 and checked > 2000  # the cases are not degenerate


# --------------------------------------------------------------------------
# curtailment decides as fixed n: 1,200 random suites through the scheduler
# --------------------------------------------------------------------------


def scored(cases: list[dict], counts: list[list[tuple[int, int]]]) -> list[list]:
    """Each suite's rows, as ``suite_report`` scores its (passes, runs), in one call per k."""
    rows_of: list[list] = [[] for _ in cases]
    for k in {c["k"] for c in cases}:
        which = [i for i, c in enumerate(cases) if c["k"] == k]
        flat = [(t.task_id, c, m) for i in which for t, (c, m) in zip(cases[i]["tasks"],
                                                                       counts[i])]
        rows = iter(suite_report([tid for tid, _, _ in flat], [c for _, c, _ in flat],
                                 [m for _, _, m in flat], k=k).tasks)
        for i in which:
            rows_of[i] = [next(rows) for _ in cases[i]["tasks"]]
    return rows_of


_OUTCOME = {PASS: "passed", INFRA: "infrastructure", CACHED: "cached"}


def curtailed_schedule(case: dict, rng: np.random.Generator) -> Schedule:
    """The runner's scheduler, curtailed, fed the scripted outcomes; up to 5 runs in flight
    end in a random order (as on a pool), without a thread or a sleep."""
    policy = RepeatPolicy(runs_by_risk=case["tiers"], stopping="curtailed")
    schedule = Schedule({t.task_id: policy.runs_for(t) for t in case["tasks"]},
                        GateSettings(case["k"], case["bar"], case["cap"],
                                     min_runs=case["min_runs"]),
                        stopping="curtailed", risks={t.task_id: t.risk for t in case["tasks"]},
                        max_retries=case["max_retries"])
    width, in_flight = int(rng.integers(1, 6)), []
    while True:
        while len(in_flight) < width and (item := schedule.next_run()) is not None:
            in_flight.append(item)
        if not in_flight:
            return schedule
        task_id, index, attempt = in_flight.pop(int(rng.integers(len(in_flight))))
        outcome = case["script"][task_id][index][attempt]
        schedule.record(task_id, index, _OUTCOME.get(outcome, "failed"), attempt)


def check_same_decision(case: dict, fixed_gate, gate, rows, settled_early) -> None:
    """Curtailed (``gate`` on ``rows``) decides as fixed n, on some of fixed n's runs, and
    its rows and reasons tell the truth about what was stopped."""
    where = {key: case[key] for key in ("tiers", "k", "cap", "bar", "min_runs", "max_retries")}
    assert gate.passed == fixed_gate.passed, where
    assert set(gate.flaky_tasks) == set(fixed_gate.flaky_tasks), where
    for task, row, (c, m) in zip(case["tasks"], rows, fixed_n_counts(case)):
        assert row.successes <= c and row.runs - row.successes <= m - c, where
        planned = case["tiers"][task.risk]
        if task.task_id in settled_early:
            assert settled_early[task.task_id] == planned and row.runs < planned, where
    stopped = [r for r in gate.reasons if "stopped early" in r]
    if gate.passed:
        assert gate.reasons == (), where
    elif settled_early:
        assert len(stopped) == 1 and all(f"{t} (" in stopped[0] for t in settled_early), where
    else:
        assert stopped == [], where


def test_curtailed_decides_as_fixed_n_on_1200_random_suites():
    """The property of issue 9: on the same outcomes, curtailed repetition gives the gate's
    verdict and flaky tasks of fixed n, with random tiers (1-12 runs), k (1-6), caps
    (0 to 1), bars (0 to 1), min_runs, 0-2 retries, infrastructure errors, cached runs,
    and runs ending out of order. The fixed-n verdict is the real gate on the counts
    fixed n would make; the curtailed one the runner's (``_gate``) on the runs made."""
    rng = np.random.default_rng(2026)
    cases = [random_case(rng) for _ in range(1200)]
    schedules = [curtailed_schedule(case, rng) for case in cases]
    fixed_rows = scored(cases, [fixed_n_counts(case) for case in cases])
    cut_rows = scored(cases, [[(s.successes, s.successes + s.failures)
                               for s in schedule.states.values()] for schedule in schedules])
    saved = early = early_passing = early_left_out = 0
    for case, schedule, fixed, cut in zip(cases, schedules, fixed_rows, cut_rows):
        fixed_gate = reliability_gate(fixed, min_overall_pass_hat_k=case["bar"],
                                      max_flakiness=case["cap"], min_runs=case["min_runs"])
        gate, settled = _gate(schedule, cut), schedule.settled_early()
        check_same_decision(case, fixed_gate, gate, cut, settled)
        saved += sum(s.remaining for s in schedule.states.values())
        early += bool(settled)
        early_passing += bool(settled) and gate.passed
        early_left_out += bool(settled) and any(s.gave_up or s.cached
                                                for s in schedule.states.values())
    # not degenerate: many suites were curtailed, some of them passing, some with runs
    # left out as infrastructure errors
    assert early > 300 and early_passing > 10 and early_left_out > 50 and saved > 1000


@pytest.mark.parametrize("driver", ["sequential", "async"])
def test_curtailed_run_suite_decides_as_fixed_run_suite(driver):
    """End to end: run_suite fixed and curtailed on 40 random scripted suites (the async
    adapter's runs end in a seed-dependent order); fixed n's counts are the script's."""
    rng = np.random.default_rng(17 if driver == "sequential" else 18)
    for _ in range(40):
        case = random_case(rng)
        seed = int(rng.integers(0, 2**32))
        seeds = {attempt_seed(seed, t.task_id, i, a): (t.task_id, i, a)
                 for t in case["tasks"] for i in range(case["tiers"][t.risk])
                 for a in range(case["max_retries"] + 1)}
        adapter = (AsyncScripted if driver == "async" else Scripted)(case["script"], seeds)
        options = {"k": case["k"], "seed": seed, "max_retries": case["max_retries"],
                   "backoff": 0, "min_overall_pass_hat_k": case["bar"],
                   "max_flakiness": case["cap"], "min_runs": case["min_runs"], "progress": False}
        fixed = run_suite(Scripted(case["script"], seeds), case["tasks"], case["tiers"],
                          **options)
        assert [(t.successes, t.runs) for t in fixed.report.tasks] == fixed_n_counts(case)
        cut = run_suite(adapter, case["tasks"],
                        RepeatPolicy(runs_by_risk=case["tiers"], stopping="curtailed"),
                        max_concurrency=int(rng.integers(1, 9)) if driver == "async" else None,
                        **options)
        check_same_decision(case, fixed.report.gate, cut.report.gate, cut.report.tasks,
                            cut.settled_early)
        assert outcomes(cut).items() <= outcomes(fixed).items()
        assert cut.runs_saved == sum(cut.settled_early.values()) - sum(
            cut.effective_n[t] + cut.infrastructure_errors[t] + cut.cached[t]
            for t in cut.settled_early)
        assert cut.protocol.settings["stopping"] == "curtailed"
        assert fixed.protocol.settings["stopping"] == "fixed"


# --------------------------------------------------------------------------
# curtailment: the reported bugs, through the CLI
# --------------------------------------------------------------------------


def run_cli(capsys, *argv: str) -> tuple[int, dict]:
    code = cli_main(["run", *argv, "--no-progress", "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out)


def test_cli_left_out_run_does_not_block_a_curtailed_suite(tmp_path, capsys):
    """Issue 9, item 5: with an infrastructure error left out (--max-retries 0), fixed n
    PASSED and --stopping curtailed BLOCKED with "stopped early ... (12 planned)"."""
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(f'{{"task_id": "t{i}", "p": 1.0}}\n' for i in range(6)))
    common = ["runner_helpers:CrashTarget", str(tasks), "--seed", str(CRASH_SEED),
              "--max-retries", "0", "--runs-read-only", "12"]
    code_fixed, fixed = run_cli(capsys, *common, "--log", str(tmp_path / "f.jsonl"))
    code_cut, cut = run_cli(capsys, *common, "--log", str(tmp_path / "c.jsonl"),
                            "--stopping", "curtailed")
    assert sum(fixed["runs"]["infrastructure_errors"].values()) > 0  # the case of the bug
    assert (code_fixed, code_cut) == (0, 0)
    assert fixed["gate"]["passed"] is cut["gate"]["passed"] is True
    assert cut["gate"]["reasons"] == []
    assert cut["runs"]["effective_n"] == fixed["runs"]["effective_n"]
    assert cut["runs"]["settled_early"] == {}  # runs left out are not runs not made


def test_cli_says_which_tasks_were_settled_early(tmp_path, capsys):
    """A passing curtailed suite: exit 0, no reason, and a line naming the tasks stopped
    early with the runs they made (cap 1, bar 0, k = 2: see the run_suite test above)."""
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(f'{{"task_id": "t{i}", "p": {p}}}\n'
                             for i, p in enumerate([1.0, 0.5, 0.0])))
    code = cli_main(["run", "runner_helpers:SeedCoin", str(tasks), "--log",
                     str(tmp_path / "c.jsonl"), "--stopping", "curtailed", "--k", "2",
                     "--max-flakiness", "1", "--min-overall", "0", "--runs-read-only", "12",
                     "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    assert "gate: PASSED" in out
    assert out.splitlines()[-1] == ("settled early, the gate's verdict the same whatever the "
                                    "runs not made: t2 (2 counted of 12 planned)")


def test_cli_short_tier_near_one_cap_flags_only_fixed_n_flaky_tasks(tmp_path, capsys):
    """Issue 9, item 5: at a 0.96 cap with a 3-run tier, a curtailed run called a task
    flaky that fixed n did not. Reproduced exactly: a run interrupted when 10 runs of the
    12-run task (5 passed) and 2 of a 3-run task (1 passed) are in the log, then resumed.
    Stopped there, 1/2 has flakiness 1.0 > 0.96; run in full, 2/3 has 0.889."""
    rows = [{"task_id": "write", "risk": "high-risk-write", "p": 0.5, "sleep": 0.01},
            {"task_id": "read0", "p": 0.5, "sleep": 0.05},
            {"task_id": "read1", "p": 0.5, "sleep": 0.05}]
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(r) + "\n" for r in rows))
    rows[1]["interrupt_seed"] = run_seed(10, "read0", 2)  # Ctrl-C as read0's last run starts
    interrupted = tmp_path / "interrupted.jsonl"
    interrupted.write_text("".join(json.dumps(r) + "\n" for r in rows))
    common = ["runner_helpers:AsyncTaskSleep", "--seed", "10", "--k", "1",
              "--runs-read-only", "3", "--max-flakiness", "0.96", "--concurrency", "12"]
    log = tmp_path / "cut.jsonl"
    assert cli_main(["run", *common, str(interrupted), "--log", str(log), "--stopping",
                     "curtailed", "--no-progress"]) == 130
    capsys.readouterr()
    logged = log_lines(log)
    assert sorted((r["trial"], r["success"]) for r in logged if r["task_id"] == "read0") == [
        (0, True), (1, False)]
    assert sum(r["task_id"] == "write" for r in logged) == 10
    code_cut, cut = run_cli(capsys, *common, str(tasks), "--log", str(log), "--stopping",
                            "curtailed", "--resume")
    code_fixed, fixed = run_cli(capsys, *common, str(tasks), "--log", str(tmp_path / "f.jsonl"))
    assert code_cut == code_fixed == 1  # the 12-run task is flaky either way
    assert cut["gate"]["flaky_tasks"] == fixed["gate"]["flaky_tasks"] == ["write"]
    read0 = next(t for t in cut["tasks"] if t["task_id"] == "read0")
    assert (read0["successes"], read0["runs"]) == (2, 3)


def gate_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli_main(["gate", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_curtailed_log_is_not_regated_under_another_gate(tmp_path, capsys):
    """Issue 17, item 4: a log curtailed for the estimate, gated on the lower bound
    ("stricter"), decided otherwise than the fixed-n log of the same runs. Seed 3: t0
    stops at 0 of 2 (pass^2 is 0 whatever its third run), where fixed n makes it 1 of 3,
    whose lower bound (0.000286) clears the bar 0.0002. The curtailed log is refused,
    exit 2, one line naming both gates; under its own gate it decides as fixed n."""
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(f'{{"task_id": "t{i}", "p": 0.4}}\n' for i in range(3)))
    common = ["runner_helpers:SeedCoin", str(tasks), "--seed", "3", "--k", "2",
              "--min-overall", "0.0002", "--max-flakiness", "1", "--runs-read-only", "3",
              "--no-progress"]
    cut, fixed = tmp_path / "cut.jsonl", tmp_path / "fixed.jsonl"
    assert cli_main(["run", *common, "--log", str(cut), "--stopping", "curtailed"]) == 1
    assert cli_main(["run", *common, "--log", str(fixed)]) == 1
    capsys.readouterr()
    assert gate_cli(capsys, str(fixed), "--on", "lower-bound")[0] == 0  # PASSED on n = 3
    code, out, err = gate_cli(capsys, str(cut), "--on", "lower-bound")
    assert (code, out) == (2, "")
    fingerprint = json.loads(cut.read_text().splitlines()[0])["protocol"]["fingerprint"]
    assert err.splitlines() == [
        ("passk gate: error: the runs were curtailed for the gate k 2, bar 0.0002 on the "
        "estimate, flakiness cap 1; the gate asked for, k 2, bar 0.0002 on the lower bound "
        "(95%), flakiness cap 1, could decide differently on the runs curtailment did not "
        f"make (protocol {fingerprint}): gate under the protocol's criteria, or rerun with "
        "fixed repetition")]
    assert gate_cli(capsys, str(cut), "--k", "3")[0] == 2  # any other gate, too
    assert gate_cli(capsys, str(cut))[0] == gate_cli(capsys, str(fixed))[0] == 1
    assert cli_main(["report", str(cut), "--on", "lower-bound"]) == 2
    assert "could decide differently" in capsys.readouterr().err


def test_a_curtailed_log_is_regated_when_its_runs_decide_exactly(tmp_path, capsys):
    """A stricter bar that no completion of the runs not made could reach is decided on
    the runs made: t2 stopped at 0 of 2 of 12, and even 10 more passes would give a mean
    pass^2 of at most (1 + 0.227 + 45/66) / 3 = 0.64, below 0.9: BLOCKED, exit 1."""
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(f'{{"task_id": "t{i}", "p": {p}}}\n'
                             for i, p in enumerate([1.0, 0.5, 0.0])))
    log = tmp_path / "c.jsonl"
    assert cli_main(["run", "runner_helpers:SeedCoin", str(tasks), "--log", str(log),
                     "--stopping", "curtailed", "--k", "2", "--max-flakiness", "1",
                     "--min-overall", "0", "--runs-read-only", "12", "--no-progress"]) == 0
    capsys.readouterr()
    code, out, err = gate_cli(capsys, str(log), "--min-overall", "0.9")
    assert code == 1 and "gate: BLOCKED" in out and "could decide differently" not in err
    code, _, err = gate_cli(capsys, str(log), "--min-overall", "0.5")  # 10 passes could
    assert code == 2 and "could decide differently" in err


def test_passk_run_curtails_for_the_gate_it_declares(tmp_path, capsys):
    """``passk run --on lower-bound --stopping curtailed``: the log's protocol declares the
    lower bound, curtailment served it (t0 runs its third run), and ``passk gate`` on the
    log decides as the fixed-n log of the same runs, with no refusal."""
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(f'{{"task_id": "t{i}", "p": 0.4}}\n' for i in range(3)))
    common = ["runner_helpers:SeedCoin", str(tasks), "--seed", "3", "--k", "2",
              "--min-overall", "0.0002", "--max-flakiness", "1", "--runs-read-only", "3",
              "--on", "lower-bound", "--no-progress"]
    cut, fixed = tmp_path / "cut.jsonl", tmp_path / "fixed.jsonl"
    assert cli_main(["run", *common, "--log", str(cut), "--stopping", "curtailed"]) == 0
    assert cli_main(["run", *common, "--log", str(fixed)]) == 0
    header = json.loads(cut.read_text().splitlines()[0])["protocol"]["settings"]
    assert (header["gate_on"], header["confidence"], header["stopping"]) == (
        "lower-bound", 0.95, "curtailed")
    assert sum(r["task_id"] == "t0" for r in log_lines(cut)) == 3
    capsys.readouterr()
    assert gate_cli(capsys, str(cut))[0] == gate_cli(capsys, str(fixed))[0] == 0
    code, _, err = gate_cli(capsys, str(cut), "--on", "estimate")  # looser: refused
    assert code == 2 and "would loosen" in err


def test_run_suite_curtails_for_the_lower_bound_as_fixed_n(tmp_path):
    """run_suite's curtailment serves the gate it is given: on the lower bound, t0 of the
    seed-3 suite above is not stopped at 0 of 2 (a pass would lift its bound over the
    bar), the decision is fixed n's, and the protocol records gate_on and confidence."""
    tasks = [Task(f"t{i}", params={"p": 0.4}) for i in range(3)]
    options = {"k": 2, "min_overall_pass_hat_k": 0.0002, "max_flakiness": 1.0, "seed": 3,
               "progress": False, "gate_on": "lower-bound"}
    plan = {"read-only": 3}
    fixed = run_suite(SeedCoin(), tasks, RepeatPolicy(runs_by_risk=plan, default=3),
                      **options)
    cut = run_suite(SeedCoin(), tasks, RepeatPolicy(runs_by_risk=plan, default=3,
                                                    stopping="curtailed"), **options)
    assert decisions(cut) == decisions(fixed) == (True, frozenset())
    assert cut.effective_n["t0"] == 3
    assert {k: cut.protocol.settings[k] for k in ("gate_on", "confidence", "stopping")} == {
        "gate_on": "lower-bound", "confidence": 0.95, "stopping": "curtailed"}


# --------------------------------------------------------------------------
# curtailment: runs, reasons, protocol
# --------------------------------------------------------------------------


def decisions(run: SuiteRun) -> tuple[bool, frozenset[str]]:
    return run.report.gate.passed, frozenset(run.report.gate.flaky_tasks)


def check_curtailed_equals_fixed(adapter, tasks, policy, seed, **kwargs):
    fixed = run_suite(adapter, tasks, policy, seed=seed, progress=False, **kwargs)
    cut = run_suite(adapter, tasks, RepeatPolicy(runs_by_risk=policy, stopping="curtailed"),
                    seed=seed, progress=False, **kwargs)
    assert decisions(cut) == decisions(fixed)
    assert cut.runs_spent <= fixed.runs_spent == cut.runs_fixed
    assert cut.runs_saved == cut.runs_fixed - cut.runs_spent
    # the curtailed runs are the fixed ones (same seeds), just fewer of them
    fixed_out = outcomes(fixed)
    assert all(fixed_out[key] == value for key, value in outcomes(cut).items())
    assert set(cut.settled_early) == {t.task_id for t in tasks
                                      if cut.effective_n[t.task_id] < fixed.effective_n[t.task_id]}
    if cut.settled_early and not cut.report.gate.passed:
        assert any("stopped early" in r for r in cut.report.gate.reasons)
    return fixed, cut


@pytest.mark.parametrize("seed", range(10))
def test_curtailed_demo_same_decisions(seed):
    policy = {"high-risk-write": 12, "read-only": 5}
    fixed, cut = check_curtailed_equals_fixed(OnCallSimulator(), demo_tasks(), policy, seed)
    if "payment-alert" in fixed.report.gate.flaky_tasks:
        assert cut.runs_spent < fixed.runs_spent
        assert cut.settled_early == {"payment-alert": 12}


def test_curtailed_policy_string_and_docstring_example():
    fixed = run_suite(OnCallSimulator(), demo_tasks(), seed=3, progress=False)
    cut = run_suite(OnCallSimulator(), demo_tasks(), "curtailed", seed=3, progress=False)
    same = run_suite(OnCallSimulator(), demo_tasks(), RepeatPolicy(stopping="curtailed"), seed=3,
                     progress=False)
    assert decisions(cut) == decisions(fixed) == decisions(same)
    assert cut.runs_spent == same.runs_spent < fixed.runs_spent


def test_curtailed_passing_suite_runs_in_full_when_a_pass_is_not_certain():
    """At a 0.2 cap a task passing every run must make all 12: 11/12 would be flaky. The
    rows are then fixed n's and nothing is said about stopping."""
    tasks = p_tasks([1.0] * 6)
    _, cut = check_curtailed_equals_fixed(SeedCoin(), tasks, {"read-only": 12}, 0)
    assert cut.runs_spent == cut.runs_fixed == 72
    assert cut.report.gate.passed is True and cut.report.gate.reasons == ()
    assert cut.settled_early == {}


def test_curtailed_passing_suite_stops_once_its_pass_is_certain():
    """A cap of 1 and a bar of 0: every completion passes once each task has k = 2 counted
    runs (left-out runs could not take it below 2 then). Run one after another, the first
    two tasks run in full (the next could still end with fewer than 2 runs), the last
    stops at 2, and the gate passes with no reason about stopping."""
    tasks = p_tasks([1.0, 0.5, 0.0])
    _, cut = check_curtailed_equals_fixed(SeedCoin(), tasks, {"read-only": 12}, 0, k=2,
                                          min_overall_pass_hat_k=0.0, max_flakiness=1.0)
    assert cut.report.gate.passed is True and cut.report.gate.reasons == ()
    assert cut.effective_n == {"t000": 12, "t001": 12, "t002": 2}
    assert cut.settled_early == {"t002": 12}
    assert cut.runs_saved == 10


def test_curtailed_blocked_by_the_mean_says_why():
    """No task flaky (cap 1), but the bar of 0.9 is out of reach once a task has failed
    enough: the reasons say the mean cannot reach the bar, with the most it could be."""
    tasks = p_tasks([1.0, 0.0])
    fixed, cut = check_curtailed_equals_fixed(SeedCoin(), tasks, {"read-only": 12}, 0, k=1,
                                              min_overall_pass_hat_k=0.9, max_flakiness=1.0)
    assert fixed.report.gate.passed is False and fixed.report.gate.flaky_tasks == ()
    assert cut.settled_early  # the failing task stops once the bar is out of reach
    text = " | ".join(cut.report.gate.reasons)
    assert "stopped early" in text and "could reach at most" in text and "below the bar" in text


def test_curtailed_task_out_of_k_reach_never_runs_and_the_reasons_say_why():
    """A 1-run tier with k = 5 fails the gate whatever its run gives, and one run is never
    flaky: once the suite is blocked anyway, the task is settled before it starts."""
    tasks = [Task("write", risk="high-risk-write", params={"p": 0.5}), Task("read")]
    policy = {"high-risk-write": 12, "read-only": 1}
    fixed, cut = check_curtailed_equals_fixed(SeedCoin(), tasks, policy, 1)
    assert fixed.effective_n["read"] == 1 and cut.effective_n["read"] == 0
    assert cut.settled_early["read"] == 1
    assert ("task read: at most 1 counted run even if all 1 planned had been made, and "
            "pass^5 needs 5") in cut.report.gate.reasons


def test_curtailed_with_infrastructure_errors_same_decisions():
    rng = np.random.default_rng(3)
    tasks = random_suite(rng, 12)
    # runs 0 and 5 of every task never get through: effective n is 10
    bad = {attempt_seed(0, t.task_id, i, a) for t in tasks for i in (0, 5) for a in range(2)}

    class Adapter:
        def run(self, task, *, seed):
            if seed in bad:
                raise InfrastructureError("down")
            return SeedCoin().run(task, seed=seed)

    fixed = run_suite(Adapter(), tasks, {"read-only": 12}, max_retries=1, backoff=0,
                      progress=False)
    cut = run_suite(Adapter(), tasks, RepeatPolicy(runs_by_risk={"read-only": 12},
                                                   stopping="curtailed"),
                    max_retries=1, backoff=0, progress=False)
    assert set(fixed.effective_n.values()) == {10}
    assert decisions(cut) == decisions(fixed)
    assert cut.runs_spent <= fixed.runs_spent
    # a task whose left-out runs were all made is not "stopped early"
    assert all(cut.effective_n[t] < 10 for t in cut.settled_early)


def random_suite(rng: np.random.Generator, size: int) -> list[Task]:
    kind = rng.integers(0, 3, size=size)
    ps = np.where(kind == 0, rng.uniform(0.97, 1.0, size),
                  np.where(kind == 1, rng.uniform(0.0, 0.03, size), rng.uniform(0.2, 0.8, size)))
    return p_tasks(ps)


@pytest.mark.slow
def test_curtailed_random_suites_same_decisions():
    rng = np.random.default_rng(2024)
    saved = 0
    for trial in range(60):
        tasks = random_suite(rng, int(rng.integers(1, 16)))
        if trial % 3 == 0:  # suites that can pass: no in-between tasks
            tasks = p_tasks(rng.uniform(0.97, 1.0, size=len(tasks)))
        _, cut = check_curtailed_equals_fixed(SeedCoin(), tasks, {"read-only": 12},
                                              int(rng.integers(0, 10**6)))
        saved += cut.runs_saved
    assert saved > 0


@pytest.mark.parametrize("driver", ["threads", "async"])
def test_curtailed_same_decisions_concurrently(driver):
    rng = np.random.default_rng(7)
    tasks = random_suite(rng, 30)
    policy = {"read-only": 12}
    fixed = run_suite(SeedCoin(), tasks, policy, seed=11, progress=False)
    cut_policy = RepeatPolicy(runs_by_risk=policy, stopping="curtailed")
    if driver == "threads":
        cut = run_suite(SeedCoin(sleep=0.0005, jitter=True), tasks, cut_policy, seed=11,
                        max_concurrency=8, progress=False)
    else:
        cut = run_suite(AsyncSeedCoin(sleep=0.0005, jitter=True), tasks, cut_policy, seed=11,
                        max_concurrency=16, progress=False)
    assert decisions(cut) == decisions(fixed)
    assert cut.runs_spent < fixed.runs_spent
    fixed_out = outcomes(fixed)
    assert all(fixed_out[key] == value for key, value in outcomes(cut).items())


def test_protocol_records_what_was_applied():
    tasks = p_tasks([1.0, 0.5])
    cut = run_suite(SeedCoin(), tasks, "curtailed", progress=False, min_runs=3)
    assert cut.protocol.settings["stopping"] == "curtailed"
    assert cut.protocol.settings["min_runs"] == 3
    fixed = run_suite(SeedCoin(), tasks, progress=False)
    assert fixed.protocol.settings["stopping"] == "fixed" and "min_runs" not in fixed.protocol.settings
    with pytest.raises(ValueError, match=r"stopping \('curtailed'\).*run_suite"):
        evaluate_suite(SeedCoin(), tasks, RepeatPolicy(stopping="curtailed"))
    assert evaluate_suite(SeedCoin(), tasks).protocol.settings["stopping"] == "fixed"
    with pytest.raises(ValueError, match=r"min_runs \(-1\)"):
        run_suite(SeedCoin(), tasks, progress=False, min_runs=-1)


def test_min_runs_gates_and_curtails_alike():
    """min_runs 11 of 12 planned, one run of one task left out: fixed n fails that task
    (10 runs < 11); curtailed says the same, without calling it stopped early."""
    tasks = p_tasks([1.0, 1.0])
    bad = {attempt_seed(0, "t000", i, 0) for i in (3, 7)}

    class Adapter:
        def run(self, task, *, seed):
            if seed in bad:
                raise InfrastructureError("down")
            return SeedCoin().run(task, seed=seed)

    for policy in ({"read-only": 12}, RepeatPolicy(runs_by_risk={"read-only": 12},
                                                  stopping="curtailed")):
        run = run_suite(Adapter(), tasks, policy, max_retries=0, min_runs=11, progress=False)
        assert run.report.gate.passed is False
        # the two runs left out are said, as passk gate on the run's log says them
        why = ("task t000: 10 runs, fewer than the minimum 11 (2 more left out as "
               "infrastructure errors)")
        assert run.report.gate.reasons == (why,)
        assert run.settled_early == {}


# --------------------------------------------------------------------------
# load_tasks, load_adapter
# --------------------------------------------------------------------------


def write(tmp_path: Path, text: str, name: str = "tasks.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_load_tasks_good(tmp_path):
    path = write(tmp_path, "\n".join([  # noqa: FLY002 - one task per line, as in the file
        ('{"task_id": "payment-alert", "risk": "high-risk-write", "instruction": "handle it",'
         ' "service": "payment-service", "intent": "handle-alert"}'),
        "",
        '{"task_id": 7, "previously_flaky": true}',
        '{"task_id": "read", "p": 0.5, "nested": {"a": [1, 2]}}',
    ]) + "\n")
    tasks = load_tasks(path)
    assert [t.task_id for t in tasks] == ["payment-alert", "7", "read"]
    assert tasks[0].risk == "high-risk-write" and tasks[0].instruction == "handle it"
    assert dict(tasks[0].params) == {"service": "payment-service", "intent": "handle-alert"}
    assert tasks[1].risk == "read-only" and tasks[1].previously_flaky is True
    assert dict(tasks[2].params) == {"p": 0.5, "nested": {"a": [1, 2]}}
    # the demo tasks, written out and read back, run on the simulator like the originals
    demo = tmp_path / "demo.jsonl"
    demo.write_text("".join(json.dumps({"task_id": t.task_id, "risk": t.risk,
                                        "instruction": t.instruction, **t.params}) + "\n"
                            for t in demo_tasks()))
    loaded = load_tasks(demo)
    assert loaded == demo_tasks()
    assert (outcomes(run_suite(OnCallSimulator(), loaded, seed=2, progress=False))
            == outcomes(run_suite(OnCallSimulator(), demo_tasks(), seed=2, progress=False)))


@pytest.mark.parametrize("text,pattern", [
    ('{"task_id": "a"}\n{"task_id": "b",\n', r":2: not valid JSON"),
    ('{"task_id": "a"}\n\n{"risk": "read-only"}\n', r":3: a task needs a 'task_id'"),
    ("[1, 2]\n", r":1: a task needs a 'task_id'"),
    ('{"task_id": null}\n', r":1: a task needs a 'task_id'"),
    ('{"task_id": "a"}\n{"task_id": "b"}\n{"task_id": "a"}\n',
     r":3: task 'a' already defined on line 1"),
    ('{"task_id": "a", "risk": 3}\n', r":1: 'risk' must be a string"),
    ("\n\n", r"no tasks"),
    ("", r"no tasks"),
])
def test_load_tasks_bad(tmp_path, text, pattern):
    path = write(tmp_path, text)
    with pytest.raises(ValueError, match=pattern) as info:
        load_tasks(path)
    assert str(path) in str(info.value)


def test_load_tasks_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_tasks(tmp_path / "nope.jsonl")


def test_load_adapter_forms():
    cls = load_adapter("passk.flaky_adapter:OnCallSimulator")  # a class
    assert isinstance(cls, OnCallSimulator)
    assert isinstance(load_adapter("passk:OnCallSimulator"), OnCallSimulator)
    import runner_helpers
    assert load_adapter("runner_helpers:ADAPTER_OBJECT") is runner_helpers.ADAPTER_OBJECT
    assert load_adapter("runner_helpers:make_adapter") == SeedCoin()  # a factory
    assert load_adapter("runner_helpers:Holder.adapter") is runner_helpers.Holder.adapter
    assert isinstance(load_adapter("runner_helpers:AsyncSeedCoin"), AsyncSeedCoin)


@pytest.mark.parametrize("spec,pattern", [
    ("passk.flaky_adapter", "must look like 'module:attribute'"),
    (":OnCallSimulator", "must look like"),
    ("passk.flaky_adapter:", "must look like"),
    ("no_such_module_xyz:Adapter", "cannot import 'no_such_module_xyz'"),
    ("passk.flaky_adapter:NoSuchThing", "has no attribute 'NoSuchThing'"),
    ("runner_helpers:Holder.missing", "has no attribute 'Holder.missing'"),
    ("runner_helpers:NOT_AN_ADAPTER", "neither an adapter nor a factory"),
    ("passk:metrics", "neither an adapter nor a factory"),
    ("runner_helpers:make_nothing", "gave object, which has no run method"),
])
def test_load_adapter_bad(spec, pattern):
    with pytest.raises(ValueError, match=pattern):
        load_adapter(spec)


# --------------------------------------------------------------------------
# progress
# --------------------------------------------------------------------------


def test_progress_false_is_quiet(capsys):
    run_suite(OnCallSimulator(), demo_tasks(), progress=False)
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""


def test_progress_quiet_when_not_a_terminal(capsys):
    run_suite(OnCallSimulator(), demo_tasks(), progress=True)
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""


def test_progress_bar_counts_runs_and_failures(monkeypatch):
    import tqdm.auto

    bars = []
    real = tqdm.auto.tqdm

    def spy(*args, **kwargs):
        kwargs["disable"] = False
        kwargs["file"] = open("/dev/null", "w")  # noqa: SIM115
        bar = real(*args, **kwargs)
        bars.append(bar)
        return bar

    monkeypatch.setattr(tqdm.auto, "tqdm", spy)  # passk imports it when a suite runs
    run = run_suite(OnCallSimulator(), demo_tasks(), seed=3, progress=True)
    (bar,) = bars
    assert bar.total == 22 and bar.n == 22
    assert bar.postfix == f"failures={sum(not ok for ok in counted(run).values())}"


def test_lazy_exports():
    assert passk.run_suite is run_suite and passk.SuiteRun is SuiteRun
