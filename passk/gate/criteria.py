"""The gate's criteria are fixed before the runs: a looser request afterwards is refused.

:func:`bind_criteria` applies the criteria a protocol declared (a stricter
request is kept, a looser one refused); :func:`curtailment_refusal` refuses
criteria that a curtailed run's settle rule did not decide under.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from passk.criteria import DEFAULT_CRITERIA
from passk.errors import LoosenedCriteria
from passk.results.protocol import Protocol, _canonical

__all__ = [
    "CURTAILMENT_CRITERIA",
    "GATE_CRITERIA",
    "BoundCriteria",
    "LoosenedCriteria",
    "bind_criteria",
    "curtailment_refusal",
]


#: The gate's criteria a protocol may declare, with the direction that is stricter:
#: ``"higher"`` (a larger number is stricter), ``"lower"``, or an order from
#: loosest to strictest.
GATE_CRITERIA: dict[str, str | tuple[str, ...]] = {
    "k": "higher",                       # all of more runs must pass
    "min_overall_pass_hat_k": "higher",  # a higher bar
    "max_flakiness": "lower",            # a lower cap
    "gate_on": ("estimate", "lower-bound"),
    "confidence": "higher",              # a lower bound at higher confidence is lower
}


def _looser(name: str, declared: Any, requested: Any) -> bool:
    """Whether ``requested`` is looser than ``declared`` for the criterion ``name``."""
    direction = GATE_CRITERIA.get(name, "higher")
    if isinstance(direction, tuple):
        return direction.index(requested) < direction.index(declared)
    return requested < declared if direction == "higher" else requested > declared


@dataclass(frozen=True)
class BoundCriteria:
    """The criteria a gate applies: the declared ones, tightened where asked.

    Attributes
    ----------
    values : Mapping[str, Any]
        Each criterion's value in force.
    declared : Mapping[str, Any]
        What the protocol declared (empty when the results record no protocol).
    stricter : tuple of str
        One sentence per criterion tightened beyond the declared value.
    """

    values: Mapping[str, Any]
    declared: Mapping[str, Any]
    stricter: tuple[str, ...] = ()


def bind_criteria(protocol: Protocol | None, requested: Mapping[str, Any],
                  defaults: Mapping[str, Any]) -> BoundCriteria:
    """Apply a protocol's declared criteria: a looser request is refused, a stricter one kept.

    Criteria are fixed before measuring. For each name in :data:`GATE_CRITERIA`
    the value in force is the requested one (a value that is not ``None``)
    if the protocol declares nothing for it or if it is at least as strict;
    otherwise the declared value, or the default when neither is given.

    Parameters
    ----------
    protocol : Protocol or None
        The measurement's protocol; its settings may name the criteria.
    requested : Mapping[str, Any]
        What the user asked for after the runs; ``None`` for "not asked".
    defaults : Mapping[str, Any]
        Values used when neither is given.

    Returns
    -------
    BoundCriteria

    Raises
    ------
    LoosenedCriteria
        Naming the criterion, the declared value and the requested one.

    Examples
    --------
    >>> declared = Protocol({"k": 5, "min_overall_pass_hat_k": 0.7, "max_flakiness": 0.2})
    >>> bound = bind_criteria(declared, {"min_overall_pass_hat_k": 0.8}, {"gate_on": "estimate"})
    >>> bound.values["min_overall_pass_hat_k"], bound.values["k"], bound.stricter
    (0.8, 5, ('min_overall_pass_hat_k 0.8 is stricter than the declared 0.7',))
    >>> bind_criteria(declared, {"max_flakiness": 1.0}, {})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    passk.gate.criteria.LoosenedCriteria: max_flakiness 1.0 would loosen the declared 0.2: ...
    """
    settings = protocol.settings if protocol is not None else {}
    declared = {name: settings[name] for name in GATE_CRITERIA if settings.get(name) is not None}
    values: dict[str, Any] = dict(defaults)
    stricter: list[str] = []
    for name in GATE_CRITERIA:
        asked = requested.get(name)
        if name not in declared:
            if asked is not None:
                values[name] = asked
            continue
        values[name] = declared[name]
        if asked is None or asked == declared[name]:
            continue
        if _looser(name, declared[name], asked):
            raise LoosenedCriteria(
                f"{name} {asked} would loosen the declared {declared[name]}: criteria are fixed "
                f"before the runs (protocol {protocol.fingerprint if protocol else '?'})")
        values[name] = asked
        stricter.append(f"{name} {asked} is stricter than the declared {declared[name]}")
    return BoundCriteria(values, declared, tuple(stricter))


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
