"""tau-bench's own pass^k code, an outside reference for passk and for page 7.

``tau_bench_pass_hat_k`` below transcribes ``display_metrics`` in ``tau_bench/run.py``
(sierra-research/tau-bench at the commit the book's data copy records,
``59a200c6d575d595120f1cb70fea53cef0632f6b``): count each task's successes ``c`` (a
reward within ``1e-6`` of 1) over every record, take the number of trials ``n`` as the
number of distinct ``trial`` values, and average ``C(c, k) / C(n, k)`` over tasks, for
``k = 1 .. n``. Page 7 used to run this transcription; the book now calls passk only,
and this file checks what the page states about tau-bench's code:

* on the book's copy of the GPT-4o airline run, passk's curve *is* tau-bench's
  (to 1e-12), and both round to the leaderboard row (README, airline, "TC (gpt-4o)");
* the figures page 7 shows for tau-bench's code (its ``tau_bench`` and
  ``tau_resumed`` cells) are what the code gives, on the shipped file and on the
  resumed file the page builds (the last trial appended once more), where tau-bench's
  pass^4 exceeds 1 and passk refuses the duplicated (task, trial) pairs.
"""

from __future__ import annotations

import ast
import json
from collections import Counter
from itertools import pairwise
from math import comb
from pathlib import Path

import numpy as np
import pytest

from passk.analysis.report import build_report
from passk.results.read import ResultsError, read_results

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "book" / "data" / "tau-bench" / "gpt-4o-airline-rewards.json"
PAGE = ROOT / "notebooks" / "07_real_agents_real_runs.ipynb"
LEADERBOARD = (0.420, 0.273, 0.220, 0.200)  # tau-bench README, airline, TC (gpt-4o)


def tau_bench_pass_hat_k(records: list[dict]) -> list[float]:
    """tau-bench's display_metrics (tau_bench/run.py), on records with ``task_id``,
    ``trial`` and ``reward``: pass^k for k = 1 .. the number of distinct trials."""
    num_trials = len({r["trial"] for r in records})
    c_per_task_id: Counter = Counter({r["task_id"]: 0 for r in records})
    c_per_task_id.update(r["task_id"] for r in records if abs(r["reward"] - 1) <= 1e-6)
    return [sum(comb(c, k) / comb(num_trials, k) for c in c_per_task_id.values())
            / len(c_per_task_id) for k in range(1, num_trials + 1)]


def _resumed(records: list[dict]) -> list[dict]:
    """Page 7's resumed file: the shipped run with its last trial appended once more."""
    last = max(r["trial"] for r in records)
    return records + [r for r in records if r["trial"] == last]


def _page_constant(name: str) -> list[float]:
    """The list page 7 assigns to ``name`` in a code cell (the figures it shows)."""
    nb = json.loads(PAGE.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        for node in ast.walk(ast.parse("".join(cell["source"]))):
            if (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name) and node.targets[0].id == name):
                return ast.literal_eval(node.value)
    raise AssertionError(f"{PAGE.name} assigns no {name}")


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return json.loads(DATA.read_text(encoding="utf-8"))


def test_passk_is_tau_benchs_code_and_leaderboard(records):
    tau = tau_bench_pass_hat_k(records)
    curve = build_report(read_results(DATA)).curve.pass_hat_k
    np.testing.assert_allclose(curve, tau, rtol=1e-12)
    np.testing.assert_allclose(tau, LEADERBOARD, atol=5e-4)


def test_page_shows_what_tau_benchs_code_gives(records):
    shown = _page_constant("tau_bench")
    assert shown == [round(x, 3) for x in tau_bench_pass_hat_k(records)]


def test_tau_benchs_code_counts_a_resumed_trial_twice(records, tmp_path):
    resumed = _resumed(records)
    tau = tau_bench_pass_hat_k(resumed)
    assert _page_constant("tau_resumed") == [round(x, 3) for x in tau]
    assert tau[-1] > 1, "tau-bench's pass^4 on the resumed file is no longer above 1"
    assert any(b > a for a, b in pairwise(tau)), "the curve no longer rises"
    path = tmp_path / "resumed.json"
    path.write_text(json.dumps(resumed), encoding="utf-8")
    with pytest.raises(ResultsError):
        read_results(path)
