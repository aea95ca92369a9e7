"""``passk gate --baseline OLD`` says what the comparison found, whether the gate passed or
blocked: a line after the verdict (text and Markdown) and a ``baseline`` key in the JSON, with
the comparison's figures, the baseline's path and sha256. The figures are the judge's
(:func:`passk.gate.judge.baseline_found`); the reference is ``passk diff`` on the same files.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
from pathlib import Path

import pytest

from passk import api
from passk.cli.commands import main


def passk(*argv: object) -> tuple[int, str, str]:
    """``passk ARGV`` in process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in argv])
    return status, out.getvalue(), err.getvalue()


# --- gate --baseline says what the comparison found, passed or blocked ---------------------

def _runs(path: Path, fails: dict[str, set[int]], tasks: str = "abcdefgh", runs: int = 8
          ) -> Path:
    path.write_text("".join(
        json.dumps({"task_id": t, "trial": i, "success": i not in fails.get(t, set())}) + "\n"
        for t in tasks for i in range(runs)), encoding="utf-8")
    return path


@pytest.fixture
def versions(tmp_path, monkeypatch):
    """An old version and new ones: the same, a suite-wide drop, one task broken, one task
    dropped from the new results."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    old = _runs(tmp_path / "old.jsonl", {"g": {0, 4}, "h": {0, 4}})
    return {
        "old": old,
        "same": _runs(tmp_path / "same.jsonl", {"h": {0, 3, 6}}),
        "drop": _runs(tmp_path / "drop.jsonl", {t: {1, 2, 3, 5, 6, 7} for t in "cdefgh"}),
        "broken": _runs(tmp_path / "broken.jsonl", {"a": set(range(8))}, runs=8),
        "short": _runs(tmp_path / "short.jsonl", {}, tasks="abcdefg"),
    }


CASES = [  # (new, options, gate exit, decision)
    ("same", [], 0, "no regression shown"),
    ("drop", [], 1, "worse"),
    ("broken", [], 1, "worse"),
    ("same", ["--margin", "0.5"], 0, "non-inferior"),
    ("same", ["--margin", "0.01"], 1, "inconclusive"),
    ("short", [], 1, "no regression shown"),
]
LOOSE = ["--k", "2", "--max-flakiness", "1", "--min-overall", "0"]


@pytest.mark.parametrize(("new", "options", "code", "decision"), CASES)
def test_gate_baseline_says_what_the_comparison_found(versions, new, options, code,
                                                      decision):
    """In JSON, text and Markdown, whether the gate passed or blocked; the figures are the
    judge's, the same as ``passk diff``'s on the same files (the reference)."""
    argv = ["gate", versions[new], "--baseline", versions["old"], *LOOSE, *options]
    status, out, _ = passk(*argv, "--json")
    assert status == code
    found = json.loads(out)["gate"]["baseline"]
    _, diffed, _ = passk("diff", versions["old"], versions[new], "--k", "2", *options,
                         "--json", "--accept-incomplete")
    d = json.loads(diffed)
    assert found["decision"] == d["decision"] == decision
    assert found["suite"] == d["suite"] and found["regressed"] == d["regressed"]
    assert found["path"] == str(versions["old"]) and found["k"] == 2
    assert found["sha256"] == hashlib.sha256(versions["old"].read_bytes()).hexdigest()
    assert found["files"] == [{"path": found["path"], "sha256": found["sha256"]}]
    assert bool(found["gaps"]) == (new == "short")
    s = found["suite"]
    words = {"no regression shown": "no regression shown", "worse": "a regression is shown",
             "non-inferior": "non-inferior within the margin 0.5",
             "inconclusive": "non-inferiority within the margin 0.01 not shown"}[decision]
    for markdown in (False, True):
        status, out, _ = passk(*argv, *(["--markdown"] if markdown else []))
        lines = out.splitlines()
        at = next(i for i, line in enumerate(lines) if "gate: " in line)
        line = lines[at + (2 if markdown else 1)]
        assert status == code and ("PASSED" if code == 0 else "BLOCKED") in lines[at]
        assert line.startswith(f"baseline {versions['old']}: mean pass^2 change ")
        assert (f"change {s['delta']:+.3f}, 95% interval [{s['ci_low']:+.3f}, "
                f"{s['ci_high']:+.3f}]") in line
        assert words in line
        if new == "broken":
            assert "1 task regressed beyond repeat noise (a)" in line
        if new == "short":
            assert "1 baseline gap" in line


def test_gate_without_baseline_has_a_null_baseline_and_no_line(versions):
    status, out, _ = passk("gate", versions["same"], *LOOSE, "--json")
    assert status == 0 and json.loads(out)["gate"]["baseline"] is None
    _, text, _ = passk("gate", versions["same"], *LOOSE)
    assert "baseline" not in text


def test_the_api_and_the_verdicts_own_rendering_carry_the_baseline(versions):
    fr = api.gate(str(versions["drop"]), str(versions["old"]),
                  asked={"k": 2, "cap": 1.0, "bar": 0.0})
    assert not fr.gate.passed and fr.gate.baseline is not None
    assert fr.gate.baseline["decision"] == "worse"
    shown = fr.gate.describe().splitlines()
    assert shown[0] == fr.gate.verdict() and shown[1].startswith("baseline ")
    assert "a regression is shown" in shown[1]
    assert fr.to_dict()["gate"]["baseline"] == dict(fr.gate.baseline)


def test_the_html_page_says_what_the_comparison_found(versions):
    import html
    import re

    page = versions["old"].parent / "page.html"
    status, _, _ = passk("gate", versions["drop"], "--baseline", versions["old"], *LOOSE,
                         "--html", page)
    _, js, _ = passk("gate", versions["drop"], "--baseline", versions["old"], *LOOSE, "--json")
    found = json.loads(js)["gate"]["baseline"]
    shown = re.search(r'<p id="baseline">(.*?)</p>', page.read_text(encoding="utf-8"))
    assert status == 1 and shown is not None
    text = html.unescape(shown.group(1))
    assert text.startswith(f"baseline {versions['old']}: mean pass^2 change "
                           f"{found['suite']['delta']:+.3f}")
    assert "a regression is shown" in text
    status, _, _ = passk("gate", versions["same"], *LOOSE, "--html", page)
    assert status == 0 and 'id="baseline"' not in page.read_text(encoding="utf-8")
