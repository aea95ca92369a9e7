"""The Harbor (terminal-bench 2) reader, on jobs written by Harbor's own models.

The fixtures under ``tests/fixtures/harbor/`` were written by
``tests/fixtures/harbor/make_fixtures.py`` with harbor 0.26.0 (PyPI wheel,
sha256 b7c752c5...baee; Harbor needs Python >= 3.12, the test venv is 3.11):
each trial's ``result.json`` is a ``TrialResult``'s ``model_dump_json``, and
each job's stored ``metrics`` mean and ``pass_at_k`` were computed by Harbor's
own ``Mean`` and ``compute_pass_at_k_by_evals`` as ``Job.run`` collects them
(``job_old``: by harbor 0.13.0's ``compute_pass_at_k_by_evals`` and 0.13's
rule, a trial without a verifier result counting 0). Those stored figures
are the reference: passk's estimates must equal Harbor's own to 1e-12, and
pass^k must equal C(c, k) / C(n, k) in exact fractions.
"""

from __future__ import annotations

import json
import math
import shutil
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from passk.cli import main
from passk.metrics import estimate_pass_at_k, estimate_pass_hat_k
from passk.results.formats import FORMAT_TABLE, detect_format
from passk.results.formats.harbor import ERROR_KINDS, identity
from passk.results.read import ResultsError, read_results

HARBOR = Path(__file__).resolve().parent / "fixtures" / "harbor"
JOB, ERRORS, OLD = HARBOR / "job", HARBOR / "job_errors", HARBOR / "job_old"
KEY = "terminus-2__anthropic/claude-sonnet-4-5__terminal-bench"


def stored(job: Path, key: str = KEY) -> dict:
    return json.loads((job / "result.json").read_text())["stats"]["evals"][key]


def trial_files(job: Path) -> list[Path]:
    return sorted(job.glob("*/result.json"))


def copy_job(job: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(job, tmp_path / job.name))


@pytest.mark.parametrize("where", [JOB, JOB / "result.json"])
def test_job_gives_harbors_own_pass_at_k_and_mean(where):
    r = read_results(where)
    assert r.source == "harbor" and r.suite == KEY and r.incomplete == ()
    assert r.totals.tolist() == [5, 5, 5, 5] and int(r.successes.sum()) == 9
    figures = stored(JOB)
    assert sorted(figures["pass_at_k"]) == ["2", "4", "5"]
    for key, value in figures["pass_at_k"].items():
        mine = float(np.mean(estimate_pass_at_k(r.successes, r.totals, int(key))))
        assert abs(mine - value) < 1e-12
    assert abs(r.successes.sum() / r.totals.sum() - figures["metrics"][0]["mean"]) < 1e-12
    # the agent timeout is the agent's failure: counted, with the reward its verifier gave
    assert r.excluded.sum() == 0 and "AgentTimeoutError" in figures["exception_stats"]
    assert any(n.startswith(f"the figures job/result.json stores for {KEY} agree with its "
                            "trials: mean 0.4500, pass@2 0.5750, pass@4 0.7000, pass@5 0.7500")
               for n in r.notes)


def test_pass_hat_k_is_the_ratio_of_binomials():
    r = read_results(JOB)
    for k in range(1, 6):
        mine = estimate_pass_hat_k(r.successes, r.totals, k)
        for c, n, value in zip(r.successes.tolist(), r.totals.tolist(), mine):
            assert value == pytest.approx(float(Fraction(math.comb(c, k), math.comb(n, k))),
                                          abs=1e-15)


def test_errors_not_the_agents_are_left_out_and_counted():
    r = read_results(ERRORS)
    # a: 1, ApiRateLimitError, 0, 1; b: SandboxBuildFailedError, 1, RuntimeError (no verifier
    # result: the agent's, counts 0), 0
    assert r.task_ids == ("a", "b")
    assert r.successes.tolist() == [2, 1] and r.totals.tolist() == [3, 3]
    assert r.excluded.tolist() == [1, 1] and r.excluded_reason == "errors that are not the agent's"
    assert ("2 trials left out as errors that are not the agent's (Harbor's error policy: no "
            "valid reward): model provider: ApiRateLimitError (1); environment: "
            "SandboxBuildFailedError (1); --count-errors-as-failures counts them as failures"
            in "\n".join(r.notes))
    assert any(n.startswith("1 trial without a verifier result counted as a failure")
               for n in r.notes)
    # Harbor 0.26's own figures leave out every trial without a valid reward: 5 of the 8
    figures = stored(ERRORS)
    assert figures["n_trials"] == 5 and figures["pass_at_k"] == {"2": 1.0}


def test_the_kinds_left_out_are_harbors_own_error_policy():
    policy = json.loads((HARBOR / "error_policy.json").read_text())  # dumped from Harbor
    listed = [name for names in ERROR_KINDS.values() for name in names]
    assert len(listed) == len(set(listed))
    assert set(listed) == {name for name, valid in policy.items() if not valid}


def test_a_policy_the_job_overrode_is_followed(tmp_path):
    """A trial's stored ``policy`` (Harbor applies the job's override_error_policy) wins."""
    job = copy_job(ERRORS, tmp_path)
    for file in trial_files(job):
        data = json.loads(file.read_text())
        if (data["exception_info"] or {}).get("exception_type") == "ApiRateLimitError":
            data["exception_info"]["policy"]["has_valid_reward"] = True
            file.write_text(json.dumps(data))
    r = read_results(job)  # the rate-limited trial is now the agent's: counted, reward 0
    assert r.excluded.tolist() == [0, 1] and r.totals.tolist() == [4, 3]
    assert r.successes.tolist() == [2, 1]


def test_errors_as_failures_gives_harbor_013s_own_figures():
    """Harbor up to 0.13 counted every trial, a missing verifier result as 0."""
    r = read_results(OLD, count_errors_as_failures=True)
    assert r.excluded.sum() == 0 and r.totals.tolist() == [4, 4]
    assert r.successes.tolist() == [2, 1]
    figures = stored(OLD)
    assert sorted(figures["pass_at_k"]) == ["2", "4"]
    for key, value in figures["pass_at_k"].items():
        mine = float(np.mean(estimate_pass_at_k(r.successes, r.totals, int(key))))
        assert abs(mine - value) < 1e-12
    assert abs(r.successes.sum() / r.totals.sum() - figures["metrics"][0]["mean"]) < 1e-12
    # without the option, 0.13's trials (no stored policy) are judged by Harbor's table
    default = read_results(OLD)
    assert default.excluded.tolist() == [1, 1] and default.totals.tolist() == [3, 3]


def test_several_reward_keys_need_a_key():
    job = HARBOR / "job_two_rewards"
    with pytest.raises(ResultsError, match=r"job_two_rewards: x__\w+/result.json: Harbor trial "
                       r"'x__\w+' has several rewards \('reward', 'tests_passed'\), so Harbor "
                       r"computes no pass@k: pass --score-key KEY"):
        read_results(job)
    r = read_results(job, score_key="reward")
    assert r.successes.tolist() == [1, 2] and r.totals.tolist() == [2, 2]
    r = read_results(job, score_key="tests_passed", success_threshold=3)
    assert r.successes.tolist() == [1, 2]
    with pytest.raises(ResultsError, match=r"no reward 'passed' .--score-key.; its rewards are "
                       "'reward', 'tests_passed'"):
        read_results(job, score_key="passed")


def test_a_reward_not_0_or_1_needs_a_threshold():
    job = HARBOR / "job_partial"
    with pytest.raises(ResultsError, match=r"reward 0.5 is neither 0 nor 1, so Harbor computes "
                       r"no pass@k: pass --success-threshold X"):
        read_results(job)
    r = read_results(job, success_threshold=0.5)  # x: 1.0, 0.5; y: 0.25, 0.0
    assert r.successes.tolist() == [2, 0]
    assert any("mean 0.4375" in n for n in r.notes)  # Harbor's mean of the raw rewards


def test_several_evaluations_refused_unless_one_is_chosen():
    job = HARBOR / "job_two_agents"
    with pytest.raises(ResultsError, match=r"holds trials of 2 Harbor evaluations "
                       r"\('terminus-2__openai/gpt-5__terminal-bench' \(4 trials\), "
                       r"'oracle__terminal-bench' \(4 trials\)\), which are not one suite: pass "
                       r"--eval-key KEY"):
        read_results(job)
    r = read_results(job, eval_key="oracle__terminal-bench")
    assert r.suite == "oracle__terminal-bench" and r.totals.tolist() == [2, 2]
    assert r.successes.tolist() == [1, 2]
    assert any("4 trials of other evaluations left aside" in n for n in r.notes)
    with pytest.raises(ResultsError, match="no Harbor evaluation 'nope'"):
        read_results(job, eval_key="nope")


def test_an_unfinished_job_is_incomplete_and_the_gate_fails_closed(capsys):
    job = HARBOR / "job_unfinished"
    r = read_results(job)
    assert r.incomplete == (
        ("Harbor job job_unfinished: result.json has no finished_at: the job is still running or "
        "was stopped (`harbor jobs resume` finishes it)"),
        ("Harbor job job_unfinished: holds 3 of its n_total_trials 6 trials (1 trial folder "
        "without a result.json: y__running1)"),
        ("Harbor job holds 3 of 6 trials (2 tasks × config.json n_attempts 3); 2 tasks have "
        "fewer than 3 (x: 2, y: 1)"))
    assert main(["gate", str(job), "--k", "1", "--min-overall", "0", "--max-flakiness",
                 "1"]) == 1
    out = capsys.readouterr().out
    assert "gate: BLOCKED" in out and "incomplete results: Harbor job job_unfinished: result.json " \
        "has no finished_at" in out
    assert main(["gate", str(job), "--k", "1", "--min-overall", "0", "--max-flakiness", "1",
                 "--accept-incomplete"]) == 0


def test_a_job_with_a_task_short_of_n_attempts_is_incomplete(tmp_path):
    job = copy_job(JOB, tmp_path)
    data = json.loads((job / "result.json").read_text())
    data["stats"]["evals"][KEY]["pass_at_k"] = {}
    data["stats"]["evals"][KEY]["metrics"] = []
    (job / "result.json").write_text(json.dumps(data))
    shutil.rmtree(trial_files(job)[0].parent)
    r = read_results(job)
    assert any("holds 19 of its n_total_trials 20 trials" in why for why in r.incomplete)
    assert any("1 task has fewer than 5" in why for why in r.incomplete)


@pytest.mark.parametrize("field,value,said", [
    ("pass_at_k", {"2": 0.6, "4": 0.7, "5": 0.75},
     (r"stats.evals\[.*\].pass_at_k\['2'\]: Harbor's stored pass@2 0.6 disagrees with its 20 "
     r"trials, which give 0.575")),
    ("metrics", [{"mean": 0.5}],
     (r"stats.evals\[.*\].metrics\[0\]: Harbor's stored mean 0.5 disagrees with its 20 trials, "
     r"which give 0.45 ")),
])
def test_stored_figures_that_disagree_with_the_trials_are_an_error(tmp_path, field, value, said):
    job = copy_job(JOB, tmp_path)
    data = json.loads((job / "result.json").read_text())
    data["stats"]["evals"][KEY][field] = value
    (job / "result.json").write_text(json.dumps(data))
    with pytest.raises(ResultsError, match=said):
        read_results(job)


def test_a_folder_of_jobs_is_one_suite():
    r = read_results(HARBOR / "jobs")
    assert r.task_ids == ("x", "y") and r.successes.tolist() == [3, 1]
    assert r.totals.tolist() == [4, 4] and r.incomplete == ()
    assert r.notes[0] == ("2 Harbor jobs read as trials of one suite: run1 (4 trials), "
                          "run2 (4 trials)")
    assert sum("agree with its trials" in n for n in r.notes) == 2


@pytest.mark.parametrize("pick", ["file", "folder"])
def test_one_trial(pick):
    file = next(f for f in trial_files(JOB) if json.loads(f.read_text())["task_name"] == "fix-git")
    where = file if pick == "file" else file.parent
    assert detect_format(where) == "harbor"
    r = read_results(where)
    assert r.task_ids == ("fix-git",) and r.totals.tolist() == [1]
    assert r.successes.tolist() == [json.loads(file.read_text())["verifier_result"]["rewards"]
                                    ["reward"]]
    assert any("one Harbor trial, read alone" in n for n in r.notes)


def test_report_and_gate_through_the_command_line(capsys):
    assert main(["report", str(JOB), "--k", "2", "--json"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert f"read {JOB} as harbor (detected" in captured.err
    by_task = {t["task_id"]: t for t in out["tasks"]}
    assert by_task["fix-git"]["successes"] == 3 and by_task["fix-git"]["runs"] == 5
    assert by_task["fix-git"]["pass_at_k"] == pytest.approx(1 - math.comb(2, 2) / math.comb(5, 2))
    assert main(["gate", str(JOB), "--k", "2"]) == 1  # pass^2 0.325 below the bar 0.7
    assert main(["gate", str(JOB), "--k", "1", "--min-overall", "0.4", "--max-flakiness",
                 "1"]) == 0
    assert main(["report", str(HARBOR / "job_two_agents"), "--eval-key",
                 "oracle__terminal-bench"]) == 0
    capsys.readouterr()
    assert main(["report", str(ERRORS), "--count-errors-as-failures", "--json"]) == 0
    assert [t["runs"] for t in json.loads(capsys.readouterr().out)["tasks"]] == [4, 4]


def test_harbor_options_are_refused_elsewhere(tmp_path):
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"task_id": "a", "trial": 0, "success": true}\n')
    with pytest.raises(ResultsError, match=r"--eval-key \(eval_key=\) does not apply to a JSON "
                       r"Lines file; it is for Harbor \(terminal-bench 2\) jobs"):
        read_results(runs, eval_key="x")
    with pytest.raises(ResultsError, match=r"--score-key \(score_key=\) does not apply to a JSON "
                       r"Lines file; it is for Inspect AI logs and Harbor \(terminal-bench 2\) "
                       r"jobs"):
        read_results(runs, score_key="x")


def test_messages_name_harbor(tmp_path):
    assert any(f.name == "harbor" and f.title == "Harbor (terminal-bench 2)"
               for f in FORMAT_TABLE)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ResultsError, match="or a Harbor .terminal-bench 2. job directory "
                       r"\(config.json, result.json and one folder a trial\) or folder of jobs"):
        read_results(empty)
    other = tmp_path / "other.json"
    other.write_text('{"rows": 1}')
    with pytest.raises(ResultsError, match=r"a Harbor .terminal-bench 2. trial's or job's "
                       "result.json"):
        read_results(other)
    # a job whose result.json was cut short
    job = copy_job(JOB, tmp_path)
    (job / "result.json").write_text((job / "result.json").read_text()[:200])
    with pytest.raises(ResultsError, match=r"job: result.json: not valid JSON .*\(Harbor's job "
                       r"result, JobResult: re-run or resume the job"):
        read_results(job)
    # a trial without its agent's name
    job = copy_job(ERRORS, tmp_path / "e")
    file = trial_files(job)[0]
    data = json.loads(file.read_text())
    del data["agent_info"]["name"]
    file.write_text(json.dumps(data))
    with pytest.raises(ResultsError, match=rf"{file.parent.name}/result.json: agent_info: "
                       "missing field 'name'"):
        read_results(job)
    # a folder holding a job and something else
    mixed = tmp_path / "mixed"
    shutil.copytree(JOB, mixed / "job")
    (mixed / "notes").mkdir()
    (mixed / "notes" / "x.txt").write_text("x")
    with pytest.raises(ResultsError, match=r"mixed: is not a Harbor job directory .no "
                       r"result.json. nor a folder of job directories: 1 of its folders are not "
                       r"Harbor job directories \(notes\); pass the job directories themselves"):
        read_results(mixed)


def test_identity():
    assert identity(JOB) == {
        "run_ids": [json.loads((JOB / "result.json").read_text())["id"]],
        "evaluation": {"agent": "terminus-2", "agent_version": "2.0.0",
                       "model": "anthropic/claude-sonnet-4-5", "dataset": "terminal-bench",
                       "eval_key": KEY}}
    ids = identity(HARBOR / "jobs")["run_ids"]
    assert ids == [json.loads((HARBOR / "jobs" / d / "result.json").read_text())["id"]
                   for d in ("run1", "run2")]
    one = trial_files(JOB)[0]
    assert identity(one)["run_ids"] == [json.loads(one.read_text())["id"]]
    with pytest.raises(ResultsError, match="2 Harbor evaluations"):
        identity(HARBOR / "job_two_agents")
    assert identity(HARBOR / "job_two_agents", "oracle__terminal-bench")["evaluation"][
        "model"] is None
