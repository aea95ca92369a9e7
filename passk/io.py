"""Read run results from files: one run a record, grouped into per-task counts.

Benchmark formats (tau-bench, tau2-bench, Inspect AI) are read by
:mod:`passk.formats`; :func:`read_results` dispatches on ``format``.

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
import gc
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from itertools import repeat
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .protocol import Protocol

if TYPE_CHECKING:
    from .repeat_run import RepeatRun

__all__ = ["ResultsError", "Run", "Results", "read_results", "results_from_runs",
           "read_jsonl_runs", "read_csv_runs", "write_runs", "FORMATS"]


class ResultsError(ValueError):
    """A results file that cannot be read; the message names the file and the record."""

    def __init__(self, path: str | os.PathLike[str], where: int | str | None, message: str):
        # a line number reads ``file.jsonl:17: ...``; a record ``file.json: record 17: ...``
        if where is None:
            location = os.fspath(path)
        elif isinstance(where, int):
            location = f"{os.fspath(path)}:{where}"
        else:
            location = f"{os.fspath(path)}: {where}"
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
    protocol : Protocol or None
        The measurement's protocol, when the file records one (``passk run`` logs do).
    """

    task_ids: tuple[str, ...]
    successes: np.ndarray
    totals: np.ndarray
    excluded: np.ndarray
    risks: tuple[str, ...]
    source: str = "jsonl"
    notes: tuple[str, ...] = field(default=())
    protocol: Protocol | None = None

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
    return _tally(tuple(task_of), np.asarray(index, dtype=np.int64),
                  np.asarray(success, dtype=bool), np.asarray(excluded, dtype=bool),
                  tuple(risks), source)


def _tally(task_ids: tuple[str, ...], index: np.ndarray, ok: np.ndarray, out: np.ndarray,
           risks: tuple[str, ...], source: str, protocol: Protocol | None = None) -> Results:
    """Per-task counts from per-run arrays: task index, success, and left out."""
    m = len(task_ids)
    return Results(
        task_ids=task_ids,
        successes=np.bincount(index, weights=ok & ~out, minlength=m).astype(np.int64),
        totals=np.bincount(index, weights=~out, minlength=m).astype(np.int64),
        excluded=np.bincount(index, weights=out, minlength=m).astype(np.int64),
        risks=risks,
        source=source,
        protocol=protocol,
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
    """Refuse a counted (task, trial) seen twice; retried infrastructure errors may repeat."""
    seen: dict[tuple[str, int], int] = {}
    for line, run in runs:
        if run.trial is not None and not run.excluded:
            key = (run.task_id, run.trial)
            if key in seen:
                raise ResultsError(path, line, f"duplicate run: task {run.task_id!r} trial "
                                   f"{run.trial} already appears on line {seen[key]}")
            seen[key] = line
        yield run


def read_jsonl_runs(path: str | os.PathLike[str]) -> Iterator[Run]:
    """Yield the runs of a JSON Lines file, one object a line (blank lines skipped)."""
    def numbered() -> Iterator[tuple[int, Run]]:
        first_line = 1
        with open(path, encoding="utf-8") as f:
            for line_no, text in enumerate(f, start=1):
                if not text.strip():
                    first_line += first_line == line_no
                    continue
                try:
                    record = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise ResultsError(path, line_no, f"not valid JSON ({exc.msg})") from None
                if _protocol_header(record, path, line_no) is not None:
                    if line_no != first_line:
                        raise ResultsError(path, line_no, "a protocol record must come first")
                    continue
                first_line = 0
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

_NONE = type(None)


def _protocol_header(record: Any, path: Any, line: int) -> Protocol | None:
    """A ``{"protocol": {...}}`` record (written by ``passk run``) as a :class:`Protocol`."""
    if isinstance(record, dict) and "protocol" in record and "task_id" not in record:
        try:
            return Protocol.from_dict(record["protocol"])
        except (ValueError, AttributeError, TypeError) as exc:
            raise ResultsError(path, line, f"bad protocol record ({exc})") from None
    return None


def _fast_jsonl(path: Path) -> Results | None:
    """Counts from a JSON Lines file in bulk: one ``json.loads`` and column checks.

    Returns None when anything is off (bad JSON, a wrong type, a duplicate);
    the caller then re-reads line by line, which names the exact line. Valid
    files never take that slow path, so a million runs parse in about a second.
    """
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    if not all(lines):
        lines = [line for line in lines if line.strip()]
    if not lines:
        return None
    gc_was_on = gc.isenabled()
    gc.disable()  # a million new dicts would trigger many useless collections
    try:
        records = json.loads("[" + ",".join(lines) + "]")
    except json.JSONDecodeError:
        return None
    finally:
        if gc_was_on:
            gc.enable()
    if len(records) != len(lines) or set(map(type, records)) != {dict}:
        return None
    protocol = _protocol_header(records[0], path, 1)
    if protocol is not None:
        records = records[1:]
    if not records:
        return None

    def column(name: str) -> list[Any]:  # a C-level map: ~10x a comprehension
        return list(map(dict.get, records, repeat(name, len(records))))

    task_ids, success, trials = column("task_id"), column("success"), column("trial")
    risks, infra, cached = column("risk"), column("infrastructure_error"), column("cached")
    id_types = set(map(type, task_ids))
    if (not id_types <= {str, int} or set(map(type, success)) != {bool}
            or not set(map(type, trials)) <= {int, _NONE}
            or not set(map(type, risks)) <= {str, _NONE}
            or not set(map(type, infra)) <= {bool, _NONE}
            or not set(map(type, cached)) <= {bool, _NONE}):
        return None
    if int in id_types:
        task_ids = list(map(str, task_ids))
    task_of = {t: i for i, t in enumerate(dict.fromkeys(task_ids))}
    index = np.fromiter(map(task_of.__getitem__, task_ids), dtype=np.int64, count=len(task_ids))
    m = len(task_of)
    out = np.zeros(len(records), dtype=bool)  # left out: infrastructure errors, cached runs
    for flags in (infra, cached):
        if True in flags:
            out |= np.fromiter((x is True for x in flags), dtype=bool, count=len(flags))
    if any(t is not None for t in trials):
        has = np.fromiter((t is not None for t in trials), dtype=bool, count=len(trials)) & ~out
        trial = np.fromiter((0 if t is None else t for t in trials), dtype=np.int64,
                            count=len(trials))[has]
        if trial.size:
            span = int(trial.max()) - int(trial.min()) + 1
            key = np.sort(index[has] * span + (trial - trial.min()))
            if np.any(key[1:] == key[:-1]):
                return None  # a duplicate (task, trial): the slow path names both lines
    labels = ["read-only"] * m
    if any(risks):
        for i, risk in zip(index.tolist(), risks):
            if risk and labels[i] == "read-only":
                labels[i] = risk
    return _tally(tuple(task_of), index, np.asarray(success, dtype=bool), out, tuple(labels),
                  "jsonl", protocol)


def _first_protocol(path: Path) -> Protocol | None:
    with open(path, encoding="utf-8") as f:
        for line_no, text in enumerate(f, start=1):
            if text.strip():
                try:
                    return _protocol_header(json.loads(text), path, line_no)
                except json.JSONDecodeError:
                    return None  # the line-by-line reader reports it
    return None


def write_runs(path: str | os.PathLike[str], repeat_runs: Iterable[RepeatRun]) -> int:
    """Write runs as JSON Lines in the generic format, one run a line; return the count.

    ``repeat_runs`` is what :func:`passk.evaluate_suite` keeps in ``report.runs``
    (or any :class:`~passk.repeat_run.RepeatRun` objects). Each line holds
    ``task_id``, ``trial`` (the run index), ``success`` and ``risk``, plus
    ``infrastructure_error`` and ``cached`` where set, so that ``passk report``
    and ``passk gate`` read back exactly the counts the runs gave.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from passk import OnCallSimulator, demo_tasks, evaluate_suite
    >>> report = evaluate_suite(OnCallSimulator(), demo_tasks(), seed=3)
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "runs.jsonl"
    >>> write_runs(path, report.runs)
    22
    >>> read_results(path).successes.tolist()
    [10, 5, 5]
    """
    count = 0
    with open(path, "w", encoding="utf-8") as f:
        for repeat in repeat_runs:
            for r in repeat.results:
                line: dict[str, Any] = {"task_id": r.task_id, "trial": r.run_index,
                                        "success": bool(r.success), "risk": repeat.task.risk}
                if r.infrastructure_error:
                    line["infrastructure_error"] = True
                if r.cached:
                    line["cached"] = True
                f.write(json.dumps(line) + "\n")
                count += 1
    return count


#: Every format ``read_results`` understands, as ``--format`` spells them.
FORMATS = ("auto", "jsonl", "csv", "tau-bench", "tau2", "inspect")


def read_results(path: str | os.PathLike[str], format: str = "auto",  # noqa: A002
                 **options: Any) -> Results:
    """Read a results file into per-task counts.

    Parameters
    ----------
    path : str or PathLike
    format : str, default "auto"
        One of :data:`FORMATS`. ``"auto"`` decides by extension (``.jsonl``,
        ``.ndjson``, ``.csv``, ``.eval``) and, for ``.json``, by content
        (see :func:`passk.formats.detect_format`); the choice is in
        ``Results.source``.
    **options
        Reader options: ``scorer`` and ``success_values`` for Inspect logs.

    Raises
    ------
    ResultsError
        For a missing file, an unknown format, an empty file, or any bad record;
        the message names the file and the line or record.
    """
    from .formats import read_formatted

    p = Path(path)
    if format not in FORMATS:
        raise ResultsError(path, None, f"unknown format {format!r}; supported formats: "
                           f"{', '.join(FORMATS)}")
    if not p.is_file():
        raise ResultsError(path, None, "no such file")
    try:
        if format == "auto" and p.suffix.lower() in _READERS:
            format = _READERS[p.suffix.lower()][0]  # noqa: A001
        if format == "jsonl":
            fast = _fast_jsonl(p)
            if fast is not None:
                return fast
            protocol = _first_protocol(p)
            results = results_from_runs(read_jsonl_runs(p), path=path, source="jsonl")
            return replace(results, protocol=protocol)
        if format == "csv":
            return results_from_runs(read_csv_runs(p), path=path, source="csv")
        return read_formatted(p, format, **options)
    except UnicodeDecodeError as exc:
        raise ResultsError(path, None, f"not a text file ({exc.reason})") from None
