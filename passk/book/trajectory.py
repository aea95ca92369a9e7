"""Grade the path, not only the destination: rules over a run's ordered tool calls.

A run can end in the right state by the wrong path: it restarted a payment
service and then escalated, it named the right root cause without reading
the evidence, it ran past its step budget. Outcome grading cannot see any of
that. Here each rule is a small named predicate over the trajectory that
returns a :class:`Verdict` with a message; :func:`grade_trajectory` applies a
list of them, and :func:`two_track_report` scores a task's runs on the
outcome track, the trajectory track and both, and counts the runs that were
"right but lucky": outcome passed, trajectory failed.

:func:`trajectory_table` shows one run's path as a short table, a loop of
repeated calls folded into one row per call; :func:`side_by_side` puts
several runs' paths next to each other, step by step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from passk.adapter import RunResult, ToolCall
from passk.metrics import estimate_pass_hat_k
from passk.render.words import plural

__all__ = [
    "Rule",
    "TrackReport",
    "TrajectoryTable",
    "Verdict",
    "at_most",
    "degrade_after_failure",
    "escalate_before_restart",
    "evidence_before_conclusion",
    "grade_trajectory",
    "read_before_write",
    "side_by_side",
    "suite_tracks",
    "trajectory_table",
    "two_track_report",
    "within_steps",
]


@dataclass(frozen=True)
class Verdict:
    """A rule's finding on one trajectory."""

    rule: str
    passed: bool
    message: str = ""


@dataclass(frozen=True)
class Rule:
    """A named predicate over a trajectory.

    ``check`` takes the tool calls in order and returns ``None`` when the rule
    holds, or a message saying where it broke.
    """

    name: str
    check: Callable[[Sequence[ToolCall]], str | None]

    def __call__(self, trajectory: Sequence[ToolCall]) -> Verdict:
        """The rule's verdict on ``trajectory``."""
        problem = self.check(trajectory)
        return Verdict(self.name, problem is None, problem or "")


def _positions(trajectory: Sequence[ToolCall], tools: Iterable[str]) -> list[int]:
    wanted = set(tools)
    return [i for i, call in enumerate(trajectory) if call.tool in wanted]


def escalate_before_restart(restart: str = "restart_service", escalate: str = "escalate") -> Rule:
    """No restart may come before the escalation (the payment runbook's order).

    Examples
    --------
    >>> rule = escalate_before_restart()
    >>> rule([ToolCall("restart_service"), ToolCall("escalate")]).passed
    False
    >>> rule([ToolCall("escalate")]).passed
    True
    """
    def check(t: Sequence[ToolCall]) -> str | None:
        restarts, escalations = _positions(t, [restart]), _positions(t, [escalate])
        if restarts and (not escalations or restarts[0] < escalations[0]):
            return f"step {restarts[0] + 1}: {restart} before any {escalate}"
        return None
    return Rule("escalate-before-restart", check)


def at_most(tool: str, times: int) -> Rule:
    """``tool`` is called at most ``times`` times.

    Examples
    --------
    >>> at_most("restart_service", 1)([ToolCall("restart_service")] * 3).message
    'restart_service called 3 times (at most 1 allowed)'
    """
    if times < 0:
        raise ValueError(f"times ({times}) must be at least 0")

    def check(t: Sequence[ToolCall]) -> str | None:
        count = len(_positions(t, [tool]))
        return f"{tool} called {count} times (at most {times} allowed)" if count > times else None
    return Rule(f"at-most-{times}-{tool}", check)


def read_before_write(reads: Iterable[str] = ("query_metrics",),
                      writes: Iterable[str] = ("restart_service", "escalate")) -> Rule:
    """No write action before at least one successful read.

    Examples
    --------
    >>> read_before_write()([ToolCall("escalate"), ToolCall("query_metrics", "", "0.12")]).passed
    False
    """
    reads, writes = tuple(reads), tuple(writes)

    def check(t: Sequence[ToolCall]) -> str | None:
        first_read = next((i for i, c in enumerate(t)
                           if c.tool in reads and c.observation != "timeout"), None)
        first_write = next((i for i, c in enumerate(t) if c.tool in writes), None)
        if first_write is not None and (first_read is None or first_write < first_read):
            return f"step {first_write + 1}: {t[first_write].tool} before reading {'/'.join(reads)}"
        return None
    return Rule("read-before-write", check)


def degrade_after_failure(fallback: str = "escalate", failure: str = "timeout",
                          retries: int = 1) -> Rule:
    """After a tool keeps failing, the agent hands over (``fallback``) rather than pressing on.

    A failed call may be retried up to ``retries`` times; after that the next
    call that is not a retry of the same tool must be ``fallback``, and the run
    must not end without it.

    Examples
    --------
    >>> t = [ToolCall("query_metrics", "", "timeout"), ToolCall("query_metrics", "", "timeout"),
    ...      ToolCall("restart_service")]
    >>> degrade_after_failure()(t).message
    'step 3: restart_service after query_metrics failed twice; expected escalate'
    """
    def check(t: Sequence[ToolCall]) -> str | None:
        streak, tool = 0, None
        for i, call in enumerate(t):
            if call.observation == failure:
                streak = streak + 1 if call.tool == tool else 1
                tool = call.tool
                continue
            if streak > retries and call.tool != fallback:
                times = "twice" if streak == 2 else f"{streak} times"
                return f"step {i + 1}: {call.tool} after {tool} failed {times}; expected {fallback}"
            streak, tool = 0, None
        if streak > retries:
            if tool == fallback:
                return f"the run ended with {fallback} itself failing; nobody took over"
            return f"the run ended after {tool} failed, without {fallback}"
        return None
    return Rule("degrade-after-failure", check)


def within_steps(max_steps: int) -> Rule:
    """At most ``max_steps`` tool calls.

    Examples
    --------
    >>> within_steps(2)([ToolCall("a")] * 3).message
    '3 steps (budget 2)'
    """
    def check(t: Sequence[ToolCall]) -> str | None:
        return f"{len(t)} steps (budget {max_steps})" if len(t) > max_steps else None
    return Rule(f"within-{max_steps}-steps", check)


def evidence_before_conclusion(evidence: Iterable[str], conclude: str = "submit_diagnosis",
                               minimum: int = 2) -> Rule:
    """A conclusion is preceded by at least ``minimum`` distinct evidence tools that answered.

    Examples
    --------
    >>> rule = evidence_before_conclusion(["query_metrics", "read_config_log"])
    >>> rule([ToolCall("query_metrics", "", "ok"), ToolCall("submit_diagnosis")]).passed
    False
    """
    evidence = tuple(evidence)

    def check(t: Sequence[ToolCall]) -> str | None:
        end = next((i for i, c in enumerate(t) if c.tool == conclude), None)
        if end is None:
            return None
        seen = {c.tool for c in t[:end] if c.tool in evidence and c.observation != "timeout"}
        if len(seen) < minimum:
            return (f"step {end + 1}: {conclude} after reading "
                    f"{plural(len(seen), 'evidence source', zero='no')} "
                    f"(at least {minimum} required)")
        return None
    return Rule("evidence-before-conclusion", check)


def grade_trajectory(trajectory: Sequence[ToolCall], rules: Sequence[Rule]) -> tuple[Verdict, ...]:
    """Apply every rule; the trajectory passes when every verdict passed."""
    return tuple(rule(trajectory) for rule in rules)


@dataclass(frozen=True)
class TrackReport:
    """One task's runs scored on both tracks.

    ``outcome``, ``trajectory`` and ``both`` are boolean arrays over runs;
    ``right_but_lucky`` counts runs whose outcome passed while their path failed.
    """

    task_id: str
    outcome: np.ndarray
    trajectory: np.ndarray
    violations: tuple[tuple[Verdict, ...], ...]

    @property
    def both(self) -> np.ndarray:
        """Runs that passed on both tracks."""
        both: np.ndarray = self.outcome & self.trajectory
        return both

    @property
    def right_but_lucky(self) -> int:
        """Runs whose outcome passed while their path failed."""
        return int((self.outcome & ~self.trajectory).sum())

    def pass_hat_k(self, k: int) -> dict[str, float]:
        """pass^k on the outcome track, the trajectory track, and both together."""
        n = self.outcome.size
        return {track: float(estimate_pass_hat_k(int(x.sum()), n, k))
                for track, x in (("outcome", self.outcome), ("trajectory", self.trajectory),
                                 ("both", self.both))}


def two_track_report(task_id: str, results: Sequence[RunResult],
                     rules: Sequence[Rule]) -> TrackReport:
    """Score a task's runs on outcome and on trajectory.

    Examples
    --------
    >>> runs = [RunResult("t", 0, True, trajectory=(ToolCall("escalate"),)),
    ...         RunResult("t", 1, True, trajectory=(ToolCall("restart_service"),
    ...                                             ToolCall("escalate")))]
    >>> report = two_track_report("t", runs, [escalate_before_restart()])
    >>> report.right_but_lucky, report.pass_hat_k(1)
    (1, {'outcome': 1.0, 'trajectory': 0.5, 'both': 0.5})
    """
    counted = [r for r in results if r.counted]
    verdicts = tuple(grade_trajectory(r.trajectory, rules) for r in counted)
    return TrackReport(
        task_id,
        np.array([r.success for r in counted], dtype=bool),
        np.array([all(v.passed for v in vs) for vs in verdicts], dtype=bool),
        verdicts,
    )


def suite_tracks(reports: Sequence[TrackReport], k: int) -> dict[str, float]:
    """Suite-level view of two-track reports: mean pass^k per track, and right-but-lucky runs.

    Examples
    --------
    >>> ok = RunResult("a", 0, True, trajectory=(ToolCall("escalate"),))
    >>> lucky = RunResult("b", 0, True, trajectory=(ToolCall("restart_service"),))
    >>> reports = [two_track_report(r.task_id, [r], [escalate_before_restart()])
    ...            for r in (ok, lucky)]
    >>> suite_tracks(reports, 1)
    {'outcome': 1.0, 'trajectory': 0.5, 'both': 0.5, 'right_but_lucky': 1.0, 'runs': 2.0}
    """
    if not reports:
        raise ValueError("no task reports: an empty suite is not evidence")
    per_task = [r.pass_hat_k(k) for r in reports]
    summary = {track: float(np.mean([t[track] for t in per_task]))
               for track in ("outcome", "trajectory", "both")}
    summary["right_but_lucky"] = float(sum(r.right_but_lucky for r in reports))
    summary["runs"] = float(sum(r.outcome.size for r in reports))
    return summary


@dataclass(frozen=True)
class TrajectoryTable:
    """One run's trajectory as a short table; displays as Markdown in a notebook.

    ``title`` says which run and whether it passed, ``note`` how it ended (its
    final state, its error) and what every call shared; ``rows`` hold the
    columns named in ``header`` (step numbers, the call, its answer, a repeat
    count, and, when asked for, timing). ``str()`` gives the plain-text table.
    """

    title: str
    note: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]

    def __str__(self) -> str:
        from passk.render.tables import format_rows
        note = f"\n{self.note}" if self.note else ""
        return f"{self.title}{note}\n{format_rows(self.header, self.rows)}"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_markdown_(self) -> str:
        from passk.render.tables import format_rows
        body = format_rows(self.header, self.rows, markdown=True)  # cells escaped there
        note = f" {self.note}" if self.note else ""
        return f"**{self.title}.**{note}\n\n{body}\n"


def _fold(keys: Sequence[tuple[str, str, str]], max_period: int = 4) -> list[tuple[int, int, int]]:
    """Blocks ``(start, period, repeats)`` covering ``keys``: a loop becomes one block."""
    blocks, i = [], 0
    while i < len(keys):
        best = (1, 1)  # (period, repeats)
        for period in range(1, max_period + 1):
            repeats = 1
            while keys[i + repeats * period:i + (repeats + 1) * period] == \
                    keys[i:i + period] and i + (repeats + 1) * period <= len(keys):
                repeats += 1
            if repeats > 1 and period * repeats > best[0] * best[1]:
                best = (period, repeats)
        blocks.append((i, *best))
        i += best[0] * best[1]
    return blocks


def _steps(numbers: Sequence[int]) -> str:
    if len(numbers) <= 3:
        return ", ".join(map(str, numbers))
    return f"{numbers[0]}, {numbers[1]}, ..., {numbers[-1]}"


def _timing(calls: Sequence[ToolCall]) -> str:
    """What timed calls' records say (duck-typed: latency, deadline, parallel, race).

    ``calls`` are the repeats of one row: their latencies, then what they share.
    """
    latencies = [getattr(c, "latency", None) for c in calls]
    if any(x is None for x in latencies):
        return ""
    notes = []
    for c in calls:
        deadline = getattr(c, "deadline", None)
        if deadline is not None and c.latency > deadline:  # type: ignore[attr-defined]
            notes.append(f"over the {deadline:.2f} s deadline")
        race = getattr(c, "race", "")
        if race == "won":
            notes.append("in parallel, done first: overwritten")
        elif race == "lost":
            notes.append("in parallel, done last: its answer stays")
        elif getattr(c, "parallel", False):
            notes.append("in parallel")
    shared = "; ".join(dict.fromkeys(notes))
    seconds = ", ".join(f"{x:.2f} s" for x in latencies)
    return f"{seconds}: {shared}" if shared else seconds


def trajectory_table(run: RunResult, *, title: str | None = None, label: str = "",
                     timing: bool | None = None) -> TrajectoryTable:
    """A run's tool calls as a short table, with a loop folded into one row per call.

    Consecutive repeats of the same block of calls (same tool, argument and
    answer) are shown once, with the step numbers they took and how many
    times they ran: the on-call assistant's three restarts are two rows, not
    six. When every call has the same argument, the note names it once and
    the rows show the tool alone.

    Parameters
    ----------
    run : RunResult
        The run to show.
    title : str, optional
        The table's title; by default the task, the run's number (counted
        from 1: ``run_index + 1``) and whether it passed. The note below it
        gives the final state and any error.
    label : str, default ""
        Put in front of the title, e.g. the configuration the run came from.
    timing : bool, optional
        Add a column with each call's recorded latency, and whether it timed
        out or ran in parallel (calls that carry ``latency``, such as
        :class:`passk.flaky_adapter.TimedCall`). By default the column is
        shown only when some call timed out or ran in parallel.

    Returns
    -------
    TrajectoryTable
        Prints as a plain table; a notebook displays it as Markdown.

    Examples
    --------
    >>> calls = (ToolCall("query_metrics", "svc", "0.12"),
    ...          ToolCall("search_runbook", "svc", "['rb-restart']"),
    ...          *[ToolCall("restart_service", "svc", "restarted"),
    ...            ToolCall("query_metrics", "svc", "0.12")] * 3)
    >>> print(trajectory_table(RunResult("t", 0, False, {"restarts": 3}, calls)))
    t, run 1: failed
    Final state restarts=3. Every call on svc.
    steps    call             answer          times
    1        query_metrics    0.12
    2        search_runbook   ['rb-restart']
    3, 5, 7  restart_service  restarted       3
    4, 6, 8  query_metrics    0.12            3
    """
    calls = list(run.trajectory)
    if timing is None:
        timing = any(getattr(c, "parallel", False) or "deadline" in _timing([c])
                     for c in calls)
    if title is None:
        title = (f"{run.task_id}, run {run.run_index + 1}: "
                 f"{'passed' if run.success else 'failed'}")
    title = f"{label}: {title}" if label else title
    notes = []
    if run.final_state:
        notes.append("Final state " + ", ".join(f"{k}={v}" for k, v in run.final_state.items()))
    if run.error:
        notes.append(run.error[:1].upper() + run.error[1:])
    one_argument = len({c.argument for c in calls}) == 1
    if one_argument and calls[0].argument:
        notes.append(f"Every call on {calls[0].argument}")
    keys = [(c.tool, c.argument, c.observation) for c in calls]
    rows = []
    for start, period, repeats in _fold(keys):
        for j in range(period):
            at = [start + j + r * period for r in range(repeats)]
            call = calls[at[0]]
            name = call.tool if one_argument else f"{call.tool}({call.argument})"
            row = [_steps([a + 1 for a in at]), name,
                   call.observation, str(repeats) if repeats > 1 else ""]
            if timing:
                row.append(_timing([calls[a] for a in at]))
            rows.append(tuple(row))
    header = ("steps", "call", "answer", "times") + (("timing",) if timing else ())
    return TrajectoryTable(title, "".join(f"{n}. " for n in notes).rstrip(), header,
                           tuple(rows))


def side_by_side(*runs: RunResult, labels: Sequence[str] | None = None) -> TrajectoryTable:
    """Several runs' tool calls next to each other, one row per step, then their final states.

    Where the runs fork is where their rows start to differ. Nothing is
    folded, so that step ``i`` of every run sits on row ``i``.

    Parameters
    ----------
    *runs : RunResult
        The runs to compare (at least one).
    labels : sequence of str, optional
        A column title per run; by default ``run N (pass)`` or ``run N
        (FAIL)``, with runs counted from 1.

    Returns
    -------
    TrajectoryTable
        Columns ``step`` and one per run; each cell is ``tool → answer``.

    Examples
    --------
    >>> a = RunResult("t", 0, True, {"escalated": True},
    ...               (ToolCall("search", "", "['b', 'a']"), ToolCall("escalate", "", "paged")))
    >>> b = RunResult("t", 1, False, {"escalated": False},
    ...               (ToolCall("search", "", "['a', 'b']"),))
    >>> print(side_by_side(a, b))
    t: runs 1 and 2 side by side
    step   run 1 (pass)         run 2 (FAIL)
    1      search → ['b', 'a']  search → ['a', 'b']
    2      escalate → paged
    final  escalated=True       escalated=False
    """
    if not runs:
        raise ValueError("side_by_side needs at least one run")
    if labels is None:
        labels = [f"run {r.run_index + 1} ({'pass' if r.success else 'FAIL'})" for r in runs]
    if len(labels) != len(runs):
        raise ValueError(f"{len(labels)} labels for {len(runs)} runs")
    longest = max(len(r.trajectory) for r in runs)
    rows = [tuple([str(i + 1)] + [f"{r.trajectory[i].tool} → {r.trajectory[i].observation}"
                                  if i < len(r.trajectory) else "" for r in runs])
            for i in range(longest)]
    rows.append(tuple(["final"] + [", ".join(f"{k}={v}" for k, v in (r.final_state or {}).items())
                                   for r in runs]))
    numbers = [str(r.run_index + 1) for r in runs]
    which = numbers[0] if len(numbers) == 1 else ", ".join(numbers[:-1]) + " and " + numbers[-1]
    tasks = ", ".join(dict.fromkeys(r.task_id for r in runs))
    return TrajectoryTable(f"{tasks}: run{'s' if len(runs) > 1 else ''} {which} side by side", "",
                           ("step", *labels), tuple(rows))
