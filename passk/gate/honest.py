"""The honest gate of page 6: criteria fixed before the measurement, "not met" when missed.

:class:`Criteria` are fixed before the measurement and fingerprinted into
the protocol. :func:`honest_gate` checks a measurement against the criteria
its protocol declared, so a bar lowered after the numbers came in does not
match the fingerprint and the gate refuses. When a bar is missed it says
"not met" with the measured figure beside the bar.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from passk.errors import BadInput
from passk.gate.bind import looser
from passk.results.protocol import Protocol

__all__ = ["Criteria", "HonestGateResult", "Measurement", "honest_gate"]


@dataclass(frozen=True)
class Criteria:
    """Release bars, fixed before the measurement: each metric must reach its minimum."""

    minimums: Mapping[str, float]

    def __post_init__(self) -> None:
        for name, bar in self.minimums.items():
            if not 0 <= bar <= 1:
                raise BadInput(f"bar for {name!r} ({bar!r}) must lie in [0, 1]")

    @property
    def fingerprint(self) -> str:
        """The bars' protocol fingerprint: two measurements compare only under equal bars."""
        return Protocol({"criteria": dict(self.minimums)}).fingerprint


@dataclass(frozen=True)
class Measurement:
    """Measured metrics, with the protocol (including the declared criteria) they ran under."""

    metrics: Mapping[str, float]
    protocol: Protocol


@dataclass(frozen=True)
class HonestGateResult:
    """:func:`honest_gate`'s verdict: passed, and every reason it did not.

    It displays itself as ``PASSED`` or ``REFUSED`` with one indented line per
    reason, wrapped at 75 columns (a Markdown list in Jupyter and the book).

    Examples
    --------
    >>> print(HonestGateResult(False, ("rate: measured 0.150, bar 0.750: not met",)))
    REFUSED
      - rate: measured 0.150, bar 0.750: not met
    """

    passed: bool
    reasons: tuple[str, ...]

    def verdict(self) -> str:
        """``"PASSED"`` or ``"REFUSED"``."""
        return "PASSED" if self.passed else "REFUSED"

    def __str__(self) -> str:
        return "\n".join([self.verdict()] + [
            textwrap.fill(r, 75, initial_indent="  - ", subsequent_indent="      ")
            for r in self.reasons])

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_markdown_(self) -> str:
        return "\n".join([f"**{self.verdict()}**", ""] + [f"- {r}" for r in self.reasons])


def honest_gate(criteria: Criteria, measurement: Measurement) -> HonestGateResult:
    """Check a measurement against the criteria declared before it was taken.

    The measurement's protocol declares its criteria either as a fingerprint
    (then any change is refused) or as the bars themselves, a mapping of
    minimums (then a bar may be raised, never lowered: the rule of
    :func:`passk.gate.bind.bind`, which ``passk gate`` applies to a run's k, bar and
    cap). It also fails when a metric is missing or not a number, or below its
    bar. Every reason gives the figure and the bar.

    Examples
    --------
    >>> bars = Criteria({"discovery_rate": 0.75})
    >>> m = Measurement({"discovery_rate": 0.15}, Protocol({"criteria": bars.fingerprint}))
    >>> honest_gate(bars, m).reasons
    ('discovery_rate: measured 0.150, bar 0.750: not met',)
    >>> declared = Measurement({"rate": 0.5}, Protocol({"criteria": {"rate": 0.4}}))
    >>> honest_gate(Criteria({"rate": 0.3}), declared).passed
    False
    """
    reasons: list[str] = []
    declared = measurement.protocol.settings.get("criteria")
    if isinstance(declared, Mapping):
        for name, bar in declared.items():
            asked = criteria.minimums.get(name)
            if asked is None or looser("bar", bar, asked):  # a minimum: higher is stricter
                reasons.append(f"{name}: bar {asked} would loosen the declared {bar}: a bar "
                               "cannot change after the numbers are in")
    elif declared != criteria.fingerprint:
        reasons.append(f"criteria {criteria.fingerprint} are not the ones declared before the "
                       f"measurement ({declared}): a bar cannot change after the numbers are in")
    for name, bar in criteria.minimums.items():
        value = measurement.metrics.get(name)
        if value is None or not isinstance(value, (int, float)) or math.isnan(value):
            reasons.append(f"{name}: not measured, bar {bar:.3f}: not met (no evidence)")
        elif value < bar:
            reasons.append(f"{name}: measured {value:.3f}, bar {bar:.3f}: not met")
    return HonestGateResult(not reasons, tuple(reasons))
