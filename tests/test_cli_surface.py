"""The command's surface as a newcomer meets it: ``--version``, and a suggestion for a
mistyped command or option (argparse's own exit 2 and usage line, with the nearest name)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import passk


def _passk(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "passk", *argv], capture_output=True,
                          text=True, check=False)


def test_version_prints_the_package_version():
    done = _passk("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"passk {passk.__version__}"


@pytest.mark.parametrize(("argv", "suggested"), [
    (["gat", "x.jsonl"], "did you mean gate?"),
    (["reprot", "x.jsonl"], "did you mean report?"),
    (["gate", "x.jsonl", "--max-flakyness", "0.3"], "did you mean --max-flakiness?"),
    (["report", "x.jsonl", "--confidance", "0.9"], "did you mean --confidence?"),
])
def test_a_typo_gets_the_nearest_name(argv, suggested):
    done = _passk(*argv)
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("passk") and "error:" in last and last.endswith(f"({suggested})")


def test_no_suggestion_when_nothing_is_near():
    done = _passk("gate", "x.jsonl", "--zzzzzz")
    assert done.returncode == 2 and "did you mean" not in done.stderr
