"""``passk report --plot FILE.png``: the suite's curves over k and flakiness per task.

matplotlib is optional (the ``plot`` extra) and imported only here, with the
non-interactive Agg backend, so the command works on a headless CI runner.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

    from .reporting import FileReport
    from .stability import SuiteReport

__all__ = ["MissingExtra", "plot_report", "plot_task_classes"]


_BLUE, _VERMILLION, _GREY = "#0072B2", "#D55E00", "#999999"


class MissingExtra(RuntimeError):
    """An optional dependency is not installed; the message names the extra."""


def plot_report(fr: FileReport, path: str | os.PathLike[str]) -> None:
    """Write a two-panel PNG: pass@k and pass^k over k with intervals; flakiness per task."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingExtra("--plot needs matplotlib, in the optional extra 'plot': "
                           "pip install 'passk[plot]'") from None
    cv = fr.curve
    cap = fr.options.get("max_flakiness", 0.2)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
    ks = cv.ks
    # Okabe-Ito colours, told apart by marker too: safe for colour-blind readers
    for values, ci, label, color, marker in (
            (cv.pass_at_k, cv.at_ci, "pass@k (at least one of k)", _BLUE, "o"),
            (cv.pass_hat_k, cv.hat_ci, "pass^k (all k)", _VERMILLION, "s")):
        left.plot(ks, values, marker=marker, color=color, label=label)
        left.fill_between(ks, ci[:, 0], ci[:, 1], color=color, alpha=0.18)
    left.set_xlabel("k (runs of the same task)")
    left.set_ylabel("suite mean over tasks")
    left.set_ylim(-0.02, 1.02)
    left.set_xticks(ks if ks.size <= 20 else ks[:: max(1, ks.size // 10)])
    conf = fr.options.get("confidence", 0.95)
    left.set_title(f"{cv.tasks} tasks; shaded: {conf:.0%} interval over tasks ({cv.method})",
                   fontsize=9)
    left.legend(loc="center right")
    left.grid(alpha=0.3)

    flak = np.nan_to_num(np.array([t.flakiness for t in fr.report.tasks], dtype=float), nan=-1.0)
    ids = [t.task_id for t in fr.report.tasks]
    order = np.argsort(-flak, kind="stable")
    if order.size <= 40:  # few tasks: one named bar each
        shown = flak[order].clip(min=0)
        right.barh(np.arange(order.size), shown,
                   color=[_VERMILLION if f > cap else _GREY for f in shown])
        right.set_yticks(np.arange(order.size), [ids[i] for i in order], fontsize=7)
        right.invert_yaxis()
        right.axvline(cap, color="black", ls="--", lw=1, label=f"cap {cap:g}")
        right.set_xlim(0, 1)
        right.set_xlabel("flakiness 4·p̂·(1−p̂)")
        right.set_title("flakiness per task (above the cap in vermillion)")
    else:  # many tasks: the sorted profile
        right.plot(np.arange(order.size), flak[order].clip(min=0), color=_VERMILLION)
        right.axhline(cap, color="black", ls="--", lw=1, label=f"cap {cap:g}")
        right.set_ylim(0, 1.02)
        right.set_xlabel("tasks, flakiest first")
        right.set_ylabel("flakiness 4·p̂·(1−p̂)")
        right.set_title(f"flakiness of {order.size} tasks, sorted")
    right.legend(loc="upper right")
    fig.savefig(os.fspath(path), dpi=110)
    plt.close(fig)


#: The task classes' colours (Okabe-Ito) and markers, in the order a legend lists them.
_CLASS_STYLE = {"flaky": (_VERMILLION, "s"), "stable-fail": ("#000000", "^"),
                "stable-pass": (_BLUE, "o")}


def plot_task_classes(report: FileReport | SuiteReport, *,
                      cap: float | None = None) -> Figure:
    """Tasks by pass rate, coloured by class, beside the flakiness curve and the gate's cap.

    Left: how many tasks passed each share :math:`\\hat p = c/n` of their runs,
    one bar per distinct :math:`\\hat p`, coloured by the task's class
    (``stable-pass``, ``stable-fail``, ``flaky``). Right: the chapter's
    flakiness :math:`4\\hat p(1-\\hat p)` over :math:`\\hat p \\in [0, 1]`, each
    observed :math:`\\hat p` marked in its class's colour, and the gate's cap
    as a dashed line: a task above it fails the gate's second condition.
    Colours are Okabe-Ito, and markers differ by class too.

    Parameters
    ----------
    report : FileReport or SuiteReport
        What :func:`passk.reporting.build_report` or
        :func:`passk.stability.suite_report` returns.
    cap : float, optional
        The flakiness cap drawn; default the report's own (``max_flakiness``
        of a FileReport), else 0.2.

    Returns
    -------
    matplotlib.figure.Figure
        Two axes; the caller shows or saves it (pyplot's current backend is kept).

    Raises
    ------
    ValueError
        When ``cap`` is outside [0, 1].
    MissingExtra
        When matplotlib is not installed.

    Notes
    -----
    Tasks without runs (class ``no-evidence``) have no :math:`\\hat p`; they are
    left out, and the left panel's title says how many.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from passk.stability import suite_report
    >>> fig = plot_task_classes(suite_report(["a", "b", "c"], [4, 2, 4], [4, 4, 4], k=4))
    >>> [int(bar.get_height()) for bar in fig.axes[0].patches]
    [1, 2]
    >>> plt.close(fig)
    """
    try:
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except ImportError:
        raise MissingExtra("plot_task_classes needs matplotlib, in the optional extra "
                           "'plot': pip install 'passk[plot]'") from None
    from .stability import SuiteReport

    suite = report if isinstance(report, SuiteReport) else report.report
    if cap is None:
        cap = getattr(report, "options", {}).get("max_flakiness", 0.2)
    if not 0 <= cap <= 1:
        raise ValueError(f"cap ({cap!r}) must lie in [0, 1]")
    tasks = [t for t in suite.tasks if t.runs > 0]
    unseen = len(suite.tasks) - len(tasks)
    rates = np.array([t.successes / t.runs for t in tasks], dtype=float)
    values, index, counts = np.unique(rates, return_index=True, return_counts=True)
    classes = [tasks[i].cls for i in index]  # the class is a function of p̂
    runs = {t.runs for t in tasks}
    if len(runs) == 1:
        n = runs.pop()
        labels = [f"{round(v * n)}/{n}" for v in values]
    else:
        labels = [f"{v:.2f}" for v in values]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6), constrained_layout=True)
    width = 0.8 * (np.diff(values).min() if values.size > 1 else 1.0)
    bars = left.bar(values, counts, width=width, edgecolor="white",
                    color=[_CLASS_STYLE[c][0] for c in classes])
    left.bar_label(bars, padding=2)
    left.set_xticks(values, labels)
    left.set_xlabel("pass rate p̂ = c/n (runs passed)")
    left.set_ylabel("tasks")
    left.set_ylim(0, counts.max(initial=1) * 1.15)
    left.set_title(f"{len(tasks)} tasks by pass rate" +
                   (f" ({unseen} without runs not shown)" if unseen else ""), fontsize=10)
    shown = [c for c in _CLASS_STYLE if c in classes]
    left.legend([Patch(color=_CLASS_STYLE[c][0]) for c in shown], shown, fontsize=8,
                loc="upper center")

    p = np.linspace(0, 1, 201)
    right.plot(p, 4 * p * (1 - p), color=_GREY, lw=1.5)
    right.axhline(cap, color="black", ls="--", lw=1)
    right.text(0.5, cap + 0.02, f"the gate's cap, {cap:g}", ha="center", va="bottom",
               fontsize=8)
    for c in shown:
        at = values[[k == c for k in classes]]
        colour, marker = _CLASS_STYLE[c]
        right.scatter(at, 4 * at * (1 - at), color=colour, marker=marker, s=60, zorder=3,
                      clip_on=False, label=c)
    right.set_xlim(-0.03, 1.03)
    right.set_ylim(0, 1.08)
    right.set_xlabel("pass rate p̂")
    right.set_ylabel("flakiness 4p̂(1−p̂)")
    right.set_title("flakiness at each observed pass rate", fontsize=10)
    return fig
