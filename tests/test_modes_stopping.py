"""Gate modes and stopping rules compose, or refuse (issue 38, items 5 and 8).

- Curtailment accepts the chapter's rule only: under it, the curtailed schedule decides as
  fixed n (verdict and flaky tasks) in every suite tried (small suites exhaustively, larger
  ones at random, with infrastructure errors); under a proved mode it is refused, with the
  reason, on every path (Schedule, settled_tasks, run_suite, passk run, the pytest plugin,
  Inspect's Curtailment, passk gate on a curtailed log).
- Early stopping under a proved mode stops only to fail, so on every outcome path a pass
  under early stopping is a pass at fixed n: the false pass is at most fixed n's, the
  stated level. A log stopped with a pass by the chapter's looks is refused in a proved mode.

Oracle: the judge (:func:`passk.gate.judge.judge`) on every planned run of the same outcomes.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import random
from pathlib import Path

import numpy as np
import pytest

from passk.cli.commands import main as passk_main
from passk.criteria import GateCriteria
from passk.errors import BadInput, PasskError
from passk.gate.curtailment import GateSettings, settled_tasks
from passk.gate.judge import judge
from passk.results.counts import Results
from passk.run.schedule import Schedule, Stopping
from passk.stats.sequential import sequential_decision

PROVED = ("proved", "proved-warn")
REASON = "curtailment settles a task by the chapter's rule, not the"
pytest_plugins = ["pytester"]


def passk(*argv: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = passk_main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def _drive(schedule: Schedule, outcomes: dict[str, list[str]]) -> Results:
    """Run the schedule to its end, each run's outcome given in advance."""
    while (run := schedule.next_run()) is not None:
        task, index, attempt = run
        schedule.record(task, index, outcomes[task][index], attempt)
    return schedule.results()


def _fixed(outcomes: dict[str, list[str]]) -> Results:
    ids = tuple(outcomes)
    c = [sum(o == "passed" for o in outcomes[t]) for t in ids]
    m = [sum(o in ("passed", "failed") for o in outcomes[t]) for t in ids]
    x = [len(outcomes[t]) - m[i] for i, t in enumerate(ids)]
    return Results(ids, np.asarray(c, dtype=np.int64), np.asarray(m, dtype=np.int64),
                   np.asarray(x, dtype=np.int64), ("read-only",) * len(ids))


def _same(criteria: GateCriteria, outcomes: dict[str, list[str]], stopping: str) -> tuple:
    cut = judge(_drive(Schedule({t: len(o) for t, o in outcomes.items()}, criteria,
                                stopping=stopping), outcomes), criteria)
    fixed = judge(_fixed(outcomes), criteria)
    return (cut.passed, cut.flaky_tasks), (fixed.passed, fixed.flaky_tasks)


# -- curtailment under the mode it accepts: fixed n's decision ----------------------------

def _grid() -> list[GateCriteria]:
    return [GateCriteria(k=k, min_overall_pass_hat_k=bar, max_flakiness=cap, on=on)
            for k, bar in ((1, 0.7), (2, 0.3)) for cap in (0.5, 1.0)
            for on in ("estimate", "lower-bound")]


def test_curtailment_decides_as_fixed_n_on_every_small_suite():
    """Every pass/fail sequence of two tasks of 3 runs (64 suites), 8 gates, both `on`."""
    checked = 0
    for crit in _grid():
        for seq in itertools.product(("passed", "failed"), repeat=6):
            outcomes = {"a": list(seq[:3]), "b": list(seq[3:])}
            cut, fixed = _same(crit, outcomes, "curtailed")
            assert cut == fixed, (crit, outcomes, cut, fixed)
            checked += 1
    assert checked == 8 * 64


def test_curtailment_decides_as_fixed_n_on_random_larger_suites():
    rng = random.Random(38)
    for _ in range(60):
        crit = rng.choice(_grid())
        outcomes = {f"t{i}": rng.choices(("passed", "failed", "infrastructure"),
                                         weights=(rng.random() * 10, 1, 0.3),
                                         k=rng.choice((4, 6, 8)))
                    for i in range(rng.randint(3, 8))}
        cut, fixed = _same(crit, outcomes, "curtailed")
        assert cut == fixed, (crit, outcomes)


# -- curtailment under a proved mode: refused on every path -------------------------------

@pytest.mark.parametrize("mode", PROVED)
@pytest.mark.parametrize("stopping", ["curtailed", Stopping(curtailed=True)])
def test_schedule_refuses_curtailment_in_a_proved_mode(mode, stopping):
    with pytest.raises(BadInput, match=REASON) as exc:
        Schedule({"a": 4}, GateCriteria(mode=mode), stopping=stopping)
    assert f"not the {mode} mode in force" in str(exc.value) and exc.value.exit_code == 2
    assert "\n" not in str(exc.value)
    Schedule({"a": 4}, GateCriteria(mode=mode))  # fixed n: accepted
    Schedule({"a": 4}, GateCriteria(mode=mode), stopping="looks:2")  # looks: accepted


@pytest.mark.parametrize("mode", PROVED)
def test_settled_tasks_refuses_a_proved_mode(mode):
    with pytest.raises(PasskError, match=REASON):
        settled_tasks([1], [1], [2], GateSettings(mode=mode))
    assert settled_tasks([1], [1], [2], GateSettings()) == [True]


@pytest.mark.parametrize("mode", PROVED)
def test_run_suite_refuses_curtailment_in_a_proved_mode(mode):
    from passk import OnCallSimulator, demo_tasks
    from passk.gate.bind import bind
    from passk.run.runner import run_suite

    in_force = bind({"mode": mode}, None)
    with pytest.raises(BadInput, match=REASON):
        run_suite(OnCallSimulator(), demo_tasks(), "curtailed", seed=3, progress=False,
                  in_force=in_force)


ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("mode", PROVED)
@pytest.mark.parametrize("spelling", [["--stopping", "curtailed"]])
def test_passk_run_curtailed_under_a_proved_policy_exits_2(tmp_path, monkeypatch, mode,
                                                           spelling):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "passk.toml").write_text(f'[gate]\nmode = "{mode}"\n')
    code, out, err = passk("run", "passk.flaky_adapter:OnCallSimulator",
                           ROOT / "examples" / "oncall_tasks.jsonl", "--log",
                           tmp_path / "log.jsonl", *spelling, "--no-progress")
    assert code == 2, (out, err)
    assert REASON in err and f"{mode} mode in force" in err and err.count("\n") == 1, err
    assert not (tmp_path / "log.jsonl").exists() or not (tmp_path / "log.jsonl").read_text()


def test_pytest_plugin_refuses_curtailed_with_a_proved_mode(pytester):
    pytester.makepyfile(test_suite="import pytest\n\n@pytest.mark.passk(runs=4, k=1)\n"
                                   "def test_a():\n    assert True\n")
    for mode in PROVED:
        result = pytester.runpytest("-p", "no:hypothesispytest", "-p", "passk",
                                    "--passk-policy", "curtailed", "--passk-mode", mode)
        assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
        err = result.stderr.str()
        assert REASON in err and f"{mode} mode in force" in err, err
    fine = pytester.runpytest("-p", "no:hypothesispytest", "-p", "passk", "--passk-policy",
                              "curtailed", "--passk-mode", "chapter")
    assert fine.ret == pytest.ExitCode.OK


def test_inspect_curtailment_refuses_a_proved_policy(tmp_path):
    from passk.integrations.inspect import Curtailment

    for mode in PROVED:
        policy = tmp_path / f"{mode}.toml"
        policy.write_text(f'[gate]\nmode = "{mode}"\n')
        with pytest.raises(PasskError, match=REASON):
            Curtailment(policy=policy)
        assert Curtailment(policy=policy, stop_early=2).gate.mode == mode  # looks: accepted


def _curtailed_log(tmp_path: Path) -> Path:
    log = tmp_path / "cut.jsonl"
    code, _, err = passk("run", "passk.flaky_adapter:OnCallSimulator",
                         ROOT / "examples" / "oncall_tasks.jsonl", "--log", log, "--seed", "3",
                         "--stopping", "curtailed", "--no-progress", "--k", "2")
    assert code in (0, 1), err
    return log


@pytest.mark.parametrize("fmt", [[], ["--json"], ["--markdown"]])
def test_gate_on_a_curtailed_log_in_a_proved_mode_exits_2(tmp_path, monkeypatch, fmt):
    monkeypatch.chdir(tmp_path)
    log = _curtailed_log(tmp_path)
    assert passk("gate", log, *fmt)[0] in (0, 1)  # the mode it served: decided
    for mode in PROVED:
        code, out, err = passk("gate", log, "--mode", mode, *fmt)
        assert code == 2, (out, err)
        assert "the runs were curtailed" in err and REASON in err, err


# -- early stopping under a proved mode: the false pass is fixed n's ----------------------

def test_looks_that_may_not_pass_never_pass():
    rng = np.random.default_rng(5)
    for _ in range(60):
        t, n = int(rng.integers(2, 30)), int(rng.integers(2, 16))
        c = rng.binomial(n, rng.uniform(0.5, 1.0, t))
        d = sequential_decision(c, n, 1, 0.6, look=1, looks=3, stop_pass=False)
        both = sequential_decision(c, n, 1, 0.6, look=1, looks=3)
        assert d.decision != "stop-pass"
        assert (d.decision == "stop-fail") == (both.decision == "stop-fail")


@pytest.mark.parametrize("mode", PROVED)
@pytest.mark.parametrize("conf", [0.90, 0.95, 0.99])
def test_early_stopping_in_a_proved_mode_passes_only_what_fixed_n_passes(mode, conf):
    """On every outcome path: passed under looks => passed at fixed n (so the false pass
    is at most fixed n's, the mode's stated level); a suite not stopped is judged on fixed
    n's counts, so its verdict is fixed n's."""
    rng = np.random.default_rng(int(conf * 100))
    crit = GateCriteria(k=1, min_overall_pass_hat_k=0.7, max_flakiness=1.0, mode=mode,
                        confidence=conf)
    stops = 0
    for _ in range(16):
        tasks = int(rng.integers(20, 40))
        rates = rng.uniform(0.55, 1.0, tasks) if rng.random() < 0.7 else rng.uniform(0, 0.6,
                                                                                      tasks)
        outcomes = {f"t{i}": ["passed" if rng.random() < p else "failed" for _ in range(12)]
                    for i, p in enumerate(rates)}
        s = Schedule(dict.fromkeys(outcomes, 12), crit, stopping="looks:3")
        early = judge(_drive(s, outcomes), crit)
        fixed = judge(_fixed(outcomes), crit)
        assert all(d.decision != "stop-pass" for d in s.looks)
        if early.passed:
            assert fixed.passed
        if s.stopped is None:
            assert early.passed == fixed.passed
        else:
            stops += 1
            assert not early.passed
    assert stops > 0  # the looks did stop some suites (to fail)


def test_chapter_mode_still_stops_with_a_pass():
    crit = GateCriteria(k=1, max_flakiness=1.0)
    outcomes = {f"t{i}": ["passed"] * 12 for i in range(40)}
    s = Schedule(dict.fromkeys(outcomes, 12), crit, stopping="looks:3")
    _drive(s, outcomes)
    assert s.stopped is not None and s.stopped.decision == "stop-pass"


ALWAYS_PASSES = """
from passk.adapter import RunResult

class AlwaysPasses:
    def run(self, task, *, seed, run_index=0):
        return RunResult(task_id=task.task_id, run_index=run_index, success=True)
"""


@pytest.mark.parametrize("fmt", [[], ["--json"], ["--markdown"]])
def test_gate_in_a_proved_mode_refuses_a_log_the_chapters_looks_passed(tmp_path, monkeypatch,
                                                                      fmt):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "always_passes.py").write_text(ALWAYS_PASSES)
    monkeypatch.syspath_prepend(str(tmp_path))
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps({"task_id": f"t{i}", "risk": "read-only",
                                         "instruction": "x"}) + "\n" for i in range(40)))
    log = tmp_path / "stop.jsonl"
    code, out, err = passk("run", "always_passes:AlwaysPasses", tasks, "--log", log,
                           "--stop-early", "2", "--no-progress", "--k", "1",
                           "--runs-read-only", "8", "--max-flakiness", "1")
    assert code == 0 and "clears the bar" in out, (out, err)
    assert passk("gate", log, *fmt)[0] == 0  # the chapter's rule, which the looks served
    for mode in PROVED:
        code, out, err = passk("gate", log, "--mode", mode, *fmt)
        assert code == 2, (out, err)
        assert "stopped early with a pass" in err and repr(mode) in err, err
