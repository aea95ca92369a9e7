"""Inspect AI logs for tests, written offline with Inspect's own log API.

``write_log`` builds an ``EvalLog`` of ``EvalSample`` records with ``Score``
values and writes it with ``write_eval_log``, so the files follow the installed
Inspect's format exactly (no model is called, nothing is downloaded).

Every log written here (and by the tests' other Inspect log builders) is read
twice, by passk's reader (:func:`passk.results.formats.inspect_log.read_log`, no
``inspect_ai``) and by Inspect's own ``read_eval_log``, and
:func:`agree_with_inspect` checks that both see the same header and samples.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def write_log(path: Path, values: Mapping[tuple[Any, int], Any], *, epochs: int | None = None,
              sample_ids: Sequence[Any] | None = None, status: str = "success",
              errored: Sequence[tuple[Any, int]] = (), scorer: str = "match",
              task: str = "airline", early_stopping: Any = None,
              transcript: str = "", error_message: str | None = None,
              model: str = "mockllm/model", task_args: Mapping[str, Any] | None = None) -> Path:
    """Write an Inspect log: ``values[(sample id, epoch)]`` is the scorer's value.

    ``sample_ids`` (default: the ids in ``values``) is the dataset's selection;
    ``errored`` samples end in an error; ``transcript`` is put into each
    sample's messages (to make a big log).
    """
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalError,
        EvalLog,
        EvalResults,
        EvalSample,
        EvalSpec,
        write_eval_log,
    )
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser
    from inspect_ai.scorer import Score

    ids = list(dict.fromkeys(i for i, _ in [*values, *errored])) if sample_ids is None \
        else list(sample_ids)
    n_epochs = epochs or max([e for _, e in [*values, *errored]] or [1])
    spec = EvalSpec(created="2025-01-01T00:00:00+00:00", task=task, model=model,
                    task_args=dict(task_args or {}),
                    dataset=EvalDataset(name="tiny", samples=len(ids), sample_ids=ids),
                    config=EvalConfig(epochs=n_epochs))
    messages = ([ChatMessageUser(content="q"), ChatMessageAssistant(content=transcript)]
                if transcript else [])
    samples = [EvalSample(id=i, epoch=e, input="q", target="a", messages=messages,
                          scores={scorer: Score(value=v)}) for (i, e), v in values.items()]
    samples += [EvalSample(id=i, epoch=e, input="q", target="a", scores=None,
                           error=EvalError(message="rate limit", traceback="",
                                           traceback_ansi=""))
                for i, e in errored]
    results = EvalResults(total_samples=len(samples), completed_samples=len(samples),
                          early_stopping=early_stopping)
    error = (EvalError(message=error_message, traceback="", traceback_ansi="")
             if error_message else None)
    log = EvalLog(eval=spec, samples=samples, status=status, results=results, error=error)
    write_eval_log(log, str(path))
    agree_with_inspect(path)
    return path


AGREED: list[str] = []  # the logs checked, for the test that counts them


def _same(a: Any, b: Any) -> bool:
    return repr(a) == repr(b)  # NaN (an unscored value) equals itself


def agree_with_inspect(path: Path | str) -> None:
    """passk's reading of an Inspect log equals Inspect's ``read_eval_log`` on it.

    Compared, with the header as ``read_eval_log(header_only=True)`` gives it
    (the whole log's read fills in ``sample_ids`` from the samples): the status; the eval's task, model, dataset (name, samples,
    sample ids) and epochs; results.total_samples and early stopping (manager,
    stops, metadata); the eval's error; and every sample epoch: its id, epoch,
    whether it ended in an error, and every scorer's value.
    """
    from inspect_ai.log import read_eval_log

    from passk.results.formats.inspect_log import read_log

    header, samples = read_log(path)
    log = read_eval_log(str(path), header_only=True)  # the header as the log holds it
    spec = header["eval"]
    assert header.get("status") == log.status, path
    assert (spec["task"], spec["model"]) == (log.eval.task, log.eval.model), path
    dataset = spec.get("dataset") or {}
    assert (dataset.get("name"), dataset.get("samples"), dataset.get("sample_ids")) == (
        log.eval.dataset.name, log.eval.dataset.samples, log.eval.dataset.sample_ids), path
    assert (spec.get("config") or {}).get("epochs") == log.eval.config.epochs, path
    results = header.get("results") or {}
    assert results.get("total_samples") == (log.results.total_samples if log.results
                                            else None), path
    stopping = results.get("early_stopping")
    theirs = log.results.early_stopping if log.results else None
    assert (stopping is None) == (theirs is None), path
    if theirs is not None:
        assert stopping["manager"] == theirs.manager, path
        assert [(s["id"], s["epoch"]) for s in stopping.get("early_stops") or ()] == [
            (s.id, s.epoch) for s in theirs.early_stops], path
        assert stopping.get("metadata") == theirs.metadata, path
    assert (header.get("error") or {}).get("message") == (log.error.message if log.error
                                                          else None), path
    log = read_eval_log(str(path))  # and every sample, transcripts and all
    ours = sorted((((str(s["id"]), s["epoch"]), s) for s in samples), key=lambda kv: kv[0])
    them = sorted((((str(s.id), s.epoch), s) for s in log.samples or ()), key=lambda kv: kv[0])
    assert [k for k, _ in ours] == [k for k, _ in them], path
    for (_, mine), (_, sample) in zip(ours, them):
        assert mine["id"] == sample.id and (mine["error"] is not None) == (
            sample.error is not None), path
        values = {name: s.value for name, s in (sample.scores or {}).items()}
        assert _same({name: s["value"] for name, s in (mine["scores"] or {}).items()},
                     values), (path, mine, values)
    AGREED.append(str(path))


def early_stopping(manager: str, stops: Sequence[tuple[Any, int]],
                   metadata: Mapping[str, Any] | None = None) -> Any:
    """Inspect's ``EarlyStoppingSummary`` of ``stops`` (sample id, epoch) by ``manager``."""
    from inspect_ai.util._early_stopping import EarlyStop, EarlyStoppingSummary

    return EarlyStoppingSummary(
        manager=manager,
        early_stops=[EarlyStop(id=i, epoch=e, reason="settled") for i, e in stops],
        metadata=dict(metadata or {}))
