"""Derive the small leaderboard copies in ``tests/fixtures/leaderboards/`` from public files.

Issue 40 asks for the public files behind five threads to be re-ranked with ``passk rank``
(tau2-bench #540, tau-bench #57, MTEB #5208, HELM #4336, SWE-bench #621). This script
keeps, from each file that could be found, only what a ranking needs: one 0/1 outcome per
task and run. ``tests/fixtures/leaderboards/README.md`` names each source (repository,
commit, path, licence) and says which files could not be had, and why.

What it writes (a "wide" CSV: a ``task_id`` column, then one 0/1 column per version and
run, named ``VERSION`` for one run or ``VERSION#TRIAL`` for several):

- ``tau2_airline_1trial.csv``: tau2-bench airline (50 tasks), the leaderboard submissions
  whose trajectory files the repository's history still holds (one trial each), read by
  passk's own tau2 reader (``tau2_airline_1trial.json`` gives each column's source);
- ``swebench_bash_only.csv``: SWE-bench's bash-only leaderboard (mini-swe-agent, the same
  scaffold for every model; 500 Verified instances, one run each), from the
  ``per_instance_details`` of ``data/leaderboards.json`` in SWE-bench/swe-bench.github.io;
- ``tau2_histograms.json``: for the tau2-bench leaderboard's submissions that publish
  pass^1..pass^4 from 4 trials, the number of tasks with c = 0..4 successes. With n = 4
  trials the four published pass^k and the task count determine that histogram exactly
  (pass^k T C(4,k) = sum_c h_c C(c,k), a triangular system); it is solved here and the
  published pass^k are recomputed from it as a check. The noise floor and the flip rate
  need only that histogram, never which task is which.

``swebench_verified_top.csv`` (SWE-bench Verified's top 12, from the per-instance matrix
that SWE-bench #621's author published) is not written by this script: it is checked
(``--check`` recomputes each column's resolved count against the leaderboard's
``resolved`` percentage).

Usage (from the repository's root; the sources are git snapshots)::

    python scripts/derive_leaderboards.py --tau2 DIR --swebench-site DIR   # write
    python scripts/derive_leaderboards.py --tau2 DIR --swebench-site DIR --check

``DIR`` is a git directory (a clone or a bare snapshot) of sierra-research/tau2-bench and
of SWE-bench/swe-bench.github.io; files are read with ``git show COMMIT:PATH``, so the
commits below are what is derived, whatever the clone's HEAD.

:func:`split_wide` turns a wide CSV back into one passk CSV per version (``task_id``,
``trial``, ``success``), which is what ``passk rank`` reads; the tests and
``benchmarks/bench_leaderboards.py`` use it.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import subprocess
import sys
from collections.abc import Sequence
from math import comb
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "leaderboards"

#: tau2-bench: (label, commit, path, user simulator) of each airline trajectory file kept.
TAU2_COMMIT_HEAD = "a2c024725189473d2d7cea3a5cfdbcc67478e41f"
TAU2_AIRLINE: tuple[tuple[str, str, str, str], ...] = (
    ("distyl-button-claude-opus-4-6", "dfdc3f7bf914cebb203339e3d03fcccf4de22437",
     ("web/leaderboard/public/submissions/button-claude-opus-4-6_distyl-ai_2026-03-04/"
     "trajectories/airline.json"), "gpt-4.1"),
    ("ironshell-gpt-5.4", "17044a0b19619b426f63a8dbbd008f7d4c0b32ba",
     ("web/leaderboard/public/submissions/ironshell-ironforge_ironshell-ui_2026-03-09/"
     "trajectories/ironshell_airline_gpt54_run1.json"), "gpt-4.1"),
    ("adaptive-agent-opus-4-6", "e09732d2ea5534950135572bfbedee0872f2b22e",
     ("web/leaderboard/public/submissions/adaptive-agent_ironshell-ui_2026-03-22/"
     "trajectories/adaptive-agent_airline_claude-opus-4-6_1trial.json"), "gpt-4.1"),
    ("adaptive-agent-opus-4-6-cascata", "59b1453eaabb3c95c168709177e61e9ce49b6a9f",
     ("web/leaderboard/public/submissions/adaptive-agent_community_2026-03-23/"
     "trajectories/adaptive_agent_airline_opus46_cascata.json"), "gpt-4.1"),
    ("aide-claude-sonnet-4-5", "3059a91e162dfc651237bfa6d90db604d6d8ef9f",
     ("web/leaderboard/public/submissions/claude-sonnet-4-5_aide-platform_2025-10-31/"
     "trajectories/claude-sonnet-4-5_airline_default_gpt4.1_1trials.json"), "gpt-4.1"),
    ("langchain-gpt-oss-120b", "52a4ed7b7b19189595e49dd10702cdfcbccdcb56",
     ("web/leaderboard/public/submissions/gpt-oss-120b_openai_2025-11-26/trajectories/"
     "langchain_agent_airline_2025-11-26_00-37-06.json"), "gpt-oss-120b"),
    ("qwen2.5-7b", "3a8b3437f40f519ae7204ffe0b8bd5192ffe2fad",
     ("src/experiments/eval/data/qwen2.5-7b-retries/ollama_chat/"
     "qwen2.5:7b_airline_default_gpt-4.1-2025-04-14_1trials.json"), "gpt-4.1"),
)
TAU2_SUBMISSIONS = "web/leaderboard/public/submissions"
TAU2_TASKS = {"airline": 50, "retail": 114}

#: SWE-bench/swe-bench.github.io: the last leaderboards.json under 4 MB (2025-12-10).
SWEBENCH_COMMIT = "f1176b65ae29d14f4f52208b48e3d8cfc972bc17"
SWEBENCH_PATH = "data/leaderboards.json"


def git_show(repo: Path, commit: str, path: str) -> bytes:
    """The bytes of ``path`` at ``commit`` in the git directory ``repo``."""
    return subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{path}"],
                          check=True, capture_output=True).stdout


def write_wide(path: Path, tasks: Sequence[str], columns: dict[str, dict[str, int]]) -> str:
    """Write a wide CSV (``task_id``, then one 0/1 column per version/run); return its text."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["task_id", *columns])
    for t in tasks:
        w.writerow([t, *(columns[c][t] for c in columns)])
    text = buf.getvalue()
    path.write_text(text, encoding="utf-8")
    return text


def read_wide(path: Path) -> tuple[list[str], dict[str, list[int]]]:
    """A wide CSV's task ids and its columns (name -> 0/1 per task)."""
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    cols: dict[str, list[int]] = {name: [] for name in header[1:]}
    for row in body:
        for name, cell in zip(header[1:], row[1:], strict=True):
            cols[name].append(int(cell))
    return [r[0] for r in body], cols


def split_wide(path: Path, outdir: Path) -> list[Path]:
    """One passk CSV (``task_id,trial,success``) per version of a wide CSV, in column order.

    A column ``V#i`` is trial ``i`` of version ``V``; a column without ``#`` is trial 0.
    Returns the files written (``outdir/VERSION.csv``), one per version, in the order the
    versions first appear.
    """
    tasks, cols = read_wide(path)
    versions: dict[str, list[tuple[int, list[int]]]] = {}
    for name, values in cols.items():
        version, _, trial = name.partition("#")
        versions.setdefault(version, []).append((int(trial or 0), values))
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    for version, runs in versions.items():
        out = outdir / f"{version}.csv"
        with out.open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["task_id", "trial", "success"])
            for i, t in enumerate(tasks):
                for number, values in runs:
                    w.writerow([t, number, values[i]])
        written.append(out)
    return written


def tau2_airline(repo: Path) -> tuple[list[str], dict[str, dict[str, int]], list[dict[str, Any]]]:
    """The tau2 airline one-trial submissions, read by passk's own tau2 reader."""
    from passk.results.formats.tau2 import read_tau2

    tasks = [str(i) for i in range(TAU2_TASKS["airline"])]
    columns: dict[str, dict[str, int]] = {}
    meta = []
    tmp = OUT / ".tau2_tmp.json"
    for label, commit, path, user in TAU2_AIRLINE:
        tmp.write_bytes(git_show(repo, commit, path))
        try:
            res = read_tau2(tmp)
        finally:
            tmp.unlink()
        ids = list(res.task_ids)
        entry = {"column": label, "commit": commit, "path": path, "user_simulator": user,
                 "tasks_read": len(ids), "successes": int(res.successes.sum())}
        if sorted(ids, key=int) != tasks or set(res.totals.tolist()) != {1}:
            # not all 50 tasks with one counted trial each (passk's reader left a run out)
            meta.append({**entry, "kept": False, "why": "not one counted trial on each of the "
                         f"50 tasks ({len(ids)} tasks, {int(res.totals.sum())} runs counted)"})
            continue
        columns[label] = {t: int(c) for t, c in zip(ids, res.successes.tolist(), strict=True)}
        meta.append({**entry, "kept": True})
    return tasks, columns, meta


def histogram_from_pass_hat_k(passes: Sequence[float], tasks: int, n: int = 4) -> list[int]:
    """Tasks with c = 0..n successes, from pass^1..pass^n (fractions) over ``tasks`` tasks.

    Solves sum_c h_c C(c,k) = T C(n,k) pass^k from k = n down to 1, then h_0 = T - sum;
    each h_c is rounded to the nearest integer (the published values are rounded).
    """
    h = [0] * (n + 1)
    for k in range(n, 0, -1):
        rhs = tasks * comb(n, k) * passes[k - 1] - sum(h[c] * comb(c, k)
                                                     for c in range(k + 1, n + 1))
        h[k] = round(rhs / comb(k, k))
    h[0] = tasks - sum(h[1:])
    return h


def pass_hat_k_from_histogram(h: Sequence[int], k: int) -> float:
    """Mean over tasks of C(c,k)/C(n,k), from the histogram ``h`` of c (n = len(h) - 1)."""
    n = len(h) - 1
    return sum(hc * comb(c, k) for c, hc in enumerate(h)) / (sum(h) * comb(n, k))


def tau2_histograms(repo: Path) -> list[dict[str, Any]]:
    """Every submission.json (at HEAD) with pass_1..pass_4 for airline/retail, as histograms."""
    listing = subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "--name-only",
                              TAU2_COMMIT_HEAD, TAU2_SUBMISSIONS], check=True,
                             capture_output=True, text=True).stdout.split()
    out = []
    for path in sorted(p for p in listing if p.endswith("/submission.json")):
        if "/A_EXAMPLE_" in path:
            continue
        sub = json.loads(git_show(repo, TAU2_COMMIT_HEAD, path))
        method = sub.get("methodology") or {}
        for domain, tasks in TAU2_TASKS.items():
            r = (sub.get("results") or {}).get(domain) or {}
            passes = [r.get(f"pass_{k}") for k in range(1, 5)]
            if any(not isinstance(p, (int, float)) for p in passes):
                continue
            frac = [float(p) / 100 for p in passes]  # type: ignore[arg-type]
            h = histogram_from_pass_hat_k(frac, tasks)
            back = [pass_hat_k_from_histogram(h, k) for k in range(1, 5)]
            out.append({
                "submission": path.split("/")[-2], "domain": domain, "tasks": tasks,
                "tau2_bench_version": str(method.get("tau2_bench_version")),
                "user_simulator": str(method.get("user_simulator")),
                "published_pass_hat_k": passes, "histogram_c0_to_c4": h,
                "recomputed_pass_hat_k": [round(100 * b, 4) for b in back],
                "max_abs_difference_points": round(max(abs(100 * b - float(p))  # type: ignore[arg-type]
                                                       for b, p in zip(back, passes,
                                                                       strict=True)), 4),
                "valid": all(x >= 0 for x in h),
                "commit": TAU2_COMMIT_HEAD, "path": path})
    return out


def swebench_bash_only(repo: Path) -> tuple[list[str], dict[str, dict[str, int]], list[dict[str, Any]]]:
    """SWE-bench's bash-only board: every entry with per-instance results, 0/1 per instance."""
    data = json.loads(git_show(repo, SWEBENCH_COMMIT, SWEBENCH_PATH))
    board = next(b for b in data["leaderboards"] if b["name"] == "bash-only")
    entries = [r for r in board["results"] if r.get("per_instance_details")]
    entries.sort(key=lambda r: -float(r["resolved"]))
    tasks = sorted(entries[0]["per_instance_details"])
    columns: dict[str, dict[str, int]] = {}
    meta = []
    for r in entries:
        pi = r["per_instance_details"]
        label = r["folder"]
        col = {t: int(bool(pi[t].get("resolved"))) for t in tasks if t in pi}
        entry = {"column": label, "name": r.get("name"),
                 "published_resolved_percent": float(r["resolved"]),
                 "resolved": sum(col.values())}
        if sorted(pi) != tasks:
            meta.append({**entry, "kept": False, "why": "not the same 500 instances"})
            continue
        if abs(100 * entry["resolved"] / len(tasks) - entry["published_resolved_percent"]) > 1:
            meta.append({**entry, "kept": False, "why": "its per-instance results do not add up "
                         "to its published resolved percentage (more than 1 point apart)"})
            continue
        columns[label] = col
        meta.append({**entry, "kept": True})
    return tasks, columns, meta


def main(argv: Sequence[str] | None = None) -> int:
    """Write (or, with ``--check``, compare) the derived copies."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tau2", type=Path, required=True, help="git dir of tau2-bench")
    ap.add_argument("--swebench-site", type=Path, required=True,
                    help="git dir of SWE-bench/swe-bench.github.io")
    ap.add_argument("--check", action="store_true", help="exit 1 if a stored copy differs")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    OUT.mkdir(parents=True, exist_ok=True)
    texts: dict[str, str] = {}
    tmpdir = OUT / ".check" if args.check else OUT
    tmpdir.mkdir(exist_ok=True)

    tasks, cols, meta = tau2_airline(args.tau2)
    texts["tau2_airline_1trial.csv"] = write_wide(tmpdir / "tau2_airline_1trial.csv", tasks, cols)
    texts["tau2_airline_1trial.json"] = json.dumps(meta, indent=1) + "\n"
    texts["tau2_histograms.json"] = json.dumps(tau2_histograms(args.tau2), indent=1) + "\n"
    tasks, cols, meta = swebench_bash_only(args.swebench_site)
    texts["swebench_bash_only.csv"] = write_wide(tmpdir / "swebench_bash_only.csv", tasks, cols)
    texts["swebench_bash_only.json"] = json.dumps(meta, indent=1) + "\n"
    bad = []
    for name, text in texts.items():
        if args.check:
            stored = OUT / name
            if not stored.exists() or stored.read_text(encoding="utf-8") != text:
                bad.append(name)
        else:
            (OUT / name).write_text(text, encoding="utf-8")
    if args.check:
        for f in tmpdir.iterdir():
            f.unlink()
        tmpdir.rmdir()
        # the transcribed Verified top: each column's resolved count against the board
        data = json.loads(git_show(args.swebench_site, SWEBENCH_COMMIT, SWEBENCH_PATH))
        board = next(b for b in data["leaderboards"] if b["name"] == "Verified")
        pct = {r["folder"]: float(r["resolved"]) for r in board["results"]}
        _, vcols = read_wide(OUT / "swebench_verified_top.csv")
        for name, values in vcols.items():
            if name in pct and abs(sum(values) / 5 - pct[name]) > 1e-9:
                bad.append(f"swebench_verified_top.csv:{name} ({sum(values)} resolved, "
                           f"board {pct[name]} %)")
        print("differs: " + ", ".join(bad) if bad else "all derived copies match")
        return 1 if bad else 0
    print(f"wrote {', '.join(texts)} to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
