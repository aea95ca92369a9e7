r"""Is the new version more reliable? A suite-level paired comparison on pass^k.

Each task gives one number per version, its unbiased pass^k
:math:`\hat h = \binom{c}{k} / \binom{n}{k}`, and the comparison works on
the paired differences :math:`d_i = \hat h_{\text{new},i} - \hat h_{\text{old},i}`.
The task is the unit of sampling: the suite is a sample of tasks, and the
quantity compared is the mean pass^k over the population of tasks it stands
for. Each :math:`d_i` carries both the task's own change and the trial noise
of two small samples of runs, so the spread of the :math:`d_i` already holds
both levels of variance (Miller 2024, eq. for clustered means):

.. math::

    \operatorname{Var}(\bar d) = \frac{1}{T}\Big(\omega^2
        + \mathrm{E}\,V_n(p_{\text{old}}) + \mathrm{E}\,V_n(p_{\text{new}})\Big),

with :math:`\omega^2` the variance across tasks of the true change
:math:`p_{\text{new}}^k - p_{\text{old}}^k` and :math:`V_n(p)` the exact
variance of :math:`\hat h` from n runs (:func:`pass_hat_k_sampling_variance`).

Five ways of turning the :math:`d_i` into an interval and a p-value are
implemented (:func:`paired_difference_test`); the default, the paired t
interval, was chosen by the Monte Carlo study in ``benchmarks/bench_compare.py``
(:func:`simulate_comparison` runs it). The spread of the :math:`d_i` can be
0 by chance (two tasks, a suite where every run passes), so
:func:`compare_pass_hat_k` widens every method's interval to hold a floor
from each task's own binomial noise, evaluated under the hypothesis tested:
no comparison of finite runs has a zero-width interval or p = 0.
:func:`plan_comparison` predicts the power of the floored test for a grid of
tasks × runs per task.

References
----------
.. [1] E. Miller, "Adding Error Bars to Evals: A Statistical Approach to
   Language Model Evaluations", arXiv:2411.00640, 2024.
.. [2] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*,
   Chapman & Hall, 1993 (percentile, BCa and bootstrap-t intervals).
.. [3] S. Yao et al., "tau-bench", arXiv:2406.12045, 2024 (pass^k).
.. [4] W. Hoeffding, "A class of statistics with asymptotically normal
   distribution", Ann. Math. Statist. 19(3), 293-325, 1948 (Thm. 5.2:
   the variance of a U-statistic of degree k is at most k/n times its kernel's).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from passk.metrics import (
    ConfidenceInterval,
    _confidence,
    _counts,
    _whole_numbers,
    estimate_pass_hat_k,
)
from passk.render.tables import json_number

__all__ = [
    "FLOOR_LABEL",
    "METHODS",
    "METHOD_LABELS",
    "VERDICTS",
    "ComparisonPlan",
    "PairedComparison",
    "PairedTest",
    "TaskPopulation",
    "compare_pass_hat_k",
    "mean_of",
    "paired_difference_test",
    "pass_hat_k_sampling_variance",
    "plan_comparison",
    "simulate_comparison",
    "simulate_intervals",
    "simulate_suites",
    "task_population",
]

#: Interval methods, in the order of the study's table; the first is the default.
METHODS = ("t", "percentile", "bca", "studentized", "sign-flip")
#: Each method's printable name.
METHOD_LABELS = {"t": "paired t over tasks", "percentile": "percentile bootstrap over tasks",
                 "bca": "BCa bootstrap over tasks", "studentized": "bootstrap-t over tasks",
                 "sign-flip": "sign-flip permutation test over tasks"}
#: What every method's interval is widened to hold (see :func:`compare_pass_hat_k`).
FLOOR_LABEL = "floored by each task's binomial noise"
#: Verdicts without a margin, then with one.
VERDICTS = ("better", "worse", "inconclusive", "non-inferior")
#: Correlation across tasks of the true pass^k of two versions assumed by the plan.
DEFAULT_CORRELATION = 0.7


class PairedTest(NamedTuple):
    """Vectorized result of :func:`paired_difference_test` (arrays over the leading axes)."""

    mean: Any
    low: Any
    high: Any
    p_value: Any


# --------------------------------------------------------------------------
# the five interval methods, vectorized over replicates (leading axes)
# --------------------------------------------------------------------------


def _flat(d: np.ndarray) -> np.ndarray:
    return d.reshape(-1, d.shape[-1])


def _point(mean: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """Where every difference is the same: no spread to infer from."""
    return spread <= 1e-12 * np.maximum(1.0, np.abs(mean))


def _t(d: np.ndarray, alpha: float) -> PairedTest:
    from scipy import stats
    t_count = d.shape[-1]
    mean = d.mean(axis=-1)
    se = d.std(axis=-1, ddof=1) / math.sqrt(t_count)
    point = _point(mean, se)
    se = np.where(point, 0.0, se)
    q = stats.t.ppf(1 - alpha / 2, t_count - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = 2 * stats.t.sf(np.abs(mean) / se, t_count - 1)
    p = np.where(point, np.where(mean == 0, 1.0, 0.0), p)
    return PairedTest(mean, mean - q * se, mean + q * se, p)


def _interpolate(sorted_: np.ndarray, level: np.ndarray,
                 valid: np.ndarray | None = None) -> np.ndarray:
    """Linear-interpolated quantile of each column of ``sorted_`` at its own level.

    ``valid`` counts each column's leading non-NaN values (NaN sorts last).
    """
    b = np.full(sorted_.shape[1], sorted_.shape[0]) if valid is None else np.maximum(valid, 1)
    pos = np.clip(np.nan_to_num(level, nan=0.5), 0, 1) * (b - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, b - 1)
    cols = np.arange(sorted_.shape[1])
    frac = pos - lo
    return sorted_[lo, cols] * (1 - frac) + sorted_[hi, cols] * frac


def _bootstrap(d: np.ndarray, alpha: float, kind: str, n_resamples: int,
               rng: np.random.Generator) -> PairedTest:
    from scipy import special
    flat = _flat(d)
    r, t_count = flat.shape
    mean = flat.mean(axis=1)
    sd = flat.std(axis=1, ddof=1)
    point = _point(mean, sd)
    # resample tasks: a resample is a multinomial count per task; its mean is counts @ d / T
    rows = max(1, 4_000_000 // max(t_count, r))
    m_star = np.empty((n_resamples, r))
    s_star = np.empty((n_resamples, r) if kind == "studentized" else (0, r))
    for lo in range(0, n_resamples, rows):
        w = rng.multinomial(t_count, np.full(t_count, 1 / t_count),
                            size=min(rows, n_resamples - lo)).astype(float)
        block = slice(lo, lo + w.shape[0])
        m_star[block] = w @ flat.T / t_count
        if kind == "studentized":
            second = w @ (flat**2).T / t_count
            s_star[block] = np.sqrt(np.maximum(second - m_star[block] ** 2, 0.0)
                                    * t_count / (t_count - 1))
    z = special.ndtri(np.array([alpha / 2, 1 - alpha / 2]))
    if kind == "studentized":
        se = sd / math.sqrt(t_count)
        with np.errstate(divide="ignore", invalid="ignore"):
            t_star = (m_star - mean) / (s_star / math.sqrt(t_count))
        # a resample with no spread has no t: it is dropped (Efron & Tibshirani, ch. 12)
        t_star = np.where(s_star > 1e-12, t_star, np.nan)
        valid = np.isfinite(t_star).sum(axis=0)
        t_obs = np.where(se > 0, mean / np.where(se > 0, se, 1.0), 0.0)
        t_sorted = np.sort(t_star, axis=0)
        q_lo = _interpolate(t_sorted, np.full(r, alpha / 2), valid)
        q_hi = _interpolate(t_sorted, np.full(r, 1 - alpha / 2), valid)
        low, high = mean - q_hi * se, mean - q_lo * se
        with np.errstate(divide="ignore", invalid="ignore"):
            p = 2 * np.minimum((t_star >= t_obs).sum(axis=0),
                               (t_star <= t_obs).sum(axis=0)) / valid
    else:
        m_sorted = np.sort(m_star, axis=0)
        if kind == "percentile":
            levels = [np.full(r, alpha / 2), np.full(r, 1 - alpha / 2)]
            p = 2 * np.minimum((m_star <= 0).mean(axis=0), (m_star >= 0).mean(axis=0))
        else:  # BCa: bias correction z0 and acceleration a (the jackknife of a mean in closed form)
            # mid-rank of the estimate among the resamples, as scipy.stats.bootstrap
            z0 = special.ndtri(((m_star < mean).mean(axis=0) + (m_star <= mean).mean(axis=0)) / 2)
            dev = flat - mean[:, None]
            with np.errstate(divide="ignore", invalid="ignore"):
                a = (dev**3).sum(axis=1) / (6 * ((dev**2).sum(axis=1)) ** 1.5)
            a = np.nan_to_num(a)
            with np.errstate(divide="ignore", invalid="ignore"):
                levels = [special.ndtr(z0 + (z0 + zq) / (1 - a * (z0 + zq))) for zq in z]
                # the p-value inverts the same map at the bootstrap position of 0
                q0 = np.clip((m_star < 0).mean(axis=0), 0.5 / n_resamples,
                             1 - 0.5 / n_resamples)
                w_ = special.ndtri(q0) - z0
                zq = w_ / (1 + a * w_) - z0
                p = 2 * special.ndtr(-np.abs(zq))
        low = _interpolate(m_sorted, levels[0])
        high = _interpolate(m_sorted, levels[1])
    p = np.minimum(np.nan_to_num(p, nan=1.0), 1.0)
    low = np.where(point, mean, low)
    high = np.where(point, mean, high)
    p = np.where(point, np.where(mean == 0, 1.0, 0.0), p)
    shape = d.shape[:-1]
    return PairedTest(mean.reshape(shape), low.reshape(shape), high.reshape(shape),
                      p.reshape(shape))


def _sign_flip(d: np.ndarray, alpha: float, n_resamples: int,
               rng: np.random.Generator) -> PairedTest:
    flat = _flat(d)
    r, t_count = flat.shape
    if 2**t_count <= n_resamples + 1:  # every sign pattern: the exact test
        codes = np.arange(2**t_count)[:, None] >> np.arange(t_count)[None, :]
        signs = 1.0 - 2.0 * (codes & 1)
        extra = 0
    else:
        signs = rng.choice(np.array([-1.0, 1.0]), size=(n_resamples, t_count))
        extra = 1  # the observed labelling counts once (Phipson & Smyth)
    flipped = signs @ flat.T  # (B, R): sum of sign-flipped differences
    sums = signs.sum(axis=1)[:, None]
    b = signs.shape[0] + extra
    mean = flat.mean(axis=1)

    def p_at(delta0: np.ndarray) -> np.ndarray:
        observed = np.abs(t_count * (mean - delta0)) * (1 - 1e-9)
        count = (np.abs(flipped - delta0 * sums) >= observed - 1e-12).sum(axis=0)
        return (count + extra) / b

    p = p_at(np.zeros(r))
    # invert the test in closed form: pattern b counts at delta0 when
    # (A_b - delta0 s_b)^2 >= T^2 (mean - delta0)^2, a concave quadratic in delta0 that holds
    # at the mean, so each pattern counts on an interval [r1_b, r2_b] around the mean and
    # p(delta0) rises monotonically towards the mean from either side
    quad = sums**2 - t_count**2  # <= 0; 0 for the all-equal-sign patterns (always counted)
    lin = 2 * (t_count**2 * mean[None, :] - flipped * sums)
    const = flipped**2 - (t_count * mean[None, :]) ** 2
    root = np.sqrt(np.maximum(lin**2 - 4 * quad * const, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        r1 = np.where(quad < 0, (-lin + root) / (2 * quad), -np.inf)
        r2 = np.where(quad < 0, (-lin - root) / (2 * quad), np.inf)
    # accepted where extra + count > alpha * b: the j-th smallest r1 and j-th largest r2
    j = min(math.floor(alpha * b - extra) + 1, signs.shape[0])
    low = np.partition(r1, j - 1, axis=0)[j - 1]
    high = -np.partition(-r2, j - 1, axis=0)[j - 1]
    ends = [np.minimum(low, mean), np.maximum(high, mean)]
    # ties make p jump at 0 (zero differences are unchanged by a flip): the interval holds 0
    # whenever the test at 0 does not reject, so that the verdict and the p-value agree
    accepted = p > alpha
    ends = [np.where(accepted, np.minimum(ends[0], 0.0), ends[0]),
            np.where(accepted, np.maximum(ends[1], 0.0), ends[1])]
    shape = d.shape[:-1]
    return PairedTest(mean.reshape(shape), ends[0].reshape(shape), ends[1].reshape(shape),
                      np.minimum(p, 1.0).reshape(shape))


def paired_difference_test(differences: npt.ArrayLike, *, method: str = "t",
                           confidence: float = 0.95, n_resamples: int = 9999,
                           rng: int | np.random.Generator | None = None) -> PairedTest:
    r"""Interval and two-sided p-value for the mean of paired differences, vectorized.

    Parameters
    ----------
    differences : array_like, shape (..., T)
        Per-task differences along the last axis (at least 2 tasks); any
        leading axes are independent replicates (as in a simulation study).
    method : {'t', 'percentile', 'bca', 'studentized', 'sign-flip'}
        ``'t'``: the paired t interval :math:`\bar d \pm t_{T-1,1-\alpha/2}\,s/\sqrt T`
        (Miller 2024). ``'percentile'``, ``'bca'``, ``'studentized'``: the
        bootstrap over tasks (Efron & Tibshirani 1993, ch. 13, 14 and 12);
        BCa's acceleration is the closed form of the jackknife of a mean,
        :math:`a = \sum (d_i-\bar d)^3 / \big(6 (\sum (d_i-\bar d)^2)^{3/2}\big)`.
        ``'sign-flip'``: the permutation test that flips the sign of each
        task's difference (exact when :math:`2^T` patterns fit in
        ``n_resamples``), with the interval from inverting it.
    confidence : float, default 0.95
        Two-sided confidence level of the interval.
    n_resamples : int, default 9999
        Resamples or sign patterns (ignored by ``'t'``).
    rng : int, numpy.random.Generator or None
        Seed or generator for the resampling methods.

    Returns
    -------
    PairedTest
        ``mean``, ``low``, ``high`` and ``p_value`` (two-sided, for a mean of 0),
        floats for 1-D input, else arrays over the leading axes. Where every
        difference is the same the interval is that point and the p-value is 1
        (all zero) or 0.

    References
    ----------
    .. [1] E. Miller, "Adding Error Bars to Evals", arXiv:2411.00640, 2024.
    .. [2] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, 1993.

    Examples
    --------
    >>> d = [-0.2, 0.0, -0.5, 0.0, -0.1, 0.1, -0.3, 0.0]
    >>> res = paired_difference_test(d)
    >>> round(res.mean, 4), round(res.low, 4), round(res.high, 4), round(res.p_value, 4)
    (-0.125, -0.2907, 0.0407, 0.1176)
    >>> round(paired_difference_test(d, method="sign-flip").p_value, 4)  # exact: 2^8 patterns
    0.1875
    """
    d = np.asarray(differences, dtype=float)
    if d.ndim == 0 or d.shape[-1] < 2:
        raise ValueError(f"differences (shape {d.shape}) need at least 2 tasks on the last axis")
    if not np.all(np.isfinite(d)):
        raise ValueError("differences must be finite (a task with n < k has no pass^k: leave "
                         "it out)")
    if method not in METHODS:
        raise ValueError(f"method ({method!r}) must be one of {', '.join(METHODS)}")
    alpha = 1.0 - _confidence(confidence)
    if int(n_resamples) != n_resamples or n_resamples < 99:
        raise ValueError(f"n_resamples ({n_resamples!r}) must be a whole number of at least 99")
    gen = np.random.default_rng(rng)
    if method == "t":
        res = _t(d, alpha)
    elif method == "sign-flip":
        res = _sign_flip(d, alpha, int(n_resamples), gen)
    else:
        res = _bootstrap(d, alpha, method, int(n_resamples), gen)
    if d.ndim == 1:
        return PairedTest(*(float(x) for x in res))
    return res


# --------------------------------------------------------------------------
# the floor: each task's own binomial noise, evaluated under the hypothesis
# --------------------------------------------------------------------------

#: Grid steps and bisection steps of the floor's endpoint search.
_FLOOR_GRID, _FLOOR_BISECT = 8, 26


def _floor_weight(k: int, n: Any) -> Any:
    """k / (n - 1) where n > k, else k / n: Hoeffding's k/n with Bessel's n - 1, because
    the floor puts estimates into theta (1 - theta), and E[h (1 - h)] falls short of
    theta (1 - theta) by Var h (by exactly the factor (n - 1)/n for k = 1). Where n = k,
    h is 0 or 1 and only the move under the hypothesis gives it a variance."""
    n_ = np.asarray(n, dtype=float)
    return np.where(n_ > k, k / np.maximum(n_ - 1.0, 1.0), k / n_)


def _moved(h_old: np.ndarray, h_new: np.ndarray, lam: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    """Per-task pass^k moved apart by ``lam`` (new up, old down), kept in [0, 1]."""
    shift = lam[..., None]
    o, n = h_old - shift, h_new + shift
    return (np.minimum(np.maximum(o, 0.0, out=o), 1.0, out=o),
            np.minimum(np.maximum(n, 0.0, out=n), 1.0, out=n))


def _moved_gap(h_old: np.ndarray, h_new: np.ndarray, lam: np.ndarray) -> np.ndarray:
    o, n = _moved(h_old, h_new, lam)
    return np.asarray((n - o).mean(axis=-1))


def _floor_se(h_old: np.ndarray, h_new: np.ndarray, w_old: np.ndarray, w_new: np.ndarray,
              lam: np.ndarray) -> np.ndarray:
    """Standard error of the mean difference from the tasks' binomial noise alone, at the
    moved rates: w theta (1 - theta) per task and version, w from :func:`_floor_weight`."""
    o, n = _moved(h_old, h_new, lam)
    var = (w_old * (o - o * o)).sum(axis=-1) + (w_new * (n - n * n)).sum(axis=-1)
    return np.asarray(np.sqrt(var) / h_old.shape[-1])


def _floor_test(h_old: np.ndarray, h_new: np.ndarray, w_old: np.ndarray, w_new: np.ndarray,
                q: float, df: int, *, p_value: bool = True
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The within-task score interval and its two-sided p-value for no change.

    A change delta0 is accepted when :math:`|\\bar d - \\delta_0| \\le q\\,
    \\mathrm{SE}(\\delta_0)`, the SE taken at the per-task rates moved (new
    up, old down, each by the same amount, kept in [0, 1]) until their mean
    difference is delta0. The outermost accepted change on either side is
    found on a grid of moves, then by bisection to 1e-9, rounding outwards.
    """
    d = np.asarray((h_new - h_old).mean(axis=-1))
    shape = d.shape
    ends = []
    for side in (-1.0, 1.0):
        def excess(lam: np.ndarray, side: float = side) -> np.ndarray:
            gap = _moved_gap(h_old, h_new, lam)
            return np.asarray(side * (gap - d) - q * _floor_se(h_old, h_new, w_old, w_new, lam))
        inner = np.zeros(shape)
        for j in range(1, _FLOOR_GRID + 1):
            lam = np.full(shape, side * j / _FLOOR_GRID)
            inner = np.where(excess(lam) <= 0, lam, inner)
        lo, hi = inner, np.clip(inner + side / _FLOOR_GRID, -1.0, 1.0)
        for _ in range(_FLOOR_BISECT):
            mid = (lo + hi) / 2
            ok = excess(mid) <= 0
            lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
        ends.append(_moved_gap(h_old, h_new, hi))  # the outer side: never narrower
    if not p_value:
        return ends[0], ends[1], np.full(shape, np.nan)
    from scipy import stats
    a, b = np.full(shape, -1.0), np.full(shape, 1.0)
    for _ in range(48):  # the move that makes the mean difference 0
        mid = (a + b) / 2
        up = _moved_gap(h_old, h_new, mid) >= 0
        a, b = np.where(up, a, mid), np.where(up, mid, b)
    se0 = _floor_se(h_old, h_new, w_old, w_new, (a + b) / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(np.abs(d) <= 1e-14, 0.0, np.abs(d) / se0)
    return ends[0], ends[1], np.asarray(2 * stats.t.sf(z, df))


def _floored(res: PairedTest, h_old: np.ndarray, h_new: np.ndarray, w_old: np.ndarray,
             w_new: np.ndarray, alpha: float, *, p_value: bool = True) -> PairedTest:
    """A method's interval widened to hold the floor's, and the larger of the p-values."""
    from scipy import stats
    t_count = h_old.shape[-1]
    q = float(stats.t.ppf(1 - alpha / 2, t_count - 1))
    low, high, p = _floor_test(h_old, h_new, w_old, w_new, q, t_count - 1, p_value=p_value)
    return PairedTest(res.mean, np.minimum(res.low, low), np.maximum(res.high, high),
                      np.maximum(res.p_value, p) if p_value else res.p_value)


# --------------------------------------------------------------------------
# the comparison of two versions
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class PairedComparison:
    """Suite-level comparison of mean pass^k, new minus old (see :func:`compare_pass_hat_k`)."""

    k: int
    delta: float
    ci: ConfidenceInterval
    p_value: float
    verdict: str
    paired_tasks: int
    left_out: int
    method: str
    confidence: float
    margin: float | None
    old_mean: float
    new_mean: float

    def __repr__(self) -> str:
        margin = "" if self.margin is None else f", margin={self.margin:g}"
        return (f"PairedComparison(k={self.k}, delta={self.delta:+.4f}, "
                f"ci=[{self.ci.low:+.4f}, {self.ci.high:+.4f}] ({self.confidence:.0%}), "
                f"p_value={self.p_value:.4g}, verdict={self.verdict!r}{margin}, "
                f"paired_tasks={self.paired_tasks}, left_out={self.left_out}, "
                f"method={self.method!r})")

    def to_dict(self) -> dict[str, Any]:
        """The comparison as JSON: every float at full precision, NaN as null."""
        num = json_number
        return {"k": self.k, "old_mean_pass_hat_k": num(self.old_mean),
                "new_mean_pass_hat_k": num(self.new_mean), "delta": num(self.delta),
                "ci_low": num(self.ci.low), "ci_high": num(self.ci.high),
                "confidence": self.confidence, "p_value": num(self.p_value),
                "verdict": self.verdict, "margin": self.margin,
                "paired_tasks": self.paired_tasks, "left_out": self.left_out,
                "method": self.method, "unit": "task (paired differences of unbiased pass^k)"}


def mean_of(values: npt.ArrayLike) -> float:
    """The mean of the finite values, correctly rounded whatever their order (NaN if none).

    ``math.fsum`` adds exactly, so the same numbers give the same mean in any
    order: a file's mean pass^k prints the same as OLD or as NEW in ``passk diff``.

    Examples
    --------
    >>> x = [0.1] * 10 + [1e-17, 0.7]
    >>> mean_of(x) == mean_of(x[::-1]), float(np.mean(x)) == float(np.mean(x[::-1]))
    (True, False)
    """
    a = np.asarray(values, dtype=float).ravel()
    a = a[np.isfinite(a)]
    return math.fsum(a.tolist()) / a.size if a.size else math.nan


def _verdict(low: float, high: float, margin: float | None) -> str:
    if not (math.isfinite(low) and math.isfinite(high)):
        return "inconclusive"
    if margin is None:
        return "better" if low > 0 else "worse" if high < 0 else "inconclusive"
    if low > -margin:
        return "non-inferior"
    return "worse" if high < 0 else "inconclusive"


def compare_pass_hat_k(c_old: npt.ArrayLike, n_old: npt.ArrayLike, c_new: npt.ArrayLike,
                       n_new: npt.ArrayLike, k: int, *, margin: float | None = None,
                       confidence: float = 0.95, method: str = "t", n_resamples: int = 9999,
                       rng: int | np.random.Generator | None = None) -> PairedComparison:
    r"""Is the new version's mean pass^k better, worse, or not worse by more than a margin?

    Parameters
    ----------
    c_old, n_old, c_new, n_new : array_like of int, shape (T,)
        Successes and runs per task in the old and the new version, paired by
        position (task i is the same task in both).
    k : int
        Runs that must all succeed. A task with fewer than k runs in either
        version has no unbiased pass^k there: it is left out, and counted.
    margin : float or None
        None: a two-sided comparison. A number in [0, 1): the non-inferiority
        margin, how much lower the new mean pass^k may be and still pass.
    confidence : float, default 0.95
        Two-sided confidence level of the interval on the change.
    method : {'t', 'percentile', 'bca', 'studentized', 'sign-flip'}, default 't'
        See :func:`paired_difference_test`. The default won the study in
        ``benchmarks/bench_compare.py``.
    n_resamples : int, default 9999
        For the resampling methods.
    rng : int, numpy.random.Generator or None
        Seed or generator for the resampling methods (the default needs none).

    Returns
    -------
    PairedComparison
        ``delta`` (new minus old mean pass^k over the paired tasks), ``ci``,
        ``p_value`` (two-sided, for no change), ``verdict``, ``paired_tasks``,
        ``left_out``, and both means.

    Notes
    -----
    With :math:`\hat h = \binom{c}{k}/\binom{n}{k}` per task and version and
    :math:`d_i = \hat h_{\text{new},i} - \hat h_{\text{old},i}`, the change is
    :math:`\bar d`. The interval is the union of two, each at the stated level:

    * the method's interval over tasks (default the paired t,
      :math:`\bar d \pm t_{T-1,\,1-\alpha/2}\; s_d/\sqrt{T}`, Miller 2024),
      whose spread :math:`s_d` holds the tasks' own changes and the trial noise;
    * a floor from the trial noise alone, which :math:`s_d` can miss (two
      tasks with equal differences, or a saturated suite where every run
      passes, have :math:`s_d = 0`). :math:`\hat h` is a U-statistic of
      degree k, so Hoeffding's (1948) bound gives
      :math:`\operatorname{Var}\hat h \le \tfrac{k}{n}\,\theta(1-\theta)` for
      a task with :math:`\theta = p^k` (exact for k = 1; it needs no
      :math:`n \ge 2k`, where the unbiased within-task variance does not
      exist). Estimates put into :math:`\theta(1-\theta)` fall short of it
      by :math:`\operatorname{Var}\hat h` (by the factor (n - 1)/n for
      k = 1), so the floor takes :math:`w = k/(n-1)` (Bessel's n - 1) in
      place of k/n where n > k (where n = k, :math:`\hat h` is 0 or 1 and
      w = 1). The bound is evaluated *under the hypothesis*:
      a change :math:`\delta_0` is accepted when
      :math:`|\bar d - \delta_0| \le t_{T-1,1-\alpha/2}\,\mathrm{SE}(\delta_0)`,
      :math:`\mathrm{SE}(\delta_0)^2 = \sum_i \big(w_{\text{old},i}
      \tilde\theta_{\text{old},i}(1-\tilde\theta_{\text{old},i}) +
      w_{\text{new},i}\tilde\theta_{\text{new},i}
      (1-\tilde\theta_{\text{new},i})\big)/T^2`, with
      :math:`\tilde\theta = \operatorname{clip}(\hat h \mp \lambda, 0, 1)`
      moved apart by the :math:`\lambda` that makes their mean difference
      :math:`\delta_0` (a score interval, like Wilson's for one proportion).
      A suite whose every run passed therefore still has width: at the
      margin's boundary its new rates are below 1.

    The p-value is the larger of the two tests'. The target is the change in
    mean pass^k of the suite's tasks (only the runs random), and, through the
    t part, of the population of tasks the suite samples. The study in
    ``benchmarks/bench_compare.py`` measures the error rates on identical,
    Beta, uniform, tau-bench and saturated task sets, T = 5-200, n = 2-12.

    Verdicts, from the interval :math:`[L, H]`:

    * no margin: ``"better"`` when :math:`L > 0`, ``"worse"`` when
      :math:`H < 0`, else ``"inconclusive"`` (each claim is wrong with
      probability at most :math:`\alpha/2` when it is false);
    * margin :math:`m`: ``"non-inferior"`` when :math:`L > -m` (the drop, if
      any, is shown to be smaller than m); otherwise ``"worse"`` when
      :math:`H < 0` (a drop is shown, and it is not shown to be within the
      margin); otherwise ``"inconclusive"``. So ``"worse"`` always means a
      regression was shown; an interval like [-0.08, -0.01] with m = 0.05 is
      ``"worse"``, and [-0.08, +0.01] is ``"inconclusive"``.

    References
    ----------
    .. [1] E. Miller, "Adding Error Bars to Evals: A Statistical Approach to
       Language Model Evaluations", arXiv:2411.00640, 2024.
    .. [2] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, 1993.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> p_old = rng.uniform(0.5, 1.0, 60)
    >>> c_old = rng.binomial(8, p_old)
    >>> c_new = rng.binomial(8, p_old * 0.85)
    >>> compare_pass_hat_k(c_old, 8, c_new, 8, 4)
    PairedComparison(k=4, delta=-0.1383, ci=[-0.2286, -0.0442] (95%), p_value=0.005566,
                     verdict='worse', paired_tasks=60, left_out=0, method='t')
    >>> c_same = rng.binomial(8, p_old)  # the old version run again: no change
    >>> compare_pass_hat_k(c_old, 8, c_same, 8, 4, margin=0.05).verdict
    'non-inferior'
    >>> tiny = compare_pass_hat_k([12, 12], 12, [11, 11], 12, 5)  # two tasks: no verdict
    >>> tiny.verdict, round(tiny.ci.low, 4), round(tiny.ci.high, 4)
    ('inconclusive', -0.9909, 0.9465)
    >>> saturated = compare_pass_hat_k([12] * 10, 12, [12] * 10, 12, 1, margin=0.01)
    >>> saturated.verdict, round(saturated.ci.low, 4)  # 120 passes: 0.99**120 = 0.30
    ('inconclusive', -0.0445)
    """
    c1, n1 = _counts(c_old, n_old)
    c2, n2 = _counts(c_new, n_new)
    c1, n1, c2, n2 = np.broadcast_arrays(c1, n1, c2, n2)
    if c1.ndim != 1:
        raise ValueError(f"counts must be 1-D arrays over tasks, not shape {c1.shape}")
    k_ = int(_whole_numbers(k, "k", minimum=1))
    if margin is not None and not (math.isfinite(margin) and 0 <= margin < 1):
        raise ValueError(f"margin ({margin!r}) must lie in [0, 1)")
    confidence = _confidence(confidence)
    if method not in METHODS:
        raise ValueError(f"method ({method!r}) must be one of {', '.join(METHODS)}")
    keep = (n1 >= k_) & (n2 >= k_)
    h1 = np.asarray(estimate_pass_hat_k(c1[keep], n1[keep], k_), dtype=float)
    h2 = np.asarray(estimate_pass_hat_k(c2[keep], n2[keep], k_), dtype=float)
    paired, left_out = int(keep.sum()), int((~keep).sum())
    old_mean, new_mean = mean_of(h1), mean_of(h2)
    if paired >= 2:
        res = paired_difference_test(h2 - h1, method=method, confidence=confidence,
                                     n_resamples=n_resamples, rng=rng)
        res = _floored(res, h1, h2, _floor_weight(k_, n1[keep]), _floor_weight(k_, n2[keep]),
                       1.0 - confidence)
        # a change in mean pass^k lies in [-1, 1]; the t interval can overshoot with few tasks
        low, high, p = max(float(res.low), -1.0), min(float(res.high), 1.0), float(res.p_value)
    else:  # one task (or none) says nothing about a population of tasks
        low = high = p = math.nan
    delta = new_mean - old_mean
    return PairedComparison(k_, delta, ConfidenceInterval(low, high), p,
                            _verdict(low, high, margin), paired, left_out, method, confidence,
                            None if margin is None else float(margin), old_mean, new_mean)


# --------------------------------------------------------------------------
# planning: tasks × runs per task
# --------------------------------------------------------------------------


def pass_hat_k_sampling_variance(p: npt.ArrayLike, n: npt.ArrayLike, k: int) -> Any:
    r"""Exact variance of the unbiased pass^k from n runs of a task with success rate p.

    Parameters
    ----------
    p : float or array_like
        Single-run success rates in [0, 1].
    n : int or array_like of int
        Runs per task, each at least ``k``; broadcasts against ``p``.
    k : int
        Runs that must all succeed.

    Returns
    -------
    float or ndarray
        :math:`V_n(p) = \sum_{c=0}^{n} \binom{n}{c} p^c (1-p)^{n-c}
        \big(\binom{c}{k}/\binom{n}{k}\big)^2 - p^{2k}`, summed exactly over the
        binomial distribution of c.

    Notes
    -----
    It falls like :math:`k^2 p^{2k-1}(1-p)/n` for large n (the delta method),
    and is 0 at p = 0 and p = 1. ``estimate_pass_hat_k(c, n, 2k)`` is unbiased
    for :math:`p^{2k}`, which the tests use as an independent check.

    Examples
    --------
    >>> round(pass_hat_k_sampling_variance(0.9, 8, 4), 5)
    0.10266
    >>> pass_hat_k_sampling_variance([0.0, 0.5, 1.0], 4, 4).round(5)
    array([0.     , 0.05859, 0.     ])
    """
    from scipy import stats
    p_arr = np.asarray(p, dtype=float)
    if np.any(~((p_arr >= 0) & (p_arr <= 1))):
        raise ValueError(f"p ({p!r}) must lie in [0, 1]")
    k_ = int(_whole_numbers(k, "k", minimum=1))
    n_arr = _whole_numbers(n, "n", minimum=k_)
    p_b, n_b = np.broadcast_arrays(p_arr, n_arr)
    out = np.empty(p_b.shape)
    for n_value in np.unique(n_b):
        where = n_b == n_value
        c = np.arange(n_value + 1)
        h2 = np.asarray(estimate_pass_hat_k(c, n_value, k_)) ** 2
        pmf = stats.binom.pmf(c[None, :], n_value, p_b[where][:, None])
        out[where] = np.maximum(pmf @ h2 - p_b[where] ** (2 * k_), 0.0)
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class ComparisonPlan:
    """Power (or smallest detectable drop) over a grid of tasks × runs; see :func:`plan_comparison`."""

    k: int
    delta: float | None
    confidence: float
    target_power: float
    tasks: tuple[int, ...]
    runs: tuple[int, ...]
    power: np.ndarray | None  # (len(tasks), len(runs)) when delta is given
    detectable: np.ndarray  # (len(tasks), len(runs)): smallest drop with target power
    tasks_needed: tuple[int | None, ...] | None  # per runs, for delta at target power
    between_variance: float
    within_variance: tuple[float, ...]  # per runs: mean V_n(p) over the tasks' rates
    source: str
    floor_variance: tuple[float, ...] = ()  # per runs, at delta: the floor's per-task variance

    @property
    def cheapest(self) -> int | None:
        """Index into ``runs`` of the fewest agent runs (tasks × runs) reaching the power."""
        if not self.tasks_needed:
            return None
        costs = [t * n if t is not None else math.inf for t, n in
                 zip(self.tasks_needed, self.runs)]
        best = int(np.argmin(costs))
        return best if math.isfinite(costs[best]) else None

    def to_dict(self) -> dict[str, Any]:
        """The plan as JSON: every float at full precision, NaN as null."""
        def grid(a: np.ndarray | None) -> list[list[float | None]] | None:
            return None if a is None else [[json_number(x) for x in row] for row in a.tolist()]
        return {"k": self.k, "delta": self.delta, "confidence": self.confidence,
                "target_power": self.target_power, "tasks": list(self.tasks),
                "runs": list(self.runs), "power": grid(self.power),
                "detectable_drop": grid(self.detectable),
                "tasks_needed": None if self.tasks_needed is None else list(self.tasks_needed),
                "runs_per_version": None if self.tasks_needed is None else
                [None if t is None else t * n for t, n in zip(self.tasks_needed, self.runs)],
                "between_variance": json_number(self.between_variance),
                "within_variance": [json_number(v) for v in self.within_variance],
                "floor_variance": [json_number(v) for v in self.floor_variance],
                "source": self.source,
                "test": "paired t on per-task pass^k differences, floored by each task's "
                        "binomial noise, two-sided; power to show a drop (verdict worse)"}


def _overlap(n: int, k: int) -> np.ndarray:
    """P(two independent random k-subsets of n runs share i runs), i = 0..k."""
    return np.array([math.comb(k, i) * math.comb(n - k, k - i) / math.comb(n, k)
                     for i in range(k + 1)])


def _variance_polynomial(n: int, k: int) -> np.ndarray:
    """Coefficients (of p^0..p^2k) of V_n(p), the exact variance of the unbiased pass^k
    from n runs: E[h^2] = sum_i pi_i p^(2k - i), less p^2k."""
    v = np.zeros(2 * k + 1)
    for i, w in enumerate(_overlap(n, k)):
        v[2 * k - i] += w
    v[2 * k] -= 1.0
    return v


def _hat_law(rates: np.ndarray, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The values of the unbiased pass^k from n runs, and their law mixed over the rates."""
    from scipy import stats
    c = np.arange(n + 1)
    pmf = np.zeros(n + 1)
    for lo in range(0, rates.size, 20_000):
        pmf += np.asarray(stats.binom.pmf(c[None, :], n, rates[lo:lo + 20_000, None]),
                          dtype=float).sum(axis=0)
    return np.asarray(estimate_pass_hat_k(c, n, k), dtype=float), pmf / pmf.sum()


def _floor_variance(old: tuple[np.ndarray, np.ndarray], new: tuple[np.ndarray, np.ndarray],
                    weight: float) -> float:
    """The floor's variance per task (both versions) where the drop is tested against no
    change: the estimates (their laws in the two versions) moved apart by the lambda that
    makes their mean difference 0, in Hoeffding's bound ``weight`` theta (1 - theta)."""
    h, pmf_old = old
    _, pmf_new = new
    a, b = 0.0, 1.0
    for _ in range(60):
        mid = (a + b) / 2
        gap = pmf_new @ np.clip(h + mid, 0, 1) - pmf_old @ np.clip(h - mid, 0, 1)
        a, b = (a, mid) if gap >= 0 else (mid, b)
    up, down = np.clip(h + b, 0, 1), np.clip(h - b, 0, 1)
    return float(weight * (pmf_old @ (down * (1 - down)) + pmf_new @ (up * (1 - up))))


def _lowered(rates: np.ndarray, k: int, delta: float) -> np.ndarray | None:
    """The rates with every logit lowered by the amount that lowers mean p^k by delta
    (None where the drop is more than the mean)."""
    from scipy import optimize, special
    inner = np.clip(rates, 1e-9, 1 - 1e-9)
    target = float(np.mean(inner**k)) - delta
    if target <= 1e-12:
        return None
    logit = special.logit(inner)

    def gap(shift: float) -> float:
        return float(np.mean(special.expit(logit - shift) ** k)) - target
    return np.asarray(special.expit(logit - optimize.brentq(gap, 0.0, 60.0, xtol=1e-12)))


def _posterior_rates(c: np.ndarray, n: np.ndarray, draws: int = 9) -> np.ndarray:
    """Each pilot task's rate as ``draws`` quantiles of its Jeffreys posterior
    Beta(c + 1/2, n - c + 1/2): the spread of the rate the counts leave open."""
    from scipy import stats
    u = (np.arange(draws) + 0.5) / draws
    return np.asarray(stats.beta.ppf(u[None, :], c[:, None] + 0.5, (n - c)[:, None] + 0.5),
                      dtype=float).ravel()


def _design(rates: np.ndarray, runs: int, k: int, delta: float, within_old: float,
            old_law: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[float, float]:
    """For a drop ``delta`` at n = ``runs``: the two versions' within-task variance, and the
    floor's. The new version is the old with every logit lowered (:func:`_lowered`); its
    within-task variance is the old's (unbiased) times the ratio of the two at the rates
    (each the mean of E[h^2] - p^2k over the law of h, :func:`_hat_law`)."""
    lowered = _lowered(rates, k, delta)
    if lowered is None:
        return math.inf, math.inf
    old_law = old_law if old_law is not None else _hat_law(rates, runs, k)
    new_law = _hat_law(lowered, runs, k)
    v_old = float(old_law[1] @ old_law[0] ** 2 - np.mean(rates ** (2 * k)))
    v_new = float(new_law[1] @ new_law[0] ** 2 - np.mean(lowered ** (2 * k)))
    ratio = v_new / v_old if v_old > 1e-15 else 1.0
    return within_old * (1.0 + ratio), _floor_variance(old_law, new_law,
                                                       float(_floor_weight(k, runs)))


def _monomial_estimates(c: np.ndarray, m: np.ndarray, degree: int) -> np.ndarray:
    """est[j, i]: C(c_i, j) / C(m_i, j), unbiased for p_i^j where j <= m_i (else NaN)."""
    out = np.full((degree + 1, c.size), np.nan)
    for j in range(degree + 1):
        ok = m >= j
        out[j, ok] = np.asarray(estimate_pass_hat_k(c[ok], m[ok], j), dtype=float) if j else 1.0
    return out


def _bernstein_bound(coef: np.ndarray, m: int, upper: bool) -> np.ndarray:
    """b[c], c = 0..m: the Bernstein polynomial of degree m nearest (in integral over [0, 1])
    to the polynomial ``coef`` from above (``upper``) or below. b[c] for a task with c of m
    runs passing is unbiased for that polynomial, so its mean over tasks bounds the mean of
    ``coef`` at their rates, in expectation, whatever the rates (linear programme)."""
    from scipy import optimize, stats
    p = np.concatenate([np.linspace(0.0, 1.0, 801), 1.0 - np.geomspace(1e-6, 1e-2, 60)])
    basis = np.asarray(stats.binom.pmf(np.arange(m + 1)[None, :], m, p[:, None]), dtype=float)
    target = np.asarray(np.polynomial.polynomial.polyval(p, coef), dtype=float)
    sign = 1.0 if upper else -1.0
    res = optimize.linprog(sign * np.ones(m + 1), A_ub=-sign * basis, b_ub=-sign * target,
                           bounds=[(None, None)] * (m + 1), method="highs")
    if not res.success:  # pragma: no cover - the programme is always feasible and bounded
        raise RuntimeError(f"no Bernstein bound of degree {m}: {res.message}")
    b = np.asarray(res.x, dtype=float)
    # between the programme's nodes the bound may miss by ~1e-7: shift it (the basis sums
    # to 1, so adding e to every b[c] adds e everywhere) by the worst miss on a finer grid
    fine = np.linspace(0.0, 1.0, 20_001)
    miss = sign * (np.asarray(np.polynomial.polynomial.polyval(fine, coef), dtype=float)
                   - stats.binom.pmf(np.arange(m + 1)[None, :], m, fine[:, None]) @ b)
    return b + sign * (max(float(miss.max()), 0.0) + 1e-12)


def _pilot_mean(coef: np.ndarray, c: np.ndarray, m: np.ndarray, upper: bool) -> float:
    """Mean over the pilot's tasks of a polynomial in their rates: unbiased where every
    power is at most the task's runs, else a Bernstein bound (upper or lower) per task."""
    degree = int(np.flatnonzero(np.abs(coef) > 0).max()) if np.any(coef) else 0
    est = np.empty(c.size)
    exact = m >= degree
    if exact.any():
        mono = _monomial_estimates(c[exact], m[exact], degree)
        est[exact] = coef[: degree + 1] @ mono
    for m_value in np.unique(m[~exact]):
        rows = ~exact & (m == m_value)
        est[rows] = _bernstein_bound(coef, int(m_value), upper)[c[rows]]
    return mean_of(est)


#: Quantile nodes of the chi-square law of the sample variance in the power integral.
_POWER_NODES = 256


def _power(delta: Any, var_d: Any, floor_var: Any, t_count: Any, alpha: float) -> np.ndarray:
    """P(verdict "worse") for a true drop ``delta``: the floored paired t test.

    The verdict needs :math:`\bar d < -q\\max(s/\\sqrt T, \\sigma_f)`, with
    :math:`\bar d \\sim N(-\\delta, \\sigma_d^2/T)`, :math:`(T-1)s^2/\\sigma_d^2 \\sim
    \\chi^2_{T-1}` and the floor's SE :math:`\\sigma_f = \\sqrt{2\bar F_n/T}` taken as
    fixed; the chi-square is integrated over quantile nodes. With no floor this is the
    noncentral t of the paired t test.
    """
    from scipy import special, stats
    delta, var_d, floor_var, t_count = np.broadcast_arrays(
        *(np.asarray(x, dtype=float) for x in (delta, var_d, floor_var, t_count)))
    df = t_count - 1
    q = stats.t.ppf(1 - alpha / 2, df)[..., None]
    u = (np.arange(_POWER_NODES) + 0.5) / _POWER_NODES
    ratio = stats.chi2.ppf(u, df[..., None]) / df[..., None]
    sd = np.sqrt(var_d / t_count)[..., None]
    bar = q * np.maximum(sd * np.sqrt(ratio), np.sqrt(floor_var / t_count)[..., None])
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(sd > 0, (delta[..., None] - bar) / sd, np.where(delta[..., None] > bar,
                                                                    np.inf, -np.inf))
    return np.asarray(special.ndtr(z).mean(axis=-1), dtype=float)


def _pilot_variances(c: np.ndarray, m: np.ndarray, k: int, runs: tuple[int, ...]
                     ) -> tuple[float, tuple[float, ...], bool]:
    """From a pilot: the between-task variance of p^k (trial noise removed), and per
    planned n the mean within-task variance V_n, each unbiased where the pilot's runs
    reach the degree 2k, else bounded the cautious way."""
    h = np.asarray(estimate_pass_hat_k(c, m, k), dtype=float)
    noise = np.empty(c.size)  # V_m at each task's own m: bounded below (more between-task)
    for m_value in np.unique(m):
        rows = m == m_value
        noise[rows] = _pilot_mean(_variance_polynomial(int(m_value), k), c[rows], m[rows],
                                  upper=False)
    sigma_b2 = max(0.0, float(np.var(h, ddof=1)) - mean_of(noise))
    within = tuple(max(0.0, _pilot_mean(_variance_polynomial(n, k), c, m, upper=True))
                   for n in runs)
    return sigma_b2, within, bool(np.all(m >= 2 * k))


def plan_comparison(k: int, *, delta: float | None = None,
                    successes: npt.ArrayLike | None = None, totals: npt.ArrayLike | None = None,
                    correlation: float = DEFAULT_CORRELATION,
                    between_variance: float | None = None,
                    tasks: tuple[int, ...] = (20, 50, 100, 200, 500),
                    runs: tuple[int, ...] | None = None, confidence: float = 0.95,
                    power: float = 0.8) -> ComparisonPlan:
    r"""Power of the paired comparison for a grid of tasks × runs per task.

    Parameters
    ----------
    k : int
        The k of pass^k.
    delta : float or None
        The drop in mean pass^k to detect, in (0, 1). None: only the smallest
        detectable drop.
    successes, totals : array_like of int, optional
        A pilot run of the old version (per-task counts, each with at least
        k runs). Without one, the default population of
        :func:`task_population` (30 % of tasks near 0, 30 % near 1, 40 %
        in between) stands in, deterministically.
    correlation : float, default 0.7
        Correlation across tasks of the two versions' true pass^k, giving the
        variance of the true change as :math:`\omega^2 = 2(1-\rho)\sigma_b^2`.
        Miller (2024) reports 0.3–0.7 between different models; two versions
        of one agent are usually more alike, so 0.7 is on the cautious side.
    between_variance : float, optional
        :math:`\omega^2` itself (overrides ``correlation``), e.g. estimated
        from a previous pair of versions.
    tasks, runs : tuple of int
        The grid. ``runs`` defaults to the values among 2, 4, 8, 12, 16, 24
        (and k itself) that are at least k.
    confidence : float, default 0.95
        Two-sided confidence level of the comparison.
    power : float, default 0.8
        The power for ``tasks_needed`` and the detectable drop.

    Returns
    -------
    ComparisonPlan
        ``power[i, j]`` for ``tasks[i]`` × ``runs[j]``; ``detectable[i, j]``,
        the drop found with probability ``power``; ``tasks_needed[j]``, the
        fewest tasks with ``runs[j]`` runs each that reach ``power`` for
        ``delta``; and :attr:`ComparisonPlan.cheapest`.

    Notes
    -----
    The mean paired difference of T tasks with n runs has variance
    :math:`\sigma_d^2/T`, :math:`\sigma_d^2 = \omega^2 + \overline{V_n}^{\,\text{old}}
    + \overline{V_n}^{\,\text{new}}`, and :func:`compare_pass_hat_k` shows a drop when
    :math:`\bar d < -t_{T-1,1-\alpha/2}\max(s/\sqrt T, \sigma_f)`, with
    :math:`\sigma_f` the floor's standard error. The old version's
    :math:`\overline{V_n}` is the mean over the tasks of a polynomial in
    their rates, :math:`V_n(p) = \sum_{i=0}^{k}\pi_i\,p^{2k-i} - p^{2k}`,
    the exact variance of :math:`\hat h` from n runs (:math:`\pi_i` the
    chance that two random k-subsets of the n runs share i). From a pilot
    with m runs a task, each power :math:`p^j`, :math:`j \le m`, has the
    unbiased estimate :math:`\binom{c}{j}/\binom{m}{j}`, so the mean is
    estimated without bias where :math:`m \ge 2k` (putting :math:`c/m` into
    :math:`V_n` instead understates it for reliable tasks: the plan's old
    optimism). Where :math:`m < 2k` no unbiased estimate exists; each task
    then gets :math:`b_c`, the coefficients of the tightest Bernstein
    polynomial of degree m lying above :math:`V_n` on [0, 1] (a linear
    programme), whose mean is unbiased for a bound: cautious, never
    optimistic. :math:`\sigma_b^2`, the variance of :math:`p^k` across
    tasks, is the pilot's variance of :math:`\hat h` less its mean
    :math:`V_m` (bounded from below where :math:`m < 2k`), and
    :math:`\omega^2 = 2(1-\rho)\sigma_b^2`. Without a pilot the default
    population's rates are known and the means exact.

    The new version is modelled as the old with every task's logit lowered
    by the amount that lowers mean pass^k by :math:`\delta`; its within-task
    variance is the old one's estimate times the ratio of the two at the
    tasks' rates, and the floor is evaluated on the law of :math:`\hat h` in
    both versions, moved apart until their means agree (as the test does).
    For these two a pilot task's rate enters as nine quantiles of its
    Jeffreys posterior Beta(c + 1/2, m - c + 1/2), so a task seen at 4 of 4
    is not taken for one at p = 1.

    The power integrates the normal law of :math:`\bar d` over the
    chi-square law of :math:`s^2` (the noncentral t of Miller's (2024)
    sample-size formula when the floor is below :math:`s/\sqrt T`). The
    cost of a design is tasks × runs per version. ``benchmarks/bench_compare.py``
    checks the prediction against simulation on populations the plan was not
    built from.

    References
    ----------
    .. [1] E. Miller, "Adding Error Bars to Evals", arXiv:2411.00640, 2024.

    Examples
    --------
    >>> plan = plan_comparison(4, delta=0.05, tasks=(50, 100), runs=(4, 8))
    >>> plan.power.round(2)
    array([[0.11, 0.15],
           [0.19, 0.26]])
    >>> plan.tasks_needed, plan.runs[plan.cheapest]  # 663 × 4 = 2652 runs < 437 × 8 = 3496
    ((663, 437), 4)
    """
    from scipy import optimize
    k_ = int(_whole_numbers(k, "k", minimum=1))
    if delta is not None and not (math.isfinite(delta) and 0 < delta < 1):
        raise ValueError(f"delta ({delta!r}) must lie strictly between 0 and 1")
    if not 0 < power < 1:
        raise ValueError(f"power ({power!r}) must lie strictly between 0 and 1")
    if not 0 <= correlation <= 1:
        raise ValueError(f"correlation ({correlation!r}) must lie in [0, 1]")
    if between_variance is not None and not (math.isfinite(between_variance)
                                             and between_variance >= 0):
        raise ValueError(f"between_variance ({between_variance!r}) must be at least 0")
    alpha = 1.0 - _confidence(confidence)
    task_grid = tuple(int(t) for t in _whole_numbers(tasks, "tasks", minimum=2).ravel())
    if runs is None:
        runs = tuple(sorted({r for r in (2, 4, 8, 12, 16, 24) if r >= k_} | {k_}))[:6]
    run_grid = tuple(int(r) for r in _whole_numbers(runs, "runs", minimum=k_).ravel())
    if successes is None or totals is None:
        if successes is not None or totals is not None:
            raise ValueError("a pilot needs both successes and totals")
        rates = task_population(_PLAN_POPULATION_SIZE, change="none", rng=0).p_old
        sigma_b2 = float(np.var(rates**k_))
        poly = np.polynomial.polynomial.polyval
        within = tuple(float(np.mean(poly(rates, _variance_polynomial(r, k_))))
                       for r in run_grid)
        source = "default population (30% of tasks near 0, 30% near 1, 40% in between)"
    else:
        c, n = _counts(successes, totals)
        c, n = np.broadcast_arrays(c, n)
        c, n = c.ravel(), n.ravel()
        if c.size < 2:
            raise ValueError(f"a pilot needs at least 2 tasks, not {c.size}")
        if np.any(n < k_):
            raise ValueError(f"pilot tasks need at least k ({k_}) runs; the fewest is "
                             f"{int(n.min())}")
        sigma_b2, within, unbiased = _pilot_variances(c, n, k_, run_grid)
        rates = _posterior_rates(c, n)  # for the new version's share, and the floor
        source = f"pilot of {c.size} tasks" + ("" if unbiased else
                                               f" (fewer than 2k = {2 * k_} runs on some: "
                                               "within-task variance bounded from above)")
    omega2 = (float(between_variance) if between_variance is not None
              else 2 * (1 - correlation) * sigma_b2)
    t_arr = np.array(task_grid, dtype=float)[:, None]
    laws = [_hat_law(rates, r, k_) for r in run_grid]
    grid_power = None
    floor: tuple[float, ...] = ()
    if delta is not None:
        designs = [_design(rates, r, k_, delta, w, law)
                   for r, w, law in zip(run_grid, within, laws)]
        floor = tuple(f for _, f in designs)
        var_d = omega2 + np.array([v for v, _ in designs])[None, :]
        grid_power = _power(delta, var_d, np.array(floor)[None, :], t_arr, alpha)
    detectable = np.empty((len(task_grid), len(run_grid)))
    top = float(np.mean(np.clip(rates, 1e-9, 1 - 1e-9) ** k_)) * (1 - 1e-6)
    drops = np.geomspace(1e-4, top, 24)  # the design's variances, interpolated in the drop
    for j, (r, w) in enumerate(zip(run_grid, within)):
        at = np.array([_design(rates, r, k_, x, w, laws[j]) for x in drops])
        for i, t_ in enumerate(task_grid):
            def short(x: float, at: np.ndarray = at, t_: int = t_) -> float:
                v, f = (float(np.interp(x, drops, at[:, col])) for col in (0, 1))
                return float(_power(x, omega2 + v, f, t_, alpha)) - power
            detectable[i, j] = optimize.brentq(short, drops[0], top, xtol=1e-5) \
                if short(top) > 0 and short(drops[0]) < 0 else math.inf
    needed: tuple[int | None, ...] | None = None
    if delta is not None:
        needed = tuple(_tasks_needed(delta, omega2 + v, f, alpha, power)
                       for v, f in designs)
    return ComparisonPlan(k_, delta, 1 - alpha, power, task_grid, run_grid, grid_power,
                          detectable, needed, omega2, tuple(within), source, floor)


def _tasks_needed(delta: float, var_d: float, floor_var: float, alpha: float, power: float,
                  limit: int = 10**7) -> int | None:
    if var_d <= 0 and floor_var <= 0:
        return 2

    def enough(t: int) -> bool:
        return float(_power(delta, var_d, floor_var, t, alpha)) >= power
    hi = 2
    while not enough(hi):
        hi *= 2
        if hi > limit:
            return None
    lo = hi // 2 if hi > 2 else 1
    while hi - lo > 1:  # lo fails (or is 1), hi passes
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return hi


# --------------------------------------------------------------------------
# the simulation study
# --------------------------------------------------------------------------

#: Logit-scale mixture of task difficulty: (weight, centre, spread) per component.
_MIXTURE = ((0.3, -3.5, 1.0), (0.4, -0.5, 1.2), (0.3, 3.5, 1.0))
#: Spread of a version's own deviation from a task's difficulty, on the logit scale.
_VERSION_SD = 1.2
_DEFAULT_POPULATION_SIZE = 20_000
_PLAN_POPULATION_SIZE = 4_000


@dataclass(frozen=True)
class TaskPopulation:
    """A finite population of tasks: each task's single-run rate in both versions."""

    p_old: np.ndarray
    p_new: np.ndarray
    change: str

    def delta(self, k: int) -> float:
        """The population's true change in mean pass^k, new minus old."""
        return float(np.mean(self.p_new**k - self.p_old**k))


def task_population(size: int = 100_000, *, change: str = "none", k: int = 1,
                    delta: float = 0.0, rng: int | np.random.Generator | None = None
                    ) -> TaskPopulation:
    r"""A population of tasks like real suites, in two correlated versions.

    Parameters
    ----------
    size : int, default 100000
        Tasks in the population (even).
    change : {'none', 'trade-off', 'drop'}
        ``'none'``: the versions are exchangeable (each task's two rates are
        two draws around its difficulty, and the population holds both
        orders), so the change in mean pass^j is exactly 0 for every j.
        ``'trade-off'``: the new version fixes 20 % of tasks (logit +2.5) and
        slips on the rest by the amount that makes the change in mean pass^k
        exactly ``-delta`` (0 by default: a null hypothesis that is not
        symmetric). ``'drop'``: every task slips by the same logit amount,
        chosen so the change in mean pass^k is exactly ``-delta``.
    k : int
        The k at which ``delta`` is met.
    delta : float
        The drop in mean pass^k to build in (``'trade-off'`` and ``'drop'``).
    rng : int, numpy.random.Generator or None
        Seed or generator.

    Returns
    -------
    TaskPopulation

    Notes
    -----
    Difficulty :math:`\theta` is a mixture on the logit scale, 30 % around
    −3.5, 40 % around −0.5 and 30 % around +3.5; a version's rate is
    :math:`\operatorname{expit}(\theta + 1.2\,e)`, e standard normal. With 4
    runs, about 35 % of tasks pass 0 of 4 and 29 % pass 4 of 4 (tau-bench's
    GPT-4o airline run: 28 % and 20 %); the two versions' pass^k correlate
    about 0.85 across tasks.

    Examples
    --------
    >>> pop = task_population(2_000, change="drop", k=4, delta=0.05, rng=0)
    >>> round(pop.delta(4), 6), round(task_population(2_000, rng=0).delta(3), 6)
    (-0.05, 0.0)
    """
    from scipy import optimize, special
    if change not in ("none", "trade-off", "drop"):
        raise ValueError(f"change ({change!r}) must be one of none, trade-off, drop")
    size_ = int(_whole_numbers(size, "size", minimum=2))
    k_ = int(_whole_numbers(k, "k", minimum=1))
    gen = np.random.default_rng(rng)
    half = size_ // 2
    weights, centres, spreads = (np.array(x) for x in zip(*_MIXTURE))
    comp = gen.choice(len(weights), size=half, p=weights)
    theta = centres[comp] + spreads[comp] * gen.standard_normal(half)
    a = theta + _VERSION_SD * gen.standard_normal(half)
    b = theta + _VERSION_SD * gen.standard_normal(half)
    logit_old, logit_new = np.concatenate([a, b]), np.concatenate([b, a])
    p_old = special.expit(logit_old)
    if change == "none":
        return TaskPopulation(p_old, special.expit(logit_new), change)
    if not 0 <= delta < float(np.mean(p_old**k_)):
        raise ValueError(f"delta ({delta!r}) must lie in [0, mean pass^k)")
    fixed = np.zeros(logit_new.size, dtype=bool)
    if change == "trade-off":
        fixed[gen.permutation(logit_new.size)[: logit_new.size // 5]] = True
    target = float(np.mean(p_old**k_)) - delta

    def gap(shift: float) -> float:
        moved = np.where(fixed, logit_new + 2.5, logit_new - shift)
        return float(np.mean(special.expit(moved) ** k_)) - target
    shift = optimize.brentq(gap, -30.0, 30.0, xtol=1e-14)
    p_new = special.expit(np.where(fixed, logit_new + 2.5, logit_new - shift))
    return TaskPopulation(p_old, p_new, change)


def simulate_intervals(population: TaskPopulation, tasks: int, runs: int, k: int, *,
                       methods: tuple[str, ...] = METHODS, replicates: int = 2000,
                       confidence: float = 0.95, n_resamples: int = 999,
                       rng: int | np.random.Generator | None = None, floor: bool = True,
                       p_values: bool = True) -> dict[str, PairedTest]:
    r"""Simulated suites' intervals and p-values per method (see :func:`simulate_comparison`).

    ``floor=False`` gives the methods' intervals without the within-task floor
    (what :func:`compare_pass_hat_k` computed before it had one, for contrast);
    ``p_values=False`` skips the floor's p-value (the field is then the
    method's own), which the error rates of intervals do not need.

    Returns
    -------
    dict
        Per method, a :class:`PairedTest` of arrays of length ``replicates``.

    Examples
    --------
    >>> pop = task_population(10_000, rng=1)
    >>> out = simulate_intervals(pop, 50, 4, 2, methods=("t", "welch"), replicates=3, rng=2)
    >>> out["t"].low.shape, bool(np.all(out["welch"].low < out["t"].low))
    ((3,), True)
    """
    gen = np.random.default_rng(rng)
    unknown = set(methods) - set(METHODS) - {"welch"}
    if unknown:
        raise ValueError(f"methods ({sorted(unknown)!r}) must be among {METHODS} or 'welch'")
    alpha = 1.0 - _confidence(confidence)
    table = np.asarray(estimate_pass_hat_k(np.arange(runs + 1), runs, k), dtype=float)
    parts: dict[str, list[PairedTest]] = {m: [] for m in methods}
    block = 500  # fresh bootstrap weights and sign patterns every block of replicates
    for lo in range(0, replicates, block):
        r = min(block, replicates - lo)
        idx = gen.integers(0, population.p_old.size, size=(r, tasks))
        h_old = table[gen.binomial(runs, population.p_old[idx])]
        h_new = table[gen.binomial(runs, population.p_new[idx])]
        weight = np.full(h_old.shape, _floor_weight(k, runs))
        for m in methods:
            if m == "welch":
                parts[m].append(_welch(h_old, h_new, alpha))
                continue
            res = paired_difference_test(h_new - h_old, method=m, confidence=1 - alpha,
                                         n_resamples=n_resamples, rng=gen)
            if floor:
                res = _floored(res, h_old, h_new, weight, weight, alpha, p_value=p_values)
            parts[m].append(res)
    return {m: PairedTest(*(np.concatenate(x) for x in zip(*v))) for m, v in parts.items()}


def simulate_suites(rates: npt.ArrayLike, tasks: int, runs: int, k: int, *,
                    drop: float = 0.0, method: str = "t", floor: bool = True,
                    replicates: int = 2000, confidence: float = 0.95,
                    rng: int | np.random.Generator | None = None
                    ) -> tuple[PairedTest, np.ndarray]:
    r"""Simulated comparisons of suites drawn from a pool of task rates, with an exact change.

    Each replicate draws ``tasks`` single-run rates from ``rates`` (with
    replacement) for the old version. The new version's pass^k of every task
    is the old one scaled, :math:`\theta_{\text{new}} = s\,\theta_{\text{old}}`,
    with s chosen *in each suite* so that the suite's mean pass^k changes by
    exactly ``-drop`` (:math:`s = 1 - \text{drop}/\bar\theta_{\text{old}}`;
    ``drop = 0``: the versions are the same). Scaling works where a logit
    shift cannot (a task at p = 1). Where a suite's mean pass^k is below
    ``drop`` the whole suite is broken (s = 0) and its true change is larger
    than ``-drop``: ``truth`` says so.

    Returns
    -------
    PairedTest, ndarray
        The intervals (vectorized over ``replicates``; the floor's p-value is
        not computed, the field is the method's) and each suite's true change.

    Examples
    --------
    >>> res, truth = simulate_suites([1.0], 10, 2, 1, drop=0.01, replicates=500, rng=0)
    >>> bool(np.allclose(truth, -0.01)), float(np.mean(res.low > -0.01))  # never non-inferior
    (True, 0.0)
    >>> old, _ = simulate_suites([1.0], 10, 2, 1, drop=0.01, floor=False, replicates=500,
    ...                          rng=0)
    >>> float(np.mean(old.low > -0.01))  # without the floor: 0.99**20 = 0.82
    0.826
    """
    pool = np.asarray(rates, dtype=float).ravel()
    if pool.size == 0 or not np.all((pool >= 0) & (pool <= 1)):
        raise ValueError(f"rates ({rates!r}) must be a non-empty array of values in [0, 1]")
    t_count = int(_whole_numbers(tasks, "tasks", minimum=2))
    n_runs = int(_whole_numbers(runs, "runs", minimum=1))
    k_ = int(_whole_numbers(k, "k", minimum=1))
    if k_ > n_runs:
        raise ValueError(f"k ({k_}) cannot exceed runs ({n_runs})")
    if not 0 <= drop < 1:
        raise ValueError(f"drop ({drop!r}) must lie in [0, 1)")
    gen = np.random.default_rng(rng)
    alpha = 1.0 - _confidence(confidence)
    table = np.asarray(estimate_pass_hat_k(np.arange(n_runs + 1), n_runs, k_), dtype=float)
    parts: list[PairedTest] = []
    truths = []
    block = max(1, 400_000 // t_count)
    for lo in range(0, replicates, block):
        r = min(block, replicates - lo)
        p_old = pool[gen.integers(0, pool.size, size=(r, t_count))]
        theta = p_old**k_
        mean = theta.mean(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.clip(np.where(mean > 0, 1.0 - drop / mean, 1.0), 0.0, 1.0)
        theta_new = theta * scale[:, None]
        truths.append((theta_new - theta).mean(axis=1))
        h_old = table[gen.binomial(n_runs, p_old)]
        h_new = table[gen.binomial(n_runs, theta_new ** (1.0 / k_))]
        res = paired_difference_test(h_new - h_old, method=method, confidence=1 - alpha,
                                     rng=gen, n_resamples=999)
        if floor:
            weight = np.full(h_old.shape, _floor_weight(k_, n_runs))
            res = _floored(res, h_old, h_new, weight, weight, alpha, p_value=False)
        parts.append(PairedTest(*(np.atleast_1d(x) for x in res)))
    return PairedTest(*(np.concatenate(x) for x in zip(*parts))), np.concatenate(truths)


def simulate_comparison(population: TaskPopulation, tasks: int, runs: int, k: int, *,
                        methods: tuple[str, ...] = METHODS, replicates: int = 2000,
                        confidence: float = 0.95, n_resamples: int = 999,
                        rng: int | np.random.Generator | None = None
                        ) -> dict[str, dict[str, float]]:
    r"""Monte Carlo error rates of the interval methods on one population and design.

    Parameters
    ----------
    population : TaskPopulation
        Tasks are drawn from it with replacement, ``tasks`` per replicate.
    tasks, runs, k : int
        Tasks per suite, runs per task and version, and the k of pass^k.
    methods : tuple of str
        Among :data:`METHODS`, plus ``'welch'`` (the unpaired Welch t interval,
        for contrast: it ignores that the tasks are the same).
    replicates : int, default 2000
        Simulated suites.
    confidence : float, default 0.95
        Two-sided confidence level.
    n_resamples : int, default 999
        Resamples or sign patterns per replicate for the resampling methods.
    rng : int, numpy.random.Generator or None
        Seed or generator.

    Returns
    -------
    dict
        Per method: ``reject`` (the interval excludes 0: the Type I error when
        the population's change is 0), ``worse`` (the interval lies below 0:
        power against a drop, or the gate's false-alarm rate under no change),
        ``cover`` (the interval holds the population's true change) and
        ``width`` (mean width).

    Examples
    --------
    >>> pop = task_population(10_000, rng=1)
    >>> out = simulate_comparison(pop, 50, 4, 2, methods=("t",), replicates=400, rng=2)
    >>> round(out["t"]["reject"], 3), round(out["t"]["cover"], 3)
    (0.037, 0.963)
    """
    truth = population.delta(k)
    out = simulate_intervals(population, tasks, runs, k, methods=methods, replicates=replicates,
                             confidence=confidence, n_resamples=n_resamples, rng=rng)
    return {m: {"reject": float(np.mean((r.low > 0) | (r.high < 0))),
                "worse": float(np.mean(r.high < 0)),
                "cover": float(np.mean((r.low <= truth) & (truth <= r.high))),
                "width": float(np.mean(r.high - r.low))} for m, r in out.items()}


def _welch(h_old: np.ndarray, h_new: np.ndarray, alpha: float) -> PairedTest:
    from scipy import stats
    t_count = h_old.shape[-1]
    v1, v2 = h_old.var(axis=-1, ddof=1) / t_count, h_new.var(axis=-1, ddof=1) / t_count
    mean = h_new.mean(axis=-1) - h_old.mean(axis=-1)
    se = np.sqrt(v1 + v2)
    with np.errstate(divide="ignore", invalid="ignore"):
        df = np.where(se > 0, (v1 + v2) ** 2 / (v1**2 / (t_count - 1) + v2**2 / (t_count - 1)),
                      t_count - 1)
        q = stats.t.ppf(1 - alpha / 2, np.nan_to_num(df, nan=t_count - 1))
        p = np.where(se > 0, 2 * stats.t.sf(np.abs(mean) / se, df), 1.0)
    return PairedTest(mean, mean - q * se, mean + q * se, p)
