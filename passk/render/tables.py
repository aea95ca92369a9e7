"""Numbers for people and numbers for machines: table cells, aligned tables, JSON numbers.

Every table that ``passk`` prints (the report, the gate, the plan, the diff)
goes through :func:`format_columns`, and every float in its JSON through
:func:`json_number`. Rounding belongs to tables; JSON carries full precision.

Text from files (task ids, risk labels, notes that quote them) is untrusted:
it is printed to terminals and pasted into pull-request comments. In text
output every control character is escaped (:func:`escape_text`: an ESC in a
task id never reaches the terminal); in Markdown output a table cell's ``|``
and line breaks are escaped and HTML is neutralized (:func:`markdown_cell`,
:func:`escape_markdown`). JSON needs neither: it is exact, and ``json``
escapes control characters itself.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping, Sequence
from itertools import chain
from typing import Any

from passk.render.words import plural

__all__ = ["baseline_line", "cell", "cells", "escape_markdown", "escape_text", "format_columns",
           "format_rows", "json_number", "list_items", "markdown_cell", "one_line", "show_id",
           "show_ids", "signed"]

#: Characters Python counts as printable that draw nothing of their own: the rest of
#: Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt; ``unicodedata`` has no
#: such property) -- the combining grapheme joiner, the Hangul fillers, the Khmer inherent
#: vowels, the Mongolian and the other variation selectors -- and the blank Braille pattern.
_PRINTABLE_INVISIBLE = re.compile("[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180d\u180f"
                                  "\u2800\u3164\ufe00-\ufe0f\uffa0\U000e0100-\U000e01ef]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(c: str) -> str:
    """One character as Python writes it in a string literal: ``\\n``, ``\\x1b``,
    ``\\u200b``, ``\\U000e0041``."""
    code = ord(c)
    return _NAMED.get(c) or (f"\\x{code:02x}" if code < 0x100 else
                             f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")


def _hidden(c: str) -> bool:
    return not c.isprintable() or _PRINTABLE_INVISIBLE.match(c) is not None


def _escape_line(text: str) -> str:
    # str.isprintable runs in C: a line of visible text costs one pass and no copy (a regex
    # class of every unprintable code point would take seconds on a large report)
    if text.isprintable() and (text.isascii() or not _PRINTABLE_INVISIBLE.search(text)):
        return text
    return "".join(_escape(c) if _hidden(c) else c for c in text)


def escape_text(text: str, *, keep_newlines: bool = False) -> str:
    r"""``text`` with every character that does not show itself written as an escape.

    Escaped: what Python's :meth:`str.isprintable` rejects (control characters, C0 and
    C1; format characters, Unicode category Cf, which hold the zero-width space and joiners
    U+200B-U+200D, the bidi marks, embeddings, overrides and isolates U+200E/F,
    U+202A-U+202E, U+2066-U+2069, U+061C, the word joiner and invisible operators
    U+2060-U+2064, the byte-order mark U+FEFF and the tag characters U+E0000-U+E007F;
    line and paragraph separators; every space but the ASCII space, the no-break space
    U+00A0 among them; surrogates, private-use and unassigned code points), and the
    default-ignorable characters it accepts (variation selectors, Hangul fillers). Each is
    written as a Python string literal writes it: ``\n``, ``\x1b``, ``\u200b``,
    ``\U000e0041``. So an ESC in a task id never reaches the terminal, and no character
    from a file is drawn as nothing. With ``keep_newlines`` (for a whole report), line
    breaks stay.

    Examples
    --------
    >>> escape_text("a\x1b[31mred")
    'a\\x1b[31mred'
    >>> escape_text("two\nlines"), escape_text("two\nlines", keep_newlines=True)
    ('two\\nlines', 'two\nlines')
    >>> print(escape_text("zero\u200bwidth, no\u00a0break, \u202eevil, tag\U000e0041"))
    zero\u200bwidth, no\xa0break, \u202eevil, tag\U000e0041
    """
    if not keep_newlines or "\n" not in text:
        return _escape_line(text)
    if text.isascii() and text.replace("\n", "").isprintable():
        return text
    return "\n".join(map(_escape_line, text.split("\n")))


#: A backslash that could be read as the start of an escape in a shown id.
_ESCAPE_LIKE = re.compile(r"\\(?=[\\xuUnrt])")


def show_ids(task_ids: Sequence[str]) -> list[str]:
    r""":func:`show_id` of each id; the ids as they are when none needs an escape (checked on
    the column joined, in C: 10**5 ids cost a few milliseconds).

    Examples
    --------
    >>> show_ids(["a", "b c"]), show_ids(["a", "b "])
    (['a', 'b c'], ['a', 'b\\x20'])
    """
    ids = list(task_ids)
    whole = "".join(ids)
    if whole.isascii() and whole.isprintable() and "\\" not in whole:
        joined = "\n".join(ids)  # a leading or trailing space is all that could need one
        if " \n" not in joined and "\n " not in joined and joined[:1] != " " \
                and joined[-1:] != " ":
            return ids
    return list(map(show_id, ids))


def show_id(task_id: str) -> str:
    r"""A task id as it may be displayed: whatever would not show itself made visible.

    Every character :func:`escape_text` escapes (invisible, format and bidi characters,
    tag characters, control characters, every space but the ASCII one) is written as an
    escape, as are leading and trailing spaces (``\x20``), so that two different ids are
    never drawn alike: ``"a"``, ``"a "``, ``"a\u200b"`` show as ``a``, ``a\x20``,
    ``a\u200b``. A backslash is doubled when the id needs an escape, or when what follows
    it would read as one, so an id that holds the six characters ``\u200b`` is not drawn
    as one holding U+200B. Ids that need none of this (nearly all) are returned as they
    are. Look-alike letters (a Cyrillic ``а`` for a Latin ``a``) are shown as they are:
    :func:`passk.results.ids.lookalike_groups` names them.

    Examples
    --------
    >>> for s in ["a", "a ", " a", "a\u200b", "a\u00a0b", "C:\\tmp", "\\u200b", "\\\u200b"]:
    ...     print(show_id(s))
    a
    a\x20
    \x20a
    a\u200b
    a\xa0b
    C:\\tmp
    \\u200b
    \\\u200b
    >>> print(show_id("\u202egnp.exe"), show_id("x\U000e0041"))
    \u202egnp.exe x\U000e0041
    """
    if (task_id.isprintable() and task_id[:1] != " " and task_id[-1:] != " "
            and "\\" not in task_id
            and (task_id.isascii() or not _PRINTABLE_INVISIBLE.search(task_id))):
        return task_id
    shown = escape_text(task_id)
    if "\\" in task_id:
        doubled = (task_id.replace("\\", "\\\\") if shown != task_id
                   else _ESCAPE_LIKE.sub(r"\\\\", task_id))
        shown = escape_text(doubled)
    body = shown.strip(" ")
    if body == shown:
        return shown
    lead = len(shown) - len(shown.lstrip(" "))
    trail = len(shown) - len(shown.rstrip(" "))
    return "\\x20" * lead + body + "\\x20" * (trail if body else 0)


def one_line(text: str) -> str:
    r"""A line of output built from text that came from a file (a reason, a note, an error).

    Every control character is escaped, line breaks included, so one reason or
    note is one line: a task id can never start a line of its own (a forged
    ``gate: PASSED``) or move the cursor. For Markdown, the whole output then
    goes through :func:`escape_markdown`.

    Examples
    --------
    >>> print(one_line("task x\ngate: PASSED"))
    task x\ngate: PASSED
    """
    return escape_text(text)


def markdown_cell(text: str) -> str:
    r"""A Markdown table cell: ``|`` escaped, line breaks and control characters as escapes.

    HTML is escaped once, for the whole output, by :func:`escape_markdown`.

    Examples
    --------
    >>> markdown_cell("a|b\nc")
    'a\\|b\\nc'
    """
    return escape_text(text).replace("|", "\\|")


def escape_markdown(text: str) -> str:
    """A whole Markdown output with HTML neutralized (``<``, ``>``, ``&``) and control
    characters escaped; its tables' cells went through :func:`markdown_cell`.

    Examples
    --------
    >>> escape_markdown("| <img src=x onerror=alert(1)> |")
    '| &lt;img src=x onerror=alert(1)&gt; |'
    """
    return escape_text(html.escape(text, quote=False), keep_newlines=True)


def cell(x: Any, digits: int = 3) -> str:
    """One number for a table: fixed digits, and ``-`` for what was not estimable.

    Examples
    --------
    >>> cell(0.318181), cell(float("nan")), cell(None), cell(1 / 3, 4)
    ('0.318', '-', '-', '0.3333')
    """
    return "-" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def cells(values: Sequence[Any], digits: int = 3) -> list[str]:
    """:func:`cell` over a column, without a function call per value (fast for 10**5 rows).

    Examples
    --------
    >>> cells([0.5, float("nan"), 1.0])
    ['0.500', '-', '1.000']
    """
    values = values if isinstance(values, (list, tuple)) else list(values)
    if len(values) < 64:
        spec = f".{digits}f"
        # x == x is False only for NaN: a comparison per cell, not a call
        return [format(x, spec) if x == x and abs(x) != math.inf else "-"  # noqa: PLR0124
                for x in values]
    # one %-format of the whole column, in C: the digits format(x, spec) gives; what is not
    # finite came out as "nan", "inf" or "-inf", the only texts with an "n"
    text = (f"%.{digits}f\n" * len(values)) % tuple(values)
    out = text.split("\n")
    out.pop()
    return [x if "n" not in x else "-" for x in out] if "n" in text else out


def signed(x: Any, digits: int = 3) -> str:
    """A change, with its sign: ``+0.125``, ``-0.040``; ``-`` when not estimable.

    Examples
    --------
    >>> signed(0.125), signed(-0.04), signed(float("nan"))
    ('+0.125', '-0.040', '-')
    """
    return "-" if x is None or not math.isfinite(x) else f"{x:+.{digits}f}"


def json_number(x: Any) -> float | None:
    """A float for JSON at full precision; NaN and infinities become ``null``.

    Examples
    --------
    >>> json_number(0.2733333333333333), json_number(float("nan"))
    (0.2733333333333333, None)
    """
    return None if x is None or not math.isfinite(x) else float(x)


def format_columns(header: Sequence[str], columns: Sequence[Sequence[str]], *,
                   numeric: set[int] | frozenset[int] = frozenset(),
                   markdown: bool = False) -> str:
    """An aligned text table (or a Markdown table) from columns of strings.

    Parameters
    ----------
    header : sequence of str
    columns : sequence of sequences of str
        One sequence per header cell, all of the same length.
    numeric : set of int
        Indexes of right-aligned columns.
    markdown : bool, default False
        A GitHub Markdown table instead of aligned text.

    Examples
    --------
    >>> print(format_columns(["task", "n"], [["a", "bb"], ["12", "5"]], numeric={1}))
    task   n
    a     12
    bb     5
    >>> print(format_columns(["task", "n"], [["a"], ["12"]], numeric={1}, markdown=True))
    | task | n |
    |---|---:|
    | a | 12 |
    """
    if len(header) != len(columns):
        raise ValueError(f"{len(header)} header cells but {len(columns)} columns")
    if markdown:
        lines = ["| " + " | ".join(map(markdown_cell, header)) + " |",
                 "|" + "|".join("---:" if i in numeric else "---"
                                for i in range(len(header))) + "|"]
        lines += ["| " + " | ".join(map(markdown_cell, r)) + " |" for r in zip(*columns)]
        return "\n".join(lines)
    columns = [col if i in numeric else _escaped(col) for i, col in enumerate(columns)]
    # the rows laid out by one %-format of the whole table, in C: "%5s" and "%-5s" are
    # str.rjust and str.ljust to the column's width; each line then stripped on the right
    line = "  ".join(("%%%ds" if i in numeric else "%%-%ds") % max(len(h), max(map(len, col),
                                                                            default=0))
                     for i, (h, col) in enumerate(zip(header, columns, strict=True)))
    rows = len(columns[0]) if columns else 0
    text = ((line + "\n") * (rows + 1)) % tuple(chain(header, chain.from_iterable(
        zip(*columns))))
    return "\n".join(map(str.rstrip, text.split("\n")[:-1]))


def _visible(text: str) -> bool:
    """Whether :func:`escape_text` leaves ``text`` (one line) as it is: one pass in C."""
    return text.isprintable() and (text.isascii() or not _PRINTABLE_INVISIBLE.search(text))


def _escaped(column: Sequence[str]) -> Sequence[str]:
    """:func:`escape_text` of each cell; the column as it is when no cell needs it (checked
    on the column joined, in C)."""
    if _visible("".join(column)):
        return column
    return list(map(escape_text, column))


def format_rows(header: Sequence[str], rows: Sequence[Sequence[str]], *,
                numeric: set[int] | frozenset[int] = frozenset(),
                markdown: bool = False) -> str:
    """:func:`format_columns` for a table given row by row.

    Examples
    --------
    >>> print(format_rows(["k", "pass^k"], [["1", "0.420"], ["2", "0.273"]], numeric={0, 1}))
    k  pass^k
    1   0.420
    2   0.273
    """
    columns = [list(col) for col in zip(*rows)] if rows else [[] for _ in header]
    return format_columns(header, columns, numeric=numeric, markdown=markdown)


def list_items(items: Sequence[str], *, markdown: bool = False, limit: int | None = None,
               noun: str = "reasons", where: str = "the gate's reasons") -> list[str]:
    """Lines of text from files as list items: the first ``limit``, then one counting the rest.

    With at most ``limit + 1`` items every one is shown (a line saying "1 more" would take
    the place of the item itself); ``limit=None`` shows every one. Each item is made
    :func:`one_line`. A gate's reasons are shown so (:func:`passk.stability.reason_lines`).

    Examples
    --------
    >>> print("\\n".join(list_items(["x", "y", "z"], limit=1)))
      - x
      - ... and 2 more reasons (all 3 are in the gate's reasons)
    >>> list_items(["x", "y"], markdown=True, limit=1)
    ['- x', '- y']
    """
    if limit is not None and limit < 0:
        raise ValueError(f"limit ({limit!r}) must be None or at least 0")
    bullet = "- " if markdown else "  - "
    # a task id's line break never starts a line: each item made one_line, unless none needs
    # it (checked on the items joined, in C: a line break is not printable)
    lines = list(items) if _visible("".join(items)) else [one_line(r) for r in items]
    if limit is None or len(lines) <= limit + 1:
        return [bullet + r for r in lines]
    rest = len(lines) - limit
    if markdown:
        where = where.replace("reasons", "`reasons`")
    more = f"{bullet}... and {rest} more {noun} (all {len(lines)} are in {where})"
    return [bullet + r for r in lines[:limit]] + [more]


def baseline_line(found: Mapping[str, Any]) -> str:
    """What the comparison with a baseline found, one line after the gate's verdict, whether
    the gate passed or blocked: the suite's change in mean pass^k, its interval, and the
    decision (a regression shown or not; with a margin, non-inferiority shown or not).

    ``found`` is the judge's finding (:func:`passk.gate.judge.baseline_found`, the ``baseline``
    key of the gate's JSON); nothing is computed here.

    Examples
    --------
    >>> suite = {"k": 2, "delta": 0.0125, "ci_low": -0.031, "ci_high": 0.056,
    ...          "confidence": 0.95, "paired_tasks": 12, "verdict": "inconclusive"}
    >>> print(baseline_line({"path": "old.jsonl", "suite": suite, "regressed": [],
    ...                      "decision": "no regression shown", "margin": None, "gaps": []}))
    baseline old.jsonl: mean pass^2 change +0.013, 95% interval [-0.031, +0.056] over 12 paired tasks: no regression shown
    """  # noqa: E501  # a doctest's output line cannot wrap
    s = found.get("suite")
    margin = found.get("margin")
    regressed = [str(t) for t in found.get("regressed") or ()]
    line = f"baseline {one_line(str(found.get('path') or '<baseline>'))}: "
    if s is not None:
        paired = int(s["paired_tasks"])
        line += (f"mean pass^{s['k']} change {signed(s['delta'])}, {s['confidence']:.0%} "
                 f"interval [{signed(s['ci_low'])}, {signed(s['ci_high'])}] over "
                 f"{plural(paired, 'paired task')}: ")
    else:
        line += "no suite comparison (no task has enough runs in both versions): "
    decision = found.get("decision")
    if decision == "worse":
        why = ([] if s is None or s.get("verdict") != "worse" else
               ["the suite's interval lies below 0"])
        if regressed:
            shown = ", ".join(show_id(t) for t in regressed[:3]) + (
                f" and {len(regressed) - 3} more" if len(regressed) > 3 else "")
            why.append(f"{plural(len(regressed), 'task')} regressed "
                       f"beyond repeat noise ({shown})")
        line += "a regression is shown" + (f": {'; '.join(why)}" if why else "")
    elif decision == "non-inferior":
        line += f"non-inferior within the margin {margin:g}"
    elif decision == "inconclusive" and margin is not None:
        line += f"non-inferiority within the margin {margin:g} not shown"
    else:
        line += "no regression shown" + (
            " (a gain is shown)" if s is not None and s.get("verdict") == "better" else "")
    gaps = len(found.get("gaps") or ())
    if gaps:
        line += (f"; {plural(gaps, 'baseline gap')} (a task not compared, an "
                 "incomplete input): see the reasons")
    return line

