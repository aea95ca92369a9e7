"""Read run results from files: one run a record, grouped into per-task counts.

The generic formats are JSON Lines (``.jsonl``, one object a line) and CSV
(``.csv``, a header row), with the fields

``task_id`` (str, required), ``success`` (bool, required),
``trial`` (int, optional; a repeated ``(task_id, trial)`` is an error),
``risk`` (str, optional), and, as written by ``passk run``,
``infrastructure_error`` and ``cached`` (bool, optional; such runs are not
counted as evidence about the agent).

Every problem is reported as a :class:`ResultsError` naming the file and the
line, never as a wrong number.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["ResultsError", "Run", "Results", "read_results", "results_from_runs",
           "read_jsonl_runs", "read_csv_runs"]


class ResultsError(ValueError):
    """A results file that cannot be read; the message names the file and the record."""

    def __init__(self, path: str | os.PathLike[str], where: int | str | None, message: str):
        location = f"{os.fspath(path)}" + (f":{where}" if where is not None else "")
        super().__init__(f"{location}: {message}")
        self.path, self.where, self.message = os.fspath(path), where, message


@dataclass(frozen=True, slots=True)
class Run:
    """One run as read from a file."""

    task_id: str
    success: bool
    trial: int | None = None
    risk: str | None = None
    excluded: bool = False  # an infrastructure error or a cached result


@dataclass(frozen=True)
class Results:
    """Per-task counts read from a results file.

    Attributes
    ----------
    task_ids : tuple of str
        In order of first appearance.
    successes, totals : numpy.ndarray of int
        Counted runs per task that passed, and counted runs per task (the n).
    excluded : numpy.ndarray of int
        Runs per task left out of the counts (infrastructure errors, cached).
    risks : tuple of str
        Each task's risk label (``"read-only"`` when the file gives none).
    source : str
        Which reader produced them (``"jsonl"``, ``"csv"``, ...).
    """

    task_ids: tuple[str, ...]
    successes: np.ndarray
    totals: np.ndarray
    excluded: np.ndarray
    risks: tuple[str, ...]
    source: str = "jsonl"
    notes: tuple[str, ...] = field(default=())

    def __len__(self) -> int:
        return len(self.task_ids)


def results_from_runs(runs: Iterable[Run], *, path: str | os.PathLike[str] = "<runs>",
                      source: str = "jsonl") -> Results:
    """Group runs by task into counts (vectorized over runs).

    Examples
    --------
    >>> r = results_from_runs([Run("a", True), Run("a", False), Run("b", True, excluded=True)])
    >>> r.task_ids, r.successes.tolist(), r.totals.tolist(), r.excluded.tolist()
    (('a', 'b'), [1, 0], [2, 0], [0, 1])
    """
    task_of: dict[str, int] = {}
    risks: list[str] = []
    index: list[int] = []
    success: list[bool] = []
    excluded: list[bool] = []
    for run in runs:
        i = task_of.get(run.task_id)
        if i is None:
            i = task_of[run.task_id] = len(task_of)
            risks.append(run.risk or "read-only")
        elif run.risk and risks[i] == "read-only":
            risks[i] = run.risk
        index.append(i)
        success.append(run.success)
        excluded.append(run.excluded)
    if not task_of:
        raise ResultsError(path, None, "no runs found (the file is empty)")
    idx = np.asarray(index, dtype=np.int64)
    ok = np.asarray(success, dtype=bool)
    out = np.asarray(excluded, dtype=bool)
    m = len(task_of)
    return Results(
        task_ids=tuple(task_of),
        successes=np.bincount(idx, weights=ok & ~out, minlength=m).astype(np.int64),
        totals=np.bincount(idx, weights=~out, minlength=m).astype(np.int64),
        excluded=np.bincount(idx, weights=out, minlength=m).astype(np.int64),
        risks=tuple(risks),
        source=source,
    )


def _field(record: Mapping[str, Any], name: str, kinds: tuple[type, ...], path: Any, line: int,
           *, required: bool = False, what: str = "") -> Any:
    if name not in record or record[name] is None:
        if required:
            raise ResultsError(path, line, f"missing field {name!r}")
        return None
    value = record[name]
    # bool is an int in Python; only accept it where a bool is asked for
    if not isinstance(value, kinds) or (bool not in kinds and isinstance(value, bool)):
        raise ResultsError(path, line, f"field {name!r} must be {what}, got {value!r}")
    return value


def _run_from_record(record: Any, path: Any, line: int) -> Run:
    if not isinstance(record, dict):
        raise ResultsError(path, line, f"expected a JSON object, got {type(record).__name__}")
    task_id = _field(record, "task_id", (str, int), path, line, required=True,
                     what="a string")
    success = _field(record, "success", (bool,), path, line, required=True,
                     what="a boolean (true or false)")
    trial = _field(record, "trial", (int,), path, line, what="a whole number")
    risk = _field(record, "risk", (str,), path, line, what="a string")
    infra = _field(record, "infrastructure_error", (bool,), path, line, what="a boolean")
    cached = _field(record, "cached", (bool,), path, line, what="a boolean")
    return Run(str(task_id), success, trial, risk, bool(infra) or bool(cached))


def _check_duplicates(runs: Iterable[tuple[int, Run]], path: Any) -> Iterator[Run]:
    seen: dict[tuple[str, int], int] = {}
    for line, run in runs:
        if run.trial is not None:
            key = (run.task_id, run.trial)
            if key in seen:
                raise ResultsError(path, line, f"duplicate run: task {run.task_id!r} trial "
                                   f"{run.trial} already appears on line {seen[key]}")
            seen[key] = line
        yield run


def read_jsonl_runs(path: str | os.PathLike[str]) -> Iterator[Run]:
    """Yield the runs of a JSON Lines file, one object a line (blank lines skipped)."""
    def numbered() -> Iterator[tuple[int, Run]]:
        with open(path, encoding="utf-8") as f:
            for line_no, text in enumerate(f, start=1):
                if not text.strip():
                    continue
                try:
                    record = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise ResultsError(path, line_no, f"not valid JSON ({exc.msg})") from None
                yield line_no, _run_from_record(record, path, line_no)
    return _check_duplicates(numbered(), path)


_TRUE = {"true": True, "1": True, "false": False, "0": False}


def read_csv_runs(path: str | os.PathLike[str]) -> Iterator[Run]:
    """Yield the runs of a CSV file with a header row (``success`` as true/false or 1/0)."""
    def numbered() -> Iterator[tuple[int, Run]]:
        with open(path, encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f)
            missing = {"task_id", "success"} - set(reader.fieldnames or ())
            if missing:
                raise ResultsError(path, 1, f"missing column(s) {sorted(missing)} in the header")
            for row in reader:
                line = reader.line_num
                if not row.get("task_id"):
                    raise ResultsError(path, line, "missing field 'task_id'")
                raw = (row.get("success") or "").strip().lower()
                if raw not in _TRUE:
                    raise ResultsError(path, line, f"field 'success' must be true/false or "
                                       f"1/0, got {row.get('success')!r}")
                trial = (row.get("trial") or "").strip()
                if trial and not trial.lstrip("-").isdigit():
                    raise ResultsError(path, line, f"field 'trial' must be a whole number, "
                                       f"got {trial!r}")
                flags = [(row.get(name) or "").strip().lower() in ("true", "1")
                         for name in ("infrastructure_error", "cached")]
                yield line, Run(row["task_id"], _TRUE[raw], int(trial) if trial else None,
                                (row.get("risk") or None), any(flags))
    return _check_duplicates(numbered(), path)


_READERS = {".jsonl": ("jsonl", read_jsonl_runs), ".ndjson": ("jsonl", read_jsonl_runs),
            ".csv": ("csv", read_csv_runs)}


def read_results(path: str | os.PathLike[str]) -> Results:
    """Read a generic results file (JSON Lines or CSV, by extension) into per-task counts.

    Raises
    ------
    ResultsError
        For a missing file, an unknown extension, an empty file, or any bad record;
        the message names the file and the line.
    """
    p = Path(path)
    if not p.is_file():
        raise ResultsError(path, None, "no such file")
    try:
        source, reader = _READERS[p.suffix.lower()]
    except KeyError:
        raise ResultsError(path, None, f"unknown extension {p.suffix!r}; expected one of "
                           f"{', '.join(sorted(_READERS))}") from None
    try:
        return results_from_runs(reader(p), path=path, source=source)
    except UnicodeDecodeError as exc:
        raise ResultsError(path, None, f"not a text file ({exc.reason})") from None
