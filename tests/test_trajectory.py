"""Trajectory rules: each a named predicate with a message; two-track scoring."""

import numpy as np
import pytest

from passk import OnCallSimulator, RunResult, ToolCall, demo_tasks
from passk.book.trajectory import (
    at_most,
    degrade_after_failure,
    escalate_before_restart,
    evidence_before_conclusion,
    grade_trajectory,
    read_before_write,
    two_track_report,
    within_steps,
)
from passk.repeats import repeat_run

ESCALATE = ToolCall("escalate", "payment-service", "paged")
RESTART = ToolCall("restart_service", "payment-service", "restarted")
METRICS = ToolCall("query_metrics", "payment-service", "0.12")
TIMEOUT = ToolCall("query_metrics", "payment-service", "timeout")


@pytest.mark.parametrize("trajectory, passed", [
    ((METRICS, ESCALATE), True),
    ((METRICS, ESCALATE, RESTART), True),
    ((METRICS, RESTART, ESCALATE), False),
    ((METRICS, RESTART), False),
    ((), True),
])
def test_escalate_before_restart(trajectory, passed):
    verdict = escalate_before_restart()(trajectory)
    assert verdict.passed is passed
    assert verdict.rule == "escalate-before-restart"
    assert (verdict.message == "") is passed


def test_at_most_counts_calls():
    assert at_most("restart_service", 1)((RESTART,)).passed
    verdict = at_most("restart_service", 1)((RESTART, RESTART))
    assert not verdict.passed and "2 times" in verdict.message
    with pytest.raises(ValueError, match="-1"):
        at_most("restart_service", -1)


def test_read_before_write_needs_a_successful_read():
    rule = read_before_write()
    assert rule((METRICS, ESCALATE)).passed
    assert not rule((ESCALATE, METRICS)).passed
    assert not rule((TIMEOUT, ESCALATE)).passed  # a timed-out read is not a read
    assert rule((METRICS,)).passed


def test_degrade_after_failure():
    rule = degrade_after_failure()
    assert rule((TIMEOUT, METRICS, RESTART)).passed  # one retry that worked
    assert rule((TIMEOUT, TIMEOUT, ESCALATE)).passed
    bad = rule((TIMEOUT, TIMEOUT, RESTART))
    assert not bad.passed and "expected escalate" in bad.message
    assert not rule((TIMEOUT, TIMEOUT)).passed  # ended without handing over


def test_within_steps_and_evidence_before_conclusion():
    assert within_steps(3)((METRICS,) * 3).passed
    assert not within_steps(3)((METRICS,) * 4).passed
    rule = evidence_before_conclusion(["query_metrics", "read_config_log"], minimum=2)
    submit = ToolCall("submit_diagnosis", "healthy", "accepted")
    assert not rule((METRICS, submit)).passed
    assert rule((METRICS, ToolCall("read_config_log", "", "none"), submit)).passed
    assert rule((METRICS,)).passed  # nothing concluded, nothing to check


def test_failing_simulator_runs_break_the_runbook_rules():
    runs = repeat_run(OnCallSimulator(), demo_tasks()[0], 60, seed=1)
    rules = [escalate_before_restart(), at_most("restart_service", 1), read_before_write()]
    for result in runs.results:
        verdicts = grade_trajectory(result.trajectory, rules)
        assert all(v.passed for v in verdicts) is result.success


def test_two_track_report_counts_right_but_lucky():
    runs = [RunResult("t", 0, True, trajectory=(METRICS, ESCALATE)),
            RunResult("t", 1, True, trajectory=(METRICS, RESTART, ESCALATE)),
            RunResult("t", 2, False, trajectory=(METRICS, RESTART)),
            RunResult("t", 3, False, infrastructure_error=True)]  # not counted
    report = two_track_report("t", runs, [escalate_before_restart()])
    assert report.outcome.tolist() == [True, True, False]
    assert report.trajectory.tolist() == [True, False, False]
    assert report.both.tolist() == [True, False, False]
    assert report.right_but_lucky == 1
    scores = report.pass_hat_k(1)
    assert scores == pytest.approx({"outcome": 2 / 3, "trajectory": 1 / 3, "both": 1 / 3})
    assert np.isnan(report.pass_hat_k(4)["outcome"])


def test_simulated_timeouts_meet_the_degradation_rules():
    """Runs that gave up after a timeout and its retry break degrade-after-failure; others hold."""
    sim = OnCallSimulator(deadline=0.5, deterministic_sort=True)
    rules = [degrade_after_failure(), read_before_write()]
    gave_up = retried = 0
    for result in repeat_run(sim, demo_tasks()[0], 300, seed=2).results:
        degrade, read = grade_trajectory(result.trajectory, rules)
        assert degrade.passed is (result.error is None)
        if result.error is not None:
            gave_up += 1
            assert "without escalate" in degrade.message or "nobody took over" in degrade.message
        # a retried read that answered is a read: writes never come before one
        assert read.passed
        retried += any(c.observation == "timeout" for c in result.trajectory) and result.success
    assert gave_up > 5 and retried > 50


# --- trajectory_table: what a reader sees of one run ---------------------------------

def _steps_of(table):
    """Every step number a table's rows name, expanding "a, b, ..., z" by the row's period."""
    seen = []
    for row in table.rows:
        parts = [p.strip() for p in row[0].split(",")]
        if "..." in parts:
            first, second, last = int(parts[0]), int(parts[1]), int(parts[-1])
            seen += list(range(first, last + 1, second - first))
        else:
            seen += [int(p) for p in parts]
    return sorted(seen)


def _first_failure(sim, task, seeds=range(200)):
    return next(r for r in (sim.run(task, seed=s) for s in seeds) if not r.success)


def test_trajectory_table_folds_the_restart_loop_and_keeps_every_step():
    from passk.book.trajectory import trajectory_table
    run = _first_failure(OnCallSimulator(), demo_tasks()[0])
    table = trajectory_table(run)
    assert len(run.trajectory) == 8 and len(table.rows) == 4
    assert _steps_of(table) == list(range(1, len(run.trajectory) + 1))
    restart = next(r for r in table.rows if r[1] == "restart_service")
    assert restart[0] == "3, 5, 7" and restart[3] == "3"
    assert table.header == ("steps", "call", "answer", "times")  # no timing: nothing timed out
    assert "failed" in table.title and "restarts=3" in table.note
    assert "payment-service" in table.note  # the one argument, named once
    assert trajectory_table(run, label="baseline").title == "baseline: " + table.title


def test_trajectory_table_shows_a_timeout_against_its_deadline():
    from passk.book.trajectory import trajectory_table
    sim = OnCallSimulator(deterministic_sort=True, temperature=0.0, deadline=0.5)
    run = _first_failure(sim, demo_tasks()[0])
    table = trajectory_table(run)
    assert table.header[-1] == "timing"
    timed_out = [c for c in run.trajectory if c.latency > c.deadline]
    assert timed_out and run.error and run.error[1:] in table.note
    text = " ".join(row[-1] for row in table.rows)
    for call in timed_out:
        assert f"{call.latency:.2f} s" in text
    assert "over the 0.50 s deadline" in text


def test_trajectory_table_says_which_parallel_write_stands():
    from passk.book.trajectory import trajectory_table
    sim = OnCallSimulator(deterministic_sort=True, temperature=0.0, concurrency=True)
    run = _first_failure(sim, demo_tasks()[1])
    rows = {row[1]: row for row in trajectory_table(run).rows}
    last = max(run.trajectory, key=lambda c: c.finished)
    assert rows[last.tool][-1].endswith("done last: its answer stays")
    assert run.final_state["answer"] == last.observation


def test_trajectory_table_markdown_is_a_table_and_escapes_pipes():
    from passk.book.trajectory import trajectory_table
    run = RunResult("t", 2, True, {"answer": "a"},
                    (ToolCall("grep", "x", "a|b"), ToolCall("ls", "y", "ok")))
    table = trajectory_table(run)
    md = table._repr_markdown_().splitlines()
    assert md[0] == "**t, run 3: passed.** Final state answer=a."
    assert md[2] == "| steps | call | answer | times |"
    assert md[3].startswith("|---")
    assert "a\\|b" in md[4] and "grep(x)" in md[4]  # two arguments: shown per call
    assert str(table).startswith("t, run 3: passed")  # runs counted from 1
    assert trajectory_table(RunResult("t", 0, True)).rows == ()


def test_side_by_side_puts_step_i_of_every_run_on_row_i():
    from passk.book.trajectory import side_by_side
    from passk.flaky_adapter import fragments_read
    sim, task = OnCallSimulator(), demo_tasks()[0]
    runs = [sim.run(task, seed=s) for s in range(40)]
    failing = next(r for r in runs if not r.success)
    passing = next(r for r in runs if r.success
                   and fragments_read(r) == fragments_read(failing)[::-1])
    table = side_by_side(failing, passing)
    assert table.header == ("step", f"run {failing.run_index + 1} (FAIL)",
                            f"run {passing.run_index + 1} (pass)")
    assert len(table.rows) == len(failing.trajectory) + 1
    for i, row in enumerate(table.rows[:-1]):
        for cell, run in zip(row[1:], (failing, passing)):
            if i < len(run.trajectory):
                call = run.trajectory[i]
                assert cell == f"{call.tool} → {call.observation}"
            else:
                assert cell == ""
    assert table.rows[-1][1] == "action=restart, escalated=False, restarts=3"
    with pytest.raises(ValueError, match="1 labels for 2 runs"):
        side_by_side(failing, passing, labels=["x"])
    with pytest.raises(ValueError, match="at least one run"):
        side_by_side()
