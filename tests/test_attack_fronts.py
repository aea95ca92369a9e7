"""Class 5 (a front end applies a subset of the policy) and class 7 (bad values), on the
front ends that are not the command line: the pytest plugin, Inspect's ``Curtailment`` and
``run_suite(..., in_force=bind(...))``.

The plugin runs in a pytest session of its own (``pytester``) in a repository whose policy
lists the session's tests by their task ids (the node id without the repetition,
:func:`passk.integrations.pytest_plugin.task_id_of`), asks 5 runs of each and k = 5. The
reference is the honest session's verdict: test_write fails one run in five, so the gate
blocks (exit 10) naming its flakiness 4 (4/5)(1/5) = 0.64 (exact) over the cap 0.2. Each
attack (a marker ``k=1`` or ``runs=2``, ``--passk-runs 2``, ``--passk-k 1``, a looser bar or
cap, ``-k "not test_write"``) is either a usage error naming the policy's value, or the
honest verdict with the reason.
"""

from __future__ import annotations

import dataclasses
import json
from fractions import Fraction
from pathlib import Path

import pytest

from passk import stability
from passk.adapter import RunResult, Task
from passk.errors import BadInput, PolicyError
from passk.gate.bind import asked_from, bind
from passk.gate.policy import load_policy
from passk.integrations.pytest_plugin import EXIT_GATE_BLOCKED, task_id_of
from passk.run import runner
from passk.stability import RepeatPolicy

pytest_plugins = ["pytester"]

# numpy's and scipy's extension modules cannot load twice in one process, and pytester
# unloads what an inner session imported: load the report's path here, outside any session
stability.format_table(stability.suite_report(["warm", "up"], [1, 2], [2, 2], k=[1, 2]))
runner.suite_outlook([runner.task_outlook(1, 1, 1, k=1)], 0.7)

HUGE = "1" + "0" * 30
QUIET = ("-p", "no:hypothesispytest", "-p", "no:cacheprovider")
READ, WRITE = "test_agent.py::test_read", "test_agent.py::test_write"
POLICY = f'[tasks]\nids = ["{READ}", "{WRITE}"]\nruns = 5\n[gate]\nk = 5\ncap = 0.2\n'
FLAKY_REASON = "task test_agent.py::test_write: flakiness 0.640 exceeds the cap 0.200 (4/5 " \
               "passed)"


def agent(read: str = "", write: str = "") -> str:
    """The session's tests: test_read always passes, test_write fails its run 1 of 5."""
    return f"""
import pytest

@pytest.mark.passk({read})
def test_read(passk_run):
    assert True

@pytest.mark.passk({write})
def test_write(passk_run):
    assert passk_run != 1, "the second write lost the row"
"""


@pytest.fixture
def session(pytester: pytest.Pytester):
    """A repository with the policy; returns ``run(marks..., *args)``."""
    pytester.mkdir(".git")
    pytester.makefile(".toml", passk=POLICY)

    def run(*args: str, read: str = "", write: str = "") -> pytest.RunResult:
        pytester.makepyfile(test_agent=agent(read, write))
        return pytester.runpytest(*QUIET, *args)

    return run


def test_the_task_ids_are_the_node_ids_without_the_repetition():
    assert task_id_of(f"{WRITE}[passk2of5]", "passk2of5") == WRITE


def test_the_honest_session_blocks_naming_the_flaky_test(session):
    result = session()
    out = result.stdout.str()
    assert result.ret == EXIT_GATE_BLOCKED, out
    assert FLAKY_REASON in out
    assert "criteria: policy passk.toml (sha256 " in out
    assert "[policy passk.toml (sha256 " in out  # on the judge's verdict line
    # the policy's k and runs were taken without the markers or options giving them
    assert result.parseoutcomes()["passed"] == 9 and result.parseoutcomes()["failed"] == 1


@pytest.mark.parametrize(("marks", "args", "refusal"), [
    ({"write": "k=1"}, (), "k=1 would loosen the policy's k 5"),
    ({"write": "runs=2"}, (), "2 runs for read-only tasks would loosen the policy's runs 5"),
    ({"write": "runs=5, k=4"}, (), "k=4 would loosen the policy's k 5"),
    ({}, ("--passk-runs", "2"), "2 runs for read-only tasks would loosen the policy's runs 5"),
    ({}, ("--passk-k", "1"), "--passk-k 1 would loosen the policy's k 5"),
    ({}, ("--passk-max-flakiness", "0.9"), ("--passk-max-flakiness 0.9 would loosen the "
                                           "policy's cap 0.2")),
    ({}, ("--passk-min-overall", "0.1"), ("--passk-min-overall 0.1 would loosen the policy's "
                                         "bar 0.7")),
    ({}, ("--passk-confidence", "0.5"), ("--passk-confidence 0.5 would loosen the policy's "
                                        "confidence 0.95")),
])
def test_a_looser_marker_or_option_is_a_usage_error(session, marks, args, refusal):
    result = session(*args, **marks)
    err = result.stderr.str() + result.stdout.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, err
    assert refusal in err and "(passk.toml)" in err, err
    assert "Traceback" not in err


def test_a_stricter_marker_is_kept_and_the_verdict_line_is_the_judges(session):
    """runs 8 and k 6 for test_write (stricter than the policy's 5 and 5): kept. The tests
    then have different k, and the verdict line is still the judge's, naming the policy."""
    result = session(write="runs=8, k=6")
    out = result.stdout.str()
    assert result.ret == EXIT_GATE_BLOCKED
    flakiness = 4 * Fraction(7, 8) * Fraction(1, 8)
    assert (f"task {WRITE}: flakiness {float(flakiness):.3f} exceeds the cap 0.200 (7/8 "
            "passed)") in out
    (line,) = [ln for ln in out.splitlines() if ln.startswith("gate: ")]
    assert line.startswith("gate: BLOCKED  overall pass^k = ") and "[policy passk.toml (sha256" \
        in line, line


def test_the_flaky_test_deselected_still_blocks_naming_it(session):
    """``-k "not test_write"`` leaves the policy's task set short of test_write: the gate
    blocks (exit 10) naming it, where without the policy the session would pass."""
    result = session("-k", "not test_write")
    out = result.stdout.str()
    assert result.ret == EXIT_GATE_BLOCKED, out
    assert (f"incomplete results: task {WRITE}: the policy's task set lists it, the evidence "
            "has no runs of it") in out
    assert result.parseoutcomes()["passed"] == 5


def test_the_log_of_a_deselected_session_blocks_under_passk_gate(session, pytester,
                                                                 monkeypatch):
    from passk.cli.commands import main

    result = session("-k", "not test_write", "--passk-log", "runs.jsonl")
    assert result.ret == EXIT_GATE_BLOCKED
    monkeypatch.chdir(pytester.path)
    assert main(["gate", "runs.jsonl", "--json"]) == 1


@pytest.mark.parametrize("option", ["--passk-k", "--passk-runs", "--passk-min-runs"])
def test_a_huge_number_is_a_usage_error(session, option):
    result = session(option, HUGE)
    err = result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"{HUGE} is more than 1,000,000,000" in err and "Traceback" not in err


@pytest.mark.parametrize("mark", [f"runs=5, k={HUGE}", f"runs={HUGE}"])
def test_a_huge_marker_names_the_marker_not_an_overflow(session, mark):
    """As a bad marker is (a collection error naming it, exit 2): never an OverflowError
    or numpy's, with or without a policy."""
    result = session(write=mark)
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert f"({HUGE}) is more than 1,000,000,000: give a number of runs" in text
    assert "OverflowError" not in text and "would loosen" not in text


# --------------------------------------------------------------------------
# Inspect's Curtailment
# --------------------------------------------------------------------------

INSPECT_POLICY = """\
producer = "inspect"
[success]
scorer = "match"
values = ["C"]
[gate]
k = 3
bar = 0.9
cap = 0.1
on = "lower-bound"
confidence = 0.9
min_runs = 3
"""


@pytest.fixture
def inspect_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    pytest.importorskip("inspect_ai")
    (tmp_path / ".git").mkdir()
    (tmp_path / "passk.toml").write_text(INSPECT_POLICY, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(("kwargs", "refusal"), [
    ({"k": 2}, "k=2 would loosen the policy's k 3"),
    ({"min_overall_pass_hat_k": 0.5}, ("min_overall_pass_hat_k=0.5 would loosen the policy's "
                                      "bar 0.9")),
    ({"max_flakiness": 0.5}, "max_flakiness=0.5 would loosen the policy's cap 0.1"),
    ({"on": "estimate"}, "on=estimate would loosen the policy's on 'lower-bound'"),
    ({"confidence": 0.5}, "confidence=0.5 would loosen the policy's confidence 0.9"),
    ({"min_runs": 1}, "min_runs=1 would loosen the policy's min_runs 3"),
    ({"scorer": "lenient"}, "would loosen the policy's scorer 'match'"),
    ({"success_values": ["I"]}, "would loosen the policy's success values ['C']"),
    ({"success_threshold": 0.0}, "would loosen the policy's success rule (no threshold)"),
])
def test_curtailment_refuses_arguments_looser_than_the_policy(inspect_repo, kwargs, refusal):
    from passk.integrations.inspect import Curtailment

    with pytest.raises(PolicyError) as exc:
        Curtailment(**kwargs)
    assert refusal in str(exc.value) and "(passk.toml)" in str(exc.value)


def test_curtailment_gates_on_the_criteria_bind_gives(inspect_repo):
    from passk.integrations.inspect import Curtailment

    policy = load_policy(inspect_repo / "passk.toml")
    for kwargs, asked in (({}, {}), ({"k": 4, "max_flakiness": 0.05},
                                     {"k": 4, "max_flakiness": 0.05})):
        c = Curtailment(**kwargs)
        want = bind(asked_from(asked, "python"), policy, front="python", producer="inspect")
        assert c.in_force == want
        assert c.gate == dataclasses.replace(want.criteria, k=want.k)  # whole, not a subset
        assert (c.scorer, c.success_values) == ("match", ("C",))
    assert c.gate.max_flakiness == 0.05 and c.gate.min_runs == 3 and c.gate.on == "lower-bound"


def test_curtailment_under_a_proved_mode_is_refused(inspect_repo):
    """The settle rule is the chapter's: under a policy's proved mode, curtailing would stop
    epochs the proved bound needs, so it is refused at once (stopping early is not)."""
    from passk.integrations.inspect import Curtailment

    (inspect_repo / "passk.toml").write_text(INSPECT_POLICY + 'mode = "proved"\n',
                                             encoding="utf-8")
    with pytest.raises(BadInput, match="curtailment settles a task by the chapter's rule, "
                                       "not the proved mode in force"):
        Curtailment()
    assert Curtailment(stop_early=3).gate.mode == "proved"


# --------------------------------------------------------------------------
# run_suite(..., in_force=bind(...))
# --------------------------------------------------------------------------

class Flaky:
    """Task ``w`` fails its second run; every other run passes (runs made in this thread, in
    order)."""

    def __init__(self) -> None:
        self.made: dict[str, int] = {}

    def run(self, task: Task, *, seed: int) -> RunResult:
        i = self.made[task.task_id] = self.made.get(task.task_id, -1) + 1
        return RunResult(task.task_id, 0, not (task.task_id == "w" and i == 1))


SUITE_POLICY = '[tasks]\nids = ["r", "w"]\nruns = 5\n[gate]\nk = 5\ncap = 0.2\n'


@pytest.fixture
def suite_policy(tmp_path: Path):
    (tmp_path / ".git").mkdir()
    path = tmp_path / "passk.toml"
    path.write_text(SUITE_POLICY, encoding="utf-8")
    return load_policy(path)


TASKS = [Task("r"), Task("w")]


@pytest.mark.parametrize(("asked", "refusal"), [
    ({"k": 1}, "k=1 would loosen the policy's k 5"),
    ({"max_flakiness": 0.9}, "max_flakiness=0.9 would loosen the policy's cap 0.2"),
    ({"min_overall_pass_hat_k": 0.1}, ("min_overall_pass_hat_k=0.1 would loosen the policy's "
                                      "bar 0.7")),
    ({"mode": "chapter"}, None),  # the policy's own mode: kept
])
def test_bind_refuses_looser_python_arguments(suite_policy, asked, refusal):
    if refusal is None:
        assert bind(asked_from(asked, "python"), suite_policy, front="python").criteria.mode \
            == "chapter"
        return
    with pytest.raises(PolicyError, match=refusal):
        bind(asked_from(asked, "python"), suite_policy, front="python")


def test_run_suite_gates_under_the_criteria_in_force(suite_policy):
    f = bind({}, suite_policy, front="python")
    run = runner.run_suite(Flaky(), TASKS, RepeatPolicy(default=5), in_force=f,
                           progress=False)
    assert not run.gate.passed
    assert "task w: flakiness 0.640 exceeds the cap 0.200 (4/5 passed)" in run.gate.reasons
    assert run.gate.verdict().endswith(f"[{suite_policy.phrase}]")
    assert run.protocol.settings["k"] == 5 and run.protocol.settings["max_flakiness"] == 0.2


@pytest.mark.parametrize(("keywords", "words"), [
    ({"max_flakiness": 0.9}, "max_flakiness=0.9 would loosen the cap in force 0.2"),
    ({"min_overall_pass_hat_k": 0.1}, ("min_overall_pass_hat_k=0.1 would loosen the bar in "
                                      "force 0.7")),
    ({"k": 1}, "k=1 would loosen the k in force 5"),
    ({"gate_on": "estimate", "confidence": 0.5}, "confidence=0.5 would loosen"),
])
def test_run_suite_refuses_keywords_looser_than_in_force(suite_policy, keywords, words):
    """A keyword beside ``in_force`` is never dropped without a word: a looser one is
    refused (the policy named), so a caller cannot believe it gated at 0.9."""
    f = bind({"on": "lower-bound"} if "gate_on" in keywords else {}, suite_policy,
             front="python")
    with pytest.raises(PolicyError, match=words):
        runner.run_suite(Flaky(), TASKS, RepeatPolicy(default=5), in_force=f, progress=False,
                         **keywords)


@pytest.mark.parametrize(("tasks", "plan", "words"), [
    ([Task("r")], RepeatPolicy(default=5), "the suite lacks the policy's task w"),
    (TASKS, RepeatPolicy(runs_by_risk={"read-only": 2}, default=2), "2 runs for task r would loosen the policy's runs 5"),
])
def test_run_suite_refuses_a_plan_short_of_the_policy(suite_policy, tasks, plan, words):
    f = bind({}, suite_policy, front="python")
    with pytest.raises(PolicyError, match=words.replace("(", r"\(").replace(")", r"\)")):
        runner.run_suite(Flaky(), tasks, plan, in_force=f, progress=False)


def test_run_suite_under_a_proved_mode_decides_by_it(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "passk.toml").write_text(SUITE_POLICY.replace("cap = 0.2", 'cap = 1.0\n'
                                                              'mode = "proved"'),
                                         encoding="utf-8")
    f = bind({}, load_policy(tmp_path / "passk.toml"), front="python")
    run = runner.run_suite(Flaky(), TASKS, RepeatPolicy(default=5), in_force=f,
                           progress=False)
    assert "proved lower bound" in run.gate.verdict() and not run.gate.passed
    with pytest.raises(BadInput, match="not the proved mode in force"):
        runner.run_suite(Flaky(), TASKS, RepeatPolicy(default=5, stopping="curtailed"),
                         in_force=f, progress=False)
    assert json.dumps(run.protocol.settings)  # the protocol is still written
