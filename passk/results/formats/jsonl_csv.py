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

import codecs
import csv
import gc
import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace
from itertools import islice, repeat
from operator import itemgetter, ne
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from passk.render.words import plural
from passk.results.counts import (
    CACHED_RESULTS,
    INFRASTRUCTURE_ERRORS,
    Results,
    ResultsError,
    Run,
    RunIds,
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
    record_checker,
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
            raise ResultsError(path, 1, f"missing {plural(len(missing), 'column', count=False)} "
                                        f"{sorted(missing)} in the header")
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
            if trial and not _WHOLE.fullmatch(trial):
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


#: About this many lines (of about 64 bytes) are parsed at a time: a file is read in chunks,
#: never held whole, so memory grows with the per-run columns, not the records (issue 30).
_CHUNK_LINES = 16_384


class _Record(msgspec.Struct, gc=False):
    """What the counts read of a JSON Lines record, typed as the reader accepts it; a record
    of any other shape sends the file to the line-by-line path, which names the line."""

    task_id: str | int
    success: bool | int | str
    trial: int | None = None
    risk: str | None = None
    infrastructure_error: bool | None = None
    cached: bool | None = None
    seed: Any = None
    attempt: Any = None


_DECODE_RECORDS = msgspec.json.Decoder(list[_Record]).decode

#: A CSV cell that is a whole number (``int`` reads every decimal digit ``\d`` matches).
_WHOLE = re.compile(r"-?\d+")


def _byte_chunks(f: Any, size: int) -> Iterator[bytes]:
    """A binary file's bytes, about ``size`` at a time, each chunk ending where a line ends
    (``b"\\n"``), the last where the file ends."""
    rest = b""
    while True:
        block = f.read(size)
        if not block:
            if rest:
                yield rest
            return
        block = rest + block if rest else block
        cut = block.rfind(b"\n") + 1
        rest = block[cut:]
        if cut:
            yield block[:cut]


class _Columns:
    """A file's runs as per-chunk columns (task index, success, trial, left out), counted
    in bulk at the end: what the JSON Lines and CSV readers' fast paths share.

    :meth:`add` takes one chunk's fields as the reader found them and returns
    False when anything is off (a value the reader does not accept as it is),
    so that the caller re-reads the file line by line and names the line.
    """

    def __init__(self) -> None:
        self.task_of: dict[Any, int] = {}
        self.names: list[Any] = []  # the tasks in the order met (task_of's keys)
        self.index: list[np.ndarray] = []  # per chunk: each run's task index
        self.ok: list[np.ndarray] = []
        self.out: list[np.ndarray] = []  # left out: infrastructure errors, cached runs
        self.has: list[np.ndarray] = []  # has a trial
        self.trial: list[np.ndarray] = []  # the trial (0 where none)
        self.label_of: dict[int, str] = {}  # a task's risk, the first one given
        self.kinds: dict[str, int] = {}  # why runs were left out, at the first run of each
        self.rows = 0

    def add(self, ids: Sequence[Any], success: Sequence[Any], trial: Sequence[int | None],
            risks: Sequence[str | None], infra: Sequence[bool | None] | None,
            cached: Sequence[bool | None] | None, *, text: bool = False) -> bool:
        """``text``: the ids and successes are cells of text (CSV), as they are."""
        n = len(ids)
        if not text and int in set(map(type, ids)):  # an id written as a number: its text
            ids = [str(t) if type(t) is int else t for t in ids]
        index = self._index(ids)
        if not text and set(map(type, success)) == {bool}:
            ok = np.array(success, dtype=bool)
        else:  # 1 and 0, or text: success_flag, once per distinct value
            flag = {value: success_flag(value) for value in set(success)}
            if None in flag.values():
                return False
            ok = np.fromiter(map(flag.__getitem__, success), dtype=bool, count=n)
        missing = trial.count(None)
        try:
            if missing == n:
                has, trial_no = np.zeros(n, dtype=bool), np.zeros(n, dtype=np.int64)
            elif missing == 0:
                has, trial_no = np.ones(n, dtype=bool), np.array(trial, dtype=np.int64)
            else:
                has = np.fromiter((t is not None for t in trial), dtype=bool, count=n)
                trial_no = np.array([0 if t is None else t for t in trial], dtype=np.int64)
        except OverflowError:
            return False  # huge labels: Python's ints on the line-by-line path
        if n and not -_FAST_TRIAL_LIMIT < int(trial_no.min()) <= int(trial_no.max()) \
                < _FAST_TRIAL_LIMIT:
            return False
        out = np.zeros(n, dtype=bool)
        for flags, kind in ((infra, INFRASTRUCTURE_ERRORS), (cached, CACHED_RESULTS)):
            if flags is not None and True in flags:
                mine = np.fromiter((x is True for x in flags), dtype=bool, count=n)
                first = mine & ~out  # a run both is an infrastructure error, as one by one
                if first.any() and kind not in self.kinds:
                    self.kinds[kind] = self.rows + int(first.argmax())
                out |= mine
        if any(risks):
            label_of = self.label_of
            for i, risk in zip(index.tolist(), risks, strict=True):
                if risk and label_of.setdefault(i, risk) != risk:
                    return False  # two tiers for one task: the slow path names both lines
        self.index.append(index)
        self.ok.append(ok)
        self.out.append(out)
        self.has.append(has)
        self.trial.append(trial_no)
        self.rows += n
        return True

    def _index(self, ids: Sequence[Any]) -> np.ndarray:
        """Each id's task index, tasks numbered in the order met. A file's runs of one task
        are mostly written together: the ids are then looked up once a stretch of equal
        ids (found by one comparison a neighbour, in C), not once an id."""
        n, task_of = len(ids), self.task_of
        change = np.flatnonzero(np.fromiter(map(ne, islice(ids, 1, None), ids), dtype=bool,
                                            count=max(n - 1, 0)))
        if change.size * 4 > n:  # ids mixed: each one looked up
            firsts: Sequence[Any] = ids
        else:
            starts = np.concatenate(([0], change + 1)) if n else change
            firsts = list(map(ids.__getitem__, starts.tolist()))
        for t in dict.fromkeys(firsts):
            if t not in task_of:
                task_of[t] = len(task_of)
                self.names.append(t)
        index = np.fromiter(map(task_of.__getitem__, firsts), dtype=np.int32, count=len(firsts))
        if firsts is ids:
            return index
        return np.repeat(index, np.diff(np.append(starts, n)))

    def tally(self, path: Path, source: str, header: dict[str, Any] | None,
              protocol: Protocol | None, seeds: list[np.ndarray], attempts: list[np.ndarray],
              unseeded: int = 0) -> Results | None:
        """The counts, or None for the line-by-line path (a repeated (task, trial), a repeated
        run, seeds written as text)."""
        if not self.index:
            return None
        index = np.concatenate(self.index)
        out = np.concatenate(self.out)
        has = np.concatenate(self.has)
        ok = np.concatenate(self.ok)
        self.index = self.out = self.has = self.ok = []
        m = len(self.task_of)
        key = np.zeros(0, dtype=np.int64)  # each distinct (task, trial) as one number
        span, lo = 1, 0
        every = bool(has.all())
        if has.any():
            trial_no = np.concatenate(self.trial)
            self.trial = []
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
                return None  # a duplicate (task, trial): the slow path names both lines
            # every row counted: already sorted and free of repeats; else a retried run left
            # out may repeat its (task, trial)
            key = counted if not out.any() else np.unique(key)
            del counted
        if header is None:  # no seeds (refused before): no run ids
            run_ids: AbstractSet[tuple[str, ...]] | None = frozenset()
            unidentified = int(index.size)
        else:
            run_ids, unidentified = _fast_run_ids(seeds, attempts, unseeded, self.names, index,
                                                  out)
        if run_ids is None:
            return None  # seeds written as text or floats, or a repeated run: the slow path
        label_of = self.label_of
        labels = tuple([label_of.get(i, "read-only") for i in range(m)] if label_of
                       else ["read-only"] * m)
        kinds = sorted(self.kinds, key=self.kinds.__getitem__)
        results = tally_arrays(tuple(self.task_of), index, ok, out, labels, source, protocol,
                               " or ".join(kinds))
        results = replace(results, run_ids=run_ids, unidentified=unidentified)
        if protocol is None:
            return results
        distinct = np.bincount(index[~has], minlength=m)  # a run without a trial counts alone
        most = np.zeros(m, dtype=np.int64)  # each task's highest trial + 1
        if key.size:
            distinct = distinct + np.bincount(key // span, minlength=m)
            np.maximum.at(most, key // span, key % span + lo + 1)
        return with_notes(results, incomplete=plan_gaps(protocol, results.task_ids,
                                                        results.risks, distinct, most))


def _first_line(f: Any) -> tuple[bytes, int]:
    """A binary file's first line that is not blank (without its newline), and the lines
    read; ``b""`` at the end of the file."""
    read = 0
    for raw in f:
        read += 1
        if raw.strip():
            return raw.rstrip(b"\n"), read
    return b"", read


def _fast_jsonl(path: Path) -> Results | None:
    """Counts from a JSON Lines file in bulk: msgspec decodes a chunk at a time into typed
    records, whose fields become columns.

    The file streams through in chunks of about :data:`_CHUNK_LINES` lines:
    each chunk's records are decoded (and checked for type) by msgspec,
    become columns (task index, success, trial, flags) and are let go, so
    memory grows with the columns, not with the records. A run log's records
    are checked against its header (:func:`record_checker`) a chunk at a
    time, at their own line numbers. Returns None when anything is off (bad
    JSON, a wrong type, a duplicate); the caller then re-reads line by line
    with the standard library, which names the exact line. Valid files never
    take that slow path.
    """
    cols = _Columns()
    header: dict[str, Any] | None = None
    protocol = None
    check: Any = None
    seeds: list[np.ndarray] = []  # kept for a run log (a header): its run ids, per chunk
    attempts: list[np.ndarray] = []
    unseeded = 0
    gc_was_on = gc.isenabled()
    gc.disable()  # new objects by the million would trigger useless collections
    try:
        with open(path, "rb") as f:
            head, line = _first_line(f)
            head = head.removeprefix(codecs.BOM_UTF8)  # utf-8-sig, as the text was read before
            try:
                value = json.loads(head.decode("utf-8")) if head else None
            except (ValueError, RecursionError):
                return None
            if is_header(value):
                header = value
                protocol = protocol_of(header, path)
                check = record_checker(header, protocol, path)
            else:
                f.seek(0)
                line = 0
            for raw in _byte_chunks(f, _CHUNK_LINES * 64):
                chunk = raw.removeprefix(codecs.BOM_UTF8) if line == 0 else raw
                body = chunk[:-1] if chunk.endswith(b"\n") else chunk
                lines = body.count(b"\n") + 1
                numbers: Sequence[int] = range(line + 1, line + 1 + lines)
                text = b"[" + body.replace(b"\n", b",") + b"]"
                try:
                    records = _DECODE_RECORDS(text)
                except msgspec.ValidationError:
                    return None
                except msgspec.DecodeError:  # blank lines (skipped, and counted as lines)?
                    parts = body.split(b"\n")
                    numbers = [line + 1 + i for i, part in enumerate(parts) if part.strip()]
                    if len(numbers) == lines:
                        return None  # no blank line: not valid JSON Lines
                    text = b"[" + b",".join(part for part in parts if part.strip()) + b"]"
                    try:
                        records = _DECODE_RECORDS(text) if numbers else []
                    except (msgspec.DecodeError, msgspec.ValidationError):
                        return None
                line += lines
                if not numbers:
                    continue
                if len(records) != len(numbers):  # two values on a line, or none
                    return None
                seed = [r.seed for r in records]
                if header is None and seed.count(None) != len(seed):
                    return None  # a passk run record without its header: the slow path
                ids, trial, risk = ([r.task_id for r in records], [r.trial for r in records],
                                    [r.risk for r in records])
                if not cols.add(ids, [r.success for r in records], trial, risk,
                                [r.infrastructure_error for r in records],
                                [r.cached for r in records]):
                    return None
                if header is not None:
                    attempt = [r.attempt for r in records]
                    del records
                    if not set(map(type, seed)) | set(map(type, attempt)) <= {int, _NONE}:
                        return None  # seeds or attempts written as text or floats
                    missing = seed.count(None)
                    unseeded += missing
                    if not missing:  # each record's seed and attempt, as whole numbers
                        n = len(seed)
                        if min(seed) < 0:
                            return None  # below a uint64 (numpy 1 would wrap it)
                        try:
                            seed_no = np.array(seed, dtype=np.uint64)
                            attempt_no = (np.zeros(n, dtype=np.int64) if attempt.count(0) == n
                                          else np.array([0 if a is None else a for a in attempt],
                                                        dtype=np.int64))
                        except OverflowError:
                            return None  # beyond 64 bits: Python's ints, line by line
                        seeds.append(seed_no)
                        attempts.append(attempt_no)
                        if cols.has[-1].all() and check.indexed(
                                cols.names, cols.index[-1], cols.trial[-1], attempt_no, seed_no,
                                risk):
                            continue  # every record passes the header's checks
                    try:  # the records' fields, as check_records reads them from the dicts
                        check.columns(numbers, ids, trial, attempt, seed, risk)
                    except ResultsError:
                        return None  # the line-by-line path says what, in line order
    except (UnicodeDecodeError, OSError):
        return None  # the line-by-line path names the line
    finally:
        if gc_was_on:
            gc.enable()
    return cols.tally(path, "jsonl", header, protocol, seeds, attempts, unseeded)


def _csv_header(names: list[str] | None) -> dict[str, int] | None:
    """Each column's index, when the header row names task_id and success once each."""
    if not names or len(set(names)) != len(names) or not {"task_id", "success"} <= set(names):
        return None
    return {name: i for i, name in enumerate(names)}


def _add_csv_columns(cols: _Columns, at: dict[str, int], columns: list[list[str]]) -> bool:
    """One chunk's CSV cells, a list a column, added to ``cols`` as the row-by-row reader
    reads each cell (checked once per distinct value); False when one is off."""
    ids = columns[at["task_id"]]
    if "" in ids:
        return False
    none: list[None] = [None] * len(ids)
    trial: Sequence[int | None] = none
    if "trial" in at:
        whole = {}
        for cell in set(columns[at["trial"]]):
            text = cell.strip()
            if text and not _WHOLE.fullmatch(text):
                return False
            whole[cell] = int(text) if text else None
        trial = list(map(whole.__getitem__, columns[at["trial"]]))
    flags: list[list[bool] | None] = []
    for name in ("infrastructure_error", "cached"):
        if name not in at:
            flags.append(None)
            continue
        truth = {cell: cell.strip().lower() in ("true", "1") for cell in set(columns[at[name]])}
        flags.append(list(map(truth.__getitem__, columns[at[name]])))
    risks = columns[at["risk"]] if "risk" in at else none
    return cols.add(ids, columns[at["success"]], trial, risks, *flags, text=True)


def _plain_columns(text: str, width: int) -> list[list[str]] | None:
    """A chunk of whole CSV lines split into columns by ``str.split``, where that is how
    ``csv.reader`` splits them: no quote, no NUL, no lone carriage return, no empty line,
    ``width - 1`` commas on every line, no cell beyond the field size limit. None otherwise."""
    if "\x00" in text:
        return None
    if '"' in text:
        return _quoted_columns(text, width)
    eol = "\n"
    if "\r" in text:  # "\r\n" ends every line: no lone carriage return, no lone line feed
        returns = text.count("\r")
        if returns != text.count("\r\n") or returns != text.count("\n"):
            return None
        eol = "\r\n"
    lines = text.split(eol)
    if lines[-1] == "":
        lines.pop()
    if not lines or set(map(str.count, lines, repeat(",", len(lines)))) != {width - 1} \
            or max(map(len, lines)) > csv.field_size_limit():
        return None
    cells = ",".join(lines).split(",")
    return [cells[i::width] for i in range(width)]


def _quoted_columns(text: str, width: int) -> list[list[str]] | None:
    """A chunk of whole CSV lines with every cell quoted (``"a","b"``, as spreadsheets and
    ``csv.QUOTE_ALL`` write them) split into columns by ``str.split``, where that is how
    ``csv.reader`` splits them: each line ``"`` + cells joined by ``","`` + ``"``, no quote
    inside a cell (so none doubled), no lone carriage return, no cell beyond the field
    size limit. None otherwise (the caller reads the chunk with ``csv.reader``)."""
    # lines ended by "\r\n" (as csv.writer ends them) are split as they are, not rewritten:
    # as many carriage returns as line feeds, and every line feed between two quotes after
    # one (counted below), leave no lone carriage return
    eol = "\n"
    if "\r" in text:
        if text.count("\r") != text.count("\n"):
            return None
        eol = "\r\n"
    body = text.removesuffix(eol)
    lines = body.count("\n") + 1
    # every line starts and ends with a quote, and holds 2 x width quotes and width - 1
    # separators: then every quote is a cell's opening or closing one
    if (len(body) < 2 or body[0] != '"' or body[-1] != '"'
            or body.count(f'"{eol}"') != lines - 1 or body.count('"') != 2 * width * lines
            or body.count('","') != (width - 1) * lines):
        return None
    # each line's end marked with a NUL (none is in the text) after its last cell: the lines
    # hold width cells each when every line's mark ends a cell of the last column
    cells = body[1:-1].replace(f'"{eol}"', '\x00","').split('","')
    if len(cells) != width * lines or max(map(len, cells)) > csv.field_size_limit():
        return None
    last = "\n".join(cells[width - 1::width])
    if last.count("\x00\n") != lines - 1:
        return None
    return [*(cells[i::width] for i in range(width - 1)),
            last.replace("\x00\n", "\n").split("\n")]


def _plain_csv(path: Path) -> Results | None:
    """Counts from a CSV file written without quotes (as most programs write results), or
    with every cell quoted, a chunk of lines at a time split in bulk (:func:`_plain_columns`,
    :func:`_quoted_columns`); None if a chunk is neither, or anything is off."""
    cols = _Columns()
    try:
        with open(path, "rb") as f:
            head = f.readline().decode("utf-8-sig")
            if "\x00" in head or head.count("\r") > head.endswith("\r\n") \
                    or head.count('"') % 2:
                return None
            line = head.rstrip("\r\n")
            names = (next(csv.reader([line])) if '"' in line else line.split(",")) if line \
                else None
            at = _csv_header(names)
            if at is None:
                return None
            for chunk in _byte_chunks(f, _CHUNK_LINES * 32):
                columns = _plain_columns(chunk.decode("utf-8"), len(at))
                if columns is None or not _add_csv_columns(cols, at, columns):
                    return None
    except (UnicodeDecodeError, OSError):
        return None
    return cols.tally(path, "csv", None, None, [], [])


def _fast_csv(path: Path) -> Results | None:
    """Counts from a CSV file in bulk: split as plain text (:func:`_plain_csv`), or else
    ``csv.reader``'s rows a chunk at a time, turned into columns and checked per distinct
    value; None when anything is off (the caller then reads row by row, which names the
    line)."""
    plain = _plain_csv(path)
    if plain is not None:
        return plain
    cols = _Columns()
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            reader = csv.reader(f)
            at = _csv_header(next(reader, None))
            if at is None:
                return None
            width = len(at)
            while True:
                rows = list(islice(reader, _CHUNK_LINES))
                if not rows:
                    break
                if [] in rows:  # an empty line: csv.DictReader skips it
                    rows = [row for row in rows if row]
                    if not rows:
                        continue
                if set(map(len, rows)) != {width}:
                    return None
                columns = [list(map(itemgetter(i), rows)) for i in range(width)]
                del rows
                if not _add_csv_columns(cols, at, columns):
                    return None
    except (csv.Error, UnicodeDecodeError, OSError, ValueError):
        return None
    return cols.tally(path, "csv", None, None, [], [])


def _fast_run_ids(seeds: list[np.ndarray], attempts: list[np.ndarray], unseeded: int,
                  names: list[Any], index: np.ndarray, out: np.ndarray
                  ) -> tuple[AbstractSet[tuple[str, ...]] | None, int]:
    """Each record's run identity (task, seed, attempt), checked distinct in bulk and made
    as text only when asked for (:class:`~passk.results.counts.RunIds`).

    ``seeds`` and ``attempts`` are the chunks' whole-number columns. Returns
    ``(None, 0)`` when the line-by-line path must decide (some records with a
    seed and some without, or a counted run repeated).
    """
    n = int(index.size)
    if unseeded == n:
        return frozenset(), n
    if unseeded:
        return None, 0
    seed = np.concatenate(seeds)
    attempt = np.concatenate(attempts)
    distinct = n - _repeats(index, seed, attempt)
    if distinct != n:  # a run twice: only where one of them is left out
        if not out.any():
            return None, 0
        kept = ~out
        if _repeats(index[kept], seed[kept], attempt[kept]):
            return None, 0

    def make() -> frozenset[tuple[str, ...]]:
        return frozenset(zip(repeat(PASSK_RUN_ID, n), map(names.__getitem__, index.tolist()),
                             map(str, seed.tolist()), map(str, attempt.tolist()), strict=True))

    return RunIds(make, distinct), 0


def _repeats(index: np.ndarray, seed: np.ndarray, attempt: np.ndarray) -> int:
    """How many records repeat an earlier one's (task, seed, attempt): sorted by seed alone
    first, since distinct seeds (as a log's are) settle it."""
    ordered = np.sort(seed)
    if not np.any(ordered[1:] == ordered[:-1]):
        return 0
    order = np.lexsort((attempt, seed, index))
    i, s, a = index[order], seed[order], attempt[order]
    return int(np.count_nonzero((i[1:] == i[:-1]) & (s[1:] == s[:-1]) & (a[1:] == a[:-1])))


def read_jsonl(path: str | os.PathLike[str], data: Any = None, *,
               duplicates: str = "error") -> Results:
    """Read a JSON Lines results file (a ``passk run`` log, or
    :func:`passk.results.read.write_runs`'s).

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
    # a log is its whole protocol: a declared task with no record is a task with no runs.
    # A curtailed log's settled records are not read as settled: plan_gaps calls the log
    # short until passk.run.runner.results_of_replayed_log replays it (the settle rule)
    return with_unrun_tasks(results, declared_tasks(results.protocol))


def read_csv(path: str | os.PathLike[str], data: Any = None, *,
             duplicates: str = "error") -> Results:
    """Read a CSV results file with a header row; a row of the wrong width names its line.

    Valid files are counted in bulk, a chunk of rows at a time (split as plain text
    where no cell is quoted), never held whole; anything off is re-read row by row,
    so that the error names the line.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "runs.csv"
    >>> _ = p.write_text("task_id,trial,success\\na,0,true\\na,1,0\\nb,0,TRUE\\n")
    >>> r = read_csv(p)
    >>> r.task_ids, r.successes.tolist(), r.totals.tolist()
    (('a', 'b'), [1, 1], [2, 1])
    """
    check_duplicates_option(duplicates)
    check_utf8(Path(path))
    results = _fast_csv(Path(path))
    if results is not None:
        return results
    try:
        return tally_runs(_csv_located(path), path=path, source="csv", duplicates=duplicates)
    except csv.Error as exc:
        raise ResultsError(path, None, f"not readable as CSV ({exc})") from None
