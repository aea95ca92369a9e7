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
    b.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    code, _, err = passk("gate", tmp_path / "a.jsonl", b)
    assert code == 2 and "b.jsonl:2: field 'seed'" in err and "header's seed 99" in err, err
    # ... and with the header's seed deleted: the same (task, seed, attempt) values
    del header["seed"]
    b.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
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
                             "--stopping", "curtailed", "--log", log, "--no-progress")
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


# --------------------------------------------------------------------------
# issue 28, class 1: the same runs in another form are not new runs. Every format: a copy
# re-serialized, a file given with a part of itself; and a genuine second batch adds up
# --------------------------------------------------------------------------

def _run_log(path: Path, seed: int = 3) -> Path:
    """A passk run log as write_runs writes it: the header with the suite seed, then records."""
    from passk import OnCallSimulator, demo_tasks, evaluate_suite
    from passk.results.read import write_runs

    report = evaluate_suite(OnCallSimulator(), demo_tasks(), seed=seed)
    write_runs(path, report.runs, protocol=report.protocol, seed=seed)
    return path


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.strip()]


def _jsonl_variants(original: Path, d: Path) -> dict[str, Path]:
    """A JSON Lines log re-serialized every way that keeps its runs, and its first half."""
    header, *records = _lines(original)
    has_header = "protocol" in json.loads(header)
    if not has_header:
        records = [header, *records]
    head = [header] if has_header else []
    parsed = [json.loads(r) for r in records]
    out: dict[str, list[str]] = {
        "keys sorted": head + [json.dumps(r, sort_keys=True) for r in parsed],
        "records reversed": head + records[::-1],
        "first half": head + records[: len(records) // 2],
        "every other record": head + records[::2],
    }
    if any("seed" in r for r in parsed):
        out["seeds as floats"] = head + [json.dumps({**r, "seed": float(r["seed"])})
                                         for r in parsed]
        out["seeds as text"] = head + [json.dumps({**r, "seed": str(r["seed"])}) for r in parsed]
        out["attempt fields dropped"] = head + [json.dumps({k: v for k, v in r.items()
                                                            if k != "attempt"}) for r in parsed
                                                if r.get("attempt", 0) == 0]
    paths = {}
    for name, lines in out.items():
        p = d / (name.replace(" ", "-") + ".jsonl")
        p.write_text("\n".join(lines) + "\n")
        paths[name] = p
    crlf = d / "crlf.jsonl"
    crlf.write_bytes(original.read_bytes().replace(b"\n", b"\r\n") + b"\r\n")  # + a blank line
    paths["CRLF and a trailing blank line"] = crlf
    return paths


def _csv_variants(original: Path, d: Path) -> dict[str, Path]:
    import csv

    rows = list(csv.DictReader(original.open()))
    paths = {}
    for name, fields, rows_, flag in (
            ("columns reordered", ["success", "trial", "task_id"], rows, None),
            ("TRUE for 1", ["task_id", "trial", "success"], rows, {"1": "TRUE", "0": "FALSE"}),
            ("every other row", ["task_id", "trial", "success"], rows[::2], None)):
        p = d / (name.replace(" ", "-") + ".csv")
        with p.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields, lineterminator="\r\n")
            w.writeheader()
            for r in rows_:
                w.writerow({**r, "success": flag[r["success"]] if flag else r["success"]})
        paths[name] = p
    return paths


def _json_array_variants(original: Path, d: Path, key: str | None = None) -> dict[str, Path]:
    """A JSON file whose runs are an array (tau-bench; tau2's or terminal-bench's ``key``)."""
    data = json.loads(original.read_text())
    runs = data if key is None else data[key]

    def put(value: list) -> object:
        return value if key is None else {**data, key: value}

    out = {"keys sorted": json.dumps(put(runs), sort_keys=True, indent=2),
           "records reversed": json.dumps(put(runs[::-1])),
           "first half": json.dumps(put(runs[: len(runs) // 2])),
           "every other record": json.dumps(put(runs[::2]))}
    paths = {}
    for name, text in out.items():
        sub = d / name.replace(" ", "-")
        sub.mkdir()
        p = sub / original.name
        p.write_text(text + "\n\n")
        for sibling in original.parent.glob("run_metadata.json"):
            shutil.copy(sibling, sub / sibling.name)
        paths[name] = p
    return paths


def _harbor_variants(job: Path, d: Path) -> dict[str, Path]:
    renamed = d / "job-renamed"
    shutil.copytree(job, renamed)
    result = json.loads((renamed / "result.json").read_text())
    result["id"] = "11111111-2222-3333-4444-555555555555"  # a new job id, the same trials
    (renamed / "result.json").write_text(json.dumps(result, sort_keys=True))
    half = d / "job-half"
    shutil.copytree(job, half)
    trials = sorted(p for p in half.iterdir() if p.is_dir())
    for p in trials[::2]:
        shutil.rmtree(p)
    result = json.loads((half / "result.json").read_text())  # its own figures made to agree
    result["stats"] = {**result["stats"], "evals": {}}
    result["n_total_trials"] = len(trials) - len(trials[::2])
    (half / "result.json").write_text(json.dumps(result))
    return {"the same trials under a new job id": renamed, "every other trial": half}


def _inspect_variants(log: Path, d: Path) -> dict[str, Path]:
    from inspect_ai.log import read_eval_log, write_eval_log

    full = read_eval_log(str(log))
    other_format = d / ("as-json.json" if log.suffix == ".eval" else "as-eval.eval")
    write_eval_log(full, str(other_format))
    half = d / f"half{log.suffix}"
    full.samples = (full.samples or [])[: len(full.samples or []) // 2]
    write_eval_log(full, str(half))
    payload = json.loads(other_format.read_text()) if other_format.suffix == ".json" else None
    paths = {"rewritten in the other log format": other_format, "first half": half}
    if payload is not None:
        resorted = d / "keys-sorted.json"
        resorted.write_text(json.dumps(payload, sort_keys=True))
        paths["keys sorted"] = resorted
    return paths


def _attack(kind: str, d: Path) -> tuple[Path, dict[str, Path]]:
    d.mkdir(exist_ok=True)
    if kind == "passk run log":
        original = _run_log(d / "run.jsonl")
        return original, _jsonl_variants(original, d)
    if kind == "jsonl":
        original = Path(shutil.copy(FIXTURES / "stable.jsonl", d / "runs.jsonl"))
        return original, _jsonl_variants(original, d)
    if kind == "csv":
        original = _csv(d / "runs.csv")
        return original, _csv_variants(original, d)
    if kind == "tau-bench":
        original = Path(shutil.copy(FIXTURES / "tau_bench_small.json", d / "tau.json"))
        return original, _json_array_variants(original, d)
    if kind == "tau2":
        original = Path(shutil.copy(FIXTURES / "tau2_small.json", d / "tau2.json"))
        variants = _json_array_variants(original, d, "simulations")
        run_dir = Path(shutil.copytree(FIXTURES / "tau2_dir", d / "tau2_dir"))
        return original, {**variants, "__dir": run_dir}
    if kind == "terminal-bench":
        run = Path(shutil.copytree(FIXTURES / "terminal_bench" / "run", d / "tb"))
        return run, _json_array_variants(run / "results.json", d, "results")
    if kind == "harbor":
        job = Path(shutil.copytree(FIXTURES / "harbor" / "job", d / "job"))
        return job, _harbor_variants(job, d)
    log = _inspect(d / ("log.eval" if kind == "inspect .eval" else "log.json"))
    return log, _inspect_variants(log, d)


FORMATS_READ = ["jsonl", "passk run log", "csv", "tau-bench", "tau2", "terminal-bench", "harbor",
                "inspect .eval", "inspect .json"]
UNIDENTIFIED = {"jsonl", "csv", "tau-bench"}


@pytest.mark.parametrize("kind", FORMATS_READ)
def test_the_same_runs_in_another_form_are_refused(tmp_path, kind):
    original, variants = _attack(kind, tmp_path / "a")
    assert variants
    for name, variant in variants.items():
        if name == "__dir":
            continue
        code, out, err = passk("gate", original, variant, "--k", "1")
        assert code == 2, (kind, name, out, err)
        assert err.count("\n") == 1, err  # one line
        if "lacks" in err and "of one suite must hold the same tasks" in err:
            continue  # a part without some task: refused for that first
        if name == "seeds as floats":  # 64-bit seeds do not survive a float: another seed
            assert "field 'seed' is written as a float" in err and f"{variant}:2" in err, err
            continue
        assert str(variant) in err and str(original) in err, (name, err)
        if kind in UNIDENTIFIED:
            assert "records no run ids" in err and "--pool-unverified-runs" in err, (name, err)
        else:
            assert ("the same run counted twice" in err or "is the same run as" in err), \
                (name, err)


def test_a_tau2_run_directory_with_its_own_results_json(tmp_path):
    run = Path(shutil.copytree(FIXTURES / "tau2_dir", tmp_path / "tau2"))
    code, _, err = passk("gate", run, run / "results.json", "--k", "1")
    assert code == 2 and "tau2 simulation (id, trial) '0b7c1d2e-0000-4000-8000-000000000001'" \
        in err and "the same run counted twice" in err, err


def _new_ids(kind: str, original: Path, d: Path) -> Path:
    """A genuine second batch: the same evaluation run again, with new run ids."""
    if kind == "passk run log":
        return _run_log(d / "second.jsonl", seed=4)
    if kind == "tau2":
        data = json.loads(original.read_text())
        for s in data["simulations"]:
            s["id"] = "second-" + s["id"]
        (d / "second.json").write_text(json.dumps(data))
        return d / "second.json"
    if kind == "terminal-bench":
        second = Path(shutil.copytree(original, d / "tb-second"))
        data = json.loads((second / "results.json").read_text())
        data["id"] = "second-run"
        for r in data["results"]:
            r["id"] = "second-" + r["id"]
        (second / "results.json").write_text(json.dumps(data))
        return second
    if kind == "harbor":
        second = Path(shutil.copytree(original, d / "job-second"))
        for f in second.rglob("result.json"):
            data = json.loads(f.read_text())
            data["id"] = "second-" + str(data.get("id"))
            f.write_text(json.dumps(data))
        return second
    return _inspect(d / ("second" + original.suffix))  # a new eval_id


@pytest.mark.parametrize("kind", ["passk run log", "tau2", "terminal-bench", "harbor",
                                  "inspect .eval", "inspect .json"])
def test_a_genuine_second_batch_still_adds_up(tmp_path, kind):
    from passk.results.read import read_results

    original, _ = _attack(kind, tmp_path / "a")
    second = _new_ids(kind, original, tmp_path / "a")
    one, two = read_results(original), read_results(second)
    both = read_results([original, second])
    assert both.totals.tolist() == (one.totals + two.totals).tolist()
    assert both.successes.tolist() == (one.successes + two.successes).tolist()
    assert both.overrides == ()  # nothing pooled on purpose: verified distinct
    k = () if kind == "passk run log" else ("--k", "1")  # a log's protocol declares its k
    code, _, err = passk("report", original, second, *k)
    assert code == 0, err


@pytest.mark.parametrize("kind", sorted(UNIDENTIFIED))
def test_unverified_runs_pool_only_on_purpose_and_say_so(tmp_path, kind):
    from passk.results.counts import POOLED_UNVERIFIED
    from passk.results.read import read_results

    original, variants = _attack(kind, tmp_path / "a")
    other = next(iter(variants.values()))
    with pytest.raises(Exception, match="records no run ids"):
        read_results([original, other])
    pooled = read_results([original, other], pool_unverified_runs=True)
    assert pooled.totals.sum() == read_results(original).totals.sum() + \
        read_results(other).totals.sum()
    assert POOLED_UNVERIFIED in pooled.overrides
    code, _, err = passk("report", original, other, "--k", "1", "--pool-unverified-runs")
    assert code == 0, err


# --------------------------------------------------------------------------
# issue 28, class 2: a narrower evaluation does not pass as the whole one. The run log's
# header edited, unfingerprinted or deleted; a subset run in every format with a plan
# --------------------------------------------------------------------------

def _header_edit(log: Path, edit, *, refingerprint: bool = True, drop=None) -> Path:
    """The log with its header's settings edited (the fingerprint recomputed, as anyone can)
    and the records ``drop`` names removed."""
    from passk.results.protocol import Protocol

    header, *records = _lines(log)
    h = json.loads(header)
    settings = h["protocol"]["settings"]
    edit(h, settings)
    if refingerprint:
        h["protocol"]["fingerprint"] = Protocol(settings).fingerprint
    kept = [r for r in records if not (drop and drop(json.loads(r)))]
    out = log.with_name("edited.jsonl")
    out.write_text("\n".join([json.dumps(h), *kept]) + "\n")
    return out


def _set(key, value):
    def edit(h, settings):
        if value is None:
            settings.pop(key, None)
        else:
            settings[key] = value
    return edit


HEADER_ATTACKS = {
    # what was done to the header -> (edit, refingerprint, records dropped, what the error says)
    "fingerprint key deleted": (lambda h, s: h["protocol"].pop("fingerprint"), False, None,
                                ":1: field 'protocol.fingerprint' is missing"),
    "k edited, fingerprint kept": (_set("k", 1), False, None, "does not match its settings"),
    "runs per tier cut, later trials kept": (
        lambda h, s: (s["runs_by_risk"].update({"read-only": 3}),
                      s.update(previously_flaky_runs=3)), True, None,
        "is beyond the 3 runs the header plans"),
    "a task taken out of the header": (
        lambda h, s: s["tasks"].remove("read-last-deploy"), True, None,
        "task 'read-last-deploy' is not in the header's task list"),
    "the suite seed edited": (lambda h, s: h.update(seed=4), True, None,
                              "is not the seed the header's seed 4 gives"),
    "retries cut below the attempts": (_set("max_retries", -1), True, None,
                                       ("field 'attempt': attempt 0 is beyond the header's "
                                        "max_retries -1")),
}


@pytest.mark.parametrize("attack", HEADER_ATTACKS)
def test_a_run_log_header_tampered_with_is_refused(tmp_path, attack):
    log = _run_log(tmp_path / "run.jsonl")
    edit, refingerprint, drop, said = HEADER_ATTACKS[attack]
    edited = _header_edit(log, edit, refingerprint=refingerprint, drop=drop)
    code, out, err = passk("gate", edited)
    assert code == 2 and said in err and str(edited) in err, (out, err)
    assert err.count("\n") == 1


def test_a_run_log_with_its_header_deleted_is_refused(tmp_path):
    log = _run_log(tmp_path / "run.jsonl")
    headless = tmp_path / "headless.jsonl"
    headless.write_text("\n".join(_lines(log)[1:]) + "\n")
    code, _, err = passk("gate", headless)
    assert code == 2 and f"{headless}:1: a passk run record (it has a 'seed') but the log has " \
        "no protocol header line" in err, err
    # it does not gate on the command line's defaults instead
    code, _, err = passk("gate", headless, "--k", "1", "--min-overall", "0")
    assert code == 2, err


def test_an_honest_run_log_and_its_header_still_gate(tmp_path):
    log = _run_log(tmp_path / "run.jsonl")
    code, out, err = passk("gate", log)
    assert (code in (0, 1) and "PASSED" in out) or "BLOCKED" in out, (out, err)


def _inspect_subset(d: Path, case: str) -> Path:
    from inspect_logs import write_log

    values = {(s, 1): "C" for s in (1, 2)}
    path = write_log(d / f"{case}.json", values, sample_ids=[1, 2])
    payload = json.loads(path.read_text())
    payload["eval"]["dataset"]["samples"] = {"--limit 2 of 3": 3, "2^31 samples": 2**31}[case]
    path.write_text(json.dumps(payload))
    return path


@pytest.mark.parametrize("case", ["--limit 2 of 3", "2^31 samples"])
def test_an_inspect_selection_narrower_than_its_dataset_is_incomplete(tmp_path, case):
    from passk.results.read import read_results

    path = _inspect_subset(tmp_path, case)
    r = read_results(path)
    assert any("a narrower evaluation is not the whole one" in why for why in r.incomplete)
    code, out, err = passk("gate", path, "--k", "1")
    assert code != 0 and "PASSED" not in out, (out, err)
    assert "incomplete" in (out + err)


def _subset(kind: str, d: Path) -> Path:
    """A run of the format that holds fewer runs than its own plan says."""
    d.mkdir(exist_ok=True)
    if kind == "tau2":
        data = json.loads((FIXTURES / "tau2_small.json").read_text())
        data["simulations"] = [s for s in data["simulations"] if s["task_id"] != "cancel"
                               or s["trial"] == 0]
        (d / "tau2.json").write_text(json.dumps(data))
        return d / "tau2.json"
    if kind == "tau-bench":
        data = json.loads((FIXTURES / "tau_bench_small.json").read_text())
        (d / "tau.json").write_text(json.dumps([r for r in data if (r["task_id"], r["trial"])
                                                != (1, 2)]))
        return d / "tau.json"
    if kind == "terminal-bench":
        run = Path(shutil.copytree(FIXTURES / "terminal_bench" / "run", d / "tb"))
        data = json.loads((run / "results.json").read_text())
        data["results"] = data["results"][1:]
        (run / "results.json").write_text(json.dumps(data))
        return run
    if kind == "harbor":
        return Path(shutil.copytree(FIXTURES / "harbor" / "job_unfinished", d / "job"))
    if kind == "passk run log":
        log = _run_log(d / "run.jsonl")
        lines = _lines(log)
        (d / "short.jsonl").write_text("\n".join(lines[:-3]) + "\n")
        return d / "short.jsonl"
    return _inspect_subset(d, "--limit 2 of 3")


@pytest.mark.parametrize("kind", ["tau2", "tau-bench", "terminal-bench", "harbor",
                                  "passk run log", "inspect .json"])
def test_a_subset_run_is_incomplete_and_does_not_pass(tmp_path, kind):
    from passk.results.read import read_results

    path = _subset(kind, tmp_path / "a")
    assert read_results(path).incomplete, kind
    k = () if kind == "passk run log" else ("--k", "1")
    code, out, err = passk("gate", path, *k)
    assert code != 0 and "PASSED" not in out, (out, err)


# --------------------------------------------------------------------------
# issue 28, class 3: a failure is not redefined after the runs. A crash counts as a failure
# where the producer does not call it the infrastructure's; every lenient option is named
# --------------------------------------------------------------------------

def _crash(kind: str, d: Path) -> tuple[Path, Path | None]:
    """A run where some runs crashed, and the honest evidence (those runs failed), or None
    where the producer's own rule leaves the crash out."""
    from inspect_logs import write_log

    d.mkdir(exist_ok=True)
    if kind.startswith("inspect"):
        ext = kind.rsplit(".", maxsplit=1)[-1]
        values = {(s, e): "C" for s in (1, 2, 3) for e in (1, 2, 3)}
        crashed = [(3, 3)]  # an agent that crashes instead of answering wrong
        for key in crashed:
            values.pop(key)
        log = write_log(d / f"crash.{ext}", values, errored=crashed, epochs=3)
        honest = write_log(d / f"honest.{ext}", {**values, **dict.fromkeys(crashed, "I")},
                           epochs=3, sample_ids=[1, 2, 3])
        return log, honest
    if kind == "tau-bench":
        data = json.loads((FIXTURES / "tau_bench_small.json").read_text())
        honest = d / "honest.json"
        honest.write_text(json.dumps(data))
        data[1]["info"] = {"error": "Traceback: the agent crashed"}  # reward 0 already
        (d / "crash.json").write_text(json.dumps(data))
        return d / "crash.json", honest
    if kind == "terminal-bench":
        crash = Path(shutil.copytree(FIXTURES / "terminal_bench" / "run", d / "crash"))
        honest = Path(shutil.copytree(FIXTURES / "terminal_bench" / "run", d / "honest"))
        data = json.loads((crash / "results.json").read_text())
        first = next(i for i, r in enumerate(data["results"]) if r["is_resolved"])
        data["results"][first].update(is_resolved=None, failure_mode="agent_timeout")
        data.pop("pass_at_k"), data.pop("accuracy")
        (crash / "results.json").write_text(json.dumps(data))
        data["results"][first].update(is_resolved=False, failure_mode="unset")
        (honest / "results.json").write_text(json.dumps(data))
        return crash, honest
    if kind == "passk run log":
        log = _run_log(d / "run.jsonl")
        header, *records = _lines(log)
        parsed = [json.loads(r) for r in records]
        parsed[0].update(success=False)
        honest = d / "honest.jsonl"
        honest.write_text("\n".join([header, *map(json.dumps, parsed)]) + "\n")
        parsed[0].update(error="RuntimeError: the agent crashed")
        (d / "crash.jsonl").write_text("\n".join([header, *map(json.dumps, parsed)]) + "\n")
        return d / "crash.jsonl", honest
    if kind == "tau2":
        return Path(shutil.copy(FIXTURES / "tau2_small.json", d / "tau2.json")), None
    return Path(shutil.copytree(FIXTURES / "harbor" / "job_errors", d / "job")), None


@pytest.mark.parametrize("kind", ["inspect .eval", "inspect .json", "tau-bench",
                                  "terminal-bench", "passk run log", "tau2", "harbor"])
def test_a_crash_counts_as_a_failure_unless_the_producer_says_otherwise(tmp_path, kind):
    from passk.results.read import read_results

    crash, honest = _crash(kind, tmp_path / "a")
    r = read_results(crash)
    k = () if kind == "passk run log" else ("--k", "1")
    if honest is None:  # tau2's infrastructure errors, Harbor's error policy: left out, shown
        assert r.excluded.sum() > 0 and r.excluded_reason, r
        _, out, _ = passk("report", crash, *k)
        assert "left out" in out
        return
    h = read_results(honest)
    assert (r.successes.tolist(), r.totals.tolist(), r.excluded.tolist()) == \
        (h.successes.tolist(), h.totals.tolist(), h.excluded.tolist())
    assert r.overrides == ()
    assert passk("gate", crash, *k)[0] == passk("gate", honest, *k)[0]


def test_inspect_errors_are_left_out_only_on_purpose_and_named(tmp_path):
    from passk.results.read import read_results

    crash, _ = _crash("inspect .eval", tmp_path / "a")
    # sample 3 failed once in 3 (the crash): flaky, BLOCKED; before, it passed on 2 of 2
    assert passk("gate", crash, "--k", "1")[0] == 1
    r = read_results(crash, errors="exclude")
    assert r.totals.tolist() == [3, 3, 2] and r.excluded.tolist() == [0, 0, 1]
    assert r.overrides == (("errored sample epochs excluded, not counted as failures "
                            "(--errors exclude): 1 left out"),)
    code, out, err = passk("gate", crash, "--k", "1", "--errors", "exclude")
    assert code == 0 and "left out" in out, (out, err)  # only on purpose, and named


def _two_scorers(d: Path) -> Path:
    """An Inspect log with a strict scorer and a lenient one that passes every sample."""
    from inspect_logs import write_log

    log = write_log(d / "two.json", {(s, 1): ("C" if s != 3 else "I") for s in (1, 2, 3)})
    payload = json.loads(log.read_text())
    for s in payload["samples"]:
        s["scores"]["lenient"] = {"value": "C"}
    log.write_text(json.dumps(payload))
    return log


def _numeric(d: Path) -> Path:
    from inspect_logs import write_log

    return write_log(d / "graded.json", {(s, 1): v for s, v in ((1, 1.0), (2, 0.0), (3, 0.0))})


def _lenient(option: str, d: Path) -> tuple[list[Path], dict, tuple[str, ...], str]:
    """(files, read_results options, command-line flags, the phrase overrides must hold)."""
    from inspect_logs import write_log

    d.mkdir(exist_ok=True)
    if option == "--success-value I":
        log = _inspect(d / "log.json")
        return [log], {"success_values": ["I"]}, ("--success-value", "I"), \
            "--success-value I counted as a success"
    if option == "--success-threshold 0":
        return [_numeric(d)], {"success_threshold": 0.0}, ("--success-threshold", "0"), \
            "--success-threshold 0: a score of at least 0 counted as a success"
    if option == "--scorer (the lenient one of two)":
        return [_two_scorers(d)], {"scorer": "lenient"}, ("--scorer", "lenient"), \
            "--scorer lenient chosen of 2 scorers (match, lenient)"
    if option == "--errors exclude":
        crash, _ = _crash("inspect .json", d)
        return [crash], {"errors": "exclude"}, ("--errors", "exclude"), \
            "errored sample epochs excluded"
    if option == "--accept-incomplete":
        log = write_log(d / "short.json", {(1, 1): "C"}, sample_ids=[1, 2, 3])
        return [log], {"accept_incomplete": True}, ("--accept-incomplete",), \
            "an incomplete run accepted as complete (--accept-incomplete)"
    if option == "--duplicates first":
        p = d / "dup.jsonl"
        p.write_text('{"task_id": "a", "trial": 0, "success": true}\n'
                     '{"task_id": "a", "trial": 0, "success": false}\n')
        return [p], {"duplicates": "first"}, ("--duplicates", "first"), \
            "duplicate records dropped, keeping the first of each (--duplicates first)"
    if option == "Harbor --success-threshold 0":
        job = Path(shutil.copytree(FIXTURES / "harbor" / "job_partial", d / "job"))
        return [job], {"success_threshold": 0.0}, ("--success-threshold", "0"), \
            "--success-threshold 0: a reward of at least 0 counted as a success"
    if option == "Harbor --count-errors-as-failures":
        job = Path(shutil.copytree(FIXTURES / "harbor" / "job_errors", d / "job"))
        return [job], {"count_errors_as_failures": True}, ("--count-errors-as-failures",), \
            "(--count-errors-as-failures)"
    if option == "--pool-evaluations":
        a, b = _inspect(d / "a.eval"), _inspect(d / "b.eval", model="openai/gpt-5-mini")
        return [a, b], {"pool_evaluations": True}, ("--pool-evaluations",), \
            "evaluations pooled (--pool-evaluations)"
    a = _csv(d / "a.csv")
    b = d / "b.csv"
    b.write_text(a.read_text().replace("\n", "\r\n"))
    return [a, b], {"pool_unverified_runs": True}, ("--pool-unverified-runs",), \
        "not verified distinct (--pool-unverified-runs)"


LENIENT = ["--success-value I", "--success-threshold 0", "--scorer (the lenient one of two)",
           "--errors exclude", "--accept-incomplete", "--duplicates first",
           "Harbor --success-threshold 0", "Harbor --count-errors-as-failures",
           "--pool-evaluations", "--pool-unverified-runs"]


@pytest.mark.parametrize("option", LENIENT)
def test_every_lenient_reader_option_is_named_in_the_results(tmp_path, option):
    from passk.results.read import read_results

    files, options, flags, phrase = _lenient(option, tmp_path / "a")
    r = read_results(files[0] if len(files) == 1 else files, **options)
    assert any(phrase in o for o in r.overrides), r.overrides
    code, _, err = passk("report", *files, "--k", "1", *flags)
    assert code in (0, 1), err


def test_a_seeded_record_without_its_trial_is_refused(tmp_path):
    log = _run_log(tmp_path / "run.jsonl")
    header, first, *rest = _lines(log)
    record = json.loads(first)
    del record["trial"]  # its seed could then not be checked against the header's
    edited = tmp_path / "edited.jsonl"
    edited.write_text("\n".join([header, json.dumps(record), *rest]) + "\n")
    code, _, err = passk("gate", edited)
    assert code == 2 and f"{edited}:2: field 'trial' is missing" in err, err
