"""A mean at the bar is decided exactly, in any order of the tasks (issue 38, items 1 and 2).

The oracle is exact arithmetic written out here: each task's pass^k estimate as the fraction
C(c, k)/C(n, k) (``math.comb``), the bar as the decimal a person wrote (``Fraction(str(bar))``),
and, for the operating characteristic, every outcome of a small suite enumerated, weighted by
scipy's binomial and decided by the real judge (:func:`passk.gate.judge.judge`).
"""

from __future__ import annotations

import itertools
import json
import math
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from passk.cli.commands import main
from passk.criteria import GateCriteria
from passk.gate.judge import judge
from passk.metrics import pass_hat_k_lower_bound
from passk.results.counts import Results
from passk.stability import reliability_gate, suite_report
from passk.stats import operating
from passk.stats.operating import (
    bar_fraction,
    exact_mean,
    gate_decision,
    mean_reaches,
    operating_characteristic,
)


def _results(c: tuple[int, ...] | list[int], n: tuple[int, ...] | list[int]) -> Results:
    t = len(c)
    return Results(tuple(f"t{i}" for i in range(t)), np.array(c, dtype=np.int64),
                   np.array(n, dtype=np.int64), np.zeros(t, dtype=np.int64),
                   ("read-only",) * t)


def _oracle_mean(c: tuple[int, ...], n: tuple[int, ...], k: int) -> Fraction:
    return sum((Fraction(math.comb(ci, k), math.comb(ni, k)) for ci, ni in zip(c, n)),
               Fraction(0)) / len(c)


def _decimal(x: Fraction) -> float | None:
    """The bar a person would write for x: its decimal, when x has a short one."""
    d = x.denominator
    while d % 2 == 0:
        d //= 2
    while d % 5 == 0:
        d //= 5
    if d != 1:
        return None
    for digits in range(1, 16):
        text = f"{float(x):.{digits}f}"
        if Fraction(text) == x:
            return float(text)
    return None


def _verdicts(c: tuple[int, ...], n: tuple[int, ...], k: int, bar: float,
              on: str = "estimate") -> set[bool]:
    """Every order of the tasks through the judge, reliability_gate and gate_decision."""
    crit = GateCriteria(k=k, min_overall_pass_hat_k=bar, max_flakiness=1.0, on=on)
    seen = set()
    for order in itertools.permutations(range(len(c))):
        cc, nn = tuple(c[i] for i in order), tuple(n[i] for i in order)
        v = judge(_results(cc, nn), crit)
        rows = suite_report([f"t{i}" for i in order], cc, nn, k=k).tasks
        g = reliability_gate(rows, min_overall_pass_hat_k=bar, max_flakiness=1.0, on=on)
        d = gate_decision(cc, nn, crit)
        assert v.passed == g.passed == d.passed, (cc, nn, bar)
        assert v.passed == (not any("below the bar" in r for r in v.reasons))
        seen.add(v.passed)
    return seen


# --------------------------------------------------------------------------
# item 1: the verdict does not depend on the order of the tasks
# --------------------------------------------------------------------------


@pytest.mark.parametrize("c, n, k, bar, passed", [
    ((8, 7, 6), (10, 10, 10), 1, 0.7, True),  # the issue's case: 6, 7, 8 was blocked
    ((8, 7, 6), (10, 10, 10), 1, 0.7000000000000001, False),  # the next double up: above 7/10
    ((7, 7), (20, 20), 1, 0.35, True),
    ((5, 9), (20, 20), 1, 0.35, True),
    ((2, 4), (5, 5), 2, 0.35, True),  # 0.1 and 0.6: pass^2 as C(c,2)/C(5,2)
    ((2, 4, 3, 3), (5, 5, 5, 5), 2, 0.325, True),  # (0.1 + 0.6 + 0.3 + 0.3) / 4
    ((2, 4, 3, 3), (5, 5, 5, 5), 2, 0.3250000000000001, False),
    ((0, 1, 2), (3, 3, 3), 1, 1 / 3, True),  # bar 0.3333333333333333 < 1/3
    ((0, 1, 2), (3, 3, 3), 1, float(np.nextafter(1 / 3, 1)), False),  # 0.33333333333333337
    ((1, 1, 1), (3, 3, 3), 1, 1 / 3, True),
    ((3, 2, 2, 3, 1), (3, 3, 3, 4, 3), 1, 0.65, True),  # mixed n: (1+2/3+2/3+3/4+1/3)/5
])
def test_lattice_ties_decided_alike_in_every_order(c, n, k, bar, passed):
    assert _oracle_mean(c, n, k) >= Fraction(str(bar)) if passed else \
        _oracle_mean(c, n, k) < Fraction(str(bar))  # the case is what it says
    assert _verdicts(c, n, k, bar) == {passed}


@st.composite
def _suites(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...], int, float]:
    tasks = draw(st.integers(2, 5))
    same_n = draw(st.booleans())
    n0 = draw(st.integers(1, 12))
    n = tuple(n0 if same_n else draw(st.integers(1, 12)) for _ in range(tasks))
    k = draw(st.integers(1, min(n)))
    c = tuple(draw(st.integers(0, ni)) for ni in n)
    mean = _oracle_mean(c, n, k)
    decimal = _decimal(mean)
    nearest = float(mean)
    choices = [nearest, float(np.nextafter(nearest, 0)), float(np.nextafter(nearest, 1))]
    if decimal is not None:
        choices = [decimal] * 3 + choices  # ties as often as not
    bar = draw(st.sampled_from([x for x in choices if 0 <= x <= 1]))
    return c, n, k, bar


@settings(max_examples=60, deadline=None)
@given(_suites())
def test_every_order_gives_the_exact_verdict(suite):
    c, n, k, bar = suite
    want = _oracle_mean(c, n, k) >= Fraction(repr(bar))
    assert _verdicts(c, n, k, bar) == {want}


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 8), min_size=2, max_size=5), st.integers(0, 2))
def test_lower_bound_mean_exact_in_every_order(c, step):
    """On the lower bound the values are floats: their exact sum decides, in any order."""
    n = tuple([8] * len(c))
    bounds = pass_hat_k_lower_bound(np.array(c), 8, 1)
    exact = sum((Fraction(float(b)) for b in np.atleast_1d(bounds)), Fraction(0)) / len(c)
    bar = float(exact)
    for _ in range(step):
        bar = float(np.nextafter(bar, 1))
    want = exact >= Fraction(repr(bar))
    assert _verdicts(tuple(c), n, 1, bar, on="lower-bound") == {want}


@pytest.mark.parametrize("fmt", [[], ["--json"], ["--markdown"]])
@pytest.mark.parametrize("bar, code", [("0.7", 0), ("0.7000000000000001", 1)])
def test_cli_gate_and_report_in_both_orders(tmp_path: Path, capsys, fmt, bar, code):
    for order in ((8, 7, 6), (6, 7, 8)):
        path = tmp_path / f"runs-{order[0]}.jsonl"
        path.write_text("".join(json.dumps({"task_id": f"t{i}", "trial": j, "success": j < c})
                                + "\n" for i, c in enumerate(order) for j in range(10)))
        argv = [str(path), "--k", "1", "--min-overall", bar, "--max-flakiness", "1", *fmt]
        assert main(["gate", *argv]) == code
        out = capsys.readouterr().out
        if fmt == ["--json"]:
            gate = json.loads(out)["gate"]
            assert gate["passed"] is (code == 0)
            assert gate["overall"] == pytest.approx(0.7, abs=1e-15)
        assert ("0.7 is below the bar 0.7000000000000001" in out) is (code == 1)
        assert "0.700 is below the bar 0.700" not in out
        main(["report", *argv])
        out = capsys.readouterr().out
        assert ("0.7 is below the bar 0.7000000000000001" in out) is (code == 1)
        assert ("PASSED" in out) is (code == 0) or fmt == ["--json"]


def test_bar_is_the_decimal_written():
    assert bar_fraction(0.7) == Fraction(7, 10) != Fraction(0.7)
    assert bar_fraction(np.float64(0.35)) == Fraction(7, 20)
    assert bar_fraction(Fraction(1, 3)) == Fraction(1, 3)
    with pytest.raises(ValueError, match="finite"):
        bar_fraction(math.nan)


def test_a_million_tasks_fast_path_and_ties():
    """10**6 tasks: far from the bar the float mean decides; at it (mean exactly 0.7), the
    exact path, in well under a second, whatever the order."""
    rng = np.random.default_rng(0)
    c = np.repeat([6, 8], 500_000)
    for _ in range(2):
        rng.shuffle(c)
        v = c / 10
        start = time.process_time()
        assert mean_reaches(v, 0.7, successes=c, totals=10, k=1)
        assert not mean_reaches(v, 0.7000000000000001, successes=c, totals=10, k=1)
        assert time.process_time() - start < 3.0
        assert exact_mean(v, successes=c, totals=10, k=1) == Fraction(7, 10)
    v = rng.binomial(10, 0.6, 10**6) / 10
    start = time.process_time()
    assert not mean_reaches(v, 0.7)
    assert time.process_time() - start < 0.5


def test_mean_reaches_rows_and_nan():
    rows = np.array([[0.6, 0.8], [0.6, np.nan], [0.5, 0.5]])
    assert mean_reaches(rows, 0.5).tolist() == [True, False, True]
    assert mean_reaches(rows, 0.7).tolist() == [True, False, False]
    with pytest.raises(ValueError, match="totals and k"):
        mean_reaches([0.6, 0.8], 0.7, successes=[6, 8])


# --------------------------------------------------------------------------
# item 2: the operating characteristic equals enumerating the judge
# --------------------------------------------------------------------------


def _brute(rates: list[float], n: int, crit: GateCriteria) -> float:
    total = 0.0
    for c in itertools.product(range(n + 1), repeat=len(rates)):
        weight = math.prod(stats.binom.pmf(ci, n, p) for ci, p in zip(c, rates))
        if weight and judge(_results(c, [n] * len(c)), crit).passed:
            total += weight
    return total


_CELLS = [  # (rates, n, k, bar, cap): bars on the lattice, so ties carry probability
    ([0.7, 0.7, 0.7], 5, 1, 0.6, 1.0),
    ([0.9, 0.6, 0.75], 4, 1, 0.75, 1.0),
    ([0.95, 0.8, 0.85], 6, 2, 0.6, 0.9),
    ([0.97, 0.9], 5, 2, 0.7, 1.0),  # pass^2 on C(5, 2) = 10: 0.7 is a lattice point
]


@pytest.mark.parametrize("confidence", [0.90, 0.95, 0.99])
@pytest.mark.parametrize("mode", ["chapter", "proved", "proved-warn"])
@pytest.mark.parametrize("rates, n, k, bar, cap", _CELLS)
def test_operating_characteristic_equals_the_judge_enumerated(rates, n, k, bar, cap, mode,
                                                               confidence):
    crit = GateCriteria(k=k, min_overall_pass_hat_k=bar, max_flakiness=cap, mode=mode,
                        confidence=confidence)
    oc = operating_characteristic(crit, n, rates, rng=0)
    want = _brute(rates, n, crit)
    if mode == "chapter":  # the chapter's rule is always on its lattice here
        assert oc.method == "exact"
    if oc.method == "exact":
        assert oc.low == oc.high == oc.probability
        assert oc.probability == pytest.approx(want, abs=1e-12)
    else:
        assert oc.low - 1e-12 <= want <= oc.high + 1e-12


def test_the_issue_cell_counts_a_mean_at_the_bar_as_the_judge_does():
    """T = 3, n = 10, bar 0.7: the judge used to block some orders of a mean at 0.7 (0.513 by
    enumeration where the OC said 0.589); now both count the tie as a pass."""
    crit = GateCriteria(k=1, min_overall_pass_hat_k=0.7, max_flakiness=1.0)
    want = _brute([0.7, 0.7, 0.7], 10, crit)
    ties = sum(math.prod(stats.binom.pmf(ci, 10, 0.7) for ci in c)
               for c in itertools.product(range(11), repeat=3) if sum(c) == 21)
    assert ties > 0.05  # the tie carries real weight
    assert operating_characteristic(crit, 10, [0.7] * 3).probability == \
        pytest.approx(want, abs=1e-12)


def test_chapter_on_lower_bound_is_a_bracket_and_says_so():
    crit = GateCriteria(k=2, min_overall_pass_hat_k=0.3, max_flakiness=0.8, on="lower-bound")
    oc = operating_characteristic(crit, 6, [0.9, 0.7, 0.99])
    want = _brute([0.9, 0.7, 0.99], 6, crit)
    assert oc.method == "bracket" and oc.low - 1e-12 <= want <= oc.high + 1e-12
    assert oc.high - oc.low < 0.01
    assert f"between {oc.low:.3f} and {oc.high:.3f}" in oc.describe()
    sentence = operating.rerun_pass_sentence([5, 4, 6], 6, crit)
    assert "between" in sentence and "bracket" in sentence


def test_a_grid_too_small_is_labelled_a_bracket(monkeypatch):
    """The old cap (2**19 - 1) cannot hold T = 1000, n = 12, k = 5's lattice: a bracket, said."""
    crit = GateCriteria(k=5, min_overall_pass_hat_k=0.7, max_flakiness=1.0)
    rates = np.full(1000, 0.7 ** 0.2)
    exact = operating_characteristic(crit, 12, rates)
    monkeypatch.setattr(operating, "_GRID", 2**19 - 1)
    monkeypatch.setattr(operating, "_BRACKET_STEPS", 2**14)
    old = operating_characteristic(crit, 12, rates)
    assert old.method == "bracket" and "between" in old.describe()
    assert old.low <= exact.probability <= old.high
    assert exact.method == "exact" and "(exact)" in exact.describe()


def _dp_law(pmf: np.ndarray, steps: np.ndarray, tasks: int) -> np.ndarray:
    """The law of a sum of iid lattice variables by plain shifted additions: no transform."""
    law = np.array([1.0])
    top = int(steps.max())
    for _ in range(tasks):
        nxt = np.zeros(law.size + top)
        for p, s in zip(pmf, steps):
            nxt[s:s + law.size] += p * law
        law = nxt
    return law


def test_t1000_n12_k5_is_exact_against_monte_carlo():
    crit = GateCriteria(k=5, min_overall_pass_hat_k=0.7, max_flakiness=1.0)
    p = 0.7 ** 0.2
    oc = operating_characteristic(crit, 12, np.full(1000, p))
    assert oc.method == "exact" and oc.low == oc.high
    table = np.array([math.comb(c, 5) for c in range(13)])
    need = 792 * 700  # sum of C(c, 5) >= 0.7 * C(12, 5) * 1000, in integers
    draws = np.random.default_rng(1).binomial(12, p, size=(20_000, 1000))
    hits = table[draws].sum(axis=1) >= need
    se = math.sqrt(0.25 / hits.size)
    assert abs(oc.probability - hits.mean()) < 4 * se


@pytest.mark.slow
def test_t1000_n12_k5_equals_a_sum_without_transforms():
    """The exact figure (0.5005) against the law built by shifted additions, in integers."""
    crit = GateCriteria(k=5, min_overall_pass_hat_k=0.7, max_flakiness=1.0)
    p = 0.7 ** 0.2
    oc = operating_characteristic(crit, 12, np.full(1000, p))
    steps = np.array([math.comb(c, 5) for c in range(13)])
    law = _dp_law(stats.binom.pmf(np.arange(13), 12, p), steps, 1000)
    assert oc.probability == pytest.approx(float(law[792 * 700:].sum()), abs=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["chapter", "proved-warn"])
def test_distinct_tasks_exact_and_fast(mode):
    """1000 distinct rates on the full lattice: exact, and a few seconds of CPU at most."""
    crit = GateCriteria(k=5, min_overall_pass_hat_k=0.7, max_flakiness=1.0, mode=mode)
    rates = operating.lowered_rates(np.linspace(0.8, 1.0, 1000), 5, 0.7)
    start = time.process_time()
    oc = operating_characteristic(crit, 12, rates, rng=0)
    assert time.process_time() - start < 20.0
    assert oc.method == "exact" and oc.low == oc.high
    draws = np.random.default_rng(2).binomial(12, rates, size=(400, 1000))
    passed = np.array([gate_decision(row, 12, crit).passed for row in draws])
    se = max(math.sqrt(oc.probability * (1 - oc.probability) / passed.size), 1e-3)
    assert abs(oc.probability - passed.mean()) < 4 * se


def test_plan_shows_both_ends_of_a_bracket(monkeypatch):
    from passk.analysis.plan import format_gate_plan, plan_gate
    monkeypatch.setattr(operating, "_BRACKET_STEPS", 2**5)  # a coarse grid: a wide bracket
    crit = GateCriteria(k=2, min_overall_pass_hat_k=0.3, max_flakiness=0.8, on="lower-bound")
    plan = plan_gate(crit, [0.9, 0.7, 0.99], runs=(6,), modes=("chapter",))
    assert plan.methods["chapter"] == ("bracket",)
    (lo, hi), = plan.false_block_range("chapter")
    assert hi - lo > 0.001 and hi == pytest.approx(1 - plan.pass_good["chapter"][0])
    want = 1 - _brute([0.9, 0.7, 0.99], 6, crit)
    assert lo - 1e-12 <= want <= hi + 1e-12
    for markdown in (False, True):
        text = format_gate_plan(plan, markdown=markdown)
        assert f"{lo:.3f}-{hi:.3f}" in text and "a bracket" in text
    data = plan.to_dict()["modes"]["chapter"]
    assert data["method"] == ["bracket"] and data["false_block_range"] == [[lo, hi]]
    exact = plan_gate(replace_on(crit), [0.9, 0.7, 0.99], runs=(6,), modes=("chapter",))
    assert exact.methods["chapter"] == ("exact",)
    assert "a bracket" not in format_gate_plan(exact)


def replace_on(crit: GateCriteria) -> GateCriteria:
    from dataclasses import replace
    return replace(crit, on="estimate")
