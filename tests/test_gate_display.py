"""What a reader sees of a gate: its display in a notebook, the book and on GitHub.

The gate's reasons are a work order, but a notebook output with 27 of them in a
row buries the verdict: the display shows the first few and how many more, and
the result keeps every one. A Markdown report is read on GitHub and in the book,
so it is parsed here as GitHub-flavoured Markdown (markdown-it-py, CommonMark plus
tables) to check what a renderer makes of it, not what the string looks like.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from passk.analysis.report import build_report
from passk.cli.commands import main
from passk.gate.honest import HonestGateResult
from passk.results.read import read_results
from passk.run.evaluate import judged_report
from passk.stability import (
    SHOWN_REASONS,
    format_table,
    reason_lines,
    reliability_gate,
    suite_report,
)

TAU = Path(__file__).resolve().parents[1] / "book" / "data" / "tau-bench" / (
    "gpt-4o-airline-rewards.json")
GFM = MarkdownIt("commonmark").enable("table")


def flaky_suite(n_tasks: int):
    """n_tasks tasks that each passed 1 of 2 runs: one reason per task, and the bar's."""
    return judged_report([f"t{i}" for i in range(n_tasks)], [1] * n_tasks, [2] * n_tasks, k=1)


def rendered(markdown: str) -> dict[str, list[str]]:
    """The text of every table cell, list item and paragraph outside lists and tables."""
    out: dict[str, list[str]] = {"cell": [], "item": [], "paragraph": [], "rows": []}
    inside: list[str] = []
    for token in GFM.parse(markdown):
        if token.type.endswith("_open"):
            inside.append(token.type[:-5])
            if token.type == "tr_open" and "tbody" in inside:
                out["rows"].append("")
        elif token.type.endswith("_close"):
            inside.pop()
        elif token.type == "inline":
            if "td" in inside or "th" in inside:
                out["cell"].append(token.content)
            elif "list_item" in inside:
                out["item"].append(token.content)
            else:
                out["paragraph"].append(token.content)
    return out


def test_a_long_gate_shows_the_first_reasons_and_how_many_more():
    gate = flaky_suite(27).gate
    assert len(gate.reasons) == 28          # the bar, then 27 tasks over the cap
    seen = rendered(gate._repr_markdown_())
    assert seen["paragraph"] == [f"**{gate.verdict()}**"]
    assert seen["item"][:SHOWN_REASONS] == list(gate.reasons[:SHOWN_REASONS])
    assert len(seen["item"]) == SHOWN_REASONS + 1
    assert seen["item"][-1] == (f"... and {28 - SHOWN_REASONS} more reasons "
                                "(all 28 are in the gate's `reasons`)")
    text = str(gate).splitlines()
    assert text[0] == gate.verdict() and len(text) == SHOWN_REASONS + 2
    assert text[-1].startswith(f"  - ... and {28 - SHOWN_REASONS} more reasons")


@pytest.mark.parametrize("n_reasons", [0, 1, SHOWN_REASONS, SHOWN_REASONS + 1])
def test_a_short_gate_shows_every_reason(n_reasons):
    # "and 1 more" would take the place of the reason itself: up to limit + 1 all show
    reasons = [f"reason {i}" for i in range(n_reasons)]
    assert reason_lines(reasons) == [f"  - {r}" for r in reasons]
    assert reason_lines(reasons, markdown=True) == [f"- {r}" for r in reasons]


def test_no_limit_shows_every_reason_and_a_bad_limit_is_refused():
    gate = flaky_suite(9).gate
    assert gate.describe(limit=None).splitlines()[1:] == [f"  - {r}" for r in gate.reasons]
    with pytest.raises(ValueError, match=r"limit \(-1\)"):
        gate.describe(limit=-1)


def test_a_passed_gate_is_one_bold_paragraph():
    gate = reliability_gate(suite_report(["a"], [12], [12], k=5).tasks)
    seen = rendered(gate._repr_markdown_())
    assert seen == {"cell": [], "item": [], "rows": [],
                    "paragraph": ["**" + gate.verdict() + "**"]}


def test_suite_report_markdown_keeps_the_note_out_of_the_table():
    report = flaky_suite(8)
    seen = rendered(report._repr_markdown_())
    assert len(seen["rows"]) == 8
    assert not any(c.startswith("CI:") for c in seen["cell"])
    assert any(p.startswith("CI: two-sided 95%") for p in seen["paragraph"])
    assert len(seen["item"]) == SHOWN_REASONS + 1       # the display is capped
    full = rendered(format_table(report, markdown=True))
    assert len(full["item"]) == len(report.gate.reasons)   # format_table is not


def test_report_markdown_on_github_is_a_table_then_paragraphs(capsys):
    # `passk report --markdown`, as a pull-request comment would show it
    assert main(["report", str(TAU), "--markdown"]) == 0     # report informs; gate decides
    seen = rendered(capsys.readouterr().out)
    tasks = len(read_results(TAU))
    assert len(seen["rows"]) == tasks + 4          # the task table and the curve (k = 1..4)
    assert not any(c.startswith(("CI:", "gate:", "**")) for c in seen["cell"])
    firsts = [p.split(" ")[0] for p in seen["paragraph"]]
    assert firsts == ["CI:", "**suite", "**gate:"]   # the note, the curve's title, the verdict
    assert seen["paragraph"][0].startswith("CI: two-sided 95% exact")
    # the command line is the work order: every reason, not the notebook's first few
    assert len(seen["item"]) == 27


def test_file_report_display_is_capped_but_the_gate_keeps_every_reason():
    report = build_report(read_results(TAU))
    assert len(report.gate.reasons) == 27
    seen = rendered(report._repr_markdown_())
    assert len(seen["item"]) == SHOWN_REASONS + 1
    assert seen["item"][-1].startswith(f"... and {27 - SHOWN_REASONS} more reasons")
    assert any(p.startswith("CI: two-sided") for p in seen["paragraph"])


def test_honest_gate_result_displays_its_verdict_and_wrapped_reasons():
    long = ("criteria b6fc949d08be73bc are not the ones declared before the measurement "
            "(3a7d053cb0fd9b37): a bar cannot change after the numbers are in")
    refused = HonestGateResult(False, (long, "no_leak: measured 0.000, bar 1.000: not met"))
    lines = str(refused).splitlines()
    assert lines[0] == "REFUSED" and all(len(line) <= 75 for line in lines)
    assert lines[1].startswith("  - criteria b6fc") and lines[-1].startswith("  - no_leak")
    assert " ".join(line.strip(" -") for line in lines[1:-1]) == long
    assert rendered(refused._repr_markdown_())["item"] == list(refused.reasons)
    assert str(HonestGateResult(True, ())) == "PASSED"
