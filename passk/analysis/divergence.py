"""Where the passing and failing runs of a flaky task part: the first divergence.

For each task whose runs both pass and fail, :func:`first_divergence` lines
up the runs step by step (the *i*-th tool call of each) and finds the first
step at which some failing run did what no passing run did there: called
another tool (or none: the run had ended), asked with other arguments, got
another answer, or got the same items in another order. The failing runs are
grouped by what they did at that step, each group with its count among the
failures and among the passes, as a reader comparing two transcripts would
put it: "in 5 of 5 failures ``search_runbook`` answered [restart, escalate];
in 0 of 25 passes". When no step parts them it says why: no trajectory was
recorded, or every failing run did exactly what some passing run did (the
runs are identical up to the grader), or the runs vary but never apart.

Steps are compared as :mod:`passk.results.trajectory` normalises them, and
the report lists what that leaves out (:data:`~passk.results.trajectory.IGNORED`).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from passk.results.trajectory import IGNORED, Step, Trajectory, by_task
from passk.results.transcripts import read_trajectories

__all__ = ["KINDS", "STATUSES", "Divergence", "DivergenceGroup", "DivergenceReport",
           "divergence_report", "first_divergence", "read_divergences"]

#: How a failing run's step differs from every passing run's step there.
KINDS = ("ended", "tool", "arguments", "order", "observation")
#: What :func:`first_divergence` found for a task.
STATUSES = ("found", "no trajectory", "identical", "inseparable")

#: Runs named in a group, at most.
_NAMED = 5


@dataclass(frozen=True)
class DivergenceGroup:
    """The failing runs that did one thing at the step where the runs part.

    Attributes
    ----------
    step : Step or None
        What they did there (None: the run had ended).
    kind : str
        How it differs from what the passing runs did there (:data:`KINDS`), or
        ``"shared"`` when some passing run did the very same.
    failures, passes : int
        Failing and passing runs that did exactly this.
    reordered : int
        Passing runs that got the same items in another order.
    runs : tuple of str
        The first few failing runs of the group, by name.
    """

    step: Step | None
    kind: str
    failures: int
    passes: int
    reordered: int = 0
    runs: tuple[str, ...] = ()

    def did(self) -> str:
        """What the group did at the step, in words."""
        s = self.step
        if s is None:
            return "the run had ended (no step)"
        if self.kind in ("tool", "arguments"):
            return f"called {s.name}({s.args})"
        return f"{s.name}({s.args}) answered {s.answered()}"

    def sentence(self, failures: int, passes: int) -> str:
        """``in 5 of 5 failures search_runbook(...) answered [...]; in 0 of 25 passes``."""
        what = "lines" if self.step is not None and self.step.items is None else "items"
        more = (f"; the same {what} in another order in {self.reordered} of {passes} passes"
                if self.reordered else "")
        return (f"in {self.failures} of {failures} failures {self.did()}; in {self.passes} of "
                f"{passes} passes{more}")


@dataclass(frozen=True)
class Divergence:
    """The first step at which a flaky task's failing runs part from its passing runs.

    Attributes
    ----------
    task_id : str
    passes, failures : int
        The runs compared (runs without a recorded trajectory left out; see ``unrecorded``).
    status : str
        One of :data:`STATUSES`.
    step : int or None
        The step where they part, counted from 1.
    kind : str
        The kind of the largest group that parts (:data:`KINDS`); ``""`` when none.
    groups : tuple of DivergenceGroup
        The failing runs by what they did at the step, largest first.
    passing : tuple of (Step or None, int)
        What the passing runs did at the step, with counts, most common first.
    example : tuple of (str, str) or None
        A failing run and a passing run to read side by side at the step.
    sides : tuple of (tuple of Step, tuple of Step) or None
        Their steps up to and including the step where they part.
    whole : tuple of (tuple of Step, tuple of Step) or None
        Their steps from first to last (what the HTML view aligns side by side).
    unrecorded : int
        Runs of the task without a recorded trajectory, left out.
    why : str
        The finding in one sentence.
    """

    task_id: str
    passes: int
    failures: int
    status: str
    step: int | None = None
    kind: str = ""
    groups: tuple[DivergenceGroup, ...] = ()
    passing: tuple[tuple[Step | None, int], ...] = ()
    example: tuple[str, str] | None = None
    sides: tuple[tuple[Step, ...], tuple[Step, ...]] | None = None
    unrecorded: int = 0
    why: str = ""
    whole: tuple[tuple[Step, ...], tuple[Step, ...]] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The finding as JSON-ready values."""
        def step(s: Step | None) -> dict[str, Any] | None:
            return None if s is None else {"tool": s.name, "arguments": s.args,
                                           "answer": s.observation, "items": (
                                               list(s.items) if s.items is not None else None),
                                           "lines": (list(s.lines) if s.lines is not None
                                                     else None),
                                           "error": s.error}
        return {
            "task_id": self.task_id, "passes": self.passes, "failures": self.failures,
            "status": self.status, "step": self.step, "kind": self.kind, "why": self.why,
            "groups": [{"step": step(g.step), "kind": g.kind, "failures": g.failures,
                        "passes": g.passes, "reordered_in_passes": g.reordered,
                        "runs": list(g.runs),
                        "sentence": g.sentence(self.failures, self.passes)}
                       for g in self.groups],
            "passing": [{"step": step(s), "passes": n} for s, n in self.passing],
            "example": (None if self.example is None else
                        {"failing_run": self.example[0], "passing_run": self.example[1],
                         "failing_steps": [str(s) for s in self.sides[0]] if self.sides else [],
                         "passing_steps": [str(s) for s in self.sides[1]] if self.sides
                         else [],
                         "failing_all_steps": [step(s) for s in self.whole[0]] if self.whole
                         else [],
                         "passing_all_steps": [step(s) for s in self.whole[1]] if self.whole
                         else []}),
            "unrecorded": self.unrecorded,
        }


@dataclass(frozen=True)
class DivergenceReport:
    """The first divergence of every flaky task in a file.

    Attributes
    ----------
    source : str
        The file, as given.
    tasks : tuple of Divergence
        One per flaky task (its runs both pass and fail), in the file's order.
    stable : tuple of str
        Tasks whose runs all pass or all fail: nothing to part.
    ignored : tuple of str
        What the comparison leaves out of a step.
    """

    source: str
    tasks: tuple[Divergence, ...]
    stable: tuple[str, ...] = ()
    ignored: tuple[str, ...] = field(default=IGNORED)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready values (what ``passk attribute --json`` prints)."""
        return {"source": self.source, "flaky_tasks": [d.to_dict() for d in self.tasks],
                "stable_tasks": list(self.stable), "ignored": list(self.ignored),
                "compared": "the i-th tool call of each run: tool, arguments (JSON, keys "
                            "sorted), answer (white space collapsed; a list's items, or a "
                            "text's lines, in the order the tool gave them, the same items "
                            "or lines in another order "
                            "reported as 'order')"}


def _at(run: Trajectory, i: int) -> Step | None:
    steps = run.steps or ()
    return steps[i] if i < len(steps) else None


def _kind(s: Step | None, passing: Sequence[Step | None]) -> str:
    """How ``s`` differs from every passing run's step at the same place."""
    if s in passing:
        return "shared"
    if s is None:
        return "ended"
    others = [p for p in passing if p is not None]
    same_tool = [p for p in others if p.name == s.name and p.kind == s.kind]
    if not same_tool:
        return "tool"
    same_args = [p for p in same_tool if p.args == s.args]
    if not same_args:
        return "arguments"
    if _same_parts(s, same_args):
        return "order"
    return "observation"


def _same_parts(s: Step, others: Sequence[Step]) -> bool:
    """Some other step's answer has the same parts (list items, text lines) in another
    order."""
    mine = s.parts()
    if mine is None:
        return False
    return any((p.items is None) == (s.items is None) and p.parts() is not None
               and sorted(p.parts() or ()) == sorted(mine) for p in others)


def _reordered(s: Step | None, passing: Sequence[Step | None]) -> int:
    if s is None or s.parts() is None:
        return 0
    return sum(1 for p in passing if p is not None and p != s and p.name == s.name
               and p.args == s.args and _same_parts(s, [p]))


def _nearest(s: Step | None, passes: Sequence[Trajectory], i: int) -> Trajectory:
    """The passing run to read beside a failing one: the same items in another order, else
    the same tool and arguments, else the same tool, else the first."""
    def closeness(r: Trajectory) -> int:
        p = _at(r, i)
        if s is None or p is None or p.name != s.name:
            return 0
        if p.args != s.args:
            return 1
        same_items = _same_parts(s, [p])
        return 3 if same_items else 2
    return max(passes, key=closeness)  # the first of the closest: max keeps the first


def _part(task: str, fails: Sequence[Trajectory], passes: Sequence[Trajectory], i: int,
          unrecorded: int) -> Divergence:
    at_pass = [_at(r, i) for r in passes]
    counts = Counter(_at(r, i) for r in fails)
    groups = []
    for s, n in counts.most_common():
        kind = _kind(s, at_pass)
        groups.append(DivergenceGroup(
            s, kind, n, sum(1 for p in at_pass if p == s), _reordered(s, at_pass),
            tuple(r.run for r in fails if _at(r, i) == s)[:_NAMED]))
    groups.sort(key=lambda g: (g.kind == "shared", -g.failures))
    first = groups[0]
    failing = next(r for r in fails if _at(r, i) == first.step)
    passing_run = _nearest(first.step, passes, i)
    whole = (tuple(failing.steps or ()), tuple(passing_run.steps or ()))
    sides = (whole[0][:i + 1], whole[1][:i + 1])
    why = f"the runs part at step {i + 1}: " + first.sentence(len(fails), len(passes))
    return Divergence(task, len(passes), len(fails), "found", i + 1, first.kind,
                      tuple(groups), tuple(Counter(at_pass).most_common()),
                      (failing.run, passing_run.run), sides, unrecorded, why, whole)


def first_divergence(runs: Sequence[Trajectory]) -> Divergence:
    """The first step at which a task's failing runs part from its passing runs.

    Parameters
    ----------
    runs : sequence of Trajectory
        The runs of one task, passing and failing.

    Returns
    -------
    Divergence
        ``status`` says what was found: ``"found"`` (the step, its kind and the
        groups), ``"no trajectory"`` (no run, or no passing or no failing run,
        recorded steps), ``"identical"`` (every failing run's steps are those
        of some passing run: the runs are identical up to the grader) or
        ``"inseparable"`` (they vary, but at every step each failing run did
        what some passing run did there).

    Raises
    ------
    ValueError
        When ``runs`` is empty or holds more than one task.

    Notes
    -----
    Runs are aligned by position: the *i*-th step of each run is compared
    with the *i*-th of every other. The first divergence is the least *i*
    at which some failing run's step (or its absence) occurs in no passing
    run at *i*. Variation that every outcome shares (passing runs that differ
    among themselves) is passed over, since it cannot tell a failure from a pass.

    Examples
    --------
    >>> from passk.results.trajectory import Step, Trajectory
    >>> def run(name, ok, order):
    ...     return Trajectory("t", name, ok, (Step.of("q", "s", "0.12"),
    ...                                       Step.of("search", "s", str(order))))
    >>> runs = [run("r0", True, ["a", "b"]), run("r1", True, ["b", "a"]),
    ...         run("r2", False, ["a", "c"]), run("r3", True, ["c", "b"])]
    >>> d = first_divergence(runs)
    >>> d.step, d.kind
    (2, 'observation')
    >>> print(d.why)
    the runs part at step 2: in 1 of 1 failures search(s) answered [a, c]; in 0 of 3 passes
    """
    if not runs:
        raise ValueError("runs is empty: a task's runs are needed")
    tasks = {r.task_id for r in runs}
    if len(tasks) != 1:
        raise ValueError(f"runs hold {len(tasks)} tasks ({sorted(tasks)[:3]}...); pass one "
                         "task's runs")
    task = runs[0].task_id
    recorded = [r for r in runs if r.recorded]
    unrecorded = len(runs) - len(recorded)
    passes = [r for r in recorded if r.success]
    fails = [r for r in recorded if not r.success]
    n_pass, n_fail = sum(r.success for r in runs), sum(not r.success for r in runs)
    if not passes or not fails or all(not r.steps for r in recorded):
        said = ("no run's trajectory is recorded" if not recorded else
                "no run recorded a tool call" if all(not r.steps for r in recorded) else
                f"no {'passing' if not passes else 'failing'} run's trajectory is recorded")
        return Divergence(task, n_pass, n_fail, "no trajectory", unrecorded=unrecorded,
                          why=f"cannot compare: {said} ({unrecorded} of {len(runs)} runs "
                          "without one)")
    longest = max(len(r.steps or ()) for r in recorded)
    for i in range(longest):
        at_pass = {_at(r, i) for r in passes}
        if any(_at(r, i) not in at_pass for r in fails):
            return _part(task, fails, passes, i, unrecorded)
    left = f" ({unrecorded} runs without a trajectory left out)" if unrecorded else ""
    pass_steps = {r.steps for r in passes}
    if all(r.steps in pass_steps for r in fails):
        return Divergence(task, len(passes), len(fails), "identical", unrecorded=unrecorded,
                          why="the runs are identical up to the grader: every failing run "
                          "made the very steps of some passing run (the cause is in what was "
                          f"not recorded, or in the grading){left}")
    return Divergence(task, len(passes), len(fails), "inseparable", unrecorded=unrecorded,
                      why="no step parts the failures from the passes: the runs vary, but at "
                      f"every step each failing run did what some passing run did there{left}")


def divergence_report(trajectories: Sequence[Trajectory], source: str = "") -> DivergenceReport:
    """:func:`first_divergence` for every flaky task among ``trajectories``.

    Examples
    --------
    >>> from passk.results.trajectory import Trajectory
    >>> r = divergence_report([Trajectory("a", "0", True, ()), Trajectory("b", "0", False)])
    >>> r.tasks, r.stable
    ((), ('a', 'b'))
    """
    flaky, stable = [], []
    for task, runs in by_task(trajectories).items():
        outcomes = {r.success for r in runs}
        if len(outcomes) == 2:
            flaky.append(first_divergence(runs))
        else:
            stable.append(task)
    return DivergenceReport(source, tuple(flaky), tuple(stable))


def read_divergences(path: str | os.PathLike[str], *, format: str | None = None,
                     **options: Any) -> DivergenceReport:
    """The first divergence of every flaky task of a file (:func:`read_trajectories`'s).

    Examples
    --------
    >>> import pathlib, tempfile, json
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "log.jsonl"
    >>> rec = lambda i, ok, a: {"task_id": "t", "trial": i, "success": ok, "trajectory": [
    ...     {"tool": "search", "argument": "s", "observation": json.dumps(a)}]}
    >>> _ = p.write_text("".join(json.dumps(rec(i, ok, a)) + "\\n" for i, (ok, a) in
    ...                          enumerate([(True, ["x", "y"]), (False, ["y", "x"])])))
    >>> read_divergences(p).tasks[0].kind
    'order'
    """
    return divergence_report(read_trajectories(path, format=format, **options), os.fspath(path))
