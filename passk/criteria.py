"""The dual gate's criteria: one type, and the one place their defaults are written.

The chapter's gate (``src/stability.ts``): the mean pass^k over tasks must reach
a bar (0.7) AND no task's flakiness may exceed a cap (0.2). :class:`GateCriteria`
holds those two with what the bar is compared with, k, the confidence of the
lower bounds and the fewest runs a task needs. Every gate takes its defaults
from :data:`DEFAULT_CRITERIA`: :func:`passk.stability.reliability_gate`, the
report, the command line, :func:`passk.run_suite`, the pytest plugin and the
Inspect extension. This module imports nothing, so the pytest plugin can read
the defaults without loading numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

from passk._public import publish
from passk.errors import BadInput

__all__ = ["CORRECTIONS", "DEFAULT_CRITERIA", "GATE_MODES", "GATE_ON", "MAX_K", "GateCriteria",
           "check_criteria"]

#: What a gate can compare with the bar: the pass^k estimate or its exact lower bound.
GATE_ON = ("estimate", "lower-bound")
#: The baseline comparison's multiple-testing corrections, the stricter first: Holm's
#: (family-wise error rate), Benjamini-Hochberg's (false discovery rate).
CORRECTIONS = ("holm", "bh")
#: How the gate decides (issue 29): the chapter's rule; the suite's proved lower bound and
#: each task proved steady by its exact bounds; the suite's proved bound with flakiness a
#: warning (its miss rate stated). See :func:`passk.stats.operating.gate_decision`.
GATE_MODES = ("chapter", "proved", "proved-warn")
#: The largest k, or number of runs, any setting may name: more runs of one task than any
#: evaluation makes, and small enough for every count to stay exact in 64-bit integers.
MAX_K = 10**9


@dataclass(frozen=True)
class GateCriteria:
    """The dual gate's criteria: the one type, and the one place their defaults are written.

    Every gate takes them from here: :func:`reliability_gate`, the report, the
    command line, :func:`passk.run_suite`, the pytest plugin and the Inspect
    extension; a curtailment serves them (it must leave the decision fixed n makes).

    Attributes
    ----------
    k : int
        k of pass^k (a suite may give each task its own, see :func:`settled_tasks`).
    min_overall_pass_hat_k, max_flakiness : float
        The bar on the mean and the cap on any task's flakiness.
    on : {'estimate', 'lower-bound'}
        What the mean is of: pass^k estimates or their exact lower bounds.
    confidence : float
        The lower bounds' one-sided confidence.
    min_runs : int
        Fewer counted runs than this fail a task.
    alpha : float
        The baseline comparison's level: each task's Fisher test after
        ``correction``, and 1 - the suite interval's confidence.
    correction : {'holm', 'bh'}
        The baseline comparison's correction across tasks.
    margin : float or None
        With a baseline: a non-inferiority margin on mean pass^k (None: only
        a drop shown blocks).
    mode : {'chapter', 'proved', 'proved-warn'}
        The decision rule (:func:`passk.stats.operating.gate_decision`): the
        chapter's point estimates (default), or errors proved at ``confidence``.

    Examples
    --------
    >>> GateCriteria(k=2, on="lower-bound").describe()
    'k 2, bar 0.7 on the lower bound (95%), flakiness cap 0.2'
    """

    k: int = 5
    min_overall_pass_hat_k: float = 0.7
    max_flakiness: float = 0.2
    on: str = "estimate"
    confidence: float = 0.95
    min_runs: int = 0
    alpha: float = 0.05
    correction: str = "holm"
    margin: float | None = None
    mode: str = "chapter"

    def __post_init__(self) -> None:
        check_criteria(self.k, self.max_flakiness, self.min_runs, self.on, self.confidence)
        if self.mode not in GATE_MODES:
            raise BadInput(f"mode ({self.mode!r}) must be one of {', '.join(GATE_MODES)}")
        if (isinstance(self.alpha, bool) or not isinstance(self.alpha, (int, float))
                or not 0 < self.alpha < 1):
            raise BadInput(f"alpha ({self.alpha!r}) must lie strictly between 0 and 1")
        if self.correction not in CORRECTIONS:
            raise BadInput(f"correction ({self.correction!r}) must be one of "
                             f"{', '.join(CORRECTIONS)}")
        if self.margin is not None and not 0 <= self.margin < 1:
            raise BadInput(f"margin ({self.margin!r}) must lie in [0, 1)")
        if not 0 <= self.min_overall_pass_hat_k <= 1:
            raise BadInput(f"min_overall_pass_hat_k ({self.min_overall_pass_hat_k!r}) must "
                             "lie in [0, 1]")

    def describe(self) -> str:
        """The gate in one phrase, as the refusal and the notes print it."""
        on = ("the estimate" if self.on == "estimate"
              else f"the lower bound ({self.confidence:.0%})")
        runs = f", at least {self.min_runs} runs" if self.min_runs else ""
        mode = "" if self.mode == "chapter" else f", mode {self.mode}"
        return (f"k {self.k}, bar {self.min_overall_pass_hat_k:g} on {on}, flakiness cap "
                f"{self.max_flakiness:g}{runs}{mode}")


def check_criteria(k: object, cap: object, min_runs: object, on: object, confidence: object
                   ) -> None:
    """Refuse criteria out of range, naming the argument and the value."""
    if isinstance(k, bool) or not isinstance(k, Integral) or not 1 <= int(k) <= MAX_K:
        raise BadInput(f"k ({k!r}) must be a whole number from 1 to {MAX_K:,}")
    if isinstance(cap, bool) or not isinstance(cap, (int, float)) or not 0 <= cap <= 1:
        raise BadInput(f"max_flakiness ({cap!r}) must lie in [0, 1]")
    if (isinstance(min_runs, bool) or not isinstance(min_runs, Integral)
            or not 0 <= int(min_runs) <= MAX_K):
        raise BadInput(f"min_runs ({min_runs!r}) must be a whole number from 0 to {MAX_K:,}")
    if on not in GATE_ON:
        raise BadInput(f"on ({on!r}) must be one of {', '.join(GATE_ON)}")
    if (isinstance(confidence, bool) or not isinstance(confidence, (int, float))
            or not 0 < confidence < 1):
        raise BadInput(f"confidence ({confidence!r}) must lie strictly between 0 and 1")


#: The gate's defaults: the chapter's bar 0.7 and cap 0.2, on the estimate, k = 5.
DEFAULT_CRITERIA = GateCriteria()


publish(globals())  # the names passk.__all__ takes from here say 'passk' (passk._public)
