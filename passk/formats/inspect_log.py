"""Inspect AI eval logs (``.eval`` or ``.json``): one run a sample epoch.

The scores are read from the log's sample summaries
(``inspect_ai.log.read_eval_log_sample_summaries``) and its header
(``read_eval_log(..., header_only=True)``), never from the transcripts, so a
log of agent runs hundreds of megabytes large reads in a fraction of the time
and memory ``read_eval_log`` takes (``benchmarks/bench_inspect_log.py``).

Which score values count as a success is said in every report's notes:

- By default, the values of Inspect's binary convention: ``"C"``, ``True``
  and ``1`` pass, ``"I"``, ``"N"``, ``False`` and ``0`` fail (what Inspect's
  ``value_to_float`` maps to 1 and to 0). Any other value (a grade ``"8"``,
  partial credit ``0.5`` or ``"P"``) is an error naming the values seen and how
  to choose: never a silent failure.
- ``success_values``: values that count as a success, **added to** ``"C"``,
  ``True`` and ``1``; every other value is then a failure.
- ``success_threshold``: a numeric value (or numeric string) at least the
  threshold is a success, as Inspect's ``pass_k(k, value=...)`` and
  ``pass_at(k, value=...)`` count (their default threshold is 1.0).
- ``score_key``: for dict-valued scores, the key whose value is judged.

A log written with passk's early stopping (``passk.inspect.Curtailment``,
manager ``"passk.curtailment"``) carries the protocol it ran under and the
samples it settled early: those epochs were not run because no outcome of
them could change the gate's decision, so the log is complete (a note gives
the counts) and ``Results.protocol`` binds the gate. Early stops by any other
manager are epochs that never ran: the log is incomplete.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..protocol import Protocol
from ..results import Results, ResultsError, Run, tally_runs, with_notes
from ._shared import QUOTE, plural, some

__all__ = ["ERRORED_SAMPLES", "INSPECT_SUCCESS_VALUES", "PASSK_MANAGER", "read_inspect",
           "sniff"]

#: Score values that count as a success by default (Inspect's accuracy convention).
INSPECT_SUCCESS_VALUES = ("C",)

#: Why Inspect samples are left out (``Results.excluded_reason``).
ERRORED_SAMPLES = "errored samples"

#: The early-stopping manager name of passk's curtailment.
PASSK_MANAGER = "passk.curtailment"

#: Inspect's value_to_float for its letter grades and boolean words.
_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0, "yes": 1.0, "no": 0.0, "true": 1.0,
            "false": 0.0}


def sniff(data: Any, path: Path) -> bool:
    """An Inspect log in JSON: an object with ``eval`` and samples, a version or a status."""
    return isinstance(data, dict) and "eval" in data and (
        "samples" in data or "version" in data or "status" in data)


def _number(value: Any) -> float | None:
    """Inspect's ``value_to_float`` for one scalar; None for what it cannot map."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        try:
            x = float(value)
        except OverflowError:
            return None
        return x if math.isfinite(x) else None
    if isinstance(value, str):
        text = value.strip()
        key = text if text in _LETTERS else text.lower()
        if key in _LETTERS:
            return _LETTERS[key]
        try:
            x = float(text)
        except ValueError:
            return None
        return x if math.isfinite(x) else None
    return None


def _shown(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


class _Rule:
    """Which score values count as a success, and the sentence that says so."""

    def __init__(self, values: Sequence[str] | None, threshold: float | None):
        self.values = tuple(values or ())
        self.threshold = threshold
        if threshold is not None and not math.isfinite(threshold):
            raise ValueError(f"success_threshold ({threshold!r}) must be a finite number")

    @property
    def chosen(self) -> bool:
        return bool(self.values) or self.threshold is not None

    def _listed(self, value: Any) -> bool:
        if value is True or (isinstance(value, str) and value == "C"):
            return True
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value == 1:
            return True
        for s in self.values:
            if isinstance(value, str) and value == s:
                return True
            if isinstance(value, bool) and str(value).lower() == s.lower():
                return True
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                try:
                    if float(s) == float(value):
                        return True
                except (ValueError, OverflowError):
                    pass
        return False

    def success(self, value: Any, path: Path, where: str, scorer: str) -> bool | None:
        """True or False; None when the default rule cannot tell (the value is not binary)."""
        if self._listed(value):
            return True
        if self.threshold is not None:
            x = _number(value)
            if x is None:
                raise ResultsError(path, where, f"score value {_shown(value):.{QUOTE}} of scorer "
                                   f"{scorer!r} is not a number, so --success-threshold "
                                   f"{self.threshold:g} cannot judge it (--success-value "
                                   "names values that count as a success)")
            return x >= self.threshold
        if self.values:
            return False
        return False if _number(value) == 0.0 else None

    def describe(self) -> str:
        parts = ["C, True or 1"]
        if self.values:
            parts[0] = ", ".join(self.values) + " (--success-value), or C, True or 1"
        if self.threshold is not None:
            parts.append(f"a number at least {self.threshold:g} (--success-threshold)")
        rest = "every other value" if self.chosen else "I, N, False or 0"
        return "a success is " + ", or ".join(parts) + f"; {rest} is a failure"


def _value_counts(counts: Counter[Any], limit: int = 8) -> str:
    items = sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))
    return some([f"{_shown(v):.{QUOTE}} ({n})" for v, n in items], limit)


def _gaps(header: Any, results: Results, stopped: int, passk_stopped: bool,
          manager: str | None) -> list[str]:
    """The sentence naming an Inspect eval that did not run its whole plan, if it did not.

    The plan is the selected samples (``eval.dataset.sample_ids``, else
    ``eval.dataset.samples``) × ``eval.config.epochs``; the log is complete
    when its status is ``"success"`` and it holds that many sample epochs,
    counting the epochs passk's curtailment settled early as planned.
    """
    status = header.status
    dataset = header.eval.dataset
    epochs = getattr(header.eval.config, "epochs", None) or 1
    ids = list(dataset.sample_ids) if dataset.sample_ids else None
    selected = len(ids) if ids is not None else dataset.samples
    scored, errored = int(results.totals.sum()), int(results.excluded.sum())
    present = scored + errored + (stopped if passk_stopped else 0)
    if status == "success" and (selected is None or present >= selected * epochs) \
            and (passk_stopped or not stopped):
        return []
    if selected is None:
        plan = None
    else:
        samples = f"{selected} dataset samples"
        if ids is not None and dataset.samples and selected < dataset.samples:
            samples = f"{selected} selected samples (of the dataset's {dataset.samples})"
        plan = (f"{samples} × 1 epoch" if epochs == 1 else
                f"{selected * epochs} sample epochs ({samples} × {epochs} epochs)")
    if status != "success":
        head = f"Inspect log status is {status!r}: "
    elif stopped and not passk_stopped:
        head = (f"Inspect log's early stopping ({manager}) skipped {plural(stopped, 'sample epoch')}"
                ", which never ran: ")
    else:
        head = "Inspect log holds fewer samples than planned, though its status is 'success': "
    if plan is None:
        text = (f"{plural(scored, 'sample epoch')} were scored; the log does not record how many "
                "samples the dataset holds")
    else:
        text = f"{scored} of {plan} were scored"
    if errored:
        text += f" ({errored} more ended in an error)"
    if passk_stopped and stopped:
        text += f" ({stopped} more settled early by {PASSK_MANAGER})"
    if ids is not None:
        ran = set(results.task_ids)
        never = [str(i) for i in ids if str(i) not in ran]
        if never:
            text += f"; {plural(len(never), 'sample')} never ran ({some(never)})"
    error = getattr(header, "error", None)
    message = str(getattr(error, "message", "") or "").strip() if error is not None else ""
    if message:
        text += f"; the eval's error: {message.splitlines()[0][:160]}"
    return [head + text]


def _early_stopping(header: Any, path: Path) -> tuple[str | None, list[tuple[str, int]],
                                                       dict[str, Any]]:
    """The early-stopping manager, the (sample id, epoch) pairs it stopped, and its metadata."""
    summary = getattr(getattr(header, "results", None), "early_stopping", None)
    if summary is None:
        return None, [], {}
    stops = [(str(s.id), int(s.epoch)) for s in (summary.early_stops or ())]
    return str(summary.manager), stops, dict(summary.metadata or {})


def _passk_protocol(metadata: Mapping[str, Any], path: Path) -> tuple[Protocol, dict[str, int]]:
    where = "results.early_stopping.metadata"
    try:
        protocol = Protocol.from_dict(metadata["protocol"])
    except (KeyError, ValueError, AttributeError, TypeError) as exc:
        raise ResultsError(path, where, f"{PASSK_MANAGER} recorded no readable protocol "
                           f"({type(exc).__name__}: {str(exc)[:120]})") from None
    settled = metadata.get("settled_early", {})
    if not isinstance(settled, Mapping) or not all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in settled.values()):
        raise ResultsError(path, where, "field 'settled_early' must map sample ids to run "
                           f"counts, got {settled!r:.{QUOTE}}")
    return protocol, {str(k): int(v) for k, v in settled.items()}


def read_inspect(path: str | os.PathLike[str], data: Any = None, *, scorer: str | None = None,
                 success_values: Sequence[str] | None = None,
                 success_threshold: float | None = None, score_key: str | None = None,
                 duplicates: str = "error") -> Results:
    """Read an Inspect AI eval log (``.eval`` or ``.json``): one run a sample epoch.

    Needs the optional extra ``inspect``
    (``pip install 'passk-reliability[inspect]'``).
    A sample that ended in an error is left out (as "errored samples"); a log
    whose ``status`` is not ``"success"`` (``"started"``, ``"cancelled"``,
    ``"error"``), that holds fewer sample epochs than its selected dataset
    samples × ``epochs``, or whose epochs another early-stopping manager
    skipped is named in ``Results.incomplete``.

    Parameters
    ----------
    scorer : str, optional
        Which scorer's value decides success; required when the log has several.
    success_values : sequence of str, optional
        Values that count as a success, added to ``"C"``, ``True`` and 1.
    success_threshold : float, optional
        A numeric value at least this is a success (Inspect's ``pass_k`` uses 1.0).
    score_key : str, optional
        For dict-valued scores: the key whose value is judged.
    duplicates : {'error', 'first', 'last'}, default 'error'
        A repeated (sample id, epoch); see :func:`passk.results.tally_runs`.

    Raises
    ------
    ResultsError
        For an unreadable log, a value the default rule cannot judge (naming
        the values seen and the options that choose), a dict score without
        ``score_key``, and any bad sample, naming the file and the sample.
    """
    path = Path(path)
    rule = _Rule(success_values, success_threshold)
    try:
        from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries
    except ImportError:
        raise ResultsError(path, None, "reading Inspect AI logs needs the optional extra "
                           "'inspect': pip install 'passk-reliability[inspect]' (or pip "
                           "install inspect-ai)") from None
    try:
        header = read_eval_log(str(path), header_only=True)
        summaries = read_eval_log_sample_summaries(str(path))
    except Exception as exc:  # noqa: BLE001 - any parse error is bad input
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ResultsError(path, None, f"not a readable Inspect AI log "
                           f"({type(exc).__name__}: {first[:200]})") from None
    manager, stops, metadata = _early_stopping(header, path)
    passk_stopped = manager == PASSK_MANAGER
    protocol, settled = _passk_protocol(metadata, path) if passk_stopped else (None, {})
    if not summaries:
        status = "" if header.status == "success" else f"; its status is {header.status!r}"
        raise ResultsError(path, None, "the log has no samples (a header-only log, or an "
                           f"eval that did not run{status})")
    names: list[str] = []
    for s in summaries:
        for name in (s.scores or {}):
            if name not in names:
                names.append(name)
    if scorer is None:
        if len(names) > 1:
            raise ResultsError(path, None, f"the log has several scorers ({', '.join(names)}); "
                               f"choose one with --scorer")
        scorer = names[0] if names else None
    elif scorer not in names:
        raise ResultsError(path, None, f"no scorer {scorer!r} in the log; it has "
                           f"{', '.join(names) or 'none'}")
    errored = 0
    passed: Counter[Any] = Counter()
    failed: Counter[Any] = Counter()
    unjudged: Counter[Any] = Counter()

    def judged(value: Any, where: str, task_id: str, epoch: int) -> Any:
        if isinstance(value, dict):
            if score_key is None:
                raise ResultsError(path, where, f"sample {task_id!r:.{QUOTE}} epoch {epoch}: "
                                   f"scorer {scorer!r} gives a dict (keys {some(list(map(str, value)))}); "
                                   "choose the key that decides success with --score-key")
            if score_key not in value:
                raise ResultsError(path, where, f"sample {task_id!r:.{QUOTE}} epoch {epoch}: no key "
                                   f"{score_key!r} in scorer {scorer!r}'s value (keys "
                                   f"{some(list(map(str, value)))})")
            value = value[score_key]
        elif score_key is not None:
            raise ResultsError(path, where, f"--score-key {score_key!r} is for dict scores, but "
                               f"scorer {scorer!r} gives {_shown(value):.{QUOTE}}")
        if not isinstance(value, (str, int, float, bool)) or value is None:
            raise ResultsError(path, where, f"score value {value!r:.{QUOTE}} of scorer "
                               f"{scorer!r} is not a single value (str, number or bool)")
        return value

    def runs() -> Iterator[tuple[str, Run]]:
        nonlocal errored
        for i, s in enumerate(summaries):
            where = f"samples[{i}]"
            if s.id is None or s.id == "":
                raise ResultsError(path, where, "missing sample id")
            task_id = str(s.id)
            if s.error is not None:
                errored += 1
                yield where, Run(task_id, False, s.epoch, excluded=True,
                                 excluded_as=ERRORED_SAMPLES)
                continue
            score = (s.scores or {}).get(scorer) if scorer else None
            if score is None:
                raise ResultsError(path, where, f"sample {task_id!r:.{QUOTE}} epoch {s.epoch} has "
                                   f"no score from scorer {scorer!r}")
            value = judged(score.value, where, task_id, s.epoch)
            ok = rule.success(value, path, where, str(scorer))
            if ok is None:
                unjudged[value] += 1
                ok = False
            (passed if ok else failed)[value] += 1
            yield where, Run(task_id, ok, s.epoch)

    task_ids = list(settled)
    results = tally_runs(runs(), path=path, source="inspect", duplicates=duplicates,
                         task_ids=(), protocol=None)
    if unjudged:
        raise ResultsError(path, None, f"scorer {scorer!r} gives values that are not pass/fail: "
                           f"{_value_counts(unjudged)} (all values seen: "
                           f"{_value_counts(passed + failed)}); say which count as a success: "
                           "--success-value VALUE (repeatable, added to C, True and 1), "
                           "--success-threshold X (a number at least X passes; Inspect's "
                           "pass_k uses 1)" + (", with --score-key for dict scores"
                                               if score_key else ""))
    notes = [(f"scorer: {scorer}; {rule.describe()}: counted as a success "
             f"{_value_counts(passed) or 'none'}; as a failure {_value_counts(failed) or 'none'}")]
    if errored:
        notes.append(f"{errored} sample epoch(s) ended in an error and are left out")
    if passk_stopped:
        unknown = [t for t in task_ids if t not in set(results.task_ids)]
        if unknown:
            raise ResultsError(path, "results.early_stopping.metadata",
                               f"settled_early names samples the log does not hold "
                               f"({some(unknown)})")
        present = dict(zip(results.task_ids, (results.totals + results.excluded).tolist()))
        off = [f"{t}: {n} recorded, {present[t]} in the log" for t, n in settled.items()
               if present[t] != n]
        if off:
            notes.append(f"{PASSK_MANAGER}'s settled_early disagrees with the samples the log "
                         f"holds ({some(off)})")
        notes.append(f"{PASSK_MANAGER} settled {plural(len(settled), 'sample')} early: "
                     f"{plural(len(stops), 'sample epoch')} not run, because no outcome of them "
                     "could change the gate's decision under the log's protocol "
                     f"({some([f'{t}: {n} runs' for t, n in settled.items()])})")
    results = with_notes(results, notes, _gaps(header, results, len(stops), passk_stopped,
                                               manager))
    suite = str(getattr(header.eval, "task", "") or "")
    ids = header.eval.dataset.sample_ids
    ran = set(results.task_ids)
    never = tuple(str(i) for i in ids or () if str(i) not in ran)
    return replace(results, protocol=protocol, settled_early=settled, suite=suite,
                   never_ran=never)
