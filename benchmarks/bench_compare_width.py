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

The cells are the nine above and the designs of the error grid
(``bench_compare_errors.py``: n_old/n_new/k = 16/1/1, 1/16/1, 2/12/2, 4/4/2, T = 10, 40,
320, saturated, bimodal and tau-bench tasks). Beside "after" the script prints the union
alone at the full alpha (what the comparison would be without the suite intervals) and the
difference at alpha/2 (what the split costs where the union never helps). ``--power``
prints the power table on the error grid's designs: the share of suites whose interval lies
below 0 when every task's pass^k falls by the same share (a drop of 0.05 in the mean, 0.03
on saturated tasks), for the comparison, the difference of the suite intervals at the
full alpha and the union at the full alpha. ``--direct`` prints the direct interval for
the change (idea (a) of issue 38's second pass: one test of the difference with the two
versions' variances added, its nuisance, the level, bounded by Berger and Boos's
confidence set) at the outcome where every run passed, against the difference of the
suite intervals. ``--shares`` walks the share of alpha given to the difference (0.3-0.9,
and Sidak's never-wider construction: the difference at alpha, the union at alpha^2/8)
and prints, per share, the largest mean-width ratio over every cell-level to each of the
two simple proved alternatives, the difference of the suite intervals at alpha and the
union at alpha: the share that keeps the worse of the two smallest is the one to use.

    nice -n 10 python benchmarks/bench_compare_width.py            # 400 suites a cell
    nice -n 10 python benchmarks/bench_compare_width.py --reps 100 # quick
    nice -n 10 python benchmarks/bench_compare_width.py --reps 200 --power --direct
    nice -n 10 python benchmarks/bench_compare_width.py --reps 60 --shares --no-widths --no-errors
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from bench_compare_errors import tau_rates

from passk.metrics import estimate_pass_hat_k
from passk.stats.compare import PairedTest, _floored, _union, paired_difference_test
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
#: The error grid's designs (n_old, n_new, k), tasks and populations (bench_compare_errors.py).
GRID_DESIGNS = ((16, 1, 1), (1, 16, 1), (2, 12, 2), (4, 4, 2))
GRID_TASKS = (10, 40, 320)
GRID_POPULATIONS = ("saturated Beta(20, 0.3)", "bimodal Beta(0.5, 0.5)", "tau-bench rates")


def draw(name: str, shape: tuple[int, int], rng: np.random.Generator,
         tau: np.ndarray) -> np.ndarray:
    if name.startswith("saturated"):
        return rng.beta(20, 0.3, shape)
    if name.startswith("bimodal"):
        return rng.beta(0.5, 0.5, shape)
    return tau[rng.integers(0, tau.size, shape)]


def _suite_difference(c_old: np.ndarray, n_old: int, c_new: np.ndarray, n_new: int, k: int,
                      alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """[L_new - U_old, U_new - L_old], each suite interval at 1 - alpha/2."""
    t = c_old.shape[-1]
    lo_o, hi_o = _hoeffding_suites(c_old, np.full(t, n_old), k, alpha / 2)
    lo_n, hi_n = _hoeffding_suites(c_new, np.full(t, n_new), k, alpha / 2)
    return lo_n - hi_o, hi_n - lo_o


def _no_change(name: str, t: int, n_old: int, n_new: int, k: int, confidence: float,
               reps: int, rng: np.random.Generator, tau: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, PairedTest]:
    """``reps`` suites of one cell with no change: both versions' counts and estimates, and
    the paired t on their differences."""
    p = draw(name, (reps, t), rng, tau)
    c_old, c_new = rng.binomial(n_old, p), rng.binomial(n_new, p)
    h_old = np.asarray(estimate_pass_hat_k(c_old, n_old, k), dtype=float)
    h_new = np.asarray(estimate_pass_hat_k(c_new, n_new, k), dtype=float)
    return c_old, c_new, h_old, h_new, paired_difference_test(h_new - h_old,
                                                              confidence=confidence)


def widths(name: str, t: int, n_old: int, n_new: int, k: int, confidence: float, reps: int,
           rng: np.random.Generator, tau: np.ndarray) -> dict[str, float]:
    """Mean width ratios to the difference of the suite intervals at the full alpha."""
    alpha = 1 - confidence
    c_old, c_new, h_old, h_new, base = _no_change(name, t, n_old, n_new, k, confidence, reps,
                                                  rng, tau)
    before = _union(base, h_old, h_new, k, n_old, n_new, alpha, p_value=False)
    after = _floored(base, h_old, h_new, k, n_old, n_new, alpha, p_value=False)
    low, high = _suite_difference(c_old, n_old, c_new, n_new, k, alpha)
    low2, high2 = _suite_difference(c_old, n_old, c_new, n_new, k, alpha / 2)
    full = high - low
    # the one construction proved never wider (issue 38, third pass): the difference at the
    # full alpha, intersected with the union at alpha^2 / 8 (Sidak's slack, alpha^2/16 a side)
    tiny = _union(base, h_old, h_new, k, n_old, n_new, alpha**2 / 8, p_value=False)
    s_low, s_high = np.maximum(low, tiny.low), np.minimum(high, tiny.high)
    s_low, s_high = np.minimum(s_low, s_high), np.maximum(s_low, s_high)
    w_sidak = np.minimum(s_high, 1) - np.maximum(s_low, -1)
    w_before = np.minimum(before.high, 1) - np.maximum(before.low, -1)
    w_after = np.minimum(after.high, 1) - np.maximum(after.low, -1)
    r_after = w_after / full
    return {"before": float(np.mean(w_before / full)), "after": float(r_after.mean()),
            "max": float(r_after.max()), "wider": float(np.mean(r_after > 1 + 1e-12)),
            "half": float(np.mean((high2 - low2) / full)),
            "sidak": float(np.mean(w_sidak / full)), "sidak_max": float(np.max(w_sidak / full))}


SHARES: tuple[float | str, ...] = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, "sidak")


def share_ratios(name: str, t: int, n_old: int, n_new: int, k: int, confidence: float,
                 reps: int, rng: np.random.Generator, tau: np.ndarray
                 ) -> dict[float | str, tuple[float, float]]:
    """Per share of alpha given to the difference (the rest to the union), the mean width of
    the intersection over the mean width of the difference at alpha and of the union at
    alpha ("sidak": the difference at alpha with the union at alpha^2/8)."""
    alpha = 1 - confidence
    c_old, c_new, h_old, h_new, base = _no_change(name, t, n_old, n_new, k, confidence, reps,
                                                  rng, tau)

    def width(low: np.ndarray, high: np.ndarray) -> float:
        return float(np.mean(np.minimum(high, 1) - np.maximum(low, -1)))
    d_low, d_high = _suite_difference(c_old, n_old, c_new, n_new, k, alpha)
    union = _union(base, h_old, h_new, k, n_old, n_new, alpha, p_value=False)
    w_d, w_u = width(d_low, d_high), width(union.low, union.high)
    out: dict[float | str, tuple[float, float]] = {}
    for share in SHARES:
        u_alpha = alpha * alpha / 8 if share == "sidak" else alpha * (1 - float(share))
        d_alpha = alpha if share == "sidak" else alpha * float(share)
        part = _union(base, h_old, h_new, k, n_old, n_new, u_alpha, p_value=False)
        lo_d, hi_d = _suite_difference(c_old, n_old, c_new, n_new, k, d_alpha)
        low, high = np.maximum(part.low, lo_d), np.minimum(part.high, hi_d)
        w = width(np.minimum(low, high), np.maximum(low, high))
        out[share] = (w / w_d, w / w_u)
    return out


def powers(name: str, t: int, n_old: int, n_new: int, k: int, confidence: float, reps: int,
           rng: np.random.Generator, tau: np.ndarray) -> tuple[float, dict[str, float]]:
    """The drop, and the share of suites shown worse (interval below 0) by the comparison,
    the difference of the suite intervals at the full alpha, and the union at the full
    alpha: every task's pass^k scaled so that the mean falls by the drop."""
    alpha = 1 - confidence
    drop = 0.03 if name.startswith("saturated") else 0.05
    p_old = draw(name, (reps, t), rng, tau)
    theta = p_old**k
    scale = np.clip(1.0 - drop / np.maximum(theta.mean(axis=1, keepdims=True), 1e-12), 0, 1)
    p_new = (theta * scale) ** (1 / k)
    c_old, c_new = rng.binomial(n_old, p_old), rng.binomial(n_new, p_new)
    h_old = np.asarray(estimate_pass_hat_k(c_old, n_old, k), dtype=float)
    h_new = np.asarray(estimate_pass_hat_k(c_new, n_new, k), dtype=float)
    base = paired_difference_test(h_new - h_old, confidence=confidence)
    union = _union(base, h_old, h_new, k, n_old, n_new, alpha, p_value=False)
    now = _floored(base, h_old, h_new, k, n_old, n_new, alpha, p_value=False)
    _, high = _suite_difference(c_old, n_old, c_new, n_new, k, alpha)
    return drop, {"now": float(np.mean(now.high < 0)), "difference": float(np.mean(high < 0)),
                  "union": float(np.mean(union.high < 0))}


def direct_all_pass(runs: int, confidence: float) -> dict[str, float]:
    """Idea (a), at its most favourable: identical tasks, k = 1 (the tail is the binomial's,
    exactly), every one of ``runs`` runs passed in both versions. The direct test of a change
    delta0 compares the two failure counts, P(F_new <= F_old) at (theta, theta + delta0); its
    level depends on theta (the nuisance), so theta is confined by Berger and Boos's
    confidence set at gamma (gamma/2 to each version's count) and the test gets
    alpha/2 - gamma. Returns the lower ends of that interval and of the difference of the
    suite intervals at the full alpha and at alpha/2."""
    from scipy import stats
    alpha = 1 - confidence
    f = np.arange(runs + 1)
    every = np.full((1, 50), runs // 50)  # 50 tasks, every run passed
    out = {}
    for label, a in (("difference", alpha), ("difference at alpha/2", alpha / 2)):
        low, _ = _suite_difference(every, runs // 50, every, runs // 50, 1, a)
        out[label] = float(low[0])
    for label, gamma in (("direct, gamma = alpha/20", alpha / 20),
                         ("direct, gamma = alpha/10", alpha / 10),
                         ("direct, gamma = alpha/4", alpha / 4)):
        level = alpha / 2 - gamma
        box = (gamma / 2) ** (1 / runs)  # every run passed: theta below this is rejected
        grid = np.linspace(box, 1.0, 1500)
        tail = stats.binom.cdf(f[None, :], runs, 1 - grid[:, None])  # P(F_new <= j)
        best = 0.0
        for theta_old in np.linspace(box, 1.0, 300):
            accepted = grid[tail @ stats.binom.pmf(f, runs, 1 - theta_old) > level]
            if accepted.size:
                best = min(best, float(accepted.min()) - theta_old)
        out[label] = best
    return out


def rectangle_slack(t: int, n: int, confidence: float) -> dict[str, float]:
    """Ideas (a) and (b) of issue 38's third pass, exactly: identical tasks, k = 1, so each
    version's suite interval is a function of its total successes S ~ Binomial(T n, theta)
    (n >= 2k: no per-task part). Per end, the largest miss probability over theta,
    ``sup_theta P(L(S) > theta)`` and ``P(U(S) < theta)``, against its budget alpha/4 (the
    discreteness slack); and the rectangle's lower side, ``1 - (1 - P(L_new > theta + m))
    (1 - P(U_old < theta))`` (the two versions' runs independent: Sidak), at its largest
    over theta on the lines theta_new - theta_old = m, against alpha/2. What it leaves under
    alpha/2 is all a test containing the rectangle's rejections could add there."""
    from scipy import stats
    alpha = 1 - confidence
    runs = t * n
    s = np.arange(runs + 1)
    c = np.minimum(np.maximum(s[:, None] - n * np.arange(t)[None, :], 0), n)  # S as counts
    low, high = _hoeffding_suites(c, np.full(t, n), 1, alpha / 2)
    # the miss probabilities jump at the ends: evaluate just inside and outside each
    edges = np.concatenate([low, high])
    theta = np.unique(np.clip(np.concatenate([edges - 1e-12, edges + 1e-12,
                                              np.linspace(0, 1, 4001)]), 0.0, 1.0))
    pmf = stats.binom.pmf(s[None, :], runs, theta[:, None])
    a1 = np.einsum("ij,ji->i", pmf, (low[:, None] > theta[None, :]).astype(float))
    a2 = np.einsum("ij,ji->i", pmf, (high[:, None] < theta[None, :]).astype(float))
    out = {"sup P(L > theta) / (alpha/4)": float(a1.max() / (alpha / 4)),
           "sup P(U < theta) / (alpha/4)": float(a2.max() / (alpha / 4))}
    for m in (0.0, -0.01, -0.03, -0.1, -0.5, -0.9):
        a1_at = np.interp(theta + m, theta, a1, left=0.0, right=0.0)  # a1 at theta_new
        # interpolation between grid points may miss a jump: take the larger neighbour
        j = np.clip(np.searchsorted(theta, theta + m), 1, theta.size - 1)
        a1_at = np.maximum(a1_at, np.maximum(a1[j - 1], a1[j]) * ((theta + m) >= 0))
        size = 1 - (1 - a1_at) * (1 - a2)
        out[f"size on m = {m:+.2f} / (alpha/2)"] = float(size.max() / (alpha / 2))
    return out


def d_bar_tail_lower(runs: int, confidence: float) -> tuple[float, float]:
    """Idea (c)'s statistic alone, where every run passed (identical tasks, k = 1): the
    lower end of an exact unconditional test on the difference of the two totals,
    rejecting m when sup_theta P(S_new - S_old >= 0 | theta_old = theta, theta_new = theta
    + m) <= alpha/2, beside the difference of the suite intervals' at alpha. The tail of d-bar
    at no change is about 1/2 wherever theta sits mid-way, so the test must move m until even
    mid-way thetas reject it."""
    from scipy import stats
    alpha = 1 - confidence
    s = np.arange(runs + 1)
    thetas = np.linspace(0.0, 1.0, 401)
    lower = 0.0
    for m in -np.linspace(0.0, 1.0, 401)[1:]:
        worst = 0.0
        for th in thetas[(thetas + m >= 0)]:
            p_old = stats.binom.pmf(s, runs, th)
            tail_new = stats.binom.sf(s - 1, runs, th + m)  # P(S_new >= s)
            worst = max(worst, float(p_old @ tail_new))
        if worst <= alpha / 2:
            lower = float(m)
            break
    every = np.full((1, 50), runs // 50)
    d_low, _ = _suite_difference(every, runs // 50, every, runs // 50, 1, alpha)
    return lower, float(d_low[0])


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
    ap.add_argument("--power", action="store_true", help="the power table on the error grid")
    ap.add_argument("--direct", action="store_true", help="idea (a) at the all-pass outcome")
    ap.add_argument("--shares", action="store_true",
                    help="the share of alpha given to the difference, walked")
    ap.add_argument("--slack", action="store_true",
                    help="ideas (a)-(c): the rectangle's exact slack and the d-bar tail")
    ap.add_argument("--no-errors", action="store_true", help="skip each side's error")
    ap.add_argument("--no-widths", action="store_true", help="skip the width table")
    ap.add_argument("--no-grid", action="store_true",
                    help="the width table on the nine cells only (not the error grid's)")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    tau = tau_rates()
    start = time.process_time()
    cells = [(name, t, n, n, k) for name, t, n, k in CELLS]
    if not args.no_grid:
        cells += [(name, t, n_old, n_new, k) for name in GRID_POPULATIONS
                  for n_old, n_new, k in GRID_DESIGNS for t in GRID_TASKS]
    print("width / the difference of the suite intervals at the full alpha (mean over suites):"
          " before (the union at alpha), after (now), its largest, the share of suites where"
          " it is wider, the difference at alpha/2, and the difference at alpha intersected"
          " with the union at alpha^2/8 (Sidak, proved never wider) with its largest")
    print(f"{'population':25} {'T':>4} {'n':>5} {'k':>2} {'conf':>5} | {'before':>6} "
          f"{'after':>6} {'max':>6} {'wider':>6} {'D(a/2)':>6} {'sidak':>6} {'max':>6}")
    summary, sidak = [], []
    for name, t, n_old, n_new, k in [] if args.no_widths else cells:
        for conf in (0.90, 0.95, 0.99):
            w = widths(name, t, n_old, n_new, k, conf, args.reps, rng, tau)
            summary.append(w["after"])
            sidak.append(w["sidak_max"])
            print(f"{name:25} {t:>4} {n_old:>2}/{n_new:<2} {k:>2} {conf:>5.0%} | "
                  f"{w['before']:6.3f} {w['after']:6.3f} {w['max']:6.3f} {w['wider']:6.1%} "
                  f"{w['half']:6.3f} {w['sidak']:6.3f} {w['sidak_max']:6.3f}", flush=True)
    a = np.array(summary) if summary else np.ones(1)
    print(f"after / D(alpha) over {a.size} cell-levels: {a.min():.3f}-{a.max():.3f}, at most 1 "
          f"in {int(np.sum(a <= 1.0))}")
    if sidak:
        print(f"Sidak's (D(alpha) and the union at alpha^2/8) largest ratio over every suite: "
              f"{max(sidak):.6f}")
    if args.shares:
        worst: dict[float | str, list[float]] = {share: [0.0, 0.0] for share in SHARES}
        for name, t, n_old, n_new, k in cells:
            for conf in (0.90, 0.95, 0.99):
                ratios = share_ratios(name, t, n_old, n_new, k, conf, args.reps, rng, tau)
                for share, (to_d, to_u) in ratios.items():
                    worst[share] = [max(worst[share][0], to_d), max(worst[share][1], to_u)]
        print("\nthe share of alpha given to the difference: the largest mean-width ratio over "
              f"{3 * len(cells)} cell-levels to the difference at alpha / to the union at alpha"
              " / the worse of the two")
        for share, (to_d, to_u) in worst.items():
            label = "Sidak (D at alpha, union at alpha^2/8)" if share == "sidak" else share
            print(f"{label!s:>38}: {to_d:.3f} / {to_u:.3f} / {max(to_d, to_u):.3f}", flush=True)
    if args.power:
        print("\npower (interval below 0) on the error grid's designs: the comparison now, the "
              "difference of the suite intervals at alpha, the union at alpha")
        for name in GRID_POPULATIONS:
            for n_old, n_new, k in GRID_DESIGNS:
                for t in (40, 320):
                    for conf in (0.90, 0.95, 0.99):
                        drop, pw = powers(name, t, n_old, n_new, k, conf, args.reps, rng, tau)
                        print(f"{name:25} {n_old:>2}/{n_new:<2} k={k} T={t:<4} {conf:>4.0%} "
                              f"drop {drop:.2f}: now {pw['now']:.3f}, difference "
                              f"{pw['difference']:.3f}, union {pw['union']:.3f}", flush=True)
    if args.direct:
        print("\nidea (a) where every run passed (T = 50, n = 4, k = 1: 200 runs a version), "
              "the lower end of the change's interval")
        for conf in (0.90, 0.95, 0.99):
            ends = direct_all_pass(200, conf)
            base = ends["difference"]
            print(f"{conf:.0%}: " + ", ".join(f"{key} {v:+.4f} ({v / base:.2f}x)"
                                              for key, v in ends.items()), flush=True)
    if args.slack:
        print("\nideas (a)/(b): the suite intervals' miss probability at its largest, exactly "
              "(identical tasks, k = 1, n = 4, enumerated binomial), and the rectangle's "
              "lower-side size on the line theta_new - theta_old = m (Sidak), as shares of "
              "their budgets")
        for t in (50, 200):
            for conf in (0.90, 0.95, 0.99):
                out = rectangle_slack(t, 4, conf)
                print(f"T={t} n=4 k=1 {conf:.0%}: " + ", ".join(f"{key} {v:.4f}"
                                                          for key, v in out.items()),
                      flush=True)
        print("\nidea (c): the exact test on the difference of the totals alone, where every "
              "run passed (T = 50, n = 4, k = 1), its lower end against the difference's")
        for conf in (0.90, 0.95, 0.99):
            tail, diff = d_bar_tail_lower(200, conf)
            print(f"{conf:.0%}: d-bar tail {tail:+.4f}, difference {diff:+.4f} "
                  f"({tail / diff:.1f}x)", flush=True)
    if not args.no_errors:
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
    print(f"[{time.process_time() - start:.0f} s CPU]")


if __name__ == "__main__":
    main()
