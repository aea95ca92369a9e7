"""Which tasks can more runs still change, and how many runs settle them: ``passk plan FILE``.

A task *clears* when, alone against the dual gate, it has enough runs, its
pass^k (or exact lower bound) reaches the bar and its flakiness stays under the
cap. More runs, up to a task's maximum n, may flip that; the plan says which
tasks are still open and the worst case of runs before each is settled. The
all-pass table (``passk plan`` without a file) is :func:`passk.metrics.runs_needed`.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from passk.errors import BadInput
from passk.metrics import estimate_pass_hat_k, flakiness, pass_hat_k_lower_bound
from passk.render.tables import format_rows
from passk.render.words import plural
from passk.results.read import Results
from passk.stability import DEFAULT_CRITERIA, GateCriteria, RepeatPolicy
from passk.stats.operating import OperatingCharacteristic, mean_reaches, population

__all__ = ["BaselinePlan", "GatePlan", "TaskPlan", "baseline_operating_characteristic",
           "format_gate_plan", "format_plan", "plan_gate", "plan_tasks", "policy_max_runs"]


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
    # each cell a suite of one task, by the gate's own exact rule (mean_reaches)
    one = np.where(valid & enough, value, np.nan)[..., None]
    reaches = (mean_reaches(one, bar) if gate_on == "lower-bound" else
               mean_reaches(one, bar, successes=c_[..., None], totals=n_grid[..., None], k=kk))
    ok = valid & enough & reaches & (np.nan_to_num(flaky, nan=2.0) <= cap)
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
               min_overall_pass_hat_k: float = DEFAULT_CRITERIA.min_overall_pass_hat_k,
               max_flakiness: float = DEFAULT_CRITERIA.max_flakiness,
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
             _plan_summary(n_open, len(plans), total)]
    return "\n".join(lines)




def _plan_summary(n_open: int, tasks: int, total: int) -> str:
    """The plan's closing sentence, one branch per outcome: none, one, some or all open.

    >>> print(_plan_summary(0, 3, 0))
    None of the 3 tasks can change its verdict: more runs settle nothing.
    >>> print(_plan_summary(0, 1, 0))
    The task cannot change its verdict: more runs settle nothing.
    >>> print(_plan_summary(1, 1, 4))
    The task can still change its verdict; the suite needs at most 4 more runs to settle.
    >>> print(_plan_summary(1, 3, 1))
    1 of 3 tasks can still change its verdict; the suite needs at most 1 more run to settle.
    >>> print(_plan_summary(2, 2, 9))
    Both tasks can still change their verdicts; the suite needs at most 9 more runs to settle.
    """
    if n_open == 0:
        who = "The task cannot" if tasks == 1 else f"None of the {plural(tasks, 'task')} can"
        return f"{who} change its verdict: more runs settle nothing."
    if n_open == tasks:
        who = {1: "The task", 2: "Both tasks"}.get(tasks, f"All {tasks} tasks")
    else:
        who = f"{n_open} of {plural(tasks, 'task')}"
    verdicts = "its verdict" if n_open == 1 else "their verdicts"
    return (f"{who} can still change {verdicts}; the suite needs at most "
            f"{plural(total, 'more run')} to settle.")


def policy_max_runs(results: Results, max_n: int | None,
                    policy: RepeatPolicy | None = None) -> list[int]:
    """Each task's maximum n: ``max_n`` if given, else its risk tier's runs in the policy."""
    if max_n is not None:
        return [int(max_n)] * len(results)
    policy = policy or RepeatPolicy()
    return [policy.runs_by_risk.get(r, policy.default) for r in results.risks]


@dataclass(frozen=True)
class GatePlan:
    """The gate's operating characteristic over runs per task, per mode (see :func:`plan_gate`).

    ``pass_good[mode][j]`` is P(pass) on the good suite at ``runs[j]`` runs a task (1 minus
    the false-block rate); ``pass_bad[mode][j]`` the false-pass rate, the larger over the
    bad suites at the bar; ``needed[mode]`` the fewest runs of the grid meeting both targets.
    """

    criteria: GateCriteria
    tasks: int
    good_mean: float
    runs: tuple[int, ...]
    pass_good: dict[str, tuple[float, ...]]
    pass_bad: dict[str, tuple[float, ...]]
    methods: dict[str, tuple[str, ...]]
    needed: dict[str, int | None]
    false_block: float
    false_pass: float
    miss_rate: tuple[float, ...]  # the warning's miss rate per runs ('proved-warn')
    #: the other end of each figure where it is a bracket (``methods`` 'bracket'): P(pass) on
    #: the good suite at most, and the false pass at least; equal to the figure when exact
    good_high: dict[str, tuple[float, ...]] = field(default_factory=dict)
    bad_low: dict[str, tuple[float, ...]] = field(default_factory=dict)
    #: the gate with its baseline, in the mode in force (:class:`BaselinePlan`), or None
    baseline: BaselinePlan | None = None

    #: each figure's Monte Carlo standard error (0 where exact or a bracket), per mode: the
    #: good suite's and the worse bad suite's
    good_se: dict[str, tuple[float, ...]] = field(default_factory=dict)
    bad_se: dict[str, tuple[float, ...]] = field(default_factory=dict)
    #: reruns a Monte Carlo figure draws
    replicates: int = 0

    def false_block_range(self, mode: str) -> list[tuple[float, float]]:
        """Each run count's false block as (least, most): one number twice when exact."""
        high = self.good_high.get(mode, self.pass_good[mode])
        return [(min(1 - h, 1 - x), 1 - x) for x, h in zip(self.pass_good[mode], high,
                                                            strict=True)]

    def false_pass_range(self, mode: str) -> list[tuple[float, float]]:
        """Each run count's false pass at the bar as (least, most)."""
        low = self.bad_low.get(mode, self.pass_bad[mode])
        return [(min(lo, x), x) for lo, x in zip(low, self.pass_bad[mode], strict=True)]

    def to_dict(self) -> dict[str, object]:
        """The plan as JSON."""
        return {"tasks": self.tasks, "good_mean_pass_hat_k": self.good_mean,
                "runs": list(self.runs), "targets": {"false_block": self.false_block,
                                                     "false_pass": self.false_pass},
                "modes": {m: {"pass_good": list(self.pass_good[m]),
                              "false_block": [1 - x for x in self.pass_good[m]],
                              "false_pass_at_bar": list(self.pass_bad[m]),
                              "method": list(self.methods[m]),
                              "standard_error": {
                                  "false_block": list(self.good_se.get(m, ())),
                                  "false_pass_at_bar": list(self.bad_se.get(m, ()))},
                              "false_block_range": [list(r) for r in self.false_block_range(m)],
                              "false_pass_range": [list(r) for r in self.false_pass_range(m)],
                              "runs_needed": self.needed[m]} for m in self.pass_good},
                "monte_carlo_replicates": self.replicates,
                "warning_miss_rate": list(self.miss_rate),
                "bad_suites": "at the bar: the good suite with every logit lowered alike, and "
                              "identical tasks; false pass is the larger",
                "baseline": None if self.baseline is None else self.baseline.to_dict()}


@dataclass(frozen=True)
class BaselinePlan:
    """The gate with a baseline, in the mode in force, by design (see :func:`plan_gate`).

    ``columns[j]`` names a design: ``'as run'`` (each task its own runs: its tier's) or a
    number of runs per task. ``good[j]`` is P(pass) on the good suite with the baseline,
    ``bad[j]`` the larger over the suites at the bar; both Monte Carlo through the judge
    (:func:`baseline_operating_characteristic`), with their standard errors.
    ``without[j]`` is P(pass) on the good suite by the same gate without the baseline
    (:func:`passk.stats.operating.operating_characteristic`), for contrast.
    """

    mode: str
    margin: float | None
    alpha: float
    correction: str
    columns: tuple[str, ...]
    good: tuple[OperatingCharacteristic, ...]
    bad: tuple[OperatingCharacteristic, ...]
    without: tuple[float, ...]
    baseline_tasks: int

    def to_dict(self) -> dict[str, object]:
        """The baseline's part of the plan as JSON."""
        return {"mode": self.mode, "margin": self.margin, "alpha": self.alpha,
                "correction": self.correction, "baseline_tasks": self.baseline_tasks,
                "method": "monte carlo through the judge",
                "designs": [{"runs": c, "pass_good": g.probability,
                             "false_block": 1 - g.probability,
                             "false_pass_at_bar": b.probability,
                             "standard_error": {"pass_good": g.standard_error,
                                                "false_pass_at_bar": b.standard_error},
                             "replicates": g.replicates,
                             "pass_good_without_baseline": w}
                            for c, g, b, w in zip(self.columns, self.good, self.bad,
                                                  self.without, strict=True)]}


#: The planner's exact path: the estimates' lattice up to this many steps (the suite's sum,
#: tasks x lcm C(n, k)); beyond, a Monte Carlo of :data:`PLAN_REPLICATES` reruns a figure
#: (issue 41: a bracket on a 2**22-step grid cost 1-2 s a figure, 139 s a plan of 300 tasks).
PLAN_BUDGET = 2**18

#: Reruns a Monte Carlo figure of the plan draws (each task's check exact, the suite's sum
#: sampled: :func:`passk.stats.operating.operating_characteristic` with ``budget``).
PLAN_REPLICATES = 10_000


def _baseline_plan(criteria: GateCriteria, good_kw: dict[str, object], bads: list[np.ndarray],
                   baseline: Results, columns: list[tuple[str, np.ndarray]], *,
                   task_ids: Sequence[str] | None, margin: float | None, replicates: int,
                   rng: int) -> BaselinePlan:
    from passk.stats.operating import operating_characteristic

    good, bad, without = [], [], []
    for _, n in columns:
        good.append(baseline_operating_characteristic(
            criteria, n, baseline=baseline, task_ids=task_ids, margin=margin,
            replicates=replicates, rng=rng, **good_kw))  # type: ignore[arg-type]
        ocs = [baseline_operating_characteristic(criteria, n, q, baseline=baseline,
                                                 task_ids=task_ids, margin=margin,
                                                 replicates=replicates, rng=rng) for q in bads]
        bad.append(max(ocs, key=lambda o: o.probability))
        without.append(operating_characteristic(criteria, n, rng=rng, replicates=2000,
                                                **good_kw).probability)  # type: ignore[arg-type]
    return BaselinePlan(criteria.mode, criteria.margin if criteria.margin is not None
                        else margin, criteria.alpha, criteria.correction,
                        tuple(c for c, _ in columns), tuple(good), tuple(bad), tuple(without),
                        len(baseline))


def plan_gate(criteria: GateCriteria, rates: Sequence[float] | np.ndarray | None = None, *,
              pilot: tuple[Sequence[int] | np.ndarray, Sequence[int] | np.ndarray] | None = None,
              runs: Sequence[int] | None = None, false_block: float = 0.1,
              false_pass: float = 0.05, modes: Sequence[str] | None = None,
              rng: int = 0, baseline: Results | None = None,
              configured: Sequence[int] | np.ndarray | None = None,
              task_ids: Sequence[str] | None = None, margin: float | None = None,
              baseline_replicates: int = 200) -> GatePlan:
    r"""How often the gate passes a good suite and a bad one, over runs per task, per mode.

    The good suite is ``rates`` (each task's true success rate: the observed
    tasks' :math:`\hat p`, a pilot's, or an assumed spread). The bad suites sit
    at the bar: the good one with every logit lowered alike until its mean
    pass^k is the bar (:func:`passk.stats.operating.lowered_rates`), and
    identical tasks at :math:`p = \text{bar}^{1/k}`. For each mode and each n of
    the grid, :func:`passk.stats.operating.operating_characteristic` gives
    P(pass) on each: exact where the estimates' lattice spans at most
    :data:`PLAN_BUDGET` steps (or some task can never pass its own check: 0),
    otherwise a Monte Carlo of :data:`PLAN_REPLICATES` reruns with its standard
    error (``methods``, ``good_se``, ``bad_se``; each task's own check exact, the
    suite's sum sampled), so that a plan of 300 tasks over the default grid costs
    seconds (issue 41). ``needed`` is the fewest runs with false block
    (1 - P(pass | good)) at most ``false_block`` and false pass at most
    ``false_pass``, each judged on the worse end (a Monte Carlo figure's 2 s.e.).
    With ``pilot`` (observed counts) instead of rates, each task's rate is its
    Jeffreys posterior (the rerun is beta-binomial), and the bad suites are built
    from the posterior means.

    With ``baseline`` (the results the gate compares with, ``passk gate NEW --baseline
    OLD``), :attr:`GatePlan.baseline` is the gate in the criteria's mode with that
    comparison too (its margin, alpha and correction), by Monte Carlo through the judge
    (:func:`baseline_operating_characteristic`, ``baseline_replicates`` reruns a figure,
    each with its standard error): for the design as run (``configured``: each task's
    runs, its tier's) and, when ``runs`` is given, for each n of it. The baseline's
    comparison is not a per-task-separable decision, so no exact figure is claimed.

    Examples
    --------
    >>> plan = plan_gate(GateCriteria(), [0.995] * 26 + [0.0] * 4, runs=(12,),
    ...                  modes=("chapter", "proved-warn"))
    >>> round(1 - plan.pass_good["chapter"][0], 2), round(plan.pass_good["proved-warn"][0], 2)
    (0.79, 0.93)
    >>> plan.needed["proved-warn"], plan.needed["chapter"]
    (12, None)
    """
    from passk.criteria import GATE_MODES
    from passk.stats.operating import (
        lowered_rates,
        operating_characteristic,
        warning_miss_rate,
    )
    if pilot is not None:
        pc = np.asarray(pilot[0], dtype=float).ravel()
        pm = np.broadcast_to(np.asarray(pilot[1], dtype=float), pc.shape).ravel()
        rates = (pc + 0.5) / (pm + 1.0)
    if rates is None:
        raise BadInput("rates or a pilot are needed")
    p = np.asarray(rates, dtype=float).ravel()
    good_kw: dict[str, object] = ({"pilot": pilot} if pilot is not None else {"rates": p})
    k, bar = criteria.k, criteria.min_overall_pass_hat_k
    grid = tuple(sorted({int(n) for n in (runs or (8, 12, 16, 24, 32, 48, 64, 96))
                         if n >= max(k, criteria.min_runs, 1)}))
    if not grid:
        raise BadInput(f"runs: no value is at least k ({k}) and min_runs")
    bads = [np.full(p.size, bar ** (1.0 / k))]
    with contextlib.suppress(ValueError):  # all tasks at 0 or 1: no shift moves them
        bads.append(lowered_rates(p, k, bar))
    chosen = tuple(modes) if modes is not None else GATE_MODES
    good: dict[str, tuple[float, ...]] = {}
    bad: dict[str, tuple[float, ...]] = {}
    how: dict[str, tuple[str, ...]] = {}
    needed: dict[str, int | None] = {}
    good_high: dict[str, tuple[float, ...]] = {}
    bad_low: dict[str, tuple[float, ...]] = {}
    good_se: dict[str, tuple[float, ...]] = {}
    bad_se: dict[str, tuple[float, ...]] = {}
    for mode in chosen:
        crit = replace(criteria, mode=mode)
        g, gh, b, bl, m, gs, bs = [], [], [], [], [], [], []
        for n in grid:
            oc = operating_characteristic(crit, n, rng=rng, replicates=PLAN_REPLICATES,
                                          budget=PLAN_BUDGET,
                                          **good_kw)  # type: ignore[arg-type]
            ocs = [operating_characteristic(crit, n, q, rng=rng, replicates=PLAN_REPLICATES,
                                            budget=PLAN_BUDGET) for q in bads]
            worst = max(ocs, key=lambda o: o.high)
            g.append(oc.low)  # the worse end: exact, a bracket's, or 2 s.e. below
            gh.append(oc.high)
            b.append(worst.high)
            bl.append(max(o.low for o in ocs))
            gs.append(oc.standard_error)
            bs.append(worst.standard_error)
            methods = {oc.method, *(o.method for o in ocs)}  # the least exact of the cell
            m.append(next(x for x in ("monte carlo", "bracket", "exact") if x in methods))
        good[mode], bad[mode], how[mode] = tuple(g), tuple(b), tuple(m)
        good_high[mode], bad_low[mode] = tuple(gh), tuple(bl)
        good_se[mode], bad_se[mode] = tuple(gs), tuple(bs)
        needed[mode] = next((n for n, x, y in zip(grid, g, b, strict=True)
                             if 1 - x <= false_block and y <= false_pass), None)
    miss = tuple(warning_miss_rate(n, criteria.max_flakiness) for n in grid)
    with_baseline = None
    if baseline is not None:
        columns = ([("as run", np.broadcast_to(np.asarray(configured, dtype=np.int64),
                                               p.shape).copy())] if configured is not None
                   else [])
        columns += [(str(n), np.full(p.size, n, dtype=np.int64)) for n in
                    (grid if runs is not None else ())]
        if not columns:
            raise ValueError("a plan with a baseline needs the design: configured (each "
                             "task's runs) or runs")
        with_baseline = _baseline_plan(criteria, good_kw, bads, baseline, columns,
                                       task_ids=task_ids, margin=margin,
                                       replicates=baseline_replicates, rng=rng)
    return GatePlan(criteria, p.size, float(np.mean(p**k)), grid, good, bad, how, needed,
                    false_block, false_pass, miss, good_high, bad_low, with_baseline,
                    good_se, bad_se, PLAN_REPLICATES)


def format_gate_plan(plan: GatePlan, *, markdown: bool = False) -> str:
    """The plan: per mode, false block on the good suite and false pass at the bar by runs."""
    c = plan.criteria
    lines = [(f"the gate ({c.describe()}) on {plan.tasks} tasks like these (mean "
              f"pass^{c.k} {plan.good_mean:.3f}), by runs per task: false block = 1 - P(pass) "
              "on them; false pass = P(pass) at the bar (the same tasks lowered to it, or "
              "identical tasks there, the larger)"), ""]
    header = ["mode", "error"] + [str(n) for n in plan.runs]
    body = []
    def shown(ranges: list[tuple[float, float]]) -> list[str]:  # a bracket: both its ends
        return [f"{lo:.3f}" if f"{lo:.3f}" == f"{hi:.3f}" else f"{lo:.3f}-{hi:.3f}"
                for lo, hi in ranges]
    for mode in plan.pass_good:
        body.append([mode, "false block", *shown(plan.false_block_range(mode))])
        body.append(["", "false pass", *shown(plan.false_pass_range(mode))])
    body.append(["proved-warn", "warning misses"] + [f"{x:.3f}" for x in plan.miss_rate])
    lines.append(format_rows(header, body, numeric=set(range(2, len(header))),
                             markdown=markdown))
    lines.append("")
    for mode, n in plan.needed.items():
        lines.append(f"{mode}: " + (f"{n} runs a task bring false block <= "
                                    f"{plan.false_block:g} and false pass <= "
                                    f"{plan.false_pass:g}" if n is not None else
                                    f"no runs in {plan.runs[0]}..{plan.runs[-1]} reach false "
                                    f"block <= {plan.false_block:g} and false pass <= "
                                    f"{plan.false_pass:g}"))
    lines.append("'proved-warn' warns, without blocking, on a task over the cap; 'warning "
                 "misses' is the worst case over truly flaky tasks of no warning.")
    if any("bracket" in m for m in plan.methods.values()):
        lines.append("a-b: a bracket (the values rounded down and up to a grid that could not "
                     "hold their lattice); runs needed are judged on the worse end.")
    lines += _methods_lines(plan)
    if plan.baseline is not None:
        lines += ["", *_format_baseline(plan.baseline, markdown=markdown)]
    return "\n".join(lines)


def _methods_lines(plan: GatePlan) -> list[str]:
    """How each mode's figures were computed, by runs: exact, or Monte Carlo with its s.e."""
    out = []
    for mode, methods in plan.methods.items():
        parts = []
        for method in ("exact", "bracket", "monte carlo"):
            ns = [str(n) for n, m in zip(plan.runs, methods, strict=True) if m == method]
            if not ns:
                continue
            if method == "monte carlo":
                se = max(max(s, t) for s, t, m in zip(plan.good_se.get(mode, ()),
                                                       plan.bad_se.get(mode, ()), methods,
                                                       strict=True) if m == method)
                spread = (f"s.e. at most {se:.4f}, a-b the estimate +- 2 s.e." if se > 0 else
                          "every rerun of each figure decided alike: s.e. 0 as estimated, "
                          f"within 3/{plan.replicates:,} at 95%")
                parts.append(f"Monte Carlo at {', '.join(ns)} ({plan.replicates:,} reruns a "
                             f"figure, each task's own check exact; {spread})")
            else:
                parts.append(f"{method} at {', '.join(ns)}")
        out.append(f"{mode}: " + "; ".join(parts))
    if any("monte carlo" in m for m in plan.methods.values()):
        out.append("runs needed are judged on the worse end of each figure.")
    return out


def _format_baseline(b: BaselinePlan, *, markdown: bool) -> list[str]:
    """The gate with its baseline: per design, false block and false pass, each ± s.e."""
    margin = (f"non-inferiority within {b.margin:g} must be shown" if b.margin is not None
              else "no drop may be shown")
    reps = b.good[0].replicates if b.good else 0
    head = (f"with the baseline ({b.baseline_tasks} tasks; {margin}; alpha {b.alpha:g}, "
            f"{b.correction} across tasks), mode {b.mode}: Monte Carlo through the judge, "
            f"{reps} reruns a figure, ± its standard error")
    header = ["runs", "false block", "false pass", "false block without the baseline"]
    body = [[c, f"{1 - g.probability:.3f} ± {g.standard_error:.3f}",
             f"{x.probability:.3f} ± {x.standard_error:.3f}", f"{1 - w:.3f}"]
            for c, g, x, w in zip(b.columns, b.good, b.bad, b.without, strict=True)]
    return [head, "", format_rows(header, body, numeric={1, 2, 3}, markdown=markdown),
            "'as run': each task its runs in FILE (its tier's)."]


#: Monte Carlo reruns of a baseline comparison (each a call of the judge) by default.
BASELINE_REPLICATES = 400


def _judged_pass(new: Results, criteria: GateCriteria, baseline: Results, *,
                 ks: Sequence[int], margin: float | None, accept_incomplete: bool) -> bool:
    """The judge's verdict with the baseline; the judge without it first, whose reasons are
    a subset of the judge's with it (:func:`passk.gate.judge.judge` appends the baseline's
    reasons to the rest), so a suite it blocks is blocked and its comparison not computed."""
    from passk.gate.judge import judge

    if not judge(new, criteria, ks=ks, accept_incomplete=accept_incomplete).passed:
        return False
    return judge(new, criteria, baseline, ks=ks, accept_incomplete=accept_incomplete,
                 margin=margin).passed


def baseline_operating_characteristic(
        criteria: GateCriteria, runs: int | Sequence[int] | np.ndarray,
        rates: Sequence[float] | np.ndarray | None = None, *,
        baseline: Results | tuple[Sequence[float] | np.ndarray, int | Sequence[int] | np.ndarray],
        pilot: tuple[Sequence[int] | np.ndarray, Sequence[int] | np.ndarray] | None = None,
        task_ids: Sequence[str] | None = None, ks: Sequence[int] | None = None,
        margin: float | None = None, accept_incomplete: bool = False,
        replicates: int = BASELINE_REPLICATES, rng: int | np.random.Generator | None = None
        ) -> OperatingCharacteristic:
    r"""P(the gate passes) with a baseline: Monte Carlo through the real judge, with its s.e.

    The gate a user runs with ``--baseline OLD`` blocks on its own reasons (every mode, as
    :func:`passk.stats.operating.operating_characteristic` computes) and also on the
    comparison with the baseline (:func:`passk.gate.judge.judge`'s baseline rules: a
    baseline task without runs, a task that regressed beyond repeat noise by Fisher's
    exact test corrected across tasks, a suite shown worse by the paired comparison, and,
    with a margin, a suite whose non-inferiority within it is not shown). That comparison
    is not a function of independent per-task values against a threshold (the paired
    interval's width depends on the spread of the differences over the tasks), so P(pass)
    is estimated: ``replicates`` reruns of the new suite are drawn and each is judged.

    Parameters
    ----------
    criteria : GateCriteria
        The gate in force, with its baseline settings (``alpha``, ``correction``,
        ``margin``) and ``mode``.
    runs : int or sequence of int
        Runs per task of the new suite (per task: its tier's), broadcast to the rates.
    rates : sequence of float, optional
        Each new task's true success rate (or give ``pilot``).
    baseline : Results or (rates, runs)
        The baseline the gate compares with: a ``Results`` is the fixed file (``passk gate
        NEW --baseline OLD`` with OLD on disk, so P(pass) is given OLD); ``(rates, runs)``
        a baseline not yet run, drawn anew for every rerun (A/A: the new rates; A/B: others).
    pilot : (successes, totals), optional
        Instead of ``rates``: each rerun draws each task's rate from its Jeffreys posterior
        Beta(c + 1/2, m - c + 1/2) first, as
        :func:`~passk.stats.operating.operating_characteristic` does.
    task_ids : sequence of str, optional
        The new suite's task ids, paired with the baseline's by id (default: the baseline's
        when it is a ``Results`` of as many tasks, else ``t0``, ``t1``, ...).
    ks : sequence of int, optional
        Each task's k (default ``criteria.k``).
    margin : float, optional
        The non-inferiority margin when ``criteria.margin`` is None (the judge's ``margin``).
    accept_incomplete : bool, default False
        As the gate's ``--accept-incomplete`` (an incomplete baseline blocks otherwise).
    replicates : int, default 400
        Reruns judged.
    rng : int, numpy.random.Generator or None

    Returns
    -------
    OperatingCharacteristic
        ``method='monte carlo'``, ``standard_error`` :math:`\sqrt{\hat P(1-\hat P)/R}`,
        ``low``/``high`` :math:`\hat P \mp 2` s.e.

    Notes
    -----
    Each rerun draws :math:`c_i \sim \mathrm{Bin}(n_i, p_i)` independently (and the
    baseline's, when it is drawn), builds the ``Results`` and asks the judge; P(pass) is
    the fraction passed, unbiased, with the binomial standard error. Two savings leave
    each verdict the judge's: a suite the judge blocks without the baseline is blocked
    with it (its reasons only grow), and a count vector seen before has its verdict
    reused (the judge is a function of the counts).

    Examples
    --------
    The good suite of :func:`~passk.stats.operating.operating_characteristic`'s example,
    in ``'proved-warn'``: 0.928 without a baseline. Against an A/A baseline with a margin
    of 0.05 the comparison cannot show non-inferiority from 30 tasks, so it blocks:

    >>> rates = [0.995] * 26 + [0.0] * 4
    >>> crit = GateCriteria(mode="proved-warn", margin=0.05)
    >>> oc = baseline_operating_characteristic(crit, 12, rates, baseline=(rates, 12),
    ...                                        replicates=40, rng=1)
    >>> oc.probability, oc.method
    (0.0, 'monte carlo')
    """
    from passk.results.counts import Results as _Results

    if isinstance(replicates, bool) or not isinstance(replicates, int) or replicates < 1:
        raise ValueError(f"replicates ({replicates!r}) must be a whole number >= 1")
    gen = np.random.default_rng(rng)
    p, beta = population(rates, pilot)  # the same population the operating characteristic meets
    n = np.broadcast_to(np.asarray(runs, dtype=np.int64), p.shape).ravel()
    if np.any(n < 1):
        raise ValueError("runs must be whole numbers >= 1")
    ks_ = [int(criteria.k)] * p.size if ks is None else [int(k) for k in ks]
    fixed = isinstance(baseline, _Results)
    if task_ids is None:
        task_ids = (baseline.task_ids if fixed and len(baseline) == p.size  # type: ignore[union-attr]
                    else tuple(f"t{i}" for i in range(p.size)))
    ids = tuple(str(t) for t in task_ids)
    if len(ids) != p.size:
        raise ValueError(f"task_ids ({len(ids)}) must name each of the {p.size} tasks")
    if not fixed:
        bp = np.asarray(baseline[0], dtype=float).ravel()  # type: ignore[index]
        bn = np.broadcast_to(np.asarray(baseline[1], dtype=np.int64),  # type: ignore[index]
                             bp.shape).ravel()
        if bp.size != p.size or np.any(~((bp >= 0) & (bp <= 1))) or np.any(bn < 1):
            raise ValueError("baseline (rates, runs): one rate in [0, 1] and runs >= 1 per task")
    zeros, risks = np.zeros(p.size, dtype=np.int64), ("read-only",) * p.size
    seen: dict[bytes, bool] = {}
    passed = 0
    for _ in range(replicates):
        drawn = p if beta is None else gen.beta(*beta)
        c = gen.binomial(n, drawn).astype(np.int64)
        old = baseline if fixed else None
        key = c.tobytes()
        if old is None:
            bc = gen.binomial(bn, bp).astype(np.int64)
            key += bc.tobytes()
        if key not in seen:
            if old is None:
                old = _Results(ids, bc, bn.copy(), zeros, risks, source="baseline")
            new = _Results(ids, c, n.copy(), zeros, risks, source="simulated")
            seen[key] = _judged_pass(new, criteria, old,  # type: ignore[arg-type]
                                     ks=ks_, margin=margin, accept_incomplete=accept_incomplete)
        passed += seen[key]
    prob = passed / replicates
    se = math.sqrt(prob * (1 - prob) / replicates)
    return OperatingCharacteristic(prob, max(prob - 2 * se, 0.0), min(prob + 2 * se, 1.0), se,
                                   "monte carlo", criteria.mode, replicates)
