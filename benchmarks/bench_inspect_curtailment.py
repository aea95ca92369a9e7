"""Epochs saved by ``passk.integrations.inspect.Curtailment``, with identical gate decisions (issue 18).

Random suites are replayed through the early stopping as Inspect AI calls it
(:func:`passk.integrations.inspect.replay`: epoch by epoch over the samples, ``in_flight``
epochs running at once, the oldest finishing first), and the gate on the
epochs it let run (with the samples it settled early named) is compared with
the gate on every epoch. Printed per population of per-sample rates and per
number of epochs in flight: suites, identical decisions, suites that passed,
epochs saved.

    .venv/bin/python benchmarks/bench_inspect_curtailment.py [--suites 500] [--seed 18]

The gate is notebook 05's (k = 5, bar 0.7, cap 0.2), on the estimate and on
the lower bound; 6 to 30 samples a suite, 8 epochs.
"""

from __future__ import annotations

import argparse

import numpy as np

from passk.criteria import GateCriteria
from passk.gate.judge import judge
from passk.integrations.inspect import Curtailment, replay
from passk.results.counts import Results

EPOCHS = 8
GATE = {"k": 5, "min_overall_pass_hat_k": 0.7, "max_flakiness": 0.2}


def gate(table: list[list[bool | None]], on: str, settled: dict[str, int] | None = None
         ) -> tuple[bool, tuple[str, ...]]:
    wins = [sum(1 for x in row if x) for row in table]
    runs = [sum(1 for x in row if x is not None) for row in table]
    ids = tuple(f"t{i}" for i in range(len(table)))
    results = Results(ids, np.asarray(wins), np.asarray(runs), np.zeros(len(ids), dtype=int),
                      ("read-only",) * len(ids), settled_early=settled or {})
    verdict = judge(results, GateCriteria(**GATE, on=on))
    return verdict.passed, verdict.flaky_tasks


def study(draw, suites: int, on: str, in_flight: int, rng: np.random.Generator
          ) -> tuple[int, int, int, int, int]:
    agree = passed = saved = planned = 0
    for _ in range(suites):
        p = draw(int(rng.integers(6, 31)))
        full = (rng.random((p.size, EPOCHS)) < p[:, None]).tolist()
        c = Curtailment(**GATE, on=on)
        meta = replay(c, full, in_flight=in_flight)
        made = [[c.outcomes[str(i)].get(e + 1) for e in range(EPOCHS)]
                for i in range(len(full))]
        early = {f"t{i}": EPOCHS for i in meta["settled_early"]}
        decision = gate(full, on)
        agree += decision == gate(made, on, early)
        passed += decision[0]
        saved += meta["epochs_saved"]
        planned += meta["epochs_planned"]
    return suites, agree, passed, saved, planned


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", type=int, default=500)
    parser.add_argument("--seed", type=int, default=18)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    populations = {
        "Beta(4, 1)": lambda t: rng.beta(4, 1, t),
        "Uniform(0, 1)": rng.random,
        "90% perfect": lambda t: np.where(rng.random(t) < 0.9, 1.0, rng.beta(4, 1, t)),
        "thirds": lambda t: rng.choice([1.0, 0.0, 0.5], t),
    }
    print(f"{EPOCHS} epochs, gate k {GATE['k']}, bar {GATE['min_overall_pass_hat_k']}, cap "
          f"{GATE['max_flakiness']}; 6-30 samples a suite, seed {args.seed}")
    print(f"{'rates':<14}{'on':<13}{'in flight':>9}{'suites':>7}{'identical':>10}"
          f"{'passed':>7}{'epochs saved':>20}")
    total = same = 0
    for name, draw in populations.items():
        for on in ("estimate", "lower-bound"):
            for in_flight in (1, 8):
                n, agree, passed, saved, planned = study(draw, args.suites, on, in_flight, rng)
                total, same = total + n, same + agree
                print(f"{name:<14}{on:<13}{in_flight:>9}{n:>7}{agree:>10}{passed:>7}"
                      f"{saved:>9} of {planned:<6} {saved / planned:>5.1%}")
    print(f"identical decisions in {same} of {total} suites")


if __name__ == "__main__":
    main()
