"""The generic formats: JSON Lines (one run a line, as ``passk run`` logs) and CSV.

Fields: ``task_id`` (str, required), ``success`` (required: ``true``/``false`` or
``1``/``0``, in both formats; in JSON Lines also that text), ``trial``
(int, optional; a repeated ``(task_id, trial)`` is an error unless
``duplicates`` says which to keep), ``risk`` (str, optional), and, as written
by ``passk run``, ``infrastructure_error`` and ``cached`` (bool, optional;
such runs are not counted as evidence about the agent). A JSON Lines file may
start with a protocol header, ``{"protocol": {...}, "seed": ...}``.

A record with a ``seed`` is a ``passk run`` record, known by its task, its
seed as an integer (``1``, ``1.0`` and ``"1"`` are one seed) and its
``attempt`` (0 when not written): that is its run identity
(:attr:`passk.results.Run.run_id`), so a copy of the log, however
re-serialized, is not new runs. Such records need their header, and must
agree with it (:func:`passk.results.runlog.check_records`): a log whose
header was deleted, lost its fingerprint, or is contradicted by a record (a
seed the header's seed does not derive, a task it does not list, a trial
beyond its plan) is refused. Records without a seed, and CSV rows, have no
run identity. The other fields of :class:`passk.results.runlog.RunRecord`
(``seconds``, ``error``) are kept in the file and ignored by the counts.
"""

from __future__ import annotations

import csv
import gc
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import replace
from itertools import repeat
from pathlib import Path
from typing import Any

import numpy as np

from passk.results.counts import (
    CACHED_RESULTS,
    INFRASTRUCTURE_ERRORS,
    Results,
    ResultsError,
    Run,
    check_duplicates_option,
    declared_tasks,
    dedupe,
    plan_gaps,
    tally_arrays,
    tally_runs,
    with_notes,
    with_unrun_tasks,
)
from passk.results.formats._shared import SUCCESS_FLAGS_SAID, check_utf8, did_you_mean, success_flag
from passk.results.protocol import Protocol
from passk.results.runlog import (
    PASSK_RUN_ID,
    RunRecord,
    check_records,
    is_header,
    is_settled,
    protocol_of,
    read_run_log,
    record_run_id,
)

__all__ = ["read_csv", "read_csv_runs", "read_jsonl", "read_jsonl_runs"]

#: What a file's first record is when it is a task list for ``passk run``, not results.
_TASK_LIST_HINT = ("; this looks like a task list for `passk run ADAPTER TASKS --log LOG` "
                   "(it has 'instruction' and no 'success'), not results: run it, then "
                   "report the log")

#: Trial labels beyond this are counted on the line-by-line path (numpy's int64 ends at 2**63).
_FAST_TRIAL_LIMIT = 2**40

#: The fields a run log's record (or header) may hold: any other is kept and ignored.
_KNOWN = (*RunRecord.__dataclass_fields__, "protocol")


def _field(record: Mapping[str, Any], name: str, kinds: tuple[type, ...], path: Any, line: int,
           *, required: bool = False, what: str = "") -> Any:
    if name not in record or record[name] is None:
        if required:
            typo = did_you_mean(name, record, _KNOWN)
            if typo:
                raise ResultsError(path, line, typo)
            hint = _TASK_LIST_HINT if name == "success" and "instruction" in record else ""
            raise ResultsError(path, line, f"missing field {name!r}{hint}")
        return None
    value = record[name]
    # bool is an int in Python; only accept it where a bool is asked for
    if not isinstance(value, kinds) or (bool not in kinds and isinstance(value, bool)):
        raise ResultsError(path, line, f"field {name!r} must be {what}, got {value!r:.60}")
    return value


def _left_out_as(infra: bool, cached: bool) -> str:
    return INFRASTRUCTURE_ERRORS if infra else CACHED_RESULTS if cached else ""


def _run_from_record(record: Any, path: Any, line: int) -> Run:
    if not isinstance(record, dict):
        raise ResultsError(path, line, f"expected a JSON object, got {type(record).__name__}")
    task_id = _field(record, "task_id", (str, int), path, line, required=True,
                     what="a string")
    success = success_flag(_field(record, "success", (bool, int, str), path, line,
                                  required=True, what=SUCCESS_FLAGS_SAID))
    if success is None:
        raise ResultsError(path, line, f"field 'success' must be {SUCCESS_FLAGS_SAID}, got "
                           f"{record['success']!r:.60}")
    trial = _field(record, "trial", (int,), path, line, what="a whole number")
    risk = _field(record, "risk", (str,), path, line, what="a string")
    infra = bool(_field(record, "infrastructure_error", (bool,), path, line, what="a boolean"))
    cached = bool(_field(record, "cached", (bool,), path, line, what="a boolean"))
    return Run(str(task_id), success, trial, risk, infra or cached, _left_out_as(infra, cached),
               record_run_id(record, path, line))


def _jsonl_located(path: str | os.PathLike[str]) -> tuple[Protocol | None, list[tuple[int, Run]]]:
    log = read_run_log(path)
    protocol = protocol_of(log.header, path)
    located = [(line, _run_from_record(record, path, line)) for line, record in log.records
               if not is_settled(record)]
    check_records(log.header, protocol, log.records, path)
    return protocol, located


def _settled(path: str | os.PathLike[str]) -> dict[str, int]:
    """The tasks a curtailed ``passk run`` settled, with their planned runs."""
    return {str(r["task_id"]): int(r["settled"].get("runs_planned", 0))
            for _, r in read_run_log(path).records if is_settled(r)}


def read_jsonl_runs(path: str | os.PathLike[str], *, duplicates: str = "error") -> Iterator[Run]:
    """Yield the runs of a JSON Lines file, one object a line (blank lines skipped).

    A protocol header is skipped (see :func:`read_run_log`); a repeated
    (task, trial) follows ``duplicates`` (see :func:`tally_runs`).
    """
    check_duplicates_option(duplicates)
    return dedupe(_jsonl_located(path)[1], path, duplicates, [])


def _csv_located(path: str | os.PathLike[str]) -> Iterator[tuple[int, Run]]:
    check_utf8(Path(path))
    with open(path, encoding="utf-8-sig", newline="") as f:  # Excel's "CSV UTF-8" has a BOM
        reader = csv.DictReader(f)
        missing = {"task_id", "success"} - set(reader.fieldnames or ())
        for name in sorted(missing):
            typo = did_you_mean(name, reader.fieldnames or (), _KNOWN)
            if typo:
                raise ResultsError(path, 1, typo.replace("unknown field", "unknown column"))
        if missing:
            raise ResultsError(path, 1, f"missing column(s) {sorted(missing)} in the header")
        width = len(reader.fieldnames or ())
        for row in reader:
            line = reader.line_num
            if None in row:  # DictReader's restkey: cells beyond the header's
                raise ResultsError(path, line, f"{width + len(row[None])} cells where the "
                                   f"header has {width} (an extra cell, or an unquoted comma?)")
            short = [name for name, value in row.items() if value is None]
            if short:
                raise ResultsError(path, line, f"{width - len(short)} cells where the header has "
                                   f"{width}: no cell for {', '.join(map(repr, short))}")
            if not row.get("task_id"):
                raise ResultsError(path, line, "missing field 'task_id'")
            won = success_flag(row.get("success") or "")
            if won is None:
                raise ResultsError(path, line, f"field 'success' must be true or false, or 1 "
                                   f"or 0, got {row.get('success')!r}")
            trial = (row.get("trial") or "").strip()
            if trial and not trial.lstrip("-").isdigit():
                raise ResultsError(path, line, f"field 'trial' must be a whole number, "
                                   f"got {trial!r}")
            infra, cached = [(row.get(name) or "").strip().lower() in ("true", "1")
                             for name in ("infrastructure_error", "cached")]
            yield line, Run(row["task_id"], won, int(trial) if trial else None,
                            (row.get("risk") or None), infra or cached,
                            _left_out_as(infra, cached))


def read_csv_runs(path: str | os.PathLike[str], *, duplicates: str = "error") -> Iterator[Run]:
    """Yield the runs of a CSV file with a header row (``success`` as true/false or 1/0,
    in any case)."""
    check_duplicates_option(duplicates)
    return dedupe(_csv_located(path), path, duplicates, [])


_NONE = type(None)


#: Lines parsed at a time: the file is read in chunks, never held whole (issue 30).
_CHUNK_LINES = 16_384


def _line_chunks(f: Any, size: int) -> Iterator[list[str]]:
    """A text file's lines (as ``str.splitlines`` splits them), about ``size`` characters a time."""
    rest = ""
    while True:
        text = f.read(size)
        if not text:
            if rest:
                yield rest.splitlines()
            return
        parts = (rest + text).splitlines(keepends=True)
        rest = parts.pop()  # maybe cut short (or a "\r" whose "\n" is in the next read)
        if parts:
            yield "".join(parts).splitlines()


def _fast_jsonl(path: Path) -> Results | None:
    """Counts from a JSON Lines file in bulk: ``json.loads`` a chunk at a time, column checks.

    The file streams through in chunks of :data:`_CHUNK_LINES` lines: each
    chunk's records become columns (task index, success, trial, flags) and are
    let go, so memory grows with the columns, not with the records (which a
    run log with a protocol header keeps, for :func:`check_records`).
    Returns None when anything is off (bad JSON, a wrong type, a duplicate);
    the caller then re-reads line by line, which names the exact line. Valid
    files never take that slow path, so a million runs parse in about a second.
    """
    task_of: dict[Any, int] = {}
    parts: list[np.ndarray] = []  # per chunk: each record's task index
    successes: list[np.ndarray] = []
    outs: list[np.ndarray] = []  # left out: infrastructure errors, cached runs
    hass: list[np.ndarray] = []  # has a trial
    trials: list[np.ndarray] = []  # the trial (0 where none)
    label_of: dict[int, str] = {}  # a task's risk other than read-only, the first one written
    kinds_seen = {INFRASTRUCTURE_ERRORS: False, CACHED_RESULTS: False}
    seeds: list[Any] = []  # kept for a run log (a header): its run ids
    attempts: list[Any] = []
    kept: list[dict] = []  # the records, only when a header asks for check_records
    header: dict | None = None
    protocol = None
    blank = False
    first = True
    gc_was_on = gc.isenabled()
    gc.disable()  # a million new dicts would trigger many useless collections
    try:
        with open(path, encoding="utf-8-sig") as f:
            for lines in _line_chunks(f, _CHUNK_LINES * 64):
                if not all(line.strip() for line in lines):
                    blank = True
                    lines = [line for line in lines if line.strip()]
                    if not lines:
                        continue
                try:
                    records = json.loads("[" + ",".join(lines) + "]")
                except json.JSONDecodeError:
                    return None
                if len(records) != len(lines) or set(map(type, records)) != {dict}:
                    return None
                if first and is_header(records[0]):
                    header = records[0]
                    protocol = protocol_of(header, path)
                    records = records[1:]
                first = False
                if any(map(is_header, records)):
                    return None
                if not records:
                    continue

                def column(name: str, records: list[dict] = records) -> list[Any]:
                    return list(map(dict.get, records, repeat(name, len(records))))

                ids, success = column("task_id"), column("success")
                id_types = set(map(type, ids))
                if not id_types <= {str, int}:
                    return None
                if int in set(map(type, success)):  # 1 and 0, as CSV takes them
                    if not set(success) <= {0, 1} or not set(map(type, success)) <= {bool, int}:
                        return None
                    success = [bool(x) for x in success]
                trial, risks = column("trial"), column("risk")
                infra, cached = column("infrastructure_error"), column("cached")
                if (set(map(type, success)) != {bool}
                        or not set(map(type, trial)) <= {int, _NONE}
                        or not set(map(type, risks)) <= {str, _NONE}
                        or not set(map(type, infra)) <= {bool, _NONE}
                        or not set(map(type, cached)) <= {bool, _NONE}):
                    return None
                if int in id_types:
                    ids = [str(t) if type(t) is int else t for t in ids]
                for t in dict.fromkeys(ids):
                    task_of.setdefault(t, len(task_of))
                index = np.fromiter(map(task_of.__getitem__, ids), dtype=np.int32,
                                    count=len(ids))  # half the memory of int64
                parts.append(index)
                successes.append(np.asarray(success, dtype=bool))
                out = np.zeros(len(records), dtype=bool)
                for flags, kind in ((infra, INFRASTRUCTURE_ERRORS), (cached, CACHED_RESULTS)):
                    if True in flags:
                        out |= np.fromiter((x is True for x in flags), dtype=bool,
                                           count=len(flags))
                        kinds_seen[kind] = True
                outs.append(out)
                if any(t is not None and not -_FAST_TRIAL_LIMIT < t < _FAST_TRIAL_LIMIT
                       for t in trial):
                    return None  # huge labels: Python's ints on the line-by-line path
                hass.append(np.fromiter((t is not None for t in trial), dtype=bool,
                                        count=len(trial)))
                trials.append(np.fromiter((0 if t is None else t for t in trial),
                                          dtype=np.int64, count=len(trial)))
                if any(risks):
                    for i, risk in zip(index.tolist(), risks):
                        if risk and risk != "read-only" and i not in label_of:
                            label_of[i] = risk
                seed = column("seed")
                if header is None and any(x is not None for x in seed):
                    return None  # a passk run record without its header: the slow path
                if header is not None:
                    seeds.extend(seed)
                    attempts.extend(column("attempt"))
                    kept.extend(records)
    except UnicodeDecodeError:
        return None  # the line-by-line path names the line
    finally:
        if gc_was_on:
            gc.enable()
    if not parts:
        return None
    index = np.concatenate(parts)
    del parts
    m = len(task_of)
    out = np.concatenate(outs)
    del outs
    kinds = [kind for kind, seen in kinds_seen.items() if seen]
    has = np.concatenate(hass)
    del hass
    key = np.zeros(0, dtype=np.int64)  # each distinct (task, trial) as one number
    span = 1
    every = bool(has.all())
    if has.any():
        trial_no = np.concatenate(trials)
        del trials
        if not every:
            trial_no = trial_no[has]
        lo = int(trial_no.min())
        span = int(trial_no.max()) - lo + 1
        trial_no -= lo
        key = (index if every else index[has]).astype(np.int64)  # no int32 overflow
        key *= span
        key += trial_no
        del trial_no
        counted = np.sort(key if not out.any() else key[~out[has]])
        if np.any(counted[1:] == counted[:-1]):
            return None  # a duplicate (task, trial_no): the slow path names both lines
        if not out.any():
            key = counted  # every row counted: already sorted and free of repeats
        else:
            key = np.unique(key)  # a retried run left out may repeat its (task, trial_no)
        del counted
    if header is None:  # no seeds (refused above): no run ids
        run_ids: frozenset[tuple[str, ...]] | None = frozenset()
        unidentified = int(index.size)
    else:
        names = list(task_of)
        run_ids, unidentified = _fast_run_ids(seeds, attempts,
                                              [names[i] for i in index.tolist()], out)
    if run_ids is None:
        return None  # seeds written as text or floats, or a repeated run: the slow path
    if header is not None:
        if blank:
            return None  # blank lines: the slow path numbers the lines exactly
        check_records(header, protocol, enumerate(kept, start=2), path)
        del kept
    labels = [label_of.get(i, "read-only") for i in range(m)]
    results = tally_arrays(tuple(task_of), index, np.concatenate(successes), out, tuple(labels),
                     "jsonl", protocol, " or ".join(kinds))
    results = replace(results, run_ids=run_ids, unidentified=unidentified)
    if protocol is None:
        return results
    distinct = np.bincount(index[~has], minlength=m)  # a run without a trial counts alone
    if key.size:
        distinct = distinct + np.bincount(key // span, minlength=m)
    return with_notes(results, incomplete=plan_gaps(protocol, results.task_ids, results.risks,
                                                     distinct))



def _fast_run_ids(seeds: list[Any], attempts: list[Any], task_ids: list[str], out: np.ndarray
                  ) -> tuple[frozenset[tuple[str, ...]] | None, int]:
    """Each record's (task, seed, attempt) in bulk, where seeds and attempts are ints.

    Returns ``(None, 0)`` when the line-by-line path must decide (a seed or
    attempt written otherwise, or a counted run repeated).
    """
    n = len(seeds)
    if all(s is None for s in seeds):
        return frozenset(), n
    if set(map(type, seeds)) != {int} or not set(map(type, attempts)) <= {int, _NONE}:
        return None, 0
    keys = list(zip(repeat(PASSK_RUN_ID, n), task_ids, map(str, seeds),
                    (str(0 if a is None else a) for a in attempts), strict=True))
    counted = [k for k, left_out in zip(keys, out.tolist(), strict=True) if not left_out]
    if len(set(counted)) != len(counted):
        return None, 0
    return frozenset(keys), 0


def read_jsonl(path: str | os.PathLike[str], data: Any = None, *,
               duplicates: str = "error") -> Results:
    """Read a JSON Lines results file (a ``passk run`` log, or :func:`passk.results.read.write_runs`'s).

    Valid files are counted in bulk; anything off is re-read line by line, so
    that the error names the line. Every task the log's protocol declares is a
    task of the results, with no runs when no record names it (a curtailed run
    settles a task that can never clear the gate before its first run), so a
    gate on the log decides as the run did.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "runs.jsonl"
    >>> _ = p.write_text('{"task_id": "a", "trial": 0, "success": true}\\n'
    ...                  '{"task_id": "a", "trial": 1, "success": false}\\n')
    >>> read_jsonl(p).successes.tolist(), read_jsonl(p).totals.tolist()
    ([1], [2])
    """
    p = Path(path)
    check_duplicates_option(duplicates)
    check_utf8(p)
    results = _fast_jsonl(p)
    if results is None:
        protocol, located = _jsonl_located(p)
        if not located:
            raise ResultsError(path, None, "no runs found" + (
                " (only a protocol header)" if protocol is not None else " (only blank lines)"))
        results = tally_runs(located, path=path, source="jsonl", duplicates=duplicates,
                             protocol=protocol)
    # a log is its whole protocol: a declared task with no record is a task with no runs
    results = with_unrun_tasks(results, declared_tasks(results.protocol))
    if results.protocol is not None and results.protocol.settings.get("stopping") == "curtailed":
        results = replace(results, settled_early=_settled(p))
    return results


def read_csv(path: str | os.PathLike[str], data: Any = None, *,
             duplicates: str = "error") -> Results:
    """Read a CSV results file with a header row; a row of the wrong width names its line."""
    check_duplicates_option(duplicates)
    try:
        return tally_runs(_csv_located(path), path=path, source="csv", duplicates=duplicates)
    except csv.Error as exc:
        raise ResultsError(path, None, f"not readable as CSV ({exc})") from None
