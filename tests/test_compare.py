"""passk.stats.compare: the suite-level paired comparison, its methods, the plan and the study."""

from __future__ import annotations

import math
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from scipy import stats

from passk.metrics import estimate_pass_hat_k
from passk.stats.compare import (
    METHODS,
    compare_pass_hat_k,
    paired_difference_test,
)
from passk.stats.power import (
    pass_hat_k_sampling_variance,
    plan_comparison,
)
from passk.stats.simulation import (
    TaskPopulation,
    simulate_comparison,
    simulate_intervals,
    simulate_suites,
    task_population,
)

# ---------------------------------------------------------------- the methods against scipy


def differences(seed: int = 3, size: int = 40) -> np.ndarray:
    return np.round(np.random.default_rng(seed).normal(-0.05, 0.3, size), 2)


def test_t_matches_scipy_ttest():
    d = differences()
    res = paired_difference_test(d, confidence=0.9)
    ref = stats.ttest_1samp(d, 0.0)
    ci = ref.confidence_interval(0.9)
    assert res.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    assert (res.low, res.high) == pytest.approx((ci.low, ci.high), rel=1e-12)


@pytest.mark.parametrize(("ours", "theirs"), [("percentile", "percentile"), ("bca", "BCa")])
def test_bootstraps_match_scipy(ours, theirs):
    d = differences()
    res = paired_difference_test(d, method=ours, n_resamples=20_000, rng=1)
    ref = stats.bootstrap((d,), np.mean, method=theirs, n_resamples=20_000,
                          rng=2).confidence_interval
    # two independent resamplings: Monte Carlo error of a 2.5 % quantile is about 0.003 here
    assert res.low == pytest.approx(ref.low, abs=0.012)
    assert res.high == pytest.approx(ref.high, abs=0.012)


def test_studentized_bootstrap_is_close_to_t_on_symmetric_data():
    d = np.random.default_rng(4).normal(0.1, 1.0, 200)
    res = paired_difference_test(d, method="studentized", n_resamples=4000, rng=0)
    t = paired_difference_test(d)
    assert res.low == pytest.approx(t.low, abs=0.03)
    assert res.high == pytest.approx(t.high, abs=0.03)


def test_sign_flip_exact_matches_scipy_and_brute_force_inversion():
    d = differences(size=12)
    res = paired_difference_test(d, method="sign-flip")  # 2^12 patterns <= 9999: exact
    ref = stats.permutation_test((d,), np.mean, permutation_type="samples",
                                 n_resamples=np.inf)
    assert res.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    # the interval is every shift the exact test accepts: a fine grid by brute force
    signs = 1 - 2 * ((np.arange(2**12)[:, None] >> np.arange(12)) & 1)
    grid = np.linspace(-0.7, 0.6, 1301)[:, None]
    stat, flips = signs @ d, signs.sum(1)
    p = np.mean(np.abs(stat - grid * flips) >= np.abs(12 * (d.mean() - grid)) - 1e-9, axis=1)
    accepted = grid[p > 0.05, 0]
    assert res.low == pytest.approx(accepted.min(), abs=1.5e-3)
    assert res.high == pytest.approx(accepted.max(), abs=1.5e-3)


@pytest.mark.parametrize("method", METHODS)
def test_methods_vectorize_and_handle_no_spread(method):
    d = np.vstack([differences(size=30), np.zeros(30), np.full(30, -0.25)])
    res = paired_difference_test(d, method=method, n_resamples=999, rng=0)
    assert res.low.shape == (3,)
    assert (res.low[1], res.high[1], res.p_value[1]) == (0.0, 0.0, 1.0)
    assert res.low[2] == res.high[2] == pytest.approx(-0.25)
    assert res.low[0] < res.mean[0] < res.high[0]
    one = paired_difference_test(d[0], method=method, n_resamples=999, rng=0)
    assert isinstance(one.low, float)


def test_paired_difference_test_validates():
    with pytest.raises(ValueError, match=r"method \('z'\)"):
        paired_difference_test([0.1, 0.2], method="z")
    with pytest.raises(ValueError, match="at least 2 tasks"):
        paired_difference_test([0.1])
    with pytest.raises(ValueError, match="finite"):
        paired_difference_test([0.1, math.nan])
    with pytest.raises(ValueError, match=r"confidence \(1\.0\)"):
        paired_difference_test([0.1, 0.2], confidence=1.0)


# ---------------------------------------------------------------- compare_pass_hat_k


def skew_corrected_t(d: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """The paired t interval widened on its skewed side by Hall's (1992) one-term Edgeworth
    correction, from scipy's t quantile and scipy's bias-corrected sample skewness G1."""
    t = d.size
    alpha = 1 - confidence
    q, z = stats.t.ppf(1 - alpha / 2, t - 1), stats.norm.ppf(1 - alpha / 2)
    se = d.std(ddof=1) / math.sqrt(t)
    a = stats.skew(d, bias=False) * (2 * z * z + 1) / (6 * math.sqrt(t))
    return d.mean() - (q + max(0.0, -a)) * se, d.mean() + (q + max(0.0, a)) * se


def test_compare_against_a_hand_computed_t_interval():
    c_old, c_new, n, k = [8, 8, 6, 3, 0, 7], [8, 5, 6, 1, 0, 8], 8, 2
    h_old = np.array([Fraction(comb(c, k), comb(n, k)) for c in c_old])
    h_new = np.array([Fraction(comb(c, k), comb(n, k)) for c in c_new])
    d = np.array([float(x) for x in h_new - h_old])
    from passk.stats.compare import _floored
    res = compare_pass_hat_k(c_old, n, c_new, n, k)
    ref = stats.ttest_1samp(d, 0.0)
    assert res.delta == pytest.approx(float(sum(h_new - h_old) / 6), rel=1e-12)
    # the union before issue 29's betting part: the t's p-value, the skew-corrected ends
    ho, hn = (np.array([float(x) for x in h]) for h in (h_old, h_new))
    pre = _floored(paired_difference_test(d), ho, hn, k, n, n, 0.05, proved=False)
    assert pre.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    # d is skewed left (one task drops by 0.64): the low end moves out, the high end is t's
    assert (pre.low, pre.high) == pytest.approx(skew_corrected_t(d), rel=1e-10)
    assert pre.low < ref.confidence_interval().low
    assert pre.high == pytest.approx(ref.confidence_interval().high, rel=1e-10)
    # the comparison holds it; 6 tasks cannot prove a change (2^6 < 2/alpha x 2 bets)
    assert res.ci.low <= pre.low and res.ci.high >= pre.high and res.p_value >= ref.pvalue
    assert res.verdict == "inconclusive" and res.paired_tasks == 6 and res.left_out == 0


def test_left_out_tasks_are_counted():
    # task 2 has 3 runs in the new version and task 4 has 2 in the old: k = 4 leaves both out
    res = compare_pass_hat_k([4, 4, 4, 0, 2], [4, 4, 4, 4, 2], [4, 3, 1, 0, 4], [4, 4, 3, 4, 4], 4)
    assert (res.paired_tasks, res.left_out) == (3, 2)
    assert res.old_mean == pytest.approx(2 / 3) and res.new_mean == pytest.approx(1 / 3)
    lonely = compare_pass_hat_k([4, 1], [4, 1], [4, 1], [4, 1], 2)
    assert (lonely.paired_tasks, lonely.left_out, lonely.verdict) == (1, 1, "inconclusive")
    assert math.isnan(lonely.ci.low) and math.isnan(lonely.p_value)


@pytest.mark.parametrize(("low", "high", "margin", "verdict"), [
    (0.01, 0.2, None, "better"), (-0.2, -0.01, None, "worse"), (-0.2, 0.1, None, "inconclusive"),
    (-0.04, 0.1, 0.05, "non-inferior"), (-0.04, -0.01, 0.05, "non-inferior"),
    (-0.08, -0.01, 0.05, "worse"), (-0.3, -0.1, 0.05, "worse"),
    (-0.08, 0.01, 0.05, "inconclusive"), (-0.05, 0.1, 0.05, "inconclusive"),
])
def test_verdicts(low, high, margin, verdict):
    from passk.stats.compare import _verdict

    assert _verdict(low, high, margin) == verdict


def test_verdicts_end_to_end():
    rng = np.random.default_rng(0)
    c_old = rng.binomial(8, rng.uniform(0.6, 1.0, 200))
    # the same counts in both versions: no change seen, but the runs' own noise remains
    same = compare_pass_hat_k(c_old, 8, c_old, 8, 3, margin=0.02)
    assert (same.delta, same.p_value) == (0.0, 1.0)
    assert same.ci.low < -0.02 and same.ci.high > 0.02 and same.verdict == "inconclusive"
    assert compare_pass_hat_k(c_old, 8, c_old, 8, 3, margin=0.1).verdict == "non-inferior"
    assert compare_pass_hat_k(c_old, 8, c_old, 8, 3).verdict == "inconclusive"
    broken = np.maximum(c_old - 3, 0)
    assert compare_pass_hat_k(c_old, 8, broken, 8, 3).verdict == "worse"
    assert compare_pass_hat_k(c_old, 8, broken, 8, 3, margin=0.05).verdict == "worse"
    assert compare_pass_hat_k(broken, 8, c_old, 8, 3).verdict == "better"


def test_result_repr_and_dict():
    res = compare_pass_hat_k([8, 6, 7, 2], 8, [8, 4, 7, 1], 8, 2, margin=0.1)
    text = repr(res)
    assert text.startswith("PairedComparison(k=2, delta=") and "margin=0.1" in text
    assert "verdict='inconclusive'" in text and "paired_tasks=4" in text
    d = res.to_dict()
    assert d["verdict"] == res.verdict and d["paired_tasks"] == 4 and d["margin"] == 0.1
    assert d["ci_low"] == pytest.approx(max(res.ci.low, -1.0), abs=1e-6)
    with pytest.raises(AttributeError):
        res.delta = 0.0  # type: ignore[misc]


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"k": 0}, r"k \(0\) must be at least 1"),
    ({"margin": -0.1}, r"margin \(-0\.1\)"),
    ({"margin": 1.0}, r"margin \(1\.0\)"),
    ({"margin": math.nan}, r"margin \(nan\)"),
    ({"confidence": 0.0}, r"confidence \(0\.0\)"),
    ({"method": "anova"}, r"method \('anova'\)"),
])
def test_compare_validates(kwargs, match):
    args = {"k": 2, **kwargs}
    with pytest.raises(ValueError, match=match):
        compare_pass_hat_k([3, 4], 4, [2, 4], 4, args.pop("k"), **args)


def test_compare_validates_counts():
    with pytest.raises(ValueError, match=r"successes \(5\) cannot exceed total \(4\)"):
        compare_pass_hat_k([5, 4], 4, [2, 4], 4, 2)
    with pytest.raises(ValueError, match="shape"):
        compare_pass_hat_k([3, 4], 4, [2, 4, 1], 4, 2)


# ---------------------------------------------------------------- exact variance and plan


def test_sampling_variance_against_fractions():
    for p in (Fraction(1, 3), Fraction(9, 10)):
        for n, k in ((4, 2), (8, 3), (6, 6)):
            h = [Fraction(comb(c, k), comb(n, k)) for c in range(n + 1)]
            pmf = [comb(n, c) * p**c * (1 - p) ** (n - c) for c in range(n + 1)]
            mean = sum(w * x for w, x in zip(pmf, h))
            var = sum(w * (x - mean) ** 2 for w, x in zip(pmf, h))
            assert mean == p**k  # unbiased, exactly
            assert pass_hat_k_sampling_variance(float(p), n, k) == pytest.approx(float(var),
                                                                                   rel=1e-10)


def test_sampling_variance_is_the_mean_of_the_unbiased_estimator():
    # E[h^2 - C(c,2k)/C(n,2k)] = Var h: the pass^{2k} estimator is unbiased for p^{2k}
    n, k = 12, 3
    c = np.arange(n + 1)
    h = np.asarray(estimate_pass_hat_k(c, n, k))
    est = h**2 - np.asarray(estimate_pass_hat_k(c, n, 2 * k))
    p = np.array([0.2, 0.55, 0.93])
    expected = stats.binom.pmf(c[None, :], n, p[:, None]) @ est
    np.testing.assert_allclose(pass_hat_k_sampling_variance(p, n, k), expected, rtol=1e-9)


def test_power_without_floor_is_the_noncentral_t():
    """The power integral over the chi-square of s^2 equals scipy's noncentral t (Miller's
    formula with the t in place of z) when the floor is below s / sqrt(T)."""
    from passk.stats.power import _power
    for t, var_d, delta in ((5, 0.05, 0.1), (30, 0.2, 0.05), (400, 0.1, 0.02)):
        se = math.sqrt(var_d / t)
        ref = stats.nct.cdf(-stats.t.ppf(0.975, t - 1), t - 1, -delta / se)
        assert float(_power(delta, var_d, 0.0, t, 0.05)) == pytest.approx(ref, abs=1e-3)
    # a floor above the t's spread lowers the power
    assert float(_power(0.05, 0.05, 0.5, 50, 0.05)) < float(_power(0.05, 0.05, 0.0, 50, 0.05))


def test_tasks_needed_is_the_fewest_that_reach_the_power():
    plan = plan_comparison(3, delta=0.05, between_variance=0.02, runs=(4, 8), tasks=(100,),
                           assume="default-population")
    assert 0 < float(plan.power[0, 0]) < 1 and plan.cheapest == 0  # tasks beat runs
    assert len(plan.floor_variance) == 2 and all(f > 0 for f in plan.floor_variance)
    for j, needed in enumerate(plan.tasks_needed):
        again = plan_comparison(3, delta=0.05, between_variance=0.02, runs=(plan.runs[j],),
                                tasks=(needed - 1, needed), assume="default-population")
        assert again.power[1, 0] >= 0.8 > again.power[0, 0]


@pytest.mark.parametrize(("m", "n", "k"), [(8, 12, 4), (4, 4, 2), (12, 2, 1), (6, 24, 3)])
def test_pilot_within_variance_is_unbiased_where_m_reaches_2k(m, n, k):
    """E over a pilot task's binomial counts of its estimate = V_n(p), exactly, for every p;
    c/m put into V_n (what the plan did before) is biased low."""
    from passk.stats.power import _pilot_mean, _variance_polynomial
    coef = _variance_polynomial(n, k)
    c = np.arange(m + 1)
    est = np.array([_pilot_mean(coef, np.array([ci]), np.array([m]), upper=True) for ci in c])
    plug = np.array([pass_hat_k_sampling_variance(ci / m, n, k) for ci in c])
    for p in (0.3, 0.7, 0.9, 0.97):
        pmf = stats.binom.pmf(c, m, p)
        truth = pass_hat_k_sampling_variance(p, n, k)
        assert pmf @ est == pytest.approx(truth, rel=1e-9, abs=1e-15)
        if p >= 0.7:  # reliable tasks, where it matters: 8-56 % too low
            assert pmf @ plug < 0.95 * truth


@pytest.mark.parametrize(("m", "n", "k"), [(4, 12, 4), (4, 8, 3), (5, 12, 5), (2, 4, 2)])
def test_pilot_within_variance_is_bounded_above_where_m_is_short_of_2k(m, n, k):
    """m < 2k: no unbiased estimate exists; the Bernstein bound's mean is at least V_n(p)
    at every p (so the plan errs on the cautious side)."""
    from passk.stats.power import _bernstein_bound, _variance_polynomial
    b = _bernstein_bound(_variance_polynomial(n, k), m, upper=True)
    p = np.linspace(0, 1, 2001)
    expected = stats.binom.pmf(np.arange(m + 1)[None, :], m, p[:, None]) @ b
    truth = pass_hat_k_sampling_variance(p, n, k)
    assert np.all(expected >= truth - 1e-10)
    assert np.trapezoid(expected - truth, p) < np.trapezoid(truth, p)


def test_plan_from_a_pilot():
    rng = np.random.default_rng(5)
    pop = task_population(4000, rng=6)
    c = rng.binomial(12, pop.p_old[:400])
    plan = plan_comparison(2, delta=0.05, successes=c, totals=12, correlation=1.0,
                           tasks=(100,), runs=(4,))
    assert plan.between_variance == 0.0 and plan.source == "pilot of 400 tasks"
    short = plan_comparison(4, delta=0.05, successes=c[:50] % 7, totals=6, tasks=(100,))
    assert "fewer than 2k = 8 runs on some: within-task variance at the largest the " \
        "pilot's moments allow" in short.source
    # one run a task is a pilot too since issue 38 (its spread is not identified: the
    # largest within-task variance for its mean); 2 runs at k = 3 are not
    with pytest.raises(ValueError, match=r"at least k \(3\) runs \(or one run each\); the "
                                         r"fewest is 2"):
        plan_comparison(3, successes=[1, 0], totals=[2, 3])
    assert "not identified" in plan_comparison(2, successes=[1, 0], totals=[1, 3]).source
    with pytest.raises(ValueError, match=r"delta \(0\.0\)"):
        plan_comparison(2, delta=0.0)


@pytest.mark.slow
def test_plan_is_not_optimistic_on_a_population_it_was_not_built_from():
    """Beta(2, 0.7) tasks, k = 5, T = 60, n = 12, every logit lowered so mean pass^5 drops by
    0.10: the old plan (c/m in the exact variance) was optimistic by more than 0.05."""
    from scipy import optimize, special
    rng = np.random.default_rng(40)
    p_old = rng.beta(2, 0.7, 20_000)
    k, t, n, delta = 5, 60, 12, 0.10
    logit = special.logit(p_old)
    target = float(np.mean(p_old**k)) - delta
    shift = optimize.brentq(lambda x: float(np.mean(special.expit(logit - x) ** k)) - target,
                            0, 30)
    p_new = special.expit(logit - shift)
    omega2 = float(np.var(p_new**k - p_old**k))
    pilot = rng.binomial(12, p_old[rng.integers(0, p_old.size, 1000)])
    plan = plan_comparison(k, delta=delta, successes=pilot, totals=12, between_variance=omega2,
                           tasks=(t,), runs=(n,))
    drop = TaskPopulation(p_old, p_new, "drop")
    sim = simulate_comparison(drop, t, n, k, methods=("t",), replicates=3000, rng=41)
    # Monte Carlo SE of a power near 0.7 from 3000 suites: 0.008
    assert float(plan.power[0, 0]) == pytest.approx(sim["t"]["worse"], abs=0.05)
    within = float(np.mean(pass_hat_k_sampling_variance(pilot / 12, n, k)))
    se = math.sqrt((omega2 + 2 * within) / t)
    before = stats.nct.cdf(-stats.t.ppf(0.975, t - 1), t - 1, -delta / se)
    assert before > sim["t"]["worse"] + 0.04  # the old plan's optimism, caught


def test_plan_agrees_with_simulation():
    pop = task_population(20_000, rng=11)
    k, n, t, delta = 2, 4, 60, 0.06
    omega2 = float(np.var(pop.p_new**k - pop.p_old**k))
    plan = plan_comparison(k, delta=delta, between_variance=omega2, tasks=(t,), runs=(n,),
                           assume="default-population")
    drop = task_population(20_000, change="drop", k=k, delta=delta, rng=11)
    sim = simulate_comparison(drop, t, n, k, methods=("t",), replicates=3000, rng=12)
    # Monte Carlo SE of a power near 0.4 from 3000 suites: 0.009
    assert plan.power[0, 0] == pytest.approx(sim["t"]["worse"], abs=0.04)


def _even_drop(p: np.ndarray, k: int, delta: float) -> np.ndarray:
    """Every logit lowered by the amount that lowers mean p^k by delta (scipy's brentq)."""
    from scipy import optimize, special
    p = np.clip(p, 1e-9, 1 - 1e-9)
    logit = special.logit(p)
    target = float(np.mean(p**k)) - delta
    shift = optimize.brentq(lambda x: float(np.mean(special.expit(logit - x) ** k)) - target,
                            0.0, 60.0, xtol=1e-13)
    return np.asarray(special.expit(logit - shift))


def test_a_change_on_a_share_of_tasks_varies_at_least_so_much():
    """Brute force over random changes of one sign confined to a share f of the tasks: the
    variance across tasks is never below (1/f - 1) delta^2 (Cauchy-Schwarz), and reaches it
    when those tasks change alike."""
    rng = np.random.default_rng(7)
    for f, size in ((0.1, 50), (0.25, 8), (1.0, 12)):
        share = max(1, round(f * size))
        for _ in range(200):
            d = np.zeros(size)
            d[rng.permutation(size)[:share]] = -rng.exponential(1.0, share)
            delta = -float(d.mean())
            assert float(np.var(d)) >= (size / share - 1) * delta**2 * (1 - 1e-12)
        d = np.zeros(size)
        d[:share] = -0.3
        assert float(np.var(d)) == pytest.approx((size / share - 1) * (0.3 * share / size) ** 2)


def test_default_spread_of_the_change():
    """Without a pilot the plan's rates are the default population's: the default variance of
    the change is max(even logit shift's, 9 delta^2); changed_share=1 is the even shift, and
    correlation= is the former default 2 (1 - rho) var(p^k)."""
    from passk.stats.simulation import _PLAN_POPULATION_SIZE
    rates = task_population(_PLAN_POPULATION_SIZE, rng=0).p_old
    k, delta = 3, 0.04
    even = float(np.var(_even_drop(rates, k, delta) ** k - np.clip(rates, 1e-9, 1 - 1e-9) ** k))
    assert even < 9 * delta**2
    grid = {"tasks": (60,), "runs": (4,)}
    default = plan_comparison(k, delta=delta, **grid, assume="default-population")
    assert default.between_variance == pytest.approx(9 * delta**2, rel=1e-12)
    flat = plan_comparison(k, delta=delta, changed_share=1.0, **grid,
                           assume="default-population")
    assert flat.between_variance == pytest.approx(even, rel=1e-6)
    assert float(flat.power[0, 0]) == pytest.approx(float(default.power_even[0, 0]), rel=1e-6)
    # near the target power the cautious spread is the lower one (at powers far below 1/2
    # a more variable change crosses the line by chance as often: page 8 says so)
    big = plan_comparison(k, delta=delta, tasks=(1000,), runs=(4,),
                          assume="default-population")
    assert float(big.power_even[0, 0]) >= 0.5
    assert float(big.power[0, 0]) < float(big.power_even[0, 0])
    old = plan_comparison(k, delta=delta, correlation=0.7, **grid, assume="default-population")
    assert old.between_variance == pytest.approx(0.6 * float(np.var(rates**k)), rel=1e-12)
    with pytest.raises(ValueError, match=r"changed_share \(0\.0\)"):
        plan_comparison(k, delta=delta, changed_share=0.0, **grid)


@pytest.mark.slow
def test_default_plan_is_not_optimistic_when_a_tenth_of_the_tasks_carry_the_drop():
    """The tenth of the default population's tasks with the highest pass^1 lose the whole drop
    of 0.08 (T = 50, n = 12): the default plan is not optimistic against the simulated power
    of the comparison (the proved one), where planning for an even change with the paired t
    alone (the plan before issue 29's proof) is optimistic by more than 0.25. Since issue 38's
    third pass the plan takes the noisier of its two models of the new version (every logit
    lowered alike, or a tenth of the tasks losing delta/0.1 each, spread over those able to),
    and is cautious here by about 0.16 (within 0.10 before): outside the two-sided promise,
    said in plan_comparison's Notes' table of what is not met."""
    from unittest import mock

    from passk.stats import power as power_module
    from passk.stats.simulation import _PLAN_POPULATION_SIZE
    p_old = np.clip(task_population(_PLAN_POPULATION_SIZE, rng=0).p_old, 1e-9, 1 - 1e-9)
    k, t, n, delta = 1, 50, 12, 0.08
    top = np.argsort(-p_old)[: p_old.size // 10]
    p_new = p_old.copy()
    p_new[top] *= 1 - delta * p_old.size / float(p_old[top].sum())
    assert float(np.mean(p_new - p_old)) == pytest.approx(-delta, abs=1e-12)
    sim = simulate_intervals(TaskPopulation(p_old, p_new, "drop"), t, n, k, methods=("t",),
                             replicates=1000, p_values=False, rng=8)["t"]
    simulated = float(np.mean(sim.high < 0))  # Monte Carlo SE <= 0.016
    plan = plan_comparison(k, delta=delta, tasks=(t,), runs=(n,), assume="default-population")
    gap = float(plan.power[0, 0]) - simulated
    assert -0.20 <= gap <= 0.02 + 2 * 0.016
    with mock.patch.object(power_module, "_proved_power", power_module._power):
        t_only = plan_comparison(k, delta=delta, tasks=(t,), runs=(n,),
                                 assume="default-population")
    assert float(t_only.power_even[0, 0]) > simulated + 0.25


# ---------------------------------------------------------------- the study, small and seeded


def test_population_changes_are_exact():
    none = task_population(4000, rng=0)
    assert all(abs(none.delta(k)) < 1e-15 for k in range(1, 9))
    trade = task_population(4000, change="trade-off", k=3, rng=0)
    assert abs(trade.delta(3)) < 1e-12 and float(np.mean(trade.p_new > trade.p_old)) > 0.2
    assert task_population(4000, change="drop", k=5, delta=0.04, rng=0).delta(5) == \
        pytest.approx(-0.04, abs=1e-12)
    with pytest.raises(ValueError, match=r"change \('up'\)"):
        task_population(10, change="up")


def test_study_small_type_i_coverage_and_pairing():
    """T = 50, n = 4, k = 2: the comparison keeps its level (with the proved betting part,
    far below it: 0.002 where 0.05 is allowed, issue 29); the unpaired interval is blind."""
    reps = 3000  # Monte Carlo SE of a 5 % rate: 0.004
    none = task_population(20_000, rng=21)
    trade = task_population(20_000, change="trade-off", k=2, rng=21)
    drop = task_population(20_000, change="drop", k=2, delta=0.08, rng=21)
    r0 = simulate_comparison(none, 50, 4, 2, methods=("t", "welch"), replicates=reps, rng=1)
    rt = simulate_comparison(trade, 50, 4, 2, methods=("t",), replicates=reps, rng=2)
    rd = simulate_comparison(drop, 50, 4, 2, methods=("t", "welch"), replicates=reps, rng=3)
    assert r0["t"]["reject"] < 0.05 + 0.008 and rt["t"]["reject"] < 0.05 + 0.008
    assert r0["t"]["worse"] < 0.025 + 0.006  # the gate's false alarms
    assert rd["t"]["cover"] >= 0.95
    # pairing matters (before issue 29's proof, power 0.4 against the unpaired 0.03 here;
    # with it 0.074, and the width 0.32 is the proved interval's, the unpaired one's 0.34;
    # issue 38 gives half of alpha to the difference of the suite intervals: 0.041)
    assert rd["t"]["worse"] > rd["welch"]["worse"]
    # the width: 0.32 before, 0.348 now (the union at alpha/2), the unpaired one's 0.336
    assert rd["t"]["width"] < 1.1 * rd["welch"]["width"]


@pytest.mark.slow
def test_study_bootstraps_are_liberal_with_20_tasks_unless_floored():
    """With 20 tasks the bare percentile and BCa bootstraps reject too often; floored, not."""
    none = task_population(20_000, rng=31)
    bare = simulate_intervals(none, 20, 4, 2, methods=("t", "percentile", "bca"),
                              replicates=2000, rng=4, floor=False)
    rate = {m: float(np.mean((r.low > 0) | (r.high < 0))) for m, r in bare.items()}
    assert abs(rate["t"] - 0.05) < 0.015
    assert rate["percentile"] > 0.07 and rate["bca"] > 0.08
    out = simulate_comparison(none, 20, 4, 2, methods=("percentile", "bca"), replicates=2000,
                              rng=4)
    assert out["percentile"]["reject"] < 0.05 + 0.01 and out["bca"]["reject"] < 0.05 + 0.01


# ---------------------------------------------------------------- passk plan --compare


def test_plan_compare_cli(tmp_path, capsys):
    from passk.cli.commands import main

    argv = ["plan", "--compare", "--delta", "0.05", "--k", "4", "--tasks", "50,100",
            "--runs", "4,8"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    plan = plan_comparison(4, delta=0.05, tasks=(50, 100), runs=(4, 8))
    t4, t8 = plan.tasks_needed
    assert "(the change on as few as 10% of the tasks: at least (1/0.1 - 1) delta^2)" in out
    assert f"cheapest: {t8} tasks × 8 runs = {8 * t8} runs per version, against {t4} × 4" in out
    assert "joined by the proved betting interval, two-sided 95%: each side wrong at most 2.5%" \
        in out
    assert "power to show a drop of 0.05" in out and "smallest drop shown with 80% power" in out
    assert main([*argv, "--json"]) == 0
    payload = __import__("json").loads(capsys.readouterr().out)
    assert payload["tasks_needed"] == [t4, t8] and payload["runs_per_version"] == [4 * t4, 8 * t8]
    assert np.allclose(payload["power"], plan.power, rtol=1e-12)  # full precision
    # a pilot file: 40 tasks with 8 runs each
    pilot = tmp_path / "pilot.jsonl"
    rng = np.random.default_rng(0)
    counts = rng.binomial(8, rng.uniform(0, 1, 40))
    pilot.write_text("".join(__import__("json").dumps({"task_id": f"t{i}", "trial": j,
                                                       "success": bool(j < c)}) + "\n"
                             for i, c in enumerate(counts) for j in range(8)))
    assert main(["plan", "--compare", "--k", "2", str(pilot), "--tasks", "30"]) == 0
    assert "tasks from the pilot of 40 tasks" in capsys.readouterr().out
    assert main(["plan", "--compare", "--k", "2", str(pilot), "--tasks", "30", "--runs", "4",
                 "--delta", "0.1", "--correlation", "0.7", "--json"]) == 0
    payload = __import__("json").loads(capsys.readouterr().out)
    assert payload["between_variance_from"].endswith("correlation 0.7")
    assert main(["plan", "--compare", "--k", "4", "--runs", "2"]) == 2
    assert "runs (2) must be at least 4" in capsys.readouterr().err


# ---------------------------------------------------------------- the floor: no certainty from noise


def test_two_tasks_never_give_certainty():
    same = compare_pass_hat_k([1, 1], 1, [1, 1], 1, 1, margin=0.05)
    assert same.verdict == "inconclusive" and same.ci.low < -0.05 and same.ci.high > 0
    equal = compare_pass_hat_k([12, 12], 12, [11, 11], 12, 5)  # d = -5/12 on both tasks
    assert equal.verdict == "inconclusive" and equal.p_value > 0.05
    assert equal.ci.low < equal.delta < equal.ci.high and equal.ci.high > 0


def test_diff_of_two_one_run_tasks_is_inconclusive(tmp_path, capsys):
    import json

    from passk.cli.commands import main
    path = tmp_path / "one.jsonl"
    path.write_text("".join(json.dumps({"task_id": t, "trial": 0, "success": True}) + "\n"
                            for t in ("a", "b")))
    assert main(["diff", str(path), str(path), "--margin", "0.05", "--k", "1"]) == 3
    assert "verdict: INCONCLUSIVE" in capsys.readouterr().out


@pytest.mark.parametrize(("tasks", "runs"), [(10, 2), (50, 12), (400, 3)])  # runs > k
def test_floor_of_a_saturated_suite_in_closed_form(tasks, runs):
    """Every run passes, k = 1: the low end L solves L^2 = q^2 (1 + L)(-L) / ((n - 1) T),
    the score (Wilson-type) bound with Bessel's n - 1, L = -q^2 / ((n - 1) T + q^2); the
    high end mirrors it."""
    from passk.stats.compare import _floor_test, _floor_weight
    q = stats.t.ppf(0.975, tasks - 1)
    h = np.ones(tasks)
    w = np.full(tasks, _floor_weight(1, runs))
    low, high, _ = _floor_test(h, h, w, w, q, tasks - 1, p_value=False)
    expected = q**2 / ((runs - 1) * tasks + q**2)
    assert low == pytest.approx(-expected, rel=1e-6)
    assert high == pytest.approx(expected, rel=1e-6)
    # the union part of the comparison holds the floor's (and the proved betting part's);
    # since issue 38 the comparison intersects it with the difference of the suite intervals
    from passk.stats.compare import _union, paired_difference_test
    ones = np.ones(tasks)
    union = _union(paired_difference_test(ones - ones), ones, ones, 1, runs, runs, 0.05)
    assert union.low <= -expected * (1 - 1e-6) and union.high >= expected * (1 - 1e-6)


def test_floor_endpoints_against_a_brute_force_grid():
    """The floor's ends are the outermost changes its test accepts, found on a fine grid."""
    from passk.stats.compare import _floor_test
    rng = np.random.default_rng(2)
    n, k, t = 6, 2, 7
    c_old, c_new = rng.binomial(n, 0.8, t), rng.binomial(n, 0.6, t)
    h_old = np.asarray(estimate_pass_hat_k(c_old, n, k), float)
    h_new = np.asarray(estimate_pass_hat_k(c_new, n, k), float)
    w = np.full(t, k / (n - 1))
    q = stats.t.ppf(0.975, t - 1)
    low, high, _ = _floor_test(h_old, h_new, w, w, q, t - 1)
    lam = np.linspace(-1, 1, 200_001)
    o = np.clip(h_old[None, :] - lam[:, None], 0, 1)
    m = np.clip(h_new[None, :] + lam[:, None], 0, 1)
    delta0 = (m - o).mean(axis=1)
    se = np.sqrt((w * o * (1 - o) + w * m * (1 - m)).sum(axis=1)) / t
    accepted = delta0[np.abs((h_new - h_old).mean() - delta0) <= q * se]
    assert float(low) == pytest.approx(accepted.min(), abs=2e-5)
    assert float(high) == pytest.approx(accepted.max(), abs=2e-5)


def test_hoeffding_bound_holds_for_every_design():
    """Var(C(c,k)/C(n,k)) <= (k/n) p^k (1 - p^k), the bound the floor rests on."""
    p = np.linspace(0, 1, 401)
    for n in range(1, 25):
        for k in range(1, n + 1):
            bound = k / n * p**k * (1 - p**k)
            assert np.all(pass_hat_k_sampling_variance(p, n, k) <= bound + 1e-14)


BETA_HALF = np.random.default_rng(0).beta(0.5, 0.5, 20_000)


@pytest.mark.parametrize("margin", [0.05, 0.1])
def test_non_inferiority_at_the_boundary_on_u_shaped_tasks(margin):
    """Beta(0.5, 0.5) tasks, T = 10, n = 4, k = 4, true change exactly -margin: the bare t
    declared non-inferior 0.117-0.158 of the time; the floored comparison at most 0.025."""
    reps = 2000  # Monte Carlo SE of a 2.5 % rate: 0.0035
    res, truth = simulate_suites(BETA_HALF, 10, 4, 4, drop=margin, replicates=reps, rng=1)
    bare, _ = simulate_suites(BETA_HALF, 10, 4, 4, drop=margin, replicates=reps, rng=1,
                              floor=False)
    exact = np.isclose(truth, -margin)
    assert exact.mean() > 0.95
    assert float(np.mean((res.low > -margin)[exact])) <= 0.025 + 0.007
    assert float(np.mean((bare.low > -margin)[exact])) > 0.07  # the defect this would catch
    covered = (res.low <= truth + 1e-12) & (truth - 1e-12 <= res.high)
    assert covered.mean() >= 0.94
    assert float(np.mean((bare.low <= truth) & (truth <= bare.high))) < 0.9


@pytest.mark.parametrize(("tasks", "bare_rate"), [(10, 0.82), (20, 0.67), (50, 0.36)])
def test_non_inferiority_from_a_saturated_baseline(tasks, bare_rate):
    """p 1 -> 0.99, k = 1, margin 0.01, 2 runs a task: all-pass suites are 0.99**(2T) likely."""
    res, truth = simulate_suites([1.0], tasks, 2, 1, drop=0.01, replicates=2000, rng=tasks)
    bare, _ = simulate_suites([1.0], tasks, 2, 1, drop=0.01, replicates=2000, rng=tasks,
                              floor=False)
    assert np.allclose(truth, -0.01)
    assert float(np.mean(res.low > -0.01)) <= 0.025 + 0.007
    assert float(np.mean(bare.low > -0.01)) == pytest.approx(0.99 ** (2 * tasks), abs=0.03)
    assert float(np.mean(bare.low > -0.01)) == pytest.approx(bare_rate, abs=0.03)


def test_two_and_five_tasks_with_no_change_keep_the_level():
    """Two tasks at p = 0.5, one run each, no change: the bare t said better or worse
    whenever both differences were equal and not 0, 2/16 of the time."""
    bare, _ = simulate_suites([0.5], 2, 1, 1, floor=False, replicates=4000, rng=6)
    assert float(np.mean((bare.low > 0) | (bare.high < 0))) == pytest.approx(0.125, abs=0.015)
    for tasks, runs, k in ((2, 1, 1), (2, 4, 2), (5, 2, 1), (5, 4, 4)):
        res, _ = simulate_suites([0.5, 0.9], tasks, runs, k, replicates=4000, rng=7)
        assert float(np.mean((res.low > 0) | (res.high < 0))) <= 0.05 + 0.007
    pop = task_population(20_000, rng=5)
    floored = simulate_intervals(pop, 5, 4, 2, methods=("t",), replicates=3000, rng=6,
                                 p_values=False)["t"]
    assert float(np.mean((floored.low > 0) | (floored.high < 0))) <= 0.05 + 0.008
