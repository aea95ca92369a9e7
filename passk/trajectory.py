"""Grade the path, not only the destination: rules over a run's ordered tool calls.

A run can end in the right state by the wrong path: it restarted a payment
service and then escalated, it named the right root cause without reading
the evidence, it ran past its step budget. Outcome grading cannot see any of
that. Here each rule is a small named predicate over the trajectory that
returns a :class:`Verdict` with a message; :func:`grade_trajectory` applies a
list of them, and :func:`two_track_report` scores a task's runs on the
outcome track, the trajectory track and both, and counts the runs that were
"right but lucky": outcome passed, trajectory failed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from .adapter import RunResult, ToolCall
from .metrics import estimate_pass_hat_k

__all__ = [
    "Rule",
    "TrackReport",
    "Verdict",
    "at_most",
    "degrade_after_failure",
    "escalate_before_restart",
    "evidence_before_conclusion",
    "grade_trajectory",
    "read_before_write",
    "suite_tracks",
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
            return (f"step {end + 1}: {conclude} after reading {len(seen)} evidence source(s) "
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
        return self.outcome & self.trajectory

    @property
    def right_but_lucky(self) -> int:
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
