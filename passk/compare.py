"""The paired comparison, its planner and its simulation study (moved to :mod:`passk.stats`).

The code lives in :mod:`passk.stats.compare`, :mod:`passk.stats.power` and
:mod:`passk.stats.simulation`; this module re-exports every public name it
had, so ``from passk.compare import X`` keeps working.
"""

from __future__ import annotations

from passk.stats.compare import (
    FLOOR_LABEL,
    METHOD_LABELS,
    METHODS,
    VERDICTS,
    PairedComparison,
    PairedTest,
    compare_pass_hat_k,
    mean_of,
    paired_difference_test,
)
from passk.stats.power import (
    DEFAULT_CORRELATION,
    ComparisonPlan,
    pass_hat_k_sampling_variance,
    plan_comparison,
)
from passk.stats.simulation import (
    TaskPopulation,
    simulate_comparison,
    simulate_intervals,
    simulate_suites,
    task_population,
)

__all__ = [
    "DEFAULT_CORRELATION",
    "FLOOR_LABEL",
    "METHODS",
    "METHOD_LABELS",
    "VERDICTS",
    "ComparisonPlan",
    "PairedComparison",
    "PairedTest",
    "TaskPopulation",
    "compare_pass_hat_k",
    "mean_of",
    "paired_difference_test",
    "pass_hat_k_sampling_variance",
    "plan_comparison",
    "simulate_comparison",
    "simulate_intervals",
    "simulate_suites",
    "task_population",
]
