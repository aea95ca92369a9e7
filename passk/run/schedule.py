r"""The one scheduler: which run to make next, which task is settled, whether the suite stopped.

A :class:`Schedule` holds, for every task of a suite, its planned runs, the counts of the
runs that have ended and the runs still open. It answers the questions every driver
asks, the same way for each of them:

- :meth:`Schedule.next_run`: the next (task, run index, attempt) to start, retries
  first (:func:`passk.run.runner.run_suite` asks it);
- :meth:`Schedule.settled`: may this task stop? (curtailment, the settle rule of
  :mod:`passk.gate.curtailment`; the pytest plugin asks it before each repetition,
  :class:`passk.integrations.inspect.Curtailment` before each epoch);
- :attr:`Schedule.stopped`: has the suite stopped early? (the sequential rule of
  :mod:`passk.stats.sequential`, at a few planned looks);
- :meth:`Schedule.results`: the :class:`~passk.results.counts.Results` it has gathered,
  for the one judge, :func:`passk.gate.judge.judge`.

Drivers tell it what happened with :meth:`Schedule.record` (a run's attempt ended) and
:meth:`Schedule.skip` (a run is not made: its task settled, or the suite stopped).

Two ways to stop before every planned run, one per level, chosen by :class:`Stopping`:

- **curtailment** (per task): a task stops once no outcome of its remaining runs can
  change the gate's decision; the verdict is then fixed n's, exactly;
- **early stopping** (the suite): with ``looks = L`` the runs are made in L stages (look
  j after :math:`m_j` runs of every task, :math:`m_1 = \max(k, \text{min\_runs})`,
  :math:`m_L = n`, evenly between); at each look before the last,
  :func:`passk.stats.sequential.sequential_decision` stops the suite when the proved
  interval on mean pass^k at level :math:`1-\alpha/L` clears the bar or lies below it.
  A stop with a pass on a suite truly below the bar happens with probability at most
  :math:`\alpha/2` over all the looks (the union bound), whatever the gate; the verdict
  is the judge's on the runs made, and the stop is named on its line. The proof covers
  the mean: under the chapter's gate, whose flakiness cap needs every run to give fixed
  n's flaky tasks, a stop with a pass only ends the tasks whose flaky verdict is already
  the same whatever their remaining runs give; the others run on until it is.

The two are not combined: curtailment stops a task on its own outcomes, so a look would
no longer see a number of runs fixed in advance, which the sequential rule's proof needs.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from passk.criteria import DEFAULT_CRITERIA, GateCriteria
from passk.errors import BadInput
from passk.gate.criteria import STOPPED_EARLY
from passk.gate.curtailment import (
    TaskOutlook,
    _outlook,
    _runs_surely_needed,
    _settles,
    _suite_verdict,
)
from passk.results.counts import Results
from passk.results.protocol import Protocol
from passk.stats.operating import bar_fraction
from passk.stats.sequential import LookDecision, sequential_decision

__all__ = ["OUTCOMES", "Schedule", "Stopping", "TaskState"]

#: What a run's attempt can end as: counted (``passed``, ``failed``), left out
#: (``infrastructure``, ``cached``), or ended without an outcome (``skipped`` by the test).
OUTCOMES = ("passed", "failed", "infrastructure", "cached", "skipped")


@dataclass(frozen=True)
class Stopping:
    """How a schedule may stop before every planned run.

    Attributes
    ----------
    curtailed : bool
        Stop a task once its remaining runs cannot change the gate's decision.
    looks : int
        Planned looks of early stopping (0: none; else at least 2, the last after every
        run).

    Examples
    --------
    >>> Stopping.parse("curtailed"), Stopping.parse("looks:4").looks
    (Stopping(curtailed=True, looks=0), 4)
    >>> Stopping(looks=4).describe()
    'early stopping at 4 planned looks'
    """

    curtailed: bool = False
    looks: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.looks, bool) or not isinstance(self.looks, int) or (
                self.looks != 0 and self.looks < 2):
            raise BadInput(f"looks ({self.looks!r}) must be 0 (no early stopping) or a whole "
                             "number >= 2 (the last look is after every run)")
        if self.curtailed and self.looks:
            raise BadInput("curtailment and early stopping cannot be combined: curtailment "
                             "stops a task on its own outcomes, and the early-stopping rule's "
                             "proof needs each look's runs fixed in advance; choose one")

    @classmethod
    def parse(cls, spec: str | Stopping | None) -> Stopping:
        """``'fixed'``, ``'curtailed'`` or ``'looks:L'`` (or a Stopping, or None: fixed)."""
        if spec is None or isinstance(spec, Stopping):
            return spec or cls()
        if spec == "fixed":
            return cls()
        if spec == "curtailed":
            return cls(curtailed=True)
        head, _, tail = str(spec).partition(":")
        if head == "looks" and tail.isdigit():
            return cls(looks=int(tail))
        raise BadInput(f"stopping ({spec!r}) must be 'fixed', 'curtailed' or 'looks:L' "
                         "(L planned looks, at least 2)")

    def describe(self) -> str:
        """The stopping rule in words, for the verdict and the log."""
        if self.looks:
            return f"early stopping at {self.looks} planned looks"
        return "curtailed" if self.curtailed else "fixed"


@dataclass
class TaskState:
    """One task's runs as the schedule knows them.

    ``successes`` and ``failures`` are counted runs; ``cached`` and ``gave_up`` (runs
    whose every attempt hit an infrastructure error) are left out; ``skipped`` ended with
    no outcome (a test that skipped itself); ``retries`` are attempts redone after an
    infrastructure error. ``remaining`` are the planned runs with no final attempt yet.
    """

    task_id: str
    n: int
    k: int
    risk: str = "read-only"
    successes: int = 0
    failures: int = 0
    cached: int = 0
    gave_up: int = 0
    skipped: int = 0
    infrastructure_errors: int = 0
    retries: int = 0
    final: dict[int, str] = field(default_factory=dict)  # run index -> its final outcome
    started: set[int] = field(default_factory=set)  # final, in flight, or awaiting a retry
    in_flight: int = 0
    next_index: int = 0
    limit: int = 0  # runs this stage may start (n without early stopping)
    settled_mark: bool = False  # curtailment stopped it
    not_made: int = 0  # runs a driver reported not made (settled, or the suite stopped)

    @property
    def remaining(self) -> int:
        """Runs of the plan not yet final."""
        return self.n - len(self.final)

    @property
    def counted(self) -> int:
        """Runs counted so far: successes and failures."""
        return self.successes + self.failures


class Schedule:
    """The suite's runs: what to do next, what is settled, whether the suite stopped.

    Parameters
    ----------
    plan : Mapping[str, int]
        Each task's planned runs, in the suite's order.
    criteria : GateCriteria
        The gate curtailment must leave unchanged, and whose bar and confidence the
        early-stopping rule uses.
    stopping : Stopping or str, optional
        ``'fixed'`` (default), ``'curtailed'`` or ``'looks:L'`` (see :class:`Stopping`).
    ks, risks : Mapping[str, ...], optional
        Each task's k (default ``criteria.k``) and risk label.
    max_retries : int, default 0
        Attempts redone after an infrastructure error before the run is left out.

    Examples
    --------
    Curtailment: one task passes once and fails once, so it is flaky whatever its last
    run gives, and the suite is blocked: that task is settled; the other must still show
    whether it is flaky too.

    >>> s = Schedule({"a": 3, "b": 3}, GateCriteria(k=1, min_overall_pass_hat_k=0.9),
    ...              stopping="curtailed")
    >>> s.record("a", 0, "passed"), s.record("a", 1, "failed")
    (True, True)
    >>> s.settled("a"), s.settled("b"), s.next_run()
    (True, False, ('b', 0, 0))
    >>> s.results().settled_early
    {'a': 3}

    Early stopping: 40 tasks that pass every run clear the bar at the first look (with no
    flakiness cap, nothing else needs the other runs).

    >>> s = Schedule({f"t{i}": 12 for i in range(40)}, GateCriteria(k=1, max_flakiness=1.0),
    ...              stopping="looks:3")
    >>> while (run := s.next_run()) is not None:
    ...     _ = s.record(run[0], run[1], "passed")
    >>> s.stopped.decision, int(s.results().totals.sum())
    ('stop-pass', 40)
    """

    def __init__(self, plan: Mapping[str, int], criteria: GateCriteria = DEFAULT_CRITERIA, *,
                 stopping: Stopping | str | None = None, ks: Mapping[str, int] | None = None,
                 risks: Mapping[str, str] | None = None, max_retries: int = 0):
        self.criteria = criteria
        self.stopping = Stopping.parse(stopping)
        self.curtailed = self.stopping.curtailed
        if self.curtailed and criteria.mode != "chapter":  # the settle rule is the chapter's
            raise BadInput(f"curtailment settles a task by the chapter's rule, not the "
                           f"{criteria.mode} mode in force: run every planned run (stopping "
                           "fixed), or gate in the chapter's mode")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise BadInput(f"max_retries ({max_retries!r}) must be a whole number >= 0")
        self.max_retries = max_retries
        self.states: dict[str, TaskState] = {}
        self.retry_queue: deque[tuple[str, int, int]] = deque()
        self.active = 0  # runs in flight across the suite
        self._order: list[TaskState] = []
        self._cursor = 0
        # curtailment: exact sums of the tasks' outlooks (the suite's outlook in O(1) a run)
        self.outlooks: dict[str, TaskOutlook] = {}
        self.suite = "open"
        self._high = self._low = Fraction(0)
        self._not_clear = self._unsure = 0
        # early stopping
        self.looks: list[LookDecision] = []
        self._stopped: LookDecision | None = None
        self._halted = False  # no run starts any more (a stop with a fail, or with a pass
        # where the gate has no flakiness cap to settle)
        self._flaky_phase = False  # the mean is proved: each task runs until its flaky
        # verdict is settled, so that the flaky set is fixed n's
        self.stage = 0
        self._stage_left = 0
        for task_id, n in plan.items():
            self.add(task_id, n, k=None if ks is None else ks.get(task_id),
                     risk=None if risks is None else risks.get(task_id))
        if self.stopping.looks and self._order:
            self._start_stage(0)

    # -- the plan ------------------------------------------------------------

    def add(self, task_id: str, n: int, *, k: int | None = None, risk: str | None = None
            ) -> TaskState:
        """Register a task (a driver that learns its tasks as it goes, e.g. under xdist)."""
        if task_id in self.states:
            raise BadInput(f"task {task_id!r} is already in the schedule: task ids must be "
                             "unique within a suite")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise BadInput(f"task {task_id!r}: planned runs ({n!r}) must be a whole number "
                             ">= 1")
        k_ = self.criteria.k if k is None else int(k)
        if self.stopping.looks and k_ != self.criteria.k:
            raise BadInput(f"task {task_id!r}: k {k_} differs from the suite's "
                             f"{self.criteria.k}; early stopping needs one k for the suite")
        s = TaskState(str(task_id), int(n), k_, risk or "read-only", limit=int(n))
        self.states[s.task_id] = s
        self._order.append(s)
        if self.curtailed:
            self._account(s)
            self.suite = self._suite_outlook()
        return s

    def __len__(self) -> int:
        return len(self.states)

    # -- what to run next (run_suite) ---------------------------------------

    def next_run(self) -> tuple[str, int, int] | None:
        """The next (task id, run index, attempt) to start, retries first; None when nothing
        can start now (everything started, every open task settled, the suite stopped, or
        the current stage's runs all started while some are still in flight)."""
        if self._halted:
            self.retry_queue.clear()
            return None
        while self.retry_queue:
            task_id, run_index, attempt = self.retry_queue.popleft()
            s = self.states[task_id]
            if (self.curtailed and self.settled(task_id)) or self.stopped_for(task_id):
                s.retries -= 1  # its verdict no longer needs this run
                continue
            s.in_flight += 1
            self.active += 1
            return task_id, run_index, attempt
        i = self._cursor
        while i < len(self._order):
            s = self._order[i]
            while s.next_index < s.limit and s.next_index in s.started:
                s.next_index += 1
            if s.next_index >= s.limit or (self.curtailed and self.settled(s.task_id)) or (
                    self._flaky_phase and self.stopped_for(s.task_id)):
                if i == self._cursor:  # nothing more will start here in this stage
                    self._cursor += 1
                i += 1
                continue
            if self.curtailed and s.in_flight and s.in_flight >= self.runs_surely_needed(
                    s.task_id):
                i += 1
                continue
            run_index = s.next_index
            s.started.add(run_index)
            s.in_flight += 1
            self.active += 1
            return s.task_id, run_index, 0
        return None

    def runs_surely_needed(self, task_id: str) -> int:
        """How many more of the task's runs end before any outcome could settle it:
        curtailment may run that many at once without wasting one."""
        s, g = self.states[task_id], self.criteria
        return _runs_surely_needed(s.successes, s.failures, s.remaining, s.k, g.max_flakiness,
                                   g.min_runs, self.suite, g.on, g.confidence)

    def start(self, task_id: str, run_index: int) -> None:
        """A driver that orders the runs itself (pytest, Inspect) started this run."""
        s = self.states[task_id]
        if run_index not in s.started:
            s.started.add(run_index)
            s.in_flight += 1
            self.active += 1

    # -- what happened -------------------------------------------------------

    def record(self, task_id: str, run_index: int, outcome: str, attempt: int = 0, *,
               replay: bool = False) -> bool:
        """Account for an ended attempt; return True when it was the run's final attempt.

        An ``infrastructure`` outcome before ``max_retries`` retries queues a retry
        (unless ``replay``: reading a log back, the caller queues what its log lacks). A
        run already final is re-scored: its new outcome replaces the old one (Inspect
        re-scoring an epoch).
        """
        if outcome not in OUTCOMES:
            raise BadInput(f"outcome ({outcome!r}) must be one of {', '.join(OUTCOMES)}")
        s = self.states[task_id]
        if not 0 <= run_index < s.n:
            raise BadInput(f"task {task_id!r}: run index {run_index} outside its {s.n} "
                             "planned runs")
        if (not replay and run_index in s.started and run_index not in s.final
                and s.in_flight):
            s.in_flight -= 1
            self.active -= 1
        s.started.add(run_index)
        if outcome == "infrastructure":
            s.infrastructure_errors += 1
            if attempt < self.max_retries:
                if not replay:
                    s.retries += 1
                    self.retry_queue.append((task_id, run_index, attempt + 1))
                return False
        old = s.final.get(run_index)
        if old is not None:
            self._count(s, old, -1)
        s.final[run_index] = outcome
        self._count(s, outcome, +1)
        if self.curtailed:
            self._account(s)
            if old is not None or self.suite == "open":
                self.suite = self._suite_outlook()
        elif self._flaky_phase:
            self._account(s)
        if self.stopping.looks and self._stopped is None and old is None and (
                run_index < s.limit):
            self._stage_left -= 1
            if self._stage_left <= 0:
                self._look()
        return True

    def skip(self, task_id: str, run_index: int, why: str,
             decision: Mapping[str, float | int | str] | None = None) -> None:
        """A run not made: ``why`` is ``'settled'`` (curtailment) or ``'stopped'`` (early
        stopping; ``decision`` is the stop, as a dict of :class:`LookDecision`'s fields,
        when this process did not take the look itself). It stays open."""
        s = self.states[task_id]
        s.not_made += 1
        if why == "settled":
            s.settled_mark = True
        elif why == "stopped":
            if self._stopped is None and decision is not None:
                self._stopped = LookDecision(**decision)  # type: ignore[arg-type]
                self._halted = True  # this process did not take the look: it only records
        else:
            raise BadInput(f"why ({why!r}) must be 'settled' or 'stopped'")

    @staticmethod
    def _count(s: TaskState, outcome: str, sign: int) -> None:
        if outcome == "passed":
            s.successes += sign
        elif outcome == "failed":
            s.failures += sign
        elif outcome == "cached":
            s.cached += sign
        elif outcome == "infrastructure":
            s.gave_up += sign
        else:
            s.skipped += sign

    # -- curtailment ---------------------------------------------------------

    def settled(self, task_id: str) -> bool:
        """Whether the task may stop: all its runs ended, or (curtailed) no outcome of its
        remaining runs can change the gate's decision
        (:func:`passk.gate.curtailment.task_settled`)."""
        s = self.states[task_id]
        if s.remaining <= 0:
            return True
        if not self.curtailed:
            return False
        if self._settled(s):
            s.settled_mark = True
            return True
        return False

    def _settled(self, s: TaskState) -> bool:
        return s.remaining <= 0 or _settles(self.outlooks[s.task_id], self.suite)

    def _account(self, s: TaskState) -> None:
        """The task's new outlook into the suite's exact sums."""
        g = self.criteria
        new = _outlook(s.successes, s.failures, s.remaining, s.k, g.max_flakiness, g.min_runs,
                       g.on, g.confidence)
        old = self.outlooks.get(s.task_id)
        for o, sign in ((old, -1), (new, 1)):
            if o is None:
                continue
            self._not_clear += sign * (o.clear is False)
            self._unsure += sign * (o.clear is None)
            if o.clear is not False:
                self._high += sign * Fraction(o.high)
            if o.clear is True:
                self._low += sign * Fraction(o.low)
        self.outlooks[s.task_id] = new

    def _suite_outlook(self) -> str:
        """:func:`passk.gate.curtailment.suite_outlook` from the running sums."""
        if not self.outlooks or self._not_clear:
            return "blocked"
        return _suite_verdict(bar_fraction(self.criteria.min_overall_pass_hat_k),
                              len(self.outlooks),
                              self._high, None if self._unsure else self._low)

    def settled_early(self) -> dict[str, int]:
        """Tasks curtailment stopped before all their planned runs ended, with their runs
        **planned**."""
        return {s.task_id: s.n for s in self._order if s.settled_mark and s.remaining > 0}

    def unfinished(self, order: Iterable[str] | None = None) -> list[str]:
        """One sentence per task short of its planned runs for a reason the schedule did not
        choose (skipped, deselected, a session cut short): for the judge's ``unfinished``.

        >>> s = Schedule({"a": 3})
        >>> _ = s.record("a", 0, "passed")
        >>> s.unfinished()
        ['task a: 1 of its 3 planned runs counted (2 skipped, deselected or not run)']
        """
        early = self.settled_early()
        out = []
        for task_id in self.states if order is None else order:
            s = self.states[task_id]
            missing = s.n - s.counted - s.gave_up - s.not_made - s.cached
            if self._stopped is not None:
                missing = min(missing, s.skipped)  # the stop left the rest out
            if missing > 0 and task_id not in early:
                out.append(f"task {task_id}: {s.counted} of its {s.n} planned runs counted "
                           f"({missing} skipped, deselected or not run)")
        return out

    # -- early stopping ------------------------------------------------------

    @property
    def stopped(self) -> LookDecision | None:
        """The look that stopped the suite early (``stop-pass`` or ``stop-fail``), or None."""
        return self._stopped

    def stopped_for(self, task_id: str) -> bool:
        """Whether early stopping ends this task's runs: the suite stopped with a fail; or
        it stopped with a pass (its mean proved above the bar) and the task's flaky verdict
        under the cap is the same whatever its remaining runs give, so that the flaky set
        is fixed n's (a gate with a cap of 1, or whose flakiness is a warning or proved,
        stops every task at once)."""
        if self._halted:
            return True
        if not self._flaky_phase:
            return False
        s = self.states[task_id]
        return s.remaining <= 0 or self.outlooks[task_id].flaky is not None

    def look_targets(self, n: int) -> list[int]:
        """Runs of an n-run task at each planned look: the first after ``max(k, min_runs)``
        (pass^k must be estimable), the last after all n, evenly between.

        >>> Schedule({"a": 12}, GateCriteria(k=5), stopping="looks:4").look_targets(12)
        [5, 8, 10, 12]
        """
        looks = self.stopping.looks
        first = min(n, max(self.criteria.k, self.criteria.min_runs, 1))
        return [first + math.ceil((n - first) * j / (looks - 1)) for j in range(looks)]

    def _start_stage(self, stage: int) -> None:
        self.stage, self._cursor = stage, 0
        left = 0
        for s in self._order:
            s.limit = self.look_targets(s.n)[stage]
            s.next_index = 0
            left += sum(1 for i in range(s.limit) if i not in s.final)
        self._stage_left = left
        if left == 0:
            self._look()

    def _look(self) -> None:
        """Every run of this stage ended: the look (none at the last: the judge decides)."""
        looks = self.stopping.looks
        if self.stage >= looks - 1:
            return
        g = self.criteria
        # the look sees exactly its planned runs (indices below the stage's limit), even
        # where a driver that orders the runs itself (Inspect, pytest) finished later ones
        # first: how many it sees may not depend on how fast passes or failures end
        c = [sum(1 for i, o in s.final.items() if i < s.limit and o == "passed")
             for s in self._order]
        n = [sum(1 for i, o in s.final.items() if i < s.limit and o in ("passed", "failed"))
             for s in self._order]
        d = sequential_decision(c, n, g.k, g.min_overall_pass_hat_k, look=self.stage + 1,
                                looks=looks, confidence=g.confidence)
        self.looks.append(d)
        if d.decision == "continue":
            self._start_stage(self.stage + 1)
            return
        self._stopped = d
        if d.decision == "stop-pass" and g.mode == "chapter" and g.max_flakiness < 1:
            self._flaky_phase, self._cursor = True, 0
            for s in self._order:
                s.limit, s.next_index = s.n, 0
                self._account(s)
        else:
            self._halted = True

    def stop_note(self) -> str:
        """The early stop in one phrase, for the verdict line (empty when not stopped)."""
        d = self._stopped
        if d is None:
            return ""
        made = sum(s.counted for s in self._order)
        planned = sum(s.n for s in self._order)
        side = "clears" if d.decision == "stop-pass" else "lies below"
        then = ("; each task then ran until its flakiness verdict was settled"
                if self._flaky_phase else "")
        ks = {s.k for s in self._order}
        k = ks.pop() if len(ks) == 1 else self.criteria.k
        return (f"{STOPPED_EARLY} {d.look} of {d.looks}: the {d.confidence:.2%} proved "
                f"interval on mean pass^{k} [{d.low:.3f}, {d.high:.3f}] {side} the bar "
                f"{self.criteria.min_overall_pass_hat_k:g}{then} ({made} of {planned} "
                "planned runs counted)")

    # -- what it gathered ----------------------------------------------------

    def results(self, protocol: Protocol | None = None, *, order: Iterable[str] | None = None,
                source: str = "passk", excluded: str = "runs") -> Results:
        """The counts as :class:`~passk.results.counts.Results`, for the judge.

        Counted runs passed or failed; cached runs and runs that kept hitting
        infrastructure errors are left out (``excluded``); a task curtailment stopped is
        in ``settled_early`` with its planned runs; an early stop rides in ``overrides``,
        so the verdict line names it. ``excluded='attempts'`` counts every attempt that
        hit an infrastructure error (retried or not), as a log of every attempt reads.
        """
        if excluded not in ("runs", "attempts"):
            raise BadInput(f"excluded ({excluded!r}) must be 'runs' or 'attempts'")
        states: Sequence[TaskState] = (self._order if order is None
                                       else [self.states[t] for t in order])
        cached = any(s.cached for s in states)
        note = self.stop_note()
        early = self.settled_early()
        return Results(
            tuple(s.task_id for s in states),
            np.asarray([s.successes for s in states], dtype=np.int64),
            np.asarray([s.counted for s in states], dtype=np.int64),
            np.asarray([s.cached + (s.gave_up if excluded == "runs" else
                                    s.infrastructure_errors) for s in states], dtype=np.int64),
            tuple(s.risk for s in states), source=source, protocol=protocol,
            excluded_reason="infrastructure errors or cached results" if cached else "",
            settled_early={s.task_id: early[s.task_id] for s in states if s.task_id in early},
            overrides=(note,) if note else ())
