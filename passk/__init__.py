"""passk: pass@k, pass^k and flakiness for AI agents.

The modules mirror the chapter's TypeScript companion (``examples/12-passk-flakiness/``):

========================  ===========================  ==============================================
chapter                   passk                        what
========================  ===========================  ==============================================
``src/passk.ts``          :mod:`passk.metrics`         closed forms, estimators, flakiness, intervals
``src/adapter.ts`` (ch5)  :mod:`passk.adapter`         ``Task``, ``RunResult``, ``HarnessAdapter``
``src/repeat-run.ts``     :mod:`passk.repeat_run`      run one task n times
``src/flaky-adapter.ts``  :mod:`passk.flaky_adapter`   the simulated on-call assistant
``src/stability.ts``      :mod:`passk.stability`       tiered repeats, the report, the dual gate
========================  ===========================  ==============================================


"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

from .adapter import HarnessAdapter, InfrastructureError, RunResult, Task, ToolCall
from .compare import PairedComparison, compare_pass_hat_k, plan_comparison
from .flaky_adapter import Grader, OnCallSimulator, demo_tasks
from .metrics import (
    CI_METHODS, ConfidenceInterval, bootstrap_pass_hat_k_ci, estimate_pass_at_k,
    estimate_pass_hat_k, estimate_pass_hat_k_variance, exact_bootstrap_pass_hat_k_ci, flakiness,
    pass_at_k, pass_hat_k, pass_hat_k_ci, pass_hat_k_lower_bound, runs_needed,
    unbiased_flakiness, wilson_ci,
)
# Imported after the submodule of the same name, so ``passk.repeat_run`` is the function.
from .repeat_run import RepeatRun, repeat_run, run_seed

# ``passk.stability`` is loaded on first use, so that ``python -m passk.stability``
# does not find it already imported (runpy warns about that).
_LAZY = {
    "stability": ["GateResult", "RepeatPolicy", "SuiteReport", "TaskReport", "evaluate_suite",
                  "reliability_gate", "suite_report"],
    "runner": ["run_suite", "SuiteRun"],
}
_MODULE_OF = {name: module for module, names in _LAZY.items() for name in names}
_SUBMODULES = {"adapter", "cli", "flaky_adapter", "io", "metrics", "protocol", "runner",
               "scenarios", "stability", "trajectory"}

__all__ = sorted([
    "HarnessAdapter", "InfrastructureError", "RunResult", "Task", "ToolCall", "Grader",
    "OnCallSimulator", "demo_tasks", "ConfidenceInterval", "bootstrap_pass_hat_k_ci",
    "estimate_pass_at_k", "estimate_pass_hat_k", "exact_bootstrap_pass_hat_k_ci", "flakiness",
    "pass_at_k", "pass_hat_k", "pass_hat_k_lower_bound", "runs_needed", "wilson_ci",
    "CI_METHODS", "pass_hat_k_ci", "estimate_pass_hat_k_variance", "unbiased_flakiness",
    "RepeatRun", "repeat_run", "run_seed", "PairedComparison", "compare_pass_hat_k",
    "plan_comparison", *_MODULE_OF,
])


def __getattr__(name: str) -> Any:
    if name in _MODULE_OF:
        return getattr(importlib.import_module(f".{_MODULE_OF[name]}", __name__), name)
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'passk' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])


if TYPE_CHECKING:  # for type checkers and IDEs; at run time these load on first use
    from . import stability
    from .runner import SuiteRun, run_suite
    from .stability import (
        GateResult, RepeatPolicy, SuiteReport, TaskReport, evaluate_suite, reliability_gate,
        suite_report,
    )
