"""What a run is, and what a harness must provide (the chapter-5 ``src/adapter.ts``).

A :class:`Task` is what the agent is asked to do; a :class:`RunResult` is what
one run of it produced. Anything with a ``run(task, *, seed)`` method that
returns a ``RunResult`` is a :class:`HarnessAdapter`: the simulator in
:mod:`passk.flaky_adapter`, or a wrapper around your own agent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from passk._public import publish

__all__ = ["HarnessAdapter", "InfrastructureError", "RunResult", "SettingAdapter", "Task",
           "ToolCall"]


@dataclass(frozen=True)
class Task:
    """One task of a suite.

    Parameters
    ----------
    task_id : str
        Stable identifier; results are grouped by it.
    instruction : str
        What the agent is told. Never the expected answer.
    risk : str
        Risk label from the task set (``"read-only"``, ``"high-risk-write"``, ...);
        a :class:`passk.stability.RepeatPolicy` turns it into a number of runs.
    previously_flaky : bool
        The task has been flaky before; the repeat policy runs it as often as
        a high-risk write.
    params : Mapping
        Anything else the adapter's tasks take (not compared, not hashed).
    """

    task_id: str
    instruction: str = ""
    risk: str = "read-only"
    previously_flaky: bool = False
    params: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class ToolCall:
    """One step of a trajectory: a tool, what it was asked, what it answered."""

    tool: str
    argument: str = ""
    observation: str = ""

    def __str__(self) -> str:
        return f"{self.tool}({self.argument}) -> {self.observation}"


@dataclass(frozen=True)
class RunResult:
    """What one run of one task produced.

    Parameters
    ----------
    task_id : str
        The task that was run.
    run_index : int
        Position among the task's repeats. The runner sets it; an adapter
        cannot know it, so whatever the adapter puts here is replaced.
    success : bool
        The grader's verdict on the run.
    final_state : Mapping or None
        The state the run left behind, as the grader saw it.
    trajectory : tuple of ToolCall
        The tool calls in the order they were made.
    seconds : float
        Wall-clock (or simulated) duration of the run.
    error : str or None
        ``"ExceptionType: message"`` when the run raised; such a run failed.
    infrastructure_error : bool
        The harness, not the agent, failed (a rate limit, a dead sandbox).
        Such runs are not agent failures and are left out of the counts.
    cached : bool
        The result was served from a cache rather than produced by a fresh
        run. A cached repeat is not an independent repeat and is not counted.
    seed : int or None
        The seed the run was given; the runner fills it in.
    """

    task_id: str
    run_index: int
    success: bool
    final_state: Mapping[str, Any] | None = None
    trajectory: tuple[ToolCall, ...] = ()
    seconds: float = 0.0
    error: str | None = None
    infrastructure_error: bool = False
    cached: bool = False
    seed: int | None = None

    @property
    def counted(self) -> bool:
        """Whether this run is evidence about the agent (fresh and not an infrastructure error)."""
        return not (self.infrastructure_error or self.cached)


class InfrastructureError(RuntimeError):
    """Raise from an adapter when the harness failed, not the agent.

    The runner records such a run with ``infrastructure_error=True``, retries
    it, and never counts it as an agent failure.
    """


@runtime_checkable
class HarnessAdapter(Protocol):
    """Anything that can run a task once from a given seed."""

    def run(self, task: Task, *, seed: int) -> RunResult:
        """Run ``task`` once; the same seed must give the same result."""
        ...


@runtime_checkable
class SettingAdapter(HarnessAdapter, Protocol):
    """An adapter whose variables can be set one at a time: what ``passk attribute --run``
    varies.

    ``with_setting(name, value)`` returns a new adapter, this one with the variable
    ``name`` set to ``value`` and everything else as it was (the adapter itself is not
    changed), so that a baseline and its variants run the same seeds side by side. An
    unknown name or a value the variable cannot take raises ``ValueError`` naming it.
    ``settings()`` gives the variables and their current values.
    """

    def with_setting(self, name: str, value: Any) -> SettingAdapter:
        """This adapter with one variable changed."""
        ...

    def settings(self) -> Mapping[str, Any]:
        """The variables ``with_setting`` takes, with their current values."""
        ...


publish(globals())  # the names passk.__all__ takes from here say 'passk' (passk._public)
