"""The first divergence: where a flaky task's passing and failing runs part (issue 39).

Attacked by class: each producer's trajectories (passk's own log, Inspect logs written by
inspect_ai's own code, tau2 simulations in tau2's data model), each kind of divergence
(a tool called or not, another tool, its arguments, its answer, the order of its answer),
each way of finding none (no trajectory, identical up to the grader, inseparable), and
every front end (the Python API, ``passk attribute`` in text, --json and --markdown). The
references are outside the code under test: the simulator's own ``fragments_read`` of
each run in memory, and the producers' own counts (``read_results``).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from passk.analysis.divergence import divergence_report, first_divergence, read_divergences
from passk.cli.commands import main
from passk.flaky_adapter import OnCallSimulator, demo_tasks, fragments_read
from passk.results.read import read_results
from passk.results.runlog import RunRecord, read_run_trajectories
from passk.results.trajectory import Step, Trajectory, normalise, step_items
from passk.results.transcripts import read_trajectories
from passk.run.runner import run_suite
from passk.stability import RepeatPolicy

POLICY = RepeatPolicy(runs_by_risk={"high-risk-write": 30, "read-only": 6})


@pytest.fixture(scope="module")
def simulator_log(tmp_path_factory):
    """The book's simulator at its defaults, run by passk run's runner into a log."""
    log = tmp_path_factory.mktemp("sim") / "runs.jsonl"
    run = run_suite(OnCallSimulator(), demo_tasks(), POLICY, seed=11, progress=False, log=log)
    return log, run


# --------------------------------------------------------------------------
# the trajectory in passk's own log: optional, backward compatible
# --------------------------------------------------------------------------


def test_a_record_without_trajectory_is_written_as_before():
    line = RunRecord("a", 0, True, seed=7).to_json()
    assert "trajectory" not in line
    with_steps = RunRecord("a", 0, True, seed=7, trajectory=[{"tool": "q", "argument": "",
                                                              "observation": "1"}]).to_json()
    assert json.loads(with_steps)["trajectory"][0]["tool"] == "q"


def test_the_counts_are_the_same_with_and_without_trajectories(tmp_path):
    with_log, without_log = tmp_path / "with.jsonl", tmp_path / "without.jsonl"
    a = run_suite(OnCallSimulator(), demo_tasks(), POLICY, seed=5, progress=False, log=with_log)
    b = run_suite(OnCallSimulator(), demo_tasks(), POLICY, seed=5, progress=False,
                  log=without_log, trajectories=False)
    assert "trajectory" in with_log.read_text()
    assert "trajectory" not in without_log.read_text()
    ra, rb = read_results(with_log), read_results(without_log)
    assert ra.successes.tolist() == rb.successes.tolist() == [
        sum(r.success for r in a.results if r.task_id == t) for t in ra.task_ids]
    assert ra.totals.tolist() == rb.totals.tolist()
    assert [r.success for r in b.results] == [r.success for r in a.results]
    # a log without trajectories: every run read, none recorded
    runs = read_run_trajectories(without_log)
    assert len(runs) == sum(ra.totals) and not any(t.recorded for t in runs)


def test_resume_reads_a_log_with_trajectories(tmp_path):
    log = tmp_path / "runs.jsonl"
    full = run_suite(OnCallSimulator(), demo_tasks(), POLICY, seed=9, progress=False, log=log)
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:20]))
    resumed = run_suite(OnCallSimulator(), demo_tasks(), POLICY, seed=9, progress=False, log=log,
                        resume=True)
    assert resumed.report.gate.passed == full.report.gate.passed
    assert [t.successes for t in resumed.report.tasks] == [t.successes for t in full.report.tasks]
    assert len(read_run_trajectories(log)) == len(full.results)


def test_the_recorded_steps_are_the_runs_tool_calls(simulator_log):
    log, run = simulator_log
    in_memory = {(r.task_id, f"run {r.run_index}"): r for r in run.results}
    read = read_trajectories(log)
    assert len(read) == len(in_memory)
    for t in read:
        r = in_memory[(t.task_id, t.run)]
        assert t.success == r.success
        assert [(s.name, s.args, s.observation) for s in t.steps] == [
            (c.tool, c.argument, c.observation) for c in r.trajectory]


@pytest.mark.parametrize(("field", "value", "said"), [
    ("trajectory", "query_metrics", "field 'trajectory' must be a list of tool calls"),
    ("trajectory", [{"argument": "x"}], "field 'trajectory' must be a list of tool calls"),
    ("success", "yes", "field 'success' must be true or false"),
    ("task_id", None, "field 'task_id' must be a string"),
])
def test_a_bad_record_is_one_line_naming_the_line_and_field(tmp_path, capsys, field, value, said):
    log = tmp_path / "bad.jsonl"
    good = {"task_id": "a", "trial": 0, "success": True, "trajectory": []}
    bad = {**good, "trial": 1, field: value}
    log.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    assert main(["attribute", str(log)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"bad.jsonl:2: {said}" in err


# --------------------------------------------------------------------------
# the book's simulator: the tie order, found without a hint
# --------------------------------------------------------------------------


def test_the_simulator_parts_at_the_search_runbook_answer(simulator_log):
    log, run = simulator_log
    report = read_divergences(log)
    assert [d.task_id for d in report.tasks] == ["payment-alert"]
    assert set(report.stable) == {"read-error-rate", "read-last-deploy"}
    d = report.tasks[0]
    payment = [r for r in run.results if r.task_id == "payment-alert"]
    fails = [r for r in payment if not r.success]
    passes = [r for r in payment if r.success]
    assert (d.failures, d.passes) == (len(fails), len(passes)) and fails and passes
    assert d.status == "found" and d.step == 2 and d.kind == "order"
    group = d.groups[0]
    assert group.step.name == "search_runbook"
    # the reference: what each run read, from the runs in memory
    assert {fragments_read(r) for r in fails} == {("rb-pay-restart", "rb-pay-escalate")}
    assert group.step.items == ("rb-pay-restart", "rb-pay-escalate")
    assert group.failures == len(fails)
    assert group.passes == sum(fragments_read(r) == group.step.items for r in passes) == 0
    assert group.reordered == sum(fragments_read(r) == ("rb-pay-escalate", "rb-pay-restart")
                                  for r in passes)
    # the passing run shown beside a failing one got the same fragments in the other order
    assert group.reordered > 0
    beside = next(t for t in read_trajectories(log) if t.run == d.example[1]
                  and t.task_id == "payment-alert")
    assert beside.success and beside.steps[1].items == ("rb-pay-escalate", "rb-pay-restart")
    assert d.why.startswith(f"the runs part at step 2: in {len(fails)} of {len(fails)} failures "
                            "search_runbook(payment-service) answered [rb-pay-restart, "
                            f"rb-pay-escalate]; in 0 of {len(passes)} passes")


def test_a_high_temperature_parts_at_the_action_not_the_answer(tmp_path):
    log = tmp_path / "hot.jsonl"
    run = run_suite(OnCallSimulator(temperature=2.0), demo_tasks()[:1], POLICY, seed=2,
                    progress=False, log=log)
    d = read_divergences(log).tasks[0]
    fails = [r for r in run.results if not r.success]
    # at temperature 2 a run that read [restart, escalate] may still escalate: the answer
    # alone does not part them; the action does
    assert d.kind == "tool" and d.step == 3
    assert d.groups[0].step.name == "restart_service"
    assert d.groups[0].failures == sum(r.trajectory[2].tool == "restart_service" for r in fails)


# --------------------------------------------------------------------------
# each kind of divergence, and each way of finding none
# --------------------------------------------------------------------------


def _run(name, ok, *steps):
    return Trajectory("t", name, ok, tuple(Step.of(*s) for s in steps))


Q = ("query", "s", "0.12")


@pytest.mark.parametrize(("fail_steps", "kind", "step"), [
    ((Q,), "ended", 2),                                          # the run stopped short
    ((Q, ("restart", "s", "done")), "tool", 2),                  # another tool
    ((Q, ("search", "other", '["a", "b"]')), "arguments", 2),    # other arguments
    ((Q, ("search", "s", '["b", "a"]')), "order", 2),            # the same items, reordered
    ((Q, ("search", "s", '["a", "c"]')), "observation", 2),      # another answer
    ((("query", "s", "0.99"),), "observation", 1),               # the first step already
    ((("search", "s", "x"), Q), "tool", 1),                      # the tools in another order
])
def test_each_kind_of_divergence_is_named(fail_steps, kind, step):
    passes = [_run(f"p{i}", True, Q, ("search", "s", '["a", "b"]'), ("escalate", "s", "ok"))
              for i in range(3)]
    runs = [*passes, _run("f0", False, *fail_steps), _run("f1", False, *fail_steps)]
    d = first_divergence(runs)
    assert (d.status, d.kind, d.step) == ("found", kind, step)
    assert d.groups[0].failures == 2 and d.groups[0].passes == 0
    assert d.example == ("f0", "p0")
    for fmt in (d.to_dict(), divergence_report(runs).to_dict()["flaky_tasks"][0]):
        assert fmt["kind"] == kind and fmt["groups"][0]["failures"] == 2


def test_white_space_and_key_order_are_ignored():
    a = _run("p", True, ("search", {"b": 1, "a": 2}, "restart   first\n"))
    b = _run("f", False, ("search", {"a": 2, "b": 1}, " restart first"))
    d = first_divergence([a, b])
    assert d.status == "identical"
    assert "white space within text" in divergence_report([a, b]).ignored


def test_identical_runs_are_said_identical_up_to_the_grader():
    runs = [_run("p", True, Q), _run("f", False, Q), _run("p2", True, Q)]
    d = first_divergence(runs)
    assert d.status == "identical" and d.step is None
    assert "identical up to the grader" in d.why


def test_runs_that_vary_but_never_apart_are_inseparable():
    x, y = ("search", "s", "x"), ("search", "s", "y")
    runs = [_run("p1", True, x, x), _run("p2", True, y, y), _run("f", False, x, y)]
    d = first_divergence(runs)
    assert d.status == "inseparable" and "no step parts" in d.why


@pytest.mark.parametrize(("runs", "said"), [
    ([Trajectory("t", "0", True), Trajectory("t", "1", False)], "no run's trajectory"),
    ([Trajectory("t", "0", True, (Step.of(*Q),)), Trajectory("t", "1", False)],
     "no failing run's trajectory"),
    ([Trajectory("t", "0", True, ()), Trajectory("t", "1", False, ())], "no run recorded a tool"),
])
def test_no_trajectory_is_said(runs, said):
    d = first_divergence(runs)
    assert d.status == "no trajectory" and said in d.why


def test_runs_without_trajectory_are_left_out_and_counted():
    runs = [_run("p", True, Q, ("a", "", "1")), _run("f", False, Q, ("b", "", "1")),
            Trajectory("t", "x", False)]
    d = first_divergence(runs)
    assert d.status == "found" and d.unrecorded == 1 and d.failures == 1


def test_first_divergence_refuses_no_runs_or_two_tasks():
    with pytest.raises(ValueError, match="runs is empty"):
        first_divergence([])
    with pytest.raises(ValueError, match="2 tasks"):
        first_divergence([_run("p", True, Q), Trajectory("u", "0", False, ())])


def test_normalise_and_items_read_lists_as_the_producer_wrote_them():
    assert step_items("['x', 'y']") == ("x", "y")        # a Python repr (passk's simulator)
    assert step_items('["y", "x"]') == ("y", "x")        # JSON (Inspect, tau2)
    assert step_items("[not a list") is None
    assert step_items("[1, 2") is None
    assert normalise({"b": [1], "a": None}) == '{"a": null, "b": [1]}'


# --------------------------------------------------------------------------
# Inspect logs, written by inspect_ai's own code
# --------------------------------------------------------------------------


def _inspect_log(path: Path, orders, *, epochs_ok=None):
    """An Inspect log (inspect_ai's write_eval_log) of one flaky sample whose tool answers in
    ``orders[e]`` at epoch e + 1, and a stable one; it passes when "escalate" is read first."""
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalSample,
        EvalSpec,
        write_eval_log,
    )
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
    from inspect_ai.scorer import Score
    from inspect_ai.tool import ToolCall

    samples = []
    for e, order in enumerate(orders, start=1):
        call = ToolCall(id=f"call-{e}", function="search_runbook",
                        arguments={"service": "payment"})
        messages = [ChatMessageUser(content="handle the alert"),
                    ChatMessageAssistant(content="", tool_calls=[call]),
                    ChatMessageTool(content=json.dumps(order), tool_call_id=f"call-{e}",
                                    function="search_runbook"),
                    ChatMessageAssistant(content=order[0])]
        samples.append(EvalSample(id="payment-alert", epoch=e, input="q", target="escalate",
                                  messages=messages,
                                  scores={"includes": Score(value="C" if order[0] == "escalate"
                                                            else "I")}))
        samples.append(EvalSample(id="read-rate", epoch=e, input="q", target="0.12",
                                  messages=[ChatMessageUser(content="q")],
                                  scores={"includes": Score(value="C")}))
    spec = EvalSpec(created="2025-01-01T00:00:00+00:00", task="oncall", model="mockllm/model",
                    dataset=EvalDataset(name="d", samples=2, sample_ids=["payment-alert",
                                                                         "read-rate"]),
                    config=EvalConfig(epochs=len(orders)))
    write_eval_log(EvalLog(eval=spec, samples=samples, status="success"), str(path))
    return path


@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_an_inspect_log_parts_at_the_tools_answer(tmp_path, suffix, capsys):
    pytest.importorskip("inspect_ai")
    shuffle = random.Random(3)
    orders = []
    for _ in range(10):
        order = ["restart", "escalate"]
        shuffle.shuffle(order)
        orders.append(order)
    log = _inspect_log(tmp_path / f"log{suffix}", orders)
    n_fail = sum(o[0] == "restart" for o in orders)
    counts = read_results(log)   # the counts' reader agrees on every outcome
    by_task = dict(zip(counts.task_ids, counts.successes.tolist()))
    runs = read_trajectories(log)
    assert sum(t.success for t in runs if t.task_id == "payment-alert") \
        == by_task["payment-alert"] == len(orders) - n_fail
    report = read_divergences(log)
    assert [d.task_id for d in report.tasks] == ["payment-alert"]
    assert report.stable == ("read-rate",)
    d = report.tasks[0]
    assert (d.status, d.step, d.kind) == ("found", 1, "order")
    assert d.groups[0].step.items == ("restart", "escalate")
    assert (d.groups[0].failures, d.groups[0].passes, d.groups[0].reordered) == (
        n_fail, 0, len(orders) - n_fail)
    assert main(["attribute", str(log)]) == 0
    out = capsys.readouterr().out
    assert f"in {n_fail} of {n_fail} failures search_runbook" in out


# --------------------------------------------------------------------------
# tau2 simulations
# --------------------------------------------------------------------------


def _tau2_simulation(sim_id, task, trial, reward, calls, reason="user_stop"):
    """A simulation as tau2's data model writes it: an assistant message's ToolCalls (id,
    name, arguments, requestor) and a ToolMessage per call (id, role, content, requestor,
    error)."""
    messages = [{"role": "user", "content": "I want to change my flight", "turn_idx": 0}]
    for i, (name, args, answer) in enumerate(calls):
        cid = f"{sim_id}-c{i}"
        messages.append({"role": "assistant", "content": None, "turn_idx": 2 * i + 1,
                         "tool_calls": [{"id": cid, "name": name, "arguments": args,
                                         "requestor": "assistant"}]})
        messages.append({"role": "tool", "id": cid, "content": answer,
                         "requestor": "assistant", "error": False, "turn_idx": 2 * i + 2})
    return {"id": sim_id, "task_id": task, "trial": trial, "termination_reason": reason,
            "reward_info": {"reward": reward}, "messages": messages}


@pytest.mark.parametrize("layout", ["file", "dir"])
def test_a_tau2_run_parts_at_the_arguments(tmp_path, layout):
    sims = []
    for trial in range(4):  # flaky: trials 1 and 3 book the wrong cabin
        wrong = trial % 2 == 1
        sims.append(_tau2_simulation(f"s{trial}", "change_flight", trial, 0.0 if wrong else 1.0,
                                     [("get_reservation", {"id": "R1"}, '{"cabin": "economy"}'),
                                      ("update_flight", {"id": "R1", "cabin": "business"
                                                         if wrong else "economy"}, "ok")]))
        sims.append(_tau2_simulation(f"t{trial}", "cancel", trial, 1.0,
                                     [("cancel_reservation", {"id": "R2"}, "ok")]))
    sims.append(_tau2_simulation("x", "cancel", 4, 0.0, [], reason="infrastructure_error"))
    meta = {"timestamp": "t", "info": {"num_trials": 4}, "tasks": [{"id": "change_flight"},
                                                                    {"id": "cancel"}]}
    if layout == "file":
        path = tmp_path / "results.json"
        path.write_text(json.dumps({**meta, "simulations": sims}))
    else:
        path = tmp_path / "run"
        (path / "simulations").mkdir(parents=True)
        (path / "results.json").write_text(json.dumps(
            {**meta, "simulation_index": [{"id": s["id"]} for s in sims]}))
        for s in sims:
            (path / "simulations" / f"{s['id']}.json").write_text(json.dumps(s))
    counts = read_results(path)
    runs = read_trajectories(path)
    assert len(runs) == int(counts.totals.sum()) == 8     # the infrastructure error left out
    report = read_divergences(path)
    d = report.tasks[0]
    assert d.task_id == "change_flight" and report.stable == ("cancel",)
    assert (d.step, d.kind, d.groups[0].failures) == (2, "arguments", 2)
    assert d.groups[0].step.args == '{"cabin": "business", "id": "R1"}'


def test_tau2_simulations_without_messages_say_so(tmp_path):
    path = tmp_path / "results.json"
    sims = [{"id": f"s{i}", "task_id": "a", "trial": i, "termination_reason": "user_stop",
             "reward_info": {"reward": float(i % 2)}} for i in range(4)]
    path.write_text(json.dumps({"info": {"num_trials": 4}, "tasks": [{"id": "a"}],
                                "simulations": sims}))
    d = read_divergences(path).tasks[0]
    assert d.status == "no trajectory" and "no run's trajectory is recorded" in d.why


# --------------------------------------------------------------------------
# the command line, in every format
# --------------------------------------------------------------------------


def test_passk_attribute_in_text_json_and_markdown(simulator_log, capsys):
    log, run = simulator_log
    fails = sum(not r.success for r in run.results if r.task_id == "payment-alert")
    assert main(["attribute", str(log)]) == 0
    text = capsys.readouterr().out
    assert "payment-alert:" in text and "step 2 (order)" in text
    assert f"in {fails} of {fails} failures search_runbook(payment-service) answered " \
           "[rb-pay-restart, rb-pay-escalate]; in 0 of" in text
    assert "ignored: white space within text" in text
    assert main(["attribute", str(log), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    d = payload["flaky_tasks"][0]
    assert (d["task_id"], d["step"], d["kind"]) == ("payment-alert", 2, "order")
    assert d["groups"][0]["step"]["items"] == ["rb-pay-restart", "rb-pay-escalate"]
    assert d["example"]["failing_steps"][1].startswith("search_runbook(payment-service) -> "
                                                       "[rb-pay-restart, rb-pay-escalate]")
    assert main(["attribute", str(log), "--markdown"]) == 0
    md = capsys.readouterr().out
    assert "### payment-alert:" in md and "|---:|---|---|" in md


def test_an_old_log_says_no_trajectory_in_every_format(tmp_path, capsys):
    log = tmp_path / "old.jsonl"
    log.write_text("".join(json.dumps({"task_id": "a", "trial": i, "success": i % 2 == 0}) + "\n"
                           for i in range(4)))
    assert main(["attribute", str(log)]) == 0
    assert "no trajectory" in capsys.readouterr().out
    assert main(["attribute", str(log), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["flaky_tasks"][0]["status"] == "no trajectory"


@pytest.mark.parametrize(("argv", "said"), [
    (["attribute"], "give a FILE to read"),
    (["attribute", "missing.jsonl"], "missing.jsonl: no such file"),
    (["attribute", "x.jsonl", "--vary", "temperature=0"], "--vary needs --run"),
    (["attribute", "x.jsonl", "--format", "tau2", "--scorer", "s"], "are for Inspect logs"),
])
def test_bad_invocations_are_one_line_and_exit_2(tmp_path, monkeypatch, capsys, argv, said):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.jsonl").write_text('{"task_id": "a", "success": true}\n')
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and said in err


def test_a_file_of_no_known_producer_is_refused(tmp_path, capsys):
    p = tmp_path / "x.json"
    p.write_text('{"something": 1}')
    assert main(["attribute", str(p)]) == 2
    assert "passk reads trajectories from" in capsys.readouterr().err


@pytest.mark.slow
def test_a_real_inspect_eval_with_epochs_parts_at_the_unstable_order(tmp_path):
    """inspect_ai's own eval loop: a solver whose tool returns its results in an unstable
    order, and acts on the first; the log Inspect writes is read back."""
    pytest.importorskip("inspect_ai")
    log = _unstable_order_eval(tmp_path, epochs=8)
    counts = read_results(log)
    d = read_divergences(log).tasks[0]
    runs = [t for t in read_trajectories(log) if t.task_id == "payment-alert"]
    fails = [t for t in runs if not t.success]
    assert d.task_id == "payment-alert" and (d.step, d.kind) == (1, "order")
    assert d.groups[0].failures == len(fails) == int(counts.totals[0] - counts.successes[0])
    assert {t.steps[0].items[0] for t in fails} == {"restart first"}


def _unstable_order_eval(log_dir: Path, epochs: int) -> Path:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import (
        ChatMessageAssistant,
        ModelOutput,
        ModelUsage,
        execute_tools,
        get_model,
    )
    from inspect_ai.scorer import includes
    from inspect_ai.solver import solver
    from inspect_ai.tool import tool

    shuffle = random.Random(7)

    @tool
    def search_runbook():
        async def execute(service: str) -> str:
            """Search the runbook.

            Args:
                service: the service.
            """
            found = ["restart first", "escalate if not recovered"]
            shuffle.shuffle(found)  # tied fragments, in no stable order
            return json.dumps(found)
        return execute

    @solver
    def first_directive():
        async def solve(state, generate):
            state.tools = [search_runbook()]
            state.output = await get_model().generate(state.messages, tools=state.tools)
            state.messages.append(state.output.message)
            result = await execute_tools(state.messages, state.tools)
            state.messages.extend(result.messages)
            action = json.loads(result.messages[-1].text)[0].split()[0]
            state.messages.append(ChatMessageAssistant(content=action))
            state.output.completion = action
            return state
        return solve

    def outputs():
        while True:
            out = ModelOutput.for_tool_call("mockllm/model", "search_runbook",
                                            {"service": "payment"})
            out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # offline
            yield out

    task = Task(dataset=[Sample(id="payment-alert", input="handle the alert", target="escalate"),
                         Sample(id="read-rate", input="x", target="")],
                solver=first_directive(), scorer=includes())
    logs = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=outputs()),
                        epochs=epochs, log_dir=str(log_dir), display="none")
    assert logs[0].status == "success"
    return Path(logs[0].location)
