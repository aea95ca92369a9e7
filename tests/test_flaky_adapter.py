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


@pytest.mark.slow
def test_sampling_alone_restarts_at_the_softmax_rate():
    """T = 2.0 on the clean runbook: restart has softmax weight 1 / (1 + e^2) inside the nucleus."""
    from scipy.special import expit

    n = 3000
    results = runs(OnCallSimulator(deterministic_sort=True, temperature=2.0), RUNBOOK_TASK,
                   range(n))
    failures = sum(not r.success for r in results)
    p_restart = float(expit(-4.0 / 2.0))  # scores 4 (escalate) and 0 (restart), T = 2
    assert 1 - p_restart < 0.95  # so the nucleus (top_p 0.95) keeps both actions
    assert stats.binomtest(failures, n, p_restart).pvalue > 0.001, failures


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
    all_orders = set(itertools.permutations(tied, 2))
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
# the environment: recorded latencies, a deadline, timeouts
# --------------------------------------------------------------------------

DEADLINE = 0.5  # at the default latencies, q = P(latency > 0.5 s) = 0.228


def timed(result: RunResult) -> list[fa.TimedCall]:
    assert all(isinstance(c, fa.TimedCall) for c in result.trajectory)
    return list(result.trajectory)


def timed_out_twice(calls: list[fa.TimedCall]) -> bool:
    """Some tool's attempts, in the order they started, hold two timeouts in a row."""
    by_tool: dict[str, list[bool]] = {}
    for c in sorted(calls, key=lambda c: c.started):
        by_tool.setdefault(c.tool, []).append(c.latency > c.deadline)
    return any(a and b for flags in by_tool.values() for a, b in itertools.pairwise(flags))


def lognormal_tail(sim: OnCallSimulator) -> float:
    """P(latency > deadline) from scipy's lognormal (the outside reference)."""
    return float(stats.lognorm(s=sim.latency_sigma, scale=sim.latency_median).sf(sim.deadline))


@pytest.mark.parametrize("d, m, sigma", [(0.5, 0.4, 0.3), (1.0, 0.4, 0.3), (1.0, 0.4, 1.0),
                                         (0.2, 0.4, 0.3), (3.0, 0.4, 0.3), (0.4, 0.4, 0.7)])
def test_timeout_probability_is_the_lognormal_tail(d, m, sigma):
    sim = OnCallSimulator(deadline=d, latency_median=m, latency_sigma=sigma)
    assert sim.timeout_probability() == pytest.approx(lognormal_tail(sim), rel=1e-9, abs=1e-15)


def test_timeout_probability_edge_cases():
    assert OnCallSimulator().timeout_probability() == 0.0  # no deadline, no timeouts
    assert OnCallSimulator(deadline=0.3, latency_sigma=0).timeout_probability() == 1.0
    assert OnCallSimulator(deadline=0.5, latency_sigma=0).timeout_probability() == 0.0


@pytest.mark.parametrize("concurrency", [False, True])
def test_a_call_times_out_exactly_when_its_recorded_latency_exceeds_the_deadline(concurrency):
    sim = OnCallSimulator(deadline=DEADLINE, concurrency=concurrency, temperature=2.0)
    seen = Counter()
    for task in demo_tasks():
        for r in runs(sim, task, range(300)):
            calls = timed(r)
            for c in calls:
                assert c.deadline == DEADLINE
                assert (c.observation == "timeout") is (c.latency > DEADLINE)
                seen[c.observation == "timeout"] += 1
            # a run gives up exactly when some call timed out twice in a row
            gave_up = timed_out_twice(calls)
            assert (r.error is not None) is gave_up
            if gave_up:
                assert r.error.startswith("upstream timeout in ") and not r.success
                assert r.final_state["action"] == "gave-up"
    assert seen[True] > 100 and seen[False] > 1000  # both branches were exercised


def test_the_deadline_reads_the_latency_and_draws_nothing():
    """Same seed: moving the deadline around the recorded latencies moves the timeouts, only."""
    for seed in range(100):
        free = timed(OnCallSimulator().run(READ_DEPLOY, seed=seed))
        latencies = [c.latency for c in free]
        assert all(c.observation != "timeout" and c.deadline is None for c in free)
        above = OnCallSimulator(deadline=max(latencies) * (1 + 1e-9)).run(READ_DEPLOY, seed=seed)
        assert [c.latency for c in timed(above)] == latencies and above.success
        # just below the first call's latency: that call, and only that attempt, times out
        below = OnCallSimulator(deadline=latencies[0] * (1 - 1e-9)).run(READ_DEPLOY, seed=seed)
        first = timed(below)[0]
        assert first.latency == latencies[0] and first.observation == "timeout"
        assert first.elapsed == first.deadline  # the client waited the deadline, no more


def test_a_deadline_below_every_latency_fails_every_run_after_one_retry():
    sim = OnCallSimulator(deadline=1e-9)
    for task in demo_tasks():
        for r in runs(sim, task, range(100)):
            assert r.success is False and r.final_state["action"] == "gave-up"
            assert [c.observation for c in r.trajectory] == ["timeout", "timeout"]
            assert r.seconds == pytest.approx(2e-9)
            assert "2 attempts, each over the 0.00 s deadline" in r.error


def test_run_time_is_the_sum_of_what_the_client_waited():
    sim = OnCallSimulator(deadline=DEADLINE, deterministic_sort=True)
    for r in runs(sim, RUNBOOK_TASK, range(200)):
        calls = timed(r)
        waited = [min(c.latency, DEADLINE) for c in calls]
        assert r.seconds == pytest.approx(sum(waited), rel=1e-12)
        for before, after in itertools.pairwise(calls):  # sequential: one call after the other
            assert after.started == pytest.approx(before.started + min(before.latency, DEADLINE))


@pytest.mark.slow
def test_measured_timeout_rate_and_pass_rates_follow_the_deadline():
    """A few thousand runs; each rate within a binomial test at level 0.001."""
    sim = OnCallSimulator(deadline=DEADLINE, deterministic_sort=True, temperature=0.0)
    q = lognormal_tail(sim)
    assert round(q, 3) == 0.228
    n = 3000
    pay = runs(sim, RUNBOOK_TASK, range(n))
    read = runs(sim, READ_RATE, range(n))
    calls = [c for r in pay + read for c in r.trajectory]
    timeouts = sum(c.observation == "timeout" for c in calls)
    assert stats.binomtest(timeouts, len(calls), q).pvalue > 0.001, (timeouts, len(calls))
    # a call fails when it times out twice: q^2. The runbook path makes 3 calls
    # (query_metrics, search_runbook, escalate); the read-only task makes 2.
    assert stats.binomtest(sum(r.success for r in pay), n, (1 - q**2) ** 3).pvalue > 0.001
    assert stats.binomtest(sum(r.success for r in read), n, (1 - q**2) ** 2).pvalue > 0.001
    # with concurrency too, a surviving pair is a fair race: (1 - q^2)^2 / 2
    both = runs(dataclasses.replace(sim, concurrency=True), READ_RATE, range(n))
    assert stats.binomtest(sum(r.success for r in both), n, (1 - q**2) ** 2 / 2).pvalue > 0.001


# --------------------------------------------------------------------------
# concurrency: the race is decided by the recorded latencies
# --------------------------------------------------------------------------


@pytest.mark.parametrize("task", [READ_RATE, READ_DEPLOY], ids=lambda t: t.task_id)
def test_the_race_is_won_by_the_smaller_recorded_latency(task):
    wanted = {"read-error-rate": "query_metrics", "read-last-deploy": "get_last_deploy"}
    for r in runs(OnCallSimulator(concurrency=True), task, range(500)):
        won, lost = timed(r)  # recorded in the order the calls finished
        assert (won.race, lost.race) == ("won", "lost") and won.parallel and lost.parallel
        assert won.started == lost.started == 0.0
        assert won.latency < lost.latency
        assert {won.tool, lost.tool} == {"query_metrics", "get_last_deploy"}
        # the slower call writes last: its answer is what the assistant reports
        assert r.final_state["answer"] == lost.observation
        assert r.success is (lost.tool == wanted[task.task_id])
        # the parallel phase lasts as long as the slower call, not the sum
        assert r.seconds == max(won.latency, lost.latency)
        assert "won the race" in str(won) and "lost the race" in str(lost)


def test_sequential_fetches_take_the_sum_and_draw_the_same_latencies():
    for seed in range(200):
        seq = timed(OnCallSimulator().run(READ_RATE, seed=seed))
        par = timed(OnCallSimulator(concurrency=True).run(READ_RATE, seed=seed))
        assert not any(c.parallel or c.race for c in seq)
        assert OnCallSimulator().run(READ_RATE, seed=seed).seconds == pytest.approx(
            sum(c.latency for c in seq), rel=1e-12)
        # concurrency reorders and overlaps the calls, it does not redraw their latencies
        assert ({(c.tool, c.latency) for c in seq} == {(c.tool, c.latency) for c in par})


def test_with_timeouts_the_race_goes_to_the_branch_that_finished_first():
    sim = OnCallSimulator(concurrency=True, deadline=DEADLINE)
    retried = 0
    for task in (READ_RATE, READ_DEPLOY):
        for r in runs(sim, task, range(400)):
            calls = timed(r)
            branch_time = {}
            for tool in {c.tool for c in calls}:
                attempts = [c for c in calls if c.tool == tool]
                retried += len(attempts) == 2
                # a retry is issued when the client gave up on the first attempt
                if len(attempts) == 2:
                    assert attempts[1].started == pytest.approx(DEADLINE)
                branch_time[tool] = sum(min(c.latency, DEADLINE) for c in attempts)
            assert r.seconds == pytest.approx(max(branch_time.values()), rel=1e-12)
            assert [c.finished for c in calls] == sorted(c.finished for c in calls)
            if r.error is None:
                marks = {c.race: c.tool for c in calls if c.race}
                assert marks["won"] == min(branch_time, key=branch_time.get)
                assert marks["lost"] == max(branch_time, key=branch_time.get)
                assert r.final_state["answer"] == next(c.observation for c in calls
                                                       if c.race == "lost")
    assert retried > 50


def test_every_failure_has_a_recorded_cause():
    """No failure without a mechanism in the trajectory: a give-up, a lost race or a restart."""
    sim = OnCallSimulator(concurrency=True, deadline=DEADLINE, temperature=2.0)
    wanted = {"read-error-rate": "query_metrics", "read-last-deploy": "get_last_deploy"}
    causes = Counter()
    for task in demo_tasks():
        for r in runs(sim, task, range(300)):
            if r.success:
                continue
            calls = timed(r)
            if r.error is not None:
                cause = "gave up"
                assert timed_out_twice(calls)
            elif task.task_id == RUNBOOK_TASK.task_id:
                cause = "restarted"
                assert "restart_service" in tools(r)
            else:
                cause = "race"
                lost = next(c for c in calls if c.race == "lost")
                assert lost.tool != wanted[task.task_id]
            causes[cause] += 1
    assert set(causes) == {"gave up", "restarted", "race"}, causes


def test_sources_do_not_share_draws():
    """Switching the environment or concurrency on leaves the tie order and sampling alone."""
    base = runs(OnCallSimulator(), RUNBOOK_TASK, range(150))
    for sim in (OnCallSimulator(concurrency=True), OnCallSimulator(deadline=5.0),
                OnCallSimulator(latency_median=2.0, latency_sigma=1.0)):
        other = runs(sim, RUNBOOK_TASK, range(150))
        assert [fragments_read(r) for r in other] == [fragments_read(r) for r in base]
        assert [r.success for r in other] == [r.success for r in base]


# --------------------------------------------------------------------------
# reproducibility and validation
# --------------------------------------------------------------------------


@pytest.mark.parametrize("task", demo_tasks(), ids=lambda t: t.task_id)
@pytest.mark.parametrize("sim", [OnCallSimulator(), OnCallSimulator(concurrency=True),
                                 OnCallSimulator(deadline=0.5, temperature=2.0, concurrency=True)],
                         ids=["default", "concurrent", "deadline-hot-concurrent"])
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
    ({"deadline": 0.0}, "deadline (0.0)"),
    ({"deadline": -1}, "deadline (-1)"),
    ({"deadline": math.nan}, "deadline (nan)"),
    ({"deadline": math.inf}, "deadline (inf)"),
    ({"deadline": True}, "deadline (True)"),
    ({"latency_median": 0}, "latency_median (0)"),
    ({"latency_sigma": -0.1}, "latency_sigma (-0.1)"),
    ({"latency_sigma": math.nan}, "latency_sigma (nan)"),
    ({"tie_break": "alphabet"}, "tie_break ('alphabet')"),
    ({"fragment_ids": {"rb-pay-nope": "x"}}, "'rb-pay-nope'"),
    ({"fragment_ids": {"rb-pay-restart": ""}}, "new id for 'rb-pay-restart' ('')"),
    ({"fragment_ids": {"rb-pay-restart": "rb-pay-freeze"}}, "['rb-pay-freeze']"),
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


# --------------------------------------------------------------------------
# fragment ids: a deterministic order is stable, not right
# --------------------------------------------------------------------------

A_RESTART = {"rb-pay-restart": "rb-pay-a-restart"}


@pytest.mark.parametrize("ids, passed", [(None, 12), (A_RESTART, 0)],
                         ids=["chapter-ids", "a-restart"])
def test_id_sort_under_two_namings_is_stable_either_way(ids, passed):
    from passk.run.evaluate import evaluate_suite
    from passk.stability import DEMO_SEED

    report = evaluate_suite(OnCallSimulator(deterministic_sort=True, fragment_ids=ids),
                            demo_tasks(), seed=DEMO_SEED)
    pay = report.tasks[0]
    assert (pay.task_id, pay.successes, pay.runs) == ("payment-alert", passed, 12)
    assert pay.flakiness == 0.0
    assert pay.cls == ("stable-pass" if passed else "stable-fail")


def test_priority_sort_passes_under_both_namings():
    for ids in (None, A_RESTART):
        sim = OnCallSimulator(deterministic_sort=True, tie_break="priority", fragment_ids=ids)
        results = runs(sim, RUNBOOK_TASK, range(200))
        assert all(r.success for r in results)
        freeze = "rb-pay-freeze"
        escalate = "rb-pay-escalate"
        assert {fragments_read(r) for r in results} == {(freeze, escalate)}


def test_renamed_id_sort_fails_every_run():
    results = runs(OnCallSimulator(deterministic_sort=True, fragment_ids=A_RESTART),
                   RUNBOOK_TASK, range(200))
    assert not any(r.success for r in results)
    assert {fragments_read(r) for r in results} == {("rb-pay-a-restart", "rb-pay-escalate")}


def test_one_naming_in_six_freezes_the_failure_in():
    """Brute force over the 3! alphabetical orders of the tied fragments' ids."""
    tied = ("rb-pay-restart", "rb-pay-escalate", "rb-pay-freeze")
    failing = []
    for ranks in itertools.permutations("abc"):
        ids = {old: f"rb-{rank}-{old}" for old, rank in zip(tied, ranks)}
        by_id = OnCallSimulator(deterministic_sort=True, fragment_ids=ids)
        by_priority = OnCallSimulator(deterministic_sort=True, tie_break="priority",
                                      fragment_ids=ids)
        outcomes = {by_id.run(RUNBOOK_TASK, seed=s).success for s in range(20)}
        assert len(outcomes) == 1  # stable, pass or fail
        assert all(by_priority.run(RUNBOOK_TASK, seed=s).success for s in range(20))
        if outcomes == {False}:
            failing.append(sorted(tied, key=ids.get))
    # it fails only when the ids sort restart < escalate < freeze (freeze cut off)
    assert failing == [["rb-pay-restart", "rb-pay-escalate", "rb-pay-freeze"]]


def test_fragment_ids_are_part_of_the_protocol():
    from passk.gate import Protocol

    plain = OnCallSimulator(deterministic_sort=True)
    renamed = OnCallSimulator(deterministic_sort=True, fragment_ids=A_RESTART)
    assert plain.protocol()["fragment_ids"] == [f.fragment_id for f in RUNBOOK]
    assert renamed.protocol()["fragment_ids"][0] == "rb-pay-a-restart"
    assert Protocol(plain.protocol()).fingerprint != Protocol(renamed.protocol()).fingerprint
    assert set(plain.protocol()) == {"temperature", "deterministic_sort", "tie_break",
                                     "fragment_ids", "concurrency", "deadline", "latency_median",
                                     "latency_sigma", "top_p", "max_restarts"}
    # the simulator keeps its own copy of the mapping
    ids = dict(A_RESTART)
    sim = OnCallSimulator(fragment_ids=ids)
    ids["rb-pay-restart"] = "changed"
    assert sim.protocol()["fragment_ids"][0] == "rb-pay-a-restart"
    assert sim == OnCallSimulator(fragment_ids=A_RESTART)


def test_rename_fragments_changes_ids_only():
    store = fa.rename_fragments(A_RESTART)
    assert [(f.service, f.text, f.score, f.directive) for f in store] == \
        [(f.service, f.text, f.score, f.directive) for f in RUNBOOK]
    assert [f.fragment_id for f in store] == ["rb-pay-a-restart", *(f.fragment_id
                                                                      for f in RUNBOOK[1:])]
    assert fa.rename_fragments(None) == fa.rename_fragments({}) == RUNBOOK
    with pytest.raises(ValueError, match="'nope'"):
        fa.rename_fragments({"nope": "x"})


def test_search_runbook_priority_tie_break():
    rng = np.random.default_rng(0)
    found = search_runbook("payment-service", rng, deterministic_sort=True, top_k=5,
                           tie_break="priority")
    assert [f.directive for f in found[:3]] == ["escalate", "escalate-if-not-recovered",
                                                "restart"]
    with pytest.raises(ValueError, match="tie_break \\('score'\\)"):
        search_runbook("payment-service", rng, deterministic_sort=True, tie_break="score")


# --------------------------------------------------------------------------
# sample_action: the public decoding seam
# --------------------------------------------------------------------------


def nucleus_reference(scores: dict[str, float], temperature: float, top_p: float):
    """softmax from scipy, nucleus by brute force over prefixes of the sorted actions."""
    from scipy.special import softmax

    actions = sorted(scores, key=lambda a: -scores[a])
    p = softmax(np.array([scores[a] for a in actions]) / temperature)
    m = next(i for i in range(1, len(actions) + 1) if p[:i].sum() >= top_p - 1e-12)
    return {a: (p[i] / p[:m].sum() if i < m else 0.0) for i, a in enumerate(actions)}


@pytest.mark.parametrize("temperature, top_p", [(1.0, 1.0), (2.0, 0.95), (0.7, 0.8),
                                                (1.5, 0.5)])
def test_sample_action_matches_softmax_within_the_nucleus(temperature, top_p):
    scores = {"escalate": 2.0, "restart": 1.0, "wait": 0.5, "page": -1.0}
    want = nucleus_reference(scores, temperature, top_p)
    rng = np.random.default_rng(42)
    n = 4000
    got = Counter(fa.sample_action(scores, temperature, top_p, rng) for _ in range(n))
    assert all(got[a] == 0 for a, p in want.items() if p == 0)  # never outside the nucleus
    kept = [a for a, p in want.items() if p > 0]
    if len(kept) > 1:
        observed = [got[a] for a in kept]
        expected = [n * want[a] for a in kept]
        assert stats.chisquare(observed, expected).pvalue > 0.001


def test_sample_action_at_temperature_zero_is_argmax_and_draws_nothing():
    rng = np.random.default_rng(7)
    state = rng.bit_generator.state
    assert fa.sample_action({"a": 0.1, "b": 3.0, "c": 2.9}, 0, 0.95, rng) == "b"
    assert rng.bit_generator.state == state


@pytest.mark.parametrize("args, text", [
    (({}, 0.7, 0.95), "scores is empty"),
    (({"a": 1.0}, -1.0, 0.95), "temperature (-1.0)"),
    (({"a": 1.0}, math.inf, 0.95), "temperature (inf)"),
    (({"a": 1.0}, 0.7, 0.0), "top_p (0.0)"),
    (({"a": 1.0}, 0.7, 1.5), "top_p (1.5)"),
])
def test_sample_action_refuses_bad_input(args, text):
    with pytest.raises(ValueError) as info:
        fa.sample_action(*args, np.random.default_rng(0))
    assert text in str(info.value)


def test_sample_action_is_a_public_seam():
    import passk.book.scenarios as sc

    assert "sample_action" in fa.__all__ and fa.sample_action.__doc__
    assert sc.sample_action is fa.sample_action


def test_timed_call_reads_like_a_tool_call_outside_timeouts_and_races():
    plain = fa.TimedCall("query_metrics", "payment-service", "0.12", latency=0.41)
    assert str(plain) == "query_metrics(payment-service) -> 0.12"
    late = fa.TimedCall("escalate", "payment-service", "timeout", latency=0.9, deadline=0.5,
                        started=2.0)
    assert (late.timed_out, late.elapsed, late.finished) == (True, 0.5, 2.5)
    assert str(late).endswith("[latency 0.90 s > deadline 0.50 s]")


def test_fragments_read_is_what_search_runbook_returned_in_every_run():
    """fragments_read gives back, run by run, the ids the store returned (same tie stream)."""
    from passk.flaky_adapter import fragments_read, search_runbook
    sim = OnCallSimulator()
    task = demo_tasks()[0]
    for seed in range(30):
        run = sim.run(task, seed=seed)
        tie = np.random.default_rng(np.random.SeedSequence(seed).spawn(3)[0])
        expected = [f.fragment_id for f in search_runbook("payment-service", tie,
                                                          deterministic_sort=False)]
        assert fragments_read(run) == tuple(expected)
    timed_out = OnCallSimulator(deadline=0.01).run(task, seed=0)
    assert fragments_read(timed_out) == ()
