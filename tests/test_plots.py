"""passk.plots.plot_task_classes: what the figure draws, against counts made by hand.

The oracles are independent of passk: task counts per pass rate come from
``fractions.Fraction(c, n)`` and ``collections.Counter``, a task's class from the
chapter's definition (flaky when 4p(1-p) > 0.2, else stable-pass when p >= 1/2),
and the tau-bench figure from the shipped run's records read with ``json``.
"""

from __future__ import annotations

import json
from collections import Counter
from fractions import Fraction
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import to_hex

from passk.io import read_results
from passk.plots import plot_task_classes
from passk.reporting import build_report
from passk.stability import suite_report

ROOT = Path(__file__).resolve().parents[1]
TAU_COPY = ROOT / "book" / "data" / "tau-bench" / "gpt-4o-airline-rewards.json"
COLOUR = {"flaky": "#d55e00", "stable-fail": "#000000", "stable-pass": "#0072b2"}


def chapter_class(p: Fraction) -> str:
    """The chapter's classes with the 0.2 threshold, in exact arithmetic."""
    if 4 * p * (1 - p) > Fraction(1, 5):
        return "flaky"
    return "stable-pass" if p >= Fraction(1, 2) else "stable-fail"


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def bars(fig):
    left = fig.axes[0]
    return [(bar.get_x() + bar.get_width() / 2, bar.get_height(), to_hex(bar.get_facecolor()))
            for bar in left.patches]


@pytest.mark.parametrize(("c", "n"), [
    ([12, 10, 7, 0, 12, 1, 5], [12, 12, 12, 12, 12, 12, 12]),
    ([4, 2, 0, 3, 1, 19], [4, 4, 4, 4, 4, 20]),          # mixed n
    ([5], [5]),
])
def test_bars_count_tasks_at_each_pass_rate_in_their_class_colour(c, n):
    fig = plot_task_classes(suite_report([f"t{i}" for i in range(len(c))], c, n, k=1))
    expected = Counter(Fraction(ci, ni) for ci, ni in zip(c, n))
    drawn = bars(fig)
    assert [(round(x, 12), h) for x, h, _ in drawn] == [
        (round(float(p), 12), count) for p, count in sorted(expected.items())]
    assert [colour for _, _, colour in drawn] == [
        COLOUR[chapter_class(p)] for p in sorted(expected)]


def test_markers_sit_on_the_flakiness_curve_and_the_cap_is_drawn():
    c, n = [12, 10, 6, 0, 11], [12, 12, 12, 12, 12]
    fig = plot_task_classes(suite_report(list("abcde"), c, n, k=1), cap=0.3)
    right = fig.axes[1]
    points = np.concatenate([coll.get_offsets() for coll in right.collections])
    expected = sorted((Fraction(ci, ni), 4 * Fraction(ci, ni) * (1 - Fraction(ci, ni)))
                      for ci, ni in set(zip(c, n)))
    drawn = sorted(map(tuple, points.tolist()))
    assert np.allclose(drawn, [(float(p), float(f)) for p, f in expected], rtol=0, atol=1e-12)
    cap_lines = [ln for ln in right.get_lines() if ln.get_linestyle() == "--"]
    assert len(cap_lines) == 1 and set(cap_lines[0].get_ydata()) == {0.3}
    for ax in fig.axes:
        assert ax.get_xlabel() and ax.get_ylabel()


def test_cap_defaults_to_the_file_reports_own_and_is_validated():
    results = read_results(TAU_COPY)
    fig = plot_task_classes(build_report(results, max_flakiness=0.35))
    dashed = [ln for ln in fig.axes[1].get_lines() if ln.get_linestyle() == "--"]
    assert set(dashed[0].get_ydata()) == {0.35}
    with pytest.raises(ValueError, match="cap \\(1.5\\)"):
        plot_task_classes(build_report(results), cap=1.5)


def test_tasks_without_runs_are_left_out_and_said():
    fig = plot_task_classes(suite_report(["a", "b", "c"], [3, 0, 1], [3, 0, 3], k=1))
    assert [h for _, h, _ in bars(fig)] == [1, 1]
    assert "1 without runs not shown" in fig.axes[0].get_title()


def test_tau_bench_run_counts_from_the_records():
    """The book's figure: 14, 12, 10, 4 and 10 tasks at 0/4 ... 4/4, counted from the JSON."""
    records = json.loads(TAU_COPY.read_text())
    passed = Counter()
    for r in records:
        passed[r["task_id"]] += abs(r["reward"] - 1) <= 1e-6
    expected = Counter(passed[t] for t in {r["task_id"] for r in records})
    fig = plot_task_classes(build_report(read_results(TAU_COPY)))
    assert [h for _, h, _ in bars(fig)] == [expected[c] for c in range(5)]
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == [
        f"{c}/4" for c in range(5)]
