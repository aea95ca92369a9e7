"""What a run did, step by step, in one shape for every producer.

A :class:`Trajectory` is one run of one task: its grader's verdict and its
:class:`Step` s, each a tool the agent called, with what it asked and what the
tool answered. The readers (``passk run``'s log, Inspect's sample epochs,
tau2's simulations; :func:`passk.results.transcripts.read_trajectories`) each turn their
producer's record into this shape, so that
:mod:`passk.analysis.divergence` can line up the passing and failing runs of a
flaky task and find where they part, whoever ran them.

Steps are kept as the producer recorded them, normalised only as a reader of
the trajectory would read them (:func:`normalise`): white space collapsed,
arguments as JSON with sorted keys, and an answer that is a list kept as its
items (:attr:`Step.items`), in the order the tool gave them, so that the same
items in another order can be told from other items.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["IGNORED", "Step", "Trajectory", "by_task", "normalise", "step_items",
           "step_lines", "steps_of_calls"]

#: What every reader leaves out of a step, said with every comparison.
IGNORED = ("white space within text", "the order of keys in arguments",
           "ids of tool calls", "timings and latencies",
           "the model's own text between tool calls", "token usage")

_SPACE = re.compile(r"\s+")


def normalise(value: Any) -> str:
    """Text as a reader of the trajectory compares it: JSON for structures (keys sorted),
    white space collapsed, ends stripped.

    Examples
    --------
    >>> normalise("  restart \\n first ")
    'restart first'
    >>> normalise({"b": 1, "a": [1, 2]})
    '{"a": [1, 2], "b": 1}'
    >>> normalise(None)
    ''
    """
    if value is None:
        return ""
    if not isinstance(value, str):
        value = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return _SPACE.sub(" ", value).strip()


def step_items(observation: Any) -> tuple[str, ...] | None:
    """An answer's items when it is a list (a JSON array, or a Python list's repr), in the
    order given; None for any other answer.

    Examples
    --------
    >>> step_items("['rb-pay-restart', 'rb-pay-escalate']")
    ('rb-pay-restart', 'rb-pay-escalate')
    >>> step_items('["b", {"x": 1}]')
    ('b', '{"x": 1}')
    >>> step_items("restarted") is None
    True
    """
    if isinstance(observation, (list, tuple)):
        return tuple(normalise(x) for x in observation)
    if not isinstance(observation, str):
        return None
    text = observation.strip()
    if not (text.startswith("[") and text.endswith("]")):
        return None
    parsed: Any
    try:
        parsed = json.loads(text)
    except ValueError:
        try:
            parsed = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    except RecursionError:
        return None
    if not isinstance(parsed, list):
        return None
    return tuple(normalise(x) for x in parsed)


def step_lines(observation: Any) -> tuple[str, ...] | None:
    """A text answer's lines (each normalised, blank ones left out) when it has two or more,
    so that the same lines in another order (a terminal's output, a log) can be told from
    other lines; None for a list, a structure, or text of one line.

    Examples
    --------
    >>> step_lines("b  HEAD@{2}\\na HEAD@{1}\\n")
    ('b HEAD@{2}', 'a HEAD@{1}')
    >>> step_lines("one line") is None, step_lines(["a", "b"]) is None
    (True, True)
    """
    if not isinstance(observation, str) or step_items(observation) is not None:
        return None
    lines = tuple(normalise(line) for line in observation.splitlines() if line.strip())
    return lines if len(lines) >= 2 else None


@dataclass(frozen=True)
class Step:
    """One step of a run: a tool called, with its arguments and its answer.

    Parameters
    ----------
    kind : str
        ``"tool"`` for a tool call and its answer.
    name : str
        The tool's name.
    args : str
        The arguments, normalised (:func:`normalise`).
    observation : str
        The answer, normalised; ``""`` when none was recorded.
    items : tuple of str or None
        The answer's items in the order given, when the answer is a list.
    error : bool
        The tool reported an error (its answer is the error's text).
    lines : tuple of str or None
        A text answer's lines, when it has several (:func:`step_lines`); not compared (the
        answer itself is), only used to name the same lines in another order.

    Examples
    --------
    >>> s = Step.of("search_runbook", "payment-service", "['a', 'b']")
    >>> s.items, str(s)
    (('a', 'b'), 'search_runbook(payment-service) -> [a, b]')
    """

    kind: str
    name: str
    args: str = ""
    observation: str = ""
    items: tuple[str, ...] | None = None
    error: bool = False
    lines: tuple[str, ...] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, name: Any, args: Any = None, observation: Any = None, *,
           error: bool = False) -> Step:
        """A tool step from what a producer recorded, normalised."""
        return cls("tool", normalise(name), normalise(args), normalise(observation),
                   step_items(observation), bool(error), step_lines(observation))

    def parts(self) -> tuple[str, ...] | None:
        """The answer's parts whose order may differ: a list's items, else a text's lines."""
        return self.items if self.items is not None else self.lines

    def answered(self) -> str:
        """The answer as shown: a list as ``[a, b]``, else the text."""
        if self.items is not None:
            return "[" + ", ".join(self.items) + "]"
        return self.observation

    def __str__(self) -> str:
        return f"{self.name}({self.args}) -> {self.answered()}"


@dataclass(frozen=True)
class Trajectory:
    """One run of one task: the grader's verdict, and its steps (None when not recorded).

    Parameters
    ----------
    task_id : str
    run : str
        The run as its producer names it (``"run 3"``, ``"epoch 2"``, ``"trial 1"``).
    success : bool
    steps : tuple of Step or None
        None when the producer recorded no trajectory for the run.
    """

    task_id: str
    run: str
    success: bool
    steps: tuple[Step, ...] | None = field(default=None)

    @property
    def recorded(self) -> bool:
        """Whether the run's steps were recorded."""
        return self.steps is not None


def steps_of_calls(calls: Iterable[Any]) -> tuple[Step, ...]:
    """Steps from objects with ``tool``, ``argument`` and ``observation`` (passk's
    :class:`~passk.adapter.ToolCall`) or mappings with those keys.

    Examples
    --------
    >>> steps_of_calls([{"tool": "q", "argument": "s", "observation": "0.12"}])
    (Step(kind='tool', name='q', args='s', observation='0.12', items=None, error=False),)
    """
    out = []
    for c in calls:
        get = c.get if isinstance(c, Mapping) else (lambda k, c=c: getattr(c, k, None))
        out.append(Step.of(get("tool"), get("argument"), get("observation")))
    return tuple(out)


def by_task(trajectories: Sequence[Trajectory]) -> dict[str, list[Trajectory]]:
    """The runs grouped by task, tasks in order of first appearance."""
    out: dict[str, list[Trajectory]] = {}
    for t in trajectories:
        out.setdefault(t.task_id, []).append(t)
    return out
