"""passk.book.plots.plot_task_classes: what the figure draws, against counts made by hand.

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

import matplotlib as mpl

mpl.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import to_hex

from passk.analysis.report import build_report
from passk.book.plots import plot_task_classes
from passk.criteria import GateCriteria
from passk.results.read import read_results
from passk.run.evaluate import judged_report
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
    with pytest.raises(ValueError, match=r"cap \(1\.5\)"):
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


# ------------------------------------------------------- plot_curves, plot_run_strip
#
# Oracles: the closed forms in exact arithmetic (fractions.Fraction), the first k with
# p^k < 1/2 found by counting up, and the running pass rate summed run by run in Python.

from passk.book.plots import plot_curves, plot_run_strip


def first_k_below_half(p: Fraction, k_max: int) -> int | None:
    for k in range(1, k_max + 1):
        if p ** k < Fraction(1, 2):
            return k
    return None


@pytest.mark.parametrize(("p", "k_max"), [
    (Fraction(9, 10), 8), (Fraction(7, 10), 3), (Fraction(99, 100), 20), (Fraction(1), 5),
    (Fraction(0), 4), (Fraction(1, 2), 1), (Fraction(5, 6), 12),
])
def test_plot_curves_draws_the_closed_forms_and_the_first_k_below_half(p, k_max):
    fig = plot_curves(float(p), k_max)
    ax = fig.axes[0]
    at, hat, half, *vertical = ax.get_lines()
    ks = range(1, k_max + 1)
    assert at.get_xdata().tolist() == list(ks) == hat.get_xdata().tolist()
    assert np.allclose(at.get_ydata(), [float(1 - (1 - p) ** k) for k in ks], rtol=0, atol=1e-12)
    assert np.allclose(hat.get_ydata(), [float(p ** k) for k in ks], rtol=0, atol=1e-12)
    assert set(half.get_ydata()) == {0.5}
    first = first_k_below_half(p, k_max)
    if first is None:
        assert vertical == []
    else:
        assert len(vertical) == 1 and set(vertical[0].get_xdata()) == {first}
        assert f"$k$ = {first}" in ax.get_legend().get_texts()[-1].get_text()
    assert ax.get_xlabel() and ax.get_ylabel()
    assert f"{float(p):.2f}" in ax.get_title()


def test_plot_curves_draws_into_the_axes_it_is_given():
    fig, axes = plt.subplots(1, 2)
    assert plot_curves(0.8, 6, ax=axes[1]) is fig
    assert axes[0].get_lines() == [] and len(axes[1].get_lines()) == 4


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"p": 1.5}, r"p \(1.5\)"), ({"p": -0.1}, r"p \(-0.1\)"), ({"p": float("nan")}, r"p \(nan\)"),
    ({"p": "0.9"}, r"p \('0.9'\)"), ({"p": 0.9, "k_max": 0}, r"k_max \(0\)"),
    ({"p": 0.9, "k_max": 2.5}, r"k_max \(2.5\)"), ({"p": 0.9, "k_max": True}, r"k_max \(True\)"),
])
def test_plot_curves_names_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        plot_curves(**kwargs)


@pytest.mark.parametrize("outcomes", [
    [True, True, False, True, True, True, False],
    [1, 0, 0, 1],
    np.array([False]),
    np.random.default_rng(7).random(50) < 0.8,
])
def test_plot_run_strip_draws_each_run_and_the_running_rate(outcomes):
    fig = plot_run_strip(outcomes, p=Fraction(5, 6), label="a task",
                         names=("escalated", "restarted"))
    strip, rate = fig.axes
    runs = [bool(x) for x in outcomes]
    colours = [to_hex(bar.get_facecolor()) for bar in strip.patches]
    assert colours == ["#0072b2" if ok else "#d55e00" for ok in runs]
    assert [bar.get_x() + bar.get_width() / 2 for bar in strip.patches] == list(
        range(1, len(runs) + 1))
    running, passed = [], 0
    for i, ok in enumerate(runs, start=1):
        passed += ok
        running.append(passed / i)
    line, reference = rate.get_lines()
    assert np.allclose(line.get_ydata(), running, rtol=0, atol=1e-15)
    assert set(reference.get_ydata()) == {5 / 6}
    assert [t.get_text() for t in rate.get_legend().get_texts()] == [
        "running pass rate", "p = 5/6"]
    title = strip.get_title()
    assert title.startswith(f"{len(runs)} runs of a task") and "escalated" in title
    assert rate.get_xlabel() and rate.get_ylabel() and strip.get_ylabel()


def test_plot_run_strip_without_a_reference_and_with_a_float_one():
    assert len(plot_run_strip([True, False]).axes[1].get_lines()) == 1
    fig = plot_run_strip([True, False], p=0.8)
    assert fig.axes[1].get_legend().get_texts()[1].get_text() == "p = 0.800"


@pytest.mark.parametrize(("outcomes", "p", "message"), [
    ([], None, r"shape \(0,\)"),
    ([[True, False]], None, r"shape \(1, 2\)"),
    ([1, 2, 0], None, "not 2"),
    (["pass", "fail"], None, "not 'pass'"),
    ([True], 1.2, r"p \(1.2\)"),
])
def test_plot_run_strip_names_bad_input(outcomes, p, message):
    with pytest.raises(ValueError, match=message):
        plot_run_strip(outcomes, p=p)


# ------------------------------------------------------------------------ plot_gate
#
# Oracles: pass^k = C(c,k)/C(n,k) and flakiness 4p(1-p) in exact arithmetic (math.comb,
# fractions.Fraction), the mean over tasks and the verdict (mean >= bar and no task above
# the cap, failing closed when a task cannot be estimated) decided here by hand.

from math import comb

from passk.book.plots import plot_gate


def hand_gate(c, n, k, bar, cap):
    """(points, mean or None, passed) for the dual gate, exactly."""
    points = [(4 * Fraction(ci, ni) * (1 - Fraction(ci, ni)), Fraction(comb(ci, k), comb(ni, k)))
              for ci, ni in zip(c, n) if ni >= k]
    if len(points) < len(c):
        return points, None, False
    mean = sum(hat for _, hat in points) / len(points)
    return points, mean, mean >= bar and all(f <= cap for f, _ in points)


def horizontal(ax, style):
    return [ln.get_ydata()[0] for ln in ax.get_lines()
            if ln.get_linestyle() == style and len(set(ln.get_xdata())) > 1]


@pytest.mark.parametrize(("c", "n", "k", "bar", "cap"), [
    ([10, 5, 5], [12, 5, 5], 5, Fraction(7, 10), Fraction(1, 5)),    # the book's "before"
    ([12, 5, 5], [12, 5, 5], 5, Fraction(7, 10), Fraction(1, 5)),    # ... and "after"
    ([7, 12, 0, 11], [12, 12, 12, 12], 3, Fraction(1, 2), Fraction(3, 10)),
    ([4, 4], [4, 4], 2, Fraction(9, 10), Fraction(0)),
])
def test_plot_gate_draws_each_task_the_cap_the_bar_and_the_mean(c, n, k, bar, cap):
    report = judged_report([f"t{i}" for i in range(len(c))], c, n, k=k,
                           criteria=GateCriteria(k=k, min_overall_pass_hat_k=float(bar),
                                                 max_flakiness=float(cap)))
    fig = plot_gate(report, title="suite")
    ax = fig.axes[0]
    points, mean, passed = hand_gate(c, n, k, bar, cap)
    drawn = ax.collections[0].get_offsets().tolist()
    assert np.allclose(drawn, [(float(f), float(h)) for f, h in points], rtol=0, atol=1e-12)
    assert horizontal(ax, ":") == [float(bar)]
    assert np.allclose(horizontal(ax, "-"), [float(mean)], rtol=0, atol=1e-12)
    cap_lines = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
    assert len(cap_lines) == 1 and set(cap_lines[0].get_xdata()) == {float(cap)}
    shaded = ax.patches[0]                  # axvspan: the region beyond the cap
    assert shaded.get_x() == float(cap) and shaded.get_x() + shaded.get_width() >= 1
    assert ax.get_title() == f"suite: {'PASSED' if passed else 'BLOCKED'}"
    assert ax.get_xlabel() and ax.get_ylabel() == f"estimated pass$^{{{k}}}$ per task"


def test_plot_gate_leaves_out_what_it_cannot_estimate_and_labels_shared_points():
    report = judged_report(["a", "b", "c", "d"], [5, 5, 3, 0], [5, 5, 3, 0], k=5)
    points, mean, passed = hand_gate([5, 5, 3, 0], [5, 5, 3, 0], 5, Fraction(7, 10),
                                     Fraction(1, 5))
    fig = plot_gate(report)
    ax = fig.axes[0]
    assert ax.collections[0].get_offsets().tolist() == [[0.0, 1.0], [0.0, 1.0]] == [
        [float(f), float(h)] for f, h in points]
    assert mean is None and not passed and ax.get_title() == "BLOCKED"
    assert horizontal(ax, "-") == []          # no overall figure, no mean line
    assert [t.get_text() for t in ax.texts if "\n" in t.get_text()] == ["a\nb"]


def test_plot_gate_takes_a_file_report_and_draws_on_a_given_axes():
    results = read_results(TAU_COPY)
    fr = build_report(results, max_flakiness=0.35)
    fig, (left, right) = plt.subplots(1, 2)
    assert plot_gate(fr, ax=right) is fig
    assert not left.lines and set(right.get_lines()[0].get_xdata()) == {0.35}
    assert right.get_title() == ("PASSED" if fr.gate.passed else "BLOCKED")


# --------------------------------------------------------------------- plot_coverage
#
# Oracles: issue 9's coverage of the chapter's bootstrap at n = 12, k = 5 (0.69, 0.46,
# 0.11, 0.06), and the exact interval's coverage summed by hand over the binomial with
# scipy's binomtest Clopper-Pearson interval raised to the k-th power.

from scipy import stats

from passk.book.plots import plot_coverage


def hand_coverage_exact(n, k, p, confidence):
    total = 0.0
    for c in range(n + 1):
        ci = stats.binomtest(c, n).proportion_ci(confidence_level=confidence, method="exact")
        total += stats.binom.pmf(c, n, p) * (ci.low**k <= p**k <= ci.high**k)
    return total


def test_plot_coverage_draws_each_methods_exact_coverage_and_the_claim():
    p = [0.9, 0.95, 0.99, 0.995]
    fig = plot_coverage(12, 5, p)
    ax = fig.axes[0]
    exact, bootstrap, claim = ax.get_lines()
    assert exact.get_xdata().tolist() == p == bootstrap.get_xdata().tolist()
    assert [round(float(y), 2) for y in bootstrap.get_ydata()] == [0.69, 0.46, 0.11, 0.06]
    assert np.allclose(exact.get_ydata(), [hand_coverage_exact(12, 5, q, 0.95) for q in p],
                       rtol=0, atol=1e-12)
    assert set(claim.get_ydata()) == {0.95}
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "exact Clopper–Pearson", "percentile bootstrap", "claimed: 95%"]
    assert exact.get_linestyle() != bootstrap.get_linestyle()
    assert exact.get_color() != bootstrap.get_color()
    assert "$n$ = 12" in ax.get_title() and "pass$^{5}$" in ax.get_ylabel()
    assert ax.get_xlabel()


def test_plot_coverage_default_grid_other_confidence_one_method_and_given_axes():
    fig = plot_coverage(5, 2)
    (exact, bootstrap, claim) = fig.axes[0].get_lines()
    x = exact.get_xdata()
    assert len(x) == 500 and x[0] == 0.5 and x[-1] == 0.999
    assert min(exact.get_ydata()) >= 0.95 > min(bootstrap.get_ydata())
    fig, axes = plt.subplots(1, 2)
    assert plot_coverage(8, 3, [0.7, 0.8], methods=("exact",), confidence=0.9,
                         ax=axes[1]) is fig
    line, claim = axes[1].get_lines()
    assert axes[0].get_lines() == []
    assert set(claim.get_ydata()) == {0.9} and "90%" in axes[1].get_title()
    assert np.allclose(line.get_ydata(), [hand_coverage_exact(8, 3, q, 0.9) for q in (0.7, 0.8)],
                       rtol=0, atol=1e-12)


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    ((12, 5), {"methods": ("exact", "wilson")}, r"method \('wilson'\)"),
    ((0, 5), {}, r"n \(0\)"),
    ((12, 0), {}, r"k \(0\)"),
    ((12, 5, [0.9, 1.2]), {}, r"p \("),
    ((12, 5), {"confidence": 95}, r"confidence \(95\)"),
])
def test_plot_coverage_names_bad_input(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        plot_coverage(*args, **kwargs)


# --------------------------------------------------------------------- plot_power_grid
#
# The plot draws the plan's numbers (the planner's own accuracy, against simulation and
# exact enumeration, is tested in tests/test_compare.py and benchmarks/bench_compare.py).

from passk.book.plots import plot_power_grid
from passk.stats.power import plan_comparison

PILOT_C, PILOT_N = [0, 1, 2, 3, 4, 4, 2, 0], [4] * 8


def test_plot_power_grid_draws_power_against_tasks_and_against_cost():
    tasks, runs, k, delta, omega2 = (20, 50, 100, 400), (2, 4, 8), 2, 0.05, 0.01
    plan = plan_comparison(k, delta=delta, successes=PILOT_C, totals=PILOT_N,
                           between_variance=omega2, tasks=tasks, runs=runs)
    fig = plot_power_grid(plan, mark=[(50, 8), (100, 4)])
    left, right = fig.axes
    for j, n in enumerate(runs):
        want = plan.power[:, j]
        on_tasks, on_cost = left.get_lines()[j], right.get_lines()[j]
        assert on_tasks.get_xdata().tolist() == list(tasks)
        assert on_cost.get_xdata().tolist() == [t * n for t in tasks]
        assert np.allclose(on_tasks.get_ydata(), want, rtol=0, atol=1e-9)
        assert np.allclose(on_cost.get_ydata(), want, rtol=0, atol=1e-9)
        assert on_tasks.get_label() == f"{n} runs per task"
    styles = {(ln.get_color(), ln.get_linestyle(), ln.get_marker())
              for ln in left.get_lines()[:len(runs)]}
    assert len(styles) == len(runs)
    # 50 × 8 and 100 × 4 cost the same 400 runs: circled one above the other on the right
    marks = [ln for ln in right.get_lines() if ln.get_label() == "_design"]
    assert [(float(m.get_xdata()[0]), round(float(m.get_ydata()[0]), 9)) for m in marks] == [
        (400.0, round(float(plan.power[1, 2]), 9)), (400.0, round(float(plan.power[2, 1]), 9))]
    assert [t.get_text() for t in left.texts] == ["50 × 8", "100 × 4"]
    assert [t.xy[0] for t in left.texts] == [50.0, 100.0]
    for ax in (left, right):
        dotted = [ln for ln in ax.get_lines() if ln.get_linestyle() == ":"
                  and len(set(ln.get_ydata())) == 1 and ln.get_label().startswith("target")]
        assert len(dotted) == 1 and dotted[0].get_ydata()[0] == 0.8
        assert ax.get_xscale() == "log"
    assert "0.05" in left.get_ylabel() and "pass$^{2}$" in left.get_ylabel()
    assert "tasks × runs" in right.get_xlabel()


def test_plot_power_grid_without_a_drop_draws_the_detectable_drop_on_given_axes():
    plan = plan_comparison(3, successes=PILOT_C, totals=PILOT_N, between_variance=0.02,
                           tasks=(30, 300), runs=(4, 12), power=0.9)
    fig, axes = plt.subplots(1, 3)
    assert plot_power_grid(plan, axes=axes[1:]) is fig
    assert axes[0].get_lines() == []
    left = axes[1]
    for j in range(2):
        drawn = left.get_lines()[j].get_ydata()
        # the drawn drop is the one the plan detects with the target power
        assert np.allclose(drawn, plan.detectable[:, j], rtol=0, atol=1e-12)
    assert not [ln for ln in left.get_lines() if ln.get_label().startswith("target")]
    assert "power 0.9" in left.get_ylabel()


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"mark": [(60, 4)]}, r"mark \(60, 4\) is not on the plan's grid"),
    ({"mark": [(50, 3)]}, r"mark \(50, 3\)"),
])
def test_plot_power_grid_names_bad_input(kwargs, message):
    plan = plan_comparison(2, delta=0.1, tasks=(20, 50), runs=(2, 4))
    with pytest.raises(ValueError, match=message):
        plot_power_grid(plan, **kwargs)
    _, ax = plt.subplots()
    with pytest.raises(ValueError, match=r"axes \(1 given\)"):
        plot_power_grid(plan, axes=[ax])


# ----------------------------------------------------------- figures in the page's language
#
# The Chinese edition draws every figure with passk.book.plots.use_language("zh_CN",
# locales/zh_CN/_figures.yml). Here each of the package's own figures is drawn that way
# and saved: every text matplotlib drew must be Chinese, a number, math or an identifier
# (the check is scripts/zh_book.py's english_in_figure), and every glyph must exist in
# the fonts (matplotlib warns "does not have a glyph" otherwise: an error here).

import importlib.util
import io
import sys
import warnings

from passk.book import plots as book_plots

_spec = importlib.util.spec_from_file_location("zh_book", ROOT / "scripts" / "zh_book.py")
zh_book = sys.modules.setdefault("zh_book", importlib.util.module_from_spec(_spec))
if not hasattr(zh_book, "english_in_figure"):
    _spec.loader.exec_module(zh_book)


def _package_figures():
    suite = judged_report(["payment-alert", "read-error-rate", "read-last-deploy"],
                          [10, 12, 12], [12, 12, 12], k=5)
    plan = plan_comparison(4, delta=0.05, tasks=(50, 100), runs=(4, 8))
    yield "plot_curves", lambda: plot_curves(0.9, 8)
    yield "plot_run_strip", lambda: plot_run_strip(
        [True, True, False, True], p=Fraction(5, 6), label="the payment-alert task",
        names=("escalated", "restarted"))
    yield "plot_gate", lambda: plot_gate(suite, title="before the fix")
    yield "plot_task_classes", lambda: plot_task_classes(suite)
    yield "plot_coverage", lambda: plot_coverage(12, 5, [0.9, 0.95, 0.99])
    yield "plot_power_grid", lambda: plot_power_grid(plan, mark=[(50, 8), (100, 4)])


@pytest.fixture
def in_chinese():
    book_plots.use_language("zh_CN", ROOT / "locales" / "zh_CN" / "_figures.yml")
    try:
        yield
    finally:
        book_plots.use_language("en", {})


@pytest.mark.parametrize("name, draw", list(_package_figures()), ids=lambda x: x
                         if isinstance(x, str) else "")
def test_package_figures_are_drawn_in_chinese(name, draw, in_chinese):
    fig = draw()
    english_before = [t.get_text() for t in fig.findobj(mpl.text.Text) if t.get_text()]
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*does not have a glyph.*")
        fig.savefig(io.BytesIO(), format="png", dpi=60)
    _, texts = book_plots.shown_texts()[-1]
    plt.close(fig)
    identifiers = zh_book.figure_identifiers()
    assert zh_book.english_in_figure(english_before, identifiers), name  # it was English
    assert not zh_book.english_in_figure(texts, identifiers), (name, texts)
    assert any("\u4e00" <= ch <= "\u9fff" for t in texts for ch in t), (name, texts)


def test_english_figures_stay_english_after_the_chinese_ones(in_chinese):
    book_plots.use_language("en", {})
    fig = plot_curves(0.9, 8)
    fig.savefig(io.BytesIO(), format="png", dpi=60)
    assert fig.axes[0].get_ylabel() == "probability"
    assert mpl.rcParams["font.family"] == mpl.rcParamsDefault["font.family"]
    plt.close(fig)


def test_translate_text_by_string_pattern_and_line():
    catalog = book_plots._compile({
        "strings": {"probability": "概率", "clean": "干净", "baseline": "基线"},
        "patterns": [{"en": r"(\d+) runs per task", "zh": "每任务 {0} 次运行"},
                     {"en": r"(.+): (BLOCKED|PASSED)", "zh": "{0}：{1}"}]})
    assert book_plots.translate_text("probability", catalog) == "概率"
    assert book_plots.translate_text("8 runs per task", catalog) == "每任务 8 次运行"
    assert book_plots.translate_text("clean\nbaseline", catalog) == "干净\n基线"
    assert book_plots.translate_text("probability: BLOCKED", catalog) == "概率：BLOCKED"
    assert book_plots.translate_text("unknown", catalog) == "unknown"
    with pytest.raises(ValueError, match="pattern 1 must be"):
        book_plots._compile({"patterns": [{"en": "x"}]})
