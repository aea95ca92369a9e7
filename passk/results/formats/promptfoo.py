"""promptfoo's eval output: ``promptfoo eval --repeat N -o out.json``.

The file is promptfoo's ``OutputFile``: ``evalId``, ``results`` (its
``EvaluateSummaryV3``: ``version`` 3, ``timestamp``, ``prompts``,
``results`` and ``stats`` {``successes``, ``failures``, ``errors``}),
``config``, ``metadata`` {``promptfooVersion``} and ``runtimeOptions``
{``repeat``}. Each row of ``results.results`` is an ``EvaluateResult``:
``id``, ``testIdx``, ``promptIdx``, ``provider`` {``id``, ``label``},
``prompt`` {``raw``, ``label``}, ``promptId``, ``testCase`` {``description``,
``vars``, ``options``}, ``vars``, ``success``, ``score``, ``error`` and
``failureReason`` (``ResultFailureReason``: 0 none, 1 a failed assertion,
2 an error). Field names as in promptfoo 0.123.1's ``dist/src/index.d.ts``.

**A task is the provider, the prompt and the test case** (its description and
vars), never ``testIdx``: promptfoo expands ``--repeat N`` by giving every
repeat of a test case its own ``testIdx`` (``for repeatIndex ... nextTestIdx++``
in its evaluator) and writes no repeat index, so grouping by ``testIdx`` would
turn 4 tests x 4 repeats into 16 tasks of one run each and hide every flaky
one. A task's rows are its repeats, numbered in ``testIdx`` order (the order
promptfoo gave them).

Success is promptfoo's own: the row's ``success`` (every assertion passed).
A row that ended in an error (``failureReason`` 2: the provider failed, or an
assertion could not run) is **counted as a failure** by default: an error is
never a silent pass, and never silently dropped (passk's fail-closed rule);
``errors='exclude'`` (``--errors exclude``, as for Inspect logs) leaves such rows out instead
(counted in
``Results.excluded``, and said in the notes). The file's stored
``results.stats`` must agree with its rows (successes, failed assertions,
errors), or the file is refused.

**What the file says about its own run is read, and fails closed**
(``Results.incomplete``): promptfoo writes the config it was given, whole,
even when ``--filter-first-n``, ``--filter-pattern``, ``--filter-failing``,
``--filter-providers`` or ``--filter-prompts`` ran a part of it (checked with
promptfoo 0.123.1's CLI), so a test, provider or prompt of ``config`` with no
row is a narrower evaluation than the one configured; a row whose
``response.cached`` is true repeats an earlier call from promptfoo's cache,
not a new run. **A run's identity is its row** ``id`` (a UUID promptfoo gives
each result), and the eval's is its ``evalId`` and its creation time
(``results.timestamp``, which ``promptfoo import --new-id`` keeps): a copy
of the rows under another ``evalId`` is the same evidence.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from passk.errors import BadInput
from passk.render.words import plural
from passk.results.counts import (
    Results,
    ResultsError,
    Run,
    check_duplicates_option,
    tally_arrays,
    tally_runs,
    with_notes,
)
from passk.results.formats._shared import QUOTE, load_json, some

__all__ = ["cached_rows", "identity", "read_promptfoo", "run_ids", "sniff", "unrun"]

#: promptfoo's ``ResultFailureReason``.
NONE, ASSERT, ERROR = 0, 1, 2

#: How rows left out by ``errors='exclude'`` are named.
ERRORS = "promptfoo errors (failureReason 2)"


def sniff(data: Any, path: Path) -> bool:
    """promptfoo's output file: ``evalId`` beside a ``results`` summary holding ``results``
    and ``stats``."""
    return (isinstance(data, dict) and "evalId" in data and isinstance(data.get("results"), dict)
            and "results" in data["results"] and "stats" in data["results"])


class _Row(NamedTuple):
    at: int  # the row's index in results.results
    key: str
    test_idx: int
    prompt_idx: int
    success: bool
    reason: int
    row_id: str
    planned: int
    ident: tuple[str, ...]  # provider id and label, promptId, description, vars

    @property
    def where(self) -> str:
        return f"results.results[{self.at}]"


#: ``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
#: default=str)``, with its encoder made once (``json.dumps`` makes one a call).
_ENCODE = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                           default=str).encode


def _canonical(value: Any) -> str:
    return _ENCODE(value)


class _Texts(dict[tuple[tuple[str, str], ...], str]):
    """:func:`_canonical` of the rows' prompts, each distinct prompt made once: every row
    carries its own copy of the prompt's object, the same text and label for every row."""

    def __call__(self, value: Any) -> str:
        if type(value) is not dict or not all(type(v) is str for v in value.values()):
            return _canonical(value)  # only strings: equal items are equal JSON text
        key = tuple(value.items())
        text = self.get(key)
        if text is None:
            text = self[key] = _canonical(value)
        return text


def task_key(row: dict[str, Any]) -> str:
    """The task a promptfoo row belongs to: provider, prompt and test case, never ``testIdx``.

    ``provider`` is the label (else the id), ``prompt`` the prompt's label
    (else its text), and the test case its description (if any) and its vars.

    Examples
    --------
    >>> row = {"provider": {"id": "openai:gpt-4o", "label": "gpt"}, "testIdx": 7,
    ...        "prompt": {"raw": "Say a", "label": "Say {{q}}"},
    ...        "testCase": {"description": "greets", "vars": {"q": "a"}}, "vars": {"q": "a"}}
    >>> task_key(row)
    'gpt | Say {{q}} | greets {"q":"a"}'
    """
    return _task_key(row, None)


def _task_key(row: dict[str, Any], vars_text: str | None) -> str:
    """:func:`task_key`, with the canonical text of ``row["vars"]`` when it is made already."""
    provider = row.get("provider") or {}
    name = provider.get("label") or provider.get("id") if isinstance(provider, dict) else provider
    prompt = row.get("prompt") or {}
    prompt_name = (prompt.get("label") or prompt.get("raw")) if isinstance(prompt, dict) else prompt
    case = row.get("testCase") or {}
    description = case.get("description") if isinstance(case, dict) else None
    variables = row.get("vars", case.get("vars") if isinstance(case, dict) else None) or {}
    test = vars_text if vars_text is not None and variables is row.get("vars") else \
        _canonical(variables)
    if description:
        test = f"{description} {test}"
    return f"{name} | {prompt_name} | {test}"


def _planned(case: Any, default: int) -> int:
    options = case.get("options") if isinstance(case, dict) else None
    repeat = options.get("repeat") if isinstance(options, dict) else None
    return repeat if isinstance(repeat, int) and not isinstance(repeat, bool) and repeat > 0 \
        else default


def _default_repeat(data: dict[str, Any]) -> int:
    for holder in (data.get("runtimeOptions"), (data.get("config") or {}).get("evaluateOptions")):
        if isinstance(holder, dict):
            repeat = holder.get("repeat")
            if isinstance(repeat, int) and not isinstance(repeat, bool) and repeat > 0:
                return repeat
    return 1


def _summary(path: Path, data: Any) -> tuple[dict[str, Any], list[Any]]:
    if not sniff(data, path):
        raise ResultsError(path, None, "not a promptfoo output file (expected an object with "
                           "'evalId' and 'results' {version, results, stats}, as `promptfoo "
                           "eval -o out.json` writes)")
    summary = data["results"]
    version = summary.get("version")
    if version != 3:
        raise ResultsError(path, None, f"promptfoo results version {version!r}: passk reads "
                           "version 3 (promptfoo 0.40 and later); re-export the eval with a "
                           "current promptfoo (`promptfoo export`)")
    rows = summary.get("results")
    if not isinstance(rows, list):
        raise ResultsError(path, "results", "field 'results' must be a list of rows")
    return summary, rows


def _int_field(row: dict[str, Any], name: str, path: Path, where: str) -> int:
    value = row.get(name)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ResultsError(path, where, f"field {name!r} must be an integer, got "
                           f"{value!r:.{QUOTE}}")
    return value


def _rows(path: Path, data: dict[str, Any], rows: list[Any]) -> list[_Row]:
    default = _default_repeat(data)
    prompt_text = _Texts()
    out = []
    for i, row in enumerate(rows):
        if type(row) is not dict or type(row.get("testIdx")) is not int \
                or type(row.get("promptIdx")) is not int:
            _check_row(path, row, f"results.results[{i}]")  # raises, naming the field
        success = row.get("success")
        reason = row.get("failureReason")
        if type(success) is not bool or type(reason) is not int or reason not in (0, 1, 2) \
                or success != (reason == NONE):
            _check_row(path, row, f"results.results[{i}]")
        provider = row.get("provider")
        if type(provider) is not dict or not provider.get("id"):
            _check_row(path, row, f"results.results[{i}]")
        case = row.get("testCase")
        if type(case) is not dict:
            case = case if isinstance(case, dict) else {}
        variables = row.get("vars")
        vars_text = _canonical(variables)
        prompt = row.get("prompt")
        description = case.get("description")
        ident = (str(provider["id"]), str(provider.get("label")),
                 str(row.get("promptId") or prompt_text(prompt)), str(description), vars_text)
        # task_key(row), from what is at hand
        prompt = prompt or {}
        test = vars_text if variables else _canonical(
            row.get("vars", case.get("vars")) or {})
        if description:
            test = f"{description} {test}"
        name = (prompt.get("label") or prompt.get("raw")) if isinstance(prompt, dict) else prompt
        key = f"{provider.get('label') or provider['id']} | {name} | {test}"
        options = case.get("options")
        out.append(_Row(i, key, row["testIdx"], row["promptIdx"], success, reason,
                        str(row.get("id") or ""),
                        default if options is None else _planned(case, default), ident))
    seen: dict[str, _Row] = {}
    for r in out:
        first = seen.setdefault(r.key, r)
        if first.ident != r.ident:
            raise ResultsError(path, r.where, f"task {r.key!r:.{2 * QUOTE}} names two "
                               f"different provider or prompt set-ups (also {first.where}): "
                               "give the providers distinct labels and the prompts distinct "
                               "labels")
    return out


def _check_row(path: Path, row: Any, where: str) -> None:
    """The one-line error for a row the fast path of :func:`_rows` did not pass."""
    if not isinstance(row, dict):
        raise ResultsError(path, where, "a promptfoo row must be an object")
    _int_field(row, "testIdx", path, where)
    _int_field(row, "promptIdx", path, where)
    success = row.get("success")
    if not isinstance(success, bool):
        raise ResultsError(path, where, f"field 'success' must be true or false, got "
                           f"{success!r:.{QUOTE}}")
    reason = row.get("failureReason")
    if reason not in (NONE, ASSERT, ERROR) or isinstance(reason, bool):
        raise ResultsError(path, where, f"field 'failureReason' must be 0 (none), 1 (a "
                           f"failed assertion) or 2 (an error), got {reason!r:.{QUOTE}}")
    if success != (reason == NONE):
        raise ResultsError(path, where, f"'success' {str(success).lower()} contradicts "
                           f"'failureReason' {reason}: is the file edited by hand?")
    if not isinstance(row.get("provider"), dict) or not row["provider"].get("id"):
        raise ResultsError(path, where, "missing field 'provider' {id, label}")


def _check_stats(path: Path, summary: dict[str, Any], rows: list[_Row]) -> None:
    stats = summary.get("stats")
    if not isinstance(stats, dict):
        raise ResultsError(path, "results.stats", "missing the stored stats {successes, "
                           "failures, errors}")
    counted = {"successes": sum(r.reason == NONE for r in rows),
               "failures": sum(r.reason == ASSERT for r in rows),
               "errors": sum(r.reason == ERROR for r in rows)}
    wrong = [f"{name} {stats.get(name)!r} but the rows hold {n}"
             for name, n in counted.items() if stats.get(name) != n]
    if wrong:
        raise ResultsError(path, "results.stats", "the stored stats disagree with the rows ("
                           + "; ".join(wrong) + "): the file is truncated, edited or merged; "
                           "re-export it (`promptfoo export <evalId> -o out.json`)")


#: The run identity of a promptfoo row without an ``id``: its eval, test and prompt indexes.
PROMPTFOO_RUN_ID = "promptfoo row (evalId, testIdx, promptIdx)"

#: The run identity of a promptfoo row: its ``id``, a UUID promptfoo gives each result
#: (``EvalResult`` in promptfoo's ``src/models/evalResult.ts``), which a copy of the rows
#: under another ``evalId`` keeps.
PROMPTFOO_ROW_ID = "promptfoo row id"


def _run_id(r: _Row, eval_id: str) -> tuple[str, ...]:
    return ((PROMPTFOO_ROW_ID, r.row_id) if r.row_id else
            (PROMPTFOO_RUN_ID, eval_id, str(r.test_idx), str(r.prompt_idx)))


def _runs(rows: list[_Row], exclude: bool, eval_id: str
          ) -> Iterator[tuple[str, Run]]:
    by_task: dict[str, list[_Row]] = defaultdict(list)
    for r in rows:
        by_task[r.key].append(r)
    for task, group in by_task.items():
        for i, r in enumerate(sorted(group, key=lambda r: (r.test_idx, r.prompt_idx))):
            run_id = _run_id(r, eval_id)
            if r.reason == ERROR and exclude:
                yield r.where, Run(task, False, i, excluded=True, excluded_as=ERRORS,
                                   run_id=run_id)
            else:
                yield r.where, Run(task, r.success, i, run_id=run_id)


def _tally(rows: list[_Row], exclude: bool, eval_id: str, path: Path,
           duplicates: str) -> Results:
    """``tally_runs(_runs(rows, ...))`` in bulk: the rows' task indexes, successes and rows
    left out as arrays. A run numbered by the reader never repeats its (task, trial), and no
    row carries a risk; a row id seen twice goes the one-by-one way, which names both."""
    check_duplicates_option(duplicates)
    order: dict[str, int] = {}
    index = np.fromiter((order.setdefault(r.key, len(order)) for r in rows), dtype=np.int64,
                        count=len(rows))
    ok = np.fromiter((r.success for r in rows), dtype=bool, count=len(rows))
    out = (np.fromiter((r.reason == ERROR for r in rows), dtype=bool, count=len(rows))
           if exclude else np.zeros(len(rows), dtype=bool))
    ids = [_run_id(r, eval_id) for r in rows]
    distinct = set(ids)
    if len(distinct) < len(ids) and duplicates == "error":
        counted = [i for i, o in zip(ids, out.tolist()) if not o]
        if len(set(counted)) < len(counted):
            return tally_runs(_runs(rows, exclude, eval_id), path=path, source="promptfoo",
                              duplicates=duplicates)
    results = tally_arrays(tuple(order), index, ok, out, ("read-only",) * len(order),
                           "promptfoo", None, ERRORS)
    return replace(results, run_ids=frozenset(distinct), unidentified=0)


def read_promptfoo(path: str | os.PathLike[str], data: Any = None, *,
                   duplicates: str = "error", errors: str = "fail") -> Results:
    """Read ``promptfoo eval -o out.json``: one task a (provider, prompt, test case), its
    repeats as runs.

    ``Results.incomplete`` names a filtered run (a test, provider or prompt of
    the file's ``config`` with no row: :func:`unrun`), cached rows
    (``response.cached``: :func:`cached_rows`) and tasks with fewer rows than
    their repeats. Each run's identity is its row ``id``.

    Parameters
    ----------
    path : str or PathLike
        The JSON file ``promptfoo eval -o`` (or ``promptfoo export``) wrote.
    data : object, optional
        ``path``'s parsed JSON, when the caller has read it.
    duplicates : str
        Accepted for the readers' common signature; repeats are numbered in
        ``testIdx`` order, so no (task, trial) repeats.
    errors : {'fail', 'exclude'}, default 'fail'
        What a row that ended in an error (``failureReason`` 2) is: a failure,
        or left out (counted, and named in ``Results.overrides``).

    Returns
    -------
    Results
        One task a (provider, prompt, test case) (:func:`task_key`), n its
        repeats; ``incomplete`` names tasks with fewer rows than ``--repeat``
        (or the test's ``options.repeat``).

    Examples
    --------
    Two repeats of one test, as promptfoo writes them (each its own testIdx):

    >>> row = lambda i, ok: {"id": f"r{i}", "testIdx": i, "promptIdx": 0, "success": ok,
    ...     "failureReason": 0 if ok else 1, "provider": {"id": "echo"},
    ...     "prompt": {"raw": "hi", "label": "hi"}, "vars": {"q": "a"},
    ...     "testCase": {"vars": {"q": "a"}}}
    >>> data = {"evalId": "eval-1", "runtimeOptions": {"repeat": 2},
    ...         "results": {"version": 3, "results": [row(0, True), row(1, False)],
    ...                     "stats": {"successes": 1, "failures": 1, "errors": 0}}}
    >>> r = read_promptfoo("out.json", data)
    >>> r.task_ids, r.totals.tolist(), r.successes.tolist()
    (('echo | hi | {"q":"a"}',), [2], [1])
    """
    path = Path(path)
    data = load_json(path) if data is None else data
    summary, raw = _summary(path, data)
    rows = _rows(path, data, raw)
    if not rows:
        raise ResultsError(path, None, "promptfoo eval holds no rows (results.results is "
                           "empty)")
    _check_stats(path, summary, rows)
    planned: dict[str, int] = {}
    for r in rows:
        planned.setdefault(r.key, r.planned)
    counts = Counter(r.key for r in rows)
    over = [f"{t}: {n} rows for {planned[t]} repeats" for t, n in counts.items()
            if n > planned[t]]
    if over:
        raise ResultsError(path, None, f"{plural(len(over), 'task')} with more rows than "
                           f"repeats ({some(over, 3)}): two test cases with the same "
                           "description and vars, or two providers or prompts with one id and "
                           "label, cannot be told apart; give them distinct descriptions or "
                           "labels")
    notes: list[str] = [("promptfoo's rows grouped by provider, prompt and test case (each "
                        "repeat has its own testIdx and no repeat index): repeats numbered "
                        "in testIdx order")]
    if errors not in ("fail", "exclude"):
        raise BadInput(f"errors ({errors!r}) must be 'fail' or 'exclude'")
    exclude = errors == "exclude"
    errored = sum(r.reason == ERROR for r in rows)
    if errored and exclude:
        notes.append(f"{plural(errored, 'row')} that ended in an error (failureReason 2) left "
                     "out, as --errors exclude asks")
    elif errored:
        notes.append(f"{plural(errored, 'row')} that ended in an error (failureReason 2, not a "
                     "failed assertion) counted as "
                     f"{'a failure' if errored == 1 else 'failures'}; --errors exclude leaves "
                     "them out")
    if all(p == 1 for p in planned.values()):
        notes.append("promptfoo eval without --repeat: one run a task, so pass^k and pass@k "
                     "for k > 1 have no evidence; run `promptfoo eval --repeat N`")
    results = _tally(rows, exclude, str(data.get("evalId")), path, duplicates)
    short = [f"{t}: {counts[t]} of {planned[t]}" for t in results.task_ids
             if counts[t] < planned[t]]
    incomplete = [*unrun(data, raw), *cached_rows(raw)]
    if short:
        incomplete.append(f"promptfoo eval holds fewer repeats than planned for "
                          f"{plural(len(short), 'task')} ({some(short)})")
    providers = sorted({t.split(" | ", 1)[0] for t in results.task_ids})
    left_out = int(results.excluded.sum())
    said = (f"promptfoo rows that ended in an error left out, not counted as failures "
            f"(--errors exclude): {left_out} left out")
    overrides = (said,) if exclude else ()
    _COUNTED.clear()  # the evidence's identity from the rows counted: the file parsed once
    if (key := _file_key(path)) is not None:
        _COUNTED[key] = _identity(data, rows)
    return replace(with_notes(results, notes, incomplete), suite=", ".join(providers),
                   overrides=results.overrides + overrides)


#: The identity (:func:`run_ids`) of the file :func:`read_promptfoo` read last, by the
#: file's path and status: ``run_ids`` of that file, unchanged, takes it without parsing
#: the file again (``read_results`` asks right after reading).
_COUNTED: dict[tuple[Any, ...], dict[str, Any]] = {}


def _file_key(path: Path) -> tuple[Any, ...] | None:
    """A file's path and status (device, inode, size, modification time), None for no file."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (os.path.realpath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def run_ids(path: str | os.PathLike[str], data: Any = None) -> dict[str, Any]:
    """What identifies a promptfoo eval's evidence: ``evalId`` and the eval's creation time
    (``results.timestamp``), each row's (task, row id), and the evaluation (providers,
    prompts).

    Examples
    --------
    >>> row = {"id": "r0", "testIdx": 0, "promptIdx": 0, "success": True,
    ...        "failureReason": 0, "provider": {"id": "echo"}, "vars": {}}
    >>> data = {"evalId": "eval-1", "results": {"version": 3, "results": [row],
    ...         "stats": {"successes": 1, "failures": 0, "errors": 0}}}
    >>> found = run_ids("out.json", data)
    >>> found["run_ids"], sorted(found["trials"])
    ([('promptfoo evalId', 'eval-1')], [('echo | None | {}', 'promptfoo row id r0')])
    """
    path = Path(path)
    if data is None and (key := _file_key(path)) is not None and key in _COUNTED:
        return _COUNTED.pop(key)
    data = load_json(path) if data is None else data
    _, raw = _summary(path, data)
    return _identity(data, _rows(path, data, raw))


def _identity(data: dict[str, Any], rows: list[_Row]) -> dict[str, Any]:
    """:func:`run_ids` of an eval's parsed JSON and its rows."""
    eval_id = str(data.get("evalId"))
    trials = frozenset((r.key, " ".join(_run_id(r, eval_id))) for r in rows)
    created = _created(data)
    config: dict[str, Any] = data["config"] if isinstance(data.get("config"), dict) else {}
    providers = config.get("providers")
    named = ([{"id": p.get("id"), "label": p.get("label")} if isinstance(p, dict) else p
              for p in providers] if isinstance(providers, list)
             else sorted({r.key.split(" | ")[0] for r in rows}))
    # a provider's config (temperature, model options) as a digest: it may hold an API key
    evaluation = {"providers": _canonical(named),
                  "provider_config_sha256": hashlib.sha256(
                      _canonical(providers).encode()).hexdigest()[:16],
                  "prompts": _canonical(config.get("prompts"))}
    return {"run_ids": [("promptfoo evalId", eval_id),
                        *([("promptfoo eval created", created)] if created else [])],
            "evaluation": evaluation, "trials": trials}


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _created(data: dict[str, Any]) -> str | None:
    """When the eval was created: ``results.timestamp`` (else ``metadata.evaluationCreatedAt``),
    which ``promptfoo import --new-id`` keeps while it gives the eval and its rows new ids."""
    for value in (_object(data.get("results")).get("timestamp"),
                  _object(data.get("metadata")).get("evaluationCreatedAt")):
        if isinstance(value, str) and value:
            return value
    return None


#: A config provider promptfoo loads from a file into several (``file://providers.yaml``): its
#: rows cannot be told from the entry, so it is not checked.
_LOADED = (".yaml", ".yml", ".json", ".jsonl", ".csv")


def _runs_test(test: dict[str, Any], case: Any) -> bool:
    """Whether a row's ``testCase`` is (an expansion of) the config's ``test``: the same
    description, and each var equal (or, a var given as a list, one of its values); a var
    loaded from a file (``file://``) is not compared."""
    if not isinstance(case, dict):
        return False
    if test.get("description") is not None and case.get("description") != test["description"]:
        return False
    variables = test.get("vars")
    given = _object(case.get("vars"))
    if not isinstance(variables, dict):
        return True
    for name, value in variables.items():
        if isinstance(value, str) and value.startswith("file://"):
            continue
        found = given.get(name, _ABSENT)
        if found == value or (isinstance(value, list) and found in value):
            continue
        return False
    return True


_ABSENT = object()


def _named_test(i: int, test: dict[str, Any]) -> str:
    said = test.get("description") or _canonical(test.get("vars") or {})
    return f"#{i + 1} {str(said)[:QUOTE]}"


def _provider_names(entry: Any) -> set[str] | None:
    """The ids and labels a config provider's rows carry; None for one that is loaded
    from a file (or built in code) and cannot be told from its entry."""
    if isinstance(entry, str):
        return None if entry.startswith("file://") and entry.endswith(_LOADED) else {entry}
    if isinstance(entry, dict):
        if isinstance(entry.get("label"), str):
            return {entry["label"]}
        if isinstance(entry.get("id"), str):
            return {entry["id"]}
    return None


def _prompt_name(entry: Any) -> str | None:
    """The label a config prompt's rows carry (its label, else its text); None for a prompt
    loaded from a file."""
    if isinstance(entry, str):
        return None if entry.startswith("file://") else entry
    if isinstance(entry, dict):
        for key in ("label", "raw"):
            if isinstance(entry.get(key), str) and not entry[key].startswith("file://"):
                return str(entry[key])
    return None


def unrun(data: Any, raw: list[Any]) -> list[str]:
    """The sentences naming what the eval's ``config`` lists but no row ran: a filtered eval.

    promptfoo writes the config as given (its tests, providers and prompts),
    and runs a part of it under ``--filter-first-n``, ``--filter-pattern``,
    ``--filter-failing``, ``--filter-providers`` or ``--filter-prompts``; a
    part is not the evaluation. A test is run when a row's ``testCase`` has
    its description and vars (a var given as a list expands into one test a
    value, as promptfoo does). Entries loaded from files are not checked.

    Examples
    --------
    >>> row = {"testCase": {"description": "a", "vars": {"q": 1}}, "provider": {"id": "echo"},
    ...        "prompt": {"label": "hi"}}
    >>> config = {"tests": [{"description": "a", "vars": {"q": 1}}, {"description": "b"}],
    ...           "providers": ["echo"], "prompts": ["hi"]}
    >>> print(unrun({"config": config}, [row])[0][:78])
    promptfoo eval ran 1 of the 2 tests its config lists: 1 test has no row (#2 b)
    """
    config = data.get("config") if isinstance(data, dict) else None
    if not isinstance(config, dict):
        return []
    rows = [row for row in raw if isinstance(row, dict)]
    said = []
    tests = config.get("tests")
    if isinstance(tests, list):
        listed = [(i, t) for i, t in enumerate(tests) if isinstance(t, dict)]
        missing = [_named_test(i, t) for i, t in listed
                   if not any(_runs_test(t, row.get("testCase")) for row in rows)]
        if missing:
            said.append(f"promptfoo eval ran {len(listed) - len(missing)} of the {len(listed)} "
                        f"tests its config lists: {plural(len(missing), 'test')} "
                        f"{'has' if len(missing) == 1 else 'have'} no row ({some(missing)}); "
                        "a filtered eval (--filter-first-n, --filter-pattern, --filter-failing) "
                        "is not the whole one: rerun without the filter")
    seen = {str(v) for row in rows if isinstance(row.get("provider"), dict)
            for v in (row["provider"].get("id"), row["provider"].get("label")) if v}
    providers = config.get("providers")
    if isinstance(providers, list):
        named = [_provider_names(p) for p in providers]
        missing = [min(n) for n in named if n is not None and not n & seen]
        if missing:
            said.append(f"promptfoo eval has no row from {plural(len(missing), 'provider')} its "
                        f"config lists ({some(missing)}): a filtered eval (--filter-providers) "
                        "is not the whole one: rerun without the filter")
    labels = {str(row["prompt"].get(k)) for row in rows if isinstance(row.get("prompt"), dict)
              for k in ("label", "raw") if row["prompt"].get(k) is not None}
    prompts = config.get("prompts")
    if isinstance(prompts, list):
        missing = [str(n)[:QUOTE] for n in map(_prompt_name, prompts)
                   if n is not None and n not in labels]
        if missing:
            said.append(f"promptfoo eval has no row from {plural(len(missing), 'prompt')} its "
                        f"config lists ({some(missing)}): a filtered eval (--filter-prompts) is "
                        "not the whole one: rerun without the filter")
    return said


def cached_rows(raw: list[Any]) -> list[str]:
    """The sentence naming rows answered from promptfoo's cache (``response.cached``).

    promptfoo caches provider responses by default (``promptfoo eval`` without
    ``--no-cache``; ``--repeat`` bypasses the cache): a cached row repeats an
    earlier call's response, so it is not a run of its own.

    Examples
    --------
    >>> print(cached_rows([{"response": {"cached": True}}, {"response": {}}])[0][:58])
    1 of 2 promptfoo rows answered from promptfoo's cache (res
    """
    cached = sum(isinstance(row, dict) and isinstance(row.get("response"), dict)
                 and row["response"].get("cached") is True for row in raw)
    if not cached:
        return []
    return [(f"{cached} of {len(raw)} promptfoo rows answered from promptfoo's cache "
             "(response.cached): a cached response repeats an earlier call, not a run of its "
             "own; rerun with `promptfoo eval --no-cache`")]


identity = run_ids
