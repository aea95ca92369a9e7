"""tau2-bench's (and tau3-bench's) runs: ``results.json``, its run directory, or a bare array.

tau2-bench writes a run either as one ``results.json`` holding every
simulation, or (its default for voice runs, and what ``tau2
convert-results --to dir`` writes) as a directory: ``results.json`` with the
metadata and a ``simulation_index``, beside a ``simulations/`` folder with one
``<id>.json`` file a simulation (``Results.save(..., format="dir")`` in
``tau2/data_model/simulation.py``). Both are read, from the directory or from
its ``results.json``; so is a bare JSON array of simulations, as several
leaderboard submissions hold them. A run succeeds when its reward is within
``1e-6`` of 1 (tau2's ``is_successful``); simulations that ended in an
``infrastructure_error`` are left out of the counts, as tau2-bench leaves them
out of its metrics. Each run is known by its simulation's ``id`` and ``trial``,
so the run directory and its own ``results.json`` are one run, not two.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from passk.render.words import plural
from passk.results.counts import (
    INFRASTRUCTURE_ERRORS,
    Results,
    ResultsError,
    Run,
    tally_runs,
    with_notes,
)
from passk.results.formats._shared import (
    is_successful,
    load_json,
    require,
    reward,
    short_of_plan,
    some,
)

__all__ = ["TAU2_EXCLUDED_TERMINATIONS", "TAU2_RUN_ID", "read_tau2", "read_tau2_trajectories",
           "sniff", "sniff_dir"]

#: tau2 termination reasons that are not the agent's outcome (left out, counted).
TAU2_EXCLUDED_TERMINATIONS = frozenset({"infrastructure_error"})

#: What a tau2 run's identity is: its simulation's ``id`` and its ``trial``.
TAU2_RUN_ID = "tau2 simulation (id, trial)"

#: tau2-bench's directory format: metadata file and simulations folder.
TAU2_RESULTS, TAU2_SIMULATIONS = "results.json", "simulations"

#: Fields only a tau2 simulation has (a tau-bench run has ``reward`` and ``traj`` instead).
_SIMULATION_FIELDS = ("termination_reason", "reward_info")


def sniff(data: Any, path: Path) -> bool:
    """tau2's object (with ``simulations``, or ``info`` and ``tasks`` beside a
    ``simulations/`` folder) or a bare array whose first record is a simulation."""
    if isinstance(data, list):
        first = data[0] if data else None
        return isinstance(first, dict) and any(f in first for f in _SIMULATION_FIELDS)
    if isinstance(data, dict):
        return "simulations" in data or (
            "info" in data and "tasks" in data and _tau2_layout(path) is not None)
    return False


def sniff_dir(path: Path) -> bool:
    """A run directory: ``results.json`` beside a ``simulations/`` folder, or a results.json
    holding tau2's object."""
    meta = path / TAU2_RESULTS
    if not meta.is_file():
        return False
    if (path / TAU2_SIMULATIONS).is_dir():
        return True
    try:
        data = load_json(meta)
    except ResultsError:
        return False
    return isinstance(data, dict) and ("simulations" in data or "tasks" in data)


def _tau2_layout(path: Path) -> tuple[Path, Path] | None:
    """``(results.json, simulations/)`` of a tau2 run directory (or its results.json), else None.

    tau2-bench's own rule (``Results._detect_format``): a directory, or a file
    with a ``simulations/`` folder beside it, is the directory format.
    """
    if path.is_dir():
        meta = path / TAU2_RESULTS
        return (meta, path / TAU2_SIMULATIONS) if meta.is_file() else None
    sims = path.parent / TAU2_SIMULATIONS
    return (path, sims) if sims.is_dir() else None


def _directory_error(path: Path) -> ResultsError:
    return ResultsError(path, None, "is a directory, not a results file: pass one results file "
                        "(e.g. one Inspect .eval log), or a tau2-bench run directory "
                        f"({TAU2_RESULTS} beside a {TAU2_SIMULATIONS}/ folder)")


def _tau2_simulation_files(run: Path, sims_dir: Path, meta: dict[str, Any], notes: list[str],
                           incomplete: list[str]) -> Iterator[tuple[str, Any]]:
    """The simulations of a directory-format run, one file each, in file-name order."""
    files = sorted(f for f in sims_dir.glob("*.json") if f.is_file())
    temporary = [f for f in files if f.name.startswith(".")]  # tau2 writes .sim_* then renames
    files = [f for f in files if not f.name.startswith(".")]
    if temporary:
        notes.append(f"{plural(len(temporary), 'temporary file')} in {TAU2_SIMULATIONS}/ skipped "
                     f"({some([f.name for f in temporary])})")
    index = meta.get("simulation_index")
    if isinstance(index, list):
        listed = [str(e["id"]) for e in index if isinstance(e, dict) and "id" in e]
        on_disk = {f.stem for f in files}
        missing = [i for i in listed if i not in on_disk]
        extra = sorted(on_disk - set(listed))
        if missing:
            incomplete.append(f"{TAU2_RESULTS}'s simulation_index lists {len(listed)} "
                              f"simulations but {len(missing)} of their files are missing from "
                              f"{TAU2_SIMULATIONS}/ ({some(missing)})")
        if extra:
            notes.append(f"{plural(len(extra), 'simulation file')} in {TAU2_SIMULATIONS}/ not in "
                         f"{TAU2_RESULTS}'s simulation_index (a run still writing?) are counted "
                         f"({some(extra)})")
    for f in files:
        where = f"{TAU2_SIMULATIONS}/{f.name}"
        yield where, load_json(f, run, where)


def read_tau2(path: str | os.PathLike[str], data: Any = None, *,
              duplicates: str = "error") -> Results:
    """Read a tau2-bench (or tau3-bench) run: its ``results.json``, or its run directory.

    The monolithic file is one object ``{"timestamp", "info": {"num_trials",
    ...}, "tasks": [...], "simulations": [...]}``. The directory format keeps
    the same object without ``simulations`` in ``results.json`` and each
    simulation in ``simulations/<id>.json``; ``path`` may name the directory or
    its ``results.json``.

    A simulation whose ``termination_reason`` is ``infrastructure_error`` is
    left out and counted in ``Results.excluded`` (as "infrastructure errors");
    a simulation with ``reward_info: null`` otherwise counts as a failure
    (tau2-bench's ``is_successful`` is false on a missing reward). Every task
    listed in ``tasks`` appears, even one whose every simulation was left out
    (its n is then 0, and a gate fails closed on it). Fewer simulations than
    ``info.num_trials`` × tasks make the run incomplete (``Results.incomplete``).
    """
    path = Path(path)
    layout = _tau2_layout(path)
    if path.is_dir() and layout is None:
        raise _directory_error(path)
    run = path
    if data is None:
        data = load_json(layout[0] if layout else path)
    notes: list[str] = []
    incomplete: list[str] = []
    bare = isinstance(data, list)
    if bare and data and isinstance(data[0], dict) and not any(
            f in data[0] for f in _SIMULATION_FIELDS):
        raise ResultsError(path, None, "a tau2-bench results file is a JSON object, or a bare "
                           "array of simulations, but this array's record 0 has neither "
                           f"{' nor '.join(map(repr, _SIMULATION_FIELDS))} (a tau-bench file? "
                           "--format tau-bench)")
    if bare:  # several leaderboard submissions hold only the simulations
        data = {"simulations": data}
        notes.append("a bare JSON array of tau2-bench simulations: no info.num_trials or task "
                     "list, so the plan (and whether the run is complete) is not known")
    if not isinstance(data, dict):
        raise ResultsError(path, None, f"a tau2-bench results file is a JSON object, "
                           f"got a JSON {type(data).__name__}")
    if "simulations" in data or layout is None or bare:
        sims = data.get("simulations")
        if not isinstance(sims, list):
            raise ResultsError(path, None, "field 'simulations' must be an array of simulations"
                               + ("" if "simulations" in data else " (it is missing)"))
        label = "record" if bare else "simulations"
        located: Iterable[tuple[str, Any]] = (
            (f"{label} {i}" if bare else f"{label}[{i}]", s) for i, s in enumerate(sims))
        if path.is_dir():
            run = layout[0] if layout else path  # a monolithic results.json inside a run folder
    else:
        meta_path, sims_dir = layout
        if not sims_dir.is_dir():
            raise ResultsError(meta_path, None, f"has no 'simulations' and there is no "
                               f"{TAU2_SIMULATIONS}/ folder beside it: not a tau2-bench run")
        run = path if path.is_dir() else meta_path.parent
        located = _tau2_simulation_files(run, sims_dir, data, notes, incomplete)
    info = data.get("info")
    num_trials = None
    if info is not None:
        if not isinstance(info, dict):
            raise ResultsError(run, "info", f"must be an object, got {type(info).__name__}")
        num_trials = require(info, "num_trials", (int,), "a whole number", run, "info",
                             optional=True)
    tasks = data.get("tasks")
    if tasks is not None and not isinstance(tasks, list):
        raise ResultsError(run, "tasks", f"must be an array, got {type(tasks).__name__}")
    listed = [str(t["id"]) for t in tasks or ()
              if isinstance(t, dict) and isinstance(t.get("id"), (str, int))
              and not isinstance(t.get("id"), bool)]
    null_reward = 0

    def runs() -> Iterator[tuple[str, Run]]:
        nonlocal null_reward
        for where, sim in located:
            if not isinstance(sim, dict):
                raise ResultsError(run, where, f"expected a JSON object, got {sim!r:.60}")
            task_id = require(sim, "task_id", (str, int), "a string", run, where)
            trial = require(sim, "trial", (int,), "a whole number", run, where, optional=True)
            reason = require(sim, "termination_reason", (str,), "a string", run, where)
            reward_info = sim.get("reward_info")
            value = None
            if reward_info is not None:
                if not isinstance(reward_info, dict):
                    raise ResultsError(run, where, f"field 'reward_info' must be an object or "
                                       f"null, got {reward_info!r:.60}")
                if reward_info.get("reward") is None:
                    raise ResultsError(run, where, "missing field 'reward_info.reward'")
                value = reward(reward_info["reward"], "reward_info.reward", run, where)
            excluded = reason in TAU2_EXCLUDED_TERMINATIONS
            null_reward += value is None and not excluded
            sim_id = sim.get("id")
            run_id = ((TAU2_RUN_ID, str(sim_id), str(trial)) if isinstance(sim_id, (str, int))
                      and not isinstance(sim_id, bool) and sim_id != "" else None)
            yield where, Run(str(task_id), value is not None and is_successful(value), trial,
                             excluded=excluded,
                             excluded_as=INFRASTRUCTURE_ERRORS if excluded else "",
                             run_id=run_id)

    results = tally_runs(runs(), path=run, source="tau2", duplicates=duplicates,
                         task_ids=listed)
    if null_reward:
        notes.append(f"{plural(null_reward, 'simulation')} without a reward counted as "
                     f"{'a failure' if null_reward == 1 else 'failures'}")
    left_out = int(results.excluded.sum())
    if left_out:
        notes.append(plural(left_out, "simulation", verb=(
            "ended in an infrastructure error and is left out",
            "ended in an infrastructure error and are left out")))
    if num_trials is not None:
        if results.totals.size and int(results.totals.max()) > num_trials:
            notes.append(f"some task has more evaluated simulations than info.num_trials "
                         f"= {num_trials}")
        short = short_of_plan(results, num_trials, opening="tau2 run holds",
                               unit="simulations", per_task=f"info.num_trials {num_trials}")
        if short:
            incomplete.append(short)
    if layout is not None and "simulations" not in data:
        notes.insert(0, f"read tau2-bench's directory format: {TAU2_RESULTS} and "
                     f"{plural(int((results.totals + results.excluded).sum()), 'simulation')} "
                     f"from {TAU2_SIMULATIONS}/")
    if path.is_dir():
        others = _not_read(path)
        if others:
            notes.append(f"not read: {some(others)} in {path.name or path}/ (a tau2-bench run "
                         f"directory is read as its {TAU2_RESULTS} and {TAU2_SIMULATIONS}/; "
                         "pass another results file on its own to read it)")
    return with_notes(results, notes, incomplete)


def _not_read(run: Path) -> list[str]:
    """The files and folders of a run directory that are not tau2-bench's own (hidden ones
    aside), with a results file of another format first."""
    theirs = {TAU2_RESULTS, TAU2_SIMULATIONS}
    names = sorted(p.name + ("/" if p.is_dir() else "") for p in run.iterdir()
                   if p.name not in theirs and not p.name.startswith("."))
    results = (".eval", ".jsonl", ".ndjson", ".csv", ".json")
    return sorted(names, key=lambda n: (not n.lower().endswith(results), n))


def _tau2_steps(messages: Any, run: Path, where: str) -> Any:
    """A simulation's tool calls (the agent's and the user's), in order, each with the
    answer of the tool message of its ``id``."""
    from passk.results.trajectory import Step

    if not isinstance(messages, list):
        raise ResultsError(run, where, f"field 'messages' must be a list, got "
                           f"{type(messages).__name__}")
    answers = {m.get("id"): m for m in messages if isinstance(m, dict) and m.get("role") == "tool"}
    steps = []
    for m in messages:
        if not isinstance(m, dict) or m.get("role") == "tool":
            continue
        for call in m.get("tool_calls") or ():
            if not isinstance(call, dict):
                raise ResultsError(run, where, f"a tool call must be an object, got {call!r:.60}")
            answer = answers.get(call.get("id"), {})
            name = call.get("name")
            if call.get("requestor") == "user":
                name = f"user:{name}"
            steps.append(Step.of(name, call.get("arguments"), answer.get("content"),
                                 error=bool(answer.get("error"))))
    return tuple(steps)


def read_tau2_trajectories(path: str | os.PathLike[str]) -> list[Any]:
    """Each simulation of a tau2-bench run as a :class:`~passk.results.trajectory.Trajectory`:
    its tool calls (from its ``messages``) and the success :func:`read_tau2` counts (reward
    within 1e-6 of 1); simulations ended by an infrastructure error are left out.

    The run may be its ``results.json`` (simulations inside), its directory
    (``simulations/<id>.json``) or a bare array of simulations. A simulation
    without ``messages`` gives a run whose steps were not recorded.

    Raises
    ------
    ResultsError
        For a malformed simulation, naming the file and the simulation.
    """
    from passk.results.trajectory import Trajectory

    path = Path(path)
    layout = _tau2_layout(path)
    if path.is_dir() and layout is None:
        raise _directory_error(path)
    data = load_json(layout[0] if layout else path)
    run = layout[0] if layout else path
    if isinstance(data, list):
        located: Iterable[tuple[str, Any]] = ((f"record {i}", s) for i, s in enumerate(data))
    elif isinstance(data, dict) and isinstance(data.get("simulations"), list):
        located = ((f"simulations[{i}]", s) for i, s in enumerate(data["simulations"]))
    elif isinstance(data, dict) and layout is not None and layout[1].is_dir():
        located = _tau2_simulation_files(run, layout[1], data, [], [])
    else:
        raise ResultsError(run, None, "has no 'simulations' (and no simulations/ folder "
                           "beside it): not a tau2-bench run")
    out = []
    for where, sim in located:
        if not isinstance(sim, dict):
            raise ResultsError(run, where, f"expected a JSON object, got {sim!r:.60}")
        task_id = require(sim, "task_id", (str, int), "a string", run, where)
        reason = require(sim, "termination_reason", (str,), "a string", run, where)
        if reason in TAU2_EXCLUDED_TERMINATIONS:
            continue
        reward_info = sim.get("reward_info")
        value = None
        if isinstance(reward_info, dict) and reward_info.get("reward") is not None:
            value = reward(reward_info["reward"], "reward_info.reward", run, where)
        messages = sim.get("messages")
        trial = sim.get("trial")
        out.append(Trajectory(str(task_id), f"trial {trial}" if trial is not None else where,
                              value is not None and is_successful(value),
                              None if messages is None else _tau2_steps(messages, run, where)))
    return out
