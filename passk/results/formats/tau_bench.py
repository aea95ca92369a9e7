"""tau-bench's results file: a JSON array of ``EnvRunResult`` records.

Each record is ``{"task_id": int, "reward": float, "info": {...}, "traj":
[...], "trial": int}`` (``run.py`` in sierra-research/tau-bench); a run
succeeds when its reward is within ``1e-6`` of 1.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from passk.render.words import plural
from passk.results.counts import Results, ResultsError, Run, tally_runs, with_notes
from passk.results.formats._shared import (
    is_successful,
    load_json,
    require,
    reward,
    short_of_plan,
)

__all__ = ["read_tau_bench", "sniff"]


def sniff(data: Any, path: Path) -> bool:
    """A JSON array (tau-bench's file; tau2's bare arrays are claimed first by tau2)."""
    return isinstance(data, list)


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
        data = load_json(path)
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
            task_id = require(record, "task_id", (int,), "a whole number", path, where)
            if record.get("reward") is None:
                raise ResultsError(path, where, "missing field 'reward'")
            value = reward(record["reward"], "reward", path, where)
            trial = require(record, "trial", (int,), "a whole number", path, where)
            for name, kind, what in (("info", dict, "an object"), ("traj", list, "an array")):
                if record.get(name) is not None and not isinstance(record[name], kind):
                    raise ResultsError(path, where, f"field {name!r} must be {what}, "
                                       f"got {type(record[name]).__name__}")
            raised += isinstance(record.get("info"), dict) and "error" in record["info"]
            trials.add(trial)
            yield where, Run(str(task_id), is_successful(value), trial)

    results = tally_runs(runs(), path=path, source="tau-bench", duplicates=duplicates)
    notes = []
    if raised:
        notes.append(f"{plural(raised, 'run')} ended in an exception (info.error) and count as "
                     "failures, as tau-bench counts them")
    num_trials = len(trials)
    short = short_of_plan(results, num_trials, opening="tau-bench run has uneven trials:",
                           unit="runs", per_task=f"{plural(num_trials, 'trial')}, the trials seen")
    return with_notes(results, notes, [short] if short else [])
