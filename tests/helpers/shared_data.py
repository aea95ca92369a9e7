"""Where the tests find tau-bench's real run, and what a skip says when it is absent."""

from __future__ import annotations

from pathlib import Path

# ../shared/data/tau-bench/ beside the checkout: the project's shared data, not shipped
TAU_BENCH_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "tau-bench"
TAU_BENCH_RUN = TAU_BENCH_DIR / "gpt-4o-airline.json"
TAU_BENCH_MISSING = (
    f"tau-bench's real GPT-4o airline run is not at {TAU_BENCH_RUN}: to run this test, "
    "take historical_trajectories/gpt-4o-airline.json from the tau-bench repository "
    "(github.com/sierra-research/tau-bench, commit 59a200c6d575d595120f1cb70fea53cef0632f6b, "
    "4 MB, MIT) and place it at ../shared/data/tau-bench/gpt-4o-airline.json beside this "
    "checkout; the shipped derived copy, book/data/tau-bench/, is tested without it"
)
