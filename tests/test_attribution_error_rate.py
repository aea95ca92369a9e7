"""The controlled comparison's error rate on populations it was not designed for (issue 39).

The paired test's size is checked exactly: for every number of discordant pairs d, the
rejection probability under Binomial(d, 1/2), with the p-values recomputed by scipy's
``binomtest`` (an outside reference), never above alpha. The whole procedure's family-wise
error (the baseline's flaky tasks, each task x variant tested, Holm) is simulated on
``benchmarks/bench_attribute.py``'s populations, with its standard error; the default run
uses fewer suites and a smaller n, the slow run the benchmark's own.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom, binomtest

from passk.stats.paired import paired_p_values

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_attribute.py"
_spec = importlib.util.spec_from_file_location("bench_attribute", _PATH)
assert _spec is not None and _spec.loader is not None
bench = importlib.util.module_from_spec(_spec)
sys.modules["bench_attribute"] = bench
_spec.loader.exec_module(bench)


def _size_by_scipy(d: int, alpha: float) -> float:
    return sum(binom.pmf(f, d, 0.5) for f in range(d + 1)
               if binomtest(f, d, 0.5).pvalue <= alpha)


@pytest.mark.parametrize("alpha", [0.10, 0.05, 0.01])
def test_the_exact_size_is_at_most_alpha_and_agrees_with_scipy(alpha):
    size, d = bench.exact_size(60, alpha)
    assert size <= alpha
    assert size == pytest.approx(_size_by_scipy(d, alpha), abs=1e-12)
    for dd in (1, 5, 6, 17, 40):
        f = np.arange(dd + 1)
        assert np.allclose(paired_p_values(f, dd - f),
                           [binomtest(x, dd, 0.5).pvalue for x in f], atol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("alpha", [0.10, 0.05, 0.01])
def test_the_exact_size_over_n_up_to_200(alpha):
    size, d = bench.exact_size(200, alpha)
    assert size <= alpha
    assert size == pytest.approx(_size_by_scipy(d, alpha), abs=1e-12)


def _check(pops, reps, seed):
    rng = np.random.default_rng(seed)
    for pop in pops:
        fwer, power, tests, _ = bench.family_wise_error(pop, reps, rng)
        assert tests > 0, pop.name
        for a in bench.ALPHAS:
            se = math.sqrt(max(a * (1 - a), 1e-12) / reps)  # the s.e. at the stated level
            assert fwer[a] <= a + 3 * se, (pop.name, a, fwer[a])
        if pop.effects:
            assert power[0.05] > 0.5, (pop.name, power)


def test_the_family_wise_error_holds_on_three_populations():
    pops = [p for p in bench.POPULATIONS if p.name.startswith(("unequal", "many variants",
                                                               "one effect"))]
    assert len(pops) == 3
    _check(pops, 1500, seed=1)


@pytest.mark.slow
def test_the_family_wise_error_holds_on_every_population():
    _check(bench.POPULATIONS, 20000, seed=0)
