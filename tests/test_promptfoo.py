"""The promptfoo reader, on eval outputs written by promptfoo itself.

The fixtures under ``tests/fixtures/promptfoo/`` were written by
``tests/fixtures/promptfoo/make_fixtures.sh`` with promptfoo 0.123.1 (npm) and
its local ``provider.js`` (offline): ``promptfoo eval --repeat N -o out.json``.
The reference here is an independent count of each file's raw rows (grouped by
provider, prompt, description and vars, as promptfoo's config defines a test
case), with pass^k = C(c, k) / C(n, k), pass@k = 1 - C(n - c, k) / C(n, k)
and flakiness 4 (c/n)(1 - c/n) in exact fractions.
"""

from __future__ import annotations

import json
import math
import shutil
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import pytest

from passk.cli import main
from passk.metrics import estimate_pass_at_k, estimate_pass_hat_k, flakiness
from passk.results.formats import detect_format
from passk.results.formats.promptfoo import run_ids
from passk.results.read import ResultsError, read_results

PF = Path(__file__).resolve().parent / "fixtures" / "promptfoo"
REPEAT4, TWO, NO_REPEAT = PF / "repeat4.json", PF / "two_providers.json", PF / "no_repeat.json"


def raw_counts(path: Path, *, errors_fail: bool = True) -> dict[tuple, list[int]]:
    """(c, n) per (provider, prompt, description, vars), counted from the raw JSON."""
    counts: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
    for row in json.loads(path.read_text())["results"]["results"]:
        if row["failureReason"] == 2 and not errors_fail:
            continue
        key = (row["provider"]["id"], row["provider"].get("label"), row["prompt"]["label"],
               row["testCase"].get("description"), json.dumps(row["vars"], sort_keys=True))
        counts[key][0] += bool(row["success"])
        counts[key][1] += 1
    return dict(counts)


def exact(c: int, n: int, k: int) -> tuple[Fraction, Fraction, Fraction]:
    p = Fraction(c, n)
    return (Fraction(math.comb(c, k), math.comb(n, k)),
            1 - Fraction(math.comb(n - c, k), math.comb(n, k)), 4 * p * (1 - p))


@pytest.mark.parametrize("path", [REPEAT4, TWO])
def test_counts_and_estimates_equal_an_independent_count(path: Path) -> None:
    results = read_results(path)
    raw = raw_counts(path)
    assert sorted(zip(results.successes.tolist(), results.totals.tolist())) == sorted(
        (c, n) for c, n in raw.values())
    n = int(results.totals.min())
    for k in range(1, n + 1):
        hat = estimate_pass_hat_k(results.successes, results.totals, k)
        at = estimate_pass_at_k(results.successes, results.totals, k)
        flaky = flakiness(results.successes, results.totals)
        mine = sorted(zip(hat.tolist(), at.tolist(), flaky.tolist()))
        reference = sorted(exact(c, m, k) for c, m in raw.values())
        for got, want in zip(mine, reference):
            assert all(abs(g - float(w)) <= 1e-12 for g, w in zip(got, want))
        suite = sum(exact(c, m, k)[0] for c, m in raw.values()) / len(raw)
        assert abs(float(hat.mean()) - float(suite)) <= 1e-12


def test_a_task_is_the_test_case_never_test_idx() -> None:
    """promptfoo gives each repeat its own testIdx: grouping by it would make 16 stable
    tasks of one run. The reader must give 4 tasks of 4 runs, and its pass^2 must be the
    test-case grouping's, which differs from what testIdx grouping would give."""
    rows = json.loads(REPEAT4.read_text())["results"]["results"]
    by_test_idx: dict[int, list[bool]] = defaultdict(list)
    for row in rows:
        by_test_idx[row["testIdx"]].append(row["success"])
    assert len(by_test_idx) == 16 and all(len(v) == 1 for v in by_test_idx.values())
    results = read_results(REPEAT4)
    assert len(results) == 4 and results.totals.tolist() == [4, 4, 4, 4]
    wrong = Fraction(sum(v[0] for v in by_test_idx.values()), 16)  # every "task" stable
    right = sum(exact(c, n, 2)[0] for c, n in raw_counts(REPEAT4).values()) / 4
    assert right != wrong
    got = float(estimate_pass_hat_k(results.successes, results.totals, 2).mean())
    assert abs(got - float(right)) <= 1e-12
    assert abs(got - float(wrong)) > 0.1
    assert sum(flakiness(results.successes, results.totals) > 0) == 2  # flaky, error once


def test_provider_and_prompt_are_part_of_the_task() -> None:
    results = read_results(TWO)
    assert len(results) == 8  # 2 providers x 2 prompts x 2 tests, 3 repeats each
    assert results.totals.tolist() == [3] * 8
    assert results.suite == "shaky, steady"


def test_errors_count_as_failures_unless_excluded() -> None:
    stored = json.loads(REPEAT4.read_text())["results"]["stats"]
    assert stored["errors"] == 1
    results = read_results(REPEAT4)
    assert int(results.totals.sum()) == 16 and int(results.excluded.sum()) == 0
    assert int(results.successes.sum()) == stored["successes"]
    assert any("counted as a failure" in n for n in results.notes)
    kept = read_results(REPEAT4, errors="exclude")
    assert int(kept.totals.sum()) == 15 and int(kept.excluded.sum()) == 1
    assert sorted(zip(kept.successes.tolist(), kept.totals.tolist())) == sorted(
        (c, n) for c, n in raw_counts(REPEAT4, errors_fail=False).values())


def test_detected_without_format_and_not_taken_for_inspect(tmp_path: Path) -> None:
    assert detect_format(REPEAT4) == "promptfoo"
    assert read_results(REPEAT4).source == "promptfoo"


def test_format_jsonl_on_a_json_file_does_not_say_invalid_json(capsys) -> None:
    assert main(["report", "--format", "jsonl", str(REPEAT4)]) == 2
    err = capsys.readouterr().err.strip()
    assert "not valid JSON" not in err and "is one JSON document" in err
    assert len(err.splitlines()) == 1 and str(REPEAT4) in err


def test_stored_stats_mismatch_is_refused(tmp_path: Path, capsys) -> None:
    data = json.loads(REPEAT4.read_text())
    data["results"]["stats"]["successes"] += 1
    bad = tmp_path / "out.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(ResultsError, match="stored stats disagree"):
        read_results(bad)
    assert main(["report", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert str(bad) in err and "successes 10 but the rows hold 9" in err


def test_a_row_whose_success_contradicts_its_failure_reason_is_refused(tmp_path: Path) -> None:
    data = json.loads(REPEAT4.read_text())
    data["results"]["results"][5]["success"] = True
    bad = tmp_path / "out.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(ResultsError, match=r"results\.results\[5\].*contradicts"):
        read_results(bad)


def test_no_repeats_gated_at_k_above_one_is_refused(capsys) -> None:
    assert main(["gate", str(NO_REPEAT), "--k", "3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert str(NO_REPEAT) in err and "promptfoo eval --repeat N" in err
    assert read_results(NO_REPEAT).totals.tolist() == [1, 1, 1, 1]


def test_the_same_eval_twice_is_refused(tmp_path: Path) -> None:
    copy = tmp_path / "copy.json"
    data = json.loads(REPEAT4.read_text())
    data["metadata"]["exportedAt"] = "another time"  # another digest, the same evalId
    copy.write_text(json.dumps(data, indent=2))
    # named by the first id both hold: the evalId, or the eval's creation time (which
    # `promptfoo import --new-id` keeps: tests/test_producer_records.py)
    with pytest.raises(ResultsError, match=r"same run as .*(evalId|eval created)"):
        read_results([REPEAT4, copy])
    shutil.copy(REPEAT4, tmp_path / "same.json")
    with pytest.raises(ResultsError):
        read_results([REPEAT4, tmp_path / "same.json"])


def test_run_ids_are_the_eval_id_its_creation_and_each_rows_id() -> None:
    found = run_ids(REPEAT4)
    data = json.loads(REPEAT4.read_text())
    assert found["run_ids"] == [("promptfoo evalId", data["evalId"]),
                                ("promptfoo eval created", data["results"]["timestamp"])]
    assert len(found["trials"]) == 16
    assert {place for _, place in found["trials"]} == {
        f"promptfoo row id {row['id']}" for row in data["results"]["results"]}
    assert "plan" in found["evaluation"]["providers"]
    assert "YYYY" not in found["evaluation"]["providers"]  # provider config only as a digest


def test_two_set_ups_behind_one_name_are_refused(tmp_path: Path) -> None:
    """Two providers with one label (or two prompts with one label) would pool as one task."""
    data = json.loads(TWO.read_text())
    for row in data["results"]["results"]:
        if row["provider"]["label"] == "shaky":
            row["provider"] = {"id": "file://other.js", "label": "steady"}
    bad = tmp_path / "out.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(ResultsError, match="two different provider or prompt set-ups"):
        read_results(bad)
    for row in data["results"]["results"]:  # the same id and label: nothing tells them apart
        row["provider"] = {"id": "file://provider.js", "label": "steady"}
    bad.write_text(json.dumps(data))
    with pytest.raises(ResultsError, match=r"6 rows for 3 repeats.*cannot be told apart"):
        read_results(bad)
