"""Run a whole suite at scale: concurrent or async repeats, a crash-safe log, resume,
infrastructure errors kept apart, and curtailed repetition.

:func:`run_suite` is :func:`passk.stability.evaluate_suite` for real agents. It
runs sync adapters on any :class:`concurrent.futures.Executor` (threads,
processes, a Dask cluster through ``client.get_executor(pure=False)``) and
async adapters (``async def run``) on an event loop, with the same per-run
seeds either way, so the outcomes do not depend on how the runs were spread.

Every finished run is logged as one JSON line in the format ``passk report``
reads, written and committed to disk in groups (one write and one fsync at most
every 20 ms or 1,000 records, see ``_Log``; a crash loses at most the last
group's runs, which resume redoes). ``resume=True`` reads the
log, ignores a torn last line, and runs only the missing (task, run) pairs
with their original seeds: an interrupted-then-resumed suite ends with exactly
the outcomes of an uninterrupted one.

Which run to make next, and when to stop, is the one scheduler's,
:class:`passk.run.schedule.Schedule`, which the pytest plugin and Inspect AI's early
stopping drive too. Curtailed repetition (``RepeatPolicy(stopping="curtailed")`` or
``policy="curtailed"``) stops a task as soon as no outcome of its remaining runs could
change what the gate decides about it (the settle rule,
:func:`~passk.gate.curtailment.task_settled`); early stopping (``stop_early=LOOKS``) stops
the whole suite at a planned look once passk's proved interval on mean pass^k decides
(:func:`~passk.stats.sequential.sequential_decision`). Either way the verdict is
:func:`passk.gate.judge.judge`'s on the runs made.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import inspect
import json
import os
import queue
import sys
import threading
import time
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from passk.adapter import HarnessAdapter, RunResult, Task
from passk.errors import BadInput
from passk.gate.bind import InForce
from passk.gate.curtailment import (
    SUITE_OUTLOOKS,
    GateSettings,
    TaskOutlook,
    suite_outlook,
    task_outlook,
    task_settled,
)
from passk.gate.judge import judge_suite
from passk.render.words import plural
from passk.repeats import attempt_seed, run_once, run_once_async, run_seeds
from passk.results.counts import CURTAILED_UNREPLAYED, Results
from passk.results.protocol import Protocol, require_same_protocol
from passk.results.read import ResultsError, read_log_header, read_run_log
from passk.results.runlog import (
    RunRecord,
    is_settled,
    iter_run_log,
    settled_line,
    trajectory_field,
)
from passk.run.schedule import Schedule, Stopping
from passk.stability import (
    DEFAULT_CRITERIA,
    GateResult,
    RepeatPolicy,
    SuiteReport,
    suite_protocol,
)
from passk.stats.sequential import LookDecision

__all__ = ["SUITE_OUTLOOKS", "GateSettings", "LogRecord", "Schedule", "Stopping", "SuiteRun",
           "TaskOutlook", "load_adapter", "load_tasks", "read_log", "read_log_header",
           "results_of_curtailed_log", "results_of_replayed_log", "run_suite", "suite_outlook",
           "suite_protocol", "task_outlook", "task_settled"]


# --------------------------------------------------------------------------
# the log
# --------------------------------------------------------------------------


#: One line of the run log: the one record every writer writes (passk.results.runlog).
LogRecord = RunRecord


def read_log(path: str | os.PathLike[str], *, repair: bool = False) -> list[LogRecord]:
    """Read a run log, tolerating a torn last line (a run killed mid-write).

    With ``repair=True`` the torn tail is cut off the file, so that appending
    starts on a fresh line. A bad line anywhere else is an error naming it.
    The parsing is :func:`passk.results.read.read_run_log`'s, the one reader of run logs.
    """
    return list(_log_records(path, repair=repair))


def _log_records(path: str | os.PathLike[str], *, repair: bool = False
                 ) -> Iterator[LogRecord]:
    """:func:`read_log`'s records one at a time (a resumed suite replays them as they are
    read, without holding the log): the same records, the same errors."""
    if not Path(path).exists():
        return
    records = iter_run_log(path, torn_tail=True, repair=repair)
    while True:
        try:
            number, fields = next(records)
        except StopIteration:
            return
        except ResultsError as exc:
            raise BadInput(f"{path}:{exc.where}: not a run-log record ({exc.message})") from None
        # a curtailed run's note on a settled task, not a run (a run has "success")
        if (type(fields) is not dict or "success" not in fields) and is_settled(fields):
            continue
        try:
            record = LogRecord(**fields)
        except TypeError as exc:
            raise BadInput(f"{path}:{number}: not a run-log record ({exc})") from None
        yield record


class _Log:
    """The run log's writer: records written and committed to disk in groups.

    Each record joins the group being gathered as its run ends; a committer
    thread writes the group in one call and fsyncs it at most
    :attr:`COMMIT_SECONDS` after the group's first record, and the writer does it
    inline once :attr:`COMMIT_RECORDS` records are waiting. So a crash, of the
    process (SIGKILL) or of the machine, loses at most the runs of the last group
    (those that ended in the last 20 ms, at most 1,000 records): the log on disk
    is always the records in the order they were made, up to some point (a torn
    last line is cut off on resume, :func:`read_log` with ``repair=True``), and
    resume redoes the lost runs with their own seeds, none counted twice. Closing
    (also on Ctrl-C) commits what is left.
    """

    #: At most this long between a record's end of run and its write and fsync.
    COMMIT_SECONDS = 0.02
    #: At most this many records waiting to be written.
    COMMIT_RECORDS = 1000

    def __init__(self, path: str | os.PathLike[str] | None, header: dict[str, Any] | None = None):
        # open for the whole run (closed by close()): a context manager cannot span it
        self._file: TextIO | None = (open(path, "a", encoding="utf-8")  # noqa: SIM115
                                     if path else None)
        self._lock = threading.Lock()  # the group being gathered
        self._disk = threading.Lock()  # one group written and fsync'ed at a time, in order
        self._dirty = threading.Event()
        self._closed = threading.Event()
        self._closing = False
        self._group: list[str] = []
        self._committer: threading.Thread | None = None
        if self._file is None:
            return
        if header is not None and self._file.tell() == 0:
            self._file.write(json.dumps(header, separators=(",", ":")) + "\n")
            self._file.flush()
            os.fsync(self._file.fileno())
        self._committer = threading.Thread(target=self._commit_loop, name="passk-log-commit",
                                           daemon=True)
        self._committer.start()

    def write(self, record: LogRecord) -> None:
        if self._file is not None:
            self._write(record.to_json())

    def _write(self, line: str) -> None:
        with self._lock:
            self._group.append(line)
            full = len(self._group) >= self.COMMIT_RECORDS
            first = len(self._group) == 1
        if full:
            self._commit()
        elif first:
            self._dirty.set()

    def _commit(self) -> None:
        """Write the group gathered so far in one call, and fsync it."""
        assert self._file is not None  # noqa: S101  # committed only while open
        with self._disk:
            with self._lock:
                group, self._group = self._group, []
            if group:
                self._file.write("\n".join(group) + "\n")
                self._file.flush()
                os.fsync(self._file.fileno())

    def _commit_loop(self) -> None:
        while not self._closing:
            self._dirty.wait()
            if self._closing:
                return  # close() commits the rest
            self._closed.wait(self.COMMIT_SECONDS)  # gather the group (close() ends the wait)
            self._dirty.clear()  # a group started after this sets it again
            self._commit()

    def settled(self, schedule: Schedule) -> None:
        """A line per task the curtailed run stopped early, its planned runs not all made."""
        if self._file is not None:
            for task_id in schedule.settled_early():
                s = schedule.states[task_id]
                self._write(settled_line(task_id, s.risk, len(s.final), s.n))

    def close(self) -> None:
        if self._file is None:
            return
        self._closing = True
        self._closed.set()
        self._dirty.set()
        if self._committer is not None:
            self._committer.join()
        self._commit()
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        self._file = None


# --------------------------------------------------------------------------
# one run, sync or async, with infrastructure-error retries
# --------------------------------------------------------------------------


def _run_sync(adapter: HarnessAdapter, task: Task, run_index: int, seed: int,
              timeout: float | None = None, delay: float = 0.0) -> RunResult:
    """:func:`passk.repeats.run_once` after a retry's backoff, slept by the worker so
    that the others keep going."""
    if delay:
        time.sleep(delay)
    started = time.perf_counter()
    return _clocked(run_once(adapter, task, run_index, seed, timeout=timeout), started)


async def _run_async(adapter: Any, task: Task, run_index: int, seed: int,
                     timeout: float | None) -> RunResult:
    """:func:`passk.repeats.run_once_async`, clocked like :func:`_run_sync`."""
    started = time.perf_counter()
    return _clocked(await run_once_async(adapter, task, run_index, seed, timeout=timeout),
                    started)


def _clocked(result: RunResult, started: float) -> RunResult:
    """The log's ``seconds``: the adapter's own figure, else the wall clock."""
    if result.seconds:
        return result
    clocked = copy.copy(result)  # dataclasses.replace without re-checking the other fields
    object.__setattr__(clocked, "seconds", time.perf_counter() - started)
    return clocked


# --------------------------------------------------------------------------
# the result
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class SuiteRun:
    """What :func:`run_suite` did and what it found.

    Attributes
    ----------
    report : SuiteReport
        Scored on the counted runs (fresh, not infrastructure errors).
    results : sequence of RunResult
        Every final attempt of every run, this session's and the log's, by task id then
        run index: a tuple, or for a resumed suite a sequence equal to that tuple whose
        replayed runs are made from compact columns as they are reached.
    runs_spent : int
        Counted runs the decisions rest on.
    runs_fixed : int
        What fixed-n repetition would have spent.
    retries, cached, infrastructure_errors : dict[str, int]
        Per task.
    effective_n : dict[str, int]
        Counted runs per task (the ``runs`` of its row in the report).
    protocol : Protocol or None
        The settings the suite was run under, ``stopping`` as applied.
    settled_early : dict[str, int]
        Tasks curtailment stopped before all their planned runs had ended,
        with the runs they were planned; their rows show the runs made, and
        the gate's verdict on them is the one every completion gives.
    stopped : LookDecision or None
        The look at which early stopping (``stop_early``) stopped the suite.
    """

    report: SuiteReport
    results: Sequence[RunResult]
    runs_spent: int
    runs_fixed: int
    retries: Mapping[str, int]
    cached: Mapping[str, int]
    infrastructure_errors: Mapping[str, int]
    effective_n: Mapping[str, int]
    protocol: Protocol | None = None
    settled_early: Mapping[str, int] = field(default_factory=dict)
    stopped: LookDecision | None = None

    @property
    def gate(self) -> GateResult:
        """The judge's verdict on the runs (the report's ``gate``)."""
        gate = self.report.gate
        if gate is None:  # run_suite always judges
            raise BadInput("this SuiteRun was not judged: it comes from run_suite")
        return gate

    @property
    def runs_saved(self) -> int:
        """Runs curtailment or early stopping did not start (cached and given-up runs were
        started)."""
        left_out = sum(self.cached.values()) + sum(self.infrastructure_errors.values())
        return self.runs_fixed - self.runs_spent - left_out


def _as_policy(policy: RepeatPolicy | Mapping[str, int] | str | None) -> RepeatPolicy:
    if policy is None:
        return RepeatPolicy()
    if isinstance(policy, RepeatPolicy):
        return policy
    if isinstance(policy, str):
        return RepeatPolicy(stopping=policy)
    return RepeatPolicy(runs_by_risk=dict(policy))


def run_suite(
    adapter: HarnessAdapter,
    tasks: Sequence[Task],
    policy: RepeatPolicy | Mapping[str, int] | str | None = None,
    *,
    k: int = 5,
    seed: int = 0,
    executor: Executor | None = None,
    max_concurrency: int | None = None,
    log: str | os.PathLike[str] | None = None,
    resume: bool = False,
    progress: bool = True,
    timeout: float | None = None,
    max_retries: int = 3,
    backoff: float = 0.5,
    min_overall_pass_hat_k: float = DEFAULT_CRITERIA.min_overall_pass_hat_k,
    max_flakiness: float = DEFAULT_CRITERIA.max_flakiness,
    min_runs: int = 0,
    gate_on: str = DEFAULT_CRITERIA.on,
    confidence: float = 0.95,
    stop_early: int | None = None,
    in_force: InForce | None = None,
    trajectories: bool = True,
) -> SuiteRun:
    """Run every task of a suite as its repeat policy says, logging each run as it ends.

    Parameters
    ----------
    adapter : HarnessAdapter
        Sync (``def run``) or async (``async def run``).
    tasks : sequence of Task
    policy : RepeatPolicy, Mapping[str, int], {'fixed', 'curtailed'} or None
        Runs per risk label, and whether to stop a task once its verdict is settled.
    k : int, default 5
    seed : int, default 0
        Suite seed; run i of task t gets ``run_seed(seed, t, i)`` whatever the executor.
    executor : concurrent.futures.Executor, optional
        For sync adapters. ``None`` makes a thread pool of ``max_concurrency``
        threads, or runs in this thread when that is also ``None``.
    max_concurrency : int, optional
        Runs in flight at once (async adapters: default 64).
    log : path, optional
        The JSON Lines run log (written and fsync'ed in groups, at most 20 ms after a run
        ends; a crash loses at most the last group's runs, which ``resume`` redoes).
    resume : bool, default False
        Read ``log`` first and run only what it lacks.
    progress : bool, default True
        One tqdm bar for the suite; quiet when not attached to a terminal.
    timeout : float, optional
        Per-run limit in seconds (async adapters: the run is cancelled; sync
        adapters: the run is recorded as a failure when it comes back late).
    max_retries : int, default 3
        Retries of a run that ended in an infrastructure error.
    backoff : float, default 0.5
        Seconds before the first retry, doubling each time.
    min_overall_pass_hat_k, max_flakiness : float
        The gate's bar and cap.
    min_runs : int, default 0
        The gate fails a task with fewer counted runs (recorded in the
        protocol when not 0).
    gate_on : {'estimate', 'lower-bound'}, default 'estimate'
        What the gate's mean is of: each task's pass^k estimate, or its exact
        one-sided lower bound at ``confidence``. Curtailment serves this gate,
        and the protocol records it.
    confidence : float, default 0.95
        The lower bounds' confidence, and the early-stopping rule's.
    stop_early : int, optional
        Stop the whole suite early, at this many planned looks (at least 2; see
        :class:`passk.run.schedule.Schedule`): the runs are made in stages, and after
        each stage but the last the suite stops when passk's proved interval on mean
        pass^k at level :math:`1 - (1 - c)/L` (c the confidence) clears the bar or lies below
        it (:func:`passk.stats.sequential.sequential_decision`). A wrong stop with a
        pass happens with probability at most :math:`(1 - c)/2`. Not
        with curtailment. The protocol records it.
    in_force : InForce, optional
        The criteria bound by :func:`passk.gate.bind.bind` (the options, the
        repository's policy): they replace ``k``, the bar, the cap, ``gate_on``,
        ``confidence`` and ``min_runs``, and the verdict line names the policy
        and every bound choice.
    trajectories : bool, default True
        Write each run's tool calls (``RunResult.trajectory``) into its log record's
        ``trajectory`` field, so that ``passk attribute LOG`` can find where passing
        and failing runs part; the counts' readers skip the field.

    Returns
    -------
    SuiteRun

    Notes
    -----
    Curtailed repetition decides exactly as fixed n. Run i of a task has one
    outcome whoever runs it (its seed is fixed), so the runs a curtailed
    suite makes are some of the fixed-n runs. A task stops only when
    :func:`task_settled` holds: every completion of its remaining runs (each
    a pass, a failure, or left out as an infrastructure error) leaves its
    flaky verdict unchanged, and either its term in the gate's mean is fixed
    or the verdict on the whole suite is the same under every completion of
    every task (:func:`suite_outlook`). The gate then gives fixed-n's
    verdict and flaky tasks on the runs made.

    Examples
    --------
    >>> from passk import OnCallSimulator, demo_tasks
    >>> fixed = run_suite(OnCallSimulator(), demo_tasks(), seed=3, progress=False)
    >>> cut = run_suite(OnCallSimulator(), demo_tasks(), "curtailed", seed=3, progress=False)
    >>> fixed.report.gate.passed == cut.report.gate.passed, cut.runs_spent < fixed.runs_spent
    (True, True)
    """
    policy = _as_policy(policy)
    if policy.stopping not in ("fixed", "curtailed"):
        raise BadInput(f"stopping ({policy.stopping!r}) must be 'fixed' or 'curtailed'")
    if resume and log is None:
        raise BadInput("resume=True needs the log to resume from")
    if max_concurrency is not None and max_concurrency < 1:
        raise BadInput(f"max_concurrency ({max_concurrency}) must be at least 1")
    if isinstance(min_runs, bool) or not isinstance(min_runs, int) or min_runs < 0:
        raise BadInput(f"min_runs ({min_runs!r}) must be a whole number >= 0")
    if stop_early is not None and (isinstance(stop_early, bool)
                                   or not isinstance(stop_early, int) or stop_early < 2):
        raise BadInput(f"stop_early ({stop_early!r}) must be a number of looks >= 2 (the "
                         "last after every run), or None")
    if in_force is not None:  # the one binding's criteria, whole, not the keywords'
        _refuse_keywords_looser(in_force, {
            "k": k, "bar": min_overall_pass_hat_k, "cap": max_flakiness, "on": gate_on,
            "confidence": confidence, "min_runs": min_runs})
        _refuse_plan_short_of_policy(in_force, tasks, policy)
        c = in_force.criteria
        k = in_force.k if in_force.k is not None else k
        min_overall_pass_hat_k, max_flakiness, gate_on = (c.min_overall_pass_hat_k,
                                                          c.max_flakiness, c.on)
        confidence, min_runs = c.confidence, c.min_runs
        gate = dataclasses.replace(c, k=k)
    else:
        gate = GateSettings(k, min_overall_pass_hat_k, max_flakiness, gate_on, confidence,
                            min_runs)
    stopping = Stopping(curtailed=policy.stopping == "curtailed", looks=stop_early or 0)
    by_id = {t.task_id: t for t in tasks}
    if len(by_id) != len(tasks):
        raise BadInput("task ids must be unique within a suite")
    if stopping.looks and not 0 < min_overall_pass_hat_k < 1:
        raise BadInput(f"stop_early needs a bar strictly between 0 and 1, not "
                         f"{min_overall_pass_hat_k!r}")
    schedule = Schedule({t.task_id: policy.runs_for(t) for t in tasks}, gate, stopping=stopping,
                        risks={t.task_id: t.risk for t in tasks}, max_retries=max_retries)
    protocol = suite_protocol(adapter, tasks, policy, k=k, max_retries=max_retries,
                              timeout=timeout, min_overall_pass_hat_k=min_overall_pass_hat_k,
                              max_flakiness=max_flakiness, gate_on=gate_on,
                              confidence=confidence)
    extra: dict[str, Any] = {}
    if min_runs:
        extra["min_runs"] = min_runs
    if stopping.looks:
        extra["stop_early"] = {"looks": stopping.looks,
                               "rule": "passk.stats.sequential.sequential_decision"}
    if extra:
        protocol = Protocol({**protocol.settings, **extra})
    header = {"protocol": protocol.to_dict(), "seed": seed}
    if resume and log is not None and (found := read_log_header(log)) is not None:
        require_same_protocol(Protocol.from_dict(found["protocol"]), protocol)
        if found.get("seed") != seed:
            raise BadInput(f"the log was written with seed {found.get('seed')}, not {seed}: "
                             "resuming would mix two sets of runs")
    elif log is not None and not resume and Path(log).exists() and Path(log).stat().st_size:
        raise BadInput(f"{log} already holds runs: pass resume=True (--resume) to continue "
                         "it, or choose a new log")
    finished = _Finished()
    if resume and log is not None:  # streamed, and kept as columns
        _replay(schedule, _log_records(log, repair=True), finished)
    is_async = inspect.iscoroutinefunction(getattr(adapter, "run", None))
    total = sum(s.n for s in schedule.states.values())
    from tqdm.auto import tqdm  # imported when a suite runs: it is slow to load

    bar = tqdm(total=total, desc="runs", unit="run", disable=not progress or None,
               initial=len(finished), dynamic_ncols=True)
    failures = finished.failures()
    out = _Log(log, header)

    def on_result(task: Task, result: RunResult, attempt: int) -> None:
        nonlocal failures
        out.write(LogRecord(result.task_id, result.run_index, bool(result.success), attempt,
                            round(float(result.seconds), 6), result.error,
                            result.infrastructure_error, result.cached, result.seed,
                            task.risk,
                            trajectory_field(result.trajectory) if trajectories else None))
        if schedule.record(task.task_id, result.run_index, _outcome(result), attempt):
            finished[(result.task_id, result.run_index)] = result
            failures += int(result.counted and not result.success)
            bar.update()
            if not bar.disable:
                bar.set_postfix(failures=failures, refresh=False)

    limit = max_concurrency or (64 if is_async else 1)
    try:
        if is_async:
            if asyncio.run(_drive_async(adapter, schedule, by_id, seed, limit, timeout, backoff,
                                        on_result)):
                raise KeyboardInterrupt  # noqa: TRY301  # handled below, as a real Ctrl-C is
        else:
            own = executor is None and max_concurrency is not None
            pool = ThreadPoolExecutor(max_concurrency) if own else executor
            try:
                _drive_sync(adapter, schedule, by_id, seed, pool, limit if pool is None else
                            (max_concurrency or 10**9), timeout, backoff, on_result)
            finally:
                if own and pool is not None:
                    pool.shutdown(wait=False, cancel_futures=True)
        out.settled(schedule)  # the log is its whole protocol, settled tasks included
    except KeyboardInterrupt:
        bar.close()
        where = f" in {log}" if log else ""
        print(f"\ninterrupted: {plural(len(finished), 'run', zero='no')} recorded{where}; "  # noqa: T201  # to stderr
              + ("resume=True with the same log and seed runs only the rest" if log else
                 "without a log there is nothing to resume from"), file=sys.stderr)
        raise
    finally:
        bar.close()
        out.close()
    return _summarise(schedule, finished, protocol=protocol, in_force=in_force)


#: run_suite's keywords for the criteria, by :data:`passk.gate.bind.CRITERIA`'s names, and
#: their defaults (a keyword at its default was not given).
_KEYWORDS = {"k": ("k", 5), "bar": ("min_overall_pass_hat_k",
                                   DEFAULT_CRITERIA.min_overall_pass_hat_k),
             "cap": ("max_flakiness", DEFAULT_CRITERIA.max_flakiness),
             "on": ("gate_on", DEFAULT_CRITERIA.on), "confidence": ("confidence", 0.95),
             "min_runs": ("min_runs", 0)}


def _refuse_keywords_looser(in_force: InForce, given: Mapping[str, Any]) -> None:
    """A criterion given to :func:`run_suite` beside ``in_force`` that is looser than the one
    in force is refused, never dropped without a word (give it to :func:`passk.gate.bind.bind`)."""
    from passk.errors import PolicyError
    from passk.gate.bind import looser

    for name, value in given.items():
        keyword, default = _KEYWORDS[name]
        held = in_force.k if name == "k" else in_force.value(name)
        if held is None or value in (default, held) or not looser(name, held, value):
            continue
        raise PolicyError(f"run_suite: {keyword}={value!r} would loosen the {name} in force "
                          f"{held!r} ({in_force.origins.get(name, in_force.policy_line)}): "
                          "give the criteria to passk.gate.bind.bind, or leave it out")


def _refuse_plan_short_of_policy(in_force: InForce, tasks: Sequence[Task],
                                 policy: RepeatPolicy) -> None:
    """Under a policy, the suite is the policy's task set and each task gets the runs the
    policy asks: a suite that leaves a task out, or plans fewer runs, is refused."""
    from passk.errors import PolicyError

    p = in_force.policy
    if p is None:
        return
    have = {t.task_id for t in tasks}
    missing = [t for t in p.tasks.ids if t not in have]
    if missing:
        raise PolicyError(f"run_suite: the suite lacks the policy's "
                          f"{plural(len(missing), 'task', count=False)} "
                          f"{', '.join(missing)} ({p.path}): run the policy's task set")
    for t in tasks:
        need, planned = p.tasks.runs_for_task(t.task_id), policy.runs_for(t)
        if need is not None and planned < need:
            raise PolicyError(f"run_suite: {plural(planned, 'run')} for task {t.task_id} would "
                              f"loosen the policy's runs {need} ({p.path}): plan at least {need}")


def _outcome(result: RunResult | LogRecord) -> str:
    """A run's end as the schedule counts it (a run made now, or one replayed from the log)."""
    if result.infrastructure_error:
        return "infrastructure"
    if result.cached:
        return "cached"
    return "passed" if result.success else "failed"


class _Seeds:
    """:func:`~passk.repeats.attempt_seed` of each run the schedule asks for: every planned
    first attempt's seed derived in bulk (:func:`~passk.repeats.run_seeds`, the same numbers)
    the first time one is asked, a retry's or a run beyond the plan's one at a time."""

    def __init__(self, seed: int, schedule: Schedule) -> None:
        self._seed = seed
        self._planned = {task: s.n for task, s in schedule.states.items()}
        self._offset: dict[str, int] = {}
        self._seeds: list[int] = []

    def __call__(self, task_id: str, index: int, attempt: int) -> int:
        if attempt == 0 and self._seed >= 0:
            if not self._offset:
                self._derive()
            at = self._offset.get(task_id)
            if at is not None and 0 <= index < self._planned[task_id]:
                return self._seeds[at + index]
        return attempt_seed(self._seed, task_id, index, attempt)

    def _derive(self) -> None:
        tasks = list(self._planned)
        runs = np.array([self._planned[t] for t in tasks], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(runs)[:-1]]).astype(np.int64)
        self._offset = dict(zip(tasks, starts.tolist()))
        indexes = np.arange(int(runs.sum()), dtype=np.int64) - np.repeat(starts, runs)
        self._seeds = run_seeds(self._seed, np.repeat(np.array(tasks, dtype=object), runs),
                                indexes).tolist()


def _drive_sync(adapter: HarnessAdapter, schedule: Schedule, tasks: Mapping[str, Task], seed: int,
                pool: Executor | None, limit: int, timeout: float | None, backoff: float,
                on_result: Any) -> None:
    seeds = _Seeds(seed, schedule)
    if pool is None:  # in this thread, one run after another
        while (item := schedule.next_run()) is not None:
            task_id, index, attempt = item
            task = tasks[task_id]
            on_result(task, _run_sync(adapter, task, index,
                                      seeds(task_id, index, attempt), timeout,
                                      _backoff_delay(attempt, backoff)),
                      attempt)
        return
    in_flight: dict[Future[RunResult], tuple[Task, int]] = {}
    # each run, as it ends, joins a queue (not a wait() on every run in flight, which costs
    # as many steps as there are runs in flight each time one ends)
    ended: queue.SimpleQueue[Future[RunResult]] = queue.SimpleQueue()
    try:
        while True:
            while len(in_flight) < limit and (item := schedule.next_run()) is not None:
                task_id, index, attempt = item
                task = tasks[task_id]
                fut = pool.submit(_run_sync, adapter, task, index,
                                  seeds(task_id, index, attempt), timeout,
                                  _backoff_delay(attempt, backoff))
                in_flight[fut] = (task, attempt)
                fut.add_done_callback(ended.put)
            if not in_flight:
                return
            fut = ended.get()
            task, attempt = in_flight.pop(fut)
            on_result(task, fut.result(), attempt)
    finally:
        for fut in in_flight:
            fut.cancel()


def _backoff_delay(attempt: int, backoff: float) -> float:
    """Seconds to wait before attempt ``attempt`` (0 for the first), doubling each retry."""
    return backoff * 2 ** (attempt - 1) if attempt else 0.0


async def _drive_async(adapter: Any, schedule: Schedule, tasks: Mapping[str, Task], seed: int,
                       limit: int, timeout: float | None, backoff: float, on_result: Any
                       ) -> bool:
    """``limit`` workers, each taking the next run from the schedule as soon as it is free.

    Returns True when an adapter raised KeyboardInterrupt: the workers stop, and
    the caller re-raises it outside the event loop (raised inside, asyncio would
    also report the main task's exception as never retrieved).
    """
    changed = asyncio.Event()
    interrupted = False
    seeds = _Seeds(seed, schedule)

    async def worker() -> None:
        nonlocal interrupted
        while not interrupted:
            item = schedule.next_run()
            if item is None:
                if schedule.active == 0:
                    return
                changed.clear()
                await changed.wait()  # curtailment or a look: wait for a result
                continue
            task_id, index, attempt = item
            task = tasks[task_id]
            if attempt:
                await asyncio.sleep(_backoff_delay(attempt, backoff))
            try:
                result = await _run_async(adapter, task, index,
                                          seeds(task_id, index, attempt), timeout)
            except KeyboardInterrupt:
                interrupted = True
                changed.set()
                return
            on_result(task, result, attempt)
            changed.set()

    workers = [asyncio.ensure_future(worker()) for _ in range(limit)]
    try:
        await asyncio.gather(*workers)
    finally:
        for w in workers:
            w.cancel()
    return interrupted


class _Finished:
    """The runs final so far, by (task, run index), as :func:`run_suite` keeps them: the
    runs replayed from a log as columns (a task number, the run index, the outcome's flags,
    the seconds and the seed, an error where there is one: tens of bytes a run, so a resumed
    log of a million runs is not held as a million records), this session's runs as the
    :class:`~passk.adapter.RunResult` they are. A replayed run is made a ``RunResult``
    again only when asked for (:class:`_RunResults`), with the fields the log gives it."""

    def __init__(self) -> None:
        self.fresh: dict[tuple[str, int], RunResult] = {}
        self.tasks: list[str] = []  # the replayed runs' tasks, numbered in the order met
        self._task_no: dict[str, int] = {}
        self.task = array("q")
        self.index = array("q")
        self.flags = bytearray()  # bit 0 success, 1 infrastructure error, 2 cached
        self.seconds = array("d")
        self.seed = array("Q")
        self.odd: dict[int, tuple[Any, Any]] = {}  # (seconds, seed) not a float and a uint64
        self.errors: dict[int, str] = {}
        self._failures = 0

    def replayed(self, rec: LogRecord) -> None:
        """Keep a run replayed from the log (its final attempt)."""
        no = self._task_no.get(rec.task_id)
        if no is None:
            no = self._task_no[rec.task_id] = len(self.tasks)
            self.tasks.append(rec.task_id)
        at = len(self.index)
        self.task.append(no)
        self.index.append(rec.trial)
        self.flags.append(bool(rec.success) | bool(rec.infrastructure_error) << 1
                          | bool(rec.cached) << 2)
        seconds, seed = rec.seconds, rec.seed
        if type(seconds) is float and type(seed) is int and 0 <= seed < 2**64:
            self.seconds.append(seconds)
            self.seed.append(seed)
        else:  # as the log has them: a whole number of seconds, a seed the log lacks
            self.seconds.append(0.0)
            self.seed.append(0)
            self.odd[at] = (seconds, seed)
        if rec.error is not None:
            self.errors[at] = rec.error
        if _outcome(rec) == "failed":
            self._failures += 1

    def result(self, at: int) -> RunResult:
        """The ``at``-th replayed run, as a ``RunResult``."""
        flags = self.flags[at]
        seconds, seed = self.odd.get(at) or (self.seconds[at], self.seed[at])
        return RunResult(self.tasks[self.task[at]], self.index[at], bool(flags & 1),
                         seconds=seconds, error=self.errors.get(at),
                         infrastructure_error=bool(flags & 2), cached=bool(flags & 4),
                         seed=seed)

    def __setitem__(self, key: tuple[str, int], result: RunResult) -> None:
        self.fresh[key] = result

    def __len__(self) -> int:
        return len(self.index) + len(self.fresh)

    def failures(self) -> int:
        """Counted runs that failed."""
        return self._failures + sum(1 for r in self.fresh.values()
                                    if not r.success and r.counted)

    def ordered(self) -> Sequence[RunResult]:
        """Every run, by task id then run index (a run made this session in place of its
        replayed one): a tuple when none was replayed, else a :class:`_RunResults`."""
        fresh = sorted(self.fresh.values(), key=lambda r: (r.task_id, r.run_index))
        if not self.index:
            return tuple(fresh)
        names = sorted({*self.tasks, *(r.task_id for r in fresh)})
        rank = {t: i for i, t in enumerate(names)}
        task_rank = np.array([rank[t] for t in self.tasks], dtype=np.int64)
        index = np.frombuffer(self.index, dtype=np.int64)
        fresh_index = np.array([r.run_index for r in fresh], dtype=np.int64)
        lo = min(int(index.min()), int(fresh_index.min(initial=0)))
        span = max(int(index.max()), int(fresh_index.max(initial=0))) - lo + 1
        key = np.concatenate([
            task_rank[np.frombuffer(self.task, dtype=np.int64)] * span + (index - lo),
            np.array([rank[r.task_id] for r in fresh], dtype=np.int64) * span
            + (fresh_index - lo)])
        order = np.argsort(key, kind="stable")  # a replayed run before its fresh one
        if fresh:
            ends = key[order]
            order = order[np.append(ends[1:] != ends[:-1], True)]  # the fresh one kept
        return _RunResults(self, order, fresh)


class _RunResults(Sequence[RunResult]):
    """:attr:`SuiteRun.results` of a resumed suite: the runs in order, each replayed one made
    a ``RunResult`` when it is reached (iterating, indexing), so that the million runs of a
    resumed log are never all held. Equal to the tuple of its runs."""

    def __init__(self, store: _Finished, order: np.ndarray, fresh: list[RunResult]) -> None:
        self._store, self._order, self._fresh = store, order, fresh
        self._replayed = len(store.index)

    def _at(self, slot: int) -> RunResult:
        return (self._store.result(slot) if slot < self._replayed
                else self._fresh[slot - self._replayed])

    def __len__(self) -> int:
        return int(self._order.size)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return tuple(map(self._at, self._order[i].tolist()))
        return self._at(int(self._order[i]))

    def __iter__(self) -> Iterator[RunResult]:
        return map(self._at, self._order.tolist())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (tuple, _RunResults)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(tuple(self))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (and copied) as the tuple of its runs."""
        return tuple, (tuple(self),)


def _replay(schedule: Schedule, records: Iterable[LogRecord], finished: _Finished | None = None
            ) -> _Finished:
    """Account for a log's records in ``schedule`` (resume, and the gate on a stopped log):
    each run's final attempt, and a retry queued for a run whose last attempt needs one."""
    finished = _Finished() if finished is None else finished
    retry_of: dict[tuple[str, int], int] = {}  # runs whose last logged attempt needs a retry
    for rec in records:
        s = schedule.states.get(rec.task_id)
        if s is None or rec.trial >= s.n or rec.trial in s.final:
            continue
        if schedule.record(rec.task_id, rec.trial, _outcome(rec), rec.attempt, replay=True):
            finished.replayed(rec)
            if retry_of:
                retry_of.pop((rec.task_id, rec.trial), None)
        else:
            s.retries += 1
            retry_of[(rec.task_id, rec.trial)] = rec.attempt + 1
    for (task_id, trial), attempt in sorted(retry_of.items()):
        schedule.retry_queue.append((task_id, trial, attempt))
    return finished


def stop_of_log(path: str | os.PathLike[str], results: Results) -> str | None:
    """The early stop a ``passk run --stop-early`` log records, verified, or None.

    The log's header gives the plan, the gate and the looks; its records are replayed
    into the :class:`~passk.run.schedule.Schedule` that ran it (as ``--resume`` does).
    The stop holds when the schedule, fed the records alone, stopped at a look and has
    no run left to start, and its counts are the reader's ``results``: then the log is
    complete under its protocol's stopping rule, and the note is the verdict line's.
    Anything else (a record removed, the header edited, a look not reached) gives None,
    and the log stays short of its plan (the gate fails closed).

    Examples
    --------
    A log with no early stopping in its protocol has no stop:

    >>> import tempfile, pathlib
    >>> from passk.results.read import read_results
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
    >>> _ = p.write_text('{"task_id": "a", "success": true}\\n')
    >>> stop_of_log(p, read_results(p)) is None
    True
    """
    found = read_log_header(path)
    if found is None:
        return None
    settings = Protocol.from_dict(found["protocol"]).settings
    looks = settings.get("stop_early")
    try:
        looks = int(looks["looks"]) if isinstance(looks, Mapping) else None
        if looks is None:
            return None
        records = read_log(path)
        risks = {r.task_id: r.risk or "read-only" for r in records}
        by_risk, default = settings["runs_by_risk"], int(settings["default_runs"])
        plan = {str(t): int(by_risk.get(risks.get(str(t)), default)) for t in settings["tasks"]}
        gate = GateSettings(int(settings["k"]), float(settings["min_overall_pass_hat_k"]),
                            float(settings["max_flakiness"]), str(settings["gate_on"]),
                            float(settings["confidence"]), int(settings.get("min_runs") or 0))
        schedule = Schedule(plan, gate, stopping=Stopping(looks=looks), risks=risks,
                            max_retries=int(settings.get("max_retries") or 0))
    except (KeyError, TypeError, ValueError):
        return None
    _replay(schedule, records)
    if schedule.stopped is None or schedule.next_run() is not None:
        return None
    replayed = schedule.results()
    mine = dict(zip(replayed.task_ids, zip(replayed.successes.tolist(),
                                            replayed.totals.tolist(), strict=True)))
    theirs = dict(zip(results.task_ids, zip(results.successes.tolist(),
                                             results.totals.tolist(), strict=True)))
    return schedule.stop_note() if mine == theirs else None


def results_of_stopped_log(path: str | os.PathLike[str], results: Results) -> Results:
    """``results`` read from a ``passk run --stop-early`` log, complete under its
    protocol's stopping rule when :func:`stop_of_log` verifies the stop: the plan's
    shortfall goes from ``incomplete`` and ``notes``, and the stop joins ``overrides``
    (the verdict line names it). Unverified, ``results`` as read (short of its plan)."""
    note = stop_of_log(path, results)
    if not note:
        return results
    short = "the log is short of its protocol's fixed plan"
    return dataclasses.replace(
        results, overrides=(*results.overrides, note),
        incomplete=tuple(i for i in results.incomplete if not i.startswith(short)),
        notes=tuple(i for i in results.notes if not i.startswith(short)))


def results_of_replayed_log(path: str | os.PathLike[str], results: Results) -> Results:
    """``results`` read from a ``passk run`` log whose protocol may stop before its plan, as
    its own records replayed through the one scheduler show them.

    A log stopped early (``--stop-early``) is :func:`results_of_stopped_log`'s; a curtailed
    log (``--stopping curtailed``, or the pytest plugin's ``--passk-policy curtailed``) is
    :func:`results_of_curtailed_log`'s. Any other log comes back as read.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from passk.results.read import read_results
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
    >>> _ = p.write_text('{"task_id": "a", "success": true}\\n')
    >>> results_of_replayed_log(p, read_results(p)).totals.tolist()
    [1]
    """
    settings = results.protocol.settings if results.protocol is not None else {}
    if settings.get("stop_early"):
        return results_of_stopped_log(path, results) if results.incomplete else results
    if settings.get("stopping") == "curtailed" and results.source == "jsonl":
        return results_of_curtailed_log(path, results)
    return results


@dataclass(frozen=True)
class _Claim:
    """A ``settled`` record of a curtailed log: its line and what it says."""

    line: int
    risk: Any
    made: Any
    planned: Any


def _curtailed_plan(settings: Mapping[str, Any], runs: Sequence[tuple[int, LogRecord]],
                    claims: Mapping[str, Sequence[_Claim]]) -> Schedule:
    """The schedule a curtailed log was run under, from its protocol alone (its gate, its
    tasks and their planned runs); ``ValueError``/``KeyError``/``TypeError`` when the
    protocol does not say.

    A ``passk run`` log plans a task's runs by its risk (``runs_by_risk``, else
    ``default_runs``), or ``previously_flaky_runs`` when more and the task's records or
    claim show it was planned so (the protocol does not list which tasks were flagged);
    the pytest plugin's log lists each test's runs, k and risk (``tests``).
    """
    tests = settings.get("tests")
    ks: dict[str, int] | None = None
    risks: dict[str, str] = {}
    if isinstance(tests, Mapping):
        plan = {str(t): int(v["runs"]) for t, v in tests.items()}
        ks = {str(t): int(v["k"]) for t, v in tests.items()}
        risks = {str(t): str(v.get("risk") or "read-only") for t, v in tests.items()}
    else:
        by_risk, default = settings["runs_by_risk"], int(settings["default_runs"])
        flagged = settings.get("previously_flaky_runs")
        most: dict[str, int] = {}
        for _, rec in runs:
            risks.setdefault(rec.task_id, rec.risk or "read-only")
            most[rec.task_id] = max(most.get(rec.task_id, 0), rec.trial + 1)
        plan = {}
        for task in map(str, settings["tasks"]):
            said = claims.get(task, ())
            risk = risks.setdefault(task, str(next((c.risk for c in said if c.risk), None)
                                              or "read-only"))
            base = int(by_risk.get(risk, default))
            more = max(base, int(flagged)) if isinstance(flagged, int) else base
            plan[task] = more if most.get(task, 0) > base or any(
                c.planned == more for c in said) else base
    k = settings.get("k")
    gate = GateSettings(int(k) if k is not None else min((ks or {"": 1}).values()),
                        float(settings["min_overall_pass_hat_k"]),
                        float(settings["max_flakiness"]), str(settings["gate_on"]),
                        float(settings["confidence"]), int(settings.get("min_runs") or 0))
    return Schedule(plan, gate, stopping=Stopping(curtailed=True), ks=ks, risks=risks,
                    max_retries=int(settings.get("max_retries") or 0))


def _refuted(task: str, claim: _Claim, schedule: Schedule,
             runs: Sequence[tuple[int, LogRecord]]) -> str | None:
    """Why a ``settled`` record is not borne out by the replay, or None when it is."""
    s = schedule.states.get(task)
    if s is None:
        return "it names no task of its protocol"
    made = len(s.final)
    if claim.risk is not None and claim.risk != s.risk:
        return f"it gives the task risk {claim.risk!r}, its runs {s.risk!r}"
    if claim.planned != s.n:
        return f"it says {claim.planned!r} runs planned, the protocol plans {s.n}"
    if claim.made != made:
        return f"it says {claim.made!r} runs made, the log records {made}"
    later = next((line for line, rec in runs if rec.task_id == task and line > claim.line),
                 None)
    if later is not None:
        return f"a run of the task is recorded after it (line {later})"
    if s.remaining <= 0:
        return f"all {s.n} planned runs of the task were made: none was left to settle"
    if task not in schedule.settled_early():
        return (f"its {made} recorded runs ({s.successes} passed, {s.failures} failed) do not "
                f"settle it under the protocol's gate ({schedule.criteria.describe()})")
    return None


def results_of_curtailed_log(path: str | os.PathLike[str], results: Results) -> Results:
    """``results`` read from a curtailed log, its settled tasks shown by replaying its runs.

    The log's header gives the plan and the gate; its run records are replayed, in the
    order written, into the :class:`~passk.run.schedule.Schedule` that ran it (with
    curtailed stopping, as ``--resume`` replays a log), and a task short of its plan is
    settled only when the settle rule (:func:`~passk.gate.curtailment.task_settled`)
    settles it on those runs, the runs not made left open. Each ``settled`` record is a
    claim checked against the replay: a claim the replay does not bear out (the task not
    settled by its runs, its runs made or planned misstated, a run of it after the claim)
    is named in ``incomplete``, and its task stays short of its plan, so the gate blocks.
    A log the replay cannot follow (a protocol without its plan or gate, counts other than
    the reader's) settles nothing.

    Examples
    --------
    A fixed log whose header says curtailed, with a ``settled`` record for a task that
    passed 1 of 2 of its 3 planned runs, has only its counts: the claim is refused.

    >>> import json, tempfile, pathlib
    >>> from passk.results.protocol import Protocol
    >>> from passk.results.read import read_results
    >>> s = {"tasks": ["a"], "runs_by_risk": {}, "default_runs": 3, "k": 1,
    ...      "stopping": "curtailed", "min_overall_pass_hat_k": 0.5, "max_flakiness": 0.9,
    ...      "gate_on": "estimate", "confidence": 0.95}
    >>> lines = [{"protocol": Protocol(s).to_dict()},
    ...          {"task_id": "a", "trial": 0, "success": True},
    ...          {"task_id": "a", "trial": 1, "success": False},
    ...          {"task_id": "a", "settled": {"runs_made": 2, "runs_planned": 3}}]
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
    >>> _ = p.write_text("".join(json.dumps(x) + "\\n" for x in lines))
    >>> r = results_of_curtailed_log(p, read_results(p))
    >>> r.settled_early, r.incomplete[0].split(":")[0]
    ({}, 'task a')
    >>> print(r.incomplete[0].split(": ", 2)[2][:63])
    its 2 recorded runs (1 passed, 1 failed) do not settle it under
    """
    try:
        parsed = read_run_log(path)
        settings = Protocol.from_dict(parsed.header["protocol"]).settings  # type: ignore[index]
        runs: list[tuple[int, LogRecord]] = []
        claims: dict[str, list[_Claim]] = {}
        for line, fields in parsed.records:
            if is_settled(fields):
                said = fields["settled"]
                claims.setdefault(str(fields["task_id"]), []).append(
                    _Claim(line, fields.get("risk"), said.get("runs_made"),
                           said.get("runs_planned")))
            else:
                runs.append((line, LogRecord(**fields)))
        schedule = _curtailed_plan(settings, runs, claims)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return _unreplayed(results, f"its protocol does not give the plan and gate a replay "
                           f"needs ({type(exc).__name__}: {exc})")
    _replay(schedule, [rec for _, rec in runs])
    for task_id in schedule.states:
        schedule.settled(task_id)  # marks each task the settle rule stops on its runs
    replayed = schedule.results()
    mine = dict(zip(replayed.task_ids, zip(replayed.successes.tolist(),
                                            replayed.totals.tolist(), strict=True)))
    theirs = dict(zip(results.task_ids, zip(results.successes.tolist(),
                                             results.totals.tolist(), strict=True)))
    if mine != theirs:
        return _unreplayed(results, "its records replayed give other counts than the reader's "
                           "(records the scheduler would not count: a run beyond its plan, "
                           "one run recorded twice?)")
    refuted = {task: (claim, why) for task, said in claims.items() for claim in said
               if (why := _refuted(task, claim, schedule, runs)) is not None}
    verified = schedule.settled_early()
    order = dict.fromkeys([*claims, *results.task_ids])  # as the run listed them, then read
    settled = {t: verified[t] for t in order if t in verified and t not in refuted}
    gaps = [f"task {task}: its settled record (line {claim.line}) is not borne out: {why}; "
            + (f"it stays short of its plan ({len(s.final)} of {s.n} runs made)"
               if (s := schedule.states.get(task)) is not None and s.remaining > 0
               else "the log contradicts itself")
            for task, (claim, why) in refuted.items()]
    short = [f"{s.task_id}: {len(s.final)} of {s.n}" for s in schedule.states.values()
             if s.remaining > 0 and s.task_id not in settled and s.task_id not in refuted]
    if short:
        shown = "; ".join(short[:10]) + (f"; and {len(short) - 10} more" if len(short) > 10
                                         else "")
        gaps.append(f"the curtailed log is short of its plan where the settle rule does not "
                    f"stop a task on its runs, under the protocol's gate "
                    f"({schedule.criteria.describe()}): {shown} (an interrupted run? --resume "
                    "finishes it)")
    risks = tuple(schedule.states[t].risk if t in schedule.states and t in settled else r
                  for t, r in zip(results.task_ids, results.risks, strict=True))
    return dataclasses.replace(
        results, settled_early=settled, risks=risks,
        incomplete=(*_without_unreplayed(results.incomplete), *gaps),
        notes=(*_without_unreplayed(results.notes), *gaps))


def _without_unreplayed(sentences: Sequence[str]) -> tuple[str, ...]:
    return tuple(s for s in sentences if not s.startswith(CURTAILED_UNREPLAYED))


def _unreplayed(results: Results, why: str) -> Results:
    """A curtailed log the replay cannot follow: nothing settled, and why."""
    said = ((f"the curtailed log cannot be replayed through the scheduler: {why}; none of "
             "its tasks is taken as settled"),)
    return dataclasses.replace(results, settled_early={},
                               incomplete=(*results.incomplete, *said),
                               notes=(*results.notes, *said))


def _summarise(schedule: Schedule, finished: _Finished, *,
               protocol: Protocol, in_force: InForce | None = None) -> SuiteRun:
    """Score the runs made and ask the judge.

    A curtailed suite's runs made are one completion of its runs not made (all
    left out), and the settle rule stopped a task only when every completion
    gives the same verdict and flaky tasks, so the judge's verdict is fixed n's.
    A suite stopped early is judged on its runs made, the stop on the verdict line.
    """
    states = list(schedule.states.values())
    results = schedule.results(protocol)
    gate_criteria = schedule.criteria
    report = judge_suite(results, gate_criteria, k=gate_criteria.k, protocol=protocol,
                         policy_line=in_force.policy_line if in_force is not None else "",
                         applied=in_force.overrides if in_force is not None else ())
    ordered = finished.ordered()
    return SuiteRun(
        report=report,
        results=ordered,
        runs_spent=sum(s.counted for s in states),
        runs_fixed=sum(s.n for s in states),
        retries={s.task_id: s.retries for s in states},
        cached={s.task_id: s.cached for s in states},
        infrastructure_errors={s.task_id: s.gave_up for s in states},
        effective_n={s.task_id: s.counted for s in states},
        protocol=protocol,
        settled_early=results.settled_early,
        stopped=schedule.stopped,
    )


# --------------------------------------------------------------------------
# what ``passk run`` needs: an adapter by name, tasks from a file
# --------------------------------------------------------------------------

_TASK_FIELDS = {"task_id", "instruction", "risk", "previously_flaky"}


def load_tasks(path: str | os.PathLike[str]) -> list[Task]:
    """Read tasks from JSON Lines: ``task_id`` (required), ``instruction``, ``risk``,
    ``previously_flaky``; every other field goes to ``Task.params``.

    Raises ``ValueError`` naming the file and line for a bad record or a repeated id.
    """
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise BadInput(f"{path}:{number}: not valid JSON ({exc.msg})") from None
            if not isinstance(record, dict) or not isinstance(record.get("task_id"), (str, int)):
                raise BadInput(
                    f"{path}:{number}: a task needs a 'task_id' (a string)")
            task_id = str(record["task_id"])
            if task_id in seen:
                raise BadInput(f"{path}:{number}: task {task_id!r} already defined on line "
                                 f"{seen[task_id]}")
            seen[task_id] = number
            risk = record.get("risk", "read-only")
            if not isinstance(risk, str):
                raise BadInput(
                    f"{path}:{number}: 'risk' must be a string, got {risk!r}")
            tasks.append(Task(task_id, str(record.get("instruction", "")), risk,
                              bool(record.get("previously_flaky", False)),
                              {k: v for k, v in record.items() if k not in _TASK_FIELDS}))
    if not tasks:
        raise BadInput(f"{path}: no tasks")
    return tasks


def load_adapter(spec: str) -> HarnessAdapter:
    """Resolve ``module:attribute`` to an adapter.

    The attribute is an adapter object (anything with a ``run`` method), or a
    class or function that takes no arguments and returns one.

    Examples
    --------
    >>> type(load_adapter("passk.flaky_adapter:OnCallSimulator")).__name__
    'OnCallSimulator'
    """
    import importlib

    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise BadInput(f"adapter {spec!r} must look like 'module:attribute'")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise BadInput(f"adapter {spec!r}: cannot import {module_name!r} ({exc})") from None
    for part in attribute.split("."):
        if not hasattr(obj, part):
            raise BadInput(f"adapter {spec!r}: {module_name!r} has no attribute {attribute!r}")
        obj = getattr(obj, part)
    if not hasattr(obj, "run") or isinstance(obj, type):
        if not callable(obj):
            raise BadInput(f"adapter {spec!r} is neither an adapter nor a factory")
        try:
            obj = obj()
        except TypeError as exc:
            raise BadInput(f"adapter {spec!r} must take no arguments ({exc})") from None
    if not callable(getattr(obj, "run", None)):
        raise BadInput(
            f"adapter {spec!r} gave {type(obj).__name__}, which has no run method")
    adapter: HarnessAdapter = obj
    return adapter
