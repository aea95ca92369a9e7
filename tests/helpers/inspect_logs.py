"""Inspect AI logs for tests, written offline with Inspect's own log API.

``write_log`` builds an ``EvalLog`` of ``EvalSample`` records with ``Score``
values and writes it with ``write_eval_log``, so the files follow the installed
Inspect's format exactly (no model is called, nothing is downloaded).
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
    return path


def early_stopping(manager: str, stops: Sequence[tuple[Any, int]],
                   metadata: Mapping[str, Any] | None = None) -> Any:
    """Inspect's ``EarlyStoppingSummary`` of ``stops`` (sample id, epoch) by ``manager``."""
    from inspect_ai.util._early_stopping import EarlyStop, EarlyStoppingSummary

    return EarlyStoppingSummary(
        manager=manager,
        early_stops=[EarlyStop(id=i, epoch=e, reason="settled") for i, e in stops],
        metadata=dict(metadata or {}))
