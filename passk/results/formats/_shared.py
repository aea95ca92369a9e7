"""What the readers share: JSON loading, field checks and the sentences they print.

Nothing here knows a format; every reader module imports from here and from
:mod:`passk.results`, never from another reader.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

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


def read_text(path: Path, report_as: Any = None, where: str | None = None) -> str:
    """A file's text as UTF-8; a binary file is an error naming it."""
    report_as = path if report_as is None else report_as
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ResultsError(report_as, where, f"not a text file ({exc.reason} at byte "
                           f"{exc.start}); is it binary or compressed?") from None
    except IsADirectoryError:
        raise ResultsError(report_as, where, "is a directory, not a file") from None


def load_json(path: Path, report_as: Any = None, where: str | None = None) -> Any:
    """Parse a JSON file; errors name ``report_as`` (default ``path``) and ``where``."""
    report_as = path if report_as is None else report_as
    text = read_text(path, report_as, where)
    if not text.strip():
        raise ResultsError(report_as, where, "is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsError(report_as, where, f"not valid JSON at line {exc.lineno} column "
                           f"{exc.colno} ({exc.msg}); is the file truncated?") from None
    except RecursionError:
        raise ResultsError(report_as, where, "JSON nested too deeply to read") from None


def is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def require(record: dict, name: str, kinds: tuple[type, ...], what: str, path: Any,
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


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _have(n: int) -> str:
    return "1 task has" if n == 1 else f"{n} tasks have"


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
            f"{per_task}); {_have(len(short))} fewer than {planned} ({some(short)})")


def expect_regular(path: Path) -> None:
    """A path that exists and is a regular file (or an error naming it)."""
    if not path.is_file():
        raise ResultsError(path, None, "is not a regular file")


def fspath(path: str | os.PathLike[str]) -> Path:
    return Path(path)
