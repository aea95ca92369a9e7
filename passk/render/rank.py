"""``passk rank`` rendered: text, Markdown, and one self-contained HTML page.

Every renderer takes the ranking's JSON (:meth:`passk.analysis.rank.RankReport.to_dict`),
the object ``--json`` prints, so the numbers agree in every format. Version names come
from file paths and task ids from files: the text is escaped by the CLI's printer, the
Markdown cells by :func:`passk.render.tables.markdown_cell`, the page by
:func:`passk.render.html.escape_html`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from passk.render.html import _STYLE, escape_html
from passk.render.tables import cell, format_rows, signed
from passk.render.words import plural

__all__ = ["format_rank", "rank_page", "rank_verdict"]

#: Okabe-Ito: one colour per tie group, in turn (colour-blind safe).
_GROUP_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
                  "#F0E442", "#000000")


def _names(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "-"


def _rank(v: Mapping[str, Any]) -> str:
    lo, hi = v["rank_best"], v["rank_worst"]
    return str(lo) if lo == hi else f"{lo}-{hi}"


def _pct(x: Any) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def _header(d: Mapping[str, Any]) -> list[str]:
    k, conf = d["k"], d["confidence"]
    n = len(d["versions"])
    pairs = n * (n - 1) // 2
    left = (f"; {d['left_out']} left out (fewer than {k} runs in some version)"
            if d["left_out"] else "")
    missing = (f"; {len(d['not_in_every_file'])} not in every file" if d["not_in_every_file"]
               else "")
    return [f"rank: {n} versions on mean pass^{k} over {plural(d['tasks'], 'task')}{left}{missing}",
            (f"family-wise {conf:.0%}: every claim below (the tie groups, each rank range, "
             f"who is shown better than whom) holds together with probability at least "
             f"{conf:.0%} ({d['procedure'].capitalize()}'s step-down over the {2 * pairs} "
             "one-sided pairwise comparisons of passk diff)")]


def _groups_line(d: Mapping[str, Any]) -> str:
    return "tie groups: " + "  >  ".join("{" + ", ".join(g) + "}" for g in d["groups"])


def format_rank(d: Mapping[str, Any], *, markdown: bool = False) -> str:
    """The ranking as text or Markdown: the table, the adjacent pairs, the noise.

    Examples
    --------
    >>> d = {"k": 2, "confidence": 0.95, "procedure": "shaffer", "tasks": 3, "left_out": 0,
    ...      "not_in_every_file": [], "groups": [["b"], ["a"]], "interval_confidence": 0.975,
    ...      "versions": [
    ...        {"version": "b", "group": 1, "mean_pass_hat_k": 0.9, "ci_low": 0.8,
    ...         "ci_high": 0.95, "rank_best": 1, "rank_worst": 1, "could_be_best": True,
    ...         "shown_better_than": ["a"], "runs_min": 4, "runs_max": 4,
    ...         "single_run_sd": 0.02, "rerun_band": 0.055, "flip_rate": 0.1,
    ...         "mixed_share": 0.2},
    ...        {"version": "a", "group": 2, "mean_pass_hat_k": 0.5, "ci_low": 0.4,
    ...         "ci_high": 0.6, "rank_best": 2, "rank_worst": 2, "could_be_best": False,
    ...         "shown_better_than": [], "runs_min": 4, "runs_max": 4,
    ...         "single_run_sd": 0.05, "rerun_band": 0.139, "flip_rate": 0.4,
    ...         "mixed_share": 0.6}],
    ...      "adjacent": [{"upper": "b", "lower": "a", "gap": 0.4, "gap_ci_low": 0.2,
    ...                    "gap_ci_high": 0.6, "interval_confidence": 0.95,
    ...                    "separated": True, "runs_per_task_needed": None,
    ...                    "plan": "separated"}]}
    >>> print(format_rank(d).splitlines()[-1])
    tie groups: {b}  >  {a}
    """
    k = d["k"]
    lines = [*_header(d), ""]
    rows = [[str(v["group"]), v["version"], cell(v["mean_pass_hat_k"]),
             f"[{cell(v['ci_low'])}, {cell(v['ci_high'])}]", _rank(v),
             "yes" if v["could_be_best"] else "no", _names(v["shown_better_than"]),
             str(v["runs_min"]) if v["runs_min"] == v["runs_max"]
             else f"{v['runs_min']}-{v['runs_max']}",
             _pct(v["single_run_sd"]), _pct(v["rerun_band"]), _pct(v["flip_rate"]),
             _pct(v["mixed_share"])] for v in d["versions"]]
    level = f"{d['interval_confidence']:.4g}"
    header = ["group", "version", f"pass^{k}", f"CI ({level} each)", "rank", "could be best",
              "shown better than", "runs", "1-run sd (pts)", "rerun band (pts)",
              "flip rate %", "mixed tasks %"]
    lines += [format_rows(header, rows, numeric={0, 2, 3, 4, 7, 8, 9, 10, 11},
                          markdown=markdown), ""]
    if d["adjacent"]:
        conf = d["adjacent"][0]["interval_confidence"]
        lines.append(f"adjacent pairs (the gap in mean pass^{k}, intervals at {conf:.4g} each, "
                     "all pairs together at the table's level):")
        bullet = "- " if markdown else "  "
        for a in d["adjacent"]:
            gap = (f"gap {signed(a['gap'])} [{signed(a['gap_ci_low'])}, "
                   f"{signed(a['gap_ci_high'])}]")
            what = "separated" if a["separated"] else f"not separated: {a['plan']}"
            sign = ">" if a["separated"] else "?"
            lines.append(f"{bullet}{a['upper']} {sign} {a['lower']}: {gap}; {what}")
        lines.append("")
    lines.append("noise: 1-run sd is the spread of one run's suite pass rate; two identical "
                 f"single runs differ by more than the rerun band with probability about "
                 f"{1 - d['confidence']:.0%}; flip rate is the chance two runs of a task "
                 "disagree, averaged over tasks; mixed tasks had both a pass and a fail")
    lines.append(f"**{_groups_line(d)}**" if markdown else _groups_line(d))
    return "\n".join(lines)


def rank_verdict(d: Mapping[str, Any], candidate: str, release: str) -> tuple[bool, str]:
    """Whether ``candidate`` is not shown worse than ``release`` in the ranking, and the line.

    "Shown worse" is a claim of the table (family-wise error at most 1 - confidence), so a
    candidate in a lower tie group than the release is always shown worse; one in the same
    group may be too, when the table separates the two directly.

    Examples
    --------
    >>> d = {"confidence": 0.95, "versions": [
    ...     {"version": "r", "group": 1, "shown_worse_than": []},
    ...     {"version": "c", "group": 2, "shown_worse_than": ["r"]}]}
    >>> rank_verdict(d, "c", "r")[1]
    'rank gate: BLOCKED  c is shown worse than r (tie group 2 below 1; family-wise 95%)'
    """
    by = {v["version"]: v for v in d["versions"]}
    for name in (candidate, release):
        if name not in by:
            raise KeyError(name)
    c, r = by[candidate], by[release]
    conf = f"family-wise {d['confidence']:.0%}"
    if release in c["shown_worse_than"]:
        where = (f"tie group {c['group']} below {r['group']}" if c["group"] > r["group"]
                 else f"both in tie group {c['group']}, separated directly")
        return False, (f"rank gate: BLOCKED  {candidate} is shown worse than {release} "
                       f"({where}; {conf})")
    return True, (f"rank gate: PASSED  {candidate} is not shown worse than {release} "
                  f"(tie groups {c['group']} and {r['group']}; {conf})")


def _svg(d: Mapping[str, Any]) -> str:
    """Each version a row: its mean pass^k, its interval, its tie group's colour and band."""
    versions = d["versions"]
    width, left, right, row = 720, 200, 20, 26
    height = 40 + row * len(versions)

    def x(p: float) -> float:
        return left + (width - left - right) * min(max(p, 0.0), 1.0)

    parts = [(f'<svg id="rank-plot" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} '
             f'{height}" role="img" aria-label="mean pass^k of each version, with its '
             'interval, coloured by tie group">')]
    parts += [f'<line x1="{x(t / 10):.1f}" y1="20" x2="{x(t / 10):.1f}" y2="{height - 16}" '
              f'stroke="#eee"/><text x="{x(t / 10):.1f}" y="{height - 2}" font-size="11" '
              f'text-anchor="middle">{t / 10:.1f}</text>' for t in range(0, 11, 2)]
    y = 30.0
    for v in versions:
        colour = _GROUP_COLOURS[(v["group"] - 1) % len(_GROUP_COLOURS)]
        if v["group"] % 2 == 0:
            parts.append(f'<rect x="0" y="{y - row / 2:.1f}" width="{width}" height="{row}" '
                         'fill="#f4f4f4"/>')
        parts.append(f'<text x="4" y="{y + 4:.1f}" font-size="12">{escape_html(v["version"])}'
                     f' (group {v["group"]})</text>')
        lo, hi = v.get("ci_low"), v.get("ci_high")
        if lo is not None and hi is not None:
            parts.append(f'<line x1="{x(lo):.1f}" y1="{y:.1f}" x2="{x(hi):.1f}" y2="{y:.1f}" '
                         f'stroke="{colour}" stroke-width="3"/>')
        if v.get("mean_pass_hat_k") is not None:
            parts.append(f'<circle cx="{x(v["mean_pass_hat_k"]):.1f}" cy="{y:.1f}" r="5" '
                         f'fill="{colour}"/>')
        y += row
    parts.append("</svg>")
    return "".join(parts)


def rank_page(d: Mapping[str, Any], *, title: str = "passk rank",
              generator: str = "passk", verdict: str = "") -> str:
    """One self-contained HTML page of a ranking: the groups drawn, the intervals, the noise.

    Examples
    --------
    >>> d = {"k": 1, "confidence": 0.9, "procedure": "shaffer", "tasks": 2, "left_out": 0,
    ...      "not_in_every_file": [], "groups": [["<b>x</b>"]], "interval_confidence": 0.9,
    ...      "adjacent": [], "versions": [{"version": "<b>x</b>", "group": 1,
    ...      "mean_pass_hat_k": 0.5, "ci_low": 0.1, "ci_high": 0.9, "rank_best": 1,
    ...      "rank_worst": 1, "could_be_best": True, "shown_better_than": [],
    ...      "runs_min": 2, "runs_max": 2, "single_run_sd": 0.1, "rerun_band": 0.3,
    ...      "flip_rate": 0.5, "mixed_share": 0.5}]}
    >>> page = rank_page(d)
    >>> "<b>x</b>" in page, "&lt;b&gt;x&lt;/b&gt;" in page, page.startswith("<!DOCTYPE html>")
    (False, True, True)
    """
    k = d["k"]
    csp = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'none'; img-src data:; "
           "base-uri 'none'; form-action 'none'")
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f'<meta http-equiv="Content-Security-Policy" content="{csp}">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             (f"<title>{escape_html(title)}</title><style>{_STYLE}"
             ".g{font-weight:600}</style></head><body>"),
             f"<h1>{escape_html(title)}</h1>"]
    parts += [f"<p>{escape_html(line)}</p>" for line in _header(d)]
    if verdict:
        passed = "PASSED" in verdict
        parts.append(f'<div id="verdict" class="verdict {"passed" if passed else "blocked"}">'
                     f"{escape_html(verdict)}</div>")
    parts.append(f'<p id="groups" class="g">{escape_html(_groups_line(d))}</p>')
    parts += ["<h2>Mean pass^k by version</h2>",
              (f'<p class="muted">Dot: the mean pass^{k}; bar: its proved interval '
               f"({d['interval_confidence']:.4g} each, all versions together at the table's "
               "level); shading alternates by tie group.</p>"), _svg(d)]
    head = ("<tr><th class='n'>group</th><th>version</th><th class='n'>pass^k</th>"
            "<th class='n'>interval</th><th class='n'>rank</th><th>could be best</th>"
            "<th>shown better than</th><th class='n'>runs</th>"
            "<th class='n'>1-run sd (pts)</th><th class='n'>rerun band (pts)</th>"
            "<th class='n'>flip rate %</th><th class='n'>mixed tasks %</th></tr>")
    body = "".join(
        f"<tr><td class='n'>{v['group']}</td><td class='id'>{escape_html(v['version'])}</td>"
        f"<td class='n'>{cell(v['mean_pass_hat_k'])}</td>"
        f"<td class='n'>[{cell(v['ci_low'])}, {cell(v['ci_high'])}]</td>"
        f"<td class='n'>{_rank(v)}</td><td>{'yes' if v['could_be_best'] else 'no'}</td>"
        f"<td>{escape_html(_names(v['shown_better_than']))}</td>"
        f"<td class='n'>{v['runs_min']}-{v['runs_max']}</td>"
        f"<td class='n'>{_pct(v['single_run_sd'])}</td><td class='n'>{_pct(v['rerun_band'])}"
        f"</td><td class='n'>{_pct(v['flip_rate'])}</td><td class='n'>"
        f"{_pct(v['mixed_share'])}</td></tr>" for v in d["versions"])
    parts += ["<h2>The table</h2>", (f'<table id="rank"><thead>{head}</thead><tbody>{body}'
              "</tbody></table>")]
    if d["adjacent"]:
        items = "".join(
            f"<li>{escape_html(a['upper'])} {'&gt;' if a['separated'] else '?'} "
            f"{escape_html(a['lower'])}: gap {signed(a['gap'])} [{signed(a['gap_ci_low'])}, "
            f"{signed(a['gap_ci_high'])}]; {escape_html(a['plan'])}</li>"
            for a in d["adjacent"])
        parts += ["<h2>Adjacent pairs</h2>", f'<ul id="adjacent">{items}</ul>']
    parts.append(f'<p class="muted">Written by {escape_html(generator)}. Opens offline: no '
                 "request leaves this page.</p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
