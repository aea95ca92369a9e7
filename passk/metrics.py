"""Closed forms, estimators, flakiness and intervals (the chapter's ``src/passk.ts``).

Every function here is pure and vectorized over tasks: pass arrays of per-task
success counts and run counts, get an array back. Scalars in give floats out.

References
----------
.. [1] M. Chen et al., "Evaluating Large Language Models Trained on Code",
   arXiv:2107.03374, 2021 (the unbiased pass@k estimator).
.. [2] S. Yao et al., "tau-bench: A Benchmark for Tool-Agent-User Interaction
   in Real-World Domains", arXiv:2406.12045, 2024 (pass^k).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

# the boundary checks live in one module (passk.stats imports them from there too)
from passk._public import publish
from passk._validation import confidence_level as _confidence
from passk._validation import counts as _counts
from passk._validation import probability as _probability
from passk._validation import scalar_or_array as _scalar_or_array
from passk._validation import whole_numbers as _whole_numbers
from passk.errors import BadInput

__all__ = [
    "CI_METHODS",
    "ConfidenceInterval",
    "bootstrap_pass_hat_k_ci",
    "estimate_pass_at_k",
    "estimate_pass_hat_k",
    "estimate_pass_hat_k_variance",
    "exact_bootstrap_pass_hat_k_ci",
    "flakiness",
    "pass_at_k",
    "pass_hat_k",
    "pass_hat_k_ci",
    "pass_hat_k_lower_bound",
    "runs_needed",
    "unbiased_flakiness",
    "wilson_ci",
]

ArrayLike = npt.ArrayLike
FloatOrArray = float | np.ndarray

#: Halvings in each bisection of Blaker's interval (an interval of width 1 ends below 1e-16).
_BISECTIONS = 56

#: Largest k computed with the exact running product; larger k use log-gamma
#: (see ``_ratio_of_binomials``).
_PRODUCT_FORM_MAX_K = 1000


class ConfidenceInterval(NamedTuple):
    """A two-sided interval ``[low, high]``; either end may be an array."""

    low: FloatOrArray
    high: FloatOrArray


# --------------------------------------------------------------------------
# closed forms for a known single-run success rate p
# --------------------------------------------------------------------------


def pass_at_k(p: ArrayLike, k: ArrayLike) -> FloatOrArray:
    r"""Probability that at least one of ``k`` independent runs succeeds.

    Parameters
    ----------
    p : float or array_like
        Success rate of a single run, in [0, 1].
    k : int or array_like of int
        Number of runs, at least 1. Broadcasts against ``p``.

    Returns
    -------
    float or ndarray
        :math:`1 - (1 - p)^k`: capability, the optimistic reading.

    Examples
    --------
    >>> round(pass_at_k(0.9, 3), 3)
    0.999
    >>> pass_at_k([0.5, 0.9], 2).round(2)
    array([0.75, 0.99])
    """
    p_ = _probability(p)
    k_ = _whole_numbers(k, "k", minimum=1)
    return _scalar_or_array(1.0 - (1.0 - p_) ** k_)


def pass_hat_k(p: ArrayLike, k: ArrayLike) -> FloatOrArray:
    r"""Probability that all ``k`` independent runs succeed.

    Parameters
    ----------
    p : float or array_like
        Success rate of a single run, in [0, 1].
    k : int or array_like of int
        Number of runs, at least 1. Broadcasts against ``p``.

    Returns
    -------
    float or ndarray
        :math:`p^k`: reliability, the pessimistic reading.

    Examples
    --------
    >>> round(pass_hat_k(0.9, 5), 2)
    0.59
    >>> pass_hat_k(0.9, [1, 2, 3]).round(3)
    array([0.9  , 0.81 , 0.729])
    """
    p_ = _probability(p)
    k_ = _whole_numbers(k, "k", minimum=1)
    return _scalar_or_array(p_**k_)


# --------------------------------------------------------------------------
# unbiased estimators from n runs with c successes
# --------------------------------------------------------------------------


def _ratio_of_binomials(top: np.ndarray, n: np.ndarray, k: np.ndarray, *,
                        complement: bool = False) -> np.ndarray:
    """``C(top, k) / C(n, k)`` (or one minus it) for ``top <= n`` and ``k <= n``, elementwise.

    Where ``k <= _PRODUCT_FORM_MAX_K`` the exact running product
    ``prod_{i<k} (top - i) / (n - i)`` runs vectorized over tasks: no
    factorials, so nothing overflows, and each factor is at most 1. A task
    with a larger k gets the same product as a sum of ``log1p`` terms
    (``-expm1`` for the complement, so a small pass@k keeps its digits). The
    choice follows each element's own k, never the batch, so a task scores the
    same alone or among a million others.
    """
    top, n, k = np.broadcast_arrays(top, n, k)
    ratio = np.zeros(top.shape)  # exactly 0 where top < k: no all-success draw exists
    live = top >= k
    small = live & (k <= _PRODUCT_FORM_MAX_K)
    if small.any():
        every = small.all()  # the common case: one call for a whole task set
        t = (top if every else top[small]).astype(float)
        m = (n if every else n[small]).astype(float)
        kk = k if every else k[small]
        r, factor = np.ones_like(t), np.empty_like(t)
        k_min, k_max = int(kk.min()), int(kk.max())
        for i in range(k_max):  # in place: no temporaries per factor
            with np.errstate(invalid="ignore", divide="ignore"):  # 0/0 past a task's own k
                np.divide(t, m, out=factor)
            if i >= k_min:  # only where some tasks' k is already used up
                factor[kk <= i] = 1.0
            r *= factor
            t -= 1.0
            m -= 1.0
        if every:
            ratio[...] = r
        else:
            ratio[small] = r
    out = np.array(1.0 - ratio if complement else ratio, dtype=float)
    # few tasks have k in the thousands; each costs O(k)
    for i in np.flatnonzero(live & ~small).tolist():
        top_i, n_i, k_i = float(top.flat[i]), float(n.flat[i]), int(k.flat[i])
        # log of prod (t - j)/(n - j) = sum log1p(-(n - t)/(n - j)), accurate term by term
        log_r = float(np.sum(np.log1p(-(n_i - top_i) / (n_i - np.arange(k_i)))))
        out.flat[i] = -np.expm1(log_r) if complement else np.exp(log_r)
    return out


def _estimate(successes: ArrayLike, total: ArrayLike, k: ArrayLike, *, at: bool) -> FloatOrArray:
    c, n = _counts(successes, total)
    k_ = _whole_numbers(k, "k", minimum=1)
    c, n, k_ = np.broadcast_arrays(c, n, k_)
    estimable = k_ <= n
    top = n - c if at else c
    value = _ratio_of_binomials(
        np.where(estimable, top, 0), np.where(estimable, n, 1), np.where(estimable, k_, 1),
        complement=at,
    )
    return _scalar_or_array(np.where(estimable, value, np.nan))


def estimate_pass_at_k(successes: ArrayLike, total: ArrayLike, k: ArrayLike) -> FloatOrArray:
    r"""Unbiased pass@k from ``total`` runs of which ``successes`` passed.

    Parameters
    ----------
    successes : int or array_like of int
        Successful runs per task, ``0 <= c <= n``.
    total : int or array_like of int
        Runs per task, ``n >= 0``.
    k : int or array_like of int
        Attempts allowed, at least 1. All three arguments broadcast.

    Returns
    -------
    float or ndarray
        :math:`1 - \binom{n-c}{k} / \binom{n}{k}`; exactly 1 when
        ``n - c < k``, and NaN where ``k > n`` (not estimable from n runs).

    Notes
    -----
    This is the estimator of Chen et al. (2021) [1]_. It is the mean of
    "at least one success" over every size-k subset of the n runs, hence
    unbiased for :math:`1-(1-p)^k`. Unlike HumanEval's reference code, which
    returns 1.0 when ``k > n``, this returns NaN: n runs say nothing about
    k > n attempts. The ratio is a running product of k factors, so it is
    stable for n up to :math:`10^6` and beyond.

    References
    ----------
    .. [1] M. Chen et al., "Evaluating Large Language Models Trained on Code",
       arXiv:2107.03374, 2021.

    Examples
    --------
    >>> round(estimate_pass_at_k(3, 10, 2), 4)
    0.5333
    >>> estimate_pass_at_k([0, 5, 10], [10, 10, 10], 3).round(4)
    array([0.    , 0.9167, 1.    ])
    """
    return _estimate(successes, total, k, at=True)


def estimate_pass_hat_k(successes: ArrayLike, total: ArrayLike, k: ArrayLike) -> FloatOrArray:
    r"""Unbiased pass^k from ``total`` runs of which ``successes`` passed.

    Parameters
    ----------
    successes : int or array_like of int
        Successful runs per task, ``0 <= c <= n``.
    total : int or array_like of int
        Runs per task, ``n >= 0``.
    k : int or array_like of int
        Runs that must all succeed, at least 1. All three arguments broadcast.

    Returns
    -------
    float or ndarray
        :math:`\binom{c}{k} / \binom{n}{k}`: exactly 0 where ``c < k``,
        exactly 1 where ``c = n >= k``, NaN where ``k > n``.

    Notes
    -----
    The fraction of the :math:`\binom{n}{k}` size-k subsets of the runs in
    which every run passed. Its expectation under
    :math:`c \sim \mathrm{Binomial}(n, p)` is exactly :math:`p^k`, which
    :math:`\hat p^k` is not (it is biased upwards for ``p`` in (0, 1)).
    Computed as :math:`\prod_{i=0}^{k-1} (c-i)/(n-i)`, never with factorials.
    pass^k is the reliability metric of tau-bench (Yao et al., 2024) [2]_.

    References
    ----------
    .. [2] S. Yao et al., "tau-bench: A Benchmark for Tool-Agent-User
       Interaction in Real-World Domains", arXiv:2406.12045, 2024.

    Examples
    --------
    The chapter's flaky task passed 10 of 12 runs:

    >>> round(estimate_pass_hat_k(10, 12, 5), 4)
    0.3182
    >>> estimate_pass_hat_k([12, 4, 3], [12, 12, 4], 5)
    array([ 1.,  0., nan])
    """
    return _estimate(successes, total, k, at=False)


def flakiness(successes: ArrayLike, total: ArrayLike) -> FloatOrArray:
    r"""How unpredictable a task's outcome is: :math:`4 \hat p (1 - \hat p)`.

    Parameters
    ----------
    successes, total : int or array_like of int
        Successful runs and runs per task; they broadcast.

    Returns
    -------
    float or ndarray
        0 for a task that always gives the same outcome, 1 for a coin
        (:math:`\hat p = 1/2`); NaN where ``total == 0``.

    Notes
    -----
    The Bernoulli variance :math:`\hat p (1-\hat p)` scaled by 4 onto [0, 1],
    with :math:`\hat p = c/n`: the chapter's plug-in. It is **biased**
    downwards: under :math:`c \sim \mathrm{Binomial}(n, p)`,

    .. math:: E\left[4 \hat p (1 - \hat p)\right] = 4 p (1 - p) \frac{n - 1}{n},

    so 4 runs understate a coin's flakiness by a quarter. Unlike every
    estimator above, it is kept as the chapter defines it (gates and tables
    compare it with caps written for it); :func:`unbiased_flakiness` is the
    unbiased :math:`4 c (n - c) / (n (n - 1))`.

    The chapter's TypeScript returns 0 for a task with no runs; this returns
    NaN on purpose, because no runs is no evidence, and a gate that reads
    "0" there would pass a task nobody ran.

    Examples
    --------
    >>> round(flakiness(10, 12), 4)
    0.5556
    >>> flakiness([0, 6, 12, 0], [12, 12, 12, 0])
    array([ 0.,  1.,  0., nan])
    """
    c, n = _counts(successes, total)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_hat = np.where(n > 0, c / np.where(n > 0, n, 1), np.nan)
    return _scalar_or_array(4.0 * p_hat * (1.0 - p_hat))


def unbiased_flakiness(successes: ArrayLike, total: ArrayLike) -> FloatOrArray:
    r"""Unbiased flakiness: :math:`4 c (n - c) / (n (n - 1))`.

    Parameters
    ----------
    successes, total : int or array_like of int
        Successful runs and runs per task; they broadcast.

    Returns
    -------
    float or ndarray
        An unbiased estimate of :math:`4 p (1 - p)`; NaN where ``total < 2``
        (one run cannot show a spread).

    Notes
    -----
    :math:`E[c (n - c)] = n (n - 1) p (1 - p)` for
    :math:`c \sim \mathrm{Binomial}(n, p)`, so
    :math:`4 c (n-c) / (n (n-1))` has mean exactly :math:`4 p (1 - p)`; it is
    :func:`flakiness` times :math:`n / (n - 1)` (Bessel's correction), and may
    exceed 1 (a 2-run task with one pass scores 2).

    Examples
    --------
    >>> round(unbiased_flakiness(10, 12), 4)
    0.6061
    >>> unbiased_flakiness([0, 2, 1], [4, 4, 1])
    array([0.        , 1.33333333,        nan])
    """
    c, n = _counts(successes, total)
    c, n = c.astype(float), n.astype(float)
    ok = n >= 2
    n_ = np.where(ok, n, 2.0)
    value = 4.0 * c * (n_ - c) / (n_ * (n_ - 1.0))
    return _scalar_or_array(np.where(ok, value, np.nan))


def estimate_pass_hat_k_variance(
    successes: ArrayLike, total: ArrayLike, k: ArrayLike
) -> FloatOrArray:
    r"""Unbiased estimate of the variance of :func:`estimate_pass_hat_k`.

    Parameters
    ----------
    successes : int or array_like of int
        Successful runs per task, ``0 <= c <= n``.
    total : int or array_like of int
        Runs per task.
    k : int or array_like of int
        Runs that must all succeed, at least 1. All three broadcast.

    Returns
    -------
    float or ndarray
        :math:`\hat V = \hat\theta^2 - \binom{c}{2k} / \binom{n}{2k}`, with
        :math:`\hat\theta = \binom{c}{k} / \binom{n}{k}`; NaN where
        ``n < 2k``. Never negative.

    Notes
    -----
    With :math:`c \sim \mathrm{Binomial}(n, p)`,
    :math:`\operatorname{Var}\hat\theta = E[\hat\theta^2] - p^{2k}`.
    :math:`\hat\theta^2` is unbiased for the first term and
    :math:`\binom{c}{2k}/\binom{n}{2k}` (the pass^{2k} estimator) for the
    second, so :math:`E \hat V = \operatorname{Var}\hat\theta` exactly. No
    unbiased estimator exists when ``n < 2k``: the expectation of any function
    of c is a polynomial of degree at most n in p, and :math:`p^{2k}` is not.

    :math:`\hat V = \hat\theta (\hat\theta - R)` with
    :math:`R = \prod_{i=k}^{2k-1} (c-i)/(n-i) \le \hat\theta`, hence
    :math:`\hat V \ge 0`; it is 0 exactly when ``c < k`` or ``c = n``. The
    difference is computed as
    :math:`\hat\theta - R = -\hat\theta\,\mathrm{expm1}\sum_{i<k}
    \log(1 - k (n - c) / ((n-k-i)(c-i)))`, so a small variance keeps its
    digits even at :math:`n = 10^6`.

    Examples
    --------
    >>> round(estimate_pass_hat_k_variance(10, 12, 5), 4)
    0.0861
    >>> estimate_pass_hat_k_variance([12, 3, 2], [12, 12, 3], 2).round(4)
    array([0.    , 0.0021,    nan])
    """
    c, n = _counts(successes, total)
    k_ = _whole_numbers(k, "k", minimum=1)
    c, n, k_ = np.broadcast_arrays(c, n, k_)
    estimable = 2 * k_ <= n
    theta = np.asarray(estimate_pass_hat_k(np.where(estimable, c, 0),
                                           np.where(estimable, n, 1),
                                           np.where(estimable, k_, 1)), dtype=float)
    both = estimable & (c >= 2 * k_) & (c < n)  # 0 < R < theta: the general case
    cc, nn, kk = (np.where(both, x, 0).astype(float) for x in (c, n, k_))
    kk = np.where(both, kk, 1.0)
    nn = np.where(both, nn, 4.0)
    cc = np.where(both, cc, 2.0)  # a harmless (c, n, k) = (2, 4, 1) where not used
    log_ratio = np.zeros(cc.shape)
    for i in range(int(kk.max(initial=1))):
        live = i < kk  # past a task's own k its factor is 1: divide by 1 there, not by 0
        step = kk * (nn - cc) / np.where(live, (nn - kk - i) * (cc - i), np.inf)
        log_ratio += np.log1p(-step)
    # theta - R = theta (1 - R/theta); where c < 2k, R = 0 and the variance is theta^2
    variance = np.where(both, theta * theta * -np.expm1(log_ratio),
                        np.where(c < 2 * k_, theta * theta, 0.0))
    return _scalar_or_array(np.where(estimable, variance, np.nan))


# --------------------------------------------------------------------------
# intervals
# --------------------------------------------------------------------------


def _binary_outcomes(outcomes: ArrayLike) -> np.ndarray:
    try:
        array = np.asarray(outcomes)
    except (TypeError, ValueError, OverflowError):  # ragged nesting and the like
        raise BadInput(f"outcomes ({outcomes!r}) must be a 1-D sequence of 0/1") from None
    if array.ndim != 1 or array.size == 0:
        raise BadInput(f"outcomes ({outcomes!r}) must be a non-empty 1-D sequence of 0/1")
    if array.dtype != bool and (  # bools are outcomes; complex numbers and strings are not
        not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating))
        or not np.all(np.isin(array, (0, 1)))
    ):
        raise BadInput(f"outcomes ({outcomes!r}) must contain only 0/1 or booleans")
    return array.astype(np.int8)


def bootstrap_pass_hat_k_ci(
    outcomes: ArrayLike,
    k: int,
    *,
    confidence: float = 0.95,
    n_resamples: int = 9999,
    rng: int | np.random.Generator | None = None,
) -> ConfidenceInterval:
    r"""Percentile bootstrap interval for pass^k from one task's 0/1 outcomes.

    Parameters
    ----------
    outcomes : array_like of {0, 1} or bool
        The task's runs, in any order.
    k : int
        Runs that must all succeed; at most ``len(outcomes)``.
    confidence : float, default 0.95
        Two-sided confidence level.
    n_resamples : int, default 9999
        Bootstrap resamples.
    rng : int, numpy.random.Generator or None
        Seed or generator, passed to :func:`scipy.stats.bootstrap`.

    Returns
    -------
    ConfidenceInterval
        The :math:`\alpha/2` and :math:`1-\alpha/2` percentiles of
        :func:`estimate_pass_hat_k` over resamples drawn with replacement.

    Notes
    -----
    The chapter's interval, kept to show its number beside an honest one.
    **It does not reach its nominal coverage near p = 1**, exactly where
    reliability is claimed. When every run passed (or every run failed) each
    resample is identical and the interval collapses to a point, ``[1, 1]``:
    the bootstrap cannot see variation that did not occur, and a task with
    p = 0.99 passes all 12 of 12 runs 89 % of the time. Its exact coverage at
    95 % (the infinite-resample limit, :func:`exact_bootstrap_pass_hat_k_ci`,
    summed over the binomial by ``benchmarks/bench_coverage.py``):

    ==========  =======  ========  ========  =========
    n, k        p = 0.9  p = 0.95  p = 0.99  p = 0.995
    ==========  =======  ========  ========  =========
    12, 5       0.69     0.46      0.11      0.06
    5, 5        0.40     0.23      0.05      0.02
    30, 5       0.93     0.78      0.26      0.14
    ==========  =======  ========  ========  =========

    Over n = 3..50, k = 1..8, p in [0.5, 0.999] it is below 95 % at 93 % of
    the grid, and as low as 0.003. Use :func:`pass_hat_k_ci` (exact
    Clopper–Pearson, coverage at least the stated level everywhere) or
    :func:`pass_hat_k_lower_bound`.

    Examples
    --------
    >>> ci = bootstrap_pass_hat_k_ci([1] * 10 + [0] * 2, 5, rng=0)
    >>> bool(0.0 <= ci.low < 0.3182 < ci.high <= 1.0)
    True
    >>> bootstrap_pass_hat_k_ci([1] * 12, 5, rng=0)
    ConfidenceInterval(low=1.0, high=1.0)
    """
    from scipy import stats
    x = _binary_outcomes(outcomes)
    k_ = int(_whole_numbers(k, "k", minimum=1))
    if k_ > x.size:
        raise BadInput(f"k ({k_}) exceeds the number of outcomes ({x.size}): not estimable")
    confidence = _confidence(confidence)
    n_resamples = int(_whole_numbers(n_resamples, "n_resamples", minimum=1))
    if x.min() == x.max():  # every resample equals the sample
        value = float(estimate_pass_hat_k(int(x.sum()), x.size, k_))
        return ConfidenceInterval(value, value)

    def statistic(sample: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.asarray(estimate_pass_hat_k(sample.sum(axis=axis), sample.shape[axis], k_))

    result = stats.bootstrap(
        (x,),
        statistic,
        vectorized=True,
        n_resamples=n_resamples,
        confidence_level=confidence,
        method="percentile",
        rng=rng,
    )
    return ConfidenceInterval(float(result.confidence_interval.low),
                              float(result.confidence_interval.high))


def exact_bootstrap_pass_hat_k_ci(
    successes: ArrayLike, total: ArrayLike, k: ArrayLike, *, confidence: float = 0.95
) -> ConfidenceInterval:
    r"""The percentile bootstrap interval for pass^k with infinitely many resamples.

    Parameters
    ----------
    successes, total : int or array_like of int
        Per-task counts, as in :func:`estimate_pass_hat_k`.
    k : int or array_like of int
        Runs that must all succeed.
    confidence : float, default 0.95
        Two-sided confidence level.

    Returns
    -------
    ConfidenceInterval
        Arrays (or floats) of the lower and upper ends; NaN where ``k > n``.

    Notes
    -----
    A resample of n binary outcomes is summarised by its success count, and
    that count is :math:`C^* \sim \mathrm{Binomial}(n, c/n)`. Since
    :math:`C(c^*,k)/C(n,k)` is non-decreasing in :math:`c^*`, the bootstrap
    quantiles are the estimator evaluated at the binomial quantiles:
    no resampling, no seed, and a whole task set in one call. It matches
    :func:`bootstrap_pass_hat_k_ci` up to Monte Carlo error, and shares its
    failure: it does not cover at its stated level near p = 1 (exact coverage
    0.11 at n = 12, k = 5, p = 0.99; see :func:`bootstrap_pass_hat_k_ci`).
    It is ``pass_hat_k_ci(..., method="bootstrap")``.

    Examples
    --------
    >>> lo, hi = exact_bootstrap_pass_hat_k_ci([10, 12], [12, 12], 5)
    >>> lo.round(4), hi.round(4)
    (array([0.0265, 1.    ]), array([1., 1.]))
    """
    from scipy import stats
    c, n = _counts(successes, total)
    alpha = 1.0 - _confidence(confidence)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_hat = np.where(n > 0, c / np.where(n > 0, n, 1), 0.0)
    low_count = stats.binom.ppf(alpha / 2, n, p_hat)
    high_count = stats.binom.ppf(1 - alpha / 2, n, p_hat)
    # binom.ppf(q, n, 0) returns -1 for tiny q: the count is then 0 surely
    low_count = np.clip(np.nan_to_num(low_count, nan=0.0), 0, n)
    high_count = np.clip(np.nan_to_num(high_count, nan=0.0), 0, n)
    low = estimate_pass_hat_k(low_count.astype(np.int64), n, k)
    high = estimate_pass_hat_k(high_count.astype(np.int64), n, k)
    return ConfidenceInterval(low, high)


def wilson_ci(successes: int, total: int, *, confidence: float = 0.95) -> ConfidenceInterval:
    r"""Wilson score interval for a plain pass rate (the chapter-7 overall score).

    Parameters
    ----------
    successes : int
        Runs that passed.
    total : int
        Runs, at least 1.
    confidence : float, default 0.95
        Two-sided confidence level.

    Returns
    -------
    ConfidenceInterval
        From ``scipy.stats.binomtest(c, n).proportion_ci(method="wilson")``.

    Notes
    -----
    Inverts the score test: the p whose standardized distance
    :math:`|\hat p - p| / \sqrt{p(1-p)/n}` is at most :math:`z_{1-\alpha/2}`.
    For a single-run pass rate, not pass^k (see :func:`pass_hat_k_ci`).

    References
    ----------
    .. [1] E. B. Wilson, "Probable inference, the law of succession, and
       statistical inference", Journal of the American Statistical
       Association 22(158), 209–212, 1927.

    Examples
    --------
    >>> lo, hi = wilson_ci(28, 30)
    >>> round(lo, 3), round(hi, 3)
    (0.787, 0.982)
    """
    from scipy import stats
    c, n = _counts(successes, total)
    if c.ndim or n.ndim:
        raise BadInput(f"wilson_ci takes scalar counts, not {successes!r} and {total!r}")
    if n < 1:
        raise BadInput(f"total ({int(n)}) must be at least 1")
    ci = stats.binomtest(int(c), int(n)).proportion_ci(
        confidence_level=_confidence(confidence), method="wilson"
    )
    return ConfidenceInterval(float(ci.low), float(ci.high))


#: Per-task interval methods of :func:`pass_hat_k_ci`, with the label a report prints
#: ("95% exact Clopper–Pearson").
CI_METHODS: dict[str, str] = {
    "exact": "exact Clopper–Pearson",
    "blaker": "exact Blaker",
    "bootstrap": "percentile bootstrap",
}


def _clopper_pearson(c: np.ndarray, n: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided Clopper–Pearson ends for p, elementwise (NaN where ``n == 0``)."""
    from scipy.special import betaincinv  # the Beta quantile, as scipy.stats.beta.ppf computes it

    c, n = c.astype(float), n.astype(float)
    low = betaincinv(np.maximum(c, 1.0), np.maximum(n - c + 1.0, 1.0), alpha / 2)
    high = betaincinv(np.maximum(c + 1.0, 1.0), np.maximum(n - c, 1.0), 1 - alpha / 2)
    low = np.where(c > 0, low, 0.0)
    high = np.where(c < n, high, 1.0)
    return np.where(n > 0, low, np.nan), np.where(n > 0, high, np.nan)


def _blaker_lower(x: np.ndarray, n: np.ndarray, alpha: float, start: np.ndarray) -> np.ndarray:
    """Lower end of the hull of Blaker's confidence set for p, for ``0 < x <= n``.

    For p below x/n the acceptability of x is ``a(p) = P(X >= x) + P(X <= j(p))``
    with ``j(p)`` the largest ``y < x`` such that ``P(X <= y) <= P(X >= x)``. ``j``
    steps up with p at the roots of ``P(X <= j+1) = P(X >= x)`` (unique: one side
    falls, the other rises), and between two steps ``a`` is one minus the chance
    of a fixed range of counts, which rises then falls in p, so ``a`` falls then
    rises there. Scanning these pieces upwards from the Clopper–Pearson end
    (``a <= alpha`` below it), the first piece where ``a`` exceeds alpha holds the
    infimum of ``{p : a(p) > alpha}``: at its start, or at its only upward
    crossing, found by bisection and returned from below (never too high).
    """
    from scipy.special import bdtr, bdtrc  # binomial cdf and survival function

    x, n = x.astype(np.int64), n.astype(np.int64)
    out = np.full(x.shape, np.nan)
    if x.size == 0:
        return out

    def cdf(y: np.ndarray, m: np.ndarray, p: np.ndarray) -> np.ndarray:  # P(X <= y), 0 if y < 0
        return np.where(y >= 0, bdtr(np.maximum(y, 0), m, p), 0.0)

    counts = np.arange(int(n.max()) + 1)
    below = cdf(counts, n[:, None], start[:, None])
    fits = (below <= bdtrc(x - 1, n, start)[:, None]) & (counts < x[:, None])
    j = np.where(fits.any(axis=1), counts.size - 1 - np.argmax(fits[:, ::-1], axis=1), -1)
    piece_start = start.copy()
    for _ in range(int(n.max()) + 2):  # at most x + 1 pieces
        i = np.flatnonzero(np.isnan(out))
        if i.size == 0:
            break
        s, xi, ni, ji = piece_start[i], x[i], n[i], j[i]
        top = xi / ni

        def accept(p: np.ndarray, xi: np.ndarray = xi, ni: np.ndarray = ni,
                   ji: np.ndarray = ji) -> np.ndarray:
            accepted: np.ndarray = bdtrc(xi - 1, ni, p) + cdf(ji, ni, p)
            return accepted

        # where the piece ends: the root of P(X <= j+1) - P(X >= x), or x/n if none
        lo, hi = s.copy(), top.copy()
        for _ in range(_BISECTIONS):
            mid = 0.5 * (lo + hi)
            left = cdf(ji + 1, ni, mid) > bdtrc(xi - 1, ni, mid)
            lo, hi = np.where(left, mid, lo), np.where(left, hi, mid)
        end = np.where(cdf(ji + 1, ni, top) > bdtrc(xi - 1, ni, top), top, hi)
        at_start = accept(s) > alpha
        crossing = ~at_start & (accept(end) > alpha)
        lo, hi = s.copy(), end.copy()
        for _ in range(_BISECTIONS):
            mid = 0.5 * (lo + hi)
            over = accept(mid) > alpha
            lo, hi = np.where(over, lo, mid), np.where(over, mid, hi)
        out[i] = np.where(at_start, s, np.where(crossing, lo, np.nan))
        j[i] += 1
        piece_start[i] = end
    return np.where(np.isnan(out), start, out)  # never reached; the Clopper–Pearson end is safe


def _blaker(c: np.ndarray, n: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Blaker's interval for p, elementwise (NaN where ``n == 0``), once per distinct (c, n)."""
    c, n = np.broadcast_arrays(c, n)
    low, high = np.zeros(c.shape), np.ones(c.shape)
    if c.size:
        width = int(n.max()) + 1
        keys, where = np.unique(c * width + n, return_inverse=True)
        pc, pn = np.divmod(keys, width)
        cp_low, _ = _clopper_pearson(pc, pn, alpha)
        cp_low_failures, _ = _clopper_pearson(pn - pc, pn, alpha)
        p_low, p_high = np.zeros(pc.shape), np.ones(pc.shape)
        up = pc > 0
        p_low[up] = _blaker_lower(pc[up], pn[up], alpha, cp_low[up])
        down = pc < pn
        p_high[down] = 1.0 - _blaker_lower(pn[down] - pc[down], pn[down], alpha,
                                           cp_low_failures[down])
        low, high = p_low[where.reshape(c.shape)], p_high[where.reshape(c.shape)]
    return np.where(n > 0, low, np.nan), np.where(n > 0, high, np.nan)


def pass_hat_k_ci(
    successes: ArrayLike,
    total: ArrayLike,
    k: ArrayLike,
    *,
    confidence: float = 0.95,
    method: str = "exact",
) -> ConfidenceInterval:
    r"""Two-sided confidence interval for pass^k = p^k, per task, vectorized.

    Parameters
    ----------
    successes, total : int or array_like of int
        Per-task counts, ``0 <= c <= n``.
    k : int or array_like of int
        Runs that must all succeed, at least 1. All three broadcast.
    confidence : float, default 0.95
        Two-sided confidence level.
    method : {'exact', 'blaker', 'bootstrap'}, default 'exact'
        ``'exact'``: the Clopper–Pearson interval for p mapped through
        :math:`p \mapsto p^k`; its coverage is at least ``confidence`` for
        every p, n and k. ``'blaker'``: Blaker's exact interval mapped the
        same way; the same guarantee, and never wider (about 5 % shorter on
        average). ``'bootstrap'``: the chapter's percentile bootstrap
        (:func:`exact_bootstrap_pass_hat_k_ci`), which does **not** cover at
        its stated level near p = 1. :data:`CI_METHODS` holds the label to
        print for each.

    Returns
    -------
    ConfidenceInterval
        ``low`` and ``high`` (floats for scalar input, else arrays). NaN where
        ``n == 0``. Where ``k > n`` the exact interval is still returned (see
        Notes); the bootstrap one is NaN there.

    Notes
    -----
    With :math:`c \sim \mathrm{Binomial}(n, p)` and :math:`\alpha = 1 -`
    ``confidence``, Clopper and Pearson (1934) [1]_ invert two one-sided
    binomial tests:

    .. math::

        L = B^{-1}(\alpha/2;\ c,\ n-c+1), \qquad
        U = B^{-1}(1-\alpha/2;\ c+1,\ n-c),

    with :math:`B^{-1}` the Beta quantile, :math:`L = 0` when c = 0 and
    :math:`U = 1` when c = n (the same ends as
    ``scipy.stats.binomtest(c, n).proportion_ci(method="exact")``). Each end
    misses p with probability at most :math:`\alpha/2`, for every p. The
    interval for pass^k is :math:`[L^k, U^k]`: as :math:`x \mapsto x^k` is
    strictly increasing on [0, 1], :math:`p^k \in [L^k, U^k]` exactly when
    :math:`p \in [L, U]`, so the coverage for :math:`p^k` *equals* the
    coverage for p, at least ``confidence`` everywhere (``bench_coverage.py``
    checks it by enumeration over the binomial). This is an interval for the
    parameter :math:`p^k` and needs no k-subsets of the runs, so it exists
    for ``k > n`` too (12 runs do bound :math:`p^{20}`, loosely); the point
    estimate :func:`estimate_pass_hat_k` is NaN there and may lie anywhere
    relative to the ends when it exists (it is unbiased, the interval is not
    centred on it).

    Clopper–Pearson spends :math:`\alpha/2` on each tail whatever the
    binomial's skew. Blaker (2000) [3]_ inverts instead the test whose
    p-value is the *acceptability*
    :math:`a(p) = P_p\bigl(\gamma_p(X) \le \gamma_p(c)\bigr)`,
    :math:`\gamma_p(y) = \min\{P_p(X \le y), P_p(X \ge y)\}`: the set
    :math:`\{p : a(p) > \alpha\}` has coverage at least
    :math:`1 - \alpha` (a(p) is a valid p-value) and lies inside the
    Clopper–Pearson interval. It may have gaps; ``'blaker'`` returns its
    hull, computed exactly piece by piece (no grid), each end rounded
    outwards. On n = 3..50, p in [0.5, 0.999] its exact coverage stays at or
    above 95 % (``bench_coverage.py``); 12 passes in 12 runs give
    :math:`p^5 \ge 0.261` where Clopper–Pearson gives 0.215.

    The percentile bootstrap [2]_ resamples the n runs; when c = n every
    resample passes and it returns [1, 1]. Its exact coverage, summed over
    the binomial, for n = 12 and k = 5 is 0.69, 0.46, 0.11 and 0.06 at
    p = 0.9, 0.95, 0.99 and 0.995: it is kept only to show the chapter's
    number beside an honest one.

    References
    ----------
    .. [1] C. J. Clopper and E. S. Pearson, "The use of confidence or fiducial
       limits illustrated in the case of the binomial", Biometrika 26(4),
       404–413, 1934.
    .. [2] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*,
       Chapman & Hall, 1993.
    .. [3] H. Blaker, "Confidence curves and improved exact confidence
       intervals for discrete distributions", Canadian Journal of Statistics
       28(4), 783–798, 2000.

    Examples
    --------
    The chapter's flaky task, 10 of 12, and a task that never failed:

    >>> lo, hi = pass_hat_k_ci([10, 12], [12, 12], 5)
    >>> lo.round(4), hi.round(4)
    (array([0.0365, 0.215 ]), array([0.8999, 1.    ]))
    >>> CI_METHODS["exact"]
    'exact Clopper–Pearson'
    >>> lo, hi = pass_hat_k_ci([10, 12], [12, 12], 5, method="blaker")
    >>> lo.round(4), hi.round(4)
    (array([0.0478, 0.2611]), array([0.8567, 1.    ]))
    >>> lo, hi = pass_hat_k_ci(12, 12, 5, method="bootstrap")
    >>> lo, hi
    (1.0, 1.0)
    """
    c, n = _counts(successes, total)
    k_ = _whole_numbers(k, "k", minimum=1)
    alpha = 1.0 - _confidence(confidence)
    if not isinstance(method, str) or method not in CI_METHODS:
        raise BadInput(f"method ({method!r}) must be one of {sorted(CI_METHODS)}")
    if method == "bootstrap":
        low, high = exact_bootstrap_pass_hat_k_ci(c, n, k_, confidence=confidence)
        return ConfidenceInterval(low, high)
    c, n, k_ = np.broadcast_arrays(c, n, k_)
    ends = _blaker if method == "blaker" else _clopper_pearson
    low_p, high_p = _per_distinct_counts(lambda c, n: ends(c, n, alpha), c, n)
    return ConfidenceInterval(_scalar_or_array(low_p**k_), _scalar_or_array(high_p**k_))


def _per_distinct_counts(ends: Any, c: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, ...]:
    """``ends(c, n)`` (elementwise in the pair) computed once per distinct (c, n) and
    spread back: a suite of 10**5 tasks with 10 runs each has 11 pairs, not 10**5. The same
    numbers as ``ends(c, n)``."""
    if c.size < 1024:
        return tuple(ends(c, n))
    key = c.astype(np.int64).ravel() * (int(n.max(initial=0)) + 1) + n.astype(np.int64).ravel()
    distinct, at = np.unique(key, return_inverse=True)
    if distinct.size * 2 > key.size:
        return tuple(ends(c, n))
    width = int(n.max(initial=0)) + 1
    once = ends(distinct // width, distinct % width)
    return tuple(np.asarray(x)[at].reshape(c.shape) for x in once)


def pass_hat_k_lower_bound(
    successes: ArrayLike, total: ArrayLike, k: ArrayLike, *, confidence: float = 0.95
) -> FloatOrArray:
    r"""One-sided exact lower confidence bound on pass^k = p^k.

    Parameters
    ----------
    successes, total : int or array_like of int
        Per-task counts.
    k : int or array_like of int
        Runs that must all succeed (``k`` may exceed ``total``).
    confidence : float, default 0.95
        One-sided confidence level.

    Returns
    -------
    float or ndarray
        :math:`L^k`, where :math:`L` is the one-sided Clopper–Pearson lower
        bound on p: the :math:`1-\text{confidence}` quantile of
        :math:`\mathrm{Beta}(c, n-c+1)` (0 when ``c = 0``). NaN when ``n = 0``.

    Notes
    -----
    Because :math:`x \mapsto x^k` is increasing on [0, 1],
    :math:`P(p \ge L) \ge` confidence implies :math:`P(p^k \ge L^k) \ge`
    confidence. When every run passed, :math:`L = (1-\text{confidence})^{1/n}`,
    so 12 of 12 does not prove perfection; the bootstrap would say [1, 1].

    References
    ----------
    .. [1] C. J. Clopper and E. S. Pearson, "The use of confidence or fiducial
       limits illustrated in the case of the binomial", Biometrika 26(4),
       404–413, 1934.

    Examples
    --------
    >>> round(pass_hat_k_lower_bound(12, 12, 5), 4)
    0.287
    >>> pass_hat_k_lower_bound([0, 10], [12, 12], 1).round(4)
    array([0.    , 0.5619])
    """
    from scipy.special import betaincinv  # the Beta quantile, as scipy.stats.beta.ppf computes it

    c, n = _counts(successes, total)
    k_ = _whole_numbers(k, "k", minimum=1)
    alpha = 1.0 - _confidence(confidence)

    def lower(c: np.ndarray, n: np.ndarray) -> tuple[np.ndarray]:
        with np.errstate(invalid="ignore"):
            lower_p = betaincinv(np.where(c > 0, c, 1), n - c + 1, alpha)
        return (np.where(n > 0, np.where(c > 0, lower_p, 0.0), np.nan),)

    c, n = np.broadcast_arrays(c, n)
    (lower_p,) = _per_distinct_counts(lower, c, n)
    bound = lower_p ** k_
    return _scalar_or_array(bound)


def runs_needed(target: float, k: int, *, confidence: float = 0.95) -> int:
    r"""All-pass runs needed before ``pass_hat_k_lower_bound`` reaches ``target``.

    Parameters
    ----------
    target : float
        The claim to support, pass^k >= target, with target in (0, 1).
    k : int
        Runs that must all succeed.
    confidence : float, default 0.95
        One-sided confidence level.

    Returns
    -------
    int
        The smallest n such that n passes in n runs give a lower bound at
        least ``target``.

    Notes
    -----
    With c = n the Clopper–Pearson bound is :math:`\alpha^{1/n}`, so the
    condition :math:`\alpha^{k/n} \ge T` solves to
    :math:`n \ge k \ln\alpha / \ln T`. A claim of exactly 1 needs infinitely
    many runs and is refused.

    Examples
    --------
    >>> runs_needed(0.5, 5)
    22
    >>> runs_needed(0.9, 5)
    143
    """
    target_ = float(_probability(target, "target"))
    if not 0 < target_ < 1:
        raise BadInput(f"target ({target!r}) must lie strictly between 0 and 1")
    k_ = int(_whole_numbers(k, "k", minimum=1))
    alpha = 1.0 - _confidence(confidence)
    n = max(1, int(np.ceil(k_ * np.log(alpha) / np.log(target_))))
    # guard the closed form against rounding at the boundary
    while n > 1 and pass_hat_k_lower_bound(n - 1, n - 1, k_, confidence=confidence) >= target_:
        n -= 1
    while pass_hat_k_lower_bound(n, n, k_, confidence=confidence) < target_:
        n += 1
    return n


publish(globals())  # the names passk.__all__ takes from here say 'passk' (passk._public)
