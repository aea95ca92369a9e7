"""The README's comparison and planning figures are what the commands print today."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from passk.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
TAU_FILE = ROOT.parent / "shared/data/tau-bench/gpt-4o-airline.json"

pytestmark = pytest.mark.skipif(not TAU_FILE.exists(), reason="tau-bench's run is not here")


def number(text: str) -> int:
    return int(text.replace(",", ""))


def test_readme_planning_figures_are_the_command_output(capsys):
    sentence = re.search(r"pilot, 80% power needs ([\d,]+) tasks × 2 runs \(([\d,]+) runs per "
                         r"version\) against ([\d,]+) × 4\s+\(([\d,]+)\) or ([\d,]+) × 8 "
                         r"\(([\d,]+)\)", README)
    assert sentence, "the README's tau-bench planning sentence is gone"
    shown = [number(x) for x in sentence.groups()]
    assert main(["plan", "--compare", "--delta", "0.05", "--k", "2", str(TAU_FILE),
                 "--runs", "2,4,8", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    expected = []
    for tasks, cost in zip(plan["tasks_needed"], plan["runs_per_version"]):
        expected += [tasks, cost]
    assert shown == expected
    assert plan["runs"][min(range(3), key=lambda i: plan["runs_per_version"][i])] == 2


def test_readme_diff_example_is_the_command_output(tmp_path, capsys):
    records = json.loads(TAU_FILE.read_text(encoding="utf-8"))
    paths = []
    for name, trials in (("first-half", (0, 1)), ("second-half", (2, 3))):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps({"task_id": str(r["task_id"]), "trial": r["trial"],
                                            "success": r["reward"] == 1}) + "\n"
                                for r in records if r["trial"] in trials))
        paths.append(str(path))
    block = README.split("$ passk diff first-half.jsonl second-half.jsonl --margin 0.05")[1]
    shown = block.split("\n...\n")[0].strip("\n").splitlines()[1:]
    code = main(["diff", *paths, "--margin", "0.05"])
    out = capsys.readouterr().out.splitlines()
    assert shown == out[: len(shown)] and len(shown) == 3
    assert f"$ echo $?\n{code}\n" in block
