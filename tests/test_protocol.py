"""Protocol fingerprints and the honest gate."""

import pytest

from passk.protocol import (
    Criteria,
    Measurement,
    Protocol,
    ProtocolMismatch,
    honest_gate,
    protocol_differences,
    require_same_protocol,
)


def test_fingerprint_is_stable_and_order_free():
    a = Protocol({"k": 5, "budget": 90, "split": "dev"})
    b = Protocol({"split": "dev", "budget": 90, "k": 5})
    assert a.fingerprint == b.fingerprint and len(a.fingerprint) == 16
    assert Protocol.from_dict(a.to_dict()) == a


def test_a_hand_edited_fingerprint_is_refused():
    data = Protocol({"k": 5}).to_dict()
    data["settings"]["k"] = 3
    with pytest.raises(ValueError, match="does not match"):
        Protocol.from_dict(data)


def test_differences_name_each_setting():
    old = Protocol({"k": 5, "max_time_seconds": 90, "temperature": 0.7})
    new = Protocol({"k": 5, "max_time_seconds": 300, "split": "dev"})
    assert protocol_differences(old, new) == [
        "max_time_seconds: 90 != 300", "split: <unset> != dev", "temperature: 0.7 != <unset>"]
    with pytest.raises(ProtocolMismatch, match="max_time_seconds: 90 != 300"):
        require_same_protocol(old, new)
    require_same_protocol(old, Protocol(dict(old.settings)))


def test_a_missed_bar_is_refused_with_both_figures():
    bars = Criteria({"discovery_rate": 0.75})
    for measured in (0.0, 0.1, 0.2):
        result = honest_gate(bars, Measurement({"discovery_rate": measured},
                                               Protocol({"criteria": bars.fingerprint})))
        assert not result.passed
        assert result.reasons == (f"discovery_rate: measured {measured:.3f}, bar 0.750: not met",)


def test_a_bar_relaxed_after_the_measurement_is_refused():
    declared = Criteria({"discovery_rate": 0.75})
    measurement = Measurement({"discovery_rate": 0.15}, Protocol({"criteria": declared.fingerprint}))
    relaxed = Criteria({"discovery_rate": 0.05})
    result = honest_gate(relaxed, measurement)
    assert not result.passed
    assert "cannot change after the numbers are in" in result.reasons[0]


def test_missing_evidence_fails_closed_and_a_met_bar_passes():
    bars = Criteria({"discovery_rate": 0.75, "no_leak": 1.0})
    protocol = Protocol({"criteria": bars.fingerprint})
    missing = honest_gate(bars, Measurement({"discovery_rate": 0.9}, protocol))
    assert not missing.passed and "no_leak: not measured" in missing.reasons[0]
    assert honest_gate(bars, Measurement({"discovery_rate": 0.9, "no_leak": 1.0}, protocol)).passed
    with pytest.raises(ValueError, match="1.5"):
        Criteria({"x": 1.5})
