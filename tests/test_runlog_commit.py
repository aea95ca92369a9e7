"""The run log's group commit: every line in the OS at once, fsync'ed in groups."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "helpers"))

from patience import CEILING_S  # the tests' one ceiling on a wait
from runner_helpers import NoOp, p_tasks

from passk.run import runner
from passk.run.runner import read_log, run_suite


def test_each_line_reaches_the_os_before_the_next_run(tmp_path):
    """A killed process loses no finished run: the file holds each line as it is written."""
    log = runner._Log(tmp_path / "log.jsonl", {"protocol": {"settings": {}}})
    try:
        for i in range(5):
            log.write(runner.LogRecord("a", i, True, seed=i))
            lines = (tmp_path / "log.jsonl").read_bytes().splitlines()
            assert len(lines) == i + 2  # the header and every record so far
    finally:
        log.close()


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
