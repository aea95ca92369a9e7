"""The trust pieces wired together: leaks and missed bars fail the gate; protocols must match."""

import json
from fractions import Fraction

import pytest

from passk.adapter import RunResult, Task, ToolCall
from passk.book.scenarios import (
    Budget,
    DiagnosisSimulator,
    GradedAdapter,
    GroundTruthGrader,
    LeakyDiagnosisSimulator,
    catalogue,
    environments,
    measure,
    split_tasks,
)
from passk.cli import main
from passk.flaky_adapter import OnCallSimulator, demo_tasks
from passk.gate.honest import Criteria, Measurement, honest_gate
from passk.repeats import RepeatRun, repeat_run
from passk.results.protocol import Protocol
from passk.run.runner import run_suite

BARS = Criteria({"discovery_rate": 0.75, "no_leak": 1.0})


def gate_dev_split(adapter, grader, budget_seconds=None, n=4):
    """n repeats of every dev scenario, measured and passed through the honest gate."""
    runs = {t.task_id: repeat_run(adapter, t, n, seed=11) for t in split_tasks("dev")}
    metrics = measure(runs, grader.canaries())
    protocol = Protocol({"split": "dev", "n": n, "budget": budget_seconds,
                         "criteria": BARS.fingerprint})
    return honest_gate(BARS, Measurement(metrics, protocol)), metrics


def test_measure_counts_successes_and_leaks_against_a_hand_count():
    """Two tasks, seven runs: 4 of the 6 counted runs pass; 2 of the 7 runs saw a canary
    (one of them an infrastructure error, which is not counted but still leaked)."""
    a, b = Task("a", "find the cause"), Task("b", "find the cause")
    seen = (ToolCall("notes", "", "cause [gt-a]"),)
    runs = [
        RepeatRun(a, (RunResult("a", 0, True), RunResult("a", 1, True, trajectory=seen),
                      RunResult("a", 2, False),
                      RunResult("a", 3, False, infrastructure_error=True, trajectory=seen))),
        RepeatRun(b, (RunResult("b", 0, True), RunResult("b", 1, True),
                      RunResult("b", 2, False, trajectory=(ToolCall("notes", "", "gt-zzz"),)))),
    ]
    expected = {"discovery_rate": Fraction(4, 6), "no_leak": 1 - Fraction(2, 7)}
    got = measure(runs, ["gt-a", "gt-b"])
    assert got == {name: float(value) for name, value in expected.items()}
    assert measure({rr.task.task_id: rr for rr in runs}, ["gt-a", "gt-b"]) == got


def test_measure_refuses_runs_with_nothing_counted():
    only_errors = RepeatRun(Task("a", "x"), (RunResult("a", 0, False, infrastructure_error=True),))
    with pytest.raises(ValueError, match="no counted run"):
        measure([only_errors], ["gt-a"])
    with pytest.raises(ValueError, match=r"runs \(0 tasks\)"):
        measure({}, ["gt-a"])


def test_a_leaky_harness_scores_perfectly_and_is_refused():
    grader = GroundTruthGrader("dev")
    notes = {s.scenario_id: s.truth for s in catalogue() if s.split == "dev"}
    leaky = GradedAdapter(LeakyDiagnosisSimulator(DiagnosisSimulator(environments("dev")), notes),
                          grader)
    result, metrics = gate_dev_split(leaky, grader)
    assert metrics["discovery_rate"] == 1.0 and metrics["no_leak"] == 0.0
    assert not result.passed
    assert result.reasons == ("no_leak: measured 0.000, bar 1.000: not met",)


def test_the_honest_harness_with_enough_budget_passes():
    grader = GroundTruthGrader("dev")
    result, metrics = gate_dev_split(GradedAdapter(DiagnosisSimulator(environments("dev")), grader),
                              grader)
    assert metrics["no_leak"] == 1.0 and result.passed, result.reasons


def test_a_budget_below_the_need_is_refused_with_both_figures():
    grader = GroundTruthGrader("dev")
    short = GradedAdapter(DiagnosisSimulator(environments("dev"), Budget(max_time_seconds=90)),
                          grader)
    result, metrics = gate_dev_split(short, grader, budget_seconds=90)
    assert metrics["discovery_rate"] <= 0.2
    assert not result.passed
    assert result.reasons == ((f"discovery_rate: measured {metrics['discovery_rate']:.3f}, "
                               "bar 0.750: not met"),)


@pytest.fixture
def two_logs(tmp_path):
    old, new, other = tmp_path / "old.jsonl", tmp_path / "new.jsonl", tmp_path / "other.jsonl"
    run_suite(OnCallSimulator(), demo_tasks(), seed=3, log=old, progress=False)
    run_suite(OnCallSimulator(), demo_tasks(), seed=4, log=new, progress=False)
    run_suite(OnCallSimulator(temperature=0.0), demo_tasks(), seed=4, log=other, progress=False)
    return old, new, other


def test_diff_and_gate_baseline_compare_under_one_protocol(two_logs, capsys):
    old, new, _ = two_logs
    # the same agent under two suite seeds: no regression shown, so diff exits 0
    assert main(["diff", str(old), str(new)]) == 0
    assert "no task regressed beyond repeat noise" in capsys.readouterr().out
    # the gate still blocks on its own: the runbook task is flaky under either seed
    assert main(["gate", str(new), "--baseline", str(old)]) == 1
    out = capsys.readouterr().out
    assert "exceeds the cap" in out and "regressed against the baseline" not in out
    assert main(["report", str(new), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert len(payload["protocol"]["fingerprint"]) == 16


@pytest.mark.parametrize("command", ["diff", "gate"])
def test_a_different_protocol_is_refused_naming_the_setting(two_logs, capsys, command):
    old, _, other = two_logs
    argv = (["diff", str(old), str(other)] if command == "diff"
            else ["gate", str(other), "--baseline", str(old)])
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "different protocols" in err and "adapter_settings.temperature: 0.7 != 0.0" in err


def test_a_file_without_protocol_is_not_compared_with_one_that_has_it(two_logs, tmp_path,
                                                                      capsys):
    old, _, _ = two_logs
    bare = tmp_path / "bare.jsonl"
    bare.write_text("".join(line for line in old.read_text().splitlines(keepends=True)
                            if '"protocol"' not in line))
    assert main(["diff", str(bare), str(old)]) == 2
    # a run log's records without its header: refused as a log whose header was deleted
    assert "has no protocol header line" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["diff", "gate"])
def test_the_change_under_test_is_named_and_nothing_else_may_differ(two_logs, capsys, command):
    old, _, other = two_logs
    argv = (["diff", str(old), str(other)] if command == "diff"
            else ["gate", str(other), "--baseline", str(old)])
    # temperature 0 leaves the tie-order flakiness in place (the chapter's attribution):
    # diff shows no regression (0); the gate still blocks on the flaky runbook task (1)
    expected = 0 if command == "diff" else 1
    assert main([*argv, "--allow-change", "adapter_settings.temperature"]) == expected
    err = capsys.readouterr().err
    assert main([*argv, "--allow-change", "adapter_settings"]) == expected
    assert "the versions differ in adapter_settings.temperature: 0.7 != 0.0" in err
    # naming another setting does not excuse the temperature
    assert main([*argv, "--allow-change", "adapter_settings.top_p"]) == 2
    assert "adapter_settings.temperature: 0.7 != 0.0" in capsys.readouterr().err
