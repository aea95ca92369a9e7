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

__all__ = ["RepeatRun", "attempt_seed", "repeat_run", "run_once", "run_once_async", "run_seed",
           "run_seeds", "run_seeds_indexed"]


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


# SeedSequence's mixing (numpy.random.bit_generator, after O'Neill's seed_seq), written out
# over arrays so that many runs' seeds are derived at once: the same constants, the same steps.
_MASK32 = 0xFFFFFFFF
_INIT_A, _MULT_A = 0x43B0D7E5, 0x931E8875
_INIT_B, _MULT_B = 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = 0xCA01F9DD, 0x4973F715
_POOL = 4


def _words(value: int) -> list[int]:
    """An int as SeedSequence takes it: 32-bit words, least significant first (0 is [0])."""
    words = [value & _MASK32]
    value >>= 32
    while value:
        words.append(value & _MASK32)
        value >>= 32
    return words


def _hash_const(calls: int) -> int:
    """SeedSequence's hash constant after ``calls`` hashmix steps."""
    return (_INIT_A * pow(_MULT_A, calls, 2**32)) & _MASK32


def _hashmix(value: np.ndarray, calls: int) -> np.ndarray:
    """The ``calls``-th hashmix of uint32 ``value`` (products wrap at 2**32, as numpy's do)."""
    value = value ^ np.uint32(_hash_const(calls))
    value = value * np.uint32(_hash_const(calls + 1))
    return value ^ (value >> np.uint32(16))


def _mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    result: np.ndarray = np.uint32(_MIX_L) * x - np.uint32(_MIX_R) * y
    mixed: np.ndarray = result ^ (result >> np.uint32(16))
    return mixed


def _task_pools(seed: int, task_ids: list[str]) -> tuple[list[np.ndarray], int]:
    """Each task's pool of ``SeedSequence([seed, crc32(task_id)], spawn_key=(i,))`` before
    its spawn key is mixed in (the same for every ``i`` below 2**32), a uint32 array a pool
    word, and the hashmix steps so far."""
    crc = np.array([zlib.crc32(t.encode("utf-8")) for t in task_ids], dtype=np.uint32)
    head = _words(int(seed))
    head += [-1] + [0] * (_POOL - len(head) - 1)  # -1: the crc; a spawn key pads to the pool
    entropy = [crc if w == -1 else np.full(len(task_ids), w, dtype=np.uint32) for w in head]
    calls = 0
    pool = []
    for i in range(_POOL):
        pool.append(_hashmix(entropy[i], calls))
        calls += 1
    for src in range(_POOL):
        for dst in range(_POOL):
            if src != dst:
                pool[dst] = _mix(pool[dst], _hashmix(pool[src], calls))
                calls += 1
    for word in entropy[_POOL:]:
        for dst in range(_POOL):
            pool[dst] = _mix(pool[dst], _hashmix(word, calls))
            calls += 1
    return pool, calls


def run_seeds(seed: int, task_ids: Any, run_indices: Any) -> np.ndarray:
    """:func:`run_seed` of many runs at once: ``run_seed(seed, task_ids[j], run_indices[j])``.

    The same numbers, derived over arrays: SeedSequence's mixing of each
    task's entropy is done once per distinct task, and the run index (its
    spawn key) is mixed in and the state generated for every run at once.

    Parameters
    ----------
    seed : int
        The suite seed, non-negative.
    task_ids : sequence of str
    run_indices : sequence of int
        Non-negative, as long as ``task_ids``.

    Returns
    -------
    numpy.ndarray of uint64

    Examples
    --------
    >>> seeds = run_seeds(7, ["a", "b", "a"], [0, 5, 2**40])
    >>> seeds.tolist() == [run_seed(7, "a", 0), run_seed(7, "b", 5), run_seed(7, "a", 2**40)]
    True
    """
    if seed < 0:
        raise BadInput(f"seed ({seed}) must be non-negative")
    tasks = list(task_ids)
    if isinstance(run_indices, np.ndarray) and run_indices.dtype.kind in "iu":
        run = run_indices.astype(np.int64, copy=False)  # uint64 beyond 2**63: wraps below 0
        if run_indices.dtype == np.uint64 and run_indices.size and run_indices.max() >= 2**63:
            run = run_indices.astype(object)
    else:
        try:
            run = np.array(run_indices, dtype=np.int64)
        except OverflowError:
            run = np.array(list(map(int, run_indices)), dtype=object)
    if run.ndim != 1 or len(tasks) != run.size:
        raise BadInput(f"task_ids ({len(tasks)}) and run_indices ({run.size}) must be "
                         "as long as each other")
    out = np.zeros(run.size, dtype=np.uint64)
    if not run.size:
        return out
    if run.min() < 0:
        raise BadInput(f"run_index ({run.min()}) must be non-negative")
    of_task = {t: i for i, t in enumerate(dict.fromkeys(tasks))}
    index = np.fromiter(map(of_task.__getitem__, tasks), dtype=np.intp, count=len(tasks))
    return _seeds_of(seed, list(of_task), index, run)


def run_seeds_indexed(seed: int, task_ids: Any, index: np.ndarray, run_indices: np.ndarray
                      ) -> np.ndarray:
    """:func:`run_seeds` of runs given as each one's index into ``task_ids``: the seed of
    run ``run_indices[j]`` of ``task_ids[index[j]]``, the same numbers.

    What a reader that already numbers its tasks passes (the run log's header check):
    each distinct task used is mixed once, and no list of a task id per run is made.

    Parameters
    ----------
    seed : int
        The suite seed, non-negative.
    task_ids : sequence of str
    index : numpy.ndarray of int
        Each run's task, an index into ``task_ids``.
    run_indices : numpy.ndarray of int
        Non-negative, as long as ``index``.

    Returns
    -------
    numpy.ndarray of uint64

    Examples
    --------
    >>> seeds = run_seeds_indexed(7, ["a", "b"], np.array([0, 1, 0]), np.array([0, 5, 9]))
    >>> seeds.tolist() == run_seeds(7, ["a", "b", "a"], [0, 5, 9]).tolist()
    True
    """
    index, run = np.asarray(index), np.asarray(run_indices)
    if seed < 0:
        raise BadInput(f"seed ({seed}) must be non-negative")
    if index.shape != run.shape or index.ndim != 1 or run.dtype.kind not in "iu":
        raise BadInput(f"index ({index.size}) and run_indices ({run.size}) must be as long "
                       "as each other, whole numbers")
    if not run.size:
        return np.zeros(0, dtype=np.uint64)
    if run.dtype == np.uint64 and run.max() >= 2**63:
        run = run.astype(object)
    elif run.min() < 0:
        raise BadInput(f"run_index ({run.min()}) must be non-negative")
    used, at = np.unique(index, return_inverse=True)
    return _seeds_of(seed, [task_ids[i] for i in used.tolist()], at.reshape(-1).astype(np.intp),
                     run.astype(np.int64) if run.dtype != object else run)


def _seeds_of(seed: int, tasks: list[str], index: np.ndarray, run: np.ndarray) -> np.ndarray:
    """The seeds of runs ``run`` (non-negative) of ``tasks[index]``, ``tasks`` distinct."""
    out = np.zeros(run.size, dtype=np.uint64)
    pools, calls = _task_pools(seed, tasks)
    wide = run > _MASK32
    if wide.any():  # a spawn key of two words or more: one at a time
        for j in np.flatnonzero(wide).tolist():
            out[j] = run_seed(seed, tasks[index[j]], int(run[j]))
        small = np.flatnonzero(~wide)
        index, run = index[small], run[small].astype(np.int64)
    word = run.astype(np.uint32)  # below 2**32: one word
    state = [pools[dst][index] for dst in range(_POOL)]
    for dst in range(_POOL):
        state[dst] = _mix(state[dst], _hashmix(word, calls + dst))
    low, high = (_hashmix_b(state[i], i).astype(np.uint64) for i in (0, 1))
    seeds = low | (high << np.uint64(32))
    if not wide.any():
        return seeds
    out[small] = seeds
    return out


def _hashmix_b(value: np.ndarray, i: int) -> np.ndarray:
    """generate_state's ``i``-th word of a pool word (uint32: products wrap as in numpy's)."""
    const = (_INIT_B * pow(_MULT_B, i, 2**32)) & _MASK32
    value = value ^ np.uint32(const)
    value = value * np.uint32((const * _MULT_B) & _MASK32)
    return value ^ (value >> np.uint32(16))


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
