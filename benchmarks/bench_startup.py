"""How fast the ``passk`` command starts: ``--help``, a report on tau-bench's run, an Inspect log.

A command that CI calls many times should start in a fraction of a second. Each
command runs in a fresh process, several times; the best time is printed beside
its goal, with the modules it imported (numpy, scipy.stats, inspect_ai).

    .venv/bin/python benchmarks/bench_startup.py [--repeat 5] [--tau-bench RUN.json]

The tau-bench run is ``../shared/data/tau-bench/gpt-4o-airline.json`` (4 MB) when it
is there (or ``--tau-bench``), else the book's derived copy. The Inspect log (about 100 KB, 50 samples ×
4 epochs) is written with inspect_ai's own ``write_eval_log`` into a temporary folder.

Every process runs from bytecode, as an installed package does: its
``PYTHONPYCACHEPREFIX`` is the temporary folder (no checkout is written to), any
``PYTHONDONTWRITEBYTECODE`` is dropped, and an untimed first run compiles what it imports.
It runs in the temporary folder with this checkout on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TAU_BENCH = ROOT.parent / "shared/data/tau-bench/gpt-4o-airline.json"
TAU_BENCH_COPY = ROOT / "book/data/tau-bench/gpt-4o-airline-rewards.json"

#: (label, goal in seconds) for each command timed
GOALS = {"passk --help": 0.3, "passk report tau-bench": 1.0, "passk report Inspect log": 2.0}


def write_inspect_log(folder: Path, samples: int = 50, epochs: int = 4) -> Path:
    """An Inspect AI log of ``samples`` × ``epochs`` scored samples, written by inspect_ai."""
    import inspect_ai.log as ilog
    from inspect_ai.scorer import Score

    log = ilog.EvalLog(
        status="success",
        eval=ilog.EvalSpec(created="2025-01-01T00:00:00+00:00", task="bench", model="mockllm/m",
                           dataset=ilog.EvalDataset(name="bench", samples=samples),
                           config=ilog.EvalConfig()),
        samples=[ilog.EvalSample(id=i, epoch=e, input="a question of some length " * 8,
                                 target="an answer",
                                 scores={"match": Score(value="C" if (i * 7 + e) % 5 else "I")})
                 for i in range(1, samples + 1) for e in range(1, epochs + 1)])
    path = folder / "log.json"
    ilog.write_eval_log(log, str(path))
    return path


def best_time(argv: list[str], repeat: int, env: dict[str, str], cwd: str
              ) -> tuple[float, str]:
    """The best wall time of ``repeat`` fresh processes, and which heavy modules loaded."""
    probe = ("import runpy, sys; sys.argv = {argv!r}; "
             "import atexit; atexit.register(lambda: print('MODULES', "
             "','.join(m for m in ('numpy', 'scipy.stats', 'inspect_ai') if m in sys.modules), "
             "file=sys.stderr)); runpy.run_module('passk', run_name='__main__')")
    times = []
    for i in range(repeat + 1):  # the first, untimed, compiles
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "passk", *argv[1:]], capture_output=True,
                       check=False, env=env, cwd=cwd)
        if i:
            times.append(time.perf_counter() - start)
    done = subprocess.run([sys.executable, "-c", probe.format(argv=argv)], capture_output=True,
                          text=True, check=False, env=env, cwd=cwd)
    loaded = [line for line in done.stderr.splitlines() if line.startswith("MODULES")]
    return min(times), (loaded[-1].split(" ", 1)[1] if loaded and " " in loaded[-1] else "-")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tau-bench", type=Path, default=None,
                        help="tau-bench's run (default: ../shared/data/tau-bench/...)")
    args = parser.parse_args()
    tau = args.tau_bench or (TAU_BENCH if TAU_BENCH.is_file() else TAU_BENCH_COPY)
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(PYTHONPYCACHEPREFIX=str(Path(tmp) / "pycache"), PYTHONPATH=str(ROOT))
        commands = {"passk --help": ["passk", "--help"],
                    "passk report tau-bench": ["passk", "report", str(tau)]}
        try:
            inspect_log = write_inspect_log(Path(tmp))
            commands["passk report Inspect log"] = ["passk", "report", str(inspect_log)]
            size = f"{inspect_log.stat().st_size / 1024:.0f} KB"
        except ImportError:
            size = "inspect_ai not installed: skipped"
        print(f"tau-bench run: {tau} ({tau.stat().st_size / 1e6:.1f} MB); Inspect log: {size}")
        print(f"{'command':<26} {'best of ' + str(args.repeat):>10} {'goal':>6}  {'ratio':>5}  "
              "heavy modules imported")
        for label, argv in commands.items():
            seconds, loaded = best_time(argv, args.repeat, env, tmp)
            goal = GOALS[label]
            print(f"{label:<26} {seconds:>9.2f}s {goal:>5.1f}s  {seconds / goal:>5.2f}  {loaded}")


if __name__ == "__main__":
    main()
