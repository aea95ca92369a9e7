"""The one judge: a verdict from ``Results``, the criteria and an optional baseline.

:func:`judge` is the only place a verdict is made and the only place a reason is
added to one. The command line (``passk gate``, ``report``, ``run``),
:func:`passk.run_suite`, :func:`passk.run.evaluate.evaluate_suite` and the demo,
the pytest plugin and the book's pages each build ``Results`` and call it; none
of them amends what it returns.

The reasons come in a fixed order:

1. the suite and each task, by the chapter's dual gate
   (:func:`passk.stability.reliability_gate`: the mean pass^k at least the bar
   AND no task flakier than the cap; too few runs a reason of its own);
2. when a curtailed run's gate on its runs made blocks, what blocks it whatever
   its runs not made would give (built here, from ``results.settled_early``);
3. tasks short of their planned runs for another reason (``unfinished``);
4. incomplete inputs (``results.incomplete``), unless accepted;
5. the baseline: each baseline task missing from the results, the tasks that
   regressed beyond repeat noise, the suite's paired comparison, and the
   baseline's own gaps.

Every reader or override option in effect (``results.overrides``) rides on the
verdict and is shown on its line: ``gate: PASSED (with: ...)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from passk._public import publish
from passk.criteria import GateCriteria
from passk.errors import BadInput
from passk.gate.curtailment import task_outlook, why_blocked
from passk.stability import (
    CLASS_THRESHOLD,
    GateResult,
    SuiteReport,
    TaskReport,
    reliability_gate,
    suite_report,
)

if TYPE_CHECKING:
    from passk.analysis.diff import SuiteDiff
    from passk.results.counts import Results
    from passk.results.protocol import Protocol

__all__ = ["Verdict", "baseline_found", "judge", "judge_suite"]

#: The gate's verdict: PASSED or BLOCKED, the overall figure, every reason.
Verdict = GateResult



def _ks(results: Results, criteria: GateCriteria, ks: Sequence[int] | np.ndarray | None
        ) -> list[int]:
    if ks is None:
        return [int(criteria.k)] * len(results)
    out = [int(k) for k in np.asarray(ks).ravel().tolist()]
    if len(out) != len(results):
        raise BadInput(f"ks ({len(out)}) must give one k per task ({len(results)})")
    return out


def _curtailment(rows: Sequence[TaskReport], results: Results, criteria: GateCriteria,
                 ks: Sequence[int]) -> tuple[str, ...]:
    """What blocks a curtailed suite whatever its runs not made give, from ``results``.

    A task's runs not made are its planned runs (``results.settled_early``) less
    those counted and those left out.
    """
    early = results.settled_early
    out = results.excluded.tolist()
    planned = [int(early.get(t.task_id, t.runs + x)) for t, x in zip(rows, out, strict=True)]
    remaining = [max(n - t.runs - x, 0) for t, x, n in zip(rows, out, planned, strict=True)]
    outlooks = [task_outlook(t.successes, t.runs - t.successes, r, k=k,
                             max_flakiness=criteria.max_flakiness, min_runs=criteria.min_runs,
                             on=criteria.on, confidence=criteria.confidence)
                for t, r, k in zip(rows, remaining, ks, strict=True)]
    return why_blocked([t.task_id for t in rows], outlooks, remaining, planned,
                       [t.runs + r for t, r in zip(rows, remaining, strict=True)], criteria,
                       ks=list(ks))


def _baseline_reasons(results: Results, baseline: Results, criteria: GateCriteria,
                      ks: Sequence[int], accept_incomplete: bool, margin: float | None
                      ) -> tuple[list[str], dict[str, Any]]:
    """The comparison with a baseline, as reasons (it fails closed on what it cannot see),
    and what it found (:func:`baseline_found`)."""
    from passk.analysis.diff import baseline_gaps, diff_results  # below the gate

    gaps = list(baseline_gaps(baseline, results))  # fails closed, whatever is accepted
    d = diff_results(baseline, results, k=max(ks, default=1), alpha=criteria.alpha,
                     correction=criteria.correction,
                     margin=criteria.margin if criteria.margin is not None else margin)
    reasons = gaps + [f"task {t.task_id}: regressed against the baseline beyond repeat noise "
                      f"(adjusted p = {t.p_adjusted:.3g})" for t in d.regressed]
    if not accept_incomplete:
        where = " + ".join(s.path for s in baseline.sources) or "<baseline>"
        gaps += [f"baseline incomplete input {where}: {why} (--accept-incomplete to "
                 "compare anyway)" for why in baseline.incomplete]
        reasons += gaps[len(gaps) - len(baseline.incomplete):]
    found = baseline_found(baseline, d, gaps)
    s = d.suite
    if s is not None:
        shown = (f"mean pass^{s.k} {s.delta:+.3f} against the baseline, {s.confidence:.0%} "
                 f"interval [{s.ci.low:+.3f}, {s.ci.high:+.3f}] over {s.paired_tasks} "
                 "paired tasks")
        if s.verdict == "worse":  # fails closed: with a margin, non-inferiority must be shown
            reasons.append(f"suite: worse: {shown}")
        elif s.margin is not None and s.verdict != "non-inferior":
            reasons.append(f"suite: non-inferiority within {s.margin:g} not shown: {shown}")
    return reasons, found


def baseline_found(baseline: Results, d: SuiteDiff, gaps: Sequence[str] = ()
                   ) -> dict[str, Any]:
    """What the comparison with a baseline found, JSON-ready: the gate's ``baseline``.

    Parameters
    ----------
    baseline : Results
        The baseline as read: its files (``path``, ``sha256``; ``path`` joins several
        with `` + ``, and ``sha256`` is None for several: ``files`` lists each).
    d : SuiteDiff
        :func:`passk.analysis.diff.diff_results` of the baseline and the results.
    gaps : sequence of str
        The reasons the comparison fails closed on (a baseline task the results lack,
        an incomplete baseline).

    Returns
    -------
    dict
        ``path``, ``sha256``, ``files``, ``k``, ``alpha``, ``correction``, ``margin``,
        ``decision`` (:attr:`~passk.analysis.diff.SuiteDiff.decision`: ``worse``, ``no
        regression shown``, ``non-inferior``, ``inconclusive``), ``suite`` (the paired
        comparison, :meth:`passk.stats.compare.PairedComparison.to_dict`, or None),
        ``regressed`` (task ids), ``gaps``.
    """
    files = [{"path": src.path, "sha256": src.sha256} for src in baseline.sources]
    return {"path": " + ".join(f["path"] for f in files) or "<baseline>",
            "sha256": files[0]["sha256"] if len(files) == 1 else None, "files": files,
            "k": d.k, "alpha": d.alpha, "correction": d.correction,
            "margin": d.suite.margin if d.suite is not None else None,
            "decision": d.decision, "suite": d.suite.to_dict() if d.suite is not None else None,
            "regressed": [t.task_id for t in d.regressed], "gaps": list(gaps)}


def _proved_gate(rows: Sequence[TaskReport], criteria: GateCriteria, ks: Sequence[int],
                 base: GateResult) -> GateResult:
    """The proved modes (issue 29): the dual gate's estimability reasons (too few runs, no
    evidence), then :func:`passk.stats.operating.gate_decision`'s suite bound and each task's
    steadiness; ``'proved-warn'`` names flaky tasks without blocking on them."""
    from passk.stats.operating import flaky_band, gate_decision, runs_to_prove_steady

    reasons = list(base.reasons)
    if not rows or len(set(ks)) > 1:
        why = "no tasks" if not rows else "the proved modes need one k for the suite"
        return GateResult(math.nan, False, (), (*reasons, why), what=base.what,
                          bar=criteria.min_overall_pass_hat_k, cap=criteria.max_flakiness)
    d = gate_decision([t.successes for t in rows], [t.runs for t in rows], criteria,
                      ks=list(ks))
    k = ks[0]
    if not reasons and not d.suite_ok:
        reasons.append(f"suite: the {criteria.confidence:.0%} lower bound {d.suite_value:.3f} "
                       f"on mean pass^{k} (passk's proved suite interval) is below the bar "
                       f"{criteria.min_overall_pass_hat_k:.3f}: not shown")
    low, high = flaky_band(criteria.max_flakiness)
    need = (runs_to_prove_steady(criteria.max_flakiness, criteria.confidence)
            if criteria.max_flakiness > 0 else None)
    for i in d.blocked:
        t = rows[i]
        reasons.append(f"task {t.task_id}: not proved steady ({t.successes}/{t.runs} passed): "
                       f"its exact {criteria.confidence:.0%} bounds do not put p outside the "
                       f"flaky band ({low:.3f}, {high:.3f})"
                       + (f"; {need} runs all passing would" if need else ""))
    shown = d.blocked if criteria.mode == "proved" else d.warned
    return GateResult(d.suite_value, not reasons, tuple(rows[i].task_id for i in shown),
                      tuple(reasons), what=f"proved lower bound on pass^{k}",
                      bar=criteria.min_overall_pass_hat_k, cap=criteria.max_flakiness)


def judge(
    results: Results,
    criteria: GateCriteria,
    baseline: Results | None = None,
    *,
    ks: Sequence[int] | np.ndarray | None = None,
    accept_incomplete: bool = False,
    unfinished: Sequence[str] = (),
    rows: Sequence[TaskReport] | None = None,
    margin: float | None = None,
    policy_line: str = "",
    applied: Sequence[str] = (),
    as_declared: bool = False,
) -> Verdict:
    """The gate's verdict on ``results``, with every reason that blocks it.

    It fails closed: any reason blocks. The dual gate (the chapter's rule) is

    .. math:: \\frac{1}{T}\\sum_{t=1}^{T} \\widehat{\\text{pass}^k_t} \\ge \\text{bar}
              \\quad\\text{and}\\quad \\max_t 4\\hat p_t(1-\\hat p_t) \\le \\text{cap},

    with a task short of ``k`` (or ``min_runs``) counted runs a reason of its
    own, and, ``on='lower-bound'``, each task's exact one-sided lower bound in
    place of its estimate. Then curtailment, unfinished tasks, incomplete
    inputs and the baseline add theirs (see the module's docstring).

    Parameters
    ----------
    results : Results
        The evidence: counts per task, what was left out and why
        (``excluded``, ``excluded_reason``), what a curtailed run stopped early
        (``settled_early``: task -> planned runs), its gaps (``incomplete``),
        and the options in effect when it was read (``overrides``, if any).
    criteria : GateCriteria
        The k, bar, cap, what the bar is compared with, the lower bounds'
        confidence, the fewest runs; and, when it has them, the comparison's
        ``alpha``, ``correction`` and ``margin`` (default 0.05, Holm, none).
    baseline : Results, optional
        The last release's results: every baseline task missing from
        ``results`` is a reason, and so is a regression shown by
        :func:`passk.analysis.diff.diff_results` (per task: Fisher, corrected;
        the suite: the paired comparison of the mean pass^k).
    ks : sequence of int, optional
        Each task's k when they differ; default ``criteria.k`` for every task.
    accept_incomplete : bool, default False
        Gate on incomplete inputs anyway (an override: said on the verdict line).
    unfinished : sequence of str
        One sentence per task short of its planned runs for a reason other than
        curtailment (skipped, deselected, a session cut short); the mean is then
        not estimated.
    rows : sequence of TaskReport, optional
        ``suite_report``'s rows for ``results`` at ``ks`` when the caller has
        scored them already (the report); by default scored here.
    margin : float, optional
        The baseline comparison's non-inferiority margin, for criteria that do
        not carry one (``criteria.margin`` wins when they do).
    policy_line, applied : str, sequence of str
        The policy in force and the choices bound with the criteria
        (:class:`passk.gate.bind.InForce`), named on the verdict line, which
        nothing edits afterwards.

    Returns
    -------
    Verdict
        A :class:`passk.stability.GateResult`.

    Examples
    --------
    >>> from passk.results.counts import Run, results_from_runs
    >>> new = results_from_runs([Run("a", True, t) for t in range(6)]
    ...                         + [Run("b", t != 0, t) for t in range(6)])
    >>> v = judge(new, GateCriteria(k=2, max_flakiness=0.6))
    >>> print(v.verdict())
    gate: PASSED  overall pass^2 = 0.833  (bar 0.700, flakiness cap 0.600)
    >>> old = results_from_runs([Run(t, True, i) for t in "abc" for i in range(6)])
    >>> judge(new, GateCriteria(k=2, max_flakiness=0.6), baseline=old).reasons[0]
    'task c: in the baseline, but the new results have no runs of it (the comparison must cover every baseline task)'
    """  # noqa: E501  # a doctest's output line cannot wrap
    ks_ = _ks(results, criteria, ks)
    if rows is None:
        rows = suite_report(results.task_ids, results.successes.tolist(),
                            results.totals.tolist(), risks=results.risks, k=ks_ or 1,
                            confidence=criteria.confidence).tasks
    early = dict(results.settled_early or {})
    gate = reliability_gate(
        rows, min_overall_pass_hat_k=criteria.min_overall_pass_hat_k,
        max_flakiness=criteria.max_flakiness, ks=ks_, on=criteria.on,
        min_runs=criteria.min_runs, excluded=results.excluded.tolist(),
        settled_early=early or None, confidence=criteria.confidence,
        excluded_reason=results.excluded_reason or "infrastructure errors")
    if criteria.mode != "chapter":  # the estimability reasons alone, then the proved rule
        gate = _proved_gate(rows, criteria, ks_, reliability_gate(
            rows, min_overall_pass_hat_k=0.0, max_flakiness=1.0, ks=ks_, on=criteria.on,
            min_runs=criteria.min_runs, excluded=results.excluded.tolist(),
            settled_early=early or None, confidence=criteria.confidence,
            excluded_reason=results.excluded_reason or "infrastructure errors"))
    reasons = list(gate.reasons)
    if early and not gate.passed:
        reasons += _curtailment(rows, results, criteria, ks_)
    reasons += unfinished
    if not accept_incomplete:
        reasons += [f"incomplete results: {why} (--accept-incomplete to gate on them anyway)"
                    for why in results.incomplete]
    found = None
    if baseline is not None:
        compared, found = _baseline_reasons(results, baseline, criteria, ks_,
                                            accept_incomplete, margin)
        reasons += compared
    overrides = tuple(getattr(results, "overrides", ()) or ())
    if accept_incomplete and (results.incomplete or (baseline is not None and
                                                     baseline.incomplete)) and not any(
            "accept-incomplete" in o for o in overrides):  # the reader may have said it
        overrides += ("accept-incomplete",)
    return GateResult(math.nan if unfinished else gate.overall, not reasons, gate.flaky_tasks,
                      tuple(reasons), what=gate.what, bar=gate.bar, cap=gate.cap,
                      overrides=overrides, policy_line=policy_line, applied=tuple(applied),
                      as_declared=as_declared, baseline=found)


def judge_suite(
    results: Results,
    criteria: GateCriteria,
    baseline: Results | None = None,
    *,
    k: int | Sequence[int] | np.ndarray | None = None,
    ks: Sequence[int] | np.ndarray | None = None,
    ci_method: str = "exact",
    class_threshold: float = CLASS_THRESHOLD,
    accept_incomplete: bool = False,
    unfinished: Sequence[str] = (),
    margin: float | None = None,
    policy_line: str = "",
    applied: Sequence[str] = (),
    as_declared: bool = False,
    protocol: Protocol | None = None,
) -> SuiteReport:
    """The judged report: ``results`` scored (:func:`passk.stability.suite_report`) and
    judged (:func:`judge`), the rows and the verdict together, never one without the other.

    The one place a report is scored, judged and attached: ``passk report`` and
    ``gate`` (:func:`passk.analysis.report.build_report`), :func:`passk.run_suite`,
    :func:`passk.run.evaluate.evaluate_suite`, the pytest plugin.

    Parameters
    ----------
    results, criteria, baseline
        As :func:`judge`.
    k : int or sequence of int, optional
        The k the report is scored at, as :func:`passk.stability.suite_report` takes
        it (default: ``ks``, else ``criteria.k``).
    ks
        Each task's k for the judge (default: from ``k``, else ``criteria.k``).
    ci_method, class_threshold
        The per-task interval and the class threshold of the rows.
    accept_incomplete, unfinished, margin, policy_line, applied, as_declared
        As :func:`judge`.
    protocol : Protocol, optional
        The report's protocol (default: the results').

    Examples
    --------
    >>> from passk.results.counts import Run, results_from_runs
    >>> r = results_from_runs([Run("a", True, t) for t in range(6)]
    ...                       + [Run("b", t != 0, t) for t in range(6)])
    >>> report = judge_suite(r, GateCriteria(k=2, max_flakiness=0.6))
    >>> [t.task_id for t in report.tasks], report.gate.passed
    (['a', 'b'], True)
    """
    if ks is None and k is not None:  # one k for every task, or each task's
        ks = ([int(k)] * len(results) if isinstance(k, int)
              else [int(x) for x in np.asarray(k).ravel().tolist()])
    ks_ = _ks(results, criteria, ks)
    report = suite_report(results.task_ids, results.successes, results.totals,
                          risks=results.risks,
                          k=k if k is not None else (ks_ or criteria.k),
                          confidence=criteria.confidence, ci_method=ci_method,
                          class_threshold=class_threshold)
    gate = judge(results, criteria, baseline, ks=ks_, accept_incomplete=accept_incomplete,
                 unfinished=unfinished, rows=report.tasks, margin=margin,
                 policy_line=policy_line, applied=applied, as_declared=as_declared)
    return replace(report, gate=gate,
                   protocol=protocol if protocol is not None else results.protocol)


publish(globals())  # the names passk.__all__ takes from here say 'passk' (passk._public)
