"""Adapters and suites shared by the runner tests, the kill target and the benchmark.

Importable as ``runner_helpers`` once ``tests/helpers`` is on ``sys.path`` (the
test modules and ``kill_target.py`` put it there). Everything here is defined at
module level, so it pickles by reference (process pools, Dask workers).

Not the chapter's simulator: these are stand-ins for a real agent whose
success is a deterministic function of the run's seed (and the task's ``p``).
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from passk.adapter import InfrastructureError, RunResult, Task
from passk.flaky_adapter import OnCallSimulator
from passk.metrics import flakiness
from passk.repeats import run_seed


def coin(seed: int, p: float) -> bool:
    """The outcome of a run with this seed of a task that passes with probability p."""
    return bool(np.random.default_rng(seed).random() < p)


def p_tasks(ps, *, prefix: str = "t", risk: str = "read-only") -> list[Task]:
    """One task per p, with p in its params."""
    return [Task(f"{prefix}{i:03d}", risk=risk, params={"p": float(p)}) for i, p in enumerate(ps)]


@dataclass(frozen=True)
class SeedCoin:
    """Succeeds iff ``default_rng(seed).random() < task.params['p']`` (default 0.5).

    ``sleep`` seconds per run (a seed-dependent fraction of it when ``jitter``,
    so that on a pool runs finish out of order).
    """

    sleep: float = 0.0
    jitter: bool = False

    def run(self, task: Task, *, seed: int) -> RunResult:
        if self.sleep:
            f = float(np.random.default_rng([seed, 1]).random()) if self.jitter else 1.0
            time.sleep(self.sleep * (0.5 + f) if self.jitter else self.sleep)
        return RunResult(task.task_id, 0, coin(seed, task.params.get("p", 0.5)))


@dataclass(frozen=True)
class AsyncSeedCoin:
    """:class:`SeedCoin` with ``async def run`` (awaits instead of sleeping)."""

    sleep: float = 0.0
    jitter: bool = False

    async def run(self, task: Task, *, seed: int) -> RunResult:
        if self.sleep:
            f = float(np.random.default_rng([seed, 1]).random()) if self.jitter else 1.0
            await asyncio.sleep(self.sleep * (0.5 + f) if self.jitter else self.sleep)
        return RunResult(task.task_id, 0, coin(seed, task.params.get("p", 0.5)))


@dataclass(frozen=True)
class AsyncTaskSleep:
    """:class:`AsyncSeedCoin` whose await is the task's own ``params['sleep']`` seconds,
    so that some tasks' runs end before others' start (a scheduled order, not a race).

    A run whose seed is the task's ``params['interrupt_seed']`` raises KeyboardInterrupt
    as it starts (Ctrl-C at a chosen point; the runs in flight still end and are logged).
    """

    async def run(self, task: Task, *, seed: int) -> RunResult:
        if seed == task.params.get("interrupt_seed"):
            raise KeyboardInterrupt
        await asyncio.sleep(float(task.params.get("sleep", 0.0)))
        return RunResult(task.task_id, 0, coin(seed, task.params.get("p", 0.5)))


@dataclass(frozen=True)
class AsyncSimulator:
    """The chapter's simulator behind ``async def run``, with a seed-dependent await."""

    inner: OnCallSimulator = field(default_factory=OnCallSimulator)
    max_sleep: float = 0.002

    async def run(self, task: Task, *, seed: int) -> RunResult:
        await asyncio.sleep(float(np.random.default_rng([seed, 2]).random()) * self.max_sleep)
        return self.inner.run(task, seed=seed)


class Counting:
    """Wraps an adapter and counts calls (thread-safe) and records the seeds it saw."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.calls = 0
        self.seeds: list[int] = []
        self._lock = threading.Lock()

    def run(self, task: Task, *, seed: int) -> RunResult:
        with self._lock:
            self.calls += 1
            self.seeds.append(seed)
        return self.inner.run(task, seed=seed)


class NoOp:
    def run(self, task: Task, *, seed: int) -> RunResult:
        return RunResult(task.task_id, 0, True)


class AsyncNoOp:
    async def run(self, task: Task, *, seed: int) -> RunResult:
        return RunResult(task.task_id, 0, True)


@dataclass(frozen=True)
class CrashTarget:
    """The adapter the kill-and-resume trials run: a seed coin that takes a few
    milliseconds, and whose first attempt of some runs (seed % 5 == 0) is an
    infrastructure error, so that the log also holds retries when it is killed."""

    sleep: float = 0.004

    def run(self, task: Task, *, seed: int) -> RunResult:
        f = float(np.random.default_rng([seed, 3]).random())
        time.sleep(self.sleep * (0.5 + f))
        if seed % 5 == 0 and seed in _first_attempt_seeds(task.task_id):
            raise InfrastructureError("sandbox died")
        return RunResult(task.task_id, 0, coin(seed, task.params.get("p", 0.5)))


_SUITE_SEED = 7  # the kill-and-resume suite seed
_FIRST: dict[str, frozenset[int]] = {}


def _first_attempt_seeds(task_id: str, n: int = 64) -> frozenset[int]:
    if task_id not in _FIRST:
        _FIRST[task_id] = frozenset(run_seed(_SUITE_SEED, task_id, i) for i in range(n))
    return _FIRST[task_id]


def crash_suite(tasks: int = 40) -> list[Task]:
    rng = np.random.default_rng(12345)
    return p_tasks(rng.choice([0.0, 0.3, 0.7, 1.0], size=tasks), prefix="crash-")


CRASH_SEED = _SUITE_SEED
CRASH_RUNS = 6  # runs per task in the crash suite


# --- what ``load_adapter`` resolves -------------------------------------------------

ADAPTER_OBJECT = SeedCoin()


def make_adapter() -> SeedCoin:
    return SeedCoin(sleep=0.0)


def make_nothing() -> object:
    return object()


class Holder:
    adapter = SeedCoin()


NOT_AN_ADAPTER = 42


# --- curtailment's property tests: outcomes scripted per (task, run, attempt) ------------

#: What one attempt can give: a pass, a failure, an infrastructure error, a cached result.
PASS, FAIL, INFRA, CACHED = "S", "F", "X", "C"


def scripted_outcomes(rng: np.random.Generator, n: int, attempts: int, *, p: float, q: float,
                      cached: float) -> list[list[str]]:
    """``[run][attempt]`` outcomes of one task: infrastructure error with probability q,
    else cached with probability ``cached``, else a pass with probability p."""
    u = rng.random((n, attempts, 3))
    return [[INFRA if a[0] < q else CACHED if a[1] < cached else PASS if a[2] < p else FAIL
             for a in run] for run in u]


def final_outcome(attempts: list[str], max_retries: int) -> str:
    """What fixed-n repetition keeps for a run: its first attempt that is not an
    infrastructure error, within ``max_retries`` retries; else the run is left out."""
    for outcome in attempts[:max_retries + 1]:
        if outcome != INFRA:
            return outcome
    return INFRA


def scripted_result(task: Task, run_index: int, outcome: str) -> RunResult:
    """The RunResult an adapter gives for a scripted outcome (infrastructure errors are
    results flagged as such, as :func:`passk.repeats.run_once` makes them)."""
    return RunResult(task.task_id, run_index, outcome == PASS, infrastructure_error=outcome == INFRA,
                     cached=outcome == CACHED, error="InfrastructureError: down"
                     if outcome == INFRA else None)


class Scripted:
    """Instant and pure: attempt ``a`` of run ``i`` of a task gives
    ``script[task_id][i][a]``, found from the attempt's seed (``seeds`` maps it back)."""

    def __init__(self, script: dict[str, list[list[str]]], seeds: dict[int, tuple[str, int, int]]):
        self.script, self.seeds = script, seeds

    def outcome(self, seed: int) -> tuple[str, int, str]:
        task_id, run_index, attempt = self.seeds[seed]
        return task_id, run_index, self.script[task_id][run_index][attempt]

    def run(self, task: Task, *, seed: int) -> RunResult:
        _, _, outcome = self.outcome(seed)
        if outcome == INFRA:
            raise InfrastructureError("down")
        return RunResult(task.task_id, 0, outcome == PASS, cached=outcome == CACHED)


class AsyncScripted(Scripted):
    """:class:`Scripted` with ``async def run``: yields to the event loop a seed-dependent
    number of times (0-3), so runs end out of order without any sleeping."""

    async def run(self, task: Task, *, seed: int) -> RunResult:  # type: ignore[override]
        for _ in range(seed % 4):
            await asyncio.sleep(0)
        return Scripted.run(self, task, seed=seed)


#: Caps for the random suites: near 0 and 1, and equal to flakiness values themselves
#: (1 of 3, as computed; 0.96 is 2 of 5), where "exceeds" must stay strict.
CAPS = [0.0, 0.1, 0.2, 0.2, 0.3, 0.5, 0.64, 0.75, float(flakiness(1, 3)), 0.89, 0.96, 0.99,
        1.0]


def random_case(rng: np.random.Generator) -> dict:
    """A random suite: tiers, k, cap, bar, min_runs, retries, and each task's scripted
    attempts (passes, failures, infrastructure errors, cached results)."""
    tiers = {"high-risk-write": int(rng.choice([1, 2, 3, 4, 5, 8, 12])),
             "read-only": int(rng.choice([1, 2, 3, 5, 12]))}
    max_retries = int(rng.integers(0, 3))
    tasks, script = [], {}
    for i in range(int(rng.integers(1, 6))):
        task = Task(f"t{i}", risk=str(rng.choice(list(tiers))))
        p = float(rng.choice([0.0, 1.0, 1.0, 0.5, 0.1, 0.9, 0.97, rng.random()]))
        q = float(rng.choice([0.0, 0.0, 0.1, 0.3, 0.6]))
        cached = float(rng.choice([0.0, 0.0, 0.0, 0.1]))
        script[task.task_id] = scripted_outcomes(rng, tiers[task.risk], max_retries + 1, p=p, q=q,
                                                 cached=cached)
        tasks.append(task)
    return {
        "tasks": tasks, "tiers": tiers, "script": script, "max_retries": max_retries,
        "k": int(rng.integers(1, 7)),
        "cap": float(rng.choice(CAPS)),
        "bar": float(rng.choice([0.0, 0.3, 0.5, 0.7, 0.7, 0.9, 1.0, rng.random()])),
        "min_runs": int(rng.choice([0, 0, 0, 0, 2, 6])),
    }


def fixed_n_counts(case: dict) -> list[tuple[int, int]]:
    """(passes, counted runs) per task under fixed n, from the script alone."""
    out = []
    for task in case["tasks"]:
        finals = [final_outcome(run, case["max_retries"]) for run in case["script"][task.task_id]]
        out.append((finals.count(PASS), finals.count(PASS) + finals.count(FAIL)))
    return out
