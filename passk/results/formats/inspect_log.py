"""Inspect AI eval logs (``.eval`` or ``.json``): one run a sample epoch, read without Inspect.

A ``.eval`` log is a zip of JSON documents (Inspect's ``log/_recorders/eval.py``):
``header.json`` (the eval's spec, plan, results and status; an unfinished log
has ``_journal/start.json`` instead), ``summaries.json`` (one summary a sample
epoch, with its scores; an unfinished log has ``_journal/summaries/<n>.json``),
``reductions.json`` and ``samples/<id>_epoch_<n>.json`` (the transcripts). This
reader takes the header and the summaries, one zip member at a time, and never
the transcripts, so its memory follows the scores, not the log's size
(``benchmarks/bench_inspect_log.py``). A ``.json`` log is one JSON object; it
is scanned one sample at a time, keeping only each sample's id, epoch, scores
and error. Only the standard library is used (and, for the Zstandard-compressed
members Inspect writes since 2025, Python 3.14's ``compression.zstd``, or the
``zstandard`` or ``backports.zstd`` package): no ``inspect_ai``.

As Inspect's own reader, a ``.eval`` log's re-logged sample epoch (a
requeued sample) counts once, its last record; a ``.json`` log's repeated
sample epoch follows ``duplicates``.

Which score values count as a success (:class:`SuccessRule`, the one rule of
both this reader and :mod:`passk.integrations.inspect`) is said in every report's notes:

- By default, Inspect's binary convention (its ``value_to_float``): a value
  it maps to 1 (``"C"``, ``True``, ``1``, ``"yes"``, ``"true"``, ``"1"``)
  passes, one it maps to 0 (``"I"``, ``"N"``, ``False``, ``0``, ``"no"``,
  ``"false"``, ``"0"``) fails. Any other value (a grade ``"8"``, partial
  credit ``0.5`` or ``"P"``, an unscored NaN) is an error naming the values
  seen and how to choose: never a silent failure.
- ``success_values``: values that count as a success, **added to** the
  values that pass by default; every other value is then a failure.
- ``success_threshold``: a value whose number (Inspect's ``value_to_float``)
  is at least the threshold is a success, as Inspect's ``pass_k(k,
  value=...)`` counts (its default threshold is 1.0).
- ``score_key``: for dict-valued scores, the key whose value is judged.

A log written with passk's early stopping (``passk.integrations.inspect.Curtailment``,
manager ``"passk.gate.curtailment"``) carries the protocol it ran under and the
samples it settled early: those epochs were not run because no outcome of
them could change the gate's decision, so the log is complete (a note gives
the counts) and ``Results.protocol`` binds the gate. Early stops by any other
manager are epochs that never ran: the log is incomplete.
"""

from __future__ import annotations

import json
import math
import os
import re
import struct
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

from passk.errors import BadInput
from passk.render.words import plural
from passk.results.counts import (
    Results,
    ResultsError,
    Run,
    tally_runs,
    with_notes,
    with_overrides,
)
from passk.results.formats._shared import QUOTE, some
from passk.results.protocol import Protocol

__all__ = ["ERRORED_SAMPLES", "ERRORS", "INSPECT_RUN_ID", "INSPECT_SAMPLE_UUID",
           "INSPECT_SUCCESS_VALUES", "PASSK_MANAGER", "SuccessRule", "identity", "is_success",
           "read_inspect", "read_inspect_trajectories", "read_log", "sniff", "sniff_file",
           "value_to_float"]

#: Score values that count as a success by default (Inspect's accuracy convention).
INSPECT_SUCCESS_VALUES = ("C",)

#: Why Inspect samples are left out (``Results.excluded_reason``).
ERRORED_SAMPLES = "errored samples"

#: What an errored sample epoch may be (``errors=``): a failure (the default), or left out.
ERRORS = ("fail", "exclude")

#: What an Inspect run's identity is where its sample records no ``uuid``: the log's eval id,
#: the sample id and the epoch.
INSPECT_RUN_ID = "Inspect sample (eval_id, sample id, epoch)"

#: What an Inspect run's identity is: its sample's ``uuid`` (Inspect 0.3.70 and later), which
#: Inspect mints once a sample epoch and keeps through retries, ``inspect eval-retry`` and
#: copies of the log; a copy under a new ``eval_id`` keeps it.
INSPECT_SAMPLE_UUID = "Inspect sample uuid"

#: The early-stopping manager name of passk's curtailment.
PASSK_MANAGER = "passk.gate.curtailment"

#: Inspect's ``value_to_float``: its letter grades, compared as they are.
_LETTERS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
#: ... and the boolean words, compared in lower case.
_WORDS = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}


def sniff(data: Any, path: Path) -> bool:
    """An Inspect log in JSON: an object with ``eval`` and samples, a version or a status."""
    return isinstance(data, dict) and "eval" in data and (
        "samples" in data or "version" in data or "status" in data)


#: How Inspect's ``write_eval_log`` starts a .json log: ``{"version": 2, "status": ...``.
_JSON_HEAD = re.compile(rb'\A(\xef\xbb\xbf)?\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:')


def sniff_file(path: Path) -> bool:
    """An Inspect .json log by its first bytes (so that it is streamed, not loaded whole)."""
    if path.suffix.lower() != ".json":
        return False
    try:
        with open(path, "rb") as f:
            return _JSON_HEAD.match(f.read(256)) is not None
    except OSError:
        return False


# --------------------------------------------------------------------------
# which values count as a success: the one rule
# --------------------------------------------------------------------------


def value_to_float(value: Any) -> float | None:
    """Inspect's ``value_to_float`` for one scalar; None where Inspect would warn.

    ``"C"`` → 1, ``"P"`` → 0.5, ``"I"`` and ``"N"`` → 0; ``"yes"``/``"true"``
    → 1 and ``"no"``/``"false"`` → 0 in any case; a number, a bool, or a
    string holding a finite number → its value. Anything else (a list, a
    dict, other text, NaN or an infinity) → None, where Inspect logs a warning
    and uses 0.

    Examples
    --------
    >>> [value_to_float(v) for v in ("C", "P", "no", "True", "0.0", 1, False, "8x", None)]
    [1.0, 0.5, 0.0, 1.0, 0.0, 1.0, 0.0, None, None]
    """
    if isinstance(value, str):
        if value in _LETTERS:
            return _LETTERS[value]
        if value.lower() in _WORDS:
            return _WORDS[value.lower()]
        try:
            x = float(value)
        except ValueError:
            return None
    elif isinstance(value, (bool, int, float)):
        try:
            x = float(value)
        except OverflowError:
            return None
    else:
        return None
    return x if math.isfinite(x) else None


def _shown(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


class SuccessRule:
    """Which Inspect score values count as a success, and the sentence that says so.

    The only rule: :func:`read_inspect` and :mod:`passk.integrations.inspect` (the reducer
    and :class:`~passk.integrations.inspect.Curtailment`) both judge with it.
    :meth:`judge` gives True or False, or None for a value the rule cannot
    judge (not binary by default; not a number under a threshold).

    Examples
    --------
    >>> rule = SuccessRule()
    >>> [rule.judge(v) for v in ("C", "I", "yes", "no", "1", "0.0", True, 0, 0.5, "P")]
    [True, False, True, False, True, False, True, False, None, None]
    >>> SuccessRule(threshold=0.5).judge("P"), SuccessRule(values=["P"]).judge("I")
    (True, False)
    """

    def __init__(self, values: Sequence[str] | None = None, threshold: float | None = None):
        self.values = tuple(str(v) for v in values or ())
        self.threshold = threshold
        if threshold is not None and (isinstance(threshold, bool) or not isinstance(
                threshold, (int, float)) or not math.isfinite(threshold)):
            raise BadInput(f"success_threshold ({threshold!r}) must be a finite number")

    @property
    def chosen(self) -> bool:
        """Whether the user chose success values or a threshold."""
        return bool(self.values) or self.threshold is not None

    def _listed(self, value: Any) -> bool:
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

    def judge(self, value: Any) -> bool | None:
        """True (a success), False (a failure), or None (this rule cannot judge the value)."""
        x = value_to_float(value)
        if x == 1.0 or self._listed(value):
            return True
        if self.threshold is not None:
            return None if x is None else x >= self.threshold
        if self.values:
            return False
        return False if x == 0.0 else None

    def describe(self) -> str:
        """The rule in words, for an error message."""
        parts = ["C, True or 1"]
        if self.values:
            parts[0] = ", ".join(self.values) + " (--success-value), or " + parts[0]
        if self.threshold is not None:
            parts.append(f"a number at least {self.threshold:g} (--success-threshold)")
        rest = "every other value" if self.chosen else "I, N, False or 0"
        return "a success is " + ", or ".join(parts) + f"; {rest} is a failure"


def is_success(value: Any, *, success_values: Sequence[str] = (),
               success_threshold: float | None = None) -> bool:
    """Whether an Inspect score value counts as a success (:class:`SuccessRule`).

    Raises
    ------
    ValueError
        For a value the rule cannot judge, naming it.

    Examples
    --------
    >>> is_success("C"), is_success(0), is_success("no"), is_success(0.5, success_threshold=0.5)
    (True, False, False, True)
    >>> is_success("8")
    Traceback (most recent call last):
    ...
    passk.errors.BadInput: score value '8' is neither a success (C, True, 1) nor a failure (I, N, False, 0): pass success_values or success_threshold to say how to judge it
    """  # noqa: E501  # a doctest's output line cannot wrap
    rule = SuccessRule(success_values, success_threshold)
    won = rule.judge(value)
    if won is not None:
        return won
    if rule.threshold is not None:
        raise BadInput(f"score value {_shown(value):.{QUOTE}} is not a number, so "
                         f"success_threshold {rule.threshold:g} cannot judge it "
                         "(success_values names values that count as a success)")
    raise BadInput(f"score value {value!r:.{QUOTE}} is neither a success (C, True, 1) nor a "
                     "failure (I, N, False, 0): pass success_values or success_threshold to "
                     "say how to judge it")


# --------------------------------------------------------------------------
# the log's documents, with the standard library
# --------------------------------------------------------------------------

_HEADER, _START, _SUMMARIES = "header.json", "_journal/start.json", "summaries.json"
_JOURNAL_SUMMARIES = "_journal/summaries/"
_SAMPLES = "samples/"
_ZSTD = 93  # the zip compression method number of Zstandard
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")  # a zip member's local file header (30 bytes)


def _zstd_decompressor() -> Any:
    """An object whose ``decompress(bytes)`` reads every Zstandard frame in turn."""
    try:
        from compression import zstd  # type: ignore[import-not-found]  # Python 3.14
    except ImportError:
        try:
            from backports import zstd  # type: ignore[import-not-found]
        except ImportError:
            zstd = None
    if zstd is not None:
        return _Frames(zstd.ZstdDecompressor)
    try:
        import zstandard
    except ImportError:
        return None
    return zstandard.ZstdDecompressor().decompressobj(read_across_frames=True)


class _Frames:
    """``compression.zstd``'s one-frame decompressor, carried across frames."""

    def __init__(self, factory: Any):
        self.factory, self.current = factory, factory()

    def decompress(self, data: bytes) -> bytes:
        out = []
        while data:
            out.append(self.current.decompress(data))
            if not self.current.eof:
                break
            data = self.current.unused_data
            self.current = self.factory()
        return b"".join(out)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else type(exc).__name__


class _EvalZip:
    """A ``.eval`` log's members, each read on its own, from the zip's central directory."""

    def __init__(self, path: Path):
        self.path = path
        try:
            self.zip = zipfile.ZipFile(path)
        except zipfile.BadZipFile:
            raise ResultsError(path, None, _not_a_zip(path)) from None
        except OSError as exc:
            raise ResultsError(path, None, f"cannot be read ({_first_line(exc)})") from None
        # the last member of a name wins, as in Inspect's reader (a re-logged sample)
        self.members = {info.filename: info for info in self.zip.infolist()}

    def close(self) -> None:
        self.zip.close()

    def names(self) -> list[str]:
        return list(self.members)

    def read(self, name: str) -> bytes:
        info = self.members[name]
        try:
            if info.compress_type in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                return self.zip.read(info)
            if info.compress_type != _ZSTD:
                raise ResultsError(self.path, name, f"compressed with zip method "
                                   f"{info.compress_type}, which passk cannot read")
            return self._read_zstd(info)
        except zipfile.BadZipFile as exc:
            raise ResultsError(self.path, name, f"is damaged ({_first_line(exc)}): "
                               f"{_CHECK_COPY}") from None
        except (zlib.error, EOFError) as exc:
            raise ResultsError(self.path, name, f"cannot be decompressed ({_first_line(exc)}): "
                               f"{_CHECK_COPY}") from None

    def _read_zstd(self, info: zipfile.ZipInfo) -> bytes:
        decompressor = _zstd_decompressor()
        if decompressor is None:
            raise ResultsError(self.path, info.filename, "is compressed with Zstandard (as "
                               "Inspect writes .eval logs since 2025), which this Python "
                               "cannot read without a package: pip install zstandard")
        fp = self.zip.fp
        assert fp is not None  # noqa: S101  # an open ZipFile has its file
        fp.seek(info.header_offset)
        head = fp.read(_LOCAL_HEADER.size)
        if len(head) < _LOCAL_HEADER.size or head[:4] != b"PK\x03\x04":
            raise zipfile.BadZipFile("bad local file header")
        fields = _LOCAL_HEADER.unpack(head)
        fp.seek(fields[-2] + fields[-1], os.SEEK_CUR)  # the member's name and extra field
        left, out, crc = info.compress_size, [], 0
        while left > 0:
            chunk = fp.read(min(left, 1 << 20))
            if not chunk:
                raise zipfile.BadZipFile("the member's data ends early")
            left -= len(chunk)
            try:
                part = decompressor.decompress(chunk)
            except Exception as exc:  # noqa: BLE001 - each zstd binding has its own error
                raise zlib.error(_first_line(exc)) from None
            crc = zlib.crc32(part, crc)
            out.append(part)
        data = b"".join(out)
        if len(data) != info.file_size or crc != info.CRC:
            raise zipfile.BadZipFile("its size or checksum does not match the zip's directory")
        return data

    def json(self, name: str) -> Any:
        data = self.read(name)
        try:
            return json.loads(data)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ResultsError(self.path, name, f"is not valid JSON ({_first_line(exc)}): "
                               f"{_CHECK_COPY}") from None
        except RecursionError:
            raise ResultsError(self.path, name, "JSON nested too deeply to read") from None


_CHECK_COPY = "was the log copied whole?"


def _not_a_zip(path: Path) -> str:
    """What a file named .eval that is not a readable zip is, and what to do."""
    try:
        with open(path, "rb") as f:
            start = f.read(4)
    except OSError as exc:
        return f"cannot be read ({_first_line(exc)})"
    if start == b"PK\x03\x04":
        return ("is not a complete Inspect .eval log (the zip's end is missing: was it copied "
                "while Inspect was still writing?); copy it again once the eval has finished")
    if start.lstrip()[:1] == b"{":
        return ("is not an Inspect .eval log (a zip) but JSON: an Inspect .json log saved "
                "as .eval? Rename it to .json, or pass --format inspect with its real name")
    return "is not an Inspect .eval log (not a zip file): pass the log Inspect wrote"


#: The least a ``.json`` log is read by at a time, in characters.
_CHUNK = 1 << 20


class _Text:
    """A text file read in chunks, for ``json.JSONDecoder.raw_decode`` one value at a time."""

    _WHITE = re.compile(r"[ \t\n\r]*")

    def __init__(self, f: IO[str], path: Path):
        self.f, self.path = f, path
        self.buf, self.pos, self.eof = "", 0, False
        self.line = 1  # lines before self.buf
        self.decoder = json.JSONDecoder()

    def _more(self, at_least: int = 0) -> bool:
        chunk = self.f.read(max(at_least, _CHUNK))
        if not chunk:
            self.eof = True
            return False
        self.line += self.buf.count("\n", 0, self.pos)
        self.buf = self.buf[self.pos:] + chunk
        self.pos = 0
        return True

    def peek(self) -> str:
        """The next character that is not white space ("" at the end)."""
        while True:
            self.pos = self._WHITE.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._more():
                return ""

    def expect(self, chars: str) -> str:
        c = self.peek()
        if not c or c not in chars:
            self._fail(f"expected {' or '.join(map(repr, chars))}")
        self.pos += 1
        return c

    def value(self) -> Any:
        self.peek()
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                # read as much again as the value holds so far: a value of n characters
                # is parsed O(log n) times, in a buffer at most about three times its size
                if self.eof or not self._more(2 * (len(self.buf) - self.pos)):
                    self._fail(exc.msg, exc.pos)
                continue
            if end == len(self.buf) and not self.eof and self._more():
                continue  # a number may go on in the next chunk
            self.pos = end
            return value

    def _fail(self, what: str, at: int | None = None) -> None:
        at = self.pos if at is None else at
        line = self.line + self.buf.count("\n", 0, at)
        hint = "; is the file truncated?" if self.eof else ""
        raise ResultsError(self.path, line, f"not a valid Inspect .json log ({what}){hint}")


def _thin(sample: Any) -> Any:
    """A sample's summary: what the reader uses of it (id, epoch, score values, error, its
    ``uuid`` and how many errors a retry erased).

    A sample records its retried errors as ``error_retries`` (a list, in a
    ``.json`` log and a ``.eval`` log's ``samples/``); a ``.eval`` log's
    summary records their count as ``retries`` (``EvalSample.summary()`` in
    Inspect's ``log/_log.py``).
    """
    if not isinstance(sample, dict):
        return sample
    scores = sample.get("scores")
    if scores is None and "score" in sample:  # logs before Inspect 0.3.30: one score
        scores = {"": sample["score"]}
    if isinstance(scores, dict):
        scores = {name: ({"value": s.get("value")} if isinstance(s, dict) else s)
                  for name, s in scores.items()}
    retried = sample.get("error_retries")
    retries = len(retried) if isinstance(retried, list) else sample.get("retries")
    return {"id": sample.get("id"), "epoch": sample.get("epoch"), "scores": scores,
            "error": sample.get("error"), "uuid": sample.get("uuid"), "retries": retries}


def _json_log(path: Path) -> tuple[dict[str, Any], list[Any]]:
    """The header and the sample summaries of a ``.json`` log, one sample in memory at a time."""
    header: dict[str, Any] = {}
    samples: list[Any] = []
    try:
        with open(path, encoding="utf-8-sig") as f:
            text = _Text(f, path)
            text.expect("{")
            if text.peek() == "}":
                text.pos += 1
                return header, samples
            while True:
                key = text.value()
                if not isinstance(key, str):
                    text._fail("expected a field name")  # noqa: SLF001  # this module's reader
                text.expect(":")
                if key == "samples" and text.peek() == "[":
                    text.pos += 1
                    if text.peek() == "]":
                        text.pos += 1
                    else:
                        while True:
                            samples.append(_thin(text.value()))
                            if text.expect(",]") == "]":
                                break
                elif key == "reductions":
                    text.value()  # not used: dropped at once
                else:
                    header[key] = text.value()
                if text.expect(",}") == "}":
                    break
    except UnicodeDecodeError as exc:
        raise ResultsError(path, None, f"not UTF-8 text ({exc.reason} at byte {exc.start}): "
                           "an Inspect .json log is UTF-8; pass the file Inspect wrote") from None
    except RecursionError:
        raise ResultsError(path, None, "JSON nested too deeply to read") from None
    return header, samples


def _eval_log(path: Path) -> tuple[dict[str, Any], list[Any]]:
    """The header and the sample summaries of a ``.eval`` log (as Inspect's own reader)."""
    log = _EvalZip(path)
    try:
        names = log.names()
        if _HEADER in log.members:
            header = log.json(_HEADER)
        elif _START in log.members:  # a log still being written (or whose eval crashed)
            header = log.json(_START)
            if isinstance(header, dict):
                header = {**header, "status": header.get("status") or "started"}
        else:
            raise ResultsError(path, None, f"has neither {_HEADER} nor {_START}: not an "
                               "Inspect .eval log")
        if _SUMMARIES in log.members:
            parts = [(_SUMMARIES, log.json(_SUMMARIES))]
        else:
            journal = sorted((n for n in names if n.startswith(_JOURNAL_SUMMARIES)
                              and n.endswith(".json")
                              and n[len(_JOURNAL_SUMMARIES):-5].isdigit()),
                             key=lambda n: int(n[len(_JOURNAL_SUMMARIES):-5]))
            if journal:
                parts = [(n, log.json(n)) for n in journal]
            else:  # no summaries at all: each sample, one at a time
                parts = [(n, [_thin(log.json(n))]) for n in names
                         if n.startswith(_SAMPLES) and n.endswith(".json")]
        last: dict[tuple[str, Any], Any] = {}  # the last record of a (sample, epoch) wins
        for name, part in parts:
            if not isinstance(part, list):
                raise ResultsError(path, name, f"must be a list of sample summaries, got "
                                   f"{type(part).__name__}")
            for s in part:
                key = (str(s.get("id")), s.get("epoch")) if isinstance(s, dict) else (
                    str(len(last)), None)
                last.pop(key, None)
                last[key] = _thin(s)
        return header, list(last.values())
    finally:
        log.close()


def read_log(path: str | os.PathLike[str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """An Inspect log's header (a dict, as Inspect writes it) and its sample summaries.

    Each summary is ``{"id", "epoch", "scores": {scorer: {"value": ...}}, "error"}``.
    ``.eval`` logs are read from the zip's ``header.json`` (or
    ``_journal/start.json``) and ``summaries.json`` (or the journal's
    summaries), any other ``.json`` log as one JSON object scanned sample by
    sample. Needs no ``inspect_ai``.
    """
    path = Path(path)
    header, samples = (_eval_log(path) if zipfile.is_zipfile(path) or
                       path.suffix.lower() == ".eval" else _json_log(path))
    if not isinstance(header, dict) or not isinstance(header.get("eval"), dict):
        raise ResultsError(path, None, "is not an Inspect AI log: its header has no 'eval' "
                           "object (the eval's spec)")
    return header, samples


# --------------------------------------------------------------------------
# the header: identity, plan, early stopping
# --------------------------------------------------------------------------


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def identity(header: Mapping[str, Any]) -> dict[str, Any]:
    """What identifies the evaluation an Inspect log records, from its header.

    ``run_ids`` are the log's ``eval_id`` and ``run_id``; ``evaluation`` is
    what two logs must share to be pooled as trials of one evaluation: the
    task, its version (``task_version``), its arguments, the model and its
    roles, the solver (or the plan), the generation config, the dataset's
    name and selected sample ids. Nested
    values are canonical JSON (sorted keys), so equal settings compare equal.

    ``header`` is the log's header (with ``eval`` and ``plan``) or its
    ``eval`` object alone.

    Examples
    --------
    >>> spec = {"eval_id": "e1", "run_id": "r1", "task": "airline", "task_args": {"b": 2, "a": 1},
    ...         "model": "openai/gpt-4o", "dataset": {"name": "tau", "sample_ids": [1, 2]}}
    >>> ident = identity({"eval": spec})
    >>> ident["run_ids"], ident["evaluation"]["task_args"], ident["evaluation"]["sample_ids"]
    (['e1', 'r1'], '{"a":1,"b":2}', '[1,2]')
    >>> ident["evaluation"]["task_version"], identity({"eval": {"task_version": "2"}})[
    ...     "evaluation"]["task_version"]
    ('0', '"2"')
    """
    inner = header.get("eval")
    spec: Mapping[str, Any] = inner if isinstance(inner, Mapping) else header
    plan = header.get("plan") if spec is not header else None
    found = spec.get("dataset")
    dataset: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    solver: Any = spec.get("solver")
    if solver:
        solver = {"solver": solver, "solver_args": spec.get("solver_args") or {}}
    elif isinstance(plan, Mapping):
        solver = {"plan": [{"solver": s.get("solver"), "params": s.get("params") or {}}
                           for s in plan.get("steps") or () if isinstance(s, Mapping)]}
    version = spec.get("task_version")
    return {"run_ids": [str(spec.get("eval_id") or ""), str(spec.get("run_id") or "")],
            "evaluation": {"task": spec.get("task"),
                           # Inspect's default task_version is 0 (EvalSpec in log/_log.py)
                           "task_version": _canonical(0 if version is None else version),
                           "task_args": _canonical(spec.get("task_args") or {}),
                           "model": spec.get("model"),
                           "model_roles": _canonical(spec.get("model_roles") or {}),
                           "solver/plan": _canonical(solver or {}),
                           "generate_config": _canonical(spec.get("model_generate_config") or {}),
                           "dataset": dataset.get("name"),
                           "sample_ids": _canonical(dataset.get("sample_ids"))}}


def _get(obj: Any, *keys: str) -> Any:
    for key in keys:
        obj = obj.get(key) if isinstance(obj, Mapping) else None
    return obj


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 \
        else None


def _declared_scorers(header: Mapping[str, Any]) -> list[str]:
    """The scorers the log's header names: ``eval.scorers`` and ``results.scores``."""
    names: list[str] = []
    for entry in [*(_get(header, "eval", "scorers") or ()),
                  *(_get(header, "results", "scores") or ())]:
        if isinstance(entry, Mapping):
            for key in ("name", "scorer"):
                if isinstance(entry.get(key), str) and entry[key] not in names:
                    names.append(entry[key])
    return names


def _value_counts(counts: Counter[Any], limit: int = 8) -> str:
    items = sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))
    return some([f"{_shown(v):.{QUOTE}} ({n})" for v, n in items], limit)


def _gaps(header: Mapping[str, Any], results: Results, stopped: int, passk_stopped: bool,
          manager: str | None, failed_errors: int = 0) -> list[str]:
    """The sentence naming an Inspect eval that did not run its whole plan, if it did not.

    The plan is the selected samples (``eval.dataset.sample_ids``) ×
    ``eval.config.epochs``; a log that does not list them (Inspect before
    0.3.70, or ``--limit`` on an old version) plans ``results.total_samples``
    sample epochs (Inspect's count of the samples it set out to run × epochs),
    else the dataset's ``samples`` × epochs. The log is complete when its
    status is ``"success"`` and it holds that many sample epochs, counting the
    epochs passk's curtailment settled early as planned.
    """
    status = header.get("status")
    dataset = _get(header, "eval", "dataset") or {}
    epochs = _count(_get(header, "eval", "config", "epochs")) or 1
    ids = list(dataset.get("sample_ids") or ()) or None
    in_dataset = _count(dataset.get("samples"))
    total = _count(_get(header, "results", "total_samples"))
    scored, errored = int(results.totals.sum()), int(results.excluded.sum())
    present = scored + errored + (stopped if passk_stopped else 0)
    plan: str | None
    if ids is not None:
        planned: int | None = len(ids) * epochs
        samples = f"{len(ids)} dataset samples"
        if in_dataset and len(ids) < in_dataset:
            samples = f"{len(ids)} selected samples (of the dataset's {in_dataset})"
        plan = (f"{samples} × 1 epoch" if epochs == 1 else
                f"{len(ids) * epochs} sample epochs ({samples} × {epochs} epochs)")
    elif total:
        planned = total
        plan = f"{total} planned sample epochs (the log's results.total_samples)"
    elif in_dataset:
        planned = in_dataset * epochs
        plan = (f"{in_dataset} dataset samples × 1 epoch" if epochs == 1 else
                f"{planned} sample epochs ({in_dataset} dataset samples × {epochs} epochs)")
    else:
        planned = plan = None
    if status == "success" and (planned is None or present >= planned) \
            and (passk_stopped or not stopped):
        return []
    if status != "success":
        head = f"Inspect log status is {status!r}: "
    elif stopped and not passk_stopped:
        head = (f"Inspect log's early stopping ({manager}) skipped "
                f"{plural(stopped, 'sample epoch')}, which never ran: ")
    else:
        head = "Inspect log holds fewer samples than planned, though its status is 'success': "
    if plan is None:
        text = (f"{plural(scored, 'sample epoch')} were scored; the log does not record how many "
                "samples the dataset holds")
    else:
        text = f"{scored} of {plan} were scored"
    if errored:
        text += f" ({errored} more ended in an error)"
    if failed_errors:
        text += f" ({failed_errors} of them ended in an error, counted as failures)"
    if passk_stopped and stopped:
        text += f" ({stopped} more settled early by {PASSK_MANAGER})"
    if ids is not None:
        ran = set(results.task_ids)
        never = [str(i) for i in ids if str(i) not in ran]
        if never:
            text += f"; {plural(len(never), 'sample')} never ran ({some(never)})"
    message = str(_get(header, "error", "message") or "").strip()
    if message:
        text += f"; the eval's error: {message.splitlines()[0][:160]}"
    return [head + text]


def _narrower(header: Mapping[str, Any]) -> list[str]:
    """The sentence naming a selection narrower than the log's dataset, if it is one.

    Inspect records the dataset's size (``eval.dataset.samples``, ``len(dataset)``)
    and the ids it selected (``eval.dataset.sample_ids``, after ``--limit`` and
    ``--sample-id``; ``_eval/task/log.py``), and plans ``results.total_samples``
    = selected × epochs. A selection of fewer samples than the dataset holds is
    not the evaluation, whatever its status says; so is a header claiming a
    dataset larger than what was run.

    Examples
    --------
    >>> print(_narrower({"eval": {"dataset": {"samples": 3, "sample_ids": [1, 2]}}})[0][:59])
    Inspect log ran a selection of 2 of its dataset's 3 samples
    """
    dataset = _get(header, "eval", "dataset") or {}
    in_dataset = _count(dataset.get("samples"))
    if not in_dataset:
        return []
    ids = dataset.get("sample_ids")
    epochs = _count(_get(header, "eval", "config", "epochs")) or 1
    total = _count(_get(header, "results", "total_samples"))
    if isinstance(ids, list):
        selected = len(set(map(str, ids)))
    elif total:
        selected = -(-total // epochs)
    else:
        return []
    if selected >= in_dataset:
        return []
    return [(f"Inspect log ran a selection of {selected} of its dataset's {in_dataset} "
             "samples (--limit or --sample-id?): a narrower evaluation is not the whole one")]


def _retried(header: Mapping[str, Any], summaries: Sequence[Mapping[str, Any]]
             ) -> tuple[list[tuple[str, int]], bool]:
    """Each sample epoch a retry ran again after an error, with how many errors it erased;
    and whether the log's ``retry_on_error`` is set but no sample records its retries."""
    retried = [(f"{s['id']} epoch {s['epoch']}", int(s["retries"])) for s in summaries
               if s.get("retries")]
    budget = _count(_get(header, "eval", "config", "retry_on_error"))
    unrecorded = bool(budget) and all(s.get("retries") is None for s in summaries)
    return retried, unrecorded


def _retried_count(retried: Sequence[tuple[str, int]]) -> str:
    errors = sum(n for _, n in retried)
    return (f"{plural(errors, 'error')} in {plural(len(retried), 'sample epoch')} "
            f"({some([f'{where}: {n}' for where, n in retried])})")


def _hidden_errors(header: Mapping[str, Any], retried: Sequence[tuple[str, int]],
                   unrecorded: bool, errors: str) -> list[str]:
    """The sentence naming errors a retry erased (``retry_on_error``), if any: each was a
    failed run that the log no longer counts, so the log is not the evaluation's whole record.

    Inspect keeps a retried sample epoch's errors in its ``error_retries`` (a
    ``.eval`` summary: ``retries``) and its last attempt's outcome as the
    sample's. ``errors='exclude'`` leaves errors out anyway: then a retried
    error is left out as the others are (said in the notes and overrides).

    Examples
    --------
    >>> header = {"eval": {"config": {"retry_on_error": 3}}}
    >>> print(_hidden_errors(header, [("s1 epoch 1", 2)], False, "fail")[0][:72])
    Inspect log's retry_on_error (3) erased 2 errors in 1 sample epoch (s1 e
    """
    if errors == "exclude":
        return []
    budget = _get(header, "eval", "config", "retry_on_error")
    if retried:
        return [(f"Inspect log's retry_on_error ({budget}) erased {_retried_count(retried)}: "
                 "each error was a failed run that the log no longer counts (Inspect keeps only "
                 "the last attempt); rerun without --retry-on-error, or --errors exclude to "
                 "leave every error out (the verdict says so)")]
    if unrecorded:
        return [(f"Inspect log's retry_on_error is {budget} but its samples do not record "
                 "their retries (error_retries): errors a retry erased cannot be counted; "
                 "rerun with a current Inspect, or without --retry-on-error")]
    return []


def _overrides(names: Sequence[str], scorer: str | None, success_values: Sequence[str] | None,
               success_threshold: float | None, score_key: str | None, errors: str,
               errored: int, retried: int = 0) -> list[str]:
    """One phrase for each reader option in effect that changes what counts."""
    said = []
    if success_values:
        said.append(f"--success-value {' '.join(map(str, success_values))} counted as a "
                    "success")
    if success_threshold is not None:
        said.append(f"--success-threshold {success_threshold:g}: a score of at least "
                    f"{success_threshold:g} counted as a success")
    if scorer is not None and len(names) > 1:
        said.append(f"--scorer {scorer} chosen of {len(names)} scorers ({', '.join(names)})")
    if score_key is not None:
        said.append(f"--score-key {score_key} decides success")
    if errors == "exclude":
        erased = f", and {plural(retried, 'error')} a retry erased" if retried else ""
        said.append(f"errored sample epochs excluded, not counted as failures (--errors "
                    f"exclude): {errored} left out{erased}")
    return said


def _early_stopping(header: Mapping[str, Any], path: Path) -> tuple[
        str | None, list[tuple[str, int]], dict[str, Any]]:
    """The early-stopping manager, the (sample id, epoch) pairs it stopped, and its metadata."""
    summary = _get(header, "results", "early_stopping")
    where = "results.early_stopping"
    if summary is None:
        return None, [], {}
    if not isinstance(summary, Mapping):
        raise ResultsError(path, where, f"must be an object, got {summary!r:.{QUOTE}}")
    stops = []
    for i, s in enumerate(summary.get("early_stops") or ()):
        epoch = _get(s, "epoch")
        if _count(epoch) is None or _get(s, "id") is None:
            raise ResultsError(path, f"{where}.early_stops[{i}]", "must have a sample 'id' and "
                               f"a whole-number 'epoch', got {s!r:.{QUOTE}}")
        stops.append((str(s["id"]), int(epoch)))
    metadata = summary.get("metadata")
    return str(summary.get("manager")), stops, dict(metadata) if isinstance(
        metadata, Mapping) else {}


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


def _no_scores(path: Path, scorer: str | None, declared: Sequence[str]) -> ResultsError:
    """A log whose samples hold no score at all (``inspect eval --no-score``)."""
    named = ""
    if scorer is not None and scorer in declared:
        named = (f"scorer {scorer!r} is declared in the log's header, but no sample holds a "
                 "score from it: ")
    elif declared:
        named = f"the log's header declares {', '.join(declared)}, but "
    return ResultsError(path, None, f"{named}this log holds no scores (was it written with "
                        f"--no-score?); `inspect score {path}` scores it, then pass the "
                        "scored log")


def read_inspect(path: str | os.PathLike[str], data: Any = None, *, scorer: str | None = None,
                 success_values: Sequence[str] | None = None,
                 success_threshold: float | None = None, score_key: str | None = None,
                 errors: str = "fail", duplicates: str = "error") -> Results:
    """Read an Inspect AI eval log (``.eval`` or ``.json``): one run a sample epoch.

    Needs no extra: the log is read with the standard library (:func:`read_log`).
    A sample epoch that ended in an error counts as a failure (Inspect does
    not tell the agent's errors from the infrastructure's, so passk fails
    closed), unless ``errors="exclude"`` leaves it out (counted, as "errored
    samples", and named in ``Results.overrides``). A log whose ``status`` is
    not ``"success"`` (``"started"``, ``"cancelled"``, ``"error"``), that holds
    fewer sample epochs than it planned, that ran a selection narrower than
    its dataset (``--limit``, ``--sample-id``: fewer ``sample_ids`` than the
    dataset's ``samples``), or whose epochs another early-stopping manager
    skipped is named in ``Results.incomplete``. Each run's identity is the
    log's ``eval_id``, the sample id and the epoch.

    Parameters
    ----------
    scorer : str, optional
        Which scorer's value decides success; required when the log has several.
    success_values : sequence of str, optional
        Values that count as a success, added to those that pass by default.
    success_threshold : float, optional
        A value whose number is at least this is a success (Inspect's ``pass_k`` uses 1.0).
    score_key : str, optional
        For dict-valued scores: the key whose value is judged.
    errors : {'fail', 'exclude'}, default 'fail'
        What an errored sample epoch is: a failure, or left out (an override).
    duplicates : {'error', 'first', 'last'}, default 'error'
        A repeated (sample id, epoch); see :func:`passk.results.tally_runs`.

    Raises
    ------
    ResultsError
        For an unreadable log, a log without scores, a value the default rule
        cannot judge (naming the values seen and the options that choose), a
        dict score without ``score_key``, and any bad sample, naming the file
        and the sample.
    """
    path = Path(path)
    if errors not in ERRORS:
        raise ResultsError(path, None, f"--errors (errors=) must be one of "
                           f"{', '.join(ERRORS)}, got {errors!r:.{QUOTE}}")
    try:
        rule = SuccessRule(success_values, success_threshold)
    except ValueError as exc:
        raise ResultsError(path, None, str(exc)) from None
    if isinstance(data, dict) and isinstance(data.get("eval"), dict):
        header = {k: v for k, v in data.items() if k != "samples"}
        summaries = [_thin(s) for s in data.get("samples") or ()]
    else:
        header, summaries = read_log(path)
    manager, stops, metadata = _early_stopping(header, path)
    passk_stopped = manager == PASSK_MANAGER
    protocol, settled = _passk_protocol(metadata, path) if passk_stopped else (None, {})
    if not summaries and not settled:  # settled before a first epoch: tasks with no runs
        status = header.get("status")
        said = "" if status == "success" else f"; its status is {status!r}"
        raise ResultsError(path, None, "the log has no samples (a header-only log, or an "
                           f"eval that did not run{said})")
    for i, s in enumerate(summaries):
        where = f"samples[{i}]"
        if not isinstance(s, dict):
            raise ResultsError(path, where, f"expected a JSON object, got {s!r:.{QUOTE}}")
        if s.get("id") is None or s.get("id") == "" or isinstance(s.get("id"), bool) \
                or not isinstance(s.get("id"), (str, int)):
            raise ResultsError(path, where, f"missing sample id (got {s.get('id')!r:.{QUOTE}})")
        if _count(s.get("epoch")) is None:
            raise ResultsError(path, where, f"field 'epoch' must be a whole number, got "
                               f"{s.get('epoch')!r:.{QUOTE}}")
        if s.get("scores") is not None and not isinstance(s["scores"], dict):
            raise ResultsError(path, where, f"field 'scores' must be an object, got "
                               f"{s['scores']!r:.{QUOTE}}")
        if s.get("uuid") is not None and (not isinstance(s["uuid"], str) or not s["uuid"]):
            raise ResultsError(path, where, f"field 'uuid' must be the sample's id text, got "
                               f"{s['uuid']!r:.{QUOTE}}")
        if s.get("retries") is not None and _count(s["retries"]) is None:
            raise ResultsError(path, where, "field 'error_retries' (or a summary's 'retries') "
                               "must be a list (or a count) of errors, got "
                               f"{s['retries']!r:.{QUOTE}}")
    names: list[str] = []
    for s in summaries:
        for name in (s.get("scores") or {}):
            if name not in names:
                names.append(name)
    declared = _declared_scorers(header)
    if not names and any(s.get("error") is None for s in summaries):
        raise _no_scores(path, scorer, declared)
    if scorer is None:
        if len(names) > 1:
            raise ResultsError(path, None, f"the log has several scorers ({', '.join(names)}); "
                               f"choose one with --scorer")
        scorer = names[0] if names else None
    elif scorer not in names:
        if scorer in declared:
            raise ResultsError(path, None, f"scorer {scorer!r} is declared in the log's header, "
                               "but no sample holds a score from it (the samples are scored by "
                               f"{', '.join(names)}); `inspect score --scorer {scorer} {path}` "
                               "scores them with it")
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
                                   f"scorer {scorer!r} gives a dict (keys "
                                   f"{some(list(map(str, value)))}); choose the key that "
                                   "decides success with --score-key")
            if score_key not in value:
                raise ResultsError(path, where, f"sample {task_id!r:.{QUOTE}} epoch {epoch}: no "
                                   f"key {score_key!r} in scorer {scorer!r}'s value (keys "
                                   f"{some(list(map(str, value)))})")
            value = value[score_key]
        elif score_key is not None:
            raise ResultsError(path, where, f"--score-key {score_key!r} is for dict scores, but "
                               f"scorer {scorer!r} gives {_shown(value):.{QUOTE}}")
        if not isinstance(value, (str, int, float, bool)) or value is None:
            raise ResultsError(path, where, f"score value {value!r:.{QUOTE}} of scorer "
                               f"{scorer!r} is not a single value (str, number or bool)")
        return value

    eval_id = _get(header, "eval", "eval_id")
    eval_id = str(eval_id) if isinstance(eval_id, (str, int)) and eval_id != "" else None

    def runs() -> Iterator[tuple[str, Run]]:
        nonlocal errored
        for i, s in enumerate(summaries):
            where = f"samples[{i}]"
            task_id, epoch = str(s["id"]), int(s["epoch"])
            run_id = ((INSPECT_SAMPLE_UUID, s["uuid"]) if s.get("uuid") else None
                      if eval_id is None else (INSPECT_RUN_ID, eval_id, task_id, str(epoch)))
            if s.get("error") is not None:
                errored += 1
                left_out = errors == "exclude"
                yield where, Run(task_id, False, epoch, excluded=left_out,
                                 excluded_as=ERRORED_SAMPLES if left_out else "", run_id=run_id)
                continue
            score = (s.get("scores") or {}).get(scorer) if scorer else None
            if not isinstance(score, dict) or "value" not in score:
                raise ResultsError(path, where, f"sample {task_id!r:.{QUOTE}} epoch {epoch} has "
                                   f"no score from scorer {scorer!r}")
            value = judged(score["value"], where, task_id, epoch)
            ok = rule.judge(value)
            if ok is None and rule.threshold is not None:
                raise ResultsError(path, where, f"score value {_shown(value):.{QUOTE}} of scorer "
                                   f"{scorer!r} is not a number, so --success-threshold "
                                   f"{rule.threshold:g} cannot judge it (--success-value "
                                   "names values that count as a success)")
            if ok is None:
                unjudged[value] += 1
                ok = False
            (passed if ok else failed)[value] += 1
            yield where, Run(task_id, ok, epoch, run_id=run_id)

    task_ids = list(settled)
    # a sample settled before its first epoch has no record: still a task of the suite
    results = tally_runs(runs(), path=path, source="inspect", duplicates=duplicates,
                         task_ids=[t for t, n in settled.items() if n == 0], protocol=None)
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
    if errored and errors == "exclude":
        notes.append(plural(errored, "sample epoch", verb=("ended in an error and is left out",
                                                         "ended in an error and are left out"))
                     + " (--errors exclude)")
    elif errored:
        notes.append(plural(errored, "sample epoch", verb=(
            "ended in an error and counts as a failure", "ended in an error and count as failures"))
            + " (Inspect does not tell the agent's errors from the infrastructure's; "
            f"--errors exclude leaves {'it' if errored == 1 else 'them'} out, and the verdict "
            "says so)")
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
    failed_errors = errored if errors == "fail" else 0
    retried, unrecorded = _retried(header, summaries)
    if retried and errors == "exclude":
        notes.append(f"{_retried_count(retried)} that a retry erased left out, as errors are "
                     "(--errors exclude)")
    results = with_notes(results, notes, _gaps(header, results, len(stops), passk_stopped,
                                               manager, failed_errors) + _narrower(header)
                         + _hidden_errors(header, retried, unrecorded, errors))
    results = with_overrides(results, *_overrides(names, scorer, success_values,
                                                  success_threshold, score_key, errors,
                                                  errored, sum(n for _, n in retried)))
    suite = str(_get(header, "eval", "task") or "")
    ids = _get(header, "eval", "dataset", "sample_ids")
    ran = set(results.task_ids)
    never = tuple(str(i) for i in ids or () if str(i) not in ran)
    # the log records each settled sample's epochs scored; Results.settled_early holds the
    # runs planned, as passk run's and the pytest plugin's do: one meaning everywhere
    epochs = _get(header, "eval", "config", "epochs")
    planned = {t: int(epochs) if isinstance(epochs, int) and epochs >= n else n
               for t, n in settled.items()}
    return replace(results, protocol=protocol, settled_early=planned, suite=suite,
                   never_ran=never, recorded_k=recorded_k(header, scorer))


#: The k an Inspect eval records, most telling first: passk's metric (the suite's pass^k),
#: Inspect's pass^k reducer, its pass@k reducer; each a name pattern and how it is said.
_RECORDED_K = (
    (re.compile(r"(?:^|/)mean_pass_hat_k$"), "mean_pass_hat_k metric"),
    (re.compile(r"(?:^|/)pass_k_(\d+)$"), "pass_k reducer"),
    (re.compile(r"(?:^|/)pass_at_(\d+)$"), "pass_at reducer"),
)


def _definitions(metrics: Any) -> list[Mapping[str, Any]]:
    """A scorer's metric definitions as the header lists them: a list of definitions (each
    ``{"name", "options"}``) or of groups (``{group: [definitions]}``), or one mapping of
    groups."""
    groups = [metrics] if isinstance(metrics, Mapping) else list(metrics or ())
    out: list[Mapping[str, Any]] = []
    for item in groups:
        if isinstance(item, Mapping) and "name" in item:
            out.append(item)
        elif isinstance(item, Mapping):
            out += [d for group in item.values() if isinstance(group, list)
                    for d in group if isinstance(d, Mapping)]
    return out


def _metric_ks(header: Mapping[str, Any], scorer: str | None) -> list[int]:
    """The k of each passk ``mean_pass_hat_k`` metric the log records for ``scorer``: in
    the header's scorers (``eval.scorers[].metrics[]``: name and options) and in its
    results (``results.scores[].metrics``: group or name, and params)."""
    ks: list[int] = []
    pattern = _RECORDED_K[0][0]

    def take(name: Any, params: Any) -> None:
        k = _count(params.get("k")) if isinstance(params, Mapping) else None
        if isinstance(name, str) and pattern.search(name) and k:
            ks.append(k)

    for entry in _get(header, "eval", "scorers") or ():
        if isinstance(entry, Mapping) and (scorer is None or entry.get("name") == scorer):
            for d in _definitions(entry.get("metrics")):
                take(d.get("name"), d.get("options"))
    for score in _get(header, "results", "scores") or ():
        if not isinstance(score, Mapping) or (scorer is not None
                                              and score.get("scorer") != scorer):
            continue
        for m in (score.get("metrics") or {}).values() if isinstance(
                score.get("metrics"), Mapping) else ():
            if isinstance(m, Mapping):
                take(m.get("group") or m.get("name"), m.get("params"))
    return ks


def recorded_k(header: Mapping[str, Any], scorer: str | None = None
               ) -> tuple[int, str] | None:
    """The k the eval itself records, and where: passk's ``mean_pass_hat_k(k=...)`` metric
    (the header's scorers and results), else Inspect's ``pass_k(k)`` reducer, else its
    ``pass_at(k)`` reducer (``eval.config.epochs_reducer``, ``results.scores[].reducer``:
    Inspect logs a reducer with a k as ``NAME_K``). Several ks of one kind: the largest
    (the strictest claim). None when the log records none.

    Examples
    --------
    >>> recorded_k({"eval": {"config": {"epochs": 8, "epochs_reducer": ["pass_at_2",
    ...                                                                 "pass_k_5"]}}})
    (5, 'pass_k reducer (pass_k_5)')
    >>> recorded_k({"eval": {"scorers": [{"name": "match", "metrics": [
    ...     {"name": "passk/mean_pass_hat_k", "options": {"k": 4}}]}]}})
    (4, 'mean_pass_hat_k metric')
    >>> recorded_k({"eval": {"config": {"epochs": 8}}}) is None
    True
    """
    ks = _metric_ks(header, scorer)
    if ks:
        return max(ks), "mean_pass_hat_k metric"
    names = [n for n in (_get(header, "eval", "config", "epochs_reducer") or ())
             if isinstance(n, str)]
    names += [sc["reducer"] for sc in (_get(header, "results", "scores") or ())
              if isinstance(sc, Mapping) and isinstance(sc.get("reducer"), str)]
    for pattern, what in _RECORDED_K[1:]:
        found = [(int(m.group(1)), n) for n in names if (m := pattern.search(n))
                 and int(m.group(1)) >= 1]
        if found:
            k, name = max(found)
            return k, f"{what} ({name})"
    return None


# --------------------------------------------------------------------------
# the transcripts: each sample epoch's tool calls, for passk attribute
# --------------------------------------------------------------------------


def _text(content: Any, attachments: Mapping[str, Any]) -> str:
    """A message's content as text: a string, or the text of its content parts; an
    ``attachment://`` reference resolved from the sample's attachments."""
    if isinstance(content, list):
        return "\n".join(_text(part.get("text") if isinstance(part, dict) else part,
                               attachments) for part in content)
    if isinstance(content, str) and content.startswith("attachment://"):
        found = attachments.get(content.removeprefix("attachment://"))
        return found if isinstance(found, str) else content
    return "" if content is None else str(content)


def _tool_steps(messages: Any, attachments: Mapping[str, Any], path: Path, where: str) -> Any:
    """A sample's tool calls in the order the model made them, each with its tool message's
    answer (matched by ``tool_call_id``)."""
    from passk.results.trajectory import Step

    if not isinstance(messages, list):
        raise ResultsError(path, where, f"field 'messages' must be a list, got "
                           f"{type(messages).__name__}")
    answers = {m.get("tool_call_id"): m for m in messages
               if isinstance(m, dict) and m.get("role") == "tool"}
    steps = []
    for m in messages:
        if not isinstance(m, dict) or m.get("role") != "assistant":
            continue
        for call in m.get("tool_calls") or ():
            if not isinstance(call, dict):
                raise ResultsError(path, where, f"a tool call must be an object, got "
                                   f"{call!r:.{QUOTE}}")
            answer = answers.get(call.get("id"), {})
            error = answer.get("error")
            said = (_text(error.get("message"), attachments) if isinstance(error, dict)
                    else _text(answer.get("content"), attachments))
            steps.append(Step.of(call.get("function"), call.get("arguments"), said,
                                 error=error is not None))
    return tuple(steps)


def _samples_with_messages(path: Path) -> Iterator[tuple[str, Any]]:
    if zipfile.is_zipfile(path) or path.suffix.lower() == ".eval":
        log = _EvalZip(path)
        try:
            names = [n for n in log.names() if n.startswith(_SAMPLES) and n.endswith(".json")]
            for name in names:
                yield name, log.json(name)
        finally:
            log.close()
        return
    from passk.results.formats._shared import load_json

    data = load_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("eval"), dict):
        raise ResultsError(path, None, "is not an Inspect AI log: no 'eval' object")
    for i, sample in enumerate(data.get("samples") or ()):
        yield f"samples[{i}]", sample


def read_inspect_trajectories(path: str | os.PathLike[str], *, scorer: str | None = None,
                              success_values: Sequence[str] | None = None,
                              success_threshold: float | None = None,
                              score_key: str | None = None, errors: str = "fail") -> list[Any]:
    """Each sample epoch of an Inspect log as a :class:`~passk.results.trajectory.Trajectory`:
    its tool calls (from its messages) and the success :func:`read_inspect` counts.

    A ``.eval`` log's transcripts are its ``samples/`` members (read one at a
    time); a ``.json`` log's are its samples. Success is judged by the same rule
    as :func:`read_inspect` (``scorer``, ``success_values``, ``success_threshold``,
    ``score_key``); an errored sample epoch is a failure, or left out with
    ``errors="exclude"``. A sample holding no messages gives a run whose
    steps were not recorded.

    Raises
    ------
    ResultsError
        For a log without transcripts (a ``.eval`` log whose samples were not
        kept), a value the rule cannot judge, or a malformed message, naming the
        file and the sample.
    """
    from passk.results.trajectory import Trajectory

    path = Path(path)
    rule = SuccessRule(success_values, success_threshold)
    out = []
    chosen = scorer
    for where, s in _samples_with_messages(path):
        if not isinstance(s, dict):
            raise ResultsError(path, where, "expected a sample object")
        task_id, epoch = str(s.get("id")), s.get("epoch")
        if s.get("error") is not None:
            if errors == "exclude":
                continue
            ok = False
        else:
            scores = s.get("scores") or {}
            if chosen is None:
                if len(scores) != 1:
                    raise ResultsError(path, where, f"the sample has {len(scores)} scorers "
                                       f"({', '.join(map(str, scores)) or 'none'}); choose one "
                                       "with --scorer")
                chosen = next(iter(scores))
            score = scores.get(chosen)
            if not isinstance(score, dict) or "value" not in score:
                raise ResultsError(path, where, f"sample {task_id!r:.{QUOTE}} epoch {epoch} has "
                                   f"no score from scorer {chosen!r}")
            value = score["value"]
            if isinstance(value, dict):
                if score_key is None or score_key not in value:
                    raise ResultsError(path, where, f"scorer {chosen!r} gives a dict; choose "
                                       "its key with --score-key")
                value = value[score_key]
            judged = rule.judge(value)
            if judged is None:
                raise ResultsError(path, where, f"score value {_shown(value):.{QUOTE}} of scorer "
                                   f"{chosen!r} is not pass/fail: say which values count as a "
                                   "success (--success-value, --success-threshold)")
            ok = judged
        attachments: Mapping[str, Any] = (s["attachments"] if isinstance(s.get("attachments"),
                                                                         dict) else {})
        messages = s.get("messages")
        steps = None if not messages else _tool_steps(messages, attachments, path, where)
        out.append(Trajectory(task_id, f"epoch {epoch}", ok, steps))
    if not out and (zipfile.is_zipfile(path) or path.suffix.lower() == ".eval"):
        raise ResultsError(path, None, "holds no sample transcripts (samples/*.json): was it "
                           "written without its samples (--no-log-samples)?")
    return out
