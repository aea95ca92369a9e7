"""``passk report`` and ``gate`` on an Inspect log use the k the eval itself records, and say
so on stderr: passk's ``mean_pass_hat_k(k=...)`` metric, else Inspect's ``pass_k(k)``
reducer, else its ``pass_at(k)`` reducer; the epochs (the smallest number of runs) only when
the log records no k. An asked ``--k``, a policy's k and a run's declared k come first.

The logs are written by Inspect's own code: two real evals (``inspect_ai.eval``, offline,
``tests/helpers/inspect_evals.py``), whose own metric values are the reference for passk's
suite figure at that k, and logs built with Inspect's log API (``write_eval_log``) for the
variants (several scorers, grouped metric definitions, a k above the epochs).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai", reason="the optional extra 'inspect' is not installed")

from inspect_ai import eval as inspect_eval
from inspect_ai.scorer import pass_at, pass_k
from inspect_evals import seeded_task
from inspect_logs import agree_with_inspect

from passk.cli.commands import main
from passk.integrations.inspect import mean_pass_hat_k, pass_hat_k_counts
from passk.results.formats.inspect_log import read_inspect, recorded_k

RATES = [0.9, 0.5, 0.3, 1.0, 0.7]
EPOCHS = 6


def passk(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in argv])
    return status, out.getvalue(), err.getvalue()


def _eval(task: Any, log_dir: Path) -> Any:
    with ThreadPoolExecutor(1) as pool:  # Inspect starts an event loop of its own
        log = pool.submit(inspect_eval, task, model="none", log_dir=str(log_dir),
                          display="none", max_samples=2).result()[0]
    assert log.status == "success"
    agree_with_inspect(log.location)
    return log


@pytest.fixture(scope="module")
def evals(tmp_path_factory):
    """Two real evals of the same samples: Inspect's pass_k(3) and pass_at(2) reducers; and
    passk's counts reducer with its mean_pass_hat_k(k=4) metric."""
    d = tmp_path_factory.mktemp("evals")
    (d / ".git").mkdir()
    return {"d": d,
            "reducers": _eval(seeded_task(RATES, epochs=EPOCHS, seed=3,
                                          reducer=[pass_k(3), pass_at(2)]), d / "reducers"),
            "metric": _eval(seeded_task(RATES, epochs=EPOCHS, seed=3,
                                        reducer=pass_hat_k_counts(),
                                        metrics=[mean_pass_hat_k(k=4)]), d / "metric")}


def _inspect_value(log: Any, reducer: str, metric: str) -> float:
    return next(float(s.metrics[metric].value) for s in log.results.scores
                if s.reducer == reducer)


def test_the_pass_k_reducers_k_is_the_default_and_said(evals, monkeypatch):
    monkeypatch.chdir(evals["d"])
    log = evals["reducers"]
    status, out, err = passk("report", log.location, "--json")
    assert status == 0
    assert "k = 3, from the log's pass_k reducer (pass_k_3) (--k to choose)" in err
    assert "smallest number of runs" not in err
    data = json.loads(out)
    assert data["k"] == 3 and {t["k"] for t in data["tasks"]} == {3}
    # the reference: Inspect's own pass_k(3) reducer, averaged by its accuracy metric
    assert data["gate"]["overall"] == pytest.approx(_inspect_value(log, "pass_k_3", "accuracy"),
                                                    abs=1e-12)
    assert any(t["successes"] < t["runs"] for t in data["tasks"])  # not all passing
    per_task = [math.comb(t["successes"], 3) / math.comb(t["runs"], 3) for t in data["tasks"]]
    assert [t["pass_hat_k"] for t in data["tasks"]] == pytest.approx(per_task, abs=1e-12)


def test_the_mean_pass_hat_k_metrics_k_is_the_default_and_said(evals, monkeypatch):
    monkeypatch.chdir(evals["d"])
    log = evals["metric"]
    for command in ("report", "gate"):
        _, out, err = passk(command, log.location, "--json")
        assert "k = 4, from the log's mean_pass_hat_k metric (--k to choose)" in err
        data = json.loads(out)
        assert data["k"] == 4
        # the reference: the pass^4 the eval's own metric logged
        assert data["gate"]["overall"] == pytest.approx(
            _inspect_value(log, "passk/pass_hat_k_counts", "pass^4"), abs=1e-12)
    _, text, _ = passk("gate", log.location)
    assert "overall pass^4 = " in text


@pytest.mark.parametrize("log_name", ["reducers", "metric"])
def test_an_asked_k_or_a_policys_k_comes_first(evals, monkeypatch, tmp_path, log_name):
    monkeypatch.chdir(evals["d"])
    path = evals[log_name].location
    _, out, err = passk("report", path, "--k", "2", "--json")
    assert json.loads(out)["k"] == 2 and "from the log's" not in err
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "passk.toml").write_text("[gate]\nk = 5\n", encoding="utf-8")
    monkeypatch.chdir(repo)
    _, out, err = passk("report", path, "--json")
    assert json.loads(out)["k"] == 5 and "from the log's" not in err


def test_a_log_without_a_k_falls_back_to_the_runs(tmp_path, monkeypatch):
    from inspect_logs import write_log

    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    log = write_log(tmp_path / "plain.eval", {(i, e): "C" if (i + e) % 3 else "I"
                                              for i in (1, 2, 3) for e in range(1, 6)})
    _, out, err = passk("report", log, "--json")
    assert json.loads(out)["k"] == 5
    assert "k = 5, the smallest number of runs of any task" in err and "from the log" not in err
    assert read_inspect(log).recorded_k is None


def _log(path: Path, *, reducers: list[Any] | None = None, scorers: dict[str, Any] | None = None,
         scores: list[Any] | None = None, epochs: int = EPOCHS) -> Path:
    """A log written with Inspect's API: samples 1-3, ``epochs`` each, scored by every
    scorer in ``scorers`` (name -> its metric definitions as the header holds them)."""
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalResults,
        EvalSample,
        EvalSpec,
        write_eval_log,
    )
    from inspect_ai.log._log import EvalScorer
    from inspect_ai.scorer import Score
    from inspect_ai.scorer._reducer import reducer_log_names

    scorers = scorers if scorers is not None else {"match": None}
    spec = EvalSpec(created="2025-01-01T00:00:00+00:00", task="t", model="mockllm/model",
                    dataset=EvalDataset(name="d", samples=3, sample_ids=[1, 2, 3]),
                    config=EvalConfig(epochs=epochs,
                                      epochs_reducer=reducer_log_names(reducers)
                                      if reducers else None),
                    scorers=[EvalScorer(name=n, metrics=m) for n, m in scorers.items()])
    samples = [EvalSample(id=i, epoch=e, input="q", target="a",
                          scores={n: Score(value="C" if (i * e) % 4 else "I") for n in scorers})
               for i in (1, 2, 3) for e in range(1, epochs + 1)]
    results = EvalResults(total_samples=len(samples), completed_samples=len(samples),
                          scores=scores or [])
    write_eval_log(EvalLog(eval=spec, samples=samples, status="success", results=results),
                   str(path))
    agree_with_inspect(path)
    return path


def _definition(k: int) -> Any:
    from inspect_ai.log._log import EvalMetricDefinition

    return EvalMetricDefinition(name="passk/mean_pass_hat_k", options={"k": k})


@pytest.mark.parametrize(("reducers", "expected"), [
    (lambda: [pass_k(3)], (3, "pass_k reducer (pass_k_3)")),
    (lambda: [pass_at(2)], (2, "pass_at reducer (pass_at_2)")),
    (lambda: [pass_at(2), pass_k(4)], (4, "pass_k reducer (pass_k_4)")),  # pass^k first
    (lambda: [pass_k(2), pass_k(5)], (5, "pass_k reducer (pass_k_5)")),  # the strictest
])
def test_the_reducers_as_inspect_names_them(tmp_path, reducers, expected):
    log = _log(tmp_path / "r.eval", reducers=reducers())
    assert read_inspect(log).recorded_k == expected


@pytest.mark.parametrize("shape", ["list", "grouped", "mapping"])
def test_the_metric_in_every_shape_the_header_allows(tmp_path, shape):
    metrics = {"list": [_definition(4)], "grouped": [{"suite": [_definition(4)]}],
               "mapping": {"suite": [_definition(4)]}}[shape]
    log = _log(tmp_path / "m.eval", reducers=[pass_k(2)], scorers={"match": metrics})
    assert read_inspect(log).recorded_k == (4, "mean_pass_hat_k metric")  # before the reducer


def test_the_metric_counts_for_its_own_scorer_only(tmp_path):
    log = _log(tmp_path / "s.eval", scorers={"match": [_definition(4)], "judge": None})
    assert read_inspect(log, scorer="match").recorded_k == (4, "mean_pass_hat_k metric")
    assert read_inspect(log, scorer="judge").recorded_k is None


def test_the_results_metrics_params_are_read_too(tmp_path):
    from inspect_ai.log import EvalMetric, EvalScore

    score = EvalScore(name="match", scorer="match", reducer="passk/pass_hat_k_counts",
                      metrics={"pass^3": EvalMetric(name="pass^3", group="mean_pass_hat_k",
                                                    value=0.5, params={"k": 3})})
    log = _log(tmp_path / "res.eval", scores=[score])
    assert read_inspect(log).recorded_k == (3, "mean_pass_hat_k metric")
    header = {"results": {"scores": [score.model_dump()]}}
    assert recorded_k(header, "other") is None
    assert recorded_k(header) == (3, "mean_pass_hat_k metric")


def test_a_recorded_k_above_the_epochs_blocks_naming_the_runs(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    log = _log(tmp_path / "big.eval", reducers=[pass_k(8)], epochs=4)
    status, out, err = passk("gate", log)
    assert status == 1 and "k = 8, from the log's pass_k reducer (pass_k_8)" in err
    assert all(f"task {t}: 4 runs are too few to estimate pass^8" in out for t in (1, 2, 3))


@pytest.mark.parametrize("bad", [
    {"eval": {"config": {"epochs_reducer": "pass_k_3"}}},  # not a list
    {"eval": {"config": {"epochs_reducer": [3, None, "pass_k_0"]}}},
    {"eval": {"scorers": [{"name": "m", "metrics": [{"name": "passk/mean_pass_hat_k",
                                                     "options": {"k": "4"}}]}]}},
    {"eval": {"scorers": "x"}, "results": {"scores": [{"metrics": []}]}},
    {"results": {"scores": [{"reducer": 5, "metrics": {"x": {"params": {"k": True}}}}]}},
])
def test_odd_headers_record_no_k(bad):
    assert recorded_k(bad) is None
