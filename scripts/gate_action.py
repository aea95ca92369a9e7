"""The GitHub Action's step (action.yml): a thin call of :mod:`passk.integrations.action`.

    PASSK_RESULTS='runs/*.jsonl' python scripts/gate_action.py

The logic (inputs ``PASSK_RESULTS``, ``PASSK_BASELINE``, ``PASSK_POLICY``,
``PASSK_CRITERIA``, ``PASSK_K``, ``PASSK_MIN_OVERALL``, ``PASSK_MAX_FLAKINESS``,
``PASSK_ON``, ``PASSK_CONFIDENCE``; the summary, the outputs and the exit status) lives
in the package, typed and tested: see that module's docstring.
"""

from __future__ import annotations

from passk.integrations.action import annotate, main

__all__ = ["annotate", "main"]

if __name__ == "__main__":
    raise SystemExit(main())
