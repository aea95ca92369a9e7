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
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from passk.results.counts import Results, Source
from passk.results.runlog import read_log_header

__all__ = ["IDENTITIES", "content_sha256", "source_of"]

_CHUNK = 1 << 20


def content_sha256(path: str | os.PathLike[str], known: Mapping[str, str] | None = None) -> str:
    """The SHA-256 of a file's bytes, or of a directory's files (names and bytes).

    A directory's digest covers every file under it in sorted order, each as
    its relative path and its own digest, so a copied run directory has the
    digest of the original. ``known`` gives the digests of files a reader has
    just hashed as it parsed them (by the path as ``os.path.join`` of ``path`` and
    the names under it forms it), which are then not read again.

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
        return _file_sha256(p)
    root = os.fspath(p)
    known = known or {}
    digest = hashlib.sha256()
    for parts in sorted(_files_under(root, ())):
        member = os.path.join(root, *parts)
        digest.update("/".join(parts).encode() + b"\0")
        found = known.get(member)
        digest.update((found or _file_sha256(member)).encode() + b"\n")
    return digest.hexdigest()


def _file_sha256(path: str | os.PathLike[str]) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _files_under(root: str, parts: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Every file under ``root/parts`` as its names from ``root``: what ``Path.rglob("*")``
    lists and ``is_file()`` keeps (a folder linked to is listed, not entered; a file linked
    to is a file; a folder that cannot be listed is skipped), from one scan a folder."""
    found: list[tuple[str, ...]] = []
    folders = [parts]
    while folders:
        here = folders.pop()
        try:
            with os.scandir(os.path.join(root, *here)) as scan:
                entries = list(scan)
        except PermissionError:
            continue
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                if not entry.is_symlink():
                    folders.append((*here, entry.name))
                continue
            try:
                is_file = entry.is_file()
            except OSError:
                is_file = False
            if is_file:
                found.append((*here, entry.name))
    return found


def _canonical(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def _passk_log(path: Path, results: Results, trials: bool) -> dict[str, Any]:
    """A ``passk run`` / pytest-plugin log: the root seed and the protocol (each record's
    task, seed and attempt are its run ids, read by the reader)."""
    if not path.is_file():
        return {}
    header = read_log_header(path) or {}
    run_ids = []
    if header.get("seed") is not None:
        run_ids.append(("passk run seed", str(header["seed"])))
    evaluation = []
    if results.protocol is not None:
        evaluation.append(("protocol", results.protocol.fingerprint))
    return {"run_ids": run_ids, "evaluation": evaluation}


def _inspect_log(path: Path, results: Results, trials: bool) -> dict[str, Any]:
    """An Inspect AI log: ``eval_id`` and ``run_id``; the task, its arguments, the model
    and its roles, the solver or plan, the generate config and the dataset
    (:func:`passk.results.formats.inspect_log.identity`). Read only when files are
    combined (``trials``): a lone log has nothing to be compared with."""
    if not trials or not path.is_file():
        return {}
    from passk.results.formats.inspect_log import identity, read_log

    found = identity(read_log(path)[0])
    ids = [("Inspect eval_id", found["run_ids"][0]), ("Inspect run_id", found["run_ids"][1])]
    # the selected samples are the task set, which combining checks on its own
    return {"run_ids": [(what, i) for what, i in ids if i],
            "evaluation": [(k, "" if v is None else str(v))
                           for k, v in found["evaluation"].items() if k != "sample_ids"]}


def _harbor_job(path: Path, results: Results, trials: bool) -> dict[str, Any]:
    """A Harbor job: its job ids (a trial's id alone); agent, version, model, dataset."""
    from passk.results.formats.harbor import digests, identity

    found = identity(path, eval_key=_harbor_key(results))
    return {"run_ids": [("Harbor job", str(i)) for i in found["run_ids"]],
            "evaluation": [(k, _canonical(v)) for k, v in found["evaluation"].items()],
            "digests": digests(path)}


def _harbor_key(results: Results) -> str | None:
    return results.suite or None


def _promptfoo(path: Path, results: Results, trials: bool) -> dict[str, Any]:
    """A promptfoo eval: its evalId, each row's (task, evalId testIdx promptIdx id); the
    providers and prompts (:func:`passk.results.formats.promptfoo.run_ids`)."""
    from passk.results.formats.promptfoo import run_ids

    found = run_ids(path)
    return {"run_ids": found["run_ids"],
            "evaluation": [(k, _canonical(v)) for k, v in found["evaluation"].items()],
            "trials": found["trials"] if trials else frozenset()}


def _lm_eval(path: Path, results: Results, trials: bool) -> dict[str, Any]:
    """An lm-eval run: its date, each (document, repeat) with the seeds; the model, its
    args, gen_kwargs and the task's hash (:func:`passk.results.formats.lm_eval.identity`)."""
    from passk.results.formats.lm_eval import identity

    found = identity(path)
    return {"run_ids": found["run_ids"],
            "evaluation": [(k, _canonical(v)) for k, v in found["evaluation"].items()],
            "trials": found["trials"] if trials else frozenset()}


#: One reader of ids per producer (``Results.source``); others are known by content only.
IDENTITIES: dict[str, Callable[[Path, Results, bool], dict[str, Any]]] = {
    "jsonl": _passk_log,
    "inspect": _inspect_log,
    "harbor": _harbor_job,
    "promptfoo": _promptfoo,
    "lm-eval": _lm_eval,
}


def source_of(path: str | os.PathLike[str], results: Results, *, trials: bool = True) -> Source:
    """Describe the file ``results`` were read from: its digest, run ids and evaluation.

    ``trials`` are the records' run identities (``results.run_ids``);
    ``trials=False`` leaves out what only combining files needs (an Inspect
    log's evaluation, read a second time).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from passk.results.read import read_results
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "runs.jsonl"
    >>> _ = p.write_text('{"task_id": "a", "trial": 0, "success": true}\\n')
    >>> src = source_of(p, read_results(p))
    >>> src.producer, src.identified, len(src.sha256)
    ('jsonl', False, 64)
    """
    p = Path(path)
    identify = IDENTITIES.get(results.source)
    found = identify(p, results, trials) if identify is not None else {}
    return Source(path=os.fspath(path), sha256=content_sha256(p, found.get("digests")),
                  producer=results.source,
                  run_ids=tuple(found.get("run_ids", ())),
                  evaluation=tuple(found.get("evaluation", ())),
                  trials=results.run_ids,
                  identified=bool(results.run_ids) and results.unidentified == 0)
