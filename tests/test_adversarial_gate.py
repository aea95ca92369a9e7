"""The gate attacked as a user who wants a green light would attack it.

Every path into a verdict is tried with evidence that is not new evidence (a
copy under another name, a log of the same seeds, records of the same
(task, seed, attempt), the same Inspect log twice), with evidence of another
evaluation (another model, other task arguments), with a curtailed log gated
again, and with task ids that try to write output (line breaks, ESC, ``|``,
HTML, right-to-left marks). The answer must be exit 2 naming what is repeated
or what differs, or the very verdict the single source or the run itself gave.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest

from passk.cli import main as passk_main

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ROOT = Path(__file__).resolve().parents[1]
pytest_plugins = ["pytester"]


def passk(*argv: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = passk_main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def _csv(path: Path) -> Path:
    path.write_text("task_id,trial,success\na,0,1\na,1,0\nb,0,1\nb,1,1\n")
    return path


def _inspect(path: Path, **spec: object) -> Path:
    from inspect_logs import write_log

    values = {(s, e): ("C" if (s + e) % 3 else "I") for s in (1, 2, 3) for e in (1, 2)}
    return write_log(path, values, epochs=2, **spec)  # type: ignore[arg-type]


# --------------------------------------------------------------------------
# the same evidence twice
# --------------------------------------------------------------------------

SOURCES = {
    "jsonl": lambda d: shutil.copy(FIXTURES / "stable.jsonl", d / "runs.jsonl"),
    "csv": lambda d: _csv(d / "runs.csv"),
    "tau-bench": lambda d: shutil.copy(FIXTURES / "tau_bench_small.json", d / "tau.json"),
    "tau2": lambda d: shutil.copytree(FIXTURES / "tau2_dir", d / "tau2"),
    "terminal-bench": lambda d: shutil.copytree(FIXTURES / "terminal_bench" / "run", d / "tb"),
    "harbor": lambda d: shutil.copytree(FIXTURES / "harbor" / "job", d / "job"),
    "inspect .eval": lambda d: _inspect(d / "log.eval"),
    "inspect .json": lambda d: _inspect(d / "log.json"),
}


@pytest.mark.parametrize("kind", SOURCES)
def test_a_copy_under_another_name_is_not_new_runs(tmp_path, kind):
    original = Path(SOURCES[kind](tmp_path))
    copy = tmp_path / ("copy-of-" + original.name)
    if original.is_dir():
        shutil.copytree(original, copy)
    else:
        shutil.copy(original, copy)
    code, out, err = passk("gate", original, copy, "--k", "1")
    assert code == 2, (out, err)
    assert "same content as" in err and "a copy is not new runs" in err, err
    assert err.count("\n") == 1  # one line


def test_two_logs_of_the_same_seeds_count_once(tmp_path):
    tasks = ROOT / "examples" / "oncall_tasks.jsonl"
    adapter = "passk.flaky_adapter:OnCallSimulator"
    for name in ("a.jsonl", "b.jsonl"):
        code, _, _ = passk("run", adapter, tasks, "--log", tmp_path / name, "--seed", "3",
                           "--no-progress")
        assert code in (0, 1)
    alone = passk("gate", tmp_path / "a.jsonl")[0]
    # not byte-identical any more, still the same runs: refused by the run's seed
    b = tmp_path / "b.jsonl"
    b.write_text(b.read_text().replace('"success":', '"success" :', 1))
    code, _, err = passk("gate", tmp_path / "a.jsonl", b)
    assert code == 2 and "is the same run as" in err and "passk run seed 3" in err, err
    # records of the same (task, seed, attempt) under another header seed: the header's seed
    # does not derive them
    lines = b.read_text().splitlines()
    header = json.loads(lines[0])
    header["seed"] = 99
    b.write_text("\n".join([json.dumps(header)] + lines[1:]) + "\n")
    code, _, err = passk("gate", tmp_path / "a.jsonl", b)
    assert code == 2 and "b.jsonl:2: field 'seed'" in err and "header's seed 99" in err, err
    # ... and with the header's seed deleted: the same (task, seed, attempt) values
    del header["seed"]
    b.write_text("\n".join([json.dumps(header)] + lines[1:]) + "\n")
    code, _, err = passk("gate", tmp_path / "a.jsonl", b)
    assert code == 2 and "the same run counted twice" in err, err
    assert alone in (0, 1)


def test_the_same_inspect_log_under_two_names(tmp_path):
    log = _inspect(tmp_path / "one.eval")
    other = tmp_path / "two.eval"
    shutil.copy(log, other)
    with open(other, "ab") as f:
        f.write(b"\0")  # not byte-identical: the same eval_id and run_id still tell
    code, _, err = passk("gate", log, other, "--k", "1")
    assert code == 2 and ("is the same run as" in err or "same content" in err), err


# --------------------------------------------------------------------------
# different evaluations are not trials of one
# --------------------------------------------------------------------------


@pytest.mark.parametrize("differs", [{"model": "openai/gpt-5-mini"},
                                     {"task_args": {"difficulty": "hard"}}])
def test_two_evaluations_are_refused_unless_pooled_on_purpose(tmp_path, differs):
    a = _inspect(tmp_path / "a.eval")
    b = _inspect(tmp_path / "b.eval", **differs)
    code, _, err = passk("gate", a, b, "--k", "1")
    field = next(iter(differs))
    assert code == 2 and f"is an evaluation with {field}" in err, err
    assert "--pool-evaluations" in err
    code, out, _ = passk("report", a, b, "--k", "1", "--pool-evaluations")
    assert code == 0 and "evaluations pooled on purpose" in out and field in out


def test_logs_of_one_evaluation_still_combine(tmp_path):
    a, b = _inspect(tmp_path / "a.eval"), _inspect(tmp_path / "b.eval")
    code, out, err = passk("report", a, b, "--k", "1")
    assert code == 0, err
    assert "2 files read as trials of one suite" in out


# --------------------------------------------------------------------------
# a curtailed log gated again decides as the run did
# --------------------------------------------------------------------------

ALWAYS_PASSES = """
from passk.adapter import RunResult

class AlwaysPasses:
    def run(self, task, *, seed, run_index=0):
        return RunResult(task_id=task.task_id, run_index=run_index, success=True)
"""


def test_a_curtailed_passk_run_log_gated_again_exits_as_the_run(tmp_path, monkeypatch):
    (tmp_path / "always_passes.py").write_text(ALWAYS_PASSES)
    monkeypatch.syspath_prepend(str(tmp_path))
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps({"task_id": t, "risk": r, "instruction": "x"}) + "\n"
                             for t, r in [("w1", "high-risk-write"), ("w2", "high-risk-write"),
                                          ("r1", "read-only")]))
    log = tmp_path / "c.jsonl"
    run_code, ran, _ = passk("run", "always_passes:AlwaysPasses", tasks, "--k", "2",
                             "--runs-read-only", "1", "--max-flakiness", "0.5",
                             "--policy", "curtailed", "--log", log, "--no-progress")
    assert run_code == 1  # r1 can never reach k = 2 runs: settled before its first run
    settled = [json.loads(line) for line in log.read_text().splitlines() if '"settled"' in line]
    assert {r["task_id"]: r["settled"]["runs_made"] for r in settled}["r1"] == 0
    gate_code, out, _ = passk("gate", log)
    assert gate_code == run_code, out

    def reasons(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.startswith("  - ")]

    assert reasons(out) == reasons(ran)  # the same verdict, for the same reasons


def test_a_curtailed_plugin_log_gated_again_exits_as_the_session(pytester):
    pytester.makepyfile(test_suite="""
import pytest

@pytest.mark.passk(runs=1, k=2)
def test_short():
    pass

@pytest.mark.passk(runs=6, k=2)
def test_long():
    pass
""")
    log = pytester.path / "cut.jsonl"
    session = pytester.runpytest("-p", "no:hypothesispytest", "--passk-policy", "curtailed",
                                 "--passk-max-flakiness", "0.5", "--passk-log", str(log))
    gate_code = passk("gate", log)[0]
    assert (session.ret == 0) == (gate_code == 0), (session.ret, gate_code)


# --------------------------------------------------------------------------
# text in task ids never writes output
# --------------------------------------------------------------------------

EVIL = ["x\ngate: PASSED  overall pass^2 = 1.000", "esc\x1b[2Jcleared", "pipe|cell",
        "<img src=x onerror=alert(1)>", "rtl\u202edesrever", "cr\rgate: PASSED"]


@pytest.fixture
def evil_log(tmp_path):
    path = tmp_path / "evil.jsonl"
    records = [{"task_id": t, "trial": i, "success": i % 2 == 0}
               for t in EVIL for i in range(2)]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.mark.parametrize("command", ["report", "gate"])
@pytest.mark.parametrize("mode", ["plain", "--markdown"])
def test_task_ids_cannot_write_lines(evil_log, command, mode):
    code, out, _ = passk(command, evil_log, "--k", "2", *([] if mode == "plain" else [mode]))
    assert code == (0 if command == "report" else 1)
    for line in out.splitlines():
        assert not line.startswith("gate: PASSED"), line
        assert not line.lstrip("*- |").startswith("gate: PASSED"), line
    assert "\x1b" not in out and "\r" not in out and "\u202e" not in out
    verdicts = [line for line in out.splitlines() if "gate: " in line and "overall" in line
                and not line.lstrip("*- |").startswith(("task ", "x\\n"))]
    assert len(verdicts) == 1 and "BLOCKED" in verdicts[0]
    if mode == "--markdown":
        assert "<img" not in out and "pipe\\|cell" in out


def test_json_keeps_task_ids_exact(evil_log):
    code, out, _ = passk("report", evil_log, "--k", "2", "--json")
    assert code == 0
    ids = [t["task_id"] for t in json.loads(out)["tasks"]]
    assert sorted(ids) == sorted(EVIL)


def test_a_session_cut_short_names_its_bar_and_cap(pytester):
    pytester.makepyfile(test_suite="""
import pytest

@pytest.mark.passk(runs=4, k=2)
def test_fails(passk_run):
    assert False

@pytest.mark.passk(runs=4, k=2)
def test_later():
    pass
""")
    result = pytester.runpytest("-p", "no:hypothesispytest", "-x")
    text = result.stdout.str()
    verdict = next(line for line in text.splitlines() if "overall pass^" in line)
    assert "bar 0.700" in verdict and "flakiness cap 0.200" in verdict, verdict
    assert result.ret != 0
