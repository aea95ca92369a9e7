r"""Task ids that look alike: shown so that no two are drawn the same, and named when they collide.

A task's id is its identity: every run with the same id is counted together. An id
with a trailing space, a zero-width space, a Cyrillic ``а`` or another case than its
neighbours is another task, so one flaky task written two ways becomes two steadier ones
(6 of 12 passed becomes 6 of 6 and 0 of 6). Two things guard against it:

- :func:`show_id`, how every rendering (text, Markdown, HTML) draws an id: what would
  not show itself is written as an escape (``a\x20``, ``a\u200b``); the JSON keeps
  the exact id, which ``json`` escapes itself where it must. It lives with the other
  escapes in :mod:`passk.render.tables` (the layer every renderer can import) and is
  re-exported here, beside the ids' other rules.
- :func:`lookalike_groups`, the distinct ids that are one id once the differences a
  reader cannot see are taken away (:func:`skeleton`). Without a policy the report names
  them in a note (:func:`lookalike_note`); under a policy they are refused
  (:func:`lookalike_refusal`).

The look-alike letters folded are a small table written here (:data:`HOMOGLYPHS`): the
Cyrillic and Greek letters drawn like a Latin one, and a few Latin letters from other
blocks, not Unicode's full confusables table (UTS #39 ``confusables.txt``). The Python
packages that carry that table (``confusable_homoglyphs``, ``confusables``) are not
dependencies of passk, and the one that ships it whole keeps it as undirected neighbours,
with no prototype to fold to. Letters that NFKC folds (fullwidth, mathematical
alphanumerics, ligatures) need no table. ASCII letters and digits are not folded into each
other (``l``, ``1``, ``I``; ``0``, ``O``): ids are shown in monospace, where they differ.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from passk.render.tables import escape_text, show_id
from passk.render.words import plural

__all__ = ["HOMOGLYPHS", "lookalike_groups", "lookalike_note", "lookalike_refusal",
           "show_id", "skeleton"]

#: Letters drawn like a Latin letter, and the Latin letter (upper and lower case): Cyrillic,
#: Greek, and Latin letters from outside ASCII. Applied after NFKC and before case folding.
HOMOGLYPHS: dict[str, str] = {
    # Cyrillic
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P",
    "С": "C", "Т": "T", "У": "Y", "Х": "X", "Ѕ": "S", "І": "I", "Ј": "J", "Ԛ": "Q",
    "Ԝ": "W", "Ү": "Y", "Ӏ": "I", "Һ": "H", "Ԁ": "D",
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "ѕ": "s",
    "і": "i", "ј": "j", "ԛ": "q", "ԝ": "w", "һ": "h", "ԁ": "d", "ӏ": "l", "ү": "y",
    "ѵ": "v",
    # Greek
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M",
    "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "Ϲ": "C", "Ϳ": "J",
    "α": "a", "ο": "o", "ρ": "p", "ν": "v", "ι": "i", "κ": "k", "υ": "u", "χ": "x",
    "ϲ": "c", "ϳ": "j", "ε": "e",
    # Latin outside ASCII
    "ı": "i", "ɑ": "a", "ɡ": "g", "ɩ": "i", "ʏ": "y", "ȷ": "j", "ℓ": "l",
}
_FOLD = str.maketrans(HOMOGLYPHS)

#: Groups named in one note or reason; the rest are counted.
_SHOWN_GROUPS = 5


def _kept(c: str) -> bool:
    """A character a reader sees: whitespace, or one :func:`show_id` shows as itself (not a
    format, bidi, tag, control or default-ignorable character)."""
    return c.isspace() or show_id(c) == c


def skeleton(task_id: str) -> str:
    """What a reader can tell of an id: two ids with one skeleton look alike.

    NFKC; characters that draw nothing removed (format, bidi, tag, control and
    default-ignorable characters: those :func:`show_id` escapes, whitespace apart);
    look-alike letters folded (:data:`HOMOGLYPHS`) and case folded; whitespace stripped at
    the ends and each run of it one space. An ASCII id costs a case fold and a split.

    Examples
    --------
    >>> [skeleton(s) for s in ["Task 1", " task\u00a01 ", "t\u0430sk\u200b 1", "T\u0391SK\t 1"]]
    ['task 1', 'task 1', 'task 1', 'task 1']
    """
    if task_id.isascii() and task_id.isprintable():
        return " ".join(task_id.casefold().split())
    s = unicodedata.normalize("NFKC", task_id)
    if escape_text(s) is not s:  # something drawn as nothing: take it away
        s = "".join(filter(_kept, s))
    s = s.translate(_FOLD).casefold().translate(_FOLD)  # again: a case fold may make one
    return " ".join(s.split())


def lookalike_groups(ids: Iterable[str]) -> list[tuple[str, ...]]:
    """The groups of distinct ids that look alike (one :func:`skeleton`), in order of first
    appearance; each group's ids in order of first appearance.

    One pass over ``ids``, a dict keyed by skeleton: O(n) for a suite of 10**6 tasks.

    Examples
    --------
    >>> lookalike_groups(["a", "b", "a ", "B", "c", "a", "\u0430"])
    [('a', 'a ', 'а'), ('b', 'B')]
    """
    ids = list(ids)
    whole = "".join(ids)
    if whole.isascii() and whole.isprintable() and " " not in whole:
        # printable ASCII without spaces: an id's skeleton is its case fold, so no two
        # distinct ids look alike when their case folds are as many (checked in C)
        distinct = set(ids)
        if len(set(map(str.casefold, distinct))) == len(distinct):
            return []
    first: dict[str, str] = {}  # a skeleton's first id: one entry per task, no group made
    groups: dict[str, dict[str, None]] = {}
    for task_id in ids:
        key = (task_id.casefold() if task_id.isascii() and task_id.isprintable()
               and " " not in task_id else skeleton(task_id))
        seen = first.setdefault(key, task_id)
        if seen != task_id:
            groups.setdefault(key, {seen: None})[task_id] = None
    if not groups:
        return []
    return [tuple(groups[key]) for key in first if key in groups]  # first's order: first seen


def _described(task_id: str) -> str:
    """An id as shown, with its letters from outside ASCII named (a Cyrillic ``а``
    is drawn like a Latin ``a``: its name tells them apart)."""
    shown = show_id(task_id)
    odd = dict.fromkeys(c for c in shown if not c.isascii())
    if not odd:
        return shown
    named = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, 'unnamed')}" for c in list(odd)[:3])
    more = f", and {len(odd) - 3} more" if len(odd) > 3 else ""
    return f"{shown} ({named}{more})"


def _groups_phrase(groups: list[tuple[str, ...]]) -> str:
    shown = "; ".join(" and ".join(map(_described, g)) for g in groups[:_SHOWN_GROUPS])
    more = (f"; and {plural(len(groups) - _SHOWN_GROUPS, 'more group')}"
            if len(groups) > _SHOWN_GROUPS else "")
    return shown + more


_WHY = ("they differ only by case, whitespace, invisible or format characters, or letters "
        "from another script drawn alike")


def lookalike_note(ids: Iterable[str]) -> str | None:
    """The report's note on ids that look alike, or None when none do.

    Each group is counted as separate tasks, so one task written two ways may look
    steadier than it is; the note says so and names every id (up to five groups).

    Examples
    --------
    >>> print(lookalike_note(["deploy", "dep\u200bloy", "rollback"]))
    task ids that look alike are counted as separate tasks (they differ only by case, \
whitespace, invisible or format characters, or letters from another script drawn alike; \
one task split in two looks steadier than it is): deploy and dep\\u200bloy
    >>> lookalike_note(["a", "b"]) is None
    True
    """
    groups = lookalike_groups(ids)
    if not groups:
        return None
    return (f"task ids that look alike are counted as separate tasks ({_WHY}; one task "
            f"split in two looks steadier than it is): {_groups_phrase(groups)}")


def lookalike_refusal(ids: Iterable[str], label: str) -> str | None:
    """The one-line reason a policy refuses ids that look alike, or None when none do.

    Parameters
    ----------
    ids : iterable of str
        The ids to check together (the evidence's and the policy's task set).
    label : str
        Where they came from (a results file, the policy's ``tasks.ids``).

    Examples
    --------
    >>> print(lookalike_refusal(["task", "task "], "runs.jsonl"))
    runs.jsonl: task ids that look alike (they differ only by case, whitespace, invisible \
or format characters, or letters from another script drawn alike): task and task\\x20; \
a policy counts each task under one id: write each task's id one way
    >>> lookalike_refusal(["a", "b"], "runs.jsonl") is None
    True
    """
    groups = lookalike_groups(ids)
    if not groups:
        return None
    return (f"{label}: task ids that look alike ({_WHY}): {_groups_phrase(groups)}; a policy "
            "counts each task under one id: write each task's id one way")
