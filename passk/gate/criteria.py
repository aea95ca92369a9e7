"""A curtailed or stopped run decides only under the gate it served.

:func:`curtailment_refusal` refuses criteria that a curtailed run's settle rule
(or an early stop's looks) did not decide under. Binding the criteria in force
(the options, the protocol, the policy) is :func:`passk.gate.bind.bind`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from passk.criteria import DEFAULT_CRITERIA
from passk.results.protocol import Protocol, _canonical

__all__ = [
    "CURTAILMENT_CRITERIA",
    "curtailment_refusal",
]


#: The criteria a curtailed run's settle rule used, with the values a protocol that
#: does not name them was run under (``passk run`` curtailed on the estimate at 95%
#: before it recorded either, and with no minimum of runs unless it says one).
#: How the verdict line names a suite stopped early (``Schedule.stop_note``).
STOPPED_EARLY = "stopped early at look"

CURTAILMENT_CRITERIA: dict[str, Any] = {
    "k": None, "min_overall_pass_hat_k": None, "max_flakiness": None,
    "gate_on": DEFAULT_CRITERIA.on, "confidence": DEFAULT_CRITERIA.confidence,
    "min_runs": DEFAULT_CRITERIA.min_runs,
}


def _planned_runs(settings: Mapping[str, Any], task_ids: Any, risks: Any
                  ) -> tuple[list[int], list[int] | None] | None:
    """Each task's planned runs (at most: a previously flaky task may be planned more,
    and more planned runs only add completions) and k, from a protocol; None when it
    does not say."""
    tests = settings.get("tests")
    if isinstance(tests, Mapping):  # the pytest plugin's: runs and k per test
        try:
            return ([int(tests[t]["runs"]) for t in task_ids],
                    [int(tests[t]["k"]) for t in task_ids])
        except (KeyError, TypeError, ValueError):
            return None
    by_risk, default = settings.get("runs_by_risk") or {}, settings.get("default_runs")
    if not isinstance(default, int) or not isinstance(by_risk, Mapping):
        return None
    flaky = settings.get("previously_flaky_runs")
    extra = flaky if isinstance(flaky, int) else 0
    return [max(int(by_risk.get(r, default)), extra) for r in risks], None


def curtailment_refusal(protocol: Protocol | None, in_force: Mapping[str, Any],
                        results: Any = None) -> str | None:
    """Why a gate may not decide on a curtailed (or early-stopped) run's results, or None
    when it may.

    Curtailed repetition stops a task once no outcome of its remaining runs can
    change the decision *of the gate it served*: the criteria its protocol
    declares (k, bar, cap, what the gate averages, the lower bounds' confidence,
    the minimum of runs). Another gate, even a stricter one, could decide
    differently on the runs it did not make, so it is refused, unless the runs
    made decide it exactly: with each task's planned runs known (from the
    protocol) and the runs not made open, the settle rule's suite outlook under
    the asked gate is 'passed' or 'blocked' and every task's flaky verdict is
    known (see :mod:`passk.gate.curtailment`).

    Parameters
    ----------
    protocol : Protocol or None
        The results' protocol; only ``stopping: 'curtailed'`` matters.
    in_force : Mapping[str, Any]
        The criteria the gate would apply (``None`` for a criterion: as declared).
    results : passk.results.Results, optional
        Its counts, for the exact decision; without them any change is refused.

    Returns
    -------
    str or None
        One line naming both gates.

    Examples
    --------
    >>> p = Protocol({"stopping": "curtailed", "k": 2, "min_overall_pass_hat_k": 0.5,
    ...               "max_flakiness": 0.2, "gate_on": "estimate", "confidence": 0.95})
    >>> curtailment_refusal(p, {"gate_on": "estimate", "k": 2}) is None
    True
    >>> print(curtailment_refusal(p, {"gate_on": "lower-bound"}))  # doctest: +ELLIPSIS
    the runs were curtailed for the gate k 2, bar 0.5 on the estimate, flakiness cap 0.2; ...
    """
    if protocol is None:
        return None
    settings = protocol.settings
    # a run stopped early at a look (its stop verified from its records, so on the
    # verdict line: passk.run.runner.results_of_stopped_log): the looks' proof is for
    # the gate it declared, and no other gate may decide on the runs it did not make
    stopped = bool(settings.get("stop_early")) and results is not None and any(
        o.startswith(STOPPED_EARLY) for o in getattr(results, "overrides", ()))
    if settings.get("stopping") != "curtailed" and not stopped:
        return None
    mode = in_force.get("mode")
    if mode not in (None, "chapter"):  # issue 38: the settle rule and the looks that stop
        # with a pass serve the chapter's rule only (passk.gate.curtailment, passk.run.schedule)
        if settings.get("stopping") == "curtailed":
            from passk.gate.curtailment import curtailment_mode_refusal
            return (f"the runs were curtailed (protocol {protocol.fingerprint}); "
                    f"{curtailment_mode_refusal(str(mode))}")
        if any(o.startswith(STOPPED_EARLY) and " clears the bar " in o
               for o in getattr(results, "overrides", ())):
            return (f"the run stopped early with a pass (protocol {protocol.fingerprint}), a "
                    f"stop the gate mode {mode!r} does not make: its pass is decided at the "
                    "last look, on every planned run, so that its false pass stays at the "
                    "stated level; gate in mode 'chapter', or rerun in this mode")
    served = {name: settings.get(name, default) if settings.get(name) is not None else default
              for name, default in CURTAILMENT_CRITERIA.items()}
    asked = {name: served[name] if in_force.get(name) is None else in_force[name]
             for name in CURTAILMENT_CRITERIA}
    if _canonical(asked) == _canonical(served):
        return None
    from passk.gate.curtailment import GateSettings

    def gate(values: Mapping[str, Any]) -> GateSettings:
        k = values["k"] if values["k"] is not None else 1
        return GateSettings(int(k), float(values["min_overall_pass_hat_k"] or 0.0),
                            float(values["max_flakiness"] if values["max_flakiness"] is not None
                                  else 1.0), str(values["gate_on"]),
                            float(values["confidence"]), int(values["min_runs"]))

    new = gate(asked)
    if stopped:
        return (f"the run stopped early for the gate {gate(served).describe()}; the gate "
                f"asked for, {new.describe()}, could decide differently on the runs it did "
                f"not make (protocol {protocol.fingerprint}): gate under the protocol's "
                "criteria, or rerun without --stop-early")
    if results is not None and _decided_exactly(settings, results, new,
                                                per_task_k=in_force.get("k") is None):
        return None
    return (f"the runs were curtailed for the gate {gate(served).describe()}; the gate "
            f"asked for, {new.describe()}, could decide differently on the runs curtailment "
            f"did not make (protocol {protocol.fingerprint}): gate under the protocol's "
            "criteria, or rerun with fixed repetition")


def _decided_exactly(settings: Mapping[str, Any], results: Any, gate: Any, *,
                     per_task_k: bool) -> bool:
    """Whether every completion of the runs not made gives ``gate`` the same verdict and
    flaky tasks, so that the gate on the runs made is fixed repetition's."""
    from passk.gate.curtailment import suite_outlook, task_outlook

    listed = settings.get("tasks")
    if isinstance(listed, list) and set(map(str, listed)) - set(results.task_ids):
        return False  # a planned task with no runs at all is not in the results
    plan = _planned_runs(settings, results.task_ids, results.risks)
    if plan is None:
        return False
    planned, ks = plan
    outlooks = []
    for i, n in enumerate(planned):
        c, m = int(results.successes[i]), int(results.totals[i])
        remaining = max(n - m, 0)  # left-out runs count as open: more completions, not fewer
        o = task_outlook(c, m - c, remaining, k=ks[i] if ks and per_task_k else gate.k,
                         max_flakiness=gate.max_flakiness, min_runs=gate.min_runs, on=gate.on,
                         confidence=gate.confidence)
        if remaining and o.flaky is None:
            return False
        outlooks.append(o)
    return suite_outlook(outlooks, gate.min_overall_pass_hat_k) != "open"
