"""CPU and wall of ``passk report`` and ``passk gate`` against a plain numpy baseline (issue 30).

The baseline reads the same JSON Lines with the standard library's ``json``,
groups the runs by task, and computes pass@k and pass^k for k = 1..n with
numpy and ``scipy.special.comb`` (C(c, k) / C(n, k)). Each command runs in a
fresh process; its CPU is the child's user + system time (``os.wait4``).
Runs are interleaved (baseline, report, gate, [the same on --before], then
again) so that a busy machine shifts every side alike; min and median of
``--repeats`` runs are printed, with the ratio of each to the baseline's.

    .venv/bin/python benchmarks/bench_ratios.py [--sizes 10000x16 10000x64 100000x16]
        [--repeats 3] [--before /path/to/another/checkout] [--no-memory]

``--before`` times the same commands with another checkout first on the path
(e.g. the code before a change), so one run prints before and after.

Every child runs from bytecode, as an installed package does: the children's
``PYTHONPYCACHEPREFIX`` is a temporary folder (no checkout is written to), any
``PYTHONDONTWRITEBYTECODE`` is dropped, and one untimed round of every command
compiles what it imports. Then (``--memory``, the default) each side reads
1,600,000 records (100,000 tasks x 16) as JSON Lines and as CSV with
``read_results`` alone in a fresh process: its peak memory (VmHWM, the child's
own) and CPU.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_report import write_runs  # the same results file as bench_report.py

HERE = Path(__file__).resolve().parents[1]

BASELINE = r"""
import json, sys
from collections import defaultdict
import numpy as np
from scipy.special import comb
succ = defaultdict(int); tot = defaultdict(int)
with open(sys.argv[1], encoding="utf-8") as f:
    for line in f:
        r = json.loads(line)
        tot[r["task_id"]] += 1
        succ[r["task_id"]] += bool(r["success"])
tasks = sorted(tot)
c = np.array([succ[t] for t in tasks]); n = np.array([tot[t] for t in tasks])
ks = np.arange(1, n.max() + 1)
hat = comb(c[:, None], ks) / comb(n[:, None], ks)
at = 1 - comb((n - c)[:, None], ks) / comb(n[:, None], ks)
print(len(tasks), hat.mean(axis=0)[-1], at.mean(axis=0)[-1])
"""


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, ru_maxrss in MB: not trusted, see the README) of a child."""
    t0 = time.perf_counter()
    # cwd: a folder without passk, since ``-m`` and ``-c`` put the working directory first
    # on the path, before PYTHONPATH (a checkout's passk would shadow the side's)
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                            cwd=tempfile.gettempdir())
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read() if proc.stderr else b""
    if proc.stderr:
        proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):  # 1: the gate blocked, a verdict
        raise RuntimeError(f"{cmd} exited {code}: {err.decode()[-500:]}")
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss // 1024


#: read_results alone in a fresh process: records counted, VmHWM (kB), user + system CPU.
READ_ONLY = ("import os, sys; from passk.results.read import read_results; "
             "r = read_results(sys.argv[1]); t = os.times(); "
             "hwm = [x.split()[1] for x in open('/proc/self/status') if x.startswith('VmHWM')][0]; "
             "print(int(r.totals.sum()), hwm, t.user + t.system)")


def write_csv(path: Path, tasks: int, trials: int, seed: int = 0) -> None:
    """The same runs as :func:`bench_report.write_runs`, as CSV."""
    import numpy as np

    rng = np.random.default_rng(seed)
    p = rng.beta(4, 1, size=tasks)
    ok = rng.random((tasks, trials)) < p[:, None]
    with open(path, "w", encoding="utf-8") as f:
        f.write("task_id,trial,success\n")
        f.writelines("".join(f"task-{t:06d},{j},{'true' if ok[t, j] else 'false'}\n"
                            for j in range(trials)) for t in range(tasks))


def memory(py: str, sides: dict[str, dict[str, str]], tmp: Path) -> None:
    print("\nreading 1,600,000 records (100,000 tasks x 16), read_results alone, a fresh "
          "process each")
    for suffix in (".jsonl", ".csv"):
        path = tmp / f"runs-memory{suffix}"
        subprocess.run([py, __file__, "--write", str(path), "100000", "16"], check=True)
        for side, env in sides.items():
            out = subprocess.run([py, "-c", READ_ONLY, str(path)], env=env, check=True,
                                 capture_output=True, text=True, cwd=tmp).stdout.split()
            print(f"  {side}{suffix[1:]:<6} {path.stat().st_size / 1e6:4.0f} MB file: "
                  f"{int(out[0]):,} runs, peak {int(out[1]) / 1024:4.0f} MB, "
                  f"CPU {float(out[2]):5.2f} s")
        path.unlink()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="*", default=["10000x16", "10000x64", "100000x16"])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--before", type=Path, default=None,
                    help="another checkout to time too (its passk first on the path)")
    ap.add_argument("--no-memory", dest="memory", action="store_false",
                    help="skip the peak memory of reading 1,600,000 records")
    ap.add_argument("--write", nargs=3, metavar=("PATH", "TASKS", "TRIALS"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.write:
        writer = write_csv if args.write[0].endswith(".csv") else write_runs
        writer(Path(args.write[0]), int(args.write[1]), int(args.write[2]))
        return 0
    py = sys.executable
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores; "
          f"CPU = the child's user + system; min and median of {args.repeats} interleaved runs")
    with tempfile.TemporaryDirectory() as tmp:
        common = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        common["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        sides: dict[str, dict[str, str]] = {"": {**common, "PYTHONPATH": str(HERE)}}
        if args.before is not None:
            sides["before "] = {**common, "PYTHONPATH": str(args.before.resolve())}
        base_py = Path(tmp) / "baseline.py"
        base_py.write_text(BASELINE)
        warm = True
        for size in args.sizes:
            tasks, trials = map(int, size.split("x"))
            path = Path(tmp) / f"runs-{size}.jsonl"
            # written by a child: this process stays small, so that no child's peak memory
            # (ru_maxrss survives fork and exec) is this one's
            subprocess.run([py, __file__, "--write", str(path), str(tasks), str(trials)],
                           check=True)
            cmds: dict[str, tuple[list[str], dict[str, str]]] = {
                "baseline": ([py, str(base_py), str(path)], sides[""])}
            for side, env in sides.items():
                for command in ("report", "gate"):
                    cmds[f"{side}passk {command}"] = ([py, "-m", "passk", command, str(path)],
                                                      env)
            if warm:  # compile what every command imports, untimed
                for cmd, env in cmds.values():
                    timed(cmd, env)
                warm = False
            got: dict[str, list[tuple[float, float, int]]] = {name: [] for name in cmds}
            for _ in range(args.repeats):
                for name, (cmd, env) in cmds.items():
                    got[name].append(timed(cmd, env))
            cpu0 = [c for c, _, _ in got["baseline"]]
            wall0 = [w for _, w, _ in got["baseline"]]
            print(f"\n{tasks:,} tasks x {trials} runs ({tasks * trials:,} records, "
                  f"{path.stat().st_size / 1e6:.0f} MB)")
            for name, rows in got.items():
                cpu, wall = [c for c, _, _ in rows], [w for _, w, _ in rows]
                print(f"  {name:<22} CPU min {min(cpu):6.2f} s median {statistics.median(cpu):6.2f}"
                      f" s = {min(cpu) / min(cpu0):4.2f}x / {statistics.median(cpu) / statistics.median(cpu0):4.2f}x"
                      f" | wall min {min(wall):6.2f} s = {min(wall) / min(wall0):4.2f}x")
            path.unlink()
        if args.memory:
            memory(py, sides, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
