"""passk.stats.sequential: planned looks with alpha spent over them; the error summed
exactly over scipy's binomial law of the runs, and bad input named."""

from __future__ import annotations

import itertools

import pytest
from scipy import stats

from passk.stats.sequential import DECISIONS, sequential_decision

LOOKS = (4, 8, 16)  # cumulative runs per task at each planned look


def wrong_stop_rate(p: float, k: int, bar: float, confidence: float) -> tuple[float, float]:
    """One task, runs added in stages of LOOKS: the probability of stopping with a pass and
    of stopping with a fail (the first decisive look), summed exactly over every path of
    the counts (increments binomial, scipy's pmf)."""
    table = {(j, c): sequential_decision([c], n, k, bar, look=j + 1, looks=len(LOOKS),
                                         confidence=confidence).decision
             for j, n in enumerate(LOOKS) for c in range(n + 1)}
    steps = [LOOKS[0]] + [b - a for a, b in itertools.pairwise(LOOKS)]
    passed = failed = 0.0
    for incs in itertools.product(*(range(s + 1) for s in steps)):
        prob, c = 1.0, 0
        for s, x in zip(steps, incs):
            prob *= stats.binom.pmf(x, s, p)
        for j, x in enumerate(incs):
            c += x
            d = table[(j, c)]
            if d != "continue":
                passed += prob * (d == "stop-pass")
                failed += prob * (d == "stop-fail")
                break
    return passed, failed


@pytest.mark.parametrize("confidence", [0.90, 0.95, 0.99])
@pytest.mark.parametrize(("k", "bar"), [(1, 0.7), (2, 0.5)])
def test_false_pass_and_false_fail_at_most_half_alpha_exactly(k, bar, confidence):
    alpha = 1 - confidence
    below = (bar - 1e-6) ** (1 / k)  # true pass^k just below the bar: a pass is wrong
    above = bar ** (1 / k)  # at the bar: a fail is wrong
    assert wrong_stop_rate(below, k, bar, confidence)[0] <= alpha / 2
    assert wrong_stop_rate(above, k, bar, confidence)[1] <= alpha / 2
    # and the rule does stop: a clearly good task passes most of the time (at 99 %, 16 runs
    # of one task cannot prove 0.7: 16 passes give a lower end (0.01/6)^(1/16) = 0.67)
    if confidence < 0.99:
        assert wrong_stop_rate(0.999, k, bar, confidence)[0] > 0.5


def test_decisions_and_bad_input():
    d = sequential_decision([4] * 30, 4, 1, 0.7, look=2, looks=3, confidence=0.9)
    assert d.decision in DECISIONS and d.confidence == pytest.approx(1 - 0.1 / 3)
    assert d.low <= d.high
    with pytest.raises(ValueError, match="look"):
        sequential_decision([4], 4, 1, 0.7, look=4, looks=3)
    with pytest.raises(ValueError, match="bar"):
        sequential_decision([4], 4, 1, 1.5, look=1, looks=3)
    with pytest.raises(ValueError, match="looks"):
        sequential_decision([4], 4, 1, 0.5, look=1, looks=0)
