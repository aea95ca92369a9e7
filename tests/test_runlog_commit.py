"""The run log's group commit: records written and fsync'ed in groups; a crash loses at most
the last group, which resume redoes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "helpers"))

import pytest
from patience import CEILING_S  # the tests' one ceiling on a wait
from runner_helpers import NoOp, p_tasks

from passk.run import runner
from passk.run.runner import read_log, run_suite


def test_a_group_reaches_the_file_in_one_write_within_the_window(tmp_path):
    """Records wait in the group (no write a run), then reach the file together, in order,
    within the commit window; closing writes what is left."""
    path = tmp_path / "log.jsonl"
    log = runner._Log(path, {"protocol": {"settings": {}}})
    try:
        for i in range(5):
            log.write(runner.LogRecord("a", i, True, seed=i))
        deadline = time.monotonic() + CEILING_S
        while len(path.read_bytes().splitlines()) < 6 and time.monotonic() < deadline:
            time.sleep(0.005)
        lines = path.read_bytes().splitlines()
        assert len(lines) == 6  # the header and every record, after one window
        assert [json.loads(x)["trial"] for x in lines[1:]] == list(range(5))
        log.write(runner.LogRecord("a", 5, True, seed=5))
    finally:
        log.close()
    assert [r.trial for r in read_log(path)] == list(range(6))


def test_a_full_group_is_written_inline(tmp_path):
    """COMMIT_RECORDS records waiting: the writer commits them itself, before the window."""
    path = tmp_path / "log.jsonl"
    log = runner._Log(path, None)
    log.COMMIT_SECONDS = 3600.0  # the committer would wait an hour
    try:
        for i in range(runner._Log.COMMIT_RECORDS):
            log.write(runner.LogRecord("a", i, True, seed=i))
        assert len(path.read_bytes().splitlines()) == runner._Log.COMMIT_RECORDS
    finally:
        log.close()


#: A suite killed (SIGKILL, by the adapter itself) at its KILL_AT-th run, with its log's
#: window an hour long: the runs of the group being gathered are lost, nothing else.
_KILLED_MID_GROUP = """
import os, signal, sys
sys.path.insert(0, sys.argv[3])
from passk.adapter import RunResult
from passk.run import runner
from runner_helpers import p_tasks
runner._Log.COMMIT_SECONDS = 3600.0
runner._Log.COMMIT_RECORDS = int(sys.argv[4])
class Coin:
    made = 0
    def run(self, task, *, seed):
        Coin.made += 1
        if Coin.made == int(sys.argv[2]):
            os.kill(os.getpid(), signal.SIGKILL)
        return RunResult(task.task_id, 0, seed % 3 != 0)
runner.run_suite(Coin(), p_tasks([0.5] * 20), {"read-only": 10}, seed=11, log=sys.argv[1],
                 progress=False)
"""


def _runs(records):
    """What a record says of its run (all but its duration)."""
    return [(r.task_id, r.trial, r.attempt, r.success, r.seed, r.error) for r in records]


@pytest.mark.parametrize(("kill_at", "group"), [(1, 50), (37, 50), (150, 50), (199, 1000)])
def test_a_crash_mid_group_loses_only_the_group_and_resume_redoes_it(tmp_path, kill_at,
                                                                     group):
    from passk.adapter import RunResult

    class Coin:  # the subprocess's adapter, without the kill
        def run(self, task, *, seed):
            return RunResult(task.task_id, 0, seed % 3 != 0)

    Coin.__name__ = Coin.__qualname__ = "Coin"
    Coin.__module__ = "__main__"  # the protocol names the adapter: the same as the child's
    log = tmp_path / "log.jsonl"
    proc = subprocess.run([sys.executable, "-c", _KILLED_MID_GROUP, str(log), str(kill_at),
                           str(Path(__file__).resolve().parent / "helpers"), str(group)],
                          capture_output=True, text=True, timeout=CEILING_S, check=False,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    survived = read_log(log)
    # the runs before the kill, as whole groups: a prefix of the log an uninterrupted run
    # writes, ending at a group's end
    assert len(survived) == (kill_at - 1) // group * group
    ref_log = tmp_path / "ref.jsonl"
    ref = run_suite(Coin(), p_tasks([0.5] * 20), {"read-only": 10}, seed=11, log=ref_log,
                    progress=False)
    assert _runs(survived) == _runs(read_log(ref_log))[:len(survived)]
    resumed = run_suite(Coin(), p_tasks([0.5] * 20), {"read-only": 10}, seed=11, log=log,
                        resume=True, progress=False)
    records = read_log(log)
    assert len(records) == 200
    assert sorted(_runs(records)) == sorted(_runs(read_log(ref_log)))
    assert resumed.report.to_dict() == ref.report.to_dict()


def test_fsyncs_are_grouped_and_close_commits(tmp_path, monkeypatch):
    synced: list[int] = []
    real = os.fsync

    def counting(fd: int) -> None:
        synced.append(fd)
        real(fd)

    monkeypatch.setattr(runner.os, "fsync", counting)
    run = run_suite(NoOp(), p_tasks([1.0] * 300), {"read-only": 10}, log=tmp_path / "l.jsonl",
                    progress=False)
    assert run.runs_spent == 3000
    assert len(read_log(tmp_path / "l.jsonl")) == 3000
    # far fewer fsyncs than records, but at least the header's, one per 1,000 and close's
    assert 1 + 3000 // runner._Log.COMMIT_RECORDS <= len(synced) < 3000 // 10


def test_a_lone_record_is_committed_within_the_window(tmp_path, monkeypatch):
    synced: list[float] = []
    real = os.fsync

    def stamping(fd: int) -> None:
        synced.append(time.monotonic())
        real(fd)

    monkeypatch.setattr(runner.os, "fsync", stamping)
    log = runner._Log(tmp_path / "log.jsonl", None)
    try:
        written = time.monotonic()
        log.write(runner.LogRecord("a", 0, True, seed=1))
        deadline = written + CEILING_S
        while not synced and time.monotonic() < deadline:
            time.sleep(0.005)
        assert synced, "the committer never fsync'ed a waiting record"
        assert synced[0] - written >= runner._Log.COMMIT_SECONDS * 0.5
    finally:
        log.close()
