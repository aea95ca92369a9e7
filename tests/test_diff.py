"""passk diff: the vectorized Fisher test, Holm, and the paired comparison."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from scipy import stats

from passk.analysis.diff import diff_results, fisher_exact_two_sided, holm
from passk.cli.commands import main
from passk.metrics import estimate_pass_hat_k
from passk.results.read import Run, read_results, results_from_runs


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
    assert "REGRESSED: 1 task got worse beyond repeat noise (refund)" in out
    assert "lookup: stable-pass → flaky" in out and "Holm correction" in out
    assert main(["diff", old, old]) == 0
    assert "no task regressed" in capsys.readouterr().out
    assert main(["diff", old, new, "--json", "--correction", "bh"]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["regressed"] == ["refund"] and payload["flipped"] == ["refund", "lookup"]
    assert payload["correction"].startswith("Benjamini-Hochberg")
    assert main(["diff", old, new, "--markdown"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("suite: mean pass^10 over 2 paired tasks") and "| task | old | new |" in out


def many(counts: list[tuple[int, int]]) -> dict[str, tuple[int, int]]:
    return {f"t{i:02d}": cn for i, cn in enumerate(counts)}


def test_diff_suite_comes_first_with_its_verdict(tmp_path, capsys):
    # 6 of 30 tasks drop from 8/8 to 3/8: pass^4 1 -> 0 each, yet each within repeat noise
    # after Holm (Fisher p = 0.026, adjusted 0.77); only the suite shows the drop
    old = write(tmp_path, "old.jsonl", many([(8, 8)] * 30))
    new = write(tmp_path, "new.jsonl", many([(8, 8)] * 24 + [(3, 8)] * 6))
    assert main(["diff", old, new, "--k", "4"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "suite: mean pass^4 over 30 paired tasks (none left out: each has 4 runs or " \
        "more in both)"
    # d = -1 on 6 tasks, 0 on 24: the paired t interval from scipy, its low end moved out by
    # the skewness correction (Hall 1992; scipy's G1): the differences are skewed left
    d = np.array([0.0] * 24 + [-1.0] * 6)
    ci = stats.ttest_1samp(d, 0.0).confidence_interval()
    z, q = stats.norm.ppf(0.975), stats.t.ppf(0.975, 29)
    a = stats.skew(d, bias=False) * (2 * z * z + 1) / (6 * np.sqrt(30))
    low = d.mean() - (q - a) * d.std(ddof=1) / np.sqrt(30)
    assert a < 0 and low < ci.low
    # the printed interval holds that one (issue 29 adds a proved betting interval to it)
    shown = re.search(r"change ([-+.0-9]+), 95% interval \[([-+.0-9]+), ([-+.0-9]+)\]", out[1])
    assert shown is not None and float(shown[1]) == pytest.approx(d.mean(), abs=5e-4)
    # since issue 38 the union (at alpha/2) is intersected with the difference of the suite
    # intervals, so it holds scipy's paired t interval, not always its skew-corrected end
    assert float(shown[2]) <= round(ci.low, 3) and float(shown[3]) >= round(ci.high, 3)
    assert ("(paired t over tasks, floored by each task's binomial noise, joined by a proved "
            "betting interval, intersected with the difference of the suite intervals)") in out[1]
    assert out[2].startswith("  verdict: WORSE (the interval lies below 0: a drop is shown)")
    assert "no task regressed beyond repeat noise" in out[-1]  # only the suite shows it


@pytest.mark.parametrize(("new_counts", "margin", "code", "decision"), [
    # identical files, every run passing: 240 passes per version cannot rule out pass^4
    # 0.95 in the new version (the floor at the boundary), so no non-inferiority
    ([(8, 8)] * 30, "0.05", 3, "inconclusive"),
    ([(8, 8)] * 24 + [(3, 8)] * 6, "0.05", 1, "worse"),  # a drop of 0.2 is shown
    ([(8, 8)] * 29 + [(3, 8)], "0.05", 3, "inconclusive"),  # [-0.10, +0.03]: neither
    ([(8, 8)] * 29 + [(3, 8)], None, 0, "no regression shown"),
    # the low end -0.18 > -0.20 (the proved betting interval's, issue 29; the t's was -0.10)
    ([(8, 8)] * 29 + [(3, 8)], "0.2", 0, "non-inferior"),
])
def test_diff_exit_codes_with_margin(tmp_path, capsys, new_counts, margin, code, decision):
    old = write(tmp_path, "old.jsonl", many([(8, 8)] * 30))
    new = write(tmp_path, "new.jsonl", many(new_counts))
    argv = ["diff", old, new, "--k", "4", "--json"] + (["--margin", margin] if margin else [])
    assert main(argv) == code
    payload = json.loads(capsys.readouterr().out)
    assert payload["decision"] == decision
    suite = payload["suite"]
    assert suite["paired_tasks"] == 30 and suite["left_out"] == 0 and suite["method"] == "t"
    assert suite["margin"] == (None if margin is None else float(margin))
    assert suite["ci_low"] <= suite["delta"] <= suite["ci_high"]


def test_diff_counts_left_out_tasks_and_other_methods(tmp_path, capsys):
    old = write(tmp_path, "old.jsonl", many([(8, 8)] * 60 + [(0, 8)] * 20 + [(2, 2)]))
    new = write(tmp_path, "new.jsonl", many([(8, 8)] * 60 + [(0, 8)] * 20 + [(2, 2)]))
    assert main(["diff", old, new, "--k", "4", "--method", "sign-flip", "--margin", "0.1"]) == 0
    out = capsys.readouterr().out
    assert "over 80 paired tasks (1 left out: fewer than 4 runs in a version)" in out
    assert "sign-flip permutation test over tasks" in out and "NON-INFERIOR" in out


@pytest.mark.parametrize("option, value", [("--margin", "-0.1"), ("--margin", "1"),
                                           ("--margin", "x"), ("--alpha", "0"),
                                           ("--alpha", "1"), ("--alpha", "x")])
def test_diff_options_validated(tmp_path, option, value):
    old = write(tmp_path, "old.jsonl", {"a": (1, 1)})
    with pytest.raises(SystemExit) as exc:
        main(["diff", old, old, option, value])
    assert exc.value.code == 2


def test_diff_help_documents_exit_codes(capsys):
    with pytest.raises(SystemExit):
        main(["diff", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "exit codes: 0 no regression shown (with --margin: non-inferior); 1 a regression" in out
    assert "3 inconclusive (only with --margin)" in out


def test_gate_baseline_margin(tmp_path, capsys):
    old = write(tmp_path, "old.jsonl", many([(8, 8)] * 30))
    one_off = write(tmp_path, "one.jsonl", many([(8, 8)] * 29 + [(3, 8)]))
    broken = write(tmp_path, "broken.jsonl", many([(8, 8)] * 24 + [(3, 8)] * 6))
    gate = ["gate", "--k", "4", "--max-flakiness", "1"]
    # the same 240 passing runs as both versions cannot show a drop under 0.05: fails closed
    assert main([*gate, old, "--baseline", old, "--margin", "0.05"]) == 1
    assert "suite: non-inferiority within 0.05 not shown" in capsys.readouterr().out
    many_old = write(tmp_path, "many.jsonl", many([(12, 12)] * 100))
    assert main([*gate, many_old, "--baseline", many_old, "--margin", "0.05"]) == 0
    capsys.readouterr()
    # no shown regression: passes without a margin, blocks with one (non-inferiority not shown)
    assert main([*gate, one_off, "--baseline", old]) == 0
    capsys.readouterr()
    assert main([*gate, one_off, "--baseline", old, "--margin", "0.05"]) == 1
    assert "suite: non-inferiority within 0.05 not shown" in capsys.readouterr().out
    assert main([*gate, broken, "--baseline", old, "--min-overall", "0.5"]) == 1
    assert "suite: worse: mean pass^4 -0.200 against the baseline" in capsys.readouterr().out
    assert main([*gate, old, "--margin", "0.05"]) == 2
    assert "--margin needs --baseline" in capsys.readouterr().err


def test_diff_bad_input(tmp_path, capsys):
    old = write(tmp_path, "old.jsonl", {"a": (1, 1)})
    assert main(["diff", old, str(tmp_path / "missing.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("passk diff: error: ") and "missing.jsonl: no such file" in err




def test_the_same_file_prints_the_same_mean_as_old_or_new(tmp_path, capsys):
    """One summation for every printed mean: the order of the tasks cannot change it."""
    rng = np.random.default_rng(3)
    n = rng.integers(4, 13, 300)
    counts = {f"t{i:03d}": (int(rng.binomial(m, rng.uniform())), int(m)) for i, m in enumerate(n)}
    ids = list(counts)
    a = write(tmp_path, "a.jsonl", counts)
    b = write(tmp_path, "b.jsonl", {t: counts[t] for t in reversed(ids)})  # same, reversed
    ab, ba = (diff_results(read_results(x), read_results(y), k=3) for x, y in ((a, b), (b, a)))
    h = [float(estimate_pass_hat_k(*counts[t], 3)) for t in ids]
    assert float(np.mean(h)) != float(np.mean(h[::-1]))  # the order matters to a plain mean
    exact = math.fsum(h) / len(h)  # the exactly rounded sum, whatever the order
    assert ab.old_mean == ab.new_mean == ba.old_mean == ba.new_mean == exact
    assert ab.suite.old_mean == ab.suite.new_mean == exact
    for x, y in ((a, b), (b, a)):
        main(["diff", x, y, "--k", "3"])
        line = capsys.readouterr().out.splitlines()[1]
        assert line.startswith(f"  old {exact:.3f} → new {exact:.3f}: change +0.000")


# --- the baseline covers the new results; the comparison's settings are criteria -----------

def test_no_shared_task_is_an_error_naming_both_sides():
    from passk.analysis.diff import NoSharedTask

    old = results_from_runs([Run("x", True, 0), Run("y", True, 0)])
    new = results_from_runs([Run("a", True, 0)])
    with pytest.raises(NoSharedTask, match=r"share no task \(old: x, y; new: a\)"):
        diff_results(old, new)


def test_baseline_gaps_name_every_baseline_task_the_new_results_lack():
    from passk.analysis.diff import baseline_gaps

    old = results_from_runs([Run(t, True, i) for t in "abc" for i in range(3)])
    new = results_from_runs([Run("a", True, 0)])
    gaps = baseline_gaps(old, new)
    assert [g.split(":")[0] for g in gaps] == ["task b", "task c"]
    assert baseline_gaps(old, old) == ()


def test_the_defaults_are_the_criterias_and_match_scipy_holm():
    """diff_results' alpha and correction default to DEFAULT_CRITERIA's, and its Holm
    adjustment is Holm's step-down, written out here, on scipy's Fisher p-values."""
    import inspect as _inspect

    from passk.criteria import DEFAULT_CRITERIA

    sig = _inspect.signature(diff_results).parameters
    assert sig["alpha"].default == DEFAULT_CRITERIA.alpha == 0.05
    assert sig["correction"].default == DEFAULT_CRITERIA.correction == "holm"
    old = results_from_runs([Run(t, i < 9, i) for t in "ab" for i in range(10)])
    new = results_from_runs([Run(t, i < (1 if t == "a" else 9), i) for t in "ab"
                             for i in range(10)])
    d = diff_results(old, new, k=1)
    p = [stats.fisher_exact([[9, 1], [1, 9]]).pvalue, stats.fisher_exact([[9, 1], [9, 1]]).pvalue]
    order = np.argsort(p)
    m = len(p)
    step = np.maximum.accumulate([min(1.0, (m - r) * p[i]) for r, i in enumerate(order)])
    expected = np.empty(m)
    expected[order] = step
    np.testing.assert_allclose([t.p_adjusted for t in d.tasks], expected, rtol=1e-12)
    assert [t.task_id for t in d.regressed] == ["a"]


def test_gate_with_criteria_of_bh_is_refused_under_a_holm_policy(tmp_path, monkeypatch, capsys):
    (tmp_path / ".git").mkdir()
    (tmp_path / "passk.toml").write_text('[baseline]\ncorrection = "holm"\nalpha = 0.01\n')
    monkeypatch.chdir(tmp_path)
    runs = tmp_path / "r.jsonl"
    runs.write_text("".join(json.dumps({"task_id": "a", "trial": i, "success": True}) + "\n"
                            for i in range(5)))
    assert main(["diff", str(runs), str(runs), "--alpha", "0.05"]) == 2
    assert "--alpha 0.05 would loosen the policy's baseline alpha 0.01" in capsys.readouterr().err
