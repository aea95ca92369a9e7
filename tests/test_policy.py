"""The gate policy, attacked by class, through the command line as a user would run it.

Each test works in a fresh repository (a directory with ``.git``) holding a ``passk.toml``
(or ``[tool.passk]`` in a ``pyproject.toml``), and calls ``passk`` in process
(:func:`passk.cli.commands.main`, with its exit codes). The classes: every option that
would loosen the policy is refused, naming the policy's value; a run log whose header was
edited to a narrower evaluation (a task removed, k and the runs cut, the bar lowered, its
fingerprint recomputed as anyone can) is refused; a task the policy lists without runs is
incomplete and blocks; a baseline whose regressed task was dropped from the new results
blocks with that reason, and one with no shared task is exit 2; without a policy, the
verdict line says so; every override in effect is named on the verdict line, in the
Markdown and in the JSON. The reference is the honest evidence's own verdict: what the
gate says on it, without the attack.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
from pathlib import Path

import pytest

from passk.cli.commands import main
from passk.gate.policy import (
    NO_POLICY,
    PolicyError,
    count_errors,
    find_policy,
    load_policy,
    parse_policy,
)
from passk.results.counts import Run, results_from_runs
from passk.results.protocol import Protocol

ROOT = Path(__file__).resolve().parents[1]
TASKS = ROOT / "examples" / "oncall_tasks.jsonl"

pytest_plugins = ["pytester"]


def passk(*argv: str) -> tuple[int, str, str]:
    """``passk ARGV`` in process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in argv])
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A fresh repository, the working directory."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write_runs(path: Path, outcomes: dict[str, list[bool]]) -> Path:
    """A plain JSON Lines results file: each task's outcomes as trials 0, 1, ..."""
    lines = [json.dumps({"task_id": t, "trial": i, "success": ok})
             for t, runs in outcomes.items() for i, ok in enumerate(runs)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


POLICY = """\
producer = "jsonl"
[tasks]
ids = ["a", "b"]
runs = 4
[gate]
k = 2
bar = 0.7
cap = 0.2
on = "lower-bound"
confidence = 0.9
min_runs = 4
[baseline]
alpha = 0.05
correction = "holm"
margin = 0.2
"""


@pytest.fixture
def suite(repo):
    """A policy and results that pass it: two tasks, every run passed."""
    (repo / "passk.toml").write_text(POLICY, encoding="utf-8")
    return write_runs(repo / "new.jsonl", {"a": [True] * 20, "b": [True] * 20})


# --- the policy file ------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "named"), [
    ("[gate]\nbarr = 0.7\n", "gate.barr: unknown key"),
    ("colour = 1\n", "colour: unknown key"),
    ("[gate]\nbar = 1.5\n", "gate.bar: 1.5 is out of range"),
    ("[gate]\nk = 0\n", "gate.k: 0 is not a whole number >= 1"),
    ('[gate]\non = "mean"\n', "gate.on: 'mean' is not one of estimate, lower-bound"),
    ('errors = "ignore"\n', "errors: 'ignore' is not one of fail, exclude, fail-all"),
    ('producer = "excel"\n', "producer: 'excel' is not one of"),
    ('[baseline]\ncorrection = "none"\n', "baseline.correction: 'none' is not one of"),
    ('[tasks]\nids = ["a", "a"]\n', "tasks.ids: lists a value twice"),
    ('[tasks]\ndataset = "x"\n', "tasks: dataset and size go together"),
    ('pooling = ["everything"]\n', "pooling: ['everything'] is not a list of"),
    ("[gate\n", "not valid TOML"),
])
def test_a_bad_policy_is_one_line_naming_file_key_and_what_to_do(repo, text, named):
    (repo / "passk.toml").write_text(text, encoding="utf-8")
    runs = write_runs(repo / "r.jsonl", {"a": [True] * 4})
    status, out, err = passk("gate", runs)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "passk.toml" in err and named in err, err


def test_the_policy_is_found_walking_up_to_the_repository_root(repo):
    (repo / "pyproject.toml").write_text("[project]\nname = 'x'\n[tool.passk.gate]\nbar = 0.9\n",
                                         encoding="utf-8")
    (repo / "evals" / "runs").mkdir(parents=True)
    assert find_policy(repo / "evals" / "runs") == repo / "pyproject.toml"
    assert load_policy(repo / "pyproject.toml").criteria.min_overall_pass_hat_k == 0.9
    inner = repo / "sub"
    (inner / ".git").mkdir(parents=True)  # a nested repository does not end the search
    assert find_policy(inner) == repo / "pyproject.toml"
    # one policy per repository: a nearer passk.toml shadowing [tool.passk] is an error, as is
    # a passk.toml beside pyproject.toml, whichever directory the search starts from
    (repo / "evals" / "passk.toml").write_text("[gate]\nbar = 0.8\n", encoding="utf-8")
    for start in (repo / "evals" / "runs", repo / "evals"):
        with pytest.raises(PolicyError, match="more than one policy"):
            find_policy(start)
    assert find_policy(repo) == repo / "pyproject.toml"  # evals/ is not on the way up
    with pytest.raises(PolicyError, match="more than one policy"):  # but the results' way is
        find_policy(repo, results=[repo / "evals" / "runs"])
    (repo / "evals" / "passk.toml").unlink()
    (repo / "passk.toml").write_text("", encoding="utf-8")
    with pytest.raises(PolicyError, match="more than one policy"):
        find_policy(repo)


def test_a_pyproject_policy_gates_and_the_verdict_line_names_it(repo):
    (repo / "pyproject.toml").write_text("[tool.passk.gate]\nk = 2\nbar = 0.99\n",
                                         encoding="utf-8")
    runs = write_runs(repo / "r.jsonl", {"a": [True] * 4, "b": [True, False] * 2})
    status, out, _ = passk("gate", runs)
    assert status == 1
    digest = hashlib.sha256((repo / "pyproject.toml").read_bytes()).hexdigest()[:12]
    assert ("(bar 0.990, flakiness cap 0.200)  [policy pyproject.toml [tool.passk] "
            f"(sha256 {digest})]") in out


# --- class 3: an option that would loosen the policy is refused, naming its value -----------

@pytest.mark.parametrize(("option", "policy_value"), [
    (["--k", "1"], "the policy's k 2"),
    (["--k-for", "read-only=1"], "the policy's k 2"),
    (["--min-overall", "0.5"], "the policy's bar 0.7"),
    (["--max-flakiness", "0.5"], "the policy's cap 0.2"),
    (["--on", "estimate"], "the policy's on 'lower-bound'"),
    (["--confidence", "0.5"], "the policy's confidence 0.9"),
    (["--min-runs", "2"], "the policy's min_runs 4"),
    (["--accept-incomplete"], "the policy's task set and runs"),
    (["--duplicates", "last"], "the policy's evidence (a run recorded twice is an error)"),
    (["--pool-evaluations"], "the policy's pooling ['trials']"),
    (["--success-value", "I"], "the policy's success rule"),
    (["--success-threshold", "0"], "the policy's success rule (no threshold)"),
    (["--scorer", "lenient"], "the policy's success rule"),
    (["--score-key", "reward"], "the policy's success rule"),
    (["--baseline", "new.jsonl", "--margin", "0.5"], "the policy's baseline margin 0.2"),
])
def test_each_loosening_option_is_refused_naming_the_policys_value(suite, option,
                                                                    policy_value):
    assert passk("gate", suite)[0] == 0  # the honest gate passes: the option is refused anyway
    status, out, err = passk("gate", suite, *option)
    assert status == 2 and out == ""
    assert f"would loosen {policy_value}" in err and "(passk.toml)" in err, err
    assert err.count("\n") == 1


def test_a_stricter_option_is_kept(suite):
    status, out, _ = passk("gate", suite, "--min-overall", "0.99", "--k", "8")
    assert status == 1 and "bar 0.990" in out  # 8 of 8 passed: the lower bound misses 0.99


def test_diff_refuses_a_higher_alpha_and_a_laxer_correction(suite):
    old = write_runs(Path("old.jsonl"), {"a": [True] * 20, "b": [True] * 20})
    assert passk("diff", old, suite)[0] != 2
    for option, value in ((["--alpha", "0.1"], "baseline alpha 0.05"),
                          (["--correction", "bh"], "baseline correction 'holm'")):
        status, _, err = passk("diff", old, suite, *option)
        assert status == 2 and f"would loosen the policy's {value}" in err, err


def test_more_files_than_the_policy_pools_are_refused(suite):
    second = write_runs(Path("more.jsonl"), {"a": [True] * 20, "b": [True] * 20})
    Path("passk.toml").write_text(POLICY.replace('producer = "jsonl"',
                                                 'producer = "jsonl"\npooling = []'))
    status, _, err = passk("gate", suite, second)
    assert status == 2 and "2 results files would loosen the policy's pooling []" in err


def test_an_inspect_lenient_success_value_is_refused_and_the_honest_verdict_stands(repo):
    pytest.importorskip("inspect_ai")
    from inspect_logs import write_log

    log = write_log(repo / "log.eval",
                    {("s1", e): "C" for e in (1, 2, 3)} | {("s2", e): "I" for e in (1, 2, 3)})
    honest = passk("gate", log, "--k", "1")
    assert honest[0] == 1  # s2 always answered wrong
    assert passk("gate", log, "--k", "1", "--success-value", "I")[0] == 0  # the attack
    (repo / "passk.toml").write_text('producer = "inspect"\n[success]\nvalues = ["C"]\n'
                                     "[gate]\nk = 1\n", encoding="utf-8")
    status, _, err = passk("gate", log, "--success-value", "I")
    assert status == 2 and "--success-value I would loosen the policy's success values ['C']" \
        in err
    status, out, _ = passk("gate", log)
    assert status == honest[0] and re.search(r"\[policy passk\.toml \(sha256 [0-9a-f]{12}\); policy's success "
                                        r"values C\]", out)


# --- class 2: a narrower evaluation does not pass as the whole one --------------------------

@pytest.fixture(scope="module")
def run_log(tmp_path_factory):
    """A ``passk run`` log of the shipped adapter: 3 tasks, 3 runs each, k 2."""
    d = tmp_path_factory.mktemp("log")
    log = d / "runs.jsonl"
    status, _, _ = passk("run", "passk.flaky_adapter:OnCallSimulator", TASKS, "--log", log,
                         "--no-progress", "--k", "2", "--runs-high-risk", "3",
                         "--runs-read-only", "3")
    assert status in (0, 1)
    return log


def edited(log: Path, to: Path, *, settings: dict | None = None, drop_task: str | None = None,
           keep_trials: int | None = None) -> Path:
    """The log with its header's settings changed and the fingerprint recomputed (the hash
    is unkeyed: anyone can), records of a task or later trials deleted."""
    head, *records = log.read_text(encoding="utf-8").splitlines()
    header = json.loads(head)
    s = dict(header["protocol"]["settings"], **(settings or {}))
    if drop_task is not None:
        s["tasks"] = [t for t in s["tasks"] if t != drop_task]
    header["protocol"] = Protocol(s).to_dict()
    kept = [r for r in records if json.loads(r)["task_id"] != drop_task
            and (keep_trials is None or json.loads(r)["trial"] < keep_trials)]
    to.write_text("\n".join([json.dumps(header), *kept]) + "\n", encoding="utf-8")
    return to


@pytest.fixture
def log_policy(repo, run_log):
    """The repository's policy, written by `passk policy init` from the whole log."""
    status, _, err = passk("policy", "init", run_log)
    assert status == 0 and "wrote passk.toml" in err
    text = Path("passk.toml").read_text(encoding="utf-8")
    assert 'ids = ["payment-alert", "read-error-rate", "read-last-deploy"]' in text
    return text


def test_policy_init_writes_a_policy_the_whole_log_meets(log_policy, run_log, repo):
    status, out, _ = passk("gate", run_log)
    assert re.search(r"\[policy passk\.toml \(sha256 [0-9a-f]{12}\)\]", out)
    os.replace("passk.toml", "reviewed.toml")
    assert passk("gate", run_log)[0] == status  # the same verdict as without the policy
    os.replace("reviewed.toml", "passk.toml")
    assert passk("policy", "init", run_log)[0] == 2  # it never overwrites a reviewed policy


@pytest.mark.parametrize(("edit", "refusal"), [
    ({"drop_task": "read-error-rate"},
     "its protocol leaves out the policy's task read-error-rate"),
    ({"settings": {"k": 1, "default_runs": 2, "runs_by_risk": {"high-risk-write": 2,
                                                                "read-only": 2},
                   "previously_flaky_runs": 2}, "keep_trials": 2},
     "its protocol declares k 1, looser than the policy's k 2"),
    ({"settings": {"default_runs": 2, "runs_by_risk": {"high-risk-write": 2, "read-only": 2},
                   "previously_flaky_runs": 2}, "keep_trials": 2},
     "its protocol plans 2 runs for high-risk-write tasks, fewer than the policy's 3"),
    ({"settings": {"min_overall_pass_hat_k": 0.5}},
     "its protocol declares bar 0.5, looser than the policy's bar 0.7"),
    ({"settings": {"max_flakiness": 0.9}},
     "its protocol declares cap 0.9, looser than the policy's cap 0.2"),
])
def test_a_header_edited_to_a_narrower_evaluation_is_refused(log_policy, run_log, repo, edit,
                                                             refusal):
    narrow = edited(run_log, repo / "narrow.jsonl", **edit)
    status, out, err = passk("gate", narrow)
    assert status == 2 and out == ""
    assert refusal in err and "(passk.toml)" in err, err


def test_a_log_without_its_header_is_refused_under_a_policy_that_requires_one(log_policy,
                                                                             run_log, repo):
    headless = repo / "headless.jsonl"
    headless.write_text("".join(run_log.read_text().splitlines(keepends=True)[1:]))
    status, _, err = passk("gate", headless)
    assert status == 2, err
    assert "no protocol" in err or "header" in err, err


def test_passk_run_refuses_options_looser_than_the_policy(log_policy, repo):
    status, _, err = passk("run", "passk.flaky_adapter:OnCallSimulator", TASKS, "--log",
                           repo / "x.jsonl", "--no-progress", "--runs-read-only", "2")
    assert status == 2 and "would loosen the policy's runs 3 for read-only" in err, err
    assert not (repo / "x.jsonl").exists()


# --- the task set: a policy task without runs is incomplete, and fails closed --------------

def test_a_task_the_policy_lists_without_runs_blocks(suite, repo):
    only_a = write_runs(repo / "only_a.jsonl", {"a": [True] * 20})
    status, out, _ = passk("gate", only_a)
    assert status == 1
    assert "task b: the policy's task set lists it, the evidence has no runs of it" in out
    status, out, _ = passk("gate", only_a, "--json")
    report = json.loads(out)
    assert not report["gate"]["passed"] and [t["task_id"] for t in report["tasks"]] == ["a", "b"]


def test_fewer_runs_than_the_policy_asks_block(suite, repo):
    short = write_runs(repo / "short.jsonl", {"a": [True] * 20, "b": [True] * 3})
    status, out, _ = passk("gate", short)
    assert status == 1 and "task b: 3 counted runs, the policy asks 4" in out


def test_a_task_outside_the_policys_set_blocks(suite, repo):
    wider = write_runs(repo / "wider.jsonl", {"a": [True] * 20, "b": [True] * 20,
                                              "easy": [True] * 8})
    status, out, _ = passk("gate", wider)
    assert status == 1 and "task easy: not in the policy's task set" in out


# --- class 4: a baseline covers the new results ------------------------------------------

def test_a_baseline_task_dropped_from_the_new_results_blocks(repo):
    old = write_runs(repo / "old.jsonl", {"a": [True] * 12, "b": [True] * 12,
                                          "c": [True] * 12})
    honest = write_runs(repo / "new.jsonl", {"a": [True] * 12, "b": [True] * 12,
                                             "c": [False] * 12})
    dropped = write_runs(repo / "dropped.jsonl", {"a": [True] * 12, "b": [True] * 12})
    status, out, _ = passk("gate", honest, "--baseline", old, "--max-flakiness", "1",
                           "--min-overall", "0")
    assert status == 1 and "task c: regressed against the baseline" in out
    status, out, _ = passk("gate", dropped, "--baseline", old)  # the attack
    assert status == 1
    assert "task c: in the baseline, but the new results have no runs of it" in out


def test_a_baseline_with_no_shared_task_is_exit_2(repo):
    old = write_runs(repo / "old.jsonl", {"x": [True] * 5, "y": [True] * 5})
    new = write_runs(repo / "new.jsonl", {"a": [True] * 5})
    for argv in (("gate", new, "--baseline", old), ("diff", old, new)):
        status, out, err = passk(*argv)
        assert status == 2 and out == ""
        assert "share no task" in err and "x, y" in err, err


def test_the_baseline_comparison_takes_the_policys_margin(suite, repo):
    """Two paired tasks cannot show non-inferiority (the paired t interval is wide): the
    policy's margin blocks; without one, no drop is shown and the gate passes."""
    old = write_runs(repo / "old.jsonl", {"a": [True] * 20, "b": [True] * 20})
    status, out, _ = passk("gate", suite, "--baseline", old, "--json")
    report = json.loads(out)
    assert status == 1 and report["gate"]["policy"] == "passk.toml"
    assert any("non-inferiority within 0.2 not shown" in r for r in report["gate"]["reasons"])
    Path("passk.toml").write_text(POLICY.replace("margin = 0.2\n", ""))
    assert passk("gate", suite, "--baseline", old)[0] == 0


# --- without a policy, and every override named ------------------------------------------

def test_without_a_policy_the_verdict_line_says_so(repo):
    runs = write_runs(repo / "r.jsonl", {"a": [True] * 5})
    status, out, _ = passk("gate", runs)
    verdict = next(line for line in out.splitlines() if line.startswith("gate: "))
    assert status == 0 and verdict.endswith(f"[{NO_POLICY}]")
    md = passk("gate", runs, "--markdown")[1]
    assert f"[{NO_POLICY}]**" in md
    report = json.loads(passk("gate", runs, "--json")[1])
    assert report["gate"]["policy"] is None and report["gate"]["overrides"] == []
    assert passk("report", runs)[1].count(f"[{NO_POLICY}]") == 1


def test_every_override_in_effect_is_named_in_text_markdown_and_json(repo):
    runs = repo / "r.jsonl"
    runs.write_text('{"task_id": "a", "trial": 0, "success": false}\n'
                    + "".join(f'{{"task_id": "a", "trial": {t}, "success": true}}\n'
                              for t in range(5)), encoding="utf-8")
    argv = ("gate", runs, "--duplicates", "last", "--accept-incomplete")
    named = "--accept-incomplete; --duplicates last"
    assert f"[{NO_POLICY}; {named}]" in passk(*argv)[1]
    assert f"[{NO_POLICY}; {named}]**" in passk(*argv, "--markdown")[1]
    gate = json.loads(passk(*argv, "--json")[1])["gate"]
    # the JSON names what the text names: the reader's own phrase and the bound options
    line = next(ln for ln in passk(*argv)[1].splitlines() if ln.startswith("gate: "))
    assert gate["overrides"][-2:] == ["--accept-incomplete", "--duplicates last"]
    assert all(o in line for o in gate["overrides"]) and len(gate["overrides"]) == 3


# --- failures fail closed: the errors rule --------------------------------------------------

def test_errored_samples_count_as_failures_unless_the_policy_says_otherwise():
    r = results_from_runs([Run("a", True, 0), Run("a", True, 1),
                           Run("a", False, 2, excluded=True, excluded_as="errored samples")])
    # 'fail' and 'exclude' are the reader's own rule (read_results(errors=...)): the
    # results it made are left as they are; 'fail-all' counts every left-out run too
    assert count_errors(r, "fail") == (r, ()) and count_errors(r, "exclude") == (r, ())
    counted, said = count_errors(r, "fail-all")
    assert (counted.successes.tolist(), counted.totals.tolist()) == ([2], [3])
    assert said == ("errored samples counted as failures: 1 (errors = fail-all)",)
    infra = results_from_runs([Run("a", True, 0), Run("a", False, 1, excluded=True,
                                                      excluded_as="infrastructure errors")])
    assert count_errors(infra, "fail")[0].totals.tolist() == [1]  # the producer's own rule
    assert count_errors(infra, "fail-all")[0].totals.tolist() == [2]


def test_an_inspect_crash_counts_as_a_failure_on_the_verdict_line(repo):
    pytest.importorskip("inspect_ai")
    from inspect_logs import write_log

    log = write_log(repo / "crash.eval", {("s1", e): "C" for e in (1, 2)},
                    errored=[("s1", 3)], epochs=3)
    _, out, _ = passk("gate", log, "--k", "1", "--max-flakiness", "1")
    assert "1 sample epoch ended in an error and counts as a failure" in out
    report = json.loads(passk("gate", log, "--k", "1", "--json")[1])
    assert report["tasks"][0]["runs"] == 3 and report["tasks"][0]["successes"] == 2


def test_parse_policy_refuses_both_ids_and_a_dataset():
    with pytest.raises(PolicyError, match="either ids or dataset"):
        parse_policy({"tasks": {"ids": ["a"], "dataset": "d", "size": 1}}, "p.toml")


def test_no_policy_is_found_outside_a_repository_with_none(tmp_path):
    (tmp_path / ".git").mkdir()
    assert find_policy(tmp_path, [os.fspath(tmp_path / "r.jsonl")]) is None


def test_an_inspect_subset_of_the_policys_dataset_is_incomplete(repo):
    """A log of 2 samples (``--limit 2``, ``--sample-id``) of a dataset the policy says has 3
    blocks as incomplete; the whole dataset passes."""
    pytest.importorskip("inspect_ai")
    from inspect_logs import write_log

    (repo / "passk.toml").write_text('producer = "inspect"\n[tasks]\ndataset = "tiny"\n'
                                     "size = 3\nruns = 2\n[gate]\nk = 1\n", encoding="utf-8")
    whole = write_log(repo / "whole.eval", {(s, e): "C" for s in ("s1", "s2", "s3")
                                            for e in (1, 2)})
    subset = write_log(repo / "subset.eval", {(s, e): "C" for s in ("s1", "s2")
                                              for e in (1, 2)})
    assert passk("gate", whole)[0] == 0
    status, out, _ = passk("gate", subset)
    assert status == 1 and "the evidence holds 2 of the 3 samples of the policy's dataset" \
        " tiny" in out


def test_the_pytest_plugin_gates_under_the_repositorys_policy(pytester):
    """The plugin finds the policy from the rootdir as `passk gate` does: an option that would
    loosen it is a usage error naming the policy's value, and the summary names the policy."""
    pytester.makefile(".toml", passk="[gate]\nk = 2\nbar = 0.9\ncap = 0.2\n")
    pytester.mkdir(".git")
    pytester.makepyfile(test_agent="""
        import pytest

        @pytest.mark.passk(runs=4, k=2)
        def test_steady(passk_seed):
            assert True
    """)
    loose = pytester.runpytest("-p", "no:cacheprovider", "--passk-min-overall", "0.5")
    assert loose.ret == pytest.ExitCode.USAGE_ERROR
    assert "would loosen the policy's bar 0.9" in loose.stderr.str()
    kept = pytester.runpytest("-p", "no:cacheprovider")
    out = kept.stdout.str()
    assert "criteria: policy" in out and "passk.toml" in out, out
    assert "bar 0.900" in out


def test_inspect_curtailment_gates_under_the_repositorys_policy(tmp_path, monkeypatch):
    """`passk.integrations.inspect.Curtailment` finds the policy from the working directory:
    its criteria are the policy's, an argument that would loosen it is refused."""
    pytest.importorskip("inspect_ai")
    from passk.integrations.inspect import Curtailment

    (tmp_path / ".git").mkdir()
    (tmp_path / "passk.toml").write_text("[gate]\nk = 3\nbar = 0.9\ncap = 0.1\n",
                                         encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    c = Curtailment()
    assert (c.gate.k, c.gate.min_overall_pass_hat_k, c.gate.max_flakiness) == (3, 0.9, 0.1)
    assert c.policy is not None and c.policy.path.endswith("passk.toml")
    assert Curtailment(k=5).gate.k == 5  # stricter: kept
    with pytest.raises(PolicyError, match=r"would loosen the policy's bar 0.9"):
        Curtailment(min_overall_pass_hat_k=0.5)
