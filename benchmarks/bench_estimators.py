"""Benchmark: vectorized ``passk.estimate_pass_at_k`` vs HumanEval's per-problem loop.

200,000 tasks with n drawn uniformly from [k, 200] (so every task is
estimable at k = 10) and c uniform in [0, n]. The reference is HumanEval's
``estimate_pass_at_k`` (Chen et al. 2021, openai/human-eval), called once per
problem in a Python loop, as HumanEval's evaluation does.

Goals: speed-up >= 30x, max |difference| <= 1e-12.

Run: ``.venv/bin/python benchmarks/bench_estimators.py``
"""

from __future__ import annotations

import time

import numpy as np

from passk.metrics import estimate_pass_at_k

N_TASKS = 200_000
K = 10
MAX_N = 200
SEED = 0


def humaneval_estimate_pass_at_k(n: int, c: int, k: int) -> float:
    """HumanEval's reference estimator, verbatim (the same oracle as tests/test_metrics.py)."""
    if n - c < k:
        return 1.0
    return 1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1))


def humaneval_loop(c: np.ndarray, n: np.ndarray, k: int) -> np.ndarray:
    return np.array([humaneval_estimate_pass_at_k(int(ni), int(ci), k) for ni, ci in zip(n, c)])


def main() -> None:
    rng = np.random.default_rng(SEED)
    n = rng.integers(K, MAX_N + 1, size=N_TASKS)
    c = rng.integers(0, n + 1)

    estimate_pass_at_k(c[:100], n[:100], K)  # warm-up (imports, first-call overhead)
    fast_times = []
    for _ in range(3):
        start = time.perf_counter()
        fast = estimate_pass_at_k(c, n, K)
        fast_times.append(time.perf_counter() - start)
    t_fast = min(fast_times)

    start = time.perf_counter()
    reference = humaneval_loop(c, n, K)
    t_loop = time.perf_counter() - start

    speedup = t_loop / t_fast
    max_diff = float(np.max(np.abs(fast - reference)))
    print(f"tasks: {N_TASKS:,}  n in [{K}, {MAX_N}]  c in [0, n]  k = {K}")
    print(f"passk.estimate_pass_at_k (vectorized, best of 3): {t_fast * 1e3:9.2f} ms"
          f"   (all 3: {', '.join(f'{t * 1e3:.2f}' for t in fast_times)} ms)")
    print(f"HumanEval reference, per-problem Python loop:    {t_loop * 1e3:9.2f} ms")
    print(f"speed-up: {speedup:.1f}x   (goal >= 30x: {'met' if speedup >= 30 else 'NOT met'})")
    print(f"max |difference|: {max_diff:.3e}   "
          f"(goal <= 1e-12: {'met' if max_diff <= 1e-12 else 'NOT met'})")


if __name__ == "__main__":
    main()
