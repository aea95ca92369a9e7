"""Runs and per-task counts: the data every reader returns, and the one place that counts.

:class:`Run` is one run as a reader found it, :class:`Results` the per-task
counts, and :func:`tally_runs` turns located runs into counts with one rule for
a repeated (task, trial) in every format. :class:`ResultsError` is a results
file that cannot be read, naming the file and the record. This module imports
no reader, so every reader (:mod:`passk.results.formats`) and :mod:`passk.results.read` build on
it without importing each other.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import numpy as np

from passk._public import publish
from passk.errors import BadInput, PasskError
from passk.results.protocol import Protocol

__all__ = [
    "CACHED_RESULTS",
    "DUPLICATES",
    "INFRASTRUCTURE_ERRORS",
    "POOLED_UNVERIFIED",
    "Results",
    "ResultsError",
    "Run",
    "RunIds",
    "Source",
    "check_duplicates_option",
    "combine_trials",
    "declared_tasks",
    "results_from_runs",
    "shown_run_id",
    "tally_runs",
    "with_notes",
    "with_overrides",
    "with_unrun_tasks",
]

#: What to do with a repeated (task, trial): refuse the file, keep the first, keep the last.
DUPLICATES = ("error", "first", "last")

#: Why runs were left out, as ``Results.excluded_reason`` names it.
INFRASTRUCTURE_ERRORS = "infrastructure errors"
CACHED_RESULTS = "cached results"
_UNLABELLED = "infrastructure errors or cached results"  # a Run(excluded=True) without a label


_T = TypeVar("_T")


class RunIds(AbstractSet[tuple[str, ...]]):
    """Run identities made when first asked for: a set that is a ``frozenset`` in use.

    A reader that has checked its records' identities in bulk (a ``passk run``
    log: every (task, seed, attempt) distinct) keeps the columns they come from
    and makes the tuples only when something compares them (combining files,
    ``--json``'s sources): a report on one file never does. Its size is known
    without making them.

    Parameters
    ----------
    make : callable
        Returns the identities, once.
    size : int
        How many there are (``len(make())``).

    Examples
    --------
    >>> ids = RunIds(lambda: frozenset({("run", "a")}), 1)
    >>> len(ids), ("run", "a") in ids, ids == frozenset({("run", "a")})
    (1, True, True)
    >>> frozenset({("run", "a"), ("run", "b")}) & ids
    frozenset({('run', 'a')})
    """

    __slots__ = ("_ids", "_make", "_size")

    def __init__(self, make: Callable[[], frozenset[tuple[str, ...]]], size: int) -> None:
        self._make = make
        self._ids: frozenset[tuple[str, ...]] | None = None
        self._size = size

    def _made(self) -> frozenset[tuple[str, ...]]:
        if self._ids is None:
            self._ids = self._make()
        return self._ids

    def __contains__(self, item: object) -> bool:
        return item in self._made()

    def __iter__(self) -> Iterator[tuple[str, ...]]:
        return iter(self._made())

    def __len__(self) -> int:
        return self._size

    def __hash__(self) -> int:
        return hash(self._made())

    def __repr__(self) -> str:
        return f"RunIds({self._size} run ids)"

    @classmethod
    def _from_iterable(cls, it: Iterable[_T]) -> frozenset[_T]:
        return frozenset(it)  # what &, |, - give: a plain frozenset


class ResultsError(PasskError, ValueError):
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


ResultsError.__module__ = "passk.results"  # where users catch it (tracebacks name it so)

@dataclass(frozen=True, slots=True)
class Run:
    """One run as read from a file.

    ``excluded`` runs are not evidence about the agent (an infrastructure
    error, a cached result, an errored sample); ``excluded_as`` names their
    kind in the plural, as reasons print it (e.g. ``"infrastructure errors"``).
    ``run_id`` is the producer's own identity of the run, as values (what it
    is first, e.g. ``("tau2 simulation", id, trial)``), or None where the
    producer records none: two files holding a run of the same id hold the
    same run (see :func:`check_distinct_evidence`).
    """

    task_id: str
    success: bool
    trial: int | None = None
    risk: str | None = None
    excluded: bool = False
    excluded_as: str = ""
    run_id: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Source:
    """One source of evidence, and what makes it that evidence and no other.

    Two sources with the same content, the same producer's run id, or a
    record of the same (task, seed, attempt) are the same evidence twice;
    two sources whose ``evaluation`` differs in a field are different
    evaluations (another model, other task arguments), not trials of one.
    :func:`combine_trials` refuses both.

    Attributes
    ----------
    path : str
        The file or directory, as given.
    sha256 : str
        The SHA-256 of its bytes (of a directory: of its files' names and bytes).
    producer : str
        The format it was read as (``Results.source``).
    run_ids : tuple of (str, str)
        The producer's own ids, each with what it is: ``("Inspect eval_id", "...")``,
        ``("passk run seed", "3")``.
    evaluation : tuple of (str, str)
        What defines "the same evaluation" where the file records it: the
        model, its roles, the task and its arguments, the solver plan, the
        generate config, the dataset and its sample ids, the protocol.
    trials : set of tuple of str
        Every record's run identity (:attr:`Run.run_id`), where the producer
        records one: compared as values, so a copy re-serialized (keys sorted,
        records reversed, seeds written as floats) holds the same ids. A
        ``frozenset``, or a :class:`RunIds` (made when first compared).
    identified : bool
        Whether every record of the source has a run identity; records
        without one cannot be told apart from a copy, so they are not combined
        with another file's unless pooled on purpose (``pool_unverified_runs``).
    """

    path: str
    sha256: str
    producer: str
    run_ids: tuple[tuple[str, str], ...] = ()
    evaluation: tuple[tuple[str, str], ...] = ()
    trials: AbstractSet[tuple[str, ...]] = frozenset()
    identified: bool = False


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
    settled_early : dict of str to int
        Tasks whose remaining runs a curtailed protocol did not make because no
        outcome of them could change the gate's decision, each with its runs
        **planned** (one meaning for every producer: a ``passk run`` log's settled
        records, the pytest plugin, an Inspect log written with
        ``passk.integrations.inspect.Curtailment``, whose metadata records the epochs scored).
    suite : str
        The evaluation's name where the file records one (an Inspect log's
        task), so that several files read as one suite can be checked to match.
    never_ran : tuple of str
        Tasks the file's own plan lists that have no record at all (an Inspect
        log's selected samples that never ran); ``passk plan`` counts them.
    sources : tuple of Source
        Where the evidence came from, one per file read (empty for runs built
        in memory); see :class:`Source`.
    overrides : tuple of str
        One phrase for each reader option in effect that changes what counts
        (``"--success-value I counted as a success"``, ``"errored samples
        excluded (--errors exclude)"``, ``"runs pooled across files without
        verified run ids (--pool-unverified-runs)"``, ...), in the order they
        were applied; a verdict names every one. Empty when the file was read
        by the producer's own rules.
    run_ids : set of tuple of str
        Every record's run identity (:attr:`Run.run_id`) where the producer
        records one: a ``frozenset``, or a :class:`RunIds` (made when first compared).
    unidentified : int
        Records without a run identity.
    recorded_k : tuple of (int, str), optional
        The k the producer's own evaluation records, and where (an Inspect log's
        ``mean_pass_hat_k`` metric, ``pass_k`` or ``pass_at`` reducer): the default
        k when none is asked for, declared or the policy's
        (:func:`passk.gate.bind.bind`), said on stderr.
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
    settled_early: Mapping[str, int] = field(default_factory=dict)
    suite: str = ""
    never_ran: tuple[str, ...] = ()
    sources: tuple[Source, ...] = ()
    overrides: tuple[str, ...] = ()
    run_ids: AbstractSet[tuple[str, ...]] = frozenset()
    unidentified: int = 0
    recorded_k: tuple[int, str] | None = None

    def __len__(self) -> int:
        return len(self.task_ids)


# --------------------------------------------------------------------------
# runs into counts: the one place, with one rule for duplicates
# --------------------------------------------------------------------------


def _at(where: int | str) -> str:
    return f"on line {where}" if isinstance(where, int) else f"at {where}"


def _named(where: int | str) -> str:
    return f"line {where}" if isinstance(where, int) else str(where)


def check_duplicates_option(duplicates: str) -> None:
    """Refuse a ``duplicates`` rule that is not one of :data:`DUPLICATES`, naming it."""
    if duplicates not in DUPLICATES:
        raise BadInput(f"duplicates ({duplicates!r}) must be one of {', '.join(DUPLICATES)}")


def dedupe(located: Iterable[tuple[int | str, Run]], path: Any, duplicates: str,
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


def shown_run_id(run_id: tuple[str, ...]) -> str:
    """A run identity as messages print it: ``tau2 simulation 'ab12' trial 0``."""
    what, *values = run_id
    return " ".join([what, *(_short(v) for v in values)])


def _identified(located: Iterable[tuple[int | str, Run]], path: Any, check: bool,
                ids: set[tuple[str, ...]], unidentified: list[int]
                ) -> Iterator[tuple[int | str, Run]]:
    """Collect every record's run id; a counted run id seen twice in one file is an error."""
    seen: dict[tuple[str, ...], int | str] = {}
    trials: set[tuple[str, int]] = set()
    for where, run in located:
        # a repeated (task, trial) follows the duplicates rule (dedupe), which names it
        repeated = False
        if run.trial is not None and not run.excluded:
            repeated = (run.task_id, run.trial) in trials
            trials.add((run.task_id, run.trial))
        if run.run_id is None:
            unidentified[0] += 1
        else:
            if check and not run.excluded and not repeated:
                if run.run_id in seen:
                    raise ResultsError(path, where, f"run {shown_run_id(run.run_id)} already "
                                       f"appears {_at(seen[run.run_id])}: one run counts once")
                seen[run.run_id] = where
            ids.add(run.run_id)
        yield where, run


def _one_risk(located: Iterable[tuple[int | str, Run]], path: Any
              ) -> Iterator[tuple[int | str, Run]]:
    """Refuse a task whose records give it two risk tiers (a record with none says nothing):
    a task's tier decides the runs it needs, so the records may not choose it run by run."""
    first: dict[str, tuple[str, int | str]] = {}
    for where, run in located:
        if run.risk:
            seen = first.setdefault(run.task_id, (run.risk, where))
            if seen[0] != run.risk:
                raise ResultsError(path, where, f"field 'risk': task {run.task_id!r:.60} is "
                                   f"{run.risk!r:.40} here but {seen[0]!r:.40} {_at(seen[1])}: "
                                   "one task has one risk tier; the records were edited, or "
                                   "mix two runs")
        yield where, run


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
    check_duplicates_option(duplicates)
    order: dict[str, int] = {t: i for i, t in enumerate(dict.fromkeys(task_ids))}
    labels = ["read-only"] * len(order)
    index: list[int] = []
    success: list[bool] = []
    excluded: list[bool] = []
    trial_keys: set[tuple[int, Any]] = set()
    untrialled = [0] * len(order)
    reasons: list[str] = []
    dropped: list[int | str] = []
    ids: set[tuple[str, ...]] = set()
    unidentified = [0]
    runs = _identified(_one_risk(runs, path), path, duplicates == "error", ids, unidentified)
    for run in dedupe(runs, path, duplicates, dropped):
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
    results = tally_arrays(tuple(order), np.asarray(index, dtype=np.int64),
                     np.asarray(success, dtype=bool), np.asarray(excluded, dtype=bool),
                     tuple(labels), source, protocol, _reason(reasons))
    gaps: tuple[str, ...] = ()
    if protocol is not None:
        distinct = np.asarray(untrialled, dtype=np.int64)
        if trial_keys:
            distinct += np.bincount(np.fromiter((i for i, _ in trial_keys), dtype=np.int64,
                                                count=len(trial_keys)), minlength=m)
        most = np.zeros(m, dtype=np.int64)  # each task's highest trial + 1
        for i, trial in trial_keys:
            if isinstance(trial, int) and trial >= most[i]:
                most[i] = trial + 1
        gaps = plan_gaps(protocol, results.task_ids, results.risks, distinct, most)
    overrides = ((f"duplicate records dropped, keeping the {duplicates} of each "
                  f"(--duplicates {duplicates})"),) if dropped else ()
    results = replace(results, run_ids=frozenset(ids), unidentified=unidentified[0],
                      overrides=overrides)
    return with_notes(results, all_notes, gaps)


def with_notes(results: Results, notes: Iterable[str] = (),
               incomplete: Iterable[str] = ()) -> Results:
    """``results`` with more notes, and incomplete-run sentences added to both fields."""
    incomplete = tuple(incomplete)
    return replace(results, notes=results.notes + tuple(notes) + incomplete,
                   incomplete=results.incomplete + incomplete)


def with_overrides(results: Results, *phrases: str) -> Results:
    """``results`` with more override phrases (each kept once, in order).

    Examples
    --------
    >>> r = with_overrides(results_from_runs([Run("a", True)]), "--scorer lenient")
    >>> r.overrides
    ('--scorer lenient',)
    """
    return replace(results, overrides=tuple(dict.fromkeys((*results.overrides, *phrases))))


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


def tally_arrays(task_ids: tuple[str, ...], index: np.ndarray, ok: np.ndarray, out: np.ndarray,
           risks: tuple[str, ...], source: str, protocol: Protocol | None = None,
           excluded_reason: str = "") -> Results:
    """Per-task counts from per-run arrays: task index, success, and left out."""
    m = len(task_ids)
    some_out = bool(out.any())
    counted = index[~out] if some_out else index
    return Results(
        task_ids=task_ids,
        successes=np.bincount(index[ok & ~out] if some_out else index[ok],
                              minlength=m).astype(np.int64),
        totals=np.bincount(counted, minlength=m).astype(np.int64),
        excluded=(np.bincount(index[out], minlength=m).astype(np.int64) if some_out
                  else np.zeros(m, dtype=np.int64)),
        risks=risks,
        source=source,
        protocol=protocol,
        excluded_reason=excluded_reason if out.any() else "",
    )


def declared_tasks(protocol: Protocol | None) -> dict[str, str | None]:
    """The tasks a protocol declares, each with its risk where the protocol records it.

    ``passk run`` lists ``tasks``; the pytest plugin lists ``tests`` with their
    runs, k and risk. Other protocols declare none.
    """
    if protocol is None:
        return {}
    s = protocol.settings
    if isinstance(s.get("tasks"), list):
        return {str(t): None for t in s["tasks"]}
    if isinstance(s.get("tests"), Mapping):
        return {str(t): (v.get("risk") if isinstance(v, Mapping) else None)
                for t, v in s["tests"].items()}
    return {}


def with_unrun_tasks(results: Results, tasks: Mapping[str, str | None] | Sequence[str]
                     ) -> Results:
    """``results`` with each of ``tasks`` it lacks added with no runs.

    A log is its whole protocol: a task the protocol declares but no record
    names (settled before its first run, or never reached) is still a task of
    the suite, and a gate fails closed on it (no runs, no evidence).

    Examples
    --------
    >>> r = with_unrun_tasks(results_from_runs([Run("a", True)]), ["a", "b"])
    >>> r.task_ids, r.totals.tolist()
    (('a', 'b'), [1, 0])
    """
    risk_of = dict(tasks) if isinstance(tasks, Mapping) else dict.fromkeys(tasks)
    have = set(results.task_ids)
    never = [t for t in risk_of if t not in have]
    if not never:
        return results
    zeros = np.zeros(len(never), dtype=np.int64)
    return replace(results, task_ids=results.task_ids + tuple(never),
                   successes=np.concatenate([results.successes, zeros]),
                   totals=np.concatenate([results.totals, zeros]),
                   excluded=np.concatenate([results.excluded, zeros]),
                   risks=results.risks + tuple(risk_of[t] or "read-only" for t in never),
                   never_ran=tuple(t for t in results.never_ran if t not in risk_of))


#: How a curtailed log's reader says it is short of its plan until a replay settles it.
CURTAILED_UNREPLAYED = "the log is short of its protocol's curtailed plan"


def plan_gaps(protocol: Protocol, task_ids: Sequence[str], risks: Sequence[str],
               runs: np.ndarray, most: np.ndarray | None = None) -> tuple[str, ...]:
    """Where a ``passk run`` log falls short of its protocol's plan.

    The plan is the protocol's task list and ``runs_by_risk`` (``default_runs``
    for other labels), or the pytest plugin's ``tests`` with their runs; a task
    flagged previously flaky may be planned more, so this is a lower bound and
    never reports a complete log as short. ``runs`` counts each task's distinct
    trials, counted or left out; ``most``, each task's highest trial + 1: a task with a
    trial beyond its risk's runs was planned ``previously_flaky_runs``. A curtailed log is short of
    its plan wherever a
    task stopped early, until :func:`passk.run.runner.results_of_replayed_log`
    replays its records and shows that the settle rule stopped it: its ``settled``
    records are claims, not evidence.
    """
    s = protocol.settings
    planned_tasks, by_risk, default = s.get("tasks"), s.get("runs_by_risk"), s.get("default_runs")
    tests = s.get("tests")
    if _fixed_plan_met(s, task_ids, risks, runs, most):
        return ()
    have = dict(zip(task_ids, runs.tolist()))
    risk_of = dict(zip(task_ids, risks))
    if s.get("stopping") == "curtailed" and isinstance(tests, Mapping):  # the pytest plugin's
        plan = {str(t): v.get("runs") if isinstance(v, Mapping) else None
                for t, v in tests.items()}
    elif (s.get("stopping") not in ("fixed", "curtailed") or not isinstance(planned_tasks, list)
            or not isinstance(by_risk, Mapping) or not isinstance(default, int)):
        return ()
    else:
        plan = {str(t): by_risk.get(risk_of.get(str(t)), default) for t in planned_tasks}
        flagged = s.get("previously_flaky_runs")
        beyond = dict(zip(task_ids, most.tolist())) if most is not None else {}
        for t, n in plan.items():
            if isinstance(flagged, int) and isinstance(n, int) and beyond.get(t, 0) > n:
                plan[t] = max(n, flagged)  # a run beyond its tier's: the task was flagged
    missing = [t for t in plan if t not in have]
    short = []
    for t, n in plan.items():
        if t in have and isinstance(n, int) and have[t] < n:
            short.append(f"{t}: {have[t]} of {n}")
    parts = []
    if missing:
        shown = ", ".join(missing[:10]) + (f", and {len(missing) - 10} more"
                                           if len(missing) > 10 else "")
        verb = "has" if len(missing) == 1 else "have"
        parts.append(f"{len(missing)} of its {len(plan)} tasks {verb} no runs ({shown})")
    if short:
        shown = "; ".join(short[:10]) + (f"; and {len(short) - 10} more" if len(short) > 10
                                         else "")
        tasks = "1 task has" if len(short) == 1 else f"{len(short)} tasks have"
        parts.append(f"{tasks} fewer runs than planned ({shown})")
    if not parts:
        return ()
    if s.get("stopping") == "curtailed":  # settled tasks are shown by a replay, not by a record
        return (f"{CURTAILED_UNREPLAYED}, and no replay of its records through the scheduler "
                "has shown those tasks settled (passk gate and passk report replay it; in "
                "Python, passk.run.runner.results_of_replayed_log): " + "; ".join(parts),)
    if s.get("stop_early"):  # the sequential rule stopped the suite: no resume can finish it
        return ("the log is short of its protocol's fixed plan, and its records do not show "
                "the early stop (--stop-early) its protocol declares (a record removed? "
                "--resume makes the runs they lack): " + "; ".join(parts),)
    return ("the log is short of its protocol's fixed plan (an interrupted passk run? "
            "--resume finishes it): " + "; ".join(parts),)




def _fixed_plan_met(s: Mapping[str, Any], task_ids: Sequence[str], risks: Sequence[str],
                    runs: np.ndarray, most: np.ndarray | None) -> bool:
    """Whether every task of a ``passk run`` protocol's plan has its runs, decided over arrays
    (the plan's tasks are the tasks read, each planned ``runs_by_risk`` of its risk, or
    ``previously_flaky_runs`` beyond it). False also where this does not decide: then
    :func:`plan_gaps` looks task by task, and names them."""
    planned, by_risk, default = s.get("tasks"), s.get("runs_by_risk"), s.get("default_runs")
    flagged = s.get("previously_flaky_runs")
    if (s.get("stopping") not in ("fixed", "curtailed") or not isinstance(planned, list)
            or not isinstance(by_risk, Mapping) or type(default) is not int
            or (s.get("stopping") == "curtailed" and isinstance(s.get("tests"), Mapping))
            or isinstance(flagged, bool) or len(planned) != len(task_ids)):
        return False
    if set(map(str, planned)) != set(task_ids):
        return False  # also for a task listed twice
    of_risk = {risk: by_risk.get(risk, default) for risk in set(risks)}
    if any(type(n) is not int for n in of_risk.values()):
        return False
    order = {risk: i for i, risk in enumerate(of_risk)}
    try:
        n = np.array(list(of_risk.values()), dtype=np.int64)[
            np.fromiter(map(order.__getitem__, risks), dtype=np.intp, count=len(risks))]
        if isinstance(flagged, int) and most is not None:
            n = np.where(most > n, np.maximum(n, np.int64(flagged)), n)
    except OverflowError:
        return False
    return bool(np.all(runs >= n))


def _listed(items: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f", and {len(items) - limit} more" if len(items) > limit else "")


def _short(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit - 1] + "…")


#: The override phrase of files pooled without verified run ids.
POOLED_UNVERIFIED = ("runs pooled across files without verified run ids: not verified distinct "
                     "(--pool-unverified-runs)")


def check_distinct_evidence(parts: Sequence[tuple[str, Results]], *,
                            pool_evaluations: bool = False,
                            pool_unverified_runs: bool = False) -> tuple[str, ...]:
    """Refuse the same evidence twice, and different evaluations read as trials of one.

    Each part is compared with every earlier part: the same content
    (SHA-256), the same producer's run id of the whole file (an Inspect
    ``eval_id``, a ``passk run`` seed), or a record of the same run identity
    (:attr:`Run.run_id`, compared as values: a copy however re-serialized, or
    a file's own first half) is the same evidence counted twice; a field of
    ``evaluation`` that both record with different values (the model, the
    task's arguments, ...) makes them different evaluations. A file whose
    records have no run identity (plain JSON Lines, CSV, tau-bench) cannot be
    told from a copy, so it is not combined with another unless
    ``pool_unverified_runs``. Returns the notes that say what was pooled.

    Raises
    ------
    ResultsError
        Naming the later file, the earlier one, and what is repeated or differs.
    """
    pooled: dict[str, list[str]] = {}
    earlier: list[tuple[str, Results]] = []
    for label, r in parts:
        for other_label, other_r in earlier:
            pairs = [(src, other) for src in r.sources for other in other_r.sources]
            for src, other in pairs:
                if src.sha256 == other.sha256:
                    raise ResultsError(label, None, f"has the same content as {other_label} "
                                       f"(SHA-256 {src.sha256[:12]}): a copy is not new runs")
                shared = set(src.run_ids) & set(other.run_ids)
                if shared:
                    what, rid = min(shared)
                    raise ResultsError(label, None, f"is the same run as {other_label} ({what} "
                                       f"{_short(rid)[1:-1]}): one run's outcomes count once")
            twice = r.run_ids & other_r.run_ids
            if twice:
                raise ResultsError(label, None, f"holds run {shown_run_id(min(twice))}, which "
                                   f"{other_label} holds too: the same run counted twice "
                                   f"({len(twice)} such records)")
            for src, other in pairs:
                if not (src.identified and other.identified) and not pool_unverified_runs:
                    which, whose = ((label, src) if not src.identified else (other_label, other))
                    raise ResultsError(label, None, f"cannot be combined with {other_label}: "
                                       f"{which} records no run ids ({whose.producer} records "
                                       "name no run of their own), so a copy or a part of "
                                       "the other cannot be told from new runs "
                                       "(--pool-unverified-runs pools them on purpose, and "
                                       "the verdict says so)")
                mine, theirs = dict(src.evaluation), dict(other.evaluation)
                for name in sorted(set(mine) & set(theirs)):
                    if mine[name] == theirs[name]:
                        continue
                    if not pool_evaluations:
                        raise ResultsError(label, None, f"is an evaluation with {name} "
                                           f"{_short(mine[name])} but {other_label} with "
                                           f"{_short(theirs[name])}: not trials of one evaluation "
                                           "(--pool-evaluations pools them on purpose)")
                    pooled.setdefault(name, [])
                    for value in (theirs[name], mine[name]):
                        if value not in pooled[name]:
                            pooled[name].append(value)
        earlier.append((label, r))
    return tuple(f"evaluations pooled on purpose (--pool-evaluations): {name} "
                 + ", ".join(_short(v) for v in values) for name, values in pooled.items())


def _unverified(parts: Sequence[tuple[str, Results]]) -> bool:
    return any(not src.identified for _, r in parts for src in r.sources)


def _one_risk_across(parts: Sequence[tuple[str, Results]]) -> None:
    """Refuse files that give one task two risk tiers (a file with no record of a task
    gives it only the default label, so it says nothing)."""
    first: dict[str, tuple[str, str]] = {}
    for label, r in parts:
        for t, risk, n in zip(r.task_ids, r.risks, (r.totals + r.excluded).tolist(),
                              strict=True):
            if not n:
                continue
            risk0, label0 = first.setdefault(t, (risk, label))
            if risk0 != risk:
                raise ResultsError(label, None, f"gives task {t!r:.60} risk {risk!r:.40} but "
                                   f"{label0} gives it {risk0!r:.40}: one task has one risk "
                                   "tier; the files were edited, or mix two runs")


def combine_trials(parts: Sequence[tuple[str, Results]], *, path: str | os.PathLike[str],
                   what: str = "files", pool_evaluations: bool = False,
                   pool_unverified_runs: bool = False) -> Results:
    """Several results of one suite read as its trials: each task's counts added up.

    People re-run an evaluation (an Inspect task with ``epochs=1``, a
    terminal-bench run) and keep one file a run; together they are the
    suite's repeats. The parts must hold the same tasks, come from the same
    format and evaluation (``Results.suite``, and each :class:`Source`'s
    ``evaluation``), and record the same protocol (or none); otherwise the
    error names the part and what differs. The same evidence twice (a copy,
    the same run, a repeated (task, seed, attempt)) is refused: see
    :func:`check_distinct_evidence`.

    Parameters
    ----------
    parts : sequence of (label, Results)
        Each part with the name it is reported by (its file).
    path : str or PathLike
        What the parts make up together, for messages.
    what : str
        What the parts are, in the plural, for the note.
    pool_evaluations : bool, default False
        Read parts of different evaluations (another model, other task
        arguments) as trials of one suite anyway; the notes and
        ``overrides`` say what was pooled.
    pool_unverified_runs : bool, default False
        Combine files whose records have no run identity anyway; ``overrides``
        then says the runs were not verified distinct.

    Returns
    -------
    Results
        Each part's ``overrides`` kept (once each), with the pooling's own.

    Examples
    --------
    >>> a = results_from_runs([Run("x", True), Run("y", False)])
    >>> b = results_from_runs([Run("x", True), Run("y", True)])
    >>> both = combine_trials([("a.jsonl", a), ("b.jsonl", b)], path="a.jsonl + b.jsonl")
    >>> both.successes.tolist(), both.totals.tolist()
    ([2, 1], [2, 2])
    """
    if not parts:
        raise ResultsError(path, None, f"no {what} to read")
    if len(parts) == 1:
        return parts[0][1]
    first_label, first = parts[0]
    tasks = first.task_ids
    known = set(tasks)
    for label, r in parts[1:]:
        if r.source != first.source:
            raise ResultsError(label, None, f"is {r.source} results but {first_label} is "
                               f"{first.source}: the {what} of one suite come from one format")
        if r.suite != first.suite:
            raise ResultsError(label, None, f"is an evaluation of {r.suite or 'an unnamed task'!r} "
                               f"but {first_label} of {first.suite or 'an unnamed task'!r}: "
                               "not trials of one suite")
        mine = set(r.task_ids)
        if mine != known:
            missing = [t for t in tasks if t not in mine]
            extra = [t for t in r.task_ids if t not in known]
            said = []
            if missing:
                said.append(f"lacks {len(missing)} of {first_label}'s tasks ({_listed(missing)})")
            if extra:
                said.append(f"has {len(extra)} tasks {first_label} has not ({_listed(extra)})")
            raise ResultsError(label, None, f"{' and '.join(said)}: the {what} of one suite "
                               "must hold the same tasks")
        fp = None if r.protocol is None else r.protocol.fingerprint
        first_fp = None if first.protocol is None else first.protocol.fingerprint
        if fp != first_fp:
            raise ResultsError(label, None, f"records protocol {fp or 'none'} but {first_label} "
                               f"records {first_fp or 'none'}: trials of one suite are measured "
                               "under one protocol")
    _one_risk_across(parts)
    pooled = check_distinct_evidence(parts, pool_evaluations=pool_evaluations,
                                     pool_unverified_runs=pool_unverified_runs)
    overrides = [o for _, r in parts for o in r.overrides]
    if pooled:
        overrides.append("evaluations pooled (--pool-evaluations)")
    if _unverified(parts):
        overrides.append(POOLED_UNVERIFIED)
    m = len(tasks)
    successes = np.zeros(m, dtype=np.int64)
    totals = np.zeros(m, dtype=np.int64)
    excluded = np.zeros(m, dtype=np.int64)
    settled: dict[str, int] = {}
    notes = [f"{len(parts)} {what} read as trials of one suite: "
             + _listed([f"{label} ({int(r.totals.sum())} runs)" for label, r in parts], 10)]
    incomplete: list[str] = []
    reasons: list[str] = []
    for label, r in parts:
        order = {t: i for i, t in enumerate(r.task_ids)}
        at = np.fromiter((order[t] for t in tasks), dtype=np.int64, count=m)
        successes += r.successes[at]
        totals += r.totals[at]
        excluded += r.excluded[at]
        for t, n in r.settled_early.items():
            settled[t] = settled.get(t, 0) + n
        notes += [f"{label}: {note}" for note in r.notes if note not in r.incomplete]
        incomplete += [f"{label}: {why}" for why in r.incomplete]
        if r.excluded_reason:
            reasons += r.excluded_reason.split(" or ")
    combined = Results(task_ids=tasks, successes=successes, totals=totals, excluded=excluded,
                       risks=first.risks, source=first.source, protocol=first.protocol,
                       excluded_reason=" or ".join(dict.fromkeys(reasons)),
                       settled_early=settled, suite=first.suite,
                       never_ran=tuple(dict.fromkeys(t for _, r in parts for t in r.never_ran
                                                     if t not in known)),
                       sources=tuple(src for _, r in parts for src in r.sources),
                       overrides=tuple(dict.fromkeys(overrides)),
                       run_ids=frozenset().union(*(r.run_ids for _, r in parts)),
                       unidentified=sum(r.unidentified for _, r in parts))
    return with_notes(combined, [*notes, *pooled], incomplete)


publish(globals())  # the names passk.__all__ takes from here say 'passk' (passk._public)
