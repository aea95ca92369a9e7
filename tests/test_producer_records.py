"""The producers' own records of a narrower, retried, cached or copied evaluation are read,
and fail closed (issue 36, class 4).

Each class is attacked through ``passk gate`` (``passk.cli.commands.main``: the exit code
and the reason, in text, ``--json`` and ``--markdown``) and through ``passk.read_results``:

- promptfoo: files written by promptfoo 0.123.1 itself
  (``tests/fixtures/promptfoo/records/make_records.sh``): ``--filter-first-n``,
  ``--filter-pattern``, ``--filter-failing``, ``--filter-providers``, ``--filter-prompts``
  (promptfoo writes the whole ``config`` and rows for a part of it), rows answered from its
  cache (``response.cached``), and ``promptfoo import --new-id`` (a copy under a new evalId);
- lm-evaluation-harness: its own output (``tests/fixtures/lm_eval/seed1``, written by
  lm-eval 0.4.13) edited as lm-eval writes a ``--limit`` run: ``n-samples`` ``{original,
  effective}`` and ``config.limit`` (``lm_eval/evaluator.py``, ``simple_evaluate`` and
  ``evaluate``: https://github.com/EleutherAI/lm-evaluation-harness/blob/main/lm_eval/evaluator.py;
  ``get_sample_size`` in ``lm_eval/evaluator_utils.py``: a limit below 1 is a fraction,
  ``ceil(len(eval_docs) * limit)``);
- Inspect AI: real evals run offline with ``retry_on_error`` (a solver that fails a
  sample's first attempt), and logs written with ``inspect_ai.log.write_eval_log``
  (``task_version``, a copy under a new ``eval_id`` that keeps each sample's ``uuid``).
"""

from __future__ import annotations

import json
import math
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import passk
from passk.cli.commands import main
from passk.results import ResultsError

ROOT = Path(__file__).resolve().parent
RECORDS = ROOT / "fixtures" / "promptfoo" / "records"
SEED1 = next((ROOT / "fixtures" / "lm_eval" / "seed1").glob("*/samples_*.jsonl"))

#: Criteria that any outcome meets, so that the one reason left is the record's.
LOOSE = ["--k", "2", "--min-overall", "0", "--max-flakiness", "1"]
LOOSE_K1 = ["--k", "1", "--min-overall", "0", "--max-flakiness", "1"]


def gate(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main(["gate", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def blocked_by(capsys: pytest.CaptureFixture[str], files: list[Path], words: list[str],
               loose: list[str] = LOOSE) -> None:
    """Blocked (exit 1) for the record's reason alone, in text, --json and --markdown, and
    passed (exit 0) with --accept-incomplete, which the verdict then names."""
    code, out, _ = gate(capsys, *files, *loose)
    assert code == 1, out
    reasons = [line for line in out.splitlines() if "incomplete results:" in line]
    assert reasons and all(w in " ".join(reasons) for w in words), (words, out)
    code, out, _ = gate(capsys, *files, *loose, "--json")
    assert code == 1
    verdict = json.loads(out)["gate"]
    assert verdict["passed"] is False
    assert all(any(w in r for r in verdict["reasons"]) for w in words), verdict["reasons"]
    assert all(r.startswith("incomplete results:") for r in verdict["reasons"])
    code, out, _ = gate(capsys, *files, *loose, "--markdown")
    assert code == 1 and all(w in out for w in words)
    code, out, _ = gate(capsys, *files, *loose, "--accept-incomplete")
    assert code == 0, out
    assert "--accept-incomplete" in out


def refused(capsys: pytest.CaptureFixture[str], files: list[Path], words: list[str],
            *extra: str) -> None:
    """Refused: exit 2 with one line naming the file and the reason, with or without --json;
    and the same refusal from passk.read_results."""
    for fmt in ([], ["--json"]):
        code, out, err = gate(capsys, *files, *extra, *fmt)
        assert code == 2 and out == "", (out, err)
        line = err.strip().splitlines()[-1]
        assert str(files[-1]) in line and all(w in line for w in words), line
    with pytest.raises(ResultsError) as caught:
        passk.read_results(files)
    assert all(w in str(caught.value) for w in words)


# --------------------------------------------------------------------------
# promptfoo: a filtered eval, cached rows, a copy under a new evalId
# --------------------------------------------------------------------------


def _rows(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(path.read_text())["results"]["results"]
    return rows


def _tests_run(path: Path) -> tuple[int, int]:
    """(tests the config lists, tests with a row), counted here from promptfoo's JSON: a
    test ran when a row's testCase has its description and vars (these configs' vars are
    single values, or one list that promptfoo expands)."""
    data = json.loads(path.read_text())
    cases = [row["testCase"] for row in data["results"]["results"]]

    def ran(test: dict[str, Any]) -> bool:
        return any(case.get("description") == test.get("description") and all(
            case["vars"].get(k) == v or (isinstance(v, list) and case["vars"].get(k) in v)
            for k, v in test["vars"].items()) for case in cases)

    tests = data["config"]["tests"]
    return len(tests), sum(map(ran, tests))


@pytest.mark.parametrize("name, missing", [
    ("first2.json", ['#3 {"q":"c"}', "#4 error once"]),  # --filter-first-n 2
    ("pattern.json", ['#3 {"q":"c"}', "#4 error once"]),  # --filter-pattern 'flaky|always'
    ("failing.json", ["#1 always"]),  # --filter-failing full2.json
    ("csv_first2.json", ["#3 Row #3"]),  # tests from a CSV file, --filter-first-n 2
    ("expand_first1.json", ['#2 {"q":"d"}']),  # a var list expands; --filter-first-n 1
])
def test_a_filtered_promptfoo_eval_is_incomplete(capsys, name: str, missing: list[str]) -> None:
    path = RECORDS / name
    listed, ran = _tests_run(path)
    assert ran < listed  # promptfoo's config lists every test, its rows a part
    said = f"promptfoo eval ran {ran} of the {listed} tests its config lists"
    r = passk.read_results(path)
    assert len(r.incomplete) == 1 and r.incomplete[0].startswith(said)
    assert all(m in r.incomplete[0] for m in missing)
    assert r.totals.sum() == len(_rows(path))  # the rows that ran are still counted
    blocked_by(capsys, [path], [said, *missing, "rerun without the filter"])


@pytest.mark.parametrize("name, words", [
    ("fprov.json", ["no row from 1 provider", "(steady)", "--filter-providers"]),
    ("fprompt.json", ["no row from 1 prompt", "(Answer: {{q}})", "--filter-prompts"]),
])
def test_a_promptfoo_eval_filtered_to_some_providers_or_prompts_is_incomplete(
        capsys, name: str, words: list[str]) -> None:
    path = RECORDS / name
    config = json.loads(path.read_text())["config"]
    assert len(config["providers"]) == len(config["prompts"]) == 2  # the whole config
    r = passk.read_results(path)
    assert len(r.incomplete) == 1 and all(w in r.incomplete[0] for w in words)
    blocked_by(capsys, [path], words)


@pytest.mark.parametrize("name", ["cache_warm.json", "cache_mixed.json"])
def test_promptfoo_rows_from_its_cache_are_not_runs(capsys, name: str) -> None:
    path = RECORDS / name
    rows = _rows(path)
    cached = sum(row["response"].get("cached") is True for row in rows)
    assert cached > 0  # all of them (a second run), or some (a test added since)
    said = f"{cached} of {len(rows)} promptfoo rows answered from promptfoo's cache"
    r = passk.read_results(path)
    assert r.incomplete == (r.incomplete[0],) and r.incomplete[0].startswith(said)
    blocked_by(capsys, [path], [said, "--no-cache"], LOOSE_K1)


def test_one_cached_row_is_enough(tmp_path: Path, capsys) -> None:
    data = json.loads((RECORDS / "cache_cold.json").read_text())
    data["results"]["results"][1]["response"]["cached"] = True
    path = tmp_path / "one.json"
    path.write_text(json.dumps(data))
    blocked_by(capsys, [path], ["1 of 2 promptfoo rows answered from promptfoo's cache"],
               LOOSE_K1)


@pytest.mark.parametrize("name", ["full2.json", "expand.json", "cache_cold.json", "orig.json",
                                  "copy.json"])
def test_a_whole_uncached_promptfoo_eval_is_complete(capsys, name: str) -> None:
    path = RECORDS / name
    listed, ran = _tests_run(path)
    assert listed == ran
    assert passk.read_results(path).incomplete == ()
    code, out, _ = gate(capsys, path, *(LOOSE_K1 if name.startswith("cache") else LOOSE))
    assert code == 0 and "incomplete" not in out


def test_a_promptfoo_import_under_a_new_eval_id_is_the_same_evidence(capsys) -> None:
    orig, copy = RECORDS / "orig.json", RECORDS / "copy.json"
    a, b = json.loads(orig.read_text()), json.loads(copy.read_text())
    # promptfoo import --new-id: a new evalId and new row ids, the same creation time
    assert a["evalId"] != b["evalId"] and a["results"]["timestamp"] == b["results"]["timestamp"]
    assert not {r["id"] for r in _rows(orig)} & {r["id"] for r in _rows(copy)}
    refused(capsys, [orig, copy], ["is the same run as", "promptfoo eval created"])
    # two evals of one config are trials of it: counted together, once each
    both = passk.read_results([RECORDS / "full2.json", orig])
    assert both.totals.tolist() == [4, 4, 4, 4]


def _copy(src: Path, dst: Path, rows: list[dict[str, Any]] | None = None) -> Path:
    """``src``'s rows (or ``rows``) under a new evalId and creation time, stats recounted."""
    data = json.loads(src.read_text())
    data["evalId"] = "eval-NEW-2027-01-01T00:00:00"
    data["results"]["timestamp"] = data["metadata"]["evaluationCreatedAt"] = "2027-01-01"
    if rows is not None:
        data["results"]["results"] = rows
        for name, reason in (("successes", 0), ("failures", 1), ("errors", 2)):
            data["results"]["stats"][name] = sum(r["failureReason"] == reason for r in rows)
    dst.write_text(json.dumps(data, indent=1, sort_keys=True))
    return dst


@pytest.mark.parametrize("part", ["all", "reversed", "half"])
def test_promptfoo_rows_copied_under_a_new_eval_id_are_recognised_by_their_row_ids(
        tmp_path: Path, capsys, part: str) -> None:
    orig = RECORDS / "orig.json"
    rows = _rows(orig)
    chosen = {"all": None, "reversed": rows[::-1], "half": rows[::2]}[part]
    copy = _copy(orig, tmp_path / "copy.json", chosen)
    shared = len(rows) if chosen is None else len(chosen)
    refused(capsys, [orig, copy], ["holds run promptfoo row id", f"({shared} such records)"])


def test_one_row_id_twice_in_one_promptfoo_file_is_refused(tmp_path: Path, capsys) -> None:
    data = json.loads((RECORDS / "full2.json").read_text())
    rows = data["results"]["results"]
    rows[1]["id"] = rows[0]["id"]
    path = tmp_path / "twice.json"
    path.write_text(json.dumps(data))
    code, _, err = gate(capsys, path, *LOOSE)
    assert code == 2 and "one run counts once" in err and rows[0]["id"][:8] in err


# --------------------------------------------------------------------------
# lm-evaluation-harness: a --limit run
# --------------------------------------------------------------------------


def _limited_run(tmp_path: Path, *, docs: int, limit: Any, n_samples: dict[str, int] | None,
                 name: str = "run") -> Path:
    """lm-eval's seed1 output as a run of its first ``docs`` documents: the samples file
    holds those, the results file their stored mean, ``config.limit`` and ``n-samples``
    as lm-eval writes them (None: removed)."""
    run = tmp_path / name
    shutil.copytree(SEED1.parent, run)
    samples = run / SEED1.name
    lines = samples.read_text().splitlines()[:docs]
    samples.write_text("".join(line + "\n" for line in lines))
    stored = next(run.glob("results_*.json"))
    data = json.loads(stored.read_text())
    values = [json.loads(line)["exact_match"] for line in lines]
    data["results"]["passk_qa"]["exact_match,none"] = sum(values) / len(values)
    data["config"]["limit"] = limit
    if n_samples is None:
        del data["n-samples"]
    else:
        data["n-samples"]["passk_qa"] = n_samples
    stored.write_text(json.dumps(data))
    return samples


@pytest.mark.parametrize("limit", [3, 2, 0.4, 0.5])
def test_an_lm_eval_limit_run_is_incomplete(tmp_path: Path, capsys, limit: float) -> None:
    original = 5  # the fixture's task has five documents
    effective = int(limit) if limit >= 1 else math.ceil(original * limit)  # get_sample_size
    samples = _limited_run(tmp_path, docs=effective, limit=limit,
                           n_samples={"original": original, "effective": effective})
    said = f"lm-eval ran {effective} of task passk_qa's {original} documents (--limit {limit}"
    r = passk.read_results(samples)
    assert r.incomplete == (r.incomplete[0],) and r.incomplete[0].startswith(said)
    assert len(r) == effective
    blocked_by(capsys, [samples], [said, "rerun without --limit"], LOOSE_K1)


def test_n_samples_short_of_the_task_is_a_limit_run_even_without_config_limit(
        tmp_path: Path, capsys) -> None:
    samples = _limited_run(tmp_path, docs=3, limit=None,
                           n_samples={"original": 5, "effective": 3})
    blocked_by(capsys, [samples], [("lm-eval ran 3 of task passk_qa's 5 documents (no --limit "
                                    "recorded")], LOOSE_K1)


def test_a_limit_without_n_samples_cannot_show_every_document_ran(tmp_path: Path,
                                                                  capsys) -> None:
    samples = _limited_run(tmp_path, docs=5, limit=5, n_samples=None)
    blocked_by(capsys, [samples], ["lm-eval ran with --limit 5", "records no n-samples"],
               LOOSE_K1)


def test_a_limit_that_covers_the_task_is_the_whole_run(tmp_path: Path, capsys) -> None:
    samples = _limited_run(tmp_path, docs=5, limit=10,
                           n_samples={"original": 5, "effective": 5})
    r = passk.read_results(samples)
    assert r.incomplete == () and any("--limit 10 covers every one" in n for n in r.notes)
    code, _, _ = gate(capsys, samples, *LOOSE_K1)
    assert code == 0


def test_a_samples_file_short_of_n_samples_is_incomplete(tmp_path: Path, capsys) -> None:
    samples = _limited_run(tmp_path, docs=4, limit=None,
                           n_samples={"original": 5, "effective": 5})
    blocked_by(capsys, [samples], ["lm-eval run holds 4 of its 5 documents"], LOOSE_K1)


@pytest.mark.parametrize("how", ["alone", "renamed"])
def test_an_lm_eval_samples_file_without_its_results_file_is_incomplete(
        tmp_path: Path, capsys, how: str) -> None:
    samples = tmp_path / (SEED1.name if how == "alone" else "samples.jsonl")
    shutil.copy(SEED1, samples)
    if how == "renamed":
        shutil.copy(next(SEED1.parent.glob("results_*.json")), tmp_path)
    blocked_by(capsys, [samples], ["no lm-eval results file of the same date beside",
                                   "--limit"], LOOSE_K1)


def test_an_lm_eval_run_of_every_document_is_complete(capsys) -> None:
    assert passk.read_results(SEED1).incomplete == ()
    code, out, _ = gate(capsys, SEED1, *LOOSE_K1)
    assert code == 0 and "incomplete" not in out


# --------------------------------------------------------------------------
# Inspect: errors a retry erased, two task versions, a copy under a new eval_id
# --------------------------------------------------------------------------


def _retry_eval(log_dir: Path, log_format: str, *, fail_first: bool,
                retry_on_error: int | None) -> Path:
    """A real Inspect eval, offline: 2 samples x 2 epochs; with ``fail_first`` sample s0's
    first attempt in each epoch raises, and ``retry_on_error`` runs it again."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import CORRECT, Score, accuracy, scorer
    from inspect_ai.solver import solver

    failed: set[tuple[Any, int]] = set()

    @solver  # type: ignore[misc]
    def crashes_once() -> Any:
        async def solve(state: Any, generate: Any) -> Any:
            key = (state.sample_id, state.epoch)
            if fail_first and state.sample_id == "s0" and key not in failed:
                failed.add(key)
                raise RuntimeError("the sandbox went away")
            state.output = ModelOutput.from_content("none", "yes")
            return state
        return solve

    @scorer(metrics=[accuracy()])  # type: ignore[misc]
    def always_right() -> Any:
        async def score(state: Any, target: Any) -> Score:
            return Score(value=CORRECT)
        return score

    task = Task(dataset=[Sample(input="go", id=f"s{i}") for i in range(2)],
                solver=crashes_once(), scorer=always_right(), epochs=2)
    with ThreadPoolExecutor(1) as pool:  # Inspect's event loop in a thread of its own
        log = pool.submit(inspect_eval, task, model="none", log_dir=str(log_dir),
                          display="none", log_format=log_format, fail_on_error=False,
                          retry_on_error=retry_on_error).result()[0]
    assert log.status == "success"
    return Path(log.location)


@pytest.fixture(scope="module")
def retried(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("inspect_ai", reason="the optional extra 'inspect' is not installed")
    base = tmp_path_factory.mktemp("retried")
    return {fmt: _retry_eval(base / fmt, fmt, fail_first=True, retry_on_error=2)
            for fmt in ("eval", "json")}


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_errors_a_retry_erased_fail_closed(retried: dict[str, Path], capsys, fmt: str) -> None:
    from inspect_ai.log import read_eval_log

    log = retried[fmt]
    samples = read_eval_log(str(log)).samples or []
    erased = [(f"{s.id} epoch {s.epoch}", len(s.error_retries or [])) for s in samples
              if s.error_retries]
    assert erased and all(s.error is None for s in samples)  # every retry then succeeded
    said = (f"Inspect log's retry_on_error (2) erased {sum(n for _, n in erased)} errors in "
            f"{len(erased)} sample epochs")
    r = passk.read_results(log)
    assert r.totals.tolist() == [2, 2] and r.successes.tolist() == [2, 2]
    assert r.incomplete == (r.incomplete[0],) and r.incomplete[0].startswith(said)
    assert all(f"{where}: {n}" in r.incomplete[0] for where, n in erased)
    blocked_by(capsys, [log], [said, "rerun without --retry-on-error"])


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_errors_exclude_leaves_retried_errors_out_and_says_so(retried: dict[str, Path],
                                                              capsys, fmt: str) -> None:
    log = retried[fmt]
    r = passk.read_results(log, errors="exclude")
    assert r.incomplete == ()
    assert any("2 errors a retry erased" in o for o in r.overrides)
    code, out, _ = gate(capsys, log, *LOOSE, "--errors", "exclude")
    assert code == 0 and "2 errors a retry erased" in out
    code, out, _ = gate(capsys, log, *LOOSE, "--errors", "exclude", "--json")
    # the JSON's gate.overrides drops the reader's phrases today (issue 36, class 3, not
    # this reader's): the notes say it
    assert code == 0 and any("2 errors in 2 sample epochs" in n and "retry erased" in n
                             for n in json.loads(out)["notes"])


def test_retry_on_error_without_a_retry_is_complete(tmp_path: Path, capsys) -> None:
    pytest.importorskip("inspect_ai", reason="the optional extra 'inspect' is not installed")
    log = _retry_eval(tmp_path, "eval", fail_first=False, retry_on_error=3)
    assert passk.read_results(log).incomplete == ()
    code, _, _ = gate(capsys, log, *LOOSE)
    assert code == 0


def test_retry_on_error_with_unrecorded_retries_fails_closed(retried: dict[str, Path],
                                                             tmp_path: Path, capsys) -> None:
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(retried["json"]))
    for sample in log.samples or []:
        sample.error_retries = None  # as a log from before Inspect recorded them
    path = tmp_path / "old.json"
    write_eval_log(log, str(path))
    blocked_by(capsys, [path], [("retry_on_error is 2 but its samples do not record their "
                                 "retries")])


def _log(path: Path, *, task_version: int | str | None = None, eval_id: str | None = None,
         uuids: list[str] | None = None, values: tuple[str, ...] = ("C", "I", "C", "C")
         ) -> Path:
    """An Inspect log of samples 1 and 2 x epochs 1 and 2, written by Inspect's writer."""
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalResults,
        EvalSample,
        EvalSpec,
        write_eval_log,
    )
    from inspect_ai.scorer import Score

    spec = EvalSpec(created="2025-01-01T00:00:00+00:00", task="airline", model="mockllm/model",
                    dataset=EvalDataset(name="tiny", samples=2, sample_ids=[1, 2]),
                    config=EvalConfig(epochs=2),
                    **({} if task_version is None else {"task_version": task_version}),
                    **({} if eval_id is None else {"eval_id": eval_id, "run_id": eval_id}))
    keys = [(1, 1), (2, 1), (1, 2), (2, 2)]
    uuids = uuids or [f"{path.stem}-{i}-{e}" for i, e in keys]
    samples = [EvalSample(id=i, epoch=e, input="q", target="a", uuid=u,
                          scores={"match": Score(value=v)})
               for (i, e), u, v in zip(keys, uuids, values)]
    write_eval_log(EvalLog(eval=spec, samples=samples, status="success",
                           results=EvalResults(total_samples=4, completed_samples=4)),
                   str(path))
    return path


@pytest.mark.parametrize("versions", [(1, 2), (None, 1), ("v1", "v2")])
def test_two_task_versions_are_not_pooled(tmp_path: Path, capsys, versions: tuple) -> None:
    pytest.importorskip("inspect_ai", reason="the optional extra 'inspect' is not installed")
    a = _log(tmp_path / "a.eval", task_version=versions[0])
    b = _log(tmp_path / "b.eval", task_version=versions[1])
    refused(capsys, [a, b], ["is an evaluation with task_version", str(versions[1]),
                             "--pool-evaluations"])
    code, out, _ = gate(capsys, a, b, *LOOSE, "--pool-evaluations")  # on purpose: said
    assert code == 0 and "task_version" in out and "--pool-evaluations" in out


def test_one_task_version_pools(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai", reason="the optional extra 'inspect' is not installed")
    a = _log(tmp_path / "a.eval", task_version=3)
    b = _log(tmp_path / "b.json", task_version=3)
    both = passk.read_results([a, b])
    assert both.totals.tolist() == [4, 4] and both.successes.tolist() == [4, 2]


@pytest.mark.parametrize("suffix", [".eval", ".json"])
@pytest.mark.parametrize("part", ["all", "reversed", "one epoch"])
def test_an_inspect_log_copied_under_a_new_eval_id_is_the_same_evidence(
        tmp_path: Path, capsys, suffix: str, part: str) -> None:
    pytest.importorskip("inspect_ai", reason="the optional extra 'inspect' is not installed")
    from inspect_ai.log import read_eval_log, write_eval_log

    orig = _log(tmp_path / f"orig{suffix}", eval_id="orig-eval")
    log = read_eval_log(str(orig))
    log.eval.eval_id = log.eval.run_id = "a-new-eval-id"
    samples = log.samples or []
    log.samples = {"all": samples, "reversed": samples[::-1],
                   "one epoch": [s for s in samples if s.epoch == 1]}[part]
    copy = tmp_path / f"copy{suffix}"
    write_eval_log(log, str(copy))
    assert read_eval_log(str(copy), header_only=True).eval.eval_id != "orig-eval"
    refused(capsys, [orig, copy], ["holds run Inspect sample uuid",
                                   f"({len(log.samples)} such records)"])


def test_two_inspect_runs_with_their_own_uuids_pool(tmp_path: Path, capsys) -> None:
    pytest.importorskip("inspect_ai", reason="the optional extra 'inspect' is not installed")
    a = _log(tmp_path / "a.eval")
    b = _log(tmp_path / "b.eval", values=("C", "C", "C", "I"))
    both = passk.read_results([a, b])
    assert both.totals.tolist() == [4, 4] and both.successes.tolist() == [4, 2]
    assert {rid[0] for rid in both.run_ids} == {"Inspect sample uuid"}


def test_one_uuid_twice_in_one_inspect_log_is_refused(tmp_path: Path, capsys) -> None:
    pytest.importorskip("inspect_ai", reason="the optional extra 'inspect' is not installed")
    path = _log(tmp_path / "twice.eval", uuids=["u1", "u2", "u1", "u4"])
    code, _, err = gate(capsys, path, *LOOSE)
    assert code == 2 and "Inspect sample uuid 'u1'" in err and "one run counts once" in err
