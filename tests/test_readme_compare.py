"""The planning figures of the book's "Comparing and planning" page are what the command
prints today (its `passk diff` session is checked with every other session by
test_readme_commands.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from passk.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "book" / "using" / "compare.md").read_text(encoding="utf-8")
# the copy of tau-bench's run that ships (task, trial, reward): the same counts as the original
TAU_FILE = ROOT / "book/data/tau-bench/gpt-4o-airline-rewards.json"


def number(text: str) -> int:
    return int(text.replace(",", ""))


def test_readme_planning_figures_are_the_command_output(capsys):
    sentence = re.search(r"pilot, 80% power needs ([\d,]+) tasks × 2 runs \(([\d,]+) runs per "
                         r"version\) against ([\d,]+) × 4\s+\(([\d,]+)\) or ([\d,]+) × 8 "
                         r"\(([\d,]+)\)", README)
    assert sentence, "compare.md's tau-bench planning sentence is gone"
    shown = [number(x) for x in sentence.groups()]
    assert main(["plan", "--compare", "--delta", "0.05", "--k", "2", str(TAU_FILE),
                 "--runs", "2,4,8", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    expected = []
    for tasks, cost in zip(plan["tasks_needed"], plan["runs_per_version"]):
        expected += [tasks, cost]
    assert shown == expected
    # "the cheapest is 4 runs a task" (the proved comparison; 2 for the paired t alone)
    assert plan["runs"][min(range(3), key=lambda i: plan["runs_per_version"][i])] == 4
