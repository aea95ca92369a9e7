"""The pytest plugin's ``--passk-stop-early LOOKS``: the session runs its repetitions stage by
stage and stops once the suite's look decides, through the one Schedule; the oracle is
:func:`passk.stats.sequential.sequential_decision` on the outcomes the first stage made."""

from __future__ import annotations

import json

from passk import stability
from passk.gate.judge import judge
from passk.integrations.pytest_plugin import EXIT_GATE_BLOCKED
from passk.results.counts import Run, results_from_runs
from passk.run.schedule import Schedule
from passk.stats.sequential import sequential_decision

pytest_plugins = ["pytester"]

# numpy's and scipy's extension modules cannot load twice in one process, and pytester
# unloads what an inner session imported: the plugin's paths run once here, outside one
_warm = Schedule({"a": 4, "b": 4}, stopping="looks:2")
stability.format_table(stability.suite_report(["warm", "up"], [1, 2], [2, 2], k=[1, 2]))
judge(results_from_runs([Run("a", True, 0)]), stability.DEFAULT_CRITERIA)
QUIET = ("-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest")

SUITE = """
import pytest

@pytest.mark.parametrize("i", range(60))
@pytest.mark.passk(runs=8, k={k})
def test_task(i, passk_seed):
    assert {ok}

def test_plain():
    pass
"""


def test_a_good_session_stops_at_its_first_look_and_passes(pytester):
    pytester.makepyfile(test_suite=SUITE.format(k=1, ok="True"))
    log = pytester.path / "runs.jsonl"
    result = pytester.runpytest(*QUIET, "--passk-stop-early", "3",
                                "--passk-max-flakiness", "1", "--passk-log", str(log))
    # the first look comes after one run of each of the 60 tests (k = 1): all passed
    assert sequential_decision([1] * 60, 1, 1, 0.7, look=1, looks=3).decision == "stop-pass"
    result.assert_outcomes(passed=60 + 1, skipped=60 * 7)
    assert result.ret == 0
    out = result.stdout.str()
    assert "gate: PASSED (with: stopped early at look 1 of 3: the 98.33% proved" in out
    assert "(60 of 480 planned runs counted))" in out
    assert "420 repetitions not run" in out
    header = json.loads(log.read_text().splitlines()[0])
    assert header["protocol"]["settings"]["stop_early"]["looks"] == 3


def test_a_bad_session_stops_at_its_first_look_and_blocks(pytester):
    pytester.makepyfile(test_suite=SUITE.format(k=2, ok="False"))
    result = pytester.runpytest(*QUIET, "--passk-stop-early", "2")
    assert sequential_decision([0] * 60, 2, 2, 0.7, look=1, looks=2).decision == "stop-fail"
    result.assert_outcomes(passed=1, failed=120, skipped=60 * 6)
    assert result.ret == EXIT_GATE_BLOCKED
    assert "gate: BLOCKED (with: stopped early at look 1 of 2" in result.stdout.str()


def test_stop_early_and_curtailment_together_are_a_usage_error(pytester):
    pytester.makepyfile(test_suite=SUITE.format(k=1, ok="True"))
    result = pytester.runpytest(*QUIET, "--passk-stop-early", "3",
                                "--passk-policy", "curtailed")
    assert result.ret == 4  # pytest's usage error
    assert "cannot be combined" in result.stderr.str()
