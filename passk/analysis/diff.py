"""Compare two versions of an agent: ``passk diff OLD NEW``.

Pairs tasks by id. First the suite: the change in mean pass^k with its
interval, p-value and verdict, from :func:`passk.stats.compare.compare_pass_hat_k`
(paired over tasks; with a margin, a non-inferiority test). Then, per task, the change in pass^k
and flakiness,
whether the class flipped (stable-pass → flaky is the regression that an
average hides), and whether the change in pass rate exceeds what repeat noise
explains: a two-sided Fisher exact test on the 2×2 table of each task's
passes and failures in the two versions, with Holm's step-down correction
across tasks (family-wise error rate; ``correction="bh"`` gives
Benjamini–Hochberg's false discovery rate instead).

The Fisher test is computed for every task at once from the hypergeometric
probabilities (the same two-sided rule as :func:`scipy.stats.fisher_exact`,
which the tests check it against), once per distinct table.

References
----------
.. [1] R. A. Fisher, "On the interpretation of chi-square from contingency
   tables, and the calculation of P", J. R. Stat. Soc. 85(1), 87-94, 1922.
.. [2] S. Holm, "A simple sequentially rejective multiple test procedure",
   Scand. J. Stat. 6(2), 65-70, 1979.
.. [3] Y. Benjamini and Y. Hochberg, "Controlling the false discovery rate",
   J. R. Stat. Soc. B 57(1), 289-300, 1995.
.. [4] E. Miller, "Adding Error Bars to Evals", arXiv:2411.00640, 2024.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from passk.criteria import CORRECTIONS, DEFAULT_CRITERIA
from passk.errors import BadInput, PasskError
from passk.metrics import estimate_pass_hat_k, flakiness
from passk.render.tables import cell, format_rows, json_number, show_id, signed
from passk.render.words import plural
from passk.results.read import Results
from passk.stability import CLASS_THRESHOLD, classify
from passk.stats.compare import (
    FLOOR_LABEL,
    METHOD_LABELS,
    PairedComparison,
    compare_pass_hat_k,
    mean_of,
)

__all__ = ["CORRECTIONS", "DECISIONS", "NoSharedTask", "SuiteDiff", "TaskDiff",
           "baseline_gaps", "diff_results", "fisher_exact_two_sided", "format_diff",
           "format_suite", "holm"]

#: What a diff decides: a regression shown, or not; with a margin, non-inferior or not shown.
DECISIONS = ("worse", "no regression shown", "non-inferior", "inconclusive")
_REGRESSION_ORDER = {"regressed": 0, "flipped": 1, "improved": 2, "unchanged": 3}


def fisher_exact_two_sided(c1: Any, n1: Any, c2: Any, n2: Any) -> np.ndarray:
    """Two-sided Fisher exact p-values for tables ``[[c1, n1-c1], [c2, n2-c2]]``, vectorized.

    A table's p-value is the total hypergeometric probability of the tables
    with the same margins that are no more likely than it (with scipy's
    relative tolerance of 1e-7).

    Examples
    --------
    >>> fisher_exact_two_sided([12, 5], [12, 10], [6, 5], [12, 10]).round(4)
    array([0.0137, 1.    ])
    """
    from scipy import stats
    c1, n1, c2, n2 = (np.asarray(x, dtype=np.int64) for x in (c1, n1, c2, n2))
    c1, n1, c2, n2 = np.broadcast_arrays(c1, n1, c2, n2)
    shape = c1.shape
    c1, n1, c2, n2 = (x.ravel() for x in (c1, n1, c2, n2))
    out = np.ones(c1.size)
    if c1.size == 0:
        return out.reshape(shape)
    table = np.stack([c1, n1, c2, n2], axis=1)
    uniq, inverse = np.unique(table, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    a, na, b, nb = uniq.T
    total, succ = na + nb, a + b
    p = np.ones(len(uniq))
    live = (na > 0) & (nb > 0) & (succ > 0) & (succ < total)
    if live.any():
        a_, na_, nb_, tot_, s_ = a[live], na[live], nb[live], total[live], succ[live]
        width = int(na_.max()) + 1
        chunk = max(1, 5_000_000 // width)
        res = np.empty(a_.size)
        for lo in range(0, a_.size, chunk):
            sl = slice(lo, lo + chunk)
            x = np.arange(width)[None, :]
            xmin = np.maximum(0, s_[sl] - nb_[sl])[:, None]
            xmax = np.minimum(na_[sl], s_[sl])[:, None]
            support = (x >= xmin) & (x <= xmax)
            pmf = np.where(support, stats.hypergeom.pmf(x, tot_[sl, None], s_[sl, None],
                                                        na_[sl, None]), 0.0)
            observed = stats.hypergeom.pmf(a_[sl], tot_[sl], s_[sl], na_[sl])[:, None]
            res[sl] = np.where(support & (pmf <= observed * (1 + 1e-7)), pmf, 0.0).sum(axis=1)
        p[live] = np.minimum(res, 1.0)
    return p[inverse].reshape(shape)


def holm(p: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error rate).

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03]).round(3)
    array([0.03, 0.06, 0.06])
    """
    p = np.asarray(p, dtype=float)
    m = p.size
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adjusted
    return out


@dataclass(frozen=True)
class TaskDiff:
    """One task in both versions: its counts, pass^k, flakiness and class before and after,
    and Fisher's exact test of the change in its pass rate (raw and adjusted p-values).

    ``status`` is ``"regressed"`` or ``"improved"`` when the adjusted p-value is below
    the level, else ``"flipped"`` when the class changed, else ``"unchanged"``.
    """

    task_id: str
    old: tuple[int, int]  # (successes, runs)
    new: tuple[int, int]
    old_pass_hat_k: float
    new_pass_hat_k: float
    old_flakiness: float
    new_flakiness: float
    old_class: str
    new_class: str
    p_value: float
    p_adjusted: float
    status: str  # regressed, improved, flipped, unchanged

    @property
    def flipped(self) -> bool:
        """Whether the task changed class (stable-pass → flaky hides in an average)."""
        return self.old_class != self.new_class


@dataclass(frozen=True)
class SuiteDiff:
    """Two results compared: the suite's paired comparison (``suite``), every paired task,
    the tasks in one file only, and the test's level and multiple-testing correction."""

    k: int
    tasks: tuple[TaskDiff, ...]
    only_old: tuple[str, ...]
    only_new: tuple[str, ...]
    old_mean: float
    new_mean: float
    alpha: float
    correction: str
    suite: PairedComparison | None = None

    @property
    def regressed(self) -> tuple[TaskDiff, ...]:
        """The tasks that got worse beyond repeat noise."""
        return tuple(t for t in self.tasks if t.status == "regressed")

    @property
    def decision(self) -> str:
        """``"worse"`` when a regression is shown: the suite's verdict is worse, or a task
        regressed beyond repeat noise. Otherwise, with a margin, the suite's verdict
        (``"non-inferior"`` or ``"inconclusive"``); without one, ``"no regression shown"``."""
        verdict = self.suite.verdict if self.suite is not None else "inconclusive"
        if verdict == "worse" or self.regressed:
            return "worse"
        if self.suite is not None and self.suite.margin is not None:
            return verdict
        return "no regression shown"

    def to_dict(self) -> dict[str, Any]:
        """The diff as JSON-ready values (``passk diff --json``)."""
        num = json_number
        return {
            "k": self.k, "alpha": self.alpha,
            "correction": {"holm": "Holm (family-wise error rate)",
                           "bh": "Benjamini-Hochberg (false discovery rate)"}[self.correction],
            "test": "two-sided Fisher exact test on each task's passes and failures",
            "old_mean_pass_hat_k": num(self.old_mean), "new_mean_pass_hat_k": num(self.new_mean),
            "suite": None if self.suite is None else self.suite.to_dict(),
            "decision": self.decision,
            "regressed": [t.task_id for t in self.regressed],
            "flipped": [t.task_id for t in self.tasks if t.flipped],
            "only_old": list(self.only_old), "only_new": list(self.only_new),
            "tasks": [
                {"task_id": t.task_id, "old_successes": t.old[0], "old_runs": t.old[1],
                 "new_successes": t.new[0], "new_runs": t.new[1],
                 "old_pass_hat_k": num(t.old_pass_hat_k), "new_pass_hat_k": num(t.new_pass_hat_k),
                 "delta_pass_hat_k": num(t.new_pass_hat_k - t.old_pass_hat_k),
                 "old_flakiness": num(t.old_flakiness), "new_flakiness": num(t.new_flakiness),
                 "old_class": t.old_class, "new_class": t.new_class, "flipped": t.flipped,
                 "p_value": num(t.p_value), "p_adjusted": num(t.p_adjusted), "status": t.status}
                for t in self.tasks
            ],
        }


class NoSharedTask(PasskError, ValueError):
    """Two results with no task in common: there is nothing to compare."""


def baseline_gaps(old: Results, new: Results) -> tuple[str, ...]:
    """Each baseline task the new results do not cover, one reason each (the gate fails
    closed on them: dropping the task that regressed must not pass).

    A task the new results list with no counted run is not covered either; a baseline
    task with no counted run of its own has nothing to compare.

    Examples
    --------
    >>> from passk.results.counts import Run, results_from_runs
    >>> old = results_from_runs([Run("a", True, 0), Run("b", True, 0)])
    >>> baseline_gaps(old, results_from_runs([Run("a", True, 0)]))
    ('task b: in the baseline, but the new results have no runs of it (the comparison must cover every baseline task)',)
    """  # noqa: E501  # a doctest's output line cannot wrap
    counted = {t for t, n in zip(new.task_ids, new.totals.tolist(), strict=True) if n > 0}
    return tuple(f"task {show_id(t)}: in the baseline, but the new results have no runs of it (the "
                 "comparison must cover every baseline task)"
                 for t, n in zip(old.task_ids, old.totals.tolist(), strict=True)
                 if n > 0 and t not in counted)


def diff_results(old: Results, new: Results, *, k: int | None = None,
                 alpha: float = DEFAULT_CRITERIA.alpha,
                 correction: str = DEFAULT_CRITERIA.correction,
                 class_threshold: float = CLASS_THRESHOLD,
                 margin: float | None = None, method: str = "t",
                 rng: int | np.random.Generator | None = None) -> SuiteDiff:
    """Pair two results by task: the suite comparison, and each task against repeat noise.

    The suite comparison is :func:`passk.stats.compare.compare_pass_hat_k` at confidence
    ``1 - alpha`` (with ``margin``, ``method`` and ``rng``); each task gets a two-sided
    Fisher exact test with ``correction`` across tasks at level ``alpha``. The defaults
    of ``alpha`` and ``correction`` are the gate's criteria's
    (:data:`passk.criteria.DEFAULT_CRITERIA`); a policy sets them in ``[baseline]``.

    Raises
    ------
    NoSharedTask
        When OLD and NEW have no task in common.
    """
    from scipy import stats
    if correction not in CORRECTIONS:
        raise BadInput(f"correction ({correction!r}) must be one of {', '.join(CORRECTIONS)}")
    if not 0 < alpha < 1:
        raise BadInput(f"alpha ({alpha!r}) must lie strictly between 0 and 1")
    new_index = {t: i for i, t in enumerate(new.task_ids)}
    old_index = {t: i for i, t in enumerate(old.task_ids)}
    common = [t for t in old.task_ids if t in new_index]
    if not common:
        raise NoSharedTask(
            f"the two results share no task (old: {_some(old.task_ids)}; new: "
            f"{_some(new.task_ids)}): nothing to compare; give results of the same suite")
    io_ = np.array([old_index[t] for t in common], dtype=np.int64)
    in_ = np.array([new_index[t] for t in common], dtype=np.int64)
    c1, n1 = old.successes[io_], old.totals[io_]
    c2, n2 = new.successes[in_], new.totals[in_]
    if k is None:
        both = np.concatenate([n1, n2])
        both = both[both > 0]
        k = int(both.min()) if both.size else 1
    # both versions in one call each (shape (2, tasks)): classes, estimates, flakiness
    c, n = np.stack([c1, c2]), np.stack([n1, n2])
    classes = np.asarray(classify(c, n, threshold=class_threshold)).reshape(2, -1).tolist()
    h1, h2 = np.asarray(estimate_pass_hat_k(c, n, k), dtype=float).reshape(2, -1)
    f1, f2 = np.asarray(flakiness(c, n), dtype=float).reshape(2, -1)
    p = fisher_exact_two_sided(c1, n1, c2, n2)
    if correction == "holm":
        adj = holm(p)
    else:
        adj = stats.false_discovery_control(p, method="bh") if p.size else p
    with np.errstate(invalid="ignore", divide="ignore"):
        r1 = np.where(n1 > 0, c1 / np.maximum(n1, 1), np.nan)
        r2 = np.where(n2 > 0, c2 / np.maximum(n2, 1), np.nan)
    rows = []
    for i, (tid, cls1, cls2) in enumerate(zip(common, *classes, strict=True)):
        significant = adj[i] < alpha
        if significant and r2[i] < r1[i]:
            status = "regressed"
        elif significant and r2[i] > r1[i]:
            status = "improved"
        elif cls1 != cls2:
            status = "flipped"
        else:
            status = "unchanged"
        rows.append(TaskDiff(tid, (int(c1[i]), int(n1[i])), (int(c2[i]), int(n2[i])),
                             float(h1[i]), float(h2[i]), float(f1[i]), float(f2[i]), cls1, cls2,
                             float(p[i]), float(adj[i]), status))
    old_mean, new_mean = mean_of(h1), mean_of(h2)  # one summation, whatever the order
    suite = compare_pass_hat_k(c1, n1, c2, n2, int(k), margin=margin, confidence=1 - alpha,
                               method=method, rng=rng)
    return SuiteDiff(int(k), tuple(rows), tuple(t for t in old.task_ids if t not in new_index),
                     tuple(t for t in new.task_ids if t not in old_index), old_mean, new_mean,
                     alpha, correction, suite)


def _some(ids: Sequence[str], shown: int = 3) -> str:
    more = f", ... ({plural(len(ids), 'task')})" if len(ids) > shown else ""
    return ", ".join(map(show_id, ids[:shown])) + more if ids else "no tasks"


def format_suite(s: PairedComparison, *, markdown: bool = False) -> list[str]:
    """The suite comparison as lines: the change, its interval, p-value and verdict."""
    k = s.k
    left = (f"{s.left_out} left out: fewer than {k} runs in a version" if s.left_out else
            f"none left out: each has {k} runs or more in both")
    lines = [f"suite: mean pass^{k} over {plural(s.paired_tasks, 'paired task')} ({left})",
             (f"  old {cell(s.old_mean)} → new {cell(s.new_mean)}: change {signed(s.delta)}, "
              f"{s.confidence:.0%} interval [{signed(s.ci.low)}, {signed(s.ci.high)}], "
              f"p = {_p(s.p_value)} ({METHOD_LABELS[s.method]}, {FLOOR_LABEL})")]
    low, high = s.ci.low, s.ci.high
    if s.paired_tasks < 2:
        why = "fewer than 2 paired tasks say nothing about a suite"
    elif s.margin is None:
        why = {"better": "the interval lies above 0: a gain is shown",
               "worse": "the interval lies below 0: a drop is shown",
               "inconclusive": "the interval holds 0: no change is shown"}[s.verdict]
    else:
        m = s.margin
        why = {"non-inferior": f"the interval's low end {signed(low)} is above -{m:.3f}: any "
                               f"drop is smaller than the margin {m:.3f}",
               "worse": f"the interval lies below 0 and reaches -{m:.3f}: a drop is shown, and "
                        f"not shown to be within the margin",
               "inconclusive": f"the interval [{signed(low)}, {signed(high)}] holds 0 and "
                               f"-{m:.3f}: neither a drop nor non-inferiority is shown"
               }[s.verdict]
    verdict = f"verdict: {s.verdict.upper()} ({why})"
    lines.append(f"  **{verdict}**" if markdown else f"  {verdict}")
    return lines


def _p(p: float) -> str:
    return "-" if not math.isfinite(p) else f"{p:.3g}" if p >= 1e-4 else f"{p:.1e}"


def format_diff(d: SuiteDiff, *, markdown: bool = False) -> str:
    """The suite comparison, then the paired table (regressions on top), flips and verdict."""
    k = d.k
    header = ["task", "old", "new", f"pass^{k} old", f"pass^{k} new", "change", "flaky old",
              "flaky new", "class old → new", "p", f"p ({d.correction})", "status"]
    order = sorted(range(len(d.tasks)), key=lambda i: (_REGRESSION_ORDER[d.tasks[i].status],
                                                       d.tasks[i].p_adjusted))
    body = []
    for i in order:
        t = d.tasks[i]
        body.append([show_id(t.task_id), f"{t.old[0]}/{t.old[1]}", f"{t.new[0]}/{t.new[1]}",
                     cell(t.old_pass_hat_k), cell(t.new_pass_hat_k),
                     signed(t.new_pass_hat_k - t.old_pass_hat_k), cell(t.old_flakiness),
                     cell(t.new_flakiness),
                     t.old_class if not t.flipped else f"{t.old_class} → {t.new_class}",
                     f"{t.p_value:.4f}", f"{t.p_adjusted:.4f}", t.status])
    numeric = {1, 2, 3, 4, 5, 6, 7, 9, 10}
    lines = [*format_suite(d.suite, markdown=markdown), ""] if d.suite is not None else []
    lines += [format_rows(header, body, numeric=numeric, markdown=markdown), ""]
    name = {"holm": "Holm", "bh": "Benjamini-Hochberg"}[d.correction]
    flips = [t for t in d.tasks if t.flipped]
    bullet = "- " if markdown else "  - "
    if flips:
        lines.append(f"{plural(len(flips), 'task')} changed class:")
        lines += [f"{bullet}{show_id(t.task_id)}: {t.old_class} → {t.new_class}" for t in flips]
    if d.only_old:
        lines.append(f"only in OLD (not compared): {', '.join(map(show_id, d.only_old))}")
    if d.only_new:
        lines.append(f"only in NEW (not compared): {', '.join(map(show_id, d.only_new))}")
    reg = d.regressed
    test = (f"two-sided Fisher exact test per task, {name} correction across "
            f"{plural(len(d.tasks), 'task')}, alpha {d.alpha}")
    if reg:
        verdict = (f"REGRESSED: {plural(len(reg), 'task')} got worse beyond repeat noise "
                   f"({', '.join(show_id(t.task_id) for t in reg)}); {test}")
    else:
        verdict = f"no task regressed beyond repeat noise ({test})"
    lines.append(f"**{verdict}**" if markdown else verdict)
    return "\n".join(lines)
