"""The planning prose of the book's "Comparing and planning" page says what the command
prints today (its sessions are checked line by line with every other session by
test_readme_commands.py)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from passk.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "book" / "using" / "compare.md").read_text(encoding="utf-8")
# the copy of tau-bench's run that ships (task, trial, reward): the same counts as the original
TAU_FILE = ROOT / "book/data/tau-bench/gpt-4o-airline-rewards.json"


def number(text: str) -> int:
    return int(text.replace(",", ""))


def test_the_planning_prose_says_what_the_command_prints(capsys):
    """The page's plan session is checked line by line with every other session
    (test_readme_commands.py); its prose is checked here against the command's JSON:
    "a few runs a task are the cheapest" (neither 2 nor more than 8 of the default grid),
    and "beyond eight the runs buy little" (each step of the grid past 8 saves under a fifth
    of the tasks, where going from 2 to 4 saves more than half)."""
    session = ("$ passk plan --compare --delta 0.05 --k 2 "
               "book/data/tau-bench/gpt-4o-airline-rewards.json")
    assert session in README, "compare.md's tau-bench plan session is gone"
    assert "A few runs a task are the cheapest" in README
    assert main(["plan", "--compare", "--delta", "0.05", "--k", "2", str(TAU_FILE),
                 "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    runs, tasks, cost = plan["runs"], plan["tasks_needed"], plan["runs_per_version"]
    cheapest = runs[min(range(len(runs)), key=cost.__getitem__)]
    assert 2 < cheapest <= 8, (cheapest, runs, cost)
    need = dict(zip(runs, tasks))
    assert need[4] < 0.5 * need[2]
    assert all(need[b] > 0.8 * need[a] for a, b in itertools.pairwise(runs) if a >= 8)
