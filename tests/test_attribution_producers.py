"""The first divergence on runs made by the producers' own code, and the side-by-side HTML view
(issue 39).

- tau2: ``tests/fixtures/tau2_attribution.json`` was written by tau2-bench's own batch runner
  (``tau2.runner.run_tasks``, its orchestrator, evaluator and ``Results`` serialiser) on its
  ``mock`` domain with a scripted, seeded agent and user (``tau2_attribution_make.py``).
- Harbor (terminal-bench 2): ``tests/fixtures/harbor_attribution/`` was written with Harbor's own
  models (``TrialResult``, ``JobResult``; ATIF ``Trajectory`` in each trial's
  ``agent/trajectory.json``, as Terminus 2 writes it; ``harbor_attribution_make.py``).

The references are the files themselves, read here without passk's readers (tau2's rewards
and tool-call arguments; the ATIF files' tool calls), and the producers' counts as
``read_results`` reads them. Every front end: the Python API, ``passk attribute`` in text,
--json, --markdown and --html.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pytest

from passk.analysis.divergence import read_divergences
from passk.cli.commands import main
from passk.flaky_adapter import OnCallSimulator, demo_tasks
from passk.render.attribution import attribution_page, divergence_page
from passk.results.atif import atif_steps, read_harbor_trajectories
from passk.results.counts import ResultsError
from passk.results.read import read_results
from passk.results.transcripts import read_trajectories
from passk.run.attribute import attribute_variants

FIXTURES = Path(__file__).parent / "fixtures"
TAU2 = FIXTURES / "tau2_attribution.json"
HARBOR = FIXTURES / "harbor_attribution"


def _cli(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------
# tau2: a run made by tau2's own runner
# --------------------------------------------------------------------------


def _tau2_simulations():
    return json.loads(TAU2.read_text())["simulations"]


def _tau2_reference():
    """Per task: tau2's own rewards, and each simulation's tool calls (name, arguments)."""
    out: dict[str, list[tuple[bool, list[tuple[str, dict]]]]] = {}
    for s in _tau2_simulations():
        calls = [(c["name"], c["arguments"]) for m in s["messages"]
                 for c in (m.get("tool_calls") or [])]
        out.setdefault(s["task_id"], []).append((s["reward_info"]["reward"] == 1.0, calls))
    return out


def test_the_tau2_file_is_tau2s_own_and_has_flaky_tasks():
    data = json.loads(TAU2.read_text())
    assert set(data) >= {"info", "tasks", "simulations"}
    assert data["info"]["num_trials"] == 8
    ref = _tau2_reference()
    flaky = {t for t, runs in ref.items() if len({ok for ok, _ in runs}) == 2}
    assert flaky == {"create_task_1", "update_task_1"}
    counts = read_results(TAU2)
    for task, runs in ref.items():
        i = counts.task_ids.index(task)
        assert (counts.successes[i], counts.totals[i]) == (sum(ok for ok, _ in runs), len(runs))


def test_tau2_each_flaky_task_parts_where_its_runs_did():
    ref = _tau2_reference()
    report = read_divergences(TAU2)
    assert report.stable == ("impossible_task_1",)
    by = {d.task_id: d for d in report.tasks}
    # create_task_1: the failing runs created the task under another title (step 2)
    d = by["create_task_1"]
    fails = [calls for ok, calls in ref["create_task_1"] if not ok]
    titles = {calls[1][1]["title"] for calls in fails}
    assert (d.status, d.step, d.kind) == ("found", 2, "arguments")
    assert d.failures == len(fails) and d.passes == len(ref["create_task_1"]) - len(fails)
    assert d.groups[0].failures == len(fails) and d.groups[0].passes == 0
    assert len(titles) == 1 and json.dumps(titles.pop()) in d.groups[0].step.args
    # update_task_1: the failing runs ended after looking up the users (step 2: no call)
    d = by["update_task_1"]
    fails = [calls for ok, calls in ref["update_task_1"] if not ok]
    assert all(len(c) == 1 for c in fails)
    assert (d.status, d.step, d.kind) == ("found", 2, "ended")
    assert f"in {len(fails)} of {len(fails)} failures the run had ended" in d.why


def test_tau2_steps_are_the_simulations_tool_calls():
    ref = _tau2_reference()
    runs = read_trajectories(TAU2)
    assert len(runs) == sum(len(v) for v in ref.values())
    seen: dict[str, int] = {}
    for r in runs:
        i = seen.get(r.task_id, 0)
        seen[r.task_id] = i + 1
        ok, calls = ref[r.task_id][i]
        assert r.success == ok
        assert [s.name for s in r.steps] == [name for name, _ in calls]


@pytest.mark.parametrize("flag", [[], ["--json"], ["--markdown"]])
def test_passk_attribute_on_the_tau2_run_in_every_format(flag, capsys):
    code, out, _ = _cli(["attribute", str(TAU2), *flag], capsys)
    assert code == 0
    if flag == ["--json"]:
        got = {d["task_id"]: d for d in json.loads(out)["flaky_tasks"]}
        assert (got["create_task_1"]["step"], got["create_task_1"]["kind"]) == (2, "arguments")
        assert got["update_task_1"]["kind"] == "ended"
        assert json.loads(out)["stable_tasks"] == ["impossible_task_1"]
    else:
        assert "create_task_1: 5 passes, 3 failures; step 2 (arguments)" in out
        assert "update_task_1: 4 passes, 4 failures; step 2 (ended)" in out
        assert ("### " in out) == (flag == ["--markdown"])


# --------------------------------------------------------------------------
# Harbor: ATIF trajectories in a job written with Harbor's models
# --------------------------------------------------------------------------


def _atif_calls(trial: Path) -> list[str]:
    """The file's tool calls by name, read without passk: agent steps, copies left out."""
    names = []
    file: Path | None = trial / "agent" / "trajectory.json"
    while file is not None:
        data = json.loads(file.read_text())
        names += [c["function_name"] for s in data["steps"]
                  if s["source"] == "agent" and not s.get("is_copied_context")
                  for c in s.get("tool_calls") or []]
        ref = data.get("continued_trajectory_ref")
        file = file.parent / ref if ref else None
    return names


def _harbor_trials():
    return sorted(d for d in HARBOR.iterdir() if d.is_dir())


def test_harbor_steps_are_the_atif_tool_calls_across_continuations():
    continued = [d for d in _harbor_trials() if (d / "agent" / "trajectory.cont-1.json").exists()]
    assert len(continued) == 1
    for d in _harbor_trials():
        if (d / "agent" / "trajectory.json").exists():
            assert [s.name for s in atif_steps(d / "agent" / "trajectory.json")] \
                == _atif_calls(d)
    steps = atif_steps(continued[0] / "agent" / "trajectory.json")
    assert [s.name for s in steps] == ["bash_command"] * 3 + ["mark_task_complete"]


def test_a_batchs_shared_output_answers_its_last_command():
    trial = next(d for d in _harbor_trials() if d.name.startswith("regex-log")
                 and (d / "agent" / "trajectory.json").exists())
    steps = atif_steps(trial / "agent" / "trajectory.json")
    assert (steps[0].observation, steps[1].observation) == ("", "app.log README")


def test_harbor_outcomes_are_harbors_and_its_left_out_trial_is_left_out():
    runs = read_harbor_trajectories(HARBOR)
    counts = read_results(HARBOR)
    for i, task in enumerate(counts.task_ids):
        mine = [r for r in runs if r.task_id == task]
        assert (sum(r.success for r in mine), len(mine)) == (counts.successes[i],
                                                             counts.totals[i])
    assert sum(counts.excluded) == 1 and len(runs) == 23


def test_harbor_each_flaky_task_parts_or_says_why_not():
    report = read_divergences(HARBOR)
    assert report.stable == ("hello-world",)
    by = {d.task_id: d for d in report.tasks}
    d = by["fix-git"]
    # the reflog's two lines in the other order: the tie order, in a terminal's output
    assert (d.status, d.step, d.kind, d.failures, d.passes) == ("found", 2, "order", 2, 4)
    assert "git reflog" in d.groups[0].step.args and d.groups[0].passes == 0
    assert d.groups[0].reordered == 4
    assert d.why.endswith("the same lines in another order in 4 of 4 passes")
    d = by["regex-log"]
    assert (d.status, d.step, d.kind, d.unrecorded) == ("found", 3, "arguments", 1)
    assert (d.failures, d.passes) == (2, 3)
    d = by["build-cython-ext"]
    assert d.status == "no trajectory" and d.unrecorded == 6
    assert "no run's trajectory is recorded (6 of 6 runs without one)" in d.why


@pytest.mark.parametrize("target", ["job", "trial dir", "trial file"])
def test_a_harbor_trial_or_job_is_read_by_detection(target):
    trial = next(d for d in _harbor_trials() if d.name.startswith("fix-git"))
    path = {"job": HARBOR, "trial dir": trial, "trial file": trial / "result.json"}[target]
    runs = read_trajectories(path)
    assert runs and all(r.recorded for r in runs if r.task_id == "fix-git")
    assert len(runs) == (23 if target == "job" else 1)


@pytest.mark.parametrize("flag", [[], ["--json"], ["--markdown"]])
def test_passk_attribute_on_the_harbor_job_in_every_format(flag, capsys):
    code, out, _ = _cli(["attribute", str(HARBOR), *flag], capsys)
    assert code == 0
    if flag == ["--json"]:
        got = {d["task_id"]: d for d in json.loads(out)["flaky_tasks"]}
        assert got["build-cython-ext"]["status"] == "no trajectory"
        assert got["regex-log"]["unrecorded"] == 1
        assert got["fix-git"]["example"]["failing_all_steps"][1]["tool"] == "bash_command"
    else:
        assert "fix-git: 4 passes, 2 failures; step 2 (order)" in out
        assert "1 run without a recorded trajectory left out" in out
        assert "build-cython-ext: 2 passes, 4 failures; no trajectory" in out


def _copy_job(tmp_path):
    job = tmp_path / "job"
    shutil.copytree(HARBOR, job)
    trial = next(d for d in sorted(job.iterdir()) if d.name.startswith("fix-git")
                 and (d / "agent" / "trajectory.json").exists()
                 and not (d / "agent" / "trajectory.cont-1.json").exists())
    return job, trial / "agent" / "trajectory.json"


def _set(path, edit):
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


BAD_ATIF = [
    ("not json", lambda p: p.write_text("{oops"), "is not JSON"),
    ("no steps", lambda p: _set(p, lambda d: d.pop("steps")), "a list 'steps'"),
    ("steps not a list", lambda p: _set(p, lambda d: d.update(steps={})), "a list 'steps'"),
    ("a step not an object", lambda p: _set(p, lambda d: d["steps"].append(3)),
     "steps[4]: expected a JSON object"),
    ("tool_calls not a list", lambda p: _set(p, lambda d: d["steps"][1].update(tool_calls={})),
     "steps[1]: field 'tool_calls' must be a list"),
    ("no function_name", lambda p: _set(p, lambda d: d["steps"][1]["tool_calls"][0].pop(
        "function_name")), "tool_calls[0] must be an object with 'function_name'"),
    ("observation not an object", lambda p: _set(p, lambda d: d["steps"][1].update(
        observation=[])), "field 'observation' must be an object"),
    ("results not a list", lambda p: _set(p, lambda d: d["steps"][1]["observation"].update(
        results="x")), "'observation.results' must be a list"),
    ("a missing continuation", lambda p: _set(p, lambda d: d.update(
        continued_trajectory_ref="trajectory.cont-9.json")), "names no file beside it"),
    ("a cycle", lambda p: _set(p, lambda d: d.update(continued_trajectory_ref=p.name)),
     "form a cycle"),
]


@pytest.mark.parametrize(("case", "spoil", "said"), BAD_ATIF, ids=[c[0] for c in BAD_ATIF])
def test_a_bad_atif_file_is_one_line_naming_the_file_and_field(tmp_path, capsys, case, spoil,
                                                               said):
    job, file = _copy_job(tmp_path)
    spoil(file)
    with pytest.raises(ResultsError, match=re.escape(said)):
        read_divergences(job)
    code, out, err = _cli(["attribute", str(job)], capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert said in err and "trajectory.json" in err and file.parent.parent.name in err


@pytest.mark.parametrize(("argv", "said"), [
    (["--scorer", "x"], "scorer (--scorer): not an option for a harbor file"),
    (["--errors", "exclude"], "errors (--errors): not an option for a harbor file"),
    (["--format", "tau2"], "is a directory, not a results file"),
])
def test_options_of_another_producer_are_refused_for_harbor(argv, said, capsys):
    code, out, err = _cli(["attribute", str(HARBOR), *argv], capsys)
    assert code == 2 and out == "" and said in err


@pytest.mark.parametrize("argv", [["--eval-key", "x"], ["--score-key", "reward"],
                                  ["--success-threshold", "0.5"]])
def test_harbor_options_are_refused_for_tau2(argv, capsys):
    code, out, err = _cli(["attribute", str(TAU2), *argv], capsys)
    assert code == 2 and out == "" and "not an option for a tau2 file (its options: none)" in err


def test_a_job_of_two_evaluations_needs_eval_key(capsys):
    job = FIXTURES / "harbor" / "job_two_agents"
    code, _, err = _cli(["attribute", str(job)], capsys)
    assert code == 2 and "pass --eval-key KEY" in err
    key = re.search(r"'([^']+)' \(\d+ trials\)", err).group(1)
    code, out, _ = _cli(["attribute", str(job), "--eval-key", key, "--json"], capsys)
    assert code == 0
    got = json.loads(out)
    assert all(d["status"] == "no trajectory" for d in got["flaky_tasks"])


# --------------------------------------------------------------------------
# the HTML view: the runs side by side, the parting step highlighted, strings escaped
# --------------------------------------------------------------------------


def _rows(page: str, section: str) -> list[str]:
    """The step rows of the side-by-side table after the heading that starts ``section``."""
    start = page.index(section)
    table = page[page.index('<table class="runs">', start):]
    table = table[:table.index("</table>")]
    return re.findall(r"<tr( class=\"\w+\")?><td class=\"n\">", table)


@pytest.mark.parametrize("source", [TAU2, HARBOR])
def test_the_html_highlights_the_parting_step_of_each_found_task(source, tmp_path, capsys):
    out = tmp_path / "view.html"
    code, _, err = _cli(["attribute", str(source), "--html", str(out)], capsys)
    assert code == 0 and f"wrote {out}" in err
    page = out.read_text()
    report = read_divergences(source).to_dict()
    found = [d for d in report["flaky_tasks"] if d["status"] == "found"]
    assert page.count('<table class="runs">') == len(found)
    for d in found:
        ex = d["example"]
        rows = _rows(page, f"{html.escape(d['task_id'])}: ")
        longest = max(len(ex["failing_all_steps"]), len(ex["passing_all_steps"]), d["step"])
        assert len(rows) == longest
        assert [i + 1 for i, r in enumerate(rows) if "part" in r] == [d["step"]]
        assert all("after" in r for r in rows[d["step"]:])
        assert f"failing run {html.escape(ex['failing_run'])}" in page
    for d in report["flaky_tasks"]:
        assert html.escape(d["why"], quote=True) in page


def test_the_html_escapes_every_string_from_the_file(tmp_path, capsys):
    evil = "<script>alert(1)</script>"
    log = tmp_path / "log.jsonl"
    recs = [{"task_id": evil, "trial": i, "success": ok, "trajectory": [
        {"tool": f"<b>{evil}</b>", "argument": evil, "observation": json.dumps([evil, "x"])
         if ok else json.dumps(["x", evil])}]} for i, ok in enumerate([True, False, True])]
    log.write_text("".join(json.dumps(r) + "\n" for r in recs))
    out = tmp_path / "view.html"
    assert _cli(["attribute", str(log), "--html", str(out)], capsys)[0] == 0
    page = out.read_text()
    assert "<script>" not in page and "<b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert len(_rows(page, "&lt;script&gt;")) == 1


def test_the_html_says_why_not_where_nothing_parts(tmp_path, capsys):
    log = tmp_path / "old.jsonl"
    log.write_text("".join(json.dumps({"task_id": "t", "trial": i, "success": ok}) + "\n"
                           for i, ok in enumerate([True, False])))
    out = tmp_path / "view.html"
    assert _cli(["attribute", str(log), "--html", str(out)], capsys)[0] == 0
    page = out.read_text()
    assert '<table class="runs">' not in page and "cannot compare" in page


@pytest.mark.parametrize("where", ["no such folder", "a folder"])
def test_an_html_path_that_cannot_be_written_is_bad_input(tmp_path, capsys, where):
    out = tmp_path / "missing" / "view.html" if where == "no such folder" else tmp_path
    code, stdout, err = _cli(["attribute", str(TAU2), "--html", str(out)], capsys)
    assert code == 2 and stdout == ""
    assert f"--html {out}: cannot write it" in err and len(err.strip().splitlines()) == 1


def test_the_controlled_comparisons_html_shows_verdicts_and_the_runs(tmp_path):
    found = attribute_variants(OnCallSimulator(), demo_tasks()[:1],
                               [("deterministic_sort", True), ("temperature", 0.0)], runs=16,
                               seed=3)
    payload = found.to_dict()
    page = attribution_page(payload)
    task = payload["tasks"][0]
    d = task["first_divergence"]
    assert d["status"] == "found" and d["why"] == task["divergence"]
    assert page.count("<table") == 2 and page.count('class="part"') == 1
    assert html.escape(task["finding"]) in page
    for v in payload["tasks"][0]["variants"]:
        assert f"<td>{html.escape(v['variable'])}</td>" in page
    assert "search_runbook" in page


def test_the_pages_own_examples_hold():
    empty = {"source": "s", "stable_tasks": [], "ignored": ["x"], "flaky_tasks": []}
    assert "nothing to part" in divergence_page(empty)


# --------------------------------------------------------------------------
# a text answer's lines in another order: named as order, whatever the producer
# --------------------------------------------------------------------------


def _text_runs(passing: list[str], failing: list[str]):
    from passk.results.trajectory import Step, Trajectory

    runs = [Trajectory("t", f"p{i}", True, (Step.of("sh", "ls", out),))
            for i, out in enumerate(passing)]
    return runs + [Trajectory("t", f"f{i}", False, (Step.of("sh", "ls", out),))
                   for i, out in enumerate(failing)]


@pytest.mark.parametrize(("passing", "failing", "kind", "reordered"), [
    (["a\nb\nc"], ["c\na\nb"], "order", 1),
    (["a\nb", "b\na"], ["b\na\n"], None, 0),            # the same text as a pass: none
    (["a\n  b  \n"], ["b\na"], "order", 1),              # white space within lines ignored
    (["a\nb"], ["a\nc"], "observation", 0),               # other lines
    (["a\nb"], ["a\nb\nb"], "observation", 0),           # a line repeated is not the same
    (["one line"], ["other line"], "observation", 0),
    (['["a", "b"]'], ["b\na"], "observation", 0),          # a list and a text: not alike
])
def test_a_texts_lines_in_another_order_are_order(passing, failing, kind, reordered):
    from passk.analysis.divergence import first_divergence

    d = first_divergence(_text_runs(passing, failing))
    if kind is None:
        assert d.status == "identical"
        return
    assert (d.status, d.step, d.kind, d.groups[0].reordered) == ("found", 1, kind, reordered)
    assert ("the same lines in another order" in d.why) == bool(reordered)


def test_lines_do_not_change_what_is_equal():
    from passk.results.trajectory import Step

    assert Step.of("sh", "ls", "a\nb") == Step.of("sh", "ls", "a b")   # the answer is compared
    assert Step.of("sh", "ls", "a\nb").lines == ("a", "b")
    assert Step.of("sh", "ls", "a b").lines is None
    assert "lines" not in repr(Step.of("sh", "ls", "a\nb"))


# --------------------------------------------------------------------------
# terminal-bench 1: no trajectory passk can compare, said for every flaky task
# --------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["run", "run/results.json", "submission"])
def test_a_terminal_bench_1_run_says_no_trajectory_for_each_flaky_task(target, capsys):
    path = FIXTURES / "terminal_bench" / target
    counts = read_results(path)
    report = read_divergences(path)
    flaky = [t for t, s, n in zip(counts.task_ids, counts.successes, counts.totals)
             if 0 < s < n]
    assert [d.task_id for d in report.tasks] == flaky and flaky
    for d in report.tasks:
        i = counts.task_ids.index(d.task_id)
        assert (d.status, d.passes, d.failures) == (
            "no trajectory", counts.successes[i], counts.totals[i] - counts.successes[i])
        assert d.unrecorded == counts.totals[i]
    code, out, _ = _cli(["attribute", str(path), "--json"], capsys)
    assert code == 0
    assert {d["status"] for d in json.loads(out)["flaky_tasks"]} == {"no trajectory"}


def test_the_html_shows_a_texts_lines_one_a_line_each_escaped(tmp_path, capsys):
    log = tmp_path / "log.jsonl"
    outs = ["<i>a</i>\nb", "b\n<i>a</i>", "<i>a</i>\nb"]
    recs = [{"task_id": "t", "trial": i, "success": i != 1, "trajectory": [
        {"tool": "sh", "argument": "ls", "observation": o}]} for i, o in enumerate(outs)]
    log.write_text("".join(json.dumps(r) + "\n" for r in recs))
    out = tmp_path / "view.html"
    assert _cli(["attribute", str(log), "--html", str(out)], capsys)[0] == 0
    page = out.read_text()
    assert "<i>" not in page and "\\n" not in page
    assert "b<br>&lt;i&gt;a&lt;/i&gt;" in page and "&lt;i&gt;a&lt;/i&gt;<br>b" in page
    assert "step 1 (order)" in page
