"""The comparison against the difference of the two suite intervals (issue 38, item 6).

For each cell (tasks drawn per suite from a population, no change, n runs per task and
version, k, T, a level) the script draws ``--reps`` suites and prints the mean width,
as a ratio to the difference of the two versions' proved suite intervals at the full
alpha (each suite at 1 - alpha/2, :func:`passk.mean_pass_hat_k_ci`, per side alpha/4 +
alpha/4), of

- before: the union of the paired t, the skew-corrected t, the floor and the betting
  interval at alpha (``compare_pass_hat_k`` before issue 38);
- after: that union at alpha/2 intersected with the difference at alpha/2 (now);

with the largest ratio over the suites, and the share of suites where "after" is wider
than the difference at alpha. Then each side's error after, by Monte Carlo with its
standard error (no change: the wrong claim "better" or "worse"; one task 0 -> 1 while
the rest slip: "better").

    nice -n 10 python benchmarks/bench_compare_width.py            # 400 suites a cell
    nice -n 10 python benchmarks/bench_compare_width.py --reps 100 # quick
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from bench_compare_errors import tau_rates

from passk.metrics import estimate_pass_hat_k
from passk.stats.compare import _floored, _union, paired_difference_test
from passk.stats.suite_interval import _hoeffding_suites

CELLS = (  # (population, T, n, k)
    ("saturated Beta(20, 0.3)", 50, 4, 1),
    ("saturated Beta(20, 0.3)", 50, 4, 2),
    ("saturated Beta(20, 0.3)", 100, 8, 1),
    ("saturated Beta(20, 0.3)", 200, 4, 1),
    ("tau-bench rates", 50, 4, 1),
    ("tau-bench rates", 50, 4, 2),
    ("tau-bench rates", 100, 8, 4),
    ("tau-bench rates", 200, 4, 4),
    ("bimodal Beta(0.5, 0.5)", 50, 4, 2),
)


def draw(name: str, shape: tuple[int, int], rng: np.random.Generator,
         tau: np.ndarray) -> np.ndarray:
    if name.startswith("saturated"):
        return rng.beta(20, 0.3, shape)
    if name.startswith("bimodal"):
        return rng.beta(0.5, 0.5, shape)
    return tau[rng.integers(0, tau.size, shape)]


def widths(name: str, t: int, n: int, k: int, confidence: float, reps: int,
           rng: np.random.Generator, tau: np.ndarray) -> tuple[float, float, float, float]:
    alpha = 1 - confidence
    p = draw(name, (reps, t), rng, tau)
    c_old, c_new = rng.binomial(n, p), rng.binomial(n, p)
    h_old = np.asarray(estimate_pass_hat_k(c_old, n, k), dtype=float)
    h_new = np.asarray(estimate_pass_hat_k(c_new, n, k), dtype=float)
    base = paired_difference_test(h_new - h_old, confidence=confidence)
    before = _union(base, h_old, h_new, k, n, n, alpha, p_value=False)
    after = _floored(base, h_old, h_new, k, n, n, alpha, p_value=False)
    lo_o, hi_o = _hoeffding_suites(c_old, np.full(t, n), k, alpha / 2)
    lo_n, hi_n = _hoeffding_suites(c_new, np.full(t, n), k, alpha / 2)
    full = (hi_n - lo_o) - (lo_n - hi_o)
    w_before = np.minimum(before.high, 1) - np.maximum(before.low, -1)
    w_after = np.minimum(after.high, 1) - np.maximum(after.low, -1)
    r_before, r_after = w_before / full, w_after / full
    return (float(r_before.mean()), float(r_after.mean()), float(r_after.max()),
            float(np.mean(r_after > 1 + 1e-12)))


def side_errors(name: str, t: int, n_old: int, n_new: int, k: int, confidence: float,
                reps: int, rng: np.random.Generator, tau: np.ndarray
                ) -> tuple[float, float]:
    if name == "0->1, rest slip":
        p_old = np.full((reps, t), 0.97)
        p_old[:, 0] = 0.0
        p_new = np.clip(p_old**k - 1 / (t - 1), 0, 1) ** (1 / k)
        p_new[:, 0] = 1.0
    else:
        p_old = draw(name, (reps, t), rng, tau)
        p_new = p_old
    truth = (p_new**k - p_old**k).mean(axis=1)
    h_old = np.asarray(estimate_pass_hat_k(rng.binomial(n_old, p_old), n_old, k), dtype=float)
    h_new = np.asarray(estimate_pass_hat_k(rng.binomial(n_new, p_new), n_new, k), dtype=float)
    res = _floored(paired_difference_test(h_new - h_old, confidence=confidence), h_old, h_new,
                   k, n_old, n_new, 1 - confidence, p_value=False)
    return float(np.mean(res.low > truth + 1e-12)), float(np.mean(res.high < truth - 1e-12))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--seed", type=int, default=38)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    tau = tau_rates()
    start = time.perf_counter()
    print("width / the difference of the suite intervals at the full alpha (mean over suites)")
    print(f"{'population':25} {'T':>4} {'n':>2} {'k':>2} {'conf':>5} | {'before':>6} "
          f"{'after':>6} {'max':>6} {'wider':>6}")
    for name, t, n, k in CELLS:
        for conf in (0.90, 0.95, 0.99):
            b, a, top, wider = widths(name, t, n, k, conf, args.reps, rng, tau)
            print(f"{name:25} {t:>4} {n:>2} {k:>2} {conf:>5.0%} | {b:6.3f} {a:6.3f} "
                  f"{top:6.3f} {wider:6.1%}", flush=True)
    print("\neach side's error after (Monte Carlo, s.e. in brackets), alpha/2 beside it")
    for name, t, n_old, n_new, k in (("saturated Beta(20, 0.3)", 50, 4, 4, 1),
                                     ("tau-bench rates", 50, 4, 4, 2),
                                     ("0->1, rest slip", 80, 16, 1, 1),
                                     ("0->1, rest slip", 10, 4, 4, 2)):
        for conf in (0.90, 0.95, 0.99):
            reps = args.reps * 5
            up, down = side_errors(name, t, n_old, n_new, k, conf, reps, rng, tau)
            half = (1 - conf) / 2
            se = [math.sqrt(max(x, 1 / reps) * (1 - x) / reps) for x in (up, down)]
            print(f"{name:25} T={t:<4} n={n_old}/{n_new} k={k} {conf:>4.0%}: better "
                  f"{up:.4f} ({se[0]:.4f}), worse {down:.4f} ({se[1]:.4f}), alpha/2 "
                  f"{half:.3f}", flush=True)
    print(f"[{time.perf_counter() - start:.0f} s]")


if __name__ == "__main__":
    main()
