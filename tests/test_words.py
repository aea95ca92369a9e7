"""Sentences whose wording depends on a count have a branch per outcome (issue 37).

The helper (``passk.render.words.plural``) against English as written, then each class of
message that counts something, through ``passk.cli.main`` for 0, 1 and many, in every format
where the message shows: no ``(s)``, no ``1 tasks``, no ``0 more runs to settle``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from passk.cli import main
from passk.errors import BadInput
from passk.render.words import plural
from passk.results.read import read_results

pytest_plugins = ["pytester"]

# --------------------------------------------------------------------------
# the helper, against plurals as a dictionary writes them (not as the rule makes them)
# --------------------------------------------------------------------------

ENGLISH = [  # singular, plural: regular, -es, -ies, -ys, irregular, phrases
    ("task", "tasks"), ("run", "runs"), ("record", "records"), ("repetition", "repetitions"),
    ("evidence source", "evidence sources"), ("sample epoch", "sample epochs"),
    ("marked test", "marked tests"), ("pass", "passes"), ("box", "boxes"), ("batch", "batches"),
    ("crash", "crashes"), ("policy", "policies"), ("dependency", "dependencies"), ("day", "days"),
    ("key", "keys"), ("criterion", "criteria"), ("analysis", "analyses"), ("epoch", "epochs"),
    ("more group", "more groups"), ("duplicate record", "duplicate records"),
    ("simulation", "simulations"), ("column", "columns"), ("option", "options"),
]


@pytest.mark.parametrize(("one", "many"), ENGLISH)
def test_plural_says_one_and_many_as_english_does(one, many):
    assert plural(1, one) == f"1 {one}"
    for n in (0, 2, 3, 12, 1000):
        assert plural(n, one) == f"{n} {many}"
    assert plural(0, one, zero="no") == f"no {many}"
    assert (plural(1, one, count=False), plural(5, one, count=False)) == (one, many)


VERBS = [  # singular predicate, plural predicate
    ("has", "have"), ("is", "are"), ("was", "were"), ("does", "do"), ("fails", "fail"),
    ("passes", "pass"), ("reaches", "reach"), ("fixes", "fix"), ("carries", "carry"),
    ("is left out", "are left out"), ("has no runs", "have no runs"), ("can change", "can change"),
]


@pytest.mark.parametrize(("one", "many"), VERBS)
def test_a_verb_agrees_with_the_count(one, many):
    assert plural(1, "task", verb=one) == f"1 task {one}"
    assert plural(2, "task", verb=one) == f"2 tasks {many}"
    assert plural(0, "task", verb=one, zero="no") == f"no tasks {many}"


def test_a_predicate_pair_and_an_explicit_plural():
    pred = ("counts as a failure", "count as failures")
    assert [plural(n, "trial", verb=pred) for n in (0, 1, 2)] == [
        "0 trials count as failures", "1 trial counts as a failure", "2 trials count as failures"]
    assert plural(2, "person", many="persons") == "2 persons"
    assert plural(1, "person", many="persons") == "1 person"


# --------------------------------------------------------------------------
# messages, through the command line
# --------------------------------------------------------------------------

def _jsonl(path: Path, rows: list[dict[str, object]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def _counts(path: Path, counts: dict[str, tuple[int, int]]) -> str:
    """``task: (passes, runs)``, the passes first."""
    return _jsonl(path, [{"task_id": t, "trial": j, "success": j < c}
                         for t, (c, n) in counts.items() for j in range(n)])


def _no_template_words(text: str) -> None:
    assert "(s)" not in text
    assert not re.search(r"\b1 (tasks|runs|records|columns|repetitions|more runs)\b", text), text


# the plan's closing sentence: none / the one / one of two / both / all three open.
# Open or not: a task already at --max-n runs can get no more runs (settled, by construction);
# one well short of it, near the bar, can (the JSON's own per-task flags are checked to agree).
PLANS = [
    ({"a": (10, 10), "b": (10, 10)}, 10, 0, ("None of the 2 tasks can change its verdict: more "
     "runs settle nothing.")),
    ({"a": (10, 10)}, 10, 0, "The task cannot change its verdict: more runs settle nothing."),
    ({"a": (1, 1)}, 20, 1, ("The task can still change its verdict; the suite needs at most "
     "{total} more {runs} to settle.")),
    ({"a": (20, 20), "b": (4, 5)}, 20, 1, ("1 of 2 tasks can still change its verdict; the suite "
     "needs at most {total} more {runs} to settle.")),
    ({"a": (5, 5), "b": (4, 5)}, 20, 2, ("Both tasks can still change their verdicts; the suite "
     "needs at most {total} more {runs} to settle.")),
    ({"a": (5, 5), "b": (4, 5), "c": (3, 4)}, 20, 3, ("All 3 tasks can still change their "
     "verdicts; the suite needs at most {total} more {runs} to settle.")),
]


@pytest.mark.parametrize(("counts", "max_n", "n_open", "sentence"), PLANS)
def test_plan_summary_has_a_branch_per_outcome(tmp_path, capsys, counts, max_n, n_open,
                                               sentence):
    path = _counts(tmp_path / "runs.jsonl", counts)
    args = ["plan", path, "--k", "1", "--max-n", str(max_n)]
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["open_tasks"] == n_open == sum(t["open"] for t in data["tasks"])
    for t in data["tasks"]:  # a task at --max-n runs can get no more
        if t["runs"] >= max_n:
            assert not t["open"] and t["extra_runs_at_most"] == 0
    total = data["total_extra_runs_at_most"]
    want = sentence.format(total=total, runs="run" if total == 1 else "runs")
    for fmt in ([], ["--markdown"]):
        assert main([*args, *fmt]) == 0
        out = capsys.readouterr().out
        assert out.rstrip().endswith(want), out
        _no_template_words(out)


@pytest.mark.parametrize(("extra", "said"), [(1, "1 duplicate record of"),
                                             (2, "2 duplicate records of"),
                                             (3, "3 duplicate records of")])
def test_duplicates_note_counts_its_records(tmp_path, capsys, extra, said):
    rows: list[dict[str, object]] = [{"task_id": t, "trial": j, "success": True}
                                     for t in "ab" for j in range(4)]
    path = _jsonl(tmp_path / "dup.jsonl", rows + rows[:extra])
    lines = ", ".join(f"line {9 + i}" for i in range(extra))
    for fmt in ([], ["--markdown"]):
        assert main(["report", path, "--duplicates", "first", *fmt]) == 0
        out = capsys.readouterr().out
        assert f"{said} a (task, trial) dropped, keeping the first of each " \
               f"(duplicates='first'): {lines}" in out
        _no_template_words(out)
    assert main(["report", path, "--duplicates", "first", "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any(n.startswith(said) for n in notes), notes


@pytest.mark.parametrize("runs", [1, 2, 3])
def test_min_runs_reason_says_run_or_runs(tmp_path, capsys, runs):
    path = _counts(tmp_path / "r.jsonl", {"short": (runs, runs), "full": (6, 6)})
    said = f"task short: {runs} {'run' if runs == 1 else 'runs'}, fewer than the minimum 4"
    assert main(["gate", path, "--k", "1", "--min-runs", "4"]) == 1
    out = capsys.readouterr().out
    assert said in out
    _no_template_words(out)
    assert main(["gate", path, "--k", "1", "--min-runs", "4", "--json"]) == 1
    assert said in json.loads(capsys.readouterr().out)["gate"]["reasons"]
    assert main(["gate", path, "--k", "1", "--min-runs", "4", "--markdown"]) == 1
    assert said in capsys.readouterr().out


@pytest.mark.parametrize(("header", "said"), [
    ("task,trial,success", "missing column ['task_id'] in the header"),
    ("task_id,trial,ok", "missing column ['success'] in the header"),
    ("task,trial,ok", "missing columns ['success', 'task_id'] in the header"),
])
def test_csv_missing_columns_error_is_one_line_in_the_right_number(tmp_path, capsys, header,
                                                                    said):
    path = tmp_path / "runs.csv"
    path.write_text(f"{header}\nx,0,true\n")
    for cmd in ("report", "gate"):
        assert main([cmd, str(path)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.endswith(f"{path.name}:1: {said}") and "\n" not in err, err


@pytest.mark.parametrize(("short", "said"), [(1, "1 task with fewer than 3 runs left out"),
                                             (2, "2 tasks with fewer than 3 runs left out")])
def test_report_curve_counts_the_tasks_left_out(tmp_path, capsys, short, said):
    counts = {f"s{i}": (1, 1) for i in range(short)} | {"a": (5, 5), "b": (4, 6)}
    path = _counts(tmp_path / "r.jsonl", counts)
    for fmt in ([], ["--markdown"]):
        assert main(["report", path, "--k", "3", *fmt]) == 0
        out = capsys.readouterr().out
        assert said in out and "suite of 2 tasks, the same for every k" in out
        _no_template_words(out)


@pytest.mark.parametrize("regressed", [1, 2])
def test_diff_counts_what_regressed_and_changed_class(tmp_path, capsys, regressed):
    old = dict.fromkeys(("a", "b", "c"), (20, 20))
    new = {t: ((0, 20) if i < regressed else (20, 20)) for i, t in enumerate(("a", "b", "c"))}
    args = ["diff", _counts(tmp_path / "old.jsonl", old), _counts(tmp_path / "new.jsonl", new)]
    tasks = "1 task" if regressed == 1 else f"{regressed} tasks"
    names = ", ".join("abc"[:regressed])
    for fmt in ([], ["--markdown"]):
        main([*args, *fmt])
        out = capsys.readouterr().out
        assert f"REGRESSED: {tasks} got worse beyond repeat noise ({names})" in out
        assert f"{tasks} changed class:" in out
        assert "correction across 3 tasks" in out
        assert "over 3 paired tasks (none left out: each has 20 runs or more in both)" in out
        _no_template_words(out)


@pytest.mark.parametrize(("short", "said"), [
    (0, "over 2 paired tasks (none left out: each has 4 runs or more in both)"),
    (1, "over 2 paired tasks (1 left out: fewer than 4 runs in a version)"),
    (2, "over 2 paired tasks (2 left out: fewer than 4 runs in a version)"),
])
def test_diff_says_how_many_tasks_were_left_out(tmp_path, capsys, short, said):
    counts = {"a": (6, 6), "b": (5, 6)} | {f"s{i}": (2, 2) for i in range(short)}
    args = ["diff", _counts(tmp_path / "old.jsonl", counts),
            _counts(tmp_path / "new.jsonl", counts), "--k", "4"]
    for fmt in ([], ["--markdown"]):
        main([*args, *fmt])
        out = capsys.readouterr().out
        assert said in out, out
        _no_template_words(out)


@pytest.mark.parametrize(("options", "said"), [
    ({"colour": 1}, "unknown reader option 'colour';"),
    ({"colour": 1, "size": 2}, "unknown reader options 'colour', 'size';"),
])
def test_unknown_reader_options_are_named_in_the_right_number(tmp_path, options, said):
    path = _counts(tmp_path / "r.jsonl", {"a": (1, 1)})
    with pytest.raises(BadInput, match=re.escape(said)):
        read_results(path, **options)


def _suite(tests: int, runs: int) -> str:
    return "import pytest\n" + "".join(f"\n@pytest.mark.passk({runs})\ndef test_{i}():\n"
                                       "    assert True\n" for i in range(tests))


@pytest.mark.parametrize(("tests", "runs", "said"), [
    (1, 1, "1 marked test, 1 repetition; suite seed"),
    (1, 3, "1 marked test, 3 repetitions; suite seed"),
    (2, 2, "2 marked tests, 4 repetitions; suite seed"),
])
def test_pytest_summary_counts_marked_tests_and_repetitions(pytester, tests, runs, said):
    pytester.makepyfile(test_suite=_suite(tests, runs))
    result = pytester.runpytest("-p", "no:hypothesispytest")  # the plugin loads as installed
    out = result.stdout.str()
    assert result.ret in (0, 10), out  # 10: the gate blocked (k = 5 by default)
    assert said in out, out
    _no_template_words(out)
