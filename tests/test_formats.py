"""The benchmark readers: tau-bench, tau2-bench, Inspect AI; detection; bad input."""

from __future__ import annotations

import json
import math
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from passk.formats import detect_format, read_inspect, read_tau2, read_tau_bench
from passk.io import ResultsError, read_results
from passk.metrics import estimate_pass_hat_k
from passk.reporting import build_report

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TAU_DIR = Path(__file__).resolve().parents[1].parent / "shared/data/tau-bench"
TAU_FILE = TAU_DIR / "gpt-4o-airline.json"
needs_tau = pytest.mark.skipif(not TAU_FILE.is_file(),
                               reason=f"the real tau-bench run is not at {TAU_FILE}")


def write(tmp_path: Path, name: str, payload: object | str) -> Path:
    path = tmp_path / name
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload))
    return path


# --------------------------------------------------------------------------
# tau-bench
# --------------------------------------------------------------------------


def tau_bench_oracle(path: Path) -> dict[int, float]:
    """tau-bench's own pass^k (``display_metrics`` in tau_bench/run.py), re-derived here.

    For k = 1..num_trials (num_trials = the number of distinct trial values), the mean over
    tasks of C(c, k) / C(num_trials, k), a run succeeding when |reward - 1| <= 1e-6.
    """
    runs = json.loads(path.read_text())
    num_trials = len({r["trial"] for r in runs})
    c: dict[int, int] = defaultdict(int)
    for r in runs:
        c[r["task_id"]] += 1 if (1 - 1e-6) <= r["reward"] <= (1 + 1e-6) else 0
    return {k: sum(math.comb(ci, k) / math.comb(num_trials, k) for ci in c.values()) / len(c)
            for k in range(1, num_trials + 1)}


@needs_tau
def test_tau_bench_real_run_counts():
    r = read_results(TAU_FILE)
    assert r.source == "tau-bench"
    assert len(r) == 50 and set(r.totals.tolist()) == {4}
    assert int(r.successes.sum()) == 84 and int(r.excluded.sum()) == 0


@needs_tau
def test_tau_bench_real_run_reproduces_tau_bench_pass_hat_k():
    oracle = tau_bench_oracle(TAU_FILE)
    fr = build_report(read_results(TAU_FILE))
    assert fr.curve.ks.tolist() == [1, 2, 3, 4]
    np.testing.assert_allclose(fr.curve.pass_hat_k, [oracle[k] for k in (1, 2, 3, 4)],
                               rtol=0, atol=1e-12)
    # the figures in the report (pass^1..4 of GPT-4o on tau-bench airline, 4 trials)
    assert [round(oracle[k], 4) for k in (1, 2, 3, 4)] == [0.42, 0.2733, 0.22, 0.2]
    r = read_results(TAU_FILE)
    assert np.mean(estimate_pass_hat_k(r.successes, r.totals, 4)) == pytest.approx(oracle[4])


def test_tau_bench_fixture_and_tolerance():
    r = read_tau_bench(FIXTURES / "tau_bench_small.json")
    assert r.task_ids == ("0", "1", "2")
    # task 2: 0.9999995 is within 1e-6 of 1 (a pass), 0.5 is not
    assert r.successes.tolist() == [3, 1, 2] and r.totals.tolist() == [3, 3, 3]
    fr = build_report(r)
    oracle = tau_bench_oracle(FIXTURES / "tau_bench_small.json")
    np.testing.assert_allclose(fr.curve.pass_hat_k, [oracle[k] for k in (1, 2, 3)])


def tau_record(**change: object) -> dict:
    record = {"task_id": 1, "reward": 1.0, "info": {}, "traj": [], "trial": 0}
    record.update(change)
    return {k: v for k, v in record.items() if v is not ...}


@pytest.mark.parametrize("records, message", [
    ([tau_record(), tau_record(task_id="one", trial=1)], "record 1: field 'task_id' must be a "
                                                          "whole number, got 'one'"),
    ([tau_record(), tau_record(task_id=..., trial=1)], "record 1: missing field 'task_id'"),
    ([tau_record(reward="1.0")], "record 0: field 'reward' must be a number, got '1.0'"),
    ([tau_record(reward=float("nan"))], "record 0: field 'reward' must be a finite number"),
    ([tau_record(reward=...)], "record 0: missing field 'reward'"),
    ([tau_record(trial=True)], "record 0: field 'trial' must be a whole number"),
    ([tau_record(info=[1])], "record 0: field 'info' must be an object"),
    ([tau_record(), "oops"], "record 1: expected a JSON object"),
    ([tau_record(), tau_record(reward=0.0)], "record 1: duplicate run: task '1' trial 0 "
                                             "already appears at record 0"),
    ({"not": "an array"}, "a tau-bench results file is a JSON array"),
    ([], "no runs found"),
])
def test_tau_bench_bad_input(tmp_path, records, message):
    path = write(tmp_path, "tau.json", records)
    with pytest.raises(ResultsError) as err:
        read_tau_bench(path)
    assert message in str(err.value)
    assert str(err.value).startswith(str(path))


def test_tau_bench_truncated_json(tmp_path):
    text = json.dumps([tau_record(), tau_record(trial=1)])
    path = write(tmp_path, "tau.json", text[: len(text) // 2])
    with pytest.raises(ResultsError, match=r"tau\.json: not valid JSON at line 1 column \d+ .*"
                                           r"truncated"):
        read_results(path)


def test_duplicate_is_reported_not_double_counted(tmp_path):
    path = write(tmp_path, "tau.json", [tau_record(), tau_record(), tau_record(trial=1)])
    with pytest.raises(ResultsError, match="duplicate run"):
        read_results(path, "tau-bench")


# --------------------------------------------------------------------------
# tau2-bench
# --------------------------------------------------------------------------


def test_tau2_fixture_excludes_infrastructure_errors():
    r = read_tau2(FIXTURES / "tau2_small.json")
    assert r.source == "tau2"
    assert r.task_ids == ("book_flight", "cancel", "lost_bag")
    assert r.totals.tolist() == [2, 3, 0]  # effective n
    assert r.excluded.tolist() == [1, 0, 1]  # left out: infrastructure errors
    assert r.successes.tolist() == [2, 1, 0]  # max_steps with reward_info null is a failure
    assert any("without a reward counted as failures" in n for n in r.notes)
    # a task whose only run hit the infrastructure fails the gate closed, by name
    fr = build_report(r, k=1)
    assert not fr.gate.passed
    assert any("task lost_bag: no runs, so no evidence (1 more left out" in reason
               for reason in fr.gate.reasons)


def tau2_file(*sims: dict, **top: object) -> dict:
    payload = {"timestamp": "t", "info": {"num_trials": 2}, "tasks": [], "simulations": list(sims)}
    payload.update(top)
    return payload


def sim(**change: object) -> dict:
    record = {"id": "x", "task_id": "a", "trial": 0, "termination_reason": "user_stop",
              "reward_info": {"reward": 1.0}}
    record.update(change)
    return {k: v for k, v in record.items() if v is not ...}


@pytest.mark.parametrize("payload, message", [
    (tau2_file(sim(), sim(task_id=..., trial=1)), "simulations[1]: missing field 'task_id'"),
    (tau2_file(sim(task_id=["a"])), "simulations[0]: field 'task_id' must be a string"),
    (tau2_file(sim(reward_info={"reward": "high"})),
     "simulations[0]: field 'reward_info.reward' must be a number, got 'high'"),
    (tau2_file(sim(reward_info={})), "simulations[0]: missing field 'reward_info.reward'"),
    (tau2_file(sim(reward_info=1.0)), "field 'reward_info' must be an object or null"),
    (tau2_file(sim(termination_reason=...)), "simulations[0]: missing field "
                                             "'termination_reason'"),
    (tau2_file(sim(trial="0")), "simulations[0]: field 'trial' must be a whole number"),
    (tau2_file(sim(), sim(reward_info={"reward": 0.0})),
     "simulations[1]: duplicate run: task 'a' trial 0 already appears at simulations[0]"),
    (tau2_file(sim(), info=[]), "info: must be an object"),
    ({"timestamp": "t", "info": {}, "tasks": []}, "field 'simulations' must be an array"),
    (tau2_file(), "no runs found"),
])
def test_tau2_bad_input(tmp_path, payload, message):
    path = write(tmp_path, "tau2.json", payload)
    with pytest.raises(ResultsError) as err:
        read_tau2(path)
    assert message in str(err.value)


def test_tau2_truncated_json(tmp_path):
    text = (FIXTURES / "tau2_small.json").read_text()
    path = write(tmp_path, "tau2.json", text[:300])
    with pytest.raises(ResultsError, match="not valid JSON"):
        read_results(path, "tau2")


# --------------------------------------------------------------------------
# detection
# --------------------------------------------------------------------------


def test_detect_format(tmp_path):
    assert detect_format(FIXTURES / "tau_bench_small.json") == "tau-bench"
    assert detect_format(FIXTURES / "tau2_small.json") == "tau2"
    assert detect_format(FIXTURES / "stable.jsonl") == "jsonl"
    assert detect_format(tmp_path / "x.csv") == "csv"
    assert detect_format(tmp_path / "x.eval") == "inspect"
    odd = write(tmp_path, "odd.json", {"rows": []})
    with pytest.raises(ResultsError, match="cannot tell the format.*supported: jsonl, csv, "
                                           "tau-bench, tau2, inspect"):
        detect_format(odd)


def test_unknown_format_lists_supported(tmp_path):
    with pytest.raises(ResultsError, match="unknown format 'yaml'; supported formats: auto, "
                                           "jsonl, csv, tau-bench, tau2, inspect"):
        read_results(FIXTURES / "stable.jsonl", "yaml")


def test_forced_format_mismatch_is_an_error():
    with pytest.raises(ResultsError, match="a tau2-bench results file is a JSON object"):
        read_results(FIXTURES / "tau_bench_small.json", "tau2")


# --------------------------------------------------------------------------
# Inspect AI
# --------------------------------------------------------------------------


def test_inspect_missing_extra_is_named(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # import now fails
    with pytest.raises(ResultsError, match=r"optional extra 'inspect': pip install "
                                           r"'passk\[inspect\]'"):
        read_inspect(write(tmp_path, "log.json", {"eval": {}}))


@pytest.fixture(scope="module")
def inspect_logs(tmp_path_factory):
    pytest.importorskip("inspect_ai", reason="the optional extra 'inspect' is not installed")
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSample, EvalSpec, \
        write_eval_log
    from inspect_ai.scorer import Score

    spec = EvalSpec(created="2025-01-01T00:00:00+00:00", task="airline", model="mockllm/model",
                    dataset=EvalDataset(name="tiny"), config=EvalConfig())
    # sample 1 passes all 3 epochs, sample 2 passes 1 of 3, sample 3 errors on epoch 3
    outcome = {(1, 1): "C", (1, 2): "C", (1, 3): "C", (2, 1): "I", (2, 2): "C", (2, 3): "I",
               (3, 1): "C", (3, 2): "I"}
    samples = [EvalSample(id=i, epoch=e, input="q", target="a",
                          scores={"match": Score(value=v),
                                  "judge": Score(value=1.0 if v == "C" else 0.5)})
               for (i, e), v in outcome.items()]
    samples.append(EvalSample(id=3, epoch=3, input="q", target="a", scores=None,
                              error={"message": "rate limit", "traceback": "",
                                     "traceback_ansi": ""}))
    log = EvalLog(eval=spec, samples=samples, status="success")
    d = tmp_path_factory.mktemp("inspect")
    paths = {}
    for ext in ("eval", "json"):
        paths[ext] = d / f"log.{ext}"
        write_eval_log(log, str(paths[ext]))
    return paths


@pytest.mark.parametrize("ext", ["eval", "json"])
def test_inspect_log_counts(inspect_logs, ext):
    r = read_results(inspect_logs[ext], scorer="match")
    assert r.source == "inspect"
    assert r.task_ids == ("1", "2", "3")
    assert r.successes.tolist() == [3, 1, 1]
    assert r.totals.tolist() == [3, 3, 2]
    assert r.excluded.tolist() == [0, 0, 1]  # the errored epoch is left out


def test_inspect_several_scorers_need_a_choice(inspect_logs):
    with pytest.raises(ResultsError, match="several scorers \\(match, judge\\); choose one with "
                                           "--scorer"):
        read_results(inspect_logs["eval"])
    with pytest.raises(ResultsError, match="no scorer 'nope' in the log; it has match, judge"):
        read_results(inspect_logs["eval"], scorer="nope")


def test_inspect_success_values(inspect_logs):
    # the judge gives 1.0 for a pass and 0.5 otherwise; 1.0 is a success by default
    r = read_results(inspect_logs["json"], scorer="judge")
    assert r.successes.tolist() == [3, 1, 1]
    r = read_results(inspect_logs["json"], scorer="judge", success_values=["0.5", "1"])
    assert r.successes.tolist() == [3, 3, 2]
    r = read_results(inspect_logs["json"], scorer="match", success_values=["I"])
    assert r.successes.tolist() == [0, 2, 1]


def test_inspect_bad_input(inspect_logs, tmp_path):
    pytest.importorskip("inspect_ai")
    text = inspect_logs["json"].read_text()
    truncated = write(tmp_path, "trunc.json", text[: len(text) // 2])
    with pytest.raises(ResultsError, match="not a readable Inspect AI log .*EOF"):
        read_results(truncated, "inspect")
    payload = json.loads(text)
    payload["samples"][0]["epoch"] = "first"  # a wrong type in a field
    wrong = write(tmp_path, "wrong.json", payload)
    with pytest.raises(ResultsError, match="not a readable Inspect AI log"):
        read_results(wrong, "inspect", scorer="match")
    payload = json.loads(text)
    payload["samples"][1]["scores"]["match"]["value"] = {"a": 1}  # not a single value
    multi = write(tmp_path, "multi.json", payload)
    with pytest.raises(ResultsError, match=r"samples\[1\]: score value .* is not a single value"):
        read_results(multi, "inspect", scorer="match")
    payload = json.loads(text)
    payload["samples"][1] = dict(payload["samples"][0])  # duplicate (sample, epoch)
    dup = write(tmp_path, "dup.json", payload)
    with pytest.raises(ResultsError, match=r"samples\[1\]: duplicate run: task '1' trial 1"):
        read_results(dup, "inspect", scorer="match")
    payload = json.loads(text)
    payload["samples"][2]["scores"] = {}
    missing = write(tmp_path, "missing.json", payload)
    with pytest.raises(ResultsError,
                       match=r"samples\[2\]: sample '\w+' epoch \d has no score from scorer"):
        read_results(missing, "inspect", scorer="match")


def test_inspect_detected_from_json(inspect_logs):
    assert detect_format(inspect_logs["json"]) == "inspect"
    assert read_results(inspect_logs["json"], scorer="match").source == "inspect"
