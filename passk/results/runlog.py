"""The run log: one record a run, one writer and one parser for every producer of it.

``passk run`` appends to it as each run ends, :func:`passk.results.read.write_runs`
writes it from a finished suite (what the pytest plugin's ``--passk-log``
writes, and what users export from :func:`passk.evaluate_suite`), and every
one of them writes the same :class:`RunRecord`, so every log line keeps the
run's ``seed``, ``attempt``, ``seconds`` and ``error``: a failing run can be
re-run from its line. :func:`read_run_log` is the one parser.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from passk.results.counts import ResultsError
from passk.results.protocol import Protocol

__all__ = [
    "PASSK_RUN_ID",
    "RecordChecker",
    "RunLog",
    "RunRecord",
    "check_records",
    "is_header",
    "iter_run_log",
    "log_header_line",
    "protocol_of",
    "read_log_header",
    "read_run_log",
    "read_run_trajectories",
    "record_checker",
    "record_run_id",
    "trajectory_field",
    "whole_field",
]


#: A line's JSON value: the same as ``json.loads`` wherever it decodes (it refuses NaN,
#: numbers beyond a float and lone surrogates, which json.loads then reads).
_DECODE = msgspec.json.Decoder().decode

#: ``json.dumps(value, separators=(",", ":"))`` with its encoder made once.
_COMPACT = json.JSONEncoder(separators=(",", ":")).encode


@dataclass(frozen=True)
class RunRecord:
    """One line of a run log: one attempt at one run of one task.

    Attributes
    ----------
    task_id : str
    trial : int
        The run's index among the task's repeats.
    success : bool
        The grader's verdict (False for a run that raised).
    attempt : int
        0 for the run's first attempt; a retry after an infrastructure error is 1, 2, ...
    seconds : float
        The run's duration.
    error : str or None
        ``"ExceptionType: message"`` when the run raised.
    infrastructure_error, cached : bool
        Runs that are not evidence about the agent (left out of the counts).
    seed : int or None
        The seed the attempt was given: running the task with it again replays the run.
    risk : str or None
        The task's risk label.
    trajectory : list of dict or None
        The run's tool calls in order, each ``{"tool", "argument", "observation"}``;
        None (and no key on the line) when not recorded. The counts' readers skip it;
        :func:`read_run_trajectories` reads it.

    Examples
    --------
    >>> RunRecord("a", 0, True, seed=7).to_json()
    '{"task_id":"a","trial":0,"success":true,"attempt":0,"seconds":0.0,"error":null,\
"infrastructure_error":false,"cached":false,"seed":7,"risk":null}'
    """

    task_id: str
    trial: int
    success: bool
    attempt: int = 0
    seconds: float = 0.0
    error: str | None = None
    infrastructure_error: bool = False
    cached: bool = False
    seed: int | None = None
    risk: str | None = None
    trajectory: list[dict[str, str]] | None = None

    def to_json(self) -> str:
        """The record as one line of JSON (without the newline); ``trajectory`` only when
        recorded, so a log without trajectories reads as before."""
        fields = {"task_id": self.task_id, "trial": self.trial, "success": self.success,
                  "attempt": self.attempt, "seconds": self.seconds, "error": self.error,
                  "infrastructure_error": self.infrastructure_error, "cached": self.cached,
                  "seed": self.seed, "risk": self.risk}  # dataclasses.asdict's, made directly
        if self.trajectory is not None:
            fields["trajectory"] = self.trajectory
        return _COMPACT(fields)


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


def is_header(record: Any) -> bool:
    """Whether ``record`` is a run log's header: a ``protocol`` and no ``task_id``."""
    return isinstance(record, dict) and "protocol" in record and "task_id" not in record


def is_settled(record: Any) -> bool:
    """A curtailed run's record of a task it settled: no run of its own, no ``success``.

    ``{"task_id": ..., "risk": ..., "settled": {"runs_made": m, "runs_planned": n,
    "why": ...}}``: the log is its whole protocol, so a task stopped before its
    first run is still in it, and ``passk gate LOG`` decides as the run did.
    """
    return (isinstance(record, dict) and isinstance(record.get("settled"), dict)
            and "success" not in record)


def settled_line(task_id: str, risk: str | None, made: int, planned: int) -> str:
    """The log line of a task a curtailed run settled after ``made`` of ``planned`` runs.

    Examples
    --------
    >>> settled_line("r1", "read-only", 0, 1)[:60]
    '{"task_id":"r1","risk":"read-only","settled":{"runs_made":0,'
    """
    why = (f"settled after {made} of {planned} planned runs: no outcome of the other "
           f"{planned - made} could change the gate's verdict")
    return json.dumps({"task_id": task_id, "risk": risk,
                       "settled": {"runs_made": made, "runs_planned": planned, "why": why}},
                      separators=(",", ":"))


def _one_document(data: bytes) -> bool:
    """Whether a file's bytes are one JSON document spread over several lines."""
    try:
        json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError):
        return False
    return True


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
    >>> _ = p.write_text('{"protocol": {"settings": {}}}\\n'
    ...                  '{"task_id": "a", "success": true}\\n{"ta')
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
            if first and isinstance(exc, json.JSONDecodeError) and _one_document(data):
                raise ResultsError(path, None, "is one JSON document (valid JSON), not JSON "
                                   "Lines (one JSON object a line): drop --format jsonl so "
                                   "that passk detects its format, or pass the format it is "
                                   "in (e.g. --format promptfoo)") from None
            what = (f"not valid JSON ({exc.msg})" if isinstance(exc, json.JSONDecodeError)
                    else f"not a text file ({exc.reason})")
            raise ResultsError(path, number, what) from None
        if is_header(value):
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


def iter_run_log(path: str | os.PathLike[str], *, torn_tail: bool = False,
                 repair: bool = False) -> Iterator[tuple[int, Any]]:
    """:func:`read_run_log`'s records, one ``(line, record)`` at a time, the header left out.

    The same parse, the same errors and the same repair as :func:`read_run_log`
    (a protocol header anywhere but first is an error; the header itself is
    :func:`read_log_header`'s), with one line in memory at a time: resuming a
    suite replays its log as it is read. The repair is made once the last
    record has been taken.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "log.jsonl"
    >>> _ = p.write_text('{"protocol": {"settings": {}}}\\n\\n'
    ...                  '{"task_id": "a", "success": true}\\n{"ta')
    >>> list(iter_run_log(p, torn_tail=True, repair=True)), p.read_text()[-6:]
    ([(3, {'task_id': 'a', 'success': True})], 'true}\\n')
    """
    p = Path(path)
    size = p.stat().st_size
    good_end = 0  # bytes up to the end of the last whole line
    first = True
    ends_line = True  # whether the last line read ends with a newline
    with open(p, "rb") as f:
        for number, raw in enumerate(f, start=1):
            ends_line = raw.endswith(b"\n")
            is_last = not ends_line  # as in read_run_log: what follows the last newline
            body = raw[:-1] if ends_line else raw
            if not body.strip():
                if not is_last:
                    good_end += len(raw)
                continue
            try:
                value = _DECODE(body)  # json.loads' value wherever msgspec takes the line
            except msgspec.MsgspecError:
                try:  # NaN, 1e400, a lone surrogate, or bad JSON: json.loads decides
                    value = json.loads(body.decode("utf-8"))
                except (json.JSONDecodeError, UnicodeDecodeError):
                    if is_last and torn_tail:
                        break
                    read_run_log(p, torn_tail=torn_tail)  # raises, naming the line as it does
                    raise  # not reached: the same bytes fail there too
            if is_header(value):
                if not first:
                    raise ResultsError(path, number, "a protocol record must come first")
            else:
                yield number, value
            first = False
            good_end = size if is_last else good_end + len(raw)
    if repair and good_end < size:
        with open(p, "r+b") as f:
            f.truncate(good_end)
    elif repair and size and not ends_line:
        with open(p, "ab") as f:
            f.write(b"\n")


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
                return first if is_header(first) else None
    return None


def log_header_line(protocol: Protocol, *, seed: int | None = None) -> str:
    """The header line ``passk run`` writes first in its log (without the newline).

    Examples
    --------
    >>> line = log_header_line(Protocol({"k": 5}), seed=3)
    >>> (line.startswith('{"protocol":{"settings":{"k":5},"fingerprint":"'),
    ...  line.endswith(',"seed":3}'))
    (True, True)
    """
    header: dict[str, Any] = {"protocol": protocol.to_dict()}
    if seed is not None:
        header["seed"] = seed
    return json.dumps(header, separators=(",", ":"))


def protocol_of(header: dict[str, Any] | None, path: Any, line: int = 1) -> Protocol | None:
    """The header's protocol as a :class:`Protocol`; its fingerprint must be there and match.

    Examples
    --------
    >>> protocol_of({"protocol": {"settings": {"k": 5}}}, "log.jsonl")
    Traceback (most recent call last):
    ...
    passk.results.ResultsError: log.jsonl:1: field 'protocol.fingerprint' is missing: a header passk wrote always has one (edited by hand?); write the log again with passk run
    """  # noqa: E501  # a doctest's output line cannot wrap
    if header is None:
        return None
    if not isinstance(header.get("protocol"), dict) or "fingerprint" not in header["protocol"]:
        raise ResultsError(path, line, "field 'protocol.fingerprint' is missing: a header passk "
                           "wrote always has one (edited by hand?); write the log again with "
                           "passk run")
    try:
        return Protocol.from_dict(header["protocol"])
    except (ValueError, AttributeError, TypeError) as exc:
        raise ResultsError(path, line, f"bad protocol record ({exc})") from None




def whole_field(record: Any, name: str, path: Any, line: int, default: int | None = None
                ) -> int | None:
    """A record's whole-number field as an int, however written (``1``, ``1.0``, ``"1"``).

    Missing or null gives ``default``; a bool, a fraction, a float beyond 2**53
    (which has lost digits: a seed of 64 bits written as a float is another
    seed) or other text is an error naming the line and the field.

    Examples
    --------
    >>> [whole_field({"seed": v}, "seed", "log", 2) for v in (7, 7.0, "7", None)]
    [7, 7, 7, None]
    """
    value = record.get(name) if isinstance(record, dict) else None
    if value is None:
        return default
    if isinstance(value, bool):
        pass
    elif isinstance(value, int):
        return value
    elif isinstance(value, float) and value.is_integer() and abs(value) <= 2**53:
        return int(value)
    elif isinstance(value, float) and value.is_integer():
        raise ResultsError(path, line, f"field {name!r} is written as a float, {value!r}, "
                           "beyond 2**53, where a float cannot hold a whole number exactly "
                           "(re-written by a tool that reads JSON numbers as floats?); keep "
                           "the log as passk wrote it")
    elif isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    raise ResultsError(path, line, f"field {name!r} must be a whole number, got {value!r:.60}")


#: What a passk run log's record identity is: its task, seed and attempt.
PASSK_RUN_ID = "passk run (task, seed, attempt)"


def record_run_id(record: Any, path: Any, line: int) -> tuple[str, ...] | None:
    """A run log record's run identity: its task, its seed as an integer, its attempt (0
    when not written); None for a record without a seed.

    Examples
    --------
    >>> record_run_id({"task_id": "a", "seed": 3.0}, "log", 2)
    ('passk run (task, seed, attempt)', 'a', '3', '0')
    """
    seed = whole_field(record, "seed", path, line)
    if seed is None:
        return None
    attempt = whole_field(record, "attempt", path, line, default=0)
    return (PASSK_RUN_ID, str(record.get("task_id")), str(seed), str(attempt))


def _planned_runs(settings: Any) -> tuple[dict[str, int] | None, Any]:
    """Each declared task's most runs (the pytest plugin's ``tests``), or the plan's rule."""
    tests = settings.get("tests")
    if isinstance(tests, dict):
        return {str(t): v["runs"] for t, v in tests.items()
                if isinstance(v, dict) and isinstance(v.get("runs"), int)}, None
    return None, settings


def _trials_within(limit: dict[Any, Any], keys: Sequence[Any], trial: np.ndarray) -> bool:
    """Whether each record's trial (``trial``, one a record) is under the most runs its
    key allows (``limit``: key -> most runs, None for no limit; ``keys``: each record's),
    decided in bulk; False too where a limit is not a whole number (the caller's slow path
    names the line)."""
    if any(v is not None and not isinstance(v, int) for v in limit.values()):
        return False
    if not trial.size:
        return True
    if len(limit) == 1:
        only = next(iter(limit.values()))
        return only is None or 0 <= int(trial.min()) <= int(trial.max()) < only
    if all(v is None for v in limit.values()):
        return True
    order = {key: i for i, key in enumerate(limit)}
    at = np.fromiter(map(order.__getitem__, keys), dtype=np.intp, count=trial.size)
    known = np.array([v is not None for v in limit.values()])[at]
    try:
        most = np.array([v or 0 for v in limit.values()], dtype=np.int64)[at]
    except OverflowError:
        return False
    return not bool(np.any(known & ((trial < 0) | (trial >= most))))


def _most_runs(settings: Any, risk: Any) -> int | None:
    by_risk, default = settings.get("runs_by_risk"), settings.get("default_runs")
    if not isinstance(by_risk, dict) or not isinstance(default, int):
        return None
    planned = by_risk.get(risk, default) if isinstance(risk, str) else default
    most = planned if isinstance(planned, int) else default
    flaky = settings.get("previously_flaky_runs")  # a task flagged flaky may be planned more
    return max(most, flaky) if isinstance(flaky, int) else most


def check_records(header: dict[str, Any] | None, protocol: Protocol | None,
                  records: Any, path: Any) -> None:
    """Refuse a run log contradicted by its own header, or a seeded log without one.

    ``records`` are ``(line, record)`` pairs. A record with a ``seed`` is a
    ``passk run`` record: with no header line before it, the header was
    deleted (or never written). Against the header: a record's task must be
    one the protocol lists (``tasks``, or the pytest plugin's ``tests``); its
    trial below the most runs the plan gives any task of its risk (and a
    test's own ``runs``); its attempt at most ``max_retries``; and its seed the
    one the header's seed derives (:func:`passk.repeats.attempt_seed`).

    Raises
    ------
    ResultsError
        Naming the line and the field, and what to do.
    """
    record_checker(header, protocol, path)(records)


def record_checker(header: dict[str, Any] | None, protocol: Protocol | None, path: Any
                   ) -> RecordChecker:
    """:func:`check_records` for a log read in chunks: the header's checks, set up once,
    applied to each chunk of ``(line, record)`` pairs as it is read.

    Examples
    --------
    >>> header = {"protocol": Protocol({"tasks": ["a"]}).to_dict()}
    >>> check = record_checker(header, Protocol.from_dict(header["protocol"]), "log.jsonl")
    >>> check([(2, {"task_id": "a", "success": True})])
    >>> check([(3, {"task_id": "b", "success": True})])
    Traceback (most recent call last):
    ...
    passk.results.ResultsError: log.jsonl:3: field 'task_id': task 'b' is not in the header's task list: the log was edited, or mixes two runs
    """  # noqa: E501  # a doctest's output line cannot wrap
    return RecordChecker(header, protocol, path)


#: The fields of a record the header's checks read (and ``success``, only for being there).
_CHECKED = ("task_id", "trial", "attempt", "seed", "risk")


def _typed(task_ids: list[Any], trials: list[Any], attempts: list[Any], seeds: list[Any],
           risks: list[Any]) -> bool:
    """Whether a chunk's fields are typed as :meth:`RecordChecker.columns` takes them."""
    return (set(map(type, trials)) <= {int, type(None)}
            and set(map(type, attempts)) <= {int, type(None)}
            and set(map(type, seeds)) <= {int, type(None)}
            and set(map(type, task_ids)) <= {str, int}
            and set(map(type, risks)) <= {str, type(None)})


class RecordChecker:
    """The header's checks on a log's records (:func:`record_checker` makes one).

    Called with ``(line, record)`` pairs, or through :meth:`columns` with a
    chunk's fields as lists. A chunk of plain records (whole-number trials,
    attempts and seeds, as ``passk run`` writes them) is checked in bulk: the
    seeds the header derives for the chunk's runs at once
    (:func:`passk.repeats.run_seeds`); any other chunk, and any chunk the bulk
    check does not pass, is checked record by record (:meth:`check_record`),
    which decides and names the line. The bulk check passes a chunk only where
    every record passes one by one.
    """

    def __init__(self, header: dict[str, Any] | None, protocol: Protocol | None,
                 path: Any) -> None:
        settings = protocol.settings if protocol is not None else {}
        tasks = settings.get("tasks")
        self.listed = set(map(str, tasks)) if isinstance(tasks, list) else None
        self.per_test, self.plan = _planned_runs(settings)
        if self.per_test is not None:
            self.listed = set(self.per_test) if self.listed is None else self.listed
        self.retries = settings.get("max_retries")
        root = header.get("seed") if header is not None else None
        self.root = (root if isinstance(root, int) and not isinstance(root, bool) and root >= 0
                     else None)
        self.header, self.path = header, path
        self._known = np.zeros(0, dtype=bool)  # indexed(): each task met, listed or not
        self._most = np.zeros(0, dtype=np.int64)  # indexed(): each task met, its most runs

    def __call__(self, records: Iterable[tuple[int, Any]]) -> None:
        """Check ``(line, record)`` pairs; raises :class:`ResultsError` naming the first bad
        line, as :meth:`check_record` on each in turn would."""
        records = list(records)
        plain = [r for _, r in records if type(r) is dict and "success" in r
                 and not is_settled(r)]
        if len(plain) == len(records):
            fields = [[r.get(name) for r in plain] for name in _CHECKED]
            if _typed(*fields) and self._bulk_ok(*fields):
                return
        for line, record in records:
            self.check_record(line, record)

    def columns(self, numbers: Sequence[int], task_ids: list[str | int],
                trials: list[int | None], attempts: list[int | None], seeds: list[int | None],
                risks: list[str | None]) -> None:
        """Check a chunk given as its fields, a list each, typed as annotated (``bool`` is
        not ``int``), of records that all have ``success`` and are not settled: the same
        verdict as calling with the records."""
        if self._bulk_ok(task_ids, trials, attempts, seeds, risks):
            return
        for line, *fields in zip(numbers, task_ids, trials, attempts, seeds, risks, strict=True):
            record = dict(zip(_CHECKED, fields, strict=True))
            record["success"] = True
            self.check_record(line, {k: v for k, v in record.items() if v is not None})

    def indexed(self, names: Sequence[str], index: np.ndarray, trial: np.ndarray,
                attempt: np.ndarray, seed: np.ndarray, risks: Sequence[str | None]) -> bool:
        """Whether every record of a chunk passes, decided in bulk from a reader's arrays.

        ``index`` is each record's task as an index into ``names`` (the ids as text, in
        the order the reader met them; the list may grow between calls), and ``trial``,
        ``attempt`` and ``seed`` are whole-number arrays (int64, int64, uint64): every
        record has a trial and a seed, and a missing attempt is 0. No Python object is
        made a record. False where the bulk check does not pass or does not decide; the
        caller then calls :meth:`columns`, which names the line.
        """
        n = int(index.size)
        if not n:
            return True
        if self.header is None:
            return False  # a seed without its header: columns() says so
        known = self._listed_mask(names)
        if known is not None and not bool(known[index].all()):
            return False
        if self.per_test is not None:
            most_task = self._task_most(names)
            if most_task is None:
                return False
            most = most_task[index]
            if np.any((most >= 0) & ((trial < 0) | (trial >= most))):
                return False
        else:
            limit = {r: _most_runs(self.plan, r) for r in set(risks)}
            if not _trials_within(limit, risks, trial):
                return False
        low, high = int(attempt.min()), int(attempt.max())
        if isinstance(self.retries, int):
            if not 0 <= low <= high <= self.retries:
                return False
        elif low < 0:
            return False  # attempt_seed refuses it: one by one, as before
        if self.root is None:
            return True
        return self._indexed_seeds_match(names, index, trial, attempt, seed)

    def _listed_mask(self, names: Sequence[str]) -> np.ndarray | None:
        """Whether each of ``names`` is a task the header lists (None: no list), grown as
        the reader meets new tasks."""
        if self.listed is None:
            return None
        have = self._known.size
        if len(names) > have:
            listed = self.listed
            more = np.fromiter((t in listed for t in names[have:]), dtype=bool,
                               count=len(names) - have)
            self._known = np.concatenate([self._known, more])
        return self._known

    def _task_most(self, names: Sequence[str]) -> np.ndarray | None:
        """Each of ``names``' most runs by the header's per-test plan (-1: none), grown as
        the reader meets new tasks; None where one is not a whole number numpy holds."""
        have = self._most.size
        if len(names) > have:
            per_test = self.per_test if self.per_test is not None else {}
            values = [per_test.get(t) for t in names[have:]]
            if any(v is not None and (not isinstance(v, int) or not 0 <= v < 2**63)
                   for v in values):
                return None
            self._most = np.concatenate([self._most, np.array(
                [-1 if v is None else v for v in values], dtype=np.int64)])
        return self._most

    def _indexed_seeds_match(self, names: Sequence[str], index: np.ndarray, trial: np.ndarray,
                             attempt: np.ndarray, seed: np.ndarray) -> bool:
        from passk.repeats import attempt_seed, run_seeds_indexed

        root = self.root
        if root is None:
            return True
        first = (trial >= 0) & (attempt == 0)
        if bool(first.all()):
            return bool(np.array_equal(run_seeds_indexed(root, names, index, trial), seed))
        at = np.flatnonzero(first)
        if at.size and not np.array_equal(run_seeds_indexed(root, names, index[at], trial[at]),
                                          seed[at]):
            return False
        for i in np.flatnonzero((trial >= 0) & (attempt > 0)).tolist():  # retries: few
            if attempt_seed(root, names[index[i]], int(trial[i]), int(attempt[i])) \
                    != int(seed[i]):
                return False
        return True

    def _bulk_ok(self, task_ids: Sequence[Any], trials: Sequence[Any], attempts: Sequence[Any],
                 seeds: Sequence[Any], risks: Sequence[Any]) -> bool:
        """Whether every record passes, decided in bulk; False also for a chunk the bulk
        check does not take (the caller then checks record by record)."""
        n = len(task_ids)
        if not n:
            return True
        seeded = n - seeds.count(None)
        if self.header is None:
            return not seeded
        if seeded not in (0, n) or None in trials:
            return False
        tasks: Sequence[Any] = task_ids
        if self.listed is not None and not self.listed.issuperset(tasks):
            tasks = list(map(str, task_ids))  # ids written as numbers?
            if not self.listed.issuperset(tasks):
                return False
        elif self.listed is None and int in set(map(type, task_ids)):
            tasks = list(map(str, task_ids))
        try:
            trial = np.array(trials, dtype=np.int64)
            attempt = np.array(attempts if None not in attempts else
                               [0 if a is None else a for a in attempts], dtype=np.int64)
        except OverflowError:
            return False
        if self.per_test is not None:
            limit = {t: self.per_test.get(t) for t in set(tasks)}
            keys: Sequence[Any] = tasks
        else:
            limit = {r: _most_runs(self.plan, r) for r in set(risks)}
            keys = risks
        if not _trials_within(limit, keys, trial):
            return False
        if isinstance(self.retries, int):
            if n and not 0 <= int(attempt.min()) <= int(attempt.max()) <= self.retries:
                return False
        elif int(attempt.min()) < 0:
            return False  # attempt_seed refuses it: one by one, as before
        if self.root is None or not seeded:
            return True
        try:
            seed = np.array(seeds, dtype=np.uint64)
        except OverflowError:
            return False  # no seed the header derives is below 0 or beyond 64 bits
        return self._seeds_match(list(tasks), trial, attempt, seed)

    def _seeds_match(self, tasks: list[Any], trial: np.ndarray, attempt: np.ndarray,
                     seed: np.ndarray) -> bool:
        from passk.repeats import attempt_seed, run_seeds

        if self.root is None:
            return True  # no seed to derive (the caller checks first)
        first = (trial >= 0) & (attempt == 0)
        at = np.flatnonzero(first)
        if at.size == trial.size:
            return bool(np.array_equal(run_seeds(self.root, tasks, trial), seed))
        if at.size and not np.array_equal(
                run_seeds(self.root, [tasks[i] for i in at.tolist()], trial[at]), seed[at]):
            return False
        for i in np.flatnonzero((trial >= 0) & (attempt > 0)).tolist():  # retries: few
            if attempt_seed(self.root, tasks[i], int(trial[i]), int(attempt[i])) != int(seed[i]):
                return False
        return True

    def check_record(self, line: int, record: Any) -> None:
        """The header's checks on one record; raises :class:`ResultsError` naming the line."""
        from passk.repeats import attempt_seed

        header, path, listed = self.header, self.path, self.listed
        per_test, plan, retries, root = self.per_test, self.plan, self.retries, self.root
        if not isinstance(record, dict) or is_settled(record) or "success" not in record:
            if header is not None and is_settled(record) and listed is not None \
                    and str(record.get("task_id")) not in listed:
                raise ResultsError(path, line, f"field 'task_id': task "
                                   f"{str(record.get('task_id'))!r:.60} is not in the header's "
                                   "task list: the log was edited, or mixes two runs")
            return
        seed = whole_field(record, "seed", path, line)
        if header is None:
            if seed is not None:
                raise ResultsError(path, line, "a passk run record (it has a 'seed') but the "
                                   "log has no protocol header line: the header was deleted, "
                                   "or the log was written without one; write it again with "
                                   "passk run (or write_runs(..., protocol=...))")
            return
        task = str(record.get("task_id"))
        if listed is not None and task not in listed:
            raise ResultsError(path, line, f"field 'task_id': task {task!r:.60} is not in the "
                               "header's task list: the log was edited, or mixes two runs")
        trial = whole_field(record, "trial", path, line)
        attempt = whole_field(record, "attempt", path, line, default=0) or 0
        most = (per_test.get(task) if per_test is not None
                else _most_runs(plan, record.get("risk")))
        if trial is not None and most is not None and not 0 <= trial < most:
            raise ResultsError(path, line, f"field 'trial': run {trial} of task {task!r:.60} is "
                               f"beyond the {most} runs the header plans: the header was "
                               "edited, or the log mixes two runs")
        if isinstance(retries, int) and not 0 <= attempt <= retries:
            raise ResultsError(path, line, f"field 'attempt': attempt {attempt} is beyond the "
                               f"header's max_retries {retries}: the header was edited, or "
                               "the log mixes two runs")
        if root is not None and seed is not None and trial is None:
            raise ResultsError(path, line, "field 'trial' is missing: a passk run record "
                               "names its run, and its seed is checked against the one the "
                               "header's seed gives that run")
        if root is not None and seed is not None and trial is not None and trial >= 0:
            if attempt < 0:
                raise ResultsError(path, line, f"field 'attempt': attempt {attempt} is below 0 "
                                   "(a run's first attempt is 0): the record was edited, or "
                                   "comes from another program")
            expected = attempt_seed(root, task, trial, attempt)
            if seed != expected:
                raise ResultsError(path, line, f"field 'seed': {seed} is not the seed the "
                                   f"header's seed {root} gives run {trial} (attempt {attempt}) "
                                   f"of task {task!r:.60} ({expected}): the record was edited, "
                                   "or comes from another run")


def trajectory_field(calls: Any) -> list[dict[str, str]]:
    """A run's tool calls (:class:`~passk.adapter.ToolCall` s) as the log's ``trajectory``.

    Examples
    --------
    >>> from passk.adapter import ToolCall
    >>> trajectory_field([ToolCall("q", "s", "0.12")])
    [{'tool': 'q', 'argument': 's', 'observation': '0.12'}]
    """
    return [{"tool": str(c.tool), "argument": str(c.argument), "observation": str(c.observation)}
            for c in calls]


def read_run_trajectories(path: str | os.PathLike[str]) -> list[Any]:
    """Each counted run of a run log as a :class:`~passk.results.trajectory.Trajectory`.

    A run's last attempt is its outcome (a retried infrastructure error is not
    a run); infrastructure errors and cached results are left out, as the counts
    leave them out. A record without ``trajectory`` gives a run whose steps were
    not recorded (``steps`` None).

    Raises
    ------
    ResultsError
        For a record whose ``task_id``, ``success`` or ``trajectory`` is not of its
        type, naming the line and the field.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "log.jsonl"
    >>> _ = p.write_text('{"task_id": "a", "trial": 0, "success": false}\\n')
    >>> read_run_trajectories(p)
    [Trajectory(task_id='a', run='run 0', success=False, steps=None)]
    """
    from passk.results.trajectory import Trajectory, steps_of_calls

    parsed = read_run_log(path)
    last: dict[tuple[str, Any], tuple[int, dict[str, Any]]] = {}
    for line, record in parsed.records:
        if is_settled(record):
            continue
        if not isinstance(record, dict):
            raise ResultsError(path, line, "expected a JSON object (one run a line)")
        task = record.get("task_id")
        if isinstance(task, bool) or not isinstance(task, (str, int)):
            raise ResultsError(path, line, f"field 'task_id' must be a string, got {task!r:.60}")
        if not isinstance(record.get("success"), bool):
            raise ResultsError(path, line, "field 'success' must be true or false, got "
                               f"{record.get('success')!r:.60}")
        steps = record.get("trajectory")
        if steps is not None and not (isinstance(steps, list) and all(
                isinstance(s, dict) and isinstance(s.get("tool"), str) for s in steps)):
            raise ResultsError(path, line, "field 'trajectory' must be a list of tool calls, "
                               'each {"tool": ..., "argument": ..., "observation": ...}')
        trial = whole_field(record, "trial", path, line)
        key = (str(task), trial if trial is not None else f"line {line}")
        last.pop(key, None)  # a later attempt of a run replaces the earlier one
        last[key] = (line, record)
    out = []
    for (task, trial), (_, record) in last.items():
        if record.get("infrastructure_error") or record.get("cached"):
            continue
        steps = record.get("trajectory")
        out.append(Trajectory(task, f"run {trial}" if isinstance(trial, int) else str(trial),
                              record["success"],
                              None if steps is None else steps_of_calls(steps)))
    return out
