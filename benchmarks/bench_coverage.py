"""How often do passk's intervals cover? Exact per-task coverage and Monte Carlo suite coverage.

Usage::

    python benchmarks/bench_coverage.py           # the full study (21 minutes on 2 shared cores)
    python benchmarks/bench_coverage.py --quick   # a coarse grid, about a minute

(a) Per task. For every method of :func:`passk.pass_hat_k_ci` the coverage of the true
pass^k = p^k is *computed*, not simulated (:func:`passk.coverage.exact_coverage`): with
c ~ Binomial(n, p),

    coverage(p) = sum over c of P(c) * [low(c) <= p^k <= high(c)],

on the grid n = 3..50, k = 1..8 (k <= n), p from 0.5 to 0.999 (500 points plus the issue's
0.9, 0.95, 0.99, 0.995). The expected width (:func:`passk.coverage.expected_width`) is the
sum over c of P(c) * (high(c) - low(c)).

(b) Per suite. :func:`passk.mean_pass_hat_k_ci` covers the mean over *these* T tasks of
p_i^k: the tasks are fixed, the runs random. Each replicate draws its T tasks' rates from a
population, then their runs (c_i ~ Binomial(n, p_i)), and checks whether the interval holds
the mean of p_i^k over the drawn tasks. Populations: identical tasks at p = 0.5, 0.7, 0.8,
0.9, 0.95, 0.99; Beta(4, 1); Beta(1/2, 1/2); Uniform(0, 1); tau-bench's own 50 tasks
(GPT-4o airline, p = c/4 from its 4 trials; T = 50 is those tasks, T = 200 four copies of
each, fewer a random subset per suite). Grid: T = 5, 10, 20, 50, 200, n = 2..12, k = 1..n.
Methods: the default 'score', the former default 'studentized', and 't' (which answers
"tasks like these"); 'percentile' resamples tasks as 't' does and costs a bootstrap per
suite, so it is left out. Replicates are vectorized (one (replicates, T) array of binomial
draws per cell), and each cell's first two suites are checked against
:func:`passk.mean_pass_hat_k_ci` itself. A cell where the default's first pass is below 0.95
is run again with four times the replicates and the pooled figure is printed (marked *), so
that the Monte Carlo error is about 0.002 where it matters. Every cell is printed: per
population, rows T and n, columns k, coverage of the default in thousandths.

(c) Exact, on suites of identical tasks: there the suite's estimate is an integer sum over
tasks of C(c_i, k) divided by T C(n, k), whose distribution is a T-fold convolution, so the
default's coverage is summed exactly (:func:`passk.coverage.identical_suite_coverage`) on a
fine grid of p, with no Monte Carlo error.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy import stats
from scipy.special import ndtri

from passk.coverage import exact_coverage, expected_width, identical_suite_coverage
from passk.io import read_results
from passk.metrics import (
    CI_METHODS,
    _all_fail_upper,
    _all_pass_lower,
    _posterior_variance,
    _score_bounds,
    estimate_pass_hat_k,
    estimate_pass_hat_k_variance,
    mean_pass_hat_k_ci,
)

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

SUITE_METHODS = ("score", "studentized", "t")
IDENTICAL_P = (0.5, 0.7, 0.8, 0.9, 0.95, 0.99)
TASKS_GRID = (5, 10, 20, 50, 200)
RUNS_GRID = tuple(range(2, 13))
ROOT = Path(__file__).resolve().parents[1]
TAU_FILES = (ROOT.parent / "shared/data/tau-bench/gpt-4o-airline.json",
             ROOT / "book/data/tau-bench/gpt-4o-airline-rewards.json")

Draw = Callable[[np.random.Generator, int, int], np.ndarray]


def tau_bench_rates() -> np.ndarray:
    """Per-task p = c/4 of tau-bench's GPT-4o airline run (its 50 tasks x 4 trials)."""
    for path in TAU_FILES:
        if path.is_file():
            results = read_results(path)
            return np.asarray(results.successes / results.totals, dtype=float)
    raise SystemExit(f"no tau-bench run at {' or '.join(map(str, TAU_FILES))}")


def populations() -> dict[str, Draw]:
    """name -> draw(rng, replicates, T): a (replicates, T) array of per-task rates."""
    out: dict[str, Draw] = {}
    for p in IDENTICAL_P:
        out[f"identical p = {p}"] = lambda rng, r, t, p=p: np.full((r, t), p)
    out["Beta(4, 1)"] = lambda rng, r, t: rng.beta(4.0, 1.0, size=(r, t))
    out["Beta(1/2, 1/2)"] = lambda rng, r, t: rng.beta(0.5, 0.5, size=(r, t))
    out["Uniform(0, 1)"] = lambda rng, r, t: rng.random((r, t))
    tau = tau_bench_rates()

    def tau_draw(rng: np.random.Generator, r: int, t: int) -> np.ndarray:
        if t >= tau.size:  # the 50 tasks themselves, repeated to make up T
            return np.tile(np.resize(tau, t), (r, 1))
        return tau[np.argsort(rng.random((r, tau.size)), axis=1)[:, :t]]  # a subset per suite

    out[f"tau-bench's {tau.size} tasks"] = tau_draw
    return out


def suite_bounds(c: np.ndarray, n: int, k: int, method: str) -> tuple[np.ndarray, np.ndarray]:
    """Each replicate's interval (a row of c holds one suite's counts), as the package computes it.

    The formulas of :func:`passk.mean_pass_hat_k_ci`, vectorized over replicates with every
    task at n runs; :func:`check_against_package` compares them with the package itself.
    """
    alpha = 1 - CONFIDENCE
    tasks = c.shape[1]
    values = np.asarray(estimate_pass_hat_k(c, n, k), dtype=float)
    estimate = values.mean(axis=1)
    if method == "score":
        low, high = _score_bounds(estimate, tasks, n, k, alpha, bernoulli=n == k)
    elif method == "studentized":
        per_c = np.arange(n + 1)
        variance = np.fmax(_posterior_variance(per_c, np.full(n + 1, n), k),
                           np.asarray(estimate_pass_hat_k_variance(per_c, n, k), dtype=float))
        half = ndtri(1 - alpha / 2) * np.sqrt(variance[c].sum(axis=1)) / tasks
        low, high = estimate - half, estimate + half
    else:  # 't'; where every task has the same estimate the package falls back to the default
        s = values.std(axis=1, ddof=1)
        half = stats.t.ppf(1 - alpha / 2, tasks - 1) * s / np.sqrt(tasks)
        low, high = estimate - half, estimate + half
        flat = s == 0
        if flat.any():
            low[flat], high[flat] = suite_bounds(c[flat], n, k, "score")
        return np.clip(low, 0, 1), np.clip(high, 0, 1)
    every_pass, every_fail = np.all(c == n, axis=1), np.all(c == 0, axis=1)
    low = np.where(every_pass, np.minimum(low, _all_pass_lower(tasks, n, k, alpha)), low)
    high = np.where(every_fail, np.maximum(high, _all_fail_upper(tasks, n, k, alpha)), high)
    return np.clip(low, 0, 1), np.clip(high, 0, 1)


def check_against_package(c: np.ndarray, n: int, k: int, method: str, low: np.ndarray,
                          high: np.ndarray) -> None:
    """The vectorized interval must be the package's, suite by suite."""
    for row, lo, hi in zip(c, low, high):
        ci = mean_pass_hat_k_ci(row, n, k, confidence=CONFIDENCE, method=method).ci
        if not (abs(ci.low - lo) <= 1e-9 and abs(ci.high - hi) <= 1e-9):
            raise AssertionError(f"{method} n={n} k={k}: {ci} from the package, {lo, hi} here")


def suite_cell(rng: np.random.Generator, draw: Draw, tasks: int, n: int, k: int,
               replicates: int) -> dict[str, tuple[int, np.ndarray]]:
    """Per method: (suites covered, interval widths) over ``replicates`` suites."""
    p = draw(rng, replicates, tasks)
    c = rng.binomial(n, p)
    truth = np.mean(p**k, axis=1)  # the mean over these tasks of p_i^k
    out = {}
    for method in SUITE_METHODS:
        low, high = suite_bounds(c, n, k, method)
        check_against_package(c[:2], n, k, method, low[:2], high[:2])
        out[method] = (int(np.count_nonzero((low <= truth) & (truth <= high))), high - low)
    return out


def suite_study(quick: bool) -> dict[str, dict[str, float]]:
    replicates = 250 if quick else 2000
    tasks_grid = (5, 20, 200) if quick else TASKS_GRID
    runs_grid = (2, 4, 8, 12) if quick else RUNS_GRID
    se = np.sqrt(CONFIDENCE * (1 - CONFIDENCE) / replicates)
    pooled_se = np.sqrt(CONFIDENCE * (1 - CONFIDENCE) / (5 * replicates))
    print("(b) Suite interval for the mean over these tasks of pass^k: Monte Carlo coverage "
          "at 95 %")
    print(f"    {replicates} suites a cell (s.e. {se:.4f} at 0.95); a cell where the default "
          f"is below 0.95 is run")
    print(f"    again with {4 * replicates} more suites (* marks the pooled figure, s.e. "
          f"{pooled_se:.4f}); seed {SEED}")
    print(f"    methods: {', '.join(repr(m) for m in SUITE_METHODS)}; the default is "
          f"{SUITE_METHODS[0]!r}")
    print()
    summary: dict[str, dict[str, float]] = {}
    pops = populations()
    seeds = iter(np.random.SeedSequence(SEED).spawn(len(pops) * len(tasks_grid) * 100))
    for name, draw in pops.items():
        worst = {m: (2.0, "") for m in SUITE_METHODS}
        widths: dict[str, list[float]] = {m: [] for m in SUITE_METHODS}
        ratios: list[float] = []
        lines = []
        for tasks in tasks_grid:
            for n in runs_grid:
                row = []
                for k in range(1, n + 1):
                    rng = np.random.default_rng(next(seeds))
                    cell = suite_cell(rng, draw, tasks, n, k, replicates)
                    hits, total, mark = cell["score"][0], replicates, " "
                    if hits < CONFIDENCE * total:  # refine where it matters
                        more = suite_cell(rng, draw, tasks, n, k, 4 * replicates)
                        hits, total, mark = hits + more["score"][0], 5 * replicates, "*"
                    row.append(f"{round(1000 * hits / total):>4}{mark}")
                    for m in SUITE_METHODS:
                        cov = hits / total if m == "score" else cell[m][0] / replicates
                        if cov < worst[m][0]:
                            worst[m] = (cov, f"T={tasks} n={n} k={k}")
                        widths[m].append(float(np.median(cell[m][1])))
                    old = float(np.median(cell["studentized"][1]))
                    if old > 0:
                        ratios.append(float(np.median(cell["score"][1])) / old)
                lines.append(f"    {tasks:>4} {n:>3} " + "".join(row))
        print(f"    {name}: coverage of the default x 1000 (rows T, n; columns k = 1..n)")
        print(f"    {'T':>4} {'n':>3} " + "".join(f"{k:>4} " for k in range(1, max(runs_grid) + 1)))
        print("\n".join(lines))
        for m in SUITE_METHODS:
            print(f"      {m:<12} lowest {worst[m][0]:.3f} at {worst[m][1]:<17} "
                  f"median width {np.median(widths[m]):.3f}")
        print(f"      width of 'score' / width of 'studentized', median over cells: "
              f"{np.median(ratios):.2f}")
        print(flush=True)
        summary[name] = {m: worst[m][0] for m in SUITE_METHODS}
        summary[name].update({f"{m} width": float(np.median(widths[m])) for m in SUITE_METHODS})
        summary[name]["ratio"] = float(np.median(ratios))
    print("    lowest coverage over the grid, by population and method; median width")
    print(f"    {'population':<24} " + "".join(f"{m:>13}" for m in SUITE_METHODS)
          + "   width score / studentized")
    for name, row in summary.items():
        print(f"    {name:<24} " + "".join(f"{row[m]:>13.3f}" for m in SUITE_METHODS)
              + f"   {row['score width']:.3f} / {row['studentized width']:.3f}")
    lowest = min(row["score"] for row in summary.values())
    print(f"    the default's lowest cell over every population: {lowest:.3f} "
          f"(goal: 0.95, at least {GOAL} allowing for Monte Carlo error)")
    return summary


# --------------------------------------------------------------------------
# (c) exact coverage of the default on suites of identical tasks
# --------------------------------------------------------------------------


def identical_study(quick: bool) -> float:
    """The default's exact coverage when every task has the same p, over a fine grid of p."""
    p = np.union1d(np.linspace(0.02, 0.998, 12 if quick else 50), IDENTICAL_P)
    tasks_grid = (5, 20, 200) if quick else TASKS_GRID
    runs_grid = (2, 4, 8, 12) if quick else RUNS_GRID
    print()
    print("(c) The default on suites of identical tasks: exact coverage at 95 %, the sum over "
          "the")
    print(f"    distribution of the suite's estimate (passk.coverage.identical_suite_coverage), "
          f"at {p.size} values")
    print(f"    of p in [{p[0]:.2f}, {p[-1]:.3f}]; lowest over p, x 1000 (rows T, n; "
          f"columns k = 1..n)")
    print(f"    {'T':>4} {'n':>3} " + "".join(f"{k:>4} " for k in range(1, max(runs_grid) + 1)))
    worst, where = 2.0, ""
    for tasks in tasks_grid:
        for n in runs_grid:
            row = []
            for k in range(1, n + 1):
                cov = np.asarray(identical_suite_coverage(tasks, n, k, p, confidence=CONFIDENCE))
                i = int(np.argmin(cov))
                row.append(f"{int(np.floor(1000 * cov[i])):>4} ")
                if cov[i] < worst:
                    worst, where = float(cov[i]), f"T={tasks} n={n} k={k} p={p[i]:.4g}"
            print(f"    {tasks:>4} {n:>3} " + "".join(row), flush=True)
    print(f"    lowest exact coverage: {worst:.4f} at {where} (rounded down in the table)")
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a coarse grid, a few seconds")
    parser.add_argument("--suite-only", action="store_true", help="skip the per-task study (a)")
    args = parser.parse_args()
    start = time.perf_counter()
    if not args.suite_only:
        per_task_study(args.quick)
    suite_study(args.quick)
    identical_study(args.quick)
    print(f"\n    ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
