"""The bulk reads of issue 41 against the reader they replaced, loaded from git: the run log and
quoted CSV.

The JSON Lines reader now checks a ``passk run`` log's records against its header from its
own task indexes and whole-number arrays (:meth:`RecordChecker.indexed`,
:func:`passk.repeats.run_seeds_indexed`) and keeps the run ids as columns, made as text only
when compared (:class:`passk.results.counts.RunIds`). The oracle is ``jsonl_csv.py`` as it
was at :data:`BEFORE` (the line-by-line check of each record, the run ids built as text for
every record): the same counts, the same run ids, the same one-line error (file, line,
field) on clean logs and on logs corrupted in every way a record can contradict its header,
with chunks of every size.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from old_code import old_module

from passk.cli.commands import main
from passk.repeats import attempt_seed, run_seed, run_seeds, run_seeds_indexed
from passk.results import ResultsError
from passk.results.counts import RunIds, combine_trials
from passk.results.formats import jsonl_csv
from passk.results.protocol import Protocol
from passk.results.read import read_results
from passk.results.runlog import RecordChecker, protocol_of, record_checker

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "e921ac5"  # main before the run log's indexed check


def _old_module(path: str, name: str) -> ModuleType:
    """The module at ``path`` as commit :data:`BEFORE` had it, importable as ``name``."""
    return old_module(BEFORE, path, name)


@pytest.fixture(scope="module")
def old() -> ModuleType:
    return _old_module("passk/results/formats/jsonl_csv.py", "_old_jsonl_csv")


def _settings(kind: str, tasks: list[str]) -> dict[str, Any]:
    if kind == "plugin":  # the pytest plugin's per-test runs
        return {"tests": {t: {"runs": 6} for t in tasks}, "max_retries": 2}
    if kind == "bare-plan":  # no task list, no retries
        return {"runs_by_risk": {"high": 8}, "default_runs": 5}
    return {"tasks": tasks, "runs_by_risk": {"high": 8, "read-only": 5}, "default_runs": 5,
            "previously_flaky_runs": 6, "max_retries": 2}


def _records(rng: random.Random, seed: int, tasks: list[str], risk: str | None
             ) -> list[dict[str, Any]]:
    """Each task's runs 0..4; some runs retried after an infrastructure error."""
    out = []
    for task in tasks:
        for trial in range(5):
            attempts = 1 + (rng.random() < 0.15) + (rng.random() < 0.05)
            for attempt in range(attempts):
                last = attempt == attempts - 1
                record = {"task_id": task, "trial": trial, "success": last and rng.random() < 0.7,
                          "attempt": attempt, "seconds": 0.01, "error": None,
                          "infrastructure_error": not last, "cached": False,
                          "seed": attempt_seed(seed, task, trial, attempt), "risk": risk}
                if rng.random() < 0.1:
                    del record["attempt" if attempt == 0 else "error"]
                out.append(record)
    return out


#: Each way a record can contradict its header, or its neighbours, applied to one record.
CORRUPTIONS = {
    "seed+1": lambda r, rs: r.update(seed=r["seed"] + 1),
    "seed-1": lambda r, rs: r.update(seed=r["seed"] - 1),
    "seed of another run": lambda r, rs: r.update(seed=run_seed(5, r["task_id"], 4 - r["trial"])),
    "seed of another task": lambda r, rs: r.update(task_id=rs[0]["task_id"] if r is not rs[0]
                                                   else rs[-1]["task_id"]),
    "seed of another attempt": lambda r, rs: r.update(attempt=r.get("attempt", 0) + 1),
    "seed zero": lambda r, rs: r.update(seed=0),
    "seed 2**64 - 1": lambda r, rs: r.update(seed=2**64 - 1),
    "seed negative": lambda r, rs: r.update(seed=-r["seed"]),
    "seed beyond 64 bits": lambda r, rs: r.update(seed=r["seed"] + 2**64),
    "seed as text": lambda r, rs: r.update(seed=str(r["seed"])),
    "seed as a float": lambda r, rs: r.update(seed=float(r["seed"])),
    "seed missing": lambda r, rs: r.pop("seed"),
    "seed null": lambda r, rs: r.update(seed=None),
    "task not listed": lambda r, rs: r.update(task_id="nope"),
    "task as a number": lambda r, rs: r.update(task_id=7),
    "trial beyond the plan": lambda r, rs: r.update(trial=9),
    "trial at the plan": lambda r, rs: r.update(trial=5),
    "trial negative": lambda r, rs: r.update(trial=-1),
    "trial missing": lambda r, rs: r.pop("trial"),
    "trial huge": lambda r, rs: r.update(trial=2**70),
    "attempt beyond retries": lambda r, rs: r.update(attempt=3),
    "attempt negative": lambda r, rs: r.update(attempt=-1),
    "attempt huge": lambda r, rs: r.update(attempt=2**65),
    "a run twice": lambda r, rs: rs.append(dict(r)),
    "a run twice, one left out": lambda r, rs: rs.append({**r, "infrastructure_error": True}),
    "risk another tier": lambda r, rs: r.update(risk="high"),
}


def _write(path: Path, header: dict[str, Any] | None, records: list[dict[str, Any]]) -> None:
    lines = ([json.dumps(header, separators=(",", ":"))] if header is not None else [])
    path.write_text("\n".join(lines + [json.dumps(r, separators=(",", ":")) for r in records])
                    + "\n")


def _outcome(read: Any, path: Path) -> tuple[str, Any]:
    try:
        r = read(path)
    except ResultsError as exc:
        return ("error", str(exc))
    except ValueError as exc:  # before: a negative attempt reached attempt_seed (no line)
        return ("unlocated", str(exc))
    return ("ok", (r.task_ids, r.successes.tolist(), r.totals.tolist(), r.excluded.tolist(),
                   r.risks, r.notes, r.incomplete, r.excluded_reason, r.unidentified,
                   frozenset(r.run_ids)))


_SLOW = pytest.mark.slow


@pytest.mark.parametrize("chunk", [3, jsonl_csv._CHUNK_LINES, pytest.param(1, marks=_SLOW),
                                   pytest.param(64, marks=_SLOW)])
@pytest.mark.parametrize("kind", ["tasks", "plugin", "bare-plan"])
@pytest.mark.parametrize("root", [5, None, pytest.param(2**64 + 9, marks=_SLOW)])
def test_the_read_equals_the_code_before(tmp_path: Path, monkeypatch, old: ModuleType,
                                         chunk: int, kind: str, root: int | None) -> None:
    monkeypatch.setattr(jsonl_csv, "_CHUNK_LINES", chunk)  # about 64 bytes a line
    rng = random.Random(f"{chunk}{kind}{root}")
    tasks = ["t1", "t2", "é3", "7", "task with spaces"]
    header: dict[str, Any] = {"protocol": Protocol(_settings(kind, tasks)).to_dict()}
    if root is not None:
        header["seed"] = root
    derive = root if root is not None else 5
    path = tmp_path / "log.jsonl"
    said = 0
    for name, corrupt in [("clean", None), *CORRUPTIONS.items()]:
        for _ in range(1 if chunk in (3, jsonl_csv._CHUNK_LINES) and root != 2**64 + 9 else 3):
            records = _records(rng, derive, tasks, rng.choice(["read-only", None]))
            if corrupt is not None:
                corrupt(records[rng.randrange(len(records))], records)
            _write(path, header, records)
            expected = _outcome(old.read_jsonl, path)
            got = _outcome(jsonl_csv.read_jsonl, path)
            if expected[0] == "unlocated":  # now named: the file, the line, the field
                assert name == "attempt negative" and got[0] == "error", got
                assert "log.jsonl:" in got[1] and "field 'attempt'" in got[1], got
                continue
            assert got == expected, (name, kind, root)
            said += expected[0] == "error"
            if name == "clean":
                assert expected[0] == "ok"
    assert said > 0  # the corruptions were seen


@pytest.mark.parametrize("root", [5, 2**64 + 9])
def test_a_clean_log_is_checked_in_bulk_only(tmp_path: Path, monkeypatch, root: int) -> None:
    """Clean chunks, retries included, never reach the per-record checks or run ids as text."""
    monkeypatch.setattr(jsonl_csv, "_CHUNK_LINES", 5)

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("not in bulk")

    monkeypatch.setattr(RecordChecker, "columns", refuse)
    monkeypatch.setattr(RecordChecker, "check_record", refuse)
    tasks = [f"t{i}" for i in range(40)]
    header = {"protocol": Protocol(_settings("tasks", tasks)).to_dict(), "seed": root}
    records = _records(random.Random(root), root, tasks, "read-only")
    path = tmp_path / "log.jsonl"
    _write(path, header, records)
    r = read_results(path)
    assert int(r.totals.sum()) == 200
    assert isinstance(r.run_ids, RunIds) and r.run_ids._ids is None  # not made yet
    assert len(r.run_ids) == len(records) and r.unidentified == 0
    assert r.run_ids == {("passk run (task, seed, attempt)", rec["task_id"], str(rec["seed"]),
                          str(rec.get("attempt", 0))) for rec in records}


@pytest.mark.parametrize("name", ["seed+1", "seed of another run", "seed of another attempt",
                                  "seed zero", "task not listed", "trial beyond the plan",
                                  "attempt beyond retries"])
def test_a_contradicted_record_is_one_line_on_every_path(tmp_path: Path, monkeypatch, capsys,
                                                         name: str) -> None:
    monkeypatch.setattr(jsonl_csv, "_CHUNK_LINES", 7)
    tasks = [f"t{i}" for i in range(30)]
    header = {"protocol": Protocol(_settings("tasks", tasks)).to_dict(), "seed": 5}
    records = _records(random.Random(name), 5, tasks, "read-only")
    where = len(records) * 2 // 3  # in a later chunk
    if name == "seed of another attempt":  # attempt 1 of a run whose attempt 0 was counted
        records[where].update(attempt=0, infrastructure_error=False)
    CORRUPTIONS[name](records[where], records)
    path = tmp_path / "log.jsonl"
    _write(path, header, records)
    first = name.split(maxsplit=1)[0]
    field = {"seed+1": "seed", "task": "task_id"}.get(first, first)
    with pytest.raises(ResultsError) as caught:
        read_results(path)
    assert caught.value.where == where + 2 and f"field '{field}'" in str(caught.value)
    for command in ("report", "gate"):
        for fmt in ([], ["--json"], ["--markdown"]):
            capsys.readouterr()
            assert main([command, str(path), *fmt]) == 2
            err = capsys.readouterr().err.strip().splitlines()
            assert len(err) == 1 and f"log.jsonl:{where + 2}:" in err[0], err
            assert f"field '{field}'" in err[0]


def test_the_same_run_in_two_logs_is_refused_as_before(tmp_path: Path, old: ModuleType) -> None:
    tasks = [f"t{i}" for i in range(6)]
    header = {"protocol": Protocol(_settings("tasks", tasks)).to_dict(), "seed": 5}
    records = _records(random.Random(3), 5, tasks, "read-only")
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _write(a, header, records)
    _write(b, header, [*records[-3:], *records[:-3]])  # reordered: other bytes, same runs
    new = [(str(p), jsonl_csv.read_jsonl(p)) for p in (a, b)]
    before = [(str(p), old.read_jsonl(p)) for p in (a, b)]
    errors = []
    for parts in (new, before):
        with pytest.raises(ResultsError) as caught:
            combine_trials(parts, path="a + b")
        errors.append(str(caught.value))
    assert errors[0] == errors[1] and "the same run counted twice" in errors[0]


@pytest.mark.parametrize("seed", [0, 7, 2**32, 2**64 + 3])
def test_run_seeds_indexed_equals_run_seeds(seed: int) -> None:
    rng = np.random.default_rng(seed % 97)
    names = ["a", "", "é中文", "x" * 300, "emoji 🎲", *(f"t{i}" for i in range(50))]
    index = rng.integers(0, len(names), size=500)
    runs = rng.choice([0, 1, 99, 2**32 - 1, 2**32, 2**40, 2**63 - 1], size=500)
    expected = run_seeds(seed, [names[i] for i in index.tolist()], runs)
    assert run_seeds_indexed(seed, names, index, runs).tolist() == expected.tolist()
    assert expected[:5].tolist() == [run_seed(seed, names[i], int(j))
                                     for i, j in zip(index[:5], runs[:5], strict=True)]
    assert run_seeds_indexed(seed, names, index[:0], runs[:0]).size == 0
    with pytest.raises(ValueError, match="non-negative"):
        run_seeds_indexed(seed, names, index[:2], np.array([0, -1]))


def test_indexed_check_never_passes_what_one_by_one_refuses() -> None:
    """Random chunks given as arrays: indexed() True only where every record passes."""
    rng = random.Random(11)
    tasks = ["t1", "t2", "é3"]
    for kind in ("tasks", "plugin", "bare-plan"):
        for root in (5, None):
            header: dict[str, Any] = {"protocol": Protocol(_settings(kind, tasks)).to_dict()}
            if root is not None:
                header["seed"] = root
            check = record_checker(header, protocol_of(header, "log"), "log")
            for trial in range(300):
                n = rng.randrange(1, 30)
                recs = [{"task_id": rng.choice(tasks), "trial": rng.randrange(-1, 10),
                         "attempt": rng.choice([0, 0, 1, 2, 3, -1]), "success": True,
                         "risk": rng.choice(["high", "read-only", None])} for _ in range(n)]
                for r in recs:
                    r["seed"] = (attempt_seed(5, r["task_id"], max(r["trial"], 0),
                                              max(r["attempt"], 0))
                                 + (rng.random() < 0.05))
                names = list(dict.fromkeys(r["task_id"] for r in recs))
                verdict = check.indexed(
                    names, np.array([names.index(r["task_id"]) for r in recs]),
                    np.array([r["trial"] for r in recs]), np.array([r["attempt"] for r in recs]),
                    np.array([r["seed"] for r in recs], dtype=np.uint64),
                    [r["risk"] for r in recs])
                try:
                    for line, r in enumerate(recs, start=2):
                        check.check_record(line, r)
                    refused = False
                except (ResultsError, ValueError):
                    refused = True
                assert not (verdict and refused), (kind, root, trial)
                if not refused and min(r["attempt"] for r in recs) >= 0:
                    assert verdict, (kind, root, trial)  # one by one decides the rest


# --------------------------------------------------------------------------
# CSV with every cell quoted: split in bulk where csv.reader would split it so
# --------------------------------------------------------------------------

def _cell(rng: random.Random) -> str:
    return rng.choice(["a", "", "x,y", " spaced ", "é中", 'say "hi"', "two\nlines", "semi;colon",
                       "tab\there", "trail ", '"', "\\", "7"])


def _quoted_file(rng: random.Random, rows: int) -> str:
    names = rng.choice([["task_id", "trial", "success"], ["task_id", "success"],
                        ["risk", "task_id", "success", "trial", "cached"]])
    out = []
    quote_header = rng.random() < 0.8
    out.append(",".join(f'"{n}"' if quote_header else n for n in names))
    odd = rng.random() < 0.5  # one line off: a cell with a quote, a newline, a bare cell, ...
    for i in range(rows):
        cells = {"task_id": f"t{rng.randrange(5)}", "trial": str(i),
                 "success": rng.choice(["true", "false", "1", "0", "TRUE"]),
                 "risk": rng.choice(["high", "read-only", ""]), "cached": rng.choice(["", "true"])}
        line = [cells[n] for n in names]
        if odd and rng.random() < 0.05:
            line[rng.randrange(len(line))] = _cell(rng)
        quoted = ['"' + c.replace('"', '""') + '"' for c in line]
        if odd and rng.random() < 0.03:
            quoted[rng.randrange(len(quoted))] = line[0]  # left unquoted
        out.append(",".join(quoted))
    end = rng.choice(["\n", "\r\n"])
    return end.join(out) + rng.choice([end, ""])


@pytest.mark.parametrize("trial", range(40))
def test_quoted_csv_reads_as_csv_reader_reads_it(tmp_path: Path, monkeypatch, old: ModuleType,
                                                 trial: int) -> None:
    rng = random.Random(trial)
    monkeypatch.setattr(jsonl_csv, "_CHUNK_LINES", rng.choice([1, 2, 5, 1000]))
    path = tmp_path / "runs.csv"
    path.write_bytes(_quoted_file(rng, rng.randrange(1, 120)).encode())
    assert _outcome(jsonl_csv.read_csv, path) == _outcome(old.read_csv, path)


def test_a_quoted_csv_is_split_in_bulk(tmp_path: Path, monkeypatch) -> None:
    """A clean quoted file never reaches csv.reader: the same counts as unquoted."""
    import csv

    rng = random.Random(5)
    path, plain = tmp_path / "q.csv", tmp_path / "p.csv"
    rows = [["task_id", "trial", "success"]] + [
        [f"t{i % 50}, with a comma", str(i // 50), rng.choice(["true", "false"])]
        for i in range(5000)]
    with open(path, "w", newline="") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL).writerows(rows)
    with open(plain, "w", newline="") as f:
        csv.writer(f).writerows(rows)  # the comma: these cells quoted, the others not

    reader = csv.reader

    def header_only(lines: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(lines, list):  # the header line is parsed so; the rows are not
            raise TypeError("the rows read by csv.reader")
        return reader(lines, *args, **kwargs)

    expected = _outcome(jsonl_csv.read_csv, plain)
    monkeypatch.setattr(jsonl_csv.csv, "reader", header_only)
    assert _outcome(jsonl_csv.read_csv, path) == expected
    assert expected[0] == "ok" and sum(expected[1][2]) == 5000


@pytest.mark.parametrize("bad", ['"t1","0","maybe"', '"t1","x","true"', '"t1","0"',
                                 '"t1","0","true","extra"', '"","0","true"'])
def test_a_bad_quoted_row_is_named_by_its_line(tmp_path: Path, capsys, bad: str) -> None:
    rows = ['"task_id","trial","success"'] + [f'"t{i}","0","true"' for i in range(30)]
    rows.insert(20, bad)
    path = tmp_path / "runs.csv"
    path.write_text("\n".join(rows) + "\n")
    with pytest.raises(ResultsError) as caught:
        read_results(path)
    assert caught.value.where == 21
    for fmt in ([], ["--json"], ["--markdown"]):
        capsys.readouterr()
        assert main(["report", str(path), *fmt]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "runs.csv:21:" in err[0], err


# --------------------------------------------------------------------------
# the report's table laid out in bulk: the same text as cell by cell
# --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def old_tables() -> ModuleType:
    return _old_module("passk/render/tables.py", "_old_tables")


_TEXTS = ["a", "", " lead", "trail ", "a\\b", "\\u200b", "é中文", "zero\u200bwidth", "\x1b[31m",
          "tab\tin", "new\nline", "%s %d", "{0}", "ｆｕｌｌ", "a" * 70, "\ufe0f", "-"]
_NUMBERS = [0.0, -0.0, 1 / 3, 2 / 3, 1.0, 0.0005, 0.9995, float("nan"), float("inf"),
            -float("inf"), 1e-300, 123456.789, np.float64(0.125), np.float64("nan"), 7, True]


@pytest.mark.parametrize("trial", range(30))
def test_table_text_equals_the_cell_by_cell_code(old_tables: ModuleType, trial: int) -> None:
    from passk.analysis.report import _pairs
    from passk.render import tables

    rng = random.Random(trial)
    rows = rng.choice([0, 1, 2, 63, 64, 65, 300])
    numbers = [rng.choice(_NUMBERS) for _ in range(rows)]
    for digits in (1, 3, 4):
        assert tables.cells(numbers, digits) == old_tables.cells(numbers, digits)
    assert tables.cells(np.array(numbers, dtype=float)) == old_tables.cells(
        np.array(numbers, dtype=float))
    ids = [rng.choice(_TEXTS) + rng.choice(["", "x", " "]) for _ in range(rows)]
    if trial % 3 == 0:
        ids = [f"task-{i}" for i in range(rows)]  # the plain kind: returned as they are
    assert tables.show_ids(ids) == [old_tables.show_id(t) for t in ids]
    width = rng.randrange(1, 6)
    columns = [[rng.choice(_TEXTS) if rng.random() < 0.5 else tables.cell(rng.random())
                for _ in range(rows)] for _ in range(width)]
    header = [rng.choice(["task", "n", "p̂", "", "95% CI", "%s"]) for _ in range(width)]
    numeric = {i for i in range(width) if rng.random() < 0.5}
    for markdown in (False, True):
        assert tables.format_columns(header, columns, numeric=numeric, markdown=markdown) == \
            old_tables.format_columns(header, columns, numeric=numeric, markdown=markdown)
    lows, highs = tables.cells(numbers), tables.cells(numbers[::-1])
    assert _pairs(lows, highs) == [f"[{a}, {b}]" for a, b in zip(lows, highs, strict=True)]


@pytest.mark.parametrize("method", ["exact", "blaker"])
def test_per_task_intervals_once_per_distinct_counts_are_the_same(method: str) -> None:
    """A suite's intervals computed once per distinct (c, n): the numbers of each task's own
    (arrays below 1,024 tasks take the elementwise path, as before)."""
    from passk.metrics import pass_hat_k_ci, pass_hat_k_lower_bound

    rng = np.random.default_rng(4)
    n = rng.choice([0, 1, 5, 10, 12], size=5000)
    c = rng.binomial(n, 0.8)
    k = rng.choice([1, 3, 10], size=5000)
    low, high = pass_hat_k_ci(c, n, k, method=method)
    bound = pass_hat_k_lower_bound(c, n, k)
    for part in np.array_split(np.arange(5000), 10):  # 500 at a time: elementwise
        a, b = pass_hat_k_ci(c[part], n[part], k[part], method=method)
        assert np.array_equal(low[part], a, equal_nan=True)
        assert np.array_equal(high[part], b, equal_nan=True)
        assert np.array_equal(bound[part], pass_hat_k_lower_bound(c[part], n[part], k[part]),
                              equal_nan=True)
    from scipy.stats import binomtest

    for i in range(5):
        if n[i] and method == "exact":
            ci = binomtest(int(c[i]), int(n[i])).proportion_ci(method="exact")
            assert low[i] == pytest.approx(ci.low ** k[i], abs=1e-12)
            assert high[i] == pytest.approx(ci.high ** k[i], abs=1e-12)


def test_flaky_reasons_are_the_lines_the_judge_wrote_one_by_one():
    """The gate's reasons for flaky tasks, made by one %-format of the column, equal the
    f-string of each task it replaced, on ids with %, braces, backslashes, spaces,
    invisible and look-alike characters, at caps that print with three decimals."""
    import random

    from passk.render.tables import show_id
    from passk.stability import _flaky_reasons, suite_report

    rng = random.Random(7)
    pieces = ["a", "%", "%s", "%%", "\\", "\n", " ", "\u200b", "é", "а", "{}", "x y", "\t"]
    for _ in range(200):
        ids = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 5))) + str(i)
               for i in range(rng.randint(1, 30))]
        counts = [rng.randint(0, 12) for _ in ids]
        report = suite_report(ids, counts, [12] * len(ids), k=3)
        cap = rng.choice([0.0, 0.2, 1 / 3, 0.5, 0.9995])
        tasks = [t for t in report.tasks if t.runs and t.flakiness > cap]
        assert _flaky_reasons(tasks, cap) == [
            f"task {show_id(t.task_id)}: flakiness {t.flakiness:.3f} exceeds the cap "
            f"{cap:.3f} ({t.successes}/{t.runs} passed)" for t in tasks]
