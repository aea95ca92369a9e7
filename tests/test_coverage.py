"""passk.stats.coverage: exact coverage of the per-task intervals for pass^k.

Oracles, none of them passk's own code:

* brute force: a Python loop over c = 0..n weighting each count with
  ``scipy.stats.binom.pmf``, with the exact interval taken from
  ``scipy.stats.binomtest(c, n).proportion_ci(method="exact")`` raised to the k-th
  power, and the bootstrap's infinite-resample percentiles found from the exact
  binomial CDF in ``fractions.Fraction`` arithmetic and the estimator from
  ``math.comb``;
* the figures of issue 9 (coverage of the chapter's bootstrap at n = 12 and n = 5);
* closed forms where the sum has only a few terms (p = 0, p = 1, c = n).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from passk.stats.coverage import exact_coverage, expected_width

CONFIDENCE = 0.95


@functools.cache
def exact_interval(c: int, n: int, k: int, confidence: float) -> tuple[float, float]:
    """Clopper–Pearson for p from scipy's binomtest, mapped through p -> p**k."""
    ci = stats.binomtest(c, n).proportion_ci(confidence_level=confidence, method="exact")
    return ci.low**k, ci.high**k


@functools.cache
def bootstrap_interval(c: int, n: int, k: int, confidence: float) -> tuple[float, float]:
    """The percentile bootstrap with infinitely many resamples, in exact arithmetic.

    A resample's count is c* ~ Binomial(n, c/n); the q-quantile of the statistic
    C(c*, k)/C(n, k), non-decreasing in c*, is the statistic at the smallest c*
    whose CDF reaches q.
    """
    p_hat = Fraction(c, n)
    pmf = [math.comb(n, j) * p_hat**j * (1 - p_hat) ** (n - j) for j in range(n + 1)]
    cdf = [sum(pmf[: j + 1]) for j in range(n + 1)]
    alpha = 1 - Fraction(confidence).limit_denominator(10**6)

    def quantile(q: Fraction) -> float:
        j = next(j for j in range(n + 1) if cdf[j] >= q)
        return math.comb(j, k) / math.comb(n, k)

    return quantile(alpha / 2), quantile(1 - alpha / 2)


INTERVALS = {"exact": exact_interval, "bootstrap": bootstrap_interval}


def brute_force(method: str, n: int, k: int, p: float, confidence: float = CONFIDENCE):
    """(coverage, expected width) by a loop over the binomial."""
    coverage = width = 0.0
    for c in range(n + 1):
        weight = stats.binom.pmf(c, n, p)
        low, high = INTERVALS[method](c, n, k, confidence)
        coverage += weight * (low <= p**k <= high)
        width += weight * (high - low)
    return coverage, width


P_GRID = [0.0, 0.13, 0.5, 0.77, 0.9, 0.95, 0.99, 0.995, 0.999, 1.0]


@pytest.mark.parametrize("method", ["exact", "bootstrap"])
@pytest.mark.parametrize(("n", "k"), [(1, 1), (5, 5), (7, 2), (12, 5), (30, 5), (30, 8)])
def test_coverage_and_width_equal_brute_force_enumeration(method, n, k):
    coverage = exact_coverage(n, k, P_GRID, method=method)
    width = expected_width(n, k, P_GRID, method=method)
    expected = np.array([brute_force(method, n, k, p) for p in P_GRID])
    np.testing.assert_allclose(coverage, expected[:, 0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(width, expected[:, 1], rtol=0, atol=1e-9)


@pytest.mark.parametrize("confidence", [0.8, 0.9, 0.99])
def test_other_confidence_levels_equal_brute_force(confidence):
    for method in ("exact", "bootstrap"):
        got = exact_coverage(12, 3, P_GRID, method=method, confidence=confidence)
        want = [brute_force(method, 12, 3, p, confidence)[0] for p in P_GRID]
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


# issue 9, item 2: "exact coverage for n = 12, k = 5 is 0.69/0.46/0.11/0.06", and its
# table's row for n = 5, each to the two decimals printed
ISSUE_P = [0.9, 0.95, 0.99, 0.995]


def test_the_chapters_bootstrap_coverage_is_the_issues_at_n_12():
    coverage = exact_coverage(12, 5, ISSUE_P, method="bootstrap")
    assert [round(x, 2) for x in coverage] == [0.69, 0.46, 0.11, 0.06]


def test_the_chapters_bootstrap_coverage_is_the_issues_at_n_5():
    coverage = exact_coverage(5, 5, ISSUE_P, method="bootstrap")
    assert [round(x, 2) for x in coverage[:3]] == [0.40, 0.23, 0.05]
    # the issue prints 0.03: at p = 0.995 only c = 3 and c = 4 are covered (5/5 gives
    # [1, 1]), P(3 <= C <= 4) = 0.024750, which rounds to 0.03 only through 0.025
    p = 0.995
    assert coverage[3] == pytest.approx(
        10 * p**3 * (1 - p) ** 2 + 5 * p**4 * (1 - p), abs=1e-12)
    assert 0.0247 < coverage[3] < 0.0248


def test_at_n_30_the_bootstrap_covers_only_counts_25_to_29_at_p_095():
    # Its intervals contain 0.95**5 = 0.774 for c = 25..29 and never at 30/30 ([1, 1]),
    # so the coverage is P(25 <= C <= 29) = F(29) - F(24). (Issue 9's table prints 0.91
    # for this cell; 0.78 is what the sum gives.)
    p = 0.95
    assert exact_coverage(30, 5, p, method="bootstrap") == pytest.approx(
        stats.binom.cdf(29, 30, p) - stats.binom.cdf(24, 30, p), abs=1e-12)
    assert round(exact_coverage(30, 5, p, method="bootstrap"), 2) == 0.78


def test_the_bootstrap_misses_whenever_every_run_passes():
    # At p near 1 the bootstrap covers at most 1 - P(all n pass) = 1 - p**n.
    p = np.array([0.99, 0.995, 0.999])
    for n in (5, 12, 30):
        assert np.all(exact_coverage(n, 5, p, method="bootstrap") <= 1 - p**n + 1e-12)


def test_the_exact_interval_keeps_its_promise_on_a_grid():
    n = np.arange(1, 41)[:, None, None]
    k = np.arange(1, 9)[None, :, None]
    p = np.linspace(0.0, 1.0, 401)[None, None, :]
    for confidence in (0.8, 0.95):
        coverage = exact_coverage(n, k, p, confidence=confidence)
        assert coverage.shape == (40, 8, 401)
        assert coverage.min() >= confidence - 1e-12


def test_exact_coverage_does_not_depend_on_k():
    p = np.linspace(0.5, 0.999, 50)
    by_k = exact_coverage(12, np.arange(1, 9)[:, None], p)
    np.testing.assert_array_equal(by_k, np.broadcast_to(by_k[0], by_k.shape))


def test_broadcasting_equals_one_call_per_cell():
    n, k, p = np.array([[3], [12]]), np.array([1, 5, 7]), 0.93
    grid = exact_coverage(n, k, p, method="bootstrap")
    assert grid.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            one = exact_coverage(int(n[i, 0]), int(k[j]), p, method="bootstrap")
            assert (np.isnan(one) and np.isnan(grid[i, j])) or one == grid[i, j]


def test_scalars_give_floats_and_the_ends_of_p_are_covered():
    assert isinstance(exact_coverage(12, 5, 0.9), float)
    # p = 0: c = 0 surely, and both intervals hold 0; p = 1: c = n, and both hold 1
    for method in ("exact", "bootstrap"):
        assert exact_coverage(12, 5, 0.0, method=method) == 1.0
        assert exact_coverage(12, 5, 1.0, method=method) == 1.0
    # the bootstrap at p = 1 is [1, 1]: width 0; the exact one is [L^k, 1] at c = n
    assert expected_width(12, 5, 1.0, method="bootstrap") == 0.0
    low = stats.binomtest(12, 12).proportion_ci(method="exact").low
    assert expected_width(12, 5, 1.0) == pytest.approx(1 - low**5, abs=1e-12)


def test_the_bootstrap_has_no_interval_when_k_exceeds_n():
    assert np.isnan(exact_coverage(3, 5, 0.9, method="bootstrap"))
    assert np.isnan(expected_width(3, 5, 0.9, method="bootstrap"))
    # the exact interval bounds p**5 from 3 runs (loosely) and keeps its promise
    assert exact_coverage(3, 5, 0.9) >= CONFIDENCE


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 12, "k": 5, "p": 0.9, "method": "agresti"}, "method ('agresti')"),
        ({"n": 0, "k": 5, "p": 0.9}, "n (0)"),
        ({"n": 12, "k": 0, "p": 0.9}, "k (0)"),
        ({"n": 12.5, "k": 5, "p": 0.9}, "n (12.5)"),
        ({"n": 12, "k": 5, "p": 1.5}, "p (1.5)"),
        ({"n": 12, "k": 5, "p": 0.9, "confidence": 1.0}, "confidence (1.0)"),
    ],
)
def test_bad_input_names_the_value(kwargs, message):
    for function in (exact_coverage, expected_width):
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
            function(**kwargs)


# --------------------------------------------------------------------------
# the suite interval on identical tasks, exactly
# --------------------------------------------------------------------------


def suite_brute_force(tasks: int, n: int, k: int, ps: list[float], *, confidence: float = 0.95,
                      method: str = "hoeffding") -> np.ndarray:
    """Coverage of passk.mean_pass_hat_k_ci, summed over every multiset of counts, per p.

    Each multiset of T counts in 0..n has multinomial weight times the product of binomial
    probabilities; the interval comes from the public function itself (once per multiset).
    """
    from itertools import combinations_with_replacement

    from passk.stats.suite_interval import mean_pass_hat_k_ci

    pmf = stats.binom.pmf(np.arange(n + 1)[None, :], n, np.array(ps)[:, None])
    truth = np.array(ps) ** k
    total = np.zeros(len(ps))
    for counts in combinations_with_replacement(range(n + 1), tasks):
        ways = math.factorial(tasks)
        for c in set(counts):
            ways //= math.factorial(counts.count(c))
        ci = mean_pass_hat_k_ci(list(counts), n, k, confidence=confidence, method=method).ci
        inside = (ci.low <= truth) & (truth <= ci.high)
        total += inside * ways * np.prod(pmf[:, list(counts)], axis=1)
    return total


PS = [0.35, 0.8, 0.97, 0.999]


@pytest.mark.parametrize("tasks,n,k", [(5, 2, 1), (4, 4, 2), (1, 6, 3)])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_identical_suite_coverage_equals_brute_force_where_n_is_at_least_2k(tasks, n, k,
                                                                             confidence):
    """n >= 2k: the default depends on the runs through S only, and the convolution is exact."""
    from passk.stats.coverage import identical_suite_coverage

    brute = suite_brute_force(tasks, n, k, PS, confidence=confidence)
    exact = identical_suite_coverage(tasks, n, k, PS, confidence=confidence)
    np.testing.assert_allclose(exact, brute, atol=1e-9)
    assert np.all(brute >= confidence)


@pytest.mark.parametrize("tasks,n,k", [(5, 2, 2), (3, 3, 2), (4, 4, 3)])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_identical_suite_coverage_bounds_brute_force_where_n_is_below_2k(tasks, n, k,
                                                                         confidence):
    """n < 2k: the union part joins in, and what is returned is a lower bound, exact sums."""
    from passk.stats.coverage import identical_suite_coverage

    brute = suite_brute_force(tasks, n, k, PS, confidence=confidence)
    bound = identical_suite_coverage(tasks, n, k, PS, confidence=confidence)
    assert np.all(bound <= brute + 1e-12)
    assert np.all(brute >= confidence)


@pytest.mark.parametrize("tasks,n,k", [(5, 2, 2), (5, 3, 2), (5, 4, 1)])
def test_identical_suite_coverage_of_score_equals_brute_force(tasks, n, k):
    from passk.stats.coverage import identical_suite_coverage

    np.testing.assert_allclose(
        identical_suite_coverage(tasks, n, k, PS, method="score"),
        suite_brute_force(tasks, n, k, PS, method="score"), atol=1e-9)


@pytest.mark.parametrize("tasks,n,k,p", [
    (10, 4, 4, 0.9),   # issue 17: 0.81 with the former default
    (50, 3, 2, 0.8),   # 0.85-0.87
    (5, 4, 1, 0.8),    # few tasks, n >= 2k: 0.92
    (5, 2, 2, 0.99),   # few tasks, k = n, near 1: a normal interval without correction fails
    (200, 4, 4, 0.9),  # identical tasks with n < 2k: 0.84-0.87 whatever T
    (5, 3, 2, 0.9965),  # issue 23: 'score' 0.9486 here, one failed run in the suite
])
def test_default_suite_interval_keeps_its_level_on_the_issues_cells(tasks, n, k, p):
    from passk.stats.coverage import identical_suite_coverage

    assert identical_suite_coverage(tasks, n, k, p) >= 0.95


def test_score_misses_where_issue_23_found_it():
    """The review's cell: T = 5, n = 3, k = 2, p = 0.9965, 'score' below 95%, exactly."""
    from passk.stats.coverage import identical_suite_coverage

    assert identical_suite_coverage(5, 3, 2, 0.9965, method="score") < 0.95


@pytest.mark.slow
def test_default_suite_interval_keeps_its_level_on_identical_tasks_over_a_grid():
    """Exact, over p = 0.05..0.995, T = 5, 10, 20, n = 2..8, k = 1..n (a part of
    bench_coverage.py's section (c), which covers T up to 200 and n up to 12)."""
    from passk.stats.coverage import identical_suite_coverage

    p = np.concatenate([np.linspace(0.05, 0.995, 20), 1 - np.geomspace(1e-4, 4e-3, 8)])
    for level in (0.9, 0.95, 0.99):
        worst = min(float(np.min(identical_suite_coverage(t, n, k, p, confidence=level)))
                    for t in (5, 10, 20) for n in range(2, 9) for k in range(1, n + 1))
        assert worst >= level


def test_identical_suite_coverage_validates():
    from passk.stats.coverage import identical_suite_coverage

    with pytest.raises(ValueError, match=r"tasks \(4\) must be at least 5"):
        identical_suite_coverage(4, 4, 2, 0.5, method="score")
    with pytest.raises(ValueError, match=r"tasks \(0\) must be at least 1"):
        identical_suite_coverage(0, 4, 2, 0.5)
    with pytest.raises(ValueError, match=r"k \(5\) must be at most n \(4\)"):
        identical_suite_coverage(5, 4, 5, 0.5)
    with pytest.raises(ValueError, match=r"p \(1.5\)"):
        identical_suite_coverage(5, 4, 2, 1.5)
    assert np.shape(identical_suite_coverage(5, 4, 2, [[0.5, 0.6]])) == (1, 2)


@pytest.mark.parametrize(("n", "p"), [(600, 5 / 6), (12, 0.015), (12, 0.3), (30, 0.97)])
def test_wilson_coverage_is_the_sum_over_the_binomial(n, p):
    """Wilson's interval (scipy's, through passk.wilson_ci), its coverage summed by brute
    force: every count c whose interval holds p, weighted by its binomial probability."""
    from scipy import stats

    intervals = [stats.binomtest(c, n).proportion_ci(confidence_level=0.95, method="wilson")
                 for c in range(n + 1)]
    brute = sum(stats.binom.pmf(c, n, p) for c, ci in enumerate(intervals)
                if ci.low <= p <= ci.high)
    assert exact_coverage(n, 1, p, method="wilson") == pytest.approx(brute, abs=1e-12)


def test_estimator_moments_by_brute_force():
    """estimator_moments against brute force: every one of the 2^n run sequences, its
    probability as a product of exact Fractions, the estimate of its count."""
    import itertools
    from fractions import Fraction

    from passk import estimate_pass_hat_k, pass_hat_k
    from passk.stats.coverage import estimator_moments

    n, k = 6, 3
    plug_in = [float(Fraction(c, n) ** k) for c in range(n + 1)]
    for estimates in (list(estimate_pass_hat_k(np.arange(n + 1), n, k)), plug_in):
        for p in (Fraction(0), Fraction(1, 3), Fraction(5, 6), Fraction(1)):
            truth = float(p**k)
            mean = second = square_error = Fraction(0)
            for runs in itertools.product((0, 1), repeat=n):
                c = sum(runs)
                weight = p**c * (1 - p) ** (n - c)
                est = Fraction(estimates[c])
                mean += weight * est
                second += weight * est**2
                square_error += weight * (est - Fraction(truth)) ** 2
            m = estimator_moments(estimates, float(p), truth)
            assert float(m.mean) == pytest.approx(float(mean), abs=1e-12)
            assert float(m.bias) == pytest.approx(float(mean) - truth, abs=1e-12)
            assert float(m.sd) == pytest.approx(float(second - mean**2) ** 0.5, abs=1e-9)
            assert float(m.rmse) == pytest.approx(float(square_error) ** 0.5, abs=1e-9)
    grid = estimator_moments(plug_in, np.array([[0.2, 0.5], [0.8, 0.9]]),
                             pass_hat_k(np.array([[0.2, 0.5], [0.8, 0.9]]), k))
    assert grid.sd.shape == (2, 2)
    with pytest.raises(ValueError, match="must lie in"):
        estimator_moments(plug_in, 1.5, 1.0)
