"""The evidence does not state its own plan: tiers come from the policy, curtailment from a
replay (issue 36, class 2).

Attacked by class, as a user who wants a green light would, on every path into a verdict
this touches: ``passk gate`` and ``passk report`` in process
(:func:`passk.cli.commands.main`, text, ``--json`` and ``--markdown``), and the Python
API (:func:`passk.read_results`, :func:`passk.gate.policy.apply_policy`,
:func:`passk.run.runner.results_of_replayed_log`, :func:`passk.gate.judge.judge`).

1. **Relabelled risks.** A task's tier decides the runs it needs. A high-risk task at
   9/12 relabelled read-only (some of its records, all of them, or a tier name the policy
   does not know), its failures dropped: refused (exit 2, naming the file, the task and
   both tiers) under the policy ``passk policy init`` wrote from the honest log, and
   without a policy either refused (two tiers in one task) or short of its plan (a trial
   beyond the read-only tier's runs), so BLOCKED.
2. **Forged ``settled`` records.** A fixed log rewritten as curtailed, with a settled
   record for the flaky task, one added to a log holding every run, one too early, one
   followed by more runs of its task, one misstating its plan, and none at all: the
   log's runs are replayed through the scheduler and each claim checked against the
   settle rule; a claim not borne out leaves its task short of its plan, named, BLOCKED.
3. **Honest curtailed logs** (``passk run --stopping curtailed`` on the shipped
   simulator, threads or not, a resumed log, the pytest plugin's ``--passk-log``) are
   replayed to the run's own verdict and settled tasks.

The reference is always the honest evidence: its own verdict through the same command.
"""

from __future__ import annotations

import contextlib
import io
import json
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from passk import stability
from passk.cli.commands import main
from passk.gate.judge import judge
from passk.gate.policy import PolicyError, apply_policy, load_policy, parse_policy
from passk.results.counts import ResultsError, Run, results_from_runs
from passk.results.protocol import Protocol
from passk.results.read import read_results
from passk.run import runner
from passk.run.runner import results_of_replayed_log
from passk.stability import DEFAULT_CRITERIA

ROOT = Path(__file__).resolve().parents[1]
TASKS = ROOT / "examples" / "oncall_tasks.jsonl"
SIM = "passk.flaky_adapter:OnCallSimulator"
FLAKY = "payment-alert"  # high-risk-write, 12 runs; 9 of 12 pass at seed 0 (trials 4, 8, 9 fail)
READ = "read-error-rate"  # read-only, 5 runs

pytest_plugins = ["pytester"]

# pytester unloads what an in-process session imported, and numpy's extensions cannot load
# twice in one process: the plugin's report path runs once here, outside any inner session
# (as tests/test_pytest_plugin.py does).
stability.format_table(stability.suite_report(["warm", "up"], [1, 2], [2, 2], k=[1, 2]))
runner.suite_outlook([runner.task_outlook(1, 1, 1, k=1)], 0.7)


def passk(*argv: object) -> tuple[int, str, str]:
    """``passk ARGV`` in process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in argv])
    return status, out.getvalue(), err.getvalue()


def lines(log: Path) -> tuple[dict, list[dict]]:
    head, *records = log.read_text(encoding="utf-8").splitlines()
    return json.loads(head), [json.loads(r) for r in records]


def forge(log: Path, to: Path, records: list[dict], **settings: object) -> Path:
    """``records`` behind ``log``'s header with ``settings`` changed, the fingerprint
    recomputed (it is an unkeyed hash: anyone can)."""
    header, _ = lines(log)
    header["protocol"] = Protocol({**header["protocol"]["settings"], **settings}).to_dict()
    to.write_text("".join(json.dumps(r) + "\n" for r in [header, *records]), encoding="utf-8")
    return to


def settled(task: str, made: int, planned: int, risk: str = "high-risk-write") -> dict:
    return {"task_id": task, "risk": risk,
            "settled": {"runs_made": made, "runs_planned": planned, "why": "settled"}}


@pytest.fixture(scope="module")
def honest(tmp_path_factory) -> Path:
    """The shipped simulator's suite, fixed repetition, seed 0: payment-alert 9/12, flaky."""
    log = tmp_path_factory.mktemp("honest") / "fixed.jsonl"
    status, _, _ = passk("run", SIM, TASKS, "--log", log, "--no-progress", "--seed", 0)
    assert status == 1
    _, records = lines(log)
    mine = [r for r in records if r["task_id"] == FLAKY]
    assert (sum(r["success"] for r in mine), len(mine)) == (9, 12)  # the case of the attack
    assert [r["trial"] for r in mine if not r["success"]] == [4, 8, 9]
    return log


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def init_policy(log: Path) -> str:
    status, _, err = passk("policy", "init", log)
    assert status == 0, err
    return Path("passk.toml").read_text(encoding="utf-8")


def never_passed(log: Path, *, task: str, words: str) -> None:
    """Every rendering of ``passk gate`` and ``passk report`` on a forged log: exit 2 with
    the reason, or BLOCKED with it; never PASSED."""
    status, out, err = passk("gate", log)
    assert status in (1, 2), out
    assert "gate: PASSED" not in out
    said = out if status == 1 else err
    assert task in said and words in said, said
    status_json, out_json, _ = passk("gate", log, "--json")
    assert status_json == status
    if status == 1:
        gate = json.loads(out_json)["gate"]
        assert gate["passed"] is False
        assert any(task in r and words in r for r in gate["reasons"]), gate["reasons"]
    status_md, out_md, _ = passk("gate", log, "--markdown")
    assert status_md == status and "PASSED" not in out_md
    status_report, out_report, err_report = passk("report", log)
    assert status_report in (0, 2)  # report shows the verdict; bad input is exit 2
    assert "gate: PASSED" not in out_report
    assert words in (out_report if status_report == 0 else err_report)


# --------------------------------------------------------------------------
# 1. relabelled risks
# --------------------------------------------------------------------------

def relabelled(records: list[dict], how: str) -> list[dict]:
    """payment-alert relabelled: ``some`` (its five first passes read-only, the rest kept),
    ``all`` (every record read-only), ``passes`` (read-only, its failures dropped),
    ``new-tier`` (a tier the policy does not know, failures dropped)."""
    out = []
    passes = 0
    for r in records:
        if r["task_id"] != FLAKY:
            out.append(r)
        elif how == "some":
            passes += r["success"]
            out.append(dict(r, risk="read-only") if r["success"] and passes <= 5 else r)
        elif how == "all":
            out.append(dict(r, risk="read-only"))
        elif r["success"]:
            out.append(dict(r, risk="read-only" if how == "passes" else "trivial"))
    return out


@pytest.mark.parametrize("how", ["all", "passes", "new-tier"])
def test_a_task_relabelled_is_refused_under_the_policy_from_the_honest_log(honest, repo, how):
    text = init_policy(honest)
    assert f'"{FLAKY}" = "high-risk-write"' in text and f'"{READ}" = "read-only"' in text
    assert passk("gate", honest)[0] == 1  # the honest evidence under its policy: BLOCKED
    _, records = lines(honest)
    forged = forge(honest, repo / "forged.jsonl", relabelled(records, how))
    tier = "trivial" if how == "new-tier" else "read-only"
    status, out, err = passk("gate", forged)
    assert (status, out) == (2, "")
    assert err.splitlines() == [
        (f"passk gate: error: {forged}: task {FLAKY}: its records give risk {tier!r}, but "
         "the policy's tier for it is 'high-risk-write' (passk.toml): the evidence cannot "
         "choose its own tier; give the evidence as it was run, or change the task's tier in "
         "the policy in a reviewed commit")]
    never_passed(forged, task=FLAKY, words="the policy's tier for it is 'high-risk-write'")
    with pytest.raises(PolicyError, match=f"task {FLAKY}: its records give risk {tier!r}"):
        apply_policy(load_policy("passk.toml"), read_results(forged), "forged.jsonl")


@pytest.mark.parametrize("policy", [True, False])
def test_a_task_given_two_tiers_by_its_records_is_refused(honest, repo, policy):
    if policy:
        init_policy(honest)
    _, records = lines(honest)
    forged = forge(honest, repo / "forged.jsonl", relabelled(records, "some"))
    status, out, err = passk("gate", forged)
    assert (status, out) == (2, "")
    assert f"field 'risk': task '{FLAKY}' is 'high-risk-write' here but 'read-only' on line" \
        in err and "one task has one risk tier" in err, err
    never_passed(forged, task=FLAKY, words="one task has one risk tier")
    with pytest.raises(ResultsError, match="one task has one risk tier"):
        read_results(forged)


def test_two_tiers_are_refused_on_both_of_the_readers_paths(tmp_path):
    """A JSON Lines file (read in bulk), and runs counted one by one (the path every reader
    shares, which names the run)."""
    rows = [{"task_id": "a", "trial": 0, "success": True, "risk": "high-risk-write"},
            {"task_id": "a", "trial": 1, "success": True},
            {"task_id": "a", "trial": 2, "success": True, "risk": "read-only"}]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ResultsError, match=r"r.jsonl:3: field 'risk': task 'a' is 'read-only' "
                       r"here but 'high-risk-write' on line 1"):
        read_results(path)
    runs = [Run("a", True, 0, "high-risk-write"), Run("a", True, 1), Run("a", False, 2, "x")]
    with pytest.raises(ResultsError, match=r"run 2: field 'risk': task 'a' is 'x' here but "
                       r"'high-risk-write' at run 0"):
        results_from_runs(runs)
    assert results_from_runs(runs[:2]).risks == ("high-risk-write",)  # no label says nothing


def test_two_files_giving_one_task_two_tiers_are_refused(tmp_path):
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    one.write_text('{"task_id": "a", "trial": 0, "success": true, "risk": "high-risk-write"}\n')
    two.write_text('{"task_id": "a", "trial": 1, "success": true, "risk": "read-only"}\n')
    status, _, err = passk("gate", one, two, "--k", "1")
    assert status == 2 and "two.jsonl: gives task 'a' risk 'read-only' but" in err, err


@pytest.mark.parametrize("how", ["passes", "new-tier"])
def test_without_a_policy_a_relabelled_task_is_short_of_its_plan(honest, repo, how):
    """Without a policy nothing but the log anchors a tier: the records kept include a trial
    beyond the read-only tier's 5 runs, so the task was planned 12 and has 9."""
    _, records = lines(honest)
    forged = forge(honest, repo / "forged.jsonl", relabelled(records, how))
    never_passed(forged, task=f"{FLAKY}: 9 of 12", words="short of its protocol's fixed plan")
    results = read_results(forged)
    assert not judge(results, DEFAULT_CRITERIA).passed


def test_a_relabelled_log_that_keeps_every_run_gets_the_honest_verdict(honest, repo):
    _, records = lines(honest)
    forged = forge(honest, repo / "forged.jsonl", relabelled(records, "all"))
    status, out, _ = passk("gate", forged)
    assert status == passk("gate", honest)[0] == 1
    assert f"task {FLAKY}: flakiness 0.750 exceeds the cap" in out


def test_policy_init_writes_each_tasks_tier_and_the_honest_log_meets_it(honest, repo):
    text = init_policy(honest)
    tiers = tomllib.loads(text)["tasks"]["risk"]
    assert tiers == {FLAKY: "high-risk-write", READ: "read-only",
                     "read-last-deploy": "read-only"}
    status, out, _ = passk("gate", honest)
    assert status == 1 and "[policy passk.toml" in out and "incomplete" not in out


def test_a_policy_without_tiers_fails_closed_on_the_largest_runs(honest, repo):
    """runs_by_risk with no [tasks.risk]: the evidence cannot choose its tier, so every task
    needs the largest (12): the read-only tasks' 5 runs are short, named."""
    text = init_policy(honest)
    head, _, tail = text.partition("[tasks.risk]")
    Path("passk.toml").write_text(head + "[gate]" + tail.split("[gate]", 1)[1])
    assert "risk" not in tomllib.loads(Path("passk.toml").read_text())["tasks"]
    status, out, _ = passk("gate", honest)
    assert status == 1
    assert (f"task {READ}: 5 counted runs, the policy asks 12 (the policy gives it no tier: "
            "the largest of its runs)") in out
    assert load_policy("passk.toml").tasks.runs_for_task(READ) == 12


@pytest.mark.parametrize(("risk", "words"), [
    ({"a": "high"}, "tasks.risk: gives no tier for task b of ids"),
    ({"a": "high", "b": "high", "c": "high"}, "tasks.risk: gives a tier for task c, not in"),
    ({"a": "high", "b": "low"}, "tasks.risk.b: tier 'low' has no runs: add it to runs_by_risk"),
    ({"a": "high", "b": 3}, "tasks.risk.b: 3 is not a non-empty string"),
    ("high", "tasks.risk: must be a table of task = tier"),
])
def test_the_tiers_are_validated(risk, words):
    with pytest.raises(PolicyError, match=None) as caught:
        parse_policy({"tasks": {"ids": ["a", "b"], "runs_by_risk": {"high": 12},
                                "risk": risk}}, "p.toml")
    assert str(caught.value).startswith("p.toml: ") and words in str(caught.value)


def test_the_policys_tier_is_the_tasks_tier_in_the_results(tmp_path):
    """Evidence that labels no task (a plain file: read-only is only the default) takes the
    policy's tiers, and needs their runs."""
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps({"task_id": t, "trial": i, "success": True}) + "\n"
                            for t in "ab" for i in range(5)))
    policy = parse_policy({"tasks": {"ids": ["a", "b"], "runs": 5, "runs_by_risk": {"w": 12},
                                     "risk": {"a": "w", "b": "read-only"}}}, "p.toml")
    results = apply_policy(policy, read_results(path), "r.jsonl")
    assert results.risks == ("w", "read-only")
    assert results.incomplete == ("task a: 5 counted runs, the policy asks 12",)


# --------------------------------------------------------------------------
# 2. forged settled records
# --------------------------------------------------------------------------

def _flaky_settled(records: list[dict]) -> list[dict]:
    """The flaky task's failures dropped, a settled record for it at the end."""
    kept = [r for r in records if r["task_id"] != FLAKY or r["success"]]
    return [*kept, settled(FLAKY, 9, 12)]


def _every_run_kept(records: list[dict]) -> list[dict]:
    return [*records, settled(FLAKY, 12, 12)]


def _too_early(records: list[dict]) -> list[dict]:
    """read-error-rate stopped after its first run (it needs more to settle)."""
    kept = [r for r in records if r["task_id"] != READ or r["trial"] == 0]
    return [*kept, settled(READ, 1, 5, "read-only")]


def _then_more_runs(records: list[dict]) -> list[dict]:
    """The claim written before the last runs of its task."""
    first = [r for r in records if r["task_id"] != READ or r["trial"] < 3]
    rest = [r for r in records if r["task_id"] == READ and r["trial"] >= 3]
    return [*first, settled(READ, 5, 5, "read-only"), *rest]


def _plan_misstated(records: list[dict]) -> list[dict]:
    """The flaky task's failures dropped, claimed settled with a read-only plan of 5."""
    kept = [r for r in records if r["task_id"] != FLAKY or r["success"]]
    return [*kept, settled(FLAKY, 9, 5)]


def _no_claim(records: list[dict]) -> list[dict]:
    return [r for r in records if r["task_id"] != FLAKY or r["success"]]


FORGERIES: dict[str, tuple[Callable[[list[dict]], list[dict]], str, str]] = {
    "flaky task settled": (_flaky_settled, FLAKY, "do not settle it under the protocol's gate"),
    "every run kept": (_every_run_kept, FLAKY, "none was left to settle"),
    "too early": (_too_early, READ, "do not settle it under the protocol's gate"),
    "then more runs": (_then_more_runs, READ, "a run of the task is recorded after it"),
    "plan misstated": (_plan_misstated, FLAKY, "it says 5 runs planned, the protocol plans 12"),
    "no claim": (_no_claim, f"{FLAKY}: 9 of 12", "the settle rule does not stop a task"),
}


@pytest.mark.parametrize("policy", [False, True], ids=["no policy", "policy init"])
@pytest.mark.parametrize("name", list(FORGERIES))
def test_a_fixed_log_rewritten_as_curtailed_never_passes(honest, repo, name, policy):
    if policy:
        init_policy(honest)
    make, task, words = FORGERIES[name]
    _, records = lines(honest)
    forged = forge(honest, repo / "forged.jsonl", make(records), stopping="curtailed")
    never_passed(forged, task=task, words=words)
    status, out, _ = passk("gate", forged)
    assert status == 1 and "incomplete results" in out
    replayed = results_of_replayed_log(forged, read_results(forged))
    assert FLAKY not in replayed.settled_early and READ not in replayed.settled_early
    assert any(task in why and words in why for why in replayed.incomplete)
    assert not judge(replayed, DEFAULT_CRITERIA).passed


@pytest.mark.parametrize("name", list(FORGERIES))
def test_the_reader_alone_takes_no_settled_record_as_settled(honest, repo, name):
    """read_results never reads a claim as settled: a curtailed log short of its plan is
    incomplete until replayed (as a log stopped early is)."""
    make, _, _ = FORGERIES[name]
    _, records = lines(honest)
    forged = forge(honest, repo / "forged.jsonl", make(records), stopping="curtailed")
    results = read_results(forged)
    assert dict(results.settled_early) == {}
    if name not in ("every run kept", "then more runs"):  # those hold every planned run
        assert results.incomplete and "curtailed plan" in results.incomplete[0]
    assert not judge(results, DEFAULT_CRITERIA).passed


def test_a_claim_the_settle_rule_bears_out_gets_the_honest_verdict(honest, repo):
    """One failure in 12 planned runs makes a task flaky at cap 0.2 whatever the rest give:
    stopped after trial 4 (its first failure), it is settled, and the verdict is the honest
    log's (BLOCKED, the task flaky)."""
    _, records = lines(honest)
    kept = [r for r in records if r["task_id"] != FLAKY or r["trial"] <= 4]
    forged = forge(honest, repo / "cut.jsonl", [*kept, settled(FLAKY, 5, 12)],
                   stopping="curtailed")
    replayed = results_of_replayed_log(forged, read_results(forged))
    assert dict(replayed.settled_early) == {FLAKY: 12} and replayed.incomplete == ()
    status, out, _ = passk("gate", forged)
    assert status == passk("gate", honest)[0] == 1
    assert f"task {FLAKY}: flakiness" in out and "incomplete" not in out


# --------------------------------------------------------------------------
# 3. honest curtailed logs keep their verdict
# --------------------------------------------------------------------------

def claims(log: Path) -> dict[str, int]:
    return {r["task_id"]: r["settled"]["runs_planned"] for r in lines(log)[1] if "settled" in r}


@pytest.mark.parametrize(("seed", "threads"), [(0, None), (1, 4), (2, None), (3, 3)])
def test_an_honest_curtailed_log_keeps_the_runs_verdict(tmp_path, monkeypatch, seed, threads):
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    extra = ["--concurrency", threads] if threads else []
    cut_status, ran, _ = passk("run", SIM, TASKS, "--log", "cut.jsonl", "--no-progress",
                               "--seed", seed, "--stopping", "curtailed", *extra)
    fixed_status = passk("run", SIM, TASKS, "--log", "fixed.jsonl", "--no-progress",
                         "--seed", seed)[0]
    assert cut_status == fixed_status
    replayed = results_of_replayed_log("cut.jsonl", read_results("cut.jsonl"))
    assert dict(replayed.settled_early) == claims(Path("cut.jsonl"))
    assert replayed.incomplete == ()
    status, out, _ = passk("gate", "cut.jsonl")
    assert status == cut_status
    verdict = [x for x in out.splitlines() if x.startswith(("gate:", "  - "))]
    assert verdict[1:] == [x for x in ran.splitlines() if x.startswith("  - ")]
    init_policy(Path("cut.jsonl"))
    assert passk("gate", "cut.jsonl")[0] == cut_status  # under the policy it wrote, too
    assert passk("report", "cut.jsonl")[0] == 0


def test_a_passing_curtailed_log_with_settled_tasks_still_passes(tmp_path, monkeypatch):
    """The suite of test_runner's settled-early case: t2 (p = 0) stops at 2 of 12."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    Path("tasks.jsonl").write_text("".join(f'{{"task_id": "t{i}", "p": {p}}}\n'
                                           for i, p in enumerate([1.0, 0.5, 0.0])))
    common = ["--k", "2", "--max-flakiness", "1", "--min-overall", "0",
              "--runs-read-only", "12", "--no-progress"]
    assert passk("run", "runner_helpers:SeedCoin", "tasks.jsonl", "--log", "cut.jsonl",
                 "--stopping", "curtailed", *common)[0] == 0
    assert claims(Path("cut.jsonl")) == {"t2": 12}
    status, out, _ = passk("gate", "cut.jsonl")
    assert status == 0 and "gate: PASSED" in out
    # resumed once complete, the log holds its settled records twice: the same verdict
    assert passk("run", "runner_helpers:SeedCoin", "tasks.jsonl", "--log", "cut.jsonl",
                 "--stopping", "curtailed", "--resume", *common)[0] == 0
    assert sum("settled" in r for r in lines(Path("cut.jsonl"))[1]) == 2
    assert passk("gate", "cut.jsonl")[0] == 0
    init_policy(Path("cut.jsonl"))
    assert passk("gate", "cut.jsonl")[0] == 0


PLUGIN_SUITE = """
import pytest

@pytest.mark.passk(runs=6, k=2)
def test_passes():
    pass

@pytest.mark.passk(runs=6, k=2)
def test_fails():
    assert False
"""
SHORT = """
@pytest.mark.passk(runs=1, k=2)
def test_short():
    pass
"""


@pytest.mark.parametrize(("cap", "short", "stopped"), [
    ("0.5", True, {"test_short": 1}),  # never reaches k = 2: settled before its run
    ("0.5", False, {}),
    ("1", False, {"test_fails": 6}),  # 0 of 2: pass^2 is 0 whatever its 4 other runs give
])
def test_the_pytest_plugins_curtailed_log_replays_to_the_sessions_verdict(pytester, cap,
                                                                          short, stopped):
    """The plugin writes no settled records: the replay finds the tests curtailment stopped
    from their runs alone, as the session did."""
    pytester.makepyfile(test_suite=PLUGIN_SUITE + (SHORT if short else ""))
    log = pytester.path / "cut.jsonl"
    session = pytester.runpytest("-p", "no:hypothesispytest", "--passk-policy", "curtailed",
                                 "--passk-max-flakiness", cap, "--passk-min-overall", "0.3",
                                 "--passk-log", str(log))
    status, out, _ = passk("gate", log)
    assert (session.ret == 0) == (status == 0), (session.ret, out)
    assert "cannot be replayed" not in out and "not borne out" not in out
    replayed = results_of_replayed_log(log, read_results(log))
    made = {r["task_id"]: 0 for r in lines(log)[1]}
    for r in lines(log)[1]:
        made[r["task_id"]] += 1
    planned = {t: v["runs"] for t, v in lines(log)[0]["protocol"]["settings"]["tests"].items()}
    # every test short of its plan is one the settle rule stops, or named as short
    for test, n in planned.items():
        if made.get(test, 0) < n and test not in replayed.settled_early:
            assert any(test in why for why in replayed.incomplete), (test, replayed.incomplete)
    assert dict(replayed.settled_early) == {f"test_suite.py::{t}": n for t, n in stopped.items()}
    assert replayed.incomplete == ()
