"""Running a suite: ``run_suite``, its crash-safe log, resume and curtailment."""

from __future__ import annotations

from passk._public import publish
from passk.run import runner
from passk.run.runner import SuiteRun, run_suite

__all__ = ["SuiteRun", "run_suite"]

# run/runner.py's public names say 'passk' (passk._public); published here, where the
# package imports the runner, as its last line would
publish(vars(runner))
