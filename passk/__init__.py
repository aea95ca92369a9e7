"""passk: pass@k, pass^k and flakiness for AI agents.

The first five modules mirror the chapter's TypeScript companion, which lives in
the chapter's own repository:

========================  ==========================  ==============================================
chapter                   passk                       what
========================  ==========================  ==============================================
``src/passk.ts``          :mod:`passk.metrics`        closed forms, estimators, flakiness, intervals
``src/adapter.ts`` (ch5)  :mod:`passk.adapter`        ``Task``, ``RunResult``, ``HarnessAdapter``
``src/repeat-run.ts``     :mod:`passk.repeats`        ``repeat_run``: one task n times
``src/flaky-adapter.ts``  :mod:`passk.flaky_adapter`  the simulated on-call assistant
``src/stability.ts``      :mod:`passk.stability`      tiered repeats, the report, the dual gate
========================  ==========================  ==============================================

Beyond the chapter, the package is layered, each folder one step of a command's
single pass down (``passk/CONTRIBUTING`` has the diagram)::

    cli, integrations     parse arguments (or pytest's / Inspect's hooks)
    run                   run a suite: run_suite, its log, resume, curtailment
    analysis, book        the report, the plan, the diff; the book's figures
    gate                  criteria, protocol, curtailment, decide: the one verdict
    results               Results with where they came from; one reader per format
    stats                 the suite interval, exact coverage, comparison and power
    render                text: cells, columns, Markdown, escaping what files say

No layer imports a higher one (import-linter's contracts in ``pyproject.toml``).
Everything is imported on first use, so ``import passk`` and the ``passk``
command start fast: numpy and scipy load only when a computation needs them.
Each module has one path, its file's: ``passk.results.read``, ``passk.analysis.report``,
``passk.run.runner``; no alias finds a module under another name.

``__all__`` is the curated surface, and each of its classes and functions names the path
users import it from, ``passk`` (``passk.Results.__module__ == 'passk'``, as httpx's
objects say ``httpx``): reprs, tracebacks and pickles say ``passk.Results``, whatever was
imported first. The module that defines each sets it, on its last line
(:func:`passk._public.publish`, from :data:`_OWNER`); everything else keeps its
module's path, the one the README and the book import it from.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Each public name, and the module that owns it.
_OWNER = {
    # the chapter's modules
    "ConfidenceInterval": "metrics", "CI_METHODS": "metrics", "pass_at_k": "metrics",
    "pass_hat_k": "metrics", "estimate_pass_at_k": "metrics",
    "estimate_pass_hat_k": "metrics", "estimate_pass_hat_k_variance": "metrics",
    "flakiness": "metrics", "unbiased_flakiness": "metrics", "pass_hat_k_ci": "metrics",
    "mean_pass_hat_k_ci": "stats.suite_interval", "SuiteInterval": "stats.suite_interval",
    "SUITE_CI_METHODS": "stats.suite_interval",
    "bootstrap_pass_hat_k_ci": "metrics",
    "exact_bootstrap_pass_hat_k_ci": "metrics", "wilson_ci": "metrics",
    "pass_hat_k_lower_bound": "metrics", "runs_needed": "metrics",
    "HarnessAdapter": "adapter", "InfrastructureError": "adapter", "RunResult": "adapter",
    "Task": "adapter", "ToolCall": "adapter",
    "RepeatRun": "repeats", "repeat_run": "repeats", "run_seed": "repeats",
    "Grader": "flaky_adapter", "OnCallSimulator": "flaky_adapter",
    "demo_tasks": "flaky_adapter",
    "GateResult": "stability", "RepeatPolicy": "stability", "SuiteReport": "stability",
    "TaskReport": "stability", "classify": "stability", "evaluate_suite": "run.evaluate",
    "judged_report": "run.evaluate",
    "reliability_gate": "stability", "suite_report": "stability",
    # beyond the chapter
    "run_suite": "run.runner", "SuiteRun": "run.runner", "judge": "gate.judge",
    "PairedComparison": "stats.compare", "compare_pass_hat_k": "stats.compare",
    "plan_comparison": "stats.power",
    "Results": "results.counts", "read_results": "results.read",
    # the criteria, the policy and the one binding; the error family
    "GateCriteria": "criteria", "Policy": "gate.policy", "load_policy": "gate.policy",
    "policy_in_force": "gate.policy", "bind": "gate.bind", "InForce": "gate.bind",
    "PasskError": "errors",
}

#: Every public module and package, reachable as ``passk.NAME``.
_SUBMODULES = frozenset({
    "adapter", "analysis", "api", "book", "cli", "errors", "flaky_adapter", "gate",
    "integrations",
    "metrics", "render", "repeats", "results", "run", "stability", "stats",
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
    # runner, the judge, compare
    "judge", "judged_report", "run_suite", "SuiteRun", "PairedComparison", "compare_pass_hat_k",
    "plan_comparison",
    # results
    "Results", "read_results",
    # the criteria, the policy and the one binding (passk.api is the files' API); errors
    "GateCriteria", "Policy", "load_policy", "policy_in_force", "bind", "InForce",
    "PasskError",
]


def __getattr__(name: str) -> Any:
    if name == "__version__":  # the distribution's (passk._version), read on first use
        from passk._version import version

        globals()["__version__"] = value = version()
        return value
    if name in _OWNER:
        value = getattr(importlib.import_module(f"{__name__}.{_OWNER[name]}"), name)
        globals()[name] = value  # the next lookup is a plain attribute
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'passk' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__, *_SUBMODULES])


if TYPE_CHECKING:  # for type checkers and IDEs; at run time these load on first use
    __version__: str
    from passk.adapter import *
    from passk.criteria import GateCriteria
    from passk.errors import PasskError
    from passk.flaky_adapter import Grader, OnCallSimulator, demo_tasks
    from passk.gate.bind import InForce, bind
    from passk.gate.judge import judge
    from passk.gate.policy import Policy, load_policy, policy_in_force
    from passk.metrics import *
    from passk.repeats import *
    from passk.results.counts import Results
    from passk.results.read import read_results
    from passk.run.evaluate import evaluate_suite, judged_report
    from passk.run.runner import SuiteRun, run_suite
    from passk.stability import *
    from passk.stats.compare import PairedComparison, compare_pass_hat_k
    from passk.stats.power import plan_comparison
    from passk.stats.suite_interval import SUITE_CI_METHODS, SuiteInterval, mean_pass_hat_k_ci
