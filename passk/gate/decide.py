"""The one decision: the gate's verdict and every reason in it.

The command line, :func:`passk.run_suite` and the pytest plugin each gather
their evidence (the per-task rows, what was left out, what a curtailed run
settled early, what fell short of its plan, a comparison with a baseline) and
call :func:`decide`. It is the only place a verdict is made and the only place
a reason is added to one: nothing is appended afterwards.

The reasons come in a fixed order: the suite and each task
(:func:`passk.stability.reliability_gate`, the chapter's dual gate), what
blocks a curtailed run whatever its runs not made would give, tasks short of
their planned runs, incomplete inputs, and the baseline comparison.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from passk.stability import GateCriteria, GateResult, TaskReport, reliability_gate

if TYPE_CHECKING:
    from passk.compare import PairedComparison

__all__ = ["Baseline", "decide"]


@dataclass(frozen=True)
class Baseline:
    """What a comparison with a baseline says, for the gate.

    Attributes
    ----------
    suite : PairedComparison or None
        The paired comparison of the suite's mean pass^k (None when no task is
        paired).
    regressed : tuple of (str, float)
        Tasks whose success rate fell beyond repeat noise, each with its
        adjusted p-value.
    incomplete : tuple of str
        The baseline's own gaps, one sentence each (it fails closed on them
        unless incomplete inputs are accepted).
    """

    suite: PairedComparison | None = None
    regressed: tuple[tuple[str, float], ...] = ()
    incomplete: tuple[str, ...] = ()


def _baseline_reasons(baseline: Baseline, accept_incomplete: bool) -> list[str]:
    reasons = [f"task {task}: regressed against the baseline beyond repeat noise "
               f"(adjusted p = {p:.3g})" for task, p in baseline.regressed]
    if not accept_incomplete:
        reasons += [f"baseline {line} (--accept-incomplete to compare anyway)"
                    for line in baseline.incomplete]
    s = baseline.suite
    if s is not None:
        shown = (f"mean pass^{s.k} {s.delta:+.3f} against the baseline, {s.confidence:.0%} "
                 f"interval [{s.ci.low:+.3f}, {s.ci.high:+.3f}] over {s.paired_tasks} "
                 "paired tasks")
        if s.verdict == "worse":  # fails closed: with a margin, non-inferiority must be shown
            reasons.append(f"suite: worse: {shown}")
        elif s.margin is not None and s.verdict != "non-inferior":
            reasons.append(f"suite: non-inferiority within {s.margin:g} not shown: {shown}")
    return reasons


def _curtailment_reasons(rows: Sequence[TaskReport], criteria: GateCriteria,
                         settled_early: Mapping[str, int], excluded: Sequence[int] | None,
                         ks: Sequence[int] | None) -> tuple[str, ...]:
    """What blocks a curtailed suite whatever its runs not made give, from its rows."""
    from passk.gate.curtailment import task_outlook, why_blocked

    out = list(excluded) if excluded is not None else [0] * len(rows)
    ks_ = list(ks) if ks is not None else [t.k or criteria.k for t in rows]
    planned = [settled_early.get(t.task_id, t.runs + x) for t, x in zip(rows, out)]
    remaining = [max(n - t.runs - x, 0) for t, x, n in zip(rows, out, planned)]
    outlooks = [task_outlook(t.successes, t.runs - t.successes, r, k=k,
                             max_flakiness=criteria.max_flakiness, min_runs=criteria.min_runs,
                             on=criteria.on, confidence=criteria.confidence)
                for t, r, k in zip(rows, remaining, ks_)]
    return why_blocked([t.task_id for t in rows], outlooks, remaining, planned,
                       [t.runs + r for t, r in zip(rows, remaining)], criteria, ks=ks_)


def _proved_gate(rows: Sequence[TaskReport], criteria: GateCriteria, ks: Sequence[int] | None,
                 excluded: Sequence[int] | None, settled_early: Mapping[str, int] | None,
                 excluded_reason: str) -> GateResult:
    """The proved modes (issue 29): the estimability reasons of the dual gate (bar 0, cap 1),
    then :func:`passk.stats.operating.gate_decision`'s suite bound and steadiness."""
    from passk.stats.operating import flaky_band, gate_decision, runs_to_prove_steady
    base = reliability_gate(rows, min_overall_pass_hat_k=0.0, max_flakiness=1.0, ks=ks,
                            on=criteria.on, min_runs=criteria.min_runs, excluded=excluded,
                            settled_early=settled_early, confidence=criteria.confidence,
                            excluded_reason=excluded_reason)
    ks_ = [int(k) for k in ks] if ks is not None else [t.k or criteria.k for t in rows]
    if not rows or len(set(ks_)) > 1:
        why = ("" if rows else "no tasks") or "the proved modes need one k for the suite"
        return replace(base, passed=False, reasons=base.reasons or (why,))
    d = gate_decision([t.successes for t in rows], [t.runs for t in rows], criteria, ks=ks_)
    reasons = list(base.reasons)
    what = f"proved lower bound on pass^{ks_[0]}"
    if not reasons and not d.suite_ok:
        reasons.append(f"suite: the {criteria.confidence:.0%} lower bound {d.suite_value:.3f} "
                       f"on mean pass^{ks_[0]} (passk's proved suite interval) is below the bar "
                       f"{criteria.min_overall_pass_hat_k:.3f}: not shown")
    low, high = flaky_band(criteria.max_flakiness)
    need = runs_to_prove_steady(criteria.max_flakiness, criteria.confidence) \
        if criteria.max_flakiness > 0 else None
    for i in d.blocked:
        t = rows[i]
        reasons.append(f"task {t.task_id}: not proved steady ({t.successes}/{t.runs} passed): "
                       f"its exact {criteria.confidence:.0%} bounds do not put p outside the "
                       f"flaky band ({low:.3f}, {high:.3f})"
                       + (f"; {need} runs all passing would" if need else ""))
    shown = d.blocked if criteria.mode == "proved" else d.warned
    return GateResult(d.suite_value, not reasons, tuple(rows[i].task_id for i in shown),
                      tuple(reasons), what=what, bar=criteria.min_overall_pass_hat_k,
                      cap=criteria.max_flakiness)


def decide(
    rows: Sequence[TaskReport],
    criteria: GateCriteria,
    *,
    ks: Sequence[int] | None = None,
    excluded: Sequence[int] | None = None,
    excluded_reason: str = "infrastructure errors",
    settled_early: Mapping[str, int] | None = None,
    curtailment: Sequence[str] | None = None,
    unfinished: Sequence[str] = (),
    incomplete: Sequence[str] = (),
    accept_incomplete: bool = False,
    baseline: Baseline | None = None,
) -> GateResult:
    """The gate's verdict on a suite, with every reason that blocks it.

    It fails closed: any reason blocks. The suite and each task are judged by
    the chapter's dual gate (:func:`passk.stability.reliability_gate`: mean
    pass^k at least the bar AND no task flakier than the cap, with too few
    runs a reason of its own); then, when a curtailed run's gate on its runs
    made blocks, what blocks it whatever the runs not made would give; then
    tasks short of their planned runs (the mean is then not estimated);
    incomplete inputs (unless accepted); and the comparison with a baseline.

    Parameters
    ----------
    rows : sequence of TaskReport
        One per task (:func:`passk.stability.suite_report`'s ``tasks``).
    criteria : GateCriteria
        The bar, the cap, what the bar is compared with, the confidence of the
        lower bounds and the fewest runs a task needs.
    ks : sequence of int, optional
        Each task's k when they differ; default each row's own.
    excluded, excluded_reason
        Runs left out per task, and what they were, for the reasons.
    settled_early : Mapping[str, int], optional
        Tasks a curtailed run stopped once their verdict was settled, each with
        its planned runs.
    curtailment : sequence of str, optional
        What blocks a curtailed run whatever its runs not made give
        (:func:`passk.gate.curtailment.why_blocked`); said when it blocks. By
        default computed here from the rows and ``settled_early`` (the runs not
        made are each settled task's planned runs less those made); the
        runner and the pytest plugin, which know each run's fate, pass theirs.
    unfinished : sequence of str
        One sentence per task short of its planned runs for a reason other
        than curtailment (skipped, deselected, a session cut short).
    incomplete : sequence of str
        One sentence per way the inputs fall short of their own plan.
    accept_incomplete : bool, default False
        Gate on incomplete inputs anyway.
    baseline : Baseline, optional
        The comparison with a baseline version.

    Returns
    -------
    GateResult

    Examples
    --------
    >>> from passk.stability import suite_report
    >>> rows = suite_report(["a", "b"], [12, 12], [12, 12], k=5).tasks
    >>> decide(rows, GateCriteria(k=5)).passed
    True
    >>> gate = decide(rows, GateCriteria(k=5), incomplete=["2 of 3 tasks ran"])
    >>> gate.passed, gate.reasons[0]
    (False, 'incomplete results: 2 of 3 tasks ran (--accept-incomplete to gate on them anyway)')
    """
    gate = reliability_gate(
        rows, min_overall_pass_hat_k=criteria.min_overall_pass_hat_k,
        max_flakiness=criteria.max_flakiness, ks=ks, on=criteria.on,
        min_runs=criteria.min_runs, excluded=excluded, settled_early=settled_early,
        confidence=criteria.confidence, excluded_reason=excluded_reason)
    if criteria.mode != "chapter":
        gate = _proved_gate(rows, criteria, ks, excluded, settled_early, excluded_reason)
    reasons = list(gate.reasons)
    if settled_early and not gate.passed:
        reasons += (curtailment if curtailment is not None else
                    _curtailment_reasons(rows, criteria, settled_early, excluded, ks))
    reasons += unfinished
    if not accept_incomplete:
        reasons += [f"incomplete results: {why} (--accept-incomplete to gate on them anyway)"
                    for why in incomplete]
    if baseline is not None:
        reasons += _baseline_reasons(baseline, accept_incomplete)
    overall = math.nan if unfinished else gate.overall
    return replace(gate, overall=overall, passed=not reasons, reasons=tuple(reasons))
