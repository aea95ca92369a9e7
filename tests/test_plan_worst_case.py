"""The planners of issue 29: the comparison's plan without a pilot is never optimistic, and
``passk plan --gate`` shows the gate's operating characteristic.

The no-pilot plan is checked against simulation (Monte Carlo with its standard error) on
three designs that are neither the default population nor the benchmark's ten
(``benchmarks/bench_plan.py``); its worst within-task variance against a brute-force
maximum of the exact variance summed over scipy's binomial.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import optimize, special

from passk.criteria import GateCriteria
from passk.gate.judge import judge
from passk.results.counts import Run, results_from_runs
from passk.stats.power import pass_hat_k_sampling_variance, plan_comparison
from passk.stats.simulation import TaskPopulation, simulate_intervals


def _even_drop(p: np.ndarray, k: int, delta: float) -> np.ndarray:
    logit = special.logit(p)
    target = float(np.mean(p**k)) - delta
    shift = optimize.brentq(lambda x: float(np.mean(special.expit(logit - x) ** k)) - target,
                            0.0, 60.0, xtol=1e-13)
    return np.asarray(special.expit(logit - shift))


@pytest.mark.parametrize(("n", "k"), [(4, 1), (6, 2), (12, 5), (5, 5)])
def test_worst_within_is_the_largest_exact_variance(n: int, k: int) -> None:
    from passk.stats.power import _worst_within
    p = np.linspace(0, 1, 20_001)
    brute = float(np.max(pass_hat_k_sampling_variance(p, n, k)))
    assert _worst_within(n, k) >= brute - 1e-12
    assert _worst_within(n, k) == pytest.approx(brute, rel=1e-6)


@pytest.mark.parametrize(("a", "b", "k", "t", "n", "delta"), [
    (3.0, 1.0, 2, 100, 4, 0.06),   # mostly reliable
    (0.5, 0.8, 1, 70, 6, 0.08),    # bimodal, leaning to failure
    (12.0, 1.0, 3, 120, 8, 0.04),  # near-saturated
])
def test_no_pilot_plan_is_not_optimistic(a: float, b: float, k: int, t: int, n: int,
                                         delta: float) -> None:
    rng = np.random.default_rng(29)
    p_old = np.clip(rng.beta(a, b, 20_000), 1e-9, 1 - 1e-9)
    pop = TaskPopulation(p_old, _even_drop(p_old, k, delta), "drop")
    reps = 600
    sim = simulate_intervals(pop, t, n, k, methods=("t",), replicates=reps, p_values=False,
                             rng=30)["t"]
    simulated = float(np.mean(sim.high < 0))
    se = math.sqrt(max(simulated * (1 - simulated), 0.01) / reps)
    plan = plan_comparison(k, delta=delta, tasks=(t,), runs=(n,))
    assert plan.power is not None
    assert float(plan.power[0, 0]) <= simulated + 0.02 + 2 * se


def test_worst_case_needs_more_tasks_than_any_assumed_population() -> None:
    worst = plan_comparison(2, delta=0.05, tasks=(100,), runs=(4,))
    assumed = plan_comparison(2, delta=0.05, tasks=(100,), runs=(4,),
                              assume="default-population")
    assert worst.tasks_needed is not None and assumed.tasks_needed is not None
    assert worst.tasks_needed[0] > assumed.tasks_needed[0]
    assert "worst case" in worst.source
    with pytest.raises(ValueError, match="assume"):
        plan_comparison(2, delta=0.05, assume="optimistic")


def _suite(successes: list[int], totals: list[int]):  # type: ignore[no-untyped-def]
    return results_from_runs([Run(f"t{i}", t < c, t) for i, (c, n) in
                              enumerate(zip(successes, totals, strict=True)) for t in range(n)])


def test_the_judge_honours_the_mode() -> None:
    c = [12] * 25 + [11] + [0] * 4  # one failure in 12 on one good task
    suite = _suite(c, [12] * 30)
    chapter = judge(suite, GateCriteria())
    assert not chapter.passed and chapter.flaky_tasks == ("t25",)
    warn = judge(suite, GateCriteria(mode="proved-warn"))
    assert warn.passed and warn.flaky_tasks == ("t25",) and warn.reasons == ()
    proved = judge(suite, GateCriteria(mode="proved"))
    assert not proved.passed and any("not proved steady" in r for r in proved.reasons)
    short = _suite([3, 12], [3, 12])  # t0: 3 runs < k
    assert any("too few" in r for r in judge(short, GateCriteria(mode="proved-warn")).reasons)


def test_plan_gate_cli(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from passk.cli.commands import main
    path = tmp_path / "suite.jsonl"
    path.write_text("".join(json.dumps({"task_id": f"t{i:02d}", "trial": r,
                                        "success": r < (12 if i < 26 else 0)}) + "\n"
                            for i in range(30) for r in range(12)))
    argv = ["plan", "--gate", str(path), "--k", "5", "--runs", "12,24"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "false block" in out and "false pass" in out and "proved-warn" in out
    assert main([*argv, "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["runs"] == [12, 24]
    assert set(payload["modes"]) == {"chapter", "proved", "proved-warn"}
    assert all(x <= 0.05 for x in payload["modes"]["proved-warn"]["false_pass_at_bar"])
    assert main(["plan", "--gate", "--k", "5"]) == 2  # no file: one line, exit 2


@pytest.mark.parametrize(("t", "mean", "sd"), [(80, 0.06, 0.30), (200, 0.04, 0.25),
                                               (60, 0.10, 0.40)])
def test_betting_power_is_not_above_the_simulated_betting_interval(t: int, mean: float,
                                                                   sd: float) -> None:
    """The planner's power of the proved part against the betting capital itself: suites of
    old - new differences of pass^k drawn from a two-point law on [-1, 1] with the given
    mean and sd (600 suites; the comparison's own capital, task and block bets, evaluated
    at no change); the plan (from the mean and variance alone) is never above the
    simulated rate of "the interval lies below 0" by more than 0.02 + 2 s.e."""
    from passk.stats.compare import _log_capital
    from passk.stats.power import _betting_power
    rng = np.random.default_rng(t)
    reps, alpha = 600, 0.05
    # two points a < mean < b with P(b) = q: mean and sd as given, inside [-1, 1]
    q = 0.3
    b = mean + sd * math.sqrt((1 - q) / q)
    a = mean - sd * math.sqrt(q / (1 - q))
    assert a >= -1 and b <= 1
    x = np.where(rng.random((reps, t)) < q, b, a)
    h_new, h_old = (1 - x) / 2, (1 + x) / 2  # in [0, 1], old - new = x
    blocks = np.ones((reps, t))
    shown = _log_capital(h_new, h_old, blocks, blocks, np.zeros(reps),
                         alpha / 2) >= math.log(2 / alpha)
    simulated = float(np.mean(shown))
    se = math.sqrt(max(simulated * (1 - simulated), 0.01) / reps)
    planned = float(_betting_power(mean, sd**2, t, alpha))
    assert planned <= simulated + 0.02 + 2 * se, (planned, simulated)
