"""Tests for :mod:`passk.adapter` and :mod:`passk.repeats`."""

from __future__ import annotations

import dataclasses
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest

from passk.adapter import HarnessAdapter, InfrastructureError, RunResult, Task, ToolCall
from passk.flaky_adapter import OnCallSimulator, demo_tasks
from passk.repeats import RepeatRun, repeat_run, run_once, run_seed

TASK = Task("t-1", "do the thing", risk="high-risk-write", params={"x": 1})


# --------------------------------------------------------------------------
# adapters used by the tests
# --------------------------------------------------------------------------


class CoinAdapter:
    """Succeeds with probability 1/2 from its seed; sleeps a seed-dependent moment so
    that on a thread pool the runs finish out of order."""

    def run(self, task: Task, *, seed: int) -> RunResult:
        rng = np.random.default_rng(seed)
        time.sleep(float(rng.uniform(0, 0.003)))
        return RunResult(task.task_id, run_index=0, success=bool(rng.random() < 0.5),
                         final_state={"draw": float(rng.random())})


class LiarAdapter:
    """Claims a run index, task id and seed it cannot know."""

    def run(self, task: Task, *, seed: int) -> RunResult:
        return RunResult("someone-else", run_index=99, success=True, seed=-5)


class SometimesRaises:
    """Raises on the seeds it is given; succeeds otherwise."""

    def __init__(self, bad_seeds: set[int], exc: Exception) -> None:
        self.bad_seeds = bad_seeds
        self.exc = exc

    def run(self, task: Task, *, seed: int) -> RunResult:
        if seed in self.bad_seeds:
            raise self.exc
        return RunResult(task.task_id, 0, True)


class CachedAdapter:
    def run(self, task: Task, *, seed: int) -> RunResult:
        return RunResult(task.task_id, 0, True, cached=seed % 2 == 0)


class NotARunResult:
    def run(self, task: Task, *, seed: int):
        return {"success": True}


# --------------------------------------------------------------------------
# Task, ToolCall, RunResult
# --------------------------------------------------------------------------


def test_task_defaults_and_frozen():
    t = Task("a")
    assert (t.task_id, t.instruction, t.risk, t.previously_flaky, dict(t.params)) == (
        "a", "", "read-only", False, {})
    assert Task("b").params is not t.params  # no shared mutable default
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.task_id = "b"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.risk = "high-risk-write"  # type: ignore[misc]


def test_task_params_not_compared_or_hashed():
    a = Task("a", params={"service": "x"})
    b = Task("a", params={"service": "y"})
    assert a == b
    assert hash(a) == hash(b)  # hashable although params is a dict
    assert Task("a") != Task("a", risk="high-risk-write")


def test_toolcall_str_and_frozen():
    call = ToolCall("restart_service", "payment-service", "restarted")
    assert str(call) == "restart_service(payment-service) -> restarted"
    assert ToolCall("escalate").argument == "" and ToolCall("escalate").observation == ""
    with pytest.raises(dataclasses.FrozenInstanceError):
        call.tool = "x"  # type: ignore[misc]


def test_runresult_defaults_frozen_and_counted():
    r = RunResult("a", 0, True)
    assert r.final_state is None and r.trajectory == () and r.seconds == 0.0
    assert r.error is None and r.infrastructure_error is False and r.cached is False
    assert r.seed is None
    assert r.counted
    assert not RunResult("a", 0, False, infrastructure_error=True).counted
    assert not RunResult("a", 0, True, cached=True).counted
    assert not RunResult("a", 0, True, cached=True, infrastructure_error=True).counted
    assert RunResult("a", 0, False, error="ValueError: x").counted  # an agent crash counts
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.success = False  # type: ignore[misc]


def test_harness_adapter_protocol():
    assert isinstance(OnCallSimulator(), HarnessAdapter)
    assert isinstance(CoinAdapter(), HarnessAdapter)
    assert not isinstance(object(), HarnessAdapter)


# --------------------------------------------------------------------------
# run_seed
# --------------------------------------------------------------------------


def test_run_seed_deterministic_and_distinct():
    assert run_seed(0, "a", 3) == run_seed(0, "a", 3)
    seeds = {run_seed(s, t, i) for s in range(3) for t in ("a", "b") for i in range(50)}
    assert len(seeds) == 3 * 2 * 50
    assert all(0 <= s < 2**64 for s in seeds)


@pytest.mark.parametrize("seed,index", [(-1, 0), (0, -1)])
def test_run_seed_rejects_negative(seed, index):
    with pytest.raises(ValueError):
        run_seed(seed, "a", index)


# --------------------------------------------------------------------------
# repeat_run
# --------------------------------------------------------------------------


def test_repeat_run_basics():
    runs = repeat_run(CoinAdapter(), TASK, 20, seed=4)
    assert isinstance(runs, RepeatRun) and runs.task is TASK
    assert [r.run_index for r in runs.results] == list(range(20))
    assert [r.seed for r in runs.results] == [run_seed(4, TASK.task_id, i) for i in range(20)]
    assert all(r.task_id == TASK.task_id for r in runs.results)
    assert runs.outcomes.dtype == bool and runs.outcomes.shape == (20,)
    assert runs.successes == sum(r.success for r in runs.results)
    assert runs.total == 20
    assert 0 < runs.successes < 20  # a fair coin, 20 tosses, this seed


def test_repeat_run_same_on_thread_pool():
    sequential = repeat_run(CoinAdapter(), TASK, 64, seed=11)
    with ThreadPoolExecutor(8) as pool:
        threaded = repeat_run(CoinAdapter(), TASK, 64, seed=11, executor=pool)
    assert threaded.results == sequential.results
    assert np.array_equal(threaded.outcomes, sequential.outcomes)


def test_simulator_same_on_thread_pool():
    sim, task = OnCallSimulator(), demo_tasks()[0]
    sequential = repeat_run(sim, task, 48, seed=2)
    with ThreadPoolExecutor(8) as pool:
        threaded = repeat_run(sim, task, 48, seed=2, executor=pool)
    assert threaded == sequential


@pytest.mark.slow
def test_simulator_same_on_process_pool():
    sim, task = OnCallSimulator(), demo_tasks()[0]
    sequential = repeat_run(sim, task, 48, seed=2)
    context = multiprocessing.get_context("spawn")  # nothing inherited: all must pickle
    with ProcessPoolExecutor(2, mp_context=context) as pool:
        in_processes = repeat_run(sim, task, 48, seed=2, executor=pool)
    assert in_processes == sequential
    assert in_processes.successes == sequential.successes


def test_runner_overwrites_run_index_task_id_and_seed():
    runs = repeat_run(LiarAdapter(), TASK, 5, seed=1)
    assert [r.run_index for r in runs.results] == [0, 1, 2, 3, 4]
    assert {r.task_id for r in runs.results} == {TASK.task_id}
    assert [r.seed for r in runs.results] == [run_seed(1, TASK.task_id, i) for i in range(5)]
    with ThreadPoolExecutor(4) as pool:
        threaded = repeat_run(LiarAdapter(), TASK, 5, seed=1, executor=pool)
    assert threaded.results == runs.results


@pytest.mark.parametrize("use_pool", [False, True])
def test_raising_adapter_gives_failed_runs_and_the_rest_go_on(use_pool):
    n = 10
    seeds = [run_seed(0, TASK.task_id, i) for i in range(n)]
    adapter = SometimesRaises({seeds[2], seeds[7]}, ValueError("boom"))
    if use_pool:
        with ThreadPoolExecutor(4) as pool:
            runs = repeat_run(adapter, TASK, n, executor=pool)
    else:
        runs = repeat_run(adapter, TASK, n)
    assert len(runs.results) == n
    for i, r in enumerate(runs.results):
        if i in (2, 7):
            assert r.success is False
            assert r.error == "ValueError: boom"
            assert r.infrastructure_error is False and r.counted
            assert r.seconds >= 0.0
        else:
            assert r.success is True and r.error is None
        assert r.run_index == i and r.seed == seeds[i]
    assert (runs.successes, runs.total) == (8, 10)  # an agent crash is a counted failure


def test_infrastructure_error_is_flagged_and_not_counted():
    n = 6
    seeds = [run_seed(0, TASK.task_id, i) for i in range(n)]
    adapter = SometimesRaises({seeds[1]}, InfrastructureError("rate limited"))
    runs = repeat_run(adapter, TASK, n)
    bad = runs.results[1]
    assert bad.infrastructure_error is True and bad.success is False
    assert bad.error == "InfrastructureError: rate limited"
    assert not bad.counted
    assert all(r.counted for i, r in enumerate(runs.results) if i != 1)
    # the n of the estimators leaves the harness's failure out
    assert runs.total == 5 and runs.successes == 5
    assert runs.outcomes.tolist() == [True] * 5


def test_cached_results_are_not_counted():
    runs = repeat_run(CachedAdapter(), TASK, 40, seed=3)
    cached = sum(r.cached for r in runs.results)
    assert 0 < cached < 40
    assert runs.total == 40 - cached
    assert runs.successes == 40 - cached


def test_seeds_do_not_depend_on_n():
    short = repeat_run(CoinAdapter(), TASK, 3, seed=9)
    long = repeat_run(CoinAdapter(), TASK, 10, seed=9)
    assert short.results == long.results[:3]
    sim, task = OnCallSimulator(), demo_tasks()[0]
    assert repeat_run(sim, task, 3, seed=9).results == repeat_run(sim, task, 10, seed=9).results[:3]


def test_seeds_differ_across_tasks_and_suite_seeds():
    a = repeat_run(CoinAdapter(), Task("a"), 5, seed=0)
    b = repeat_run(CoinAdapter(), Task("b"), 5, seed=0)
    c = repeat_run(CoinAdapter(), Task("a"), 5, seed=1)
    assert {r.seed for r in a.results}.isdisjoint(r.seed for r in b.results)
    assert {r.seed for r in a.results}.isdisjoint(r.seed for r in c.results)


@pytest.mark.parametrize("n", [0, -1, 2.5, True, False, "3", None])
def test_repeat_run_rejects_bad_n(n):
    with pytest.raises(ValueError, match=r"n \("):
        repeat_run(CoinAdapter(), TASK, n)


def test_repeat_run_accepts_numpy_integer():
    assert repeat_run(CoinAdapter(), TASK, np.int64(3)).total == 3


def test_adapter_returning_wrong_type_is_a_type_error():
    with pytest.raises(TypeError, match=r"NotARunResult.run returned dict"):
        repeat_run(NotARunResult(), TASK, 2)


def test_run_once_stamps_index_and_seed():
    r = run_once(LiarAdapter(), TASK, 7, 1234)
    assert (r.task_id, r.run_index, r.seed) == (TASK.task_id, 7, 1234)


def test_progress_bar_does_not_change_results(capsys):
    quiet = repeat_run(CoinAdapter(), TASK, 5, seed=2)
    loud = repeat_run(CoinAdapter(), TASK, 5, seed=2, progress=True)
    assert quiet.results == loud.results


# --------------------------------------------------------------------------
# the package-level export
# --------------------------------------------------------------------------


def test_the_module_and_the_function_have_different_names():
    """``passk.repeats`` is the module, ``passk.repeat_run`` the function, whatever is
    imported first (the module used to share the function's name and shadow it)."""
    import passk
    import passk.repeats as module
    import passk.stability

    assert module.run_seed is run_seed and module.repeat_run is repeat_run
    assert passk.repeat_run is repeat_run and passk.repeats is module


@pytest.mark.slow
@pytest.mark.parametrize("first_import", [
    "import passk",
    "import passk.repeats as m; assert m.run_seed",
    "from passk.repeats import run_seed",
    "import passk.stability",
    "from passk import RepeatRun",
])
def test_package_export_in_a_fresh_interpreter(first_import):
    """Whatever is imported first, ``from passk import repeat_run`` is the function."""
    import subprocess
    import sys

    code = (f"{first_import}\n"
            "from passk import repeat_run\n"
            "import passk\n"
            "assert callable(repeat_run) and passk.repeat_run is repeat_run, repeat_run\n"
            "import passk.repeats as m\n"
            "assert m.repeat_run is repeat_run and m.__name__ == 'passk.repeats'\n"
            "assert repeat_run.__module__ == 'passk'\n")  # the path users import it from
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
