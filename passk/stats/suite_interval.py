r"""The suite interval: the mean over a fixed task set of :math:`p_i^k`, with its interval.

:func:`mean_pass_hat_k_ci` averages the per-task unbiased pass^k estimates of
:mod:`passk.metrics` and puts an interval round the mean; :class:`SuiteInterval` carries
the result, :data:`SUITE_CI_METHODS` the methods and their printable labels. The default,
``'hoeffding'``, has a proved level for every suite, every level and every design; the
proof is in the function's Notes. ``benchmarks/bench_coverage.py`` measures all of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from passk._public import publish
from passk._validation import FloatOrArray, confidence_level, whole_numbers
from passk._validation import counts as _counts
from passk.errors import BadInput
from passk.metrics import (
    _BISECTIONS,
    ArrayLike,
    ConfidenceInterval,
    _clopper_pearson,
    estimate_pass_hat_k,
    estimate_pass_hat_k_variance,
    pass_hat_k_ci,
)
from passk.render.words import plural

__all__ = ["PRODUCT_MAX_TASKS", "SUITE_CI_METHODS", "SUITE_MIN_TASKS", "SuiteInterval",
           "mean_pass_hat_k_ci"]

# --------------------------------------------------------------------------
# the suite: an interval for the mean over tasks of pass^k
# --------------------------------------------------------------------------

#: Above this many task draws (tasks times resamples) the suite bootstrap draws
#: per-value counts instead of task indices (see ``_bootstrap_means``).
_DIRECT_RESAMPLING_MAX = 4_000_000

#: Methods of :func:`mean_pass_hat_k_ci`, with the label a report prints.
SUITE_CI_METHODS: dict[str, str] = {
    "hoeffding": "binomial-dominated bound (Hoeffding–Bentkus) with the exact union, proved",
    "product": "exact product of the tasks' own Clopper–Pearson intervals (Šidák), proved",
    "score": "score interval (worst-case within-task variance), approximate",
    "union": "exact per-task Clopper–Pearson at level 1 - alpha/T, averaged",
    "studentized": "studentized normal (within-task binomial variance)",
    "t": "t over tasks",
    "percentile": "percentile bootstrap over tasks",
}

#: Fewest tasks for which ``'score'`` is computed; below, ``'score'`` becomes ``'union'``.
SUITE_MIN_TASKS = 5

#: Why each method that does not keep its level for a fixed suite does not.
_LEVEL_NOT_KEPT = {
    "score": "a normal approximation: exact coverage 0.9486 at 95% and 0.9674 at 99% on "
             "identical tasks when one run in the suite failed (issue 23)",
    "studentized": "it estimates each task's variance from its runs, and under-covers where "
                   "n < 2k (0.800 measured at 95%, bench_coverage.py)",
    "t": "it resamples tasks: its level is for tasks like these, not for these tasks",
    "percentile": "it resamples tasks: its level is for tasks like these, not for these tasks",
}


@dataclass(frozen=True)
class SuiteInterval:
    r"""The mean over tasks of the unbiased per-task pass^k, with its interval.

    Attributes
    ----------
    estimate : float
        :math:`\bar\theta = \frac1T \sum_i \binom{c_i}{k} / \binom{n_i}{k}` over
        the tasks with at least k runs (NaN if there are none).
    ci : ConfidenceInterval
        Two-sided interval for the mean over these tasks of :math:`p_i^k`.
    method : str
        The key of :data:`SUITE_CI_METHODS` actually used (``'score'`` on
        fewer than :data:`SUITE_MIN_TASKS` tasks becomes ``'union'``; ``'t'``
        or ``'percentile'`` that cannot be computed fall back to the default
        ``'hoeffding'``; ``note`` says why).
    n_tasks : int
        Tasks averaged (those with ``n >= k``).
    n_excluded : int
        Tasks left out because they have fewer than k runs.
    confidence : float
        The two-sided confidence level asked for.
    note : str
        Empty, or why the method differs from the one requested, or why the
        level is not kept.
    level_kept : bool
        True when the interval keeps ``confidence`` for these tasks, whatever
        their success rates (``'hoeffding'`` and ``'union'``); False for the
        methods that do not promise it (``'score'``, ``'studentized'``, ``'t'``,
        ``'percentile'``), and then :attr:`level` does not print a bare "95%".
    """

    estimate: float
    ci: ConfidenceInterval
    method: str
    n_tasks: int
    n_excluded: int
    confidence: float
    note: str = ""
    level_kept: bool = True

    @property
    def label(self) -> str:
        """The method's printable name, e.g. ``'t over tasks'``."""
        return SUITE_CI_METHODS[self.method]

    @property
    def level(self) -> str:
        """The level as a report prints it: ``'95%'``, or ``'95% nominal, not guaranteed'``."""
        level = f"{self.confidence:.0%}"
        return level if self.level_kept else f"{level} nominal, not guaranteed"


def _pass_hat_k_variance_at(n: int, k: int, p: np.ndarray) -> np.ndarray:
    r"""The exact variance of ``C(c, k) / C(n, k)`` for ``c ~ Binomial(n, p)``, over an array of p.

    ``sum_{j=1}^{k} h_j p^(2k-j) (1 - p^j)``, with ``h_j = C(k, j) C(n-k, k-j) / C(n, k)``
    the chance that two random k-subsets of the n runs share j runs; in logs, so that
    large n and k do not overflow. Requires ``1 <= k <= n``.
    """
    with np.errstate(divide="ignore"):
        log_p = np.log(p)
    variance = np.zeros(p.shape)
    log_pairs = float(_log_comb(float(n), k))
    for j in range(max(1, 2 * k - n), k + 1):  # h_j = 0 where n - k < k - j
        log_h = float(_log_comb(float(k), j) + _log_comb(float(n - k), k - j)) - log_pairs
        with np.errstate(invalid="ignore"):  # 0 * -inf at p = 0: the term is 0
            term = np.exp(log_h + (2 * k - j) * log_p) * -np.expm1(j * log_p)
        variance += np.where(p > 0, term, 0.0)
    return variance


@lru_cache(maxsize=256)
def _worst_case_variance(n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Vertices of the least concave majorant of :math:`\theta \mapsto v_n(\theta)`.

    :math:`v_n(\theta)` is :func:`_pass_hat_k_variance_at` at :math:`p = \theta^{1/k}`.
    Sampled at 4,001 values of p and of theta (dense where p^k changes fast), and
    hulled from above; ``np.interp`` on the vertices gives the majorant.
    """
    grid = np.linspace(0.0, 1.0, 4001)
    p = np.union1d(grid, grid ** (1.0 / k))
    theta = p**k
    v = _pass_hat_k_variance_at(n, k, p)
    hull: list[int] = []  # the upper hull, left to right (Andrew's monotone chain)
    for i in range(p.size):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            if (theta[b] - theta[a]) * (v[i] - v[a]) - (v[b] - v[a]) * (theta[i] - theta[a]) >= 0:
                hull.pop()  # b lies on or below the chord from a to i
            else:
                break
        hull.append(i)
    vertices, values = theta[hull], v[hull]
    vertices.setflags(write=False)
    values.setflags(write=False)
    return vertices, values


def _score_bounds(estimate: np.ndarray, tasks: int, n_min: int, k: int,
                  alpha: float, *, bernoulli: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The ``'score'`` interval's ends for an array of suite means, by bisection.

    All suites share T = ``tasks``, the fewest runs ``n_min`` and ``k``; see
    :func:`mean_pass_hat_k_ci` for the construction. Each end is returned from
    the outside (never too narrow by rounding). ``bernoulli``: every task has
    exactly k runs, so T times the estimate is a count of all-pass tasks, and
    the ends are widened where needed to Clopper–Pearson's for that count.
    """
    if bernoulli:
        low, high = _score_bounds(estimate, tasks, n_min, k, alpha)
        passed = np.rint(np.asarray(estimate, dtype=float) * tasks)
        cp_low, cp_high = _clopper_pearson(passed, np.full(passed.shape, tasks), alpha)
        return np.minimum(low, cp_low), np.maximum(high, cp_high)
    from scipy.special import ndtri  # the normal quantile, as scipy.stats.norm.ppf

    vertices, values = _worst_case_variance(n_min, k)
    z = float(ndtri(1 - alpha / 2))
    step = k / (2.0 * n_min * tasks)  # the continuity correction

    x = np.asarray(estimate, dtype=float)

    def gap(theta: np.ndarray) -> np.ndarray:  # <= 0 where theta is accepted
        spread = z * np.sqrt(np.interp(theta, vertices, values) / tasks)
        below: np.ndarray = np.abs(x - theta) - step - spread
        return below

    def accepted(theta: np.ndarray) -> np.ndarray:
        return gap(theta) <= 0

    out_low, in_low = np.zeros_like(x), x.copy()  # rejected (or 0) .. accepted
    in_high, out_high = x.copy(), np.ones_like(x)
    for _ in range(_BISECTIONS):
        mid = 0.5 * (out_low + in_low)
        ok = accepted(mid)
        in_low, out_low = np.where(ok, mid, in_low), np.where(ok, out_low, mid)
        mid = 0.5 * (in_high + out_high)
        ok = accepted(mid)
        in_high, out_high = np.where(ok, mid, in_high), np.where(ok, out_high, mid)
    low = np.where(accepted(np.zeros_like(x)), 0.0, out_low)
    high = np.where(accepted(np.ones_like(x)), 1.0, out_high)
    return low, high


def _posterior_variance(c: np.ndarray, n: np.ndarray, k: int) -> np.ndarray:
    r"""``E[Var(theta_hat | p)]`` for ``p ~ Beta(c + 1/2, n - c + 1/2)`` (Jeffreys), elementwise.

    ``Var(theta_hat | p) = sum_j h_j (p^(2k-j) - p^(2k))`` with ``h_j`` the
    hypergeometric probability that two random k-subsets of n runs share j
    runs. The posterior moments are running products, and each difference
    ``M_(2k-j) - M_(2k)`` is taken as ``M_(2k-j) * -expm1(...)`` so that it
    keeps its digits when both are near 1. Requires ``k <= n``.
    """
    c, n = c.astype(float), n.astype(float)
    a, b = c + 0.5, n - c + 0.5
    # log_m[m] = log E[p^m] = sum_{i<m} log((a+i)/(a+b+i)); tail[m] = log(E[p^2k] / E[p^m])
    log_m = np.zeros((2 * k + 1, *c.shape))
    step = np.zeros((2 * k, *c.shape))
    for i in range(2 * k):
        step[i] = np.log1p(-b / (a + b + i))
        log_m[i + 1] = log_m[i] + step[i]
    tail = np.cumsum(step[::-1], axis=0)[::-1]  # tail[m] = sum_{i>=m} step[i]
    variance = np.zeros(c.shape)
    log_pairs = _log_comb(n, k)
    for j in range(max(1, 2 * k - int(n.max())), k + 1):  # j = 0 adds p^2k - p^2k = 0
        # h_j = C(k, j) C(n-k, k-j) / C(n, k); 0 where n - k < k - j
        possible = n - k >= k - j
        log_h = _log_comb(float(k), j) + _log_comb(np.where(possible, n - k, k - j), k - j)
        h_j = np.where(possible, np.exp(log_h - log_pairs), 0.0)
        m = 2 * k - j
        variance += h_j * np.exp(log_m[m]) * -np.expm1(tail[m])
    return variance


def _log_comb(n: FloatOrArray, k: int | np.ndarray) -> FloatOrArray:
    """``log C(n, k)`` through log-gamma, for ``0 <= k <= n``."""
    from scipy.special import gammaln

    return gammaln(np.add(n, 1.0)) - gammaln(k + 1.0) - gammaln(np.subtract(n, k) + 1.0)


def _all_pass_lower(tasks: int, n_min: int, k: int, alpha: float) -> float:
    """Exact lower end for the mean of p_i^k when every one of T tasks passed all its runs.

    P(all pass) = prod p_i^(n_i) <= (prod p_i^k)^(n_min/k) <= theta^(T n_min / k) by AM-GM,
    so a theta below ``(alpha/2)^(k / (T n_min))`` would make what was seen rarer than alpha/2.
    """
    return float((alpha / 2) ** (k / (tasks * n_min)))


def _all_fail_upper(tasks: int, n_min: int, k: int, alpha: float) -> float:
    """Exact upper end for the mean of p_i^k when every one of T tasks failed all its runs.

    The largest mean of p_i^k among suites that fail everything with probability at least
    alpha/2: with u_i = -log(1 - p_i) the constraint is sum u_i <= U = -log(alpha/2) / n_min
    and the objective sum g(u_i), g(u) = (1 - e^-u)^k, is convex then concave, so its
    supremum is T times the concave envelope of g at U/T:
    ``(U/T) max_{U/T <= u <= U} g(u)/u``, with g(u)/u unimodal.
    """
    budget = -np.log(alpha / 2) / n_min
    lo, hi = budget / tasks, budget

    def slope(u: float) -> float:
        return float((-np.expm1(-u)) ** k / u)

    # g(u)/u peaks where k u = e^u - 1 (for k > 1; for k = 1 it falls from u = 0):
    # that root by bisection, then clipped to [lo, hi] (the ratio is unimodal)
    peak_at = lo
    if k > 1:
        left, right = 1e-300, 2.0 * k + 2.0  # e^u - 1 - k u < 0 at left, > 0 at right
        for _ in range(200):
            mid = 0.5 * (left + right)
            if np.expm1(mid) - k * mid < 0:
                left = mid
            else:
                right = mid
            if right - left <= 1e-15 * right:
                break
        peak_at = min(max(0.5 * (left + right), lo), hi)
    peak = max(slope(lo), slope(hi), slope(peak_at)) * (1.0 + 1e-12)
    return float(min(1.0, lo * peak))


def _bootstrap_means(values: np.ndarray, counts: np.ndarray, n_resamples: int,
                     generator: np.random.Generator) -> np.ndarray:
    """Means of ``n_resamples`` bootstrap resamples of tasks, drawn exactly.

    Small suites draw T task indices per resample. In a large suite,
    resampling T tasks with replacement only changes how many copies of each
    distinct value a resample holds, and those copies are
    ``Multinomial(T, counts / T)``: drawn one value at a time as conditional
    binomials, vectorized over resamples, so the cost grows with the number
    of distinct values, not with T. Both are exact.
    """
    distinct, where = np.unique(values, return_inverse=True)
    weight = np.bincount(where.ravel(), weights=counts).astype(np.int64)
    total = int(weight.sum())
    if total * n_resamples <= _DIRECT_RESAMPLING_MAX:  # small suites: draw the tasks themselves
        tasks = np.repeat(distinct, weight)
        drawn = generator.integers(0, total, size=(n_resamples, total))
        means: np.ndarray = tasks[drawn].mean(axis=1)
        return means
    left = np.full(n_resamples, total, dtype=np.int64)  # tasks still to draw, per resample
    unseen = total  # tasks of the values not yet visited
    sums = np.zeros(n_resamples)
    for value, w in zip(distinct[:-1].tolist(), weight[:-1].tolist()):
        drawn = generator.binomial(left, w / unseen)
        sums += value * drawn
        left -= drawn
        unseen -= w
    sums += distinct[-1] * left
    return sums / total




# --------------------------------------------------------------------------
# the proven default: a binomial-dominated tail bound, intersected with the union interval
# --------------------------------------------------------------------------

#: The share of alpha the default ``'hoeffding'`` interval gives to its ``'union'`` part
#: when some task has fewer than 2k runs (chosen from the design, never from the data);
#: the rest goes to the binomial-dominated part. With n >= 2k everywhere it gets none.
UNION_SHARE = 0.1


def _union_share(n: np.ndarray, k: int) -> float:
    """The union part's share of alpha: :data:`UNION_SHARE` if some ``n < 2k``, else 0."""
    return UNION_SHARE if bool(np.any(n < 2 * k)) else 0.0


#: The binomial's mass cut off above the evaluated window, at most this (Hoeffding's
#: exp(-2 W^2 / N) for a window W atoms past the mean); it is added to the bound.
_CUT = 1e-15

#: Relative allowance for rounding in the binomial's log-pmf (``gammaln`` of numbers up to
#: N log N) and in its sums: the Bentkus bound is multiplied by ``1 + _rounding(N, L)``.
_EPS = float(np.finfo(float).eps)


def _rounding(size: int, length: int) -> float:
    """A relative allowance above the floating-point error of :func:`_upper_tail`'s sums."""
    from math import lgamma

    # log-pmf: five terms, each at most about log N! or N in size near the mean, each
    # rounded to a few ulps; the sums: at most ``length`` additions of positive terms
    return 64.0 * _EPS * (3.0 * lgamma(size + 1.0) + 2.0 * size + length + 16.0)


def _window(size: int) -> int:
    """W, the atoms kept on each side of the binomial's mean: ``exp(-2 W^2 / N) <= _CUT``."""
    return int(np.ceil(np.sqrt(size * -np.log(_CUT) / 2.0))) + 1


#: The grid points of :func:`_variance_majorant` that do not depend on k (uniform in p, and
#: geometric near p = 1); each k adds its own ``linspace ** (1/k)``.
_SHARED_P = np.unique(np.concatenate([np.linspace(0.0, 1.0, 2001),
                                      1.0 - np.geomspace(1e-9, 0.5, 600), [0.0, 1.0]]))
_SHARED_P.setflags(write=False)

#: Largest table of powers ``p ** e`` of the shared grid points kept for one n (entries).
_POWER_TABLE_MAX = 2**23

#: Rows of terms summed at once in :func:`_variance_majorant` (bounds its memory).
_TERM_ROWS = 128


class _SharedPowers:
    """``_SHARED_P ** e`` for e = 0..n (2k - j is at most n), each row computed (by
    ``np.power``) the first time it is asked for: every k of a curve over one n reuses the
    rows of the others."""

    def __init__(self, n: int) -> None:
        self.table = np.empty((n + 1, _SHARED_P.size))
        self.done = np.zeros(n + 1, dtype=bool)

    def rows(self, exponents: np.ndarray) -> np.ndarray:
        todo = exponents[~self.done[exponents]]
        if todo.size:
            self.table[todo] = _SHARED_P[None, :] ** todo[:, None].astype(float)
            self.done[todo] = True
        out: np.ndarray = self.table[exponents]
        return out


@lru_cache(maxsize=2)
def _shared_powers(n: int) -> _SharedPowers | None:
    """The table of powers of the shared grid points for this n (None when too large)."""
    if (n + 1) * _SHARED_P.size > _POWER_TABLE_MAX:
        return None
    return _SharedPowers(n)


@lru_cache(maxsize=256)
def _variance_majorant(n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    r"""A concave function above :math:`\theta \mapsto v_n(\theta)` everywhere: its vertices.

    :math:`v_n(\theta)` is the exact variance of ``C(c, k) / C(n, k)`` at :math:`p =
    \theta^{1/k}` (:func:`_pass_hat_k_variance_at`). On each interval
    :math:`[p_a, p_{a+1}]` of a grid (uniform in p, in :math:`p^k` and near p = 1
    geometric), :math:`v = \sum_j h_j (p^{2k-j} - p^{2k}) \le \sum_j h_j
    (p_{a+1}^{2k-j} - p_a^{2k}) = u_a`; each grid point gets the larger u of its two
    intervals, and the upper hull of those points (Andrew's monotone chain) is concave
    and at least :math:`\min(u_a, u_a) \ge v` on every interval. So it is above the
    least concave majorant, with no grid error. ``np.interp`` on the vertices evaluates it.

    The sum over j is taken term by term in increasing j (the same additions in the
    same order as a loop over j), with every power
    ``p ** e`` by ``np.power``; the powers of the grid points shared by every k come
    from a table kept per n (:func:`_shared_powers`), so that a curve over k = 1..K
    raises each of them to each power once (issue 41).
    """
    grid = np.linspace(0.0, 1.0, 2001)
    p = np.unique(np.concatenate([grid, grid ** (1.0 / k), 1.0 - np.geomspace(1e-9, 0.5, 600),
                                  [0.0, 1.0]]))
    log_pairs = float(_log_comb(float(n), k))
    a, b = p[:-1], p[1:]
    a2k = a ** (2 * k)
    js = np.arange(max(1, 2 * k - n), k + 1)
    h = np.exp(_log_comb(float(k), js) + _log_comb(float(n - k), k - js) - log_pairs)
    table = _shared_powers(n)
    at = np.searchsorted(_SHARED_P, b)
    shared = (at < _SHARED_P.size) & (_SHARED_P[np.minimum(at, _SHARED_P.size - 1)] == b)
    own = ~shared
    u = np.zeros(a.size)
    for first in range(0, js.size, _TERM_ROWS):
        j = js[first:first + _TERM_ROWS]
        e = 2 * k - j
        powers = np.empty((j.size, b.size))
        if table is None:
            powers[...] = b[None, :] ** e[:, None].astype(float)
        else:
            powers[:, shared] = table.rows(e)[:, at[shared]]
            powers[:, own] = b[own][None, :] ** e[:, None].astype(float)
        powers -= a2k[None, :]
        powers *= h[first:first + _TERM_ROWS, None]
        for row in powers:  # the running sum, then each term in turn
            u += row
    u = np.maximum(u, 0.0) * (1.0 + 1e-12) + 1e-300
    w = np.maximum(np.concatenate([u[:1], u]), np.concatenate([u, u[-1:]]))
    theta = p**k
    xs, ys = theta.tolist(), w.tolist()  # Python floats: the loop below is scalar
    hull: list[int] = []
    for i, (xi, yi) in enumerate(zip(xs, ys)):
        while len(hull) >= 2:
            i0, i1 = hull[-2], hull[-1]
            if (xs[i1] - xs[i0]) * (yi - ys[i0]) - (ys[i1] - ys[i0]) * (xi - xs[i0]) >= 0:
                hull.pop()
            else:
                break
        hull.append(i)
    vertices, values = theta[hull], w[hull]
    vertices.setflags(write=False)
    values.setflags(write=False)
    return vertices, values


def _upper_tail(x: np.ndarray, theta: np.ndarray, size: int, *, bernoulli: bool,
                variance: np.ndarray | None, tasks: int) -> np.ndarray:
    r"""A bound on :math:`P(X \ge x)` at the hypothesis :math:`\theta` (arrays of one shape).

    The smaller of two bounds on the same probability (see :func:`mean_pass_hat_k_ci`):
    Bentkus's :math:`\min_h E(Y - h)_+/(x - h)` for ``Y = Binomial(size, theta) / size``
    over the atoms h of a window around the mean, and Hoeffding's (1963, Theorem 3)
    variance bound :math:`\exp(-T\,D)` with the per-task variance ``variance`` (None: not
    used) over ``tasks`` tasks. The binomial is evaluated only on the window; the mass
    above it (at most :data:`_CUT`) is added, and the sums are inflated by
    :func:`_rounding`, so the bound is never below the exact one.
    """
    from scipy.special import gammaln, xlog1py, xlogy

    n_atoms = size + 1
    half_width = _window(size)
    length = min(n_atoms, 2 * half_width + 1)
    start = np.clip(np.floor(theta * size).astype(np.int64) - half_width, 0, n_atoms - length)
    j = start[..., None] + np.arange(length)
    cut = np.where(start + length < n_atoms, _CUT, 0.0)  # bounds P(N Y >= start + length)
    t = theta[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        log_pmf = (gammaln(size + 1.0) - gammaln(j + 1.0) - gammaln(size - j + 1.0)
                   + xlogy(j, t) + xlog1py(size - j, -t))
        pmf = np.exp(log_pmf)
    above = np.cumsum(pmf[..., ::-1], axis=-1)[..., ::-1] + cut[..., None]  # P(NY >= j)
    # E(NY - j)_+ = sum_{i > j} P(NY >= i): in the window, then at most (N - end) cut beyond
    excess = np.cumsum(above[..., ::-1], axis=-1)[..., ::-1]
    end = start + length - 1
    excess = (np.concatenate([excess[..., 1:], np.zeros((*excess.shape[:-1], 1))], axis=-1)
              + ((size - end) * cut)[..., None])
    gap = x[..., None] * size - j
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(gap > 0, excess / gap, np.inf)
    bound = np.minimum(1.0, ratio.min(axis=-1) * (1.0 + _rounding(size, length)))
    if bernoulli:
        s = np.rint(x * size).astype(np.int64)
        beyond = s >= size * theta + 1.0
        inside = np.clip(s - start, 0, length - 1)
        binomial = np.where(s > end, cut,
                            np.take_along_axis(above, inside[..., None], axis=-1)[..., 0])
        binomial = binomial * (1.0 + _rounding(size, length))
        bound = np.where(beyond, np.minimum(bound, binomial), bound)
    if variance is not None:
        dev = x - theta
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            s2 = np.maximum(variance, 1e-300)
            d = (xlog1py(s2 + dev, dev / s2) + xlog1py(1.0 - dev, -dev)) / (1.0 + s2)
            bennett = np.where(dev > 0, np.exp(-tasks * d) * (1.0 + 1e-9), 1.0)
        bound = np.minimum(bound, np.where(np.isnan(bennett), 1.0, bennett))
    out: np.ndarray = bound
    return out


def _tail_bounds(x: np.ndarray, theta: np.ndarray, size: int, *, bernoulli: bool,
                 upper: bool, spread: tuple[int, int, int] | None = None) -> np.ndarray:
    r"""A bound on :math:`P(X \ge x)` (``upper``) or :math:`P(X \le x)` at :math:`\theta`.

    X is a group's mean of the per-task estimates, below ``Binomial(size, theta) / size``
    in convex order; ``x`` and ``theta`` are arrays of one shape. ``spread`` =
    (tasks, n, k): the group's tasks, its fewest runs and k, for the exact-variance bound
    (None: the binomial-dominated bound alone). The lower tail is the upper tail of
    1 - X (mirrored x, theta and Y; the variance is the same). ``bernoulli``: X is itself
    a mean of ``size`` independent Bernoulli variables, and where x is at least 1/size
    beyond the mean Hoeffding's (1956) binomial tail is used too.
    """
    x = np.asarray(x, dtype=float)
    theta = np.asarray(theta, dtype=float)
    variance = None
    tasks = 0
    if spread is not None:
        tasks, n, k = spread
        vertices, values = _variance_majorant(n, k)
        variance = np.interp(theta, vertices, values)
    if upper:
        return _upper_tail(x, theta, size, bernoulli=bernoulli, variance=variance, tasks=tasks)
    return _upper_tail(1.0 - x, 1.0 - theta, size, bernoulli=bernoulli, variance=variance,
                       tasks=tasks)


#: Stop when the bracket is this narrow (the end is returned from outside it).
_TOLERANCE = 2.0**-47

#: Regula falsi (Illinois) steps before plain bisection takes over.
_SECANT_STEPS = 40


def _hoeffding_bounds(x: np.ndarray, size: int, alpha: float, *, bernoulli: bool,
                      spread: tuple[int, int, int] | None = None,
                      ) -> tuple[np.ndarray, np.ndarray]:
    r"""Ends of :math:`\{\theta : \text{both tail bounds at } \theta > \alpha/2\}` for means ``x``.

    Each tail bound is monotone in theta (see :func:`mean_pass_hat_k_ci`'s Notes), so the
    accepted set is an interval; both ends are found together (one evaluation of the
    binomial per step for both) by regula falsi on log(bound) with the Illinois rule, then
    bisection if needed, in brackets that Hoeffding's inequality narrows to
    :math:`x \mp \sqrt{\log(2/\alpha)/(2N)}` (the Bentkus bound is below it, and the
    outer end is checked), and returned from the outside (rejected side).
    """
    x = np.asarray(x, dtype=float).ravel()
    half = alpha / 2
    m = x.size
    reach = np.sqrt(np.log(2.0 / alpha) / (2.0 * size)) * 1.01 + 1e-9
    out = np.concatenate([np.maximum(0.0, x - reach), np.minimum(1.0, x + reach)])
    inside = np.concatenate([x, x])
    mirrored = np.concatenate([np.zeros(m, bool), np.ones(m, bool)])
    xs = np.where(mirrored, 1.0 - inside, inside)

    def log_ratio(theta: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """log(bound / (alpha/2)) at ``theta`` for the ends ``idx``, and bound > alpha/2."""
        th = np.where(mirrored[idx], 1.0 - theta, theta)
        variance = None
        tasks = 0
        if spread is not None:
            tasks = spread[0]
            variance = np.interp(theta, *_variance_majorant(spread[1], spread[2]))
        bound = _upper_tail(xs[idx], th, size, bernoulli=bernoulli, variance=variance,
                            tasks=tasks)
        with np.errstate(divide="ignore"):
            return np.log(bound) - np.log(half), bound > half

    every = np.arange(2 * m)
    ok = log_ratio(out, every)[1]  # the outer end accepted: widen it to 0 or 1
    out = np.where(ok, np.where(mirrored, 1.0, 0.0), out)
    f_out, done = log_ratio(out, every)  # accepted at 0 (or 1): the end is 0 (or 1)
    f_in = np.full(2 * m, -np.log(half))  # at theta = x the bound is 1
    moved = np.zeros(2 * m, dtype=np.int8)  # which end the last step moved: -1 out, 1 in
    for step in range(_SECANT_STEPS + 64):
        live = np.flatnonzero(~done & (np.abs(inside - out) > _TOLERANCE))
        if live.size == 0:
            break
        lo, hi, fo, fi = out[live], inside[live], f_out[live], f_in[live]
        if step < _SECANT_STEPS:  # Illinois (regula falsi on log(bound)), kept in bracket
            with np.errstate(invalid="ignore", divide="ignore"):
                share = np.where(np.isfinite(fo), -fo / (fi - fo), 0.5)
            share = np.clip(np.nan_to_num(share, nan=0.5), 1e-3, 1.0 - 1e-3)
        else:  # then plain bisection, so that it always ends
            share = np.full(live.size, 0.5)
        trial = lo + share * (hi - lo)
        f, good = log_ratio(trial, live)
        both = moved[live]  # the same end moved twice: halve the other's value (Illinois)
        f_out[live] = np.where(good, np.where(both == 1, 0.5 * fo, fo), f)
        f_in[live] = np.where(good, f, np.where(both == -1, 0.5 * fi, fi))
        inside[live] = np.where(good, trial, hi)
        out[live] = np.where(good, lo, trial)
        moved[live] = np.where(good, 1, -1)
    return out[:m], out[m:]


#: Up to this many distinct m = n // k, a block may start at any of them.
_MAX_APART = 8


def _cut_points(ms: list[int], sizes: list[int]) -> list[int]:
    """Where a block of consecutive m may start: indices into the sorted distinct ``ms``.

    Every index when there are at most :data:`_MAX_APART` distinct m; otherwise a bounded
    set: where m passes ``m0 * sqrt(2)**i``, and where the tasks counted from the
    smallest m pass each eighth of all tasks, and after each of the four smallest m.
    Always 0 and ``len(ms)`` (the ends).
    """
    if len(ms) <= _MAX_APART:
        return list(range(len(ms) + 1))
    marks = np.array(ms, dtype=float)
    cuts = {0, len(ms)}
    edge = ms[0] * np.sqrt(2.0)
    while edge <= ms[-1]:
        cuts.add(int(np.searchsorted(marks, edge)))
        edge *= np.sqrt(2.0)
    cuts.update(range(1, 5))  # the few smallest m alone: they would drag a block down
    running = np.cumsum(sizes)
    for share in np.arange(1, 8) / 8:
        cuts.add(int(np.searchsorted(running, share * running[-1], side="right")))
    return sorted(c for c in cuts if 0 <= c <= len(ms))


@lru_cache(maxsize=4096)
def _width_at_half(size: int, alpha: float, bernoulli: bool,
                   spread: tuple[int, int, int] | None) -> float:
    """The width of one group's interval at a mean of 1/2 (for choosing the groups)."""
    lo, hi = _hoeffding_bounds(np.array([0.5]), size, alpha, bernoulli=bernoulli, spread=spread)
    return float(hi[0] - lo[0])


@lru_cache(maxsize=256)
def _groups(design: tuple[tuple[int, int, bool, int], ...], alpha: float,
            k: int) -> tuple[tuple[int, ...], ...]:
    """How to group the tasks, from the design alone: blocks of consecutive m values.

    ``design`` lists, per distinct m = n // k in increasing order, (m, tasks, whether
    those tasks all have one n with k = 1 or n = k, their fewest runs). A block of several
    m is bounded with its smallest m and fewest runs (a mean of more blocks is below a
    mean of fewer in convex order; the variance does not grow with n), at level
    ``alpha * T_g / T``. The width at a mean of 1/2 is a sum over blocks, so the grouping
    is found by dynamic programming (see the Notes of :func:`mean_pass_hat_k_ci`: exact
    widths up to :data:`_MAX_APART` distinct m; above, a normal approximation, checked
    against a few exact candidates). Nothing here sees the runs' outcomes, so choosing
    keeps the level.
    """
    ms = [d[0] for d in design]
    if len(ms) == 1:
        return ((ms[0],),)
    sizes = [d[1] for d in design]
    t = sum(sizes)
    best: dict[int, tuple[float, int]] = {0: (0.0, -1)}
    if len(ms) <= _MAX_APART:  # every partition, with the interval's own widths
        def cost(a: int, b: int) -> float:  # the block ms[a:b], weighted
            t_g = sum(sizes[a:b])
            bernoulli = b - a == 1 and design[a][2]
            return t_g / t * _width_at_half(ms[a] * t_g, alpha * t_g / t, bernoulli,
                                            (t_g, design[a][3], k))

        for b in range(1, len(ms) + 1):
            best[b] = min((best[a][0] + cost(a, b), a) for a in range(b))
    else:  # every partition too, with the normal approximation of each block's width
        from scipy.special import ndtri

        running = np.concatenate([[0], np.cumsum(sizes)]).astype(float)
        m_arr = np.array(ms, dtype=float)
        score = np.zeros(len(ms) + 1)
        start = np.zeros(len(ms) + 1, dtype=np.int64)
        for b in range(1, len(ms) + 1):
            starts = np.arange(b)
            t_g = running[b] - running[starts]
            width = t_g / t * ndtri(1.0 - alpha * t_g / (2.0 * t)) / np.sqrt(m_arr[starts] * t_g)
            total = score[starts] + width
            i = int(np.argmin(total))
            score[b], start[b] = total[i], i
        best = {b: (float(score[b]), int(start[b])) for b in range(len(ms) + 1)}
        best[0] = (0.0, -1)
    ends = []  # the chosen partition, as the ends of its blocks
    b = len(ms)
    while b > 0:
        ends.append(b)
        b = best[b][1]
    chosen = sorted(ends)
    if len(ms) > _MAX_APART:  # the approximation's pick against all together and the
        # two-block splits at the cut points, by the widths of the bound (Bentkus's)
        def exact(bounds: list[int]) -> float:
            total, a = 0.0, 0
            for b in bounds:
                t_g = sum(sizes[a:b])
                total += t_g / t * _width_at_half(ms[a] * t_g, alpha * t_g / t,
                                                  b - a == 1 and design[a][2], None)
                a = b
            return total

        options = [chosen, [len(ms)]] + [[c, len(ms)] for c in _cut_points(ms, sizes)[1:-1]]
        chosen = min(options, key=exact)
    blocks, first = [], 0
    for b in chosen:
        blocks.append(tuple(ms[first:b]))
        first = b
    return tuple(blocks)


def _design(pn: np.ndarray, counts: np.ndarray,
            k: int) -> tuple[tuple[int, int, bool, int], ...]:
    """Per distinct m = n // k: (m, tasks, whether they share one n with k = 1 or n = k,
    their fewest runs)."""
    blocks = pn // k
    out = []
    for m in np.unique(blocks).tolist():
        mine = blocks == m
        ns = np.unique(pn[mine])
        out.append((int(m), int(counts[mine].sum()),
                    ns.size == 1 and (k == 1 or int(ns[0]) == k), int(ns[0])))
    return tuple(out)


def _dominated_interval(pc: np.ndarray, pn: np.ndarray, counts: np.ndarray, values: np.ndarray,
                        k: int, alpha: float) -> tuple[float, float]:
    """The binomial-dominated part of ``'hoeffding'``: per group of tasks, then averaged.

    ``pc, pn, counts, values``: the distinct (c, n) pairs, how many tasks have each, and
    their unbiased estimates. The groups (blocks of m = n // k, :func:`_groups`) come from
    the design; each gets ``alpha * T_g / T``.
    """
    t = int(counts.sum())
    blocks = pn // k
    design = _design(pn, counts, k)
    info = {d[0]: d for d in design}
    low = high = 0.0
    for group in _groups(design, alpha, k):
        mine = np.isin(blocks, group)
        t_g = int(counts[mine].sum())
        x = float(np.dot(counts[mine], values[mine]) / t_g)
        bernoulli = len(group) == 1 and info[group[0]][2]
        lo, hi = _hoeffding_bounds(np.array([x]), group[0] * t_g, alpha * t_g / t,
                                   bernoulli=bernoulli, spread=(t_g, info[group[0]][3], k))
        low += t_g / t * float(lo[0])
        high += t_g / t * float(hi[0])
    return low, high


# --------------------------------------------------------------------------
# the exact product: each task's own Clopper–Pearson interval, Šidák's level
# --------------------------------------------------------------------------

#: Up to this many tasks the default weighs the exact product against the
#: binomial-dominated bound (from the design); above, the product is never narrower.
PRODUCT_MAX_TASKS = 10

#: The values of pass^k at which the design's two expected widths are compared.
_REFERENCE_THETAS = (0.02, 0.1, 0.25, 0.5, 0.75, 0.9, 0.98)


def _design_key(pn: np.ndarray, counts: np.ndarray) -> tuple[tuple[int, int], ...]:
    """The design as (n, tasks) pairs, sorted: what :func:`_product_chosen` sees."""
    ns, where = np.unique(pn, return_inverse=True)
    tasks = np.bincount(where.ravel(), weights=counts).astype(np.int64)
    return tuple(zip(ns.tolist(), tasks.tolist()))


def _sidak_side(alpha: float, tasks: int) -> float:
    """Each task's one-sided error in the product: ``1 - (1 - alpha/2)^(1/T)``."""
    return float(-np.expm1(np.log1p(-alpha / 2.0) / tasks))


def _product_ends(c: np.ndarray, n: np.ndarray, weights: np.ndarray, k: int,
                  alpha: float, tasks: int) -> tuple[np.ndarray, np.ndarray]:
    """The product's ends: the weighted mean of each task's Clopper–Pearson ends to the k,
    every task at one-sided :func:`_sidak_side` (weights: tasks per (c, n) pair, last axis)."""
    low_p, high_p = _clopper_pearson(c, n, 2.0 * _sidak_side(alpha, tasks))
    return (np.asarray((weights * low_p**k).sum(axis=-1) / tasks),
            np.asarray((weights * high_p**k).sum(axis=-1) / tasks))


@lru_cache(maxsize=1024)
def _product_chosen(design: tuple[tuple[int, int], ...], k: int, alpha: float) -> bool:
    """Whether the default takes the exact product for this design (pairs (n, tasks)).

    From the design alone (never the outcomes), so that either choice keeps its proved
    level: always at T = 1 (the product is then the task's own exact interval); never
    above :data:`PRODUCT_MAX_TASKS`; in between, when the product's expected width,
    averaged over identical tasks at the pass^k of :data:`_REFERENCE_THETAS`, is below
    the binomial-dominated part's width at a suite mean equal to each of them.
    """
    t = sum(m for _, m in design)
    if t == 1:
        return True
    if t > PRODUCT_MAX_TASKS:
        return False
    thetas = np.array(_REFERENCE_THETAS)
    p = thetas ** (1.0 / k)
    product = np.zeros(thetas.size)
    for n, m in design:
        c = np.arange(n + 1)
        low, high = _clopper_pearson(c, np.full(n + 1, n), 2.0 * _sidak_side(alpha, t))
        # the binomial pmf by its formula (scipy.stats costs ~0.8 s of imports that
        # `passk report` and `gate` otherwise never pay; tests/test_report_lazy.py)
        comb = np.array([math.comb(n, int(x)) for x in c], dtype=float)
        pmf = comb[None, :] * p[:, None] ** c[None, :] * (1.0 - p[:, None]) ** (n - c)[None, :]
        product += m / t * (pmf @ (high**k - low**k))
    ns = np.repeat([n for n, _ in design], [m for _, m in design])
    share = _union_share(ns, k)
    dominated = np.zeros(thetas.size)
    pn = np.array([n for n, _ in design], dtype=np.int64)
    counts = np.array([m for _, m in design], dtype=np.int64)
    for i, theta in enumerate(thetas.tolist()):
        low_d, high_d = _dominated_interval(pn, pn, counts, np.full(pn.size, theta), k,
                                            alpha * (1.0 - share))
        dominated[i] = high_d - low_d
    return bool(product.mean() < dominated.mean())


def mean_pass_hat_k_ci(
    successes: ArrayLike,
    totals: ArrayLike,
    k: int,
    *,
    confidence: float = 0.95,
    method: str = "hoeffding",
    rng: int | np.random.Generator | None = None,
    n_resamples: int = 9999,
) -> SuiteInterval:
    r"""Interval for a suite's pass^k: the mean over its tasks of :math:`p_i^k`.

    Parameters
    ----------
    successes, totals : array_like of int
        Per-task successes and runs (any shape; flattened after broadcasting).
    k : int
        Runs that must all succeed. Tasks with fewer than k runs are left
        out, and counted in ``n_excluded``.
    confidence : float, default 0.95
        Two-sided confidence level, any number in (0, 1).
    method : str, default 'hoeffding'
        One of 'hoeffding', 'product', 'score', 'union', 'studentized', 't', 'percentile'.
        See Notes. :data:`SUITE_CI_METHODS` holds the printable labels.
        ``'score'`` on fewer than :data:`SUITE_MIN_TASKS` tasks is ``'union'``.
    rng : int, numpy.random.Generator or None
        Seed or generator for ``'percentile'`` (passed to
        :func:`numpy.random.default_rng`); the other methods draw nothing.
    n_resamples : int, default 9999
        Bootstrap resamples for ``'percentile'``.

    Returns
    -------
    SuiteInterval
        The estimate, the interval (clipped to [0, 1]), the method used, the
        numbers of tasks kept and left out, and whether the level is kept
        (``level_kept``; ``level`` is the text a report prints).

    Raises
    ------
    ValueError
        When a count is not a whole number (a bool, a string, None, a complex
        number, NaN or infinity, or past int64), a success count exceeds its
        total, ``k`` is not one whole number of at least 1, ``confidence`` is
        not in (0, 1) or ``method`` is unknown; the message names the value.

    Notes
    -----
    **Estimand.** The T tasks are the suite, fixed; the runs are the random
    part. The target is :math:`\theta = \frac1T \sum_i \theta_i`,
    :math:`\theta_i = p_i^k`, estimated without bias by the mean
    :math:`\bar\theta` of the per-task :func:`~passk.metrics.estimate_pass_hat_k`
    :math:`U_i = \binom{c_i}{k}/\binom{n_i}{k} \in [0, 1]`, independent
    across tasks, :math:`E\,U_i = \theta_i`.

    ``'hoeffding'`` (default) has a **proved** level: for every suite (any
    :math:`p_i`), every level in (0, 1), every :math:`n_i \ge k`, mixed
    :math:`n_i`, and every T, a single task included. It is the intersection
    of two intervals, each proved, with :math:`\alpha` split between them
    in advance from the design alone: the union part gets
    :math:`\alpha_u = \alpha/10` when some task has :math:`n_i < 2k`
    (there a task's own runs can pin its :math:`p_i^k` down better than any
    average) and 0 otherwise; the binomial-dominated part gets
    :math:`\alpha_b = \alpha - \alpha_u`. By the union bound the
    intersection misses with probability at most
    :math:`\alpha_b + \alpha_u = \alpha`.

    *The binomial-dominated part.* (i) Hoeffding (1963, section 5) writes
    a U-statistic as an average over permutations of the runs of
    :math:`W = \frac1m \sum_{j=1}^{m} \mathbf 1[\text{block } j \text{ all pass}]`,
    :math:`m = \lfloor n_i/k \rfloor` disjoint blocks of k runs, and
    :math:`m W \sim \mathrm{Binomial}(m, \theta_i)`; by Jensen,
    :math:`E g(U_i) \le E g(W)` for every convex g: :math:`U_i` is below
    :math:`\mathrm{Bin}(m, \theta_i)/m` in convex order. (ii) Convex order
    is kept by sums of independent variables, and Hoeffding (1956,
    Theorem 3) shows that a sum of N independent Bernoulli variables with
    mean :math:`\bar\theta` is below :math:`\mathrm{Bin}(N, \bar\theta)`
    in convex order. So for the tasks sharing one m (a group of
    :math:`T_g` tasks, :math:`N = m T_g`), their mean :math:`X` is below
    :math:`Y = \mathrm{Bin}(N, \bar\theta_g)/N` in convex order, whatever
    the individual :math:`\theta_i`. (iii) For h < x,
    :math:`\mathbf 1[X \ge x] \le (X - h)_+/(x - h)`, a convex function, so

    .. math:: P(X \ge x) \le \min_h \frac{E (Y - h)_+}{x - h}

    (Bentkus 2004), minimized over the atoms of Y below x; mirrored for
    :math:`P(X \le x)`. Where X is itself a mean of N Bernoulli variables
    (k = 1, or every task of the group has n = k) and x lies at least 1/N
    beyond the mean, Hoeffding (1956, Theorem 4) gives the binomial tail
    itself, which is used there. Near the mean, and always for k > 1, only
    the convex-order bound is used: this is the case the former default
    missed, one failed run in a near-perfect suite, where heterogeneity
    makes the tail heavier than the binomial's (AM–GM:
    :math:`1 - \prod p_i \ge 1 - \bar p^N`).

    *The exact-variance bound on the same tail* (issue 29). The variance of
    :math:`U_i` is a known function :math:`v_{n_i}(\theta_i)` (the formula
    under ``'score'`` below), non-increasing in :math:`n_i` (Rao–Blackwell:
    :math:`U` from n + 1 runs is the mean of :math:`U` over their n-run
    subsets). With :math:`\bar v` a concave function above
    :math:`v_{n_{\min}}` (:func:`_variance_majorant`: an upper hull of interval
    bounds on a grid, above :math:`v` everywhere, with no grid error), Jensen
    gives :math:`\frac1{T_g}\sum_i \operatorname{Var} U_i \le
    \bar v(\bar\theta_g) =: \sigma^2`, whatever the individual
    :math:`\theta_i`. Each :math:`U_i - \theta_i \le 1`, so Hoeffding (1963,
    Theorem 3, stated there for unequal variances and never above
    Bennett's bound) gives, for :math:`t = x - \bar\theta_g > 0`,

    .. math:: P(X \ge x) \le e^{-T_g D(t, \sigma^2)}, \qquad
              D(t, s) = \frac{(s + t)\log(1 + t/s) + (1 - t)\log(1 - t)}{1 + s},

    increasing in :math:`\sigma^2`, so the majorant keeps it a bound;
    :math:`P(X \le x)` likewise with :math:`t = \bar\theta_g - x`
    (:math:`\theta_i - U_i \le 1`). Both this bound and Bentkus's bound the
    *same* probability at the same :math:`\bar\theta_g`, so their minimum
    does too: the test rejects :math:`\bar\theta_g` when the minimum is at most
    :math:`\alpha/2` on either side, with no split of :math:`\alpha`, and the
    interval is never wider than with either bound alone. The gain is where
    :math:`\lfloor n/k \rfloor` blocks waste runs (n = 8, k = 5: one block of
    five runs, while :math:`U_i` uses all eight): up to 10 % narrower at
    T = 100 (``benchmarks/bench_suite_interval.py`` prints the table).

    *Each bound is monotone in* :math:`\bar\theta_g`. Bentkus's and the
    binomial tail because Y grows stochastically with :math:`\bar\theta_g`.
    The variance bound: with :math:`g(\theta) = D(x - \theta, \bar v(\theta))`
    on :math:`\theta < x`, :math:`g' = -D_t + D_s \bar v'`. Where
    :math:`\bar v' \ge 0` both terms are :math:`\le 0` (:math:`D_s < 0`). Where
    :math:`\bar v' < 0`, concavity and :math:`\bar v(1) \ge 0` give
    :math:`|\bar v'| \le \bar v / (1 - \theta) \le s / t`, and the lemma
    :math:`t D_t \ge s |D_s|` gives :math:`g' \le 0`. The lemma: with
    :math:`A = t(1+s)/(s(1-t))`, it reduces to
    :math:`(s + t)\log(1 + A) \ge t(1 + s)`, which is
    :math:`\log(1 + A) \ge A/(1 + A)`. The lower tail is the mirror image
    (:math:`\bar v' \le \bar v/\theta`). So the test's acceptance set is an
    interval, found by bisection (both ends at once) and returned from the
    outside.

    *Only where it matters* (issue 30). Y's pmf is computed on the
    :math:`2W + 1` atoms around its mean, :math:`W = \lceil\sqrt{N\log(10^{15})/2}\,\rceil + 1`;
    by Hoeffding's inequality the mass above the window is at most
    :math:`e^{-2W^2/N} \le 10^{-15}`, and it is *added*: to every
    :math:`P(Y \ge i/N)` and, times :math:`N - \text{end}`, to every
    :math:`E(NY - j)_+`; minimizing over the window's atoms only can only
    raise Bentkus's minimum. The log-pmf's rounding (``gammaln`` of numbers up
    to :math:`N\log N`) is covered by a relative allowance of
    :math:`64\,\varepsilon\,(3\log N! + 2N + 2W + 16)`. So each bound stays at
    least its exact value, and the level stays proved. The bisection starts
    from :math:`x \mp \sqrt{\log(2/\alpha)/(2N)}`, outside which Bentkus's
    bound (below the Chernoff bound, below Hoeffding's) rejects; that outer
    end is checked, and widened to 0 or 1 if accepted.

    *Mixed* :math:`n_i`. Tasks are grouped, each group bounded with its smallest m
    (a mean of more blocks is below a mean of fewer in convex order, by
    the same permutation argument) and its fewest runs; each group gets
    :math:`\alpha_b T_g / T` and its ends are averaged with weights
    :math:`T_g/T` (union bound over groups). The grouping is chosen from
    the design alone (n, k, T, the level; never the outcomes): the width
    at a mean of 1/2 is a sum over blocks, so the best partition into
    blocks of consecutive m is found by dynamic programming. With at most
    eight distinct m, over every partition with the interval's own widths
    (every grouping the former search tried, every m apart, all together,
    any two blocks, is among them). With more, over every partition with
    each block's width approximated by
    :math:`2 z_{1-\alpha_g/2} \cdot \tfrac12 / \sqrt{m_g T_g}`; that pick,
    all together, and the two-block splits at :func:`_cut_points` (where m
    passes :math:`m_0\sqrt2^{\,i}`, each eighth of the tasks, after each
    of the four smallest m) are then compared by Bentkus's widths. So one
    short task costs about its weight 1/T in width instead of dragging the
    suite down to its run count, many different n are pooled at the
    smallest, and 268 distinct n cost some 60 inversions, not 269 pairs.

    *The union part*, ``'union'`` below at level :math:`1 - \alpha_u`.

    *When the default is the exact product* (issue 38). The default becomes
    ``'product'`` (and says so in ``method``) from the design alone, never the
    outcomes, so either choice keeps its proved level: always at T = 1, where the
    product is the task's own exact interval (:func:`pass_hat_k_ci`, the same
    numbers: the binomial-dominated bound from :math:`\lfloor n/k\rfloor` blocks was
    up to 2.76 times wider there); never above :data:`PRODUCT_MAX_TASKS` tasks; in
    between, when the product's expected width, averaged over identical tasks at
    :math:`p^k` = 0.02, 0.1, 0.25, 0.5, 0.75, 0.9, 0.98 (summed exactly over the
    binomial), is below the binomial-dominated part's width at a suite mean equal
    to each (at T = 2-5 this picks the product only for k near n, e.g. n = 12,
    k = 8 at T = 2; ``tests/test_suite_interval_small_t.py`` enumerates the level).
    Where n < 2k, Bentkus's variance form (the tail of a sum compared with that of
    a two-point law of the same variance, with its constant) might narrow the part
    that now uses Hoeffding's (1963) variance bound by 12-23 %; it is not adopted,
    because that comparison is not proved here for these bounded U-statistics.

    ``'product'``: each task's Clopper–Pearson interval for :math:`p_i`, every end
    at one-sided error :math:`\beta = 1 - (1 - \alpha/2)^{1/T}`, mapped through
    :math:`p \mapsto p^k` and averaged: :math:`[\frac1T\sum L_i^k,
    \frac1T\sum U_i^k]`. If every :math:`L_i^k \le p_i^k` then their mean is at most
    :math:`\theta`, so the lower end misses only if some task's does; the tasks are
    independent, so that has probability at most :math:`1 - (1-\beta)^T = \alpha/2`
    (Šidák), and the same on the upper side. It is ``'union'`` with the per-task
    level :math:`1 - 2\beta \le 1 - \alpha/T`, so never wider than ``'union'``.

    ``'score'`` (the default before issue 23, approximate): no variance is estimated from the runs.
    The exact
    variance of :math:`\hat\theta_i` is a known function of :math:`\theta_i`,

    .. math:: v_n(\theta) = \sum_{j=1}^{k}
              \frac{\binom{k}{j}\binom{n-k}{k-j}}{\binom{n}{k}}
              \bigl(p^{2k-j} - p^{2k}\bigr), \qquad p = \theta^{1/k},

    non-increasing in n. With :math:`\bar v` its least concave majorant in
    :math:`\theta` (computed on a grid), Jensen's inequality bounds the
    variance of the mean under the hypothesis :math:`\theta = \theta_0`,
    whatever the individual :math:`\theta_i`:

    .. math:: \operatorname{Var}\bar\theta = \frac{1}{T^2}\sum_i v_{n_i}(\theta_i)
              \le \frac{1}{T}\,\bar v_{n_{\min}}(\theta_0)
              \le \frac{k}{n_{\min}}\,\frac{\theta_0 (1-\theta_0)}{T}

    (the last step is Hoeffding's bound on a U-statistic's variance; with
    k = n it is an equality and :math:`\hat\theta_i` is a Bernoulli
    variable). The interval inverts the test that uses this bound, with a
    continuity correction of half the estimate's step near 1:

    .. math:: \Bigl\{\theta_0 :\ |\bar\theta - \theta_0|
              - \frac{k}{2 n_{\min} T}
              \le z_{1-\alpha/2}\sqrt{\bar v_{n_{\min}}(\theta_0) / T}\Bigr\},

    an interval because the left side is convex in :math:`\theta_0` and
    the right side concave. When every task has exactly k runs each
    :math:`\hat\theta_i` is 0 or 1, the inequality above is the
    continuity-corrected Wilson interval for :math:`T\bar\theta` all-pass
    tasks out of T, and the interval is widened where needed to hold the
    Clopper–Pearson interval for that count too (Wilson's alone dips to
    0.949 near :math:`\theta = 0`). Nothing here needs an estimate of :math:`p^{2k}`, which has no
    unbiased estimator from n < 2k runs (see
    :func:`estimate_pass_hat_k_variance`). The price is width where the
    tasks differ: their variances sum to less than the bound.
    ``benchmarks/bench_coverage.py`` measures its coverage by seeded Monte
    Carlo on identical tasks (p = 0.5 to 0.99), Beta(4, 1), Beta(1/2, 1/2),
    Uniform(0, 1) and tau-bench's own rates, T = 5 to 200, n = 2 to 12,
    k = 1 to n: at 95% the lowest of its 3,850 cells is 0.948 (s.e. 0.002).
    It is a normal approximation: on identical tasks, computed exactly
    (:func:`passk.stats.coverage.identical_suite_coverage`), it falls to
    0.9486 at 95% and 0.9674 at 99% when exactly one run in the suite failed
    (issue 23), so ``level_kept`` is False.

    ``'union'``:
    each task's exact interval :math:`[L_i, U_i]` for :math:`p_i^k`
    (:func:`pass_hat_k_ci`) at level :math:`1 - \alpha/T`, averaged:
    :math:`[\frac1T\sum L_i, \frac1T\sum U_i]`. By the union bound every
    :math:`p_i^k` is inside its own interval with probability at least
    :math:`1-\alpha`, and then the mean is inside the averaged one: the
    level is proved for any T, a single task included (it is then the
    task's own exact interval), at the cost of width.

    ``'studentized'`` (the default before issue 17):
    :math:`\bar\theta \pm z_{1-\alpha/2} \sqrt{\sum_i V_i} / T`, with
    :math:`V_i` the larger of the unbiased
    :func:`estimate_pass_hat_k_variance` (where :math:`n_i \ge 2k`) and the
    Jeffreys posterior mean of the exact variance. It estimates each task's
    variance from that task's runs, and those estimates are too small where
    n < 2k: at 95% its coverage is 0.81 on 10 tasks at p = 0.9 with
    n = k = 4 (issue 17), and as low as 0.800 in ``bench_coverage.py``'s grid,
    so ``level_kept`` is False.

    ``'t'``: :math:`\bar\theta \pm t_{T-1,\,1-\alpha/2}\, s / \sqrt T`
    with s the standard deviation of the :math:`\hat\theta_i` over tasks
    (the paired-t idea of Miller, 2024 [3]_). ``'percentile'``: the
    percentile bootstrap over tasks [2]_ (tasks resampled with replacement,
    done exactly as a multinomial over the distinct per-task values, so
    :math:`10^5` tasks cost no more than 100). Both treat the tasks as a
    sample from a larger population and answer a different question,
    "tasks like these"; for these tasks they promise nothing
    (``level_kept`` is False). When all tasks have the same estimate their
    spread is 0 and so would be their width: they fall back to the default
    and say so in ``note``.

    References
    ----------
    .. [1] S. Yao et al., "tau-bench", arXiv:2406.12045, 2024.
    .. [2] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*,
       Chapman & Hall, 1993.
    .. [3] E. Miller, "Adding Error Bars to Evals: A Statistical Approach to
       Language Model Evaluations", arXiv:2411.00640, 2024.
    .. [4] W. Hoeffding, "A class of statistics with asymptotically normal
       distribution", Annals of Mathematical Statistics 19(3), 293–325, 1948
       (the variance of a U-statistic, and its bound k/n times the kernel's).
    .. [5] E. B. Wilson, "Probable inference, the law of succession, and
       statistical inference", JASA 22(158), 209–212, 1927.
    .. [6] W. Hoeffding, "On the distribution of the number of successes in
       independent trials", Annals of Mathematical Statistics 27(3),
       713–721, 1956 (Theorems 3 and 4).
    .. [7] W. Hoeffding, "Probability inequalities for sums of bounded random
       variables", JASA 58(301), 13–30, 1963 (section 5, U-statistics).
    .. [8] V. Bentkus, "On Hoeffding's inequalities", Annals of Probability
       32(2), 1650–1673, 2004.
    .. [9] G. Bennett, "Probability inequalities for the sum of independent
       random variables", JASA 57(297), 33–45, 1962.

    Examples
    --------
    >>> result = mean_pass_hat_k_ci([12, 12, 0, 7, 10], [12, 12, 12, 12, 12], 2)
    >>> round(result.estimate, 4), [round(x, 4) for x in result.ci], result.n_tasks
    (0.6, [0.3902, 0.7854], 5)
    >>> result.label, result.level
    ('binomial-dominated bound (Hoeffding–Bentkus) with the exact union, proved', '95%')
    >>> mean_pass_hat_k_ci([3, 1], [3, 4], 4).n_excluded
    1
    >>> low = mean_pass_hat_k_ci([1, 0, 2, 0, 1], 12, 8)  # k near n, low pass^k
    >>> [round(x, 4) for x in low.ci]
    [0.0, 0.0143]
    >>> one = mean_pass_hat_k_ci([10], [12], 5)  # one task: its own exact interval
    >>> one.method, [round(x, 4) for x in one.ci]
    ('product', [0.0365, 0.8999])
    >>> mean_pass_hat_k_ci([4, 3, 2, 4, 1], 4, 4, method="t").level
    '95% nominal, not guaranteed'
    """
    alpha = 1.0 - confidence_level(confidence)
    if not isinstance(method, str) or method not in SUITE_CI_METHODS:
        raise BadInput(f"method ({method!r}) must be one of {sorted(SUITE_CI_METHODS)}")
    k_ = whole_numbers(k, "k", minimum=1)
    if k_.ndim:
        raise BadInput(f"k ({k!r}) must be one number")
    k_int = int(k_)
    n_resamples = int(whole_numbers(n_resamples, "n_resamples", minimum=1))
    c, n = _counts(successes, totals, names=("successes", "totals"))
    c, n = c.ravel(), n.ravel()
    kept = n >= k_int
    n_excluded = int(np.count_nonzero(~kept))
    c, n = c[kept], n[kept]
    t = c.size
    level = float(confidence)
    if t == 0:
        nan = float("nan")
        return SuiteInterval(nan, ConfidenceInterval(nan, nan), method, 0, n_excluded,
                             level, "no task has at least k runs")
    # everything depends on (c, n) only: compute once per distinct pair
    keys, counts = np.unique(c * (int(n.max()) + 1) + n, return_counts=True)
    pc, pn = np.divmod(keys, int(n.max()) + 1)
    values = np.asarray(estimate_pass_hat_k(pc, pn, k_int), dtype=float)
    estimate = float(np.dot(counts, values) / t)

    note = ""
    if method in ("t", "percentile"):
        spread = values.max() - values.min()
        if t < 2 or spread == 0:
            note = (f"{SUITE_CI_METHODS[method]} needs two tasks with different estimates; "
                    f"the default used instead")
            method = "hoeffding"
    if method == "score" and t < SUITE_MIN_TASKS:
        note = (f"{plural(t, 'task')}, fewer than {SUITE_MIN_TASKS}, where the score interval is "
                f"not measured: {SUITE_CI_METHODS['union']}")
        method = "union"
    n_min = int(pn.min())
    if method == "hoeffding" and _product_chosen(_design_key(pn, counts), k_int, alpha):
        method = "product"
    if method == "product":
        low_a, high_a = _product_ends(pc, pn, counts, k_int, alpha, t)
        low, high = float(low_a), float(high_a)
    elif method == "hoeffding":
        share = _union_share(pn, k_int)
        low, high = _dominated_interval(pc, pn, counts, values, k_int, alpha * (1.0 - share))
        if share > 0:
            ends = pass_hat_k_ci(pc, pn, k_int, confidence=1.0 - alpha * share / t)
            low = max(low, float(np.dot(counts, ends.low) / t))
            high = min(high, float(np.dot(counts, ends.high) / t))
            # the union part can exclude the unbiased estimate (0 when every c_i < k);
            # widening to hold it keeps the level
            low, high = min(low, estimate), max(high, estimate)
    elif method == "score":
        low_a, high_a = _score_bounds(np.array([estimate]), t, n_min, k_int, alpha,
                                      bernoulli=bool(np.all(pn == k_int)))
        low, high = float(low_a[0]), float(high_a[0])
    elif method == "union":
        ends = pass_hat_k_ci(pc, pn, k_int, confidence=1.0 - alpha / t)
        low = float(np.dot(counts, ends.low) / t)
        high = float(np.dot(counts, ends.high) / t)
    elif method == "studentized":
        from scipy.special import ndtri  # the normal quantile, as scipy.stats.norm.ppf

        posterior = _posterior_variance(pc, pn, k_int)
        unbiased = np.asarray(estimate_pass_hat_k_variance(pc, pn, k_int), dtype=float)
        per_pair = np.fmax(posterior, unbiased)  # fmax: NaN (n < 2k) leaves the posterior
        half = ndtri(1 - alpha / 2) * np.sqrt(np.dot(counts, per_pair)) / t
        low, high = estimate - half, estimate + half
    elif method == "t":
        deviation = values - estimate
        s = np.sqrt(np.dot(counts, deviation * deviation) / (t - 1))
        from scipy import stats

        half = stats.t.ppf(1 - alpha / 2, t - 1) * s / np.sqrt(t)
        low, high = estimate - half, estimate + half
    else:
        means = _bootstrap_means(values, counts, n_resamples, np.random.default_rng(rng))
        low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    if method in ("score", "studentized"):
        if np.all(pc == pn):  # every run of every task passed
            low = min(low, _all_pass_lower(t, n_min, k_int, alpha))
        if np.all(pc == 0):  # every run of every task failed
            high = max(high, _all_fail_upper(t, n_min, k_int, alpha))
    kept_level = method not in _LEVEL_NOT_KEPT
    if not kept_level:
        why = f"level not guaranteed: {_LEVEL_NOT_KEPT[method]}"
        note = f"{note}; {why}" if note else why
    ci = ConfidenceInterval(float(np.clip(low, 0.0, 1.0)), float(np.clip(high, 0.0, 1.0)))
    return SuiteInterval(estimate, ci, method, t, n_excluded, level, note, kept_level)


def _hoeffding_suites(c: np.ndarray, n: np.ndarray, k: int,
                      alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The ``'hoeffding'`` interval for many suites of one design at once (for simulations).

    ``c`` is (replicates, T) counts, ``n`` the T tasks' runs (all at least k); the same
    construction as :func:`mean_pass_hat_k_ci`, vectorized over replicates: the design
    (n, k, T) fixes the groups and the split of alpha, the counts only move the means.
    """
    from math import comb, lcm

    c = np.asarray(c, dtype=np.int64)
    n = np.asarray(n, dtype=np.int64)
    k, alpha = int(k), float(alpha)
    t = n.size
    if _product_chosen(_design_key(n, np.ones(t, dtype=np.int64)), k, alpha):
        low_p, high_p = _product_ends(c, np.broadcast_to(n, c.shape), np.ones(c.shape), k,
                                      alpha, t)
        return np.clip(low_p, 0.0, 1.0), np.clip(high_p, 0.0, 1.0)
    # every per-task figure is a function of (c, n): computed once per pair of the design
    # and looked up (elementwise functions: the same floats as on the whole array)
    ns, column = np.unique(n, return_inverse=True)
    pair_c = np.concatenate([np.arange(m + 1) for m in ns.tolist()])
    pair_n = np.repeat(ns, ns + 1)
    first = np.concatenate([[0], np.cumsum(ns + 1)[:-1]])
    at = first[column.ravel()][None, :] + c  # the pair of each (replicate, task)
    values = np.asarray(estimate_pass_hat_k(pair_c, pair_n, k), dtype=float)[at]
    estimate = values.mean(axis=1)
    share = _union_share(n, k)
    blocks = n // k
    design = _design(n, np.ones(t, dtype=np.int64), k)
    info = {d[0]: d for d in design}
    part = alpha * (1.0 - share)
    low = np.zeros(c.shape[0])
    high = np.zeros(c.shape[0])
    for group in _groups(design, part, k):
        mine = np.isin(blocks, group)
        t_g = int(np.count_nonzero(mine))
        x = values[:, mine].mean(axis=1)
        bernoulli = len(group) == 1 and info[group[0]][2]
        scale = lcm(*[comb(int(v), k) for v in np.unique(n[mine])]) * t_g  # Python ints
        if scale < 2**50:  # the same float for the same sum, whatever the order
            x = np.rint(x * scale) / scale
        unique, where = np.unique(x, return_inverse=True)
        lo, hi = _hoeffding_bounds(unique, group[0] * t_g, part * t_g / t,
                                   bernoulli=bernoulli, spread=(t_g, info[group[0]][3], k))
        low += t_g / t * lo[where.ravel()]
        high += t_g / t * hi[where.ravel()]
    level = 1.0 - alpha * share / t
    if share > 0 and level < 1.0:  # a level that rounds to 1 tightens nothing: kept as is
        ends = pass_hat_k_ci(pair_c, pair_n, k, confidence=level)
        low = np.maximum(low, np.asarray(ends.low)[at].mean(axis=1))
        high = np.minimum(high, np.asarray(ends.high)[at].mean(axis=1))
        low, high = np.minimum(low, estimate), np.maximum(high, estimate)
    return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)


publish(globals())  # the names passk.__all__ takes from here say 'passk' (passk._public)
