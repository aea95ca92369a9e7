"""Benchmark: the suite interval (``'hoeffding'``) against the construction it replaced.

The reference below is the former binomial-dominated part, kept plain: the whole
Binomial(N) pmf at every evaluation, Brent's method on each end (two inversions), and a
design search that tries every split of the distinct m = n // k. The current code
(``passk.stats.suite_interval``) adds the exact-variance bound, evaluates the binomial on a
window around its mean (the cut mass added to the bound), bisects both ends together and
searches a bounded list of groupings.

Printed, in one run: CPU time (``time.process_time``; min and median of the runs,
interleaved, so that a busy machine shifts both sides alike), peak traced memory
(``tracemalloc``, first run), the ratio reference / current, for

* 300 tasks with 268 distinct n, k = 1 (issue 30: 16.8 s before);
* 100,000 tasks x n = 100, k = 1 (issue 30: 40 s and 709 MB before);
* the suite curves k = 1..n of 10,000 x 16 and 10,000 x 64;

then the widths before and after on a grid of identical-design suites (issue 29).

Targets: the first under 1 s, the second under 2 s; no cell of the grid wider.

Run: ``PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_suite_interval.py [--repeats 3]``
(the reference runs once where one run takes more than 5 s).
"""

from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from passk.metrics import estimate_pass_hat_k, pass_hat_k_ci
from passk.stats import suite_interval
from passk.stats.suite_interval import _union_share, mean_pass_hat_k_ci

SEED = 30


# --------------------------------------------------------------------------
# the reference: the construction before issues 29 and 30, plain
# --------------------------------------------------------------------------

@lru_cache(maxsize=64)
def _log_binomials(size: int) -> np.ndarray:
    from scipy.special import gammaln

    j = np.arange(size + 1)
    return gammaln(size + 1.0) - gammaln(j + 1.0) - gammaln(size - j + 1.0)


def reference_tail(x: float, theta: float, size: int, bernoulli: bool, upper: bool) -> float:
    """Bentkus's bound over the whole Binomial(size, theta) pmf (and Hoeffding's 1956 tail)."""
    from scipy.special import xlog1py, xlogy

    j = np.arange(size + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        pmf = np.exp(_log_binomials(size) + xlogy(j, theta) + xlog1py(size - j, -theta))
    if not upper:
        pmf, x = pmf[::-1], 1.0 - x
    above = np.cumsum(pmf[::-1])[::-1]
    excess = np.concatenate([np.cumsum(above[::-1])[::-1][1:], [0.0]])
    gap = x * size - j
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = min(1.0, float(np.where(gap > 0, excess / gap, np.inf).min()))
    if bernoulli:
        s = round(x * size)
        if s >= size * (theta if upper else 1.0 - theta) + 1.0:
            bound = min(bound, float(above[min(max(s, 0), size)]))
    return bound


def reference_ends(x: float, size: int, alpha: float, bernoulli: bool) -> tuple[float, float]:
    """Each end by Brent's method (two inversions), moved outwards by 1e-12."""
    from scipy import optimize

    half = alpha / 2

    def rise(theta: float) -> float:
        return reference_tail(x, theta, size, bernoulli, True) - half

    def fall(theta: float) -> float:
        return reference_tail(x, theta, size, bernoulli, False) - half

    low = 0.0 if rise(0.0) > 0 else max(0.0, optimize.brentq(rise, 0.0, x, xtol=1e-14) - 1e-12)
    high = 1.0 if fall(1.0) > 0 else min(1.0, optimize.brentq(fall, x, 1.0, xtol=1e-14) + 1e-12)
    return low, high


def reference_interval(c: np.ndarray, n: np.ndarray, k: int, alpha: float = 0.05,
                       ) -> tuple[float, float]:
    """The former ``'hoeffding'`` interval: every split tried, each a full inversion."""
    keep = n >= k
    c, n = c[keep], n[keep]
    t = c.size
    values = np.asarray(estimate_pass_hat_k(c, n, k), dtype=float)
    share = _union_share(n, k)
    part = alpha * (1.0 - share)
    blocks = n // k
    ms = np.unique(blocks).tolist()
    sizes = {m: int(np.count_nonzero(blocks == m)) for m in ms}
    alone = {m: np.unique(n[blocks == m]).size == 1
             and (k == 1 or int(n[blocks == m][0]) == k) for m in ms}
    candidates = [[[m] for m in ms], [ms]] + [[ms[:i], ms[i:]] for i in range(1, len(ms))]

    def width(grouping: list[list[int]]) -> float:
        total = 0.0
        for g in grouping:
            t_g = sum(sizes[m] for m in g)
            lo, hi = reference_ends(0.5, min(g) * t_g, part * t_g / t, len(g) == 1 and alone[g[0]])
            total += t_g / t * (hi - lo)
        return total

    best = min(candidates, key=width) if len(ms) > 1 else candidates[0]
    low = high = 0.0
    for g in best:
        mine = np.isin(blocks, g)
        t_g = int(mine.sum())
        lo, hi = reference_ends(float(values[mine].mean()), min(g) * t_g, part * t_g / t,
                                len(g) == 1 and alone[g[0]])
        low += t_g / t * lo
        high += t_g / t * hi
    if share > 0:
        ends = pass_hat_k_ci(c, n, k, confidence=1.0 - alpha * share / t)
        estimate = float(values.mean())
        low = min(max(low, float(np.mean(ends.low))), estimate)
        high = max(min(high, float(np.mean(ends.high))), estimate)
    return float(np.clip(low, 0, 1)), float(np.clip(high, 0, 1))


# --------------------------------------------------------------------------
# timing
# --------------------------------------------------------------------------

def fresh() -> None:
    """Empty every cache, so each run pays what a first call pays."""
    _log_binomials.cache_clear()
    for name in ("_variance_majorant", "_groups", "_width_at_half", "_worst_case_variance"):
        getattr(suite_interval, name).cache_clear()


def cpu(fn: Callable[[], object], trace: bool) -> tuple[float, float]:
    fresh()
    if trace:
        tracemalloc.start()
    start = time.process_time()
    fn()
    elapsed = time.process_time() - start
    peak = 0.0
    if trace:
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return elapsed, peak


def compare(name: str, new: Callable[[], object], old: Callable[[], object], repeats: int) -> None:
    new_t, old_t = [], []
    new_mem = old_mem = 0.0
    for r in range(repeats):
        t, m = cpu(new, r == 0)
        new_t.append(t)
        new_mem = max(new_mem, m)
        if r == 0 or old_t[0] <= 5.0:
            t, m = cpu(old, r == 0)
            old_t.append(t)
            old_mem = max(old_mem, m)
    print(f"{name:<44} now {min(new_t):7.3f} s (median {statistics.median(new_t):.3f}, "
          f"{new_mem:6.1f} MB)   before {min(old_t):7.2f} s (median "
          f"{statistics.median(old_t):.2f}, {old_mem:6.1f} MB)   "
          f"ratio {min(old_t) / min(new_t):6.1f}x")


def widths_table() -> None:
    """Widths before and after, 95%, on seeded suites: T, n, k = 1..n, five rates."""
    rng = np.random.default_rng(SEED)
    rows = []
    for t in (5, 30, 100, 1000):
        for n in (4, 8, 16, 64):
            for k in range(1, n + 1):
                for p in (0.5, 0.8, 0.9, 0.95, 0.99):
                    c = rng.binomial(n, p, t)
                    nn = np.full(t, n)
                    lo, hi = reference_interval(c, nn, k)
                    new = mean_pass_hat_k_ci(c, nn, k).ci
                    if hi - lo > 0:
                        rows.append((n // k == 1 and n > k, 1 - (new.high - new.low) / (hi - lo)))
    print("\nwidths at 95%, identical designs: T in {5,30,100,1000}, n in {4,8,16,64}, k = 1..n, "
          "p in {0.5,0.8,0.9,0.95,0.99}")
    print(f"{'cells':<28}{'n':>6}{'narrowed':>10}{'median':>9}{'median*':>9}{'max':>8}"
          f"{'widest':>9}")
    for label, pick in (("all", lambda r: True), ("n // k = 1, n > k", lambda r: r[0]),
                        ("others", lambda r: not r[0])):
        s = np.array([r[1] for r in rows if pick(r)])
        moved = s[s > 1e-6]
        print(f"{label:<28}{s.size:>6}{np.mean(s > 1e-6):>10.1%}{np.median(s):>9.2%}"
              f"{np.median(moved) if moved.size else 0.0:>9.2%}{s.max():>8.2%}{-s.min():>+9.1e}")
    print("(narrowing = 1 - width now / width before; median* = over the cells that narrowed;"
          " 'widest' = the largest relative widening)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-widths", action="store_true")
    args = parser.parse_args()
    rng = np.random.default_rng(SEED)

    mixed_n = np.concatenate([np.arange(20, 288), rng.integers(20, 288, 32)])
    mixed_c = rng.binomial(mixed_n, 0.8)
    big_c = rng.binomial(100, rng.uniform(0.5, 1.0, 100_000))
    big_n = np.full(big_c.size, 100)
    curves = {n: rng.binomial(n, rng.uniform(0.5, 1.0, 10_000)) for n in (16, 64)}
    print(f"suite interval, CPU seconds; {args.repeats} runs interleaved "
          f"(reference once where a run takes over 5 s)")
    compare(f"300 tasks, {np.unique(mixed_n).size} distinct n, k = 1",
            lambda: mean_pass_hat_k_ci(mixed_c, mixed_n, 1),
            lambda: reference_interval(mixed_c, mixed_n, 1), args.repeats)
    compare("100,000 tasks x n = 100, k = 1",
            lambda: mean_pass_hat_k_ci(big_c, big_n, 1),
            lambda: reference_interval(big_c, big_n, 1), args.repeats)
    for n, c in curves.items():
        nn = np.full(c.size, n)
        compare(f"10,000 x {n}, the curve k = 1..{n}",
                lambda c=c, nn=nn, n=n: [mean_pass_hat_k_ci(c, nn, k) for k in range(1, n + 1)],
                lambda c=c, nn=nn, n=n: [reference_interval(c, nn, k) for k in range(1, n + 1)],
                args.repeats)
    if not args.no_widths:
        widths_table()


if __name__ == "__main__":
    main()
