"""terminal-bench's runs: a run's ``results.json``, its run directory, or a submission folder.

``tb run`` writes ``runs/<run_id>/results.json``, its ``BenchmarkResults``
(``terminal_bench/harness/models.py``): ``{"id", "results": [...],
"pass_at_k": {"2": ..., "4": ...}, "n_resolved", "n_unresolved",
"resolved_ids", "unresolved_ids", "accuracy"}``, one ``TrialResults`` a trial
with ``task_id``, ``trial_name`` ``"TASK.i-of-n"`` (later versions append
``.RUN_ID``) and ``is_resolved``, beside ``run_metadata.json`` (``n_attempts``,
``dataset_size``, ...). A trial succeeds when ``is_resolved`` is true; a trial
whose harness failed (``is_resolved`` null, a ``failure_mode`` such as
``agent_timeout``) is a failure, as terminal-bench counts it.

The ``pass_at_k`` and ``accuracy`` terminal-bench stores are checked against
the counts read (its rule: tasks with fewer than k trials are skipped, the
mean over the rest of ``1 - C(n - c, k) / C(n, k)``), and a note says whether
they agree. A submission's folder of run directories (one ``results.json``
each, as leaderboard submissions hold several runs of one agent) is read as
trials of one suite: each run adds its trials to every task.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from passk.render.words import plural
from passk.results.counts import Results, ResultsError, Run, combine_trials, tally_runs, with_notes
from passk.results.formats._shared import QUOTE, load_json, require, short_of_plan, some

__all__ = ["TB_RUN_ID", "read_terminal_bench", "sniff", "sniff_dir", "stored_pass_at_k"]

RESULTS, METADATA = "results.json", "run_metadata.json"

#: What a terminal-bench run's identity is: its trial's ``id``.
TB_RUN_ID = "terminal-bench trial"

#: ``i-of-n`` in a trial name: the attempt and the run's number of attempts.
_ATTEMPT = re.compile(r"(?:^|\.)(\d+)-of-(\d+)(?:\.|$)")

#: terminal-bench's stored figures are floats of the same sums: agreement within this.
_AGREE = 1e-9


def sniff(data: Any, path: Path) -> bool:
    """terminal-bench's object: ``results`` an array of trials with ``trial_name``."""
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        return False
    first = data["results"][0] if data["results"] else None
    return (isinstance(first, dict) and "trial_name" in first) or (
        not data["results"] and ("pass_at_k" in data or "n_resolved" in data))


def _subdirs(path: Path) -> list[Path]:
    return sorted(d for d in path.iterdir() if d.is_dir() and not d.name.startswith("."))


def _run_dirs(path: Path) -> list[Path]:
    return [d for d in _subdirs(path) if (d / RESULTS).is_file()]


def _is_run_file(meta: Path) -> bool:
    try:
        return sniff(load_json(meta), meta)
    except ResultsError:
        return False


def sniff_dir(path: Path) -> bool:
    """A run directory (its ``results.json`` is terminal-bench's) or a folder of them."""
    if (path / RESULTS).is_file():
        return _is_run_file(path / RESULTS)
    # a submission: every folder in it is a run directory (the answer does not depend on the
    # order, so the folders are not sorted and the first that is not one decides)
    with os.scandir(path) as scan:
        subdirs = (path / e.name for e in scan if not e.name.startswith(".") and _is_dir(e))
        found = False
        for d in subdirs:
            if not ((d / RESULTS).is_file() and _is_run_file(d / RESULTS)):
                return False
            found = True
    return found


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def stored_pass_at_k(successes: np.ndarray, totals: np.ndarray, k: int) -> float:
    """pass@k as terminal-bench computes it: the mean over tasks with at least k trials.

    Examples
    --------
    >>> stored_pass_at_k(np.array([1, 0, 3]), np.array([3, 3, 3]), 2)
    0.5555555555555556
    """
    keep = totals >= k
    c, n = successes[keep], totals[keep]
    per_task = [1.0 - math.comb(int(ni - ci), k) / math.comb(int(ni), k) for ci, ni in zip(c, n)]
    return float(np.mean(per_task)) if per_task else math.nan


def _check_stored(data: dict[str, Any], results: Results, path: Path) -> str | None:
    """The note saying whether the stored pass_at_k and accuracy match the counts."""
    stored = data.get("pass_at_k")
    checked: list[str] = []
    wrong: list[str] = []
    if isinstance(stored, dict):
        for key, value in stored.items():
            try:
                k = int(key)
            except (TypeError, ValueError):
                continue
            if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            mine = stored_pass_at_k(results.successes, results.totals, k)
            (checked if abs(mine - value) <= _AGREE else wrong).append(
                f"pass@{k} {value:.4f}" + ("" if abs(mine - value) <= _AGREE
                                           else f" (the trials give {mine:.4f})"))
    accuracy = data.get("accuracy")
    if isinstance(accuracy, (int, float)) and not isinstance(accuracy, bool):
        n = int(results.totals.sum())
        mine = float(results.successes.sum()) / n if n else 0.0
        (checked if abs(mine - accuracy) <= _AGREE else wrong).append(
            f"accuracy {accuracy:.4f}" + ("" if abs(mine - accuracy) <= _AGREE
                                          else f" (the trials give {mine:.4f})"))
    if wrong:
        return (f"the figures {RESULTS} stores disagree with its trials: {', '.join(wrong)} "
                "(an edited or merged file?)")
    if checked:
        return f"the figures {RESULTS} stores agree with its trials: {', '.join(checked)}"
    return None


def _read_run(file: Path, report_as: Path, data: Any, duplicates: str) -> Results:
    if data is None:
        data = load_json(file, report_as, None if report_as == file else RESULTS)
    where_file = None if report_as == file else RESULTS
    if not isinstance(data, dict):
        raise ResultsError(report_as, where_file, f"a terminal-bench {RESULTS} is a JSON object "
                           f"with 'results', got a JSON {type(data).__name__}")
    trials = data.get("results")
    if not isinstance(trials, list):
        raise ResultsError(report_as, where_file, "field 'results' must be an array of trials"
                           + ("" if "results" in data else " (it is missing)"))
    planned: set[int] = set()
    modes: Counter[str] = Counter()

    def runs() -> Iterator[tuple[str, Run]]:
        for i, record in enumerate(trials):
            where = f"results[{i}]" if where_file is None else f"{RESULTS}: results[{i}]"
            if not isinstance(record, dict):
                raise ResultsError(report_as, where, f"expected a JSON object, got "
                                   f"{record!r:.{QUOTE}}")
            task_id = require(record, "task_id", (str,), "a string", report_as, where)
            name = require(record, "trial_name", (str,), "a string", report_as, where)
            rest = name.removeprefix(task_id)
            found = _ATTEMPT.search(rest)
            if found is None:
                raise ResultsError(report_as, where, f"trial_name {name!r:.{QUOTE}} has no "
                                   "'.i-of-n' attempt (terminal-bench names trials TASK.i-of-n)")
            attempt, of = int(found.group(1)), int(found.group(2))
            if not 1 <= attempt <= of:
                raise ResultsError(report_as, where, f"trial_name {name!r:.{QUOTE}}: attempt "
                                   f"{attempt} is not between 1 and {of}")
            planned.add(of)
            resolved = record.get("is_resolved")
            if resolved is not None and not isinstance(resolved, bool):
                raise ResultsError(report_as, where, f"field 'is_resolved' must be true, false "
                                   f"or null, got {resolved!r:.{QUOTE}}")
            if resolved is None:
                mode = record.get("failure_mode")
                modes[str(mode) if isinstance(mode, str) else "unknown"] += 1
            trial_id = record.get("id")
            run_id = ((TB_RUN_ID, str(trial_id)) if isinstance(trial_id, str) and trial_id
                      else None)
            yield where, Run(task_id, resolved is True, attempt - 1, run_id=run_id)

    results = tally_runs(runs(), path=report_as, source="terminal-bench", duplicates=duplicates)
    notes: list[str] = []
    incomplete: list[str] = []
    if modes:
        shown_modes = some([f"{m} ({n})" for m, n in modes.most_common()])
        notes.append(f"{plural(sum(modes.values()), 'trial')} ended without a verdict "
                     f"(is_resolved null; failure modes {shown_modes}) "
                     "and count as failures, as terminal-bench counts them")
    stored = _check_stored(data, results, report_as)
    if stored:
        notes.append(stored)
    if len(planned) > 1:
        notes.append(f"trial names give different numbers of attempts ({sorted(planned)})")
    if planned:
        n = max(planned)
        short = short_of_plan(results, n, opening="terminal-bench run holds", unit="trials",
                              per_task=f"{plural(n, 'attempt')}, as its trial names say")
        if short:
            incomplete.append(short)
    meta_file = file.parent / METADATA
    if meta_file.is_file():
        meta = load_json(meta_file, report_as, METADATA)
        size = meta.get("dataset_size") if isinstance(meta, dict) else None
        if isinstance(size, int) and not isinstance(size, bool) and size > len(results):
            incomplete.append(f"{METADATA} gives a dataset of {size} tasks but "
                              f"{RESULTS} holds trials of {len(results)}")
    return with_notes(results, notes, incomplete)


def read_terminal_bench(path: str | os.PathLike[str], data: Any = None, *,
                        duplicates: str = "error") -> Results:
    """Read a terminal-bench run (``results.json`` or its run directory) or a submission folder.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> trials = [{"task_id": "hello", "trial_name": f"hello.{i}-of-3", "is_resolved": ok}
    ...           for i, ok in [(1, True), (2, False), (3, True)]]
    >>> _ = (d / "results.json").write_text(json.dumps({"results": trials,
    ...     "pass_at_k": {"2": 1.0}, "accuracy": 2 / 3}))
    >>> r = read_terminal_bench(d / "results.json")
    >>> r.successes.tolist(), r.totals.tolist(), r.notes[0]
    ([2], [3], 'the figures results.json stores agree with its trials: pass@2 1.0000, accuracy 0.6667')
    """  # noqa: E501  # a doctest's output line cannot wrap
    path = Path(path)
    if path.is_file():
        return _read_run(path, path, data, duplicates)
    if (path / RESULTS).is_file():
        return _read_run(path / RESULTS, path, None, duplicates)
    runs = _run_dirs(path)
    others = [d.name for d in _subdirs(path) if d not in runs]
    if not runs or others:
        raise ResultsError(path, None, f"is not a terminal-bench run directory (no {RESULTS}) "
                           "nor a folder of run directories" + (
                               f": {len(others)} of its folders hold no {RESULTS} "
                               f"({some(others)})" if runs else ""))
    parts = [(run.name, _read_run(run / RESULTS, run, None, duplicates)) for run in runs]
    return combine_trials(parts, path=path, what="run directories")
