"""Read run results from files: one run a record, grouped into per-task counts.

This module is the one place that parses a run log (the JSON Lines file that
``passk run`` appends to and :func:`write_runs` writes) and the one place that
turns runs into counts (:func:`tally_runs`), with one rule for duplicates.
Benchmark formats (tau-bench, tau2-bench, Inspect AI) are read by
:mod:`passk.formats`, which builds on the public names here;
:func:`read_results` reads every format.

The generic formats are JSON Lines (``.jsonl``, one object a line) and CSV
(``.csv``, a header row), with the fields

``task_id`` (str, required), ``success`` (bool, required),
``trial`` (int, optional; a repeated ``(task_id, trial)`` is an error unless
``duplicates`` says which to keep), ``risk`` (str, optional), and, as written
by ``passk run``, ``infrastructure_error`` and ``cached`` (bool, optional;
such runs are not counted as evidence about the agent). A JSON Lines file may
start with a protocol header, ``{"protocol": {...}, "seed": ...}``.

Every problem is reported as a :class:`ResultsError` naming the file and the
line, never as a wrong number. What a reader could not count is said, never
dropped silently: runs left out (``Results.excluded``, and why in
``Results.excluded_reason``), records dropped as duplicates (``notes``), and
a run that stopped short of its plan (``Results.incomplete``).
"""

from __future__ import annotations

import csv
import gc
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .protocol import Protocol

if TYPE_CHECKING:
    from .repeats import RepeatRun

__all__ = [
    "CACHED_RESULTS",
    "DUPLICATES",
    "FORMATS",
    "FORMAT_NAMES",
    "INFRASTRUCTURE_ERRORS",
    "READER_OPTIONS",
    "Results",
    "ResultsError",
    "Run",
    "RunLog",
    "log_header_line",
    "read_csv_runs",
    "read_jsonl_runs",
    "read_log_header",
    "read_results",
    "read_run_log",
    "reject_options",
    "results_from_runs",
    "tally_runs",
    "with_notes",
    "write_runs",
]

#: Every format ``read_results`` understands, as ``--format`` spells them.
FORMATS = ("auto", "jsonl", "csv", "tau-bench", "tau2", "inspect")

#: What to do with a repeated (task, trial): refuse the file, keep the first, keep the last.
DUPLICATES = ("error", "first", "last")

#: Reader options: each one's command-line flag and the format that takes it.
READER_OPTIONS = {"scorer": ("--scorer", "inspect"),
                  "success_values": ("--success-value", "inspect")}

#: The formats' names in messages.
FORMAT_NAMES = {"jsonl": "JSON Lines", "csv": "CSV", "tau-bench": "tau-bench",
                "tau2": "tau2-bench", "inspect": "Inspect AI"}

#: Why runs were left out, as ``Results.excluded_reason`` names it.
INFRASTRUCTURE_ERRORS = "infrastructure errors"
CACHED_RESULTS = "cached results"
_UNLABELLED = "infrastructure errors or cached results"  # a Run(excluded=True) without a label


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
    """One run as read from a file.

    ``excluded`` runs are not evidence about the agent (an infrastructure
    error, a cached result, an errored sample); ``excluded_as`` names their
    kind in the plural, as reasons print it (e.g. ``"infrastructure errors"``).
    """

    task_id: str
    success: bool
    trial: int | None = None
    risk: str | None = None
    excluded: bool = False
    excluded_as: str = ""


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
        Runs per task left out of the counts.
    risks : tuple of str
        Each task's risk label (``"read-only"`` when the file gives none).
    source : str
        Which reader produced them (``"jsonl"``, ``"csv"``, ``"tau-bench"``,
        ``"tau2"``, ``"inspect"``).
    notes : tuple of str
        What the reader wants a reader of the report to know.
    protocol : Protocol or None
        The measurement's protocol, when the file records one (``passk run`` logs do).
    incomplete : tuple of str
        One sentence each, with counts, for every way the run stopped short of
        its own plan (a cancelled Inspect eval, a tau2 run with fewer
        simulations than ``num_trials`` × tasks, a tau-bench run with uneven
        trials, a ``passk run`` log short of its protocol). Empty when the file
        looks complete. The same sentences are in ``notes``.
    excluded_reason : str
        Why the ``excluded`` runs were left out, in the plural, e.g.
        ``"infrastructure errors"``, ``"errored samples"``, ``"cached results"``
        or ``"infrastructure errors or cached results"``; empty when none were.
    """

    task_ids: tuple[str, ...]
    successes: np.ndarray
    totals: np.ndarray
    excluded: np.ndarray
    risks: tuple[str, ...]
    source: str = "jsonl"
    notes: tuple[str, ...] = field(default=())
    protocol: Protocol | None = None
    incomplete: tuple[str, ...] = field(default=())
    excluded_reason: str = ""

    def __len__(self) -> int:
        return len(self.task_ids)


# --------------------------------------------------------------------------
# runs into counts: the one place, with one rule for duplicates
# --------------------------------------------------------------------------


def _at(where: int | str) -> str:
    return f"on line {where}" if isinstance(where, int) else f"at {where}"


def _named(where: int | str) -> str:
    return f"line {where}" if isinstance(where, int) else str(where)


def _check_duplicates_option(duplicates: str) -> None:
    if duplicates not in DUPLICATES:
        raise ValueError(f"duplicates ({duplicates!r}) must be one of {', '.join(DUPLICATES)}")


def _dedupe(located: Iterable[tuple[int | str, Run]], path: Any, duplicates: str,
            dropped: list[int | str]) -> Iterator[Run]:
    """Apply the duplicates rule to counted runs; a run left out may repeat (a retry).

    ``"error"`` and ``"first"`` stream; ``"last"`` holds the runs until the end
    and puts each kept run where its (task, trial) first appeared, so the order
    of tasks does not change. Dropped records' locations go to ``dropped``.
    """
    seen: dict[tuple[str, int], int | str] = {}
    if duplicates != "last":
        for where, run in located:
            if run.trial is not None and not run.excluded:
                key = (run.task_id, run.trial)
                if key in seen:
                    if duplicates == "error":
                        raise ResultsError(
                            path, where, f"duplicate run: task {run.task_id!r} trial {run.trial} "
                            f"already appears {_at(seen[key])} (a resumed or merged run? "
                            "duplicates='first' or 'last', --duplicates on the command line, "
                            "keeps one record of each)")
                    dropped.append(where)
                    continue
                seen[key] = where
            yield run
        return
    kept: list[Run] = []
    slot: dict[tuple[str, int], tuple[int, int | str]] = {}
    for where, run in located:
        if run.trial is not None and not run.excluded:
            key = (run.task_id, run.trial)
            if key in slot:
                i, earlier = slot[key]
                dropped.append(earlier)
                kept[i] = run
                slot[key] = (i, where)
                continue
            slot[key] = (len(kept), where)
        kept.append(run)
    yield from kept


def _dropped_note(dropped: Sequence[int | str], duplicates: str) -> str:
    shown = ", ".join(_named(w) for w in dropped[:10])
    more = f", and {len(dropped) - 10} more" if len(dropped) > 10 else ""
    return (f"{len(dropped)} duplicate record(s) of a (task, trial) dropped, keeping the "
            f"{duplicates} of each (duplicates={duplicates!r}): {shown}{more}")


def _reason(labels: Iterable[str]) -> str:
    """One phrase for the kinds of runs left out, in order of first appearance."""
    return " or ".join(dict.fromkeys(label or _UNLABELLED for label in labels))


def tally_runs(runs: Iterable[tuple[int | str, Run]], *, path: str | os.PathLike[str] = "<runs>",
               source: str = "jsonl", duplicates: str = "error", task_ids: Iterable[str] = (),
               notes: Sequence[str] = (), protocol: Protocol | None = None) -> Results:
    """Group located runs by task into counts, applying the duplicates rule.

    Every reader ends here, so a repeated (task, trial) is treated alike in
    every format.

    Parameters
    ----------
    runs : iterable of (where, Run)
        Each run with its location, a line number (int) or a label such as
        ``"record 3"``, for messages.
    path : str or PathLike
        The file, for messages.
    source : str
        The format's name, kept in ``Results.source``.
    duplicates : {'error', 'first', 'last'}
        A counted run whose (task, trial) was already seen is an error naming
        both records, or the first or the last of them is kept (and the others
        are counted in a note). Runs left out (``excluded``) may repeat: a
        retried infrastructure error is logged once per attempt.
    task_ids : iterable of str
        Tasks to list first, in this order, even if none of their runs was found
        (their n is then 0, and a gate fails closed on them).
    notes : sequence of str
        The reader's own notes, kept before the duplicate note.
    protocol : Protocol, optional
        The measurement's protocol; a ``"fixed"`` plan's tasks and runs are
        checked against the runs found (see ``Results.incomplete``).

    Returns
    -------
    Results

    Examples
    --------
    >>> r = tally_runs([(1, Run("a", True, 0)), (2, Run("a", False, 0)), (3, Run("a", True, 1))],
    ...                duplicates="last")
    >>> r.successes.tolist(), r.totals.tolist(), r.notes[0][:41]
    ([1], [2], '1 duplicate record(s) of a (task, trial) ')
    """
    _check_duplicates_option(duplicates)
    order: dict[str, int] = {t: i for i, t in enumerate(dict.fromkeys(task_ids))}
    labels = ["read-only"] * len(order)
    index: list[int] = []
    success: list[bool] = []
    excluded: list[bool] = []
    trial_keys: set[tuple[int, Any]] = set()
    untrialled = [0] * len(order)
    reasons: list[str] = []
    dropped: list[int | str] = []
    for run in _dedupe(runs, path, duplicates, dropped):
        i = order.get(run.task_id)
        if i is None:
            i = order[run.task_id] = len(order)
            labels.append(run.risk or "read-only")
            untrialled.append(0)
        elif run.risk and labels[i] == "read-only":
            labels[i] = run.risk
        index.append(i)
        success.append(run.success)
        excluded.append(run.excluded)
        if run.excluded:
            reasons.append(run.excluded_as)
        if protocol is not None:
            if run.trial is None:
                untrialled[i] += 1
            else:
                trial_keys.add((i, run.trial))
    if not order:
        raise ResultsError(path, None, "no runs found")
    all_notes = list(notes)
    if dropped:
        all_notes.append(_dropped_note(dropped, duplicates))
    m = len(order)
    results = _tally(tuple(order), np.asarray(index, dtype=np.int64),
                     np.asarray(success, dtype=bool), np.asarray(excluded, dtype=bool),
                     tuple(labels), source, protocol, _reason(reasons))
    gaps: tuple[str, ...] = ()
    if protocol is not None:
        distinct = np.asarray(untrialled, dtype=np.int64)
        if trial_keys:
            distinct += np.bincount(np.fromiter((i for i, _ in trial_keys), dtype=np.int64,
                                                count=len(trial_keys)), minlength=m)
        gaps = _plan_gaps(protocol, results.task_ids, results.risks, distinct)
    return with_notes(results, all_notes, gaps)


def with_notes(results: Results, notes: Iterable[str] = (),
               incomplete: Iterable[str] = ()) -> Results:
    """``results`` with more notes, and incomplete-run sentences added to both fields."""
    incomplete = tuple(incomplete)
    return replace(results, notes=results.notes + tuple(notes) + incomplete,
                   incomplete=results.incomplete + incomplete)


def results_from_runs(runs: Iterable[Run], *, path: str | os.PathLike[str] = "<runs>",
                      source: str = "jsonl", duplicates: str = "error") -> Results:
    """Group runs by task into counts (vectorized over runs).

    A repeated (task, trial) is an error naming the runs by their index
    (``run 3``), unless ``duplicates`` is ``"first"`` or ``"last"``; see
    :func:`tally_runs`.

    Examples
    --------
    >>> r = results_from_runs([Run("a", True), Run("a", False), Run("b", True, excluded=True)])
    >>> r.task_ids, r.successes.tolist(), r.totals.tolist(), r.excluded.tolist()
    (('a', 'b'), [1, 0], [2, 0], [0, 1])
    """
    return tally_runs(((f"run {i}", run) for i, run in enumerate(runs)), path=path,
                      source=source, duplicates=duplicates)


def _tally(task_ids: tuple[str, ...], index: np.ndarray, ok: np.ndarray, out: np.ndarray,
           risks: tuple[str, ...], source: str, protocol: Protocol | None = None,
           excluded_reason: str = "") -> Results:
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
        excluded_reason=excluded_reason if out.any() else "",
    )


def _plan_gaps(protocol: Protocol, task_ids: Sequence[str], risks: Sequence[str],
               runs: np.ndarray) -> tuple[str, ...]:
    """Where a fixed-repetition ``passk run`` log falls short of its protocol's plan.

    The plan is the protocol's task list and ``runs_by_risk`` (``default_runs``
    for other labels); a task flagged previously flaky may be planned more, so
    this is a lower bound and never reports a complete log as short. ``runs``
    counts each task's distinct trials, counted or left out.
    """
    s = protocol.settings
    planned_tasks, by_risk, default = s.get("tasks"), s.get("runs_by_risk"), s.get("default_runs")
    if (s.get("stopping") != "fixed" or not isinstance(planned_tasks, list)
            or not isinstance(by_risk, Mapping) or not isinstance(default, int)):
        return ()
    have = dict(zip(task_ids, runs.tolist()))
    risk_of = dict(zip(task_ids, risks))
    missing = [str(t) for t in planned_tasks if str(t) not in have]
    short = []
    for t in map(str, planned_tasks):
        if t in have:
            n = by_risk.get(risk_of[t], default)
            if isinstance(n, int) and have[t] < n:
                short.append(f"{t}: {have[t]} of {n}")
    parts = []
    if missing:
        shown = ", ".join(missing[:10]) + (f", and {len(missing) - 10} more"
                                           if len(missing) > 10 else "")
        verb = "has" if len(missing) == 1 else "have"
        parts.append(f"{len(missing)} of its {len(planned_tasks)} tasks {verb} no runs ({shown})")
    if short:
        shown = "; ".join(short[:10]) + (f"; and {len(short) - 10} more" if len(short) > 10
                                         else "")
        tasks = "1 task has" if len(short) == 1 else f"{len(short)} tasks have"
        parts.append(f"{tasks} fewer runs than planned ({shown})")
    if not parts:
        return ()
    return ("the log is short of its protocol's fixed plan (an interrupted passk run? "
            "--resume finishes it): " + "; ".join(parts),)


# --------------------------------------------------------------------------
# the run log: one parser for passk run, passk report and write_runs
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class RunLog:
    """A JSON Lines run log as parsed by :func:`read_run_log`.

    Attributes
    ----------
    header : dict or None
        The protocol header (``{"protocol": {...}, "seed": ...}``) when the
        log starts with one.
    records : list of (int, object)
        Every other record with its line number, as parsed (not yet validated).
    torn : bool
        Whether a torn last line (a write cut short) was left out.
    """

    header: dict[str, Any] | None
    records: list[tuple[int, Any]]
    torn: bool = False


def _is_header(record: Any) -> bool:
    return isinstance(record, dict) and "protocol" in record and "task_id" not in record


def read_run_log(path: str | os.PathLike[str], *, torn_tail: bool = False,
                 repair: bool = False) -> RunLog:
    """Parse a run log: an optional protocol header, then one JSON value a line.

    Blank lines are skipped; line numbers count them. A header anywhere but
    first is an error.

    Parameters
    ----------
    torn_tail : bool, default False
        Tolerate a last line that is not valid JSON (a run killed mid-write)
        by leaving it out; otherwise it is an error naming the line.
    repair : bool, default False
        Cut a torn tail off the file and end a last record that lacks its
        newline with one, so that appending starts on a fresh line.

    Raises
    ------
    ResultsError
        For a line that is not valid JSON (or not UTF-8), naming the line.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "log.jsonl"
    >>> _ = p.write_text('{"protocol": {"settings": {}}}\\n{"task_id": "a", "success": true}\\n{"ta')
    >>> log = read_run_log(p, torn_tail=True)
    >>> log.header, log.records, log.torn
    ({'protocol': {'settings': {}}}, [(2, {'task_id': 'a', 'success': True})], True)
    """
    p = Path(path)
    data = p.read_bytes()
    header: dict[str, Any] | None = None
    records: list[tuple[int, Any]] = []
    lines = data.split(b"\n")
    good_end = 0  # bytes up to the end of the last whole line
    first = True
    torn = False
    for number, raw in enumerate(lines, start=1):
        is_last = number == len(lines)
        if not raw.strip():
            if not is_last:
                good_end += len(raw) + 1
            continue
        try:
            value = json.loads(raw.decode("utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            if is_last and torn_tail:
                torn = True
                break
            what = (f"not valid JSON ({exc.msg})" if isinstance(exc, json.JSONDecodeError)
                    else f"not a text file ({exc.reason})")
            raise ResultsError(path, number, what) from None
        if _is_header(value):
            if not first:
                raise ResultsError(path, number, "a protocol record must come first")
            header = value
        else:
            records.append((number, value))
        first = False
        good_end = len(data) if is_last else good_end + len(raw) + 1
    if repair and good_end < len(data):
        with open(p, "r+b") as f:
            f.truncate(good_end)
    elif repair and data and not data.endswith(b"\n"):
        with open(p, "ab") as f:
            f.write(b"\n")
    return RunLog(header, records, torn)


def read_log_header(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """A run log's first record when it is a protocol header, else None (also for no file).

    Reads only up to the first record.
    """
    p = Path(path)
    if not p.is_file():
        return None
    with open(p, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.strip():
                try:
                    first = json.loads(line)
                except json.JSONDecodeError:
                    return None
                return first if _is_header(first) else None
    return None


def log_header_line(protocol: Protocol, *, seed: int | None = None) -> str:
    """The header line ``passk run`` writes first in its log (without the newline).

    Examples
    --------
    >>> line = log_header_line(Protocol({"k": 5}), seed=3)
    >>> line.startswith('{"protocol":{"settings":{"k":5},"fingerprint":"'), line.endswith(',"seed":3}')
    (True, True)
    """
    header: dict[str, Any] = {"protocol": protocol.to_dict()}
    if seed is not None:
        header["seed"] = seed
    return json.dumps(header, separators=(",", ":"))


def _protocol_of(header: dict[str, Any] | None, path: Any, line: int = 1) -> Protocol | None:
    """The header's protocol as a :class:`Protocol` (its fingerprint checked)."""
    if header is None:
        return None
    try:
        return Protocol.from_dict(header["protocol"])
    except (ValueError, AttributeError, TypeError) as exc:
        raise ResultsError(path, line, f"bad protocol record ({exc})") from None


# --------------------------------------------------------------------------
# JSON Lines and CSV
# --------------------------------------------------------------------------


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


def _left_out_as(infra: bool, cached: bool) -> str:
    return INFRASTRUCTURE_ERRORS if infra else CACHED_RESULTS if cached else ""


def _run_from_record(record: Any, path: Any, line: int) -> Run:
    if not isinstance(record, dict):
        raise ResultsError(path, line, f"expected a JSON object, got {type(record).__name__}")
    task_id = _field(record, "task_id", (str, int), path, line, required=True,
                     what="a string")
    success = _field(record, "success", (bool,), path, line, required=True,
                     what="a boolean (true or false)")
    trial = _field(record, "trial", (int,), path, line, what="a whole number")
    risk = _field(record, "risk", (str,), path, line, what="a string")
    infra = bool(_field(record, "infrastructure_error", (bool,), path, line, what="a boolean"))
    cached = bool(_field(record, "cached", (bool,), path, line, what="a boolean"))
    return Run(str(task_id), success, trial, risk, infra or cached, _left_out_as(infra, cached))


def _jsonl_located(path: str | os.PathLike[str]) -> tuple[Protocol | None, list[tuple[int, Run]]]:
    log = read_run_log(path)
    return (_protocol_of(log.header, path),
            [(line, _run_from_record(record, path, line)) for line, record in log.records])


def read_jsonl_runs(path: str | os.PathLike[str], *, duplicates: str = "error") -> Iterator[Run]:
    """Yield the runs of a JSON Lines file, one object a line (blank lines skipped).

    A protocol header is skipped (see :func:`read_run_log`); a repeated
    (task, trial) follows ``duplicates`` (see :func:`tally_runs`).
    """
    _check_duplicates_option(duplicates)
    return _dedupe(_jsonl_located(path)[1], path, duplicates, [])


_TRUE = {"true": True, "1": True, "false": False, "0": False}


def _csv_located(path: str | os.PathLike[str]) -> Iterator[tuple[int, Run]]:
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
            infra, cached = [(row.get(name) or "").strip().lower() in ("true", "1")
                             for name in ("infrastructure_error", "cached")]
            yield line, Run(row["task_id"], _TRUE[raw], int(trial) if trial else None,
                            (row.get("risk") or None), infra or cached,
                            _left_out_as(infra, cached))


def read_csv_runs(path: str | os.PathLike[str], *, duplicates: str = "error") -> Iterator[Run]:
    """Yield the runs of a CSV file with a header row (``success`` as true/false or 1/0)."""
    _check_duplicates_option(duplicates)
    return _dedupe(_csv_located(path), path, duplicates, [])


_NONE = type(None)


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
    protocol = None
    if _is_header(records[0]):
        protocol = _protocol_of(records[0], path)
        records = records[1:]
    if not records or any(map(_is_header, records)):
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
    kinds = []
    for flags, kind in ((infra, INFRASTRUCTURE_ERRORS), (cached, CACHED_RESULTS)):
        if True in flags:
            out |= np.fromiter((x is True for x in flags), dtype=bool, count=len(flags))
            kinds.append(kind)
    has = np.zeros(len(records), dtype=bool)
    key = np.zeros(0, dtype=np.int64)  # each distinct (task, trial) as one number
    span = 1
    if any(t is not None for t in trials):
        has = np.fromiter((t is not None for t in trials), dtype=bool, count=len(trials))
        trial = np.fromiter((0 if t is None else t for t in trials), dtype=np.int64,
                            count=len(trials))[has]
        lo = int(trial.min())
        span = int(trial.max()) - lo + 1
        key = index[has] * span + (trial - lo)
        counted = np.sort(key[~out[has]])
        if np.any(counted[1:] == counted[:-1]):
            return None  # a duplicate (task, trial): the slow path names both lines
        if not out.any():
            key = counted  # every row counted: already sorted and free of repeats
        else:
            key = np.unique(key)  # a retried run left out may repeat its (task, trial)
    labels = ["read-only"] * m
    if any(risks):
        for i, risk in zip(index.tolist(), risks):
            if risk and labels[i] == "read-only":
                labels[i] = risk
    results = _tally(tuple(task_of), index, np.asarray(success, dtype=bool), out, tuple(labels),
                     "jsonl", protocol, " or ".join(kinds))
    if protocol is None:
        return results
    distinct = np.bincount(index[~has], minlength=m)  # a run without a trial counts alone
    if key.size:
        distinct = distinct + np.bincount(key // span, minlength=m)
    return with_notes(results, incomplete=_plan_gaps(protocol, results.task_ids, results.risks,
                                                     distinct))


def write_runs(path: str | os.PathLike[str], repeat_runs: Iterable[RepeatRun], *,
               protocol: Protocol | None = None, seed: int | None = None) -> int:
    """Write runs as JSON Lines in the generic format, one run a line; return the run count.

    ``repeat_runs`` is what :func:`passk.evaluate_suite` keeps in ``report.runs``
    (or any :class:`~passk.repeats.RepeatRun` objects). Each line holds
    ``task_id``, ``trial`` (the run index), ``success`` and ``risk``, plus
    ``infrastructure_error`` and ``cached`` where set, so that ``passk report``
    and ``passk gate`` read back exactly the counts the runs gave.

    With ``protocol`` (``report.protocol``), the file starts with the header
    line ``passk run`` writes (:func:`log_header_line`, with ``seed`` when
    given), so the file reads back with its protocol and the gate is bound by it.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from passk import OnCallSimulator, demo_tasks, evaluate_suite
    >>> report = evaluate_suite(OnCallSimulator(), demo_tasks(), seed=3)
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "runs.jsonl"
    >>> write_runs(path, report.runs, protocol=report.protocol)
    22
    >>> back = read_results(path)
    >>> back.successes.tolist(), back.protocol == report.protocol
    ([10, 5, 5], True)
    """
    count = 0
    with open(path, "w", encoding="utf-8") as f:
        if protocol is not None:
            f.write(log_header_line(protocol, seed=seed) + "\n")
        for repeat_ in repeat_runs:
            for r in repeat_.results:
                line: dict[str, Any] = {"task_id": r.task_id, "trial": r.run_index,
                                        "success": bool(r.success), "risk": repeat_.task.risk}
                if r.infrastructure_error:
                    line["infrastructure_error"] = True
                if r.cached:
                    line["cached"] = True
                f.write(json.dumps(line) + "\n")
                count += 1
    return count


# --------------------------------------------------------------------------
# reading any format
# --------------------------------------------------------------------------


def reject_options(path: str | os.PathLike[str], format: str,
                   options: Mapping[str, Any], accepted: Iterable[str] = ()) -> None:
    """Refuse a reader option the format does not take (an option set is never ignored).

    Options whose value is None count as not given.

    Examples
    --------
    >>> reject_options("tau.json", "tau-bench", {"scorer": "match"})
    Traceback (most recent call last):
    ...
    passk.io.ResultsError: tau.json: --scorer (scorer=) does not apply to a tau-bench file; \
it is for Inspect AI logs
    """
    allowed = set(accepted)
    for name, value in options.items():
        if value is None or name in allowed:
            continue
        flag, owner = READER_OPTIONS.get(name, (name, ""))
        raise ResultsError(path, None, f"{flag} ({name}=) does not apply to a "
                           f"{FORMAT_NAMES.get(format, format)} file; it is for "
                           f"{FORMAT_NAMES.get(owner, owner)} logs")


_EXTENSIONS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}


def read_results(path: str | os.PathLike[str], format: str = "auto",
                 *, duplicates: str = "error", **options: Any) -> Results:
    """Read a results file (or a tau2-bench run directory) into per-task counts.

    Parameters
    ----------
    path : str or PathLike
        A file, or a tau2-bench run directory (``results.json`` beside a
        ``simulations/`` folder).
    format : str, default "auto"
        One of :data:`FORMATS`. ``"auto"`` decides by extension (``.jsonl``,
        ``.ndjson``, ``.csv``, ``.eval``), for ``.json`` by content and for a
        directory by its layout (see :func:`passk.formats.detect_format`); the
        choice is in ``Results.source``.
    duplicates : {'error', 'first', 'last'}, default 'error'
        A repeated (task, trial), as a resumed tau-bench run leaves, is an
        error naming both records; ``'first'`` or ``'last'`` keeps one record of
        each and says in ``notes`` how many were dropped.
    **options
        Reader options: ``scorer`` and ``success_values`` for Inspect logs. An
        option the format does not take is an error, never ignored.

    Returns
    -------
    Results
        With ``incomplete`` naming a run that stopped short of its plan, and
        ``excluded_reason`` why runs were left out.

    Raises
    ------
    ResultsError
        For a missing file, a directory that is not a tau2-bench run, an empty
        file, an unknown format, an option that does not apply, or any bad
        record; the message names the file and the line or record.
    ValueError
        For a ``duplicates`` value or a reader option that does not exist.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "runs.jsonl"
    >>> _ = p.write_text('{"task_id": "a", "trial": 0, "success": true}\\n'
    ...                  '{"task_id": "a", "trial": 0, "success": false}\\n')
    >>> read_results(p, duplicates="last").successes.tolist()
    [0]
    """
    p = Path(path)
    if format not in FORMATS:
        raise ResultsError(path, None, f"unknown format {format!r}; supported formats: "
                           f"{', '.join(FORMATS)}")
    _check_duplicates_option(duplicates)
    unknown = sorted(set(options) - set(READER_OPTIONS))
    if unknown:
        raise ValueError(f"unknown reader option(s) {', '.join(map(repr, unknown))}; reader "
                         f"options are {', '.join(READER_OPTIONS)}")
    if not p.exists():
        raise ResultsError(path, None, "no such file or directory")
    if p.is_file() and p.stat().st_size == 0:
        raise ResultsError(path, None, "is empty")
    if format == "auto" and p.is_file() and p.suffix.lower() in _EXTENSIONS:
        format = _EXTENSIONS[p.suffix.lower()]
    if format in ("jsonl", "csv"):
        if p.is_dir():
            raise ResultsError(path, None, f"is a directory, not a {FORMAT_NAMES[format]} "
                               "results file")
        if not p.is_file():
            raise ResultsError(path, None, "is not a regular file")
        reject_options(path, format, options)
    try:
        if format == "jsonl":
            fast = _fast_jsonl(p)
            if fast is not None:
                return fast
            protocol, located = _jsonl_located(p)
            if not located:
                raise ResultsError(path, None, "no runs found" + (
                    " (only a protocol header)" if protocol is not None else
                    " (only blank lines)"))
            return tally_runs(located, path=path, source="jsonl", duplicates=duplicates,
                              protocol=protocol)
        if format == "csv":
            return tally_runs(_csv_located(p), path=path, source="csv", duplicates=duplicates)
        # the benchmark formats build on this module; importing them only here keeps the
        # dependency one way at import time (formats -> io) and the command fast to start
        from .formats import read_formatted

        return read_formatted(p, format, duplicates=duplicates, **options)
    except UnicodeDecodeError as exc:
        raise ResultsError(path, None, f"not a text file ({exc.reason})") from None
