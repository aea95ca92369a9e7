"""Issue 41: the report's table laid out from the columns its rows were built from gives the
text the row-by-row code gave, byte for byte.

The reference is the code it replaced, loaded from git (commit 1b5792d:
``passk/analysis/report.py`` and ``passk/render/tables.py``), not copied here. Compared on
random suites (mixed n, tasks without runs, risks, per-task k, ids that need escapes, control
characters and invisible characters, flaky tasks by the thousand), in text and Markdown,
through ``format_report`` and through the command (``passk report`` text and ``--markdown``).
"""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import replace

import numpy as np
import pytest
from old_code import old_module

from passk.analysis.report import build_report, format_report
from passk.cli.commands import main
from passk.render import tables
from passk.results.counts import Run, results_from_runs
from passk.stability import TaskRows

OLD = "1b5792d"

ODD_IDS = ["plain", "with space", " lead", "trail ", "tab\there", "esc\x1b[31m", "zw\u200bj",
           "bidi\u202eevil", "nl\nforged gate: PASSED", "back\\slash", "cafe\u0301", "p\u0302",
           "vs\ufe0f", "pipe|cell", "<b>html</b>"]


def _runs(seed: int, tasks: int, odd: bool) -> list[Run]:
    rng = np.random.default_rng(seed)
    out: list[Run] = []
    for t in range(tasks):
        tid = (ODD_IDS[t % len(ODD_IDS)] + f"-{t}") if odd else f"task-{t:05d}"
        n = int(rng.integers(1, 14))
        p = float(rng.beta(2, 1))
        risk = ["read-only", "high", "money\x07"][t % 3]
        out += [Run(tid, bool(rng.random() < p), i, risk) for i in range(n)]
    return out


@pytest.fixture(scope="module")
def old_report():  # type: ignore[no-untyped-def]
    return old_module(OLD, "passk/analysis/report.py", "_old_report_41")


@pytest.fixture(scope="module")
def old_stability():  # type: ignore[no-untyped-def]
    return old_module(OLD, "passk/stability.py", "_old_stability_41")


@pytest.fixture(scope="module")
def old_tables():  # type: ignore[no-untyped-def]
    return old_module(OLD, "passk/render/tables.py", "_old_tables_41")


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("odd", [False, True])
@pytest.mark.parametrize("markdown", [False, True])
def test_format_report_matches_row_by_row(old_report, seed: int, odd: bool,  # type: ignore[no-untyped-def]
                                          markdown: bool) -> None:
    results = results_from_runs(_runs(seed, 60 + 40 * seed, odd))
    for k_for in ({}, {"high": 3}):
        fr = build_report(results, k=2, k_for=k_for, max_flakiness=0.3)
        assert isinstance(fr.report.tasks, TaskRows)
        new = format_report(fr, markdown=markdown)
        assert new == old_report.format_report(fr, markdown=markdown)
        # rows without their columns (rebuilt, as dataclasses.replace does) read row by row
        plain = fr.with_curve(fr.curve)
        plain = replace(plain, report=replace(fr.report, tasks=tuple(fr.report.tasks)))
        assert not isinstance(plain.report.tasks, TaskRows)
        assert format_report(plain, markdown=markdown) == new


def test_many_flaky_tasks_text_and_markdown(old_report) -> None:  # type: ignore[no-untyped-def]
    """Thousands of flaky tasks: every reason line, the table, in both formats."""
    rng = np.random.default_rng(7)
    runs = [Run(f"t{t}" + ("\u200b" if t == 1500 else ""), bool(rng.random() < 0.5), i)
            for t in range(3000) for i in range(6)]
    fr = build_report(results_from_runs(runs))
    assert len(fr.gate.reasons) > 1000
    for markdown in (False, True):
        assert format_report(fr, markdown=markdown) == old_report.format_report(
            fr, markdown=markdown)


@pytest.mark.parametrize("items", [
    [], ["x"], ["a", "b", "c"], ["ok", "bad\nline"], ["esc\x1b"], ["zw\u200b", "fine"],
    ["vs\ufe0f"], ["caf\u00e9", "ok"], ["p\u0302"], ["tag\U000e0041"], ["nbsp\u00a0"]])
@pytest.mark.parametrize("limit", [None, 0, 1, 5])
@pytest.mark.parametrize("markdown", [False, True])
def test_list_items_matches_old(old_tables, items: list[str], limit: int | None,  # type: ignore[no-untyped-def]
                                markdown: bool) -> None:
    old = old_tables
    assert tables.list_items(items, markdown=markdown, limit=limit) == old.list_items(
        items, markdown=markdown, limit=limit)


@pytest.mark.parametrize("fmt", [[], ["--markdown"], ["--json"]])
def test_command_output_unchanged(tmp_path, old_report, fmt: list[str]) -> None:  # type: ignore[no-untyped-def]
    """``passk report`` through the command: its output with the new table equals the output
    with the old module's format_report patched in."""
    path = tmp_path / "runs.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for r in _runs(3, 120, True):
            f.write(json.dumps({"task_id": r.task_id, "trial": r.trial, "success": r.success,
                                "risk": r.risk}) + "\n")

    def run() -> tuple[int, str]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(["report", str(path), *fmt])
        return code, out.getvalue()

    new = run()
    mp = pytest.MonkeyPatch()
    import passk.analysis.report as report_mod
    with mp.context() as m:
        m.setattr(report_mod, "format_report", old_report.format_report)
        old = run()
    assert new == old
    assert new[1].count("\n") > 100


def _gate_fields(g):  # type: ignore[no-untyped-def]
    return (repr(g.overall), g.passed, g.flaky_tasks, g.reasons, g.what, g.bar, g.cap)


@pytest.mark.parametrize("seed", range(12))
def test_gate_and_order_from_columns_equal_row_by_row(old_stability, seed: int) -> None:  # type: ignore[no-untyped-def]
    """reliability_gate and order_rows on the rows' columns (TaskRows) give what they give
    reading the rows one by one: tasks without runs, fewer runs than k, under min_runs,
    per-task k, the lower bound, flaky tasks, a mean near the bar, settled-early tasks."""
    from passk.stability import order_rows, reliability_gate, suite_report

    rng = np.random.default_rng(seed)
    t = int(rng.integers(1, 60))
    n = rng.integers(0, 9, size=t)
    c = rng.binomial(n, rng.beta(3, 1, size=t))
    ids = [ODD_IDS[i % len(ODD_IDS)] + str(i) for i in range(t)]
    k = rng.integers(1, 5, size=t) if seed % 2 else int(rng.integers(1, 4))
    report = suite_report(ids, c.tolist(), n.tolist(), k=k,
                          risks=[["read-only", "high"][i % 2] for i in range(t)])
    rows = report.tasks
    assert isinstance(rows, TaskRows)
    plain = tuple(rows)
    ks = [r.k for r in rows]
    for bar in (0.0, 0.5, 0.8, float(np.mean([r.pass_hat_k for r in rows]))
                if all(r.runs >= r.k for r in rows) else 0.6):
        for on in ("estimate", "lower-bound"):
            for min_runs in (0, 3):
                for early in ({}, {ids[0]: 9}):
                    kw = {"min_overall_pass_hat_k": bar, "max_flakiness": 0.3, "on": on,
                          "min_runs": min_runs, "settled_early": early, "ks": ks,
                          "excluded": [i % 3 for i in range(t)]}
                    got = _gate_fields(reliability_gate(rows, **kw))
                    assert got == _gate_fields(reliability_gate(plain, **kw))
                    assert got == _gate_fields(old_stability.reliability_gate(plain, **kw))
    assert order_rows(rows) == order_rows(plain) == old_stability.order_rows(plain)
    import copy
    import pickle
    for again in (pickle.loads(pickle.dumps(report)), copy.deepcopy(report)):
        assert repr(again) == repr(report) and type(again.tasks) is tuple  # NaN: by repr
