"""One run record for every writer: the runner's log, write_runs, the plugin's --passk-log.

Each keeps the run's seed, attempt, seconds and error, so that a failing run
can be re-run from its log line.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import random
import sys

import pytest

from passk import OnCallSimulator, demo_tasks, evaluate_suite
from passk.repeats import run_once, run_seed
from passk.results.read import read_results, write_runs
from passk.results.runlog import RunRecord

pytest_plugins = ["pytester"]

FIELDS = [f.name for f in dataclasses.fields(RunRecord)]


def test_every_writer_writes_the_same_record(tmp_path):
    from passk.run.runner import LogRecord

    assert LogRecord is RunRecord  # passk run's log line is the one record
    report = evaluate_suite(OnCallSimulator(), demo_tasks(), seed=3)
    path = tmp_path / "runs.jsonl"
    write_runs(path, report.runs, protocol=report.protocol, seed=3)
    lines = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    assert lines and all(list(line) == FIELDS for line in lines)
    results = {(r.task_id, r.run_index): r for rep in report.runs for r in rep.results}
    for line in lines:
        r = results[(line["task_id"], line["trial"])]
        assert (line["seed"], line["seconds"], line["error"]) == (r.seed, r.seconds, r.error)
        assert line["seed"] is not None
    back = read_results(path)
    assert back.successes.tolist() == [10, 5, 5] and back.protocol == report.protocol


def test_a_failing_run_is_replayed_from_its_log_line(tmp_path):
    report = evaluate_suite(OnCallSimulator(), demo_tasks(), seed=3)
    path = tmp_path / "runs.jsonl"
    write_runs(path, report.runs, protocol=report.protocol, seed=3)
    failed = next(json.loads(line) for line in path.read_text().splitlines()[1:]
                  if not json.loads(line)["success"])
    task = next(t for t in demo_tasks() if t.task_id == failed["task_id"])
    again = run_once(OnCallSimulator(), task, failed["trial"], failed["seed"])
    assert again.success is False and again.seed == failed["seed"]


COIN = """
import random
import pytest

@pytest.mark.passk(runs=12)
def test_coin(passk_seed):
    assert random.Random(passk_seed).random() < 0.5, "tails"
"""


def test_a_failing_plugin_repetition_reruns_from_its_log_line(pytester):
    pytester.makepyfile(test_suite=COIN)
    log = pytester.path / "runs.jsonl"
    pytester.runpytest("-p", "no:hypothesispytest", "--passk-log", str(log))
    lines = [json.loads(line) for line in log.read_text().splitlines()[1:]]
    assert lines and all(list(line) == FIELDS for line in lines)
    failed = [line for line in lines if not line["success"]]
    assert failed and all(line["error"] and "tails" in line["error"] for line in failed)
    for line in lines:  # the seed each repetition's passk_seed fixture gave it
        assert line["seed"] == run_seed(0, line["task_id"], line["trial"])
    # re-run the failing repetition from its line: the test, called with the line's seed
    spec = importlib.util.spec_from_file_location("replayed_suite",
                                                  pytester.path / "test_suite.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.pop("replayed_suite", None)
    spec.loader.exec_module(module)
    line = failed[0]
    with pytest.raises(AssertionError, match="tails"):
        module.test_coin(line["seed"])
    passed = next(line for line in lines if line["success"])
    module.test_coin(passed["seed"])  # and a passing one passes again
    assert random.Random(line["seed"]).random() >= 0.5
