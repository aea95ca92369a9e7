"""passk.run.schedule.Schedule, the one scheduler, and early stopping end to end.

References: the settle rule computed for a whole suite at once
(:func:`passk.gate.curtailment.settled_tasks`, no running sums), the sequential rule
called directly on the counts a look must see (:func:`passk.stats.sequential.sequential_decision`),
fixed-n run_suite on the same seeds, and Monte Carlo with its standard error for the
false-pass rate of a suite stopped early.
"""

from __future__ import annotations

import contextlib
import json
import math
import re

import numpy as np
import pytest
from runner_helpers import SeedCoin, coin, p_tasks

from passk.adapter import RunResult, Task
from passk.cli import main as cli_main
from passk.criteria import GateCriteria
from passk.gate.curtailment import settled_tasks
from passk.repeats import run_seed
from passk.run.runner import read_log, run_suite
from passk.run.schedule import Schedule, Stopping
from passk.stability import RepeatPolicy
from passk.stats.sequential import sequential_decision

# --------------------------------------------------------------------------
# the schedule: curtailment as the whole-suite rule says, at every step
# --------------------------------------------------------------------------


def test_settled_agrees_with_the_whole_suite_rule_at_every_step():
    """300 random suites fed random outcomes in a random order: after every record, each
    task's ``settled`` is :func:`settled_tasks` on the suite's counts computed afresh."""
    rng = np.random.default_rng(28)
    checked = settled_seen = 0
    for _ in range(300):
        tasks = int(rng.integers(1, 5))
        plan = {f"t{i}": int(rng.integers(1, 7)) for i in range(tasks)}
        ks = {t: int(rng.integers(1, 4)) for t in plan}
        gate = GateCriteria(k=1, min_overall_pass_hat_k=float(rng.choice([0.0, 0.3, 0.7, 1.0])),
                            max_flakiness=float(rng.choice([0.0, 0.5, 1.0])),
                            on=str(rng.choice(["estimate", "lower-bound"])))
        s = Schedule(plan, gate, stopping="curtailed", ks=ks)
        runs = [(t, i) for t in plan for i in range(plan[t])]
        rng.shuffle(runs)
        for t, i in runs:
            outcome = str(rng.choice(["passed", "failed", "passed", "infrastructure"]))
            s.record(t, int(i), outcome)
            st = [s.states[u] for u in plan]
            want = settled_tasks([x.successes for x in st], [x.failures for x in st],
                                 [x.remaining for x in st], gate, ks=[ks[u] for u in plan])
            got = [s.settled(u) for u in plan]
            assert got == want, (plan, ks, gate)
            checked += 1
            settled_seen += sum(g and x.remaining > 0 for g, x in zip(got, st, strict=True))
    assert checked > 1000 and settled_seen > 100  # not degenerate


def test_a_rescored_run_replaces_its_first_outcome():
    s = Schedule({"a": 4}, GateCriteria(k=1, min_overall_pass_hat_k=0.5), stopping="curtailed")
    assert s.record("a", 0, "failed") and s.record("a", 0, "passed")
    a = s.states["a"]
    assert (a.successes, a.failures, a.remaining) == (1, 0, 3)


def test_stopping_and_schedule_bad_input_named():
    with pytest.raises(ValueError, match="cannot be combined"):
        Stopping(curtailed=True, looks=3)
    with pytest.raises(ValueError, match=r"looks \(1\)"):
        Stopping(looks=1)
    with pytest.raises(ValueError, match="'looks:L'"):
        Stopping.parse("looks:x")
    with pytest.raises(ValueError, match="one k"):
        Schedule({"a": 5, "b": 5}, GateCriteria(k=2), stopping="looks:3", ks={"b": 3})
    with pytest.raises(ValueError, match="unique"):
        Schedule({"a": 2}).add("a", 2)
    with pytest.raises(ValueError, match=r"planned runs \(0\)"):
        Schedule({"a": 0})
    with pytest.raises(ValueError, match="outcome"):
        Schedule({"a": 2}).record("a", 0, "won")
    with pytest.raises(ValueError, match="outside its 2"):
        Schedule({"a": 2}).record("a", 2, "passed")
    with pytest.raises(ValueError, match="stop_early"):
        run_suite(SeedCoin(), p_tasks([1.0]), stop_early=1, progress=False)
    with pytest.raises(ValueError, match="cannot be combined"):
        run_suite(SeedCoin(), p_tasks([1.0]), "curtailed", stop_early=3, progress=False)


# --------------------------------------------------------------------------
# early stopping: the looks see exactly their planned runs
# --------------------------------------------------------------------------


def _stopped_run(ps, n, looks, seed, **kw):
    tasks = p_tasks(ps)
    policy = RepeatPolicy(runs_by_risk={"read-only": n})
    return tasks, run_suite(SeedCoin(), tasks, policy, seed=seed, stop_early=looks,
                            progress=False, **kw)


@pytest.mark.parametrize("max_concurrency", [None, 7])
def test_each_look_is_the_rule_on_the_first_runs_of_every_task(max_concurrency):
    """The look's decision is sequential_decision on the outcomes of runs 0 .. m_j - 1 of
    every task (computed here from the seeds), and a stopped suite made exactly those
    runs, on a thread pool too."""
    rng = np.random.default_rng(4)
    stopped = 0
    for trial in range(12):
        ps = rng.choice([1.0, 0.99, 0.0, 0.5], size=60, p=[0.6, 0.2, 0.1, 0.1]) if trial % 2 \
            else rng.choice([0.0, 0.05, 1.0], size=60, p=[0.6, 0.3, 0.1])
        seed = int(rng.integers(2**31))
        tasks, run = _stopped_run(ps, 9, 3, seed, k=1, max_flakiness=1.0,
                                  max_concurrency=max_concurrency)
        targets = Schedule({"x": 9}, GateCriteria(k=1), stopping="looks:3").look_targets(9)
        for j, m in enumerate(targets[:-1]):
            c = [sum(coin(run_seed(seed, t.task_id, i), t.params["p"]) for i in range(m))
                 for t in tasks]
            want = sequential_decision(c, m, 1, 0.7, look=j + 1, looks=3).decision
            if want != "continue":
                break
        else:
            want, m = "continue", 9
        got = run.stopped.decision if run.stopped else "continue"
        assert got == want and run.runs_spent == m * len(tasks), (trial, got, want)
        assert {(r.task_id, r.run_index) for r in run.results} == {
            (t.task_id, i) for t in tasks for i in range(m)}
        stopped += run.stopped is not None
        if run.stopped is not None:
            line = run.gate.verdict()
            assert "stopped early at look" in line and f"of {9 * len(tasks)} planned" in line
            assert run.runs_saved == (9 - m) * len(tasks)
            if run.stopped.decision == "stop-fail":
                assert not run.gate.passed  # the upper end is below the bar: so is the mean
    assert stopped >= 8  # both ways of stopping were taken


def test_a_good_suite_stops_early_and_passes_a_bad_one_stops_and_blocks():
    _, good = _stopped_run([1.0] * 80, 12, 4, 3, k=1, max_flakiness=1.0)
    assert good.stopped.decision == "stop-pass" and good.stopped.look == 1
    assert good.gate.passed and good.runs_spent == 80  # one run per task at k = 1
    _, bad = _stopped_run([0.0] * 80, 12, 4, 3, k=2)
    assert bad.stopped.decision == "stop-fail" and not bad.gate.passed
    assert bad.runs_spent == 160 and bad.protocol.settings["stop_early"]["looks"] == 4


class InterruptAfter:
    """Raises KeyboardInterrupt on its ``after``-th call (as Ctrl-C would in the middle)."""

    def __init__(self, after: int) -> None:
        self.after, self.calls = after, 0

    def run(self, task: Task, *, seed: int) -> RunResult:
        self.calls += 1
        if self.calls == self.after:
            raise KeyboardInterrupt
        return SeedCoin().run(task, seed=seed)


def test_a_stop_with_a_pass_keeps_fixed_ns_flaky_tasks_under_the_chapters_cap():
    """Under the chapter's cap a stop with a pass only ends the tasks whose flaky verdict is
    settled, so on the same seeds the flaky tasks, and the verdict, are fixed n's; a
    suite of steady tasks with one flaky one is caught as fixed n catches it (at the price
    of the saving: a task that never failed may still turn flaky, so it runs on)."""
    rng = np.random.default_rng(7)
    policy = RepeatPolicy(runs_by_risk={"read-only": 12})
    stopped_pass = 0
    for _ in range(15):
        tasks = p_tasks(np.r_[rng.choice([1.0, 0.0], 70, p=[0.9, 0.1]), 0.9, 0.97])
        seed = int(rng.integers(2**31))
        fixed = run_suite(SeedCoin(), tasks, policy, k=1, seed=seed, progress=False)
        early = run_suite(SeedCoin(), tasks, policy, k=1, seed=seed, stop_early=4,
                          progress=False)
        assert set(early.gate.flaky_tasks) == set(fixed.gate.flaky_tasks)
        assert early.gate.passed == fixed.gate.passed
        if early.stopped is not None and early.stopped.decision == "stop-pass":
            stopped_pass += 1
            assert "each task then ran until its flakiness verdict was settled" in (
                early.gate.verdict())
            assert early.runs_spent <= fixed.runs_spent
    assert stopped_pass >= 10


def test_an_interrupted_stopped_run_resumes_to_the_same_stop(tmp_path):
    """Kill-and-resume: a run interrupted mid-way and resumed from its log stops at the same
    look, with exactly the runs of the uninterrupted one, each once."""
    tasks = p_tasks(np.r_[np.ones(50), np.full(10, 0.97)])
    policy = RepeatPolicy(runs_by_risk={"read-only": 12})
    whole = run_suite(SeedCoin(), tasks, policy, k=1, seed=9, stop_early=4, progress=False,
                      log=tmp_path / "whole.jsonl", max_flakiness=1.0)
    assert whole.stopped is not None
    log = tmp_path / "cut.jsonl"
    for after in (17, 41):
        with pytest.raises(KeyboardInterrupt):
            run_suite(InterruptAfter(after), tasks, policy, k=1, seed=9, stop_early=4,
                      progress=False, log=log, resume=log.exists(), max_flakiness=1.0)
    resumed = run_suite(InterruptAfter(10**9), tasks, policy, k=1, seed=9, stop_early=4,
                        progress=False, log=log, resume=True, max_flakiness=1.0)  # the log's adapter, uninterrupted
    assert resumed.stopped == whole.stopped
    def ends(run):
        return [(r.task_id, r.run_index, r.success, r.seed) for r in run.results]

    assert ends(resumed) == ends(whole)
    keys = [(r.task_id, r.trial, r.attempt) for r in read_log(log)]
    assert len(keys) == len(set(keys)) == whole.runs_spent


def test_passk_run_stop_early_on_the_command_line(tmp_path, capsys):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(f'{{"task_id": "t{i}", "p": 1.0}}\n' for i in range(80)))
    log = tmp_path / "run.jsonl"
    adapter = "runner_helpers:ADAPTER_OBJECT"
    code = cli_main(["run", adapter, str(tasks), "--log", str(log), "--k", "1",
                     "--max-flakiness", "1", "--stop-early", "4", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    assert re.search(r"gate: PASSED \(with: stopped early at look 1 of 4: the 98\.75% proved "
                     r"interval on mean pass\^1 \[0\.\d+, 1\.000\] clears the bar 0\.7 \(80 of 400 "
                     r"planned runs counted\)\)", out)
    assert "(320 saved by stopping early at look 1 of 4)" in out
    assert len(read_log(log)) == 80
    # the gate on the stopped log replays its records into the schedule: the stop holds,
    # and rides on the verdict line, as passk run said
    code = cli_main(["gate", str(log)])
    out = capsys.readouterr().out
    assert code == 0 and "gate: PASSED (with: stopped early at look 1 of 4" in out
    assert "short of its protocol's fixed plan" not in out
    # a record removed: the records no longer show the stop, so the log is short of its plan
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(log.read_text().splitlines(keepends=True)[:-1]))
    code = cli_main(["gate", str(cut)])
    out = capsys.readouterr().out
    assert code == 1 and "BLOCKED" in out and "do not show the early stop" in out
    # a stricter gate than the one the stop was proved for: refused, not decided
    code = cli_main(["gate", str(log), "--min-overall", "0.9"])
    err = capsys.readouterr().err
    assert code == 2 and "the run stopped early for the gate k 1, bar 0.7" in err
    assert "the gate asked for, k 1, bar 0.9" in err
    code = cli_main(["run", adapter, str(tasks), "--log", str(tmp_path / "j.jsonl"), "--k", "1",
                     "--max-flakiness", "1", "--stop-early", "4", "--no-progress", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["runs"]["stopped_early"]["decision"] == "stop-pass"
    assert out["gate"]["overrides"][0].startswith("stopped early at look 1 of 4")
    for bad, msg in ((["--stop-early", "1"], "at least 2"),
                     (["--stop-early", "3", "--stopping", "curtailed"], "cannot be combined")):
        usage = bad[1] == "1"  # argparse's own error
        with pytest.raises(SystemExit) if usage else contextlib.nullcontext():
            code = cli_main(["run", adapter, str(tasks), "--log", str(tmp_path / "x.jsonl"),
                             "--no-progress", *bad])
        err = capsys.readouterr().err
        assert msg in err
        if not usage:
            assert code == 2 and len(err.strip().splitlines()) == 1


# --------------------------------------------------------------------------
# the proved error, end to end: Monte Carlo through run_suite
# --------------------------------------------------------------------------


@pytest.mark.parametrize("confidence", [0.90, 0.95, 0.99])
def test_false_pass_rate_of_a_suite_stopped_early_is_at_most_alpha(confidence):
    """A suite just below the bar (40 flaky tasks, each p = 0.69: true mean pass^1 0.69 <
    0.7), run by run_suite with a flaky adapter and 3 looks (after 1, 2 and 3 runs of
    every task): the rate of stopping early with a pass is at most alpha/2, and the
    verdict's false-pass rate with early stopping at most fixed n's plus alpha/2, both
    within 2 Monte Carlo standard errors over 60 seeded suites (the difference is paired:
    the same seeds, so the same runs)."""
    alpha = 1 - confidence
    tasks = p_tasks([0.69] * 40)
    policy = RepeatPolicy(runs_by_risk={"read-only": 3})
    crit = {"k": 1, "max_flakiness": 1.0, "confidence": confidence, "progress": False}
    stop_pass, extra = [], []
    for seed in range(60):
        early = run_suite(SeedCoin(), tasks, policy, seed=seed, stop_early=3, **crit)
        stop_pass.append(early.stopped is not None and early.stopped.decision == "stop-pass")
        if early.stopped is None:
            extra.append(0.0)  # every run made: the same runs, the same verdict as fixed n
        else:
            fixed = run_suite(SeedCoin(), tasks, policy, seed=seed, **crit)
            extra.append(float(early.gate.passed) - float(fixed.gate.passed))
    for x, bound in ((stop_pass, alpha / 2), (extra, alpha / 2)):
        mean = float(np.mean(x))
        se = float(np.std(x, ddof=1)) / math.sqrt(len(x)) if len(set(x)) > 1 else 0.0
        assert mean <= bound + 2 * se, (confidence, mean, se)


def test_resuming_under_other_looks_is_refused(tmp_path):
    from passk.results.protocol import ProtocolMismatch

    tasks, log = p_tasks([1.0, 0.5]), tmp_path / "run.jsonl"
    run_suite(SeedCoin(), tasks, seed=1, stop_early=3, log=log, progress=False)
    with pytest.raises(ProtocolMismatch, match="stop_early"):
        run_suite(SeedCoin(), tasks, seed=1, stop_early=4, log=log, resume=True,
                  progress=False)
    with pytest.raises(ProtocolMismatch, match="stop_early"):
        run_suite(SeedCoin(), tasks, seed=1, log=log, resume=True, progress=False)
