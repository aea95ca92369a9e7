"""Does each one-sided claim of ``compare_pass_hat_k`` keep alpha/2? A Monte Carlo study (issue 29).

For each cell (a population of tasks, a change, a design n_old/n_new/k, T tasks, a
confidence level) the script draws ``--reps`` suites, computes each suite's true change
(the mean over its own tasks of p_new^k - p_old^k: only the runs are random) and prints
the rate of the wrong claim the cell can provoke, with its Monte Carlo standard error,

- before: the union of the paired t, the skew-corrected t and the binomial floor
  (``compare_pass_hat_k`` up to issue 29, the ``_floored`` of the parent commit);
- after: the same union joined by the betting interval (``betting_interval``), which
  ``compare_pass_hat_k`` reports now. A claim is made after only when both the old
  union and the betting bound make it; the betting side is evaluated at the truth
  (its capital there reaches 2/alpha), which is the same event as its bisected bound
  exceeding the truth (to the bisection's 1e-12).

Cells:

- ``0->1, rest slip``: task 1 goes from p = 0 to 1, the T - 1 others from p = 0.97 by
  1/(T - 1) each (true change 0); the wrong claim is "better". The issue's cell
  (0.97 is the base rate at which the old comparison missed most, found by a scan).
- ``1->0, rest gain``: the mirror, from p = 1 to 0 and 0.03 up; wrong claim "worse".
- ``saturated``, ``bimodal``, ``tau-bench``: tasks drawn per suite from Beta(20, 0.3),
  Beta(0.5, 0.5) or tau-bench's 50 per-task rates (GPT-4o airline), no change; the
  wrong claim is whichever side misses more.
- ``NI tau-bench``, ``NI saturated``: every task's pass^k scaled so that the suite's mean
  drops by exactly the margin (0.05; 0.01 when saturated); the wrong claim is
  "non-inferior" (low > -margin).

Designs (n_old, n_new, k): (16, 1, 1) one new run per task, (1, 16, 1), (2, 12, 2), (4, 4, 2).
The widths part prints mean interval widths before and after on tau-bench-like suites
(tau-bench's rates, 4 or 8 runs per task and version, k = 1, 2, 4; T = 50, 100, 200, no
change) and on the real run (GPT-4o airline, 50 tasks x 4 trials) compared with itself.

    nice -n 10 python benchmarks/bench_compare_errors.py            # the full grid
    nice -n 10 python benchmarks/bench_compare_errors.py --quick    # T = 3, 10, 40, 320
    nice -n 10 python benchmarks/bench_compare_errors.py --issue    # the issue's three cells
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np

from passk.metrics import estimate_pass_hat_k
from passk.stats.compare import (
    _floored,
    _log_capital,
    _t,
    betting_interval,
)

_ROOT = Path(__file__).resolve().parent.parent
TAU = next((p / "shared" / "data" / "tau-bench" / "gpt-4o-airline.json"
            for p in (_ROOT.parent, _ROOT.parent.parent)
            if (p / "shared" / "data" / "tau-bench").is_dir()),
           _ROOT / "tests" / "fixtures" / "tau_bench_small.json")
DESIGNS = ((16, 1, 1), (1, 16, 1), (2, 12, 2), (4, 4, 2))
LEVELS = (0.90, 0.95, 0.99)
MARGIN, SATURATED_MARGIN, BASE = 0.05, 0.01, 0.97


def tau_rates() -> np.ndarray:
    from passk.results.read import read_results
    r = read_results(TAU)
    return np.asarray(r.successes / r.totals, dtype=float)


def draw(cell: str, t: int, k: int, reps: int, rng: np.random.Generator, tau: np.ndarray
         ) -> tuple[np.ndarray, np.ndarray, float | None, str]:
    """Per-task p_old and p_new (reps, T), the margin (or None) and the wrong claim."""
    if cell in ("0->1, rest slip", "1->0, rest gain"):
        up = cell.startswith("0")
        base = BASE if up else 1.0 - BASE
        theta_old = np.full((reps, t), base**k)
        theta_old[:, 0] = 0.0 if up else 1.0
        step = (1.0 - theta_old[0, 0] if up else -1.0) / (t - 1) if t > 1 else 0.0
        theta_new = np.clip(theta_old - step, 0.0, 1.0)
        theta_new[:, 0] = 1.0 if up else 0.0
        return theta_old ** (1 / k), theta_new ** (1 / k), None, "better" if up else "worse"
    pool = {"saturated": lambda: rng.beta(20, 0.3, (reps, t)),
            "bimodal": lambda: rng.beta(0.5, 0.5, (reps, t)),
            "tau-bench": lambda: tau[rng.integers(0, tau.size, (reps, t))],
            "NI tau-bench": lambda: tau[rng.integers(0, tau.size, (reps, t))],
            "NI saturated": lambda: rng.beta(20, 0.3, (reps, t))}[cell]()
    if not cell.startswith("NI"):
        return pool, pool, None, "either"
    margin = SATURATED_MARGIN if "saturated" in cell else MARGIN
    theta = pool**k
    total = theta.sum(axis=1)
    scale = np.clip(1.0 - margin * t / np.maximum(total, 1e-300), 0.0, 1.0)
    return pool, (theta * scale[:, None]) ** (1 / k), margin, "non-inferior"


def rates(cell: str, t: int, design: tuple[int, int, int], confidence: float, reps: int,
          rng: np.random.Generator, tau: np.ndarray) -> tuple[str, float, float, float]:
    """The wrong claim, its rate before and after, and the share of suites that count
    (NI: those whose mean can drop by the whole margin)."""
    n_old, n_new, k = design
    p_old, p_new, margin, claim = draw(cell, t, k, reps, rng, tau)
    truth = (p_new**k - p_old**k).mean(axis=1)
    t_old = np.asarray(estimate_pass_hat_k(np.arange(n_old + 1), n_old, k), dtype=float)
    t_new = np.asarray(estimate_pass_hat_k(np.arange(n_new + 1), n_new, k), dtype=float)
    h_old = t_old[rng.binomial(n_old, p_old)]
    h_new = t_new[rng.binomial(n_new, p_new)]
    alpha = 1.0 - confidence
    if t >= 2:
        res = _floored(_t(h_new - h_old, alpha), h_old, h_new, k, n_old, n_new, alpha,
                       p_value=False, proved=False)
        low, high = np.maximum(res.low, -1.0), np.minimum(res.high, 1.0)
    else:
        low, high = np.full(reps, -np.inf), np.full(reps, np.inf)
    b_old, b_new = np.full(h_old.shape, n_old // k), np.full(h_new.shape, n_new // k)
    level = math.log(2.0 / alpha)
    # the betting lower bound exceeds the truth / the upper bound is below it
    bet_up = _log_capital(h_old, h_new, b_old, b_new, truth, alpha / 2) >= level
    bet_down = _log_capital(h_new, h_old, b_new, b_old, -truth, alpha / 2) >= level
    if margin is not None:
        keep = np.isclose(truth, -margin, atol=1e-12)
        wrong_before = (low > -margin)[keep]
        wrong_after = wrong_before & bet_up[keep]
        return claim, float(np.mean(wrong_before)), float(np.mean(wrong_after)), float(
            np.mean(keep))
    before_up, before_down = low > truth + 1e-12, high < truth - 1e-12
    after_up, after_down = before_up & bet_up, before_down & bet_down
    if claim == "better":
        return claim, float(np.mean(before_up)), float(np.mean(after_up)), 1.0
    if claim == "worse":
        return claim, float(np.mean(before_down)), float(np.mean(after_down)), 1.0
    up, down = float(np.mean(after_up)), float(np.mean(after_down))
    side = "better" if up >= down else "worse"
    before = float(np.mean(before_up if side == "better" else before_down))
    return side, before, max(up, down), 1.0


def se(rate: float, reps: int) -> float:
    return math.sqrt(max(rate, 1.0 / reps) * (1 - rate) / reps)


def errors(args: argparse.Namespace, rng: np.random.Generator) -> None:
    tau = tau_rates()
    cells = ("0->1, rest slip", "1->0, rest gain", "saturated", "bimodal", "tau-bench",
             "NI tau-bench", "NI saturated")
    tasks = (3, 10, 40, 320) if args.quick else (3, 10, 40, 80, 160, 320, 1000)
    if args.tasks:
        tasks = tuple(args.tasks)
    if args.cells:
        cells = tuple(c for c in cells if c in args.cells)
    print(f"{'cell':17} {'n_old/n_new/k':>13} {'T':>5} {'conf':>5} {'claim':>12} "
          f"{'before':>15} {'after':>15} {'alpha/2':>7}  ok")
    worst: list[tuple[float, str]] = []  # the after rate over alpha/2
    for cell in cells:
        for design in DESIGNS:
            for t in tasks:
                reps = args.reps if t <= 320 else max(500, args.reps // 4)
                for conf in LEVELS:
                    claim, before, after, share = rates(cell, t, design, conf, reps, rng, tau)
                    n_eff = max(1, round(reps * share))
                    half = (1 - conf) / 2
                    ok = after <= half + 2 * se(after, n_eff)
                    name = f"{cell} {design[0]}/{design[1]}/{design[2]} T={t} {conf:.0%}"
                    note = (f"{name}: after {after:.4f} ({se(after, n_eff):.4f}), "
                            f"before {before:.4f}")
                    worst.append((after / half, note))
                    print(f"{cell:17} {'/'.join(map(str, design)):>13} {t:>5} {conf:>5.0%} "
                          f"{claim:>12} {before:.4f} ({se(before, n_eff):.4f}) "
                          f"{after:.4f} ({se(after, n_eff):.4f}) {half:>7.3f}  "
                          f"{'yes' if ok else 'NO'}", flush=True)
    worst.sort(reverse=True)
    print("worst cells after, as a share of alpha/2:")
    for z, name in worst[:8]:
        print(f"  {z:.2f}  {name}")


def issue(args: argparse.Namespace, rng: np.random.Generator) -> None:
    tau = tau_rates()
    reps = args.reps
    for t, conf in ((160, 0.99), (80, 0.90), (80, 0.95)):
        claim, before, after, _ = rates("0->1, rest slip", t, (16, 1, 1), conf, reps, rng, tau)
        print(f"one task 0->1, rest slip, old 16 runs, new 1, T = {t}, {conf:.0%}: false "
              f"{claim} before {before:.4f} ({se(before, reps):.4f}), after {after:.4f} "
              f"({se(after, reps):.4f}), alpha/2 = {(1 - conf) / 2:.3f}", flush=True)


def widths(args: argparse.Namespace, rng: np.random.Generator) -> None:
    """Mean width of the interval before and after, no change, tau-bench's rates."""
    tau = tau_rates()
    reps = max(200, args.reps // 10)
    print(f"{'suite':34} {'conf':>5} {'before':>7} {'after':>7} {'ratio':>6} {'betting':>7}")
    for t in (50, 100, 200):
        for n, k in ((4, 1), (4, 2), (4, 4), (8, 4)):
            for conf in LEVELS:
                p = tau[rng.integers(0, tau.size, (reps, t))]
                h_old = np.asarray(estimate_pass_hat_k(rng.binomial(n, p), n, k), dtype=float)
                h_new = np.asarray(estimate_pass_hat_k(rng.binomial(n, p), n, k), dtype=float)
                alpha = 1 - conf
                base = _t(h_new - h_old, alpha)
                ends = []
                for proved in (False, True):
                    r = _floored(base, h_old, h_new, k, n, n, alpha, p_value=False,
                                 proved=proved)
                    ends.append(np.minimum(r.high, 1) - np.maximum(r.low, -1))
                b_w, a_w = ends
                bet = betting_interval(h_new - h_old, confidence=conf)
                wb, wa = float(np.mean(b_w)), float(np.mean(a_w))
                print(f"tau-bench rates T={t:<4} n={n} k={k}{'':13} {conf:>5.0%} {wb:7.4f} "
                      f"{wa:7.4f} {wa / wb:6.2f} {float(np.mean(bet.high - bet.low)):7.4f}",
                      flush=True)
    # the real run against itself (every difference 0) and against a split of its trials
    from passk.results.read import read_results
    r = read_results(TAU)
    c, n = np.asarray(r.successes), np.asarray(r.totals)
    for k in (1, 2, 4):
        for conf in LEVELS:
            h = np.asarray(estimate_pass_hat_k(c, n, k), dtype=float)[None, :]
            alpha = 1 - conf
            base = _t(h - h, alpha)
            ends = []
            for proved in (False, True):
                res = _floored(base, h, h, k, n, n, alpha, p_value=False, proved=proved)
                ends.append(float(min(res.high[0], 1) - max(res.low[0], -1)))
            print(f"{TAU.name} vs itself, k={k}{'':11} {conf:>5.0%} {ends[0]:7.4f} "
                  f"{ends[1]:7.4f} {ends[1] / ends[0]:6.2f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4000)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--issue", action="store_true", help="only the issue's three cells")
    parser.add_argument("--widths", action="store_true", help="only the widths")
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--tasks", type=int, nargs="*", help="the T to try (default: the grid)")
    parser.add_argument("--cells", nargs="*", help="only these cells, by name")
    parser.add_argument("--errors", action="store_true", help="only the error table")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    if args.issue:
        issue(args, rng)
    elif args.widths:
        widths(args, rng)
    elif args.errors:
        errors(args, rng)
    else:
        issue(args, rng)
        errors(args, rng)
        widths(args, rng)
    print(f"[{time.perf_counter() - start:.0f} s]")


if __name__ == "__main__":
    main()
