"""Tiered repeats, the per-task report and the dual gate (the chapter's ``src/stability.ts``).

Run ``python -m passk.stability`` for the chapter's demo (``npm run stability``
in the TypeScript companion): the on-call suite before and after the
deterministic-sort fix.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .adapter import HarnessAdapter, Task
from .metrics import (
    estimate_pass_at_k,
    estimate_pass_hat_k,
    exact_bootstrap_pass_hat_k_ci,
    flakiness,
    pass_hat_k_lower_bound,
)
from .protocol import Protocol
from .repeat_run import RepeatRun, repeat_run

__all__ = [
    "RepeatPolicy",
    "TaskReport",
    "GateResult",
    "SuiteReport",
    "classify",
    "GATE_ON",
    "reliability_gate",
    "suite_report",
    "evaluate_suite",
    "suite_protocol",
    "format_table",
    "DEMO_SEED",
    "run_demo",
]

#: Task classes, in the order a report lists them (the dangerous ones first).
CLASSES = ("flaky", "no-evidence", "stable-fail", "stable-pass")


@dataclass(frozen=True)
class RepeatPolicy:
    """How many times to run a task, from its risk label.

    Parameters
    ----------
    runs_by_risk : Mapping[str, int]
        Runs for each risk label.
    previously_flaky : int
        Runs for a task flagged ``previously_flaky``, whatever its label.
    default : int
        Runs for a label the mapping does not name.
    stopping : {'fixed', 'curtailed'}
        ``'fixed'`` runs every task its n times; ``'curtailed'`` (used by
        :func:`passk.runner.run_suite`) stops a task once its remaining runs
        can no longer change the gate's decision.

    Examples
    --------
    >>> policy = RepeatPolicy()
    >>> policy.runs_for(Task("t", risk="high-risk-write")), policy.runs_for(Task("u"))
    (12, 5)
    """

    runs_by_risk: Mapping[str, int] = field(
        default_factory=lambda: {"high-risk-write": 12, "read-only": 5}
    )
    previously_flaky: int = 12
    default: int = 5
    stopping: str = "fixed"

    def __post_init__(self) -> None:
        if self.stopping not in ("fixed", "curtailed"):
            raise ValueError(f"stopping ({self.stopping!r}) must be 'fixed' or 'curtailed'")
        for label, n in [*self.runs_by_risk.items(), ("previously_flaky", self.previously_flaky),
                         ("default", self.default)]:
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise ValueError(f"runs for {label!r} ({n!r}) must be a whole number >= 1")

    def runs_for(self, task: Task) -> int:
        """The number of runs ``task`` gets."""
        if task.previously_flaky:
            return max(self.previously_flaky, self.runs_by_risk.get(task.risk, self.default))
        return self.runs_by_risk.get(task.risk, self.default)


@dataclass(frozen=True)
class TaskReport:
    """One task's row of the report. NaN marks what its runs cannot estimate."""

    task_id: str
    risk: str
    runs: int
    successes: int
    pass_rate: float
    pass_at_k: float
    pass_hat_k: float
    flakiness: float
    ci: tuple[float, float]
    lower_bound: float
    cls: str


@dataclass(frozen=True)
class GateResult:
    """The dual gate's verdict.

    Attributes
    ----------
    overall : float
        Mean pass^k over tasks; NaN when some task's pass^k is not estimable.
    passed : bool
    flaky_tasks : tuple of str
        Tasks whose flakiness exceeds the cap.
    reasons : tuple of str
        Why the gate did not pass; empty when it passed.
    """

    overall: float
    passed: bool
    flaky_tasks: tuple[str, ...]
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class SuiteReport:
    """Per-task rows, the gate, and (when the suite was run here) the runs themselves."""

    k: int
    tasks: tuple[TaskReport, ...]
    gate: GateResult
    runs: tuple[RepeatRun, ...] = field(default=(), repr=False)
    protocol: Protocol | None = None

    def to_dict(self) -> dict[str, Any]:
        """The report JSON: one schema for every command's ``--json``; NaN becomes null.

        Keys: ``k``; ``tasks``, each with ``task_id``, ``risk``, ``runs``,
        ``successes``, ``pass_rate``, ``pass_at_k``, ``pass_hat_k``,
        ``flakiness``, ``ci``, ``lower_bound``, ``class``; ``gate`` with
        ``overall``, ``passed``, ``flaky_tasks``, ``reasons``; and ``protocol``
        (its settings and fingerprint, or null when the runs did not record one).
        """
        return {
            "k": self.k,
            "tasks": [
                {
                    "task_id": t.task_id, "risk": t.risk, "runs": t.runs,
                    "successes": t.successes, "pass_rate": _json_number(t.pass_rate),
                    "pass_at_k": _json_number(t.pass_at_k),
                    "pass_hat_k": _json_number(t.pass_hat_k),
                    "flakiness": _json_number(t.flakiness),
                    "ci": [_json_number(t.ci[0]), _json_number(t.ci[1])],
                    "lower_bound": _json_number(t.lower_bound), "class": t.cls,
                }
                for t in self.tasks
            ],
            "gate": {
                "overall": _json_number(self.gate.overall),
                "passed": self.gate.passed,
                "flaky_tasks": list(self.gate.flaky_tasks),
                "reasons": list(self.gate.reasons),
            },
            "protocol": self.protocol.to_dict() if self.protocol is not None else None,
        }


def _json_number(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else round(float(x), 6)


def classify(successes: int, total: int, *, max_flakiness: float = 0.2) -> str:
    """Sort a task into ``stable-pass``, ``stable-fail``, ``flaky`` or ``no-evidence``.

    A task is flaky when its flakiness exceeds the gate's cap; otherwise it is
    a stable pass or a stable fail by its majority outcome.

    Examples
    --------
    >>> classify(12, 12), classify(0, 5), classify(10, 12), classify(0, 0)
    ('stable-pass', 'stable-fail', 'flaky', 'no-evidence')
    """
    if total == 0:
        return "no-evidence"
    if flakiness(successes, total) > max_flakiness:
        return "flaky"
    return "stable-pass" if 2 * successes >= total else "stable-fail"


#: What a gate can compare with the bar: the pass^k estimate or its exact lower bound.
GATE_ON = ("estimate", "lower-bound")


def _runs_phrase(n: int) -> str:
    return "1 run is" if n == 1 else f"{n} runs are"


def reliability_gate(
    per_task: Sequence[TaskReport],
    *,
    min_overall_pass_hat_k: float = 0.7,
    max_flakiness: float = 0.2,
    ks: Sequence[int] | None = None,
    on: str = "estimate",
    min_runs: int = 0,
    excluded: Sequence[int] | None = None,
    settled_early: Mapping[str, int] | None = None,
    confidence: float = 0.95,
) -> GateResult:
    """The dual gate: mean pass^k at least a bar AND no task flakier than a cap.

    It fails closed. An empty suite, a task with no runs, a task with fewer
    runs than its k (pass^k not estimable) or than ``min_runs`` fails the
    gate, and each reason names the task and the figure beside the bar.

    Parameters
    ----------
    per_task : sequence of TaskReport
    min_overall_pass_hat_k : float, default 0.7
        The bar for the mean over tasks.
    max_flakiness : float, default 0.2
        The cap on any single task's flakiness.
    ks : sequence of int, optional
        Each task's k, when they differ (e.g. by risk); used in the reasons.
    on : {'estimate', 'lower-bound'}
        Compare the mean of the pass^k estimates with the bar, or the mean of
        each task's exact lower bound (so 3 of 3 does not clear a bar it has
        not earned).
    min_runs : int, default 0
        Fewer counted runs than this fails the task.
    excluded : sequence of int, optional
        Runs left out per task (infrastructure errors), mentioned in the reasons.
    settled_early : Mapping[str, int], optional
        Tasks that curtailed repetition stopped once their verdict was settled,
        with the runs they were planned; their few runs are not a reason of
        their own, and the mean is not estimated (the suite is blocked anyway).
    confidence : float, default 0.95
        The lower bounds' confidence, for the reasons.

    Returns
    -------
    GateResult

    Examples
    --------
    >>> rows = suite_report(["a", "b"], [10, 5], [12, 5], k=5).tasks
    >>> gate = reliability_gate(rows)
    >>> round(gate.overall, 3), gate.passed, gate.flaky_tasks
    (0.659, False, ('a',))
    >>> three = suite_report(["a"], [3], [3], k=1).tasks
    >>> reliability_gate(three, min_overall_pass_hat_k=0.9).passed
    True
    >>> gate = reliability_gate(three, min_overall_pass_hat_k=0.9, on="lower-bound")
    >>> gate.passed, round(gate.overall, 3)
    (False, 0.368)
    """
    if on not in GATE_ON:
        raise ValueError(f"on ({on!r}) must be one of {', '.join(GATE_ON)}")
    for name, value in (("min_overall_pass_hat_k", min_overall_pass_hat_k),
                        ("max_flakiness", max_flakiness)):
        if not 0 <= value <= 1:
            raise ValueError(f"{name} ({value!r}) must lie in [0, 1]")
    if not per_task:
        return GateResult(math.nan, False, (), ("no tasks: an empty suite is not evidence",))
    ks_ = list(ks) if ks is not None else [None] * len(per_task)
    out_ = list(excluded) if excluded is not None else [0] * len(per_task)
    early = dict(settled_early or {})
    uniform = len(set(ks_)) == 1
    reasons: list[str] = []
    for t, k, out in zip(per_task, ks_, out_):
        left = f" ({out} more left out as infrastructure errors)" if out else ""
        its_k = "" if uniform else f" (its k = {k}, risk {t.risk})"
        too_few = (t.runs < k) if k is not None else math.isnan(t.pass_hat_k)
        if t.runs == 0:
            reasons.append(f"task {t.task_id}: no runs, so no evidence{left}")
        elif too_few and t.task_id not in early:
            reasons.append(f"task {t.task_id}: {_runs_phrase(t.runs)} too few to estimate "
                           f"pass^{k or 'k'}{its_k}{left}")
        elif t.runs < min_runs and t.task_id not in early:
            reasons.append(f"task {t.task_id}: {t.runs} runs, fewer than the minimum "
                           f"{min_runs}{left}")
    if early:
        reasons.append(f"{len(early)} task(s) stopped early once the gate's verdict on them "
                       f"was settled: " + ", ".join(f"{tid} ({n} planned)"
                                                    for tid, n in early.items()))
    estimable = not reasons
    on_bound = on == "lower-bound"
    values = np.array([t.lower_bound if on_bound else t.pass_hat_k for t in per_task])
    overall = float(np.mean(values)) if estimable else math.nan
    what = "pass^k" if uniform else "pass^k (each task at its k)"
    if on_bound:
        what = f"lower bound on {what} (mean of per-task {confidence:.0%} exact bounds)"
    if estimable and overall < min_overall_pass_hat_k:
        reasons.append(f"overall {what} {overall:.3f} is below the bar "
                       f"{min_overall_pass_hat_k:.3f}: not met")
        if on_bound:
            below = [t for t, v in zip(per_task, values) if v < min_overall_pass_hat_k]
            shown = ", ".join(f"{t.task_id} ({t.successes}/{t.runs} passed, bound "
                              f"{t.lower_bound:.3f})" for t in below[:10])
            more = f", and {len(below) - 10} more" if len(below) > 10 else ""
            reasons.append(f"tasks whose lower bound is under the bar: {shown}{more}")
    flaky = tuple(t.task_id for t in per_task if t.runs and t.flakiness > max_flakiness)
    flaky_ids = set(flaky)  # a set: membership stays O(1) for suites of 10**5 tasks
    for t in per_task:
        if t.task_id in flaky_ids:
            reasons.append(f"task {t.task_id}: flakiness {t.flakiness:.3f} exceeds the cap "
                           f"{max_flakiness:.3f} ({t.successes}/{t.runs} passed)")
    return GateResult(overall, not reasons, flaky, tuple(reasons))


def suite_report(
    task_ids: Sequence[str],
    successes: Iterable[int],
    totals: Iterable[int],
    *,
    risks: Sequence[str] | None = None,
    k: int = 5,
    confidence: float = 0.95,
    min_overall_pass_hat_k: float = 0.7,
    max_flakiness: float = 0.2,
) -> SuiteReport:
    """Score a suite from per-task counts: every estimator in one vectorized call each.

    Examples
    --------
    >>> report = suite_report(["payment-alert", "read"], [10, 5], [12, 5], k=5)
    >>> [round(t.pass_hat_k, 4) for t in report.tasks]
    [0.3182, 1.0]
    """
    c = np.asarray(list(successes), dtype=np.int64)
    n = np.asarray(list(totals), dtype=np.int64)
    if not (len(task_ids) == c.size == n.size):
        raise ValueError(f"task_ids ({len(task_ids)}), successes ({c.size}) and totals "
                         f"({n.size}) must have the same length")
    risks = list(risks) if risks is not None else ["read-only"] * len(task_ids)
    with np.errstate(invalid="ignore", divide="ignore"):
        pass_rate = np.where(n > 0, c / np.maximum(n, 1), np.nan)
    at_k = np.atleast_1d(estimate_pass_at_k(c, n, k))
    hat_k = np.atleast_1d(estimate_pass_hat_k(c, n, k))
    flaky = np.atleast_1d(flakiness(c, n))
    low, high = (np.atleast_1d(x) for x in exact_bootstrap_pass_hat_k_ci(c, n, k,
                                                                          confidence=confidence))
    bound = np.atleast_1d(pass_hat_k_lower_bound(c, n, k, confidence=confidence))
    is_flaky = flaky > max_flakiness
    cls = np.where(n == 0, "no-evidence",
                   np.where(is_flaky, "flaky", np.where(2 * c >= n, "stable-pass", "stable-fail")))
    rows = tuple(
        TaskReport(str(tid), str(risk), int(ni), int(ci), float(pr), float(a), float(h), float(f),
                   (float(lo), float(hi)), float(b), str(cl))
        for tid, risk, ni, ci, pr, a, h, f, lo, hi, b, cl in zip(
            task_ids, risks, n, c, pass_rate, at_k, hat_k, flaky, low, high, bound, cls)
    )
    gate = reliability_gate(rows, min_overall_pass_hat_k=min_overall_pass_hat_k,
                            max_flakiness=max_flakiness)
    return SuiteReport(k, rows, gate)


def suite_protocol(adapter: object, tasks: Sequence[Task], policy: RepeatPolicy, *, k: int,
                   max_retries: int, timeout: float | None, min_overall_pass_hat_k: float,
                   max_flakiness: float) -> Protocol:
    """The settings that define a suite's measurement (not how fast it ran).

    The adapter contributes its own settings when it has a ``protocol()`` method.
    """
    settings: dict[str, Any] = {
        "adapter": f"{type(adapter).__module__}.{type(adapter).__qualname__}",
        "k": k, "runs_by_risk": dict(policy.runs_by_risk),
        "previously_flaky_runs": policy.previously_flaky, "default_runs": policy.default,
        "stopping": policy.stopping, "max_retries": max_retries, "timeout": timeout,
        "min_overall_pass_hat_k": min_overall_pass_hat_k, "max_flakiness": max_flakiness,
        "tasks": sorted(t.task_id for t in tasks),
    }
    protocol_of = getattr(adapter, "protocol", None)
    if callable(protocol_of):
        settings["adapter_settings"] = protocol_of()
    return Protocol(settings)


def evaluate_suite(
    adapter: HarnessAdapter,
    tasks: Sequence[Task],
    policy: RepeatPolicy | Mapping[str, int] | None = None,
    *,
    k: int = 5,
    seed: int = 0,
    executor: Executor | None = None,
    progress: bool = False,
    min_overall_pass_hat_k: float = 0.7,
    max_flakiness: float = 0.2,
) -> SuiteReport:
    """Run every task as often as its risk demands, score it, and gate the suite.

    Parameters
    ----------
    adapter : HarnessAdapter
    tasks : sequence of Task
    policy : RepeatPolicy or Mapping[str, int], optional
        Runs per risk label; a plain mapping is ``RepeatPolicy(runs_by_risk=...)``.
        Defaults to the chapter's tiers (12 for high-risk writes, 5 for reads).
    k : int, default 5
    seed : int, default 0
        Suite seed; see :func:`passk.repeat_run.run_seed`.
    executor : concurrent.futures.Executor, optional
    progress : bool, default False
    min_overall_pass_hat_k, max_flakiness : float
        The gate's bar and cap.

    Returns
    -------
    SuiteReport
        With ``runs`` holding every task's :class:`~passk.repeat_run.RepeatRun`.

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
    runs = tuple(
        repeat_run(adapter, task, policy.runs_for(task), seed=seed, executor=executor,
                   progress=progress)
        for task in tasks
    )
    report = suite_report(
        [r.task.task_id for r in runs], [r.successes for r in runs], [r.total for r in runs],
        risks=[r.task.risk for r in runs], k=k,
        min_overall_pass_hat_k=min_overall_pass_hat_k, max_flakiness=max_flakiness,
    )
    protocol = suite_protocol(adapter, tasks, policy, k=k, max_retries=0, timeout=None,
                              min_overall_pass_hat_k=min_overall_pass_hat_k,
                              max_flakiness=max_flakiness)
    return replace(report, runs=runs, protocol=protocol)


# --------------------------------------------------------------------------
# printing
# --------------------------------------------------------------------------


def _cell(x: float, digits: int = 3) -> str:
    return "-" if not math.isfinite(x) else f"{x:.{digits}f}"


def format_table(report: SuiteReport, *, markdown: bool = False, flaky_first: bool = False) -> str:
    """The report as an aligned text table (or a Markdown table) followed by the gate.

    Examples
    --------
    >>> print(format_table(suite_report(["a"], [12], [12], k=5)))  # doctest: +NORMALIZE_WHITESPACE
    task  risk       runs  passed  pass@5  pass^5  95% CI          lower  flakiness  class
    a     read-only    12      12   1.000   1.000  [1.000, 1.000]  0.287      0.000  stable-pass
    gate: PASSED  overall pass^5 = 1.000
    """
    k = report.k
    header = ["task", "risk", "runs", "passed", f"pass@{k}", f"pass^{k}", "95% CI", "lower",
              "flakiness", "class"]
    rows = report.tasks
    if flaky_first:
        rows = tuple(sorted(rows, key=lambda t: (CLASSES.index(t.cls), -_nan_low(t.flakiness))))
    body = [
        [t.task_id, t.risk, str(t.runs), str(t.successes), _cell(t.pass_at_k), _cell(t.pass_hat_k),
         f"[{_cell(t.ci[0])}, {_cell(t.ci[1])}]", _cell(t.lower_bound), _cell(t.flakiness), t.cls]
        for t in rows
    ]
    numeric = {2, 3, 4, 5, 7, 8}
    gate = report.gate
    verdict = (f"gate: {'PASSED' if gate.passed else 'BLOCKED'}  "
               f"overall pass^{k} = {_cell(gate.overall)}")
    if markdown:
        lines = ["| " + " | ".join(header) + " |",
                 "|" + "|".join("---:" if i in numeric else "---" for i in range(len(header))) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in body]
        lines += ["", f"**{verdict}**"] + [f"- {reason}" for reason in gate.reasons]
        return "\n".join(lines)
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    lines = ["  ".join(c.rjust(w) if i in numeric else c.ljust(w)
                       for i, (c, w) in enumerate(zip(r, widths))).rstrip()
             for r in [header, *body]]
    lines.append(verdict)
    lines += [f"  - {reason}" for reason in gate.reasons]
    return "\n".join(lines)


def _nan_low(x: float) -> float:
    return -1.0 if math.isnan(x) else x


# --------------------------------------------------------------------------
# the chapter's demo
# --------------------------------------------------------------------------

#: A suite seed under which the runbook task passes 10 of its 12 runs, as in
#: the chapter (found by ``tests/test_stability.py::test_demo_seed_is_the_first``).
DEMO_SEED = 3


def run_demo(seed: int = DEMO_SEED, *, k: int = 5) -> tuple[SuiteReport, SuiteReport]:
    """The chapter's demo: the suite with the tie-order nondeterminism, then with the fix."""
    from .flaky_adapter import OnCallSimulator, demo_tasks

    before = evaluate_suite(OnCallSimulator(), demo_tasks(), k=k, seed=seed)
    after = evaluate_suite(OnCallSimulator(deterministic_sort=True), demo_tasks(), k=k, seed=seed)
    return before, after


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m passk.stability [--seed S] [--json]``."""
    parser = argparse.ArgumentParser(prog="python -m passk.stability",
                                     description="The chapter's stability demo.")
    parser.add_argument("--seed", type=int, default=DEMO_SEED, help="suite seed")
    parser.add_argument("--k", type=int, default=5, help="k of pass^k (default 5)")
    parser.add_argument("--json", action="store_true", help="print the report JSON")
    args = parser.parse_args(argv)
    before, after = run_demo(args.seed, k=args.k)
    if args.json:
        print(json.dumps({"seed": args.seed, "k": args.k, "before": before.to_dict(),
                          "after": after.to_dict()}, indent=2))
        return 0
    print(f"seed {args.seed}, k = {args.k}; runs per task: high-risk-write 12, read-only 5\n")
    print("Before: search_runbook returns tied fragments in an unstable order")
    print(format_table(before))
    print("\nAfter: deterministic sort (score descending, then fragment id)")
    print(format_table(after))
    return 0


if __name__ == "__main__":
    sys.exit(main())
