"""The CSV and JSON Lines readers count in bulk, a chunk at a time (issue 30).

Each bulk path is checked against counts made by hand from the data that
wrote the file (a ``Counter`` per task), and against the row-by-row reader,
at chunk sizes that cut the file everywhere; anything the bulk path does not
accept as it is goes to the row-by-row reader, whose error names the line.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from passk.results.counts import ResultsError, tally_runs
from passk.results.formats import jsonl_csv
from passk.results.formats.jsonl_csv import (
    _csv_located,
    _fast_csv,
    _fast_jsonl,
    _jsonl_located,
    _plain_csv,
)
from passk.results.protocol import Protocol
from passk.results.read import read_results

SUCCESS_CELLS = {True: ["true", "TRUE", " 1 ", "True"], False: ["false", "0", "FALSE", " false"]}


def _rows(seed: int) -> list[dict]:
    """Random runs: task ids, trials (some missing), risks, flags, success as CSV writes it."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(25):
        for j in range(int(rng.integers(1, 9))):
            won = bool(rng.random() < 0.6)
            rows.append({"task_id": f"t{t}", "trial": "" if t % 6 == 5 else str(j),
                         "success": SUCCESS_CELLS[won][int(rng.integers(4))],
                         "risk": ("high-risk-write" if j == 2 else "read-only") if t % 4 == 0
                         else "",
                         "infrastructure_error": "true" if t % 7 == 0 and j == 0 else "",
                         "cached": " 1" if t % 5 == 0 and j == 1 else "False",
                         "won": won})
    order = rng.permutation(len(rows))
    return [rows[i] for i in order]


def _write_csv(path: Path, rows: list[dict], blank_every: int = 0) -> None:
    names = ["task_id", "trial", "success", "risk", "infrastructure_error", "cached"]
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(names)
        for i, row in enumerate(rows):
            if blank_every and i % blank_every == 0:
                f.write("\r\n")  # an empty line: skipped, as csv.DictReader skips it
            w.writerow([row[n] for n in names])


def _by_hand(rows: list[dict]) -> dict[str, tuple[int, int, int]]:
    """Per task: (passed, counted, left out), from the data itself."""
    passed, counted, out = Counter(), Counter(), Counter()
    for row in rows:
        left_out = row["infrastructure_error"] == "true" or row["cached"].strip() == "1"
        if left_out:
            out[row["task_id"]] += 1
        else:
            counted[row["task_id"]] += 1
            passed[row["task_id"]] += row["won"]
    tasks = dict.fromkeys(row["task_id"] for row in rows)
    return {t: (passed[t], counted[t], out[t]) for t in tasks}


def _as_dict(r) -> dict[str, tuple[int, int, int]]:
    return {t: (int(s), int(n), int(x)) for t, s, n, x in
            zip(r.task_ids, r.successes, r.totals, r.excluded, strict=True)}


@pytest.mark.parametrize("chunk", [1, 3, 50, 100_000])
def test_csv_in_bulk_counts_as_by_hand_at_every_chunk_size(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(jsonl_csv, "_CHUNK_LINES", chunk)
    path = tmp_path / "runs.csv"
    for seed in range(3):
        rows = _rows(seed)
        _write_csv(path, rows, blank_every=7 if seed == 1 else 0)
        fast = _fast_csv(path)
        assert fast is not None
        assert _as_dict(fast) == _by_hand(rows)
        if seed != 1:  # no empty line, no quote: split as plain text
            assert _as_dict(_plain_csv(path)) == _by_hand(rows)
        slow = tally_runs(_csv_located(path), path=path, source="csv")
        assert fast.task_ids == slow.task_ids and fast.risks == slow.risks
        assert fast.excluded_reason == slow.excluded_reason
        assert (fast.run_ids, fast.unidentified) == (slow.run_ids, slow.unidentified)
        assert read_results(path).task_ids == slow.task_ids


@pytest.mark.parametrize("rows, message", [
    (["task_id,success,trial", "a,true,0", "a,maybe,1"], "runs.csv:3: field 'success' must be"),
    (["task_id,success,trial", "a,true,0", "b,true"], "runs.csv:3: 2 cells where the header has 3"),
    (["task_id,success,trial", "a,true,0", "b,true,1,x"], "runs.csv:3: 4 cells where"),
    (["task_id,success,trial", "a,true,²"], "runs.csv:2: field 'trial' must be a whole number"),
    (["task_id,success,trial", "a,true,--3"], "runs.csv:2: field 'trial' must be a whole number"),
    (["task_id,success,trial", "b,true,0", "a,true,7", "a,false,7"],
     "runs.csv:4: duplicate run: task 'a' trial 7 already appears on line 3"),
])
def test_csv_the_bulk_path_declines_and_the_error_names_the_line(tmp_path, rows, message):
    path = tmp_path / "runs.csv"
    path.write_text("\n".join(rows) + "\n")
    assert _fast_csv(path) is None
    with pytest.raises(ResultsError) as err:
        read_results(path)
    assert message in str(err.value)


def test_csv_duplicates_kept_as_asked(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("task_id,success,trial\na,true,0\na,false,0\nb,true,0\n")
    assert read_results(path, duplicates="last").successes.tolist() == [0, 1]
    assert read_results(path, duplicates="first").successes.tolist() == [1, 1]


def test_csv_huge_trial_labels_counted_one_by_one(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text(f"task_id,success,trial\na,true,{2**70}\na,false,{2**70 + 1}\n")
    assert _fast_csv(path) is None
    assert read_results(path).totals.tolist() == [2]


def test_jsonl_line_endings_blank_lines_and_a_bom(tmp_path, monkeypatch):
    """CRLF, blank lines (also in a run log, whose records keep their own line numbers)
    and a byte-order mark: the bulk path reads them as the line-by-line one."""
    monkeypatch.setattr(jsonl_csv, "_CHUNK_LINES", 1)
    recs = [{"task_id": i % 3, "trial": i // 3, "success": ["true", 1, False][i % 3]}
            for i in range(12)]
    path = tmp_path / "runs.jsonl"
    text = "\r\n\r\n".join(map(json.dumps, recs)) + "\r\n  \r\n"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    fast = _fast_jsonl(path)
    assert fast is not None
    assert _as_dict(fast) == {"0": (4, 4, 0), "1": (4, 4, 0), "2": (0, 4, 0)}
    header = json.dumps({"protocol": Protocol({"tasks": ["0", "1"]}).to_dict()})
    path.write_text(header + "\n\n" + "\n\n".join(map(json.dumps, recs[:4])) + "\n")
    with pytest.raises(ResultsError) as err:
        read_results(path)
    # task 2 on the file's line 7 (blank lines 2, 4, 6 counted)
    assert str(err.value).startswith(f"{path}:7: field 'task_id': task '2' is not in the header")


def test_jsonl_a_run_both_an_infrastructure_error_and_cached(tmp_path):
    path = tmp_path / "runs.jsonl"
    path.write_text('{"task_id": "a", "trial": 0, "success": true, "cached": true, '
                    '"infrastructure_error": true}\n'
                    '{"task_id": "a", "trial": 1, "success": true, "cached": true}\n')
    fast = _fast_jsonl(path)
    protocol, located = _jsonl_located(path)
    slow = tally_runs(located, path=path, protocol=protocol)
    assert fast is not None and fast.excluded.tolist() == slow.excluded.tolist() == [2]
    assert fast.excluded_reason == slow.excluded_reason == \
        "infrastructure errors or cached results"
    path.write_text('{"task_id": "a", "trial": 0, "success": true, "cached": true}\n'
                    '{"task_id": "a", "trial": 1, "success": true, "infrastructure_error": true}\n')
    assert _fast_jsonl(path).excluded_reason == "cached results or infrastructure errors"


@pytest.mark.parametrize("line", [
    '{"task_id": "a", "success": true}{"task_id": "b", "success": true}',  # two on a line
    '{"task_id": "a", "success": true}, {"task_id": "b", "success": true}',
    '{"task_id": "a", "success": 1.0}',
    '{"task_id": "a", "success": true, "trial": NaN}',
    '{"task_id": "a\\ud800", "success": true}',  # a lone surrogate: the standard library's
    '{"task_id": "a", "success": true, "seed": 3}',  # a run record without its header
])
def test_jsonl_what_the_bulk_path_leaves_to_the_line_by_line_reader(tmp_path, line):
    path = tmp_path / "runs.jsonl"
    path.write_text('{"task_id": "z", "success": true}\n' + line + "\n")
    assert _fast_jsonl(path) is None


def _peak(path: Path) -> tuple[int, float]:
    code = ("from passk.results.read import read_results; "
            f"r = read_results({str(path)!r}); "
            "hwm = [line.split()[1] for line in open('/proc/self/status') "
            "if line.startswith('VmHWM')][0]; print(int(r.totals.sum()), hwm)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    return int(out[0]), int(out[1]) / 1024


@pytest.mark.slow
def test_csv_peak_memory_at_1_6_million_records(tmp_path):
    """100,000 tasks x 16 runs as CSV: the whole read, in a fresh process, peaks under 150 MB."""
    path = tmp_path / "runs.csv"
    rng = np.random.default_rng(0)
    ok = rng.random((100_000, 16)) < 0.8
    with open(path, "w", encoding="utf-8") as f:
        f.write("task_id,trial,success\n")
        f.writelines("".join(f"task-{t:06d},{j},{'true' if ok[t, j] else 'false'}\n"
                             for j in range(16)) for t in range(100_000))
    total, mb = _peak(path)
    assert total == 1_600_000
    assert mb <= 150, f"peak {mb:.0f} MB"


@pytest.mark.parametrize("text", [
    'task_id,success\n"a",true\n"b,c",false\n',  # quoted cells
    "task_id,success\r\na,true\r\nb,false\r\n",  # CRLF
    "task_id,success\ra,true\rb,false\r",  # lone carriage returns end lines too
    "task_id,success\n\na,true\n\nb,false\n",  # empty lines
    "\ufefftask_id,success\na,true\nb,false",  # a byte-order mark, no last newline
    'task_id,success\na,true\n"b\nc",false\n',  # a quoted newline
])
def test_csv_plain_and_quoted_read_as_csv_reader_reads(tmp_path, monkeypatch, text):
    monkeypatch.setattr(jsonl_csv, "_CHUNK_LINES", 1)
    path = tmp_path / "runs.csv"
    path.write_bytes(text.encode())
    slow = tally_runs(_csv_located(path), path=path, source="csv")
    fast = _fast_csv(path)
    assert fast is not None
    assert _as_dict(fast) == _as_dict(slow) and fast.task_ids == slow.task_ids


def test_csv_plain_split_declines_what_it_cannot_split(tmp_path):
    for text in ('task_id,success\n"a",true\n', "task_id,success\ra,true\r",
                 "task_id,success\na,true\n\nb,true\n", "task_id,success\na,tr\x00ue\n",
                 "task_id,success\na,true,x\nb\n"):
        path = tmp_path / "runs.csv"
        path.write_text(text, newline="")
        assert _plain_csv(path) is None
