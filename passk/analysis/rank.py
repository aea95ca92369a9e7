"""Rank several versions of an agent: ``passk rank FILE FILE ...``.

Pairs every file's tasks by id, keeps the tasks every version ran at least k times,
and ranks the versions on mean pass^k with a family-wise error
(:func:`passk.stats.rank.rank_versions`: Shaffer's step-down over the pairwise
one-sided comparisons ``passk diff`` proves). Beside the table: each version's noise
(:func:`passk.stats.rank.noise_floor`), each adjacent pair's change with an interval
that holds for all pairs at once (Bonferroni over the m pairs), and, for each adjacent
pair the table does not separate, the runs per task the planner
(:func:`passk.stats.power.plan_comparison`) says would separate it.

The files are read by :func:`passk.api.rank` (the policy binds, the readers are shared);
this module takes what was read.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from passk.analysis.diff import NoSharedTask
from passk.render.tables import json_number
from passk.results.counts import Results
from passk.stats.compare import PairedComparison, compare_pass_hat_k
from passk.stats.power import plan_comparison
from passk.stats.rank import NoiseFloor, Ranking, noise_floor, rank_versions
from passk.stats.suite_interval import mean_pass_hat_k_ci

__all__ = ["PLAN_POWER", "PLAN_RUNS", "AdjacentPair", "RankReport", "rank_results"]

#: The power the planner aims at for an unresolved adjacent pair.
PLAN_POWER = 0.8
#: The runs per task the planner tries (those at least k).
PLAN_RUNS = (1, 2, 4, 8, 16, 32, 64)


@dataclass(frozen=True)
class AdjacentPair:
    """Two neighbours in the order: the change, its simultaneous interval, whether the table
    separates them, and the runs per task that would (when it does not)."""

    upper: int
    lower: int
    comparison: PairedComparison  # as passk diff UPPER LOWER: delta = lower - upper
    separated: bool
    runs_needed: int | None
    plan_note: str

    def to_dict(self, labels: Sequence[str]) -> dict[str, Any]:
        """The pair as JSON, the gap as upper minus lower, versions named by ``labels``."""
        c = self.comparison
        return {"upper": labels[self.upper], "lower": labels[self.lower],
                "gap": json_number(0.0 - c.delta), "gap_ci_low": json_number(0.0 - c.ci.high),
                "gap_ci_high": json_number(0.0 - c.ci.low), "interval_confidence": c.confidence,
                "separated": self.separated, "runs_per_task_needed": self.runs_needed,
                "plan": self.plan_note}


@dataclass(frozen=True)
class RankReport:
    """The ranking of several results files (see :func:`rank_results`)."""

    labels: tuple[str, ...]
    ranking: Ranking
    noise: tuple[NoiseFloor, ...]
    adjacent: tuple[AdjacentPair, ...]
    task_ids: tuple[str, ...]
    not_in_all: tuple[str, ...]
    runs: tuple[tuple[int, int], ...]  # per version: fewest and most runs of a ranked task
    intervals: tuple[tuple[float, float], ...]  # per version: simultaneous over the versions
    interval_confidence: float  # each version's interval's level (1 - alpha / N)

    def to_dict(self) -> dict[str, Any]:
        """The ranking as JSON: every float at full precision, NaN as null."""
        r, labels = self.ranking, self.labels
        intervals = r.rank_intervals
        versions = []
        for pos, v in enumerate(r.order):
            nf = self.noise[v]
            versions.append({
                "version": labels[v], "position": pos + 1, "group": r.group_of(v) + 1,
                "mean_pass_hat_k": json_number(r.means[v]),
                "ci_low": json_number(self.intervals[v][0]),
                "ci_high": json_number(self.intervals[v][1]),
                "rank_best": intervals[v][0], "rank_worst": intervals[v][1],
                "could_be_best": intervals[v][0] == 1,
                "shown_better_than": [labels[j] for j in r.order if r.claims[v, j]],
                "shown_worse_than": [labels[j] for j in r.order if r.claims[j, v]],
                "runs_min": self.runs[v][0], "runs_max": self.runs[v][1],
                "single_run_sd": json_number(nf.single_run_sd),
                "rerun_band": json_number(nf.rerun_band),
                "flip_rate": json_number(nf.flip_rate),
                "mixed_share": json_number(nf.mixed_share), "noise_tasks": nf.tasks,
                "task_flip_rates": {t: json_number(f) for t, f in
                                    zip(self.task_ids, nf.task_flip_rates.tolist(),
                                        strict=True)}})
        return {
            "k": r.k, "confidence": r.confidence, "alpha": 1 - r.confidence,
            "procedure": r.procedure,
            "test": "Shaffer's step-down over the one-sided pairwise comparisons of mean "
                    "pass^k (passk diff's: paired over tasks, joined by the proved betting "
                    "interval); every claim of the table holds together with probability at "
                    "least the confidence",
            "interval": "each version's mean pass^k, proved (hoeffding), at 1 - alpha/N "
                        "each: all hold together",
            "interval_confidence": self.interval_confidence,
            "tasks": r.tasks, "left_out": r.left_out, "not_in_every_file": list(self.not_in_all),
            "groups": [[labels[v] for v in g] for g in r.groups],
            "versions": versions,
            "adjacent": [a.to_dict(labels) for a in self.adjacent],
            "p_values": {labels[i]: {labels[j]: json_number(float(r.p_values[i, j]))
                                     for j in range(len(labels)) if j != i}
                         for i in range(len(labels))},
        }


def _aligned(results: Sequence[Results], labels: Sequence[str]
             ) -> tuple[tuple[str, ...], tuple[str, ...], np.ndarray, np.ndarray]:
    """The tasks every file has (in the first file's order), their counts (versions × tasks),
    and the tasks some file lacks."""
    index = [{t: i for i, t in enumerate(r.task_ids)} for r in results]
    common = [t for t in results[0].task_ids if all(t in ix for ix in index)]
    every = [t for r in results for t in r.task_ids]
    missing = tuple(dict.fromkeys(t for t in every if not all(t in ix for ix in index)))
    if not common:
        raise NoSharedTask(f"the files share no task ({', '.join(labels)}): nothing to rank; "
                           "give results of the same suite")
    rows = [np.array([ix[t] for t in common], dtype=np.int64) for ix in index]
    c = np.stack([r.successes[i] for r, i in zip(results, rows, strict=True)])
    n = np.stack([r.totals[i] for r, i in zip(results, rows, strict=True)])
    return tuple(common), missing, c, n


def _plan(c: np.ndarray, n: np.ndarray, k: int, gap: float, confidence: float
          ) -> tuple[int | None, str]:
    """The fewest runs per task (on these tasks) the planner says separate a pair whose true
    gap is ``gap``, at the first step's level (never more than the table needs)."""
    if not gap > 0:
        return None, "equal means: no number of runs separates them"
    runs = tuple(sorted({k, *(r for r in PLAN_RUNS if r >= k)}))
    tasks = int(c.size)
    plan = plan_comparison(k, delta=min(gap, 0.999), successes=c, totals=n, tasks=(tasks,),
                           runs=runs, confidence=confidence, power=PLAN_POWER)
    power = plan.power[0] if plan.power is not None else np.zeros(len(runs))
    enough = [r for r, pw in zip(runs, power.tolist(), strict=True) if pw >= PLAN_POWER]
    if enough:
        return enough[0], (f"{enough[0]} runs per task on these {tasks} tasks separate a gap "
                           f"of {gap:.3f} with power {PLAN_POWER:.0%} (passk plan --compare, "
                           f"at {confidence:.4g})")
    best = plan.cheapest
    more = (f"; the cheapest: {plan.tasks_needed[best]} tasks with {runs[best]} runs each"
            if best is not None and plan.tasks_needed is not None else "")
    return None, (f"no runs per task up to {runs[-1]} reach power {PLAN_POWER:.0%} on "
                  f"{tasks} tasks at this gap: more tasks are needed{more}")


def rank_results(results: Sequence[Results], labels: Sequence[str], *, k: int | None = None,
                 confidence: float = 0.95, procedure: str = "shaffer") -> RankReport:
    """Rank results files of the same suite on mean pass^k, with each version's noise.

    Parameters
    ----------
    results : sequence of Results
        One per version (at least 2), read as :func:`passk.api.rank` reads them.
    labels : sequence of str
        How each version is named (its file).
    k : int, optional
        Default: the smallest number of runs of any task in any file.
    confidence : float, default 0.95
        1 - the family-wise error of the table.
    procedure : {'shaffer', 'holm', 'bonferroni'}

    Returns
    -------
    RankReport

    Raises
    ------
    NoSharedTask
        When the files have no task in common.

    Examples
    --------
    >>> from passk.results.counts import Run, results_from_runs
    >>> def version(rate):
    ...     return results_from_runs([Run(f"t{t}", (t * 7 + i) % 10 < rate * 10, i)
    ...                               for t in range(40) for i in range(6)])
    >>> rep = rank_results([version(0.3), version(0.9), version(0.8)], ["a", "b", "c"], k=2)
    >>> [[rep.labels[v] for v in g] for g in rep.ranking.groups]
    [['b'], ['c'], ['a']]
    """
    if len(results) < 2 or len(results) != len(labels):
        raise ValueError(f"rank needs at least 2 results and one label each, not "
                         f"{len(results)} and {len(labels)}")
    task_ids, missing, c, n = _aligned(results, labels)
    if k is None:
        positive = n[n > 0]
        k = int(positive.min()) if positive.size else 1
    ranking = rank_versions(c, n, k, confidence=confidence, procedure=procedure)
    keep = (n >= k).all(axis=0)
    noise = tuple(noise_floor(c[v], n[v], confidence=confidence) for v in range(len(results)))
    versions = len(results)
    pairs = versions * (versions - 1) // 2
    level = 1 - (1 - confidence) / pairs  # Bonferroni over the pairs: simultaneous
    adjacent = []
    for upper, lower in zip(ranking.order, ranking.order[1:], strict=False):
        cmp = compare_pass_hat_k(c[upper, keep], n[upper, keep], c[lower, keep],
                                 n[lower, keep], k, confidence=level)
        separated = bool(ranking.claims[upper, lower])
        needed, note = (None, "separated") if separated else _plan(
            c[upper, keep], n[upper, keep], k, 0.0 - cmp.delta, level)
        adjacent.append(AdjacentPair(upper, lower, cmp, separated, needed, note))
    runs = tuple((int(n[v, keep].min()) if keep.any() else 0,
                  int(n[v, keep].max()) if keep.any() else 0) for v in range(versions))
    each = 1 - (1 - confidence) / versions  # Bonferroni over the versions: simultaneous
    intervals = []
    for v in range(versions):
        if keep.any():
            ci = mean_pass_hat_k_ci(c[v, keep], n[v, keep], k, confidence=each).ci
            intervals.append((float(ci.low), float(ci.high)))
        else:
            intervals.append((math.nan, math.nan))
    return RankReport(tuple(labels), ranking, noise, tuple(adjacent), task_ids, missing, runs,
                      tuple(intervals), each)

