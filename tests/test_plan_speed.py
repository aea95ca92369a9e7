"""Issue 41: ``passk plan --gate`` in seconds, its Monte Carlo figures against exact ones.

The planner asks :func:`passk.stats.operating.operating_characteristic` with a ``budget``:
exact on the estimates' lattice where it is small, a Monte Carlo of reruns elsewhere
(:func:`passk.stats.operating._sampled`: each task's own check exact, the suite's sum
sampled). Checked here against the exact path (the same function without a budget, on
designs whose lattice it holds), the per-rerun decisions against :func:`gate_decision`
itself, and the plan's output (text, Markdown, JSON) for saying which figure is which.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from passk.criteria import GateCriteria
from passk.stats import operating
from passk.stats.operating import gate_decision, operating_characteristic


@pytest.mark.parametrize("mode", ["chapter", "proved-warn", "proved"])
@pytest.mark.parametrize("population", ["rates", "pilot", "identical"])
def test_monte_carlo_agrees_with_the_exact_path(mode: str, population: str) -> None:
    """30 tasks, n = 12, k = 3 (lattice 220 x 30): exact without a budget; with budget=1
    the Monte Carlo, which must lie within 4 s.e. (+ 1e-3) of it."""
    rng = np.random.default_rng(5)
    crit = GateCriteria(k=3, mode=mode, max_flakiness=1.0 if mode == "chapter" else 0.2,
                        min_overall_pass_hat_k=0.55)
    if population == "pilot":
        c = rng.integers(9, 13, size=30)
        kw: dict = {"pilot": (c, np.full(30, 12))}
    elif population == "identical":
        kw = {"rates": np.full(30, 0.55 ** (1 / 3))}
    else:
        kw = {"rates": rng.beta(6, 1, size=30)}
    exact = operating_characteristic(crit, 12, rng=0, **kw)
    assert exact.method == "exact"
    mc = operating_characteristic(crit, 12, rng=1, replicates=4000, budget=1, **kw)
    if mc.method == "exact":  # a task that never passes its check: 0 exactly
        assert mc.probability == 0.0 == pytest.approx(exact.probability, abs=1e-12)
        return
    assert mc.method == "monte carlo" and mc.replicates == 4000
    assert abs(mc.probability - exact.probability) <= 4 * mc.standard_error + 1e-3
    assert mc.low <= mc.probability <= mc.high


def test_proved_mode_blocked_everywhere_is_exactly_zero() -> None:
    """'proved' needs 56 runs to prove a task steady at cap 0.2: from 12 runs no task can,
    so P(pass) is 0, exact, without drawing a rerun."""
    oc = operating_characteristic(GateCriteria(k=5, mode="proved"), 12, [0.99] * 300,
                                  budget=1)
    assert (oc.probability, oc.method) == (0.0, "exact")


@pytest.mark.parametrize(("n", "k", "tasks"), [(12, 3, 40), (8, 5, 40), (10, 4, 6), (16, 12, 25)])
def test_each_rerun_is_decided_as_the_gate_decides(n: int, k: int, tasks: int) -> None:
    """The batched decision (the threshold where n >= 2k, the batched interval otherwise)
    against gate_decision itself, rerun by rerun."""
    rng = np.random.default_rng(n * 100 + k)
    p = rng.beta(5, 1, size=tasks)
    draws = rng.binomial(n, p, size=(60, tasks))
    # the bar at the median of the reruns' proved lower ends: both verdicts, some near it
    lows = [gate_decision(row, n, GateCriteria(k=k, mode="proved-warn")).suite_value
            for row in draws]
    crit = GateCriteria(k=k, mode="proved-warn",
                        min_overall_pass_hat_k=round(float(np.median(lows)), 4))
    got = operating._proved_passes(draws, n, k, crit, p, None, 0)
    want = np.array([gate_decision(row, n, crit).passed for row in draws])
    assert got.tolist() == want.tolist()
    assert 0 < want.sum() < want.size  # both verdicts seen


def test_sampled_draws_follow_each_tasks_restricted_law() -> None:
    """The inversion draws each task's count from its own law restricted to its check: the
    chapter's flakiness cap 0.2 at n = 12 allows only 0, 1, 11, 12 successes."""
    crit = GateCriteria(k=1, max_flakiness=0.4)
    calls = {}
    real = operating.mean_reaches

    def spy(values, bar, **kw):  # type: ignore[no-untyped-def]
        calls["counts"] = kw.get("successes")
        return real(values, bar, **kw)

    operating.mean_reaches = spy
    try:
        operating_characteristic(crit, 12, [0.9, 0.95, 0.5], budget=1, replicates=500, rng=2)
    finally:
        operating.mean_reaches = real
    counts = np.asarray(calls["counts"])
    f = 4 * (counts / 12) * (1 - counts / 12)
    assert counts.shape == (500, 3) and (f <= 0.4).all()
    assert set(np.unique(counts[:, 0]).tolist()) <= {0, 1, 11, 12}


def _plan_file(tmp_path, tasks: int = 40, runs: int = 12):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(9)
    p = rng.beta(8, 1, size=tasks)
    path = tmp_path / "pilot.jsonl"
    path.write_text("".join(json.dumps({"task_id": f"t{i:03d}", "trial": r,
                                        "success": bool(rng.random() < p[i])}) + "\n"
                            for i in range(tasks) for r in range(runs)))
    return path


def test_plan_output_says_which_figure_is_monte_carlo(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from passk.cli.commands import main

    path = _plan_file(tmp_path)
    assert main(["plan", "--gate", str(path), "--k", "5", "--runs", "12,24"]) == 0
    text = capsys.readouterr().out
    assert "exact at 12" in text and "Monte Carlo at 24" in text and "reruns a figure" in text
    assert main(["plan", "--gate", str(path), "--k", "5", "--runs", "12,24", "--markdown"]) == 0
    md = capsys.readouterr().out
    assert "Monte Carlo at 24" in md and "|" in md
    assert main(["plan", "--gate", str(path), "--k", "5", "--runs", "12,24", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    for mode in ("chapter", "proved", "proved-warn"):
        methods = payload["modes"][mode]["method"]
        assert methods[0] == "exact"
        se = payload["modes"][mode]["standard_error"]
        assert len(se["false_block"]) == 2 and len(se["false_pass_at_bar"]) == 2
        assert se["false_block"][0] == 0.0  # exact: no standard error
    assert payload["monte_carlo_replicates"] > 0
    assert payload["modes"]["proved-warn"]["method"][1] == "monte carlo"


def test_plan_monte_carlo_figures_bracket_the_exact_ones(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The planner's figure at n = 24 (Monte Carlo, lattice 42,504 x 40 above its budget)
    against the exact operating characteristic at the same design (the lattice fits 2**22)."""
    from passk.analysis.plan import plan_gate
    from passk.results.read import read_results

    r = read_results(str(_plan_file(tmp_path)))
    crit = GateCriteria(k=5)
    plan = plan_gate(crit, pilot=(r.successes, r.totals), runs=(24,),
                     modes=("proved-warn",))
    assert plan.methods["proved-warn"] == ("monte carlo",)
    exact = operating_characteristic(GateCriteria(k=5, mode="proved-warn"), 24,
                                     pilot=(r.successes, r.totals), rng=0)
    assert exact.method == "exact"
    se = plan.good_se["proved-warn"][0]
    assert plan.pass_good["proved-warn"][0] - 2 * se <= exact.probability + 1e-3
    assert exact.probability <= plan.good_high["proved-warn"][0] + 2 * se + 1e-3


@pytest.mark.parametrize(("tasks", "method"), [(3, "bracket"), (4, "bracket"), (5, "monte carlo")])
def test_budget_keeps_a_bracket_only_where_its_grid_fits(tasks: int, method: str) -> None:
    """Lower bounds have no lattice: a bracket of 2**16 steps a task while tasks x 2**16 fit
    the budget (2**18: up to 4 tasks), Monte Carlo beyond; without a budget, always a bracket."""
    from passk.analysis.plan import PLAN_BUDGET

    crit = GateCriteria(k=2, min_overall_pass_hat_k=0.3, max_flakiness=0.8, on="lower-bound")
    rates = np.linspace(0.7, 0.99, tasks)
    got = operating_characteristic(crit, 6, rates, rng=0, replicates=2000, budget=PLAN_BUDGET)
    assert got.method == method
    full = operating_characteristic(crit, 6, rates, rng=0)
    assert full.method == "bracket"
    if method == "bracket":
        assert (got.low, got.high) == (full.low, full.high)
    else:
        assert full.low - 4 * got.standard_error - 1e-3 <= got.probability
        assert got.probability <= full.high + 4 * got.standard_error + 1e-3
