"""Tests for :mod:`passk.runner`: executors, async adapters, timeouts, infrastructure
errors, cached runs, the log, curtailment, load_tasks/load_adapter and progress.

Resume, KeyboardInterrupt and kill-and-resume are in ``test_runner_resume.py``;
the Dask LocalCluster comparison is in ``test_runner_dask.py``.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import pickle
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runner_helpers import (
    AsyncSeedCoin,
    AsyncSimulator,
    SeedCoin,
    coin,
    p_tasks,
)

import passk
from passk import InfrastructureError, OnCallSimulator, RunResult, Task, demo_tasks
from passk.io import read_results
from passk.repeat_run import run_seed
from passk.runner import (
    LogRecord,
    SuiteRun,
    load_adapter,
    load_tasks,
    read_log,
    run_suite,
    task_settled,
)
from passk.stability import RepeatPolicy, evaluate_suite

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


def test_async_runs_really_overlap():
    # 64 runs awaiting 50 ms each at concurrency 16: about 0.2 s, not 3.2 s
    tasks = p_tasks([0.5] * 8)
    start = time.perf_counter()
    run = run_suite(AsyncSeedCoin(sleep=0.05), tasks, {"read-only": 8}, max_concurrency=16,
                    progress=False)
    elapsed = time.perf_counter() - start
    assert run.runs_spent == 64
    assert elapsed < 1.5, elapsed
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


def test_adapter_returning_wrong_type_is_a_failed_run():
    class Bad:
        def run(self, task, *, seed):
            return {"success": True}

    run = run_suite(Bad(), [Task("a")], {"read-only": 2}, progress=False)
    assert [r.success for r in run.results] == [False, False]
    assert all("TypeError" in r.error for r in run.results)
    assert run.effective_n == {"a": 2}


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
    async def run(self, task: Task, *, seed: int) -> RunResult:  # type: ignore[override]
        self.calls += 1
        if seed in self.slow:
            await asyncio.sleep(self.seconds)
        return RunResult(task.task_id, 0, True)


@pytest.mark.parametrize("kind", ["async", "sync", "sync-pool"])
def test_timeout_is_a_failure_not_retried(kind):
    tasks = [Task("a"), Task("b")]
    slow_pairs = {("a", 1), ("b", 0), ("b", 3)}
    slow = seeds_of(0, slow_pairs)
    if kind == "async":
        adapter = AsyncSlowOnSeeds(slow, 5.0)  # cancelled at the timeout
        extra = {"max_concurrency": 4}
    else:
        adapter = SlowOnSeeds(slow, 0.3)
        extra = {"max_concurrency": 4} if kind == "sync-pool" else {}
    start = time.perf_counter()
    run = run_suite(adapter, tasks, {"read-only": 4}, timeout=0.1, progress=False,
                    backoff=0, **extra)
    elapsed = time.perf_counter() - start
    assert elapsed < 3.0  # the async runs were cancelled, not awaited for 5 s
    assert adapter.calls == 8  # not retried
    for r in run.results:
        if (r.task_id, r.run_index) in slow_pairs:
            assert r.success is False and not r.infrastructure_error
            assert r.error.startswith("TimeoutError") and "0.1" in r.error
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
    from passk.runner import _attempt_seed
    bad = {_attempt_seed(0, t, i, a) for t, i in bad_pairs for a in range(3)}
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
    from passk.runner import _attempt_seed
    bad = {_attempt_seed(0, "a", 0, a) for a in range(2)}  # attempts 0, 1 fail; 2 passes
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
            "infrastructure_error", "cached", "seed", "risk"}


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


def test_log_is_written_as_each_run_ends(tmp_path):
    log = tmp_path / "runs.jsonl"
    seen: list[int] = []

    class Peek:
        def run(self, task, *, seed):
            seen.append(len(log.read_text().splitlines()) - 1)  # less the header
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
# curtailment
# --------------------------------------------------------------------------


@pytest.mark.parametrize("successes,failures,n,blocked,expected", [
    (1, 1, 12, False, True),    # documented: one of each already makes it flaky
    (5, 0, 12, False, False),   # documented: 12/12 and 5/12 both still possible
    (0, 0, 12, False, False),
    (11, 0, 12, False, False),  # 11/12 is flaky, 12/12 is not
    (0, 11, 12, False, False),
    (9, 3, 12, False, True),    # all runs done
    (12, 0, 12, False, True),   # done == n
    (13, 0, 12, False, True),   # done > n
    (0, 0, 0, False, True),
    (2, 2, 12, False, True),
    (11, 0, 12, True, False),   # blocked, but its own verdict can still go either way
    (29, 0, 30, False, False),  # must still run to n: its pass^k feeds the mean
    (29, 0, 30, True, True),    # 29/30 and 30/30 are both not flaky; suite already blocked
    (0, 29, 30, True, True),
    (0, 0, 1, True, True),      # n = 1 can never be flaky
    (0, 0, 1, False, False),
    (1, 1, 12, True, True),
])
def test_task_settled_cases(successes, failures, n, blocked, expected):
    assert task_settled(successes, failures, n, suite_blocked=blocked) is expected


def test_task_settled_cap():
    assert task_settled(1, 1, 12, max_flakiness=1.0) is False  # nothing exceeds a cap of 1
    assert task_settled(1, 1, 12, max_flakiness=1.0, suite_blocked=True) is True
    assert task_settled(3, 3, 12, max_flakiness=0.0) is True
    assert task_settled(6, 0, 12, max_flakiness=0.0) is False  # 12/12 has flakiness 0


def test_task_settled_agrees_with_brute_force():
    """Settled iff every final count gives the same flaky verdict (or, when blocked, no
    final count is flaky)."""
    n, cap = 12, 0.2
    for s in range(n + 1):
        for f in range(n + 1 - s):
            finals = [4 * (c / n) * (1 - c / n) > cap for c in range(s, n - f + 1)]
            if s + f == n:
                want = want_blocked = True
            else:
                want = all(finals)
                want_blocked = all(finals) or not any(finals)
            assert task_settled(s, f, n) is want, (s, f)
            assert task_settled(s, f, n, suite_blocked=True) is want_blocked, (s, f)


def decisions(run: SuiteRun) -> tuple[bool, frozenset[str]]:
    return run.report.gate.passed, frozenset(run.report.gate.flaky_tasks)


def check_curtailed_equals_fixed(adapter, tasks, policy, seed, **kwargs):
    fixed = run_suite(adapter, tasks, policy, seed=seed, progress=False)
    cut = run_suite(adapter, tasks, RepeatPolicy(runs_by_risk=policy, stopping="curtailed"),
                    seed=seed, progress=False, **kwargs)
    assert decisions(cut) == decisions(fixed)
    assert cut.runs_spent <= fixed.runs_spent == cut.runs_fixed
    assert cut.runs_saved == cut.runs_fixed - cut.runs_spent
    # the curtailed runs are the fixed ones (same seeds), just fewer of them
    fixed_out = outcomes(fixed)
    assert all(fixed_out[key] == value for key, value in outcomes(cut).items())
    if cut.runs_spent < cut.runs_fixed:
        assert cut.report.gate.passed is False
        assert any("stopped early" in r for r in cut.report.gate.reasons)
    return fixed, cut


@pytest.mark.parametrize("seed", range(10))
def test_curtailed_demo_same_decisions(seed):
    policy = {"high-risk-write": 12, "read-only": 5}
    fixed, cut = check_curtailed_equals_fixed(OnCallSimulator(), demo_tasks(), policy, seed)
    if "payment-alert" in fixed.report.gate.flaky_tasks:
        assert cut.runs_spent < fixed.runs_spent


def test_curtailed_policy_string_and_docstring_example():
    fixed = run_suite(OnCallSimulator(), demo_tasks(), seed=3, progress=False)
    cut = run_suite(OnCallSimulator(), demo_tasks(), "curtailed", seed=3, progress=False)
    same = run_suite(OnCallSimulator(), demo_tasks(), RepeatPolicy(stopping="curtailed"), seed=3,
                     progress=False)
    assert decisions(cut) == decisions(fixed) == decisions(same)
    assert cut.runs_spent == same.runs_spent < fixed.runs_spent


def test_curtailed_never_cuts_a_passing_suite():
    tasks = p_tasks([1.0] * 6)
    fixed, cut = check_curtailed_equals_fixed(SeedCoin(), tasks, {"read-only": 12}, 0)
    assert cut.runs_spent == cut.runs_fixed == 72
    assert cut.report.gate.passed is True


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


P_VALUES = st.one_of(st.floats(0.97, 1.0), st.floats(0.0, 0.03), st.floats(0.2, 0.8),
                     st.sampled_from([0.0, 1.0, 0.5]))


@pytest.mark.slow
@settings(max_examples=40, deadline=None, derandomize=True)
@given(ps=st.lists(P_VALUES, min_size=1, max_size=10), seed=st.integers(0, 2**32 - 1),
       cap=st.sampled_from([0.2, 0.1, 0.5]))
def test_curtailed_equals_fixed_property(ps, seed, cap):
    tasks = p_tasks(ps)
    fixed = run_suite(SeedCoin(), tasks, {"read-only": 12}, seed=seed, max_flakiness=cap,
                      progress=False)
    cut = run_suite(SeedCoin(), tasks, RepeatPolicy(runs_by_risk={"read-only": 12},
                                                    stopping="curtailed"),
                    seed=seed, max_flakiness=cap, progress=False)
    assert decisions(cut) == decisions(fixed)
    assert cut.runs_spent <= fixed.runs_spent


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


def test_curtailed_with_infrastructure_errors_same_decisions():
    rng = np.random.default_rng(3)
    tasks = random_suite(rng, 12)
    from passk.runner import _attempt_seed
    # runs 0 and 5 of every task never get through: effective n is 10
    bad = {_attempt_seed(0, t.task_id, i, a) for t in tasks for i in (0, 5) for a in range(2)}

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


# --------------------------------------------------------------------------
# load_tasks, load_adapter
# --------------------------------------------------------------------------


def write(tmp_path: Path, text: str, name: str = "tasks.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_load_tasks_good(tmp_path):
    path = write(tmp_path, "\n".join([
        '{"task_id": "payment-alert", "risk": "high-risk-write", "instruction": "handle it",'
        ' "service": "payment-service", "intent": "handle-alert"}',
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
    ('[1, 2]\n', r":1: a task needs a 'task_id'"),
    ('{"task_id": null}\n', r":1: a task needs a 'task_id'"),
    ('{"task_id": "a"}\n{"task_id": "b"}\n{"task_id": "a"}\n',
     r":3: task 'a' already defined on line 1"),
    ('{"task_id": "a", "risk": 3}\n', r":1: 'risk' must be a string"),
    ('\n\n', r"no tasks"),
    ('', r"no tasks"),
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
    import passk.runner as runner

    bars = []
    real = runner.tqdm

    def spy(*args, **kwargs):
        kwargs["disable"] = False
        kwargs["file"] = open("/dev/null", "w")  # noqa: SIM115
        bar = real(*args, **kwargs)
        bars.append(bar)
        return bar

    monkeypatch.setattr(runner, "tqdm", spy)
    run = run_suite(OnCallSimulator(), demo_tasks(), seed=3, progress=True)
    (bar,) = bars
    assert bar.total == 22 and bar.n == 22
    assert bar.postfix == f"failures={sum(not ok for ok in counted(run).values())}"


def test_lazy_exports():
    assert passk.run_suite is run_suite and passk.SuiteRun is SuiteRun
