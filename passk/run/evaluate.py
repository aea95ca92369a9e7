"""Run a suite in memory, score it and judge it: the chapter's ``evaluate_suite`` and demo.

:func:`evaluate_suite` runs every task its tiered number of times
(:func:`passk.repeats.repeat_run`), scores the counts
(:func:`passk.stability.suite_report`) and asks the one judge
(:func:`passk.gate.judge.judge`) for the verdict. ``passk demo`` and
``python -m passk.stability`` print :func:`demo_text`.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import replace

import numpy as np

from passk._public import publish
from passk.adapter import HarnessAdapter, Task
from passk.criteria import DEFAULT_CRITERIA, GateCriteria
from passk.gate.judge import judge_suite
from passk.repeats import RepeatRun, repeat_run
from passk.results.counts import Results
from passk.stability import (
    CLASS_THRESHOLD,
    DEMO_SEED,
    RepeatPolicy,
    SuiteReport,
    format_table,
    suite_protocol,
)

__all__ = ["DEMO_SEED", "demo_text", "evaluate_suite", "judged_report", "main", "results_of",
           "run_demo"]


def judged_report(task_ids: Sequence[str], successes: Sequence[int] | np.ndarray,
                  totals: Sequence[int] | np.ndarray, *, risks: Sequence[str] | None = None,
                  k: int | Sequence[int] | np.ndarray = 5,
                  criteria: GateCriteria | None = None, confidence: float = 0.95,
                  ci_method: str = "exact", class_threshold: float = CLASS_THRESHOLD,
                  excluded: Sequence[int] | None = None, excluded_reason: str = "",
                  settled_early: Mapping[str, int] | None = None) -> SuiteReport:
    """Per-task counts scored (:func:`passk.stability.suite_report`) and judged
    (:func:`passk.gate.judge.judge`): the chapter's report with its verdict.

    ``criteria`` default: :data:`passk.criteria.DEFAULT_CRITERIA` at this ``k``
    (its smallest, when tasks have their own) and ``confidence``.

    Examples
    --------
    >>> report = judged_report(["payment-alert", "read"], [10, 5], [12, 5], k=5)
    >>> [round(t.pass_hat_k, 4) for t in report.tasks], report.gate.passed
    ([0.3182, 1.0], False)
    """
    ids = tuple(task_ids)
    c = np.asarray(list(successes), dtype=np.int64)
    n = np.asarray(list(totals), dtype=np.int64)
    ks = (np.full(len(ids), k, dtype=np.int64) if isinstance(k, int)
          else np.asarray(k, dtype=np.int64).ravel())
    if criteria is None:
        criteria = replace(DEFAULT_CRITERIA, k=int(ks.min(initial=1)), confidence=confidence)
    elif criteria.confidence != confidence:
        criteria = replace(criteria, confidence=confidence)
    out = np.zeros(len(ids), dtype=np.int64) if excluded is None else np.asarray(excluded)
    results = Results(ids, c, n, out.astype(np.int64),
                      tuple(risks) if risks is not None else ("read-only",) * len(ids),
                      source="passk", excluded_reason=excluded_reason,
                      settled_early=dict(settled_early or {}))
    return judge_suite(results, criteria, k=k, ks=ks.tolist(), ci_method=ci_method,
                       class_threshold=class_threshold)


def results_of(runs: Sequence[RepeatRun]) -> Results:
    """The counts of in-memory runs as :class:`~passk.results.counts.Results`, for the judge.

    Examples
    --------
    >>> from passk.flaky_adapter import OnCallSimulator, demo_tasks
    >>> runs = [repeat_run(OnCallSimulator(), t, 3, seed=0) for t in demo_tasks()]
    >>> results_of(runs).totals.tolist()
    [3, 3, 3]
    """
    return Results(tuple(r.task.task_id for r in runs),
                   np.asarray([r.successes for r in runs], dtype=np.int64),
                   np.asarray([r.total for r in runs], dtype=np.int64),
                   np.zeros(len(runs), dtype=np.int64), tuple(r.task.risk for r in runs),
                   source="passk")


def evaluate_suite(
    adapter: HarnessAdapter,
    tasks: Sequence[Task],
    policy: RepeatPolicy | Mapping[str, int] | None = None,
    *,
    k: int = 5,
    seed: int = 0,
    executor: Executor | None = None,
    progress: bool = False,
    min_overall_pass_hat_k: float = DEFAULT_CRITERIA.min_overall_pass_hat_k,
    max_flakiness: float = DEFAULT_CRITERIA.max_flakiness,
) -> SuiteReport:
    """Run every task as often as its risk demands, score it, and gate the suite.

    Parameters
    ----------
    adapter : HarnessAdapter
    tasks : sequence of Task
    policy : RepeatPolicy or Mapping[str, int], optional
        Runs per risk label; a plain mapping is ``RepeatPolicy(runs_by_risk=...)``.
        Defaults to the chapter's tiers (12 for high-risk writes, 5 for reads).
        Its ``stopping`` must be ``'fixed'`` (ValueError otherwise): for curtailed
        repetition use :func:`passk.run.runner.run_suite`.
    k : int, default 5
    seed : int, default 0
        Suite seed; see :func:`passk.repeats.run_seed`.
    executor : concurrent.futures.Executor, optional
    progress : bool, default False
    min_overall_pass_hat_k, max_flakiness : float
        The gate's bar and cap.

    Returns
    -------
    SuiteReport
        With ``gate`` the judge's verdict (:func:`passk.gate.judge.judge`) and ``runs``
        holding every task's :class:`~passk.repeats.RepeatRun`.

    Examples
    --------
    >>> from passk.flaky_adapter import OnCallSimulator, demo_tasks
    >>> report = evaluate_suite(OnCallSimulator(), demo_tasks(), seed=DEMO_SEED)
    >>> report.tasks[0].successes, report.tasks[0].runs, report.gate.passed
    (10, 12, False)
    """
    if policy is None:
        policy = RepeatPolicy()
    elif not isinstance(policy, RepeatPolicy):
        policy = RepeatPolicy(runs_by_risk=dict(policy))
    if policy.stopping != "fixed":  # the protocol records what ran: refuse what cannot run here
        raise ValueError(f"stopping ({policy.stopping!r}): evaluate_suite runs every task its n "
                         "times; curtailed repetition is passk.run_suite's")
    runs = tuple(
        repeat_run(adapter, task, policy.runs_for(task), seed=seed, executor=executor,
                   progress=progress)
        for task in tasks
    )
    results = results_of(runs)
    criteria = GateCriteria(k=k, min_overall_pass_hat_k=min_overall_pass_hat_k,
                            max_flakiness=max_flakiness)
    protocol = suite_protocol(adapter, tasks, policy, k=k, max_retries=0, timeout=None,
                              min_overall_pass_hat_k=min_overall_pass_hat_k,
                              max_flakiness=max_flakiness)
    return replace(judge_suite(results, criteria, k=k, protocol=protocol), runs=runs)




# --------------------------------------------------------------------------
# the chapter's demo
# --------------------------------------------------------------------------

def run_demo(seed: int = DEMO_SEED, *, k: int = 5) -> tuple[SuiteReport, SuiteReport]:
    """The chapter's demo: the suite with the tie-order nondeterminism, then with the fix."""
    from passk.flaky_adapter import OnCallSimulator, demo_tasks

    before = evaluate_suite(OnCallSimulator(), demo_tasks(), k=k, seed=seed)
    after = evaluate_suite(OnCallSimulator(deterministic_sort=True), demo_tasks(), k=k, seed=seed)
    return before, after


def demo_text(seed: int = DEMO_SEED, *, k: int = 5, as_json: bool = False) -> str:
    """What ``passk demo`` and ``python -m passk.stability`` print: the suite, before and after."""
    before, after = run_demo(seed, k=k)
    if as_json:
        import json

        return json.dumps({"seed": seed, "k": k, "before": before.to_dict(),
                           "after": after.to_dict()}, indent=2, allow_nan=False)
    return "\n".join([
        f"seed {seed}, k = {k}; runs per task: high-risk-write 12, read-only 5\n",
        "Before: search_runbook returns tied fragments in an unstable order",
        format_table(before),
        "\nAfter: deterministic sort (score descending, then fragment id)",
        format_table(after)])


def main(argv: Sequence[str] | None = None, *, prog: str = "python -m passk.run.evaluate"
         ) -> int:
    """``python -m passk.stability [--seed S] [--k K] [--json]``: the same as ``passk demo``.

    It parses its own three options, so that this module never imports the
    command-line module (which imports it).
    """
    import argparse

    parser = argparse.ArgumentParser(prog=prog,
                                     description="the chapter's stability demo, before and "
                                     "after the fix (the same as passk demo)")
    parser.add_argument("--seed", type=int, default=DEMO_SEED)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.k < 1:
        parser.error(f"argument --k: {args.k} must be at least 1")
    print(demo_text(args.seed, k=args.k, as_json=args.json))  # noqa: T201  # the demo's output
    return 0


publish(globals())  # the names passk.__all__ takes from here say 'passk' (passk._public)


if __name__ == "__main__":
    sys.exit(main())
