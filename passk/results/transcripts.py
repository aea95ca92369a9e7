"""Every run a file records, step by step: one reader per producer, in one table.

:func:`read_trajectories` detects the producer (``passk run``'s log, an Inspect log, a
tau2-bench run, a Harbor job, a terminal-bench 1 run) and calls its reader, each of which
turns the producer's record of a run into a :class:`~passk.results.trajectory.Trajectory`
(its steps None where the producer records none passk can compare).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from passk.results.counts import ResultsError
from passk.results.trajectory import Trajectory

__all__ = ["OPTIONS", "TRAJECTORY_FORMATS", "read_trajectories"]


def _passk_log(path: Path, options: Mapping[str, Any]) -> list[Trajectory]:
    from passk.results.runlog import read_run_trajectories

    return read_run_trajectories(path)


def _inspect(path: Path, options: Mapping[str, Any]) -> list[Trajectory]:
    from passk.results.formats.inspect_log import read_inspect_trajectories

    return read_inspect_trajectories(path, **options)


def _tau2(path: Path, options: Mapping[str, Any]) -> list[Trajectory]:
    from passk.results.formats.tau2 import read_tau2_trajectories

    return read_tau2_trajectories(path)


def _harbor(path: Path, options: Mapping[str, Any]) -> list[Trajectory]:
    from passk.results.atif import read_harbor_trajectories

    return read_harbor_trajectories(path, **options)


def _terminal_bench(path: Path, options: Mapping[str, Any]) -> list[Trajectory]:
    """terminal-bench 1 (``tb run``) records no tool calls passk can compare (its
    ``agent-logs/`` are each agent's own, its ``sessions/`` terminal recordings): each trial
    is a run without a trajectory, its outcome as :func:`read_results` counts it, so that
    every flaky task says why no divergence can be found. (terminal-bench 2 runs on Harbor.)"""
    from passk.results.read import read_results

    counts = read_results(path, "terminal-bench")
    out = []
    for task, passed, total in zip(counts.task_ids, counts.successes.tolist(),
                                   counts.totals.tolist()):
        out += [Trajectory(task, f"trial {i}", i < passed) for i in range(total)]
    return out


#: The options each producer's reader takes (any other is refused, naming it).
OPTIONS: dict[str, frozenset[str]] = {
    "jsonl": frozenset(), "tau2": frozenset(),
    "inspect": frozenset({"scorer", "success_values", "success_threshold", "score_key",
                          "errors"}),
    "harbor": frozenset({"eval_key", "score_key", "success_threshold",
                         "count_errors_as_failures"}),
    "terminal-bench": frozenset(),
}

#: The producers whose trajectories passk reads, each with its reader.
TRAJECTORY_FORMATS = {"jsonl": _passk_log, "inspect": _inspect, "tau2": _tau2,
                      "harbor": _harbor, "terminal-bench": _terminal_bench}


def _detect(path: Path) -> str:
    from passk.results.formats import harbor, inspect_log, tau2, terminal_bench

    if path.is_dir():
        if tau2.sniff_dir(path):
            return "tau2"
        if harbor.sniff_dir(path):
            return "harbor"
        if terminal_bench.sniff_dir(path):
            return "terminal-bench"
    elif path.suffix.lower() in (".jsonl", ".ndjson"):
        return "jsonl"
    elif path.suffix.lower() == ".eval" or inspect_log.sniff_file(path):
        return "inspect"
    elif path.suffix.lower() == ".json":
        from passk.results.formats._shared import load_json

        data = load_json(path)
        if inspect_log.sniff(data, path):
            return "inspect"
        if tau2.sniff(data, path):
            return "tau2"
        if harbor.sniff(data, path):
            return "harbor"
        if terminal_bench.sniff(data, path):
            return "terminal-bench"
    raise ResultsError(path, None, "passk reads trajectories from passk run's log (.jsonl), "
                       "Inspect logs (.eval, .json), tau2-bench runs (results.json or its "
                       "directory) and Harbor jobs (terminal-bench 2: the job directory, its "
                       "agent/trajectory.json files); this is none of them (pass --format to "
                       "say which)")


def read_trajectories(path: str | os.PathLike[str], *, format: str | None = None,
                      **options: Any) -> list[Trajectory]:
    """Every run a file records, as :class:`Trajectory` s (steps None where not recorded).

    Parameters
    ----------
    path : path
        A ``passk run`` log, an Inspect log (``.eval`` or ``.json``), a tau2-bench run, a
        Harbor job (terminal-bench 2), or a terminal-bench 1 run (its trials without
        trajectories: terminal-bench 1 records none passk can compare).
    format : {'jsonl', 'inspect', 'tau2', 'harbor', 'terminal-bench'}, optional
        Detected from the file when not given.
    **options
        For Inspect: ``scorer``, ``success_values``, ``success_threshold``, ``score_key``
        (as :func:`passk.results.formats.inspect_log.read_inspect` takes them). For Harbor:
        ``eval_key``, ``score_key``, ``success_threshold``
        (as :func:`passk.results.formats.harbor.read_harbor` takes them).

    Raises
    ------
    ResultsError
        For a file passk cannot read, naming the file, the record and the field.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "log.jsonl"
    >>> _ = p.write_text('{"task_id": "a", "trial": 0, "success": true, '
    ...                  '"trajectory": [{"tool": "q", "argument": "x", "observation": "1"}]}\\n')
    >>> [str(s) for s in read_trajectories(p)[0].steps]
    ['q(x) -> 1']
    """
    p = Path(path)
    if not p.exists():
        raise ResultsError(p, None, "no such file or directory")
    chosen = format or _detect(p)
    if chosen not in TRAJECTORY_FORMATS:
        raise ResultsError(p, None, f"--format {chosen!r}: passk reads trajectories in "
                           f"{', '.join(TRAJECTORY_FORMATS)}")
    foreign = sorted(set(options) - OPTIONS[chosen])
    if foreign:
        takes = ", ".join(sorted(OPTIONS[chosen])) or "none"
        named = ", ".join(f"{k} (--{k.replace('_', '-')})" for k in foreign)
        raise ResultsError(p, None, f"{named}: not an option for a {chosen} file (its "
                           f"options: {takes})")
    return TRAJECTORY_FORMATS[chosen](p, options)


