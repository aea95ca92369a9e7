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
from passk.render.words import plural

__all__ = ["attribution_page", "attribution_text", "divergence_page", "divergence_text"]


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
        lines += ["", _heading(f"{d['task_id']}: {plural(d['passes'], 'pass')}, "
                               f"{plural(d['failures'], 'failure')}; {found}", markdown)]
        lines.append(("" if markdown else "  ") + one_line(d["why"]))
        if d["status"] == "found" and d.get("unrecorded"):
            n = d["unrecorded"]
            lines.append(_bullet(f"{plural(n, 'run')} without a recorded trajectory "
                                 "left out of the comparison", markdown))
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
    lines = [_heading(f"controlled comparison: {plural(len(tasks), 'flaky task')}, "
                      f"{plural(n_variants, 'variant')}, {plural(report['runs'], 'run')} each "
                      "on the "
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


# --------------------------------------------------------------------------
# HTML: the passing and failing runs side by side
# --------------------------------------------------------------------------

_PAGE_STYLE = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;
max-width:1200px;padding:1em 1.5em 3em;color:#1b1b1b;background:#fff}
h1{font-size:1.45em;margin:.4em 0}h2{font-size:1.15em;margin:1.8em 0 .4em;
border-bottom:1px solid #ddd;padding-bottom:.2em}
table{border-collapse:collapse;font-size:.9em;width:100%;table-layout:fixed}
th,td{padding:.3em .55em;text-align:left;border-bottom:1px solid #eee;vertical-align:top}
th{background:#f6f6f6}td.n,th.n{text-align:right;width:3.2em;
font-variant-numeric:tabular-nums}
.call{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.92em;
word-break:break-word;white-space:pre-wrap}
.tool{font-weight:600}.answer{color:#333;display:block;margin-top:.2em;
border-left:3px solid #ccc;padding-left:.45em}
tr.part td{background:#fff1cc;border-top:2px solid #E69F00;border-bottom:2px solid #E69F00}
tr.part td.n::after{content:" \\25C0"}
tr.after td{color:#777}.ended{color:#888;font-style:italic}
.why{padding:.55em .9em;border-radius:6px;background:#f3f7fb;border:1px solid #0072B2}
.none{padding:.55em .9em;border-radius:6px;background:#f6f6f6;border:1px solid #999}
ul.groups li{margin:.1em 0}.muted{color:#666;font-size:.9em}
.verdicts td,.verdicts th{white-space:nowrap}.verdicts{width:auto}
"""


_NO_ANSWER = '<span class="muted">(no answer)</span>'


def _esc(text: Any) -> str:
    from passk.render.html import escape_html

    return escape_html(text)


def _call_cell(step: Mapping[str, Any] | None) -> str:
    if step is None:
        return '<td class="call ended">(the run had ended)</td>'
    items, lines = step.get("items"), step.get("lines")
    if items is not None:
        answer = _esc("[" + ", ".join(items) + "]")
    elif lines:  # a text's lines, one a line, each escaped
        answer = "<br>".join(_esc(line) for line in lines)
    else:
        answer = _esc(step.get("answer", ""))
    error = ' <span class="muted">(error)</span>' if step.get("error") else ""
    return (f'<td class="call"><span class="tool">{_esc(step["tool"])}</span>'
            f"({_esc(step.get('arguments', ''))})"
            f'<span class="answer">{answer or _NO_ANSWER}</span>{error}</td>')


def _side_by_side(d: Mapping[str, Any]) -> str:
    ex = d.get("example") or {}
    fail: Sequence[Mapping[str, Any]] = ex.get("failing_all_steps") or []
    ok: Sequence[Mapping[str, Any]] = ex.get("passing_all_steps") or []
    part = int(d["step"])
    rows = []
    for i in range(max(len(fail), len(ok), part)):
        cls = ' class="part"' if i + 1 == part else (' class="after"' if i + 1 > part else "")
        f = fail[i] if i < len(fail) else None
        p = ok[i] if i < len(ok) else None
        rows.append(f'<tr{cls}><td class="n">{i + 1}</td>{_call_cell(f)}{_call_cell(p)}</tr>')
    return ('<table class="runs"><thead><tr><th class="n">step</th>'
            f"<th>failing run {_esc(ex.get('failing_run', ''))}</th>"
            f"<th>passing run {_esc(ex.get('passing_run', ''))}</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")


def _task_section(d: Mapping[str, Any], anchor: str) -> list[str]:
    found = f"they part at step {d['step']} ({d['kind']})" if d["status"] == "found" \
        else d["status"]
    out = [(f'<h2 id="{anchor}">{_esc(d["task_id"])}: {_esc(plural(d["passes"], "pass"))}, '
           f"{_esc(plural(d['failures'], 'failure'))}; {_esc(found)}</h2>")]
    box = "why" if d["status"] == "found" else "none"
    out.append(f'<p class="{box}">{_esc(d["why"])}</p>')
    others = list(d.get("groups", [])[1:])
    if others:
        out.append('<ul class="groups">' + "".join(
            f"<li>{_esc(g['sentence'])}{' (also in passes)' if g['kind'] == 'shared' else ''}"
            "</li>" for g in others) + "</ul>")
    if d["status"] == "found" and d.get("unrecorded"):
        n = int(d["unrecorded"])
        out.append(f'<p class="muted">{plural(n, "run")} without a recorded '
                   "trajectory left out of the comparison.</p>")
    if d["status"] == "found" and d.get("example"):
        out.append(_side_by_side(d))
    return out


def _page(title: str, body: Sequence[str], ignored: Sequence[str]) -> str:
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_esc(title)}</title><style>{_PAGE_STYLE}</style></head><body>",
        f"<h1>{_esc(title)}</h1>", *body,
        (f'<p class="muted">Compared: the i-th tool call of each run (its tool, its arguments, '
        f"its answer). Ignored: {_esc('; '.join(ignored))}. The highlighted row is the first "
        "step at which a failing run did what no passing run did there; the passing run shown "
        "is the one closest to it at that step. Opens offline: no request leaves this "
        "page.</p>"),
        "</body></html>", ""])


def divergence_page(report: Mapping[str, Any]) -> str:
    """The first divergence of each flaky task as one HTML page: per task, a failing run and
    the nearest passing run side by side, step by step, the step where they part highlighted.
    Every string from the file is escaped.

    Examples
    --------
    >>> page = divergence_page({"source": "<x>.json", "stable_tasks": [], "ignored": [],
    ...                         "flaky_tasks": []})
    >>> "&lt;x&gt;.json" in page and "<x>" not in page
    True
    """
    flaky: Sequence[Mapping[str, Any]] = report["flaky_tasks"]
    title = f"Where the runs part: {report['source']}"
    body = [(f"<p>{plural(len(flaky), 'flaky task')} (runs that both pass "
            f"and fail), {len(report['stable_tasks'])} stable.</p>")]
    if not flaky:
        body.append('<p class="none">No task both passes and fails: nothing to part.</p>')
    for i, d in enumerate(flaky):
        body += _task_section(d, f"task-{i}")
    if report["stable_tasks"]:
        body.append(f'<p class="muted">Stable: {_esc(", ".join(report["stable_tasks"]))}</p>')
    return _page(title, body, report["ignored"])


def attribution_page(report: Mapping[str, Any]) -> str:
    """The controlled comparison as one HTML page: per flaky task, its variants' verdicts
    and its baseline runs side by side at the step where they part.

    Examples
    --------
    >>> page = attribution_page({"baseline": {}, "runs": 30, "alpha": 0.05, "k": 5,
    ...                          "seed": 1, "correction": "Holm", "tests": 0,
    ...                          "stable_tasks": ["<b>"], "tasks": []})
    >>> "&lt;b&gt;" in page
    True
    """
    tasks: Sequence[Mapping[str, Any]] = report["tasks"]
    title = "Why is it flaky? The controlled comparison"
    base = ", ".join(f"{k}={v}" for k, v in report["baseline"].items()) or "the adapter as given"
    body = [(f"<p>Baseline: {_esc(base)}; each variant changes one variable, {report['runs']} "
            f"runs each on the same seeds (seed {_esc(report['seed'])}). Test: exact paired "
            f"sign test (McNemar), {_esc(report['correction'])} across {report['tests']} task "
            f"&times; variant tests at &alpha; {report['alpha']}.</p>")]
    if not tasks:
        body.append('<p class="none">No task is flaky under the baseline: nothing to '
                    "attribute.</p>")
    header = ["variable", "value", "before", "after", "flaky before", "flaky after",
              "fixed/broken", "adjusted p", "change", "power"]
    for i, t in enumerate(tasks):
        body.append(f'<h2 id="task-{i}">{_esc(t["task_id"])}: {_esc(t["finding"])}</h2>')
        rows = []
        for v in t["variants"]:
            row = _verdict_row(v)
            cells = [row[0], row[1], row[2], row[3], row[4], row[5], row[8], row[10], row[11],
                     row[12]]
            rows.append("<tr>" + "".join(f"<td>{_esc(c)}</td>" for c in cells) + "</tr>")
        if rows:
            body.append('<table class="verdicts"><thead><tr>'
                        + "".join(f"<th>{_esc(h)}</th>" for h in header)
                        + "</tr></thead><tbody>" + "".join(rows) + "</tbody></table>")
        d = t.get("first_divergence")
        if d:
            body += _task_section(d, f"runs-{i}")[1:]
    if report["stable_tasks"]:
        body.append(f'<p class="muted">Not flaky under the baseline: '
                    f'{_esc(", ".join(report["stable_tasks"]))}</p>')
    return _page(title, body, report.get("ignored", ()))
