"""Which interval should ``passk diff`` use? A Monte Carlo study, and the plan against it.

For suites of T tasks with n runs per task and version, and k = 1..8, it
simulates many suites from task populations like real ones (see
``passk.compare.task_population``) under three changes:

- none: the two versions are exchangeable (the change in mean pass^k is 0);
- trade-off: the new version fixes a fifth of the tasks and slips on the rest,
  with the change in mean pass^k exactly 0 (a null that is not symmetric);
- drop: every task slips a little, the change in mean pass^k being -D with D
  twice the standard error of the paired mean (about 50 % power).

and reports, per method, the Type I error under both nulls (nominal 0.05), the
coverage of the population's true change under the drop, the power to show the
drop (verdict "worse"), and the unpaired Welch interval for contrast. Then it
checks ``plan_comparison``'s predicted power against simulation.

    python benchmarks/bench_compare.py           # the full grid, a few minutes on 2 cores
    python benchmarks/bench_compare.py --quick   # a smaller grid, under a minute
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from passk.compare import (
    METHODS,
    pass_hat_k_sampling_variance,
    plan_comparison,
    simulate_comparison,
    simulate_intervals,
    task_population,
)

ALL = (*METHODS, "welch")


def grid(quick: bool) -> list[tuple[int, int, int]]:
    tasks = (20, 50) if quick else (20, 50, 200)
    runs = (4, 8) if quick else (2, 4, 8, 12)
    out = []
    for t in tasks:
        for n in runs:
            ks = (1, 2, 4) if quick else range(1, min(8, n) + 1)
            out += [(t, n, k) for k in ks if k <= n]
    return out


def null_sd(pop, n: int, k: int) -> float:
    """Standard deviation of one task's paired difference under ``pop`` (exact given rates)."""
    omega2 = float(np.var(pop.p_new**k - pop.p_old**k))
    within = (np.mean(pass_hat_k_sampling_variance(pop.p_old, n, k))
              + np.mean(pass_hat_k_sampling_variance(pop.p_new, n, k)))
    return math.sqrt(omega2 + within)


def span(a: np.ndarray) -> str:
    return f"{a.mean():.3f} [{a.min():.3f}, {a.max():.3f}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smaller grid and fewer replicates")
    ap.add_argument("--replicates", type=int, default=None,
                    help="simulated suites per setting and change (default 2000, quick 500)")
    ap.add_argument("--seed", type=int, default=20241101)
    args = ap.parse_args()
    reps = args.replicates or (500 if args.quick else 2000)
    size = 20_000 if args.quick else 100_000
    seeds = np.random.SeedSequence(args.seed)
    pop_seed, sim_seed = seeds.spawn(2)
    started = time.perf_counter()
    none = task_population(size, change="none", rng=pop_seed)
    settings = grid(args.quick)
    trade = {k: task_population(size, change="trade-off", k=k, rng=pop_seed)
             for k in sorted({k for _, _, k in settings})}
    rng = np.random.default_rng(sim_seed)
    mc = math.sqrt(0.05 * 0.95 / reps)
    print(f"{reps} suites per setting and change; Monte Carlo SE of a 5 % rate {mc:.4f}; "
          f"populations of {size} tasks; seed {args.seed}")
    print("I0 = Type I error (no change), It = Type I error (trade-off null), cov = coverage "
          "of the true change (drop), pow = P(verdict worse) under the drop")
    head = f"{'T':>4} {'n':>3} {'k':>2} {'D':>6} |" + "|".join(
        f"{m[:11]:^23}" for m in METHODS)
    sub = f"{'':>17} |" + "|".join(f"{'I0':>5} {'It':>5} {'cov':>5} {'pow':>5}"
                                   for _ in METHODS)
    print(head)
    print(sub)
    rows = []
    for t, n, k in settings:
        sd = null_sd(none, n, k)
        mean_hat = float(np.mean(none.p_old**k))
        delta = min(2.0 * sd / math.sqrt(t), 0.5 * mean_hat)
        drop = task_population(size, change="drop", k=k, delta=delta, rng=pop_seed)
        i0 = simulate_intervals(none, t, n, k, methods=ALL, replicates=reps, rng=rng)
        it = simulate_intervals(trade[k], t, n, k, methods=ALL, replicates=reps, rng=rng)
        i_d = simulate_intervals(drop, t, n, k, methods=ALL, replicates=reps, rng=rng)
        stats_ = {}
        for m in ALL:
            a, b, c = i0[m], it[m], i_d[m]
            stats_[m] = {"I0": np.mean((a.low > 0) | (a.high < 0)),
                         "It": np.mean((b.low > 0) | (b.high < 0)),
                         "cov": np.mean((c.low <= -delta) & (-delta <= c.high)),
                         "pow": np.mean(c.high < 0),
                         "width": np.mean(c.high - c.low), "alarm": np.mean(a.high < 0)}
        rows.append((t, n, k, delta, stats_))
        cells = "|".join(f"{stats_[m]['I0']:5.3f} {stats_[m]['It']:5.3f} "
                         f"{stats_[m]['cov']:5.3f} {stats_[m]['pow']:5.3f}" for m in METHODS)
        print(f"{t:>4} {n:>3} {k:>2} {delta:6.3f} |{cells}", flush=True)

    print("\nsummary over the (n, k) settings of each T: mean [min, max]")
    print(f"{'T':>4} {'method':<12} {'Type I (none)':>20} {'Type I (trade-off)':>20} "
          f"{'coverage (drop)':>20} {'power':>6} {'width':>6} {'alarm':>6}")
    for t in sorted({r[0] for r in rows}):
        sel = [r for r in rows if r[0] == t]
        for m in ALL:
            def col(key: str, m: str = m, sel: list = sel) -> np.ndarray:
                return np.array([r[4][m][key] for r in sel])
            print(f"{t:>4} {m:<12} {span(col('I0')):>20} {span(col('It')):>20} "
                  f"{span(col('cov')):>20} {col('pow').mean():6.3f} {col('width').mean():6.3f} "
                  f"{col('alarm').mean():6.3f}")
    print("power: P(verdict worse) under the drop, D twice the paired mean's standard error; "
          "alarm: P(verdict worse) when nothing changed (the gate's false alarm, nominal "
          "0.025). A method whose Type I error exceeds 0.05 buys its power with false alarms.")

    print("\nplan_comparison's predicted power against simulation (paired t; drop of D):")
    print(f"{'T':>4} {'n':>3} {'k':>2} {'D':>6} {'D/mean':>7} {'predicted':>9} {'simulated':>9} "
          f"{'gap':>7}")
    checks = ([(20, 4, 2, 0.10), (50, 4, 2, 0.05), (50, 8, 4, 0.08), (100, 4, 4, 0.05)]
              if args.quick else
              [(20, 4, 2, 0.10), (20, 8, 4, 0.10), (20, 8, 4, 0.15), (50, 4, 2, 0.05),
               (50, 8, 4, 0.08),
               (50, 12, 8, 0.08), (100, 4, 4, 0.05), (100, 8, 1, 0.03), (200, 2, 1, 0.03),
               (200, 8, 8, 0.04), (500, 4, 4, 0.02)])
    gaps = []
    for t, n, k, delta in checks:
        omega2 = float(np.var(none.p_new**k - none.p_old**k))
        plan = plan_comparison(k, delta=delta, between_variance=omega2, tasks=(t,), runs=(n,))
        drop = task_population(size, change="drop", k=k, delta=delta, rng=pop_seed)
        sim = simulate_comparison(drop, t, n, k, methods=("t",), replicates=4 * reps,
                                  rng=rng)["t"]["worse"]
        predicted = float(plan.power[0, 0])
        gaps.append(abs(predicted - sim))
        relative = delta / float(np.mean(none.p_old**k))
        print(f"{t:>4} {n:>3} {k:>2} {delta:6.3f} {relative:7.2f} {predicted:9.3f} {sim:9.3f} "
              f"{predicted - sim:+7.3f}")
    print(f"largest gap {max(gaps):.3f} (goal 0.05; Monte Carlo SE of the simulated power "
          f"<= {0.5 / math.sqrt(4 * reps):.3f}). The plan is given the variance across tasks "
          "of the change when nothing changes (what a pilot can tell) and the default "
          "population's rates; a drop that is a large share of mean pass^k (D/mean) makes the "
          "change itself vary more across tasks, and the plan is then optimistic.")
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
