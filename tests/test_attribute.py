"""The controlled comparison (issue 39): one variable at a time, on the same seeds, with an
exact paired test, Holm's correction and the power the design had.

References are outside the code under test: scipy's ``binomtest`` for every p-value,
brute-force enumeration of every pair sequence for the power, the definition of Holm's
procedure, and the simulator run directly on the seeds the runner gives each run.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from scipy.stats import binomtest

from passk.adapter import SettingAdapter
from passk.cli.commands import main
from passk.errors import BadInput
from passk.flaky_adapter import OnCallSimulator, demo_tasks
from passk.repeats import attempt_seed
from passk.run.attribute import attribute_variants, parse_variations, vary
from passk.stats.paired import (
    holm,
    paired_change_test,
    paired_p_values,
    paired_test_power,
    paired_test_size,
)

RUNS, SEED = 60, 1
VARIANTS = [("temperature", 0), ("deterministic_sort", True), ("concurrency", True)]


# --------------------------------------------------------------------------
# the statistics, against scipy and brute force
# --------------------------------------------------------------------------


def test_p_values_are_scipys_binomtest():
    f, b = np.meshgrid(np.arange(26), np.arange(26), indexing="ij")
    ours = paired_p_values(f, b)
    for i, j in itertools.product(range(26), range(26)):
        theirs = 1.0 if i + j == 0 else binomtest(i, i + j, 0.5).pvalue
        assert ours[i, j] == pytest.approx(theirs, rel=1e-12, abs=1e-15), (i, j)


def test_the_paired_test_counts_pairs():
    t = paired_change_test([True, False, False, True, False], [True, True, True, False, False])
    assert (t.fixed, t.broken, t.pairs, t.discordant) == (2, 1, 5, 3)
    assert t.p_value == pytest.approx(binomtest(2, 3, 0.5).pvalue)
    with pytest.raises(ValueError, match="paired 1-d"):
        paired_change_test([True], [True, False])
    with pytest.raises(ValueError, match=">= 0"):
        paired_p_values([-1], [0])


def _holm_by_definition(p, alpha):
    """Holm (1979): reject the hypotheses in order of p while p_(i) <= alpha / (m - i + 1)."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    rejected = set()
    for rank, i in enumerate(order):
        if p[i] <= alpha / (len(p) - rank):
            rejected.add(i)
        else:
            break
    return rejected


@pytest.mark.parametrize("seed", range(20))
def test_holm_rejects_what_the_definition_rejects(seed):
    rng = np.random.default_rng(seed)
    p = rng.choice([0.001, 0.004, 0.01, 0.02, 0.03, 0.2, 0.5, 1.0], size=rng.integers(1, 9))
    adjusted = holm(p)
    assert np.all(adjusted >= p) and np.all(adjusted <= 1)
    for alpha in (0.01, 0.05, 0.1):
        assert {i for i, a in enumerate(adjusted) if a <= alpha} == _holm_by_definition(p, alpha)


def test_holm_refuses_what_is_not_a_p_value():
    for bad in ([0.1, 1.5], [float("nan")], [[0.1]]):
        with pytest.raises(ValueError):
            holm(bad)


@pytest.mark.parametrize(("n", "p_fixed", "p_broken"), [(1, 0.3, 0.1), (5, 0.2, 0.0),
                                                         (6, 0.25, 0.25), (7, 0.5, 0.1),
                                                         (6, 0.0, 0.0), (5, 1.0, 0.0)])
def test_power_is_the_sum_over_every_pair_sequence(n, p_fixed, p_broken):
    """Brute force: every sequence of n pairs (fixed, broken, alike), its probability, and
    scipy's verdict on it."""
    probs = {"f": p_fixed, "b": p_broken, "s": 1 - p_fixed - p_broken}
    scipy_p = {(f, b): 1.0 if f + b == 0 else binomtest(f, f + b, 0.5).pvalue
               for f in range(n + 1) for b in range(n + 1 - f)}
    for alpha in (0.05, 0.2, 0.5):
        total = 0.0
        for seq in itertools.product("fbs", repeat=n):
            if scipy_p[seq.count("f"), seq.count("b")] <= alpha:
                total += math.prod(probs[x] for x in seq)
        assert paired_test_power(n, p_fixed, p_broken, alpha=alpha) == pytest.approx(
            total, abs=1e-12)


def test_power_grows_with_runs_and_refuses_bad_settings():
    powers = [paired_test_power(n, 1 / 6, alpha=0.05 / 3) for n in (10, 30, 60, 120)]
    assert powers == sorted(powers) and powers[0] < 0.1 and powers[2] > 0.8
    for bad in ((0, 0.1, 0.0), (10, 0.7, 0.5), (10, -0.1, 0.0)):
        with pytest.raises(ValueError):
            paired_test_power(*bad)
    with pytest.raises(ValueError, match="alpha"):
        paired_test_power(10, 0.1, alpha=1.0)


# the error rate: at most its level on every population, by exact enumeration

NS = [1, 2, 3, 5, 8, 13, 20, 30]
DISCORDANCE = [0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0]


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1])
def test_the_size_is_at_most_alpha_on_every_population(alpha):
    for n, q in itertools.product(NS, DISCORDANCE):
        assert paired_test_size(n, q, alpha=alpha) <= alpha + 1e-12, (n, q)


def test_holm_keeps_the_family_wise_error_for_independent_tasks():
    """m independent null tests: Holm rejects some iff the least p <= alpha / m, so the
    family-wise error is 1 - prod(1 - size at alpha / m), computed exactly."""
    for m, n, q in itertools.product((2, 3, 6), (10, 30), (0.2, 0.6)):
        fwer = 1 - (1 - paired_test_size(n, q, alpha=0.05 / m)) ** m
        assert fwer <= 0.05


@pytest.mark.slow
def test_the_size_holds_on_larger_designs_by_enumeration():
    for n, q in itertools.product(range(31, 201, 13), np.linspace(0.02, 1, 12)):
        assert paired_test_size(n, float(q), alpha=0.05) <= 0.05 + 1e-12


@pytest.mark.slow
def test_the_error_rate_holds_by_simulation_on_correlated_pairs():
    """A population the test was not designed for: each seed has a latent difficulty, the
    baseline and the variant draw their outcomes from it (strongly correlated pairs), and
    the variant changes nothing in distribution. 20,000 simulated designs per setting;
    the rejection rate is within 3 standard errors of at most alpha."""
    rng = np.random.default_rng(2024)
    for n, spread in ((20, 0.5), (60, 2.0), (60, 0.1)):
        reps = 20_000
        logit = rng.normal(1.0, spread, size=(reps, n))
        p = 1 / (1 + np.exp(-logit))
        before = rng.random((reps, n)) < p
        after = rng.random((reps, n)) < p
        fixed = np.sum(~before & after, axis=1)
        broken = np.sum(before & ~after, axis=1)
        rate = float(np.mean(paired_p_values(fixed, broken) <= 0.05))
        se = math.sqrt(0.05 * 0.95 / reps)
        assert rate <= 0.05 + 3 * se, (n, spread, rate, se)


# --------------------------------------------------------------------------
# the book's simulator: the tie order named, without a hint
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def simulator():
    return attribute_variants(OnCallSimulator(), demo_tasks(), VARIANTS, runs=RUNS, seed=SEED)


def _direct(task_id, **settings):
    """Run i of the task, run by the simulator itself on the seed the runner gives run i."""
    task = next(t for t in demo_tasks() if t.task_id == task_id)
    sim = OnCallSimulator(**settings)
    return [sim.run(task, seed=attempt_seed(SEED, task_id, i, 0)).success for i in range(RUNS)]


def test_the_simulator_names_the_tie_order(simulator):
    assert [t.task_id for t in simulator.tasks] == ["payment-alert"]
    assert set(simulator.stable) == {"read-error-rate", "read-last-deploy"}
    t = simulator.tasks[0]
    assert [v.variable for v in t.explained_by] == ["deterministic_sort"]
    assert t.finding().startswith("explained by deterministic_sort (set to True: flakiness")
    base = _direct("payment-alert")
    by = {v.variable: v for v in t.variants}
    sort = by["deterministic_sort"]
    sorted_runs = _direct("payment-alert", deterministic_sort=True)
    assert sort.fixed == sum(not b and a for b, a in zip(base, sorted_runs)) == RUNS - sum(base)
    assert sort.broken == 0 and sort.after.successes == RUNS == sum(sorted_runs)
    assert sort.p_value == pytest.approx(binomtest(sort.fixed, sort.fixed, 0.5).pvalue)
    assert sort.adjusted_p == pytest.approx(min(1, 3 * sort.p_value)) and sort.shown
    assert "search_runbook(payment-service) answered [rb-pay-restart, rb-pay-escalate]" \
        in t.divergence


@pytest.mark.parametrize("variable", ["temperature", "concurrency"])
def test_temperature_and_concurrency_are_not_shown_with_their_power(simulator, variable):
    v = {v.variable: v for v in simulator.tasks[0].variants}[variable]
    changed = _direct("payment-alert", **{variable: dict(VARIANTS)[variable]})
    assert [v.before.successes, v.after.successes] == [sum(_direct("payment-alert")),
                                                       sum(changed)]
    assert (v.fixed, v.broken, v.shown, v.explains) == (0, 0, False, False)
    fail_rate = 1 - v.before.successes / RUNS
    assert v.power == pytest.approx(paired_test_power(RUNS, fail_rate, alpha=0.05 / 3))
    assert v.power > 0.8
    assert f"probability {v.power:.2f} at the Holm level alpha/3" in v.power_note


def test_a_variable_that_moves_the_rate_but_leaves_it_flaky_is_said_so():
    a = attribute_variants(OnCallSimulator(), demo_tasks()[:1],
                           [("temperature", 3.0), ("deterministic_sort", True)],
                           runs=120, seed=4)
    t = a.tasks[0]
    hot = t.variants[0]
    assert hot.broken > hot.fixed and hot.shown and not hot.stable_after and not hot.explains
    assert [v.variable for v in t.explained_by] == ["deterministic_sort"]


def test_no_flaky_task_under_the_baseline_runs_no_variant():
    a = attribute_variants(OnCallSimulator(), demo_tasks(), [("temperature", 2.0)], runs=20,
                           baseline={"deterministic_sort": True, "temperature": 0})
    assert a.tasks == () and len(a.stable) == 3 and a.tests == 0
    assert a.baseline == {"deterministic_sort": True, "temperature": 0}


def test_with_setting_is_the_adapter_protocol():
    sim = OnCallSimulator()
    assert isinstance(sim, SettingAdapter)
    assert sim.with_setting("concurrency", True).concurrency is True
    assert sim.concurrency is False  # a new adapter, the baseline unchanged
    for name, value, said in (("temprature", 0, "no setting 'temprature'"),
                              ("temperature", -1, "must be a finite number >= 0"),
                              ("concurrency", "yes", "true or false")):
        with pytest.raises(BadInput, match=said):
            vary(sim, name, value)

    class Plain:
        def run(self, task, *, seed):
            raise AssertionError

    with pytest.raises(BadInput, match="has no with_setting"):
        vary(Plain(), "temperature", 0)


@pytest.mark.parametrize(("kwargs", "said"), [
    ({"runs": 1}, "runs"), ({"alpha": 0.0}, "alpha"), ({"variations": []}, "no variant"),
])
def test_bad_settings_are_refused_before_any_run(kwargs, said):
    args = {"variations": [("temperature", 0)], **kwargs}
    variations = args.pop("variations")
    with pytest.raises(BadInput, match=said):
        attribute_variants(OnCallSimulator(), demo_tasks(), variations, **args)


def test_variations_parse_as_json_else_text():
    assert parse_variations(["a=1.5", "b=false", "c=null", "d=x=y"]) == [
        ("a", 1.5), ("b", False), ("c", None), ("d", "x=y")]
    for bad in ("temperature", "=1"):
        with pytest.raises(BadInput, match="NAME=VALUE"):
            parse_variations([bad])


# --------------------------------------------------------------------------
# the command line, in every format
# --------------------------------------------------------------------------


@pytest.fixture
def tasks_file(tmp_path):
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps({"task_id": t.task_id, "risk": t.risk, **t.params}) + "\n"
                            for t in demo_tasks()))
    return path


def _argv(tasks_file, *more):
    return ["attribute", "--run", "passk.flaky_adapter:OnCallSimulator", str(tasks_file),
            "--vary", "temperature=0", "--vary", "deterministic_sort=true", "--vary",
            "concurrency=true", "--runs", str(RUNS), "--seed", str(SEED), *more]


def test_passk_attribute_run_in_text_json_and_markdown(tasks_file, simulator, capsys):
    assert main(_argv(tasks_file)) == 0
    text = capsys.readouterr().out
    assert "payment-alert: explained by deterministic_sort" in text
    assert "temperature=0: not shown; had it removed the flakiness" in text
    assert "concurrency=true: not shown" in text
    assert "first divergence (baseline runs): the runs part at step 2" in text
    assert main(_argv(tasks_file, "--json")) == 0
    payload = json.loads(capsys.readouterr().out)
    t = payload["tasks"][0]
    assert t["explained_by"] == ["deterministic_sort"] and payload["tests"] == 3
    assert t == simulator.tasks[0].to_dict()   # the CLI is a skin over attribute_variants
    assert main(_argv(tasks_file, "--markdown")) == 0
    md = capsys.readouterr().out
    assert "### payment-alert: explained by deterministic_sort" in md
    assert "| deterministic_sort | true |" in md.lower()


@pytest.mark.parametrize(("more", "said"), [
    (["--vary", "temprature=0"], "no setting 'temprature'"),
    (["--vary", "temperature"], "write NAME=VALUE"),
    (["--vary", "concurrency=maybe"], "true or false"),
])
def test_bad_variants_are_one_line_and_exit_2(tasks_file, capsys, more, said):
    argv = ["attribute", "--run", "passk.flaky_adapter:OnCallSimulator", str(tasks_file),
            "--runs", "4", *more]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and said in err


def test_a_file_and_run_together_are_refused(tasks_file, capsys):
    assert main(["attribute", "x.jsonl", "--run", "passk.flaky_adapter:OnCallSimulator",
                 str(tasks_file), "--vary", "temperature=0"]) == 2
    assert "not both" in capsys.readouterr().err
