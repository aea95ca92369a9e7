"""The JSON Lines reader streams in chunks: the same counts at every chunk size, flat memory."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from passk.results.counts import tally_runs
from passk.results.formats import jsonl_csv
from passk.results.formats.jsonl_csv import _fast_jsonl, _jsonl_located
from passk.results.protocol import Protocol
from passk.run.runner import run_suite


def _lines(rng: np.random.Generator) -> list[str]:
    lines = []
    for t in range(30):
        for j in range(int(rng.integers(1, 7))):
            rec = {"task_id": t if t % 3 == 0 else f"t{t}", "trial": j,
                   "success": bool(rng.random() < 0.7)}
            if t % 5 == 0 and j != 1:  # one tier a task; a record without one says nothing
                rec["risk"] = "high-risk-write" if t % 10 == 0 else "read-only"
            if t % 7 == 0 and j == 0:
                rec["infrastructure_error"] = True
            lines.append(json.dumps(rec))
    rng.shuffle(lines)
    return lines


def _same(a, b) -> None:
    assert a.task_ids == b.task_ids and a.risks == b.risks
    assert a.successes.tolist() == b.successes.tolist()
    assert a.totals.tolist() == b.totals.tolist() and a.excluded.tolist() == b.excluded.tolist()
    assert a.run_ids == b.run_ids and a.unidentified == b.unidentified


@pytest.mark.parametrize("chunk", [1, 2, 7, 1000])
def test_every_chunk_size_counts_as_the_line_by_line_reader(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(jsonl_csv, "_CHUNK_LINES", chunk)
    path = tmp_path / "runs.jsonl"
    for seed in range(3):
        path.write_text("\n".join(_lines(np.random.default_rng(seed))) + "\n")
        fast = _fast_jsonl(path)
        assert fast is not None
        protocol, located = _jsonl_located(path)
        _same(fast, tally_runs(located, path=path, protocol=protocol))


@pytest.mark.parametrize("chunk", [1, 3, 1000])
def test_a_run_log_across_chunks(tmp_path, monkeypatch, chunk):
    """A passk run log (header, seeds, attempts) read in chunks: run ids and checks kept."""
    import sys as _sys
    from pathlib import Path

    _sys.path.insert(0, str(Path(__file__).resolve().parent / "helpers"))
    from runner_helpers import SeedCoin, p_tasks

    log = tmp_path / "log.jsonl"
    run_suite(SeedCoin(), p_tasks([0.3, 0.6, 0.9]), {"read-only": 5}, log=log, progress=False)
    monkeypatch.setattr(jsonl_csv, "_CHUNK_LINES", chunk)
    fast = _fast_jsonl(log)
    assert fast is not None and len(fast.run_ids) == 15
    protocol, located = _jsonl_located(log)
    _same(fast, tally_runs(located, path=log, protocol=protocol))
    assert fast.protocol == protocol


def test_a_header_in_a_later_chunk_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(jsonl_csv, "_CHUNK_LINES", 2)
    path = tmp_path / "runs.jsonl"
    path.write_text('{"task_id": "a", "success": true}\n{"task_id": "b", "success": true}\n'
                    + json.dumps({"protocol": Protocol({"k": 1}).to_dict()}) + "\n")
    assert _fast_jsonl(path) is None  # the line-by-line path names line 3


@pytest.mark.slow
def test_peak_memory_at_1_6_million_records(tmp_path):
    """100,000 tasks x 16 runs: the whole read, in a fresh process, peaks under 150 MB."""
    path = tmp_path / "runs.jsonl"
    rng = np.random.default_rng(0)
    ok = rng.random((100_000, 16)) < 0.8
    with open(path, "w", encoding="utf-8") as f:
        f.writelines("".join(f'{{"task_id": "task-{t:06d}", "trial": {j}, "success": '
                            f'{"true" if ok[t, j] else "false"}}}\n' for j in range(16)) for t in range(100_000))
    # VmHWM is this process's own peak (ru_maxrss would carry pytest's over the exec)
    code = ("from passk.results.read import read_results; "
            f"r = read_results({str(path)!r}); "
            "hwm = [line.split()[1] for line in open('/proc/self/status') "
            "if line.startswith('VmHWM')][0]; print(int(r.totals.sum()), hwm)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert int(out[0]) == 1_600_000
    assert int(out[1]) / 1024 <= 150, f"peak {int(out[1]) / 1024:.0f} MB"
