"""The generic readers (JSON Lines, CSV): the bulk path agrees with the line-by-line one."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from passk.io import ResultsError, _fast_jsonl, read_jsonl_runs, read_results, results_from_runs


def write_lines(tmp_path: Path, lines: list[str], name: str = "runs.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def same(a, b) -> None:
    assert a.task_ids == b.task_ids and a.risks == b.risks
    for field in ("successes", "totals", "excluded"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


def test_bulk_path_matches_line_by_line(tmp_path):
    rng = np.random.default_rng(1)
    lines = []
    for t in range(40):
        for j in range(int(rng.integers(1, 8))):
            rec = {"task_id": t if t % 3 == 0 else f"t{t}", "trial": j,
                   "success": bool(rng.random() < 0.7)}
            if t % 5 == 0:
                rec["risk"] = "high-risk-write" if j == 1 else "read-only"
            if t % 7 == 0 and j == 0:
                rec["infrastructure_error"] = True
            if t % 11 == 0 and j == 2:
                rec["cached"] = True
            lines.append(json.dumps(rec))
    lines.insert(5, "")  # blank lines are skipped
    path = write_lines(tmp_path, lines)
    fast = _fast_jsonl(path)
    assert fast is not None
    same(fast, results_from_runs(read_jsonl_runs(path)))
    same(read_results(path), fast)


@pytest.mark.parametrize("lines, message", [
    (['{"task_id": "a", "success": true}', '{"task_id": "a", "success": tr'],
     "runs.jsonl:2: not valid JSON"),
    (['{"task_id": "a", "success": "yes"}'], "runs.jsonl:1: field 'success' must be a boolean"),
    (['{"task_id": "a", "success": true}', '{"success": true}'],
     "runs.jsonl:2: missing field 'task_id'"),
    (['{"task_id": "a", "success": 1}'], "field 'success' must be a boolean"),
    (['{"task_id": "a", "success": true, "trial": 1.5}'], "field 'trial' must be a whole number"),
    (['{"task_id": ["a"], "success": true}'], "field 'task_id' must be a string"),
    (['[1, 2]'], "expected a JSON object, got list"),
    (['{"task_id": "a", "success": true, "trial": 0}',
      '{"task_id": "b", "success": true, "trial": 0}',
      '{"task_id": "a", "success": false, "trial": 0}'],
     "runs.jsonl:3: duplicate run: task 'a' trial 0 already appears on line 1"),
])
def test_jsonl_bad_input(tmp_path, lines, message):
    with pytest.raises(ResultsError) as err:
        read_results(write_lines(tmp_path, lines))
    assert message in str(err.value)


def test_jsonl_truncated_last_line(tmp_path):
    path = tmp_path / "runs.jsonl"
    path.write_text('{"task_id": "a", "success": true}\n{"task_id": "a", "succ')
    with pytest.raises(ResultsError, match=r"runs\.jsonl:2: not valid JSON"):
        read_results(path)


def test_empty_file(tmp_path):
    path = tmp_path / "runs.jsonl"
    path.write_text("\n\n")
    with pytest.raises(ResultsError, match="no runs found"):
        read_results(path)


@pytest.mark.parametrize("rows, message", [
    (["task_id,success,trial", "a,true,0", "a,maybe,1"], "runs.csv:3: field 'success' must be"),
    (["task_id,success,trial", ",true,0"], "runs.csv:2: missing field 'task_id'"),
    (["task_id,success,trial", "a,true,x"], "runs.csv:2: field 'trial' must be a whole number"),
    (["task,success", "a,true"], "runs.csv:1: missing column(s) ['task_id']"),
    (["task_id,success,trial", "a,true,0", "a,false,0"],
     "runs.csv:3: duplicate run: task 'a' trial 0 already appears on line 2"),
])
def test_csv_bad_input(tmp_path, rows, message):
    with pytest.raises(ResultsError) as err:
        read_results(write_lines(tmp_path, rows, "runs.csv"))
    assert message in str(err.value)


def test_csv_counts(tmp_path):
    path = write_lines(tmp_path, ["task_id,success,trial,risk,infrastructure_error",
                                  "a,true,0,high-risk-write,", "a,0,1,,", "a,1,2,,true"],
                       "runs.csv")
    r = read_results(path)
    assert (r.source, r.successes.tolist(), r.totals.tolist(), r.excluded.tolist(), r.risks) \
        == ("csv", [1], [2], [1], ("high-risk-write",))


def test_missing_file_and_binary(tmp_path):
    with pytest.raises(ResultsError, match="no such file"):
        read_results(tmp_path / "nope.jsonl")
    path = tmp_path / "bin.jsonl"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ResultsError, match="not a text file"):
        read_results(path)


def test_record_location_format():
    assert str(ResultsError("f.json", "record 17", "bad")) == "f.json: record 17: bad"
    assert str(ResultsError("f.jsonl", 17, "bad")) == "f.jsonl:17: bad"


def test_write_runs_round_trips_through_the_reader(tmp_path):
    from passk import InfrastructureError, OnCallSimulator, demo_tasks, evaluate_suite
    from passk.io import write_runs

    class Flaky:
        def run(self, task, *, seed):
            if seed % 3 == 0:
                raise InfrastructureError("sandbox died")
            return OnCallSimulator().run(task, seed=seed)

    report = evaluate_suite(Flaky(), demo_tasks(), seed=3)
    path = tmp_path / "runs.jsonl"
    assert write_runs(path, report.runs) == 22
    back = read_results(path)
    assert back.task_ids == tuple(t.task_id for t in report.tasks)
    assert back.successes.tolist() == [t.successes for t in report.tasks]
    assert back.totals.tolist() == [t.runs for t in report.tasks]
    assert 0 < back.excluded.sum() == 22 - sum(t.runs for t in report.tasks)
    assert back.risks == ("high-risk-write", "read-only", "read-only")
