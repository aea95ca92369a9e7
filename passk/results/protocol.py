"""A measurement's protocol: the settings its numbers hold under, with a fingerprint.

A pass^k number is a measurement under a protocol: the budget, k, the repeat
policy, the temperature, the scenario split. Change any of them and the old
numbers no longer compare. :class:`Protocol` records those settings with a
fingerprint; :func:`protocol_differences` names what differs, and
:func:`require_same_protocol` refuses to compare across a change.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from passk.errors import BadInput, PasskError

__all__ = ["Protocol", "ProtocolMismatch", "protocol_differences", "require_same_protocol"]


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
        """The first 16 hex digits of the SHA-256 of the settings as canonical JSON."""
        return hashlib.sha256(_canonical(self.settings).encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        """The settings and their fingerprint, as the run log stores them."""
        return {"settings": json.loads(_canonical(self.settings)), "fingerprint": self.fingerprint}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Protocol:
        """Read back :meth:`to_dict`; a fingerprint that does not match its settings is refused."""
        protocol = cls(dict(data.get("settings", {})))
        if "fingerprint" in data and data["fingerprint"] != protocol.fingerprint:
            raise BadInput(f"protocol fingerprint {data['fingerprint']!r} does not match its "
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


class ProtocolMismatch(PasskError, ValueError):
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


def require_same_protocol(a: Protocol, b: Protocol, *, allowed: tuple[str, ...] = ()
                          ) -> list[str]:
    """Raise :class:`ProtocolMismatch` naming every setting that differs, except the allowed.

    Comparing two versions of an agent means that something differs: the
    setting under test. ``allowed`` names it (a setting's path, or a prefix
    such as ``adapter_settings``), so that a comparison changes one variable
    at a time and says which; any other difference still voids it.

    Returns
    -------
    list of str
        The allowed differences found, as ``'name: old != new'``.

    Examples
    --------
    >>> a = Protocol({"k": 5, "adapter_settings": {"temperature": 0.7}})
    >>> b = Protocol({"k": 5, "adapter_settings": {"temperature": 0.0}})
    >>> require_same_protocol(a, b, allowed=("adapter_settings.temperature",))
    ['adapter_settings.temperature: 0.7 != 0.0']
    """
    diffs = protocol_differences(a, b)

    def is_allowed(diff: str) -> bool:
        key = diff.split(": ", 1)[0]
        return any(key == name or key.startswith(name + ".") for name in allowed)

    refused = [d for d in diffs if not is_allowed(d)]
    if refused:
        raise ProtocolMismatch("results were measured under different protocols, so they do not "
                               "compare (old numbers are void): " + "; ".join(refused))
    return [d for d in diffs if is_allowed(d)]


