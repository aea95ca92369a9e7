"""Numbers that can be trusted: the protocol binds the gate, classes follow the runs, JSON keeps
full precision, one rule for the default k, and the curve keeps one task set."""

from __future__ import annotations

import json
from fractions import Fraction
from math import comb
from pathlib import Path

import numpy as np
import pytest
from shared_data import TAU_BENCH_MISSING

from passk.analysis.report import build_report, suite_curve
from passk.cli import main
from passk.criteria import GateCriteria
from passk.errors import LoosenedCriteria
from passk.flaky_adapter import OnCallSimulator, demo_tasks
from passk.gate import Protocol
from passk.gate.bind import bind
from passk.results.read import Run, read_results, results_from_runs
from passk.run.evaluate import judged_report
from passk.run.runner import run_suite
from passk.stability import CLASS_THRESHOLD, classify

TAU_FILE = Path(__file__).resolve().parents[1].parent / "shared/data/tau-bench/gpt-4o-airline.json"
needs_tau = pytest.mark.skipif(not TAU_FILE.is_file(), reason=TAU_BENCH_MISSING)


@pytest.fixture(scope="module")
def run_log(tmp_path_factory):
    """A ``passk run`` log of the demo suite: its protocol declares k 5, bar 0.7, cap 0.2."""
    path = tmp_path_factory.mktemp("log") / "runs.jsonl"
    run_suite(OnCallSimulator(deterministic_sort=True), demo_tasks(), seed=3, log=path,
              progress=False)
    return str(path)


# --------------------------------------------------------------------------
# the protocol binds the gate
# --------------------------------------------------------------------------


@pytest.mark.parametrize("loosening, declared", [
    (["--min-overall", "0.01"], "--min-overall 0.01 would loosen the declared bar 0.7"),
    (["--max-flakiness", "1"], "--max-flakiness 1 would loosen the declared cap 0.2"),
    (["--k", "1"], "--k 1 would loosen the declared k 5"),
    (["--confidence", "0.5", "--on", "lower-bound"],
     "--confidence 0.5 would loosen the declared confidence 0.95"),
    (["--k-for", "high-risk-write=2"], "would loosen the declared k 5"),
])
@pytest.mark.parametrize("command", ["gate", "report"])
def test_a_loosened_criterion_is_refused_with_exit_2(run_log, capsys, command, loosening,
                                                      declared):
    assert main([command, run_log, *loosening]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and declared in err[0]


def test_the_declared_criteria_apply_without_options(run_log, capsys):
    assert main(["gate", run_log, "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["k"] == 5
    assert payload["gate"]["bar"] == 0.7 and payload["gate"]["cap"] == 0.2
    assert payload["gate"]["declared"]["min_overall_pass_hat_k"] == 0.7


def test_a_stricter_criterion_is_allowed_and_said(run_log, capsys):
    assert main(["gate", run_log, "--min-overall", "0.99", "--on", "lower-bound"]) == 1
    out, err = capsys.readouterr()
    assert "min_overall_pass_hat_k 0.99 is stricter than the declared 0.7" in err
    assert "gate_on lower-bound is stricter than the declared estimate" in err
    assert "(bar 0.990, flakiness cap 0.200 as declared by the run's protocol)" in out


def test_write_runs_keeps_the_protocol_so_it_binds(tmp_path, capsys):
    from passk.results.read import write_runs
    from passk.run.evaluate import evaluate_suite

    report = evaluate_suite(OnCallSimulator(), demo_tasks(), seed=3)
    path = tmp_path / "written.jsonl"
    write_runs(path, report.runs, protocol=report.protocol)
    assert read_results(path).protocol == report.protocol
    assert main(["gate", str(path), "--max-flakiness", "1"]) == 2


def test_bind_directions_against_a_protocol():
    declared = Protocol({"k": 4, "min_overall_pass_hat_k": 0.5, "max_flakiness": 0.3,
                         "gate_on": "lower-bound", "confidence": 0.9})
    same = bind({}, None, declared)
    assert (same.k, same.value("bar"), same.value("cap"), same.value("on"),
            same.value("confidence")) == (4, 0.5, 0.3, "lower-bound", 0.9)
    assert same.stricter == ()
    tighter = bind({"k": 6, "cap": 0.1, "confidence": 0.99}, None, declared)
    assert (tighter.k, tighter.value("cap"), tighter.value("confidence")) == (6, 0.1, 0.99)
    assert len(tighter.stricter) == 3
    for looser in ({"k": 3}, {"bar": 0.4}, {"cap": 0.31}, {"on": "estimate"},
                   {"confidence": 0.8}, {"min_runs": 0} | {"mode": "proved-warn"}):
        if looser.get("mode"):
            continue  # the protocol declares no mode: the default binds, any mode is asked
        with pytest.raises(LoosenedCriteria):
            bind(looser, None, declared)
    # no protocol: what was asked, else the defaults
    free = bind({"cap": 1.0}, None, None)
    assert free.value("cap") == 1.0 and free.value("bar") == 0.7


# --------------------------------------------------------------------------
# classes follow the runs
# --------------------------------------------------------------------------


def test_seven_of_twelve_is_never_stable_whatever_the_cap(tmp_path, capsys):
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps({"task_id": "t", "trial": j, "success": j < 7}) + "\n"
                            for j in range(12)))
    assert main(["report", str(path), "--max-flakiness", "1", "--min-overall", "0",
                 "--json"]) == 0
    task = json.loads(capsys.readouterr().out)["tasks"][0]
    assert task["class"] == "flaky"
    for cap in (0.0, 0.2, 0.5, 1.0):
        report = judged_report(["t"], [7], [12], k=1,
                               criteria=GateCriteria(k=1, max_flakiness=cap))
        assert report.tasks[0].cls == "flaky"


def test_classes_against_the_rule_by_brute_force():
    # every (c, n) up to 40 runs: flaky exactly when 4 c (n - c) / n^2 exceeds the threshold
    for n in range(41):
        c = np.arange(n + 1)
        got = classify(c, np.full(n + 1, n)).tolist() if n else [classify(0, 0)]
        for ci, label in zip(range(n + 1), got):
            if n == 0:
                want = "no-evidence"
            elif Fraction(4 * ci * (n - ci), n * n) > Fraction(CLASS_THRESHOLD).limit_denominator():
                want = "flaky"
            else:
                want = "stable-pass" if 2 * ci >= n else "stable-fail"
            assert label == want, (ci, n)
            if 0 < ci < n <= 12:
                assert label == "flaky"  # at 12 runs or fewer, any mixed record is flaky


def test_class_threshold_is_recorded_in_the_protocol(run_log):
    assert read_results(run_log).protocol.settings["class_threshold"] == CLASS_THRESHOLD


# --------------------------------------------------------------------------
# machine output keeps full precision; one default k
# --------------------------------------------------------------------------


@needs_tau
def test_json_carries_tau_bench_figures_at_full_precision(capsys):
    assert main(["report", str(TAU_FILE), "--json"]) == 0
    curve = json.loads(capsys.readouterr().out)["curve"]
    # tau-bench's own metric for k = 2 is sum over tasks of C(c,2)/C(4,2), over 50 tasks
    r = read_results(TAU_FILE)
    exact = [float(sum(Fraction(comb(int(c), k), comb(4, k)) for c in r.successes) / 50)
             for k in (1, 2, 3, 4)]
    assert curve["pass_hat_k"] == pytest.approx(exact, rel=1e-14)
    assert curve["pass_hat_k"][1] != round(curve["pass_hat_k"][1], 6)  # not cut to 6 digits


@needs_tau
@pytest.mark.parametrize("command", ["gate", "report"])
def test_default_k_is_the_smallest_n_and_said_on_stderr(command, capsys):
    main([command, str(TAU_FILE), "--json"])
    out, err = capsys.readouterr()
    assert json.loads(out)["k"] == 4
    assert "k = 4, the smallest number of runs of any task" in err
    assert "too few runs" not in out


def test_the_protocols_k_is_the_default(run_log, capsys):
    assert main(["report", run_log, "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["k"] == 5 and "smallest number" not in err


# --------------------------------------------------------------------------
# the curve keeps one task set
# --------------------------------------------------------------------------


def test_the_curve_never_changes_its_task_set_along_k():
    # 46 tasks with 1 run, 5 with 2, 2 with 3: over all k the set would shrink
    runs = [Run(f"a{i}", i % 3 == 0, 0) for i in range(46)]
    runs += [Run(f"b{i}", j == 0 or i < 2, j) for i in range(5) for j in range(2)]
    runs += [Run(f"c{i}", True, j) for i in range(2) for j in range(3)]
    fr = build_report(results_from_runs(runs), k=1, curve_k=3)
    assert fr.curve.tasks == 2 and fr.curve.left_out == 51
    hat = fr.curve.pass_hat_k
    assert np.all(np.diff(hat) <= 0)  # pass^k of one task set never rises with k
    assert "51 tasks with fewer than 3 runs left out of every k" in str(fr)


def test_suite_curve_against_brute_force_means():
    rng = np.random.default_rng(7)
    n = rng.integers(3, 9, size=30)
    c = rng.binomial(n, 0.7)
    cv = suite_curve(c, n, 3)
    keep = n >= 3
    for j, k in enumerate((1, 2, 3)):
        hat = [Fraction(comb(int(ci), k), comb(int(ni), k)) for ci, ni in zip(c[keep], n[keep])]
        at = [1 - Fraction(comb(int(ni - ci), k), comb(int(ni), k))
              for ci, ni in zip(c[keep], n[keep])]
        assert cv.pass_hat_k[j] == pytest.approx(float(sum(hat) / len(hat)), rel=1e-12)
        assert cv.pass_at_k[j] == pytest.approx(float(sum(at) / len(at)), rel=1e-12)
        assert cv.hat_ci[j][0] <= cv.pass_hat_k[j] <= cv.hat_ci[j][1]
        assert cv.at_ci[j][0] <= cv.pass_at_k[j] <= cv.at_ci[j][1]


# --------------------------------------------------------------------------
# an incomplete run fails the gate closed unless accepted
# --------------------------------------------------------------------------

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def test_an_incomplete_run_fails_closed_unless_accepted(tmp_path, capsys):
    # every task passes every run it has, but the run stopped short of its plan
    fr = build_report(read_results(FIXTURES / "tau2_small.json"), k=1)
    assert fr.to_dict()["incomplete"] == [("tau2 run holds 7 of 9 simulations (3 tasks × "
                                           "info.num_trials 3); 1 task has fewer than 3 "
                                           "(lost_bag: 1)")]
    assert any(r.startswith("incomplete results: tau2 run holds 7 of 9") for r in fr.gate.reasons)
    accepted = build_report(read_results(FIXTURES / "tau2_small.json"), k=1,
                            accept_incomplete=True)
    assert not any(r.startswith("incomplete") for r in accepted.gate.reasons)
    path = tmp_path / "complete-looking.jsonl"
    path.write_text("".join(json.dumps({"task_id": "t", "trial": j, "success": True}) + "\n"
                            for j in range(5)))
    assert main(["gate", str(path), "--accept-incomplete"]) == 0  # nothing to accept: no effect


# --------------------------------------------------------------------------
# the curve's interval says what it is, and whether its level holds
# --------------------------------------------------------------------------


def test_the_curve_names_its_interval_and_level():
    from dataclasses import replace

    from passk.analysis.report import format_curve

    many = [Run(f"t{i}", j < i % 5, j) for i in range(20) for j in range(4)]
    fr = build_report(results_from_runs(many), k=4, min_overall_pass_hat_k=0.0)
    text = format_curve(fr)
    label = "binomial-dominated bound (Hoeffding–Bentkus) with the exact union, proved"
    assert f"(95% {label}, for these tasks):" in text  # issue 23: the proved default
    assert fr.to_dict()["curve"]["interval_level"] == "95%"
    few = [Run(f"t{i}", j < i + 1, j) for i in range(3) for j in range(4)]
    small = build_report(results_from_runs(few), k=4, min_overall_pass_hat_k=0.0)
    assert f"(95% {label}, for these tasks)" in format_curve(small)  # any T, three here
    # a level that is not kept is never printed as a bare "95%"
    unkept = fr.with_curve(replace(fr.curve, level="95% nominal, not guaranteed"))
    assert f"(95% nominal, not guaranteed {label}" in format_curve(unkept)


@needs_tau
def test_tau_bench_curve_intervals_hold_the_score_construction(capsys):
    """pass^4 with n = k = 4 on tau-bench: 10 of 50 tasks passed all four trials, so the
    interval holds both Clopper-Pearson's for 10 of 50 (scipy) and the estimate 0.2."""
    from scipy import stats

    assert main(["report", str(TAU_FILE), "--json"]) == 0
    curve = json.loads(capsys.readouterr().out)["curve"]
    low, high = curve["pass_hat_k_ci"][3]
    cp = stats.binomtest(10, 50).proportion_ci(confidence_level=0.95, method="exact")
    assert low <= cp.low + 1e-9 and high >= cp.high - 1e-9  # scipy and passk agree to 1e-12
    assert curve["pass_hat_k"][3] == pytest.approx(0.2) and low < 0.2 < high
    assert curve["interval_level"] == "95%"
