"""The controlled comparison's error rate on populations it was not designed for (issue 39).

Prints two tables:

1. The exact size of the paired test (exact McNemar, :func:`passk.stats.paired.paired_p_values`)
   at alpha 0.10, 0.05 and 0.01: the largest rejection probability over every number of
   discordant pairs d <= N, which bounds the size for every population of n <= N pairs
   (conditional on d, the fixed count is Binomial(d, 1/2) under the null), by enumeration.
2. The family-wise error of the whole procedure as ``passk attribute --run`` applies it
   (:func:`passk.run.attribute.attribute_variants`): the baseline's runs, the tasks it finds
   flaky (:func:`passk.stability.classify`), each flaky task x variant tested on the paired
   seeds, Holm across them (:func:`passk.stats.paired.holm`), by simulation with its standard
   error, on populations chosen after the method (several flaky tasks, variants with no effect,
   seed-level difficulty, unequal runs, one variant with an effect on one task only, rates near
   0 and 1, variants that copy each other). A false rejection is a rejected task x variant whose
   variant does not change that task's pass rate.

A variant's run on seed i repeats the baseline's outcome with probability ``rho`` (what a
seeded agent does when the variable does not touch the run), else draws anew at the variant's
rate (the seed's own rate where seeds differ in difficulty).

Run: ``python benchmarks/bench_attribute.py [--reps 20000] [--seed 0]`` (about 10 s of CPU).
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import binom

from passk.stability import classify
from passk.stats.paired import holm, paired_p_values

ALPHAS = (0.10, 0.05, 0.01)


def exact_size(n_max: int, alpha: float) -> tuple[float, int]:
    """max over d <= n_max of P(reject | d discordant pairs), and the d attaining it."""
    best, at = 0.0, 0
    for d in range(1, n_max + 1):
        f = np.arange(d + 1)
        reject = paired_p_values(f, d - f) <= alpha
        size = float(binom.pmf(f, d, 0.5)[reject].sum())
        if size > best:
            best, at = size, d
    return best, at


@dataclass
class Population:
    """Tasks (rate, runs) and variants; ``effects[(task, variant)]`` is the variant's rate."""

    name: str
    rates: list[float]
    runs: list[int]
    variants: int
    rho: float = 0.5
    effects: dict[tuple[int, int], float] = field(default_factory=dict)
    spread: float = 0.0  # seed difficulty: per-seed rate ~ Beta with this much spread (0: none)
    copies: bool = False  # every variant draws the same new outcome (tests strongly dependent)


POPULATIONS = [
    Population("6 flaky tasks, 3 null variants", [0.2, 0.35, 0.5, 0.65, 0.8, 0.9],
               [30] * 6, 3),
    Population("unequal runs (6 to 150)", [0.5, 0.7, 0.3, 0.85, 0.6, 0.4],
               [6, 10, 20, 40, 80, 150], 3),
    Population("seed difficulty (Beta), redraws", [0.3, 0.5, 0.7, 0.5], [30, 30, 30, 60], 3,
               rho=0.0, spread=0.6),
    Population("one effect: variant 1 on task 2 only", [0.4, 0.6, 0.5, 0.7, 0.8], [30] * 5, 3,
               effects={(2, 0): 0.98}),
    Population("rates near 0 and 1 (selection at the edge)", [0.95, 0.97, 0.05, 0.9],
               [30, 60, 30, 100], 2, rho=0.0),
    Population("variants copy each other, 8 tasks", [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.5, 0.5],
               [20] * 8, 4, rho=0.3, copies=True),
    Population("many variants (8) on 2 tasks", [0.5, 0.75], [40, 40], 8, rho=0.2),
    Population("one task at 0.97, one variant, 30 runs", [0.97], [30], 1, rho=0.0),
    Population("one task at 0.9, one variant, 100 runs", [0.9], [100], 1, rho=0.0),
]


def _seed_rates(rng: np.random.Generator, p: float, n: int, reps: int, spread: float
                ) -> np.ndarray:
    if spread <= 0:
        return np.full((reps, n), p)
    s = (1 - spread) / spread  # Beta(p s, (1 - p) s): mean p, larger spread = more spread out
    return rng.beta(p * s, (1 - p) * s, size=(reps, n))


def family_wise_error(pop: Population, reps: int, rng: np.random.Generator
                      ) -> tuple[dict[float, float], dict[float, float], float, float]:
    """(alpha -> false-rejection rate, alpha -> power on the true effects, mean tests,
    the false-rejection rate at 0.05 among the suites where some task was tested)."""
    pvals: list[np.ndarray] = []  # per task: (reps, variants)
    selected: list[np.ndarray] = []  # per task: (reps,)
    for t, (p, n) in enumerate(zip(pop.rates, pop.runs)):
        seed_p = _seed_rates(rng, p, n, reps, pop.spread)
        base = rng.random((reps, n)) < seed_p
        flaky = classify(base.sum(axis=1), np.full(reps, n)) == "flaky"
        shared_new = rng.random((reps, n))
        cols = []
        for j in range(pop.variants):
            after_p = pop.effects.get((t, j))
            rate = seed_p if after_p is None else np.full((reps, n), after_p)
            new = (shared_new if pop.copies else rng.random((reps, n))) < rate
            keep = (rng.random((reps, n)) < pop.rho) & (after_p is None)
            after = np.where(keep, base, new)
            fixed = np.sum(~base & after, axis=1)
            broken = np.sum(base & ~after, axis=1)
            cols.append(paired_p_values(fixed, broken))
        pvals.append(np.stack(cols, axis=1))
        selected.append(flaky)
    truth = np.array([[(t, j) in pop.effects for j in range(pop.variants)]
                      for t in range(len(pop.rates))])
    false = dict.fromkeys(ALPHAS, 0)
    power = dict.fromkeys(ALPHAS, 0)
    n_true = 0
    tests = 0
    tested = 0
    for r in range(reps):
        tasks = [t for t in range(len(pop.rates)) if selected[t][r]]
        if not tasks:
            continue
        tested += 1
        p = np.concatenate([pvals[t][r] for t in tasks])
        real = np.concatenate([truth[t] for t in tasks])
        tests += p.size
        adj = holm(p)
        n_true += int(real.sum())
        for a in ALPHAS:
            rejected = adj <= a
            false[a] += bool(np.any(rejected & ~real))
            power[a] += int(np.sum(rejected & real))
    return ({a: false[a] / reps for a in ALPHAS},
            {a: (power[a] / n_true if n_true else math.nan) for a in ALPHAS}, tests / reps,
            false[0.05] / tested if tested else math.nan)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-max", type=int, default=200)
    args = ap.parse_args()
    t0 = time.process_time()

    print(f"exact size of the paired test, every population of n <= {args.n_max} pairs "
          "(max over the discordant count d)")
    print("| alpha | exact size | at d |")
    print("|---|---|---|")
    for a in ALPHAS:
        size, d = exact_size(args.n_max, a)
        print(f"| {a:.2f} | {size:.5f} | {d} |")

    rng = np.random.default_rng(args.seed)
    print(f"\nfamily-wise error of passk attribute --run (baseline -> flaky tasks -> paired "
          f"tests -> Holm), {args.reps} simulated suites each; s.e. in brackets")
    head = " | ".join(f"FWER at {a:.2f}" for a in ALPHAS)
    print(f"| population | tests (mean) | {head} | at 0.05, given a test | power of the true "
          "effect at 0.05 |")
    print("|---|---|" + "---|" * len(ALPHAS) + "---|---|")
    worst = dict.fromkeys(ALPHAS, 0.0)
    for pop in POPULATIONS:
        fwer, power, tests, given = family_wise_error(pop, args.reps, rng)
        cells = []
        for a in ALPHAS:
            se = math.sqrt(fwer[a] * (1 - fwer[a]) / args.reps)
            flag = " **over**" if fwer[a] > a + 2 * se else ""
            shown = f"({se:.4f})" if fwer[a] else f"(0 of {args.reps})"
            cells.append(f"{fwer[a]:.4f} {shown}{flag}")
            worst[a] = max(worst[a], fwer[a])
        pw = "-" if math.isnan(power[0.05]) else f"{power[0.05]:.3f}"
        print(f"| {pop.name} | {tests:.1f} | " + " | ".join(cells) + f" | {given:.4f} | {pw} |")
    print("\nworst population: " + ", ".join(f"{worst[a]:.4f} at {a:.2f}" for a in ALPHAS))
    print(f"CPU time: {time.process_time() - t0:.1f} s")


if __name__ == "__main__":
    main()
