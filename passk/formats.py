"""Readers for benchmark result files: tau-bench, tau2-bench (tau3) and Inspect AI logs.

Each reader validates its input and turns it into :class:`passk.io.Results`
(per-task counts). A bad record is a :class:`passk.io.ResultsError` naming the
file and the record (its index in the JSON array, counted from 0), never a
wrong number. A repeated ``(task, trial)`` pair is an error, not a second run.

Success follows each benchmark's own rule:

- tau-bench and tau2-bench: a run succeeds when its reward is within ``1e-6``
  of 1 (``is_successful`` in both repositories).
- Inspect AI: a sample's score from the chosen scorer is a success when its
  value is ``"C"`` (correct), ``True`` or ``1`` (the convention of Inspect's
  ``accuracy`` metric), or one of the values given with ``success_values``.

tau2-bench leaves simulations that ended in an ``infrastructure_error`` out of
its metrics; so does this reader, and it counts them per task in
``Results.excluded``. Inspect samples that ended in an error (``sample.error``)
are left out the same way.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .io import Results, ResultsError

__all__ = ["detect_format", "read_formatted", "read_tau_bench", "read_tau2",
           "read_inspect", "is_successful", "TAU2_EXCLUDED_TERMINATIONS",
           "INSPECT_SUCCESS_VALUES"]

#: tau-bench's and tau2-bench's success tolerance around a reward of 1.
REWARD_TOLERANCE = 1e-6

#: tau2 termination reasons that are not the agent's outcome (left out, counted).
TAU2_EXCLUDED_TERMINATIONS = frozenset({"infrastructure_error"})

#: Score values that count as a success by default (Inspect's accuracy convention).
INSPECT_SUCCESS_VALUES = ("C",)


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


def _load_json(path: Path) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as exc:
        raise ResultsError(path, None, f"not valid JSON at line {exc.lineno} column "
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


class _Counter:
    """Groups runs into per-task counts, in order of first appearance; rejects duplicates."""

    def __init__(self, path: Path, source: str):
        self.path, self.source = path, source
        self.order: dict[str, int] = {}
        self.c: list[int] = []
        self.n: list[int] = []
        self.out: list[int] = []
        self.seen: dict[tuple[str, Any], str] = {}
        self.notes: list[str] = []

    def task(self, task_id: str) -> int:
        i = self.order.get(task_id)
        if i is None:
            i = self.order[task_id] = len(self.order)
            self.c.append(0)
            self.n.append(0)
            self.out.append(0)
        return i

    def add(self, task_id: str, trial: Any, success: bool, excluded: bool, where: str) -> None:
        if trial is not None:
            key = (task_id, trial)
            if key in self.seen:
                raise ResultsError(self.path, where, f"duplicate run: task {task_id!r} trial "
                                   f"{trial} already appears at {self.seen[key]}")
            self.seen[key] = where
        i = self.task(task_id)
        if excluded:
            self.out[i] += 1
        else:
            self.n[i] += 1
            self.c[i] += int(success)

    def results(self) -> Results:
        if not self.order:
            raise ResultsError(self.path, None, "no runs found")
        return Results(
            task_ids=tuple(self.order), successes=np.asarray(self.c, dtype=np.int64),
            totals=np.asarray(self.n, dtype=np.int64),
            excluded=np.asarray(self.out, dtype=np.int64),
            risks=("read-only",) * len(self.order), source=self.source,
            notes=tuple(self.notes),
        )


# --------------------------------------------------------------------------
# tau-bench
# --------------------------------------------------------------------------


def read_tau_bench(path: str | os.PathLike[str], data: Any = None) -> Results:
    """Read a tau-bench results file: a JSON array of ``EnvRunResult`` records.

    Each record is ``{"task_id": int, "reward": float, "info": {...},
    "traj": [...], "trial": int}``; a run succeeds when its reward is within
    ``1e-6`` of 1.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> runs = [{"task_id": 0, "reward": r, "info": {}, "traj": [], "trial": t}
    ...         for t, r in enumerate([1.0, 0.0, 1.0])]
    >>> _ = (d / "tau.json").write_text(json.dumps(runs))
    >>> r = read_tau_bench(d / "tau.json")
    >>> r.task_ids, r.successes.tolist(), r.totals.tolist()
    (('0',), [2], [3])
    """
    path = Path(path)
    if data is None:
        data = _load_json(path)
    if not isinstance(data, list):
        raise ResultsError(path, None, f"a tau-bench results file is a JSON array of runs, "
                           f"got a JSON {type(data).__name__}")
    counter = _Counter(path, "tau-bench")
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
        counter.add(str(task_id), trial, is_successful(reward), False, where)
    return counter.results()


# --------------------------------------------------------------------------
# tau2-bench / tau3-bench
# --------------------------------------------------------------------------


def read_tau2(path: str | os.PathLike[str], data: Any = None) -> Results:
    """Read a tau2-bench (or tau3-bench) ``Results`` file.

    The file is one object ``{"timestamp", "info": {"num_trials", ...},
    "tasks": [...], "simulations": [...]}``. A simulation whose
    ``termination_reason`` is ``infrastructure_error`` is left out and counted
    in ``Results.excluded``; a simulation with ``reward_info: null`` otherwise
    counts as a failure (tau2-bench's ``is_successful`` is false on a missing
    reward). Every task listed in ``tasks`` appears, even one whose every
    simulation was left out (its n is then 0, and a gate fails closed on it).
    """
    path = Path(path)
    if data is None:
        data = _load_json(path)
    if not isinstance(data, dict):
        raise ResultsError(path, None, f"a tau2-bench results file is a JSON object, "
                           f"got a JSON {type(data).__name__}")
    sims = data.get("simulations")
    if not isinstance(sims, list):
        raise ResultsError(path, None, "field 'simulations' must be an array of simulations"
                           + ("" if "simulations" in data else " (it is missing)"))
    counter = _Counter(path, "tau2")
    info = data.get("info")
    num_trials = None
    if info is not None:
        if not isinstance(info, dict):
            raise ResultsError(path, "info", f"must be an object, got {type(info).__name__}")
        num_trials = _require(info, "num_trials", (int,), "a whole number", path, "info",
                              optional=True)
    tasks = data.get("tasks")
    if tasks is not None and not isinstance(tasks, list):
        raise ResultsError(path, "tasks", f"must be an array, got {type(tasks).__name__}")
    for j, task in enumerate(tasks or ()):
        if isinstance(task, dict) and isinstance(task.get("id"), (str, int)) \
                and not isinstance(task.get("id"), bool):
            counter.task(str(task["id"]))
    null_reward = 0
    for i, sim in enumerate(sims):
        where = f"simulations[{i}]"
        if not isinstance(sim, dict):
            raise ResultsError(path, where, f"expected a JSON object, got {sim!r:.60}")
        task_id = _require(sim, "task_id", (str, int), "a string", path, where)
        trial = _require(sim, "trial", (int,), "a whole number", path, where, optional=True)
        reason = _require(sim, "termination_reason", (str,), "a string", path, where)
        reward_info = sim.get("reward_info")
        reward = None
        if reward_info is not None:
            if not isinstance(reward_info, dict):
                raise ResultsError(path, where, f"field 'reward_info' must be an object or "
                                   f"null, got {reward_info!r:.60}")
            if reward_info.get("reward") is None:
                raise ResultsError(path, where, "missing field 'reward_info.reward'")
            reward = _reward(reward_info["reward"], "reward_info.reward", path, where)
        excluded = reason in TAU2_EXCLUDED_TERMINATIONS
        if reward is None and not excluded:
            null_reward += 1
        counter.add(str(task_id), trial, reward is not None and is_successful(reward),
                    excluded, where)
    if null_reward:
        counter.notes.append(f"{null_reward} simulation(s) without a reward counted as failures")
    left_out = sum(counter.out)
    if left_out:
        counter.notes.append(f"{left_out} simulation(s) ended in an infrastructure error "
                             f"and are left out")
    if num_trials is not None and counter.n and max(counter.n) > num_trials:
        counter.notes.append(f"some task has more evaluated simulations than info.num_trials "
                             f"= {num_trials}")
    return counter.results()


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


def read_inspect(path: str | os.PathLike[str], *, scorer: str | None = None,
                 success_values: Sequence[str] | None = None) -> Results:
    """Read an Inspect AI eval log (``.eval`` or ``.json``): one run a sample epoch.

    Needs the optional extra ``inspect`` (``pip install 'passk[inspect]'``).

    Parameters
    ----------
    scorer : str, optional
        Which scorer's value decides success; required when the log has several.
    success_values : sequence of str, optional
        Values that count as a success (default: ``"C"``, ``True`` or 1).
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
        raise ResultsError(path, None, "the log has no samples (a header-only log, or an "
                           "eval that did not run)")
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
    counter = _Counter(path, "inspect")
    errored = 0
    for i, s in enumerate(samples):
        where = f"samples[{i}]"
        if s.id is None or s.id == "":
            raise ResultsError(path, where, "missing sample id")
        task_id = str(s.id)
        if s.error is not None:
            errored += 1
            counter.add(task_id, s.epoch, False, True, where)
            continue
        score = (s.scores or {}).get(scorer) if scorer else None
        if score is None:
            raise ResultsError(path, where, f"sample {task_id!r} epoch {s.epoch} has no score "
                               f"from scorer {scorer!r}")
        value = score.value
        if not isinstance(value, (str, int, float, bool)):
            raise ResultsError(path, where, f"score value {value!r:.60} of scorer {scorer!r} "
                               f"is not a single value (str, number or bool)")
        counter.add(task_id, s.epoch, _inspect_success(value, success_values), False, where)
    if errored:
        counter.notes.append(f"{errored} sample epoch(s) ended in an error and are left out")
    counter.notes.append(f"scorer: {scorer}")
    return counter.results()


# --------------------------------------------------------------------------
# detection and dispatch
# --------------------------------------------------------------------------


def _json_kind(data: Any) -> str | None:
    if isinstance(data, list):
        return "tau-bench"
    if isinstance(data, dict):
        if "simulations" in data:
            return "tau2"
        if "eval" in data and ("samples" in data or "version" in data or "status" in data):
            return "inspect"
    return None


def detect_format(path: str | os.PathLike[str]) -> str:
    """The format of a results file, by extension and, for ``.json``, by its top level.

    ``.jsonl``/``.ndjson`` → jsonl, ``.csv`` → csv, ``.eval`` → inspect; a
    ``.json`` holding an array is tau-bench, an object with ``simulations``
    tau2, an object with ``eval`` Inspect.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    fixed = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".eval": "inspect"}
    if suffix in fixed:
        return fixed[suffix]
    kind = _json_kind(_load_json(p))
    if kind is None:
        raise ResultsError(path, None, _unknown())
    return kind


def _unknown() -> str:
    return ("cannot tell the format: expected a JSON array of tau-bench runs, a tau2-bench "
            "object with 'simulations', or an Inspect AI log; pass --format "
            "(supported: jsonl, csv, tau-bench, tau2, inspect)")


def read_formatted(path: Path, format: str, **options: Any) -> Results:  # noqa: A002
    """Read a benchmark format (or detect it, for ``format="auto"``)."""
    inspect_options = {k: v for k, v in options.items() if k in ("scorer", "success_values")
                       and v is not None}
    if format == "inspect" or (format == "auto" and path.suffix.lower() == ".eval"):
        return read_inspect(path, **inspect_options)
    data = None
    if format == "auto":
        data = _load_json(path)
        format = _json_kind(data) or ""  # noqa: A001
        if not format:
            raise ResultsError(path, None, _unknown())
        if format == "inspect":
            return read_inspect(path, **inspect_options)
    if format == "tau-bench":
        return read_tau_bench(path, data)
    if format == "tau2":
        return read_tau2(path, data)
    raise ResultsError(path, None, f"unknown format {format!r}")
