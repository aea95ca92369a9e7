"""What the readers share: JSON loading, field checks and the sentences they print.

Nothing here knows a format; every reader module imports from here and from
:mod:`passk.results`, never from another reader.
"""

from __future__ import annotations

import difflib
import json
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from passk.render.words import plural
from passk.results.counts import Results, ResultsError

#: tau-bench's and tau2-bench's success tolerance around a reward of 1.
REWARD_TOLERANCE = 1e-6

#: The most characters of an id or a value quoted in a message.
QUOTE = 60


def is_successful(reward: float) -> bool:
    """tau-bench's rule: the reward lies within ``1e-6`` of 1.

    Examples
    --------
    >>> is_successful(1.0), is_successful(0.9999999), is_successful(0.5)
    (True, True, False)
    """
    return (1 - REWARD_TOLERANCE) <= reward <= (1 + REWARD_TOLERANCE)


def _utf16(path: Path) -> str:
    fixed = path.with_name(f"{path.stem}-utf8{path.suffix}").name
    return (f"is UTF-16 text, and passk reads UTF-8: save it as UTF-8, e.g. `iconv -f UTF-16 "
            f"-t UTF-8 {path.name} > {fixed}` (Windows PowerShell's `>` writes UTF-16; "
            "`Out-File -Encoding utf8` writes UTF-8)")


def not_utf8(path: Path, exc: UnicodeDecodeError | None = None) -> str:
    """Why a file is not readable as UTF-8 text, and what to do: UTF-16 (by its byte-order
    mark, or zero bytes between ASCII characters), gzip, zip, or other binary data."""
    try:
        with open(path, "rb") as f:
            start = f.read(64)
    except OSError:
        start = b""
    if _utf16_text(start):
        return _utf16(path)
    if start.startswith(b"\x1f\x8b"):
        return f"is gzip-compressed: decompress it first (`gunzip {path.name}`)"
    if start.startswith(b"PK\x03\x04"):
        return "is a zip archive, not a results file: unpack it (an Inspect log ends in .eval)"
    where = f" ({exc.reason} at byte {exc.start})" if exc is not None else ""
    return f"not a text file{where}; is it binary or compressed? (passk reads UTF-8 text)"


def _utf16_text(start: bytes) -> bool:
    """Whether a file's first bytes are UTF-16 text (with or without a byte-order mark): they
    decode as UTF-16 to mostly printable ASCII, as a results file's text is."""
    start = start[:len(start) // 2 * 2]
    encodings = ("utf-16",) if start.startswith((b"\xff\xfe", b"\xfe\xff")) else (
        "utf-16-le", "utf-16-be")
    for encoding in encodings:
        text = start.decode(encoding, errors="replace")
        plain = sum(c < "\x80" and (c.isprintable() or c in "\r\n\t") for c in text)
        if len(text) >= 2 and plain >= 0.9 * len(text):
            return True
    return False


def check_utf8(path: Path) -> None:
    """An error naming a UTF-16, gzip or zip file before a reader decodes it as UTF-8."""
    try:
        with open(path, "rb") as f:
            start = f.read(64)
    except OSError:
        return
    if start.startswith((b"\xff\xfe", b"\xfe\xff", b"\x1f\x8b", b"PK\x03\x04")) or (
            len(start) >= 4 and b"\x00" in start):
        raise ResultsError(path, None, not_utf8(path))


def read_text(path: Path, report_as: Any = None, where: str | None = None) -> str:
    """A file's text as UTF-8 (a leading byte-order mark is dropped); a file in another
    encoding, or binary, is an error naming it and what it is."""
    report_as = path if report_as is None else report_as
    try:
        text = path.read_text(encoding="utf-8-sig")
        if "\x00" in text[:64]:  # UTF-16 without a byte-order mark decodes as UTF-8 with zeros
            raise ResultsError(report_as, where, not_utf8(path))
    except UnicodeDecodeError as exc:
        raise ResultsError(report_as, where, not_utf8(path, exc)) from None
    except IsADirectoryError:
        raise ResultsError(report_as, where, "is a directory, not a file") from None
    else:
        return text


def _json_lines(text: str) -> bool:
    """Whether text holds two or more JSON values, one a line (JSON Lines)."""
    lines = [line for line in text.splitlines()[:3] if line.strip()]
    if len(lines) < 2:
        return False
    try:
        return all(isinstance(json.loads(line), dict) for line in lines[:2])
    except json.JSONDecodeError:
        return False


def load_json(path: Path, report_as: Any = None, where: str | None = None) -> Any:
    """Parse a JSON file; errors name ``report_as`` (default ``path``) and ``where``."""
    report_as = path if report_as is None else report_as
    text = read_text(path, report_as, where)
    if not text.strip():
        raise ResultsError(report_as, where, "is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data" and _json_lines(text):
            raise ResultsError(report_as, where, "looks like JSON Lines (one JSON object a "
                               "line), not one JSON document: rename it to .jsonl, or pass "
                               "--format jsonl") from None
        raise ResultsError(report_as, where, f"not valid JSON at line {exc.lineno} column "
                           f"{exc.colno} ({exc.msg}); is the file truncated?") from None
    except RecursionError:
        raise ResultsError(report_as, where, "JSON nested too deeply to read") from None


def is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def require(record: dict[str, Any], name: str, kinds: tuple[type, ...], what: str, path: Any,
            where: str, *, optional: bool = False) -> Any:
    """``record[name]``, checked to be of ``kinds``; an error naming the field otherwise."""
    if name not in record or record[name] is None:
        if optional:
            return None
        raise ResultsError(path, where, f"missing field {name!r}")
    value = record[name]
    if not isinstance(value, kinds) or (bool not in kinds and isinstance(value, bool)):
        raise ResultsError(path, where, f"field {name!r} must be {what}, got {value!r:.{QUOTE}}")
    return value


def reward(value: Any, name: str, path: Any, where: str) -> float:
    """A finite number (a reward), or an error naming the field."""
    if not is_number(value):
        raise ResultsError(path, where, f"field {name!r} must be a number, got {value!r:.{QUOTE}}")
    try:
        x = float(value)
    except OverflowError:
        raise ResultsError(path, where, f"field {name!r} is too large a number") from None
    if not math.isfinite(x):
        raise ResultsError(path, where, f"field {name!r} must be a finite number, got {value!r}")
    return x


def some(items: Sequence[str], limit: int = 5) -> str:
    """The first ``limit`` items, and how many more."""
    shown = ", ".join(items[:limit])
    return shown + (f", and {len(items) - limit} more" if len(items) > limit else "")


def short_of_plan(results: Results, planned: int, *, opening: str, unit: str,
                  per_task: str) -> str | None:
    """The sentence for ``Results.incomplete`` when some task has fewer records (counted or
    left out) than ``planned``, naming them; None when every task has its runs."""
    present = (results.totals + results.excluded).tolist()
    short = [f"{t}: {n}" for t, n in zip(results.task_ids, present) if n < planned]
    if not short:
        return None
    m = len(results)
    return (f"{opening} {sum(present)} of {m * planned} {unit} ({plural(m, 'task')} × "
            f"{per_task}); {plural(len(short), 'task', verb='has')} fewer than {planned} "
            f"({some(short)})")


def expect_regular(path: Path) -> None:
    """A path that exists and is a regular file (or an error naming it)."""
    if not path.is_file():
        raise ResultsError(path, None, "is not a regular file")


def fspath(path: str | os.PathLike[str]) -> Path:
    return Path(path)


#: A run's success flag, as JSON Lines and CSV both accept it: text in any case.
SUCCESS_FLAGS = {"true": True, "1": True, "false": False, "0": False}

#: How the accepted success flags are named in messages.
SUCCESS_FLAGS_SAID = 'true or false, or 1 or 0 (in JSON Lines also as text, "true" or "1")'


def success_flag(value: Any) -> bool | None:
    """A success flag's truth: ``true``/``false``, ``1``/``0``, or that text in any case;
    None for any other value.

    Examples
    --------
    >>> [success_flag(v) for v in (True, 0, "1", "False", " true ", 2, 1.0, "yes", None)]
    [True, False, True, False, True, None, None, None, None]
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return {1: True, 0: False}.get(value)
    if isinstance(value, str):
        return SUCCESS_FLAGS.get(value.strip().lower())
    return None


def did_you_mean(name: str, present: Iterable[Any], known: Iterable[str]) -> str | None:
    """``unknown field 'sucess' (did you mean 'success'?)`` when a field ``name`` is missing
    and one of the fields ``present`` that is not ``known`` is spelled like it; else None.

    Examples
    --------
    >>> did_you_mean("success", ["task_id", "sucess"], ["task_id", "success"])
    "unknown field 'sucess' (did you mean 'success'?)"
    """
    unknown = [k for k in present if isinstance(k, str) and k not in set(known)]
    close = difflib.get_close_matches(name, unknown, n=1, cutoff=0.75)
    return f"unknown field {close[0]!r} (did you mean {name!r}?)" if close else None
