"""Statistics beyond the chapter: the suite interval and the exact coverage of intervals.

:mod:`passk.stats.suite_interval` holds :func:`mean_pass_hat_k_ci` (the interval for a
suite's mean pass^k, proved at every level); :mod:`passk.stats.coverage` computes how often
an interval covers, exactly, by summing over the binomial.
"""

from passk.stats.coverage import exact_coverage, expected_width, identical_suite_coverage
from passk.stats.suite_interval import (
    SUITE_CI_METHODS,
    SUITE_MIN_TASKS,
    SuiteInterval,
    mean_pass_hat_k_ci,
)

__all__ = [
    "SUITE_CI_METHODS",
    "SUITE_MIN_TASKS",
    "SuiteInterval",
    "exact_coverage",
    "expected_width",
    "identical_suite_coverage",
    "mean_pass_hat_k_ci",
]
