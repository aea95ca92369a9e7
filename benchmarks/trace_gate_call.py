"""Follow one ``passk gate NEW --baseline OLD`` call through passk's modules (issue 28).

A ``sys.setprofile`` hook records every call into a passk module while the command runs
(imports are warmed first, so import-time code is not counted). Printed:

- the modules entered and, at the coarse level (``results/*``, ``stats/*`` and ``cli/*``
  one module each; the leaf helpers ``render.tables``, ``_validation``, ``criteria``
  left out), the moves between modules and the returns to a module already left;
- the calls that cross modules, by callee, and the distinct caller -> callee edges;
- how often the dual-gate rule (``reliability_gate``) ran and which module made the verdict.

Run from the repository root: ``python benchmarks/trace_gate_call.py [-v]`` (``-v`` prints
the coarse sequence). The inputs are tests/fixtures/judge/new.jsonl and old.jsonl.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

HERE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "judge"
HELPERS = {"passk.render.tables", "passk._validation", "passk.criteria"}


def coarse(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) == 1 or module in HELPERS:
        return None
    if parts[1] in ("results", "stats", "cli"):
        return parts[1]
    return ".".join(parts[1:3])


def trace(argv: list[str]) -> tuple[list[str], list[tuple[str, str, str]], int]:
    from passk.cli.commands import main

    seq: list[str] = []
    edges: list[tuple[str, str, str]] = []

    def prof(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        mod = frame.f_globals.get("__name__", "")
        if not mod.startswith("passk"):
            return
        seq.append(mod)
        back = frame.f_back
        caller = back.f_globals.get("__name__", "") if back is not None else ""
        edges.append((caller, mod, frame.f_code.co_name))

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        main(argv)  # warm: imports and caches
        sys.setprofile(prof)
        try:
            rc = main(argv)
        finally:
            sys.setprofile(None)
    return seq, edges, rc


def moves(seq: list[str]) -> tuple[list[str], int, int]:
    collapsed = [m for i, m in enumerate(seq) if i == 0 or seq[i - 1] != m]
    seen: set[str] = set()
    returns = 0
    for m in collapsed:
        returns += m in seen
        seen.add(m)
    return collapsed, len(collapsed) - 1, returns


def main() -> None:
    argv = ["gate", str(HERE / "new.jsonl"), "--baseline", str(HERE / "old.jsonl"), "--k", "2",
            "--min-overall", "0", "--max-flakiness", "1"]
    seq, edges, rc = trace(argv)
    fine = [m for m in seq if m not in HELPERS]
    _, mv, back = moves(fine)
    print(f"exit {rc}; modules entered: {len(set(fine))}; moves {mv}; returns to a module "
          f"already left {back}")
    cpath, cmv, cback = moves([c for c in map(coarse, seq) if c])
    print(f"coarse: modules {len(set(cpath))}; moves {cmv}; returns {cback}; entries "
          f"{dict(Counter(cpath).most_common())}")
    if "-v" in sys.argv:
        print("  " + " -> ".join(cpath))
    cross = [(coarse(a), coarse(b)) for a, b, _ in edges if a.startswith("passk")]
    cross = [(a, b) for a, b in cross if a and b and a != b]
    print(f"calls across modules: {len(cross)}; by callee "
          f"{dict(Counter(b for _, b in cross).most_common())}")
    print("edges:", ", ".join(f"{a}->{b}" for a, b in sorted(set(cross))))
    names = [f for _, _, f in edges]
    makers = sorted({a for a, _, f in edges if f in ("reliability_gate", "decide", "judge")
                     and a.startswith("passk") and coarse(a) != "stability"})
    print(f"reliability_gate ran {names.count('reliability_gate')} time(s); the verdict is "
          f"asked for in {', '.join(makers)}; made in "
          + ", ".join(sorted({b for _, b, f in edges if f in ("decide", "judge")})))


if __name__ == "__main__":
    main()
