"""Text and Markdown for ``passk attribute``: where a flaky task's runs part, and which
variable explains its flakiness.

The renderers take the reports' JSON values (``DivergenceReport.to_dict()``,
``Attribution.to_dict()``), so that the text, the Markdown and the JSON say the
same things: the render layer knows no analysis type. Text from files (task
ids, tool names, answers) is escaped as every passk table escapes it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from passk.render.tables import cell, format_rows, one_line

__all__ = ["attribution_text", "divergence_text"]


def _heading(text: str, markdown: bool, level: int = 3) -> str:
    return f"{'#' * level} {text}" if markdown else text


def _bullet(text: str, markdown: bool) -> str:
    return ("- " if markdown else "  - ") + one_line(text)


def divergence_text(report: Mapping[str, Any], *, markdown: bool = False) -> str:
    """The first divergence of each flaky task, as text or Markdown.

    Examples
    --------
    >>> payload = {"source": "log.jsonl", "stable_tasks": ["b"], "ignored": ["timings"],
    ...            "flaky_tasks": [{"task_id": "a", "passes": 3, "failures": 1,
    ...                             "status": "found", "step": 2, "kind": "order",
    ...                             "why": "the runs part at step 2: ...", "groups": [],
    ...                             "example": None, "unrecorded": 0}]}
    >>> print(divergence_text(payload))
    first divergence of each flaky task in log.jsonl (1 flaky, 1 stable)
    <BLANKLINE>
    a: 3 passes, 1 failure; step 2 (order)
      the runs part at step 2: ...
    <BLANKLINE>
    compared: the i-th tool call of each run; ignored: timings
    """
    flaky: Sequence[Mapping[str, Any]] = report["flaky_tasks"]
    lines = [_heading(f"first divergence of each flaky task in {report['source']} "
                      f"({len(flaky)} flaky, {len(report['stable_tasks'])} stable)", markdown, 2)]
    if not flaky:
        lines += ["", "no task both passes and fails: nothing to part"]
    for d in flaky:
        found = f"step {d['step']} ({d['kind']})" if d["status"] == "found" else d["status"]
        fails = "failure" if d["failures"] == 1 else "failures"
        lines += ["", _heading(f"{d['task_id']}: {d['passes']} passes, {d['failures']} {fails}; "
                               f"{found}", markdown)]
        lines.append(("" if markdown else "  ") + one_line(d["why"]))
        for g in d["groups"][1:]:
            lines.append(_bullet(g["sentence"] + (" (also in passes)" if g["kind"] == "shared"
                                                  else ""), markdown))
        ex = d.get("example")
        if ex:
            rows = [[str(i + 1), *pair] for i, pair in enumerate(
                zip(ex["failing_steps"], ex["passing_steps"]))]
            if len(ex["failing_steps"]) != len(ex["passing_steps"]):
                rows += [[str(i + 1), f, "(ended)"] for i, f in enumerate(
                    ex["failing_steps"]) if i >= len(ex["passing_steps"])]
                rows += [[str(i + 1), "(ended)", p] for i, p in enumerate(
                    ex["passing_steps"]) if i >= len(ex["failing_steps"])]
            lines += ["", format_rows(["step", f"failing {ex['failing_run']}",
                                       f"passing {ex['passing_run']}"], rows, numeric={0},
                                      markdown=markdown)]
    lines += ["", "compared: the i-th tool call of each run; ignored: "
              + "; ".join(report["ignored"])]
    return "\n".join(lines)


def _verdict_row(v: Mapping[str, Any]) -> list[str]:
    test = v["test"]
    p = test["p_value"]
    shown = "shown" if v["shown"] else "not shown"
    power = "-" if v["shown"] or v.get("power") is None else cell(v["power"], 2)
    return [v["variable"], json.dumps(v["value"]),
            f"{v['before']['successes']}/{v['before']['runs']}",
            f"{v['after']['successes']}/{v['after']['runs']}",
            cell(v["before"]["flakiness"]), cell(v["after"]["flakiness"]),
            cell(v["before"]["pass_hat_k"]), cell(v["after"]["pass_hat_k"]),
            f"{test['fixed']}/{test['broken']}", "-" if p is None else f"{p:.2g}",
            "-" if v["adjusted_p"] is None else f"{v['adjusted_p']:.2g}", shown, power]


def attribution_text(report: Mapping[str, Any], *, markdown: bool = False) -> str:
    """The controlled comparison: each flaky task's variants, their paired tests, and the
    variable that explains its flakiness (or that none tried does).

    Examples
    --------
    >>> payload = {"baseline": {}, "runs": 30, "alpha": 0.05, "k": 5, "seed": 1,
    ...            "correction": "Holm", "tests": 1, "stable_tasks": [],
    ...            "tasks": [{"task_id": "a", "explained_by": None,
    ...                       "finding": "none of the variables tried explains it",
    ...                       "divergence": None, "variants": []}]}
    >>> print(attribution_text(payload).splitlines()[0])
    controlled comparison: 1 flaky task, 0 variants, 30 runs each on the same seeds (seed 1)
    """
    tasks: Sequence[Mapping[str, Any]] = report["tasks"]
    n_variants = len(tasks[0]["variants"]) if tasks else 0
    lines = [_heading(f"controlled comparison: {len(tasks)} flaky task"
                      f"{'' if len(tasks) == 1 else 's'}, {n_variants} variant"
                      f"{'' if n_variants == 1 else 's'}, {report['runs']} runs each on the "
                      f"same seeds (seed {report['seed']})", markdown, 2)]
    base = ", ".join(f"{k}={v}" for k, v in report["baseline"].items()) or "the adapter as given"
    lines.append(f"baseline: {base}; each variant changes one variable; test: exact paired "
                 f"sign test on the seeds whose outcome changed (McNemar), {report['correction']}"
                 f" across {report['tests']} task x variant tests at alpha {report['alpha']}; "
                 f"pass^k at k = {report['k']}")
    if not tasks:
        lines += ["", "no task is flaky under the baseline: nothing to attribute"]
    header = ["variable", "value", "before", "after", "flaky before", "flaky after",
              f"pass^{report['k']} before", f"pass^{report['k']} after", "fixed/broken", "p",
              "adjusted p", "change", "power"]
    for t in tasks:
        lines += ["", _heading(f"{t['task_id']}: {t['finding']}", markdown)]
        if t["variants"]:
            lines += ["", format_rows(header, [_verdict_row(v) for v in t["variants"]],
                                      numeric={2, 3, 4, 5, 6, 7, 8, 9, 10, 12},
                                      markdown=markdown)]
        for v in t["variants"]:
            if not v["shown"] and v.get("power_note"):
                lines.append(_bullet(f"{v['variable']}={json.dumps(v['value'])}: "
                                     f"{v['power_note']}",
                                     markdown))
        if t.get("divergence"):
            lines.append(_bullet("first divergence (baseline runs): " + t["divergence"],
                                 markdown))
    if report["stable_tasks"]:
        lines += ["", "not flaky under the baseline: " + ", ".join(report["stable_tasks"])]
    return "\n".join(lines)
