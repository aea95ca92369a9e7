"""Readers for benchmark result files: tau-bench, tau2-bench (tau3) and Inspect AI logs.

Each reader validates its input, turns every run into a :class:`passk.io.Run`
and counts them with :func:`passk.io.tally_runs`, so a repeated
``(task, trial)`` follows one rule in every format (an error naming both
records, unless ``duplicates`` keeps the first or the last). A bad record is a
:class:`passk.io.ResultsError` naming the file and the record (its index in
the JSON array, counted from 0, or its file in a tau2 run directory), never a
wrong number. This module uses :mod:`passk.io`'s public names only; ``io``
reaches it solely through :func:`read_formatted`.

Success follows each benchmark's own rule:

- tau-bench and tau2-bench: a run succeeds when its reward is within ``1e-6``
  of 1 (``is_successful`` in both repositories).
- Inspect AI: a sample's score from the chosen scorer is a success when its
  value is ``"C"`` (correct), ``True`` or ``1`` (the convention of Inspect's
  ``accuracy`` metric), or one of the values given with ``success_values``.

What is left out is said, with why (``Results.excluded_reason``): tau2-bench
leaves simulations that ended in an ``infrastructure_error`` out of its
metrics, and so does this reader ("infrastructure errors"); Inspect samples
that ended in an error are left out as "errored samples". A run that stopped
short of its own plan is named in ``Results.incomplete`` with counts: an
Inspect log whose status is not ``"success"`` or that holds fewer samples
than its dataset's selection × epochs; a tau2 run with fewer simulations than
``num_trials`` × tasks; a tau-bench run whose tasks have uneven trials.

tau2-bench writes a run either as one ``results.json`` holding every
simulation, or (its default for voice runs, and what ``tau2
convert-results --to dir`` writes) as a directory: ``results.json`` with the
metadata and a ``simulation_index``, beside a ``simulations/`` folder with one
``<id>.json`` file a simulation (``Results.save(..., format="dir")`` in
``tau2/data_model/simulation.py``). Both are read, from the directory or from
its ``results.json``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from .io import (
    FORMAT_NAMES,
    INFRASTRUCTURE_ERRORS,
    Results,
    ResultsError,
    Run,
    reject_options,
    tally_runs,
    with_notes,
)

__all__ = [
    "ERRORED_SAMPLES",
    "FORMAT_OPTIONS",
    "INSPECT_SUCCESS_VALUES",
    "TAU2_EXCLUDED_TERMINATIONS",
    "detect_format",
    "is_successful",
    "read_formatted",
    "read_inspect",
    "read_tau2",
    "read_tau_bench",
]

#: tau-bench's and tau2-bench's success tolerance around a reward of 1.
REWARD_TOLERANCE = 1e-6

#: tau2 termination reasons that are not the agent's outcome (left out, counted).
TAU2_EXCLUDED_TERMINATIONS = frozenset({"infrastructure_error"})

#: Score values that count as a success by default (Inspect's accuracy convention).
INSPECT_SUCCESS_VALUES = ("C",)

#: Why Inspect samples are left out (``Results.excluded_reason``).
ERRORED_SAMPLES = "errored samples"

#: The reader options each benchmark format takes; any other is refused.
FORMAT_OPTIONS = {"tau-bench": (), "tau2": (), "inspect": ("scorer", "success_values")}

#: tau2-bench's directory format: metadata file and simulations folder.
TAU2_RESULTS, TAU2_SIMULATIONS = "results.json", "simulations"


def is_successful(reward: float) -> bool:
    """tau-bench's rule: the reward lies within ``1e-6`` of 1.

    Examples
    --------
    >>> is_successful(1.0), is_successful(0.9999999), is_successful(0.5)
    (True, True, False)
    """
    return (1 - REWARD_TOLERANCE) <= reward <= (1 + REWARD_TOLERANCE)


# --------------------------------------------------------------------------
# shared helpers
# --------------------------------------------------------------------------


def _load_json(path: Path, report_as: Any = None, where: str | None = None) -> Any:
    """Parse a JSON file; errors name ``report_as`` (default ``path``) and ``where``."""
    report_as = path if report_as is None else report_as
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        raise ResultsError(report_as, where, "is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsError(report_as, where, f"not valid JSON at line {exc.lineno} column "
                           f"{exc.colno} ({exc.msg}); is the file truncated?") from None


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _require(record: dict, name: str, kinds: tuple[type, ...], what: str, path: Path,
             where: str, *, optional: bool = False) -> Any:
    if name not in record or record[name] is None:
        if optional:
            return None
        raise ResultsError(path, where, f"missing field {name!r}")
    value = record[name]
    if not isinstance(value, kinds) or (bool not in kinds and isinstance(value, bool)):
        raise ResultsError(path, where, f"field {name!r} must be {what}, got {value!r}")
    return value


def _reward(value: Any, name: str, path: Path, where: str) -> float:
    if not _is_number(value):
        raise ResultsError(path, where, f"field {name!r} must be a number, got {value!r}")
    if not math.isfinite(value):
        raise ResultsError(path, where, f"field {name!r} must be a finite number, got {value!r}")
    return float(value)


def _some(items: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f", and {len(items) - limit} more" if len(items) > limit else "")


def _s(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _have(n: int) -> str:
    return "1 task has" if n == 1 else f"{n} tasks have"


def _short_of_plan(results: Results, planned: int, *, opening: str, unit: str,
                   per_task: str) -> str | None:
    """The sentence for ``Results.incomplete`` when some task has fewer records (counted or
    left out) than ``planned``, naming them; None when every task has its runs."""
    present = (results.totals + results.excluded).tolist()
    short = [f"{t}: {n}" for t, n in zip(results.task_ids, present) if n < planned]
    if not short:
        return None
    m = len(results)
    return (f"{opening} {sum(present)} of {m * planned} {unit} ({_s(m, 'task')} × {per_task}); "
            f"{_have(len(short))} fewer than {planned} ({_some(short)})")


# --------------------------------------------------------------------------
# tau-bench
# --------------------------------------------------------------------------


def read_tau_bench(path: str | os.PathLike[str], data: Any = None, *,
                   duplicates: str = "error") -> Results:
    """Read a tau-bench results file: a JSON array of ``EnvRunResult`` records.

    Each record is ``{"task_id": int, "reward": float, "info": {...},
    "traj": [...], "trial": int}``; a run succeeds when its reward is within
    ``1e-6`` of 1. A run that raised counts as a failure, as tau-bench counts
    it (reward 0, ``info.error``), and a note says how many did.

    tau-bench's number of trials is the number of distinct ``trial`` values
    (``display_metrics`` in its ``run.py``); a task with fewer runs than that
    makes the run incomplete (``Results.incomplete``).

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> runs = [{"task_id": 0, "reward": r, "info": {}, "traj": [], "trial": t}
    ...         for t, r in enumerate([1.0, 0.0, 1.0])]
    >>> _ = (d / "tau.json").write_text(json.dumps(runs))
    >>> r = read_tau_bench(d / "tau.json")
    >>> r.task_ids, r.successes.tolist(), r.totals.tolist(), r.incomplete
    (('0',), [2], [3], ())
    """
    path = Path(path)
    if data is None:
        data = _load_json(path)
    if not isinstance(data, list):
        raise ResultsError(path, None, f"a tau-bench results file is a JSON array of runs, "
                           f"got a JSON {type(data).__name__}")
    raised = 0
    trials: set[int] = set()

    def runs() -> Iterator[tuple[str, Run]]:
        nonlocal raised
        for i, record in enumerate(data):
            where = f"record {i}"
            if not isinstance(record, dict):
                raise ResultsError(path, where, f"expected a JSON object, got {record!r:.60}")
            task_id = _require(record, "task_id", (int,), "a whole number", path, where)
            if record.get("reward") is None:
                raise ResultsError(path, where, "missing field 'reward'")
            reward = _reward(record["reward"], "reward", path, where)
            trial = _require(record, "trial", (int,), "a whole number", path, where)
            for name, kind, what in (("info", dict, "an object"), ("traj", list, "an array")):
                if record.get(name) is not None and not isinstance(record[name], kind):
                    raise ResultsError(path, where, f"field {name!r} must be {what}, "
                                       f"got {type(record[name]).__name__}")
            raised += isinstance(record.get("info"), dict) and "error" in record["info"]
            trials.add(trial)
            yield where, Run(str(task_id), is_successful(reward), trial)

    results = tally_runs(runs(), path=path, source="tau-bench", duplicates=duplicates)
    notes = []
    if raised:
        notes.append(f"{_s(raised, 'run')} ended in an exception (info.error) and count as "
                     "failures, as tau-bench counts them")
    num_trials = len(trials)
    short = _short_of_plan(results, num_trials, opening="tau-bench run has uneven trials:",
                           unit="runs", per_task=f"{_s(num_trials, 'trial')}, the trials seen")
    return with_notes(results, notes, [short] if short else [])


# --------------------------------------------------------------------------
# tau2-bench / tau3-bench
# --------------------------------------------------------------------------


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


def _tau2_simulation_files(run: Path, sims_dir: Path, meta: dict, notes: list[str],
                           incomplete: list[str]) -> Iterator[tuple[str, Any]]:
    """The simulations of a directory-format run, one file each, in file-name order."""
    files = sorted(f for f in sims_dir.glob("*.json") if f.is_file())
    temporary = [f for f in files if f.name.startswith(".")]  # tau2 writes .sim_* then renames
    files = [f for f in files if not f.name.startswith(".")]
    if temporary:
        notes.append(f"{_s(len(temporary), 'temporary file')} in {TAU2_SIMULATIONS}/ skipped "
                     f"({_some([f.name for f in temporary])})")
    index = meta.get("simulation_index")
    if isinstance(index, list):
        listed = [str(e["id"]) for e in index if isinstance(e, dict) and "id" in e]
        on_disk = {f.stem for f in files}
        missing = [i for i in listed if i not in on_disk]
        extra = sorted(on_disk - set(listed))
        if missing:
            incomplete.append(f"{TAU2_RESULTS}'s simulation_index lists {len(listed)} "
                              f"simulations but {len(missing)} of their files are missing from "
                              f"{TAU2_SIMULATIONS}/ ({_some(missing)})")
        if extra:
            notes.append(f"{_s(len(extra), 'simulation file')} in {TAU2_SIMULATIONS}/ not in "
                         f"{TAU2_RESULTS}'s simulation_index (a run still writing?) are counted "
                         f"({_some(extra)})")
    for f in files:
        where = f"{TAU2_SIMULATIONS}/{f.name}"
        yield where, _load_json(f, run, where)


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
        data = _load_json(layout[0] if layout else path)
    if not isinstance(data, dict):
        raise ResultsError(path, None, f"a tau2-bench results file is a JSON object, "
                           f"got a JSON {type(data).__name__}")
    notes: list[str] = []
    incomplete: list[str] = []
    if "simulations" in data or layout is None:
        sims = data.get("simulations")
        if not isinstance(sims, list):
            raise ResultsError(path, None, "field 'simulations' must be an array of simulations"
                               + ("" if "simulations" in data else " (it is missing)"))
        located: Iterable[tuple[str, Any]] = ((f"simulations[{i}]", s) for i, s in enumerate(sims))
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
        num_trials = _require(info, "num_trials", (int,), "a whole number", run, "info",
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
            task_id = _require(sim, "task_id", (str, int), "a string", run, where)
            trial = _require(sim, "trial", (int,), "a whole number", run, where, optional=True)
            reason = _require(sim, "termination_reason", (str,), "a string", run, where)
            reward_info = sim.get("reward_info")
            reward = None
            if reward_info is not None:
                if not isinstance(reward_info, dict):
                    raise ResultsError(run, where, f"field 'reward_info' must be an object or "
                                       f"null, got {reward_info!r:.60}")
                if reward_info.get("reward") is None:
                    raise ResultsError(run, where, "missing field 'reward_info.reward'")
                reward = _reward(reward_info["reward"], "reward_info.reward", run, where)
            excluded = reason in TAU2_EXCLUDED_TERMINATIONS
            null_reward += reward is None and not excluded
            yield where, Run(str(task_id), reward is not None and is_successful(reward), trial,
                             excluded=excluded,
                             excluded_as=INFRASTRUCTURE_ERRORS if excluded else "")

    results = tally_runs(runs(), path=run, source="tau2", duplicates=duplicates,
                         task_ids=listed)
    if null_reward:
        notes.append(f"{null_reward} simulation(s) without a reward counted as failures")
    left_out = int(results.excluded.sum())
    if left_out:
        notes.append(f"{left_out} simulation(s) ended in an infrastructure error "
                     f"and are left out")
    if num_trials is not None:
        if results.totals.size and int(results.totals.max()) > num_trials:
            notes.append(f"some task has more evaluated simulations than info.num_trials "
                         f"= {num_trials}")
        short = _short_of_plan(results, num_trials, opening="tau2 run holds",
                               unit="simulations", per_task=f"info.num_trials {num_trials}")
        if short:
            incomplete.append(short)
    if layout is not None and "simulations" not in data:
        notes.insert(0, f"read tau2-bench's directory format: {TAU2_RESULTS} and "
                     f"{_s(int((results.totals + results.excluded).sum()), 'simulation')} "
                     f"from {TAU2_SIMULATIONS}/")
    return with_notes(results, notes, incomplete)


# --------------------------------------------------------------------------
# Inspect AI
# --------------------------------------------------------------------------


def _inspect_success(value: Any, success_values: Sequence[str] | None) -> bool:
    if success_values:
        if isinstance(value, bool):
            return str(value).lower() in {s.lower() for s in success_values}
        for s in success_values:
            if isinstance(value, str) and value == s:
                return True
            if _is_number(value):
                try:
                    if float(s) == float(value):
                        return True
                except ValueError:
                    pass
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value in INSPECT_SUCCESS_VALUES
    if _is_number(value):
        return float(value) == 1.0
    return False


def _inspect_gaps(log: Any, results: Results) -> list[str]:
    """The sentence naming an Inspect eval that did not run its whole plan, if it did not.

    The plan is the selected samples (``eval.dataset.sample_ids``, else
    ``eval.dataset.samples``) × ``eval.config.epochs``; the log is complete
    when its status is ``"success"`` and it holds that many sample epochs.
    """
    status = log.status
    dataset = log.eval.dataset
    epochs = getattr(log.eval.config, "epochs", None) or 1
    ids = list(dataset.sample_ids) if dataset.sample_ids else None
    selected = len(ids) if ids is not None else dataset.samples
    scored, errored = int(results.totals.sum()), int(results.excluded.sum())
    present = scored + errored
    if status == "success" and (selected is None or present >= selected * epochs):
        return []
    if selected is None:
        plan = None
    else:
        samples = f"{selected} dataset samples"
        if ids is not None and dataset.samples and selected < dataset.samples:
            samples = f"{selected} selected samples (of the dataset's {dataset.samples})"
        plan = (f"{samples} × 1 epoch" if epochs == 1 else
                f"{selected * epochs} sample epochs ({samples} × {epochs} epochs)")
    if status != "success":
        head = f"Inspect log status is {status!r}: "
    else:
        head = "Inspect log holds fewer samples than planned, though its status is 'success': "
    if plan is None:
        text = (f"{_s(scored, 'sample epoch')} were scored; the log does not record how many "
                "samples the dataset holds")
    else:
        text = f"{scored} of {plan} were scored"
    if errored:
        text += f" ({errored} more ended in an error)"
    if ids is not None:
        ran = set(results.task_ids)
        never = [str(i) for i in ids if str(i) not in ran]
        if never:
            text += f"; {_s(len(never), 'sample')} never ran ({_some(never)})"
    error = getattr(log, "error", None)
    if error is not None and getattr(error, "message", None):
        first = str(error.message).strip().splitlines()[0][:160] if str(error.message).strip() \
            else ""
        if first:
            text += f"; the eval's error: {first}"
    return [head + text]


def read_inspect(path: str | os.PathLike[str], *, scorer: str | None = None,
                 success_values: Sequence[str] | None = None,
                 duplicates: str = "error") -> Results:
    """Read an Inspect AI eval log (``.eval`` or ``.json``): one run a sample epoch.

    Needs the optional extra ``inspect`` (``pip install 'passk[inspect]'``).
    A sample that ended in an error is left out (as "errored samples"); a log
    whose ``status`` is not ``"success"`` (``"started"``, ``"cancelled"``,
    ``"error"``) or that holds fewer sample epochs than its selected dataset
    samples × ``epochs`` is named in ``Results.incomplete``.

    Parameters
    ----------
    scorer : str, optional
        Which scorer's value decides success; required when the log has several.
    success_values : sequence of str, optional
        Values that count as a success (default: ``"C"``, ``True`` or 1).
    duplicates : {'error', 'first', 'last'}, default 'error'
        A repeated (sample id, epoch); see :func:`passk.io.tally_runs`.
    """
    path = Path(path)
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise ResultsError(path, None, "reading Inspect AI logs needs the optional extra "
                           "'inspect': pip install 'passk[inspect]' (or pip install "
                           "inspect-ai)") from None
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # noqa: BLE001 - any parse error is bad input
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ResultsError(path, None, f"not a readable Inspect AI log "
                           f"({type(exc).__name__}: {first[:200]})") from None
    samples = log.samples
    if not samples:
        status = "" if log.status == "success" else f"; its status is {log.status!r}"
        raise ResultsError(path, None, "the log has no samples (a header-only log, or an "
                           f"eval that did not run{status})")
    names: list[str] = []
    for s in samples:
        for name in (s.scores or {}):
            if name not in names:
                names.append(name)
    if scorer is None:
        if len(names) > 1:
            raise ResultsError(path, None, f"the log has several scorers ({', '.join(names)}); "
                               f"choose one with --scorer")
        scorer = names[0] if names else None
    elif scorer not in names:
        raise ResultsError(path, None, f"no scorer {scorer!r} in the log; it has "
                           f"{', '.join(names) or 'none'}")
    errored = 0

    def runs() -> Iterator[tuple[str, Run]]:
        nonlocal errored
        for i, s in enumerate(samples):
            where = f"samples[{i}]"
            if s.id is None or s.id == "":
                raise ResultsError(path, where, "missing sample id")
            task_id = str(s.id)
            if s.error is not None:
                errored += 1
                yield where, Run(task_id, False, s.epoch, excluded=True,
                                 excluded_as=ERRORED_SAMPLES)
                continue
            score = (s.scores or {}).get(scorer) if scorer else None
            if score is None:
                raise ResultsError(path, where, f"sample {task_id!r} epoch {s.epoch} has no "
                                   f"score from scorer {scorer!r}")
            value = score.value
            if not isinstance(value, (str, int, float, bool)):
                raise ResultsError(path, where, f"score value {value!r:.60} of scorer "
                                   f"{scorer!r} is not a single value (str, number or bool)")
            yield where, Run(task_id, _inspect_success(value, success_values), s.epoch)

    results = tally_runs(runs(), path=path, source="inspect", duplicates=duplicates)
    notes = []
    if errored:
        notes.append(f"{errored} sample epoch(s) ended in an error and are left out")
    notes.append(f"scorer: {scorer}")
    return with_notes(results, notes, _inspect_gaps(log, results))


# --------------------------------------------------------------------------
# detection and dispatch
# --------------------------------------------------------------------------


def _json_kind(data: Any, path: Path) -> str | None:
    if isinstance(data, list):
        return "tau-bench"
    if isinstance(data, dict):
        if "simulations" in data:
            return "tau2"
        if "eval" in data and ("samples" in data or "version" in data or "status" in data):
            return "inspect"
        if "info" in data and "tasks" in data and _tau2_layout(path) is not None:
            return "tau2"  # tau2's directory format, named by its results.json
    return None


def detect_format(path: str | os.PathLike[str]) -> str:
    """The format of a results file, by extension, content or (for a directory) layout.

    ``.jsonl``/``.ndjson`` → jsonl, ``.csv`` → csv, ``.eval`` → inspect; a
    ``.json`` holding an array is tau-bench, an object with ``simulations``
    tau2, an object with ``eval`` Inspect, and a ``results.json`` beside a
    ``simulations/`` folder tau2's directory format; a directory is tau2 when
    it holds ``results.json``, and an error otherwise.
    """
    p = Path(path)
    if p.is_dir():
        if _tau2_layout(p) is None:
            raise _directory_error(p)
        return "tau2"
    suffix = p.suffix.lower()
    fixed = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".eval": "inspect"}
    if suffix in fixed:
        return fixed[suffix]
    kind = _json_kind(_load_json(p), p)
    if kind is None:
        raise ResultsError(path, None, _unknown())
    return kind


def _unknown() -> str:
    return ("cannot tell the format: expected a JSON array of tau-bench runs, a tau2-bench "
            "object with 'simulations' (or a run directory), or an Inspect AI log; pass "
            "--format (supported: jsonl, csv, tau-bench, tau2, inspect)")


def read_formatted(path: str | os.PathLike[str], format: str,
                   *, duplicates: str = "error", **options: Any) -> Results:
    """Read a benchmark format (or detect it, for ``format="auto"``).

    Called by :func:`passk.io.read_results`, which checks the path, the
    format's name and ``duplicates`` first. A reader option that the format
    does not take (e.g. ``scorer`` on a tau-bench file) is an error naming
    the option and the format.
    """
    path = Path(path)
    data = None
    if format == "auto":
        if path.is_dir():
            format = detect_format(path)
        elif path.suffix.lower() == ".eval":
            format = "inspect"
        else:
            data = _load_json(path)
            format = _json_kind(data, path) or ""
            if not format:
                raise ResultsError(path, None, _unknown())
    elif path.is_dir() and format != "tau2":
        raise ResultsError(path, None, f"is a directory, not a {FORMAT_NAMES.get(format, format)}"
                           " results file")
    if format not in FORMAT_OPTIONS:
        raise ResultsError(path, None, f"unknown format {format!r}")
    if not path.is_dir() and not path.is_file():
        raise ResultsError(path, None, "is not a regular file")
    reject_options(path, format, options, FORMAT_OPTIONS[format])
    given = {k: v for k, v in options.items() if v is not None}
    if format == "inspect":
        return read_inspect(path, duplicates=duplicates, **given)
    if format == "tau-bench":
        return read_tau_bench(path, data, duplicates=duplicates)
    return read_tau2(path, data, duplicates=duplicates)
