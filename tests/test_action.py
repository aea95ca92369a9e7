"""The GitHub Action (``action.yml``) and its script, ``scripts/gate_action.py``, run here.

The script runs as the action's step does: inputs as ``PASSK_*`` environment variables,
``GITHUB_STEP_SUMMARY`` and ``GITHUB_OUTPUT`` pointed at temporary files, on the results
that ship (tau-bench's GPT-4o airline run in ``book/data/``; a ``passk run`` log of the
shipped adapter and tasks), for a gate that passes, one that blocks, and bad inputs. The
numbers it writes are checked against ``passk gate --json`` on the same files, and its
exit status against ``passk gate``'s. actionlint checks workflows, not action.yml: the
action's structure is checked here, and actionlint runs on the README's example workflow
pointed at this checkout's action (``uses: ./``), which makes it check the inputs too.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from patience import CEILING_S  # the tests' one ceiling on a wait

from passk import cli
from passk.gate.bind import CRITERIA

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "gate_action.py"
LOGIC = ROOT / "passk" / "integrations" / "action.py"   # the script is a thin call of it
TAU = "book/data/tau-bench/gpt-4o-airline-rewards.json"
STABLE = "tests/fixtures/stable.jsonl"   # two tasks, every run passed: no protocol
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
ACTIONLINT = Path(sys.executable).parent / "actionlint"


def _run_action(tmp_path: Path, cwd: Path = ROOT, **inputs: str
                ) -> tuple[int, str, str, dict[str, str]]:
    """(exit status, log, summary, outputs) of the script with these inputs."""
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    summary.write_text("", encoding="utf-8")
    output.write_text("", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PASSK_", "GITHUB_"))}
    env.update({f"PASSK_{k.upper()}": v for k, v in inputs.items()},
               GITHUB_STEP_SUMMARY=str(summary), GITHUB_OUTPUT=str(output),
               PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, str(SCRIPT)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=CEILING_S, check=False)
    outputs = dict(line.split("=", 1) for line in output.read_text("utf-8").splitlines())
    return (proc.returncode, proc.stdout + proc.stderr, summary.read_text("utf-8"), outputs)


def _passk(*argv: str) -> tuple[int, str]:
    """The checkout's ``passk`` in process, from the repository root: (status, stdout)."""
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            status = cli.main(list(argv))
    finally:
        os.chdir(cwd)
    return status, out.getvalue()


def _gate_json(*args: str) -> tuple[int, dict]:
    """``passk gate --json`` itself, the reference for the script's outputs."""
    status, out = _passk("gate", *args, "--json")
    return status, json.loads(out)


def _suite(report: dict) -> tuple[float, list[float]]:
    i = report["curve"]["k"].index(report["k"])
    return report["curve"]["pass_hat_k"][i], report["curve"]["pass_hat_k_ci"][i]


# --- the action's structure --------------------------------------------------------------

def test_the_action_is_composite_and_every_step_has_a_shell():
    runs = ACTION["runs"]
    assert runs["using"] == "composite"
    for step in runs["steps"]:
        assert "uses" in step or step.get("shell") == "bash", step


def test_every_input_reaches_the_script_and_every_output_is_written():
    steps_text = yaml.safe_dump(ACTION["runs"]["steps"])
    for name in ACTION["inputs"]:
        assert f"inputs.{name} " in steps_text.replace("}}", " }}"), f"input {name} unused"
    gate_step = next(s for s in ACTION["runs"]["steps"] if s.get("id") == "gate")
    # the criteria's variables are named once, in the binding's table, which the script reads
    script = LOGIC.read_text(encoding="utf-8") + "".join(
        f'"{c.env}"' for c in CRITERIA if c.env)
    for variable in gate_step["env"]:
        if variable.startswith("PASSK_"):
            assert f'"{variable}"' in script, f"{variable} is set but the script never reads it"
    read = set(re.findall(r'"(PASSK_[A-Z_]+)"', script))
    assert read <= set(gate_step["env"]), read - set(gate_step["env"])
    for name, output in ACTION["outputs"].items():
        assert output["value"] == f"${{{{ steps.gate.outputs.{name} }}}}"
        assert f'"{name}"' in script, f"the script never writes the output {name}"


def test_no_input_is_pasted_into_a_shell_line():
    for step in ACTION["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step["run"]


# --- the script on shipped files ---------------------------------------------------------

def test_a_gate_that_passes(tmp_path):
    status, log, summary, outputs = _run_action(tmp_path, results="tests/fixtures/stab*.jsonl",
                                                k="2", min_overall="0.6", on="lower-bound",
                                                max_flakiness="0.1", confidence="0.5")
    ref_status, report = _gate_json(STABLE, "--k", "2", "--min-overall", "0.6", "--on",
                                    "lower-bound", "--max-flakiness", "0.1",
                                    "--confidence", "0.5")
    assert status == ref_status == 0, log
    assert (report["gate"]["bar"], report["gate"]["on"]) == (0.6, "lower-bound")
    estimate, interval = _suite(report)
    assert outputs == {"verdict": "passed", "pass-hat-k": repr(estimate),
                       "interval": json.dumps(interval), "k": "2", "policy": "",
                       "policy-sha256": ""}
    assert summary.startswith("## passk gate: PASSED\n")
    assert f"<code>{STABLE}</code>" in summary
    assert "| task | risk |" in summary and "**gate: PASSED" in summary
    assert "::error" not in log


def test_a_gate_that_blocks_fails_the_step(tmp_path):
    status, log, summary, outputs = _run_action(tmp_path, results=TAU)
    ref_status, report = _gate_json(TAU)
    assert status == ref_status == 1
    estimate, interval = _suite(report)
    assert outputs == {"verdict": "blocked", "pass-hat-k": repr(estimate),
                       "interval": json.dumps(interval), "k": str(report["k"]),
                       "policy": "", "policy-sha256": ""}
    assert summary.startswith("## passk gate: BLOCKED\n") and "**gate: BLOCKED" in summary
    first = report["gate"]["reasons"][0]
    assert f"::error title=passk gate::BLOCKED: {first}" in log


@pytest.fixture(scope="module")
def run_log(tmp_path_factory):
    """A ``passk run`` log of the shipped adapter and tasks: it declares its criteria."""
    log = tmp_path_factory.mktemp("runlog") / "runs.jsonl"
    status, _ = _passk("run", "passk.flaky_adapter:OnCallSimulator",
                       "examples/oncall_tasks.jsonl", "--log", str(log), "--no-progress",
                       "--seed", "3", "--min-overall", "0.6", "--max-flakiness", "0.8")
    assert status in (0, 1)
    return log


@pytest.mark.slow
def test_criteria_declared_gates_as_the_run_declares(tmp_path, run_log):
    status, log, summary, outputs = _run_action(tmp_path, results=str(run_log),
                                                criteria="declared")
    ref_status, report = _gate_json(str(run_log))
    assert report["gate"]["declared"]["min_overall_pass_hat_k"] == 0.6
    assert report["gate"]["declared"]["max_flakiness"] == 0.8
    assert status == ref_status, log
    assert outputs["verdict"] == ("passed" if report["gate"]["passed"] else "blocked")
    assert outputs["pass-hat-k"] == repr(_suite(report)[0])
    assert "(bar 0.600, flakiness cap 0.800 as declared by the run's protocol)" in summary


@pytest.mark.parametrize(("inputs", "message"), [
    ({"results": "runs/*.jsonl"}, "results: the pattern 'runs/*.jsonl' matches no file"),
    ({"results": ""}, "results: no results file given"),
    ({"results": "examples/oncall_tasks.jsonl"}, "oncall_tasks.jsonl"),
    ({"results": "no-such-file.jsonl"}, "no-such-file.jsonl: no such file or directory"),
    ({"results": STABLE, "criteria": "declared"}, "declare no gate criteria"),
    ({"results": STABLE, "criteria": "declared", "k": "2"}, "do not also give k"),
    ({"results": STABLE, "criteria": "declard"}, "criteria: 'declard' is not a choice"),
    ({"results": STABLE, "min_overall": "1.5"}, "min-overall"),
])
def test_bad_input_fails_the_step_and_says_why(tmp_path, inputs, message):
    status, log, summary, outputs = _run_action(tmp_path, **inputs)
    assert status == 2, log
    assert outputs == {"verdict": "error", "pass-hat-k": "", "interval": "", "k": "",
                       "policy": "", "policy-sha256": ""}
    assert summary.startswith("## passk gate: error\n")
    assert message in log and "::error title=passk gate::" in log, log


def test_an_annotation_stays_on_one_line():
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import gate_action
    finally:
        sys.path.remove(str(SCRIPT.parent))
    assert gate_action.annotate("a\nb%\r::error::x") == (
        "::error title=passk gate::a%0Ab%25%0D::error::x")


# --- actionlint on the documented example (the book's "In CI" page, and the README's) ------

def _documented_workflows() -> list[str]:
    texts = [(ROOT / "book" / "using" / "ci.md").read_text(encoding="utf-8"),
             (ROOT / "README.md").read_text(encoding="utf-8")]
    found = [m.group(1) for t in texts for m in re.finditer(r"```yaml\n(.*?)```", t, re.DOTALL)]
    assert found, "neither the CI page nor the README shows a workflow"
    return found


@pytest.mark.parametrize("index", range(2))
def test_the_documented_workflow_passes_actionlint_against_this_action(tmp_path, index):
    if not ACTIONLINT.exists():
        pytest.fail(f"{ACTIONLINT} not found: pip install -e '.[lint]'", pytrace=False)
    workflows = _documented_workflows()
    if index >= len(workflows):
        pytest.fail(f"expected the CI page's and the README's workflows, found {len(workflows)}")
    workflow = workflows[index]
    uses = re.findall(r"uses: (\S+/passk@\S+)", workflow)
    assert len(uses) == 1, workflow
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "gate.yml").write_text(
        workflow.replace(uses[0], "./"), encoding="utf-8")
    shutil.copy2(ROOT / "action.yml", tmp_path / "action.yml")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    lint = subprocess.run([str(ACTIONLINT)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=CEILING_S, check=False)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    # and it does look at the action's inputs: a misspelt one is caught
    (tmp_path / ".github" / "workflows" / "gate.yml").write_text(
        workflow.replace(uses[0], "./").replace("results:", "result:"), encoding="utf-8")
    lint = subprocess.run([str(ACTIONLINT)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=CEILING_S, check=False)
    assert lint.returncode == 1 and 'input "result" is not defined' in lint.stdout


# --- the repository's policy, by default -------------------------------------------------

def _repository(tmp_path: Path, policy: str) -> Path:
    """A checkout holding a passk.toml and the shipped stable results."""
    repo = tmp_path / "checkout"
    (repo / ".git").mkdir(parents=True)
    (repo / "passk.toml").write_text(policy, encoding="utf-8")
    shutil.copy2(ROOT / STABLE, repo / "stable.jsonl")
    return repo


def test_the_action_gates_against_the_repositorys_policy_by_default(tmp_path):
    """Without the policy the shipped file passes at k 2; the policy's bar 0.99 on the lower
    bound blocks it, and the step says which policy it applied."""
    free = _run_action(tmp_path, results=STABLE, k="2")
    assert free[0] == 0 and free[3]["policy"] == ""
    assert "no policy: criteria from the inputs" in free[2]
    repo = _repository(tmp_path, '[gate]\nk = 2\nbar = 0.99\non = "lower-bound"\n')
    status, log, summary, outputs = _run_action(tmp_path, cwd=repo, results="stable.jsonl")
    assert status == 1 and outputs["verdict"] == "blocked", log
    assert outputs["policy"] == "passk.toml"
    digest = outputs["policy-sha256"]
    assert len(digest) == 64 and "policy <code>passk.toml</code>" in summary
    assert f"[policy passk.toml (sha256 {digest[:12]})]" in summary


def test_inputs_looser_than_the_policy_are_refused(tmp_path):
    repo = _repository(tmp_path, "[gate]\nk = 2\nbar = 0.9\n")
    status, log, summary, outputs = _run_action(tmp_path, cwd=repo, results="stable.jsonl",
                                                min_overall="0.5")
    assert status == 2 and outputs["verdict"] == "error"
    assert "input min-overall 0.5 would loosen the policy's bar 0.9 (passk.toml)" in log
    assert summary.startswith("## passk gate: error\n")


def test_results_that_declare_looser_criteria_than_the_policy_are_refused(tmp_path, run_log):
    """The shipped run log declares bar 0.6 and cap 0.8 (see ``run_log``): under a policy
    with the chapter's 0.7 and 0.2 it is refused, naming both."""
    repo = _repository(tmp_path, "[gate]\nbar = 0.7\ncap = 0.2\n")
    status, log, _, outputs = _run_action(tmp_path, cwd=repo, results=str(run_log))
    assert status == 2 and outputs["verdict"] == "error", log
    assert "its protocol declares bar 0.6, looser than the policy's bar 0.7" in log


def test_the_action_names_an_explicit_policy_input(tmp_path):
    repo = _repository(tmp_path, "[gate]\nk = 2\n")
    (repo / "strict.toml").write_text('[gate]\nk = 2\nbar = 0.99\non = "lower-bound"\n',
                                     encoding="utf-8")
    status, _, _, outputs = _run_action(tmp_path, cwd=repo, results="stable.jsonl",
                                        policy="strict.toml")
    assert status == 1 and outputs["policy"] == "strict.toml"
    status, log, _, _ = _run_action(tmp_path, cwd=repo, results="stable.jsonl",
                                    policy="missing.toml")
    assert status == 2 and "missing.toml: no such policy file" in log


# --- the report page: written by the step, uploaded as an artifact, linked ---------------

def _step(name: str) -> dict:
    return next(s for s in ACTION["runs"]["steps"] if s.get("name") == name)


def test_the_page_is_uploaded_as_an_artifact_and_linked_from_the_summary(tmp_path):
    gate = next(s for s in ACTION["runs"]["steps"] if s.get("id") == "gate")
    upload, link = _step("Upload the report page"), _step("Link the report page from the job summary")
    assert upload["uses"].startswith("actions/upload-artifact@")
    assert upload["with"]["path"] == gate["env"]["PASSK_HTML"]
    assert upload["with"]["name"] == "${{ inputs.report-artifact }}"
    assert upload["with"]["if-no-files-found"] == "ignore"   # bad input: no page
    # a blocked gate fails its step: the page is uploaded and linked all the same
    assert "!cancelled()" in upload["if"] and "!cancelled()" in link["if"]
    assert f"steps.{upload['id']}.outputs.artifact-url" in link["if"]
    assert link["env"]["ARTIFACT_URL"] == f"${{{{ steps.{upload['id']}.outputs.artifact-url }}}}"
    # the link step's own shell line, run here: a Markdown link appended to the summary
    summary = tmp_path / "summary.md"
    summary.write_text("## passk gate: BLOCKED\n", encoding="utf-8")
    env = {"PATH": os.environ["PATH"], "GITHUB_STEP_SUMMARY": str(summary),
           "ARTIFACT_URL": "https://github.com/o/r/actions/runs/1/artifacts/2",
           "ARTIFACT_NAME": "passk-report"}
    subprocess.run(["bash", "-e", "-c", link["run"]], env=env, check=True, timeout=CEILING_S)
    assert summary.read_text(encoding="utf-8").endswith(
        "\n**[The report page](https://github.com/o/r/actions/runs/1/artifacts/2)** (artifact "
        "`passk-report`): download it and open passk-report.html, offline: the curve, the "
        "sortable task table, every reason.\n")


def test_the_step_writes_the_page_of_its_own_verdict(tmp_path):
    page = tmp_path / "report" / "passk-report.html"
    status, log, _, _ = _run_action(tmp_path, results=TAU, html=str(page))
    _, report = _gate_json(TAU)
    assert status == 1 and page.exists(), log
    text = page.read_text(encoding="utf-8")
    assert "gate: BLOCKED" in text and '<svg xmlns="http://www.w3.org/2000/svg"' in text
    assert text.count('<td class="id">') >= len(report["tasks"])
    first = report["gate"]["reasons"][0]
    assert f"<li>{first}</li>" in text
    # bad input: no page, and the earlier one is gone (it is never uploaded as this one's)
    status, _, _, _ = _run_action(tmp_path, results="no-such-file.jsonl", html=str(page))
    assert status == 2 and not page.exists()
