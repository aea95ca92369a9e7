"""The suite interval at small T (issue 38, item 4): at T = 1 it is the task's own exact
interval, the exact product is chosen from the design only, and every design at T = 1..3
covers at its level, each side at most alpha/2, by exact enumeration of the binomial
(scipy.stats.binom) over every outcome, with tasks of different rates, p near 1 included."""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np
import pytest
from scipy import stats

from passk import mean_pass_hat_k_ci, pass_hat_k_ci
from passk.stats.suite_interval import PRODUCT_MAX_TASKS, _hoeffding_suites

LEVELS = (0.90, 0.95, 0.99)


@pytest.mark.parametrize("confidence", LEVELS)
@pytest.mark.parametrize("n", [1, 2, 3, 4, 8, 12, pytest.param(20, marks=pytest.mark.slow)])
def test_one_task_is_its_own_exact_interval(n, confidence):
    """No wider than (here: equal to) the task's exact interval, every c and k <= n,
    and equal to scipy's Clopper-Pearson mapped through p -> p^k."""
    for k in range(1, n + 1):
        for c in range(n + 1):
            suite = mean_pass_hat_k_ci([c], [n], k, confidence=confidence)
            own = pass_hat_k_ci(c, n, k, confidence=confidence)
            assert suite.method == "product" and suite.level_kept
            assert suite.ci.high - suite.ci.low <= own.high - own.low
            assert (suite.ci.low, suite.ci.high) == (own.low, own.high)
            cp = stats.binomtest(c, n).proportion_ci(confidence, "exact")
            assert suite.ci.low == pytest.approx(cp.low**k, rel=1e-9, abs=1e-300)
            assert suite.ci.high == pytest.approx(cp.high**k, rel=1e-9)


@pytest.mark.parametrize("n,k", [(12, 5), (20, 10), (4, 2)])
def test_one_task_narrower_than_before(n, k):
    """The issue's case: n >= 2k used floor(n/k) blocks, up to 2.76 times the exact width."""
    from passk.metrics import estimate_pass_hat_k
    from passk.stats.suite_interval import _dominated_interval

    wider = 0
    for c in range(n + 1):
        value = np.array([float(estimate_pass_hat_k(c, n, k))])
        lo, hi = _dominated_interval(np.array([c]), np.array([n]), np.array([1]), value, k, 0.05)
        now = mean_pass_hat_k_ci([c], [n], k).ci
        wider += (hi - lo) > (now.high - now.low) + 1e-12
    assert wider >= (n + 1) // 2  # the former default was wider on most counts


@pytest.mark.parametrize("design", [(4,) * 3, (12, 12), (12, 12, 12), (3, 3, 3), (2, 8)])
def test_the_choice_sees_the_design_not_the_outcomes(design):
    """Every outcome of one design gets the same method: the choice keeps the level."""
    n = np.array(design)
    for k in (1, 2, 3):
        if k > n.min():
            continue
        methods = {mean_pass_hat_k_ci(list(c), n, k).method
                   for c in itertools.islice(itertools.product(*[range(m + 1) for m in n]),
                                             0, None, 29)}
        assert len(methods) == 1


def test_no_product_above_the_largest_t():
    t = PRODUCT_MAX_TASKS + 1
    assert mean_pass_hat_k_ci([3] * t, [12] * t, 8).method == "hoeffding"


@pytest.mark.parametrize("n,k,t", [(6, 3, 2), (12, 8, 2), (4, 1, 3), (3, 3, 1)])
def test_vectorized_suites_match_the_public_function(n, k, t):
    rng = np.random.default_rng(38)
    c = rng.binomial(n, rng.uniform(0.2, 1.0, t), size=(5, t))
    low, high = _hoeffding_suites(c, np.full(t, n), k, 0.05)
    for r in range(5):
        ci = mean_pass_hat_k_ci(c[r], [n] * t, k).ci
        assert ci.low == pytest.approx(low[r], abs=5e-12)
        assert ci.high == pytest.approx(high[r], abs=5e-12)


# --------------------------------------------------------------------------
# exact coverage by enumerating every outcome
# --------------------------------------------------------------------------

@cache
def _ends(outcome: tuple[int, ...], ns: tuple[int, ...], k: int,
          confidence: float) -> tuple[float, float]:
    ci = mean_pass_hat_k_ci(list(outcome), list(ns), k, confidence=confidence).ci
    return ci.low, ci.high


def exact_misses(ns: tuple[int, ...], k: int, rates: tuple[float, ...],
                 confidence: float) -> tuple[float, float]:
    """P(low > theta) and P(high < theta), summed over every outcome (c_1, ..., c_T)."""
    theta = float(np.mean(np.array(rates) ** k))
    pmfs = [stats.binom.pmf(np.arange(n + 1), n, p) for n, p in zip(ns, rates)]
    above = below = 0.0
    for outcome in itertools.product(*[range(n + 1) for n in ns]):
        weight = float(np.prod([pmf[c] for pmf, c in zip(pmfs, outcome)]))
        if weight == 0.0:
            continue
        low, high = _ends(outcome, ns, k, confidence)
        above += weight * (low > theta)
        below += weight * (high < theta)
    return above, below


RATES = {1: [(0.5,), (0.9,), (0.99,), (0.999,), (0.2,)],
         2: [(0.5, 0.9), (0.99, 0.999), (0.3, 0.97), (0.95, 0.95)],
         3: [(0.5, 0.9, 0.99), (0.999, 0.999, 0.98), (0.2, 0.6, 0.97)]}
CHEAP = [((4,), 2), ((12,), 5), ((3, 3), 2), ((6, 2), 2), ((12, 12), 8)]
HEAVY = [((8,), 1), ((20,), 10), ((5, 5), 5), ((8, 8), 4), ((4, 4, 4), 1), ((3, 3, 3), 2),
         ((6, 6, 6), 3), ((2, 5, 8), 2)]


def _check(ns: tuple[int, ...], k: int, confidence: float) -> None:
    for rates in RATES[len(ns)]:
        above, below = exact_misses(ns, k, rates, confidence)
        half = (1 - confidence) / 2
        assert above <= half * (1 + 1e-9), (ns, k, rates, confidence, above)
        assert below <= half * (1 + 1e-9), (ns, k, rates, confidence, below)


@pytest.mark.parametrize("confidence", LEVELS)
@pytest.mark.parametrize("ns,k", CHEAP)
def test_exact_coverage_each_side(ns, k, confidence):
    _check(ns, k, confidence)


@pytest.mark.slow
@pytest.mark.parametrize("confidence", LEVELS)
@pytest.mark.parametrize("ns,k", HEAVY)
def test_exact_coverage_each_side_more_designs(ns, k, confidence):
    _check(ns, k, confidence)
