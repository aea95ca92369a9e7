"""The crash-safe log and resume of :func:`passk.run.runner.run_suite`: torn lines, resuming
only the missing runs, pending retries, Ctrl-C, and SIGKILL at random points."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from runner_helpers import (
    CRASH_RUNS,
    CRASH_SEED,
    Counting,
    CrashTarget,
    SeedCoin,
    coin,
    crash_suite,
    p_tasks,
)

from passk import InfrastructureError, OnCallSimulator, RunResult, Task, demo_tasks
from passk.repeats import attempt_seed, run_seed
from passk.results.read import read_results
from passk.run.runner import SuiteRun, read_log, run_suite
from passk.stability import RepeatPolicy

KILL_TARGET = Path(__file__).resolve().parent / "helpers" / "kill_target.py"
TASKS = p_tasks([0.5, 0.9, 0.1, 1.0])
POLICY = {"read-only": 6}


def outcomes(run: SuiteRun) -> dict[tuple[str, int], tuple[bool, int | None]]:
    return {(r.task_id, r.run_index): (bool(r.success), r.seed) for r in run.results}


def summary(run: SuiteRun):
    """Everything a resumed run must share with an uninterrupted one (NaN-safe report).

    The protocol is left out: it names the adapter's class, and some tests resume
    with a counting stand-in; a resume under another protocol is refused anyway.
    """
    report = {k: v for k, v in run.report.to_dict().items() if k != "protocol"}
    return (outcomes(run), report, run.runs_spent, dict(run.retries),
            dict(run.cached), dict(run.infrastructure_errors), dict(run.effective_n))


def split_log(path: Path) -> tuple[bytes, list[bytes]]:
    """A log's protocol header line and its run lines (each with its newline)."""
    header, *lines = path.read_bytes().splitlines(keepends=True)
    assert b'"protocol"' in header and b'"task_id"' not in header
    return header, lines


def tear(path: Path, keep: int, *, half_of_next: bool = True) -> None:
    """Keep the header and the first ``keep`` run lines, then half of the next (a torn write)."""
    header, lines = split_log(path)
    data = header + b"".join(lines[:keep])
    if half_of_next and keep < len(lines):
        data += lines[keep][: len(lines[keep]) // 2]
    path.write_bytes(data)


def assert_clean_log(path: Path, lines_expected: int) -> list[dict]:
    """One header, then ``lines_expected`` whole run lines, no (task, trial, attempt) twice."""
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n")
    header, *records = [json.loads(line) for line in text.splitlines()]
    assert "protocol" in header and "task_id" not in header
    assert all("task_id" in r for r in records)
    assert len(records) == lines_expected
    attempts = Counter((r["task_id"], r["trial"], r["attempt"]) for r in records)
    assert max(attempts.values()) == 1
    return records


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[SuiteRun, Path]:
    log = tmp_path_factory.mktemp("ref") / "ref.jsonl"
    # Counting: the adapter class is part of the protocol a resume must match
    return run_suite(Counting(SeedCoin()), TASKS, POLICY, seed=1, log=log, progress=False), log


# --------------------------------------------------------------------------
# read_log
# --------------------------------------------------------------------------


def test_read_log_missing_and_empty(tmp_path):
    assert read_log(tmp_path / "none.jsonl") == []
    (tmp_path / "empty.jsonl").write_text("")
    assert read_log(tmp_path / "empty.jsonl", repair=True) == []
    assert (tmp_path / "empty.jsonl").read_text() == ""


def test_read_log_torn_last_line(reference, tmp_path):
    _, ref_log = reference
    log = tmp_path / "log.jsonl"
    log.write_bytes(ref_log.read_bytes())
    tear(log, 5)
    torn_size = log.stat().st_size
    assert len(read_log(log)) == 5
    assert log.stat().st_size == torn_size  # without repair the file is left alone
    assert len(read_log(log, repair=True)) == 5
    assert log.read_bytes() == b"".join(ref_log.read_bytes().splitlines(keepends=True)[:6])


@pytest.mark.parametrize("cut", [1, 2, 10, 40, -2])
def test_read_log_torn_at_any_byte(reference, tmp_path, cut):
    _, ref_log = reference
    header, lines = split_log(ref_log)
    log = tmp_path / "log.jsonl"
    last = lines[3]
    log.write_bytes(header + b"".join(lines[:3]) + last[:cut])
    assert [r.to_json() for r in read_log(log, repair=True)] == [
        line.decode().rstrip("\n") for line in lines[:3]]
    assert log.read_bytes() == header + b"".join(lines[:3])


def test_read_log_complete_last_line_without_newline(reference, tmp_path):
    _, ref_log = reference
    header, lines = split_log(ref_log)
    log = tmp_path / "log.jsonl"
    log.write_bytes((header + b"".join(lines[:4])).rstrip(b"\n"))
    assert len(read_log(log, repair=True)) == 4
    assert log.read_bytes() == header + b"".join(lines[:4])  # the newline was put back


def test_read_log_bad_line_in_the_middle_names_it(reference, tmp_path):
    _, ref_log = reference
    header, lines = split_log(ref_log)
    log = tmp_path / "log.jsonl"
    log.write_bytes(header + b"".join(lines[:2]) + b'{"task_id": "t0\n' + b"".join(lines[2:5]))
    with pytest.raises(ValueError, match=r"log\.jsonl:4: not a run-log record"):
        read_log(log)
    log.write_bytes(header + b"".join(lines[:2]) + b'{"task_id": "x", "bogus": 1}\n' + lines[2])
    with pytest.raises(ValueError, match=r":4: not a run-log record"):
        read_log(log)


def test_read_log_blank_lines_skipped(reference, tmp_path):
    _, ref_log = reference
    header, lines = split_log(ref_log)
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"\n" + header + lines[0] + b"\n" + lines[1] + b"\n")
    assert len(read_log(log, repair=True)) == 2


# --------------------------------------------------------------------------
# resume
# --------------------------------------------------------------------------


@pytest.mark.parametrize("keep", [0, 1, 7, 12, 23, 24])
def test_resume_after_torn_line_runs_only_missing(reference, tmp_path, keep):
    ref, ref_log = reference
    total = ref.runs_fixed
    log = tmp_path / "log.jsonl"
    log.write_bytes(ref_log.read_bytes())
    tear(log, keep)
    adapter = Counting(SeedCoin())
    resumed = run_suite(adapter, TASKS, POLICY, seed=1, log=log, resume=True, progress=False)
    assert adapter.calls == total - keep
    done_before = {(r["task_id"], r["trial"]) for r in
                   map(json.loads, ref_log.read_text().splitlines()[1:keep + 1])}
    assert set(adapter.seeds) == {run_seed(1, t.task_id, i) for t in TASKS for i in range(6)
                                  if (t.task_id, i) not in done_before}
    assert summary(resumed) == summary(ref)
    records = assert_clean_log(log, total)
    assert {(r["task_id"], r["trial"]) for r in records} == set(outcomes(ref))
    results = read_results(log)
    assert results.successes.tolist() == [t.successes for t in ref.report.tasks]
    assert results.totals.tolist() == [t.runs for t in ref.report.tasks]


class AsyncCountingCoin:
    """An async seed coin that counts its calls (its class is in the log's protocol)."""

    def __init__(self) -> None:
        self.calls = 0

    async def run(self, task: Task, *, seed: int) -> RunResult:
        self.calls += 1
        await asyncio.sleep(0.001)
        return SeedCoin().run(task, seed=seed)


def test_resume_on_a_thread_pool(reference, tmp_path):
    ref, ref_log = reference
    log = tmp_path / "threads.jsonl"
    log.write_bytes(ref_log.read_bytes())
    tear(log, 9)
    adapter = Counting(SeedCoin(sleep=0.001, jitter=True))
    resumed = run_suite(adapter, TASKS, POLICY, seed=1, log=log, resume=True, progress=False,
                        max_concurrency=4)
    assert adapter.calls == ref.runs_fixed - 9
    assert summary(resumed) == summary(ref)
    assert_clean_log(log, ref.runs_fixed)


def test_resume_async(tmp_path):
    ref_log = tmp_path / "ref.jsonl"
    ref = run_suite(AsyncCountingCoin(), TASKS, POLICY, seed=1, log=ref_log, progress=False,
                    max_concurrency=8)
    for keep in (0, 5, 17):
        log = tmp_path / f"cut{keep}.jsonl"
        log.write_bytes(ref_log.read_bytes())
        tear(log, keep)
        adapter = AsyncCountingCoin()
        resumed = run_suite(adapter, TASKS, POLICY, seed=1, log=log, resume=True,
                            progress=False, max_concurrency=8)
        assert adapter.calls == ref.runs_fixed - keep
        assert summary(resumed) == summary(ref)
        assert_clean_log(log, ref.runs_fixed)


def test_resume_of_a_complete_log_runs_nothing(reference, tmp_path):
    ref, ref_log = reference
    log = tmp_path / "log.jsonl"
    log.write_bytes(ref_log.read_bytes())
    adapter = Counting(SeedCoin())
    resumed = run_suite(adapter, TASKS, POLICY, seed=1, log=log, resume=True, progress=False)
    assert adapter.calls == 0
    assert summary(resumed) == summary(ref)
    assert log.read_bytes() == ref_log.read_bytes()


def test_resume_without_a_log_file_starts_fresh(reference, tmp_path):
    ref, _ = reference
    log = tmp_path / "new.jsonl"
    resumed = run_suite(Counting(SeedCoin()), TASKS, POLICY, seed=1, log=log, resume=True,
                        progress=False)
    assert summary(resumed) == summary(ref)
    assert_clean_log(log, ref.runs_fixed)


def test_resume_of_a_header_only_log(reference, tmp_path):
    """Killed after the header, before the first run."""
    ref, ref_log = reference
    header, _ = split_log(ref_log)
    log = tmp_path / "log.jsonl"
    log.write_bytes(header)
    resumed = run_suite(Counting(SeedCoin()), TASKS, POLICY, seed=1, log=log, resume=True,
                        progress=False)
    assert summary(resumed) == summary(ref)
    assert_clean_log(log, ref.runs_fixed)  # one header, not two


@pytest.mark.parametrize("cut", [1, 30, -2])
def test_resume_after_a_torn_header(reference, tmp_path, cut):
    ref, ref_log = reference
    header, _ = split_log(ref_log)
    log = tmp_path / "log.jsonl"
    log.write_bytes(header[:cut])
    resumed = run_suite(Counting(SeedCoin()), TASKS, POLICY, seed=1, log=log, resume=True,
                        progress=False)
    assert summary(resumed) == summary(ref)
    assert_clean_log(log, ref.runs_fixed)
    assert log.read_bytes().startswith(header)


def test_resume_simulator_demo(tmp_path):
    ref_log = tmp_path / "ref.jsonl"
    ref = run_suite(OnCallSimulator(), demo_tasks(), seed=3, log=ref_log, progress=False)
    for keep in range(0, 22, 5):
        log = tmp_path / f"cut{keep}.jsonl"
        log.write_bytes(ref_log.read_bytes())
        tear(log, keep)
        resumed = run_suite(OnCallSimulator(), demo_tasks(), seed=3, log=log, resume=True,
                            progress=False)
        assert summary(resumed) == summary(ref)
        assert_clean_log(log, 22)


def test_resume_ignores_records_of_other_tasks(reference, tmp_path):
    ref, ref_log = reference
    header, lines = split_log(ref_log)
    log = tmp_path / "log.jsonl"
    foreign = [json.dumps({"task_id": "not-in-suite", "trial": 0, "success": True}),
               json.dumps({"task_id": "t000", "trial": 99, "success": False})]
    log.write_bytes(header + ("\n".join(foreign) + "\n").encode() + b"".join(lines))
    adapter = Counting(SeedCoin())
    resumed = run_suite(adapter, TASKS, POLICY, seed=1, log=log, resume=True, progress=False)
    assert adapter.calls == 0
    assert summary(resumed) == summary(ref)


def test_resume_refuses_another_protocol_or_seed(reference, tmp_path):
    """Resuming with other settings would mix two measurements in one log."""
    from passk.results.protocol import ProtocolMismatch

    _, ref_log = reference
    log = tmp_path / "log.jsonl"
    log.write_bytes(ref_log.read_bytes())
    tear(log, 10)
    before = log.read_bytes()
    with pytest.raises(ValueError, match="seed 1, not 2"):
        run_suite(Counting(SeedCoin()), TASKS, POLICY, seed=2, log=log, resume=True,
                  progress=False)
    with pytest.raises(ProtocolMismatch, match="runs_by_risk"):
        run_suite(Counting(SeedCoin()), TASKS, {"read-only": 7}, seed=1, log=log, resume=True,
                  progress=False)
    with pytest.raises(ProtocolMismatch, match="adapter"):
        run_suite(SeedCoin(), TASKS, POLICY, seed=1, log=log, resume=True, progress=False)
    with pytest.raises(ProtocolMismatch, match="tasks"):
        run_suite(Counting(SeedCoin()), TASKS[:3], POLICY, seed=1, log=log, resume=True,
                  progress=False)
    with pytest.raises(ProtocolMismatch, match="stopping"):
        run_suite(Counting(SeedCoin()), TASKS, RepeatPolicy(runs_by_risk=POLICY,
                                                            stopping="curtailed"),
                  seed=1, log=log, resume=True, progress=False)
    assert log.read_bytes() == before  # refused before touching the log
    # how the runs are spread is not part of the protocol
    resumed = run_suite(Counting(SeedCoin()), TASKS, POLICY, seed=1, log=log, resume=True,
                        max_concurrency=3, backoff=0.0, progress=False)
    assert resumed.runs_spent == 24


def test_rerun_without_resume_on_an_existing_log_is_refused(reference, tmp_path):
    _, ref_log = reference
    log = tmp_path / "log.jsonl"
    log.write_bytes(ref_log.read_bytes())
    with pytest.raises(ValueError, match=r"already holds runs.*resume"):
        run_suite(Counting(SeedCoin()), TASKS, POLICY, seed=1, log=log, progress=False)
    assert log.read_bytes() == ref_log.read_bytes()
    empty = tmp_path / "empty.jsonl"
    empty.touch()  # an empty file is fine
    run = run_suite(Counting(SeedCoin()), TASKS, POLICY, seed=1, log=empty, progress=False)
    assert_clean_log(empty, run.runs_fixed)


class InfraFirst:
    """The first attempt of the listed runs is an infrastructure error."""

    def __init__(self, bad: set[int]) -> None:
        self.bad, self.seeds = bad, []

    def run(self, task: Task, *, seed: int) -> RunResult:
        self.seeds.append(seed)
        if seed in self.bad:
            raise InfrastructureError("429")
        return RunResult(task.task_id, 0, coin(seed, task.params["p"]))


def test_resume_with_a_retry_pending(tmp_path):
    bad = {run_seed(1, "t001", 2), run_seed(1, "t003", 0), run_seed(1, "t003", 5)}
    ref_log = tmp_path / "ref.jsonl"
    ref = run_suite(InfraFirst(bad), TASKS, POLICY, seed=1, log=ref_log, backoff=0,
                    progress=False)
    header, lines = split_log(ref_log)
    assert len(lines) == 27
    cut_at = [i for i, line in enumerate(lines) if json.loads(line)["infrastructure_error"]]
    assert len(cut_at) == 3
    for first_infra in cut_at:
        log = tmp_path / f"cut{first_infra}.jsonl"
        log.write_bytes(header + b"".join(lines[: first_infra + 1]))  # ends on an infra attempt
        adapter = InfraFirst(bad)
        resumed = run_suite(adapter, TASKS, POLICY, seed=1, log=log, resume=True, backoff=0,
                            progress=False)
        rec = json.loads(lines[first_infra])
        retry_seed = attempt_seed(1, rec["task_id"], rec["trial"], 1)
        assert adapter.seeds[0] == retry_seed  # the pending retry, not attempt 0 again
        assert run_seed(1, rec["task_id"], rec["trial"]) not in adapter.seeds
        assert len(adapter.seeds) == 27 - (first_infra + 1)
        assert summary(resumed) == summary(ref)
        assert_clean_log(log, 27)


def test_resume_curtailed(tmp_path):
    tasks = p_tasks([1.0, 0.5, 0.98, 0.02, 0.6, 1.0])
    policy = RepeatPolicy(runs_by_risk={"read-only": 12}, stopping="curtailed")
    ref_log = tmp_path / "ref.jsonl"
    ref = run_suite(Counting(SeedCoin()), tasks, policy, seed=4, log=ref_log, progress=False)
    fixed = run_suite(SeedCoin(), tasks, {"read-only": 12}, seed=4, progress=False)
    assert ref.runs_spent < fixed.runs_spent
    # the runs' lines; the settled tasks' lines come after them, at the end of the run
    n_lines = sum(b'"settled"' not in line for line in split_log(ref_log)[1])
    for keep in (0, 3, 13, n_lines // 2, n_lines - 1):
        log = tmp_path / f"cut{keep}.jsonl"
        log.write_bytes(ref_log.read_bytes())
        tear(log, keep)
        adapter = Counting(SeedCoin())
        resumed = run_suite(adapter, tasks, policy, seed=4, log=log, resume=True,
                            progress=False)
        assert adapter.calls == n_lines - keep
        assert summary(resumed) == summary(ref)
        assert (resumed.report.gate.passed, set(resumed.report.gate.flaky_tasks)) == (
            fixed.report.gate.passed, set(fixed.report.gate.flaky_tasks))


# --------------------------------------------------------------------------
# KeyboardInterrupt
# --------------------------------------------------------------------------


class InterruptAfter:
    """Raises KeyboardInterrupt on its ``after``-th call (as Ctrl-C would in the middle)."""

    def __init__(self, after: int = 10**9, sleep: float = 0.0) -> None:
        self.after, self.sleep, self.calls = after, sleep, 0
        self._lock = threading.Lock()

    def run(self, task: Task, *, seed: int) -> RunResult:
        with self._lock:
            self.calls += 1
            n = self.calls
        if self.sleep:
            time.sleep(self.sleep)
        if n == self.after:
            raise KeyboardInterrupt
        return SeedCoin().run(task, seed=seed)


class AsyncInterruptAfter(InterruptAfter):
    async def run(self, task: Task, *, seed: int) -> RunResult:  # type: ignore[override]
        self.calls += 1
        n = self.calls
        await asyncio.sleep(self.sleep)
        if n == self.after:
            raise KeyboardInterrupt
        return SeedCoin().run(task, seed=seed)


@pytest.mark.parametrize("driver", ["sequential", "threads", "async"])
def test_keyboard_interrupt_reraises_with_resume_hint(reference, tmp_path, capsys, driver):
    ref, _ = reference
    log = tmp_path / "log.jsonl"
    kind = AsyncInterruptAfter if driver == "async" else InterruptAfter
    extra = {} if driver == "sequential" else {"max_concurrency": 4}
    adapter = kind(10, sleep=0.0 if driver == "sequential" else 0.001)
    with pytest.raises(KeyboardInterrupt):
        run_suite(adapter, TASKS, POLICY, seed=1, log=log, progress=False, **extra)
    err = capsys.readouterr().err
    match = re.search(r"interrupted: (\d+) runs recorded in (\S+); resume=True", err)
    assert match, err
    recorded = int(match.group(1))
    assert match.group(2) == str(log)
    assert 1 <= recorded < ref.runs_fixed
    if driver == "sequential":
        assert recorded == 9
    else:  # the pool or the other workers may finish a few more before it stops
        assert adapter.calls < ref.runs_fixed
    records = read_log(log)
    assert len(records) == recorded
    assert all((r.success, r.seed) == outcomes(ref)[(r.task_id, r.trial)] for r in records)
    again = kind()  # the same adapter (class), without the Ctrl-C
    resumed = run_suite(again, TASKS, POLICY, seed=1, log=log, resume=True, progress=False,
                        **extra)
    assert again.calls == ref.runs_fixed - recorded
    assert summary(resumed) == summary(ref)
    assert_clean_log(log, ref.runs_fixed)


def test_keyboard_interrupt_without_log_says_nothing_can_be_resumed(capsys):
    with pytest.raises(KeyboardInterrupt):
        run_suite(InterruptAfter(3), TASKS, POLICY, progress=False)
    err = capsys.readouterr().err
    assert "interrupted: 2 runs recorded" in err and "without a log" in err


# --------------------------------------------------------------------------
# SIGKILL at random points, then resume
# --------------------------------------------------------------------------

CRASH_POLICY = RepeatPolicy(runs_by_risk={"read-only": CRASH_RUNS})


def crash_reference() -> SuiteRun:
    return run_suite(CrashTarget(sleep=0.0), crash_suite(), CRASH_POLICY, seed=CRASH_SEED,
                     backoff=0, progress=False)


def kill_at_random(log: Path, delay: float, *, timeout: float = 60.0) -> int:
    """Start the kill target, wait until it has begun its log, wait ``delay``, SIGKILL it.
    Returns the exit code (-SIGKILL when it was killed, 0 when it finished first)."""
    proc = subprocess.Popen([sys.executable, str(KILL_TARGET), str(log)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + timeout
        while not (log.exists() and log.stat().st_size > 0):
            if proc.poll() is not None:
                raise AssertionError(f"kill target exited early: {proc.stderr.read()!r}")
            if time.monotonic() > deadline:
                raise AssertionError("kill target never started its log")
            time.sleep(0.002)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        return proc.wait(timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()


def check_after_crash(log: Path, ref: SuiteRun) -> tuple[bool, int]:
    """Resume in-process (same adapter class, so the same protocol); check every run is
    counted exactly once, no attempt was run twice, and the outcomes. Returns
    (ok, attempts made by the resume)."""
    before = len(read_log(log))  # what survived the kill
    resumed = run_suite(CrashTarget(sleep=0.0), crash_suite(), CRASH_POLICY, seed=CRASH_SEED,
                        max_concurrency=4, log=log, resume=True, backoff=0, progress=False)
    records = read_log(log)
    counted = Counter((r.task_id, r.trial) for r in records
                      if not (r.infrastructure_error or r.cached))
    every_run_once = set(counted) == set(outcomes(ref)) and set(counted.values()) == {1}
    attempts = Counter((r.task_id, r.trial, r.attempt) for r in records)
    no_attempt_twice = set(attempts.values()) == {1}
    same = summary(resumed) == summary(ref)
    by_log = {(r.task_id, r.trial): (r.success, r.seed) for r in records
              if not (r.infrastructure_error or r.cached)}
    return (every_run_once and no_attempt_twice and same and by_log == outcomes(ref),
            len(records) - before)


@pytest.mark.slow
def test_kill_and_resume(tmp_path):
    ref = crash_reference()
    attempts = sum(ref.retries.values()) + ref.runs_fixed
    assert sum(ref.retries.values()) > 0  # the log holds retries too
    rng = np.random.default_rng(20240501)
    interrupted = 0
    for trial in range(5):
        log = tmp_path / f"trial{trial}.jsonl"
        code = kill_at_random(log, float(rng.uniform(0.0, 0.3)))
        survived = len(read_log(log))
        interrupted += code == -signal.SIGKILL and survived < attempts
        ok, redone = check_after_crash(log, ref)
        assert ok, f"trial {trial}: {survived} lines survived the kill, {redone} attempts made"
        assert survived + redone == attempts
    assert interrupted >= 3  # most kills landed mid-suite, so the test tested something


@pytest.mark.slow
def test_kill_resume_and_kill_again(tmp_path):
    """Killed, resumed by the script itself to the end; killed, torn, resumed."""
    ref = crash_reference()
    log = tmp_path / "log.jsonl"
    kill_at_random(log, 0.05)
    proc = subprocess.run([sys.executable, str(KILL_TARGET), str(log), "--resume"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout.strip()) == ref.runs_spent
    ok, redone = check_after_crash(log, ref)
    assert ok and redone == 0
    # a torn tail on top of a killed log
    log2 = tmp_path / "log2.jsonl"
    kill_at_random(log2, 0.1)
    with open(log2, "ab") as f:
        f.write(b'{"task_id":"crash-003","trial":')
    ok, _ = check_after_crash(log2, ref)
    assert ok
    assert b'"trial":\n' not in log2.read_bytes()
    os.remove(log2)
