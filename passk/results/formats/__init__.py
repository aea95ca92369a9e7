"""Readers of results files, one module per producer, registered in :data:`FORMAT_TABLE`.

========================  ===============================  ==============================
format (``--format``)     module                           what it reads
========================  ===============================  ==============================
``jsonl``, ``csv``        :mod:`passk.results.formats.jsonl_csv`   passk's run logs; CSV
``tau-bench``             :mod:`passk.results.formats.tau_bench`   tau-bench's results array
``tau2``                  :mod:`passk.results.formats.tau2`        tau2-bench's runs
``inspect``               :mod:`passk.results.formats.inspect_log` Inspect AI eval logs
``terminal-bench``        :mod:`passk.results.formats.terminal_bench`  terminal-bench's runs
``harbor``                :mod:`passk.results.formats.harbor`      Harbor jobs (terminal-bench 2)
``promptfoo``             :mod:`passk.results.formats.promptfoo`   ``promptfoo eval -o out.json``
``lm-eval``               :mod:`passk.results.formats.lm_eval`     lm-eval ``--log_samples`` files
========================  ===============================  ==============================

Each reader validates its input, turns every run into a
:class:`passk.results.Run` and counts them with
:func:`passk.results.tally_runs`, so a repeated ``(task, trial)`` follows one
rule in every format. A bad record is a :class:`passk.results.ResultsError`
naming the file and the record, never a wrong number, and never a traceback.
What is left out is said, with why (``Results.excluded_reason``), and a run
that stopped short of its own plan is named in ``Results.incomplete``.

Adding a format is adding a module with a ``read_<name>(path, data=None, *,
duplicates="error", **options)`` function (and, to be detected, a
``sniff(data, path)`` for JSON content, ``sniff_file(path)`` for a file's first
bytes, or ``sniff_dir(path)`` for a directory), and one row in :data:`FORMAT_TABLE`. Reader modules
import from
:mod:`passk.results`, :mod:`passk.results.runlog` and :mod:`passk.results.formats._shared`
only: no reader imports another, and nothing here imports :mod:`passk.results.read`.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from passk.results.counts import Results, ResultsError
from passk.results.formats._shared import REWARD_TOLERANCE, is_successful, load_json

__all__ = [
    "ERRORED_SAMPLES",
    "FORMATS",
    "FORMAT_NAMES",
    "FORMAT_OPTIONS",
    "FORMAT_TABLE",
    "INSPECT_SUCCESS_VALUES",
    "READER_OPTIONS",
    "REWARD_TOLERANCE",
    "TAU2_EXCLUDED_TERMINATIONS",
    "Format",
    "detect_format",
    "is_successful",
    "read_formatted",
    "read_harbor",
    "read_inspect",
    "read_lm_eval",
    "read_promptfoo",
    "read_tau2",
    "read_tau_bench",
    "read_terminal_bench",
    "reject_options",
]


@dataclass(frozen=True)
class Format:
    """One row of the table: a format's name, its module and reader, and what it takes.

    ``extensions`` fix the format of a file by its name; ``detect`` is the
    order in which formats try to claim a ``.json`` file or a directory by its
    content (lower first; None: never detected by content).
    """

    name: str
    title: str
    module: str
    reader: str
    options: tuple[str, ...] = ()
    extensions: tuple[str, ...] = ()
    detect: int | None = None

    def load(self) -> ModuleType:
        """The format's reader module, imported on first use."""
        return importlib.import_module(f"{__name__}.{self.module}")

    def read(self, path: Path, data: Any = None, *, duplicates: str = "error",
             **options: Any) -> Results:
        """Read ``path`` with the format's reader (``data``: its JSON, if already parsed)."""
        reader: Callable[..., Results] = getattr(self.load(), self.reader)
        return reader(path, data, duplicates=duplicates, **options)


_INSPECT_OPTIONS = ("scorer", "success_values", "success_threshold", "score_key", "errors")
_HARBOR_OPTIONS = ("eval_key", "score_key", "success_threshold", "count_errors_as_failures")

#: Every format passk reads. A new format is one row here and one module beside this file.
FORMAT_TABLE: tuple[Format, ...] = (
    Format("jsonl", "JSON Lines", "jsonl_csv", "read_jsonl", extensions=(".jsonl", ".ndjson")),
    Format("csv", "CSV", "jsonl_csv", "read_csv", extensions=(".csv",)),
    Format("tau-bench", "tau-bench", "tau_bench", "read_tau_bench", detect=9),
    Format("tau2", "tau2-bench", "tau2", "read_tau2", detect=1),
    Format("inspect", "Inspect AI", "inspect_log", "read_inspect", options=_INSPECT_OPTIONS,
           extensions=(".eval",), detect=0),
    Format("terminal-bench", "terminal-bench", "terminal_bench", "read_terminal_bench",
           detect=2),
    Format("harbor", "Harbor (terminal-bench 2)", "harbor", "read_harbor",
           options=_HARBOR_OPTIONS, detect=3),
    Format("promptfoo", "promptfoo", "promptfoo", "read_promptfoo",
           options=("errors",), detect=4),
    Format("lm-eval", "lm-evaluation-harness", "lm_eval", "read_lm_eval",
           options=("metric", "filter", "success_threshold"), detect=5),
)

_BY_NAME = {f.name: f for f in FORMAT_TABLE}
_DETECTED = sorted((f for f in FORMAT_TABLE if f.detect is not None), key=lambda f: f.detect or 0)

#: Every format ``read_results`` understands, as ``--format`` spells them.
FORMATS = ("auto", *(f.name for f in FORMAT_TABLE))

#: The formats' names in messages.
FORMAT_NAMES = {f.name: f.title for f in FORMAT_TABLE}

#: The reader options each format takes; any other is refused.
FORMAT_OPTIONS = {f.name: f.options for f in FORMAT_TABLE}

#: Reader options: each one's command-line flag and the format that takes it.
READER_OPTIONS = {"scorer": ("--scorer", "inspect"),
                  "success_values": ("--success-value", "inspect"),
                  "success_threshold": ("--success-threshold", "inspect"),
                  "score_key": ("--score-key", "inspect"),
                  "errors": ("--errors", "inspect"),
                  "eval_key": ("--eval-key", "harbor"),
                  "count_errors_as_failures": ("--count-errors-as-failures", "harbor"),
                  "metric": ("--metric", "lm-eval"),
                  "filter": ("--filter", "lm-eval")}

_REEXPORTED = {"read_inspect": "inspect_log", "INSPECT_SUCCESS_VALUES": "inspect_log",
               "ERRORED_SAMPLES": "inspect_log", "read_tau2": "tau2",
               "TAU2_EXCLUDED_TERMINATIONS": "tau2", "read_tau_bench": "tau_bench",
               "read_terminal_bench": "terminal_bench", "read_harbor": "harbor",
               "read_promptfoo": "promptfoo", "read_lm_eval": "lm_eval"}


def __getattr__(name: str) -> Any:
    # the readers load on first use, so that `passk --help` does not import them
    if name in _REEXPORTED:
        return getattr(importlib.import_module(f"{__name__}.{_REEXPORTED[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def reject_options(path: str | os.PathLike[str], format: str,
                   options: dict[str, Any], accepted: tuple[str, ...] = ()) -> None:
    """Refuse a reader option the format does not take (an option set is never ignored).

    Options whose value is None count as not given.

    Examples
    --------
    >>> reject_options("tau.json", "tau-bench", {"scorer": "match"})
    Traceback (most recent call last):
    ...
    passk.results.ResultsError: tau.json: --scorer (scorer=) does not apply to a tau-bench \
file; it is for Inspect AI logs
    """
    allowed = set(accepted)
    for name, value in options.items():
        if value is None or value == [] or name in allowed:
            continue
        flag, owner = READER_OPTIONS.get(name, (name, ""))
        owners = [f"{f.title} {'jobs' if f.name == 'harbor' else 'logs'}"
                  for f in FORMAT_TABLE if name in f.options] or [FORMAT_NAMES.get(owner, owner)]
        raise ResultsError(path, None, f"{flag} ({name}=) does not apply to a "
                           f"{FORMAT_NAMES.get(format, format)} file; it is for "
                           f"{' and '.join(owners)}")


def _unknown() -> str:
    return ("cannot tell the format: expected a JSON array of tau-bench runs or tau2-bench "
            "simulations, a tau2-bench object with 'simulations' (or a run directory), a "
            "terminal-bench results.json (or run directory), a Harbor (terminal-bench 2) "
            "trial's or job's result.json (or job directory), a promptfoo eval output (promptfoo "
            "eval -o out.json), an lm-evaluation-harness samples_*.jsonl (--log_samples), "
            "or an Inspect AI log; pass "
            "--format (supported: " + ", ".join(FORMATS[1:]) + ")")


def _directory_error(path: Path) -> ResultsError:
    return ResultsError(path, None, "is a directory, not a results file: pass one results file "
                        "(e.g. one Inspect .eval log), a tau2-bench run directory (results.json "
                        "beside a simulations/ folder), a terminal-bench run directory or "
                        "folder of run directories, or a Harbor (terminal-bench 2) job directory "
                        "(config.json, result.json and one folder a trial) or folder of jobs")


def _by_head(path: Path) -> Format | None:
    """A format that claims a file by its first bytes (``sniff_file``), before it is parsed:
    a big Inspect .json log is then read as it streams, not loaded whole to be detected."""
    for f in _DETECTED:
        sniff_file = getattr(f.load(), "sniff_file", None)
        if sniff_file is not None and sniff_file(path):
            return f
    return None


def _by_content(path: Path, data: Any) -> Format | None:
    for f in _DETECTED:
        sniff = getattr(f.load(), "sniff", None)
        if sniff is not None and sniff(data, path):
            return f
    return None


def _by_layout(path: Path) -> Format:
    for f in _DETECTED:
        sniff_dir = getattr(f.load(), "sniff_dir", None)
        if sniff_dir is not None and sniff_dir(path):
            return f
    raise _directory_error(path)


def _by_extension(path: Path) -> Format | None:
    suffix = path.suffix.lower()
    return next((f for f in FORMAT_TABLE if suffix in f.extensions), None)


def detect_format(path: str | os.PathLike[str]) -> str:
    """The format of a results file, by extension, content or (for a directory) layout.

    ``.jsonl``/``.ndjson`` → jsonl, ``.csv`` → csv, ``.eval`` → inspect; a
    ``.json`` by content (an Inspect log's object, tau2's object or bare array
    of simulations, terminal-bench's ``results``, a Harbor trial's or job's
    ``result.json``, tau-bench's array); a directory by its layout (a tau2 run
    directory, a terminal-bench run directory or folder of them, a Harbor job
    directory or folder of them), and an error otherwise.
    """
    p = Path(path)
    if p.is_dir():
        return _by_layout(p).name
    fixed = _by_head(p) or _by_extension(p)
    if fixed is not None:
        return fixed.name
    found = _by_content(p, load_json(p))
    if found is None:
        raise ResultsError(path, None, _unknown())
    return found.name


def read_formatted(path: str | os.PathLike[str], format: str,
                   *, duplicates: str = "error", **options: Any) -> Results:
    """Read one results file (or run directory) in ``format`` (or detect it: ``"auto"``).

    A reader option that the format does not take (e.g. ``scorer`` on a
    tau-bench file) is an error naming the option and the format. Called by
    :func:`passk.results.read.read_results`, which checks the path and the options first.
    """
    path = Path(path)
    data = None
    entry: Format | None
    if format == "auto":
        if path.is_dir():
            entry = _by_layout(path)
        else:
            entry = _by_head(path) or _by_extension(path)
            if entry is None:
                data = load_json(path)
                entry = _by_content(path, data)
                if entry is None:
                    raise ResultsError(path, None, _unknown())
    else:
        if format not in _BY_NAME:
            raise ResultsError(path, None, f"unknown format {format!r}; supported formats: "
                               f"{', '.join(FORMATS)}")
        entry = _BY_NAME[format]
        if path.is_dir() and getattr(entry.load(), "sniff_dir", None) is None:
            raise ResultsError(path, None, f"is a directory, not a {entry.title} results file")
    if not path.is_dir() and not path.is_file():
        raise ResultsError(path, None, "is not a regular file")
    reject_options(path, entry.name, options, entry.options)
    given = {k: v for k, v in options.items() if v is not None and v != []}
    return entry.read(path, data, duplicates=duplicates, **given)
