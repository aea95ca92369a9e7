"""A comparison's plan as text: ``passk plan --compare``'s tables, drawn once, here.

The plan is computed by :func:`passk.stats.power.plan_comparison`; this module takes its
values (render is the bottom layer: it imports nothing of passk's above it) and lays
them out, as text or Markdown.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from passk.render.tables import format_rows

__all__ = ["format_comparison_plan"]


def format_comparison_plan(plan: Any, *, k: int, confidence: float,
                           pilot: bool, markdown: bool = False,
                           spread: Any = None) -> str:
    """``passk plan --compare``'s report: the method, the variances, the power and
    detectable-drop grids, the tasks needed and the cheapest design.

    Parameters
    ----------
    plan : passk.stats.power.ComparisonPlan
        Read for its values only (render imports nothing above it).
    k, confidence
        The pass^k and the comparison's two-sided confidence.
    pilot : bool
        Whether the plan came from a pilot file (else: the worst case).
    markdown : bool
        Markdown tables.
    spread : passk.stats.power.PilotSpread, optional
        The pilot's own sampling spread of the cheapest design's power.
    """
    md = markdown
    noise = ", ".join(f"{v:.4f} at n={n}"
                      for v, n in zip(plan.within_variance, plan.runs, strict=True))
    out = [(f"paired comparison of mean pass^{k} (paired t over tasks joined by the proved "
            f"betting interval, two-sided {confidence:.0%}: each side wrong at most "
            f"{(1 - confidence) / 2:.1%}); tasks from the {plan.source}"),
           (f"variance across tasks of the true change: {plan.between_variance:.4f} "
            f"({plan.assumption}); trial noise per task and version: {noise}")]
    if getattr(plan, "assumptions", ()):
        out.append("the plan assumes: " + "; ".join(plan.assumptions[2:]))
    header = ["tasks \\ runs"] + [str(n) for n in plan.runs]
    numeric = set(range(len(header)))
    if plan.power is not None:
        out.append(f"\npower to show a drop of {plan.delta:g} (verdict worse), by tasks and "
                   "runs per task:")
        body = [[str(t)] + [f"{x:.2f}" for x in row]
                for t, row in zip(plan.tasks, plan.power, strict=True)]
        out.append(format_rows(header, body, numeric=numeric, markdown=md))
    out.append(f"\nsmallest drop shown with {plan.target_power:.0%} power:")
    body = [[str(t)] + [f"{x:.3f}" for x in row]
            for t, row in zip(plan.tasks, plan.detectable, strict=True)]
    out.append(format_rows(header, body, numeric=numeric, markdown=md))
    if plan.tasks_needed is not None:
        out += _needed(plan, plan.tasks_needed, md, spread)
    if not pilot:
        out.append("\nno pilot: the plan takes the worst case over every population of rates; "
                   "a pilot run of the old version (FILE) plans closer")
    return "\n".join(out)


def _needed(plan: Any, needed: Sequence[int | None], md: bool,
            spread: Any) -> list[str]:
    best = plan.cheapest
    out = [(f"\ntasks needed for {plan.target_power:.0%} power to show a drop of "
            f"{plan.delta:g}, and the agent runs each version costs:")]
    body = [[str(n), "-" if t is None else str(t), "-" if t is None else str(t * n),
             "fewest runs" if i == best else ""]
            for i, (n, t) in enumerate(zip(plan.runs, needed, strict=True))]
    out.append(format_rows(["runs per task", "tasks", "runs per version", ""], body,
                           numeric={0, 1, 2}, markdown=md))
    t_best = None if best is None else needed[best]
    if best is None or t_best is None:
        return out
    n_best = plan.runs[best]
    others = [f"{t} × {n} ({t * n})" for t, n in zip(needed, plan.runs, strict=True)
              if t is not None and n != n_best]
    out.append(f"cheapest: {t_best} tasks × {n_best} runs = {t_best * n_best} runs per "
               "version" + (f", against {', '.join(others)}" if others else ""))
    if spread is not None:
        out.append(f"the pilot's own sampling: {spread.replicates} pilots like it (drawn from "
                   f"the Beta law fitted to it) plan {spread.low:.2f} to {spread.high:.2f} "
                   f"power (5-95 %) for this design, not {spread.planned:.2f}")
    return out
