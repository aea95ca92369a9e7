"""passk: pass@k, pass^k and flakiness for AI agents.

The first five modules mirror the chapter's TypeScript companion, which lives in
the chapter's own repository:

========================  ===========================  ==============================================
chapter                   passk                        what
========================  ===========================  ==============================================
``src/passk.ts``          :mod:`passk.metrics`         closed forms, estimators, flakiness, intervals
``src/adapter.ts`` (ch5)  :mod:`passk.adapter`         ``Task``, ``RunResult``, ``HarnessAdapter``
``src/repeat-run.ts``     :mod:`passk.repeats`         ``repeat_run``: one task n times
``src/flaky-adapter.ts``  :mod:`passk.flaky_adapter`   the simulated on-call assistant
``src/stability.ts``      :mod:`passk.stability`       tiered repeats, the report, the dual gate
========================  ===========================  ==============================================

Everything below is imported on first use, so ``import passk`` and the
``passk`` command start fast: numpy and scipy load only when a computation
needs them. Every public module is reachable as ``passk.NAME``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: Each public name, and the module that owns it.
_OWNER = {
    # the chapter's modules
    "ConfidenceInterval": "metrics", "CI_METHODS": "metrics", "pass_at_k": "metrics",
    "pass_hat_k": "metrics", "estimate_pass_at_k": "metrics",
    "estimate_pass_hat_k": "metrics", "estimate_pass_hat_k_variance": "metrics",
    "flakiness": "metrics", "unbiased_flakiness": "metrics", "pass_hat_k_ci": "metrics",
    "mean_pass_hat_k_ci": "metrics", "SuiteInterval": "metrics", "SUITE_CI_METHODS": "metrics",
    "bootstrap_pass_hat_k_ci": "metrics",
    "exact_bootstrap_pass_hat_k_ci": "metrics", "wilson_ci": "metrics",
    "pass_hat_k_lower_bound": "metrics", "runs_needed": "metrics",
    "HarnessAdapter": "adapter", "InfrastructureError": "adapter", "RunResult": "adapter",
    "Task": "adapter", "ToolCall": "adapter",
    "RepeatRun": "repeats", "repeat_run": "repeats", "run_seed": "repeats",
    "Grader": "flaky_adapter", "OnCallSimulator": "flaky_adapter",
    "demo_tasks": "flaky_adapter",
    "GateResult": "stability", "RepeatPolicy": "stability", "SuiteReport": "stability",
    "TaskReport": "stability", "classify": "stability", "evaluate_suite": "stability",
    "reliability_gate": "stability", "suite_report": "stability",
    # beyond the chapter
    "run_suite": "runner", "SuiteRun": "runner",
    "PairedComparison": "compare", "compare_pass_hat_k": "compare",
    "plan_comparison": "compare",
}

#: Every public module, reachable as ``passk.NAME``.
_SUBMODULES = frozenset({
    "adapter", "cli", "compare", "coverage", "diff", "flaky_adapter", "formats", "io", "options",
    "metrics", "planning", "plots", "protocol", "pytest_plugin", "repeats", "reporting",
    "runner", "scenarios", "stability", "tables", "trajectory",
})

__all__ = [  # noqa: RUF022 (grouped by the module that owns each name, as the map above)
    # metrics
    "ConfidenceInterval", "CI_METHODS", "pass_at_k", "pass_hat_k", "estimate_pass_at_k",
    "estimate_pass_hat_k", "estimate_pass_hat_k_variance", "flakiness", "unbiased_flakiness",
    "pass_hat_k_ci", "mean_pass_hat_k_ci", "SuiteInterval", "SUITE_CI_METHODS",
    "bootstrap_pass_hat_k_ci",
    "exact_bootstrap_pass_hat_k_ci", "wilson_ci", "pass_hat_k_lower_bound", "runs_needed",
    # adapter
    "HarnessAdapter", "InfrastructureError", "RunResult", "Task", "ToolCall",
    # repeats
    "RepeatRun", "repeat_run", "run_seed",
    # flaky_adapter
    "Grader", "OnCallSimulator", "demo_tasks",
    # stability
    "GateResult", "RepeatPolicy", "SuiteReport", "TaskReport", "classify", "evaluate_suite",
    "reliability_gate", "suite_report",
    # runner, compare
    "run_suite", "SuiteRun", "PairedComparison", "compare_pass_hat_k", "plan_comparison",
]


def __getattr__(name: str) -> Any:
    if name in _OWNER:
        value = getattr(importlib.import_module(f".{_OWNER[name]}", __name__), name)
        globals()[name] = value  # the next lookup is a plain attribute
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'passk' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__, *_SUBMODULES])


if TYPE_CHECKING:  # for type checkers and IDEs; at run time these load on first use
    from .adapter import *
    from .compare import PairedComparison, compare_pass_hat_k, plan_comparison
    from .flaky_adapter import Grader, OnCallSimulator, demo_tasks
    from .metrics import *
    from .repeats import *
    from .runner import SuiteRun, run_suite
    from .stability import *
