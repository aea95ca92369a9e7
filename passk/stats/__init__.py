"""Statistics beyond the chapter: the suite interval and the exact coverage of intervals.

:mod:`passk.stats.suite_interval` holds :func:`mean_pass_hat_k_ci` (the interval for a
suite's mean pass^k, proved at every level); :mod:`passk.stats.coverage` computes how often
an interval covers, exactly, by summing over the binomial.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from passk.stats.coverage import exact_coverage, expected_width, identical_suite_coverage
    from passk.stats.suite_interval import (
        SUITE_CI_METHODS,
        SUITE_MIN_TASKS,
        SuiteInterval,
        mean_pass_hat_k_ci,
    )

# Loaded when first used (PEP 562): importing any passk.stats module runs this file, and
# passk.stats.coverage imports scipy.stats (about 0.8 s), which passk report and gate never need.
_HOME = {"exact_coverage": "coverage", "expected_width": "coverage",
         "identical_suite_coverage": "coverage", "SUITE_CI_METHODS": "suite_interval",
         "SUITE_MIN_TASKS": "suite_interval", "SuiteInterval": "suite_interval",
         "mean_pass_hat_k_ci": "suite_interval"}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        return getattr(import_module(f"passk.stats.{_HOME[name]}"), name)
    raise AttributeError(f"module 'passk.stats' has no attribute {name!r}")


__all__ = [
    "SUITE_CI_METHODS",
    "SUITE_MIN_TASKS",
    "SuiteInterval",
    "exact_coverage",
    "expected_width",
    "identical_suite_coverage",
    "mean_pass_hat_k_ci",
]
