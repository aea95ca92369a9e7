"""What a new user meets first, attacked by class (issue 37's "Also met").

- ``passk --version``: the distribution's version (:mod:`importlib.metadata`), the checkout's
  ``pyproject.toml`` when it was never installed.
- A mistyped option or command: one line naming it and the nearest of that command's own
  options (:func:`difflib.get_close_matches`, the reference), exit 2; no abbreviation.
- ``passk run --policy curtailed``: ``--policy`` names a file; the stopping rule's name there
  is refused, pointing to ``--stopping``.
- ``--no-policy``: ``passk report`` and ``plan`` may set the repository's policy aside, and
  say so on stderr and on the verdict line (text, Markdown, JSON); nothing that decides may:
  ``passk gate``, ``diff``, ``rank``, ``run``, the Python API's gate, the binding itself, the
  GitHub Action and the pytest plugin all stay bound.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import json
from pathlib import Path

import pytest

from passk import api
from passk._version import DISTRIBUTION, _checkout_version, version
from passk.cli.commands import build_parser, main
from passk.errors import PolicyError
from passk.gate.bind import bind
from passk.gate.policy import (
    NO_POLICY,
    POLICY_SET_ASIDE,
    SET_ASIDE_BY,
    load_policy,
    policy_in_force,
    set_aside_refusal,
)
from passk.integrations import action

ROOT = Path(__file__).resolve().parents[1]
TASKS = ROOT / "examples" / "oncall_tasks.jsonl"


def passk(*argv: object) -> tuple[int, str, str]:
    """``passk ARGV`` in process: (exit status, stdout, stderr); argparse's exit too."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main([str(a) for a in argv])
        except SystemExit as exc:
            status = int(exc.code or 0)
    return status, out.getvalue(), err.getvalue()


def _write(path: Path, tasks: str, fail_every: int = 0, runs: int = 6) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(
        json.dumps({"task_id": t, "trial": i,
                    "success": not (fail_every and t == tasks[-1] and i % fail_every == 0)})
        + "\n" for t in tasks for i in range(runs)), encoding="utf-8")
    return path


# --- passk --version -------------------------------------------------------------------

def test_version_is_the_distributions():
    from importlib import metadata

    status, out, _ = passk("--version")
    assert status == 0 and out == f"passk {metadata.version(DISTRIBUTION)}\n"
    assert version() == metadata.version(DISTRIBUTION)
    import passk as package

    assert package.__version__ == version()


@pytest.mark.parametrize(("text", "expected"), [
    ('[project]\nname = "passk-reliability"\nversion = "2.3.4"\n', "2.3.4+checkout"),
    ('[project]\nname = "another"\nversion = "9.9"\n', "0+unknown"),
    ('[project]\nname = "passk-reliability"\n', "0+unknown"),
    ("project = 3\n", "0+unknown"),
    ("not toml [", "0+unknown"),
    (None, "0+unknown"),
])
def test_a_checkout_never_installed_reads_its_pyproject(tmp_path, text, expected):
    pyproject = tmp_path / "pyproject.toml"
    if text is not None:
        pyproject.write_text(text, encoding="utf-8")
    assert _checkout_version(pyproject) == expected


def test_an_uninstalled_checkout_says_so(monkeypatch):
    from importlib import metadata

    def missing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    assert version() == _checkout_version(ROOT / "pyproject.toml")
    assert version().endswith("+checkout")


# --- a typo: one line, the nearest names, exit 2 ---------------------------------------

def _options(command: str) -> list[str]:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    parser = sub.choices[command]  # type: ignore[index]
    return sorted({s for a in parser._actions for s in a.option_strings} - {"-h", "--help"})


@pytest.mark.parametrize(("argv", "typed"), [
    (["gate", "f.jsonl", "--min-overal", "0.7"], "--min-overal"),  # a prefix: no abbreviation
    (["gate", "f.jsonl", "--max-flakyness", "0.3"], "--max-flakyness"),
    (["gate", "f.jsonl", "--basline", "old.jsonl"], "--basline"),
    (["report", "f.jsonl", "--confidance", "0.9"], "--confidance"),
    (["report", "f.jsonl", "--plto", "x.png"], "--plto"),
    (["report", "f.jsonl", "--markdwon"], "--markdwon"),
    (["plan", "--compare", "--delat", "0.1"], "--delat"),
    (["diff", "a", "b", "--margn", "0.1"], "--margn"),
    (["run", "m:a", "t.jsonl", "--log", "l", "--stoping", "curtailed"], "--stoping"),
    (["rank", "a", "b", "--candiate", "a"], "--candiate"),
    (["gate", "f.jsonl", "--min-overal=0.7"], "--min-overal"),
])
def test_a_mistyped_option_names_it_and_the_nearest_of_its_commands_options(argv, typed):
    status, out, err = passk(*argv)
    near = difflib.get_close_matches(typed, _options(argv[0]), n=3)  # the reference
    assert status == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"passk {argv[0]}: error: unknown option {typed} (did you mean ")
    assert near and near[0] in err and all(n in err for n in near)
    assert all(n in _options(argv[0]) for n in near)


def test_suggestions_come_from_the_commands_own_options():
    """--html is an option of report, not of plan: plan's typo is not sent to it."""
    status, _, err = passk("plan", "--htm", "x")
    assert status == 2 and "--html" not in err and "passk plan --help" in err
    status, _, err = passk("report", "f.jsonl", "--htm", "x")
    assert status == 2 and "did you mean --html?" in err


@pytest.mark.parametrize(("typed", "command"), [
    ("reprot", "report"), ("gat", "gate"), ("pln", "plan"), ("dif", "diff"), ("rnak", "rank"),
])
def test_a_mistyped_command_names_the_nearest(typed, command):
    status, _, err = passk(typed, "f.jsonl")
    assert status == 2 and err.count("\n") == 1
    assert err.startswith(f"passk: error: unknown command {typed!r} (did you mean ")
    assert command in err and "choose from" not in err


def test_nothing_near_lists_where_to_look():
    status, _, err = passk("gate", "f.jsonl", "--zzzzzz")
    assert status == 2 and "did you mean" not in err and "passk gate --help" in err
    status, _, err = passk("zzzzzz")
    assert status == 2 and "did you mean" not in err and "commands: demo" in err


@pytest.mark.parametrize(("argv", "words"), [
    (["gate", "f.jsonl", "--format", "jsnol"], "invalid choice: 'jsnol'"),
    (["gate", "f.jsonl", "--on", "lower-bond"], "did you mean lower-bound?"),
    (["gate"], "the following arguments are required: FILE"),
    (["plan", "a", "b"], "unexpected argument 'b'"),
    (["gate", "f.jsonl", "--k", "zero"], "'zero' is not a whole number"),
])
def test_every_usage_error_is_one_line(argv, words):
    status, _, err = passk(*argv)
    assert status == 2 and err.count("\n") == 1 and words in err and "usage:" not in err


# --- --policy names a file; the stopping rule is --stopping -----------------------------

@pytest.mark.parametrize("rule", ["curtailed", "fixed"])
def test_run_policy_with_a_stopping_rule_points_to_stopping(tmp_path, monkeypatch, rule):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    log = tmp_path / "log.jsonl"
    status, _, err = passk("run", "passk.flaky_adapter:OnCallSimulator", TASKS, "--log", log,
                           "--policy", rule, "--no-progress")
    assert status == 2 and err.count("\n") == 1
    assert f"the stopping rule is --stopping {rule}" in err and not log.exists()


def test_run_help_teaches_stopping_not_policy():
    parser = next(a for a in build_parser()._actions if a.dest == "command").choices["run"]  # type: ignore[index]
    text = parser.format_help()
    assert "--stopping {fixed,curtailed}" in text
    assert "--policy fixed" not in text and "--policy curtailed" not in text


# --- --no-policy: report and plan may set the policy aside; nothing that decides may -----

@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A repository whose policy (``passk policy init``) covers a.jsonl's tasks a, b, c;
    other/b.jsonl holds other tasks, x, y, z, one flaky."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "a.jsonl", "abc")
    _write(tmp_path / "other" / "b.jsonl", "xyz", fail_every=2)
    assert passk("policy", "init", "a.jsonl")[0] == 0
    return tmp_path


def test_report_under_the_policy_blocks_on_data_it_does_not_cover(repo):
    status, out, _ = passk("report", "other/b.jsonl")
    assert status == 0 and "BLOCKED" in out and "not in the policy's task set" in out


@pytest.mark.parametrize("form", ["text", "markdown", "json"])
def test_report_no_policy_reads_the_data_and_says_so(repo, form):
    extra = {"text": [], "markdown": ["--markdown"], "json": ["--json"]}[form]
    status, out, err = passk("report", "other/b.jsonl", "--no-policy", "--k", "2", *extra)
    assert status == 0 and "policy set aside (--no-policy)" in err
    # the reference: the same data where no policy exists at all
    (repo / "passk.toml").unlink()
    _, bare, _ = passk("report", "other/b.jsonl", "--k", "2", *extra)
    if form == "json":
        got, ref = json.loads(out)["gate"], json.loads(bare)["gate"]
        assert got["policy_line"] == POLICY_SET_ASIDE and ref["policy_line"] == NO_POLICY
        assert got["policy"] is None and got["passed"] == ref["passed"]
        assert got["reasons"] == ref["reasons"] and got["reasons"]  # z is flaky
    else:
        assert POLICY_SET_ASIDE in out and NO_POLICY not in out
        assert out.replace(POLICY_SET_ASIDE, NO_POLICY) == bare


def test_plan_no_policy_plans_the_data(repo):
    status, out, err = passk("plan", "other/b.jsonl", "--no-policy", "--k", "2")
    assert status == 0 and "policy set aside" in err
    assert {"x", "y", "z"} <= {line.split()[0] for line in out.splitlines() if line.strip()}


@pytest.mark.parametrize("argv", [
    ["gate", "other/b.jsonl", "--no-policy"],
    ["gate", "a.jsonl", "--no-policy"],
    ["gate", "other/b.jsonl", "--no-policy", "--policy", "passk.toml"],
    ["gate", "a.jsonl", "--no-policy", "--baseline", "a.jsonl"],
    ["diff", "a.jsonl", "a.jsonl", "--no-policy"],
    ["rank", "a.jsonl", "other/b.jsonl", "--no-policy"],
    ["run", "passk.flaky_adapter:OnCallSimulator", str(TASKS), "--log", "r.jsonl",
     "--no-policy", "--no-progress"],
])
def test_nothing_that_decides_sets_the_policy_aside(repo, argv):
    status, out, err = passk(*argv)
    command = argv[0]
    assert status == 2 and out == "" and err.count("\n") == 1
    assert f"passk {command}: error: --no-policy: passk {command} decides under the " \
           "repository's policy and cannot set it aside" in err
    assert not (repo / "r.jsonl").exists()


def test_a_gate_refuses_no_policy_even_without_a_policy(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "a.jsonl", "ab")
    status, _, err = passk("gate", "a.jsonl", "--no-policy")
    assert status == 2 and "cannot set it aside" in err


def test_no_policy_with_a_named_policy_contradicts(repo):
    for named in (["--policy", "passk.toml"], ["--policy-ref", "HEAD"]):
        status, _, err = passk("report", "other/b.jsonl", "--no-policy", *named)
        assert status == 2 and "contradict" in err and err.count("\n") == 1


def test_the_api_gate_stays_bound(repo):
    with pytest.raises(PolicyError, match="passk gate decides under the repository's policy"):
        api.gate("a.jsonl", asked={"no_policy": True})
    with pytest.raises(PolicyError, match="cannot set it aside"):  # whatever it is called
        api.Evaluation({"no_policy": True}, command="report").gate("a.jsonl")
    with pytest.raises(PolicyError, match="passk rank decides"):
        api.rank(["a.jsonl", "other/b.jsonl"], asked={"no_policy": True})
    fr = api.report("other/b.jsonl", asked={"no_policy": True, "k": 2})
    assert fr.gate.policy_line == POLICY_SET_ASIDE


def test_the_binding_never_sets_a_policy_read_aside(repo):
    policy = load_policy(repo / "passk.toml")
    with pytest.raises(PolicyError, match="a policy in force is never set aside"):
        bind({"no_policy": True}, policy)
    assert bind({"no_policy": True}, None).policy_line == POLICY_SET_ASIDE
    assert bind({}, None).policy_line == NO_POLICY


@pytest.mark.parametrize("command", ["gate", "diff", "rank", "run", "policy", "attribute", ""])
def test_only_exploring_commands_may_set_it_aside(repo, command):
    assert SET_ASIDE_BY == ("report", "plan")
    with pytest.raises(PolicyError, match="cannot set it aside"):
        policy_in_force(set_aside_by=command)
    assert set_aside_refusal(command) is not None
    for allowed in SET_ASIDE_BY:
        assert policy_in_force(set_aside_by=allowed) is None
        assert policy_in_force() is not None  # without asking, the policy is found


@pytest.mark.parametrize("variable", ["PASSK_NO_POLICY", "PASSK_NO-POLICY", "PASSK_POLICY"])
def test_the_action_has_no_way_to_set_the_policy_aside(repo, tmp_path, capsys, variable):
    summary = tmp_path / "summary.md"
    output = tmp_path / "out.txt"
    env = {"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output),
           "PASSK_RESULTS": "other/b.jsonl",
           variable: "" if variable == "PASSK_POLICY" else "true"}
    status = action.main(env)
    got = capsys.readouterr()
    assert status == 1  # blocked under the policy: its tasks have no runs
    assert "policy passk.toml" in got.out and "set aside" not in got.out + got.err


def test_the_pytest_plugin_has_no_way_to_set_the_policy_aside(pytester, monkeypatch):
    pytester.mkdir(".git")
    pytester.makefile(".toml", passk="[gate]\nk = 2\ncap = 0.2\n")
    pytester.makepyfile(test_agent="""
import pytest

@pytest.mark.passk(k=2, runs=2)
def test_one(passk_run):
    assert True
""")
    quiet = ("-p", "no:hypothesispytest", "-p", "no:cacheprovider", "-p", "passk")
    refused = pytester.runpytest(*quiet, "--passk-no-policy")
    assert refused.ret == 4  # pytest's usage error
    monkeypatch.setenv("PASSK_NO_POLICY", "1")
    bound = pytester.runpytest(*quiet)
    text = bound.stdout.str()
    assert "policy passk.toml" in text and "set aside" not in text



@pytest.mark.parametrize("command", ["report", "plan"])
def test_an_exploring_command_says_how_to_set_the_policy_aside(repo, command):
    status, _, err = passk(command, "other/b.jsonl")
    assert status == 0
    assert ("the policy passk.toml does not cover all of other/b.jsonl: to explore it, passk "
            f"{command} --no-policy sets the policy aside (passk gate never does)") in err
    status, _, err = passk(command, "other/b.jsonl", "--min-overall", "0.1")
    assert status == 2 and err.count("\n") == 1
    assert "would loosen the policy's bar 0.7 (passk.toml)" in err
    assert f"passk {command} --no-policy sets the policy aside" in err


def test_a_gate_is_never_told_to_set_the_policy_aside(repo):
    status, _, err = passk("gate", "other/b.jsonl")
    assert status == 1 and "--no-policy" not in err
    status, _, err = passk("gate", "other/b.jsonl", "--min-overall", "0.1")
    assert status == 2 and "--no-policy" not in err


@pytest.mark.parametrize(("argv", "option", "owners"), [
    (["report", "f.jsonl", "--baseline", "old"], "--baseline", ["gate", "plan"]),
    (["gate", "f.jsonl", "--plot", "x.png"], "--plot", ["report"]),
    (["diff", "a", "b", "--stopping", "curtailed"], "--stopping", ["run"]),
])
def test_another_commands_option_is_named_as_such(argv, option, owners):
    status, _, err = passk(*argv)
    holders = [c for c in ("report", "gate", "plan", "diff", "rank", "run", "attribute")
               if option in _options(c)]  # the reference: the parser's own tables
    assert holders == owners
    assert status == 2 and err.count("\n") == 1
    assert f"unknown option {option} ({option} is an option of passk " in err
    assert all(c in err for c in owners) and f"not of passk {argv[0]})" in err
