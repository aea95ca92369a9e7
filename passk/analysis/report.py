"""Score a results file: the engine behind ``passk report`` and ``passk gate``.

Builds on :func:`passk.stability.suite_report` (the per-task rows, the gate
and the report JSON) and adds what a file of someone else's runs needs:

- a per-task k (``k_for`` by risk label), with a task that has fewer runs
  than its k, or than ``min_runs``, failing the gate closed, by name;
- ``gate_on="lower-bound"``: the dual gate on each task's exact one-sided
  lower bound instead of its point estimate, so 3 passes in 3 runs do not
  clear a strict bar they have not earned;
- a results file that says it is incomplete (a cancelled log, missing
  samples) fails the gate closed unless the user accepts it;
- the suite's pass@k and pass^k curve over k, on one set of tasks for every
  k, with an interval over tasks.

Everything is vectorized over tasks; nothing calls scipy once per task.
Which tasks more runs could still change is :mod:`passk.analysis.plan`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import chain
from operator import attrgetter
from typing import Any

import numpy as np

from passk.errors import BadInput
from passk.gate.bind import InForce
from passk.gate.judge import judge_suite
from passk.metrics import estimate_pass_at_k, estimate_pass_hat_k
from passk.render.tables import (
    baseline_line,
    cell,
    cells,
    format_columns,
    format_rows,
    json_number,
    list_items,
    one_line,
    show_ids,
)
from passk.render.words import plural
from passk.results.counts import Results
from passk.stability import (
    CLASS_THRESHOLD,
    DEFAULT_CRITERIA,
    GATE_ON,
    SHOWN_REASONS,
    GateCriteria,
    GateResult,
    SuiteReport,
    TaskReport,
    interval_note,
    order_rows,
)
from passk.stats.suite_interval import mean_pass_hat_k_ci

__all__ = [
    "GATE_ON",
    "Curve",
    "FileReport",
    "build_report",
    "format_curve",
    "format_gate",
    "format_report",
    "suite_curve",
]


@dataclass(frozen=True)
class Curve:
    """The suite's pass@k and pass^k for k = 1..K, over one set of tasks.

    Attributes
    ----------
    ks : numpy.ndarray
        1..K.
    pass_at_k, pass_hat_k : numpy.ndarray
        Means over the curve's tasks of the per-task unbiased estimates.
    at_ci, hat_ci : numpy.ndarray
        Shape (K, 2): each mean's interval over tasks.
    tasks : int
        The tasks in the curve: those with at least K runs, the same for every k.
    left_out : int
        Tasks with fewer than K runs, left out of every k (so the curve cannot
        rise with k because its task set shrank).
    method : str
        The interval's method, in words.
    level : str
        The level as printed: ``'95%'``, or ``'95% nominal, not guaranteed'``
        when some k's interval does not keep it (see
        :attr:`passk.stats.suite_interval.SuiteInterval.level`).
    """

    ks: np.ndarray
    pass_at_k: np.ndarray
    pass_hat_k: np.ndarray
    at_ci: np.ndarray
    hat_ci: np.ndarray
    tasks: int
    left_out: int
    method: str
    level: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The curve in the report JSON, at full precision."""
        return {
            "k": self.ks.tolist(),
            "pass_at_k": [json_number(x) for x in self.pass_at_k],
            "pass_at_k_ci": [[json_number(lo), json_number(hi)] for lo, hi in self.at_ci],
            "pass_hat_k": [json_number(x) for x in self.pass_hat_k],
            "pass_hat_k_ci": [[json_number(lo), json_number(hi)] for lo, hi in self.hat_ci],
            "tasks": self.tasks,
            "tasks_left_out": self.left_out,
            "interval": self.method,
            "interval_level": self.level,
        }


@dataclass(frozen=True)
class FileReport:
    """A results file scored: the suite report, per-task k and exclusions, the curve.

    In a notebook it displays itself as ``passk report`` prints it.
    """

    report: SuiteReport
    results: Results
    ks: np.ndarray
    options: dict[str, Any] = field(default_factory=dict)
    #: The curve's largest k (None: the largest per-task k).
    curve_k: int | None = None
    #: The criteria in force with their origins (:func:`passk.gate.bind.bind`), when bound.
    bound: InForce | None = None

    # The curve and the per-task rows by k are computed when first asked for
    # (``passk report`` prints them; ``passk gate`` decides without them).

    @property
    def kmax(self) -> int:
        """The curve's largest k."""
        return int(self.curve_k or self.ks.max(initial=1))

    @cached_property
    def curve(self) -> Curve:
        """The suite's pass@k and pass^k for k = 1..K (:func:`suite_curve`)."""
        return suite_curve(self.results.successes, self.results.totals, self.kmax,
                           confidence=self.report.confidence,
                           ks=curve_ks(self.kmax, keep=np.unique(self.ks).tolist()))

    def with_curve(self, curve: Curve) -> FileReport:
        """This report with the given curve in place of the one it would compute."""
        out = replace(self)
        out.__dict__["curve"] = curve  # what cached_property would have stored
        return out

    @cached_property
    def per_task_at(self) -> np.ndarray:
        """Each task's pass@k for k = 1..K, shape (tasks, K)."""
        return _curve_matrix(self.results.successes, self.results.totals, self.kmax, at=True)

    @cached_property
    def per_task_hat(self) -> np.ndarray:
        """Each task's pass^k for k = 1..K, shape (tasks, K)."""
        return _curve_matrix(self.results.successes, self.results.totals, self.kmax, at=False)

    @property
    def gate(self) -> GateResult:
        """The judge's verdict on the file."""
        gate = self.report.gate
        if gate is None:  # build_report always judges: only a hand-made FileReport lacks one
            raise BadInput("this FileReport was not judged: build it with build_report")
        return gate

    def to_dict(self, *, curves: bool = True, curve: bool = True) -> dict[str, Any]:
        """The report JSON of :meth:`SuiteReport.to_dict`, plus added keys.

        Added: ``format``, ``notes``, ``incomplete``, ``curve`` (``curve=True``), ``options``;
        per task ``excluded``, ``k``, and (``curves=True``) ``pass_at_k_by_k``
        and ``pass_hat_k_by_k`` for k = 1..K; in ``gate``, ``on``, ``min_runs``,
        ``bar``, ``cap``, ``declared`` (the protocol's criteria) and ``stricter``.
        Every float at full precision.
        """
        out = self.report.to_dict()
        excluded = self.results.excluded.tolist()
        ks = self.ks.tolist()
        for i, row in enumerate(out["tasks"]):
            row["excluded"] = excluded[i]
            row["k"] = ks[i]
            if curves:
                row["pass_at_k_by_k"] = [json_number(x) for x in self.per_task_at[i].tolist()]
                row["pass_hat_k_by_k"] = [json_number(x) for x in self.per_task_hat[i].tolist()]
        opts = self.options
        out["gate"].update({"on": opts.get("gate_on", DEFAULT_CRITERIA.on),
                            "min_runs": opts.get("min_runs", DEFAULT_CRITERIA.min_runs),
                            "bar": opts.get("min_overall",
                                            DEFAULT_CRITERIA.min_overall_pass_hat_k),
                            "cap": opts.get("max_flakiness", DEFAULT_CRITERIA.max_flakiness),
                            "declared": dict(opts.get("declared", {})),
                            "stricter": list(opts.get("stricter", ())),
                            "mode": opts.get("mode", DEFAULT_CRITERIA.mode),
                            "policy": opts.get("policy"),
                            "policy_sha256": opts.get("policy_sha256"),
                            "policy_line": self.gate.policy_line,
                            "overrides": list(self.gate.named),
                            "baseline": (None if self.gate.baseline is None
                                         else dict(self.gate.baseline))})
        if self.results.protocol is not None:
            out["protocol"] = self.results.protocol.to_dict()
        out["format"] = self.results.source
        out["notes"] = list(self.results.notes)
        out["incomplete"] = list(_incomplete(self.results))
        if curve:
            out["curve"] = self.curve.to_dict()
        out["options"] = dict(opts)
        return out

    def __str__(self) -> str:
        return format_report(self, limit=SHOWN_REASONS)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_markdown_(self) -> str:
        return format_report(self, markdown=True, limit=SHOWN_REASONS)


def _incomplete(results: Results) -> tuple[str, ...]:
    return tuple(getattr(results, "incomplete", ()) or ())


# --------------------------------------------------------------------------
# the curve
# --------------------------------------------------------------------------


#: Every k up to this one is on the curve; beyond it, the 1-2-2.5-3-4-5-6-8 series of each
#: decade (25, 30, 40, 50, 60, 80, 100, ...), the largest k and the gate's k: a curve of
#: 1,000 runs a task is 35 rows, not 1,000, and costs what a curve of 100 runs costs.
CURVE_EVERY_K_UP_TO = 20
_SERIES = (1.0, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)


def curve_ks(kmax: int, keep: Sequence[int] = ()) -> np.ndarray:
    """The ks the suite's curve shows: 1..:data:`CURVE_EVERY_K_UP_TO`, then the
    1-2-2.5-3-4-5-6-8 series of each decade, ``kmax`` and each of ``keep`` up to ``kmax``.

    Examples
    --------
    >>> curve_ks(5).tolist()
    [1, 2, 3, 4, 5]
    >>> curve_ks(130, keep=[12, 97]).tolist()[18:]
    [19, 20, 25, 30, 40, 50, 60, 80, 97, 100, 130]
    >>> len(curve_ks(1000)), curve_ks(1000).tolist()[-10:]
    (35, [80, 100, 200, 250, 300, 400, 500, 600, 800, 1000])
    """
    if kmax < 1:
        return np.arange(1, 1, dtype=np.int64)
    ks = set(range(1, min(kmax, CURVE_EVERY_K_UP_TO) + 1))
    decade = 10
    while decade <= kmax:
        ks.update(int(decade * m) for m in _SERIES
                  if CURVE_EVERY_K_UP_TO < decade * m <= kmax)
        decade *= 10
    ks.add(int(kmax))
    ks.update(int(k) for k in keep if 1 <= k <= kmax)
    return np.asarray(sorted(ks), dtype=np.int64)


def _curve_matrix(c: np.ndarray, n: np.ndarray, kmax: int, *, at: bool) -> np.ndarray:
    ks = np.arange(1, kmax + 1)
    f = estimate_pass_at_k if at else estimate_pass_hat_k
    if c.size == 0:
        return np.empty((0, kmax))
    return np.asarray(f(c[:, None], n[:, None], ks[None, :]), dtype=float).reshape(c.size, kmax)


def suite_curve(successes: np.ndarray, totals: np.ndarray, kmax: int, *,
                confidence: float = 0.95, ks: Sequence[int] | np.ndarray | None = None,
                ) -> Curve:
    """The suite's mean pass@k and pass^k for k = 1..``kmax`` (or at ``ks``, each at most
    ``kmax``), with intervals over tasks.

    Every k uses the same tasks, those with at least ``kmax`` runs; the
    others are counted in ``left_out``. The interval for each mean is
    :func:`passk.stats.suite_interval.mean_pass_hat_k_ci` (pass@k through its dual:
    pass@k = 1 - the pass^k of the failures). ``passk report`` asks for
    :func:`curve_ks`: every k up to 20, then a sparser grid.

    Examples
    --------
    >>> cv = suite_curve(np.array([4, 2, 1]), np.array([4, 4, 2]), 4)
    >>> cv.tasks, cv.left_out, cv.pass_hat_k.round(4).tolist()
    (2, 1, [0.75, 0.5833, 0.5, 0.5])
    """
    c, n = np.asarray(successes), np.asarray(totals)
    keep = n >= kmax
    c, n = c[keep], n[keep]
    shown = (np.arange(1, kmax + 1) if ks is None
             else np.asarray(sorted({int(k) for k in ks if 1 <= k <= kmax}), dtype=np.int64))
    hat = np.full(shown.size, np.nan)
    at = np.full(shown.size, np.nan)
    hat_ci = np.full((shown.size, 2), np.nan)
    at_ci = np.full((shown.size, 2), np.nan)
    labels: list[str] = []
    kept = True
    if c.size:
        for j, k in enumerate(shown.tolist()):
            h = mean_pass_hat_k_ci(c, n, k, confidence=confidence)
            f = mean_pass_hat_k_ci(n - c, n, k, confidence=confidence)  # failures' pass^k
            hat[j], hat_ci[j] = h.estimate, (h.ci.low, h.ci.high)
            at[j], at_ci[j] = 1 - f.estimate, (1 - f.ci.high, 1 - f.ci.low)
            kept = kept and h.level_kept and f.level_kept
            if h.label not in labels:
                labels.append(h.label)
    # the interval is for the mean over these tasks (their runs are the noise),
    # not for tasks like them: the paired comparison (passk.stats.compare) is for that
    method = f"{' / '.join(labels)}, for these tasks" if labels else ""
    level = f"{confidence:.0%}" + ("" if kept else " nominal, not guaranteed")
    return Curve(shown, at, hat, at_ci, hat_ci, int(c.size), int((~keep).sum()), method,
                 level if labels else "")


# --------------------------------------------------------------------------
# the report
# --------------------------------------------------------------------------


def task_ks(results: Results, k: int | None, k_for: Mapping[str, int] | None = None,
            ) -> np.ndarray:
    """Each task's k: ``k_for[risk]`` where given, else ``k``, else the k the results'
    protocol gives each task (the pytest plugin's per-test k), else the smallest n over tasks.

    Examples
    --------
    >>> from passk.results.counts import Run, results_from_runs
    >>> r = results_from_runs([Run("a", True, t, "high") for t in range(6)] + [Run("b", True)])
    >>> task_ks(r, None).tolist(), task_ks(r, 3, {"high": 5}).tolist()
    ([1, 1], [5, 3])
    """
    n = results.totals
    tests = results.protocol.settings.get("tests") if results.protocol is not None else None
    if k is None and isinstance(tests, Mapping) and all(
            isinstance(tests.get(t), Mapping) and isinstance(tests[t].get("k"), int)
            for t in results.task_ids) and results.task_ids:
        ks = np.asarray([tests[t]["k"] for t in results.task_ids], dtype=np.int64)
    else:
        if k is None:
            positive = n[n > 0]
            k = int(positive.min()) if positive.size else 1
        ks = np.full(len(results), int(k), dtype=np.int64)
    for risk, kk in (k_for or {}).items():
        ks[np.asarray([r == risk for r in results.risks], dtype=bool)] = int(kk)
    return ks


def build_report(
    results: Results, *, k: int | None = None, k_for: Mapping[str, int] | None = None,
    confidence: float = 0.95, ci_method: str = "exact", class_threshold: float = CLASS_THRESHOLD,
    min_overall_pass_hat_k: float = DEFAULT_CRITERIA.min_overall_pass_hat_k,
    max_flakiness: float = DEFAULT_CRITERIA.max_flakiness, gate_on: str = DEFAULT_CRITERIA.on,
    min_runs: int = 0, curve_k: int | None = None, accept_incomplete: bool = False,
    declared: Mapping[str, Any] | None = None, stricter: tuple[str, ...] = (),
    baseline: Results | None = None, margin: float | None = None,
    alpha: float = DEFAULT_CRITERIA.alpha, correction: str = DEFAULT_CRITERIA.correction,
    mode: str = DEFAULT_CRITERIA.mode, policy_line: str = "", applied: tuple[str, ...] = (),
    policy: str | None = None, policy_sha256: str | None = None, bound: InForce | None = None,
) -> FileReport:
    """Score a results file's counts: rows at each task's k, the dual gate, the curve.

    Parameters
    ----------
    results : Results
    k : int, optional
        The k of pass^k; default the smallest n over tasks that have runs.
    k_for : Mapping[str, int], optional
        A k per risk label, overriding ``k`` for tasks with that label.
    confidence, ci_method, class_threshold
        See :func:`passk.stability.suite_report`.
    min_overall_pass_hat_k, max_flakiness, gate_on, min_runs
        The gate's settings: see :func:`passk.stability.reliability_gate`.
    curve_k : int, optional
        The curve's largest k; default the largest per-task k.
    accept_incomplete : bool, default False
        When the file says it is incomplete (``results.incomplete``), the gate
        fails closed with each reason unless this is True.
    declared, stricter
        The protocol's declared criteria and the ones tightened beyond them,
        recorded in the report (see :func:`passk.gate.bind.bind`).
    baseline : Results, optional
        The baseline version's results, for the gate (``passk gate --baseline``).
    margin : float, optional
        With ``baseline``: non-inferiority within this margin must be shown.
    alpha, correction
        With ``baseline``: the per-task comparison's level and its correction across
        tasks (:class:`passk.criteria.GateCriteria`).
    mode : {'chapter', 'proved', 'proved-warn'}
        How the gate decides (:class:`passk.criteria.GateCriteria`).
    policy_line, applied, policy, policy_sha256, bound
        The policy in force and the bound choices, for the verdict line
        (:func:`passk.gate.judge.judge`); ``policy`` and its hash name the file in
        the JSON; ``bound`` keeps each criterion's origin for the HTML page.

    The gate is :func:`passk.gate.judge.judge`'s on ``results``, the criteria
    and the baseline: the one place a verdict and its reasons are made.

    Examples
    --------
    >>> from passk.results.counts import Run, results_from_runs
    >>> runs = [Run("a", True, t) for t in range(4)] + [Run("b", t < 2, t) for t in range(4)]
    >>> fr = build_report(results_from_runs(runs), min_overall_pass_hat_k=0.5)
    >>> fr.ks.tolist(), fr.curve.pass_hat_k.round(4).tolist()
    ([4, 4], [0.75, 0.5833, 0.5, 0.5])
    """
    ks = task_ks(results, k, k_for)
    criteria = GateCriteria(k=int(ks.min(initial=1)) or 1,
                            min_overall_pass_hat_k=min_overall_pass_hat_k,
                            max_flakiness=max_flakiness, on=gate_on, confidence=confidence,
                            min_runs=min_runs, alpha=alpha, correction=correction,
                            margin=margin, mode=mode)
    report = judge_suite(results, criteria, baseline, k=ks, ks=ks.tolist(),
                         ci_method=ci_method, class_threshold=class_threshold,
                         accept_incomplete=accept_incomplete, policy_line=policy_line,
                         applied=applied, as_declared=bool(declared))
    options = {"k": None if k is None else int(k), "k_for": dict(k_for or {}),
               "confidence": confidence, "ci_method": ci_method,
               "class_threshold": class_threshold, "min_overall": min_overall_pass_hat_k,
               "max_flakiness": max_flakiness, "gate_on": gate_on, "min_runs": min_runs,
               "accept_incomplete": accept_incomplete, "declared": dict(declared or {}),
               "stricter": list(stricter), "mode": mode, "policy": policy,
               "policy_sha256": policy_sha256}
    return FileReport(report, results, ks, options, curve_k, bound)


# --------------------------------------------------------------------------
# printing
# --------------------------------------------------------------------------


def format_report(fr: FileReport, *, markdown: bool = False, curve: bool = True,
                  limit: int | None = None) -> str:
    """Per-task table (flaky tasks on top), the suite curve, and the gate.

    ``limit`` caps the gate's reasons shown (None, the command line's choice: every one).
    """
    rows = fr.report.tasks
    ks = fr.ks.tolist()
    uniform = len(set(ks)) <= 1
    kname = f"{ks[0]}" if uniform and ks else "k"
    header = ["task", "risk", "n", "left out", "passed", "p̂"]
    if not uniform:
        header.append("k")
    header += [f"pass@{kname}", f"pass^{kname}", f"{fr.report.confidence:.0%} CI", "lower",
               "flakiness", "class"]
    # what the chapter's module says (the rows' order, the intervals, the verdict), asked for
    # together, then the text is laid out
    order, note = order_rows(rows), interval_note(fr.report.confidence, fr.report.ci_method)
    gate = format_gate(fr, markdown=markdown, limit=limit)
    excluded = fr.results.excluded[order].tolist() if rows else []
    ids, risk, runs, passed, rate, at_k, hat_k, lows, highs, lower, flak, cls = _columns(
        rows, order)
    cols = [show_ids(ids), list(risk), list(map(str, runs)), list(map(str, excluded)),
            list(map(str, passed)), cells(rate)]
    if not uniform:
        cols.append(list(map(str, fr.ks[order].tolist())))
    cols += [cells(at_k), cells(hat_k), _pairs(cells(lows), cells(highs)), cells(lower),
             cells(flak), list(cls)]
    numeric = {i for i, h in enumerate(header) if h not in ("task", "risk", "class")}
    # In Markdown the note is a paragraph after a blank line, not one more table row.
    parts = [format_columns(header, cols, numeric=numeric, markdown=markdown)]
    parts += ["", note] if markdown else [note]
    if curve:
        parts += ["", format_curve(fr, markdown=markdown)]
    parts += ["", gate]
    notes = list(fr.results.notes) + [f"stricter than declared: {s}"
                                      for s in fr.options.get("stricter", ())]
    if notes:
        parts += [""] + [("- " if markdown else "note: ") + one_line(note) for note in notes]
    return "\n".join(parts)


def _columns(rows: Sequence[TaskReport], order: list[int]) -> list[Sequence[Any]]:
    """The rows' fields as columns in ``order``: task id, risk, n, c, p̂, pass@k, pass^k, the
    interval's ends, the lower bound, flakiness, class. Taken from the arrays the rows were
    built from where they kept them (:class:`passk.stability.TaskRows`), else read from
    each row (in C: one attrgetter call a row, then one transposition)."""
    kept = getattr(rows, "columns", None)
    if kept is not None and len(kept["runs"]) == len(rows):
        at = np.asarray(order, dtype=np.intp)
        ids, risks = kept["task_id"], kept["risk"]
        return [list(map(ids.__getitem__, order)), list(map(risks.__getitem__, order)),
                *(kept[f][at].tolist() for f in (
                    "runs", "successes", "pass_rate", "pass_at_k", "pass_hat_k", "low",
                    "high", "lower_bound", "flakiness", "cls"))]
    fields = ("task_id", "risk", "runs", "successes", "pass_rate", "pass_at_k", "pass_hat_k",
              "ci", "lower_bound", "flakiness", "cls")
    (ids, risk, runs, passed, rate, at_k, hat_k, ci, lower, flak, cls) = (
        tuple(zip(*map(attrgetter(*fields), map(rows.__getitem__, order)))) if rows
        else ((),) * len(fields))
    lows, highs = (tuple(zip(*ci)) if ci else ((), ()))
    return [ids, risk, runs, passed, rate, at_k, hat_k, lows, highs, lower, flak, cls]


def _pairs(lows: list[str], highs: list[str]) -> list[str]:
    """``[low, high]`` of each row, made by one %-format of the column (in C)."""
    if not lows:
        return []
    text = ("[%s, %s]\n" * len(lows)) % tuple(chain.from_iterable(zip(lows, highs)))
    return text.split("\n")[:-1]


def format_curve(fr: FileReport, *, markdown: bool = False) -> str:
    """The suite's pass@k and pass^k by k, each with its interval over tasks."""
    cv = fr.curve
    conf = f"{fr.options.get('confidence', 0.95):.0%}"
    level = cv.level or conf
    kmax = int(cv.ks[-1]) if cv.ks.size else 0
    left = (f"; {plural(cv.left_out, 'task')} with fewer than {kmax} runs left out of every k"
            if cv.left_out else "")
    how = (f"{level} {cv.method}" if cv.method else
           f"no {conf} interval: no task has {kmax} counted runs to estimate from")
    sparse = (f", shown at every k up to {CURVE_EVERY_K_UP_TO}, then at "
              f"{', '.join(str(k) for k in cv.ks.tolist()[CURVE_EVERY_K_UP_TO:])}"
              if cv.ks.size and cv.ks.size < kmax else "")
    title = (f"suite of {plural(cv.tasks, 'task')}, the same for every k, pass@k and pass^k by k "
             f"({how}){left}{sparse}:")
    header = ["k", "pass@k", f"{conf} CI", "pass^k", f"{conf} CI "]
    body = [[str(k), cell(a), f"[{cell(alo)}, {cell(ahi)}]", cell(h),
             f"[{cell(hlo)}, {cell(hhi)}]"]
            for k, a, (alo, ahi), h, (hlo, hhi) in zip(
                cv.ks.tolist(), cv.pass_at_k, cv.at_ci, cv.pass_hat_k, cv.hat_ci)]
    table = format_rows(header, body, numeric={0, 1, 2, 3, 4}, markdown=markdown)
    return (f"**{title}**\n\n" if markdown else title + "\n") + table


def format_gate(fr: FileReport, *, markdown: bool = False, limit: int | None = None) -> str:
    """The gate's verdict line, with the bar and cap in force, and every reason."""
    gate = fr.gate
    verdict = gate.verdict()
    lines = list_items(gate.reasons, markdown=markdown, limit=limit)
    if gate.baseline is not None:  # the judge's finding, said whether the gate passed or not
        found = baseline_line(gate.baseline)
        return "\n".join([f"**{verdict}**", "", found, *([""] if lines else []), *lines]
                         if markdown else [verdict, found, *lines])
    return "\n".join([f"**{verdict}**" if markdown else verdict, *lines])
