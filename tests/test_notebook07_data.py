"""The book's copy of tau-bench's GPT-4o airline run (book/data/tau-bench/).

The copy must be exactly what ``scripts/derive_tau_bench_copy.py`` derives from
tau-bench's published file, which tests read in place from ``../shared/data/``
(skipped with the reason where that folder is absent). The rest holds without
the original: the copy keeps three fields of 200 records, carries tau-bench's MIT
notice and its provenance, and passk reads it to tau-bench's own leaderboard
figures (README.md of sierra-research/tau-bench at the recorded commit, airline
table, row "TC (gpt-4o)": 0.420, 0.273, 0.220, 0.200).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import pytest
from shared_data import TAU_BENCH_MISSING

from passk.analysis.report import build_report
from passk.results.read import read_results

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "derive_tau_bench_copy.py"
COPY_DIR = ROOT / "book" / "data" / "tau-bench"
COPY = COPY_DIR / "gpt-4o-airline-rewards.json"
ORIGINAL = ROOT.parent / "shared" / "data" / "tau-bench" / "gpt-4o-airline.json"
COMMIT = "59a200c6d575d595120f1cb70fea53cef0632f6b"
LEADERBOARD = (0.420, 0.273, 0.220, 0.200)  # tau-bench README, airline, TC (gpt-4o)

needs_original = pytest.mark.skipif(
    not ORIGINAL.is_file(),
    reason=TAU_BENCH_MISSING)


def derive_module():
    spec = importlib.util.spec_from_file_location("derive_tau_bench_copy", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@needs_original
def test_shipped_copy_is_the_derivation_of_the_original():
    derive = derive_module()
    assert hashlib.sha256(ORIGINAL.read_bytes()).hexdigest() == derive.SOURCE_SHA256
    assert COPY.read_text(encoding="utf-8") == derive.derive_text(ORIGINAL)
    assert (COPY_DIR / "LICENSE").read_bytes() == ORIGINAL.with_name("LICENSE").read_bytes()


@needs_original
def test_copy_has_the_originals_records_in_order():
    original = json.loads(ORIGINAL.read_text(encoding="utf-8"))
    copy = json.loads(COPY.read_text(encoding="utf-8"))
    assert [(r["task_id"], r["trial"], r["reward"]) for r in original] == [
        (r["task_id"], r["trial"], r["reward"]) for r in copy]


@needs_original
def test_script_check_mode_agrees(capsys):
    assert derive_module().main(["--check", "--source", str(ORIGINAL)]) == 0
    assert "is the derivation" in capsys.readouterr().out


def test_copy_keeps_task_trial_and_reward_of_every_run():
    records = json.loads(COPY.read_text(encoding="utf-8"))
    assert len(records) == 200
    assert all(list(r) == ["task_id", "reward", "trial"] for r in records)
    pairs = {(r["task_id"], r["trial"]) for r in records}
    assert pairs == {(t, i) for t in range(50) for i in range(4)}  # no duplicate, none missing
    assert {r["reward"] for r in records} <= {0.0, 1.0}


def test_copy_carries_the_mit_notice_and_its_provenance():
    license_text = (COPY_DIR / "LICENSE").read_text(encoding="utf-8")
    assert license_text.startswith("MIT License") and "Sierra" in license_text
    readme = (COPY_DIR / "README.md").read_text(encoding="utf-8")
    for fact in ("sierra-research/tau-bench", "historical_trajectories/gpt-4o-airline.json",
                 COMMIT, "task_id", "reward", "trial", "LICENSE"):
        assert fact in readme


def test_passk_reads_the_copy_to_tau_benchs_leaderboard():
    results = read_results(COPY)
    assert results.source == "tau-bench"
    assert results.notes == () and results.incomplete == ()
    curve = build_report(results).curve
    assert curve.tasks == 50
    assert tuple(round(float(x), 3) for x in curve.pass_hat_k) == LEADERBOARD
