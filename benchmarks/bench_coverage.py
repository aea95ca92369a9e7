"""How often do passk's intervals cover? Exact per-task coverage and Monte Carlo suite coverage.

Usage::

    python benchmarks/bench_coverage.py           # the full study (about 2 minutes on 2 cores)
    python benchmarks/bench_coverage.py --quick   # a coarse grid, about 10 seconds

(a) Per task. For every method of :func:`passk.pass_hat_k_ci` the coverage of the true
pass^k = p^k is *computed*, not simulated (:func:`passk.coverage.exact_coverage`): with
c ~ Binomial(n, p),

    coverage(p) = sum over c of P(c) * [low(c) <= p^k <= high(c)],

on the grid n = 3..50, k = 1..8 (k <= n), p from 0.5 to 0.999 (500 points plus the issue's
0.9, 0.95, 0.99, 0.995). The expected width (:func:`passk.coverage.expected_width`) is the
sum over c of P(c) * (high(c) - low(c)).

(b) Per suite. :func:`passk.mean_pass_hat_k_ci` on task populations like tau-bench's: each task
is, with probability 1/3 each, a stable pass (p ~ U(0.97, 1)), a stable fail (p ~ U(0, 0.03)) or
in between (p ~ U(0.2, 0.95)). T = 20, 50, 200 tasks, n = 4 and 12 runs, k = 1, 2, 4. Each
replicate draws its T tasks and then their runs; the estimand is the mean over *these* T tasks
of p_i^k (the suite is fixed, the runs are random), which is what the suite interval claims to
cover. The coverage of the population mean E[p^k] ("tasks like these") is printed beside it for
the two methods that resample tasks. Seeded; the Monte Carlo standard error is printed.

(c) The default suite interval where it is weakest: suites whose tasks all share one p.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from passk.coverage import exact_coverage, expected_width
from passk.metrics import CI_METHODS, SUITE_CI_METHODS, mean_pass_hat_k_ci

SEED = 20260601
CONFIDENCE = 0.95
GOAL = 0.94  # the issue's goal for a default method at 95 %
ISSUE_P = (0.9, 0.95, 0.99, 0.995)
ISSUE_ROWS = ((12, 5), (5, 5), (30, 5))


# --------------------------------------------------------------------------
# (a) exact per-task coverage
# --------------------------------------------------------------------------


def per_task_study(quick: bool) -> None:
    ns = [3, 5, 8, 12, 20, 30, 50] if quick else list(range(3, 51))
    p = np.union1d(np.linspace(0.5, 0.999, 100 if quick else 500), ISSUE_P)
    print("(a) Per-task intervals for pass^k: exact coverage at 95 %, enumerated over the binomial")
    print(f"    grid: n = {ns[0]}..{ns[-1]} ({len(ns)} values), k = 1..8 with k <= n, "
          f"{p.size} values of p in [0.5, 0.999]")
    print()
    header = f"    {'method':<24} {'min coverage':>12}  {'at (n, k, p)':<18} {'share < 95%':>11} " \
             f"{'mean width':>10}"
    print(header)
    for method in CI_METHODS:
        worst, where, below, points, widths = 1.0, (0, 0, 0.0), 0, 0, []
        for n in ns:
            k = np.arange(1, min(8, n) + 1)[:, None]  # k <= n: the bootstrap needs k-subsets
            cov = exact_coverage(n, k, p[None, :], method=method, confidence=CONFIDENCE)
            width = expected_width(n, k, p[None, :], method=method, confidence=CONFIDENCE)
            i, j = np.unravel_index(int(np.argmin(cov)), cov.shape)
            if cov[i, j] < worst:
                worst, where = float(cov[i, j]), (n, int(k[i, 0]), float(p[j]))
            below += int(np.count_nonzero(cov < CONFIDENCE))
            points += cov.size
            widths.extend(width.ravel().tolist())
        print(f"    {CI_METHODS[method]:<24} {worst:>12.4f}  ({where[0]}, {where[1]}, "
              f"{where[2]:.4g}){'':<3} {below / points:>11.1%} {np.mean(widths):>10.3f}")
    print()
    print("    coverage at the issue's points (k = 5):")
    print(f"    {'method':<24} {'n':>3}  " + "  ".join(f"p={q:<6}" for q in ISSUE_P))
    for method in CI_METHODS:
        for n, k in ISSUE_ROWS:
            cov = exact_coverage(n, k, ISSUE_P, method=method, confidence=CONFIDENCE)
            print(f"    {CI_METHODS[method]:<24} {n:>3}  " + "  ".join(f"{x:<8.3f}" for x in cov))
    print("    (an exact interval's coverage does not depend on k: p^k is in [L^k, U^k] "
          "exactly when p is in [L, U])")
    print()


# --------------------------------------------------------------------------
# (b) Monte Carlo coverage of the suite interval
# --------------------------------------------------------------------------

BANDS = ((0.97, 1.0), (0.0, 0.03), (0.2, 0.95))  # stable pass, stable fail, in between


def population_mean(k: int) -> float:
    """E[p^k] over the tau-bench-like population: the mean of p^k over each U(a, b) band."""
    return float(np.mean([(b ** (k + 1) - a ** (k + 1)) / ((k + 1) * (b - a)) for a, b in BANDS]))


def draw_suite(rng: np.random.Generator, tasks: int) -> np.ndarray:
    band = rng.integers(0, 3, size=tasks)
    low = np.array([a for a, _ in BANDS])[band]
    high = np.array([b for _, b in BANDS])[band]
    return low + (high - low) * rng.random(tasks)


def suite_cell(seed: np.random.SeedSequence, tasks: int, n: int, k: int, replicates: int,
               resamples: int) -> dict[str, tuple[float, float, float]]:
    """Coverage of the suite's mean p^k, mean width, coverage of E[p^k], per method."""
    rng = np.random.default_rng(seed)
    target_population = population_mean(k)
    hits = {m: 0 for m in SUITE_CI_METHODS}
    hits_population = {m: 0 for m in SUITE_CI_METHODS}
    width = {m: 0.0 for m in SUITE_CI_METHODS}
    for _ in range(replicates):
        p = draw_suite(rng, tasks)
        c = rng.binomial(n, p)
        target = float(np.mean(p**k))
        for method in SUITE_CI_METHODS:
            result = mean_pass_hat_k_ci(c, n, k, confidence=CONFIDENCE, method=method, rng=rng,
                                        n_resamples=resamples)
            low, high = result.ci
            hits[method] += low <= target <= high
            hits_population[method] += low <= target_population <= high
            width[method] += high - low
    return {m: (hits[m] / replicates, width[m] / replicates, hits_population[m] / replicates)
            for m in SUITE_CI_METHODS}


def suite_study(quick: bool) -> None:
    replicates = 150 if quick else 1000
    resamples = 499 if quick else 999
    tasks_grid, n_grid, k_grid = (20, 50, 200), (4, 12), (1, 2, 4)
    se = np.sqrt(CONFIDENCE * (1 - CONFIDENCE) / replicates)
    print("(b) Suite interval for the mean over tasks of pass^k: Monte Carlo coverage at 95 %")
    print("    tasks: 1/3 stable pass p~U(0.97,1), 1/3 stable fail p~U(0,0.03), "
          "1/3 p~U(0.2,0.95)")
    print(f"    {replicates} replicates per cell (Monte Carlo s.e. {se:.3f} at 0.95), "
          f"{resamples} bootstrap resamples; seed {SEED}")
    print("    cov = coverage of the mean over the suite's tasks of p_i^k (the estimand);")
    print("    pop = coverage of the population mean E[p^k]; width = mean width")
    print()
    names = list(SUITE_CI_METHODS)
    print(f"    {'T':>4} {'n':>3} {'k':>2}  " + "  ".join(f"{m + ' cov/pop/width':<30}"
                                                      for m in names))
    seeds = np.random.SeedSequence(SEED).spawn(len(tasks_grid) * len(n_grid) * len(k_grid))
    results: dict[str, list[tuple[float, float]]] = {m: [] for m in names}
    i = 0
    for tasks in tasks_grid:
        for n in n_grid:
            for k in k_grid:
                cell = suite_cell(seeds[i], tasks, n, k, replicates, resamples)
                i += 1
                row = []
                for m in names:
                    cov, wid, pop = cell[m]
                    results[m].append((cov, wid))
                    row.append(f"{cov:.3f}/{pop:.3f}/{wid:.3f}".ljust(30))
                print(f"    {tasks:>4} {n:>3} {k:>2}  " + "  ".join(row), flush=True)
    print()
    print(f"    {'method':<52} {'min cov':>8} {'mean width':>10}")
    summary = {}
    for m in names:
        covs, wids = zip(*results[m])
        summary[m] = (min(covs), float(np.mean(wids)))
        print(f"    {SUITE_CI_METHODS[m]:<52} {min(covs):>8.3f} {np.mean(wids):>10.3f}")
    meeting = [m for m in names if summary[m][0] >= GOAL - 2 * se]
    choice = min(meeting, key=lambda m: summary[m][1]) if meeting else None
    print()
    if choice is None:
        print(f"    no method reaches {GOAL} everywhere")
    else:
        print(f"    narrowest method with coverage >= {GOAL} (within 2 s.e.) in every cell: "
              f"{choice!r}; passk's default is 'studentized'"
              + ("" if choice == "studentized" else "  <-- DIFFERENT"))
    print("    why: the suite is fixed and the runs are random, so the interval needs the "
          "within-task")
    print("    binomial variance; 't' and 'percentile' resample tasks and also carry the "
          "spread between")
    print("    tasks (coverage near 1 here, intervals several times wider); they answer "
          "'tasks like these'.")


def stress_study(quick: bool) -> None:
    """The default where it is weakest: every task with the same p (no stable tasks)."""
    replicates = 150 if quick else 1000
    tasks = 50
    rng = np.random.default_rng(np.random.SeedSequence(SEED).spawn(19)[-1])
    print()
    print(f"(c) The default on suites where every task has the same p (T = {tasks}, "
          f"{replicates} replicates)")
    print(f"    {'n':>3} {'k':>2}  " + "  ".join(f"p={p:<5}" for p in (0.5, 0.8, 0.95))
          + "   (k with n < 2k have no unbiased per-task variance)")
    for n in (4, 12):
        for k in (1, 2, 4):
            row = []
            for p in (0.5, 0.8, 0.95):
                hits = 0
                for _ in range(replicates):
                    c = rng.binomial(n, p, size=tasks)
                    low, high = mean_pass_hat_k_ci(c, n, k, confidence=CONFIDENCE).ci
                    hits += low <= p**k <= high
                row.append(f"{hits / replicates:<7.3f}")
            print(f"    {n:>3} {k:>2}  " + "  ".join(row), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a coarse grid, a few seconds")
    args = parser.parse_args()
    start = time.perf_counter()
    per_task_study(args.quick)
    suite_study(args.quick)
    stress_study(args.quick)
    print(f"\n    ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
