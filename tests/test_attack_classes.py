"""The gate attacked by class, on the paths into a verdict the other attack tests leave out.

Class 1, the policy not anchored: a scratch git repository with two commits (the base holds
a reviewed ``passk.toml`` with cap 0.2; the pull request's commit loosens it in each way a
user who wants a green light would: the cap raised, a nearer ``passk.toml``, a
``[tool.passk]`` beside it, a ``pyproject.toml`` that does not parse, a nested ``.git``, the
policy deleted), gated by the GitHub Action (:func:`passk.integrations.action.main`, with
``GITHUB_BASE_REF``) and by ``passk gate --policy-ref``. The reference is the honest
verdict: the base policy's on the same flaky results (BLOCKED, the flaky task named), or exit
2 with the reason; the outputs name the base's policy and its SHA-256 (``git show``'s bytes
hashed here), and the job summary shows the change.

Class 3, options outside the policy: each option that changes what counts is refused under
a policy (exit 2, naming the policy's value) and named on the verdict line without one, in
text, Markdown, JSON and HTML, the JSON's ``gate.overrides`` being exactly what the text
verdict line names. Class 7, bad values: a k of 10^30 from every front end is exit 2 with
the reason, never a traceback, and the Action still writes its outputs.

The structural tests: the criteria are bound from a policy in one place, the Action builds no
argv, and no module edits a verdict line after the judge.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import glob
import hashlib
import io
import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from passk.api import gate as api_gate
from passk.cli.commands import main
from passk.errors import PolicyError
from passk.integrations import action

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "passk"
LM = ROOT / "tests" / "fixtures" / "lm_eval"
HUGE = "1" + "0" * 30  # 10^30: more than any int64, more than any float's exact integers


def passk(*argv: object) -> tuple[int, str, str]:
    """``passk ARGV`` in process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in argv])
    return status, out.getvalue(), err.getvalue()


def verdict_line(text: str) -> str:
    """The verdict line of a text or Markdown report (bold stripped)."""
    lines = [ln.strip("*") for ln in text.splitlines() if ln.strip("*").startswith("gate: ")]
    assert len(lines) == 1, text
    return lines[0]


def write_runs(path: Path, outcomes: dict[str, list[bool]]) -> Path:
    path.write_text("".join(json.dumps({"task_id": t, "trial": i, "success": ok}) + "\n"
                            for t, runs in outcomes.items() for i, ok in enumerate(runs)),
                    encoding="utf-8")
    return path


#: Task a always passes, b passes 8 of 10: flakiness 4 (0.8)(0.2) = 0.64 (Fraction-exact),
#: over the base's cap 0.2 and under the attack's 1.0; pass^1 mean 0.9 clears the bar 0.7.
FLAKY = {"a": [True] * 10, "b": [True] * 8 + [False] * 2}
BASE_POLICY = "[gate]\nk = 1\nbar = 0.7\ncap = 0.2\n"
LOOSE_POLICY = "[gate]\nk = 1\nbar = 0.7\ncap = 1.0\n"
FLAKY_REASON = "task b: flakiness 0.640 exceeds the cap 0.200 (8/10 passed)"


# --------------------------------------------------------------------------
# class 1: the policy is the base's
# --------------------------------------------------------------------------

def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.email=a@example.com", "-c", "user.name=a",
                           "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main",
                           *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


def _raise_cap(repo: Path) -> Path:
    (repo / "passk.toml").write_text(LOOSE_POLICY, encoding="utf-8")
    return repo


def _nearer(repo: Path) -> Path:
    (repo / "evals" / "passk.toml").write_text(LOOSE_POLICY, encoding="utf-8")
    return repo / "evals"


def _pyproject_beside(repo: Path) -> Path:
    (repo / "pyproject.toml").write_text("[tool.passk.gate]\nk = 1\ncap = 1.0\n",
                                         encoding="utf-8")
    return repo


def _pyproject_bom(repo: Path) -> Path:
    (repo / "pyproject.toml").write_bytes(b"\xef\xbb\xbf[tool.passk.gate]\ncap = 1.0\n")
    return repo


def _pyproject_broken(repo: Path) -> Path:
    (repo / "pyproject.toml").write_text("[project]\nversion = 1\nversion = 2\n"
                                         "[tool.passk.gate]\ncap = 1.0\n", encoding="utf-8")
    return repo


def _deleted(repo: Path) -> Path:
    (repo / "passk.toml").unlink()
    return repo


def _cap_from_a_subdirectory(repo: Path) -> Path:
    _raise_cap(repo)
    return repo / "evals"


#: Each attack edits the pull request's tree and returns where the gate runs from.
ATTACKS: dict[str, Callable[[Path], Path]] = {
    "cap raised": _raise_cap,
    "cap raised, gated from a subdirectory": _cap_from_a_subdirectory,
    "a nearer passk.toml": _nearer,
    "[tool.passk] beside passk.toml": _pyproject_beside,
    "pyproject.toml with a byte-order mark": _pyproject_bom,
    "pyproject.toml that is not TOML": _pyproject_broken,
    "the policy deleted": _deleted,
}
#: What the summary's diff must show of each change.
CHANGE_SHOWN = {"cap raised": "+cap = 1.0", "cap raised, gated from a subdirectory": "+cap = 1.0",
                "a nearer passk.toml": "+cap = 1.0",
                "[tool.passk] beside passk.toml": "+[tool.passk.gate]",
                "pyproject.toml with a byte-order mark": "+\ufeff[tool.passk.gate]",
                "pyproject.toml that is not TOML": "+version = 2",
                "the policy deleted": "-cap = 0.2"}


@pytest.fixture
def pull_request(tmp_path: Path) -> Callable[[str], Path]:
    """A scratch repository: ``main`` (the base) holds the reviewed policy, ``pr`` the
    attack's commit, checked out; ``origin/main`` is the base, as ``actions/checkout`` and
    ``git fetch origin main`` leave it. The flaky results sit in ``evals/``, untracked, as a
    CI step writes them. Returns a function that applies an attack and gives the gate's
    working directory."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "passk.toml").write_text(BASE_POLICY, encoding="utf-8")
    (repo / "evals").mkdir()
    (repo / "evals" / "README").write_text("evaluations\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base: the reviewed policy")
    git(repo, "update-ref", "refs/remotes/origin/main", "main")
    git(repo, "checkout", "-qb", "pr")

    def attack(name: str) -> Path:
        cwd = ATTACKS[name](repo)
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"pr: {name}")
        write_runs(repo / "evals" / "runs.jsonl", FLAKY)
        return cwd

    attack.repo = repo  # type: ignore[attr-defined]
    return attack


def _base_sha256(repo: Path) -> str:
    shown = subprocess.run(["git", "show", "main:passk.toml"], cwd=repo, capture_output=True,
                           check=True)
    return hashlib.sha256(shown.stdout).hexdigest()


def run_action(cwd: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
               capsys: pytest.CaptureFixture[str], base: str | None = "main", **inputs: str
               ) -> tuple[int, str, str, dict[str, str]]:
    """The Action's step in process, from ``cwd``, on a pull request into ``main``:
    (status, stdout + stderr, summary, outputs)."""
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    summary.write_text("", encoding="utf-8")
    output.write_text("", encoding="utf-8")
    env = {**({"GITHUB_BASE_REF": base} if base else {}), "GITHUB_STEP_SUMMARY": str(summary),
           "GITHUB_OUTPUT": str(output), **{f"PASSK_{k.upper()}": v for k, v in inputs.items()}}
    monkeypatch.chdir(cwd)
    capsys.readouterr()
    status = action.main(env)
    got = capsys.readouterr()
    outputs = dict(line.split("=", 1) for line in output.read_text("utf-8").splitlines())
    return status, got.out + got.err, summary.read_text("utf-8"), outputs


@pytest.mark.parametrize("name", list(ATTACKS))
def test_the_action_gates_a_pull_request_under_the_base_policy(pull_request, tmp_path,
                                                                monkeypatch, capsys, name):
    cwd = pull_request(name)
    repo = pull_request.repo
    results = repo / "evals" / "runs.jsonl"
    status, log, summary, outputs = run_action(cwd, tmp_path, monkeypatch, capsys,
                                               results=str(results))
    assert status == 1 and outputs["verdict"] == "blocked", log
    assert outputs["policy"].split()[0] == "passk.toml"  # the root's, not a nearer one
    assert outputs["policy-sha256"] == _base_sha256(repo)
    line = verdict_line(summary)
    assert "flakiness cap 0.200" in line and _base_sha256(repo)[:12] in line, line
    assert FLAKY_REASON in summary
    assert f"::error title=passk gate::BLOCKED: {FLAKY_REASON}" in log
    assert "**This pull request changes the policy.**" in summary
    assert CHANGE_SHOWN[name] in summary, summary


def test_the_base_is_origin_s_branch_not_a_local_one(pull_request, tmp_path, monkeypatch,
                                                      capsys):
    """A local ``main`` moved to the pull request's commit does not become the base: the
    Action reads ``origin/main`` when it is there."""
    cwd = pull_request("cap raised")
    repo = pull_request.repo
    base = _base_sha256(repo)
    git(repo, "branch", "-f", "main", "pr")
    status, log, _summary, outputs = run_action(cwd, tmp_path, monkeypatch, capsys,
                                               results=str(repo / "evals" / "runs.jsonl"))
    assert status == 1 and outputs["policy-sha256"] == base, log
    assert outputs["policy"] == "passk.toml at origin/main"


def test_a_nested_repository_does_not_end_the_search(pull_request, tmp_path, monkeypatch,
                                                     capsys):
    """A ``.git`` made inside the checkout (a nested repository whose ``main`` holds a loose
    policy) neither ends the search nor becomes the base: the outer repository's base
    policy gates, run from inside the nested one."""
    cwd = pull_request("a nearer passk.toml")
    repo = pull_request.repo
    git(cwd, "init", "-q")
    git(cwd, "add", "-A")
    git(cwd, "commit", "-qm", "nested: its own loose policy")
    status, log, summary, outputs = run_action(cwd, tmp_path, monkeypatch, capsys,
                                               results="runs.jsonl")
    assert status == 1 and outputs["verdict"] == "blocked", log
    assert outputs["policy-sha256"] == _base_sha256(repo)
    assert FLAKY_REASON in summary


def test_a_policy_input_the_base_lacks_is_refused(pull_request, tmp_path, monkeypatch,
                                                  capsys):
    """``policy: loose.toml`` naming a file the pull request adds is exit 2: a policy gates
    once it is reviewed and merged."""
    cwd = pull_request("cap raised")
    repo = pull_request.repo
    (repo / "loose.toml").write_text(LOOSE_POLICY, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "pr: its own policy file")
    status, log, summary, outputs = run_action(cwd, tmp_path, monkeypatch, capsys,
                                               results="evals/runs.jsonl", policy="loose.toml")
    assert status == 2 and outputs["verdict"] == "error", log
    assert "loose.toml: not in the commit origin/main" in log
    assert summary.startswith("## passk gate: error\n")
    assert outputs == {"verdict": "error", "pass-hat-k": "", "interval": "", "k": "",
                       "policy": "", "policy-sha256": ""}


@pytest.mark.parametrize("name", list(ATTACKS))
def test_passk_gate_policy_ref_gates_under_the_base_policy(pull_request, monkeypatch, name):
    """``passk gate --policy-ref main``, in text, Markdown and JSON, and ``passk report``."""
    cwd = pull_request(name)
    repo = pull_request.repo
    monkeypatch.chdir(cwd)
    runs = repo / "evals" / "runs.jsonl"
    for fmt in ([], ["--markdown"], ["--json"]):
        status, out, err = passk("gate", runs, "--policy-ref", "main", *fmt)
        assert status == 1, err
        if fmt == ["--json"]:
            gate = json.loads(out)["gate"]
            assert (gate["passed"], gate["cap"], gate["reasons"]) == (False, 0.2,
                                                                      [FLAKY_REASON])
            assert gate["policy"] == "passk.toml at main"
            assert gate["policy_sha256"] == _base_sha256(repo)
        else:
            line = verdict_line(out)
            assert "flakiness cap 0.200" in line and "[policy passk.toml at main (sha256 " \
                f"{_base_sha256(repo)[:12]})]" in line, line
            assert FLAKY_REASON in out
    status, out, err = passk("report", runs, "--policy-ref", "main")
    assert status == 0 and "gate: BLOCKED" in verdict_line(out) and FLAKY_REASON in out, err


@pytest.mark.parametrize("name", ["a nearer passk.toml", "[tool.passk] beside passk.toml",
                                  "pyproject.toml with a byte-order mark",
                                  "pyproject.toml that is not TOML"])
def test_the_working_tree_s_second_policy_is_an_error_not_a_silent_choice(pull_request,
                                                                          monkeypatch, name):
    """Without ``--policy-ref`` (a local run on the pull request's checkout) each of these
    is exit 2 naming the files or the one that does not parse: never "no policy", never the
    nearer file alone."""
    cwd = pull_request(name)
    repo = pull_request.repo
    monkeypatch.chdir(cwd)
    status, out, err = passk("gate", repo / "evals" / "runs.jsonl")
    assert status == 2 and out == "", err
    assert ("more than one policy" in err) or ("pyproject.toml: not valid TOML" in err), err
    assert err.count("\n") == 1


def test_the_working_tree_with_the_policy_deleted_says_no_policy(pull_request, monkeypatch):
    """Deleting the policy in the working tree is "no policy", said on the verdict line (the
    Action and ``--policy-ref`` read the base's instead: see above)."""
    cwd = pull_request("the policy deleted")
    monkeypatch.chdir(cwd)
    status, out, _ = passk("gate", "evals/runs.jsonl", "--k", "1", "--max-flakiness", "1")
    assert status == 0
    assert verdict_line(out).endswith("  [no policy: criteria from the command line]"), out


# --------------------------------------------------------------------------
# class 3: options outside the policy
# --------------------------------------------------------------------------

def lm_samples(run: str) -> Path:
    (found,) = glob.glob(str(LM / run / "*" / "samples_*.jsonl"))
    return Path(found)


def named_on_the_line(line: str, overrides: list[str]) -> None:
    """The verdict line names exactly the JSON's ``gate.overrides``: the reader's own in
    ``(with: ...)``, the bound ones after the policy in ``[...]``."""
    tail = line[line.rindex("  [") + 3:-1].split("; ")[1:]
    said = re.search(r"^gate: \w+ \(with: (.*?)\)  overall", line)
    reader = [o for o in overrides if o not in tail]
    assert said is None if not reader else said.group(1) == ", ".join(reader), line
    assert set(tail) <= set(overrides) and len(set(tail) | set(reader)) == len(overrides)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def inspect_log(repo: Path) -> Path:
    pytest.importorskip("inspect_ai")
    from inspect_logs import write_log

    # s1 always C; s2 answers I (a wrong answer) in two epochs of three, with a partial
    # credit P in one, a numeric score 0.6 nowhere: a lenient success rule turns it green
    return write_log(repo / "log.eval", {("s1", 1): "C", ("s1", 2): "C", ("s1", 3): "C",
                                         ("s2", 1): "I", ("s2", 2): "P", ("s2", 3): "I"})


#: (option, what the verdict names) for Inspect logs: each changes what counts as a success.
INSPECT_CHOICES = [
    (["--success-value", "P"], "--success-value P"),
    (["--success-value", "P", "--success-value", "I"], "--success-value P, I"),
    (["--scorer", "match", "--success-value", "P"], "--scorer match"),
]


@pytest.mark.parametrize(("option", "named"), INSPECT_CHOICES)
def test_an_inspect_choice_is_named_in_every_format_without_a_policy(repo, inspect_log,
                                                                      option, named):
    base = ("gate", inspect_log, "--k", "1", *option)
    status, out, _ = passk(*base)
    line = verdict_line(out)
    assert named in line, line
    md = passk(*base, "--markdown")[1]
    assert verdict_line(md) == line
    report = json.loads(passk(*base, "--json")[1])
    assert named in report["gate"]["overrides"]
    named_on_the_line(line, report["gate"]["overrides"])
    assert passk(*base, "--html", repo / "page.html")[0] == status
    page = (repo / "page.html").read_text(encoding="utf-8")
    assert 'class="verdict' in page and named in page


@pytest.mark.parametrize(("option", "refusal"), [
    (["--success-value", "P"], ("--success-value P would loosen the policy's success values "
                               "['C']")),
    (["--scorer", "lenient"], "--scorer lenient would loosen the policy's scorer 'match'"),
    (["--success-threshold", "0"], ("--success-threshold 0 would loosen the policy's success "
                                   "rule (no threshold)")),
    (["--errors", "exclude"], "--errors exclude would loosen the policy's errors = 'fail'"),
])
def test_an_inspect_choice_is_refused_under_a_policy(repo, inspect_log, option, refusal):
    (repo / "passk.toml").write_text('producer = "inspect"\n[success]\nscorer = "match"\n'
                                     'values = ["C"]\n[gate]\nk = 1\n', encoding="utf-8")
    honest = passk("gate", inspect_log)
    assert honest[0] == 1
    for fmt in ([], ["--json"], ["--markdown"]):
        status, out, err = passk("gate", inspect_log, *option, *fmt)
        assert status == 2 and out == "" and refusal in err and "(passk.toml)" in err, err
    with pytest.raises(PolicyError, match=re.escape(refusal.split(" would")[1])):
        api_gate(str(inspect_log), asked=_asked(option), cwd=repo)


def _asked(option: list[str]) -> dict[str, object]:
    """An option as the Python API's ``asked`` mapping (the binding's names)."""
    name = option[0].lstrip("-").replace("-", "_")
    name = {"success_value": "success_values"}.get(name, name)
    values = option[1::2]
    if name == "success_values":
        return {name: values}
    if name == "success_threshold":
        return {name: float(values[0])}
    return {name: values[0] if values else True}


LM_POLICY = 'producer = "lm-eval"\n[success]\nmetric = "exact_match"\nfilter = "strict"\n' \
            "[gate]\nk = 1\n"


@pytest.mark.parametrize(("option", "refusal"), [
    (["--metric", "contains"], ("--metric contains would loosen the policy's metric "
                               "'exact_match'")),
    (["--filter", "raw"], "--filter raw would loosen the policy's filter 'strict'"),
    (["--success-threshold", "0.5"], ("--success-threshold 0.5 would loosen the policy's "
                                     "success rule (no threshold)")),
])
def test_an_lm_eval_choice_is_refused_under_a_policy(repo, option, refusal):
    (repo / "passk.toml").write_text(LM_POLICY, encoding="utf-8")
    samples = lm_samples("repeats")
    honest = passk("gate", samples)
    assert honest[0] == 1
    assert "policy's metric exact_match, filter strict" in verdict_line(honest[1])
    status, out, err = passk("gate", samples, *option)
    assert status == 2 and out == "" and refusal in err, err
    with pytest.raises(PolicyError, match="would loosen the policy's"):
        api_gate(str(samples), asked=_asked(option), cwd=repo)


def test_an_lm_eval_choice_is_named_in_every_format_without_a_policy(repo):
    samples = lm_samples("repeats")
    argv = ("gate", samples, "--k", "1", "--metric", "contains", "--filter", "raw",
            "--success-threshold", "0.5")
    status, out, _ = passk(*argv)
    line = verdict_line(out)
    want = ["--success-threshold 0.5", "--metric contains", "--filter raw"]
    assert all(w in line for w in want), line
    report = json.loads(passk(*argv, "--json")[1])
    assert report["gate"]["overrides"] == want
    named_on_the_line(line, report["gate"]["overrides"])
    assert verdict_line(passk(*argv, "--markdown")[1]) == line
    assert passk(*argv, "--html", repo / "p.html")[0] == status
    page = (repo / "p.html").read_text(encoding="utf-8")
    assert all(w in page for w in want)


def test_a_policy_s_scorer_for_lm_eval_evidence_is_refused_not_dropped(repo):
    (repo / "passk.toml").write_text(LM_POLICY.replace("[success]\n", '[success]\nscorer = '
                                                       '"exact_match"\n'), encoding="utf-8")
    for fmt in ([], ["--json"], ["--markdown"]):
        status, out, err = passk("gate", lm_samples("repeats"), *fmt)
        assert status == 2 and out == "", err
        assert "success.scorer: does not apply to lm-eval evidence" in err, err


#: (option, refusal) on plain JSON Lines under a policy with the defaults' rules.
READER_CHOICES = [
    (["--errors", "exclude"], "--errors exclude would loosen the policy's errors = 'fail'"),
    (["--pool-unverified-runs"], ("--pool-unverified-runs would loosen the policy's pooling "
                                 "['trials']")),
    (["--pool-evaluations"], ("--pool-evaluations would loosen the policy's pooling "
                             "['trials']")),
    (["--duplicates", "last"], "--duplicates last would loosen the policy's evidence"),
    (["--duplicates", "first"], "--duplicates first would loosen the policy's evidence"),
    (["--accept-incomplete"], ("--accept-incomplete would loosen the policy's task set and "
                              "runs")),
]


@pytest.mark.parametrize(("option", "refusal"), READER_CHOICES)
@pytest.mark.parametrize("command", ["gate", "report"])
def test_a_reader_choice_is_refused_under_a_policy(repo, option, refusal, command):
    (repo / "passk.toml").write_text("[gate]\nk = 1\n", encoding="utf-8")
    runs = write_runs(repo / "r.jsonl", FLAKY)
    assert passk(command, runs)[0] in (0, 1)
    for fmt in ([], ["--json"], ["--markdown"]):
        status, out, err = passk(command, runs, *option, *fmt)
        assert status == 2 and out == "" and refusal in err, err


@pytest.mark.parametrize(("option", "refusal"), READER_CHOICES[1:])
def test_a_reader_choice_is_refused_by_the_python_api_too(repo, option, refusal):
    (repo / "passk.toml").write_text("[gate]\nk = 1\n", encoding="utf-8")
    runs = write_runs(repo / "r.jsonl", FLAKY)
    asked = {option[0].lstrip("-").replace("-", "_"): option[1] if len(option) > 1 else True}
    with pytest.raises(PolicyError, match=re.escape("would loosen the policy's")):
        api_gate(str(runs), asked=asked, cwd=repo)


def test_reader_choices_are_named_in_every_format_without_a_policy(repo):
    runs = repo / "r.jsonl"
    # task a recorded twice at trial 0 (the first a failure), and a second file of b
    runs.write_text('{"task_id": "a", "trial": 0, "success": false}\n'
                    + "".join(f'{{"task_id": "a", "trial": {t}, "success": true}}\n'
                              for t in range(5)), encoding="utf-8")
    other = write_runs(repo / "s.jsonl", {"a": [True] * 5})
    argv = ("gate", runs, other, "--duplicates", "last", "--accept-incomplete",
            "--pool-unverified-runs", "--pool-evaluations", "--k", "1")
    status, out, _ = passk(*argv)
    line = verdict_line(out)
    report = json.loads(passk(*argv, "--json")[1])
    overrides = report["gate"]["overrides"]
    for phrase in ("--duplicates last", "--accept-incomplete", "--pool-unverified-runs",
                   "--pool-evaluations"):
        assert phrase in overrides and phrase in line, (phrase, line)
    named_on_the_line(line, overrides)
    assert verdict_line(passk(*argv, "--markdown")[1]) == line
    assert passk(*argv, "--html", repo / "p.html")[0] == status
    page = (repo / "p.html").read_text(encoding="utf-8")
    assert all(o in page for o in overrides)


@pytest.mark.parametrize(("asked", "status"), [
    (["--mode", "chapter"], 2), (["--mode", "proved-warn"], 2), (["--mode", "proved"], 1), ([], 1)])
def test_the_gate_mode_is_a_criterion_of_the_policy(repo, asked, status):
    """Under ``[gate] mode = "proved"`` a looser mode is refused naming the policy's mode;
    the policy's mode decides otherwise (its proved bound on the 10-run flaky suite is
    under the bar, so it blocks where the chapter's estimate does not)."""
    (repo / "passk.toml").write_text('[gate]\nk = 1\ncap = 1.0\nmode = "proved"\n',
                                     encoding="utf-8")
    runs = write_runs(repo / "r.jsonl", FLAKY)
    got, out, err = passk("gate", runs, *asked)
    assert got == status, err
    if status == 2:
        assert f"{' '.join(asked)} would loosen the policy's mode 'proved'" in err, err
    else:
        assert "proved lower bound on pass^1" in verdict_line(out)
        (repo / "passk.toml").write_text("[gate]\nk = 1\ncap = 1.0\n", encoding="utf-8")
        assert passk("gate", runs)[0] == 0  # the chapter's rule passes it


# --------------------------------------------------------------------------
# class 7: bad values end in one line, never a traceback
# --------------------------------------------------------------------------

@pytest.mark.parametrize("option", ["--k", "--min-runs", "--k-for"])
@pytest.mark.parametrize("command", ["gate", "report"])
def test_a_huge_number_on_the_command_line_is_a_usage_error(repo, capsys, option, command):
    runs = write_runs(repo / "r.jsonl", FLAKY)
    value = f"read-only={HUGE}" if option == "--k-for" else HUGE
    with pytest.raises(SystemExit) as exc:
        main([command, str(runs), option, value])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"{HUGE} is more than 1,000,000,000" in err and "Traceback" not in err


@pytest.mark.parametrize("key", ["[gate]\nk", "[gate]\nmin_runs", "[tasks]\nruns"])
def test_a_huge_number_in_the_policy_is_exit_2_naming_the_key(repo, key):
    (repo / "passk.toml").write_text(f"{key} = {HUGE}\n", encoding="utf-8")
    runs = write_runs(repo / "r.jsonl", FLAKY)
    for fmt in ([], ["--json"], ["--markdown"]):
        status, out, err = passk("gate", runs, *fmt)
        name = key.replace("[", "").replace("]\n", ".")
        assert status == 2 and out == "", err
        assert f"passk.toml: {name}: {HUGE} is more than 1,000,000,000" in err, err
    with pytest.raises(PolicyError, match="is more than 1,000,000,000"):
        api_gate(str(runs), cwd=repo)


@pytest.mark.parametrize("variable", ["K", "MIN_RUNS"])
def test_a_huge_number_in_the_action_writes_its_outputs(repo, tmp_path, monkeypatch, capsys,
                                                        variable):
    runs = write_runs(repo / "r.jsonl", FLAKY)
    status, log, summary, outputs = run_action(repo, tmp_path, monkeypatch, capsys,
                                               base=None, results=str(runs),
                                               **{variable: HUGE})
    assert status == 2 and "Traceback" not in log
    assert outputs == {"verdict": "error", "pass-hat-k": "", "interval": "", "k": "",
                       "policy": "", "policy-sha256": ""}
    name = variable.lower().replace("_", "-")
    assert f"::error title=passk gate::passk gate: error: {name}: {HUGE} is more than" in log
    assert summary.startswith("## passk gate: error\n")


def test_a_huge_k_in_the_base_policy_is_an_error_in_the_action(pull_request, tmp_path,
                                                               monkeypatch, capsys):
    cwd = pull_request("cap raised")
    repo = pull_request.repo
    git(repo, "checkout", "-q", "main")
    (repo / "passk.toml").write_text(f"[gate]\nk = {HUGE}\n", encoding="utf-8")
    git(repo, "commit", "-qam", "base: k 10^30")
    git(repo, "update-ref", "refs/remotes/origin/main", "main")
    git(repo, "checkout", "-q", "pr")
    status, log, _, outputs = run_action(cwd, tmp_path, monkeypatch, capsys,
                                         results="evals/runs.jsonl")
    assert status == 2 and outputs["verdict"] == "error" and "Traceback" not in log
    assert f"passk.toml at origin/main: gate.k: {HUGE} is more than 1,000,000,000" in log


# --------------------------------------------------------------------------
# structure: one binding, no argv, no verdict edited after the judge
# --------------------------------------------------------------------------

@functools.cache
def _modules() -> list[tuple[str, ast.Module]]:
    return [(p.relative_to(PACKAGE).as_posix(), ast.parse(p.read_text(encoding="utf-8")))
            for p in sorted(PACKAGE.rglob("*.py"))]


def _enclosing(tree: ast.AST) -> dict[int, str]:
    """Each node's innermost enclosing function's name."""
    out: dict[int, str] = {}

    def visit(node: ast.AST, name: str) -> None:
        for child in ast.iter_child_nodes(node):
            here = child.name if isinstance(child, (ast.FunctionDef,
                                                    ast.AsyncFunctionDef)) else name
            out[id(child)] = here
            visit(child, here)

    visit(tree, "<module>")
    return out


def _called(call: ast.Call) -> str | None:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


#: Where ``GateCriteria(...)`` (under any name bound to it: ``GateSettings``) may be called,
#: by (module, function), and why:
#: - ``gate/bind.py`` ``bind``: the one binding (policy + protocol + options + defaults);
#: - ``gate/policy.py`` ``parse_policy`` (the policy file's own values, validated, before
#:   anything binds them) and ``policy_init`` (the defaults, to write a starting file);
#: - ``criteria.py`` at module level: the defaults (``DEFAULT_CRITERIA``);
#: - what a log or protocol says it served, to check or replay it, never to gate with a
#:   policy: ``gate/criteria.py`` ``gate`` (a curtailed log's served gate against the one
#:   asked), ``run/runner.py`` ``_replay``/``stop_of_log``/``_curtailed_plan`` (a log's own
#:   protocol, replayed through the scheduler);
#: - keyword APIs without a policy: ``run/runner.py`` ``run_suite`` (its keywords, used only
#:   when no ``in_force`` is given) and ``run/evaluate.py`` ``evaluate_suite``;
#: - ``analysis/report.py`` ``build_report``: the report's criteria from values already bound
#:   (``passk.api.Evaluation.criteria``'s keywords).
#: Anything else that builds one bypasses the binding: Inspect's ``Curtailment``, the
#: pytest plugin and ``run_suite(in_force=...)`` take ``InForce.criteria`` whole
#: (``dataclasses.replace`` of it), so that no front end gates on a subset of the policy.
ALLOWED_CRITERIA = {("gate/bind.py", "bind"), ("gate/policy.py", "parse_policy"),
                    ("gate/policy.py", "policy_init"), ("criteria.py", "<module>"),
                    ("gate/criteria.py", "gate"), ("run/runner.py", "_replay"),
                    ("run/runner.py", "stop_of_log"), ("run/runner.py", "_curtailed_plan"),
                    ("run/runner.py", "run_suite"), ("run/evaluate.py", "evaluate_suite"),
                    ("analysis/report.py", "build_report")}


def _criteria_names() -> set[str]:
    """``GateCriteria`` and every name bound to it in the package (``X = GateCriteria``,
    ``import GateCriteria as X``)."""
    names = {"GateCriteria"}
    for _, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) \
                    and node.value.id in names:
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            if isinstance(node, ast.ImportFrom):
                names |= {a.asname for a in node.names if a.name == "GateCriteria" and a.asname}
    return names


def test_no_module_but_the_binding_builds_criteria_from_a_policy():
    """``GateCriteria(`` (or an alias, ``GateSettings(``) is called only where
    :data:`ALLOWED_CRITERIA` says (see its comment for why each), and no module outside the
    binding and the policy's own file reads a policy's ``.criteria`` to gate with
    (``policy.criteria`` passed on, replaced or unpacked), so a front end cannot take a
    subset of the policy."""
    names = _criteria_names()
    assert "GateSettings" in names  # the scan sees through the alias
    built, read = [], []
    for where, tree in _modules():
        inside = _enclosing(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _called(node) in names:
                fn = inside.get(id(node), "<module>")
                if (where, fn) not in ALLOWED_CRITERIA:
                    built.append(f"{where}:{node.lineno} in {fn}")
            if (isinstance(node, ast.Attribute) and node.attr == "criteria"
                    and isinstance(node.value, (ast.Name, ast.Attribute))
                    and "policy" in ast.unparse(node.value).lower()
                    and where not in ("gate/bind.py", "gate/policy.py")):
                read.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
    assert built == [], "GateCriteria built outside the binding"
    assert read == [], "a policy's criteria read outside the binding"


def test_the_structural_scan_finds_what_it_forbids():
    """The scans above catch the forms they forbid (each planted in a module of its own)."""
    planted = ast.parse("def f(policy):\n    c = GateCriteria(k=policy.criteria.k)\n"
                        "    return dataclasses.replace(policy.criteria, k=1)\n")
    calls = [n for n in ast.walk(planted) if isinstance(n, ast.Call)
             and _called(n) == "GateCriteria"]
    reads = [n for n in ast.walk(planted) if isinstance(n, ast.Attribute)
             and n.attr == "criteria" and "policy" in ast.unparse(n.value)]
    assert len(calls) == 1 and len(reads) == 2 and _enclosing(planted)[id(calls[0])] == "f"
    assert _argv_built(ast.parse("argv = ['gate', f]\nmain(argv)\n"))
    assert _argv_built(ast.parse("build_parser().parse_args(['gate'])\n"))
    assert _argv_built(ast.parse("commands.main(['gate', x])\n"))
    assert not _argv_built(ast.parse("asked_of(env)\n"))
    assert _verdict_edits(ast.parse("line = gate.verdict().replace('x', 'y')\n"))
    assert _verdict_edits(ast.parse("line = gate.verdict() + '  [policy]'\n"))
    assert _verdict_edits(ast.parse(
        "for i, line in enumerate(lines):\n    if line.startswith('gate: '):\n"
        "        lines[i] = line + ' [x]'\n"))
    assert _verdict_edits(ast.parse("out.append(f'gate: {word}  overall')\n"))
    assert not _verdict_edits(ast.parse("print(gate.verdict())\n"))


def _argv_built(tree: ast.AST) -> list[str]:
    """Where a module parses or builds a command line to reach another front end."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called(node) in ("parse_args", "parse_known_args"):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
        if isinstance(node, ast.Call) and _called(node) == "main" and node.args:
            found.append(f"{node.lineno}: {ast.unparse(node)}")
        if isinstance(node, ast.List) and node.elts and isinstance(node.elts[0], ast.Constant) \
                and node.elts[0].value in ("gate", "report", "passk"):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and re.fullmatch(r"--(k|min-overall|max-flakiness|on|confidence|policy)",
                                 node.value):
            found.append(f"{node.lineno}: {node.value!r}")
    return found


def test_the_action_builds_no_argv():
    """The Action is a skin over :mod:`passk.api`: it never parses a command line
    (``build_parser().parse_args``), never builds an argv list for ``passk``'s ``main``, and
    spells no option of ``passk gate`` (it reads the criteria's variables from the
    binding's table)."""
    tree = ast.parse((PACKAGE / "integrations" / "action.py").read_text(encoding="utf-8"))
    assert _argv_built(tree) == []
    script = (ROOT / "scripts" / "gate_action.py").read_text(encoding="utf-8")
    assert _argv_built(ast.parse(script)) == []


def _is_verdict(node: ast.AST) -> bool:
    """``x.verdict()``, or ``gate.describe(...)`` (a verdict's, not the criteria's): the
    judge's line."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return False
    owner = ast.unparse(node.func.value)
    return node.func.attr == "verdict" or (node.func.attr == "describe" and (
        owner.endswith(("gate", "verdict"))))


def _starts_gate(node: ast.AST) -> bool:
    """A string (or f-string) that starts a verdict line: ``"gate: ..."``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.startswith("gate: ")
    if isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
        return isinstance(first, ast.Constant) and str(first.value).startswith("gate: ")
    return False


def _verdict_edits(tree: ast.AST) -> list[str]:
    """Where a module edits the judge's verdict line, or writes a verdict line of its own:
    ``verdict().replace(...)``/``+``/f-string around it; a line that starts with
    ``"gate: "`` assigned to with ``+`` or ``.replace``; a string built to start with
    ``"gate: "`` (only the judge's :meth:`GateResult.verdict` makes one)."""
    found = []
    guarded: set[str] = set()  # names tested with .startswith("gate: ")
    tests: set[int] = set()  # the "gate: " of those tests: a test, not a line made
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called(node) == "startswith" and node.args \
                and _starts_gate(node.args[0]) and isinstance(node.func, ast.Attribute):
            guarded.add(ast.unparse(node.func.value))
            tests.add(id(node.args[0]))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("replace", "removesuffix", "removeprefix", "rstrip") \
                and (_is_verdict(node.func.value) or ast.unparse(node.func.value) in guarded):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and (
                _is_verdict(node.left) or _is_verdict(node.right)
                or ast.unparse(node.left) in guarded):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
        if isinstance(node, ast.JoinedStr) and any(
                isinstance(v, ast.FormattedValue) and _is_verdict(v.value) for v in node.values) \
                and len(node.values) > 1 and not all(
                isinstance(v, ast.FormattedValue) or not str(getattr(v, "value", "")).strip("*")
                for v in node.values):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
        if _starts_gate(node) and id(node) not in tests:
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


#: Where a string may start with "gate: ": the judge's own line (GateResult.verdict), and
#: docstrings' examples (not code).
VERDICT_MAKER = ("stability.py", "verdict")


def test_no_module_edits_a_verdict_line_after_the_judge():
    """Beyond ``tests/test_judge.py``'s scan of ``GateResult(`` and ``replace(``: no module
    edits the text of a verdict line (``verdict().replace``, ``verdict() + "  ["``,
    ``lines[i] = line + ...`` on a line starting with ``"gate: "``) or writes a verdict line
    of its own; only :meth:`passk.stability.GateResult.verdict` starts a string with
    ``"gate: "``. Markdown's bold around the whole line (``f"**{verdict()}**"``) is a
    rendering, not an edit."""
    edits = []
    for where, tree in _modules():
        inside = _enclosing(tree)
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef,
                                        ast.ClassDef))
                      and n.body and isinstance(n.body[0], ast.Expr)
                      and isinstance(n.body[0].value, ast.Constant)}
        for found in _verdict_edits(tree):
            line = int(found.split(":")[0])
            nodes = [n for n in ast.walk(tree) if getattr(n, "lineno", None) == line]
            if (where, inside.get(id(nodes[0]), "")) == VERDICT_MAKER or any(
                    id(n) in docstrings for n in nodes):
                continue
            edits.append(f"{where}:{found}")
    assert edits == [], "a verdict line edited (or made) outside the judge"
