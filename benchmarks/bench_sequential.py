"""Runs saved and power lost by stopping at planned looks (``passk.stats.sequential``).

Suites of T tasks drawn from four populations; runs are added in stages up to the looks
(cumulative runs per task); at each look :func:`sequential_decision` says stop-pass,
stop-fail or continue (alpha spent evenly over the looks). Against the fixed-n rule (the
same proved interval at the full confidence after the last look's runs), per population:
the share of runs saved, and the pass rate (the power where the suite is good, the false
pass rate where it is not), each with its Monte Carlo standard error.

    nice -n 10 python benchmarks/bench_sequential.py [--suites 100] [--tasks 30] [--k 2]
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from passk.stats.sequential import sequential_decision
from passk.stats.suite_interval import mean_pass_hat_k_ci

_ROOT = Path(__file__).resolve().parent.parent
LOOKS = (4, 8, 16)


def populations(rng: np.random.Generator, size: int) -> dict[str, np.ndarray]:
    return {"near-perfect (p = 0.995)": np.full(size, 0.995),
            "reliable Beta(20, 1)": rng.beta(20, 1, size),
            "bimodal Beta(0.5, 0.5)": rng.beta(0.5, 0.5, size),
            "near the bar": np.full(size, 0.72)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", type=int, default=100)
    parser.add_argument("--tasks", type=int, default=30)
    parser.add_argument("--k", type=int, default=1)
    parser.add_argument("--bar", type=float, default=0.7)
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=29)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"T = {args.tasks}, k = {args.k}, bar {args.bar}, looks at {LOOKS} runs per task, "
          f"{args.confidence:.0%}; {args.suites} suites per population")
    print(f"{'population':26} {'true mean':>9} {'runs saved':>12} {'pass, looks':>14} "
          f"{'pass, fixed n':>14}")
    for name, pool in populations(rng, 20_000).items():
        saved, seq_pass, fixed_pass, truth = [], [], [], []
        for _ in range(args.suites):
            p = pool[rng.integers(0, pool.size, args.tasks)]
            truth.append(float(np.mean(p**args.k)))
            runs = rng.random((args.tasks, LOOKS[-1])) < p[:, None]
            used, passed = LOOKS[-1], False
            for j, n in enumerate(LOOKS):
                d = sequential_decision(runs[:, :n].sum(axis=1), n, args.k, args.bar,
                                        look=j + 1, looks=len(LOOKS),
                                        confidence=args.confidence)
                if d.decision != "continue":
                    used, passed = n, d.decision == "stop-pass"
                    break
            saved.append(1 - used / LOOKS[-1])
            seq_pass.append(passed)
            full = mean_pass_hat_k_ci(runs.sum(axis=1), LOOKS[-1], args.k,
                                      confidence=args.confidence)
            fixed_pass.append(float(full.ci.low) >= args.bar)
        def se(x: list[float] | list[bool], r: int = args.suites) -> float:
            return float(np.std(np.asarray(x, dtype=float), ddof=1)) / math.sqrt(r)
        print(f"{name:26} {np.mean(truth):9.3f} {np.mean(saved):6.1%} ({se(saved):.3f}) "
              f"{np.mean(seq_pass):7.3f} ({se(seq_pass):.3f}) "
              f"{np.mean(fixed_pass):7.3f} ({se(fixed_pass):.3f})", flush=True)


if __name__ == "__main__":
    main()
