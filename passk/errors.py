"""passk's one error family, and the exit status each member means (written once here).

Every error passk raises for input it cannot use is a :class:`PasskError`; each
class carries the exit status a front end returns for it, so the command line,
the GitHub Action and the pytest plugin map errors to statuses in one way (as
pip's ``status_codes`` does). An exception that is not a :class:`PasskError`
is a bug: the command line lets it keep its traceback and Python's own status.

==========================  ======  =============================================
class                       status  what
==========================  ======  =============================================
:class:`PasskError`         2       the base: input passk cannot use, one line
:class:`BadInput`           2       a command's arguments or files
:class:`PolicyError`        2       a policy that cannot be used, or that refuses
:class:`LoosenedCriteria`   2       a criterion looser than the one declared
==========================  ======  =============================================

The readers' ``ResultsError``, the protocol's ``ProtocolMismatch`` and the
comparison's ``NoSharedTask`` are members too (defined beside what raises them).
They remain :class:`ValueError` subclasses, so ``except ValueError`` still
catches them.

Examples
--------
>>> try:
...     raise BadInput("runs.jsonl: line 3: success: 'yes' is not true or false")
... except PasskError as exc:
...     print(exc.exit_code, exc)
2 runs.jsonl: line 3: success: 'yes' is not true or false
"""

from __future__ import annotations

from passk._public import publish

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_BLOCKED",
    "EXIT_INCONCLUSIVE",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "BadInput",
    "LoosenedCriteria",
    "PasskError",
    "PolicyError",
]

#: The gate passed (no regression shown).
EXIT_OK = 0
#: The gate blocked (a regression shown).
EXIT_BLOCKED = 1
#: Input passk cannot use: one line on stderr naming the file, the line and the field.
EXIT_BAD_INPUT = 2
#: ``passk diff --margin``: neither non-inferiority nor a regression is shown.
EXIT_INCONCLUSIVE = 3
#: Interrupted (Ctrl-C), as shells count it: 128 + SIGINT.
EXIT_INTERRUPTED = 130


class PasskError(Exception):
    """Input passk cannot use; its message is one line naming what and what to do."""

    #: The status a front end exits with.
    exit_code: int = EXIT_BAD_INPUT


class BadInput(PasskError, ValueError):
    """A command's arguments or files that it cannot use."""


class PolicyError(PasskError, ValueError):
    """A policy that cannot be used, or an option or file it refuses; one line."""


class LoosenedCriteria(PasskError, ValueError):
    """A criterion asked for after the runs is looser than the one declared before them."""


publish(globals())  # the names passk.__all__ takes from here say 'passk' (passk._public)
