r"""Stopping a suite early with a proved error: a few planned looks, alpha spent over them.

A suite is run in stages: at look j of L planned looks each task has its runs so far. At
each look the suite's proved interval on mean pass^k
(:func:`passk.stats.suite_interval.mean_pass_hat_k_ci`, ``method='hoeffding'``, whose
level is proved for every suite and every mix of runs) is taken at confidence
:math:`1 - \alpha/L`; the suite stops and passes when its lower end clears the bar, stops
and fails when its upper end is below it, and otherwise goes on.

The error is proved by the union bound (Bonferroni over the looks), whatever the
dependence between looks: a suite whose true mean pass^k is below the bar is passed at
some look only if one of the L lower ends exceeded the truth; the interval at level
:math:`1-\alpha/L` misses with probability at most :math:`\alpha/L` (each end bounded
by its own mirrored tail, at most :math:`\alpha/(2L)` each), so a false pass happens
with probability at most :math:`\alpha/2` over all looks, and the same for a false fail.
It spends alpha evenly; a suite that never clears either side by the last look is left
to the caller's fixed-n rule (``'continue'`` at the last look means "undecided").

References
----------
.. [1] C. E. Bonferroni, "Teoria statistica delle classi e calcolo delle probabilità",
   1936; the union bound for repeated looks, as in S. J. Pocock, "Group sequential
   methods in the design and analysis of clinical trials", Biometrika 64(2), 1977.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy.typing as npt

from passk.errors import BadInput
from passk.stats import _checks as check
from passk.stats.suite_interval import mean_pass_hat_k_ci

__all__ = ["DECISIONS", "LookDecision", "sequential_decision"]

#: What a look can say.
DECISIONS = ("stop-pass", "stop-fail", "continue")


@dataclass(frozen=True)
class LookDecision:
    """One look's decision (see :func:`sequential_decision`)."""

    decision: str
    low: float
    high: float
    confidence: float
    look: int
    looks: int


def sequential_decision(successes: npt.ArrayLike, totals: npt.ArrayLike, k: int, bar: float,
                        *, look: int, looks: int, confidence: float = 0.95) -> LookDecision:
    r"""Stop and pass, stop and fail, or go on, at look ``look`` of ``looks`` planned.

    Parameters
    ----------
    successes, totals : array_like of int
        Per-task successes and runs so far.
    k : int
        Runs that must all succeed.
    bar : float
        The bar on the suite's mean pass^k, in (0, 1).
    look, looks : int
        This look (1-based) and the number planned, fixed before the first run.
    confidence : float, default 0.95
        Each wrong stop (pass below the bar, fail above it) happens with probability at
        most :math:`(1 - c)/2` over all the looks together.

    Returns
    -------
    LookDecision
        ``decision`` in :data:`DECISIONS`, the interval at this look and its confidence
        :math:`1 - \alpha/L`.

    Notes
    -----
    With :math:`[L_j, H_j]` the proved interval at look j at level :math:`1-\alpha/L`:
    ``'stop-pass'`` when :math:`L_j \ge` bar, ``'stop-fail'`` when :math:`H_j <` bar,
    else ``'continue'``. :math:`P(\exists j: L_j > \theta) \le \sum_j \alpha/(2L) =
    \alpha/2` (the union bound), so a suite below the bar is passed with probability at
    most :math:`\alpha/2` however many of the looks are taken.

    Examples
    --------
    >>> sequential_decision([4] * 30, 4, 1, 0.7, look=1, looks=3).decision
    'stop-pass'
    >>> sequential_decision([3, 4, 2, 4] * 5, 4, 2, 0.7, look=1, looks=3).decision
    'continue'
    """
    k_ = check.whole(k, "k", minimum=1)
    bar_ = check.real(bar, "bar", low=0.0, high=1.0, open_high=True)
    looks_ = check.whole(looks, "looks", minimum=1)
    look_ = check.whole(look, "look", minimum=1)
    if look_ > looks_:
        raise BadInput(f"look ({look_}) must be at most looks ({looks_})")
    conf = check.confidence(confidence)
    level = 1.0 - (1.0 - conf) / looks_
    res = mean_pass_hat_k_ci(successes, totals, k_, confidence=level, method="hoeffding")
    low, high = float(res.ci.low), float(res.ci.high)
    decision = ("stop-pass" if low >= bar_ else "stop-fail" if high < bar_ else "continue")
    return LookDecision(decision, low, high, level, look_, looks_)
