"""How often do passk's intervals cover? Exact per-task coverage and Monte Carlo suite coverage.

Usage::

    python benchmarks/bench_coverage.py           # the full study (21 minutes on 2 shared cores)
    python benchmarks/bench_coverage.py --quick   # a coarse grid, about a minute
    python benchmarks/bench_coverage.py --issue23 # only (d), 'hoeffding' beside 'score'

(a) Per task. For every method of :func:`passk.pass_hat_k_ci` the coverage of the true
pass^k = p^k is *computed*, not simulated (:func:`passk.stats.coverage.exact_coverage`): with
c ~ Binomial(n, p),

    coverage(p) = sum over c of P(c) * [low(c) <= p^k <= high(c)],

on the grid n = 3..50, k = 1..8 (k <= n), p from 0.5 to 0.999 (500 points plus the issue's
0.9, 0.95, 0.99, 0.995). The expected width (:func:`passk.stats.coverage.expected_width`) is the
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

Sections (b) and (c) were written for 'score', the default before issue 23; (b) still
measures 'score', 'studentized' and 't', and (c) now measures the default 'hoeffding'.

(d) Issue 23, at 90, 95 and 99 %: the proved default 'hoeffding' beside 'score'. (d3)
tau-bench's own 50 x 4 run, widths for k = 1..4; c = [1, 0, 2, 0, 1] of 12 at k = 8; one
2-run task in a suite of 50 12-run tasks. (d2) Fixed suites whose runs are drawn (4,000
suites a cell): tau-bench's rates, mixed n (2-12), one short task, near-saturated (one noisy
task among perfect ones), bimodal, identical near p = 1; lowest coverage over the k studied
and median width, each method vectorized (checked against the package on two suites).
(d1) Identical tasks, exact (:func:`passk.stats.coverage.identical_suite_coverage`; for
'hoeffding' with n < 2k an exact lower bound), T = 5, 10, 20, 50, n = 2..12, k = 1..n, over
90 values of p and the interval ends of the sums nearest 0 and the top.

(c) Exact, on suites of identical tasks: there the suite's estimate is an integer sum over
tasks of C(c_i, k) divided by T C(n, k), whose distribution is a T-fold convolution, so the
default's coverage is summed exactly (:func:`passk.stats.coverage.identical_suite_coverage`) on a
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

from passk.metrics import CI_METHODS, estimate_pass_hat_k, estimate_pass_hat_k_variance
from passk.results.read import read_results
from passk.stats.coverage import exact_coverage, expected_width, identical_suite_coverage
from passk.stats.suite_interval import (
    _all_fail_upper,
    _all_pass_lower,
    _hoeffding_bounds,
    _hoeffding_suites,
    _posterior_variance,
    _score_bounds,
    _union_share,
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
    print(f"    methods: {', '.join(repr(m) for m in SUITE_METHODS)}; "
          f"{SUITE_METHODS[0]!r} was the default before issue 23 (see (d))")
    print()
    summary: dict[str, dict[str, float]] = {}
    pops = populations()
    seeds = iter(np.random.SeedSequence(SEED).spawn(len(pops) * len(tasks_grid) * 100))
    for name, draw in pops.items():
        worst = dict.fromkeys(SUITE_METHODS, (2.0, ""))
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
    print(f"    distribution of the suite's estimate (passk.stats.coverage.identical_suite_coverage), "
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


# --------------------------------------------------------------------------
# (d) issue 23: the proved default 'hoeffding' beside 'score', at 90, 95 and 99 %
# --------------------------------------------------------------------------

LEVELS = (0.90, 0.95, 0.99)
D_METHODS = ("hoeffding", "score")


def _ends_near_the_edges(tasks: int, n: int, k: int, level: float, method: str) -> np.ndarray:
    """The rates p at which the interval's ends lie for the suite sums nearest 0 and the top
    (all runs failed, one passed; all passed, one failed): where coverage dips, issue 23."""
    from math import comb

    scale = tasks * comb(n, k)
    x = np.array([0.0, 1.0, scale - 1.0, float(scale)]) / scale
    alpha = 1 - level
    if method == "hoeffding":
        share = _union_share(np.array([n]), k)
        low, high = _hoeffding_bounds(x, (n // k) * tasks, alpha * (1 - share),
                                      bernoulli=k in (1, n), spread=(tasks, n, k))
    else:
        low, high = _score_bounds(x, tasks, n, k, alpha, bernoulli=n == k)
    theta = np.concatenate([low, high])
    theta = np.concatenate([theta - 1e-9, theta + 1e-9])
    return np.clip(theta, 0.0, 1.0) ** (1.0 / k)


def identical_exact(quick: bool) -> None:
    print("(d1) Identical tasks: exact coverage (hoeffding where n < 2k: an exact lower "
          "bound), lowest over")
    print("     p = 0.01..0.99 (60 values), 1 - p = 1e-4..0.05 (30 values) and the interval "
          "ends of the sums")
    print("     nearest 0 and the top, over T = 5, 10, 20, 50, n = 2..12, k = 1..n")
    grid = np.concatenate([np.linspace(0.01, 0.99, 60), 1 - np.geomspace(1e-4, 0.05, 30)])
    tasks_grid = (5, 20) if quick else (5, 10, 20, 50)
    runs_grid = (2, 3, 4, 8) if quick else tuple(range(2, 13))
    for level in LEVELS:
        for method in D_METHODS:
            if method == "score" and quick:
                continue
            worst, where, below, cells = 2.0, "", 0, 0
            for tasks in tasks_grid:
                for n in runs_grid:
                    for k in range(1, n + 1):
                        p = np.union1d(grid, _ends_near_the_edges(tasks, n, k, level, method))
                        cov = np.asarray(identical_suite_coverage(tasks, n, k, p,
                                                                  confidence=level,
                                                                  method=method))
                        i = int(np.argmin(cov))
                        cells += 1
                        below += int(cov[i] < level)
                        if cov[i] < worst:
                            worst, where = float(cov[i]), f"T={tasks} n={n} k={k} p={p[i]:.6g}"
            print(f"     {level:.0%} {method:<10} lowest {worst:.4f} at {where:<30} "
                  f"designs below {level:.2f}: {below} of {cells}", flush=True)
    print()


def score_suites(c: np.ndarray, n: np.ndarray, k: int, alpha: float
                 ) -> tuple[np.ndarray, np.ndarray]:
    """'score' for many suites of one design (n may differ across tasks: n_min is used)."""
    tasks = n.size
    n_min = int(n.min())
    estimate = np.asarray(estimate_pass_hat_k(c, n[None, :], k), dtype=float).mean(axis=1)
    low, high = _score_bounds(estimate, tasks, n_min, k, alpha, bernoulli=bool(np.all(n == k)))
    every_pass, every_fail = np.all(c == n, axis=1), np.all(c == 0, axis=1)
    low = np.where(every_pass, np.minimum(low, _all_pass_lower(tasks, n_min, k, alpha)), low)
    high = np.where(every_fail, np.maximum(high, _all_fail_upper(tasks, n_min, k, alpha)), high)
    return np.clip(low, 0, 1), np.clip(high, 0, 1)


def d_populations() -> dict[str, tuple[np.ndarray, np.ndarray, tuple[int, ...]]]:
    """name -> (the tasks' rates, their runs, the k studied): fixed suites, runs random."""
    rng = np.random.default_rng(SEED)
    tau = tau_bench_rates()
    short_n = np.full(50, 12)
    short_n[0] = 2
    return {
        "tau-bench's 50 x 4": (tau, np.full(tau.size, 4), (1, 2, 3, 4)),
        "mixed n (2-12), U(0.3, 1)": (rng.uniform(0.3, 1.0, 30),
                                      np.tile([2, 4, 8, 12, 12, 12], 5), (1, 2)),
        "one 2-run task, 49 x 12": (rng.beta(4.0, 1.0, 50), short_n, (1, 2)),
        "near-saturated, 20 x 4": (np.array([0.97] + [1.0] * 19), np.full(20, 4), (1, 2, 4)),
        "near-saturated, 10 x 12": (np.array([0.99] + [1.0] * 9), np.full(10, 12), (1, 4, 8)),
        "bimodal 0.98 / 0.05, 40 x 6": (np.where(np.arange(40) % 2 == 0, 0.98, 0.05),
                                        np.full(40, 6), (1, 3, 6)),
        "identical p = 0.995, 10 x 4": (np.full(10, 0.995), np.full(10, 4), (1, 2, 4)),
        "identical p = 0.999, 5 x 3": (np.full(5, 0.999), np.full(5, 3), (1, 2, 3)),
    }


def populations_mc(quick: bool) -> None:
    replicates = 500 if quick else 4000
    print(f"(d2) Fixed suites, runs drawn: Monte Carlo coverage ({replicates} suites a cell, "
          f"seed {SEED}),")
    print("     lowest over the population's k, and median width (today's 'score' beside it)")
    print(f"     {'population':<28} {'level':>5}  {'hoeffding':>9} {'score':>7}   "
          f"{'3 s.e.':>6}   {'median width hoeffding / score':>30}")
    seeds = iter(np.random.SeedSequence(SEED + 23).spawn(200))
    for name, (rates, n, ks) in d_populations().items():
        for level in LEVELS:
            lowest = dict.fromkeys(D_METHODS, 2.0)
            widths: dict[str, list[float]] = {m: [] for m in D_METHODS}
            for k in ks:
                rng = np.random.default_rng(next(seeds))
                c = rng.binomial(n, rates, size=(replicates, n.size))
                truth = float(np.mean(rates**k))
                for method in D_METHODS:
                    fn = _hoeffding_suites if method == "hoeffding" else score_suites
                    low, high = fn(c, n, k, 1 - level)
                    if method == "hoeffding":
                        for r in range(2):  # the vectorized interval is the package's
                            ci = mean_pass_hat_k_ci(c[r], n, k, confidence=level).ci
                            assert abs(ci.low - low[r]) < 1e-9 and abs(ci.high - high[r]) < 1e-9
                    cov = float(np.mean((low <= truth) & (truth <= high)))
                    lowest[method] = min(lowest[method], cov)
                    widths[method].append(float(np.median(high - low)))
            se3 = 3 * np.sqrt(level * (1 - level) / replicates)
            print(f"     {name:<28} {level:>5.2f}  {lowest['hoeffding']:>9.4f} "
                  f"{lowest['score']:>7.4f}   {se3:>6.4f}   "
                  f"{np.median(widths['hoeffding']):>14.3f} / {np.median(widths['score']):.3f}",
                  flush=True)
    print()


def tau_bench_widths() -> None:
    from passk.results.read import read_results

    path = next(p for p in TAU_FILES if p.is_file())
    results = read_results(path)
    c, n = np.asarray(results.successes), np.asarray(results.totals)
    print("(d3) tau-bench's own 50 x 4 run: interval widths, 'hoeffding' / 'score' (ratio)")
    for level in LEVELS:
        cells = []
        for k in (1, 2, 3, 4):
            new = mean_pass_hat_k_ci(c, n, k, confidence=level).ci
            old = mean_pass_hat_k_ci(c, n, k, confidence=level, method="score").ci
            wn, wo = new.high - new.low, old.high - old.low
            cells.append(f"k={k} {wn:.4f} / {wo:.4f} ({wn / wo:.3f})")
        print(f"     {level:.0%}: " + "   ".join(cells))
    low = mean_pass_hat_k_ci([1, 0, 2, 0, 1], 12, 8).ci
    old = mean_pass_hat_k_ci([1, 0, 2, 0, 1], 12, 8, method="score").ci
    print(f"     c = [1, 0, 2, 0, 1] of 12, k = 8, 95 %: hoeffding [{low.low:.4f}, "
          f"{low.high:.4f}], score [{old.low:.4f}, {old.high:.4f}]")
    rng = np.random.default_rng(SEED)
    grow: dict[str, list[float]] = {"hoeffding": [], "score": []}
    for _ in range(20):
        cc = rng.binomial(12, rng.uniform(0.5, 1.0, 50))
        nn = np.full(50, 12)
        nn[0] = 2
        for m, grown in grow.items():
            base = mean_pass_hat_k_ci(cc, 12, 1, method=m).ci
            short = mean_pass_hat_k_ci(np.minimum(cc, nn), nn, 1, method=m).ci
            grown.append((short.high - short.low) - (base.high - base.low))
    print(f"     one 2-run task among 50 of 12 runs (k = 1, 20 suites, rates U(0.5, 1)): width "
          f"grows by at most {max(grow['hoeffding']):.4f} (hoeffding), "
          f"{max(grow['score']):.4f} (score)")
    print()


def issue23_study(quick: bool) -> None:
    print("(d) Issue 23: the proved default 'hoeffding' beside the former default 'score'")
    print()
    tau_bench_widths()
    populations_mc(quick)
    identical_exact(quick)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a coarse grid, a few seconds")
    parser.add_argument("--suite-only", action="store_true", help="skip the per-task study (a)")
    parser.add_argument("--issue23", action="store_true",
                        help="only section (d): 'hoeffding' beside 'score' at 90/95/99 %%")
    args = parser.parse_args()
    start = time.perf_counter()
    if args.issue23:
        issue23_study(args.quick)
        print(f"\n    ({time.perf_counter() - start:.0f} s)")
        return
    if not args.suite_only:
        per_task_study(args.quick)
    suite_study(args.quick)
    identical_study(args.quick)
    print(f"\n    ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
