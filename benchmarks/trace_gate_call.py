"""Follow one ``passk gate NEW --baseline OLD`` call through passk (issue 28's closing note).

A ``sys.setprofile`` hook records every call into a passk function while the command
runs (imports and caches are warmed by a first run, so import-time code is not
counted). Each call is placed in a *module* and in a *layer*:

- module: the passk module that defines the function, with a family folded into its
  package (``results.formats.*`` is one module, the readers' table) and private helper
  modules (``_validation``, ``stats._checks``, ``formats._shared``, ``_public``) folded into
  their caller: they check arguments, they are not a step;
- layer: the module's layer in import-linter's layers contract (``pyproject.toml``), top
  (``integrations``, ``cli``) to bottom (``render | criteria``).

Dunder methods (a dataclass's ``__init__``, ``Results.__len__``) are data plumbing, and
a comprehension (``<listcomp>``, ``<genexpr>``) is its function's own code: neither is a
step, both are left out. The calls then form a timeline of the module (or layer)
executing; printed for each level:

- modules (layers) entered, and *moves*: how often the timeline changes module;
- *climbs*: moves back into a module (layer) already left, as issue 28 counted them
  (``stability`` entered 6 times, the CLI 5): the CLI resuming after a step and calling
  its next helper counts, as does a module calling its own helper after a call down;
- *entered from another*: the same, counting only the calls that cross into another
  module (layer), so a unit is re-entered only when something calls it again (the
  returns to an orchestrating CLI are not climbs there);
- *upward calls*: a function calling into a higher layer than its own (0: the layers
  contract forbids the imports, this checks that no callback climbs either);
- how often the dual-gate rule (``reliability_gate``) ran, and where the verdict is made;
- the largest function in the package, by lines of code (docstring left out) and in all.

Run from the repository root: ``python benchmarks/trace_gate_call.py [-v]`` (``-v`` prints
both timelines). The inputs are tests/fixtures/judge/new.jsonl and old.jsonl.
"""

from __future__ import annotations

import ast
import contextlib
import io
import sys
import tomllib
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "tests" / "fixtures" / "judge"
#: Families folded into their package: one reader per producer is one step, reading.
FAMILIES = ("passk.results.formats",)


def layers() -> list[list[str]]:
    """The layers contract's layers, top first, each a list of ``passk.``-relative names."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(c for c in config["tool"]["importlinter"]["contracts"]
                    if c["type"] == "layers")
    return [[m.strip() for m in layer.split("|")] for layer in contract["layers"]]


LAYERS = layers()


def module_of(name: str) -> str | None:
    """The module a call is counted in (None: a private helper, folded into its caller)."""
    if not name.startswith("passk.") or any(p.startswith("_") for p in name.split(".")[1:]):
        return None
    for family in FAMILIES:
        if name.startswith(family + "."):
            return family
    return name


def layer_of(module: str) -> str:
    """The layer of a module: its entry in the contract (``analysis.report``, ``results``)."""
    rel = module.removeprefix("passk.")
    best = max(((len(m), " | ".join(layer)) for layer in LAYERS for m in layer
                if rel == m or rel.startswith(m + ".")), default=None)
    return best[1] if best else rel


def rank(layer: str) -> int:
    return next((i for i, lay in enumerate(LAYERS) if " | ".join(lay) == layer), len(LAYERS))


def trace(argv: list[str]) -> tuple[list[tuple[str, str, str]], int]:
    """Every call into a passk function: (caller module, callee module, function)."""
    from passk.cli.commands import main

    calls: list[tuple[str, str, str]] = []

    def prof(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        name = frame.f_code.co_name
        callee = module_of(frame.f_globals.get("__name__", ""))
        if callee is None or name.startswith("<") or (name.startswith("__")
                                                       and name.endswith("__")):
            return  # a comprehension is its function's own code; a dunder is plumbing
        back = frame.f_back  # the nearest passk frame that is counted: the caller
        caller = None
        while back is not None and caller is None:
            caller = module_of(back.f_globals.get("__name__", ""))
            back = back.f_back
        calls.append((caller or "", callee, name))

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        main(argv)  # warm: imports and caches
        sys.setprofile(prof)
        try:
            rc = main(argv)
        finally:
            sys.setprofile(None)
    return calls, rc


def timeline(units: list[str]) -> tuple[list[str], int, int]:
    """The timeline with repeats collapsed, its moves, and its climbs back to a unit left."""
    path = [u for i, u in enumerate(units) if i == 0 or units[i - 1] != u]
    seen: set[str] = set()
    climbs = 0
    for u in path:
        climbs += u in seen
        seen.add(u)
    return path, len(path) - 1, climbs


def largest_function() -> tuple[int, int, str]:
    """(lines of code without the docstring, lines in all, where) of the largest function."""
    best = (0, 0, "")
    for path in sorted((ROOT / "passk").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                total = (node.end_lineno or node.lineno) - node.lineno + 1
                first = node.body[0]
                doc = ((first.end_lineno or first.lineno) - first.lineno + 1
                       if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                       and isinstance(first.value.value, str) else 0)
                where = f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"
                best = max(best, (total - doc, total, where))
    return best


#: The call followed: the judge's fixtures, a baseline, bar and cap out of the way.
ARGV = ["gate", str(HERE / "new.jsonl"), "--baseline", str(HERE / "old.jsonl"), "--k", "2",
        "--min-overall", "0", "--max-flakiness", "1"]


def main() -> None:
    calls, rc = trace(ARGV)
    print(f"passk gate NEW --baseline OLD: exit {rc}; {len(calls)} calls into passk functions")
    for level, unit in (("modules", lambda m: m.removeprefix("passk.")),
                        ("layers", layer_of)):
        path, moves, climbs = timeline([unit(m) for _, m, _ in calls])
        entries = Counter(path)
        print(f"{level}: {len(entries)} entered, {moves} moves, {climbs} climbs back to one "
              f"already left; entered {dict(entries.most_common())}")
        if "-v" in sys.argv:
            print("  " + " -> ".join(path))
        # entries: only the calls that cross into another unit (a unit's calls of its own
        # functions, and the returns to it, are left out): the order units are entered in
        crossing = [unit(b) for a, b, _ in calls if not a or unit(a) != unit(b)]
        epath, emoves, eclimbs = timeline(crossing)
        print(f"  entered from another: {len(crossing)} calls, {emoves} moves, {eclimbs} "
              f"climbs back to one already entered; by callee "
              f"{dict(Counter(crossing).most_common())}")
        if "-v" in sys.argv:
            print("  " + " -> ".join(epath))
    up = [(a, b, f) for a, b, f in calls
          if a and rank(layer_of(b)) < rank(layer_of(a))]
    print(f"upward calls (into a higher layer): {len(up)}"
          + (": " + ", ".join(sorted({f"{a}->{b}.{f}" for a, b, f in up})) if up else ""))
    names = [f for _, _, f in calls]
    makers = sorted({b for _, b, f in calls if f in ("judge", "decide")})
    askers = sorted({a for a, _, f in calls if f in ("judge", "decide")})
    print(f"reliability_gate ran {names.count('reliability_gate')} time(s); the verdict is "
          f"made in {', '.join(makers) or '?'} (asked for by {', '.join(askers) or '?'})")
    code, total, where = largest_function()
    print(f"largest function: {where}, {code} lines of code ({total} with its docstring)")


if __name__ == "__main__":
    main()
