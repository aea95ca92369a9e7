"""Read run results from files, and write runs as the one run log.

:func:`read_results` reads every format :mod:`passk.results.formats` registers (JSON
Lines and CSV, tau-bench, tau2-bench, Inspect AI, terminal-bench), one file
or several files as the trials of one suite. :func:`write_runs` writes a
finished suite's runs as the run log ``passk run`` appends to, one
:class:`passk.results.runlog.RunRecord` a line, keeping each run's seed, attempt,
seconds and error.

The data types (:class:`Results`, :class:`Run`, :class:`ResultsError`,
:func:`tally_runs`) live in :mod:`passk.results` and the run log's parser in
:mod:`passk.results.runlog`; their names are importable from here as well. Every
problem is reported as a :class:`ResultsError` naming the file and the line,
never as a wrong number. What a reader could not count is said, never dropped
silently: runs left out (``Results.excluded``, and why in
``Results.excluded_reason``), records dropped as duplicates (``notes``), a
run that stopped short of its plan (``Results.incomplete``), and every reader
option in effect that changes what counts (``Results.overrides``). Several
files combine only when their runs are known to be distinct: each record's
run identity (the producer's own ids, compared as values) must not repeat,
and files whose records have none combine only on purpose
(``pool_unverified_runs``).
"""

from __future__ import annotations

import gc
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from passk._public import publish
from passk.errors import BadInput
from passk.render.words import plural
from passk.results.counts import (
    CACHED_RESULTS,
    DUPLICATES,
    INFRASTRUCTURE_ERRORS,
    Results,
    ResultsError,
    Run,
    check_duplicates_option,
    combine_trials,
    results_from_runs,
    tally_runs,
    with_notes,
    with_overrides,
)
from passk.results.evidence import source_of
from passk.results.formats import (
    FORMAT_NAMES,
    FORMATS,
    READER_OPTIONS,
    read_formatted,
    reject_options,
)
from passk.results.formats._shared import not_utf8
from passk.results.formats.jsonl_csv import read_csv_runs, read_jsonl_runs
from passk.results.ids import lookalike_note
from passk.results.protocol import Protocol
from passk.results.runlog import (
    RunLog,
    RunRecord,
    log_header_line,
    read_log_header,
    read_run_log,
    trajectory_field,
)

if TYPE_CHECKING:
    from passk.repeats import RepeatRun

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
    "RunRecord",
    "combine_trials",
    "log_header_line",
    "read_csv_runs",
    "read_jsonl_runs",
    "read_log_header",
    "read_results",
    "read_run_log",
    "reject_options",
    "results_from_runs",
    "run_records",
    "tally_runs",
    "with_notes",
    "write_runs",
]


def run_records(repeat_runs: Iterable[RepeatRun]) -> Iterator[RunRecord]:
    """Every attempt of every run as the run log's record, in order.

    A run's ``attempt`` counts the records of its (task, run index) before it:
    a retried infrastructure error is attempt 0, the run that followed it
    attempt 1, as ``passk run`` logs them.
    """
    attempts: Counter[tuple[str, int]] = Counter()
    for repeat_ in repeat_runs:
        for r in repeat_.results:
            key = (r.task_id, r.run_index)
            yield RunRecord(task_id=r.task_id, trial=r.run_index, success=bool(r.success),
                            attempt=attempts[key], seconds=float(r.seconds), error=r.error,
                            infrastructure_error=bool(r.infrastructure_error),
                            cached=bool(r.cached), seed=r.seed, risk=repeat_.task.risk,
                            trajectory=trajectory_field(r.trajectory))
            attempts[key] += 1


def write_runs(path: str | os.PathLike[str], repeat_runs: Iterable[RepeatRun], *,
               protocol: Protocol | None = None, seed: int | None = None) -> int:
    """Write runs as the run log, one :class:`~passk.results.runlog.RunRecord` a line; return the
    count.

    ``repeat_runs`` is what :func:`passk.evaluate_suite` keeps in ``report.runs``
    (or any :class:`~passk.repeats.RepeatRun` objects). Each line is the record
    ``passk run`` logs: ``task_id``, ``trial`` (the run index), ``success``,
    ``attempt``, ``seconds``, ``error``, ``infrastructure_error``, ``cached``,
    ``seed`` and ``risk``, so that ``passk report`` and ``passk gate`` read back
    exactly the counts the runs gave, and a failing run can be re-run from
    its line's seed.

    The file starts with the header line ``passk run`` writes
    (:func:`log_header_line` of ``protocol``, ``report.protocol``, with
    ``seed`` when given), so the file reads back with its protocol and the
    gate is bound by it: a log of seeded records without its header is
    refused as one whose header was deleted. With ``seed`` (the suite's), each
    record's seed is checked against the one it derives. Without
    ``protocol``, the header records only the task list (``{"tasks": [...]}``),
    so the log still declares what it holds.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> from passk import OnCallSimulator, demo_tasks, evaluate_suite
    >>> report = evaluate_suite(OnCallSimulator(), demo_tasks(), seed=3)
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "runs.jsonl"
    >>> write_runs(path, report.runs, protocol=report.protocol)
    22
    >>> back = read_results(path)
    >>> back.successes.tolist(), back.protocol == report.protocol
    ([10, 5, 5], True)
    >>> sorted(json.loads(path.read_text().splitlines()[1]))[:5]
    ['attempt', 'cached', 'error', 'infrastructure_error', 'risk']
    """
    count = 0
    repeat_runs = list(repeat_runs)
    if protocol is None:
        protocol = Protocol({"tasks": sorted({r.task.task_id for r in repeat_runs})})
    with open(path, "w", encoding="utf-8") as f:
        f.write(log_header_line(protocol, seed=seed) + "\n")
        for record in run_records(repeat_runs):
            f.write(record.to_json() + "\n")
            count += 1
    return count


def _read_one(path: str | os.PathLike[str], format: str, duplicates: str,
              options: dict[str, Any], *, trials: bool = False) -> Results:
    p = Path(path)
    if not p.exists():
        raise ResultsError(path, None, "no such file or directory")
    if p.is_file() and p.stat().st_size == 0:
        raise ResultsError(path, None, "is empty")
    try:
        results = read_formatted(p, format, duplicates=duplicates, **options)
        return replace(results, sources=(source_of(path, results, trials=trials),))
    except UnicodeDecodeError as exc:
        raise ResultsError(path, None, not_utf8(p, exc)) from None
    except RecursionError:
        raise ResultsError(path, None, "nested too deeply to read") from None


def read_results(path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
                 format: str = "auto", *, duplicates: str = "error",
                 pool_evaluations: bool = False, pool_unverified_runs: bool = False,
                 accept_incomplete: bool = False, **options: Any) -> Results:
    """Read a results file (or a run directory, or several files of one suite) into counts.

    Parameters
    ----------
    path : str or PathLike, or a sequence of them
        A file, a run directory (tau2-bench: ``results.json`` beside a
        ``simulations/`` folder; terminal-bench: a run's directory or a folder
        of them), or several files read as the trials of one suite (see
        :func:`passk.results.combine_trials`: they must hold the same tasks,
        come from one format and evaluation, and record one protocol; the
        same evidence twice, such as a copy or a log of the same seeds, is
        refused, compared by the producer's run ids as values: see
        :attr:`Run.run_id`; files whose records have none are refused unless
        ``pool_unverified_runs``).
    format : str, default "auto"
        One of :data:`FORMATS`. ``"auto"`` decides by extension (``.jsonl``,
        ``.ndjson``, ``.csv``, ``.eval``), for ``.json`` by content and for a
        directory by its layout (see :func:`passk.results.formats.detect_format`); the
        choice is in ``Results.source``.
    duplicates : {'error', 'first', 'last'}, default 'error'
        A repeated (task, trial), as a resumed tau-bench run leaves, is an
        error naming both records; ``'first'`` or ``'last'`` keeps one record of
        each and says in ``notes`` how many were dropped.
    pool_evaluations : bool, default False
        Read several files of different evaluations (another model, other
        task arguments) as trials of one suite anyway; ``notes`` say what was
        pooled. Without it they are refused.
    pool_unverified_runs : bool, default False
        Combine several files whose records carry no run identity (plain JSON
        Lines, CSV, tau-bench) anyway: nothing can tell their runs from a
        copy, so without it they are refused; with it ``Results.overrides``
        says the runs were not verified distinct.
    accept_incomplete : bool, default False
        The caller accepts an incomplete run; when the results are incomplete,
        ``Results.overrides`` says so (the caller decides what it allows).
    **options
        Reader options of Inspect logs: ``scorer``, ``success_values``,
        ``success_threshold``, ``score_key`` and ``errors`` (``"fail"``, the
        default: an errored sample epoch is a failure; ``"exclude"`` leaves it
        out, counted); of promptfoo evals ``errors`` (a row that ended in an
        error); of Harbor jobs ``eval_key``, ``score_key``, ``success_threshold``
        and ``count_errors_as_failures``; of lm-eval samples ``metric``,
        ``filter`` and ``success_threshold``. An option the
        format does not take is an error, never ignored. Each one in effect
        that changes what counts is named in ``Results.overrides``.

    Returns
    -------
    Results
        With ``incomplete`` naming a run that stopped short of its plan, and
        ``excluded_reason`` why runs were left out.

    Raises
    ------
    ResultsError
        For a missing file, a directory that is not a run directory, an empty
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
    with _collector_paused():
        return _read_results(path, format, duplicates=duplicates,
                             pool_evaluations=pool_evaluations,
                             pool_unverified_runs=pool_unverified_runs,
                             accept_incomplete=accept_incomplete, **options)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cycle collector off while a file is read, as ``passk`` (the CLI) runs, and back
    as it was: reading builds objects by the million and makes no reference cycles, so
    the collector would only rescan them (about half the time on 50,000 promptfoo rows)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _read_results(path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
                  format: str, *, duplicates: str, pool_evaluations: bool,
                  pool_unverified_runs: bool, accept_incomplete: bool,
                  **options: Any) -> Results:
    if format not in FORMATS:
        raise ResultsError(os.fspath(path) if isinstance(path, (str, os.PathLike)) else
                           " + ".join(os.fspath(p) for p in path), None,
                           f"unknown format {format!r}; supported formats: {', '.join(FORMATS)}")
    check_duplicates_option(duplicates)
    unknown = sorted(set(options) - set(READER_OPTIONS))
    if unknown:
        raise BadInput(f"unknown reader {plural(len(unknown), 'option', count=False)} "
                       f"{', '.join(map(repr, unknown))}; reader "
                         f"options are {', '.join(READER_OPTIONS)}")
    if isinstance(path, (str, os.PathLike)):
        return _accepted(_read_one(path, format, duplicates, options), accept_incomplete)
    paths = list(path)
    if not paths:
        raise BadInput("no results files given")
    seen: dict[str, str] = {}
    for p in paths:
        key = os.path.realpath(p)
        if key in seen:
            raise ResultsError(p, None, f"is given twice (also as {seen[key]}): one file is "
                               "one set of trials")
        seen[key] = os.fspath(p)
    parts = [(os.fspath(p), _read_one(p, format, duplicates, options, trials=True))
             for p in paths]
    return _accepted(combine_trials(parts, path=" + ".join(label for label, _ in parts),
                                    pool_evaluations=pool_evaluations,
                                    pool_unverified_runs=pool_unverified_runs),
                     accept_incomplete)


def _accepted(results: Results, accept_incomplete: bool) -> Results:
    if note := lookalike_note(results.task_ids):  # named wherever the results are shown
        results = with_notes(results, [note])
    if accept_incomplete and results.incomplete:
        return with_overrides(results, "an incomplete run accepted as complete "
                              "(--accept-incomplete)")
    return results


publish(globals())  # the names passk.__all__ takes from here say 'passk' (passk._public)
