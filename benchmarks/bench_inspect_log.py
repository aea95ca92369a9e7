"""`passk report LOG.eval` without inspect_ai against Inspect's `read_eval_log`: time and memory.

Writes, once, to a temporary directory, an Inspect ``.eval`` log of at least
``--mb`` megabytes on disk (default 200): ``--samples`` samples × ``--epochs``
epochs (default 750 × 4 = 3,000 sample epochs), each with a long transcript
(seeded random text, which the log's compression cannot squeeze away), written
with Inspect's own ``write_eval_log`` (offline: no model is called). Then it
runs, each as a whole process, ``--repeat`` times:

- ``passk report LOG --k 1 --json`` in a venv **without** inspect_ai (``--venv``:
  a Python with numpy, scipy, tqdm, msgspec and zstandard only; passk from this checkout
  on ``PYTHONPATH``); passk reads the log's ``header.json`` and
  ``summaries.json`` with the standard library, never the transcripts;
- ``read_eval_log(LOG)`` in this Python (which has inspect_ai), counting the
  passes of each sample from the samples it returns,

and, to tell the reading from the report's statistics (numpy and scipy's imports,
the intervals of each sample), ``read_results(LOG)`` alone in the venv without
inspect_ai. It prints each one's wall time and peak resident memory (``ru_maxrss`` of
the child, read by a fresh wrapper process per run), the ratios, and checks
that all three give the same counts. The issue's goal: at least 20× faster, and at
most 1/10 of the peak memory.

    python -m venv /tmp/noinspect && /tmp/noinspect/bin/pip install numpy scipy tqdm msgspec zstandard
    .venv/bin/python benchmarks/bench_inspect_log.py --venv /tmp/noinspect [--mb 200]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Runs argv as a child and prints its wall time and peak resident memory (MB).
WRAPPER = r"""
import json, resource, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.run(sys.argv[1:], capture_output=True, text=True)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "peak_mb": peak, "code": proc.returncode,
                  "stdout": proc.stdout, "stderr": proc.stderr[-2000:]}))
"""

#: Inspect's reader, as a user of it would count: every sample, then the passes of each.
INSPECT = r"""
import json, sys
from inspect_ai.log import read_eval_log
log = read_eval_log(sys.argv[1])
counts = {}
for s in log.samples:
    c = counts.setdefault(str(s.id), [0, 0])
    c[0] += s.scores["match"].value == "C"
    c[1] += 1
print(json.dumps(counts))
"""


#: passk's reader alone: the counts of ``read_results``, without the report's statistics.
READER = r"""
import json, sys
from passk.results.read import read_results
r = read_results(sys.argv[1])
print(json.dumps({t: [int(c), int(n)] for t, c, n in zip(r.task_ids, r.successes, r.totals)}))
"""


def build_log(path: Path, *, megabytes: int, samples: int, epochs: int, seed: int = 0) -> None:
    """An Inspect log whose transcripts add up to ``megabytes`` of incompressible text."""
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalResults,
        EvalSample,
        EvalSpec,
        write_eval_log,
    )
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
    from inspect_ai.scorer import Score

    rng = random.Random(seed)
    n = samples * epochs
    # base64 text of random bytes: compression keeps about 3/4 of it, so write 4/3 of the target
    per_sample = int(megabytes * 1024 * 1024 * 4 / 3 / n) + 1
    turns = 4
    chunk = per_sample // (2 * turns)

    def text() -> str:
        return base64.b64encode(rng.randbytes(chunk * 3 // 4)).decode()

    spec = EvalSpec(created="2025-01-01T00:00:00+00:00", task="agentic", model="mockllm/model",
                    dataset=EvalDataset(name="big", samples=samples,
                                        sample_ids=list(range(1, samples + 1))),
                    config=EvalConfig(epochs=epochs))
    logged = []
    for sample_id in range(1, samples + 1):
        p = rng.random()
        for epoch in range(1, epochs + 1):
            messages = [ChatMessageUser(content="fix the failing service")]
            for _ in range(turns):
                messages.append(ChatMessageAssistant(content=text()))
                messages.append(ChatMessageTool(content=text(), tool_call_id="call"))
            logged.append(EvalSample(id=sample_id, epoch=epoch, input="fix the failing service",
                                     target="fixed", messages=messages,
                                     scores={"match": Score(value="C" if rng.random() < p
                                                            else "I")}))
    log = EvalLog(eval=spec, samples=logged, status="success",
                  results=EvalResults(total_samples=n, completed_samples=n))
    write_eval_log(log, str(path))


def measure(argv: list[str], env: dict[str, str]) -> dict:
    """One whole process: wall time and peak resident memory, from a fresh wrapper."""
    proc = subprocess.run([sys.executable, "-c", WRAPPER, *argv], capture_output=True,
                          text=True, check=True, env=env)
    result = json.loads(proc.stdout)
    if result["code"] != 0:
        raise SystemExit(f"{argv[:3]} failed ({result['code']}): {result['stderr']}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, required=True,
                        help="a venv without inspect_ai (numpy, scipy, tqdm, msgspec, zstandard)")
    parser.add_argument("--mb", type=int, default=200, help="least size of the log on disk")
    parser.add_argument("--samples", type=int, default=750)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each (the median counts)")
    parser.add_argument("--log", type=Path, help="keep the log here, and reuse it if it exists")
    args = parser.parse_args()
    bare = args.venv / "bin" / "python"
    check = subprocess.run([str(bare), "-c", "import inspect_ai"], capture_output=True,
                           check=False)
    if check.returncode == 0:
        raise SystemExit(f"{bare} has inspect_ai: pass a venv without it")
    passk_env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory() as tmp:
        path = args.log or Path(tmp) / "big.eval"
        t0 = time.perf_counter()
        if not path.exists():
            build_log(path, megabytes=args.mb, samples=args.samples, epochs=args.epochs)
        size = path.stat().st_size / 1024 / 1024
        print(f"log: {size:.0f} MB on disk, {args.samples} samples x {args.epochs} epochs = "
              f"{args.samples * args.epochs} sample epochs (ready in "
              f"{time.perf_counter() - t0:.0f} s)")
        if size < args.mb:
            raise SystemExit(f"the log is {size:.0f} MB, short of {args.mb} MB")
        ours, read, theirs = [], [], []
        for _ in range(args.repeat):
            ours.append(measure([str(bare), "-m", "passk", "report", str(path), "--k", "1",
                                 "--json"], passk_env))
            read.append(measure([str(bare), "-c", READER, str(path)], passk_env))
            theirs.append(measure([sys.executable, "-c", INSPECT, str(path)], dict(os.environ)))
    report = json.loads(ours[0]["stdout"])
    counts = {t["task_id"]: [t["successes"], t["runs"]] for t in report["tasks"]}
    if not counts == json.loads(read[0]["stdout"]) == json.loads(theirs[0]["stdout"]):
        raise SystemExit("passk and read_eval_log disagree on the counts")
    rows = {}
    for name, runs in (("passk report, no inspect_ai", ours),
                       ("passk's reader alone, no inspect_ai", read),
                       ("inspect_ai read_eval_log", theirs)):
        seconds = statistics.median(r["seconds"] for r in runs)
        peak = statistics.median(r["peak_mb"] for r in runs)
        rows[name] = (seconds, peak)
        print(f"{name:36s} {seconds:8.2f} s   peak resident memory {peak:6.0f} MB   "
              f"(median of {len(runs)} whole processes)")
    (t_ours, m_ours), (t_read, m_read), (t_theirs, m_theirs) = rows.values()
    print(f"time ratio (read_eval_log / passk report): {t_theirs / t_ours:.1f}x faster; "
          f"/ passk's reader alone: {t_theirs / t_read:.1f}x (goal: at least 20x)")
    print(f"peak memory ratio (passk report / read_eval_log): {m_ours / m_theirs:.3f}; "
          f"passk's reader alone: {m_read / m_theirs:.3f} (goal: at most 0.1)")
    print(f"counts agree: {len(counts)} samples, {sum(n for _, n in counts.values())} "
          "sample epochs")


if __name__ == "__main__":
    main()
