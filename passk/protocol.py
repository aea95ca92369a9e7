"""Results carry their protocol; gates say "not met" and cannot be relaxed afterwards.

A pass^k number is a measurement under a protocol: the budget, k, the repeat
policy, the temperature, the scenario split. Change any of them and the old
numbers no longer compare. :class:`Protocol` records those settings with a
fingerprint; :func:`protocol_differences` names what differs, and
:func:`require_same_protocol` refuses to compare across a change.

:class:`Criteria` are fixed before the measurement and fingerprinted into
the protocol. :func:`honest_gate` checks a measurement against the criteria
its protocol declared, so a bar lowered after the numbers came in does not
match the fingerprint and the gate refuses. When a bar is missed it says
"not met" with the measured figure beside the bar.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Protocol", "ProtocolMismatch", "protocol_differences", "require_same_protocol",
           "Criteria", "Measurement", "HonestGateResult", "honest_gate"]


def _canonical(settings: Mapping[str, Any]) -> str:
    return json.dumps(settings, sort_keys=True, separators=(",", ":"), default=str)


@dataclass(frozen=True)
class Protocol:
    """The settings that define a measurement, and their fingerprint.

    Examples
    --------
    >>> a = Protocol({"k": 5, "max_time_seconds": 90})
    >>> b = Protocol({"k": 5, "max_time_seconds": 300})
    >>> a.fingerprint == b.fingerprint
    False
    >>> protocol_differences(a, b)
    ['max_time_seconds: 90 != 300']
    """

    settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256(_canonical(self.settings).encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        return {"settings": json.loads(_canonical(self.settings)), "fingerprint": self.fingerprint}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Protocol":
        """Read back :meth:`to_dict`; a fingerprint that does not match its settings is refused."""
        protocol = cls(dict(data.get("settings", {})))
        if "fingerprint" in data and data["fingerprint"] != protocol.fingerprint:
            raise ValueError(f"protocol fingerprint {data['fingerprint']!r} does not match its "
                             f"settings (expected {protocol.fingerprint!r}): edited by hand?")
        return protocol


def _flatten(settings: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested settings as ``{"adapter.temperature": 0.7, ...}``, so a difference names its leaf."""
    flat: dict[str, Any] = {}
    for key, value in settings.items():
        if isinstance(value, Mapping):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


class ProtocolMismatch(ValueError):
    """Two results were measured under different protocols."""


def protocol_differences(a: Protocol, b: Protocol) -> list[str]:
    """Each setting that differs, as ``'name: old != new'`` (missing shown as <unset>).

    Nested settings are named by their path, e.g. ``adapter_settings.temperature``.
    """
    fa, fb = _flatten(a.settings), _flatten(b.settings)
    out = []
    for key in sorted(set(fa) | set(fb)):
        va, vb = fa.get(key, "<unset>"), fb.get(key, "<unset>")
        if _canonical({"v": va}) != _canonical({"v": vb}):
            out.append(f"{key}: {va} != {vb}")
    return out


def require_same_protocol(a: Protocol, b: Protocol) -> None:
    """Raise :class:`ProtocolMismatch` naming every setting that differs."""
    diffs = protocol_differences(a, b)
    if diffs:
        raise ProtocolMismatch("results were measured under different protocols, so they do not "
                               "compare (old numbers are void): " + "; ".join(diffs))


@dataclass(frozen=True)
class Criteria:
    """Release bars, fixed before the measurement: each metric must reach its minimum."""

    minimums: Mapping[str, float]

    def __post_init__(self) -> None:
        for name, bar in self.minimums.items():
            if not 0 <= bar <= 1:
                raise ValueError(f"bar for {name!r} ({bar!r}) must lie in [0, 1]")

    @property
    def fingerprint(self) -> str:
        return Protocol({"criteria": dict(self.minimums)}).fingerprint


@dataclass(frozen=True)
class Measurement:
    """Measured metrics, with the protocol (including the declared criteria) they ran under."""

    metrics: Mapping[str, float]
    protocol: Protocol


@dataclass(frozen=True)
class HonestGateResult:
    passed: bool
    reasons: tuple[str, ...]


def honest_gate(criteria: Criteria, measurement: Measurement) -> HonestGateResult:
    """Check a measurement against the criteria declared before it was taken.

    Refuses (fails) when the criteria differ from those fingerprinted into
    the measurement's protocol, when a metric is missing or not a number, or
    when a metric is below its bar. Every reason gives the figure and the bar.

    Examples
    --------
    >>> bars = Criteria({"discovery_rate": 0.75})
    >>> m = Measurement({"discovery_rate": 0.15}, Protocol({"criteria": bars.fingerprint}))
    >>> honest_gate(bars, m).reasons
    ('discovery_rate: measured 0.150, bar 0.750: not met',)
    """
    reasons: list[str] = []
    declared = measurement.protocol.settings.get("criteria")
    if declared != criteria.fingerprint:
        reasons.append(f"criteria {criteria.fingerprint} are not the ones declared before the "
                       f"measurement ({declared}): a bar cannot change after the numbers are in")
    for name, bar in criteria.minimums.items():
        value = measurement.metrics.get(name)
        if value is None or not isinstance(value, (int, float)) or math.isnan(value):
            reasons.append(f"{name}: not measured, bar {bar:.3f}: not met (no evidence)")
        elif value < bar:
            reasons.append(f"{name}: measured {value:.3f}, bar {bar:.3f}: not met")
    return HonestGateResult(not reasons, tuple(reasons))
