"""Every fence in the notebooks' Markdown opens and closes on a line of its own.

A closing fence typed at the end of a prose line ("...only by the step rule. ```") is
not a fence to MyST: the directive stays open, and the next exercise lands inside the
previous solution's dropdown, where no reader sees it. These checks read the source;
the browser test checks the rendered page.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
FENCE = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})(.*)$")
TRAILING_FENCE = re.compile(r"\S.*?(`{3,}|~{3,})\s*$")


def markdown_cells(path: Path) -> list[tuple[int, str]]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [(i, "".join(c["source"])) for i, c in enumerate(cells)
            if c["cell_type"] == "markdown"]


def fence_events(text: str) -> list[tuple[int, str, str]]:
    """(line number, "open" or "close", the directive or language) for each fence."""
    events, stack = [], []
    for number, line in enumerate(text.split("\n"), start=1):
        m = FENCE.match(line)
        if not m:
            continue
        marks, rest = m.group(1), m.group(2).strip()
        if stack and not rest and marks[0] == stack[-1][0][0] and len(marks) >= len(stack[-1][0]):
            events.append((number, "close", stack.pop()[1]))
        else:
            stack.append((marks, rest))
            events.append((number, "open", rest))
    events += [(0, "unclosed", info) for _, info in stack]
    return events


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_fence_at_the_end_of_a_prose_line(path):
    bad = [f"cell {i}: {line.strip()[-60:]!r}"
           for i, text in markdown_cells(path) for line in text.split("\n")
           if TRAILING_FENCE.match(line) and not FENCE.match(line)
           and not re.search(r"`[^`]*```", line)]
    assert not bad, "a fence must stand on its own line:\n  " + "\n  ".join(bad)


def fence_problems(text: str) -> list[str]:
    """Unclosed fences, and exercises opened inside an open solution."""
    events = fence_events(text)
    problems = [f"unclosed: {info}" for _, kind, info in events if kind == "unclosed"]
    depth: list[str] = []
    for number, kind, info in events:
        if kind == "open":
            if info.startswith("{exercise}") and any(d.startswith("{solution}") for d in depth):
                problems.append(f"line {number}: an exercise inside a solution")
            depth.append(info)
        elif kind == "close":
            depth.pop()
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_fence_closes_and_no_exercise_sits_inside_a_solution(path):
    problems = [f"cell {i}: {p}" for i, text in markdown_cells(path) for p in fence_problems(text)]
    assert not problems, "\n  ".join(["fences:", *problems])


def test_the_checks_catch_the_fault_they_are_for():
    # page 6 before the fix: Solution 17's closing fence at the end of its last line
    broken = ("```{solution} ex-1\n:class: dropdown\n\nprose. ```\n\n"
              "```{exercise}\n:label: ex-2\n\nQ?\n```\n")
    assert sorted(fence_problems(broken)) == ["line 6: an exercise inside a solution",
                                              "unclosed: {solution} ex-1"]
    fixed = broken.replace("prose. ```", "prose.\n```")
    assert fence_problems(fixed) == []
    assert TRAILING_FENCE.match("prose. ```") and not FENCE.match("prose. ```")
