"""Early stopping against fixed n and against curtailment, per population (issue 29).

Every suite is drawn once (T tasks, each with its p from the population, n runs each,
outcomes fixed in advance as run_suite's seeded runs are) and run three ways through the
one scheduler, :class:`passk.run.schedule.Schedule`, in run_suite's order, and judged by
:func:`passk.gate.judge.judge` on the runs made:

- fixed n: every run;
- curtailed: a task stops once its remaining runs cannot change the gate (the verdict is
  fixed n's: checked on every suite);
- early stopping at L planned looks (:mod:`passk.stats.sequential`): the suite stops once
  the proved interval on mean pass^k at level 1 - alpha/L clears the bar or lies below it.

Per population and confidence: the share of runs each saves, the pass rate of each (the
power where the suite is good, the false-pass rate where it is not), and the power early
stopping loses (fixed n's pass rate minus early stopping's, paired on the same runs), each
with its Monte Carlo standard error. Under a flakiness cap below 1 a stop with a pass only
ends the tasks whose flaky verdict is settled (so the flaky tasks are fixed n's): it saves
little there; ``--cap 1`` shows the rule where the mean alone decides. The gate is the chapter's (k 5, bar 0.7, cap 0.2) on
the estimate; curtailment does not depend on the confidence (nor does the verdict on the
estimate), early stopping does.

    nice -n 10 python benchmarks/bench_sequential.py [--suites 200] [--tasks 30] [--runs 12]
        [--cap 0.2] [--looks 4] [--k 5]
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from passk.criteria import GateCriteria
from passk.gate.judge import judge
from passk.run.schedule import Schedule


def populations(rng: np.random.Generator, tasks: int) -> dict[str, np.ndarray]:
    """Each population's p for one suite."""
    third = tasks // 3
    return {
        "near-saturated (p = 0.995)": np.full(tasks, 0.995),
        "bimodal (26/30 at 0.995, 4/30 at 0)": np.r_[np.full(tasks - tasks * 4 // 30, 0.995),
                                                     np.zeros(tasks * 4 // 30)],
        "mixed (thirds: 0.97-1, 0-0.03, 0.2-0.8)": np.r_[
            rng.uniform(0.97, 1, third), rng.uniform(0, 0.03, third),
            rng.uniform(0.2, 0.8, tasks - 2 * third)],
        "one task flaky (0.9), the rest 0.995": np.r_[0.9, np.full(tasks - 1, 0.995)],
        "near the bar (p = 0.96: mean pass^5 0.82)": np.full(tasks, 0.96),
        "bad: Beta(2, 2)": rng.beta(2, 2, tasks),
    }


def drive(outcomes: np.ndarray, gate: GateCriteria, stopping: str) -> tuple[int, bool, str]:
    """(runs made, passed, decision) of one suite run through the schedule."""
    ids = [f"t{i}" for i in range(outcomes.shape[0])]
    s = Schedule(dict.fromkeys(ids, outcomes.shape[1]), gate, stopping=stopping)
    index = {t: i for i, t in enumerate(ids)}
    while (run := s.next_run()) is not None:
        task, i, _ = run
        s.record(task, i, "passed" if outcomes[index[task], i] else "failed")
    results = s.results()
    verdict = judge(results, gate)
    return int(results.totals.sum()), verdict.passed, (s.stopped.decision if s.stopped
                                                       else "")


def se(x: list[float]) -> float:
    return float(np.std(np.asarray(x, dtype=float), ddof=1)) / math.sqrt(len(x))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", type=int, default=200)
    parser.add_argument("--tasks", type=int, default=30)
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--looks", type=int, default=4)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--cap", type=float, default=0.2,
                        help="the flakiness cap (1: the mean alone decides)")
    parser.add_argument("--seed", type=int, default=29)
    args = parser.parse_args()
    n, tasks = args.runs, args.tasks
    print(f"T = {tasks}, n = {n}, k = {args.k}, bar 0.7, cap {args.cap:g} on the estimate; early "
          f"stopping at {args.looks} looks; {args.suites} suites per row (s.e. in brackets)")
    print(f"{'population':42} {'conf':>4}  {'saved: curtail':>14} {'early':>13}  "
          f"{'pass: fixed':>12} {'early':>13} {'power lost':>13} {'stops':>5}")
    names = list(populations(np.random.default_rng(0), tasks))
    for name in names:
        rng = np.random.default_rng([args.seed, names.index(name)])
        suites = [rng.random((tasks, n)) < populations(rng, tasks)[name][:, None]
                  for _ in range(args.suites)]
        gate = GateCriteria(k=args.k, max_flakiness=args.cap)
        fixed = [drive(o, gate, "fixed") for o in suites]
        cut = [drive(o, gate, "curtailed") for o in suites]
        assert all(f[1] == c[1] for f, c in zip(fixed, cut, strict=True)), name
        cut_saved = [1 - c[0] / (tasks * n) for c in cut]
        for confidence in (0.90, 0.95, 0.99):
            g = GateCriteria(k=args.k, max_flakiness=args.cap, confidence=confidence)
            early = [drive(o, g, f"looks:{args.looks}") for o in suites]
            saved = [1 - e[0] / (tasks * n) for e in early]
            lost = [float(f[1]) - float(e[1]) for f, e in zip(fixed, early, strict=True)]
            fp = [float(f[1]) for f in fixed]
            ep = [float(e[1]) for e in early]
            stops = sum(bool(e[2]) for e in early)
            print(f"{name:42} {confidence:4.2f}  {np.mean(cut_saved):6.1%} ({se(cut_saved):.3f})"
                  f" {np.mean(saved):6.1%} ({se(saved):.3f})  {np.mean(fp):5.3f} ({se(fp):.3f})"
                  f" {np.mean(ep):5.3f} ({se(ep):.3f}) {np.mean(lost):+6.3f} ({se(lost):.3f})"
                  f" {stops:5d}", flush=True)


if __name__ == "__main__":
    main()
