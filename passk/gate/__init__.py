"""The gate: its criteria, the protocol they are bound to, curtailment, and the judge.

==========================  =====================================================
module                      what
==========================  =====================================================
:mod:`.bind`                the one binding: options, policy, protocol -> criteria in force
:mod:`.criteria`            a curtailed or stopped run decides only under its own gate
:mod:`.curtailment`         the settle rule of curtailed repetition
:mod:`.judge`               the one judge: a verdict from Results, criteria, a baseline
:mod:`.honest`              page 6's honest gate
:mod:`.policy`              the committed gate policy (``passk.toml``), what it refuses
==========================  =====================================================

"""

from __future__ import annotations

from passk.errors import LoosenedCriteria
from passk.gate.bind import CHOICES, CRITERIA, InForce, asked_from, bind
from passk.gate.criteria import curtailment_refusal
from passk.gate.honest import Criteria, HonestGateResult, Measurement, honest_gate
from passk.results.protocol import (
    Protocol,
    ProtocolMismatch,
    protocol_differences,
    require_same_protocol,
)

__all__ = [
    "CHOICES",
    "CRITERIA",
    "Criteria",
    "HonestGateResult",
    "InForce",
    "LoosenedCriteria",
    "Measurement",
    "Protocol",
    "ProtocolMismatch",
    "asked_from",
    "bind",
    "curtailment_refusal",
    "honest_gate",
    "protocol_differences",
    "require_same_protocol",
]
