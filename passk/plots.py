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
