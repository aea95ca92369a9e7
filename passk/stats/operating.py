r"""The gate's operating characteristic: how often a gate passes a suite like this one.

A gate is a test, and a test has two errors: it blocks a good suite (false
block) and passes a bad one (false pass). :func:`operating_characteristic` gives
the probability that a gate passes, for any criteria, design (runs per task)
and population (each task's true success rate): exactly where the decision is a
function of independent per-task counts, by Monte Carlo with its standard error
otherwise. :func:`gate_decision` is the decision rule of each of the gate's
modes (:data:`passk.criteria.GATE_MODES`) as one pure function of the counts, and
:func:`mean_reaches` the one comparison of a suite statistic with the bar, exact (the bar
the decimal written, :func:`bar_fraction`), which every verdict uses.

The modes
---------
``'chapter'``
    The chapter's rule: mean pass^k estimate (or mean exact lower bound, ``on``)
    at least the bar AND every task's :math:`4\hat p(1-\hat p)` at most the cap.
    Neither error is controlled: one failure in 12 runs reads as flakiness
    0.31, so a suite of near-perfect tasks is blocked most of the time.
``'proved'``
    The suite: the lower end of passk's proved suite interval
    (:func:`passk.stats.suite_interval.mean_pass_hat_k_ci`, two-sided at
    :math:`2c - 1`, so one-sided at the criteria's confidence c) at least the
    bar; a suite whose true mean pass^k is below the bar passes with
    probability at most :math:`\alpha = 1 - c`. Each task: proved steady, its
    exact one-sided Clopper–Pearson bounds putting p outside the flaky band
    :math:`\{p: 4p(1-p) > \text{cap}\}`; a truly flaky task passes with the
    probability :func:`steady_false_pass` states (at most :math:`\alpha` on
    either side of the band). At cap 0.2 and 95 % that takes 56 runs.
``'proved-warn'``
    The suite as in ``'proved'``; flakiness over the cap is a warning, not a
    block, and the warning misses a truly flaky task at the rate
    :func:`warning_miss_rate` states.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from passk.criteria import GATE_MODES, GateCriteria
from passk.errors import BadInput
from passk.metrics import estimate_pass_hat_k, flakiness, pass_hat_k_lower_bound

__all__ = [
    "GateDecision",
    "OperatingCharacteristic",
    "bar_fraction",
    "exact_mean",
    "flakiness_note",
    "flaky_band",
    "gate_decision",
    "lowered_rates",
    "mean_reaches",
    "operating_characteristic",
    "population",
    "rerun_pass_sentence",
    "runs_to_prove_steady",
    "steady_false_pass",
    "warning_miss_rate",
]

#: Largest grid (tasks x steps of a task's value) the law of the suite's sum is computed on:
#: the estimates' own lattice (lcm of the C(n, k), times T) when it fits, so P(pass) is exact;
#: a bracket otherwise (issue 38: 2**19 - 1 made T = 1000, n = 12, k = 5 a bracket).
_GRID = 2**22
#: Steps per task of a bracket's grid (the values rounded down and up to 1/steps), at most.
_BRACKET_STEPS = 2**16
#: Samples of a population checked against the exact path's threshold rule.
_CHECKS = 8
#: The proved modes' thresholds on the mean, by (tasks, n, k, bar, confidence): they depend
#: on the design alone.
_THRESHOLDS: dict[tuple[int, int, int, float, float], tuple[float, float]] = {}


#: The float mean decides the bar's comparison when it is farther than this from the bar; within
#: it, the exact sum decides (:func:`mean_reaches`). Far above the float mean's own error: a
#: pass^k estimate is a product of k correctly rounded factors (relative error under
#: :math:`2k\,2^{-53}`, below :math:`2^{-33}` for any k under :math:`10^6`), and numpy's pairwise
#: sum of :math:`T` values in [0, 1] errs by well under :math:`2^{-33}` on the mean for any
#: :math:`T` under :math:`2^{20}`; for larger suites the zone grows with :math:`T`.
_TIE_ZONE = 2.0**-30


def bar_fraction(bar: float | Fraction) -> Fraction:
    """The bar as the exact number a person wrote: the shortest decimal that reads back as the
    float (Python's ``repr``), so the bar 0.7 is 7/10, not the binary double just below it.

    A bar is typed as a decimal (``--min-overall 0.7``, ``min_overall = 0.7`` in a policy, the
    chapter's 0.7); the float that carries it is only its nearest double. Every comparison of a
    suite statistic with the bar (:func:`mean_reaches`) is made against this fraction, so a
    suite whose mean pass^k is exactly 7/10 meets the bar 0.7.

    Parameters
    ----------
    bar : float or Fraction
        A float (or int, numpy float) is read as its shortest decimal; a Fraction is taken
        as given.

    Returns
    -------
    Fraction

    Examples
    --------
    >>> bar_fraction(0.7), bar_fraction(0.35), bar_fraction(1)
    (Fraction(7, 10), Fraction(7, 20), Fraction(1, 1))
    >>> bar_fraction(1 / 3)  # a bar computed in floating point is the decimal it prints as
    Fraction(3333333333333333, 10000000000000000)
    """
    if isinstance(bar, Fraction):
        return bar
    x = float(bar)
    if not math.isfinite(x):
        raise BadInput(f"bar ({bar!r}) must be a finite number")
    return Fraction(repr(x))


def _exact_sum(values: np.ndarray, counts: tuple[np.ndarray, np.ndarray, np.ndarray] | None
               ) -> Fraction:
    """The exact sum of one row: of the pass^k estimates C(c, k)/C(n, k) of ``counts``, or of
    the floats themselves; equal values summed once, times their multiplicity."""
    total = Fraction(0)
    if counts is None:
        uniq, times = np.unique(values, return_counts=True)
        for v, m in zip(uniq.tolist(), times.tolist(), strict=True):
            total += Fraction(v) * m
        return total
    c, n, k = counts
    top = int(n.max()) + 1  # (n, k, c) as one integer key: one sort of a flat array
    if top**3 < 2**62:
        keys, times = np.unique((n * top + k) * top + c, return_counts=True)
        triples = np.stack([keys // (top * top), keys // top % top, keys % top])
    else:
        triples, times = np.unique(np.stack([n, k, c]), axis=1, return_counts=True)
    by_design: dict[tuple[int, int], int] = {}
    for (nn, kk, cc), m in zip(triples.T.tolist(), times.tolist(), strict=True):
        by_design[(nn, kk)] = by_design.get((nn, kk), 0) + m * math.comb(cc, kk)
    for (nn, kk), top in by_design.items():
        total += Fraction(top, math.comb(nn, kk))
    return total


def exact_mean(values: npt.ArrayLike, *, successes: npt.ArrayLike | None = None,
               totals: npt.ArrayLike | None = None, k: npt.ArrayLike | None = None
               ) -> Fraction:
    r"""The exact mean of one suite's values, as :func:`mean_reaches` sums them: of the pass^k
    estimates :math:`\binom{c}{k}/\binom{n}{k}` when the counts are given, else of the floats.

    Examples
    --------
    >>> exact_mean([0.6, 0.7, 0.8], successes=[6, 7, 8], totals=10, k=1)
    Fraction(7, 10)
    >>> exact_mean([0.5, 0.25])
    Fraction(3, 8)
    """
    v = np.atleast_1d(np.asarray(values, dtype=float))
    if v.ndim != 1 or v.size == 0:
        raise BadInput("values must be one suite's values: a non-empty 1-D array")
    counts = None
    if successes is not None:
        if totals is None or k is None:
            raise BadInput("successes need their totals and k")
        counts = (np.broadcast_to(np.asarray(successes, dtype=np.int64), v.shape),
                  np.broadcast_to(np.asarray(totals, dtype=np.int64), v.shape),
                  np.broadcast_to(np.asarray(k, dtype=np.int64), v.shape))
    return _exact_sum(v, counts) / v.size


def mean_reaches(values: npt.ArrayLike, bar: float | Fraction, *,
                 successes: npt.ArrayLike | None = None, totals: npt.ArrayLike | None = None,
                 k: npt.ArrayLike | None = None) -> Any:
    r"""Does the mean of per-task values reach the bar? The one rule, exact and order-free.

    Every comparison of a suite's mean (or any suite statistic) with the bar is made here: the
    chapter's judge (:func:`passk.stability.reliability_gate`), :func:`gate_decision`, the
    operating characteristic's Monte Carlo path and the planner's per-task grid. The float mean
    decides when it lies more than ``_TIE_ZONE`` (:math:`2^{-30}`) from the bar, far beyond its
    rounding; within that zone the exact sum decides, so the verdict never depends on the
    order of the tasks, and a mean exactly at the bar meets it.

    Parameters
    ----------
    values : array_like of float
        The tasks' values along the last axis (one suite per row of a 2-D array). NaN (a
        task whose value is not estimable) makes its row's answer False.
    bar : float or Fraction
        Read by :func:`bar_fraction`: 0.7 is 7/10.
    successes, totals, k : array_like of int, optional
        When given (broadcast to ``values``), the values are the pass^k estimates
        :math:`\binom{c}{k}/\binom{n}{k}` of these counts and are summed as exact fractions;
        otherwise the exact sum is of the floats as given (e.g. exact lower bounds).

    Returns
    -------
    bool or numpy.ndarray of bool
        One answer per suite: a bool for 1-D ``values``.

    Notes
    -----
    Pass when :math:`\sum_{t=1}^{T} v_t \ge T \cdot \text{bar}` exactly, with :math:`v_t =
    \binom{c_t}{k_t}/\binom{n_t}{k_t}` a rational and the bar the decimal it was written as.
    Equal values are summed once (``numpy.unique``), so the exact check costs no more than
    the distinct (c, n, k) of a suite, even for :math:`10^6` tasks.

    Examples
    --------
    The issue's suite: 8, 7 and 6 of 10 at k = 1 have mean exactly 0.7, in any order.

    >>> [mean_reaches(np.array(c) / 10, 0.7, successes=c, totals=10, k=1)
    ...  for c in ([8, 7, 6], [6, 7, 8])]
    [True, True]
    >>> float(np.mean(np.array([6, 7, 8]) / 10)) < 0.7  # the float mean alone says no
    True
    >>> mean_reaches([[0.7, 0.71], [0.6, 0.7]], 0.7).tolist()
    [True, False]
    """
    v = np.asarray(values, dtype=float)
    one = v.ndim <= 1
    v = np.atleast_1d(v)
    tasks = v.shape[-1]
    if tasks == 0:
        return False if one else np.zeros(v.shape[:-1], dtype=bool)
    exact_bar = bar_fraction(bar)
    target = float(exact_bar)
    zone = _TIE_ZONE * max(1.0, tasks / 2.0**20)
    with np.errstate(invalid="ignore"):
        mean = np.sum(v, axis=-1) / tasks
        out = np.asarray(mean > target + zone)
        near = np.flatnonzero(np.abs(mean - target) <= zone)
    if near.size:
        counts = None
        if successes is not None:
            if totals is None or k is None:
                raise BadInput("successes need their totals and k")
            counts = tuple(np.broadcast_to(np.asarray(x, dtype=np.int64), v.shape)
                           .reshape(-1, tasks) for x in (successes, totals, k))
        flat_v, flat_out = v.reshape(-1, tasks), out.reshape(-1)
        for row in near.tolist():
            exact = _exact_sum(flat_v[row], None if counts is None else
                               (counts[0][row], counts[1][row], counts[2][row]))
            flat_out[row] = exact >= exact_bar * tasks
        out = flat_out.reshape(out.shape)
    return bool(out) if one else out


def flaky_band(cap: float) -> tuple[float, float]:
    r"""The success rates a flakiness cap calls flaky: the open band :math:`4p(1-p) > \text{cap}`.

    Returns
    -------
    (low, high) : tuple of float
        :math:`\tfrac12(1 \mp \sqrt{1 - \text{cap}})`; empty (``low == high``)
        when cap >= 1.

    Examples
    --------
    >>> [round(x, 4) for x in flaky_band(0.2)]
    [0.0528, 0.9472]
    """
    root = math.sqrt(max(1.0 - float(cap), 0.0))
    return (1.0 - root) / 2.0, (1.0 + root) / 2.0


def _steady(c: np.ndarray, n: np.ndarray, cap: float, confidence: float) -> np.ndarray:
    """Proved steady: the exact one-sided bounds on p lie outside the flaky band."""
    from scipy.special import betaincinv
    low, high = flaky_band(cap)
    c_, n_ = c.astype(float), n.astype(float)
    with np.errstate(invalid="ignore"):
        upper = np.where(c < n, betaincinv(c_ + 1.0, np.maximum(n_ - c_, 1.0), confidence),
                         1.0)
        lower = np.where(c > 0, betaincinv(np.maximum(c_, 1.0), n_ - c_ + 1.0,
                                           1.0 - confidence), 0.0)
    return np.asarray((n > 0) & ((upper <= low) | (lower >= high)))


def _task_ok(c: np.ndarray, n: np.ndarray, criteria: GateCriteria) -> np.ndarray:
    """Does each task's own check (flakiness) let the gate pass, in the criteria's mode?"""
    if criteria.mode == "proved":
        return _steady(c, n, criteria.max_flakiness, criteria.confidence)
    if criteria.mode == "proved-warn":
        return np.ones(c.shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        f = np.asarray(flakiness(c, n), dtype=float)
    return np.asarray(~(f > criteria.max_flakiness))


def _flagged(c: np.ndarray, n: np.ndarray, cap: float) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.asarray(np.asarray(flakiness(c, n), dtype=float) > cap)


def steady_false_pass(runs: int, cap: float, confidence: float = 0.95) -> float:
    """Worst case over truly flaky tasks of P(proved steady) from ``runs`` runs: the
    ``'proved'`` mode's false pass on one task, computed over the band's rates.

    Examples
    --------
    >>> steady_false_pass(12, 0.2)
    0.0
    >>> round(steady_false_pass(56, 0.2), 4)
    0.048
    """
    from scipy import stats
    c = np.arange(runs + 1)
    ok = _steady(c, np.full(c.shape, runs), cap, confidence)
    return _band_sup(ok, runs, cap, stats)


def warning_miss_rate(runs: int, cap: float) -> float:
    r"""Worst case over truly flaky tasks of P(no warning) from ``runs`` runs: how often the
    point rule :math:`4\hat p(1-\hat p) > \text{cap}` misses a task in the flaky band.

    The supremum over the open band is approached at its ends; it is computed on
    the ends and a fine grid between.

    Examples
    --------
    >>> round(warning_miss_rate(12, 0.2), 3)  # a task at p = 0.947 passes 12 of 12 that often
    0.522
    """
    from scipy import stats
    c = np.arange(runs + 1)
    quiet = ~_flagged(c, np.full(c.shape, runs), cap)
    return _band_sup(quiet, runs, cap, stats)


def _band_sup(mask: np.ndarray, runs: int, cap: float, stats: Any) -> float:
    low, high = flaky_band(cap)
    if high <= low:
        return 0.0
    p = np.concatenate([[low, high], np.linspace(low, high, 4001)])
    probs = stats.binom.pmf(np.arange(runs + 1)[None, :], runs, p[:, None]) @ mask
    return float(np.max(probs))


def flakiness_note(criteria: GateCriteria, runs: int) -> str:
    """What the mode does with flakiness, and the error it leaves, in one sentence.

    Examples
    --------
    >>> print(flakiness_note(GateCriteria(mode="proved-warn"), 12))
    flakiness over the cap 0.2 is a warning, not a block: from 12 runs it misses a truly flaky task (4p(1-p) > 0.2) up to 52% of the time
    >>> print(flakiness_note(GateCriteria(mode="proved"), 12))
    a task passes only when its exact 95% bounds prove it steady: a truly flaky task passes at most 0% of the time from 12 runs (56 runs, all passing or all failing, prove a task steady)
    """  # noqa: E501  # a doctest's output line cannot wrap
    cap = criteria.max_flakiness
    if criteria.mode == "proved-warn":
        return (f"flakiness over the cap {cap:g} is a warning, not a block: from {runs} runs "
                f"it misses a truly flaky task (4p(1-p) > {cap:g}) up to "
                f"{warning_miss_rate(runs, cap):.0%} of the time")
    if criteria.mode == "proved":
        need = runs_to_prove_steady(cap, criteria.confidence) if cap > 0 else None
        return (f"a task passes only when its exact {criteria.confidence:.0%} bounds prove it "
                f"steady: a truly flaky task passes at most "
                f"{steady_false_pass(runs, cap, criteria.confidence):.0%} of the time from "
                f"{runs} runs" + (f" ({need} runs, all passing or all failing, prove a task "
                                  "steady)" if need else ""))
    return (f"a task over the cap {cap:g} blocks (4p(1-p) from its runs): from {runs} runs a "
            f"truly flaky task escapes up to {warning_miss_rate(runs, cap):.0%} of the time, "
            "and one failure in a good task can block")


def runs_to_prove_steady(cap: float, confidence: float = 0.95) -> int:
    r"""Fewest runs, all passing, that prove a task steady: :math:`\lceil \ln\alpha /
    \ln p_{\text{high}} \rceil`, :math:`p_{\text{high}}` the flaky band's top.

    Examples
    --------
    >>> runs_to_prove_steady(0.2, 0.95)
    56
    """
    _, high = flaky_band(cap)
    if high >= 1.0:
        raise BadInput(f"cap ({cap!r}) is 0: no run count proves a task steady")
    n = math.ceil(math.log(1.0 - confidence) / math.log(high))
    while n > 1 and (1.0 - confidence) ** (1.0 / (n - 1)) >= high:  # exact at the edge
        n -= 1
    return n


@dataclass(frozen=True)
class GateDecision:
    """The verdict of one mode's decision rule on per-task counts (see :func:`gate_decision`).

    Attributes
    ----------
    passed : bool
    mode : str
    suite_value : float
        What is compared with the bar: the mean estimate or mean lower bound
        (``'chapter'``), the suite interval's lower end (the proved modes); NaN
        when a task has too few runs.
    suite_ok : bool
    short : tuple of int
        Tasks with fewer runs than their k or ``min_runs`` (or none).
    blocked : tuple of int
        Tasks whose flakiness check blocks (``'chapter'``: over the cap;
        ``'proved'``: not proved steady).
    warned : tuple of int
        ``'proved-warn'``: tasks over the cap, a warning only.
    """

    passed: bool
    mode: str
    suite_value: float
    suite_ok: bool
    short: tuple[int, ...]
    blocked: tuple[int, ...]
    warned: tuple[int, ...]


def _arrays(successes: npt.ArrayLike, totals: npt.ArrayLike, ks: npt.ArrayLike | None,
            k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    c = np.asarray(successes, dtype=np.int64).ravel()
    n = np.broadcast_to(np.asarray(totals, dtype=np.int64), c.shape).ravel()
    kk = np.broadcast_to(np.asarray(k if ks is None else ks, dtype=np.int64), c.shape).ravel()
    if np.any(c < 0) or np.any(c > n):
        raise BadInput("successes must lie between 0 and their totals")
    return c, n, kk


def _one_k(kk: np.ndarray) -> int:
    if np.unique(kk).size > 1:
        raise BadInput("the proved modes need one k for the suite; tasks have "
                         f"k = {sorted(set(kk.tolist()))}")
    return int(kk[0])


def _proved_low(c: np.ndarray, n: np.ndarray, k: int, confidence: float) -> float:
    from passk.stats.suite_interval import mean_pass_hat_k_ci
    return float(mean_pass_hat_k_ci(c, n, k, confidence=2.0 * confidence - 1.0).ci.low)


def gate_decision(successes: npt.ArrayLike, totals: npt.ArrayLike, criteria: GateCriteria,
                  *, ks: npt.ArrayLike | None = None) -> GateDecision:
    r"""The gate's decision in the criteria's mode, from per-task counts: one pure function.

    Parameters
    ----------
    successes, totals : array_like of int
        Per-task passed runs and runs.
    criteria : GateCriteria
        Bar, cap, ``on``, confidence, ``min_runs`` and ``mode``.
    ks : array_like of int, optional
        Each task's k (default ``criteria.k``); the proved modes need one k.

    Returns
    -------
    GateDecision

    Notes
    -----
    It fails closed: a task with no runs, fewer than its k or fewer than
    ``min_runs`` blocks. Then, per mode (module docstring): ``'chapter'``
    passes when :math:`\frac1T\sum_i v_i \ge` bar exactly (:func:`mean_reaches`: a mean
    equal to the bar meets it, in any order of the tasks), :math:`v_i` the unbiased
    :math:`\binom{c_i}{k}/\binom{n_i}{k}` (or the exact lower bound), and every
    :math:`4\hat p_i(1-\hat p_i) \le` cap; ``'proved'`` when the suite
    interval's lower end at one-sided confidence c is at least the bar and every
    task's exact bounds at c prove it steady; ``'proved-warn'`` on the suite's
    bound alone. The proved modes ignore ``on``: their suite statistic is the
    suite interval's lower end, already a bound.

    Examples
    --------
    >>> c = [12] * 25 + [11] + [0] * 4  # one failure in 12 runs on one good task
    >>> gate_decision(c, 12, GateCriteria()).passed  # flakiness 0.31 > 0.2
    False
    >>> d = gate_decision(c, 12, GateCriteria(mode="proved-warn"))
    >>> d.passed, d.suite_value >= 0.7, d.warned  # the proved lower end clears the bar
    (True, True, (25,))
    """
    if criteria.mode not in GATE_MODES:
        raise BadInput(f"mode ({criteria.mode!r}) must be one of {', '.join(GATE_MODES)}")
    c, n, kk = _arrays(successes, totals, ks, criteria.k)
    short = tuple(int(i) for i in np.flatnonzero((n < np.maximum(kk, criteria.min_runs))
                                                 | (n == 0)))
    value, suite_ok = math.nan, False
    bar = criteria.min_overall_pass_hat_k
    if c.size and not short:
        if criteria.mode == "chapter":
            on_bound = criteria.on == "lower-bound"
            v = np.asarray(pass_hat_k_lower_bound(c, n, kk, confidence=criteria.confidence)
                           if on_bound else estimate_pass_hat_k(c, n, kk), dtype=float)
            value = math.fsum(v.tolist()) / v.size
            suite_ok = (mean_reaches(v, bar) if on_bound else
                        mean_reaches(v, bar, successes=c, totals=n, k=kk))
        else:
            value = _proved_low(c, n, _one_k(kk), criteria.confidence)
            suite_ok = mean_reaches([value], bar)
    runs = n > 0
    blocked = tuple(int(i) for i in np.flatnonzero(runs & ~_task_ok(c, n, criteria)))
    warned = (tuple(int(i) for i in np.flatnonzero(runs & _flagged(c, n, criteria.max_flakiness)))
              if criteria.mode == "proved-warn" else ())
    passed = bool(c.size) and not short and suite_ok and not blocked
    return GateDecision(passed, criteria.mode, value, suite_ok, short, blocked, warned)


@dataclass(frozen=True)
class OperatingCharacteristic:
    """P(the gate passes) for one design and population (see :func:`operating_characteristic`).

    Attributes
    ----------
    probability : float
        P(pass); with ``method='bracket'`` the midpoint of [low, high].
    low, high : float
        Equal to ``probability`` when exact (the sum computed on its own lattice);
        proved bounds on P(pass) for a bracket (the values rounded down and up to a
        grid); ±2 s.e. by Monte Carlo.
    standard_error : float
        Monte Carlo's (0 otherwise).
    method : {'exact', 'bracket', 'monte carlo'}
    mode : str
    replicates : int
        Monte Carlo's simulated reruns (0 when exact).
    """

    probability: float
    low: float
    high: float
    standard_error: float
    method: str
    mode: str
    replicates: int = 0

    def describe(self) -> str:
        """One phrase, e.g. ``'P(pass) 0.207 (exact)'``; a bracket gives both its ends.

        Examples
        --------
        >>> OperatingCharacteristic(0.5, 0.45, 0.55, 0.0, "bracket", "chapter").describe()
        'P(pass) between 0.450 and 0.550 (bracket: the values rounded down and up to a grid)'
        """
        if self.method == "bracket":
            return (f"P(pass) between {self.low:.3f} and {self.high:.3f} (bracket: the values "
                    "rounded down and up to a grid)")
        how = "exact" if self.method == "exact" else \
            f"Monte Carlo, s.e. {self.standard_error:.3f}, {self.replicates} reruns"
        return f"P(pass) {self.probability:.3f} ({how})"


def _power(law: np.ndarray, times: int) -> np.ndarray:
    """The law of the sum of ``times`` independent copies of a lattice variable with law
    ``law``: one Fourier transform, raised to the power."""
    if times == 1 or law.size == 1:
        return law if times == 1 else np.array([float(law[0]) ** times])
    from scipy import fft
    span = (law.size - 1) * times + 1
    size = fft.next_fast_len(span, real=True)
    return np.asarray(fft.irfft(fft.rfft(law, size) ** times, size)[:span])


def _convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The law of the sum of two independent lattice variables: directly when one is short,
    by Fourier transforms of the length the sum needs otherwise."""
    if min(a.size, b.size) <= 64:
        return np.convolve(a, b)
    from scipy import fft
    span = a.size + b.size - 1
    size = fft.next_fast_len(span, real=True)
    return np.asarray(fft.irfft(fft.rfft(a, size) * fft.rfft(b, size), size)[:span])


def _sum_law(pmfs: list[np.ndarray], idx: list[np.ndarray], size: int) -> np.ndarray:
    """Law of the sum of independent lattice variables (index ``idx[i]`` with probability
    ``pmfs[i]``, sub-probabilities allowed), on 0..size.

    Tasks with the same law are one group, summed by one Fourier power; the groups' laws are
    then convolved two at a time, shortest first, each product on the length its sum spans
    (so T distinct tasks cost about log2(T) transforms of the whole span, not T)."""
    groups: dict[bytes, list[Any]] = {}
    for pmf, ix in zip(pmfs, idx, strict=True):
        key = pmf.tobytes() + ix.tobytes()
        if key in groups:
            groups[key][2] += 1
            continue
        live = pmf > 0
        if not live.any():
            return np.zeros(size + 1)
        low = int(ix[live].min())
        groups[key] = [np.bincount(ix[live] - low, weights=pmf[live]), low, 1]
    offset = sum(low * count for _, low, count in groups.values())
    heap = [(law.size, i, law) for i, law in
            enumerate(_power(law, count) for law, _, count in groups.values())]
    heapq.heapify(heap)
    order = len(heap)
    while len(heap) > 1:
        _, _, a = heapq.heappop(heap)
        _, _, b = heapq.heappop(heap)
        ab = _convolve(a, b)
        heapq.heappush(heap, (ab.size, order, ab))
        order += 1
    law = heap[0][2][: size + 1 - offset]
    out = np.zeros(size + 1)
    out[offset:offset + law.size] = law
    return np.asarray(np.clip(out, 0.0, None))


def _witness(values: np.ndarray, tasks: int, target: float) -> np.ndarray:
    """Counts for ``tasks`` tasks whose values (``values[c]``, non-decreasing) sum to at most
    ``target`` and as near it as a greedy fill gets."""
    out = np.zeros(tasks, dtype=np.int64)
    left = target
    for j in range(tasks):
        c = int(np.searchsorted(values, left + 1e-15, side="right")) - 1
        c = max(c, 0)
        out[j] = c
        left -= values[c]
    return out


def _threshold(values: np.ndarray, tasks: int, n: int, k: int, criteria: GateCriteria
               ) -> tuple[float, float]:
    """(x_lo, x_hi): means of two count vectors, the proved lower end below the bar at
    x_lo and at least the bar at x_hi, as close as bisection on witnesses gets."""
    bar = criteria.min_overall_pass_hat_k
    key = (tasks, n, k, bar, criteria.confidence)
    if key in _THRESHOLDS:
        return _THRESHOLDS[key]

    def ok(x: float) -> tuple[bool, float]:
        c = _witness(values, tasks, x * tasks)
        mean = float(values[c].mean())
        return _proved_low(c, np.full(tasks, n), k, criteria.confidence) >= bar, mean
    top_ok, top = ok(1.0)
    bottom_ok, bottom = ok(0.0)
    if not top_ok or bottom_ok:
        found = (math.inf, math.inf) if not top_ok else (-math.inf, bottom)
        _THRESHOLDS[key] = found
        return found
    lo, hi = bottom, top
    for _ in range(60):
        if hi - lo < 1e-12:
            break
        passed, mean = ok((lo + hi) / 2)
        if passed:
            if mean >= hi:
                break
            hi = mean
        else:
            if mean <= lo:
                break
            lo = mean
    _THRESHOLDS[key] = (lo, hi)
    return lo, hi


def _refine(law: np.ndarray, s: np.ndarray, steps: np.ndarray, tasks: int, n: int, k: int,
            criteria: GateCriteria, x_lo: float, x_hi: float) -> tuple[float, float]:
    """Bisection over the lattice's atoms of positive probability strictly between x_lo and
    x_hi, each decided on an exact count vector with that sum (found by a reachability table)."""
    size = law.size
    reach = [np.zeros(size, dtype=bool)]
    reach[0][0] = True
    for _ in range(tasks):
        nxt = np.zeros(size, dtype=bool)
        for step in np.unique(steps):
            nxt[step:] |= reach[-1][: size - step]
        reach.append(nxt)
    inside = np.flatnonzero(reach[-1] & (law > 1e-300) & (s > x_lo + 1e-12)
                            & (s < x_hi - 1e-12))
    if inside.size == 0:
        return x_lo, x_hi

    def counts_for(total: int) -> np.ndarray:
        out = np.zeros(tasks, dtype=np.int64)
        for j in range(tasks, 0, -1):
            c = next(int(c) for c, step in enumerate(steps)
                     if step <= total and reach[j - 1][total - step])
            out[j - 1], total = c, total - int(steps[c])
        return out
    lo, hi = 0, inside.size - 1
    bar = criteria.min_overall_pass_hat_k
    while lo <= hi:
        mid = (lo + hi) // 2
        atom = int(inside[mid])
        if _proved_low(counts_for(atom), np.full(tasks, n), k, criteria.confidence) >= bar:
            x_hi, hi = float(s[atom]), mid - 1
        else:
            x_lo, lo = float(s[atom]), mid + 1
    return x_lo, x_hi


def lowered_rates(rates: npt.ArrayLike, k: int, target: float) -> np.ndarray:
    """The rates with every logit moved alike until their mean p^k is ``target``: a
    population shaped like ``rates`` at a chosen mean pass^k (e.g. the bar).

    Examples
    --------
    >>> r = lowered_rates([0.995] * 26 + [0.0] * 4, 5, 0.7)
    >>> round(float(np.mean(r ** 5)), 6), round(float(r[0]), 4)
    (0.7, 0.9582)
    """
    from scipy import optimize, special
    p = np.clip(np.asarray(rates, dtype=float), 0.0, 1.0)
    if not 0 <= target <= 1:
        raise BadInput(f"target ({target!r}) must lie in [0, 1]")
    logit = special.logit(np.clip(p, 1e-12, 1 - 1e-12))

    def gap(shift: float) -> float:
        q = np.where(p == 0, 0.0, special.expit(logit + shift))
        return float(np.mean(q**k)) - target
    if gap(-60.0) > 0 or gap(60.0) < 0:
        raise BadInput(f"no shift of these rates gives mean pass^{k} {target}")
    shift = optimize.brentq(gap, -60.0, 60.0, xtol=1e-13)
    return np.asarray(np.where(p == 0, 0.0, special.expit(logit + shift)))


def population(rates: npt.ArrayLike | None, pilot: tuple[npt.ArrayLike, npt.ArrayLike] | None
               ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray] | None]:
    """The tasks' pass rates a gate meets, from ``rates`` or a pilot's counts (one of them).

    From a pilot ``(successes, totals)`` each task's rate is drawn from its Jeffreys
    posterior Beta(c + 1/2, n − c + 1/2), returned as ``beta`` with its mean as the rate.

    Raises
    ------
    BadInput
        Both or neither given, a pilot's successes outside [0, totals], no task, or a
        rate outside [0, 1].

    Examples
    --------
    >>> p, beta = population(None, ([3, 5], [5, 5]))
    >>> p.round(3).tolist(), beta[0].tolist()
    ([0.583, 0.917], [3.5, 5.5])
    """
    beta: tuple[np.ndarray, np.ndarray] | None = None
    if pilot is not None:
        if rates is not None:
            raise BadInput("give rates or a pilot, not both")
        pc = np.asarray(pilot[0], dtype=float).ravel()
        pm = np.broadcast_to(np.asarray(pilot[1], dtype=float), pc.shape).ravel()
        if np.any(pc < 0) or np.any(pc > pm):
            raise BadInput("pilot: successes must lie between 0 and their totals")
        beta = (pc + 0.5, pm - pc + 0.5)
        rates = beta[0] / (beta[0] + beta[1])
    if rates is None:
        raise BadInput("rates (or a pilot) are needed: the population the gate meets")
    p = np.asarray(rates, dtype=float).ravel()
    if p.size == 0:
        raise BadInput("rates: a suite needs at least one task")
    if np.any(~((p >= 0) & (p <= 1))):
        raise BadInput(f"rates must lie in [0, 1]; got {p[~((p >= 0) & (p <= 1))][0]!r}")
    return p, beta


def operating_characteristic(criteria: GateCriteria, runs: npt.ArrayLike,
                             rates: npt.ArrayLike | None = None, *,
                             pilot: tuple[npt.ArrayLike, npt.ArrayLike] | None = None,
                             ks: npt.ArrayLike | None = None, method: str = "auto",
                             replicates: int = 4000,
                             rng: int | np.random.Generator | None = None,
                             budget: int | None = None) -> OperatingCharacteristic:
    r"""Probability that the gate passes a rerun of a suite: its operating characteristic.

    Parameters
    ----------
    criteria : GateCriteria
        The gate (bar, cap, ``on``, k, confidence, ``min_runs``, ``mode``).
    runs : int or array_like of int
        The design: runs per task (per tier: each task its tier's), broadcast to ``rates``.
    rates : array_like of float
        The population: each task's true single-run success rate (observed
        tasks' :math:`\hat p`, a pilot's, or quantiles of an assumed spread).
    pilot : (successes, totals), optional
        Instead of ``rates``: observed counts per task; each task's rate is then
        uncertain, drawn from its Jeffreys posterior Beta(c + 1/2, m - c + 1/2),
        so a rerun's counts are beta-binomial: P(pass) is the predictive
        probability that a rerun of tasks like these passes (12 of 12 is not
        taken for p = 1).
    ks : array_like of int, optional
        Each task's k (default ``criteria.k``).
    method : {'auto', 'exact', 'monte carlo'}
        ``'auto'``: exact where the decision is a function of a sum of
        independent per-task values, Monte Carlo otherwise.
    replicates : int, default 4000
        Simulated reruns for Monte Carlo.
    rng : int, numpy.random.Generator or None
        Seed for Monte Carlo.
    budget : int, optional
        None (the default): exact on the estimates' lattice up to ``_GRID`` steps, a
        bracket beyond, Monte Carlo where no sum decides. An int (the planner's, issue 41):
        exact only where the lattice spans at most ``budget`` steps (a bracket where its
        grid at full resolution does); everywhere else a Monte Carlo of ``replicates``
        reruns drawn from each task's exact law, vectorized (:func:`_sampled`).

    Returns
    -------
    OperatingCharacteristic

    Notes
    -----
    **Exact.** The tasks' counts :math:`c_i \sim \mathrm{Bin}(n_i, p_i)` are
    independent, and every mode's decision is: each task's count in a set
    :math:`A_i` (its flakiness check) AND a statistic :math:`S = \sum_i
    v_i(c_i)` past a threshold. So

    .. math:: P(\text{pass}) = P\Bigl(\sum_i v_i(c_i) \ge t,\ c_i \in A_i\ \forall i\Bigr)
              = \sum_{s \ge t} \bigl(\ast_i\, q_i\bigr)(s),
              \qquad q_i(s) = \sum_{c \in A_i:\ v_i(c) = s} \binom{n_i}{c} p_i^c (1-p_i)^{n_i-c},

    the convolution of each task's law restricted to :math:`A_i` (computed as
    the groups' laws convolved shortest first by Fourier transforms). For
    ``on='estimate'`` and the proved modes :math:`v_i = \binom{c_i}{k}/\binom{n_i}{k}`,
    a lattice with step :math:`1/L`, :math:`L = \operatorname{lcm}_i \binom{n_i}{k}`,
    used as is when :math:`T L` is at most ``_GRID`` (:math:`2^{22}`): then the threshold is
    the integer :math:`\lceil \text{bar}\cdot L T\rceil`, the judge's exact rule
    (:func:`mean_reaches`, the bar the decimal written), and ``method='exact'``: P(pass) up
    to floating-point rounding of the sum (below :math:`10^{-12}`), no grid in it.
    Otherwise (and for the lower bounds) each value is rounded down and up, exactly, to a
    grid, which bounds P(pass) from below and above: ``method='bracket'``, ``low`` and
    ``high`` its ends (:meth:`OperatingCharacteristic.describe` shows both). In the proved
    modes the threshold is the suite
    interval's: its lower end depends on the counts through their mean for one
    n and one k with :math:`n \ge 2k` (checked on samples of the population;
    where it does not hold, Monte Carlo), and is found by bisection on count
    vectors with that mean.

    **Monte Carlo.** Otherwise ``replicates`` reruns are drawn and decided by
    :func:`gate_decision`; the standard error is :math:`\sqrt{P(1-P)/R}`.

    Examples
    --------
    The issue's good suite, 26 tasks at p = 0.995 and 4 at 0 (true mean
    pass^5 0.845), 12 runs a task, the chapter's gate: blocked 79 % of reruns (all 26 must pass 12
    of 12).

    >>> rates = [0.995] * 26 + [0.0] * 4
    >>> oc = operating_characteristic(GateCriteria(), 12, rates)
    >>> round(oc.probability, 4), oc.method
    (0.2093, 'exact')
    >>> round(operating_characteristic(GateCriteria(mode="proved-warn"), 12, rates).probability, 3)
    0.928
    """
    if method not in ("auto", "exact", "monte carlo"):
        raise BadInput(f"method ({method!r}) must be one of auto, exact, monte carlo")
    p, beta = population(rates, pilot)
    n = np.broadcast_to(np.asarray(runs, dtype=np.int64), p.shape).ravel()
    kk = np.broadcast_to(np.asarray(criteria.k if ks is None else ks, dtype=np.int64),
                         p.shape).ravel()
    if np.any(n < 0):
        raise BadInput("runs must be whole numbers >= 0")
    if np.any((n < np.maximum(kk, criteria.min_runs)) | (n == 0)):
        return OperatingCharacteristic(0.0, 0.0, 0.0, 0.0, "exact", criteria.mode)
    if method != "monte carlo":
        exact = _exact(criteria, n, kk, p, beta, rng, grid=budget)
        if exact is not None:
            return exact
        if method == "exact":
            raise BadInput("this design has no exact operating characteristic here (the "
                             "proved modes need one n and one k with n >= 2k)")
    if budget is not None and np.unique(n).size == 1 and np.unique(kk).size == 1:
        return _sampled(criteria, int(n[0]), int(kk[0]), p, beta, replicates, rng)
    return _monte_carlo(criteria, n, kk, p, beta, replicates, rng)


def _steps(values: np.ndarray, nn: int, k: int, scale: int, lattice: bool, on_bound: bool
           ) -> tuple[np.ndarray, np.ndarray]:
    """Each count's value in steps of 1/scale, rounded down and up exactly (Fractions: the
    estimate C(c, k)/C(n, k), or the lower bound's float); equal on a lattice."""
    if lattice:
        ix = np.array([math.comb(c, k) * (scale // math.comb(nn, k)) for c in range(nn + 1)],
                      dtype=np.int64)
        return ix, ix
    exact = ([Fraction(float(v)) for v in values] if on_bound else
             [Fraction(math.comb(c, k), math.comb(nn, k)) for c in range(nn + 1)])
    return (np.array([math.floor(x * scale) for x in exact], dtype=np.int64),
            np.array([math.ceil(x * scale) for x in exact], dtype=np.int64))


def _exact(criteria: GateCriteria, n: np.ndarray, kk: np.ndarray, p: np.ndarray,
           beta: tuple[np.ndarray, np.ndarray] | None, rng: int | np.random.Generator | None,
           *, grid: int | None = None) -> OperatingCharacteristic | None:
    """P(pass) by the law of the suite's sum (module Notes), or None where it has none here.

    ``grid``: None, the lattice up to ``_GRID`` steps and a bracket beyond; an int, the
    lattice up to that many steps, a bracket where ``_BRACKET_STEPS`` a task fit it, and
    None beyond."""
    from scipy import stats
    tasks = p.size
    proved = criteria.mode != "chapter"
    if proved and (np.unique(n).size > 1 or np.unique(kk).size > 1 or n[0] < 2 * kk[0]):
        return None
    on_bound = criteria.on == "lower-bound" and not proved
    designs = sorted({(int(a), int(b)) for a, b in zip(n, kk, strict=True)})
    values = {}
    for nn, k in designs:
        c = np.arange(nn + 1)
        values[(nn, k)] = np.asarray(
            pass_hat_k_lower_bound(c, nn, k, confidence=criteria.confidence) if on_bound
            else estimate_pass_hat_k(c, nn, k), dtype=float)
    lattice = 0
    if not on_bound:  # the estimates' own lattice: exact when the sum's span fits the grid
        lattice = 1
        for nn, k in designs:
            lattice = math.lcm(lattice, math.comb(nn, k))
            if lattice * tasks > (_GRID if grid is None else grid):
                lattice = 0
                break
    if grid is not None and not lattice and tasks * _BRACKET_STEPS > grid:
        return None  # a bracket at full resolution would not fit the budget either
    scale = lattice or max(min((_GRID if grid is None else grid) // tasks, _BRACKET_STEPS), 1)
    steps = {d: _steps(values[d], *d, scale, bool(lattice), on_bound) for d in designs}
    pmfs, lows, highs = [], [], []
    for i in range(tasks):
        nn, k = int(n[i]), int(kk[i])
        c = np.arange(nn + 1)
        law = (stats.binom.pmf(c, nn, p[i]) if beta is None
               else stats.betabinom.pmf(c, nn, beta[0][i], beta[1][i]))
        pmfs.append(np.asarray(law * _task_ok(c, np.full(c.shape, nn), criteria), dtype=float))
        lows.append(steps[(nn, k)][0])
        highs.append(steps[(nn, k)][1])
    law_low = _sum_law(pmfs, lows, tasks * scale)
    law_high = law_low if lattice else _sum_law(pmfs, highs, tasks * scale)
    if proved:
        s = np.arange(tasks * scale + 1) / (scale * tasks)  # the mean at each lattice point
        nn, k = designs[0]
        x_lo, x_hi = _threshold(values[(nn, k)], tasks, nn, k, criteria)
        if lattice:  # the atoms left between the two, each decided on a count vector of its own
            x_lo, x_hi = _refine(law_low, s, lows[0], tasks, nn, k, criteria, x_lo, x_hi)
        if not _threshold_holds(criteria, n, kk, p, beta, values[(nn, k)], x_lo, x_hi, rng):
            return None
        low = float(law_low[s >= x_hi - 1e-12].sum())
        high = float(law_high[s > x_lo + 1e-12].sum())
    else:  # the judge's rule (mean_reaches) on the lattice: sum of steps >= bar * scale * T
        need = math.ceil(bar_fraction(criteria.min_overall_pass_hat_k) * scale * tasks)
        low, high = float(law_low[need:].sum()), float(law_high[need:].sum())
    low, high = min(max(low, 0.0), 1.0), min(max(high, 0.0), 1.0)
    low, high = min(low, high), max(low, high)  # two sums' rounding may cross a closed bracket
    return OperatingCharacteristic((low + high) / 2, low, high, 0.0,
                                   "exact" if lattice else "bracket", criteria.mode)


def _threshold_holds(criteria: GateCriteria, n: np.ndarray, kk: np.ndarray, p: np.ndarray,
                     beta: tuple[np.ndarray, np.ndarray] | None,
                     values: np.ndarray, x_lo: float, x_hi: float,
                     rng: int | np.random.Generator | None) -> bool:
    """Does the proved lower end pass exactly where the mean reaches the threshold, on
    samples of this population (the exact path's premise)?"""
    gen = np.random.default_rng(rng)
    for _ in range(_CHECKS):
        c = gen.binomial(n, p if beta is None else gen.beta(*beta))
        mean = float(values[c].mean())
        if x_lo < mean < x_hi:
            continue
        said = _proved_low(c, n, int(kk[0]), criteria.confidence) >= \
            criteria.min_overall_pass_hat_k
        if said != (mean >= x_hi):
            return False
    return True


def _monte_carlo(criteria: GateCriteria, n: np.ndarray, kk: np.ndarray, p: np.ndarray,
                 beta: tuple[np.ndarray, np.ndarray] | None,
                 replicates: int, rng: int | np.random.Generator | None
                 ) -> OperatingCharacteristic:
    gen = np.random.default_rng(rng)
    shape = (replicates, p.size)
    drawn = p[None, :] if beta is None else gen.beta(beta[0], beta[1], size=shape)
    draws = gen.binomial(n[None, :], drawn, size=shape)
    if criteria.mode == "chapter":
        ok = _task_ok(draws, np.broadcast_to(n, draws.shape), criteria).all(axis=1)
        v = (pass_hat_k_lower_bound(draws, n[None, :], kk[None, :],
                                    confidence=criteria.confidence)
             if criteria.on == "lower-bound" else estimate_pass_hat_k(draws, n[None, :],
                                                                      kk[None, :]))
        counts = ({} if criteria.on == "lower-bound" else
                  {"successes": draws, "totals": n[None, :], "k": kk[None, :]})
        passed = ok & mean_reaches(v, criteria.min_overall_pass_hat_k, **counts)
    else:
        passed = np.array([gate_decision(row, n, criteria, ks=kk).passed for row in draws])
    prob = float(np.mean(passed))
    se = math.sqrt(prob * (1 - prob) / replicates)
    return OperatingCharacteristic(prob, max(prob - 2 * se, 0.0), min(prob + 2 * se, 1.0), se,
                                   "monte carlo", criteria.mode, replicates)


def _task_laws(n: int, p: np.ndarray, beta: tuple[np.ndarray, np.ndarray] | None
               ) -> tuple[np.ndarray, np.ndarray]:
    """Each distinct task's law of its count out of n (binomial, or beta-binomial from a
    pilot), rows of ``laws``, and how many tasks have it."""
    from scipy import stats

    c = np.arange(n + 1)
    keys = p[:, None] if beta is None else np.stack([beta[0], beta[1]], axis=1)
    distinct, times = np.unique(keys, axis=0, return_counts=True)
    laws = (stats.binom.pmf(c[None, :], n, distinct[:, :1]) if beta is None else
            stats.betabinom.pmf(c[None, :], n, distinct[:, :1], distinct[:, 1:2]))
    return np.asarray(laws, dtype=float), times


def _sampled(criteria: GateCriteria, n: int, k: int, p: np.ndarray,
             beta: tuple[np.ndarray, np.ndarray] | None, replicates: int,
             rng: int | np.random.Generator | None) -> OperatingCharacteristic:
    r"""P(pass) for one n and one k: the tasks' own checks exactly, the suite's by Monte Carlo.

    Every task's check (its flakiness, in the mode) is a set of counts, and the tasks are
    independent, so :math:`P(\text{pass}) = \prod_i Z_i \cdot P(\text{suite passes} \mid
    \text{every } c_i \text{ passes its check})` with :math:`Z_i` the exact mass of task i's
    law on its set. The second factor is estimated from ``replicates`` reruns drawn from the
    tasks' laws restricted to their sets (by inversion, vectorized over reruns), each decided
    as the gate decides (:func:`gate_decision`): ``'chapter'`` by :func:`mean_reaches`; the
    proved modes by the proved suite interval's lower end, through the threshold on the mean
    (n >= 2k, as the exact path, its premise checked) or batched
    (:func:`passk.stats.suite_interval._hoeffding_suites`), any rerun whose lower end lies
    within :math:`10^{-9}` of the bar decided again by the public interval. The standard error
    is :math:`\prod_i Z_i \sqrt{q(1-q)/R}`. With some :math:`Z_i = 0` the gate never passes:
    0, exact.
    """
    tasks = p.size
    laws, times = _task_laws(n, p, beta)
    c = np.arange(n + 1)
    ok = _task_ok(c, np.full(c.shape, n), criteria)
    mass = (laws * ok).sum(axis=1)
    if np.any(mass <= 0):
        return OperatingCharacteristic(0.0, 0.0, 0.0, 0.0, "exact", criteria.mode)
    factor = float(np.exp(np.dot(times, np.log(mass))))
    gen = np.random.default_rng(rng)
    cdf = np.cumsum(laws * ok, axis=1) / mass[:, None]
    draws = np.empty((replicates, tasks), dtype=np.int64)
    at = 0
    for row, m in zip(cdf, times.tolist(), strict=True):  # by inversion, law by law
        u = gen.random((replicates, m))
        draws[:, at:at + m] = np.minimum(np.searchsorted(row, u, side="right"), n)
        at += m
    bar = criteria.min_overall_pass_hat_k
    if criteria.mode == "chapter":
        if criteria.on == "lower-bound":
            v = np.asarray(pass_hat_k_lower_bound(c, n, k, confidence=criteria.confidence),
                           dtype=float)
            passed = mean_reaches(v[draws], bar)
        else:
            v = np.asarray(estimate_pass_hat_k(c, n, k), dtype=float)
            passed = mean_reaches(v[draws], bar, successes=draws, totals=n, k=k)
    else:
        passed = _proved_passes(draws, n, k, criteria, p, beta, rng)
    q = float(np.mean(passed))
    prob = factor * q
    se = factor * math.sqrt(q * (1.0 - q) / replicates)
    return OperatingCharacteristic(prob, max(prob - 2 * se, 0.0), min(prob + 2 * se, 1.0), se,
                                   "monte carlo", criteria.mode, replicates)


def _proved_passes(draws: np.ndarray, n: int, k: int, criteria: GateCriteria, p: np.ndarray,
                   beta: tuple[np.ndarray, np.ndarray] | None,
                   rng: int | np.random.Generator | None) -> np.ndarray:
    """Does each rerun (a row of counts) clear the bar by the proved suite interval's lower end?"""
    from passk.stats.suite_interval import PRODUCT_MAX_TASKS, _hoeffding_suites

    tasks = draws.shape[1]
    bar = criteria.min_overall_pass_hat_k
    nn = np.full(tasks, n)
    values = np.asarray(estimate_pass_hat_k(np.arange(n + 1), n, k), dtype=float)
    passed = np.zeros(draws.shape[0], dtype=bool)
    again = np.ones(draws.shape[0], dtype=bool)
    if n >= 2 * k:  # the lower end is a function of the mean: the exact path's threshold
        x_lo, x_hi = _threshold(values, tasks, n, k, criteria)
        kk = np.full(tasks, k)
        if _threshold_holds(criteria, nn, kk, p, beta, values, x_lo, x_hi, rng):
            mean = values[draws].mean(axis=1)
            passed = mean >= x_hi
            again = (mean > x_lo) & (mean < x_hi)
    if again.all():  # no threshold: the lower end of every rerun that can pass, batched
        passed = np.zeros(draws.shape[0], dtype=bool)
        again = np.zeros(draws.shape[0], dtype=bool)
        # above PRODUCT_MAX_TASKS the lower end is at most the estimate (the bound accepts
        # theta = the mean; the union part is widened to hold it): a rerun whose mean is
        # below the bar fails
        can = (values[draws].mean(axis=1) >= bar - 1e-9 if tasks > PRODUCT_MAX_TASKS
               else np.ones(draws.shape[0], dtype=bool))
        if can.any():
            low, _ = _hoeffding_suites(draws[can], nn, k, 2.0 - 2.0 * criteria.confidence)
            passed[can] = low >= bar
            again[can] = np.abs(low - bar) <= 1e-9
    for row in np.flatnonzero(again).tolist():  # near the bar: the public interval decides
        passed[row] = bool(mean_reaches([_proved_low(draws[row], nn, k,
                                                     criteria.confidence)], bar))
    return passed


def rerun_pass_sentence(successes: npt.ArrayLike, totals: npt.ArrayLike,
                        criteria: GateCriteria, *, ks: npt.ArrayLike | None = None,
                        rng: int | np.random.Generator | None = 0) -> str:
    r"""One sentence for a report: how often this gate would pass a rerun of tasks like these.

    Two figures, the rerun with the same runs per task: each task at the rate
    its runs show (:math:`\hat p`, so 12 of 12 reads as p = 1), and each task's
    rate drawn from its Jeffreys posterior given its runs (the ``pilot`` of
    :func:`operating_characteristic`: what its runs leave open).

    Examples
    --------
    >>> print(rerun_pass_sentence([12] * 26 + [0] * 4, 12, GateCriteria(mode="proved-warn")))
    this gate would pass a rerun of tasks like these 100.0% of the time at the rates their runs show, 1.5% allowing for what their runs leave open (each rate its Jeffreys posterior; exact)
    """  # noqa: E501  # a doctest's output line cannot wrap
    c = np.asarray(successes, dtype=float)
    n = np.broadcast_to(np.asarray(totals, dtype=float), c.shape)
    shown = operating_characteristic(criteria, totals, c / np.maximum(n, 1), ks=ks, rng=rng)
    open_ = operating_characteristic(criteria, totals, pilot=(successes, totals), ks=ks,
                                     rng=rng)
    methods = {shown.method, open_.method}
    how = ("exact" if methods == {"exact"} else
           f"Monte Carlo, s.e. at most {max(shown.standard_error, open_.standard_error):.1%}"
           if "monte carlo" in methods else "a bracket: the values rounded down and up to a grid")

    def figure(oc: OperatingCharacteristic) -> str:
        return (f"between {oc.low:.1%} and {oc.high:.1%}" if oc.method == "bracket"
                else f"{oc.probability:.1%}")
    return (f"this gate would pass a rerun of tasks like these {figure(shown)} of the "
            f"time at the rates their runs show, {figure(open_)} allowing for what "
            f"their runs leave open (each rate its Jeffreys posterior; {how})")
