"""The gate's operating characteristic (issue 29), checked against outside references.

The exact P(pass) is checked against brute-force enumeration of every count vector of
small suites, each decided by the producer's own code (``reliability_gate`` for the
chapter's rule, ``mean_pass_hat_k_ci`` for the proved suite bound), weighted by scipy's
binomial; against closed forms; and against Monte Carlo with its standard error.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from passk.criteria import GateCriteria
from passk.stability import reliability_gate, suite_report
from passk.stats.operating import (
    flaky_band,
    gate_decision,
    lowered_rates,
    operating_characteristic,
    runs_to_prove_steady,
    steady_false_pass,
    warning_miss_rate,
)
from passk.stats.suite_interval import mean_pass_hat_k_ci

GOOD = [0.995] * 26 + [0.0] * 4  # the good suite: true mean pass^5 0.845


def _chapter_passes(c: tuple[int, ...], n: list[int], ks: list[int], crit: GateCriteria
                    ) -> bool:
    rows = suite_report([f"t{i}" for i in range(len(c))], list(c), n, k=np.array(ks),
                        confidence=crit.confidence).tasks
    return reliability_gate(rows, min_overall_pass_hat_k=crit.min_overall_pass_hat_k,
                            max_flakiness=crit.max_flakiness, ks=ks, on=crit.on,
                            min_runs=crit.min_runs, confidence=crit.confidence).passed


def _proved_passes(c: tuple[int, ...], n: list[int], k: int, crit: GateCriteria) -> bool:
    """The proved modes written out from passk's public suite interval and scipy's beta."""
    ca, na = np.array(c), np.array(n)
    low = mean_pass_hat_k_ci(ca, na, k, confidence=2 * crit.confidence - 1).ci.low
    if low < crit.min_overall_pass_hat_k:
        return False
    if crit.mode == "proved-warn":
        return True
    lo, hi = flaky_band(crit.max_flakiness)
    for ci, ni in zip(c, n, strict=True):
        upper = 1.0 if ci == ni else stats.beta.ppf(crit.confidence, ci + 1, ni - ci)
        lower = 0.0 if ci == 0 else stats.beta.ppf(1 - crit.confidence, ci, ni - ci + 1)
        if not (upper <= lo or lower >= hi):
            return False
    return True


def _brute(rates: list[float], n: list[int], decide) -> float:  # type: ignore[no-untyped-def]
    total = 0.0
    for c in itertools.product(*(range(x + 1) for x in n)):
        weight = math.prod(stats.binom.pmf(ci, ni, p) for ci, ni, p in zip(c, n, rates,
                                                                          strict=True))
        if weight and decide(c):
            total += weight
    return total


@pytest.mark.parametrize("rates, n, ks, bar, cap", [
    ([0.9, 0.6, 0.99], [4, 4, 4], [2, 2, 2], 0.55, 0.5),
    ([0.8, 0.95, 0.3], [5, 3, 6], [2, 1, 2], 0.41, 0.7),  # mixed n and k: lcm lattice
    ([0.97, 0.97, 0.97, 0.5], [3, 3, 3, 3], [1, 1, 1, 1], 0.76, 0.9),
])
def test_chapter_exact_equals_enumeration(rates: list[float], n: list[int], ks: list[int],
                                          bar: float, cap: float) -> None:
    crit = GateCriteria(k=ks[0], min_overall_pass_hat_k=bar, max_flakiness=cap)
    oc = operating_characteristic(crit, n, rates, ks=ks)
    want = _brute(rates, n, lambda c: _chapter_passes(c, n, ks, crit))
    assert oc.method == "exact" and oc.low == oc.high
    assert oc.probability == pytest.approx(want, abs=1e-12)
    assert 0.02 < want < 0.98  # a cell that can fail both ways


def test_chapter_on_lower_bound_bracketed_by_enumeration() -> None:
    rates, n, ks = [0.9, 0.7, 0.99], [6, 6, 5], [2, 2, 2]
    crit = GateCriteria(k=2, min_overall_pass_hat_k=0.3, max_flakiness=0.8, on="lower-bound")
    oc = operating_characteristic(crit, n, rates)
    want = _brute(rates, n, lambda c: _chapter_passes(c, n, ks, crit))
    assert oc.low - 1e-12 <= want <= oc.high + 1e-12
    assert oc.high - oc.low < 0.02


@pytest.mark.parametrize("mode", ["proved", "proved-warn"])
@pytest.mark.parametrize("rates, n, k, bar, cap, conf", [
    ([0.99, 0.9, 0.97], 5, 2, 0.35, 0.99, 0.90),
    ([1.0, 0.95, 0.15], 6, 2, 0.3, 0.99, 0.90),
])
def test_proved_exact_equals_enumeration(mode: str, rates: list[float], n: int, k: int,
                                         bar: float, cap: float, conf: float) -> None:
    crit = GateCriteria(k=k, min_overall_pass_hat_k=bar, max_flakiness=cap, confidence=conf,
                        mode=mode)
    oc = operating_characteristic(crit, n, rates, rng=0)
    ns = [n] * len(rates)
    want = _brute(rates, ns, lambda c: _proved_passes(c, ns, k, crit))
    assert oc.method == "exact"
    assert oc.low - 1e-12 <= want <= oc.high + 1e-12
    assert oc.probability == pytest.approx(want, abs=1e-9)
    assert want > 0.01


def test_headline_chapter_blocks_the_good_suite_eighty_percent() -> None:
    oc = operating_characteristic(GateCriteria(), 12, GOOD)
    # closed form: one failure in 12 is flakiness 0.31 > 0.2, and 26 of 12/12 clear 0.7
    assert oc.method == "exact"
    assert oc.probability == pytest.approx(0.995 ** (26 * 12), rel=1e-12)
    assert 1 - oc.probability == pytest.approx(0.79, abs=0.01)


def test_exact_agrees_with_monte_carlo() -> None:
    rates = np.r_[np.full(8, 0.97), np.full(4, 0.85), np.zeros(2)]
    crit = GateCriteria(k=3, min_overall_pass_hat_k=0.6, max_flakiness=0.5)
    exact = operating_characteristic(crit, 10, rates)
    mc = operating_characteristic(crit, 10, rates, method="monte carlo", replicates=20_000,
                                  rng=3)
    assert abs(exact.probability - mc.probability) < 4 * mc.standard_error
    warn = GateCriteria(k=3, min_overall_pass_hat_k=0.6, mode="proved-warn")
    exact = operating_characteristic(warn, 10, rates, rng=0)
    mc = operating_characteristic(warn, 10, rates, method="monte carlo", replicates=600, rng=4)
    assert abs(exact.probability - mc.probability) < 4 * mc.standard_error + 1e-9


def test_a_proved_mode_passes_the_good_suite_and_keeps_its_false_pass() -> None:
    crit = GateCriteria(mode="proved-warn")  # 95 %: alpha 0.05
    assert operating_characteristic(crit, 12, GOOD, rng=0).probability >= 0.75
    strict = GateCriteria(mode="proved")
    assert operating_characteristic(strict, 12, GOOD, rng=0).probability == 0.0  # 56 runs
    # at 60 runs every one of the 26 good tasks must pass 60 of 60: 0.995^(60 x 26) = 0.0004
    at_60 = operating_characteristic(strict, 60, GOOD, rng=0)
    assert at_60.probability == pytest.approx(0.995 ** (60 * 26), rel=1e-6)


@pytest.mark.parametrize("conf", [0.90, 0.95, 0.99])
def test_proved_false_pass_at_the_bar_at_most_alpha(conf: float) -> None:
    bar = 0.7
    pops = {"the good suite lowered to the bar": lowered_rates(GOOD, 5, bar),
            "identical tasks at the bar": np.full(30, bar ** 0.2),
            "bimodal at the bar": lowered_rates(np.r_[np.full(20, 0.999), np.full(10, 0.3)],
                                                5, bar)}
    for name, rates in pops.items():
        assert np.mean(rates**5) == pytest.approx(bar, abs=1e-9), name
        # 'proved' passes a subset of what 'proved-warn' passes (the same suite rule, and
        # every task proved steady besides), so its false pass is at most this one
        crit = GateCriteria(mode="proved-warn", confidence=conf)
        oc = operating_characteristic(crit, 12, rates, rng=0)
        assert oc.method == "exact", name
        assert oc.high <= 1 - conf, (name, oc)
    # the chapter's rule has no such guarantee: identical tasks at the bar, 12 runs
    chapter = operating_characteristic(GateCriteria(), 12, np.r_[np.ones(21), np.zeros(9)])
    assert chapter.probability == 1.0  # mean exactly at the bar passes every time


def test_band_and_steady_runs_against_closed_forms() -> None:
    lo, hi = flaky_band(0.2)
    assert 4 * lo * (1 - lo) == pytest.approx(0.2) and 4 * hi * (1 - hi) == pytest.approx(0.2)
    for cap, conf in ((0.2, 0.95), (0.2, 0.99), (0.5, 0.9)):
        _, top = flaky_band(cap)
        brute = next(n for n in range(1, 10_000) if (1 - conf) ** (1 / n) >= top)
        assert runs_to_prove_steady(cap, conf) == brute
    assert runs_to_prove_steady(0.2) == 56  # the figure
    # 12 runs: only 0 and 12 of 12 read as flakiness <= 0.2, so a task at the band's top
    # is missed with probability hi^12 + lo^12
    assert warning_miss_rate(12, 0.2) == pytest.approx(hi**12 + lo**12, rel=1e-9)
    for conf in (0.90, 0.95, 0.99):  # the 'proved' task rule's false pass, over the band
        need = runs_to_prove_steady(0.2, conf)
        for n in (need - 1, need, need + 7, 2 * need):
            assert steady_false_pass(n, 0.2, conf) <= 1 - conf + 1e-12
        assert steady_false_pass(need - 1, 0.2, conf) == 0.0  # nothing is proved steady yet


def test_gate_decision_chapter_agrees_with_reliability_gate() -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        t = int(rng.integers(1, 6))
        n = rng.integers(0, 9, t)
        c = rng.binomial(n, rng.uniform(0, 1, t))
        ks = rng.integers(1, 4, t)
        crit = GateCriteria(k=int(ks[0]), min_overall_pass_hat_k=float(rng.uniform(0.1, 0.9)),
                            max_flakiness=float(rng.uniform(0.1, 0.9)),
                            on=str(rng.choice(["estimate", "lower-bound"])),
                            min_runs=int(rng.integers(0, 3)))
        got = gate_decision(c, n, crit, ks=ks).passed
        assert got == _chapter_passes(tuple(int(x) for x in c), n.tolist(), ks.tolist(), crit)


def test_bad_input_names_the_value() -> None:
    with pytest.raises(ValueError, match="mode"):
        GateCriteria(mode="lenient")
    with pytest.raises(ValueError, match="rates"):
        operating_characteristic(GateCriteria(), 12, [1.2])
    with pytest.raises(ValueError, match="method"):
        operating_characteristic(GateCriteria(), 12, [0.5], method="guess")
    with pytest.raises(ValueError, match="one k"):
        gate_decision([3, 3], [4, 4], GateCriteria(mode="proved"), ks=[1, 2])
    assert operating_characteristic(GateCriteria(), 3, [1.0]).probability == 0.0  # n < k
