"""The report as one self-contained HTML page: ``passk report --html OUT`` (and ``gate``).

The page opens from disk with no network: its style and its one script are inline, the
curve is an inline SVG drawn here from the report's numbers (no plotting library), and a
Content-Security-Policy forbids every fetch (``default-src 'none'``) and every script but
the page's own (by its SHA-256). It holds, top to bottom: the verdict with every reason;
the criteria in force and where each came from (the policy file, the command line, the
run's protocol, the default); the suite's pass@k and pass^k curve over k with its
intervals; the flaky tasks; the per-task table (sortable: click a column's header); and
what was read (each file, its producer, its SHA-256, the producer's run ids; notes).

It is built from the report JSON (:meth:`passk.analysis.report.FileReport.to_dict`), the
same object the text and Markdown renderers print, so the numbers agree: each is shown
with :func:`passk.render.tables.cell`, as the tables show it. Every string that came from
a file (task ids, risk labels, reasons, notes, paths, run ids) goes through
:func:`escape_html`: a task id ``<script>alert(1)</script>`` is shown as text, never made
an element.
"""

from __future__ import annotations

import base64
import hashlib
import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

from passk.render.tables import baseline_line, cell, escape_text, show_id
from passk.render.words import plural

__all__ = ["curve_svg", "escape_html", "report_page"]

#: Okabe–Ito, colour-blind safe: pass@k blue, pass^k vermillion, the bar grey.
_AT, _HAT, _BAR = "#0072B2", "#D55E00", "#555555"

_STYLE = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;
max-width:1100px;padding:1em 1.5em 3em;color:#1b1b1b;background:#fff}
h1{font-size:1.5em;margin:.4em 0}h2{font-size:1.15em;margin:1.6em 0 .5em;
border-bottom:1px solid #ddd;padding-bottom:.2em}
.verdict{padding:.7em 1em;border-radius:6px;font-weight:600;margin:.6em 0}
.passed{background:#e3f2e1;border:1px solid #2e7d32}.blocked{background:#fde7e4;
border:1px solid #c62828}
table{border-collapse:collapse;font-size:.92em}th,td{padding:.25em .6em;text-align:left;
border-bottom:1px solid #eee;vertical-align:top}td.n,th.n{text-align:right;
font-variant-numeric:tabular-nums;white-space:nowrap}
#tasks td:last-child,#tasks td:nth-child(2){white-space:nowrap}
#tasks th{cursor:pointer;user-select:none;background:#f6f6f6;position:sticky;top:0}
#tasks th[aria-sort=ascending]::after{content:" \\25B2"}
#tasks th[aria-sort=descending]::after{content:" \\25BC"}
tr.flaky td{background:#fff6e0}code,.id{font-family:ui-monospace,Menlo,Consolas,monospace;
font-size:.9em;word-break:break-all}
.muted{color:#666;font-size:.9em}svg{max-width:100%;height:auto}
ul.reasons{max-height:16em;overflow:auto;border:1px solid #eee;padding:.4em 2em;margin:0}
ul.reasons li{margin:.1em 0}
#flaky{columns:2 28em}
"""

# Sorting: numbers by data-v (empty: not estimable, always last), text by its content.
_SCRIPT = """
(function(){
var table=document.getElementById('tasks');if(!table)return;
var heads=table.tHead.rows[0].cells,body=table.tBodies[0];
Array.prototype.forEach.call(heads,function(th,col){
th.addEventListener('click',function(){
var asc=th.getAttribute('aria-sort')!=='ascending';
Array.prototype.forEach.call(heads,function(h){h.removeAttribute('aria-sort');});
th.setAttribute('aria-sort',asc?'ascending':'descending');
var num=th.classList.contains('n'),rows=Array.prototype.slice.call(body.rows);
rows.sort(function(a,b){
var x=a.cells[col],y=b.cells[col];
if(num){var p=x.getAttribute('data-v'),q=y.getAttribute('data-v');
if(p===''&&q==='')return 0;if(p==='')return 1;if(q==='')return -1;
return asc?p-q:q-p;}
var s=x.textContent,t=y.textContent;return asc?s.localeCompare(t):t.localeCompare(s);});
rows.forEach(function(r){body.appendChild(r);});});});})();
"""


def escape_html(text: Any) -> str:
    r"""Text from a file as HTML text or an attribute value: shown, never parsed as markup.

    Control characters are written as escapes first (:func:`passk.render.tables.escape_text`,
    as the text report writes them), then ``& < > " '`` as character references.

    Examples
    --------
    >>> escape_html("<script>alert(1)</script>")
    '&lt;script&gt;alert(1)&lt;/script&gt;'
    >>> escape_html('a"b\x1b[31m')
    'a&quot;b\\x1b[31m'
    """
    return html.escape(escape_text(str(text)), quote=True)


def _num(x: Any) -> str:
    """A ``data-v`` sort key: the full-precision number, or empty when not estimable."""
    return "" if x is None or not math.isfinite(x) else repr(float(x))


def _interval(ci: Sequence[Any] | None) -> str:
    lo, hi = (ci or (None, None))[:2] if ci else (None, None)
    return f"[{cell(lo)}, {cell(hi)}]"


def _ticks(kmax: int) -> list[int]:
    step = max(1, math.ceil(kmax / 10))
    return sorted({1, *range(step, kmax + 1, step), kmax})


def curve_svg(curve: Mapping[str, Any], *, k: int | None = None, bar: float | None = None,
              width: int = 640, height: int = 340) -> str:
    """The suite's pass@k and pass^k over k as an inline SVG, each point with its interval.

    ``curve`` is the report JSON's ``curve``; ``k`` marks the gate's k and ``bar`` draws
    the gate's bar on pass^k. Points not estimable (null) are left out.

    Examples
    --------
    >>> svg = curve_svg({"k": [1, 2], "pass_at_k": [0.5, 0.75], "pass_hat_k": [0.5, 0.25],
    ...                  "pass_at_k_ci": [[0.1, 0.9], [0.3, 1.0]],
    ...                  "pass_hat_k_ci": [[0.1, 0.9], [0.0, 0.7]]}, k=2, bar=0.7)
    >>> svg.startswith("<svg") and svg.count("<circle") == 4
    True
    """
    ks = [int(x) for x in curve.get("k") or []]
    left, right, top, bottom = 52, 130, 14, 44
    pw, ph = width - left - right, height - top - bottom
    kmax = max(ks, default=1)

    def x(kk: float) -> float:
        return left + (pw / 2 if kmax == 1 else (kk - 1) / (kmax - 1) * pw)

    def y(p: float) -> float:
        return top + (1 - p) * ph

    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
           f'width="{width}" height="{height}" role="img" id="curve" '
           'aria-label="pass@k and pass^k over k, with intervals">'),
           (f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="#fafafa" '
           'stroke="#ccc"/>')]
    out.extend(f'<line x1="{left}" x2="{left + pw}" y1="{y(p):.1f}" y2="{y(p):.1f}" '
               f'stroke="#e4e4e4"/><text x="{left - 6}" y="{y(p) + 4:.1f}" '
               f'text-anchor="end" font-size="11">{p:g}</text>'
               for p in (0, 0.25, 0.5, 0.75, 1))
    out.extend(f'<text x="{x(kk):.1f}" y="{top + ph + 16}" text-anchor="middle" '
               f'font-size="11">{kk}</text>' for kk in _ticks(kmax))
    out.append(f'<text x="{left + pw / 2:.1f}" y="{height - 6}" text-anchor="middle" '
               'font-size="12">k</text>')
    if k is not None and k in ks:
        out.append(f'<line x1="{x(k):.1f}" x2="{x(k):.1f}" y1="{top}" y2="{top + ph}" '
                   f'stroke="{_BAR}" stroke-dasharray="2 3"/>')
    if bar is not None and math.isfinite(bar):
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{y(bar):.1f}" y2="{y(bar):.1f}" '
                   f'stroke="{_BAR}" stroke-dasharray="6 4"/>'
                   f'<text x="{left + pw + 6}" y="{y(bar) + 4:.1f}" font-size="11" '
                   f'fill="{_BAR}">bar {cell(bar)}</text>')
    shift = 0.12 * (pw / max(kmax - 1, 1)) if kmax > 1 else 6.0
    shift = min(shift, 6.0)
    for name, key, colour, dx in (("pass@k", "pass_at_k", _AT, -shift),
                                  ("pass^k", "pass_hat_k", _HAT, shift)):
        values, cis = curve.get(key) or [], curve.get(f"{key}_ci") or []
        points = [(kk, v, ci) for kk, v, ci in zip(ks, values, cis, strict=False)
                  if v is not None and math.isfinite(v)]
        if len(points) > 1:
            path = " ".join(f"{x(kk) + dx:.1f},{y(v):.1f}" for kk, v, _ in points)
            out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" '
                       'stroke-width="1.8"/>')
        for kk, v, ci in points:
            cx = x(kk) + dx
            lo, hi = (ci or [None, None])[:2]
            if lo is not None and hi is not None:
                out.append(f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{y(hi):.1f}" '
                           f'y2="{y(lo):.1f}" stroke="{colour}" stroke-width="1.4" '
                           'class="interval"/>')
            out.append(f'<circle cx="{cx:.1f}" cy="{y(v):.1f}" r="3.2" fill="{colour}">'
                       f'<title>{name} at k={kk}: {cell(v)} {_interval(ci)}</title></circle>')
    for i, (name, colour) in enumerate((("pass@k", _AT), ("pass^k", _HAT))):
        ly = top + 14 + 18 * i
        out.append(f'<line x1="{left + pw + 10}" x2="{left + pw + 30}" y1="{ly}" y2="{ly}" '
                   f'stroke="{colour}" stroke-width="2"/><text x="{left + pw + 36}" '
                   f'y="{ly + 4}" font-size="12">{name}</text>')
    out.append("</svg>")
    return "\n".join(out)


def _rows(tasks: Sequence[Mapping[str, Any]], order: Sequence[int], flaky: set[str]) -> str:
    lines = []
    for i in order:
        t = tasks[i]
        ci = t.get("ci") or [None, None]
        over = t["task_id"] in flaky
        tr = ' class="flaky"' if t.get("class") == "flaky" or over else ""
        nums = [(t.get("runs"), str(t.get("runs"))), (t.get("excluded", 0),
                str(t.get("excluded", 0))), (t.get("successes"), str(t.get("successes"))),
                (t.get("pass_rate"), cell(t.get("pass_rate"))), (t.get("k"), str(t.get("k"))),
                (t.get("pass_at_k"), cell(t.get("pass_at_k"))),
                (t.get("pass_hat_k"), cell(t.get("pass_hat_k"))),
                (ci[0], _interval(ci)), (t.get("lower_bound"), cell(t.get("lower_bound"))),
                (t.get("flakiness"), cell(t.get("flakiness")))]
        cells = [f'<td class="id">{escape_html(show_id(t["task_id"]))}</td>',
                 f"<td>{escape_html(t.get('risk', ''))}</td>"]
        cells += [f'<td class="n" data-v="{_num(v)}">{shown}</td>' for v, shown in nums]
        cells.append(f"<td>{escape_html(t.get('class', ''))}"
                     f"{' (over the cap)' if over else ''}</td>")
        lines.append(f"<tr{tr}>" + "".join(cells) + "</tr>")
    return "\n".join(lines)


def _criteria_table(criteria: Sequence[tuple[str, str, str]]) -> str:
    if not criteria:
        return ""
    body = "".join(f"<tr><td>{escape_html(n)}</td><td>{escape_html(v)}</td>"
                   f"<td>{escape_html(w)}</td></tr>" for n, v, w in criteria)
    return (f'<table id="criteria"><thead><tr><th>criterion</th><th>value</th>'
            f"<th>from</th></tr></thead><tbody>{body}</tbody></table>")


def _read_table(read: Sequence[Mapping[str, Any]]) -> str:
    if not read:
        return '<p class="muted">no file: the runs were given in memory.</p>'
    body = []
    for f in read:
        ids = "; ".join(f"{what} {value}" for what, value in f.get("run_ids") or ())
        body.append(f"<tr><td>{escape_html(f.get('role', ''))}</td>"
                    f'<td class="id">{escape_html(f.get("path", ""))}</td>'
                    f"<td>{escape_html(f.get('producer', ''))}</td>"
                    f'<td class="id">{escape_html(f.get("sha256", ""))}</td>'
                    f'<td class="id">{escape_html(ids) or "-"}</td></tr>')
    return ('<table id="read"><thead><tr><th>as</th><th>file</th><th>producer</th>'
            "<th>SHA-256</th><th>producer's run ids</th></tr></thead><tbody>"
            + "".join(body) + "</tbody></table>")


def _items(lines: Sequence[str], cls: str) -> str:
    return (f'<ul class="{cls}">' + "".join(f"<li>{escape_html(s)}</li>" for s in lines)
            + "</ul>")


def report_page(report: Mapping[str, Any], *, verdict: str,
                order: Sequence[int] | None = None,
                criteria: Sequence[tuple[str, str, str]] = (),
                read: Sequence[Mapping[str, Any]] = (), interval_note: str = "",
                title: str = "passk report", generator: str = "passk") -> str:
    """One self-contained HTML page of a report (see the module's docstring).

    Parameters
    ----------
    report : Mapping
        The report JSON (:meth:`passk.analysis.report.FileReport.to_dict`).
    verdict : str
        The verdict line as the text report prints it (with the policy and overrides).
    order : sequence of int, optional
        The rows' first order (the text report's: flaky tasks first); default as given.
    criteria : sequence of (name, value, from)
        The criteria in force and where each came from.
    read : sequence of Mapping
        Each file read: ``role`` (results, baseline), ``path``, ``producer``,
        ``sha256``, ``run_ids`` (pairs of what and value).
    interval_note : str
        The sentence saying what the table's interval columns are.
    title, generator : str
        The page's title, and what wrote it (shown at the foot).

    Returns
    -------
    str
        The page, ``<!DOCTYPE html>`` to ``</html>``.

    Examples
    --------
    >>> page = report_page({"k": 1, "tasks": [{"task_id": "<b>x</b>", "runs": 1}],
    ...                     "gate": {"passed": False, "reasons": ["<i>r</i>"]}},
    ...                    verdict="gate: BLOCKED")
    >>> "<b>x</b>" in page, "&lt;b&gt;x&lt;/b&gt;" in page, "&lt;i&gt;r&lt;/i&gt;" in page
    (False, True, True)
    """
    tasks = list(report.get("tasks") or [])
    gate = report.get("gate") or {}
    passed = bool(gate.get("passed"))
    flaky_over = set(gate.get("flaky_tasks") or [])
    order = list(range(len(tasks))) if order is None else list(order)
    reasons = list(gate.get("reasons") or [])
    curve = report.get("curve") or {}
    conf = report.get("confidence")
    level = f"{conf:.0%}" if isinstance(conf, (int, float)) else ""
    script_hash = base64.b64encode(hashlib.sha256(_SCRIPT.encode()).digest()).decode()
    csp = (f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{script_hash}';"
           " img-src data:; base-uri 'none'; form-action 'none'")
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f'<meta http-equiv="Content-Security-Policy" content="{csp}">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{escape_html(title)}</title><style>{_STYLE}</style></head><body>",
             f"<h1>{escape_html(title)}</h1>",
             (f'<div id="verdict" class="verdict {"passed" if passed else "blocked"}">'
             f"{escape_html(verdict)}</div>")]
    if gate.get("baseline"):  # what the comparison found, passed or blocked (the judge's)
        parts.append(f'<p id="baseline">{escape_html(baseline_line(gate["baseline"]))}</p>')
    if reasons:
        parts += [(f'<h2 id="reasons-heading">Why it is blocked: {len(reasons)} '
                  f"reason{'s' if len(reasons) != 1 else ''}</h2>"),
                  _items(reasons, "reasons")]
    else:
        parts.append('<p id="no-reasons">No reason to block: every criterion is met.</p>')
    if gate.get("overrides"):
        parts += ["<p>Options in effect that change what counts:</p>",
                  _items(gate["overrides"], "overrides")]
    parts += ["<h2>Criteria, and where each came from</h2>", _criteria_table(criteria)]
    kmax = max(curve.get("k") or [0])
    parts.append("<h2>The suite's pass@k and pass^k over k</h2>")
    if any(v is not None for v in curve.get("pass_hat_k") or []):
        left = (f"; {plural(curve['tasks_left_out'], 'task')} with fewer than {kmax} runs left out"
                if curve.get("tasks_left_out") else "")
        bar = gate.get("bar") if gate.get("on", "estimate") == "estimate" else None
        parts += [(f'<p class="muted">{plural(curve.get("tasks", 0), "task")}, the same for '
                  "every k; "
                  f"{escape_html(curve.get('interval_level', ''))} intervals: "
                  f"{escape_html(curve.get('interval', ''))}{left}. Dashed: the gate's k and "
                  "bar.</p>"),
                  curve_svg(curve, k=report.get("k"), bar=bar)]
        rows = "".join(
            f'<tr><td class="n">{kk}</td><td class="n">{cell(a)}</td>'
            f'<td class="n">{_interval(aci)}</td><td class="n">{cell(h)}</td>'
            f'<td class="n">{_interval(hci)}</td></tr>'
            for kk, a, aci, h, hci in zip(curve["k"], curve["pass_at_k"],
                                          curve["pass_at_k_ci"], curve["pass_hat_k"],
                                          curve["pass_hat_k_ci"], strict=False))
        parts.append(f'<details><summary>the curve\'s numbers</summary><table id="curve-table">'
                     f'<thead><tr><th class="n">k</th><th class="n">pass@k</th>'
                     f'<th class="n">{level} CI</th><th class="n">pass^k</th>'
                     f'<th class="n">{level} CI</th></tr></thead><tbody>{rows}</tbody>'
                     "</table></details>")
    else:
        parts.append(f'<p id="no-curve">No curve: no task has {kmax} counted runs.</p>')
    flaky = [tasks[i] for i in order
             if tasks[i].get("class") == "flaky" or tasks[i]["task_id"] in flaky_over]
    parts.append(f'<h2 id="flaky-heading">Flaky tasks: {len(flaky)}</h2>')
    if flaky:
        cap = gate.get("cap")
        parts.append('<ul id="flaky">' + "".join(
            f'<li><span class="id">{escape_html(show_id(t["task_id"]))}</span>: flakiness '
            f"{cell(t.get('flakiness'))}, {t.get('successes')} of {t.get('runs')} runs passed"
            f"{' (over the cap ' + cell(cap) + ')' if t['task_id'] in flaky_over else ''}</li>"
            for t in flaky) + "</ul>")
    else:
        parts.append("<p>None.</p>")
    k = report.get("k")
    parts += [f"<h2>Tasks: {len(tasks)}</h2>",
              ('<p class="muted">Click a column to sort; flaky tasks first. '
              f"{escape_html(interval_note)}</p>"),
              ('<table id="tasks"><thead><tr><th>task</th><th>risk</th><th class="n">n</th>'
              '<th class="n">left out</th><th class="n">passed</th><th class="n">p̂</th>'
              f'<th class="n">k</th><th class="n">pass@k</th><th class="n">pass^k</th>'
              f'<th class="n">{level} CI</th><th class="n">lower</th>'
              '<th class="n">flakiness</th><th>class</th></tr></thead><tbody>'),
              _rows(tasks, order, flaky_over), "</tbody></table>",
              "<h2>What was read</h2>", _read_table(read)]
    protocol = report.get("protocol")
    if isinstance(protocol, Mapping) and protocol.get("fingerprint"):
        parts.append(f"<p>The runs' protocol: fingerprint <code>"
                     f"{escape_html(protocol['fingerprint'])}</code>.</p>")
    notes = list(report.get("notes") or []) + [f"stricter than declared: {s}"
                                               for s in gate.get("stricter") or []]
    if notes:
        parts += ["<p>Notes:</p>", _items(notes, "notes")]
    parts.append(f'<p class="muted">Written by {escape_html(generator)}; gate at k = '
                 f"{escape_html(k)}. Opens offline: no request leaves this page.</p>")
    parts += [f"<script>{_SCRIPT}</script>", "</body></html>"]
    return "\n".join(parts) + "\n"
