"""Does ``passk diff`` keep its error rates where users are? A Monte Carlo study, and the plan.

Part 1, the comparison. Suites of T tasks, n runs per task and version, drawn
from task populations it was not tuned on: identical tasks (p = 0.5 to 0.99),
Beta(4, 1) (mostly reliable), Beta(0.5, 0.5) (mostly all-or-nothing),
Uniform(0, 1), tau-bench's own 50 per-task rates (GPT-4o airline, 4 trials)
and a saturated baseline (every task at p = 1). Two changes:

- none: the new version is the old one (Type I error: verdict better or worse);
- boundary: each task's pass^k is the old one scaled, theta_new = s theta_old,
  with s chosen in each simulated suite so that the suite's mean pass^k
  changes by exactly -margin (margin 0.05; 0.01 for the saturated baseline,
  a drop of p 1 -> 0.99 at k = 1). "Non-inferior" there is a wrong verdict,
  allowed at most 2.5 % of the time (the interval's one-sided level).

Coverage is of the suite's true change (the task set drawn, only the runs
random), in both changes. Each cell prints Type I / non-inferior at the
boundary / the lower of the two coverages, for the floored comparison
(``compare_pass_hat_k`` now) and, in the summary, for the bare paired t
(before the floor).

Part 2, the five methods on the default population, bare and floored.

Part 3, the planner: ``plan_comparison`` from a pilot of 1,000 tasks drawn from a
population the plan knows nothing about, against the simulated power of the
floored comparison when every task's logit drops by the amount that lowers the
population's mean pass^k by D (the plan is given the variance across tasks of
that change, so the within-task part is what is checked).

Part 4, every claim keeps its rate (issue 23): per confidence level (90/95/99 %),
over populations (tau-bench's rates, bimodal Beta(0.5, 0.5), identical tasks at
p = 0.8/0.9/0.95, a perfect baseline) x designs (T, n_old, n_new, k) = (20, 2, 12, 2),
(50, 1, 12, 1), (50, 4, 4, 4), equal and unequal runs between versions x changes (none; a drop of 0.05 spread evenly; the same drop
concentrated on a tenth of the tasks; a gain of 0.10), the highest per-side miss
(P(low > truth) or P(high < truth): the rate of a false "better", "worse" or
"non-inferior" is at most that, each promised at most alpha/2) with its Monte Carlo
SE, and the lowest coverage, for the comparison now and before (``--before REV``: the
``passk/compare.py`` of a git revision, default the one before issue 23's fix).
Tasks present in one version only are left out by ``compare_pass_hat_k`` before
anything is computed, so a suite with some is a suite of the paired tasks.

Part 5, the planner on 30 designs: 3 populations x 5 designs with a pilot of the old
version (1,000 tasks, n runs each), and the default population (which the plan assumes
without a pilot) x the 5 designs at 0.5, 1 and 1.5 times their drop without one; each
with the drop spread evenly (every logit lowered alike) and concentrated on the tenth
of the tasks with the highest pass^k (where they can carry it): predicted minus
simulated power given the true variance of the change across tasks, with the default
now (the change on as few as 10 % of tasks, issue 23), with the default before
(correlation 0.7) and the plan's ``power_even``.

Part 6, what the corrections cost: power against a drop, now and before, on the
same simulated suites.

    nice -n 10 python benchmarks/bench_compare.py           # the full grid
    nice -n 10 python benchmarks/bench_compare.py --quick   # a smaller grid
    nice -n 10 python benchmarks/bench_compare.py --parts 45  # issue 23's tables
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np

from passk.stats.compare import METHODS
from passk.stats.power import pass_hat_k_sampling_variance, plan_comparison
from passk.stats.simulation import (
    TaskPopulation,
    simulate_intervals,
    simulate_suites,
    task_population,
)

_ROOT = Path(__file__).resolve().parent.parent
TAU = next((p / "shared" / "data" / "tau-bench" / "gpt-4o-airline.json"
            for p in (_ROOT.parent, _ROOT.parent.parent)
            if (p / "shared" / "data" / "tau-bench").is_dir()),
           _ROOT.parent / "shared" / "data" / "tau-bench" / "gpt-4o-airline.json")
TASKS = (5, 10, 20, 50, 200)
DESIGNS = ((2, 1), (2, 2), (4, 1), (4, 2), (4, 4), (8, 1), (8, 2), (8, 4), (8, 8),
           (12, 1), (12, 2), (12, 4), (12, 8))
MARGIN, SATURATED_MARGIN = 0.05, 0.01
PILOT = 1000  # pilot tasks: the plan's own sampling error shrinks with them


def tau_rates() -> np.ndarray:
    from passk.results.read import read_results
    r = read_results(TAU)
    return np.asarray(r.successes / r.totals, dtype=float)


def populations(rng: np.random.Generator, size: int) -> dict[str, np.ndarray]:
    out = {f"all p = {p}": np.array([p]) for p in (0.5, 0.8, 0.9, 0.95, 0.99)}
    out["Beta(4, 1)"] = rng.beta(4, 1, size)
    out["Beta(0.5, 0.5)"] = rng.beta(0.5, 0.5, size)
    out["Uniform(0, 1)"] = rng.uniform(0, 1, size)
    out["tau-bench rates"] = tau_rates()
    out["saturated (p = 1)"] = np.array([1.0])
    return out


def rates(rng: np.random.Generator, pool: np.ndarray, t: int, n: int, k: int, margin: float,
          reps: int, floor: bool) -> tuple[float, float, float]:
    """Type I error, non-inferior at the boundary, lowest coverage; one cell."""
    seed = int(rng.integers(2**63))
    res0, truth0 = simulate_suites(pool, t, n, k, replicates=reps, rng=seed, floor=floor)
    seed = int(rng.integers(2**63))
    res1, truth1 = simulate_suites(pool, t, n, k, drop=margin, replicates=reps, rng=seed,
                                   floor=floor)
    type1 = float(np.mean((res0.low > 0) | (res0.high < 0)))
    exact = np.isclose(truth1, -margin, atol=1e-12)  # suites that could drop by the margin
    ni = float(np.mean((res1.low > -margin)[exact])) if exact.any() else math.nan
    cover = min(float(np.mean((r.low <= t_ + 1e-12) & (t_ - 1e-12 <= r.high)))
                for r, t_ in ((res0, truth0), (res1, truth1)))
    return type1, ni, cover


def part_one(args: argparse.Namespace, rng: np.random.Generator) -> None:
    pops = populations(rng, 20_000)
    tasks = (5, 20, 200) if args.quick else TASKS
    designs = ((2, 1), (4, 4), (12, 8)) if args.quick else DESIGNS
    reps = args.replicates
    reps_big = max(reps // 2, 150)
    print(f"Part 1: {reps} suites a cell ({reps_big} at T = 200); Monte Carlo SE "
          f"{math.sqrt(0.025 * 0.975 / reps):.4f} at a 2.5 % rate, "
          f"{math.sqrt(0.05 * 0.95 / reps):.4f} at 5 %, {math.sqrt(0.05 * 0.95 / reps):.4f} "
          "at 95 % coverage")
    print("cell: Type I (nominal 0.05) / non-inferior at the boundary (at most 0.025) / "
          "lowest coverage (at least 0.95), the floored comparison")
    summary = []
    flagged = []  # cells beyond a limit by more than 3 Monte Carlo SE: run again, 8 times larger
    for name, pool in pops.items():
        margin = SATURATED_MARGIN if name.startswith("saturated") else MARGIN
        print(f"\n{name}, margin {margin}")
        print(f"{'n':>3} {'k':>2} |" + "|".join(f"{'T = ' + str(t):^17}" for t in tasks))
        worst = {"new": [0.0, 0.0, 1.0], "old": [0.0, 0.0, 1.0]}
        for n, k in designs:
            cells = []
            for t in tasks:
                r = reps_big if t >= 200 else reps
                new = rates(rng, pool, t, n, k, margin, r, True)
                old = rates(rng, pool, t, n, k, margin, r, False)
                se = [math.sqrt(x * (1 - x) / r) for x in (0.05, 0.025, 0.05)]
                if (new[0] > 0.05 + 3 * se[0] or new[1] > 0.025 + 3 * se[1]
                        or new[2] < 0.95 - 3 * se[2]):
                    flagged.append((name, pool, t, n, k, margin, new))
                for key, v in (("new", new), ("old", old)):
                    w = worst[key]
                    w[0], w[2] = max(w[0], v[0]), min(w[2], v[2])
                    w[1] = max(w[1], v[1]) if math.isfinite(v[1]) else w[1]
                ni = f"{new[1]:.3f}" if math.isfinite(new[1]) else "  -  "
                cells.append(f"{new[0]:.3f} {ni} {new[2]:.3f}")
            print(f"{n:>3} {k:>2} |" + "|".join(f" {c} " for c in cells), flush=True)
        summary.append((name, worst))
    print("\nsummary per population over the grid: highest Type I, highest non-inferior at "
          "the boundary, lowest coverage")
    print(f"{'population':<20} {'floored (now)':>23} {'bare paired t (before)':>25}")
    for name, w in summary:
        print(f"{name:<20} {w['new'][0]:7.3f} {w['new'][1]:7.3f} {w['new'][2]:7.3f}  "
              f"{w['old'][0]:7.3f} {w['old'][1]:7.3f} {w['old'][2]:7.3f}")
    new = np.array([w["new"] for _, w in summary])
    old = np.array([w["old"] for _, w in summary])
    print(f"{'all':<20} {new[:, 0].max():7.3f} {new[:, 1].max():7.3f} {new[:, 2].min():7.3f}  "
          f"{old[:, 0].max():7.3f} {old[:, 1].max():7.3f} {old[:, 2].min():7.3f}")
    print(f"\ncells beyond a limit by more than 3 Monte Carlo SE ({len(flagged)}), run again "
          f"with {8 * reps} suites (at T = 200, {8 * reps_big}):")
    for name, pool, t, n, k, margin, first in flagged:
        again = rates(rng, pool, t, n, k, margin, 8 * (reps_big if t >= 200 else reps), True)
        print(f"  {name}, T = {t}, n = {n}, k = {k}: " + " ".join(f"{x:.3f}" for x in first)
              + " -> " + " ".join(f"{x:.3f}" for x in again), flush=True)
    # the spotlights
    beta = pops["Beta(0.5, 0.5)"]
    print("\nspotlights (floored / bare), non-inferior at the boundary:")
    for m in (0.05, 0.1):
        cells = [simulate_suites(beta, 10, 4, 4, drop=m, replicates=2 * reps, rng=7,
                                 floor=f) for f in (True, False)]
        print(f"  Beta(0.5, 0.5), T = 10, n = 4, k = 4, margin {m}: " + " / ".join(
            f"{np.mean((r.low > -m)[np.isclose(t_, -m)]):.3f}" for r, t_ in cells))
    for t in (10, 20, 50):
        cells = [simulate_suites([1.0], t, 2, 1, drop=0.01, replicates=2 * reps, rng=8,
                                 floor=f) for f in (True, False)]
        print(f"  p 1 -> 0.99, k = 1, n = 2, margin 0.01, T = {t}: " + " / ".join(
            f"{np.mean(r.low > -0.01):.3f}" for r, _ in cells))
    for t, n, k in ((2, 1, 1), (2, 4, 2)):
        cells = [simulate_suites([0.5], t, n, k, replicates=2 * reps, rng=9, floor=f)
                 for f in (True, False)]
        print(f"  two tasks at p = 0.5, n = {n}, k = {k}, no change, Type I: " + " / ".join(
            f"{np.mean((r.low > 0) | (r.high < 0)):.3f}" for r, _ in cells))


def part_two(args: argparse.Namespace, rng: np.random.Generator) -> None:
    none = task_population(20_000, change="none", rng=int(rng.integers(2**31)))
    reps = max(args.replicates // 2, 200)
    print(f"\nPart 2: the five methods on the default population, no change, {reps} suites; "
          "Type I error bare / floored (nominal 0.05)")
    print(f"{'T':>4} {'n':>3} {'k':>2} |" + "|".join(f"{m[:11]:^13}" for m in METHODS))
    for t, n, k in ((20, 4, 2), (50, 4, 2), (50, 8, 4)):
        seed = int(rng.integers(2**63))
        out = [simulate_intervals(none, t, n, k, replicates=reps, rng=seed, floor=f,
                                  p_values=False) for f in (False, True)]
        cells = [" / ".join(f"{np.mean((o[m].low > 0) | (o[m].high < 0)):.3f}" for o in out)
                 for m in METHODS]
        print(f"{t:>4} {n:>3} {k:>2} |" + "|".join(f" {c} " for c in cells), flush=True)


def logit_drop(p_old: np.ndarray, k: int, delta: float) -> np.ndarray:
    """Every task's logit lowered by the amount that lowers mean pass^k by exactly delta."""
    from scipy import optimize, special
    p_old = np.clip(p_old, 1e-9, 1 - 1e-9)  # a task at 0 or 1 can move too
    logit = special.logit(p_old)
    target = float(np.mean(p_old**k)) - delta

    def gap(shift: float) -> float:
        return float(np.mean(special.expit(logit - shift) ** k)) - target
    return np.asarray(special.expit(logit - optimize.brentq(gap, 0.0, 40.0, xtol=1e-13)))


def part_three(args: argparse.Namespace, rng: np.random.Generator) -> None:
    from scipy import stats
    pools = {"Beta(2, 0.7)": rng.beta(2, 0.7, 20_000), "Beta(4, 1)": rng.beta(4, 1, 20_000),
             "Uniform(0, 1)": rng.uniform(0, 1, 20_000),
             "Beta(0.5, 0.5)": rng.beta(0.5, 0.5, 20_000), "tau-bench rates": tau_rates()}
    checks = ((5, 60, 12, 0.10, 12), (2, 100, 4, 0.05, 4), (1, 50, 8, 0.08, 8),
              (4, 100, 8, 0.06, 8), (3, 200, 4, 0.04, 4), (8, 200, 12, 0.05, 12))
    if args.quick:
        checks = checks[:2]
    reps = 2 * args.replicates
    print(f"\nPart 3: plan_comparison from a pilot of {PILOT} tasks (m runs each) against "
          f"{reps} simulated suites; P(verdict worse)")
    print(f"{'population':<16} {'k':>2} {'T':>4} {'n':>3} {'D':>5} {'m':>3} | {'before':>6} "
          f"{'now':>6} {'sim':>6} {'gap now':>8}")
    gaps, gaps_old = [], []
    for name, pool in pools.items():
        for k, t, n, delta, m in checks:
            p_new = logit_drop(pool, k, delta)
            omega2 = float(np.var(p_new**k - pool**k))
            pilot = rng.binomial(m, pool[rng.integers(0, pool.size, PILOT)])
            plan = plan_comparison(k, delta=delta, successes=pilot, totals=m,
                                   between_variance=omega2, tasks=(t,), runs=(n,))
            # before: c/m put into the exact variance, the bare paired t's noncentral t
            within = float(np.mean(pass_hat_k_sampling_variance(pilot / m, n, k)))
            se = math.sqrt((omega2 + 2 * within) / t)
            before = float(stats.nct.cdf(-stats.t.ppf(0.975, t - 1), t - 1, -delta / se))
            pop = TaskPopulation(np.clip(pool, 1e-9, 1 - 1e-9), p_new, "drop")
            sim = float(np.mean(simulate_intervals(pop, t, n, k, methods=("t",),
                                                   replicates=reps, p_values=False,
                                                   rng=int(rng.integers(2**63)))["t"].high < 0))
            now = float(plan.power[0, 0])
            gaps.append(now - sim)
            gaps_old.append(before - sim)
            print(f"{name:<16} {k:>2} {t:>4} {n:>3} {delta:5.2f} {m:>3} | {before:6.3f} "
                  f"{now:6.3f} {sim:6.3f} {now - sim:+8.3f}", flush=True)
    g, go = np.array(gaps), np.array(gaps_old)
    print(f"largest |gap| now {np.abs(g).max():.3f} (most optimistic {g.max():+.3f}); before "
          f"{np.abs(go).max():.3f} (most optimistic {go.max():+.3f}); Monte Carlo SE of a "
          f"simulated power <= {0.5 / math.sqrt(reps):.3f}")


BEFORE = "fc02850"  # the last revision before issue 23's fix


def load_before(rev: str):  # type: ignore[no-untyped-def]
    """The comparison module of a git revision, imported as ``passk._before``."""
    import importlib.util
    import subprocess
    import sys
    import tempfile
    root = Path(__file__).resolve().parent.parent
    text = subprocess.run(["git", "-C", str(root), "show", f"{rev}:passk/compare.py"],
                          capture_output=True, text=True, check=True).stdout
    path = Path(tempfile.mkdtemp()) / "before_compare.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("passk._before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["passk._before"] = module
    spec.loader.exec_module(module)
    return module


def suites(rng: np.random.Generator, pool: np.ndarray, t: int, n_old: int, n_new: int, k: int,
           drop: float, spread: str, reps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-task pass^k estimates of both versions and each suite's true change (the change
    built as in :func:`passk.stats.simulation.simulate_suites`)."""
    from passk.metrics import estimate_pass_hat_k
    p_old = pool[rng.integers(0, pool.size, size=(reps, t))]
    theta = p_old**k
    mass = theta if drop >= 0 else 1.0 - theta
    moving = np.ones(mass.shape, dtype=bool)
    if spread == "concentrated":
        order = np.argsort(-mass, axis=1, kind="stable")[:, :max(1, math.ceil(t / 10))]
        moving = np.zeros(mass.shape, dtype=bool)
        np.put_along_axis(moving, order, True, axis=1)
    total = np.where(moving, mass, 0.0).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.clip(np.where(total > 0, 1.0 - abs(drop) * t / total, 1.0), 0.0, 1.0)
    mass_new = np.where(moving, mass * scale[:, None], mass)
    theta_new = mass_new if drop >= 0 else 1.0 - mass_new
    t_old = np.asarray(estimate_pass_hat_k(np.arange(n_old + 1), n_old, k), dtype=float)
    t_new = np.asarray(estimate_pass_hat_k(np.arange(n_new + 1), n_new, k), dtype=float)
    h_old = t_old[rng.binomial(n_old, p_old)]
    h_new = t_new[rng.binomial(n_new, np.clip(theta_new, 0, 1) ** (1 / k))]
    return h_old, h_new, (theta_new - theta).mean(axis=1)


def intervals(h_old: np.ndarray, h_new: np.ndarray, k: int, n_old: int, n_new: int,
              confidence: float, before: object | None) -> tuple[np.ndarray, np.ndarray]:
    """The default comparison's interval for every simulated suite, now or before."""
    from passk.stats.compare import _floor_weight, _floored, paired_difference_test
    res = paired_difference_test(h_new - h_old, confidence=confidence)
    if before is None:
        res = _floored(res, h_old, h_new, k, n_old, n_new, 1 - confidence, p_value=False)
    else:
        res = before._floored(res, h_old, h_new,  # type: ignore[attr-defined]
                              np.full(h_old.shape, _floor_weight(k, n_old)),
                              np.full(h_old.shape, _floor_weight(k, n_new)),
                              1 - confidence, p_value=False)
    return np.maximum(res.low, -1.0), np.minimum(res.high, 1.0)


def part_four(args: argparse.Namespace, rng: np.random.Generator) -> None:
    before = load_before(args.before)
    pools = {"tau-bench rates": tau_rates(), "bimodal Beta(.5,.5)": rng.beta(0.5, 0.5, 20_000),
             **{f"all p = {p}": np.array([p]) for p in (0.8, 0.9, 0.95)},
             "perfect (p = 1)": np.array([1.0])}
    designs = ((20, 2, 12, 2), (50, 1, 12, 1), (50, 4, 4, 4))
    changes = (("none", 0.0, "even"), ("drop 0.05", 0.05, "even"),
               ("drop 0.05 on 10%", 0.05, "concentrated"), ("gain 0.10", -0.10, "even"))
    if args.quick:
        designs, changes = designs[:2], changes[:2]
    reps = args.replicates_4 or args.replicates
    levels = (0.90, 0.95, 0.99)
    print(f"\nPart 4: {len(pools)} populations x {len(designs)} designs (T, n_old, n_new, k) x "
          f"{len(changes)} changes, {reps} suites a cell, the same suites at every level")
    worst: dict[tuple[str, float], list] = {}
    for name, pool in pools.items():
        for t, n_old, n_new, k in designs:
            for label, drop, spread in changes:
                h_old, h_new, truth = suites(rng, pool, t, n_old, n_new, k, drop, spread, reps)
                for level in levels:
                    for when, mod in (("now", None), ("before", before)):
                        low, high = intervals(h_old, h_new, k, n_old, n_new, level, mod)
                        miss = max(float(np.mean(low > truth + 1e-12)),
                                   float(np.mean(high < truth - 1e-12)))
                        cover = float(np.mean((low <= truth + 1e-12) & (truth - 1e-12 <= high)))
                        width = float(np.mean(high - low))
                        cell = f"{name}, T={t} n_old={n_old} n_new={n_new} k={k}, {label}"
                        w = worst.setdefault((when, level), [0.0, "", 1.0, "", [], 0])
                        if miss > w[0]:
                            w[0], w[1] = miss, cell
                        if cover < w[2]:
                            w[2], w[3] = cover, cell
                        w[4].append(width)
                        alpha = 1 - level
                        se = math.sqrt(alpha / 2 * (1 - alpha / 2) / reps)
                        w[5] += miss > alpha / 2 + 3 * se
        print(f"  done: {name}", flush=True)
    print(f"\n{'level':>6} {'when':>7} | {'highest per-side miss (s.e.)':>30} "
          f"{'lowest coverage (s.e.)':>24} {'mean width':>10} {'cells > a/2 + 3 s.e.':>21}")
    for level in levels:
        for when in ("before", "now"):
            m, mc, c, cc, widths, bad = worst[(when, level)]
            se_m = math.sqrt(m * (1 - m) / reps)
            se_c = math.sqrt(c * (1 - c) / reps)
            print(f"{level:6.2f} {when:>7} | {m:18.4f} ({se_m:.4f}) {'':>4} {c:14.4f} "
                  f"({se_c:.4f}) {float(np.mean(widths)):10.4f} {bad:>12}")
            print(f"{'':>16} highest miss in: {mc}\n{'':>16} lowest coverage in: {cc}")


def concentrated_drop(p_old: np.ndarray, k: int, delta: float, share: float = 0.1
                      ) -> np.ndarray | None:
    """The tenth (``share``) of the tasks with the highest pass^k lose the same fraction of it,
    the fraction that lowers mean pass^k by exactly delta (None where they cannot)."""
    theta = p_old**k
    top = np.argsort(-theta, kind="stable")[: max(1, round(share * p_old.size))]
    scale = 1.0 - delta * p_old.size / float(theta[top].sum())
    if scale < 0:
        return None
    theta_new = theta.copy()
    theta_new[top] *= scale
    return np.asarray(theta_new ** (1.0 / k))


def part_five(args: argparse.Namespace, rng: np.random.Generator) -> None:
    pools = {"bimodal Beta(.5,.5)": rng.beta(0.5, 0.5, 20_000),
             "Beta(4, 1)": rng.beta(4, 1, 20_000),
             "default mixture": task_population(20_000, rng=int(rng.integers(2**31))).p_old}
    designs = ((2, 200, 2, 0.05), (1, 100, 2, 0.06), (2, 100, 4, 0.05), (4, 100, 8, 0.06),
               (1, 50, 12, 0.08))
    if args.quick:
        designs = designs[:2]
    reps = args.replicates_5 or args.replicates
    # with a pilot: each population's own; without one, the plan assumes its default
    # population, so that is the one simulated (the designs at 0.5, 1 and 1.5 times the drop)
    default = pools["default mixture"]
    rows = [(name, pool, k, t, n, delta, True) for name, pool in pools.items()
            for k, t, n, delta in designs]
    rows += [("default mixture", default, k, t, n, round(delta * f, 3), False)
             for f in (0.5, 1.0, 1.5) for k, t, n, delta in designs]
    print(f"\nPart 5: the planner, {len(rows)} designs x 2 changes (every logit lowered "
          "alike: even; the tenth of the tasks with the highest pass^k each losing the same "
          f"share of it: 10%), {reps} simulated suites each; P(verdict worse) simulated, and "
          "predicted - simulated (pilot of 1000 tasks with n runs each, or none: the default "
          "population): given the true variance of the change across tasks / the default "
          "now (the change on as few as 10% of tasks) / the default before (correlation 0.7) "
          "/ power_even")
    print(f"{'population':<20} {'k':>2} {'T':>4} {'n':>3} {'D':>5} {'pilot':>5} {'change':>6} | "
          f"{'sim':>6} | {'given':>6} {'now':>6} {'before':>6} {'even':>6}")
    gaps: dict[tuple[str, str], list[float]] = {}
    for name, pool, k, t, n, delta, with_pilot in rows:
        pilot = rng.binomial(n, pool[rng.integers(0, pool.size, PILOT)])
        kw = {"successes": pilot, "totals": n} if with_pilot else {}
        plans = {"now": plan_comparison(k, delta=delta, tasks=(t,), runs=(n,), **kw),
                 "before": plan_comparison(k, delta=delta, tasks=(t,), runs=(n,),
                                           correlation=0.7, **kw)}
        for change in ("even", "10%"):
            p_new = (logit_drop(pool, k, delta) if change == "even"
                     else concentrated_drop(pool, k, delta))
            if p_new is None:
                print(f"{name:<20} {k:>2} {t:>4} {n:>3} {delta:5.3f} {with_pilot!s:>5} "
                      f"{change:>6} | the top tenth cannot lose {delta}")
                continue
            p_old = np.clip(pool, 1e-9, 1 - 1e-9)
            omega2 = float(np.var(p_new**k - p_old**k))
            pop = TaskPopulation(p_old, p_new, "drop")
            sim = float(np.mean(simulate_intervals(pop, t, n, k, methods=("t",),
                                                   replicates=reps, p_values=False,
                                                   rng=int(rng.integers(2**63)))["t"].high < 0))
            given = plan_comparison(k, delta=delta, tasks=(t,), runs=(n,),
                                    between_variance=omega2, **kw)
            row = {"given": float(given.power[0, 0]) - sim,
                   "now": float(plans["now"].power[0, 0]) - sim,
                   "before": float(plans["before"].power[0, 0]) - sim,
                   "even": float(plans["now"].power_even[0, 0]) - sim}
            for key, g in row.items():
                gaps.setdefault((change, key), []).append(g)
            print(f"{name:<20} {k:>2} {t:>4} {n:>3} {delta:5.3f} {with_pilot!s:>5} "
                  f"{change:>6} | {sim:6.3f} | " + " ".join(f"{g:+6.3f}" for g in row.values()),
                  flush=True)
    print(f"Monte Carlo SE of a simulated power <= {0.5 / math.sqrt(reps):.3f}")
    for (change, key), g in gaps.items():
        a = np.array(g)
        print(f"  {change:>4} change, {key:<6}: largest |predicted - simulated| "
              f"{np.abs(a).max():.3f}, most optimistic {a.max():+.3f}, most cautious "
              f"{a.min():+.3f}, within 0.10: {int(np.sum(np.abs(a) <= 0.10))} of {a.size}, "
              f"not above +0.10: {int(np.sum(a <= 0.10))} of {a.size}")


def part_six(args: argparse.Namespace, rng: np.random.Generator) -> None:
    """What the corrections cost: power (P(verdict worse)) against a drop, now and before."""
    before = load_before(args.before)
    pools = {"tau-bench rates": tau_rates(), "Beta(4, 1)": rng.beta(4, 1, 20_000),
             "bimodal Beta(.5,.5)": rng.beta(0.5, 0.5, 20_000)}
    designs = ((50, 4, 4, 2, 0.10), (100, 4, 4, 4, 0.06), (50, 8, 8, 1, 0.08),
               (20, 2, 12, 2, 0.15), (200, 2, 2, 2, 0.05))
    reps = args.replicates
    print(f"\nPart 6: power to show a drop (verdict worse) at 95 %, {reps} suites a cell, the "
          "same suites now and before")
    print(f"{'population':<20} {'T':>4} {'n_old':>5} {'n_new':>5} {'k':>2} {'drop':>5} | "
          f"{'before':>6} {'now':>6}")
    for name, pool in pools.items():
        for t, n_old, n_new, k, drop in designs:
            h_old, h_new, _ = suites(rng, pool, t, n_old, n_new, k, drop, "even", reps)
            pw = [float(np.mean(intervals(h_old, h_new, k, n_old, n_new, 0.95, mod)[1] < 0))
                  for mod in (before, None)]
            print(f"{name:<20} {t:>4} {n_old:>5} {n_new:>5} {k:>2} {drop:5.2f} | "
                  f"{pw[0]:6.3f} {pw[1]:6.3f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smaller grid")
    ap.add_argument("--replicates", type=int, default=None,
                    help="simulated suites a cell (default 2000, quick 300)")
    ap.add_argument("--seed", type=int, default=20241101)
    ap.add_argument("--replicates-4", type=int, default=None,
                    help="suites a cell in part 4 (default --replicates)")
    ap.add_argument("--replicates-5", type=int, default=None,
                    help="suites a design in part 5 (default --replicates)")
    ap.add_argument("--parts", default="123456", help="which parts to run (default 123456)")
    ap.add_argument("--before", default=BEFORE,
                    help=f"git revision whose passk/compare.py is 'before' (default {BEFORE})")
    args = ap.parse_args()
    args.replicates = args.replicates or (300 if args.quick else 2000)
    started = time.perf_counter()
    gens = [np.random.default_rng(s) for s in np.random.SeedSequence(args.seed).spawn(6)]
    for part, run, gen in zip("123456", (part_one, part_two, part_three, part_four, part_five,
                                         part_six), gens):
        if part in args.parts:
            run(args, gen)
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
