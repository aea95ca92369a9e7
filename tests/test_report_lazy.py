"""``passk gate`` decides without the curve; ``passk report`` computes it when shown."""

from __future__ import annotations

import json

import numpy as np
from scipy.special import comb

from passk.analysis import report as report_mod
from passk.analysis.report import build_report
from passk.results.counts import Run, results_from_runs


def _results():
    runs = [Run("a", True, t) for t in range(4)] + [Run("b", t < 2, t) for t in range(4)]
    return results_from_runs(runs)


def test_the_gate_never_builds_the_curve(monkeypatch):
    calls: list[int] = []
    real = report_mod.suite_curve
    monkeypatch.setattr(report_mod, "suite_curve", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    fr = build_report(_results(), min_overall_pass_hat_k=0.5)
    assert fr.gate.passed in (True, False)
    report_mod.format_report(fr, curve=False)
    assert "curve" not in fr.to_dict(curves=False, curve=False)  # what a caller may ask
    assert calls == []
    # the report shows it: computed once, on first use
    assert "pass@k and pass^k by k" in report_mod.format_report(fr)
    fr.to_dict()
    assert calls == [1]


def test_the_lazy_curve_is_the_exact_one():
    fr = build_report(_results(), min_overall_pass_hat_k=0.5)
    # the mean over tasks of C(c, k) / C(n, k), exactly (scipy's comb)
    want = [np.mean([comb(c, k, exact=True) / comb(4, k, exact=True) for c in (4, 2)])
            for k in range(1, 5)]
    assert np.allclose(fr.curve.pass_hat_k, want)
    assert np.allclose(fr.per_task_hat[1], [comb(2, k, exact=True) / comb(4, k, exact=True)
                                            for k in range(1, 5)])
    assert json.loads(json.dumps(fr.to_dict()))["curve"]["k"] == [1, 2, 3, 4]


def test_report_and_gate_never_import_scipy_stats(tmp_path):
    """scipy.stats costs about 0.8 s of imports; passk report and gate need none of it."""
    import subprocess
    import sys

    path = tmp_path / "runs.jsonl"
    path.write_text("".join(f'{{"task_id": "t{t}", "trial": {j}, "success": {str(j % 3 > 0).lower()}}}\n'
                            for t in range(3) for j in range(6)))
    for command in ("report", "gate"):
        code = (f"import runpy, sys; sys.argv = ['passk', {command!r}, {str(path)!r}]\n"
                "try:\n    runpy.run_module('passk', run_name='__main__')\n"
                "except SystemExit:\n    pass\n"
                "print('scipy.stats' in sys.modules, file=sys.stderr)")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=False)
        assert done.stderr.strip().splitlines()[-1] == "False", done.stderr
