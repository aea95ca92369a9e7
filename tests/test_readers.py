"""The readers of passk.results.formats on what the producers write, checked against their own figures.

terminal-bench's fixtures follow ``terminal_bench/harness/models.py``
(``BenchmarkResults``, ``TrialResults``, ``RunMetadata``); their stored
``pass_at_k`` was computed with terminal-bench's rule (see
``tests/fixtures/README.md``). Inspect logs are written with Inspect's own log
API (``tests/helpers/inspect_logs.py``), and Inspect's own reducers and
metrics (``pass_k``, ``pass_at``, ``accuracy``) are the reference.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from passk.cli import main
from passk.metrics import estimate_pass_at_k, estimate_pass_hat_k
from passk.results.protocol import Protocol
from passk.results.read import ResultsError, read_results

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TB_RUN = FIXTURES / "terminal_bench" / "run"
TB_SUBMISSION = FIXTURES / "terminal_bench" / "submission"


def write(path: Path, payload) -> Path:
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload))
    return path


# --------------------------------------------------------------------------
# terminal-bench
# --------------------------------------------------------------------------


@pytest.mark.parametrize("where", [TB_RUN, TB_RUN / "results.json"])
def test_terminal_bench_run_gives_the_pass_at_k_it_stores(where):
    r = read_results(where)
    assert r.source == "terminal-bench" and len(r) == 5 and r.incomplete == ()
    stored = json.loads((TB_RUN / "results.json").read_text())
    for key, value in stored["pass_at_k"].items():
        k = int(key)  # terminal-bench averages over tasks with at least k trials: all have 5
        assert abs(float(np.mean(estimate_pass_at_k(r.successes, r.totals, k))) - value) < 1e-15
    assert abs(r.successes.sum() / r.totals.sum() - stored["accuracy"]) < 1e-15
    assert stored["n_resolved"] == int(r.successes.sum())
    assert any(n.startswith("the figures results.json stores agree with its trials: pass@2 "
                            "0.6600, pass@4 0.7600, pass@5 0.8000, accuracy 0.5200")
               for n in r.notes)
    # the trial whose harness failed (is_resolved null) is a failure, as terminal-bench counts it
    assert any("is_resolved null; failure modes agent_timeout (1)" in n for n in r.notes)


def test_terminal_bench_cli_report_json_pass_at_k(capsys):
    assert main(["report", str(TB_RUN), "--k", "5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    stored = json.loads((TB_RUN / "results.json").read_text())["pass_at_k"]
    assert out["format"] == "terminal-bench"
    assert abs(np.mean([t["pass_at_k"] for t in out["tasks"]]) - stored["5"]) < 1e-15


def test_terminal_bench_submission_folder_is_trials_of_one_suite():
    r = read_results(TB_SUBMISSION)
    assert r.totals.tolist() == [3, 3, 3, 3]
    per_run = [read_results(d) for d in sorted(TB_SUBMISSION.iterdir())]
    order = {t: i for i, t in enumerate(r.task_ids)}
    summed = np.zeros(4, dtype=int)
    for part in per_run:
        summed[[order[t] for t in part.task_ids]] += part.successes
    assert r.successes.tolist() == summed.tolist()
    assert r.notes[0].startswith("3 run directories read as trials of one suite")


def test_a_folder_is_a_submission_only_when_every_folder_is_a_run(tmp_path, capsys):
    import shutil

    shutil.copytree(TB_SUBMISSION, tmp_path / "sub")
    (tmp_path / "sub" / "notes").mkdir()
    with pytest.raises(ResultsError, match="is a directory, not a results file"):
        read_results(tmp_path / "sub")
    with pytest.raises(ResultsError, match=r"1 of its folders hold no results\.json \(notes\)"):
        read_results(tmp_path / "sub", "terminal-bench")
    (tmp_path / "sub" / "notes").rmdir()
    broken = sorted((tmp_path / "sub").iterdir())[1] / "results.json"
    data = json.loads(broken.read_text())
    data["results"][2]["is_resolved"] = 1
    write(broken, data)
    assert main(["report", str(tmp_path / "sub"), "--format", "terminal-bench"]) == 2
    err = capsys.readouterr().err
    assert (f"{broken.parent}: results.json: results[2]: field 'is_resolved' must be true, "
            "false or null, got 1") in err


def test_terminal_bench_disagreeing_stored_figures_are_said(tmp_path):
    data = json.loads((TB_RUN / "results.json").read_text())
    data["pass_at_k"]["2"] = 0.9
    r = read_results(write(tmp_path / "results.json", data))
    assert any("disagree with its trials: pass@2 0.9000 (the trials give 0.6600)" in n
               for n in r.notes)


def test_terminal_bench_uneven_trials_are_incomplete(tmp_path):
    data = json.loads((TB_RUN / "results.json").read_text())
    data["results"] = [t for t in data["results"] if t["trial_name"] != "fix-git.3-of-5"]
    r = read_results(write(tmp_path / "results.json", data))
    assert r.incomplete and "1 task has fewer than 5 (fix-git: 4)" in r.incomplete[0]


# --------------------------------------------------------------------------
# Inspect AI: scores beyond pass/fail
# --------------------------------------------------------------------------


@pytest.fixture
def inspect_log(tmp_path):
    pytest.importorskip("inspect_ai")
    from inspect_logs import write_log

    def make(values, name="log.eval", **kw):
        return write_log(tmp_path / name, values, **kw)
    return make


def _inspect_reduce(reducer, values):
    from inspect_ai.scorer import Score

    return reducer([Score(value=v) for v in values]).value


def test_grades_are_never_silently_failures(inspect_log, capsys):
    grades = {(1, 1): "10", (1, 2): "8", (2, 1): "6", (2, 2): "10"}
    log = inspect_log(grades)
    assert main(["report", str(log)]) == 2
    err = capsys.readouterr().err
    assert ("scorer 'match' gives values that are not pass/fail: '10' (2), '6' (1), '8' (1)"
            in err)
    assert "--success-value VALUE" in err and "--success-threshold X" in err
    # Inspect's pass_k(1) counts a value >= 1 as correct: every grade passes
    from inspect_ai.scorer import pass_k

    by_sample = {1: ["10", "8"], 2: ["6", "10"]}
    inspect_pass1 = np.mean([_inspect_reduce(pass_k(1), v) for v in by_sample.values()])
    r = read_results(log, success_threshold=1.0)
    mine = float(np.mean(estimate_pass_hat_k(r.successes, r.totals, 1)))
    assert mine == inspect_pass1 == 1.0
    # a stricter threshold, as Inspect's pass_k(k, value=8)
    r = read_results(log, success_threshold=8)
    for i, task in enumerate(r.task_ids):
        assert estimate_pass_hat_k(r.successes[i], r.totals[i], 2) == _inspect_reduce(
            pass_k(2, value=8), by_sample[int(task)])
    assert "a success is C, True or 1, or a number at least 8 (--success-threshold)" in r.notes[0]
    assert "counted as a success '10' (2), '8' (1); as a failure '6' (1)" in r.notes[0]


def test_partial_credit_is_refused_then_chosen(inspect_log):
    from inspect_ai.scorer import accuracy, pass_at

    values = {(1, 1): 1.0, (1, 2): 0.5, (2, 1): 0.25, (2, 2): 1.0, (3, 1): 0.0, (3, 2): 0.5}
    log = inspect_log(values)
    with pytest.raises(ResultsError, match=r"not pass/fail: 0\.5 \(2\), 0\.25 \(1\)"):
        read_results(log)
    r = read_results(log, success_threshold=1.0)
    assert r.successes.tolist() == [1, 1, 0]
    for i, task in enumerate(r.task_ids):  # Inspect's pass_at(k) at the same threshold
        mine = estimate_pass_at_k(r.successes[i], r.totals[i], 2)
        theirs = _inspect_reduce(pass_at(2), [v for (s, _), v in values.items() if s == int(task)])
        assert mine == theirs
    r = read_results(log, success_values=["0.5"])
    assert r.successes.tolist() == [2, 1, 1]
    assert "0.5 (--success-value), or C, True or 1" in r.notes[0]
    # accuracy (the mean of the values) is not a pass rate; the threshold says which passes
    from inspect_ai.scorer import SampleScore, Score

    acc = accuracy()([SampleScore(score=Score(value=v)) for v in values.values()])
    assert math.isclose(acc, np.mean(list(values.values())))


def test_dict_scores_need_a_key(inspect_log):
    values = {(1, 1): {"correct": "C", "style": "terse"},
              (1, 2): {"correct": "I", "style": "long"}}
    log = inspect_log(values)
    with pytest.raises(ResultsError, match=r"gives a dict \(keys correct, style\); choose the key "
                                           r"that decides success with --score-key"):
        read_results(log)
    r = read_results(log, score_key="correct")
    assert (r.successes.tolist(), r.totals.tolist()) == ([1], [2])
    with pytest.raises(ResultsError, match="no key 'nope' in scorer 'match'"):
        read_results(log, score_key="nope")
    with pytest.raises(ResultsError, match="not a number, so --success-threshold 1 cannot"):
        read_results(log, score_key="style", success_threshold=1)


def test_success_value_help_states_its_meaning(capsys):
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "added to the defaults C, True and 1" in out
    assert "--success-threshold X" in out and "--score-key KEY" in out


def test_every_inspect_report_says_which_values_counted(inspect_log, capsys):
    log = inspect_log({(1, 1): "C", (1, 2): "I", (2, 1): "C", (2, 2): "C"})
    assert main(["report", str(log)]) == 0
    out = capsys.readouterr().out
    assert ("note: scorer: match; a success is C, True or 1; I, N, False or 0 is a failure: "
            "counted as a success 'C' (3); as a failure 'I' (1)") in out


# --------------------------------------------------------------------------
# Inspect AI: early stopping
# --------------------------------------------------------------------------


CURTAILED = Protocol({"stopping": "curtailed", "k": 2, "min_overall_pass_hat_k": 0.5,
                      "max_flakiness": 0.5, "gate_on": "estimate", "confidence": 0.95,
                      "class_threshold": 0.2, "default_runs": 4, "min_runs": 0})


def _curtailed_log(inspect_log, manager="passk.gate.curtailment", name="cur.eval", **extra):
    from inspect_logs import early_stopping

    # sample 1 passes 4 of 4; sample 2 fails its first 2 and was stopped (its verdict settled)
    values = {(1, e): "C" for e in range(1, 5)} | {(2, 1): "I", (2, 2): "I"}
    stops = [(2, 3), (2, 4)]
    metadata = {"protocol": CURTAILED.to_dict(), "settled_early": {"2": 2},
                "epochs_planned": 8, "epochs_run": 6, "epochs_saved": 2} | extra
    return inspect_log(values, name=name, epochs=4,
                       early_stopping=early_stopping(manager, stops, metadata))


def test_passk_curtailment_is_settled_early_not_incomplete(inspect_log, capsys):
    log = _curtailed_log(inspect_log)
    r = read_results(log)
    assert r.incomplete == () and r.protocol == CURTAILED
    assert dict(r.settled_early) == {"2": 4}  # its runs planned (the log records 2 scored)
    assert any("passk.gate.curtailment settled 1 sample early: 2 sample epochs not run" in n
               for n in r.notes)
    # decided under the log's protocol (k 2, bar 0.5), as on the full run: mean pass^2 = 0.5
    assert main(["gate", str(log)]) == 0
    out = capsys.readouterr().out
    assert "incomplete" not in out and "overall pass^2 = 0.500" in out
    assert "(bar 0.500, flakiness cap 0.500" in out


def test_other_early_stopping_is_incomplete(inspect_log, capsys):
    log = _curtailed_log(inspect_log, manager="random-stopper", name="other.eval")
    r = read_results(log)
    assert r.protocol is None and dict(r.settled_early) == {}
    assert r.incomplete == (("Inspect log's early stopping (random-stopper) skipped 2 sample "
                            "epochs, which never ran: 6 of 8 sample epochs (2 dataset samples "
                            "× 4 epochs) were scored"),)
    assert main(["gate", str(log), "--k", "1", "--min-overall", "0"]) == 1
    assert "incomplete results: Inspect log's early stopping" in capsys.readouterr().out


def test_passk_curtailment_with_a_broken_protocol_is_named(inspect_log):
    log = _curtailed_log(inspect_log, name="bad.eval",
                         protocol={"settings": {"k": 2}, "fingerprint": "0000"})
    with pytest.raises(ResultsError, match=r"results\.early_stopping\.metadata: "
                                           r"passk\.gate\.curtailment recorded no readable protocol"):
        read_results(log)


# --------------------------------------------------------------------------
# several files as trials of one suite
# --------------------------------------------------------------------------


def test_several_logs_are_trials_of_one_suite(inspect_log, capsys):
    a = inspect_log({(1, 1): "C", (2, 1): "I"}, name="a.eval")
    b = inspect_log({(1, 1): "C", (2, 1): "C"}, name="b.eval")
    c = inspect_log({(1, 1): "I", (2, 1): "C"}, name="c.eval")
    r = read_results([a, b, c])
    assert (r.successes.tolist(), r.totals.tolist()) == ([2, 2], [3, 3])
    assert main(["report", str(a), str(b), str(c), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [t["runs"] for t in out["tasks"]] == [3, 3]
    assert out["notes"][0].startswith("3 files read as trials of one suite")


def test_several_files_must_match(inspect_log, tmp_path):
    a = inspect_log({(1, 1): "C", (2, 1): "I"}, name="a.eval")
    other_tasks = inspect_log({(1, 1): "C", (3, 1): "C"}, name="b.eval")
    with pytest.raises(ResultsError, match=r"b\.eval: lacks 1 of .*a\.eval's tasks \(2\) and has "
                                           r"1 tasks .* has not \(3\)"):
        read_results([a, other_tasks])
    other_eval = inspect_log({(1, 1): "C", (2, 1): "I"}, name="c.eval", task="retail")
    with pytest.raises(ResultsError, match=r"c.eval: is an evaluation of 'retail' but .*'airline'"):
        read_results([a, other_eval])
    with pytest.raises(ResultsError, match="is given twice"):
        read_results([a, a])
    jsonl = write(tmp_path / "x.jsonl", '{"task_id": "1", "success": true}\n'
                  '{"task_id": "2", "success": true}\n')
    with pytest.raises(ResultsError, match=r"is jsonl results but .* is inspect"):
        read_results([a, jsonl])
    header = json.dumps({"protocol": Protocol({"k": 3}).to_dict()})
    with_protocol = write(tmp_path / "p.jsonl", header + "\n" + jsonl.read_text())
    with pytest.raises(ResultsError, match=r"records protocol .* but .*x.jsonl records none"):
        read_results([jsonl, with_protocol])


# --------------------------------------------------------------------------
# tau2, JSON Lines, CSV: the faults of issue 18
# --------------------------------------------------------------------------


def test_tau2_bare_array_is_read_as_tau2(tmp_path, capsys):
    sims = [{"id": f"s{i}", "task_id": str(t), "trial": i % 2,
             "termination_reason": "user_stop", "reward_info": {"reward": float(i % 3 == 0)}}
            for i, t in enumerate([0, 0, 1, 1])]
    path = write(tmp_path / "sims.json", sims)
    r = read_results(path)
    assert r.source == "tau2" and r.task_ids == ("0", "1")
    assert (r.successes.tolist(), r.totals.tolist()) == ([1, 1], [2, 2])
    assert "bare JSON array of tau2-bench simulations" in r.notes[0]
    sims[1]["trial"] = "x"
    write(path, sims)
    assert main(["report", str(path)]) == 2
    assert "sims.json: record 1: field 'trial' must be a whole number" in capsys.readouterr().err


def test_a_garbage_simulation_file_is_named(tmp_path):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(FIXTURES / "tau2_dir", run)
    bad = sorted((run / "simulations").glob("*.json"))[1]
    bad.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe garbage")
    with pytest.raises(ResultsError, match=rf"run: simulations/{bad.name}: not a text file"):
        read_results(run)


def test_a_huge_jsonl_trial_label_is_read(tmp_path, capsys):
    path = write(tmp_path / "big.jsonl", "".join(
        json.dumps({"task_id": "a", "trial": 2**63 + i, "success": i < 2}) + "\n"
        for i in range(3)))
    r = read_results(path)
    assert (r.successes.tolist(), r.totals.tolist()) == ([2], [3])
    assert main(["report", str(path), "--k", "1"]) == 0
    dup = write(tmp_path / "dup.jsonl", path.read_text() + json.dumps(
        {"task_id": "a", "trial": 2**63, "success": True}) + "\n")
    with pytest.raises(ResultsError, match=r"dup.jsonl:4: duplicate run"):
        read_results(dup)


@pytest.mark.parametrize("row, message", [
    ("a,1,true,extra", "big.csv:3: 4 cells where the header has 3"),
    ("a,1", "big.csv:3: 2 cells where the header has 3: no cell for 'success'"),
    ("a", "big.csv:3: 1 cells where the header has 3: no cell for 'trial', 'success'"),
])
def test_a_csv_row_of_the_wrong_width_names_its_line(tmp_path, row, message):
    path = write(tmp_path / "big.csv", f"task_id,trial,success\na,0,true\n{row}\n")
    with pytest.raises(ResultsError, match=message):
        read_results(path)


def test_an_all_errored_log_says_why_the_curve_has_no_interval(inspect_log, capsys):
    log = inspect_log({}, errored=[(1, 1), (2, 1)], sample_ids=[1, 2])
    assert main(["report", str(log), "--k", "1", "--errors", "exclude"]) == 0
    out = capsys.readouterr().out
    assert "95% )" not in out
    assert "(no 95% interval: no task has 1 counted runs to estimate from)" in out


def test_a_task_list_is_not_results(capsys):
    tasks = Path(__file__).resolve().parents[1] / "examples" / "oncall_tasks.jsonl"
    assert main(["report", str(tasks)]) == 2
    err = capsys.readouterr().err
    assert "missing field 'success'; this looks like a task list for `passk run ADAPTER TASKS " \
           "--log LOG`" in err


# --------------------------------------------------------------------------
# bad input for every new format: exit 2, one line naming the file and the record
# --------------------------------------------------------------------------


def _tb(results):
    return {"id": "x", "results": results, "pass_at_k": {}, "accuracy": 0.0}


def _trial(task="t", name="t.1-of-2", resolved=True):
    return {"task_id": task, "trial_name": name, "is_resolved": resolved}


BAD_TERMINAL_BENCH = [
    ("truncated", '{"results": [{"task_id": "t", "trial_na', "not valid JSON at line 1"),
    ("empty", "", "is empty"),
    ("binary", b"\x00\x9f\x92\x96binary", "not a text file"),
    ("missing key", _tb([{"task_id": "t", "is_resolved": True}]),
     r"results\[0\]: missing field 'trial_name'"),
    ("wrong type", _tb([_trial(resolved="yes")]),
     r"results\[0\]: field 'is_resolved' must be true, false or null, got 'yes'"),
    ("wrong type of task", _tb([_trial(task=7)]),
     r"results\[0\]: field 'task_id' must be a string, got 7"),
    ("no attempt", _tb([_trial(name="t.first")]), r"results\[0\]: trial_name 't.first' has no"),
    ("huge values", _tb([_trial(name=f"t.{10**30}-of-2")]),
     (r"results\[0\]: trial_name .* attempt 1000000000000000000000000000000 is not between 1 "
     r"and 2")),
    ("duplicates", _tb([_trial(), _trial()]),
     r"results\[1\]: duplicate run: task 't' trial 0 already appears at results\[0\]"),
    ("not an object", _tb(["t.1-of-2"]), r"results\[0\]: expected a JSON object"),
    ("results not a list", {"results": {"t": 1}, "pass_at_k": {}},
     "field 'results' must be an array of trials"),
]


@pytest.mark.parametrize("kind, payload, message", BAD_TERMINAL_BENCH,
                         ids=[b[0] for b in BAD_TERMINAL_BENCH])
def test_terminal_bench_bad_input(tmp_path, capsys, kind, payload, message):
    path = tmp_path / "results.json"
    if isinstance(payload, bytes):
        path.write_bytes(payload)
    else:
        write(path, payload)
    assert main(["report", str(path), "--format", "terminal-bench"]) == 2
    _, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert str(path) in lines[0]
    import re

    assert re.search(message, lines[0]), lines[0]


def _sim(i=0, **over):
    sim = {"id": f"s{i}", "task_id": "t", "trial": i, "termination_reason": "user_stop",
           "reward_info": {"reward": 1.0}}
    return sim | over


BAD_TAU2_ARRAY = [
    ("truncated", '[{"id": "s0", "task_id": "t", "termination_re', "not valid JSON"),
    ("binary", b"\xff\xfe\x00[binary", "not a text file"),
    ("missing key", [{k: v for k, v in _sim().items() if k != "task_id"}],
     "record 0: missing field 'task_id'"),
    ("wrong type", [_sim(reward_info={"reward": "high"})],
     "record 0: field 'reward_info.reward' must be a number, got 'high'"),
    ("huge values", [_sim(reward_info={"reward": 1e400})],
     "record 0: field 'reward_info.reward' must be a finite number"),
    ("duplicates", [_sim(0), _sim(0)], "record 1: duplicate run: task 't' trial 0"),
    ("not a simulation", [{"task_id": 0, "reward": 1.0, "trial": 0}],
     "a tau2-bench results file is a JSON object, or a bare array of simulations"),
]


@pytest.mark.parametrize("kind, payload, message", BAD_TAU2_ARRAY,
                         ids=[b[0] for b in BAD_TAU2_ARRAY])
def test_tau2_array_bad_input(tmp_path, capsys, kind, payload, message):
    path = tmp_path / "sims.json"
    if isinstance(payload, bytes):
        path.write_bytes(payload)
    else:
        write(path, payload)
    assert main(["report", str(path), "--format", "tau2"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert str(path) in err and message in err, err


def _bad_inspect_logs(tmp_path, make):
    good = make({(1, 1): "C", (1, 2): "I", (2, 1): "C"}, name="good.json")
    text = good.read_text()
    cases = {
        "truncated": (text[: len(text) // 2], "is the file truncated?"),
        "empty": ("", "is empty"),
        "binary": (b"PK\x03\x04\x00\x00garbage zip", ("is not a complete Inspect .eval log "
                   "(the zip's end is missing: was it copied while Inspect was still writing?)")),
    }
    missing = json.loads(text)
    del missing["samples"][0]["scores"]
    cases["missing key"] = (missing, ("samples[0]: sample '1' epoch 1 has no score from scorer "
                                     "'match'"))
    wrong = json.loads(text)
    wrong["samples"][0]["scores"]["match"]["value"] = [1, 0]
    cases["wrong type"] = (wrong, ("samples[0]: score value [1, 0] of scorer 'match' is not a "
                                  "single value"))
    huge = json.loads(text)
    huge["samples"][0]["scores"]["match"]["value"] = 10**400
    cases["huge values"] = (huge, "not pass/fail")
    dup = json.loads(text)
    dup["samples"][1] = dict(dup["samples"][0])
    cases["duplicates"] = (dup, "samples[1]: duplicate run: task '1' trial 1")
    return cases


@pytest.mark.parametrize("kind", ["truncated", "empty", "binary", "missing key", "wrong type",
                                  "huge values", "duplicates"])
def test_inspect_bad_input_is_one_line(tmp_path, capsys, inspect_log, kind):
    payload, message = _bad_inspect_logs(tmp_path, inspect_log)[kind]
    path = tmp_path / ("bad.eval" if kind == "binary" else "bad.json")
    if isinstance(payload, bytes):
        path.write_bytes(payload)
    elif isinstance(payload, str):
        path.write_text(payload)
    else:
        path.write_text(json.dumps(payload))
    assert main(["report", str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert str(path) in err and message in err, err
