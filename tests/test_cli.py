"""The passk command on every format: report, gate, plan, exit codes and messages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from shared_data import TAU_BENCH_MISSING

from passk.analysis.plan import plan_tasks
from passk.cli import main

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TAU_BENCH = str(FIXTURES / "tau_bench_small.json")
TAU2 = str(FIXTURES / "tau2_small.json")
STABLE = str(FIXTURES / "stable.jsonl")
TAU_FILE = Path(__file__).resolve().parents[1].parent / "shared/data/tau-bench/gpt-4o-airline.json"

REPORT_KEYS = {"task_id", "risk", "runs", "successes", "pass_rate", "pass_at_k", "pass_hat_k",
               "flakiness", "ci", "lower_bound", "class"}


def write_jsonl(tmp_path: Path, counts: dict[str, tuple[int, int]], name="runs.jsonl") -> str:
    path = tmp_path / name
    path.write_text("".join(json.dumps({"task_id": t, "trial": j, "success": j < c}) + "\n"
                            for t, (c, n) in counts.items() for j in range(n)))
    return str(path)


# --------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------


def test_report_tau_bench_table_says_format_on_stderr(capsys):
    assert main(["report", TAU_BENCH]) == 0
    out, err = capsys.readouterr()
    assert "read" in err and "as tau-bench (detected; --format to override)" in err
    lines = out.splitlines()
    assert lines[0].split()[:6] == ["task", "risk", "n", "left", "out", "passed"]
    assert lines[1].split()[0] == "1"  # the flaky task (1 of 3) on top
    assert "pass^3" in lines[0] and "suite of 3 tasks" in out
    assert out.count("\n") > 8 and "gate: " in out


def test_report_json_keeps_schema_and_adds_keys(capsys):
    assert main(["report", TAU2, "--json", "--k", "1"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert set(payload) >= {"k", "tasks", "gate", "curve", "format", "notes"}
    assert payload["format"] == "tau2"
    task = payload["tasks"][0]
    assert set(task) >= REPORT_KEYS and {"excluded", "k", "pass_hat_k_by_k"} <= set(task)
    assert [t["excluded"] for t in payload["tasks"]] == [1, 0, 1]
    assert [t["runs"] for t in payload["tasks"]] == [2, 3, 0]
    assert set(payload["gate"]) >= {"overall", "passed", "flaky_tasks", "reasons", "on"}
    assert payload["curve"]["k"] == [1]


def test_report_markdown(capsys):
    assert main(["report", STABLE, "--markdown"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| task | risk | n | left out |")
    assert "**gate: PASSED" in out


def test_report_default_k_is_smallest_n(capsys):
    assert main(["report", STABLE, "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["k"] == 3 and payload["curve"]["k"] == [1, 2, 3]


@pytest.mark.skipif(not TAU_FILE.is_file(), reason=TAU_BENCH_MISSING)
def test_report_on_real_tau_bench_run(capsys):
    assert main(["report", str(TAU_FILE), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    # tau-bench's published pass^1..4, as exact fractions of its 50 tasks
    assert payload["curve"]["pass_hat_k"] == pytest.approx([21 / 50, 41 / 150, 11 / 50, 1 / 5],
                                                           rel=1e-14)


def test_report_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib", reason="the optional extra 'plot' is not installed")
    png = tmp_path / "curves.png"
    assert main(["report", TAU_BENCH, "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_plot_without_matplotlib(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["report", TAU_BENCH, "--plot", str(tmp_path / "x.png")]) == 2
    assert "optional extra 'plot'" in capsys.readouterr().err


# --------------------------------------------------------------------------
# gate
# --------------------------------------------------------------------------


def test_gate_on_lower_bound_blocks_three_of_three(tmp_path, capsys):
    path = write_jsonl(tmp_path, {"a": (3, 3)})
    assert main(["gate", path, "--k", "1", "--min-overall", "0.9"]) == 0
    capsys.readouterr()
    assert main(["gate", path, "--k", "1", "--min-overall", "0.9", "--on", "lower-bound",
                 "--json"]) == 1
    gate = json.loads(capsys.readouterr().out)["gate"]
    assert gate["on"] == "lower-bound" and gate["overall"] == pytest.approx(0.368403, abs=1e-6)
    assert gate["reasons"][0].startswith("overall lower bound on pass^1 (mean of per-task 95% "
                                         "exact bounds) 0.368 is below the bar 0.900")
    assert "a (3/3 passed, bound 0.368)" in gate["reasons"][1]


def test_gate_min_runs_and_per_risk_k_fail_closed_by_name(capsys):
    assert main(["gate", STABLE, "--k", "3", "--min-overall", "0.5"]) == 0
    capsys.readouterr()
    assert main(["gate", STABLE, "--k", "3", "--k-for", "high-risk-write=5",
                 "--min-overall", "0.5"]) == 1
    out = capsys.readouterr().out
    assert "task refund: 3 runs are too few to estimate pass^5 (its k = 5, risk " \
           "high-risk-write)" in out
    assert main(["gate", STABLE, "--k", "3", "--min-runs", "5", "--json"]) == 1
    gate = json.loads(capsys.readouterr().out)["gate"]
    assert gate["reasons"] == ["task refund: 3 runs, fewer than the minimum 5"]


def test_gate_excluded_runs_are_named(capsys):
    assert main(["gate", TAU2, "--k", "1"]) == 1
    out = capsys.readouterr().out
    assert "task lost_bag: no runs, so no evidence (1 more left out as infrastructure " \
           "errors)" in out


@pytest.mark.parametrize("argv, message", [
    (["gate", STABLE, "--format", "yaml"], "invalid choice: 'yaml'"),
    (["gate", STABLE, "--k-for", "high-risk-write"], "must read RISK=K"),
    (["gate", STABLE, "--on", "median"], "invalid choice: 'median'"),
])
def test_gate_bad_options_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("content, message", [
    ('[{"task_id": 1, "reward": "1", "info": {}, "traj": [], "trial": 0}]',
     "bad.json: record 0: field 'reward' must be a number"),
    ('[{"task_id": 1, "reward": 1.0, "info": {}, "traj": [], "trial": 0}', "not valid JSON"),
    ('{"rows": 1}', "cannot tell the format"),
])
def test_gate_bad_input_is_one_line_exit_2(tmp_path, capsys, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    assert main(["gate", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("passk gate: error: ") and message in err[0]


def test_no_traceback_in_a_real_process(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('[{"task_id": 1, "reward": "high", "info": {}, "traj": [], "trial": 0}]')
    done = subprocess.run([sys.executable, "-m", "passk", "gate", str(path)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert done.stderr.strip() == (f"passk gate: error: {path}: record 0: field 'reward' must be "
                                   f"a number, got 'high'")


# --------------------------------------------------------------------------
# plan
# --------------------------------------------------------------------------


def test_plan_target_unchanged(capsys):
    assert main(["plan", "--target", "0.9", "--k", "5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs_needed"] == 143


def test_plan_file(tmp_path, capsys):
    path = write_jsonl(tmp_path, {"solid": (12, 12), "coin": (6, 12), "new": (3, 3)})
    assert main(["plan", path, "--k", "1", "--max-n", "12", "--on", "lower-bound",
                 "--min-overall", "0.7", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    by = {t["task_id"]: t for t in payload["tasks"]}
    assert by["solid"]["open"] is False  # at the maximum n: nothing can change
    assert by["new"]["clears"] is False and by["new"]["open"] is True
    assert by["new"]["extra_runs_at_most"] == 9
    assert payload["total_extra_runs_at_most"] == sum(t["extra_runs_at_most"]
                                                      for t in payload["tasks"])
    assert main(["plan", path, "--k", "1", "--max-n", "12"]) == 0
    out = capsys.readouterr().out
    assert "the suite needs at most" in out and out.splitlines()[1].split()[0] == "task"


def test_plan_settles_when_outcome_is_fixed():
    # 0 of 10 with room for 2 more runs: no outcome can lift pass^1 to 0.7, so settled
    r = read_results_counts({"dead": (0, 10)})
    plan = plan_tasks(r, [1], [12], min_overall_pass_hat_k=0.7)[0]
    assert (plan.clears, plan.open, plan.extra_at_most) == (False, False, 0)
    # 9 of 10 at k = 1: one more failure (9/11) keeps it >= 0.7 but the flakiness cap flips
    r = read_results_counts({"edge": (10, 10)})
    plan = plan_tasks(r, [1], [12], min_overall_pass_hat_k=0.7)[0]
    assert plan.clears and plan.open and plan.extra_at_most == 2


def read_results_counts(counts):
    from passk.results.read import Run, results_from_runs
    return results_from_runs([Run(t, j < c, j) for t, (c, n) in counts.items()
                              for j in range(n)])


# --------------------------------------------------------------------------
# one rule for incomplete inputs: named, failing closed unless --accept-incomplete
# --------------------------------------------------------------------------


@pytest.fixture
def unfinished_logs(tmp_path):
    pytest.importorskip("inspect_ai")
    from inspect_logs import write_log

    # 4 selected samples x 2 epochs: an errored eval and a cancelled one, 2 samples never ran
    errored = write_log(tmp_path / "err.eval", {(1, 1): "C", (2, 1): "C", (1, 2): "C"},
                        epochs=2, sample_ids=[1, 2, 3, 4], status="error",
                        error_message="boom")
    cancelled = write_log(tmp_path / "cancel.eval", {(1, 1): "C", (2, 1): "I"}, epochs=2,
                          sample_ids=[1, 2, 3, 4], status="cancelled")
    done = write_log(tmp_path / "done.eval", {(i, e): "C" for i in (1, 2, 3, 4) for e in (1, 2)},
                     epochs=2)
    return str(errored), str(cancelled), str(done)


def test_diff_names_incomplete_inputs_and_fails_closed(unfinished_logs, capsys):
    errored, cancelled, _ = unfinished_logs
    assert main(["diff", errored, cancelled]) == 1
    out = capsys.readouterr().out
    assert f"incomplete input {errored}: Inspect log status is 'error'" in out
    assert f"incomplete input {cancelled}: Inspect log status is 'cancelled'" in out
    assert "(--accept-incomplete to compare anyway)" in out
    assert main(["diff", errored, cancelled, "--accept-incomplete"]) == 0
    assert "(accepted)" in capsys.readouterr().out
    assert main(["diff", errored, cancelled, "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["failed_closed_on_incomplete"] is True and len(out["incomplete"]) == 2


def test_gate_baseline_names_an_incomplete_baseline(unfinished_logs, capsys):
    _, cancelled, done = unfinished_logs
    assert main(["gate", done, "--baseline", cancelled, "--k", "1", "--min-overall", "0"]) == 1
    out = capsys.readouterr().out
    assert f"baseline incomplete input {cancelled}: Inspect log status is 'cancelled'" in out
    assert main(["gate", done, "--baseline", cancelled, "--k", "1", "--min-overall", "0",
                 "--accept-incomplete"]) == 0
    assert main(["gate", cancelled, "--baseline", done, "--k", "1", "--min-overall", "0"]) == 1
    assert "incomplete results: Inspect log status is 'cancelled'" in capsys.readouterr().out


def test_report_names_an_incomplete_input(unfinished_logs, capsys):
    _, cancelled, _ = unfinished_logs
    assert main(["report", cancelled, "--k", "1", "--min-overall", "0"]) == 0
    out = capsys.readouterr().out
    assert "gate: BLOCKED" in out and "incomplete results: Inspect log status is 'cancelled'" in out
    assert main(["report", cancelled, "--k", "1", "--min-overall", "0",
                 "--max-flakiness", "1", "--accept-incomplete"]) == 0
    assert "gate: PASSED" in capsys.readouterr().out


def test_plan_counts_the_samples_that_never_ran(unfinished_logs, capsys):
    _, cancelled, _ = unfinished_logs
    assert main(["plan", cancelled, "--k", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    by_task = {t["task_id"]: t for t in out["tasks"]}
    assert set(by_task) == {"1", "2", "3", "4"} and out["never_ran"] == ["3", "4"]
    assert by_task["3"]["runs"] == 0 and by_task["3"]["extra_runs_at_most"] == 5
    assert out["total_extra_runs_at_most"] == sum(t["extra_runs_at_most"] for t in out["tasks"])
    assert main(["plan", cancelled, "--k", "1", "--json", "--accept-incomplete"]) == 0
    accepted = json.loads(capsys.readouterr().out)
    assert {t["task_id"] for t in accepted["tasks"]} == {"1", "2"}
    assert accepted["total_extra_runs_at_most"] == out["total_extra_runs_at_most"] - 10
    assert main(["plan", cancelled, "--k", "1"]) == 0
    text = capsys.readouterr().out
    assert "2 tasks of the file's plan never ran; each is counted above with 0 runs" in text
    assert f"incomplete input {cancelled}: Inspect log status is 'cancelled'" in text


# --------------------------------------------------------------------------
# output hygiene: untrusted text from files
# --------------------------------------------------------------------------


HOSTILE = "a\x1b[31mred|x\n<img src=x onerror=alert(1)>"


def test_control_characters_never_reach_the_terminal(tmp_path, capsys):
    path = tmp_path / "hostile.jsonl"
    path.write_text("".join(json.dumps({"task_id": t, "trial": i, "success": True}) + "\n"
                            for t in (HOSTILE, "b") for i in range(2)))
    for command in (["report", str(path)], ["gate", str(path)], ["plan", str(path)],
                    ["diff", str(path), str(path)]):
        main(command)
        out, err = capsys.readouterr()
        assert "\x1b" not in out + err, command
        assert "a\\x1b[31mred|x\\n<img" in out, command
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"task_id": "x\x1b[2J", "trial": "one", "success": True}) + "\n")
    assert main(["report", str(bad)]) == 2
    assert "\x1b" not in capsys.readouterr().err


def test_markdown_escapes_pipes_newlines_and_html(tmp_path, capsys):
    path = tmp_path / "hostile.jsonl"
    path.write_text("".join(json.dumps({"task_id": t, "trial": i, "success": True}) + "\n"
                            for t in (HOSTILE, "b") for i in range(2)))
    for command in (["report", str(path), "--markdown"], ["diff", str(path), str(path),
                                                          "--markdown"]):
        main(command)
        out = capsys.readouterr().out
        row = next(line for line in out.splitlines() if "red" in line and line.startswith("|"))
        assert row.count(" | ") == row.replace("\\|", "").count(" | ")  # the id's | is escaped
        assert "a\\x1b[31mred\\|x\\n&lt;img src=x onerror=alert(1)&gt;" in row
        assert "<img" not in out and "\x1b" not in out
    # JSON stays exact
    main(["report", str(path), "--json"])
    ids = {t["task_id"] for t in json.loads(capsys.readouterr().out)["tasks"]}
    assert HOSTILE in ids


# --------------------------------------------------------------------------
# the gate policy on the command line (tests/test_policy.py attacks it by class)
# --------------------------------------------------------------------------

def test_policy_init_prints_a_policy_that_reads_back(tmp_path, capsys, monkeypatch):
    import tomllib

    from passk.gate.policy import parse_policy

    monkeypatch.chdir(tmp_path)
    path = write_jsonl(tmp_path, {"a": (5, 5), "b": (3, 4)})
    assert main(["policy", "init", path, "--output", "-"]) == 0
    text = capsys.readouterr().out
    policy = parse_policy(tomllib.loads(text), "-")
    assert policy.tasks.ids == ("a", "b") and policy.tasks.runs == 4
    assert policy.producer == "jsonl" and policy.errors == "fail"
    assert (policy.criteria.k, policy.criteria.min_overall_pass_hat_k) == (5, 0.7)


def test_a_policy_file_that_is_not_there_is_exit_2(tmp_path, capsys):
    path = write_jsonl(tmp_path, {"a": (5, 5)})
    assert main(["gate", path, "--policy", str(tmp_path / "nope.toml")]) == 2
    err = capsys.readouterr().err
    assert "nope.toml: no such policy file" in err and err.count("\n") == 1


def test_run_policy_names_a_file_not_the_stopping_rule(tmp_path, capsys):
    """``--policy fixed`` (no such file) is refused, pointing to ``--stopping``."""
    tasks = Path(__file__).resolve().parents[1] / "examples" / "oncall_tasks.jsonl"
    assert main(["run", "passk.flaky_adapter:OnCallSimulator", str(tasks), "--log",
                 str(tmp_path / "x.jsonl"), "--policy", "fixed", "--stopping",
                 "curtailed"]) == 2
    err = capsys.readouterr().err
    assert "the stopping rule is --stopping fixed" in err and err.count("\n") == 1
