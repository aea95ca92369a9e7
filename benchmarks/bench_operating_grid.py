"""The operating characteristic's grid, before and after issue 38 (item 2), in one run.

T = 1000 tasks, n = 12 runs, k = 5, bar 0.7, cap 1 (no flakiness block): the lattice of the
suite's sum of C(c, 5) has 1000 x C(12, 5) = 792,000 steps. The old grid (capped at 2**19 - 1
steps, 2**14 a task) cannot hold it and answers a bracket; the new one (2**22) holds it and
answers exactly. Two populations: identical tasks at p = 0.7**(1/5), and 1000 distinct rates
(a spread lowered to the bar). CPU time is ``time.process_time`` (best of ``--repeat``), for

- the code as it was before issue 38 (``git show 9f3cb8f:passk/stats/operating.py``, loaded
  from this repository's history when git has it), and
- today's code with the old cap forced (``_GRID``, ``_BRACKET_STEPS``), and with its own.

    nice -n 10 python benchmarks/bench_operating_grid.py
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from passk.criteria import GateCriteria
from passk.stats import operating

BEFORE = "9f3cb8f"  # main before issue 38's items 1 and 2


def _old_module() -> ModuleType | None:
    """operating.py as it was at BEFORE, imported under another name (None without git)."""
    root = Path(__file__).resolve().parents[1]
    try:
        text = subprocess.run(["git", "-C", str(root), "show",
                               f"{BEFORE}:passk/stats/operating.py"], check=True,
                              capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    path = Path(tempfile.mkdtemp()) / "operating_before.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("operating_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["operating_before"] = module
    spec.loader.exec_module(module)
    return module


def _cpu(call: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        out = call()
        best = min(best, time.process_time() - start)
    return best, out


def _shown(oc: Any) -> str:
    if oc.low == oc.high:
        return f"{oc.probability:.6f} ({oc.method})"
    return f"[{oc.low:.4f}, {oc.high:.4f}] ({oc.method})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    crit = GateCriteria(k=5, min_overall_pass_hat_k=0.7, max_flakiness=1.0)
    populations = {"identical tasks": np.full(1000, 0.7 ** 0.2),
                   "1000 distinct rates": operating.lowered_rates(
                       np.linspace(0.8, 1.0, 1000), 5, 0.7)}
    old = _old_module()
    grid, steps = operating._GRID, operating._BRACKET_STEPS
    print("T = 1000, n = 12, k = 5, bar 0.7, cap 1: P(pass) and CPU seconds (best of "
          f"{args.repeat})")
    for name, rates in populations.items():
        def new(rates: np.ndarray = rates) -> Any:
            return operating.operating_characteristic(crit, 12, rates, rng=0)
        rows = []
        if old is not None:
            rows.append((f"before ({BEFORE}, grid 2**19 - 1)",
                         *_cpu(lambda r=rates: old.operating_characteristic(crit, 12, r, rng=0),
                               args.repeat)))
        operating._GRID, operating._BRACKET_STEPS = 2**19 - 1, 2**14
        try:
            rows.append(("today's code, old cap 2**19 - 1", *_cpu(new, args.repeat)))
        finally:
            operating._GRID, operating._BRACKET_STEPS = grid, steps
        rows.append((f"today's code, grid 2**{grid.bit_length() - 1}", *_cpu(new, args.repeat)))
        print(f"\n{name}")
        for label, cpu, oc in rows:
            print(f"  {label:<36} {_shown(oc):<30} {cpu:7.2f} s")
        base = rows[0][1]
        print(f"  CPU ratio, exact against {rows[0][0]}: {rows[-1][1] / base:.2f}")


if __name__ == "__main__":
    main()
