"""passk's Inspect reader against ``read_eval_log`` on a big agentic log: time and peak memory.

Writes, once, to a temporary directory, an Inspect ``.eval`` log of at least
``--mb`` megabytes on disk (default 200): ``--samples`` samples × ``--epochs``
epochs, each with a long transcript (random text, which the log's zip cannot
compress away), written with Inspect's own ``write_eval_log``. Then, each in a
fresh process (so one reader's memory cannot help the other), it reads the log

- with passk (``passk.io.read_results``: the log's header and its sample
  summaries, ``read_eval_log(header_only=True)`` and
  ``read_eval_log_sample_summaries``), and
- with Inspect's ``read_eval_log``, which loads every transcript,

and prints each reader's time, the peak of its Python heap (``tracemalloc``,
started once the imports are done, in a second process), and its peak resident
memory (``VmHWM``), in total and above the footprint after the imports,
and the ratios. The counts both readers give are checked to agree. The issue's goal:
at least 10× faster, and at most a fifth of the peak memory.

    .venv/bin/python benchmarks/bench_inspect_log.py [--mb 200] [--samples 50] [--epochs 4]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r"""
import json, sys, time, tracemalloc
which, path, traced = sys.argv[1], sys.argv[2], sys.argv[3] == "traced"
from inspect_ai.log import read_eval_log  # both readers pay the same imports
import passk.io, passk.formats.inspect_log
def status_mb(key):  # VmHWM is this process's own peak (ru_maxrss survives exec on Linux)
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith(key)) / 1024
base = status_mb("VmRSS")
if traced:
    tracemalloc.start()
start = time.perf_counter()
if which == "passk":
    r = passk.io.read_results(path)
    counts = {t: [int(c), int(n)] for t, c, n in zip(r.task_ids, r.successes, r.totals)}
else:
    log = read_eval_log(path)
    counts = {}
    for s in log.samples:
        c = counts.setdefault(str(s.id), [0, 0])
        c[0] += s.scores["match"].value == "C"
        c[1] += 1
seconds = time.perf_counter() - start
traced_mb = tracemalloc.get_traced_memory()[1] / 2**20 if traced else None
print(json.dumps({"seconds": seconds, "base_mb": base, "traced_mb": traced_mb,
                  "peak_mb": status_mb("VmHWM"),
                  "counts": counts}))
"""


def build_log(path: Path, *, megabytes: int, samples: int, epochs: int, seed: int = 0) -> None:
    """An Inspect log whose transcripts add up to ``megabytes`` of incompressible text."""
    import random

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
    # base64 text of random bytes: deflate keeps about 3/4 of it, so write 4/3 of the target
    per_sample = int(megabytes * 1024 * 1024 * 4 / 3 / n) + 1
    turns = 8
    spec = EvalSpec(created="2025-01-01T00:00:00+00:00", task="agentic", model="mockllm/model",
                    dataset=EvalDataset(name="big", samples=samples,
                                        sample_ids=list(range(1, samples + 1))),
                    config=EvalConfig(epochs=epochs))
    logged = []
    for sample_id in range(1, samples + 1):
        p = rng.random()
        for epoch in range(1, epochs + 1):
            chunk = per_sample // (2 * turns)
            messages = [ChatMessageUser(content="fix the failing service")]
            for _ in range(turns):
                messages.append(ChatMessageAssistant(
                    content=base64.b64encode(os.urandom(chunk * 3 // 4)).decode()))
                messages.append(ChatMessageTool(
                    content=base64.b64encode(os.urandom(chunk * 3 // 4)).decode(),
                    tool_call_id="call"))
            logged.append(EvalSample(id=sample_id, epoch=epoch, input="fix the failing service",
                                     target="fixed", messages=messages,
                                     scores={"match": Score(value="C" if rng.random() < p
                                                            else "I")}))
    log = EvalLog(eval=spec, samples=logged, status="success",
                  results=EvalResults(total_samples=n, completed_samples=n))
    write_eval_log(log, str(path))


def measure(which: str, path: Path) -> dict:
    """Time and peak memory of one reader, each in a fresh process: the time without
    tracing, the Python heap's peak with tracemalloc (started after the imports)."""
    def child(mode: str) -> dict:
        proc = subprocess.run([sys.executable, "-c", CHILD, which, str(path), mode],
                              capture_output=True, text=True, check=True)
        return json.loads(proc.stdout.strip().splitlines()[-1])
    timed, traced = child("timed"), child("traced")
    timed["traced_mb"] = traced["traced_mb"]
    return timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200, help="least size of the log on disk")
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.eval"
        t0 = time.perf_counter()
        build_log(path, megabytes=args.mb, samples=args.samples, epochs=args.epochs)
        size = path.stat().st_size / 1024 / 1024
        print(f"log: {size:.0f} MB on disk, {args.samples} samples x {args.epochs} epochs "
              f"(written in {time.perf_counter() - t0:.0f} s)")
        if size < args.mb:
            raise SystemExit(f"the log is {size:.0f} MB, short of {args.mb} MB")
        ours = measure("passk", path)
        theirs = measure("inspect", path)
    if ours["counts"] != theirs["counts"]:
        raise SystemExit("the two readers disagree on the counts")
    for name, m in (("passk (header + sample summaries)", ours),
                    ("inspect_ai read_eval_log", theirs)):
        print(f"{name:34s} {m['seconds']:8.3f} s   heap peak {m['traced_mb']:8.1f} MB   "
              f"process peak {m['peak_mb']:6.0f} MB (after imports {m['base_mb']:.0f} MB)")
    print(f"time ratio (read_eval_log / passk): {theirs['seconds'] / ours['seconds']:.1f}x "
          "faster (goal: at least 10x)")
    heap = ours["traced_mb"] / theirs["traced_mb"]
    above = ((ours["peak_mb"] - ours["base_mb"]) /
             max(theirs["peak_mb"] - theirs["base_mb"], 1e-9))
    print(f"peak memory ratio (passk / read_eval_log): {heap:.4f} of the Python heap's peak "
          f"(tracemalloc), {above:.4f} of the resident peak above the imports, "
          f"{ours['peak_mb'] / theirs['peak_mb']:.3f} of the whole process's (goal: at most 0.2)")
    print(f"counts agree: {len(ours['counts'])} samples, "
          f"{sum(n for _, n in ours['counts'].values())} sample epochs")


if __name__ == "__main__":
    main()
