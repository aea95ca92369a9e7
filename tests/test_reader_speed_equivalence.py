"""Issue 41's fast paths against the code they replaced (commit 37b088b, loaded from git as
an oracle): promptfoo's rows, Harbor's one read a trial and its digest, the runner's bulk
seeds and its record's JSON. The same results, the same one-line errors (file, record,
field), on clean and on corrupted input of every kind."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import os
import shutil
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from old_code import old_module

from passk.cli.commands import main as cli_main
from passk.repeats import attempt_seed
from passk.results import ResultsError
from passk.results.evidence import content_sha256
from passk.results.formats import harbor, promptfoo
from passk.results.read import read_results
from passk.results.runlog import RunRecord

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BEFORE = "37b088b"  # main before the fast paths


def _old_module(path: str, name: str) -> ModuleType:
    """The module at ``path`` as commit :data:`BEFORE` had it, importable as ``name``."""
    return old_module(BEFORE, path, name)


@pytest.fixture(scope="module")
def old_promptfoo() -> ModuleType:
    return _old_module("passk/results/formats/promptfoo.py", "_old_promptfoo")


@pytest.fixture(scope="module")
def old_harbor() -> ModuleType:
    return _old_module("passk/results/formats/harbor.py", "_old_harbor")


def _same_results(a, b) -> None:
    assert a.task_ids == b.task_ids
    for name in ("successes", "totals", "excluded"):
        assert getattr(a, name).tolist() == getattr(b, name).tolist(), name
    for name in ("risks", "source", "notes", "incomplete", "excluded_reason", "suite",
                 "overrides", "run_ids", "unidentified"):
        assert getattr(a, name) == getattr(b, name), name


def _outcome(read, *args, **kwargs):
    """What reading gives: the results, or the error's one line."""
    try:
        return ("ok", read(*args, **kwargs))
    except ResultsError as exc:
        return ("error", str(exc))


# --------------------------------------------------------------------------
# promptfoo
# --------------------------------------------------------------------------

PROMPTFOO = HERE / "fixtures" / "promptfoo"


def _row(i: int, ok: bool = True, **extra):
    row = {"id": f"r{i}", "testIdx": i, "promptIdx": 0, "success": ok,
           "failureReason": 0 if ok else 1, "provider": {"id": "echo", "label": "e"},
           "prompt": {"raw": "hi {{q}}", "label": "hi"}, "vars": {"q": f"v{i % 3}"},
           "testCase": {"vars": {"q": f"v{i % 3}"}}}
    row.update(extra)
    return row


def _eval(rows, repeat=2):
    stats = {"successes": sum(r.get("failureReason") == 0 for r in rows if isinstance(r, dict)),
             "failures": sum(r.get("failureReason") == 1 for r in rows if isinstance(r, dict)),
             "errors": sum(r.get("failureReason") == 2 for r in rows if isinstance(r, dict))}
    return {"evalId": "eval-x", "runtimeOptions": {"repeat": repeat},
            "results": {"version": 3, "results": rows, "stats": stats}}


#: Each way a row can be wrong, several variants each: the field and a bad value (None:
#: the field removed).
BAD_ROWS = {
    "row": ["not a row", 3, None, ["list"]],
    "testIdx": [None, "1", 1.0, True, [1]],
    "promptIdx": [None, "0", 0.5, False],
    "success": [None, "true", 1, 0],
    "failureReason": [None, 3, -1, True, "0", 1.5],
    "contradiction": [(True, 1), (False, 0), (True, 2)],
    "provider": [None, "echo", {}, {"id": ""}, {"label": "x"}, {"id": None}],
}


def _corrupt(kind: str, value, at: int, n: int = 6):
    rows = [_row(i, ok=i % 2 == 0) for i in range(n)]
    if kind == "row":
        rows[at] = value
    elif kind == "contradiction":
        rows[at]["success"], rows[at]["failureReason"] = value
    elif value is None:
        del rows[at][kind]
    else:
        rows[at][kind] = value
    return rows


@pytest.mark.parametrize("kind", sorted(BAD_ROWS))
def test_promptfoo_bad_rows_refused_with_the_old_line(kind, old_promptfoo, tmp_path) -> None:
    for j, value in enumerate(BAD_ROWS[kind]):
        for at in (0, 4):
            data = _eval(_corrupt(kind, value, at))
            path = tmp_path / f"{kind}{j}-{at}.json"
            path.write_text(json.dumps(data))
            new = _outcome(promptfoo.read_promptfoo, path)
            old = _outcome(old_promptfoo.read_promptfoo, path)
            assert new[0] == old[0] == "error", (kind, value, new)
            assert new[1] == old[1]
            assert f"results.results[{at}]" in new[1] and str(path) in new[1]
            # the command says the same line, exit 2
            assert cli_main(["report", str(path)]) == 2


@pytest.mark.parametrize("variant", ["fixtures", "prompt ids", "keys reordered", "no vars",
                                     "vars only in the test case", "non-string prompt",
                                     "errors", "two set-ups", "repeated row id",
                                     "options.repeat"])
def test_promptfoo_reads_as_before(variant, old_promptfoo, tmp_path) -> None:
    paths = []
    if variant == "fixtures":
        paths = sorted(PROMPTFOO.glob("*.json"))
    else:
        rows = [_row(i, ok=i % 3 != 0) for i in range(12)]
        for i, r in enumerate(rows):
            if variant == "prompt ids":
                r["promptId"] = f"p{i % 2}"
            elif variant == "keys reordered" and i % 2:
                r["prompt"] = {"label": "hi", "raw": "hi {{q}}"}
                r["vars"] = dict(reversed(list(r["vars"].items())))
            elif variant == "no vars":
                del r["vars"]
            elif variant == "vars only in the test case":
                r.pop("vars")
                r["testCase"] = {"description": f"d{i % 3}", "vars": {"q": i % 3}}
            elif variant == "non-string prompt":
                r["prompt"] = {"raw": "hi", "label": "hi", "config": {"t": i % 2}}
            elif variant == "errors" and i % 4 == 1:
                r["success"], r["failureReason"] = False, 2
            elif variant == "two set-ups" and i == 7:
                r["provider"] = {"id": "other", "label": "e"}
            elif variant == "repeated row id" and i == 9:
                r["id"] = "r3"
            elif variant == "options.repeat":
                r["testCase"]["options"] = {"repeat": 4 if i % 3 else "x"}
        path = tmp_path / "eval.json"
        path.write_text(json.dumps(_eval(rows, repeat=4)))
        paths = [path]
    for path in paths:
        for errors in ("fail", "exclude"):
            for duplicates in ("error", "first"):
                new = _outcome(promptfoo.read_promptfoo, path, errors=errors,
                               duplicates=duplicates)
                old = _outcome(old_promptfoo.read_promptfoo, path, errors=errors,
                               duplicates=duplicates)
                assert new[0] == old[0], (path, new, old)
                if new[0] == "error":
                    assert new[1] == old[1]
                else:
                    _same_results(new[1], old[1])
                    assert promptfoo.run_ids(path) == old_promptfoo.run_ids(path)


# --------------------------------------------------------------------------
# Harbor: one open a trial, the digest of the bytes parsed
# --------------------------------------------------------------------------

HARBOR = HERE / "fixtures" / "harbor"


def _old_sha256(path) -> str:
    """content_sha256 as it was: rglob, sorted paths, each file opened again."""
    p = Path(path)
    if p.is_file():
        with open(p, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    digest = hashlib.sha256()
    for member in sorted(q for q in p.rglob("*") if q.is_file()):
        digest.update(member.relative_to(p).as_posix().encode() + b"\0")
        digest.update(_old_sha256(member).encode() + b"\n")
    return digest.hexdigest()


@pytest.mark.parametrize("job", sorted(p.name for p in HARBOR.iterdir() if p.is_dir()))
def test_harbor_reads_and_digests_as_before(job, old_harbor) -> None:
    path = HARBOR / job
    for options in ({}, {"count_errors_as_failures": True}):
        new = _outcome(harbor.read_harbor, path, **options)
        old = _outcome(old_harbor.read_harbor, path, **options)
        assert new[0] == old[0]
        if new[0] == "error":
            assert new[1] == old[1]
            continue
        _same_results(new[1], old[1])
    if new[0] == "ok":
        assert read_results(path).sources[0].sha256 == _old_sha256(path)


def _broken_job(tmp_path: Path, how: str) -> Path:
    job = tmp_path / how.replace(" ", "_")
    shutil.copytree(HARBOR / "job", job)
    trials = sorted(d for d in job.iterdir() if d.is_dir())
    result = trials[1] / "result.json"
    if how == "not json":
        result.write_text('{"task_name": ')
    elif how == "empty":
        result.write_text("  \n")
    elif how == "utf-16":
        result.write_bytes(result.read_text().encode("utf-16"))
    elif how == "zeros":
        result.write_bytes(b"\x00" * 10)
    elif how == "not a trial":
        result.write_text(json.dumps({"id": "x"}))
    elif how == "bad reward":
        data = json.loads(result.read_text())
        data["verifier_result"] = {"rewards": {"reward": "high"}}
        result.write_text(json.dumps(data))
    elif how == "a folder for a file":
        result.unlink()
        result.mkdir()
    elif how == "missing":
        result.unlink()
    elif how == "bom":
        result.write_bytes(b"\xef\xbb\xbf" + result.read_bytes())
    elif how == "crlf":
        result.write_bytes(result.read_bytes().replace(b"\n", b"\r\n").replace(b", ", b",\r\n"))
    elif how == "json lines":
        result.write_text('{"a": 1}\n{"b": 2}\n')
    elif how == "nested":
        result.write_text("[" * 100000 + "]" * 100000)
    elif how == "link":
        (trials[2] / "result.json").unlink()
        os.symlink(trials[1] / "result.json", trials[2] / "result.json")
    elif how == "extra files":
        (trials[1] / "agent").mkdir()
        (trials[1] / "agent" / "log.txt").write_text("step 1\n")
        (trials[1] / ".hidden").write_text("x")
        os.symlink(trials[0], trials[1] / "linked-folder")
    return job


@pytest.mark.parametrize("how", ["not json", "empty", "utf-16", "zeros", "not a trial",
                                 "bad reward", "a folder for a file", "missing", "bom", "crlf",
                                 "json lines", "nested", "link", "extra files"])
def test_harbor_odd_trial_files_as_before(how, old_harbor, tmp_path) -> None:
    job = _broken_job(tmp_path, how)
    new = _outcome(harbor.read_harbor, job)
    old = _outcome(old_harbor.read_harbor, job)
    assert new[0] == old[0], (new, old)
    if new[0] == "error":
        assert new[1] == old[1]
        assert str(job) in new[1]
        assert cli_main(["report", str(job)]) == 2
    else:
        _same_results(new[1], old[1])
        got = read_results(job)
        assert got.sources[0].sha256 == _old_sha256(job)
        assert harbor.identity(job, got.suite) == old_harbor.identity(job, got.suite)


def test_harbor_digest_is_of_the_bytes_counted(tmp_path) -> None:
    """The digests the reader keeps are given once, for the path read, and are those of the
    bytes it parsed; content_sha256 alone reads the files."""
    job = _broken_job(tmp_path, "extra files")
    harbor.read_harbor(job)
    kept = harbor.digests(job)
    assert kept and all(Path(f).name == "result.json" for f in kept)
    assert all(hashlib.sha256(Path(f).read_bytes()).hexdigest() == d for f, d in kept.items())
    assert harbor.digests(job) == {}  # given once
    harbor.read_harbor(job)
    assert harbor.digests(tmp_path) == {}  # not another path's
    assert content_sha256(job) == _old_sha256(job)


# --------------------------------------------------------------------------
# the runner: bulk seeds, a record's JSON
# --------------------------------------------------------------------------


def test_bulk_seeds_are_attempt_seed() -> None:
    from passk.run.runner import GateSettings, _Seeds
    from passk.run.schedule import Schedule

    rng = np.random.default_rng(41)
    for seed in (0, 5, 2**40 + 3, 2**63 - 1):
        plan = {f"task-{i}": int(rng.integers(1, 9)) for i in range(30)}
        plan["ünï ☃"] = 3
        schedule = Schedule(plan, GateSettings(1, 0.5, 0.2, "estimate", 0.95, 0))
        seeds = _Seeds(seed, schedule)
        for task, n in plan.items():
            for index in range(n + 2):  # beyond the plan too
                for attempt in (0, 1, 3):
                    assert seeds(task, index, attempt) == attempt_seed(seed, task, index,
                                                                       attempt)
        assert seeds("not planned", 0, 0) == attempt_seed(seed, "not planned", 0, 0)


def _old_to_json(record: RunRecord) -> str:
    fields = dataclasses.asdict(record)
    if fields["trajectory"] is None:
        del fields["trajectory"]
    return json.dumps(fields, separators=(",", ":"))


def test_a_records_json_is_as_before() -> None:
    records = [RunRecord("a", 0, True), RunRecord('é ☃\n"', 3, False, 2, 1.5e-07, "E: x\ty",
                                                  True, True, 2**64 - 1, "high-risk-write"),
               RunRecord("t", 1, True, seed=7, trajectory=[]),
               RunRecord("t", 1, True, seed=7, trajectory=[{"tool": "ls", "argument": "{}",
                                                            "observation": "\ud800"}]),
               RunRecord("t", 2, False, seconds=float("nan"), risk=None)]
    for record in records:
        assert record.to_json() == _old_to_json(copy.deepcopy(record))


# --------------------------------------------------------------------------
# a run log's plan checked over arrays
# --------------------------------------------------------------------------


def test_plan_gaps_in_bulk_as_task_by_task(monkeypatch) -> None:
    """plan_gaps with its bulk check and without it, on random plans met and short."""
    from passk.results import counts
    from passk.results.protocol import Protocol

    rng = np.random.default_rng(7)
    for case in range(400):
        m = int(rng.integers(1, 12))
        tasks = [f"t{i}" for i in range(m)]
        risks = [str(rng.choice(["read-only", "high-risk-write", "other"])) for _ in tasks]
        by_risk = {"read-only": int(rng.integers(1, 6)), "high-risk-write": int(rng.integers(1, 9))}
        settings = {"tasks": list(tasks), "runs_by_risk": by_risk,
                    "default_runs": int(rng.integers(1, 5)),
                    "stopping": str(rng.choice(["fixed", "curtailed", "sequential"]))}
        if case % 3 == 0:
            settings["previously_flaky_runs"] = int(rng.integers(1, 12))
        if case % 7 == 0:
            settings["tasks"] = tasks[:-1] or tasks  # a task the plan does not list
        if case % 11 == 0:
            settings["tasks"] = [*tasks, "never-ran"]
        if case % 13 == 0:
            settings["runs_by_risk"] = {**by_risk, "read-only": "5"}
        if case % 17 == 0:
            settings["stop_early"] = {"looks": 3}
        runs = rng.integers(0, 10, size=m)
        most = runs + rng.integers(0, 4, size=m)
        protocol = Protocol(settings)
        fast = counts.plan_gaps(protocol, tasks, risks, runs, most)
        with monkeypatch.context() as patch:
            patch.setattr(counts, "_fixed_plan_met", lambda *a: False)
            slow = counts.plan_gaps(protocol, tasks, risks, runs, most)
        assert fast == slow, settings
    met = Protocol({"tasks": ["a", "b"], "runs_by_risk": {"read-only": 3}, "default_runs": 2,
                    "stopping": "fixed"})
    assert counts._fixed_plan_met(met.settings, ["b", "a"], ["read-only", "x"],
                                  np.array([3, 2]), None)  # the bulk check decides this one
    assert counts.plan_gaps(met, ["b", "a"], ["read-only", "x"], np.array([3, 2])) == ()
    assert counts.plan_gaps(met, ["b", "a"], ["read-only", "x"], np.array([2, 2])) != ()
