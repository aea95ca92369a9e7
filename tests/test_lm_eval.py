"""The lm-evaluation-harness reader, on ``--log_samples`` output written by lm-eval itself.

The fixtures under ``tests/fixtures/lm_eval/`` were written by
``tests/fixtures/lm_eval/make_fixtures.py`` with lm-eval 0.4.13 (its own CLI,
a local JSONL dataset and a small seeded LM registered in the script; no
download). The reference is an independent count of each samples file's raw
lines: the chosen (metric, filter)'s values, 1 a success, per document, with
pass^k = C(c, k) / C(n, k), pass@k = 1 - C(n - c, k) / C(n, k) and flakiness
4 (c/n)(1 - c/n) in exact fractions.
"""

from __future__ import annotations

import glob
import json
import math
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

from passk.cli import main
from passk.metrics import estimate_pass_at_k, estimate_pass_hat_k, flakiness
from passk.results.formats import detect_format
from passk.results.formats.lm_eval import identity
from passk.results.read import ResultsError, read_results

LM = Path(__file__).resolve().parent / "fixtures" / "lm_eval"


def samples(run: str) -> Path:
    (found,) = glob.glob(str(LM / run / "*" / "samples_*.jsonl"))
    return Path(found)


REPEATS, SEED1, SEED2, OTHER, FIRST = (samples(r) for r in ("repeats", "seed1", "seed2",
                                                            "other_model", "first"))


def raw_counts(paths: list[Path], metric: str, filter: str) -> dict[int, list[int]]:
    """(c, n) per doc_id, counted from the raw JSON lines of one or more samples files."""
    counts: dict[int, list[int]] = {}
    for path in paths:
        for line in path.read_text().splitlines():
            row = json.loads(line)
            if row["filter"] != filter:
                continue
            values = row[metric] if isinstance(row[metric], list) else [row[metric]]
            c, n = counts.setdefault(row["doc_id"], [0, 0])
            counts[row["doc_id"]] = [c + sum(v == 1.0 for v in values), n + len(values)]
    return counts


def exact(c: int, n: int, k: int) -> tuple[Fraction, Fraction, Fraction]:
    p = Fraction(c, n)
    return (Fraction(math.comb(c, k), math.comb(n, k)),
            1 - Fraction(math.comb(n - c, k), math.comb(n, k)), 4 * p * (1 - p))


def check_against(results, raw: dict[int, list[int]], task: str) -> None:
    assert results.task_ids == tuple(f"{task}/{d}" for d in sorted(raw))
    assert [[c, n] for c, n in zip(results.successes.tolist(), results.totals.tolist())] == [
        raw[d] for d in sorted(raw)]
    for k in range(1, int(results.totals.min()) + 1):
        hat = estimate_pass_hat_k(results.successes, results.totals, k).tolist()
        at = estimate_pass_at_k(results.successes, results.totals, k).tolist()
        flaky = flakiness(results.successes, results.totals).tolist()
        for i, d in enumerate(sorted(raw)):
            want = exact(*raw[d], k)
            assert abs(hat[i] - float(want[0])) <= 1e-12
            assert abs(at[i] - float(want[1])) <= 1e-12
            assert abs(flaky[i] - float(want[2])) <= 1e-12


@pytest.mark.parametrize("metric, filter", [("exact_match", "strict"), ("exact_match", "raw"),
                                            ("contains", "raw"), ("contains", "strict")])
def test_repeats_as_runs_equal_an_independent_count(metric: str, filter: str) -> None:
    results = read_results(REPEATS, metric=metric, filter=filter)
    assert results.source == "lm-eval" and results.suite == "passk_qa_repeats"
    assert results.totals.tolist() == [4] * 5
    check_against(results, raw_counts([REPEATS], metric, filter), "passk_qa_repeats")


def test_metric_and_filter_choices_differ_in_this_fixture() -> None:
    """The fixture is a real test of the choice: contains/raw passes answers exact_match
    fails, so reading the wrong metric would be a different number."""
    a = read_results(REPEATS, metric="exact_match", filter="strict").successes.tolist()
    b = read_results(REPEATS, metric="contains", filter="raw").successes.tolist()
    assert a != b


def test_several_metrics_or_filters_must_be_chosen(capsys) -> None:
    with pytest.raises(ResultsError, match=r"holds 2 filters \(raw, strict\): choose one with "
                       "--filter"):
        read_results(REPEATS)
    with pytest.raises(ResultsError, match=r"holds 2 metrics \(contains, exact_match\): "
                       "choose one with --metric"):
        read_results(REPEATS, filter="raw")
    with pytest.raises(ResultsError, match="filter 'strictest' is not in this file; it holds "
                       "raw, strict"):
        read_results(REPEATS, filter="strictest", metric="contains")
    assert main(["report", str(REPEATS), "--filter", "raw"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(REPEATS) in err[0] and "--metric" in err[0]
    assert main(["report", str(REPEATS), "--filter", "raw", "--metric", "contains"]) == 0


def test_seed_runs_read_together_are_trials_of_one_suite() -> None:
    results = read_results([SEED1, SEED2])
    assert results.totals.tolist() == [2] * 5
    check_against(results, raw_counts([SEED1, SEED2], "exact_match", "none"), "passk_qa")


def test_stored_aggregate_is_cross_checked(tmp_path: Path) -> None:
    results = read_results(SEED1)
    assert any("equals the samples' mean" in n for n in results.notes)
    copy = tmp_path / "run"
    shutil.copytree(SEED1.parent, copy)
    stored = next(copy.glob("results_*.json"))
    data = json.loads(stored.read_text())
    data["results"]["passk_qa"]["exact_match,none"] = 0.123
    stored.write_text(json.dumps(data))
    with pytest.raises(ResultsError, match=r"stores exact_match,none = 0.123"):
        read_results(next(copy.glob("samples_*.jsonl")))


def test_two_models_are_not_pooled() -> None:
    with pytest.raises(ResultsError, match=r"model_args .*p\": 0.9.* not trials of one "
                       "evaluation"):
        read_results([SEED1, OTHER])
    pooled = read_results([SEED1, OTHER], pool_evaluations=True)
    assert any("pooled on purpose" in n for n in pooled.notes)


def test_the_same_run_twice_is_refused(tmp_path: Path) -> None:
    copy = tmp_path / "again"
    shutil.copytree(SEED1.parent, copy)
    line = SEED1.read_text().splitlines()
    again = next(copy.glob("samples_*.jsonl"))
    again.write_text("\n".join(line[::-1]) + "\n")  # another digest, the same run and seeds
    with pytest.raises(ResultsError, match=r"the same run counted twice|same"):
        read_results([SEED1, again])
    found = identity(SEED1)
    assert found["run_ids"][0][0] == "lm-eval run date"
    assert found["evaluation"]["model_args"] == '{"p": 0.6}'


def test_one_response_scored_for_several_repeats_is_refused(capsys) -> None:
    with pytest.raises(ResultsError, match="scored one response for 3 repeats"):
        read_results(FIRST)
    assert main(["report", str(FIRST)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(FIRST) in err[0] and "--seed" in err[0]


def test_no_repeats_gated_at_k_above_one_is_refused(capsys) -> None:
    assert main(["gate", str(SEED1), "--k", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert str(SEED1) in err and "N >= 2" in err


def test_graded_values_need_a_threshold(tmp_path: Path) -> None:
    copy = tmp_path / "samples_passk_qa_2026-01-01T00-00-00.000001.jsonl"
    rows = [json.loads(line) for line in SEED1.read_text().splitlines()]
    rows[0]["exact_match"] = 0.5
    copy.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ResultsError, match="neither 0 nor 1: pass --success-threshold"):
        read_results(copy)
    assert read_results(copy, success_threshold=0.5).successes.tolist()[0] == 1


def test_detected_by_content_not_as_a_passk_run_log() -> None:
    assert detect_format(REPEATS) == "lm-eval"
    assert detect_format(LM.parent / "stable.jsonl") == "jsonl"


def test_format_lm_eval_on_a_json_document_does_not_say_invalid_json(capsys) -> None:
    promptfoo = LM.parent / "promptfoo" / "repeat4.json"
    assert main(["report", "--format", "lm-eval", str(promptfoo)]) == 2
    err = capsys.readouterr().err.strip()
    assert "not valid JSON" not in err and "is one JSON document" in err
    assert len(err.splitlines()) == 1
