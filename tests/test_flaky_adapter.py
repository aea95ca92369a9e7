"""Tests for the simulated on-call assistant, :mod:`passk.flaky_adapter`.

Statistical tests are seeded (the seeds are the runs' seeds, so every test is
deterministic) and use a loose significance level of 0.001.
"""

from __future__ import annotations

import ast
import dataclasses
import itertools
import math
import pickle
from collections import Counter
from collections.abc import Mapping

import numpy as np
import pytest
from scipy import stats

import passk.flaky_adapter as fa
from passk.adapter import RunResult, Task
from passk.flaky_adapter import (
    EXPECTED_STATES,
    RUNBOOK,
    Grader,
    OnCallSimulator,
    demo_tasks,
    search_runbook,
)

RUNBOOK_TASK, READ_RATE, READ_DEPLOY = demo_tasks()
FAILING_ORDER = ("rb-pay-restart", "rb-pay-escalate")
N_STAT = 6000


def runs(sim: OnCallSimulator, task: Task, seeds) -> list[RunResult]:
    return [sim.run(task, seed=s) for s in seeds]


def tools(result: RunResult) -> list[str]:
    return [call.tool for call in result.trajectory]


def fragments_read(result: RunResult) -> tuple[str, ...]:
    (obs,) = [c.observation for c in result.trajectory if c.tool == "search_runbook"]
    return tuple(ast.literal_eval(obs))


@pytest.fixture(scope="module")
def default_runbook_runs() -> list[RunResult]:
    """6000 default runs of the runbook task (for the slow statistical tests)."""
    return runs(OnCallSimulator(), RUNBOOK_TASK, range(N_STAT))


@pytest.fixture(scope="module")
def some_runbook_runs() -> list[RunResult]:
    """600 default runs of the runbook task (about 100 failures)."""
    return runs(OnCallSimulator(), RUNBOOK_TASK, range(600))


# --------------------------------------------------------------------------
# the runbook task: tie order -> 1/6 failures
# --------------------------------------------------------------------------


@pytest.mark.slow
def test_runbook_failure_rate_is_one_sixth(default_runbook_runs):
    failures = sum(not r.success for r in default_runbook_runs)
    test = stats.binomtest(failures, N_STAT, 1 / 6)
    assert test.pvalue > 0.001, (failures, test.pvalue)
    assert all(r.error is None for r in default_runbook_runs)  # no faults by default


def test_deterministic_sort_never_fails():
    results = runs(OnCallSimulator(deterministic_sort=True), RUNBOOK_TASK, range(1000))
    assert sum(not r.success for r in results) == 0
    # it always reads the same two fragments, so it always escalates
    assert {fragments_read(r) for r in results} == {("rb-pay-escalate", "rb-pay-freeze")}


@pytest.mark.slow
def test_temperature_zero_leaves_failure_rate_unchanged(default_runbook_runs):
    greedy = runs(OnCallSimulator(temperature=0), RUNBOOK_TASK, range(N_STAT))
    failures = sum(not r.success for r in greedy)
    assert stats.binomtest(failures, N_STAT, 1 / 6).pvalue > 0.001
    # two-sample check: same failure probability with and without sampling
    default_failures = sum(not r.success for r in default_runbook_runs)
    table = [[failures, N_STAT - failures], [default_failures, N_STAT - default_failures]]
    assert stats.fisher_exact(table).pvalue > 0.001
    # and, as documented, at 0.7 the nucleus holds one action: run for run identical
    assert [r.success for r in greedy] == [r.success for r in default_runbook_runs]


def test_failing_and_passing_trajectories(some_runbook_runs):
    failing = [r for r in some_runbook_runs if not r.success]
    passing = [r for r in some_runbook_runs if r.success]
    assert failing and passing
    for r in failing:
        assert tools(r).count("restart_service") == 3
        assert "escalate" not in tools(r)
        assert r.final_state == {"action": "restart", "escalated": False, "restarts": 3}
        assert fragments_read(r) == FAILING_ORDER
    for r in passing:
        assert tools(r).count("escalate") == 1
        assert "restart_service" not in tools(r)
        assert r.final_state == {"action": "escalate", "escalated": True, "restarts": 0}
        assert fragments_read(r) != FAILING_ORDER
    # every one of the other five orders of the tied fragments occurs among the passes
    tied = ("rb-pay-restart", "rb-pay-escalate", "rb-pay-freeze")
    all_orders = {order for order in itertools.permutations(tied, 2)}
    assert {fragments_read(r) for r in passing} == all_orders - {FAILING_ORDER}


def test_failing_trajectory_exact_sequence(some_runbook_runs):
    r = next(r for r in some_runbook_runs if not r.success)
    assert tools(r) == ["query_metrics", "search_runbook",
                        "restart_service", "query_metrics",
                        "restart_service", "query_metrics",
                        "restart_service", "query_metrics"]
    assert r.seconds > 0


def test_max_restarts_controls_the_restart_loop():
    sim = OnCallSimulator(max_restarts=5)
    r = next(r for r in runs(sim, RUNBOOK_TASK, range(200)) if not r.success)
    assert tools(r).count("restart_service") == 5 and r.final_state["restarts"] == 5


# --------------------------------------------------------------------------
# read-only tasks: the race
# --------------------------------------------------------------------------


@pytest.mark.parametrize("task", [READ_RATE, READ_DEPLOY], ids=lambda t: t.task_id)
def test_read_only_tasks_always_pass_by_default(task):
    results = runs(OnCallSimulator(), task, range(1000))
    assert all(r.success for r in results)
    expected = EXPECTED_STATES[task.task_id]["answer"]
    assert {r.final_state["answer"] for r in results} == {expected}


@pytest.mark.parametrize("task", [READ_RATE, READ_DEPLOY], ids=lambda t: t.task_id)
def test_read_only_tasks_fail_half_the_time_with_concurrency(task):
    n = 2000
    results = runs(OnCallSimulator(concurrency=True), task, range(n))
    failures = sum(not r.success for r in results)
    assert stats.binomtest(failures, n, 0.5).pvalue > 0.001, failures
    # a failure is the other fetch's answer winning the scratchpad
    other = {"read-error-rate": "deploy-4711", "read-last-deploy": "0.12"}[task.task_id]
    assert {r.final_state["answer"] for r in results if not r.success} == {other}


def test_concurrency_does_not_touch_the_runbook_task():
    a = runs(OnCallSimulator(), RUNBOOK_TASK, range(300))
    b = runs(OnCallSimulator(concurrency=True), RUNBOOK_TASK, range(300))
    assert [r.success for r in a] == [r.success for r in b]


# --------------------------------------------------------------------------
# environment faults
# --------------------------------------------------------------------------


@pytest.mark.parametrize("task", demo_tasks(), ids=lambda t: t.task_id)
def test_env_fault_rate_one_fails_every_run_with_an_error(task):
    for r in runs(OnCallSimulator(env_fault_rate=1.0), task, range(200)):
        assert r.success is False
        assert r.error is not None and r.error.startswith("upstream timeout in ")
        assert r.final_state["action"] == "gave-up"
        # one call, one retry, both timed out
        assert [c.observation for c in r.trajectory] == ["timeout", "timeout"]


def test_moderate_env_fault_rate_lowers_the_pass_rate():
    n = 1000
    clean = sum(r.success for r in runs(OnCallSimulator(deterministic_sort=True), READ_RATE,
                                        range(n)))
    faulty = sum(r.success for r in runs(OnCallSimulator(deterministic_sort=True,
                                                         env_fault_rate=0.3), READ_RATE,
                                         range(n)))
    assert clean == n
    # each of two calls survives with probability 1 - 0.3**2 = 0.91
    assert stats.binomtest(faulty, n, 0.91**2).pvalue > 0.001


# --------------------------------------------------------------------------
# reproducibility and validation
# --------------------------------------------------------------------------


@pytest.mark.parametrize("task", demo_tasks(), ids=lambda t: t.task_id)
@pytest.mark.parametrize("sim", [OnCallSimulator(), OnCallSimulator(concurrency=True),
                                 OnCallSimulator(env_fault_rate=0.4, temperature=2.0)],
                         ids=["default", "concurrent", "faulty-hot"])
def test_same_seed_same_result(task, sim):
    for seed in (0, 1, 17, 2**63 + 5):
        first = sim.run(task, seed=seed)
        again = dataclasses.replace(sim).run(task, seed=seed)  # a fresh, equal simulator
        assert first == again
        assert first.trajectory == again.trajectory and first.seconds == again.seconds


def test_simulator_pickles():
    sim = OnCallSimulator(temperature=0.3, concurrency=True)
    clone = pickle.loads(pickle.dumps(sim))
    assert clone == sim
    assert clone.run(RUNBOOK_TASK, seed=5) == sim.run(RUNBOOK_TASK, seed=5)


@pytest.mark.parametrize("kwargs,text", [
    ({"temperature": -0.1}, "temperature (-0.1)"),
    ({"temperature": math.nan}, "temperature (nan)"),
    ({"temperature": math.inf}, "temperature (inf)"),
    ({"env_fault_rate": -0.01}, "env_fault_rate (-0.01)"),
    ({"env_fault_rate": 1.5}, "env_fault_rate (1.5)"),
    ({"env_fault_rate": math.nan}, "env_fault_rate (nan)"),
    ({"top_p": 0.0}, "top_p (0.0)"),
    ({"top_p": 1.01}, "top_p (1.01)"),
    ({"top_p": math.nan}, "top_p (nan)"),
])
def test_invalid_switches_raise(kwargs, text):
    with pytest.raises(ValueError) as info:
        OnCallSimulator(**kwargs)
    assert text in str(info.value)


@pytest.mark.parametrize("max_restarts", [-1, 2.5])
def test_invalid_max_restarts_raises(max_restarts):
    with pytest.raises(ValueError):
        OnCallSimulator(max_restarts=max_restarts)


def test_unknown_intent_raises():
    with pytest.raises(ValueError, match="intent 'dance'"):
        OnCallSimulator().run(Task("x", params={"intent": "dance"}), seed=0)


# --------------------------------------------------------------------------
# the grader and what the policy can see
# --------------------------------------------------------------------------


def test_grader():
    grader = Grader(EXPECTED_STATES)
    assert grader.grade("payment-alert", {"escalated": True, "restarts": 0, "action": "x"})
    assert not grader.grade("payment-alert", {"escalated": True, "restarts": 1})
    assert not grader.grade("read-error-rate", {})
    with pytest.raises(KeyError, match="no-such-task"):
        grader.grade("no-such-task", {})
    assert set(EXPECTED_STATES) == {t.task_id for t in demo_tasks()}


def _reachable(obj, seen=None):
    """Every object reachable from ``obj`` through dataclass fields, mappings and sequences."""
    seen = {} if seen is None else seen
    if id(obj) in seen:
        return seen
    seen[id(obj)] = obj
    children = []
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        children = [getattr(obj, f.name) for f in dataclasses.fields(obj)]
        children += list(vars(obj).values()) if hasattr(obj, "__dict__") else []
    elif isinstance(obj, Mapping):
        children = [*obj.keys(), *obj.values()]
    elif isinstance(obj, (list, tuple, set, frozenset)):
        children = list(obj)
    for child in children:
        _reachable(child, seen)
    return seen


def test_expected_states_not_reachable_from_the_task(monkeypatch):
    field_names = {f.name for f in dataclasses.fields(Task)}
    assert field_names == {"task_id", "instruction", "risk", "previously_flaky", "params"}
    assert not any("expect" in name or "grad" in name for name in field_names)

    seen_by_policy: list[Task] = []
    real_policy = fa._policy

    def spy(task, *args, **kwargs):
        seen_by_policy.append(task)
        return real_policy(task, *args, **kwargs)

    monkeypatch.setattr(fa, "_policy", spy)
    sim = OnCallSimulator()
    for task in demo_tasks():
        sim.run(task, seed=0)
    assert [t.task_id for t in seen_by_policy] == [t.task_id for t in demo_tasks()]

    forbidden_ids = {id(EXPECTED_STATES), id(sim.grader), id(sim.grader.expected),
                     *(id(v) for v in EXPECTED_STATES.values())}
    for task in seen_by_policy:
        reachable = _reachable(task)
        assert forbidden_ids.isdisjoint(reachable), task.task_id
        assert not any(isinstance(o, Grader) for o in reachable.values())
        # nor a copy of an expected state, nor an expected answer as a value
        for o in reachable.values():
            if isinstance(o, Mapping):
                assert all(dict(o) != dict(v) for v in EXPECTED_STATES.values())
        values = {repr(o) for o in reachable.values() if isinstance(o, (str, int, float, bool))}
        assert "'0.12'" not in values and "'deploy-4711'" not in values


# --------------------------------------------------------------------------
# the runbook store
# --------------------------------------------------------------------------


def test_search_runbook_deterministic_sort():
    rng = np.random.default_rng(0)
    ids = [f.fragment_id for f in search_runbook("payment-service", rng,
                                                 deterministic_sort=True, top_k=5)]
    assert ids == ["rb-pay-escalate", "rb-pay-freeze", "rb-pay-restart", "rb-generic-page",
                   "rb-checkout-restart"]


def test_search_runbook_shuffles_only_ties_uniformly():
    rng = np.random.default_rng(1)
    counts = Counter()
    n = 6000
    for _ in range(n):
        found = search_runbook("payment-service", rng, deterministic_sort=False, top_k=4)
        assert found[3].fragment_id == "rb-generic-page"  # untied fragments keep their place
        counts[tuple(f.fragment_id for f in found[:3])] += 1
    assert len(counts) == 6
    assert stats.chisquare(list(counts.values())).pvalue > 0.001
    assert len(RUNBOOK) == 5
