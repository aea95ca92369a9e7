"""Running a suite: ``run_suite``, its crash-safe log and resume, and the one scheduler
(:class:`~passk.run.schedule.Schedule`: curtailment and early stopping) that it, the pytest
plugin and Inspect's ``Curtailment`` drive."""

from __future__ import annotations

from passk._public import publish
from passk.run import runner
from passk.run.runner import SuiteRun, run_suite
from passk.run.schedule import Schedule, Stopping

__all__ = ["Schedule", "Stopping", "SuiteRun", "run_suite"]

# run/runner.py's public names say 'passk' (passk._public); published here, where the
# package imports the runner, as its last line would
publish(vars(runner))
