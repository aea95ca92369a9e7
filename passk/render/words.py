"""Words that follow a number: ``1 task``, ``2 tasks``, ``no tasks``; ``1 task has``, ``2 tasks
have``.

Every message, note, verdict reason and error ``passk`` prints that counts something says the
count through :func:`plural`, so that no sentence reads ``1 task(s)`` or ``0 of 0 ... failed``:
a sentence whose wording depends on a number has a branch per outcome, and the branch for one
and for many lives here, once.
"""

from __future__ import annotations

__all__ = ["plural"]

#: Nouns whose plural is not the noun plus ``s``/``es``/``ies`` (looked up on the last word).
_NOUNS = {"this": "these", "that": "those", "criterion": "criteria", "datum": "data",
          "index": "indices", "matrix": "matrices", "child": "children", "person": "people",
          "analysis": "analyses", "epoch": "epochs", "it": "they", "its": "their"}

#: Verbs whose plural (the form after ``2 tasks``) is not the singular less its ``s``.
_VERBS = {"is": "are", "has": "have", "was": "were", "does": "do", "goes": "go"}


def _noun(word: str) -> str:
    """The plural of a noun, or of a phrase by its last word (``sample epoch`` -> ``sample
    epochs``)."""
    head, _, last = word.rpartition(" ")
    lead = f"{head} " if head else ""
    if last in _NOUNS:
        return lead + _NOUNS[last]
    if last.endswith(("s", "x", "z", "ch", "sh")):
        return f"{lead}{last}es"
    if last.endswith("y") and len(last) > 1 and last[-2] not in "aeiou":
        return f"{lead}{last[:-1]}ies"
    return f"{lead}{last}s"


def _verb(verb: str) -> str:
    """The plural of a verb given in its singular (third person) form: ``fails`` -> ``fail``,
    ``passes`` -> ``pass``, ``has`` -> ``have``; a phrase by its first word (``is left out`` ->
    ``are left out``); a modal (``can``, ``would``) stays as it is."""
    first, space, rest = verb.partition(" ")
    if first in _VERBS:
        plural_ = _VERBS[first]
    elif first.endswith(("sses", "shes", "ches", "xes", "zes")):
        plural_ = first[:-2]
    elif first.endswith("ies") and len(first) > 4:
        plural_ = first[:-3] + "y"
    elif first.endswith("s") and not first.endswith("ss"):
        plural_ = first[:-1]
    else:
        plural_ = first
    return plural_ + space + rest


def plural(n: int, noun: str, *, many: str | None = None, zero: str | None = None,
           verb: str | tuple[str, str] | None = None, count: bool = True) -> str:
    """A count and the noun it counts, in the form the count needs.

    Parameters
    ----------
    n : int
        The count.
    noun : str
        The noun in the singular (``"task"``, ``"evidence source"``): the plural adds ``s``
        (``es`` after s, x, z, ch, sh; ``ies`` for a consonant and ``y``) to its last word, with
        a few irregulars known (``criterion`` -> ``criteria``).
    many : str, optional
        The plural, where the rule above does not make it.
    zero : str, optional
        The word said instead of ``0`` (``"no"`` gives ``no tasks``); without it ``0 tasks``.
    verb : str or (str, str), optional
        A verb in the singular, third person (``"has"``, ``"fails"``, ``"is left out"``), said
        after the noun and agreeing with the count (``2 tasks have``, ``1 task fails``); or the
        predicate for one and for many, where more than its first word changes
        (``("counts as a failure", "count as failures")``).
    count : bool, default True
        Say the count; ``False`` gives the noun (and verb) alone, for ``task a`` / ``tasks a, b``.

    Returns
    -------
    str
        ``"1 task"``, ``"2 tasks"``, ``"no tasks"``, ``"1 task has"``, ``"3 tasks have"``.

    Examples
    --------
    >>> plural(1, "task"), plural(2, "task"), plural(0, "task"), plural(0, "task", zero="no")
    ('1 task', '2 tasks', '0 tasks', 'no tasks')
    >>> plural(1, "evidence source"), plural(3, "evidence source")
    ('1 evidence source', '3 evidence sources')
    >>> plural(2, "repetition"), plural(2, "pass"), plural(2, "policy"), plural(2, "day")
    ('2 repetitions', '2 passes', '2 policies', '2 days')
    >>> plural(1, "task", verb="has"), plural(4, "task", verb="has")
    ('1 task has', '4 tasks have')
    >>> plural(2, "sample epoch", verb="ends in an error"), plural(1, "run", verb="passes")
    ('2 sample epochs end in an error', '1 run passes')
    >>> pred = ("counts as a failure", "count as failures")
    >>> plural(1, "trial", verb=pred), plural(3, "trial", verb=pred)
    ('1 trial counts as a failure', '3 trials count as failures')
    >>> plural(2, "task", count=False), plural(1, "column", count=False)
    ('tasks', 'column')
    >>> plural(2, "sample epoch"), plural(3, "criterion"), plural(2, "task", many="tasks so far")
    ('2 sample epochs', '3 criteria', '2 tasks so far')
    """
    word = noun if n == 1 else (many if many is not None else _noun(noun))
    if isinstance(verb, tuple):
        word = f"{word} {verb[0] if n == 1 else verb[1]}"
    elif verb is not None:
        word = f"{word} {verb if n == 1 else _verb(verb)}"
    if not count:
        return word
    said = zero if n == 0 and zero is not None else str(n)
    return f"{said} {word}"
