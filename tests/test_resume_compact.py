"""Issue 41: ``run_suite(resume=True)`` keeps the replayed runs as compact columns, not a
``RunResult`` each, and gives what it gave before.

References: the replay it replaced (commit 1b5792d's ``passk/run/runner.py``, loaded from
git: a dict of ``RunResult``), and an uninterrupted run. Classes: records of every kind
(passed, failed, an error, an infrastructure error retried or given up, cached, seconds
written as a whole number, a seed missing or past 64 bits), records the replay skips (a
task not in the suite, a trial beyond the plan, a run already final), logs cut at every
point then resumed (sync, threads), and the sequence's own behaviour (equality with the
tuple both ways, indexing, slices, hash, len).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from old_code import old_module
from runner_helpers import coin, p_tasks

from passk import RunResult
from passk.run.runner import LogRecord, _Finished, _replay, _RunResults, run_suite
from passk.run.schedule import Schedule

OLD = "1b5792d"


@pytest.fixture(scope="module")
def old_runner():  # type: ignore[no-untyped-def]
    return old_module(OLD, "passk/run/runner.py", "_old_runner_41")


def _records(rng: random.Random, tasks: list[str], n: int) -> list[LogRecord]:
    out = []
    for _ in range(rng.randint(0, 120)):
        task = rng.choice([*tasks, "not-in-suite"])
        kind = rng.random()
        out.append(LogRecord(
            task, rng.randint(0, n + 1), rng.random() < 0.6, attempt=rng.randint(0, 3),
            seconds=rng.choice([0.25, 1e-5, 0, 3, 12.5]),
            error=rng.choice([None, None, "ValueError: boom", "caf\u00e9 \u4efb\u52a1"]),
            infrastructure_error=kind < 0.15, cached=0.15 <= kind < 0.25,
            seed=rng.choice([None, 0, 7, 2**63 + 5, 2**64 - 1, 2**64 + 3, 2**70, -1, True])))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_replay_equals_the_replaced_one(old_runner, seed: int) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(seed)
    tasks = [f"t{i}" for i in range(rng.randint(1, 6))]
    n = rng.randint(1, 6)
    records = _records(rng, tasks, n)
    plan = dict.fromkeys(tasks, n)
    new_schedule, old_schedule = Schedule(plan, max_retries=2), Schedule(plan, max_retries=2)
    new = _replay(new_schedule, records)
    old = old_runner._replay(old_schedule, records)
    want = tuple(sorted(old.values(), key=lambda r: (r.task_id, r.run_index)))
    got = new.ordered()
    assert len(new) == len(old) == len(got)
    assert got == want and want == got
    assert [(r.seconds, type(r.seconds), r.seed, type(r.seed)) for r in got] == \
        [(r.seconds, type(r.seconds), r.seed, type(r.seed)) for r in want]
    assert list(new_schedule.retry_queue) == list(old_schedule.retry_queue)
    assert new.failures() == sum(1 for r in old.values() if not r.success and r.counted)
    for t in tasks:
        a, b = new_schedule.states[t], old_schedule.states[t]
        assert (a.final, a.started, a.successes, a.failures, a.cached, a.gave_up, a.retries) \
            == (b.final, b.started, b.successes, b.failures, b.cached, b.gave_up, b.retries)


def test_fresh_runs_take_the_place_of_replayed_ones() -> None:
    store = _Finished()
    store.replayed(LogRecord("b", 1, False, seed=3))
    store.replayed(LogRecord("a", 0, True, seed=1))
    store.replayed(LogRecord("b", 0, True, seed=2))
    store[("b", 1)] = RunResult("b", 1, True, seed=9, seconds=0.5)
    store[("c", 0)] = RunResult("c", 0, False, seed=4)
    got = store.ordered()
    assert isinstance(got, _RunResults)
    assert [(r.task_id, r.run_index, r.success, r.seed) for r in got] == [
        ("a", 0, True, 1), ("b", 0, True, 2), ("b", 1, True, 9), ("c", 0, False, 4)]
    assert got[-1] == RunResult("c", 0, False, seed=4) and got[0].task_id == "a"
    assert got[1:3] == tuple(got)[1:3] and isinstance(got[1:3], tuple)
    assert hash(got) == hash(tuple(got)) and got != tuple(got)[:-1] and got != [1]
    import copy
    import pickle
    for again in (pickle.loads(pickle.dumps(got)), copy.deepcopy(got), copy.copy(got)):
        assert type(again) is tuple and again == got
    assert len(got) == 4  # b/1 once: the session's run


def test_nothing_replayed_gives_a_tuple() -> None:
    store = _Finished()
    store[("b", 0)] = RunResult("b", 0, True)
    store[("a", 1)] = RunResult("a", 1, False)
    got = store.ordered()
    assert type(got) is tuple and [r.task_id for r in got] == ["a", "b"]


def test_replayed_runs_are_compact() -> None:
    store = _Finished()
    for i in range(5000):
        store.replayed(LogRecord(f"task-{i // 10}", i % 10, i % 3 == 0, seconds=1e-5,
                                 seed=2**40 + i))
    held = sum(sys.getsizeof(x) for x in (store.task, store.index, store.flags, store.seconds,
                                            store.seed))
    assert held / 5000 < 48  # bytes a run (a RunResult with its dict is ~450)
    assert not store.odd and not store.errors


class Clocked:
    """A coin with its own seconds (so that a replayed run and a fresh one are equal), an
    error on some runs and an infrastructure error on the first attempt of others."""

    def run(self, task, *, seed):  # type: ignore[no-untyped-def]
        if seed % 11 == 0:
            return RunResult(task.task_id, 0, False, seconds=0.5, error="ValueError: odd")
        if seed % 13 == 0:
            return RunResult(task.task_id, 0, False, seconds=0.5, infrastructure_error=True)
        return RunResult(task.task_id, 0, coin(seed, task.params["p"]), seconds=0.25)


@pytest.mark.parametrize("concurrency", [None, 3])
@pytest.mark.parametrize("cut", [0, 1, 7, 23, 40, 47])
def test_cut_log_resumed_equals_uninterrupted(tmp_path: Path, cut: int,  # type: ignore[no-untyped-def]
                                              concurrency: int | None) -> None:
    tasks = p_tasks([0.5, 0.9, 0.1, 1.0, 0.7, 0.3])
    whole = run_suite(Clocked(), tasks, {"read-only": 8}, seed=11, progress=False,
                      log=tmp_path / "whole.jsonl", max_concurrency=concurrency)
    header, *lines = (tmp_path / "whole.jsonl").read_text().splitlines(keepends=True)
    cut_log = tmp_path / "cut.jsonl"
    cut_log.write_text(header + "".join(lines[:cut]))
    resumed = run_suite(Clocked(), tasks, {"read-only": 8}, seed=11, progress=False,
                        log=cut_log, resume=True, max_concurrency=concurrency)
    assert len(whole.results) == len(resumed.results) == 48
    assert len(set(map(type, whole.results))) == 1
    assert resumed.results == whole.results and whole.results == resumed.results
    assert [(r.task_id, r.run_index, r.success, r.seed) for r in resumed.results] == \
        [(r.task_id, r.run_index, r.success, r.seed) for r in whole.results]
    assert resumed.report.to_dict()["tasks"] == whole.report.to_dict()["tasks"]
    assert resumed.runs_spent == whole.runs_spent
    assert dict(resumed.retries) == dict(whole.retries)
    assert isinstance(resumed.results, _RunResults) == (cut > 0)
