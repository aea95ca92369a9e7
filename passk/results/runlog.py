"""The run log: one record a run, one writer and one parser for every producer of it.

``passk run`` appends to it as each run ends, :func:`passk.results.read.write_runs`
writes it from a finished suite (what the pytest plugin's ``--passk-log``
writes, and what users export from :func:`passk.evaluate_suite`), and every
one of them writes the same :class:`RunRecord`, so every log line keeps the
run's ``seed``, ``attempt``, ``seconds`` and ``error``: a failing run can be
re-run from its line. :func:`read_run_log` is the one parser.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from passk.results.counts import ResultsError
from passk.results.protocol import Protocol

__all__ = [
    "RunLog",
    "RunRecord",
    "is_header",
    "log_header_line",
    "protocol_of",
    "read_log_header",
    "read_run_log",
]


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

    def to_json(self) -> str:
        """The record as one line of JSON (without the newline)."""
        return json.dumps(dataclasses.asdict(self), separators=(",", ":"))


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
    >>> line.startswith('{"protocol":{"settings":{"k":5},"fingerprint":"'), line.endswith(',"seed":3}')
    (True, True)
    """
    header: dict[str, Any] = {"protocol": protocol.to_dict()}
    if seed is not None:
        header["seed"] = seed
    return json.dumps(header, separators=(",", ":"))


def protocol_of(header: dict[str, Any] | None, path: Any, line: int = 1) -> Protocol | None:
    """The header's protocol as a :class:`Protocol` (its fingerprint checked)."""
    if header is None:
        return None
    try:
        return Protocol.from_dict(header["protocol"])
    except (ValueError, AttributeError, TypeError) as exc:
        raise ResultsError(path, line, f"bad protocol record ({exc})") from None


