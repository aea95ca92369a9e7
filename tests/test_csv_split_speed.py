"""Issue 41: the CSV reader's bulk split (every cell quoted, and plain) gives the cells
``csv.reader`` gives, or declines (None, and the chunk goes to ``csv.reader``), and the ids'
task index found a stretch of equal ids at a time equals one lookup an id.

References: the standard library's ``csv.reader`` and the split it replaced (commit 1b5792d,
loaded from git). Random chunks of every class: empty cells (first, middle, last), a quote
inside a cell (doubled), a comma or a line break inside a quoted cell, lines of the wrong
width (one more cell on one line and one fewer on another, so totals still match), CRLF and
lone CR, a lone LF among CRLF lines, a NUL, unquoted cells among quoted ones, a single column, non-ASCII text.
"""

from __future__ import annotations

import csv
import io
import random

import numpy as np
import pytest
from old_code import old_module

from passk.results.formats import jsonl_csv
from passk.results.formats.jsonl_csv import _Columns, _plain_columns

OLD = "1b5792d"


@pytest.fixture(scope="module")
def old() -> object:
    return old_module(OLD, "passk/results/formats/jsonl_csv.py", "_old_jsonl_csv_41")


def _cell(rng: random.Random) -> str:
    return rng.choice(["", "a", "task-1", "true", "0", "x y", "caf\u00e9", "\u4efb\u52a1",
                       "a,b", 'say "hi"', "two\nlines", "cr\rhere", "12"])


def _chunk(rng: random.Random, width: int, lines: int, mode: str) -> str:
    rows = [[_cell(rng) if mode == "wild" else rng.choice(["", "a", "t1", "true", "7", "\u00e9"])
             for _ in range(width)] for _ in range(lines)]
    if mode.startswith("plain"):  # no empty line (csv.reader gives it no cells)
        rows = [[c or "z" for c in row] for row in rows]
    if mode == "ragged" and lines >= 2:  # one line a cell longer, another a cell shorter
        rows[0].append("extra")
        rows[-1].pop()
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator=rng.choice(["\n", "\r\n"])).writerows(
        rows)
    text = out.getvalue()
    if mode == "unquoted" and text:
        text = text.replace('"a"', "a", 1)
    if mode == "nul":
        text = text.replace("a", "a\x00", 1)
    if mode == "lonecr":
        text = text.replace("\n", "\r", 1)
    if mode in ("lonelf", "plainlonelf"):  # one line ended by "\n" among "\r\n" lines
        text = text.replace("\r\n", "\n", 1)
    if mode.startswith("plain"):  # no quotes at all: the plain split
        text = text.replace('"', "")
    return text


def _reader_columns(text: str, width: int) -> list[list[str]] | None:
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error:
        return None
    if any(len(r) != width for r in rows):
        return None
    return [[r[i] for r in rows] for i in range(width)]


@pytest.mark.parametrize("mode", ["clean", "wild", "ragged", "unquoted", "nul", "lonecr",
                                  "lonelf", "plain", "plainlonelf"])
@pytest.mark.parametrize("width", [1, 2, 3, 5])
def test_quoted_split_agrees_with_csv_reader(old, mode: str, width: int) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(f"{mode}-{width}")
    split = 0
    for _ in range(150):
        text = _chunk(rng, width, rng.randint(1, 12), mode)
        got = _plain_columns(text, width)
        if got is not None or "\r" not in text:  # the same split, or the same refusal
            assert got == old._plain_columns(text, width)
        if got is not None:
            split += 1
            assert got == _reader_columns(text, width)
    if mode in ("clean", "plain"):
        assert split == 150  # the bulk path is taken on clean files, not only declined


def test_field_size_limit_declines() -> None:
    limit = csv.field_size_limit()
    long = '"' + "x" * (limit + 1) + '","b"\n'
    assert _plain_columns('"a","b"\n' + long, 2) is None
    assert _plain_columns('"a","b"\n"' + "x" * (limit - 10) + '","b"\n', 2) is not None


@pytest.mark.parametrize("layout", ["grouped", "shuffled", "one", "empty", "ints"])
def test_task_index_by_stretches(layout: str) -> None:
    rng = np.random.default_rng(len(layout))
    ids: list[object] = [f"t{t}" for t in range(300) for _ in range(int(rng.integers(1, 9)))]
    if layout == "shuffled":
        rng.shuffle(ids)
    elif layout == "one":
        ids = ["only"] * 50
    elif layout == "empty":
        ids = []
    chunks = [ids[i:i + 97] for i in range(0, max(len(ids), 1), 97)]
    cols = _Columns()
    reference: dict[object, int] = {}
    for chunk in chunks:
        got = cols._index(chunk)
        want = [reference.setdefault(t, len(reference)) for t in chunk]
        assert got.tolist() == want
        assert got.dtype == np.int32
    assert cols.names == list(reference) and cols.task_of == reference


def test_read_csv_quoted_equals_plain(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The same runs written plain and with every cell quoted read to the same counts."""
    rng = np.random.default_rng(3)
    rows = [(f"task-{t}", i, bool(rng.random() < 0.6)) for t in range(2000) for i in range(7)]
    plain, quoted = tmp_path / "p.csv", tmp_path / "q.csv"
    for path, quoting in ((plain, csv.QUOTE_MINIMAL), (quoted, csv.QUOTE_ALL)):
        with path.open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, quoting=quoting)
            w.writerow(["task_id", "trial", "success"])
            w.writerows((t, i, "true" if s else "false") for t, i, s in rows)
    a, b = jsonl_csv.read_csv(plain), jsonl_csv.read_csv(quoted)
    assert a.task_ids == b.task_ids and len(a.task_ids) == 2000
    assert a.successes.tolist() == b.successes.tolist()
    assert a.totals.tolist() == b.totals.tolist() == [7] * 2000
    assert int(a.successes.sum()) == sum(s for *_, s in rows)
