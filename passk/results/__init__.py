"""Results: every run a file records, counted per task, with where the evidence came from.

==========================  =====================================================
module                      what
==========================  =====================================================
:mod:`.counts`              ``Results`` and ``Run``: runs into per-task counts
:mod:`.protocol`            a measurement's ``Protocol`` and its fingerprint
:mod:`.runlog`              the run log ``passk run`` and the pytest plugin write
:mod:`.formats`             one reader per producer, registered in one table
:mod:`.read`                ``read_results``: any supported file or files
==========================  =====================================================
"""

from __future__ import annotations

from passk.results.counts import (
    CACHED_RESULTS,
    DUPLICATES,
    INFRASTRUCTURE_ERRORS,
    Results,
    ResultsError,
    Run,
    Source,
    check_duplicates_option,
    combine_trials,
    results_from_runs,
    tally_runs,
    with_notes,
    with_overrides,
)
from passk.results.protocol import Protocol

__all__ = [
    "CACHED_RESULTS",
    "DUPLICATES",
    "INFRASTRUCTURE_ERRORS",
    "Protocol",
    "Results",
    "ResultsError",
    "Run",
    "Source",
    "check_duplicates_option",
    "combine_trials",
    "read_results",
    "results_from_runs",
    "tally_runs",
    "with_notes",
    "with_overrides",
]


def __getattr__(name: str) -> object:
    # read_results imports every reader: load it on first use, not with Results
    if name == "read_results":
        from passk.results.read import read_results

        return read_results
    raise AttributeError(f"module 'passk.results' has no attribute {name!r}")
