"""The gate's operating characteristic on the issue's suite, per mode and level (issue 29).

30 tasks, k = 5, bar 0.7, cap 0.2: 26 tasks at p = 0.995 and 4 at p = 0 (true mean pass^5
0.845, no task truly flaky). P(pass) exactly (``operating_characteristic``), at 12 and 24
runs a task, per mode, at 90/95/99 %; the false pass at the bar on three suites there (the
good suite lowered alike, identical tasks, a bimodal suite lowered alike); and the exact
figure beside a Monte Carlo one with its standard error.

    nice -n 10 python benchmarks/bench_operating.py
"""

from __future__ import annotations

import numpy as np

from passk.criteria import GATE_MODES, GateCriteria
from passk.stats.operating import lowered_rates, operating_characteristic, warning_miss_rate

GOOD = np.array([0.995] * 26 + [0.0] * 4)


def main() -> None:
    bar = 0.7
    bad = {"good suite lowered to the bar": lowered_rates(GOOD, 5, bar),
           "identical tasks at the bar": np.full(30, bar ** 0.2),
           "bimodal lowered to the bar": lowered_rates(np.r_[np.full(20, 0.999),
                                                             np.full(10, 0.3)], 5, bar)}
    print(f"{'level':>5} {'mode':<12} {'n':>3} | {'P(pass good)':>12} | "
          + " | ".join(f"{name[:26]:>26}" for name in bad))
    for conf in (0.90, 0.95, 0.99):
        for mode in GATE_MODES:
            crit = GateCriteria(mode=mode, confidence=conf)
            for n in (12, 24):
                good = operating_characteristic(crit, n, GOOD, rng=0)
                worst = [operating_characteristic(crit, n, q, rng=0).high for q in bad.values()]
                print(f"{conf:5.2f} {mode:<12} {n:>3} | {good.probability:12.4f} | "
                      + " | ".join(f"{w:26.4f}" for w in worst), flush=True)
    print("\nthe warning's miss rate (worst case over truly flaky tasks), by runs: "
          + ", ".join(f"{n}: {warning_miss_rate(n, 0.2):.3f}" for n in (12, 24, 48, 96)))
    for mode in ("chapter", "proved-warn"):
        crit = GateCriteria(mode=mode)
        exact = operating_characteristic(crit, 12, GOOD, rng=0)
        mc = operating_characteristic(crit, 12, GOOD, method="monte carlo", replicates=4000,
                                      rng=1)
        print(f"{mode}: exact {exact.probability:.4f}, Monte Carlo {mc.probability:.4f} "
              f"(s.e. {mc.standard_error:.4f}, 4000 reruns)")


if __name__ == "__main__":
    main()
