"""The gate: its criteria, the protocol they are bound to, curtailment, and the judge.

==========================  =====================================================
module                      what
==========================  =====================================================
:mod:`.criteria`            binding declared criteria; refusing looser ones
:mod:`.curtailment`         the settle rule of curtailed repetition
:mod:`.judge`               the one judge: a verdict from Results, criteria, a baseline
:mod:`.honest`              page 6's honest gate
:mod:`.policy`              the committed gate policy (``passk.toml``), what it refuses
==========================  =====================================================

"""

from __future__ import annotations

from passk.gate.criteria import (
    GATE_CRITERIA,
    BoundCriteria,
    LoosenedCriteria,
    bind_criteria,
    curtailment_refusal,
)
from passk.gate.honest import Criteria, HonestGateResult, Measurement, honest_gate
from passk.results.protocol import (
    Protocol,
    ProtocolMismatch,
    protocol_differences,
    require_same_protocol,
)

__all__ = [
    "GATE_CRITERIA",
    "BoundCriteria",
    "Criteria",
    "HonestGateResult",
    "LoosenedCriteria",
    "Measurement",
    "Protocol",
    "ProtocolMismatch",
    "bind_criteria",
    "curtailment_refusal",
    "honest_gate",
    "protocol_differences",
    "require_same_protocol",
]
