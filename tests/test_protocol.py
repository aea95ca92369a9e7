"""Protocol fingerprints and the honest gate."""

import pytest

from passk.gate import (
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
    with pytest.raises(ValueError, match=r"1.5"):
        Criteria({"x": 1.5})


# --------------------------------------------------------------------------
# a curtailed run decides only under the gate its curtailment served
# --------------------------------------------------------------------------

CURTAILED = {"stopping": "curtailed", "k": 2, "min_overall_pass_hat_k": 0.5,
             "max_flakiness": 0.2, "gate_on": "estimate", "confidence": 0.95}


def counts(successes, totals, ids=None):
    import numpy as np

    from passk.results.read import Results

    ids = tuple(ids or (f"t{i}" for i in range(len(totals))))
    return Results(ids, np.array(successes), np.array(totals), np.zeros(len(totals), int),
                   ("read-only",) * len(totals))


def test_a_fixed_run_or_the_served_gate_is_never_refused():
    from passk.gate import curtailment_refusal

    assert curtailment_refusal(None, {"gate_on": "lower-bound"}) is None
    fixed = Protocol({**CURTAILED, "stopping": "fixed"})
    assert curtailment_refusal(fixed, {"gate_on": "lower-bound", "k": 9}) is None
    served = Protocol(CURTAILED)
    assert curtailment_refusal(served, {"k": None, "gate_on": None, "min_runs": 0}) is None
    assert curtailment_refusal(served, dict(CURTAILED)) is None


@pytest.mark.parametrize("change, named", [
    ({"gate_on": "lower-bound"}, "bar 0.5 on the lower bound (95%)"),
    ({"k": 3}, "k 3, bar 0.5"),
    ({"min_overall_pass_hat_k": 0.6}, "bar 0.6 on the estimate"),
    ({"max_flakiness": 0.1}, "flakiness cap 0.1"),
    ({"confidence": 0.99, "gate_on": "lower-bound"}, "lower bound (99%)"),
    ({"min_runs": 4}, "at least 4 runs"),
])
def test_another_gate_is_refused_naming_both(change, named):
    from passk.gate import curtailment_refusal

    line = curtailment_refusal(Protocol(CURTAILED), change)
    assert line is not None and "\n" not in line
    assert line.startswith("the runs were curtailed for the gate k 2, bar 0.5 on the "
                           "estimate, flakiness cap 0.2; the gate asked for, ")
    assert named in line


def test_an_old_log_without_gate_on_was_curtailed_on_the_estimate():
    from passk.gate import curtailment_refusal

    old = Protocol({k: v for k, v in CURTAILED.items() if k not in ("gate_on", "confidence")})
    assert curtailment_refusal(old, {"gate_on": "estimate", "confidence": 0.95}) is None
    assert "on the estimate, flakiness" in curtailment_refusal(old, {"gate_on": "lower-bound"})


def test_a_change_the_runs_made_decide_exactly_is_allowed():
    """Plans from the protocol: passk run's tiers, the plugin's tests, Inspect's epochs.
    t0 ran 12 of 12 (2 passes: flaky); t1 stopped at 2 passes in 4 of 12 runs, flaky at a
    cap of 0.1 whatever its 8 runs not made give (2 of 12 has 0.556): blocked exactly. With
    t1 at 3 of 3 the runs not made could still make it flaky or not: refused."""
    from passk.gate import curtailment_refusal

    run_log = Protocol({**CURTAILED, "runs_by_risk": {"read-only": 12}, "default_runs": 12,
                        "tasks": ["t0", "t1"]})
    flaky = counts([2, 2], [12, 4])
    assert curtailment_refusal(run_log, {"max_flakiness": 0.1}, flaky) is None
    sure = counts([12, 3], [12, 3])  # t1 at 3/3 could still end 3/12 (flaky) or 12/12
    assert curtailment_refusal(run_log, {"max_flakiness": 0.1}, sure) is not None
    missing = Protocol({**run_log.settings, "tasks": ["t0", "t1", "t2"]})
    assert curtailment_refusal(missing, {"max_flakiness": 0.1}, flaky) is not None
    plugin = Protocol({**CURTAILED, "tests": {"t0": {"runs": 12, "k": 2, "risk": "r"},
                                              "t1": {"runs": 12, "k": 2, "risk": "r"}}})
    assert curtailment_refusal(plugin, {"max_flakiness": 0.1}, flaky) is None
    epochs = Protocol({**CURTAILED, "default_runs": 12})
    assert curtailment_refusal(epochs, {"max_flakiness": 0.1}, flaky) is None
    assert curtailment_refusal(epochs, {"min_overall_pass_hat_k": 0.6},
                               counts([12, 3], [12, 3])) is not None
