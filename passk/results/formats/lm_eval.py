"""lm-evaluation-harness's samples: ``lm-eval run --log_samples --output_path OUT``.

lm-eval writes ``OUT/<model>/results_<date>.json`` (the run: ``config``
{``model``, ``model_args``, ``random_seed``, ...}, ``configs[task]`` with
``repeats`` and ``metric_list``, ``results[task]["<metric>,<filter>"]``,
``n-samples``, ``task_hashes``, ``date``) beside one
``samples_<task>_<date>.jsonl`` per task: one line a (document, filter), with
``doc_id``, ``doc``, ``target``, ``resps`` (each request's responses, one a
repeat), ``filtered_resps``, ``filter``, ``metrics`` (the metrics' names) and
each metric's value (``evaluator.py``'s ``example``, lm-eval 0.4.13).

**Each document (``doc_id``) is a task, each repeat a run.** lm-eval scores a
document once per filter: with ``repeats: N`` its default filter
(``take_first``) or a vote (``majority_vote``) reduces the N responses to one
before scoring (lm-eval issues #1232, #3080), so the repeats then have no
success of their own, and such a file is refused (one response scored is not
N runs). A metric whose value is a list, one value per repeat (a task whose
``process_results`` scores every repeat), gives N runs; a scalar with
``repeats: 1`` gives one, and several runs' samples files (``--seed``) read
together are trials of one suite.

The metric and the filter are chosen explicitly when a file holds several
(``metric=``, ``filter=``; none given and several: an error listing them).
**Success** is a value of 1 (``exact_match``, ``acc``, ``pass@1`` of 1.0; a
boolean true), a failure 0; any other value (``f1``, ``bleu``, a partial
score) needs ``success_threshold`` (a value of at least it succeeds), or the
file is refused naming the values seen.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from passk.render.words import plural
from passk.results.counts import Results, ResultsError, Run, tally_runs, with_notes
from passk.results.formats._shared import QUOTE, is_number, load_json, read_text, some

__all__ = ["identity", "limited", "read_lm_eval", "sniff_file"]

_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d+)"
                   r"\.jsonl$")
_FIELDS = ("doc_id", "resps", "filter", "metrics")

#: lm-eval's stored aggregate and the mean of the rows: agreement within this.
_AGREE = 1e-9


def sniff_file(path: Path) -> bool:
    """An lm-eval samples file by its first line: a JSON object with ``doc_id``, ``resps``,
    ``filter`` and ``metrics`` (a ``.jsonl`` that the JSON Lines reader would refuse)."""
    if path.suffix.lower() != ".jsonl":
        return False
    try:
        with open(path, "rb") as f:
            first = f.readline(1 << 20)
        record = json.loads(first)
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and all(k in record for k in _FIELDS)


@dataclass(frozen=True)
class _Record:
    line: int
    doc_id: int
    filter: str
    metrics: tuple[str, ...]
    values: dict[str, Any]
    repeats: int


def _records(path: Path) -> list[_Record]:
    out: list[_Record] = []
    whole = read_text(path)
    for line, text in enumerate(whole.splitlines(), 1):
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            if not out and _one_document(whole):
                raise ResultsError(path, None, "is one JSON document (valid JSON), not "
                                   "lm-eval's samples (one JSON object a line): drop --format "
                                   "lm-eval so that passk detects its format") from None
            raise ResultsError(path, line, f"not valid JSON ({exc.msg}); is the file "
                               "truncated?") from None
        if not isinstance(record, dict):
            raise ResultsError(path, line, "an lm-eval sample must be a JSON object")
        missing = [k for k in _FIELDS if k not in record]
        if missing:
            raise ResultsError(path, line, f"missing field {missing[0]!r}: not an lm-eval "
                               "samples line (lm-eval run --log_samples writes doc_id, resps, "
                               "filter, metrics)")
        doc_id = record["doc_id"]
        if not isinstance(doc_id, int) or isinstance(doc_id, bool):
            raise ResultsError(path, line, f"field 'doc_id' must be an integer, got "
                               f"{doc_id!r:.{QUOTE}}")
        metrics = record["metrics"]
        if not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics):
            raise ResultsError(path, line, "field 'metrics' must be a list of names")
        resps = record["resps"]
        repeats = (len(resps[0]) if isinstance(resps, list) and resps
                   and isinstance(resps[0], list) else 1)
        out.append(_Record(line, doc_id, str(record["filter"]), tuple(metrics),
                           {m: record.get(m) for m in metrics}, repeats))
    if not out:
        raise ResultsError(path, None, "holds no lm-eval samples")
    return out


def _one_document(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _choose(path: Path, kind: str, flag: str, given: str | None, present: list[str]) -> str:
    if given is not None:
        if given not in present:
            raise ResultsError(path, None, f"{kind} {given!r} is not in this file; it holds "
                               f"{', '.join(present)}")
        return given
    if len(present) > 1:
        raise ResultsError(path, None, f"holds {len(present)} {kind}s ({', '.join(present)}): "
                           f"choose one with {flag} NAME")
    return present[0]


def _success(value: Any, threshold: float | None, path: Path, where: int, metric: str) -> bool:
    if isinstance(value, bool):
        return value
    if not is_number(value) or not math.isfinite(float(value)):
        raise ResultsError(path, where, f"{metric} value {value!r:.{QUOTE}} is not a number")
    if threshold is not None:
        return float(value) >= threshold
    if value in (0, 1):
        return bool(value == 1)
    raise ResultsError(path, where, f"{metric} value {value!r} is neither 0 nor 1: pass "
                       "--success-threshold X (a value of at least X succeeds) to judge a "
                       "graded metric")


def task_name(path: Path) -> str:
    """The task of ``samples_<task>_<date>.jsonl`` (the file's stem if it is not so named).

    Examples
    --------
    >>> task_name(Path("samples_gsm8k_cot_2026-12-01T22-47-56.910902.jsonl"))
    'gsm8k_cot'
    """
    m = _NAME.match(path.name)
    return m.group("task") if m else path.stem


def results_file(path: Path) -> Path | None:
    """The ``results_<date>.json`` written with a samples file (same folder, same date)."""
    m = _NAME.match(path.name)
    if not m:
        return None
    found = path.with_name(f"results_{m.group('date')}.json")
    return found if found.is_file() else None


#: The run identity of an lm-eval repeat: the document, the repeat and the run's seeds and
#: model (the same seeds and model give the same responses: the same evidence).
LM_EVAL_RUN_ID = "lm-eval repeat (document, repeat, seeds and model)"


def _seeds(path: Path) -> str:
    """The run's seeds and model, from its results file ('' without one)."""
    stored_file = results_file(path)
    config = (load_json(stored_file).get("config") or {}) if stored_file is not None else {}
    if not config:
        return ""
    seeds = " ".join(f"{k} {config.get(k)}" for k in ("random_seed", "numpy_seed",
                                                       "torch_seed", "fewshot_seed"))
    return seeds + (f" model {config.get('model')} "
                    f"{json.dumps(config.get('model_args'), sort_keys=True, default=str)}")


def _runs(records: list[_Record], task: str, metric: str, threshold: float | None,
          path: Path) -> Iterator[tuple[int, Run]]:
    seeds = _seeds(path)
    for r in records:
        value = r.values.get(metric)
        values = value if isinstance(value, list) else [value]
        if not isinstance(value, list) and r.repeats > 1:
            raise ResultsError(path, r.line, f"lm-eval scored one response for {r.repeats} "
                               f"repeats of doc {r.doc_id} (filter {r.filter!r} reduces them, "
                               "as take_first or majority_vote do): the repeats have no "
                               "success of their own. Score each repeat (a process_results "
                               "returning one value per repeat), or run lm-eval once per "
                               "--seed with repeats 1 and pass the samples files together")
        if isinstance(value, list) and len(value) != r.repeats:
            raise ResultsError(path, r.line, f"{metric} holds {len(value)} values for "
                               f"{r.repeats} repeats of doc {r.doc_id}")
        for i, v in enumerate(values):
            run_id = (LM_EVAL_RUN_ID, f"{task}/{r.doc_id}", str(i), seeds) if seeds else None
            yield r.line, Run(f"{task}/{r.doc_id}", _success(v, threshold, path, r.line,
                                                              metric), i, run_id=run_id)


def _check_stored(path: Path, task: str, metric: str, filter: str,
                  chosen: list[_Record]) -> str | None:
    stored_file = results_file(path)
    if stored_file is None:
        return None
    data = load_json(stored_file)
    stored = ((data.get("results") or {}).get(task) or {}).get(f"{metric},{filter}")
    config = (data.get("configs") or {}).get(task) or {}
    aggregation = {m.get("metric"): m.get("aggregation") for m in config.get("metric_list", [])
                   if isinstance(m, dict)}.get(metric, "mean")
    flat = [float(x) for r in chosen for x in (r.values[metric] if isinstance(
        r.values[metric], list) else [r.values[metric]]) if is_number(x) or isinstance(x, bool)]
    if not is_number(stored) or aggregation != "mean" or not flat:
        return None
    mean = sum(flat) / len(flat)
    if abs(mean - float(stored)) > _AGREE:  # type: ignore[arg-type]
        raise ResultsError(path, None, f"{stored_file.name} stores {metric},{filter} = "
                           f"{stored!r} but the samples' mean is {mean!r}: the files are not "
                           "from one run")
    return f"{metric},{filter} = {stored:g} in {stored_file.name} equals the samples' mean"


def read_lm_eval(path: str | os.PathLike[str], data: Any = None, *, duplicates: str = "error",
                 metric: str | None = None, filter: str | None = None,
                 success_threshold: float | None = None) -> Results:
    """Read one lm-eval ``samples_<task>_<date>.jsonl``: a task a document, a run a repeat.

    Parameters
    ----------
    path : str or PathLike
        The samples file ``lm-eval run --log_samples`` wrote.
    data : object, optional
        Unused (the file is JSON Lines); for the readers' common signature.
    duplicates : {'error', 'first', 'last'}
        A document logged twice for one filter.
    metric, filter : str, optional
        Which metric, and which filter's responses, decide success; needed when
        the file holds several.
    success_threshold : float, optional
        A value of at least this succeeds (for a graded metric).

    Returns
    -------
    Results
        One task ``<task>/<doc_id>`` a document, n its repeats; ``suite`` the
        task's name. ``incomplete`` names a run short of its ``n-samples``.

    Examples
    --------
    Two documents, three repeats each, every repeat scored:

    >>> import json, tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "samples_qa_2026-01-01T00-00-00.000001.jsonl"
    >>> rows = [{"doc_id": d, "resps": [["a", "b", "c"]], "filter": "none",
    ...          "metrics": ["exact_match"], "exact_match": v}
    ...         for d, v in [(0, [1.0, 0.0, 1.0]), (1, [0.0, 0.0, 0.0])]]
    >>> _ = f.write_text("".join(json.dumps(r) + "\\n" for r in rows))
    >>> r = read_lm_eval(f)
    >>> r.task_ids, r.successes.tolist(), r.totals.tolist()
    (('qa/0', 'qa/1'), [2, 0], [3, 3])
    """
    path = Path(path)
    records = _records(path)
    task = task_name(path)
    filters = sorted({r.filter for r in records})
    chosen_filter = _choose(path, "filter", "--filter", filter, filters)
    chosen = [r for r in records if r.filter == chosen_filter]
    metrics = sorted({m for r in chosen for m in r.metrics})
    chosen_metric = _choose(path, "metric", "--metric", metric, metrics)
    lacking = [r for r in chosen if chosen_metric not in r.metrics]
    if lacking:
        raise ResultsError(path, lacking[0].line, f"doc {lacking[0].doc_id} has no "
                           f"{chosen_metric!r} value")
    notes = [f"lm-eval task {task}: each document a task, each repeat a run; success is "
             f"{chosen_metric} (filter {chosen_filter}) "
             + (f"of at least {success_threshold:g}" if success_threshold is not None
                else "equal to 1")]
    stored = _check_stored(path, task, chosen_metric, chosen_filter, chosen)
    if stored:
        notes.append(stored)
    results = tally_runs(_runs(chosen, task, chosen_metric, success_threshold, path),
                         path=path, source="lm-eval", duplicates=duplicates)
    if all(r.repeats == 1 for r in chosen) and not any(
            isinstance(r.values[chosen_metric], list) for r in chosen):
        notes.append("repeats 1: one run a document; read several runs' samples files "
                     "(lm-eval --seed) together for more")
    incomplete, said = limited(path, task, len(results))
    return replace(with_notes(results, [*notes, *said], incomplete), suite=task)


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 \
        else None


def limited(path: Path, task: str, documents: int) -> tuple[list[str], list[str]]:
    """The sentences naming an lm-eval run narrower than its task, and the notes.

    lm-eval records in ``results_<date>.json`` (written beside the samples
    file, with the same date) the documents of each task, ``n-samples``
    ``{original, effective}``: ``original`` the task's documents,
    ``effective`` those run (``min(limit, original)``; ``--limit`` below 1 is
    a fraction, ``ceil(original × limit)``), and ``config.limit`` as given
    (``evaluator.py``'s ``simple_evaluate`` and ``evaluate``, lm-eval 0.4).
    ``effective`` below ``original`` is a ``--limit`` run; a samples file
    with fewer documents than ``effective`` lost some (or ran ``--samples``).
    A ``--limit`` run without ``n-samples`` for the task cannot show it ran
    every document; nor can a samples file without its results file.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> samples = d / "samples_qa_2026-01-01T00-00-00.000001.jsonl"
    >>> _ = (d / "results_2026-01-01T00-00-00.000001.json").write_text(json.dumps(
    ...     {"n-samples": {"qa": {"original": 10, "effective": 3}}, "config": {"limit": 3}}))
    >>> print(limited(samples, "qa", 3)[0][0][:64])
    lm-eval ran 3 of task qa's 10 documents (--limit 3, n-samples in
    """
    stored_file = results_file(path)
    if stored_file is None:
        return ([(f"no lm-eval results file of the same date beside {path.name} (lm-eval "
                  "writes one with every samples file): whether the run was limited (--limit) "
                  "cannot be read; pass the samples file where lm-eval wrote it")], [])
    data = load_json(stored_file)
    if not isinstance(data, dict):
        raise ResultsError(stored_file, None, "an lm-eval results file must be a JSON object")
    config, counts = _object(data.get("config")), _object(data.get("n-samples"))
    limit = config.get("limit")
    n_samples = _object(counts.get(task))
    original, effective = _whole(n_samples.get("original")), _whole(n_samples.get("effective"))
    where = f"n-samples in {stored_file.name}"
    flag = f"--limit {limit}" if limit is not None else "no --limit recorded"
    incomplete: list[str] = []
    notes: list[str] = []
    if original is not None and effective is not None and effective < original:
        incomplete.append(f"lm-eval ran {effective} of task {task}'s {original} documents "
                          f"({flag}, {where}): a limited run is not the whole evaluation; rerun "
                          "without --limit")
    elif limit is not None and (original is None or effective is None):
        incomplete.append(f"lm-eval ran with --limit {limit} ({stored_file.name} config.limit), "
                          f"and {stored_file.name} records no n-samples for task {task}: "
                          "whether it ran every document cannot be read; rerun without --limit")
    elif limit is not None:
        notes.append(f"lm-eval's --limit {limit} covers every one of task {task}'s {original} "
                     f"documents ({where})")
    if effective is not None and documents < effective:
        incomplete.append(f"lm-eval run holds {documents} of its {effective} documents "
                          f"({where})")
    return incomplete, notes


def identity(path: str | os.PathLike[str], metric: str | None = None,
             filter: str | None = None) -> dict[str, Any]:
    """What identifies an lm-eval run's evidence, for combining files as trials.

    ``run_ids``: the results file's ``date`` (one lm-eval run); ``trials``:
    each (document, repeat) with the run's seeds, so the same seeds twice
    are the same evidence; ``evaluation``: the model, its ``model_args``,
    ``gen_kwargs``, the task's hash and its few-shot setting, so that two
    models (or one model with other arguments) are never pooled.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "samples_qa_2026-01-01T00-00-00.000001.jsonl").write_text(json.dumps(
    ...     {"doc_id": 0, "resps": [["a"]], "filter": "none", "metrics": ["acc"], "acc": 1}))
    >>> _ = (d / "results_2026-01-01T00-00-00.000001.json").write_text(json.dumps(
    ...     {"date": 1.5, "config": {"model": "hf", "model_args": {"pretrained": "m"}}}))
    >>> found = identity(d / "samples_qa_2026-01-01T00-00-00.000001.jsonl")
    >>> found["run_ids"], found["evaluation"]["model_args"]
    ([('lm-eval run date', '1.5')], '{"pretrained": "m"}')
    """
    path = Path(path)
    records = _records(path)
    task = task_name(path)
    stored_file = results_file(path)
    data = load_json(stored_file) if stored_file is not None else {}
    config = data.get("config") or {}
    # the same model, arguments and seeds: the same responses (another model's are not)
    seeds = _seeds(path)
    run_ids = ([("lm-eval run date", str(data["date"]))] if "date" in data else [])
    trials = frozenset((f"{task}/{r.doc_id}", f"repeat {i} {seeds}")
                       for r in records for i in range(r.repeats)) if config else frozenset()

    def canon(v: Any) -> str:
        return json.dumps(v, sort_keys=True, default=str)

    evaluation = {"model": str(config.get("model", "")),
                  "model_args": canon(config.get("model_args")),
                  "gen_kwargs": canon(config.get("gen_kwargs")),
                  "task_hash": str((data.get("task_hashes") or {}).get(task, "")),
                  "num_fewshot": canon((data.get("n-shot") or {}).get(task))}
    if not stored_file:
        evaluation = {}
    return {"run_ids": run_ids, "evaluation": evaluation, "trials": trials,
            "documents": plural(len({r.doc_id for r in records}), "document"),
            "filters": some(sorted({r.filter for r in records}))}
