"""What makes a results file that evidence: its content, the producer's run ids, the evaluation.

:func:`source_of` describes one file (or run directory) as a
:class:`passk.results.Source`, so that :func:`passk.results.combine_trials`
can refuse the same evidence twice (a copy, a log of the same seeds, the same
Inspect log under another name) and two evaluations read as trials of one
(another model, other task arguments). Each producer records different ids;
one function per producer reads them, registered in :data:`IDENTITIES`.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from passk.results.counts import Results, Source
from passk.results.runlog import read_log_header, read_run_log

__all__ = ["IDENTITIES", "content_sha256", "source_of"]

_CHUNK = 1 << 20


def content_sha256(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes, or of a directory's files (names and bytes).

    A directory's digest covers every file under it in sorted order, each as
    its relative path and its own digest, so a copied run directory has the
    digest of the original.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.jsonl").write_text("x"); _ = (d / "b.jsonl").write_text("x")
    >>> content_sha256(d / "a.jsonl") == content_sha256(d / "b.jsonl")
    True
    """
    p = Path(path)
    if p.is_file():
        with open(p, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    digest = hashlib.sha256()
    for member in sorted(q for q in p.rglob("*") if q.is_file()):
        digest.update(member.relative_to(p).as_posix().encode() + b"\0")
        digest.update(content_sha256(member).encode() + b"\n")
    return digest.hexdigest()


def _canonical(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def _passk_log(path: Path, results: Results, trials: bool) -> dict[str, Any]:
    """A ``passk run`` / pytest-plugin log: the root seed, the protocol, each record's seed."""
    if not path.is_file():
        return {}
    header = read_log_header(path) or {}
    run_ids = []
    if header.get("seed") is not None:
        run_ids.append(("passk run seed", str(header["seed"])))
    evaluation = []
    if results.protocol is not None:
        evaluation.append(("protocol", results.protocol.fingerprint))
    seeds = set()
    for _, record in read_run_log(path).records if trials else ():
        if isinstance(record, Mapping) and record.get("seed") is not None:
            attempt = record.get("attempt")
            seeds.add((str(record.get("task_id")), f"seed {record['seed']}"
                       + (f" attempt {attempt}" if attempt is not None else "")))
    return {"run_ids": run_ids, "evaluation": evaluation, "trials": frozenset(seeds)}


#: The fields of an Inspect log's ``eval`` header that define the evaluation.
#: (The epochs, limits and sample selection are not: more epochs are more trials.)
INSPECT_EVALUATION = ("task", "task_args", "model", "model_roles", "model_args",
                      "model_generate_config", "solver", "solver_args", "dataset")


def _inspect_header(path: Path) -> Mapping[str, Any]:
    """The log's header: ``eval`` (the EvalSpec) and ``plan``, read without Inspect."""
    if path.suffix == ".eval":
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            for name in ("header.json", "_journal/start.json"):
                if name in names:
                    data = json.loads(z.read(name))
                    return data if isinstance(data, Mapping) else {}
        return {}
    with open(path, encoding="utf-8-sig") as f:
        data = json.load(f)
    return data if isinstance(data, Mapping) else {}


def _inspect_log(path: Path, results: Results, trials: bool) -> dict[str, Any]:
    """An Inspect AI log: ``eval_id`` and ``run_id``; model, task arguments, plan, config."""
    if not path.is_file():
        return {}
    header = _inspect_header(path)
    spec = header.get("eval") or {}
    run_ids = [(f"Inspect {key}", str(spec[key])) for key in ("eval_id", "run_id")
               if spec.get(key)]
    evaluation = []
    for key in INSPECT_EVALUATION:
        value = spec.get(key)
        if key == "dataset" and isinstance(value, Mapping):
            value = {k: v for k, v in value.items() if k in ("name", "location")}
        # every field, an absent or empty one as "": no arguments and some differ
        evaluation.append((key, "" if value in (None, {}, [], "") else _canonical(value)))
    plan = header.get("plan")
    if isinstance(plan, Mapping) and plan.get("steps"):
        evaluation.append(("plan", _canonical({"steps": plan.get("steps"),
                                               "config": plan.get("config")})))
    return {"run_ids": run_ids, "evaluation": evaluation}


def _harbor_job(path: Path, results: Results, trials: bool) -> dict[str, Any]:
    """A Harbor job: its job ids (a trial's id alone); agent, version, model, dataset."""
    from passk.results.formats.harbor import identity

    found = identity(path, eval_key=_harbor_key(results))
    return {"run_ids": [("Harbor job", str(i)) for i in found["run_ids"]],
            "evaluation": [(k, _canonical(v)) for k, v in found["evaluation"].items()]}


def _harbor_key(results: Results) -> str | None:
    return results.suite or None


#: One reader of ids per producer (``Results.source``); others are known by content only.
IDENTITIES: dict[str, Callable[[Path, Results, bool], dict[str, Any]]] = {
    "jsonl": _passk_log,
    "inspect": _inspect_log,
    "harbor": _harbor_job,
}


def source_of(path: str | os.PathLike[str], results: Results, *, trials: bool = True) -> Source:
    """Describe the file ``results`` were read from: its digest, run ids and evaluation.

    ``trials=False`` leaves out each record's (task, seed, attempt), which
    takes a second read of a run log: only combining files needs them.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from passk.results.read import read_results
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "runs.jsonl"
    >>> _ = p.write_text('{"task_id": "a", "success": true, "seed": 7, "attempt": 0}\\n')
    >>> src = source_of(p, read_results(p))
    >>> src.producer, sorted(src.trials)
    ('jsonl', [('a', 'seed 7 attempt 0')])
    """
    p = Path(path)
    found = IDENTITIES.get(results.source, lambda _p, _r, _t: {})(p, results, trials)
    return Source(path=os.fspath(path), sha256=content_sha256(p), producer=results.source,
                  run_ids=tuple(found.get("run_ids", ())),
                  evaluation=tuple(found.get("evaluation", ())),
                  trials=found.get("trials", frozenset()))
