"""``passk rank``'s family-wise error and power, on random populations it was not built on.

Each population is drawn from one of six classes (equal versions, one better, a ladder
of small steps, heterogeneous tasks where versions trade tasks, unequal runs per task,
one run per task), with a random number of versions (2-6), tasks (8-200), runs and k.
Its tasks are fixed; each replicate draws every version's runs anew and ranks them
(:func:`passk.stats.rank.simulate_claims`). A table is in error when any claim
"i is better than j" is false for the true means (the mean over the suite's tasks of
p^k). The error table pools the replicates of each class and level (with its standard
error, and the worst single population); the power table gives the share of the truly
ordered pairs each procedure claims (Shaffer's, Holm's, Bonferroni over pairs).

Usage::

    python benchmarks/bench_rank.py [--populations 300] [--replicates 100] [--seed 2026]

``tests/test_rank.py`` runs the same study (slow) and a small version by default.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass

import numpy as np

from passk.stats.rank import PROCEDURES, simulate_claims

CLASSES = ("equal", "one better", "ladder", "heterogeneous", "unequal runs", "one run")
LEVELS = (0.90, 0.95, 0.99)


@dataclass(frozen=True)
class Population:
    kind: str
    rates: np.ndarray  # (N, T)
    runs: np.ndarray  # (N, T)
    k: int

    @property
    def truth(self) -> np.ndarray:
        """The true mean pass^k of each version over the suite's tasks."""
        return np.asarray((self.rates ** self.k).mean(axis=1))


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.asarray(np.log(p / (1 - p)))


def _expit(x: np.ndarray) -> np.ndarray:
    return np.asarray(1 / (1 + np.exp(-x)))


def population(kind: str, rng: np.random.Generator) -> Population:
    """One population of the class ``kind`` (see the module's docstring)."""
    versions = int(rng.integers(2, 7))
    tasks = int(rng.choice([8, 15, 30, 60, 120, 200]))
    a, b = rng.uniform(0.3, 3.0, 2)
    base = rng.beta(a, b, tasks)
    if rng.random() < 0.3:  # bimodal: a share of tasks nearly always fail or pass
        base = np.where(rng.random(tasks) < 0.5, rng.beta(0.3, 3, tasks), rng.beta(3, 0.3, tasks))
    logit = np.tile(_logit(base), (versions, 1))
    runs_hi = 1 if kind == "one run" else int(rng.integers(2, 9))
    k = 1 if runs_hi == 1 else int(rng.integers(1, min(3, runs_hi) + 1))
    if kind == "one better":
        logit[int(rng.integers(versions))] += rng.uniform(0.2, 1.5)
    elif kind == "ladder":
        logit += rng.uniform(0.05, 0.4) * np.arange(versions)[:, None]
    elif kind == "heterogeneous":  # each version better on some tasks, worse on others
        logit += rng.normal(0, rng.uniform(0.3, 1.5), (versions, tasks))
    elif kind in ("unequal runs", "one run") and rng.random() < 0.5:
        logit[int(rng.integers(versions))] += rng.uniform(0.2, 1.0)
    rates = _expit(logit)
    if kind == "equal":
        rates = np.tile(rates[0], (versions, 1))
    if kind == "unequal runs":
        runs = rng.integers(k, 11, (versions, tasks))
    else:
        runs = np.full((versions, tasks), runs_hi)
    return Population(kind, rates, runs, k)


def populations(count: int, rng: np.random.Generator) -> list[Population]:
    """``count`` populations, the classes in turn."""
    return [population(CLASSES[i % len(CLASSES)], rng) for i in range(count)]


def study(pops: list[Population], replicates: int, rng: np.random.Generator,
          levels: tuple[float, ...] = LEVELS) -> list[dict[str, object]]:
    """Per population and level: the error and power of each procedure."""
    rows = []
    for pop in pops:
        mu = pop.truth
        false_claim = mu[:, None] <= mu[None, :] + 1e-12  # claiming i > j is false here
        ordered = ~false_claim
        for level in levels:
            claims = simulate_claims(pop.rates, pop.runs, pop.k, confidence=level,
                                     replicates=replicates, procedure=PROCEDURES, rng=rng)
            row: dict[str, object] = {"kind": pop.kind, "level": level,
                                      "versions": pop.rates.shape[0],
                                      "tasks": pop.rates.shape[1], "k": pop.k}
            for name, cl in claims.items():
                row[f"error {name}"] = float((cl & false_claim).any(axis=(1, 2)).mean())
                true_pairs = int(ordered.sum())
                row[f"power {name}"] = (float((cl & ordered).sum(axis=(1, 2)).mean() / true_pairs)
                                        if true_pairs else math.nan)
            rows.append(row)
    return rows


def tables(rows: list[dict[str, object]], replicates: int) -> str:
    """The error table and the power table, by class and level."""
    out = ["family-wise error (any false claim), pooled over each class's populations:",
           (f"{'class':<14}{'level':>6}{'pops':>6}{'error':>9}{'s.e.':>8}{'worst pop':>11}"
           f"{'allowed':>9}")]
    for kind in (*CLASSES, "all"):
        for level in LEVELS:
            sel = [r for r in rows if (kind == "all" or r["kind"] == kind)
                   and r["level"] == level]
            if not sel:
                continue
            err = np.array([r["error shaffer"] for r in sel], dtype=float)
            se = math.sqrt(max(err.mean() * (1 - err.mean()), 1e-12) / (len(sel) * replicates))
            out.append(f"{kind:<14}{level:>6.2f}{len(sel):>6}{err.mean():>9.4f}{se:>8.4f}"
                       f"{err.max():>11.3f}{1 - level:>9.2f}")
    out += ["", "power: share of the truly ordered pairs claimed (populations with any):",
            f"{'class':<14}{'level':>6}{'pops':>6}" + "".join(f"{p:>12}" for p in PROCEDURES)]
    for kind in (*CLASSES, "all"):
        for level in LEVELS:
            sel = [r for r in rows if (kind == "all" or r["kind"] == kind)
                   and r["level"] == level and not math.isnan(float(r["power shaffer"]))]
            if not sel:
                continue
            means = [np.mean([float(r[f"power {p}"]) for r in sel]) for p in PROCEDURES]
            out.append(f"{kind:<14}{level:>6.2f}{len(sel):>6}"
                       + "".join(f"{m:>12.4f}" for m in means))
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--populations", type=int, default=300)
    parser.add_argument("--replicates", type=int, default=100)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    pops = populations(args.populations, rng)
    rows = study(pops, args.replicates, rng)
    print(tables(rows, args.replicates))
    print(f"\n{len(pops)} populations x {len(LEVELS)} levels x {args.replicates} replicates "
          f"in {time.perf_counter() - start:.0f} s (seed {args.seed})")


if __name__ == "__main__":
    main()
