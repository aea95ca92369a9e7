"""Inspect's ``Curtailment(stop_early=LOOKS)``: the eval's early stopping, through the one
Schedule, called as Inspect calls it (``replay``); the oracle is
:func:`passk.stats.sequential.sequential_decision` on the epochs the first look saw."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("inspect_ai")

from passk.integrations.inspect import Curtailment, replay
from passk.stats.sequential import sequential_decision


def test_a_good_eval_stops_at_its_first_look():
    meta = replay(Curtailment(k=1, max_flakiness=1.0, stop_early=3), [[True] * 8] * 60)
    assert sequential_decision([1] * 60, 1, 1, 0.7, look=1, looks=3).decision == "stop-pass"
    assert meta["stopped_early"]["decision"] == "stop-pass"
    assert meta["stopped_early"]["look"] == 1
    assert (meta["epochs_run"], meta["epochs_saved"], meta["settled_early"]) == (60, 420, {})
    assert meta["protocol"]["settings"]["stopping"] == "stop-early"
    assert meta["protocol"]["settings"]["stop_early"]["looks"] == 3


def test_each_look_is_the_rule_on_the_epochs_it_saw():
    """Random tables: the eval stops at the first look whose decision (computed here on the
    first m_j epochs of every sample) is not 'continue', having run exactly those epochs."""
    rng = np.random.default_rng(29)
    stopped = 0
    for _ in range(20):
        p = rng.choice([1.0, 0.0, 0.9], size=50, p=rng.dirichlet([1, 1, 1]))
        table = (rng.random((50, 9)) < p[:, None]).tolist()
        meta = replay(Curtailment(k=1, max_flakiness=1.0, stop_early=3), table)
        made = 9
        for j, m in enumerate([1, 5]):  # looks after 1, 5 and 9 epochs
            c = [sum(row[:m]) for row in table]
            if sequential_decision(c, m, 1, 0.7, look=j + 1, looks=3).decision != "continue":
                made = m
                break
        assert meta["epochs_run"] == 50 * made
        stopped += "stopped_early" in meta
    assert stopped >= 5


def test_stop_early_with_curtailment_is_refused():
    with pytest.raises(ValueError, match="looks"):
        Curtailment(stop_early=1)


def test_a_look_counts_only_its_own_epochs_with_epochs_in_flight():
    """With 8 epochs in flight later epochs end before the look: it still sees exactly the
    first m_j epochs of every sample (the same decisions as one epoch at a time)."""
    rng = np.random.default_rng(30)
    for _ in range(20):
        p = rng.choice([1.0, 0.0, 0.9], size=40, p=rng.dirichlet([1, 1, 1]))
        table = (rng.random((40, 9)) < p[:, None]).tolist()
        one = replay(Curtailment(k=1, max_flakiness=1.0, stop_early=3), table)
        many = replay(Curtailment(k=1, max_flakiness=1.0, stop_early=3), table, in_flight=8)
        assert one.get("stopped_early", {}).get("decision") == many.get(
            "stopped_early", {}).get("decision")
