"""Is the comparison planner without a pilot ever optimistic? Ten designs it was not built on.

Each design draws its tasks from a population the plan knows nothing about, lowers mean
pass^k by D (every logit alike, "even", or the tenth of the tasks with the highest pass^k
carrying it all, "top tenth"), simulates ``--replicates`` suites of the comparison as it is
(``simulate_intervals``, method 't', which computes ``compare_pass_hat_k``'s interval: the
union of the floored t, the skew-corrected t and the betting interval at alpha/2,
intersected with the difference of the two versions' suite intervals at alpha/2; the
verdict "worse" when it lies below 0) and prints the simulated power with its Monte Carlo
standard error beside three plans, all under ``plan_comparison``'s default assumption of
how the change spreads (a tenth of the tasks, ``changed_share=0.1``) whatever the design's:

- now: no pilot, nothing stated (``assume='worst-case'``: the largest trial noise and floor
  over every population; the difference of the suite intervals is then left out);
- t only: the same, planning for the paired t alone (``_power``), as before issue 29's
  proof joined the comparison;
- default: ``assume='default-population'``, the default population's rates taken as if
  they were the user's (the default before issue 29).

The promise here is one-sided: never above simulation by more than 0.02. With
``--replicates 500`` (issue 38): now 0 of 10 above by more than 0.02 (most optimistic
-0.011, most cautious -0.155); t only 8 of 10 (up to +0.281); default 5 of 10 (up to
+0.333). The two-sided promise, [-0.10, +0.02] under the design's own assumption, with a
stated population, a pass rate or a pilot, is ``bench_plan_honest.py``'s. With ``--pilot``,
the spread a pilot's sampling leaves on the planned power
(:func:`passk.stats.power.pilot_power_spread`) for the first designs.

    nice -n 10 python benchmarks/bench_plan.py               # 2,000 suites a design
    nice -n 10 python benchmarks/bench_plan.py --replicates 400 --pilot
"""

from __future__ import annotations

import argparse
import math
from unittest import mock

import numpy as np
from scipy import optimize, special

from passk.stats import power as power_module
from passk.stats.power import pilot_power_spread, plan_comparison
from passk.stats.simulation import TaskPopulation, simulate_intervals


def even_drop(p: np.ndarray, k: int, delta: float) -> np.ndarray | None:
    p = np.clip(p, 1e-9, 1 - 1e-9)
    logit = special.logit(p)
    target = float(np.mean(p**k)) - delta
    if target <= 0:
        return None
    shift = optimize.brentq(lambda x: float(np.mean(special.expit(logit - x) ** k)) - target,
                            0.0, 60.0, xtol=1e-13)
    return np.asarray(special.expit(logit - shift))


def top_tenth_drop(p: np.ndarray, k: int, delta: float) -> np.ndarray | None:
    theta = np.clip(p, 1e-9, 1 - 1e-9) ** k
    top = np.argsort(-theta, kind="stable")[: max(1, round(0.1 * p.size))]
    scale = 1.0 - delta * p.size / float(theta[top].sum())
    if scale < 0:
        return None
    theta = theta.copy()
    theta[top] *= scale
    return np.asarray(theta ** (1.0 / k))


def populations(rng: np.random.Generator, size: int = 20_000) -> dict[str, np.ndarray]:
    return {
        "Beta(2, 2)": rng.beta(2, 2, size),
        "Beta(5, 1)": rng.beta(5, 1, size),
        "Beta(0.3, 0.3)": rng.beta(0.3, 0.3, size),
        "near-saturated Beta(30, 1)": rng.beta(30, 1, size),
        "two points 0.2 / 0.98": rng.choice([0.2, 0.98], size),
        "Uniform(0.3, 1)": rng.uniform(0.3, 1.0, size),
        "all p = 0.9": np.full(size, 0.9),
        "Beta(1, 3)": rng.beta(1, 3, size),
    }


#: (population, k, tasks, runs, drop, change): none of them in the tests.
DESIGNS = (
    ("Beta(2, 2)", 1, 80, 4, 0.06, "even"),
    ("Beta(5, 1)", 2, 150, 4, 0.05, "even"),
    ("Beta(0.3, 0.3)", 1, 60, 8, 0.08, "top tenth"),
    ("near-saturated Beta(30, 1)", 3, 100, 6, 0.04, "even"),
    ("two points 0.2 / 0.98", 2, 120, 4, 0.06, "top tenth"),
    ("Uniform(0.3, 1)", 2, 200, 8, 0.04, "even"),
    ("all p = 0.9", 4, 60, 12, 0.08, "even"),
    ("Beta(1, 3)", 1, 300, 2, 0.05, "even"),
    ("Beta(5, 1)", 4, 250, 8, 0.06, "top tenth"),
    ("Beta(2, 2)", 2, 400, 3, 0.03, "top tenth"),
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicates", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=2029)
    ap.add_argument("--pilot", action="store_true", help="also the pilot's spread")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    pools = populations(rng)
    print(f"{'population':<27} {'k':>2} {'T':>4} {'n':>3} {'D':>5} {'change':>9} | "
          f"{'sim':>6} {'s.e.':>5} | {'now':>6} {'now-sim':>8} | {'t only':>6} {'t-sim':>8} | "
          f"{'default':>7} {'def-sim':>8}")
    gaps_now, gaps_before, gaps_default = [], [], []
    for name, k, t, n, delta, change in DESIGNS:
        p_old = np.clip(pools[name], 1e-9, 1 - 1e-9)
        p_new = (even_drop if change == "even" else top_tenth_drop)(p_old, k, delta)
        if p_new is None:
            print(f"{name}: cannot lose {delta}")
            continue
        sim_t = simulate_intervals(TaskPopulation(p_old, p_new, "drop"), t, n, k,
                                   methods=("t",), replicates=args.replicates,
                                   p_values=False, rng=int(rng.integers(2**63)))["t"]
        sim = float(np.mean(sim_t.high < 0))
        se = math.sqrt(max(sim * (1 - sim), 1e-12) / args.replicates)
        now = float(plan_comparison(k, delta=delta, tasks=(t,), runs=(n,)).power[0, 0])
        with mock.patch.object(power_module, "_proved_power", power_module._power):
            before = float(plan_comparison(k, delta=delta, tasks=(t,), runs=(n,)
                                           ).power[0, 0])
        default = float(plan_comparison(k, delta=delta, tasks=(t,), runs=(n,),
                                        assume="default-population").power[0, 0])
        gaps_default.append(default - sim)
        gaps_now.append(now - sim)
        gaps_before.append(before - sim)
        print(f"{name:<27} {k:>2} {t:>4} {n:>3} {delta:5.3f} {change:>9} | {sim:6.3f} "
              f"{se:5.3f} | {now:6.3f} {now - sim:+8.3f} | {before:6.3f} {before - sim:+8.3f} | "
              f"{default:7.3f} {default - sim:+8.3f}",
              flush=True)
    a, b = np.array(gaps_now), np.array(gaps_before)
    print(f"now:    most optimistic {a.max():+.3f}, above simulation by more than 0.02 on "
          f"{int(np.sum(a > 0.02))} of {a.size}; most cautious {a.min():+.3f}")
    print(f"t only: most optimistic {b.max():+.3f}, above simulation by more than 0.02 on "
          f"{int(np.sum(b > 0.02))} of {b.size}")
    c = np.array(gaps_default)
    print(f"default population: most optimistic {c.max():+.3f}, above simulation by more "
          f"than 0.02 on {int(np.sum(c > 0.02))} of {c.size}")
    if args.pilot:
        print("\nthe spread a pilot leaves on the planned power (parametric bootstrap of a "
              "pilot of 60 tasks, 20 pilots): planned with the pilot drawn, 5 %, 50 %, 95 %")
        for name, k, t, n, delta, _ in DESIGNS[:3]:
            p_old = np.clip(pools[name], 1e-9, 1 - 1e-9)
            pilot = rng.binomial(n, p_old[rng.integers(0, p_old.size, 60)])
            spread = pilot_power_spread(k, delta, pilot, n, tasks=t, runs=n, rng=1)
            print(f"{name:<27} k={k} T={t} n={n} D={delta}: planned "
                  f"{spread.planned:.3f}, bootstrap 5-95 % [{spread.low:.3f}, "
                  f"{spread.high:.3f}], median {spread.median:.3f}")


if __name__ == "__main__":
    main()
