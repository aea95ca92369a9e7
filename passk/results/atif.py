"""Harbor's agent logs (terminal-bench 2): each trial's ATIF trajectory as passk's steps.

A Harbor trial folder holds the trial's ``result.json`` and the agent's log folder
``agent/`` (``TrialPaths.agent_dir``, ``harbor/models/trial/paths.py``, harbor 0.26.0),
where agents that record their run write ``trajectory.json`` in ATIF, the Agent Trajectory
Interchange Format (``harbor/models/trajectories/``): a ``Trajectory`` of ``steps``, each
with its ``source`` (``system``, ``user``, ``agent``), the agent's ``tool_calls``
(``tool_call_id``, ``function_name``, ``arguments``) and an ``observation`` whose
``results`` carry a ``content`` and, when they answer one call, its ``source_call_id``.
A long run may continue in the file its ``continued_trajectory_ref`` names (Terminus 2's
``trajectory.cont-1.json``), whose steps marked ``is_copied_context`` repeat earlier ones.

Each tool call is one :class:`~passk.results.trajectory.Step`: its function, its arguments,
and as its answer the content of the results linked to it. Results linked to no call (Terminus
2 links a batch of commands' shared terminal output to none) answer the step's last call, so
that what the terminal showed is compared where the batch ended. The agent's own text and
reasoning, the user's and system's steps, metrics and timestamps are not compared. Success is
Harbor's rule as :func:`passk.results.formats.harbor.read_harbor` applies it, read trial by
trial; trials it leaves out (errors that are not the agent's) are left out here too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from passk.results.counts import ResultsError
from passk.results.trajectory import Step, Trajectory

__all__ = ["TRAJECTORY_FILE", "atif_steps", "read_harbor_trajectories"]

#: Where a Harbor trial's agent writes its ATIF trajectory, from the trial folder.
TRAJECTORY_FILE = Path("agent") / "trajectory.json"

#: What :func:`read_harbor_trajectories` passes on to Harbor's reader.
_HARBOR_OPTIONS = frozenset({"eval_key", "score_key", "success_threshold",
                             "count_errors_as_failures"})

#: Continuation files followed at most (a cycle of references is an error).
_MAX_PARTS = 100


def _load(path: Path, report_as: Path, where: str | None) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ResultsError(report_as, where, f"cannot be read ({e})") from None
    except ValueError as e:
        raise ResultsError(report_as, where, f"is not JSON ({e}); an ATIF trajectory is a "
                           "JSON object with 'steps'") from None


def _text(content: Any) -> Any:
    """An observation's content: its text, or the text parts of a multimodal list."""
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content
                         if isinstance(p, dict) and p.get("type") == "text")
    return content


def _step_calls(step: dict[str, Any], report_as: Path, where: str) -> Iterator[Step]:
    calls = step.get("tool_calls")
    calls = [] if calls is None else calls
    if not isinstance(calls, list):
        raise ResultsError(report_as, where, f"field 'tool_calls' must be a list, got "
                           f"{type(calls).__name__}")
    observation = step.get("observation")
    if observation is not None and not isinstance(observation, dict):
        raise ResultsError(report_as, where, "field 'observation' must be an object with "
                           f"'results', got {type(observation).__name__}")
    results = (observation or {}).get("results")
    if results is not None and not isinstance(results, list):
        raise ResultsError(report_as, where, "field 'observation.results' must be a list, "
                           f"got {type(results).__name__}")
    linked: dict[Any, list[Any]] = {}
    unlinked: list[Any] = []
    for r in results or ():
        if not isinstance(r, dict):
            raise ResultsError(report_as, where, f"an observation result must be an object, "
                               f"got {r!r:.60}")
        content = _text(r.get("content"))
        if r.get("source_call_id") is None:
            unlinked.append(content)
        else:
            linked.setdefault(r["source_call_id"], []).append(content)
    for i, call in enumerate(calls):
        if not isinstance(call, dict) or "function_name" not in call:
            raise ResultsError(report_as, where, f"tool_calls[{i}] must be an object with "
                               f"'function_name', got {call!r:.60}")
        answers = linked.get(call.get("tool_call_id"), [])
        if i == len(calls) - 1:
            answers = answers + unlinked
        answer = answers[0] if len(answers) == 1 else ("\n".join(str(a) for a in answers)
                                                       if answers else None)
        yield Step.of(call["function_name"], call.get("arguments"), answer)


def atif_steps(path: str | os.PathLike[str], *, report_as: str | os.PathLike[str] | None = None
               ) -> tuple[Step, ...]:
    """The tool calls of an ATIF trajectory file (and of the files it continues in), in order.

    Parameters
    ----------
    path : path
        An ATIF ``trajectory.json``.
    report_as : path, optional
        The file errors name (default ``path``).

    Raises
    ------
    ResultsError
        For a file that is not an ATIF trajectory, naming the file, the step and the field.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "trajectory.json"
    >>> _ = p.write_text(json.dumps({"schema_version": "ATIF-v1.8", "agent": {}, "steps": [
    ...     {"step_id": 1, "source": "agent", "message": "", "tool_calls": [
    ...         {"tool_call_id": "c1", "function_name": "bash_command",
    ...          "arguments": {"keystrokes": "ls\\n"}}],
    ...      "observation": {"results": [{"source_call_id": "c1", "content": "a  b"}]}}]}))
    >>> [str(s) for s in atif_steps(p)]
    ['bash_command({"keystrokes": "ls\\\\n"}) -> a b']
    """
    first = Path(path)
    shown = Path(report_as) if report_as is not None else first
    out: list[Step] = []
    current: Path | None = first
    seen: set[Path] = set()
    while current is not None:
        if current in seen or len(seen) >= _MAX_PARTS:
            raise ResultsError(shown, current.name, "continued_trajectory_ref leads back to a "
                               "file already read: the trajectory's parts form a cycle")
        seen.add(current)
        data = _load(current, shown, current.name)
        if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
            raise ResultsError(shown, current.name, "is not an ATIF trajectory: a JSON object "
                               "with a list 'steps' (Harbor's agent/trajectory.json)")
        for j, step in enumerate(data["steps"]):
            where = f"{current.name} steps[{j}]"
            if not isinstance(step, dict):
                raise ResultsError(shown, where, f"expected a JSON object, got {step!r:.60}")
            if step.get("source") != "agent" or step.get("is_copied_context"):
                continue
            out.extend(_step_calls(step, shown, where))
        ref = data.get("continued_trajectory_ref")
        if ref is not None and not isinstance(ref, str):
            raise ResultsError(shown, current.name, "field 'continued_trajectory_ref' must be "
                               f"a file name, got {ref!r:.60}")
        nxt = current.parent / ref if ref else None
        if nxt is not None and not nxt.is_file():
            raise ResultsError(shown, current.name, f"continued_trajectory_ref {ref!r} names "
                               "no file beside it: copy the trial's whole agent/ folder")
        current = nxt
    return tuple(out)


def _trial_files(path: Path) -> list[Path]:
    """The trial ``result.json`` files under a trial folder, a job or a folder of jobs."""
    if path.is_file():
        data = _load(path, path, None)
        if isinstance(data, dict) and "task_name" in data:
            return [path]
        path = path.parent
    if (path / "result.json").is_file():
        data = _load(path / "result.json", path, "result.json")
        if isinstance(data, dict) and "task_name" in data:
            return [path / "result.json"]
        return sorted(d / "result.json" for d in path.iterdir()
                      if d.is_dir() and (d / "result.json").is_file())
    return [f for d in sorted(path.iterdir()) if d.is_dir() for f in _trial_files(d)
            if (d / "result.json").is_file()]


def read_harbor_trajectories(path: str | os.PathLike[str], **options: Any) -> list[Trajectory]:
    """Each trial of a Harbor job as a :class:`~passk.results.trajectory.Trajectory`: its
    success by Harbor's rule and the tool calls of its ``agent/trajectory.json`` (steps None
    when the trial kept no trajectory).

    Parameters
    ----------
    path : path
        A Harbor job directory, a folder of jobs, a trial folder or a trial's ``result.json``.
    **options
        ``eval_key``, ``score_key``, ``success_threshold``, ``count_errors_as_failures``, as
        :func:`passk.results.formats.harbor.read_harbor` takes them.

    Raises
    ------
    ResultsError
        For a job or a trajectory passk cannot read, naming the file and the field.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> trial = pathlib.Path(tempfile.mkdtemp()) / "hello__x1"
    >>> (trial / "agent").mkdir(parents=True)
    >>> _ = (trial / "result.json").write_text(json.dumps({
    ...     "task_name": "hello", "trial_name": "hello__x1", "source": "terminal-bench",
    ...     "agent_info": {"name": "terminus-2", "version": "2"},
    ...     "verifier_result": {"rewards": {"reward": 1}}}))
    >>> _ = (trial / "agent" / "trajectory.json").write_text(json.dumps({"steps": [
    ...     {"step_id": 1, "source": "agent", "message": "", "tool_calls": [
    ...         {"tool_call_id": "c", "function_name": "mark_task_complete", "arguments": {}}]}
    ... ]}))
    >>> [(t.task_id, t.success, [s.name for s in t.steps]) for t in read_harbor_trajectories(trial)]
    [('hello', True, ['mark_task_complete'])]
    """
    from passk.results.formats.harbor import read_harbor

    root = Path(path)
    foreign = sorted(set(options) - _HARBOR_OPTIONS)
    if foreign:
        raise ResultsError(root, None, f"{', '.join(foreign)}: not an option for a Harbor job "
                           f"(it takes {', '.join(sorted(_HARBOR_OPTIONS))})")
    whole = read_harbor(root, **options)  # validates the job and chooses the evaluation
    per_trial = {k: v for k, v in options.items() if k != "eval_key"}
    found = []
    for file in _trial_files(root):
        data = _load(file, root, file.parent.name)
        one = read_harbor(file, data, **per_trial)
        if one.suite != whole.suite or int(one.totals.sum()) == 0:
            continue  # another evaluation, or left out (an error that is not the agent's)
        trajectory = file.parent / TRAJECTORY_FILE
        steps = (atif_steps(trajectory, report_as=root / file.parent.name / TRAJECTORY_FILE)
                 if trajectory.is_file() else None)
        found.append((one.task_ids[0], str(data.get("started_at") or ""),
                      str(data.get("trial_name") or file.parent.name),
                      bool(one.successes[0] == one.totals[0]), steps))
    found.sort(key=lambda t: (t[0], t[1], t[2]))
    return [Trajectory(task, name, ok, steps) for task, _, name, ok, steps in found]
