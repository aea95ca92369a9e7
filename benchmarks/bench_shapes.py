"""Issue 41's shapes, before and after, against a plain json + numpy baseline, in one run.

Each shape is measured in fresh processes, interleaved (baseline, before, after, then
again for ``--repeats``), each child timing its own work in CPU (user + system of the
process, ``time.process_time``) and reporting its peak memory (VmHWM). *before* is the
code at commit 9f3cb8f (``git archive``'d into a temporary folder, first on the path),
*after* this checkout. The data are generated in a temporary folder.

- **run log**: a ``passk run`` log of 100,000 tasks x 16 runs (1,600,000 records, its
  protocol header, each record's seed) read by ``read_results``, against the same records
  without the header (and so without seeds: a log with seeds needs its header) and
  against the baseline (``json.loads`` a line, count by task with numpy); from Python
  (``read_results`` pauses the cycle collector and restores it, so the collector later
  scans the run ids it made) and as the ``passk`` command runs (the collector off).
- **resume**: ``run_suite(..., resume=True)`` on a complete log of 62,500 tasks x 16 runs
  (1,000,000 runs; nothing left to run), a no-op adapter: CPU and peak memory.
- **curve**: ``suite_curve`` (every k = 1..n) on 1,000 tasks x 1,000 runs against 10,000 x
  100, the same million runs, and the curve as ``passk report`` shows it (``curve_ks``:
  every k to 20, then a sparser grid) on the same two shapes (``--no-curve`` skips it: it
  takes minutes).
- **plan**: ``passk plan --gate FILE`` (its default grid, k and modes) on a pilot of 300
  tasks x 12 runs, the CPU of the command from its import on, against the 10 s target
  (``--no-plan-before`` skips *before*: it takes minutes).
- **promptfoo**: ``read_results`` on a 50,000-row ``promptfoo eval -o`` file from Python
  (the collector as the process has it: on), against ``json.load`` and a count.
- **tau2**: ``read_results`` on a tau2 ``Results`` file of 40,000 simulations (10,000
  tasks x 4 trials, each with a short conversation), against ``json.load`` and a count.
- **harbor**: ``read_results`` on a Harbor job of 5,000 trials, against reading each
  trial's ``result.json`` with ``json.load`` and a count.
- **runner**: ``run_suite`` of 1,000 tasks x 10 runs with a no-op adapter, one after
  another, with its crash-safe log: CPU a run and runs a CPU second (the wall clock
  of a loaded machine says more about the load).
- **report**: ``passk report FILE`` (and ``passk gate FILE``) as the command runs, timed from
  its import, on the million-record shapes (100,000 x 10, 10,000 x 100, 1,000 x 1,000 and
  very unequal runs per task, JSON Lines) and on 1,000,000 records as CSV, plain and with
  every cell quoted, against the baseline of ``bench_ratios.py``: read with ``json`` (or
  ``csv``), count by task, pass@k and pass^k for every k with ``scipy.special.comb``, timed
  from its imports.
- **dask**: ``run_suite`` of 200 tasks x 10 runs of a no-op adapter on a Dask cluster
  (``client.get_executor(pure=False)``, 2 workers x 2 threads in the process) without and
  with its log, against Dask's own cost: the same runs (``run_once``) submitted to the
  same executor and waited for; CPU of the whole process (scheduler, workers, client).

At the end, every goal of issue 41 is listed with its figure and a mark: ``ok`` when met,
``NOT MET`` otherwise.

    .venv/bin/python benchmarks/bench_shapes.py [--repeats 1] [--no-curve] [--only log ...]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
BEFORE = "9f3cb8f"

#: Each child prints one JSON line: its CPU for the work, VmHWM in MB, and a check value.
MEASURE = r"""
import json, sys, time
def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
def report(cpu, check):
    print(json.dumps({"cpu": cpu, "mb": peak(), "check": check}))
"""

READ = MEASURE + r"""
from passk.results.read import read_results
t = time.process_time()
r = read_results(sys.argv[1])
cpu = time.process_time() - t
report(cpu, [int(r.totals.sum()), int(r.successes.sum()), len(r.task_ids)])
"""

#: :data:`READ` with the collector off for the whole process, as the ``passk`` command runs.
READ_AS_CLI = READ.replace("from passk.results.read import read_results",
                           "import gc; gc.disable()\nfrom passk.results.read import read_results")

LOG_BASELINE = MEASURE + r"""
from collections import defaultdict
import numpy as np
t = time.process_time()
succ = defaultdict(int); tot = defaultdict(int)
with open(sys.argv[1], encoding="utf-8") as f:
    for line in f:
        r = json.loads(line)
        if "protocol" in r:
            continue
        tot[r["task_id"]] += 1
        succ[r["task_id"]] += bool(r["success"])
tasks = sorted(tot)
c = np.array([succ[x] for x in tasks]); n = np.array([tot[x] for x in tasks])
cpu = time.process_time() - t
report(cpu, [int(n.sum()), int(c.sum()), len(tasks)])
"""

PROMPTFOO_BASELINE = MEASURE + r"""
from collections import defaultdict
import numpy as np
t = time.process_time()
data = json.load(open(sys.argv[1], encoding="utf-8"))
succ = defaultdict(int); tot = defaultdict(int)
for row in data["results"]["results"]:
    key = (row["provider"]["id"], row["prompt"]["label"], json.dumps(row["vars"], sort_keys=True))
    tot[key] += 1
    succ[key] += bool(row["success"])
c = np.array(list(succ.values())); n = np.array([tot[k] for k in succ])
cpu = time.process_time() - t
report(cpu, [int(n.sum()), int(c.sum()), len(n)])
"""

TAU2_BASELINE = MEASURE + r"""
from collections import defaultdict
import numpy as np
t = time.process_time()
data = json.load(open(sys.argv[1], encoding="utf-8"))
succ = defaultdict(int); tot = defaultdict(int)
for sim in data["simulations"]:
    tot[sim["task_id"]] += 1
    succ[sim["task_id"]] += (sim.get("reward_info") or {}).get("reward") == 1.0
c = np.array(list(succ.values())); n = np.array([tot[k] for k in succ])
cpu = time.process_time() - t
report(cpu, [int(n.sum()), int(c.sum()), len(n)])
"""

HARBOR_BASELINE = MEASURE + r"""
from collections import defaultdict
from pathlib import Path
import numpy as np
t = time.process_time()
succ = defaultdict(int); tot = defaultdict(int)
for d in sorted(Path(sys.argv[1]).iterdir()):
    if d.is_dir():
        r = json.load(open(d / "result.json", encoding="utf-8"))
        tot[r["task_name"]] += 1
        succ[r["task_name"]] += (r["verifier_result"] or {}).get("rewards", {}).get("reward") == 1
c = np.array(list(succ.values())); n = np.array([tot[k] for k in succ])
cpu = time.process_time() - t
report(cpu, [int(n.sum()), int(c.sum()), len(n)])
"""

CURVE = MEASURE + r"""
import numpy as np
from passk.analysis.report import suite_curve
tasks, runs = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
n = np.full(tasks, runs)
c = rng.binomial(n, rng.beta(4, 1, size=tasks))
t = time.process_time()
cv = suite_curve(c, n, runs)
cpu = time.process_time() - t
report(cpu, [float(cv.pass_hat_k[-1]), float(cv.hat_ci[-1][0])])
"""

#: The curve as ``passk report`` shows it: every k up to 20, then the sparser grid of
#: ``curve_ks`` (35 ks at n = 1,000, 27 at n = 100), the same numbers at each k.
CURVE_SHOWN = CURVE.replace("from passk.analysis.report import suite_curve",
                            "from passk.analysis.report import curve_ks, suite_curve").replace(
    "cv = suite_curve(c, n, runs)", "cv = suite_curve(c, n, runs, ks=curve_ks(runs))")

#: ``passk plan --gate FILE`` as the command runs it (the collector off), timed from the import.
PLAN = MEASURE + r"""
import contextlib, gc, io
gc.disable()
t = time.process_time()
from passk.cli.commands import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(["plan", "--gate", sys.argv[1], *sys.argv[2:]])
cpu = time.process_time() - t
report(cpu, [code, sum("Monte Carlo" in line for line in out.getvalue().splitlines())])
"""

#: The plan's target (issue 41): CPU seconds for ``plan --gate`` on 300 tasks.
PLAN_TARGET = 10.0


def make_plan_pilot(path: Path, tasks: int, runs: int) -> None:
    """A pilot: ``tasks`` tasks x ``runs`` runs, each task's rate from Beta(8, 1), seeded."""
    import random

    gen = random.Random(41)
    rates = [gen.betavariate(8, 1) for _ in range(tasks)]
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(json.dumps({"task_id": f"t{t:03d}", "trial": r,
                                 "success": gen.random() < rates[t]}) + "\n"
                     for t in range(tasks) for r in range(runs))


#: The adapter is ``__main__.Noop`` in the child that writes the log and in the one that
#: resumes it, so that the protocol (which names the adapter) is the same.
NOOP = r"""
from passk.adapter import RunResult, Task
class Noop:
    def run(self, task, *, seed):
        return RunResult(task.task_id, 0, seed % 5 != 0)
"""

MAKE_LOG = NOOP + r"""
import json, os, sys, pathlib
import numpy as np
from passk import run_suite
from passk.results.protocol import Protocol
from passk.repeats import run_seed
out, tasks, runs, bare = pathlib.Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
probe = out.with_name("probe.jsonl")
run_suite(Noop(), [Task("t")], {"read-only": runs}, seed=5, log=probe, progress=False)
header = json.loads(probe.read_text().splitlines()[0])
probe.unlink()
ids = [f"task-{t:06d}" for t in range(tasks)]
header["protocol"] = Protocol({**header["protocol"]["settings"], "tasks": ids}).to_dict()
try:
    from passk.repeats import run_seeds  # after issue 41: the same seeds, in bulk
    seeds = run_seeds(5, [t for t in ids for _ in range(runs)],
                      np.tile(np.arange(runs), tasks)).tolist()
except ImportError:
    seeds = [run_seed(5, t, j) for t in ids for j in range(runs)]
with open(out, "w") as f, (open(bare, "w") if bare != "-" else open(os.devnull, "w")) as g:
    f.write(json.dumps(header, separators=(",", ":")) + "\n")
    for i, seed in enumerate(seeds):
        rec = {"task_id": ids[i // runs], "trial": i % runs, "success": seed % 5 != 0,
               "attempt": 0, "seconds": 1e-05, "error": None, "infrastructure_error": False,
               "cached": False, "seed": seed, "risk": "read-only"}
        f.write(json.dumps(rec, separators=(",", ":")) + "\n")
        del rec["seed"]
        g.write(json.dumps(rec, separators=(",", ":")) + "\n")
"""

RESUME = NOOP + MEASURE + r"""
from passk import run_suite
tasks, runs = int(sys.argv[2]), int(sys.argv[3])
suite = [Task(f"task-{t:06d}") for t in range(tasks)]
t = time.process_time()
out = run_suite(Noop(), suite, {"read-only": runs}, seed=5, log=sys.argv[1], resume=True,
                progress=False)
cpu = time.process_time() - t
report(cpu, [out.runs_spent, len(out.results)])
"""


RUNNER = NOOP + MEASURE + r"""
import os, tempfile
from passk import run_suite
tasks, runs = int(sys.argv[1]), int(sys.argv[2])
suite = [Task(f"task-{t:06d}") for t in range(tasks)]
run_suite(Noop(), suite[:10], {"read-only": runs}, progress=False)  # imports, tqdm
log = os.path.join(tempfile.mkdtemp(), "log.jsonl")
t = time.process_time()
out = run_suite(Noop(), suite, {"read-only": runs}, seed=5, log=log, progress=False)
cpu = time.process_time() - t
report(cpu, [out.runs_spent, sum(1 for _ in open(log)) - 1])
"""

#: A side of the Dask shape: ``own`` (Dask's own cost), ``suite`` or ``suite+log``.
DASK = NOOP + MEASURE + r"""
import os, tempfile, logging
from concurrent.futures import wait
import distributed
from passk import run_suite
from passk.repeats import run_once, run_seed
logging.getLogger("distributed").setLevel(logging.ERROR)
side, tasks, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
suite = [Task(f"task-{t:06d}") for t in range(tasks)]
with distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=False,
                              dashboard_address=None) as cluster, \
        distributed.Client(cluster) as client:
    ex = client.get_executor(pure=False)
    def own():
        futs = [ex.submit(run_once, Noop(), t, i, run_seed(5, t.task_id, i))
                for t in suite for i in range(runs)]
        wait(futs)
        return sum(f.result().success for f in futs)
    def mine(log):
        out = run_suite(Noop(), suite, {"read-only": runs}, seed=5, executor=ex, log=log,
                        progress=False)
        return sum(r.success for r in out.results)
    work = own if side == "own" else (lambda: mine(None)) if side == "suite" else \
        (lambda: mine(os.path.join(tempfile.mkdtemp(), "log.jsonl")))
    work()  # warm: imports, the cluster's first tasks
    t = time.process_time()
    good = work()
    cpu = time.process_time() - t
report(cpu, [tasks * runs, good])
"""


#: ``passk report`` / ``passk gate`` as the command runs it (the collector off), timed from
#: its import; the text goes to a buffer.
COMMAND = MEASURE + r"""
import contextlib, gc, io
gc.disable()
t = time.process_time()
from passk.cli.commands import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main([sys.argv[1], sys.argv[2]])
cpu = time.process_time() - t
report(cpu, [code, len(out.getvalue().splitlines()) > 0])
"""

#: bench_ratios.py's baseline, timed from its imports: read, count by task, pass@k and
#: pass^k for every k with scipy's comb.
REPORT_BASELINE = MEASURE + r"""
t = time.process_time()
import csv
from collections import defaultdict
import numpy as np
from scipy.special import comb
succ = defaultdict(int); tot = defaultdict(int)
with open(sys.argv[1], encoding="utf-8", newline="") as f:
    if sys.argv[1].endswith(".csv"):
        for r in csv.DictReader(f):
            tot[r["task_id"]] += 1
            succ[r["task_id"]] += r["success"] in ("true", "1")
    else:
        for line in f:
            r = json.loads(line)
            tot[r["task_id"]] += 1
            succ[r["task_id"]] += bool(r["success"])
tasks = sorted(tot)
c = np.array([succ[x] for x in tasks]); n = np.array([tot[x] for x in tasks])
ks = np.arange(1, n.max() + 1)
hat = comb(c[:, None], ks) / comb(n[:, None], ks)
at = 1 - comb((n - c)[:, None], ks) / comb(n[:, None], ks)
cpu = time.process_time() - t
report(cpu, [0, True])
"""


def make_unequal(path: Path, tasks: int, seed: int = 0) -> int:
    """JSON Lines of ``tasks`` tasks whose runs range from 1 to 399 (a log-uniform spread),
    each task's rate from Beta(4, 1); the records written."""
    import numpy as np

    rng = np.random.default_rng(seed)
    runs = np.exp(rng.uniform(0, np.log(400), size=tasks)).astype(int).clip(1, 399)
    p = rng.beta(4, 1, size=tasks)
    with open(path, "w", encoding="utf-8") as f:
        for t in range(tasks):
            ok = rng.random(runs[t]) < p[t]
            f.write("".join(f'{{"task_id": "task-{t:06d}", "trial": {j}, "success": '
                            f'{"true" if ok[j] else "false"}}}\n' for j in range(runs[t])))
    return int(runs.sum())


def quote_csv(src: Path, dest: Path) -> None:
    """``src``'s CSV with every cell quoted (``csv.QUOTE_ALL``, as spreadsheets export)."""
    import csv

    with open(src, encoding="utf-8", newline="") as f, \
            open(dest, "w", encoding="utf-8", newline="") as g:
        csv.writer(g, quoting=csv.QUOTE_ALL).writerows(csv.reader(f))


#: Every goal of issue 41 met or not, as measured: (what, figure, goal, met).
GOALS: list[tuple[str, str, str, bool]] = []


def goal(what: str, value: float, limit: float, *, unit: str = "x", at_least: bool = False,
         ) -> None:
    """Record a goal's figure; listed with its mark at the end."""
    met = value >= limit if at_least else value <= limit
    fmt = (lambda v: f"{v:,.0f}") if unit == " runs/s" else (lambda v: f"{v:.2f}")
    sign = ">=" if at_least else "<="
    GOALS.append((what, f"{fmt(value)}{unit}", f"{sign} {fmt(limit)}{unit}", met))


def export_before(tmp: Path) -> Path:
    """The code at :data:`BEFORE`, ``git archive``'d into ``tmp/before``."""
    data = subprocess.run(["git", "-C", str(HERE), "archive", BEFORE, "passk"],
                          capture_output=True, check=True).stdout
    dest = tmp / "before"
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(dest, filter="data")
    return dest


def child(code: str, side: Path | None, *args: str) -> dict:
    """Run ``code`` in a fresh process with ``side`` first on the path; its JSON line."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",
                                                             "PYTHONDONTWRITEBYTECODE")}
    if side is not None:
        env["PYTHONPATH"] = str(side)
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "passk-bench-pycache")
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=env, cwd=tempfile.gettempdir(), check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"child failed: {proc.stderr[-2000:]}")
    lines = proc.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else {}


def shape(name: str, runs: dict[str, tuple[str, Path | None, tuple[str, ...]]],
          repeats: int) -> dict[str, list[dict]]:
    """Every side of one shape, interleaved ``repeats`` times; checks must agree."""
    got: dict[str, list[dict]] = {side: [] for side in runs}
    for _ in range(repeats):
        for side, (code, path, args) in runs.items():
            got[side].append(child(code, path, *args))
    checks = {side: json.dumps(v[0]["check"]) for side, v in got.items()}
    print(f"\n## {name}")
    for side, v in got.items():
        cpus = [x["cpu"] for x in v]
        print(f"  {side:<30} CPU min {min(cpus):7.2f} s, median {statistics.median(cpus):7.2f} s;"
              f" peak {max(x['mb'] for x in v):7.0f} MB; check {checks[side]}")
    return got


def cpu(v: list[dict]) -> float:
    return min(x["cpu"] for x in v)


def ratio(label: str, a: list[dict], b: list[dict]) -> None:
    print(f"  {label}: {cpu(a) / cpu(b):.2f}x")


def reader_shape(name: str, baseline: str, path: Path, before: Path, after: Path,
                 repeats: int, label: str) -> None:
    """A producer's file read by ``read_results``, before and after, against its plain
    baseline, with the goal of 1.5 times the baseline."""
    got = shape(name, {"baseline (json + numpy)": (baseline, None, (str(path),)),
                       "before": (READ, before, (str(path),)),
                       "after": (READ, after, (str(path),))}, repeats)
    ratio("before / baseline", got["before"], got["baseline (json + numpy)"])
    ratio("after / baseline", got["after"], got["baseline (json + numpy)"])
    ratio("after / before", got["after"], got["before"])
    goal(label, cpu(got["after"]) / cpu(got["baseline (json + numpy)"]), 1.5)


def make_promptfoo(path: Path, tasks: int, repeat: int) -> None:
    rows = []
    for t in range(tasks):
        for r in range(repeat):
            ok = (t * 7 + r * 3) % 10 != 0
            rows.append({"id": f"row-{t}-{r}", "testIdx": t * repeat + r, "promptIdx": 0,
                         "success": ok, "failureReason": 0 if ok else 1, "score": int(ok),
                         "provider": {"id": "echo"}, "prompt": {"raw": "hi", "label": "hi"},
                         "vars": {"q": f"question {t}"},
                         "testCase": {"vars": {"q": f"question {t}"}}})
    good = sum(r["success"] for r in rows)
    data = {"evalId": "eval-bench", "runtimeOptions": {"repeat": repeat},
            "results": {"version": 3, "timestamp": "2026-01-01T00:00:00Z", "results": rows,
                        "stats": {"successes": good, "failures": len(rows) - good,
                                  "errors": 0}}}
    path.write_text(json.dumps(data))


def make_tau2(path: Path, tasks: int, trials: int) -> None:
    """A tau2 ``Results`` file: its info, tasks and one simulation per task and trial, each
    with a short conversation (a user turn, a tool call and its answer, the agent's reply)
    as tau2's runner writes them."""
    sims = []
    for t in range(tasks):
        for r in range(trials):
            ok = (t * 7 + r * 3) % 10 != 0
            messages = [
                {"role": "user", "content": f"Please change my booking {t:05d}.", "turn_idx": 0},
                {"role": "assistant", "content": None, "turn_idx": 1,
                 "tool_calls": [{"id": f"call-{t}-{r}", "name": "get_reservation_details",
                                 "arguments": {"reservation_id": f"R{t:05d}"},
                                 "requestor": "assistant"}]},
                {"role": "tool", "id": f"call-{t}-{r}", "turn_idx": 2, "requestor": "assistant",
                 "content": json.dumps({"reservation_id": f"R{t:05d}", "status": "confirmed",
                                        "flights": [{"origin": "SFO", "destination": "JFK"}]})},
                {"role": "assistant", "content": "Your booking is changed.", "turn_idx": 3},
            ]
            sims.append({"id": f"sim-{t}-{r}", "task_id": f"task_{t:05d}", "trial": r,
                         "seed": 1000 * t + r, "start_time": "2026-01-01T00:00:00",
                         "end_time": "2026-01-01T00:01:00", "duration": 60.0,
                         "termination_reason": "user_stop", "agent_cost": 0.01,
                         "user_cost": 0.002, "messages": messages,
                         "reward_info": {"reward": 1.0 if ok else 0.0,
                                         "reward_basis": ["DB"]}})
    data = {"timestamp": "2026-01-01T00:00:00", "tasks": [{"id": f"task_{t:05d}"}
                                                          for t in range(tasks)],
            "info": {"num_trials": trials, "max_steps": 100, "max_errors": 10,
                     "git_commit": "bench"},
            "simulations": sims}
    path.write_text(json.dumps(data))


def make_harbor(job: Path, tasks: int, attempts: int) -> None:
    trial = json.loads((HERE / "tests/fixtures/harbor/job/fix-git__06861ae/result.json")
                       .read_text())
    job.mkdir()
    (job / "config.json").write_text(json.dumps({"schema_version": 1, "job_name": "bench",
                                                 "n_attempts": attempts}))
    (job / "result.json").write_text(json.dumps({
        "schema_version": 1, "id": "job-bench", "started_at": "2026-01-01T00:00:00Z",
        "finished_at": "2026-01-01T01:00:00Z", "n_total_trials": tasks * attempts,
        "stats": {"n_completed_trials": tasks * attempts}}))
    for t in range(tasks):
        for a in range(attempts):
            name = f"task-{t:05d}__{a:03d}"
            d = job / name
            d.mkdir()
            ok = (t * 7 + a * 3) % 10 != 0
            trial.update(id=f"trial-{t}-{a}", task_name=f"task-{t:05d}", trial_name=name,
                         started_at=f"2026-01-01T00:{a // 60:02d}:{a % 60:02d}Z",
                         verifier_result={"rewards": {"reward": int(ok)}})
            (d / "result.json").write_text(json.dumps(trial))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--no-curve", action="store_true", help="skip the curve (minutes)")
    ap.add_argument("--no-plan-before", action="store_true",
                    help="plan: skip the code before (minutes)")
    ap.add_argument("--no-every-k", action="store_true",
                    help="curve: only as passk report shows it, not every k = 1..n (minutes)")
    ap.add_argument("--only", nargs="*", default=None,
                    help="some of: log resume curve plan report promptfoo tau2 harbor runner "
                         "dask")
    args = ap.parse_args()
    want = set(args.only or ["log", "resume", "curve", "plan", "report", "promptfoo", "tau2",
                             "harbor", "runner", "dask"])
    if args.no_curve:
        want.discard("curve")
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        before = export_before(tmp)
        after = HERE
        if "log" in want:
            log, bare = tmp / "log.jsonl", tmp / "bare.jsonl"
            child(MAKE_LOG + "\nprint('{}')", after, str(log), "100000", "16", str(bare))
            got = shape("run log: 100,000 tasks x 16 runs (1,600,000 records), read_results", {
                "baseline (json + numpy)": (LOG_BASELINE, None, (str(log),)),
                "before, no header": (READ, before, (str(bare),)),
                "before, passk run log": (READ, before, (str(log),)),
                "after, no header": (READ, after, (str(bare),)),
                "after, passk run log": (READ, after, (str(log),)),
                "after, no header, as the CLI": (READ_AS_CLI, after, (str(bare),)),
                "after, log, as the CLI": (READ_AS_CLI, after, (str(log),)),
            }, args.repeats)
            ratio("after, as the CLI runs (collector off): log / without a header",
                  got["after, log, as the CLI"], got["after, no header, as the CLI"])
            goal("run log, 1.6 M records, as the CLI reads it / without a header",
                 cpu(got["after, log, as the CLI"]) / cpu(got["after, no header, as the CLI"]),
                 1.5)
            goal("run log, 1.6 M records, from Python / without a header",
                 cpu(got["after, passk run log"]) / cpu(got["after, no header"]), 1.5)
            goal("run log, 1.6 M records / the json + numpy baseline",
                 cpu(got["after, passk run log"]) / cpu(got["baseline (json + numpy)"]), 1.5)
            ratio("after: log / the same records without a header",
                  got["after, passk run log"], got["after, no header"])
            ratio("before: log / without a header", got["before, passk run log"],
                  got["before, no header"])
            ratio("after / before (log)", got["after, passk run log"],
                  got["before, passk run log"])
            ratio("after / baseline (log)", got["after, passk run log"],
                  got["baseline (json + numpy)"])
            log.unlink()
            bare.unlink()
        if "resume" in want:
            log = tmp / "resume.jsonl"
            child(MAKE_LOG + "\nprint('{}')", after, str(log), "62500", "16", "-")
            got = shape("resume: a complete log of 62,500 tasks x 16 runs (1,000,000 runs)", {
                "before": (RESUME, before, (str(log), "62500", "16")),
                "after": (RESUME, after, (str(log), "62500", "16")),
            }, args.repeats)
            ratio("after / before (CPU)", got["after"], got["before"])
            print(f"  after / before (peak memory): "
                  f"{max(x['mb'] for x in got['after']) / max(x['mb'] for x in got['before']):.2f}x")
            log.unlink()
        if "curve" in want and not args.no_every_k:
            got = shape("curve: suite_curve for k = 1..n, 10,000 x 100 and 1,000 x 1,000", {
                "before, 10,000 x 100": (CURVE, before, ("10000", "100")),
                "after, 10,000 x 100": (CURVE, after, ("10000", "100")),
                "before, 1,000 x 1,000": (CURVE, before, ("1000", "1000")),
                "after, 1,000 x 1,000": (CURVE, after, ("1000", "1000")),
            }, args.repeats)
            ratio("after: 1,000 x 1,000 / 10,000 x 100", got["after, 1,000 x 1,000"],
                  got["after, 10,000 x 100"])
            ratio("before: 1,000 x 1,000 / 10,000 x 100", got["before, 1,000 x 1,000"],
                  got["before, 10,000 x 100"])
        if "curve" in want:
            got = shape("curve as passk report shows it (every k to 20, then curve_ks's grid), "
                        "10,000 x 100 and 1,000 x 1,000", {
                "after, 10,000 x 100": (CURVE_SHOWN, after, ("10000", "100")),
                "after, 1,000 x 1,000": (CURVE_SHOWN, after, ("1000", "1000")),
            }, args.repeats)
            ratio("after, as shown: 1,000 x 1,000 / 10,000 x 100", got["after, 1,000 x 1,000"],
                  got["after, 10,000 x 100"])
            goal("curve as passk report shows it: 1,000 x 1,000 / 10,000 x 100",
                 cpu(got["after, 1,000 x 1,000"]) / cpu(got["after, 10,000 x 100"]), 1.5)
        if "plan" in want:
            pilot = tmp / "pilot.jsonl"
            make_plan_pilot(pilot, 300, 12)
            sides = {"after, 300 tasks x 12 runs": (PLAN, after, (str(pilot),)),
                     "after, the same, --k 5": (PLAN, after, (str(pilot), "--k", "5"))}
            if not args.no_plan_before:
                sides = {"before, 300 tasks x 12 runs": (PLAN, before, (str(pilot),)), **sides}
            got = shape("plan --gate: 300 tasks, its default grid (8 runs counts to 96)",
                        sides, args.repeats)
            for side in ("after, 300 tasks x 12 runs", "after, the same, --k 5"):
                print(f"  {side}: {cpu(got[side]):.2f} s CPU, {cpu(got[side]) / PLAN_TARGET:.2f}x "
                      f"the {PLAN_TARGET:g} s target")
            goal("plan --gate, 300 tasks x 12 runs, default grid (CPU seconds)",
                 cpu(got["after, 300 tasks x 12 runs"]), PLAN_TARGET, unit=" s")
            if not args.no_plan_before:
                ratio("after / before", got["after, 300 tasks x 12 runs"],
                      got["before, 300 tasks x 12 runs"])
        if "promptfoo" in want:
            pf = tmp / "promptfoo.json"
            make_promptfoo(pf, 12_500, 4)
            reader_shape("promptfoo: 50,000 rows (12,500 tests x 4 repeats), read_results "
                         "from Python", PROMPTFOO_BASELINE, pf, before, after, args.repeats,
                         "promptfoo, 50,000 rows from Python / baseline")
        if "tau2" in want:
            t2 = tmp / "tau2.json"
            make_tau2(t2, 10_000, 4)
            reader_shape("tau2: 40,000 simulations (10,000 tasks x 4 trials), read_results",
                         TAU2_BASELINE, t2, before, after, args.repeats,
                         "tau2, 40,000 simulations / baseline")
        if "harbor" in want:
            job = tmp / "job"
            make_harbor(job, 1_000, 5)
            reader_shape("harbor: a job of 5,000 trials (1,000 tasks x 5 attempts), "
                         "read_results", HARBOR_BASELINE, job, before, after, args.repeats,
                         "Harbor, 5,000 trials / baseline")
        if "runner" in want:
            got = shape("runner: 1,000 tasks x 10 runs, no-op adapter, with its log", {
                "before": (RUNNER, before, ("1000", "10")),
                "after": (RUNNER, after, ("1000", "10")),
            }, args.repeats)
            for side in ("before", "after"):
                cpus = sorted(x["cpu"] for x in got[side])
                print(f"  {side}: {10_000 / cpus[0]:,.0f} runs a CPU second at best, "
                      f"{10_000 / statistics.median(cpus):,.0f} median "
                      f"({1e6 * statistics.median(cpus) / 10_000:.0f} us a run)")
            ratio("after / before (CPU)", got["after"], got["before"])
            goal("runner with its log, no-op adapter (runs a CPU second, median)",
                 10_000 / statistics.median(x["cpu"] for x in got["after"]), 10_000,
                 unit=" runs/s", at_least=True)
        if "dask" in want:
            got = shape("dask: 200 tasks x 10 runs, no-op adapter, on a Dask cluster "
                        "(2 workers x 2 threads)", {
                            "Dask's own (submit, wait)": (DASK, after, ("own", "200", "10")),
                            "before, run_suite": (DASK, before, ("suite", "200", "10")),
                            "after, run_suite": (DASK, after, ("suite", "200", "10")),
                            "after, run_suite + log": (DASK, after, ("suite+log", "200", "10")),
                        }, args.repeats)
            own = got["Dask's own (submit, wait)"]
            ratio("before / Dask's own", got["before, run_suite"], own)
            ratio("after / Dask's own", got["after, run_suite"], own)
            ratio("after with its log / Dask's own", got["after, run_suite + log"], own)
            goal("Dask: run_suite with its log / Dask's own submit and wait",
                 cpu(got["after, run_suite + log"]) / cpu(own), 1.2)
        if "report" in want:
            report_shapes(tmp, before, args.repeats)
    print(f"\nload average at end: {os.getloadavg()[0]:.1f}")
    if GOALS:
        print("\n## issue 41's goals, this run (CPU time)")
        width = max(len(what) for what, *_ in GOALS)
        for what, figure, limit, met in GOALS:
            print(f"  {'ok     ' if met else 'NOT MET'}  {what:<{width}}  {figure:>12}  "
                  f"(goal {limit})")
    return 0


def report_shapes(tmp: Path, before: Path, repeats: int) -> None:
    """``passk report`` (and ``gate``) on the million-record shapes and on CSV, against
    the baseline; goals: report at or under 1.0x the baseline on the million-record JSON
    Lines shapes, every shape within 1.5x."""
    from bench_ratios import write_csv
    from bench_report import write_runs

    after = HERE
    files: list[tuple[str, Path, bool]] = []  # (shape, file, a million-record JSON Lines shape)
    for tasks, runs in ((100_000, 10), (10_000, 100), (1_000, 1_000)):
        path = tmp / f"runs-{tasks}x{runs}.jsonl"
        write_runs(path, tasks, runs)
        files.append((f"{tasks:,} x {runs:,} (JSON Lines)", path, True))
    unequal = tmp / "runs-unequal.jsonl"
    records = make_unequal(unequal, 14_000)
    files.append((f"14,000 tasks, 1 to 399 runs each ({records:,} records)", unequal, True))
    plain = tmp / "runs-100000x10.csv"
    write_csv(plain, 100_000, 10)
    quoted = tmp / "runs-100000x10-quoted.csv"
    quote_csv(plain, quoted)
    files += [("100,000 x 10, CSV", plain, False), ("100,000 x 10, CSV, every cell quoted",
                                                      quoted, False)]
    for name, path, million in files:
        sides = {"baseline (json/csv + numpy + comb)": (REPORT_BASELINE, None, (str(path),)),
                 "before, passk report": (COMMAND, before, ("report", str(path))),
                 "passk report": (COMMAND, after, ("report", str(path)))}
        if name.startswith("100,000 x 10 (JSON"):
            sides["passk gate"] = (COMMAND, after, ("gate", str(path)))
        got = shape(f"report: {name}", sides, repeats)
        base = got["baseline (json/csv + numpy + comb)"]
        for side in sides:
            if not side.startswith("baseline"):
                ratio(f"{side} / baseline", got[side], base)
        goal(f"passk report, {name} / baseline", cpu(got["passk report"]) / cpu(base),
             1.0 if million else 1.5)
        if "passk gate" in got:
            goal(f"passk gate, {name} / baseline", cpu(got["passk gate"]) / cpu(base), 1.5)
        path.unlink()


if __name__ == "__main__":
    sys.exit(main())
