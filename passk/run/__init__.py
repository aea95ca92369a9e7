"""Running a suite: ``run_suite``, its crash-safe log, resume and curtailment."""

from __future__ import annotations

from passk.run.runner import SuiteRun, run_suite

__all__ = ["SuiteRun", "run_suite"]
