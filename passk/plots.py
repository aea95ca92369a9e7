"""``passk report --plot FILE.png``: the suite's curves over k and flakiness per task.

matplotlib is optional (the ``plot`` extra) and imported only here, with the
non-interactive Agg backend, so the command works on a headless CI runner.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from .reporting import FileReport

__all__ = ["MissingExtra", "plot_report"]


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
    for values, ci, label, color in ((cv.pass_at_k, cv.at_ci, "pass@k", "tab:blue"),
                                     (cv.pass_hat_k, cv.hat_ci, "pass^k", "tab:red")):
        left.plot(ks, values, marker="o", color=color, label=label)
        left.fill_between(ks, ci[:, 0], ci[:, 1], color=color, alpha=0.18)
    left.set_xlabel("k")
    left.set_ylabel("suite mean over tasks")
    left.set_ylim(-0.02, 1.02)
    left.set_xticks(ks if ks.size <= 20 else ks[:: max(1, ks.size // 10)])
    left.set_title(f"{len(fr.results)} tasks; shaded: 95% interval over tasks")
    left.legend(loc="center right")
    left.grid(alpha=0.3)

    flak = np.array([t.flakiness for t in fr.report.tasks], dtype=float)
    ids = [t.task_id for t in fr.report.tasks]
    order = np.argsort(-np.nan_to_num(flak, nan=-1.0), kind="stable")
    shown = order[: min(40, order.size)]
    colors = ["tab:red" if f > cap else "tab:gray" for f in flak[shown]]
    if order.size <= 40:
        right.barh(np.arange(shown.size), np.nan_to_num(flak[shown]), color=colors)
        right.set_yticks(np.arange(shown.size), [ids[i] for i in shown], fontsize=7)
        right.invert_yaxis()
        right.set_title("flakiness per task (red: above the cap)")
    else:
        right.plot(np.arange(order.size), np.nan_to_num(flak[order]), color="tab:red")
        right.set_xlabel("tasks, flakiest first")
        right.set_title(f"flakiness of {order.size} tasks, sorted")
    right.axvline(cap, color="black", ls="--", lw=1) if order.size <= 40 else \
        right.axhline(cap, color="black", ls="--", lw=1)
    right.set_xlim(0, 1) if order.size <= 40 else right.set_ylim(0, 1.02)
    fig.savefig(os.fspath(path), dpi=110)
    plt.close(fig)
