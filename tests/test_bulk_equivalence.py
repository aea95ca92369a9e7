"""The bulk paths of issue 41 give what the one-at-a-time paths give, by class.

- seeds: :func:`passk.repeats.run_seeds` against :func:`passk.repeats.run_seed` (numpy's own
  ``SeedSequence``, the outside reference) on random pairs of every kind;
- the header's checks: :class:`passk.results.runlog.RecordChecker` in bulk against its own
  record-by-record check (the code before issue 41), on random chunks, clean and corrupted in
  each way a record can contradict its header; and a corrupted seed through ``read_results``
  and ``passk report`` / ``passk gate`` in text, ``--json`` and ``--markdown``;
- the run log streamed (:func:`passk.results.runlog.iter_run_log`) against
  :func:`passk.results.runlog.read_run_log`: records, errors and the repair;
- resume replays the log without :func:`read_run_log` (no list of every record);
- ``read_results`` pauses the cycle collector and restores it, on success and on error;
- promptfoo and Harbor read each file once, and the identity kept from that read equals the
  one read afresh.
"""

from __future__ import annotations

import gc
import json
import random
import zlib
from pathlib import Path

import numpy as np
import pytest

from passk.cli.commands import main
from passk.repeats import attempt_seed, run_seed, run_seeds
from passk.results.counts import ResultsError
from passk.results.protocol import Protocol
from passk.results.read import read_results
from passk.results.runlog import (
    iter_run_log,
    protocol_of,
    read_run_log,
    record_checker,
)

HERE = Path(__file__).resolve().parent

# --------------------------------------------------------------------------
# seeds
# --------------------------------------------------------------------------

_TASK_KINDS = ["a", "", "é中文", "task-%d", "x" * 300, "\x00nul", "emoji 🎲"]


def _random_task(rng: random.Random) -> str:
    kind = rng.choice(_TASK_KINDS)
    return kind % rng.randrange(10**6) if "%d" in kind else kind


@pytest.mark.parametrize("seed", [0, 1, 7, 2**31, 2**32 - 1, 2**32, 2**63, 2**64 - 1, 2**64,
                                  2**96 - 1, 2**96, 3**90])
def test_run_seeds_equal_seedsequence_on_random_pairs(seed: int) -> None:
    rng = random.Random(seed % 1000)
    tasks = [_random_task(rng) for _ in range(400)]
    runs = [rng.choice([0, 1, rng.randrange(100), rng.randrange(10**6), 2**32 - 1, 2**32,
                        rng.randrange(2**40), 2**63 - 1]) for _ in range(400)]
    expected = [run_seed(seed, t, r) for t, r in zip(tasks, runs, strict=True)]
    assert run_seeds(seed, tasks, runs).tolist() == expected
    assert run_seeds(seed, tasks, np.array(runs, dtype=np.int64)).tolist() == expected
    assert run_seeds(seed, tasks, np.array(runs, dtype=np.uint64)).tolist() == expected


def test_run_seeds_equal_seedsequence_itself() -> None:
    """The reference spelled out: the run-th child of SeedSequence([seed, crc32(task)])."""
    rng = random.Random(5)
    for _ in range(200):
        seed, task, run = rng.randrange(2**70), _random_task(rng), rng.randrange(2**33)
        child = np.random.SeedSequence([seed, zlib.crc32(task.encode())], spawn_key=(run,))
        assert run_seeds(seed, [task], [run])[0] == child.generate_state(1, np.uint64)[0]


def test_run_seeds_edges() -> None:
    assert run_seeds(3, [], []).tolist() == []
    assert run_seeds(3, ["a"], [2**64 + 3]).tolist() == [run_seed(3, "a", 2**64 + 3)]
    with pytest.raises(ValueError, match="run_index"):
        run_seeds(3, ["a"], [-1])
    with pytest.raises(ValueError, match="seed"):
        run_seeds(-1, ["a"], [0])
    with pytest.raises(ValueError, match="as long as"):
        run_seeds(3, ["a", "b"], [0])


# --------------------------------------------------------------------------
# the header's checks: bulk against record by record
# --------------------------------------------------------------------------


def _header(kind: str, seed: int | None, tasks: list[str]) -> dict:
    if kind == "plugin":  # the pytest plugin's per-test runs
        settings = {"tests": {t: {"runs": 6} for t in tasks}, "max_retries": 2}
    elif kind == "bare-plan":  # no tasks list, no retries
        settings = {"runs_by_risk": {"high": 8}, "default_runs": 5}
    else:
        settings = {"tasks": tasks, "runs_by_risk": {"high": 8, "read-only": 5},
                    "default_runs": 5, "previously_flaky_runs": 6, "max_retries": 2}
    header: dict = {"protocol": Protocol(settings).to_dict()}
    if seed is not None:
        header["seed"] = seed
    return header


def _records(rng: random.Random, seed: int, tasks: list[str], n: int) -> list[dict]:
    out = []
    risks = rng.choice([["read-only", "high", None], ["read-only"], ["high"], [None]])
    for _ in range(n):
        task, trial = rng.choice(tasks), rng.randrange(5)
        attempt = rng.choice([0, 0, 0, 1, 2])
        out.append({"task_id": task, "trial": trial, "success": rng.random() < 0.7,
                    "attempt": attempt, "seed": attempt_seed(seed, task, trial, attempt),
                    "risk": rng.choice(risks)})
    return out


#: Each way a record can contradict its header (or be off in type), applied to one record.
CORRUPTIONS = {
    "seed+1": lambda r: r.update(seed=r["seed"] + 1),
    "seed of another run": lambda r: r.update(trial=(r["trial"] + 1) % 5),
    "seed of another attempt": lambda r: r.update(attempt=(r["attempt"] + 1) % 3),
    "seed negative": lambda r: r.update(seed=-r["seed"] - 1),
    "seed beyond 64 bits": lambda r: r.update(seed=r["seed"] + 2**64),
    "seed as text": lambda r: r.update(seed=str(r["seed"])),
    "seed as a float": lambda r: r.update(seed=float(r["seed"])),
    "seed true": lambda r: r.update(seed=True),
    "task not listed": lambda r: r.update(task_id="nope"),
    "task as a number": lambda r: r.update(task_id=7),
    "trial beyond the plan": lambda r: r.update(trial=9),
    "trial at the plan (5)": lambda r: r.update(trial=5),
    "trial at the plan (6)": lambda r: r.update(trial=6),
    "trial at the plan (8)": lambda r: r.update(trial=8),
    "trial negative": lambda r: r.update(trial=-1),
    "trial missing": lambda r: r.pop("trial"),
    "trial as text": lambda r: r.update(trial="1"),
    "trial huge": lambda r: r.update(trial=2**70),
    "attempt beyond retries": lambda r: r.update(attempt=3),
    "attempt negative": lambda r: r.update(attempt=-1),
    "attempt as a float": lambda r: r.update(attempt=1.0),
    "no seed on one record": lambda r: r.pop("seed"),
    "risk a list": lambda r: r.update(risk=["high"]),
    "not an object": lambda r: r.clear(),
    "settled record": lambda r: (r.pop("success"), r.update(settled={"runs_made": 1})),
}


def _one_by_one(check, records) -> str | None:
    """The per-record check (the code before issue 41): the first error's text, or None."""
    try:
        for line, record in records:
            check.check_record(line, record)
    except (ResultsError, ValueError) as exc:
        return str(exc)
    return None


def _bulk(check, records) -> str | None:
    try:
        check(records)
    except (ResultsError, ValueError) as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("kind", ["tasks", "plugin", "bare-plan"])
@pytest.mark.parametrize("root", [5, 2**64 + 9, None])
def test_bulk_check_equals_record_by_record(kind: str, root: int | None) -> None:
    rng = random.Random(f"{kind}{root}")
    tasks = ["t1", "t2", "é3", "7"]
    header = _header(kind, root, tasks)
    check = record_checker(header, protocol_of(header, "log"), "log")
    derive = root if root is not None else 11
    said = 0
    for name, corrupt in [("clean", None), *CORRUPTIONS.items()]:
        for _ in range(6):
            records = _records(rng, derive, tasks, rng.randrange(1, 40))
            if corrupt is not None:
                corrupt(records[rng.randrange(len(records))])
            numbered = list(enumerate(records, start=2))
            expected = _one_by_one(check, numbered)
            assert _bulk(check, numbered) == expected, (name, kind, root)
            said += expected is not None
    assert said > 0  # the corruptions were seen


def test_bulk_check_without_a_header() -> None:
    check = record_checker(None, None, "log")
    rng = random.Random(1)
    records = list(enumerate(_records(rng, 3, ["a"], 20), start=1))
    assert _one_by_one(check, records) is not None
    assert _bulk(check, records) == _one_by_one(check, records)
    unseeded = [(i, {k: v for k, v in r.items() if k != "seed"}) for i, r in records]
    assert _bulk(check, unseeded) is None


def test_columns_equal_the_records() -> None:
    """The typed columns the JSON Lines reader passes: the same verdict and message."""
    rng = random.Random(2)
    header = _header("tasks", 5, ["t1", "t2"])
    check = record_checker(header, protocol_of(header, "log"), "log")
    for name, corrupt in [("clean", None), *CORRUPTIONS.items()]:
        records = _records(rng, 5, ["t1", "t2"], 30)
        if corrupt is not None:
            corrupt(records[7])
        if not all(isinstance(r, dict) and "success" in r for r in records) or any(
                type(r.get(f)) not in (int, type(None)) for r in records
                for f in ("trial", "attempt", "seed")) or any(
                type(r.get("risk")) not in (str, type(None)) for r in records):
            continue  # the reader sends such a chunk line by line (msgspec's types)
        numbers = list(range(2, 2 + len(records)))
        expected = _one_by_one(check, list(zip(numbers, records, strict=True)))
        try:
            check.columns(numbers, *([r.get(f) for r in records]
                                     for f in ("task_id", "trial", "attempt", "seed", "risk")))
            got = None
        except ResultsError as exc:
            got = str(exc)
        assert got == expected, name


def _write_log(path: Path, seed: int, tasks: int, runs: int) -> list[dict]:
    ids = [f"t{i}" for i in range(tasks)]
    header = {"protocol": Protocol({"tasks": ids, "runs_by_risk": {}, "default_runs": runs,
                                    "max_retries": 1}).to_dict(), "seed": seed}
    records = [{"task_id": t, "trial": j, "success": (i + j) % 3 != 0, "attempt": 0,
                "seed": run_seed(seed, t, j), "risk": None}
               for i, t in enumerate(ids) for j in range(runs)]
    path.write_text("\n".join(json.dumps(x) for x in [header, *records]) + "\n")
    return records


@pytest.mark.parametrize("where", [0, 777, 1199])
def test_a_forged_seed_is_refused_on_every_path(tmp_path: Path, where: int, capsys) -> None:
    path = tmp_path / "log.jsonl"
    records = _write_log(path, 4, 100, 12)
    clean = read_results(path)
    assert int(clean.totals.sum()) == 1200
    records[where]["seed"] += 1
    lines = path.read_text().splitlines()
    lines[where + 1] = json.dumps(records[where])
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ResultsError) as caught:
        read_results(path)
    assert caught.value.where == where + 2
    assert "field 'seed'" in str(caught.value)
    for command in ("report", "gate"):
        for fmt in ([], ["--json"], ["--markdown"]):
            capsys.readouterr()
            assert main([command, str(path), *fmt]) == 2
            err = capsys.readouterr().err.strip().splitlines()
            assert len(err) == 1 and f"log.jsonl:{where + 2}" in err[0]
            assert "field 'seed'" in err[0] and "is not the seed the header's seed" in err[0]


def test_a_clean_log_reads_the_same_counts_as_without_its_header(tmp_path: Path) -> None:
    path, bare = tmp_path / "log.jsonl", tmp_path / "bare.jsonl"
    _write_log(path, 9, 300, 7)
    bare.write_text("".join(json.dumps({k: v for k, v in json.loads(line).items()
                                        if k != "seed"}) + "\n"
                            for line in path.read_text().splitlines()[1:]))
    a, b = read_results(path), read_results(bare)
    assert a.task_ids == b.task_ids
    assert a.successes.tolist() == b.successes.tolist()
    assert a.totals.tolist() == b.totals.tolist()
    assert len(a.run_ids) == 2100 and not b.run_ids


# --------------------------------------------------------------------------
# the log streamed
# --------------------------------------------------------------------------


def _random_log(rng: random.Random) -> bytes:
    lines = []
    if rng.random() < 0.5:
        lines.append(b'{"protocol": {"settings": {}}}')
    for i in range(rng.randrange(0, 12)):
        lines.append(rng.choice([b"", b"   ", json.dumps({"task_id": f"a{i}",
                                                         "success": True}).encode()]))
    data = b"\n".join(lines)
    tail = rng.choice([b"", b"\n", b'\n{"ta', b"\n\n", b"\n  ", b'\n{"task_id": "z"}'])
    return data + tail


def _outcome(fn, path: Path, **kw):
    try:
        return ("ok", fn(path, **kw), path.read_bytes())
    except ResultsError as exc:
        return ("error", str(exc), path.read_bytes())


@pytest.mark.parametrize("trial", range(60))
def test_iter_run_log_equals_read_run_log(tmp_path: Path, trial: int) -> None:
    rng = random.Random(trial)
    data = _random_log(rng)
    if trial % 7 == 3:  # an error: a bad line, a header not first, one JSON document
        data = rng.choice([b'{"task_id": "a", "success": true}\nnot json\n{"b": 1}\n',
                           b'{"task_id": "a", "success": true}\n{"protocol": {}}\n',
                           b'{\n  "evalId": "x"\n}\n', b"\xff\xfe\n"])
    for torn_tail in (False, True):
        for repair in (False, True):
            one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
            one.write_bytes(data)
            two.write_bytes(data)
            old = _outcome(lambda p, **kw: read_run_log(p, **kw).records, one,
                           torn_tail=torn_tail, repair=repair)
            new = _outcome(lambda p, **kw: list(iter_run_log(p, **kw)), two,
                           torn_tail=torn_tail, repair=repair)
            assert new == (old[0], old[1], old[2]) if old[0] == "ok" else new[0] == "error"
            if old[0] == "error":
                assert new[1].replace("two.jsonl", "one.jsonl") == old[1]


def test_resume_replays_without_reading_the_whole_log(tmp_path: Path, monkeypatch) -> None:
    from passk import run_suite
    from passk.adapter import RunResult, Task
    from passk.run import runner

    class Coin:
        def run(self, task, *, seed):
            return RunResult(task.task_id, 0, seed % 3 != 0)

    tasks = [Task(f"t{i}") for i in range(20)]
    log = tmp_path / "log.jsonl"
    whole = run_suite(Coin(), tasks, {"read-only": 6}, seed=2, log=log, progress=False)
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[:61]) + "\n" + lines[61][:9])  # 60 runs, a torn line

    def refuse(*args, **kwargs):
        raise AssertionError("resume read the whole log at once")

    monkeypatch.setattr(runner, "read_run_log", refuse)
    resumed = run_suite(Coin(), tasks, {"read-only": 6}, seed=2, log=log, resume=True,
                        progress=False)
    assert [(r.task_id, r.run_index, r.success, r.seed) for r in resumed.results] == \
        [(r.task_id, r.run_index, r.success, r.seed) for r in whole.results]
    assert resumed.report.gate.passed == whole.report.gate.passed
    assert len(read_results(log).run_ids) == 120


# --------------------------------------------------------------------------
# the collector, and one parse per file
# --------------------------------------------------------------------------


@pytest.mark.parametrize("was_on", [True, False])
@pytest.mark.parametrize("fails", [False, True])
def test_read_results_pauses_the_collector_and_restores_it(tmp_path: Path, monkeypatch,
                                                           was_on: bool, fails: bool) -> None:
    from passk.results.formats import jsonl_csv

    path = tmp_path / "r.jsonl"
    path.write_text('{"task_id": "a", "success": true}\n' if not fails else "not json\n")
    seen = []
    real = jsonl_csv.read_jsonl

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(jsonl_csv, "read_jsonl", spy)
    (gc.enable if was_on else gc.disable)()
    try:
        if fails:
            with pytest.raises(ResultsError):
                read_results(path)
        else:
            assert read_results(path).totals.tolist() == [1]
        assert gc.isenabled() is was_on
    finally:
        gc.enable()
    assert seen == [False]


def test_promptfoo_is_parsed_once_and_its_identity_is_the_files(monkeypatch) -> None:
    from passk.results.formats import _shared, promptfoo

    source = HERE / "fixtures" / "promptfoo" / "repeat4.json"
    loads = []
    real = _shared.load_json

    def counting(path, *args, **kwargs):
        loads.append(Path(path).name)
        return real(path, *args, **kwargs)

    for module in (_shared, promptfoo):
        monkeypatch.setattr(module, "load_json", counting)
    from passk.results import formats

    monkeypatch.setattr(formats, "load_json", counting, raising=False)
    results = read_results(source)
    assert loads == ["repeat4.json"]
    fresh = promptfoo.run_ids(source)  # nothing kept now: read afresh
    assert loads == ["repeat4.json", "repeat4.json"]
    assert results.sources[0].run_ids == tuple(fresh["run_ids"])
    promptfoo.read_promptfoo(source)
    kept = promptfoo.run_ids(source)  # what the reader kept, without a parse
    assert loads == ["repeat4.json"] * 3
    assert kept == fresh and len(kept["trials"]) == int(results.totals.sum())


@pytest.mark.parametrize("job", ["job", "job_errors", "jobs"])
def test_harbor_reads_each_file_once_and_its_identity_is_the_jobs(monkeypatch, job) -> None:
    from passk.results.evidence import _canonical
    from passk.results.formats import harbor

    path = HERE / "fixtures" / "harbor" / job
    loads: list[str] = []
    real = harbor._load

    def counting(file, *args, **kwargs):
        loads.append(str(file))
        return real(file, *args, **kwargs)

    monkeypatch.setattr(harbor, "_load", counting)
    results = read_results(path)
    assert loads and len(loads) == len(set(loads))
    fresh = harbor.identity(path, eval_key=results.suite)
    assert results.sources[0].run_ids == tuple(("Harbor job", str(i))
                                               for i in fresh["run_ids"])
    assert results.sources[0].evaluation == tuple((k, _canonical(v))
                                                  for k, v in fresh["evaluation"].items())


def test_promptfoo_canonical_text_is_json_dumps() -> None:
    import datetime as dt

    from passk.results.formats.promptfoo import _canonical

    values = [{"b": 1, "a": [1, 2, {"z": None, "é": "ü"}]}, None, "x", 1.5, float("nan"),
              {"d": dt.date(2020, 1, 1)}, [], {}, {"\u2028": "\ud800"}, [True, 10**30]]
    for value in values:
        assert _canonical(value) == json.dumps(value, sort_keys=True, separators=(",", ":"),
                                               ensure_ascii=False, default=str)


@pytest.mark.parametrize("kind", ["tasks", "plugin"])
def test_a_clean_chunk_is_checked_in_bulk(kind: str, monkeypatch) -> None:
    """Clean records never reach the record-by-record check (the 20 µs a record path)."""
    from passk.results.runlog import RecordChecker

    rng = random.Random(kind)
    header = _header(kind, 5, ["t1", "t2"])
    check = record_checker(header, protocol_of(header, "log"), "log")
    records = list(enumerate(_records(rng, 5, ["t1", "t2"], 500), start=2))

    def refuse(*args, **kwargs):
        raise AssertionError("checked one by one")

    monkeypatch.setattr(RecordChecker, "check_record", refuse)
    check(records)
    check.columns([n for n, _ in records],
                  *([r.get(f) for _, r in records]
                    for f in ("task_id", "trial", "attempt", "seed", "risk")))
