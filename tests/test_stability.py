"""Tests for :mod:`passk.stability`: tiers, the report, the dual gate, the demo."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
from patience import CEILING_S  # the tests' one ceiling on a wait

from passk.adapter import Task
from passk.criteria import GateCriteria
from passk.flaky_adapter import OnCallSimulator, demo_tasks
from passk.repeats import repeat_run
from passk.run.evaluate import evaluate_suite, judged_report, run_demo
from passk.stability import (
    DEMO_SEED,
    GateResult,
    RepeatPolicy,
    SuiteReport,
    TaskReport,
    classify,
    format_table,
    reliability_gate,
    suite_report,
)

REPO = Path(__file__).resolve().parents[1]
TASK_KEYS = {"task_id", "risk", "runs", "successes", "pass_rate", "pass_at_k", "pass_hat_k",
             "flakiness", "ci", "lower_bound", "class"}
GATE_KEYS = {"overall", "passed", "flaky_tasks", "reasons", "overrides"}


@pytest.fixture(scope="module")
def demo() -> tuple[SuiteReport, SuiteReport]:
    return run_demo()


def row(report: SuiteReport, task_id: str) -> TaskReport:
    (found,) = [t for t in report.tasks if t.task_id == task_id]
    return found


# --------------------------------------------------------------------------
# the chapter's demo
# --------------------------------------------------------------------------


def test_demo_before(demo):
    before, _ = demo
    assert before.k == 5
    pay = row(before, "payment-alert")
    assert (pay.successes, pay.runs, pay.risk) == (10, 12, "high-risk-write")
    assert pay.pass_hat_k == pytest.approx(math.comb(10, 5) / math.comb(12, 5), rel=1e-15)
    assert round(pay.pass_hat_k, 3) == 0.318
    assert pay.flakiness == pytest.approx(5 / 9, rel=1e-15)
    assert round(pay.flakiness, 3) == 0.556
    assert pay.pass_at_k == 1.0 and pay.cls == "flaky"
    for task_id in ("read-error-rate", "read-last-deploy"):
        r = row(before, task_id)
        assert (r.successes, r.runs, r.pass_hat_k, r.flakiness, r.cls) == (
            5, 5, 1.0, 0.0, "stable-pass")
    gate = before.gate
    assert gate.overall == pytest.approx((252 / 792 + 2) / 3, rel=1e-12)
    assert round(gate.overall, 3) == 0.773 and gate.overall > 0.7
    assert gate.passed is False
    assert gate.flaky_tasks == ("payment-alert",)
    assert len(gate.reasons) == 1 and "payment-alert" in gate.reasons[0]
    assert "10/12" in gate.reasons[0]


def test_demo_after(demo):
    _, after = demo
    pay = row(after, "payment-alert")
    assert (pay.successes, pay.runs) == (12, 12)
    assert pay.flakiness == 0.0 and pay.pass_hat_k == 1.0 and pay.cls == "stable-pass"
    assert after.gate.overall == 1.0
    assert after.gate.passed is True
    assert after.gate.flaky_tasks == () and after.gate.reasons == ()


def test_demo_runs_are_attached(demo):
    before, _ = demo
    assert [r.task.task_id for r in before.runs] == [t.task_id for t in demo_tasks()]
    assert [r.total for r in before.runs] == [12, 5, 5]
    assert before.runs[0].successes == 10


def test_demo_seed_is_the_first():
    sim, task = OnCallSimulator(), demo_tasks()[0]
    n = RepeatPolicy().runs_for(task)
    assert n == 12
    counts = [repeat_run(sim, task, n, seed=s).successes for s in range(DEMO_SEED + 1)]
    assert counts[DEMO_SEED] == 10
    assert 10 not in counts[:DEMO_SEED], counts


# --------------------------------------------------------------------------
# the gate fails closed
# --------------------------------------------------------------------------


def test_gate_empty_suite():
    gate = reliability_gate([])
    assert isinstance(gate, GateResult)
    assert gate.passed is False and math.isnan(gate.overall)
    assert gate.reasons and "empty" in gate.reasons[0]


def test_gate_task_with_no_runs():
    report = judged_report(["good", "ghost"], [5, 0], [5, 0], k=5)
    gate = report.gate
    assert gate.passed is False and math.isnan(gate.overall)
    assert any("ghost" in r and "no runs" in r for r in gate.reasons)
    assert row(report, "ghost").cls == "no-evidence"
    assert "ghost" not in gate.flaky_tasks  # NaN flakiness is not "flaky", it is no evidence


def test_gate_too_few_runs_for_k():
    report = judged_report(["good", "short"], [12, 3], [12, 3], k=5)
    assert math.isnan(row(report, "short").pass_hat_k)
    gate = report.gate
    assert gate.passed is False and math.isnan(gate.overall)
    assert any("short" in r and "3 runs" in r for r in gate.reasons)
    assert not any("good" in r for r in gate.reasons)


def test_gate_overall_below_bar():
    report = judged_report(["bad", "good"], [0, 12], [12, 12], k=5)  # both stable
    gate = report.gate
    assert gate.overall == 0.5 and gate.flaky_tasks == ()
    assert gate.passed is False
    (reason,) = gate.reasons
    assert "0.500" in reason and "0.700" in reason and "not met" in reason
    # a lower bar lets the same suite through
    assert reliability_gate(report.tasks, min_overall_pass_hat_k=0.5).passed


def test_gate_flaky_task_blocks_even_above_the_bar():
    report = judged_report(["a", "b", "c"], [11, 12, 12], [12, 12, 12], k=1)
    assert report.gate.overall > 0.9
    assert report.gate.flaky_tasks == ("a",) and not report.gate.passed
    assert reliability_gate(report.tasks, max_flakiness=0.4).passed


@pytest.mark.parametrize("kwargs", [
    {"min_overall_pass_hat_k": -0.1}, {"min_overall_pass_hat_k": 1.1},
    {"min_overall_pass_hat_k": math.nan}, {"max_flakiness": -0.01}, {"max_flakiness": 2},
    {"max_flakiness": math.nan},
])
def test_gate_bad_thresholds_raise(kwargs):
    (name, value), = kwargs.items()
    rows = suite_report(["a"], [5], [5]).tasks
    with pytest.raises(ValueError, match=re.escape(f"{name} ({value!r})")):
        reliability_gate(rows, **kwargs)
    with pytest.raises(ValueError, match=re.escape(name)):
        reliability_gate([], **kwargs)


def test_classify():
    assert classify(12, 12) == "stable-pass"
    assert classify(0, 5) == "stable-fail"
    assert classify(10, 12) == "flaky"
    assert classify(0, 0) == "no-evidence"
    assert classify(11, 12, threshold=0.5) == "stable-pass"
    # the gate's cap never changes a class: 7 of 12 stays flaky under any cap
    assert {judged_report(["t"], [7], [12], k=1,
                          criteria=GateCriteria(k=1, max_flakiness=cap)).tasks[0].cls
            for cap in (0.0, 0.5, 1.0)} == {"flaky"}
    with pytest.raises(ValueError, match="threshold"):
        classify(7, 12, threshold=1.0)
    # suite_report's vectorized classes agree with classify
    c, n = [0, 1, 6, 11, 12, 0], [12, 12, 12, 12, 12, 0]
    report = judged_report(list("abcdef"), c, n, k=1)
    assert [t.cls for t in report.tasks] == [classify(ci, ni) for ci, ni in zip(c, n)]


def test_suite_report_length_mismatch():
    with pytest.raises(ValueError, match="same length"):
        suite_report(["a", "b"], [1], [2, 2])


# --------------------------------------------------------------------------
# the repeat policy
# --------------------------------------------------------------------------


def test_repeat_policy_tiers():
    policy = RepeatPolicy()
    assert policy.runs_for(Task("w", risk="high-risk-write")) == 12
    assert policy.runs_for(Task("r", risk="read-only")) == 5
    assert policy.runs_for(Task("u", risk="unheard-of")) == 5  # default
    assert policy.runs_for(Task("f", risk="read-only", previously_flaky=True)) == 12


def test_repeat_policy_custom():
    policy = RepeatPolicy({"high-risk-write": 30, "read-only": 3}, previously_flaky=20,
                          default=7)
    assert policy.runs_for(Task("w", risk="high-risk-write")) == 30
    # previously flaky runs at least as often as its tier and as the flaky floor
    assert policy.runs_for(Task("w", risk="high-risk-write", previously_flaky=True)) == 30
    assert policy.runs_for(Task("r", risk="read-only", previously_flaky=True)) == 20
    assert policy.runs_for(Task("u", risk="other")) == 7
    assert policy.runs_for(Task("u", risk="other", previously_flaky=True)) == 20


@pytest.mark.parametrize("kwargs", [
    {"runs_by_risk": {"read-only": 0}}, {"runs_by_risk": {"read-only": -3}},
    {"runs_by_risk": {"read-only": 2.5}}, {"runs_by_risk": {"read-only": True}},
    {"runs_by_risk": {"read-only": "5"}},
    {"previously_flaky": 0}, {"previously_flaky": 1.5}, {"previously_flaky": False},
    {"default": 0}, {"default": -1}, {"default": None},
])
def test_repeat_policy_invalid(kwargs):
    with pytest.raises(ValueError, match="must be a whole number"):
        RepeatPolicy(**kwargs)


@pytest.mark.parametrize("stopping", ["sometimes", "", None])
def test_repeat_policy_invalid_stopping(stopping):
    with pytest.raises(ValueError, match="stopping"):
        RepeatPolicy(stopping=stopping)


def test_evaluate_suite_with_plain_dict_policy():
    tasks = [*demo_tasks(), Task("odd", risk="exotic", params={"intent": "read-error-rate"})]
    report = evaluate_suite(OnCallSimulator(deterministic_sort=True), tasks,
                            {"high-risk-write": 4, "read-only": 3}, k=2, seed=1)
    assert [t.runs for t in report.tasks] == [4, 3, 3, 5]  # unknown label -> default 5
    assert [r.total for r in report.runs] == [4, 3, 3, 5]
    assert report.k == 2 and report.gate.passed
    assert [t.risk for t in report.tasks] == ["high-risk-write", "read-only", "read-only",
                                              "exotic"]


def test_evaluate_suite_thread_pool_matches_sequential():
    from concurrent.futures import ThreadPoolExecutor

    sequential = evaluate_suite(OnCallSimulator(), demo_tasks(), seed=DEMO_SEED)
    with ThreadPoolExecutor(4) as pool:
        pooled = evaluate_suite(OnCallSimulator(), demo_tasks(), seed=DEMO_SEED, executor=pool)
    assert pooled.tasks == sequential.tasks and pooled.gate == sequential.gate


# --------------------------------------------------------------------------
# the JSON report
# --------------------------------------------------------------------------


def test_to_dict_schema(demo):
    for report in demo:
        d = report.to_dict()
        assert set(d) == {"k", "confidence", "ci_method", "class_threshold", "tasks", "gate",
                          "protocol"}
        assert (d["confidence"], d["ci_method"]) == (0.95, "exact")
        assert all(set(t) == TASK_KEYS for t in d["tasks"])
        assert set(d["gate"]) == GATE_KEYS
        assert json.loads(json.dumps(d, allow_nan=False)) == d
    d = demo[0].to_dict()
    pay = d["tasks"][0]
    assert (pay["task_id"], pay["runs"], pay["successes"], pay["class"]) == (
        "payment-alert", 12, 10, "flaky")
    # full precision: rounding belongs to tables, not to JSON
    assert pay["pass_hat_k"] == pytest.approx(math.comb(10, 5) / math.comb(12, 5), rel=1e-14)
    assert pay["pass_hat_k"] != round(pay["pass_hat_k"], 6)
    assert pay["flakiness"] == pytest.approx(5 / 9, rel=1e-15)
    assert d["gate"]["flaky_tasks"] == ["payment-alert"] and d["gate"]["passed"] is False


def test_to_dict_nan_becomes_null():
    report = judged_report(["ghost", "short", "ok"], [0, 3, 5], [0, 3, 5], k=5)
    d = report.to_dict()
    text = json.dumps(d, allow_nan=False)  # would raise on a NaN
    assert "NaN" not in text
    ghost, short, ok = d["tasks"]
    assert ghost["pass_rate"] is None and ghost["flakiness"] is None
    assert ghost["pass_hat_k"] is None and ghost["lower_bound"] is None
    assert ghost["ci"] == [None, None]
    assert short["pass_hat_k"] is None and short["pass_at_k"] is None
    assert short["pass_rate"] == 1.0
    # the exact interval bounds p^5 from 3 runs too: [L^5, 1] with L = 0.025^(1/3)
    assert short["ci"] == [pytest.approx(0.025 ** (5 / 3), rel=1e-9), 1.0]
    # 5 of 5: the Clopper-Pearson lower end is 0.025^(1/5), so p^5 >= 0.025
    assert ok["pass_hat_k"] == 1.0 and ok["ci"] == [pytest.approx(0.025, rel=1e-9), 1.0]
    assert d["gate"]["overall"] is None and d["gate"]["passed"] is False
    assert isinstance(d["tasks"][0]["runs"], int)  # plain ints, not numpy


# --------------------------------------------------------------------------
# the text table
# --------------------------------------------------------------------------


def _cells(line: str):
    """(start, end, text) of each cell; cells are separated by two or more spaces."""
    return [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+(?: \S+)*", line)]


def test_format_table_aligned_columns(demo):
    text = format_table(demo[0])
    lines = text.splitlines()
    table = lines[:4]
    assert table[0].split() == ["task", "risk", "runs", "passed", "pass@5", "pass^5", "95%",
                                "CI", "lower", "flakiness", "class"]
    cells = [_cells(line) for line in table]
    assert all(len(c) == 10 for c in cells)
    right = {2, 3, 4, 5, 7, 8}  # numeric columns are right-aligned, the rest left-aligned
    for col in range(10):
        if col in right:
            assert len({c[col][1] for c in cells}) == 1, col
        else:
            assert len({c[col][0] for c in cells}) == 1, col
    assert lines[4].startswith("CI: two-sided 95% exact Clopper–Pearson interval")
    assert lines[5].startswith("gate: BLOCKED  overall pass^5 = 0.773")
    assert "payment-alert" in lines[6] and "exceeds the cap" in lines[6]
    assert "gate: PASSED  overall pass^5 = 1.000" in format_table(demo[1])


def test_format_table_markdown(demo):
    text = format_table(demo[0], markdown=True)
    lines = text.splitlines()
    assert lines[0].startswith("| task | risk | runs |")
    assert re.fullmatch(r"\|(---:?\|){10}", lines[1])
    assert lines[1].count("---:") == 6
    assert all(line.startswith("| ") and line.endswith(" |") for line in lines[2:5])
    assert len({line.count("|") for line in lines[:5]}) == 1
    assert "**gate: BLOCKED  overall pass^5 = 0.773  (bar 0.700, flakiness cap 0.200)**" in lines
    assert any(line.startswith("- task payment-alert") for line in lines)


def test_format_table_nan_cells():
    text = format_table(judged_report(["short"], [3], [3], k=5))
    assert "  -       -" in text and "overall pass^5 = -" in text  # pass@5, pass^5 not estimable
    assert "[-, -]" in format_table(judged_report(["ghost"], [0], [0], k=5))


def test_format_table_flaky_first():
    report = judged_report(["pass", "fail", "flaky-mild", "ghost", "flaky-wild"],
                          [12, 0, 9, 0, 6], [12, 12, 12, 0, 12], k=5)
    body = format_table(report, flaky_first=True).splitlines()[1:6]
    assert [line.split()[0] for line in body] == ["flaky-wild", "flaky-mild", "ghost", "fail",
                                                  "pass"]
    unsorted = format_table(report).splitlines()[1:6]
    assert [line.split()[0] for line in unsorted] == ["pass", "fail", "flaky-mild", "ghost",
                                                      "flaky-wild"]


# --------------------------------------------------------------------------
# python -m passk.stability
# --------------------------------------------------------------------------


def _run_module(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-W", "always::RuntimeWarning", "-m", "passk.stability", *args],
        capture_output=True, text=True, cwd=REPO, timeout=CEILING_S, check=False,
    )


@pytest.mark.slow
def test_module_prints_the_demo():
    proc = _run_module()
    assert proc.returncode == 0, proc.stderr
    assert "RuntimeWarning" not in proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines() if line.startswith("payment-alert")]
    assert len(rows) == 2
    (before, after) = rows
    assert before[2:4] == ["12", "10"] and before[-1] == "flaky"  # 10/12
    assert after[2:4] == ["12", "12"] and after[-1] == "stable-pass"  # 12/12
    assert "(10/12 passed)" in proc.stdout
    assert "gate: BLOCKED" in proc.stdout and "gate: PASSED" in proc.stdout


@pytest.mark.slow
def test_module_json():
    proc = _run_module("--json")
    assert proc.returncode == 0, proc.stderr
    assert "RuntimeWarning" not in proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) == {"seed", "k", "before", "after"}
    assert data["seed"] == DEMO_SEED and data["k"] == 5
    for key in ("before", "after"):
        assert {"k", "tasks", "gate", "protocol", "ci_method"} <= set(data[key])
    assert data["before"]["tasks"][0]["successes"] == 10
    assert data["after"]["tasks"][0]["successes"] == 12
    assert data["before"]["gate"]["passed"] is False and data["after"]["gate"]["passed"] is True


def test_gate_on_the_lower_bound_refuses_a_bar_three_of_three_has_not_earned():
    rows = suite_report(["a"], [3], [3], k=1).tasks
    assert reliability_gate(rows, min_overall_pass_hat_k=0.9).passed
    gate = reliability_gate(rows, min_overall_pass_hat_k=0.9, on="lower-bound")
    assert not gate.passed and gate.overall == pytest.approx(0.05 ** (1 / 3))
    assert "lower bound" in gate.reasons[0] and "not met" in gate.reasons[0]
    with pytest.raises(ValueError, match="'median'"):
        reliability_gate(rows, on="median")


def test_gate_names_tasks_short_of_their_own_k_or_the_minimum_of_runs():
    rows = suite_report(["w", "r"], [6, 1], [6, 1], k=1).tasks
    gate = reliability_gate(rows, ks=[8, 1], min_runs=2, excluded=[0, 3])
    assert not gate.passed
    assert gate.reasons[0] == "task w: 6 runs are too few to estimate pass^8 (its k = 8, risk " \
        "read-only)"
    assert gate.reasons[1] == ("task r: 1 run, fewer than the minimum 2 (3 more left out as "
                               "infrastructure errors)")
    one = reliability_gate(suite_report(["t"], [1], [1], k=5).tasks)
    assert one.reasons == ("task t: 1 run is too few to estimate pass^5",)


def test_gate_accepts_tasks_settled_early_without_calling_them_short():
    rows = suite_report(["flaky", "ok"], [1, 5], [2, 5], k=5).tasks
    gate = reliability_gate(rows, settled_early={"flaky": 12})
    assert not gate.passed and gate.flaky_tasks == ("flaky",)
    assert not any("too few" in r for r in gate.reasons)
    assert "stopped early" in gate.reasons[0] and "flaky (12 planned)" in gate.reasons[0]
