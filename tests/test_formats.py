"""The benchmark readers: tau-bench, tau2-bench, Inspect AI; detection; bad input."""

from __future__ import annotations

import json
import math
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from inspect_logs import agree_with_inspect
from shared_data import TAU_BENCH_MISSING

from passk.analysis.report import build_report
from passk.metrics import estimate_pass_hat_k
from passk.results.formats import detect_format
from passk.results.formats.inspect_log import read_inspect
from passk.results.formats.tau2 import read_tau2
from passk.results.formats.tau_bench import read_tau_bench
from passk.results.read import ResultsError, read_results

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TAU_DIR = Path(__file__).resolve().parents[1].parent / "shared/data/tau-bench"
TAU_FILE = TAU_DIR / "gpt-4o-airline.json"
needs_tau = pytest.mark.skipif(not TAU_FILE.is_file(),
                               reason=TAU_BENCH_MISSING)


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
    ([tau_record(), tau_record(task_id="one", trial=1)], ("record 1: field 'task_id' must be a "
                                                          "whole number, got 'one'")),
    ([tau_record(), tau_record(task_id=..., trial=1)], "record 1: missing field 'task_id'"),
    ([tau_record(reward="1.0")], "record 0: field 'reward' must be a number, got '1.0'"),
    ([tau_record(reward=float("nan"))], "record 0: field 'reward' must be a finite number"),
    ([tau_record(reward=...)], "record 0: missing field 'reward'"),
    ([tau_record(trial=True)], "record 0: field 'trial' must be a whole number"),
    ([tau_record(info=[1])], "record 0: field 'info' must be an object"),
    ([tau_record(), "oops"], "record 1: expected a JSON object"),
    ([tau_record(), tau_record(reward=0.0)], ("record 1: duplicate run: task '1' trial 0 "
                                             "already appears at record 0")),
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
    assert "1 simulation without a reward counted as a failure" in r.notes
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
    (tau2_file(sim(termination_reason=...)), ("simulations[0]: missing field "
                                             "'termination_reason'")),
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
    with pytest.raises(ResultsError, match=r"cannot tell the format.*supported: jsonl, csv, "
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


def test_inspect_log_needs_no_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "inspect_ai", None)  # any import of it now fails
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    path = write(tmp_path, "log.json", {"version": 2, "status": "success", "eval": {
        "task": "t", "model": "m", "dataset": {"samples": 1}, "config": {}},
        "samples": [{"id": 1, "epoch": 1, "scores": {"match": {"value": "C"}}}]})
    r = read_inspect(path)
    assert (r.task_ids, r.successes.tolist(), r.incomplete) == (("1",), [1], ())


@pytest.fixture(scope="module")
def inspect_logs(tmp_path_factory):
    pytest.importorskip("inspect_ai", reason="the optional extra 'inspect' is not installed")
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalSample,
        EvalSpec,
        write_eval_log,
    )
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
        agree_with_inspect(paths[ext])
    return paths


@pytest.mark.parametrize("ext", ["eval", "json"])
def test_inspect_log_counts(inspect_logs, ext):
    r = read_results(inspect_logs[ext], scorer="match")
    assert r.source == "inspect"
    assert r.task_ids == ("1", "2", "3")
    assert r.successes.tolist() == [3, 1, 1]
    assert r.totals.tolist() == [3, 3, 3]
    assert r.excluded.tolist() == [0, 0, 0]  # the errored epoch is a failure: fails closed
    assert r.overrides == ("--scorer match chosen of 2 scorers (match, judge)",)
    out = read_results(inspect_logs[ext], scorer="match", errors="exclude")
    assert (out.successes.tolist(), out.totals.tolist(), out.excluded.tolist()) == (
        [3, 1, 1], [3, 3, 2], [0, 0, 1])  # left out only on purpose, and said
    assert out.overrides[-1] == ("errored sample epochs excluded, not counted as failures "
                                 "(--errors exclude): 1 left out")


def test_inspect_several_scorers_need_a_choice(inspect_logs):
    with pytest.raises(ResultsError, match="several scorers \\(match, judge\\); choose one with "
                                           "--scorer"):
        read_results(inspect_logs["eval"])
    with pytest.raises(ResultsError, match="no scorer 'nope' in the log; it has match, judge"):
        read_results(inspect_logs["eval"], scorer="nope")


def test_inspect_success_values(inspect_logs):
    # the judge gives 1.0 for a pass and 0.5 otherwise; 1.0 is a success by default
    # 0.5 is neither pass nor fail under Inspect's binary convention: never silently a failure
    with pytest.raises(ResultsError, match=r"scorer 'judge' gives values that are not "
                                           r"pass/fail: 0\.5 \(3\) .*--success-value VALUE "
                                           r"\(repeatable, added to C, True and 1\), "
                                           r"--success-threshold X"):
        read_results(inspect_logs["json"], scorer="judge")
    r = read_results(inspect_logs["json"], scorer="judge", success_threshold=1.0)
    assert r.successes.tolist() == [3, 1, 1]
    assert "a number at least 1 (--success-threshold)" in r.notes[0]
    r = read_results(inspect_logs["json"], scorer="judge", success_values=["0.5"])
    assert r.successes.tolist() == [3, 3, 2]
    # --success-value adds to the defaults: C still counts, and so does I
    r = read_results(inspect_logs["json"], scorer="match", success_values=["I"])
    assert r.successes.tolist() == [3, 3, 2]
    r = read_results(inspect_logs["json"], scorer="match")
    assert r.notes[0] == ("scorer: match; a success is C, True or 1; I, N, False or 0 is a "
                          "failure: counted as a success 'C' (5); as a failure 'I' (3)")


def test_inspect_bad_input(inspect_logs, tmp_path):
    pytest.importorskip("inspect_ai")
    text = inspect_logs["json"].read_text()
    truncated = write(tmp_path, "trunc.json", text[: len(text) // 2])
    with pytest.raises(ResultsError, match=r"trunc.json:\d+: not a valid Inspect .json log "
                                           r"\(.*\); is the file truncated\?"):
        read_results(truncated, "inspect")
    payload = json.loads(text)
    payload["samples"][0]["epoch"] = "first"  # a wrong type in a field
    wrong = write(tmp_path, "wrong.json", payload)
    with pytest.raises(ResultsError, match=r"samples\[0\]: field 'epoch' must be a whole "
                                           "number, got 'first'"):
        read_results(wrong, "inspect", scorer="match")
    payload = json.loads(text)
    payload["samples"][1]["scores"]["match"]["value"] = {"a": 1}  # not a single value
    multi = write(tmp_path, "multi.json", payload)
    with pytest.raises(ResultsError, match=r"samples\[1\]: sample '2' epoch 1: scorer 'match' "
                                           r"gives a dict \(keys a\); choose the key that "
                                           r"decides success with --score-key"):
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


# --------------------------------------------------------------------------
# duplicates in every format that has trials
# --------------------------------------------------------------------------

RESUMED = FIXTURES / "tau_bench_resumed.json"


def test_tau_bench_resumed_run_is_refused_with_the_record_numbers():
    with pytest.raises(ResultsError) as err:
        read_results(RESUMED)
    assert "tau_bench_resumed.json: record 6: duplicate run: task '1' trial 1 already appears " \
           "at record 4" in str(err.value)
    # tau-bench's own metric counts the repeats as more trials: pass^2 above 1
    assert tau_bench_oracle(RESUMED)[2] == pytest.approx((math.comb(3, 2) + 1 + 0) / 3)


@pytest.mark.parametrize("keep, successes, dropped", [
    ("first", [2, 1, 1], "record 6, record 7, record 8"),
    ("last", [2, 2, 0], "record 4, record 2, record 0"),
])
def test_tau_bench_resumed_run_keep_first_or_last(keep, successes, dropped):
    records = json.loads(RESUMED.read_text())
    chosen: dict[tuple[int, int], float] = {}
    for rec in records:  # the oracle: one record of each (task, trial), kept by hand
        if keep == "last" or (rec["task_id"], rec["trial"]) not in chosen:
            chosen[(rec["task_id"], rec["trial"])] = rec["reward"]
    oracle = [sum(r == 1.0 for (t, _), r in chosen.items() if t == task) for task in range(3)]
    r = read_results(RESUMED, duplicates=keep)
    assert r.successes.tolist() == oracle == successes and r.totals.tolist() == [2, 2, 2]
    assert r.notes == ((f"3 duplicate records of a (task, trial) dropped, keeping the {keep} of "
                       f"each (duplicates={keep!r}): {dropped}"),)
    assert r.incomplete == ()


@needs_tau
def test_real_tau_bench_run_resumed(tmp_path):
    records = json.loads(TAU_FILE.read_text())
    # a resumed run re-ran trial 3 of the first five tasks and appended the results
    again = [dict(rec, reward=1.0 - rec["reward"]) for rec in records
             if rec["trial"] == 3 and rec["task_id"] < 5]
    path = write(tmp_path, "resumed.json", records + again)
    with pytest.raises(ResultsError, match=r"record 200: duplicate run: task '\d+' trial 3 "
                                           r"already appears at record 1\d\d"):
        read_results(path)
    first = read_results(path, duplicates="first")
    original = read_results(TAU_FILE)
    assert first.successes.tolist() == original.successes.tolist()
    assert int(first.successes.sum()) == 84
    last = read_results(path, duplicates="last")
    flipped = sum(1 if rec["reward"] == 1.0 else -1 for rec in again)
    assert int(last.successes.sum()) == 84 + flipped and set(last.totals.tolist()) == {4}
    assert "5 duplicate records" in last.notes[0]


def test_tau2_and_inspect_duplicates_keep_first_or_last(tmp_path):
    payload = tau2_file(sim(), sim(trial=1, reward_info={"reward": 0.0}),
                        sim(reward_info={"reward": 0.0}), tasks=[{"id": "a"}])
    path = write(tmp_path, "tau2.json", payload)
    with pytest.raises(ResultsError, match=r"simulations\[2\]: duplicate run"):
        read_results(path)
    assert read_results(path, duplicates="first").successes.tolist() == [1]
    assert read_results(path, duplicates="last").successes.tolist() == [0]


# --------------------------------------------------------------------------
# incomplete runs are named
# --------------------------------------------------------------------------


def test_tau2_fewer_simulations_than_trials_times_tasks():
    r = read_results(FIXTURES / "tau2_small.json")
    # 3 tasks x num_trials 3 = 9 planned; the file holds 7 (lost_bag ran once)
    assert r.incomplete == (("tau2 run holds 7 of 9 simulations (3 tasks × info.num_trials 3); "
                            "1 task has fewer than 3 (lost_bag: 1)"),)
    assert r.incomplete[0] in r.notes
    assert r.excluded_reason == "infrastructure errors"


def test_tau_bench_uneven_trials(tmp_path):
    records = [tau_record(task_id=t, trial=j) for j in range(3) for t in range(4)]
    complete = read_tau_bench(write(tmp_path, "tau.json", records))
    assert complete.incomplete == () and complete.excluded_reason == ""
    cut = records[:-3]  # the last trial stopped after its first task
    r = read_tau_bench(write(tmp_path, "cut.json", cut))
    assert r.totals.tolist() == [3, 2, 2, 2]
    assert r.incomplete == (("tau-bench run has uneven trials: 9 of 12 runs (4 tasks × 3 trials, "
                            "the trials seen); 3 tasks have fewer than 3 (1: 2, 2: 2, 3: 2)"),)


def test_tau_bench_runs_that_raised_are_named():
    records = [tau_record(trial=0), tau_record(trial=1, reward=0.0,
                                               info={"error": "RateLimitError", "traceback": ""})]
    r = read_tau_bench(FIXTURES / "tau_bench_small.json", data=records)
    assert r.successes.tolist() == [1] and r.totals.tolist() == [2]
    assert r.notes == (("1 run ended in an exception (info.error) and count as failures, as "
                       "tau-bench counts them"),)


@needs_tau
def test_real_tau_bench_run_is_complete():
    r = read_results(TAU_FILE)
    assert r.incomplete == () and r.notes == () and r.excluded_reason == ""


# --------------------------------------------------------------------------
# tau2-bench's directory format
# --------------------------------------------------------------------------

TAU2_DIR = FIXTURES / "tau2_dir"


def tau2_monolithic(run: Path) -> dict:
    """What tau2's ``convert-results --to json`` writes: the metadata plus every simulation,
    read in file-name order (``Results.load`` in tau2/data_model/simulation.py)."""
    meta = json.loads((run / "results.json").read_text())
    meta["simulations"] = [json.loads(f.read_text())
                           for f in sorted((run / "simulations").glob("*.json"))]
    return meta


@pytest.mark.parametrize("target", [TAU2_DIR, TAU2_DIR / "results.json"])
def test_tau2_directory_format(tmp_path, target):
    r = read_results(target)
    assert r.source == "tau2" and detect_format(target) == "tau2"
    assert r.task_ids == ("book_flight", "cancel")
    assert (r.successes.tolist(), r.totals.tolist(), r.excluded.tolist()) == ([2, 0], [2, 1],
                                                                              [0, 1])
    assert r.excluded_reason == "infrastructure errors" and r.incomplete == ()
    assert r.notes[0] == ("read tau2-bench's directory format: results.json and 4 simulations "
                          "from simulations/")
    # the same run converted to the monolithic file reads the same
    mono = read_results(write(tmp_path, "mono.json", tau2_monolithic(TAU2_DIR)))
    for name in ("task_ids", "risks", "excluded_reason", "incomplete"):
        assert getattr(mono, name) == getattr(r, name)
    for name in ("successes", "totals", "excluded"):
        np.testing.assert_array_equal(getattr(mono, name), getattr(r, name))


def copy_tau2_dir(tmp_path: Path) -> Path:
    import shutil

    return Path(shutil.copytree(TAU2_DIR, tmp_path / "run"))


def test_tau2_directory_missing_simulation_file_is_incomplete(tmp_path):
    run = copy_tau2_dir(tmp_path)
    gone = sorted((run / "simulations").glob("*.json"))[1]
    gone.unlink()
    r = read_results(run)
    assert r.incomplete == (
        (f"results.json's simulation_index lists 4 simulations but 1 of their files are missing "
        f"from simulations/ ({gone.stem})"),
        ("tau2 run holds 3 of 4 simulations (2 tasks × info.num_trials 2); 1 task has fewer "
        "than 2 (book_flight: 1)"))


def test_tau2_directory_temporary_and_unindexed_files(tmp_path):
    run = copy_tau2_dir(tmp_path)
    (run / "simulations" / ".sim_abc123.json").write_text('{"id": "torn')  # tau2's tmp file
    meta = json.loads((run / "results.json").read_text())
    meta["simulation_index"] = meta["simulation_index"][:3]
    (run / "results.json").write_text(json.dumps(meta))
    r = read_results(run)
    assert r.totals.tolist() == [2, 1] and r.incomplete == ()
    assert any(n.startswith("1 temporary file in simulations/ skipped (.sim_abc123.json)")
               for n in r.notes)
    assert any(n.startswith("1 simulation file in simulations/ not in results.json's "
                            "simulation_index") for n in r.notes)


def test_tau2_directory_bad_input_names_the_file(tmp_path):
    run = copy_tau2_dir(tmp_path)
    bad = sorted((run / "simulations").glob("*.json"))[2]
    bad.write_text(bad.read_text()[:100])
    with pytest.raises(ResultsError, match=rf"run: simulations/{bad.name}: not valid JSON"):
        read_results(run)
    bad.write_text(json.dumps(json.loads((TAU2_DIR / "simulations" / bad.name).read_text())))
    later = sorted((run / "simulations").glob("*.json"))[3]  # cancel's trial 1, now trial 0
    later.write_text(json.dumps({"id": "x", "task_id": "cancel", "trial": 0,
                                 "termination_reason": "user_stop",
                                 "reward_info": {"reward": 1}}))
    with pytest.raises(ResultsError, match=rf"run: simulations/{later.name}: duplicate run: task "
                                           rf"'cancel' trial 0 already appears at "
                                           rf"simulations/{bad.name}"):
        read_results(run)
    import shutil

    shutil.rmtree(run / "simulations")
    with pytest.raises(ResultsError, match=r"results\.json: has no 'simulations' and there is no "
                                           r"simulations/ folder beside it"):
        read_results(run)
    (run / "results.json").unlink()
    with pytest.raises(ResultsError, match=r"run: is a directory, not a results file"):
        read_results(run)


def test_tau2_run_folder_holding_a_monolithic_results_json(tmp_path):
    run = tmp_path / "my_run"  # tau2 saves text runs to data/simulations/<name>/results.json
    run.mkdir()
    (run / "results.json").write_text((FIXTURES / "tau2_small.json").read_text())
    r = read_results(run)
    same = read_results(FIXTURES / "tau2_small.json")
    assert r.successes.tolist() == same.successes.tolist() and r.incomplete == same.incomplete


def test_cli_reads_a_tau2_directory(capsys):
    from passk.cli import main

    assert main(["report", str(TAU2_DIR), "--k", "1", "--json"]) == 0
    out, err = capsys.readouterr()
    assert "as tau2 (detected" in err
    payload = json.loads(out)
    assert [t["runs"] for t in payload["tasks"]] == [2, 1]
    assert payload["notes"][0].startswith("read tau2-bench's directory format")


# --------------------------------------------------------------------------
# Inspect: status, samples x epochs, errored samples
# --------------------------------------------------------------------------


def inspect_log(tmp_path: Path, name: str, *, status: str, ids: list, epochs: int,
                ran: dict, dataset_samples: int | None = None, error: str | None = None) -> Path:
    """An Inspect log written by inspect_ai itself; ``ran`` maps (id, epoch) to "C", "I" or
    None (the sample ended in an error)."""
    pytest.importorskip("inspect_ai", reason="the optional extra 'inspect' is not installed")
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalError,
        EvalLog,
        EvalSample,
        EvalSpec,
        write_eval_log,
    )
    from inspect_ai.scorer import Score

    spec = EvalSpec(created="2025-01-01T00:00:00+00:00", task="airline", model="mockllm/model",
                    dataset=EvalDataset(name="airline", samples=dataset_samples or len(ids),
                                        sample_ids=ids),
                    config=EvalConfig(epochs=epochs))
    samples = [EvalSample(id=i, epoch=e, input="q", target="a",
                          scores=None if v is None else {"match": Score(value=v)},
                          error=None if v is not None else
                          {"message": "sandbox died", "traceback": "", "traceback_ansi": ""})
               for (i, e), v in ran.items()]
    log = EvalLog(eval=spec, samples=samples, status=status,
                  error=None if error is None else EvalError(message=error, traceback="",
                                                             traceback_ansi=""))
    path = tmp_path / name
    write_eval_log(log, str(path))
    agree_with_inspect(path)
    return path


def test_inspect_cancelled_log_is_incomplete(tmp_path):
    path = inspect_log(tmp_path, "cancelled.eval", status="cancelled", ids=list(range(1, 101)),
                       epochs=1, ran={(1, 1): "C", (2, 1): "I", (3, 1): "C"})
    r = read_results(path)
    assert r.totals.sum() == 3 and r.successes.tolist() == [1, 0, 1]
    assert r.incomplete == (("Inspect log status is 'cancelled': 3 of 100 dataset samples × 1 "
                            "epoch were scored; 97 samples never ran (4, 5, 6, 7, 8, and 92 "
                            "more)"),)
    assert r.incomplete[0] in r.notes


def test_inspect_error_log_with_epochs_and_errored_samples(tmp_path):
    ran = {(1, 1): "C", (1, 2): "C", (2, 1): "I", (2, 2): None}
    path = inspect_log(tmp_path, "error.json", status="error", ids=[1, 2, 3, 4, 5], epochs=2,
                       ran=ran, error="RateLimitError: too many requests\ntraceback line")
    r = read_results(path)  # the errored epoch (2, 2) is a failure
    assert (r.successes.tolist(), r.totals.tolist(), r.excluded.tolist()) == ([2, 0], [2, 2],
                                                                              [0, 0])
    r = read_results(path, errors="exclude")
    assert (r.successes.tolist(), r.totals.tolist(), r.excluded.tolist()) == ([2, 0], [2, 1],
                                                                              [0, 1])
    assert r.excluded_reason == "errored samples"
    assert r.incomplete == (("Inspect log status is 'error': 3 of 10 sample epochs (5 dataset "
                            "samples × 2 epochs) were scored (1 more ended in an error); 3 "
                            "samples never ran (3, 4, 5); the eval's error: RateLimitError: "
                            "too many requests"),)


def test_inspect_success_log_short_of_its_samples(tmp_path):
    path = inspect_log(tmp_path, "short.eval", status="success", ids=["a", "b", "c"], epochs=1,
                       ran={("a", 1): "C", ("b", 1): "C"})
    assert read_results(path).incomplete == (
        ("Inspect log holds fewer samples than planned, though its status is 'success': 2 of 3 "
        "dataset samples × 1 epoch were scored; 1 sample never ran (c)"),)


def test_inspect_complete_selection_and_started_status(tmp_path):
    # --limit 2 on a 100-sample dataset: it ran its selection in full, but the selection is
    # narrower than the evaluation (Inspect records samples=len(dataset), sample_ids=selected)
    narrower = ("Inspect log ran a selection of 2 of its dataset's 100 samples (--limit or "
                "--sample-id?): a narrower evaluation is not the whole one")
    path = inspect_log(tmp_path, "limit.eval", status="success", ids=[7, 9], epochs=1,
                       ran={(7, 1): "C", (9, 1): "I"}, dataset_samples=100)
    r = read_results(path)
    assert r.incomplete == (narrower,) and r.excluded_reason == ""
    path = inspect_log(tmp_path, "started.eval", status="started", ids=[7, 9], epochs=1,
                       ran={(7, 1): "C", (9, 1): "I"}, dataset_samples=100)
    assert read_results(path).incomplete == (
        ("Inspect log status is 'started': 2 of 2 selected samples (of the dataset's 100) × 1 "
        "epoch were scored"), narrower)


def test_inspect_fixture_is_complete_and_names_errored_samples(inspect_logs):
    r = read_results(inspect_logs["eval"], scorer="match")
    assert r.incomplete == ()  # status success; the dataset's size is not recorded
    assert r.excluded_reason == ""  # the errored epoch is a failure
    assert "1 sample epoch ended in an error and counts as a failure" in " ".join(r.notes)
    r = read_results(inspect_logs["eval"], scorer="match", errors="exclude")
    assert r.excluded_reason == "errored samples"


def test_cli_options_on_inspect_and_accept_incomplete_flag(tmp_path, capsys):
    from passk.cli import build_parser, main

    path = inspect_log(tmp_path, "cancelled.eval", status="cancelled", ids=list(range(1, 101)),
                       epochs=1, ran={(1, 1): "C", (2, 1): "I", (3, 1): "C"})
    assert main(["report", str(path), "--k", "1", "--json", "--scorer", "match"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any(n.startswith("Inspect log status is 'cancelled': 3 of 100") for n in notes)
    args = build_parser().parse_args(["gate", str(path), "--accept-incomplete"])
    assert args.accept_incomplete is True


def test_inspect_duplicates_keep_first_or_last(inspect_logs, tmp_path):
    payload = json.loads(inspect_logs["json"].read_text())
    again = json.loads(json.dumps(payload["samples"][0]))  # sample 1, epoch 1, scored C
    again["scores"]["match"]["value"] = "I"  # ... and a second record of it, scored I
    payload["samples"][1] = again  # in place of sample 1's epoch 2
    path = write(tmp_path, "dup.json", payload)
    with pytest.raises(ResultsError, match=r"samples\[1\]: duplicate run: task '1' trial 1 "
                                           r"already appears at samples\[0\]"):
        read_results(path, scorer="match")
    for keep in ("first", "last"):
        chosen: dict[tuple[str, int], bool] = {}  # the oracle: one record a (sample, epoch)
        for s in payload["samples"]:
            if keep == "last" or (str(s["id"]), s["epoch"]) not in chosen:  # errored: a failure
                chosen[(str(s["id"]), s["epoch"])] = (s.get("error") is None and
                                                      s["scores"]["match"]["value"] == "C")
        r = read_results(path, scorer="match", duplicates=keep)
        assert r.successes.tolist() == [sum(v for (i, _), v in chosen.items() if i == t)
                                        for t in r.task_ids]
        assert r.totals.tolist() == [sum(1 for (i, _) in chosen if i == t) for t in r.task_ids]
        dropped = "samples[1]" if keep == "first" else "samples[0]"
        assert "1 duplicate record of" in r.notes[0] and r.notes[0].endswith(dropped)
    assert read_results(path, scorer="match", duplicates="first").successes[0] == \
        read_results(path, scorer="match", duplicates="last").successes[0] + 1
