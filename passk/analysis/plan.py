"""Which tasks can more runs still change, and how many runs settle them: ``passk plan FILE``.

A task *clears* when, alone against the dual gate, it has enough runs, its
pass^k (or exact lower bound) reaches the bar and its flakiness stays under the
cap. More runs, up to a task's maximum n, may flip that; the plan says which
tasks are still open and the worst case of runs before each is settled. The
all-pass table (``passk plan`` without a file) is :func:`passk.metrics.runs_needed`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from passk.metrics import estimate_pass_hat_k, flakiness, pass_hat_k_lower_bound
from passk.render.tables import format_rows
from passk.results.read import Results
from passk.stability import DEFAULT_CRITERIA, RepeatPolicy

__all__ = ["TaskPlan", "format_plan", "plan_tasks", "policy_max_runs"]


def _verdict_grid(kk: int, top: int, *, bar: float, cap: float, gate_on: str, min_runs: int,
                  confidence: float) -> np.ndarray:
    """verdict[n, c] for 0 <= c <= n <= top: does a task with c of n clear the bar alone?"""
    n_grid, c_grid = np.meshgrid(np.arange(top + 1), np.arange(top + 1), indexing="ij")
    valid = c_grid <= n_grid
    c_ = np.where(valid, c_grid, 0)
    with np.errstate(invalid="ignore"):
        if gate_on == "lower-bound":
            value = pass_hat_k_lower_bound(c_, n_grid, kk, confidence=confidence)
        else:
            value = estimate_pass_hat_k(c_, n_grid, kk)
        flaky = flakiness(c_, n_grid)
    enough = n_grid >= max(kk, min_runs, 1)
    ok = valid & enough & (np.nan_to_num(value, nan=-1.0) >= bar) & \
        (np.nan_to_num(flaky, nan=2.0) <= cap)
    return np.asarray(ok)


def _settle_grid(verdict: np.ndarray) -> np.ndarray:
    """worst[n, c]: extra runs, at most, before no run up to the top can change the verdict."""
    top = verdict.shape[0] - 1
    all_pass = verdict.copy()
    all_fail = ~verdict
    worst = np.zeros(verdict.shape, dtype=np.int64)
    for n in range(top - 1, -1, -1):
        c = np.arange(n + 1)
        all_pass[n, c] = verdict[n, c] & all_pass[n + 1, c] & all_pass[n + 1, c + 1]
        all_fail[n, c] = ~verdict[n, c] & all_fail[n + 1, c] & all_fail[n + 1, c + 1]
        settled = all_pass[n, c] | all_fail[n, c]
        worst[n, c] = np.where(settled, 0,
                               1 + np.maximum(worst[n + 1, c], worst[n + 1, c + 1]))
    return worst


@dataclass(frozen=True)
class TaskPlan:
    """One task's plan: its verdict alone against the gate now, and whether more runs can flip it.

    ``clears`` is the verdict now; ``open`` says some outcome of further runs,
    up to ``max_runs`` in all, would flip it; ``extra_at_most`` is the worst
    case of runs needed before nothing can (0 when settled).
    """

    task_id: str
    risk: str
    runs: int
    successes: int
    k: int
    max_runs: int
    clears: bool
    open: bool
    extra_at_most: int


def plan_tasks(results: Results, ks: Sequence[int], max_runs: Sequence[int], *,
               min_overall_pass_hat_k: float = DEFAULT_CRITERIA.min_overall_pass_hat_k, max_flakiness: float = DEFAULT_CRITERIA.max_flakiness,
               gate_on: str = DEFAULT_CRITERIA.on, min_runs: int = 0,
               confidence: float = 0.95) -> list[TaskPlan]:
    """For each task: does it clear the bar on its own now, and can more runs change that?

    A task *clears* when it has enough runs (its k and ``min_runs``), its
    pass^k (or exact lower bound, for ``gate_on="lower-bound"``) is at least
    the bar, and its flakiness is at most the cap: the dual gate applied to
    the task alone. It is *open* when some outcome of further runs, up to
    ``max_runs`` in all, would flip that; ``extra_at_most`` is the worst case
    over outcome sequences of the runs needed before no further run can flip
    it (0 when settled). Computed once per distinct (k, max_runs) on the grid
    of all (c, n), so a suite of 10**5 tasks costs the same as a few.

    Examples
    --------
    >>> from passk.results.read import Run, results_from_runs
    >>> r = results_from_runs([Run("a", True, t) for t in range(3)])
    >>> p = plan_tasks(r, [1], [12], min_overall_pass_hat_k=0.7, gate_on="lower-bound")[0]
    >>> p.clears, p.open, p.extra_at_most
    (False, True, 9)
    """
    c, n = results.successes, results.totals
    out: list[TaskPlan] = []
    grids: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
    for i, tid in enumerate(results.task_ids):
        kk, cap_n = int(ks[i]), int(max_runs[i])
        ci, ni = int(c[i]), int(n[i])
        top = max(cap_n, ni)
        key = (kk, top)
        if key not in grids:
            v = _verdict_grid(kk, top, bar=min_overall_pass_hat_k, cap=max_flakiness,
                              gate_on=gate_on, min_runs=min_runs, confidence=confidence)
            trimmed = v[: cap_n + 1, : cap_n + 1] if cap_n >= 0 else v
            grids[key] = (v, _settle_grid(trimmed) if cap_n >= 1 else np.zeros_like(v, int))
        v, worst = grids[key]
        clears = bool(v[ni, ci])
        extra = int(worst[ni, ci]) if ni < cap_n else 0
        out.append(TaskPlan(tid, results.risks[i], ni, ci, kk, cap_n, clears, extra > 0, extra))
    return out




def format_plan(plans: Sequence[TaskPlan], *, markdown: bool = False) -> str:
    """The plan as a table, open tasks first (most extra runs on top), and a summary line."""
    header = ["task", "risk", "n", "passed", "k", "max n", "verdict now", "can change",
              "extra runs at most"]
    order = sorted(range(len(plans)), key=lambda i: (not plans[i].open,
                                                      -plans[i].extra_at_most))
    body = [[p.task_id, p.risk, str(p.runs), str(p.successes), str(p.k), str(p.max_runs),
             "clears" if p.clears else "fails", "yes" if p.open else "no",
             str(p.extra_at_most)] for p in (plans[i] for i in order)]
    total = sum(p.extra_at_most for p in plans)
    n_open = sum(p.open for p in plans)
    lines = [format_rows(header, body, numeric={2, 3, 4, 5, 8}, markdown=markdown), "",
             (f"{n_open} of {len(plans)} tasks can still change their verdict; the suite "
              f"needs at most {total} more runs to settle.")]
    return "\n".join(lines)




def policy_max_runs(results: Results, max_n: int | None,
                    policy: RepeatPolicy | None = None) -> list[int]:
    """Each task's maximum n: ``max_n`` if given, else its risk tier's runs in the policy."""
    if max_n is not None:
        return [int(max_n)] * len(results)
    policy = policy or RepeatPolicy()
    return [policy.runs_by_risk.get(r, policy.default) for r in results.risks]
