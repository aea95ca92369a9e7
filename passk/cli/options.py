"""Typed command-line values, shared by the ``passk`` command and its pytest plugin.

Each is an ``argparse`` type: it returns the value or raises
:class:`argparse.ArgumentTypeError` with a message naming the bad text, which
argparse (and pytest's option parser, built on it) turns into a usage error.
Nothing here imports numpy, so the pytest plugin stays cheap to load.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from passk.criteria import MAX_K

__all__ = [
    "add_reader_overrides",
    "int_list",
    "margin",
    "open_probability",
    "positive_int",
    "probability",
    "risk_k",
    "whole",
    "whole_number",
]


def probability(text: str) -> float:
    """A number in [0, 1].

    Examples
    --------
    >>> probability("0.7")
    0.7
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text} must lie in [0, 1]")
    return value


def whole_number(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number no smaller than ``minimum``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{text} must be at least {minimum}")
        if value > MAX_K:  # a count of runs, not an arbitrary integer (numpy counts in int64)
            raise argparse.ArgumentTypeError(f"{text} is more than {MAX_K:,}: give a number "
                                             "of runs")
        return value
    return parse


#: A whole number of at least 1.
positive_int = whole_number(1)
#: A whole number of at least 0.
whole = whole_number(0)
#: Planned looks of early stopping: at least 2 (the last is after every run).
looks = whole_number(2)


def risk_k(text: str) -> tuple[str, int]:
    """``RISK=K``: a risk label and its k.

    Examples
    --------
    >>> risk_k("high-risk-write=8")
    ('high-risk-write', 8)
    """
    risk, sep, value = text.partition("=")
    if not sep or not risk:
        raise argparse.ArgumentTypeError(f"{text!r} must read RISK=K, e.g. high-risk-write=8")
    return risk, positive_int(value)


def open_probability(text: str) -> float:
    """A number strictly between 0 and 1 (a confidence level, a significance level)."""
    value = probability(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text} must lie strictly between 0 and 1")
    return value


def int_list(text: str) -> list[int]:
    """An argparse type: comma-separated whole numbers of at least 2."""
    return [whole_number(2)(part.strip()) for part in text.split(",") if part.strip()]


def margin(text: str) -> float:
    """An argparse type: a non-inferiority margin on mean pass^k, in [0, 1)."""
    value = probability(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"{text} must be less than 1")
    return value


def add_reader_overrides(p: argparse.ArgumentParser) -> None:
    """The reader options that change what counts, each named in the verdict when used:
    ``--errors`` (Inspect logs, promptfoo evals) and ``--pool-unverified-runs``."""
    p.add_argument("--errors", choices=("fail", "exclude"), default=None,
                   help="Inspect logs and promptfoo evals: what a sample epoch (a row) that "
                   "ended in an error is: a failure (default: neither tells the agent's "
                   "errors from the infrastructure's, so passk fails closed), or exclude to "
                   "leave it out (counted, and named in the verdict)")
    p.add_argument("--pool-unverified-runs", action="store_true",
                   help="combine several files whose records carry no run id of their own "
                   "(plain JSON Lines, CSV, tau-bench) anyway: nothing tells their runs from "
                   "a copy, so without it they are refused; with it the verdict says the "
                   "runs were not verified distinct")
