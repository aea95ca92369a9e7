"""The generic readers (JSON Lines, CSV): the bulk path agrees with the line-by-line one."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from passk.results.formats.jsonl_csv import _fast_jsonl, _jsonl_located
from passk.results.protocol import Protocol
from passk.results.read import (
    ResultsError,
    Run,
    read_jsonl_runs,
    read_log_header,
    read_results,
    read_run_log,
    results_from_runs,
    tally_runs,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def write_lines(tmp_path: Path, lines: list[str], name: str = "runs.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def same(a, b) -> None:
    assert a.task_ids == b.task_ids and a.risks == b.risks
    for field in ("successes", "totals", "excluded"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


def test_bulk_path_matches_line_by_line(tmp_path):
    rng = np.random.default_rng(1)
    lines = []
    for t in range(40):
        for j in range(int(rng.integers(1, 8))):
            rec = {"task_id": t if t % 3 == 0 else f"t{t}", "trial": j,
                   "success": bool(rng.random() < 0.7)}
            if t % 5 == 0:  # one tier a task: two tiers for one task are refused
                rec["risk"] = "high-risk-write" if t % 10 == 0 else "read-only"
            if t % 7 == 0 and j == 0:
                rec["infrastructure_error"] = True
            if t % 11 == 0 and j == 2:
                rec["cached"] = True
            lines.append(json.dumps(rec))
    lines.insert(5, "")  # blank lines are skipped
    path = write_lines(tmp_path, lines)
    fast = _fast_jsonl(path)
    assert fast is not None
    same(fast, results_from_runs(read_jsonl_runs(path)))
    same(read_results(path), fast)


@pytest.mark.parametrize("lines, message", [
    (['{"task_id": "a", "success": true}', '{"task_id": "a", "success": tr'],
     "runs.jsonl:2: not valid JSON"),
    (['{"task_id": "a", "success": "yes"}'],
     "runs.jsonl:1: field 'success' must be true or false, or 1 or 0"),
    (['{"task_id": "a", "success": true}', '{"success": true}'],
     "runs.jsonl:2: missing field 'task_id'"),
    (['{"task_id": "a", "success": 2}'], "field 'success' must be true or false, or 1 or 0"),
    (['{"task_id": "a", "success": true, "trial": 1.5}'], "field 'trial' must be a whole number"),
    (['{"task_id": ["a"], "success": true}'], "field 'task_id' must be a string"),
    (["[1, 2]"], "expected a JSON object, got list"),
    (['{"task_id": "a", "success": true, "trial": 0}',
      '{"task_id": "b", "success": true, "trial": 0}',
      '{"task_id": "a", "success": false, "trial": 0}'],
     "runs.jsonl:3: duplicate run: task 'a' trial 0 already appears on line 1"),
])
def test_jsonl_bad_input(tmp_path, lines, message):
    with pytest.raises(ResultsError) as err:
        read_results(write_lines(tmp_path, lines))
    assert message in str(err.value)


def test_jsonl_truncated_last_line(tmp_path):
    path = tmp_path / "runs.jsonl"
    path.write_text('{"task_id": "a", "success": true}\n{"task_id": "a", "succ')
    with pytest.raises(ResultsError, match=r"runs\.jsonl:2: not valid JSON"):
        read_results(path)


def test_empty_file(tmp_path):
    path = tmp_path / "runs.jsonl"
    path.write_text("\n\n")
    with pytest.raises(ResultsError, match=r"no runs found \(only blank lines\)"):
        read_results(path)
    path.write_text('{"protocol": {"settings": {}, "fingerprint": "44136fa355b3678a"}}\n')
    with pytest.raises(ResultsError, match=r"no runs found \(only a protocol header\)"):
        read_results(path)


@pytest.mark.parametrize("rows, message", [
    (["task_id,success,trial", "a,true,0", "a,maybe,1"], "runs.csv:3: field 'success' must be"),
    (["task_id,success,trial", ",true,0"], "runs.csv:2: missing field 'task_id'"),
    (["task_id,success,trial", "a,true,x"], "runs.csv:2: field 'trial' must be a whole number"),
    (["task,success", "a,true"], "runs.csv:1: missing column ['task_id']"),
    (["task_id,success,trial", "a,true,0", "a,false,0"],
     "runs.csv:3: duplicate run: task 'a' trial 0 already appears on line 2"),
])
def test_csv_bad_input(tmp_path, rows, message):
    with pytest.raises(ResultsError) as err:
        read_results(write_lines(tmp_path, rows, "runs.csv"))
    assert message in str(err.value)


def test_csv_counts(tmp_path):
    path = write_lines(tmp_path, ["task_id,success,trial,risk,infrastructure_error",
                                  "a,true,0,high-risk-write,", "a,0,1,,", "a,1,2,,true"],
                       "runs.csv")
    r = read_results(path)
    assert (r.source, r.successes.tolist(), r.totals.tolist(), r.excluded.tolist(), r.risks) \
        == ("csv", [1], [2], [1], ("high-risk-write",))


def test_missing_file_and_binary(tmp_path):
    with pytest.raises(ResultsError, match="no such file or directory"):
        read_results(tmp_path / "nope.jsonl")
    path = tmp_path / "bin.jsonl"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ResultsError, match="not a text file"):
        read_results(path)


def test_record_location_format():
    assert str(ResultsError("f.json", "record 17", "bad")) == "f.json: record 17: bad"
    assert str(ResultsError("f.jsonl", 17, "bad")) == "f.jsonl:17: bad"


def test_write_runs_round_trips_through_the_reader(tmp_path):
    from passk import InfrastructureError, OnCallSimulator, demo_tasks, evaluate_suite
    from passk.results.read import write_runs

    class Flaky:
        def run(self, task, *, seed):
            if seed % 3 == 0:
                raise InfrastructureError("sandbox died")
            return OnCallSimulator().run(task, seed=seed)

    report = evaluate_suite(Flaky(), demo_tasks(), seed=3)
    path = tmp_path / "runs.jsonl"
    assert write_runs(path, report.runs, protocol=report.protocol, seed=3) == 22
    back = read_results(path)  # every record's seed checked against the header's, retries too
    assert back.task_ids == tuple(t.task_id for t in report.tasks)
    assert back.successes.tolist() == [t.successes for t in report.tasks]
    assert back.totals.tolist() == [t.runs for t in report.tasks]
    assert 0 < back.excluded.sum() == 22 - sum(t.runs for t in report.tasks)
    assert back.risks == ("high-risk-write", "read-only", "read-only")


# --------------------------------------------------------------------------
# duplicates: one rule in every reader
# --------------------------------------------------------------------------

RUNS = [("a", 0, True), ("b", 0, True), ("a", 1, False), ("a", 0, False), ("b", 0, False),
        ("b", 1, True)]  # lines 4 and 5 repeat (a, 0) and (b, 0) with the other outcome


def jsonl_rows(runs=RUNS) -> list[str]:
    return [json.dumps({"task_id": t, "trial": j, "success": s}) for t, j, s in runs]


def csv_rows(runs=RUNS) -> list[str]:
    return ["task_id,trial,success"] + [f"{t},{j},{str(s).lower()}" for t, j, s in runs]


def by_hand(keep: str) -> dict[str, list[int]]:
    """The counts when one record of each (task, trial) is kept, counted here independently."""
    chosen: dict[tuple[str, int], bool] = {}
    for t, j, s in RUNS:
        if keep == "last" or (t, j) not in chosen:
            chosen[(t, j)] = s
    tasks = list(dict.fromkeys(t for t, _, _ in RUNS))
    return {"successes": [sum(s for (t, _), s in chosen.items() if t == u) for u in tasks],
            "totals": [sum(1 for (t, _) in chosen if t == u) for u in tasks]}


@pytest.mark.parametrize("name, rows, first_line", [("runs.jsonl", jsonl_rows, 1),
                                                    ("runs.csv", csv_rows, 2)])
def test_duplicates_error_first_last(tmp_path, name, rows, first_line):
    path = write_lines(tmp_path, rows(), name)
    with pytest.raises(ResultsError) as err:
        read_results(path)
    # the refusal names both records and the way out
    assert (f"{name}:{first_line + 3}: duplicate run: task 'a' trial 0 already appears on "
            f"line {first_line}") in str(err.value)
    assert "--duplicates" in str(err.value)
    for keep in ("first", "last"):
        r = read_results(path, duplicates=keep)
        assert {"successes": r.successes.tolist(), "totals": r.totals.tolist()} == by_hand(keep)
        dropped = ([first_line + 3, first_line + 4] if keep == "first"
                   else [first_line, first_line + 1])
        assert r.notes == ((f"2 duplicate records of a (task, trial) dropped, keeping the {keep} "
                           f"of each (duplicates={keep!r}): line {dropped[0]}, line {dropped[1]}"),)
    assert by_hand("first") == {"successes": [1, 2], "totals": [2, 2]}
    assert by_hand("last") == {"successes": [0, 1], "totals": [2, 2]}


def test_duplicates_option_is_checked(tmp_path):
    path = write_lines(tmp_path, jsonl_rows())
    with pytest.raises(ValueError, match=r"duplicates \('newest'\) must be one of error, first, "
                                         r"last"):
        read_results(path, duplicates="newest")
    with pytest.raises(ValueError, match="unknown reader option"):
        read_results(path, scorrer="match")


def test_retried_infrastructure_errors_are_not_duplicates(tmp_path):
    # passk run logs every attempt: an infrastructure error, then the retry of the same trial
    path = write_lines(tmp_path, [
        '{"task_id": "a", "trial": 0, "success": false, "infrastructure_error": true}',
        '{"task_id": "a", "trial": 0, "success": true}',
        '{"task_id": "a", "trial": 1, "success": true, "cached": true}',
        '{"task_id": "a", "trial": 1, "success": true}'])
    r = read_results(path)
    assert (r.successes.tolist(), r.totals.tolist(), r.excluded.tolist()) == ([2], [2], [2])
    assert r.excluded_reason == "infrastructure errors or cached results"


def test_results_from_runs_refuses_a_repeated_trial():
    with pytest.raises(ResultsError, match=r"<runs>: run 2: duplicate run: task 'a' trial 0 "
                                           r"already appears at run 0"):
        results_from_runs([Run("a", True, 0), Run("a", True, 1), Run("a", False, 0)])
    r = results_from_runs([Run("a", True, 0), Run("a", True, 1), Run("a", False, 0)],
                          duplicates="last")
    assert (r.successes.tolist(), r.totals.tolist()) == ([1], [2])


# --------------------------------------------------------------------------
# why runs were left out
# --------------------------------------------------------------------------


@pytest.mark.parametrize("flags, reason", [
    ({}, ""),
    ({"infrastructure_error": True}, "infrastructure errors"),
    ({"cached": True}, "cached results"),
])
def test_excluded_reason_names_what_was_left_out(tmp_path, flags, reason):
    lines = ['{"task_id": "a", "trial": 0, "success": true}',
             json.dumps({"task_id": "a", "trial": 1, "success": False, **flags})]
    fast = read_results(write_lines(tmp_path, lines))
    assert fast.excluded_reason == reason
    assert fast.excluded.tolist() == [1 if flags else 0]
    # the line-by-line path (taken for a file the bulk path declines) says the same
    slow = read_results(write_lines(tmp_path, [*lines, "", '{"task_id": "b", "success": true}',
                                               '{"task_id": "c", "success": true}'],
                                    "slow.jsonl"))
    assert slow.excluded_reason == reason
    csv_path = write_lines(tmp_path, ["task_id,trial,success,infrastructure_error,cached",
                                      "a,0,true,,", "a,1,false," +
                                      ("true," if "infrastructure_error" in flags else ",") +
                                      ("true" if "cached" in flags else "")], "runs.csv")
    assert read_results(csv_path).excluded_reason == reason


def test_bulk_and_line_by_line_agree_on_every_field(tmp_path):
    lines = [json.dumps({"protocol": Protocol({"k": 1}).to_dict()}),
             '{"task_id": "a", "trial": 0, "success": true, "infrastructure_error": true}',
             '{"task_id": "a", "trial": 0, "success": false}',
             '{"task_id": "b", "trial": 0, "success": true, "cached": true}']
    path = write_lines(tmp_path, lines)
    fast = _fast_jsonl(path)
    protocol, located = _jsonl_located(path)
    slow = tally_runs(located, path=path, protocol=protocol)
    same(fast, slow)
    assert fast.excluded_reason == slow.excluded_reason == \
        "infrastructure errors or cached results"
    assert fast.protocol == slow.protocol and fast.protocol is not None
    assert fast.notes == slow.notes == () and fast.incomplete == slow.incomplete == ()


# --------------------------------------------------------------------------
# messages that name what is wrong
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name, content", [
    ("runs.jsonl", ""), ("runs.csv", ""), ("tau.json", ""), ("log.eval", ""), ("noext", ""),
    ("tau.json", "  \n\n"),  # white space only, in a JSON file, is empty too
])
def test_empty_file_is_named_empty(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(ResultsError, match=rf"{name.replace('.', '[.]')}: is empty$"):
        read_results(path)


@pytest.mark.parametrize("fmt", ["auto", "jsonl", "csv", "tau-bench", "inspect", "tau2"])
def test_a_directory_is_a_directory_not_a_missing_file(tmp_path, fmt):
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "runs.jsonl").write_text('{"task_id": "a", "success": true}\n')
    with pytest.raises(ResultsError) as err:
        read_results(tmp_path / "logs", fmt)
    assert "is a directory, not a" in str(err.value) and "no such file" not in str(err.value)


def test_missing_path(tmp_path):
    with pytest.raises(ResultsError, match=r"nope.json: no such file or directory"):
        read_results(tmp_path / "nope.json")


@pytest.mark.parametrize("fixture, fmt", [("stable.jsonl", "JSON Lines"),
                                          ("tau_bench_small.json", "tau-bench"),
                                          ("tau2_small.json", "tau2-bench")])
@pytest.mark.parametrize("option, flag", [({"scorer": "match"}, "--scorer (scorer=)"),
                                          ({"success_values": ["1"]},
                                           "--success-value (success_values=)")])
def test_an_option_that_does_not_apply_is_an_error(fixture, fmt, option, flag):
    with pytest.raises(ResultsError) as err:
        read_results(FIXTURES / fixture, **option)
    assert str(err.value).endswith(f"{fixture}: {flag} does not apply to a {fmt} file; it is "
                                   "for Inspect AI logs")
    assert read_results(FIXTURES / fixture, scorer=None, success_values=None).source  # unset: ok


def test_cli_messages_exit_2(tmp_path, capsys):
    from passk.cli import main

    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "folder").mkdir()
    cases = [
        (["report", str(tmp_path / "empty.jsonl")], "empty.jsonl: is empty"),
        (["gate", str(tmp_path / "folder")], "folder: is a directory, not a results file"),
        (["report", str(FIXTURES / "tau_bench_small.json"), "--scorer", "match"],
         "--scorer (scorer=) does not apply to a tau-bench file"),
        (["gate", str(FIXTURES / "stable.jsonl"), "--success-value", "1"],
         "--success-value (success_values=) does not apply to a JSON Lines file"),
    ]
    for argv, message in cases:
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[-1], (argv, err)


def test_cli_input_options_exist_on_every_reading_command():
    from passk.cli import build_parser

    parser = build_parser()
    f = str(FIXTURES / "stable.jsonl")
    for argv in (["report", f], ["gate", f], ["plan", f], ["diff", f, f]):
        args = parser.parse_args(argv)
        assert args.duplicates == "error" and args.accept_incomplete is False
        args = parser.parse_args([*argv, "--duplicates", "last", "--accept-incomplete"])
        assert args.duplicates == "last" and args.accept_incomplete is True
    with pytest.raises(SystemExit):
        parser.parse_args(["report", f, "--duplicates", "newest"])


# --------------------------------------------------------------------------
# the run log: one parser; write_runs keeps the protocol
# --------------------------------------------------------------------------


def test_read_run_log_header_records_and_torn_tail(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text('\n{"protocol": {"settings": {"k": 2}}, "seed": 4}\n{"task_id": "a"}\n\n'
                    '{"task_id": "b"}\n{"task_')
    log = read_run_log(path, torn_tail=True)
    assert log.header == {"protocol": {"settings": {"k": 2}}, "seed": 4}
    assert log.records == [(3, {"task_id": "a"}), (5, {"task_id": "b"})] and log.torn
    with pytest.raises(ResultsError, match=r"log\.jsonl:6: not valid JSON"):
        read_run_log(path)
    read_run_log(path, torn_tail=True, repair=True)
    assert path.read_text().endswith('{"task_id": "b"}\n')
    assert read_log_header(path) == {"protocol": {"settings": {"k": 2}}, "seed": 4}
    path.write_text('{"task_id": "a"}\n{"protocol": {"settings": {}}}\n')
    with pytest.raises(ResultsError, match=r"log\.jsonl:2: a protocol record must come first"):
        read_run_log(path)
    assert read_log_header(path) is None and read_log_header(tmp_path / "none") is None


def test_runner_reads_logs_through_io():
    from passk.run import runner

    assert runner.read_log_header is read_log_header


def test_write_runs_header_is_passk_runs_header(tmp_path):
    from passk import OnCallSimulator, demo_tasks, evaluate_suite
    from passk.results.read import log_header_line, write_runs
    from passk.run.runner import run_suite

    log = tmp_path / "run.jsonl"
    run = run_suite(OnCallSimulator(), demo_tasks(), seed=3, log=log, progress=False)
    header = log.read_text().splitlines()[0]
    assert log_header_line(run.protocol, seed=3) == header  # byte for byte
    report = evaluate_suite(OnCallSimulator(), demo_tasks(), seed=3)
    path = tmp_path / "runs.jsonl"
    assert write_runs(path, report.runs, protocol=report.protocol, seed=3) == 22
    first = path.read_text().splitlines()[0]
    assert json.loads(first) == {"protocol": report.protocol.to_dict(), "seed": 3}
    assert first == log_header_line(report.protocol, seed=3)
    back = read_results(path)
    assert back.protocol == report.protocol and back.incomplete == ()
    assert back.successes.tolist() == [t.successes for t in report.tasks]
    headless = tmp_path / "headless.jsonl"  # the header line deleted: refused, not defaults
    headless.write_text("\n".join(path.read_text().splitlines()[1:]) + "\n")
    with pytest.raises(ResultsError, match=r"headless.jsonl:1: a passk run record \(it has a "
                       r"'seed'\) but the log has no protocol header line"):
        read_results(headless)
    plain = tmp_path / "plain.jsonl"  # without a protocol: the header lists the tasks
    write_runs(plain, report.runs)
    back = read_results(plain)
    assert back.protocol is not None and back.protocol.settings == {
        "tasks": sorted(t.task_id for t in report.tasks)}
    assert back.successes.tolist() == [t.successes for t in report.tasks]


def test_a_log_short_of_its_protocol_is_incomplete(tmp_path):
    from passk import OnCallSimulator, demo_tasks, evaluate_suite
    from passk.results.read import write_runs

    report = evaluate_suite(OnCallSimulator(), demo_tasks(), seed=3)
    path = tmp_path / "runs.jsonl"
    write_runs(path, report.runs, protocol=report.protocol)
    lines = path.read_text().splitlines()
    # an interrupted run: the last task's runs never happened, and the first lost 4 of its 12
    tasks = [json.loads(x)["task_id"] for x in lines[1:]]
    last, first = tasks[-1], tasks[0]
    kept = [lines[0]] + [x for i, x in enumerate(lines[1:])
                         if tasks[i] != last and not (tasks[i] == first and
                                                      tasks[:i + 1].count(first) > 8)]
    short = tmp_path / "short.jsonl"
    short.write_text("\n".join(kept) + "\n")
    planned = {t.task.task_id: len(t.results) for t in report.runs}
    assert planned[first] == 12
    r = read_results(short)
    assert r.incomplete == (
        ("the log is short of its protocol's fixed plan (an interrupted passk run? --resume "
        f"finishes it): 1 of its 3 tasks has no runs ({last}); 1 task has fewer runs "
        f"than planned ({first}: 8 of 12)"),)
    assert r.incomplete[0] in r.notes
    # the line-by-line path says the same
    with_blank = tmp_path / "blank.jsonl"
    with_blank.write_text("\n".join([*kept[:1], "", *kept[1:]]) + "\n\n")
    assert read_results(with_blank).incomplete == r.incomplete
