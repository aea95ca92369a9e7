"""Report, gate and plan for a results file: the engine behind ``passk report/gate/plan``.

Builds on :func:`passk.stability.suite_report` (the per-task rows and the
report JSON) and adds what a file of someone else's runs needs:

- a per-task k (``k_for`` by risk label), with a task that has fewer runs
  than its k, or than ``min_runs``, failing the gate closed, by name;
- ``gate_on="lower-bound"``: the dual gate on each task's exact one-sided
  lower bound instead of its point estimate, so 3 passes in 3 runs do not
  clear a strict bar they have not earned;
- the suite's pass@k and pass^k curve over k, with a percentile bootstrap
  interval over tasks;
- for each task, whether more runs (up to a maximum n) could still change its
  verdict, and at most how many more settle it.

Everything is vectorized over tasks; nothing calls scipy once per task.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .io import Results
from .metrics import (
    estimate_pass_at_k,
    estimate_pass_hat_k,
    exact_bootstrap_pass_hat_k_ci,
    flakiness,
    pass_hat_k_lower_bound,
)
from .stability import (
    CLASSES, GATE_ON, GateResult, RepeatPolicy, SuiteReport, TaskReport, reliability_gate,
)

__all__ = ["FileReport", "build_report", "suite_curve", "plan_tasks",
           "format_report", "format_curve", "format_plan", "GATE_ON"]


#: Above this many task draws the suite interval uses the normal approximation.
_BOOTSTRAP_LIMIT = 20_000_000
_BOOTSTRAP_RESAMPLES = 1000


@dataclass(frozen=True)
class Curve:
    """The suite's pass@k and pass^k for k = 1..K: means over the tasks with n >= k."""

    ks: np.ndarray
    pass_at_k: np.ndarray
    pass_hat_k: np.ndarray
    at_ci: np.ndarray  # shape (K, 2)
    hat_ci: np.ndarray
    tasks: np.ndarray  # tasks with n >= k, per k
    method: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "k": self.ks.tolist(),
            "pass_at_k": [_num(x) for x in self.pass_at_k],
            "pass_at_k_ci": [[_num(lo), _num(hi)] for lo, hi in self.at_ci],
            "pass_hat_k": [_num(x) for x in self.pass_hat_k],
            "pass_hat_k_ci": [[_num(lo), _num(hi)] for lo, hi in self.hat_ci],
            "tasks": self.tasks.tolist(),
            "interval": self.method,
        }


@dataclass(frozen=True)
class FileReport:
    """A results file scored: the suite report, per-task k and exclusions, the curve."""

    report: SuiteReport
    results: Results
    ks: np.ndarray
    curve: Curve
    per_task_at: np.ndarray  # shape (tasks, K)
    per_task_hat: np.ndarray
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def gate(self) -> GateResult:
        return self.report.gate

    def to_dict(self, *, curves: bool = True) -> dict[str, Any]:
        """The report JSON of :meth:`SuiteReport.to_dict`, plus added keys.

        Added: ``format``, ``notes``, ``curve``, ``options``; per task
        ``excluded``, ``k``, and (``curves=True``) ``pass_at_k_by_k`` and
        ``pass_hat_k_by_k`` for k = 1..K; in ``gate``, ``on`` and ``min_runs``.
        """
        out = self.report.to_dict()
        excluded = self.results.excluded.tolist()
        ks = self.ks.tolist()
        at = np.round(self.per_task_at, 6)
        hat = np.round(self.per_task_hat, 6)
        for i, row in enumerate(out["tasks"]):
            row["excluded"] = excluded[i]
            row["k"] = ks[i]
            if curves:
                row["pass_at_k_by_k"] = [None if math.isnan(x) else x for x in at[i].tolist()]
                row["pass_hat_k_by_k"] = [None if math.isnan(x) else x for x in hat[i].tolist()]
        out["gate"]["on"] = self.options.get("gate_on", "estimate")
        out["gate"]["min_runs"] = self.options.get("min_runs", 0)
        if self.results.protocol is not None:
            out["protocol"] = self.results.protocol.to_dict()
        out["format"] = self.results.source
        out["notes"] = list(self.results.notes)
        out["curve"] = self.curve.to_dict()
        out["options"] = {k: v for k, v in self.options.items()}
        return out


def _num(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else round(float(x), 6)


# --------------------------------------------------------------------------
# the curve
# --------------------------------------------------------------------------


def _curve_matrix(c: np.ndarray, n: np.ndarray, kmax: int, *, at: bool) -> np.ndarray:
    ks = np.arange(1, kmax + 1)
    f = estimate_pass_at_k if at else estimate_pass_hat_k
    if c.size == 0:
        return np.empty((0, kmax))
    return np.asarray(f(c[:, None], n[:, None], ks[None, :]), dtype=float).reshape(c.size, kmax)


def suite_curve(at: np.ndarray, hat: np.ndarray, *, confidence: float = 0.95,
                seed: int = 0) -> Curve:
    """Means over tasks of per-task pass@k and pass^k (columns k = 1..K), with intervals.

    The interval is a percentile bootstrap over tasks (tasks resampled with
    replacement, 1000 resamples, seed 0), which carries each task's own repeat
    noise along with the choice of tasks; for suites too large to resample
    cheaply it is the normal approximation ``mean ± z·sd/√m`` (the bootstrap's
    limit). Tasks with fewer runs than k are left out of column k.
    """
    m, kmax = hat.shape
    ks = np.arange(1, kmax + 1)
    valid = ~np.isnan(hat)
    counts = valid.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_at = np.where(counts > 0, np.nansum(at, axis=0) / np.maximum(counts, 1), np.nan)
        mean_hat = np.where(counts > 0, np.nansum(hat, axis=0) / np.maximum(counts, 1), np.nan)
    alpha = 1 - confidence
    at_ci = np.full((kmax, 2), np.nan)
    hat_ci = np.full((kmax, 2), np.nan)
    if m and m * _BOOTSTRAP_RESAMPLES <= _BOOTSTRAP_LIMIT:
        method = f"percentile bootstrap over tasks ({_BOOTSTRAP_RESAMPLES} resamples, seed {seed})"
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, m, size=(_BOOTSTRAP_RESAMPLES, m))
        for j in range(kmax):
            for values, ci in ((at[:, j], at_ci), (hat[:, j], hat_ci)):
                ok = valid[:, j]
                if not ok.any():
                    continue
                v = values[ok]
                draws = v[rng.integers(0, v.size, size=(_BOOTSTRAP_RESAMPLES, v.size))] \
                    if not ok.all() else values[idx]
                means = draws.mean(axis=1)
                ci[j] = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    else:
        from scipy.stats import norm

        method = "normal approximation over tasks (mean ± z·sd/√m)"
        z = float(norm.ppf(1 - alpha / 2))
        for values, mean, ci in ((at, mean_at, at_ci), (hat, mean_hat, hat_ci)):
            with np.errstate(invalid="ignore"):
                sd = np.nanstd(values, axis=0, ddof=1) if m > 1 else np.zeros(kmax)
            half = z * sd / np.sqrt(np.maximum(counts, 1))
            ci[:, 0] = np.clip(mean - half, 0, 1)
            ci[:, 1] = np.clip(mean + half, 0, 1)
    return Curve(ks, mean_at, mean_hat, at_ci, hat_ci, counts, method)


# --------------------------------------------------------------------------
# the gate
# --------------------------------------------------------------------------


# --------------------------------------------------------------------------
# the report
# --------------------------------------------------------------------------


def _task_ks(results: Results, k: int | None, k_for: Mapping[str, int] | None) -> np.ndarray:
    n = results.totals
    if k is None:
        positive = n[n > 0]
        k = int(positive.min()) if positive.size else 1
    ks = np.full(len(results), int(k), dtype=np.int64)
    for risk, kk in (k_for or {}).items():
        ks[np.asarray([r == risk for r in results.risks], dtype=bool)] = int(kk)
    return ks


def _rows(results: Results, ks: np.ndarray, *, confidence: float,
          max_flakiness: float) -> tuple[TaskReport, ...]:
    """The rows of :func:`passk.stability.suite_report`, each task at its own k.

    The same estimator calls as ``suite_report`` (the tests check the rows are
    equal), without its gate, and converted to Python numbers in bulk, so
    10**5 tasks take a fraction of a second.
    """
    c, n = results.successes, results.totals
    with np.errstate(invalid="ignore", divide="ignore"):
        pass_rate = np.where(n > 0, c / np.maximum(n, 1), np.nan)
    at_k = np.atleast_1d(estimate_pass_at_k(c, n, ks)).astype(float)
    hat_k = np.atleast_1d(estimate_pass_hat_k(c, n, ks)).astype(float)
    flaky = np.atleast_1d(flakiness(c, n)).astype(float)
    low, high = (np.atleast_1d(x).astype(float)
                 for x in exact_bootstrap_pass_hat_k_ci(c, n, ks, confidence=confidence))
    bound = np.atleast_1d(pass_hat_k_lower_bound(c, n, ks, confidence=confidence)).astype(float)
    cls = np.where(n == 0, "no-evidence", np.where(
        flaky > max_flakiness, "flaky", np.where(2 * c >= n, "stable-pass", "stable-fail")))
    return tuple(map(TaskReport, results.task_ids, results.risks, n.tolist(), c.tolist(),
                     pass_rate.tolist(), at_k.tolist(), hat_k.tolist(), flaky.tolist(),
                     zip(low.tolist(), high.tolist()), bound.tolist(), cls.tolist()))


def build_report(
    results: Results,
    *,
    k: int | None = None,
    k_for: Mapping[str, int] | None = None,
    confidence: float = 0.95,
    min_overall_pass_hat_k: float = 0.7,
    max_flakiness: float = 0.2,
    gate_on: str = "estimate",
    min_runs: int = 0,
    curve_k: int | None = None,
) -> FileReport:
    """Score a results file's counts: rows at each task's k, the dual gate, the curve.

    Parameters
    ----------
    results : Results
    k : int, optional
        The k of pass^k; default the smallest n over tasks that have runs.
    k_for : Mapping[str, int], optional
        A k per risk label, overriding ``k`` for tasks with that label.
    gate_on : {"estimate", "lower-bound"}
    min_runs : int
        A task with fewer counted runs fails the gate.
    curve_k : int, optional
        The curve's largest k; default the largest per-task k.

    Examples
    --------
    >>> from passk.io import Run, results_from_runs
    >>> runs = [Run("a", True, t) for t in range(4)] + [Run("b", t < 2, t) for t in range(4)]
    >>> fr = build_report(results_from_runs(runs), min_overall_pass_hat_k=0.5)
    >>> fr.ks.tolist(), fr.curve.pass_hat_k.round(4).tolist()
    ([4, 4], [0.75, 0.5833, 0.5, 0.5])
    """
    ks = _task_ks(results, k, k_for)
    c, n = results.successes, results.totals
    final = _rows(results, ks, confidence=confidence, max_flakiness=max_flakiness)
    gate = reliability_gate(final, ks=ks.tolist(), excluded=results.excluded.tolist(),
                            min_overall_pass_hat_k=min_overall_pass_hat_k,
                            max_flakiness=max_flakiness, on=gate_on, min_runs=min_runs,
                            confidence=confidence)
    headline = int(ks[0]) if len(ks) and len(set(ks.tolist())) == 1 else int(ks.max(initial=1))
    report = SuiteReport(headline, final, gate)
    kmax = int(curve_k or ks.max(initial=1))
    at = _curve_matrix(c, n, kmax, at=True)
    hat = _curve_matrix(c, n, kmax, at=False)
    curve = suite_curve(at, hat, confidence=confidence)
    options = {"k": None if k is None else int(k), "k_for": dict(k_for or {}),
               "confidence": confidence, "min_overall": min_overall_pass_hat_k,
               "max_flakiness": max_flakiness, "gate_on": gate_on, "min_runs": min_runs}
    return FileReport(report, results, ks, curve, at, hat, options)


# --------------------------------------------------------------------------
# the plan: can more runs still change a task's verdict?
# --------------------------------------------------------------------------


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
               min_overall_pass_hat_k: float = 0.7, max_flakiness: float = 0.2,
               gate_on: str = "estimate", min_runs: int = 0,
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
    >>> from passk.io import Run, results_from_runs
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


# --------------------------------------------------------------------------
# printing
# --------------------------------------------------------------------------


def _cell(x: float, digits: int = 3) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def _cells(values: Sequence[float]) -> list[str]:
    """``_cell`` over a column (NaN prints as '-'); no function call per cell."""
    return [f"{x:.3f}" if x == x else "-" for x in values]  # x != x only for NaN


def _table(header: list[str], body: list[list[str]], numeric: set[int], markdown: bool) -> str:
    return _table_columns(header, [list(col) for col in zip(*body)] if body else
                          [[] for _ in header], numeric, markdown)


def _table_columns(header: list[str], columns: list[list[str]], numeric: set[int],
                   markdown: bool) -> str:
    """An aligned (or Markdown) table from columns of strings: formatted column-wise."""
    if markdown:
        lines = ["| " + " | ".join(header) + " |",
                 "|" + "|".join("---:" if i in numeric else "---"
                                for i in range(len(header))) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in zip(*columns)]
        return "\n".join(lines)
    padded = []
    for i, (h, col) in enumerate(zip(header, columns)):
        w = max(len(h), max(map(len, col), default=0))
        padded.append([h.rjust(w) if i in numeric else h.ljust(w)] +
                      [c.rjust(w) if i in numeric else c.ljust(w) for c in col])
    return "\n".join("  ".join(r).rstrip() for r in zip(*padded))


def _order(rows: Sequence[TaskReport]) -> list[int]:
    """Flaky tasks first (flakiest on top), then no-evidence, stable-fail, stable-pass."""
    rank = {c: i for i, c in enumerate(CLASSES)}
    cls = np.array([rank[t.cls] for t in rows], dtype=np.int64)
    flak = np.nan_to_num(np.array([t.flakiness for t in rows], dtype=float), nan=-1.0)
    return np.lexsort((-flak, cls)).tolist()


def format_report(fr: FileReport, *, markdown: bool = False, curve: bool = True) -> str:
    """Per-task table (flaky tasks on top), the suite curve, and the gate."""
    rows = fr.report.tasks
    ks = fr.ks.tolist()
    uniform = len(set(ks)) <= 1
    kname = f"{ks[0]}" if uniform and ks else "k"
    conf = f"{fr.options.get('confidence', 0.95):.0%}"
    header = ["task", "risk", "n", "left out", "passed", "p̂"]
    if not uniform:
        header.append("k")
    header += [f"pass@{kname}", f"pass^{kname}", f"{conf} CI", "lower", "flakiness", "class"]
    order = _order(rows)
    ordered = [rows[i] for i in order]
    excluded = fr.results.excluded[order].tolist() if rows else []
    cols = [[t.task_id for t in ordered], [t.risk for t in ordered],
            [str(t.runs) for t in ordered], list(map(str, excluded)),
            [str(t.successes) for t in ordered], _cells([t.pass_rate for t in ordered])]
    if not uniform:
        cols.append(list(map(str, fr.ks[order].tolist())))
    lo, hi = _cells([t.ci[0] for t in ordered]), _cells([t.ci[1] for t in ordered])
    cols += [_cells([t.pass_at_k for t in ordered]), _cells([t.pass_hat_k for t in ordered]),
             [f"[{a}, {b}]" for a, b in zip(lo, hi)], _cells([t.lower_bound for t in ordered]),
             _cells([t.flakiness for t in ordered]), [t.cls for t in ordered]]
    numeric = {i for i, h in enumerate(header) if h not in ("task", "risk", "class")}
    parts = [_table_columns(header, cols, numeric, markdown)]
    if curve:
        parts += ["", format_curve(fr, markdown=markdown)]
    parts += ["", format_gate(fr, markdown=markdown)]
    if fr.results.notes:
        parts += [""] + [("- " if markdown else "note: ") + note for note in fr.results.notes]
    return "\n".join(parts)


def format_curve(fr: FileReport, *, markdown: bool = False) -> str:
    cv = fr.curve
    conf = f"{fr.options.get('confidence', 0.95):.0%}"
    title = (f"suite of {len(fr.results)} tasks, pass@k and pass^k by k "
             f"({conf} {cv.method}):")
    header = ["k", "tasks", "pass@k", f"{conf} CI", "pass^k", f"{conf} CI "]
    body = [[str(k), str(m), _cell(a), f"[{_cell(alo)}, {_cell(ahi)}]", _cell(h),
             f"[{_cell(hlo)}, {_cell(hhi)}]"]
            for k, m, a, (alo, ahi), h, (hlo, hhi) in zip(
                cv.ks.tolist(), cv.tasks.tolist(), cv.pass_at_k, cv.at_ci, cv.pass_hat_k,
                cv.hat_ci)]
    table = _table(header, body, {0, 1, 2, 3, 4, 5}, markdown)
    return (f"**{title}**\n\n" if markdown else title + "\n") + table


def format_gate(fr: FileReport, *, markdown: bool = False) -> str:
    gate = fr.gate
    ks = sorted(set(fr.ks.tolist()))
    kname = f"pass^{ks[0]}" if len(ks) == 1 else "pass^k"
    on = fr.options.get("gate_on", "estimate")
    what = kname if on == "estimate" else f"lower bound on {kname}"
    verdict = (f"gate: {'PASSED' if gate.passed else 'BLOCKED'}  overall {what} = "
               f"{_cell(gate.overall)}  (bar {fr.options.get('min_overall', 0.7):.3f}, "
               f"flakiness cap {fr.options.get('max_flakiness', 0.2):.3f})")
    if markdown:
        return "\n".join([f"**{verdict}**"] + [f"- {r}" for r in gate.reasons])
    return "\n".join([verdict] + [f"  - {r}" for r in gate.reasons])


def format_plan(plans: Sequence[TaskPlan], *, markdown: bool = False) -> str:
    header = ["task", "risk", "n", "passed", "k", "max n", "verdict now", "can change",
              "extra runs at most"]
    order = sorted(range(len(plans)), key=lambda i: (not plans[i].open,
                                                      -plans[i].extra_at_most))
    body = [[p.task_id, p.risk, str(p.runs), str(p.successes), str(p.k), str(p.max_runs),
             "clears" if p.clears else "fails", "yes" if p.open else "no",
             str(p.extra_at_most)] for p in (plans[i] for i in order)]
    total = sum(p.extra_at_most for p in plans)
    n_open = sum(p.open for p in plans)
    lines = [_table(header, body, {2, 3, 4, 5, 8}, markdown), "",
             f"{n_open} of {len(plans)} tasks can still change their verdict; the suite "
             f"needs at most {total} more runs to settle."]
    return "\n".join(lines)


def policy_max_runs(results: Results, max_n: int | None,
                    policy: RepeatPolicy | None = None) -> list[int]:
    """Each task's maximum n: ``max_n`` if given, else its risk tier's runs in the policy."""
    if max_n is not None:
        return [int(max_n)] * len(results)
    policy = policy or RepeatPolicy()
    return [policy.runs_by_risk.get(r, policy.default) for r in results.risks]


def with_gate(fr: FileReport, gate: GateResult) -> FileReport:
    """A copy of ``fr`` with another gate verdict."""
    return replace(fr, report=replace(fr.report, gate=gate))
