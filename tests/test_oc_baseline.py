"""The operating characteristic with a baseline (issue 38, item 3).

Oracles: the judge itself (:func:`passk.gate.judge.judge` with the baseline), enumerated
over every outcome of small designs weighted by scipy's binomial pmf (exact), and, under
``slow``, an independent simulation (suites built run by run with ``results_from_runs``)
on A/A and A/B designs at 90/95/99 %. Monte Carlo through the judge must lie within
3 standard errors of either.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from passk.analysis.plan import baseline_operating_characteristic, plan_gate
from passk.cli.commands import main as passk_main
from passk.criteria import GateCriteria
from passk.gate.judge import judge
from passk.results.counts import Results, Run, results_from_runs
from passk.stats.operating import operating_characteristic


def passk(*argv: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = passk_main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def _results(ids: tuple[str, ...], c, n) -> Results:
    return results_from_runs([Run(t, i < ci, i) for t, ci, ni in zip(ids, c, n)
                              for i in range(ni)])


def _within(oc, truth: float, truth_se: float = 0.0) -> bool:
    se = math.sqrt(max(truth * (1 - truth), 1e-12) / oc.replicates + truth_se**2)
    return abs(oc.probability - truth) <= 3 * se + 1e-12


def _exact_with_judge(crit, rates, n, baseline, margin=None) -> float:
    """P(pass) = sum over every count vector of its probability times the judge's verdict."""
    ids = baseline.task_ids
    total = 0.0
    for c in itertools.product(range(n + 1), repeat=len(rates)):
        weight = float(np.prod([stats.binom.pmf(ci, n, p) for ci, p in zip(c, rates)]))
        if weight == 0:
            continue
        new = _results(ids, c, [n] * len(c))
        total += weight * judge(new, crit, baseline, margin=margin).passed
    return total


DESIGNS = [  # (name, confidence, mode, new rates, margin): the baseline has rates BASE
    ("A/A", 0.90, "chapter", None, None),
    ("A/B", 0.95, "proved-warn", [0.5, 0.45, 0.9], None),
    ("A/A margin", 0.99, "chapter", None, 0.4),
]
BASE = [0.9, 0.8, 0.95]


@pytest.mark.parametrize("name,conf,mode,rates,margin", DESIGNS)
def test_equals_the_judge_enumerated_over_every_outcome(name, conf, mode, rates, margin):
    ids = ("a", "b", "c")
    baseline = _results(ids, [3, 2, 3], [3, 3, 3])  # a fixed baseline file
    crit = GateCriteria(k=1, min_overall_pass_hat_k=0.5, max_flakiness=1.0, confidence=conf,
                        mode=mode, margin=margin)
    new = BASE if rates is None else rates
    truth = _exact_with_judge(crit, new, 2, baseline)
    oc = baseline_operating_characteristic(crit, 2, new, baseline=baseline, replicates=300,
                                           rng=7)
    assert oc.method == "monte carlo" and oc.replicates == 300
    assert _within(oc, truth), (name, oc, truth)
    TRUTHS[name] = truth


TRUTHS: dict[str, float] = {}


def test_the_enumerated_designs_tell_something():
    if len(TRUTHS) < len(DESIGNS):
        pytest.skip("run with the enumeration tests")
    assert any(0.02 < t < 0.98 for t in TRUTHS.values()), TRUTHS


def test_the_issue_case_a_a_baseline_with_a_margin_blocks():
    """26 tasks at 0.995 and 4 at 0, pass^5, 12 runs, proved-warn: 0.928 without a
    baseline; against an A/A baseline with a 0.05 margin the judge blocks every rerun."""
    rates = [0.995] * 26 + [0.0] * 4
    crit = GateCriteria(mode="proved-warn", margin=0.05)
    assert round(operating_characteristic(crit, 12, rates).probability, 3) == 0.928
    oc = baseline_operating_characteristic(crit, 12, rates, baseline=(rates, 12),
                                           replicates=30, rng=3)
    assert oc.probability == 0.0 and oc.method == "monte carlo"
    # the same suites, judged one by one without the helper: none passes either
    rng = np.random.default_rng(11)
    ids = tuple(f"t{i}" for i in range(30))
    for _ in range(5):
        old = _results(ids, rng.binomial(12, rates), [12] * 30)
        new = _results(ids, rng.binomial(12, rates), [12] * 30)
        v = judge(new, crit, old)
        assert not v.passed and any("non-inferiority within 0.05 not shown" in r
                                    for r in v.reasons), v.reasons


def test_a_fixed_baseline_is_paired_by_id_and_a_missing_task_always_blocks():
    ids = ("a", "b", "c")
    baseline = _results((*ids, "gone"), [3, 3, 3, 3], [3] * 4)
    crit = GateCriteria(k=1, min_overall_pass_hat_k=0.5, max_flakiness=1.0)
    oc = baseline_operating_characteristic(crit, 3, [1.0, 1.0, 1.0], baseline=baseline,
                                           task_ids=ids, replicates=20, rng=0)
    assert oc.probability == 0.0  # 'gone' has no runs in the new results: fails closed
    alone = _results(ids, [3, 3, 3], [3] * 3)
    oc = baseline_operating_characteristic(crit, 3, [1.0, 1.0, 1.0], baseline=alone,
                                           replicates=20, rng=0)
    assert oc.probability == 1.0


@pytest.mark.parametrize("bad", [
    {"runs": 0}, {"replicates": 0}, {"rates": [1.2, 0.5, 0.5]},
    {"task_ids": ("a", "b")}, {"baseline": ([0.5, 0.5], 3)},
])
def test_bad_arguments_are_refused(bad):
    kw = {"runs": 3, "rates": [0.5] * 3, "baseline": ([0.5] * 3, 3), "replicates": 5}
    kw.update(bad)
    runs, rates = kw.pop("runs"), kw.pop("rates")
    with pytest.raises(ValueError):
        baseline_operating_characteristic(GateCriteria(k=1), runs, rates, **kw)


def _file(path: Path, counts: dict[str, tuple[int, int]]) -> Path:
    path.write_text("".join(json.dumps({"task_id": t, "trial": i, "success": i < c}) + "\n"
                            for t, (c, n) in counts.items() for i in range(n)))
    return path


@pytest.mark.slow  # 200 reruns a figure through the judge: about a minute on a quiet core
@pytest.mark.parametrize("fmt", ["text", "--json", "--markdown"])
def test_passk_plan_gate_with_a_baseline(tmp_path, monkeypatch, fmt):
    monkeypatch.chdir(tmp_path)
    counts = {"a": (2, 2), "b": (2, 2), "c": (2, 2)}  # few outcomes: the judge's are reused
    new = _file(tmp_path / "new.jsonl", counts)
    old = _file(tmp_path / "old.jsonl", counts)
    args = ["plan", "--gate", new, "--baseline", old, "--k", "1", "--max-flakiness", "1",
            "--min-overall", "0.5", "--runs", "2"] + ([] if fmt == "text" else [fmt])
    code, out, err = passk(*args, "--margin", "0.05")
    assert code == 0, err
    if fmt == "--json":
        b = json.loads(out)["baseline"]
        assert b["margin"] == 0.05 and b["method"] == "monte carlo through the judge"
        assert [d["runs"] for d in b["designs"]] == ["as run", "2"]
        for d in b["designs"]:
            assert 0 <= d["false_block"] <= 1 and d["standard_error"]["pass_good"] >= 0
            assert d["false_block"] >= 1 - d["pass_good_without_baseline"]  # never less
    else:
        assert "with the baseline (3 tasks; non-inferiority within 0.05 must be shown" in out
        assert "Monte Carlo through the judge" in out and "as run" in out
        assert ("| as run |" in out) == (fmt == "--markdown")
    plain = json.loads(passk(*args[:-1] if fmt != "text" else args, "--json")[1])
    assert plain["baseline"]["margin"] is None


def test_passk_plan_gate_margin_needs_a_baseline(tmp_path):
    new = _file(tmp_path / "new.jsonl", {"a": (4, 4), "b": (3, 4)})
    code, _out, err = passk("plan", "--gate", new, "--k", "1", "--margin", "0.05")
    assert code == 2 and "--margin needs --baseline OLD" in err and err.count("\n") == 1


def test_plan_gate_api_with_a_baseline():
    baseline = _results(("a", "b", "c"), [3, 3, 2], [3] * 3)
    crit = GateCriteria(k=1, min_overall_pass_hat_k=0.5, max_flakiness=1.0)
    plan = plan_gate(crit, [0.9, 0.9, 0.8], runs=(3,), modes=("chapter",), baseline=baseline,
                     configured=[3, 3, 2], task_ids=("a", "b", "c"), baseline_replicates=10)
    assert plan.baseline is not None and plan.baseline.columns == ("as run", "3")
    assert all(g.method == "monte carlo" for g in plan.baseline.good)
    with pytest.raises(ValueError, match="needs the design"):
        plan_gate(crit, [0.9, 0.9, 0.8], modes=("chapter",), baseline=baseline)


@pytest.mark.slow
@pytest.mark.parametrize("conf", [0.90, 0.95, 0.99])
@pytest.mark.parametrize("design", ["A/A", "A/B", "A/A margin"])
def test_equals_an_independent_simulation_of_the_judge(conf, design):
    """Random baselines (drawn anew each rerun), 12 tasks: the helper against suites
    built run by run and judged, 300 each, within 3 s.e. of their difference."""
    rng = np.random.default_rng(int(conf * 1000))
    base = rng.uniform(0.6, 1.0, 12)
    new = {"A/A": base, "A/B": np.clip(base - 0.2, 0, 1), "A/A margin": base}[design]
    margin = 0.3 if design == "A/A margin" else None
    for mode in ("chapter", "proved-warn"):
        crit = GateCriteria(k=1, min_overall_pass_hat_k=0.6, max_flakiness=1.0,
                            confidence=conf, mode=mode, margin=margin)
        oc = baseline_operating_characteristic(crit, 8, new, baseline=(base, 8),
                                               replicates=300, rng=1)
        ids = tuple(f"t{i}" for i in range(12))
        sims = 300
        passed = sum(judge(_results(ids, rng.binomial(8, new), [8] * 12), crit,
                           _results(ids, rng.binomial(8, base), [8] * 12)).passed
                     for _ in range(sims))
        p = passed / sims
        pooled = (p + oc.probability) / 2
        se = math.sqrt(max(pooled * (1 - pooled), 1e-12) * (1 / sims + 1 / oc.replicates))
        assert abs(oc.probability - p) <= 3 * se + 1e-12, (design, conf, mode, oc, p)
