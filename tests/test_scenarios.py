"""Golden scenarios: isolated ground truth, the leak check, disjoint splits, the budget."""

import dataclasses
import inspect

import numpy as np
import pytest

from passk.book.scenarios import (
    EVIDENCE_TOOLS,
    ROOT_CAUSES,
    Budget,
    DiagnosisSimulator,
    GradedAdapter,
    GroundTruthGrader,
    LeakyDiagnosisSimulator,
    Telemetry,
    catalogue,
    environments,
    leak_check,
    split_tasks,
)
from passk.book.trajectory import evidence_before_conclusion, two_track_report
from passk.repeats import repeat_run


def graded(split="dev", **kwargs):
    return GradedAdapter(DiagnosisSimulator(environments(split), **kwargs), GroundTruthGrader(split))


def test_catalogue_covers_every_fault_in_both_splits_and_they_are_disjoint():
    scenarios = catalogue()
    for split in ("dev", "hidden"):
        assert {s.truth.root_cause for s in scenarios if s.split == split} == set(ROOT_CAUSES)
    dev = {s.telemetry for s in scenarios if s.split == "dev"}
    hidden = {s.telemetry for s in scenarios if s.split == "hidden"}
    assert not dev & hidden
    assert {t.channel for t in dev}.isdisjoint({t.channel for t in hidden})
    assert len({s.truth.canary for s in scenarios}) == len(scenarios)


def test_ground_truth_is_structurally_out_of_the_agents_reach():
    # the simulator is built from telemetry, whose fields carry no label ...
    assert "root_cause" not in {f.name for f in dataclasses.fields(Telemetry)}
    assert "truth" not in inspect.signature(DiagnosisSimulator).parameters
    # ... and what the agent is given (tasks) holds no label or canary either
    for task in split_tasks("hidden"):
        text = repr(task)
        assert not any(cause in text for cause in ROOT_CAUSES)
        assert not any(c in text for c in GroundTruthGrader("hidden").canaries())
    # an ungraded run is never a success: grading happens outside the adapter
    result = DiagnosisSimulator(environments("dev")).run(split_tasks("dev")[0], seed=0)
    assert result.success is False and result.final_state["root_cause"] in (*ROOT_CAUSES,
                                                                             "config-release")


def test_unconstrained_assistant_finds_most_root_causes():
    adapter = graded()
    runs = [repeat_run(adapter, t, 12, seed=0) for t in split_tasks("dev")]
    rate = np.mean([r.successes / r.total for r in runs])
    assert 0.85 <= rate < 1.0  # early submissions make some wrong, by mechanism


def test_leak_check_is_clean_on_the_honest_harness_and_catches_the_leaky_one():
    grader = GroundTruthGrader("dev")
    tasks = split_tasks("dev")
    honest = DiagnosisSimulator(environments("dev"))
    for task in tasks:
        assert leak_check(task, honest.run(task, seed=1), grader.canaries()) == ()
    notes = {s.scenario_id: s.truth for s in catalogue() if s.split == "dev"}
    leaky = GradedAdapter(LeakyDiagnosisSimulator(honest, notes), grader)
    results = [leaky.run(task, seed=1) for task in tasks]
    assert all(r.success for r in results)  # a perfect score ...
    assert all(leak_check(t, r, grader.canaries()) for t, r in zip(tasks, results))  # ... leaked


def test_budget_below_the_typical_need_collapses_discovery_and_p95_recovers_it():
    tasks = split_tasks("dev")

    def measure(budget):
        runs = [repeat_run(graded(budget=budget), t, 10, seed=7) for t in tasks]
        results = [r for run in runs for r in run.results]
        return np.mean([r.success for r in results]), results

    free_rate, free = measure(Budget())
    p95 = float(np.percentile([r.seconds for r in free], 95))
    cut_rate, cut = measure(Budget(max_time_seconds=90))
    p95_rate, _ = measure(Budget(max_time_seconds=p95))
    assert cut_rate <= 0.2 and 0.75 <= p95_rate <= free_rate
    stopped = [r for r in cut if r.error]
    assert stopped and all("budget exhausted" in r.error for r in stopped)
    assert all(r.seconds <= 90 for r in cut)


def test_step_budget_truncates_too():
    result = graded(budget=Budget(max_steps=3)).run(split_tasks("dev")[0], seed=0)
    assert len(result.trajectory) == 3 and not result.success
    with pytest.raises(ValueError, match="0"):
        Budget(max_steps=0)
    with pytest.raises(ValueError, match="-1"):
        Budget(max_time_seconds=-1)


def test_right_but_lucky_runs_exist_and_fail_the_evidence_rule():
    rule = evidence_before_conclusion(EVIDENCE_TOOLS, minimum=4)
    lucky = 0
    for task in split_tasks("dev"):
        lucky += two_track_report(task.task_id, repeat_run(graded(), task, 12, seed=3).results,
                                  [rule]).right_but_lucky
    assert lucky > 0


def test_unknown_split_and_scenario_are_refused():
    with pytest.raises(ValueError, match="'test'"):
        split_tasks("test")
    dev_id = split_tasks("dev")[0].task_id
    with pytest.raises(KeyError, match=dev_id):
        GroundTruthGrader("hidden").grade(dev_id, {"root_cause": "healthy"})


def test_scenarios_import_only_public_names():
    """The diagnosing assistant decodes with the on-call assistant's public sample_action."""
    import ast
    import importlib
    from pathlib import Path

    import passk.book.scenarios as sc

    tree = ast.parse(Path(sc.__file__).read_text())
    imported = [(node.module.removeprefix("passk."), alias.name) for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module
                and node.module.startswith("passk.") for alias in node.names]
    assert ("flaky_adapter", "sample_action") in imported
    for module, name in imported:
        assert name in importlib.import_module(f"passk.{module}").__all__, (module, name)


# ------------------------------------------------------- the rate model of a study

def test_bernoulli_runs_counts_are_binomial():
    """Each task's count of passes over its runs is Binomial(n, p): the counts of
    4,000 seeded tasks at p = 0.3 and 0.9 against scipy's pmf (chi-square, p > 0.001),
    and the ends p = 0 and 1 exact."""
    from scipy import stats

    from passk.book.scenarios import bernoulli_runs

    n = 8
    for p in (0.3, 0.9):
        out = bernoulli_runs(np.full(4000, p), n, rng=7)
        assert out.shape == (4000, n) and out.dtype == bool
        counts = np.bincount(out.sum(axis=1), minlength=n + 1)
        expected = 4000 * stats.binom.pmf(np.arange(n + 1), n, p)
        keep = expected >= 5   # the chi-square's rule of thumb; pool the tails
        observed = np.append(counts[keep], counts[~keep].sum())
        wanted = np.append(expected[keep], expected[~keep].sum())
        if wanted[-1] == 0:
            observed, wanted = observed[:-1], wanted[:-1]
        assert stats.chisquare(observed, wanted).pvalue > 1e-3
    ends = bernoulli_runs([0.0, 1.0], 5, rng=0)
    assert not ends[0].any() and ends[1].all()
    # runs are independent of each other: the same seed, the same table
    assert (bernoulli_runs([0.5] * 3, 6, rng=3) == bernoulli_runs([0.5] * 3, 6, rng=3)).all()


@pytest.mark.parametrize(("rates", "runs", "match"), [
    ([], 3, "rates"), ([1.2], 3, "rates"), ([[0.5]], 3, "rates"),
    ([0.5], 0, "runs"), ([0.5], True, "runs"), ([0.5], 2.5, "runs")])
def test_bernoulli_runs_refuses_bad_input(rates, runs, match):
    from passk.book.scenarios import bernoulli_runs

    with pytest.raises(ValueError, match=match):
        bernoulli_runs(rates, runs, rng=0)
