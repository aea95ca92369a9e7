"""The settle rule of curtailed repetition: when may a task stop early?

Curtailed repetition stops a task's remaining runs only when no outcome of
them can change what the gate decides. One rule serves every place that
curtails, through the one scheduler that keeps it up to date as runs end,
:class:`passk.run.schedule.Schedule`: :func:`passk.run.runner.run_suite`
(``passk run --stopping curtailed``), the pytest plugin (``--passk-policy curtailed``)
and :class:`passk.integrations.inspect.Curtailment`, Inspect AI's early stopping. It holds under
both gate modes (``on='estimate'`` and ``on='lower-bound'``), because every
completion of a task's runs is scored with the very function the gate uses.

The pieces, each pure:

- :class:`GateSettings`, the decision curtailment must leave as fixed n makes it;
- :func:`task_outlook`, every way a task's remaining runs could still end;
- :func:`suite_outlook`, what the gate can still decide about the suite;
- :func:`task_settled`, the rule itself, and :func:`settled_tasks`, the rule
  applied to a whole suite's counts at once;
- :func:`why_blocked`, what blocks a suite whatever the runs not made give.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from passk.criteria import DEFAULT_CRITERIA, GATE_ON, GateCriteria, check_criteria
from passk.errors import BadInput
from passk.metrics import estimate_pass_hat_k, flakiness, pass_hat_k_lower_bound
from passk.stats.operating import bar_fraction

#: The criteria a curtailment serves (the name they had before the gate had one type).
GateSettings = GateCriteria

__all__ = ["GATE_ON", "SUITE_OUTLOOKS", "GateSettings", "TaskOutlook", "settled_tasks",
           "suite_outlook", "task_outlook", "task_settled", "why_blocked"]

#: What the gate on the whole suite can still decide: ``'open'`` (either way), or
#: ``'blocked'`` / ``'passed'`` whatever the runs not yet made give.
SUITE_OUTLOOKS = ("open", "blocked", "passed")

#: The gate compares the exact mean with the bar (:func:`passk.stats.operating.mean_reaches`);
#: the outlooks hold the floats of the values it averages. The mean is called settled only
#: when every completion keeps the floats' mean this far from the bar: far more than their
#: rounding over at most millions of tasks, so the exact rule decides alike, and exact ties
#: (a mean equal to the bar) are never curtailed.
_MEAN_MARGIN = Fraction(1, 10**9)

#: A task planned more runs than this is not tabulated (tables are (n + 1)^2): its
#: outlook is taken as undecided, which only means it is never curtailed.
_MAX_PLANNED = 500


@dataclass(frozen=True)
class TaskOutlook:
    """Every way a task's runs not yet made could still end, as the gate sees them.

    A *completion* gives each of the ``r`` remaining runs one of three ends: a
    pass, a failure, or an infrastructure error (or cached result) left out of
    the counts. With ``s`` passes and ``f`` failures so far, a completion adds
    ``a`` passes and ``b`` failures, ``a + b <= r``: the final counts are
    ``c = s + a`` passes in ``m = s + f + a + b`` counted runs.

    Attributes
    ----------
    flaky : bool or None
        ``flakiness(c, m) > cap`` under every completion (True), under none
        (False), or depending on the remaining runs (None).
    clear : bool or None
        The gate raises nothing against the task itself (it has runs, at
        least ``k`` of them so that pass^k is estimable, at least ``min_runs``,
        and it is not flaky) under every completion (True), under none
        (False), or depending on them (None).
    low, high : float
        Least and greatest value the gate averages for the task (its pass^k
        estimate, or its lower bound when the gate is on the lower bound) over
        the completions that leave it clear; NaN when none does.
    fixed : bool
        Every completion gives the same (clear, value): the task's part in
        the gate's mean is already known.
    """

    flaky: bool | None
    clear: bool | None
    low: float
    high: float
    fixed: bool


def task_outlook(successes: int, failures: int, remaining: int, *, k: int = DEFAULT_CRITERIA.k,
                 max_flakiness: float = DEFAULT_CRITERIA.max_flakiness,
                 min_runs: int = DEFAULT_CRITERIA.min_runs, on: str = DEFAULT_CRITERIA.on,
                 confidence: float = DEFAULT_CRITERIA.confidence) -> TaskOutlook:
    """Summarise the completions of a task's remaining runs (see :class:`TaskOutlook`).

    Each completion's final counts ``(c, m)`` are scored exactly as the gate
    scores a task, with :func:`~passk.metrics.flakiness` and
    :func:`~passk.metrics.estimate_pass_hat_k` (or, ``on='lower-bound'``,
    :func:`~passk.metrics.pass_hat_k_lower_bound`). The completions of ``s``
    passes, ``f`` failures and ``r`` runs left are the counts of ``c`` passes
    and ``d`` failures with ``c >= s``, ``d >= f`` and ``c + d <= s + f + r``;
    one table per planned total holds every such summary at once (suffix
    reductions over the triangle ``c + d <= n``), so each call is a look-up.

    Examples
    --------
    Two passes and a failure in 3 of 12 runs: whatever the other nine give
    (or leave out), the task ends between 2/3 and 11/12, flaky at the 0.2 cap:

    >>> task_outlook(2, 1, 9).flaky
    True
    >>> o = task_outlook(0, 10, 2, k=5, max_flakiness=0.7)  # never more than 2 passes
    >>> o.flaky, o.clear, o.fixed, o.high  # pass^5 is 0 whatever happens
    (False, True, True, 0.0)

    The lower bound of pass^2 is not 0 below 2 passes: after two failures of
    three runs, the third still moves it (0 of 3, or 1 of 3: 0.0003):

    >>> o = task_outlook(0, 2, 1, k=2, max_flakiness=1.0, on="lower-bound")
    >>> o.fixed, round(o.high, 4)
    (False, 0.0003)
    """
    for name, value in (("successes", successes), ("failures", failures),
                        ("remaining", remaining)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise BadInput(f"{name} ({value!r}) must be a whole number >= 0")
    check_criteria(k, max_flakiness, min_runs, on, confidence)
    return _outlook(int(successes), int(failures), int(remaining), int(k),
                    float(max_flakiness), int(min_runs), on, float(confidence))


#: The outlook of a task too long to tabulate: undecided, so it never settles early.
_UNDECIDED = TaskOutlook(None, None, 0.0, 1.0, False)


def _outlook(s: int, f: int, r: int, k: int, cap: float, min_runs: int,
             on: str = DEFAULT_CRITERIA.on, confidence: float = DEFAULT_CRITERIA.confidence
             ) -> TaskOutlook:
    """:func:`task_outlook` without the checks (the caller checked its settings once)."""
    if s + f + r > _MAX_PLANNED:
        return _UNDECIDED
    table = _outlook_table(s + f + r, k, cap, min_runs, on, confidence)
    any_clear, all_clear = bool(table.any_clear[s, f]), bool(table.all_clear[s, f])
    low, high = ((float(table.low[s, f]), float(table.high[s, f])) if any_clear
                 else (math.nan, math.nan))
    return TaskOutlook(
        flaky=_same(bool(table.any_flaky[s, f]), bool(table.all_flaky[s, f])),
        clear=_same(any_clear, all_clear),
        low=low, high=high,
        fixed=bool(table.fixed[s, f]),
    )


def _same(any_: bool, all_: bool) -> bool | None:
    return True if all_ else False if not any_ else None


@dataclass(frozen=True)
class _OutlookTable:
    """For every (s, f) with s + f <= n: reductions over the counts (c, d) with c >= s,
    d >= f, c + d <= n (indexed [s, f]); ``settles`` is :func:`task_settled` by suite
    outlook."""

    any_flaky: np.ndarray
    all_flaky: np.ndarray
    any_clear: np.ndarray
    all_clear: np.ndarray
    low: np.ndarray
    high: np.ndarray
    fixed: np.ndarray
    settles: Mapping[str, np.ndarray]


def _outlook_table(total: int, k: int, cap: float, min_runs: int, on: str = DEFAULT_CRITERIA.on,
                   confidence: float = DEFAULT_CRITERIA.confidence) -> _OutlookTable:
    """One table per planned total and gate (many small ones are kept, few large ones)."""
    if total <= 64:
        return _small_table(total, k, cap, min_runs, on, confidence)
    return _large_table(total, k, cap, min_runs, on, confidence)


def _build_table(total: int, k: int, cap: float, min_runs: int, on: str,
                 confidence: float) -> _OutlookTable:
    c, d = np.indices((total + 1, total + 1))
    inside = c + d <= total
    c, m = np.where(inside, c, 0), np.where(inside, c + d, 0)
    with np.errstate(invalid="ignore"):
        flaky = inside & (m > 0) & (np.asarray(flakiness(c, m)) > cap)
    hat_k = np.full(c.shape, np.nan)
    hat_k[inside] = estimate_pass_hat_k(c[inside], m[inside], k)
    # the value the gate averages: the estimate, or the exact lower bound (which may
    # exceed the estimate: 1 of 3 has pass^2 = 0 and a lower bound of 0.0003)
    value = hat_k.copy()
    if on == "lower-bound":
        value[inside] = pass_hat_k_lower_bound(c[inside], m[inside], k, confidence=confidence)
    clear = inside & (m > 0) & ~np.isnan(hat_k) & (m >= min_runs) & ~flaky
    # suffix maxima (any flaky, any clear, highest clear value) and minima (all flaky,
    # all clear, lowest clear value) over c' >= c, d' >= d; cells outside the triangle
    # hold the identity, so these rectangle suffixes are the triangle's
    most = np.stack([flaky, clear, np.where(clear, value, -np.inf)]).astype(float)
    least = np.stack([flaky, clear, np.where(clear, value, np.inf)]).astype(float)
    most[:, ~inside], least[:, ~inside] = -np.inf, np.inf
    for values, op in ((most, np.maximum), (least, np.minimum)):
        values[:] = op.accumulate(values[:, ::-1, :], axis=1)[:, ::-1, :]
        values[:] = op.accumulate(values[:, :, ::-1], axis=2)[:, :, ::-1]
    any_flaky, any_clear, high = most[0] > 0, most[1] > 0, most[2]
    all_flaky, all_clear, low = least[0] > 0, least[1] > 0, least[2]
    fixed = ~any_clear | (all_clear & (low == high))
    known = all_flaky | ~any_flaky
    return _OutlookTable(any_flaky, all_flaky, any_clear, all_clear, low, high, fixed,
                         {"open": known & fixed, "blocked": known, "passed": known})


_small_table = functools.lru_cache(maxsize=4096)(_build_table)
_large_table = functools.lru_cache(maxsize=8)(_build_table)


def suite_outlook(outlooks: Sequence[TaskOutlook], min_overall_pass_hat_k: float) -> str:
    """What the gate can still decide about a suite, one of :data:`SUITE_OUTLOOKS`.

    ``'blocked'`` when no joint completion passes: some task is clear under
    none of its completions, or the mean of each task's greatest clear value
    stays below the bar. ``'passed'`` when every joint completion passes: every
    task is clear under all of its completions and the mean of the least
    values reaches the bar. Sums are exact (fractions of the very floats the
    gate averages); a mean within ``1e-9`` of the bar is left ``'open'``.

    Examples
    --------
    >>> flaky, sure = task_outlook(1, 1, 10), task_outlook(12, 0, 0)
    >>> suite_outlook([flaky, sure], 0.7), suite_outlook([sure], 0.7)
    ('blocked', 'passed')
    >>> suite_outlook([task_outlook(5, 0, 7), sure], 0.7)
    'open'
    """
    if not outlooks or any(o.clear is False for o in outlooks):
        return "blocked"
    bar, tasks = bar_fraction(min_overall_pass_hat_k), len(outlooks)
    high = sum((Fraction(o.high) for o in outlooks), Fraction(0))
    low = (sum((Fraction(o.low) for o in outlooks), Fraction(0))
           if all(o.clear is True for o in outlooks) else None)
    return _suite_verdict(bar, tasks, high, low)


def _suite_verdict(bar: Fraction, tasks: int, high: Fraction, low: Fraction | None) -> str:
    """:func:`suite_outlook` from the sums of the tasks' highest and lowest values
    (``low`` None when some task may end not clear); no task is clear under none."""
    if high < (bar - _MEAN_MARGIN) * tasks or (high == 0 and bar > 0):
        return "blocked"
    if low is not None and (bar <= 0 or low == tasks or low >= (bar + _MEAN_MARGIN) * tasks):
        return "passed"
    return "open"


def _settles(outlook: TaskOutlook, suite: str) -> bool:
    """The rule, on a task with runs left: its flaky verdict is known, and either the
    suite's verdict or the task's own term in the mean is."""
    return outlook.flaky is not None and (suite != "open" or outlook.fixed)


def task_settled(successes: int, failures: int, *, remaining: int, k: int = DEFAULT_CRITERIA.k,
                 max_flakiness: float = DEFAULT_CRITERIA.max_flakiness,
                 min_runs: int = DEFAULT_CRITERIA.min_runs, suite: str = "open",
                 on: str = DEFAULT_CRITERIA.on, confidence: float = DEFAULT_CRITERIA.confidence
                 ) -> bool:
    """Whether a task may stop: no completion of its remaining runs can change the gate.

    The settle rule of curtailed repetition. A task may stop when

    1. it is flaky under every completion of its remaining runs, or under
       none (so the set of flaky tasks is fixed-n's), and
    2. its part in the rest of the decision is settled: either the suite's
       verdict is the same under every joint completion of every task
       (``suite`` is ``'blocked'`` or ``'passed'``, see :func:`suite_outlook`),
       or the task's own (clear, value) is the same under all of its
       completions, so that it adds the same term to the mean.

    Completions include runs left out as infrastructure errors, so a task
    that can still end with fewer counted runs (fewer than ``k`` or
    ``min_runs``, or a flakier ratio) is not settled by its planned n alone.

    Parameters
    ----------
    successes, failures : int
        Counted runs so far.
    remaining : int
        Planned runs not yet finished (in flight or never started).
    k, max_flakiness, min_runs, on, confidence
        The gate's k, cap, minimum of counted runs, what it averages, and the
        lower bounds' confidence (see :class:`GateSettings`).
    suite : {'open', 'blocked', 'passed'}
        :func:`suite_outlook` of the whole suite.

    Examples
    --------
    One pass and one failure out of 12 planned make the task flaky whatever
    happens, at a 0.2 cap:

    >>> task_settled(1, 1, remaining=10)
    True
    >>> task_settled(5, 0, remaining=7)  # 12/12 is not flaky, 5/6 is
    False

    At a 0.96 cap, 1 of 2 is flaky (1.0) and 1 of 3 is not (0.89): a 3-run
    task must make its third run, even in a suite already blocked:

    >>> task_settled(1, 1, remaining=1, max_flakiness=0.96, suite="blocked")
    False
    """
    if suite not in SUITE_OUTLOOKS:
        raise BadInput(f"suite ({suite!r}) must be one of {', '.join(SUITE_OUTLOOKS)}")
    outlook = task_outlook(successes, failures, remaining, k=k, max_flakiness=max_flakiness,
                           min_runs=min_runs, on=on, confidence=confidence)
    return remaining == 0 or _settles(outlook, suite)


def settled_tasks(successes: Sequence[int], failures: Sequence[int],
                  remaining: Sequence[int], gate: GateSettings, *,
                  ks: Sequence[int] | None = None) -> list[bool]:
    """The settle rule on a whole suite: which tasks may stop now.

    Each task's outlook under ``gate`` (at its own k when ``ks`` is given),
    the suite's outlook from all of them, then :func:`task_settled` per task.
    A task with nothing remaining is settled.

    Parameters
    ----------
    successes, failures : sequence of int
        Counted runs so far, per task.
    remaining : sequence of int
        Planned runs without a final outcome yet (in flight or not started).
    gate : GateSettings
    ks : sequence of int, optional
        Each task's k, when they differ (the pytest plugin's markers).

    Returns
    -------
    list of bool

    Examples
    --------
    One test planned 3 runs, k = 2, after two failures. On the estimate,
    pass^2 is 0 whatever the third run gives, so the suite is blocked and the
    test settled; on the lower bound a third pass lifts it over a bar of
    0.0002, so it runs:

    >>> g = GateSettings(k=2, min_overall_pass_hat_k=0.0002, max_flakiness=1.0)
    >>> settled_tasks([0], [2], [1], g)
    [True]
    >>> settled_tasks([0], [2], [1], GateSettings(**{**vars(g), "on": "lower-bound"}))
    [False]
    """
    ks_ = [gate.k] * len(successes) if ks is None else [int(k) for k in ks]
    if not len(successes) == len(failures) == len(remaining) == len(ks_):
        raise BadInput("successes, failures, remaining and ks must have one entry per task")
    outlooks = [task_outlook(int(s), int(f), int(r), k=k, max_flakiness=gate.max_flakiness,
                             min_runs=gate.min_runs, on=gate.on, confidence=gate.confidence)
                for s, f, r, k in zip(successes, failures, remaining, ks_)]
    suite = suite_outlook(outlooks, gate.min_overall_pass_hat_k)
    return [int(r) == 0 or _settles(o, suite) for o, r in zip(outlooks, remaining)]


@functools.lru_cache(maxsize=1 << 12)
def _runs_surely_needed(successes: int, failures: int, remaining: int, k: int,
                        max_flakiness: float, min_runs: int, suite: str,
                        on: str = DEFAULT_CRITERIA.on,
                        confidence: float = DEFAULT_CRITERIA.confidence) -> int:
    """The fewest further run outcomes (a passes, b failures, x left out) after which
    :func:`task_settled` could hold.

    The search goes by m = a + b + x = 1, 2, ... and gives up after a budget of
    states: the m reached is still a lower bound, so no run started on its
    account is wasted.
    """
    total = successes + failures + remaining
    budget = 4000
    for m in range(1, remaining):
        for x in range(m + 1):
            if total - x > _MAX_PLANNED:
                continue
            settles = _outlook_table(total - x, k, max_flakiness, min_runs, on,
                                     confidence).settles[suite]
            for a in range(m - x + 1):
                if settles[successes + a, failures + m - x - a]:
                    return m
            budget -= m - x + 1
        if budget <= 0:
            return m
    return max(remaining, 1)


def why_blocked(task_ids: Sequence[str], outlooks: Sequence[TaskOutlook],
                remaining: Sequence[int], planned: Sequence[int], counted_most: Sequence[int],
                gate: GateSettings, *, ks: Sequence[int] | None = None) -> tuple[str, ...]:
    """What blocks a curtailed suite under every completion of the runs not made.

    The reasons beyond those the gate gives on the runs made (flaky tasks,
    tasks run in full): a task stopped early that cannot clear (too few runs
    possible for its k or the minimum), and the highest mean any completion
    could reach, when it stays below the bar.

    Parameters
    ----------
    task_ids, outlooks, remaining, planned : sequences, one entry per task
        The outlooks under ``gate``, the runs without an outcome, the runs planned.
    counted_most : sequence of int
        The most counted runs each task could end with.
    gate : GateSettings
    ks : sequence of int, optional
        Each task's k, when they differ.

    Examples
    --------
    >>> g = GateSettings(k=2, min_overall_pass_hat_k=0.5, max_flakiness=1.0)
    >>> o = task_outlook(0, 2, 1, k=2, max_flakiness=1.0)
    >>> why_blocked(["t"], [o], [1], [3], [3], g)[-1]
    'overall pass^2 could reach at most 0.000 whatever the runs not made gave, below the bar 0.500: not met'
    """  # noqa: E501  # a doctest's output line cannot wrap
    ks_ = [gate.k] * len(task_ids) if ks is None else list(ks)
    reasons = []
    for tid, o, r, n, most, k in zip(task_ids, outlooks, remaining, planned, counted_most, ks_):
        if r and o.clear is False and o.flaky is False:
            short = f"pass^{k} needs {k}" if most < k else f"the minimum is {gate.min_runs}"
            runs = "1 counted run" if most == 1 else f"{most} counted runs"
            reasons.append(f"task {tid}: at most {runs} even if all {n} planned had been "
                           f"made, and {short}")
    if outlooks and not any(o.clear is False for o in outlooks):
        best = float(np.mean([o.high for o in outlooks]))
        what = f"pass^{ks_[0]}" if len(set(ks_)) == 1 else "pass^k (each task at its k)"
        if gate.on == "lower-bound":
            what = f"lower bound on {what}"
        reasons.append(f"overall {what} could reach at most {best:.3f} whatever the runs "
                       f"not made gave, below the bar {gate.min_overall_pass_hat_k:.3f}: not met")
    return tuple(reasons)
