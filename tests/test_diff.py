"""passk diff: the vectorized Fisher test, Holm, and the paired comparison."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from passk.cli import main
from passk.diff import diff_results, fisher_exact_two_sided, holm
from passk.io import Run, results_from_runs


def test_fisher_matches_scipy_on_random_tables():
    rng = np.random.default_rng(7)
    n1 = rng.integers(0, 15, 300)
    n2 = rng.integers(0, 15, 300)
    c1 = rng.integers(0, n1 + 1)
    c2 = rng.integers(0, n2 + 1)
    ours = fisher_exact_two_sided(c1, n1, c2, n2)
    ref = [stats.fisher_exact([[a, b - a], [c, d - c]]).pvalue for a, b, c, d in
           zip(c1, n1, c2, n2)]
    np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-12)


def test_holm_matches_step_down_definition():
    p = np.array([0.01, 0.04, 0.03, 0.2, 0.001])
    m = p.size
    order = np.argsort(p)
    expected = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        expected[i] = running
    np.testing.assert_allclose(holm(p), expected)


def suite(counts: dict[str, tuple[int, int]]):
    return results_from_runs([Run(t, j < c, j) for t, (c, n) in counts.items() for j in range(n)])


def test_diff_finds_regression_and_flip():
    old = suite({"refund": (20, 20), "lookup": (10, 10), "search": (9, 10), "gone": (5, 5)})
    new = suite({"refund": (4, 20), "lookup": (8, 10), "search": (9, 10), "added": (3, 3)})
    d = diff_results(old, new, k=3)
    by = {t.task_id: t for t in d.tasks}
    assert by["refund"].status == "regressed" and by["refund"].p_adjusted < 0.05
    # 10/10 -> 8/10: stable-pass -> flaky, but within repeat noise
    assert by["lookup"].old_class == "stable-pass" and by["lookup"].new_class == "flaky"
    assert by["lookup"].status == "flipped" and by["lookup"].p_adjusted > 0.05
    assert by["search"].status == "unchanged" and by["search"].p_value == 1.0
    assert d.only_old == ("gone",) and d.only_new == ("added",)
    bh = diff_results(old, new, k=3, correction="bh")
    assert [t.task_id for t in bh.regressed] == ["refund"]


def write(tmp_path, name, counts):
    path = tmp_path / name
    path.write_text("".join(json.dumps({"task_id": t, "trial": j, "success": j < c}) + "\n"
                            for t, (c, n) in counts.items() for j in range(n)))
    return str(path)


def test_diff_cli_exit_codes(tmp_path, capsys):
    old = write(tmp_path, "old.jsonl", {"refund": (20, 20), "lookup": (10, 10)})
    new = write(tmp_path, "new.jsonl", {"refund": (4, 20), "lookup": (8, 10)})
    assert main(["diff", old, new]) == 1
    out = capsys.readouterr().out
    assert "REGRESSED: 1 task(s) got worse beyond repeat noise (refund)" in out
    assert "lookup: stable-pass → flaky" in out and "Holm correction" in out
    assert main(["diff", old, old]) == 0
    assert "no task regressed" in capsys.readouterr().out
    assert main(["diff", old, new, "--json", "--correction", "bh"]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["regressed"] == ["refund"] and payload["flipped"] == ["refund", "lookup"]
    assert payload["correction"].startswith("Benjamini-Hochberg")
    assert main(["diff", old, new, "--markdown"]) == 1
    assert capsys.readouterr().out.startswith("| task | old | new |")


def test_diff_bad_input(tmp_path, capsys):
    old = write(tmp_path, "old.jsonl", {"a": (1, 1)})
    assert main(["diff", old, str(tmp_path / "missing.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("passk diff: error: ") and "missing.jsonl: no such file" in err


@pytest.mark.parametrize("alpha", ["0", "1", "x"])
def test_diff_alpha_validated(tmp_path, alpha):
    old = write(tmp_path, "old.jsonl", {"a": (1, 1)})
    with pytest.raises(SystemExit) as exc:
        main(["diff", old, old, "--alpha", alpha])
    assert exc.value.code == 2
