"""The controlled comparison, run: which variable explains a flaky task's flakiness?

The chapter's method: fix everything else, change one variable, and see whether the
flakiness goes. :func:`attribute_variants` runs the suite under a baseline, finds its
flaky tasks, and runs them again under each variant (the baseline with one named
variable changed, reached through the adapter's ``with_setting``, the
:class:`~passk.adapter.SettingAdapter` protocol), with the same suite seed, so that run
*i* of a task has the same seed under every variant and the runs pair up. For each
flaky task and variant it gives the flakiness and pass^k before and after, the exact
paired test of the change (:func:`passk.stats.paired.paired_change_test`), Holm's
correction across every task x variant test, and, where the change is not shown, the
power the design had to show a variant that removes the flakiness (every baseline
failure a pass), computed exactly (:func:`passk.stats.paired.paired_test_power`) at the
strictest level Holm may ask (alpha / tests). A variable *explains* a task's flakiness
when its change is shown and leaves the task no longer flaky (passk's class rule,
:func:`passk.stability.classify`); the first divergence of the baseline's runs
(:func:`passk.analysis.divergence.first_divergence`) says where the runs part.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from passk.adapter import HarnessAdapter, RunResult, Task
from passk.analysis.divergence import Divergence, first_divergence
from passk.errors import BadInput
from passk.metrics import estimate_pass_hat_k, flakiness
from passk.results.trajectory import IGNORED, Trajectory, steps_of_calls
from passk.run.runner import run_suite
from passk.stability import RepeatPolicy, classify
from passk.stats.paired import holm, paired_change_test, paired_test_power

__all__ = ["Attribution", "Outcomes", "TaskAttribution", "VariantVerdict", "attribute_variants",
           "parse_variations", "vary"]


@dataclass(frozen=True)
class Outcomes:
    """A task's runs under one setting: counts, flakiness and pass^k."""

    successes: int
    runs: int
    flakiness: float
    pass_hat_k: float

    @classmethod
    def of(cls, outcomes: Sequence[bool], k: int) -> Outcomes:
        """From the runs' outcomes, in run order."""
        c, n = int(sum(outcomes)), len(outcomes)
        return cls(c, n, float(flakiness(c, n)),
                   float(estimate_pass_hat_k(c, n, k)) if n >= k else float("nan"))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values (NaN as null)."""
        nan = math.isnan(self.pass_hat_k)
        return {"successes": self.successes, "runs": self.runs, "flakiness": self.flakiness,
                "pass_hat_k": None if nan else self.pass_hat_k}


@dataclass(frozen=True)
class VariantVerdict:
    """One variant's effect on one flaky task.

    Attributes
    ----------
    variable, value
        What the variant changed, and to what.
    before, after : Outcomes
        The task under the baseline and under the variant (the same seeds).
    fixed, broken, pairs : int
        Pairs (same seed) the variant turned from failure to pass, from pass to failure,
        and all pairs.
    p_value, adjusted_p : float
        The exact paired test's p-value, and Holm's across every task x variant test.
    shown : bool
        ``adjusted_p <= alpha``.
    stable_after : bool
        The task is not flaky under the variant (passk's class rule).
    power : float or None
        Where not shown: the probability the design had of showing a variant that
        removes the flakiness (every baseline failure a pass), at alpha / tests.
    """

    variable: str
    value: Any
    before: Outcomes
    after: Outcomes
    fixed: int
    broken: int
    pairs: int
    p_value: float
    adjusted_p: float
    shown: bool
    stable_after: bool
    power: float | None = None
    power_note: str = ""

    @property
    def explains(self) -> bool:
        """The change is shown and the task is no longer flaky under it."""
        return self.shown and self.stable_after

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values (what ``passk attribute --run --json`` prints per variant)."""
        return {"variable": self.variable, "value": self.value,
                "before": self.before.to_dict(), "after": self.after.to_dict(),
                "test": {"fixed": self.fixed, "broken": self.broken, "pairs": self.pairs,
                         "p_value": self.p_value, "method": "exact McNemar (two-sided sign "
                         "test on the pairs whose outcome changed)"},
                "adjusted_p": self.adjusted_p, "shown": self.shown,
                "stable_after": self.stable_after, "explains": self.explains,
                "power": self.power, "power_note": self.power_note}


@dataclass(frozen=True)
class TaskAttribution:
    """A flaky task: its variants' verdicts, the variable that explains it (if any), and
    where its baseline runs part."""

    task_id: str
    variants: tuple[VariantVerdict, ...]
    divergence: str = ""
    detail: Divergence | None = None

    @property
    def explained_by(self) -> tuple[VariantVerdict, ...]:
        """The variants whose change is shown and leaves the task stable."""
        return tuple(v for v in self.variants if v.explains)

    def finding(self) -> str:
        """The answer in one sentence."""
        found = self.explained_by
        if found:
            return "explained by " + "; ".join(
                f"{v.variable} (set to {v.value!r}: flakiness {v.before.flakiness:.3f} -> "
                f"{v.after.flakiness:.3f}, {v.fixed} fixed and {v.broken} broken of "
                f"{v.pairs} paired runs, adjusted p {v.adjusted_p:.2g})" for v in found)
        moved = [v for v in self.variants if v.shown]
        if moved:
            return ("none of the variables tried removes its flakiness; "
                    + ", ".join(f"{v.variable}={v.value!r}" for v in moved)
                    + " changes its pass rate but leaves it flaky")
        return "none of the variables tried explains it: no change shown"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values."""
        found = self.explained_by
        return {"task_id": self.task_id,
                "explained_by": [v.variable for v in found] or None,
                "finding": self.finding(), "divergence": self.divergence or None,
                "first_divergence": None if self.detail is None else self.detail.to_dict(),
                "variants": [v.to_dict() for v in self.variants]}


@dataclass(frozen=True)
class Attribution:
    """The controlled comparison of a suite: each flaky task and each variant."""

    baseline: Mapping[str, Any]
    variations: tuple[tuple[str, Any], ...]
    runs: int
    seed: int
    k: int
    alpha: float
    tasks: tuple[TaskAttribution, ...]
    stable: tuple[str, ...] = ()
    correction: str = "Holm"
    settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def tests(self) -> int:
        """Task x variant tests in Holm's family."""
        return len(self.tasks) * len(self.variations)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values (what ``passk attribute --run --json`` prints)."""
        return {"baseline": dict(self.baseline), "adapter_settings": dict(self.settings),
                "variations": [{"variable": n, "value": v} for n, v in self.variations],
                "runs": self.runs, "seed": self.seed, "k": self.k, "alpha": self.alpha,
                "correction": self.correction, "tests": self.tests,
                "pairing": "run i of a task has the same seed under the baseline and every "
                           "variant (the final attempt of each run is compared)",
                "tasks": [t.to_dict() for t in self.tasks], "stable_tasks": list(self.stable),
                "ignored": list(IGNORED)}


def parse_variations(specs: Sequence[str]) -> list[tuple[str, Any]]:
    """``NAME=VALUE`` strings as (name, value) pairs; VALUE read as JSON, else as text.

    Examples
    --------
    >>> parse_variations(["temperature=0", "deterministic_sort=true", "tie_break=id"])
    [('temperature', 0), ('deterministic_sort', True), ('tie_break', 'id')]
    """
    out = []
    for spec in specs:
        name, sep, text = spec.partition("=")
        if not sep or not name.strip():
            raise BadInput(f"--vary {spec!r}: write NAME=VALUE, e.g. temperature=0")
        try:
            value = json.loads(text)
        except ValueError:
            value = text
        out.append((name.strip(), value))
    return out


def vary(adapter: HarnessAdapter, name: str, value: Any) -> HarnessAdapter:
    """``adapter`` with one variable changed, through its ``with_setting``.

    Raises
    ------
    BadInput
        When the adapter offers no ``with_setting``, or refuses the name or the value.
    """
    with_setting = getattr(adapter, "with_setting", None)
    if not callable(with_setting):
        raise BadInput(f"{type(adapter).__name__} has no with_setting(name, value): an adapter "
                       "passk attribute varies must offer it (passk.adapter.SettingAdapter)")
    try:
        changed: HarnessAdapter = with_setting(name, value)
    except (ValueError, TypeError) as exc:
        raise BadInput(f"--vary {name}={json.dumps(value)}: {exc}") from None
    return changed


def _outcomes(results: Sequence[RunResult], task_id: str) -> dict[int, bool]:
    return {r.run_index: bool(r.success) for r in results
            if r.task_id == task_id and r.counted}


def _divergence(results: Sequence[RunResult], task_id: str) -> Divergence | None:
    runs = [Trajectory(task_id, f"run {r.run_index}", bool(r.success),
                       steps_of_calls(r.trajectory))
            for r in results if r.task_id == task_id and r.counted]
    return first_divergence(runs) if runs else None


def attribute_variants(adapter: HarnessAdapter, tasks: Sequence[Task],
                       variations: Sequence[tuple[str, Any]], *, runs: int = 60, seed: int = 0,
                       k: int = 5, alpha: float = 0.05,
                       baseline: Mapping[str, Any] | None = None,
                       progress: bool = False) -> Attribution:
    """Run the controlled comparison: a baseline, then one variant a variable, same seeds.

    Parameters
    ----------
    adapter : HarnessAdapter
        With ``with_setting(name, value)`` (:class:`~passk.adapter.SettingAdapter`).
    tasks : sequence of Task
    variations : sequence of (str, value)
        Each a variant: the baseline with that one variable set to that value.
    runs : int, default 60
        Runs of each task under the baseline and under each variant.
    seed : int, default 0
        The suite seed; run *i* of task *t* has the same seed under every variant.
    k : int, default 5
        k of pass^k.
    alpha : float, default 0.05
        The family-wise error rate of the tests (Holm across tasks x variants).
    baseline : Mapping, optional
        Settings applied to ``adapter`` before anything runs (the baseline itself).
    progress : bool, default False

    Returns
    -------
    Attribution

    Notes
    -----
    Only the baseline's flaky tasks (passk's class rule) are run under the variants.
    The paired test is exact at every n and for every population
    (:func:`passk.stats.paired.paired_test_size`); Holm's correction keeps the
    family-wise error at most ``alpha`` whatever the tests' dependence.

    Examples
    --------
    >>> from passk import OnCallSimulator, demo_tasks
    >>> a = attribute_variants(OnCallSimulator(), demo_tasks(),
    ...                        [("temperature", 0), ("deterministic_sort", True)],
    ...                        runs=60, seed=1)
    >>> t = a.tasks[0]
    >>> t.task_id, [v.variable for v in t.explained_by]
    ('payment-alert', ['deterministic_sort'])
    """
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 2:
        raise BadInput(f"runs ({runs!r}) must be a whole number >= 2")
    if not 0 < alpha < 1:
        raise BadInput(f"alpha ({alpha!r}) must lie strictly between 0 and 1")
    if not variations:
        raise BadInput("no variant to compare: give at least one --vary NAME=VALUE")
    base = adapter
    for name, value in (baseline or {}).items():
        base = vary(base, name, value)
    variants = [vary(base, name, value) for name, value in variations]  # refused before runs
    policy = RepeatPolicy(runs_by_risk={}, previously_flaky=runs, default=runs)
    first = run_suite(base, tasks, policy, k=k, seed=seed, progress=progress)
    flaky_ids = [t.task_id for t in first.report.tasks if t.cls == "flaky"]
    stable = tuple(t.task_id for t in first.report.tasks if t.cls != "flaky")
    flaky_tasks = [t for t in tasks if t.task_id in flaky_ids]
    after_runs = [run_suite(v, flaky_tasks, policy, k=k, seed=seed, progress=progress).results
                  if flaky_tasks else () for v in variants]
    rows: list[tuple[str, int, Outcomes, Outcomes, Any, bool]] = []
    for task_id in flaky_ids:
        before = _outcomes(first.results, task_id)
        for j in range(len(variations)):
            after = _outcomes(after_runs[j], task_id)
            paired = sorted(set(before) & set(after))
            test = paired_change_test([before[i] for i in paired], [after[i] for i in paired])
            b_out = Outcomes.of([before[i] for i in sorted(before)], k)
            a_out = Outcomes.of([after[i] for i in sorted(after)], k)
            stable_after = classify(a_out.successes, a_out.runs) != "flaky"
            rows.append((task_id, j, b_out, a_out, test, bool(stable_after)))
    adjusted = holm([r[4].p_value for r in rows]) if rows else np.array([])
    level = alpha / max(len(rows), 1)
    verdicts: dict[str, list[VariantVerdict]] = {t: [] for t in flaky_ids}
    for (task_id, j, b_out, a_out, test, stable_after), adj in zip(rows, adjusted):
        shown = bool(adj <= alpha)
        power = note = None
        if not shown:
            fail_rate = 1 - b_out.successes / b_out.runs
            power = paired_test_power(test.pairs, fail_rate, 0.0, alpha=level)
            note = (f"not shown; had it removed the flakiness (every failure, {fail_rate:.3f} "
                    f"of runs, a pass), {test.pairs} paired runs would have shown it with "
                    f"probability {power:.2f} at the Holm level alpha/{len(rows)}")
        name, value = variations[j]
        verdicts[task_id].append(VariantVerdict(
            name, value, b_out, a_out, test.fixed, test.broken, test.pairs, test.p_value,
            float(adj), shown, stable_after, power, note or ""))
    details = {t: _divergence(first.results, t) for t in flaky_ids}
    found = tuple(TaskAttribution(t, tuple(verdicts[t]),
                                  d.why if (d := details[t]) is not None else "", d)
                  for t in flaky_ids)
    settings_of = getattr(base, "settings", None)
    settings = dict(settings_of()) if callable(settings_of) else {}
    return Attribution(dict(baseline or {}), tuple(variations), runs, seed, k, alpha, found,
                       stable, settings=settings)
