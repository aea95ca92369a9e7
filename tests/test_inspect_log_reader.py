"""passk's Inspect log reader without inspect_ai, and the messages of issue 24 (items 5-7).

Oracles: Inspect's own ``read_eval_log`` and ``value_to_float`` (with the
``inspect`` extra; every log the tests write is also checked by
``inspect_logs.agree_with_inspect``), a subprocess in which ``inspect_ai``
cannot be imported, and the counts of the runs each test writes.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from passk.cli.commands import main
from passk.results.formats import inspect_log
from passk.results.formats.inspect_log import SuccessRule, identity, is_success, read_log
from passk.results.read import ResultsError, read_results

ROOT = Path(__file__).resolve().parents[1]

#: Every kind of score value: letters, words, bools, numbers, numeric text, other.
VALUES = ["C", "I", "P", "N", "yes", "no", "Yes", "TRUE", "false", True, False, 1, 0, 1.0,
          0.0, "1", "0", "0.0", "1.0", 0.5, "0.5", 2, "8", "c", "", float("nan"), None, [1],
          {"a": 1}]


@pytest.fixture
def write_log():
    pytest.importorskip("inspect_ai", reason="the optional extra 'inspect' is not installed")
    from inspect_logs import write_log

    return write_log


# --------------------------------------------------------------------------
# one success rule
# --------------------------------------------------------------------------


def test_the_success_rule_is_inspects_value_to_float():
    """A value passes by default iff Inspect's value_to_float maps it to 1, fails iff to 0;
    a value it cannot map (it logs a warning and uses 0) is never judged silently."""
    pytest.importorskip("inspect_ai")
    import logging

    from inspect_ai.scorer import value_to_float

    to_float = value_to_float()
    rule = SuccessRule()
    for value in VALUES:
        records: list[logging.LogRecord] = []
        handler = logging.Handler()
        handler.emit = records.append  # type: ignore[method-assign]
        logger = logging.getLogger("inspect_ai.scorer._metric")
        logger.addHandler(handler)
        try:
            x = to_float(value)
        finally:
            logger.removeHandler(handler)
        expected = None if records or math.isnan(x) else {1.0: True, 0.0: False}.get(x)
        assert rule.judge(value) is expected, value


def test_the_reader_and_the_extension_share_the_rule():
    """passk.integrations.inspect (Curtailment, the reducer) judges with the reader's own function."""
    pytest.importorskip("inspect_ai")
    import passk.integrations.inspect

    assert passk.integrations.inspect.is_success is inspect_log.is_success
    for value in VALUES:
        for options in ({}, {"success_values": ["P", "8"]}, {"success_threshold": 0.5}):
            judged = SuccessRule(options.get("success_values"),
                                 options.get("success_threshold")).judge(value)
            if judged is None:
                with pytest.raises(ValueError, match=r"cannot judge|neither a success"):
                    passk.integrations.inspect.is_success(value, **options)
            else:
                assert passk.integrations.inspect.is_success(value, **options) is judged


def test_the_reader_counts_each_value_as_the_rule_says(write_log, tmp_path):
    judged = [v for v in VALUES if isinstance(v, (str, int, float)) and
              SuccessRule().judge(v) is not None]
    log = write_log(tmp_path / "values.json", {(i, 1): v for i, v in enumerate(judged)})
    r = read_results(log)
    assert r.successes.tolist() == [int(is_success(v)) for v in judged]
    for value in ("P", 0.5, "8"):
        log = write_log(tmp_path / "grade.eval", {(1, 1): value, (2, 1): "C"})
        with pytest.raises(ResultsError, match="gives values that are not pass/fail"):
            read_results(log)


# --------------------------------------------------------------------------
# no inspect_ai: the reader in a process that cannot import it
# --------------------------------------------------------------------------

CHILD = """
import json, sys
sys.modules["inspect_ai"] = None  # import inspect_ai now fails
sys.modules["zipfile_zstd"] = None  # nor may the zip module be patched by it
from passk.results.read import read_results
out = {}
for path in sys.argv[1:]:
    r = read_results(path)
    out[path] = [list(r.task_ids), r.successes.tolist(), r.totals.tolist(),
                 r.excluded.tolist(), list(r.incomplete)]
assert "inspect_ai" not in {m.split(".")[0] for m, v in sys.modules.items() if v is not None}
print(json.dumps(out))
"""


@pytest.mark.slow  # two fresh processes, about 2 s each
def test_logs_read_without_inspect_ai(write_log, tmp_path):
    """.eval (Zstandard members) and .json logs, read in a process without inspect_ai, give
    the counts Inspect's read_eval_log gives, and `passk report` runs there too."""
    from inspect_ai.log import read_eval_log

    values = {(1, 1): "C", (1, 2): "C", (2, 1): "I", (2, 2): "C", (3, 1): "I", (3, 2): "I"}
    paths = [write_log(tmp_path / f"log.{ext}", values, errored=[(4, 1)], epochs=2,
                       sample_ids=[1, 2, 3, 4]) for ext in ("eval", "json")]
    assert {i.compress_type for i in zipfile.ZipFile(paths[0]).infolist()} == {93}  # zstd
    proc = subprocess.run([sys.executable, "-c", CHILD, *map(str, paths)], check=False,
                          capture_output=True, text=True, cwd=tmp_path,
                          env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert proc.returncode == 0, proc.stderr
    read = json.loads(proc.stdout)
    for path in paths:
        log = read_eval_log(str(path))
        ids = sorted({str(s.id) for s in log.samples})
        # an errored epoch is a failure (Inspect does not tell whose error it was)
        expected = [ids, [sum(s.error is None and s.scores["match"].value == "C"
                              for s in log.samples if str(s.id) == i) for i in ids],
                    [sum(str(s.id) == i for s in log.samples) for i in ids],
                    [0 for i in ids]]
        assert read[str(path)][:4] == expected
        # sample 4 planned 2 epochs and ran one, in error
        assert read[str(path)][4] == [(
            "Inspect log holds fewer samples than planned, though its status is 'success': 7 "
            "of 8 sample epochs (4 dataset samples × 2 epochs) were scored (1 of them ended "
            "in an error, counted as failures)")]
    script = ("import sys; sys.modules['inspect_ai'] = None; from passk.cli import main; "
              "sys.exit(main(sys.argv[1:]))")
    report = subprocess.run([sys.executable, "-c", script, "report", str(paths[0]), "--k", "1",
                             "--accept-incomplete"], check=False, capture_output=True,
                            text=True, env={"PYTHONPATH": str(ROOT)})
    assert report.returncode in (0, 1) and "pass^1" in report.stdout, report.stderr


def test_an_unfinished_eval_log_is_read_from_its_journal(write_log, tmp_path):
    """A log Inspect is still writing has _journal/start.json and _journal/summaries/<n>.json,
    no header.json or summaries.json: both readers read it, as a 'started' log."""
    done = write_log(tmp_path / "done.eval", {(1, 1): "C", (2, 1): "I"}, sample_ids=[1, 2, 3])
    running = tmp_path / "running.eval"
    with zipfile.ZipFile(done) as src, zipfile.ZipFile(running, "w",
                                                       zipfile.ZIP_DEFLATED) as dst:
        for name in src.namelist():
            if name not in ("header.json", "summaries.json"):
                dst.writestr(name, src.read(name))
    from inspect_logs import agree_with_inspect

    agree_with_inspect(running)
    r = read_results(running)
    assert (r.successes.tolist(), r.totals.tolist()) == ([1, 0], [1, 1])
    assert r.incomplete == (("Inspect log status is 'started': 2 of 3 dataset samples × 1 "
                             "epoch were scored; 1 sample never ran (3)"),)


def test_a_json_log_is_read_one_sample_at_a_time(write_log, tmp_path, monkeypatch):
    """The .json scanner keeps each sample's scores, not its transcript: with samples of
    100 kB read in chunks of 64 kB, the peak of the Python heap is the same for a log of
    8 samples and one of 32 (memory follows the largest sample, not the log)."""
    import tracemalloc

    monkeypatch.setattr(inspect_log, "_CHUNK", 1 << 16)
    peaks, sizes = [], []
    for n in (8, 32):
        values = {(i, 1): "C" if i % 3 else "I" for i in range(1, n + 1)}
        log = write_log(tmp_path / f"log{n}.json", values, transcript="x" * 100_000)
        tracemalloc.start()
        try:
            header, samples = read_log(log)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        sizes.append(log.stat().st_size)
        assert len(samples) == n and "samples" not in header
    assert sizes[1] > 3.2e6 and peaks[1] < 1.3 * peaks[0] and peaks[1] < sizes[1] / 2, (
        sizes, peaks)


# --------------------------------------------------------------------------
# identity
# --------------------------------------------------------------------------


def test_identity_tells_evaluations_apart_and_runs_apart(write_log, tmp_path):
    from inspect_ai.log import read_eval_log

    a = write_log(tmp_path / "a.eval", {(1, 1): "C"})
    b = write_log(tmp_path / "b.eval", {(1, 1): "I"})
    other_task = write_log(tmp_path / "c.eval", {(1, 1): "C"}, task="retail")
    ia, ib, ic = (identity(read_log(p)[0]) for p in (a, b, other_task))
    assert ia["evaluation"] == ib["evaluation"] != ic["evaluation"]
    assert ia["run_ids"] != ib["run_ids"]
    assert ia["run_ids"][0] == read_eval_log(str(a), header_only=True).eval.eval_id
    header = read_log(a)[0]
    header["eval"]["model"] = "openai/gpt-4o"
    header["eval"]["task_args"] = {"b": 1, "a": [2]}
    moved = identity(header)["evaluation"]
    assert moved["model"] == "openai/gpt-4o" and moved["task_args"] == '{"a":[2],"b":1}'
    assert identity(header["eval"])["evaluation"]["model"] == "openai/gpt-4o"


# --------------------------------------------------------------------------
# item 6: Inspect logs read rightly, and said clearly
# --------------------------------------------------------------------------


def _old_json_log(write_log, path: Path, *, total: int, ran: int, status: str = "success"):
    """A JSON log as Inspect before sample_ids wrote it: the dataset's size, no selection,
    results.total_samples the samples it set out to run (× epochs)."""
    log = write_log(path, {(i, 1): "C" for i in range(1, ran + 1)}, status=status)
    payload = json.loads(log.read_text())
    del payload["eval"]["dataset"]["sample_ids"]
    payload["eval"]["dataset"]["samples"] = 100
    payload["results"] = {"total_samples": total, "completed_samples": ran, "scores": []}
    log.write_text(json.dumps(payload))
    return log


def test_an_old_log_run_with_limit_is_a_narrower_evaluation(write_log, tmp_path):
    # it ran what it set out to run (total_samples 1), but --limit 1 of a 100-sample dataset
    # is not the evaluation: incomplete, named as a selection
    r = read_results(_old_json_log(write_log, tmp_path / "limit.json", total=1, ran=1))
    assert r.incomplete == (("Inspect log ran a selection of 1 of its dataset's 100 samples "
                             "(--limit or --sample-id?): a narrower evaluation is not the "
                             "whole one"),)
    r = read_results(_old_json_log(write_log, tmp_path / "short.json", total=5, ran=2,
                                   status="cancelled"))
    assert r.incomplete[0] == ("Inspect log status is 'cancelled': 2 of 5 planned sample "
                               "epochs (the log's results.total_samples) were scored")
    assert "a selection of 5 of its dataset's 100 samples" in r.incomplete[1]


def _unscored_log(path: Path, scorers: list[str]) -> Path:
    """A log as `inspect eval --no-score` writes it: samples without scores."""
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalSample,
        EvalSpec,
        write_eval_log,
    )
    from inspect_ai.log._log import EvalScorer

    spec = EvalSpec(created="2025-01-01T00:00:00+00:00", task="t", model="mockllm/model",
                    dataset=EvalDataset(name="d", samples=2, sample_ids=[1, 2]),
                    config=EvalConfig(epochs=1),
                    scorers=[EvalScorer(name=n) for n in scorers] or None)
    samples = [EvalSample(id=i, epoch=1, input="q", target="a") for i in (1, 2)]
    write_eval_log(EvalLog(eval=spec, samples=samples, status="success"), str(path))
    from inspect_logs import agree_with_inspect

    agree_with_inspect(path)
    return path


def test_a_log_without_scores_says_how_to_score_it(write_log, tmp_path):
    # before: "sample '1' epoch 1 has no score from scorer None"
    for declared in ([], ["match"]):
        log = _unscored_log(tmp_path / "unscored.eval", declared)
        with pytest.raises(ResultsError, match=r"this log holds no scores \(was it written with "
                                               r"--no-score\?\); `inspect score .*unscored.eval` "
                                               "scores it"):
            read_results(log)
    # before: "no scorer 'match' in the log; it has none"
    with pytest.raises(ResultsError, match="scorer 'match' is declared in the log's header, but "
                                           "no sample holds a score from it: this log holds no "
                                           "scores"):
        read_results(log, scorer="match")


def test_a_declared_scorer_without_scores_is_named_so(write_log, tmp_path):
    log = write_log(tmp_path / "log.eval", {(1, 1): "C"})
    with zipfile.ZipFile(log) as z:
        header = json.loads(z.read("header.json"))
    header["eval"]["scorers"] = [{"name": "match"}, {"name": "judge"}]
    header_path = tmp_path / "declared.eval"
    with zipfile.ZipFile(log) as src, zipfile.ZipFile(header_path, "w") as dst:
        for name in src.namelist():
            dst.writestr(name, json.dumps(header) if name == "header.json" else src.read(name))
    with pytest.raises(ResultsError, match=r"scorer 'judge' is declared in the log's header, "
                                           r"but no sample holds a score from it \(the samples "
                                           r"are scored by match\)"):
        read_results(header_path, scorer="judge")
    with pytest.raises(ResultsError, match="no scorer 'nope' in the log; it has match"):
        read_results(header_path, scorer="nope")


def test_a_truncated_eval_log_says_so(write_log, tmp_path, capsys):
    # before: "not a readable Inspect AI log (ValueError: EOCD not found)"
    data = write_log(tmp_path / "log.eval", {(1, 1): "C", (2, 1): "I"}).read_bytes()
    cut = tmp_path / "cut.eval"
    cut.write_bytes(data[: len(data) - 40])
    assert main(["report", str(cut)]) == 2
    err = capsys.readouterr().err
    assert ("cut.eval: is not a complete Inspect .eval log (the zip's end is missing: was it "
            "copied while Inspect was still writing?)") in err


# --------------------------------------------------------------------------
# item 7: messages that say what the file is and what to do
# --------------------------------------------------------------------------

RUNS = ('{"task_id": "a", "trial": 0, "success": true}\n'
        '{"task_id": "a", "trial": 1, "success": false}\n')


def _error(path: Path, *args: str) -> str:
    with pytest.raises(ResultsError) as info:
        read_results(path, *args)
    return str(info.value)


@pytest.mark.parametrize("name, text", [("runs.jsonl", RUNS), ("runs.csv",
                                        "task_id,success\na,1\n"),
                                        ("tau.json", '[{"task_id": 1, "reward": 1.0}]')])
def test_a_utf16_file_is_named_utf16(tmp_path, name, text):
    # before: "not a text file (invalid start byte)"
    for encoding in ("utf-16", "utf-16-le"):  # with and without a byte-order mark
        path = tmp_path / name
        path.write_bytes(text.encode(encoding))
        assert _error(path).endswith(f"{name}: is UTF-16 text, and passk reads UTF-8: save it "
                                     f"as UTF-8, e.g. `iconv -f UTF-16 -t UTF-8 {name} > "
                                     f"{path.stem}-utf8{path.suffix}` (Windows PowerShell's `>` "
                                     "writes UTF-16; `Out-File -Encoding utf8` writes UTF-8)")


def test_a_byte_order_mark_is_read(tmp_path):
    # before (tau2): "not valid JSON at line 1 column 1 (Unexpected UTF-8 BOM ...); is the
    # file truncated?"; (CSV): "missing column(s) ['task_id'] in the header"
    fixture = ROOT / "tests" / "fixtures" / "tau2_small.json"
    bom = tmp_path / "results.json"
    bom.write_bytes(b"\xef\xbb\xbf" + fixture.read_bytes())
    plain, marked = read_results(fixture), read_results(bom)
    assert (marked.successes.tolist(), marked.totals.tolist()) == (plain.successes.tolist(),
                                                                   plain.totals.tolist())
    for name, text in (("runs.csv", "task_id,success\na,1\na,0\n"), ("runs.jsonl", RUNS)):
        path = tmp_path / name
        path.write_bytes(b"\xef\xbb\xbf" + text.encode())
        assert read_results(path).successes.tolist() == [1], name


def test_a_tau2_run_directory_names_the_files_it_did_not_read(tmp_path):
    # before: the tau2 numbers, exit 0, the other files not mentioned
    import shutil

    run = tmp_path / "run"
    shutil.copytree(ROOT / "tests" / "fixtures" / "tau2_dir", run)
    (run / "runs.jsonl").write_text(RUNS)
    (run / "other.eval").write_bytes(b"PK")
    (run / ".hidden").write_text("")
    r = read_results(run)
    assert r.notes[-1] == ("not read: other.eval, runs.jsonl in run/ (a tau2-bench run "
                           "directory is read as its results.json and simulations/; pass "
                           "another results file on its own to read it)")
    assert r.totals.tolist() == read_results(ROOT / "tests" / "fixtures" / "tau2_dir"
                                             ).totals.tolist()


def test_json_lines_saved_as_json_says_so(tmp_path):
    # before: "not valid JSON at line 2 column 1 (Extra data); is the file truncated?"
    path = tmp_path / "runs.json"
    path.write_text(RUNS)
    assert _error(path).endswith("runs.json: looks like JSON Lines (one JSON object a line), "
                                 "not one JSON document: rename it to .jsonl, or pass --format "
                                 "jsonl")
    assert read_results(path, "jsonl").successes.tolist() == [1]


def test_success_as_one_and_zero_in_json_lines_as_in_csv(tmp_path):
    # before: "field 'success' must be a boolean (true or false), got 1"
    rows = [("a", 0, 1), ("a", 1, 0), ("b", 0, 1)]
    jsonl, csv_path = tmp_path / "runs.jsonl", tmp_path / "runs.csv"
    jsonl.write_text("".join(json.dumps({"task_id": t, "trial": i, "success": s}) + "\n"
                             for t, i, s in rows))
    csv_path.write_text("task_id,trial,success\n" + "".join(f"{t},{i},{s}\n" for t, i, s in rows))
    for path in (jsonl, csv_path):
        r = read_results(path)
        assert (r.successes.tolist(), r.totals.tolist()) == ([1, 1], [2, 1]), path
    text = tmp_path / "text.jsonl"  # the words CSV takes, as JSON text, in any case
    text.write_text('{"task_id": "a", "success": "TRUE"}\n{"task_id": "a", "success": "0"}\n')
    assert read_results(text).successes.tolist() == [1]
    for bad in (2, 1.0, "yes"):
        path = tmp_path / "bad.jsonl"
        path.write_text(json.dumps({"task_id": "a", "success": bad}) + "\n")
        assert f"field 'success' must be true or false, or 1 or 0 (in JSON Lines also as " \
               f'text, "true" or "1"), got {bad!r}' in _error(path)


def test_a_misspelt_field_is_named(tmp_path):
    # before: "missing field 'success'" / "missing column(s) ['success'] in the header"
    path = tmp_path / "runs.jsonl"
    path.write_text('{"task_id": "a", "trial": 0, "sucess": true}\n')
    assert _error(path).endswith("runs.jsonl:1: unknown field 'sucess' (did you mean "
                                 "'success'?)")
    path = tmp_path / "runs.csv"
    path.write_text("taskid,success\na,1\n")
    assert _error(path).endswith("runs.csv:1: unknown column 'taskid' (did you mean "
                                 "'task_id'?)")
    path.write_text("task,success\na,1\n")  # nothing close: the missing column is named
    assert _error(path).endswith("missing column ['task_id'] in the header")


def test_a_json_log_is_detected_by_its_first_bytes(write_log, tmp_path, monkeypatch):
    """`passk report LOG.json` streams the log: the format is told from its first bytes, and
    the whole document is never loaded to detect it."""
    from passk.results import formats

    log = write_log(tmp_path / "log.json", {(1, 1): "C", (1, 2): "I"})

    def whole(*args, **kwargs):
        raise AssertionError("the whole log was loaded")

    monkeypatch.setattr(formats, "load_json", whole)
    assert formats.detect_format(log) == "inspect"
    r = read_results(log)
    assert (r.source, r.successes.tolist(), r.totals.tolist()) == ("inspect", [1], [2])


def test_without_a_zstandard_decoder_the_eval_log_says_what_to_install(write_log, tmp_path,
                                                                      monkeypatch):
    log = write_log(tmp_path / "log.eval", {(1, 1): "C"})
    for name in ("zstandard", "compression", "backports"):
        monkeypatch.setitem(sys.modules, name, None)  # no Zstandard decoder can be imported
    with pytest.raises(ResultsError, match=r"log.eval: header.json: is compressed with "
                                           r"Zstandard .* pip install zstandard"):
        read_results(log)
