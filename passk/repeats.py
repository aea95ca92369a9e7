"""Run one task n times (the chapter's ``src/repeat-run.ts``).

Each run gets its own seed, derived from ``(seed, task_id, run_index)`` with
:class:`numpy.random.SeedSequence`, so run *i* gives the same result whether
the runs go one after another or on any :class:`concurrent.futures.Executor`,
and whether or not the other runs happen at all.
"""

from __future__ import annotations

import dataclasses
import time
import zlib
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import Any

import numpy as np

from passk._public import publish
from passk.adapter import HarnessAdapter, InfrastructureError, RunResult, Task
from passk.errors import BadInput

__all__ = ["RepeatRun", "attempt_seed", "repeat_run", "run_once", "run_once_async", "run_seed"]


def run_seed(seed: int, task_id: str, run_index: int) -> int:
    """The seed of run ``run_index`` of ``task_id`` in a suite seeded with ``seed``.

    It is the ``run_index``-th child of ``SeedSequence([seed, crc32(task_id)])``,
    so it does not depend on how many runs there are or in which order they run.

    Examples
    --------
    >>> run_seed(0, "payment-alert", 3) == run_seed(0, "payment-alert", 3)
    True
    >>> run_seed(0, "payment-alert", 3) != run_seed(0, "payment-alert", 4)
    True
    """
    if seed < 0 or run_index < 0:
        raise BadInput(f"seed ({seed}) and run_index ({run_index}) must be non-negative")
    entropy = [int(seed), zlib.crc32(task_id.encode("utf-8"))]
    child = np.random.SeedSequence(entropy, spawn_key=(int(run_index),))
    return int(child.generate_state(1, dtype=np.uint64)[0])


def attempt_seed(seed: int, task_id: str, run_index: int, attempt: int) -> int:
    """The seed of one attempt at a run: the run's own seed first, a derived one on a retry.

    A run retried after an infrastructure error must not replay the same draw,
    yet a resumed suite must retry with the same seeds: attempt ``a > 0`` uses
    ``SeedSequence([run_seed(...), a])``.

    Examples
    --------
    >>> attempt_seed(0, "payment-alert", 3, 0) == run_seed(0, "payment-alert", 3)
    True
    >>> attempt_seed(0, "payment-alert", 3, 1) != run_seed(0, "payment-alert", 3)
    True
    """
    if attempt < 0:
        raise BadInput(f"attempt ({attempt}) must be non-negative")
    base = run_seed(seed, task_id, run_index)
    if attempt == 0:
        return base
    return int(np.random.SeedSequence([base, attempt]).generate_state(1, dtype=np.uint64)[0])


def run_once(adapter: HarnessAdapter, task: Task, run_index: int, seed: int, *,
             timeout: float | None = None) -> RunResult:
    """Run ``task`` once and stamp the result with its task id, index and seed.

    An exception from the adapter becomes a failed run carrying the error;
    :class:`~passk.adapter.InfrastructureError` becomes a run flagged as an
    infrastructure error, which is not counted as an agent failure. This is
    the one run-once path: :func:`repeat_run` and :func:`passk.run.runner.run_suite`
    call it (or :func:`run_once_async`, its twin for ``async def run``), and
    both share the stamping and error rules below.

    Parameters
    ----------
    adapter : HarnessAdapter
    task : Task
    run_index : int
        Written into the result (an adapter cannot know it).
    seed : int
        Passed to the adapter and written into the result.
    timeout : float, optional
        A run that comes back after this many seconds is recorded as a failure
        (``TimeoutError: run exceeded ... s``); a sync call cannot be cancelled.

    Returns
    -------
    RunResult
        ``seconds`` is the adapter's own figure, or the wall clock when the run raised.

    Raises
    ------
    TypeError
        When the adapter returns something other than a RunResult: a bug in the
        adapter on every run, not a failure of the agent.

    Examples
    --------
    >>> from passk.flaky_adapter import OnCallSimulator, demo_tasks
    >>> r = run_once(OnCallSimulator(), demo_tasks()[1], 3, run_seed(0, "read-error-rate", 3))
    >>> r.run_index, r.success, r.error
    (3, True, None)
    """
    started = time.perf_counter()
    try:
        result = adapter.run(task, seed=seed)
    except Exception as exc:  # noqa: BLE001 - an agent that crashes has failed this run
        return _failed(task, run_index, seed, exc, started)
    return _stamped(adapter, result, task, run_index, seed, started, timeout)


async def run_once_async(adapter: Any, task: Task, run_index: int, seed: int, *,
                         timeout: float | None = None) -> RunResult:
    """:func:`run_once` for an adapter with ``async def run``.

    With ``timeout``, the run is cancelled when the limit expires and recorded
    as a failure; a ``TimeoutError`` the adapter raises itself keeps its message.

    Examples
    --------
    >>> import asyncio
    >>> class Echo:
    ...     async def run(self, task, *, seed):
    ...         return RunResult("?", 0, seed % 2 == 0)
    >>> r = asyncio.run(run_once_async(Echo(), Task("t"), 1, 42))
    >>> r.task_id, r.run_index, r.seed, r.success
    ('t', 1, 42, True)
    """
    started = time.perf_counter()
    try:
        if timeout is None:
            result = await adapter.run(task, seed=seed)
        else:
            import asyncio  # only async adapters with a timeout need it

            try:
                async with asyncio.timeout(timeout) as limit:
                    result = await adapter.run(task, seed=seed)
            except TimeoutError:
                if not limit.expired():
                    raise  # the adapter's own TimeoutError: an ordinary agent failure
                return _failed(task, run_index, seed, TimeoutError(f"run exceeded {timeout} s"),
                               started)
    except Exception as exc:  # noqa: BLE001 - as in run_once
        return _failed(task, run_index, seed, exc, started)
    return _stamped(adapter, result, task, run_index, seed, started, None)


def _stamped(adapter: Any, result: Any, task: Task, run_index: int, seed: int, started: float,
             timeout: float | None) -> RunResult:
    """The adapter's result with the run's task id, index and seed; late means failed."""
    if not isinstance(result, RunResult):
        raise TypeError(f"{type(adapter).__name__}.run returned {type(result).__name__}, "
                        "not a RunResult")
    stamped = dataclasses.replace(result, task_id=task.task_id, run_index=run_index, seed=seed)
    if timeout is not None and time.perf_counter() - started > timeout:
        return dataclasses.replace(stamped, success=False,
                                   error=f"TimeoutError: run exceeded {timeout} s")
    return stamped


def _failed(task: Task, run_index: int, seed: int, exc: BaseException,
            started: float) -> RunResult:
    """A run that raised: infrastructure (left out of the counts) or the agent's failure."""
    return RunResult(task.task_id, run_index, False, error=f"{type(exc).__name__}: {exc}",
                     infrastructure_error=isinstance(exc, InfrastructureError), seed=seed,
                     seconds=time.perf_counter() - started)


@dataclass(frozen=True)
class RepeatRun:
    """The n runs of one task.

    Attributes
    ----------
    task : Task
    results : tuple of RunResult
        In run order.
    outcomes : numpy.ndarray of bool
        ``success`` of each counted run (fresh, not an infrastructure error),
        in run order.
    """

    task: Task
    results: tuple[RunResult, ...]

    @property
    def outcomes(self) -> np.ndarray:
        """``success`` of each counted run, in run order."""
        return np.array([r.success for r in self.results if r.counted], dtype=bool)

    @property
    def successes(self) -> int:
        """Counted runs that passed."""
        return int(self.outcomes.sum())

    @property
    def total(self) -> int:
        """Counted runs: the n of the estimators."""
        return int(self.outcomes.size)


def repeat_run(
    adapter: HarnessAdapter,
    task: Task,
    n: int,
    *,
    seed: int = 0,
    executor: Executor | None = None,
    progress: bool = False,
) -> RepeatRun:
    """Run ``task`` ``n`` times.

    Parameters
    ----------
    adapter : HarnessAdapter
        What runs the task.
    task : Task
    n : int
        Number of runs, at least 1.
    seed : int, default 0
        Suite seed; run i gets :func:`run_seed` ``(seed, task.task_id, i)``.
    executor : concurrent.futures.Executor, optional
        Where to run; ``None`` runs them one after another in this thread.
    progress : bool, default False
        Show a ``tqdm.auto`` bar (a widget in Jupyter).

    Returns
    -------
    RepeatRun

    Examples
    --------
    >>> from passk.flaky_adapter import OnCallSimulator, demo_tasks
    >>> runs = repeat_run(OnCallSimulator(), demo_tasks()[1], 5, seed=0)
    >>> runs.successes, runs.total
    (5, 5)
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise BadInput(f"n ({n!r}) must be a whole number of runs, at least 1")
    seeds = [run_seed(seed, task.task_id, i) for i in range(n)]
    from tqdm.auto import tqdm  # imported when a suite runs: it is slow to load

    bar = tqdm(total=n, desc=task.task_id, disable=not progress, leave=False)
    try:
        if executor is None:
            results = []
            for i, s in enumerate(seeds):
                results.append(run_once(adapter, task, i, s))
                bar.update()
        else:
            futures: list[Future[RunResult]] = [
                executor.submit(run_once, adapter, task, i, s) for i, s in enumerate(seeds)
            ]
            for future in futures:
                future.add_done_callback(lambda _: bar.update())
            results = [future.result() for future in futures]
    finally:
        bar.close()
    return RepeatRun(task, tuple(results))


publish(globals())  # the names passk.__all__ takes from here say 'passk' (passk._public)
