"""The one judge: every caller's verdict is :func:`passk.gate.judge.judge`'s, and it decides
as passk decided before it (recorded in tests/fixtures/judge/golden.json by
tests/fixtures/judge/make_golden.py with the code of commit ee186e3, the last before it)."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from passk.cli.commands import main
from passk.criteria import GateCriteria
from passk.gate.judge import judge
from passk.results.counts import Run, results_from_runs
from passk.results.read import read_results

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[1]
HERE = REPO / "tests" / "fixtures" / "judge"
CASES = json.loads((HERE / "cases.json").read_text())
GOLDEN = json.loads((HERE / "golden.json").read_text())["cases"]
#: Cases whose verdict the judge changes on purpose (each tested on its own below).
CHANGED = {"baseline-dropped", "baseline-margin"}


def gate_json(*argv: str) -> tuple[int, dict | None, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["gate", *argv, "--json"])
    return code, json.loads(out.getvalue())["gate"] if code in (0, 1) else None, err.getvalue()


def same_verdict(got: dict, want: dict) -> None:
    assert got["passed"] == want["passed"]
    assert got["reasons"] == want["reasons"]
    assert got["flaky_tasks"] == want["flaky_tasks"]
    if want["overall"] is None:
        assert got["overall"] is None
    else:
        assert math.isclose(got["overall"], want["overall"], rel_tol=1e-12)


@pytest.mark.parametrize(("name", "argv"), [c for c in CASES if c[0] not in CHANGED],
                         ids=[c[0] for c in CASES if c[0] not in CHANGED])
def test_passk_gate_decides_as_before_the_judge(name, argv, monkeypatch):
    monkeypatch.chdir(REPO)
    code, gate, _ = gate_json(*argv)
    want = GOLDEN[name]
    assert code == want["exit"]
    if want["gate"] is not None:
        assert gate is not None
        same_verdict(gate, want["gate"])


def test_the_golden_cases_cover_every_kind_of_reason():
    reasons = [r for case in GOLDEN.values() if case["gate"] for r in case["gate"]["reasons"]]
    for kind in ("flakiness", "below the bar", "too few", "fewer than the minimum",
                 "stopped early", "incomplete results", "regressed against the baseline",
                 "non-inferiority", "baseline incomplete input", "lower bound is under"):
        assert any(kind in r for r in reasons), kind
    assert {c["gate"]["passed"] for c in GOLDEN.values() if c["gate"]} == {True, False}


def test_non_inferiority_not_shown_still_blocks_with_the_proved_comparison(monkeypatch):
    """The comparison is the proved one now (issue 29): its interval is wider than the one
    golden.json recorded, and the verdict and its reason are the same."""
    monkeypatch.chdir(REPO)
    code, gate, _ = gate_json(*dict(CASES)["baseline-margin"])
    want = GOLDEN["baseline-margin"]
    assert code == want["exit"] == 1 and gate is not None
    assert [r.split(": mean")[0] for r in gate["reasons"]] == [
        r.split(": mean")[0] for r in want["gate"]["reasons"]]


def test_a_baseline_task_missing_from_the_new_results_blocks(monkeypatch):
    """Issue 28, class 4: the task that regressed, dropped from the new results, no longer
    passes the gate (before the judge it did: golden.json records exit 0)."""
    monkeypatch.chdir(REPO)
    argv = dict(CASES)["baseline-dropped"]
    assert GOLDEN["baseline-dropped"]["exit"] == 0
    code, gate, _ = gate_json(*argv)
    assert code == 1 and gate is not None
    missing = ("task t1: in the baseline, but the new results have no runs of it (the "
               "comparison must cover every baseline task)")
    assert gate["reasons"] == [missing]


def test_the_judge_on_results_is_the_cli_verdict(monkeypatch):
    """The same Results, the same criteria: the judge called directly gives the CLI's."""
    monkeypatch.chdir(REPO)
    new, old = read_results(HERE / "new.jsonl"), read_results(HERE / "old.jsonl")
    v = judge(new, GateCriteria(k=2, min_overall_pass_hat_k=0.0, max_flakiness=1.0), old)
    same_verdict({"passed": v.passed, "reasons": list(v.reasons),
                  "flaky_tasks": list(v.flaky_tasks), "overall": v.overall},
                 GOLDEN["baseline-regressed"]["gate"])
    short = read_results(HERE / "short.jsonl")
    v = judge(short, GateCriteria(k=5))
    assert list(v.reasons) == GOLDEN["short-too-few"]["gate"]["reasons"]


def test_run_suite_the_cli_and_the_judge_agree_on_a_curtailed_run(tmp_path):
    """run_suite's verdict, ``passk gate`` on its log and the judge on the log's Results."""
    from passk.flaky_adapter import OnCallSimulator
    from passk.run.runner import load_tasks, results_of_replayed_log, run_suite

    log = tmp_path / "runs.jsonl"
    run = run_suite(OnCallSimulator(), load_tasks(REPO / "examples" / "oncall_tasks.jsonl"),
                    "curtailed", seed=3, log=log, progress=False, min_overall_pass_hat_k=0.5,
                    max_flakiness=0.5)
    assert run.settled_early  # curtailment stopped a task: its reasons are in the verdict
    code, gate, _ = gate_json(str(log))
    assert gate is not None and code == (0 if run.gate.passed else 1)
    mine = {"passed": run.gate.passed, "reasons": list(run.gate.reasons),
            "flaky_tasks": list(run.gate.flaky_tasks),
            "overall": None if math.isnan(run.gate.overall) else run.gate.overall}
    same_verdict(gate, mine)
    # the log's settled records are claims: the reader alone leaves the log short of its
    # plan (fail closed), and the replay through the scheduler shows the tasks settled
    criteria = GateCriteria(k=5, min_overall_pass_hat_k=0.5, max_flakiness=0.5)
    assert not judge(read_results(log), criteria).passed
    v = judge(results_of_replayed_log(log, read_results(log)), criteria)
    assert v == run.gate


def test_evaluate_suite_and_the_cli_on_its_runs_agree(tmp_path):
    from passk.flaky_adapter import OnCallSimulator, demo_tasks
    from passk.results.read import write_runs
    from passk.run.evaluate import evaluate_suite

    report = evaluate_suite(OnCallSimulator(), demo_tasks(), seed=3)
    log = tmp_path / "runs.jsonl"
    write_runs(log, report.runs, protocol=report.protocol, seed=3)
    code, gate, _ = gate_json(str(log), "--k", "5")
    assert report.gate is not None and gate is not None
    assert code == 1 and not report.gate.passed
    assert gate["reasons"] == list(report.gate.reasons)


def test_the_pytest_plugin_and_the_cli_on_its_log_agree(pytester):
    pytester.makepyfile(test_suite="""
        import random
        import pytest

        @pytest.mark.passk(runs=12)
        def test_coin(passk_seed):
            assert random.Random(passk_seed).random() < 0.5

        @pytest.mark.passk(runs=6, k=3)
        def test_stable(passk_seed):
            pass
    """)
    log, xml = pytester.path / "runs.jsonl", pytester.path / "junit.xml"
    # in a subprocess: numpy's extensions cannot load twice in one process
    pytester.runpytest_subprocess("-p", "no:hypothesispytest", "--passk-log", str(log),
                                  "--junitxml", str(xml))
    props = [(p.get("name"), p.get("value")) for p in ET.parse(xml).iter("property")]
    reasons = [v for name, v in props if name == "passk_reason"]
    verdict = dict(props)["passk_gate"]
    code, gate, _ = gate_json(str(log))
    assert gate is not None and reasons and verdict == "BLOCKED" and code == 1
    assert gate["reasons"] == reasons


def test_overrides_in_effect_are_named_on_the_verdict_line():
    import dataclasses

    r = results_from_runs([Run("a", True, t) for t in range(5)])
    plain = judge(r, GateCriteria(k=5))
    assert plain.verdict() == ("gate: PASSED  overall pass^5 = 1.000  (bar 0.700, flakiness "
                               "cap 0.200)")
    lenient = dataclasses.replace(plain, overrides=("--success-value I", "--scorer lenient"))
    assert lenient.verdict() == ("gate: PASSED (with: --success-value I, --scorer lenient)  "
                                 "overall pass^5 = 1.000  (bar 0.700, flakiness cap 0.200)")


def test_results_overrides_ride_on_the_verdict():
    """``Results.overrides`` (the reader options in effect) ride on the verdict line."""
    import dataclasses

    r = results_from_runs([Run("a", True, t) for t in range(5)])
    v = judge(dataclasses.replace(r, overrides=("--accept-incomplete",)), GateCriteria(k=5))
    assert v.overrides == ("--accept-incomplete",)
    assert "PASSED (with: --accept-incomplete)" in v.verdict()


def test_accepting_incomplete_inputs_is_said_on_the_verdict_line(monkeypatch):
    monkeypatch.chdir(REPO)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(["gate", "tests/fixtures/tau2_small.json", "--accept-incomplete", "--k", "1",
              "--min-overall", "0", "--max-flakiness", "1"])
    verdict = next(line for line in out.getvalue().splitlines() if line.startswith("gate:"))
    assert verdict.startswith("gate: BLOCKED (with: an incomplete run accepted as complete "
                              "(--accept-incomplete))  overall pass^1"), verdict


# --------------------------------------------------------------------------
# no module but the judge makes or amends a verdict
# --------------------------------------------------------------------------

PACKAGE = REPO / "passk"
#: Where GateResult(...) may be called: the judge, and the dual-gate rule it calls.
MAKERS = {"gate/judge.py", "stability.py"}


def _calls(tree: ast.AST, name: str) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and (
        getattr(n.func, "id", None) == name or getattr(n.func, "attr", None) == name)]


def _enclosing_functions(tree: ast.AST) -> dict[int, str]:
    out: dict[int, str] = {}
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for n in ast.walk(fn):
                out.setdefault(id(n), fn.name)
    return out


def test_no_module_but_the_judge_makes_or_amends_a_verdict():
    makers, gate_callers, amenders = [], [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        inside = _enclosing_functions(tree)
        for call in _calls(tree, "GateResult"):
            if where not in MAKERS or (where == "stability.py" and inside.get(id(call)) != "reliability_gate"):
                makers.append(f"{where}:{call.lineno}")
        for call in _calls(tree, "reliability_gate"):
            if where != "gate/judge.py" and not (
                    where == "stability.py" and inside.get(id(call)) == "reliability_gate"):
                gate_callers.append(f"{where}:{call.lineno}")
        for call in _calls(tree, "replace"):
            keys = {kw.arg for kw in call.keywords}
            # a Results' own overrides are set where it is read (results/), or where a
            # stopped-early log's stop is verified by replaying its records into the
            # Schedule (run/runner.py's results_of_stopped_log): not a verdict
            if keys & {"reasons", "passed", "overall", "flaky_tasks", "overrides"} and not (
                    where.startswith("results/") or (where == "run/runner.py"
                    and inside.get(id(call)) == "results_of_stopped_log")):
                amenders.append(f"{where}:{call.lineno}")
    assert makers == [], "a GateResult made outside the judge"
    assert gate_callers == [], "the dual-gate rule called outside the judge"
    assert amenders == [], "a verdict amended after it was made"


def test_the_old_decide_is_gone():
    assert not (PACKAGE / "gate" / "decide.py").exists()
    text = "\n".join(p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py"))
    assert "gate.decide" not in text
